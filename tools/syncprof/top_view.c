/*
 * top_view.c - what 'syncprof top' shows: a running process's report
 * fetched over its control socket, the rates since the previous refresh,
 * sorted, and drawn as a screen (or as plain lines for --batch).
 *
 * Design.  Each refresh asks the process for its status (profiling on or
 * off, threads) and for its whole report as profile JSON (top=0), which
 * the saved-profile loader (src/read/profile_load.c) reads into the
 * profile model; a snapshot keeps, per row, a key (type, object when
 * objects are not coalesced, and the resolved site) and the counters.
 * The rates of a row are its counters' growth since the same key in the
 * previous snapshot, over the growth of the process's "elapsed_ns" (its
 * profiled time): that clock is read in the process with the rows, so a
 * slow answer or a late refresh does not bend the rates, and while
 * profiling is off nothing grows and the rates are 0.  A row that is new,
 * or whose counters went down (someone reset the process), counts from 0;
 * when the profiled time went down (a reset), every row does.  Sorting is
 * done here, so a key press re-sorts the last snapshot at once.
 *
 * Contention first (issue 26): the rows of locks come first under a
 * title line, the waits for an event (condvar, semaphore, barrier, join)
 * after them under theirs, each part in the sort key's order; a screen
 * too short for both shows the locks.  --merged, or the key l, makes one
 * list as before.
 *
 * Columns are fixed-width, numbers short with units (12.3ms, 4.56k), so
 * that an 80-column terminal holds the essentials; when the terminal is
 * narrow, columns are dropped in a stated order (object first) but never
 * the type, wait share, total wait, site or the sort key's column.
 *
 * Costs: the process renders every row as JSON once per refresh, on its
 * helper thread, and top parses it: 'ctl_target churn 2000' with
 * --no-coalesce (2,005 rows, 1 MB of JSON) takes 20 ms a refresh here,
 * the whole of a 'syncprof top -b 1'; 3 rows, 6 ms.
 *
 * Alternatives: asking for the top N rows only (sorted by the process) -
 * the rate of a row needs its previous counters even when it was not
 * shown, and sorting by the rate cannot be done by the process, which
 * keeps no history; a new "delta" request in the protocol - the process
 * would keep a snapshot per client, which the control thread avoids
 * (clients are stateless, 8 slots); the table format - it cuts names and
 * rounds numbers.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "top.h"
#include "base/types.h"
#include "read/profile_load.h"
#include "report/profile.h"

const char *const top_sort_names[TOP_SORT_N] = {
	"rate", "total", "count", "contended", "avg", "max", "hold",
};

int top_sort_parse(const char *s)
{
	for (int i = 0; i < TOP_SORT_N; i++)
		if (!strcmp(s, top_sort_names[i]))
			return i;
	return -1;
}

/* ---- snapshots ----------------------------------------------------------- */

