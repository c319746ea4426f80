/*
 * hold.c - hold times and owner changes (SYNCPROF_OPTIONS hold=1,
 * syncprof run --hold); blame and the contended waits' hooks are blame.c's.
 *
 * What is kept:
 *   - per entry (site, object, op): total, maximum and a log2 histogram of
 *     the time from a successful acquisition to its release, and how often
 *     the lock changed owner (the acquiring thread differs from the last
 *     one seen on the lock);
 *   - blame: for each contended wait, the site where the thread that held
 *     the lock when the wait began had acquired it; a global table keyed by
 *     (waiter site, object, type, holder site) sums wait time and count.
 *
 * Design.  Each thread publishes the locks it holds in a block of its own
 * (mmap'd, found through initial-exec TLS, never malloc'd; blocks are
 * linked into a global list and recycled when their thread exits holding
 * nothing).  An acquisition pushes {object, site} and a release pops it,
 * inside a sequence-counter section that only the owning thread writes:
 * no CAS and no shared cache line on either path.  Other threads - a
 * contended waiter looking for whom to blame, the watchdog calling
 * sp_hold_lookup() - walk the list and copy entries lock-free, retrying a
 * torn copy; they never block or write to a recording thread.  Recursive
 * mutexes and read locks taken again by their holder only bump a depth
 * (the hold lasts from the outermost acquisition to the last release); a
 * condition wait pauses the hold of its mutex.
 *
 * Clock mode (hold_tick.c, hold_clock=): while holds are few, every hold
 * is timed by the sampled push with a weight of 1 and the ticker wakes
 * every 20 ms; what follows is tick mode, the design for many holds.
 *
 * Hold times: measured where they matter, sampled where they do not
 * (issue 14; until then one hold in 16 was timed and weighted by 16, and a
 * lock held once for 800 ms could be reported with 12.8 s).  Reading the
 * clock (rdtsc, ~13 ns here; the lock+unlock itself ~8 ns) at every
 * acquisition and release would triple the cost of an uncontended lock, so
 * every hold is stamped with a coarse clock instead, and the clock is read
 * only for the holds that need it:
 *   - the hold tick (hold.h): a ticker thread advances sp_hold_tick every
 *     SP_HOLD_TICK_NS (500 us) and notes the clock of each tick in a ring.
 *     A push stores the tick (one load, one store), a pop compares it (one
 *     load): a hold released at the tick it began at is short (< one tick
 *     period) and pops on the fast path; one that saw the tick move goes
 *     to sp_hold_released(), which reads the clock and bounds the hold
 *     between "since the next tick" (lo) and "since its own tick" (hi);
 *   - long holds: lo >= SP_HOLD_LONG_LO_NS (250 us) makes a hold long
 *     (every hold of 1 ms or more is, while the ticker keeps time).  An
 *     untimed long hold counts with the middle of [lo, hi] (error at most
 *     half a tick: 250 us); a hold of 1 ms or more also arms a countdown
 *     on its lock (the last-owner slot, hold.h) so that the lock's next
 *     SP_HOLD_LONG_COUNTDOWN acquisitions are timed exactly: of a lock held
 *     long repeatedly, only the first hold is bounded, the rest are exact.
 *     That countdown costs at most 2 x 13 ns x 511 per hold of >= 1 ms,
 *     1.3% of it;
 *   - forced holds are timed exactly from acquisition: those acquired
 *     after a contended wait (the probe's slow path already reads the
 *     clock), those of a lock whose countdown runs, and any hold that spans
 *     a condition wait (paused meanwhile; the part before the wait counts
 *     as bounded by the tick as above, or 0 when the tick did not move:
 *     less than a tick);
 *   - the rest - short, uncontended holds - are sampled, per entry: its
 *     acquisition number n is timed with probability 1 / period(n), and
 *     the timed hold stands for period(n) holds (hold.h,
 *     sp_hold_period()).  The period is 1 for an entry's first four
 *     acquisitions, then n / 4 + 1, up to sp_opts.hold_sample (64 by
 *     default) from its 4 x hold_sample-th on: a row of a handful of holds
 *     has most timed, one of a thousand about 31, one of a million about
 *     15,600.  The cap trades cost for the variance that rare long short
 *     holds (a preempted one: up to a tick) add: a timed hold of 500 us
 *     standing for 256 holds moved a row of 40,000 holds by 40% under
 *     load (tests/preload/short_holds.c, 1 run in ~10 with the cap at
 *     256), standing for 64 by a quarter of that, for about the same cost
 *     (docs/cost.md).  Which ones is a Weyl sequence over n (n times the
 *     golden ratio in 64 bits, offset by the entry's address, below a
 *     threshold): no state but the count the probe keeps anyway, and no
 *     aliasing with a program whose holds repeat with a period, which a
 *     fixed gap would have (tests/preload/short_holds.c).  The ramp is
 *     per thread's entry, but a row's estimate is taken over the sample
 *     of all its entries, so an entry of a key that another thread took
 *     past its ramp with a sample skips it ("The ramp", below).
 * Per entry, the owner keeps (relaxed stores, single writer, as probe.c):
 * the exact holds (long, forced, timed or bounded), their count and sum;
 * the sampled short holds, their count and sum; and the acquisitions that
 * were no hold of their own (taken again by their holder, untracked).
 * The sample's sums are weighted: its count is the holds it stands for,
 * its time each hold's time times its period.  Reports
 * (sp_hold_sums_totals(), record.h) estimate the short holds as their
 * number - the entry's acquisitions less the exact and non-holds - times
 * the weighted mean of the sample: a ratio estimator, so a row's total
 * never exceeds holds x max (and is held up to its max).  Error bound of what is
 * still sampled: only holds that ended within one tick of their start
 * (< 500 us plus the ticker's lateness), at most (holds - exact) x that;
 * statistically, the sample's standard error of the mean (about the
 * spread of the short holds / sqrt(samples)) times their number.  An
 * entry's first holds are all timed, so no row with holds lacks a sample.
 * hold_max_ns is the largest hold timed or bounded.  hold_sample=1 times
 * every hold.
 *
 * Owner changes compare the acquiring thread with the last owner of the
 * lock in a direct-mapped array indexed by address, written only when the
 * owner changes (or a countdown runs).
 *
 * Lists only.  Lock-order checking (lockorder.c) needs the published
 * lists and nothing else: with lock_order=1 and not hold=1, no hold is
 * timed (no acquisition is due for the sample, so the fast paths stay as
 * they are), no waiter looks up its holder
 * for blame and reports show no hold facts; last owners are still kept,
 * as the fast path reads them.
 *
 * Time: the one clock of base/clock.c, calibrated at once when hold
 * tracking starts (2 ms, only with hold=1).  sp_hold_lookup() reports since
 * when a lock is held: exactly for a timed hold; for an untimed one, the
 * first time any caller of sp_hold_lookup() saw it held (a lower bound of
 * its age, as fine as the watchdog's polling).
 *
 * Measured (lockbench, 1 thread, 1 lock, preload; bench/parts/preload_bench.sh):
 * a global table of owner slots claimed with a CAS plus two TSC reads per
 * lock+unlock cost ~4x plain (rdtsc is ~19 ns on this VM); the published
 * per-thread lists with every hold timed, ~3x; sampled, ~1.45-1.8x; with
 * the fast paths of hold.h inlined into the probes and one store per push
 * or pop, ~1.43x (the rest of the cost: the timed samples, ~1/3).  The
 * tick's load and store: docs/cost.md; the ticker's CPU time: bench/cost.sh
 * ticker.  The ticker (its thread and clock ring: hold_tick.c), in
 * tick mode, wakes 2000 times a second while any thread holds a lock or
 * the held lists changed lately (~28 us a wake on this VM: ~5% of a
 * core), every 20 ms after 100 ms of no lock activity and in clock
 * mode; it asks for SCHED_FIFO
 * (a starved ticker bounds holds loosely: under a load of 12 on 2 cores,
 * 1 of 20 runs of the known-holds test missed a 2 ms hold before) and
 * runs at normal priority when that is not allowed.
 *
 * Limits: everything above assumes the ticker gets the CPU every 500 us.
 * Starved of it (no real-time priority and busy cores, a paused VM, a
 * throttled cgroup), a hold up to the gap between two ticks long can begin
 * and end unseen and count as short, and a long one is bounded only
 * between those distant ticks.  No cheap check on the holder's side can
 * see that (it would need the clock read this design avoids), so the
 * ticker measures its own gaps: those over SP_HOLD_LATE_NS while active
 * are counted with the longest, and reports say so (hold_ticker_late).
 * The first hold after an idle spell of the ticker is bounded by
 * its 20 ms tick only (a hold shorter than that can count as short); in
 * a fork child, holds are all short (sampled) until its ticker starts at
 * its first timed hold; the lock countdown lives in last-owner slots,
 * shared by locks 512 KiB apart.  A lock released by another thread than
 * its owner loses that hold (the owner's record is dropped at its next
 * acquisition of the lock); more than SP_HELD_MAX locks held at once by one thread are not
 * tracked (counted in untracked); owner changes are approximate when two
 * locks share a last-owner slot; a waiter's lookup costs a walk over the
 * threads' blocks (contended path only).
 *
 * Alternatives considered: keeping the holder in the entry (a waiter in
 * another thread cannot find it without searching every table); timing
 * every hold (see above); a clock read only at release with the
 * acquisition time taken from the probe (the probe reads no clock when
 * uncontended, by design); CLOCK_MONOTONIC_COARSE as the coarse clock
 * (7.5 ns a read through the vDSO here, and 4 ms steps: a 30 ms hold
 * bounded to 13%); the ticker stamping the held lists it finds instead of
 * a tick in each push (free for the owner, but a stamp can land on the
 * next hold of a reused slot); weighting each sample by hold_sample alone
 * (the old estimator: a long hold that happened to be sampled counted 16
 * times, and a row's total could exceed holds x max); one hold in 16 at
 * random gaps counted down per thread (until 2026-11-28: the two clock
 * reads of every 16th hold were a third of hold=1's cost at 1 lock, and a
 * row with fewer than 16 holds had often no sample at all, its short
 * holds counted as 0).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "hold.h"
#include "hold_tick.h"
#include "probe.h"
#include "record/registry.h"
#include "record/table.h"


/* ---- clock ---------------------------------------------------------------- */

