/*
 * probe.h - the profiling probe, shared by the instrumented entry points
 * (probe.c) and the preload interposer, each of which instantiates it with
 * its own "real" lock functions.  Private to src/record and preload/.
 *
 * Design (the hot path): an acquisition first *tries* the lock.  When that
 * succeeds - the uncontended case - the probe reads no clock, writes no
 * shared cache line, allocates nothing and takes no lock: it finds the
 * thread's entry for (site, object, op), through a one-entry cache and then
 * the thread's own index, and bumps one counter with a relaxed store.  Only
 * when the try fails is the wait timed around the real blocking call, in a
 * noinline slow path.  The real call's return value is returned unchanged;
 * errors of the try other than "busy" are exactly what the blocking call
 * would have returned (EINVAL, EAGAIN, EDEADLK, EOWNERDEAD), so they are
 * returned at once - but for ENOTRECOVERABLE, where glibc's trylock leaves
 * the mutex taken and its lock does not: the try is undone and the real
 * blocking call answers (sp_probe_lock_not_recoverable(), probe.c).
 *
 * Alternatives considered: QSP reads the clock twice per acquisition and
 * looks the site up in a shared concurrent hash table (4.36x slower on
 * atomic_add-bench -m); timing every acquisition here cost 2 x ~20 ns of
 * clock_gettime per lock+unlock, far above the 1.2x bar.
 */
#ifndef SP_PROBE_H
#define SP_PROBE_H

#include <errno.h>
#include <semaphore.h>
#include <threads.h>
#include <time.h>

#include "base/lock_calls.h"
#include "hold.h"
#include "record/lockorder.h"
#include "record/record.h"
#include "trace/trace.h"
#include "record/stack.h"
#include "record/registry.h"

typedef int (*sp_try_fn)(void *obj);
typedef int (*sp_lock_fn)(void *obj, const struct timespec *abstime);

struct sp_lock_ops {
	sp_try_fn try_lock;
	sp_lock_fn lock;
	int ok;   /* return value of success: 0 or thrd_success */
	int busy; /* return value of a failed try: EBUSY or thrd_busy */
};

int sp_probe_lock_contended(struct sp_entry *e, void *obj, int op, const struct sp_lock_ops *ops,
			    const struct timespec *abstime, const struct sp_site *site);
int sp_probe_lock_not_recoverable(void *mutex, const struct sp_lock_ops *ops,
				  const struct timespec *abstime);
void sp_probe_try_failed(struct sp_entry *e, void *obj, int op, const struct sp_site *site);
/*
 * A try that did not succeed (@rc), the one path of every probe - the
 * general ones below, the compiled-in entry points' (probe.c) and the
 * interposer's (preload.c): a busy lock waited for (@blocking) or counted
 * as a failed try, a not-recoverable mutex answered as the blocking call
 * would, an owner-dead mutex counted as acquired, anything else returned
 * as it is; @e may be NULL (a full table).  sp_probe_tried() is the same
 * followed by the hold's push, for the fast paths, whose general
 * counterparts push in sp_probe_held(); sp_probe_tried_entry() the same
 * from the entry alone (its key is the call's); and
 * sp_probe_hold_acquired_entry() the push of a hold that the inlined push
 * did not take (@func: the site's function, NULL when interposed).
 */
int sp_probe_failed(int rc, struct sp_entry *e, void *obj, int op, const struct sp_lock_ops *ops,
		    const struct sp_site *site, const struct timespec *abstime, int blocking) SP_COLD;
int sp_probe_tried(int rc, struct sp_entry *e, void *obj, int op, const struct sp_lock_ops *ops,
		   const struct timespec *abstime, int blocking, const struct sp_site *site);
int sp_probe_tried_entry(int rc, struct sp_entry *e, const struct sp_lock_ops *ops,
			 const struct timespec *abstime, int blocking);
