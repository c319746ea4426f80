/*
 * real.c - the next definition of every interposed lock call (the table
 * behind SP_REAL() in lock_calls.h), for the preload library only.
 *
 * Design.  The preload library defines pthread_mutex_lock & co.; its own
 * calls of libc's, and its shims' forwarding, go to the next definition
 * in the lookup order, found with dlsym(RTLD_NEXT).  Pointers are
 * resolved all at once by the first call that needs one, and by the
 * preload's constructor (sp_real_resolve_all()); a getter then costs one
 * relaxed load and a test.
 *
 * Bootstrapping.  Calls can arrive before the constructor ran (other
 * libraries' constructors lock) and from inside dlsym() itself (it may
 * malloc, and a malloc replacement such as jemalloc locks a pthread
 * mutex).  While a thread is inside dlsym() (`resolving`), its lock calls
 * use the list's boot aliases: glibc's link-time __pthread_mutex_lock & co.
 * (bound by the linker, no dlsym) and for spin locks the equivalent of
 * glibc's implementation below.  Calls without an alias resolve their own
 * name: nothing in dlsym() waits on a condition, a semaphore or a join.
 *
 * Invariants: a pointer, once stored, never changes (release store after
 * dlsym, acquire load before a second resolution); `resolving` is
 * per thread.
 *
 * Alternatives considered: calling glibc's __pthread_* aliases always (no
 * dlsym, no indirect call) would bypass other interposers preloaded after
 * us and does not exist for cond, spin and C11 calls; mutrace's "resolve
 * in the constructor, abort if called earlier" breaks programs whose
 * libraries lock in constructors.
 */
#include <dlfcn.h>
#include <errno.h>

#ifndef SP_REAL_NEXT
#define SP_REAL_NEXT 1
#endif
#include "base/lock_calls.h"

/* glibc's link-time aliases, for bootstrapping (see above). */
extern int __pthread_mutex_lock(pthread_mutex_t *m);
extern int __pthread_mutex_trylock(pthread_mutex_t *m);
extern int __pthread_mutex_unlock(pthread_mutex_t *m);
extern int __pthread_rwlock_rdlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_wrlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_tryrdlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_trywrlock(pthread_rwlock_t *l);
extern int __pthread_rwlock_unlock(pthread_rwlock_t *l);
extern int __pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a);
extern int __pthread_mutex_destroy(pthread_mutex_t *m);
extern int __pthread_rwlock_init(pthread_rwlock_t *l, const pthread_rwlockattr_t *a);
extern int __pthread_rwlock_destroy(pthread_rwlock_t *l);

/* glibc's spin lock, for a pthread_spin_* call made from inside dlsym(). */
static int sp_boot_spin_lock(pthread_spinlock_t *s)
{
	while (__atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE))
		while (__atomic_load_n(s, __ATOMIC_RELAXED))
			__builtin_ia32_pause();
	return 0;
}

static int sp_boot_spin_trylock(pthread_spinlock_t *s)
{
	return __atomic_exchange_n(s, 1, __ATOMIC_ACQUIRE) ? EBUSY : 0;
}

static int sp_boot_spin_unlock(pthread_spinlock_t *s)
{
	__atomic_store_n(s, 0, __ATOMIC_RELEASE);
	return 0;
}

static int sp_boot_spin_init(pthread_spinlock_t *s, int pshared)
{
	(void)pshared;
	__atomic_store_n(s, 0, __ATOMIC_RELAXED);
	return 0;
}

static int sp_boot_spin_destroy(pthread_spinlock_t *s)
{
	(void)s;
	return 0;
}

struct sp_real_table sp_real_fns;

static SP_TLS int resolving; /* this thread is inside dlsym() */

static void *resolve_one(const char *name)
{
	void *p;

	resolving++;
	p = dlsym(RTLD_NEXT, name);
	resolving--;
	return p;
}

void sp_real_resolve_all(void)
{
#define X_RESOLVE(name, ret, params, boot)                                                   \
	if (!sp_load_acquire(&sp_real_fns.name))                                             \
		sp_store_release(&sp_real_fns.name, (sp_real_##name##_fn)resolve_one(#name));
	SP_LOCK_CALLS(X_RESOLVE)
#undef X_RESOLVE
}

#define X_SLOWPATH(name, ret, params, boot)                                                  \
	SP_NOINLINE sp_real_##name##_fn sp_real_##name##__slowpath(void)                     \
	{                                                                                    \
		sp_real_##name##_fn boot_fn = (sp_real_##name##_fn)(boot);                   \
		if (resolving && boot_fn)                                                    \
			return boot_fn;                                                      \
		if (!resolving)                                                              \
			sp_real_resolve_all();                                               \
		if (!sp_load_acquire(&sp_real_fns.name))                                     \
			sp_store_release(&sp_real_fns.name,                                  \
					 (sp_real_##name##_fn)resolve_one(#name));           \
		return sp_real_fns.name ? sp_real_fns.name : boot_fn;                        \
	}
SP_LOCK_CALLS(X_SLOWPATH)
#undef X_SLOWPATH
