#!/bin/bash
# holds_bench.sh - how far syncprof's hold times are from the truth, over
# many runs (issue 14 part 1), and what the hold tick costs in CPU time.
#
# Runs tests/preload/known_holds (ten holds of 30 ms, one of 800 ms, 1000
# short holds, five of 2 ms among 500 short ones; each measured by the
# program itself) RUNS times preloaded and RUNS times compiled in, with
# hold=1, and prints for each lock the worst error of syncprof's total
# against the middle of the program's bracket [inner, outer], and how many
# runs failed their checks (known_holds.c: within 10% of the bracket for
# the locks with long holds; every row's hold_ns <= holds x hold_max_ns).
# Then the CPU time (user+sys) of a process that sleeps 2 s with hold=1
# (the ticker thread wakes every 500 us) against the same with hold=0.
#
# Usage: bench/parts/holds_bench.sh [BUILD_DIR] [RUNS]
set -eu
b=${1:-build} runs=${2:-20}
kh=$b/tests/preload/known_holds khi=$b/tests/preload/known_holds_instrumented
pre=$b/libsyncprof-preload.so
for f in "$kh" "$khi" "$pre"; do
	[ -e "$f" ] || { echo "holds_bench: build $f first (make build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

for way in preload compiled; do
	fails=0
	for i in $(seq "$runs"); do
		if [ $way = preload ]; then
			LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,hold=1 "$kh" >>"$tmp/$way" 2>&1 ||
				fails=$((fails + 1))
		else
			SYNCPROF_OPTIONS=report_at_exit=0,enabled=1,hold=1 "$khi" >>"$tmp/$way" 2>&1 ||
				fails=$((fails + 1))
		fi
	done
	echo "$way: $runs runs, $fails failed their checks"
	for lock in A B C D; do
		case $lock in
		A) what="10 x 30 ms" ;; B) what="1 x 800 ms" ;;
		C) what="1000 short, not checked" ;; D) what="5 x 2 ms among 500 short" ;;
		esac
		grep "^known_holds: $lock " "$tmp/$way" | sed 's/.*error=\([-+0-9.]*\)%.*/\1/' |
			awk -v l="$lock" -v what="$what" '{ a = $1 < 0 ? -$1 : $1; if (n == 0 || a > w) { w = a; s = $1 } n++ } END { printf "  lock %s (%s): worst error %+.3f%% over %d runs\n", l, what, s, n }'
	done
done

cpu() { # OPTIONS -> user+sys seconds of a 2 s sleep under the preload
	/usr/bin/env time -f "%U %S" env LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,$1 \
		sleep 2 2>&1 >/dev/null | awk '{ print $1 + $2 }'
}
if command -v time >/dev/null 2>&1 || [ -x /usr/bin/time ]; then
	echo "CPU time of 'sleep 2' preloaded: hold=0 $(cpu hold=0) s, hold=1 $(cpu hold=1) s"
fi