void sp_probe_hold_acquired_entry(const struct sp_entry *e, const char *func);
void sp_probe_cond_woken(struct sp_entry *e, void *cond, const struct sp_site *site,
			 uint64_t wait_ns);

/* The calling thread's record, or NULL when its calls go unrecorded. */
static SP_ALWAYS_INLINE struct sp_thread *sp_thread_self(void)
{
	struct sp_thread *t = sp_tls_self;

	if (SP_LIKELY(t))
		return t;
	return sp_thread_self__slowpath();
}


static SP_ALWAYS_INLINE void sp_entry_acquired(struct sp_entry *e)
{
	/* Single writer: a plain increment published with a relaxed store so
	 * that a concurrent report reads a whole value. */
	sp_store_relaxed(&e->acquisitions, e->acquisitions + 1);
}

/*
 * Blocking acquisition (lock, rdlock, wrlock, spin_lock, timedlock).  The
 * entry is found before the lock is tried, so that no lookup lengthens the
 * critical section (with the TSC clock of clock.c, this took lockbench
 * -t 2 -m 1 from 0.78x to 0.86-0.88x plain throughput).
 */
static SP_ALWAYS_INLINE int sp_probe_lock(void *obj, int op, const struct sp_lock_ops *ops,
					  const struct timespec *abstime,
					  const struct sp_site *site)
{
	struct sp_thread *t = sp_thread_self();
	struct sp_entry *e;
	int rc;

	if (SP_UNLIKELY(!t))
		return ops->lock(obj, abstime);
	e = sp_entry_get(t, site, (uintptr_t)obj, op);
	rc = ops->try_lock(obj);
	if (SP_LIKELY(rc == ops->ok)) {
		if (SP_LIKELY(e))
			sp_entry_acquired(e);
		sp_trace_acquired(obj, op, site);
		return rc;
	}
	return sp_probe_failed(rc, e, obj, op, ops, site, abstime, 1);
}

/*
 * glibc's timed rwlock calls return EINVAL for a tv_nsec out of range
 * before they look at the lock (its timed mutex calls only when they have
 * to wait), so the probe's try must not take a free rwlock then: such a
 * call goes to the real function alone.
 */
static SP_ALWAYS_INLINE int sp_rwlock_abstime_invalid(const struct timespec *abstime)
{
	return SP_UNLIKELY(abstime && (unsigned long)abstime->tv_nsec >= 1000000000ul);
}

/* Non-blocking acquisition (trylock, tryrdlock, trywrlock). */
static SP_ALWAYS_INLINE int sp_probe_trylock(void *obj, int op, const struct sp_lock_ops *ops,
					     const struct sp_site *site)
{
	struct sp_thread *t = sp_thread_self();
	struct sp_entry *e;
	int rc;

	if (SP_UNLIKELY(!t))
		return ops->try_lock(obj);
	e = sp_entry_get(t, site, (uintptr_t)obj, op);
	rc = ops->try_lock(obj);
	if (SP_LIKELY(rc == ops->ok)) {
		if (SP_LIKELY(e))
			sp_entry_acquired(e);
		sp_trace_acquired(obj, op, site);
		return rc;
	}
	return sp_probe_failed(rc, e, obj, op, ops, site, NULL, 0);
}

/*
 * Before a blocking acquisition (lock, timedlock, rdlock, wrlock,
 * spin_lock: not a trylock, which cannot wait), with lock order on
 * (lockorder.c): the edges from the locks the thread holds into @obj.
 * Before the lock is tried, so that their lookups (cache misses, in a
 * server whose pairs of locks overflow the thread's cache of edges) do
 * not lengthen the critical section of the lock taken, and so that an
 * acquisition that never completes - a deadlock - has its edges too.
 */
static SP_ALWAYS_INLINE void sp_probe_order_before(void *obj, int op, const struct sp_site *site)
{
	struct sp_thread *t;

	if (SP_UNLIKELY(sp_order_is_on()) && (t = sp_tls_self))
		sp_order_acquired_call(t, (uintptr_t)obj, op, site);
}

