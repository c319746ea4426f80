/*
 * test_report_cli.c - 'syncprof report' on saved profiles: re-rendering in
 * every format (a JSON re-render is still profile JSON v1 and keeps the
 * totals; folded sums to the total wait; pprof decodes), sort and top N,
 * --no-coalesce on a profile that kept its objects and its refusal on one
 * that did not; --diff marks a new site, orders by the change and gets
 * the numbers right; histograms of old (log2) and current profiles read
 * back, an unknown layout refused; bad and missing files and bad options give one
 * message and the documented exit status; --help tells the options.
 *
 * Usage: test_report_cli SYNCPROF_CLI SOURCE_DIR
 */
#include "runtime/runtime.h"
#include "report/profile.h"
#include "workload.h"

static const char *cli, *srcdir;
static char base[128], cur[128], coalesced[128];

static void save(const char *path, int coalesce)
{
	struct syncprof_report_options o;
	FILE *f = fopen(path, "w");

	T_ASSERT(f != NULL);
	syncprof_report_options_init(&o);
	o.format = SYNCPROF_FORMAT_JSON;
	o.coalesce = coalesce;
	T_ASSERT_INT(syncprof_report(f, &o), ==, 0);
	fclose(f);
}

static unsigned long long file_sum(const char *path, const char *key)
{
	char *text = t_slurp_file(path);
	unsigned long long n;

	T_ASSERT(text != NULL);
	n = t_json_sum(text, key);
	free(text);
	return n;
}

static void test_rerender(void)
{
	char *out, *err, path[160];
	unsigned long long wait = file_sum(base, "wait_ns"), sum = 0;
	int lines = 0;

	T_ASSERT_UINT(wait, >, 0);
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, base), ==, 0);
	T_ASSERT_CONTAINS(out, "Call site");
	T_ASSERT_CONTAINS(out, "workload.h:");
	T_ASSERT_CONTAINS(out, "objects coalesced per call site");
	free(out), free(err);

	/* JSON again: still version 1, same totals. */
	snprintf(path, sizeof(path), "%s/again.json", t_tmp());
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json -o %s %s", cli, path, base), ==, 0);
	free(out), free(err);
	T_ASSERT_UINT(file_sum(path, "wait_ns"), ==, wait);
	T_ASSERT_UINT(file_sum(path, "acquisitions"), ==, file_sum(base, "acquisitions"));
	T_ASSERT_INT(t_run(&out, &err, "python3 %s/tests/check_profile_schema.py %s", srcdir, path),
		     ==, 0);
	free(out), free(err);

	/* Folded: sums to the profile's total wait. */
	T_ASSERT_INT(t_run(&out, &err, "%s report -f folded %s", cli, base), ==, 0);
	for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n"), lines++)
		sum += strtoull(strrchr(l, ' ') + 1, NULL, 10);
	T_ASSERT_UINT(sum, ==, wait);
	T_ASSERT_INT(lines, >=, 1);
	free(out), free(err);

	/* pprof from a saved profile decodes. */
	snprintf(path, sizeof(path), "%s/p.pb.gz", t_tmp());
	T_ASSERT_INT(t_run(&out, &err, "%s report -f pprof -o %s %s", cli, path, base), ==, 0);
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err,
			   "gzip -dc %s | protoc --decode=perftools.profiles.Profile -I%s/src/report/render "
			   "%s/src/report/render/profile.proto",
			   path, srcdir, srcdir),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "string_table: \"w_waiter\"");
	free(out), free(err);

	/* Objects kept: one row per object, sort and top N. */
	T_ASSERT_INT(t_run(&out, &err, "%s report --no-coalesce -s count -n 1 -f csv %s", cli,
			   base),
		     ==, 0);
	T_ASSERT_INT(t_count_lines(out, ","), ==, 2); /* header + 1 row */
	T_ASSERT_CONTAINS(out, "mutex,0x");
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report -s count --columns site,count %s", cli, base),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "sorted by acquisitions");
	T_ASSERT(!strstr(out, "Wait Time"));
	free(out), free(err);

	/* A coalesced profile cannot be split again. */
	T_ASSERT_INT(t_run(&out, &err, "%s report --no-coalesce %s", cli, coalesced), ==, 1);
	T_ASSERT_CONTAINS(err, "was saved with objects coalesced");
	free(out), free(err);
}

