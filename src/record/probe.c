/*
 * probe.c - the profiled lock calls of the public API (what
 * syncprof/instrument.h maps pthread and C11 calls onto), and the slow
 * paths that every probe shares.
 *
 * Design: see probe.h for the hot path.  Each entry point checks the
 * enabled flag itself too (callers of the API need not use instrument.h),
 * builds its site from __FILE__/__LINE__/__func__ - or, for its _pc twin,
 * from its return address - and instantiates the inline probe with the
 * real libc functions, so the uncontended path has no indirect call.  The
 * twins share one always-inline body (do_NAME); syncprof_mutex_lock and
 * the other named entry points compile to the same code as before the
 * twins existed (objdump: the same instructions, one cmp's operands
 * swapped).  The slow paths here are noinline: timing a contended
 * wait, counting a failed try, inserting a new entry.
 *
 * Counters of an entry are written only by the thread that owns it, with
 * relaxed stores (sp_store_relaxed, base/base.h).  The maxima are reset lazily: a reset
 * bumps sp_reset_epoch, and the owner zeroes its maxima at its next
 * contended wait when the entry's epoch is stale; reports ignore stale
 * maxima.  So a reset writes nothing into other threads' memory.
 */
#include <errno.h>
#include <linux/futex.h>
#include <pthread.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>
#include <unistd.h>

#include "probe.h"
#include "record/registry.h"
#include "record/table.h"

/*
 * The mode in which the calling thread holds a rwlock, read just before its
 * unlock, for the trace's "released" events: glibc records the writer's tid
 * in __data.__cur_writer (public structure layout) and clears it at its
 * unlock; readers leave it alone.
 */
int sp_rwlock_held_type(const void *l)
{
	const pthread_rwlock_t *rw = l;
	struct sp_thread *t = sp_tls_self;
	pid_t self = t ? t->tid : sp_gettid();

	return __atomic_load_n(&rw->__data.__cur_writer, __ATOMIC_RELAXED) == self
		       ? SP_TYPE_RWLOCK_WRITE
		       : SP_TYPE_RWLOCK_READ;
}

void sp_entry_record_wait(struct sp_entry *e, uint64_t wait_ns, int acquired)
{
	struct sp_entry_cold *c = sp_entry_cold_w(e);

	sp_entry_refresh_epoch(c);
	if (acquired)
		sp_store_relaxed(&e->acquisitions, e->acquisitions + 1);
	sp_store_relaxed(&e->contended, e->contended + 1);
	sp_store_relaxed(&c->wait_ns, c->wait_ns + wait_ns);
	if (wait_ns > c->wait_max_ns)
		sp_store_relaxed(&c->wait_max_ns, wait_ns);
	sp_entry_hist_add(e, SP_HIST_WAIT, wait_ns, 1);
}

SP_NOINLINE int sp_probe_lock_contended(struct sp_entry *e, void *obj, int op,
					const struct sp_lock_ops *ops,
					const struct timespec *abstime, const struct sp_site *site)
{
	struct sp_wait_ctx w;
	uint64_t t0, wait;
	int mode, rc, acquired;
	/* The long-wait watchdog (watchdog.c) sees waits in progress. */
	struct sp_thread *watched =
		SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) && e ? sp_tls_self : NULL;

	int tslot = SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on))
			    ? sp_trace_wait_begin(obj, op, site) : SP_TRACE_NO_SLOT;

	sp_wait_begin((uintptr_t)obj, &w); /* blame: who holds it now (hold.c) */
	t0 = sp_wait_start(&mode);
	if (watched)
		sp_watch_begin(watched, e, t0, mode, abstime != NULL);
	rc = ops->lock(obj, abstime);
	wait = sp_wait_ns(mode, t0);
	if (watched)
		w.root = sp_watch_end(watched, wait); /* a chain's root, for blame */
	acquired = rc == ops->ok || rc == EOWNERDEAD;
	/* The hold that follows a wait is timed (hold.c): the clock is read
	 * here anyway. */
	if (acquired && SP_UNLIKELY(sp_hold_is_on()) && op != SP_TYPE_SEMAPHORE)
		sp_hold_waited((uintptr_t)obj);
	if (e) {
		sp_entry_record_wait(e, wait, acquired);
		sp_wait_end(e, wait, &w); /* frames (stack.c), blame */
	}
	if (tslot != SP_TRACE_NO_SLOT)
		sp_trace_wait_end(tslot, obj, op, site, wait, acquired);
	return rc;
}

