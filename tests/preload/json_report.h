/*
 * json_report.h - this process's JSON report, for the tests that check
 * its figures against a truth they know (known_holds.c, unlock_end.c,
 * owner_changes.c, blame_counts.c, site_rotation.c): the report as one
 * string, from syncprof_report() - found with dlsym when the test runs
 * preloaded, linked when it is compiled in (JSON_REPORT_LINKED defined
 * before this header) - and the figures of a row.
 *
 * A row is the text from its "{\"type\"" to the next one (NULL: the end
 * of the report); its figures are found by their keys, as the schema
 * (docs/formats.md) names them.
 */
#ifndef SYNCPROF_TEST_JSON_REPORT_H
#define SYNCPROF_TEST_JSON_REPORT_H

#ifndef JSON_REPORT_LINKED
#include <dlfcn.h>
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "syncprof.h"

/* The report, per object (not coalesced); @who names the test in the
 * message when there is none (exit 1).  The caller frees it. */
static __attribute__((noinline, unused)) char *json_report(const char *who)
{
	typedef int (*report_fn)(FILE *, const struct syncprof_report_options *);
#ifdef JSON_REPORT_LINKED
	report_fn report = syncprof_report;
#else
	report_fn report = (report_fn)dlsym(RTLD_DEFAULT, "syncprof_report");
#endif
	struct syncprof_report_options o;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (!report) {
		fprintf(stderr, "%s: no syncprof_report (run with LD_PRELOAD=libsyncprof-preload.so)\n",
			who);
		exit(1);
	}
	f = open_memstream(&buf, &len);
	memset(&o, 0, sizeof(o));
	o.coalesce = 0;
	o.format = SYNCPROF_FORMAT_JSON;
	if (!f || report(f, &o)) {
		fprintf(stderr, "%s: syncprof_report failed\n", who);
		exit(1);
	}
	fclose(f);
	return buf;
}

/* The end of the row that starts at @row: the next row, or NULL. */
static inline const char *json_row_end(const char *row)
{
	return strstr(row + 1, "{\"type\"");
}

/* The numeric value of "@key" in [@row, @end); -1 when absent or null. */
static inline long long json_row_value(const char *row, const char *end, const char *key)
{
	char pat[64];
	const char *k;

	snprintf(pat, sizeof(pat), "\"%s\":", key);
	k = strstr(row, pat);
	if (!k || (end && k >= end) || !strchr("0123456789", k[strlen(pat)]))
		return -1;
	return atoll(k + strlen(pat));
}

/* The next row of the object at @obj from @from on (the first: @from is
 * the report), or NULL. */
static inline const char *json_object_row(const char *from, const void *obj)
{
	char pat[64];

	snprintf(pat, sizeof(pat), "\"object\":\"%#lx\"", (unsigned long)obj);
	return strstr(from, pat);
}

#endif
