#!/bin/bash
# preload_bench.sh - lockbench under libsyncprof-preload.so against the
# unprofiled loop, two ways:
#
#   in one process: 'LD_PRELOAD=... lockbench -M libc,plain' alternates, round
#     after round, the interposed loop ("plain", profiled) with the same loop
#     calling glibc's functions directly ("libc", never interposed), and
#     prints their ratio.  Machine noise falls on both alike; this is the
#     figure the bars are judged on.
#   across processes: lockbench -M plain without the preload, then with it,
#     back to back (the method of the first measurements, kept to compare).
#
# Each is repeated REPEATS times for each configuration (1 thread and
# 1 lock, 1 thread and 1024 locks, 2 threads and 1 lock) and each mode
# (profiling on; on with --hold), and the medians of the ratios are
# printed.  Throughput ratios are the ones that matter for 2 threads.
#
# Usage: bench/parts/preload_bench.sh [BUILD_DIR] [REPEATS] [MS] [ROUNDS]
set -eu
build=${1:-build} repeats=${2:-5} ms=${3:-30} rounds=${4:-31}
lb=$build/bench/lockbench
pre=$(cd "$build" && pwd)/libsyncprof-preload.so
[ -x "$lb" ] && [ -f "$pre" ] || { echo "build first: $lb, $pre" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

. "$(dirname "$0")/common.sh"
opts() { case $1 in on) echo report_at_exit=0 ;; hold) echo report_at_exit=0,hold=1 ;; esac; }
# lockbench ... -> the "plain" line's fields: ns/op Mops/s [time-ratio thrpt-ratio]
plain_line() { awk '$1 == "plain" {print $2, $3, $4, $5}' | tr -d x; }

printf "%-16s %-5s %18s %18s %18s %18s\n" config mode "1 process: time" "1 process: thrpt" \
	"2 processes: time" "2 processes: thrpt"
for cfg in "1 1" "1 1024" "2 1"; do
	set -- $cfg
	for mode in on hold; do
		: > "$tmp/in"; : > "$tmp/across"
		for ((i = 0; i < repeats; i++)); do
			env LD_PRELOAD="$pre" SYNCPROF_OPTIONS="$(opts $mode)" \
				"$lb" -M libc,plain -t "$1" -m "$2" -d "$ms" -r "$rounds" |
				plain_line | awk '{print $3, $4}' >> "$tmp/in"
			base=$("$lb" -M plain -t "$1" -m "$2" -d "$ms" -r "$rounds" | plain_line)
			prof=$(env LD_PRELOAD="$pre" SYNCPROF_OPTIONS="$(opts $mode)" \
				"$lb" -M plain -t "$1" -m "$2" -d "$ms" -r "$rounds" | plain_line)
			echo "$base $prof" | awk '{printf "%.4f %.4f\n", $3 / $1, $4 / $2}' >> "$tmp/across"
		done
		printf "%-16s %-5s %17.3fx %17.3fx %17.3fx %17.3fx\n" "$1 thr, $2 lock" "$mode" \
			"$(cut -d' ' -f1 "$tmp/in" | median)" "$(cut -d' ' -f2 "$tmp/in" | median)" \
			"$(cut -d' ' -f1 "$tmp/across" | median)" "$(cut -d' ' -f2 "$tmp/across" | median)"
	done
done
