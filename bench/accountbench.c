/*
 * accountbench.c - what the threads' time account costs (record/account.c,
 * report/collect.c): docs/accounting.md quotes its figures.
 *
 *   read     sp_sched_read() of the calling thread and of another: the
 *            /proc reads a thread makes at exit, and a report per thread;
 *            and of a thread whose start is known (the preload started
 *            it: schedstat only)
 *   collect  sp_collect_account() with T live threads (T = 1, 16, 64):
 *            the report's whole account, per thread
 *   churn    create, one profiled lock call, exit, join: per thread, with
 *            profiling on (registration, the exit's fold and account) and
 *            off (no record at all); the difference is what a profiled
 *            thread's life costs, the account's reads included
 *
 * Built with -include syncprof/instrument.h and linked with
 * libsyncprof.a, so that its lock calls are profiled and the internal
 * functions can be called.  Times are medians of 5 runs of each loop.
 * Usage: accountbench [N]   (loop count, 2000 by default)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "record/record.h"
#include "report/collect.h"
#include "syncprof.h"

static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_barrier_t hold_all, release_all;

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double median5(double *v)
{
	qsort(v, 5, sizeof(*v), cmp_double);
	return v[2];
}

static void *one_lock(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *parked(void *arg)
{
	(void)arg;
	pthread_mutex_lock(&m);
	pthread_mutex_unlock(&m);
	pthread_barrier_wait(&hold_all);
	pthread_barrier_wait(&release_all);
	return NULL;
}

static double churn(int n)
{
	double t0 = now_us();

	for (int i = 0; i < n; i++) {
		pthread_t th;

		if (pthread_create(&th, NULL, one_lock, NULL) || pthread_join(th, NULL))
			abort();
	}
	return (now_us() - t0) / n;
}

static double collect_per_thread(int threads, int reps)
{
	pthread_t th[64];
	double t0, dt;

	pthread_barrier_init(&hold_all, NULL, (unsigned)threads + 1);
	pthread_barrier_init(&release_all, NULL, (unsigned)threads + 1);
	for (int i = 0; i < threads; i++)
		if (pthread_create(&th[i], NULL, parked, NULL))
			abort();
	pthread_barrier_wait(&hold_all);
	t0 = now_us();
	for (int r = 0; r < reps; r++) {
		struct sp_profile p;

		if (sp_profile_init(&p) || sp_collect_account(&p) ||
		    p.account.state != SP_ACCOUNT_KEPT)
			abort();
		sp_profile_free(&p);
	}
	dt = (now_us() - t0) / reps / (threads + 1); /* and main */
	pthread_barrier_wait(&release_all);
	for (int i = 0; i < threads; i++)
		pthread_join(th[i], NULL);
	pthread_barrier_destroy(&hold_all);
	pthread_barrier_destroy(&release_all);
	return dt;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 2000;
	double v[5], getppid_us;
	struct sp_sched s;
	pid_t self = sp_gettid();

	if (n <= 0)
		return 2;
	for (int k = 0; k < 5; k++) {
		double t0 = now_us();

		for (int i = 0; i < n; i++)
			getppid();
		v[k] = (now_us() - t0) / n;
	}
	getppid_us = median5(v);
	printf("getppid (a bare system call)         %8.2f us\n", getppid_us);
	for (int k = 0; k < 5; k++) {
		double t0 = now_us();

		for (int i = 0; i < n; i++)
			if (sp_sched_read(self, 0, &s))
				abort();
		v[k] = (now_us() - t0) / n;
	}
	printf("sp_sched_read, own thread (at exit)  %8.2f us (%.1f system calls' worth)\n",
	       median5(v), median5(v) / getppid_us);
	for (int k = 0; k < 5; k++) {
		double t0 = now_us();

		for (int i = 0; i < n; i++)
			if (sp_sched_read(self, 1, &s)) /* a known start: no stat */
				abort();
		v[k] = (now_us() - t0) / n;
	}
	printf("  the same, start known (preloaded)  %8.2f us (%.1f system calls' worth)\n",
	       median5(v), median5(v) / getppid_us);
	for (int t = 1; t <= 64; t *= 4) {
		for (int k = 0; k < 5; k++)
			v[k] = collect_per_thread(t == 1 ? 0 : t, n / 100 + 1);
		printf("sp_collect_account, %2d threads       %8.2f us per thread\n", t == 1 ? 1 : t + 1,
		       median5(v));
	}
	for (int on = 1; on >= 0; on--) {
		if (on)
			syncprof_enable();
		else
			syncprof_disable();
		for (int k = 0; k < 5; k++)
			v[k] = churn(n / 4 + 1);
		printf("thread create+lock+exit+join, %-3s   %8.2f us\n", on ? "on" : "off",
		       median5(v));
	}
	return 0;
}
