/*
 * hold.c - hold times, owner changes and blame (SYNCPROF_OPTIONS hold=1,
 * syncprof run --hold).
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
 * Hold times are sampled: one acquisition in sp_opts.hold_sample (16 by
 * default, a random gap averaging that so a periodic program does not
 * alias with it) reads the TSC at acquisition and release and adds the
 * hold to its entry with weight hold_sample (single writer, relaxed
 * stores, as probe.c).  holds, hold_ns and hold_hist are thus unbiased
 * estimates, hold_max_ns the maximum of the sampled holds; hold_sample=1
 * times every hold.  Owner changes compare the acquiring thread with the
 * last owner of the lock in a direct-mapped array indexed by address,
 * written only when the owner changes.
 *
 * Lists only.  Lock-order checking (lockorder.c) needs the published
 * lists and nothing else: with lock_order=1 and not hold=1, no hold is
 * timed (the countdown to the next sample is reset instead of reaching
 * it, so the fast paths stay as they are), no waiter looks up its holder
 * for blame and reports show no hold facts; last owners are still kept,
 * as the fast path reads them.
 *
 * Time: the one clock of base/clock.c, calibrated at once when hold
 * tracking starts (2 ms, only with hold=1).  sp_hold_lookup() reports since
 * when a lock is held: exactly for a timed hold; for an untimed one, the
 * first time any caller of sp_hold_lookup() saw it held (a lower bound of
 * its age, as fine as the watchdog's polling).
 *
 * Measured (lockbench, 1 thread, 1 lock, preload; bench/preload_bench.sh):
 * a global table of owner slots claimed with a CAS plus two TSC reads per
 * lock+unlock cost ~4x plain (rdtsc is ~19 ns on this VM); the published
 * per-thread lists with every hold timed, ~3x; sampled, ~1.45-1.8x; with
 * the fast paths of hold.h inlined into the probes and one store per push
 * or pop, ~1.43x (the rest of the cost: the timed samples, ~1/3).
 *
 * Limits: a lock released by another thread than its owner loses that
 * hold (the owner's record is dropped at its next acquisition of the
 * lock); more than SP_HELD_MAX locks held at once by one thread are not
 * tracked (counted in untracked); owner changes are approximate when two
 * locks share a last-owner slot; a waiter's lookup costs a walk over the
 * threads' blocks (contended path only).
 *
 * Alternatives considered: keeping the holder in the entry (a waiter in
 * another thread cannot find it without searching every table); timing
 * every hold (see above); a clock read only at release with the
 * acquisition time taken from the probe (the probe reads no clock when
 * uncontended, by design).
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <string.h>

#include "hold.h"
#include "probe.h"


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

/* ---- per-thread published held locks -------------------------------------- */

static struct sp_hold_pub *pubs; /* list head; blocks are never unmapped */
SP_TLS struct sp_hold_pub *sp_hold_my_pub;
SP_TLS unsigned sp_hold_sample_left;
static SP_TLS uint32_t sample_rng;
static unsigned sample_period = 1;
static int times = 1; /* 0: lists only (lock order without hold=1) */
static pthread_key_t pub_key;
static uint64_t untracked; /* acquisitions beyond SP_HELD_MAX held at once */

int sp_hold_ready;

/* Last owner of each lock (hold.h); written only when it changes. */
pid_t *sp_hold_last_owner;

static void pub_exit(void *arg)
{
	struct sp_hold_pub *p = arg;

	sp_hold_my_pub = NULL;
	/* Locks still held stay visible, as held by an exited thread. */
	sp_store_release(&p->tid, SP_PUB_N(p->state) ? -p->tid : 0);
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
	}
	sp_pub_end(p, state, n - 1);
}

static void entry_add_hold(struct sp_entry *e, uint64_t ns, unsigned weight)
{
	struct sp_entry_cold *c = e->cold;

	sp_entry_refresh_epoch(c);
	sp_store_relaxed(&c->holds, c->holds + weight);
	sp_store_relaxed(&c->hold_ns, c->hold_ns + ns * weight);
	if (ns > c->hold_max_ns)
		sp_store_relaxed(&c->hold_max_ns, ns);
	sp_entry_hist_add(e, SP_HIST_HOLD, ns, weight);
}

/* Count an owner change on the entry of this acquisition; the entry is
 * looked up only when the owner did change. */
static void owner_change(struct sp_thread *t, const struct sp_site *site, uintptr_t obj, int op)
{
	pid_t *o = &sp_hold_last_owner[sp_owner_slot(obj)];
	pid_t prev = sp_load_relaxed(o);

	if (SP_LIKELY(prev == t->tid))
		return;
	sp_store_relaxed(o, t->tid);
	if (prev) {
		struct sp_entry *e = sp_entry_get(t, site, obj, op);

		if (e)
			sp_store_relaxed(&e->cold->owner_changes, e->cold->owner_changes + 1);
	}
}

