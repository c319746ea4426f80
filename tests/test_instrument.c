/*
 * test_instrument.c - compiled with -include syncprof/instrument.h: every
 * redirected call returns exactly what the real call returns (EBUSY,
 * EDEADLK, EPERM, ETIMEDOUT, thrd_busy, thrd_timedout...), and is recorded
 * with the right type, object, file:line and counts.  The mutex state
 * machines of mutex_semantics.h run against the real calls with profiling
 * on and off; CTest runs this also with hold=1,hold_sample=1 and with a
 * trace.
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include <time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "runtime/runtime.h"
#include "report/profile.h"
#include "report_util.h"
#include "mutex_semantics.h"
#include "blocking_semantics.h"
#include "record/hold.h"

/* ThreadSanitizer reports deliberate misuse (unlocking a mutex one does
 * not own) as an error; those checks run in the other builds. */
#if defined(__SANITIZE_THREAD__)
#define MISUSE_CHECKS 0
#else
#define MISUSE_CHECKS 1
#endif

static struct sp_rows rows;

static void collect(int coalesce)
{
	struct syncprof_report_options o;

	syncprof_report_options_init(&o);
	o.coalesce = coalesce;
	sp_rows_free(&rows);
	T_ASSERT_INT(t_report_rows(&rows, &o), ==, 0);
}

static const struct sp_row *find(unsigned line, int type)
{
	for (size_t i = 0; i < rows.n; i++)
		if (rows.v[i].line == line && rows.v[i].type == type)
			return &rows.v[i];
	T_FAIL("no row for line %u type %s", line, sp_type_name(type));
}

static struct timespec in_ms(long ms)
{
	struct timespec t;

	clock_gettime(CLOCK_REALTIME, &t);
	t.tv_nsec += ms * 1000000L;
	t.tv_sec += t.tv_nsec / 1000000000L;
	t.tv_nsec %= 1000000000L;
	return t;
}

static pthread_mutex_t held = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static int phase;

/* Holds locks from another thread so that tries fail and waits wait. */
static void *holder(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&held);
	pthread_rwlock_wrlock(&rw);
	__atomic_store_n(&phase, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != 2)
		usleep(1000);
	usleep(20000); /* the main thread is now blocked on both */
	pthread_rwlock_unlock(&rw);
	usleep(20000);
	pthread_mutex_unlock(&held);
	return NULL;
}

/* The real calls: a parenthesised name is not a macro call. */
static int real_lock(pthread_mutex_t *m)
{
	return (pthread_mutex_lock)(m);
}

static int real_trylock(pthread_mutex_t *m)
{
	return (pthread_mutex_trylock)(m);
}

static int real_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	return (pthread_mutex_timedlock)(m, abstime);
}

static int real_unlock(pthread_mutex_t *m)
{
	return (pthread_mutex_unlock)(m);
}

static int prof_lock(pthread_mutex_t *m)
{
	return pthread_mutex_lock(m);
}

static int prof_trylock(pthread_mutex_t *m)
{
	return pthread_mutex_trylock(m);
}

static int prof_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	return pthread_mutex_timedlock(m, abstime);
}

static int prof_unlock(pthread_mutex_t *m)
{
	return pthread_mutex_unlock(m);
}

/* With hold tracking (hold=1), an acquisition (EOWNERDEAD too) is a hold. */
static void prof_acquired(pthread_mutex_t *m)
{
	struct sp_site site;
	uint64_t since;
	pid_t tid;

	if (!syncprof_is_enabled() || !sp_opts.hold)
		return;
	T_ASSERT_INT(sp_hold_lookup((uintptr_t)m, &tid, &site, &since), ==, 0);
	T_ASSERT_INT(tid, ==, sp_gettid());
}

static const struct ms_api real_api = { "glibc", real_lock, real_trylock, real_timedlock,
					real_unlock, NULL };
static const struct ms_api prof_api = { "instrumented", prof_lock, prof_trylock,
					prof_timedlock, prof_unlock, prof_acquired };

