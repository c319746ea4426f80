/*
 * record.h - the recording side (src/record): per-thread entries and
 * tables, the registry of threads, the probes' slow paths, waits in
 * progress, hold tracking and interposed call sites.  Private to
 * src/record, src/report/collect.c, src/runtime and preload/.
 *
 * Data model.  A *site* is where a lock call was made: __FILE__/__LINE__/
 * __func__ for instrumented code, a return address (pc) for interposed
 * code.  An *entry* holds the statistics of one (site, object, op) in one
 * thread; its key is immutable once published, its counters are written
 * only by the owning thread with relaxed atomic stores, so a concurrent
 * report never reads a torn value.  Entries live in append-only chunks that
 * never move (see table.c); a report walks the chunks, never the index.
 */
#ifndef SP_RECORD_RECORD_H
#define SP_RECORD_RECORD_H

#include "base/base.h"
#include "base/clock.h"
#include "base/flags.h"
#include "base/types.h"

/*
 * The cold part of an entry: what only contended waits, hold tracking and
 * reports touch.  Kept apart from the hot part so that the hot parts of
 * many entries pack densely (1024 entries: 64 KiB, 16 pages) - with both
 * parts together a random walk over 1024 locks missed the TLB on most
 * acquisitions (lockbench -m 1024: 1.50x plain, against 1.2x after).
 */
enum sp_hist_which { SP_HIST_WAIT, SP_HIST_HOLD };

struct sp_entry_cold {
	const char *func;
	uint64_t wait_ns; /* contended waits' total (probe.c), owner only */
	uint64_t wait_max_ns;
	/* hold tracking (hold.c), written by the owner only: the holds timed
	 * exactly or bounded by the tick (long, contended, after a long one),
	 * the timed sample of the rest, and the acquisitions that were no
	 * hold of their own (taken again by their holder, untracked); reports
	 * combine them with sp_hold_sums_totals() */
	uint64_t hold_exact_ns;
	uint64_t hold_max_ns;
	uint64_t hold_exact_n;
	uint64_t hold_sample_ns; /* weighted: sum of weight x ns */
	uint64_t hold_sample_n;  /* weighted: sum of weights */
	uint64_t hold_nonholds;
	uint32_t epoch; /* sp_reset_epoch when the maxima were last reset */
	uint8_t n_frames;
	/* histograms of contended waits (probe.c) and timed holds (hold.c): 0 until the
	 * first count, then a block of the table's pool (hist.c) */
	uintptr_t hist[2]; /* [enum sp_hist_which] */
	/* callers of the first contended wait: n_frames of them, in a block of
	 * the table's pool allocated then (hist.c); published by the release
	 * store of n_frames */
	uintptr_t *frames;
};
_Static_assert(sizeof(struct sp_entry_cold) <= 104,
	       "the cold part of an entry: 104 bytes at most (docs/layout.md)");

/*
 * One (site, object, op) of one thread: exactly one cache line, holding
 * all that an uncontended acquisition touches (the key and the counter).
 */
#define SP_ENTRY_LIVE 1
#define SP_ENTRY_NO_RAMP 2
#define SP_ENTRY_RAMP_NOTED 4

struct sp_entry {
	/* key: written before publication, then immutable */
	uintptr_t obj;
	const char *file;
	uintptr_t pc;
	uint32_t line;
	uint8_t op;   /* enum sp_type of the call made (mutex for rec_mutex) */
	uint8_t type; /* enum sp_type reported (rec_mutex found at insertion) */
	/* SP_ENTRY_LIVE: a home slot's entry, once published (release);
	 * SP_ENTRY_NO_RAMP: its short holds are sampled at the full period
	 * from its first; SP_ENTRY_RAMP_NOTED: its key is in the set of keys
	 * past the ramp (hold.c, "The ramp"); both set by its owner only */
	uint8_t flags;
	/* 1 once anything was written to the cold part (sp_entry_cold_w());
	 * until then it is all zero, and readers leave its page alone
	 * (sp_entry_cold_r()) */
	uint8_t cold_set;
	struct sp_entry_cold *cold;
	/* counters: written by the owner only, relaxed stores.  Owner
	 * changes (hold.c) are here, the waits' total in the cold part
	 * (until 2026-11-28 the other way round): a lock that goes from
	 * thread to thread changes owner without a wait, and each change
	 * wrote the cold line, a cache miss where locks are many (memcached
	 * --hold: owner_changed() was 1.5% of the server's samples, now
	 * gone; the sampled holds of the same rows, which touch the cold
	 * line anyway, rose from 2.0% to 3.4%), where a contended wait
	 * writes the cold part anyway (its maximum, its histogram). */
	uint64_t acquisitions;
	uint64_t contended;
	uint64_t owner_changes;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct sp_entry) == 64, "an entry is exactly one cache line");
_Static_assert(offsetof(struct sp_entry, owner_changes) + sizeof(uint64_t) <= 64,
	       "key and counters share the entry's line");

/*
 * The cold part of an entry that never waited nor held anything timed is
 * all zero, and stays untouched - not resident - while its entry lives
 * (docs/layout.md).  The writers mark the entry first, in its own line,
 * which the same call writes anyway; the readers (folds at thread exit,
 * reports, the watchdog) read a zero copy instead of faulting in a page
 * of zeros: a program with 4,096 locks and two threads otherwise faulted
 * ~300 such pages in at exit (issue 25, sysbench mutex).
 */
extern const struct sp_entry_cold sp_entry_cold_zero;

/* The owner, before it writes @e's cold part. */
static inline struct sp_entry_cold *sp_entry_cold_w(struct sp_entry *e)
{
	if (__builtin_expect(!e->cold_set, 0)) {
		/* Its pages first touched by a store (it is all zero, so a
		 * zero changes nothing): the caller's first access is often a
		 * load (a count read, then written), which would map the zero
		 * page, and the store after it fault again and flush the TLB
		 * of every CPU the process runs on (hist.c). */
		__atomic_store_n((char *)e->cold, 0, __ATOMIC_RELAXED);
		__atomic_store_n((char *)(e->cold + 1) - 1, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->cold_set, 1, __ATOMIC_RELAXED);
	}
	return e->cold;
}

/* Any thread: @e's cold part, or the zero one while nothing was written
 * to it (a write that comes later is one the reader came before). */
static inline const struct sp_entry_cold *sp_entry_cold_r(const struct sp_entry *e)
{
	return __atomic_load_n(&e->cold_set, __ATOMIC_RELAXED) ? e->cold : &sp_entry_cold_zero;
}

/*
 * Per-thread table: an owner-only open-addressing index over append-only
 * entry chunks.  Chunk k holds SP_CHUNK0 << k entries; chunks never move
 * and are never freed while the table lives.
 */
