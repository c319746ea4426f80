/*
 * mutex_semantics.h - what pthread mutex calls return in each state of a
 * robust, errorcheck, recursive or priority-inheritance mutex, through
 * glibc's own functions and through the profiled ones (interposed or
 * compiled in): the profiler must never change a result, nor the state a
 * call leaves the mutex in.  Private to tests/ (test_instrument.c and
 * preload/preload_semantics.c).
 *
 * Each scenario runs twice, on fresh mutexes of the same kind: first
 * through @real (glibc's functions), then through @prof.  Every step of
 * the second run must return what the same step of the first returned,
 * and the value POSIX documents for the state where there is one
 * (MS_ANY where glibc's own answer is all there is to compare with, e.g.
 * a trylock after glibc's trylock left a not-recoverable mutex taken).
 * A step fails at once, naming scenario, step and both values.
 *
 * The robust state machine: a thread dies holding the mutex -> the next
 * lock, trylock or timedlock returns EOWNERDEAD and holds it ->
 * pthread_mutex_consistent() and unlock -> normal again; or unlock without
 * pthread_mutex_consistent() -> lock, trylock and timedlock all return
 * ENOTRECOVERABLE.  Each for every call, uncontended (the profiler's
 * trylock-first path) and contended (another thread holds the mutex, so
 * the profiler's slow path runs the real blocking call), for robust
 * normal, errorcheck, recursive and PI mutexes.  Then errorcheck and PI
 * mutexes (EDEADLK, EPERM, ETIMEDOUT), recursion overflow (EAGAIN) and
 * timeouts glibc finds invalid (EINVAL) only when it has to wait.
 *
 * The profiled runs also count their acquisitions (0 or EOWNERDEAD) and
 * their completed holds, per mutex, for the caller to compare with what
 * the profiler recorded: ms_runs[] with a @ref are the profiled ones.
 */
#ifndef SYNCPROF_TEST_MUTEX_SEMANTICS_H
#define SYNCPROF_TEST_MUTEX_SEMANTICS_H

#include <errno.h>
#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

/* The calls under test.  In test_instrument.c the profiled ones go
 * through instrument.h's macros, the real ones name the function in
 * parentheses. */
struct ms_api {
	const char *name;
	int (*lock)(pthread_mutex_t *m);
	int (*trylock)(pthread_mutex_t *m);
	int (*timedlock)(pthread_mutex_t *m, const struct timespec *abstime);
	int (*unlock)(pthread_mutex_t *m);
	/* After each acquisition by the scenario's own thread (0 or
	 * EOWNERDEAD), if set: e.g. check that the profiler knows it held. */
	void (*acquired)(pthread_mutex_t *m);
};

enum ms_kind {
	MS_ROBUST,
	MS_ROBUST_ERRORCHECK,
	MS_ROBUST_RECURSIVE,
	MS_ROBUST_PI,
	MS_ERRORCHECK,
	MS_RECURSIVE,
	MS_PI,
	MS_PI_ERRORCHECK,
	MS_NORMAL,
};

static const char *const ms_kind_name[] = {
	"robust", "robust errorcheck", "robust recursive", "robust PI", "errorcheck",
	"recursive", "PI", "PI errorcheck", "normal",
};

enum ms_op { MS_LOCK, MS_TRYLOCK, MS_TIMEDLOCK, MS_TIMEDLOCK_SHORT, MS_TIMEDLOCK_BAD, MS_UNLOCK };

static const char *const ms_op_name[] = {
	"lock", "trylock", "timedlock", "timedlock(20 ms)", "timedlock(bad abstime)", "unlock",
};

#define MS_ANY (-1)     /* no documented value: glibc's is the reference */
#define MS_STEPS 48
#define MS_RUNS 192
#define MS_WAIT_MS 2000 /* a timedlock that should not time out */
#define MS_SHORT_MS 20  /* one that should */
#define MS_FUTEX_WAITERS 0x80000000u

struct ms_run {
	const struct ms_api *api;
	const struct ms_run *ref; /* the real run of the same scenario, or NULL */
	char scenario[128];
	enum ms_kind kind;
	pthread_mutex_t *m;
	int n;
	struct {
		const char *what;
		int rc;
	} step[MS_STEPS];
	/* Acquisitions (any thread) and completed holds (released by their
	 * acquirer; a recursive mutex's outermost only); atomics: holder
	 * threads add theirs. */
	unsigned acquired, holds;
	int depth; /* the scenario thread's recursion depth */
};