/*
 * Every state of every mutex kind, profiled against real; then what was
 * recorded for each mutex: its acquisitions (EOWNERDEAD included) and,
 * with every hold timed, its holds.
 */
static void test_mutex_states(void)
{
	int exact_holds = sp_opts.hold && sp_opts.hold_sample == 1;

	ms_reset();
	ms_run_all(&real_api, &prof_api);
	collect(0);
	for (int i = 0; i < ms_n_runs; i++) {
		const struct ms_run *r = &ms_runs[i];
		uint64_t acquired = 0, holds = 0;

		if (!r->ref)
			continue;
		for (size_t j = 0; j < rows.n; j++)
			if (rows.v[j].obj == (uintptr_t)r->m) {
				acquired += rows.v[j].acquisitions;
				holds += rows.v[j].holds;
			}
		if (acquired != r->acquired)
			T_FAIL("%s: %llu acquisitions recorded, %u made", r->scenario,
			       (unsigned long long)acquired, r->acquired);
		if (exact_holds && holds != r->holds)
			T_FAIL("%s: %llu holds recorded, %u made", r->scenario,
			       (unsigned long long)holds, r->holds);
	}
}

/* glibc's timed rwlock calls reject an invalid abstime before anything
 * else, even on a free lock: EINVAL, not taken. */
static void test_rwlock_bad_abstime(void)
{
	const struct timespec bad[] = { { 0, 1000000000L }, { 0, -1 } };

	for (int i = 0; i < 2; i++) {
		pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;

		T_ASSERT_INT((pthread_rwlock_timedrdlock)(&l, &bad[i]), ==, EINVAL);
		T_ASSERT_INT((pthread_rwlock_timedwrlock)(&l, &bad[i]), ==, EINVAL);
		T_ASSERT_INT(pthread_rwlock_timedrdlock(&l, &bad[i]), ==, EINVAL);
		T_ASSERT_INT(pthread_rwlock_timedwrlock(&l, &bad[i]), ==, EINVAL);
		T_ASSERT_INT(pthread_rwlock_trywrlock(&l), ==, 0); /* still free */
		T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
	}
}

/*
 * With hold tracking: more than 32 locks held at once are not
 * hold-tracked, and the profile says how many acquisitions that was (it
 * used to count them and tell no one).
 */
static void test_hold_untracked(void)
{
	static pthread_mutex_t many[40];
	char *buf = NULL;
	size_t len = 0;
	struct syncprof_report_options o;
	FILE *f;
	const char *k;

	if (!sp_hold_is_on())
		return;
	for (int i = 0; i < 40; i++) {
		pthread_mutex_init(&many[i], NULL);
		T_ASSERT_INT(pthread_mutex_lock(&many[i]), ==, 0);
	}
	for (int i = 39; i >= 0; i--)
		T_ASSERT_INT(pthread_mutex_unlock(&many[i]), ==, 0);
	syncprof_report_options_init(&o);
	o.format = SYNCPROF_FORMAT_JSON;
	f = open_memstream(&buf, &len);
	T_ASSERT_INT(syncprof_report(f, &o), ==, 0);
	fclose(f);
	k = strstr(buf, "\"hold_untracked\":");
	T_ASSERT(k != NULL);
	T_ASSERT_INT(strtoull(k + strlen("\"hold_untracked\":"), NULL, 10), >=, 8);
	free(buf);
	o.format = SYNCPROF_FORMAT_TABLE;
	f = open_memstream(&buf, &len);
	T_ASSERT_INT(syncprof_report(f, &o), ==, 0);
	fclose(f);
	T_ASSERT_CONTAINS(buf, "were not hold-tracked");
	free(buf);
}

/* ---- clock calls, semaphores, barriers, joins (blocking_semantics.h) ---- */

static int p_clocklock(pthread_mutex_t *m, clockid_t k, const struct timespec *t)
{
	return pthread_mutex_clocklock(m, k, t);
}

