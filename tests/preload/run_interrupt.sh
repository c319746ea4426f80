#!/bin/bash
# run_interrupt.sh - 'syncprof run' stopped by SIGTERM or SIGINT still
# writes the program's report, complete and saying it was interrupted;
# the program's own SIGTERM handler still runs and its exit status is
# kept; a program killed outright (SIGKILL) gets one line and no stale
# -o file; a SIGKILL of run kills the program too.
# Usage: run_interrupt.sh SYNCPROF_CLI STOP_SERVER WORKDIR
#
# Every wait is bounded (10 s); no time is asserted.
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 server=$2 work=$3
mkdir -p "$work" && cd "$work" && rm -f out.* err.* rep.*
ulimit -c 0

# Background jobs of a script start with SIGINT ignored: reset it, so
# that $! is run itself with SIGINT at its default.
dfl=(python3 -c 'import os, signal, sys
signal.signal(signal.SIGINT, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])')
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
wait_until() {
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}
ready() { grep -q ready "$1"; }

# case NAME SIGNAL WANT_STATUS [handler]: run, wait for "ready", send
# SIGNAL to run alone, check its status and the report.
case_stop() {
	local name=$1 sig=$2 want=$3 mode=${4:-} pid rc
	"${dfl[@]}" "$cli" run -f json -o "rep.$name.json" -- "$server" $mode > "out.$name" \
		2> "err.$name" &
	pid=$!
	wait_until ready "out.$name" || { fail "$name: not ready: $(head -c 300 "err.$name")"; kill -KILL $pid; wait $pid; return; }
	kill "-$sig" $pid
	wait $pid
	rc=$?
	[ $rc -eq "$want" ] || fail "$name: run exited $rc, expected $want: $(head -c 300 "err.$name")"
	[ -s "rep.$name.json" ] || { fail "$name: no report: $(head -c 300 "err.$name")"; return; }
	python3 - "rep.$name.json" "SIG$sig" <<'PY' || fail "$name: report"
import json, sys
d = json.load(open(sys.argv[1]))
ok = d.get("interrupted") == sys.argv[2]
rows = [r for r in d["rows"] if r["type"] == "mutex" and r["contended"] > 0
        and (r["site"].get("function") or "") == "work"]
if not ok: print("interrupted:", d.get("interrupted"))
if not rows: print("no contended mutex row in work():", [r["site"] for r in d["rows"]])
sys.exit(0 if ok and rows else 1)
PY
	if [ -n "$mode" ]; then
		grep -q "handler ran" "out.$name" || fail "$name: the program's handler did not run"
	fi
}

case_stop term TERM 143
case_stop int INT 130
case_stop term_handler TERM 3 handler
case_stop int_handler INT 3 handler
# The table says it too.
"${dfl[@]}" "$cli" run -o rep.table.txt -- "$server" > out.table 2> err.table &
pid=$!
wait_until ready out.table && kill -TERM $pid
wait $pid
grep -q "^syncprof: interrupted by SIGTERM" rep.table.txt || fail "table: no 'interrupted' line: $(head -c 300 rep.table.txt)"

# The program killed outright: no profile, one line, an old -o file removed.
echo "an earlier run's report" > rep.kill.json
"$cli" run -f json -o rep.kill.json -- "$server" > out.kill 2> err.kill &
pid=$!
wait_until ready out.kill
kill -KILL "$(pgrep -P $pid)"
wait $pid
[ -e rep.kill.json ] && fail "kill: the earlier report is still there"
[ "$(grep -c '^syncprof: no profile' err.kill)" -eq 1 ] || fail "kill: no one-line notice: $(cat err.kill)"

# SIGKILL of run: the program dies too (parent-death signal).
"$cli" run -- "$server" > out.rk 2> err.rk &
pid=$!
wait_until ready out.rk
child=$(pgrep -P $pid)
kill -KILL $pid
wait $pid 2> /dev/null
if wait_until eval '! alive '"$child"; then :; else
	fail "SIGKILL of run left the program $child running"
	kill -KILL "$child"
fi

[ $fails -eq 0 ] && echo "run_interrupt: ok" && exit 0
exit 1
