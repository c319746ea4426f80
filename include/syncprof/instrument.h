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
 * the init and destroy calls of locks while profiling is on, for
 * creation sites and lock order's sake (syncprof_lock_created()).  Off
 * costs one load and one well-predicted branch per call; no call into the
 * library.  The real function is named in parentheses, which suppresses
 * expansion of the function-like macro of the same name.
 *
 * Profiling alone on, a blocking acquisition (mutex, rwlock, spinlock, C11
 * mtx) takes the library's fast path inline (SYNCPROF__FAST): the entry of
 * (lock, site) in the thread's home slots (syncprof__home, syncprof.h),
 * the lock tried, the count.  Compiled in, condloop's lock+unlock went
 * from 111 to 99 instructions (glibc alone: 66), and with 1024 locks from
 * 137 to 109 (77); docs/cost.md.  The price is a view of the library's
 * entry in the public header, which the library checks field by field at
 * build time (src/record/record.h): a change of that layout is a change
 * of the library's ABI (its SONAME), as for any inline code.
 * Alternatives: a site key of one word (a static struct per call site:
 * two compares where there are four, but a statement expression in every
 * macro, and the library keys sites by file and line); the library's path
 * alone (one call and ~12 instructions more per acquisition).
 *
 * C++: libstdc++ makes its pthread calls inside inline functions of its
 * headers (__gthread_mutex_lock in gthr-default.h, __glibcxx_rwlock_rdlock
 * in <shared_mutex>), where __FILE__ and __LINE__ name the header, so every
 * std::mutex of a program would be one row.  A call made inside a system
 * header goes to the library's _pc twin instead, whose site is its return
 * address: the header's functions are inlined into the program's function
 * (mostly, at -O1 and above), so that address is in the program's code,
 * and the report names it from debug info - the program's file:line and
 * function, the inlined header frames skipped (src/report/symbolize.c).
 * Where the compiler keeps a header function out of line (a template in
 * cold code or main() at -O2, every one at -O0, a virtual one always),
 * the address lies in that copy, which every caller shares; the library
 * then takes the first caller outside such copies, found at start-up
 * from the program's symbol table (src/record/cxx_headers.c).  Which calls
 * are "inside a system header" is decided at compile time, per call site,
 * as a constant (SYNCPROF__SYSTEM_SITE): C code, and C++ calls in the
 * program's own files, compile to exactly what they did before.  The test:
 * the file lies under /usr/include/, /usr/lib/gcc/ or /usr/lib/llvm-, or
 * the function's name is reserved to the implementation ("__x", "_X"), as
 * every libstdc++ and libc++ wrapper's is (clang names libstdc++'s headers
 * "/usr/bin/../lib/gcc/...", which only the second test catches).
 * docs/instrument.md says what C++ programs get, and what they do not.
 *
 * Alternatives considered: deciding at run time whether __FILE__ is a
 * system header (a string test per call, or a flag per entry tested on
 * every call: cost on C sites too); keying every C++ site by its return
 * address (the program's own pthread calls would then need debug info
 * and libdw to be named, where __FILE__ names them for free); unwinding
 * at each such call to the first frame outside the headers (glibc's
 * backtrace() of a 9-frame stack: ~1.5 us here, per lock call).
 *
 * <pthread.h> (and <threads.h> for C) are included before the macros are
 * defined, so a later #include of them declares the real functions
 * unharmed.  Taking the address of a lock function (&pthread_mutex_lock)
 * is not redirected: only calls are.  Define SYNCPROF_NO_INSTRUMENT before
 * including to get nothing.
 */
#ifndef SYNCPROF_INSTRUMENT_H
#define SYNCPROF_INSTRUMENT_H

/*
 * SYNCPROF_NAME_LOCK(lock, "name"): name a lock in every report (see
 * syncprof_name_lock() in syncprof.h); safe whether profiling is on or off.
 */
#define SYNCPROF_NAME_LOCK(lock, name) ((void)syncprof_name_lock((void *)(lock), (name)))

#ifndef SYNCPROF_NO_INSTRUMENT

#include <errno.h>
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

#if defined(__GNUC__) && defined(__x86_64__) && !defined(SYNCPROF_NO_INLINE_FAST_PATH)
/*
 * The fast path inline, for a blocking acquisition while profiling alone
 * is on (@f, the flags, exactly SYNCPROF__PROFILING): the thread's entry
 * of this (lock, site) in its home slot, the lock tried, and on success
 * its count - the library's own fast path (src/record/probe.c), without
 * the call into it.  Anything else falls through to the library's entry
 * point; a failed try goes to the library's wait for @e.
 */
