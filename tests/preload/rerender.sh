#!/bin/bash
# rerender.sh - one profile, the same bytes three ways: rendered live in the
# process ('syncprof ctl PID report', the same code as the report at exit
# and syncprof_report()), and from its saved JSON ('syncprof report'), in
# every format and with several shapes (top N, sort keys, columns, objects
# coalesced or not).
#
# The program is Debian's sysbench (its threads test: mutex lock, yield,
# unlock in a loop), run with hold tracking and stacks so that blame,
# holds, owner changes, histograms and stacks are all in the profile.
# Profiling is switched off before the reports, so the profile stays the
# same from one report to the next (the threads' time account too: it is
# kept as it stood when profiling went off).
#
# Then the same for a profile with lock-order cycles: tests/lockorder's
# program, its case "wrapped" (heap objects through a skipped wrapper: one
# cycle found twice, stacks on both ends of each edge), run with
# --lock-order --hold, so that the "Lock-order cycles" section of the table
# and the "lock_order" object of the JSON go through the same round trip.
# Usage: rerender.sh SYNCPROF_CLI WORKDIR LOCKORDER_CASES
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 work=$2 cases=$3
command -v sysbench >/dev/null || { echo "rerender: sysbench not installed: skipped"; exit 77; }
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
export SYNCPROF_CONTROL_DIR=$work/ctl

"$cli" run --hold --frames 4 -o /dev/null -- \
	sysbench threads --threads=4 --thread-locks=2 --time=100 run > sysbench.out 2>&1 &
runner=$!
pid=
for _ in $(seq 100); do
	pid=$(pgrep -P "$runner" -x sysbench)
	[ -n "$pid" ] && "$cli" ctl "$pid" status > /dev/null 2>&1 && break
	pid=
	sleep 0.1
done
[ -n "$pid" ] || { echo "rerender: sysbench did not start under syncprof"; kill $runner; exit 1; }
sleep 1
"$cli" ctl "$pid" off > /dev/null || fail "ctl off"
# A wait under way when profiling went off is still counted when it ends:
# on a loaded machine that can take seconds (CI saw a 1.8 s wait end after
# the 0.5 s this test used to sleep).  Wait until two reports a second
# apart are the same (at most 60 s).
prev= stable=
for _ in $(seq 60); do
	sleep 1
	cur=$("$cli" ctl "$pid" report -f json --no-coalesce 2>/dev/null) || break
	[ -n "$prev" ] && [ "$cur" = "$prev" ] && { stable=1; break; }
	prev=$cur
done
[ -n "$stable" ] || fail "the profile did not settle after ctl off"

# saved.json: coalesced (the default); objs.json: one row per lock.
"$cli" ctl "$pid" report -f json > saved.json || fail "ctl report -f json"
"$cli" ctl "$pid" report -f json --no-coalesce > objs.json || fail "ctl report --no-coalesce"
grep -q '"blame":\[{' saved.json || fail "the profile has no blame: nothing to compare"
grep -q '"stack":\[{' saved.json || fail "the profile has no stacks: nothing to compare"
grep -q '"hold_tracking":true' saved.json || fail "the profile says no hold tracking"
# The threads' time account (frozen when profiling went off) goes through
# the same round trip: its totals, and its threads one per line.
grep -q '"accounting":{"threads":[1-9][0-9]*,"exited":[0-9]*,"lifetime_ns":[1-9]' saved.json ||
	fail "the profile has no time account"
grep -q '^{"tid":[0-9]*,"name":"sysbench","exited":false,"lifetime_ns":' saved.json ||
	fail "the profile lists no sysbench thread"

# compare NAME SAVED -- REPORT OPTIONS
compare() {
	local name=$1 saved=$2
	shift 3
	"$cli" ctl "$pid" report "$@" > "live.$name" 2> "live.$name.err" ||
		fail "ctl report $*: $(head -c 300 "live.$name.err")"
	"$cli" report "$@" "$saved" > "loaded.$name" 2> "loaded.$name.err" ||
		fail "report $* $saved: $(head -c 300 "loaded.$name.err")"
	[ -s "live.$name" ] || fail "ctl report $*: empty"
	cmp -s "live.$name" "loaded.$name" ||
		fail "$* differs live and from $saved: $(diff <(cat -v "live.$name") \
			<(cat -v "loaded.$name") | head -n 6)"
}