#define SP_CHUNK0 64
#define SP_MAX_CHUNKS 24

/*
 * Entries' histograms (hist.c): counts of the SP_HIST_BUCKETS buckets of
 * base/types.h.  A cold part's word for a histogram is 0 (none yet); the
 * word itself while every count is in one bucket (SP_HIST_ONE: the count
 * above bit SP_HIST_ONE_SHIFT, the bucket above bit 2); a block of
 * SP_HIST_FEW_N such words, one per bucket, with SP_HIST_FEW set, up to
 * that many buckets; then a struct sp_hist32 * (32-bit counts); or, once
 * one would wrap, a struct sp_hist64 * with SP_HIST_WIDE set.
 */
struct sp_hist32 {
	uint32_t n[SP_HIST_BUCKETS];
};
struct sp_hist64 {
	uint64_t n[SP_HIST_BUCKETS];
};
#define SP_HIST_WIDE 1u
#define SP_HIST_ONE 2u
#define SP_HIST_FEW 4u
#define SP_HIST_TAGS (SP_HIST_WIDE | SP_HIST_ONE | SP_HIST_FEW)
#define SP_HIST_ONE_SHIFT 16
#define SP_HIST_FEW_N 8
_Static_assert(SP_HIST_BUCKETS <= 1u << (SP_HIST_ONE_SHIFT - 2), "a bucket fits the word");

/* Where a table's histograms come from: mmap'd slabs, owner only. */
struct sp_hist_pool {
	unsigned char *next; /* free space in the current slab */
	size_t left;
	void *slabs;         /* list through each slab's first word */
};

/*
 * Slots by a lock's address, in 32-byte granules (no two pthread locks
 * share one): a thread's home slots (below) and its near[] cache (struct
 * sp_thread).  Locks that lie together in memory use neighbouring slots,
 * so a walk over an array of locks touches few lines and computes no hash.
 */
#define SP_LOCK_SLOTS 2048

static inline size_t sp_lock_slot(uintptr_t obj)
{
	return (size_t)(obj >> 5) & (SP_LOCK_SLOTS - 1);
}

/*
 * The near[] slot of a call on the lock at @obj from a site whose salt is
 * @salt (sp_site_salt()): the lock's slot mixed with its site, so that a
 * lock taken at several sites - whose home slot holds one of them - keeps
 * an entry per site there.  With the slot by address alone, a lock taken
 * at three sites in turn found two of them in the index at every call
 * (memcached's global locks).  For one site the mix is a fixed
 * permutation of the slots: locks in an array keep distinct slots.
 */
static inline uintptr_t sp_site_salt(const char *file, uintptr_t pc, uint32_t line)
{
	return file ? (uintptr_t)file + line : pc;
}

/*
 * near[] has more slots than the home slots (8 x 2048): a pointer each,
 * where a home slot is an entry, so that a thread that goes round many
 * locks finds most of them here, not in its index through the site's
 * path.  Measured: lockbench -t 1 -m 8192 -d 1000 -r 3 (8,192 counters
 * 64 bytes apart, taken at random; against glibc), 4.3-4.7x preloaded
 * and 3.9-4.4x compiled in with 2048 slots, 2.0-2.6x and 2.0-2.3x with
 * 16384; a loop over 16,384 mutexes of a dense array, preloaded, 58-59
 * -> 24-32 ns a lock+unlock (bare 9-17).  A thread touches a page of it
 * per 512 slots it uses: at most 128 KiB (docs/layout.md); pigz -p 4's
 * peak RSS, preloaded, +1.4 MB -> +1.8 MB.
 */
#define SP_NEAR_SLOTS 16384
static inline size_t sp_near_slot(uintptr_t obj, uintptr_t salt)
{
	return (size_t)((obj >> 5) ^ salt) & (SP_NEAR_SLOTS - 1);
}

/*
 * A thread's table also has home slots (use_home): the first entry of a
 * lock goes in the slot its address picks when that slot is free, so that
 * the probe's fast path finds it with one load where the near[] cache
 * needs two, dependent (lockbench -m 1024: ~1.54x -> ~1.33x); other entries
 * of the same lock (other sites, other ops) and locks whose slot is taken
 * go to the chunks.  Readers see the home slots as indices 0 to
 * SP_LOCK_SLOTS - 1 of sp_table_at(), NULL where unused, and the chunks'
 * entries after them.
 */
struct sp_table {
	struct sp_entry **index; /* owner only; NULL slots are free */
	size_t index_mask;
	unsigned index_shift;    /* 64 - log2(index size) */
	size_t n_entries;        /* published with release; read with acquire */
	struct sp_entry *chunks[SP_MAX_CHUNKS];
	struct sp_entry_cold *cold_chunks[SP_MAX_CHUNKS];
	struct sp_hist_pool hist_pool;
	int use_home;                /* set before the table is shared, then constant */
	int home_failed;             /* owner only: the home arrays could not be mapped */
	struct sp_entry *home;       /* SP_LOCK_SLOTS entries, mmap'd at the first insert */
	struct sp_entry_cold *home_cold;
	/* The home arrays a record's mapping lent (sp_table_init_in()),
	 * published as @home at the first insert, whose write is the first
	 * touch of its page (table.c, home_alloc()). */
	struct sp_entry *home_lent;
	/* Non-NULL: the home arrays and this first index are parts of a
	 * mapping the table does not own (sp_table_init_in()), unmapped
	 * neither with the table nor when the index grows. */
	struct sp_entry **index_lent;
	size_t n_home;               /* home slots used; published with release */
	/* Which home slots are live, a bit each (release): a report's walk
	 * (sp_table_at()) reads these 256 bytes, not the home arrays, whose
	 * untouched pages it would fault in (perf: page faults were the
	 * largest part of a small program's report at exit). */
	uint64_t home_live[SP_LOCK_SLOTS / 64];
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
	int timed;                      /* a lock wait with a deadline: a cycle
	                                 * through it ends at the timeout */
	const struct sp_entry *entry;   /* what is waited for; NULL: not waiting */
	uint32_t done_seq;              /* seq of the last warned wait that ended */
	uint64_t done_ns;               /* its total wait */
	/* written by the watchdog: where the root holder of this wait's chain
	 * took its lock (immutable, wait_pub.c), for the wait whose seq is
	 * @root_id; the owner hands it to blame when that wait ends */
	const struct sp_site *root;
	uint32_t root_id;
} __attribute__((aligned(64)));
_Static_assert(sizeof(struct sp_wait_pub) == 64, "a published wait is one cache line");

/*
 * A lock-order edge "@to taken while @from was held" that its thread knows
 * is in the graph (lockorder.c): the key of the edge, so that a known edge
 * costs one probe of a direct-mapped cache.  Owner only; @from 0: empty.
 */
