/*
 * trace_pairing.c - the timeline's second pass (trace_timeline.c has the
 * design): the compact events, sorted by time, paired into wait and hold
 * slices on their threads, flows from a release to the waiter it let
 * through, instants, the cuts of lost events, and each lock's number of
 * waiters over time.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "base/types.h"
#include "analyse/trace_timeline_model.h"
#include "report/profile.h"

/* ---- second pass: pairing --------------------------------------------- */

/*
 * Room for element @n of a track array of the timeline (*@v, capacity
 * *@cap, elements of @size) and of its pass-private state (*@st,
 * elements of @st_size), which grows with it: both zeroed there.  0, or
 * -ENOMEM.
 */
static int grow_track(void *v, size_t *cap, size_t n, size_t size, void *st, size_t st_size)
{
	size_t old = *cap;
	unsigned char **pv = v, **pst = st;

	if (sp_grow(v, cap, n, size))
		return -ENOMEM;
	if (old != *cap) {
		unsigned char *grown = realloc(*pst, *cap * st_size);

		if (!grown)
			return -ENOMEM;
		*pst = grown;
	}
	memset(*pv + n * size, 0, size);
	memset(*pst + n * st_size, 0, st_size);
	return 0;
}

static uint32_t thread_index(struct sp_timeline *tl, uint32_t tid)
{
	struct sp_tl_private *p = tl->priv;
	uint32_t i = map_get(&p->threads, tid, 0, 0);

	if (i != SP_TL_NONE)
		return i;
	if (grow_track(&tl->threads, &tl->cap_threads, tl->n_threads, sizeof(*tl->threads), &p->ts,
		       sizeof(*p->ts)))
		return SP_TL_NONE;
	i = (uint32_t)tl->n_threads;
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

	if (i != SP_TL_NONE)
		return i;
	if (grow_track(&tl->locks, &tl->cap_locks, tl->n_locks, sizeof(*tl->locks), &p->ls,
		       sizeof(*p->ls)))
		return SP_TL_NONE;
	i = (uint32_t)tl->n_locks;
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

/* A wait of @t's thread begins (a lock's, or a condition's), by @e. */
static void wait_begin(struct tstate *t, const struct ev *e)
{
	t->waiting = 1;
	t->wait_obj = e->obj;
	t->wait_start = e->ts;
	t->wait_site = e->site;
	t->wait_begun = 1;
}

/* Thread @ti waits for or takes @obj again while a hold of it is open:
 * that hold ended before, when is not traced. */
static int retaken(struct sp_timeline *tl, uint32_t ti, uint64_t obj)
{
	struct tstate *t = &tl->priv->ts[ti];
	long h = find_hold(t, obj);
	struct held old;

	if (h < 0)
		return 0;
	old = t->holds[h];
	drop_hold(t, h);
	return hold_unknown_end(tl, ti, &old);
}

/* A condition wait ends (@e, on lock @lk): its slice, then its mutex
 * (e->aux, 0 when none is known) held again from there. */
static int cond_woken(struct sp_timeline *tl, uint32_t ti, const struct ev *e, uint32_t lk)
{
	struct tstate *t = &tl->priv->ts[ti];
	uint32_t tid = tl->threads[ti].tid, mk;
	int64_t start = e->ts - (int64_t)e->ns;
	unsigned flags = SP_TL_FROM_NS;

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
	    type != SP_TYPE_REC_MUTEX && retaken(tl, ti, e->obj))
		return -ENOMEM;
	switch (e->id) {
	case SP_EV_LOCK_WAIT:
		wait_begin(t, e);
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
		wait_begin(t, e);
		return 0;
	case SP_EV_COND_WOKEN:
		return cond_woken(tl, ti, e, lk);
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

int sp_tl_second_pass(struct sp_timeline *tl)
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