static pthread_mutex_t ms_pool[MS_RUNS];
static struct ms_run ms_runs[MS_RUNS];
static int ms_n_runs;

static inline struct timespec ms_in_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static inline int ms_is_robust(enum ms_kind k)
{
	return k <= MS_ROBUST_PI;
}

static inline int ms_is_pi(enum ms_kind k)
{
	return k == MS_ROBUST_PI || k == MS_PI || k == MS_PI_ERRORCHECK;
}

static inline int ms_is_recursive(enum ms_kind k)
{
	return k == MS_ROBUST_RECURSIVE || k == MS_RECURSIVE;
}

/* Errorcheck semantics: a relock by the owner returns EDEADLK. */
static inline int ms_is_errorcheck(enum ms_kind k)
{
	return k == MS_ROBUST_ERRORCHECK || k == MS_ERRORCHECK || k == MS_PI_ERRORCHECK;
}

/* An unlock by a thread that does not own the mutex: EPERM for
 * errorcheck, recursive and robust mutexes; undefined for the others
 * (glibc's answer is then the reference). */
static inline int ms_eperm(enum ms_kind k)
{
	return ms_is_errorcheck(k) || ms_is_recursive(k) || ms_is_robust(k) ? EPERM : MS_ANY;
}

static inline void ms_init(pthread_mutex_t *m, enum ms_kind k)
{
	pthread_mutexattr_t a;

	T_ASSERT_INT(pthread_mutexattr_init(&a), ==, 0);
	if (ms_is_robust(k))
		T_ASSERT_INT(pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST), ==, 0);
	if (ms_is_pi(k))
		T_ASSERT_INT(pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT), ==, 0);
	if (ms_is_errorcheck(k))
		T_ASSERT_INT(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK), ==, 0);
	if (ms_is_recursive(k))
		T_ASSERT_INT(pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE), ==, 0);
	T_ASSERT_INT(pthread_mutex_init(m, &a), ==, 0);
	pthread_mutexattr_destroy(&a);
}

/* A new run of @scenario on a fresh mutex; the profiled run of a scenario
 * follows its real run. */
static inline struct ms_run *ms_begin(const struct ms_api *api, const struct ms_run *ref,
				      enum ms_kind k, const char *scenario)
{
	struct ms_run *r;

	T_ASSERT_INT(ms_n_runs, <, MS_RUNS);
	r = &ms_runs[ms_n_runs];
	memset(r, 0, sizeof(*r));
	r->api = api;
	r->ref = ref;
	r->kind = k;
	r->m = &ms_pool[ms_n_runs++];
	snprintf(r->scenario, sizeof(r->scenario), "%s: %s", ms_kind_name[k], scenario);
	ms_init(r->m, k);
	return r;
}

/* Record step @what's result; compare it with @want and the reference. */
static inline int ms_step(struct ms_run *r, const char *what, int rc, int want)
{
	int i = r->n++;

	T_ASSERT_INT(i, <, MS_STEPS);
	r->step[i].what = what;
	r->step[i].rc = rc;
	if (want != MS_ANY && rc != want)
		T_FAIL("%s (%s), step %d %s: returned %d, documented %d", r->scenario,
		       r->api->name, i, what, rc, want);
	if (r->ref) {
		if (i >= r->ref->n || strcmp(r->ref->step[i].what, what))
			T_FAIL("%s: step %d %s has no counterpart in glibc's run", r->scenario,
			       i, what);
		if (rc != r->ref->step[i].rc)
			T_FAIL("%s, step %d %s: %s returned %d, glibc %d", r->scenario, i, what,
			       r->api->name, rc, r->ref->step[i].rc);
	}
	return rc;
}

