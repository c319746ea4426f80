#!/bin/bash
# order_vs_tsan.sh - syncprof's lock-order checking against ThreadSanitizer's
# deadlock detector (TSAN_OPTIONS=detect_deadlocks=1) on the same programs,
# and what each costs.
#
# 1. Findings.  Every case of tests/lockorder/lockorder_cases.c runs built
#    with -fsanitize=thread, and unmodified under libsyncprof-preload.so with
#    lock_order=1.  A cycle is compared by its edges, each named by the
#    functions of its two sites (TSan: frame #1 of "Mutex .. acquired here"
#    and of "previously acquired by the same thread here"; syncprof: the
#    held and acquired sites).  The script prints, per case, the cycles
#    each tool reported and fails when TSan reported a cycle that syncprof
#    did not, unless the case is one where TSan's report is known to be no
#    deadlock (listed in TSAN_FALSE below, with the reason).
# 2. Cost.  A loop of its own (nest.c, written below): N times "lock A,
#    lock B, unlock B, unlock A" on one thread, timed plain, under syncprof
#    (hold=1, lock_order=1) and built with TSan (detect_deadlocks=0 and 1).
#    Times are per iteration, medians of REPEATS runs, and ratios to plain.
#
# Usage: bench/parts/order_vs_tsan.sh [BUILD_DIR] [REPEATS] [ITERATIONS]
#   CC (default cc) must support -fsanitize=thread.
set -u
build=${1:-build} repeats=${2:-5} iters=${3:-2000000}
src=$(cd "$(dirname "$0")/../.." && pwd)
pre=$(cd "$build" && pwd)/libsyncprof-preload.so
cases=$(cd "$build" && pwd)/tests/lockorder/lockorder_cases
cc=${CC:-cc}
[ -f "$pre" ] && [ -x "$cases" ] || { echo "build first: $pre, $cases" >&2; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

"$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=thread -D_GNU_SOURCE -pthread \
	"$src/tests/lockorder/lockorder_cases.c" -o "$tmp/cases_tsan" ||
	{ echo "order_vs_tsan: $cc cannot build with -fsanitize=thread" >&2; exit 1; }

# Cases where TSan reports a cycle that cannot deadlock (and why).
export TSAN_FALSE="readread:TSan does not know that glibc's default rwlock lets a reader in while others read
reinit:TSan keeps the edges of a mutex initialised again (pthread_mutex_init without destroy) at the same address
clean:the same re-initialised mutexes (case reinit) are part of it"

for c in abba three wrapped rwlock readread readread_wp condvar trylock recursive reinit clean; do
	TSAN_OPTIONS="detect_deadlocks=1 second_deadlock_stack=1 exitcode=0" \
		"$tmp/cases_tsan" "$c" > /dev/null 2> "$tmp/$c.tsan"
	LD_PRELOAD=$pre SYNCPROF_OPTIONS="control=0,lock_order=1,format=json,output=$tmp/$c.json" \
		"$cases" "$c" || { echo "order_vs_tsan: $cases $c failed" >&2; exit 1; }
done

python3 - "$tmp" <<'EOF' || exit 1
import json, os, re, sys
tmp = sys.argv[1]
false = dict(l.split(":", 1) for l in os.environ["TSAN_FALSE"].splitlines())
cases = ["abba", "three", "wrapped", "rwlock", "readread", "readread_wp", "condvar", "trylock",
         "recursive", "reinit", "clean"]

def tsan_cycles(path):
    """Each report: its edges as (held function, acquired function)."""
    out, acq, edges, want = [], None, [], None
    for line in open(path):
        if "WARNING: ThreadSanitizer: lock-order-inversion" in line:
            edges = []
        elif "acquired here while holding" in line:
            want = "acq"
        elif "previously acquired by the same thread here" in line:
            want = "held"
        elif want and re.match(r"\s+#1 ", line):
            fn = line.split()[1]
            if want == "acq":
                acq = fn
            else:
                edges.append((fn, acq))
            want = None
        elif line.startswith("SUMMARY: ThreadSanitizer: lock-order-inversion"):
            out.append(tuple(sorted(edges)))
    return out

def syncprof_cycles(path):
    doc = json.load(open(path))
    return [tuple(sorted((e["held"]["site"]["function"], e["acquired"]["site"]["function"])
                         for e in c["edges"])) for c in doc["lock_order"]["cycles"]]

missed = 0
print(f"{'case':12} {'TSan':>5} {'syncprof':>9}  cycles (held>acquired functions)")
for c in cases:
    t, s = tsan_cycles(f"{tmp}/{c}.tsan"), syncprof_cycles(f"{tmp}/{c}.json")
    ts, ss = sorted(set(t)), sorted(set(s))
    print(f"{c:12} {len(t):5} {len(s):9}  " +
          "; ".join(",".join(f"{h}>{a}" for h, a in cyc) for cyc in ts or ss))
    for cyc in ts:
        if cyc in ss:
            continue
        if c in false:
            print(f"{'':29}TSan only, no deadlock: {false[c]}")
        else:
            print(f"{'':29}MISSED by syncprof: {cyc}")
            missed += 1
    for cyc in ss:
        if cyc not in ts:
            print(f"{'':29}syncprof only: {cyc}")
print("(TSan counts reports, which it merges by stack; syncprof counts cycles by sites)")
if missed:
    print(f"order_vs_tsan: syncprof missed {missed} cycle(s) that TSan found")
    sys.exit(1)
print("order_vs_tsan: syncprof found every cycle TSan found")
EOF

# ---- cost -------------------------------------------------------------------
cat > "$tmp/nest.c" <<'EOF'
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
static pthread_mutex_t a = PTHREAD_MUTEX_INITIALIZER, b = PTHREAD_MUTEX_INITIALIZER;
int main(int argc, char **argv)
{
	long n = atol(argv[1]);
	struct timespec t0, t1;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (long i = 0; i < n; i++) {
		pthread_mutex_lock(&a);
		pthread_mutex_lock(&b);
		pthread_mutex_unlock(&b);
		pthread_mutex_unlock(&a);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("%.2f\n", ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / n);
	return 0;
}
EOF
"$cc" -O2 -pthread "$tmp/nest.c" -o "$tmp/nest"
"$cc" -O2 -fsanitize=thread -pthread "$tmp/nest.c" -o "$tmp/nest_tsan"
. "$(dirname "$0")/common.sh"
for mode in plain hold order tsan tsan_dd; do : > "$tmp/t.$mode"; done
for ((i = 0; i < repeats; i++)); do
	"$tmp/nest" "$iters" >> "$tmp/t.plain"
	LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1 "$tmp/nest" "$iters" \
		>> "$tmp/t.hold"
	LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,control=0,lock_order=1 "$tmp/nest" \
		"$iters" >> "$tmp/t.order"
	TSAN_OPTIONS=detect_deadlocks=0 "$tmp/nest_tsan" "$iters" >> "$tmp/t.tsan"
	TSAN_OPTIONS=detect_deadlocks=1 "$tmp/nest_tsan" "$iters" >> "$tmp/t.tsan_dd"
done
base=$(median < "$tmp/t.plain")
echo
echo "cost: lock A, lock B, unlock B, unlock A on 1 thread, $iters times; ns per iteration"
for mode in plain hold order tsan tsan_dd; do
	case $mode in
	plain) what="plain (no tool)" ;;
	hold) what="syncprof preload, hold=1" ;;
	order) what="syncprof preload, lock_order=1" ;;
	tsan) what="-fsanitize=thread, detect_deadlocks=0" ;;
	tsan_dd) what="-fsanitize=thread, detect_deadlocks=1" ;;
	esac
	m=$(median < "$tmp/t.$mode")
	printf "  %-40s %9.2f ns  %7.2fx\n" "$what" "$m" "$(echo "$m $base" | awk '{print $1 / $2}')"
done
