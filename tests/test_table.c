/*
 * test_table.c - a thread's table of entries (src/record/table.c) with
 * home slots: the first entry of a lock takes the slot its address picks,
 * a second entry of that lock (another site, another op) and a lock whose
 * slot is taken (an alias 64 KiB away) go to the chunks; every entry is
 * found again by its key, is one index of sp_table_at() exactly once
 * (free slots NULL), counts in sp_table_count(), keeps its counters
 * through an index growth, and folds into a table without home slots
 * (the retired threads') with the same counts.  An entry's cold part is
 * marked when first written (cold_set), and the fold, a reset and a
 * reused table leave the pages of cold parts never written untouched.
 * A thread's table lent its home arrays and first index by its record's
 * mapping (sp_table_init_in()) works the same, grows its index past the
 * lent one, and neither the growth nor its destruction unmaps what it was
 * lent.  A joined thread's entry takes no home slot.
 */
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "record/record.h"

#define ALIAS (SP_LOCK_SLOTS * 32) /* the same home slot (sp_lock_slot()) */

static const struct sp_site site_a = { "table.c", "a", 0, 10 };
static const struct sp_site site_b = { "table.c", "b", 0, 20 };

static struct sp_entry *put(struct sp_table *t, const struct sp_site *s, uintptr_t obj, int op,
			    uint64_t n)
{
	struct sp_entry *e = sp_table_find(t, s, obj, op);

	if (!e)
		e = sp_table_insert(t, s, obj, op, op);
	T_ASSERT(e != NULL);
	e->acquisitions += n;
	return e;
}

/* Every entry of @t by index, once: the sum of their acquisitions. */
static uint64_t walk(const struct sp_table *t, size_t *n_live)
{
	uint64_t sum = 0;

	*n_live = 0;
	for (size_t i = 0; i < sp_table_span(t); i++) {
		const struct sp_entry *e = sp_table_at(t, i);

		if (!e)
			continue;
		++*n_live;
		sum += e->acquisitions;
	}
	return sum;
}

static void test_home(void)
{
	struct sp_table t, retired;
	struct sp_entry *a, *b, *alias, *rd;
	uintptr_t base = 0x7f0000001000;
	uint64_t sum = 0;
	size_t live;

	sp_table_init(&t);
	t.use_home = 1;
	sp_table_init(&retired);
	a = put(&t, &site_a, base, SP_TYPE_MUTEX, 1);
	T_ASSERT(a == sp_home_entry(&t, base)); /* the lock's first entry: home */
	b = put(&t, &site_b, base, SP_TYPE_MUTEX, 2);        /* same lock, other site */
	rd = put(&t, &site_a, base, SP_TYPE_RWLOCK_READ, 3); /* same lock, other op */
	alias = put(&t, &site_a, base + ALIAS, SP_TYPE_MUTEX, 4);
	T_ASSERT(b != a && rd != a && alias != a);
	T_ASSERT(sp_home_entry(&t, base + ALIAS) == a); /* its slot was taken */
	T_ASSERT_UINT(sp_table_count(&t), ==, 4);
	T_ASSERT_UINT(walk(&t, &live), ==, 10);
	T_ASSERT_UINT(live, ==, 4);
	sum = 10;
	/* Many more locks: some in home slots, the rest (their slots taken)
	 * in the chunks; the index grows several times meanwhile. */
	for (uintptr_t i = 1; i < 3000; i++) {
		uintptr_t obj = base + 0x100000 + i * 64 + (i % 2 ? ALIAS * 3 : 0);

		put(&t, &site_a, obj, SP_TYPE_MUTEX, i);
		sum += i;
	}
	T_ASSERT_UINT(sp_table_count(&t), ==, 4 + 2999);
	T_ASSERT(t.n_home > 500 && t.n_home < 2000);
	T_ASSERT_UINT(walk(&t, &live), ==, sum);
	T_ASSERT_UINT(live, ==, 4 + 2999);
	/* Found again by key, each with its own counter. */
	T_ASSERT(sp_table_find(&t, &site_a, base, SP_TYPE_MUTEX) == a);
	T_ASSERT(sp_table_find(&t, &site_b, base, SP_TYPE_MUTEX) == b);
	T_ASSERT(sp_table_find(&t, &site_a, base + ALIAS, SP_TYPE_MUTEX) == alias);
	T_ASSERT_UINT(sp_table_find(&t, &site_a, base + 0x100000 + 2999 * 64 + ALIAS * 3,
				    SP_TYPE_MUTEX)->acquisitions, ==, 2999);
	T_ASSERT(sp_table_find(&t, &site_b, base + ALIAS, SP_TYPE_MUTEX) == NULL);
	/* Folded into a table without home slots: the same entries. */
	T_ASSERT_INT(sp_table_fold(&retired, &t), ==, 0);
	T_ASSERT_UINT(sp_table_count(&retired), ==, 4 + 2999);
	T_ASSERT_UINT(sp_table_span(&retired), ==, 4 + 2999);
	T_ASSERT_UINT(walk(&retired, &live), ==, sum);
	sp_table_destroy(&t);
	sp_table_destroy(&retired);
	T_ASSERT(t.home == NULL && t.n_home == 0);
}