static inline int ms_call(struct ms_run *r, enum ms_op op)
{
	struct timespec ts;

	switch (op) {
	case MS_LOCK:
		return r->api->lock(r->m);
	case MS_TRYLOCK:
		return r->api->trylock(r->m);
	case MS_TIMEDLOCK:
		ts = ms_in_ms(MS_WAIT_MS);
		return r->api->timedlock(r->m, &ts);
	case MS_TIMEDLOCK_SHORT:
		ts = ms_in_ms(MS_SHORT_MS);
		return r->api->timedlock(r->m, &ts);
	case MS_TIMEDLOCK_BAD:
		ts = ms_in_ms(0);
		ts.tv_nsec = 1000000000L; /* EINVAL, if glibc has to wait */
		return r->api->timedlock(r->m, &ts);
	case MS_UNLOCK:
		return r->api->unlock(r->m);
	}
	abort();
}

static inline int ms_acquired(int rc)
{
	return rc == 0 || rc == EOWNERDEAD;
}

/* The scenario's thread calls @op; returns its result. */
static inline int ms_do(struct ms_run *r, enum ms_op op, int want)
{
	int rc = ms_step(r, ms_op_name[op], ms_call(r, op), want);

	if (op == MS_UNLOCK) {
		if (rc == 0 && r->depth > 0 && --r->depth == 0)
			__atomic_add_fetch(&r->holds, 1, __ATOMIC_RELAXED);
	} else if (ms_acquired(rc)) {
		__atomic_add_fetch(&r->acquired, 1, __ATOMIC_RELAXED);
		r->depth++;
		if (r->api->acquired)
			r->api->acquired(r->m);
	}
	return rc;
}

static inline int ms_consistent(struct ms_run *r, int want)
{
	return ms_step(r, "consistent", pthread_mutex_consistent(r->m), want);
}

/* ---- other threads ------------------------------------------------------ */

struct ms_other {
	struct ms_run *r;
	enum ms_op op;
	int rc;
};

static inline void *ms_other_main(void *arg)
{
	struct ms_other *o = arg;

	o->rc = ms_call(o->r, o->op);
	if (o->op != MS_UNLOCK && ms_acquired(o->rc))
		__atomic_add_fetch(&o->r->acquired, 1, __ATOMIC_RELAXED);
	return NULL; /* exits holding what it acquired */
}

