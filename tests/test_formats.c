/*
 * test_formats.c - the csv, folded and pprof outputs and the table's
 * columns, on a profile recorded in this process:
 *   folded: the weights sum to the report's total wait, one line per row
 *           with a wait, the lock type "[mutex]" as the leaf and the site
 *           right under it;
 *   pprof:  gunzips and decodes with `protoc --decode` against
 *           src/report/render/profile.proto; sample types contentions/count and
 *           delay/nanoseconds; the delays sum to the total wait and the
 *           contentions to the contended count; the site's function is
 *           named;
 *   csv:    the documented header, 18 fields per line, wait_ns sums;
 *   table:  --columns chooses and orders columns; a bad list is -EINVAL,
 *           also through SYNCPROF_OPTIONS' columns= key.
 *
 * Usage: test_formats SOURCE_DIR
 */
#include <errno.h>

#include "runtime/runtime.h"
#include "report/profile.h"
#include "report_util.h"
#include "workload.h"

static const char *srcdir;
static uint64_t total_wait, total_contended;
static size_t rows_with_wait;

static char *render(enum syncprof_format f, const char *columns, int *rc)
{
	struct syncprof_report_options o;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);

	syncprof_report_options_init(&o);
	o.format = f;
	o.columns = columns;
	*rc = syncprof_report(m, &o);
	fclose(m);
	return buf;
}

static void expected_totals(void)
{
	struct syncprof_report_options o;
	struct sp_rows rows;

	syncprof_report_options_init(&o);
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
	for (size_t i = 0; i < rows.n; i++) {
		total_wait += rows.v[i].wait_ns;
		total_contended += rows.v[i].contended;
		rows_with_wait += rows.v[i].wait_ns != 0;
	}
	sp_rows_free(&rows);
	T_ASSERT_UINT(total_wait, >, 0);
	T_ASSERT_UINT(total_contended, >, 0);
}

static void test_folded(void)
{
	int rc, lines = 0;
	char *text = render(SYNCPROF_FORMAT_FOLDED, NULL, &rc);
	unsigned long long sum = 0;

	T_ASSERT_INT(rc, ==, 0);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');

		T_ASSERT(sp != NULL);
		sum += strtoull(sp + 1, NULL, 10);
		lines++;
		*sp = '\0';
		T_ASSERT(strrchr(line, ';') != NULL);
		T_ASSERT(strrchr(line, ';')[1] == '[' && sp[-1] == ']');
		if (strstr(line, "w_waiter")) {
			T_ASSERT_CONTAINS(line, "w_waiter (workload.h:");
			T_ASSERT_CONTAINS(line, ";[");
		}
	}
	T_ASSERT_UINT(sum, ==, total_wait);
	T_ASSERT_INT(lines, ==, (long long)rows_with_wait);
	free(text);
}

static void test_pprof(void)
{
	char path[128], *out, *err;
	struct syncprof_report_options o;
	unsigned long long delay = 0, contentions = 0;
	FILE *f;

	snprintf(path, sizeof(path), "%s/profile.pb.gz", t_tmp());
	f = fopen(path, "w");
	syncprof_report_options_init(&o);
	o.format = SYNCPROF_FORMAT_PPROF;
	T_ASSERT_INT(syncprof_report(f, &o), ==, 0);
	fclose(f);
	T_ASSERT_INT(t_run(&out, &err,
			   "gzip -dc %s | protoc --decode=perftools.profiles.Profile -I%s/src/report/render "
			   "%s/src/report/render/profile.proto",
			   path, srcdir, srcdir),
		     ==, 0);
	T_ASSERT_CONTAINS(out, "string_table: \"contentions\"");
	T_ASSERT_CONTAINS(out, "string_table: \"count\"");
	T_ASSERT_CONTAINS(out, "string_table: \"delay\"");
	T_ASSERT_CONTAINS(out, "string_table: \"nanoseconds\"");
	T_ASSERT_CONTAINS(out, "string_table: \"w_waiter\"");
	T_ASSERT_CONTAINS(out, "location {");
	T_ASSERT_CONTAINS(out, "function {");
	/* The lock type as a leaf frame; "delay" the default sample type,
	 * string 1 (speedscope reads it as an index: sample type 1). */
	T_ASSERT_CONTAINS(out, "string_table: \"[mutex]\"");
	T_ASSERT_CONTAINS(out, "default_sample_type: 1\n");
	T_ASSERT_CONTAINS(out, "string_table: \"\"\nstring_table: \"delay\"\n");
	/* In each sample, values are contentions then delay. */
	for (const char *s = strstr(out, "sample {"); s; s = strstr(s + 1, "sample {")) {
		const char *v1 = strstr(s, "value: "), *v2 = v1 ? strstr(v1 + 1, "value: ") : NULL;

		T_ASSERT(v1 && v2);
		contentions += strtoull(v1 + 7, NULL, 10);
		delay += strtoull(v2 + 7, NULL, 10);
	}
	T_ASSERT_UINT(delay, ==, total_wait);
	T_ASSERT_UINT(contentions, ==, total_contended);
	free(out);
	free(err);
}