/* glibc's bits of __data.__kind (nptl/pthreadP.h, PTHREAD_MUTEX_*_NP). */
#define GLIBC_MUTEX_ROBUST 16
#define GLIBC_MUTEX_PRIO_INHERIT 32
#define GLIBC_MUTEX_PRIO_PROTECT 64

/*
 * The try of a blocking mutex call returned ENOTRECOVERABLE: the mutex is
 * robust, an owner died holding it and the next one unlocked it without
 * pthread_mutex_consistent().  glibc's pthread_mutex_lock() and _timedlock()
 * then return ENOTRECOVERABLE and leave the mutex free; its
 * pthread_mutex_trylock() returns the same but, for a robust mutex that is
 * not PI, leaves the lock word taken by the caller (it releases it only
 * "if (oldval == id)", after a compare-and-swap from 0 that succeeded):
 * from then on the mutex looks held by the caller, later trylocks return
 * EBUSY and locks wait for it.  Here the lock word that the try took is
 * released as glibc's lock releases it (lll_unlock: exchange with 0, wake
 * a waiter; robust futexes are shared), and the real blocking call
 * answers.  That is no acquisition (the mutex stays unusable until
 * pthread_mutex_init()): nothing is recorded.
 *
 * Alternative considered: no try first on robust mutexes, which would add
 * a load of __kind and a branch to every uncontended lock, instead of a
 * compare on the error path.
 */
SP_NOINLINE int sp_probe_lock_not_recoverable(void *mutex, const struct sp_lock_ops *ops,
					      const struct timespec *abstime)
{
	pthread_mutex_t *m = mutex;
	unsigned *word = (unsigned *)&m->__data.__lock;
	int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
	int mask = GLIBC_MUTEX_ROBUST | GLIBC_MUTEX_PRIO_INHERIT | GLIBC_MUTEX_PRIO_PROTECT;

	/* Only this thread's try can have left its tid there: a mutex it
	 * held would have made the try return EBUSY, EDEADLK or 0. */
	if ((kind & mask) == GLIBC_MUTEX_ROBUST &&
	    (__atomic_load_n(word, __ATOMIC_RELAXED) & FUTEX_TID_MASK) == (unsigned)sp_gettid() &&
	    (__atomic_exchange_n(word, 0, __ATOMIC_RELEASE) & FUTEX_WAITERS))
		sp_futex(word, FUTEX_WAKE, 1, NULL);
	return ops->lock(mutex, abstime);
}

SP_NOINLINE void sp_probe_try_failed(struct sp_entry *e, void *obj, int op,
				     const struct sp_site *site)
{
	if (e)
		sp_store_relaxed(&e->contended, e->contended + 1);
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		sp_trace_try_failed(obj, op, site);
}

void sp_probe_trace_released(void *obj, int type, const struct sp_site *site, uint64_t hold_ns,
			     int has_hold)
{
	if (type == SP_TYPE_RWLOCK_UNLOCK)
		type = sp_rwlock_held_type(obj);
	sp_trace_lock_event(SP_EV_LOCK_RELEASED, obj, (uint64_t)type, site, hold_ns, has_hold);
}

/* A condition wait always waits: it counts as contended, all of it timed. */
SP_NOINLINE void sp_probe_cond_woken(struct sp_entry *e, void *cond, const struct sp_site *site,
				     uint64_t wait_ns)
{
	if (e) {
		sp_entry_record_wait(e, wait_ns, 1);
		sp_wait_end(e, wait_ns, NULL); /* frames */
	}
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))
		sp_trace_cond_woken(cond, site, wait_ns);
}

/* ---- adapters from the real calls to the probe's signatures ----------- */


/* The ops: probe.h (one set for every build). */

#define OFF SP_PROFILING_OFF() /* base/flags.h */