/* Pages of @n bytes at @p that are resident (mapped, the zero page too). */
static unsigned resident_pages(const void *p, size_t n)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	uintptr_t lo = (uintptr_t)p & ~(page - 1);
	size_t pages = ((uintptr_t)p + n - lo + page - 1) / page;
	unsigned char vec[256];
	unsigned in = 0;

	T_ASSERT(pages <= sizeof(vec));
	T_ASSERT_INT(mincore((void *)lo, pages * page, vec), ==, 0);
	for (size_t i = 0; i < pages; i++)
		in += vec[i] & 1;
	return in;
}

/*
 * Cold parts: 1,000 entries of interposed calls (no function name), one
 * of which waited.  Only that one is marked; the fold carries its wait
 * and the others' counters, and no page of the last chunk's cold parts
 * - written by nobody - is faulted in, in either table.  Reset for the
 * next thread, the entry that waited starts empty and unmarked.
 */
static void test_cold(void)
{
	struct sp_table t, into;
	const struct sp_entry_cold *c;
	struct sp_entry *waited, *e;
	uint64_t sum = 0;
	size_t live;
	unsigned k;

	sp_table_init(&t);
	sp_table_init(&into);
	for (uintptr_t i = 0; i < 1000; i++) {
		const struct sp_site site = { NULL, NULL, 0x401000 + i % 7, 0 };

		e = put(&t, &site, 0x7f0000100000 + i * 64, SP_TYPE_MUTEX, i + 1);
		T_ASSERT(!e->cold_set);
		sum += i + 1;
	}
	waited = sp_table_at(&t, 0);
	sp_entry_record_wait(waited, 5000, 1);
	T_ASSERT(waited->cold_set);
	T_ASSERT_UINT(waited->cold->wait_max_ns, ==, 5000);
	for (k = 0; k + 1 < SP_MAX_CHUNKS && t.cold_chunks[k + 1]; k++)
		;
	T_ASSERT(k >= 2);
	T_ASSERT_UINT(resident_pages(t.cold_chunks[k], (SP_CHUNK0 << k) * sizeof(*c)), ==, 0);
	T_ASSERT_INT(sp_table_fold(&into, &t), ==, 0);
	T_ASSERT_UINT(walk(&into, &live), ==, sum + 1);
	T_ASSERT_UINT(live, ==, 1000);
	T_ASSERT_UINT(resident_pages(t.cold_chunks[k], (SP_CHUNK0 << k) * sizeof(*c)), ==, 0);
	T_ASSERT_UINT(resident_pages(into.cold_chunks[k], (SP_CHUNK0 << k) * sizeof(*c)), ==, 0);
	e = sp_table_find(&into, &(struct sp_site){ NULL, NULL, 0x401000, 0 }, 0x7f0000100000,
			  SP_TYPE_MUTEX);
	T_ASSERT(e && e->cold_set && e->contended == 1);
	c = sp_entry_cold_r(e);
	T_ASSERT_UINT(c->wait_max_ns, ==, 5000);
	e = sp_table_at(&into, 1);
	T_ASSERT(e && !e->cold_set && sp_entry_cold_r(e) == &sp_entry_cold_zero);
	sp_table_destroy(&t);
	sp_table_destroy(&into);
	/* A small table reset for the next thread: empty, and what was
	 * written is gone. */
	sp_table_init(&t);
	for (uintptr_t i = 0; i < 10; i++)
		put(&t, &(struct sp_site){ NULL, NULL, 0x401000, 0 }, 0x7f0000100000 + i * 64,
		    SP_TYPE_MUTEX, 1);
	sp_entry_record_wait(sp_table_at(&t, 3), 7000, 1);
	T_ASSERT_INT(sp_table_reset(&t, NULL), ==, 1);
	T_ASSERT_UINT(sp_table_count(&t), ==, 0);
	for (uintptr_t i = 0; i < 10; i++) {
		e = put(&t, &(struct sp_site){ NULL, NULL, 0x401000, 0 }, 0x7f0000100000 + i * 64,
			SP_TYPE_MUTEX, 1);
		T_ASSERT(!e->cold_set && e->cold->wait_max_ns == 0 && !e->cold->hist[SP_HIST_WAIT]);
	}
	sp_table_destroy(&t);
}

