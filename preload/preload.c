/*
 * preload.c - libsyncprof-preload.so: the pthread and C11 lock calls of an
 * unmodified, dynamically linked program, interposed and profiled.
 *
 * Design.  This file defines pthread_mutex_lock & co. (and syscall(), for
 * the futex waits of lock libraries that never call pthread).  Loaded with
 * LD_PRELOAD, its definitions come first in the global lookup scope, so
 * the program's calls (and those of its libraries, libstdc++ included)
 * land here; each forwards to the next definition, libc's, found with
 * dlsym(RTLD_NEXT).  Every shim instantiates the inline probe of probe.h
 * with the real functions, so the uncontended path is: enabled flag, TLS
 * thread record, real trylock, entry lookup through the one-entry cache,
 * one relaxed store; the call site is the return address
 * (__builtin_return_address(0)), moved out of lock wrappers by
 * sp_site_pc() (stack.c).  Unlock shims only forward, unless hold
 * tracking is on (then they time the hold first, see hold.c).
 *
 * Real functions.  Every call forwards to the next definition,
 * SP_REAL(name) of base/lock_calls.h (this file is compiled with
 * SP_REAL_NEXT): resolved with dlsym(RTLD_NEXT) by base/real.c, which
 * also bootstraps calls made before the constructor or from inside
 * dlsym(); until the constructor enabled profiling, calls only forward.
 * The profiler's own lock calls (reports, thread registration, unwinding)
 * pass through unrecorded: sp_thread_enter() marks the thread busy.
 *
 * Return values and blocking are the real functions': a failed try is
 * followed by the real blocking call; errors are returned unchanged
 * (EDEADLK, EPERM, ETIMEDOUT, EOWNERDEAD... see probe.h), and a try that
 * glibc's trylock left holding a not-recoverable mutex is undone first.
 *
 * The process's own events - the library's start-up, the threads and
 * programs the process starts, its _exit() - are process.c's.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <threads.h>

#include "attach.h"
#include "preload.h"
#include "base/lock_calls.h"
#include "record/hold.h"
#include "record/probe.h"
#include "runtime/runtime.h"

/* Preloaded, profiling is on unless SYNCPROF_OPTIONS says enabled=0. */
const int sp_preload_enabled_default = 1;

/* A program built with instrument.h and run under this library takes the
 * library's path: instrument.h's inline one would try its locks through
 * the interposers here, which record them a second time (record.h). */
const int sp_home_inline = 0;

/* ---- adapters from the real calls to the probe's signatures ---------------- */

/* The ops (try and lock of each kind of call): probe.h, with SP_REAL(). */

#define FLAGS() SP_FLAGS_NOW() /* base/flags.h, as probe.c's */
#define IS_OFF(f) SP_FLAGS_OFF(f)
#define OFF IS_OFF(FLAGS())
#define HOLD SP_UNLIKELY(sp_hold_is_on())
#define RA ((uintptr_t)__builtin_return_address(0))
/* The shim's CFA: the caller's stack pointer once the call returns. */
#define CFA ((uintptr_t)__builtin_dwarf_cfa())
/* The caller's rbp, read first thing in a shim too small to use rbp itself
 * (checked in the disassembly: the SHIM functions and the unlocks only
 * load, test and jump); stack.c only trusts it inside the caller's frame. */
#define FP ({ uintptr_t fp_; __asm__ volatile("mov %%rbp, %0" : "=r"(fp_)); fp_; })
/* The same in a larger shim (the condition waits): a frame of its own,
 * whose first slot is the caller's rbp. */
#define FP_SAVED (*(const uintptr_t *)__builtin_frame_address(0))
#define SITE_AT(pc) { NULL, NULL, (pc), 0 }

/*
 * The fast path.  With profiling on and nothing else (SP_FLAGS_ON), or
 * with hold tracking as the only extra (SP_FLAGS_HOLD), a call whose entry
 * is in the thread's one-entry cache needs no site computation and no
 * index lookup: an entry whose pc is this call's return address is this
 * call's entry, because a site is never inside a wrapper (stack.c), so
 * that return address is then the site itself.  Everything else - a cache
 * miss, tracing, a failed try, profiling off in the middle - goes to the
 * general paths below, which are the probe of probe.h unchanged.
 */
static SP_ALWAYS_INLINE int entry_is(const struct sp_entry *e, const void *obj, int op,
				     uintptr_t ra)
{
	return e->pc == ra && e->obj == (uintptr_t)obj && e->op == op;
}

static SP_ALWAYS_INLINE struct sp_entry *cached_entry(struct sp_thread *t, const void *obj,
						      int op, uintptr_t ra)
{
	if (SP_UNLIKELY(!t))
		return NULL;
#define IS_CALLS(e) entry_is((e), obj, op, ra)
	return SP_ENTRY_CACHED(t, (uintptr_t)obj, ra, IS_CALLS);
#undef IS_CALLS
}