/*
 * The compiled-in fast path, as the preload's (preload.c): with profiling
 * on and nothing else (one load of the flag word equal to SP_FLAGS_ON: no
 * hold tracking, lock-event trace or lock order, so there is nothing to
 * do after the acquisition but count it) and this call's entry in the
 * thread's caches (SP_ENTRY_CACHED(): the last entry, the lock's home
 * slot, near[]), the real try and one counter; with hold tracking as the
 * only extra (SP_FLAGS_HOLD), also the inlined push of hold.h, tried in
 * the general functions so that the entry points' code stays as it was
 * (callgrind condloop, compiled in hold=1: 268-280 -> 257-266 instructions
 * per lock+unlock when it came).  Anything else - another
 * entry, other flags, a try that did not succeed - goes to the general
 * probe (probe.h) or to sp_probe_tried().  Before it, the compiled-in
 * path tested three flags and spilled its site to the stack on every call
 * (callgrind: 57 instructions of its own per lock, against 32-33 after:
 * docs/cost.md).
 */
int sp_probe_failed(int rc, struct sp_entry *e, void *obj, int op,
				 const struct sp_lock_ops *ops, const struct sp_site *site,
				 const struct timespec *abstime, int blocking)
{
	if (rc == ops->busy) {
		if (blocking)
			return sp_probe_lock_contended(e, obj, op, ops, abstime, site);
		sp_probe_try_failed(e, obj, op, site);
	} else if (blocking && op == SP_TYPE_MUTEX && rc == ENOTRECOVERABLE) {
		return sp_probe_lock_not_recoverable(obj, ops, abstime);
	} else if (rc == EOWNERDEAD) { /* acquired; the previous owner died */
		if (e)
			sp_entry_acquired(e);
		sp_trace_acquired(obj, op, site);
	}
	return rc;
}

SP_NOINLINE int sp_probe_tried(int rc, struct sp_entry *e, void *obj, int op,
				const struct sp_lock_ops *ops, const struct timespec *abstime,
				int blocking, const struct sp_site *site)
{
	rc = sp_probe_failed(rc, e, obj, op, ops, site, abstime, blocking);
	/* With hold tracking (SP_FLAGS_HOLD): the push, as the general path. */
	return sp_probe_held(rc, ops->ok, obj, op, site);
}

/*
 * The same from the entry alone, for the fast paths: the entry's key is
 * the call's site, object and op (it matched), so nothing else needs to
 * live across the try - with the site's fields kept, gcc saved five
 * registers on every call, fast path included.
 */
SP_NOINLINE int sp_probe_tried_entry(int rc, struct sp_entry *e, const struct sp_lock_ops *ops,
				      const struct timespec *abstime, int blocking)
{
	const struct sp_site site = { e->file, sp_entry_func(e), e->pc, e->line };

	return sp_probe_tried(rc, e, (void *)e->obj, e->op, ops, abstime, blocking, &site);
}

/*
 * instrument.h's inline fast path, its try failed: the wait, as the fast
 * path here would have gone on (syncprof.h).  @e is the calling thread's
 * own entry, from its home slots; @call says which lock call it was.
 */
SYNCPROF_API int syncprof__tried(struct syncprof__entry *pub, int rc, int call)
{
	static const struct sp_lock_ops *const ops[] = {
		[SYNCPROF__TRIED_MUTEX] = &mutex_ops, [SYNCPROF__TRIED_RDLOCK] = &rd_ops,
		[SYNCPROF__TRIED_WRLOCK] = &wr_ops,   [SYNCPROF__TRIED_SPIN] = &spin_ops,
		[SYNCPROF__TRIED_MTX] = &c11_ops,
	};

	if ((unsigned)call > SYNCPROF__TRIED_MTX)
		call = SYNCPROF__TRIED_MUTEX; /* not instrument.h's: no table overrun */
	return sp_probe_tried_entry(rc, (struct sp_entry *)(void *)pub, ops[call], NULL, 1);
}

/* The push of a hold that the inlined fast push did not take, from the
 * entry (the acquisition's key) and the site's function (NULL for an
 * interposed call's, which the entry's pc names). */
SP_NOINLINE void sp_probe_hold_acquired_entry(const struct sp_entry *e, const char *func)
{
	const struct sp_site site = { e->file, func, e->pc, e->line };
	struct sp_thread *t = sp_tls_self;

	if (t)
		sp_hold_acquired(t, e->obj, e->op, &site);
}

/* Lock order's edges from the locks held, for the fast path below: the
 * site from the entry (its key), as sp_probe_hold_acquired_entry(). */
static SP_NOINLINE void order_before_entry(struct sp_thread *t, const struct sp_entry *e,
					   const char *func)
{
	const struct sp_site site = { e->file, func, e->pc, e->line };

	sp_order_check__slowpath(t, e->obj, e->op, &site, 0);
}

