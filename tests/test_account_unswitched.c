/*
 * test_account_unswitched.c - a thread's time account without /proc
 * (account.c, sp_sched_self_unswitched()): given for a thread that has
 * its exact start and never left its CPU since, with all its life as
 * running time, also when its start is unknown; refused (nothing
 * filled) for a thread that slept; errno kept either way.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "record/record.h"

struct result {
	int given;
	struct sp_sched s;
	uint64_t start_ns;
	int errno_after;
};

static struct result run(int sleep_first, int with_start)
{
	struct result r;

	memset(&r, 0, sizeof(r));
	memset(&r.s, 0x5a, sizeof(r.s));
	r.start_ns = with_start ? sp_boottime_ns() : 0; /* as the preload's trampoline */
	if (sleep_first) {
		const struct timespec ms = { 0, 1000 * 1000 };

		nanosleep(&ms, NULL); /* a voluntary switch */
	}
	errno = 1234;
	r.given = sp_sched_self_unswitched(r.start_ns, &r.s);
	r.errno_after = errno;
	return r;
}

static void *thread_main(void *arg)
{
	struct result *r = arg;

	*r = run(r->given, r->start_ns != 0);
	return NULL;
}

/* In a new thread: @sleep_first, @with_start as run()'s. */
static struct result in_thread(int sleep_first, int with_start)
{
	struct result r = { .given = sleep_first, .start_ns = (uint64_t)with_start };
	pthread_t t;

	T_ASSERT_INT(pthread_create(&t, NULL, thread_main, &r), ==, 0);
	T_ASSERT_INT(pthread_join(t, NULL), ==, 0);
	return r;
}

/* A thread that only reads its clocks has no switch, unless the machine
 * preempted it: one in 1,000 is enough.  Its result, given. */
static struct result unswitched(int with_start, int *tries)
{
	struct result r;

	for (*tries = 1; *tries <= 1000; ++*tries) {
		r = in_thread(0, with_start);
		if (r.given)
			break;
	}
	T_ASSERT_INT(r.given, ==, 1);
	T_ASSERT_INT(r.errno_after, ==, 1234);
	return r;
}

int main(void)
{
	struct result r;
	struct sp_account_figs f;
	int tries;

	r = unswitched(1, &tries);
	/* it began when it began running: its CPU time ago at the latest */
	T_ASSERT(r.s.start_ns <= r.start_ns);
	T_ASSERT(r.s.now_ns - r.s.start_ns >= r.s.running_ns);
	T_ASSERT_INT(r.s.start_ticks, ==, 0);
	T_ASSERT_INT(r.s.preempted_ns, ==, 0);
	T_ASSERT(r.s.running_ns > 0);
	T_ASSERT(r.s.now_ns >= r.start_ns);
	T_ASSERT_INT(r.s.name[0], ==, 0);
	sp_account_figures(&r.s, 0, 0, &f);
	T_ASSERT_INT(f.lifetime_ns, ==, r.s.now_ns - r.s.start_ns);
	T_ASSERT_INT(f.preempted_ns, ==, 0);
	T_ASSERT_INT(f.running_ns, ==, r.s.running_ns);
	T_ASSERT(f.running_ns <= f.lifetime_ns);
	printf("unswitched thread (try %d): lived %llu ns, ran %llu ns\n", tries,
	       (unsigned long long)f.lifetime_ns, (unsigned long long)r.s.running_ns);

	r = in_thread(1, 1);
	T_ASSERT_INT(r.given, ==, 0);
	T_ASSERT_INT(r.errno_after, ==, 1234);
	T_ASSERT_INT(r.s.preempted_ns, ==, 0x5a5a5a5a5a5a5a5aull); /* untouched */
	puts("a thread that slept: refused, nothing filled");

	/* without its start (compiled in, attached): its CPU time ago */
	r = unswitched(0, &tries);
	T_ASSERT_INT(r.s.now_ns - r.s.start_ns, ==, r.s.running_ns);
	T_ASSERT_INT(r.s.preempted_ns, ==, 0);
	puts("a thread without its start: its life is its CPU time");
	puts("test_account_unswitched: ok");
	return 0;
}