/* The slow paths of a try that did not succeed and of a push that the
 * inlined one left are probe.c's (probe.h: sp_probe_tried(), with the site
 * of the call's return address; sp_probe_tried_entry() and
 * sp_probe_hold_acquired_entry() from the entry alone, so that nothing but
 * the entry lives across the try). */
static SP_NOINLINE int tried(int rc, struct sp_entry *e, void *obj, int op,
			     const struct sp_lock_ops *ops, const struct timespec *abstime,
			     int blocking, uintptr_t pc)
{
	const struct sp_site site = SITE_AT(pc);

	return sp_probe_tried(rc, e, obj, op, ops, abstime, blocking, &site);
}

static SP_NOINLINE void hold_acquired_pc(struct sp_thread *t, void *obj, int op, uintptr_t pc)
{
	const struct sp_site site = SITE_AT(pc);

	sp_hold_acquired(t, (uintptr_t)obj, op, &site);
}

/* With profiling on and nothing else (SP_FLAGS_ON) and the call's entry
 * @e known (its key is the call's object, op and site): the real try, then
 * one counter. */
static SP_ALWAYS_INLINE int with_entry(struct sp_entry *e, void *obj,
				       const struct sp_lock_ops *ops,
				       const struct timespec *abstime, int blocking)
{
	int rc = ops->try_lock(obj);

	if (SP_LIKELY(rc == ops->ok)) {
		sp_entry_acquired(e);
		return rc;
	}
	return sp_probe_tried_entry(rc, e, ops, abstime, blocking);
}

/* The same with hold tracking (SP_FLAGS_HOLD), then the inlined push, its
 * arguments taken from the entry and the thread reloaded after the try.
 * Its own function per shim (NAME_hold()): inlined beside with_entry(),
 * its registers were saved on every call without --hold too. */
static SP_ALWAYS_INLINE int with_entry_hold(struct sp_entry *e, void *obj, int op,
					    const struct sp_lock_ops *ops,
					    const struct timespec *abstime, int blocking)
{
	int rc = ops->try_lock(obj);

	if (SP_LIKELY(rc == ops->ok)) {
		sp_entry_acquired(e);
		/* @op, the shim's constant, is the entry's: the slot's words
		 * for it fold. */
		if (!sp_hold_acquired_fast(e->obj, op, NULL, NULL, e->pc, 0, e))
			sp_probe_hold_acquired_entry(e, NULL);
		return rc;
	}
	return sp_probe_tried_entry(rc, e, ops, abstime, blocking);
}

/*
 * A miss of the caches with the fast flags: the entry from the index
 * (insertion on first use), then cached.  NULL when it could not be
 * inserted (counted as lost).
 */
static SP_ALWAYS_INLINE struct sp_entry *lookup_pc(struct sp_thread *t, void *obj, int op,
						   uintptr_t pc)
{
	struct sp_entry *e = sp_table_find_key(&t->table, NULL, pc, 0, (uintptr_t)obj, op);

	if (SP_UNLIKELY(!e)) {
		const struct sp_site site = SITE_AT(pc);

		return sp_entry_insert__slowpath(t, &site, (uintptr_t)obj, op);
	}
	t->last = e;
	t->near[sp_near_slot((uintptr_t)obj, pc)] = e;
	return e;
}

#define FAST_FLAGS(f) ((f) == SP_FLAGS_ON || (f) == SP_FLAGS_HOLD)

/*
 * With lock order (SP_FLAGS_ORDER: profiling, hold tracking and lock order
 * only) and the call's entry @e known: as with_entry() with hold tracking,
 * and a blocking call first adds its edges from the locks held
 * (lockorder.h: one load when nothing is held).  Reached from
 * NAME_general(), so that NAME_on() - the path of every other
 * configuration - stays as it was (lockbench under the preload with
 * lock_order=1 against hold=1: 0.88-1.05x, bench/cost.sh order).
 */
static SP_NOINLINE void order_acquired_pc(struct sp_thread *t, void *obj, int op, uintptr_t pc)
{
	const struct sp_site site = SITE_AT(pc);

	sp_order_check__slowpath(t, (uintptr_t)obj, op, &site, 0);
}

static SP_ALWAYS_INLINE int with_entry_order(struct sp_thread *t, struct sp_entry *e, void *obj,
					     int op, const struct sp_lock_ops *ops,
					     const struct timespec *abstime, int blocking,
					     uintptr_t pc)
{
	int rc;

	/* Before the try (probe.h, sp_probe_order_before()). */
	if (blocking && sp_order_holds_any())
		order_acquired_pc(t, obj, op, pc);
	rc = ops->try_lock(obj);
	if (SP_LIKELY(rc == ops->ok)) {
		sp_entry_acquired(e);
		if (!sp_hold_acquired_fast((uintptr_t)obj, op, NULL, NULL, pc, 0, e))
			hold_acquired_pc(t, obj, op, pc);
		return rc;
	}
	return tried(rc, e, obj, op, ops, abstime, blocking, pc);
}