struct sp_order_slot {
	uintptr_t from, to;
	uint64_t gens;     /* generations of the two locks (lockorder.c) */
	uint32_t mode;     /* read/write modes of the two ends */
	uint32_t dropped;  /* it found the edge table full: counted once */
};
_Static_assert(sizeof(struct sp_order_slot) == 32, "two order slots per cache line");
#define SP_ORDER_CACHE 256

/* A thread known to the profiler. */
struct sp_thread {
	struct sp_table table;
	struct sp_entry *last; /* one-entry cache in front of the index */
	/*
	 * The third cache level, after t->last and the lock's home slot:
	 * entries by the lock's address and site (sp_near_slot()), checked
	 * against their key - a lock's entries at other sites, and locks
	 * whose home slot is another's (lockbench -m 1024: ~1.45x -> ~1.25x
	 * plain under the preload, before home slots).
	 */
	struct sp_entry *near[SP_NEAR_SLOTS];
	struct sp_thread *next, *prev;
	pid_t tid;
	char name[16];
	uint64_t born_ns; /* CLOCK_BOOTTIME at registration (account.c) */
	/* CLOCK_BOOTTIME at the thread's start, when the preload's
	 * pthread_create() started it (sp_thread_start_ns); 0: unknown,
	 * stat's clock tick then (account.c) */
	uint64_t start_ns;
	struct sp_wait_pub wait; /* watchdog.c */
	/* lock order (lockorder.c): edges this thread knows; its pages are
	 * touched only by threads that take locks inside others */
	struct sp_order_slot order_cache[SP_ORDER_CACHE];
};

/* ---- "table.c" -------------------------------------------------------- */

void sp_table_init(struct sp_table *t);
/* A thread's table (use_home) whose home arrays and first index lie in
 * @mem, sp_table_lent_bytes() bytes of zeroed memory the caller maps and
 * unmaps (registry.c: one mapping with the thread's record). */
size_t sp_table_lent_bytes(void);
void sp_table_init_in(struct sp_table *t, void *mem);
void sp_table_destroy(struct sp_table *t);
/* Empty @t for a new owner, keeping its mappings, when it is small
 * (SP_TABLE_REUSE_MAX entries at most): 1, and @near (SP_LOCK_SLOTS
 * pointers, or NULL) cleared where its entries were; 0 when it is not
 * (the caller destroys it).  No reader may see @t meanwhile. */
#define SP_TABLE_REUSE_MAX 256
int sp_table_reset(struct sp_table *t, struct sp_entry **near);
/* Owner only.  NULL when out of memory. */
/* The function of an entry's instrumented site (__func__), or NULL (table.c). */
const char *sp_entry_func(const struct sp_entry *e);
const char *sp_site_func(const char *file, uint32_t line);
struct sp_entry *sp_table_insert(struct sp_table *t, const struct sp_site *site, uintptr_t obj,
				 int op, int type);
/* Any thread: the number of entries; the indices of sp_table_at(), whose
 * entries are fully initialised (NULL: a free home slot). */
size_t sp_table_count(const struct sp_table *t); /* entries */
size_t sp_table_span(const struct sp_table *t);  /* indices of sp_table_at() */
struct sp_entry *sp_table_at(const struct sp_table *t, size_t i); /* NULL: none there */
/* The first index from @i on that may hold an entry: home slots whose
 * live bit is clear are passed over 64 at a time (a thread's exit walks
 * its table twice, and called sp_table_at() on all 2,048 home slots each
 * time: 6% of bench/thread_churn's CPU under the preload).  Loops:
 * for (i = sp_table_next(t, 0); i < n; i = sp_table_next(t, i + 1)). */
size_t sp_table_next(const struct sp_table *t, size_t i);
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

/* Whether @e is one of @t's home slots. */
static inline int sp_table_is_home(const struct sp_table *t, const struct sp_entry *e)
{
	return t->home && e >= t->home && e < t->home + SP_LOCK_SLOTS;
}

/* Owner only: the home slot of @obj in @t (free, or another key's), or
 * NULL before the table has home slots. */
static inline struct sp_entry *sp_home_entry(const struct sp_table *t, uintptr_t obj)
{
	struct sp_entry *home = t->home;

	return home ? &home[sp_lock_slot(obj)] : NULL;
}

/*
 * Owner only: the entry of a call on the lock at @obj that thread @t finds
 * without its index - its last entry, the lock's home slot, the near[]
 * slot of the lock and the call's site (@salt: sp_site_salt()) - or NULL; a hit becomes the last entry.  @IS(e) is the
 * call's key compare, a macro of the caller's (the probe compares a site,
 * the preload a return address), so that each fast path keeps its own.
 */
#define SP_ENTRY_CACHED(t, obj, salt, IS)                                                  \
	({                                                                                 \
		struct sp_entry *e_ = (t)->last;                                           \
		if (SP_UNLIKELY(!e_ || !IS(e_))) {                                         \
			e_ = sp_home_entry(&(t)->table, (obj));                            \
			if (!e_ || !IS(e_)) {                                              \
				e_ = (t)->near[sp_near_slot((obj), (salt))];               \
				if (e_ && !IS(e_))                                         \
					e_ = NULL;                                         \
			}                                                                  \
			if (e_)                                                            \
				(t)->last = e_;                                            \
		}                                                                          \
		e_;                                                                        \
	})

/* ---- "registry.c" ----------------------------------------------------- */

extern SP_TLS struct sp_thread *sp_tls_self;
extern uint32_t sp_reset_epoch;

/*
 * instrument.h's inline fast path (syncprof.h, struct syncprof__entry)
 * reads a thread's home slots through syncprof__home, a copy of
 * sp_tls_self->table.home: set and cleared with sp_tls_self, so that a
 * thread the probes leave alone (torn down, inside the profiler, after
 * fork) is left alone inline too, and set once the home slots are mapped.
 */
_Static_assert(offsetof(struct syncprof__entry, obj) == offsetof(struct sp_entry, obj) &&
		       offsetof(struct syncprof__entry, file) == offsetof(struct sp_entry, file) &&
		       offsetof(struct syncprof__entry, pc) == offsetof(struct sp_entry, pc) &&
		       offsetof(struct syncprof__entry, line) == offsetof(struct sp_entry, line) &&
		       offsetof(struct syncprof__entry, op) == offsetof(struct sp_entry, op) &&
		       offsetof(struct syncprof__entry, acquisitions) ==
			       offsetof(struct sp_entry, acquisitions) &&
		       sizeof(struct syncprof__entry) == sizeof(struct sp_entry),
	       "instrument.h's view of an entry is the entry");
