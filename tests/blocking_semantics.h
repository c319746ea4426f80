/*
 * blocking_semantics.h - what the clock calls, the semaphore waits,
 * barriers and joins return, through glibc's own functions and through
 * the profiled ones (interposed or compiled in).  Private to tests/
 * (test_instrument.c and preload/preload_semantics.c).
 *
 * bs_run() walks each call through its states - free, taken by another
 * thread (the profiler's slow path), timed out, a clock or tv_nsec glibc
 * rejects (EINVAL, and the object left as it was: the profiler's try must
 * not have taken it), EDEADLK, EINTR of a semaphore wait interrupted by a
 * handler installed without SA_RESTART, PTHREAD_BARRIER_SERIAL_THREAD,
 * EDEADLK and EINVAL of joins, the joins with a deadline (success,
 * ETIMEDOUT while the thread runs and the thread still joinable after,
 * EINVAL for a clock glibc rejects) - and asserts the value glibc gives.
 * The caller runs it once with glibc's functions (@real: the expectations
 * are glibc's) and once with the profiled ones.  Not covered: ESRCH of
 * pthread_join (glibc gives it only for a thread already joined, whose
 * descriptor may be reused: undefined behaviour), and a bad tv_nsec given
 * to pthread_timedjoin_np/clockjoin_np (glibc 2.36 checks it only in its
 * futex wait, which it retries until the thread ends: no EINVAL to see).
 */
#ifndef SYNCPROF_TEST_BLOCKING_SEMANTICS_H
#define SYNCPROF_TEST_BLOCKING_SEMANTICS_H

#if defined(__SANITIZE_THREAD__)
#define BS_TSAN 1 /* see bs_run() and bs_semaphore() */
#else
#define BS_TSAN 0
#endif

#include <errno.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <string.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"

struct bs_api {
	const char *name;
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*rwlock_clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*rwlock_clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*bs_sem_wait)(sem_t *);
	int (*bs_sem_trywait)(sem_t *);
	int (*bs_sem_timedwait)(sem_t *, const struct timespec *);
	int (*bs_sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
	int (*barrier_wait)(pthread_barrier_t *);
	int (*join)(pthread_t, void **);
	int (*bs_thrd_join)(thrd_t, int *);
	int (*timedjoin_np)(pthread_t, void **, const struct timespec *);
	int (*clockjoin_np)(pthread_t, void **, clockid_t, const struct timespec *);
};

#define BS_BAD_CLOCK CLOCK_PROCESS_CPUTIME_ID /* a clock, but not one futexes take */

static struct timespec bs_in_ms(clockid_t clock, long ms)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

static const struct timespec bs_bad_ns = { 1, 1000000000L };

/* The call of a test, made in another thread while this one holds the
 * object. */
struct bs_call {
	const struct bs_api *a;
	void *obj;
	clockid_t clock;
	long ms;
	int rc;
};

static void *bs_clocklock_thread(void *arg)
{
	struct bs_call *c = arg;
	struct timespec ts = bs_in_ms(c->clock, c->ms);

	c->rc = c->a->mutex_clocklock(c->obj, c->clock, &ts);
	if (c->rc == 0)
		pthread_mutex_unlock(c->obj);
	return NULL;
}

static void *bs_clockrd_thread(void *arg)
{
	struct bs_call *c = arg;
	struct timespec ts = bs_in_ms(c->clock, c->ms);

	c->rc = c->a->rwlock_clockrdlock(c->obj, c->clock, &ts);
	if (c->rc == 0)
		pthread_rwlock_unlock(c->obj);
	return NULL;
}

static void *bs_clockwr_thread(void *arg)
{
	struct bs_call *c = arg;
	struct timespec ts = bs_in_ms(c->clock, c->ms);

	c->rc = c->a->rwlock_clockwrlock(c->obj, c->clock, &ts);
	if (c->rc == 0)
		pthread_rwlock_unlock(c->obj);
	return NULL;
}

/* A bad tv_nsec, in another thread: glibc's mutex checks it only when it
 * has to wait. */
