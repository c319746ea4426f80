/*
 * types.h - the vocabulary every layer shares: lock types, call sites,
 * the wait histogram's buckets.  Private to libsyncprof and the tools.
 */
#ifndef SP_BASE_TYPES_H
#define SP_BASE_TYPES_H

#include <stdint.h>

/* Lock types as reported (the "type" of a row).  The numbers are in trace
 * files (docs/trace-format.md): new types go at the end. */
enum sp_type {
	SP_TYPE_MUTEX = 0,
	SP_TYPE_REC_MUTEX,
	SP_TYPE_CONDVAR,
	SP_TYPE_RWLOCK_READ,
	SP_TYPE_RWLOCK_WRITE,
	SP_TYPE_SPINLOCK,
	/* Waits that acquire nothing that is held: no hold tracking, no owner. */
	SP_TYPE_SEMAPHORE, /* sem_wait & co.: contended when the count was 0 */
	SP_TYPE_BARRIER,   /* pthread_barrier_wait: always a wait */
	SP_TYPE_JOIN,      /* pthread_join, thrd_join: always a wait */
	/* Locks that never call pthread, seen where they wait. */
	SP_TYPE_FUTEX,      /* a futex wait through libc's syscall(): Rust std,
			     * parking_lot, Abseil, folly, TBB */
	SP_TYPE_GLIBC_LOCK, /* glibc's internal locks (stdio FILE, malloc
			     * arenas, other __libc_lock), on their slow path */
	SP_TYPE_COUNT
};
/* "rwlock_read", ...; "?" for a number that is no type (base/types.c). */
const char *sp_type_name(int type);

/*
 * The kind of a type: a lock that some thread holds while others wait
 * (mutex, rwlock, spinlock, futex, glibc lock), or a wait for an event
 * that no single holder ends (condition, semaphore, barrier, join).
 * Reports lead with locks.
 */
static inline int sp_type_is_lock(int type)
{
	return (type >= SP_TYPE_MUTEX && type <= SP_TYPE_SPINLOCK && type != SP_TYPE_CONDVAR) ||
	       type == SP_TYPE_FUTEX || type == SP_TYPE_GLIBC_LOCK;
}
/* Whether a hold of this type can be timed: not for futex and glibc locks,
 * whose uncontended acquisitions make no call (reports print unknown). */
static inline int sp_type_hold_known(int type)
{
	return type != SP_TYPE_FUTEX && type != SP_TYPE_GLIBC_LOCK;
}
/* "lock" or "event". */
static inline const char *sp_type_kind(int type)
{
	return sp_type_is_lock(type) ? "lock" : "event";
}
/* What an rwlock unlock passes to sp_probe_released(): the mode it releases
 * is found there, only when a trace event needs it; never recorded. */
#define SP_TYPE_RWLOCK_UNLOCK SP_TYPE_COUNT

/*
 * Histograms of waits and holds (record/hist.c, report/profile.h):
 * log-linear buckets, as HdrHistogram's: SP_HIST_SUB per power of two, so
 * that a bucket is at most 1/8 of its lower bound wide.  0..15 ns have a
 * bucket each; a value v with its top bit at e >= 4 (2^e <= v < 2^(e+1))
 * goes to bucket 8 * (e - 3) + m, where m = v >> (e - 3) (its top bit and
 * the 3 bits below it, 8..15), which holds [m * 2^(e-3), (m + 1) * 2^(e-3)).
 * The last bucket, 303, is [15 * 2^36, 2^40) ns (2^40 ns is about 18
 * minutes) and takes everything longer too.  Uncontended acquisitions wait 0 and
 * are not stored: they are acquisitions minus the sum of the buckets.
 */
