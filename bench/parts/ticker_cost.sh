#!/bin/bash
# ticker_cost.sh - what the hold ticker costs a core (issue 25 part 4: at
# most 0.5%), against the floor of any thread that wakes as often:
#
#   floor       a bare loop of nanosleep(500 us) (the tick's period) and of
#               nanosleep(1 ms): its own CPU per wake and share of a core
#   held        syncprof-tick's CPU (its schedstat) while one thread holds a
#               mutex across nanosleep for 4 s, preloaded, hold=1 with
#               hold_states=0 (clock mode: a tick every 10 ms), the same
#               with hold_clock=tick (every 500 us); then with hold states
#               (the default: the held lock is sampled every ms), with
#               hold_where=0, and with hold_where=all
#   light       the same while one thread takes a lock for a short hold
#               after each 100 us sleep (a few thousand holds a second):
#               hold_clock=auto (clock mode) against hold_clock=tick
#
# The two small programs are compiled into a temporary directory.  No
# figure here is an assertion: the machine's noise is stated by running
# it twice.
# Usage: bench/parts/ticker_cost.sh [BUILD_DIR]
set -eu
build=$(cd "${1:-build}" && pwd)
lib=$build/libsyncprof-preload.so
[ -f "$lib" ] || { echo "ticker_cost: no $lib (make build first)" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cat > "$tmp/wake.c" <<'C'
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static double clk(clockid_t c)
{
	struct timespec t;

	clock_gettime(c, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}
int main(int argc, char **argv)
{
	long us = atol(argv[1]), n = 0;
	struct timespec ts = { 0, us * 1000 };
	double c0 = clk(CLOCK_THREAD_CPUTIME_ID), m0 = clk(CLOCK_MONOTONIC), c, m;

	while (clk(CLOCK_MONOTONIC) - m0 < 3) {
		nanosleep(&ts, NULL);
		n++;
	}
	c = clk(CLOCK_THREAD_CPUTIME_ID) - c0;
	m = clk(CLOCK_MONOTONIC) - m0;
	printf("floor: nanosleep(%ld us) loop: %.1f us CPU per wake, %.2f%% of a core\n", us,
	       c / n * 1e6, 100 * c / m);
	return 0;
}
C
cat > "$tmp/holder.c" <<'C'
#include <pthread.h>
#include <string.h>
#include <time.h>
static pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	struct timespec ts = { 0, 100000000 }, gap = { 0, 100000 };
	volatile unsigned sink = 0;

	if (argc > 1 && !strcmp(argv[1], "light")) {
		/* A program that locks now and then: a short hold every
		 * 100 us of sleep (a few thousand a second), for 6 s. */
		struct timespec t0, t;

		clock_gettime(CLOCK_MONOTONIC, &t0);
		do {
			pthread_mutex_lock(&m);
			for (int i = 0; i < 100; i++)
				sink += i;
			pthread_mutex_unlock(&m);
			nanosleep(&gap, NULL);
			clock_gettime(CLOCK_MONOTONIC, &t);
		} while (t.tv_sec - t0.tv_sec < 6);
		return 0;
	}
	pthread_mutex_lock(&m);
	for (int i = 0; i < 60; i++)
		nanosleep(&ts, NULL);
	pthread_mutex_unlock(&m);
	return 0;
}
C
cc -O2 -o "$tmp/wake" "$tmp/wake.c"
cc -O2 -o "$tmp/holder" "$tmp/holder.c" -lpthread
tick_cpu() { # OPTIONS [light] -> the ticker's CPU over 4 s of a 6 s run
	local pid t0 t1
	LD_PRELOAD=$lib SYNCPROF_OPTIONS="enabled=1,report_at_exit=0,control=0,$1" "$tmp/holder" ${2:-} &
	pid=$!
	sleep 1
	tick() { for t in /proc/$pid/task/*; do
		[ "$(cat "$t/comm")" = syncprof-tick ] && cut -d' ' -f1 "$t/schedstat"; done; }
	t0=$(tick); sleep 4; t1=$(tick)
	wait $pid
	awk -v a="${t0:-0}" -v b="${t1:-0}" -v o="$1" -v w="${2:-held}" \
		'BEGIN { printf "%-5s %-46s syncprof-tick %.2f%% of a core\n", w, o, (b - a) / 4e7 }'
}
uptime
for round in 1 2; do
	"$tmp/wake" 500
	"$tmp/wake" 1000
	"$tmp/wake" 10000
	# a lock held throughout (hold states sample it: 500 us ticks)
	tick_cpu hold=1,hold_states=0
	tick_cpu hold=1,hold_states=0,hold_clock=tick
	tick_cpu hold=1
	tick_cpu hold=1,hold_where=0
	tick_cpu hold=1,hold_where=all
	# short holds now and then: clock mode (hold_clock=auto) against tick
	tick_cpu hold=1 light
	tick_cpu hold=1,hold_clock=tick light
done