/* 1 and *rcp when the call was made on the fast path; 0 when it was not
 * tried yet.  (With t->last its only cache, calls that go round many
 * locks found their entry twice, here and in the general path: condloop
 * many, 1024 locks, 185 -> 134 instructions per lock+unlock, bare 77.)
 * @f: the flag word, loaded once by the caller; @want: the flags this
 * copy is for, a constant (SP_FLAGS_ON in the entry points,
 * SP_FLAGS_HOLD in the general paths, so that the push adds nothing to
 * the entry points' code).  The general paths' copy also takes lock
 * order (SP_FLAGS_ORDER), as the preload's with_entry_order() does: until
 * 2026-11-28 compiled-in lock order took the whole probe on every call
 * (callgrind condloop, lock_order=1: 287 -> 239 instructions per
 * lock+unlock; hold=1 238-246). */
static SP_ALWAYS_INLINE int fast_try(int f, int want, void *obj, int op,
				     const struct sp_lock_ops *ops,
				     const struct timespec *abstime, int blocking,
				     const struct sp_site *site, int *rcp)
{
	struct sp_thread *t;
	struct sp_entry *e;
	const char *func;
	int rc;

#define IS_CALLS(e) sp_entry_matches((e), site, (uintptr_t)obj, op)
	if (SP_UNLIKELY(f != want && (want != SP_FLAGS_HOLD || f != SP_FLAGS_ORDER)) ||
	    SP_UNLIKELY(!(t = sp_tls_self)) ||
	    !(e = SP_ENTRY_CACHED(t, (uintptr_t)obj,
				  sp_site_salt(site->file, site->pc, site->line), IS_CALLS)))
		return 0;
#undef IS_CALLS
	/* Across the try only the entry (the call's key) lives, and with
	 * hold tracking the site's function, which the entry does not keep:
	 * each more was one more register saved on every call. */
	func = site->func;
	/* With lock order (SP_FLAGS_ORDER), a blocking call's edges from
	 * the locks held, before the try (probe.h, sp_probe_order_before():
	 * one load when nothing is held). */
	if (want == SP_FLAGS_HOLD && blocking && SP_UNLIKELY(f == SP_FLAGS_ORDER) &&
	    sp_order_holds_any())
		order_before_entry(t, e, func);
	rc = ops->try_lock(obj);
	if (SP_LIKELY(rc == ops->ok)) {
		sp_entry_acquired(e);
		if (want == SP_FLAGS_HOLD &&
		    !sp_hold_acquired_fast(e->obj, op, e->file, func, e->pc, e->line, e))
			sp_probe_hold_acquired_entry(e, func);
	} else {
		rc = sp_probe_tried_entry(rc, e, ops, abstime, blocking);
	}
	*rcp = rc;
	return 1;
}

#define FLAGS_NOW() SP_FLAGS_NOW()
#define IS_OFF(f) SP_FLAGS_OFF(f)

/*
 * The general path of a call that the fast path did not take, out of
 * line and given its site's fields apart: a site whose address is taken in
 * the entry point itself is spilled to the stack on every call, fast path
 * included.  NAME_general() tries the hold-tracking fast path, then
 * tail-calls NAME_probe(), the probe of probe.h: inlined in one function,
 * the probe's registers were saved for the fast path too (compiled in,
 * hold=1,hold_sample=1000000: 247 -> 231 instructions per lock+unlock).
 */
#define SP_GENERAL(name, type, var, op, ops, blocking, ok, expr)                             \
	static SP_NOINLINE int name##_probe(type var, const char *file, const char *func,    \
					    uintptr_t pc, uint32_t line)                     \
	{                                                                                    \
		const struct sp_site site_ = { file, func, pc, line }, *site = &site_;       \
		if (blocking)                                                                \
			sp_probe_order_before((void *)var, op, site);                        \
		return sp_probe_held(expr, ok, (void *)var, op, site);                       \
	}                                                                                    \
	static SP_NOINLINE int name##_general(type var, const char *file, const char *func,  \
					      uintptr_t pc, uint32_t line)                   \
	{                                                                                    \
		const struct sp_site site_ = { file, func, pc, line }, *site = &site_;       \
		int rc_;                                                                     \
		if (fast_try(FLAGS_NOW(), SP_FLAGS_HOLD, (void *)var, op, ops, NULL,         \
			     blocking, site, &rc_))                                          \
			return rc_;                                                          \
		return name##_probe(var, file, func, pc, line);                              \
	}                                                                                    \
	/* a return address (SP_ENTRIES_RAW) taken past the wrapper ranges      \
	 * before any entry is made for it; apart, so that the named entry      \
	 * points' general path stays as it was */                              \
	static SP_NOINLINE __attribute__((unused)) int name##_general_raw(type var,          \
									 uintptr_t pc)       \
	{                                                                                    \
		return name##_general(var, NULL, NULL, sp_site_pc_unwound(pc), 0);           \
	}