/* The one clock (base/clock.c), calibrated at once by sp_hold_init(): a
 * hold's start must be in the final clock. */
static SP_ALWAYS_INLINE uint64_t ticks(void)
{
	return sp_clock_ticks();
}

static uint64_t ticks_to_ns(uint64_t t)
{
	return sp_clock_ticks_to_ns(t);
}

/* ---- the ramp: keys whose row has a sample --------------------------------- */

/*
 * The ramp (hold.h, sp_hold_period()) times most of an entry's first
 * holds, so that no row with holds lacks a sample.  An entry is one
 * thread's: a program that starts a thread per task or connection used to
 * ramp every key again in every thread - 13 of the 20 holds of each short
 * thread of bench/thread_churn timed, each a clock read at both ends, a
 * cold line and a histogram block - though the row those entries add up to
 * had its sample long before.  Reports take the holds of a row from the
 * sums of all its entries (record.h, sp_hold_sums_totals()), so a thread's
 * entry of a key whose row has a sample needs none of its own.
 *
 * Which keys have one: those with a sample and at least the ramp's
 * acquisitions (4 x hold_sample: the row is past the ramp as one thread's
 * entry would be, so that a sample of a new entry, standing for
 * hold_sample holds, is one of many; a row of a few dozen holds from a
 * few threads each still has most of them timed) - a live thread's entry
 * when it takes a sample past its own ramp (entry_add_sample()), and the
 * retired aggregate's entry when an exiting thread's is folded into it
 * (table.c, sp_table_fold()).  They are noted here
 * by the hash of their key - an open-addressed set of 64-bit hashes,
 * never emptied (the aggregate keeps its samples for the process's life,
 * resets included: a reset subtracts a snapshot), written with a CAS and
 * read without a lock.  A thread's new entry of such a key
 * (registry.c, sp_entry_insert__slowpath()) gets SP_ENTRY_NO_RAMP: its
 * holds are sampled at the full period from the first.  When the set is
 * full, or a probe is too long, a key is not noted and its entries ramp as
 * before.  Two keys that share a 64-bit hash: the second skips its ramp
 * though its row may have no sample (under one run in 10^9 at a million
 * keys); its short holds are then counted without their time.
 */