#define SYNCPROF__FAST(f, l, op_, try_call, ok, call)                                         \
	do {                                                                                 \
		struct syncprof__entry *e_;                                                 \
		if (__builtin_expect((f) == SYNCPROF__PROFILING, 1) &&                       \
		    __builtin_expect((e_ = syncprof__home) != 0, 1)) {                       \
			e_ += SYNCPROF__HOME_SLOT(l);                                        \
			if (__builtin_expect(e_->obj == (const void *)(l) && e_->file == file && \
						     e_->line == (unsigned int)line &&               \
						     e_->op == (op_),                                \
					     1)) {                                           \
				int rc_ = try_call;                                          \
				if (SYNCPROF__UNLIKELY(rc_ != (ok)))                         \
					return syncprof__tried(e_, rc_, call);               \
				__atomic_store_n(&e_->acquisitions, e_->acquisitions + 1,   \
						 __ATOMIC_RELAXED);                          \
				return rc_;                                                  \
			}                                                                    \
		}                                                                            \
	} while (0)
#else
#define SYNCPROF__FAST(f, l, op_, try_call, ok, call) ((void)(f))
#endif

/* A blocking acquisition: off, the real call; on, the fast path above,
 * else the library's profiled twin @lib. */
#define SYNCPROF__BLOCKING(name, type, lock, trylock, op_, ok, call, lib)                     \
	SYNCPROF__INLINE int syncprof__##name(type *l, SYNCPROF_SITE_PARAMS)                 \
	{                                                                                    \
		int f = SYNCPROF__FLAGS();                                                   \
		if (!SYNCPROF__UNLIKELY(f))                                                  \
			return (lock)(l);                                                    \
		SYNCPROF__FAST(f, l, op_, (trylock)(l), ok, call);                           \
		return lib(l, file, line, func);                                             \
	}

SYNCPROF__BLOCKING(mutex_lock, pthread_mutex_t, pthread_mutex_lock, pthread_mutex_trylock,
		   SYNCPROF__OP_MUTEX, 0, SYNCPROF__TRIED_MUTEX, syncprof_mutex_lock)

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
SYNCPROF__RW(tryrdlock, ~0)
SYNCPROF__RW(trywrlock, ~0)
SYNCPROF__RW(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__RW

SYNCPROF__BLOCKING(rwlock_rdlock, pthread_rwlock_t, pthread_rwlock_rdlock,
		   pthread_rwlock_tryrdlock, SYNCPROF__OP_RWLOCK_READ, 0, SYNCPROF__TRIED_RDLOCK,
		   syncprof_rwlock_rdlock)
SYNCPROF__BLOCKING(rwlock_wrlock, pthread_rwlock_t, pthread_rwlock_wrlock,
		   pthread_rwlock_trywrlock, SYNCPROF__OP_RWLOCK_WRITE, 0, SYNCPROF__TRIED_WRLOCK,
		   syncprof_rwlock_wrlock)

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
SYNCPROF__BLOCKING(spin_lock, pthread_spinlock_t, pthread_spin_lock, pthread_spin_trylock,
		   SYNCPROF__OP_SPINLOCK, 0, SYNCPROF__TRIED_SPIN, syncprof_spin_lock)
SYNCPROF__SPIN(trylock, ~0)
SYNCPROF__SPIN(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__SPIN

/* The clock variants, semaphores, barriers and joins: blocking calls whose
 * off path is the real call, as above. */
#define SYNCPROF__WAIT(name, real, params, args)                                  \
	SYNCPROF__INLINE int syncprof__##name params                              \
	{                                                                         \
		if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))                       \
			return (real)args;                                        \
		return syncprof_##name(SYNCPROF__UNPAREN args, file, line, func); \
	}
#define SYNCPROF__UNPAREN(...) __VA_ARGS__
#ifdef __USE_GNU /* glibc declares the clock calls with _GNU_SOURCE (C++: always) */
#define SYNCPROF__HAVE_CLOCK_CALLS 1
SYNCPROF__WAIT(mutex_clocklock, pthread_mutex_clocklock,
	       (pthread_mutex_t *m, clockid_t k, const struct timespec *t, SYNCPROF_SITE_PARAMS),
	       (m, k, t))
