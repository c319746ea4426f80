/*
 * control_proto.c - the control socket's request language: parse one
 * request line, run it.
 *
 * A request is one line of printable ASCII, at most SP_CTL_LINE_MAX bytes
 * with its newline:
 *     VERB [KEY=VALUE ...]
 * VERB is status, on, off, reset or report; report takes the report keys
 * of SYNCPROF_OPTIONS: format, top, sort, coalesce, columns (comma
 * separated here), src_root.  Words are separated by single or repeated
 * spaces.  The answer (written by control.c) is "ok LEN\n" followed by LEN
 * bytes, or "error MESSAGE\n"; the server then closes the connection.
 *
 * Design: the parser is a pure function over (bytes, length) - it never
 * reads past the length, needs no NUL, allocates nothing and copies values
 * into fixed buffers of the request - so that it can be fuzzed in
 * isolation (tests/fuzz/fuzz_ctl.c) and so that a hostile line costs at
 * most one pass over 1 KiB.  Anything unexpected (a control character,
 * an unknown verb or key, a value too long, a repeated key, arguments to a
 * verb without any) is an error naming the offending word.
 *
 * Alternatives considered: reusing sp_options_parse() on the arguments (it
 * prints warnings and ignores bad keys, which is right for an environment
 * variable the program cannot answer, wrong for a client that can be told);
 * a binary protocol (harder to fuzz meaningfully and to try with socat).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "runtime/runtime.h"
#include "report/profile.h"

static const char *const verbs[] = {
	[SP_CTL_STATUS] = "status", [SP_CTL_ON] = "on",		[SP_CTL_OFF] = "off",
	[SP_CTL_RESET] = "reset",   [SP_CTL_REPORT] = "report",
};

static int word_is(const char *w, size_t n, const char *s)
{
	return strlen(s) == n && !memcmp(w, s, n);
}

/* Copy @n bytes of @w into @buf of @size as a string; -EINVAL if too long. */
static int word_copy(char *buf, size_t size, const char *w, size_t n)
{
	if (n >= size)
		return -EINVAL;
	memcpy(buf, w, n);
	buf[n] = '\0';
	return 0;
}

static int parse_number(const char *v, unsigned *out)
{
	unsigned long n = 0;

	if (!*v)
		return -EINVAL;
	for (; *v; v++) {
		if (*v < '0' || *v > '9')
			return -EINVAL;
		n = n * 10 + (unsigned long)(*v - '0');
		if (n > 1000000000ul)
			return -EINVAL;
	}
	*out = (unsigned)n;
	return 0;
}

static int apply_report_key(struct sp_ctl_request *req, const char *key, size_t klen,
			    const char *val)
{
	struct syncprof_report_options *o = &req->report;
	int ids[SP_MAX_COLUMNS];

	if (word_is(key, klen, "format"))
		return syncprof_parse_format(val, &o->format);
	if (word_is(key, klen, "sort"))
		return syncprof_parse_sort(val, &o->sort);
	if (word_is(key, klen, "top"))
		return parse_number(val, &o->top);
	if (word_is(key, klen, "coalesce")) {
		if (!strcmp(val, "1"))
			o->coalesce = 1;
		else if (!strcmp(val, "0"))
			o->coalesce = 0;
		else
			return -EINVAL;
		return 0;
	}
	if (word_is(key, klen, "columns")) {
		if (word_copy(req->columns, sizeof(req->columns), val, strlen(val)) ||
		    sp_columns_parse(req->columns, ids, SP_MAX_COLUMNS, 1) < 0)
			return -EINVAL;
		o->columns = req->columns;
		return 0;
	}
	if (word_is(key, klen, "src_root")) {
		if (!*val || word_copy(req->src_root, sizeof(req->src_root), val, strlen(val)))
			return -EINVAL;
		o->src_root = req->src_root;
		return 0;
	}
	return -ENOENT;
}

#define KEYS "format, top, sort, coalesce, columns, src_root"
static const char *const report_keys[] = { "format", "top", "sort", "coalesce", "columns",
					   "src_root" };

/* @req with the verb unset and @defaults' report options, its column list
 * and source root copied into @req's own buffers. */
