#!/bin/bash
# churn.sh - what profiling costs per process and per thread.
#
# Usage: bench/churn.sh WHAT [ARGS...]
#   processes [BUILD] [REPEATS] [N] [OTHER_BUILD]
#                 a shell loop of N runs of a small multithreaded program:
#                 bare, start-up only, report named in the process, and
#                 under syncprof run (parts/process_churn.sh; goal: at
#                 most 1 ms of start-up, 2 ms of report per process)
#   threads [BUILD] [REPEATS] [N]
#                 N short threads, 4 at a time: bare, preloaded, compiled
#                 in, hold+lock order, and after 'syncprof attach' to the
#                 bare binary (parts/thread_churn.sh; goal: at most 5 us
#                 and 1.2x per thread)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
what=${1:-}
[ $# -gt 0 ] && shift
case $what in
processes) exec "$here/parts/process_churn.sh" "$@" ;;
threads) exec "$here/parts/thread_churn.sh" "$@" ;;
*)
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
