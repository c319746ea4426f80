/*
 * explain_cases.c - programs whose waits the watchdog must explain (the
 * live deadlock report, wait chains, condition waits and who should
 * signal them).  Built twice: plain (run under the preload library) and
 * with -include syncprof/instrument.h.  Sites are marked SITE_* for the
 * test (test_explain.c) to find their lines.
 *
 *   explain_cases abba       two threads deadlock for real: dl-ab takes a
 *                            then b, dl-ba takes b then a (each waits for
 *                            the other at a barrier in between); never ends
 *   explain_cases three      three threads deadlock in a ring: dl-1 takes a
 *                            then b, dl-2 b then c, dl-3 c then a; never ends
 *   explain_cases self       dl-self takes a non-recursive mutex twice;
 *                            never ends
 *   explain_cases rwdead     dl-reader holds an rwlock for reading and waits
 *                            for a mutex that dl-writer holds while it waits
 *                            to write the rwlock; never ends
 *   explain_cases chain MS   three threads in a chain: main waits for b,
 *                            held by ch-mid, which waits for c, held by
 *                            ch-root for MS ms; then all finish
 *   explain_cases busy MS    4 threads contend hard for two mutexes, always
 *                            taken in the same order (chains of waiters,
 *                            never a cycle) for MS ms; then all finish
 *   explain_cases condsig MS a thread signals a condition variable three
 *                            times from one site, then main waits on it
 *                            until it is broadcast MS ms later (from
 *                            another site); then all finish
 *   explain_cases timedself MS  tm-self holds a C11 mtx_timed and takes it
 *                            again with mtx_timedlock, deadline MS ms: a
 *                            cycle of one that ends (timed out); then exits
 *   explain_cases timedabba MS  tm-ab holds a, then waits for b with
 *                            pthread_mutex_timedlock (deadline MS ms);
 *                            tm-ba holds b and waits for a (untimed): a
 *                            cycle until tm-ab times out, lets a go and
 *                            both finish
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <threads.h>
#include <time.h>
#include <unistd.h>

static void sleep_ms(int ms)
{
	struct timespec ts = { ms / 1000, (long)(ms % 1000) * 1000000L };

	nanosleep(&ts, NULL);
}

static void name(const char *n)
{
	prctl(PR_SET_NAME, n, 0, 0, 0);
}

/* ---- abba ---------------------------------------------------------------- */

static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t both;

__attribute__((noinline)) static void *ab(void *arg)
{
	(void)arg;
	name("dl-ab");
	pthread_mutex_lock(&a); /* SITE_AB_OUTER */
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&b); /* SITE_AB_INNER */
	return NULL;
}

__attribute__((noinline)) static void *ba(void *arg)
{
	(void)arg;
	name("dl-ba");
	pthread_mutex_lock(&b); /* SITE_BA_OUTER */
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&a); /* SITE_BA_INNER */
	return NULL;
}

/* ---- three, self ------------------------------------------------------------ */

static pthread_mutex_t c3 = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t ring;

struct ring_arg {
	const char *name;
	pthread_mutex_t *first, *second;
};

__attribute__((noinline)) static void *ring_member(void *arg)
{
	struct ring_arg *r = arg;

	name(r->name);
	pthread_mutex_lock(r->first); /* SITE_RING_FIRST */
	pthread_barrier_wait(&ring);
	pthread_mutex_lock(r->second); /* SITE_RING_SECOND */
	return NULL;
}

__attribute__((noinline)) static void *self_lock(void *arg)
{
	(void)arg;
	name("dl-self");
	pthread_mutex_lock(&a); /* SITE_SELF_FIRST */
	pthread_mutex_lock(&a); /* SITE_SELF_AGAIN */
	return NULL;
}

/* ---- rwdead --------------------------------------------------------------- */

static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) static void *reader(void *arg)
{
	(void)arg;
	name("dl-reader");
	pthread_rwlock_rdlock(&rw); /* SITE_RW_READ */
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&m); /* SITE_RW_READER_WAITS */
	return NULL;
}