/*
 * After an acquisition, with hold tracking on (hold.c; lock order implies
 * it): the lock joins the held list; returns @rc.  Lock order's edges came
 * before the acquisition (sp_probe_order_before()).
 */
static SP_ALWAYS_INLINE int sp_probe_held(int rc, int ok, void *obj, int op,
					  const struct sp_site *site)
{
	struct sp_thread *t;
	struct sp_entry *e;

	if (SP_UNLIKELY(sp_hold_is_on()) && (rc == ok || rc == EOWNERDEAD) &&
	    (t = sp_tls_self)) {
		/* The entry the acquisition was counted on (sp_probe_lock()
		 * left it in t->last), for the sample: else the general push.
		 * Lists only (lock order without hold=1) sample nothing. */
		e = sp_hold_times_on_fast() ? t->last : NULL;
		if (e && !sp_entry_matches(e, site, (uintptr_t)obj, op))
			e = NULL;
		if (!sp_hold_acquired_fast((uintptr_t)obj, op, site->file, site->func, site->pc,
					   site->line, e))
			sp_hold_acquired(t, (uintptr_t)obj, op, site);
	}
	return rc;
}

/* Before an unlock: hold tracking, and the trace's "released" event
 * (@type SP_TYPE_RWLOCK_UNLOCK: the mode the rwlock is held in). */
static SP_ALWAYS_INLINE void sp_probe_hold_released(void *obj)
{
	if (SP_UNLIKELY(sp_hold_is_on()) && sp_tls_self &&
	    !sp_hold_released_fast((uintptr_t)obj))
		sp_hold_released((uintptr_t)obj);
}

/* The trace's part of a release, when sp_trace_release_begin() said the
 * event is wanted: the rwlock's mode is found only then (probe.c). */
void sp_probe_trace_released(void *obj, int type, const struct sp_site *site, uint64_t hold_ns,
			     int has_hold);

static SP_ALWAYS_INLINE void sp_probe_released(void *obj, int type, const struct sp_site *site)
{
	sp_probe_hold_released(obj);
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on))) {
		uint64_t hold_ns;
		int has_hold;

		if (sp_trace_release_begin(obj, &hold_ns, &has_hold))
			sp_probe_trace_released(obj, type, site, hold_ns, has_hold);
	}
}

/* A condition wait releases and retakes its mutex: pause its hold. */
static SP_ALWAYS_INLINE void sp_probe_cond_release(void *m)
{
	if (SP_UNLIKELY(sp_hold_is_on()) && sp_tls_self)
		sp_hold_cond_begin((uintptr_t)m);
}

/* ... and retakes it: resume its hold; with lock order, the retake is a
 * blocking acquisition of @m at @site while the rest of the list is held. */
static SP_ALWAYS_INLINE int sp_probe_cond_held(void *m, int rc, const struct sp_site *site)
{
	struct sp_thread *t;

	if (SP_UNLIKELY(sp_hold_is_on()) && (t = sp_tls_self)) {
		if (SP_UNLIKELY(sp_order_is_on()))
			sp_order_retaken(t, (uintptr_t)m, site);
		sp_hold_cond_end((uintptr_t)m);
	}
	return rc;
}

/*
 * Condition waits: always a wait, all of it timed, and published for the
 * watchdog (warn_wait) like a contended lock wait: a thread stuck in a
 * condition wait is often the one a program hangs on.
 */