/*
 * The two out-of-line paths of the interposed call NAME, a blocking one
 * (@blocking: lock, rdlock, timedlock...) or a try; @abstime is NULL but
 * for timed calls.
 *
 * NAME_on(), profiling on: with the fast flags, the entry from the caches
 * (cached_entry()).  It is reached by a tail jump from the interposed
 * function after its off test, so that the off path stays free of the
 * frame this one needs (preloaded and off: one load, one branch, one jump
 * to the real function).
 *
 * NAME_general(), everything else: with lock order (SP_FLAGS_ORDER),
 * NAME_order(): the entry from the caches, as NAME_on() finds it, then
 * with_entry_order(); otherwise, or on a miss, NAME_site(): a cache miss
 * with the fast flags or lock order (the site from the return address,
 * the entry from the index), or, with other flags (tracing), the probe of
 * probe.h as instrumented code runs it.
 */
#define SHIM_PATHS(name, op, ops, blocking)                                           \
	static SP_NOINLINE int name##_hold(struct sp_entry *e, void *obj,               \
					   const struct timespec *abstime)              \
	{                                                                             \
		return with_entry_hold(e, obj, op, &ops, abstime, blocking);          \
	}                                                                             \
	static SP_NOINLINE int name##_site(void *obj, const struct timespec *abstime,    \
					   int f, uintptr_t ra, uintptr_t cfa, uintptr_t fp) \
	{                                                                             \
		const struct sp_site site = SITE_AT(sp_site_pc(ra, cfa, fp));         \
		struct sp_thread *t;                                                  \
		struct sp_entry *e;                                                   \
                                                                                      \
		if (FAST_FLAGS(f) && (t = sp_tls_self)) {                             \
			if (SP_UNLIKELY(!(e = lookup_pc(t, obj, op, site.pc))))       \
				return blocking ? ops.lock(obj, abstime) : ops.try_lock(obj); \
			return f == SP_FLAGS_HOLD ? name##_hold(e, obj, abstime)      \
						  : with_entry(e, obj, &ops, abstime, blocking); \
		}                                                                     \
		if (f == SP_FLAGS_ORDER && (t = sp_tls_self)) {                       \
			if (SP_UNLIKELY(!(e = lookup_pc(t, obj, op, site.pc))))       \
				return blocking ? ops.lock(obj, abstime) : ops.try_lock(obj); \
			return with_entry_order(t, e, obj, op, &ops, abstime, blocking, site.pc); \
		}                                                                     \
		if (blocking)                                                         \
			sp_probe_order_before(obj, op, &site);                        \
		return sp_probe_held(blocking ? sp_probe_lock(obj, op, &ops, abstime, &site)   \
				     : sp_probe_trylock(obj, op, &ops, &site),        \
			    ops.ok, obj, op, &site);                                  \
	}                                                                             \
	static SP_NOINLINE int name##_order(void *obj, const struct timespec *abstime,   \
					    uintptr_t ra, uintptr_t cfa, uintptr_t fp)  \
	{                                                                             \
		struct sp_thread *t = sp_tls_self;                                    \
		struct sp_entry *e = cached_entry(t, obj, op, ra);                    \
                                                                                      \
		if (SP_LIKELY(e))                                                     \
			return with_entry_order(t, e, obj, op, &ops, abstime, blocking, ra); \
		return name##_site(obj, abstime, SP_FLAGS_ORDER, ra, cfa, fp);        \
	}                                                                             \
	static SP_NOINLINE int name##_general(void *obj, const struct timespec *abstime, \
					      int f, uintptr_t ra, uintptr_t cfa, uintptr_t fp) \
	{                                                                             \
		if (f == SP_FLAGS_ORDER)                                              \
			return name##_order(obj, abstime, ra, cfa, fp);               \
		return name##_site(obj, abstime, f, ra, cfa, fp);                     \
	}                                                                             \
	static SP_NOINLINE int name##_on(void *obj, const struct timespec *abstime, int f, \
					 uintptr_t ra, uintptr_t cfa, uintptr_t fp)   \
	{                                                                             \
		struct sp_thread *t;                                                  \
		struct sp_entry *e;                                                   \
                                                                                      \
		if (SP_LIKELY(FAST_FLAGS(f)) && (e = cached_entry(t = sp_tls_self, obj, op, ra))) \
			return f == SP_FLAGS_HOLD ? name##_hold(e, obj, abstime)      \
						  : with_entry(e, obj, &ops, abstime, blocking); \
		return name##_general(obj, abstime, f, ra, cfa, fp);                  \
	}

/* The interposed function's body: off, or on. */
#define SHIM(name, obj, abstime, ops, blocking)                                       \
	do {                                                                          \
		uintptr_t fp_at_entry = FP;                                           \
		int f_ = FLAGS();                                                     \
                                                                                      \
		if (IS_OFF(f_))                                                       \
			return (blocking) ? ops.lock((obj), (abstime)) : ops.try_lock(obj); \
		return name##_on((obj), (abstime), f_, RA, CFA, fp_at_entry);         \
	} while (0)