static void test_diff(void)
{
	char *out, *err, *first;
	long long prev = -1;

	T_ASSERT_INT(t_run(&out, &err, "%s report --diff %s %s", cli, base, cur), ==, 0);
	T_ASSERT_CONTAINS(out, "syncprof: diff");
	T_ASSERT_INT(t_count_lines(out, "  new  "), ==, 1); /* the w_second site */
	T_ASSERT_CONTAINS(strstr(out, "  new  ") - 40, "workload.h:");
	free(out), free(err);

	/* CSV: sorted by |wait change|, the waiter's change is exact. */
	T_ASSERT_INT(t_run(&out, &err, "%s report --diff -f csv %s %s", cli, base, cur), ==, 0);
	first = strchr(out, '\n') + 1;
	for (char *l = strtok(first, "\n"); l; l = strtok(NULL, "\n")) {
		char *f = l;
		long long chg;

		for (int k = 0; k < 5; k++) /* wait_ns_change is field 5 */
			f = strchr(f, ',') + 1;
		chg = llabs(strtoll(f, NULL, 10));
		if (prev >= 0)
			T_ASSERT_INT(chg, <=, prev);
		prev = chg;
	}
	free(out), free(err);

	T_ASSERT_INT(t_run(&out, &err, "%s report --diff %s", cli, base), ==, 2);
	T_ASSERT_CONTAINS(err, "needs two profiles");
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report --diff -f pprof %s %s", cli, base, cur), ==, 2);
	free(out), free(err);

	/* -f (and the others) in any order: before --diff, after the files,
	 * between them, as --format=csv; each gives the csv header. */
	{
		static const char *const forms[] = {
			"%s report -f csv --diff %s %s",   "%s report --diff %s %s -f csv",
			"%s report --diff %s -f csv %s",   "%s report %s --diff %s --format=csv",
			"%s report --format csv %s %s --diff",
		};

		for (size_t k = 0; k < sizeof(forms) / sizeof(*forms); k++) {
			T_ASSERT_INT(t_run(&out, &err, forms[k], cli, base, cur), ==, 0);
			T_ASSERT(!strncmp(out, "type,", 5));
			free(out), free(err);
		}
		T_ASSERT_INT(t_run(&out, &err, "%s report -f pprof --diff %s %s", cli, base, cur),
			     ==, 2);
		T_ASSERT_CONTAINS(err, "table or csv");
		free(out), free(err);
		T_ASSERT_INT(t_run(&out, &err, "%s report --diff %s %s -n", cli, base, cur), ==, 2);
		T_ASSERT_CONTAINS(err, "needs a value");
		free(out), free(err);
	}
}

/* Write @text to the file @name in the test's directory; its path. */
static const char *write_tmp(const char *name, const char *text)
{
	static char path[160];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", t_tmp(), name);
	f = fopen(path, "w");
	T_ASSERT(f != NULL);
	fputs(text, f);
	fclose(f);
	return path;
}

#define PROFILE_HEAD "{\"format\":\"syncprof-profile\",\"version\":1,\"pid\":7,\"command\":\"x\","
#define ROW_HEAD "{\"type\":\"mutex\",\"object\":\"0x10\",\"n_objects\":1,\"site\":" \
	"{\"function\":\"f\",\"file\":\"a.c\",\"line\":3,\"dso\":null,\"address\":null," \
	"\"offset\":null},\"stack\":[],\"acquisitions\":100,\"contended\":10," \
	"\"wait_ns\":1510000,\"wait_max_ns\":1500000,\"hold_ns\":null,\"hold_max_ns\":null,"

/*
 * Histograms read back: a profile written before the log-linear buckets
 * (log2 "wait_hist" only) puts each log2 bucket's count into the bucket
 * of its largest value; one with "hist" and "wait_buckets" is read
 * exactly; a layout this syncprof does not know, or a bucket outside it,
 * is refused.
 */
static void test_hist(void)
{
	char *out, *err;
	const char *path;

	/* 90 waits of 0, 9 in [1024, 2048), 1 in [2^20, 2^21). */
	path = write_tmp("old.json", PROFILE_HEAD "\"rows\":[" ROW_HEAD
			 "\"wait_p50_ns\":0,\"wait_p99_ns\":2047,"
			 "\"wait_hist\":[0,0,0,0,0,0,0,0,0,0,9,0,0,0,0,0,0,0,0,0,1]}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s", cli, path), ==, 0);
	/* Buckets 71 ([1920, 2047]) and 151 ([1966080, 2097151]). */
	T_ASSERT_CONTAINS(out, "\"wait_p50_ns\":0,");
	T_ASSERT_CONTAINS(out, "\"wait_p99_ns\":1983,");
	T_ASSERT_CONTAINS(out, "\"wait_hist\":[0,0,0,0,0,0,0,0,0,0,9,0,0,0,0,0,0,0,0,0,1],"
			       "\"wait_buckets\":[[71,9],[151,1]]");
	free(out), free(err);

	/* The same waits with buckets: read as they are (log2 ignored). */
	path = write_tmp("new.json", PROFILE_HEAD
			 "\"hist\":{\"layout\":\"log-linear\",\"sub_buckets\":8,\"buckets\":304},"
			 "\"rows\":[" ROW_HEAD "\"wait_hist\":[1],"
			 "\"wait_buckets\":[[64,9],[147,1]]}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s", cli, path), ==, 0);
	T_ASSERT_CONTAINS(out, "\"wait_p50_ns\":0,\"wait_p90_ns\":0,\"wait_p99_ns\":1087,");
	T_ASSERT_CONTAINS(out, "\"wait_hist\":[0,0,0,0,0,0,0,0,0,0,9,0,0,0,0,0,0,0,0,0,1],"
			       "\"wait_buckets\":[[64,9],[147,1]]");
	free(out), free(err);

	path = write_tmp("layout.json", PROFILE_HEAD
			 "\"hist\":{\"layout\":\"log-linear\",\"sub_buckets\":16,\"buckets\":600},"
			 "\"rows\":[]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "histogram layout");
	free(out), free(err);
	path = write_tmp("bucket.json", PROFILE_HEAD
			 "\"hist\":{\"layout\":\"log-linear\",\"sub_buckets\":8,\"buckets\":304},"
			 "\"rows\":[" ROW_HEAD "\"wait_buckets\":[[304,1]]}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: bad \"wait_buckets\"");
	free(out), free(err);
}