/* 1 when the page of @p is mapped (mincore() fails with ENOMEM if not). */
static int mapped(const void *p)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	unsigned char vec;

	return !mincore((void *)((uintptr_t)p & ~(page - 1)), page, &vec);
}

static void test_lent(void)
{
	size_t bytes = sp_table_lent_bytes();
	unsigned char *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uintptr_t base = 0x7f0000201000;
	struct sp_table t, retired;
	struct sp_entry **lent_index;
	struct sp_entry *a, *j;
	uint64_t sum = 0;
	size_t live;

	T_ASSERT(mem != MAP_FAILED);
	sp_table_init_in(&t, mem);
	sp_table_init(&retired);
	lent_index = t.index;
	/* The lent home slots are published at the first insert, which
	 * writes before anything reads them (table.c, home_alloc()). */
	T_ASSERT(t.use_home && !t.home && (unsigned char *)t.home_lent == mem);
	T_ASSERT(!sp_home_entry(&t, base));
	T_ASSERT((unsigned char *)lent_index > mem && (unsigned char *)lent_index < mem + bytes);
	a = put(&t, &site_a, base, SP_TYPE_MUTEX, 1);
	T_ASSERT((unsigned char *)t.home == mem);
	T_ASSERT(a == sp_home_entry(&t, base) && (unsigned char *)a >= mem &&
		 (unsigned char *)a < mem + bytes);
	T_ASSERT((unsigned char *)a->cold >= mem && (unsigned char *)a->cold < mem + bytes);
	/* A joined thread takes no home slot: the chunks, found by key. */
	j = put(&t, &site_b, base + 0x8001c0, SP_TYPE_JOIN, 1);
	T_ASSERT((unsigned char *)j < mem || (unsigned char *)j >= mem + bytes);
	T_ASSERT(!(sp_home_entry(&t, base + 0x8001c0)->flags & SP_ENTRY_LIVE));
	T_ASSERT(sp_table_find(&t, &site_b, base + 0x8001c0, SP_TYPE_JOIN) == j);
	sum = 2;
	/* Past the lent index's 256 slots: it grows into a mapping of its own. */
	for (uintptr_t i = 1; i < 1500; i++) {
		put(&t, &site_a, base + i * 64 + (i % 2 ? ALIAS * 5 : 0), SP_TYPE_MUTEX, i);
		sum += i;
	}
	T_ASSERT(t.index != lent_index);
	T_ASSERT(mapped(lent_index)); /* not unmapped by the growth */
	T_ASSERT(sp_table_find(&t, &site_a, base, SP_TYPE_MUTEX) == a);
	T_ASSERT_UINT(walk(&t, &live), ==, sum);
	T_ASSERT_UINT(live, ==, 1501);
	T_ASSERT_INT(sp_table_fold(&retired, &t), ==, 0);
	T_ASSERT_UINT(walk(&retired, &live), ==, sum);
	sp_table_destroy(&t);
	/* The lender's memory is the lender's to unmap. */
	T_ASSERT(mapped(mem) && mapped(mem + bytes - 1) && mapped(lent_index));
	T_ASSERT_INT(munmap(mem, bytes), ==, 0);
	sp_table_destroy(&retired);
}

int main(void)
{
	test_home();
	test_lent();
	test_cold();
	puts("test_table: ok");
	return 0;
}
