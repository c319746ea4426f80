/*
 * syscallbench.c - what the preload's syscall() interposer costs a call
 * that is not a futex: syscall(SYS_getpid) through the PLT (the
 * interposer, when preloaded) against libc's own syscall(), found with
 * dlopen("libc.so.6", RTLD_NOLOAD), in the same process, round after
 * round alternately; prints the medians in ns per call, their difference
 * and their ratio.  Issue 23's bar: at most 5 ns more.
 *
 * Usage: syscallbench [CALLS_PER_ROUND [ROUNDS]]
 *        syscallbench plt|libc N   (N calls one way only, for callgrind:
 *        bench/parts/cg_per_iter.sh appends N)
 *   LD_PRELOAD=build/libsyncprof-preload.so build/bench/syscallbench
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

typedef long (*syscall_fn)(long, ...);

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static double round_ns(syscall_fn f, long n)
{
	double t0 = now_ns();
	long sum = 0;

	for (long i = 0; i < n; i++)
		sum += f(SYS_getpid);
	if (sum != (long)getpid() * n)
		abort(); /* what the call returns is checked too */
	return (now_ns() - t0) / (double)n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	void *libc = dlopen("libc.so.6", RTLD_NOW | RTLD_NOLOAD);
	syscall_fn direct = libc ? (syscall_fn)dlsym(libc, "syscall") : NULL;
	syscall_fn plt = syscall;
	int one_way = argc > 2 && (!strcmp(argv[1], "plt") || !strcmp(argv[1], "libc"));
	long n = argc > 1 ? atol(argv[one_way ? 2 : 1]) : 200000;
	int rounds = argc > 2 && !one_way ? atoi(argv[2]) : 21;
	double *a, *b;

	if (!direct || n <= 0 || rounds <= 0) {
		fprintf(stderr, "syscallbench: libc's syscall() not found, or bad arguments\n");
		return 1;
	}
	if (one_way) {
		round_ns(argv[1][0] == 'p' ? plt : direct, n);
		return 0;
	}
	a = calloc((size_t)rounds, sizeof(*a));
	b = calloc((size_t)rounds, sizeof(*b));
	if (!a || !b)
		return 1;
	round_ns(plt, n / 10 + 1);
	for (int r = 0; r < rounds; r++) {
		a[r] = round_ns(direct, n);
		b[r] = round_ns(plt, n);
	}
	qsort(a, (size_t)rounds, sizeof(*a), cmp);
	qsort(b, (size_t)rounds, sizeof(*b), cmp);
	printf("syscall(SYS_getpid): libc %.1f ns, through the PLT%s %.1f ns: +%.1f ns (x%.3f)\n",
	       a[rounds / 2], plt == direct ? "" : " (interposed)", b[rounds / 2],
	       b[rounds / 2] - a[rounds / 2], b[rounds / 2] / a[rounds / 2]);
	free(a);
	free(b);
	return 0;
}