#define RAMPED_BITS 14
#define RAMPED_PROBES 16
static uint64_t ramped[1u << RAMPED_BITS] SP_LARGE; /* untouched pages cost nothing */

/* Not sp_key_slot(): that hash only picks an index slot, whose entry is
 * then compared; here the hash stands for the key, so it must not collide
 * by the key's structure. */
static uint64_t ramp_key(const struct sp_entry *e)
{
	return sp_hash4(e->obj, (uintptr_t)e->file, e->pc, (uint64_t)e->line << 8 | e->op);
}

int sp_hold_ramp_done(const struct sp_entry *e)
{
	uint64_t h;

	if (e->acquisitions < sp_hold_rate.ramp_end)
		return 0;
	h = ramp_key(e);
	for (unsigned i = 0; i < RAMPED_PROBES; i++) {
		uint64_t *slot = &ramped[(h + i) & ((1u << RAMPED_BITS) - 1)];
		uint64_t cur = sp_load_relaxed(slot);

		if (cur == h)
			break;
		if (!cur && (__atomic_compare_exchange_n(slot, &cur, h, 0, __ATOMIC_RELAXED,
							  __ATOMIC_RELAXED) ||
			     cur == h))
			break;
	}
	return 1; /* noted, or the set is full around it: not tried again */
}

int sp_hold_ramp_known(const struct sp_entry *e)
{
	uint64_t h = ramp_key(e);

	for (unsigned i = 0; i < RAMPED_PROBES; i++) {
		uint64_t cur = sp_load_relaxed(&ramped[(h + i) & ((1u << RAMPED_BITS) - 1)]);

		if (cur == h)
			return 1;
		if (!cur)
			return 0;
	}
	return 0;
}

/* ---- per-thread published held locks -------------------------------------- */

static struct sp_hold_pub *pubs; /* list head; blocks are never unmapped */
SP_TLS struct sp_hold_pub *sp_hold_my_pub;
/* Read by every push (hold.h); written at start-up only. */
struct sp_hold_rate sp_hold_rate = { UINT64_MAX, 0, 1 };
static int times = 1; /* 0: lists only (lock order without hold=1) */
static pthread_key_t pub_key;
static uint64_t untracked; /* acquisitions beyond SP_HELD_MAX held at once */

int sp_hold_ready;

/* Last owner of each lock (hold.h); written only when it changes. */
pid_t sp_hold_last_owner[1u << SP_OWNER_BITS] SP_LARGE;

/* A timed hold's since_ns: even, where the first observer's clock of an
 * untimed one (pub_lookup()) is odd, and 0 until then. */
static inline uint64_t timed_since(uint64_t t0)
{
	return sp_clock_mono_ns(t0) & ~1ull;
}

/* The held lists' activity, for the ticker (hold_tick.h): a sum of their
 * states, whether anything is held, any of it untimed, and the start of
 * the oldest timed hold; one walk of the list, as many blocks as threads
 * ever held a lock at once.  Not retried when torn: the ticker only
 * picks its next period from it. */