_Static_assert(SYNCPROF__HOME_SLOT(~0ul) == SP_LOCK_SLOTS - 1 &&
		       SYNCPROF__HOME_SLOT(1ul << 5) == 1,
	       "instrument.h's home slot is sp_lock_slot()");
_Static_assert(SYNCPROF__OP_MUTEX == SP_TYPE_MUTEX &&
		       SYNCPROF__OP_RWLOCK_READ == SP_TYPE_RWLOCK_READ &&
		       SYNCPROF__OP_RWLOCK_WRITE == SP_TYPE_RWLOCK_WRITE &&
		       SYNCPROF__OP_SPINLOCK == SP_TYPE_SPINLOCK,
	       "instrument.h's ops are the entries'");

/* 1 in libsyncprof; 0 in the preload library (preload.c), whose
 * syncprof__home an instrumented program run under it would read: the
 * inline path's try would then be the preload's interposed one, which
 * records the call a second time, by its return address. */
extern const int sp_home_inline;



/* The calling thread's record, created on first use; NULL while the thread
 * is inside the profiler or being torn down (its calls go unrecorded). */
struct sp_thread *sp_thread_self__slowpath(void);
/* Mark the calling thread busy inside the profiler: its lock calls pass
 * through unrecorded until sp_thread_leave(). */
struct sp_thread *sp_thread_enter(void);
void sp_thread_leave(struct sp_thread *saved);
/* "lockname.c": names and creation sites of locks, keyed by address.
 * Set: 0, -EINVAL, -EBUSY or -ENOSPC (then counted lost).  Get copies the
 * name (SP_LOCK_NAME_MAX bytes) and site; returns enum sp_lock_created. */
int sp_lockname_set(uintptr_t obj, const char *name);
void sp_lockname_init(uintptr_t obj, const struct sp_site *site);
void sp_lockname_destroyed(uintptr_t obj);
void sp_lockname_first_use(uintptr_t obj, const struct sp_site *site);
int sp_lockname_get(uintptr_t obj, char *name, struct sp_site *created);
uint64_t sp_lockname_lost(void);
/* fork() child: the table's lock, if another thread held it, is free. */
void sp_lockname_fork_child(void);
/* The trace's source of lock names (sp_trace_set_lock_names_source()). */
struct sp_trace_lock_name;
void sp_lockname_each_named(void (*emit)(const struct sp_trace_lock_name *n));

/* Call @fn on every live thread's table and on the retired aggregate, with
 * the registry lock held (threads keep recording; exiting ones wait). */
void sp_registry_foreach(void (*fn)(const struct sp_table *t, void *arg), void *arg);
/* Call @fn on every live thread record, registry lock held (watchdog). */
void sp_registry_foreach_thread(void (*fn)(struct sp_thread *t, void *arg), void *arg);
size_t sp_registry_thread_count(void);
/* fork(): the lifecycle (src/runtime) calls these from its one atfork
 * handler: prepare locks the registry, parent unlocks it, child retires the
 * threads that did not survive and unlocks. */
void sp_registry_fork_prepare(void);
void sp_registry_fork_parent(void);
void sp_registry_fork_child(void);
/* Called at each thread's first profiled call: set by the runtime to
 * restart its helper thread in a forked child (a no-op otherwise). */
extern void (*sp_registry_after_fork)(void);
void sp_lost_add(uint64_t n);
uint64_t sp_lost_get(void);

/* ---- "account.c": the threads' time, from the kernel's accounting ------ */

/* One thread's figures from /proc/self/task/TID/{schedstat,stat}. */
struct sp_sched {
	uint64_t start_ns;     /* the exact start when known (sp_thread.start_ns), else 0 */
	uint64_t start_ticks;  /* stat's starttime: clock ticks since boot (start_ns 0) */
	uint64_t now_ns;       /* CLOCK_BOOTTIME when read */
	uint64_t running_ns;   /* on a CPU */
	uint64_t preempted_ns; /* runnable, on a run queue */
	char name[16];         /* comm */
};

/* A thread's account: lifetime = running + preempted + blocked (blocked
 * is 0, not negative, when the parts overshoot by rounding); sync_wait is
 * the part of its life spent in the waits of its table's entries. */
struct sp_account_figs {
	uint64_t lifetime_ns, running_ns, preempted_ns, blocked_ns, sync_wait_ns;
};

/* An exited thread's account, kept by the registry (the last
 * SP_ACCOUNT_EXITED_KEPT exits; all of them are in the totals). */
struct sp_account_thread {
	pid_t tid;
	char name[16];
	uint64_t seq; /* 1 for the first exit accounted, and so on */
	struct sp_account_figs f;
};
#define SP_ACCOUNT_EXITED_KEPT 256

/* What the registry keeps of the threads that exited. */
struct sp_account_retired {
	uint64_t threads;   /* exits accounted (= the last seq) */
	uint64_t unread;    /* exits whose /proc files could not be read */
	uint64_t skipped;   /* exits not read: past SP_ACCOUNT_FILES_PER_S */
	int unread_err;     /* the first such read's -errno */
	struct sp_account_figs sum;
};

/*
 * /proc files that exits read, at most this many a second (after a first
 * burst of as many): an exit reads two (schedstat and stat, some 10-20 us
 * in all: registry.c), or one when its thread's start is known (the
 * preload started it: account.c), which a program that starts and ends
 * thousands of threads a second would pay on each.  So 500 exits a second
 * are read, or 1,000 of threads the preload started.  Exits past the rate
 * are counted (skipped) and left out of the account, whose figures are
 * then those of the threads read.
 */
#define SP_ACCOUNT_FILES_PER_S 1000
/* 0: no account is kept (account=0): exits read nothing.  Set at
 * start-up by the runtime; relaxed loads. */
extern int sp_account_on;
uint64_t sp_boottime_ns(void);
/* Read thread @tid's schedstat and stat (this process): 0 or -errno
 * (-ENOENT: no such thread, or no schedstat; -EINVAL: unparsable).  With
 * @start_ns, the thread's exact start (not 0), stat is not read: its
 * start is that, and out->name is left empty.  Keeps errno; no
 * allocation, no lock.  Never call it on the lock path. */
int sp_sched_read(pid_t tid, uint64_t start_ns, struct sp_sched *out);
/* The calling thread's account without /proc, when it can be had so: it
 * never left its CPU since it began (no context switch,
 * getrusage(RUSAGE_THREAD)): 1, *@out filled but its name, its start
 * @start_ns (0: unknown) or its CPU time ago, the earlier.  0 else
 * (nothing filled).  Keeps errno. */
int sp_sched_self_unswitched(uint64_t start_ns, struct sp_sched *out);
/* Set by the preload's pthread_create() in each thread it starts, first
 * thing: CLOCK_BOOTTIME then; 0 in any other thread.  The thread's record
 * takes it at registration (sp_thread.start_ns). */
