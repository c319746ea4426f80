/*
 * preload_threads.c - thread churn and thread exit under the preload:
 *   - thousands of short-lived threads, each locking a few times (the
 *     per-thread tables are folded into the retired aggregate: counts
 *     must come out exact, and memory stays bounded);
 *   - threads that exit, or call pthread_exit(), with locks held (a
 *     mutex, a read lock, a spin lock), and detached threads;
 *   - contention while threads come and go.
 */
#include <pthread.h>
#include <stdlib.h>
#include <unistd.h>

#include "preload_util.h"

#define WAVES 20
#define PER_WAVE 200
#define LOCKS_PER_THREAD 5

static pthread_mutex_t shared = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t left_held[PER_WAVE];
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_spinlock_t spin;
static unsigned long counter;

static void *short_lived(void *arg)
{
	long i = (long)arg;

	for (int k = 0; k < LOCKS_PER_THREAD; k++) {
		pthread_mutex_lock(&shared);
		counter++;
		pthread_mutex_unlock(&shared);
	}
	if (i % 3 == 0) {
		/* Exit holding a mutex (a fresh one per thread, unlocked later
		 * by the main thread) and a share of the rwlock. */
		pthread_mutex_lock(&left_held[i % PER_WAVE]);
		pthread_rwlock_rdlock(&rw);
		if (i % 2)
			pthread_exit((void *)i);
		return (void *)i;
	}
	if (i % 3 == 1) {
		pthread_spin_lock(&spin);
		pthread_spin_unlock(&spin);
		pthread_exit(NULL);
	}
	return NULL;
}

int main(void)
{
	unsigned long started = 0;
	int held_reads = 0;
	char *json;

	t_require_preload();
	pthread_spin_init(&spin, 0);
	for (int i = 0; i < PER_WAVE; i++)
		pthread_mutex_init(&left_held[i], NULL);
	for (int w = 0; w < WAVES; w++) {
		pthread_t t[PER_WAVE];

		for (int i = 0; i < PER_WAVE; i++) {
			long id = (long)w * PER_WAVE + i;

			T_ASSERT_INT(pthread_create(&t[i], NULL, short_lived, (void *)id), ==, 0);
			started++;
		}
		for (int i = 0; i < PER_WAVE; i++) {
			long id = (long)w * PER_WAVE + i;

			T_ASSERT_INT(pthread_join(t[i], NULL), ==, 0);
			if (id % 3 == 0) {
				/* Normal mutex: the main thread may unlock it. */
				T_ASSERT_INT(pthread_mutex_unlock(&left_held[id % PER_WAVE]), ==, 0);
				held_reads++;
			}
		}
	}
	/* Detached threads, not joined: exit on their own. */
	for (int i = 0; i < 100; i++) {
		pthread_t t;
		pthread_attr_t a;

		pthread_attr_init(&a);
		pthread_attr_setdetachstate(&a, PTHREAD_CREATE_DETACHED);
		T_ASSERT_INT(pthread_create(&t, &a, short_lived, (void *)(long)(3 * i + 2)), ==, 0);
		started++;
	}
	for (;;) {
		pthread_mutex_lock(&shared);
		if (counter == started * LOCKS_PER_THREAD) {
			pthread_mutex_unlock(&shared);
			break;
		}
		pthread_mutex_unlock(&shared);
		usleep(1000);
	}
	usleep(50000); /* let the detached threads finish exiting */
	for (int i = 0; i < held_reads; i++)
		T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_trywrlock(&rw), ==, 0);
	T_ASSERT_INT(pthread_rwlock_unlock(&rw), ==, 0);

	json = t_report(1, 1);
	{
		char obj[64];

		/* Exact, though nearly all of these threads are gone. */
		snprintf(obj, sizeof(obj), "\"object\":\"%p\",\"n_objects\":1,\"site\":"
			 "{\"function\":\"short_lived\"", (void *)&shared);
		T_ASSERT_INT(t_row_value(json, obj, "acquisitions"), ==,
			     (long long)started * LOCKS_PER_THREAD);
	}
	T_ASSERT_INT(t_row_value(json, "\"type\":\"spinlock\"", "acquisitions"), ==,
		     WAVES * PER_WAVE / 3);
	free(json);
	printf("preload_threads: ok (%lu threads)\n", started);
	return 0;
}
