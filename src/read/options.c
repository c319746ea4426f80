/*
 * options.c - SYNCPROF_OPTIONS, read once at start-up.
 *
 * Design: the sanitizers' convention, "key=value" items separated by ',',
 * ':', spaces, tabs or newlines ("hold=1:top=5", "hold=1 top=5" and
 * "hold=1,top=5" are one thing).  A value that holds a separator is
 * quoted, 'like this' (literal up to the next ') or "like this" (where \
 * still escapes), or has each such character escaped with \ outside
 * quotes: output='/tmp/a,b:c', output=/tmp/a\,b, columns='site,wait'.
 * Each key has one row in the options table below: its name, a parser and
 * the help text naming the valid values, so that a warning can list the
 * choices and later features add a key by adding a row.  A problem
 * (unknown key, bad value, an unterminated quote) prints one warning
 * naming the key and what would have been valid; the rest of the string
 * is still applied and the program runs on: the profiler never stops a
 * program because of its own configuration.
 *
 * Warned once.  Every process of a tree inherits SYNCPROF_OPTIONS (a
 * shell script, make, a server that forks and execs its workers), and a
 * program can hold the library twice (built instrumented and run under
 * the preload): each would say the same warning again.  sp_options_env()
 * marks a string it warned about in SYNCPROF_OPTIONS_WARNED (a hash of it)
 * and stays silent on a string so marked; a different string warns again.
 *
 * Costs: read once at start-up; a warning's setenv() is the only write to
 * the environment, made only when there is something to warn about.
 *
 * Alternatives considered: the old "values cannot contain commas" (paths
 * and regular expressions can); ':' as the separator of a columns list
 * (the sanitizers use it between options: quote the list instead).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include <regex.h>

#include "read/options.h"
#include "record/record.h"
#include "report/profile.h"
#include "trace/format.h"

/* Defined (as 1) by the preload library only: preloaded, profiling and
 * the control socket are on unless SYNCPROF_OPTIONS says enabled=0 or
 * control=0. */
extern const int sp_preload_enabled_default __attribute__((weak));

void sp_options_defaults(struct sp_options *o)
{
	memset(o, 0, sizeof(*o));
	o->enabled = &sp_preload_enabled_default ? sp_preload_enabled_default : 0;
	o->control = o->enabled;
	o->frames = SP_DEFAULT_FRAMES;
	o->hold_sample = SP_DEFAULT_HOLD_SAMPLE;
	o->trace_min_wait_ns = SP_TRACE_MIN_WAIT_DEFAULT;
	o->report_at_exit = -1;
	o->glibc_locks = 1;
	o->account = 1;
	o->hold_states_ms = 1;
	o->hold_where = 1;
	syncprof_report_options_init(&o->report);
}

void sp_options_free(struct sp_options *o)
{
	free(o->output);
	free(o->src_root);
	free(o->columns);
	free(o->trace);
	o->output = o->src_root = o->columns = o->trace = NULL;
	for (unsigned i = 0; i < o->n_skip; i++)
		free(o->skip[i]);
	o->n_skip = 0;
	o->report.src_root = NULL;
	o->report.columns = NULL;
}

static int parse_bool(const char *v, int *out)
{
	if (!strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "true") || !strcmp(v, "on"))
		*out = 1;
	else if (!strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "false") || !strcmp(v, "off"))
		*out = 0;
	else
		return -EINVAL;
	return 0;
}

static int parse_uint(const char *v, unsigned *out)
{
	char *end;
	unsigned long n;

	if (!*v || *v == '-' || *v == '+')
		return -EINVAL;
	errno = 0;
	n = strtoul(v, &end, 10);
	if (errno || *end || n > UINT_MAX)
		return -EINVAL;
	*out = (unsigned)n;
	return 0;
}

static int set_string(char **dst, const char *v)
{
	char *s;

	if (!*v)
		return -EINVAL;
	s = strdup(v);
	if (!s)
		return -ENOMEM;
	free(*dst);
	*dst = s;
	return 0;
}

static int opt_enabled(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->enabled);
}

static int opt_report_at_exit(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->report_at_exit);
}

static int opt_account(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->account);
}

static int opt_coalesce(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->report.coalesce);
}

