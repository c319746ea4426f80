/*
 * trace_model.c - a trace file read back as per-thread timelines of lock
 * steps, per-lock hand-off orders, and wait and hold intervals: the input
 * of 'syncprof trace what-if' (whatif.c) and 'syncprof trace chains'
 * (chains.c).
 *
 * Design: one pass over the records with the reader (trace_reader.c).
 * Each thread's events are in time order in the file, so each thread's
 * steps are appended in order; a thread's open holds are a short array
 * (threads hold few locks at once).  Locks, sites and threads are found
 * through one small open-addressing index (u64 -> u32).  After the pass,
 * every lock's acquisitions are sorted by grant time: that is the lock's
 * measured hand-off order.  Waits come from ACQUIRED events with a wait
 * (from the WAIT event's time when there was one, else the acquisition
 * time less wait_ns); holds from an acquisition and its release, or, for a
 * release whose acquisition is not in the trace (a contended-only trace),
 * from the hold_ns the release carries.
 *
 * The model notes what a contended-only trace lacks instead of guessing:
 * a release whose acquisition is missing (other than the thread's first
 * event on that lock: a trace switched on mid-run starts inside holds),
 * and a non-recursive lock acquired twice without a release between.
 * what-if refuses such a trace; chains needs only the contended part.
 *
 * Costs: memory is about 40 bytes per lock event (one step, or one span)
 * plus the file, which the CLI reads whole; time is one pass and a sort
 * per lock.  Alternatives considered: replaying straight from the
 * reader's records (sp_trace_reader_read_at) keeps no copy but decodes
 * each record again for every replay, and what-if replays twice.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/containers.h"
#include "base/types.h"
#include "analyse/trace_model.h"

#define EMPTY UINT32_MAX

/* Find or add: the value, or EMPTY when out of memory; *@added set when
 * @next_val was stored. */
uint32_t sp_tm_index_get(struct sp_u64map *ix, uint64_t key,
			 int (*eq)(const void *ctx, uint64_t val), const void *ctx,
			 uint32_t next_val, int *added)
{
	uint64_t v;

	*added = 0;
	if (sp_u64map_find(ix, key, eq, ctx, &v))
		return (uint32_t)v;
	if (sp_u64map_add(ix, key, next_val))
		return EMPTY;
	*added = 1;
	return next_val;
}


int sp_tm_type_held(int type)
{
	return type != SP_TYPE_CONDVAR && type < SP_TYPE_SEMAPHORE;
}

/* ---- finding things --------------------------------------------------- */

struct site_key {
	const struct sp_trace_model *m;
	uint64_t site, func, line;
};

static int site_eq(const void *ctx, uint64_t val)
{
	const struct site_key *k = ctx;
	const struct sp_tm_site *s = &k->m->sites[val];

	return s->site == k->site && s->func == k->func && s->line == k->line;
}

static uint32_t site_get(struct sp_trace_model *m, const struct sp_trace_rec *rec)
{
	struct site_key k = { m, rec->args[SP_LA_SITE], rec->args[SP_LA_FUNC],
			      rec->args[SP_LA_LINE] };
	uint64_t key = k.site ^ (k.line * 0x9e3779b97f4a7c15ULL) ^ (k.func << 1);
	uint32_t v;
	int added;

	if (sp_grow(&m->sites, &m->cap_sites, m->n_sites, sizeof(*m->sites)))
		return EMPTY;
	v = sp_tm_index_get(&m->site_index, key, site_eq, &k, (uint32_t)m->n_sites, &added);
	if (v != EMPTY && added) {
		memset(&m->sites[v], 0, sizeof(m->sites[v]));
		m->sites[v].site = k.site;
		m->sites[v].func = k.func;
		m->sites[v].line = k.line;
		m->n_sites++;
	}
	return v;
}

static uint32_t lock_get(struct sp_trace_model *m, uint64_t obj, int type, uint32_t site)
{
	uint32_t v;
	int added;

	if (sp_grow(&m->locks, &m->cap_locks, m->n_locks, sizeof(*m->locks)))
		return EMPTY;
	v = sp_tm_index_get(&m->lock_index, obj, NULL, NULL, (uint32_t)m->n_locks, &added);
	if (v != EMPTY && added) {
		memset(&m->locks[v], 0, sizeof(m->locks[v]));
		m->locks[v].obj = obj;
		m->locks[v].type = type;
		m->locks[v].site = site;
		m->n_locks++;
	}
	return v;
}

