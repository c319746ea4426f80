/*
 * hold.h - the owner's side of hold tracking (hold.c), in the form the
 * probes inline: the per-thread block of published held locks, and the
 * fast paths of the common acquisition and release.  Private to src/record
 * and preload/.
 *
 * The common case is a lock that the thread does not hold yet, whose last
 * owner was the same thread and which has not been held long lately,
 * acquired by an untimed acquisition, and released in reverse order of
 * acquisition before the hold tick moved on.  The fast paths handle
 * exactly that (a push, stamped with the hold tick, or a pop inside the
 * block's sequence section, after the real unlock: sp_hold_release_begin()
 * below) and return 0 for anything else, which then goes to
 * sp_hold_push_sampled() and sp_hold_push_changed() (a sampled hold, an
 * owner change) or sp_hold_acquired() / sp_hold_released() (recursion,
 * read locks taken again, stale records, timed holds, a hold that saw the
 * tick move, a full block).  Inlined, they spare the probe two calls
 * and the generic code's site copies: lockbench under the preload with
 * --hold went from ~1.7x (1 lock) and ~2.2x (1024 locks) plain to ~1.45x
 * and ~1.9x when they came (docs/cost.md has today's figures).  The tick costs the push one load and one
 * store, the pop one load and compare.
 */
#ifndef SP_HOLD_H
#define SP_HOLD_H

#include "record/record.h"

#define SP_HELD_MAX 32

/*
 * A held lock.  The published part is what other threads copy: the
 * object, where it was taken (@where: the return address of an interposed
 * call, or __FILE__ of an instrumented one, then with @func) and @info
 * (line, exclusive, instrumented), written as few words as possible: every
 * store of the owner has to drain before its next locked instruction (the
 * real lock's or unlock's), so each one lengthens the critical section.
 */
#define SP_HELD_EXCLUSIVE (1ull << 32)
#define SP_HELD_INSTRUMENTED (1ull << 33)
#define SP_HELD_OP_SHIFT 40 /* the op of the call (enum sp_type), for its entry */

/* sp_held.timed: how the hold is timed (hold.c). */
#define SP_HOLD_UNTIMED 0 /* bounded by the tick only */
#define SP_HOLD_SAMPLED 1 /* a random sample of the untimed kind */
#define SP_HOLD_FORCED 2  /* timed because of what it is: contended, a cond wait, long lately */

struct sp_held {
	/* published */
	uintptr_t obj;
	uintptr_t where;
	const char *func;    /* written only for instrumented sites */
	uint64_t info;       /* line | SP_HELD_EXCLUSIVE | SP_HELD_INSTRUMENTED | op << 40 */
	uint64_t since_ns;   /* timed: exact; untimed: 0 until the first observer's
			      * clock (CAS), a lower bound of the hold's age */
	/* owner only */
	uint32_t depth;
	uint32_t timed;      /* SP_HOLD_*: t0 valid unless UNTIMED */
	struct sp_entry *e;  /* timed: the entry of the acquisition */
	uint64_t t0;         /* ticks at acquisition, or at the end of a cond wait */
	uint64_t paused;     /* ticks held before a cond wait */
	uint64_t tick;       /* sp_hold_tick at acquisition */
	uint32_t weight;     /* sampled: the holds it stands for (sp_hold_period()) */
};

/*
 * One per thread, in its own mmap'd pages, in a global list; recycled
 * when its thread exits holding nothing.  @state is seq << 32 | n, so that
 * one store publishes a push or a pop (seq += 2; the slot e[n] of a push
 * is written before, while no reader looks at it); an owner that changes
 * entries below n in place makes seq odd meanwhile.  Readers copy what
 * they need between two loads of @state and retry when it changed or was
 * odd.
 */