static void *bs_clocklock_bad_thread(void *arg)
{
	struct bs_call *c = arg;

	c->rc = c->a->mutex_clocklock(c->obj, CLOCK_MONOTONIC, &bs_bad_ns);
	return NULL;
}

static int bs_in_thread(void *(*fn)(void *), struct bs_call *c)
{
	pthread_t t;

	T_ASSERT_INT(pthread_create(&t, NULL, fn, c), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	return c->rc;
}

static void bs_mutex(const struct bs_api *a)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_mutexattr_t at;
	struct timespec ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	struct bs_call c = { a, &m, CLOCK_MONOTONIC, 20, -1 };

	T_ASSERT_INT(a->mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	ts = bs_in_ms(CLOCK_REALTIME, 20);
	T_ASSERT_INT(a->mutex_clocklock(&m, CLOCK_REALTIME, &ts), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	/* A clock glibc rejects: EINVAL, the free mutex not taken. */
	T_ASSERT_INT(a->mutex_clocklock(&m, BS_BAD_CLOCK, &ts), ==, EINVAL);
	T_ASSERT_INT(pthread_mutex_trylock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	/* A bad tv_nsec on a free mutex: taken (glibc checks it only to wait). */
	T_ASSERT_INT(a->mutex_clocklock(&m, CLOCK_MONOTONIC, &bs_bad_ns), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	/* Held by this thread: the other times out, or rejects its tv_nsec. */
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
	T_ASSERT_INT(bs_in_thread(bs_clocklock_thread, &c), ==, ETIMEDOUT);
	c.clock = CLOCK_REALTIME;
	T_ASSERT_INT(bs_in_thread(bs_clocklock_thread, &c), ==, ETIMEDOUT);
	T_ASSERT_INT(bs_in_thread(bs_clocklock_bad_thread, &c), ==, EINVAL);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	T_ASSERT_INT(bs_in_thread(bs_clocklock_thread, &c), ==, 0);

	pthread_mutexattr_init(&at);
	pthread_mutexattr_settype(&at, PTHREAD_MUTEX_ERRORCHECK);
	T_ASSERT_INT(pthread_mutex_init(&m, &at), ==, 0);
	ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	T_ASSERT_INT(a->mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ==, 0);
	T_ASSERT_INT(a->mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ==, EDEADLK);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	pthread_mutex_destroy(&m);
	pthread_mutexattr_destroy(&at);
}

static pthread_mutex_t bs_cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t bs_cv = PTHREAD_COND_INITIALIZER;
static int bs_flag;

static void *bs_signaller(void *arg)
{
	(void)arg;
	usleep(10000);
	pthread_mutex_lock(&bs_cm);
	bs_flag = 1;
	pthread_cond_signal(&bs_cv);
	pthread_mutex_unlock(&bs_cm);
	return NULL;
}

static void bs_cond(const struct bs_api *a)
{
	struct timespec ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	pthread_t t;
	int rc = 0;

	T_ASSERT_INT(pthread_mutex_lock(&bs_cm), ==, 0);
	T_ASSERT_INT(a->cond_clockwait(&bs_cv, &bs_cm, CLOCK_MONOTONIC, &ts), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_mutex_trylock(&bs_cm), ==, EBUSY); /* held again */
	ts = bs_in_ms(CLOCK_REALTIME, 20);
	T_ASSERT_INT(a->cond_clockwait(&bs_cv, &bs_cm, CLOCK_REALTIME, &ts), ==, ETIMEDOUT);
	T_ASSERT_INT(a->cond_clockwait(&bs_cv, &bs_cm, BS_BAD_CLOCK, &ts), ==, EINVAL);
	T_ASSERT_INT(a->cond_clockwait(&bs_cv, &bs_cm, CLOCK_MONOTONIC, &bs_bad_ns), ==, EINVAL);
	T_ASSERT_INT(pthread_mutex_trylock(&bs_cm), ==, EBUSY);
	bs_flag = 0;
	T_ASSERT_INT(pthread_create(&t, NULL, bs_signaller, NULL), ==, 0);
	ts = bs_in_ms(CLOCK_MONOTONIC, 60000);
	while (!bs_flag && rc == 0)
		rc = a->cond_clockwait(&bs_cv, &bs_cm, CLOCK_MONOTONIC, &ts);
	T_ASSERT_INT(rc, ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&bs_cm), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
}

static void bs_rwlock(const struct bs_api *a)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	struct bs_call c = { a, &l, CLOCK_MONOTONIC, 20, -1 };

	T_ASSERT_INT(a->rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ==, 0);
	T_ASSERT_INT(a->rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ==, 0);
	T_ASSERT_INT(bs_in_thread(bs_clockwr_thread, &c), ==, ETIMEDOUT);
	T_ASSERT_INT(bs_in_thread(bs_clockrd_thread, &c), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
	T_ASSERT_INT(a->rwlock_clockwrlock(&l, CLOCK_REALTIME, &ts), ==, 0);
	T_ASSERT_INT(a->rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &ts), ==, EDEADLK);
	T_ASSERT_INT(a->rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ==, EDEADLK);
	c.clock = CLOCK_REALTIME;
	T_ASSERT_INT(bs_in_thread(bs_clockrd_thread, &c), ==, ETIMEDOUT);
	T_ASSERT_INT(bs_in_thread(bs_clockwr_thread, &c), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
	/* Rejected before the lock is looked at: EINVAL, the free lock
	 * still free. */
	T_ASSERT_INT(a->rwlock_clockrdlock(&l, BS_BAD_CLOCK, &ts), ==, EINVAL);
	T_ASSERT_INT(a->rwlock_clockwrlock(&l, BS_BAD_CLOCK, &ts), ==, EINVAL);
	T_ASSERT_INT(a->rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &bs_bad_ns), ==, EINVAL);
	T_ASSERT_INT(a->rwlock_clockwrlock(&l, CLOCK_MONOTONIC, &bs_bad_ns), ==, EINVAL);
	T_ASSERT_INT(pthread_rwlock_trywrlock(&l), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
	pthread_rwlock_destroy(&l);
}

static sem_t bs_sem;
static volatile sig_atomic_t bs_signals;
static int bs_sem_done;

static void bs_on_signal(int sig)
{
	(void)sig;
	bs_signals++;
}

static void *bs_poster(void *arg)
{
	(void)arg;
	usleep(20000);
	sem_post(&bs_sem);
	return NULL;
}

/* Signals @arg (a pthread_t) until it is done. */
static void *bs_interrupter(void *arg)
{
	pthread_t target = *(pthread_t *)arg;

	while (!__atomic_load_n(&bs_sem_done, __ATOMIC_ACQUIRE)) {
		usleep(10000);
		pthread_kill(target, SIGUSR1);
	}
	return NULL;
}

/* -1 with errno @err, and errno; or the value. */
#define BS_SEM(call, rc_, err_)                                                          \
	do {                                                                             \
		int rc__;                                                                \
		errno = 0;                                                               \
		rc__ = (call);                                                           \
		T_ASSERT_INT(rc__, ==, (rc_));                                           \
		T_ASSERT_INT(errno, ==, (err_));                                         \
	} while (0)

static void bs_semaphore(const struct bs_api *a)
{
	struct timespec ts = bs_in_ms(CLOCK_REALTIME, 20);
	struct sigaction sa, old;
	pthread_t t, self = pthread_self();
	int v;

	T_ASSERT_INT(sem_init(&bs_sem, 0, 1), ==, 0);
	/* Rejected before the count is looked at: EINVAL, the count kept. */
	BS_SEM(a->bs_sem_timedwait(&bs_sem, &bs_bad_ns), -1, EINVAL);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, BS_BAD_CLOCK, &ts), -1, EINVAL);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, CLOCK_MONOTONIC, &bs_bad_ns), -1, EINVAL);
	T_ASSERT_INT(sem_getvalue(&bs_sem, &v), ==, 0);
	T_ASSERT_INT(v, ==, 1);
	BS_SEM(a->bs_sem_trywait(&bs_sem), 0, 0);
	BS_SEM(a->bs_sem_trywait(&bs_sem), -1, EAGAIN);
	BS_SEM(a->bs_sem_timedwait(&bs_sem, &ts), -1, ETIMEDOUT);
	ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, CLOCK_MONOTONIC, &ts), -1, ETIMEDOUT);
	ts = bs_in_ms(CLOCK_REALTIME, 20);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, CLOCK_REALTIME, &ts), -1, ETIMEDOUT);
	sem_post(&bs_sem);
	ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, CLOCK_MONOTONIC, &ts), 0, 0);
	sem_post(&bs_sem);
	ts = bs_in_ms(CLOCK_REALTIME, 20);
	BS_SEM(a->bs_sem_timedwait(&bs_sem, &ts), 0, 0);
	sem_post(&bs_sem);
	BS_SEM(a->bs_sem_wait(&bs_sem), 0, 0);

	/* Waits that block until a post: errno left as it was. */
	for (int i = 0; i < 3; i++) {
		T_ASSERT_INT(pthread_create(&t, NULL, bs_poster, NULL), ==, 0);
		ts = bs_in_ms(i == 2 ? CLOCK_MONOTONIC : CLOCK_REALTIME, 60000);
		errno = 4242;
		v = i == 0 ? a->bs_sem_wait(&bs_sem)
		    : i == 1 ? a->bs_sem_timedwait(&bs_sem, &ts)
			     : a->bs_sem_clockwait(&bs_sem, CLOCK_MONOTONIC, &ts);
		T_ASSERT_INT(v, ==, 0);
		T_ASSERT_INT(errno, ==, 4242);
		T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	}

	/* EINTR: a handler installed without SA_RESTART interrupts the wait.
	 * Not under ThreadSanitizer, which delivers signals at its own points
	 * (and crashed in this sequence); the other builds check it. */
	if (BS_TSAN) {
		sem_destroy(&bs_sem);
		return;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = bs_on_signal;
	sigemptyset(&sa.sa_mask);
	T_ASSERT_INT(sigaction(SIGUSR1, &sa, &old), ==, 0);
	__atomic_store_n(&bs_sem_done, 0, __ATOMIC_RELEASE);
	T_ASSERT_INT(pthread_create(&t, NULL, bs_interrupter, &self), ==, 0);
	BS_SEM(a->bs_sem_wait(&bs_sem), -1, EINTR);
	ts = bs_in_ms(CLOCK_MONOTONIC, 60000);
	BS_SEM(a->bs_sem_clockwait(&bs_sem, CLOCK_MONOTONIC, &ts), -1, EINTR);
	__atomic_store_n(&bs_sem_done, 1, __ATOMIC_RELEASE);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	T_ASSERT_INT(sigaction(SIGUSR1, &old, NULL), ==, 0);
	T_ASSERT(bs_signals > 0);
	sem_destroy(&bs_sem);
}

