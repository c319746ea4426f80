/*
 * hold_clock.c - the hold ticker's two modes (src/record/hold_tick.c):
 * with hold_clock=auto, a program whose lock rate changes has its holds
 * timed in clock mode (every hold read from the clock, the ticker asleep
 * for 20 ms at a time) while holds are few, and by the 500 us tick while
 * they are many; the long holds of each phase must be measured all the
 * same, and the hold states of a long hold in clock mode sampled.
 *
 * Phases, each lock at its own call site:
 *   1. two threads take lock S in a tight loop for 150 ms (millions of
 *      holds a second: tick mode);
 *   2. 150 ms without a lock, then lock Y held 2 ms, twenty times, 3 ms
 *      apart (a few hundred holds a second: clock mode), lock Q taken for
 *      a short hold 200 times, 100 us apart, then lock W held 30 ms
 *      across a sleep, five times (hold states sample it);
 *   3. the tight loop again, in one thread, and 50 ms later the main
 *      thread holds lock Z 3 ms, ten times, 2 ms apart.
 * Checks, on the JSON report: the ticker switched modes at least twice
 * (hold_clock_switches: into tick mode for phase 1, back to clock mode
 * for phase 2) and spent time in clock mode (hold_clock_ns); Y's, W's
 * and Z's hold_ns within 10% of the program's own measurement (the
 * bracket of known_holds.c); W's row has hold states ("hold_states");
 * in clock mode every one of Q's holds was timed and stands for itself:
 * its hold histogram ("hold_buckets", weighted by the holds a timed one
 * stands for) counts exactly 200 (the tick's sample, one in n/4+1 with
 * that weight, makes 200 only by chance).
 * With the argument "sparse", V's 400 ms hold alone: hold states sample a
 * holder every ms for 16 ms, then every 1/16 of its hold's age, at most
 * 20 ms apart (holdstate.c): about 50-70 samples, where one a millisecond
 * made about 400; hold_state_samples must lie between 20 and 150 (a late
 * ticker makes fewer, never more), and V's hold be measured.
 * With hold_clock=tick (argument "tick") the ticker never switches:
 * hold_clock_ns and hold_clock_switches are absent, the totals the same.
 * A late ticker excuses a miss as in known_holds.c.  Exit 1 on failure.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json_report.h"
#include "../now_ns.h"

static pthread_mutex_t lock_s = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_y = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_w = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_z = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_q = PTHREAD_MUTEX_INITIALIZER;
static pthread_mutex_t lock_v = PTHREAD_MUTEX_INITIALIZER;
static volatile int stop;
static volatile unsigned long sink;

struct truth {
	const char *name;
	pthread_mutex_t *m;
	uint64_t inner, outer;
};

static void *spin(void *arg)
{
	(void)arg;
	while (!stop) {
		pthread_mutex_lock(&lock_s);
		sink++;
		pthread_mutex_unlock(&lock_s);
	}
	return NULL;
}

static void spin_for(int threads, uint64_t ns)
{
	pthread_t t[2];

	stop = 0;
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, spin, NULL);
	sleep_ns(ns);
	stop = 1;
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
}

/* @n holds of @tr's lock, @ns each, @gap apart, measured. */
static void holds(struct truth *tr, int n, uint64_t ns, uint64_t gap)
{
	for (int i = 0; i < n; i++) {
		uint64_t t0 = now_ns(), t1, t2;

		pthread_mutex_lock(tr->m);
		t1 = now_ns();
		sleep_ns(ns);
		t2 = now_ns();
		pthread_mutex_unlock(tr->m);
		tr->inner += t2 - t1;
		tr->outer += now_ns() - t0;
		sleep_ns(gap);
	}
}

/* The sum of the counts of the hold histogram of the row at @row. */
static long long hist_count(const char *row)
{
	const char *end = json_row_end(row), *p = strstr(row, "\"hold_buckets\":[");
	long long n = 0;

	if (!p || (end && p > end))
		return -1;
	p += strlen("\"hold_buckets\":[");
	while (*p == '[') {
		long long bucket, count;
		int used = 0;

		if (sscanf(p, "[%lld,%lld]%n", &bucket, &count, &used) != 2 || !used)
			return -1;
		n += count;
		p += used;
		if (*p == ',')
			p++;
	}
	return n;
}

/* The sum of hold_ns over @m's rows. */
static long long hold_ns_of(const char *json, pthread_mutex_t *m, const char **row_out)
{
	long long sum = 0;

	*row_out = NULL;
	for (const char *row = json_object_row(json, m); row; row = json_object_row(row + 1, m)) {
		const char *start = row, *end;
		long long ns;

		/* json_object_row() finds the object's key; its row starts at
		 * the "{\"type\"" before it. */
		while (start > json && strncmp(start, "{\"type\"", 7))
			start--;
		end = json_row_end(start);
		ns = json_row_value(start, end, "hold_ns");
		if (ns > 0)
			sum += ns;
		if (!*row_out)
			*row_out = start;
	}
	return sum;
}

