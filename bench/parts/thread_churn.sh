#!/bin/bash
# thread_churn.sh - a short thread's start and exit, in one interleaved
# run (issue 25 part 2: at most 5 us added per thread, at most 1.2x bare):
# bench/thread_churn (N threads, 4 at a time, two locks ten times each)
#
#   bare        the plain binary
#   preload     LD_PRELOAD=libsyncprof-preload.so
#   compiled    the binary built with -include syncprof/instrument.h
#   hold+order  preloaded, SYNCPROF_OPTIONS=hold=1,lock_order=1
#   noaccount   preloaded, account=0: what the exit's time account costs
#               (its /proc reads, docs/accounting.md) is the difference
#   attach      the plain binary started bare (thread_churn -s: it waits
#               on stdin), then 'syncprof attach PID' until the loop is
#               done: the loop runs profiled after attach; the report
#               (CSV, read after the loop) must count every lock call of
#               the loop, or the run fails
#
# each REPEATS times, the modes alternating, all with report_at_exit=0
# (the program times its create/join loop only).  Prints each mode's
# median time per thread, its spread (min-max), the added time per thread
# against bare and the ratio of the medians.  The attach mode gives up,
# with its reason, when the process is not ready within 10 s, attach has
# not attached within 20 s, the loop takes longer than 60 s + 5 ms per
# thread, or attach does not detach within 30 s of its SIGTERM.
#
# Usage: bench/parts/thread_churn.sh [BUILD_DIR] [REPEATS] [N]
set -eu
. "$(dirname "$0")/common.sh"
b=${1:-build} repeats=${2:-5} n=${3:-40000}
bin=$b/bench/thread_churn inst=$b/bench/thread_churn_instrumented
pre=$(cd "$b" && pwd)/libsyncprof-preload.so sp=$b/syncprof
for f in "$bin" "$inst" "$pre" "$sp"; do
	[ -e "$f" ] || { echo "thread_churn: build $f first (make build)" >&2; exit 1; }
done
modes="bare preload compiled hold+order noaccount attach"
declare -A runs
tmp=$(mktemp -d)
tc_pid= at_pid=
cleanup() { # a failed attach mode leaves its processes: end them
	# (set -e holds in traps too: nothing here may fail)
	[ -z "$tc_pid" ] || kill -KILL "$tc_pid" 2> /dev/null || :
	exec 3>&-
	[ -z "$at_pid" ] || end_process "$at_pid"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
fail() { echo "thread_churn: attach: $*" >&2; exit 1; }
# until SECONDS COMMAND...: true as soon as COMMAND is, false after SECONDS
until_s() {
	local end=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt $end ] || return 1
		sleep 0.05
	done
}
alive() { kill -0 "$1" 2> /dev/null; }
attached() { grep -q "attached to process" "$tmp/attach.err" || ! alive "$at_pid"; }
detached() { ! alive "$at_pid"; }
# The attach mode: prints thread_churn's result line, as the others do.
attach_run() {
	local rc want got line
	rm -f "$tmp/in" "$tmp/outp" "$tmp/attach.out" "$tmp/attach.err" "$tmp/prof.csv"
	mkfifo "$tmp/in" "$tmp/outp"
	"$bin" -s "$n" < "$tmp/in" > "$tmp/outp" &
	tc_pid=$!
	exec 3> "$tmp/in" 4< "$tmp/outp"
	# Its lines are read as they come (bash's read, no process started):
	# a polling loop here would take CPU from the threads being timed.
	IFS= read -r -t 10 -u 4 line && [ "$line" = ready ] ||
		fail "thread_churn -s did not get ready in 10 s"
	"$sp" attach "$tc_pid" -f csv -o "$tmp/prof.csv" 2> "$tmp/attach.err" &
	at_pid=$!
	until_s 20 attached || fail "not attached after 20 s: $(cat "$tmp/attach.err")"
	alive "$at_pid" || fail "syncprof attach ended: $(cat "$tmp/attach.err")"
	echo go >&3
	IFS= read -r -t $((60 + n / 200)) -u 4 line ||
		fail "the loop of $n threads did not end in $((60 + n / 200)) s"
	echo "$line" > "$tmp/attach.out"
	exec 4<&-
	grep -q per_thread_us "$tmp/attach.out" || fail "thread_churn failed: $line"
	kill -TERM "$at_pid"
	until_s 30 detached || fail "attach did not detach 30 s after SIGTERM"
	rc=0
	wait "$at_pid" || rc=$?
	at_pid=
	[ $rc = 0 ] || fail "syncprof attach exited with $rc: $(cat "$tmp/attach.err")"
	exec 3>&-
	wait "$tc_pid" || fail "thread_churn -s exited with $?"
	tc_pid=
	want=$((n * 20))
	got=$(awk -F, '$1 == "mutex" { s += $9 } END { print s + 0 }' "$tmp/prof.csv")
	[ "$got" = "$want" ] ||
		fail "the report counts $got mutex acquisitions, the loop made $want"
	cat "$tmp/attach.out"
}
one() {
	case $1 in
	bare) SYNCPROF_OPTIONS=report_at_exit=0 "$bin" "$n" ;;
	preload) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0 "$bin" "$n" ;;
	compiled) SYNCPROF_OPTIONS=report_at_exit=0,enabled=1 "$inst" "$n" ;;
	hold+order) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,hold=1,lock_order=1 \
		"$bin" "$n" ;;
	noaccount) LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0,account=0 "$bin" "$n" ;;
	attach) attach_run ;;
	esac > "$tmp/one"
	sed -n 's/.*per_thread_us \([0-9.]*\).*/\1/p' "$tmp/one"
}
for r in $(seq "$repeats"); do
	for m in $modes; do
		one "$m" > "$tmp/v" || { echo "thread_churn: $m failed" >&2; exit 1; }
		v=$(cat "$tmp/v")
		[ -n "$v" ] || { echo "thread_churn: $m failed" >&2; exit 1; }
		runs[$m]="${runs[$m]:-} $v"
	done
done
med() { tr ' ' '\n' | sed '/^$/d' | sort -g | awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[1], v[NR]}'; }
read -r bare_med _ _ <<<"$(echo "${runs[bare]}" | med)"
echo "thread_churn: $n threads, 4 at a time, $repeats repeats interleaved (us per thread)"
printf '%-11s %9s %17s %9s %7s\n' mode median "min-max" added ratio
for m in $modes; do
	read -r md lo hi <<<"$(echo "${runs[$m]}" | med)"
	awk -v m="$m" -v md="$md" -v lo="$lo" -v hi="$hi" -v b="$bare_med" 'BEGIN {
		printf "%-11s %9.2f %8.2f-%-8.2f %9.2f %6.2fx\n", m, md, lo, hi, md - b, md / b }'
done
