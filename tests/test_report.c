/*
 * test_report.c - the report pipeline on synthetic rows: subtracting a
 * snapshot, coalescing objects, sorting by each key, top N, percentiles,
 * path shortening, and what the table and JSON renderers print.
 */
#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"

/* Details for rows built here, with the counts their histograms view;
 * sp_rows_push() copies them into the set. */
static struct sp_row_detail details[64];
static uint64_t dense[64][SP_HIST_BUCKETS];
static unsigned next_detail;

/* Set bucket @b of the wait histogram of @r, a row made by mkrow(). */
static void set_bucket(struct sp_row *r, unsigned b, uint64_t count)
{
	uint64_t *d = dense[r->detail - details];

	d[b] = count;
	sp_hist_view(&r->detail->hist, d);
}

static struct sp_row mkrow(const char *file, unsigned line, uintptr_t obj, int type, uint64_t acq,
			   uint64_t cont, uint64_t wait, uint64_t max)
{
	struct sp_row r;

	memset(&r, 0, sizeof(r));
	r.file = file;
	r.func = "fn";
	r.line = line;
	r.obj = obj;
	r.type = (uint8_t)type;
	r.n_objects = 1;
	r.acquisitions = acq;
	r.contended = cont;
	r.wait_ns = wait;
	r.wait_max_ns = max;
	r.detail = &details[next_detail % 64];
	memset(r.detail, 0, sizeof(*r.detail));
	memset(dense[next_detail++ % 64], 0, sizeof(dense[0]));
	if (cont)
		set_bucket(&r, sp_hist_bucket(max), cont);
	return r;
}

static void push(struct sp_rows *rows, struct sp_row r)
{
	T_ASSERT_INT(sp_rows_push(rows, &r), ==, 0);
}

static void test_subtract(void)
{
	struct sp_rows cur = { 0 }, snap = { 0 };
	/* Separate string storage: keys compare by content, not address. */
	char fa[] = "/src/a.c";

	push(&cur, mkrow("/src/a.c", 10, 0x100, SP_TYPE_MUTEX, 100, 10, 5000, 900));
	push(&cur, mkrow("/src/a.c", 10, 0x200, SP_TYPE_MUTEX, 50, 0, 0, 0));
	push(&cur, mkrow("/src/b.c", 20, 0x100, SP_TYPE_MUTEX, 7, 1, 70, 70));
	push(&snap, mkrow(fa, 10, 0x100, SP_TYPE_MUTEX, 60, 4, 2000, 920));
	push(&snap, mkrow("/src/a.c", 10, 0x200, SP_TYPE_MUTEX, 50, 0, 0, 0));
	/* A row in the snapshot only (gone since) is simply absent. */
	push(&snap, mkrow("/src/c.c", 30, 0x300, SP_TYPE_MUTEX, 5, 0, 0, 0));
	T_ASSERT_INT(sp_report_subtract(&cur, &snap), ==, 0);
	/* The 0x200 row had nothing new: dropped. */
	T_ASSERT_UINT(cur.n, ==, 2);
	T_ASSERT_UINT(cur.v[0].acquisitions, ==, 40);
	T_ASSERT_UINT(cur.v[0].contended, ==, 6);
	T_ASSERT_UINT(cur.v[0].wait_ns, ==, 3000);
	T_ASSERT_UINT(cur.v[0].wait_max_ns, ==, 900); /* maxima are not subtracted */
	/* 10 waits in the bucket of 900 ns minus the snapshot's 4 in that of 920: [896, 959]. */
	T_ASSERT_UINT(sp_hist_at(&sp_row_d(&cur.v[0])->hist, sp_hist_bucket(900)), ==, 6);
	T_ASSERT_UINT(cur.v[1].acquisitions, ==, 7);
	/* Same key with another type is another row. */
	sp_rows_free(&snap);
	push(&snap, mkrow("/src/b.c", 20, 0x100, SP_TYPE_SPINLOCK, 7, 1, 70, 70));
	T_ASSERT_INT(sp_report_subtract(&cur, &snap), ==, 0);
	T_ASSERT_UINT(cur.n, ==, 2);
	sp_rows_free(&cur);
	sp_rows_free(&snap);
}

