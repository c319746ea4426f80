/*
 * skipbench.c - the cost of --skip: a program's own lock wrapper, called in
 * a loop, under the preload library with and without skip options.
 *
 * Built -O2 -fomit-frame-pointer (as distributions build: the wrapper's CFA
 * is rsp-based) and linked -rdynamic, so that skip=^bench_lock$ finds the
 * wrapper in .dynsym even when the binary is stripped.  Each round runs
 * every mode for -n calls, alternating, and the medians of ns per
 * lock+unlock pair are printed, with the difference against "libc" (the
 * same wrapper calling glibc's own functions, never interposed): that is
 * what the preload, and --skip, add to each call in this process.
 *
 * Modes: libc, direct (pthread_mutex_lock from the loop), wrapped (through
 * bench_lock(), a noinline wrapper, from two callers alternately).
 *
 * Usage: skipbench [-n CALLS] [-r ROUNDS]
 *   LD_PRELOAD=build/libsyncprof-preload.so \
 *   SYNCPROF_OPTIONS=report_at_exit=0,skip=^bench_lock$ build/bench/skipbench
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

typedef int (*mutex_fn)(pthread_mutex_t *m);
static mutex_fn libc_lock, libc_unlock;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;

__attribute__((noinline)) void bench_lock(pthread_mutex_t *l)
{
	pthread_mutex_lock(l);
	__asm__ volatile("" ::: "memory"); /* no tail call */
}

__attribute__((noinline)) void bench_unlock(pthread_mutex_t *l)
{
	pthread_mutex_unlock(l);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void libc_wrap_lock(pthread_mutex_t *l)
{
	libc_lock(l);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void libc_wrap_unlock(pthread_mutex_t *l)
{
	libc_unlock(l);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void caller_a(void)
{
	bench_lock(&m);
	bench_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static void caller_b(void)
{
	bench_lock(&m);
	bench_unlock(&m);
	__asm__ volatile("" ::: "memory");
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

enum { LIBC, DIRECT, WRAPPED, N_MODES };
static const char *const mode_names[N_MODES] = { "libc", "direct", "wrapped" };

static double run(int mode, long n)
{
	double t0 = now_ns();

	for (long i = 0; i < n; i += 2) {
		switch (mode) {
		case LIBC:
			libc_wrap_lock(&m);
			libc_wrap_unlock(&m);
			libc_wrap_lock(&m);
			libc_wrap_unlock(&m);
			break;
		case DIRECT:
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
			pthread_mutex_lock(&m);
			pthread_mutex_unlock(&m);
			break;
		default:
			caller_a();
			caller_b();
		}
	}
	return (now_ns() - t0) / n;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	long n = 2000000;
	int rounds = 11, c;
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	double *t[N_MODES], med[N_MODES];

	while ((c = getopt(argc, argv, "n:r:")) != -1) {
		if (c == 'n')
			n = atol(optarg);
		else if (c == 'r')
			rounds = atoi(optarg);
		else
			return fprintf(stderr, "usage: skipbench [-n CALLS] [-r ROUNDS]\n"), 2;
	}
	if (!libc || !(libc_lock = (mutex_fn)dlsym(libc, "pthread_mutex_lock")) ||
	    !(libc_unlock = (mutex_fn)dlsym(libc, "pthread_mutex_unlock")))
		return fprintf(stderr, "skipbench: glibc's pthread_mutex_lock not found\n"), 1;
	for (int k = 0; k < N_MODES; k++)
		t[k] = calloc((size_t)rounds, sizeof(double));
	run(WRAPPED, n / 10); /* first sight of every site */
	for (int r = 0; r < rounds; r++)
		for (int k = 0; k < N_MODES; k++)
			t[k][r] = run(k, n);
	for (int k = 0; k < N_MODES; k++) {
		qsort(t[k], (size_t)rounds, sizeof(double), cmp_double);
		med[k] = t[k][rounds / 2];
	}
	for (int k = 0; k < N_MODES; k++)
		printf("%-8s %7.1f ns per lock+unlock  (+%.1f ns vs libc, %.2fx)\n", mode_names[k],
		       med[k], med[k] - med[LIBC], med[k] / med[LIBC]);
	return 0;
}
