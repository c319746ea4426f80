/*
 * syncprof/instrument.h - compile-time instrumentation of lock calls.
 *
 * Include this header first in a translation unit, or better put
 * "-include syncprof/instrument.h" on the compiler command line so that no
 * source changes: every call to a pthread or C11 lock function below it is
 * redirected to the profiled version in libsyncprof, which records the call
 * site as __FILE__:__LINE__ (function __func__).  Link with -lsyncprof
 * (pkg-config --libs syncprof).  Works for static binaries too.
 *
 * Design: each wrapper is a static inline function that tests the exported
 * flags syncprof__enabled and, when profiling is off, calls the real function
 * directly.  Unlock calls go to the library only when something needs them
 * (SYNCPROF__UNLOCK_HOOKS: hold tracking, tracing, lock order), and so do
 * the init and destroy calls of locks, for lock order's sake
 * (syncprof_lock_forget()).  Off costs one load and one well-predicted
 * branch per call; no call into the library.  The real function is named in parentheses, which
 * suppresses expansion of the function-like macro of the same name.
 *
 * <pthread.h> (and <threads.h> for C) are included before the macros are
 * defined, so a later #include of them declares the real functions
 * unharmed.  Taking the address of a lock function (&pthread_mutex_lock)
 * is not redirected: only calls are.  Define SYNCPROF_NO_INSTRUMENT before
 * including to get nothing.
 */
#ifndef SYNCPROF_INSTRUMENT_H
#define SYNCPROF_INSTRUMENT_H

#ifndef SYNCPROF_NO_INSTRUMENT

#include <syncprof.h>

#if !defined(__cplusplus) && defined(__has_include)
#if __has_include(<threads.h>) && !defined(__STDC_NO_THREADS__)
#include <threads.h>
#define SYNCPROF__HAVE_C11_THREADS 1
#endif
#endif

#if defined(__GNUC__)
#define SYNCPROF__UNLIKELY(x) __builtin_expect(!!(x), 0)
#define SYNCPROF__INLINE static inline __attribute__((always_inline, unused))
#else
#define SYNCPROF__UNLIKELY(x) (x)
#define SYNCPROF__INLINE static inline
#endif

#define SYNCPROF__SITE __FILE__, __LINE__, __func__

/* The flags, read with a relaxed atomic load: the API writes them from
 * other threads.  On x86-64 and AArch64 this is one plain load. */
#if defined(__GNUC__)
#define SYNCPROF__FLAGS() __atomic_load_n(&syncprof__enabled, __ATOMIC_RELAXED)
#else
#define SYNCPROF__FLAGS() (*(volatile int *)&syncprof__enabled)
#endif

SYNCPROF__INLINE int syncprof__mutex_lock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_mutex_lock)(m);
	return syncprof_mutex_lock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__mutex_trylock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_mutex_trylock)(m);
	return syncprof_mutex_trylock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__mutex_timedlock(pthread_mutex_t *m, const struct timespec *t,
					       SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_mutex_timedlock)(m, t);
	return syncprof_mutex_timedlock(m, t, file, line, func);
}

SYNCPROF__INLINE int syncprof__mutex_unlock(pthread_mutex_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & SYNCPROF__UNLOCK_HOOKS))
		return (pthread_mutex_unlock)(m);
	return syncprof_mutex_unlock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__cond_wait(pthread_cond_t *c, pthread_mutex_t *m,
					 SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_cond_wait)(c, m);
	return syncprof_cond_wait(c, m, file, line, func);
}

SYNCPROF__INLINE int syncprof__cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					      const struct timespec *t, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_cond_timedwait)(c, m, t);
	return syncprof_cond_timedwait(c, m, t, file, line, func);
}

#define SYNCPROF__RW(op, mask)                                                    \
	SYNCPROF__INLINE int syncprof__rwlock_##op(pthread_rwlock_t *l,           \
						   SYNCPROF_SITE_PARAMS)          \
	{                                                                         \
		if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & (mask)))              \
			return (pthread_rwlock_##op)(l);                          \
		return syncprof_rwlock_##op(l, file, line, func);                 \
	}
