/*
 * test_hist.c - the histograms of entries (src/record/hist.c): allocated
 * at the first count from the table's pool, 32-bit counts widened to
 * 64-bit when one would wrap, folded into another table, read back.
 */
#include <errno.h>

#include "harness.h"
#include "record/record.h"
#include "syncprof.h"

static struct sp_entry *new_entry(struct sp_table *t, uintptr_t obj)
{
	struct sp_site site = { "hist.c", "fn", 0, 1 };
	struct sp_entry *e = sp_table_insert(t, &site, obj, SP_TYPE_MUTEX, SP_TYPE_MUTEX);

	T_ASSERT(e != NULL);
	return e;
}

/* A histogram appears at its first count and widens when a count would
 * wrap, keeping every count. */
static void test_widen(void)
{
	struct sp_table t;
	struct sp_entry *e;
	uintptr_t *slot;
	uint64_t out[SP_HIST_BUCKETS];

	sp_table_init(&t);
	e = new_entry(&t, 0x1000);
	slot = &e->cold->hist[SP_HIST_WAIT];
	T_ASSERT_INT(sp_hist_read(slot, out), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, slot, 5, 1), ==, 0);
	T_ASSERT(*slot != 0 && !(*slot & SP_HIST_WIDE));
	T_ASSERT_UINT(*slot % 64, ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, slot, 5, UINT32_MAX - 1), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, slot, 7, 3), ==, 0);
	T_ASSERT(!(*slot & SP_HIST_WIDE)); /* 2^32 - 1 still fits */
	T_ASSERT_INT(sp_hist_read(slot, out), ==, 1);
	T_ASSERT_UINT(out[5], ==, UINT32_MAX);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, slot, 5, 1), ==, 0);
	T_ASSERT(*slot & SP_HIST_WIDE);
	T_ASSERT_INT(sp_hist_read(slot, out), ==, 1);
	T_ASSERT_UINT(out[5], ==, 1ull << 32);
	T_ASSERT_UINT(out[7], ==, 3);
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
		if (b != 5 && b != 7)
			T_ASSERT_UINT(out[b], ==, 0);
	/* Wide: counts beyond 32 bits add up. */
	T_ASSERT_INT(sp_hist_add__slowpath(&t, slot, 5, 1ull << 40), ==, 0);
	T_ASSERT_INT(sp_hist_read(slot, out), ==, 1);
	T_ASSERT_UINT(out[5], ==, (1ull << 32) + (1ull << 40));
	/* The other histogram of the entry is its own. */
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_HOLD], out), ==, 0);
	/* Without a table nothing can be allocated. */
	T_ASSERT_INT(sp_hist_add__slowpath(NULL, &e->cold->hist[SP_HIST_HOLD], 1, 1), ==, -ENOMEM);
	T_ASSERT_UINT(e->cold->hist[SP_HIST_HOLD], ==, 0);
	sp_table_destroy(&t);
}

/* Many entries: blocks come from several slabs, each its own. */
static void test_pool(void)
{
	struct sp_table t;
	uint64_t out[SP_HIST_BUCKETS];
	enum { N = 500 };

	sp_table_init(&t);
	for (unsigned i = 0; i < N; i++) {
		struct sp_entry *e = new_entry(&t, 0x1000 + 64 * i);

		T_ASSERT_INT(sp_hist_add__slowpath(&t, &e->cold->hist[SP_HIST_WAIT],
						   i % SP_HIST_BUCKETS, i + 1), ==, 0);
		T_ASSERT_INT(sp_hist_add__slowpath(&t, &e->cold->hist[SP_HIST_HOLD], 0, 1), ==, 0);
	}
	for (unsigned i = 0; i < N; i++) {
		struct sp_entry *e = sp_table_at(&t, i);

		T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
		for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
			T_ASSERT_UINT(out[b], ==, b == i % SP_HIST_BUCKETS ? i + 1 : 0);
	}
	sp_table_destroy(&t);
}

/* Folding a table into another adds the histograms, widening the sum. */
static void test_fold(void)
{
	struct sp_table a, into;
	struct sp_entry *e;
	uint64_t out[SP_HIST_BUCKETS];

	sp_table_init(&a);
	sp_table_init(&into);
	e = new_entry(&a, 0x2000);
	T_ASSERT_INT(sp_hist_add__slowpath(&a, &e->cold->hist[SP_HIST_WAIT], 3, UINT32_MAX), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&a, &e->cold->hist[SP_HIST_HOLD], 9, 16), ==, 0);
	new_entry(&a, 0x3000); /* no histograms */
	T_ASSERT_INT(sp_table_fold(&into, &a), ==, 0);
	T_ASSERT_INT(sp_table_fold(&into, &a), ==, 0);
	T_ASSERT_UINT(sp_table_count(&into), ==, 2);
	e = sp_table_at(&into, 0);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[3], ==, 2ull * UINT32_MAX);
	T_ASSERT(e->cold->hist[SP_HIST_WAIT] & SP_HIST_WIDE);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_HOLD], out), ==, 1);
	T_ASSERT_UINT(out[9], ==, 32);
	T_ASSERT_INT(sp_hist_read(&sp_table_at(&into, 1)->cold->hist[SP_HIST_WAIT], out), ==, 0);
	sp_table_destroy(&a);
	sp_table_destroy(&into);
}

/* The probe's path: sp_entry_hist_add() on the calling thread's entry; a
 * thread that is not recording (no table to allocate from) counts the
 * value as lost. */
static void test_entry_add(void)
{
	struct sp_table t;
	struct sp_entry *e;
	uint64_t out[SP_HIST_BUCKETS], lost = syncprof_lost_events();

	sp_table_init(&t);
	e = new_entry(&t, 0x4000);
	T_ASSERT(sp_tls_self == NULL);
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 1);
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost + 1);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, &e->cold->hist[SP_HIST_WAIT], 0, 1), ==, 0);
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 1); /* a block exists: no table needed */
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 2);
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost + 1);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[sp_hist_bucket(100)], ==, 3);
	sp_table_destroy(&t);
}

int main(void)
{
	test_widen();
	test_pool();
	test_fold();
	test_entry_add();
	puts("test_hist: ok");
	return 0;
}