static pthread_barrier_t bs_barrier;
static const struct bs_api *bs_barrier_api;

static void *bs_barrier_thread(void *arg)
{
	(void)arg;
	return (void *)(long)bs_barrier_api->barrier_wait(&bs_barrier);
}

static void bs_barrier_run(const struct bs_api *a)
{
	for (int round = 0; round < 2; round++) {
		pthread_t t[2];
		void *r;
		int serial = 0, zero = 0, rc;

		bs_barrier_api = a;
		if (round == 0)
			T_ASSERT_INT(pthread_barrier_init(&bs_barrier, NULL, 3), ==, 0);
		for (int i = 0; i < 2; i++)
			T_ASSERT_INT(pthread_create(&t[i], NULL, bs_barrier_thread, NULL), ==, 0);
		rc = a->barrier_wait(&bs_barrier);
		serial += rc == PTHREAD_BARRIER_SERIAL_THREAD;
		zero += rc == 0;
		for (int i = 0; i < 2; i++) {
			T_ASSERT_INT(pthread_join(t[i], &r), ==, 0);
			serial += (long)r == PTHREAD_BARRIER_SERIAL_THREAD;
			zero += (long)r == 0;
		}
		T_ASSERT_INT(serial, ==, 1);
		T_ASSERT_INT(zero, ==, 2);
	}
	T_ASSERT_INT(pthread_barrier_destroy(&bs_barrier), ==, 0);
}

