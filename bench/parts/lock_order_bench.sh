#!/bin/bash
# lock_order_bench.sh - what lock-order checking (lock_order=1) costs over
# hold tracking (hold=1), which it implies: the bar is lock_order <= 1.1x
# hold for an uncontended lock+unlock on one thread (DESIGN.md, "Bars").
#
# For each case - 1 thread and 1 lock (nothing held: the bar), the same
# lock taken inside an outer one (one lock-order edge, known after its
# first use: a lookup in the thread's cache), and 1024 locks inside an
# outer one (1024 edges: more than the 256 slots of the thread's cache, so
# most lookups go to the global table) - and each way in (preloaded:
# lockbench's plain loop under libsyncprof-preload.so; compiled in: its
# instrumented loop), it runs lockbench with hold=1, then with
# lock_order=1 (which turns on hold tracking's held lists only), then with
# both (lock order on top of full hold tracking), REPEATS times,
# alternating, so that the machine's noise falls on all alike.  Each run
# measures the profiled loop against glibc's own calls in the same
# process (-M libc,...); the ratio of two runs of one round is one mode's
# cost over hold's.  Printed: the medians of each mode's ratio to glibc,
# and the medians of the rounds' ratios to hold (time per operation).
#
# Usage: bench/parts/lock_order_bench.sh [BUILD_DIR] [REPEATS] [MS] [ROUNDS]
set -eu
build=${1:-build} repeats=${2:-9} ms=${3:-30} rounds=${4:-21}
lb=$build/bench/lockbench
pre=$(cd "$build" && pwd)/libsyncprof-preload.so
[ -x "$lb" ] && [ -f "$pre" ] || { echo "build first: $lb, $pre" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/common.sh"

# one WAY MODE LOCKBENCH-ARGS... -> the profiled loop's time ratio to libc
one() {
	local way=$1 mode=$2
	shift 2
	case $way in
	preload) env LD_PRELOAD="$pre" SYNCPROF_OPTIONS=report_at_exit=0,control=0,$mode \
			"$lb" -M libc,plain -d "$ms" -r "$rounds" "$@" | awk '$1 == "plain"' ;;
	compiled) env SYNCPROF_OPTIONS=report_at_exit=0,$mode \
			"$lb" -M libc,on -d "$ms" -r "$rounds" "$@" | awk '$1 == "on"' ;;
	esac | awk '{gsub("x", "", $4); print $4}'
}

printf "%-17s %-9s %10s %10s %10s %12s %12s\n" case way "hold/libc" "order/libc" "both/libc" \
	"order/hold" "both/hold"
for cfg in "-t 1 -m 1" "-t 1 -m 1 -o" "-t 1 -m 1024 -o"; do
	for way in preload compiled; do
		: > "$tmp/h"; : > "$tmp/o"; : > "$tmp/b"; : > "$tmp/oh"; : > "$tmp/bh"
		for ((i = 0; i < repeats; i++)); do
			# shellcheck disable=SC2086
			h=$(one $way hold=1 $cfg)
			# shellcheck disable=SC2086
			o=$(one $way lock_order=1 $cfg)
			# shellcheck disable=SC2086
			b=$(one $way lock_order=1,hold=1 $cfg)
			echo "$h" >> "$tmp/h"
			echo "$o" >> "$tmp/o"
			echo "$b" >> "$tmp/b"
			echo "$h $o" | awk '{printf "%.4f\n", $2 / $1}' >> "$tmp/oh"
			echo "$h $b" | awk '{printf "%.4f\n", $2 / $1}' >> "$tmp/bh"
		done
		printf "%-17s %-9s %9.3fx %9.3fx %9.3fx %11.3fx %11.3fx\n" "$cfg" $way \
			"$(median < "$tmp/h")" "$(median < "$tmp/o")" "$(median < "$tmp/b")" \
			"$(median < "$tmp/oh")" "$(median < "$tmp/bh")"
	done
done
echo "(order: lock_order=1; both: lock_order=1,hold=1.  Medians of $repeats rounds of three"
echo " alternating runs, each $rounds rounds of $ms ms; time per operation: lock + unlock of the"
echo " counter, and of the outer lock with -o)"