static int opt_merged(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->report.merged);
}

static int opt_output(struct sp_options *o, const char *v)
{
	return set_string(&o->output, v);
}

static int opt_src_root(struct sp_options *o, const char *v)
{
	int rc = set_string(&o->src_root, v);

	o->report.src_root = o->src_root;
	return rc;
}

static int opt_format(struct sp_options *o, const char *v)
{
	return syncprof_parse_format(v, &o->report.format);
}

static int opt_sort(struct sp_options *o, const char *v)
{
	return syncprof_parse_sort(v, &o->report.sort);
}

static int opt_top(struct sp_options *o, const char *v)
{
	return parse_uint(v, &o->report.top);
}

static int opt_trace(struct sp_options *o, const char *v)
{
	return set_string(&o->trace, v);
}

static int opt_trace_buffer(struct sp_options *o, const char *v)
{
	unsigned n;
	int rc = parse_uint(v, &n);

	if (!rc && (n < 256 || n > (1u << 30)))
		rc = -EINVAL;
	if (!rc)
		o->trace_buffer = n;
	return rc;
}

static int opt_trace_events(struct sp_options *o, const char *v)
{
	if (!strcmp(v, "contended"))
		o->trace_events = SYNCPROF_TRACE_CONTENDED;
	else if (!strcmp(v, "all"))
		o->trace_events = SYNCPROF_TRACE_ALL;
	else
		return -EINVAL;
	return 0;
}

/* "N" nanoseconds, or N with a unit: ns, us, ms, s (at most an hour). */
static int opt_trace_min_wait(struct sp_options *o, const char *v)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 },
	};
	char *end;
	unsigned long long n;

	if (*v < '0' || *v > '9')
		return -EINVAL;
	errno = 0;
	n = strtoull(v, &end, 10);
	if (errno)
		return -EINVAL;
	for (size_t i = 0; i < sizeof(units) / sizeof(*units); i++) {
		if (strcmp(end, units[i].unit))
			continue;
		if (n > UINT64_C(3600000000000) / units[i].ns)
			return -EINVAL;
		o->trace_min_wait_ns = n * units[i].ns;
		return 0;
	}
	return -EINVAL;
}

static int opt_frames(struct sp_options *o, const char *v)
{
	unsigned n;

	if (parse_uint(v, &n) || n > SP_MAX_FRAMES)
		return -EINVAL;
	o->frames = n;
	return 0;
}

static int opt_hold(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->hold);
}

static int opt_lock_order(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->lock_order);
}

static int opt_hold_sample(struct sp_options *o, const char *v)
{
	unsigned n;

	if (parse_uint(v, &n) || n < 1 || n > 1000000)
		return -EINVAL;
	o->hold_sample = n;
	return 0;
}

/* Repeatable: each skip= adds one pattern, a valid POSIX extended regular
 * expression or a DSO+0xLO-0xHI range (record/stack.c reads them again at
 * start-up; a range is also a valid regular expression). */
static int opt_skip(struct sp_options *o, const char *v)
{
	regex_t re;

	if (o->n_skip >= SP_MAX_SKIP || !*v || regcomp(&re, v, REG_EXTENDED | REG_NOSUB))
		return -EINVAL;
	regfree(&re);
	o->skip[o->n_skip] = strdup(v);
	if (!o->skip[o->n_skip])
		return -ENOMEM;
	o->n_skip++;
	return 0;
}

static int opt_skip_frames(struct sp_options *o, const char *v)
{
	unsigned n;

	if (parse_uint(v, &n) || n > SP_MAX_SKIP_FRAMES)
		return -EINVAL;
	o->skip_frames = n;
	return 0;
}

static int opt_columns(struct sp_options *o, const char *v)
{
	int ids[SP_MAX_COLUMNS];
	int rc;

	/* Columns are separated by ',' or ':' (quoted or escaped, as both
	 * separate options too). */
	char buf[256];

	if (strlen(v) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, v);
	for (char *p = buf; *p; p++)
		if (*p == ':')
			*p = ',';
	if (sp_columns_parse(buf, ids, SP_MAX_COLUMNS, 1) < 0)
		return -EINVAL;
	rc = set_string(&o->columns, buf);
	o->report.columns = o->columns;
	return rc;
}