static void test_coalesce(void)
{
	struct sp_rows rows = { 0 };

	for (uintptr_t o = 1; o <= 5; o++)
		push(&rows, mkrow("/src/a.c", 10, o * 64, SP_TYPE_MUTEX, 10, 1, 100 * o, 10 * o));
	push(&rows, mkrow("/src/a.c", 10, 64, SP_TYPE_REC_MUTEX, 3, 0, 0, 0));
	push(&rows, mkrow("/src/a.c", 11, 64, SP_TYPE_MUTEX, 4, 0, 0, 0));
	T_ASSERT_INT(sp_report_coalesce(&rows), ==, 0);
	T_ASSERT_UINT(rows.n, ==, 3);
	T_ASSERT_UINT(rows.v[0].n_objects, ==, 5);
	T_ASSERT_UINT(rows.v[0].acquisitions, ==, 50);
	T_ASSERT_UINT(rows.v[0].contended, ==, 5);
	T_ASSERT_UINT(rows.v[0].wait_ns, ==, 1500);
	T_ASSERT_UINT(rows.v[0].wait_max_ns, ==, 50);
	{
		/* Histograms merge too: each object had one wait of 10*o ns, each
		 * in its own bucket ([10], [20, 21], [30, 31], [40, 43], [48, 51]). */
		const struct sp_hist *h = &sp_row_d(&rows.v[0])->hist;

		T_ASSERT_UINT(sp_hist_total(h), ==, 5);
		for (unsigned o = 1; o <= 5; o++)
			T_ASSERT_UINT(sp_hist_at(h, sp_hist_bucket(10 * o)), ==, 1);
		T_ASSERT_UINT(h->lo, ==, 10);
		T_ASSERT_UINT(h->n, ==, sp_hist_bucket(50) - 10 + 1);
	}
	/* A row with nothing in its histograms holds no counts. */
	T_ASSERT_UINT(sp_row_d(&rows.v[2])->hist.n, ==, 0);
	T_ASSERT_UINT(rows.v[1].type, ==, SP_TYPE_REC_MUTEX);
	T_ASSERT_UINT(rows.v[1].n_objects, ==, 1);
	T_ASSERT_UINT(rows.v[1].obj, ==, 64); /* one object: its address is kept */
	T_ASSERT_UINT(rows.v[2].line, ==, 11);
	sp_rows_free(&rows);
}

static void test_sort_top(void)
{
	struct sp_rows rows = { 0 };

	/*            file  line obj type acq cont wait max */
	push(&rows, mkrow("/s/a.c", 1, 1, 0, 10, 1, 1000, 1000));  /* avg 100 */
	push(&rows, mkrow("/s/a.c", 2, 1, 0, 1000, 50, 3000, 20)); /* avg 3 */
	push(&rows, mkrow("/s/a.c", 3, 1, 0, 2, 2, 2000, 1500));   /* avg 1000 */
	rows.v[0].hold_ns = 5;
	rows.v[1].hold_ns = 9;
	rows.v[2].hold_ns = 1;

	sp_report_sort(&rows, SYNCPROF_SORT_TOTAL);
	T_ASSERT_UINT(rows.v[0].line, ==, 2);
	T_ASSERT_UINT(rows.v[1].line, ==, 3);
	T_ASSERT_UINT(rows.v[2].line, ==, 1);
	sp_report_sort(&rows, SYNCPROF_SORT_AVG);
	T_ASSERT_UINT(rows.v[0].line, ==, 3);
	T_ASSERT_UINT(rows.v[1].line, ==, 1);
	T_ASSERT_UINT(rows.v[2].line, ==, 2);
	sp_report_sort(&rows, SYNCPROF_SORT_MAX);
	T_ASSERT_UINT(rows.v[0].line, ==, 3);
	T_ASSERT_UINT(rows.v[2].line, ==, 2);
	sp_report_sort(&rows, SYNCPROF_SORT_COUNT);
	T_ASSERT_UINT(rows.v[0].line, ==, 2);
	T_ASSERT_UINT(rows.v[2].line, ==, 3);
	sp_report_sort(&rows, SYNCPROF_SORT_CONTENDED);
	T_ASSERT_UINT(rows.v[0].line, ==, 2);
	T_ASSERT_UINT(rows.v[1].line, ==, 3);
	sp_report_sort(&rows, SYNCPROF_SORT_HOLD);
	T_ASSERT_UINT(rows.v[0].line, ==, 2);
	T_ASSERT_UINT(rows.v[1].line, ==, 1);

	/* Ties break by site, so output is stable. */
	rows.v[0].hold_ns = rows.v[1].hold_ns = rows.v[2].hold_ns = 0;
	rows.v[0].wait_ns = rows.v[1].wait_ns = rows.v[2].wait_ns = 7;
	sp_report_sort(&rows, SYNCPROF_SORT_HOLD);
	T_ASSERT_UINT(rows.v[0].line, ==, 1);
	T_ASSERT_UINT(rows.v[1].line, ==, 2);
	T_ASSERT_UINT(rows.v[2].line, ==, 3);

	sp_report_top(&rows, 0);
	T_ASSERT_UINT(rows.n, ==, 3);
	sp_report_top(&rows, 5);
	T_ASSERT_UINT(rows.n, ==, 3);
	sp_report_top(&rows, 2);
	T_ASSERT_UINT(rows.n, ==, 2);
	sp_rows_free(&rows);
}

