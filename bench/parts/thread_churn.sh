#!/bin/bash
# thread_churn.sh - a short thread's start and exit, in one interleaved
# run (issue 25 part 2: at most 5 us added per thread, at most 1.2x bare):
# bench/thread_churn (N threads, 4 at a time, two locks ten times each)
#
#   bare        the plain binary
#   preload     LD_PRELOAD=libsyncprof-preload.so
#   compiled    the binary built with -include syncprof/instrument.h
#   hold+order  preloaded, SYNCPROF_OPTIONS=hold=1,lock_order=1
#   noaccount   preloaded, account=0: what the exit's time account costs
#               (its /proc reads, docs/accounting.md) is the difference
#
# each REPEATS times, the modes alternating, all with report_at_exit=0
# (the program times its create/join loop only).  Prints each mode's
# median time per thread, its spread (min-max), the added time per thread
# against bare and the ratio of the medians.
#
# Usage: bench/parts/thread_churn.sh [BUILD_DIR] [REPEATS] [N]
set -eu
b=${1:-build} repeats=${2:-5} n=${3:-40000}
bin=$b/bench/thread_churn inst=$b/bench/thread_churn_instrumented
pre=$(cd "$b" && pwd)/libsyncprof-preload.so
modes="bare preload compiled hold+order noaccount"
declare -A runs
one() {
	case $1 in
	bare) SYNCPROF_OPTIONS=report_at_exit=0 "$bin" "$n" ;;
	preload) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0 "$bin" "$n" ;;
	compiled) SYNCPROF_OPTIONS=report_at_exit=0,enabled=1 "$inst" "$n" ;;
	hold+order) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,hold=1,lock_order=1 \
		"$bin" "$n" ;;
	noaccount) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,account=0 "$bin" "$n" ;;
	esac | sed -n 's/.*per_thread_us \([0-9.]*\).*/\1/p'
}
for r in $(seq "$repeats"); do
	for m in $modes; do
		v=$(one "$m")
		[ -n "$v" ] || { echo "thread_churn: $m failed" >&2; exit 1; }
		runs[$m]="${runs[$m]:-} $v"
	done
done
med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[1], v[NR]}'; }
read -r bare_med _ _ <<<"$(echo "${runs[bare]}" | med)"
echo "thread_churn: $n threads, 4 at a time, $repeats repeats interleaved (us per thread)"
printf '%-11s %9s %17s %9s %7s\n' mode median "min-max" added ratio
for m in $modes; do
	read -r md lo hi <<<"$(echo "${runs[$m]}" | med)"
	awk -v m="$m" -v md="$md" -v lo="$lo" -v hi="$hi" -v b="$bare_med" 'BEGIN {
		printf "%-11s %9.2f %8.2f-%-8.2f %9.2f %6.2fx\n", m, md, lo, hi, md - b, md / b }'
done
