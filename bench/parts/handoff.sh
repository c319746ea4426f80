#!/bin/bash
# handoff.sh - two threads handing one lock back and forth (issue 25 part
# 3: at least 0.9x of bare throughput, preloaded and compiled in, with and
# without hold=1; sysbench mutex --threads=2 within 1.05x of bare wall
# time, with and without --hold), in one interleaved run:
#
#   lockbench -t 2 -m 1 -M libc,MODE   each invocation times the profiled
#                                      loop against glibc's own calls in
#                                      the same process; the ratio is time
#                                      per operation (throughput is 1/it)
#   the floors, in the same rounds     lockbench's floortry and floortryhold
#                                      (compiled in; floortryhold also with
#                                      its pop inside the critical section,
#                                      LOCKBENCH_POP=before, and with each
#                                      lock's last owner, LOCKBENCH_OWNER=1),
#                                      libfloorshim.so plain and
#                                      FLOORSHIM=hold (preloaded): the least
#                                      such a probe does (docs/cost.md, "The
#                                      floor"), on the same two threads
#   futex calls per operation          one longer run each of bare,
#                                      compiled in with and without hold=1,
#                                      the floors with hold lists and
#                                      preloaded hold=1, under perf stat
#                                      (when it can count syscalls: root):
#                                      where a slower hand-off's time goes
#   steady state                       compiled in and preloaded, with and
#                                      without hold=1, floortry and the
#                                      floors with hold lists, each against
#                                      glibc in one round of 33 x MS: the
#                                      rounds of MS above begin with each
#                                      thread's first acquisitions and the
#                                      ticker's change of mode, which a
#                                      long run is past
#   sysbench mutex --threads=2         bare, 'syncprof run', 'syncprof run
#                                      --hold', wall time (when installed)
#
# Usage: bench/parts/handoff.sh [BUILD_DIR] [REPEATS] [MS] [ROUNDS]
set -eu
b=${1:-build} repeats=${2:-7} ms=${3:-30} rounds=${4:-21}
lb=$b/bench/lockbench pre=$(cd "$b" && pwd)/libsyncprof-preload.so sp=$b/syncprof
shim=$(cd "$b" && pwd)/bench/libfloorshim.so
for f in "$lb" "$pre" "$sp" "$shim"; do
	[ -e "$f" ] || { echo "handoff: build $f first (make build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/common.sh"
spread() { sort -g | awk 'NR==1 {lo=$1} {hi=$1} END {printf "%s-%s", lo, hi}'; }

lockbench() { # WAY OPTIONS -> time ratio to libc
	local mode=on pre_env=
	[ "$1" = preload ] && mode=plain pre_env=$pre
	env ${pre_env:+LD_PRELOAD=$pre_env} SYNCPROF_OPTIONS="report_at_exit=0,control=0$2" \
		"$lb" -M libc,$mode -t 2 -m 1 -d "$ms" -r "$rounds" |
		awk -v m=$mode '$1 == m { gsub("x", "", $4); print $4 }'
}
floor() { # compiled MODE [ENV...] | shim [hold] -> time ratio to libc
	if [ "$1" = compiled ]; then
		env ${3:-} "$lb" -M libc,$2 -t 2 -m 1 -d "$ms" -r "$rounds" |
			awk -v m=$2 '$1 == m { gsub("x", "", $4); print $4 }'
	else
		env FLOORSHIM=${2:-} LD_PRELOAD="$shim" "$lb" -M libc,plain -t 2 -m 1 -d "$ms" -r "$rounds" |
			awk '$1 == "plain" { gsub("x", "", $4); print $4 }'
	fi
}
wall() { # COMMAND... -> seconds
	local t0 t1
	t0=$(date +%s%N)
	"$@" > /dev/null 2>&1
	t1=$(date +%s%N)
	echo "scale=4; ($t1 - $t0) / 1000000000" | bc
}
sb=
command -v sysbench > /dev/null && sb="sysbench mutex --threads=2"
for i in $(seq "$repeats"); do
	lockbench compiled "" >> "$tmp/compiled-on"
	lockbench compiled ",hold=1" >> "$tmp/compiled-hold"
	lockbench preload "" >> "$tmp/preload-on"
	lockbench preload ",hold=1" >> "$tmp/preload-hold"
	floor compiled floortry >> "$tmp/floortry"
	floor compiled floortryhold >> "$tmp/floortryhold"
	floor compiled floortryhold LOCKBENCH_POP=before >> "$tmp/floortryhold-popin"
	floor compiled floortryhold LOCKBENCH_OWNER=1 >> "$tmp/floortryhold-owner"
	floor shim >> "$tmp/floorshim"
	floor shim hold >> "$tmp/floorshimhold"
	if [ -n "$sb" ]; then
		wall $sb run >> "$tmp/sb-bare"
		wall "$sp" run -o /dev/null -- $sb run >> "$tmp/sb-run"
		wall "$sp" run --hold -o /dev/null -- $sb run >> "$tmp/sb-hold"
	fi
done
echo "two threads, one lock (lockbench -t 2 -m 1): time per operation against glibc,"
echo "median of $repeats (spread); throughput is 1/ratio, the goal >= 0.9x, so ratio <= 1.11x"
for c in compiled-on compiled-hold preload-on preload-hold floortry floortryhold \
	floortryhold-popin floortryhold-owner floorshim floorshimhold; do
	[ "$c" = floortry ] && echo "the floors (docs/cost.md), compiled in and preloaded, without and with hold lists:"
	printf "  %-18s %6.3fx  (%s)  throughput %.3fx\n" "$c" "$(median < "$tmp/$c")" \
		"$(spread < "$tmp/$c")" "$(echo "1 / $(median < "$tmp/$c")" | bc -l)"
done
# In steady state: one round each of glibc and the mode, 33 x MS long,
# in one process, past the start of the threads, their first
# acquisitions (all timed) and the ticker's change of mode that rounds
# of MS begin with (docs/cost.md, "In steady state").
steady() { # MODE [VAR=VALUE...] -> time ratio to libc
	local mode=$1
	shift
	env SYNCPROF_OPTIONS=report_at_exit=0,control=0 "$@" "$lb" -M libc,"$mode" -t 2 -m 1 \
		-d $((ms * 33)) -r 1 | awk -v m="$mode" '$1 == m { gsub("x", "", $4); print $4 }'
}
for i in $(seq "$repeats"); do
	steady on >> "$tmp/st-compiled-on"
	steady on SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1 >> "$tmp/st-compiled-hold"
	steady plain LD_PRELOAD="$pre" >> "$tmp/st-preload-on"
	steady plain LD_PRELOAD="$pre" SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1 \
		>> "$tmp/st-preload-hold"
	steady floortry >> "$tmp/st-floortry"
	steady floortryhold >> "$tmp/st-floortryhold"
	steady floortryhold LOCKBENCH_OWNER=1 >> "$tmp/st-floortryhold-owner"
done
echo "the same in steady state (one round of $((ms * 33)) ms each, in one process):"
for c in compiled-on compiled-hold preload-on preload-hold floortry floortryhold \
	floortryhold-owner; do
	printf "  %-18s %6.3fx  (%s)  throughput %.3fx\n" "$c" "$(median < "$tmp/st-$c")" \
		"$(spread < "$tmp/st-$c")" "$(echo "1 / $(median < "$tmp/st-$c")" | bc -l)"
done
# Where the time goes: the futex calls per operation, counted by perf (as
# root, or with kernel.perf_event_paranoid <= -1 and tracefs readable).
fx() { # LABEL MODE [VAR=VALUE...]: one run of 10 x MS
	local label=$1 mode=$2 n mops
	shift 2
	env SYNCPROF_OPTIONS=report_at_exit=0,control=0 "$@" perf stat -x, -o "$tmp/perf" \
		-e syscalls:sys_enter_futex "$lb" -M "$mode" -t 2 -m 1 -d $((ms * 10)) -r 1 > "$tmp/lb"
	n=$(awk -F, '/sys_enter_futex/ { print $1 }' "$tmp/perf")
	mops=$(awk -v m="$mode" '$1 == m { print $3 }' "$tmp/lb")
	printf "  %-18s %8.1f ns/op  %6.3f futex calls/op  %6.2f sleeps/1000 op\n" "$label" \
		"$(awk -v m="$mode" '$1 == m { print $2 }' "$tmp/lb")" \
		"$(echo "$n / ($mops * 1000000 * $ms * 10 / 1000)" | bc -l)" \
		"$(awk -v m="$mode" '$1 == m { print $NF }' "$tmp/lb")"
}
if perf stat -e syscalls:sys_enter_futex true > /dev/null 2>&1; then
	echo "where the time goes (perf stat, one run of $((ms * 10)) ms each): a longer critical"
	echo "section makes glibc's lock find the lock taken, mark it contended and make"
	echo "futex calls, waiter and waker, most of which do not sleep"
	fx bare plain
	fx compiled-on on
	fx compiled-hold on SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1
	fx floortryhold floortryhold
	fx floortryhold-owner floortryhold LOCKBENCH_OWNER=1
	fx preload-hold plain LD_PRELOAD="$pre" SYNCPROF_OPTIONS=report_at_exit=0,control=0,hold=1
else
	echo "(perf cannot count syscalls:sys_enter_futex here: no futex calls per operation)"
fi
if [ -n "$sb" ]; then
	bare=$(median < "$tmp/sb-bare")
	echo "$sb run: wall seconds, median of $repeats (spread); goal <= 1.05x"
	for c in sb-bare sb-run sb-hold; do
		m=$(median < "$tmp/$c")
		printf "  %-15s %7.3f s  (%s)  %.3fx\n" "$c" "$m" "$(spread < "$tmp/$c")" \
			"$(echo "$m / $bare" | bc -l)"
	done
else
	echo "sysbench is not installed: apt-get install sysbench"
fi
