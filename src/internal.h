/*
 * internal.h - libsyncprof's internal data model and prototypes.
 *
 * Prototypes are grouped by the file that defines them (mimalloc style).
 * Internal non-static names carry the sp_ prefix; all of them have hidden
 * visibility (the library is built with -fvisibility=hidden).
 *
 * Data model.  A *site* is where a lock call was made: __FILE__/__LINE__/
 * __func__ for instrumented code, a return address (pc) for interposed
 * code.  An *entry* holds the statistics of one (site, object, op) in one
 * thread; its key is immutable once published, its counters are written
 * only by the owning thread with relaxed atomic stores, so a concurrent
 * report never reads a torn value.  Entries live in append-only chunks that
 * never move (see table.c); a report walks the chunks, never the index.
 */
#ifndef SP_INTERNAL_H
#define SP_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <time.h>

#include "syncprof.h"

#define SP_LIKELY(x) __builtin_expect(!!(x), 1)
#define SP_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SP_NOINLINE __attribute__((noinline))
#define SP_COLD __attribute__((noinline, cold))
#define SP_ALWAYS_INLINE inline __attribute__((always_inline))
#define SP_TLS __thread __attribute__((tls_model("initial-exec")))

/* Memory orders are named at each use, as liburcu and mimalloc do. */
#define sp_load_relaxed(p) __atomic_load_n((p), __ATOMIC_RELAXED)
#define sp_load_acquire(p) __atomic_load_n((p), __ATOMIC_ACQUIRE)
#define sp_store_relaxed(p, v) __atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define sp_store_release(p, v) __atomic_store_n((p), (v), __ATOMIC_RELEASE)
#define sp_add_relaxed(p, v) __atomic_fetch_add((p), (v), __ATOMIC_RELAXED)

/* Lock types as reported (the "type" of a row). */
enum sp_type {
	SP_TYPE_MUTEX = 0,
	SP_TYPE_REC_MUTEX,
	SP_TYPE_CONDVAR,
	SP_TYPE_RWLOCK_READ,
	SP_TYPE_RWLOCK_WRITE,
	SP_TYPE_SPINLOCK,
	SP_TYPE_COUNT
};
/* "rwlock_read", ...; "?" for a number that is no type (base/types.c). */
const char *sp_type_name(int type);
/* What an rwlock unlock passes to sp_probe_released(): the mode it releases
 * is found there, only when a trace event needs it; never recorded. */
#define SP_TYPE_RWLOCK_UNLOCK SP_TYPE_COUNT

/*
 * Log2 histogram of contended waits: bucket b counts waits w with
 * 2^b <= w < 2^(b+1) ns (bucket 0 also takes w < 1); the last bucket takes
 * everything longer (2^39 ns is about nine minutes).  Uncontended
 * acquisitions wait 0 and are not stored: they are acquisitions minus the
 * sum of the buckets.
 */
#define SP_HIST_BUCKETS 40

/* Most frames kept per entry for contended waits (interposed sites). */
#define SP_MAX_FRAMES 16

/* Identity of a call site, as the probe sees it. */
struct sp_site {
	const char *file; /* instrumented: __FILE__; NULL when interposed */
	const char *func; /* instrumented: __func__; NULL when interposed */
	uintptr_t pc;     /* interposed: return address; 0 when instrumented */
	uint32_t line;    /* instrumented: __LINE__; 0 when interposed */
};

/*
 * The cold part of an entry: what only contended waits, hold tracking and
 * reports touch.  Kept apart from the hot part so that the hot parts of
 * many entries pack densely (1024 entries: 64 KiB, 16 pages) - with both
 * parts together a random walk over 1024 locks missed the TLB on most
 * acquisitions (lockbench -m 1024: 1.50x plain, against 1.2x after).
 */
struct sp_entry_cold {
	const char *func;
	uint64_t wait_max_ns;
	uint64_t hold_ns;
	uint64_t hold_max_ns;
	uint64_t holds;
	uint32_t epoch; /* sp_reset_epoch when the maxima were last reset */
	uint8_t n_frames;
	uint64_t hist[SP_HIST_BUCKETS];
	uintptr_t frames[SP_MAX_FRAMES]; /* callers of the first contended wait */
	/* hold tracking (hold.c), written by the owner only */
	uint64_t owner_changes;
	uint64_t hold_hist[SP_HIST_BUCKETS];
};

