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
 * Design.  Each thread keeps a small stack of the locks it holds (TLS,
 * initial-exec, no malloc): acquisition pushes {object, entry, start},
 * release pops it and adds the hold to the entry, which the thread owns
 * (single writer, relaxed stores, as in probe.c).  Recursive mutexes and
 * read locks taken again by the same thread only bump a depth: the hold
 * lasts from the outermost acquisition to the last release.  A condition
 * wait pauses the hold of its mutex.
 *
 * Who holds an exclusive lock must be visible to other threads (blame and
 * sp_hold_lookup() for the watchdog), so an exclusive acquisition also
 * claims a slot in a global, mmap'd, direct-mapped table indexed by the
 * lock's address (4 probes, then the hold is tracked for time only and
 * counted in collisions).  A slot's fields are written only by the thread
 * that holds the lock, inside a sequence-counter section, so readers
 * (any thread) copy them lock-free and retry on a torn copy; they never
 * block or write to the recording thread.  Read locks have no slot
 * (several holders).  The slot's cache line is written once per exclusive
 * acquisition and once per release: that is the cost of --hold, on top of
 * two TSC reads; nothing of this runs when hold tracking is off.
 *
 * Time: the TSC (rdtsc, ~10 ns here) converted with a factor calibrated
 * against CLOCK_MONOTONIC at start-up (2 ms); clock_gettime costs ~22 ns
 * here and two of them per lock+unlock missed the 1.6x bar.  Other
 * architectures use CLOCK_MONOTONIC.
 *
 * Limits: a lock released by another thread than its owner has its hold
 * dropped (the owner's stack entry is replaced at its next acquisition of
 * that lock); more than HELD_MAX locks held at once by one thread are not
 * timed (counted in untracked); owner changes are approximate when two
 * locks share a slot.
 *
 * Alternatives considered: one global owner table for everything (hold
 * time too) makes the release path a hash lookup on a shared line; keeping
 * the holder in the entry does not tell a waiter in another thread who
 * holds the lock without a search over every thread's table.
 */
#include <errno.h>
#include <string.h>

#include "probe.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#define HAVE_TSC 1
#endif

int sp_hold_on;

/* ---- clock --------------------------------------------------------------- */

static uint64_t tick_mult = 1 << 20; /* ns = ticks * tick_mult >> 20 */
static uint64_t tick0, ns0;          /* calibration origin */

static SP_ALWAYS_INLINE uint64_t ticks(void)
{
#ifdef HAVE_TSC
	return __rdtsc();
#else
	return sp_now_ns();
#endif
}

static uint64_t ticks_to_ns(uint64_t t)
{
	return (uint64_t)(((unsigned __int128)t * tick_mult) >> 20);
}

static void clock_calibrate(void)
{
#ifdef HAVE_TSC
	uint64_t t1, n1;

	ns0 = sp_now_ns();
	tick0 = ticks();
	do {
		n1 = sp_now_ns();
		t1 = ticks();
	} while (n1 - ns0 < 2000000);
	if (t1 > tick0)
		tick_mult = (uint64_t)(((unsigned __int128)(n1 - ns0) << 20) / (t1 - tick0));
#else
	ns0 = tick0 = sp_now_ns();
#endif
}

/* ---- owner slots ---------------------------------------------------------- */

#define SLOT_BITS 14
#define N_SLOTS (1u << SLOT_BITS)
#define SLOT_PROBES 4

struct hold_slot {
	uintptr_t obj;      /* 0: free; claimed with a CAS by the new holder */
	uint32_t seq;       /* odd while the holder writes the fields below */
	pid_t tid;
	uint64_t since;     /* ticks */
	struct sp_site site;
	uintptr_t last_obj; /* last lock held through this slot, and by whom */
	pid_t last_tid;
};

static struct hold_slot *slots;
static uint64_t collisions, untracked;

static size_t slot_hash(uintptr_t obj)
{
	uint64_t h = (uint64_t)obj * 0x9E3779B97F4A7C15ull;

	return (size_t)(h >> (64 - SLOT_BITS));
}

