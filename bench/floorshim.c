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
 * No thread record, no collision handling beyond taking the slot: a lower
 * bound, not a design.  FLOORSHIM=off leaves only the interposed calls and
 * the flag test (the interposition alone).
 *
 * FLOORSHIM=hold adds the least hold tracking as issue 14 designs it must
 * do, for the preloaded hold=1 goal: floor_held.h's push and pop on the
 * thread's block, one hold in FLOORSHIM_SAMPLE (default 64, as syncprof's
 * sample past a row's first 256 holds; 16 until 2026-11-28; 0: none)
 * timed.  The pop comes after the real unlock, as syncprof's does
 * (FLOORSHIM_POP=before: before it, inside the critical section).
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

#include "floor_held.h"

#define SLOTS 2048

struct slot {
	const void *obj;
	uintptr_t ra;
	unsigned long acquisitions;
} __attribute__((aligned(32)));

static int (*real_lock)(pthread_mutex_t *);
static int (*real_trylock)(pthread_mutex_t *);
static int (*real_unlock)(pthread_mutex_t *);
static int flags = 1; /* 1: on; 0: FLOORSHIM=off; 3: FLOORSHIM=hold */
static unsigned sample = 64;
static int pop_before; /* FLOORSHIM_POP=before */
static uint64_t tick; /* stands for the hold ticker's tick */
static __thread struct slot *table __attribute__((tls_model("initial-exec")));
static __thread struct floor_block *blk __attribute__((tls_model("initial-exec")));
static __thread unsigned left __attribute__((tls_model("initial-exec")));

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
	if (e && !strcmp(e, "hold")) {
		const char *n = getenv("FLOORSHIM_SAMPLE");

		flags = 3;
		if (n)
			sample = (unsigned)strtoul(n, NULL, 10);
		pop_before = getenv("FLOORSHIM_POP") && !strcmp(getenv("FLOORSHIM_POP"), "before");
	}
}

__attribute__((noinline)) static int lock_miss(pthread_mutex_t *m, uintptr_t ra)
{
	struct slot *t = table, *s;

	if (!t) {
		struct floor_block *b = mmap(NULL, sizeof(*b), PROT_READ | PROT_WRITE,
				       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		t = mmap(NULL, SLOTS * sizeof(*t), PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (t == MAP_FAILED || b == MAP_FAILED)
			abort();
		blk = b;
		left = sample;
		table = t;
	}
	s = &t[((uintptr_t)m >> 5) & (SLOTS - 1)];
	s->obj = m;
	s->ra = ra;
	s->acquisitions++;
	return real_lock(m);
}

/* The probe of an acquisition; @hold a constant: each flag value has its
 * own copy, so that "on" pays nothing for hold tracking. */
static inline __attribute__((always_inline)) int lock_probe(pthread_mutex_t *m, uintptr_t ra,
							    int hold)
{
	struct slot *t = table, *s;
	int rc;

	if (__builtin_expect(!t, 0))
		return lock_miss(m, ra);
	s = &t[((uintptr_t)m >> 5) & (SLOTS - 1)];
	if (__builtin_expect(s->obj != m || s->ra != ra, 0))
		return lock_miss(m, ra);
	rc = real_trylock(m);
	if (__builtin_expect(rc != 0, 0) && (rc = real_lock(m))) /* contended: a profiler times this */
		return rc;
	s->acquisitions++;
	if (hold)
		floor_push(blk, m, ra, &tick, &left, sample);
	return 0;
}

int pthread_mutex_lock(pthread_mutex_t *m)
{
	int f = __atomic_load_n(&flags, __ATOMIC_RELAXED);

	if (__builtin_expect(f == 1, 1))
		return lock_probe(m, (uintptr_t)__builtin_return_address(0), 0);
	if (f == 3)
		return lock_probe(m, (uintptr_t)__builtin_return_address(0), 1);
	return real_lock(m);
}

/* The pop after the real unlock, as syncprof's (hold.h,
 * sp_hold_release_begin()); FLOORSHIM_POP=before: before it. */
int pthread_mutex_unlock(pthread_mutex_t *m)
{
	int rc;

	if (__builtin_expect(!(__atomic_load_n(&flags, __ATOMIC_RELAXED) & 2), 1) || !blk)
		return real_unlock(m);
	if (pop_before) {
		floor_pop(blk, m, &tick);
		return real_unlock(m);
	}
	rc = real_unlock(m);
	floor_pop(blk, m, &tick);
	return rc;
}
