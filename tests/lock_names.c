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
 * Costs: about 0.2 s of sleeping holds.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
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
	printf("reused lock at %p\n", (void *)reused);
	return 0;
}