static int p_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t k,
		       const struct timespec *t)
{
	return pthread_cond_clockwait(c, m, k, t);
}

static int p_clockrd(pthread_rwlock_t *l, clockid_t k, const struct timespec *t)
{
	return pthread_rwlock_clockrdlock(l, k, t);
}

static int p_clockwr(pthread_rwlock_t *l, clockid_t k, const struct timespec *t)
{
	return pthread_rwlock_clockwrlock(l, k, t);
}

static int p_sem_wait(sem_t *s)
{
	return sem_wait(s);
}

static int p_sem_trywait(sem_t *s)
{
	return sem_trywait(s);
}

static int p_sem_timedwait(sem_t *s, const struct timespec *t)
{
	return sem_timedwait(s, t);
}

static int p_sem_clockwait(sem_t *s, clockid_t k, const struct timespec *t)
{
	return sem_clockwait(s, k, t);
}

static int p_barrier_wait(pthread_barrier_t *b)
{
	return pthread_barrier_wait(b);
}

static int p_join(pthread_t t, void **r)
{
	return pthread_join(t, r);
}

static int p_thrd_join(thrd_t t, int *r)
{
	return thrd_join(t, r);
}

static int p_timedjoin(pthread_t t, void **r, const struct timespec *ts)
{
	return pthread_timedjoin_np(t, r, ts);
}

static int p_clockjoin(pthread_t t, void **r, clockid_t k, const struct timespec *ts)
{
	return pthread_clockjoin_np(t, r, k, ts);
}

static const struct bs_api real_bs = {
	"glibc",       pthread_mutex_clocklock, pthread_cond_clockwait, pthread_rwlock_clockrdlock,
	pthread_rwlock_clockwrlock, sem_wait,	sem_trywait,		sem_timedwait,
	sem_clockwait, pthread_barrier_wait,	pthread_join,		thrd_join,
	pthread_timedjoin_np, pthread_clockjoin_np,
};
static const struct bs_api prof_bs = {
	"instrumented", p_clocklock,	 p_clockwait,	  p_clockrd, p_clockwr, p_sem_wait,
	p_sem_trywait,	p_sem_timedwait, p_sem_clockwait, p_barrier_wait, p_join, p_thrd_join,
	p_timedjoin,	p_clockjoin,
};

static sem_t rows_sem;
static pthread_barrier_t rows_barrier;
static unsigned l_barrier;

/* Posts once the main thread waits in sem_wait: glibc (64-bit atomics)
 * counts the waiters in the upper half of the semaphore's first word,
 * so no sleep has to be long enough on a loaded machine. */
static void *post_later(void *arg)
{
	const uint64_t *word = (const void *)&rows_sem;

	(void)arg;
	while (!(__atomic_load_n(word, __ATOMIC_ACQUIRE) >> 32))
		usleep(1000);
	usleep(10000); /* a wait of 10 ms at least: the row's wait_ns */
	sem_post(&rows_sem);
	return NULL;
}

static void *sleep_50ms(void *arg)
{
	(void)arg;
	usleep(50000);
	return NULL;
}

static void *barrier_thread(void *arg)
{
	(void)arg;
	__atomic_store_n(&l_barrier, __LINE__ + 1, __ATOMIC_RELAXED);
	pthread_barrier_wait(&rows_barrier);
	return NULL;
}