#define SP_PROBE_COND_WAIT(cond, mutex, site, call)                                          \
	({                                                                            \
		struct sp_thread *t_ = sp_thread_self(), *w_;                         \
		struct sp_entry *e_;                                                  \
		uint64_t t0_, ns_;                                                    \
		int mode_, rc_;                                                       \
		if (SP_UNLIKELY(!t_))                                                 \
			return call;                                                  \
		e_ = sp_entry_get(t_, (site), (uintptr_t)(cond), SP_TYPE_CONDVAR);    \
		if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))                 \
			sp_trace_cond_wait((cond), (mutex), (site));                  \
		t0_ = sp_wait_start(&mode_);                                          \
		w_ = SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) && e_ ? t_ : NULL;    \
		if (w_)                                                               \
			sp_watch_begin(w_, e_, t0_, mode_, 0);                        \
		rc_ = call;                                                           \
		ns_ = sp_wait_ns(mode_, t0_);                                         \
		if (w_)                                                               \
			sp_watch_end(w_, ns_);                                        \
		sp_probe_cond_woken(e_, (cond), (site), ns_);                         \
		rc_;                                                                  \
	})

/* ---- blocking calls that are not locks (probe_wait.c) -------------------- */

/*
 * The deadline of a clock call (pthread_mutex_clocklock, _rwlock_clock*lock,
 * sem_clockwait): the sp_lock_ops' lock() of such a call is handed a
 * pointer to this in place of its abstime (SP_CLOCK_ARG) and takes it apart
 * again (sp_clock_of), so that the probe's signatures stay as they are.
 * The pointers the program passed reach the real call unchanged.
 */
struct sp_clock_deadline {
	const struct timespec *abstime;
	int clock; /* clockid_t */
};
#define SP_CLOCK_ARG(d) ((const struct timespec *)(const void *)(d))
static SP_ALWAYS_INLINE const struct sp_clock_deadline *sp_clock_of(const struct timespec *t)
{
	return (const struct sp_clock_deadline *)(const void *)t;
}

/* The clocks glibc's clock calls accept (futex_abstimed_supported_clockid);
 * others give EINVAL before the lock is looked at. */
static SP_ALWAYS_INLINE int sp_clock_invalid(int clock)
{
	return SP_UNLIKELY(clock != CLOCK_REALTIME && clock != CLOCK_MONOTONIC);
}

/* glibc's timed and clock semaphore waits check tv_nsec (and the clock)
 * before the count: such calls, and a NULL abstime, go to the real
 * function alone, without the probe's try. */
static SP_ALWAYS_INLINE int sp_sem_abstime_invalid(const struct timespec *abstime)
{
	return SP_UNLIKELY(!abstime || (unsigned long)abstime->tv_nsec >= 1000000000ul);
}

/*
 * The semaphore calls report errors in errno, the probe in its return
 * value: the adapters return 0 or the errno of the call, and this turns
 * the probe's result back into the call's (-1 and errno).  A wait that
 * succeeded after a failed try leaves errno as the program had it, as the
 * real call alone would.
 */
static SP_ALWAYS_INLINE int sp_sem_result(int rc, int saved_errno)
{
	if (SP_LIKELY(rc == 0)) {
		errno = saved_errno;
		return 0;
	}
	errno = rc;
	return -1;
}

void sp_probe_waited(struct sp_entry *e, void *obj, int op, const struct sp_site *site,
		     uint64_t wait_ns);

/*
 * Waits that always wait and acquire nothing that is held (barriers,
 * joins): all of the call timed, counted as contended, published for the
 * watchdog, like a condition wait but with no mutex.  The trace sees a
 * lock_wait and a lock_acquired of type @op.
 */
#define SP_PROBE_WAIT(obj, op, site, call)                                                \
	({                                                                            \
		struct sp_thread *t_ = sp_thread_self(), *w_;                         \
		struct sp_entry *e_;                                                  \
		uint64_t t0_, ns_;                                                    \
		int mode_, rc_;                                                       \
		if (SP_UNLIKELY(!t_))                                                 \
			return call;                                                  \
		e_ = (op) == SP_TYPE_JOIN                                             \
			     ? sp_join_entry_get(t_, (site), (uintptr_t)(obj))        \
			     : sp_entry_get(t_, (site), (uintptr_t)(obj), (op));      \
		if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on)))                 \
			(void)sp_trace_wait_begin((void *)(obj), (op), (site));       \
		t0_ = sp_wait_start(&mode_);                                          \
		w_ = SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) && e_ ? t_ : NULL;    \
		if (w_)                                                               \
			sp_watch_begin(w_, e_, t0_, mode_, 0);                        \
		rc_ = call;                                                           \
		ns_ = sp_wait_ns(mode_, t0_);                                         \
		if (w_)                                                               \
			sp_watch_end(w_, ns_);                                        \
		sp_probe_waited(e_, (void *)(obj), (op), (site), ns_);                \
		rc_;                                                                  \
	})

