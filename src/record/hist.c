/*
 * hist.c - the histograms of an entry: its contended waits and its timed
 * holds, in the bucket layout of base/types.h, allocated on first use.
 *
 * Design.  Most entries never wait and are never timed holding (a large
 * program has many locks and few contended ones), so an entry's cold part
 * holds only a word per histogram, 0 until its first count.  That count
 * takes a block from a pool of the entry's table: slabs of SLAB_BYTES
 * mmap'd by the owner, cut into blocks of 64-byte multiples, never freed
 * while the table lives (sp_table_destroy() unmaps them with it), so a
 * report can read a block at any time.  Counts are 32-bit (struct
 * sp_hist32: 4 bytes a bucket); a count that would wrap widens the
 * histogram once to 64-bit counts (struct sp_hist64): the owner copies the
 * counts into a new block and publishes it in place of the old one, which
 * it never writes again.
 *
 * Concurrency: only the owning thread writes an entry's histograms, with
 * relaxed stores; a block is published with a release store of the word
 * (after its counts), so a reader that loads the word with acquire reads
 * whole counts of a complete block: the narrow block before a widening
 * (whose counts stop where they were), the wide one after.  The retired
 * aggregate's histograms are written by sp_table_fold() under the
 * registry lock, which readers hold too.
 *
 * Memory per entry: 16 bytes in the cold part.  While every count of a
 * histogram is in one bucket, the word holds the bucket and the count
 * itself (SP_HIST_ONE); the second bucket takes a block of SP_HIST_FEW_N
 * such words (64 bytes, one cache line), one per bucket; the ninth a
 * narrow block of SP_HIST_BUCKETS x 4 = 1216 bytes (2432 bytes once
 * widened, which takes 2^32 counts in one bucket of one thread's entry).
 * A slab holds 53 narrow blocks, or 1023 of a few buckets.  Most entries
 * with a histogram have a few counts in it: a lock waited for once or
 * twice, or one of many locks whose holds are sampled.  sysbench mutex
 * under --hold (4,096 locks, 50,000 acquisitions a thread, a sampled hold
 * every 16 on average) took a narrow block for nearly every lock of each
 * thread, 10 MB and 5,000 page faults in 0.2 s, before the two small
 * forms.
 *
 * A block's pages are first touched by a store (pool_alloc()): a first
 * load would map the shared zero page, and the store after it would then
 * fault again and flush the page from every CPU the process runs on (an
 * IPI to each, a VM exit here).
 *
 * Cost: recording a contended wait (sp_entry_record_wait() in a loop)
 * went from 4.5 to 5.6 ns on one entry, from 4.7 to 8.4 ns over 1024
 * entries (the block is one more cache line to miss), next to a futex
 * wait and two clock reads; the uncontended path does not change.
 *
 * Alternatives considered: the histograms inline in the cold part (as
 * before: 2 x 40 x 8 = 640 bytes of every entry, most never written; a
 * finer layout would have made it 2 x 304 x 8, ~5 KiB an entry); malloc for
 * the blocks (the probe never mallocs: it may run inside malloc's own
 * locks); halving every count when one overflows (the histogram would no
 * longer add up to the entry's contended count).
 */
#include <errno.h>
#include <string.h>

#include "record/record.h"

#define SLAB_BYTES (64 * 1024)
#define SLAB_HEADER 64 /* the link to the next slab; blocks stay 64-aligned */

_Static_assert(SLAB_HEADER + sizeof(struct sp_hist64) <= SLAB_BYTES, "a block fits a slab");
_Static_assert(sizeof(struct sp_hist32) == 1216 && sizeof(struct sp_hist64) == 2432,
	       "the block sizes hist.c and docs/layout.md state");

/* Owner only: @size bytes of zeroed memory, 64-aligned (a block starts a
 * cache line; bit 0 of its address is free for SP_HIST_WIDE). */