/* Before an unlock, when a feature other than hold tracking and lock
 * order hooks unlocks (the trace's "released" event): the probe's. */
static SP_NOINLINE void released_general(void *obj, int type, uintptr_t ra, uintptr_t cfa,
					 uintptr_t fp)
{
	if (SP_UNLIKELY(sp_load_relaxed(&sp_trace_locks_on))) {
		uint64_t hold_ns;
		int has_hold, emit = sp_trace_release_begin(obj, &hold_ns, &has_hold);

		sp_probe_hold_released(obj);
		if (emit) { /* the site only for an event */
			const struct sp_site site = SITE_AT(sp_site_pc(ra, cfa, fp));

			sp_probe_trace_released(obj, type, &site, hold_ns, has_hold);
		}
		return;
	}
	/* No trace event: no site to compute. */
	if (SP_UNLIKELY(sp_hold_is_on()) && sp_tls_self && !sp_hold_released_fast((uintptr_t)obj))
		sp_hold_released((uintptr_t)obj);
}

/*
 * The interposed unlocks.  With no unlock hook, a tail jump to the real
 * unlock; with hold tracking or lock order alone (the flag words
 * SP_FLAGS_HOLD and SP_FLAGS_ORDER), NAME_hooked() pops the hold after the
 * real unlock (hold.h, sp_hold_release_begin()): the critical section
 * ends with the program's own code; with anything else (the trace's
 * "released" event), the probe's release before the unlock, as before.
 * Hold tracking alone used to pop inline and tail-jump to glibc, with
 * syncprof's stores inside the lock.
 */
#define UNLOCK_SHIM(name, type_, type)                                                \
	static SP_NOINLINE int name##_hooked(type_ *l, int f, uintptr_t ra, uintptr_t cfa, \
					     uintptr_t fp)                               \
	{                                                                             \
		struct sp_hold_release r;                                             \
		int rc, g = f | SYNCPROF__PROFILING;                                  \
                                                                                      \
		if (g != SP_FLAGS_HOLD && g != SP_FLAGS_ORDER) {                      \
			released_general((void *)l, type, ra, cfa, fp);               \
			return SP_REAL(name)(l);                                      \
		}                                                                     \
		r = sp_hold_release_begin((uintptr_t)l);                              \
		rc = SP_REAL(name)(l);                                                \
		sp_hold_release_end((uintptr_t)l, r);                                 \
		return rc;                                                            \
	}                                                                             \
	int name(type_ *l)                                                            \
	{                                                                             \
		uintptr_t fp = FP;                                                    \
		int f = FLAGS();                                                      \
                                                                                      \
		if (SP_LIKELY(!(f & SYNCPROF__UNLOCK_HOOKS)))                         \
			return SP_REAL(name)(l);                                      \
		return name##_hooked(l, f, RA, CFA, fp);                              \
	}

SHIM_PATHS(mutex_lock, SP_TYPE_MUTEX, mutex_ops, 1)
SHIM_PATHS(mutex_timedlock, SP_TYPE_MUTEX, mutex_timed_ops, 1)
SHIM_PATHS(mutex_trylock, SP_TYPE_MUTEX, mutex_ops, 0)
SHIM_PATHS(rdlock, SP_TYPE_RWLOCK_READ, rd_ops, 1)
SHIM_PATHS(timedrdlock, SP_TYPE_RWLOCK_READ, rd_timed_ops, 1)
SHIM_PATHS(tryrdlock, SP_TYPE_RWLOCK_READ, rd_ops, 0)
SHIM_PATHS(wrlock, SP_TYPE_RWLOCK_WRITE, wr_ops, 1)
SHIM_PATHS(timedwrlock, SP_TYPE_RWLOCK_WRITE, wr_timed_ops, 1)
SHIM_PATHS(trywrlock, SP_TYPE_RWLOCK_WRITE, wr_ops, 0)
SHIM_PATHS(spin_lock, SP_TYPE_SPINLOCK, spin_ops, 1)
SHIM_PATHS(spin_trylock, SP_TYPE_SPINLOCK, spin_ops, 0)
SHIM_PATHS(mtx_lock, SP_TYPE_MUTEX, c11_ops, 1)
SHIM_PATHS(mtx_timedlock, SP_TYPE_MUTEX, c11_timed_ops, 1)
SHIM_PATHS(mtx_trylock, SP_TYPE_MUTEX, c11_ops, 0)
SHIM_PATHS(mutex_clocklock, SP_TYPE_MUTEX, mutex_clock_ops, 1)
SHIM_PATHS(clockrdlock, SP_TYPE_RWLOCK_READ, rd_clock_ops, 1)
SHIM_PATHS(clockwrlock, SP_TYPE_RWLOCK_WRITE, wr_clock_ops, 1)

/* The interposed functions are the library's interface: exported, although
 * the rest is built with hidden visibility. */
#pragma GCC visibility push(default)