#define SP_HIST_SUB_BITS 3
#define SP_HIST_SUB (1u << SP_HIST_SUB_BITS)
#define SP_HIST_RANGE_BITS 40 /* values below 2^40 ns are told apart */
#define SP_HIST_BUCKETS ((SP_HIST_RANGE_BITS - SP_HIST_SUB_BITS + 1) * SP_HIST_SUB)
_Static_assert(SP_HIST_BUCKETS == 304, "the layout docs/formats.md describes");

/*
 * The log2 histogram of profile JSON's "wait_hist" and "hold_hist", and of
 * the histograms before the log-linear ones: bucket k counts values v with
 * 2^k <= v < 2^(k+1) ns (bucket 0 also v < 1; the last, everything
 * longer).  Every log-linear bucket lies inside one of them.
 */
#define SP_LOG2_BUCKETS 40

/* Most frames kept per entry for contended waits (interposed sites). */
#define SP_MAX_FRAMES 16

/* Most edges in a lock-order cycle (record/lockorder.c finds no longer
 * ones; a saved profile holds none). */
#define SP_MAX_CYCLE_EDGES 16

/* Identity of a call site, as the probe sees it. */
struct sp_site {
	const char *file; /* instrumented: __FILE__; NULL when interposed */
	const char *func; /* instrumented: __func__; NULL when interposed */
	uintptr_t pc;     /* interposed: return address; 0 when instrumented */
	uint32_t line;    /* instrumented: __LINE__; 0 when interposed */
};

/* Lock names (record/lockname.c): at most SP_LOCK_NAME_MAX - 1 bytes are
 * kept of a name; how the creation site of a lock was learnt. */
#define SP_LOCK_NAME_MAX 64
enum sp_lock_created { SP_CREATED_UNKNOWN, SP_CREATED_INIT, SP_CREATED_USE };

/* The bucket of a value of @ns nanoseconds. */
static inline unsigned sp_hist_bucket(uint64_t ns)
{
	unsigned s;

	if (ns < 2 * SP_HIST_SUB)
		return (unsigned)ns;
	s = 63u - (unsigned)__builtin_clzll(ns) - SP_HIST_SUB_BITS;
	if (s >= SP_HIST_RANGE_BITS - SP_HIST_SUB_BITS)
		return SP_HIST_BUCKETS - 1;
	return (s << SP_HIST_SUB_BITS) + (unsigned)(ns >> s);
}

/* The smallest value of bucket @b (< SP_HIST_BUCKETS). */
static inline uint64_t sp_hist_lower(unsigned b)
{
	unsigned s;

	if (b < 2 * SP_HIST_SUB)
		return b;
	s = (b >> SP_HIST_SUB_BITS) - 1;
	return (uint64_t)(b - (s << SP_HIST_SUB_BITS)) << s;
}

/* The largest value of bucket @b, the last one's taken as 2^40 - 1 ns. */
static inline uint64_t sp_hist_upper(unsigned b)
{
	return b + 1 < SP_HIST_BUCKETS ? sp_hist_lower(b + 1) - 1
				       : (1ull << SP_HIST_RANGE_BITS) - 1;
}

/* The log2 bucket that log-linear bucket @b lies in. */
static inline unsigned sp_hist_log2(unsigned b)
{
	uint64_t lo = sp_hist_lower(b);

	return lo ? 63u - (unsigned)__builtin_clzll(lo) : 0;
}

/* Where a count of log2 bucket @k is put when an old profile is read: the
 * log-linear bucket of the log2 bucket's largest value, 2^(k+1) - 1. */
static inline unsigned sp_hist_from_log2(unsigned k)
{
	return sp_hist_bucket((2ull << (k < SP_LOG2_BUCKETS ? k : SP_LOG2_BUCKETS - 1)) - 1);
}


/* A total order of sites: address first (the one key of an interposed
 * site, live or read back), then file, line, function by content
 * (types.c).  Sorts that must give the same order live and from a saved
 * profile use it. */
int sp_site_cmp(const struct sp_site *a, const struct sp_site *b);

#endif /* SP_BASE_TYPES_H */
