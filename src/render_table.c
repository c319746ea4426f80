/*
 * render_table.c - the human-readable report.
 *
 * QSP's columns, in QSP's order - Type, Object, Call site, Wait Time (s),
 * Count, Average (us) - followed by Contended, Max (us), p50 (us) and
 * p99 (us).  Object is the lock's address, or "[N]" when coalescing merged
 * N objects into the row.  Widths follow the content; numbers are right
 * aligned.  A header line says what the report covers, and a footer says
 * how many lock calls could not be recorded when that is not zero.
 * With hold tracking on (hold.c): Hold Time (s), Max hold (us) and Owner
 * chg columns, and under each row its blame lines (largest first, top 4).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Cell text of every row, in one growing buffer (offsets, not pointers). */
struct cells {
	char *buf;
	size_t len, cap;
	size_t *object, *site; /* offsets of each row's cells */
};

static int cells_add(struct cells *c, const char *s, size_t *off)
{
	size_t n = strlen(s) + 1;

	if (c->len + n > c->cap) {
		size_t cap = (c->cap + n) * 2;
		char *b = realloc(c->buf, cap);

		if (!b)
			return -ENOMEM;
		c->buf = b;
		c->cap = cap;
	}
	memcpy(c->buf + c->len, s, n);
	*off = c->len;
	c->len += n;
	return 0;
}

static void cells_free(struct cells *c)
{
	free(c->buf);
	free(c->object);
	free(c->site);
}

static void object_cell(const struct sp_row *r, char *buf, size_t size)
{
	if (r->n_objects > 1)
		snprintf(buf, size, "[%llu]", (unsigned long long)r->n_objects);
	else
		snprintf(buf, size, "%#lx", (unsigned long)r->obj);
}

static const char *sort_label(enum syncprof_sort s)
{
	switch (s) {
	case SYNCPROF_SORT_AVG: return "average wait";
	case SYNCPROF_SORT_MAX: return "longest wait";
	case SYNCPROF_SORT_COUNT: return "acquisitions";
	case SYNCPROF_SORT_CONTENDED: return "contended attempts";
	case SYNCPROF_SORT_HOLD: return "total hold time";
	case SYNCPROF_SORT_TOTAL:
	default: return "total wait";
	}
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* With hold tracking: "waited X s (N times) for holders at SITE" lines. */
static void blame_lines(FILE *out, const struct sp_row *r, const struct syncprof_report_options *o,
			size_t auto_len)
{
	struct sp_blame b[4];
	size_t n = sp_blame_for_row(r, o->coalesce, b, 4);

	for (size_t i = 0; i < n; i++) {
		struct sp_row h;
		char site[512];

		memset(&h, 0, sizeof(h));
		h.file = b[i].holder.file;
		h.func = b[i].holder.func;
		h.line = b[i].holder.line;
		h.pc = b[i].holder.pc;
		sp_site_format(&h, o->src_root, auto_len, site, sizeof(site));
		fprintf(out, "    blame: waited %.5f s (%llu time%s) for holders that took it at %s\n",
			(double)b[i].wait_ns / 1e9, (unsigned long long)b[i].count,
			b[i].count == 1 ? "" : "s", site);
	}
}

int sp_render_table(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	const struct syncprof_report_options *o = ctx->opts;
	size_t auto_len = sp_rows_common_prefix(rows);
	struct cells c = { 0 };
	int wt = 4, wo = 6, ws = 9;
	int hold = sp_load_relaxed(&sp_hold_on);

	c.object = malloc((rows->n + 1) * sizeof(*c.object));
	c.site = malloc((rows->n + 1) * sizeof(*c.site));
	if (!c.object || !c.site) {
		cells_free(&c);
		return -ENOMEM;
	}
	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *r = &rows->v[i];
		char obj[32], site[512];
		int n;

		object_cell(r, obj, sizeof(obj));
		sp_site_format(r, o->src_root, auto_len, site, sizeof(site));
		if (cells_add(&c, obj, &c.object[i]) || cells_add(&c, site, &c.site[i])) {
			cells_free(&c);
			return -ENOMEM;
		}
		n = (int)strlen(sp_type_name(r->type));
		wt = n > wt ? n : wt;
		n = (int)strlen(obj);
		wo = n > wo ? n : wo;
		n = (int)strlen(site);
		ws = n > ws ? n : ws;
	}

	fprintf(out, "syncprof: pid %d: %s\n", (int)ctx->pid, ctx->command && *ctx->command ? ctx->command : "?");
	fprintf(out, "syncprof: %.3f s profiled, ", (double)ctx->elapsed_ns / 1e9);
	if (rows->n_total > rows->n)
		fprintf(out, "top %zu of %zu rows", rows->n, rows->n_total);
	else
		fprintf(out, "%zu row%s", rows->n, rows->n == 1 ? "" : "s");
	fprintf(out, ", sorted by %s%s\n", sort_label(o->sort),
		o->coalesce ? ", objects coalesced per call site" : "");
	fprintf(out, "%-*s  %*s  %-*s  %13s  %12s  %12s  %10s  %10s  %10s  %10s", wt, "Type", wo,
		"Object", ws, "Call site", "Wait Time (s)", "Count", "Average (us)", "Contended",
		"Max (us)", "p50 (us)", "p99 (us)");
	if (hold)
		fprintf(out, "  %13s  %13s  %10s", "Hold Time (s)", "Max hold (us)", "Owner chg");
	fputc('\n', out);
	for (int i = 0; i < wt + wo + ws + 13 + 12 * 2 + 10 * 4 + 2 * 9 + (hold ? 42 : 0); i++)
		fputc('-', out);
	fputc('\n', out);
	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *r = &rows->v[i];
		uint64_t avg = sp_row_avg(r);

		fprintf(out,
			"%-*s  %*s  %-*s  %13.5f  %12llu  %12.2f  %10llu  %10.2f  %10.2f  %10.2f%s",
			wt, sp_type_name(r->type), wo, c.buf + c.object[i], ws, c.buf + c.site[i],
			(double)r->wait_ns / 1e9, (unsigned long long)r->acquisitions, us(avg),
			(unsigned long long)r->contended, us(r->wait_max_ns),
			us(sp_row_percentile(r, 0.50)), us(sp_row_percentile(r, 0.99)),
			hold ? "" : "\n");
		if (hold) {
			fprintf(out, "  %13.5f  %13.2f  %10llu\n", (double)r->hold_ns / 1e9,
				us(r->hold_max_ns), (unsigned long long)r->owner_changes);
			blame_lines(out, r, o, auto_len);
		}
	}
	if (!rows->n)
		fputs("(no lock activity recorded)\n", out);
	if (ctx->lost)
		fprintf(out, "syncprof: %llu lock call%s could not be recorded (out of memory or "
			     "during thread exit); they are missing from the counts above\n",
			(unsigned long long)ctx->lost, ctx->lost == 1 ? "" : "s");
	cells_free(&c);
	return 0;
}
