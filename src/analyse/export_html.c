/*
 * export_html.c - a trace timeline (trace_timeline.c) as the "timeline"
 * of the HTML report ('syncprof report --trace FILE -f html'): one JSON
 * value that render/html.c puts in the page next to the profile, and
 * that the page's script draws as one track per thread, then one per
 * lock (the busiest), with the hand-off that ended a wait drawn as an
 * arrow when the wait is pointed at.
 *
 *   {"end_ns": N, "kinds": ["wait", "cond wait", "hold", ...],
 *    "threads": [{"tid": N, "name": S, "lanes": N}],
 *    "locks": [S], "sites": [S],
 *    "slices": [[thread, kind, start_ns, end_ns, lane, lock, site,
 *                lock_lane, flow]],
 *    "slices_total": N,
 *    "lock_tracks": [{"lock": N, "lanes": N, "holds": N, "waits": N,
 *                     "hold_ns": N, "wait_ns": N}],
 *    "lock_tracks_total": N,
 *    "flows": [[from_thread, from_ns, to_thread, to_ns, lock]],
 *    "flows_total": N}
 *
 * thread, lock and site index those arrays (-1: none), kind indexes
 * "kinds" (enum sp_tl_kind's names, sp_timeline_kind_name()); times are
 * ns since the trace started; an instant has end_ns == start_ns.  The
 * slices of the process (tid 0: write losses) are on a last "thread"
 * with tid 0.  Names are the exports' (sp_timeline_lock_name(), the sites
 * as the profile names them), so the page and Perfetto say the same.
 *
 * Lock tracks are the Perfetto export's (export_perfetto.c): one per lock
 * that was held or waited for, condition variables and joins aside, its
 * holds on it (a hold slice's lock_lane: its lane there, -1 for a slice
 * that is on no lock track); "lock_tracks" lists the busiest, by the time
 * threads waited for the lock, then by the time it was held (totals over
 * every slice of the trace, drawn or not), at most @max_locks of
 * "lock_tracks_total".  A flow is the model's (trace_timeline.c): the
 * release (end of the releaser's hold, or its release or futex-wake
 * instant) that let the wait's thread through, to the wait's end; a wait
 * slice's "flow" indexes "flows" (-1: none, e.g. nobody else released the
 * lock within the wait).  Only the flows of the waits written are, and
 * "flows_total" counts them all.
 *
 * Size: a browser draws some ten thousand SVG rectangles without
 * trouble, not millions, and the page holds all of them at once; so at
 * most @max slices are written, the longest ones (ties: the earlier),
 * in the timeline's order, and "slices_total" says how many there were.
 * Waiter counts are left out: the Perfetto export has them.  A flow costs
 * some 40 bytes of JSON, and there is one per wait at most.
 *
 * Alternatives considered: the Chrome JSON export embedded as is (its
 * events repeat every name; the page would have to re-derive lanes that
 * the timeline already has); a canvas instead of SVG (draws millions,
 * but no per-slice tooltip and nothing the browser test can count); flows
 * as pairs of slice indexes (an arrow's ends would be lost with a short
 * hold that the cap leaves out; thread and time need no slice).
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>

#include "base/types.h"
#include "analyse/trace_timeline.h"
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

/* What is known of each lock for its track. */
struct lock_rank {
	uint32_t lock;
	uint64_t wait_ns, hold_ns;
};

static int busiest_first(const void *pa, const void *pb)
{
	const struct lock_rank *a = pa, *b = pb;

	if (a->wait_ns != b->wait_ns)
		return a->wait_ns > b->wait_ns ? -1 : 1;
	if (a->hold_ns != b->hold_ns)
		return a->hold_ns > b->hold_ns ? -1 : 1;
	return a->lock < b->lock ? -1 : a->lock > b->lock;
}

/* The lock a track is drawn for, as the Perfetto export has them. */
static int has_track(const struct sp_tl_lock *l)
{
	return l->type != SP_TYPE_CONDVAR && l->type != SP_TYPE_JOIN && (l->holds || l->waits);
}

static int on_lock_track(const struct sp_timeline *tl, const struct sp_tl_slice *s)
{
	return s->kind == SP_TL_HOLD && s->lock != SP_TL_NONE &&
	       tl->locks[s->lock].type != SP_TYPE_CONDVAR;
}

static void write_slice(FILE *out, const struct sp_timeline *tl, const struct sp_tl_slice *s,
			int first, long flow)
{
	fprintf(out, "%s[%ld,%u,%lld,%lld,%u,%ld,%ld,%ld,%ld]", first ? "\n" : ",\n",
		thread_index(tl, s->tid), (unsigned)s->kind, (long long)s->start,
		(long long)s->end, s->lane, s->lock == SP_TL_NONE ? -1L : (long)s->lock,
		s->site == SP_TL_NONE ? -1L : (long)s->site,
		on_lock_track(tl, s) ? (long)s->lock_lane : -1L, flow);
}