static void *bs_returns_42(void *arg)
{
	(void)arg;
	usleep(5000);
	return (void *)42L;
}

static int bs_detached_go, bs_detached_done;

static void *bs_detached(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&bs_detached_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	__atomic_store_n(&bs_detached_done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static const struct bs_api *bs_self_api;

static void *bs_join_self(void *arg)
{
	(void)arg;
	return (void *)(long)bs_self_api->join(pthread_self(), NULL);
}

static int bs_thrd_7(void *arg)
{
	(void)arg;
	return 7;
}

static int bs_thrd_join_self(void *arg)
{
	(void)arg;
	return bs_self_api->bs_thrd_join(thrd_current(), NULL);
}

static void bs_join(const struct bs_api *a)
{
	pthread_t t;
	thrd_t c;
	void *r = NULL;
	int res = 0;

	T_ASSERT_INT(pthread_create(&t, NULL, bs_returns_42, NULL), ==, 0);
	T_ASSERT_INT(a->join(t, &r), ==, 0);
	T_ASSERT_INT((long)r, ==, 42);
	T_ASSERT_INT(thrd_create(&c, bs_thrd_7, NULL), ==, thrd_success);
	T_ASSERT_INT(a->bs_thrd_join(c, &res), ==, thrd_success);
	T_ASSERT_INT(res, ==, 7);
	/* The misuse below (joining oneself, a detached thread) stops
	 * ThreadSanitizer itself (a failed CHECK in its join); the other
	 * builds check it. */
	if (BS_TSAN)
		return;
	/* Joining oneself. */
	bs_self_api = a;
	T_ASSERT_INT(pthread_create(&t, NULL, bs_join_self, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(t, &r), ==, 0);
	T_ASSERT_INT((long)r, ==, EDEADLK);
	T_ASSERT_INT(a->join(pthread_self(), NULL), ==, EDEADLK);
	/* A detached thread, still running. */
	bs_detached_go = bs_detached_done = 0;
	T_ASSERT_INT(pthread_create(&t, NULL, bs_detached, NULL), ==, 0);
	T_ASSERT_INT(pthread_detach(t), ==, 0);
	T_ASSERT_INT(a->join(t, NULL), ==, EINVAL);
	__atomic_store_n(&bs_detached_go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&bs_detached_done, __ATOMIC_ACQUIRE))
		usleep(1000);

	/* C11. */
	T_ASSERT_INT(thrd_create(&c, bs_thrd_join_self, NULL), ==, thrd_success);
	T_ASSERT_INT(thrd_join(c, &res), ==, thrd_success);
	T_ASSERT_INT(res, ==, thrd_error);
}

static int bs_join_go;

static void *bs_runs_until_go(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&bs_join_go, __ATOMIC_ACQUIRE))
		usleep(1000);
	return (void *)43L;
}