/* "mappings" read back and written again as they were; a bad one refused
 * with one message. */
static void test_mappings(void)
{
	char *out, *err;
	const char *path;
	static const char maps[] =
		"\"mappings\":[{\"start\":\"0x1000\",\"limit\":\"0x2000\",\"offset\":\"0x0\","
		"\"file\":\"/bin/x\",\"build_id\":\"0a1b\"},{\"start\":\"0x5000\","
		"\"limit\":\"0x9000\",\"offset\":\"0x3000\",\"file\":null,\"build_id\":null}],";
	char text[2048];

	snprintf(text, sizeof(text), "%s%s\"rows\":[%s\"wait_hist\":[1]}]}", PROFILE_HEAD, maps,
		 ROW_HEAD);
	path = write_tmp("maps.json", text);
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s", cli, path), ==, 0);
	T_ASSERT_CONTAINS(out, maps);
	free(out), free(err);
	snprintf(text, sizeof(text), "%s%s\"rows\":[%s\"wait_hist\":[1]}]}", PROFILE_HEAD,
		 "\"mappings\":[{\"start\":\"0x2000\",\"limit\":\"0x1000\",\"offset\":\"0x0\","
		 "\"file\":null,\"build_id\":null}],", ROW_HEAD);
	path = write_tmp("badmaps.json", text);
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "mapping 0: needs \"start\" < \"limit\"");
	T_ASSERT_INT(t_count_lines(err, "syncprof"), ==, 1);
	free(out), free(err);
}