static struct sp_tm_thread *thread_get(struct sp_trace_model *m, const struct sp_trace_reader *r,
				       uint32_t tid, int64_t t)
{
	struct sp_tm_thread *th;
	uint32_t v;
	int added;

	if (sp_grow(&m->threads, &m->cap_threads, m->n_threads, sizeof(*m->threads)))
		return NULL;
	v = sp_tm_index_get(&m->thread_index, tid, NULL, NULL, (uint32_t)m->n_threads, &added);
	if (v == EMPTY)
		return NULL;
	th = &m->threads[v];
	if (added) {
		memset(th, 0, sizeof(*th));
		th->tid = tid;
		th->first_ns = t;
		m->n_threads++;
	}
	(void)r;
	th->last_ns = t;
	return th;
}

/* Has thread @th (index @ti) met lock @lock before?  Marks it met. */
static int met_before(struct sp_trace_model *m, struct sp_u64map *met, uint32_t ti,
		      uint32_t lock)
{
	int added;

	if (sp_tm_index_get(met, ((uint64_t)ti << 32) | lock, NULL, NULL, 0, &added) == EMPTY)
		return -ENOMEM;
	(void)m;
	return !added;
}

static struct sp_tm_open *open_find(struct sp_tm_thread *th, uint32_t lock)
{
	for (size_t i = th->n_open; i-- > 0;)
		if (th->open[i].lock == lock)
			return &th->open[i];
	return NULL;
}

static int step_add(struct sp_tm_thread *th, const struct sp_tm_step *s)
{
	if (sp_grow(&th->steps, &th->cap_steps, th->n_steps, sizeof(*th->steps)))
		return -ENOMEM;
	th->steps[th->n_steps++] = *s;
	return 0;
}

static int span_add(struct sp_tm_span **v, size_t *n, size_t *cap, int64_t start, int64_t end,
		    uint32_t thread, uint32_t lock, uint32_t site)
{
	if (sp_grow(v, cap, *n, sizeof(**v)))
		return -ENOMEM;
	(*v)[(*n)++] = (struct sp_tm_span){ start, end, thread, lock, site };
	return 0;
}

/* ---- one event -------------------------------------------------------- */

struct build {
	struct sp_trace_model *m;
	struct sp_u64map met;
};

static int acquire(struct build *b, struct sp_tm_thread *th, uint32_t ti, uint32_t lock,
		   uint32_t site, int type, int64_t t, int64_t req, int waited)
{
	struct sp_trace_model *m = b->m;
	struct sp_tm_open *o = open_find(th, lock);
	struct sp_tm_step s = { 0 };
	int rc = met_before(m, &b->met, ti, lock);

	if (rc < 0)
		return rc;
	if (waited && span_add(&m->waits, &m->n_waits, &m->cap_waits, req, t, ti, lock, site))
		return -ENOMEM;
	if (o && (type == SP_TYPE_REC_MUTEX || type == SP_TYPE_RWLOCK_READ)) {
		o->depth++; /* a recursive (or read) re-acquisition: no hand-off */
		return 0;
	}
	if (o) {
		/* Taken again with no release between: the release is missing. */
		m->missing_releases++;
		o->step = (uint32_t)th->n_steps;
		o->depth = 1;
	}
	s.kind = SP_TM_ACQ;
	s.t = t;
	s.req = req;
	s.lock = lock;
	s.site = site;
	s.shared = type == SP_TYPE_RWLOCK_READ;
	s.waited = (uint8_t)waited;
	if (!o) {
		if (sp_grow(&th->open, &th->cap_open, th->n_open, sizeof(*th->open)))
			return -ENOMEM;
		th->open[th->n_open++] = (struct sp_tm_open){ lock, 1, (uint32_t)th->n_steps };
	}
	m->locks[lock].acquisitions++;
	return step_add(th, &s);
}

