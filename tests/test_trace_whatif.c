/*
 * test_trace_whatif - 'syncprof trace what-if' and 'syncprof trace
 * chains' on traces written here byte by byte, with times chosen so that
 * the model's answer is known exactly (no timing of real runs is
 * asserted):
 *   - no waits: scaling one thread's holds by 2 ends that thread later by
 *     exactly the added hold time, and the run with it when it ends last;
 *   - one hand-off: the waiter's grant follows the scaled release plus the
 *     measured hand-off latency; at 0.5 the lock is free when asked for;
 *   - factor 1 gives the measured wall back; JSON keys are there;
 *   - what bounds the prediction: the critical path's parts (scaled holds,
 *     other work, lock waits, waits kept as measured, start) add up to the
 *     replay's wall time, with known values on the hand-off trace; a site
 *     off the critical path is said to be (off_path, and in words);
 *   - the interval holds the point estimate, has a spread where the
 *     hand-off latencies differ, is the same twice (fixed seed), and is
 *     the point with --samples 0; with no hand-offs, holds whose length
 *     changes during the run give a wider interval than holds of one
 *     length (the interval draws blocks of the run again too), and
 *     varying holds off the critical path leave it the point;
 *   - a join waits for the joined thread's replayed end; a trace that
 *     starts inside a hold keeps the lock held until its release;
 *   - chains: C waits for L1 held by A, who waits for L2 held by B;
 *     the who-made-whom-wait matrix splits the waits by holder; two
 *     threads that wait for each other's lock to the trace's end are a
 *     cycle;
 *   - refusals, each one line and a non-zero status: a contended-only
 *     trace (releases without acquisitions; the line gives the command
 *     that records a suitable trace), dropped events, unknown site,
 *     empty, header-only, truncated and corrupt files, bad options;
 *   - with a real program (bank, preloaded), factor 1 replays the
 *     measured wall (exactly when the file is consistent); the journal
 *     lock at 0.5 prints what bounds it (the auditor's condition wait,
 *     kept as measured) and an interval holding the point.
 *
 * Usage: test_trace_whatif SYNCPROF_CLI [PRELOAD_SO BANK]
 */
#include <inttypes.h>

#include "tools_util.h"
#include "trace/format.h"
#include "base/types.h"

static const char *cli;

struct tw {
	uint8_t buf[1 << 16];
	size_t n;
};

static void put(struct tw *w, const void *p, size_t n)
{
	T_ASSERT(w->n + n <= sizeof(w->buf));
	memcpy(w->buf + w->n, p, n);
	w->n += n;
}

static void pad8(struct tw *w)
{
	static const uint8_t z[8];

	put(w, z, (8 - w->n % 8) % 8);
}

static void tw_header(struct tw *w)
{
	struct sp_trace_file_header h;

	memset(&h, 0, sizeof(h));
	memcpy(h.magic, SP_TRACE_MAGIC, 8);
	h.version = SP_TRACE_VERSION;
	h.header_size = SP_TRACE_HEADER_SIZE;
	h.pid = 4242;
	h.clock = SP_TRACE_CLOCK_MONOTONIC;
	h.ticks_per_sec = 1000000000ull;
	w->n = 0;
	put(w, &h, sizeof(h));
}

/* A STRING or THREAD record: u64 key (or u32 tid + pad), the string. */
static void tw_named(struct tw *w, uint16_t type, uint64_t key, const char *s)
{
	size_t len = 8 + 8 + strlen(s) + 1;
	struct sp_trace_rec_header h = { type, 0, (uint32_t)((len + 7) / 8 * 8) };

	put(w, &h, sizeof(h));
	put(w, &key, 8);
	put(w, s, strlen(s) + 1);
	pad8(w);
}

enum { FILE_KEY = 0x1000, FN_A = 0x2000, FN_B = 0x3000, FN_C = 0x4000, FN_D = 0x5000 };

static void tw_names(struct tw *w)
{
	tw_named(w, SP_REC_STRING, FILE_KEY, "src/app.c");
	tw_named(w, SP_REC_STRING, FN_A, "fa");
	tw_named(w, SP_REC_STRING, FN_B, "fb");
	tw_named(w, SP_REC_STRING, FN_C, "fc");
	tw_named(w, SP_REC_STRING, FN_D, "fd");
	tw_named(w, SP_REC_THREAD, 101, "alpha");
	tw_named(w, SP_REC_THREAD, 102, "beta");
	tw_named(w, SP_REC_THREAD, 103, "gamma");
}

/* A lock event at @ts on @tid: site src/app.c:@line in function @fn. */
static void tw_ev(struct tw *w, uint64_t ts, uint32_t tid, uint32_t id, uint64_t obj,
		  uint64_t fn, unsigned line, uint64_t type, int has_ns, uint64_t ns)
{
	unsigned nargs = has_ns ? 6 : 5;
	struct sp_trace_rec_header h = { SP_REC_EVENT, (uint16_t)nargs, 24 + 8 * nargs };
	uint64_t a[6] = { obj, FILE_KEY, fn, line, type, ns };

	put(w, &h, sizeof(h));
	put(w, &ts, 8);
	put(w, &tid, 4);
	put(w, &id, 4);
	put(w, a, 8 * nargs);
}

#define ACQ(w, ts, tid, obj, fn, line, wait) \
	tw_ev(w, ts, tid, SP_EV_LOCK_ACQUIRED, obj, fn, line, SP_TYPE_MUTEX, 1, wait)
#define REL(w, ts, tid, obj, fn, line) \
	tw_ev(w, ts, tid, SP_EV_LOCK_RELEASED, obj, fn, line, SP_TYPE_MUTEX, 0, 0)