/* ---- pthread mutex -------------------------------------------------------- */

int pthread_mutex_lock(pthread_mutex_t *m)
{
	SHIM(mutex_lock, m, NULL, mutex_ops, 1);
}

int pthread_mutex_trylock(pthread_mutex_t *m)
{
	SHIM(mutex_trylock, m, NULL, mutex_ops, 0);
}

int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	SHIM(mutex_timedlock, m, abstime, mutex_timed_ops, 1);
}

UNLOCK_SHIM(pthread_mutex_unlock, pthread_mutex_t, SP_TYPE_MUTEX)

/* ---- condition variables -------------------------------------------------- */

#define SITE const struct sp_site site = SITE_AT(sp_site_pc(RA, CFA, FP_SAVED))

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
	if (OFF)
		return SP_REAL(pthread_cond_wait)(c, m);
	SITE;
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, &site,
					      (sp_probe_cond_release(m), SP_REAL(pthread_cond_wait)(c, m))),
				  &site);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *abstime)
{
	if (OFF)
		return SP_REAL(pthread_cond_timedwait)(c, m, abstime);
	SITE;
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, &site, (sp_probe_cond_release(m),
			SP_REAL(pthread_cond_timedwait)(c, m, abstime))), &site);
}

/* Signals: the site is remembered while the watchdog runs (wait_pub.c),
 * to name who should signal a condition wait that lasts. */
#define SIGNAL_SHIM(fn, c, broadcast)                                                  \
	do {                                                                           \
		uintptr_t caller_fp = FP; /* first thing: the caller's rbp */         \
		if (SP_UNLIKELY(sp_load_relaxed(&sp_watch_on)) && !OFF) {              \
			const struct sp_site site =                                    \
				SITE_AT(sp_site_pc(RA, CFA, caller_fp));               \
			sp_cond_signalled__slowpath((c), &site, (broadcast));          \
		}                                                                      \
		return SP_REAL(fn)(c);                                                 \
	} while (0)

int pthread_cond_signal(pthread_cond_t *c)
{
	SIGNAL_SHIM(pthread_cond_signal, c, 0);
}

int pthread_cond_broadcast(pthread_cond_t *c)
{
	SIGNAL_SHIM(pthread_cond_broadcast, c, 1);
}

int cnd_signal(cnd_t *c)
{
	SIGNAL_SHIM(cnd_signal, c, 0);
}

int cnd_broadcast(cnd_t *c)
{
	SIGNAL_SHIM(cnd_broadcast, c, 1);
}
#undef SIGNAL_SHIM

/* ---- reader-writer locks -------------------------------------------------- */

int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	SHIM(rdlock, l, NULL, rd_ops, 1);
}

int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	SHIM(wrlock, l, NULL, wr_ops, 1);
}

int pthread_rwlock_tryrdlock(pthread_rwlock_t *l)
{
	SHIM(tryrdlock, l, NULL, rd_ops, 0);
}

int pthread_rwlock_trywrlock(pthread_rwlock_t *l)
{
	SHIM(trywrlock, l, NULL, wr_ops, 0);
}

int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (sp_rwlock_abstime_invalid(abstime)) /* EINVAL, without a try */
		return SP_REAL(pthread_rwlock_timedrdlock)(l, abstime);
	SHIM(timedrdlock, l, abstime, rd_timed_ops, 1);
}

int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *abstime)
{
	if (sp_rwlock_abstime_invalid(abstime))
		return SP_REAL(pthread_rwlock_timedwrlock)(l, abstime);
	SHIM(timedwrlock, l, abstime, wr_timed_ops, 1);
}

UNLOCK_SHIM(pthread_rwlock_unlock, pthread_rwlock_t, SP_TYPE_RWLOCK_UNLOCK)

/* ---- spin locks ------------------------------------------------------------- */

int pthread_spin_lock(pthread_spinlock_t *s)
{
	SHIM(spin_lock, (void *)s, NULL, spin_ops, 1);
}

int pthread_spin_trylock(pthread_spinlock_t *s)
{
	SHIM(spin_trylock, (void *)s, NULL, spin_ops, 0);
}

UNLOCK_SHIM(pthread_spin_unlock, pthread_spinlock_t, SP_TYPE_SPINLOCK)

/* ---- C11 <threads.h> -------------------------------------------------------- */

int mtx_lock(mtx_t *m)
{
	SHIM(mtx_lock, m, NULL, c11_ops, 1);
}

int mtx_trylock(mtx_t *m)
{
	SHIM(mtx_trylock, m, NULL, c11_ops, 0);
}

int mtx_timedlock(mtx_t *__restrict m, const struct timespec *__restrict abstime)
{
	SHIM(mtx_timedlock, m, abstime, c11_timed_ops, 1);
}

UNLOCK_SHIM(mtx_unlock, mtx_t, SP_TYPE_MUTEX)