/* A named entry point's site has pc 0 (a constant there), a _pc one's a
 * return address. */
#define GENERAL(name, obj)                                                                   \
	(!site->pc ? name##_general(obj, site->file, site->func, 0, site->line)              \
		   : name##_general_raw(obj, site->pc))

SP_GENERAL(mutex_lock, pthread_mutex_t *, m, SP_TYPE_MUTEX, &mutex_ops, 1, 0,
	   sp_probe_lock(m, SP_TYPE_MUTEX, &mutex_ops, NULL, site))
SP_GENERAL(mutex_trylock, pthread_mutex_t *, m, SP_TYPE_MUTEX, &mutex_ops, 0, 0,
	   sp_probe_trylock(m, SP_TYPE_MUTEX, &mutex_ops, site))
SP_GENERAL(rwlock_rdlock, pthread_rwlock_t *, l, SP_TYPE_RWLOCK_READ, &rd_ops, 1, 0,
	   sp_probe_lock(l, SP_TYPE_RWLOCK_READ, &rd_ops, NULL, site))
SP_GENERAL(rwlock_wrlock, pthread_rwlock_t *, l, SP_TYPE_RWLOCK_WRITE, &wr_ops, 1, 0,
	   sp_probe_lock(l, SP_TYPE_RWLOCK_WRITE, &wr_ops, NULL, site))
SP_GENERAL(rwlock_tryrdlock, pthread_rwlock_t *, l, SP_TYPE_RWLOCK_READ, &rd_ops, 0, 0,
	   sp_probe_trylock(l, SP_TYPE_RWLOCK_READ, &rd_ops, site))
SP_GENERAL(rwlock_trywrlock, pthread_rwlock_t *, l, SP_TYPE_RWLOCK_WRITE, &wr_ops, 0, 0,
	   sp_probe_trylock(l, SP_TYPE_RWLOCK_WRITE, &wr_ops, site))
SP_GENERAL(spin_lock, pthread_spinlock_t *, s, SP_TYPE_SPINLOCK, &spin_ops, 1, 0,
	   sp_probe_lock((void *)s, SP_TYPE_SPINLOCK, &spin_ops, NULL, site))
SP_GENERAL(spin_trylock, pthread_spinlock_t *, s, SP_TYPE_SPINLOCK, &spin_ops, 0, 0,
	   sp_probe_trylock((void *)s, SP_TYPE_SPINLOCK, &spin_ops, site))
SP_GENERAL(mtx_lock, void *, m, SP_TYPE_MUTEX, &c11_ops, 1, thrd_success,
	   sp_probe_lock(m, SP_TYPE_MUTEX, &c11_ops, NULL, site))
SP_GENERAL(mtx_trylock, void *, m, SP_TYPE_MUTEX, &c11_ops, 0, thrd_success,
	   sp_probe_trylock(m, SP_TYPE_MUTEX, &c11_ops, site))
#undef SP_GENERAL

/* ---- the profiled calls, each given its site -------------------------- */

static SP_ALWAYS_INLINE int do_mutex_lock(pthread_mutex_t *m, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(pthread_mutex_lock)(m);
	if (fast_try(f, SP_FLAGS_ON, m, SP_TYPE_MUTEX, &mutex_ops, NULL, 1, site, &rc))
		return rc;
	return GENERAL(mutex_lock, m);
}

static SP_ALWAYS_INLINE int do_mutex_trylock(pthread_mutex_t *m, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(pthread_mutex_trylock)(m);
	if (fast_try(f, SP_FLAGS_ON, m, SP_TYPE_MUTEX, &mutex_ops, NULL, 0, site, &rc))
		return rc;
	return GENERAL(mutex_trylock, m);
}

static SP_ALWAYS_INLINE int do_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime,
					       const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_mutex_timedlock)(m, abstime);
	sp_probe_order_before(m, SP_TYPE_MUTEX, site);
	return sp_probe_held(sp_probe_lock(m, SP_TYPE_MUTEX, &mutex_timed_ops, abstime, site), 0,
			     m, SP_TYPE_MUTEX, site);
}

