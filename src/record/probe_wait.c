/*
 * probe_wait.c - the profiled blocking calls beyond the locks of probe.c:
 * the clock variants of the timed calls (pthread_mutex_clocklock,
 * pthread_cond_clockwait, pthread_rwlock_clockrdlock/clockwrlock), the
 * semaphore waits (sem_wait, sem_trywait, sem_timedwait, sem_clockwait),
 * barriers (pthread_barrier_wait) and joins (pthread_join, thrd_join,
 * pthread_timedjoin_np, pthread_clockjoin_np);
 * and sp_probe_waited(), the end of every barrier and join wait, which the
 * preload library shares.
 *
 * Design.  The clock calls are their timed siblings with a clock: the same
 * probe, the same types (mutex, condvar, rwlock_read/_write), the same
 * hold tracking; their sp_lock_ops get the clock through a struct
 * sp_clock_deadline (probe.h).  glibc rejects a clock other than
 * CLOCK_REALTIME and CLOCK_MONOTONIC (and, for rwlocks, a bad tv_nsec)
 * before it looks at the lock, so such calls go to the real function
 * alone: the probe's try must not take a free lock that glibc would not.
 *
 * A semaphore wait is a lock acquisition without an owner: tried first
 * with sem_trywait(), contended when that found the count 0 (EAGAIN), and
 * then the real blocking call is timed.  Semaphores are not hold-tracked:
 * any thread may post, so there is no hold to end and no one to blame.
 * The calls report errors in errno; sp_sem_result() (probe.h) keeps errno
 * as the real call alone would leave it.
 *
 * A barrier wait and a join always wait (until the last thread arrives,
 * until the thread ends): the whole call is timed and counted as
 * contended, like a condition wait (SP_PROBE_WAIT, probe.h), and the
 * real call's value is returned as it is - PTHREAD_BARRIER_SERIAL_THREAD
 * for one of the barrier's threads, EDEADLK for a join of oneself.  The
 * object of a join is the thread joined (its pthread_t).  A join with a
 * deadline (pthread_timedjoin_np, pthread_clockjoin_np) is a join that
 * may end with ETIMEDOUT: still a wait, as long as the deadline; a clock
 * glibc rejects is answered by glibc alone (EINVAL at once: no wait to
 * record).  pthread_tryjoin_np never blocks (EBUSY while the thread
 * runs): it is left alone, as sem_post is - a join row is time spent
 * blocked, and a poll costs none; counting each poll as a contended
 * acquisition would fill the row with calls that waited for nothing.
 *
 * Alternatives considered: widening sp_lock_ops' lock() with a clock
 * argument would change every adapter and the probe's hot path
 * signatures for calls that rarely run; a thread-local "current clock"
 * would be state outside the call, wrong under a signal handler that
 * locks.
 */
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <threads.h>

#include "probe.h"

/* ---- the end of a barrier or join wait ---------------------------------- */

SP_NOINLINE void sp_probe_waited(struct sp_entry *e, void *obj, int op, const struct sp_site *site,
				 uint64_t wait_ns)
{
	if (e) {
		sp_entry_record_wait(e, wait_ns, 1);
		sp_wait_end(e, wait_ns, NULL); /* frames */
	}
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		sp_trace_wait_end(-1, obj, op, site, wait_ns, 1);
}

/* ---- adapters from the real calls to the probe's signatures ------------ */


/* The ops: probe.h (one set for every build). */

#define OFF SP_PROFILING_OFF() /* base/flags.h */

/* ---- the profiled calls, each given its site ---------------------------- */

static SP_ALWAYS_INLINE int do_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
					       const struct timespec *abstime,
					       const struct sp_site *site)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (OFF || sp_clock_invalid(clock)) /* EINVAL, without a try */
		return SP_REAL(pthread_mutex_clocklock)(m, clock, abstime);
	sp_probe_order_before(m, SP_TYPE_MUTEX, site);
	return sp_probe_held(sp_probe_lock(m, SP_TYPE_MUTEX, &mutex_clock_ops, SP_CLOCK_ARG(&d),
					   site),
			     0, m, SP_TYPE_MUTEX, site);
}

static SP_ALWAYS_INLINE int do_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m,
					      clockid_t clock, const struct timespec *abstime,
					      const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_cond_clockwait)(c, m, clock, abstime);
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, site, (sp_probe_cond_release(m),
				  SP_REAL(pthread_cond_clockwait)(c, m, clock, abstime))), site);
}

/* glibc: EINVAL for a bad clock or tv_nsec, before it looks at the lock
 * (abstime is declared nonnull). */
static SP_ALWAYS_INLINE int rwlock_clock_invalid(clockid_t clock, const struct timespec *abstime)
{
	return sp_clock_invalid(clock) || sp_rwlock_abstime_invalid(abstime);
}

static SP_ALWAYS_INLINE int do_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
						  const struct timespec *abstime,
						  const struct sp_site *site)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (OFF || rwlock_clock_invalid(clock, abstime))
		return SP_REAL(pthread_rwlock_clockrdlock)(l, clock, abstime);
	sp_probe_order_before(l, SP_TYPE_RWLOCK_READ, site);
	return sp_probe_held(sp_probe_lock(l, SP_TYPE_RWLOCK_READ, &rd_clock_ops,
					   SP_CLOCK_ARG(&d), site),
			     0, l, SP_TYPE_RWLOCK_READ, site);
}