/* A copy of @s for a screen: control bytes become '?'. */
static char *shown_dup(const char *s)
{
	char *d = strdup(s ? s : "?");

	for (char *c = d; c && *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	return d;
}

static int row_from_profile(struct top_row *t, const struct sp_profile *p,
			    const struct sp_row *r, size_t auto_len)
{
	static const struct sp_frame unknown;
	const struct sp_frame *f = r->names ? &r->names->site : &unknown;
	uintptr_t obj = p->coalesced ? 0 : r->obj;
	char site[1024];

	if (asprintf(&t->key, "%d|%lx|%s|%s|%u|%s|%lx", (int)r->type, (unsigned long)obj,
		     f->function ? f->function : "", f->file ? f->file : "", f->line,
		     f->dso ? f->dso : "", (unsigned long)f->address) < 0) {
		t->key = NULL;
		return -ENOMEM;
	}
	if (f->function && f->file)
		snprintf(site, sizeof(site), "%s %s:%u", f->function,
			 sp_path_strip(f->file, NULL, auto_len), f->line);
	else
		sp_frame_format(f, NULL, auto_len, site, sizeof(site));
	t->site = shown_dup(site);
	if (!t->site)
		return -ENOMEM;
	if (r->lock_name) {
		snprintf(t->object, sizeof(t->object), "%s", r->lock_name);
		for (char *c = t->object; *c; c++)
			if ((unsigned char)*c < 0x20 || *c == 0x7f)
				*c = '?';
	} else if (r->n_objects > 1) {
		snprintf(t->object, sizeof(t->object), "%llu locks",
			 (unsigned long long)r->n_objects);
	} else if (r->obj) {
		snprintf(t->object, sizeof(t->object), "0x%lx", (unsigned long)r->obj);
	} else {
		snprintf(t->object, sizeof(t->object), "-");
	}
	t->type = r->type;
	t->acq = r->acquisitions;
	t->waits = r->contended;
	t->wait_ns = r->wait_ns;
	t->max_ns = r->wait_max_ns;
	t->hold_ns = r->hold_ns;
	/* A futex lock's or glibc lock's holds are never seen (no call is
	 * made while uncontended): "-", not 0. */
	t->hold_known = p->hold && r->type != SP_TYPE_FUTEX && r->type != SP_TYPE_GLIBC_LOCK;
	return 0;
}

static int snap_from_profile(struct top_snap *s, const struct sp_profile *p)
{
	size_t auto_len = sp_rows_common_prefix(&p->rows);

	s->pid = p->pid;
	s->command = shown_dup(p->command);
	s->hold = p->hold;
	s->coalesced = p->coalesced;
	s->elapsed_ns = p->elapsed_ns;
	s->rows_total = p->rows.n_total > p->rows.n ? p->rows.n_total : p->rows.n;
	s->rows = calloc(p->rows.n ? p->rows.n : 1, sizeof(*s->rows));
	if (!s->command || !s->rows)
		return -ENOMEM;
	for (size_t i = 0; i < p->rows.n; i++) {
		s->n++; /* freed by top_snap_free() even when half made */
		if (row_from_profile(&s->rows[i], p, &p->rows.v[i], auto_len))
			return -ENOMEM;
	}
	return 0;
}

int top_fetch(pid_t pid, int coalesce, struct top_snap *s, char *err, size_t esize)
{
	char *status = NULL, *json = NULL, line[80], name[64];
	size_t len;
	struct sp_profile p;
	int rc;

	memset(s, 0, sizeof(*s));
	rc = cli_ctl_request(pid, "status\n", &status, &len, err, esize);
	if (rc)
		return rc;
	cli_ctl_field(status, "profiling", s->profiling, sizeof(s->profiling));
	cli_ctl_field(status, "threads", s->threads, sizeof(s->threads));
	free(status);
	snprintf(line, sizeof(line), "report format=json top=0 sort=total%s\n",
		 coalesce == 0 ? " coalesce=0" : coalesce == 1 ? " coalesce=1" : "");
	rc = cli_ctl_request(pid, line, &json, &len, err, esize);
	if (rc)
		return rc;
	snprintf(name, sizeof(name), "the report of process %d", (int)pid);
	rc = sp_profile_parse(name, json, len, &p, err, esize);
	free(json);
	if (rc)
		return rc;
	rc = snap_from_profile(s, &p);
	sp_profile_free(&p);
	if (rc) {
		top_snap_free(s);
		snprintf(err, esize, "out of memory");
	}
	return rc;
}

void top_snap_free(struct top_snap *s)
{
	for (size_t i = 0; i < s->n; i++) {
		free(s->rows[i].key);
		free(s->rows[i].site);
	}
	free(s->rows);
	free(s->command);
	memset(s, 0, sizeof(*s));
}

/* ---- rates and order --------------------------------------------------- */

static int cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct top_row *)a)->key, ((const struct top_row *)b)->key);
}

void top_rates(struct top_snap *cur, struct top_snap *prev)
{
	if (prev && cur->elapsed_ns >= prev->elapsed_ns) {
		cur->span_ns = cur->elapsed_ns - prev->elapsed_ns;
		cur->since_start = 0;
		qsort(prev->rows, prev->n, sizeof(*prev->rows), cmp_key);
	} else {
		cur->span_ns = cur->elapsed_ns;
		cur->since_start = 1;
		prev = NULL;
	}
	for (size_t i = 0; i < cur->n; i++) {
		struct top_row *r = &cur->rows[i];
		const struct top_row *o =
			prev ? bsearch(r, prev->rows, prev->n, sizeof(*r), cmp_key) : NULL;
		uint64_t da = r->acq, dw = r->waits, dt = r->wait_ns;

		if (o && r->acq >= o->acq && r->waits >= o->waits && r->wait_ns >= o->wait_ns) {
			da -= o->acq;
			dw -= o->waits;
			dt -= o->wait_ns;
		}
		if (cur->span_ns) {
			r->acq_rate = (double)da * 1e9 / (double)cur->span_ns;
			r->wait_rate = (double)dw * 1e9 / (double)cur->span_ns;
			r->wait_share = (double)dt / (double)cur->span_ns;
		} else {
			r->acq_rate = r->wait_rate = r->wait_share = 0;
		}
	}
}