/*
 * Before a release with other unlock hooks than hold tracking and lock
 * order (DO_UNLOCK() below): the probe's release out of line, given the
 * site's fields apart: with the site's address taken in the unlock,
 * every unlock spilled it to the stack.
 */
static SP_NOINLINE void released__slowpath(void *obj, int type, const char *file,
					   const char *func, uintptr_t pc, uint32_t line)
{
	const struct sp_site site = { file, func, pc, line };

	sp_probe_released(obj, type, &site);
}

/*
 * An unlock, @call the real one: with hold tracking or lock order alone,
 * hold.h's release around it, the pop after the lock is free
 * (sp_hold_release_begin(): no store of syncprof's inside the critical
 * section); anything else, the probe's release before it.
 */
#define DO_UNLOCK(obj, type, site, call)                                                     \
	({                                                                                   \
		int g_ = FLAGS_NOW() | SYNCPROF__PROFILING, rc_;                             \
		if (SP_LIKELY(g_ == SP_FLAGS_HOLD || g_ == SP_FLAGS_ORDER)) {                \
			struct sp_hold_release r_ = sp_hold_release_begin((uintptr_t)(obj)); \
			rc_ = (call);                                                        \
			sp_hold_release_end((uintptr_t)(obj), r_);                           \
		} else {                                                                     \
			released__slowpath((void *)(obj), (type), (site)->file, (site)->func,  \
					   (site)->pc, (site)->line);                          \
			rc_ = (call);                                                        \
		}                                                                            \
		rc_;                                                                         \
	})

static SP_ALWAYS_INLINE int do_mutex_unlock(pthread_mutex_t *m, const struct sp_site *site)
{
	return DO_UNLOCK(m, SP_TYPE_MUTEX, site, SP_REAL(pthread_mutex_unlock)(m));
}

static SP_ALWAYS_INLINE int do_cond_wait(pthread_cond_t *c, pthread_mutex_t *m,
					 const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_cond_wait)(c, m);
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, site, (sp_probe_cond_release(m),
				  SP_REAL(pthread_cond_wait)(c, m))), site);
}

static SP_ALWAYS_INLINE int do_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m,
					      const struct timespec *abstime,
					      const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(pthread_cond_timedwait)(c, m, abstime);
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, site, (sp_probe_cond_release(m),
				  SP_REAL(pthread_cond_timedwait)(c, m, abstime))), site);
}