SYNCPROF__RW(rdlock, ~0)
SYNCPROF__RW(wrlock, ~0)
SYNCPROF__RW(tryrdlock, ~0)
SYNCPROF__RW(trywrlock, ~0)
SYNCPROF__RW(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__RW

SYNCPROF__INLINE int syncprof__rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t,
						  SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_rwlock_timedrdlock)(l, t);
	return syncprof_rwlock_timedrdlock(l, t, file, line, func);
}

SYNCPROF__INLINE int syncprof__rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t,
						  SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_rwlock_timedwrlock)(l, t);
	return syncprof_rwlock_timedwrlock(l, t, file, line, func);
}

#define SYNCPROF__SPIN(op, mask)                                                  \
	SYNCPROF__INLINE int syncprof__spin_##op(pthread_spinlock_t *s,           \
						 SYNCPROF_SITE_PARAMS)            \
	{                                                                         \
		if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & (mask)))              \
			return (pthread_spin_##op)(s);                            \
		return syncprof_spin_##op(s, file, line, func);                   \
	}
SYNCPROF__SPIN(lock, ~0)
SYNCPROF__SPIN(trylock, ~0)
SYNCPROF__SPIN(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__SPIN

/*
 * Initialisation and destruction: lock-order checking forgets the lock
 * (syncprof_lock_forget()), so that a lock made later at the same address
 * does not inherit its edges.  Only while unlock hooks are on (lock order
 * turns them on).
 */
#define SYNCPROF__FORGET(l)                                                       \
	do {                                                                      \
		if (SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & SYNCPROF__UNLOCK_HOOKS)) \
			syncprof_lock_forget(l);                                  \
	} while (0)

SYNCPROF__INLINE int syncprof__mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	SYNCPROF__FORGET(m);
	return (pthread_mutex_init)(m, a);
}

SYNCPROF__INLINE int syncprof__mutex_destroy(pthread_mutex_t *m)
{
	int rc = (pthread_mutex_destroy)(m);

	if (!rc)
		SYNCPROF__FORGET(m);
	return rc;
}

SYNCPROF__INLINE int syncprof__rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a)
{
	SYNCPROF__FORGET(l);
	return (pthread_rwlock_init)(l, a);
}

SYNCPROF__INLINE int syncprof__rwlock_destroy(pthread_rwlock_t *l)
{
	int rc = (pthread_rwlock_destroy)(l);

	if (!rc)
		SYNCPROF__FORGET(l);
	return rc;
}

SYNCPROF__INLINE int syncprof__spin_init(pthread_spinlock_t *s, int pshared)
{
	SYNCPROF__FORGET((const void *)s);
	return (pthread_spin_init)(s, pshared);
}

SYNCPROF__INLINE int syncprof__spin_destroy(pthread_spinlock_t *s)
{
	int rc = (pthread_spin_destroy)(s);

	if (!rc)
		SYNCPROF__FORGET((const void *)s);
	return rc;
}

