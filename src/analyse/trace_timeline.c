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
 * Slices of one track must nest to draw as a stack; those that do not are
 * dealt into lanes (trace_timeline_draw.c), which also names sites,
 * slices and locks.
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
#include "report/profile.h"


/* ---- a u64 triple -> u32 map: base/containers.h's, keyed by a hash ------ */

struct map_entry {
	uint64_t a, b, c;
	uint32_t v;
};

struct map {
	struct sp_u64map by_hash; /* hash of (a, b, c) -> index in e */
	struct map_entry *e;
	size_t n, cap;
};

struct map_key {
	const struct map *m;
	uint64_t a, b, c;
};

static uint64_t mix(uint64_t a, uint64_t b, uint64_t c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (b + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull ^
		     (c + 1) * 0x94d049bb133111ebull;

	return h ^ (h >> 31);
}

static int map_eq(const void *ctx, uint64_t i)
{
	const struct map_key *k = ctx;
	const struct map_entry *e = &k->m->e[i];

	return e->a == k->a && e->b == k->b && e->c == k->c;
}

/* The entry of (a, b, c), or NULL. */
static struct map_entry *map_find(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	struct map_key k = { m, a, b, c };
	uint64_t i;

	return sp_u64map_find(&m->by_hash, mix(a, b, c), map_eq, &k, &i) ? &m->e[i] : NULL;
}

static uint32_t map_get(const struct map *m, uint64_t a, uint64_t b, uint64_t c)
{
	const struct map_entry *e = map_find(m, a, b, c);

	return e ? e->v : SP_TL_NONE;
}

/* Add (a, b, c) -> @v; the caller knows it is not there. */
static int map_put(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	if (sp_grow(&m->e, &m->cap, m->n, sizeof(*m->e)) ||
	    sp_u64map_add(&m->by_hash, mix(a, b, c), m->n))
		return -ENOMEM;
	m->e[m->n++] = (struct map_entry){ a, b, c, v };
	return 0;
}

/* Set (a, b, c) to @v, whether or not it was there. */
static int map_set(struct map *m, uint64_t a, uint64_t b, uint64_t c, uint32_t v)
{
	struct map_entry *e = map_find(m, a, b, c);

	if (!e)
		return map_put(m, a, b, c, v);
	e->v = v;
	return 0;
}

static void map_free(struct map *m)
{
	sp_u64map_free(&m->by_hash);
	free(m->e);
}


/* qsort() and bsearch() want a non-NULL array even when it is empty. */
static void sort(void *v, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(v, n, size, cmp);
}

/* ---- first pass: compact events --------------------------------------- */

enum { EV_LOCK, EV_USER, EV_DROPPED, EV_WRITE_LOSS, EV_STATE };

struct ev {
	int64_t ts, ts2;
	uint64_t obj, aux, ns; /* aux: type, or the mutex (cond events); ns: count;
				* EV_STATE: ns running, aux preempted */
	uint64_t seq;          /* file order */
	uint64_t off;          /* EV_USER: the record's file offset; EV_STATE: blocked */
	uint32_t tid, site;
	uint16_t id;
	uint8_t rec, has_ns;
};

struct held {
	uint64_t obj;
	int64_t start;
	uint32_t site, lock;
	uint8_t type;
};

struct pending_in {
	uint64_t obj;
	int64_t ts;
	uint32_t flow;
};

struct tstate {
	int waiting;
	uint64_t wait_obj;
	int64_t wait_start;
	uint32_t wait_site;
	int wait_begun; /* from a lock_wait / cond_wait event */
	struct held *holds;
	size_t n_holds, cap_holds;
	struct pending_in *in;
	size_t n_in, cap_in;
};

struct lstate {
	int released;
	int64_t rel_ts;
	uint32_t rel_tid, rel_slice, rel_site;
};

struct delta {
	int64_t ts;
	uint64_t seq;
	uint32_t lock;
	int32_t d;
};

struct sp_tl_private {
	struct map sites, locks, threads;
	struct map created; /* (obj, enum sp_lock_created) -> site: the latest LOCK_NAME's */
	struct ev *evs;
	size_t n_evs, cap_evs;
	struct tstate *ts;  /* parallel to tl->threads (in creation order) */
	struct lstate *ls;  /* parallel to tl->locks */
	struct delta *deltas;
	size_t n_deltas, cap_deltas;
	uint64_t seq;
	char **strs;        /* strings the sites point to */
	size_t n_strs, cap_strs;
};

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

/*
 * Times are kept within +-2^60 ns (36 years) and waits and holds below
 * 2^60 ns, so that no start, end or difference overflows whatever a
 * corrupt file says; a real trace is far inside.
 */
#define TS_LIMIT (INT64_C(1) << 60)

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

/* ---- second pass: pairing --------------------------------------------- */

static uint32_t thread_index(struct sp_timeline *tl, uint32_t tid)
{
	struct sp_tl_private *p = tl->priv;
	uint32_t i = map_get(&p->threads, tid, 0, 0);
	size_t cap;

	if (i != SP_TL_NONE)
		return i;
	cap = tl->cap_threads;
	if (sp_grow(&tl->threads, &tl->cap_threads, tl->n_threads, sizeof(*tl->threads)))
		return SP_TL_NONE;
	if (cap != tl->cap_threads) {
		struct tstate *v = realloc(p->ts, tl->cap_threads * sizeof(*v));

		if (!v)
			return SP_TL_NONE;
		p->ts = v;
	}
	i = (uint32_t)tl->n_threads;
	memset(&tl->threads[i], 0, sizeof(tl->threads[i]));
	memset(&p->ts[i], 0, sizeof(p->ts[i]));
	tl->threads[i].tid = tid;
	tl->threads[i].lanes = 1;
	if (map_put(&p->threads, tid, 0, 0, i))
		return SP_TL_NONE;
	tl->n_threads++;
	return i;
}

static uint32_t lock_index(struct sp_timeline *tl, uint64_t obj, int type)
{
	struct sp_tl_private *p = tl->priv;
	uint32_t i = map_get(&p->locks, obj, 0, 0);
	size_t cap;

	if (i != SP_TL_NONE)
		return i;
	cap = tl->cap_locks;
	if (sp_grow(&tl->locks, &tl->cap_locks, tl->n_locks, sizeof(*tl->locks)))
		return SP_TL_NONE;
	if (cap != tl->cap_locks) {
		struct lstate *v = realloc(p->ls, tl->cap_locks * sizeof(*v));

		if (!v)
			return SP_TL_NONE;
		p->ls = v;
	}
	i = (uint32_t)tl->n_locks;
	memset(&tl->locks[i], 0, sizeof(tl->locks[i]));
	memset(&p->ls[i], 0, sizeof(p->ls[i]));
	tl->locks[i].obj = obj;
	tl->locks[i].type = (uint8_t)type;
	tl->locks[i].first_site = SP_TL_NONE;
	tl->locks[i].created_site = map_get(&p->created, obj, SP_CREATED_INIT, 0);
	tl->locks[i].used_site = map_get(&p->created, obj, SP_CREATED_USE, 0);
	tl->locks[i].lanes = 1;
	if (map_put(&p->locks, obj, 0, 0, i))
		return SP_TL_NONE;
	tl->n_locks++;
	return i;
}

static uint32_t add_slice(struct sp_timeline *tl, unsigned kind, uint32_t tid, int64_t start,
			  int64_t end, uint32_t lock, uint32_t site, uint64_t value, unsigned flags)
{
	struct sp_tl_slice *s;

	if (sp_grow(&tl->slices, &tl->cap_slices, tl->n_slices, sizeof(*tl->slices)))
		return SP_TL_NONE;
	s = &tl->slices[tl->n_slices];
	memset(s, 0, sizeof(*s));
	s->kind = (uint8_t)kind;
	s->tid = tid;
	s->start = start < end ? start : end;
	s->end = end;
	s->lock = lock;
	s->site = site;
	s->value = value;
	s->flags = (uint8_t)flags;
	s->flow_in = s->flow_out = SP_TL_NONE;
	s->lock_type = lock != SP_TL_NONE ? tl->locks[lock].type : 0;
	return (uint32_t)tl->n_slices++;
}

static int add_delta(struct sp_timeline *tl, uint32_t lock, int64_t ts, int32_t d)
{
	struct sp_tl_private *p = tl->priv;

	if (tl->locks[lock].type == SP_TYPE_JOIN)
		return 0; /* one waiter at most: no counter */
	if (sp_grow(&p->deltas, &p->cap_deltas, p->n_deltas, sizeof(*p->deltas)))
		return -ENOMEM;
	p->deltas[p->n_deltas++] = (struct delta){ ts, p->n_deltas, lock, d };
	return 0;
}

static void link_in(struct sp_timeline *tl, uint32_t flow, uint32_t dst)
{
	tl->flows[flow].dst = dst;
	tl->flows[flow].next_in = tl->slices[dst].flow_in;
	tl->slices[dst].flow_in = flow;
}

/* Close the hold @h of thread @ti at @end: a slice, with the flows that
 * ended at its acquisition.  Returns the slice, or SP_TL_NONE. */
static uint32_t hold_slice(struct sp_timeline *tl, uint32_t ti, const struct held *h,
			   int64_t start, int64_t end, uint64_t hold_ns, unsigned flags)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t s = add_slice(tl, SP_TL_HOLD, tl->threads[ti].tid, start, end, h->lock, h->site,
			       hold_ns, flags);

	if (s == SP_TL_NONE)
		return s;
	tl->locks[h->lock].holds++;
	tl->slices[s].lock_type = h->type;
	for (size_t k = 0; k < t->n_in;) {
		if (t->in[k].obj == h->obj) {
			link_in(tl, t->in[k].flow, s);
			t->in[k] = t->in[--t->n_in];
		} else {
			k++;
		}
	}
	return s;
}