SYNCPROF__WAIT(cond_clockwait, pthread_cond_clockwait,
	       (pthread_cond_t *c, pthread_mutex_t *m, clockid_t k, const struct timespec *t,
		SYNCPROF_SITE_PARAMS),
	       (c, m, k, t))
SYNCPROF__WAIT(rwlock_clockrdlock, pthread_rwlock_clockrdlock,
	       (pthread_rwlock_t *l, clockid_t k, const struct timespec *t, SYNCPROF_SITE_PARAMS),
	       (l, k, t))
SYNCPROF__WAIT(rwlock_clockwrlock, pthread_rwlock_clockwrlock,
	       (pthread_rwlock_t *l, clockid_t k, const struct timespec *t, SYNCPROF_SITE_PARAMS),
	       (l, k, t))
SYNCPROF__WAIT(sem_clockwait, sem_clockwait,
	       (sem_t *s, clockid_t k, const struct timespec *t, SYNCPROF_SITE_PARAMS), (s, k, t))
SYNCPROF__WAIT(timedjoin_np, pthread_timedjoin_np,
	       (pthread_t th, void **r, const struct timespec *t, SYNCPROF_SITE_PARAMS),
	       (th, r, t))
SYNCPROF__WAIT(clockjoin_np, pthread_clockjoin_np,
	       (pthread_t th, void **r, clockid_t k, const struct timespec *t,
		SYNCPROF_SITE_PARAMS),
	       (th, r, k, t))
#endif
SYNCPROF__WAIT(sem_wait, sem_wait, (sem_t *s, SYNCPROF_SITE_PARAMS), (s))
SYNCPROF__WAIT(sem_trywait, sem_trywait, (sem_t *s, SYNCPROF_SITE_PARAMS), (s))
SYNCPROF__WAIT(sem_timedwait, sem_timedwait,
	       (sem_t *s, const struct timespec *t, SYNCPROF_SITE_PARAMS), (s, t))
SYNCPROF__WAIT(barrier_wait, pthread_barrier_wait, (pthread_barrier_t *b, SYNCPROF_SITE_PARAMS),
	       (b))
SYNCPROF__WAIT(join, pthread_join, (pthread_t th, void **r, SYNCPROF_SITE_PARAMS), (th, r))
#undef SYNCPROF__UNPAREN
#undef SYNCPROF__WAIT

#if defined(__cplusplus) && __cplusplus >= 201103L && defined(__GNUC__)
/*
 * Calls inside system headers (see the top of this file): the _pc entry
 * points.  The empty asm keeps the call out of tail position: a tail call
 * (jmp) from the program's function - the unlock at the end of a
 * std::lock_guard's scope - would make the return address its caller's.
 */
#define SYNCPROF__PC(call, real, mask)                                            \
	{                                                                         \
		int syncprof__rc;                                                 \
		if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS() & (mask)))              \
			return real;                                              \
		syncprof__rc = call;                                              \
		__asm__ __volatile__("" : "+r"(syncprof__rc));                    \
		return syncprof__rc;                                              \
	}
SYNCPROF__INLINE int syncprof__mutex_lock_pc(pthread_mutex_t *m)
SYNCPROF__PC(syncprof_mutex_lock_pc(m), (pthread_mutex_lock)(m), ~0)
SYNCPROF__INLINE int syncprof__mutex_trylock_pc(pthread_mutex_t *m)
SYNCPROF__PC(syncprof_mutex_trylock_pc(m), (pthread_mutex_trylock)(m), ~0)
SYNCPROF__INLINE int syncprof__mutex_timedlock_pc(pthread_mutex_t *m, const struct timespec *t)
SYNCPROF__PC(syncprof_mutex_timedlock_pc(m, t), (pthread_mutex_timedlock)(m, t), ~0)
SYNCPROF__INLINE int syncprof__mutex_unlock_pc(pthread_mutex_t *m)
SYNCPROF__PC(syncprof_mutex_unlock_pc(m), (pthread_mutex_unlock)(m), SYNCPROF__UNLOCK_HOOKS)
SYNCPROF__INLINE int syncprof__cond_wait_pc(pthread_cond_t *c, pthread_mutex_t *m)
SYNCPROF__PC(syncprof_cond_wait_pc(c, m), (pthread_cond_wait)(c, m), ~0)
SYNCPROF__INLINE int syncprof__cond_timedwait_pc(pthread_cond_t *c, pthread_mutex_t *m,
						 const struct timespec *t)