/* Another thread calls @op and exits (holding the mutex if it took it). */
static inline int ms_other(struct ms_run *r, enum ms_op op, int want)
{
	static const char *const what[] = {
		"other thread: lock", "other thread: trylock", "other thread: timedlock",
		"other thread: timedlock(20 ms)", "other thread: timedlock(bad abstime)",
		"other thread: unlock",
	};
	struct ms_other o = { r, op, 0 };
	pthread_t t;

	T_ASSERT_INT(pthread_create(&t, NULL, ms_other_main, &o), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	return ms_step(r, what[op], o.rc, want);
}

/*
 * A holder: another thread that locks the mutex and keeps it while the
 * scenario's thread tries, times out or blocks; then it unlocks it
 * (@unlock) or dies holding it - when joined (ms_holder_join()), or as
 * soon as a waiter blocks on the mutex (ms_holder_release_on_wait()),
 * which it sees in glibc's lock word.  A waiter that timed out can leave
 * its mark there until the next unlock: a holder that waits for a waiter
 * must be the first holder since the last unlock.
 */
struct ms_holder {
	struct ms_run *r;
	pthread_t t;
	int unlock;
	int lock_rc, unlock_rc;
	int ready, go; /* go: 1 at once, 2 when a waiter blocks */
};

static inline int ms_has_waiter(const struct ms_run *r)
{
	unsigned w = __atomic_load_n((const unsigned *)&r->m->__data.__lock, __ATOMIC_ACQUIRE);

	/* Robust and PI lock words hold the owner's tid and FUTEX_WAITERS;
	 * the others are 0, 1 or 2 (locked, with waiters). */
	return ms_is_robust(r->kind) || ms_is_pi(r->kind) ? (w & MS_FUTEX_WAITERS) != 0 : w == 2;
}

static inline void *ms_holder_main(void *arg)
{
	struct ms_holder *h = arg;
	int go;

	h->lock_rc = ms_call(h->r, MS_LOCK);
	if (ms_acquired(h->lock_rc))
		__atomic_add_fetch(&h->r->acquired, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&h->ready, 1, __ATOMIC_RELEASE);
	while (!(go = __atomic_load_n(&h->go, __ATOMIC_ACQUIRE)))
		usleep(500);
	for (int i = 0; go == 2 && !ms_has_waiter(h->r); i++) {
		if (i > 10000)
			T_FAIL("%s: no waiter blocked on the mutex after 10 s", h->r->scenario);
		usleep(1000);
	}
	if (h->unlock) {
		h->unlock_rc = ms_call(h->r, MS_UNLOCK);
		if (h->unlock_rc == 0 && ms_acquired(h->lock_rc))
			__atomic_add_fetch(&h->r->holds, 1, __ATOMIC_RELAXED);
	}
	return NULL;
}

static inline void ms_holder_start(struct ms_holder *h, struct ms_run *r, int unlock, int want)
{
	memset(h, 0, sizeof(*h));
	h->r = r;
	h->unlock = unlock;
	T_ASSERT_INT(pthread_create(&h->t, NULL, ms_holder_main, h), ==, 0);
	while (!__atomic_load_n(&h->ready, __ATOMIC_ACQUIRE))
		usleep(500);
	ms_step(r, "holder: lock", h->lock_rc, want);
}

static inline void ms_holder_release_on_wait(struct ms_holder *h)
{
	__atomic_store_n(&h->go, 2, __ATOMIC_RELEASE);
}

static inline void ms_holder_join(struct ms_holder *h, int want_unlock)
{
	if (!__atomic_load_n(&h->go, __ATOMIC_RELAXED))
		__atomic_store_n(&h->go, 1, __ATOMIC_RELEASE);
	T_ASSERT_INT(pthread_join(h->t, NULL), ==, 0);
	if (h->unlock)
		ms_step(h->r, "holder: unlock", h->unlock_rc, want_unlock);
}

/* ---- scenarios ---------------------------------------------------------- */

typedef void (*ms_scenario_fn)(struct ms_run *r, enum ms_op op);

/* The mutex is held by the scenario's thread: prove it from another. */
static inline void ms_check_held(struct ms_run *r)
{
	ms_other(r, MS_TRYLOCK, EBUSY);
	if (ms_eperm(r->kind) == EPERM)
		ms_other(r, MS_UNLOCK, EPERM);
}

/* A normal mutex again: each call takes it. */
static inline void ms_check_normal(struct ms_run *r)
{
	ms_do(r, MS_LOCK, 0);
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_TRYLOCK, 0);
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_TIMEDLOCK, 0);
	ms_do(r, MS_UNLOCK, 0);
}

/* Owner died; @op takes it with EOWNERDEAD; consistent; normal again. */
static inline void ms_owner_died(struct ms_run *r, enum ms_op op)
{
	ms_other(r, MS_LOCK, 0); /* dies holding it */
	ms_do(r, op, EOWNERDEAD);
	ms_check_held(r);
	ms_consistent(r, 0);
	/* Taken again by its owner: a recursive mutex counts, an errorcheck
	 * one refuses (glibc: EDEADLK when robust, else EBUSY). */
	if (ms_do(r, MS_TRYLOCK, ms_is_recursive(r->kind) ? 0 : MS_ANY) == 0)
		ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_UNLOCK, 0);
	ms_check_normal(r);
	/* And again, now that the profiler has an entry for the call. */
	ms_other(r, MS_LOCK, 0);
	ms_do(r, op, EOWNERDEAD);
	ms_consistent(r, 0);
	ms_do(r, MS_UNLOCK, 0);
	ms_check_normal(r);
}

/* Owner died; @op takes it with EOWNERDEAD; unlocked without consistent:
 * not recoverable.  glibc's trylock then leaves a robust (non-PI) mutex
 * taken, so trylocks come last. */
static inline void ms_not_recoverable(struct ms_run *r, enum ms_op op)
{
	ms_other(r, MS_LOCK, 0);
	ms_do(r, op, EOWNERDEAD);
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_LOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TIMEDLOCK, ENOTRECOVERABLE);
	ms_do(r, MS_LOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TIMEDLOCK, ENOTRECOVERABLE);
	ms_other(r, MS_LOCK, ENOTRECOVERABLE);
	ms_other(r, MS_TIMEDLOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TRYLOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TRYLOCK, MS_ANY);
	ms_other(r, MS_TRYLOCK, MS_ANY);
}

