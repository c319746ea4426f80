/*
 * export_chrome.c - a trace timeline (trace_timeline.c) as Chrome Trace
 * Event Format JSON, which ui.perfetto.dev and chrome://tracing open.
 *
 * The same slices with the same names as the Perfetto export
 * (export_perfetto.c), within what the format allows:
 *   - waits, condition waits and holds are complete ("X") events on the
 *     waiting or holding thread, named "wait <site>", "hold <site>" with
 *     the site as the profile names it; slices that do not nest on their
 *     thread (hand-over-hand locking) become async ("b"/"e") events, since
 *     a thread has one stack of "X" events;
 *   - flows ("s"/"f", bound to the enclosing slice) from the hold or
 *     release that let a waiter through to the waiter's hold: "s" 1 ns
 *     before the end of the releaser's hold, "f" 1 ns after the start of
 *     the waiter's hold (timestamps are in microseconds with three
 *     decimals; a zero-length slice takes both at its instant);
 *   - a counter ("C") per contended lock with its number of waiters;
 *   - dropped and lost events as async slices over their span, plus an
 *     instant at its start; failed trylocks and registered events as
 *     instants; thread and process names as metadata.
 * The format has no tracks per lock and no interning: those exist only in
 * the Perfetto export.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "base/types.h"
#include "analyse/trace_timeline.h"
#include "report/render/text.h"

struct cw {
	FILE *out;
	const struct sp_timeline *tl;
	int first;
};

static void ev_begin(struct cw *w, const char *ph, const char *name, int64_t ts_ns, uint32_t tid)
{
	fputs(w->first ? "\n" : ",\n", w->out);
	w->first = 0;
	fprintf(w->out, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f,\"name\":", ph,
		w->tl->pid, tid, (double)ts_ns / 1e3);
	sp_json_string(w->out, name);
}

static void args(struct cw *w, const struct sp_tl_slice *s)
{
	const struct sp_timeline *tl = w->tl;
	const char *sep = "";

	fputs(",\"args\":{", w->out);
	if (s->lock != SP_TL_NONE) {
		const struct sp_tl_lock *l = &tl->locks[s->lock];
		char lname[512];

		fprintf(w->out, "\"%s\":\"0x%" PRIx64 "\",\"lock\":",
			l->type == SP_TYPE_CONDVAR ? "condvar" : "obj", l->obj);
		sp_json_string(w->out, sp_timeline_lock_name(tl, l, lname, sizeof(lname)));
		if (l->type != SP_TYPE_CONDVAR) {
			fputs(",\"type\":", w->out);
			sp_json_string(w->out, sp_type_name(s->kind == SP_TL_HOLD ? s->lock_type
										   : l->type));
		}
		sep = ",";
	}
	switch (s->kind) {
	case SP_TL_WAIT:
	case SP_TL_COND_WAIT:
		if (!(s->flags & (SP_TL_CUT_DROP | SP_TL_OPEN_END)))
			fprintf(w->out, "%s\"wait_ns\":%" PRIu64, sep, s->value), sep = ",";
		break;
	case SP_TL_HOLD:
		fprintf(w->out, "%s\"hold_ns\":%" PRIu64, sep, s->value), sep = ",";
		break;
	case SP_TL_WAKE:
		fprintf(w->out, "%s\"woken\":%" PRIu64, sep, s->value), sep = ",";
		break;
	case SP_TL_DROPPED:
	case SP_TL_WRITE_LOSS:
		fprintf(w->out, "%s\"count\":%" PRIu64 ",\"first_us\":%.3f,\"last_us\":%.3f", sep,
			s->value, (double)s->start / 1e3, (double)s->end / 1e3);
		sep = ",";
		break;
	case SP_TL_EVENT: {
		struct sp_trace_rec rec;

		if (sp_trace_reader_read_at(tl->r, s->value, &rec))
			break;
		for (unsigned i = 0; i < rec.nargs; i++) {
			char an[32];

			snprintf(an, sizeof(an), "a%u", i);
			fputs(sep, w->out);
			sp_json_string(w->out, rec.def && i < rec.def->nargs ? rec.def->args[i] : an);
			fprintf(w->out, ":%" PRIu64, rec.args[i]);
			sep = ",";
		}
		break;
	}
	default:
		break;
	}
	if (s->flags & SP_TL_CUT_DROP)
		fprintf(w->out, "%s\"note\":\"cut short: the events after this point were lost\"",
			sep);
	else if (s->flags & SP_TL_OPEN_END)
		fprintf(w->out, "%s\"note\":\"still open when the trace ended\"", sep);
	else if (s->flags & SP_TL_FROM_NS)
		fprintf(w->out, "%s\"note\":\"%s\"", sep,
			s->kind == SP_TL_HOLD ? "start = release - hold_ns"
					      : "start = acquisition - wait_ns");
	fputs("}}", w->out);
}

static void slice(struct cw *w, size_t i)
{
	const struct sp_timeline *tl = w->tl;
	const struct sp_tl_slice *s = &tl->slices[i];
	const char *cat = sp_timeline_slice_category(s);
	char name[1200];

	sp_timeline_slice_name(tl, s, name, sizeof(name));
	switch (s->kind) {
	case SP_TL_TRY_FAILED:
	case SP_TL_EVENT:
		ev_begin(w, "i", name, s->start, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"s\":\"t\"", cat);
		args(w, s);
		return;
	case SP_TL_DROPPED:
	case SP_TL_WRITE_LOSS:
		ev_begin(w, "i", name, s->start, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"s\":\"%s\"", cat, s->tid ? "t" : "g");
		args(w, s);
		/* one name for all of them: one async track, not one per drop */
		snprintf(name, sizeof(name), "%s",
			 s->kind == SP_TL_DROPPED ? "dropped events" : "lost events");
		ev_begin(w, "b", name, s->start, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"id\":\"drop%zu\"", cat, i);
		args(w, s);
		ev_begin(w, "e", name, s->end, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"id\":\"drop%zu\"}", cat, i);
		return;
	default:
		break;
	}
	if (s->lane && s->tid) {
		ev_begin(w, "b", name, s->start, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"id\":\"0x%zx\"", cat, i);
		args(w, s);
		ev_begin(w, "e", name, s->end, s->tid);
		fprintf(w->out, ",\"cat\":\"%s\",\"id\":\"0x%zx\"}", cat, i);
		return;
	}
	ev_begin(w, "X", name, s->start, s->tid);
	fprintf(w->out, ",\"cat\":\"%s\",\"dur\":%.3f", cat, (double)(s->end - s->start) / 1e3);
	args(w, s);
}

