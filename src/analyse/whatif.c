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
 * What bounds the prediction is its critical path, walked back from the
 * thread that ends last: on each acquisition that waited in the replay it
 * jumps to the thread whose release freed the lock (at a join, to the
 * thread joined), and every stretch on the way is one of: work in the
 * scaled holds (the only part that moves with F), other work, waiting for
 * a lock (hand-off latency, lock calls), a wait kept as measured
 * (condition, semaphore, barrier, a join's delay), or the time before the
 * first thread's first event.  The parts add up to the replay's wall
 * time exactly (CTest test_trace_whatif).  It is walked for the replay at
 * factor 1 and at F: when the scaled holds are on neither path, the
 * prediction does not move with F, and the output says so and names
 * what the path is made of instead.
 *
 * How far to trust it: two sources of spread, drawn again together in
 * each of @samples replicates.
 *   - The hand-off latencies, the noisiest thing the model keeps (a
 *     waiter's wake-up on a busy machine), and those the replay adds
 *     where the trace had no wait are guessed from a median.  A
 *     replicate replays at factor 1 and at F with every latency of an
 *     acquisition that waits in the replay drawn at random from the
 *     lock's measured latencies (all locks' below MIN_HANDOFFS), the same
 *     draw for the same acquisition in both (a hash of replicate, lock
 *     and position with a fixed seed).
 *   - The run's own variability: how much F changes the wall time is not
 *     the same all through a run (a spell of preempted holds, a phase
 *     with other locks).  The point's replays at factor 1 and at F are
 *     cut into BLOCKS blocks of the measured time (reach_point(): when
 *     each replay's critical path passed each block's end); a replicate
 *     draws BLOCKS of them with replacement and takes the ratio of their
 *     lengths at F to those at factor 1.  A trace of fewer than BLOCKS *
 *     MIN_BLOCK_STEPS steps is not cut.
 * A replicate's ratio is the product of the two, relative to the point
 * estimate's ratio F-replay / 1-replay; the 5th and 95th percentiles
 * times the point estimate make the interval, widened to hold the point
 * itself (with few replicates on one side it can fall outside).  The
 * same file gives the same interval.  Each lock's wait gets the
 * hand-offs' part only.  It does not cover the model's own bias (a
 * different hand-off order, preemption scaled with the holds) or a run
 * unlike the traced one: a second trace can still differ.
 *
 * Alternatives for the run's variability, measured on whatif_bench
 * traces (bench/parts/whatif_validate.sh's program, 2 and 4 threads, the
 * shared 2-CPU machine): drawing each hold and each stretch of work
 * again from its class (thread, and the sites of the steps around it),
 * singly or in blocks of 16 or 128, breaks the measured hand-off order
 * the replay keeps: a thread whose drawn work is longer makes the next
 * in the order wait: on one 2-thread trace the replicates at factor 1
 * took 1.8 to 2.3 times the measured wall (432 to 540 ms against 237)
 * and at F = 4 their ratios were a quarter below the point's; the
 * intervals (26% to 45% wide drawn apart at factor 1 and at F, 4% to
 * 40% drawn alike) lay on one side of the point, measuring the broken
 * order more than the run.  Blocks keep the order.  On the same 12
 * cases (3 traces each), the hand-offs alone gave a median width of
 * 1.3%, another trace's prediction inside a trace's interval 17 times
 * of 72.  Cut by every thread's progress (the latest replayed step of
 * any thread), 10, 20 or 40 blocks gave 5.3%, 6.9% and 6.8% (47 of 72
 * at 20), but a thread off the path that ends early at F made its
 * blocks look faster where the wall time cannot move.  Cut by the
 * critical path's steps alone, a long wait on the path put all its
 * time in the block where it ended: 14.0% (60 of 72), and bank's
 * journal lock at 0.5, which moves the wall time by under 1%, got
 * intervals of -26% .. +18%.  The path drawn straight between its
 * points, as now: 5.8% (47 of 72), bank's as wide as the hand-offs'.
 * Draws of 20 blocks it is.
 *
 * Costs: 2 + 2 * samples passes over the steps, O(steps) each (threads
 * that cannot go on are skipped and revisited; a pass over all threads
 * makes progress), 40 bytes of replay state per step; the walks back,
 * O(steps), which also place the blocks.  On the shared 2-CPU machine,
 * 'trace what-if' on bank 4 20000 (a 69 MB trace) takes 1.1 s with
 * --samples 0 and 1.7 s with the default 40; on bank 4 100000 (347 MB),
 * 6.1 s and 13.0 s.  The blocks' cost is lost in the machine's noise
 * (bank 4 20000 with 40 samples: 2.1 to 2.9 s before them, 2.3 to 2.7 s
 * with them, load 3.6).  Alternatives
 * considered: a discrete-event simulation with a priority queue of thread
 * wake-ups gives the same answer once hand-off order is fixed (grants are
 * then a function of earlier releases only), at O(steps log threads).
 * For the interval, tracing the program several times measures the whole
 * run-to-run spread, but is the user's to do; a normal approximation of
 * the latencies' sum assumes independence the replay does not have (one
 * slow hand-off delays every later one on its path).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyse/trace_model.h"