static uint64_t row_avg(const struct top_row *r)
{
	/* as sp_row_avg(): per acquisition, per wait when none is counted */
	if (r->acq)
		return r->wait_ns / r->acq;
	return r->waits ? r->wait_ns / r->waits : 0;
}

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? 1 : a > b ? -1 : 0; /* larger first */
}

struct sort_by {
	enum top_sort key;
	int merged;
};

static int cmp_rows(const void *pa, const void *pb, void *arg)
{
	const struct top_row *a = pa, *b = pb;
	const struct sort_by *by = arg;
	enum top_sort key = by->key;
	int c = 0;

	/* contention first: locks before waits for an event */
	if (!by->merged && !sp_type_is_lock(a->type) != !sp_type_is_lock(b->type))
		return sp_type_is_lock(a->type) ? -1 : 1;
	switch (key) {
	case TOP_SORT_RATE:
		c = a->wait_share < b->wait_share ? 1 : a->wait_share > b->wait_share ? -1 : 0;
		if (!c)
			c = a->acq_rate < b->acq_rate ? 1 : a->acq_rate > b->acq_rate ? -1 : 0;
		break;
	case TOP_SORT_TOTAL: c = 0; break;
	case TOP_SORT_COUNT: c = cmp_u64(a->acq, b->acq); break;
	case TOP_SORT_CONTENDED: c = cmp_u64(a->waits, b->waits); break;
	case TOP_SORT_AVG: c = cmp_u64(row_avg(a), row_avg(b)); break;
	case TOP_SORT_MAX: c = cmp_u64(a->max_ns, b->max_ns); break;
	case TOP_SORT_HOLD: c = cmp_u64(a->hold_ns, b->hold_ns); break;
	case TOP_SORT_N: break;
	}
	if (!c)
		c = cmp_u64(a->wait_ns, b->wait_ns);
	if (!c)
		c = cmp_u64(a->acq, b->acq);
	return c ? c : strcmp(a->key, b->key);
}

void top_sort(struct top_snap *s, enum top_sort key, int merged)
{
	struct sort_by by = { key, merged };

	qsort_r(s->rows, s->n, sizeof(*s->rows), cmp_rows, &by);
}

/* ---- numbers -------------------------------------------------------------- */

/* @v with 3 significant digits and @unit, e.g. "12.3k", "4.56"; @v < 1000. */
static void three_digits(char *buf, size_t size, double v, const char *unit)
{
	if (v < 9.995)
		snprintf(buf, size, "%.2f%s", v, unit);
	else if (v < 99.95)
		snprintf(buf, size, "%.1f%s", v, unit);
	else
		snprintf(buf, size, "%.0f%s", v, unit);
}

/* A count: exact below 100000, then 123k, 4.56M, ... */
static const char *fmt_count(char *buf, size_t size, double v)
{
	static const char *const units[] = { "k", "M", "G", "T", "P", "E" };
	unsigned u = 0;

	if (v < 10 && v != (double)(uint64_t)v) {
		snprintf(buf, size, "%.1f", v);
		return buf;
	}
	if (v < 99999.5) {
		snprintf(buf, size, "%.0f", v);
		return buf;
	}
	v /= 1000;
	while (v >= 999.5 && u + 1 < sizeof(units) / sizeof(*units)) {
		v /= 1000;
		u++;
	}
	three_digits(buf, size, v, units[u]);
	return buf;
}

/* A time: 0, 520ns, 12.3us, 1.23ms, 123ms, 4.56s, 1234s. */
static const char *fmt_ns(char *buf, size_t size, uint64_t ns)
{
	if (!ns)
		snprintf(buf, size, "0");
	else if (ns < 1000)
		snprintf(buf, size, "%lluns", (unsigned long long)ns);
	else if (ns < 999500)
		three_digits(buf, size, (double)ns / 1e3, "us");
	else if (ns < 999500000)
		three_digits(buf, size, (double)ns / 1e6, "ms");
	else if (ns < 999500000000ull)
		three_digits(buf, size, (double)ns / 1e9, "s");
	else
		snprintf(buf, size, "%.0fs", (double)ns / 1e9);
	return buf;
}

/* ---- the screen ------------------------------------------------------------ */

enum col {
	C_TYPE, C_ACQ_RATE, C_WAIT_RATE, C_SHARE, C_ACQ, C_WAITS, C_WAIT, C_AVG, C_MAX, C_HOLD,
	C_OBJECT, C_SITE, C_N
};