SP_NOINLINE void sp_hold_acquired(struct sp_thread *t, uintptr_t obj, int op,
				  const struct sp_site *site)
{
	struct sp_hold_pub *p = pub_get(t);
	struct sp_held *h;
	uint64_t state;
	uint32_t n;
	int timed;

	if (SP_UNLIKELY(!p))
		return;
	h = SP_PUB_N(p->state) ? held_find(p, obj) : NULL;
	if (SP_UNLIKELY(h != NULL)) {
		/* Taken again by its holder: recursive mutex or read lock. */
		if (op == SP_TYPE_RWLOCK_READ || sp_mutex_type((void *)obj) == SP_TYPE_REC_MUTEX) {
			h->depth++;
			return;
		}
		/* Otherwise a stale record (unlocked by another thread). */
		held_remove(p, h);
	}
	state = p->state;
	n = SP_PUB_N(state);
	if (SP_UNLIKELY(n == SP_HELD_MAX)) {
		sp_add_relaxed(&untracked, 1);
		return;
	}
	if (op != SP_TYPE_RWLOCK_READ)
		owner_change(t, site, obj, op);
	timed = SP_UNLIKELY(sp_hold_sample_left <= 1);
	if (SP_UNLIKELY(timed && !times)) {
		/* Lists only: no sample is ever taken. */
		timed = 0;
		sp_hold_sample_left = UINT_MAX;
	}
	/* Slot n is not visible until n is published (hold.h). */
	h = &p->e[n];
	sp_held_fill(h, obj, site->file, site->func, site->pc, site->line,
		     op != SP_TYPE_RWLOCK_READ);
	h->depth = 1;
	h->paused = 0;
	h->timed = (uint32_t)timed;
	if (timed) {
		/* This one is timed.  The gap to the next timed one is random,
		 * 1 to 2 * period - 1 (mean: period), so that sampling does
		 * not alias with a periodic program (A, B, A, B...).  Only a
		 * timed hold needs its entry (found through the probe's
		 * one-entry cache). */
		uint32_t x = sample_rng ? sample_rng : (uint32_t)t->tid * 2654435761u + 1;

		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		sample_rng = x;
		sp_hold_sample_left = 1 + x % (2 * sample_period - 1);
		h->e = sp_entry_get(t, site, obj, op);
		h->t0 = ticks();
		sp_store_release(&h->since_ns, sp_clock_mono_ns(h->t0));
	} else {
		sp_hold_sample_left--;
		h->e = NULL;
		sp_store_release(&h->since_ns, 0);
	}
	sp_pub_set_n(p, state, n + 1);
}

SP_NOINLINE void sp_hold_released(uintptr_t obj)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_held *h;

	if (SP_UNLIKELY(!p) || !(h = held_find(p, obj)))
		return; /* not ours: another thread's lock, or taken before */
	if (--h->depth)
		return;
	if (h->timed && h->e)
		entry_add_hold(h->e, ticks_to_ns(h->paused + ticks() - h->t0), sample_period);
	held_remove(p, h);
}

/* A condition wait releases its mutex (nobody to blame meanwhile) and
 * retakes it: the hold's exclusive flag, changed in place. */
static void held_set_exclusive(struct sp_hold_pub *p, struct sp_held *h, int on)
{
	uint64_t state = sp_pub_begin(p);

	sp_store_release(&h->info, on ? h->info | SP_HELD_EXCLUSIVE : h->info & ~SP_HELD_EXCLUSIVE);
	sp_pub_end(p, state, SP_PUB_N(state));
}

SP_NOINLINE void sp_hold_cond_begin(uintptr_t obj)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_held *h = p ? held_find(p, obj) : NULL;

	if (!h)
		return;
	if (h->timed)
		h->paused += ticks() - h->t0;
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
			uint64_t now = sp_now_ns(), zero = 0;

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

/* ---- blame ---------------------------------------------------------------- */

#define BLAME_SLOTS 8192
#define BLAME_PROBES 64

struct blame_rec {
	uint64_t hash;  /* 0: free; claimed with a CAS */
	int ready;      /* key written (release) */
	uint8_t type;
	uintptr_t obj;
	struct sp_site waiter;
	struct sp_site holder;
	struct sp_site root;       /* a wait chain's root holder; zero: none seen */
	uint64_t wait_ns, count;   /* relaxed atomic adds */
	uint64_t snap_wait, snap_count;
};

static struct blame_rec *blame;
static uint64_t blame_lost;

static uint64_t site_hash(const struct sp_site *s)
{
	return ((uint64_t)(uintptr_t)s->file + s->pc + ((uint64_t)s->line << 7)) *
	       0xC2B2AE3D27D4EB4Full;
}

static int site_eq(const struct sp_site *a, const struct sp_site *b)
{
	return a->file == b->file && a->pc == b->pc && a->line == b->line && a->func == b->func;
}

