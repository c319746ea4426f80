/*
 * real_calls.h - forced into the preload library's own compile of the
 * probe's sources (probe.c, probe_wait.c, wait_pub.c: CMakeLists.txt,
 * syncprof_preload_probe_obj), so that their calls of the real lock
 * functions reach the next definition (glibc's) and not the preload's
 * interposers of the same names.
 *
 * Why: the preload library also defines the entry points of compiled-in
 * instrumentation (syncprof_mutex_lock...), and being first in the global
 * scope, it is what a program built with syncprof/instrument.h reaches
 * under 'syncprof run'.  Compiled as in libsyncprof.so, those entry
 * points' real pthread_mutex_trylock() was the preload's own interposer:
 * every instrumented call was counted twice, once at its file:line and
 * once at a site inside probe.c.  Here each name becomes a call through
 * the preload's table of real functions (preload.c, sp_real_NAME()).
 *
 * Alternatives considered: dlsym(RTLD_NEXT) in libsyncprof.so's copy too
 * (would bypass a sanitizer's interceptors of the program: TSan's view of
 * the locks); telling the probe's own calls apart in the interposers by
 * their return address (a test on every interposed call).
 */
#ifndef SP_PRELOAD_REAL_CALLS_H
#define SP_PRELOAD_REAL_CALLS_H

#include <pthread.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>

/* The interposed calls that lock, unlock or wait (preload.c's attach
 * shims are these and the inits and destroys). */
#define SP_PRELOAD_LOCK_CALLS(X)                                                            \
	X(pthread_mutex_lock) X(pthread_mutex_trylock) X(pthread_mutex_timedlock)          \
	X(pthread_mutex_unlock) X(pthread_mutex_clocklock)                                 \
	X(pthread_cond_wait) X(pthread_cond_timedwait) X(pthread_cond_clockwait)            \
	X(pthread_rwlock_rdlock) X(pthread_rwlock_wrlock) X(pthread_rwlock_tryrdlock)      \
	X(pthread_rwlock_trywrlock) X(pthread_rwlock_timedrdlock)                          \
	X(pthread_rwlock_timedwrlock) X(pthread_rwlock_clockrdlock)                        \
	X(pthread_rwlock_clockwrlock) X(pthread_rwlock_unlock)                             \
	X(pthread_spin_lock) X(pthread_spin_trylock) X(pthread_spin_unlock)                \
	X(mtx_lock) X(mtx_trylock) X(mtx_timedlock) X(mtx_unlock) X(cnd_wait)              \
	X(cnd_timedwait) X(sem_wait) X(sem_trywait) X(sem_timedwait) X(sem_clockwait)      \
	X(pthread_barrier_wait) X(pthread_join) X(thrd_join) X(pthread_timedjoin_np)       \
	X(pthread_clockjoin_np)

/* The probe's real calls: each name's getter, declared with its type. */
#define SP_REAL_CALLS(X)                                                                    \
	SP_PRELOAD_LOCK_CALLS(X)                                                            \
	X(pthread_mutex_init) X(pthread_cond_signal) X(pthread_cond_broadcast)

#define SP_REAL_DECLARE(name)                                                               \
	__attribute__((visibility("hidden"))) __typeof__(&name) sp_real_##name(void);
SP_REAL_CALLS(SP_REAL_DECLARE)
#undef SP_REAL_DECLARE

#ifndef SP_REAL_CALLS_DEFINE /* preload.c defines the getters */
#define pthread_mutex_lock (sp_real_pthread_mutex_lock())
#define pthread_mutex_trylock (sp_real_pthread_mutex_trylock())
#define pthread_mutex_timedlock (sp_real_pthread_mutex_timedlock())
#define pthread_mutex_unlock (sp_real_pthread_mutex_unlock())
#define pthread_mutex_clocklock (sp_real_pthread_mutex_clocklock())
#define pthread_mutex_init (sp_real_pthread_mutex_init())
#define pthread_cond_wait (sp_real_pthread_cond_wait())
#define pthread_cond_timedwait (sp_real_pthread_cond_timedwait())
#define pthread_cond_clockwait (sp_real_pthread_cond_clockwait())
#define pthread_cond_signal (sp_real_pthread_cond_signal())
#define pthread_cond_broadcast (sp_real_pthread_cond_broadcast())
#define pthread_rwlock_rdlock (sp_real_pthread_rwlock_rdlock())
#define pthread_rwlock_wrlock (sp_real_pthread_rwlock_wrlock())
#define pthread_rwlock_tryrdlock (sp_real_pthread_rwlock_tryrdlock())
#define pthread_rwlock_trywrlock (sp_real_pthread_rwlock_trywrlock())
#define pthread_rwlock_timedrdlock (sp_real_pthread_rwlock_timedrdlock())
#define pthread_rwlock_timedwrlock (sp_real_pthread_rwlock_timedwrlock())
#define pthread_rwlock_clockrdlock (sp_real_pthread_rwlock_clockrdlock())
#define pthread_rwlock_clockwrlock (sp_real_pthread_rwlock_clockwrlock())
#define pthread_rwlock_unlock (sp_real_pthread_rwlock_unlock())
#define pthread_spin_lock (sp_real_pthread_spin_lock())
#define pthread_spin_trylock (sp_real_pthread_spin_trylock())
#define pthread_spin_unlock (sp_real_pthread_spin_unlock())
#define mtx_lock (sp_real_mtx_lock())
#define mtx_trylock (sp_real_mtx_trylock())
#define mtx_timedlock (sp_real_mtx_timedlock())
#define mtx_unlock (sp_real_mtx_unlock())
#define cnd_wait (sp_real_cnd_wait())
#define cnd_timedwait (sp_real_cnd_timedwait())
#define sem_wait (sp_real_sem_wait())
#define sem_trywait (sp_real_sem_trywait())
#define sem_timedwait (sp_real_sem_timedwait())
#define sem_clockwait (sp_real_sem_clockwait())
#define pthread_barrier_wait (sp_real_pthread_barrier_wait())
#define pthread_join (sp_real_pthread_join())
#define thrd_join (sp_real_thrd_join())
#define pthread_timedjoin_np (sp_real_pthread_timedjoin_np())
#define pthread_clockjoin_np (sp_real_pthread_clockjoin_np())
#endif

#endif /* SP_PRELOAD_REAL_CALLS_H */