extern SP_TLS uint64_t sp_thread_start_ns;
/* "/proc/self/task/@tid/@leaf" into @buf (SP_TASK_PATH_MAX bytes with a
 * leaf of up to 16), without printf. */
#define SP_TASK_PATH_MAX 64
void sp_task_path(char *buf, pid_t tid, const char *leaf);
/* /proc/self/task/@tid/@leaf's first @size - 1 bytes, NUL-terminated:
 * their length, or -errno (errno itself changes). */
ssize_t sp_task_file(pid_t tid, const char *leaf, char *buf, size_t size);
/* Thread @tid's CPU time from its CPU clock; @fallback if unreadable. */
uint64_t sp_thread_cpu_ns(pid_t tid, uint64_t fallback);
/* @f from @s; without s->start_ns, @born_ns (0: unknown) bounds stat's
 * start from above. */
void sp_account_figures(const struct sp_sched *s, uint64_t born_ns, uint64_t sync_wait_ns,
			struct sp_account_figs *f);
void sp_account_figs_add(struct sp_account_figs *into, const struct sp_account_figs *f);
/* The waits of @t's entries but spinlocks' (which spin); relaxed loads,
 * so a report may read another thread's table. */
uint64_t sp_table_sync_wait(const struct sp_table *t);
/* "registry.c": under the registry lock, @live on each live record, then
 * @exited on each kept exited thread, oldest first; *@out the totals of
 * all exits.  Report path. */
void sp_registry_account(void (*live)(const struct sp_thread *t, void *arg),
			 void (*exited)(const struct sp_account_thread *a, void *arg), void *arg,
			 struct sp_account_retired *out);
/* Exits accounted so far (a relaxed load). */
uint64_t sp_registry_account_seq(void);

/* ---- "hist.c" --------------------------------------------------------- */

/* Add @count to bucket @b of the histogram *@slot of @t's entry, allocated
 * (and widened) as needed; 0, or -ENOMEM with nothing added (@t NULL:
 * nothing can be allocated).  Owner of @t only. */
int sp_hist_add__slowpath(struct sp_table *t, uintptr_t *slot, unsigned b, uint64_t count);
/* Any thread: the counts of the histogram *@slot into @out
 * (SP_HIST_BUCKETS of them); 0 when it has none yet, 1 otherwise. */
int sp_hist_read(const uintptr_t *slot, uint64_t *out);
/* Add the histogram *@from (of another table) into *@slot of @into's entry. */
int sp_hist_fold(struct sp_table *into, uintptr_t *slot, const uintptr_t *from);
void sp_hist_pool_destroy(struct sp_hist_pool *p);
/* Empty @p for a new owner (registry.c's reuse of a record): its newest
 * slab kept, zeroed where used, the others unmapped.  Owner only. */
int sp_hist_pool_reset(struct sp_hist_pool *p);
/* Owner of @t only: @size bytes of zeroed memory from @t's pool, kept
 * while @t lives (an entry's stack); NULL when out of memory. */
void *sp_table_alloc(struct sp_table *t, size_t size);


/* ---- "probe.c" -------------------------------------------------------- */

/* Slow paths shared by every probe (instrumented and interposed). */
struct sp_entry *sp_entry_lookup__slowpath(struct sp_thread *t, const struct sp_site *site,
					   uintptr_t obj, int op, int type);
void sp_entry_record_wait(struct sp_entry *e, uint64_t wait_ns, int acquired);
int sp_mutex_type(const void *mutex);
/* Before its unlock: SP_TYPE_RWLOCK_WRITE if the calling thread holds the
 * rwlock @l for writing, else SP_TYPE_RWLOCK_READ. */
int sp_rwlock_held_type(const void *l);
/* 1 when readers of the rwlock @l wait for a waiting writer (glibc's
 * PTHREAD_RWLOCK_PREFER_WRITER_NONRECURSIVE_NP), so that two read holds
 * can be part of a deadlock; 0 for glibc's default, reader-preferring. */
int sp_rwlock_readers_wait(const void *l);

/* ---- "wait_pub.c" ---------------------------------------------------- */

extern unsigned sp_watch_on; /* non-zero: contended waits publish themselves */
/* Contended slow path: publish / clear "waiting since t0 on obj at site"
 * (with frames=N, the entry's first wait also keeps its callers); @timed:
 * a lock wait with a deadline (timedlock, clocklock), which the deadlock
 * check tells apart - 0 for waits that have no holder to form a cycle. */
void sp_watch_begin(struct sp_thread *t, struct sp_entry *e, uint64_t t0, int mode, int timed);
/* Returns the root holder's site the watchdog saw for this wait (a wait
 * chain), or NULL. */
const struct sp_site *sp_watch_end(struct sp_thread *t, uint64_t wait_ns);
/*
 * The watchdog saw the wait @id of @t at the end of a chain whose root
 * holder took its lock at @root: remember it for blame (the watchdog's
 * thread only; the registry lock keeps @t).  Sites are interned in a
 * bounded table (SP_ROOT_SITES); past it, nothing is remembered, and
 * sp_root_sites_lost() counts it.
 */
void sp_watch_set_root(struct sp_thread *t, uint32_t id, const struct sp_site *root);
uint64_t sp_root_sites_lost(void);
/*
 * sp_hold_readers() - who holds the rwlock @obj for reading (the published
 * held lists of hold.c).  Any thread; lock-free.  Return 0 with *@tid and
 * *@site of one reading thread and *@n_threads the number of them, or
 * -ENOENT when no thread is known to read it (or hold tracking is off).
 */
int sp_hold_readers(uintptr_t obj, pid_t *tid, struct sp_site *site, unsigned *n_threads);
/*
 * A condition variable was signalled (@broadcast 0) or broadcast at @site:
 * remembered while the watchdog runs, for its warnings about condition
 * waits.  Any thread; lock-free, no allocation; one load when off.
 */
void sp_cond_signalled__slowpath(const void *cond, const struct sp_site *site, int broadcast);
/* The last (at most @max, 2 kept) distinct sites that signalled @cond, the
 * latest first, with whether each broadcast; 0 when none is known.  Any
 * thread; lock-free (a hint: a signal may be missing). */
unsigned sp_cond_signallers(const void *cond, struct sp_site *sites, int *broadcast, unsigned max);
/* ---- "hold.c" ---------------------------------------------------------- */

/*
 * Hold tracking (SYNCPROF_OPTIONS hold=1, syncprof run --hold).  Off, it
 * costs the probes one load and branch (sp_hold_is_on()).  Acquire/release are
 * called by the owning thread right after a successful acquisition and
 * right before the real unlock.
 */