/* @drop: the order in which a narrow screen drops columns, 1 first; 0
 * never.  The site takes the rest of the line, at least SITE_MIN. */
static const struct {
	const char *title;
	unsigned width;
	int left, drop;
	int sort; /* the key this column shows, or -1 */
} cols[C_N] = {
	[C_TYPE] = { "TYPE", 9, 1, 0, -1 },
	[C_ACQ_RATE] = { "ACQ/s", 7, 0, 4, -1 },
	[C_WAIT_RATE] = { "WAITS/s", 7, 0, 7, -1 },
	[C_SHARE] = { "WAIT%", 6, 0, 0, TOP_SORT_RATE },
	[C_ACQ] = { "ACQS", 7, 0, 2, TOP_SORT_COUNT },
	[C_WAITS] = { "WAITS", 7, 0, 8, TOP_SORT_CONTENDED },
	[C_WAIT] = { "WAIT", 7, 0, 0, TOP_SORT_TOTAL },
	[C_AVG] = { "AVG", 7, 0, 6, TOP_SORT_AVG },
	[C_MAX] = { "MAX", 7, 0, 5, TOP_SORT_MAX },
	[C_HOLD] = { "HOLD", 7, 0, 3, TOP_SORT_HOLD },
	[C_OBJECT] = { "OBJECT", 14, 1, 1, -1 },
	[C_SITE] = { "SITE", 0, 1, 0, -1 },
};
#define SITE_MIN 24

/* Short type names, so that the column is 9 wide. */
static const char *type_shown(int type)
{
	switch (type) {
	case SP_TYPE_RWLOCK_READ: return "rwlock_rd";
	case SP_TYPE_RWLOCK_WRITE: return "rwlock_wr";
	default: return sp_type_name(type);
	}
}

/* Which columns fit @width (0: all); the hold column only with hold
 * tracking or when it is the sort key. */
static void pick_columns(int *on, unsigned width, const struct top_snap *s, enum top_sort sort)
{
	unsigned used = 0;

	for (int c = 0; c < C_N; c++) {
		on[c] = c != C_HOLD || (s && s->hold) || sort == TOP_SORT_HOLD;
		if (on[c] && c != C_SITE)
			used += cols[c].width + 1;
	}
	for (int d = 1; width && used + SITE_MIN > width; d++) {
		int found = 0;

		for (int c = 0; c < C_N; c++)
			if (cols[c].drop == d) {
				found = 1;
				if (on[c] && cols[c].sort != (int)sort) {
					on[c] = 0;
					used -= cols[c].width + 1;
				}
			}
		if (!found)
			break;
	}
}

static void cell(char *line, size_t size, size_t *n, int c, const char *text)
{
	if (*n >= size)
		return;
	if (c == C_SITE)
		*n += (size_t)snprintf(line + *n, size - *n, "%s", text);
	else
		*n += (size_t)snprintf(line + *n, size - *n, cols[c].left ? "%-*.*s " : "%*.*s ",
				       (int)cols[c].width, (int)cols[c].width, text);
}

static void row_line(char *line, size_t size, const struct top_row *r, const int *on)
{
	size_t n = 0;
	char b[32];

	line[0] = '\0';
	for (int c = 0; c < C_N; c++) {
		if (!on[c])
			continue;
		switch (c) {
		case C_TYPE: cell(line, size, &n, c, type_shown(r->type)); break;
		case C_ACQ_RATE: cell(line, size, &n, c, fmt_count(b, sizeof(b), r->acq_rate)); break;
		case C_WAIT_RATE:
			cell(line, size, &n, c, fmt_count(b, sizeof(b), r->wait_rate));
			break;
		case C_SHARE:
			snprintf(b, sizeof(b), r->wait_share < 9.995 ? "%.1f%%" : "%.0f%%",
				 r->wait_share * 100);
			cell(line, size, &n, c, b);
			break;
		case C_ACQ: cell(line, size, &n, c, fmt_count(b, sizeof(b), (double)r->acq)); break;
		case C_WAITS: cell(line, size, &n, c, fmt_count(b, sizeof(b), (double)r->waits)); break;
		case C_WAIT: cell(line, size, &n, c, fmt_ns(b, sizeof(b), r->wait_ns)); break;
		case C_AVG: cell(line, size, &n, c, fmt_ns(b, sizeof(b), row_avg(r))); break;
		case C_MAX: cell(line, size, &n, c, fmt_ns(b, sizeof(b), r->max_ns)); break;
		case C_HOLD:
			cell(line, size, &n, c, r->hold_known ? fmt_ns(b, sizeof(b), r->hold_ns) : "-");
			break;
		case C_OBJECT: cell(line, size, &n, c, r->object); break;
		case C_SITE: cell(line, size, &n, c, r->site); break;
		}
	}
}