/*
 * Top N by a heap (sp_report_sort_top(), used when N is under a quarter of
 * the rows) gives the same rows in the same order as a full sort cut to
 * N, for every key, with many ties (values drawn from a small range) and
 * n_total set to the rows before the cut.
 */
static void test_heap_top(void)
{
	static const enum syncprof_sort keys[] = { SYNCPROF_SORT_TOTAL, SYNCPROF_SORT_AVG,
						   SYNCPROF_SORT_MAX, SYNCPROF_SORT_COUNT,
						   SYNCPROF_SORT_CONTENDED, SYNCPROF_SORT_HOLD };
	static const unsigned tops[] = { 1, 7, 100, 249, 250, 999 };
	unsigned seed = 12345;

	for (size_t k = 0; k < sizeof(keys) / sizeof(*keys); k++) {
		for (size_t t = 0; t < sizeof(tops) / sizeof(*tops); t++) {
			struct sp_rows a = { 0 }, b = { 0 };

			for (unsigned i = 0; i < 1000; i++) {
				struct sp_row r;

				memset(&r, 0, sizeof(r));
				r.file = (seed = seed * 1103515245 + 12345) >> 30 ? "/s/a.c" : "/s/b.c";
				r.func = "fn";
				r.line = (seed = seed * 1103515245 + 12345) >> 28;
				r.obj = i;
				r.n_objects = 1;
				r.acquisitions = 1 + ((seed = seed * 1103515245 + 12345) >> 27);
				r.contended = (seed = seed * 1103515245 + 12345) >> 29;
				r.wait_ns = (seed = seed * 1103515245 + 12345) >> 28;
				r.wait_max_ns = (seed = seed * 1103515245 + 12345) >> 29;
				r.hold_ns = (seed = seed * 1103515245 + 12345) >> 29;
				push(&a, r);
				push(&b, r);
			}
			sp_report_sort(&a, keys[k]);
			sp_report_top(&a, tops[t]);
			sp_report_sort_top(&b, keys[k], tops[t]);
			T_ASSERT_UINT(b.n, ==, a.n);
			T_ASSERT_UINT(b.n_total, ==, 1000);
			for (size_t i = 0; i < a.n; i++) {
				T_ASSERT_UINT(b.v[i].obj, ==, a.v[i].obj);
				T_ASSERT_UINT(b.v[i].line, ==, a.v[i].line);
			}
			sp_rows_free(&a);
			sp_rows_free(&b);
		}
	}
}

/* The bucket layout of base/types.h: exact below 16 ns, then 8 buckets
 * per power of two, each at most 1/8 of its lower bound wide. */