int cnd_wait(cnd_t *c, mtx_t *m)
{
	if (OFF)
		return SP_REAL(cnd_wait)(c, m);
	SITE;
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, &site, (sp_probe_cond_release(m),
			SP_REAL(cnd_wait)(c, m))), &site);
}

int cnd_timedwait(cnd_t *__restrict c, mtx_t *__restrict m,
		  const struct timespec *__restrict abstime)
{
	if (OFF)
		return SP_REAL(cnd_timedwait)(c, m, abstime);
	SITE;
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, &site, (sp_probe_cond_release(m),
			SP_REAL(cnd_timedwait)(c, m, abstime))), &site);
}

/* ---- initialisation and destruction (creation sites, lock order) ------------ */

/*
 * A lock that is initialised or destroyed leaves the lock-order graph
 * (lockorder.c, generations), so that another lock made later at the same
 * address starts without its edges: only while some unlock hook is on
 * (lock order implies one).  While profiling is on, an init is the lock's
 * creation site and a destroy ends its name (lockname.c), off the lock
 * hot path.  Off: one load and a branch.
 */
static SP_ALWAYS_INLINE void forget(const void *obj)
{
	if (SP_UNLIKELY(FLAGS() & SYNCPROF__UNLOCK_HOOKS))
		sp_order_forget(obj);
}

#define CREATED(obj)                                                          \
	do {                                                                  \
		forget(obj);                                                  \
		if (!OFF) {                                                   \
			SITE;                                                 \
			sp_lockname_init((uintptr_t)(obj), &site);            \
		}                                                             \
	} while (0)

static SP_ALWAYS_INLINE void destroyed(const void *obj)
{
	forget(obj);
	if (!OFF)
		sp_lockname_destroyed((uintptr_t)obj);
}

int pthread_mutex_init(pthread_mutex_t *m, const pthread_mutexattr_t *a)
{
	CREATED(m);
	return SP_REAL(pthread_mutex_init)(m, a);
}

int pthread_mutex_destroy(pthread_mutex_t *m)
{
	int rc = SP_REAL(pthread_mutex_destroy)(m);

	if (!rc)
		destroyed(m);
	return rc;
}

int pthread_rwlock_init(pthread_rwlock_t *__restrict l, const pthread_rwlockattr_t *__restrict a)
{
	CREATED(l);
	return SP_REAL(pthread_rwlock_init)(l, a);
}

int pthread_rwlock_destroy(pthread_rwlock_t *l)
{
	int rc = SP_REAL(pthread_rwlock_destroy)(l);

	if (!rc)
		destroyed(l);
	return rc;
}

int pthread_spin_init(pthread_spinlock_t *s, int pshared)
{
	CREATED((const void *)s);
	return SP_REAL(pthread_spin_init)(s, pshared);
}

int pthread_spin_destroy(pthread_spinlock_t *s)
{
	int rc = SP_REAL(pthread_spin_destroy)(s);

	if (!rc)
		destroyed((const void *)s);
	return rc;
}

int mtx_init(mtx_t *m, int type)
{
	CREATED(m);
	return SP_REAL(mtx_init)(m, type);
}

void mtx_destroy(mtx_t *m)
{
	SP_REAL(mtx_destroy)(m);
	destroyed(m);
}

/*
 * The other primitives (condition variables, semaphores, barriers): their
 * init is recorded after the real call, and only when it succeeded - an
 * init that fails (sem_init with a value above SEM_VALUE_MAX, a barrier of
 * count 0: EINVAL) made nothing at that address to name.  Recording after
 * is safe: a use that another thread made in between counted as a first
 * use, which the init then replaces.  The semaphore calls keep errno as
 * the real call left it (the profiler's bookkeeping may not touch it).
 */
#define CREATED_IF(ok, obj)                                                   \
	do {                                                                  \
		if (ok)                                                       \
			CREATED(obj);                                         \
	} while (0)

int pthread_cond_init(pthread_cond_t *__restrict c, const pthread_condattr_t *__restrict a)
{
	int rc = SP_REAL(pthread_cond_init)(c, a);

	CREATED_IF(rc == 0, c);
	return rc;
}

int pthread_cond_destroy(pthread_cond_t *c)
{
	int rc = SP_REAL(pthread_cond_destroy)(c);

	if (!rc)
		destroyed(c);
	return rc;
}

int sem_init(sem_t *s, int pshared, unsigned int value)
{
	int rc = SP_REAL(sem_init)(s, pshared, value);
	int saved = errno;

	CREATED_IF(rc == 0, s);
	errno = saved;
	return rc;
}

int sem_destroy(sem_t *s)
{
	int rc = SP_REAL(sem_destroy)(s);
	int saved = errno;

	if (!rc)
		destroyed(s);
	errno = saved;
	return rc;
}

int pthread_barrier_init(pthread_barrier_t *__restrict b,
			 const pthread_barrierattr_t *__restrict a, unsigned int count)
{
	int rc = SP_REAL(pthread_barrier_init)(b, a, count);

	CREATED_IF(rc == 0, b);
	return rc;
}

