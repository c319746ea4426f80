#!/bin/bash
# preload_bench.sh - lockbench under libsyncprof-preload.so vs plain, back
# to back on the same machine: for each configuration, REPEATS rounds of
# (plain, preload on, preload --hold), each a 'lockbench -M plain' run
# (which takes its own median over -r rounds); the medians of the rounds
# are compared.  Under the preload, lockbench's "plain" loop goes through
# the interposer with profiling on (see bench/README.md).
#
# Usage: bench/preload_bench.sh [BUILD_DIR] [REPEATS] [MS]
set -eu
build=${1:-build} repeats=${2:-5} ms=${3:-200}
lb=$build/bench/lockbench
pre=$(cd "$build" && pwd)/libsyncprof-preload.so
[ -x "$lb" ] && [ -f "$pre" ] || { echo "build first: $lb, $pre" >&2; exit 1; }

median() { sort -g | awk '{v[NR]=$1} END {print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
run() { # mode threads locks -> "ns/op Mops/s"
	local env=()
	case $1 in
	on) env=(LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0) ;;
	hold) env=(LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,hold=1) ;;
	esac
	env "${env[@]}" "$lb" -M plain -t "$2" -m "$3" -d "$ms" -r 3 | awk '$1 == "plain" {print $2, $3}'
}

printf "%-22s %10s %10s %10s %12s %12s\n" config "plain ns" "on ns" "hold ns" "on/plain" "hold/plain"
for cfg in "1 1" "1 1024" "2 1"; do
	set -- $cfg
	: > /tmp/pb.plain; : > /tmp/pb.on; : > /tmp/pb.hold
	for ((i = 0; i < repeats; i++)); do
		for mode in plain on hold; do
			run $mode "$1" "$2" >> /tmp/pb.$mode
		done
	done
	p=$(cut -d' ' -f1 /tmp/pb.plain | median); o=$(cut -d' ' -f1 /tmp/pb.on | median)
	h=$(cut -d' ' -f1 /tmp/pb.hold | median)
	pt=$(cut -d' ' -f2 /tmp/pb.plain | median); ot=$(cut -d' ' -f2 /tmp/pb.on | median)
	ht=$(cut -d' ' -f2 /tmp/pb.hold | median)
	printf "%-22s %10.2f %10.2f %10.2f %11.3fx %11.3fx\n" "$1 thr, $2 lock(s) time" "$p" "$o" "$h" \
		"$(echo "$o / $p" | bc -l)" "$(echo "$h / $p" | bc -l)"
	printf "%-22s %10.2f %10.2f %10.2f %11.3fx %11.3fx\n" "  throughput Mops/s" "$pt" "$ot" "$ht" \
		"$(echo "$ot / $pt" | bc -l)" "$(echo "$ht / $pt" | bc -l)"
done
rm -f /tmp/pb.plain /tmp/pb.on /tmp/pb.hold
