/*
 * blame_counts.c - every contended wait that found its holder is blamed
 * once (blame.c, sp_wait_begin() and sp_wait_end()): a holder thread
 * takes the mutex, lets the waiter go (a semaphore) and holds it 2 ms
 * more, so the waiter's lock call finds it held and names the holder;
 * ROUNDS times, the last wait's lock kept by the waiter until it exits.
 * Then, in the JSON report, the rows of the mutex must have as many
 * blamed waits as contended ones (and some contended ones: a waiter that
 * came late counts as uncontended).  Run preloaded with hold=1.  Exit 1
 * with a message on failure.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_report.h"

#define ROUNDS 20

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static sem_t held, done;

static void *holder(void *arg)
{
	struct timespec d = { 0, 2000000 };

	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&m);
		sem_post(&held);
		nanosleep(&d, NULL);
		pthread_mutex_unlock(&m);
		sem_wait(&done);
	}
	return NULL;
}

static void *waiter(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		sem_wait(&held);
		pthread_mutex_lock(&m);
		if (i < ROUNDS - 1)
			pthread_mutex_unlock(&m);
		sem_post(&done);
	}
	return NULL; /* exits holding m */
}

/* The contended waits of the rows of @m, and the waits of their blame
 * lists (each list's "count"s). */
static void sums(const char *json, long long *contended, long long *blamed)
{
	*contended = *blamed = 0;
	for (const char *row = json_object_row(json, &m); row; row = json_object_row(row + 1, &m)) {
		const char *end = json_row_end(row), *b = strstr(row, "\"blame\":[");
		long long c = json_row_value(row, end, "contended");

		if (c > 0)
			*contended += c;
		for (const char *k = b; k && (!end || k < end); k = strstr(k + 1, "\"count\":")) {
			long long n = json_row_value(k, end, "count");

			if (k != b && n > 0)
				*blamed += n;
		}
	}
}

int main(void)
{
	long long contended, blamed;
	pthread_t h, w;
	char *json;
	int rc = 0;

	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&h, NULL, holder, NULL) || pthread_create(&w, NULL, waiter, NULL)) {
		perror("blame_counts: pthread_create");
		return 1;
	}
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	json = json_report("blame_counts");
	sums(json, &contended, &blamed);
	printf("blame_counts: %lld contended waits, %lld blamed\n", contended, blamed);
	if (contended < ROUNDS / 2 || blamed != contended) {
		fprintf(stderr, "blame_counts: FAIL\n");
		rc = 1;
	}
	free(json);
	return rc;
}
