/*
 * test_hist.c - the histograms of entries (src/record/hist.c): allocated
 * at the first count from the table's pool, 32-bit counts widened to
 * 64-bit when one would wrap, folded into another table, read back; and
 * the percentiles of known waits recorded as the probe records them,
 * collected into report rows: within 1/16 of the exact values.
 */
#include <errno.h>
#include <math.h>

#include "harness.h"
#include "record/record.h"
#include "report/collect.h"
#include "syncprof.h"
#include "record/registry.h"

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
	slot = &sp_entry_cold_w(e)->hist[SP_HIST_WAIT];
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
	T_ASSERT_INT(sp_hist_add__slowpath(NULL, &sp_entry_cold_w(e)->hist[SP_HIST_HOLD], 1, 1), ==, -ENOMEM);
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

		T_ASSERT_INT(sp_hist_add__slowpath(&t, &sp_entry_cold_w(e)->hist[SP_HIST_WAIT],
						   i % SP_HIST_BUCKETS, i + 1), ==, 0);
		T_ASSERT_INT(sp_hist_add__slowpath(&t, &sp_entry_cold_w(e)->hist[SP_HIST_HOLD], 0, 1), ==, 0);
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
	T_ASSERT_INT(sp_hist_add__slowpath(&a, &sp_entry_cold_w(e)->hist[SP_HIST_WAIT], 3, UINT32_MAX), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&a, &sp_entry_cold_w(e)->hist[SP_HIST_HOLD], 9, 16), ==, 0);
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
	T_ASSERT_INT(sp_hist_add__slowpath(&t, &sp_entry_cold_w(e)->hist[SP_HIST_WAIT], 0, 1), ==, 0);
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 1); /* a block exists: no table needed */
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 2);
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost + 1);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[sp_hist_bucket(100)], ==, 3);
	sp_table_destroy(&t);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The nearest-rank percentile @pct of @zeros waits of 0 and the @n sorted
 * waits @w. */
static uint64_t exact_percentile(const uint64_t *w, size_t n, size_t zeros, unsigned pct)
{
	size_t rank = ((n + zeros) * pct + 99) / 100;

	if (rank < 1)
		rank = 1;
	return rank <= zeros ? 0 : w[rank - zeros - 1];
}

/*
 * Record the waits @w (n of them, in the order given) and @zeros
 * uncontended acquisitions on a new entry of this thread, as the probe
 * does, collect the report rows and compare the row's percentiles with the
 * exact ones: a bucket is at most 1/8 of its lower bound wide and the
 * percentile is its midpoint, so the error is at most 1/16.
 */
static void check_waits(const char *name, uintptr_t obj, uint64_t *w, size_t n, uint64_t zeros)
{
	struct sp_thread *t = sp_thread_self__slowpath();
	struct sp_entry *e;
	struct sp_rows rows;
	const struct sp_row *r = NULL;
	static const unsigned pcts[] = { 1, 10, 50, 90, 99, 100 };

	T_ASSERT(t != NULL);
	e = new_entry(&t->table, obj);
	for (size_t i = 0; i < n; i++)
		sp_entry_record_wait(e, w[i], 1);
	sp_store_relaxed(&e->acquisitions, e->acquisitions + zeros);
	T_ASSERT_INT(sp_collect(&rows, 0), ==, 0);
	for (size_t i = 0; i < rows.n; i++)
		if (rows.v[i].obj == obj)
			r = &rows.v[i];
	T_ASSERT(r != NULL);
	T_ASSERT_UINT(sp_hist_total(&sp_row_d(r)->hist), ==, n);
	qsort(w, n, sizeof(*w), cmp_u64);
	for (unsigned k = 0; k < sizeof(pcts) / sizeof(*pcts); k++) {
		uint64_t exact = exact_percentile(w, n, zeros, pcts[k]);
		uint64_t got = sp_row_percentile(r, pcts[k] / 100.0);
		uint64_t err = got > exact ? got - exact : exact - got;

		printf("%-12s p%-3u exact %10llu  reported %10llu  error %.4f\n", name, pcts[k],
		       (unsigned long long)exact, (unsigned long long)got,
		       exact ? (double)err / (double)exact : (double)err);
		T_ASSERT_UINT(err * 16, <=, exact);
		if (exact < 16)
			T_ASSERT_UINT(got, ==, exact);
	}
	T_ASSERT_UINT(sp_row_percentile(r, 1.0), <=, w[n - 1]); /* capped at the maximum */
	sp_rows_free(&rows);
}

static void test_percentiles(void)
{
	enum { N = 1000 };
	uint64_t w[N];

	/* Uniform: 1000 waits 1000, 1037, ..., 37963 ns, shuffled. */
	for (size_t i = 0; i < N; i++)
		w[(i * 7919) % N] = 1000 + 37 * i;
	check_waits("uniform", 0x10000, w, N, 0);
	/* Log-uniform over 100 ns .. 100 ms; again with 9000 uncontended
	 * acquisitions besides. */
	for (size_t i = 0; i < N; i++)
		w[i] = (uint64_t)(100.0 * pow(10.0, 6.0 * (double)i / (N - 1)));
	check_waits("log-uniform", 0x20000, w, N, 0);
	for (size_t i = 0; i < N; i++)
		w[i] = (uint64_t)(100.0 * pow(10.0, 6.0 * (double)i / (N - 1)));
	check_waits("+9000 zeros", 0x30000, w, N, 9000);
	/* Two modes: 900 waits about 2 us, 100 about 5 ms. */
	for (size_t i = 0; i < N; i++)
		w[i] = i < 900 ? 1900 + i / 3 : 5000000 + 997 * i;
	check_waits("bimodal", 0x40000, w, N, 0);
	/* Short waits: 1..16 ns, exact below 16. */
	for (size_t i = 0; i < N; i++)
		w[i] = 1 + i % 16;
	check_waits("short", 0x50000, w, N, 0);
	/* Long: 4.6 to 18 minutes, the top of the range (2^40 ns). */
	for (size_t i = 0; i < N; i++)
		w[i] = (1ull << 38) + i * ((3ull << 38) / N);
	check_waits("long", 0x60000, w, N, 0);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	test_widen();
	test_pool();
	test_fold();
	test_entry_add();
	test_percentiles(); /* last: registers this thread */
	puts("test_hist: ok");
	return 0;
}
