#!/bin/bash
# cg_per_iter.sh - instructions per iteration of a fixed-count benchmark
# under callgrind (repeatable where timings on a shared machine are not):
# the program is run with N=100000 and N=200000 as its last argument and
# the difference of the totals is divided by 100000, so start-up, the
# ticker and the exit cancel out.
#
# Usage: bench/parts/cg_per_iter.sh LABEL [VAR=VALUE...] -- PROGRAM [ARGS...]
#   bench/parts/cg_per_iter.sh hold SYNCPROF_OPTIONS=report_at_exit=0,enabled=1,hold=1 \
#       -- build/bench/condloop_instrumented lock
set -eu
label=$1
shift
envs=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
	envs+=("$1")
	shift
done
[ $# -gt 1 ] || { echo "usage: cg_per_iter.sh LABEL [VAR=VALUE...] -- PROGRAM [ARGS...]" >&2; exit 2; }
shift
command -v valgrind >/dev/null || { echo "cg_per_iter: valgrind is not installed" >&2; exit 1; }
total() {
	env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file=/dev/null "$@" 2>&1 >/dev/null |
		sed -n 's/.*Collected : \([0-9]*\).*/\1/p'
}
a=$(total "$@" 100000)
b=$(total "$@" 200000)
echo "$label: $(((b - a) / 100000)) instructions per iteration"