static int opt_control(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->control);
}

static int opt_report_signal(struct sp_options *o, const char *v)
{
	/* Only the two signals that no one else claims by default. */
	if (!strcmp(v, "USR1") || !strcmp(v, "SIGUSR1"))
		o->report_signal = SIGUSR1;
	else if (!strcmp(v, "USR2") || !strcmp(v, "SIGUSR2"))
		o->report_signal = SIGUSR2;
	else if (!strcmp(v, "0") || !strcmp(v, "none"))
		o->report_signal = 0;
	else
		return -EINVAL;
	return 0;
}

static int opt_hold_states(struct sp_options *o, const char *v)
{
	unsigned n;

	if (parse_uint(v, &n) || n > 60000)
		return -EINVAL;
	o->hold_states_ms = n;
	return 0;
}

static int opt_hold_clock(struct sp_options *o, const char *v)
{
	if (!strcmp(v, "auto"))
		o->hold_clock = SP_HOLD_CLOCK_AUTO;
	else if (!strcmp(v, "tick"))
		o->hold_clock = SP_HOLD_CLOCK_TICK;
	else if (!strcmp(v, "clock"))
		o->hold_clock = SP_HOLD_CLOCK_CLOCK;
	else
		return -EINVAL;
	return 0;
}

static int opt_hold_where(struct sp_options *o, const char *v)
{
	if (!strcmp(v, "0") || !strcmp(v, "off"))
		o->hold_where = 0;
	else if (!strcmp(v, "blocked"))
		o->hold_where = 1;
	else if (!strcmp(v, "all"))
		o->hold_where = 2;
	else
		return -EINVAL;
	return 0;
}

static int opt_warn_wait(struct sp_options *o, const char *v)
{
	return parse_uint(v, &o->warn_wait_ms);
}

static int opt_deadlock(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->deadlock);
}

static int opt_symbolize(struct sp_options *o, const char *v)
{
	if (!strcmp(v, "offline"))
		o->symbolize_inprocess = 0;
	else if (!strcmp(v, "inprocess"))
		o->symbolize_inprocess = 1;
	else
		return -EINVAL;
	return 0;
}

static int opt_glibc_locks(struct sp_options *o, const char *v)
{
	return parse_bool(v, &o->glibc_locks);
}

struct option_row {
	const char *name;
	int (*set)(struct sp_options *o, const char *value);
	const char *valid;
};