/*
 * One (site, object, op) of one thread: exactly one cache line, holding
 * all that an uncontended acquisition touches (the key and the counter).
 */
struct sp_entry {
	/* key: written before publication, then immutable */
	uintptr_t obj;
	const char *file;
	uintptr_t pc;
	uint32_t line;
	uint8_t op;   /* enum sp_type of the call made (mutex for rec_mutex) */
	uint8_t type; /* enum sp_type reported (rec_mutex found at insertion) */
	uint8_t pad_[2];
	struct sp_entry_cold *cold;
	/* counters: written by the owner only, relaxed stores */
	uint64_t acquisitions;
	uint64_t contended;
	uint64_t wait_ns;
} __attribute__((aligned(64)));

/*
 * Per-thread table: an owner-only open-addressing index over append-only
 * entry chunks.  Chunk k holds SP_CHUNK0 << k entries; chunks never move
 * and are never freed while the table lives.
 */
#define SP_CHUNK0 64
#define SP_MAX_CHUNKS 24

struct sp_table {
	struct sp_entry **index; /* owner only; NULL slots are free */
	size_t index_mask;
	unsigned index_shift;    /* 64 - log2(index size) */
	size_t n_entries;        /* published with release; read with acquire */
	struct sp_entry *chunks[SP_MAX_CHUNKS];
	struct sp_entry_cold *cold_chunks[SP_MAX_CHUNKS];
};

/*
 * What a thread is blocked on right now, for the long-wait watchdog
 * (watchdog.c).  Written by the owner only, in the contended slow path and
 * only while the watchdog runs; read by the watchdog thread under a
 * sequence count (odd while the owner writes).  @warned is the one field
 * the watchdog writes: the seq of a wait it warned about, so that the owner
 * publishes that wait's total when it ends.
 */
struct sp_wait_pub {
	uint32_t seq;
	uint32_t warned;
	uint64_t t0;                    /* sp_wait_start() at the start of the wait */
	int mode;                       /* ... and its clock mode (clock.c) */
	const struct sp_entry *entry;   /* what is waited for; NULL: not waiting */
	uint32_t done_seq;              /* seq of the last warned wait that ended */
	uint64_t done_ns;               /* its total wait */
} __attribute__((aligned(64)));

/* A thread known to the profiler. */
struct sp_thread {
	struct sp_table table;
	struct sp_entry *last; /* one-entry cache in front of the index */
	/*
	 * The second cache level: entries direct-mapped by the object's
	 * address in 32-byte granules (no two pthread locks share one; see
	 * sp_near_slot()), checked against their key.  Locks that lie together
	 * in memory use neighbouring slots, so a walk over an array of locks
	 * touches few lines here and computes no hash (lockbench -m 1024:
	 * ~1.45x -> ~1.25x plain under the preload).
	 */
#define SP_NEAR_SLOTS 2048
	struct sp_entry *near[SP_NEAR_SLOTS];
	struct sp_thread *next, *prev;
	pid_t tid;
	char name[16];
	struct sp_wait_pub wait; /* watchdog.c */
};

/* Options read from SYNCPROF_OPTIONS (see options.c). */
#define SP_MAX_SKIP 16
#define SP_DEFAULT_FRAMES 4
#define SP_DEFAULT_HOLD_SAMPLE 16
struct sp_options {
	int enabled;
	int report_at_exit;  /* -1: unset, report when profiling was ever on */
	char *output;        /* NULL: stderr; "%p" expands to the pid */
	struct syncprof_report_options report;
	char *src_root;
	char *trace;         /* trace=FILE: trace into FILE from start-up */
	size_t trace_buffer; /* trace_buffer=BYTES: per-thread ring size */
	/* interposed call sites (stack.c) and hold tracking (hold.c) */
	unsigned frames;            /* callers kept per contended site */
	int hold;                   /* 1: hold times, owner changes, blame */
	unsigned hold_sample;       /* time 1 hold in N per thread (1: all) */
	unsigned n_skip;
	char *skip[SP_MAX_SKIP];    /* function-name regexes of lock wrappers */
	char *columns;         /* owns report.columns */
	int control;           /* control.c: listen on the control socket */
	int report_signal;     /* 0, or the signal that prints a report */
	unsigned warn_wait_ms; /* watchdog.c: 0 = off */
};