__attribute__((noinline)) static void *writer(void *arg)
{
	(void)arg;
	name("dl-writer");
	pthread_mutex_lock(&m); /* SITE_RW_MUTEX */
	pthread_barrier_wait(&both);
	pthread_rwlock_wrlock(&rw); /* SITE_RW_WRITER_WAITS */
	return NULL;
}

/* ---- chain ---------------------------------------------------------------- */

static pthread_mutex_t cb = PTHREAD_MUTEX_INITIALIZER, cc = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t three;
static int hold_ms = 1500;

__attribute__((noinline)) static void *chain_root(void *arg)
{
	(void)arg;
	name("ch-root");
	pthread_mutex_lock(&cc); /* SITE_ROOT_TAKES */
	pthread_barrier_wait(&three);
	sleep_ms(hold_ms);
	pthread_mutex_unlock(&cc);
	return NULL;
}

__attribute__((noinline)) static void *chain_mid(void *arg)
{
	(void)arg;
	name("ch-mid");
	pthread_mutex_lock(&cb); /* SITE_MID_TAKES */
	pthread_barrier_wait(&three);
	pthread_mutex_lock(&cc); /* SITE_MID_WAITS */
	pthread_mutex_unlock(&cc);
	pthread_mutex_unlock(&cb);
	return NULL;
}

/* ---- busy ----------------------------------------------------------------- */

static int busy_stop; /* atomic: no lock of the test guards it */
static unsigned long busy_count;

static void *busy(void *arg)
{
	int inner_only = arg != NULL;

	while (!__atomic_load_n(&busy_stop, __ATOMIC_RELAXED)) {
		if (!inner_only)
			pthread_mutex_lock(&a);
		pthread_mutex_lock(&b);
		busy_count++;
		pthread_mutex_unlock(&b);
		if (!inner_only)
			pthread_mutex_unlock(&a);
	}
	return NULL;
}

/* ---- condsig -------------------------------------------------------------- */

static pthread_mutex_t cm = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static int count, done;

__attribute__((noinline)) static void *signaller(void *arg)
{
	(void)arg;
	name("cv-signal");
	for (int i = 0; i < 3; i++) {
		pthread_mutex_lock(&cm);
		count++;
		pthread_cond_signal(&cv); /* SITE_SIGNAL */
		pthread_mutex_unlock(&cm);
	}
	sleep_ms(hold_ms);
	pthread_mutex_lock(&cm);
	done = 1;
	pthread_cond_broadcast(&cv); /* SITE_BROADCAST */
	pthread_mutex_unlock(&cm);
	return NULL;
}

/* ---- timedself, timedabba: cycles that end at a deadline -------------------- */

static mtx_t tm;
static int timed_rc = -1;

static struct timespec deadline_in(int ms)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	ts.tv_sec += ms / 1000;
	ts.tv_nsec += (long)(ms % 1000) * 1000000L;
	if (ts.tv_nsec >= 1000000000L) {
		ts.tv_sec++;
		ts.tv_nsec -= 1000000000L;
	}
	return ts;
}

__attribute__((noinline)) static void *timed_self(void *arg)
{
	struct timespec ts;

	(void)arg;
	name("tm-self");
	mtx_lock(&tm); /* SITE_TSELF_FIRST */
	ts = deadline_in(hold_ms);
	timed_rc = mtx_timedlock(&tm, &ts); /* SITE_TSELF_AGAIN */
	mtx_unlock(&tm);
	return NULL;
}

__attribute__((noinline)) static void *timed_ab(void *arg)
{
	struct timespec ts;

	(void)arg;
	name("tm-ab");
	pthread_mutex_lock(&a); /* SITE_TAB_OUTER */
	pthread_barrier_wait(&both);
	ts = deadline_in(hold_ms);
	timed_rc = pthread_mutex_timedlock(&b, &ts); /* SITE_TAB_INNER */
	if (timed_rc == 0)
		pthread_mutex_unlock(&b);
	pthread_mutex_unlock(&a);
	return NULL;
}

