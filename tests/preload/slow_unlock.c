/*
 * slow_unlock.c - a pthread_mutex_unlock() that returns late: preloaded
 * after libsyncprof-preload.so, it is the "real" unlock the interposer
 * calls.  It unlocks at once, then, for the one mutex the program names
 * (slow_unlock_target(), looked up with dlsym), sleeps SLOW_UNLOCK_MS
 * before it returns: as an unlock that wakes a waiter, or is preempted,
 * returns microseconds after the lock is free.  unlock_end.c checks that
 * syncprof's hold ends at the unlock call (hold.h,
 * sp_hold_release_begin()), not at its return.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

static int (*next_unlock)(pthread_mutex_t *);
static pthread_mutex_t *target;
static long sleep_ms = 30;

__attribute__((constructor)) static void slow_unlock_init(void)
{
	const char *ms = getenv("SLOW_UNLOCK_MS");

	next_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	if (ms)
		sleep_ms = atol(ms);
}

void slow_unlock_target(pthread_mutex_t *m)
{
	__atomic_store_n(&target, m, __ATOMIC_RELEASE);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int rc = next_unlock(m);

	if (m == __atomic_load_n(&target, __ATOMIC_ACQUIRE)) {
		struct timespec d = { sleep_ms / 1000, (sleep_ms % 1000) * 1000000 };

		while (nanosleep(&d, &d))
			;
	}
	return rc;
}