static void test_layout(void)
{
	T_ASSERT_UINT(SP_HIST_BUCKETS, ==, 304);
	T_ASSERT_UINT(sp_hist_bucket(0), ==, 0);
	T_ASSERT_UINT(sp_hist_bucket(1), ==, 1);
	T_ASSERT_UINT(sp_hist_bucket(15), ==, 15);
	T_ASSERT_UINT(sp_hist_bucket(16), ==, 16);
	T_ASSERT_UINT(sp_hist_bucket(17), ==, 16);
	T_ASSERT_UINT(sp_hist_bucket(18), ==, 17);
	T_ASSERT_UINT(sp_hist_bucket(31), ==, 23);
	T_ASSERT_UINT(sp_hist_bucket(32), ==, 24);
	T_ASSERT_UINT(sp_hist_bucket(1024), ==, 64);
	T_ASSERT_UINT(sp_hist_bucket(1151), ==, 64);
	T_ASSERT_UINT(sp_hist_bucket(1152), ==, 65);
	T_ASSERT_UINT(sp_hist_bucket(2047), ==, 71);
	T_ASSERT_UINT(sp_hist_bucket(2048), ==, 72);
	T_ASSERT_UINT(sp_hist_bucket((1ull << 40) - 1), ==, 303);
	T_ASSERT_UINT(sp_hist_bucket(1ull << 40), ==, 303);
	T_ASSERT_UINT(sp_hist_bucket(UINT64_MAX), ==, SP_HIST_BUCKETS - 1);
	T_ASSERT_UINT(sp_hist_lower(64), ==, 1024);
	T_ASSERT_UINT(sp_hist_upper(64), ==, 1151);
	T_ASSERT_UINT(sp_hist_lower(303), ==, 15ull << 36);
	T_ASSERT_UINT(sp_hist_upper(303), ==, (1ull << 40) - 1);
	T_ASSERT_UINT(sp_hist_lower(0), ==, 0);
	T_ASSERT_UINT(sp_hist_upper(15), ==, 15);
	for (unsigned b = 0; b < SP_HIST_BUCKETS; b++) {
		uint64_t lo = sp_hist_lower(b), hi = sp_hist_upper(b);

		T_ASSERT_UINT(sp_hist_bucket(lo), ==, b);
		T_ASSERT_UINT(sp_hist_bucket(hi), ==, b);
		if (b + 1 < SP_HIST_BUCKETS)
			T_ASSERT_UINT(sp_hist_lower(b + 1), ==, hi + 1);
		if (b >= 16)
			T_ASSERT_UINT((hi - lo + 1) * 8, <=, lo); /* at most 1/8 wide */
		else
			T_ASSERT_UINT(hi, ==, lo);
		/* Each bucket lies in one log2 bucket. */
		T_ASSERT_UINT(sp_hist_log2(b), ==, lo ? 63 - __builtin_clzll(lo) : 0);
		T_ASSERT_UINT(sp_hist_log2(b), ==, hi ? 63 - __builtin_clzll(hi) : 0);
	}
	/* A log2 bucket read from an old profile: the bucket of its largest value. */
	T_ASSERT_UINT(sp_hist_from_log2(0), ==, 1);
	T_ASSERT_UINT(sp_hist_from_log2(3), ==, 15);
	T_ASSERT_UINT(sp_hist_from_log2(10), ==, 71);
	T_ASSERT_UINT(sp_hist_from_log2(39), ==, 303);
	T_ASSERT_UINT(sp_hist_log2(sp_hist_from_log2(10)), ==, 10);
}

static void test_percentiles(void)
{
	struct sp_row r = mkrow("/s/a.c", 1, 1, 0, 100, 0, 0, 0);

	/* All uncontended: every percentile is 0. */
	T_ASSERT_UINT(sp_row_percentile(&r, 0.5), ==, 0);
	T_ASSERT_UINT(sp_row_percentile(&r, 0.99), ==, 0);
	/* 90 at 0, 9 waits in [1024, 1151], 1 in [1441792, 1572863]. */
	set_bucket(&r, sp_hist_bucket(1100), 9);
	set_bucket(&r, sp_hist_bucket(1500000), 1);
	r.acquisitions = 100;
	r.wait_max_ns = 1500000;
	T_ASSERT_UINT(sp_row_percentile(&r, 0.5), ==, 0);
	T_ASSERT_UINT(sp_row_percentile(&r, 0.90), ==, 0);
	/* The midpoint of the bucket, rounded down: 1024 + 127 / 2. */
	T_ASSERT_UINT(sp_row_percentile(&r, 0.91), ==, 1087);
	T_ASSERT_UINT(sp_row_percentile(&r, 0.95), ==, 1087);
	T_ASSERT_UINT(sp_row_percentile(&r, 0.99), ==, 1087);
	/* The last one: its midpoint, 1507327, is capped at the maximum seen. */
	T_ASSERT_UINT(sp_row_percentile(&r, 1.0), ==, 1500000);
	r.wait_max_ns = 1570000;
	T_ASSERT_UINT(sp_row_percentile(&r, 1.0), ==, 1441792 + 131071 / 2);
	/* Below 16 ns every bucket is one value. */
	set_bucket(&r, sp_hist_bucket(1100), 0);
	set_bucket(&r, sp_hist_bucket(1500000), 0);
	set_bucket(&r, 7, 10);
	T_ASSERT_UINT(sp_row_percentile(&r, 0.95), ==, 7);
	/* More waits counted than acquisitions (timed-out waits): no zeros. */
	r.acquisitions = 2;
	T_ASSERT_UINT(sp_row_percentile(&r, 0.01), ==, 7);
}

