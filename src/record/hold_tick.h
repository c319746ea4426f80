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

/* Holds are timed (hold=1): the tick's first clock, and the ticker
 * thread started; 0 or a negative errno.  @activity: the held lists'
 * activity, a sum of their states (which change at every push and pop),
 * and *holding set when anything is held (hold.c's); the ticker idles
 * while it stays the same and nothing is held. */
int sp_hold_ticker_init(uint64_t (*activity)(int *holding));

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