/* ---- "util.c" --------------------------------------------------------- */

/* A small futex lock, so that the profiler never calls the lock functions
 * it profiles (a preloaded interposer would call itself). */
typedef struct {
	int state; /* 0 free, 1 locked, 2 locked with waiters */
} sp_lock_t;
#define SP_LOCK_INIT { 0 }
void sp_lock(sp_lock_t *l);
void sp_unlock(sp_lock_t *l);

void *sp_mmap(size_t size);
void sp_munmap(void *p, size_t size);
pid_t sp_gettid(void);
/* Expand %p in @tmpl to the pid and %% to %; NULL when it does not fit. */
char *sp_path_expand(const char *tmpl, char *buf, size_t size);
/* Create a pthread key once, lock-free, from any thread (util.c). */
int sp_key_once(int *state, pthread_key_t *key, void (*dtor)(void *),
		void (*on_created)(void));

static inline uint64_t sp_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static inline unsigned sp_hist_bucket(uint64_t ns)
{
	unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0;
	return b < SP_HIST_BUCKETS ? b : SP_HIST_BUCKETS - 1;
}

/* ---- "clock.c" -------------------------------------------------------- */

#define SP_CLOCK_MONOTONIC 0
#define SP_CLOCK_TSC 1
extern int sp_clock_mode_now;
extern uint64_t sp_tsc_mult;
void sp_clock_calibrate__slowpath(uint64_t now_ns);
const char *sp_clock_name(void);

/* Start timing a wait: the clock's mode is fixed for this wait. */
static inline uint64_t sp_wait_start(int *mode)
{
	*mode = sp_load_acquire(&sp_clock_mode_now);
	return *mode == SP_CLOCK_TSC ? __builtin_ia32_rdtsc() : sp_now_ns();
}

/* Nanoseconds since sp_wait_start() returned @t0 with @mode. */
static inline uint64_t sp_wait_ns(int mode, uint64_t t0)
{
	uint64_t now;

	if (SP_LIKELY(mode == SP_CLOCK_TSC)) {
		uint64_t ticks = __builtin_ia32_rdtsc() - t0;

		return (uint64_t)(((unsigned __int128)ticks * sp_load_relaxed(&sp_tsc_mult)) >> 32);
	}
	now = sp_now_ns();
	sp_clock_calibrate__slowpath(now);
	return now - t0;
}

/* ---- "table.c" -------------------------------------------------------- */

void sp_table_init(struct sp_table *t);
void sp_table_destroy(struct sp_table *t);
/* Owner only.  NULL when out of memory. */
struct sp_entry *sp_table_insert(struct sp_table *t, const struct sp_site *site, uintptr_t obj,
				 int op, int type);
/* Any thread; entries [0, n) are fully initialised. */
size_t sp_table_count(const struct sp_table *t);
struct sp_entry *sp_table_at(const struct sp_table *t, size_t i);
/* Fold @from into @into (owner of @into, i.e. under the registry lock). */
int sp_table_fold(struct sp_table *into, const struct sp_table *from);

/*
 * Hash of a key, for an index of 2^bits slots: Fibonacci hashing, whose
 * top bits mix every input bit.  Lock objects are usually aligned (their
 * low 3-6 bits are zero); taking low bits of a weaker mix made linear
 * probing walk several entries per lookup (lockbench -m 1024: 1.37x plain,
 * 1.2x after).
 */
static inline size_t sp_key_slot(const char *file, uintptr_t pc, uint32_t line, uintptr_t obj,
				 int op, unsigned shift)
{
	uint64_t k = (uint64_t)obj ^ (((uint64_t)(uintptr_t)file + pc) * 0xC2B2AE3D27D4EB4Full) ^
		     ((uint64_t)line << 40) ^ ((uint64_t)op << 56);

	return (size_t)((k * 0x9E3779B97F4A7C15ull) >> shift);
}

static inline int sp_entry_is(const struct sp_entry *e, const char *file, uintptr_t pc,
			      uint32_t line, uintptr_t obj, int op)
{
	return e->obj == obj && e->file == file && e->line == line && e->pc == pc && e->op == op;
}

