#!/bin/bash
# cost.sh - what profiling costs a lock call, and the threads syncprof adds.
#
# Usage: bench/cost.sh WHAT [ARGS...]
#   calls [BUILD] [REPEATS] [MS] [ROUNDS]
#                 every cost goal in one interleaved run: lockbench's loop
#                 profiled against glibc's own calls in the same process,
#                 compiled in and preloaded, on / hold=1 / trace, 1 and
#                 1024 locks, 1 and 2 threads, beside the floors
#                 (parts/goals_bench.sh; docs/cost.md, "The goals")
#   instructions [BUILD]
#                 callgrind's instructions per uncontended lock+unlock
#                 (condloop), bare and in each configuration: repeatable
#                 where timings on a shared machine are not
#                 (parts/cg_per_iter.sh)
#   builds BUILD_A BUILD_B [REPEATS] [MS] [ROUNDS]
#                 the same ratios for two builds alternately: before and
#                 after a change (parts/compare_builds.sh)
#   order [BUILD] [REPEATS] [MS] [ROUNDS]
#                 lock_order=1 against hold=1 (parts/lock_order_bench.sh)
#   explain BUILD [BASE_BUILD]
#                 the watchdog's explanations, in instructions
#                 (parts/explain_bench.sh)
#   ticker [BUILD]
#                 the hold ticker's CPU against a bare thread that wakes
#                 as often (parts/ticker_cost.sh)
#   handoff [BUILD] [REPEATS]
#                 two threads on one lock, and sysbench mutex --threads=2
#                 when installed: throughput against bare, with and
#                 without hold=1 (lockbench -t 2)
#   servers [BUILD] [ROUNDS] [SECONDS]
#                 memcached -t 4 under memcslap --concurrency=4, set and
#                 get throughput: bare, syncprof run, run --hold, run
#                 --lock-order, run --trace, in interleaved rounds
#                 (parts/memcached_bench.sh throughput)
#   edges [BUILD] [SECONDS]
#                 memcached -t 4 under run --lock-order, loaded by
#                 memcslap for SECONDS (default 60): lock-order edges
#                 kept and dropped (goal: none dropped;
#                 parts/memcached_bench.sh edges)
#   compress [BUILD] [REPEATS] [MIB]
#                 pigz -p 4 and xz -T 4 compressing a generated file:
#                 wall time bare, under syncprof run (report at exit to
#                 a file) and run --hold, interleaved
#                 (parts/compress_bench.sh)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
[ $# -gt 0 ] && shift
case $what in
calls) exec "$here/parts/goals_bench.sh" "$@" ;;
builds) exec "$here/parts/compare_builds.sh" "$@" ;;
order) exec "$here/parts/lock_order_bench.sh" "$@" ;;
explain) exec "$here/parts/explain_bench.sh" "$@" ;;
ticker) exec "$here/parts/ticker_cost.sh" "$@" ;;
handoff) exec "$here/parts/handoff.sh" "$@" ;;
servers) exec "$here/parts/memcached_bench.sh" throughput "$@" ;;
edges) exec "$here/parts/memcached_bench.sh" edges "$@" ;;
compress) exec "$here/parts/compress_bench.sh" "$@" ;;
instructions)
	b=${1:-build}
	pre=LD_PRELOAD=$(cd "$b" && pwd)/libsyncprof-preload.so
	o=report_at_exit=0,enabled=1
	cg=$here/parts/cg_per_iter.sh
	"$cg" "bare" -- "$b/bench/condloop" lock
	# The hold rows fix the ticker's mode: under valgrind the loop is slow
	# enough for hold_clock=auto to pick either.
	for c in "on:$o" \
		"hold=1 (1 in 10^6 sampled):$o,hold=1,hold_sample=1000000,hold_clock=tick" \
		"hold=1 (tick mode):$o,hold=1,hold_clock=tick" \
		"hold=1 (clock mode):$o,hold=1,hold_clock=clock" \
		"lock_order=1:$o,lock_order=1"; do
		"$cg" "compiled in, ${c%%:*}" SYNCPROF_OPTIONS="${c#*:}" -- \
			"$b/bench/condloop_instrumented" lock
		"$cg" "preloaded, ${c%%:*}" "$pre" SYNCPROF_OPTIONS="${c#*:}" -- \
			"$b/bench/condloop" lock
	done
	"$cg" "1024 locks, bare" -- "$b/bench/condloop" many
	"$cg" "1024 locks, compiled in, on" SYNCPROF_OPTIONS=$o -- \
		"$b/bench/condloop_instrumented" many
	"$cg" "1024 locks, preloaded, on" "$pre" SYNCPROF_OPTIONS=$o -- "$b/bench/condloop" many
	;;
*)
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