#define WAIT(w, ts, tid, obj, fn, line) \
	tw_ev(w, ts, tid, SP_EV_LOCK_WAIT, obj, fn, line, SP_TYPE_MUTEX, 0, 0)

static const char *tw_save(struct tw *w, const char *name)
{
	static char path[8][300];
	static int k;
	char *p = path[k++ % 8];
	FILE *f;

	snprintf(p, 300, "%s/%s", t_tmp(), name);
	f = fopen(p, "wb");
	T_ASSERT(f);
	T_ASSERT_UINT(fwrite(w->buf, 1, w->n, f), ==, w->n);
	T_ASSERT_INT(fclose(f), ==, 0);
	return p;
}

/* The integer after "@key": in @json (the first one). */
static int64_t jnum(const char *json, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	p = strstr(json, pat);
	if (!p)
		T_FAIL("no %s in %s", key, json);
	return strtoll(p + strlen(pat), NULL, 10);
}

/* Exactly one line on stderr, no output crash. */
static void expect_one_line(int rc, int want_rc, const char *err, const char *needle)
{
	size_t lines = 0;

	T_ASSERT_INT(rc, ==, want_rc);
	for (const char *p = err; *p; p++)
		lines += *p == '\n';
	T_ASSERT_UINT(lines, ==, 1);
	T_ASSERT_CONTAINS(err, needle);
}

/* The integer after "@key": in the object that follows "@obj": in @json. */
static int64_t jnum_in(const char *json, const char *obj, const char *key)
{
	char pat[128];
	const char *p;

	snprintf(pat, sizeof(pat), "\"%s\":{", obj);
	p = strstr(json, pat);
	if (!p)
		T_FAIL("no %s in %s", obj, json);
	return jnum(p, key);
}

/* The critical path's parts add up to its total, which is the replay's
 * wall time; the interval holds the point; each lock's too. */
static void check_bound(const char *json)
{
	static const char *const paths[2][2] = { { "predicted", "predicted_wall_ns" },
						 { "replayed", "replay_wall_ns" } };
	const char *p, *end;

	for (int i = 0; i < 2; i++) {
		const char *o = paths[i][0];
		int64_t total = jnum_in(json, o, "total_ns");

		T_ASSERT_INT(total, ==, jnum(json, paths[i][1]));
		T_ASSERT_INT(jnum_in(json, o, "scaled_ns") + jnum_in(json, o, "work_ns") +
				     jnum_in(json, o, "lock_wait_ns") +
				     jnum_in(json, o, "kept_wait_ns") + jnum_in(json, o, "start_ns"),
			     ==, total);
	}
	T_ASSERT_CONTAINS(json, "\"order_kept\":true");
	T_ASSERT_INT(jnum(json, "predicted_wall_low_ns"), <=, jnum(json, "predicted_wall_ns"));
	T_ASSERT_INT(jnum(json, "predicted_wall_high_ns"), >=, jnum(json, "predicted_wall_ns"));
	/* each lock's (the per_lock array comes before per_thread's waits) */
	end = strstr(json, "\"per_thread\":");
	T_ASSERT(end);
	for (p = strstr(json, "\"wait_predicted_ns\":"); p && p < end;
	     p = strstr(p + 1, "\"wait_predicted_ns\":")) {
		T_ASSERT_INT(jnum(p, "wait_predicted_low_ns"), <=, jnum(p, "wait_predicted_ns"));
		T_ASSERT_INT(jnum(p, "wait_predicted_high_ns"), >=, jnum(p, "wait_predicted_ns"));
		T_ASSERT_INT(jnum(p, "wait_predicted_low_ns"), >=, 0);
	}
}

static int64_t whatif_num(const char *trace, const char *site, const char *factor,
			  const char *key)
{
	char *out, *err;
	int64_t v;
	int rc = t_run(&out, &err, "%s trace what-if %s --site '%s' --factor %s --json", cli,
		       trace, site, factor);

	if (rc)
		T_FAIL("what-if failed (%d): %s", rc, err);
	check_bound(out);
	v = jnum(out, key);
	free(out);
	free(err);
	return v;
}

/* Thread alpha holds L1 at fa (app.c:10) 100 ns every 1000 ns; beta holds
 * L2 at fb (app.c:20) in between; nobody waits. */
