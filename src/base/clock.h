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
/* SP_CLOCK_TSC once the TSC is calibrated; never changes back. */
extern int sp_clock_mode_now;
/* ns per tick, 32.32 fixed point; written once, before the mode. */
extern uint64_t sp_tsc_mult;
/* The lazy calibration's step, from a wait timed with CLOCK_MONOTONIC. */
void sp_clock_calibrate__slowpath(uint64_t now_ns);
/*
 * sp_clock_calibrate_now() - calibrate the TSC at once (about 2 ms), for
 * users that need the final clock from their first timestamp on: hold
 * tracking and the trace.  Idempotent, any thread; the lazy calibration of
 * waits and this one publish the same state, whichever comes first.
 * Return: the mode now in force (SP_CLOCK_TSC, or SP_CLOCK_MONOTONIC when
 * the CPU has no invariant TSC).
 */
int sp_clock_calibrate_now(void);
/* "tsc" or "monotonic": the clock of the times reported. */
const char *sp_clock_name(void);
/* Ticks per second of the clock in force (1e9 for CLOCK_MONOTONIC). */
uint64_t sp_clock_ticks_per_sec(void);
/* CLOCK_MONOTONIC ns of a tick value read in the mode in force. */
uint64_t sp_clock_mono_ns(uint64_t tick);

/* The clock in force: the TSC once calibrated, CLOCK_MONOTONIC ns before. */
static inline uint64_t sp_clock_ticks(void)
{
	return sp_load_relaxed(&sp_clock_mode_now) == SP_CLOCK_TSC ? __builtin_ia32_rdtsc()
								     : sp_now_ns();
}

/* Nanoseconds in @dt ticks of the clock in force. */
static inline uint64_t sp_clock_ticks_to_ns(uint64_t dt)
{
	if (sp_load_relaxed(&sp_clock_mode_now) != SP_CLOCK_TSC)
		return dt;
	return (uint64_t)(((unsigned __int128)dt * sp_load_relaxed(&sp_tsc_mult)) >> 32);
}

/* Start timing a wait: the clock's mode is fixed for this wait. */
static inline uint64_t sp_wait_start(int *mode)
{
	*mode = sp_load_acquire(&sp_clock_mode_now);
	return *mode == SP_CLOCK_TSC ? __builtin_ia32_rdtsc() : sp_now_ns();
}

/*
 * Nanoseconds since sp_wait_start() returned @t0 with @mode: at least 1.
 * A wait that ended at once can read 0 or 2 ticks (rdtsc is not ordered
 * with the lock's own instructions; seen on the test VM, a few waits in
 * a thousand), and a wait of 0 ns would read as no wait at all: the trace
 * tells a contended acquisition from an uncontended one by its wait_ns
 * (format.h), and the HTML timeline drew such a wait that the trace's
 * acquisition then denied (tests/html_report.sh).
 */
static inline uint64_t sp_wait_ns(int mode, uint64_t t0)
{
	uint64_t now, ns;

	if (SP_LIKELY(mode == SP_CLOCK_TSC)) {
		uint64_t ticks = __builtin_ia32_rdtsc() - t0;

		ns = (uint64_t)(((unsigned __int128)ticks * sp_load_relaxed(&sp_tsc_mult)) >> 32);
		return ns ? ns : 1;
	}
	now = sp_now_ns();
	sp_clock_calibrate__slowpath(now);
	return now > t0 ? now - t0 : 1;
}

#endif /* SP_BASE_CLOCK_H */