static void *pool_alloc(struct sp_hist_pool *p, size_t size)
{
	unsigned char *r;

	size = (size + 63) & ~(size_t)63;
	if (p->left < size) {
		unsigned char *s = sp_mmap(SLAB_BYTES);

		if (!s)
			return NULL;
		*(void **)s = p->slabs;
		p->slabs = s;
		p->next = s + SLAB_HEADER;
		p->left = SLAB_BYTES - SLAB_HEADER;
	}
	r = p->next;
	p->next += size;
	p->left -= size;
	/* Its new pages written first (the design above); zeros, so pages
	 * already there are unchanged and no reader sees a difference. */
	for (uintptr_t a = (uintptr_t)r; a < (uintptr_t)p->next; a = (a | 4095) + 1)
		sp_store_relaxed((unsigned char *)a, 0);
	return r;
}

void *sp_table_alloc(struct sp_table *t, size_t size)
{
	return pool_alloc(&t->hist_pool, size);
}

void sp_hist_pool_destroy(struct sp_hist_pool *p)
{
	void *s = p->slabs;

	while (s) {
		void *next = *(void **)s;

		sp_munmap(s, SLAB_BYTES);
		s = next;
	}
	p->slabs = NULL;
	p->next = NULL;
	p->left = 0;
}

int sp_hist_pool_reset(struct sp_hist_pool *p)
{
	unsigned char *keep = p->slabs;

	if (!keep)
		return 0;
	/* Older slabs go; the newest stays, its used part zeroed as a fresh
	 * mapping would be (pool_alloc() hands out zeroed memory). */
	for (void *s = *(void **)keep; s;) {
		void *next = *(void **)s;

		sp_munmap(s, SLAB_BYTES);
		s = next;
	}
	*(void **)keep = NULL;
	memset(keep + SLAB_HEADER, 0, (size_t)(p->next - (keep + SLAB_HEADER)));
	p->next = keep + SLAB_HEADER;
	p->left = SLAB_BYTES - SLAB_HEADER;
	return 1;
}

/* A histogram's word, or a word of a few-bucket block: @count in bucket @b. */
static uintptr_t one_word(unsigned b, uint64_t count)
{
	return (uintptr_t)count << SP_HIST_ONE_SHIFT | (uintptr_t)b << 2 | SP_HIST_ONE;
}

#define ONE_MAX (UINT64_MAX >> SP_HIST_ONE_SHIFT)
#define ONE_BUCKET(h) ((unsigned)((h) >> 2) & ((1u << (SP_HIST_ONE_SHIFT - 2)) - 1))
#define ONE_COUNT(h) ((uint64_t)(h) >> SP_HIST_ONE_SHIFT)
#define FEW_WORDS(h) ((uintptr_t *)((h) & ~(uintptr_t)SP_HIST_TAGS))

_Static_assert(SP_HIST_FEW_N * sizeof(uintptr_t) == 64, "a few-bucket block is one cache line");

/* The histogram *@slot (empty, one bucket, a few, or narrow) into a new
 * block of all buckets: narrow, or wide when @wide says so (a count is
 * about to wrap) or a count does not fit 32 bits.  The old block, if any,
 * is never written again (the design above). */
static int to_block(struct sp_table *t, uintptr_t *slot, int wide)
{
	uint64_t counts[SP_HIST_BUCKETS] = { 0 }, max = 0;

	sp_hist_read(slot, counts);
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
		max = counts[b] > max ? counts[b] : max;
	if (!wide && max <= UINT32_MAX) {
		struct sp_hist32 *n = t ? pool_alloc(&t->hist_pool, sizeof(*n)) : NULL;

		if (!n)
			return -ENOMEM;
		for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
			n->n[b] = (uint32_t)counts[b];
		sp_store_release(slot, (uintptr_t)n);
	} else {
		struct sp_hist64 *w = t ? pool_alloc(&t->hist_pool, sizeof(*w)) : NULL;

		if (!w)
			return -ENOMEM;
		for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
			w->n[b] = counts[b];
		sp_store_release(slot, (uintptr_t)w | SP_HIST_WIDE);
	}
	return 0;
}

