#!/bin/bash
# accuracy.sh - how far syncprof's figures are from the truth, over many
# runs.
#
# Usage: bench/accuracy.sh WHAT [ARGS...]
#   holds [BUILD] [RUNS]
#                 hold times of known holds (30 ms, 800 ms, 2 ms, short)
#                 against the program's own clock (parts/holds_bench.sh)
#   states [BUILD] [RUNS]
#                 what a long holder was doing (fsync, a blocked write,
#                 sleep, CPU, preempted) against the truth
#                 (parts/hold_states_runs.sh)
#   locklibs [BUILD] [REPEATS]
#                 waits of Rust, parking_lot, Abseil and glibc's own locks
#                 against what the programs measure (parts/locklib_bench.sh)
#   order [BUILD] [REPEATS] [ITERATIONS]
#                 lock-order findings and cost against ThreadSanitizer's
#                 deadlock detector (parts/order_vs_tsan.sh)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
[ $# -gt 0 ] && shift
case $what in
holds) exec "$here/parts/holds_bench.sh" "$@" ;;
states) exec "$here/parts/hold_states_runs.sh" "$@" ;;
locklibs) exec "$here/parts/locklib_bench.sh" "$@" ;;
order) exec "$here/parts/order_vs_tsan.sh" "$@" ;;
*)
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
