/*
 * profile.h - the profile model: one value that every report is made from.
 *
 * Private to src/report, src/read, src/runtime and tools/syncprof.  Nothing
 * here knows how the rows were recorded: a profile is built by collect.c
 * from a running process (the only file of src/report that sees
 * src/record), or by src/read/profile_load.c from a saved profile JSON,
 * and then shaped (subtract, coalesce, sort, top N), resolved (every
 * printed row's site, stack and blame named) and rendered.  Renderers are
 * pure: render(profile, options) -> bytes, reading nothing but their
 * arguments, so the same profile gives the same bytes live, through
 * 'syncprof ctl PID report' and from 'syncprof report saved.json'.
 *
 * Glossary.
 *   row      merged statistics of one (call site, object, type), or of one
 *            (call site, type) once objects are coalesced;
 *   key      what identifies a row before names exist: file/function/line
 *            for instrumented sites, a return address (pc) for interposed
 *            ones; rows read back from JSON take their key from their names;
 *   names    a resolved site and stack (sp_names): function, file:line, DSO,
 *            offset, inlined callers.  Every row a renderer sees has them;
 *   blame    for a row that waited: the sites where the holders had taken
 *            the lock (hold tracking only), with the wait and count they
 *            caused;
 *   detail   a row's histograms, raw stack and blame, out of line (most
 *            rows of a large profile have none);
 *   cycle    with lock-order checking: locks that threads took inside each
 *            other in a circle, a potential deadlock; each edge "acquired
 *            taken while held was held" with both locks, their sites and
 *            stacks, and the thread.
 *
 * Memory: rows live in their set (struct sp_rows), details and blame lists
 * in blocks the set owns; names and strings in the profile's arena, which
 * outlives every set made from the profile; cycles in an array the
 * profile owns, their edges in the arena.
 */
#ifndef SP_REPORT_PROFILE_H
#define SP_REPORT_PROFILE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "base/base.h"
#include "base/types.h"

/* ---- names: resolved code locations ------------------------------------ */

struct sp_inline {
	const char *function, *file;
	unsigned line;
	const char *symbol; /* raw (mangled) name where it differs from function */
};

/* A resolved frame.  Strings are NULL when unknown. */
struct sp_frame {
	const char *function;            /* as the language writes it (demangled) */
	const char *symbol;              /* the raw (mangled) name where it differs */
	const char *file;
	const char *dso;
	unsigned line;                   /* 0 when unknown */
	uintptr_t address;               /* 0 for an instrumented site */
	uintptr_t offset;                /* from function (or dso) start; 0 unknown */
	unsigned n_inline;
	const struct sp_inline *inlined; /* functions it was inlined into */
};

struct sp_names {
	struct sp_frame site;
	unsigned n_frames;
	const struct sp_frame *frames; /* callers, innermost first */
	/* where the row's lock was created (per-object rows only): NULL when
	 * unknown; how: enum sp_lock_created */
	const struct sp_frame *created;
	uint8_t created_how;
};

/* ---- rows ----------------------------------------------------------------- */

/*
 * One holder site that made a row's site wait (hold tracking).  When the
 * watchdog saw that holder wait in turn (a wait chain), @root is where
 * the chain's root holder took its lock; such waits are kept apart from
 * those without a chain seen (the key is holder and root).
 */
struct sp_blame {
	struct sp_site holder;        /* key */
	struct sp_site root;          /* key; all zero: no chain seen */
	const struct sp_frame *names; /* resolved; NULL before sp_profile_resolve() */
	const struct sp_frame *root_names; /* resolved (NULL: no chain seen, or not yet) */
	uint64_t wait_ns;
	uint64_t count;
};

/* The blame has a root holder (a chain was seen). */
static inline int sp_blame_has_root(const struct sp_blame *b)
{
	return b->root.pc || b->root.file || b->root.line || b->root.func;
}

/*
 * A histogram of the model, in the bucket layout of base/types.h
 * (sp_hist_bucket()): the counts of buckets [lo, lo + n) only, so that a
 * row that waited in a few buckets holds a few counts.  A set's rows own
 * their arrays (freed with the set); sp_hist_view() lends one.
 */
struct sp_hist {
	uint64_t *v; /* NULL when n is 0 */
	uint16_t lo, n;
};