/* The shortest way to the reported bug: not recoverable, @op, trylock. */
static inline void ms_not_recoverable_then_try(struct ms_run *r, enum ms_op op)
{
	ms_other(r, MS_LOCK, 0);
	ms_do(r, MS_LOCK, EOWNERDEAD);
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, op, ENOTRECOVERABLE);
	ms_do(r, MS_TRYLOCK, ENOTRECOVERABLE);
}

/* Held by another thread: busy, timed out; an invalid abstime is EINVAL
 * (glibc checks it before it waits). */
static inline void ms_busy(struct ms_run *r)
{
	struct ms_holder h;

	ms_holder_start(&h, r, 1, 0);
	ms_do(r, MS_TRYLOCK, EBUSY);
	ms_do(r, MS_TIMEDLOCK_SHORT, ETIMEDOUT);
	ms_do(r, MS_TIMEDLOCK_BAD, EINVAL);
	ms_holder_join(&h, 0);
}

/* Contended: the holder dies while @op (lock, timedlock) waits. */
static inline void ms_owner_dies_while_waiting(struct ms_run *r, enum ms_op op)
{
	struct ms_holder h;

	ms_busy(r);
	ms_holder_start(&h, r, 0, 0);
	ms_holder_release_on_wait(&h);
	ms_do(r, op, EOWNERDEAD);
	ms_holder_join(&h, 0);
	ms_check_held(r);
	ms_consistent(r, 0);
	ms_do(r, MS_UNLOCK, 0);
	ms_check_normal(r);
}

/* Contended: the holder took it with EOWNERDEAD and unlocks it without
 * consistent while @op waits. */
static inline void ms_unrecoverable_while_waiting(struct ms_run *r, enum ms_op op)
{
	struct ms_holder h;

	ms_other(r, MS_LOCK, 0);
	ms_holder_start(&h, r, 1, EOWNERDEAD);
	ms_do(r, MS_TRYLOCK, EBUSY);
	ms_holder_release_on_wait(&h);
	ms_do(r, op, ENOTRECOVERABLE);
	ms_holder_join(&h, 0);
	ms_do(r, MS_LOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TIMEDLOCK, ENOTRECOVERABLE);
	ms_do(r, MS_TRYLOCK, ENOTRECOVERABLE);
}

/* Errorcheck, PI (and their robust kinds, consistent): relock, unlock by
 * another thread, unlock of an unlocked mutex. */
static inline void ms_owner_errors(struct ms_run *r, enum ms_op op)
{
	ms_do(r, op, 0);
	if (ms_is_errorcheck(r->kind)) {
		ms_do(r, MS_LOCK, EDEADLK);
		ms_do(r, MS_TIMEDLOCK, EDEADLK);
	}
	/* trylock by the owner: EBUSY (glibc: EDEADLK for robust or PI
	 * errorcheck mutexes) */
	ms_do(r, MS_TRYLOCK, ms_is_errorcheck(r->kind) ? MS_ANY : EBUSY);
	ms_check_held(r);
	ms_other(r, MS_TIMEDLOCK_SHORT, ETIMEDOUT);
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_UNLOCK, ms_eperm(r->kind));
	ms_other(r, MS_UNLOCK, ms_eperm(r->kind));
	ms_check_normal(r);
}

/* Contended: @op (lock, timedlock) waits until the holder unlocks. */
static inline void ms_contended(struct ms_run *r, enum ms_op op)
{
	struct ms_holder h;

	ms_busy(r);
	ms_holder_start(&h, r, 1, 0);
	ms_holder_release_on_wait(&h);
	ms_do(r, op, 0);
	ms_holder_join(&h, 0);
	if (ms_is_errorcheck(r->kind))
		ms_do(r, MS_LOCK, EDEADLK);
	ms_do(r, MS_UNLOCK, 0);
	if (ms_eperm(r->kind) == EPERM)
		ms_do(r, MS_UNLOCK, EPERM);
}

/* An abstime glibc never looks at when it need not wait (it says so);
 * for mutexes, unlike rwlocks, that is the answer when free. */
static inline void ms_bad_abstime(struct ms_run *r, enum ms_op op)
{
	(void)op;
	if (ms_do(r, MS_TIMEDLOCK_BAD, MS_ANY) == 0)
		ms_do(r, MS_UNLOCK, 0);
}

