#!/bin/bash
# futex_waits.sh - futex waits through syscall() under 'syncprof run':
# the waits of futex_waits.c's own futex lock are rows of type futex at
# the program's line, their total within 10% of what the program measured
# around its lock calls; with --hold their blame names the waking line;
# every checked syscall() returns what it returns bare (value and errno),
# calls that did not sleep (EAGAIN, EFAULT, a bad op) leave no row, and
# a wait that timed out (it slept) is one.
# Also: a traced, hold-tracked run of the program has no row of the
# profiler's own (its trace writer's join).
# Usage: futex_waits.sh SYNCPROF_CLI FUTEX_WAITS SOURCE WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 prog=$2 src=$3 work=$4
mkdir -p "$work" && cd "$work" && rm -f ./*.json ./*.txt ./*.trace
line_of() { grep -n "$1" "$src" | head -1 | cut -d: -f1; }
wait_line=$(line_of LINE_WAIT) wake_line=$(line_of LINE_WAKE)
timed_line=$(line_of '"timedout"') eintr_line=$(line_of LINE_EINTR) restart_line=$(line_of LINE_RESTART)

"$prog" > bare.txt || fail "bare run failed"
"$cli" run --hold -f json -o prof.json -- "$prog" > run.txt 2> err.txt || fail "run failed: $(head -c 300 err.txt)"
"$cli" run --hold --trace t.trace -f json -o traced.json -- "$prog" > /dev/null 2> err2.txt ||
	fail "traced run failed: $(head -c 300 err2.txt)"
diff <(grep '^rc ' bare.txt) <(grep '^rc ' run.txt) > rc.diff ||
	fail "syscall() results differ from the bare run: $(cat rc.diff)"
python3 - "$wait_line" "$wake_line" "$timed_line" "$eintr_line" "$restart_line" <<'PY' || fails=$((fails + 1))
import json, re, sys
wait_line, wake_line, timed_line = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
p = json.load(open("prof.json"))
measured = int(re.search(r"measured_wait_ns (\d+)", open("run.txt").read()).group(1))
rows = [r for r in p["rows"] if r["type"] == "futex"]
bad = []
at = [r for r in rows if (r["site"].get("file") or "").endswith("futex_waits.c") and r["site"]["line"] == wait_line]
eintr_line, restart_line = int(sys.argv[4]), int(sys.argv[5])
timed = [r for r in rows if r["site"]["line"] == timed_line]
eintr = [r for r in rows if r["site"]["line"] == eintr_line]
restart = [r for r in rows if r["site"]["line"] == restart_line]
other = [r for r in rows if r not in at and r not in timed and r not in eintr and r not in restart]
# Interrupted (it slept): one wait; restarted by the kernel: still the one
# call the interposer saw.
for what, rs, line in (("interrupted", eintr, eintr_line), ("restarted", restart, restart_line)):
    if len(rs) != 1 or rs[0]["contended"] != 1:
        bad.append("the %s wait (line %d) is not one wait: %s" % (what, line, rs))
if len(timed) != 1 or timed[0]["contended"] != 1:
    bad.append("the wait that timed out (line %d) is not one wait: %s" % (timed_line, timed))
if not at:
    bad.append("no futex row at futex_waits.c:%d: %s" % (wait_line, [(r["site"].get("file"), r["site"].get("line")) for r in rows]))
if other:
    bad.append("futex rows elsewhere (calls that did not sleep?): %s" % [(r["site"].get("function"), r["site"].get("line"), r["acquisitions"]) for r in other])
wait = sum(r["wait_ns"] for r in at)
if at and not (0.9 * measured <= wait <= 1.1 * measured):
    bad.append("futex wait %.1f ms, the program measured %.1f ms (not within 10%%)" % (wait / 1e6, measured / 1e6))
if measured < 100e6:
    bad.append("the program measured only %.1f ms of waits: the test did not contend" % (measured / 1e6))
blame = [b for r in at for b in r.get("blame", [])]
if at and not any((b.get("site", {}).get("line") == wake_line) for b in blame):
    bad.append("no blame naming the waking line %d: %s" % (wake_line, json.dumps(blame)[:400]))
t = json.load(open("traced.json"))
own = [r for r in t["rows"] if "/src/" in (r["site"].get("file") or "") or "sp_" in (r["site"].get("function") or "")]
if own:
    bad.append("the profiler's own calls as rows: %s" % [(r["type"], r["site"].get("function"), r["site"].get("file")) for r in own])
for b in bad:
    print("futex_waits: FAIL:", b)
print("futex_waits: futex wait %.1f ms in %d waits, measured %.1f ms" % (wait / 1e6, sum(r["contended"] for r in at), measured / 1e6))
sys.exit(1 if bad else 0)
PY
[ "$fails" -eq 0 ] || exit 1
echo "futex_waits: ok"
