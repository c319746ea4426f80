/*
 * preload_semantics.c - interposed lock calls keep their exact semantics
 * and return codes: normal, recursive, errorcheck, robust and
 * priority-inheritance mutexes; timed locks; rwlocks; spin locks; C11
 * mtx/cnd; condition variables.  Run by CTest under the preload with
 * profiling off (enabled=0), on, with hold=1 (the unlock path then does
 * work too; hold_sample=1: every hold counted), and with a trace (the
 * probe of probe.h instead of the preload's fast path).  Also checks that
 * what was recorded is right (rec_mutex type, counts).
 *
 * The mutex state machines of mutex_semantics.h compare each interposed
 * call with glibc's own function, found in libc.so.6 itself (dlsym on its
 * handle: RTLD_NEXT from here would find the interposer).
 */
#include <errno.h>
#include <pthread.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

#include "blocking_semantics.h"
#include "mutex_semantics.h"
#include "preload_util.h"

static struct timespec in_ms(long ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_nsec += ms * 1000000L;
	ts.tv_sec += ts.tv_nsec / 1000000000L;
	ts.tv_nsec %= 1000000000L;
	return ts;
}

/* Run fn(arg) in another thread and return its int result. */
static int in_thread(void *(*fn)(void *), void *arg)
{
	pthread_t t;
	void *ret;

	T_ASSERT_INT(pthread_create(&t, NULL, fn, arg), ==, 0);
	T_ASSERT_INT(pthread_join(t, &ret), ==, 0);
	return (int)(long)ret;
}

static void *try_mutex(void *m)
{
	return (void *)(long)pthread_mutex_trylock(m);
}

static void *unlock_mutex(void *m)
{
	return (void *)(long)pthread_mutex_unlock(m);
}

static void *timed_mutex(void *m)
{
	struct timespec ts = in_ms(30);

	return (void *)(long)pthread_mutex_timedlock(m, &ts);
}

static void test_normal(void)
{
	pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; /* static initialiser */

	T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_trylock(&m), ==, EBUSY);
	T_ASSERT_INT(in_thread(try_mutex, &m), ==, EBUSY);
	T_ASSERT_INT(in_thread(timed_mutex, &m), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	T_ASSERT_INT(in_thread(try_mutex, &m), ==, 0); /* left locked by a dead thread */
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0); /* normal: anyone may unlock */
	T_ASSERT_INT(pthread_mutex_destroy(&m), ==, 0);
}

static void test_errorcheck(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	T_ASSERT_INT(pthread_mutex_init(&m, &a), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, EPERM);
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, EDEADLK);
	T_ASSERT_INT(pthread_mutex_trylock(&m), ==, EBUSY);
	T_ASSERT_INT(in_thread(unlock_mutex, &m), ==, EPERM);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, EPERM);
	pthread_mutex_destroy(&m);
}

static pthread_mutex_t rec;

static void test_recursive(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_RECURSIVE);
	T_ASSERT_INT(pthread_mutex_init(&rec, &a), ==, 0);
	for (int i = 0; i < 5; i++)
		T_ASSERT_INT(pthread_mutex_lock(&rec), ==, 0);
	T_ASSERT_INT(pthread_mutex_trylock(&rec), ==, 0);
	T_ASSERT_INT(in_thread(try_mutex, &rec), ==, EBUSY);
	T_ASSERT_INT(in_thread(unlock_mutex, &rec), ==, EPERM);
	for (int i = 0; i < 6; i++)
		T_ASSERT_INT(pthread_mutex_unlock(&rec), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&rec), ==, EPERM);
	T_ASSERT_INT(in_thread(try_mutex, &rec), ==, 0);
}

static pthread_mutex_t robust;

static void *die_holding(void *arg)
{
	(void)arg;
	T_ASSERT_INT(pthread_mutex_lock(&robust), ==, 0);
	return NULL; /* exits with the lock held */
}