static void pubs_activity(struct sp_hold_activity *a)
{
	for (struct sp_hold_pub *p = sp_load_acquire(&pubs); p; p = p->next) {
		uint64_t state = sp_load_relaxed(&p->state);
		uint32_t n = SP_PUB_N(state);

		a->sum += state;
		if (!n || sp_load_relaxed(&p->tid) <= 0)
			continue;
		a->holding = 1;
		for (uint32_t i = 0; i < n && i < SP_HELD_MAX; i++) {
			uint64_t since = sp_load_acquire(&p->e[i].since_ns);

			if (!since || (since & 1))
				a->untimed = 1;
			else if (!a->oldest_ns || since < a->oldest_ns)
				a->oldest_ns = since;
		}
	}
}

static void pub_exit(void *arg)
{
	struct sp_hold_pub *p = arg;

	sp_hold_my_pub = NULL;
	/* Locks still held stay visible, as held by an exited thread. */
	sp_store_release(&p->tid, SP_PUB_N(p->state) ? -sp_load_relaxed(&p->tid) : 0);
}

static SP_NOINLINE struct sp_hold_pub *pub_get__slowpath(struct sp_thread *t)
{
	struct sp_hold_pub *p;

	for (p = sp_load_acquire(&pubs); p; p = p->next) {
		pid_t free_ = 0;

		if (__atomic_compare_exchange_n(&p->tid, &free_, t->tid, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			break;
	}
	if (!p) {
		p = sp_mmap(sizeof(*p));
		if (!p)
			return NULL;
		p->tid = t->tid;
		p->next = sp_load_relaxed(&pubs);
		while (!__atomic_compare_exchange_n(&pubs, &p->next, p, 1, __ATOMIC_RELEASE,
						    __ATOMIC_RELAXED))
			;
	}
	sp_pub_set_n(p, p->state, 0); /* sp_hold_lookup() may read it (the watchdog) */
	pthread_setspecific(pub_key, p);
	sp_hold_my_pub = p;
	return p;
}

static SP_ALWAYS_INLINE struct sp_hold_pub *pub_get(struct sp_thread *t)
{
	struct sp_hold_pub *p = sp_hold_my_pub;

	return SP_LIKELY(p) ? p : pub_get__slowpath(t);
}

static SP_ALWAYS_INLINE struct sp_held *held_find(struct sp_hold_pub *p, uintptr_t obj)
{
	for (unsigned i = SP_PUB_N(p->state); i-- > 0;)
		if (p->e[i].obj == obj)
			return &p->e[i];
	return NULL;
}

static SP_ALWAYS_INLINE void held_remove(struct sp_hold_pub *p, struct sp_held *h)
{
	uint64_t state = p->state;
	uint32_t n = SP_PUB_N(state);
	unsigned i = (unsigned)(h - p->e);

	if (SP_LIKELY(i + 1 == n)) {
		/* Released in reverse order of acquisition: pop. */
		sp_pub_set_n(p, state, i);
		return;
	}
	state = sp_pub_begin(p);
	for (; i + 1 < n; i++) {
		struct sp_held *d = &p->e[i], *from = &p->e[i + 1];

		sp_store_release(&d->obj, from->obj);
		sp_store_release(&d->where, from->where);
		sp_store_release(&d->func, from->func);
		sp_store_release(&d->info, from->info);
		sp_store_release(&d->since_ns, sp_load_relaxed(&from->since_ns));
		d->timed = from->timed;
		d->depth = from->depth;
		d->e = from->e;
		d->t0 = from->t0;
		d->paused = from->paused;
		d->weight = from->weight;
		sp_store_relaxed(&d->tick, from->tick);
	}
	sp_pub_end(p, state, n - 1);
}

/* A hold of @ns timed exactly, or bounded by the tick (long). */
static void entry_add_exact(struct sp_entry *e, uint64_t ns)
{
	struct sp_entry_cold *c = sp_entry_cold_w(e);

	sp_entry_refresh_epoch(c);
	sp_store_relaxed(&c->hold_exact_n, c->hold_exact_n + 1);
	sp_store_relaxed(&c->hold_exact_ns, c->hold_exact_ns + ns);
	if (ns > c->hold_max_ns)
		sp_store_relaxed(&c->hold_max_ns, ns);
	sp_entry_hist_add(e, SP_HIST_HOLD, ns, 1);
}

/* A short hold of @ns, timed as the sample: it stands for
 * @weight holds (sp_hold_period() when it was taken), in the sums and in
 * the histogram. */
static void entry_add_sample(struct sp_entry *e, uint64_t ns, uint32_t weight)
{
	struct sp_entry_cold *c = sp_entry_cold_w(e);

	sp_entry_refresh_epoch(c);
	sp_store_relaxed(&c->hold_sample_n, c->hold_sample_n + weight);
	sp_store_relaxed(&c->hold_sample_ns, c->hold_sample_ns + ns * weight);
	if (ns > c->hold_max_ns)
		sp_store_relaxed(&c->hold_max_ns, ns);
	sp_entry_hist_add(e, SP_HIST_HOLD, ns, weight);
	/* Past the ramp with a sample: the key is noted once, so that other
	 * threads' new entries of it skip the ramp while this one lives ("The
	 * ramp" above; an exit notes it too, at the fold). */
	if (SP_UNLIKELY(!(e->flags & SP_ENTRY_RAMP_NOTED)) && sp_hold_ramp_done(e))
		sp_store_release(&e->flags, e->flags | SP_ENTRY_RAMP_NOTED);
}

/* An acquisition that is no hold of its own (taken again by its holder,
 * untracked): the reports' count of holds leaves it out. */
static void entry_add_nonhold(struct sp_thread *t, const struct sp_site *site, uintptr_t obj,
			      int op)
{
	struct sp_entry *e = sp_entry_get(t, site, obj, op);

	if (e) {
		struct sp_entry_cold *c = sp_entry_cold_w(e);

		sp_store_relaxed(&c->hold_nonholds, c->hold_nonholds + 1);
	}
}

/* The entry of the acquisition of @h, from its published site: found,
 * never inserted (an acquisition that has none was not recorded), as
 * held_end() runs after the real unlock, when the lock's memory may be
 * gone and an insert would read its type (registry.c). */
static struct sp_entry *held_entry(const struct sp_held *h)
{
	struct sp_thread *t = sp_tls_self;
	struct sp_site site = { 0 };

	if (h->e)
		return h->e;
	if (!t)
		return NULL;
	if (h->info & SP_HELD_INSTRUMENTED) {
		site.file = (const char *)h->where;
		site.func = h->func;
		site.line = (uint32_t)h->info;
	} else {
		site.pc = h->where;
	}
	return sp_table_find(&t->table, &site, h->obj, (int)(uint8_t)(h->info >> SP_HELD_OP_SHIFT));
}

/* The lock @obj was held @ns: at 1 ms or more, time its next acquisitions. */
static void long_hold_seen(uintptr_t obj, uint64_t ns)
{
	pid_t *o = &sp_hold_last_owner[sp_owner_slot(obj)];

	if (ns >= SP_HOLD_LONG_NS)
		sp_store_relaxed(o, (sp_load_relaxed(o) & SP_OWNER_TID_MASK) |
				    SP_HOLD_LONG_COUNTDOWN << SP_OWNER_LONG_SHIFT);
}

/*
 * Count an owner change on the entry of this acquisition (the entry is
 * looked up only when the owner did change), and run the lock's countdown:
 * 1 when this acquisition is to be timed because the lock was held long
 * lately.  Races between threads on one slot (read locks, aliases) lose a
 * count or a tick of the countdown, nothing else.
 */
static int owner_change(struct sp_thread *t, const struct sp_site *site, uintptr_t obj, int op)
{
	pid_t *o = &sp_hold_last_owner[sp_owner_slot(obj)];
	pid_t cur = sp_load_relaxed(o), prev = cur & SP_OWNER_TID_MASK, next = cur;
	unsigned left = (unsigned)cur >> SP_OWNER_LONG_SHIFT;

	if (left)
		next = (pid_t)((cur & SP_OWNER_TID_MASK) | (left - 1) << SP_OWNER_LONG_SHIFT);
	if (op != SP_TYPE_RWLOCK_READ && prev != t->tid) {
		next = (next & ~SP_OWNER_TID_MASK) | t->tid;
		if (prev) {
			struct sp_entry *e = sp_entry_get(t, site, obj, op);

			if (e)
				sp_store_relaxed(&e->owner_changes, e->owner_changes + 1);
		}
	}
	if (next != cur)
		sp_store_relaxed(o, next);
	return left != 0;
}

/* An owner change of an exclusive lock without countdown
 * (sp_hold_push_ok() said 2), at the acquisition of entry @e by thread
 * @tid: it becomes the lock's last owner, and the change is counted on @e
 * when there was an owner before (owner_change() below, the general
 * path's). */
static void owner_changed(struct sp_entry *e, pid_t tid)
{
	pid_t *o = &sp_hold_last_owner[sp_owner_slot(e->obj)];

	if (sp_load_relaxed(o) & SP_OWNER_TID_MASK)
		sp_store_relaxed(&e->owner_changes, e->owner_changes + 1);
	sp_store_relaxed(o, tid);
}

SP_NOINLINE int sp_hold_push_changed(struct sp_entry *e)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	uint64_t state = p->state;

	if (sp_hold_push_ok(p, SP_PUB_N(state), e->obj, e->op) != 2)
		return 0;
	owner_changed(e, sp_load_relaxed(&p->tid));
	sp_hold_push_untimed(p, state, e->obj, e->file, e->file ? sp_entry_func(e) : NULL, e->pc,
			     e->line, e->op, e);
	return 1;
}

/*
 * A sampled hold pushed from a probe's fast path (hold.h), whose entry @e
 * it knows: the slot as sp_hold_acquired() fills it for a sampled hold,
 * without finding the entry again (the general path costs ~380
 * instructions, ~24 per lock+unlock at the default sample).  It
 * checks what the fast push checks (not held yet, room, owner unchanged,
 * no countdown) and leaves anything else to sp_hold_acquired().
 */
SP_NOINLINE int sp_hold_push_sampled(struct sp_entry *e)
{
	uintptr_t obj = e->obj;
	int op = e->op;
	struct sp_hold_pub *p = sp_hold_my_pub;
	uint64_t state = p->state;
	uint32_t n = SP_PUB_N(state);
	struct sp_held *h = &p->e[n];
	uint32_t weight;
	int ok;

	/* Decided again, with one load of the rate: the caller's may have
	 * come before the ticker changed mode (hold.h). */
	if (!times || !(weight = sp_hold_due_weight(e, e->acquisitions)) ||
	    !(ok = sp_hold_push_ok(p, n, obj, op)))
		return 0;
	if (ok == 2)
		owner_changed(e, sp_load_relaxed(&p->tid));
	sp_held_fill(h, obj, e->file, e->file ? sp_entry_func(e) : NULL, e->pc, e->line, op);
	h->depth = 1;
	h->paused = 0;
	h->timed = SP_HOLD_SAMPLED;
	h->weight = weight;
	sp_store_relaxed(&h->tick, sp_load_relaxed(&sp_hold_tick));
	h->e = e;
	h->t0 = ticks();
	sp_store_release(&h->since_ns, timed_since(h->t0));
	sp_pub_push(p, state);
	sp_hold_ticker_start_lazy();
	if (weight == 1 && !(++p->clock_n & SP_HOLD_CLOCK_BURST_MASK))
		sp_hold_clock_burst(p, h->t0);
	return 1;
}

/* @t's entry of (@site, @obj, @op), or NULL: never inserted. */
static struct sp_entry *entry_found(struct sp_thread *t, const struct sp_site *site,
				    uintptr_t obj, int op)
{
	struct sp_entry *e = t->last;

	if (e && sp_entry_matches(e, site, obj, op))
		return e;
	return sp_table_find(&t->table, site, obj, op);
}

SP_NOINLINE void sp_hold_acquired(struct sp_thread *t, uintptr_t obj, int op,
				  const struct sp_site *site)
{
	struct sp_hold_pub *p = pub_get(t);
	struct sp_held *h;
	uint64_t state;
	uint32_t n;
	struct sp_entry *e = NULL;
	int timed = SP_HOLD_UNTIMED;
	uint32_t weight = 1;

	if (SP_UNLIKELY(!p))
		return;
	h = SP_PUB_N(p->state) ? held_find(p, obj) : NULL;
	if (SP_UNLIKELY(h != NULL)) {
		/* Taken again by its holder: recursive mutex or read lock. */
		if (op == SP_TYPE_RWLOCK_READ || sp_mutex_type((void *)obj) == SP_TYPE_REC_MUTEX) {
			h->depth++;
			if (times)
				entry_add_nonhold(t, site, obj, op);
			return;
		}
		/* Otherwise a stale record (unlocked by another thread). */
		held_remove(p, h);
	}
	state = p->state;
	n = SP_PUB_N(state);
	if (SP_UNLIKELY(n == SP_HELD_MAX)) {
		sp_add_relaxed(&untracked, 1);
		if (times)
			entry_add_nonhold(t, site, obj, op);
		return;
	}
	/* Lists only: no hold is ever timed.  The sample's entry is the one
	 * the probe counted the acquisition on (t->last), found, never
	 * inserted: a full table's loss is counted once, by the probe. */
	if (owner_change(t, site, obj, op) && times)
		timed = SP_HOLD_FORCED;
	else if (times && (e = entry_found(t, site, obj, op)) &&
		 (weight = sp_hold_due_weight(e, e->acquisitions)))
		timed = SP_HOLD_SAMPLED;
	/* Slot n is not visible until n is published (hold.h). */
	h = &p->e[n];
	sp_held_fill(h, obj, site->file, site->func, site->pc, site->line, op);
	h->depth = 1;
	h->paused = 0;
	h->timed = (uint32_t)timed;
	sp_store_relaxed(&h->tick, sp_load_relaxed(&sp_hold_tick));
	if (timed) {
		/* Only a timed hold needs its entry now (found through the
		 * probe's one-entry cache). */
		h->e = e ? e : sp_entry_get(t, site, obj, op);
		h->weight = weight; /* 1 for a forced hold */
		h->t0 = ticks();
		sp_store_release(&h->since_ns, timed_since(h->t0));
	} else {
		h->e = NULL;
		sp_store_release(&h->since_ns, 0);
	}
	sp_pub_push(p, state);
	sp_hold_ticker_start_lazy();
}

/* The hold that follows is timed: a countdown of one on the lock's owner
 * slot, which the fast push leaves to sp_hold_acquired() (owner_change()
 * runs it; a lock that shares the slot may take it first, and then that
 * one is timed instead). */
void sp_hold_waited(uintptr_t obj)
{
	pid_t *o = &sp_hold_last_owner[sp_owner_slot(obj)];
	pid_t cur = sp_load_relaxed(o);

	if (times && !(cur >> SP_OWNER_LONG_SHIFT))
		sp_store_relaxed(o, cur | 1 << SP_OWNER_LONG_SHIFT);
}

/*
 * The end of hold @h at clock @now: timed holds count exactly, except that
 * a sampled one that turns out short is the sample of the short ones; an
 * untimed one that saw the tick move counts when it is long, bounded by
 * the ticks, and is one of the short ones (no sample) otherwise.
 */
static void held_end(const struct sp_held *h, uint64_t now)
{
	uint64_t start = 0, ns;
	int is_long = sp_hold_is_long(h->tick, now, &start);
	struct sp_entry *e;

	if (h->timed == SP_HOLD_UNTIMED && !is_long)
		return;
	if (!(e = held_entry(h)))
		return;
	if (h->timed == SP_HOLD_UNTIMED)
		ns = ticks_to_ns(now > start ? now - start : 0);
	else
		ns = ticks_to_ns(h->paused + (now > h->t0 ? now - h->t0 : 0));
	/* A hold timed with a weight of 1 (clock mode, the ramp,
	 * hold_sample=1) stands for itself alone: long by its own length,
	 * whatever the tick (which clock mode moves every 20 ms only). */
	if (h->timed == SP_HOLD_SAMPLED && h->weight == 1 && ns >= SP_HOLD_LONG_LO_NS)
		is_long = 1;
	if (h->timed == SP_HOLD_SAMPLED && !is_long) {
		entry_add_sample(e, ns, h->weight);
		return;
	}
	entry_add_exact(e, ns);
	long_hold_seen(h->obj, ns);
	sp_hold_ticker_long_ended(ns);
}

/*
 * The end of a sampled hold released in order at the tick it began at,
 * the common case of what the inlined pop (hold.h) leaves here: what
 * held_end() and held_remove() do for it - it is short, so it is the
 * sample of the short holds - without their lookups (with them, ~260
 * instructions, ~16 per lock+unlock at the default sample).  Not in the inlined pop: a call
 * there made every unlock shim save a register.
 */
static SP_ALWAYS_INLINE int released_sampled(struct sp_hold_pub *p, uintptr_t obj, uint64_t now)
{
	uint64_t state = p->state;
	struct sp_held *h;

	if (!SP_PUB_N(state))
		return 0;
	h = &p->e[SP_PUB_N(state) - 1];
	if (!SP_HELD_IN_ORDER(h, obj, SP_HOLD_SAMPLED) || !h->e)
		return 0;
	if (!now)
		now = ticks();
	/* Long by its own length (held_end()), though the tick stood. */
	if (h->weight == 1 && now > h->t0 && now - h->t0 >= sp_hold_long_lo_ticks())
		return 0;
	entry_add_sample(h->e, ticks_to_ns(h->paused + (now > h->t0 ? now - h->t0 : 0)), h->weight);
	sp_pub_pop(p, state);
	return 1;
}

SP_NOINLINE void sp_hold_released_at(uintptr_t obj, uint64_t now)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_held *h;

	if (SP_LIKELY(p) && released_sampled(p, obj, now))
		return;
	if (SP_UNLIKELY(!p) || !(h = held_find(p, obj)))
		return; /* not ours: another thread's lock, or taken before */
	if (--h->depth)
		return;
	if (times && (h->timed || h->tick != sp_load_relaxed(&sp_hold_tick)))
		held_end(h, now ? now : ticks());
	held_remove(p, h);
}

