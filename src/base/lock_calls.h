/*
 * lock_calls.h - the one list of the lock calls syncprof interposes, and
 * SP_REAL(name), the call each build makes when it means libc's.
 * Private to libsyncprof and the preload library.
 *
 * Design.  SP_LOCK_CALLS(X) names every pthread, C11 and libc call that
 * the preload library defines (preload/preload.c) with its return type,
 * its parameter list and its boot alias (below).  From it come:
 *   - the table of real functions and its getters (this header and
 *     real.c, preload build only);
 *   - the shims 'syncprof attach' writes into GOT slots (preload.c's
 *     sp_attach_shims: every name of the list);
 *   - SP_REAL(name) in every source that calls a lock function meaning
 *     libc's: the probe (record/probe.c, probe_wait.c, wait_pub.c) and the
 *     trace writer's join (trace/file.c).
 * A new lock call is one line here, its shim in preload.c and its probe
 * in record/, and its entry point in syncprof.h when instrument.h maps it.
 *
 * SP_REAL(name) says in the code what is called in each build:
 *   - libsyncprof.so and libsyncprof.a (compiled-in instrumentation):
 *     `name` itself, the program's view of it (libc's, or a sanitizer's
 *     interceptor: ThreadSanitizer must see the profiler's locks);
 *   - the preload library, whose sources that call lock functions are
 *     compiled with -DSP_REAL_NEXT (CMakeLists.txt): the next definition
 *     after the preload's own interposer, found with dlsym(RTLD_NEXT) -
 *     calling `name` there would enter the interposer and record the
 *     profiler's own call as a program row (counted twice, or the trace
 *     writer's join as a "join" row).
 *
 * Boot aliases.  A lock call can arrive while its thread is inside
 * dlsym(), which may malloc, and a malloc replacement locks a pthread
 * mutex: the real pointer is not known yet.  Such calls use glibc's
 * link-time aliases (__pthread_mutex_lock...: exported for mutexes and
 * rwlocks, no dlsym) or, for spin locks, an equivalent of glibc's own
 * (real.c); calls without one resolve their own name first (nothing in
 * dlsym waits on a condition, a semaphore or a join).
 *
 * Alternatives considered: a forced-include header of `#define name
 * real(name)` for the preload's compile of the probe (the previous way)
 * hid the redirection: nothing in the probe said which function it called,
 * and trace/file.c, not force-included, was missed when pthread_clockjoin_np
 * became interposed; dlsym(RTLD_NEXT) in libsyncprof.so too would bypass
 * a sanitizer's interceptors.
 */
#ifndef SP_BASE_LOCK_CALLS_H
#define SP_BASE_LOCK_CALLS_H

#include <pthread.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

/* X(name, return type, (parameter types), boot alias or NULL) */
#define SP_LOCK_CALLS(X)                                                                     \
	SP_THREAD_CALLS(X)                                                                   \
	/* futex waits of lock libraries that never call pthread */                          \
	X(syscall, long, (long, ...), NULL)

/* The list without syscall(), which the preload defines in assembly on
 * x86-64 (preload.c): the calls it can alias in C. */