static void test_paths(void)
{
	struct sp_rows rows = { 0 };

	push(&rows, mkrow("/home/u/proj/src/a.c", 1, 1, 0, 1, 0, 0, 0));
	push(&rows, mkrow("/home/u/proj/lib/b.c", 1, 1, 0, 1, 0, 0, 0));
	push(&rows, mkrow("rel.c", 1, 1, 0, 1, 0, 0, 0));
	T_ASSERT_UINT(sp_rows_common_prefix(&rows), ==, strlen("/home/u/proj/"));
	T_ASSERT_STR(sp_path_strip("/home/u/proj/src/a.c", NULL, 13), "src/a.c");
	T_ASSERT_STR(sp_path_strip("rel.c", NULL, 13), "rel.c");
	T_ASSERT_STR(sp_path_strip("/home/u/proj/src/a.c", "/home/u", 0), "proj/src/a.c");
	T_ASSERT_STR(sp_path_strip("/home/u/proj/src/a.c", "/home/u/", 0), "proj/src/a.c");
	/* A root that is a prefix of a directory name, not a directory, is not stripped. */
	T_ASSERT_STR(sp_path_strip("/home/u/proj/src/a.c", "/home/u/pr", 0),
		     "/home/u/proj/src/a.c");
	sp_rows_free(&rows);
	/* One file: its directory. */
	push(&rows, mkrow("/x/y/z.c", 1, 1, 0, 1, 0, 0, 0));
	T_ASSERT_UINT(sp_rows_common_prefix(&rows), ==, 5);
	sp_rows_free(&rows);
}

/* @rows (lent, given back with no names) as a profile, rendered. */
static char *render(struct sp_rows *rows, struct syncprof_report_options *o, int json)
{
	struct sp_profile p;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	T_ASSERT_INT(sp_profile_init(&p), ==, 0);
	p.pid = 42;
	p.command = "prog --arg \"q\"";
	p.elapsed_ns = 2500000000ull;
	p.coalesced = o->coalesce;
	p.rows = *rows;
	T_ASSERT_INT(sp_profile_resolve(&p), ==, 0);
	T_ASSERT_INT(json ? sp_render_json(f, &p, o) : sp_render_table(f, &p, o), ==, 0);
	fclose(f);
	for (size_t i = 0; i < p.rows.n; i++)
		p.rows.v[i].names = NULL;
	*rows = p.rows;
	memset(&p.rows, 0, sizeof(p.rows));
	sp_profile_free(&p);
	return buf;
}