static void test_no_waits(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	for (uint64_t i = 0; i < 10; i++) {
		ACQ(&w, 1000 + i * 1000, 101, 0xa1, FN_A, 10, 0);
		REL(&w, 1100 + i * 1000, 101, 0xa1, FN_A, 11);
		ACQ(&w, 1500 + i * 1000, 102, 0xb2, FN_B, 20, 0);
		REL(&w, 1600 + i * 1000, 102, 0xb2, FN_B, 21);
	}
	p = tw_save(&w, "nowait.trace");
	/* measured: 1000 .. 10600; alpha ends at 10100 */
	T_ASSERT_INT(whatif_num(p, "fa", "1", "measured_wall_ns"), ==, 9600);
	T_ASSERT_INT(whatif_num(p, "fa", "1", "predicted_wall_ns"), ==, 9600);
	/* x2: alpha's ten holds take 100 ns more each: ends at 11100 */
	T_ASSERT_INT(whatif_num(p, "app.c:10", "2", "predicted_wall_ns"), ==, 10100);
	T_ASSERT_INT(whatif_num(p, "src/app.c:10", "2", "predicted_wall_ns"), ==, 10100);
	/* beta's site x3: its holds end 200 ns later each */
	T_ASSERT_INT(whatif_num(p, "fb", "3", "predicted_wall_ns"), ==, 9600 + 2000);
	/* x0.5 on alpha: it ends earlier, beta still ends the run */
	T_ASSERT_INT(whatif_num(p, "fa", "0.5", "predicted_wall_ns"), ==, 9600);

	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2 --json", cli, p),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "\"per_lock\":[");
	T_ASSERT_CONTAINS(out, "\"per_thread\":[");
	T_ASSERT_CONTAINS(out, "\"matched_sites\":[\"src/app.c:10\"]");
	T_ASSERT_CONTAINS(out, "\"tid\":101,\"name\":\"alpha\",\"holds_at_site\":10,"
			       "\"held_at_site_ns\":1000,\"end_measured_ns\":9100,"
			       "\"end_predicted_ns\":10100");
	T_ASSERT_CONTAINS(out, "\"wait_measured_ns\":0,\"wait_replayed_ns\":0,"
			       "\"wait_predicted_ns\":0");
	T_ASSERT_INT(jnum(out, "scaled_holds"), ==, 10);
	check_bound(out);

	/* alpha ends the predicted run: its holds are 2000 ns of the path,
	 * its work between them the other 8100; at factor 1 beta ended it */
	T_ASSERT_CONTAINS(out, "\"verdict\":\"on_path\"");
	T_ASSERT_INT(jnum_in(out, "predicted", "scaled_ns"), ==, 2000);
	T_ASSERT_INT(jnum_in(out, "predicted", "work_ns"), ==, 8100);
	T_ASSERT_INT(jnum_in(out, "replayed", "scaled_ns"), ==, 0);
	free(out);
	free(err);

	/* text: the numbers and the critical path */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "measured wall          0.010 ms");
	T_ASSERT_CONTAINS(out, "predicted wall         0.010 ms  (+5.21% of measured)");
	T_ASSERT_CONTAINS(out, "90% interval");
	T_ASSERT_CONTAINS(out, "each lock's hand-off order kept as measured");
	T_ASSERT_CONTAINS(out, "=> the holds begun at fa are 0.002 ms (19.8%) of the predicted "
			       "critical path (0.000 ms at factor 1): the wall time moves with them");
	T_ASSERT_CONTAINS(out, "critical path of the predicted run: 101 alpha 100.0%");
	free(out);
	free(err);

	/* x0.5 on alpha, whose thread ends first: off the critical path, at
	 * factor 1 and at 0.5, and said so */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 0.5 --json", cli, p),
		     ==, 0);
	check_bound(out);
	T_ASSERT_CONTAINS(out, "\"verdict\":\"off_path\"");
	T_ASSERT_INT(jnum_in(out, "predicted", "scaled_ns"), ==, 0);
	T_ASSERT_INT(jnum_in(out, "predicted", "threads"), ==, 1);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 0.5", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "predicted wall         0.010 ms  (+0.00% of measured)");
	T_ASSERT_CONTAINS(out, "=> the holds begun at fa are not on the critical path, at factor 1 "
			       "nor at 0.5: the wall time is bounded by the threads' work outside "
			       "the scaled holds (94.8% of it)");
	T_ASSERT_CONTAINS(out, "critical path of the predicted run: 102 beta 94.8%");
	free(out);
	free(err);

	/* unknown site: one line naming sites that exist */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site nosuch --factor 2", cli, p),
		     ==, 1);
	expect_one_line(1, 1, err, "no critical section in the trace begins at 'nosuch'");
	T_ASSERT_CONTAINS(err, "src/app.c:10");
	T_ASSERT_STR(out, "");
	free(out);
	free(err);
}

/* alpha holds L at fa [0, 100]; beta asks at 50 (fb), gets it at 110
 * (hand-off latency 10), holds it to 150. */
static void test_handoff(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	ACQ(&w, 0, 101, 0xa1, FN_A, 10, 0);
	REL(&w, 100, 101, 0xa1, FN_A, 11);
	WAIT(&w, 50, 102, 0xa1, FN_B, 20);
	ACQ(&w, 110, 102, 0xa1, FN_B, 20, 60);
	REL(&w, 150, 102, 0xa1, FN_B, 21);
	p = tw_save(&w, "handoff.trace");
	T_ASSERT_INT(whatif_num(p, "fa", "1", "predicted_wall_ns"), ==, 150);
	/* x2: released at 200, granted at 210, released at 250 */
	T_ASSERT_INT(whatif_num(p, "fa", "2", "predicted_wall_ns"), ==, 250);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2 --json", cli, p),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "\"contended_measured\":1,\"contended_predicted\":1,"
			       "\"wait_measured_ns\":60,\"wait_replayed_ns\":60,"
			       "\"wait_predicted_ns\":160,\"wait_change_ns\":100");
	/* beta ends the run, after waiting for alpha: both on the path */
	T_ASSERT_CONTAINS(out, "\"critical_path\":[{\"tid\":101,\"ns\":200},{\"tid\":102,\"ns\":50}]");
	/* alpha's scaled hold [0, 200], the hand-off [200, 210], beta's hold */
	check_bound(out);
	T_ASSERT_CONTAINS(out, "\"predicted\":{\"total_ns\":250,\"scaled_ns\":200,\"work_ns\":40,"
			       "\"lock_wait_ns\":10,\"kept_wait_ns\":0,\"start_ns\":0,"
			       "\"handoffs\":1,\"joins\":0,\"threads\":2}");
	T_ASSERT_CONTAINS(out, "\"critical_path_handoff_ns\":10,\"critical_path_handoffs\":1");
	T_ASSERT_CONTAINS(out, "\"critical_path_ns\":50,\"critical_path_scaled_ns\":0,"
			       "\"critical_path_lock_wait_ns\":10,\"critical_path_kept_wait_ns\":0");
	/* one hand-off: every replicate draws its one latency, no spread */
	T_ASSERT_INT(jnum(out, "predicted_wall_low_ns"), ==, 250);
	T_ASSERT_INT(jnum(out, "predicted_wall_high_ns"), ==, 250);
	free(out);
	free(err);
	/* x0.5: released at 50, when beta asks: no wait, done at 90 */
	T_ASSERT_INT(whatif_num(p, "fa", "0.5", "predicted_wall_ns"), ==, 90);
	/* beta's own hold x2: 40 ns more */
	T_ASSERT_INT(whatif_num(p, "fb", "2", "predicted_wall_ns"), ==, 190);
}

