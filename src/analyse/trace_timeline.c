/*
 * trace_timeline.c - a lock-event trace as a timeline of slices, flows and
 * counters: the one model both exporters write (export_chrome.c,
 * export_perfetto.c), so that Chrome JSON and Perfetto show the same
 * slices with the same names.
 *
 * Design: two passes.  The first reads the file in order (names, MAPS and
 * strings are defined before their first use, so each lock event's site
 * is resolved there, once per distinct site) into compact events; the
 * second walks them sorted by time (each thread's stream is in time order
 * already, the threads are interleaved in chunks) and pairs them:
 *
 *   - a wait is [lock_wait, lock_acquired] on the waiter's thread, or
 *     [acquired - wait_ns, acquired] when the trace has no lock_wait;
 *   - a hold is [lock_acquired, lock_released] on the holder's thread, or
 *     [released - hold_ns, released] when the trace has only the release
 *     (contended-only traces: no acquired event for uncontended holds);
 *   - a condition wait releases its mutex (a hold ends) and retakes it;
 *   - a flow goes from the release that let a waiter through - the last
 *     release of the lock by another thread within the wait - to that
 *     waiter's hold (an instant stands in for a side that has no slice);
 *   - a futex wake (futex_wake: futex locks have no hold and no release
 *     event) is an instant on the waker's thread and counts as the word's
 *     release, so the wait it ended gets a flow from it;
 *   - each lock that was waited for gets its number of waiters over time;
 *   - a DROPPED record becomes a slice over the span of the lost events on
 *     its thread, and cuts the thread's open holds and wait there (their
 *     ends were lost); a WRITE_LOSS record a slice of the process.
 *
 * The first pass is this file's, the second trace_pairing.c's; what they
 * share, trace_timeline_model.h.  Slices of one track must nest to draw
 * as a stack; those that do not are dealt into lanes
 * (trace_timeline_draw.c), which also names sites, slices and locks.
 *
 * Sites are named as the profile names them (report/names.c's
 * sp_frame_format): instrumented sites "file:line", code addresses
 * "function file:line" through libdw on the DSO now at the traced path
 * (symbolize.c's sp_symbolize_file), else "dso+0xoffset"; paths lose the
 * directory prefix all sites share, as in the profile table.
 *
 * Costs: the first pass keeps 72 bytes per event (freed once paired), a
 * slice takes 56; both are sorted once (n log n).  Memory is O(events),
 * with the file itself (the CLI reads it whole): the bank demo's 715 MB
 * trace of 10.5 million events exports to Perfetto with 1.7 GB resident
 * at the peak (2.5 GB before the events were freed after pairing;
 * docs/trace-format.md has the command).  Alternatives
 * considered: a streaming k-way merge of the per-thread chunks would keep
 * memory small, but a hold slice is complete only at its release and
 * flows need the other threads' releases, so slices would still be
 * buffered; per-slice lanes need the whole track.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/types.h"
#include "analyse/trace_timeline.h"
#include "analyse/trace_timeline_model.h"
#include "report/profile.h"

/* ---- first pass: compact events --------------------------------------- */

static const char *keep_str(struct sp_tl_private *p, const char *s)
{
	char *c;

	if (!s)
		return NULL;
	if (sp_grow(&p->strs, &p->cap_strs, p->n_strs, sizeof(*p->strs)) || !(c = strdup(s)))
		return NULL;
	p->strs[p->n_strs++] = c;
	return c;
}

/* The site of lock event @rec, resolved once per distinct site. */
static uint32_t site_of(struct sp_timeline *tl, const struct sp_trace_rec *rec)
{
	struct sp_tl_private *p = tl->priv;
	uint64_t site = rec->args[SP_LA_SITE], func = rec->args[SP_LA_FUNC];
	uint64_t line = rec->args[SP_LA_LINE];
	uint32_t i = map_get(&p->sites, site, func, line);
	struct sp_tl_site *s;

	if (i != SP_TL_NONE)
		return i;
	if (sp_grow(&tl->sites, &tl->cap_sites, tl->n_sites, sizeof(*tl->sites)))
		return SP_TL_NONE;
	i = (uint32_t)tl->n_sites;
	s = &tl->sites[i];
	memset(s, 0, sizeof(*s));
	if (line) {
		s->file = keep_str(p, sp_trace_reader_string(tl->r, site));
		s->function = keep_str(p, sp_trace_reader_string(tl->r, func));
		s->line = (unsigned)(line > 0xffffffffu ? 0 : line);
		if (!s->file)
			s->file = keep_str(p, "?");
	} else {
		char dso[1024];
		uint64_t off = 0;
		struct sp_symbol sym;

		s->address = site ? site : 1;
		if (sp_trace_reader_pc_dso(tl->r, site, dso, sizeof(dso), &off)) {
			s->dso = keep_str(p, dso);
			s->offset = off;
			if (!sp_symbolize_file(dso, NULL, off, &sym)) {
				s->function = keep_str(p, sym.function);
				s->file = keep_str(p, sym.file);
				s->line = sym.line;
				if (!sym.file)
					s->offset = sym.offset;
			}
		}
	}
	if (map_put(&p->sites, site, func, line, i))
		return SP_TL_NONE;
	tl->n_sites++;
	return i;
}