#define NONE UINT32_MAX
/* A lock's own median hand-off latency is used from this many hand-offs
 * on; below, all locks' median: a few hand-offs on a busy machine are
 * mostly a waiter descheduled, and would make every wait the replay adds
 * cost milliseconds. */
#define MIN_HANDOFFS 8
/* The interval's blocks: the measured run cut into this many equal
 * spans of time (reach_point()); see the design block for the counts
 * tried. */
#define BLOCKS 20
/* ... when the trace has this many steps per block: a shorter trace is
 * not cut into blocks (its interval is the hand-offs' alone). */
#define MIN_BLOCK_STEPS 8

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
	int64_t req;    /* ACQ, BLOCK: replayed time it was asked for / began */
	int64_t lat;    /* ACQ: measured latency (pass 1) */
	uint32_t by_t, by_s; /* ACQ that waited in the replay: the release it waited for */
	uint8_t waited; /* ACQ: waited in the measured run (the lock was not free) */
	uint8_t scaled; /* the thread is inside a scaled hold after the step */
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
	/* measured latencies of acquisitions that waited: by lock (lock i's
	 * are pool[pool_off[i] .. pool_off[i + 1]]), and all of them */
	int64_t *pool, *gpool;
	size_t *pool_off, gpool_n;
	long boot;          /* a bootstrap replicate (latencies drawn), else -1 */
	/* the point's replays at factor 1 and at F: the replayed time by
	 * which each block's end was reached on the critical path (reach_point()) */
	int64_t reach1[BLOCKS + 1], reachf[BLOCKS + 1];
	int blocks;         /* the trace has enough steps to be cut into blocks */
	int64_t *bwait;     /* replicate: wait per lock */
	struct sp_whatif *w;
};

/* splitmix64's finaliser: a well-mixed 64-bit hash. */
static uint64_t mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= UINT64_C(0xbf58476d1ce4e5b9);
	x ^= x >> 27;
	x *= UINT64_C(0x94d049bb133111eb);
	return x ^ (x >> 31);
}

/* Replicate p->boot's latency for the @seq-th acquisition of @lock: one
 * of the lock's measured latencies (all locks' below MIN_HANDOFFS). */