static void slot_write(struct hold_slot *s, pid_t tid, uint64_t since, const struct sp_site *site)
{
	uint32_t q = s->seq;

	sp_store_relaxed(&s->seq, q + 1);
	__atomic_thread_fence(__ATOMIC_RELEASE); /* seq odd before the fields */
	sp_store_relaxed(&s->tid, tid);
	sp_store_relaxed(&s->since, since);
	sp_store_relaxed(&s->site.file, site ? site->file : NULL);
	sp_store_relaxed(&s->site.func, site ? site->func : NULL);
	sp_store_relaxed(&s->site.pc, site ? site->pc : 0);
	sp_store_relaxed(&s->site.line, site ? site->line : 0);
	sp_store_release(&s->seq, q + 2);
}

/* Claim a slot for @obj, which the caller now holds exclusively; -1 if none. */
static int slot_claim(struct sp_thread *t, struct sp_entry *e, uintptr_t obj, uint64_t now,
		      const struct sp_site *site)
{
	size_t h = slot_hash(obj);

	if (!slots)
		return -1;
	for (unsigned i = 0; i < SLOT_PROBES; i++) {
		size_t k = (h + i) & (N_SLOTS - 1);
		struct hold_slot *s = &slots[k];
		uintptr_t cur = sp_load_acquire(&s->obj);

		/* Same object still recorded: its holder died or unlocked it in
		 * another thread; we hold it now, so the slot is ours. */
		if (cur != obj) {
			if (cur)
				continue;
			if (!__atomic_compare_exchange_n(&s->obj, &cur, obj, 0, __ATOMIC_ACQ_REL,
							 __ATOMIC_RELAXED))
				continue;
		}
		if (s->last_obj == obj && s->last_tid != t->tid && e)
			sp_store_relaxed(&e->owner_changes, e->owner_changes + 1);
		s->last_obj = obj;
		s->last_tid = t->tid;
		slot_write(s, t->tid, now, site);
		return (int)k;
	}
	sp_add_relaxed(&collisions, 1);
	return -1;
}

static void slot_free(int k, uintptr_t obj)
{
	struct hold_slot *s = &slots[k];

	if (sp_load_relaxed(&s->obj) != obj)
		return;
	slot_write(s, 0, 0, NULL);
	sp_store_release(&s->obj, 0); /* last: the slot may be claimed again */
}

int sp_hold_lookup(uintptr_t obj, pid_t *tid, struct sp_site *site, uint64_t *since_ns)
{
	size_t h = slot_hash(obj);
	struct hold_slot *all = sp_load_acquire(&slots);

	if (!all || !obj)
		return -ENOENT;
	for (unsigned i = 0; i < SLOT_PROBES; i++) {
		struct hold_slot *s = &all[(h + i) & (N_SLOTS - 1)];

		for (int attempt = 0; attempt < 8; attempt++) {
			uint32_t q1 = sp_load_acquire(&s->seq);
			uintptr_t o = sp_load_relaxed(&s->obj);
			pid_t who = sp_load_relaxed(&s->tid);
			uint64_t since = sp_load_relaxed(&s->since);
			struct sp_site st;

			st.file = sp_load_relaxed(&s->site.file);
			st.func = sp_load_relaxed(&s->site.func);
			st.pc = sp_load_relaxed(&s->site.pc);
			st.line = sp_load_relaxed(&s->site.line);
			__atomic_thread_fence(__ATOMIC_ACQUIRE);
			if ((q1 & 1) || sp_load_relaxed(&s->seq) != q1)
				continue; /* torn: a holder is writing; copy again */
			if (o != obj || !who)
				break;
			if (tid)
				*tid = who;
			if (site)
				*site = st;
			if (since_ns)
				*since_ns = since > tick0 ? ns0 + ticks_to_ns(since - tick0) : ns0;
			return 0;
		}
	}
	return -ENOENT;
}

/* ---- the thread's held locks ---------------------------------------------- */

#define HELD_MAX 24

