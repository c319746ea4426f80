/*
 * workload.h - a small, deterministic contended workload for the format
 * and report tests, calling the profiled API directly (exact sites): a
 * holder thread keeps a mutex ~2 ms at a time while a waiter waits for it.
 */
#ifndef SYNCPROF_TEST_WORKLOAD_H
#define SYNCPROF_TEST_WORKLOAD_H

#include <pthread.h>

#include "syncprof.h"
#include "tools_util.h"

static pthread_mutex_t w_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t w_other = PTHREAD_MUTEX_INITIALIZER;
static int w_rounds;
static int w_go;

static void *w_holder(void *arg)
{
	(void)arg;
	for (int i = 0; i < w_rounds; i++) {
		syncprof_mutex_lock(&w_lock, __FILE__, __LINE__, "w_holder");
		__atomic_store_n(&w_go, i + 1, __ATOMIC_RELEASE);
		t_sleep_ms(2);
		syncprof_mutex_unlock(&w_lock, __FILE__, __LINE__, "w_holder");
		t_sleep_ms(1);
	}
	return NULL;
}

/* @rounds contended waits at the waiter's site; @extra uncontended
 * acquisitions of another lock at a second site when @second. */
static void w_run(int rounds, int second)
{
	pthread_t t;

	w_rounds = rounds;
	__atomic_store_n(&w_go, 0, __ATOMIC_RELAXED);
	pthread_create(&t, NULL, w_holder, NULL);
	for (int i = 0; i < rounds; i++) {
		while (__atomic_load_n(&w_go, __ATOMIC_ACQUIRE) <= i)
			;
		syncprof_mutex_lock(&w_lock, __FILE__, __LINE__, "w_waiter");
		syncprof_mutex_unlock(&w_lock, __FILE__, __LINE__, "w_waiter");
	}
	pthread_join(t, NULL);
	for (int i = 0; second && i < 100; i++) {
		syncprof_mutex_lock(&w_other, __FILE__, __LINE__, "w_second");
		syncprof_mutex_unlock(&w_other, __FILE__, __LINE__, "w_second");
	}
}

#endif