/* Release @lock at @t; @full: a condition wait lets go of every level. */
static int release(struct build *b, struct sp_tm_thread *th, uint32_t ti, uint32_t lock,
		   uint32_t site, int64_t t, int64_t hold_ns, int full)
{
	struct sp_trace_model *m = b->m;
	struct sp_tm_open *o = open_find(th, lock);
	struct sp_tm_step s = { 0 };
	int rc = met_before(m, &b->met, ti, lock);
	int64_t span_start = INT64_MIN;

	if (rc < 0)
		return rc;
	if (!o && !rc && !full) {
		/*
		 * The thread's first event on this lock releases it: the trace
		 * began inside the hold (switched on mid-run).  The hold is given
		 * an acquisition at the thread's previous step (no later than the
		 * real one, and after any other thread's hold in the trace, since
		 * nobody else held the lock meanwhile), so that the replay keeps
		 * the lock until this release.
		 */
		struct sp_tm_step a = { .kind = SP_TM_ACQ, .lock = lock, .site = site };

		a.t = a.req = th->n_steps ? th->steps[th->n_steps - 1].t : th->first_ns;
		if (hold_ns > 0 && t - hold_ns > a.t)
			a.t = a.req = t - hold_ns;
		span_start = hold_ns > 0 ? t - hold_ns : a.t;
		if (sp_grow(&th->open, &th->cap_open, th->n_open, sizeof(*th->open)))
			return -ENOMEM;
		th->open[th->n_open++] = (struct sp_tm_open){ lock, 1, (uint32_t)th->n_steps };
		m->locks[lock].acquisitions++;
		if (step_add(th, &a))
			return -ENOMEM;
		o = &th->open[th->n_open - 1];
	}
	if (!o) {
		if (rc)
			m->missing_acquires++;
		if (hold_ns > 0 &&
		    span_add(&m->holds, &m->n_holds, &m->cap_holds, t - hold_ns, t, ti, lock, site))
			return -ENOMEM;
		return 0;
	}
	if (--o->depth && !full)
		return 0;
	s.kind = SP_TM_REL;
	s.t = t;
	s.lock = lock;
	s.pair = o->step;
	if (span_start == INT64_MIN)
		span_start = th->steps[o->step].t;
	/* The release's own hold, when it carries one, says when this hold
	 * began: in a contended-only trace the open acquisition may be an
	 * older one, whose release was not written (nobody waited for it). */
	if (hold_ns > 0 && t - hold_ns > span_start)
		span_start = t - hold_ns;
	if (span_add(&m->holds, &m->n_holds, &m->cap_holds, span_start, t, ti, lock,
		     th->steps[o->step].site))
		return -ENOMEM;
	*o = th->open[--th->n_open];
	return step_add(th, &s);
}

/* An acquisition at @t after a wait of @ns (0: none measured): a hold
 * of a lock, or the end of a wait that holds nothing (semaphore, barrier,
 * join: a block kept as measured). */
static int acquired(struct build *b, struct sp_tm_thread *th, uint32_t ti, uint32_t lock,
		    uint32_t site, int type, int64_t t, uint64_t ns)
{
	int64_t req = t;

	if (ns)
		req = th->waiting && th->wait_lock == lock && th->wait_ns_at <= t
			      ? th->wait_ns_at
			      : t - (int64_t)ns;
	th->waiting = 0;
	if (sp_tm_type_held(type))
		return acquire(b, th, ti, lock, site, type, t, req, ns > 0);
	if (ns || type == SP_TYPE_JOIN) {
		struct sp_tm_step s = { .kind = SP_TM_BLOCK, .t = t, .req = req, .site = site,
					.pair = EMPTY, .join = type == SP_TYPE_JOIN };

		b->m->blocks++;
		return step_add(th, &s);
	}
	return 0;
}

/* A condition wait's end at @t: the wait (a block kept as measured),
 * then its mutex (@lock, EMPTY when none is known) taken again. */
static int cond_woken(struct build *b, struct sp_tm_thread *th, uint32_t ti, uint32_t lock,
		      uint32_t site, int64_t t, uint64_t ns)
{
	struct sp_tm_step s = { .kind = SP_TM_BLOCK, .t = t, .site = site, .pair = EMPTY };

	s.req = th->cond_pending && th->cond_at <= t ? th->cond_at : t - (int64_t)ns;
	th->cond_pending = 0;
	if (step_add(th, &s))
		return -ENOMEM;
	if (lock == EMPTY)
		return 0;
	/* The mutex is taken again as the wait returns. */
	return acquire(b, th, ti, lock, site, SP_TYPE_MUTEX, t, t, 0);
}