static int push_ev(struct sp_timeline *tl, const struct ev *e)
{
	struct sp_tl_private *p = tl->priv;

	if (sp_grow(&p->evs, &p->cap_evs, p->n_evs, sizeof(*p->evs)))
		return -ENOMEM;
	p->evs[p->n_evs] = *e;
	p->evs[p->n_evs].seq = p->seq++;
	p->n_evs++;
	if (e->ts2 > tl->end_ns)
		tl->end_ns = e->ts2;
	if (e->ts > tl->end_ns)
		tl->end_ns = e->ts;
	return 0;
}

static int64_t clamp_ts(int64_t ts)
{
	return ts > TS_LIMIT ? TS_LIMIT : ts < -TS_LIMIT ? -TS_LIMIT : ts;
}

static uint64_t clamp_ns(uint64_t ns)
{
	return ns > (uint64_t)TS_LIMIT ? (uint64_t)TS_LIMIT : ns;
}

static int first_pass(struct sp_timeline *tl, struct sp_trace_reader *r)
{
	struct sp_trace_rec rec;

	while (sp_trace_reader_next(r, &rec) > 0) {
		struct ev e = { 0 };

		switch (rec.type) {
		case SP_REC_EVENT:
			e.ts = clamp_ts(sp_trace_reader_rel_ns(r, rec.ts));
			e.tid = rec.tid;
			e.id = (uint16_t)rec.id;
			if (rec.id >= 1 && rec.id <= SP_EV_LOCK_LAST && rec.nargs > SP_LA_TYPE) {
				e.rec = EV_LOCK;
				e.obj = rec.args[SP_LA_OBJ];
				e.aux = rec.args[SP_LA_TYPE];
				e.has_ns = rec.nargs > SP_LA_NS;
				e.ns = e.has_ns ? clamp_ns(rec.args[SP_LA_NS]) : 0;
				e.site = site_of(tl, &rec);
				if (e.site == SP_TL_NONE)
					return -ENOMEM;
				if ((rec.id == SP_EV_LOCK_ACQUIRED && e.has_ns && !e.ns) ||
				    (rec.id == SP_EV_LOCK_RELEASED && !e.has_ns))
					tl->full_stream = 1;
			} else if (rec.id == SP_EV_HOLD_STATE && rec.nargs > SP_HA_IN) {
				/* on the holder's thread, not the ticker's */
				e.rec = EV_STATE;
				e.tid = (uint32_t)rec.args[SP_HA_TID];
				e.obj = rec.args[SP_HA_OBJ];
				e.ns = clamp_ns(rec.args[SP_HA_RUNNING]);
				e.aux = clamp_ns(rec.args[SP_HA_PREEMPTED]);
				e.off = clamp_ns(rec.args[SP_HA_BLOCKED]);
				e.site = rec.args[SP_HA_IN] > UINT32_MAX ? SP_HA_IN_OTHER
									  : (uint32_t)rec.args[SP_HA_IN];
			} else {
				e.rec = EV_USER;
				e.off = rec.off;
			}
			break;
		case SP_REC_LOCK_NAME:
			/* where the lock was created: its site reads as a lock
			 * event's (site, func, line) */
			if ((rec.aux == SP_CREATED_INIT || rec.aux == SP_CREATED_USE) &&
			    (rec.args[SP_LA_SITE] || rec.args[SP_LA_LINE])) {
				uint32_t site = site_of(tl, &rec);

				if (site == SP_TL_NONE ||
				    map_set(&tl->priv->created, rec.args[SP_LA_OBJ], rec.aux, 0, site))
					return -ENOMEM;
			}
			continue;
		case SP_REC_DROPPED:
		case SP_REC_WRITE_LOSS:
			e.rec = rec.type == SP_REC_DROPPED ? EV_DROPPED : EV_WRITE_LOSS;
			e.ts = clamp_ts(sp_trace_reader_rel_ns(r, rec.ts));
			e.ts2 = clamp_ts(sp_trace_reader_rel_ns(r, rec.ts2));
			if (e.ts2 < e.ts)
				e.ts2 = e.ts;
			e.tid = rec.type == SP_REC_DROPPED ? rec.tid : 0;
			e.ns = rec.count;
			break;
		default:
			continue;
		}
		if (push_ev(tl, &e))
			return -ENOMEM;
	}
	return 0;
}

/* ---- counters ---------------------------------------------------------- */

