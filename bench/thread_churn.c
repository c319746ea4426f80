/*
 * thread_churn.c - what a short thread's start and exit cost (issue 25,
 * part 2: at most 5 us added per thread).
 *
 * Design: N threads (40,000 by default), W at a time (4: create W, join
 * W, again), each taking two mutexes, one inside the other, ten times.
 * The loop times itself (CLOCK_MONOTONIC around the create/join loop
 * only), so start-up and the report at exit are not in its figure.  It
 * prints one line, "threads N workers W elapsed_us E per_thread_us P".
 * bench/parts/thread_churn.sh runs it bare, preloaded, compiled in (the same
 * source built with -include syncprof/instrument.h) and preloaded with
 * hold=1,lock_order=1, interleaved, and gives the medians and ratios.
 *
 * Invariants: the threads do the same work in every mode; a failed
 * pthread_create is an error (exit 1), never skipped silently.
 *
 * Alternatives considered: a pool of W threads that start a new thread
 * as each ends keeps W alive all the time, but its figure then depends
 * on the scheduler's order of wake-ups; batches of W are simpler and
 * alike in every mode.
 *
 * Usage: thread_churn [N] [W]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define ROUNDS 10
#define MAX_WORKERS 64

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;

static void *worker(void *arg)
{
	(void)arg;
	for (int i = 0; i < ROUNDS; i++) {
		pthread_mutex_lock(&outer);
		pthread_mutex_lock(&inner);
		shared++;
		pthread_mutex_unlock(&inner);
		pthread_mutex_unlock(&outer);
	}
	return NULL;
}

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 40000;
	long w = argc > 2 ? atol(argv[2]) : 4;
	pthread_t tids[MAX_WORKERS];
	double t0, el;

	if (n < 1 || w < 1 || w > MAX_WORKERS) {
		fprintf(stderr, "usage: thread_churn [N] [W<=%d]\n", MAX_WORKERS);
		return 2;
	}
	t0 = now_us();
	for (long done = 0; done < n;) {
		long k = n - done < w ? n - done : w;

		for (long i = 0; i < k; i++)
			if (pthread_create(&tids[i], NULL, worker, NULL)) {
				fprintf(stderr, "thread_churn: pthread_create failed\n");
				return 1;
			}
		for (long i = 0; i < k; i++)
			pthread_join(tids[i], NULL);
		done += k;
	}
	el = now_us() - t0;
	if (shared != (unsigned long)n * ROUNDS) {
		fprintf(stderr, "thread_churn: %lu increments, expected %lu\n", shared,
			(unsigned long)n * ROUNDS);
		return 1;
	}
	printf("threads %ld workers %ld elapsed_us %.0f per_thread_us %.3f\n", n, w, el, el / n);
	return 0;
}
