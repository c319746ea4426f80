/*
 * hold_tick.c - the hold tick (hold.h, sp_hold_tick): the coarse clock
 * that every push stamps and every pop compares, so that a hold is timed
 * only when it saw the tick move (hold.c says why and how).
 *
 * Design.  One thread per process ("syncprof-tick", started when holds
 * are timed, or by a fork child's first timed hold) advances the tick
 * every SP_HOLD_TICK_NS (500 us) at absolute deadlines and notes each
 * tick's clock in a ring of the last TICK_RING ticks (2 s), clock first,
 * then the tick (release): a reader that sees tick k sees its clock.  A
 * hold stamped with tick a and ended at clock now is long when at least
 * SP_HOLD_LONG_LO_NS (250 us) lie between the tick after a and now
 * (sp_hold_is_long(), which also gives the middle of where it began): a
 * hold of 1 ms or more always is, while the ticker keeps time.  While
 * nothing is held and the held lists do not change for TICK_IDLE_AFTER
 * ticks (100 ms), it ticks every 20 ms.  At each tick it calls the hold
 * states' sampler (holdstate.c) through the tick hook.
 *
 * Cost: about 2,000 wakes a second while locks are held (a wake costs
 * 13-30 us of CPU on this project's VMs, up to ~5% of a core);
 * docs/hold-states.md, "Cost", says why the rate cannot come down while
 * the accuracy stays.  It asks for SCHED_FIFO (a starved ticker bounds
 * holds loosely) and measures its own lateness: gaps over SP_HOLD_LATE_NS
 * while active are counted with the longest, and reports say so.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include "record/hold.h"
#include "record/hold_tick.h"
#include "record/registry.h"

/* The one clock (base/clock.c), calibrated at once by sp_hold_init(): a
 * hold's start must be in the final clock. */
static SP_ALWAYS_INLINE uint64_t ticks(void)
{
	return sp_clock_ticks();
}

static uint64_t ticks_to_ns(uint64_t t)
{
	return sp_clock_ticks_to_ns(t);
}

#define SP_HOLD_TICK_NS 500000ull     /* the ticker's period */
#define SP_HOLD_LONG_LO_NS 250000ull  /* a hold at least this long after a tick is long */
#define TICK_RING 4096                /* clocks of the last ticks: 2 s */
#define TICK_IDLE_AFTER 200           /* quiet ticks (100 ms) before the ticker idles */
#define TICK_IDLE_NS 20000000         /* its period meanwhile */

uint64_t sp_hold_tick __attribute__((aligned(64)));
/* Gaps between ticks longer than SP_HOLD_LATE_NS while the ticker was
 * active (not idling) are counted with the longest (ns): in such a gap a
 * hold up to the gap plus SP_HOLD_LONG_LO_NS long can begin and end
 * without seeing the tick move, and count as short: reports say so. */
#define SP_HOLD_LATE_NS (SP_HOLD_LONG_NS - SP_HOLD_LONG_LO_NS)
/* Written by the ticker (its clocks, its late ticks) and by whoever
 * starts it (long_lo_ticks, running, wanted). */
static struct {
	uint64_t clock[TICK_RING]; /* clock (ticks()) of tick k at [k % TICK_RING] */
	uint64_t long_lo_ticks;    /* SP_HOLD_LONG_LO_NS in clock ticks */
	int running;               /* in this process */
	uint64_t late, gap_max_ns;
	uint64_t (*activity)(int *holding); /* set before the ticker starts */
} ticker SP_LARGE;

int sp_hold_ticker_wanted; /* hold_tick.h */

/* Called by the ticker at each tick, @holding when something is held: the
 * hold states' sampler (holdstate.c), installed by the runtime at start-up
 * (sp_hold_set_tick_hook()), before the ticker starts. */
static void (*tick_hook)(uint64_t tick, int holding);

void sp_hold_set_tick_hook(void (*hook)(uint64_t tick, int holding))
{
	tick_hook = hook;
}

static void *ticker_main(void *arg)
{
	struct timespec next;
	struct sched_param sp = { .sched_priority = 1 };
	uint64_t last_activity = 0, late_ticks = 0, prev = 0;
	unsigned quiet = 0, was_idle = 1;

	(void)arg;
	/* Punctual ticks make tight bounds: real-time priority when allowed
	 * (it runs a few microseconds a tick), no timer slack. */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		uint64_t k = sp_load_relaxed(&sp_hold_tick) + 1, activity, now = ticks();
		int holding = 0;

		/* The clock of tick k before k itself: a reader that sees k
		 * (acquire) sees its clock. */
		sp_store_relaxed(&ticker.clock[k % TICK_RING], now);
		sp_store_release(&sp_hold_tick, k);
		/* Late (starved of CPU: no real-time priority and busy cores,
		 * a stopped VM, a throttled cgroup)?  Not after an idle period,
		 * whose long gap is by design, and not while profiling is off:
		 * no hold is measured then, and the reports of a stopped
		 * profile must stay as they were (rerender compares two). */
		if (!was_idle && prev && now > prev &&
		    (sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING)) {
			uint64_t gap = ticks_to_ns(now - prev);

			if (gap > SP_HOLD_LATE_NS) {
				sp_store_relaxed(&ticker.late, ++late_ticks);
				if (gap > sp_load_relaxed(&ticker.gap_max_ns))
					sp_store_relaxed(&ticker.gap_max_ns, gap);
			}
		}
		prev = now;
		/* Idle: nothing held and no push or pop for TICK_IDLE_AFTER
		 * ticks; then tick every TICK_IDLE_NS until there is. */
		activity = ticker.activity(&holding);
		/* What the threads that hold a lock long are doing. */
		if (tick_hook)
			tick_hook(k, holding);
		quiet = holding || activity != last_activity ? 0 : quiet + 1;
		last_activity = activity;
		was_idle = quiet >= TICK_IDLE_AFTER;
		next.tv_nsec += was_idle ? TICK_IDLE_NS : SP_HOLD_TICK_NS;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		/* Absolute deadlines: lateness does not accumulate. */
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &next, NULL) == EINTR)
			;
	}
	return NULL;
}