struct held {
	uintptr_t obj;
	struct sp_entry *e;
	uint64_t t0;      /* ticks at acquisition (or at the end of a cond wait) */
	uint64_t paused;  /* ticks held before a cond wait */
	uint32_t depth;
	int32_t slot;
	struct sp_site site;
};

static SP_TLS struct held held[HELD_MAX];
static SP_TLS unsigned n_held;

static struct held *held_find(uintptr_t obj)
{
	for (unsigned i = n_held; i-- > 0;)
		if (held[i].obj == obj)
			return &held[i];
	return NULL;
}

static void held_remove(struct held *h)
{
	unsigned i = (unsigned)(h - held);

	memmove(&held[i], &held[i + 1], (n_held - i - 1) * sizeof(*h));
	n_held--;
}

static void entry_add_hold(struct sp_entry *e, uint64_t ns)
{
	unsigned b = sp_hist_bucket(ns);
	uint32_t epoch = sp_load_relaxed(&sp_reset_epoch);

	if (SP_UNLIKELY(e->epoch != epoch)) {
		/* Same lazy reset of the maxima as probe.c. */
		sp_store_relaxed(&e->wait_max_ns, 0);
		sp_store_relaxed(&e->hold_max_ns, 0);
		sp_store_release(&e->epoch, epoch);
	}
	sp_store_relaxed(&e->holds, e->holds + 1);
	sp_store_relaxed(&e->hold_ns, e->hold_ns + ns);
	if (ns > e->hold_max_ns)
		sp_store_relaxed(&e->hold_max_ns, ns);
	sp_store_relaxed(&e->hold_hist[b], e->hold_hist[b] + 1);
}

SP_NOINLINE void sp_hold_acquired(struct sp_thread *t, uintptr_t obj, int op,
				  const struct sp_site *site)
{
	uint64_t now = ticks();
	struct sp_entry *e = sp_entry_get(t, site, obj, op);
	struct held *h = held_find(obj);

	if (h) {
		/* Taken again by its holder: recursive mutex or read lock. */
		if (op == SP_TYPE_RWLOCK_READ || (h->e && h->e->type == SP_TYPE_REC_MUTEX)) {
			h->depth++;
			return;
		}
		/* Otherwise a stale record (unlocked by another thread). */
		held_remove(h);
	}
	if (n_held == HELD_MAX) {
		sp_add_relaxed(&untracked, 1);
		return;
	}
	h = &held[n_held++];
	h->obj = obj;
	h->e = e;
	h->t0 = now;
	h->paused = 0;
	h->depth = 1;
	h->site = *site;
	h->slot = op == SP_TYPE_RWLOCK_READ ? -1 : slot_claim(t, e, obj, now, site);
}

SP_NOINLINE void sp_hold_released(uintptr_t obj)
{
	struct held *h = held_find(obj);

	if (!h) {
		/* Not ours (another thread's lock, or taken before tracking):
		 * forget the recorded holder, the lock is free now. */
		size_t k = slot_hash(obj);

		if (slots)
			for (unsigned i = 0; i < SLOT_PROBES; i++)
				slot_free((int)((k + i) & (N_SLOTS - 1)), obj);
		return;
	}
	if (--h->depth)
		return;
	if (h->e)
		entry_add_hold(h->e, ticks_to_ns(h->paused + ticks() - h->t0));
	if (h->slot >= 0)
		slot_free(h->slot, obj);
	held_remove(h);
}

SP_NOINLINE void sp_hold_cond_begin(uintptr_t obj)
{
	struct held *h = held_find(obj);

	if (!h)
		return;
	h->paused += ticks() - h->t0;
	if (h->slot >= 0) {
		slot_free(h->slot, obj);
		h->slot = -1;
	}
}

