#!/bin/bash
# compare_builds.sh - the cost of profiling in two builds of syncprof (say,
# before and after a change), measured alternately so that the machine's
# noise falls on both alike.
#
# For each configuration (1 thread and 1 lock, 1 thread and 1024 locks,
# 2 threads and 1 lock) and each mode - compiled in ("on": the instrumented
# loop, profiling on), preloaded ("pre": lockbench's plain loop under
# libsyncprof-preload.so) and preloaded with hold tracking ("hold") - it
# runs lockbench of build A, then of build B, REPEATS times, each run
# measuring the profiled loop against glibc's own calls in the same process
# (-M libc,...), and prints the median ratio of each build.  Ratios are
# time per operation, except for 2 threads: throughput.
#
# Usage: bench/parts/compare_builds.sh BUILD_A BUILD_B [REPEATS] [MS] [ROUNDS]
set -eu
a=$1 b=$2 repeats=${3:-7} ms=${4:-30} rounds=${5:-21}
for d in "$a" "$b"; do
	[ -x "$d/bench/lockbench" ] && [ -f "$d/libsyncprof-preload.so" ] ||
		{ echo "compare_builds: build $d first (bench/lockbench, libsyncprof-preload.so)" >&2; exit 1; }
done
. "$(dirname "$0")/common.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# one BUILD MODE THREADS LOCKS -> the ratio of the profiled loop to libc
one() {
	local d=$1 mode=$2 t=$3 m=$4 line col=4
	[ "$t" -gt 1 ] && col=5
	case $mode in
	on) line=$(SYNCPROF_OPTIONS=report_at_exit=0 "$d/bench/lockbench" -t "$t" -m "$m" \
			-d "$ms" -r "$rounds" -M libc,on | awk '$1 == "on"') ;;
	pre) line=$(LD_PRELOAD=$(cd "$d" && pwd)/libsyncprof-preload.so \
			SYNCPROF_OPTIONS=report_at_exit=0,control=0 "$d/bench/lockbench" -t "$t" \
			-m "$m" -d "$ms" -r "$rounds" -M libc,plain | awk '$1 == "plain"') ;;
	hold) line=$(LD_PRELOAD=$(cd "$d" && pwd)/libsyncprof-preload.so \
			SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1 "$d/bench/lockbench" \
			-t "$t" -m "$m" -d "$ms" -r "$rounds" -M libc,plain | awk '$1 == "plain"') ;;
	esac
	echo "$line" | awk -v c=$col '{gsub("x", "", $c); print $c}'
}

printf '%-22s %10s %10s\n' "case" "A" "B"
for cfg in "1 1" "1 1024" "2 1"; do
	set -- $cfg
	for mode in on pre hold; do
		: > "$tmp/a"
		: > "$tmp/b"
		for _ in $(seq "$repeats"); do
			one "$a" $mode "$1" "$2" >> "$tmp/a"
			one "$b" $mode "$1" "$2" >> "$tmp/b"
		done
		printf '%-22s %9sx %9sx\n' "$mode t=$1 m=$2" "$(median < "$tmp/a")" \
			"$(median < "$tmp/b")"
	done
done
echo "(A = $a, B = $b; medians of $repeats alternating runs, each $rounds rounds of $ms ms;"
echo " time per operation against glibc in the same process, throughput for 2 threads)"