#define SP_THREAD_CALLS(X)                                                                   \
	/* mutexes */                                                                        \
	X(pthread_mutex_lock, int, (pthread_mutex_t *), __pthread_mutex_lock)               \
	X(pthread_mutex_trylock, int, (pthread_mutex_t *), __pthread_mutex_trylock)         \
	X(pthread_mutex_timedlock, int, (pthread_mutex_t *, const struct timespec *), NULL)  \
	X(pthread_mutex_clocklock, int, (pthread_mutex_t *, clockid_t, const struct timespec *), \
	  NULL)                                                                              \
	X(pthread_mutex_unlock, int, (pthread_mutex_t *), __pthread_mutex_unlock)           \
	X(pthread_mutex_init, int, (pthread_mutex_t *, const pthread_mutexattr_t *),         \
	  __pthread_mutex_init)                                                              \
	X(pthread_mutex_destroy, int, (pthread_mutex_t *), __pthread_mutex_destroy)         \
	/* condition variables */                                                            \
	X(pthread_cond_wait, int, (pthread_cond_t *, pthread_mutex_t *), NULL)               \
	X(pthread_cond_timedwait, int,                                                       \
	  (pthread_cond_t *, pthread_mutex_t *, const struct timespec *), NULL)              \
	X(pthread_cond_clockwait, int,                                                       \
	  (pthread_cond_t *, pthread_mutex_t *, clockid_t, const struct timespec *), NULL)   \
	X(pthread_cond_signal, int, (pthread_cond_t *), NULL)                                \
	X(pthread_cond_broadcast, int, (pthread_cond_t *), NULL)                             \
	X(pthread_cond_init, int, (pthread_cond_t *, const pthread_condattr_t *), NULL)      \
	X(pthread_cond_destroy, int, (pthread_cond_t *), NULL)                               \
	/* reader-writer locks */                                                            \
	X(pthread_rwlock_rdlock, int, (pthread_rwlock_t *), __pthread_rwlock_rdlock)        \
	X(pthread_rwlock_wrlock, int, (pthread_rwlock_t *), __pthread_rwlock_wrlock)        \
	X(pthread_rwlock_tryrdlock, int, (pthread_rwlock_t *), __pthread_rwlock_tryrdlock)  \
	X(pthread_rwlock_trywrlock, int, (pthread_rwlock_t *), __pthread_rwlock_trywrlock)  \
	X(pthread_rwlock_timedrdlock, int, (pthread_rwlock_t *, const struct timespec *),    \
	  NULL)                                                                              \
	X(pthread_rwlock_timedwrlock, int, (pthread_rwlock_t *, const struct timespec *),    \
	  NULL)                                                                              \
	X(pthread_rwlock_clockrdlock, int,                                                   \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *), NULL)                    \
	X(pthread_rwlock_clockwrlock, int,                                                   \
	  (pthread_rwlock_t *, clockid_t, const struct timespec *), NULL)                    \
	X(pthread_rwlock_unlock, int, (pthread_rwlock_t *), __pthread_rwlock_unlock)        \
	X(pthread_rwlock_init, int, (pthread_rwlock_t *, const pthread_rwlockattr_t *),      \
	  __pthread_rwlock_init)                                                             \
	X(pthread_rwlock_destroy, int, (pthread_rwlock_t *), __pthread_rwlock_destroy)      \
	/* spin locks */                                                                     \
	X(pthread_spin_lock, int, (pthread_spinlock_t *), sp_boot_spin_lock)                \
	X(pthread_spin_trylock, int, (pthread_spinlock_t *), sp_boot_spin_trylock)          \
	X(pthread_spin_unlock, int, (pthread_spinlock_t *), sp_boot_spin_unlock)            \
	X(pthread_spin_init, int, (pthread_spinlock_t *, int), sp_boot_spin_init)           \
	X(pthread_spin_destroy, int, (pthread_spinlock_t *), sp_boot_spin_destroy)          \
	/* C11 <threads.h> */                                                                \
	X(mtx_lock, int, (mtx_t *), NULL)                                                    \
	X(mtx_trylock, int, (mtx_t *), NULL)                                                 \
	X(mtx_timedlock, int, (mtx_t *__restrict, const struct timespec *__restrict), NULL)  \
	X(mtx_unlock, int, (mtx_t *), NULL)                                                  \
	X(mtx_init, int, (mtx_t *, int), NULL)                                               \
	X(mtx_destroy, void, (mtx_t *), NULL)                                                \
	X(cnd_wait, int, (cnd_t *, mtx_t *), NULL)                                           \
	X(cnd_timedwait, int,                                                                \
	  (cnd_t *__restrict, mtx_t *__restrict, const struct timespec *__restrict), NULL)   \
	X(cnd_signal, int, (cnd_t *), NULL)                                                  \
	X(cnd_broadcast, int, (cnd_t *), NULL)                                               \
	X(cnd_init, int, (cnd_t *), NULL)                                                    \
	X(cnd_destroy, void, (cnd_t *), NULL)                                                \
	X(thrd_join, int, (thrd_t, int *), NULL)                                             \
	/* semaphores, barriers, joins */                                                    \
	X(sem_wait, int, (sem_t *), NULL)                                                    \
	X(sem_trywait, int, (sem_t *), NULL)                                                 \
	X(sem_timedwait, int, (sem_t *, const struct timespec *), NULL)                      \
	X(sem_clockwait, int, (sem_t *, clockid_t, const struct timespec *), NULL)           \
	X(sem_init, int, (sem_t *, int, unsigned int), NULL)                                 \
	X(sem_destroy, int, (sem_t *), NULL)                                                 \
	X(pthread_barrier_wait, int, (pthread_barrier_t *), NULL)                            \
	X(pthread_barrier_init, int,                                                         \
	  (pthread_barrier_t *, const pthread_barrierattr_t *, unsigned int), NULL)          \
	X(pthread_barrier_destroy, int, (pthread_barrier_t *), NULL)                         \
	X(pthread_join, int, (pthread_t, void **), NULL)                                     \
	X(pthread_timedjoin_np, int, (pthread_t, void **, const struct timespec *), NULL)    \
	X(pthread_clockjoin_np, int,                                                         \
	  (pthread_t, void **, clockid_t, const struct timespec *), NULL)

#ifdef SP_REAL_NEXT

#include "base/base.h"

#define SP_REAL_TYPEDEF(name, ret, params, boot) typedef ret(*sp_real_##name##_fn) params;
SP_LOCK_CALLS(SP_REAL_TYPEDEF)
#undef SP_REAL_TYPEDEF

/* The next definition of each call, NULL until resolved (real.c). */
struct sp_real_table {
#define SP_REAL_FIELD(name, ret, params, boot) sp_real_##name##_fn name;
	SP_LOCK_CALLS(SP_REAL_FIELD)
#undef SP_REAL_FIELD
};
extern struct sp_real_table sp_real_fns __attribute__((visibility("hidden")));

/*
 * sp_real_NAME() - the next definition of NAME; never NULL for glibc's
 * calls.  One relaxed load and a test once resolved; the first call
 * resolves every name (sp_real_resolve_all()), or, from inside dlsym(),
 * answers with the boot alias.  Async-signal-safe once resolved.
 */
#define SP_REAL_GETTER(name, ret, params, boot)                                              \
	__attribute__((visibility("hidden"))) sp_real_##name##_fn                          \
		sp_real_##name##__slowpath(void);                                            \
	static SP_ALWAYS_INLINE sp_real_##name##_fn sp_real_##name(void)                     \
	{                                                                                    \
		sp_real_##name##_fn f = sp_load_relaxed(&sp_real_fns.name);                  \
		return SP_LIKELY(f) ? f : sp_real_##name##__slowpath();                      \
	}
SP_LOCK_CALLS(SP_REAL_GETTER)
#undef SP_REAL_GETTER

#define SP_REAL(name) (sp_real_##name())

/* Resolve every name now (the preload's constructor; idempotent). */
void sp_real_resolve_all(void);

#else

#define SP_REAL(name) name

#endif /* SP_REAL_NEXT */

#endif /* SP_BASE_LOCK_CALLS_H */