SYNCPROF__PC(syncprof_cond_timedwait_pc(c, m, t), (pthread_cond_timedwait)(c, m, t), ~0)
#define SYNCPROF__RW_PC(op, mask)                                                  \
	SYNCPROF__INLINE int syncprof__rwlock_##op##_pc(pthread_rwlock_t *l)       \
	SYNCPROF__PC(syncprof_rwlock_##op##_pc(l), (pthread_rwlock_##op)(l), mask)
SYNCPROF__RW_PC(rdlock, ~0)
SYNCPROF__RW_PC(wrlock, ~0)
SYNCPROF__RW_PC(tryrdlock, ~0)
SYNCPROF__RW_PC(trywrlock, ~0)
SYNCPROF__RW_PC(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__RW_PC
SYNCPROF__INLINE int syncprof__rwlock_timedrdlock_pc(pthread_rwlock_t *l, const struct timespec *t)
SYNCPROF__PC(syncprof_rwlock_timedrdlock_pc(l, t), (pthread_rwlock_timedrdlock)(l, t), ~0)
SYNCPROF__INLINE int syncprof__rwlock_timedwrlock_pc(pthread_rwlock_t *l, const struct timespec *t)
SYNCPROF__PC(syncprof_rwlock_timedwrlock_pc(l, t), (pthread_rwlock_timedwrlock)(l, t), ~0)
#define SYNCPROF__SPIN_PC(op, mask)                                                \
	SYNCPROF__INLINE int syncprof__spin_##op##_pc(pthread_spinlock_t *s)       \
	SYNCPROF__PC(syncprof_spin_##op##_pc(s), (pthread_spin_##op)(s), mask)
SYNCPROF__SPIN_PC(lock, ~0)
SYNCPROF__SPIN_PC(trylock, ~0)
SYNCPROF__SPIN_PC(unlock, SYNCPROF__UNLOCK_HOOKS)
#undef SYNCPROF__SPIN_PC
#ifdef SYNCPROF__HAVE_CLOCK_CALLS
SYNCPROF__INLINE int syncprof__mutex_clocklock_pc(pthread_mutex_t *m, clockid_t k,
						const struct timespec *t)
SYNCPROF__PC(syncprof_mutex_clocklock_pc(m, k, t), (pthread_mutex_clocklock)(m, k, t), ~0)
SYNCPROF__INLINE int syncprof__cond_clockwait_pc(pthread_cond_t *c, pthread_mutex_t *m,
						 clockid_t k, const struct timespec *t)
SYNCPROF__PC(syncprof_cond_clockwait_pc(c, m, k, t), (pthread_cond_clockwait)(c, m, k, t), ~0)
SYNCPROF__INLINE int syncprof__rwlock_clockrdlock_pc(pthread_rwlock_t *l, clockid_t k,
						    const struct timespec *t)
SYNCPROF__PC(syncprof_rwlock_clockrdlock_pc(l, k, t), (pthread_rwlock_clockrdlock)(l, k, t), ~0)
SYNCPROF__INLINE int syncprof__rwlock_clockwrlock_pc(pthread_rwlock_t *l, clockid_t k,
						    const struct timespec *t)
SYNCPROF__PC(syncprof_rwlock_clockwrlock_pc(l, k, t), (pthread_rwlock_clockwrlock)(l, k, t), ~0)
#endif
#undef SYNCPROF__PC

/* Compile-time tests of a call site (C++11 constexpr: no code is made). */
constexpr bool syncprof__starts_with(const char *s, const char *prefix)
{
	return !*prefix || (*s == *prefix && syncprof__starts_with(s + 1, prefix + 1));
}

constexpr bool syncprof__system_site(const char *file, const char *func)
{
	return syncprof__starts_with(file, "/usr/include/") ||
	       syncprof__starts_with(file, "/usr/lib/gcc/") ||
	       syncprof__starts_with(file, "/usr/lib/llvm-") ||
	       (func[0] == '_' && (func[1] == '_' || (func[1] >= 'A' && func[1] <= 'Z')));
}

/* A template argument is a constant expression: the test is made by the
 * compiler, at -O0 too, and the macro below keeps one branch. */
template <bool B> struct syncprof__constant {
	static constexpr bool value = B;
};
#define SYNCPROF__SYSTEM_SITE syncprof__constant<syncprof__system_site(__FILE__, __func__)>::value
#define SYNCPROF__CALL(op, ...)                                                   \
	(SYNCPROF__SYSTEM_SITE ? syncprof__##op##_pc(__VA_ARGS__)                  \
			       : syncprof__##op(__VA_ARGS__, SYNCPROF__SITE))
#else
#define SYNCPROF__CALL(op, ...) syncprof__##op(__VA_ARGS__, SYNCPROF__SITE)
#endif

/*
 * Initialisation and destruction, while profiling is on: the lock's
 * creation site is this init (reports show it, syncprof_lock_created()),
 * a destroy ends it, so that a lock made later at the same address has
 * its own name and site, and lock-order checking forgets it (it does not
 * inherit the edges).  Off: one load and a branch.
 */
#define SYNCPROF__CREATED(l, file, line, func)                                    \
	do {                                                                      \
		if (SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))                         \
			syncprof_lock_created((l), file, line, func);              \
	} while (0)
#define SYNCPROF__DESTROYED(l)                                                    \
	do {                                                                      \
		if (SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))                         \
			syncprof_lock_destroyed(l);                                \
	} while (0)

SYNCPROF__INLINE int syncprof__mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a,
					  SYNCPROF_SITE_PARAMS)
{
	SYNCPROF__CREATED(m, file, line, func);
	return (pthread_mutex_init)(m, a);
}

SYNCPROF__INLINE int syncprof__mutex_destroy(pthread_mutex_t *m)
{
	int rc = (pthread_mutex_destroy)(m);

	if (!rc)
		SYNCPROF__DESTROYED(m);
	return rc;
}

SYNCPROF__INLINE int syncprof__rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a,
					   SYNCPROF_SITE_PARAMS)
{
	SYNCPROF__CREATED(l, file, line, func);
	return (pthread_rwlock_init)(l, a);
}