SP_NOINLINE void sp_hold_cond_end(uintptr_t obj)
{
	struct held *h = held_find(obj);
	struct sp_thread *t = sp_tls_self;

	if (!h)
		return;
	h->t0 = ticks();
	if (t && h->slot < 0)
		h->slot = slot_claim(t, NULL, obj, h->t0, &h->site);
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

static void blame_add(const struct sp_entry *e, const struct sp_site *holder, uint64_t wait)
{
	struct sp_site w = { e->file, e->func, e->pc, e->line };
	uint64_t h = (site_hash(&w) ^ (site_hash(holder) >> 3) ^ (e->obj * 0x9E3779B97F4A7C15ull) ^
		      e->type) | 1;

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
		    !site_eq(&r->holder, holder))
			continue;
		sp_add_relaxed(&r->wait_ns, wait);
		sp_add_relaxed(&r->count, 1);
		return;
	}
lost:
	sp_add_relaxed(&blame_lost, 1);
}

static int str_same(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

static int row_matches(const struct sp_row *r, const struct blame_rec *b, int coalesced)
{
	return b->type == r->type && b->waiter.pc == r->pc && b->waiter.line == r->line &&
	       (coalesced || b->obj == r->obj) && str_same(b->waiter.file, r->file) &&
	       str_same(b->waiter.func, r->func);
}

size_t sp_blame_for_row(const struct sp_row *r, int coalesced, struct sp_blame *out, size_t max)
{
	size_t n = 0;

	if (!blame)
		return 0;
	for (size_t i = 0; i < BLAME_SLOTS; i++) {
		const struct blame_rec *b = &blame[i];
		uint64_t wait, count;
		size_t j;

		if (!sp_load_acquire(&b->ready) || !row_matches(r, b, coalesced))
			continue;
		wait = sp_load_relaxed(&b->wait_ns);
		count = sp_load_relaxed(&b->count);
		wait = wait > b->snap_wait ? wait - b->snap_wait : 0;
		count = count > b->snap_count ? count - b->snap_count : 0;
		if (!count)
			continue;
		for (j = 0; j < n; j++)
			if (site_eq(&out[j].holder, &b->holder) ||
			    (!out[j].holder.pc && str_same(out[j].holder.file, b->holder.file) &&
			     out[j].holder.line == b->holder.line))
				break;
		if (j == n) {
			if (n == max) {
				/* Full: replace the smallest if this one is larger. */
				size_t m = 0;

				for (size_t k = 1; k < n; k++)
					if (out[k].wait_ns < out[m].wait_ns)
						m = k;
				if (out[m].wait_ns >= wait)
					continue;
				j = m;
			} else {
				n++;
			}
			out[j].holder = b->holder;
			out[j].wait_ns = 0;
			out[j].count = 0;
		}
		out[j].wait_ns += wait;
		out[j].count += count;
	}
	/* Largest wait first (n is small). */
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && out[j].wait_ns > out[j - 1].wait_ns; j--) {
			struct sp_blame tmp = out[j];

			out[j] = out[j - 1];
			out[j - 1] = tmp;
		}
	return n;
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

void sp_wait_begin(uintptr_t obj, int op, struct sp_wait_ctx *w)
{
	w->have_holder = 0;
	if (!sp_load_relaxed(&sp_hold_on) || op == SP_TYPE_CONDVAR)
		return;
	w->have_holder = !sp_hold_lookup(obj, NULL, &w->holder, NULL);
}

void sp_wait_end(struct sp_thread *t, struct sp_entry *e, uint64_t wait_ns,
		 const struct sp_wait_ctx *w)
{
	if (w && w->have_holder)
		blame_add(e, &w->holder, wait_ns);
	if (e->pc && !sp_load_relaxed(&e->n_frames) && sp_opts.frames) {
		uintptr_t f[SP_MAX_FRAMES];
		unsigned n = sp_stack_capture(e->pc, f, sp_opts.frames);

		if (n) {
			memcpy(e->frames, f, n * sizeof(*f));
			sp_store_release(&e->n_frames, (uint8_t)n);
		}
	}
	(void)t;
}

void sp_hold_init(void)
{
	if (!sp_opts.hold || sp_hold_on)
		return;
	clock_calibrate();
	blame = sp_mmap(BLAME_SLOTS * sizeof(*blame));
	sp_store_release(&slots, (struct hold_slot *)sp_mmap(N_SLOTS * sizeof(*slots)));
	sp_store_release(&sp_hold_on, 1);
}