static void request_defaults(struct sp_ctl_request *req,
			     const struct syncprof_report_options *defaults)
{
	memset(req, 0, sizeof(*req));
	req->report = *defaults;
	req->report.columns = NULL;
	req->report.src_root = NULL;
	if (defaults->columns && !word_copy(req->columns, sizeof(req->columns), defaults->columns,
					    strlen(defaults->columns)))
		req->report.columns = req->columns;
	if (defaults->src_root && !word_copy(req->src_root, sizeof(req->src_root),
					     defaults->src_root, strlen(defaults->src_root)))
		req->report.src_root = req->src_root;
}

/* The line's length without its newline into *@len, when it is short
 * enough and printable ASCII; else -EINVAL and why in @err. */
static int line_check(const char *line, size_t *len, char *err, size_t err_size)
{
	size_t n = *len;

	if (n && line[n - 1] == '\n')
		n--;
	if (n >= SP_CTL_LINE_MAX) {
		snprintf(err, err_size, "request longer than %d bytes", SP_CTL_LINE_MAX - 1);
		return -EINVAL;
	}
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)line[i] < 0x20 || (unsigned char)line[i] > 0x7e) {
			snprintf(err, err_size, "byte 0x%02x at offset %zu is not printable ASCII",
				 (unsigned char)line[i], i);
			return -EINVAL;
		}
	*len = n;
	return 0;
}

/* A report's KEY=VALUE word (@w, @n bytes) applied to @req; each key once
 * (@seen: a bit per key).  0, or -EINVAL and why in @err. */
static int report_word(struct sp_ctl_request *req, const char *w, size_t n, unsigned *seen,
		       char *err, size_t err_size)
{
	const char *eq = memchr(w, '=', n);
	char val[256];
	int rc, klen;

	if (!eq || eq == w) {
		snprintf(err, err_size, "expected KEY=VALUE, got '%.*s'", (int)(n > 64 ? 64 : n), w);
		return -EINVAL;
	}
	klen = (int)(eq - w > 64 ? 64 : eq - w);
	if (word_copy(val, sizeof(val), eq + 1, (size_t)(w + n - eq - 1))) {
		snprintf(err, err_size, "value of '%.*s' is too long", klen, w);
		return -EINVAL;
	}
	rc = apply_report_key(req, w, (size_t)(eq - w), val);
	if (rc == -ENOENT) {
		snprintf(err, err_size, "unknown report option '%.*s' (known: " KEYS ")", klen, w);
		return -EINVAL;
	}
	if (rc) {
		snprintf(err, err_size, "bad value '%.64s' for '%.*s'", val, klen, w);
		return -EINVAL;
	}
	for (unsigned k = 0; k < sizeof(report_keys) / sizeof(*report_keys); k++) {
		if (!word_is(w, (size_t)(eq - w), report_keys[k]))
			continue;
		if (*seen & (1u << k)) {
			snprintf(err, err_size, "report option '%s' given twice", report_keys[k]);
			return -EINVAL;
		}
		*seen |= 1u << k;
	}
	return 0;
}

int sp_ctl_parse(const char *line, size_t len, const struct syncprof_report_options *defaults,
		 struct sp_ctl_request *req, char *err, size_t err_size)
{
	const char *p = line, *end;
	unsigned seen = 0; /* bit per key, to refuse repeats */
	int verb = -1;

	request_defaults(req, defaults);
	if (line_check(line, &len, err, err_size))
		return -EINVAL;
	end = line + len;
	while (p < end) {
		const char *w;
		size_t n;

		while (p < end && *p == ' ')
			p++;
		if (p == end)
			break;
		w = p;
		while (p < end && *p != ' ')
			p++;
		n = (size_t)(p - w);
		if (verb < 0) {
			for (size_t i = 0; i < sizeof(verbs) / sizeof(*verbs); i++)
				if (word_is(w, n, verbs[i]))
					verb = (int)i;
			if (verb < 0) {
				snprintf(err, err_size,
					 "unknown command '%.*s' (known: status, on, off, reset, "
					 "report)",
					 (int)(n > 64 ? 64 : n), w);
				return -EINVAL;
			}
			continue;
		}
		if (verb != SP_CTL_REPORT) {
			snprintf(err, err_size, "'%s' takes no arguments", verbs[verb]);
			return -EINVAL;
		}
		if (report_word(req, w, n, &seen, err, err_size))
			return -EINVAL;
	}
	if (verb < 0) {
		snprintf(err, err_size, "empty request");
		return -EINVAL;
	}
	req->verb = (enum sp_ctl_verb)verb;
	return 0;
}