static void test_robust(void)
{
	pthread_mutexattr_t a;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setrobust(&a, PTHREAD_MUTEX_ROBUST);
	T_ASSERT_INT(pthread_mutex_init(&robust, &a), ==, 0);
	in_thread(die_holding, NULL);
	T_ASSERT_INT(pthread_mutex_lock(&robust), ==, EOWNERDEAD);
	T_ASSERT_INT(pthread_mutex_consistent(&robust), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&robust), ==, 0);
	T_ASSERT_INT(pthread_mutex_lock(&robust), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&robust), ==, 0);
	/* Not made consistent: ENOTRECOVERABLE after the unlock. */
	in_thread(die_holding, NULL);
	T_ASSERT_INT(pthread_mutex_trylock(&robust), ==, EOWNERDEAD);
	T_ASSERT_INT(pthread_mutex_unlock(&robust), ==, 0);
	T_ASSERT_INT(pthread_mutex_lock(&robust), ==, ENOTRECOVERABLE);
	/* The lock left it as glibc's does: free, not recoverable. */
	T_ASSERT_INT(pthread_mutex_trylock(&robust), ==, ENOTRECOVERABLE);
}

static void test_pi(void)
{
	pthread_mutexattr_t a;
	pthread_mutex_t m;

	pthread_mutexattr_init(&a);
	pthread_mutexattr_setprotocol(&a, PTHREAD_PRIO_INHERIT);
	pthread_mutexattr_settype(&a, PTHREAD_MUTEX_ERRORCHECK);
	T_ASSERT_INT(pthread_mutex_init(&m, &a), ==, 0);
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_lock(&m), ==, EDEADLK);
	T_ASSERT_INT(in_thread(try_mutex, &m), ==, EBUSY);
	T_ASSERT_INT(in_thread(timed_mutex, &m), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&m), ==, EPERM);
	pthread_mutex_destroy(&m);
}

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;

static void *try_rd(void *arg)
{
	(void)arg;
	return (void *)(long)pthread_rwlock_tryrdlock(&rw);
}

static void *try_wr(void *arg)
{
	(void)arg;
	return (void *)(long)pthread_rwlock_trywrlock(&rw);
}

static void *timed_wr(void *arg)
{
	struct timespec ts = in_ms(30);

	(void)arg;
	return (void *)(long)pthread_rwlock_timedwrlock(&rw, &ts);
}

static void *timed_rd(void *arg)
{
	struct timespec ts = in_ms(30);

	(void)arg;
	return (void *)(long)pthread_rwlock_timedrdlock(&rw, &ts);
}

static void test_rwlock(void)
{
	T_ASSERT_INT(pthread_rwlock_rdlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_rdlock(&rw), ==, 0);
	T_ASSERT_INT(in_thread(try_rd, NULL), ==, 0); /* thread exits holding a read lock */
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0); /* that reader's share */
	T_ASSERT_INT(in_thread(try_wr, NULL), ==, EBUSY);
	T_ASSERT_INT(in_thread(timed_wr, NULL), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_wrlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_wrlock(&rw), ==, EDEADLK);
	T_ASSERT_INT(pthread_rwlock_trywrlock(&rw), ==, EBUSY);
	T_ASSERT_INT(in_thread(try_rd, NULL), ==, EBUSY);
	T_ASSERT_INT(in_thread(timed_rd, NULL), ==, ETIMEDOUT);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_timedwrlock(&rw, &(struct timespec){ 0, 0 }), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
}

static void test_spin(void)
{
	pthread_spinlock_t s;

	T_ASSERT_INT(pthread_spin_init(&s, PTHREAD_PROCESS_PRIVATE), ==, 0);
	T_ASSERT_INT(pthread_spin_lock(&s), ==, 0);
	T_ASSERT_INT(pthread_spin_trylock(&s), ==, EBUSY);
	T_ASSERT_INT(pthread_spin_unlock(&s), ==, 0);
	T_ASSERT_INT(pthread_spin_trylock(&s), ==, 0);
	T_ASSERT_INT(pthread_spin_unlock(&s), ==, 0);
	pthread_spin_destroy(&s);
}

static mtx_t cm;
static cnd_t cc;

static void *c11_try(void *arg)
{
	(void)arg;
	return (void *)(long)mtx_trylock(&cm);
}

static void *c11_timed(void *arg)
{
	struct timespec ts = in_ms(30);

	(void)arg;
	return (void *)(long)mtx_timedlock(&cm, &ts);
}