/* The count of bucket @b (0 outside the range). */
static inline uint64_t sp_hist_at(const struct sp_hist *h, unsigned b)
{
	return b - h->lo < h->n ? h->v[b - h->lo] : 0;
}

/* Time of a row's long holds in one state of their holder: "running",
 * "preempted", "lock", "other" or "syscall:NAME" (record/holdstate.c). */
struct sp_hold_state {
	const char *name; /* static (live) or the profile's (loaded) */
	uint64_t ns;
};
#define SP_HOLD_STATES_MAX 12 /* per row; more: folded into "other" */

/* Where in the critical section (frames=N, record/holdwhere.c): time of a
 * row's long holds with the holder at one point of its own code, in one
 * state ("running" - or runnable -, "other", "syscall:NAME"). */
struct sp_hold_where {
	uintptr_t pc;                 /* key, with state; 0: the rest */
	const char *state;            /* static (live) or the profile's (loaded) */
	const struct sp_frame *names; /* resolved; NULL before sp_profile_resolve() */
	uint64_t ns;
};
#define SP_HOLD_WHERE_MAX 8 /* per row; more: the smallest folded into pc 0 */

struct sp_row_detail {
	struct sp_hist hist;                 /* contended waits */
	struct sp_hist hold_hist;            /* timed holds */
	uintptr_t frames[SP_MAX_FRAMES];     /* callers, innermost first */
	uint64_t stack_wait_ns;              /* wait of the part whose stack this is */
	struct sp_blame *blame;              /* largest wait first; owned by the set */
	uint32_t n_blame, cap_blame;
	/* the holder's states during the row's long holds, largest first */
	struct sp_hold_state hold_states[SP_HOLD_STATES_MAX];
	uint32_t n_hold_states;
	/* ... and where in their code, largest first */
	struct sp_hold_where hold_where[SP_HOLD_WHERE_MAX];
	uint32_t n_hold_where;
};

/* Row of a report: merged statistics of one key. */
struct sp_row {
	uint64_t site_hash; /* of the key without obj; 0 = not computed yet */
	uintptr_t obj;
	const char *file;
	const char *func;
	uintptr_t pc;
	uint32_t line;
	uint8_t type;
	uint8_t n_frames;
	uint64_t n_objects;
	uint64_t acquisitions;
	uint64_t contended;
	uint64_t wait_ns;
	uint64_t wait_max_ns;
	uint64_t hold_ns;
	uint64_t hold_max_ns;
	uint64_t holds;
	uint64_t owner_changes;
	/* NULL when the row has no histogram, stack or blame; read it through
	 * sp_row_d(). */
	struct sp_row_detail *detail;
	/* Set by sp_profile_resolve() (live rows) or by the loader. */
	const struct sp_names *names;
	/* Per-object rows: the lock's name (NULL: none) and, live, where it
	 * was created (resolved into names->created); set after shaping by
	 * sp_collect_names() or by the loader. */
	const char *lock_name;
	struct sp_site created;
	uint8_t created_how; /* enum sp_lock_created */
};

struct sp_detail_block;

struct sp_rows {
	struct sp_row *v;
	size_t n, cap;
	size_t n_total; /* rows before the top-N cut (at least n) */
	struct sp_detail_block *blocks;
};

extern const struct sp_row_detail sp_row_detail_zero;
static inline const struct sp_row_detail *sp_row_d(const struct sp_row *r)
{
	return r->detail ? r->detail : &sp_row_detail_zero;
}

/* ---- lock order ------------------------------------------------------------ */

/* One end of a lock-order edge: a lock, how and where it was taken. */
struct sp_order_end {
	uintptr_t obj;
	uint8_t type;                    /* enum sp_type */
	uint8_t n_frames;
	struct sp_site site;             /* key (as a row's: names when loaded) */
	uintptr_t frames[SP_MAX_FRAMES]; /* callers, innermost first */
	const struct sp_names *names;    /* site and stack; set by sp_profile_resolve() */
};

/* "@acquired was taken, by a call that could wait, while @held was held". */
struct sp_order_edge {
	struct sp_order_end held, acquired;
	int tid;
};

/* Each edge's acquired lock is the next edge's held one, the last's the
 * first's. */
struct sp_cycle {
	uint64_t count;  /* object-level cycles found with these sites */
	unsigned n_edges;
	struct sp_order_edge *edges; /* in the profile's arena */
};