static inline int sp_entry_matches(const struct sp_entry *e, const struct sp_site *site,
				   uintptr_t obj, int op)
{
	return sp_entry_is(e, site->file, site->pc, site->line, obj, op);
}

/*
 * Owner only: the entry of a key, or NULL.  The key's fields come apart so
 * that an interposer's constants (file NULL, line 0) fold into the hash and
 * the compare; sp_table_find() takes them from a site.
 */
static inline struct sp_entry *sp_table_find_key(const struct sp_table *t, const char *file,
						 uintptr_t pc, uint32_t line, uintptr_t obj, int op)
{
	if (SP_UNLIKELY(!t->index))
		return NULL;
	for (size_t i = sp_key_slot(file, pc, line, obj, op, t->index_shift);;
	     i = (i + 1) & t->index_mask) {
		struct sp_entry *e = t->index[i];

		if (SP_LIKELY(!e || sp_entry_is(e, file, pc, line, obj, op)))
			return e;
	}
}

static inline struct sp_entry *sp_table_find(const struct sp_table *t, const struct sp_site *site,
					     uintptr_t obj, int op)
{
	return sp_table_find_key(t, site->file, site->pc, site->line, obj, op);
}

static inline size_t sp_near_slot(uintptr_t obj)
{
	return (size_t)(obj >> 5) & (SP_NEAR_SLOTS - 1);
}

/* ---- "registry.c" ----------------------------------------------------- */

extern SP_TLS struct sp_thread *sp_tls_self;
extern uint32_t sp_reset_epoch;

/* The calling thread's record, created on first use; NULL while the thread
 * is inside the profiler or being torn down (its calls go unrecorded). */
struct sp_thread *sp_thread_self__slowpath(void);
/* Mark the calling thread busy inside the profiler: its lock calls pass
 * through unrecorded until sp_thread_leave(). */
struct sp_thread *sp_thread_enter(void);
void sp_thread_leave(struct sp_thread *saved);
/* Call @fn on every live thread's table and on the retired aggregate, with
 * the registry lock held (threads keep recording; exiting ones wait). */
void sp_registry_foreach(void (*fn)(const struct sp_table *t, void *arg), void *arg);
/* Call @fn on every live thread record, registry lock held (watchdog). */
void sp_registry_foreach_thread(void (*fn)(struct sp_thread *t, void *arg), void *arg);
size_t sp_registry_thread_count(void);
void sp_lost_add(uint64_t n);
uint64_t sp_lost_get(void);

/* ---- "probe.c" -------------------------------------------------------- */

/* Slow paths shared by every probe (instrumented and interposed). */
struct sp_entry *sp_entry_lookup__slowpath(struct sp_thread *t, const struct sp_site *site,
					   uintptr_t obj, int op, int type);
void sp_entry_record_wait(struct sp_entry *e, uint64_t wait_ns, int acquired);
int sp_mutex_type(const void *mutex);
/* Before its unlock: SP_TYPE_RWLOCK_WRITE if the calling thread holds the
 * rwlock @l for writing, else SP_TYPE_RWLOCK_READ. */
int sp_rwlock_held_type(const void *l);

/* ---- "options.c" ------------------------------------------------------ */

extern struct sp_options sp_opts;
/* Parse "key=value,..." into @o (which holds defaults); warnings to @warn.
 * Returns the number of problems found (0: all understood). */
int sp_options_parse(struct sp_options *o, const char *s, FILE *warn);
void sp_options_defaults(struct sp_options *o);
void sp_options_free(struct sp_options *o);

/* ---- "runtime.c" ------------------------------------------------------ */

void sp_runtime_init(void);
/* Unlock calls must reach the library while any reason is set. */
#define SP_UNLOCK_HOOK_TRACE 1
#define SP_UNLOCK_HOOK_HOLD 2
void sp_unlock_hooks_set(int reason, int on);
/*
 * The reasons are also kept in syncprof__enabled, above its public bits,
 * so that one load tells a probe both whether profiling is on and which
 * hooks run: the preload's fast paths test the whole word against
 * SP_FLAGS_ON (profiling, nothing else) and SP_FLAGS_HOLD (profiling and
 * hold tracking only).  (Read through the GOT: a hidden alias would miss
 * the copy that a copy relocation makes in an instrumented executable.)
 */
