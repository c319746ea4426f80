/*
 * whatif.c - 'syncprof trace what-if': predict the wall time of a traced
 * run had every critical section that began at one site taken F times as
 * long, by replaying the trace's per-thread timelines (trace_model.c).
 *
 * The model.  Each thread is the sequence of its steps (acquire, release,
 * a wait kept as measured) with work between them, the measured gaps.
 * The replay keeps:
 *   - each thread's work, scaled by F while the thread is inside a hold
 *     that began at the site (nested locks' own waits are not scaled);
 *   - each lock's hand-off order: the k-th acquisition in the measured run
 *     is the k-th in the replay; a write (exclusive) acquisition waits for
 *     every earlier hold to be released, a read acquisition for the
 *     earlier write holds;
 *   - the measured hand-off latency: a waiter that was granted the lock
 *     some time after it became free (release to waiter running) is
 *     granted it that long after it becomes free in the replay; one that
 *     did not wait in the measured run but must wait in the replay gets
 *     the lock's median measured latency (all locks' median when the lock
 *     handed off fewer than MIN_HANDOFFS times); one that waited but finds the lock free in the
 *     replay gets it at once;
 *   - semaphore, barrier, join and condition waits at their measured
 *     length (the trace does not say who posted or signalled), and each
 *     thread's first event at its measured time.
 * So the replay grants an acquisition at max(asked, free) + latency.  It
 * runs twice: at F = 1, where it must give back the measured times (it
 * does, to the nanosecond, unless the file shows a grant before the
 * release it follows: counted as "inconsistent"), and measures each
 * acquisition's latency on the way; then at F.
 *
 * Where it breaks (docs/whatif.md): more runnable threads than CPUs (the
 * measured work includes time preempted, which does not scale with F);
 * condition variables and semaphores (a waiter's wake-up does not move
 * with its signaller); I/O and other blocking outside locks (kept as
 * work, and scaled when inside a scaled hold); a different hand-off order
 * (a faster section could let a thread barge ahead: the order is kept).
 *
 * The critical path of the predicted run is walked back from the thread
 * that ends last: on each acquisition that waited in the replay it jumps
 * to the thread whose release freed the lock.
 *
 * Costs: two passes over the steps, O(steps) each (threads that cannot go
 * on are skipped and revisited; a pass over all threads makes progress),
 * 32 bytes of replay state per step.  Alternatives considered: a
 * discrete-event simulation with a priority queue of thread wake-ups
 * gives the same answer once hand-off order is fixed (grants are then a
 * function of earlier releases only), at O(steps log threads).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "read/trace_model.h"

#define NONE UINT32_MAX
/* A lock's own median hand-off latency is used from this many hand-offs
 * on; below, all locks' median: a few hand-offs on a busy machine are
 * mostly a waiter descheduled, and would make every wait the replay adds
 * cost milliseconds. */
#define MIN_HANDOFFS 8

struct lock_state {
	int64_t rel_all, rel_excl;   /* latest replayed release: any hold, write holds */
	uint32_t out_all, out_excl;  /* holds granted and not yet released */
	uint32_t next;               /* the position in the hand-off order to grant */
	uint32_t by_all_t, by_all_s; /* the release that set rel_all (thread, step) */
	uint32_t by_excl_t, by_excl_s;
	int seen_release;
};

struct step_state {
	int64_t sim;    /* replayed time of the step */
	int64_t lat;    /* ACQ: measured latency (pass 1) */
	uint32_t by_t, by_s; /* ACQ that waited in the replay: the release it waited for */
	uint8_t waited; /* ACQ: waited in the measured run (the lock was not free) */
};

struct replay {
	const struct sp_trace_model *m;
	const uint8_t *sel; /* per site: scaled */
	double factor;
	int measure;        /* pass 1: F = 1, latencies measured */
	struct lock_state *ls;
	struct step_state **ss; /* per thread, per step */
	int64_t *end;       /* per thread */
	uint8_t *done;      /* per thread: replayed to its end */
	int64_t *med;       /* per lock: median measured hand-off latency, -1 none */
	int64_t global_median;
	struct sp_whatif *w;
};