static int thread_cmp(const void *a, const void *b)
{
	const struct sp_tl_thread *x = a, *y = b;

	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int delta_cmp(const void *a, const void *b)
{
	const struct delta *x = a, *y = b;

	if (x->lock != y->lock)
		return x->lock < y->lock ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_counts(struct sp_timeline *tl)
{
	struct sp_tl_private *p = tl->priv;
	int32_t v = 0;

	sort(p->deltas, p->n_deltas, sizeof(*p->deltas), delta_cmp);
	for (size_t i = 0; i < p->n_deltas; i++) {
		const struct delta *d = &p->deltas[i];

		if (!i || d->lock != p->deltas[i - 1].lock)
			v = 0;
		v += d->d;
		if (v < 0)
			v = 0; /* a wait whose start was dropped */
		if ((uint32_t)v > tl->locks[d->lock].max_waiters)
			tl->locks[d->lock].max_waiters = (uint32_t)v;
		if (tl->n_counts && tl->counts[tl->n_counts - 1].lock == d->lock &&
		    tl->counts[tl->n_counts - 1].ts == d->ts) {
			tl->counts[tl->n_counts - 1].waiters = v;
			continue;
		}
		if (sp_grow(&tl->counts, &tl->cap_counts, tl->n_counts, sizeof(*tl->counts)))
			return -ENOMEM;
		tl->counts[tl->n_counts++] = (struct sp_tl_count){ d->ts, d->lock, v };
	}
	return 0;
}

static int name_cmp(const void *a, const void *b)
{
	const struct sp_tl_lock *x = *(const struct sp_tl_lock *const *)a;
	const struct sp_tl_lock *y = *(const struct sp_tl_lock *const *)b;

	return strcmp(x->name, y->name);
}

/* Named locks that share their name with another get their address in
 * their track name too (Chrome's counters are keyed by name). */
static int mark_shared_names(struct sp_timeline *tl)
{
	struct sp_tl_lock **v = malloc((tl->n_locks ? tl->n_locks : 1) * sizeof(*v));
	size_t n = 0;

	if (!v)
		return -ENOMEM;
	for (size_t i = 0; i < tl->n_locks; i++)
		if (tl->locks[i].name)
			v[n++] = &tl->locks[i];
	qsort(v, n, sizeof(*v), name_cmp);
	for (size_t i = 1; i < n; i++)
		if (!strcmp(v[i - 1]->name, v[i]->name))
			v[i - 1]->name_shared = v[i]->name_shared = 1;
	free(v);
	return 0;
}

int sp_timeline_build(struct sp_timeline *tl, struct sp_trace_reader *r)
{
	struct sp_tl_private *p;
	int rc;

	memset(tl, 0, sizeof(*tl));
	tl->r = r;
	tl->pid = r->hdr.pid;
	tl->mono0_ns = r->hdr.mono0_ns;
	p = tl->priv = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	rc = first_pass(tl, r);
	if (!rc)
		rc = sp_tl_second_pass(tl);
	/* the events are in the slices now: their memory goes before the
	 * lanes and the exporters need theirs */
	free(p->evs);
	p->evs = NULL;
	p->n_evs = p->cap_evs = 0;
	if (!rc)
		rc = build_counts(tl);
	free(p->deltas);
	p->deltas = NULL;
	p->n_deltas = p->cap_deltas = 0;
	if (!rc)
		rc = sp_timeline_name_sites(tl);
	if (!rc) {
		/* threads by tid from here on: the map is not needed any more */
		sort(tl->threads, tl->n_threads, sizeof(*tl->threads), thread_cmp);
		for (size_t i = 0; i < tl->n_threads; i++) {
			const char *n = sp_trace_reader_thread(r, tl->threads[i].tid);

			tl->threads[i].name = n ? n : "";
		}
		for (size_t i = 0; i < tl->n_locks; i++) {
			struct sp_trace_rec nr;

			if (!sp_trace_reader_lock_name(r, tl->locks[i].obj, &nr))
				tl->locks[i].name = nr.str; /* into the file's bytes */
		}
		rc = mark_shared_names(tl);
		if (!rc)
			rc = sp_timeline_lanes(tl);
	}
	return rc;
}

void sp_timeline_free(struct sp_timeline *tl)
{
	struct sp_tl_private *p = tl->priv;

	if (p) {
		for (size_t i = 0; i < tl->n_threads && p->ts; i++) {
			free(p->ts[i].holds);
			free(p->ts[i].in);
		}
		for (size_t i = 0; i < p->n_strs; i++)
			free(p->strs[i]);
		free(p->strs);
		free(p->ts);
		free(p->ls);
		free(p->evs);
		free(p->deltas);
		map_free(&p->sites);
		map_free(&p->locks);
		map_free(&p->created);
		map_free(&p->threads);
		free(p);
	}
	for (size_t i = 0; i < tl->n_sites; i++)
		free(tl->sites[i].name);
	free(tl->sites);
	free(tl->slices);
	free(tl->flows);
	free(tl->locks);
	free(tl->threads);
	free(tl->counts);
	sp_symbolize_files_end();
	memset(tl, 0, sizeof(*tl));
}

const char *sp_timeline_slice_category(const struct sp_tl_slice *s)
{
	switch (s->kind) {
	case SP_TL_WAIT:
	case SP_TL_COND_WAIT:
		return "wait";
	case SP_TL_HOLD:
	case SP_TL_RELEASE:
	case SP_TL_ACQUIRE:
	case SP_TL_WAKE:
	case SP_TL_STATE:
		return "hold";
	case SP_TL_EVENT:
		return "event";
	case SP_TL_DROPPED:
	case SP_TL_WRITE_LOSS:
		return "syncprof";
	default:
		return "lock";
	}
}