/*
 * The public entry points of probe.c and probe_wait.c, generated from one
 * always-inline body do_NAME(args..., site) each: syncprof_NAME() takes
 * its site from instrument.h's __FILE__/__LINE__/__func__, and
 * syncprof_NAME_pc() (out of line: __builtin_return_address(0) is its
 * caller) from the return address.
 */
#define SP_UNPAREN(...) __VA_ARGS__
#define SP_ENTRY_NAMED(name, params, args)                                                   \
	int syncprof_##name(SP_UNPAREN params, const char *file, int line, const char *func)  \
	{                                                                                    \
		const struct sp_site site = { file, func, 0, (uint32_t)line };               \
		return do_##name(SP_UNPAREN args, &site);                                    \
	}
/* The site past the wrapper ranges (record/stack.c), libstdc++'s
 * out-of-line copies among them (cxx_headers.c): no rbp is passed, so a
 * --skip wrapper whose CFA rule is rbp-based unwinds instead. */
#define SP_ENTRY_PC(name, params, args)                                                      \
	SP_NOINLINE int syncprof_##name##_pc(SP_UNPAREN params)                              \
	{                                                                                    \
		const struct sp_site site = {                                                \
			NULL, NULL,                                                          \
			sp_site_pc((uintptr_t)__builtin_return_address(0),                   \
				   (uintptr_t)__builtin_dwarf_cfa(), 0),                     \
			0 };                                                                 \
		return do_##name(SP_UNPAREN args, &site);                                    \
	}
/* The same for the calls with a fast path (probe.c's fast_try()): the
 * return address as it is, which the fast path's lookup finds only in an
 * entry made for it, i.e. one outside the wrapper ranges, since entries
 * are made by the general path, which takes the site past them first
 * (probe.c's GENERAL()); so the fast path costs what it did (callgrind,
 * std::mutex lock+unlock compiled in: 112 instructions, 135 when the
 * entry point took the site past the ranges first). */
#define SP_ENTRY_PC_RAW(name, params, args)                                                  \
	SP_NOINLINE int syncprof_##name##_pc(SP_UNPAREN params)                              \
	{                                                                                    \
		const struct sp_site site = {                                                \
			NULL, NULL, (uintptr_t)__builtin_return_address(0), 0 };             \
		return do_##name(SP_UNPAREN args, &site);                                    \
	}
#define SP_ENTRIES(name, params, args) SP_ENTRY_NAMED(name, params, args) \
	SP_ENTRY_PC(name, params, args)
#define SP_ENTRIES_RAW(name, params, args) SP_ENTRY_NAMED(name, params, args) \
	SP_ENTRY_PC_RAW(name, params, args)

/* The adapters from real calls to the probe's signatures (probe.c,
 * probe_wait.c): NAME_ops, whose try and lock run the given expressions
 * on `o` (the lock) and `t` (the deadline, unused by untimed calls). */
#define SP_DEFINE_OPS(name, try_expr, lock_expr, ok_, busy_)                      \
	static SP_ALWAYS_INLINE int name##_try(void *o)                           \
	{                                                                         \
		return try_expr;                                                  \
	}                                                                         \
	static SP_ALWAYS_INLINE int name##_lock(void *o, const struct timespec *t) \
	{                                                                         \
		(void)t;                                                          \
		return lock_expr;                                                 \
	}                                                                         \
	static const struct sp_lock_ops name##_ops = { name##_try, name##_lock, ok_, busy_ }