static void test_render(void)
{
	struct syncprof_report_options o;
	struct sp_rows rows = { 0 };
	char *s;

	syncprof_report_options_init(&o);
	push(&rows, mkrow("/p/src/queue.c", 42, 0xabc0, SP_TYPE_MUTEX, 2000, 100, 3000000, 400000));
	push(&rows, mkrow("/p/src/pool.c", 7, 0, SP_TYPE_CONDVAR, 3, 3, 1000, 600));
	rows.v[1].n_objects = 4;

	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "Type");
	T_ASSERT_CONTAINS(s, "Object");
	T_ASSERT_CONTAINS(s, "Call site");
	T_ASSERT_CONTAINS(s, "Wait Time (s)");
	T_ASSERT_CONTAINS(s, "Count");
	T_ASSERT_CONTAINS(s, "Average (us)");
	T_ASSERT_CONTAINS(s, "Contended");
	T_ASSERT_CONTAINS(s, "Max (us)");
	T_ASSERT_CONTAINS(s, "p90 (us)");
	T_ASSERT_CONTAINS(s, "p99 (us)");
	T_ASSERT_CONTAINS(s, "queue.c:42");
	T_ASSERT(!strstr(s, "/p/src/queue.c")); /* common prefix stripped */
	T_ASSERT_CONTAINS(s, "0xabc0");
	T_ASSERT_CONTAINS(s, "[4]");
	T_ASSERT_CONTAINS(s, "0.00300"); /* wait time in s */
	T_ASSERT_CONTAINS(s, "1.50");    /* average: 3 ms / 2000 = 1.5 us */
	T_ASSERT_CONTAINS(s, "400.00");  /* max in us */
	T_ASSERT_CONTAINS(s, "pid 42");
	free(s);

	o.src_root = "/p";
	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "src/queue.c:42");
	free(s);

	o.format = SYNCPROF_FORMAT_JSON;
	s = render(&rows, &o, 1);
	T_ASSERT_CONTAINS(s, "{\"format\":\"syncprof-profile\",\"version\":1,\"pid\":42,");
	T_ASSERT_CONTAINS(s, "\"command\":\"prog --arg \\\"q\\\"\"");
	T_ASSERT_CONTAINS(s, "\"elapsed_ns\":2500000000");
	T_ASSERT_CONTAINS(s, "\"coalesced\":true");
	T_ASSERT_CONTAINS(s, "\"type\":\"mutex\",\"kind\":\"lock\",\"object\":\"0xabc0\",\"n_objects\":1");
	T_ASSERT_CONTAINS(s, "\"site\":{\"function\":\"fn\",\"file\":\"/p/src/queue.c\",\"line\":42,"
			     "\"dso\":null,\"address\":null,\"offset\":null}");
	T_ASSERT_CONTAINS(s, "\"acquisitions\":2000,\"contended\":100,\"wait_ns\":3000000,"
			     "\"wait_max_ns\":400000");
	T_ASSERT_CONTAINS(s, "\"type\":\"condvar\",\"kind\":\"event\",\"object\":null,\"n_objects\":4");
	/* 100 waits of 2000 in the bucket of 400000 ns, [393216, 425983]: p99 is
	 * its midpoint, 409599, capped at the maximum. */
	T_ASSERT_CONTAINS(s, "\"wait_p50_ns\":0,\"wait_p90_ns\":0,\"wait_p99_ns\":400000,");
	T_ASSERT_CONTAINS(s, "\"wait_hist\":[0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,100],"
			     "\"wait_buckets\":[[132,100]]");
	free(s);

	/* No rows: the table says so; the JSON has an empty list. */
	rows.n = 0;
	s = render(&rows, &o, 1);
	T_ASSERT_CONTAINS(s, "\"rows\":[]");
	free(s);
	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "no lock activity recorded");
	free(s);
	sp_rows_free(&rows);
}

/* Position of @needle in @s (it must be there). */
static size_t at(const char *s, const char *needle)
{
	const char *f = strstr(s, needle);

	if (!f)
		T_FAIL("\"%s\" not found in:\n%s", needle, s);
	return (size_t)(f - s);
}

/*
 * Contention first (issue 26): the table prints the rows of locks under
 * their title, then the waits for an event under theirs, each part in the
 * profile's order (the sort key's); merged=1 prints the profile's order.
 */
