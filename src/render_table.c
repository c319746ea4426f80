/*
 * render_table.c - the human-readable report.
 *
 * QSP's columns, in QSP's order - Type, Object, Call site, Wait Time (s),
 * Count, Average (us) - followed by Contended, Max (us), p50 (us) and
 * p99 (us).  Object is the lock's address, or "[N]" when coalescing merged
 * N objects into the row.  Widths follow the content; numbers are right
 * aligned.  A header line says what the report covers, and a footer says
 * how many lock calls could not be recorded when that is not zero.
 *
 * Columns are rows of a table (key, header, alignment, cell formatter), so
 * that --columns / columns= can choose and reorder them by key; without
 * the option every column is printed in the order above.  Each cell is
 * formatted once into a string, widths are computed, then lines printed.
 *
 * Alternatives considered: one printf per row with a fixed format (the
 * first version) cannot leave columns out; a column bitmask cannot reorder.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum col_id { C_TYPE, C_OBJECT, C_SITE, C_WAIT, C_COUNT, C_AVG, C_CONTENDED, C_MAX, C_P50, C_P99,
	      N_COLS };

#define CELL 512

struct col {
	const char *key;
	const char *header;
	int min_width; /* numbers: fixed width, as the first version printed */
	int left;      /* left aligned */
};

static const struct col cols[N_COLS] = {
	[C_TYPE] = { "type", "Type", 4, 1 },
	[C_OBJECT] = { "object", "Object", 6, 0 },
	[C_SITE] = { "site", "Call site", 9, 1 },
	[C_WAIT] = { "wait", "Wait Time (s)", 13, 0 },
	[C_COUNT] = { "count", "Count", 12, 0 },
	[C_AVG] = { "avg", "Average (us)", 12, 0 },
	[C_CONTENDED] = { "contended", "Contended", 10, 0 },
	[C_MAX] = { "max", "Max (us)", 10, 0 },
	[C_P50] = { "p50", "p50 (us)", 10, 0 },
	[C_P99] = { "p99", "p99 (us)", 10, 0 },
};

int sp_columns_parse(const char *list, int *ids, int max)
{
	int n = 0;

	if (!list || !*list) {
		for (int i = 0; i < N_COLS && i < max; i++)
			ids[n++] = i;
		return n;
	}
	while (*list) {
		size_t len = strcspn(list, ",");
		int found = -1;

		for (int i = 0; i < N_COLS; i++)
			if (strlen(cols[i].key) == len && !strncmp(cols[i].key, list, len))
				found = i;
		if (found < 0 || n >= max)
			return -EINVAL;
		for (int j = 0; j < n; j++)
			if (ids[j] == found)
				return -EINVAL;
		ids[n++] = found;
		list += len;
		if (*list == ',' && !*++list)
			return -EINVAL; /* trailing comma */
	}
	return n ? n : -EINVAL;
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

static void cell(const struct sp_row *r, int id, const struct syncprof_report_options *o,
		 size_t auto_len, char *buf)
{
	uint64_t avg = sp_row_avg(r);

	switch (id) {
	case C_TYPE: snprintf(buf, CELL, "%s", sp_type_name(r->type)); break;
	case C_OBJECT:
		if (r->n_objects > 1)
			snprintf(buf, CELL, "[%llu]", (unsigned long long)r->n_objects);
		else
			snprintf(buf, CELL, "%#lx", (unsigned long)r->obj);
		break;
	case C_SITE: sp_row_site_format(r, o->src_root, auto_len, buf, CELL); break;
	case C_WAIT: snprintf(buf, CELL, "%.5f", (double)r->wait_ns / 1e9); break;
	case C_COUNT: snprintf(buf, CELL, "%llu", (unsigned long long)r->acquisitions); break;
	case C_AVG: snprintf(buf, CELL, "%.2f", us(avg)); break;
	case C_CONTENDED: snprintf(buf, CELL, "%llu", (unsigned long long)r->contended); break;
	case C_MAX: snprintf(buf, CELL, "%.2f", us(r->wait_max_ns)); break;
	case C_P50: snprintf(buf, CELL, "%.2f", us(sp_row_percentile(r, 0.50))); break;
	case C_P99: snprintf(buf, CELL, "%.2f", us(sp_row_percentile(r, 0.99))); break;
	default: buf[0] = '\0';
	}
}

static void print_line(FILE *out, const int *ids, int n, const int *width, char (*cells)[CELL])
{
	for (int c = 0; c < n; c++) {
		const struct col *k = &cols[ids[c]];
		int last = c == n - 1;

		if (k->left && last)
			fputs(cells[c], out); /* no trailing blanks */
		else
			fprintf(out, k->left ? "%-*s" : "%*s", width[c], cells[c]);
		fputs(last ? "\n" : "  ", out);
	}
}

int sp_render_table(FILE *out, const struct sp_rows *rows, const struct sp_render_ctx *ctx)
{
	const struct syncprof_report_options *o = ctx->opts;
	size_t auto_len = sp_rows_common_prefix(rows);
	int ids[SP_MAX_COLUMNS], width[SP_MAX_COLUMNS], total = 0;
	int n = sp_columns_parse(o->columns, ids, SP_MAX_COLUMNS);
	char(*cells)[CELL];

	if (n < 0)
		return -EINVAL;
	cells = calloc((rows->n + 1) * (size_t)n, CELL);
	if (!cells)
		return -ENOMEM;
	for (int c = 0; c < n; c++) {
		strcpy(cells[c], cols[ids[c]].header);
		width[c] = (int)strlen(cells[c]);
		if (width[c] < cols[ids[c]].min_width)
			width[c] = cols[ids[c]].min_width;
	}
	for (size_t i = 0; i < rows->n; i++)
		for (int c = 0; c < n; c++) {
			char *b = cells[(i + 1) * (size_t)n + (size_t)c];
			int w;

			cell(&rows->v[i], ids[c], o, auto_len, b);
			w = (int)strlen(b);
			width[c] = w > width[c] ? w : width[c];
		}

	fprintf(out, "syncprof: pid %d: %s\n", (int)ctx->pid,
		ctx->command && *ctx->command ? ctx->command : "?");
	fprintf(out, "syncprof: %.3f s profiled, ", (double)ctx->elapsed_ns / 1e9);
	if (rows->n_total > rows->n)
		fprintf(out, "top %zu of %zu rows", rows->n, rows->n_total);
	else
		fprintf(out, "%zu row%s", rows->n, rows->n == 1 ? "" : "s");
	fprintf(out, ", sorted by %s%s\n", sort_label(o->sort),
		o->coalesce ? ", objects coalesced per call site" : "");
	print_line(out, ids, n, width, cells);
	for (int c = 0; c < n; c++)
		total += width[c] + (c ? 2 : 0);
	for (int i = 0; i < total; i++)
		fputc('-', out);
	fputc('\n', out);
	for (size_t i = 0; i < rows->n; i++)
		print_line(out, ids, n, width, cells + (i + 1) * (size_t)n);
	if (!rows->n)
		fputs("(no lock activity recorded)\n", out);
	if (ctx->lost)
		fprintf(out, "syncprof: %llu lock call%s could not be recorded (out of memory or "
			     "during thread exit); they are missing from the counts above\n",
			(unsigned long long)ctx->lost, ctx->lost == 1 ? "" : "s");
	free(cells);
	return 0;
}
