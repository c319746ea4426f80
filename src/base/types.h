/*
 * types.h - the vocabulary every layer shares: lock types, call sites,
 * the wait histogram's buckets.  Private to libsyncprof and the tools.
 */
#ifndef SP_BASE_TYPES_H
#define SP_BASE_TYPES_H

#include <stdint.h>

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

static inline unsigned sp_hist_bucket(uint64_t ns)
{
	unsigned b = ns ? 63u - (unsigned)__builtin_clzll(ns) : 0;
	return b < SP_HIST_BUCKETS ? b : SP_HIST_BUCKETS - 1;
}

/* "rwlock_read", ...; "?" for a number that is no type (types.c). */
const char *sp_type_name(int type);

#endif /* SP_BASE_TYPES_H */