/*
 * Hold tracking is on in this copy of the library: its tables exist.  Not
 * the flag word's hold bit, which is shared: a program that links
 * libsyncprof.a and runs under the preload library has two copies of
 * hold.c and one flag word (the executable's, through the GOT), and each
 * copy must still build its own tables (lockbench -M libc,plain under the
 * preload crashed when this was the shared bit).  Set with release order
 * once the tables are ready.
 */
extern int sp_hold_ready;

/*
 * Start hold tracking, timing 1 hold in @sample (1: all), @clock_policy
 * SP_HOLD_CLOCK_* (hold_clock=); start-up only.
 * @times 0: the published held lists only, which lock-order checking needs
 * (lock_order=1 without hold=1): no hold is timed, no waiter looks for
 * its holder to blame, and reports show no hold facts.
 * Return 0, or -ENOMEM (then the program runs on without it).
 */
int sp_hold_init(unsigned sample, int times, int clock_policy);
/* Hold times, owner changes and blame are recorded (hold=1), not only the
 * held lists. */
int sp_hold_times_are_on(void);
/* hold_sample=1: every hold is timed. */
int sp_hold_all_timed(void);
/* fork(): in the child (lifecycle's atfork handler). */
void sp_hold_fork_child(void);
void sp_hold_acquired(struct sp_thread *t, uintptr_t obj, int op, const struct sp_site *site);
void sp_hold_released(uintptr_t obj);
/* The same with the clock (sp_clock_ticks()) read at the unlock; 0: now. */
void sp_hold_released_at(uintptr_t obj, uint64_t now);
/* A contended wait acquired @obj (probe.c): its hold is timed, from now. */
void sp_hold_waited(uintptr_t obj);
/* The ramp (hold.c): @e - a live thread's entry, or the retired
 * aggregate's - has a sample; its key is noted when its acquisitions are
 * past the ramp (1; 0: not yet).  sp_hold_ramp_known(): whether a new
 * entry @e's key was noted. */
int sp_hold_ramp_done(const struct sp_entry *e);
int sp_hold_ramp_known(const struct sp_entry *e);
/*
 * The holds of one or more entries of the same key, from what hold.c
 * keeps (see the design block there), and what they add up to.
 *
 * sp_entry_hold_sums() adds an entry's to @s: the holds timed or bounded
 * exactly, the weighted sample of the rest, the acquisitions that were no
 * hold of their own, the largest hold, and the acquisitions (@acquisitions,
 * read by the caller with the rest of its row).  Any thread; relaxed reads
 * of the owner's counters.  Nothing for calls that hold nothing
 * (condition waits, semaphores, barriers, joins).
 *
 * sp_hold_sums_totals() - the holds and total hold time: the exact ones,
 * plus the rest - the acquisitions that were holds, less those - times the
 * mean of the sample, each sampled hold weighted by the holds it stands
 * for (hold.h, sp_hold_period()), and never below the largest hold seen.
 * So *ns <= *holds x max and max <= *ns, whatever the sample.  Holds in
 * progress (or whose holder died) count as short ones.  @all_timed
 * (hold_sample=1): every hold is timed, and only the ended ones count.
 *
 * The sums of a row's entries - every thread's, and the retired
 * aggregate's - are added before the totals are taken (collect.c): one
 * ratio over the row's whole sample, so that an entry need not have a
 * sample of its own (a thread's entry of a key whose row has one skips
 * the ramp: hold.c, "The ramp").
 */
struct sp_hold_sums {
	uint64_t exact_n, exact_ns, sample_n, sample_ns, nonholds, max, acquisitions;
};

static inline int sp_op_holds(int op)
{
	return op == SP_TYPE_MUTEX || op == SP_TYPE_RWLOCK_READ || op == SP_TYPE_RWLOCK_WRITE ||
	       op == SP_TYPE_SPINLOCK;
}

static inline void sp_entry_hold_sums(const struct sp_entry *e, uint64_t acquisitions,
				      struct sp_hold_sums *s)
{
	const struct sp_entry_cold *c;
	uint64_t max;

	if (!sp_op_holds(e->op))
		return;
	c = sp_entry_cold_r(e);
	s->exact_n += sp_load_relaxed(&c->hold_exact_n);
	s->exact_ns += sp_load_relaxed(&c->hold_exact_ns);
	s->sample_n += sp_load_relaxed(&c->hold_sample_n);
	s->sample_ns += sp_load_relaxed(&c->hold_sample_ns);
	s->nonholds += sp_load_relaxed(&c->hold_nonholds);
	s->acquisitions += acquisitions;
	max = sp_load_relaxed(&c->hold_max_ns);
	if (max > s->max)
		s->max = max;
}

static inline void sp_hold_sums_totals(const struct sp_hold_sums *s, int all_timed,
				       uint64_t *holds, uint64_t *ns)
{
	uint64_t n, rest, total = s->exact_ns;

	n = s->acquisitions > s->nonholds ? s->acquisitions - s->nonholds : 0;
	if (all_timed)
		n = s->exact_n + s->sample_n;
	rest = n > s->exact_n ? n - s->exact_n : 0;
	if (!rest && s->sample_n) /* read while a hold was being added */
		rest = 1;
	if (s->sample_n)
		total += (uint64_t)((unsigned __int128)s->sample_ns * rest / s->sample_n);
	/* The weighted mean of a sample can fall below its largest hold
	 * when few holds of the rest were timed, with weights of the
	 * entry's many acquisitions: the row is never below it. */
	if (total < s->max)
		total = s->max;
	*holds = s->exact_n + rest;
	*ns = total;
}
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
	const struct sp_site *root; /* root holder of a chain the watchdog saw */
};
void sp_wait_begin(uintptr_t obj, struct sp_wait_ctx *w);
void sp_wait_end(struct sp_entry *e, uint64_t wait_ns, const struct sp_wait_ctx *w);

/* Blame records: how long waiters at a site waited for holders that had
 * taken the lock at another site (hold.c). */
struct sp_blame_view {
	uint8_t type;
	uintptr_t obj;
	struct sp_site waiter, holder;
	struct sp_site root; /* zero: no chain seen */
	uint64_t wait_ns, count;
};
/* What hold tracking could not record, since start-up: acquisitions made
 * while more than SP_HELD_MAX locks were held (not hold-tracked), and
 * blame records that found the blame table full (their wait is still in
 * the row, but blamed on no one). */
/* Holds not tracked: more locks held at once than a list holds. */
uint64_t sp_hold_untracked(void);

/* ---- "hold_tick.c": the hold tick ---------------------------------------- */

