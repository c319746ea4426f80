/*
 * hold_where.c - where in a long critical section its holder spends the
 * time (issue 24, part 2; record/holdstate.c's stacks with frames=N).
 *
 * The holder takes its mutex HOLDS times (LINE_HOLD) and, inside, calls
 * where_sleep() - nanosleep 40 ms, the holder blocked in the kernel, so
 * the sampler unwinds it from outside - then where_spin() - 40 ms of
 * arithmetic, the holder running, so the sampler signals it and it
 * unwinds itself.  A profile with frames=N then has, on the lock's row,
 * "hold_where" points in each function, in the states clock_nanosleep
 * and running, each about half of the time sampled.
 *
 * Whether what it calls was disturbed: with the argument "strict" every
 * nanosleep must return 0 (exit status 1 otherwise) - hold_where=blocked
 * sends no signal; without it a nanosleep that ends early with EINTR
 * (hold_where=all signals running holders, and one that enters the call
 * as the signal comes sees it end early) sleeps again for what is left,
 * as a robust program does, and is counted.  Prints "truth sleep_ns N
 * spin_ns N eintr N", the time it measured in each.
 */
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "../now_ns.h"

#define HOLDS 5
#define PART_NS 40000000ull

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static volatile uint64_t sink;
static int disturbed, strict, eintr;

__attribute__((noinline)) static void where_sleep(void)
{
	struct timespec ts = { 0, (long)PART_NS }, left;

	while (nanosleep(&ts, &left)) {
		if (errno != EINTR || strict) {
			fprintf(stderr, "hold_where: nanosleep: errno %d\n", errno);
			disturbed = 1;
			return;
		}
		eintr++;
		ts = left;
	}
}

__attribute__((noinline)) static void where_spin(void)
{
	uint64_t end = now_ns() + PART_NS, x = sink;

	while (now_ns() < end)
		for (int i = 0; i < 20000; i++)
			x = x * 6364136223846793005ull + 1442695040888963407ull;
	sink = x;
}

int main(int argc, char **argv)
{
	uint64_t sleep_ns = 0, spin_ns = 0;

	strict = argc > 1 && !strcmp(argv[1], "strict");
	for (int i = 0; i < HOLDS; i++) {
		uint64_t t0, t1, t2;

		pthread_mutex_lock(&lock); /* LINE_HOLD */
		t0 = now_ns();
		where_sleep();
		t1 = now_ns();
		where_spin();
		t2 = now_ns();
		pthread_mutex_unlock(&lock);
		sleep_ns += t1 - t0;
		spin_ns += t2 - t1;
	}
	printf("truth sleep_ns %llu spin_ns %llu eintr %d\n", (unsigned long long)sleep_ns,
	       (unsigned long long)spin_ns, eintr);
	return disturbed;
}