struct sp_hold_pub {
	uint64_t state;
	pid_t tid;           /* 0: free; <0: exited holding locks */
	struct sp_hold_pub *next;
	struct sp_held e[SP_HELD_MAX];
	/* The lock this thread waits for in a contended wait (0: none),
	 * written by the owner on its slow path (hold.c, sp_wait_begin()). */
	uintptr_t waiting;
	/* holdstate.c's sampler, the ticker thread's only: the last sample
	 * of this thread while it held a lock long (0: none since the long
	 * holds began), its CPU and run-queue times then, the class of its
	 * blocked time then (-1: none). */
	uint64_t hs_last_ns, hs_cpu_ns, hs_delay_ns;
	/* The owner's: clock mode's timed holds, and the clock of the last
	 * one checked for a burst (hold_tick.h, sp_hold_clock_burst()). */
	uint32_t clock_n;
	uint64_t clock_t0;
	uint64_t hs_credit_ns; /* run-queue time counted before schedstat had it */
	uint64_t hs_suspect_ns; /* blocked time given to hs_suspect_class while */
	int hs_suspect_class;   /* ... the thread was runnable at the sample */
	/* what the thread mostly did in the last interval (a class, or
	 * SP_HS_RUNNING / SP_HS_PREEMPTED) and since when (live reports) */
	int hs_now_class;
	uint64_t hs_now_since_ns;
	int hs_class;
	pid_t hs_tid;
	/* holdwhere.c's stacks (frames=N): the ticker's request to the
	 * thread's signal handler (wh_req) and the handler's answer (wh_done
	 * = wh_req, wh_pc: where the thread was, 0 when it could not say);
	 * the ticker's only: the interval that waits for the answer, as its
	 * share of each long hold's record, for thread wh_tid. */
	uint32_t wh_req, wh_done;
	uintptr_t wh_pc;
	int wh_exact; /* wh_pc is the thread's own pc, not a return address */
	pid_t wh_tid;
	uint32_t wh_pend_n, wh_pend_age;
	uint32_t wh_pend_rec[SP_HELD_MAX];
	uint64_t wh_pend_ns[SP_HELD_MAX];
	/* the last blocked sample's user sp and pc, class and point (a
	 * thread still blocked there is not unwound again) */
	pid_t wh_blocked_tid;
	int wh_blocked_class;
	uintptr_t wh_blocked_sp, wh_blocked_pc, wh_blocked_at, wh_blocked_key;
};

#define SP_PUB_N(state) ((uint32_t)(state))
#define SP_PUB_SEQ1 (1ull << 32)

/* The list's first block (hold.c); blocks are never unmapped. */
struct sp_hold_pub *sp_hold_pubs(void);

extern SP_TLS struct sp_hold_pub *sp_hold_my_pub;

/*
 * Which short holds are timed (hold.c's design block): the acquisition
 * numbered @n of entry @e is sampled with probability 1 / sp_hold_period(e, n)
 * - every one of an entry's first 4, then ever fewer (n / 4 + 1), down to
 * 1 in hold_sample from its 4 x hold_sample-th on - and stands for that
 * many holds.  The choice is a Weyl sequence over the entry's count,
 * offset by the entry's address: no state but the count the probe keeps
 * anyway, and no aliasing with a program whose holds repeat with some
 * period.  Past the ramp (@ramp_end acquisitions) the period is @pmax and
 * the test one compare with @below (UINT64_MAX / pmax); during it, a
 * multiply by the period.  With hold=1 @pmax is hold_sample (1: every
 * hold timed); without it (lists only), @below and @ramp_end are 0 and no
 * hold is ever due (sp_hold_push_sampled() checks it too).  An entry with
 * SP_ENTRY_NO_RAMP (its key's row has a sample already: hold.c, "The
 * ramp") is past the ramp from its first acquisition; the flag is read
 * only during the ramp, so an entry past it pays nothing for it.
 */
#define SP_HOLD_RAMP_SHIFT 2
struct sp_hold_rate {
	uint64_t below, ramp_end, pmax;
};
extern struct sp_hold_rate sp_hold_rate;

/* The period during the ramp: 1 for acquisitions 1 to 4 (the count is
 * taken after the acquisition's own), then one more every four. */