static void test_c11(void)
{
	struct timespec ts;

	T_ASSERT_INT(mtx_init(&cm, mtx_timed), ==, thrd_success);
	T_ASSERT_INT(cnd_init(&cc), ==, thrd_success);
	T_ASSERT_INT(mtx_lock(&cm), ==, thrd_success);
	T_ASSERT_INT(in_thread(c11_try, NULL), ==, thrd_busy);
	T_ASSERT_INT(in_thread(c11_timed, NULL), ==, thrd_timedout);
	ts = in_ms(20);
	T_ASSERT_INT(cnd_timedwait(&cc, &cm, &ts), ==, thrd_timedout);
	T_ASSERT_INT(mtx_unlock(&cm), ==, thrd_success);
	mtx_destroy(&cm);
	T_ASSERT_INT(mtx_init(&cm, mtx_plain | mtx_recursive), ==, thrd_success);
	T_ASSERT_INT(mtx_lock(&cm), ==, thrd_success);
	T_ASSERT_INT(mtx_trylock(&cm), ==, thrd_success);
	T_ASSERT_INT(mtx_unlock(&cm), ==, thrd_success);
	T_ASSERT_INT(mtx_unlock(&cm), ==, thrd_success);
	mtx_destroy(&cm);
	cnd_destroy(&cc);
}

static pthread_mutex_t cm2 = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int flag;

static void *signaller(void *arg)
{
	(void)arg;
	usleep(10000);
	pthread_mutex_lock(&cm2);
	flag = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cm2);
	return NULL;
}

static void test_cond(void)
{
	struct timespec ts = in_ms(20);
	pthread_t t;

	T_ASSERT_INT(pthread_mutex_lock(&cm2), ==, 0);
	T_ASSERT_INT(pthread_cond_timedwait(&cv, &cm2, &ts), ==, ETIMEDOUT);
	/* The mutex is held again after the timed-out wait. */
	T_ASSERT_INT(pthread_mutex_trylock(&cm2), ==, EBUSY);
	pthread_create(&t, NULL, signaller, NULL);
	while (!flag)
		T_ASSERT_INT(pthread_cond_wait(&cv, &cm2), ==, 0);
	T_ASSERT_INT(pthread_mutex_unlock(&cm2), ==, 0);
	pthread_join(t, NULL);
}

/* glibc's own definition of @name. */
static void *t_libc(const char *name)
{
	static void *libc;
	void *f;

	if (!libc)
		libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	T_ASSERT(libc != NULL);
	f = dlsym(libc, name);
	if (!f)
		T_FAIL("%s not found in libc.so.6", name);
	return f;
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

static const struct ms_api prof_api = { "interposed", prof_lock, prof_trylock, prof_timedlock,
					prof_unlock, NULL };

static int profiling(void)
{
	int (*is_enabled)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "syncprof_is_enabled");

	T_ASSERT(is_enabled != NULL);
	return is_enabled();
}

/*
 * Every state of every mutex kind, the interposed calls against glibc's;
 * then, when profiling, what was recorded for each mutex: its
 * acquisitions (EOWNERDEAD included) and, with every hold timed, its
 * holds (a lock taken with EOWNERDEAD is held).
 */
static void test_mutex_states(void)
{
	struct ms_api real = { "glibc", NULL, NULL, NULL, NULL, NULL };
	int exact_holds = t_option("hold=1") && t_option("hold_sample=1");
	char *json;

	real.lock = (int (*)(pthread_mutex_t *))t_libc("pthread_mutex_lock");
	real.trylock = (int (*)(pthread_mutex_t *))t_libc("pthread_mutex_trylock");
	real.timedlock = (int (*)(pthread_mutex_t *, const struct timespec *))t_libc(
		"pthread_mutex_timedlock");
	real.unlock = (int (*)(pthread_mutex_t *))t_libc("pthread_mutex_unlock");
	ms_run_all(&real, &prof_api);
	if (!profiling())
		return;
	json = t_report(1, 1);
	for (int i = 0; i < ms_n_runs; i++) {
		const struct ms_run *r = &ms_runs[i];
		char obj[64];

		if (!r->ref)
			continue;
		snprintf(obj, sizeof(obj), "\"object\":\"%#lx\"", (unsigned long)r->m);
		if (t_rows_sum(json, obj, "acquisitions") != r->acquired)
			T_FAIL("%s: %lld acquisitions recorded, %u made", r->scenario,
			       t_rows_sum(json, obj, "acquisitions"), r->acquired);
		if (exact_holds && t_rows_sum(json, obj, "holds") != r->holds)
			T_FAIL("%s: %lld holds recorded, %u made", r->scenario,
			       t_rows_sum(json, obj, "holds"), r->holds);
	}
	free(json);
}