/* hold_clock= (sp_hold_init()): how hold times are taken. */
enum {
	SP_HOLD_CLOCK_AUTO,  /* the ticker's tick, or the clock while holds are few */
	SP_HOLD_CLOCK_TICK,  /* the tick alone: the ticker wakes every 500 us */
	SP_HOLD_CLOCK_CLOCK, /* the clock at every hold: the ticker wakes every 10 ms */
};
/* Time spent in clock mode since start-up (ns), and the switches into it
 * and out (hold_tick.c). */
void sp_hold_clock_mode(uint64_t *ns, uint64_t *switches);

/* The ticker's call at each tick, @holding when something is held (the
 * hold states' sampler, sp_holdstate_tick(), which returns when its next
 * sample is due: clock mode ticks then); set before sp_hold_init(). */
void sp_hold_set_tick_hook(uint64_t (*hook)(uint64_t tick, int holding));
/* Ticks of the hold ticker that came more than 750 us after the previous
 * one while it was active, and the longest gap (ns); since start-up (a
 * reset keeps them: they qualify every hold time measured since). */
void sp_hold_ticker_lateness(uint64_t *late_ticks, uint64_t *gap_max_ns);
/* Nanoseconds since hold tick @tick was struck (0: unknown). */
uint64_t sp_hold_tick_age_ns(uint64_t tick);

/* ---- "holdstate.c": what the holders of long holds were doing ---------- */

/* The states of a long hold; then up to SP_HS_SYSCALLS system calls by
 * number ("syscall:NAME" in reports). */
enum sp_hs_class {
	SP_HS_RUNNING,   /* on a CPU */
	SP_HS_PREEMPTED, /* runnable, on a run queue */
	SP_HS_LOCK,      /* in a contended wait for another profiled lock */
	SP_HS_OTHER,     /* blocked outside a system call (page fault...), or unknown */
	SP_HS_FIXED
};
#define SP_HS_SYSCALLS 8
struct sp_holdstate_view {
	uint8_t type;
	uintptr_t obj;
	struct sp_site holder; /* where the lock was taken */
	uint64_t ns[SP_HS_FIXED];
	long sys_nr[SP_HS_SYSCALLS];
	uint64_t sys_ns[SP_HS_SYSCALLS];
	unsigned n_sys;
};
/* Long holds begin this many hold ticks after their acquisition (0:
 * states off); set at start-up from hold_states=MS. */
extern unsigned sp_holdstate_long_ticks;
/* With frames=N: 0 no points, 1 blocked holders' points, 2 running too. */
extern unsigned sp_holdstate_where;
/* The ticker, each tick (@holding: something is held): sample the holders
 * of long holds that are due; close the files kept open for threads no
 * longer sampled.  Reads /proc; never on a lock path.  Returns the time
 * (ns) until the next sample is due, 0 when no hold is long. */
uint64_t sp_holdstate_tick(uint64_t tick, int holding);
/* In a child of fork(): the files kept open for the parent's threads
 * closed (holdstate.c). */
void sp_holdstate_fork_child(void);
/* Every hold-state record, net of the last reset's snapshot, to @fn. */
void sp_holdstate_foreach(void (*fn)(const struct sp_holdstate_view *v, void *arg), void *arg);
void sp_holdstate_snapshot(void);
/* What thread @tid mostly did at the last sample of its long holds
 * ("blocked in fsync()", "running", "preempted ..."), into @buf, and for
 * how long (*@for_ns); -ENOENT when it holds nothing long or was not
 * sampled lately.  Any thread (the watchdog, ctl status). */
int sp_holdstate_now(pid_t tid, char *buf, size_t size, uint64_t *for_ns);
/* Each long hold now: its holder, lock, site, age and holder's state. */
struct sp_long_hold_now {
	pid_t tid;
	uintptr_t obj;
	uint8_t type;
	struct sp_site site;
	uint64_t held_ns, state_ns;
	char state[64];
};
void sp_holdstate_long_each(void (*fn)(const struct sp_long_hold_now *h, void *arg), void *arg);
/* Samples made, their total CPU time in the ticker (ns), and samples
 * whose /proc files could not be read (with the first -errno). */
void sp_holdstate_cost(uint64_t *samples, uint64_t *cpu_ns, uint64_t *unread, int *unread_err);
void sp_blame_foreach(void (*fn)(const struct sp_blame_view *b, void *arg), void *arg);
/* blame.c: its table, mapped at start-up before sp_hold_init() (the
 * runtime calls both); waits it could not keep; the reset's snapshot of
 * it, under report_lock. */
int sp_blame_init(void);
uint64_t sp_blame_lost(void);
void sp_blame_snapshot(void);

/* ---- "holdwhere.c": where in the critical section they were ----------- */

/* Where in the critical section (frames=N): the time of a record's long
 * holds at one point of the holder's code, in one class (@class:
 * SP_HS_RUNNING for running or runnable, SP_HS_OTHER, or SP_HS_FIXED with
 * @sys_nr a system call). */
struct sp_holdwhere_view {
	uint8_t type;
	uintptr_t obj;
	struct sp_site holder;
	uintptr_t pc;
	int class;
	long sys_nr;
	uint64_t ns;
};
void sp_holdstate_where_foreach(void (*fn)(const struct sp_holdwhere_view *v, void *arg),
				void *arg);
/* Points found, and samples that found none (their intervals are in the
 * hold states, not at a point), since start-up. */
void sp_holdstate_where_cost(uint64_t *points, uint64_t *dropped);

/* ---- "stack.c" --------------------------------------------------------- */

/* Warm the unwinder, compute the address ranges of lock wrappers (default
 * libraries, --skip regexes and DSO+0xLO-0xHI ranges) and the CFI rows of
 * the skipped ranges.  Start-up only (mallocs). */
/* Callers kept per contended interposed site (0: none); set by
 * sp_stack_init(). */
extern unsigned sp_stack_frames;
/* The skip regexes that matched no function at start-up: their count,
 * and the patterns in *@patterns. */
unsigned sp_stack_unmatched(const char *const **patterns);
void sp_stack_init(const char *const *skip, unsigned n_skip, unsigned frames,
		   unsigned skip_frames);
/* Stacks walked through learned CFI rows from now on (lock order with
 * frames=N): starts the learner thread (cfi.c); start-up only. */
void sp_stack_learn(void);
/* fork(), in the child: the learner thread is the parent's; the child's
 * own starts at its first walk that could use it. */
void sp_stack_fork_child(void);
/* Stack captures walked through learned rows, not unwound (tests). */
extern unsigned long sp_stack_walks_learned;
/* Sorted, disjoint [lo, hi) code ranges of lock wrappers; written at
 * start-up only, before sp_skip_n is published. */