static SP_ALWAYS_INLINE uint64_t sp_hold_ramp_period(uint64_t n)
{
	return ((n ? n - 1 : 0) >> SP_HOLD_RAMP_SHIFT) + 1;
}

static SP_ALWAYS_INLINE int sp_hold_in_ramp(const struct sp_entry *e, uint64_t n)
{
	return n < sp_hold_rate.ramp_end && !(e->flags & SP_ENTRY_NO_RAMP);
}

static SP_ALWAYS_INLINE uint64_t sp_hold_period(const struct sp_entry *e, uint64_t n)
{
	return sp_hold_in_ramp(e, n) ? sp_hold_ramp_period(n) : sp_hold_rate.pmax;
}

static SP_ALWAYS_INLINE uint64_t sp_hold_sample_x(const struct sp_entry *e, uint64_t n)
{
	return ((uintptr_t)e + n) * 0x9e3779b97f4a7c15ull;
}

/* Holds are timed (hold=1), not only listed: the sample's threshold. */
static SP_ALWAYS_INLINE int sp_hold_times_on_fast(void)
{
	return sp_load_relaxed(&sp_hold_rate.below) != 0;
}

/*
 * Clock mode (hold_tick.c): while holds are few, the ticker sets @below to
 * SP_HOLD_BELOW_ALL, and every hold is timed, by the sampled push, with a
 * weight of 1; ramp_end and pmax never change after start-up.  Whoever
 * pushes a sampled hold decides with one load of @below
 * (sp_hold_due_weight()), so that a hold due because of clock mode is
 * never weighted as a sample of the ticker's mode, nor the reverse.
 */
#define SP_HOLD_BELOW_ALL UINT64_MAX

static SP_ALWAYS_INLINE int sp_hold_due_below(const struct sp_entry *e, uint64_t n,
					      uint64_t below)
{
	if (SP_UNLIKELY(n < sp_hold_rate.ramp_end) && !(e->flags & SP_ENTRY_NO_RAMP))
		return below == SP_HOLD_BELOW_ALL ||
		       (uint64_t)(((unsigned __int128)sp_hold_sample_x(e, n) *
				   sp_hold_ramp_period(n)) >> 64) == 0;
	return sp_hold_sample_x(e, n) <= below;
}

static SP_ALWAYS_INLINE int sp_hold_sample_due(const struct sp_entry *e, uint64_t n)
{
	return sp_hold_due_below(e, n, sp_load_relaxed(&sp_hold_rate.below));
}

/* 0: acquisition @n of @e is not due to be timed; else the holds it
 * stands for (1 in clock mode). */
static inline uint32_t sp_hold_due_weight(const struct sp_entry *e, uint64_t n)
{
	uint64_t below = sp_load_relaxed(&sp_hold_rate.below);

	if (!sp_hold_due_below(e, n, below))
		return 0;
	return below == SP_HOLD_BELOW_ALL ? 1 : (uint32_t)sp_hold_period(e, n);
}

/*
 * The hold tick: a number that hold.c's ticker thread advances every
 * SP_HOLD_TICK_NS, noting the clock of each tick.  A hold that ends at the
 * tick it began at is short; one that saw the tick move is bounded by the
 * ticks' clocks (hold.c).  0 while no ticker runs.  Its own cache line:
 * written once a tick, read by every push and pop.
 */
extern uint64_t sp_hold_tick;

/*
 * Last owner of each lock, for owner changes; written only when it
 * changes.  Above the tid (22 bits: PID_MAX_LIMIT), a countdown of
 * acquisitions still to be timed because the lock was held long lately
 * (hold.c): a slot with a countdown never matches a tid, so the fast path
 * leaves those acquisitions to sp_hold_acquired().  Indexed by the address in 32-byte granules, not hashed: no two
 * mutexes (40 bytes) or rwlocks (56) share a granule, and locks that lie
 * together in memory share cache lines here too (1024 locks in an array:
 * 128 lines of this table instead of 1024 with a hash).  Locks 512 KiB
 * apart share a slot; owner changes are then approximate.
 */