#define SP_FLAG_REASON(r) ((r) << 8)
#define SP_FLAGS_ON SYNCPROF__PROFILING
#define SP_FLAGS_HOLD                                                                 \
	(SYNCPROF__PROFILING | SYNCPROF__UNLOCK_HOOKS | SP_FLAG_REASON(SP_UNLOCK_HOOK_HOLD))
/* How long profiling was on since start-up or the last reset. */
uint64_t sp_profiled_ns(void);
const char *sp_command(void);
/* Wall-clock time (CLOCK_REALTIME ns) of the last on/off switch, or of
 * start-up when it never switched. */
uint64_t sp_state_since_ns(void);
/* The profile of this process as @o shapes it, named and ready to render
 * (any thread; takes report_lock).  Free it with sp_profile_free(). */
struct sp_profile;
int sp_report_profile(struct sp_profile *p, const struct syncprof_report_options *o);
int sp_report_snapshot(void);
/* report_lock: serialises reports, resets and symbolizing (watchdog). */
void sp_report_lock(void);
void sp_report_unlock(void);

/* ---- "control.c" ------------------------------------------------------ */

/*
 * Start the helper thread: the control socket when sp_opts.control is set,
 * the long-wait watchdog when sp_opts.warn_wait_ms is, and the report on
 * sp_opts.report_signal.  Idempotent; also restarts it in a forked child.
 * Return: 0, or a negative errno (then the program runs on without it).
 */
int sp_control_start(void);
/* In a forked child, start the helper thread that fork() left behind; a
 * no-op (one relaxed load) otherwise.  Called from the registry's slow
 * path, at the child's first profiled lock call or new thread. */
void sp_control_after_fork(void);
/* $SYNCPROF_CONTROL_DIR or /tmp/syncprof-UID, into @buf. */
int sp_control_dir(char *buf, size_t size);

/* ---- "control_proto.c" ------------------------------------------------ */

#define SP_CTL_LINE_MAX 1024 /* longest request line, newline included */

enum sp_ctl_verb { SP_CTL_STATUS, SP_CTL_ON, SP_CTL_OFF, SP_CTL_RESET, SP_CTL_REPORT };

struct sp_ctl_request {
	enum sp_ctl_verb verb;
	struct syncprof_report_options report; /* for SP_CTL_REPORT */
	char columns[256];                     /* report.columns points here */
	char src_root[256];                    /* report.src_root points here */
};

/*
 * Parse one request line (@len bytes, no NUL needed, newline optional) with
 * @defaults as the report options.  Never reads past @len; allocates
 * nothing.  Return 0, or -EINVAL with a message in @err.
 */
int sp_ctl_parse(const char *line, size_t len, const struct syncprof_report_options *defaults,
		 struct sp_ctl_request *req, char *err, size_t err_size);
/* Run a parsed request; the answer's payload goes to @out. */
int sp_ctl_execute(const struct sp_ctl_request *req, FILE *out);

/* ---- "watchdog.c" ----------------------------------------------------- */

extern unsigned sp_watch_on; /* non-zero: contended waits publish themselves */
/* Contended slow path: publish / clear "waiting since t0 on obj at site". */
void sp_watch_begin(struct sp_thread *t, const struct sp_entry *e, uint64_t t0, int mode);
void sp_watch_end(struct sp_thread *t, uint64_t wait_ns);
/* One scan of every thread (helper thread); returns ms until the next. */
unsigned sp_watchdog_scan(FILE *out);
/* In a forked child: forget the parent's warned waits (atfork handler). */
void sp_watchdog_forget(void);


/* ---- "hold.c" ---------------------------------------------------------- */

/*
 * Hold tracking (SYNCPROF_OPTIONS hold=1, syncprof run --hold).  Off, it
 * costs the probes one load and branch on sp_hold_on.  Acquire/release are
 * called by the owning thread right after a successful acquisition and
 * right before the real unlock.
 */