/* A hold whose end is not in the trace (contended-only tracing): no
 * slice; the flows that ended at its acquisition end at an instant. */
static int hold_unknown_end(struct sp_timeline *tl, uint32_t ti, const struct held *h)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t s = SP_TL_NONE;

	for (size_t k = 0; k < t->n_in;) {
		if (t->in[k].obj != h->obj) {
			k++;
			continue;
		}
		if (s == SP_TL_NONE) {
			s = add_slice(tl, SP_TL_ACQUIRE, tl->threads[ti].tid, h->start, h->start,
				      h->lock, h->site, 0, 0);
			if (s == SP_TL_NONE)
				return -ENOMEM;
		}
		link_in(tl, t->in[k].flow, s);
		t->in[k] = t->in[--t->n_in];
	}
	return 0;
}

/* A thread in a wait emits nothing else: an event of @ti that does not end
 * its wait means the wait's end is not in the trace.  No slice for it, and
 * the waiter it counted is taken back at its start. */
static int abandon_wait(struct sp_timeline *tl, uint32_t ti)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t lk = map_get(&tl->priv->locks, t->wait_obj, 0, 0);

	t->waiting = 0;
	if (lk == SP_TL_NONE || tl->locks[lk].type == SP_TYPE_CONDVAR)
		return 0;
	return add_delta(tl, lk, t->wait_start, -1);
}