/* Start the ticker; 0 or a negative errno.  Signals blocked, so that it
 * never runs a handler of the program; detached: it runs until exit. */
static int ticker_start(void)
{
	int rc;

	if (__atomic_exchange_n(&ticker.running, 1, __ATOMIC_ACQ_REL))
		return 0;
	rc = sp_start_detached(ticker_main, 64 * 1024, "syncprof-tick");
	if (rc)
		sp_store_release(&ticker.running, 0);
	return -rc;
}

/* A fork child's ticker, started by its first timed hold (a child that
 * only execs never starts a thread).  Its own lock calls pass unrecorded. */
SP_NOINLINE void sp_hold_ticker_start__slowpath(void)
{
	struct sp_thread *saved;

	if (!__atomic_exchange_n(&sp_hold_ticker_wanted, 0, __ATOMIC_ACQ_REL))
		return;
	saved = sp_thread_enter();
	ticker_start();
	sp_thread_leave(saved);
}

uint64_t sp_hold_tick_age_ns(uint64_t a)
{
	uint64_t r = sp_load_acquire(&sp_hold_tick), now = ticks(), t_a;

	if (!a || a > r)
		return 0;
	if (r - a >= TICK_RING - 2)
		return (r - a) * SP_HOLD_TICK_NS;
	t_a = sp_load_relaxed(&ticker.clock[a % TICK_RING]);
	return now > t_a ? ticks_to_ns(now - t_a) : 0;
}

/* hold_tick.h */
int sp_hold_is_long(uint64_t a, uint64_t now, uint64_t *start)
{
	uint64_t r = sp_load_acquire(&sp_hold_tick), t_a, t_a1;

	if (r == a || !a)
		return 0; /* no tick since (or no ticker when it began) */
	if (r - a < TICK_RING - 2) {
		t_a = sp_load_relaxed(&ticker.clock[a % TICK_RING]);
		t_a1 = sp_load_relaxed(&ticker.clock[(a + 1) % TICK_RING]);
		/* Still the ticks a and a + 1 (not overwritten meanwhile)? */
		if (sp_load_acquire(&sp_hold_tick) - a < TICK_RING - 2) {
			*start = t_a + (t_a1 - t_a) / 2;
			return now > t_a1 && now - t_a1 >= ticker.long_lo_ticks;
		}
		r = sp_load_acquire(&sp_hold_tick);
	}
	{
		uint64_t oldest = r - (TICK_RING - 3);
		uint64_t t_old = sp_load_relaxed(&ticker.clock[oldest % TICK_RING]);
		uint64_t t_r = sp_load_relaxed(&ticker.clock[r % TICK_RING]);
		uint64_t period = t_r > t_old ? (t_r - t_old) / (TICK_RING - 3) : 0;
		uint64_t back = (oldest - a) * period + period / 2;

		*start = t_old > back ? t_old - back : 0;
	}
	return 1;
}

void sp_hold_ticker_lateness(uint64_t *late_ticks, uint64_t *gap_max_ns)
{
	*late_ticks = sp_load_relaxed(&ticker.late);
	*gap_max_ns = sp_load_relaxed(&ticker.gap_max_ns);
}

/* The ticker is the parent's: the child's own starts with its first
 * timed hold (sp_hold_acquired()). */
void sp_hold_ticker_fork_child(void)
{
	if (sp_load_relaxed(&ticker.running)) {
		sp_store_relaxed(&ticker.running, 0);
		sp_store_release(&sp_hold_ticker_wanted, 1);
	}
}

int sp_hold_ticker_init(uint64_t (*activity)(int *holding))
{
	ticker.activity = activity;
	ticker.long_lo_ticks = sp_clock_ticks_per_sec() * SP_HOLD_LONG_LO_NS / 1000000000ull;
	/* Tick 1 is struck now, so that a hold begun before the ticker's
	 * first tick has a start to be bounded from (and be long). */
	if (!sp_load_relaxed(&sp_hold_tick)) {
		sp_store_relaxed(&ticker.clock[1], ticks());
		sp_store_release(&sp_hold_tick, 1);
	}
	return ticker_start();
}