static int64_t scale(const struct replay *p, int64_t gap, int depth)
{
	if (gap <= 0)
		return 0; /* time within a thread never runs backwards */
	if (!depth || p->factor == 1.0)
		return gap;
	if ((double)gap * p->factor >= (double)(INT64_C(1) << 60))
		return INT64_C(1) << 60;
	return (int64_t)llround((double)gap * p->factor);
}

/* Can thread @ti's step @k go now?  ACQ: its turn, and the lock free;
 * a join: the thread joined has ended. */
static int ready(const struct replay *p, const struct sp_tm_step *s)
{
	const struct lock_state *l;

	if (s->kind == SP_TM_BLOCK)
		return s->pair == NONE || p->done[s->pair];
	if (s->kind != SP_TM_ACQ)
		return 1;
	l = &p->ls[s->lock];
	if (l->next != s->seq)
		return 0;
	return s->shared ? !l->out_excl : !l->out_all;
}

static void step_acq(struct replay *p, uint32_t ti, size_t k, int64_t *now, int64_t *prev,
		     int *depth)
{
	const struct sp_tm_step *s = &p->m->threads[ti].steps[k];
	struct step_state *st = &p->ss[ti][k];
	struct lock_state *l = &p->ls[s->lock];
	int64_t req = sp_tm_add(*now, scale(p, s->req - *prev, *depth));
	int seen = l->seen_release;
	int64_t avail = s->shared ? l->rel_excl : l->rel_all;
	int contended = seen && avail > req;
	int64_t lat, grant;

	if (!seen)
		avail = req;
	if (p->measure) {
		lat = s->t - (avail > req ? avail : req);
		if (lat < 0) {
			p->w->inconsistent++;
			lat = 0;
		}
		st->lat = lat;
		st->waited = (uint8_t)contended;
	} else if (contended) {
		lat = st->waited ? st->lat : p->med[s->lock];
		if (lat < 0)
			lat = p->global_median;
	} else {
		lat = st->waited ? 0 : st->lat;
	}
	grant = sp_tm_add(avail > req ? avail : req, lat);
	st->by_t = st->by_s = NONE;
	if (contended) {
		st->by_t = s->shared ? l->by_excl_t : l->by_all_t;
		st->by_s = s->shared ? l->by_excl_s : l->by_all_s;
	}
	if (!p->measure) {
		struct sp_whatif_lock *wl = &p->w->locks[s->lock];
		struct sp_whatif_thread *wt = &p->w->threads[ti];

		wl->wait_predicted = sp_tm_add(wl->wait_predicted, grant - req);
		wt->wait_predicted = sp_tm_add(wt->wait_predicted, grant - req);
		wl->contended_predicted += contended;
	} else {
		p->w->locks[s->lock].wait_replayed =
			sp_tm_add(p->w->locks[s->lock].wait_replayed, grant - req);
	}
	l->next++;
	l->out_all++;
	l->out_excl += !s->shared;
	if (p->sel[s->site])
		(*depth)++;
	*now = grant;
	*prev = s->t;
}