/* The open hold of @obj by thread @ti (the latest), or -1. */
static long find_hold(const struct tstate *t, uint64_t obj)
{
	for (size_t i = t->n_holds; i-- > 0;)
		if (t->holds[i].obj == obj)
			return (long)i;
	return -1;
}

static void drop_hold(struct tstate *t, long i)
{
	memmove(&t->holds[i], &t->holds[i + 1], (t->n_holds - (size_t)i - 1) * sizeof(*t->holds));
	t->n_holds--;
}

/* @ti released @obj at @ts (lock_released, or a condition wait letting
 * its mutex go): the hold's slice, and the lock's last release. */
static int release(struct sp_timeline *tl, uint32_t ti, uint64_t obj, int type, uint32_t site,
		   int64_t ts, int has_ns, uint64_t hold_ns)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t lk = lock_index(tl, obj, type), s = SP_TL_NONE;
	long i;

	if (lk == SP_TL_NONE)
		return -ENOMEM;
	i = find_hold(t, obj);
	if (i >= 0 && has_ns && !tl->full_stream &&
	    ts - (int64_t)hold_ns - t->holds[i].start > (int64_t)(hold_ns / 8) + 10000) {
		/* The hold began well after the acquisition we have (by more
		 * than clock skew between the two readings: 10 us and 1/8 of
		 * the hold): that one's release is not in the file
		 * (contended-only: nobody waited for it), and this release's
		 * acquisition is not either.  Not in a full stream, where every
		 * release is: there the gap is the releaser's own, between the
		 * clock reads of its hold and of its events (a thread
		 * preempted between them: 10 us is no bound on a loaded
		 * machine), and the hold is the acquisition's - taking it for
		 * another cut the hand-off's flow off its hold (trace_export
		 * under ThreadSanitizer, 1 run in 2 with both cores busy). */
		struct held old = t->holds[i];

		drop_hold(t, i);
		if (hold_unknown_end(tl, ti, &old))
			return -ENOMEM;
		i = -1;
	}
	if (i >= 0) {
		struct held h = t->holds[i];

		drop_hold(t, i);
		s = hold_slice(tl, ti, &h, h.start, ts, has_ns ? hold_ns : (uint64_t)(ts - h.start),
			       0);
		if (s == SP_TL_NONE)
			return -ENOMEM;
	} else if (has_ns) {
		struct held h = { obj, ts - (int64_t)hold_ns, site, lk, (uint8_t)type };

		s = hold_slice(tl, ti, &h, h.start, ts, hold_ns, SP_TL_FROM_NS);
		if (s == SP_TL_NONE)
			return -ENOMEM;
	}
	tl->priv->ls[lk] = (struct lstate){ 1, ts, tl->threads[ti].tid, s, site };
	return 0;
}

