/*
 * floor_held.h - the held list of the benchmarks' floors (docs/cost.md,
 * "The floor"): lockbench's floorhold and floortryhold, and floorshim.c's
 * FLOORSHIM=hold.  The least hold tracking must do so that another thread
 * can name a lock's holder and a hold can be bounded by the coarse tick:
 * a push of the lock, its site and the tick into the thread's block,
 * published by one release store of the block's state word (a sequence
 * and the count, as syncprof's own blocks in src/record/hold.h), and at
 * the unlock a pop when the top is this lock at the same tick; one hold in
 * @sample is timed with two TSC reads (the sample of the short holds).
 *
 * No recursion check, no owner changes, no random sample gap, no ticker
 * (the tick is read and never moves): a lower bound, not a design.  One
 * copy for the floors, so that the compiled-in and the interposed ones
 * measure the same work.
 */
#ifndef FLOOR_HELD_H
#define FLOOR_HELD_H

#include <stdint.h>

#define FLOOR_HELD_MAX 8
#define FLOOR_INLINE static inline __attribute__((always_inline, unused))

struct floor_held {
	const void *obj;
	uintptr_t site;
	uint64_t tick;
	uint64_t t0; /* a sampled hold's TSC at acquisition, else 0 */
};

struct floor_block {
	uint64_t state; /* seq << 32 | n, stored last */
	struct floor_held e[FLOOR_HELD_MAX];
	uint64_t sampled_ns, sampled_n;
};

/* After the acquisition of @obj at @site: @left counts down to the next
 * sampled hold (@sample 0: none). */
FLOOR_INLINE void floor_push(struct floor_block *b, const void *obj, uintptr_t site,
			     const uint64_t *tick, unsigned *left, unsigned sample)
{
	uint64_t state = b->state;
	uint32_t n = (uint32_t)state;
	struct floor_held *h = &b->e[n];

	if (__builtin_expect(n >= FLOOR_HELD_MAX, 0))
		return; /* untracked */
	__atomic_store_n(&h->obj, obj, __ATOMIC_RELAXED);
	__atomic_store_n(&h->site, site, __ATOMIC_RELAXED);
	h->tick = __atomic_load_n(tick, __ATOMIC_RELAXED);
	h->t0 = 0;
	if (__builtin_expect(sample && --*left == 0, 0)) {
		*left = sample;
		h->t0 = __builtin_ia32_rdtsc();
	}
	__atomic_store_n(&b->state, state + (2ull << 32) + 1, __ATOMIC_RELEASE);
}

/* Before the unlock of @obj. */
FLOOR_INLINE void floor_pop(struct floor_block *b, const void *obj, const uint64_t *tick)
{
	uint64_t state = b->state;
	uint32_t n = (uint32_t)state;
	struct floor_held *h;

	if (__builtin_expect(!n, 0))
		return;
	h = &b->e[n - 1];
	if (__builtin_expect(h->obj == obj &&
				     h->tick == __atomic_load_n(tick, __ATOMIC_RELAXED),
			     1)) {
		if (__builtin_expect(h->t0 != 0, 0)) {
			b->sampled_ns += __builtin_ia32_rdtsc() - h->t0;
			b->sampled_n++;
		}
		__atomic_store_n(&b->state, state + (2ull << 32) - 1, __ATOMIC_RELEASE);
	}
}

#endif /* FLOOR_HELD_H */
