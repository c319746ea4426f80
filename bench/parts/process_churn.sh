#!/bin/bash
# process_churn.sh - what profiling costs a process (issue 25, part 1: at
# most 1 ms of start-up and 2 ms of report at exit per process): a shell
# loop that runs a small multithreaded program (bench/thread_churn 8: 8
# threads, 4 at a time, two locks ten times each) N times, in one
# interleaved run of these modes:
#
#   bare      the loop, unprofiled
#   startup   LD_PRELOAD=libsyncprof-preload.so, report_at_exit=0: the
#             library's load and start-up, no report
#   report    LD_PRELOAD alone, each process writing its report at exit to
#             /dev/null (named in the process: no 'syncprof run')
#   run       syncprof run -o /dev/null -- the loop: what a user of run
#             pays, the shell included
#
# With OTHER_BUILD_DIR (another build, e.g. of an older commit), its
# startup, report and run modes run too, as startup@other and so on, in
# the same rounds: a before/after in one run.
#
# Each round runs every mode once (modes alternating, so machine noise falls
# on all alike); REPEATS rounds.  Prints each mode's median wall time per
# process, its spread (min-max) and the added time per process against bare.
#
# Usage: bench/parts/process_churn.sh [BUILD_DIR] [REPEATS] [N] [OTHER_BUILD_DIR]
set -eu
b=${1:-build} repeats=${2:-5} n=${3:-300} other=${4:-}
b=$(cd "$b" && pwd)
small=$b/bench/thread_churn pre=$b/libsyncprof-preload.so sp=$b/syncprof
[ -x "$small" ] && [ -f "$pre" ] && [ -x "$sp" ] || { echo "build first: $small, $pre, $sp" >&2; exit 1; }
loop="for i in \$(seq $n); do $small 8 > /dev/null || exit 1; done"
modes="bare startup report run"
if [ -n "$other" ]; then
	other=$(cd "$other" && pwd)
	[ -f "$other/libsyncprof-preload.so" ] && [ -x "$other/syncprof" ] ||
		{ echo "no preload library or syncprof in $other" >&2; exit 1; }
	modes="$modes startup@other report@other run@other"
fi
declare -A runs
now() { date +%s%N; }
one() {
	local t0 t1
	t0=$(now)
	local p=$pre s=$sp
	case $1 in *@other) p=$other/libsyncprof-preload.so s=$other/syncprof ;; esac
	case ${1%@other} in
	bare) bash -c "$loop" ;;
	startup) LD_PRELOAD=$p SYNCPROF_OPTIONS=report_at_exit=0 bash -c "$loop" ;;
	report) LD_PRELOAD=$p SYNCPROF_OPTIONS=output=/dev/null bash -c "$loop" ;;
	run) "$s" run -o /dev/null -- bash -c "$loop" ;;
	esac
	t1=$(now)
	echo "$t0 $t1 $n" | awk '{printf "%.4f\n", ($2 - $1) / 1e6 / $3}'
}
. "$(dirname "$0")/common.sh"
for r in $(seq "$repeats"); do
	for m in $modes; do
		v=$(one "$m") || { echo "process_churn: $m failed" >&2; exit 1; }
		runs[$m]="${runs[$m]:-} $v"
	done
done
echo "process_churn: $n processes of thread_churn 8, $repeats repeats interleaved (ms per process)${other:+; @other: $other}"
printf "%-16s %8s %17s %8s\n" mode median min-max added
base=$(echo ${runs[bare]} | tr ' ' '\n' | median)
for m in $modes; do
	med=$(echo ${runs[$m]} | tr ' ' '\n' | median)
	lo=$(echo ${runs[$m]} | tr ' ' '\n' | sort -g | head -1)
	hi=$(echo ${runs[$m]} | tr ' ' '\n' | sort -g | tail -1)
	printf "%-16s %8.3f %8.3f-%-8.3f %8.3f\n" "$m" "$med" "$lo" "$hi" \
		"$(echo "$med $base" | awk '{print $1 - $2}')"
done