static int open_hold(struct sp_timeline *tl, uint32_t ti, uint64_t obj, uint32_t lk, int type,
		     uint32_t site, int64_t ts)
{
	struct tstate *t = &tl->priv->ts[ti];

	if (sp_grow(&t->holds, &t->cap_holds, t->n_holds, sizeof(*t->holds)))
		return -ENOMEM;
	t->holds[t->n_holds++] = (struct held){ obj, ts, site, lk, (uint8_t)type };
	return 0;
}

/* A wait of thread @ti for lock @lk ended at @ts: its slice, the waiter
 * count, and the flow from the release that let it through. */
static int wait_end(struct sp_timeline *tl, uint32_t ti, const struct ev *e, uint32_t lk,
		    int type)
{
	struct sp_tl_private *p = tl->priv;
	struct tstate *t = &p->ts[ti];
	struct lstate *l = &p->ls[lk];
	uint32_t tid = tl->threads[ti].tid, flow, wait;
	int64_t start;
	unsigned flags = 0;

	if (t->waiting && t->wait_obj == e->obj && t->wait_start <= e->ts) {
		start = t->wait_start;
	} else {
		start = e->ts - (int64_t)e->ns;
		flags = SP_TL_FROM_NS;
		if (add_delta(tl, lk, start, 1))
			return -ENOMEM;
	}
	t->waiting = 0;
	if (add_delta(tl, lk, e->ts, -1))
		return -ENOMEM;
	wait = add_slice(tl, SP_TL_WAIT, tid, start, e->ts, lk, e->site, e->ns, flags);
	if (wait == SP_TL_NONE)
		return -ENOMEM;
	tl->locks[lk].waits++;
	if (!l->released || l->rel_tid == tid || l->rel_ts < start || l->rel_ts > e->ts)
		return 0;
	if (l->rel_slice == SP_TL_NONE) {
		l->rel_slice = add_slice(tl, SP_TL_RELEASE, l->rel_tid, l->rel_ts, l->rel_ts, lk,
					 l->rel_site, 0, 0);
		if (l->rel_slice == SP_TL_NONE)
			return -ENOMEM;
	}
	if (sp_grow(&tl->flows, &tl->cap_flows, tl->n_flows, sizeof(*tl->flows)))
		return -ENOMEM;
	flow = (uint32_t)tl->n_flows++;
	tl->flows[flow] = (struct sp_tl_flow){ l->rel_slice, SP_TL_NONE,
					       tl->slices[l->rel_slice].flow_out, SP_TL_NONE, wait };
	tl->slices[l->rel_slice].flow_out = flow;
	if (type < SP_TYPE_SEMAPHORE) {
		if (sp_grow(&t->in, &t->cap_in, t->n_in, sizeof(*t->in)))
			return -ENOMEM;
		t->in[t->n_in++] = (struct pending_in){ e->obj, e->ts, flow };
	} else {
		uint32_t s = add_slice(tl, SP_TL_ACQUIRE, tid, e->ts, e->ts, lk, e->site, 0, 0);

		if (s == SP_TL_NONE)
			return -ENOMEM;
		link_in(tl, flow, s);
	}
	return 0;
}