/* ---- running a request ------------------------------------------------ */

struct count_ctx {
	size_t entries;
};

static void count_entries(const struct sp_table *t, void *arg)
{
	((struct count_ctx *)arg)->entries += sp_table_count(t);
}

struct long_ctx {
	FILE *out;
	unsigned n;
	char lines[16][700];
};

static void long_hold_line(const struct sp_long_hold_now *h, void *arg)
{
	struct long_ctx *c = arg;
	char site[512];

	if (c->n >= 16) {
		c->n++;
		return;
	}
	sp_wg_site_name(&h->site, site, sizeof(site));
	snprintf(c->lines[c->n++], sizeof(c->lines[0]),
		 "  thread %d holds %s %#lx (taken at %s) for %.1f ms: %s for %.1f ms\n",
		 (int)h->tid, sp_type_name(h->type), (unsigned long)h->obj, site,
		 (double)h->held_ns / 1e6, h->state, (double)h->state_ns / 1e6);
}

/* "long_holds: N" and one line per hold held past hold_states=MS now,
 * with what its holder is doing (hold tracking only; issue 24). */
static void long_holds_status(FILE *out)
{
	struct long_ctx *c;

	if (!sp_opts.hold || !sp_holdstate_long_ticks)
		return;
	c = calloc(1, sizeof(*c));
	if (!c)
		return;
	sp_holdstate_long_each(long_hold_line, c);
	fprintf(out, "long_holds: %u\n", c->n);
	for (unsigned i = 0; i < c->n && i < 16; i++)
		fputs(c->lines[i], out);
	if (c->n > 16)
		fprintf(out, "  (%u more)\n", c->n - 16);
	free(c);
}

static int do_status(FILE *out)
{
	struct syncprof_report_options o;
	struct sp_thread *saved;
	struct sp_profile prof;
	struct count_ctx c = { 0 };
	uint64_t since = sp_state_since_ns();
	time_t secs = (time_t)(since / 1000000000u);
	struct timespec now;
	struct tm tm;
	char when[64] = "?";
	size_t sites = 0;
	int rc;

	syncprof_report_options_init(&o);
	o.coalesce = 1;
	saved = sp_thread_enter();
	rc = sp_report_profile(&prof, &o);
	sp_thread_leave(saved);
	if (rc)
		return rc;
	sites = prof.rows.n;
	sp_profile_free(&prof);
	sp_registry_foreach(count_entries, &c);
	clock_gettime(CLOCK_REALTIME, &now);
	if (gmtime_r(&secs, &tm))
		strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%SZ", &tm);
	fprintf(out, "pid: %d\n", (int)getpid());
	fprintf(out, "command: %s\n", sp_command());
	fprintf(out, "profiling: %s\n", syncprof_is_enabled() ? "on" : "off");
	fprintf(out, "since: %s (%.1f s ago)\n", when,
		(double)((uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec - since) / 1e9);
	fprintf(out, "threads: %zu\n", sp_registry_thread_count());
	fprintf(out, "sites: %zu\n", sites);
	fprintf(out, "entries: %zu\n", c.entries);
	fprintf(out, "lost_events: %llu\n", syncprof_lost_events());
	fprintf(out, "warn_wait_ms: %u\n", sp_opts.warn_wait_ms);
	sp_watchdog_status(out); /* "deadlocks: N" and the last reports */
	long_holds_status(out);
	return 0;
}

int sp_ctl_execute(const struct sp_ctl_request *req, FILE *out)
{
	int was = syncprof_is_enabled();

	switch (req->verb) {
	case SP_CTL_STATUS: return do_status(out);
	case SP_CTL_ON:
		syncprof_enable();
		fprintf(out, "profiling: on (was %s)\n", was ? "on" : "off");
		return 0;
	case SP_CTL_OFF:
		syncprof_disable();
		fprintf(out, "profiling: off (was %s)\n", was ? "on" : "off");
		return 0;
	case SP_CTL_RESET: {
		int rc = syncprof_reset();

		if (!rc)
			fputs("reset: later reports start from now\n", out);
		return rc;
	}
	case SP_CTL_REPORT: return sp_report_write(out, &req->report);
	}
	return -EINVAL;
}