/* A trace switched on mid-run: alpha already holds L (0xa1) when it
 * starts; its first event on L is the release at 100, after a hold of M
 * at fa [0, 80]; beta waits for L from 50 and gets it at 110. */
static void test_mid_run(void)
{
	struct tw w;
	const char *p;

	tw_header(&w);
	tw_names(&w);
	ACQ(&w, 0, 101, 0xc1, FN_A, 10, 0);
	REL(&w, 80, 101, 0xc1, FN_A, 11);
	REL(&w, 100, 101, 0xa1, FN_C, 12);
	WAIT(&w, 50, 102, 0xa1, FN_B, 20);
	ACQ(&w, 110, 102, 0xa1, FN_B, 20, 60);
	REL(&w, 150, 102, 0xa1, FN_B, 21);
	p = tw_save(&w, "midrun.trace");
	T_ASSERT_INT(whatif_num(p, "fa", "1", "predicted_wall_ns"), ==, 150);
	/* M's hold x2 ends at 160, L is released at 180, beta gets it at 190 */
	T_ASSERT_INT(whatif_num(p, "fa", "2", "predicted_wall_ns"), ==, 230);
}

/* gamma joins alpha: the join returns 5 ns after alpha's last event. */
static void test_join(void)
{
	struct tw w;
	const char *p;

	tw_header(&w);
	tw_names(&w);
	ACQ(&w, 0, 101, 0xa1, FN_A, 10, 0);
	REL(&w, 100, 101, 0xa1, FN_A, 11);
	tw_ev(&w, 10, 103, SP_EV_LOCK_WAIT, 0x777, FN_C, 30, SP_TYPE_JOIN, 0, 0);
	tw_ev(&w, 105, 103, SP_EV_LOCK_ACQUIRED, 0x777, FN_C, 30, SP_TYPE_JOIN, 1, 95);
	ACQ(&w, 110, 103, 0xc3, FN_C, 31, 0);
	REL(&w, 120, 103, 0xc3, FN_C, 32);
	p = tw_save(&w, "join.trace");
	T_ASSERT_INT(whatif_num(p, "fa", "1", "predicted_wall_ns"), ==, 120);
	/* alpha ends at 200: the join returns at 205, gamma ends at 220 */
	T_ASSERT_INT(whatif_num(p, "fa", "2", "predicted_wall_ns"), ==, 220);
	/* the path: alpha's scaled hold to 200, the join's 5 ns delay kept as
	 * measured, gamma's 15 ns after it */
	T_ASSERT_INT(whatif_num(p, "fa", "2", "joins"), ==, 1);
	T_ASSERT_INT(whatif_num(p, "fa", "2", "kept_wait_ns"), ==, 5);
	T_ASSERT_INT(whatif_num(p, "fa", "2", "scaled_ns"), ==, 200);
}

/* A condition wait that bounds the run (bank's auditor, built exactly):
 * alpha holds L (fa) [0, 100] and [200, 300]; gamma takes M at 5, waits
 * on a condition with it from 10 to 1000 (M released and taken again),
 * and releases M at 1010.  Scaling fa cannot move the end: the path is
 * gamma's, 990 ns of it the wait kept as measured, and the words say so,
 * naming the wait's site. */
static void test_kept_bound(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	ACQ(&w, 0, 101, 0xa1, FN_A, 10, 0);
	ACQ(&w, 5, 103, 0xc3, FN_C, 39, 0);
	tw_ev(&w, 10, 103, SP_EV_COND_WAIT, 0xcc, FN_C, 40, 0xc3, 0, 0);
	REL(&w, 100, 101, 0xa1, FN_A, 11);
	ACQ(&w, 200, 101, 0xa1, FN_A, 10, 0);
	REL(&w, 300, 101, 0xa1, FN_A, 11);
	tw_ev(&w, 1000, 103, SP_EV_COND_WOKEN, 0xcc, FN_C, 40, 0xc3, 1, 990);
	REL(&w, 1010, 103, 0xc3, FN_C, 41);
	p = tw_save(&w, "kept.trace");
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 0.5 --json", cli, p),
		     ==, 0);
	check_bound(out);
	T_ASSERT_INT(jnum(out, "predicted_wall_ns"), ==, 1010);
	T_ASSERT_INT(jnum_in(out, "predicted", "kept_wait_ns"), ==, 990);
	T_ASSERT_INT(jnum_in(out, "predicted", "scaled_ns"), ==, 0);
	T_ASSERT_CONTAINS(out, "\"verdict\":\"off_path\"");
	T_ASSERT_CONTAINS(out, "\"kept_waits\":[{\"site\":\"src/app.c:40\",\"ns\":990}]");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 0.5", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "  waits kept as measured         0.001 ms   98.0%");
	T_ASSERT_CONTAINS(out, "  largest kept waits on it: src/app.c:40 0.001 ms\n");
	T_ASSERT_CONTAINS(out, "the wall time is bounded by the waits kept as measured (98.0% of "
			       "it, most at src/app.c:40), which do not move with F");
	free(out);
	free(err);
}

/* Ten hand-offs of L from alpha (fa, holds [1000 i, 1000 i + 100]) to
 * beta, who asks at +50 and is let in 5 + 7 i ns after the release: the
 * latencies differ, so the interval has a spread; it holds the point,
 * does not change from one run to the next, and is the point with
 * --samples 0. */