static void step_rel(struct replay *p, uint32_t ti, size_t k, int64_t *now, int64_t *prev,
		     int *depth)
{
	const struct sp_tm_thread *th = &p->m->threads[ti];
	const struct sp_tm_step *s = &th->steps[k];
	const struct sp_tm_step *a = &th->steps[s->pair];
	struct lock_state *l = &p->ls[s->lock];

	*now = sp_tm_add(*now, scale(p, s->t - *prev, *depth));
	*prev = s->t;
	l->out_all--;
	if (!a->shared)
		l->out_excl--;
	if (!l->seen_release || *now >= l->rel_all) {
		l->rel_all = *now;
		l->by_all_t = ti;
		l->by_all_s = (uint32_t)k;
	}
	if (!a->shared && (!l->seen_release || *now >= l->rel_excl)) {
		l->rel_excl = *now;
		l->by_excl_t = ti;
		l->by_excl_s = (uint32_t)k;
	}
	if (a->shared && !l->seen_release) {
		l->rel_excl = INT64_MIN / 4; /* no write hold yet: readers never wait */
		l->by_excl_t = l->by_excl_s = NONE;
	}
	l->seen_release = 1;
	if (p->sel[a->site] && *depth) {
		(*depth)--;
		if (!p->measure) {
			p->w->threads[ti].scaled_holds++;
			p->w->threads[ti].scaled_ns_measured =
				sp_tm_add(p->w->threads[ti].scaled_ns_measured, s->t - a->t);
		}
	}
}

/*
 * A wait kept as measured; a join waits for the replayed end of the
 * thread it joined, plus the measured delay from that thread's last event
 * to the join's return.
 */
static void step_block(struct replay *p, uint32_t ti, size_t k, int64_t *now, int64_t *prev,
		       int depth)
{
	const struct sp_tm_step *s = &p->m->threads[ti].steps[k];
	struct step_state *st = &p->ss[ti][k];
	int64_t req = sp_tm_add(*now, scale(p, s->req - *prev, depth));

	st->by_t = st->by_s = NONE;
	if (s->pair == NONE) {
		*now = sp_tm_add(req, s->t > s->req ? s->t - s->req : 0);
	} else {
		int64_t last = p->m->threads[s->pair].last_ns;
		int64_t from = last > s->req ? last : s->req, lat = s->t - from;

		if (lat < 0)
			lat = 0;
		if (p->end[s->pair] > req) {
			req = p->end[s->pair];
			st->by_t = s->pair;
			st->by_s = (uint32_t)p->m->threads[s->pair].n_steps;
		}
		*now = sp_tm_add(req, lat);
	}
	*prev = s->t;
}

/* One replay; 0, or -EDEADLK when no thread can go on. */
static int replay_run(struct replay *p)
{
	const struct sp_trace_model *m = p->m;
	size_t n = m->n_threads, left = n;
	size_t *k = calloc(n ? n : 1, sizeof(*k));
	int64_t *now = calloc(n ? n : 1, sizeof(*now)), *prev = calloc(n ? n : 1, sizeof(*prev));
	int *depth = calloc(n ? n : 1, sizeof(*depth));
	int rc = 0;

	if (!k || !now || !prev || !depth) {
		rc = -ENOMEM;
		goto out;
	}
	memset(p->ls, 0, m->n_locks * sizeof(*p->ls));
	memset(p->done, 0, n);
	for (size_t ti = 0; ti < n; ti++)
		now[ti] = prev[ti] = m->threads[ti].first_ns;
	while (left) {
		int progress = 0;

		for (uint32_t ti = 0; ti < n; ti++) {
			const struct sp_tm_thread *th = &m->threads[ti];

			if (k[ti] == th->n_steps)
				continue;
			while (k[ti] < th->n_steps && ready(p, &th->steps[k[ti]])) {
				const struct sp_tm_step *s = &th->steps[k[ti]];

				if (s->kind == SP_TM_ACQ) {
					step_acq(p, ti, k[ti], &now[ti], &prev[ti], &depth[ti]);
				} else if (s->kind == SP_TM_REL) {
					step_rel(p, ti, k[ti], &now[ti], &prev[ti], &depth[ti]);
				} else {
					step_block(p, ti, k[ti], &now[ti], &prev[ti], depth[ti]);
				}
				p->ss[ti][k[ti]].sim = now[ti];
				k[ti]++;
				progress = 1;
			}
			if (k[ti] == th->n_steps) {
				left--;
				p->end[ti] = sp_tm_add(now[ti],
						       scale(p, th->last_ns - prev[ti], depth[ti]));
				p->done[ti] = 1;
			}
		}
		if (!progress) {
			rc = -EDEADLK;
			break;
		}
	}
out:
	free(k);
	free(now);
	free(prev);
	free(depth);
	return rc;
}

