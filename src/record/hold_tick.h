/*
 * hold_tick.h - the hold ticker (hold_tick.c) as hold.c uses it: start
 * it, start a fork child's lazily, tell a long hold from a short one.
 * Private to src/record (hold.c).
 */
#ifndef SP_RECORD_HOLD_TICK_H
#define SP_RECORD_HOLD_TICK_H

#include <stdint.h>

#include "base/base.h"

#define SP_HOLD_LONG_NS 1000000ull /* a hold this long arms its lock's countdown */
#define SP_HOLD_LONG_COUNTDOWN 511 /* acquisitions timed after it (9 bits, hold.h) */

#define SP_HOLD_LONG_LO_NS 250000ull /* at least this long after a tick: long */

/* What the held lists show at a tick (hold.c, pubs_activity()). */
struct sp_hold_activity {
	uint64_t sum;       /* of their states, which change at every push and pop */
	int holding;        /* a live thread holds a lock */
	int untimed;        /* ... one whose hold is not timed */
	uint64_t oldest_ns; /* the start of the oldest timed hold held (0: none) */
};

/* Holds are timed (hold=1): the tick's first clock, and the ticker
 * thread started; 0 or a negative errno.  @activity: fills a zeroed
 * struct sp_hold_activity (hold.c's); the ticker idles while the sum
 * stays the same and nothing is held, and picks tick or clock mode
 * (hold_tick.c) from how fast it moves.  @policy: SP_HOLD_CLOCK_*
 * (record.h, hold_clock=). */
int sp_hold_ticker_init(void (*activity)(struct sp_hold_activity *a), int policy);

/* A hold timed at @ns ended: one past the hold states' threshold that
 * ended between two of clock mode's slow ticks went unsampled, and the
 * ticker ticks every 500 us for a while (hold_tick.c). */
void sp_hold_ticker_long_ended(uint64_t ns);

/* Clock mode's timed push, on every CLOCK_BURST_N-th of thread @p's
 * (SP_HOLD_CLOCK_BURST_MASK): its clock @t0 against the last such one's;
 * a burst of holds wakes the ticker into tick mode at once. */
#define SP_HOLD_CLOCK_BURST_MASK 4095u
struct sp_hold_pub;
void sp_hold_clock_burst(struct sp_hold_pub *p, uint64_t t0);

/* SP_HOLD_LONG_LO_NS in clock ticks (sp_clock_ticks()). */
uint64_t sp_hold_long_lo_ticks(void);

/* A fork child's ticker: wanted (the atfork handler), started by the
 * child's first timed hold. */
void sp_hold_ticker_fork_child(void);
extern int sp_hold_ticker_wanted;
void sp_hold_ticker_start__slowpath(void);
static inline void sp_hold_ticker_start_lazy(void)
{
	if (SP_UNLIKELY(sp_load_relaxed(&sp_hold_ticker_wanted)))
		sp_hold_ticker_start__slowpath();
}

/*
 * A hold stamped with tick @a, ended at clock @now (sp_clock_ticks()): 1
 * when it is long (since the tick after @a, at least 250 us went by),
 * with *start the middle of when it can have begun (between the clocks
 * of tick @a and of the next one); 0 when it can be short.  Ticks older
 * than the ring: the hold is long (> 2 s), its start extrapolated from
 * the ring's oldest tick at the ring's mean period.
 */
int sp_hold_is_long(uint64_t a, uint64_t now, uint64_t *start);

#endif /* SP_RECORD_HOLD_TICK_H */
