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
#include <dlfcn.h>
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "syncprof.h"

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

/* The sum of "@key" in the rows of @m, and inside their blame lists. */
static void sums(const char *json, long long *contended, long long *blamed)
{
	char obj[64];

	*contended = *blamed = 0;
	snprintf(obj, sizeof(obj), "\"object\":\"%#lx\"", (unsigned long)&m);
	for (const char *row = strstr(json, obj); row; row = strstr(row + 1, obj)) {
		const char *end = strstr(row, "{\"type\""), *k = strstr(row, "\"contended\":");
		const char *b = strstr(row, "\"blame\":[");

		if (k && (!end || k < end))
			*contended += atoll(k + strlen("\"contended\":"));
		for (const char *c = b; c && (!end || c < end); c = strstr(c + 1, "\"count\":")) {
			if (c != b)
				*blamed += atoll(c + strlen("\"count\":"));
		}
	}
}

int main(void)
{
	typedef int (*report_fn)(FILE *, const struct syncprof_report_options *);
	report_fn report = (report_fn)dlsym(RTLD_DEFAULT, "syncprof_report");
	struct syncprof_report_options o;
	long long contended, blamed;
	pthread_t h, w;
	char *json = NULL;
	size_t len = 0;
	FILE *f;
	int rc = 0;

	if (!report) {
		fprintf(stderr, "blame_counts: run with LD_PRELOAD=libsyncprof-preload.so\n");
		return 1;
	}
	sem_init(&held, 0, 0);
	sem_init(&done, 0, 0);
	if (pthread_create(&h, NULL, holder, NULL) || pthread_create(&w, NULL, waiter, NULL)) {
		perror("blame_counts: pthread_create");
		return 1;
	}
	pthread_join(h, NULL);
	pthread_join(w, NULL);
	f = open_memstream(&json, &len);
	memset(&o, 0, sizeof(o));
	o.format = SYNCPROF_FORMAT_JSON;
	if (!f || report(f, &o)) {
		fprintf(stderr, "blame_counts: syncprof_report failed\n");
		return 1;
	}
	fclose(f);
	sums(json, &contended, &blamed);
	printf("blame_counts: %lld contended waits, %lld blamed\n", contended, blamed);
	if (contended < ROUNDS / 2 || blamed != contended) {
		fprintf(stderr, "blame_counts: FAIL\n");
		rc = 1;
	}
	free(json);
	return rc;
}