static void test_interval(void)
{
	struct tw w;
	const char *p;
	char *out, *err, *again;
	int64_t lo, hi, pt;

	tw_header(&w);
	tw_names(&w);
	for (uint64_t i = 0; i < 10; i++) {
		ACQ(&w, 1000 * i, 101, 0xa1, FN_A, 10, 0);
		WAIT(&w, 1000 * i + 50, 102, 0xa1, FN_B, 20);
		REL(&w, 1000 * i + 100, 101, 0xa1, FN_A, 11);
		ACQ(&w, 1000 * i + 105 + 7 * i, 102, 0xa1, FN_B, 20, 55 + 7 * i);
		REL(&w, 1000 * i + 145 + 7 * i, 102, 0xa1, FN_B, 21);
	}
	p = tw_save(&w, "interval.trace");
	T_ASSERT_INT(whatif_num(p, "fa", "1", "predicted_wall_ns"), ==, 9208);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 3 --json", cli, p),
		     ==, 0);
	check_bound(out);
	pt = jnum(out, "predicted_wall_ns");
	lo = jnum(out, "predicted_wall_low_ns");
	hi = jnum(out, "predicted_wall_high_ns");
	/* each hold 200 ns longer, alpha's later acquisitions with it: the
	 * last release at 9000 + 9 * 200 + 300, beta in 68 ns later, 40 more */
	T_ASSERT_INT(pt, ==, 11208);
	T_ASSERT_INT(lo, <, hi);
	T_ASSERT_INT(jnum(out, "samples"), ==, 40);
	/* 40 steps: too few to cut into blocks */
	T_ASSERT_INT(jnum(out, "blocks"), ==, 0);
	free(err);
	T_ASSERT_INT(t_run(&again, &err, "%s trace what-if %s --site fa --factor 3 --json", cli, p),
		     ==, 0);
	T_ASSERT_STR(again, out);
	free(again);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 3 --json --samples 0",
			   cli, p),
		     ==, 0);
	T_ASSERT_INT(jnum(out, "predicted_wall_low_ns"), ==, pt);
	T_ASSERT_INT(jnum(out, "predicted_wall_high_ns"), ==, pt);
	T_ASSERT_INT(jnum(out, "samples"), ==, 0);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 3 --samples=7", cli,
			   p),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "7 replays with the 10 measured hand-off latencies drawn again");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 3 --samples 0", cli,
			   p),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "(no interval: --samples 0)");
	free(out);
	free(err);
}

/* alpha holds L at fa 200 times, 1000 ns apart, with no waiter: holds
 * of @hold(i) ns.  Returns the trace's path. */
static const char *write_holds(const char *name, uint64_t (*hold)(uint64_t))
{
	struct tw w;

	tw_header(&w);
	tw_names(&w);
	for (uint64_t i = 0; i < 200; i++) {
		ACQ(&w, 1000 * i, 101, 0xa1, FN_A, 10, 0);
		REL(&w, 1000 * i + hold(i), 101, 0xa1, FN_A, 11);
	}
	return tw_save(&w, name);
}

static uint64_t hold_constant(uint64_t i)
{
	(void)i;
	return 100;
}

/* the same total, 20000 ns: 10 ns for the first half, then a spell of
 * 190 ns holds */
static uint64_t hold_varying(uint64_t i)
{
	return i < 100 ? 10 : 190;
}

/*
 * No hand-offs at all, so only the run's own variability can widen the
 * interval: holds of one length give a narrower one than holds whose
 * length changes during the run; both hold the point.  At factor 2 each
 * hold adds its length: the last acquisition comes at 199000 + the 199
 * holds before it, and its hold, doubled, ends the run.
 */
static void test_interval_holds(void)
{
	const char *pc = write_holds("holds_constant.trace", hold_constant);
	const char *pv = write_holds("holds_varying.trace", hold_varying);
	int64_t wc, wv;
	char *out, *err;

	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2 --json", cli, pc),
		     ==, 0);
	check_bound(out);
	T_ASSERT_INT(jnum(out, "predicted_wall_ns"), ==, 199000 + 19900 + 200);
	wc = jnum(out, "predicted_wall_high_ns") - jnum(out, "predicted_wall_low_ns");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2 --json", cli, pv),
		     ==, 0);
	check_bound(out);
	T_ASSERT_INT(jnum(out, "predicted_wall_ns"), ==, 199000 + 1000 + 99 * 190 + 380);
	wv = jnum(out, "predicted_wall_high_ns") - jnum(out, "predicted_wall_low_ns");
	T_ASSERT_INT(wv, >, wc);
	T_ASSERT_INT(jnum(out, "blocks"), ==, 20);
	free(out);
	free(err);
	/* the same interval twice; the text says what was drawn */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2 --json", cli, pv),
		     ==, 0);
	T_ASSERT_INT(jnum(out, "predicted_wall_high_ns") - jnum(out, "predicted_wall_low_ns"), ==,
		     wv);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, pv), ==, 0);
	T_ASSERT_CONTAINS(out, "the run's 20 blocks drawn again 40 times; no hand-off latency");
	free(out);
	free(err);
}

/*
 * The same varying holds on alpha, and beta holding L2 at fb 100 ns in
 * every period, ending the run at 199600: at 0.5 alpha ends earlier
 * still, off the critical path, which is beta's alone at factor 1 and
 * at F.  The blocks follow the path, so alpha's holds do not widen the
 * interval: it is the point.
 */
