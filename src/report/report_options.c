/*
 * report_options.c - the report options of the public API: names of the
 * sort keys and formats, their parsers, the defaults and the check.
 *
 * Part of the report layer, so that the options parser of the runtime, the
 * control socket and the command-line tool (which links no runtime) share
 * one list of names and one validation.
 */
#include <errno.h>
#include <string.h>

#include "report/profile.h"

static const char *const sort_names[] = { "total", "avg", "max", "count", "contended", "hold" };
static const char *const format_names[] = { "table", "json", "csv", "folded", "pprof", "html" };

const char *sp_sort_name(enum syncprof_sort s)
{
	return (unsigned)s < sizeof(sort_names) / sizeof(*sort_names) ? sort_names[s] : "?";
}

const char *sp_format_name(enum syncprof_format f)
{
	return (unsigned)f < sizeof(format_names) / sizeof(*format_names) ? format_names[f] : "?";
}

static int name_index(const char *const *names, size_t n, const char *s)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], s))
			return (int)i;
	return -1;
}

int syncprof_parse_sort(const char *name, enum syncprof_sort *out)
{
	int i = name ? name_index(sort_names, sizeof(sort_names) / sizeof(*sort_names), name) : -1;

	if (i < 0)
		return -EINVAL;
	*out = (enum syncprof_sort)i;
	return 0;
}

int syncprof_parse_format(const char *name, enum syncprof_format *out)
{
	int i = name ? name_index(format_names, sizeof(format_names) / sizeof(*format_names), name)
		     : -1;

	if (i < 0)
		return -EINVAL;
	*out = (enum syncprof_format)i;
	return 0;
}

void syncprof_report_options_init(struct syncprof_report_options *o)
{
	memset(o, 0, sizeof(*o));
	o->top = 0;
	o->sort = SYNCPROF_SORT_TOTAL;
	o->coalesce = 1;
	o->format = SYNCPROF_FORMAT_TABLE;
	o->src_root = NULL;
}

int sp_report_options_check(const struct syncprof_report_options *o)
{
	int ids[SP_MAX_COLUMNS];

	if ((unsigned)o->sort > SYNCPROF_SORT_HOLD || (unsigned)o->format > SYNCPROF_FORMAT_HTML ||
	    sp_columns_parse(o->columns, ids, SP_MAX_COLUMNS, 1) < 0)
		return -EINVAL;
	return 0;
}