void sp_hold_released(uintptr_t obj)
{
	sp_hold_released_at(obj, 0);
}

/* A condition wait releases its mutex (nobody to blame meanwhile) and
 * retakes it: the hold's exclusive flag, changed in place. */
static void held_set_exclusive(struct sp_hold_pub *p, struct sp_held *h, int on)
{
	uint64_t state = sp_pub_begin(p);

	sp_store_release(&h->info, on ? h->info | SP_HELD_EXCLUSIVE : h->info & ~SP_HELD_EXCLUSIVE);
	sp_pub_end(p, state, SP_PUB_N(state));
}

/* A hold that spans a condition wait is timed from then on (forced), the
 * wait left out; the part before the wait of an untimed one is bounded by
 * the tick (0 when the tick did not move: less than a tick). */
SP_NOINLINE void sp_hold_cond_begin(uintptr_t obj)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_held *h = p ? held_find(p, obj) : NULL;

	if (!h)
		return;
	if (times) {
		uint64_t now = ticks(), start = 0;

		if (h->timed)
			h->paused += now > h->t0 ? now - h->t0 : 0;
		else if ((sp_hold_is_long(h->tick, now, &start), start) && now > start)
			h->paused = now - start;
		if (!h->e)
			h->e = held_entry(h);
		h->timed = SP_HOLD_FORCED;
	}
	held_set_exclusive(p, h, 0);
}