static void test_interval_off_path(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	for (uint64_t i = 0; i < 200; i++) {
		ACQ(&w, 1000 * i, 101, 0xa1, FN_A, 10, 0);
		REL(&w, 1000 * i + hold_varying(i), 101, 0xa1, FN_A, 11);
		ACQ(&w, 1000 * i + 500, 102, 0xb2, FN_B, 20, 0);
		REL(&w, 1000 * i + 600, 102, 0xb2, FN_B, 21);
	}
	p = tw_save(&w, "holds_off_path.trace");
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fa --factor 0.5 --json", cli, p),
		     ==, 0);
	check_bound(out);
	T_ASSERT_CONTAINS(out, "\"verdict\":\"off_path\"");
	T_ASSERT_INT(jnum(out, "blocks"), ==, 20);
	T_ASSERT_INT(jnum(out, "predicted_wall_ns"), ==, 199600);
	T_ASSERT_INT(jnum(out, "predicted_wall_low_ns"), ==, 199600);
	T_ASSERT_INT(jnum(out, "predicted_wall_high_ns"), ==, 199600);
	free(out);
	free(err);
}

/* C waits at fd for L1, held by A (fa), who waits at fb for L2, held by B
 * (fc), who runs: the chain C -> A -> B. */
static void write_chain(struct tw *w)
{
	tw_header(w);
	tw_names(w);
	ACQ(w, 0, 101, 0x11, FN_A, 10, 0);
	WAIT(w, 10, 101, 0x22, FN_B, 20);
	ACQ(w, 100, 101, 0x22, FN_B, 20, 90);
	REL(w, 110, 101, 0x22, FN_B, 21);
	REL(w, 120, 101, 0x11, FN_A, 11);
	ACQ(w, 0, 102, 0x22, FN_C, 40, 0);
	REL(w, 95, 102, 0x22, FN_C, 41);
	WAIT(w, 20, 103, 0x11, FN_D, 50);
	ACQ(w, 125, 103, 0x11, FN_D, 50, 105);
	REL(w, 130, 103, 0x11, FN_D, 51);
}

static void test_chains(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	write_chain(&w);
	p = tw_save(&w, "chain.trace");
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s --json", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "\"chains\":[{\"wait_ns\":75,\"count\":1,\"cycle\":false,\"links\":["
			       "{\"waiter_tid\":103,\"waiter\":\"gamma\",\"object\":\"0x11\","
			       "\"site\":\"src/app.c:50\",\"holder_tid\":101,\"holder\":\"alpha\","
			       "\"hold_site\":\"src/app.c:10\"},"
			       "{\"waiter_tid\":101,\"waiter\":\"alpha\",\"object\":\"0x22\","
			       "\"site\":\"src/app.c:20\",\"holder_tid\":102,\"holder\":\"beta\","
			       "\"hold_site\":\"src/app.c:40\"}]}]");
	/* L1: gamma waited 105: 100 while alpha held it, 5 of hand-off */
	T_ASSERT_CONTAINS(out, "{\"object\":\"0x11\",\"type\":\"mutex\",\"site\":\"src/app.c:10\","
			       "\"wait_ns\":105,\"matrix\":["
			       "{\"waiter_tid\":103,\"waiter\":\"gamma\",\"holder_tid\":101,"
			       "\"holder\":\"alpha\",\"wait_ns\":100,\"count\":1},"
			       "{\"waiter_tid\":103,\"waiter\":\"gamma\",\"holder_tid\":null,"
			       "\"holder\":null,\"wait_ns\":5,\"count\":1}]}");
	T_ASSERT_CONTAINS(out, "\"holder_tid\":102,\"holder\":\"beta\",\"wait_ns\":85");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "103 gamma waits at src/app.c:50 for 0x11 (mutex), held by 101 "
			       "alpha since src/app.c:10,");
	T_ASSERT_CONTAINS(out, "101 alpha waits at src/app.c:20 for 0x22 (mutex), held by 102 "
			       "beta since src/app.c:40 (root, running)");
	free(out);
	free(err);
}

/* A deadlock: alpha holds L1 and waits for L2, beta holds L2 and waits
 * for L1, until the trace ends (gamma's last event at 100). */
static void test_deadlock(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	ACQ(&w, 0, 101, 0x11, FN_A, 10, 0);
	WAIT(&w, 10, 101, 0x22, FN_A, 12);
	ACQ(&w, 5, 102, 0x22, FN_B, 20, 0);
	WAIT(&w, 15, 102, 0x11, FN_B, 22);
	ACQ(&w, 90, 103, 0x33, FN_C, 30, 0);
	REL(&w, 100, 103, 0x33, FN_C, 31);
	p = tw_save(&w, "deadlock.trace");
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "0.000 ms, 1 times  DEADLOCK CYCLE");
	T_ASSERT_CONTAINS(out, "101 alpha waits at src/app.c:12 for 0x22 (mutex), held by 102 beta "
			       "since src/app.c:20,");
	T_ASSERT_CONTAINS(out, "102 beta waits at src/app.c:22 for 0x11 (mutex), held by 101 alpha "
			       "since src/app.c:10 (a waiter above)");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s --json", cli, p), ==, 0);
	/* the cycle stands while both wait, [15, 100], seen from each side */
	T_ASSERT_CONTAINS(out, "\"chains\":[{\"wait_ns\":85,\"count\":1,\"cycle\":true,"
			       "\"links\":[{\"waiter_tid\":101,");
	T_ASSERT_CONTAINS(out, "]},{\"wait_ns\":85,\"count\":1,\"cycle\":true,"
			       "\"links\":[{\"waiter_tid\":102,");
	/* alpha waited [10, 100] while beta held L2 */
	T_ASSERT_CONTAINS(out, "\"holder_tid\":102,\"holder\":\"beta\",\"wait_ns\":90");
	free(out);
	free(err);
}

/* What the contended-only default writes: releases with hold_ns whose
 * acquisitions are not in the file. */
