/*
 * owner_changes.c - owner changes counted exactly (hold.h,
 * sp_hold_owner_changed()): two threads take one mutex in a fixed order,
 * handed over by semaphores, so the truth is known:
 *   - strict turns (A, B, A, B...): every acquisition but the first
 *     changes the owner: 2 x ROUNDS - 1;
 *   - batches (A x BATCH, B x BATCH...): one change per batch but the
 *     first: 2 x ROUNDS - 1 again, among 2 x ROUNDS x BATCH acquisitions.
 * Each pattern has its own mutex.  The JSON report's owner_changes of the
 * mutex's rows (one per call site) must add up to the truth.  Run
 * preloaded with hold=1 (owner changes are a column of hold tracking).
 * Exit 1 with a message on failure.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json_report.h"

#define ROUNDS 500
#define BATCH 7

static pthread_mutex_t turns = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t batches = PTHREAD_MUTEX_INITIALIZER;
static sem_t go[2];

struct who {
	int me;
	pthread_mutex_t *m;
	int batch;
};

static void *take(void *arg)
{
	const struct who *w = arg;

	for (int i = 0; i < ROUNDS; i++) {
		sem_wait(&go[w->me]);
		for (int k = 0; k < w->batch; k++) {
			pthread_mutex_lock(w->m);
			pthread_mutex_unlock(w->m);
		}
		sem_post(&go[!w->me]);
	}
	return NULL;
}

static void run(pthread_mutex_t *m, int batch)
{
	struct who w[2] = { { 0, m, batch }, { 1, m, batch } };
	pthread_t t[2];

	sem_init(&go[0], 0, 1);
	sem_init(&go[1], 0, 0);
	for (int i = 0; i < 2; i++)
		if (pthread_create(&t[i], NULL, take, &w[i])) {
			perror("owner_changes: pthread_create");
			exit(1);
		}
	for (int i = 0; i < 2; i++)
		pthread_join(t[i], NULL);
	sem_destroy(&go[0]);
	sem_destroy(&go[1]);
}

/* The sum of "@key" over the rows of object @m in @json. */
static long long sum_of(const char *json, const pthread_mutex_t *m, const char *key)
{
	long long sum = 0;

	for (const char *row = json_object_row(json, m); row; row = json_object_row(row + 1, m)) {
		long long v = json_row_value(row, json_row_end(row), key);

		if (v > 0)
			sum += v;
	}
	return sum;
}

int main(void)
{
	long long want = 2 * ROUNDS - 1, got_t, got_b, acq_b;
	int rc = 0;
	char *json;

	run(&turns, 1);
	run(&batches, BATCH);
	json = json_report("owner_changes");
	got_t = sum_of(json, &turns, "owner_changes");
	got_b = sum_of(json, &batches, "owner_changes");
	acq_b = sum_of(json, &batches, "acquisitions");
	printf("owner_changes: turns %lld (truth %lld), batches %lld (truth %lld) in %lld "
	       "acquisitions\n", got_t, want, got_b, want, acq_b);
	if (got_t != want || got_b != want || acq_b != 2LL * ROUNDS * BATCH) {
		fprintf(stderr, "owner_changes: FAIL\n");
		rc = 1;
	}
	free(json);
	return rc;
}
