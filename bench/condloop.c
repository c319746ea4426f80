/*
 * condloop.c - a fixed number of uncontended lock+unlock pairs, each
 * optionally with a pthread_cond_signal() inside (no waiter), on one
 * thread: for instruction counts under callgrind, which are repeatable
 * where timings on a shared machine are not (bench/explain_bench.sh).
 * Built plain (for the preload library) and with
 * -include syncprof/instrument.h.
 *
 * Usage: condloop lock|signal [N]   (N: iterations, default 1000000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;

int main(int argc, char **argv)
{
	int sig = argc > 1 && !strcmp(argv[1], "signal");
	long n = argc > 2 ? atol(argv[2]) : 1000000, x = 0;

	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&m);
		x++;
		if (sig)
			pthread_cond_signal(&c);
		pthread_mutex_unlock(&m);
	}
	printf("%ld\n", x);
	return 0;
}