static void test_contended_only(void)
{
	struct tw w;
	const char *p;
	char *out, *err;

	tw_header(&w);
	tw_names(&w);
	for (uint64_t i = 0; i < 3; i++) {
		WAIT(&w, 1000 * i + 20, 102, 0x11, FN_B, 20);
		tw_ev(&w, 1000 * i + 100, 101, SP_EV_LOCK_RELEASED, 0x11, FN_A, 11, SP_TYPE_MUTEX, 1,
		      100);
		ACQ(&w, 1000 * i + 110, 102, 0x11, FN_B, 20, 90);
		tw_ev(&w, 1000 * i + 150, 102, SP_EV_LOCK_RELEASED, 0x11, FN_B, 21, SP_TYPE_MUTEX, 1,
		      40);
	}
	p = tw_save(&w, "contended.trace");
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site fb --factor 2", cli, p), ==, 1);
	expect_one_line(1, 1, err, "trace_events=all");
	/* the command that records a suitable trace, whole (no maps in this
	 * file: the program is not known) */
	T_ASSERT_CONTAINS(err, "record it again with: syncprof run --trace ");
	T_ASSERT_CONTAINS(err, "contended.trace --trace-events all --trace-buffer 268435456 -- "
			       "PROGRAM [ARGS] (compiled in: SYNCPROF_OPTIONS=trace=");
	T_ASSERT_STR(out, "");
	free(out);
	free(err);
	/* chains works from the releases' hold times: 80 of each 90 ns wait */
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s --json", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "\"holder_tid\":101,\"holder\":\"alpha\",\"wait_ns\":240,\"count\":3");
	free(out);
	free(err);
}

