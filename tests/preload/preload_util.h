/*
 * preload_util.h - helpers for the tests that run under
 * libsyncprof-preload.so (CTest sets LD_PRELOAD; label "preload").
 *
 * These programs are built like any program nobody instrumented: they do
 * not link libsyncprof.  They reach the preloaded profiler, when they need
 * to look at what it recorded, through dlsym(RTLD_DEFAULT), as a user
 * poking at a preloaded program would.
 */
#ifndef SYNCPROF_TEST_PRELOAD_UTIL_H
#define SYNCPROF_TEST_PRELOAD_UTIL_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "syncprof.h"

typedef int (*t_report_fn)(FILE *, const struct syncprof_report_options *);

/* 1 when the preload library is loaded in this process. */
static inline int t_preloaded(void)
{
	return dlsym(RTLD_DEFAULT, "syncprof_report") != NULL;
}

static inline void t_require_preload(void)
{
	if (!t_preloaded())
		T_FAIL("run me with LD_PRELOAD=libsyncprof-preload.so");
}

/* A report (JSON when @json, else table), all rows, not coalesced when
 * @per_object; the caller frees it. */
static inline char *t_report(int json, int per_object)
{
	t_report_fn report = (t_report_fn)dlsym(RTLD_DEFAULT, "syncprof_report");
	struct syncprof_report_options o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	int rc;

	T_ASSERT(report != NULL);
	T_ASSERT(f != NULL);
	memset(&o, 0, sizeof(o));
	o.coalesce = !per_object;
	o.format = json ? SYNCPROF_FORMAT_JSON : SYNCPROF_FORMAT_TABLE;
	rc = report(f, &o);
	T_ASSERT_INT(rc, ==, 0);
	fclose(f);
	return buf;
}

/* Number of non-overlapping occurrences of @needle in @hay. */
static inline int t_count(const char *hay, const char *needle)
{
	int n = 0;

	for (const char *p = hay; (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/*
 * The value of the numeric @key ("acquisitions") in the first JSON row
 * whose text contains @row_needle; -1 when there is none.
 */
static inline long long t_row_value(const char *json, const char *row_needle, const char *key)
{
	char pat[128];

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (const char *row = strstr(json, "{\"type\""); row; row = strstr(row + 1, "{\"type\"")) {
		const char *end = strstr(row + 1, "{\"type\"");
		const char *hit = strstr(row, row_needle);
		const char *k = strstr(row, pat);

		if (hit && (!end || hit < end) && k && (!end || k < end))
			return atoll(k + strlen(pat));
	}
	return -1;
}

/* The sum of the numeric @key over the JSON rows whose text contains
 * @row_needle; 0 when there is none. */
static inline long long t_rows_sum(const char *json, const char *row_needle, const char *key)
{
	char pat[128];
	long long sum = 0;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	for (const char *row = strstr(json, "{\"type\""); row; row = strstr(row + 1, "{\"type\"")) {
		const char *end = strstr(row + 1, "{\"type\"");
		const char *hit = strstr(row, row_needle);
		const char *k = strstr(row, pat);

		if (hit && (!end || hit < end) && k && (!end || k < end))
			sum += atoll(k + strlen(pat));
	}
	return sum;
}

/* 1 when SYNCPROF_OPTIONS has the item @item ("hold=1"). */
static inline int t_option(const char *item)
{
	const char *o = getenv("SYNCPROF_OPTIONS");
	size_t n = strlen(item);

	for (const char *p = o; p && (p = strstr(p, item)); p += n)
		if ((p == o || p[-1] == ',') && (p[n] == ',' || !p[n]))
			return 1;
	return 0;
}

#endif