/* What the compiled-in calls record: type, line, counts. */
static void test_blocking_rows(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
	pthread_cond_t c = PTHREAD_COND_INITIALIZER;
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	struct timespec ts = bs_in_ms(CLOCK_MONOTONIC, 20);
	pthread_t t[2];
	unsigned l_clock, l_clockwait, l_clockrd, l_clockwr, l_sem, l_semtry, l_join, l_timedjoin,
		l_clockjoin, l_badclock;
	const clockid_t mono = CLOCK_MONOTONIC;
	int rc;
	const struct sp_row *r;

	l_clock = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_clocklock(&m, CLOCK_MONOTONIC, &ts), ==, 0);
	l_clockwait = __LINE__ + 1;
	T_ASSERT_INT(pthread_cond_clockwait(&c, &m, CLOCK_MONOTONIC, &ts), ==, ETIMEDOUT);
	pthread_mutex_unlock(&m);
	l_clockrd = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_clockrdlock(&l, CLOCK_MONOTONIC, &ts), ==, 0);
	pthread_rwlock_unlock(&l);
	l_clockwr = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_clockwrlock(&l, CLOCK_REALTIME, &ts), ==, 0);
	pthread_rwlock_unlock(&l);

	T_ASSERT_INT(sem_init(&rows_sem, 0, 0), ==, 0);
	l_semtry = __LINE__ + 1;
	T_ASSERT_INT(sem_trywait(&rows_sem), ==, -1);
	T_ASSERT_INT(pthread_create(&t[0], NULL, post_later, NULL), ==, 0);
	l_sem = __LINE__ + 1;
	T_ASSERT_INT(sem_wait(&rows_sem), ==, 0);
	pthread_join(t[0], NULL);

	T_ASSERT_INT(pthread_barrier_init(&rows_barrier, NULL, 3), ==, 0);
	for (int i = 0; i < 2; i++)
		T_ASSERT_INT(pthread_create(&t[i], NULL, barrier_thread, NULL), ==, 0);
	barrier_thread(NULL);
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	pthread_barrier_destroy(&rows_barrier);

	T_ASSERT_INT(pthread_create(&t[0], NULL, sleep_50ms, NULL), ==, 0);
	l_join = __LINE__ + 1;
	T_ASSERT_INT(pthread_join(t[0], NULL), ==, 0);

	/* Joins with a deadline: a timeout is a wait too, a bad clock none. */
	__atomic_store_n(&bs_join_go, 0, __ATOMIC_RELEASE);
	T_ASSERT_INT(pthread_create(&t[0], NULL, bs_runs_until_go, NULL), ==, 0);
	ts = bs_in_ms(CLOCK_REALTIME, 5);
	l_timedjoin = __LINE__ + 1;
	T_ASSERT_INT(pthread_timedjoin_np(t[0], NULL, &ts), ==, ETIMEDOUT);
	l_badclock = __LINE__ + 1;
	T_ASSERT_INT(pthread_clockjoin_np(t[0], NULL, BS_BAD_CLOCK, &ts), ==, EINVAL);
	__atomic_store_n(&bs_join_go, 1, __ATOMIC_RELEASE);
	ts = bs_in_ms(CLOCK_MONOTONIC, 60000);
	/* ThreadSanitizer has no pthread_clockjoin_np (blocking_semantics.h). */
	l_clockjoin = __LINE__ + 1;
	rc = BS_TSAN ? pthread_join(t[0], NULL) : pthread_clockjoin_np(t[0], NULL, mono, &ts);
	T_ASSERT_INT(rc, ==, 0);

	collect(1);
	T_ASSERT_UINT(find(l_clock, SP_TYPE_MUTEX)->acquisitions, ==, 1);
	T_ASSERT_UINT(find(l_clockwait, SP_TYPE_CONDVAR)->wait_ns, >=, 10000000);
	T_ASSERT_UINT(find(l_clockrd, SP_TYPE_RWLOCK_READ)->acquisitions, ==, 1);
	T_ASSERT_UINT(find(l_clockwr, SP_TYPE_RWLOCK_WRITE)->acquisitions, ==, 1);
	r = find(l_semtry, SP_TYPE_SEMAPHORE);
	T_ASSERT_UINT(r->acquisitions, ==, 0);
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_sem, SP_TYPE_SEMAPHORE);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->contended, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 10000000);
	T_ASSERT_STR(r->func, "test_blocking_rows");
	r = find(__atomic_load_n(&l_barrier, __ATOMIC_RELAXED), SP_TYPE_BARRIER);
	T_ASSERT_UINT(r->acquisitions, ==, 3);
	T_ASSERT_UINT(r->contended, ==, 3);
	r = find(l_join, SP_TYPE_JOIN);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 40000000);
	r = find(l_timedjoin, SP_TYPE_JOIN);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_clockjoin, SP_TYPE_JOIN);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_STR(r->func, "test_blocking_rows");
	for (size_t i = 0; i < rows.n; i++)
		T_ASSERT_UINT(rows.v[i].line, !=, l_badclock);
	sem_destroy(&rows_sem);
}

