/*
 * render_opts.c - the report options shared by 'syncprof report' and
 * 'syncprof ctl PID report' (and named like those of 'syncprof run'):
 *   -f, --format table|json|csv|folded|pprof|html   -n, --top N
 *   -s, --sort total|avg|max|count|contended|hold
 *   --no-coalesce / --coalesce    --merged    --columns LIST    --src-root DIR
 *   -o, --output FILE
 * Both "--opt VALUE" and "--opt=VALUE" are accepted.  A bad value is one
 * message naming the option and the valid values; the caller exits 2.
 * Also the control protocol's "report" line for the options given, which
 * 'syncprof ctl' sends and 'syncprof attach' hands to its process.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "report/profile.h"

/* Value of option @name at argv[*i]: "--name=V" or the next argument. */
static const char *take_value(const char *cmd, int argc, char **argv, int *i, const char *shortn,
			      const char *longn, int *matched)
{
	const char *a = argv[*i];
	size_t n = strlen(longn);

	*matched = 0;
	if (!strncmp(a, longn, n) && a[n] == '=') {
		*matched = 1;
		return a + n + 1;
	}
	if (strcmp(a, longn) && (!shortn || strcmp(a, shortn)))
		return NULL;
	*matched = 1;
	if (*i + 1 >= argc) {
		cli_error(cmd, "option %s needs a value", a);
		return NULL;
	}
	return argv[++*i];
}

/* The flags among the options (argv[*i]: @a): 1 when taken, else 0. */
static int render_flag(const char *a, struct cli_render_opts *o)
{
	if (!strcmp(a, "--no-coalesce")) {
		o->report.coalesce = 0;
		o->coalesce_set = 1;
		return 1;
	}
	if (!strcmp(a, "--merged")) {
		o->report.merged = 1;
		o->merged_set = 1;
		return 1;
	}
	if (!strcmp(a, "--coalesce")) {
		o->report.coalesce = 1;
		o->coalesce_set = 1;
		return 1;
	}
	return 0;
}

/* -f, -n and -s with their values: 1 when taken, 0 when none of them, -1
 * after one line on stderr. */
static int render_view(const char *cmd, int argc, char **argv, int *i,
		       struct cli_render_opts *o)
{
	const char *v;
	int m;

	v = take_value(cmd, argc, argv, i, "-f", "--format", &m);
	if (m) {
		if (!v)
			return -1;
		if (syncprof_parse_format(v, &o->report.format)) {
			cli_error(cmd, "bad format '%s' (valid: table, json, csv, folded, pprof, html)", v);
			return -1;
		}
		o->format_name = v;
		return 1;
	}
	v = take_value(cmd, argc, argv, i, "-n", "--top", &m);
	if (m) {
		char *end;
		unsigned long n;

		if (!v)
			return -1;
		n = strtoul(v, &end, 10);
		if (!*v || *end || *v == '-' || n > 1000000000ul) {
			cli_error(cmd, "bad --top '%s' (a number of rows, 0 for all)", v);
			return -1;
		}
		o->report.top = (unsigned)n;
		o->top_set = 1;
		return 1;
	}
	v = take_value(cmd, argc, argv, i, "-s", "--sort", &m);
	if (m) {
		if (!v)
			return -1;
		if (syncprof_parse_sort(v, &o->report.sort)) {
			cli_error(cmd,
				  "bad sort key '%s' (valid: total, avg, max, count, contended, hold)",
				  v);
			return -1;
		}
		o->sort_name = v;
		return 1;
	}
	return 0;
}

/* --columns, --src-root and -o with their values: the same. */
static int render_detail(const char *cmd, int argc, char **argv, int *i,
			 struct cli_render_opts *o)
{
	const char *v;
	int m;

	v = take_value(cmd, argc, argv, i, NULL, "--columns", &m);
	if (m) {
		int ids[SP_MAX_COLUMNS];

		if (!v)
			return -1;
		if (sp_columns_parse(v, ids, SP_MAX_COLUMNS, 1) < 0) {
			cli_error(cmd,
				  "bad --columns '%s' (comma-separated, each once, among: type, "
				  "object, site, wait, count, avg, contended, max, p50, p90, p99, "
				  "hold, max_hold, owner_chg)",
				  v);
			return -1;
		}
		o->report.columns = v;
		return 1;
	}
	v = take_value(cmd, argc, argv, i, NULL, "--src-root", &m);
	if (m) {
		if (!v)
			return -1;
		if (!*v) {
			cli_error(cmd, "--src-root needs a directory");
			return -1;
		}
		o->report.src_root = v;
		return 1;
	}
	v = take_value(cmd, argc, argv, i, "-o", "--output", &m);
	if (m) {
		if (!v)
			return -1;
		o->output = v;
		return 1;
	}
	return 0;
}

