/*
 * cmd_report.c - 'syncprof report': render a saved profile again, or show
 * what changed between two.
 *
 *   syncprof report [REPORT OPTIONS] [--trace TRACE -f html] PROFILE.json
 *   syncprof report --diff [-n N] [-s wait|count|contended] [-f table|csv]
 *                   BASE.json NEW.json
 *
 * Re-rendering runs the live report's pipeline (report/pipeline.c) on rows read
 * back from the file (profile_load.c): coalesce when asked, sort, top N,
 * render in any format.  A profile saved coalesced has lost its objects,
 * so --no-coalesce on it is refused with a message.
 *
 * --trace FILE (with -f html only): the page also draws the trace's
 * timeline (export_html.c), read from the file mapped read-only, built by
 * trace_timeline.c as 'syncprof trace export' builds it.  A trace cut
 * short or corrupt is drawn up to where it stops, with a warning.
 *
 * Diff: both profiles are coalesced per (type, site); sites are matched by
 * name (file:line and function, or function and DSO, or address when
 * nothing else is known: addresses of interposed code move between runs),
 * and each site gets base, new and change of wait, acquisitions and
 * contended attempts, sorted by the absolute change of the chosen key
 * (wait by default), largest first.  Sites in only one profile count as
 * zero on the other side and are marked "new" or "gone".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "read/profile_load.h"
#include "analyse/trace_timeline.h"
#include "report/render/text.h"

/* Slices of a trace drawn in an HTML page at most, and lock tracks (the
 * busiest locks) at most (export_html.c). */
#define HTML_MAX_SLICES 20000
#define HTML_MAX_LOCKS 16

static const char help[] =
	"Usage: syncprof report [REPORT OPTIONS] [--trace TRACE] PROFILE.json\n"
	"       syncprof report --diff [-n N] [-s wait|count|contended] [-f table|csv]\n"
	"                       [-o FILE] BASE.json NEW.json\n"
	"\n"
	"Render a profile saved as JSON (SYNCPROF_OPTIONS=format=json,output=FILE, or\n"
	"'syncprof ctl PID report -f json') again, in any format, sort and length.\n"
	"--no-coalesce needs a profile saved with coalesce=0 (one row per lock).\n"
	"\n"
	"%s"
	"      --trace TRACE   with -f html: the page also shows TRACE (syncprof run\n"
	"                      --trace) as a timeline of its threads' waits and holds,\n"
	"                      and of the busiest locks' holders; a click on a wait\n"
	"                      draws the hand-off that ended it\n"
	"\n"
	"--diff compares two profiles site by site (type and call site; objects\n"
	"are merged) and prints, for each site, wait time, acquisitions (count)\n"
	"and contended attempts in BASE and NEW and the change, largest absolute\n"
	"change of the -s key (default wait) first; sites found in one profile\n"
	"only are marked new or gone.  Its options and the two profiles may come in\n"
	"any order, before or after --diff.\n"
	"\n"
	"Exit status: 0 done, 1 a file could not be read or is not a profile,\n"
	"2 bad usage.\n"
	"Examples:\n"
	"  syncprof report -n 5 -s avg prof.json\n"
	"  syncprof report -f pprof -o prof.pb.gz prof.json\n"
	"  syncprof report -f html --trace t.bin -o prof.html prof.json\n"
	"  syncprof report --diff before.json after.json\n";

/* --trace: the file, mapped, and its timeline. */
struct report_trace {
	const char *path;
	void *data;
	size_t size;
	struct sp_trace_reader r;
	struct sp_timeline tl;
	int have_reader, have_tl;
};

static void trace_close(struct report_trace *t)
{
	if (t->have_tl)
		sp_timeline_free(&t->tl);
	if (t->have_reader)
		sp_trace_reader_fini(&t->r);
	if (t->data)
		munmap(t->data, t->size);
	memset(t, 0, sizeof(*t));
}