#define SP_DO_RW(name, call, fast)                                                           \
	static SP_ALWAYS_INLINE int do_rwlock_##name(pthread_rwlock_t *l,                    \
						     const struct sp_site *site)             \
	{                                                                                    \
		int f = FLAGS_NOW(), rc;                                                     \
		if (IS_OFF(f))                                                               \
			return call;                                                         \
		if (fast_try(f, SP_FLAGS_ON, l, SP_UNPAREN fast, site, &rc))                 \
			return rc;                                                           \
		return GENERAL(rwlock_##name, l);                                            \
	}

SP_DO_RW(rdlock, SP_REAL(pthread_rwlock_rdlock)(l), (SP_TYPE_RWLOCK_READ, &rd_ops, NULL, 1))
SP_DO_RW(wrlock, SP_REAL(pthread_rwlock_wrlock)(l), (SP_TYPE_RWLOCK_WRITE, &wr_ops, NULL, 1))
SP_DO_RW(tryrdlock, SP_REAL(pthread_rwlock_tryrdlock)(l), (SP_TYPE_RWLOCK_READ, &rd_ops, NULL, 0))
SP_DO_RW(trywrlock, SP_REAL(pthread_rwlock_trywrlock)(l), (SP_TYPE_RWLOCK_WRITE, &wr_ops, NULL, 0))
#undef SP_DO_RW

static SP_ALWAYS_INLINE int do_rwlock_timedrdlock(pthread_rwlock_t *l,
						  const struct timespec *abstime,
						  const struct sp_site *site)
{
	if (OFF || sp_rwlock_abstime_invalid(abstime))
		return SP_REAL(pthread_rwlock_timedrdlock)(l, abstime);
	sp_probe_order_before(l, SP_TYPE_RWLOCK_READ, site);
	return sp_probe_held(sp_probe_lock(l, SP_TYPE_RWLOCK_READ, &rd_timed_ops, abstime, site),
			     0, l, SP_TYPE_RWLOCK_READ, site);
}

static SP_ALWAYS_INLINE int do_rwlock_timedwrlock(pthread_rwlock_t *l,
						  const struct timespec *abstime,
						  const struct sp_site *site)
{
	if (OFF || sp_rwlock_abstime_invalid(abstime))
		return SP_REAL(pthread_rwlock_timedwrlock)(l, abstime);
	sp_probe_order_before(l, SP_TYPE_RWLOCK_WRITE, site);
	return sp_probe_held(sp_probe_lock(l, SP_TYPE_RWLOCK_WRITE, &wr_timed_ops, abstime, site),
			     0, l, SP_TYPE_RWLOCK_WRITE, site);
}

static SP_ALWAYS_INLINE int do_rwlock_unlock(pthread_rwlock_t *l, const struct sp_site *site)
{
	return DO_UNLOCK(l, SP_TYPE_RWLOCK_UNLOCK, site, SP_REAL(pthread_rwlock_unlock)(l));
}

static SP_ALWAYS_INLINE int do_spin_lock(pthread_spinlock_t *s, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(pthread_spin_lock)(s);
	if (fast_try(f, SP_FLAGS_ON, (void *)s, SP_TYPE_SPINLOCK, &spin_ops, NULL, 1, site, &rc))
		return rc;
	return GENERAL(spin_lock, s);
}

static SP_ALWAYS_INLINE int do_spin_trylock(pthread_spinlock_t *s, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(pthread_spin_trylock)(s);
	if (fast_try(f, SP_FLAGS_ON, (void *)s, SP_TYPE_SPINLOCK, &spin_ops, NULL, 0, site, &rc))
		return rc;
	return GENERAL(spin_trylock, s);
}

static SP_ALWAYS_INLINE int do_spin_unlock(pthread_spinlock_t *s, const struct sp_site *site)
{
	return DO_UNLOCK(s, SP_TYPE_SPINLOCK, site, SP_REAL(pthread_spin_unlock)(s));
}

static SP_ALWAYS_INLINE int do_mtx_lock(void *m, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(mtx_lock)(m);
	if (fast_try(f, SP_FLAGS_ON, m, SP_TYPE_MUTEX, &c11_ops, NULL, 1, site, &rc))
		return rc;
	return GENERAL(mtx_lock, m);
}

static SP_ALWAYS_INLINE int do_mtx_trylock(void *m, const struct sp_site *site)
{
	int f = FLAGS_NOW(), rc;

	if (IS_OFF(f))
		return SP_REAL(mtx_trylock)(m);
	if (fast_try(f, SP_FLAGS_ON, m, SP_TYPE_MUTEX, &c11_ops, NULL, 0, site, &rc))
		return rc;
	return GENERAL(mtx_trylock, m);
}

static SP_ALWAYS_INLINE int do_mtx_timedlock(void *m, const struct timespec *abstime,
					     const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(mtx_timedlock)(m, abstime);
	sp_probe_order_before(m, SP_TYPE_MUTEX, site);
	return sp_probe_held(sp_probe_lock(m, SP_TYPE_MUTEX, &c11_timed_ops, abstime, site),
			     thrd_success, m, SP_TYPE_MUTEX, site);
}

static SP_ALWAYS_INLINE int do_mtx_unlock(void *m, const struct sp_site *site)
{
	return DO_UNLOCK(m, SP_TYPE_MUTEX, site, SP_REAL(mtx_unlock)(m));
}

static SP_ALWAYS_INLINE int do_cnd_wait(void *c, void *m, const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(cnd_wait)(c, m);
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, site, (sp_probe_cond_release(m),
				  SP_REAL(cnd_wait)(c, m))), site);
}