struct sp_lock_order {
	int on;                      /* lock-order checking was on */
	uint64_t edges_kept, edges_dropped, cycles_dropped, searches_cut;
	struct sp_cycle *cycles;     /* owned by the profile */
	size_t n_cycles, cap_cycles;
};

/* ---- mappings -------------------------------------------------------------- */

/* An executable mapping of the profiled process that code addresses of
 * the profile fall in (mappings.c): page-aligned [start, limit), the file
 * offset of start, the file and its GNU build ID (hex; NULL: none). */
struct sp_mapping {
	uintptr_t start, limit, offset;
	const char *file;
	const char *build_id;
};

/* ---- the threads' time account ------------------------------------------ */

/* One thread's time (collect.c, from the kernel's accounting):
 * lifetime = running + preempted + blocked; sync_wait is the part of its
 * life spent in the waits the rows show (0 for a thread never seen). */
struct sp_thread_account {
	int tid;
	const char *name;  /* in the arena; NULL when unknown */
	int exited;        /* exited before the report */
	uint64_t lifetime_ns, running_ns, preempted_ns, blocked_ns, sync_wait_ns;
};

enum sp_account_state {
	SP_ACCOUNT_NONE = 0,   /* not collected (a profile saved before it existed) */
	SP_ACCOUNT_KEPT,       /* the figures below */
	SP_ACCOUNT_UNAVAILABLE /* the kernel gave none: @unavailable says why */
};

struct sp_account {
	enum sp_account_state state;
	const char *unavailable; /* in the arena */
	int reset;               /* the rows are net of a reset; the account is not */
	uint64_t threads;        /* threads accounted, live and exited */
	uint64_t exited;         /* of them, exited before the report */
	uint64_t unread;         /* exited threads whose figures could not be read */
	uint64_t skipped;        /* exited threads not read: too many exits a second */
	uint64_t lifetime_ns, running_ns, preempted_ns, blocked_ns, sync_wait_ns;
	struct sp_thread_account *v; /* the threads listed, in the arena */
	size_t n;
};

/* ---- the profile ----------------------------------------------------------- */

struct sp_arena;

struct sp_profile {
	/* where it came from */
	int pid;
	const char *command;
	const char *interrupted; /* "SIGTERM": the program was stopped by that signal
				  * (syncprof run); NULL when it ran to its end */
	const char *clock;      /* "tsc" or "monotonic" */
	uint64_t elapsed_ns;
	uint64_t lost;          /* lock calls that could not be recorded */
	int hold;               /* hold tracking was on: hold facts are meaningful */
	unsigned hold_sample;   /* 1 hold in N timed (hold tracking) */
	uint64_t hold_untracked; /* acquisitions not hold-tracked (too many held) */
	uint64_t blame_lost;     /* waits blamed on no one: the blame table was full */
	uint64_t hold_late_ticks; /* hold ticker late (> 750 us gaps), since start-up */
	/* hold states (record/holdstate.c): samples of long holds' holders
	 * and the ticker's CPU time for them, since start-up */
	uint64_t hold_state_samples, hold_state_cpu_ns;
	uint64_t hold_state_unread; /* samples whose /proc files were unreadable */
	/* where in the critical section (frames=N): samples that found the
	 * holder's point, and those that did not */
	uint64_t hold_where_points, hold_where_lost;
	uint64_t hold_gap_max_ns; /* ... its longest gap */
	/* the hold ticker's clock mode (record/hold_tick.c): its time since
	 * start-up, and the switches into it and out */
	uint64_t hold_clock_ns, hold_clock_switches;
	uint64_t names_lost;     /* lock names and creation sites not kept */
	/* how the rows are shaped */
	int coalesced;
	enum syncprof_sort sort;
	struct sp_rows rows;
	struct sp_lock_order order; /* with lock-order checking (order.on) */
	struct sp_account account;  /* the threads' time (live profiles, state KEPT) */
	/* executable mappings holding the rows' code addresses, main program
	 * first; in the arena; set by sp_profile_resolve() or the loader */
	struct sp_mapping *mappings;
	size_t n_mappings;
	/* sp_profile_resolve_unnamed() at work: addresses are not named, and
	 * the mappings cover every address (creation sites, root holders) */
	int unnamed;
	struct sp_arena *arena; /* names and strings */
};