static void blame_add(const struct sp_entry *e, const struct sp_site *holder,
		      const struct sp_site *root_or_null, uint64_t wait)
{
	static const struct sp_site none;
	const struct sp_site *root = root_or_null ? root_or_null : &none;
	struct sp_site w = { e->file, e->cold->func, e->pc, e->line };
	uint64_t h = (site_hash(&w) ^ (site_hash(holder) >> 3) ^ (site_hash(root) >> 5) ^
		      (e->obj * 0x9E3779B97F4A7C15ull) ^ e->type) | 1;

	if (!blame)
		return;
	for (unsigned i = 0; i < BLAME_PROBES; i++) {
		struct blame_rec *r = &blame[(h + i) & (BLAME_SLOTS - 1)];
		uint64_t cur = sp_load_acquire(&r->hash);

		if (!cur) {
			if (!__atomic_compare_exchange_n(&r->hash, &cur, h, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_ACQUIRE))
				goto taken;
			r->type = e->type;
			r->obj = e->obj;
			r->waiter = w;
			r->holder = *holder;
			r->root = *root;
			sp_store_release(&r->ready, 1);
			cur = h;
		}
	taken:
		if (cur != h)
			continue;
		for (int spin = 0; !sp_load_acquire(&r->ready); spin++)
			if (spin > 1000)
				goto lost; /* its writer was preempted; rare */
		if (r->type != e->type || r->obj != e->obj || !site_eq(&r->waiter, &w) ||
		    !site_eq(&r->holder, holder) || !site_eq(&r->root, root))
			continue;
		sp_add_relaxed(&r->wait_ns, wait);
		sp_add_relaxed(&r->count, 1);
		return;
	}
lost:
	sp_add_relaxed(&blame_lost, 1);
}

/*
 * Every blame record, net of the last reset's snapshot, to @fn.  Any
 * thread; callers serialise with resets (report_lock).  Records still
 * being claimed are skipped.
 */
void sp_blame_foreach(void (*fn)(const struct sp_blame_view *b, void *arg), void *arg)
{
	if (!blame)
		return;
	for (size_t i = 0; i < BLAME_SLOTS; i++) {
		const struct blame_rec *b = &blame[i];
		struct sp_blame_view v;
		uint64_t wait, count;

		if (!sp_load_acquire(&b->ready))
			continue;
		wait = sp_load_relaxed(&b->wait_ns);
		count = sp_load_relaxed(&b->count);
		v.wait_ns = wait > b->snap_wait ? wait - b->snap_wait : 0;
		v.count = count > b->snap_count ? count - b->snap_count : 0;
		if (!v.count)
			continue;
		v.type = b->type;
		v.obj = b->obj;
		v.waiter = b->waiter;
		v.holder = b->holder;
		v.root = b->root;
		fn(&v, arg);
	}
}

void sp_hold_losses(uint64_t *untracked_holds, uint64_t *lost_blame)
{
	*untracked_holds = sp_load_relaxed(&untracked);
	*lost_blame = sp_load_relaxed(&blame_lost);
}

/* Under report_lock (runtime.c): later reports subtract these. */
void sp_hold_snapshot(void)
{
	if (!blame)
		return;
	for (size_t i = 0; i < BLAME_SLOTS; i++) {
		struct blame_rec *b = &blame[i];

		if (!sp_load_acquire(&b->ready))
			continue;
		b->snap_wait = sp_load_relaxed(&b->wait_ns);
		b->snap_count = sp_load_relaxed(&b->count);
	}
}

/* ---- contended waits -------------------------------------------------------- */

void sp_wait_begin(uintptr_t obj, struct sp_wait_ctx *w)
{
	w->have_holder = 0;
	w->root = NULL;
	if (!sp_hold_is_on() || !times)
		return;
	w->have_holder = !sp_hold_lookup(obj, NULL, &w->holder, NULL);
}

void sp_wait_end(struct sp_entry *e, uint64_t wait_ns, const struct sp_wait_ctx *w)
{
	struct sp_entry_cold *c = e->cold;

	if (w && w->have_holder)
		blame_add(e, &w->holder, w->root, wait_ns);
	if (e->pc && !sp_load_relaxed(&c->n_frames) && sp_stack_frames && sp_tls_self) {
		uintptr_t f[SP_MAX_FRAMES];
		unsigned n = sp_stack_capture(e->pc, f, sp_stack_frames);
		uintptr_t *kept = n ? sp_table_alloc(&sp_tls_self->table, n * sizeof(*f)) : NULL;

		if (kept) {
			memcpy(kept, f, n * sizeof(*f));
			c->frames = kept;
			sp_store_release(&c->n_frames, (uint8_t)n);
		}
	}
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
}

int sp_hold_times_are_on(void)
{
	return sp_hold_is_on() && times;
}

int sp_hold_init(unsigned sample, int with_times)
{
	if (sp_hold_is_on())
		return 0;
	times = with_times;
	if (times)
		sp_clock_calibrate_now();
	sample_period = sample ? sample : 1;
	blame = sp_mmap(BLAME_SLOTS * sizeof(*blame));
	sp_hold_last_owner = sp_mmap(sizeof(*sp_hold_last_owner) << SP_OWNER_BITS);
	if (!blame || !sp_hold_last_owner || pthread_key_create(&pub_key, pub_exit))
		return -ENOMEM;
	sp_store_release(&sp_hold_ready, 1);
	sp_unlock_hooks_set(SP_UNLOCK_HOOK_HOLD, 1); /* instrumented unlocks reach us */
	return 0;
}
