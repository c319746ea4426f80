/*
 * floorshim.c - the floor of a profiling interposer, for the preloaded cost
 * goals (docs/cost.md): LD_PRELOAD=libfloorshim.so lockbench -M libc,plain.
 *
 * lockbench's floor and floortry modes are inline in the loop; a preloaded
 * profiler cannot be.  This library interposes pthread_mutex_lock and
 * pthread_mutex_unlock with the least a preloaded probe must do to count
 * acquisitions per (call site, object) while telling a contended one from
 * an uncontended one without reading a clock, and to be switched off at
 * run time:
 *   - the interposed call itself, and the real one through a pointer;
 *   - a flag tested before the lock and before the unlock;
 *   - the thread's counters (one TLS load), the slot from the lock's
 *     address, a key of two words (the object, the return address);
 *   - the lock tried first; only a failed try would be timed (here it
 *     just locks);
 *   - the count.
 * No thread record, no collision handling beyond taking the slot, no hold
 * tracking: a lower bound, not a design.  FLOORSHIM=off leaves only the
 * interposed calls and the flag test (the interposition alone).
 *
 * Alternatives: measuring syncprof's preload with profiling off gives the
 * interposition with syncprof's shims (their frame set-up included), not a
 * floor.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define SLOTS 2048

struct slot {
	const void *obj;
	uintptr_t ra;
	unsigned long acquisitions;
} __attribute__((aligned(32)));

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);
static int flags = 1; /* 1: on; 0: FLOORSHIM=off */
static __thread struct slot *table __attribute__((tls_model("initial-exec")));

__attribute__((constructor)) static void floorshim_init(void)
{
	const char *e = getenv("FLOORSHIM");

	real_lock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_lock");
	real_trylock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_trylock");
	real_unlock = (int (*)(pthread_mutex_t *))dlsym(RTLD_NEXT, "pthread_mutex_unlock");
	if (!real_lock || !real_trylock || !real_unlock)
		abort();
	if (e && !strcmp(e, "off"))
		flags = 0;
}

__attribute__((noinline)) static int lock_miss(pthread_mutex_t *m, uintptr_t ra)
{
	struct slot *t = table, *s;

	if (!t) {
		t = mmap(NULL, SLOTS * sizeof(*t), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED)
			return real_lock(m);
		table = t;
	}
	s = &t[((uintptr_t)m >> 5) & (SLOTS - 1)];
	s->obj = m;
	s->ra = ra;
	s->acquisitions++;
	return real_lock(m);
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	if (__builtin_expect(__atomic_load_n(&flags, __ATOMIC_RELAXED), 1)) {
		uintptr_t ra = (uintptr_t)__builtin_return_address(0);
		struct slot *t = table, *s;
		int rc;

		if (__builtin_expect(!t, 0))
			return lock_miss(m, ra);
		s = &t[((uintptr_t)m >> 5) & (SLOTS - 1)];
		if (__builtin_expect(s->obj != m || s->ra != ra, 0))
			return lock_miss(m, ra);
		rc = real_trylock(m);
		if (__builtin_expect(rc != 0, 0))
			return real_lock(m); /* contended: a profiler times this */
		s->acquisitions++;
		return 0;
	}
	return real_lock(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
	if (__builtin_expect(__atomic_load_n(&flags, __ATOMIC_RELAXED) & 2, 0))
		abort(); /* stands for an unlock hook: never set */
	return real_unlock(m);
}
