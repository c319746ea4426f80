#!/bin/bash
# whatif.sh - how close 'syncprof trace what-if' comes to real runs: a
# program with one critical section is traced at hold H, what-if predicts
# H x F, and the program is run at H x F; prints each prediction, its
# interval, the real ratio and the traces' spread (parts/whatif_validate.sh).
#
# Usage: bench/whatif.sh [BUILD] [REPEATS] [ITERATIONS] [HOLD_NS] [WORK_NS] [TRACES]
set -eu
case ${1:-} in -h|--help) sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;; esac
exec "$(cd "$(dirname "$0")" && pwd)/parts/whatif_validate.sh" "$@"