SP_NOINLINE void sp_hold_cond_end(uintptr_t obj)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_held *h = p ? held_find(p, obj) : NULL;

	if (!h)
		return;
	if (h->timed)
		h->t0 = ticks();
	/* Its age for long holds (holdstate.c) starts again: the wait was
	 * not holding.  Published with the flag (the section's seq). */
	sp_store_relaxed(&h->tick, sp_load_relaxed(&sp_hold_tick));
	held_set_exclusive(p, h, 1);
}

/* Copy the hold of @obj in @p, if any; 1 when found (untorn). */
static int pub_lookup(struct sp_hold_pub *p, uintptr_t obj, pid_t *tid, struct sp_site *site,
		      uint64_t *since_ns)
{
	for (int attempt = 0; attempt < 16; attempt++) {
		uint64_t q = sp_load_acquire(&p->state);
		uint32_t n = SP_PUB_N(q);
		pid_t who = sp_load_acquire(&p->tid);
		int found = -1;
		struct sp_site st = { 0 };
		uint64_t since = 0;

		if ((q >> 32) & 1)
			continue;
		if (n > SP_HELD_MAX)
			n = SP_HELD_MAX;
		for (unsigned i = 0; i < n; i++) {
			uint64_t info;

			if (sp_load_acquire(&p->e[i].obj) != obj)
				continue;
			info = sp_load_acquire(&p->e[i].info);
			if (!(info & SP_HELD_EXCLUSIVE))
				continue;
			found = (int)i;
			if (info & SP_HELD_INSTRUMENTED) {
				st.file = (const char *)sp_load_acquire(&p->e[i].where);
				st.func = sp_load_acquire(&p->e[i].func);
				st.line = (uint32_t)info;
			} else {
				st.pc = sp_load_acquire(&p->e[i].where);
			}
			since = sp_load_acquire(&p->e[i].since_ns);
			break;
		}
		if (sp_load_acquire(&p->state) != q)
			continue;
		if (found < 0 || !who)
			return 0;
		if (!since && since_ns) {
			/* Untimed hold: the first observer's clock is the bound. */
			/* Odd: the ticker tells it from a timed hold's
			 * (timed_since()). */
			uint64_t now = sp_now_ns() | 1, zero = 0;

			__atomic_compare_exchange_n(&p->e[found].since_ns, &zero, now, 0,
						    __ATOMIC_RELAXED, __ATOMIC_RELAXED);
			since = zero ? zero : now;
			if (sp_load_acquire(&p->state) != q)
				continue;
		}
		*tid = who < 0 ? -who : who;
		*site = st;
		if (since_ns)
			*since_ns = since;
		return 1;
	}
	return 0;
}