static void test_errors(void)
{
	char *out, *err, path[160];
	const char *p2;
	FILE *f;

	T_ASSERT_INT(t_run(&out, &err, "%s report %s/missing.json", cli, t_tmp()), ==, 1);
	T_ASSERT_CONTAINS(err, "cannot read");
	free(out), free(err);
	snprintf(path, sizeof(path), "%s/broken.json", t_tmp());
	f = fopen(path, "w");
	fputs("{\"format\":\"syncprof-profile\",\"version\":1,\"rows\":[", f);
	fclose(f);
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "is not valid JSON");
	free(out), free(err);
	f = fopen(path, "w");
	fputs("{\"format\":\"syncprof-profile\",\"version\":2,\"rows\":[]}", f);
	fclose(f);
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "version 2 is not supported");
	free(out), free(err);
	f = fopen(path, "w");
	fputs("{\"format\":\"syncprof-profile\",\"version\":1,\"rows\":[{\"type\":\"gizmo\"}]}", f);
	fclose(f);
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, path), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: bad or missing \"type\"");
	free(out), free(err);
	/* "kind" (issue 26): the type's, read back; absent (older profiles)
	 * is fine; one that contradicts the type is refused. */
	p2 = write_tmp("kind.json", PROFILE_HEAD "\"rows\":[{\"type\":\"join\",\"kind\":\"lock\"}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: \"kind\" is not \"event\", the kind of a join");
	free(out), free(err);
	p2 = write_tmp("kind2.json", PROFILE_HEAD "\"rows\":[{\"type\":\"mutex\",\"kind\":null}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: \"kind\" is not \"lock\", the kind of a mutex");
	free(out), free(err);
	p2 = write_tmp("kind3.json", PROFILE_HEAD "\"rows\":[" ROW_HEAD "\"wait_hist\":[]}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s", cli, p2), ==, 0);
	T_ASSERT_CONTAINS(out, "{\"type\":\"mutex\",\"kind\":\"lock\",\"object\":\"0x10\"");
	free(out), free(err);
	/* The streaming reader (src/read/json_stream.c): what json-c refused
	 * or decided is refused or decided the same way, with a message. */
	p2 = write_tmp("late_header.json", "{\"rows\":[" ROW_HEAD "\"wait_hist\":[]}],"
			 "\"format\":\"syncprof-profile\",\"version\":1}");
	T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s", cli, p2), ==, 0);
	T_ASSERT_CONTAINS(out, "\"wait_ns\":1510000");
	free(out), free(err);
	p2 = write_tmp("two_rows.json", PROFILE_HEAD "\"rows\":[],\"rows\":[]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "a second \"rows\"");
	free(out), free(err);
	p2 = write_tmp("deep.json", PROFILE_HEAD "\"rows\":[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["
			 "[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"
			 "]]]]]]]]]]]]]]]]]]]]]]]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "nested deeper than 64");
	free(out), free(err);
	p2 = write_tmp("exp.json", PROFILE_HEAD "\"rows\":[{\"type\":\"mutex\",\"site\":{},"
			 "\"acquisitions\":1e2}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: missing or bad \"acquisitions\"");
	free(out), free(err);
	p2 = write_tmp("zero.json", PROFILE_HEAD "\"rows\":[{\"type\":\"mutex\",\"n_objects\":0}]}");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "row 0: bad \"n_objects\"");
	free(out), free(err);
	p2 = write_tmp("garbage.json", PROFILE_HEAD "\"rows\":[]} x");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "is not valid JSON: trailing garbage at byte");
	free(out), free(err);
	p2 = write_tmp("cut.json", PROFILE_HEAD "\"rows\":[" ROW_HEAD "\"wait_hist\":[]},{\"ty");
	T_ASSERT_INT(t_run(&out, &err, "%s report %s", cli, p2), ==, 1);
	T_ASSERT_CONTAINS(err, "(in row 1)");
	free(out), free(err);
	/* Found by tests/fuzz/fuzz_profile_load: what a re-render writes, it
	 * reads back to the same bytes - a byte that is not UTF-8 (written as
	 * \ufffd, read back as U+FFFD's bytes) and a row without "object". */
	{
		char *again;

		p2 = write_tmp("fffd.json", PROFILE_HEAD "\"rows\":[{\"type\":\"mutex\","
			       "\"n_objects\":1,\"site\":{\"function\":\"f\\ufffd\xff\","
			       "\"file\":\"a.c\",\"line\":3},\"acquisitions\":1,\"contended\":0,"
			       "\"wait_ns\":0,\"wait_max_ns\":0}]}");
		T_ASSERT_INT(t_run(&out, &err, "%s report -f json -o %s.1 %s", cli, p2, p2), ==, 0);
		free(out), free(err);
		T_ASSERT_INT(t_run(&out, &err, "%s report -f json %s.1", cli, p2), ==, 0);
		T_ASSERT_CONTAINS(out, "\"object\":\"0x0\"");
		T_ASSERT_CONTAINS(out, "\"function\":\"f\\ufffd\\ufffd\"");
		free(err);
		T_ASSERT_INT(t_run(&again, &err, "cat %s.1", p2), ==, 0);
		T_ASSERT_STR(again, out);
		free(again), free(out), free(err);
	}
	T_ASSERT_INT(t_run(&out, &err, "%s report -s sideways %s", cli, base), ==, 2);
	T_ASSERT_CONTAINS(err, "bad sort key 'sideways'");
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report --columns site,nope %s", cli, base), ==, 2);
	T_ASSERT_CONTAINS(err, "bad --columns");
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report --frobnicate %s", cli, base), ==, 2);
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report", cli), ==, 2);
	free(out), free(err);
	T_ASSERT_INT(t_run(&out, &err, "%s report --help", cli), ==, 0);
	T_ASSERT_CONTAINS(out, "--diff");
	T_ASSERT_CONTAINS(out, "--columns");
	T_ASSERT_CONTAINS(out, "pprof");
	free(out), free(err);
}

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: test_report_cli SYNCPROF_CLI SOURCE_DIR\n");
		return 2;
	}
	cli = argv[1];
	srcdir = argv[2];
	unsetenv("SYNCPROF_OPTIONS");
	snprintf(base, sizeof(base), "%s/base.json", t_tmp());
	snprintf(cur, sizeof(cur), "%s/new.json", t_tmp());
	snprintf(coalesced, sizeof(coalesced), "%s/coalesced.json", t_tmp());
	syncprof_enable();
	w_run(10, 0);
	save(base, 0);
	save(coalesced, 1);
	w_run(10, 1);
	save(cur, 0);
	syncprof_disable();
	test_rerender();
	test_diff();
	test_hist();
	test_mappings();
	test_errors();
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_report_cli: ok\n");
	return 0;
}
