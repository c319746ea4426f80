/*
 * test_hist.c - the histograms of entries (src/record/hist.c): in the word
 * while one bucket has every count, a block of a few buckets from the
 * second, a block of all buckets from the ninth, its 32-bit counts
 * widened to 64-bit when one would wrap; folded into another table, read
 * back; and
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

/* The form of histogram word @h: SP_HIST_ONE (whose bucket bits lie over
 * the other tags), SP_HIST_FEW, SP_HIST_WIDE or 0 (narrow). */
static unsigned form(uintptr_t h)
{
	return h & SP_HIST_ONE ? SP_HIST_ONE : (unsigned)(h & SP_HIST_TAGS);
}

/* Every bucket of @slot reads back as @want. */
static void check_counts(const uintptr_t *slot, const uint64_t *want)
{
	uint64_t out[SP_HIST_BUCKETS];

	T_ASSERT_INT(sp_hist_read(slot, out), ==, 1);
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++)
		T_ASSERT_UINT(out[b], ==, want[b]);
}

static int add(struct sp_table *t, uintptr_t *slot, uint64_t *want, unsigned b, uint64_t n)
{
	int r = sp_hist_add__slowpath(t, slot, b, n);

	if (!r)
		want[b] += n;
	check_counts(slot, want);
	return r;
}

/* A histogram is the word itself while one bucket has every count, a
 * block of a few buckets from the second, a block of all of them from the
 * ninth, widened when a count would wrap; every count is kept. */
static void test_widen(void)
{
	struct sp_table t;
	struct sp_entry *e;
	uintptr_t *slot;
	uint64_t out[SP_HIST_BUCKETS], want[SP_HIST_BUCKETS] = { 0 };

	sp_table_init(&t);
	e = new_entry(&t, 0x1000);
	slot = &sp_entry_cold_w(e)->hist[SP_HIST_WAIT];
	T_ASSERT_INT(sp_hist_read(slot, out), ==, 0);
	T_ASSERT_INT(add(&t, slot, want, 5, 1), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_ONE);
	T_ASSERT_INT(add(&t, slot, want, 5, UINT32_MAX - 1), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_ONE);
	T_ASSERT_UINT(t.hist_pool.slabs == NULL, ==, 1); /* nothing allocated yet */
	T_ASSERT_INT(add(&t, slot, want, 7, 3), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_FEW);
	T_ASSERT_UINT(*slot % 64, ==, SP_HIST_FEW);
	for (unsigned b = 100; b < 100 + SP_HIST_FEW_N - 2; b++) {
		T_ASSERT_INT(add(&t, slot, want, b, b), ==, 0);
		T_ASSERT_INT(add(&t, slot, want, b, 1), ==, 0);
		T_ASSERT_UINT(form(*slot), ==, SP_HIST_FEW);
	}
	T_ASSERT_INT(add(&t, slot, want, 5, 1ull << 20), ==, 0); /* a known bucket: still few */
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_FEW);
	/* The ninth bucket: all of them; 2^32 - 1 + 2^20 in bucket 5 is wide. */
	T_ASSERT_INT(add(&t, slot, want, SP_HIST_BUCKETS - 1, 9), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_WIDE);
	T_ASSERT_INT(add(&t, slot, want, 5, 1ull << 40), ==, 0);
	T_ASSERT_INT(add(&t, slot, want, 0, 1), ==, 0);

	/* Nine buckets, all counts 32-bit: narrow, widened at the wrap. */
	memset(want, 0, sizeof(want));
	slot = &sp_entry_cold_w(e)->hist[SP_HIST_HOLD];
	for (unsigned b = 0; b < SP_HIST_FEW_N + 1; b++)
		T_ASSERT_INT(add(&t, slot, want, 20 * b, b == 3 ? UINT32_MAX - 1 : 1), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, 0);
	T_ASSERT_UINT(*slot % 64, ==, 0);
	T_ASSERT_INT(add(&t, slot, want, 60, 1), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, 0); /* 2^32 - 1 still fits */
	T_ASSERT_INT(add(&t, slot, want, 60, 1), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_WIDE);
	T_ASSERT_INT(add(&t, slot, want, 61, 1ull << 40), ==, 0);
	sp_table_destroy(&t);
}

/* Without a table (a thread not recording) the word still holds one
 * bucket; a second cannot be allocated, and nothing of it is added.  A
 * first count beyond the word's takes a wide block at once. */