/* pthread_timedjoin_np and pthread_clockjoin_np.  ThreadSanitizer (GCC 12)
 * has no interceptor for pthread_clockjoin_np: a thread it joins stays
 * running to TSan; the clock join is checked in the other builds. */
static void bs_timedjoin(const struct bs_api *a)
{
	static const struct timespec before_epoch = { -1, 0 };
	struct timespec ts;
	pthread_t t;
	void *r = NULL;

	/* Ends before the deadline: 0 and its value. */
	T_ASSERT_INT(pthread_create(&t, NULL, bs_returns_42, NULL), ==, 0);
	ts = bs_in_ms(CLOCK_REALTIME, 60000);
	T_ASSERT_INT(a->timedjoin_np(t, &r, &ts), ==, 0);
	T_ASSERT_INT((long)r, ==, 42);
	if (!BS_TSAN) {
		r = NULL;
		T_ASSERT_INT(pthread_create(&t, NULL, bs_returns_42, NULL), ==, 0);
		ts = bs_in_ms(CLOCK_MONOTONIC, 60000);
		T_ASSERT_INT(a->clockjoin_np(t, &r, CLOCK_MONOTONIC, &ts), ==, 0);
		T_ASSERT_INT((long)r, ==, 42);
	}

	/* Still running: ETIMEDOUT (a deadline before the epoch too), or EINVAL
	 * for a clock glibc rejects; the thread stays joinable. */
	__atomic_store_n(&bs_join_go, 0, __ATOMIC_RELEASE);
	T_ASSERT_INT(pthread_create(&t, NULL, bs_runs_until_go, NULL), ==, 0);
	ts = bs_in_ms(CLOCK_REALTIME, 20);
	T_ASSERT_INT(a->timedjoin_np(t, &r, &ts), ==, ETIMEDOUT);
	T_ASSERT_INT(a->timedjoin_np(t, &r, &before_epoch), ==, ETIMEDOUT);
	if (!BS_TSAN) {
		ts = bs_in_ms(CLOCK_MONOTONIC, 20);
		T_ASSERT_INT(a->clockjoin_np(t, &r, CLOCK_MONOTONIC, &ts), ==, ETIMEDOUT);
		ts = bs_in_ms(CLOCK_REALTIME, 20);
		T_ASSERT_INT(a->clockjoin_np(t, &r, CLOCK_REALTIME, &ts), ==, ETIMEDOUT);
		T_ASSERT_INT(a->clockjoin_np(t, &r, BS_BAD_CLOCK, &ts), ==, EINVAL);
	}
	/* Not profiled (never blocks): glibc's EBUSY either way. */
	T_ASSERT_INT(pthread_tryjoin_np(t, &r), ==, EBUSY);
	T_ASSERT_INT((long)r, ==, 42); /* no call above wrote it */
	__atomic_store_n(&bs_join_go, 1, __ATOMIC_RELEASE);
	ts = bs_in_ms(CLOCK_REALTIME, 60000);
	T_ASSERT_INT(a->timedjoin_np(t, &r, &ts), ==, 0);
	T_ASSERT_INT((long)r, ==, 43);

	/* The misuse (see bs_join()): oneself, a detached thread. */
	if (BS_TSAN)
		return;
	ts = bs_in_ms(CLOCK_REALTIME, 60000);
	T_ASSERT_INT(a->timedjoin_np(pthread_self(), NULL, &ts), ==, EDEADLK);
	T_ASSERT_INT(a->clockjoin_np(pthread_self(), NULL, CLOCK_MONOTONIC, &ts), ==, EDEADLK);
	bs_detached_go = bs_detached_done = 0;
	T_ASSERT_INT(pthread_create(&t, NULL, bs_detached, NULL), ==, 0);
	T_ASSERT_INT(pthread_detach(t), ==, 0);
	T_ASSERT_INT(a->timedjoin_np(t, NULL, &ts), ==, EINVAL);
	T_ASSERT_INT(a->clockjoin_np(t, NULL, CLOCK_MONOTONIC, &ts), ==, EINVAL);
	__atomic_store_n(&bs_detached_go, 1, __ATOMIC_RELEASE);
	while (!__atomic_load_n(&bs_detached_done, __ATOMIC_ACQUIRE))
		usleep(1000);
}

static void bs_run(const struct bs_api *a)
{
	/* ThreadSanitizer (GCC 12) has no interceptors for the pthread clock
	 * calls: it never sees glibc's own clocklock take the mutex and calls
	 * the unlock that follows a misuse.  They run in the other builds. */
	if (!BS_TSAN) {
		bs_mutex(a);
		bs_cond(a);
		bs_rwlock(a);
	}
	bs_semaphore(a);
	bs_barrier_run(a);
	bs_join(a);
	bs_timedjoin(a);
}

#endif /* SYNCPROF_TEST_BLOCKING_SEMANTICS_H */