#define SP_OWNER_BITS 14
#define SP_OWNER_TID_MASK ((1 << 22) - 1)
#define SP_OWNER_LONG_SHIFT 22
extern pid_t sp_hold_last_owner[1u << SP_OWNER_BITS]; /* untouched pages cost nothing */

static inline size_t sp_owner_slot(uintptr_t obj)
{
	return (size_t)(obj >> 5) & ((1u << SP_OWNER_BITS) - 1);
}

/* Publish n (a push or a pop): one release store, after the slot's. */
static SP_ALWAYS_INLINE void sp_pub_set_n(struct sp_hold_pub *p, uint64_t state, uint32_t n)
{
	sp_store_release(&p->state, ((state + 2 * SP_PUB_SEQ1) & ~0xffffffffull) | n);
}

/* The same for a push (n + 1, n below SP_HELD_MAX) and a pop (n - 1, n
 * above 0): seq and n move in one add, no carry or borrow between them. */
static SP_ALWAYS_INLINE void sp_pub_push(struct sp_hold_pub *p, uint64_t state)
{
	sp_store_release(&p->state, state + 2 * SP_PUB_SEQ1 + 1);
}

static SP_ALWAYS_INLINE void sp_pub_pop(struct sp_hold_pub *p, uint64_t state)
{
	sp_store_release(&p->state, state + 2 * SP_PUB_SEQ1 - 1);
}

/* In-place changes below n: seq odd from sp_pub_begin() to sp_pub_end(). */
static SP_ALWAYS_INLINE uint64_t sp_pub_begin(struct sp_hold_pub *p)
{
	uint64_t state = p->state + SP_PUB_SEQ1;

	sp_store_release(&p->state, state);
	return state;
}

static SP_ALWAYS_INLINE void sp_pub_end(struct sp_hold_pub *p, uint64_t odd_state, uint32_t n)
{
	sp_store_release(&p->state, ((odd_state + SP_PUB_SEQ1) & ~0xffffffffull) | n);
}

/* Write slot @h of a push (not yet visible: index n).  The site's fields
 * come apart so that an interposer's constants (file NULL) fold. */
static SP_ALWAYS_INLINE void sp_held_fill(struct sp_held *h, uintptr_t obj, const char *file,
					  const char *func, uintptr_t pc, uint32_t line, int op)
{
	uint64_t x = (op != SP_TYPE_RWLOCK_READ ? SP_HELD_EXCLUSIVE : 0) |
		     (uint64_t)op << SP_HELD_OP_SHIFT;

	sp_store_release(&h->obj, obj);
	if (file) {
		sp_store_release(&h->where, (uintptr_t)file);
		sp_store_release(&h->func, func);
		sp_store_release(&h->info, (uint64_t)line | SP_HELD_INSTRUMENTED | x);
	} else {
		sp_store_release(&h->where, pc);
		sp_store_release(&h->info, x);
	}
}

/*
 * What a push outside sp_hold_acquired() needs: the thread's list @p of
 * @n holds has room, @obj is not in it yet (else a recursive or read lock
 * taken again), and its owner slot has no countdown and, for an exclusive
 * lock, names this thread (no owner change to count): 1.  2: all that but
 * the slot names another thread or none, an owner change that
 * sp_hold_push_changed() pushes when the caller knows the entry.  0:
 * anything else, for sp_hold_acquired().  The thread's tid is its
 * block's (the same as its record's, fork included: hold.c), so that the
 * push needs no thread record.
 */
