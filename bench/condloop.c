/*
 * condloop.c - a fixed number of uncontended lock+unlock pairs, each
 * optionally with a pthread_cond_signal() inside (no waiter), on one
 * thread: for instruction counts under callgrind, which are repeatable
 * where timings on a shared machine are not (bench/parts/explain_bench.sh).
 * Built plain (for the preload library) and with
 * -include syncprof/instrument.h.
 *
 * "many" locks one of 1024 mutexes per iteration, picked at random as
 * lockbench -m 1024 does: the case where a per-thread one-entry cache
 * misses.
 *
 * Usage: condloop lock|signal|many [N]   (N: iterations, default 1000000)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xorshift.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t c = PTHREAD_COND_INITIALIZER;
#define N_MANY 1024
static struct {
	pthread_mutex_t m;
} __attribute__((aligned(64))) many[N_MANY];


int main(int argc, char **argv)
{
	int sig = argc > 1 && !strcmp(argv[1], "signal");
	long n = argc > 2 ? atol(argv[2]) : 1000000, x = 0;
	unsigned seed = 12345;

	if (argc > 1 && !strcmp(argv[1], "many")) {
		for (int i = 0; i < N_MANY; i++)
			pthread_mutex_init(&many[i].m, NULL);
		for (long i = 0; i < n; i++) {
			pthread_mutex_t *mm = &many[xorshift(&seed) % N_MANY].m;

			pthread_mutex_lock(mm);
			x++;
			pthread_mutex_unlock(mm);
		}
		printf("%ld\n", x);
		return 0;
	}
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