/*
 * instrument.h's inline fast path (SYNCPROF__FAST): with profiling alone
 * on, a call whose entry sits in the thread's home slot is tried and
 * counted in the program, a failed try goes to the library's wait.  The
 * same counts as the library's path, every kind of call; after fork() the
 * child's first call goes through the library (syncprof__home cleared).
 */
static pthread_mutex_t fast_m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t fast_busy = PTHREAD_MUTEX_INITIALIZER;

static void *hold_fast_busy(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&fast_busy);
	__atomic_store_n(&phase, 3, __ATOMIC_RELEASE);
	usleep(30000);
	pthread_mutex_unlock(&fast_busy);
	return NULL;
}

#if defined(__x86_64__)
static unsigned l_fast_m;

static void lock_fast_m(void)
{
	l_fast_m = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_lock(&fast_m), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&fast_m), ==, 0);
}

/*
 * In a thread of its own: its table starts empty, so fast_m's home slot is
 * free for fast_m.  In the main thread, after the tests above, a lock of
 * theirs at a stack or heap address (random under ASLR) could hold that
 * slot, and fast_m then rightly goes through the library (one ASan run in
 * CI found its home slot holding another lock's entry).
 */
static void *inline_fast_path(void *arg)
{
	pthread_rwlock_t l = PTHREAD_RWLOCK_INITIALIZER;
	pthread_spinlock_t s;
	pthread_mutex_t ec;
	pthread_mutexattr_t a;
	pthread_t th;
	mtx_t c;
	unsigned l_m = 0, l_rd = 0, l_wr = 0, l_s = 0, l_c = 0, l_ec = 0, l_busy = 0;
	const struct sp_row *r;
	pid_t pid;
	int status;

	(void)arg;
	if (syncprof_is_enabled() != 1 || (syncprof__enabled != SYNCPROF__PROFILING))
		return NULL; /* the hold=1 and trace runs: the library's path only */
	pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE);
	T_ASSERT_INT(mtx_init(&c, mtx_plain), ==, thrd_success);
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &a);
	for (int i = 0; i < 100; i++) {
		lock_fast_m();
		l_rd = __LINE__ + 1;
		T_ASSERT_INT(pthread_rwlock_rdlock(&l), ==, 0);
		T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
		l_wr = __LINE__ + 1;
		T_ASSERT_INT(pthread_rwlock_wrlock(&l), ==, 0);
		T_ASSERT_INT(pthread_rwlock_unlock(&l), ==, 0);
		l_s = __LINE__ + 1;
		T_ASSERT_INT(pthread_spin_lock(&s), ==, 0);
		T_ASSERT_INT(pthread_spin_unlock(&s), ==, 0);
		l_c = __LINE__ + 1;
		T_ASSERT_INT(mtx_lock(&c), ==, thrd_success);
		T_ASSERT_INT(mtx_unlock(&c), ==, thrd_success);
	}
	/* The entries are the thread's home slots, found inline. */
	T_ASSERT(syncprof__home != NULL);
	T_ASSERT_UINT(syncprof__home[SYNCPROF__HOME_SLOT(&fast_m)].acquisitions, ==, 100);
	T_ASSERT(syncprof__home[SYNCPROF__HOME_SLOT(&fast_m)].obj == &fast_m);
	/* A failed try inline: errorcheck relocked (EBUSY, then the library's
	 * lock says EDEADLK), and a real wait. */
	for (int i = 0; i < 5; i++) {
		l_ec = __LINE__ + 1;
		T_ASSERT_INT(pthread_mutex_lock(&ec), ==, i ? EDEADLK : 0);
	}
	T_ASSERT_INT(pthread_mutex_unlock(&ec), ==, 0);
	for (int i = 0; i < 2; i++) {
		if (i) {
			T_ASSERT_INT(pthread_create(&th, NULL, hold_fast_busy, NULL), ==, 0);
			while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != 3)
				usleep(1000);
		}
		l_busy = __LINE__ + 1;
		T_ASSERT_INT(pthread_mutex_lock(&fast_busy), ==, 0);
		T_ASSERT_INT(pthread_mutex_unlock(&fast_busy), ==, 0);
	}
	pthread_join(th, NULL);
	/* fork(): the child goes on counting in its copy of the thread's
	 * table (the parent's 100 and its own 10), the parent is untouched. */
	pid = fork();
	T_ASSERT(pid >= 0);
	if (pid == 0) {
		for (int i = 0; i < 10; i++)
			lock_fast_m();
		collect(0);
		T_ASSERT_UINT(find(l_fast_m, SP_TYPE_MUTEX)->acquisitions, ==, 110);
		_exit(0);
	}
	T_ASSERT_INT(waitpid(pid, &status, 0), ==, pid);
	T_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);

	l_m = l_fast_m;
	collect(0);
	T_ASSERT_UINT(find(l_m, SP_TYPE_MUTEX)->acquisitions, ==, 100);
	T_ASSERT_UINT(find(l_m, SP_TYPE_MUTEX)->contended, ==, 0);
	T_ASSERT_UINT(find(l_rd, SP_TYPE_RWLOCK_READ)->acquisitions, ==, 100);
	T_ASSERT_UINT(find(l_wr, SP_TYPE_RWLOCK_WRITE)->acquisitions, ==, 100);
	T_ASSERT_UINT(find(l_s, SP_TYPE_SPINLOCK)->acquisitions, ==, 100);
	T_ASSERT_UINT(find(l_c, SP_TYPE_MUTEX)->acquisitions, ==, 100);
	r = find(l_ec, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->contended, ==, 4);
	r = find(l_busy, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 2);
	T_ASSERT_UINT(r->contended, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 10000000);
	pthread_spin_destroy(&s);
	mtx_destroy(&c);
	pthread_mutex_destroy(&ec);
	return NULL;
}