static SP_ALWAYS_INLINE int sp_hold_push_ok(const struct sp_hold_pub *p, uint32_t n,
					    uintptr_t obj, int op)
{
	pid_t owner;

	if (SP_UNLIKELY(n)) {
		if (n >= SP_HELD_MAX)
			return 0;
		for (unsigned i = 0; i < n; i++)
			if (p->e[i].obj == obj)
				return 0;
	}
	/* A read lock has no owner; its slot can still say "held long". */
	owner = sp_load_relaxed(&sp_hold_last_owner[sp_owner_slot(obj)]);
	if (op == SP_TYPE_RWLOCK_READ)
		return owner >> SP_OWNER_LONG_SHIFT == 0;
	/* p->tid: relaxed, as other threads look for a free block with a CAS
	 * on it (hold.c, pub_get__slowpath(); it fails on ours). */
	if (SP_LIKELY(owner == sp_load_relaxed(&p->tid)))
		return 1;
	return owner >> SP_OWNER_LONG_SHIFT == 0 ? 2 : 0;
}

/* Push an untimed hold of @obj onto @p, whose state word is @state (a
 * slot below SP_HELD_MAX, checked by sp_hold_push_ok()): the fast push's
 * and sp_hold_push_changed()'s.  @e: the acquisition's entry, or NULL. */
static SP_ALWAYS_INLINE void sp_hold_push_untimed(struct sp_hold_pub *p, uint64_t state,
						  uintptr_t obj, const char *file,
						  const char *func, uintptr_t pc, uint32_t line,
						  int op, struct sp_entry *e)
{
	struct sp_held *h = &p->e[SP_PUB_N(state)];

	sp_held_fill(h, obj, file, func, pc, line, op);
	sp_store_release(&h->since_ns, 0);
	h->depth = 1;
	h->timed = SP_HOLD_UNTIMED;
	/* Never the entry of an earlier hold in this slot: a hold that ends
	 * long is added to h->e when set (hold.c, held_entry()). */
	h->e = e;
	sp_store_relaxed(&h->tick, sp_load_relaxed(&sp_hold_tick)); /* holdstate.c reads it */
	sp_pub_push(p, state);
}

/* The push of an untimed hold of entry @e whose lock changes owner
 * (sp_hold_push_ok() says 2): 1 when pushed, 0 when sp_hold_acquired()
 * must do it.  What sp_hold_acquired() does for it (hold.c,
 * owner_change()), without finding the entry again: in sysbench mutex
 * --threads=2, 47% of the acquisitions change owner. */
int sp_hold_push_changed(struct sp_entry *e);

/* The push of a sampled hold whose entry @e the caller knows (hold.c): 1
 * when pushed, 0 when sp_hold_acquired() must do it.  The entry's key is
 * the acquisition's object, op and site, so it is all the push needs. */
int sp_hold_push_sampled(struct sp_entry *e);

/*
 * After a successful acquisition: 1 when recorded, 0 when the caller must
 * call sp_hold_acquired().  @file, @func, @pc and @line are the site's
 * fields, passed apart so that an interposer's constants fold.  @e: the
 * acquisition's entry, already counted (NULL: unknown, for
 * sp_hold_acquired() when holds are timed; lists only need none); a hold
 * due to be sampled is pushed by sp_hold_push_sampled().  A contended acquisition is timed because
 * sp_hold_waited() set its lock's countdown, which sp_hold_push_ok()
 * leaves to sp_hold_acquired().
 */
static SP_ALWAYS_INLINE int sp_hold_acquired_fast(uintptr_t obj, int op, const char *file,
						  const char *func, uintptr_t pc, uint32_t line,
						  struct sp_entry *e)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	uint64_t state;
	uint32_t n;
	int ok;

	if (SP_UNLIKELY(!p))
		return 0;
	if (sp_hold_times_on_fast()) {
		if (SP_UNLIKELY(!e))
			return 0;
		if (SP_UNLIKELY(sp_hold_sample_due(e, e->acquisitions)))
			return sp_hold_push_sampled(e);
	}
	state = p->state;
	n = SP_PUB_N(state);
	ok = sp_hold_push_ok(p, n, obj, op);
	if (SP_UNLIKELY(ok != 1))
		return ok == 2 && e ? sp_hold_push_changed(e) : 0;
	sp_hold_push_untimed(p, state, obj, file, func, pc, line, op, e);
	return 1;
}

