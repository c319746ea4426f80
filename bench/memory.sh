#!/bin/bash
# memory.sh - what profiling costs in memory, and what a large profile
# costs to read back.
#
# Usage: bench/memory.sh WHAT [ARGS...]
#   entries [BUILD] [N]
#                 RSS per profiled lock: N distinct mutexes (default
#                 1,000,000) locked once each, compiled in and preloaded
#                 (membench; goal: at most 160 bytes per entry)
#   report [BUILD] [N]
#                 time and peak RSS of 'syncprof report' re-rendering a
#                 saved profile of N rows (parts/loadbench.sh)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
[ $# -gt 0 ] && shift
case $what in
entries)
	b=${1:-build} n=${2:-1000000}
	echo "compiled in:"
	SYNCPROF_OPTIONS=enabled=1,report_at_exit=0 "$b/bench/membench" "$n"
	echo "preloaded:"
	LD_PRELOAD=$(cd "$b" && pwd)/libsyncprof-preload.so SYNCPROF_OPTIONS=report_at_exit=0 \
		"$b/bench/membench_plain" "$n"
	;;
report) exec "$here/parts/loadbench.sh" "$@" ;;
*)
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