static const struct option_row option_table[] = {
	{ "enabled", opt_enabled, "1 or 0" },
	{ "output", opt_output, "a file name (%p: the pid); default stderr" },
	{ "format", opt_format, "table, json, csv, folded, pprof or html" },
	{ "top", opt_top, "a number of rows, 0 for all" },
	{ "sort", opt_sort, "total, avg, max, count, contended or hold" },
	{ "coalesce", opt_coalesce, "1 or 0" },
	{ "merged", opt_merged,
	  "1 or 0 (table and html: one list of rows; by default lock contention first, then "
	  "the waits for an event)" },
	{ "report_at_exit", opt_report_at_exit, "1 or 0" },
	{ "account", opt_account, "1 or 0" },
	{ "src_root", opt_src_root, "a directory prefix to strip from paths" },
	{ "trace", opt_trace, "a trace file name (%p: the pid); turns profiling on" },
	{ "trace_buffer", opt_trace_buffer, "bytes per thread, 256 to 1073741824" },
	{ "trace_events", opt_trace_events,
	  "contended (waits and the releases that let a waiter through; the default) or all" },
	{ "trace_min_wait", opt_trace_min_wait,
	  "trace only waits at least this long (default 1us): N ns, or N with ns, us, ms or s" },
	{ "frames", opt_frames, "callers kept per contended site, 0 to 16" },
	{ "skip", opt_skip,
	  "a function-name regex or DSO+0xSTART-0xEND (repeatable, at most 16)" },
	{ "skip_frames", opt_skip_frames, "callers skipped above each lock call, 0 to 8" },
	{ "hold", opt_hold, "1 or 0" },
	{ "hold_sample", opt_hold_sample,
	  "time at most 1 short uncontended hold in N per thread and row (its first 4 all, "
	  "then 1 in n/4+1 up to N; long and contended holds are always measured), 1 (all) to "
	  "1000000" },
	{ "hold_states", opt_hold_states,
	  "with hold=1, sample what the holder does during holds longer than this many "
	  "milliseconds (running, preempted, a system call...), 0 off, at most 60000 "
	  "(default 1)" },
	{ "hold_clock", opt_hold_clock,
	  "with hold=1, how holds are timed: auto (default: the hold ticker's 500 us tick "
	  "while locks are taken often, the clock at every hold while they are taken less "
	  "than 400,000 times a second), tick or clock" },
	{ "hold_where", opt_hold_where,
	  "with hold states and frames=N, where in its code a long hold's holder is: "
	  "'blocked' (default: holders blocked in the kernel, unwound without disturbing "
	  "them), 'all' (running holders too, by a signal) or 0" },
	{ "lock_order", opt_lock_order, "1 or 0 (report lock-order cycles: potential deadlocks)" },
	{ "columns", opt_columns,
	  "table columns separated by ',' or ':', quoted ('site,wait'), among type, object, "
	  "site, wait, count, avg, "
	  "contended, max, p50, p90, p99, hold, max_hold, owner_chg" },
	{ "control", opt_control, "1 or 0 (listen on the control socket, see syncprof ctl)" },
	{ "report_signal", opt_report_signal, "USR1, USR2 or none" },
	{ "warn_wait", opt_warn_wait, "milliseconds a lock wait may last before a warning; 0 off" },
	{ "deadlock", opt_deadlock, "1 or 0 (report threads that wait for each other in a cycle)" },
	{ "glibc_locks", opt_glibc_locks,
	  "1 or 0 (time waits on glibc's own locks: stdio FILE locks, malloc arenas)" },
	{ "symbolize", opt_symbolize,
	  "offline (under syncprof run, run names the call sites of the report at exit) or "
	  "inprocess (the program does)" },
};

#define N_OPTIONS (sizeof(option_table) / sizeof(*option_table))

static void warn_unknown(FILE *warn, const char *key, size_t klen)
{
	/* A key is a short word: echo at most 64 bytes of whatever came. */
	if (!warn)
		return;
	fprintf(warn, "syncprof: warning: unknown option '%.*s%s' in SYNCPROF_OPTIONS (known:",
		klen > 64 ? 64 : (int)klen, key, klen > 64 ? "..." : "");
	for (size_t i = 0; i < N_OPTIONS; i++)
		fprintf(warn, "%s %s", i ? "," : "", option_table[i].name);
	fputs("); ignored\n", warn);
}

/* Apply one "key=value" of length @len; warnings to @warn unless NULL. */
static int parse_one(struct sp_options *o, const char *item, size_t len, FILE *warn)
{
	const char *eq = memchr(item, '=', len);
	size_t klen = eq ? (size_t)(eq - item) : len;
	char value[4096];

	for (size_t i = 0; i < N_OPTIONS; i++) {
		const struct option_row *row = &option_table[i];

		if (strlen(row->name) != klen || strncmp(row->name, item, klen))
			continue;
		if (!eq) {
			if (warn)
				fprintf(warn,
					"syncprof: warning: option '%s' needs a value (%s); ignored\n",
					row->name, row->valid);
			return 1;
		}
		if (len - klen - 1 >= sizeof(value)) {
			if (warn)
				fprintf(warn,
					"syncprof: warning: value of option '%s' is too long; ignored\n",
					row->name);
			return 1;
		}
		memcpy(value, eq + 1, len - klen - 1);
		value[len - klen - 1] = '\0';
		if (row->set(o, value)) {
			if (warn)
				fprintf(warn,
					"syncprof: warning: bad value '%s' for option '%s' (valid: %s); "
					"ignored\n",
					value, row->name, row->valid);
			return 1;
		}
		return 0;
	}
	warn_unknown(warn, item, klen);
	return 1;
}

/* An item longer than the buffer (cut to @item): a known key's value is
 * too long, anything else is an unknown key, shown cut. */