/* A flow's end inside slice @s: 1 ns from its @end side when it is long
 * enough, else its start. */
static int64_t bind_ts(const struct sp_tl_slice *s, int end)
{
	if (s->end - s->start < 2)
		return s->start;
	return end ? s->end - 1 : s->start + 1;
}

static void flows(struct cw *w)
{
	const struct sp_timeline *tl = w->tl;

	for (size_t i = 0; i < tl->n_flows; i++) {
		const struct sp_tl_flow *f = &tl->flows[i];
		const struct sp_tl_slice *src = &tl->slices[f->src], *dst;

		if (f->dst == SP_TL_NONE)
			continue;
		dst = &tl->slices[f->dst];
		ev_begin(w, "s", "handoff", bind_ts(src, 1), src->tid);
		fprintf(w->out, ",\"cat\":\"handoff\",\"id\":%zu}", i + 1);
		ev_begin(w, "f", "handoff", bind_ts(dst, 0), dst->tid);
		fprintf(w->out, ",\"cat\":\"handoff\",\"id\":%zu,\"bp\":\"e\"}", i + 1);
	}
}

static void counters(struct cw *w)
{
	const struct sp_timeline *tl = w->tl;
	char name[600], lname[512];

	for (size_t i = 0; i < tl->n_counts; i++) {
		const struct sp_tl_count *c = &tl->counts[i];

		snprintf(name, sizeof(name), "waiters %s",
			 sp_timeline_lock_name(tl, &tl->locks[c->lock], lname, sizeof(lname)));
		ev_begin(w, "C", name, c->ts, 0);
		fprintf(w->out, ",\"args\":{\"waiters\":%d}}", c->waiters);
	}
}

int sp_export_chrome(FILE *out, const struct sp_timeline *tl)
{
	struct cw w = { out, tl, 1 };
	char name[128];

	fputs("{\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"syncprof\"},"
	      "\"traceEvents\":[",
	      out);
	sp_timeline_process_name(tl, name, sizeof(name));
	ev_begin(&w, "M", "process_name", 0, 0);
	fputs(",\"args\":{\"name\":", out);
	sp_json_string(out, name);
	fputs("}}", out);
	for (size_t i = 0; i < tl->n_threads; i++) {
		ev_begin(&w, "M", "thread_name", 0, tl->threads[i].tid);
		fputs(",\"args\":{\"name\":", out);
		sp_json_string(out, tl->threads[i].name);
		fputs("}}", out);
	}
	for (size_t i = 0; i < tl->n_slices; i++)
		slice(&w, i);
	flows(&w);
	counters(&w);
	fputs("\n]}\n", out);
	return ferror(out) ? -EIO : 0;
}