static int i64_cmp(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

/* Median measured hand-off latency per lock and over all locks. */
static int medians(struct replay *p)
{
	const struct sp_trace_model *m = p->m;
	size_t n = 0, all = 0;
	int64_t *v, *g;

	for (size_t i = 0; i < m->n_locks; i++)
		n = m->locks[i].n_order > n ? m->locks[i].n_order : n;
	v = malloc((n ? n : 1) * sizeof(*v));
	for (size_t ti = 0; ti < m->n_threads; ti++)
		all += m->threads[ti].n_steps;
	g = malloc((all ? all : 1) * sizeof(*g));
	if (!v || !g) {
		free(v);
		free(g);
		return -ENOMEM;
	}
	all = 0;
	for (size_t i = 0; i < m->n_locks; i++) {
		const struct sp_tm_lock *l = &m->locks[i];

		n = 0;
		for (size_t j = 0; j < l->n_order; j++) {
			const struct step_state *st = &p->ss[l->order[j].thread][l->order[j].step];

			if (st->waited)
				v[n++] = g[all++] = st->lat;
		}
		qsort(v, n, sizeof(*v), i64_cmp);
		p->med[i] = n >= MIN_HANDOFFS ? v[n / 2] : -1;
	}
	qsort(g, all, sizeof(*g), i64_cmp);
	p->global_median = all ? g[all / 2] : 0;
	p->w->handoff_median_ns = p->global_median;
	free(v);
	free(g);
	return 0;
}

/* Walk the predicted critical path back from the thread that ends last. */
static void critical_path(struct replay *p, int64_t start)
{
	const struct sp_trace_model *m = p->m;
	uint32_t ti = p->w->last_thread;
	int64_t t = p->end[ti];
	size_t k = m->threads[ti].n_steps, hops = 0;

	while (ti != NONE && hops++ < 100000000) {
		const struct sp_tm_thread *th = &m->threads[ti];
		uint32_t next = NONE;

		while (k-- > 0) {
			const struct step_state *st = &p->ss[ti][k];

			if (th->steps[k].kind == SP_TM_REL || st->by_t == NONE)
				continue;
			{
				int64_t rel = st->by_s == m->threads[st->by_t].n_steps
						      ? p->end[st->by_t]
						      : p->ss[st->by_t][st->by_s].sim;

				p->w->threads[ti].critical_ns =
					sp_tm_add(p->w->threads[ti].critical_ns, t - rel);
				t = rel;
				next = st->by_t;
				k = st->by_s; /* continue before the release */
				break;
			}
		}
		if (next == NONE) {
			int64_t from = th->first_ns > start ? th->first_ns : start;

			p->w->threads[ti].critical_ns =
				sp_tm_add(p->w->threads[ti].critical_ns, t - from);
			break;
		}
		ti = next;
	}
}

int sp_whatif_run(const struct sp_trace_model *m, const char *site, double factor,
		  struct sp_whatif *w)
{
	struct replay p = { .m = m, .factor = 1.0, .measure = 1, .w = w };
	uint8_t *sel = calloc(m->n_sites ? m->n_sites : 1, 1);
	int64_t end_max;
	int rc = -ENOMEM;

	memset(w, 0, sizeof(*w));
	w->factor = factor;
	w->site = site;
	w->locks = calloc(m->n_locks ? m->n_locks : 1, sizeof(*w->locks));
	w->threads = calloc(m->n_threads ? m->n_threads : 1, sizeof(*w->threads));
	w->scaled_site = calloc(m->n_sites ? m->n_sites : 1, 1);
	p.ls = calloc(m->n_locks ? m->n_locks : 1, sizeof(*p.ls));
	p.ss = calloc(m->n_threads ? m->n_threads : 1, sizeof(*p.ss));
	p.end = calloc(m->n_threads ? m->n_threads : 1, sizeof(*p.end));
	p.med = calloc(m->n_locks ? m->n_locks : 1, sizeof(*p.med));
	p.done = calloc(m->n_threads ? m->n_threads : 1, 1);
	if (!sel || !w->locks || !w->threads || !w->scaled_site || !p.ls || !p.ss || !p.end ||
	    !p.med || !p.done)
		goto out;
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		p.ss[ti] = calloc(m->threads[ti].n_steps ? m->threads[ti].n_steps : 1,
				  sizeof(**p.ss));
		if (!p.ss[ti])
			goto out;
	}
	/* The sites to scale; NULL: every site. */
	for (size_t i = 0; i < m->n_sites; i++) {
		sel[i] = !site || sp_tm_site_matches(&m->sites[i], site);
		w->n_sites += sel[i];
	}
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		const struct sp_tm_thread *th = &m->threads[ti];

		for (size_t k = 0; k < th->n_steps; k++)
			if (th->steps[k].kind == SP_TM_ACQ && sel[th->steps[k].site]) {
				w->scaled_holds++;
				w->scaled_site[th->steps[k].site] = 1;
			}
	}
	if (!w->scaled_holds) {
		snprintf(w->error, sizeof(w->error),
			 "no critical section in the trace begins at '%s'", site ? site : "*");
		rc = -ENOENT;
		goto out;
	}
	p.sel = sel;
	rc = replay_run(&p);
	if (rc == -EDEADLK)
		snprintf(w->error, sizeof(w->error),
			 "the replay cannot go on: the trace's hand-off order is inconsistent "
			 "(a lock granted twice without a release between)");
	if (rc || (rc = medians(&p)))
		goto out;
	w->measured_wall_ns = m->last_ns - m->first_ns;
	end_max = m->first_ns;
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		w->threads[ti].end_measured = m->threads[ti].last_ns;
		end_max = p.end[ti] > end_max ? p.end[ti] : end_max;
	}
	w->replay_wall_ns = end_max - m->first_ns;
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		const struct sp_tm_thread *th = &m->threads[ti];

		for (size_t k = 0; k < th->n_steps; k++) {
			const struct sp_tm_step *s = &th->steps[k];

			if (s->kind != SP_TM_ACQ)
				continue;
			w->locks[s->lock].acquisitions++;
			if (s->waited) {
				w->locks[s->lock].contended_measured++;
				w->locks[s->lock].wait_measured =
					sp_tm_add(w->locks[s->lock].wait_measured, s->t - s->req);
				w->threads[ti].wait_measured =
					sp_tm_add(w->threads[ti].wait_measured, s->t - s->req);
			}
		}
	}
	/* Pass 2: at F. */
	p.factor = factor;
	p.measure = 0;
	rc = replay_run(&p);
	if (rc == -EDEADLK)
		snprintf(w->error, sizeof(w->error), "the replay at factor %g cannot go on",
			 factor);
	if (rc)
		goto out;
	end_max = m->first_ns;
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		w->threads[ti].end_predicted = p.end[ti];
		if (p.end[ti] >= end_max) {
			end_max = p.end[ti];
			w->last_thread = (uint32_t)ti;
		}
	}
	w->predicted_wall_ns = end_max - m->first_ns;
	if (m->n_threads)
		critical_path(&p, m->first_ns);
out:
	if (rc == -ENOMEM)
		snprintf(w->error, sizeof(w->error), "out of memory");
	for (size_t ti = 0; p.ss && ti < m->n_threads; ti++)
		free(p.ss[ti]);
	free(p.ss);
	free(p.ls);
	free(p.end);
	free(p.med);
	free(p.done);
	free(sel);
	return rc;
}

void sp_whatif_free(struct sp_whatif *w)
{
	free(w->locks);
	free(w->threads);
	free(w->scaled_site);
	w->locks = NULL;
	w->threads = NULL;
	w->scaled_site = NULL;
}
