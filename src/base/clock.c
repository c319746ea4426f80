/*
 * clock.c - the clock that times lock waits.
 *
 * Design: a contended wait reads the clock twice, and the second read
 * happens after the lock was acquired - inside the critical section, where
 * every nanosecond delays the next waiter.  clock_gettime(CLOCK_MONOTONIC)
 * through the vDSO costs 22.5 ns on the CI machines, rdtsc 10 ns; with two
 * threads ping-ponging on one lock that difference was most of the
 * profiler's cost (lockbench -t 2: 0.78x plain throughput with
 * clock_gettime).  So waits are timed with the TSC when the CPU says it is
 * invariant (CPUID 0x80000007 EDX bit 8), converted to ns with a 32.32
 * fixed-point multiplier.
 *
 * Calibration is lazy, with no busy-waiting at start-up: waits are timed
 * with CLOCK_MONOTONIC until 20 ms have passed since the first one, then
 * the multiplier is computed from the (tsc, monotonic) pairs at both ends
 * (error ~ 50 ns read jitter / 20 ms = 2.5e-6) and published.  A wait reads
 * the mode once at its start and uses the same clock at its end, so no wait
 * mixes clocks.
 *
 * Hold tracking and the trace need the final clock from their first
 * timestamp (a hold's start, the trace header's rate), so they calibrate
 * at once when they start (sp_clock_calibrate_now(): bracketed points 2 ms
 * apart, each a TSC read between two monotonic reads no more than 1 us
 * apart, so a preemption cannot skew the rate).  Either way one state is
 * published: the rate, its origin, the mode.  This is the only
 * calibration of syncprof: waits, holds and the trace share it, so their
 * times cannot disagree.
 *
 * Alternatives considered: calibrating in the constructor (a busy 10 ms
 * start-up delay for every profiled program, also those that never
 * contend); recording raw ticks and converting at report time (the log2
 * histogram would then be in ticks, and its buckets could not be mapped
 * exactly onto ns buckets).
 */
#include <cpuid.h>

#include "base/clock.h"

enum { CAL_NONE = 0, CAL_STARTED, CAL_DONE, CAL_UNUSABLE };

int sp_clock_mode_now = SP_CLOCK_MONOTONIC;
uint64_t sp_tsc_mult; /* ns per tick, 32.32 fixed point */

static int cal_state;
static uint64_t cal_tsc0, cal_ns0;

#define CAL_WINDOW_NS 20000000ull

/* Two CPUID instructions, each a trap to the hypervisor in a VM (3.7 us
 * on the test VM): __get_cpuid() would add one more before each leaf. */
static int tsc_invariant(void)
{
	unsigned a, b, c, d;

	if (__get_cpuid_max(0x80000000, NULL) < 0x80000007)
		return 0;
	__cpuid(0x80000007, a, b, c, d);
	(void)a, (void)b, (void)c;
	return (d >> 8) & 1;
}

void sp_clock_calibrate__slowpath(uint64_t now_ns)
{
	int s = sp_load_acquire(&cal_state);

	if (s == CAL_NONE) {
		int expect = CAL_NONE;

		if (!tsc_invariant()) {
			sp_store_release(&cal_state, CAL_UNUSABLE);
			return;
		}
		/* Claim the start; the winner writes the pair, then publishes. */
		if (__atomic_compare_exchange_n(&cal_state, &expect, CAL_STARTED + 16, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			cal_tsc0 = __builtin_ia32_rdtsc();
			cal_ns0 = sp_now_ns();
			sp_store_release(&cal_state, CAL_STARTED);
		}
		return;
	}
	if (s == CAL_STARTED && now_ns - cal_ns0 >= CAL_WINDOW_NS) {
		int expect = CAL_STARTED;

		if (__atomic_compare_exchange_n(&cal_state, &expect, CAL_DONE + 16, 0,
						__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			uint64_t tsc1 = __builtin_ia32_rdtsc();
			uint64_t ns1 = sp_now_ns();
			uint64_t dt = tsc1 - cal_tsc0, dn = ns1 - cal_ns0;

			if (dt > dn / 16 && dn < (1ull << 31)) {
				sp_store_relaxed(&sp_tsc_mult, (dn << 32) / dt);
				sp_store_release(&sp_clock_mode_now, SP_CLOCK_TSC);
				sp_store_release(&cal_state, CAL_DONE);
			} else {
				sp_store_release(&cal_state, CAL_UNUSABLE);
			}
		}
	}
}

/*
 * One calibration point: a TSC read bracketed by two monotonic reads no
 * more than 1 us apart (retried, at most 64 times).  Unbracketed points
 * made hold ages drift by milliseconds under ThreadSanitizer's slowdown.
 */
static void calib_point(uint64_t *tick, uint64_t *ns)
{
	for (int i = 0; i < 64; i++) {
		uint64_t a = sp_now_ns(), t = __builtin_ia32_rdtsc(), b = sp_now_ns();

		*tick = t;
		*ns = a + (b - a) / 2;
		if (b - a <= 1000)
			return;
	}
}

int sp_clock_calibrate_now(void)
{
	for (;;) {
		int s = sp_load_acquire(&cal_state);
		uint64_t t0, n0, t1, n1;

		if (s == CAL_DONE || s == CAL_UNUSABLE)
			return sp_load_acquire(&sp_clock_mode_now);
		if (s >= 16) /* another claim is being written: wait for it */
			continue;
		if (!tsc_invariant()) {
			sp_store_release(&cal_state, CAL_UNUSABLE);
			continue;
		}
		/* Claim from CAL_NONE or CAL_STARTED: a lazy calibration under
		 * way loses its claim and finds the state DONE. */
		if (!__atomic_compare_exchange_n(&cal_state, &s, CAL_DONE + 16, 0, __ATOMIC_ACQ_REL,
						 __ATOMIC_ACQUIRE))
			continue;
		calib_point(&t0, &n0);
		do
			calib_point(&t1, &n1);
		while (n1 - n0 < 2000000);
		if (t1 - t0 > (n1 - n0) / 16) {
			cal_tsc0 = t0;
			cal_ns0 = n0;
			sp_store_relaxed(&sp_tsc_mult, ((n1 - n0) << 32) / (t1 - t0));
			sp_store_release(&sp_clock_mode_now, SP_CLOCK_TSC);
			sp_store_release(&cal_state, CAL_DONE);
		} else {
			sp_store_release(&cal_state, CAL_UNUSABLE);
		}
	}
}

uint64_t sp_clock_ticks_per_sec(void)
{
	uint64_t mult = sp_load_relaxed(&sp_tsc_mult);

	if (sp_load_acquire(&sp_clock_mode_now) != SP_CLOCK_TSC || !mult)
		return 1000000000u;
	return (uint64_t)(((unsigned __int128)1000000000u << 32) / mult);
}

uint64_t sp_clock_mono_ns(uint64_t tick)
{
	if (sp_load_acquire(&sp_clock_mode_now) != SP_CLOCK_TSC)
		return tick;
	return cal_ns0 + sp_clock_ticks_to_ns(tick - cal_tsc0);
}

const char *sp_clock_name(void)
{
	return sp_load_relaxed(&sp_clock_mode_now) == SP_CLOCK_TSC ? "tsc" : "monotonic";
}