/* The lock tracks, busiest first, at most @max_locks. */
static int write_lock_tracks(FILE *out, const struct sp_timeline *tl, size_t max_locks)
{
	struct lock_rank *rank = calloc(tl->n_locks ? tl->n_locks : 1, sizeof(*rank));
	size_t n = 0;

	if (!rank)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_locks; i++)
		rank[i].lock = (uint32_t)i;
	for (size_t i = 0; i < tl->n_slices; i++) {
		const struct sp_tl_slice *s = &tl->slices[i];

		if (s->lock == SP_TL_NONE)
			continue;
		if (s->kind == SP_TL_WAIT)
			rank[s->lock].wait_ns += (uint64_t)(s->end - s->start);
		else if (on_lock_track(tl, s))
			rank[s->lock].hold_ns += (uint64_t)(s->end - s->start);
	}
	for (size_t i = 0; i < tl->n_locks; i++)
		if (has_track(&tl->locks[i]))
			rank[n++] = rank[i];
	if (n > 1)
		qsort(rank, n, sizeof(*rank), busiest_first);
	fputs(",\"lock_tracks\":[", out);
	for (size_t i = 0; i < n && i < max_locks; i++) {
		const struct sp_tl_lock *l = &tl->locks[rank[i].lock];

		fprintf(out,
			"%s{\"lock\":%u,\"lanes\":%u,\"holds\":%" PRIu64 ",\"waits\":%" PRIu64
			",\"hold_ns\":%" PRIu64 ",\"wait_ns\":%" PRIu64 "}",
			i ? ",\n" : "\n", rank[i].lock, l->lanes ? l->lanes : 1, l->holds, l->waits,
			rank[i].hold_ns, rank[i].wait_ns);
	}
	fprintf(out, "],\"lock_tracks_total\":%zu", n);
	free(rank);
	return 0;
}

int sp_export_html_timeline(FILE *out, const struct sp_timeline *tl, size_t max, size_t max_locks)
{
	struct pick *picks = NULL;
	uint32_t *flow_of = NULL; /* per slice: the flow that ended it (a wait) */
	size_t n = tl->n_slices, flows_total = 0, n_flows = 0;
	int process = 0, rc;
	char buf[1024];

	for (size_t i = 0; i < tl->n_slices && !process; i++)
		process = !tl->slices[i].tid;
	flow_of = malloc((tl->n_slices ? tl->n_slices : 1) * sizeof(*flow_of));
	if (!flow_of)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_slices; i++)
		flow_of[i] = SP_TL_NONE;
	for (size_t i = 0; i < tl->n_flows; i++) {
		if (tl->flows[i].wait != SP_TL_NONE && tl->flows[i].wait < tl->n_slices) {
			flow_of[tl->flows[i].wait] = (uint32_t)i;
			flows_total++;
		}
	}
	if (n > max) {
		picks = malloc(tl->n_slices * sizeof(*picks));
		if (!picks) {
			free(flow_of);
			return -ENOMEM;
		}
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
	for (size_t j = 0; j < n; j++) {
		size_t i = picks ? picks[j].i : j;

		write_slice(out, tl, &tl->slices[i], !j,
			    flow_of[i] != SP_TL_NONE ? (long)n_flows++ : -1L);
	}
	fprintf(out, "],\"slices_total\":%zu", tl->n_slices);
	rc = write_lock_tracks(out, tl, max_locks);
	/* the flows of the waits written, in the same order */
	fputs(",\"flows\":[", out);
	for (size_t j = 0, k = 0; !rc && j < n; j++) {
		size_t i = picks ? picks[j].i : j;
		const struct sp_tl_flow *f;
		const struct sp_tl_slice *src, *w;

		if (flow_of[i] == SP_TL_NONE)
			continue;
		f = &tl->flows[flow_of[i]];
		src = &tl->slices[f->src];
		w = &tl->slices[i];
		fprintf(out, "%s[%ld,%lld,%ld,%lld,%ld]", k++ ? ",\n" : "\n",
			thread_index(tl, src->tid), (long long)src->end, thread_index(tl, w->tid),
			(long long)w->end, w->lock == SP_TL_NONE ? -1L : (long)w->lock);
	}
	fprintf(out, "],\"flows_total\":%zu}", flows_total);
	free(picks);
	free(flow_of);
	return rc;
}
