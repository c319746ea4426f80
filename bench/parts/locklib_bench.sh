#!/bin/bash
# locklib_bench.sh - issue 23's goal for locks that never call pthread:
# the wait syncprof records against what the program measures around its
# own lock calls, for Rust std's Mutex, parking_lot, absl::Mutex (the
# programs of tests/locklibs, built by their tests) and glibc's stdio and
# malloc locks (tests/preload/glibc_locks).  Each is run REPEATS times
# under 'syncprof run'; prints the median ratio recorded/measured and its
# range.  Goal: within 10% (0.90..1.10).  parking_lot and Abseil spin
# with sched_yield() before they sleep, which no futex sees: on a loaded
# machine their ratio drops (README, "What syncprof does not see").
#
# Usage: bench/parts/locklib_bench.sh [BUILD_DIR] [REPEATS]
#   (cd build && ctest -R 'locklib_waits|glibc_locks_stdio') first
set -u
build=${1:-build} repeats=${2:-7}
cli=$build/syncprof
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -x "$cli" ] || { echo "build first: $cli" >&2; exit 1; }

. "$(dirname "$0")/common.sh"
report() { # NAME RATIOS...
	local name=$1
	shift
	printf '%-14s median %.3f  (min %.3f, max %.3f, %d runs)\n' "$name" \
		"$(printf '%s\n' "$@" | median)" "$(printf '%s\n' "$@" | sort -g | head -1)" \
		"$(printf '%s\n' "$@" | sort -g | tail -1)" $#
}

for kind in std parking_lot absl; do
	prog=$build/tests/locklibs/$kind/prog
	src=tests/locklibs/std_mutex.rs
	[ "$kind" = parking_lot ] && src=tests/locklibs/pl_mutex/src/main.rs
	[ "$kind" = absl ] && src=tests/locklibs/absl_mutex.cc
	if [ ! -x "$prog" ]; then
		echo "$kind: $prog not built (ctest -R locklib_waits_$kind)"
		continue
	fi
	line=$(grep -n LINE_WAIT "$src" | head -1 | cut -d: -f1)
	ratios=()
	for _ in $(seq "$repeats"); do
		"$cli" run -f json -o "$tmp/p.json" -- "$prog" > "$tmp/out.txt" 2> /dev/null || continue
		ratios+=("$(python3 - "$tmp/p.json" "$tmp/out.txt" "$line" <<'PY'
import json, re, sys
p = json.load(open(sys.argv[1]))
m = int(re.search(r"measured_wait_ns (\d+)", open(sys.argv[2]).read()).group(1))
w = sum(r["wait_ns"] for r in p["rows"] if r["type"] == "futex" and r["site"].get("line") == int(sys.argv[3]))
print("%.4f" % (w / m))
PY
)")
	done
	report "$kind" "${ratios[@]}"
done

gl=$build/tests/preload/glibc_locks
pre=$build/libsyncprof-preload.so
for what in stdio malloc; do
	[ -x "$gl" ] || { echo "glibc_locks not built"; break; }
	ratios=()
	for _ in $(seq "$repeats"); do
		line=$(env LD_PRELOAD="$pre" SYNCPROF_OPTIONS=enabled=1,report_at_exit=0 MALLOC_ARENA_MAX=1 \
			"$gl" "$what" 2> /dev/null | grep 'ms recorded' | head -1)
		# "FUNC: N waits, R ms recorded, M ms measured by the program"
		r=$(echo "$line" | sed -n 's/.* \([0-9.]*\) ms recorded, \([0-9.]*\) ms measured.*/\1 \2/p' |
			awk '$2 > 0 {printf "%.4f", $1 / $2}')
		[ -n "$r" ] && ratios+=("$r")
	done
	[ ${#ratios[@]} -gt 0 ] && report "glibc $what" "${ratios[@]}"
done