/* glibc's timed rwlock calls reject an invalid abstime before anything
 * else, even on a free lock: EINVAL, not taken. */
static void test_rwlock_bad_abstime(void)
{
	typedef int (*timed_fn)(pthread_rwlock_t *, const struct timespec *);
	const struct timespec bad[] = { { 0, 1000000000L }, { 0, -1 } };
	const timed_fn real[] = { (timed_fn)t_libc("pthread_rwlock_timedrdlock"),
				  (timed_fn)t_libc("pthread_rwlock_timedwrlock") };
	const timed_fn prof[] = { pthread_rwlock_timedrdlock, pthread_rwlock_timedwrlock };

	for (int i = 0; i < 2; i++)
		for (int j = 0; j < 2; j++) {
			pthread_rwlock_t a = PTHREAD_RWLOCK_INITIALIZER;
			pthread_rwlock_t b = PTHREAD_RWLOCK_INITIALIZER;

			T_ASSERT_INT(real[j](&a, &bad[i]), ==, EINVAL);
			T_ASSERT_INT(prof[j](&b, &bad[i]), ==, EINVAL);
			T_ASSERT_INT(pthread_rwlock_trywrlock(&b), ==, 0); /* still free */
			T_ASSERT_INT(pthread_rwlock_unlock(&b), ==, 0);
		}
}

/* The clock calls, semaphores, barriers and joins (blocking_semantics.h):
 * glibc's own, then the interposed ones. */
static void test_blocking(void)
{
#define LIBC(field, name) .field = (__typeof__(((struct bs_api *)0)->field))t_libc(name)
	const struct bs_api real = {
		"glibc",
		LIBC(mutex_clocklock, "pthread_mutex_clocklock"),
		LIBC(cond_clockwait, "pthread_cond_clockwait"),
		LIBC(rwlock_clockrdlock, "pthread_rwlock_clockrdlock"),
		LIBC(rwlock_clockwrlock, "pthread_rwlock_clockwrlock"),
		LIBC(bs_sem_wait, "sem_wait"),
		LIBC(bs_sem_trywait, "sem_trywait"),
		LIBC(bs_sem_timedwait, "sem_timedwait"),
		LIBC(bs_sem_clockwait, "sem_clockwait"),
		LIBC(barrier_wait, "pthread_barrier_wait"),
		LIBC(join, "pthread_join"),
		LIBC(bs_thrd_join, "thrd_join"),
		LIBC(timedjoin_np, "pthread_timedjoin_np"),
		LIBC(clockjoin_np, "pthread_clockjoin_np"),
	};
#undef LIBC
	const struct bs_api prof = {
		"interposed",	       pthread_mutex_clocklock,	  pthread_cond_clockwait,
		pthread_rwlock_clockrdlock, pthread_rwlock_clockwrlock, sem_wait,
		sem_trywait,	       sem_timedwait,		  sem_clockwait,
		pthread_barrier_wait,  pthread_join,		  thrd_join,
		pthread_timedjoin_np,  pthread_clockjoin_np,
	};

	bs_run(&real);
	bs_run(&prof);
}

int main(void)
{
	char *json;

	t_require_preload();
	test_normal();
	test_errorcheck();
	test_recursive();
	test_robust();
	test_pi();
	test_rwlock();
	test_spin();
	test_c11();
	test_cond();
	test_rwlock_bad_abstime();
	test_mutex_states();
	test_blocking();
	if (!profiling()) {
		puts("preload_semantics: ok (profiling off)");
		return 0;
	}

	json = t_report(1, 1);
	/* The recursive mutex is reported as such: 5 locks + 1 trylock here,
	 * 1 trylock in a thread that succeeded. */
	T_ASSERT_CONTAINS(json, "\"type\":\"rec_mutex\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"spinlock\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"rwlock_read\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"rwlock_write\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"condvar\"");
	T_ASSERT_CONTAINS(json, "\"function\":\"test_recursive\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"semaphore\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"barrier\"");
	T_ASSERT_CONTAINS(json, "\"type\":\"join\"");
	/* pthread_timedjoin_np / clockjoin_np, interposed (join rows). */
	T_ASSERT_CONTAINS(json, "\"function\":\"bs_timedjoin\"");
	free(json);
	puts("preload_semantics: ok");
	return 0;
}