int pthread_barrier_destroy(pthread_barrier_t *b)
{
	int rc = SP_REAL(pthread_barrier_destroy)(b);

	if (!rc)
		destroyed(b);
	return rc;
}

int cnd_init(cnd_t *c)
{
	int rc = SP_REAL(cnd_init)(c);

	CREATED_IF(rc == thrd_success, c);
	return rc;
}

void cnd_destroy(cnd_t *c)
{
	SP_REAL(cnd_destroy)(c);
	destroyed(c);
}
#undef CREATED_IF

/* ---- clock variants (the clock passes through; probe.h) -------------------- */

int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock, const struct timespec *abstime)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (sp_clock_invalid(clock)) /* EINVAL, without a try */
		return SP_REAL(pthread_mutex_clocklock)(m, clock, abstime);
	SHIM(mutex_clocklock, m, SP_CLOCK_ARG(&d), mutex_clock_ops, 1);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
			   const struct timespec *abstime)
{
	if (OFF)
		return SP_REAL(pthread_cond_clockwait)(c, m, clock, abstime);
	SITE;
	return sp_probe_cond_held(m, SP_PROBE_COND_WAIT(c, m, &site, (sp_probe_cond_release(m),
			SP_REAL(pthread_cond_clockwait)(c, m, clock, abstime))), &site);
}

/* glibc: EINVAL for a bad clock or tv_nsec, before it looks at the lock. */
#define RW_CLOCK_INVALID(clock, abstime) (sp_clock_invalid(clock) || sp_rwlock_abstime_invalid(abstime))

int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
			       const struct timespec *abstime)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (RW_CLOCK_INVALID(clock, abstime))
		return SP_REAL(pthread_rwlock_clockrdlock)(l, clock, abstime);
	SHIM(clockrdlock, l, SP_CLOCK_ARG(&d), rd_clock_ops, 1);
}

int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
			       const struct timespec *abstime)
{
	const struct sp_clock_deadline d = { abstime, clock };

	if (RW_CLOCK_INVALID(clock, abstime))
		return SP_REAL(pthread_rwlock_clockwrlock)(l, clock, abstime);
	SHIM(clockwrlock, l, SP_CLOCK_ARG(&d), wr_clock_ops, 1);
}
#undef RW_CLOCK_INVALID

/* ---- semaphores: tried first, no hold tracking (no owner) ------------------ */

int sem_wait(sem_t *s)
{
	int saved = errno;

	if (OFF)
		return SP_REAL(sem_wait)(s);
	SITE;
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_ops, NULL, &site), saved);
}

int sem_trywait(sem_t *s)
{
	int saved = errno;

	if (OFF)
		return SP_REAL(sem_trywait)(s);
	SITE;
	return sp_sem_result(sp_probe_trylock(s, SP_TYPE_SEMAPHORE, &sem_ops, &site), saved);
}

int sem_timedwait(sem_t *__restrict s, const struct timespec *__restrict abstime)
{
	int saved = errno;

	if (OFF || sp_sem_abstime_invalid(abstime)) /* EINVAL, without a try */
		return SP_REAL(sem_timedwait)(s, abstime);
	SITE;
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_timed_ops, abstime, &site),
			     saved);
}

int sem_clockwait(sem_t *__restrict s, clockid_t clock, const struct timespec *__restrict abstime)
{
	const struct sp_clock_deadline d = { abstime, clock };
	int saved = errno;

	if (OFF || sp_clock_invalid(clock) || sp_sem_abstime_invalid(abstime))
		return SP_REAL(sem_clockwait)(s, clock, abstime);
	SITE;
	return sp_sem_result(sp_probe_lock(s, SP_TYPE_SEMAPHORE, &sem_clock_ops, SP_CLOCK_ARG(&d),
					   &site),
			     saved);
}

/* ---- barriers and joins: always a wait (probe.h, SP_PROBE_WAIT) ------------- */

int pthread_barrier_wait(pthread_barrier_t *b)
{
	if (OFF)
		return SP_REAL(pthread_barrier_wait)(b);
	SITE;
	return SP_PROBE_WAIT(b, SP_TYPE_BARRIER, &site, SP_REAL(pthread_barrier_wait)(b));
}

int pthread_join(pthread_t th, void **retval)
{
	if (OFF)
		return SP_REAL(pthread_join)(th, retval);
	SITE;
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, &site, SP_REAL(pthread_join)(th, retval));
}

/* The joins with a deadline: ETIMEDOUT is a wait too; a clock glibc
 * rejects gets EINVAL from glibc alone, unrecorded (probe_wait.c).
 * pthread_tryjoin_np never blocks: not interposed. */
int pthread_timedjoin_np(pthread_t th, void **retval, const struct timespec *abstime)
{
	if (OFF)
		return SP_REAL(pthread_timedjoin_np)(th, retval, abstime);
	SITE;
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, &site,
			     SP_REAL(pthread_timedjoin_np)(th, retval, abstime));
}