__attribute__((noinline)) static void *timed_ba(void *arg)
{
	(void)arg;
	name("tm-ba");
	pthread_mutex_lock(&b); /* SITE_TBA_OUTER */
	pthread_barrier_wait(&both);
	pthread_mutex_lock(&a); /* SITE_TBA_INNER */
	pthread_mutex_unlock(&a);
	pthread_mutex_unlock(&b);
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t1, t2;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (argc >= 3)
		hold_ms = atoi(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "abba")) {
		pthread_barrier_init(&both, NULL, 2);
		pthread_create(&t1, NULL, ab, NULL);
		pthread_create(&t2, NULL, ba, NULL);
		printf("ready\n");
		pthread_join(t1, NULL); /* never returns */
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "three")) {
		static struct ring_arg r[3] = { { "dl-1", &a, &b }, { "dl-2", &b, &c3 },
						{ "dl-3", &c3, &a } };
		pthread_t t[3];

		pthread_barrier_init(&ring, NULL, 3);
		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, ring_member, &r[i]);
		printf("ready\n");
		pthread_join(t[0], NULL); /* never returns */
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "self")) {
		pthread_create(&t1, NULL, self_lock, NULL);
		printf("ready\n");
		pthread_join(t1, NULL); /* never returns */
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "rwdead")) {
		pthread_barrier_init(&both, NULL, 2);
		pthread_create(&t1, NULL, reader, NULL);
		pthread_create(&t2, NULL, writer, NULL);
		printf("ready\n");
		pthread_join(t1, NULL); /* never returns */
		return 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "chain")) {
		name("ch-main");
		pthread_barrier_init(&three, NULL, 3);
		pthread_create(&t1, NULL, chain_root, NULL);
		pthread_create(&t2, NULL, chain_mid, NULL);
		pthread_barrier_wait(&three);
		sleep_ms(50); /* ch-mid is waiting by now (else the chain is shorter) */
		pthread_mutex_lock(&cb); /* SITE_MAIN_WAITS */
		pthread_mutex_unlock(&cb);
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		printf("done\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "busy")) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, busy, i & 1 ? &t[i] : NULL);
		sleep_ms(hold_ms);
		__atomic_store_n(&busy_stop, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		printf("done %lu\n", busy_count);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "condsig")) {
		name("cv-main");
		pthread_create(&t1, NULL, signaller, NULL);
		pthread_mutex_lock(&cm);
		while (count < 3)
			pthread_cond_wait(&cv, &cm); /* SITE_SHORTWAIT */
		while (!done)
			pthread_cond_wait(&cv, &cm); /* SITE_LONGWAIT */
		pthread_mutex_unlock(&cm);
		pthread_join(t1, NULL);
		printf("done\n");
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "timedself")) {
		mtx_init(&tm, mtx_timed);
		pthread_create(&t1, NULL, timed_self, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		printf("done %s\n", timed_rc == thrd_timedout ? "timedout" : "unexpected");
		return timed_rc == thrd_timedout ? 0 : 1;
	}
	if (argc >= 2 && !strcmp(argv[1], "timedabba")) {
		pthread_barrier_init(&both, NULL, 2);
		pthread_create(&t1, NULL, timed_ab, NULL);
		pthread_create(&t2, NULL, timed_ba, NULL);
		printf("ready\n");
		pthread_join(t1, NULL);
		pthread_join(t2, NULL);
		printf("done %s\n", timed_rc == ETIMEDOUT ? "timedout" : "unexpected");
		return timed_rc == ETIMEDOUT ? 0 : 1;
	}
	fprintf(stderr, "usage: explain_cases abba|three|self|rwdead|chain MS|busy MS|condsig MS|"
			"timedself MS|timedabba MS\n");
	return 2;
}