/* "profile.c" */
int sp_profile_init(struct sp_profile *p);
void sp_profile_free(struct sp_profile *p);
/* A copy of @s in @p's arena, one copy per distinct string; NULL for NULL
 * (or out of memory, which sets p's arena error, see sp_profile_error). */
const char *sp_profile_intern(struct sp_profile *p, const char *s);
void *sp_profile_alloc(struct sp_profile *p, size_t size);
int sp_profile_error(const struct sp_profile *p);

int sp_rows_push(struct sp_rows *r, const struct sp_row *row);
int sp_rows_reserve(struct sp_rows *r, size_t n);
void sp_rows_free(struct sp_rows *r);
/* @r's detail for writing, allocated (zeroed) in @rows when it has none;
 * NULL when out of memory. */
struct sp_row_detail *sp_rows_detail(struct sp_rows *rows, struct sp_row *r);
/* Add @wait_ns/@count for @holder to @r's blame (merged by holder key). */
/* Add @ns of state @name to @r's hold states (kept largest first). */
int sp_rows_hold_state_add(struct sp_rows *rows, struct sp_row *r, const char *name, uint64_t ns);
/* One system call seen while a lock was held (from the rows' hold states):
 * the row it was seen under, the call's name, the time blocked in it. */
struct sp_syscall_under_lock {
	const struct sp_row *row;
	const char *syscall; /* "fsync": the state's name without "syscall:" */
	uint64_t ns;
};
/* The system calls of @rows' long holds, largest time first, at most
 * @max into @out; how many there are in all. */
size_t sp_syscalls_under_lock(const struct sp_rows *rows, struct sp_syscall_under_lock *out,
			      size_t max);
/* The sum of @d's hold states. */
uint64_t sp_hold_states_total(const struct sp_row_detail *d);
/* Add @ns at point @pc in @state (a static or profile string) to @r's
 * list (record/holdwhere.c): -ENOMEM or 0. */
int sp_rows_hold_where_add(struct sp_rows *rows, struct sp_row *r, uintptr_t pc,
			   const struct sp_frame *names, const char *state, uint64_t ns);
uint64_t sp_hold_where_total(const struct sp_row_detail *d);
/* The frame a point is shown as: a running point stands for its whole
 * function (its pc moves), so a pc of code inlined into that function is
 * shown as the function, at the line of the inlined call (a copy in
 * @buf); any other point as named.  NULL when not named. */
const struct sp_frame *sp_hold_where_site(const struct sp_hold_where *w, struct sp_frame *buf);
int sp_rows_blame_add(struct sp_rows *rows, struct sp_row *r, const struct sp_site *holder,
		      const struct sp_frame *names, uint64_t wait_ns, uint64_t count);
/* The same for waits whose chain's root holder took its lock at @root
 * (NULL: no chain seen), named @root_names when known. */
int sp_rows_blame_add_root(struct sp_rows *rows, struct sp_row *r, const struct sp_site *holder,
			   const struct sp_frame *names, const struct sp_site *root,
			   const struct sp_frame *root_names, uint64_t wait_ns, uint64_t count);
/* Histograms: add @count to bucket @b, add all of @s into @d (each grows
 * @d's range as needed; -ENOMEM, @d unchanged, when it cannot), copy @s
 * into an empty @d, free.  sp_hist_view() makes @h a view (nothing owned)
 * of the non-zero range of @dense, SP_HIST_BUCKETS counts that must
 * outlive it. */
int sp_hist_add(struct sp_hist *h, unsigned b, uint64_t count);
int sp_hist_merge(struct sp_hist *d, const struct sp_hist *s);
int sp_hist_copy(struct sp_hist *d, const struct sp_hist *s);
void sp_hist_free(struct sp_hist *h);
void sp_hist_view(struct sp_hist *h, uint64_t *dense);
uint64_t sp_hist_total(const struct sp_hist *h);
/* Append a cycle of @n edges to @p (edges copied into the arena). */
int sp_profile_cycle_add(struct sp_profile *p, uint64_t count, const struct sp_order_edge *edges,
			 unsigned n);

/* "pipeline.c" */
/* A hash map from row keys (and objects, when with_obj) to rows of a set:
 * collecting, coalescing and loading merge rows through it. */
struct sp_row_map {
	size_t *slot; /* row index + 1; 0 is free */
	size_t mask;
	int with_obj;
};
int sp_row_map_init(struct sp_row_map *m, size_t expect, int with_obj);
void sp_row_map_free(struct sp_row_map *m);
/* The row of @key's key in @rows, added (zeroed, key copied) when new;
 * NULL on ENOMEM. */