static SP_ALWAYS_INLINE int do_cnd_timedwait(void *c, void *m, const struct timespec *abstime,
					     const struct sp_site *site)
{
	if (OFF)
		return SP_REAL(cnd_timedwait)(c, m, abstime);
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, site, (sp_probe_cond_release(m),
				  SP_REAL(cnd_timedwait)(c, m, abstime))), site);
}

void syncprof_lock_forget(const void *lock)
{
	sp_order_forget(lock);
}

int syncprof_name_lock(void *lock, const char *name)
{
	return sp_lockname_set((uintptr_t)lock, name);
}

void syncprof_lock_created(const void *lock, SYNCPROF_SITE_PARAMS)
{
	const struct sp_site site = { file, func, 0, (uint32_t)line };

	if (sp_load_relaxed(&syncprof__enabled) & SYNCPROF__UNLOCK_HOOKS)
		sp_order_forget(lock);
	sp_lockname_init((uintptr_t)lock, &site);
}

void syncprof_lock_destroyed(const void *lock)
{
	if (sp_load_relaxed(&syncprof__enabled) & SYNCPROF__UNLOCK_HOOKS)
		sp_order_forget(lock);
	sp_lockname_destroyed((uintptr_t)lock);
}

/* ---- public entry points ---------------------------------------------- */

/*
 * syncprof_NAME(PARAMS, file, line, func): the site is __FILE__/__LINE__/
 * __func__ as instrument.h passes them.  syncprof_NAME_pc(PARAMS): the
 * site is the return address, as for an interposed call: instrument.h
 * routes C++ calls made inside system headers here (libstdc++'s
 * __gthread_mutex_lock, inlined into the program's function), where
 * __FILE__ would name the header; names.c symbolizes the address at report
 * time, skipping the frames inlined from the headers.  These functions
 * must stay out of line: __builtin_return_address(0) is their caller.
 */

SP_ENTRIES_RAW(mutex_lock, (pthread_mutex_t *m), (m))
SP_ENTRIES_RAW(mutex_trylock, (pthread_mutex_t *m), (m))
SP_ENTRIES(mutex_timedlock, (pthread_mutex_t *m, const struct timespec *abstime), (m, abstime))
SP_ENTRIES(mutex_unlock, (pthread_mutex_t *m), (m))
SP_ENTRIES(cond_wait, (pthread_cond_t *c, pthread_mutex_t *m), (c, m))
SP_ENTRIES(cond_timedwait, (pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime),
	   (c, m, abstime))
SP_ENTRIES_RAW(rwlock_rdlock, (pthread_rwlock_t *l), (l))
SP_ENTRIES_RAW(rwlock_wrlock, (pthread_rwlock_t *l), (l))
SP_ENTRIES_RAW(rwlock_tryrdlock, (pthread_rwlock_t *l), (l))
SP_ENTRIES_RAW(rwlock_trywrlock, (pthread_rwlock_t *l), (l))
SP_ENTRIES(rwlock_timedrdlock, (pthread_rwlock_t *l, const struct timespec *abstime), (l, abstime))
SP_ENTRIES(rwlock_timedwrlock, (pthread_rwlock_t *l, const struct timespec *abstime), (l, abstime))
SP_ENTRIES(rwlock_unlock, (pthread_rwlock_t *l), (l))
SP_ENTRIES_RAW(spin_lock, (pthread_spinlock_t *s), (s))
SP_ENTRIES_RAW(spin_trylock, (pthread_spinlock_t *s), (s))
SP_ENTRIES(spin_unlock, (pthread_spinlock_t *s), (s))
/* C11 <threads.h>: C only, so instrument.h never needs the _pc twins. */
SP_ENTRY_NAMED(mtx_lock, (void *m), (m))
SP_ENTRY_NAMED(mtx_trylock, (void *m), (m))
SP_ENTRY_NAMED(mtx_timedlock, (void *m, const struct timespec *abstime), (m, abstime))
SP_ENTRY_NAMED(mtx_unlock, (void *m), (m))
SP_ENTRY_NAMED(cnd_wait, (void *c, void *m), (c, m))
SP_ENTRY_NAMED(cnd_timedwait, (void *c, void *m, const struct timespec *abstime), (c, m, abstime))
#undef SP_ENTRIES
#undef SP_ENTRIES_RAW
#undef SP_ENTRY_PC_RAW
#undef SP_ENTRY_PC
#undef SP_ENTRY_NAMED
#undef SP_UNPAREN