extern int sp_hold_on;
void sp_hold_init(void);
void sp_hold_acquired(struct sp_thread *t, uintptr_t obj, int op, const struct sp_site *site);
void sp_hold_released(uintptr_t obj);
/* A condition wait releases and retakes @obj: pause the hold around it. */
void sp_hold_cond_begin(uintptr_t obj);
void sp_hold_cond_end(uintptr_t obj);
/*
 * sp_hold_lookup() - who holds the lock @obj right now.
 * Any thread, any time; lock-free, never blocks (or writes to) recording
 * threads.  Only exclusive holds are known (mutex, rec_mutex, spinlock,
 * rwlock write), and only while hold tracking is on.
 * Return: 0 and *tid, *site (interposed: pc; instrumented: file/line/func),
 * *since_ns (sp_now_ns() clock) when held; -ENOENT otherwise.  since_ns is
 * exact for a timed (sampled) hold, otherwise the first time any caller
 * saw this hold (a lower bound of its age; poll to refine).  A lock whose
 * holder exited holding it is reported with that thread's tid.
 */
int sp_hold_lookup(uintptr_t obj, pid_t *tid, struct sp_site *site, uint64_t *since_ns);

/* Contended waits: what the probes' slow paths tell hold.c and stack.c. */
struct sp_wait_ctx {
	struct sp_site holder; /* who held the lock when the wait began */
	int have_holder;
};
void sp_wait_begin(uintptr_t obj, struct sp_wait_ctx *w);
void sp_wait_end(struct sp_entry *e, uint64_t wait_ns, const struct sp_wait_ctx *w);

/* Blame records: how long waiters at a site waited for holders that had
 * taken the lock at another site (hold.c). */
struct sp_blame_view {
	uint8_t type;
	uintptr_t obj;
	struct sp_site waiter, holder;
	uint64_t wait_ns, count;
};
void sp_blame_foreach(void (*fn)(const struct sp_blame_view *b, void *arg), void *arg);
void sp_hold_snapshot(void);

/* ---- "stack.c" --------------------------------------------------------- */

/* Warm the unwinder and compute the address ranges of lock wrappers
 * (default libraries and --skip regexes).  Start-up only (mallocs). */
void sp_stack_init(void);
/* Sorted, disjoint [lo, hi) code ranges of lock wrappers; written at
 * start-up only, before sp_skip_n is published. */
struct sp_range {
	uintptr_t lo, hi;
};
#define SP_MAX_RANGES 4096
extern struct sp_range sp_skip_ranges[SP_MAX_RANGES];
extern unsigned sp_skip_n;
static inline int sp_pc_skipped(uintptr_t pc)
{
	unsigned lo = 0, hi = sp_load_acquire(&sp_skip_n);

	while (lo < hi) {
		unsigned mid = (lo + hi) / 2;

		if (pc < sp_skip_ranges[mid].lo)
			hi = mid;
		else if (pc >= sp_skip_ranges[mid].hi)
			lo = mid + 1;
		else
			return 1;
	}
	return 0;
}
/* The site pc for an interposed call returning to @ret: @ret unless it lies
 * in a lock wrapper, then the first caller outside the wrappers. */
uintptr_t sp_site_pc__slowpath(uintptr_t ret);
/*
 * Return addresses already found outside every wrapper range, per thread,
 * direct-mapped: the ranges never change after start-up, so an address
 * checked once needs no binary search again (lockbench under the preload,
 * -m 1024: the search was ~7% of each call).
 */
#define SP_SITE_CACHE 64
extern SP_TLS uintptr_t sp_site_ok[SP_SITE_CACHE];
static inline uintptr_t sp_site_pc(uintptr_t ret)
{
	uintptr_t *slot;

	if (SP_UNLIKELY(!sp_load_relaxed(&sp_skip_n)))
		return ret;
	slot = &sp_site_ok[(ret >> 2) & (SP_SITE_CACHE - 1)];
	if (SP_LIKELY(*slot == ret))
		return ret;
	if (!sp_pc_skipped(ret)) {
		*slot = ret;
		return ret;
	}
	return sp_site_pc__slowpath(ret);
}
/* Callers of the current call above @site_pc, up to @max; 0 if unknown. */
unsigned sp_stack_capture(uintptr_t site_pc, uintptr_t *frames, unsigned max);

#endif /* SP_INTERNAL_H */