static SP_ALWAYS_INLINE int do_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
						  const struct timespec *abstime,
						  const struct sp_site *site)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (OFF || rwlock_clock_invalid(clock, abstime))
		return SP_REAL(pthread_rwlock_clockwrlock)(l, clock, abstime);
	sp_probe_order_before(l, SP_TYPE_RWLOCK_WRITE, site);
	return sp_probe_held(sp_probe_lock(l, SP_TYPE_RWLOCK_WRITE, &wr_clock_ops,
					   SP_CLOCK_ARG(&d), site),
			     0, l, SP_TYPE_RWLOCK_WRITE, site);
}

static SP_ALWAYS_INLINE int do_sem_wait(sem_t *s, const struct sp_site *site)
{
	int saved = errno;

	if (OFF)
		return SP_REAL(sem_wait)(s);
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_ops, NULL, site), saved);
}

static SP_ALWAYS_INLINE int do_sem_trywait(sem_t *s, const struct sp_site *site)
{
	int saved = errno;

	if (OFF)
		return SP_REAL(sem_trywait)(s);
	return sp_sem_result(sp_probe_trylock(s, SP_TYPE_SEMAPHORE, &sem_ops, site), saved);
}

static SP_ALWAYS_INLINE int do_sem_timedwait(sem_t *s, const struct timespec *abstime,
					     const struct sp_site *site)
{
	int saved = errno;

	if (OFF || sp_sem_abstime_invalid(abstime))
		return SP_REAL(sem_timedwait)(s, abstime);
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_timed_ops, abstime, site),
			     saved);
}

static SP_ALWAYS_INLINE int do_sem_clockwait(sem_t *s, clockid_t clock,
					     const struct timespec *abstime,
					     const struct sp_site *site)
{
	const struct sp_clock_deadline d = { abstime, clock };
	int saved = errno;

	if (OFF || sp_clock_invalid(clock) || sp_sem_abstime_invalid(abstime))
		return SP_REAL(sem_clockwait)(s, clock, abstime);
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_clock_ops, SP_CLOCK_ARG(&d),
					   site),
			     saved);
}

static SP_ALWAYS_INLINE int do_barrier_wait(pthread_barrier_t *b, const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_barrier_wait)(b);
	return SP_PROBE_WAIT(b, SP_TYPE_BARRIER, site, SP_REAL(pthread_barrier_wait)(b));
}

static SP_ALWAYS_INLINE int do_join(pthread_t th, void **retval, const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_join)(th, retval);
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, site, SP_REAL(pthread_join)(th, retval));
}

static SP_ALWAYS_INLINE int do_thrd_join(thrd_t th, int *res, const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(thrd_join)(th, res);
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, site, SP_REAL(thrd_join)(th, res));
}

static SP_ALWAYS_INLINE int do_timedjoin_np(pthread_t th, void **retval,
					    const struct timespec *abstime,
					    const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_timedjoin_np)(th, retval, abstime);
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, site, SP_REAL(pthread_timedjoin_np)(th, retval, abstime));
}

static SP_ALWAYS_INLINE int do_clockjoin_np(pthread_t th, void **retval, clockid_t clock,
					    const struct timespec *abstime,
					    const struct sp_site *site)
{
	if (OFF || sp_clock_invalid(clock)) /* EINVAL at once */
		return SP_REAL(pthread_clockjoin_np)(th, retval, clock, abstime);
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, site,
			     SP_REAL(pthread_clockjoin_np)(th, retval, clock, abstime));
}

/* ---- public entry points (as in probe.c) -------------------------------- */


/* libstdc++'s headers call these (std::timed_mutex::try_lock_for,
 * std::condition_variable::wait_for, std::shared_timed_mutex): _pc too. */
SP_ENTRIES(mutex_clocklock, (pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime),
	   (m, clock, abstime))
SP_ENTRIES(cond_clockwait, (pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			    const struct timespec *abstime), (c, m, clock, abstime))
SP_ENTRIES(rwlock_clockrdlock, (pthread_rwlock_t *l, clockid_t clock,
				const struct timespec *abstime), (l, clock, abstime))
SP_ENTRIES(rwlock_clockwrlock, (pthread_rwlock_t *l, clockid_t clock,
				const struct timespec *abstime), (l, clock, abstime))
SP_ENTRY_NAMED(sem_wait, (sem_t *s), (s))
SP_ENTRY_NAMED(sem_trywait, (sem_t *s), (s))
SP_ENTRY_NAMED(sem_timedwait, (sem_t *s, const struct timespec *abstime), (s, abstime))
SP_ENTRY_NAMED(sem_clockwait, (sem_t *s, clockid_t clock, const struct timespec *abstime),
	       (s, clock, abstime))
SP_ENTRY_NAMED(barrier_wait, (pthread_barrier_t *b), (b))
SP_ENTRY_NAMED(join, (pthread_t th, void **retval), (th, retval))
SP_ENTRY_NAMED(timedjoin_np, (pthread_t th, void **retval, const struct timespec *abstime),
	       (th, retval, abstime))
SP_ENTRY_NAMED(clockjoin_np, (pthread_t th, void **retval, clockid_t clock,
			      const struct timespec *abstime), (th, retval, clock, abstime))
/* C11 <threads.h>: C only (opaque thrd_t as in syncprof.h). */
SP_ENTRY_NAMED(thrd_join, (unsigned long th, int *res), ((thrd_t)th, res))
#undef SP_ENTRIES
#undef SP_ENTRY_PC
#undef SP_ENTRIES_RAW
#undef SP_ENTRY_PC_RAW
#undef SP_ENTRY_NAMED
#undef SP_UNPAREN
