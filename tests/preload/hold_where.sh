#!/bin/bash
# hold_where.sh - where in a long critical section the holder spent its
# time (issue 24, part 2; record/holdstate.c with frames=N): hold_where.c
# sleeps then computes inside each hold.  Preloaded under 'syncprof run
# --hold --frames 4 --hold-where all' and compiled in (-include
# syncprof/instrument.h, hold=1,frames=4,hold_where=all), the lock's row
# has "hold_where" points in where_sleep() (clock_nanosleep) and
# where_spin() (running), each within 15 points of the share the program
# measured, together at least 80% of the row's hold states (a nanosleep
# that the signal cut short sleeps again: counted, said); the table prints
# the points under the "held long" line; a re-render is byte-identical and
# valid against the schema.  By default (hold_where=blocked: no signal)
# only the sleep has a point and no nanosleep is cut short (the program
# fails otherwise); with --hold-where 0 there is no point.
# Usage: hold_where.sh SYNCPROF_CLI PRELOADED_PROG COMPILED_PROG SOURCE WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 prog=$2 compiled=$3 src=$4 work=$5
here=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$work" && cd "$work" && rm -f ./*.json ./*.txt ./*.err || exit 1
hold_line=$(grep -n "/\* LINE_HOLD \*/" "$src" | head -1 | cut -d: -f1)

check() { # HOW JSON TRUTH_FILE
	python3 - "$1" "$2" "$3" "$hold_line" <<'PY'
import json, re, sys
how, path, truth_file, line = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
m = re.search(r"truth sleep_ns (\d+) spin_ns (\d+) eintr (\d+)", open(truth_file).read())
sleep, spin, eintr = int(m.group(1)), int(m.group(2)), int(m.group(3))
p = json.load(open(path))
def fail(msg):
    print("hold_where: FAIL: %s: %s" % (how, msg))
    sys.exit(1)
rows = [r for r in p["rows"] if r["site"].get("line") == line and r["type"] == "mutex"]
if len(rows) != 1:
    fail("%d mutex rows at line %d" % (len(rows), line))
r = rows[0]
states = sum((r.get("hold_states") or {}).values())
where = r.get("hold_where") or []
total = sum(w["ns"] for w in where)
def fn(w):
    s = w.get("site") or {}
    return s.get("function", "")
shown = "; ".join("%s %s %.1f ms" % (fn(w) or "(rest)", w["state"], w["ns"] / 1e6) for w in where)
if not where or total < 0.8 * states:
    fail("the points cover %.1f ms of %.1f ms of hold states: %s" % (total / 1e6, states / 1e6, shown))
def share(func, state):
    return sum(w["ns"] for w in where if fn(w) == func and w["state"] == state) / total
want = {("where_sleep", "syscall:clock_nanosleep"): sleep / (sleep + spin),
        ("where_spin", "running"): spin / (sleep + spin)}
for (func, state), truth in want.items():
    got = share(func, state)
    if abs(got - truth) > 0.15:
        fail("%s in %s: %.0f%% of the time sampled, the program measured %.0f%%: %s" % (
            func, state, 100 * got, 100 * truth, shown))
# Points elsewhere: compiled in, syncprof's own release code (linked into
# the program, so not stepped over as the preload library is) holds the
# lock for its last instructions; a sample may land there, rarely.  (A
# point in code without line information has "file": null.)
elsewhere = sum(w["ns"] for w in where if w.get("site") and not (
    (w["site"].get("file") or "").endswith("hold_where.c") and w["site"].get("line")))
if elsewhere > 0.05 * total:
    fail("%.1f ms at points outside hold_where.c: %s" % (elsewhere / 1e6, shown))
if not p.get("hold_where_points"):
    fail("no hold_where_points")
print("hold_where: %s: %s (truth: sleep %.1f ms, spin %.1f ms; %d points, %d lost; "
      "%d nanosleep cut short by the signal)" % (
    how, shown, sleep / 1e6, spin / 1e6, p["hold_where_points"], p.get("hold_where_lost", 0), eintr))
PY
}

"$cli" run --hold --frames 4 --hold-where all -f json -o pre.json -- "$prog" > pre.txt 2> pre.err ||
	die "preloaded: run exited $?: $(head -c 300 pre.err)"
check preloaded pre.json pre.txt || fails=$((fails + 1))
"$cli" report pre.json > pre.table 2>&1 || fail "report of pre.json exited $?"
grep -Eq "^      at where_sleep hold_where.c:[0-9]+, in clock_nanosleep\(\): [0-9.]+ s \([0-9]+% of the time sampled there\)\$" \
	pre.table || fail "the table has no point in where_sleep: $(grep -A4 'held long' pre.table)"
grep -Eq "^      at where_spin hold_where.c:[0-9]+, running: " pre.table ||
	fail "the table has no point in where_spin: $(grep -A4 'held long' pre.table)"
"$cli" report -f json pre.json > pre.again.json && cmp -s pre.json pre.again.json ||
	fail "the re-rendered JSON differs"
python3 "$here/check_profile_schema.py" pre.json > /dev/null || fail "pre.json: not valid against the schema"

SYNCPROF_OPTIONS="enabled=1,hold=1,frames=4,hold_where=all,format=json,output=ci.json,control=0" \
	"$compiled" > ci.txt 2> ci.err || die "compiled in: exited $?: $(head -c 300 ci.err)"
check "compiled in" ci.json ci.txt || fails=$((fails + 1))

# By default (hold_where=blocked): the sleep's point, none while running
# (no signal); with --hold-where 0: no point at all.
points() { # JSON -> "function state" per point of the held lock's row
	python3 -c 'import json, sys
p = json.load(open(sys.argv[1]))
for r in p["rows"]:
    if r["site"].get("line") == int(sys.argv[2]):
        for w in r.get("hold_where", []):
            print((w.get("site") or {}).get("function", "-"), w["state"])' "$1" "$hold_line"
}
"$cli" run --hold -f json -o blocked.json -- "$prog" strict > blocked.txt 2> blocked.err ||
	die "default hold_where: run exited $?: $(head -c 300 blocked.err)"
points blocked.json | grep -qx "where_sleep syscall:clock_nanosleep" ||
	fail "default hold_where: no point in where_sleep: $(points blocked.json)"
! points blocked.json | grep -q " running\$" ||
	fail "default hold_where: a running point (no signal is sent by default): $(points blocked.json)"
"$cli" run --hold --hold-where 0 -f json -o off.json -- "$prog" strict > off.txt 2> off.err ||
	die "--hold-where 0: run exited $?: $(head -c 300 off.err)"
[ -z "$(points off.json)" ] || fail "--hold-where 0: points: $(points off.json)"
"$cli" run --hold --hold-where sometimes -- "$prog" > bad.txt 2> bad.err &&
	fail "--hold-where sometimes was accepted"
grep -q "bad value .sometimes. for --hold-where" bad.err || fail "--hold-where sometimes: no clear error: $(cat bad.err)"
[ "$fails" -eq 0 ] || exit 1
echo "hold_where: ok"
