#!/bin/bash
# top_batch.sh SYNCPROF BANK_INSTRUMENTED - 'syncprof top' without a
# terminal (tests/top_tmux.sh has the screen):
#   - stdout not a terminal: one snapshot, plain text (no escape byte);
#   - --batch 3: three snapshots; the first's rates are since start-up,
#     the others' over the last interval, and ACQ/s x that span is the
#     growth of ACQS between two snapshots;
#   - contention first: the rows of locks, then the waits for an event, each
#     part under its title line; --merged: one list;
#   - every sort key (-s) orders the rows by its column, within each part;
#     -n cuts the rows;
#   - profiling off: "rates: none", every rate 0;
#   - bad usage: one line on stderr, status 2; an unreachable process
#     (gone, no control socket): one line, status 1;
#   - the process exiting during --batch: "process N (...) exited", status 0.
# The target is bank built with the instrumentation (SYNCPROF_OPTIONS
# control=1): no preload library, so this runs in the sanitizer trees too.
# No timing is asserted: intervals only space the snapshots.
set -u
sp=$1 bank=$2
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
export SYNCPROF_CONTROL_DIR=$tmp/ctl
bpid=
cleanup() {
	[ -n "$bpid" ] && kill "$bpid" 2>/dev/null
	[ -n "$bpid" ] && wait "$bpid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT
fail() {
	echo "FAIL: $*" >&2
	exit 1
}
screen() { python3 "$here/top_screen.py" "$@"; }

# niced: two busy tellers for the whole test must not slow the tests beside it
SYNCPROF_OPTIONS=enabled=1,control=1,hold=1,report_at_exit=0 nice -n 19 "$bank" 2 2000000000 \
	>/dev/null 2>"$tmp/bank.err" &
bpid=$!
for _ in $(seq 200); do
	[ -S "$SYNCPROF_CONTROL_DIR/$bpid.sock" ] && break
	sleep 0.05
done
[ -S "$SYNCPROF_CONTROL_DIR/$bpid.sock" ] || fail "bank's control socket did not appear"
# until the tellers and the auditor have taken their locks
for _ in $(seq 200); do
	"$sp" top "$bpid" -s total >"$tmp/warm.txt" 2>&1
	grep -q 'journal_append bank.c:56$' "$tmp/warm.txt" && grep -q 'auditor bank.c:116$' "$tmp/warm.txt" &&
		break
	sleep 0.05
done

# ---- one snapshot, plain ------------------------------------------------------
"$sp" top "$bpid" >"$tmp/one.txt" 2>"$tmp/one.err" || fail "top: $(cat "$tmp/one.err")"
cat "$tmp/one.txt"
test "$(grep -c '^syncprof top - pid' "$tmp/one.txt")" = 1 || fail "not one snapshot"
grep -q "^syncprof top - pid $bpid: .*bank_instrumented" "$tmp/one.txt" || fail "header: pid, command"
grep -q '^profiling: on  threads: [0-9]*  rows: [0-9]' "$tmp/one.txt" || fail "header: profiling, threads, rows"
grep -q '^rates: since start-up' "$tmp/one.txt" || fail "the first rates are since start-up"
grep -q '^TYPE .*ACQ/s .*WAITS/s .*WAIT% .*WAIT .*AVG .*MAX .*HOLD .*OBJECT .*SITE$' "$tmp/one.txt" ||
	fail "column titles: $(grep ^TYPE "$tmp/one.txt")"
grep -q '^mutex .* journal_append bank.c:56$' "$tmp/one.txt" || fail "no journal_append row"
if LC_ALL=C grep -q $'\x1b' "$tmp/one.txt"; then fail "escape bytes in plain output"; fi

# ---- --batch 3: rates since the previous snapshot -------------------------------
"$sp" top "$bpid" --batch 3 -d 0.3 >"$tmp/three.txt" || fail "top --batch 3"
test "$(grep -c '^syncprof top - pid' "$tmp/three.txt")" = 3 || fail "not three snapshots"
test "$(grep -c '^rates: over the last [0-9.]* s of profiling' "$tmp/three.txt")" = 2 ||
	fail "snapshots 2 and 3: rates over the last interval: $(grep ^rates "$tmp/three.txt")"
# the auditor's condition wait: a few thousand a second, so ACQS stay exact
screen rates "$tmp/three.txt" "auditor bank.c:116" || fail "rates"

# ---- sort keys, rows --------------------------------------------------------------
for key in rate total count contended avg max hold; do
	"$sp" top "$bpid" -s "$key" >"$tmp/sort.txt" || fail "top -s $key"
	grep -q "sort: $key " "$tmp/sort.txt" || fail "-s $key: not in the header"
	screen order "$tmp/sort.txt" "$key" || fail "-s $key"
done
# contention first: the locks' rows, then the waits for an event, each under
# its title line; --merged: one list
screen parts "$tmp/one.txt" || fail "contention first"
"$sp" top "$bpid" -s total --merged >"$tmp/merged.txt" || fail "top --merged"
screen parts "$tmp/merged.txt" merged || fail "--merged"
screen order "$tmp/merged.txt" total || fail "--merged -s total"
"$sp" top "$bpid" -n 2 >"$tmp/n2.txt" || fail "top -n 2"
# the column titles, the locks' title line, 2 rows (bank has more than 2 lock rows)
test "$(sed -n '/^TYPE/,$p' "$tmp/n2.txt" | grep -c .)" = 4 || fail "-n 2: not 2 rows"
test "$(grep -c '^-- ' "$tmp/n2.txt")" = 1 || fail "-n 2: not one title line"
screen parts "$tmp/n2.txt" || fail "-n 2: contention first"
grep -q 'rows: [0-9]* (2 shown)' "$tmp/n2.txt" || fail "-n 2: header does not say 2 shown"
"$sp" top "$bpid" --no-coalesce >"$tmp/nc.txt" || fail "top --no-coalesce"
test "$(grep -c 'transfer bank.c:78' "$tmp/nc.txt")" -gt 1 || fail "--no-coalesce: one row per account lock"

# ---- profiling off: no rates --------------------------------------------------------
"$sp" ctl "$bpid" off >/dev/null || fail "ctl off"
"$sp" top "$bpid" --batch 2 -d 0.2 >"$tmp/off.txt" || fail "top, profiling off"
grep -q '^profiling: off ' "$tmp/off.txt" || fail "profiling off: not in the header"
grep -q '^rates: none (profiling was off since the last refresh)$' "$tmp/off.txt" ||
	fail "profiling off: $(grep ^rates "$tmp/off.txt")"
sed -n '/^rates: none/,$p' "$tmp/off.txt" | sed -n '/^TYPE/,$p' | tail -n +2 | grep -v '^-- ' \
	>"$tmp/off.rows" # the rows, without the parts' title lines
test -s "$tmp/off.rows" || fail "profiling off: no rows"
awk '$2 != "0" || $3 != "0" || $4 != "0.0%" { bad = 1; print "not still:", $0 } END { exit bad }' \
	"$tmp/off.rows" || fail "profiling off: rates not 0"
"$sp" ctl "$bpid" on >/dev/null || fail "ctl on"

# ---- bad usage: 2; unreachable: 1 ------------------------------------------------------
usage() {
	local out rc
	out=$("$sp" top "$@" 2>&1 >/dev/null)
	rc=$?
	test $rc = 2 || fail "top $*: status $rc, want 2"
	test "$(echo "$out" | wc -l)" = 1 || fail "top $*: not one line: $out"
	echo "top $*: $out"
}
usage
usage abc
usage 0
usage "$bpid" "$bpid"
usage "$bpid" -d 0
usage "$bpid" -d x
usage "$bpid" --interval
usage "$bpid" -s bogus
usage "$bpid" -n 0
usage "$bpid" -b 0
usage "$bpid" --frobnicate
"$sp" top --help | grep -q '^Usage: syncprof top PID' || fail "top --help"
"$sp" --help | grep -q '^  top ' || fail "syncprof --help does not list top"

sleep 300 &
spid=$!
out=$("$sp" top "$spid" 2>&1)
rc=$?
kill $spid
wait $spid 2>/dev/null
test $rc = 1 || fail "a process without a socket: status $rc"
echo "$out" | grep -q 'is not profiled with a control socket' || fail "no socket: $out"
out=$("$sp" top 999999999 2>&1)
test $? = 1 || fail "no such process: status"
echo "$out" | grep -q '^syncprof top: no process 999999999' || fail "no process: $out"

# ---- the process exits during --batch ------------------------------------------------
"$sp" top "$bpid" --batch 1000 -d 0.2 >"$tmp/exit.txt" 2>"$tmp/exit.err" &
tpid=$!
for _ in $(seq 200); do
	[ "$(grep -c '^syncprof top - pid' "$tmp/exit.txt")" -ge 2 ] && break
	sleep 0.05
done
kill "$bpid"
wait "$bpid" 2>/dev/null
bpid=
wait $tpid
rc=$?
cat "$tmp/exit.err"
test $rc = 0 || fail "the process exited: status $rc, want 0"
grep -q "^syncprof top: process [0-9]* (.*bank_instrumented.*) exited$" "$tmp/exit.err" ||
	fail "the process exited: $(cat "$tmp/exit.err")"
echo "top_batch: ok"