static int lock_event(struct build *b, const struct sp_trace_reader *r,
		      const struct sp_trace_rec *rec)
{
	struct sp_trace_model *m = b->m;
	int64_t t = sp_trace_reader_rel_ns(r, rec->ts);
	struct sp_tm_thread *th;
	uint32_t ti, site, lock;
	int cond = rec->id == SP_EV_COND_WAIT || rec->id == SP_EV_COND_WOKEN;
	int type = cond ? SP_TYPE_MUTEX : (int)(rec->args[SP_LA_TYPE] & 0xff);
	uint64_t obj = cond ? rec->args[SP_LA_TYPE] : rec->args[SP_LA_OBJ];
	uint64_t ns = rec->nargs > SP_LA_NS ? rec->args[SP_LA_NS] : 0;

	if (t > SP_TM_MAX_NS || t < -SP_TM_MAX_NS || ns > (uint64_t)SP_TM_MAX_NS) {
		m->out_of_range++;
		return 0;
	}
	th = thread_get(m, r, rec->tid, t);
	if (!th)
		return -ENOMEM;
	ti = (uint32_t)(th - m->threads);
	site = site_get(m, rec);
	if (site == EMPTY)
		return -ENOMEM;
	m->lock_events++;
	if (t < m->first_ns || m->lock_events == 1)
		m->first_ns = t;
	if (t > m->last_ns || m->lock_events == 1)
		m->last_ns = t;
	if (cond && !obj) /* a condition wait with no mutex (none known) */
		lock = EMPTY;
	else if (rec->id == SP_EV_LOCK_RELEASED && type == SP_TYPE_RWLOCK_UNLOCK)
		lock = lock_get(m, obj, SP_TYPE_RWLOCK_WRITE, site);
	else
		lock = lock_get(m, obj, type, site);
	if (lock == EMPTY && !(cond && !obj))
		return -ENOMEM;

	switch (rec->id) {
	case SP_EV_LOCK_WAIT:
		th->waiting = 1;
		th->wait_lock = lock;
		th->wait_site = site;
		th->wait_ns_at = t;
		return 0;
	case SP_EV_LOCK_ACQUIRED:
		return acquired(b, th, ti, lock, site, type, t, ns);
	case SP_EV_LOCK_RELEASED:
		if (!sp_tm_type_held(type) && type != SP_TYPE_RWLOCK_UNLOCK)
			return 0; /* sem_post */
		return release(b, th, ti, lock, site, t,
			       rec->nargs > SP_LA_NS ? (int64_t)ns : 0, 0);
	case SP_EV_LOCK_TRY_FAILED:
		th->waiting = 0;
		return 0;
	case SP_EV_COND_WAIT:
		m->cond_waits++;
		th->cond_pending = 1;
		th->cond_at = t;
		th->cond_site = site;
		if (lock == EMPTY || !open_find(th, lock))
			return 0;
		return release(b, th, ti, lock, site, t, 0, 1);
	case SP_EV_COND_WOKEN:
		return cond_woken(b, th, ti, lock, site, t, ns);
	default:
		return 0;
	}
}

static int ref_cmp(const void *a, const void *b);

/*
 * Which thread each join waited for: the trace has the pthread_t, not the
 * thread id, so a join is matched to the thread, not yet matched, whose
 * last event came last before the join returned (joins in time order).
 */
static int match_joins(struct sp_trace_model *m)
{
	struct sp_tm_ref *v = NULL;
	size_t n = 0, cap = 0;
	uint8_t *taken = calloc(m->n_threads ? m->n_threads : 1, 1);

	if (!taken)
		return -ENOMEM;
	for (size_t ti = 0; ti < m->n_threads; ti++)
		for (size_t k = 0; k < m->threads[ti].n_steps; k++) {
			if (!m->threads[ti].steps[k].join)
				continue;
			if (sp_grow(&v, &cap, n, sizeof(*v))) {
				free(taken);
				free(v);
				return -ENOMEM;
			}
			v[n++] = (struct sp_tm_ref){ m->threads[ti].steps[k].t, (uint32_t)ti,
						     (uint32_t)k };
		}
	if (n)
		qsort(v, n, sizeof(*v), ref_cmp);
	for (size_t i = 0; i < n; i++) {
		struct sp_tm_step *s = &m->threads[v[i].thread].steps[v[i].step];
		uint32_t best = EMPTY;

		for (size_t tj = 0; tj < m->n_threads; tj++) {
			const struct sp_tm_thread *o = &m->threads[tj];

			if (tj == v[i].thread || taken[tj] || o->last_ns > s->t)
				continue;
			if (best == EMPTY || o->last_ns > m->threads[best].last_ns)
				best = (uint32_t)tj;
		}
		s->pair = best;
		if (best != EMPTY)
			taken[best] = 1;
	}
	free(taken);
	free(v);
	return 0;
}