static void test_parts(void)
{
	struct syncprof_report_options o;
	struct sp_rows rows = { 0 };
	char *s;

	syncprof_report_options_init(&o);
	/* In sorted order, largest wait first: events lead it. */
	push(&rows, mkrow("/p/join.c", 1, 0x10, SP_TYPE_JOIN, 4, 4, 9000000, 4000000));
	push(&rows, mkrow("/p/mutex.c", 2, 0x20, SP_TYPE_MUTEX, 900, 90, 5000000, 100000));
	push(&rows, mkrow("/p/cond.c", 3, 0x30, SP_TYPE_CONDVAR, 50, 50, 4000000, 100000));
	push(&rows, mkrow("/p/spin.c", 4, 0x40, SP_TYPE_SPINLOCK, 800, 8, 3000000, 100000));
	push(&rows, mkrow("/p/futex.c", 5, 0x50, SP_TYPE_FUTEX, 10, 10, 2000000, 100000));
	push(&rows, mkrow("/p/sem.c", 6, 0x60, SP_TYPE_SEMAPHORE, 10, 10, 1000000, 100000));

	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "\nLock contention (mutex, rwlock, spinlock, futex, glibc lock): 3 rows\n");
	T_ASSERT_CONTAINS(s, "\nWaits for an event (condition variable, semaphore, barrier, join): "
			     "3 rows\n");
	T_ASSERT_UINT(at(s, "Lock contention"), <, at(s, "mutex.c:2"));
	T_ASSERT_UINT(at(s, "mutex.c:2"), <, at(s, "spin.c:4"));
	T_ASSERT_UINT(at(s, "spin.c:4"), <, at(s, "futex.c:5"));
	T_ASSERT_UINT(at(s, "futex.c:5"), <, at(s, "Waits for an event"));
	T_ASSERT_UINT(at(s, "Waits for an event"), <, at(s, "join.c:1"));
	T_ASSERT_UINT(at(s, "join.c:1"), <, at(s, "cond.c:3"));
	T_ASSERT_UINT(at(s, "cond.c:3"), <, at(s, "sem.c:6"));
	/* Each part has the column headers, at one width. */
	{
		const char *h1 = s + at(s, "\nType") + 1, *ev = s + at(s, "Waits for an event");
		const char *h2 = ev + at(ev, "\nType") + 1;
		size_t n1 = strcspn(h1, "\n");

		T_ASSERT(h1 < ev);
		T_ASSERT_UINT(strcspn(h2, "\n"), ==, n1);
		T_ASSERT(!memcmp(h1, h2, n1));
	}
	free(s);

	o.merged = 1;
	s = render(&rows, &o, 0);
	T_ASSERT(!strstr(s, "Lock contention"));
	T_ASSERT(!strstr(s, "Waits for an event"));
	T_ASSERT_UINT(at(s, "join.c:1"), <, at(s, "mutex.c:2"));
	T_ASSERT_UINT(at(s, "mutex.c:2"), <, at(s, "cond.c:3"));
	T_ASSERT_UINT(at(s, "cond.c:3"), <, at(s, "spin.c:4"));
	T_ASSERT_UINT(at(s, "spin.c:4"), <, at(s, "futex.c:5"));
	T_ASSERT_UINT(at(s, "futex.c:5"), <, at(s, "sem.c:6"));
	free(s);
	o.merged = 0;

	sp_rows_free(&rows);

	/* Only locks: no events' part.  Only events: the locks' part says none. */
	push(&rows, mkrow("/p/mutex.c", 2, 0x20, SP_TYPE_MUTEX, 900, 90, 5000000, 100000));
	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "Lock contention (mutex, rwlock, spinlock, futex, glibc lock): 1 row\n");
	T_ASSERT(!strstr(s, "Waits for an event"));
	free(s);
	sp_rows_free(&rows);
	push(&rows, mkrow("/p/cond.c", 3, 0x30, SP_TYPE_CONDVAR, 50, 50, 4000000, 100000));
	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "Lock contention (mutex, rwlock, spinlock, futex, glibc lock): 0 rows\n");
	T_ASSERT_CONTAINS(s, "(none)\n");
	T_ASSERT_UINT(at(s, "(none)"), <, at(s, "Waits for an event"));
	T_ASSERT_UINT(at(s, "Waits for an event"), <, at(s, "cond.c:3"));
	free(s);
	/* The top-N cut left out every lock row: the part says so. */
	rows.n_total = 6;
	s = render(&rows, &o, 0);
	T_ASSERT_CONTAINS(s, "(none in the top 1 rows)\n");
	free(s);
	sp_rows_free(&rows);
}

int main(void)
{
	test_subtract();
	test_coalesce();
	test_sort_top();
	test_heap_top();
	test_layout();
	test_percentiles();
	test_paths();
	test_render();
	test_parts();
	puts("test_report: ok");
	return 0;
}