static void test_one_edges(void)
{
	struct sp_table t;
	struct sp_entry *e;
	uintptr_t *slot;
	uint64_t want[SP_HIST_BUCKETS] = { 0 };

	sp_table_init(&t);
	e = new_entry(&t, 0x1000);
	slot = &sp_entry_cold_w(e)->hist[SP_HIST_HOLD];
	T_ASSERT_INT(add(NULL, slot, want, 1, 1), ==, 0);
	T_ASSERT_INT(add(NULL, slot, want, 1, 2), ==, 0);
	T_ASSERT_INT(add(NULL, slot, want, 2, 1), ==, -ENOMEM);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_ONE);
	/* The word's count ends below 2^48: more goes to a block. */
	memset(want, 0, sizeof(want));
	slot = &sp_entry_cold_w(e)->hist[SP_HIST_WAIT];
	T_ASSERT_INT(add(&t, slot, want, 3, UINT64_MAX >> 17), ==, 0);
	T_ASSERT_INT(add(&t, slot, want, 3, UINT64_MAX >> 17), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_ONE);
	T_ASSERT_INT(add(&t, slot, want, 3, 5), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_WIDE);
	memset(want, 0, sizeof(want));
	slot = &sp_entry_cold_w(new_entry(&t, 0x2000))->hist[SP_HIST_HOLD];
	T_ASSERT_INT(add(&t, slot, want, 4, 1ull << 50), ==, 0);
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_WIDE);
	memset(want, 0, sizeof(want));
	slot = &sp_entry_cold_w(new_entry(&t, 0x3000))->hist[SP_HIST_HOLD];
	T_ASSERT_INT(add(&t, slot, want, 4, 1), ==, 0);
	T_ASSERT_INT(add(&t, slot, want, 5, 1ull << 50), ==, 0); /* beyond a few-bucket word */
	T_ASSERT_UINT(form(*slot), ==, SP_HIST_WIDE);
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
	for (unsigned b = 10; b < 10 + SP_HIST_FEW_N; b++) /* nine buckets: a block of all */
		T_ASSERT_INT(sp_hist_add__slowpath(&a, &sp_entry_cold_w(e)->hist[SP_HIST_WAIT], b, 1), ==, 0);
	T_ASSERT_UINT(form(e->cold->hist[SP_HIST_WAIT]), ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&a, &sp_entry_cold_w(e)->hist[SP_HIST_HOLD], 9, 16), ==, 0);
	new_entry(&a, 0x3000); /* no histograms */
	T_ASSERT_INT(sp_table_fold(&into, &a), ==, 0);
	T_ASSERT_INT(sp_table_fold(&into, &a), ==, 0);
	T_ASSERT_UINT(sp_table_count(&into), ==, 2);
	e = sp_table_at(&into, 0);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[3], ==, 2ull * UINT32_MAX);
	for (unsigned b = 10; b < 10 + SP_HIST_FEW_N; b++)
		T_ASSERT_UINT(out[b], ==, 2);
	T_ASSERT(e->cold->hist[SP_HIST_WAIT] & SP_HIST_WIDE);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_HOLD], out), ==, 1);
	T_ASSERT_UINT(out[9], ==, 32);
	T_ASSERT(e->cold->hist[SP_HIST_HOLD] & SP_HIST_ONE); /* one bucket: the sum stays in the word */
	T_ASSERT_INT(sp_hist_read(&sp_table_at(&into, 1)->cold->hist[SP_HIST_WAIT], out), ==, 0);
	sp_table_destroy(&a);
	sp_table_destroy(&into);
}

/* The probe's path: sp_entry_hist_add() on the calling thread's entry; a
 * thread that is not recording (no table to allocate from) counts a
 * value as lost when it needs a block. */
static void test_entry_add(void)
{
	struct sp_table t;
	struct sp_entry *e;
	uint64_t out[SP_HIST_BUCKETS], lost = syncprof_lost_events();

	sp_table_init(&t);
	e = new_entry(&t, 0x4000);
	T_ASSERT(sp_tls_self == NULL);
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 1); /* in the word: no table needed */
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost);
	sp_entry_hist_add(e, SP_HIST_WAIT, 1000000, 1); /* a block: lost */
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost + 1);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[sp_hist_bucket(100)], ==, 1);
	T_ASSERT_UINT(out[sp_hist_bucket(1000000)], ==, 0);
	T_ASSERT_INT(sp_hist_add__slowpath(&t, &sp_entry_cold_w(e)->hist[SP_HIST_WAIT], 0, 1), ==, 0);
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 1); /* a block exists: no table needed */
	sp_entry_hist_add(e, SP_HIST_WAIT, 100, 2);
	T_ASSERT_UINT(syncprof_lost_events(), ==, lost + 1);
	T_ASSERT_INT(sp_hist_read(&e->cold->hist[SP_HIST_WAIT], out), ==, 1);
	T_ASSERT_UINT(out[sp_hist_bucket(100)], ==, 4);
	T_ASSERT_UINT(out[0], ==, 1);
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
	test_one_edges();
	test_pool();
	test_fold();
	test_entry_add();
	test_percentiles(); /* last: registers this thread */
	puts("test_hist: ok");
	return 0;
}
