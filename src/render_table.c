/*
 * render_table.c - the human-readable report.
 *
 * QSP's columns, in QSP's order - Type, Object, Call site, Wait Time (s),
 * Count, Average (us) - followed by Contended, Max (us), p50 (us) and
 * p99 (us).  Object is the lock's address, or "[N]" when coalescing merged
 * N objects into the row.  Widths follow the content; numbers are right
 * aligned.  A header line says what the report covers, and a footer says
 * how many lock calls could not be recorded when that is not zero.
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

int sp_render_table(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	const struct syncprof_report_options *o = ctx->opts;
	size_t auto_len = sp_rows_common_prefix(rows);
	struct cells c = { 0 };
	int wt = 4, wo = 6, ws = 9;

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
	fprintf(out, "%-*s  %*s  %-*s  %13s  %12s  %12s  %10s  %10s  %10s  %10s\n", wt, "Type", wo,
		"Object", ws, "Call site", "Wait Time (s)", "Count", "Average (us)", "Contended",
		"Max (us)", "p50 (us)", "p99 (us)");
	for (int i = 0; i < wt + wo + ws + 13 + 12 * 2 + 10 * 4 + 2 * 9; i++)
		fputc('-', out);
	fputc('\n', out);
	for (size_t i = 0; i < rows->n; i++) {
		const struct sp_row *r = &rows->v[i];
		uint64_t avg = sp_row_avg(r);

		fprintf(out,
			"%-*s  %*s  %-*s  %13.5f  %12llu  %12.2f  %10llu  %10.2f  %10.2f  %10.2f\n",
			wt, sp_type_name(r->type), wo, c.buf + c.object[i], ws, c.buf + c.site[i],
			(double)r->wait_ns / 1e9, (unsigned long long)r->acquisitions, us(avg),
			(unsigned long long)r->contended, us(r->wait_max_ns),
			us(sp_row_percentile(r, 0.50)), us(sp_row_percentile(r, 0.99)));
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