SYNCPROF__INLINE int syncprof__rwlock_destroy(pthread_rwlock_t *l)
{
	int rc = (pthread_rwlock_destroy)(l);

	if (!rc)
		SYNCPROF__DESTROYED(l);
	return rc;
}

SYNCPROF__INLINE int syncprof__spin_init(pthread_spinlock_t *s, int pshared, SYNCPROF_SITE_PARAMS)
{
	SYNCPROF__CREATED((const void *)s, file, line, func);
	return (pthread_spin_init)(s, pshared);
}

SYNCPROF__INLINE int syncprof__spin_destroy(pthread_spinlock_t *s)
{
	int rc = (pthread_spin_destroy)(s);

	if (!rc)
		SYNCPROF__DESTROYED((const void *)s);
	return rc;
}

/* The other primitives: recorded only when the init succeeded (an init
 * that fails made nothing to name: sem_init with a value above
 * SEM_VALUE_MAX, a barrier of count 0), and errno kept as sem_init and
 * sem_destroy left it. */
SYNCPROF__INLINE int syncprof__cond_init(pthread_cond_t *c, const pthread_condattr_t *a,
					 SYNCPROF_SITE_PARAMS)
{
	int rc = (pthread_cond_init)(c, a);

	if (!rc)
		SYNCPROF__CREATED(c, file, line, func);
	return rc;
}

SYNCPROF__INLINE int syncprof__cond_destroy(pthread_cond_t *c)
{
	int rc = (pthread_cond_destroy)(c);

	if (!rc)
		SYNCPROF__DESTROYED(c);
	return rc;
}

SYNCPROF__INLINE int syncprof__sem_init(sem_t *s, int pshared, unsigned int value,
					SYNCPROF_SITE_PARAMS)
{
	int rc = (sem_init)(s, pshared, value);

	if (!rc && SYNCPROF__UNLIKELY(SYNCPROF__FLAGS())) {
		int saved = errno;

		syncprof_lock_created(s, file, line, func);
		errno = saved;
	}
	return rc;
}

SYNCPROF__INLINE int syncprof__sem_destroy(sem_t *s)
{
	int rc = (sem_destroy)(s);

	if (!rc && SYNCPROF__UNLIKELY(SYNCPROF__FLAGS())) {
		int saved = errno;

		syncprof_lock_destroyed(s);
		errno = saved;
	}
	return rc;
}