/* In clock mode each of Q's 200 holds is timed, with a weight of 1. */
static int check_q(const char *json)
{
	const char *row;
	long long n;

	hold_ns_of(json, &lock_q, &row);
	n = row ? hist_count(row) : -1;
	printf("hold_clock: Q's holds in its histogram: %lld of 200\n", n);
	if (n == 200)
		return 0;
	fprintf(stderr, "hold_clock: FAIL: in clock mode each of Q's 200 holds is timed, with a "
			"weight of 1\n");
	return 1;
}

/* "sparse": one hold of 400 ms, and how often its holder was sampled. */
static int sparse(void)
{
	struct truth v = { "V", &lock_v, 0, 0 };
	const char *row;
	long long samples, ns;
	char *json;
	int failed = 0;

	holds(&v, 1, 400000000, 0);
	json = json_report("hold_clock");
	samples = json_row_value(json, NULL, "hold_state_samples");
	ns = hold_ns_of(json, &lock_v, &row);
	printf("hold_clock: one hold of %" PRIu64 " ns, measured %lld, %lld hold-state samples\n",
	       v.inner, ns, samples);
	if (samples < 20 || samples > 150) {
		fprintf(stderr, "hold_clock: FAIL: %lld hold-state samples of a 400 ms hold (20 to "
				"150: every ms for 16 ms, then sparser)\n", samples);
		failed = 1;
	}
	if ((double)ns < 0.9 * (double)v.inner || (double)ns > 1.1 * (double)v.outer) {
		fprintf(stderr, "hold_clock: FAIL: V's hold measured %lld ns\n", ns);
		failed = 1;
	}
	free(json);
	return failed;
}

int main(int argc, char **argv)
{
	int tick = argc > 1 && !strcmp(argv[1], "tick");

	if (argc > 1 && !strcmp(argv[1], "sparse"))
		return sparse();
	struct truth y = { "Y", &lock_y, 0, 0 }, w = { "W", &lock_w, 0, 0 },
		     z = { "Z", &lock_z, 0, 0 };
	struct truth *all[] = { &y, &w, &z };
	pthread_t spinner;
	long long switches, clock_ns, late, gap, samples;
	int failed = 0, said;
	char *json;

	spin_for(2, 150000000);
	sleep_ns(150000000);
	holds(&y, 20, 2000000, 3000000);
	for (int i = 0; i < 200; i++) {
		pthread_mutex_lock(&lock_q);
		sink++;
		pthread_mutex_unlock(&lock_q);
		sleep_ns(100000);
	}
	holds(&w, 5, 30000000, 10000000);
	stop = 0;
	pthread_create(&spinner, NULL, spin, NULL);
	sleep_ns(50000000);
	holds(&z, 10, 3000000, 2000000);
	stop = 1;
	pthread_join(spinner, NULL);
	json = json_report("hold_clock");
	switches = json_row_value(json, NULL, "hold_clock_switches");
	clock_ns = json_row_value(json, NULL, "hold_clock_ns");
	late = json_row_value(json, NULL, "hold_ticker_late");
	gap = json_row_value(json, NULL, "hold_ticker_gap_max_ns");
	samples = json_row_value(json, NULL, "hold_state_samples");
	said = late > 0 && gap + 250000 >= 2000000;
	printf("hold_clock: hold_clock_switches=%lld hold_clock_ns=%lld hold_state_samples=%lld\n",
	       switches, clock_ns, samples);
	if (tick && (switches >= 0 || clock_ns >= 0)) {
		fprintf(stderr, "hold_clock: FAIL: hold_clock=tick, yet the ticker was in clock mode\n");
		failed = 1;
	}
	if (!tick && (switches < 2 || clock_ns < 100000000)) {
		fprintf(stderr, "hold_clock: FAIL: the ticker should have left clock mode for the "
				"tight loop and come back (at least 2 switches, 100 ms in it)\n");
		failed = 1;
	}
	for (size_t i = 0; i < sizeof(all) / sizeof(*all); i++) {
		const struct truth *tr = all[i];
		const char *row;
		long long ns = hold_ns_of(json, tr->m, &row);
		double mid = (double)(tr->inner + tr->outer) / 2;
		int bad = (double)ns < 0.9 * (double)tr->inner || (double)ns > 1.1 * (double)tr->outer;

		printf("hold_clock: %s truth_ns=%" PRIu64 "..%" PRIu64 " syncprof_ns=%lld "
		       "error=%+.3f%%%s\n",
		       tr->name, tr->inner, tr->outer, ns, 100.0 * ((double)ns - mid) / mid,
		       bad && said ? " missed, and said so (the ticker was starved)"
		       : bad	   ? " FAIL"
				   : "");
		failed |= bad && !said;
		if (tr == &w && (!row || !strstr(row, "\"hold_states\":{\"") ||
				 (json_row_end(row) && strstr(row, "\"hold_states\":{\"") >
							       json_row_end(row)))) {
			fprintf(stderr, "hold_clock: FAIL: W's 30 ms holds have no hold states\n");
			failed = 1;
		}
	}
	if (!tick)
		failed |= check_q(json);
	free(json);
	return failed;
}
