/*
 * attach_target.c - a lock-heavy program for 'syncprof attach' tests
 * (attach.sh): it was not started for syncprof, runs until told to stop,
 * and checks its own locks' results.
 *
 * Threads: NT workers increment a counter under a mutex (and sometimes
 * with trylock), readers and writers share a pair under a rwlock (a
 * writer keeps the two equal), and a producer/consumer pair hands tokens
 * over with a condition variable.  stdin drives it, one command a line:
 *   status  -> "got=libc" when this program's GOT slot of
 *              pthread_mutex_lock holds libc's function, "got=other"
 *              when something (attach) redirected it;
 *   quit    -> stop, join, check, print the deterministic results and
 *              exit with status 7.
 * The output of a run does not depend on timing, so a run with attach
 * must print exactly what a run without attach prints.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NT 4
#define NR 2

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_rwlock_t rw = PTHREAD_RWLOCK_INITIALIZER;
static pthread_mutex_t cmu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cv = PTHREAD_COND_INITIALIZER;
static unsigned long counter, per_thread[NT], pair_a, pair_b, torn, tokens, sent, received;
static int stop;

static void *worker_mutex(void *arg)
{
	unsigned long *mine = arg;

	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		if ((*mine & 7) == 0 && pthread_mutex_trylock(&mu) == 0) {
			counter++;
			(*mine)++;
			pthread_mutex_unlock(&mu);
			continue;
		}
		pthread_mutex_lock(&mu);
		counter++;
		(*mine)++;
		pthread_mutex_unlock(&mu);
	}
	return NULL;
}

static void *worker_reader(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_rwlock_rdlock(&rw);
		if (pair_a != pair_b)
			__atomic_add_fetch(&torn, 1, __ATOMIC_RELAXED);
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *worker_writer(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&stop, __ATOMIC_RELAXED)) {
		pthread_rwlock_wrlock(&rw);
		pair_a++;
		pair_b++;
		pthread_rwlock_unlock(&rw);
	}
	return NULL;
}

static void *producer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&cmu);
		while (tokens && !stop)
			pthread_cond_wait(&cv, &cmu);
		if (stop) {
			pthread_mutex_unlock(&cmu);
			return NULL;
		}
		tokens = 1;
		sent++;
		pthread_cond_broadcast(&cv);
		pthread_mutex_unlock(&cmu);
	}
}

static void *consumer(void *arg)
{
	(void)arg;
	for (;;) {
		pthread_mutex_lock(&cmu);
		while (!tokens && !stop)
			pthread_cond_wait(&cv, &cmu);
		if (tokens) {
			tokens = 0;
			received++;
			pthread_cond_broadcast(&cv);
		}
		if (stop) {
			pthread_mutex_unlock(&cmu);
			return NULL;
		}
		pthread_mutex_unlock(&cmu);
	}
}

int main(void)
{
	pthread_t th[NT + NR + 3];
	char line[64];
	int n = 0;
	unsigned long sum = 0;

	for (int i = 0; i < NT; i++)
		pthread_create(&th[n++], NULL, worker_mutex, &per_thread[i]);
	for (int i = 0; i < NR; i++)
		pthread_create(&th[n++], NULL, worker_reader, NULL);
	pthread_create(&th[n++], NULL, worker_writer, NULL);
	pthread_create(&th[n++], NULL, producer, NULL);
	pthread_create(&th[n++], NULL, consumer, NULL);
	printf("ready\n");
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "status\n")) {
			/* PIE code takes an imported function's address from its GOT. */
			void *got = (void *)pthread_mutex_lock;
			void *libc = dlsym(RTLD_NEXT, "pthread_mutex_lock");

			printf("got=%s\n", got == libc ? "libc" : "other");
			fflush(stdout);
		} else if (!strcmp(line, "quit\n")) {
			break;
		}
	}
	pthread_mutex_lock(&cmu);
	__atomic_store_n(&stop, 1, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&cv);
	pthread_mutex_unlock(&cmu);
	for (int i = 0; i < n; i++)
		pthread_join(th[i], NULL);
	for (int i = 0; i < NT; i++)
		sum += per_thread[i];
	printf("mutex counter %s\n", sum == counter ? "consistent" : "WRONG");
	printf("rwlock pairs %s\n", !torn && pair_a == pair_b ? "consistent" : "WRONG");
	printf("condvar tokens %s\n",
	       sent == received || sent == received + 1 ? "consistent" : "WRONG");
	return 7;
}