/*
 * The ops of every kind of call, for the compiled-in entry points
 * (probe.c, probe_wait.c) and the preload's shims alike: each calls
 * SP_REAL(), libc's function as the build means it (base/lock_calls.h).
 */
SP_DEFINE_OPS(mutex, SP_REAL(pthread_mutex_trylock)(o), SP_REAL(pthread_mutex_lock)(o), 0, EBUSY);
SP_DEFINE_OPS(mutex_timed, SP_REAL(pthread_mutex_trylock)(o),
	      SP_REAL(pthread_mutex_timedlock)(o, t), 0, EBUSY);
SP_DEFINE_OPS(rd, SP_REAL(pthread_rwlock_tryrdlock)(o), SP_REAL(pthread_rwlock_rdlock)(o), 0,
	      EBUSY);
SP_DEFINE_OPS(rd_timed, SP_REAL(pthread_rwlock_tryrdlock)(o),
	      SP_REAL(pthread_rwlock_timedrdlock)(o, t), 0, EBUSY);
SP_DEFINE_OPS(wr, SP_REAL(pthread_rwlock_trywrlock)(o), SP_REAL(pthread_rwlock_wrlock)(o), 0,
	      EBUSY);
SP_DEFINE_OPS(wr_timed, SP_REAL(pthread_rwlock_trywrlock)(o),
	      SP_REAL(pthread_rwlock_timedwrlock)(o, t), 0, EBUSY);
SP_DEFINE_OPS(spin, SP_REAL(pthread_spin_trylock)(o), SP_REAL(pthread_spin_lock)(o), 0, EBUSY);
SP_DEFINE_OPS(c11, SP_REAL(mtx_trylock)(o), SP_REAL(mtx_lock)(o), thrd_success, thrd_busy);
SP_DEFINE_OPS(c11_timed, SP_REAL(mtx_trylock)(o), SP_REAL(mtx_timedlock)(o, t), thrd_success,
	      thrd_busy);
/* Clock calls: @t is a struct sp_clock_deadline. */
#define SP_CLK_(t) sp_clock_of(t)->clock, sp_clock_of(t)->abstime
SP_DEFINE_OPS(mutex_clock, SP_REAL(pthread_mutex_trylock)(o),
	      SP_REAL(pthread_mutex_clocklock)(o, SP_CLK_(t)), 0, EBUSY);
SP_DEFINE_OPS(rd_clock, SP_REAL(pthread_rwlock_tryrdlock)(o),
	      SP_REAL(pthread_rwlock_clockrdlock)(o, SP_CLK_(t)), 0, EBUSY);
SP_DEFINE_OPS(wr_clock, SP_REAL(pthread_rwlock_trywrlock)(o),
	      SP_REAL(pthread_rwlock_clockwrlock)(o, SP_CLK_(t)), 0, EBUSY);
/* Semaphores: 0 or the call's errno (sp_sem_result()). */
#define SP_SEM_(call) ((call) == 0 ? 0 : errno)
SP_DEFINE_OPS(sem, SP_SEM_(SP_REAL(sem_trywait)(o)), SP_SEM_(SP_REAL(sem_wait)(o)), 0, EAGAIN);
SP_DEFINE_OPS(sem_timed, SP_SEM_(SP_REAL(sem_trywait)(o)),
	      SP_SEM_(SP_REAL(sem_timedwait)(o, t)), 0, EAGAIN);
SP_DEFINE_OPS(sem_clock, SP_SEM_(SP_REAL(sem_trywait)(o)),
	      SP_SEM_(SP_REAL(sem_clockwait)(o, SP_CLK_(t))), 0, EAGAIN);
#undef SP_SEM_
#undef SP_CLK_
#undef SP_DEFINE_OPS

#endif /* SP_PROBE_H */