/*
 * Write @text cut to @width characters (UTF-8 continuation bytes take no
 * column; escape sequences "ESC [ ... letter" are copied and take none).
 * On a tty the rest of the line is cleared, and in reverse video it is
 * filled with spaces.
 */
static void put_line(FILE *out, const char *text, const struct top_screen *v, int first,
		     int reverse)
{
	unsigned col = 0;

	if (!first)
		fputs(v->tty ? "\r\n" : "\n", out);
	if (reverse && v->tty)
		fputs("\x1b[7m", out);
	for (const char *c = text; *c; c++) {
		if (*c == '\x1b') {
			size_t k = strcspn(c, "ABCDHJKm");

			if (v->tty)
				fwrite(c, 1, k + (c[k] != '\0'), out);
			c += k - (c[k] == '\0');
			continue;
		}
		if (((unsigned char)*c & 0xc0) != 0x80) {
			if (v->width && col >= v->width)
				break;
			col++;
		}
		fputc(*c, out);
	}
	if (reverse && v->tty) {
		while (v->width && col++ < v->width)
			fputc(' ', out);
		fputs("\x1b[m", out);
	}
	if (v->tty)
		fputs("\x1b[K", out);
}

static const char *const help_lines[] = {
	"Keys:",
	"  q               quit (Ctrl-C too)",
	"  space, p        pause: the screen stays as it is; again: go on",
	"  t               sort by WAIT%: wait time per second now (the default)",
	"  w               sort by WAIT: total wait time",
	"  c               sort by ACQS: acquisitions",
	"  n               sort by WAITS: contended acquisitions (waits)",
	"  a               sort by AVG: wait time per acquisition",
	"  m               sort by MAX: longest wait",
	"  o               sort by HOLD: total hold time (syncprof run --hold)",
	"  s               the next sort key",
	"  l               locks first, waits for an event after them (the default) /",
	"                  one list of both",
	"  r               reset the process's statistics (syncprof ctl PID reset)",
	"  h, ?            this help; any key goes back",
	"",
	"Columns: ACQ/s, WAITS/s and WAIT% are rates since the previous refresh, over",
	"the process's profiled time; WAIT% is wait time per second: 100% is one thread",
	"waiting all the time.  The others count from start-up or the last reset.",
	"Narrow terminals drop OBJECT, ACQS, HOLD, ACQ/s, MAX, AVG, WAITS/s, WAITS.",
};

static void draw_header(FILE *out, const struct top_snap *s, const struct top_screen *v,
			const int *on, size_t shown)
{
	char line[4096], rows[64];
	size_t n = 0;

	snprintf(line, sizeof(line), "syncprof top - pid %d: %s%s", s ? s->pid : 0,
		 s ? s->command : "?", v->tty ? "   (h: help, q: quit)" : "");
	put_line(out, line, v, 1, 0);
	if (!s)
		return;
	if (shown < s->n)
		snprintf(rows, sizeof(rows), "%zu (%zu shown)", s->rows_total, shown);
	else
		snprintf(rows, sizeof(rows), "%zu", s->rows_total);
	snprintf(line, sizeof(line),
		 "profiling: %s  threads: %s  rows: %s  profiled: %.1f s  sort: %s  "
		 "refresh: %g s%s",
		 s->profiling, s->threads, rows, (double)s->elapsed_ns / 1e9,
		 top_sort_names[v->sort], v->interval,
		 v->sort == TOP_SORT_HOLD && !s->hold ? "  (hold tracking is off)" : "");
	put_line(out, line, v, 0, 0);
	if (v->paused)
		n += (size_t)snprintf(line + n, sizeof(line) - n, "PAUSED (space: go on)   ");
	if (!s->span_ns && s->since_start)
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "rates: none (profiling was not on since start-up or the "
				      "last reset)");
	else if (!s->span_ns)
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "rates: none (profiling was off since the last refresh)");
	else if (s->since_start)
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "rates: since start-up or the last reset (%.3f s)",
				      (double)s->span_ns / 1e9);
	else
		n += (size_t)snprintf(line + n, sizeof(line) - n,
				      "rates: over the last %.3f s of profiling",
				      (double)s->span_ns / 1e9);
	if (v->message && n < sizeof(line))
		snprintf(line + n, sizeof(line) - n, "   %s", v->message);
	put_line(out, line, v, 0, 0);
	n = 0;
	for (int c = 0; c < C_N; c++) {
		int bold = v->tty && cols[c].sort == (int)v->sort;

		if (!on[c] || n >= sizeof(line))
			continue;
		if (bold)
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\x1b[1m");
		cell(line, sizeof(line), &n, c, cols[c].title);
		if (bold && n < sizeof(line))
			n += (size_t)snprintf(line + n, sizeof(line) - n, "\x1b[22m");
	}
	put_line(out, line, v, 0, 1);
}

