/*
 * export_html.c - a trace timeline (trace_timeline.c) as the "timeline"
 * of the HTML report ('syncprof report --trace FILE -f html'): one JSON
 * value that render/html.c puts in the page next to the profile, and
 * that the page's script draws as one track per thread.
 *
 *   {"end_ns": N, "kinds": ["wait", "cond wait", "hold", ...],
 *    "threads": [{"tid": N, "name": S, "lanes": N}],
 *    "locks": [S], "sites": [S],
 *    "slices": [[thread, kind, start_ns, end_ns, lane, lock, site]],
 *    "slices_total": N}
 *
 * thread, lock and site index those arrays (-1: none), kind indexes
 * "kinds" (enum sp_tl_kind's names, sp_timeline_kind_name()); times are
 * ns since the trace started; an instant has end_ns == start_ns.  The
 * slices of the process (tid 0: write losses) are on a last "thread"
 * with tid 0.  Names are the exports' (sp_timeline_lock_name(), the sites
 * as the profile names them), so the page and Perfetto say the same.
 *
 * Size: a browser draws some ten thousand SVG rectangles without
 * trouble, not millions, and the page holds all of them at once; so at
 * most @max slices are written, the longest ones (ties: the earlier),
 * in the timeline's order, and "slices_total" says how many there were.
 * Flows and waiter counts are left out: the Perfetto export has them.
 *
 * Alternatives considered: the Chrome JSON export embedded as is (its
 * events repeat every name; the page would have to re-derive lanes that
 * the timeline already has); a canvas instead of SVG (draws millions,
 * but no per-slice tooltip and nothing the browser test can count).
 */
#include <errno.h>
#include <stdlib.h>

#include "read/trace_timeline.h"
#include "report/render/text.h"

struct pick {
	int64_t len;
	size_t i;
};

static int longest_first(const void *pa, const void *pb)
{
	const struct pick *a = pa, *b = pb;

	if (a->len != b->len)
		return a->len > b->len ? -1 : 1;
	return a->i < b->i ? -1 : a->i > b->i;
}

static int index_order(const void *pa, const void *pb)
{
	const struct pick *a = pa, *b = pb;

	return a->i < b->i ? -1 : a->i > b->i;
}

/* The thread index of @tid: tl->threads is sorted by tid; tid 0 (the
 * process) is the last, after them. */
static long thread_index(const struct sp_timeline *tl, uint32_t tid)
{
	size_t lo = 0, hi = tl->n_threads;

	if (!tid)
		return (long)tl->n_threads;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (tl->threads[mid].tid == tid)
			return (long)mid;
		if (tl->threads[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static void write_slice(FILE *out, const struct sp_timeline *tl, const struct sp_tl_slice *s,
			int first)
{
	fprintf(out, "%s[%ld,%u,%lld,%lld,%u,%ld,%ld]", first ? "\n" : ",\n",
		thread_index(tl, s->tid), (unsigned)s->kind, (long long)s->start,
		(long long)s->end, s->lane, s->lock == SP_TL_NONE ? -1L : (long)s->lock,
		s->site == SP_TL_NONE ? -1L : (long)s->site);
}

int sp_export_html_timeline(FILE *out, const struct sp_timeline *tl, size_t max)
{
	struct pick *picks = NULL;
	size_t n = tl->n_slices;
	int process = 0;
	char buf[1024];

	for (size_t i = 0; i < tl->n_slices && !process; i++)
		process = !tl->slices[i].tid;
	if (n > max) {
		picks = malloc(tl->n_slices * sizeof(*picks));
		if (!picks)
			return -ENOMEM;
		for (size_t i = 0; i < tl->n_slices; i++) {
			picks[i].len = tl->slices[i].end - tl->slices[i].start;
			picks[i].i = i;
		}
		qsort(picks, tl->n_slices, sizeof(*picks), longest_first);
		n = max;
		qsort(picks, n, sizeof(*picks), index_order);
	}
	fprintf(out, "{\"end_ns\":%lld,\"kinds\":[", (long long)tl->end_ns);
	for (unsigned k = 0; k < SP_TL_KINDS; k++) {
		fputs(k ? "," : "", out);
		sp_json_string(out, sp_timeline_kind_name(k));
	}
	fputs("],\"threads\":[", out);
	for (size_t i = 0; i < tl->n_threads; i++) {
		const struct sp_tl_thread *t = &tl->threads[i];

		fprintf(out, "%s{\"tid\":%u,\"name\":", i ? "," : "", t->tid);
		sp_json_string(out, t->name ? t->name : "");
		fprintf(out, ",\"lanes\":%u}", t->lanes ? t->lanes : 1);
	}
	if (process)
		fprintf(out, "%s{\"tid\":0,\"name\":\"(process)\",\"lanes\":%u}",
			tl->n_threads ? "," : "", tl->process_lanes ? tl->process_lanes : 1);
	fputs("],\"locks\":[", out);
	for (size_t i = 0; i < tl->n_locks; i++) {
		fputs(i ? "," : "", out);
		sp_json_string(out, sp_timeline_lock_name(tl, &tl->locks[i], buf, sizeof(buf)));
	}
	fputs("],\"sites\":[", out);
	for (size_t i = 0; i < tl->n_sites; i++) {
		fputs(i ? "," : "", out);
		sp_json_string(out, tl->sites[i].name ? tl->sites[i].name : "?");
	}
	fputs("],\"slices\":[", out);
	for (size_t j = 0; j < n; j++)
		write_slice(out, tl, &tl->slices[picks ? picks[j].i : j], !j);
	fprintf(out, "],\"slices_total\":%zu}", tl->n_slices);
	free(picks);
	return 0;
}