/* The recursion counter overflows: EAGAIN from every call. */
static inline void ms_recursion_overflow(struct ms_run *r, enum ms_op op)
{
	ms_do(r, op, 0);
	r->m->__data.__count = ~0u; /* as after 2^32 - 1 locks */
	ms_do(r, MS_LOCK, EAGAIN);
	ms_do(r, MS_TRYLOCK, EAGAIN);
	ms_do(r, MS_TIMEDLOCK, EAGAIN);
	r->m->__data.__count = 1;
	ms_do(r, MS_UNLOCK, 0);
	ms_do(r, MS_UNLOCK, EPERM);
}

static inline void ms_run_both(const struct ms_api *real, const struct ms_api *prof,
			       enum ms_kind k, const char *name, ms_scenario_fn fn, enum ms_op op)
{
	char what[64];
	struct ms_run *ref;

	snprintf(what, sizeof(what), "%s, %s", name, ms_op_name[op]);
	ref = ms_begin(real, NULL, k, what);
	fn(ref, op);
	fn(ms_begin(prof, ref, k, what), op);
}

/*
 * ms_run_all() - every scenario through @real, then @prof.
 * Aborts at the first difference.  The runs stay in ms_runs[] until
 * ms_reset().
 */
static inline void ms_run_all(const struct ms_api *real, const struct ms_api *prof)
{
	static const enum ms_kind robust[] = { MS_ROBUST, MS_ROBUST_ERRORCHECK,
					       MS_ROBUST_RECURSIVE, MS_ROBUST_PI };
	static const enum ms_kind owned[] = { MS_ERRORCHECK, MS_PI, MS_PI_ERRORCHECK,
					      MS_ROBUST_ERRORCHECK, MS_ROBUST_PI };
	static const enum ms_kind any[] = { MS_NORMAL, MS_ERRORCHECK, MS_RECURSIVE, MS_PI,
					    MS_ROBUST, MS_ROBUST_PI };
	static const enum ms_op acquire[] = { MS_LOCK, MS_TRYLOCK, MS_TIMEDLOCK };
	static const enum ms_op blocking[] = { MS_LOCK, MS_TIMEDLOCK };

	for (size_t i = 0; i < sizeof(robust) / sizeof(robust[0]); i++) {
		enum ms_kind k = robust[i];

		for (size_t j = 0; j < 2; j++)
			ms_run_both(real, prof, k, "not recoverable, then trylock",
				    ms_not_recoverable_then_try, blocking[j]);
		for (size_t j = 0; j < 3; j++) {
			ms_run_both(real, prof, k, "owner died", ms_owner_died, acquire[j]);
			ms_run_both(real, prof, k, "not recoverable", ms_not_recoverable,
				    acquire[j]);
		}
		for (size_t j = 0; j < 2; j++) {
			ms_run_both(real, prof, k, "owner dies while waiting",
				    ms_owner_dies_while_waiting, blocking[j]);
			ms_run_both(real, prof, k, "not recoverable while waiting",
				    ms_unrecoverable_while_waiting, blocking[j]);
		}
	}
	for (size_t i = 0; i < sizeof(owned) / sizeof(owned[0]); i++)
		for (size_t j = 0; j < 3; j++)
			ms_run_both(real, prof, owned[i], "owner errors", ms_owner_errors,
				    acquire[j]);
	for (size_t i = 0; i < sizeof(any) / sizeof(any[0]); i++) {
		for (size_t j = 0; j < 2; j++)
			ms_run_both(real, prof, any[i], "contended", ms_contended, blocking[j]);
		ms_run_both(real, prof, any[i], "bad abstime, free", ms_bad_abstime,
			    MS_TIMEDLOCK_BAD);
	}
	ms_run_both(real, prof, MS_RECURSIVE, "recursion overflow", ms_recursion_overflow,
		    MS_LOCK);
	ms_run_both(real, prof, MS_ROBUST_RECURSIVE, "recursion overflow",
		    ms_recursion_overflow, MS_TRYLOCK);
}

/* Forget the runs (their mutexes are reused: no report may name them). */
static inline void ms_reset(void)
{
	ms_n_runs = 0;
}

#endif /* SYNCPROF_TEST_MUTEX_SEMANTICS_H */
