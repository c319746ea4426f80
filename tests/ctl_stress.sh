#!/bin/bash
# ctl_stress.sh - the control socket under heavy locking and thread churn:
# every 'syncprof ctl' query gets its answer.
#
# The target takes N distinct mutexes from rounds of short-lived threads
# (ctl_target churn N), so that each report has many rows to render and
# the helper thread is busy for a while per query; QUERIES queries go out
# CONCURRENT at a time, mixed status / report / report --no-coalesce -f
# json.  A query that is not answered ("closed the connection without
# answering", "Connection reset by peer") fails the test.  Before the fix,
# a client whose request waited in the socket while the helper rendered
# other clients' reports was dropped at its deadline unread.
# Usage: ctl_stress.sh SYNCPROF_CLI CTL_TARGET [N] [QUERIES] [CONCURRENT]
set -u
cli=$1 target=$2 n=${3:-40000} queries=${4:-40} conc=${5:-8}
work=$(mktemp -d)
export SYNCPROF_CONTROL_DIR=$work/ctl
fifo=$work/in
mkfifo "$fifo"
# The request deadline is cut to 250 ms (a test point): clients queued
# behind a few reports rendering are past it on any machine.
SYNCPROF_TEST_CONTROL_REQUEST_MS=250 SYNCPROF_OPTIONS=enabled=1,control=1,report_at_exit=0 "$target" churn "$n" < "$fifo" > "$work/target.out" &
pid=$!
exec 3> "$fifo" # the target runs until this closes
cleanup() { exec 3>&-; wait "$pid" 2> /dev/null; rm -rf "$work"; }
trap cleanup EXIT
for _ in $(seq 300); do
	grep -q ready "$work/target.out" 2> /dev/null && break
	sleep 0.1
done
grep -q ready "$work/target.out" || { echo "ctl_stress: target did not start"; exit 1; }

fails=0 done_=0
query() {
	local i=$1 args
	case $((i % 3)) in
	0) args="status" ;;
	1) args="report -n 5" ;;
	2) args="report --no-coalesce -f json" ;;
	esac
	# shellcheck disable=SC2086
	if ! timeout 60 "$cli" ctl "$pid" $args > "$work/q$i.out" 2> "$work/q$i.err"; then
		echo "ctl_stress: FAIL: query $i ($args): $(head -c 300 "$work/q$i.err")"
		return 1
	fi
	[ -s "$work/q$i.out" ] || { echo "ctl_stress: FAIL: query $i ($args): empty answer"; return 1; }
}
i=0
while [ $i -lt "$queries" ]; do
	pids=()
	for _ in $(seq "$conc"); do
		[ $i -lt "$queries" ] || break
		query $i & pids+=($!)
		i=$((i + 1))
	done
	for p in "${pids[@]}"; do
		if wait "$p"; then done_=$((done_ + 1)); else fails=$((fails + 1)); fi
	done
done
kill -0 "$pid" 2> /dev/null || { echo "ctl_stress: FAIL: the target died"; fails=$((fails + 1)); }
echo "ctl_stress: $done_ passed, $fails failed"
[ "$fails" -eq 0 ]
