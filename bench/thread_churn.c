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
 * source built with -include syncprof/instrument.h), preloaded with
 * hold=1,lock_order=1 and under 'syncprof attach' (-s below), interleaved,
 * and gives the medians and ratios.
 *
 * With -s (stdin-gated, for 'syncprof attach': thread_churn.sh's attach
 * mode), it prints "ready" and waits for a line on stdin before the loop,
 * and after its result line it waits for stdin's end before it exits, so
 * that the profiler can attach before the loop and detach after it from a
 * process that is still there; both waits sleep in read(), where attach
 * stops a thread.
 *
 * With -y each thread also sleeps once (100 us): a context switch,
 * which sends its exit's time account to the /proc files
 * (account.c, sp_sched_self_unswitched()) - tests/account_churn.sh
 * checks their ration so.
 *
 * Invariants: the threads do the same work in every mode; a failed
 * pthread_create is an error (exit 1), never skipped silently.
 *
 * Alternatives considered: a pool of W threads that start a new thread
 * as each ends keeps W alive all the time, but its figure then depends
 * on the scheduler's order of wake-ups; batches of W are simpler and
 * alike in every mode.
 *
 * Usage: thread_churn [-s] [-y] [N] [W]
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define ROUNDS 10
#define MAX_WORKERS 64

static pthread_mutex_t outer = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t inner = PTHREAD_MUTEX_INITIALIZER;
static volatile unsigned long shared;
static int sleep_once; /* -y */

static void *worker(void *arg)
{
	(void)arg;
	if (sleep_once) {
		/* long enough to block: a sleep whose timer has expired
		 * before the thread would block returns without a switch */
		const struct timespec us = { 0, 100 * 1000 };

		nanosleep(&us, NULL);
	}
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

/* Reads stdin until a newline (@line) or its end; 0 when it got what it
 * waited for. read(2) itself, not stdio: the thread sleeps in a system
 * call. */
static int wait_stdin(int line)
{
	char c;
	ssize_t r;

	while ((r = read(0, &c, 1)) > 0)
		if (line && c == '\n')
			return 0;
	return line ? -1 : 0;
}

int main(int argc, char **argv)
{
	int gated = 0;
	long n, w;
	pthread_t tids[MAX_WORKERS];
	double t0, el;

	for (; argc > 1 && argv[1][0] == '-' && argv[1][1] && !argv[1][2]; argv++, argc--) {
		if (argv[1][1] == 's')
			gated = 1;
		else if (argv[1][1] == 'y')
			sleep_once = 1;
		else
			break;
	}
	n = argc > 1 ? atol(argv[1]) : 40000;
	w = argc > 2 ? atol(argv[2]) : 4;
	if (n < 1 || w < 1 || w > MAX_WORKERS) {
		fprintf(stderr, "usage: thread_churn [-s] [-y] [N] [W<=%d]\n", MAX_WORKERS);
		return 2;
	}
	if (gated) {
		printf("ready\n");
		fflush(stdout);
		if (wait_stdin(1)) {
			fprintf(stderr, "thread_churn: stdin ended before the go line\n");
			return 1;
		}
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
	if (gated) {
		fflush(stdout);
		wait_stdin(0);
	}
	return 0;
}