/* Add @count to bucket @b of the few-bucket block @w: 0, or -1 when the
 * block has no room for it (nine buckets, or a count beyond the word). */
static int few_add(uintptr_t *w, unsigned b, uint64_t count)
{
	for (unsigned i = 0; i < SP_HIST_FEW_N; i++) {
		uintptr_t x = w[i];

		if (!x) {
			sp_store_relaxed(&w[i], one_word(b, count));
			return 0;
		}
		if (ONE_BUCKET(x) == b) {
			if (count > ONE_MAX - ONE_COUNT(x))
				return -1;
			sp_store_relaxed(&w[i], one_word(b, ONE_COUNT(x) + count));
			return 0;
		}
	}
	return -1;
}

SP_NOINLINE int sp_hist_add__slowpath(struct sp_table *t, uintptr_t *slot, unsigned b,
				      uint64_t count)
{
	uintptr_t h = *slot;
	uint64_t *wide;

	if (!h && count <= ONE_MAX) {
		sp_store_release(slot, one_word(b, count));
		return 0;
	}
	if (h & SP_HIST_ONE) {
		uintptr_t *w;

		if (ONE_BUCKET(h) == b && count <= ONE_MAX - ONE_COUNT(h)) {
			sp_store_relaxed(slot, one_word(b, ONE_COUNT(h) + count));
			return 0;
		}
		if (!(w = t ? pool_alloc(&t->hist_pool, SP_HIST_FEW_N * sizeof(*w)) : NULL))
			return -ENOMEM;
		w[0] = h;
		h = (uintptr_t)w | SP_HIST_FEW;
		sp_store_release(slot, h);
	}
	if (h & SP_HIST_FEW && count <= ONE_MAX && !few_add(FEW_WORDS(h), b, count))
		return 0;
	if (!h || h & SP_HIST_FEW) {
		if (to_block(t, slot, 0))
			return -ENOMEM;
		h = *slot;
	}
	if (!(h & SP_HIST_WIDE)) {
		uint32_t *c = &((struct sp_hist32 *)h)->n[b];

		if (count <= UINT32_MAX - *c) {
			sp_store_relaxed(c, (uint32_t)(*c + count));
			return 0;
		}
		if (to_block(t, slot, 1))
			return -ENOMEM;
		h = *slot;
	}
	wide = &((struct sp_hist64 *)(h & ~(uintptr_t)SP_HIST_WIDE))->n[b];
	sp_store_relaxed(wide, *wide + count);
	return 0;
}

int sp_hist_read(const uintptr_t *slot, uint64_t *out)
{
	uintptr_t h = sp_load_acquire(slot);

	if (!h)
		return 0;
	if (h & (SP_HIST_ONE | SP_HIST_FEW)) {
		memset(out, 0, SP_HIST_BUCKETS * sizeof(*out));
		if (h & SP_HIST_ONE) {
			out[ONE_BUCKET(h)] = ONE_COUNT(h);
			return 1;
		}
		for (unsigned i = 0; i < SP_HIST_FEW_N; i++) {
			uintptr_t x = sp_load_relaxed(&FEW_WORDS(h)[i]);

			if (x)
				out[ONE_BUCKET(x)] += ONE_COUNT(x);
		}
	} else if (h & SP_HIST_WIDE) {
		const struct sp_hist64 *w = (const void *)(h & ~(uintptr_t)SP_HIST_WIDE);

		for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
			out[b] = sp_load_relaxed(&w->n[b]);
	} else {
		const struct sp_hist32 *n = (const void *)h;

		for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
			out[b] = sp_load_relaxed(&n->n[b]);
	}
	return 1;
}

int sp_hist_fold(struct sp_table *into, uintptr_t *slot, const uintptr_t *from)
{
	uint64_t counts[SP_HIST_BUCKETS];

	if (!sp_hist_read(from, counts))
		return 0;
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
		if (counts[b] && sp_hist_add__slowpath(into, slot, b, counts[b]))
			return -ENOMEM;
	return 0;
}
