#!/bin/bash
# hold_states_runs.sh - issue 24's accuracy goal, counted: the hold-state
# cases of tests/preload/hold_states.sh (fsync, a blocked write to a full
# pipe, nanosleep, a CPU loop, a CPU loop pinned to one CPU shared with
# three spinning threads), preloaded and compiled in, RUNS times each.
# A run passes when every state of its case is within 10% of the hold
# time of what the program measured itself (plus, for a system call or a
# lock, the holder's own run-queue time, which the kernel reports late;
# docs/hold-states.md).  Prints, per case, how many of the runs passed.
#
# Usage: bench/parts/hold_states_runs.sh [BUILD_DIR] [RUNS]
set -u
b=${1:-build} runs=${2:-10}
here=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
for mode in sleep cpu preempt pipe fsync; do
	ok=0
	for _ in $(seq "$runs"); do
		# One run = both ways (preloaded and compiled in); the script
		# prints a FAIL line for each state out of bounds.
		out=$(bash "$here/tests/preload/hold_states.sh" "$b/syncprof" "$b/tests/preload/hold_states" \
			"$b/tests/preload/hold_states_instrumented" "$here/tests/preload/hold_states.c" \
			"$work/w" "$mode" 2>&1)
		echo "$out" | grep -q "FAIL" || ok=$((ok + 1))
		echo "$out" | grep -E "^hold_states: $mode (preloaded|compiled in):|FAIL" | sed 's/^/  /'
	done
	echo "$mode: $ok of $runs runs within 10% (preloaded and compiled in)"
done