static int ref_cmp(const void *a, const void *b)
{
	const struct sp_tm_ref *x = a, *y = b;

	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->thread != y->thread)
		return x->thread < y->thread ? -1 : 1;
	return x->step < y->step ? -1 : x->step > y->step;
}

/* Every lock's acquisitions in grant order: the measured hand-off order. */
static int build_orders(struct sp_trace_model *m)
{
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		struct sp_tm_thread *th = &m->threads[ti];

		for (size_t k = 0; k < th->n_steps; k++) {
			struct sp_tm_lock *l;

			if (th->steps[k].kind != SP_TM_ACQ)
				continue;
			l = &m->locks[th->steps[k].lock];
			if (sp_grow(&l->order, &l->cap_order, l->n_order, sizeof(*l->order)))
				return -ENOMEM;
			l->order[l->n_order++] =
				(struct sp_tm_ref){ th->steps[k].t, (uint32_t)ti, (uint32_t)k };
		}
	}
	for (size_t i = 0; i < m->n_locks; i++) {
		struct sp_tm_lock *l = &m->locks[i];

		if (l->n_order)
			qsort(l->order, l->n_order, sizeof(*l->order), ref_cmp);
		for (size_t j = 0; j < l->n_order; j++)
			m->threads[l->order[j].thread].steps[l->order[j].step].seq = (uint32_t)j;
	}
	return 0;
}

static int pcsite_add(struct sp_trace_model *m, const struct sp_trace_rec *rec)
{
	uint32_t v;
	int added;

	if (!rec->str || !*rec->str)
		return 0;
	if (sp_grow(&m->pcsites, &m->cap_pcsites, m->n_pcsites, sizeof(*m->pcsites)))
		return -ENOMEM;
	v = sp_tm_index_get(&m->pcsite_index, rec->key, NULL, NULL, (uint32_t)m->n_pcsites,
			    &added);
	if (v == EMPTY)
		return -ENOMEM;
	if (!added)
		return 0;
	m->pcsites[v].pc = rec->key;
	m->pcsites[v].offset = rec->count;
	m->pcsites[v].function = strdup(rec->str);
	if (!m->pcsites[v].function)
		return -ENOMEM;
	m->n_pcsites++;
	return 0;
}

/*
 * Waits and holds still going on when the trace ends last to its end (as
 * intervals, for chains: a deadlock's waits never end); the replay needs
 * nothing of them.  In a contended-only trace an open hold is an
 * acquisition whose release nobody waited for, so it is not in the file:
 * its end is unknown, not the trace's end, and it is left out (else every
 * such hold would seem to last to the end and make chains, even cycles,
 * that never were).
 */
static int still_open(struct sp_trace_model *m)
{
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		struct sp_tm_thread *th = &m->threads[ti];

		if (th->waiting && th->wait_lock < m->n_locks &&
		    sp_tm_type_held(m->locks[th->wait_lock].type) &&
		    span_add(&m->waits, &m->n_waits, &m->cap_waits, th->wait_ns_at, m->last_ns,
			     (uint32_t)ti, th->wait_lock, th->wait_site))
			return -ENOMEM;
		for (size_t i = 0; !m->contended_only && i < th->n_open; i++)
			if (span_add(&m->holds, &m->n_holds, &m->cap_holds,
				     th->steps[th->open[i].step].t, m->last_ns, (uint32_t)ti,
				     th->open[i].lock, th->steps[th->open[i].step].site))
				return -ENOMEM;
	}
	return 0;
}