int cli_render_option(const char *cmd, int argc, char **argv, int *i,
		      struct cli_render_opts *o)
{
	int r;

	if (render_flag(argv[*i], o))
		return 1;
	r = render_view(cmd, argc, argv, i, o);
	return r ? r : render_detail(cmd, argc, argv, i, o);
}

void cli_render_opts_init(struct cli_render_opts *o)
{
	memset(o, 0, sizeof(*o));
	syncprof_report_options_init(&o->report);
}

FILE *cli_open_output(const char *cmd, const struct cli_render_opts *o)
{
	FILE *f;

	if (!o->output || !strcmp(o->output, "-")) {
		/* pprof is gzip: bytes that would garble a terminal */
		if (o->report.format == SYNCPROF_FORMAT_PPROF && isatty(STDOUT_FILENO)) {
			cli_error(cmd, "-f pprof writes gzip-compressed protobuf, not text: give "
				       "-o FILE (-o prof.pb.gz), or redirect stdout");
			return NULL;
		}
		return stdout;
	}
	f = fopen(o->output, "we");
	if (!f)
		cli_error(cmd, "cannot write '%s': %s", o->output, strerror(errno));
	return f;
}

int cli_close_output(const char *cmd, const struct cli_render_opts *o, FILE *f)
{
	int bad = fflush(f) || ferror(f);

	if (f != stdout)
		bad |= fclose(f) != 0;
	if (bad) {
		cli_error(cmd, "writing '%s' failed: %s", o->output ? o->output : "stdout",
			  strerror(errno));
		return -EIO;
	}
	return 0;
}

const char cli_render_help[] =
	"Report options:\n"
	"  -f, --format FMT    table (default), json, csv, folded, pprof or html (one\n"
	"                      self-contained page: sortable table, flame graphs)\n"
	"  -n, --top N         print the N rows with the highest sort key (0: all)\n"
	"  -s, --sort KEY      total (default), avg, max, count, contended or hold\n"
	"      --no-coalesce   one row per lock object instead of per call site\n"
	"      --merged        table, html: one list of rows (default: lock\n"
	"                      contention first, then the waits for an event -\n"
	"                      condvar, semaphore, barrier, join - in their own part)\n"
	"      --columns LIST  table columns, comma separated, in this order; among\n"
	"                      type, object, site, wait, count, avg, contended, max,\n"
	"                      p50, p90, p99, hold, max_hold, owner_chg (the last\n"
	"                      three: hold tracking)\n"
	"      --src-root DIR  strip DIR from source paths (default: common prefix)\n"
	"  -o, --output FILE   write there instead of stdout\n";

int cli_report_request(const struct cli_render_opts *o, char *buf, size_t size)
{
	size_t n = (size_t)snprintf(buf, size, "report");

	if (o->format_name || cli_render_here(o))
		n += (size_t)snprintf(buf + n, size - n, " format=%s",
				      cli_render_here(o) ? "json" /* rendered here */
							 : sp_format_name(o->report.format));
	if (o->sort_name && n < size)
		n += (size_t)snprintf(buf + n, size - n, " sort=%s", sp_sort_name(o->report.sort));
	if (o->top_set && n < size)
		n += (size_t)snprintf(buf + n, size - n, " top=%u", o->report.top);
	if (o->coalesce_set && n < size)
		n += (size_t)snprintf(buf + n, size - n, " coalesce=%d", o->report.coalesce);
	if (o->report.columns && n < size)
		n += (size_t)snprintf(buf + n, size - n, " columns=%s", o->report.columns);
	if (o->report.src_root && n < size)
		n += (size_t)snprintf(buf + n, size - n, " src_root=%s", o->report.src_root);
	if (n + 2 > size || (o->report.src_root && strchr(o->report.src_root, ' ')))
		return -1;
	return 0;
}
