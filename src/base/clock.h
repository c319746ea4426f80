/*
 * clock.h - the one clock of syncprof (clock.c): waits, holds and trace
 * timestamps all read the TSC (when invariant) and convert it with one
 * calibration against CLOCK_MONOTONIC.  Private to libsyncprof.
 */
#ifndef SP_BASE_CLOCK_H
#define SP_BASE_CLOCK_H

#include "base/base.h"


#define SP_CLOCK_MONOTONIC 0
#define SP_CLOCK_TSC 1
extern int sp_clock_mode_now;
extern uint64_t sp_tsc_mult;
void sp_clock_calibrate__slowpath(uint64_t now_ns);
const char *sp_clock_name(void);

/* Start timing a wait: the clock's mode is fixed for this wait. */
static inline uint64_t sp_wait_start(int *mode)
{
	*mode = sp_load_acquire(&sp_clock_mode_now);
	return *mode == SP_CLOCK_TSC ? __builtin_ia32_rdtsc() : sp_now_ns();
}

/* Nanoseconds since sp_wait_start() returned @t0 with @mode. */
static inline uint64_t sp_wait_ns(int mode, uint64_t t0)
{
	uint64_t now;

	if (SP_LIKELY(mode == SP_CLOCK_TSC)) {
		uint64_t ticks = __builtin_ia32_rdtsc() - t0;

		return (uint64_t)(((unsigned __int128)ticks * sp_load_relaxed(&sp_tsc_mult)) >> 32);
	}
	now = sp_now_ns();
	sp_clock_calibrate__slowpath(now);
	return now - t0;
}

#endif /* SP_BASE_CLOCK_H */