static int too_long(const char *item, FILE *warn)
{
	const char *eq = strchr(item, '=');
	size_t klen = eq ? (size_t)(eq - item) : strlen(item);

	for (size_t i = 0; i < N_OPTIONS; i++)
		if (strlen(option_table[i].name) == klen &&
		    !strncmp(option_table[i].name, item, klen)) {
			if (warn)
				fprintf(warn,
					"syncprof: warning: value of option '%s' is too long; ignored\n",
					option_table[i].name);
			return 1;
		}
	warn_unknown(warn, item, klen);
	return 1;
}

static int is_separator(char c)
{
	return c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/*
 * Copy the item that starts at @s into @item (of @size bytes), without its
 * quotes and escapes; return the number of bytes of @s it took, and in
 * *@err: 0, -E2BIG (longer than @size: the rest is skipped) or -EINVAL
 * (an unterminated quote or a trailing \: the rest of the string).
 */
static size_t item_next(const char *s, char *item, size_t size, int *err)
{
	size_t i = 0, n = 0;
	char quote = 0;

	*err = 0;
	for (; s[i] && (quote || !is_separator(s[i])); i++) {
		char c = s[i];

		if (quote && c == quote) {
			quote = 0;
			continue;
		}
		if (!quote && (c == '\'' || c == '"')) {
			quote = c;
			continue;
		}
		if (c == '\\' && quote != '\'') {
			if (!s[i + 1]) {
				*err = -EINVAL;
				i++; /* consumed: the string ends here */
				break;
			}
			c = s[++i];
		}
		if (n + 1 < size)
			item[n++] = c;
		else
			*err = -E2BIG;
	}
	if (quote)
		*err = -EINVAL;
	item[n] = '\0';
	return i;
}

/* At most this many warnings per string; the rest are counted in one
 * line (9,000 unknown keys printed 9,000 lines before). */
#define WARN_MAX 8

int sp_options_parse(struct sp_options *o, const char *s, FILE *warn_to)
{
	int problems = 0;
	char item[4096 + 64];

	while (s && *s) {
		FILE *warn = problems < WARN_MAX ? warn_to : NULL;
		int err;
		size_t len;

		if (is_separator(*s)) {
			s++;
			continue;
		}
		len = item_next(s, item, sizeof(item), &err);
		if (err == -EINVAL) {
			if (warn)
				fprintf(warn, "syncprof: warning: unterminated quote or trailing '\\' in "
				      "SYNCPROF_OPTIONS at '%.64s'; ignored\n", s);
			problems++;
		} else if (err == -E2BIG) {
			problems += too_long(item, warn);
		} else {
			problems += parse_one(o, item, strlen(item), warn);
		}
		s += len;
	}
	if (warn_to && problems > WARN_MAX)
		fprintf(warn_to, "syncprof: warning: %d more problems in SYNCPROF_OPTIONS (not shown); "
				 "ignored\n", problems - WARN_MAX);
	return problems;
}

/* FNV-1a of @s, as the mark of a warned-about string. */
static unsigned long long options_hash(const char *s)
{
	unsigned long long h = 1469598103934665603ull;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 1099511628211ull;
	return h;
}

int sp_options_env(struct sp_options *o, FILE *warn)
{
	const char *s = getenv("SYNCPROF_OPTIONS");
	const char *mark = getenv("SYNCPROF_OPTIONS_WARNED");
	char hash[32];
	int problems;

	if (!s)
		return 0;
	snprintf(hash, sizeof(hash), "%016llx", options_hash(s));
	if (mark && !strcmp(mark, hash))
		return sp_options_parse(o, s, NULL); /* said already, up the tree */
	problems = sp_options_parse(o, s, warn);
	if (problems > 0)
		setenv("SYNCPROF_OPTIONS_WARNED", hash, 1);
	return problems;
}

const char *sp_options_describe(const char *key)
{
	for (size_t i = 0; i < N_OPTIONS; i++)
		if (!strcmp(option_table[i].name, key))
			return option_table[i].valid;
	return NULL;
}

int sp_options_check(const char *key, const char *value)
{
	struct sp_options o;
	int rc = -ENOENT;

	for (size_t i = 0; i < N_OPTIONS; i++) {
		if (strcmp(option_table[i].name, key))
			continue;
		sp_options_defaults(&o);
		rc = option_table[i].set(&o, value) ? -EINVAL : 0;
		sp_options_free(&o);
		break;
	}
	return rc;
}