/* Lock @lk was acquired (or waited for, or tried) at @site: the first
 * such site names the lock when nothing better does (a release's site
 * never: the releases of a lock are often all at one unlock line, and
 * a contended-only trace has a lock's first release before its first
 * traced acquisition). */
static void first_taken(struct sp_timeline *tl, uint32_t lk, uint32_t site, uint32_t tid)
{
	if (tl->locks[lk].first_site == SP_TL_NONE) {
		tl->locks[lk].first_site = site;
		tl->locks[lk].first_tid = tid;
	}
}

static int lock_event(struct sp_timeline *tl, uint32_t ti, const struct ev *e)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t tid = tl->threads[ti].tid, lk;
	int type = (int)(e->aux & 0xff);

	if (e->id == SP_EV_COND_WAIT || e->id == SP_EV_COND_WOKEN)
		type = SP_TYPE_CONDVAR;
	lk = lock_index(tl, e->obj, type);
	if (lk == SP_TL_NONE)
		return -ENOMEM;
	if (e->id != SP_EV_LOCK_RELEASED && e->id != SP_EV_FUTEX_WAKE)
		first_taken(tl, lk, e->site, tid);
	if (t->waiting && !(t->wait_obj == e->obj && (e->id == SP_EV_LOCK_ACQUIRED ||
						       e->id == SP_EV_COND_WOKEN)) &&
	    abandon_wait(tl, ti))
		return -ENOMEM;
	if (!tl->full_stream && (e->id == SP_EV_LOCK_WAIT || e->id == SP_EV_LOCK_ACQUIRED) &&
	    type != SP_TYPE_REC_MUTEX) {
		/* taken again: its last hold ended before, when is not traced */
		long h = find_hold(t, e->obj);

		if (h >= 0) {
			struct held old = t->holds[h];

			drop_hold(t, h);
			if (hold_unknown_end(tl, ti, &old))
				return -ENOMEM;
		}
	}
	switch (e->id) {
	case SP_EV_LOCK_WAIT:
		t->waiting = 1;
		t->wait_obj = e->obj;
		t->wait_start = e->ts;
		t->wait_site = e->site;
		t->wait_begun = 1;
		return add_delta(tl, lk, e->ts, 1);
	case SP_EV_LOCK_ACQUIRED:
		if (e->ns || (t->waiting && t->wait_obj == e->obj)) {
			if (wait_end(tl, ti, e, lk, type))
				return -ENOMEM;
		}
		if (type < SP_TYPE_SEMAPHORE)
			return open_hold(tl, ti, e->obj, lk, type, e->site, e->ts);
		return 0;
	case SP_EV_LOCK_RELEASED:
		return release(tl, ti, e->obj, type, e->site, e->ts, e->has_ns, e->ns);
	case SP_EV_FUTEX_WAKE: {
		uint32_t s = add_slice(tl, SP_TL_WAKE, tid, e->ts, e->ts, lk, e->site, e->ns, 0);

		if (s == SP_TL_NONE)
			return -ENOMEM;
		tl->priv->ls[lk] = (struct lstate){ 1, e->ts, tid, s, e->site };
		return 0;
	}
	case SP_EV_LOCK_TRY_FAILED:
		return add_slice(tl, SP_TL_TRY_FAILED, tid, e->ts, e->ts, lk, e->site, 0, 0) ==
			       SP_TL_NONE
			       ? -ENOMEM
			       : 0;
	case SP_EV_COND_WAIT:
		if (e->aux && release(tl, ti, e->aux, SP_TYPE_MUTEX, e->site, e->ts, 0, 0))
			return -ENOMEM;
		t->waiting = 1;
		t->wait_obj = e->obj;
		t->wait_start = e->ts;
		t->wait_site = e->site;
		t->wait_begun = 1;
		return 0;
	case SP_EV_COND_WOKEN: {
		int64_t start = e->ts - (int64_t)e->ns;
		unsigned flags = SP_TL_FROM_NS;
		uint32_t mk;

		if (t->waiting && t->wait_obj == e->obj && t->wait_start <= e->ts) {
			start = t->wait_start;
			flags = 0;
		}
		t->waiting = 0;
		if (add_slice(tl, SP_TL_COND_WAIT, tid, start, e->ts, lk, e->site, e->ns, flags) ==
		    SP_TL_NONE)
			return -ENOMEM;
		tl->locks[lk].waits++;
		if (!e->aux)
			return 0;
		mk = lock_index(tl, e->aux, SP_TYPE_MUTEX);
		if (mk == SP_TL_NONE)
			return -ENOMEM;
		first_taken(tl, mk, e->site, tid); /* the wait retook its mutex there */
		return open_hold(tl, ti, e->aux, mk, tl->locks[mk].type, e->site, e->ts);
	}
	}
	return 0;
}

