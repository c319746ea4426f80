/*
 * test_options.c - SYNCPROF_OPTIONS parsing: every key, bad input, warnings
 * that name the key and the valid choices, and the rest still applied.
 */
#include <errno.h>

#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"

static char *parse(struct sp_options *o, const char *s, int *problems)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *warn = open_memstream(&buf, &len);

	sp_options_defaults(o);
	*problems = sp_options_parse(o, s, warn);
	fclose(warn);
	return buf;
}

int main(void)
{
	struct sp_options o;
	int problems;
	char *w;

	/* Defaults. */
	w = parse(&o, NULL, &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_STR(w, "");
	T_ASSERT_INT(o.enabled, ==, 0);
	T_ASSERT_INT(o.report_at_exit, ==, -1);
	T_ASSERT_INT(o.account, ==, 1);
	T_ASSERT_INT(o.report.coalesce, ==, 1);
	T_ASSERT_INT(o.report.top, ==, 0);
	T_ASSERT_INT(o.report.sort, ==, SYNCPROF_SORT_TOTAL);
	T_ASSERT_INT(o.report.format, ==, SYNCPROF_FORMAT_TABLE);
	T_ASSERT(o.output == NULL);
	free(w);

	/* Every key. */
	w = parse(&o,
		  "enabled=1,output=/tmp/r.%p,format=json,top=7,sort=avg,coalesce=0,"
		  "report_at_exit=0,src_root=/src,account=0",
		  &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_STR(w, "");
	T_ASSERT_INT(o.enabled, ==, 1);
	T_ASSERT_STR(o.output, "/tmp/r.%p");
	T_ASSERT_INT(o.report.format, ==, SYNCPROF_FORMAT_JSON);
	T_ASSERT_INT(o.report.top, ==, 7);
	T_ASSERT_INT(o.report.sort, ==, SYNCPROF_SORT_AVG);
	T_ASSERT_INT(o.report.coalesce, ==, 0);
	T_ASSERT_INT(o.report_at_exit, ==, 0);
	T_ASSERT_INT(o.account, ==, 0);
	T_ASSERT_STR(o.report.src_root, "/src");
	sp_options_free(&o);
	free(w);

	/* Each sort key by name. */
	const char *sorts[] = { "total", "avg", "max", "count", "contended", "hold" };
	for (int i = 0; i < 6; i++) {
		enum syncprof_sort s;

		T_ASSERT_INT(syncprof_parse_sort(sorts[i], &s), ==, 0);
		T_ASSERT_INT(s, ==, i);
		T_ASSERT_STR(sp_sort_name(s), sorts[i]);
	}

	/* Unknown key: one warning naming it and the known keys; the rest applies. */
	w = parse(&o, "bogus=1,top=3", &problems);
	T_ASSERT_INT(problems, ==, 1);
	T_ASSERT_CONTAINS(w, "unknown option 'bogus'");
	T_ASSERT_CONTAINS(w, "enabled");
	T_ASSERT_CONTAINS(w, "src_root");
	T_ASSERT_INT(o.report.top, ==, 3);
	sp_options_free(&o);
	free(w);

	/* A huge unknown key is cut in the warning, not echoed whole. */
	{
		char *big = malloc(100001);

		memset(big, 'k', 100000);
		big[100000] = '\0';
		w = parse(&o, big, &problems);
		T_ASSERT_INT(problems, ==, 1);
		T_ASSERT_CONTAINS(w, "unknown option 'kkkk");
		T_ASSERT_CONTAINS(w, "...'");
		T_ASSERT_UINT(strlen(w), <, 1000);
		sp_options_free(&o);
		free(w);
		free(big);
	}

	/* skip= takes a valid regular expression only; sp_options_check(). */
	T_ASSERT_INT(sp_options_check("skip", "("), ==, -EINVAL);
	T_ASSERT_INT(sp_options_check("skip", "^my_lock$"), ==, 0);
	T_ASSERT_INT(sp_options_check("frames", "17"), ==, -EINVAL);
	T_ASSERT_INT(sp_options_check("no_such_key", "1"), ==, -ENOENT);

	/* Bad values: named with the valid choices; defaults kept. */
	w = parse(&o, "sort=fast,format=xml,top=-1,top=1x,enabled=maybe,coalesce=", &problems);
	T_ASSERT_INT(problems, ==, 6);
	T_ASSERT_CONTAINS(w, "bad value 'fast' for option 'sort' (valid: total, avg");
	T_ASSERT_CONTAINS(w, "bad value 'xml' for option 'format' (valid: table, json, csv, folded, pprof or html");
	T_ASSERT_CONTAINS(w, "bad value '-1' for option 'top'");
	T_ASSERT_CONTAINS(w, "bad value '1x' for option 'top'");
	T_ASSERT_CONTAINS(w, "bad value 'maybe' for option 'enabled'");
	T_ASSERT_CONTAINS(w, "bad value '' for option 'coalesce'");
	T_ASSERT_INT(o.report.sort, ==, SYNCPROF_SORT_TOTAL);
	T_ASSERT_INT(o.report.top, ==, 0);
	sp_options_free(&o);
	free(w);

	/* Missing '=', empty items, trailing comma, number out of range. */
	w = parse(&o, ",,enabled,top=99999999999,", &problems);
	T_ASSERT_INT(problems, ==, 2);
	T_ASSERT_CONTAINS(w, "option 'enabled' needs a value");
	T_ASSERT_CONTAINS(w, "bad value '99999999999' for option 'top'");
	free(w);

	/* The sanitizers' separators: ',', ':', spaces, tabs, newlines. */
	w = parse(&o, "top=3:sort=avg format=json\tcoalesce=0\n,: hold=1", &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_STR(w, "");
	T_ASSERT_INT(o.report.top, ==, 3);
	T_ASSERT_INT(o.report.sort, ==, SYNCPROF_SORT_AVG);
	T_ASSERT_INT(o.report.format, ==, SYNCPROF_FORMAT_JSON);
	T_ASSERT_INT(o.report.coalesce, ==, 0);
	T_ASSERT_INT(o.hold, ==, 1);
	sp_options_free(&o);
	free(w);

	/* Separators in a value: quoted '...' (literal), "..." (\ escapes),
	 * or each escaped with \. */
	w = parse(&o, "output='/tmp/a,b:c d\\',src_root=\"/s r\\\"c\",top=1", &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_STR(o.output, "/tmp/a,b:c d\\");
	T_ASSERT_STR(o.report.src_root, "/s r\"c");
	T_ASSERT_INT(o.report.top, ==, 1);
	sp_options_free(&o);
	free(w);
	w = parse(&o, "output=/tmp/x\\,y\\:z\\ w\\\\,top=2", &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_STR(o.output, "/tmp/x,y:z w\\");
	T_ASSERT_INT(o.report.top, ==, 2);
	sp_options_free(&o);
	free(w);
	w = parse(&o, "skip='^std::mutex::lock$',frames=2", &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_UINT(o.n_skip, ==, 1);
	T_ASSERT_STR(o.skip[0], "^std::mutex::lock$");
	sp_options_free(&o);
	free(w);

	/* An unterminated quote or a trailing backslash: one warning, the
	 * items before it applied. */
	w = parse(&o, "top=4,output='/tmp/x,sort=avg", &problems);
	T_ASSERT_INT(problems, ==, 1);
	T_ASSERT_CONTAINS(w, "unterminated quote");
	T_ASSERT_INT(o.report.top, ==, 4);
	T_ASSERT(o.output == NULL);
	sp_options_free(&o);
	free(w);
	w = parse(&o, "top=5,output=x\\", &problems);
	T_ASSERT_INT(problems, ==, 1);
	T_ASSERT_CONTAINS(w, "trailing");
	T_ASSERT_INT(o.report.top, ==, 5);
	sp_options_free(&o);
	free(w);

	/* NULL warn: silent, problems still counted. */
	sp_options_defaults(&o);
	T_ASSERT_INT(sp_options_parse(&o, "bogus=1,top=6", NULL), ==, 1);
	T_ASSERT_INT(o.report.top, ==, 6);
	sp_options_free(&o);

	/* A prefix of a key is not the key. */
	w = parse(&o, "enable=1,enabledx=1", &problems);
	T_ASSERT_INT(problems, ==, 2);
	T_ASSERT_INT(o.enabled, ==, 0);
	free(w);

	/* Booleans in their spellings. */
	w = parse(&o, "enabled=yes,coalesce=off", &problems);
	T_ASSERT_INT(problems, ==, 0);
	T_ASSERT_INT(o.enabled, ==, 1);
	T_ASSERT_INT(o.report.coalesce, ==, 0);
	free(w);

	puts("test_options: ok");
	return 0;
}
