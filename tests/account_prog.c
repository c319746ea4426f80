/*
 * account_prog.c - a program whose threads' time is known, for the time
 * account (tests/account.sh, tests/check_account.py).
 *
 * "acct-worker" spends about 300 ms in each of four ways, one after the
 * other: asleep (nanosleep), reading an empty pipe (written 300 ms later
 * by "acct-writer"), waiting for a mutex that "acct-holder" holds for
 * 300 ms more, and computing (300 ms of its own CPU time).  It measures
 * its own life (CLOCK_BOOTTIME from its first to its last instruction)
 * and each part, and prints them as one line:
 *   worker tid=N life_ns=N sleep_ns=N pipe_ns=N mutex_ns=N compute_ns=N
 * "acct-short" locks a mutex once and exits at once (an exited thread);
 * the main thread measures it from before its pthread_create() to after
 * its join, the bounds of its life, and prints
 *   short outer_ns=N
 * "acct-idle" never makes a lock call and is still blocked in a read
 * when the report is made at exit (a live thread the profiler never saw).
 * The main thread joins the others (join waits).
 *
 * Usage: account_prog [PART_MS]   (300 by default)
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

static long part_ms = 300;
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t short_lock = PTHREAD_MUTEX_INITIALIZER;
static int work_pipe[2], idle_pipe[2];
static volatile int holder_ready;

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts))
		;
}

static void *holder(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "acct-holder");
	pthread_mutex_lock(&m);
	__atomic_store_n(&holder_ready, 1, __ATOMIC_RELEASE);
	sleep_ms(3 * part_ms); /* the worker comes for it after 2 parts */
	pthread_mutex_unlock(&m);
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "acct-writer");
	sleep_ms(2 * part_ms); /* the worker reads from 1 part on */
	if (write(work_pipe[1], "x", 1) != 1)
		abort();
	return NULL;
}

static void *worker(void *arg)
{
	uint64_t t0 = clock_ns(CLOCK_BOOTTIME), t1, t2, t3, t4, c0;
	volatile uint64_t spin = 0;
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "acct-worker");
	sleep_ms(part_ms);
	t1 = clock_ns(CLOCK_BOOTTIME);
	if (read(work_pipe[0], &c, 1) != 1)
		abort();
	t2 = clock_ns(CLOCK_BOOTTIME);
	pthread_mutex_lock(&m);
	t3 = clock_ns(CLOCK_BOOTTIME);
	pthread_mutex_unlock(&m);
	c0 = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	while (clock_ns(CLOCK_THREAD_CPUTIME_ID) - c0 < (uint64_t)part_ms * 1000000u)
		for (int i = 0; i < 1000; i++)
			spin += (uint64_t)i;
	t4 = clock_ns(CLOCK_BOOTTIME);
	printf("worker tid=%d life_ns=%llu sleep_ns=%llu pipe_ns=%llu mutex_ns=%llu "
	       "compute_ns=%llu\n",
	       (int)gettid(), (unsigned long long)(t4 - t0), (unsigned long long)(t1 - t0),
	       (unsigned long long)(t2 - t1), (unsigned long long)(t3 - t2),
	       (unsigned long long)(t4 - t3));
	fflush(stdout);
	return NULL;
}

static void *short_lived(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "acct-short");
	pthread_mutex_lock(&short_lock);
	pthread_mutex_unlock(&short_lock);
	return NULL;
}

static void *idle(void *arg)
{
	char c;

	(void)arg;
	pthread_setname_np(pthread_self(), "acct-idle");
	if (read(idle_pipe[0], &c, 1) < 0) /* never written: exit() ends it */
		abort();
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t h, w, wr, s, i;
	uint64_t s0;

	if (argc > 1)
		part_ms = atol(argv[1]);
	if (part_ms <= 0 || pipe(work_pipe) || pipe(idle_pipe))
		return 2;
	s0 = clock_ns(CLOCK_BOOTTIME);
	if (pthread_create(&s, NULL, short_lived, NULL) || pthread_join(s, NULL))
		return 1;
	printf("short outer_ns=%llu\n", (unsigned long long)(clock_ns(CLOCK_BOOTTIME) - s0));
	fflush(stdout);
	if (pthread_create(&i, NULL, idle, NULL) || pthread_create(&h, NULL, holder, NULL))
		return 1;
	while (!__atomic_load_n(&holder_ready, __ATOMIC_ACQUIRE))
		sleep_ms(1);
	if (pthread_create(&w, NULL, worker, NULL) || pthread_create(&wr, NULL, writer, NULL))
		return 1;
	pthread_join(w, NULL);
	pthread_join(wr, NULL);
	pthread_join(h, NULL);
	return 0; /* acct-idle is still blocked: the report at exit sees it live */
}