SYNCPROF__INLINE int syncprof__barrier_init(pthread_barrier_t *b, const pthread_barrierattr_t *a,
					    unsigned int count, SYNCPROF_SITE_PARAMS)
{
	int rc = (pthread_barrier_init)(b, a, count);

	if (!rc)
		SYNCPROF__CREATED(b, file, line, func);
	return rc;
}

SYNCPROF__INLINE int syncprof__barrier_destroy(pthread_barrier_t *b)
{
	int rc = (pthread_barrier_destroy)(b);

	if (!rc)
		SYNCPROF__DESTROYED(b);
	return rc;
}

#define pthread_mutex_init(m, a) syncprof__mutex_init((m), (a), SYNCPROF__SITE)
#define pthread_mutex_destroy(m) syncprof__mutex_destroy(m)
#define pthread_rwlock_init(l, a) syncprof__rwlock_init((l), (a), SYNCPROF__SITE)
#define pthread_rwlock_destroy(l) syncprof__rwlock_destroy(l)
#define pthread_spin_init(s, p) syncprof__spin_init((s), (p), SYNCPROF__SITE)
#define pthread_spin_destroy(s) syncprof__spin_destroy(s)
#define pthread_cond_init(c, a) syncprof__cond_init((c), (a), SYNCPROF__SITE)
#define pthread_cond_destroy(c) syncprof__cond_destroy(c)
#define sem_init(s, p, v) syncprof__sem_init((s), (p), (v), SYNCPROF__SITE)
#define sem_destroy(s) syncprof__sem_destroy(s)
#define pthread_barrier_init(b, a, n) syncprof__barrier_init((b), (a), (n), SYNCPROF__SITE)
#define pthread_barrier_destroy(b) syncprof__barrier_destroy(b)
#define pthread_mutex_lock(m) SYNCPROF__CALL(mutex_lock, (m))
#define pthread_mutex_trylock(m) SYNCPROF__CALL(mutex_trylock, (m))
#define pthread_mutex_timedlock(m, t) SYNCPROF__CALL(mutex_timedlock, (m), (t))
#define pthread_mutex_unlock(m) SYNCPROF__CALL(mutex_unlock, (m))
#define pthread_cond_wait(c, m) SYNCPROF__CALL(cond_wait, (c), (m))
#define pthread_cond_timedwait(c, m, t) SYNCPROF__CALL(cond_timedwait, (c), (m), (t))
#define pthread_rwlock_rdlock(l) SYNCPROF__CALL(rwlock_rdlock, (l))
#define pthread_rwlock_wrlock(l) SYNCPROF__CALL(rwlock_wrlock, (l))
#define pthread_rwlock_tryrdlock(l) SYNCPROF__CALL(rwlock_tryrdlock, (l))
#define pthread_rwlock_trywrlock(l) SYNCPROF__CALL(rwlock_trywrlock, (l))
#define pthread_rwlock_timedrdlock(l, t) SYNCPROF__CALL(rwlock_timedrdlock, (l), (t))
#define pthread_rwlock_timedwrlock(l, t) SYNCPROF__CALL(rwlock_timedwrlock, (l), (t))
#define pthread_rwlock_unlock(l) SYNCPROF__CALL(rwlock_unlock, (l))
#define pthread_spin_lock(s) SYNCPROF__CALL(spin_lock, (s))
#define pthread_spin_trylock(s) SYNCPROF__CALL(spin_trylock, (s))
#define pthread_spin_unlock(s) SYNCPROF__CALL(spin_unlock, (s))
#ifdef SYNCPROF__HAVE_CLOCK_CALLS
#define pthread_mutex_clocklock(m, k, t) SYNCPROF__CALL(mutex_clocklock, (m), (k), (t))
#define pthread_cond_clockwait(c, m, k, t) SYNCPROF__CALL(cond_clockwait, (c), (m), (k), (t))
#define pthread_rwlock_clockrdlock(l, k, t) SYNCPROF__CALL(rwlock_clockrdlock, (l), (k), (t))
#define pthread_rwlock_clockwrlock(l, k, t) SYNCPROF__CALL(rwlock_clockwrlock, (l), (k), (t))
#define sem_clockwait(s, k, t) syncprof__sem_clockwait((s), (k), (t), SYNCPROF__SITE)
#define pthread_timedjoin_np(th, r, t) syncprof__timedjoin_np((th), (r), (t), SYNCPROF__SITE)
#define pthread_clockjoin_np(th, r, k, t)                                          \
	syncprof__clockjoin_np((th), (r), (k), (t), SYNCPROF__SITE)