int pthread_clockjoin_np(pthread_t th, void **retval, clockid_t clock,
			 const struct timespec *abstime)
{
	if (OFF || sp_clock_invalid(clock))
		return SP_REAL(pthread_clockjoin_np)(th, retval, clock, abstime);
	SITE;
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, &site,
			     SP_REAL(pthread_clockjoin_np)(th, retval, clock, abstime));
}

int thrd_join(thrd_t th, int *res)
{
	if (OFF)
		return SP_REAL(thrd_join)(th, res);
	SITE;
	return SP_PROBE_WAIT(th, SP_TYPE_JOIN, &site, SP_REAL(thrd_join)(th, res));
}

/* ---- futex waits of lock libraries (record/probe_futex.c) ------------------ */

/*
 * Every syscall() of the program: a futex call goes to the probe, any
 * other passes through with its arguments and returns as the real call
 * returns, errno included.
 *
 * On x86-64 syscall() itself is five instructions of assembly: compare
 * the number with futex's and futex_waitv's, load libc's syscall() and
 * jump to it, registers and stack untouched (a tail call: no argument is
 * read or copied).  A futex call, or a call before the next definition
 * is known, jumps to sp_syscall_c() below, which reads its six arguments
 * as glibc's own syscall() passes them to the kernel (the registers and
 * one stack slot of the caller's).  callgrind, bench/syscallbench under
 * the preload: 58 instructions per getpid in C, 5 + libc's here.
 */
#if defined(__x86_64__)
#define SP_SYSCALL_C sp_syscall_c
__attribute__((visibility("hidden"))) long sp_syscall_c(long nr, ...);
void *sp_syscall_next; /* preload.h */

#define SP_STR_(x) #x
#define SP_STR(x) SP_STR_(x)
__asm__(".pushsection .text\n"
	".globl syscall\n"
	".type syscall, @function\n"
	".globl sp_shim_syscall\n"
	".hidden sp_shim_syscall\n"
	".p2align 4\n"
	"syscall:\n"
	"sp_shim_syscall:\n"
	".cfi_startproc\n"
	"endbr64\n"
	"cmpq $" SP_STR(SYS_futex) ", %rdi\n"
	"je sp_syscall_c\n"
	"cmpq $" SP_STR(SYS_futex_waitv) ", %rdi\n"
	"je sp_syscall_c\n"
	"movq sp_syscall_next(%rip), %rax\n"
	"testq %rax, %rax\n"
	"je sp_syscall_c\n"
	"jmp *%rax\n"
	".cfi_endproc\n"
	".size syscall, .-syscall\n"
	".popsection\n");
#else
#define SP_SYSCALL_C syscall
#endif

long SP_SYSCALL_C(long nr, ...)
{
	va_list ap;
	long a[6];

	va_start(ap, nr);
	for (int i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (SP_LIKELY(nr != SYS_futex && nr != SYS_futex_waitv) || OFF)
		return SP_REAL(syscall)(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	return sp_probe_futex(nr, a, RA);
}

#pragma GCC visibility pop

/* ---- the shims by name, for attach.c ------------------------------------------ */

/*
 * Hidden aliases: attach.c writes these addresses into other objects' GOT
 * slots.  A reference to the exported name itself would be bound by the
 * dynamic linker, which under dlopen() finds libc's definition first.
 */
#define ATTACH_SHIMS(X) SP_LOCK_CALLS(X)

#define X_ALIAS(name, ret, params, boot)                                                                \
	extern __typeof__(name) sp_shim_##name                                         \
		__attribute__((alias(#name), visibility("hidden"), copy(name)));
SP_THREAD_CALLS(X_ALIAS)
#undef X_ALIAS
#if defined(__x86_64__)
/* syscall()'s, a label of its assembly above. */
extern __typeof__(syscall) sp_shim_syscall __attribute__((visibility("hidden")));
#else
extern __typeof__(syscall) sp_shim_syscall
	__attribute__((alias("syscall"), visibility("hidden"), copy(syscall)));
#endif

const struct sp_attach_shim sp_attach_shims[] = {
#define X_ENTRY(name, ret, params, boot) { #name, (void *)sp_shim_##name },
	ATTACH_SHIMS(X_ENTRY)
#undef X_ENTRY
	{ NULL, NULL }
};
#undef ATTACH_SHIMS

/* Interposing (preloaded, or linked ahead of libc): the global lookup of a
 * shim's name finds this library's definition.  Not interposing: loaded by
 * dlopen(), that is by 'syncprof attach' - unless LD_PRELOAD names us (then
 * another interposer came first, and the library still starts as it always
 * did, reached through that one's RTLD_NEXT). */
int sp_attach_loaded(void)
{
	const char *pre = getenv("LD_PRELOAD");

	if (pre && strstr(pre, "libsyncprof-preload"))
		return 0;
	return dlsym(RTLD_DEFAULT, "pthread_mutex_lock") != (void *)sp_shim_pthread_mutex_lock;
}