int sp_trace_model_build(struct sp_trace_model *m, struct sp_trace_reader *r)
{
	struct build b = { .m = m };
	struct sp_trace_rec rec;
	int rc = 0, got;

	memset(m, 0, sizeof(*m));
	while ((got = sp_trace_reader_next(r, &rec)) > 0) {
		switch (rec.type) {
		case SP_REC_DROPPED:
			m->dropped += rec.count;
			m->drop_records++;
			continue;
		case SP_REC_WRITE_LOSS:
			m->write_lost += rec.count ? rec.count : 1;
			continue;
		case SP_REC_PCSITE:
			rc = pcsite_add(m, &rec);
			if (rc)
				break;
			continue;
		case SP_REC_LOCK_MODE:
			if (rec.id == SP_TRACE_LOCKS_CONTENDED)
				m->contended_only = 1;
			continue;
		case SP_REC_EVENT:
			break;
		default:
			continue;
		}
		if (rc)
			break;
		m->events++;
		/* A futex wake is neither a hold nor a wait: nothing to replay. */
		if (rec.id < 1 || rec.id > SP_EV_LOCK_LAST || rec.nargs <= SP_LA_TYPE ||
		    rec.id == SP_EV_FUTEX_WAKE)
			continue;
		rc = lock_event(&b, r, &rec);
		if (rc)
			break;
	}
	m->read_status = r->status;
	if (!rc && sp_trace_reader_write_error(r) && !m->write_lost)
		m->write_lost = 1; /* lost, how many is not in the file */
	if (!rc)
		rc = still_open(m);
	if (!rc)
		rc = build_orders(m);
	if (!rc)
		rc = match_joins(m);
	for (size_t i = 0; i < m->n_threads; i++) {
		const char *n = sp_trace_reader_thread(r, m->threads[i].tid);

		m->threads[i].name = n ? n : "";
	}
	for (size_t i = 0; i < m->n_locks; i++) {
		struct sp_trace_rec nr;

		m->locks[i].name = sp_trace_reader_lock_name(r, m->locks[i].obj, &nr) ? NULL
											 : nr.str;
	}
	sp_u64map_free(&b.met);
	if (rc)
		snprintf(m->error, sizeof(m->error), "out of memory reading the trace");
	return rc;
}

void sp_trace_model_free(struct sp_trace_model *m)
{
	for (size_t i = 0; i < m->n_threads; i++) {
		free(m->threads[i].steps);
		free(m->threads[i].open);
	}
	for (size_t i = 0; i < m->n_locks; i++)
		free(m->locks[i].order);
	for (size_t i = 0; i < m->n_sites; i++) {
		free(m->sites[i].name);
		free(m->sites[i].function);
		free(m->sites[i].file);
		free(m->sites[i].dso);
	}
	for (size_t i = 0; i < m->n_pcsites; i++)
		free(m->pcsites[i].function);
	free(m->pcsites);
	sp_u64map_free(&m->pcsite_index);
	free(m->threads);
	free(m->locks);
	free(m->sites);
	free(m->waits);
	free(m->holds);
	sp_u64map_free(&m->lock_index);
	sp_u64map_free(&m->site_index);
	sp_u64map_free(&m->thread_index);
	memset(m, 0, sizeof(*m));
}

/* ---- sites as users name them (trace_sites.c names them) ------------- */

/* Is @a equal to @b, or does one end in "/" + the other? */
static int same_file(const char *a, size_t alen, const char *b)
{
	size_t blen = strlen(b);

	if (alen == blen)
		return !memcmp(a, b, alen);
	if (alen < blen)
		return b[blen - alen - 1] == '/' && !memcmp(b + blen - alen, a, alen);
	return a[alen - blen - 1] == '/' && !memcmp(a + alen - blen, b, blen);
}

int sp_tm_site_matches(const struct sp_tm_site *s, const char *want)
{
	const char *colon = strrchr(want, ':');
	char *end;
	unsigned long line;

	if (!*want)
		return 0;
	if ((s->name && !strcmp(s->name, want)) || (s->function && !strcmp(s->function, want)))
		return 1;
	if (!colon || colon == want || !colon[1] || !s->file)
		return 0;
	line = strtoul(colon + 1, &end, 10);
	if (*end || line != s->fline)
		return 0;
	return same_file(want, (size_t)(colon - want), s->file);
}
