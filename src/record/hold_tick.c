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
 * Two modes (hold_clock=, issue 25 part 4).  Tick mode is the above: a
 * hold costs the tick's load and store, and the ticker 2,000 wakes a
 * second (13-50 us of CPU each on this project's VMs: 2-6% of a core).
 * In clock mode every hold is timed by the clock (sp_hold_rate.below =
 * SP_HOLD_BELOW_ALL: the sampled push, about 25 ns a lock+unlock more),
 * each stands for itself (weight 1: hold.c counts one of 250 us or more
 * as long by its own length), and the tick bounds nothing, so it moves
 * every CLOCK_TICK_NS (20 ms).  hold_clock=auto picks the cheaper: from
 * the held lists' activity over RATE_WINDOW_NS, clock mode below
 * CLOCK_ENTER_RATE holds a second, tick mode above CLOCK_LEAVE_RATE
 * (at 800,000 holds a second the clocks cost about 2% of a core); a
 * thread whose clock-mode holds come faster than that wakes the ticker
 * at once (sp_hold_clock_burst(): the ticker sleeps on a futex).  It
 * starts in clock mode.  Clock mode still ticks every 500 us: while an
 * untimed hold is held (pushed by a thread that read the rate before the
 * switch), for CLOCK_GRACE ticks after a switch, and, with hold states,
 * for a second after a hold older than their threshold was seen or ended
 * unsampled (so that their samples begin at its first millisecond; the
 * first such hold after a quiet second is first sampled up to 20 ms
 * late).  Limit: a thread preempted for more than the grace ticks between
 * its load of the rate and its push can push an untimed hold the slow
 * tick then bounds by 20 ms ticks.
 *
 * The ticker asks for SCHED_FIFO (a starved ticker bounds holds loosely)
 * and measures its own lateness: gaps over SP_HOLD_LATE_NS after a tick
 * that asked for 500 us are counted with the longest, and reports say so.
 */
#include <errno.h>
#include <linux/futex.h>
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
#define TICK_RING 4096                /* clocks of the last ticks: 2 s */
#define TICK_IDLE_AFTER 200           /* quiet ticks (100 ms) before the ticker idles */
#define TICK_IDLE_NS 20000000         /* its period meanwhile */
#define CLOCK_TICK_NS 20000000ull     /* its period in clock mode */
#define CLOCK_GRACE 4                 /* ticks at 500 us after clock mode begins */
#define RATE_WINDOW_NS 20000000ull    /* the hold rate, taken over at least 20 ms */
#define CLOCK_ENTER_RATE 400000ull    /* holds a second below which clock mode begins */
#define CLOCK_LEAVE_RATE 800000ull    /* ... and above which it ends */
#define CLOCK_BURST_N (SP_HOLD_CLOCK_BURST_MASK + 1ull) /* a thread's timed holds per check */

uint64_t sp_hold_tick __attribute__((aligned(64)));
/* Gaps between ticks longer than SP_HOLD_LATE_NS while the ticker was
 * active (not idling) are counted with the longest (ns): in such a gap a
 * hold up to the gap plus SP_HOLD_LONG_LO_NS long can begin and end
 * without seeing the tick move, and count as short: reports say so. */
#define SP_HOLD_LATE_NS (SP_HOLD_LONG_NS - SP_HOLD_LONG_LO_NS)
/* Written by the ticker (its clocks, its late ticks, its mode) and by
 * whoever starts it (the rest). */
static struct {
	uint64_t clock[TICK_RING]; /* clock (ticks()) of tick k at [k % TICK_RING] */
	uint64_t long_lo_ticks;    /* SP_HOLD_LONG_LO_NS in clock ticks */
	int running;               /* in this process */
	uint64_t late, gap_max_ns;
	void (*activity)(struct sp_hold_activity *a); /* set before the ticker starts */
	int policy;                /* SP_HOLD_CLOCK_* */
	uint64_t below_tick;       /* sp_hold_rate.below of tick mode */
	int clock_mode;            /* every hold timed: sp_hold_rate.below is SP_HOLD_BELOW_ALL */
	unsigned grace;            /* ticks at 500 us still due after clock mode began */
	int slow;                  /* the present period is longer than 500 us */
	int unwatched;             /* a long hold ended unsampled meanwhile */
	uint64_t watch_until;      /* clock until which clock mode ticks at 500 us */
	uint64_t clock_ticks;      /* clock ticks in clock mode while profiling */
	uint64_t burst_ticks;      /* CLOCK_BURST_N holds at CLOCK_LEAVE_RATE, in clock ticks */
	uint32_t wake;             /* futex word of the ticker's sleep */
	int burst;                 /* a thread asks for tick mode (sp_hold_clock_burst()) */
	uint64_t switches;         /* into clock mode and out, after start-up */
} ticker SP_LARGE;

int sp_hold_ticker_wanted; /* hold_tick.h */

/* Called by the ticker at each tick, @holding when something is held: the
 * hold states' sampler (holdstate.c), installed by the runtime at start-up
 * (sp_hold_set_tick_hook()), before the ticker starts; it returns when
 * its next sample is due (ns; 0: no hold is long). */
static uint64_t (*tick_hook)(uint64_t tick, int holding);

void sp_hold_set_tick_hook(uint64_t (*hook)(uint64_t tick, int holding))
{
	tick_hook = hook;
}

uint64_t sp_hold_long_lo_ticks(void)
{
	return ticker.long_lo_ticks;
}

/* hold_tick.h: the ticker sleeps up to 20 ms in clock mode, and a burst
 * of holds that begins meanwhile would all be timed until it wakes; a
 * thread whose CLOCK_BURST_N timed holds came faster than
 * CLOCK_LEAVE_RATE wakes it now (one futex call a burst). */
void sp_hold_clock_burst(struct sp_hold_pub *p, uint64_t t0)
{
	uint64_t last = p->clock_t0;

	p->clock_t0 = t0;
	if (!last || t0 < last || t0 - last >= ticker.burst_ticks ||
	    ticker.policy != SP_HOLD_CLOCK_AUTO || !sp_load_relaxed(&ticker.clock_mode) ||
	    __atomic_exchange_n(&ticker.burst, 1, __ATOMIC_ACQ_REL))
		return;
	__atomic_add_fetch(&ticker.wake, 1, __ATOMIC_RELEASE);
	sp_futex(&ticker.wake, FUTEX_WAKE_PRIVATE, 1, NULL);
}

/* Until the absolute deadline @next (CLOCK_MONOTONIC), or a burst: then
 * the deadline becomes now. */
static void ticker_sleep(struct timespec *next)
{
	for (;;) {
		uint32_t w = sp_load_acquire(&ticker.wake);
		struct timespec now, rel;

		clock_gettime(CLOCK_MONOTONIC, &now);
		if (sp_load_acquire(&ticker.burst)) {
			if (now.tv_sec < next->tv_sec ||
			    (now.tv_sec == next->tv_sec && now.tv_nsec < next->tv_nsec))
				*next = now;
			return;
		}
		rel.tv_sec = next->tv_sec - now.tv_sec;
		rel.tv_nsec = next->tv_nsec - now.tv_nsec;
		if (rel.tv_nsec < 0) {
			rel.tv_nsec += 1000000000;
			rel.tv_sec--;
		}
		if (rel.tv_sec < 0)
			return;
		sp_futex(&ticker.wake, FUTEX_WAIT_PRIVATE, w, &rel);
	}
}

/* Into clock mode (every hold timed, by the clock) or out of it.  The
 * pushes that read the rate before the store still push untimed holds:
 * the grace ticks, and the untimed holds the ticker sees after them, keep
 * the tick at 500 us for those. */
static void set_clock_mode(int on)
{
	sp_store_relaxed(&sp_hold_rate.below, on ? SP_HOLD_BELOW_ALL : ticker.below_tick);
	if (on)
		ticker.grace = CLOCK_GRACE;
	sp_store_relaxed(&ticker.clock_mode, on);
	sp_store_relaxed(&ticker.switches, ticker.switches + 1);
}

/* hold_clock=auto: clock mode while fewer than CLOCK_ENTER_RATE holds a
 * second begin (over RATE_WINDOW_NS or more), until more than
 * CLOCK_LEAVE_RATE do.  A push and a pop each add 2 << 32 to the sum. */
static void pick_mode(const struct sp_hold_activity *a, uint64_t now, uint64_t *win_t,
		      uint64_t *win_sum)
{
	uint64_t dt, rate;
	int want;

	if (ticker.policy != SP_HOLD_CLOCK_AUTO)
		return;
	if (sp_load_acquire(&ticker.burst)) {
		/* A new window from now, in tick mode. */
		if (ticker.clock_mode)
			set_clock_mode(0);
		sp_store_release(&ticker.burst, 0);
		*win_t = now;
		*win_sum = a->sum;
		return;
	}
	dt = *win_t && now > *win_t ? ticks_to_ns(now - *win_t) : 0;
	if (!*win_t || dt >= RATE_WINDOW_NS) {
		rate = dt ? ((a->sum - *win_sum) >> 34) * 1000000000ull / dt : 0;
		want = ticker.clock_mode ? rate <= CLOCK_LEAVE_RATE : rate < CLOCK_ENTER_RATE;
		if (*win_t && want != ticker.clock_mode)
			set_clock_mode(want);
		*win_t = now;
		*win_sum = a->sum;
	}
}

/* The hold states' threshold (hold_states=MS), 0 when they are off. */
static uint64_t watch_ns(void)
{
	return tick_hook ? (uint64_t)sp_holdstate_long_ticks * SP_HOLD_TICK_NS : 0;
}

/* hold_tick.h */
void sp_hold_ticker_long_ended(uint64_t ns)
{
	uint64_t w = watch_ns();

	if (w && ns >= w && sp_load_relaxed(&ticker.slow) && !sp_load_relaxed(&ticker.unwatched))
		sp_store_relaxed(&ticker.unwatched, 1);
}

/* The next period: 500 us in tick mode; in clock mode 20 ms, but 500 us
 * while an untimed hold is held (taken before the mode changed) and
 * during the grace ticks.  With hold states (their samples come at the
 * tick, holdstate.c): while a hold is long, when its next sample is due
 * (@due: every ms at first, then ever sparser, holdstate.c); 500 us while
 * a hold is older than their threshold but not yet long in ticks, and for
 * a second after a long hold was held or ended between two slow ticks,
 * unsampled: a program whose holds are often long has them sampled from
 * their first millisecond, as in tick mode; the first of them after a
 * quiet second is first sampled up to a slow tick late. */
static uint64_t next_period(const struct sp_hold_activity *a, uint64_t now, uint64_t due)
{
	uint64_t w = watch_ns();

	if (!ticker.clock_mode)
		return SP_HOLD_TICK_NS;
	if (sp_load_relaxed(&ticker.unwatched)) {
		sp_store_relaxed(&ticker.unwatched, 0);
		ticker.watch_until = now + sp_clock_ticks_per_sec(); /* a second */
	}
	if (ticker.grace) {
		ticker.grace--;
		return SP_HOLD_TICK_NS;
	}
	if (a->untimed)
		return SP_HOLD_TICK_NS;
	if (due) {
		ticker.watch_until = now + sp_clock_ticks_per_sec();
		return due < SP_HOLD_TICK_NS ? SP_HOLD_TICK_NS : due > CLOCK_TICK_NS ? CLOCK_TICK_NS : due;
	}
	if (now < ticker.watch_until)
		return SP_HOLD_TICK_NS;
	if (w && a->oldest_ns) {
		uint64_t now_ns = sp_clock_mono_ns(now);

		if (now_ns > a->oldest_ns && now_ns - a->oldest_ns >= w) {
			ticker.watch_until = now + sp_clock_ticks_per_sec();
			return SP_HOLD_TICK_NS;
		}
	}
	return CLOCK_TICK_NS;
}

static void *ticker_main(void *arg)
{
	struct timespec next;
	struct sched_param sp = { .sched_priority = 1 };
	uint64_t last_activity = 0, late_ticks = 0, prev = 0, win_t = 0, win_sum = 0;
	unsigned quiet = 0;
	int was_fast = 0;

	(void)arg;
	/* Punctual ticks make tight bounds: real-time priority when allowed
	 * (it runs a few microseconds a tick), no timer slack. */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp);
	prctl(PR_SET_TIMERSLACK, 1UL, 0, 0, 0);
	clock_gettime(CLOCK_MONOTONIC, &next);
	for (;;) {
		uint64_t k = sp_load_relaxed(&sp_hold_tick) + 1, now = ticks(), period, due;
		struct sp_hold_activity a = { 0 };

		/* The clock of tick k before k itself: a reader that sees k
		 * (acquire) sees its clock. */
		sp_store_relaxed(&ticker.clock[k % TICK_RING], now);
		sp_store_release(&sp_hold_tick, k);
		/* Late (starved of CPU: no real-time priority and busy cores,
		 * a stopped VM, a throttled cgroup)?  Only after a tick that
		 * asked for 500 us: an idle period's or clock mode's long gap
		 * is by design.  Not while profiling is off: no hold is
		 * measured then, and the reports of a stopped profile must
		 * stay as they were (rerender compares two). */
		if (prev && now > prev && ticker.clock_mode &&
		    (sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING))
			sp_store_relaxed(&ticker.clock_ticks, ticker.clock_ticks + (now - prev));
		if (was_fast && prev && now > prev &&
		    (sp_load_relaxed(&syncprof__enabled) & SYNCPROF__PROFILING)) {
			uint64_t gap = ticks_to_ns(now - prev);

			if (gap > SP_HOLD_LATE_NS) {
				sp_store_relaxed(&ticker.late, ++late_ticks);
				if (gap > sp_load_relaxed(&ticker.gap_max_ns))
					sp_store_relaxed(&ticker.gap_max_ns, gap);
			}
		}
		prev = now;
		ticker.activity(&a);
		/* What the threads that hold a lock long are doing. */
		due = tick_hook ? tick_hook(k, a.holding) : 0;
		pick_mode(&a, now, &win_t, &win_sum);
		/* Idle: nothing held and no push or pop for TICK_IDLE_AFTER
		 * ticks; then tick every TICK_IDLE_NS until there is. */
		quiet = a.holding || a.sum != last_activity ? 0 : quiet + 1;
		last_activity = a.sum;
		period = quiet >= TICK_IDLE_AFTER ? TICK_IDLE_NS : next_period(&a, now, due);
		was_fast = period == SP_HOLD_TICK_NS;
		sp_store_relaxed(&ticker.slow, period > SP_HOLD_TICK_NS);
		next.tv_nsec += (long)period;
		while (next.tv_nsec >= 1000000000) {
			next.tv_nsec -= 1000000000;
			next.tv_sec++;
		}
		/* Absolute deadlines: lateness does not accumulate. */
		ticker_sleep(&next);
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

void sp_hold_clock_mode(uint64_t *ns, uint64_t *switches)
{
	*ns = ticks_to_ns(sp_load_relaxed(&ticker.clock_ticks));
	*switches = sp_load_relaxed(&ticker.switches);
}

int sp_hold_ticker_init(void (*activity)(struct sp_hold_activity *a), int policy)
{
	ticker.activity = activity;
	ticker.long_lo_ticks = sp_clock_ticks_per_sec() * SP_HOLD_LONG_LO_NS / 1000000000ull;
	ticker.burst_ticks = sp_clock_ticks_per_sec() * CLOCK_BURST_N / CLOCK_LEAVE_RATE;
	/* Every hold timed already (hold_sample=1): nothing for the tick to
	 * bound, clock mode throughout. */
	ticker.below_tick = sp_load_relaxed(&sp_hold_rate.below);
	ticker.policy = ticker.below_tick == SP_HOLD_BELOW_ALL ? SP_HOLD_CLOCK_CLOCK : policy;
	/* Before the first hold: no untimed hold to wait for. */
	if (ticker.policy != SP_HOLD_CLOCK_TICK) {
		set_clock_mode(1);
		ticker.grace = 0;
		ticker.switches = 0;
	}
	/* Tick 1 is struck now, so that a hold begun before the ticker's
	 * first tick has a start to be bounded from (and be long). */
	if (!sp_load_relaxed(&sp_hold_tick)) {
		sp_store_relaxed(&ticker.clock[1], ticks());
		sp_store_release(&sp_hold_tick, 1);
	}
	return ticker_start();
}