#define pthread_mutex_init(m, a) syncprof__mutex_init((m), (a))
#define pthread_mutex_destroy(m) syncprof__mutex_destroy(m)
#define pthread_rwlock_init(l, a) syncprof__rwlock_init((l), (a))
#define pthread_rwlock_destroy(l) syncprof__rwlock_destroy(l)
#define pthread_spin_init(s, p) syncprof__spin_init((s), (p))
#define pthread_spin_destroy(s) syncprof__spin_destroy(s)
#define pthread_mutex_lock(m) syncprof__mutex_lock((m), SYNCPROF__SITE)
#define pthread_mutex_trylock(m) syncprof__mutex_trylock((m), SYNCPROF__SITE)
#define pthread_mutex_timedlock(m, t) syncprof__mutex_timedlock((m), (t), SYNCPROF__SITE)
#define pthread_mutex_unlock(m) syncprof__mutex_unlock((m), SYNCPROF__SITE)
#define pthread_cond_wait(c, m) syncprof__cond_wait((c), (m), SYNCPROF__SITE)
#define pthread_cond_timedwait(c, m, t) syncprof__cond_timedwait((c), (m), (t), SYNCPROF__SITE)
#define pthread_rwlock_rdlock(l) syncprof__rwlock_rdlock((l), SYNCPROF__SITE)
#define pthread_rwlock_wrlock(l) syncprof__rwlock_wrlock((l), SYNCPROF__SITE)
#define pthread_rwlock_tryrdlock(l) syncprof__rwlock_tryrdlock((l), SYNCPROF__SITE)
#define pthread_rwlock_trywrlock(l) syncprof__rwlock_trywrlock((l), SYNCPROF__SITE)
#define pthread_rwlock_timedrdlock(l, t) syncprof__rwlock_timedrdlock((l), (t), SYNCPROF__SITE)
#define pthread_rwlock_timedwrlock(l, t) syncprof__rwlock_timedwrlock((l), (t), SYNCPROF__SITE)
#define pthread_rwlock_unlock(l) syncprof__rwlock_unlock((l), SYNCPROF__SITE)
#define pthread_spin_lock(s) syncprof__spin_lock((s), SYNCPROF__SITE)
#define pthread_spin_trylock(s) syncprof__spin_trylock((s), SYNCPROF__SITE)
#define pthread_spin_unlock(s) syncprof__spin_unlock((s), SYNCPROF__SITE)

#ifdef SYNCPROF__HAVE_C11_THREADS
SYNCPROF__INLINE int syncprof__mtx_lock(mtx_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (mtx_lock)(m);
	return syncprof_mtx_lock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__mtx_trylock(mtx_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (mtx_trylock)(m);
	return syncprof_mtx_trylock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__mtx_timedlock(mtx_t *restrict m, const struct timespec *restrict t,
					     SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (mtx_timedlock)(m, t);
	return syncprof_mtx_timedlock(m, t, file, line, func);
}

SYNCPROF__INLINE int syncprof__mtx_unlock(mtx_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & SYNCPROF__UNLOCK_HOOKS))
		return (mtx_unlock)(m);
	return syncprof_mtx_unlock(m, file, line, func);
}

SYNCPROF__INLINE int syncprof__cnd_wait(cnd_t *c, mtx_t *m, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (cnd_wait)(c, m);
	return syncprof_cnd_wait(c, m, file, line, func);
}

SYNCPROF__INLINE int syncprof__cnd_timedwait(cnd_t *restrict c, mtx_t *restrict m,
					     const struct timespec *restrict t, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (cnd_timedwait)(c, m, t);
	return syncprof_cnd_timedwait(c, m, t, file, line, func);
}

SYNCPROF__INLINE int syncprof__mtx_init(mtx_t *m, int type)
{
	SYNCPROF__FORGET(m);
	return (mtx_init)(m, type);
}

SYNCPROF__INLINE void syncprof__mtx_destroy(mtx_t *m)
{
	(mtx_destroy)(m);
	SYNCPROF__FORGET(m);
}

#define mtx_init(m, t) syncprof__mtx_init((m), (t))
#define mtx_destroy(m) syncprof__mtx_destroy(m)
#define mtx_lock(m) syncprof__mtx_lock((m), SYNCPROF__SITE)
#define mtx_trylock(m) syncprof__mtx_trylock((m), SYNCPROF__SITE)
#define mtx_timedlock(m, t) syncprof__mtx_timedlock((m), (t), SYNCPROF__SITE)
#define mtx_unlock(m) syncprof__mtx_unlock((m), SYNCPROF__SITE)
#define cnd_wait(c, m) syncprof__cnd_wait((c), (m), SYNCPROF__SITE)
#define cnd_timedwait(c, m, t) syncprof__cnd_timedwait((c), (m), (t), SYNCPROF__SITE)
#endif /* SYNCPROF__HAVE_C11_THREADS */

#endif /* SYNCPROF_NO_INSTRUMENT */
#endif /* SYNCPROF_INSTRUMENT_H */