struct sp_range {
	uintptr_t lo, hi;
};
#define SP_MAX_RANGES 4096
#define SP_STACK_MAX_SKIP 16 /* skip patterns at most */
extern struct sp_range sp_skip_ranges[SP_MAX_RANGES];
extern unsigned sp_skip_n;
/* --skip-frames N: callers above the interposed call's own caller that are
 * skipped before wrappers are (0: none); written at start-up only. */
extern unsigned sp_skip_frames;
/*
 * The interposed call as its shim saw it on entry: its return address
 * @ret, its CFA @cfa (the caller's stack pointer after the call returns:
 * __builtin_dwarf_cfa()) and the caller's frame pointer @fp (rbp, unchanged
 * by the shim).  From these and the CFI rows of the wrappers, stack.c
 * finds the caller of a wrapper without unwinding.
 */
uintptr_t sp_site_pc__slowpath(uintptr_t ret, uintptr_t cfa, uintptr_t fp);
/*
 * Return addresses already found outside every wrapper range, per thread,
 * direct-mapped: the ranges never change after start-up, so an address
 * checked once needs no binary search again (lockbench under the preload,
 * -m 1024: the search was ~7% of each call).
 */
#define SP_SITE_CACHE 64
extern SP_TLS uintptr_t sp_site_ok[SP_SITE_CACHE];
/*
 * Each entry is the address XOR this generation, which changes when what
 * lies outside the wrappers changes after start-up: the lock-library scan
 * (locklib.c), done at the first futex wait, may find that an address
 * already cached (a Rust program's join inside std, called before any
 * futex wait) is a library's.  Every thread's entries then miss once.
 */
extern uintptr_t sp_site_gen;
/* Its step flips high bits: an entry of one generation, XORed with
 * another, is no canonical user-space address, so never a false hit. */
#define SP_SITE_GEN_STEP ((uintptr_t)0xa5a5000000000000ull)
/* ---- "cxx_headers.c" --------------------------------------------------- */

/* The out-of-line copies of the C++ library's header code that lock, wait
 * or join (_M_try_lock_until<steady_clock>, _M_complete_async...) in the
 * loaded objects, each given to @add; returns how many.  Start-up only
 * (reads symbol tables, demangles: mallocs); stack.c skips them. */
unsigned sp_cxx_header_ranges(void (*add)(uintptr_t lo, uintptr_t hi));
/* sp_site_pc() where the caller's CFA is not known (the general path of
 * probe.c's _pc entry points): past the wrappers by unwinding, never by
 * their CFI rows; @ret itself, from the per-thread cache, when it lies
 * outside them. */
uintptr_t sp_site_pc_unwound(uintptr_t ret);
/* ---- "locklib.c" ------------------------------------------------------- */

/* Whether @pc lies in a lock library's code (Rust std, parking_lot,
 * Abseil...), as far as the once-per-process scan found. */
int sp_pc_in_locklib(uintptr_t pc);
/* The scan, now if not done yet (report time: rows recorded before it). */
void sp_locklib_scan(void);
/* At start-up: load libdw now when a loaded module may hold a lock
 * library, so that the first futex wait can scan in place. */
void sp_locklib_prepare(void);
/* The site of a futex call returning to @ret: the first caller outside
 * lock libraries and skipped wrappers.  Scans the symbol tables at its
 * first call (once per process); may unwind.  Not for the lock path. */
uintptr_t sp_locklib_site_pc(uintptr_t ret);

/* ---- "probe_futex.c" --------------------------------------------------- */

/* Whether syscall(@nr, addr, @op...) may sleep on a futex. */
int sp_futex_op_waits(long nr, long op);
/* syscall(@nr, @a[0..5]) of a futex call, profiled; @ra the return
 * address of syscall().  Returns what the real syscall() returns, with
 * its errno. */
long sp_probe_futex(long nr, const long *a, uintptr_t ra);
/* The site of the last wake that woke a waiter of the futex @word (with
 * hold tracking on: not kept otherwise): 1 and *@site, or 0 when none is
 * known.  Lock-free, any thread (the watchdog's). */
int sp_futex_last_waker(uintptr_t word, struct sp_site *site);

/*
 * Where a thread is in the program's own code, for the hold sampler
 * (holdstate.c, frames=N): the first of @frames (innermost first) outside
 * the runtime libraries, the lock wrappers and lock libraries, and
 * syncprof's own library; @frames[0] when all are; 0 when @n is 0.
 */
uintptr_t sp_stack_point(const uintptr_t *frames, unsigned n, int *exact);
/* (*@exact: 1 when the point is frames[0], the thread's own pc; 0 for a
 * return address.)  In a signal handler of the thread: the point of the
 * stack interrupted at @ip (sp_stack_point), from an unwind through the
 * signal frame. */
uintptr_t sp_stack_point_here(uintptr_t ip, int *exact);
/* The start of the function holding @pc (a return address unless @exact),
 * from the unwind tables (libgcc); @pc when unknown.  Not for signal
 * handlers (the first call looks libgcc up). */
uintptr_t sp_stack_function_of(uintptr_t pc, int exact);
/*
 * The stack of another thread of this process that is blocked in the
 * kernel with user @pc and @sp (/proc/self/task/TID/syscall), innermost
 * first, up to @max: unwound from the CFI (libdw) with its memory read by
 * process_vm_readv(), so a stack that changes meanwhile gives wrong
 * frames, never a fault.  Stops at a frame whose rule needs a register
 * the kernel did not say (rbp before any frame saved it).  Only one
 * thread (the hold ticker) may call it; 0 without libdw.  @to_program:
 * stop at the first frame in the program's code (sp_stack_point's).
 */
unsigned sp_stack_remote(uintptr_t pc, uintptr_t sp, uintptr_t *out, unsigned max, int to_program);
/* Callers of the current call above @site_pc, up to @max; 0 if unknown. */
unsigned sp_stack_capture(uintptr_t site_pc, uintptr_t *frames, unsigned max);
/* With frames=N, the first contended wait of interposed entry @e keeps
 * its callers (in @t's table, published by n_frames); later ones do not. */
void sp_entry_keep_stack(struct sp_thread *t, struct sp_entry *e);
/*
 * The two stacks of a lock-order edge, from one unwind: the callers of the
 * current call above @site_pc into @out (*@n of them, at most @max), and,
 * when the function that made the call at @held_pc (an earlier lock call
 * whose lock is still held) is on the current stack, its callers into
 * @held_out (*@n_held).  Functions are told apart by the unwinder's
 * enclosing-function lookup (libgcc); without it *@n_held is 0.
 */
void sp_stack_capture_edge(uintptr_t site_pc, uintptr_t held_pc, unsigned max, uintptr_t *out,
			   unsigned *n, uintptr_t *held_out, unsigned *n_held);

#endif /* SP_RECORD_RECORD_H */