static void test_inline_fast_path(void)
{
	pthread_t t;

	T_ASSERT_INT(pthread_create(&t, NULL, inline_fast_path, NULL), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
}
#else
static void test_inline_fast_path(void)
{
}
#endif

int main(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER, rec, ec;
	pthread_mutexattr_t a;
	pthread_spinlock_t sl;
	pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
	pthread_t th;
	struct timespec ts;
	mtx_t cm, crm;
	cnd_t cc;
	unsigned l_lock, l_try, l_rec, l_ec, l_ec2, l_spin, l_spintry, l_cond, l_rd, l_wr, l_tryrd,
		l_trywr, l_tmo, l_c11, l_c11rec, l_c11try, l_c11cnd, l_hwait, l_rwwait, l_rwtmo;
	const struct sp_row *r;

	syncprof_enable();
	T_ASSERT_INT(syncprof_is_enabled(), ==, 1);
	test_hold_untracked();

	/* Plain mutex: lock, trylock on a held mutex, unlock. */
	l_lock = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
	l_try = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_trylock(&m), ==, EBUSY);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);

	/* Recursive: re-lock succeeds and reports as rec_mutex. */
	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&rec, &a);
	for (int i = 0; i < 3; i++) {
		l_rec = __LINE__ + 1;
		T_ASSERT_INT(pthread_mutex_lock(&rec), ==, 0);
	}
	for (int i = 0; i < 3; i++)
		T_ASSERT_INT(pthread_mutex_unlock(&rec), ==, 0);
	if (MISUSE_CHECKS)
		T_ASSERT_INT(pthread_mutex_unlock(&rec), ==, EPERM);

	/* Errorcheck: relock gives EDEADLK, unlock of unowned EPERM. */
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	pthread_mutex_init(&ec, &a);
	l_ec = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_lock(&ec), ==, 0);
	l_ec2 = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_lock(&ec), ==, EDEADLK);
	T_ASSERT_INT(pthread_mutex_unlock(&ec), ==, 0);
	if (MISUSE_CHECKS)
		T_ASSERT_INT(pthread_mutex_unlock(&ec), ==, EPERM);

	/* Timed lock on a mutex we hold (errorcheck would say EDEADLK; a
	 * normal one times out). */
	pthread_mutex_lock(&m);
	ts = in_ms(30);
	l_tmo = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_timedlock(&m, &ts), ==, ETIMEDOUT);
	pthread_mutex_unlock(&m);

	/* Spinlock. */
	pthread_spin_init(&sl, PTHREAD_PROCESS_PRIVATE);
	l_spin = __LINE__ + 1;
	T_ASSERT_INT(pthread_spin_lock(&sl), ==, 0);
	l_spintry = __LINE__ + 1;
	T_ASSERT_INT(pthread_spin_trylock(&sl), ==, EBUSY);
	T_ASSERT_INT(pthread_spin_unlock(&sl), ==, 0);

	/* Condition variable: a timed wait that times out. */
	pthread_mutex_lock(&m);
	ts = in_ms(20);
	l_cond = __LINE__ + 1;
	T_ASSERT_INT(pthread_cond_timedwait(&cv, &m, &ts), ==, ETIMEDOUT);
	pthread_mutex_unlock(&m);

	/* Reader-writer lock. */
	l_rd = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_rdlock(&rw), ==, 0);
	l_trywr = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_trywrlock(&rw), ==, EBUSY);
	l_tryrd = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_tryrdlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	l_wr = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_wrlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);

	/* C11. */
	T_ASSERT_INT(mtx_init(&cm, mtx_timed), ==, thrd_success);
	T_ASSERT_INT(mtx_init(&crm, mtx_plain | mtx_recursive), ==, thrd_success);
	T_ASSERT_INT(cnd_init(&cc), ==, thrd_success);
	l_c11 = __LINE__ + 1;
	T_ASSERT_INT(mtx_lock(&cm), ==, thrd_success);
	l_c11try = __LINE__ + 1;
	T_ASSERT_INT(mtx_trylock(&cm), ==, thrd_busy);
	ts = in_ms(20);
	l_c11cnd = __LINE__ + 1;
	T_ASSERT_INT(cnd_timedwait(&cc, &cm, &ts), ==, thrd_timedout);
	T_ASSERT_INT(mtx_unlock(&cm), ==, thrd_success);
	ts = in_ms(20);
	T_ASSERT_INT(mtx_timedlock(&cm, &ts), ==, thrd_success);
	T_ASSERT_INT(mtx_unlock(&cm), ==, thrd_success);
	l_c11rec = __LINE__ + 1;
	T_ASSERT_INT(mtx_lock(&crm), ==, thrd_success);
	T_ASSERT_INT(mtx_trylock(&crm), ==, thrd_success);
	T_ASSERT_INT(mtx_unlock(&crm), ==, thrd_success);
	T_ASSERT_INT(mtx_unlock(&crm), ==, thrd_success);

	/* Real waits: another thread holds a mutex and the write lock. */
	T_ASSERT_INT(pthread_create(&th, NULL, holder, NULL), ==, 0);
	while (__atomic_load_n(&phase, __ATOMIC_ACQUIRE) != 1)
		usleep(1000);
	ts = in_ms(5);
	l_rwtmo = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_timedrdlock(&rw, &ts), ==, ETIMEDOUT);
	__atomic_store_n(&phase, 2, __ATOMIC_RELEASE);
	l_rwwait = __LINE__ + 1;
	T_ASSERT_INT(pthread_rwlock_rdlock(&rw), ==, 0);
	pthread_rwlock_unlock(&rw);
	l_hwait = __LINE__ + 1;
	T_ASSERT_INT(pthread_mutex_lock(&held), ==, 0);
	pthread_mutex_unlock(&held);
	pthread_join(th, NULL);

	collect(0);
	r = find(l_lock, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->contended, ==, 0);
	T_ASSERT_UINT(r->wait_ns, ==, 0);
	T_ASSERT_UINT(r->obj, ==, (uintptr_t)&m);
	T_ASSERT_STR(r->file, __FILE__);
	T_ASSERT_STR(r->func, "main");
	r = find(l_try, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 0);
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_rec, SP_TYPE_REC_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 3);
	r = find(l_ec, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	r = find(l_ec2, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 0); /* EDEADLK: not acquired */
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_tmo, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->acquisitions, ==, 0);
	T_ASSERT_UINT(r->contended, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 20000000); /* waited for the timeout */
	T_ASSERT_UINT(r->wait_max_ns, ==, r->wait_ns);
	r = find(l_spin, SP_TYPE_SPINLOCK);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	r = find(l_spintry, SP_TYPE_SPINLOCK);
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_cond, SP_TYPE_CONDVAR);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->obj, ==, (uintptr_t)&cv);
	T_ASSERT_UINT(r->wait_ns, >=, 10000000);
	find(l_rd, SP_TYPE_RWLOCK_READ);
	find(l_wr, SP_TYPE_RWLOCK_WRITE);
	T_ASSERT_UINT(find(l_trywr, SP_TYPE_RWLOCK_WRITE)->contended, ==, 1);
	T_ASSERT_UINT(find(l_tryrd, SP_TYPE_RWLOCK_READ)->acquisitions, ==, 1);
	T_ASSERT_UINT(find(l_c11, SP_TYPE_MUTEX)->acquisitions, ==, 1);
	T_ASSERT_UINT(find(l_c11try, SP_TYPE_MUTEX)->contended, ==, 1);
	T_ASSERT_UINT(find(l_c11cnd, SP_TYPE_CONDVAR)->wait_ns, >=, 10000000);
	T_ASSERT_UINT(find(l_c11rec, SP_TYPE_REC_MUTEX)->acquisitions, ==, 1);
	r = find(l_rwtmo, SP_TYPE_RWLOCK_READ);
	T_ASSERT_UINT(r->acquisitions, ==, 0);
	T_ASSERT_UINT(r->contended, ==, 1);
	r = find(l_rwwait, SP_TYPE_RWLOCK_READ);
	T_ASSERT_UINT(r->acquisitions, ==, 1);
	T_ASSERT_UINT(r->contended, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 10000000);
	r = find(l_hwait, SP_TYPE_MUTEX);
	T_ASSERT_UINT(r->contended, ==, 1);
	T_ASSERT_UINT(r->wait_ns, >=, 10000000);
	T_ASSERT_UINT(sp_hist_at(&sp_row_d(r)->hist, sp_hist_bucket(r->wait_ns)), ==, 1);

	test_rwlock_bad_abstime();
	if (MISUSE_CHECKS) /* robust mutexes: owners die holding them */
		test_mutex_states();
	bs_run(&real_bs);
	bs_run(&prof_bs);
	test_blocking_rows();
	test_inline_fast_path();

	/* Disabled: calls still work and are not recorded. */
	syncprof_disable();
	T_ASSERT_INT(syncprof_is_enabled(), ==, 0);
	for (int i = 0; i < 10; i++) {
		T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
		T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	}
	if (MISUSE_CHECKS) {
		ms_reset();
		ms_run_all(&real_api, &prof_api);
	}
	bs_run(&prof_bs);
	collect(0);
	T_ASSERT_UINT(find(l_lock, SP_TYPE_MUTEX)->acquisitions, ==, 1);
	T_ASSERT_UINT(syncprof_lost_events(), ==, 0);
	sp_rows_free(&rows);
	puts("test_instrument: ok");
	return 0;
}
