/*
 * lock_names.c - a program that names its locks (syncprof_name_lock(),
 * SYNCPROF_NAME_LOCK()), for tests/lock_names.sh: built twice, compiled
 * in (-include syncprof/instrument.h, linked with libsyncprof) and as a
 * plain program run under the preload library, where the API is reached
 * through a weak reference that the preloaded library satisfies.
 *
 * Its locks, each with a known creation line (the LINE_* markers, which
 * the checker finds in this file):
 *   accounts  pthread_mutex_init'd, named, contended by two threads;
 *   static    PTHREAD_MUTEX_INITIALIZER, named, contended: created at its
 *             first use (no init was seen), in main;
 *   reused    init'd and named "old-name", destroyed, then init'd again at
 *             the same address and left unnamed: the report must show the
 *             second init and never "old-name".
 * Both are held by main while the workers start, so both are waited for.
 * The other primitives, each init'd at a LINE_* marker and waited on once
 * or more: a condition variable (LINE_COND), a semaphore (LINE_SEM), a
 * barrier (LINE_BARRIER) and a C11 cnd_t (LINE_CND); the mutexes they
 * need are named ("cv lock", "c11 lock").  The inits and destroys must
 * return what glibc's do, errors included (sem_init above SEM_VALUE_MAX,
 * a barrier of count 0: EINVAL), and leave errno alone when they succeed:
 * the program exits 2 with one line per difference.
 * Costs: about 0.2 s of sleeping holds.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <threads.h>
#include <time.h>

#include "syncprof.h"

#ifndef SYNCPROF_INSTRUMENT_H
/* Preloaded: the API comes from the preload library, when it is there. */
extern int syncprof_name_lock(void *lock, const char *name) __attribute__((weak));
#define SYNCPROF_NAME_LOCK(lock, name)                                    \
	((void)(syncprof_name_lock ? syncprof_name_lock((void *)(lock), (name)) : 0))
#endif

static pthread_mutex_t accounts;
static pthread_mutex_t static_lock = PTHREAD_MUTEX_INITIALIZER;

static void hold_a_while(pthread_mutex_t *m)
{
	struct timespec ts = { 0, 2 * 1000 * 1000 };

	pthread_mutex_lock(m);
	nanosleep(&ts, NULL);
	pthread_mutex_unlock(m);
}

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < 20; i++) {
		hold_a_while(&accounts);
		hold_a_while(&static_lock);
	}
	return NULL;
}

static pthread_mutex_t cv_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv;
static int cv_flag;
static sem_t sem;
static pthread_barrier_t barrier;
static int bad;

#define EXPECT(cond)                                                              \
	do {                                                                      \
		if (!(cond)) {                                                    \
			fprintf(stderr, "lock_names.c:%d: %s\n", __LINE__, #cond); \
			bad = 1;                                                  \
		}                                                                 \
	} while (0)

/* Lets main out of its condition wait, posts the semaphore and meets it at
 * the barrier. */
static void *poster(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&cv_lock); /* main waits on cv by now: it held cv_lock */
	cv_flag = 1;
	pthread_cond_signal(&cv);
	pthread_mutex_unlock(&cv_lock);
	sem_post(&sem);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static void other_primitives(void)
{
	struct timespec past = { 0, 0 };
	pthread_barrier_t no_barrier;
	sem_t no_sem;
	cnd_t c11cv;
	mtx_t c11m;
	pthread_t th;
	int rc;

	SYNCPROF_NAME_LOCK(&cv_lock, "cv lock");
	errno = 1234;
	EXPECT(pthread_cond_init(&cv, NULL) == 0); /* LINE_COND */
	EXPECT(sem_init(&sem, 0, 0) == 0); /* LINE_SEM */
	EXPECT(errno == 1234);
	EXPECT(pthread_barrier_init(&barrier, NULL, 2) == 0); /* LINE_BARRIER */
	errno = 0;
	EXPECT(sem_init(&no_sem, 0, (unsigned)SEM_VALUE_MAX + 1u) == -1 && errno == EINVAL);
	EXPECT(pthread_barrier_init(&no_barrier, NULL, 0) == EINVAL);

	pthread_mutex_lock(&cv_lock);
	if (pthread_create(&th, NULL, poster, NULL)) {
		EXPECT(!"pthread_create");
		return;
	}
	while (!cv_flag)
		pthread_cond_wait(&cv, &cv_lock);
	pthread_mutex_unlock(&cv_lock);
	EXPECT(sem_wait(&sem) == 0);
	rc = pthread_barrier_wait(&barrier);
	EXPECT(rc == 0 || rc == PTHREAD_BARRIER_SERIAL_THREAD);
	pthread_join(th, NULL);

	EXPECT(mtx_init(&c11m, mtx_plain) == thrd_success);
	SYNCPROF_NAME_LOCK(&c11m, "c11 lock");
	EXPECT(cnd_init(&c11cv) == thrd_success); /* LINE_CND */
	mtx_lock(&c11m);
	EXPECT(cnd_timedwait(&c11cv, &c11m, &past) == thrd_timedout);
	mtx_unlock(&c11m);

	errno = 1234;
	EXPECT(pthread_cond_destroy(&cv) == 0);
	EXPECT(sem_destroy(&sem) == 0);
	EXPECT(errno == 1234);
	EXPECT(pthread_barrier_destroy(&barrier) == 0);
	cnd_destroy(&c11cv);
	mtx_destroy(&c11m);
}

int main(void)
{
	const struct timespec pause_ = { 0, 30 * 1000 * 1000 };
	pthread_mutex_t *reused = malloc(sizeof(*reused));
	pthread_t th[2];

	if (!reused)
		return 1;
	pthread_mutex_init(&accounts, NULL); /* LINE_ACCOUNTS */
	SYNCPROF_NAME_LOCK(&accounts, "accounts; \"ledger\"");
	SYNCPROF_NAME_LOCK(&static_lock, "static lock");

	pthread_mutex_init(reused, NULL); /* LINE_OLD */
	SYNCPROF_NAME_LOCK(reused, "old-name");
	pthread_mutex_lock(reused);
	pthread_mutex_unlock(reused);
	pthread_mutex_destroy(reused);
	pthread_mutex_init(reused, NULL); /* LINE_REUSED */
	pthread_mutex_lock(reused);
	pthread_mutex_unlock(reused);

	/* Held while the workers start: they wait on it, for sure. */
	pthread_mutex_lock(&accounts);
	pthread_mutex_lock(&static_lock); /* LINE_STATIC */
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, NULL))
			return 1;
	/* The workers wait for accounts, then (it next) for the static lock. */
	nanosleep(&pause_, NULL);
	pthread_mutex_unlock(&accounts);
	nanosleep(&pause_, NULL);
	pthread_mutex_unlock(&static_lock);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	other_primitives();
	printf("reused lock at %p\n", (void *)reused);
	return bad ? 2 : 0;
}