int sp_hold_lookup(uintptr_t obj, pid_t *tid, struct sp_site *site, uint64_t *since_ns)
{
	pid_t best_tid = 0;
	struct sp_site best_site = { 0 };
	uint64_t best_since = 0;
	int found = 0;

	if (!obj || !sp_hold_is_on_acquire())
		return -ENOENT;
	for (struct sp_hold_pub *p = sp_load_acquire(&pubs); p; p = p->next) {
		pid_t who;
		struct sp_site st;
		uint64_t since = 0;

		if (!sp_load_relaxed(&p->tid) || !pub_lookup(p, obj, &who, &st, &since))
			continue;
		/* Several claims (a holder that exited, then a new owner): the
		 * latest acquisition is the live one. */
		if (!found || since >= best_since) {
			best_tid = who;
			best_site = st;
			best_since = since;
			found = 1;
		}
	}
	if (!found)
		return -ENOENT;
	if (tid)
		*tid = best_tid;
	if (site)
		*site = best_site;
	if (since_ns)
		*since_ns = best_since;
	return 0;
}

/* The first block of the list (hold.h), for the other walkers of the
 * published lists (wait_pub.c: who holds a lock for reading). */
struct sp_hold_pub *sp_hold_pubs(void)
{
	return sp_load_acquire(&pubs);
}