static void test_bad_input(void)
{
	struct tw w;
	const char *p;
	char *out, *err;
	size_t full;
	int rc;
	static const struct sp_trace_rec_header bad = { 40, 0, 16 };
	struct sp_trace_rec_dropped d = { { SP_REC_DROPPED, 0, 40 }, 10, 20, 101, 0, 7 };

	/* empty */
	w.n = 0;
	p = tw_save(&w, "empty.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 1, err, "empty.trace");
	free(out);
	free(err);
	rc = t_run(&out, &err, "%s trace chains %s", cli, p);
	expect_one_line(rc, 1, err, "empty.trace");
	free(out);
	free(err);
	/* a header and no events */
	tw_header(&w);
	p = tw_save(&w, "header.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 1, err, "no lock events");
	free(out);
	free(err);
	/* truncated inside the last record */
	write_chain(&w);
	full = w.n;
	w.n = full - 12;
	p = tw_save(&w, "cut.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 3, err, "is incomplete");
	free(out);
	free(err);
	rc = t_run(&out, &err, "%s trace chains %s", cli, p);
	expect_one_line(rc, 3, err, "is incomplete");
	free(out);
	free(err);
	/* corrupt: an impossible record type */
	w.n = full;
	put(&w, &bad, sizeof(bad));
	put(&w, &bad, sizeof(bad));
	p = tw_save(&w, "corrupt.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 1, err, "is corrupt");
	free(out);
	free(err);
	rc = t_run(&out, &err, "%s trace chains %s --json", cli, p);
	expect_one_line(rc, 1, err, "is corrupt");
	T_ASSERT_STR(out, "");
	free(out);
	free(err);
	/* dropped events: what-if refuses, chains says so */
	w.n = full;
	put(&w, &d, sizeof(d));
	p = tw_save(&w, "dropped.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 1, err, "7 events were dropped");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s", cli, p), ==, 0);
	T_ASSERT_CONTAINS(out, "note: 7 events were dropped");
	free(out);
	free(err);
	/* a time no trace can have */
	write_chain(&w);
	ACQ(&w, UINT64_C(1) << 62, 101, 0x11, FN_A, 10, 0);
	p = tw_save(&w, "far.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 1, err, "is corrupt: 1 lock events have a time or a wait beyond");
	free(out);
	free(err);
	/* a writer that hit a full disk: the header says so */
	write_chain(&w);
	((struct sp_trace_file_header *)w.buf)->flags = SP_TRACE_FLAG_WRITE_ERROR;
	((struct sp_trace_file_header *)w.buf)->write_errno = ENOSPC;
	p = tw_save(&w, "enospc.trace");
	rc = t_run(&out, &err, "%s trace what-if %s --site fa --factor 2", cli, p);
	expect_one_line(rc, 3, err, "writing it failed (No space left on device)");
	free(out);
	free(err);
	rc = t_run(&out, &err, "%s trace chains %s", cli, p);
	expect_one_line(rc, 3, err, "writing it failed");
	free(out);
	free(err);
	/* missing file */
	rc = t_run(&out, &err, "%s trace chains %s/none.trace", cli, t_tmp());
	expect_one_line(rc, 1, err, "cannot open");
	free(out);
	free(err);

	/* bad options: exit 2, one line */
	write_chain(&w);
	p = tw_save(&w, "opts.trace");
	static const char *const bad_args[] = {
		"--site fa",          "--factor 2",         "--site fa --factor 0",
		"--site fa --factor -1", "--site fa --factor x", "--site fa --factor inf",
		"--site '' --factor 2", "--site fa --factor 2 --top 0", "--site fa --factor 2 --bogus",
		"--site", "--site fa --factor 2 --samples 1001", "--site fa --factor 2 --samples x",
		"--site fa --factor 2 --samples -1", "--site fa --factor 2 --samples",
	};
	for (size_t i = 0; i < sizeof(bad_args) / sizeof(*bad_args); i++) {
		rc = t_run(&out, &err, "%s trace what-if %s %s", cli, p, bad_args[i]);
		expect_one_line(rc, 2, err, "syncprof trace what-if:");
		free(out);
		free(err);
	}
	rc = t_run(&out, &err, "%s trace chains %s --top x", cli, p);
	expect_one_line(rc, 2, err, "syncprof trace chains:");
	free(out);
	free(err);
	rc = t_run(&out, &err, "%s trace chains", cli);
	expect_one_line(rc, 2, err, "syncprof trace chains:");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if --help", cli), ==, 0);
	T_ASSERT_CONTAINS(out, "docs/whatif.md");
	T_ASSERT_CONTAINS(out, "--samples N");
	T_ASSERT_CONTAINS(out, "what bounds it");
	T_ASSERT_CONTAINS(out, "syncprof run --trace FILE --trace-events all --trace-buffer");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace --help", cli), ==, 0);
	T_ASSERT_CONTAINS(out, "syncprof trace what-if FILE --site SITE --factor F");
	T_ASSERT_CONTAINS(out, "syncprof trace chains FILE");
	free(out);
	free(err);
}

/* A real program: bank under the preload library, every event kept. */
static void test_real(const char *preload, const char *bank)
{
	char trace[300], *out, *err;
	int64_t measured, replayed, predicted, inconsistent, kept, work, lock;
	char top[256], words[128];
	int on_path;

	snprintf(trace, sizeof(trace), "%s/bank.trace", t_tmp());
	T_ASSERT_INT(t_run(&out, &err,
			   "SYNCPROF_OPTIONS=trace=%s,trace_events=all,trace_buffer=268435456,"
			   "report_at_exit=0,control=0 LD_PRELOAD=%s %s 4 5000",
			   trace, preload, bank),
		     ==, 0);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site journal_append --factor 1 --json",
			   cli, trace),
		     ==, 0);
	measured = jnum(out, "measured_wall_ns");
	replayed = jnum(out, "replay_wall_ns");
	predicted = jnum(out, "predicted_wall_ns");
	inconsistent = jnum(out, "inconsistent");
	/* the site is named from the binary's debug info, offline */
	T_ASSERT_CONTAINS(out, "journal_append ");
	T_ASSERT_CONTAINS(out, "bank.c:");
	T_ASSERT_INT(predicted, ==, replayed);
	if (!inconsistent)
		T_ASSERT_INT(replayed, ==, measured);
	else
		T_ASSERT_INT(llabs(replayed - measured) * 100, <=, measured);
	free(out);
	free(err);
	/* The journal lock at 0.5 (issue 28): the output says what bounds the
	 * wall time.  Which part that is depends on the run's scheduling: the
	 * auditor's condition wait, kept as measured, when its end ends the
	 * run, or the tellers' work when a hand-off takes the path to them
	 * (both seen on 2 cores; asserting the first failed one run in two).
	 * So the words are checked against the parts in the JSON of the same
	 * file and seed; test_kept_bound() builds the auditor's case exactly. */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site journal_append --factor 0.5 --json",
			   cli, trace),
		     ==, 0);
	check_bound(out);
	T_ASSERT_INT(jnum(out, "samples"), ==, 40);
	kept = jnum_in(out, "predicted", "kept_wait_ns");
	work = jnum_in(out, "predicted", "work_ns");
	lock = jnum_in(out, "predicted", "lock_wait_ns");
	on_path = strstr(out, "\"verdict\":\"on_path\"") != NULL;
	top[0] = 0;
	if (kept > 0) {
		const char *k = strstr(out, "\"kept_waits\":[{\"site\":\"");

		T_ASSERT(k);
		k += strlen("\"kept_waits\":[{\"site\":\"");
		snprintf(top, sizeof(top), "%.*s", (int)strcspn(k, "\""), k);
		T_ASSERT(top[0]);
	} else {
		T_ASSERT_CONTAINS(out, "\"kept_waits\":[]");
	}
	if (on_path)
		snprintf(words, sizeof(words), "the wall time moves with them");
	else if (kept >= work && kept >= lock && kept > 0)
		snprintf(words, sizeof(words), "bounded by the waits kept as measured (");
	else if (lock > work)
		snprintf(words, sizeof(words), "bounded by waiting for locks (");
	else
		snprintf(words, sizeof(words), "bounded by the threads' work outside the scaled holds (");
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site journal_append --factor 0.5", cli,
			   trace),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "  90% interval ");
	T_ASSERT_CONTAINS(out, "what bounds it: the predicted run's critical path");
	T_ASSERT_CONTAINS(out, "waits kept as measured");
	if (top[0]) {
		/* the text's largest kept wait is the JSON's */
		char first[300];

		snprintf(first, sizeof(first), "  largest kept waits on it: %s ", top);
		T_ASSERT_CONTAINS(out, first);
		if (strstr(words, "kept")) {
			snprintf(first, sizeof(first), "most at %s), which do not move with F", top);
			T_ASSERT_CONTAINS(out, first);
		}
	}
	T_ASSERT_CONTAINS(out, "=> the holds begun at journal_append ");
	T_ASSERT_CONTAINS(out, words);
	free(out);
	free(err);
	/* x3 on the hot lock cannot make the run shorter */
	T_ASSERT_INT(t_run(&out, &err, "%s trace what-if %s --site journal_append --factor 3 --json",
			   cli, trace),
		     ==, 0);
	T_ASSERT_INT(jnum(out, "predicted_wall_ns"), >, replayed);
	free(out);
	free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s trace chains %s --json", cli, trace), ==, 0);
	T_ASSERT_CONTAINS(out, "\"format\":\"syncprof-chains\"");
	free(out);
	free(err);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: %s SYNCPROF_CLI [PRELOAD_SO BANK]\n", argv[0]);
		return 2;
	}
	cli = argv[1];
	test_no_waits();
	test_handoff();
	test_mid_run();
	test_join();
	test_kept_bound();
	test_interval_holds();
	test_interval_off_path();
	test_interval();
	test_chains();
	test_deadlock();
	test_contended_only();
	test_bad_input();
	if (argc >= 4)
		test_real(argv[2], argv[3]);
	printf("ok\n");
	return 0;
}