/* Whether hold @h, the top of its list, ends in order: @obj's hold, taken
 * once, timed as @timed_, released at the tick it began at.  The inlined
 * pop below and the sampled release of hold.c.  A macro: with @timed_ a
 * constant in the expression, gcc compares depth and timing as one word
 * (an inline function's parameter cost the unlock shim 3 instructions). */
#define SP_HELD_IN_ORDER(h, obj_, timed_)                                            \
	((h)->obj == (obj_) && (h)->depth == 1 && (h)->timed == (timed_) &&          \
	 (h)->tick == sp_load_relaxed(&sp_hold_tick))

/* At an unlock: 1 when done, 0 when the caller must call
 * sp_hold_released(). */
static SP_ALWAYS_INLINE int sp_hold_released_fast(uintptr_t obj)
{
	struct sp_hold_pub *p = sp_hold_my_pub;
	const struct sp_held *h;
	uint64_t state;

	if (SP_UNLIKELY(!p))
		return 1;
	state = p->state;
	if (!SP_PUB_N(state))
		return 1; /* holds nothing: not ours, or taken before */
	h = &p->e[SP_PUB_N(state) - 1];
	if (SP_UNLIKELY(!SP_HELD_IN_ORDER(h, obj, SP_HOLD_UNTIMED)))
		return 0;
	sp_pub_pop(p, state);
	return 1;
}

/*
 * The release around the real unlock, with hold tracking or lock order
 * and no trace event (preload.c, probe.c): sp_hold_release_begin() before
 * the unlock, sp_hold_release_end() after it.  The pop waits until the
 * lock is free, so that no store of syncprof's lengthens the critical
 * section: on a lock two threads take in turn, the other thread waits for
 * each one (bench/lockbench.c's floortryhold measures both placements).
 * Until then the list still names the lock, a few nanoseconds more: a
 * waiter that looks the holder up meanwhile finds this thread, which held
 * it when the wait began (hold.c).
 *
 * The begin only looks: the top hold is this lock's, untimed, in order
 * (@state: the state word to pop from), or the release needs hold.c, and
 * then it reads the clock (@now), before the unlock: the hold ends at the
 * unlock call, not at its return (a wake in the unlock takes microseconds;
 * tests/preload/unlock_end.c).  Both 0: nothing held.  The end pops from
 * @state when nothing changed meanwhile (a signal handler's locks), else
 * calls hold.c.
 */
struct sp_hold_release {
	uint64_t state, now;
};

static SP_ALWAYS_INLINE struct sp_hold_release sp_hold_release_begin(uintptr_t obj)
{
	const struct sp_hold_pub *p = sp_hold_my_pub;
	struct sp_hold_release r = { 0, 0 };
	uint64_t state;

	if (SP_UNLIKELY(!p) || !SP_PUB_N(state = p->state))
		return r;
	if (SP_LIKELY(SP_HELD_IN_ORDER(&p->e[SP_PUB_N(state) - 1], obj, SP_HOLD_UNTIMED)))
		r.state = state;
	else
		r.now = sp_clock_ticks() | 1;
	return r;
}

static SP_ALWAYS_INLINE void sp_hold_release_end(uintptr_t obj, struct sp_hold_release r)
{
	struct sp_hold_pub *p;

	if (SP_LIKELY(r.state) && SP_LIKELY((p = sp_hold_my_pub)->state == r.state)) {
		sp_pub_pop(p, r.state);
		return;
	}
	if (r.state | r.now)
		sp_hold_released_at(obj, r.now);
}

/* Hold tracking is on in this copy of the library (record.h, sp_hold_ready). */
static inline int sp_hold_is_on(void)
{
	return sp_load_relaxed(&sp_hold_ready);
}

static inline int sp_hold_is_on_acquire(void)
{
	return sp_load_acquire(&sp_hold_ready);
}

#endif /* SP_HOLD_H */