/*
 * A hold_state interval (record/holdstate.c): its running, preempted and
 * blocked parts as consecutive slices ending at the event, on the holder's
 * thread - the kernel gives their sums, not their order.  Its lock is the
 * holder's oldest long hold's, when the trace knows that lock.
 */
static int state_slices(struct sp_timeline *tl, const struct ev *e)
{
	const uint64_t part[3] = { e->ns, e->aux, e->off };
	uint64_t total = e->ns + e->aux + e->off;
	uint32_t lk = map_get(&tl->priv->locks, e->obj, 0, 0);
	int64_t t = e->ts - (int64_t)(total < (uint64_t)TS_LIMIT ? total : (uint64_t)TS_LIMIT);

	for (unsigned k = 0; k < 3; k++) {
		if (!part[k])
			continue;
		if (add_slice(tl, SP_TL_STATE, e->tid, t, t + (int64_t)part[k], lk, SP_TL_NONE,
			      SP_TL_STATE_VALUE(k, k == 2 ? e->site : 0), 0) == SP_TL_NONE)
			return -ENOMEM;
		t += (int64_t)part[k];
	}
	return 0;
}

/* Thread @ti lost its events from @ts on: what was open ends there. */
static int cut_thread(struct sp_timeline *tl, uint32_t ti, int64_t ts, unsigned flag)
{
	struct tstate *t = &tl->priv->ts[ti];

	while (t->n_holds) {
		struct held h = t->holds[t->n_holds - 1];

		t->n_holds--;
		if (!tl->full_stream) {
			if (hold_unknown_end(tl, ti, &h))
				return -ENOMEM;
			continue;
		}
		if (hold_slice(tl, ti, &h, h.start, ts > h.start ? ts : h.start,
			       (uint64_t)(ts > h.start ? ts - h.start : 0), flag) == SP_TL_NONE)
			return -ENOMEM;
	}
	if (t->waiting) {
		uint32_t lk = map_get(&tl->priv->locks, t->wait_obj, 0, 0);

		t->waiting = 0;
		if (lk != SP_TL_NONE &&
		    add_slice(tl, tl->locks[lk].type == SP_TYPE_CONDVAR ? SP_TL_COND_WAIT : SP_TL_WAIT,
			      tl->threads[ti].tid, t->wait_start, ts > t->wait_start ? ts : t->wait_start,
			      lk, t->wait_site, 0, flag) == SP_TL_NONE)
			return -ENOMEM;
		if (lk != SP_TL_NONE && flag == SP_TL_CUT_DROP &&
		    tl->locks[lk].type != SP_TYPE_CONDVAR && add_delta(tl, lk, ts, -1))
			return -ENOMEM;
	}
	/* Flows whose waiter's hold never closed end at the acquisition. */
	while (t->n_in) {
		struct pending_in in = t->in[--t->n_in];
		uint32_t lk = map_get(&tl->priv->locks, in.obj, 0, 0);
		uint32_t s = add_slice(tl, SP_TL_ACQUIRE, tl->threads[ti].tid, in.ts, in.ts, lk,
				       SP_TL_NONE, 0, 0);

		if (s == SP_TL_NONE)
			return -ENOMEM;
		link_in(tl, in.flow, s);
	}
	return 0;
}