static int64_t draw(const struct replay *p, uint32_t lock, uint32_t seq)
{
	size_t n = p->pool_off[lock + 1] - p->pool_off[lock];
	const int64_t *v = p->pool + p->pool_off[lock];
	uint64_t h;

	if (n < MIN_HANDOFFS) {
		v = p->gpool;
		n = p->gpool_n;
	}
	if (!n)
		return 0;
	h = mix64(SP_WHATIF_SEED ^ mix64((uint64_t)p->boot * UINT64_C(0x9e3779b97f4a7c15) ^
					 ((uint64_t)lock << 32 | seq)));
	return v[h % n];
}

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
	} else if (contended && p->boot >= 0) {
		lat = draw(p, s->lock, s->seq);
	} else if (contended) {
		lat = st->waited ? st->lat : p->med[s->lock];
		if (lat < 0)
			lat = p->global_median;
	} else {
		lat = st->waited ? 0 : st->lat;
	}
	grant = sp_tm_add(avail > req ? avail : req, lat);
	st->req = req;
	st->by_t = st->by_s = NONE;
	if (contended) {
		st->by_t = s->shared ? l->by_excl_t : l->by_all_t;
		st->by_s = s->shared ? l->by_excl_s : l->by_all_s;
	}
	if (p->boot >= 0) {
		p->bwait[s->lock] = sp_tm_add(p->bwait[s->lock], grant - req);
	} else if (!p->measure) {
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
		if (!p->measure && p->boot < 0) {
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

	st->req = req;
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
				p->ss[ti][k[ti]].scaled = depth[ti] > 0;
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

/* The measured hand-off latencies (acquisitions that waited), sorted per
 * lock and over all locks, and their medians. */
static int medians(struct replay *p)
{
	const struct sp_trace_model *m = p->m;
	size_t all = 0;

	for (size_t ti = 0; ti < m->n_threads; ti++)
		all += m->threads[ti].n_steps;
	p->pool = malloc((all ? all : 1) * sizeof(*p->pool));
	p->gpool = malloc((all ? all : 1) * sizeof(*p->gpool));
	p->pool_off = calloc(m->n_locks + 1, sizeof(*p->pool_off));
	if (!p->pool || !p->gpool || !p->pool_off)
		return -ENOMEM;
	all = 0;
	for (size_t i = 0; i < m->n_locks; i++) {
		const struct sp_tm_lock *l = &m->locks[i];
		int64_t *v = p->pool + all;
		size_t n = 0;

		p->pool_off[i] = all;
		for (size_t j = 0; j < l->n_order; j++) {
			const struct step_state *st = &p->ss[l->order[j].thread][l->order[j].step];

			if (st->waited)
				v[n++] = st->lat;
		}
		qsort(v, n, sizeof(*v), i64_cmp);
		p->med[i] = n >= MIN_HANDOFFS ? v[n / 2] : -1;
		all += n;
	}
	p->pool_off[m->n_locks] = all;
	memcpy(p->gpool, p->pool, all * sizeof(*p->gpool));
	qsort(p->gpool, all, sizeof(*p->gpool), i64_cmp);
	p->gpool_n = all;
	p->global_median = all ? p->gpool[all / 2] : 0;
	p->w->handoff_median_ns = p->global_median;
	p->w->handoffs_measured = all;
	return 0;
}

/*
 * The critical path's progress through the measured run: @reach[s], for
 * s = 0 .. BLOCKS, is the replayed time at which the replay's critical
 * path passes the end of block s, the measured span cut into BLOCKS
 * equal parts: between two points of the path (steps, a thread's end,
 * the trace's start) the path runs straight from one (measured,
 * replayed) time to the other, so a long wait or stretch of work on it
 * is spread over the blocks it spans.  reach[0] is the trace's start and
 * reach[BLOCKS] the replay's end, so the blocks' lengths, reach[s + 1] -
 * reach[s], add up to the replay's wall time.  Threads off the path do
 * not count: one that ends early at F but that nothing on the path
 * waited for does not make its blocks look faster.  The walk back gives
 * the points latest first.
 */
struct reach_walk {
	const struct sp_trace_model *m;
	int64_t *reach;
	int64_t t, sim; /* the point before (later in the run) */
	long next;      /* the latest block end not yet placed */
};

static int64_t block_end(const struct sp_trace_model *m, long s)
{
	/* In 128 bits: a damaged trace's clocks can be anywhere. */
	return (int64_t)((__int128)m->first_ns +
			 ((__int128)m->last_ns - m->first_ns) * s / BLOCKS);
}

/* @a + (@b - @a) x @num / @den, in doubles (a damaged trace's times can be
 * anywhere), kept within int64_t. */
static int64_t lerp_ns(int64_t a, int64_t b, double num, double den)
{
	double v = (double)a + ((double)b - (double)a) * num / den;

	if (!(v > -9.2e18))
		return INT64_MIN;
	if (!(v < 9.2e18))
		return INT64_MAX;
	return (int64_t)llround(v);
}

static void reach_point(struct reach_walk *rw, int64_t t, int64_t sim)
{
	if (t > rw->t)
		t = rw->t; /* a hand-off recorded before its release: no way back */
	if (sim > rw->sim)
		sim = rw->sim;
	for (; rw->next >= 0; rw->next--) {
		int64_t te = block_end(rw->m, rw->next);

		if (te < t)
			break;
		rw->reach[rw->next] =
			rw->t > t ? lerp_ns(sim, rw->sim, (double)te - (double)t,
					    (double)rw->t - (double)t)
				  : rw->sim;
	}
	rw->t = t;
	rw->sim = sim;
}

/* The critical path's work of @d ns, in a scaled hold or not; per
 * thread too when @wt (the detailed pass). */
static void path_work(struct sp_whatif_path *cp, struct sp_whatif_thread *wt, int64_t d,
		      int scaled)
{
	if (scaled)
		cp->scaled_ns += d;
	else
		cp->work_ns += d;
	if (wt) {
		wt->critical_ns += d;
		if (scaled)
			wt->crit_scaled_ns += d;
	}
}

/* Its wait of @d ns at step @s for another thread: a hand-off of a lock,
 * or (@join) a join, kept as measured; per thread, lock and site too
 * when @w (the detailed pass). */
static void path_wait(struct sp_whatif_path *cp, struct sp_whatif *w, struct sp_whatif_thread *wt,
		      const struct sp_tm_step *s, int64_t d, int join)
{
	if (join) {
		cp->kept_ns += d;
		cp->joins++;
	} else {
		cp->lock_ns += d;
		cp->handoffs++;
	}
	if (!w)
		return;
	wt->critical_ns += d;
	if (join) {
		wt->crit_kept_ns += d;
		w->crit_site_ns[s->site] += d;
	} else {
		wt->crit_lock_ns += d;
		w->locks[s->lock].crit_handoff_ns += d;
		w->locks[s->lock].crit_handoffs++;
	}
}

/* Its own time of @d ns at step @s: a lock call, or a wait kept as
 * measured. */
static void path_own(struct sp_whatif_path *cp, struct sp_whatif *w, struct sp_whatif_thread *wt,
		     const struct sp_tm_step *s, int64_t d)
{
	if (s->kind == SP_TM_ACQ)
		cp->lock_ns += d;
	else
		cp->kept_ns += d;
	if (!w)
		return;
	wt->critical_ns += d;
	if (s->kind == SP_TM_ACQ) {
		wt->crit_lock_ns += d;
	} else {
		wt->crit_kept_ns += d;
		w->crit_site_ns[s->site] += d;
	}
}

/*
 * Walk the critical path of the latest replay back from thread @ti's end
 * into @cp and @reach; @detail: also per thread, per lock and per site
 * (the predicted run's).  Every stretch of time is put in one part, so
 * the parts add up to the wall time.
 */
static void critical_path(struct replay *p, uint32_t ti, struct sp_whatif_path *cp,
			  int64_t *reach, int detail, uint8_t *seen)
{
	const struct sp_trace_model *m = p->m;
	struct sp_whatif *w = p->w;
	int64_t t = p->end[ti];
	size_t k = m->threads[ti].n_steps, hops = 0;

	struct reach_walk rw = { m, reach, INT64_MAX, t, BLOCKS };

	memset(cp, 0, sizeof(*cp));
	memset(seen, 0, m->n_threads);
	reach_point(&rw, m->threads[ti].last_ns, t);
	cp->total_ns = t - m->first_ns;
	while (hops++ < 100000000) {
		const struct sp_tm_thread *th = &m->threads[ti];
		struct sp_whatif_thread *wt = &w->threads[ti];
		uint32_t next = NONE;
		size_t next_k = 0;

		if (!seen[ti]) {
			seen[ti] = 1;
			cp->threads++;
		}
		for (;;) {
			const struct sp_tm_step *s;
			const struct step_state *st;
			int scaled = k ? p->ss[ti][k - 1].scaled : 0;
			int64_t from = k ? p->ss[ti][k - 1].sim : th->first_ns;

			/* work from the step before to @t */
			path_work(cp, detail ? wt : NULL, t > from ? t - from : 0, scaled);
			t = from;
			if (!k)
				break;
			s = &th->steps[--k];
			st = &p->ss[ti][k];
			reach_point(&rw, s->t, st->sim);
			if (s->kind == SP_TM_REL)
				continue; /* a release takes no time */
			if (st->by_t != NONE) {
				/* it waited for another thread: the path goes there */
				int join = s->kind == SP_TM_BLOCK;
				int64_t rel = join ? p->end[st->by_t] : p->ss[st->by_t][st->by_s].sim;

				path_wait(cp, detail ? w : NULL, wt, s, st->sim > rel ? st->sim - rel : 0,
					  join);
				t = rel;
				next = st->by_t;
				next_k = join ? m->threads[next].n_steps : st->by_s;
				reach_point(&rw,
					    join ? m->threads[next].last_ns
						 : m->threads[next].steps[next_k].t,
					    rel);
				break;
			}
			/* its own time: a lock call, or a wait kept as measured */
			path_own(cp, detail ? w : NULL, wt, s, st->sim > st->req ? st->sim - st->req : 0);
			t = st->req;
		}
		if (next == NONE) {
			cp->start_ns = t > m->first_ns ? t - m->first_ns : 0;
			break;
		}
		ti = next;
		k = next_k;
	}
	reach_point(&rw, m->threads[ti].first_ns, m->threads[ti].first_ns);
	reach_point(&rw, m->first_ns, m->first_ns);
}

/* The thread that ends the latest replay, and the replay's end. */
static uint32_t last_thread(const struct replay *p, int64_t *end_max)
{
	uint32_t last = 0;

	*end_max = p->m->first_ns;
	for (size_t ti = 0; ti < p->m->n_threads; ti++)
		if (p->end[ti] >= *end_max) {
			*end_max = p->end[ti];
			last = (uint32_t)ti;
		}
	return last;
}

/*
 * Replicate @b's block draw: BLOCKS of the measured run's blocks drawn
 * with replacement, and the ratio of their lengths in the point's replay
 * at F to those at factor 1, relative to the point's ratio @point.
 */
static double block_ratio(const struct replay *p, unsigned b, double point)
{
	int64_t sum1 = 0, sumf = 0;

	for (unsigned i = 0; i < BLOCKS; i++) {
		uint64_t h = mix64(SP_WHATIF_SEED ^ UINT64_C(0x626c6f636b73) ^
				   mix64((uint64_t)b << 32 | i));
		unsigned s = (unsigned)(h % BLOCKS);

		sum1 += p->reach1[s + 1] - p->reach1[s];
		sumf += p->reachf[s + 1] - p->reachf[s];
	}
	return sum1 > 0 && point > 0 ? (double)sumf / (double)sum1 / point : 1.0;
}

/* The q-th quantile (0..1) of @v[@n], sorted in place; nearest rank. */
static int64_t quantile(int64_t *v, size_t n, double q)
{
	size_t i;

	qsort(v, n, sizeof(*v), i64_cmp);
	i = (size_t)llround(q * (double)(n - 1));
	return v[i < n ? i : n - 1];
}

/* The wall time's 90% interval from the replicates' ratios @rel (sorted
 * here), around the prediction, which it always contains. */
static void wall_interval(struct sp_whatif *w, double *rel, unsigned samples)
{
	double lo, hi;
	size_t ilo, ihi;

	/* sort the ratios: the same nearest ranks as quantile() */
	for (unsigned b = 1; b < samples; b++)
		for (unsigned j = b; j > 0 && rel[j - 1] > rel[j]; j--) {
			double x = rel[j];

			rel[j] = rel[j - 1];
			rel[j - 1] = x;
		}
	ilo = (size_t)llround(0.05 * (samples - 1));
	ihi = (size_t)llround(0.95 * (samples - 1));
	lo = rel[ilo] < 1.0 ? rel[ilo] : 1.0;
	hi = rel[ihi] > 1.0 ? rel[ihi] : 1.0;
	w->predicted_low_ns = (int64_t)llround((double)w->predicted_wall_ns * lo);
	w->predicted_high_ns = (int64_t)llround((double)w->predicted_wall_ns * hi);
	if (w->predicted_low_ns > w->predicted_wall_ns)
		w->predicted_low_ns = w->predicted_wall_ns;
	if (w->predicted_high_ns < w->predicted_wall_ns)
		w->predicted_high_ns = w->predicted_wall_ns;
}

/* A lock's interval of its predicted wait, from its replicates' changes
 * @chg (copied into @col, @samples of them). */
static void lock_interval(struct sp_whatif_lock *wl, const int64_t *chg, int64_t *col,
			  unsigned samples)
{
	int64_t c = wl->wait_predicted - wl->wait_replayed, qlo, qhi;

	memcpy(col, chg, samples * sizeof(*col));
	qlo = quantile(col, samples, 0.05) - c;
	qhi = quantile(col, samples, 0.95) - c;
	wl->wait_low = wl->wait_predicted + (qlo < 0 ? qlo : 0);
	wl->wait_high = wl->wait_predicted + (qhi > 0 ? qhi : 0);
	if (wl->wait_low < 0)
		wl->wait_low = 0;
}

/*
 * The interval: @samples replicates at factor 1 and at F with the
 * latencies drawn again.  Each one's wall ratio, relative to the point's,
 * scales the point estimate; each lock's change of wait, less the
 * point's change, moves its predicted wait.
 */
static int bootstrap(struct replay *p, unsigned samples)
{
	const struct sp_trace_model *m = p->m;
	struct sp_whatif *w = p->w;
	size_t nl = m->n_locks;
	double point = w->replay_wall_ns > 0
			       ? (double)w->predicted_wall_ns / (double)w->replay_wall_ns
			       : 1.0;
	double *rel = malloc(samples * sizeof(*rel));
	int64_t *base = malloc((nl ? nl : 1) * sizeof(*base));
	/* per-lock intervals up to 32 M replicate values (256 MiB) */
	int per_lock = nl <= (UINT64_C(32) << 20) / samples;
	int64_t *chg = malloc((per_lock && nl ? nl * samples : 1) * sizeof(*chg));
	int64_t *col = malloc(samples * sizeof(*col));
	int64_t end1, endf;
	int rc = -ENOMEM;

	p->bwait = calloc(nl ? nl : 1, sizeof(*p->bwait));
	if (!rel || !base || !chg || !col || !p->bwait)
		goto out;
	p->measure = 0;
	for (unsigned b = 0; b < samples; b++) {
		p->boot = (long)b;
		p->factor = 1.0;
		memset(p->bwait, 0, nl * sizeof(*p->bwait));
		if ((rc = replay_run(p)))
			goto out;
		(void)last_thread(p, &end1);
		memcpy(base, p->bwait, nl * sizeof(*base));
		p->factor = w->factor;
		memset(p->bwait, 0, nl * sizeof(*p->bwait));
		if ((rc = replay_run(p)))
			goto out;
		(void)last_thread(p, &endf);
		end1 -= m->first_ns;
		endf -= m->first_ns;
		rel[b] = end1 > 0 && point > 0 ? (double)endf / (double)end1 / point : 1.0;
		if (p->blocks)
			rel[b] *= block_ratio(p, b, point);
		for (size_t i = 0; per_lock && i < nl; i++)
			chg[i * samples + b] = p->bwait[i] - base[i];
	}
	wall_interval(w, rel, samples);
	for (size_t i = 0; per_lock && i < nl; i++)
		lock_interval(&w->locks[i], chg + i * samples, col, samples);
	w->samples = samples;
	w->blocks = p->blocks ? BLOCKS : 0;
	w->lock_intervals = per_lock;
	rc = 0;
out:
	p->boot = -1;
	free(rel);
	free(base);
	free(chg);
	free(col);
	free(p->bwait);
	p->bwait = NULL;
	return rc;
}

/* The result's arrays and the replay's: 0 or -ENOMEM. */
static int run_alloc(const struct sp_trace_model *m, struct replay *p, struct sp_whatif *w)
{
	w->locks = calloc(m->n_locks ? m->n_locks : 1, sizeof(*w->locks));
	w->threads = calloc(m->n_threads ? m->n_threads : 1, sizeof(*w->threads));
	w->scaled_site = calloc(m->n_sites ? m->n_sites : 1, 1);
	w->crit_site_ns = calloc(m->n_sites ? m->n_sites : 1, sizeof(*w->crit_site_ns));
	p->ls = calloc(m->n_locks ? m->n_locks : 1, sizeof(*p->ls));
	p->ss = calloc(m->n_threads ? m->n_threads : 1, sizeof(*p->ss));
	p->end = calloc(m->n_threads ? m->n_threads : 1, sizeof(*p->end));
	p->med = calloc(m->n_locks ? m->n_locks : 1, sizeof(*p->med));
	p->done = calloc(m->n_threads ? m->n_threads : 1, 1);
	if (!w->locks || !w->threads || !w->scaled_site || !w->crit_site_ns || !p->ls || !p->ss ||
	    !p->end || !p->med || !p->done)
		return -ENOMEM;
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		p->ss[ti] = calloc(m->threads[ti].n_steps ? m->threads[ti].n_steps : 1,
				   sizeof(**p->ss));
		if (!p->ss[ti])
			return -ENOMEM;
	}
	return 0;
}

static void run_free(const struct sp_trace_model *m, struct replay *p)
{
	for (size_t ti = 0; p->ss && ti < m->n_threads; ti++)
		free(p->ss[ti]);
	free(p->ss);
	free(p->ls);
	free(p->end);
	free(p->med);
	free(p->done);
	free(p->pool);
	free(p->gpool);
	free(p->pool_off);
}

/* The sites to scale into @sel (@site NULL: every site), and the holds
 * begun at them: 0, or -ENOENT when there is none. */
static int select_sites(const struct sp_trace_model *m, const char *site, uint8_t *sel,
			struct sp_whatif *w)
{
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
	if (w->scaled_holds)
		return 0;
	snprintf(w->error, sizeof(w->error), "no critical section in the trace begins at '%s'",
		 site ? site : "*");
	return -ENOENT;
}

/* The trace's own acquisitions and waits, per lock and thread. */
static void measured_waits(const struct sp_trace_model *m, struct sp_whatif *w)
{
	for (size_t ti = 0; ti < m->n_threads; ti++) {
		const struct sp_tm_thread *th = &m->threads[ti];

		w->threads[ti].end_measured = th->last_ns;
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
}

/* Pass 1, at factor 1: the replay as measured (the model's own error),
 * the hand-off medians, the replayed critical path. */
static int pass_replayed(struct replay *p, uint8_t *seen)
{
	const struct sp_trace_model *m = p->m;
	struct sp_whatif *w = p->w;
	int64_t end_max = m->first_ns;
	int rc = replay_run(p);

	if (rc == -EDEADLK)
		snprintf(w->error, sizeof(w->error),
			 "the replay cannot go on: the trace's hand-off order is inconsistent "
			 "(a lock granted twice without a release between)");
	if (rc || (rc = medians(p)))
		return rc;
	w->measured_wall_ns = m->last_ns - m->first_ns;
	if (m->n_threads)
		critical_path(p, last_thread(p, &end_max), &w->path_replayed, p->reach1, 0, seen);
	w->replay_wall_ns = end_max - m->first_ns;
	measured_waits(m, w);
	return 0;
}

/* Pass 2, at F: the prediction, its critical path, and (@samples) its
 * intervals. */
static int pass_predicted(struct replay *p, double factor, unsigned samples, uint8_t *seen)
{
	const struct sp_trace_model *m = p->m;
	struct sp_whatif *w = p->w;
	int64_t end_max = m->first_ns;
	int rc;

	p->factor = factor;
	p->measure = 0;
	rc = replay_run(p);
	if (rc == -EDEADLK)
		snprintf(w->error, sizeof(w->error), "the replay at factor %g cannot go on",
			 factor);
	if (rc)
		return rc;
	for (size_t ti = 0; ti < m->n_threads; ti++)
		w->threads[ti].end_predicted = p->end[ti];
	w->last_thread = m->n_threads ? last_thread(p, &end_max) : 0;
	w->predicted_wall_ns = end_max - m->first_ns;
	w->predicted_low_ns = w->predicted_high_ns = w->predicted_wall_ns;
	for (size_t i = 0; i < m->n_locks; i++)
		w->locks[i].wait_low = w->locks[i].wait_high = w->locks[i].wait_predicted;
	if (m->n_threads)
		critical_path(p, w->last_thread, &w->path_predicted, p->reachf, 1, seen);
	if (samples && m->n_threads) {
		rc = bootstrap(p, samples);
		if (rc == -EDEADLK)
			snprintf(w->error, sizeof(w->error),
				 "a replay with hand-off latencies drawn again cannot go on");
	}
	return rc;
}

int sp_whatif_run(const struct sp_trace_model *m, const char *site, double factor,
		  unsigned samples, struct sp_whatif *w)
{
	struct replay p = { .m = m, .factor = 1.0, .measure = 1, .boot = -1, .w = w };
	uint8_t *sel = calloc(m->n_sites ? m->n_sites : 1, 1);
	uint8_t *seen = calloc(m->n_threads ? m->n_threads : 1, 1);
	size_t steps = 0;
	int rc;

	memset(w, 0, sizeof(*w));
	w->factor = factor;
	w->site = site;
	rc = !sel || !seen ? -ENOMEM : run_alloc(m, &p, w);
	if (!rc)
		rc = select_sites(m, site, sel, w);
	if (!rc) {
		p.sel = sel;
		for (size_t ti = 0; ti < m->n_threads; ti++)
			steps += m->threads[ti].n_steps;
		p.blocks = steps >= (size_t)BLOCKS * MIN_BLOCK_STEPS;
		rc = pass_replayed(&p, seen);
	}
	if (!rc)
		rc = pass_predicted(&p, factor, samples, seen);
	if (rc == -ENOMEM)
		snprintf(w->error, sizeof(w->error), "out of memory");
	run_free(m, &p);
	free(sel);
	free(seen);
	return rc;
}

void sp_whatif_free(struct sp_whatif *w)
{
	free(w->locks);
	free(w->threads);
	free(w->scaled_site);
	free(w->crit_site_ns);
	w->locks = NULL;
	w->threads = NULL;
	w->scaled_site = NULL;
	w->crit_site_ns = NULL;
}
