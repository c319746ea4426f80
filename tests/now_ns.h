/*
 * now_ns.h - CLOCK_MONOTONIC in nanoseconds, for the test programs that
 * time their own holds and waits: the truth a profile is checked against
 * (tests/preload/short_holds.c, known_holds.c, unlock_end.c, ...), and a
 * sleep of so many.  One copy, where eight programs each had their own.
 */
#ifndef SYNCPROF_TESTS_NOW_NS_H
#define SYNCPROF_TESTS_NOW_NS_H

#include <stdint.h>
#include <time.h>

static inline uint64_t now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

/* Sleep @ns, whatever signals interrupt it (known_holds.c, hold_clock.c). */
static inline void sleep_ns(uint64_t ns)
{
	struct timespec t = { (time_t)(ns / 1000000000u), (long)(ns % 1000000000u) };

	while (nanosleep(&t, &t))
		;
}

#endif /* SYNCPROF_TESTS_NOW_NS_H */