/*
 * What fits: @lines below the column titles (a part's title takes one),
 * at most @max_rows rows.  Unless merged, the rows are sorted locks first
 * (top_sort()): @locks of them, then the waits for an event; the locks'
 * title is always drawn, the events' when one of their rows fits.  Says
 * how many rows of each part are shown (merged: all counted as locks).
 */
struct plan {
	size_t locks, events;    /* rows in each part */
	size_t show_locks, show_events;
	int title_locks, title_events;
};

/* At most @want of both budgets, taken from both. */
static size_t take(size_t want, size_t *rows, size_t *lines)
{
	size_t n = want < *rows ? want : *rows;

	n = n < *lines ? n : *lines;
	*rows -= n;
	*lines -= n;
	return n;
}

static struct plan plan_screen(const struct top_snap *s, const struct top_screen *v, size_t lines)
{
	struct plan p = { 0 };
	size_t rows = v->max_rows ? v->max_rows : (size_t)-1, any = (size_t)-1;

	if (!s)
		return p;
	for (size_t i = 0; i < s->n; i++)
		p.locks += v->merged || sp_type_is_lock(s->rows[i].type);
	p.events = s->n - p.locks;
	if (!v->merged && s->n)
		p.title_locks = (int)take(1, &any, &lines);
	p.show_locks = take(p.locks, &rows, &lines);
	if (p.events && rows && lines > 1) {
		p.title_events = (int)take(1, &any, &lines);
		p.show_events = take(p.events, &rows, &lines);
	}
	return p;
}

static void part_title(FILE *out, const struct top_screen *v, int locks, size_t n)
{
	char line[256];

	if (locks)
		snprintf(line, sizeof(line),
			 "-- Lock contention (mutex, rwlock, spinlock, futex, glibc lock): %zu row%s",
			 n, n == 1 ? "" : "s");
	else
		snprintf(line, sizeof(line),
			 "-- Waits for an event (condition variable, semaphore, barrier, join): %zu "
			 "row%s", n, n == 1 ? "" : "s");
	put_line(out, line, v, 0, 0);
}

void top_draw(FILE *out, const struct top_snap *s, const struct top_screen *v)
{
	int on[C_N];
	size_t room = (size_t)-1, shown;
	char line[4096];
	struct plan p;

	pick_columns(on, v->width, s, v->sort);
	if (v->height)
		room = v->height > 4 ? v->height - 4 : 0;
	p = plan_screen(s, v, room);
	shown = p.show_locks + p.show_events;
	if (v->tty)
		fputs("\x1b[H", out);
	draw_header(out, s, v, on, shown);
	if (v->help) {
		for (size_t i = 0; i < sizeof(help_lines) / sizeof(*help_lines) && i < room; i++)
			put_line(out, help_lines[i], v, 0, 0);
	} else if (s && !s->n && room) {
		put_line(out, !strcmp(s->profiling, "off")
			 ? "(no rows: profiling is off; 'syncprof ctl PID on' turns it on)"
			 : "(no rows yet: no lock was taken since start-up or the last reset)",
			 v, 0, 0);
	} else if (s) {
		if (p.title_locks)
			part_title(out, v, 1, p.locks);
		for (size_t i = 0; i < p.show_locks; i++) {
			row_line(line, sizeof(line), &s->rows[i], on);
			put_line(out, line, v, 0, 0);
		}
		if (p.title_events)
			part_title(out, v, 0, p.events);
		for (size_t i = 0; i < p.show_events; i++) {
			row_line(line, sizeof(line), &s->rows[p.locks + i], on);
			put_line(out, line, v, 0, 0);
		}
	}
	if (v->tty)
		fputs("\x1b[J", out);
	else
		fputc('\n', out);
}