#endif
/* No system header makes these calls in line: the site is always
 * __FILE__:__LINE__ (semaphores, barriers, joins). */
#define sem_wait(s) syncprof__sem_wait((s), SYNCPROF__SITE)
#define sem_trywait(s) syncprof__sem_trywait((s), SYNCPROF__SITE)
#define sem_timedwait(s, t) syncprof__sem_timedwait((s), (t), SYNCPROF__SITE)
#define pthread_barrier_wait(b) syncprof__barrier_wait((b), SYNCPROF__SITE)
#define pthread_join(th, r) syncprof__join((th), (r), SYNCPROF__SITE)
/* Signals: remembered (while the watchdog runs) to name the site that
 * should signal a condition wait that lasts; profiling off: the real call. */
SYNCPROF__INLINE int syncprof__cond_signal(pthread_cond_t *c, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_cond_signal)(c);
	return syncprof_cond_signal(c, file, line, func);
}

SYNCPROF__INLINE int syncprof__cond_broadcast(pthread_cond_t *c, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (pthread_cond_broadcast)(c);
	return syncprof_cond_broadcast(c, file, line, func);
}
#define pthread_cond_signal(c) syncprof__cond_signal((c), SYNCPROF__SITE)
#define pthread_cond_broadcast(c) syncprof__cond_broadcast((c), SYNCPROF__SITE)

#ifdef SYNCPROF__HAVE_C11_THREADS
SYNCPROF__BLOCKING(mtx_lock, mtx_t, mtx_lock, mtx_trylock, SYNCPROF__OP_MUTEX, thrd_success,
		   SYNCPROF__TRIED_MTX, syncprof_mtx_lock)

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

SYNCPROF__INLINE int syncprof__mtx_init(mtx_t *m, int type, SYNCPROF_SITE_PARAMS)
{
	SYNCPROF__CREATED(m, file, line, func);
	return (mtx_init)(m, type);
}

SYNCPROF__INLINE void syncprof__mtx_destroy(mtx_t *m)
{
	(mtx_destroy)(m);
	SYNCPROF__DESTROYED(m);
}

SYNCPROF__INLINE int syncprof__cnd_init(cnd_t *c, SYNCPROF_SITE_PARAMS)
{
	int rc = (cnd_init)(c);

	if (rc == thrd_success)
		SYNCPROF__CREATED(c, file, line, func);
	return rc;
}

SYNCPROF__INLINE void syncprof__cnd_destroy(cnd_t *c)
{
	(cnd_destroy)(c);
	SYNCPROF__DESTROYED(c);
}

#define mtx_init(m, t) syncprof__mtx_init((m), (t), SYNCPROF__SITE)
#define mtx_destroy(m) syncprof__mtx_destroy(m)
#define cnd_init(c) syncprof__cnd_init((c), SYNCPROF__SITE)
#define cnd_destroy(c) syncprof__cnd_destroy(c)
#define mtx_lock(m) syncprof__mtx_lock((m), SYNCPROF__SITE)
#define mtx_trylock(m) syncprof__mtx_trylock((m), SYNCPROF__SITE)
#define mtx_timedlock(m, t) syncprof__mtx_timedlock((m), (t), SYNCPROF__SITE)
#define mtx_unlock(m) syncprof__mtx_unlock((m), SYNCPROF__SITE)
#define cnd_wait(c, m) syncprof__cnd_wait((c), (m), SYNCPROF__SITE)
SYNCPROF__INLINE int syncprof__thrd_join(thrd_t th, int *res, SYNCPROF_SITE_PARAMS)
{
	if (!SYNCPROF__UNLIKELY(SYNCPROF__FLAGS()))
		return (thrd_join)(th, res);
	return syncprof_thrd_join(th, res, file, line, func);
}

#define cnd_timedwait(c, m, t) syncprof__cnd_timedwait((c), (m), (t), SYNCPROF__SITE)
#define thrd_join(th, r) syncprof__thrd_join((th), (r), SYNCPROF__SITE)
#endif /* SYNCPROF__HAVE_C11_THREADS */

#endif /* SYNCPROF_NO_INSTRUMENT */
#endif /* SYNCPROF_INSTRUMENT_H */