static void test_csv(void)
{
	int rc;
	char *text = render(SYNCPROF_FORMAT_CSV, NULL, &rc);
	unsigned long long sum = 0;
	int first = 1;

	T_ASSERT_INT(rc, ==, 0);
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		int commas = 0;
		char *field = line;

		for (char *p = line; *p; p++)
			commas += *p == ',';
		T_ASSERT_INT(commas, ==, 19); /* no field here holds a comma */
		if (first) {
			T_ASSERT_STR(line, "type,object,n_objects,function,file,line,dso,address,"
					   "acquisitions,contended,wait_ns,wait_max_ns,wait_avg_ns,"
					   "wait_p50_ns,wait_p99_ns,hold_ns,hold_max_ns,wait_p90_ns,"
					   "lock_name,created_at");
			first = 0;
			continue;
		}
		for (int k = 0; k < 10; k++) /* wait_ns is field 10 */
			field = strchr(field, ',') + 1;
		sum += strtoull(field, NULL, 10);
	}
	T_ASSERT_UINT(sum, ==, total_wait);
	free(text);
}

static void test_columns(void)
{
	int rc;
	char *text = render(SYNCPROF_FORMAT_TABLE, "count,site", &rc);
	char *header;
	struct sp_options opts;
	FILE *devnull = fopen("/dev/null", "w");

	T_ASSERT_INT(rc, ==, 0);
	header = strstr(text, "Count");
	T_ASSERT(header != NULL);
	T_ASSERT(strstr(header, "Call site") > header); /* in the order asked */
	T_ASSERT(!strstr(text, "Type"));
	T_ASSERT(!strstr(text, "Wait Time"));
	free(text);
	text = render(SYNCPROF_FORMAT_TABLE, NULL, &rc);
	T_ASSERT_CONTAINS(text, "p50 (us)    p90 (us)    p99 (us)");
	free(text);
	text = render(SYNCPROF_FORMAT_TABLE, "p90,site", &rc);
	T_ASSERT_INT(rc, ==, 0);
	T_ASSERT_CONTAINS(text, "p90 (us)  Call site");
	T_ASSERT(!strstr(text, "p50"));
	free(text);
	text = render(SYNCPROF_FORMAT_TABLE, "site,bogus", &rc);
	T_ASSERT_INT(rc, ==, -EINVAL);
	free(text);
	text = render(SYNCPROF_FORMAT_TABLE, "site,site", &rc);
	T_ASSERT_INT(rc, ==, -EINVAL);
	free(text);

	sp_options_defaults(&opts);
	T_ASSERT_INT(sp_options_parse(&opts, "columns='site:p99',format=folded", devnull), ==, 0);
	T_ASSERT_STR(opts.report.columns, "site,p99");
	T_ASSERT_INT(sp_options_parse(&opts, "columns=wait\\,site", devnull), ==, 0);
	T_ASSERT_STR(opts.report.columns, "wait,site");
	/* Unquoted, ':' separates options: "p99" alone is no option. */
	T_ASSERT_INT(sp_options_parse(&opts, "columns=site:p99", devnull), ==, 1);
	T_ASSERT_INT(opts.report.format, ==, SYNCPROF_FORMAT_FOLDED);
	T_ASSERT_INT(sp_options_parse(&opts, "columns=nope", devnull), ==, 1);
	sp_options_free(&opts);
	fclose(devnull);
}

/* The HTML page (render/html.c): one document, one data block with no
 * '<' in it (escaped) holding the profile, one script; "html" parsed by
 * the API and by SYNCPROF_OPTIONS.  tests/html_report.sh loads pages in a
 * browser. */
static void test_html(void)
{
	static const char open_data[] = "<script type=\"application/json\" id=\"sp-data\">\n";
	enum syncprof_format f;
	struct sp_options opts;
	FILE *devnull = fopen("/dev/null", "w");
	int rc;
	char *text = render(SYNCPROF_FORMAT_HTML, NULL, &rc);
	const char *data, *end;

	T_ASSERT_INT(rc, ==, 0);
	T_ASSERT_INT(strncmp(text, "<!DOCTYPE html>\n", 16), ==, 0);
	T_ASSERT_INT(strcmp(text + strlen(text) - 8, "</html>\n"), ==, 0);
	data = strstr(text, open_data);
	T_ASSERT(data != NULL);
	T_ASSERT(strstr(data + 1, open_data) == NULL);
	data += sizeof(open_data) - 1;
	end = strstr(data, "</script>");
	T_ASSERT(end != NULL);
	T_ASSERT(memchr(data, '<', (size_t)(end - data)) == NULL);
	T_ASSERT_INT(strncmp(data, "{\"profile\":{\"format\":\"syncprof-profile\"", 39), ==, 0);
	T_ASSERT(strstr(data, ",\"view\":{\"rows\":[") != NULL);
	T_ASSERT(strstr(data, "\"timeline\":null}") != NULL);
	T_ASSERT(strstr(end, "<script>\n") == end + 10);
	T_ASSERT(strstr(text, "http:") == NULL && strstr(text, "https:") == NULL);
	free(text);

	T_ASSERT_INT(syncprof_parse_format("html", &f), ==, 0);
	T_ASSERT_INT(f, ==, SYNCPROF_FORMAT_HTML);
	T_ASSERT_STR(sp_format_name(SYNCPROF_FORMAT_HTML), "html");
	sp_options_defaults(&opts);
	T_ASSERT_INT(sp_options_parse(&opts, "format=html", devnull), ==, 0);
	T_ASSERT_INT(opts.report.format, ==, SYNCPROF_FORMAT_HTML);
	sp_options_free(&opts);
	fclose(devnull);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_formats SOURCE_DIR\n");
		return 2;
	}
	srcdir = argv[1];
	syncprof_enable();
	w_run(20, 1);
	syncprof_disable();
	expected_totals();
	test_folded();
	test_pprof();
	test_csv();
	test_columns();
	test_html();
	t_run(NULL, NULL, "rm -rf %s", t_tmp());
	fprintf(stderr, "test_formats: ok\n");
	return 0;
}