struct sp_row *sp_row_map_get(struct sp_row_map *m, struct sp_rows *rows,
			      const struct sp_row *key);
/* The row of @key's key in @rows, or NULL. */
struct sp_row *sp_row_map_find(const struct sp_row_map *m, struct sp_rows *rows,
			       const struct sp_row *key);
/* Add the counters, histograms, stack and blame of @s into @d, a row of
 * @rows; -ENOMEM when out of memory. */
int sp_row_add(struct sp_rows *rows, struct sp_row *d, const struct sp_row *s);
/* out = cur - snap, rows with nothing left dropped; maxima kept from cur. */
int sp_report_subtract(struct sp_rows *cur, const struct sp_rows *snap);
int sp_report_coalesce(struct sp_rows *rows);
void sp_report_sort(struct sp_rows *rows, enum syncprof_sort key);
void sp_report_top(struct sp_rows *rows, unsigned top);
/* Both, as one: the first @top rows in order (0: all), the rest dropped. */
void sp_report_sort_top(struct sp_rows *rows, enum syncprof_sort key, unsigned top);
/* Coalesce (when asked and not yet), sort and cut @p as @o says; put its
 * cycles in their one order (sp_order_sort()). */
int sp_profile_shape(struct sp_profile *p, const struct syncprof_report_options *o);
uint64_t sp_row_percentile(const struct sp_row *r, double q);

/* "order.c" */
/* Cycles in their one order: most found first, then shortest, then by
 * sites, objects and threads - an order that a saved profile read back
 * keeps (addresses first, as for rows). */
void sp_order_sort(struct sp_lock_order *o);
uint64_t sp_row_avg(const struct sp_row *r);
/* Length of the directory prefix shared by the files of the rows' sites. */
size_t sp_rows_common_prefix(const struct sp_rows *rows);
const char *sp_path_strip(const char *file, const char *root, size_t auto_len);

/* "names.c" */
/* Name every row of @p (site, stack, blame), symbolizing addresses. */
int sp_profile_resolve(struct sp_profile *p);
/*
 * The same without naming any address (the report at exit under 'syncprof
 * run'): instrumented sites keep file, line and function, interposed ones
 * their address alone; the mappings hold every code address of @p, so
 * that sp_profile_name_files() can name them later in another process.
 */
int sp_profile_resolve_unnamed(struct sp_profile *p);
/*
 * Name the frames of @p (a loaded profile) that have an address and
 * nothing else, from the files of @p's mappings (sp_symbolize_file), as
 * sp_profile_resolve() names them in the process; then keep only the
 * mappings that sp_profile_resolve() would have kept.  A frame whose file
 * was rebuilt since (another build ID) keeps its DSO and offset.  The
 * files' sessions stay for the next profile: call sp_symbolize_files_end()
 * after the last.  0 or -ENOMEM.
 */
int sp_profile_name_files(struct sp_profile *p);
/* The Call site cell: "function file:line", "file:line", "function+0x1f",
 * "dso+0x1f" or "0x...". */
const char *sp_frame_format(const struct sp_frame *f, const char *src_root, size_t auto_len,
			    char *buf, size_t size);
/* One frame as a single name: "function", "file:line", "dso+0x1f", "0x..". */
const char *sp_frame_label(const struct sp_frame *f, char *buf, size_t size);
/* A function that a frame was inlined into, as one name, as sp_frame_label()
 * names a frame: "function", else "file:line" (the call's), else "??". */
const char *sp_inline_label(const struct sp_inline *in, char *buf, size_t size);
/* A site of this process, symbolized and formatted (watchdog). */
const char *sp_site_name(const struct sp_site *s, const char *src_root, char *buf, size_t size);

/* "mappings.c" */
/* Find the executable mappings of this process that hold the code
 * addresses of @p's resolved rows and cycles (none when @p has its
 * mappings already); report path only. */
int sp_profile_mappings(struct sp_profile *p);
/* Keep only the mappings of @p that sp_profile_mappings() would have
 * found for its names (after sp_profile_resolve_unnamed() kept more). */
void sp_profile_mappings_trim(struct sp_profile *p);
/* The mapping of @p that holds @addr, or NULL. */
const struct sp_mapping *sp_mapping_find(const struct sp_profile *p, uintptr_t addr);