static int trace_open(struct report_trace *t, const char *path)
{
	static const char empty[1];
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;

	memset(t, 0, sizeof(*t));
	t->path = path;
	if (fd < 0 || fstat(fd, &st)) {
		cli_error("report", "cannot open '%s': %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	t->size = (size_t)st.st_size;
	if (t->size) {
		t->data = mmap(NULL, t->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (t->data == MAP_FAILED) {
			t->data = NULL;
			cli_error("report", "cannot read '%s': %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	close(fd);
	if (sp_trace_reader_init(&t->r, t->data ? t->data : empty, t->size)) {
		cli_error("report", "'%s': %s", path, t->r.error);
		trace_close(t);
		return -1;
	}
	t->have_reader = 1;
	t->have_tl = 1;
	if (sp_timeline_build(&t->tl, &t->r)) {
		cli_error("report", "'%s': out of memory", path);
		trace_close(t);
		return -1;
	}
	if (t->r.status != SP_TRACE_READ_OK)
		cli_error("report", "warning: '%s' is %s (%s): the timeline stops there", path,
			  t->r.status == SP_TRACE_READ_TRUNCATED ? "cut short" : "corrupt",
			  t->r.error);
	else if (sp_trace_reader_write_error(&t->r))
		cli_error("report", "warning: '%s' is incomplete: writing it failed (%s)", path,
			  strerror(sp_trace_reader_write_error(&t->r)));
	return 0;
}

static int trace_timeline_json(FILE *out, void *ctx)
{
	struct report_trace *t = ctx;

	return sp_export_html_timeline(out, &t->tl, HTML_MAX_SLICES, HTML_MAX_LOCKS);
}

static int render_profile(const char *path, struct cli_render_opts *o, const char *trace)
{
	struct report_trace t = { 0 };
	struct sp_profile p;
	char err[512];
	FILE *out;
	int rc;

	if (sp_profile_load(path, &p, err, sizeof(err))) {
		cli_error("report", "%s", err);
		return 1;
	}
	if (trace && trace_open(&t, trace)) {
		sp_profile_free(&p);
		return 1;
	}
	/* Another process's trace would be drawn as this profile's timeline. */
	if (trace && p.pid > 0 && t.r.hdr.pid && (uint32_t)p.pid != t.r.hdr.pid) {
		cli_error("report", "'%s' is the trace of process %u, '%s' the profile of process "
			  "%d: not drawn together",
			  trace, t.r.hdr.pid, path, p.pid);
		trace_close(&t);
		sp_profile_free(&p);
		return 1;
	}
	if (p.coalesced && o->coalesce_set && !o->report.coalesce) {
		cli_error("report",
			  "%s was saved with objects coalesced per call site; --no-coalesce "
			  "needs a profile saved with coalesce=0 (--no-coalesce)",
			  path);
		trace_close(&t);
		sp_profile_free(&p);
		return 1;
	}
	rc = sp_profile_shape(&p, &o->report);
	if (rc) {
		cli_error("report", "%s", strerror(-rc));
		trace_close(&t);
		sp_profile_free(&p);
		return 1;
	}
	out = cli_open_output("report", o);
	if (!out) {
		trace_close(&t);
		sp_profile_free(&p);
		return 1;
	}
	if (trace)
		rc = sp_render_html(out, &p, &o->report, trace_timeline_json, &t);
	else
		rc = sp_render(out, &p, &o->report);
	if (rc)
		cli_error("report", "rendering failed: %s", strerror(-rc));
	if (cli_close_output("report", o, out))
		rc = -EIO;
	trace_close(&t);
	sp_profile_free(&p);
	return rc ? 1 : 0;
}

/* ---- --diff ----------------------------------------------------------- */

enum diff_key { DIFF_WAIT, DIFF_COUNT, DIFF_CONTENDED };

struct diff_row {
	char key[600];   /* type + site identity, for matching */
	char label[512]; /* site as printed */
	int type;
	uint64_t base[3], cur[3]; /* wait_ns, acquisitions, contended */
	int in_base, in_new;
};

static void site_key(const struct sp_row *r, char *buf, size_t size)
{
	const struct sp_frame *f = &r->names->site;

	if (f->file)
		snprintf(buf, size, "%d|%s:%u|%s", r->type, f->file, f->line,
			 f->function ? f->function : "");
	else if (f->function)
		snprintf(buf, size, "%d|%s|%s", r->type, f->function, f->dso ? f->dso : "");
	else
		snprintf(buf, size, "%d|%#lx", r->type, (unsigned long)f->address);
}

static int64_t change(const struct diff_row *d, int k)
{
	return (int64_t)d->cur[k] - (int64_t)d->base[k];
}

static int diff_cmp(const void *pa, const void *pb, void *arg)
{
	const struct diff_row *a = pa, *b = pb;
	enum diff_key sort_by = *(const enum diff_key *)arg;
	int64_t ca = llabs(change(a, sort_by)), cb = llabs(change(b, sort_by));

	if (ca != cb)
		return ca > cb ? -1 : 1;
	for (int k = 0; k < 3; k++) {
		ca = llabs(change(a, k));
		cb = llabs(change(b, k));
		if (ca != cb)
			return ca > cb ? -1 : 1;
	}
	return strcmp(a->key, b->key);
}

static int diff_add(struct diff_row **v, size_t *n, const struct sp_profile *p, int side,
		    size_t auto_len)
{
	for (size_t i = 0; i < p->rows.n; i++) {
		const struct sp_row *r = &p->rows.v[i];
		struct diff_row *d = NULL;
		char key[600];

		site_key(r, key, sizeof(key));
		for (size_t j = 0; j < *n && !d; j++) /* quadratic; profiles are short */
			if (!strcmp((*v)[j].key, key))
				d = &(*v)[j];
		if (!d) {
			struct diff_row *nv = realloc(*v, (*n + 1) * sizeof(**v));

			if (!nv)
				return -ENOMEM;
			*v = nv;
			d = &nv[(*n)++];
			memset(d, 0, sizeof(*d));
			snprintf(d->key, sizeof(d->key), "%s", key);
			sp_frame_format(&r->names->site, NULL, auto_len, d->label, sizeof(d->label));
			d->type = r->type;
		}
		uint64_t *dst = side ? d->cur : d->base;

		dst[0] += r->wait_ns;
		dst[1] += r->acquisitions;
		dst[2] += r->contended;
		if (side)
			d->in_new = 1;
		else
			d->in_base = 1;
	}
	return 0;
}

static void print_diff(FILE *out, const struct diff_row *v, size_t n, int csv, const char *base,
		       const char *cur, enum diff_key sort_by)
{
	int ws = 9;

	if (csv) {
		fputs("type,site,status,wait_ns_base,wait_ns_new,wait_ns_change,count_base,"
		      "count_new,count_change,contended_base,contended_new,contended_change\n",
		      out);
		for (size_t i = 0; i < n; i++) {
			const struct diff_row *d = &v[i];

			fprintf(out, "%s,\"", sp_type_name(d->type));
			for (const char *s = d->label; *s; s++)
				fprintf(out, *s == '"' ? "\"\"" : "%c", *s);
			fprintf(out, "\",%s", d->in_base && d->in_new ? "" : d->in_new ? "new" : "gone");
			for (int k = 0; k < 3; k++)
				fprintf(out, ",%llu,%llu,%lld", (unsigned long long)d->base[k],
					(unsigned long long)d->cur[k], (long long)change(d, k));
			fputc('\n', out);
		}
		return;
	}
	for (size_t i = 0; i < n; i++) {
		int w = (int)strlen(v[i].label);

		ws = w > ws ? w : ws;
	}
	fprintf(out, "syncprof: diff %s -> %s: %zu site%s, largest change of %s first\n", base,
		cur, n, n == 1 ? "" : "s",
		sort_by == DIFF_WAIT ? "wait" : sort_by == DIFF_COUNT ? "count" : "contended");
	fprintf(out, "%-12s  %-*s  %6s  %12s  %12s  %13s  %10s  %10s  %11s  %9s  %9s  %10s\n",
		"Type", ws, "Call site", "Status", "Wait base(s)", "Wait new(s)", "Wait change",
		"Count base", "Count new", "Count chg", "Cont base", "Cont new", "Cont chg");
	for (size_t i = 0; i < n; i++) {
		const struct diff_row *d = &v[i];

		fprintf(out,
			"%-12s  %-*s  %6s  %12.5f  %12.5f  %+13.5f  %10llu  %10llu  %+11lld  %9llu  "
			"%9llu  %+10lld\n",
			sp_type_name(d->type), ws, d->label,
			d->in_base && d->in_new ? "" : d->in_new ? "new" : "gone",
			(double)d->base[0] / 1e9, (double)d->cur[0] / 1e9,
			(double)change(d, 0) / 1e9, (unsigned long long)d->base[1],
			(unsigned long long)d->cur[1], (long long)change(d, 1),
			(unsigned long long)d->base[2], (unsigned long long)d->cur[2],
			(long long)change(d, 2));
	}
	if (!n)
		fputs("(no lock activity in either profile)\n", out);
}

struct diff_opts {
	const char *files[2], *output;
	enum diff_key sort_by;
	unsigned top;
	int csv;
};

/* One --diff option @opt ('n', 's', 'f' or 'o') with its value @val into
 * @o: 0, or 2 after saying why it is bad. */
static int diff_option(char opt, const char *val, struct diff_opts *o)
{
	char *end;

	switch (opt) {
	case 'n':
		o->top = (unsigned)strtoul(val, &end, 10);
		if (!*val || *end || *val == '-') {
			cli_error("report", "bad --top '%s' (a number of rows)", val);
			return 2;
		}
		return 0;
	case 's':
		if (!strcmp(val, "wait") || !strcmp(val, "total"))
			o->sort_by = DIFF_WAIT;
		else if (!strcmp(val, "count"))
			o->sort_by = DIFF_COUNT;
		else if (!strcmp(val, "contended"))
			o->sort_by = DIFF_CONTENDED;
		else {
			cli_error("report", "bad --diff sort key '%s' (valid: wait, count, "
					    "contended)", val);
			return 2;
		}
		return 0;
	case 'f':
		if (!strcmp(val, "csv"))
			o->csv = 1;
		else if (!strcmp(val, "table"))
			o->csv = 0;
		else {
			cli_error("report", "--diff prints a table or csv, not '%s'", val);
			return 2;
		}
		return 0;
	default:
		o->output = val;
		return 0;
	}
}

/* Options and profiles in any order, before or after --diff itself, each
 * option as "-x V", "--xx V" or "--xx=V", from argv[@i] on into @o: 0, or
 * 2 after saying why they are bad. */
static int diff_args(int argc, char **argv, int i, struct diff_opts *o)
{
	int nf = 0;

	memset(o, 0, sizeof(*o));
	o->sort_by = DIFF_WAIT;
	for (; i < argc; i++) {
		const char *a = argv[i], *val;
		char opt = 0;

		if (!strcmp(a, "--diff"))
			continue;
		if (!strcmp(a, "-n") || !strcmp(a, "--top") || !strncmp(a, "--top=", 6))
			opt = 'n';
		else if (!strcmp(a, "-s") || !strcmp(a, "--sort") || !strncmp(a, "--sort=", 7))
			opt = 's';
		else if (!strcmp(a, "-f") || !strcmp(a, "--format") || !strncmp(a, "--format=", 9))
			opt = 'f';
		else if (!strcmp(a, "-o") || !strcmp(a, "--output") || !strncmp(a, "--output=", 9))
			opt = 'o';
		if (opt) {
			val = strchr(a, '=');
			if (val && a[1] == '-') {
				val++;
			} else if (i + 1 < argc) {
				val = argv[++i];
			} else {
				cli_error("report", "option %s needs a value", a);
				return 2;
			}
			if (diff_option(opt, val, o))
				return 2;
		} else if (a[0] == '-' && a[1]) {
			cli_error("report", "unknown or incomplete --diff option '%s' (valid: -n, -s, "
					    "-f, -o)", a);
			return 2;
		} else if (nf < 2) {
			o->files[nf++] = a;
		} else {
			cli_error("report", "--diff takes two profiles, got a third: '%s'", a);
			return 2;
		}
	}
	if (nf != 2) {
		cli_error("report", "--diff needs two profiles: BASE.json NEW.json");
		return 2;
	}
	return 0;
}

/* The @n rows of @v, sorted and cut as @o says, to its output: 0 or -EIO. */
static int diff_write(const struct diff_opts *o, struct diff_row *v, size_t n)
{
	enum diff_key sort_by = o->sort_by;
	FILE *out = stdout;

	qsort_r(v, n, sizeof(*v), diff_cmp, &sort_by);
	if (o->top && n > o->top)
		n = o->top;
	if (o->output && strcmp(o->output, "-"))
		out = fopen(o->output, "we");
	if (!out) {
		cli_error("report", "cannot write '%s': %s", o->output, strerror(errno));
		return -EIO;
	}
	print_diff(out, v, n, o->csv, o->files[0], o->files[1], o->sort_by);
	if (fflush(out) || ferror(out) || (out != stdout && fclose(out))) {
		cli_error("report", "writing the diff failed: %s", strerror(errno));
		return -EIO;
	}
	return 0;
}

static int do_diff(int argc, char **argv, int i)
{
	struct diff_opts o;
	struct sp_profile p[2];
	char err[512];
	struct diff_row *v = NULL;
	struct sp_rows all = { 0 };
	size_t n = 0, auto_len;
	int rc = 0;

	if (diff_args(argc, argv, i, &o))
		return 2;
	for (int k = 0; k < 2; k++)
		if (sp_profile_load(o.files[k], &p[k], err, sizeof(err))) {
			cli_error("report", "%s", err);
			if (k)
				sp_profile_free(&p[0]);
			return 1;
		}
	for (int k = 0; k < 2 && !rc; k++)
		rc = sp_report_coalesce(&p[k].rows);
	for (int k = 0; k < 2 && !rc; k++)
		for (size_t j = 0; j < p[k].rows.n && !rc; j++)
			rc = sp_rows_push(&all, &p[k].rows.v[j]);
	auto_len = sp_rows_common_prefix(&all);
	sp_rows_free(&all);
	for (int k = 0; k < 2 && !rc; k++)
		rc = diff_add(&v, &n, &p[k], k, auto_len);
	if (!rc)
		rc = diff_write(&o, v, n);
	else if (rc == -ENOMEM)
		cli_error("report", "out of memory");
	free(v);
	sp_profile_free(&p[0]);
	sp_profile_free(&p[1]);
	return rc ? 1 : 0;
}

int cmd_report(int argc, char **argv)
{
	struct cli_render_opts o;
	const char *path = NULL, *trace = NULL;

	cli_render_opts_init(&o);
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
			printf(help, cli_render_help);
			return 0;
		}
	/* --diff anywhere: every other argument is the diff's, in any order
	 * ("-f csv --diff A B" as "--diff A B -f csv"). */
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--diff"))
			return do_diff(argc, argv, 1);
	for (int i = 1; i < argc; i++) {
		int r;

		r = cli_render_option("report", argc, argv, &i, &o);
		if (r < 0)
			return 2;
		if (r)
			continue;
		if (!strcmp(argv[i], "--trace") || !strncmp(argv[i], "--trace=", 8)) {
			if (argv[i][7] == '=') {
				trace = argv[i] + 8;
			} else if (i + 1 < argc) {
				trace = argv[++i];
			} else {
				cli_error("report", "option --trace needs a value");
				return 2;
			}
			continue;
		}
		if (argv[i][0] == '-' && argv[i][1]) {
			cli_error("report", "unknown option '%s' (see syncprof report --help)",
				  argv[i]);
			return 2;
		}
		if (path) {
			cli_error("report", "one profile at a time ('%s' and '%s'); --diff compares two",
				  path, argv[i]);
			return 2;
		}
		path = argv[i];
	}
	if (!path) {
		cli_error("report", "no profile given (usage: syncprof report [OPTIONS] "
				    "PROFILE.json; see --help)");
		return 2;
	}
	if (trace && o.report.format != SYNCPROF_FORMAT_HTML) {
		cli_error("report", "--trace draws a timeline in the HTML page only: add -f html "
				    "(or see 'syncprof trace export' for Perfetto)");
		return 2;
	}
	return render_profile(path, &o, trace);
}