static int ev_cmp(const void *a, const void *b)
{
	const struct ev *x = a, *y = b;

	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	/* a drop's span starts after the events before it */
	if ((x->rec == EV_DROPPED) != (y->rec == EV_DROPPED))
		return x->rec == EV_DROPPED ? 1 : -1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int second_pass(struct sp_timeline *tl)
{
	struct sp_tl_private *p = tl->priv;

	sort(p->evs, p->n_evs, sizeof(*p->evs), ev_cmp);
	for (size_t i = 0; i < p->n_evs; i++) {
		const struct ev *e = &p->evs[i];
		uint32_t ti = SP_TL_NONE;

		if (e->tid) {
			ti = thread_index(tl, e->tid);
			if (ti == SP_TL_NONE)
				return -ENOMEM;
		}
		switch (e->rec) {
		case EV_LOCK:
			if (ti == SP_TL_NONE)
				continue;
			if (lock_event(tl, ti, e))
				return -ENOMEM;
			break;
		case EV_USER:
			if (add_slice(tl, SP_TL_EVENT, e->tid, e->ts, e->ts, SP_TL_NONE, SP_TL_NONE,
				      e->off, 0) == SP_TL_NONE)
				return -ENOMEM;
			break;
		case EV_STATE:
			if (ti != SP_TL_NONE && state_slices(tl, e))
				return -ENOMEM;
			break;
		case EV_DROPPED:
			if (ti != SP_TL_NONE) {
				tl->threads[ti].dropped = 1;
				if (cut_thread(tl, ti, e->ts, SP_TL_CUT_DROP))
					return -ENOMEM;
			}
			if (add_slice(tl, SP_TL_DROPPED, e->tid, e->ts, e->ts2, SP_TL_NONE,
				      SP_TL_NONE, e->ns, 0) == SP_TL_NONE)
				return -ENOMEM;
			break;
		case EV_WRITE_LOSS:
			/* every thread's events from here on are lost */
			for (size_t k = 0; k < tl->n_threads; k++)
				if (cut_thread(tl, (uint32_t)k, e->ts, SP_TL_CUT_DROP))
					return -ENOMEM;
			if (add_slice(tl, SP_TL_WRITE_LOSS, 0, e->ts, e->ts2, SP_TL_NONE, SP_TL_NONE,
				      e->ns, 0) == SP_TL_NONE)
				return -ENOMEM;
			break;
		}
	}
	for (size_t ti = 0; ti < tl->n_threads; ti++)
		if (cut_thread(tl, (uint32_t)ti, tl->end_ns, SP_TL_OPEN_END))
			return -ENOMEM;
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
		rc = second_pass(tl);
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