/* "report_file.c" */
/*
 * sp_report_file_write() - write the @len bytes of a rendered report to
 * @path whole or not at all (a temporary file renamed over it; written in
 * place when @path is not a regular file).  Prints nothing.
 * Return: 0, or a negative errno; *@created says whether a file was made
 * (0: it could not even be opened, nothing was written).
 */
int sp_report_file_write(const char *path, const char *data, size_t len, int *created);
/* The reason of sp_report_file_write()'s error @rc for @path, in words. */
const char *sp_report_file_error(const char *path, int rc);
/* All @len bytes to @fd (EINTR retried): 0 or a negative errno. */
int sp_write_all(int fd, const char *data, size_t len);

/* "symbolize.c" */
#define SP_MAX_INLINE 8
/* What is known of a code address; pointers valid until the next call. */
struct sp_symbol {
	const char *function; /* NULL when unknown; demangled (base/demangle.h) */
	const char *symbol;   /* the raw (mangled) name, when it differs; else NULL */
	const char *file;     /* NULL when there is no debug info */
	const char *dso;      /* NULL when unknown */
	unsigned line;        /* 0 when unknown */
	uintptr_t offset;     /* from the start of function (or of dso) */
	/* libdw: functions the named one was inlined into, innermost first,
	 * each with the file:line of the inlined call inside it */
	unsigned n_inline;
	struct {
		const char *function, *symbol, *file;
		unsigned line;
	} inl[SP_MAX_INLINE];
};
/* Report path only; not thread-safe (callers serialise reports). */
void sp_symbolize(uintptr_t pc, struct sp_symbol *out);
/* A code address @pc of another process, which mapped the file @path with
 * its offset 0 at @base (a trace's MAPS): the same names, from the file.
 * Pointers valid until sp_symbolize_offline_end().  Not thread-safe. */
void sp_symbolize_offline(const char *path, uintptr_t base, uintptr_t pc, struct sp_symbol *out);
void sp_symbolize_offline_end(void);
/* Offline (syncprof run, syncprof trace): the code address at file
 * @offset of the DSO at @path, named from that file with libdw as
 * sp_symbolize() names one of this process (function, file:line, inline
 * chain, system-header wrappers skipped).  @build_id (hex, NULL: unknown)
 * is the one the process had mapped.  0, or -ENOENT (unknown: no such
 * file, no symbol), -ESTALE (the file there now has another build ID: a
 * rebuild) or -ENOTSUP (no libdw).  Sessions are kept across calls, one
 * per file as it is on disk; @out's strings live until
 * sp_symbolize_files_end(). */
int sp_symbolize_file(const char *path, const char *build_id, uint64_t offset,
		      struct sp_symbol *out);
void sp_symbolize_files_end(void);
/* Drop libdw's session (open files, mappings, caches) until the next
 * sp_symbolize(); 'syncprof attach' leaves nothing open behind it. */
void sp_symbolize_end(void);

/* "render/render.c", "render/table.c", "render/json.c", ... */
/* Render @p in o->format to @out.  Pure: reads only @p and @o. */
int sp_render(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
int sp_render_table(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
int sp_render_json(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
int sp_render_csv(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
int sp_render_folded(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
int sp_render_pprof(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o);
/* HTML (render/html.c): @timeline, when not NULL, writes the page's timeline
 * as one JSON value to its stream (docs/formats.md, "html"), 0 or -errno;
 * NULL: the page has none.  sp_render() passes NULL. */
typedef int (*sp_html_timeline_fn)(FILE *out, void *ctx);
int sp_render_html(FILE *out, const struct sp_profile *p, const struct syncprof_report_options *o,
		   sp_html_timeline_fn timeline, void *ctx);
/* Parse a --columns list into column ids (render/table.c); returns the
 * number of columns, or -EINVAL (an unknown or repeated key, or more than
 * @max).  NULL or "" means every column: the hold columns only when @hold. */
int sp_columns_parse(const char *list, int *ids, int max, int hold);
#define SP_MAX_COLUMNS 16
/* Check report options: 0 or -EINVAL. */
int sp_report_options_check(const struct syncprof_report_options *o);
const char *sp_sort_name(enum syncprof_sort s);
const char *sp_format_name(enum syncprof_format f);

#endif /* SP_REPORT_PROFILE_H */