n=0
for f in table json csv folded pprof html; do
	compare "$f" saved.json -- -f "$f"
	compare "$f-objs" objs.json -- -f "$f" --no-coalesce
	compare "$f-coalesced-from-objs" objs.json -- -f "$f"
	n=$((n + 3))
done
for shape in "-n 2 -s avg" "-s hold" "-s max -n 3" "-s count" "-s contended"; do
	# shellcheck disable=SC2086
	compare "shape$n" saved.json -- $shape
	# shellcheck disable=SC2086
	compare "shape$n-json" objs.json -- -f json --no-coalesce $shape
	n=$((n + 2))
done
compare columns saved.json -- --columns site,wait,hold,max_hold,owner_chg,p50,p90,p99
compare src-root saved.json -- --src-root /usr
n=$((n + 2))

# The report at exit of the same program is the live report too: check it
# holds what the saved one does (blame lines in the table).
grep -q 'blame: waited' live.table || fail "the live table has no blame lines"
grep -q 'blame: waited' loaded.table || fail "the re-rendered table has no blame lines"
grep -q '^syncprof: threads blocked [0-9.]* s: [0-9.]* s in the waits below' loaded.table ||
	fail "the re-rendered table does not say what the rows explain"

kill "$pid" 2> /dev/null
wait "$runner" 2> /dev/null

# start_under_run NAME RUN-OPTIONS... -- PROGRAM ARGS...: start it under
# 'syncprof run', wait until it printed "ready" and its control socket
# answers; sets runner, pid.
start_under_run() {
	local name=$1
	shift
	"$cli" run "$@" > "$name.out" 2>&1 &
	runner=$!
	pid=
	for _ in $(seq 100); do
		pid=$(pgrep -P "$runner")
		[ -n "$pid" ] && grep -q '^ready$' "$name.out" &&
			"$cli" ctl "$pid" status > /dev/null 2>&1 && return 0
		pid=
		sleep 0.1
	done
	echo "rerender: $name did not start under syncprof"
	kill "$runner"
	return 1
}

if start_under_run lockorder --lock-order --hold --frames 4 --skip '^acct_lock$' \
	--skip '^acct_unlock$' -o /dev/null -- "$cases" wrapped wait; then
	"$cli" ctl "$pid" off > /dev/null || fail "lock order: ctl off"
	"$cli" ctl "$pid" report -f json > lo.json || fail "lock order: ctl report -f json"
	"$cli" ctl "$pid" report -f json --no-coalesce > lo-objs.json ||
		fail "lock order: ctl report --no-coalesce"
	grep -q '"lock_order":{"edges_kept":4,' lo.json || fail "lock order: no \"lock_order\""
	grep -q '"count":2,"edges":\[{"held":{"object":"0x[0-9a-f]*","type":"mutex","site":{"function":"transfer"' \
		lo.json || fail "lock order: the cycle is not in lo.json"
	grep -q '"stack":\[{' lo.json || fail "lock order: no stacks to compare"
	# (not folded: it has the rows that waited, and none did here)
	for f in table json csv pprof; do
		compare "lo-$f" lo.json -- -f "$f"
		compare "lo-$f-objs" lo-objs.json -- -f "$f" --no-coalesce
		n=$((n + 2))
	done
	compare lo-shape lo.json -- -n 1 -s count --src-root /
	n=$((n + 1))
	grep -q '^Lock-order cycles (potential deadlocks): 1 ' live.lo-table ||
		fail "lock order: the live table has no cycle section"
	grep -q 'while holding mutex' loaded.lo-table ||
		fail "lock order: the re-rendered table has no edge lines"
	kill "$pid" 2> /dev/null
	wait "$runner" 2> /dev/null
else
	fails=$((fails + 1))
fi
echo "rerender: $((n - fails)) passed, $fails failed"
[ "$fails" -eq 0 ]