uint64_t sp_hold_untracked(void)
{
	return sp_load_relaxed(&untracked);
}

/*
 * In a child of fork() only the forking thread exists: its block gets the
 * child's tid; the other threads' blocks keep the locks they held (they
 * stay locked in the child) as held by exited threads, or are freed.
 */
void sp_hold_fork_child(void)
{
	for (struct sp_hold_pub *p = sp_load_acquire(&pubs); p; p = p->next) {
		pid_t tid = sp_load_relaxed(&p->tid);

		if (p == sp_hold_my_pub)
			sp_store_release(&p->tid, sp_gettid());
		else if (tid > 0)
			sp_store_release(&p->tid, SP_PUB_N(p->state) ? -tid : 0);
	}
	sp_hold_ticker_fork_child();
}

int sp_hold_times_are_on(void)
{
	return sp_hold_is_on() && times;
}

int sp_hold_all_timed(void)
{
	return sp_hold_rate.pmax == 1;
}

int sp_hold_init(unsigned sample, int with_times, int clock_policy)
{
	if (sp_hold_is_on())
		return 0;
	times = with_times;
	if (times)
		sp_clock_calibrate_now();
	if (!sample)
		sample = 1;
	if (times)
		sp_hold_rate = (struct sp_hold_rate){ UINT64_MAX / sample,
						      (uint64_t)sample << SP_HOLD_RAMP_SHIFT,
						      sample };
	else
		sp_hold_rate = (struct sp_hold_rate){ 0, 0, 1 };
	if (pthread_key_create(&pub_key, pub_exit))
		return -ENOMEM;
	/* Without a ticker, every hold counts as short: sampled, as before. */
	if (times)
		sp_hold_ticker_init(pubs_activity, clock_policy);
	sp_store_release(&sp_hold_ready, 1);
	sp_unlock_hooks_set(SP_UNLOCK_HOOK_HOLD, 1); /* instrumented unlocks reach us */
	return 0;
}
