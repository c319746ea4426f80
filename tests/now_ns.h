/*
 * now_ns.h - CLOCK_MONOTONIC in nanoseconds, for the test programs that
 * time their own holds and waits: the truth a profile is checked against
 * (tests/preload/short_holds.c, known_holds.c, unlock_end.c, ...).  One
 * copy, where eight programs each had their own.
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

#endif /* SYNCPROF_TESTS_NOW_NS_H */
