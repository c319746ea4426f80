#!/bin/bash
# instrumented_run.sh - a program built with syncprof/instrument.h (and so
# linked with libsyncprof.so) run under 'syncprof run', which preloads the
# interposer too: one runtime must record it (lifecycle.c,
# shadowed_by_preload()) and the instrumented calls' real lock calls must
# not reach the interposer (preload/real_calls.h).  Before both, the run
# printed two reports (the second empty, the first with a profiled time of
# hours) and counted every instrumented call twice: once at its file:line,
# once at a site inside src/record/probe.c.
#
# The same with the program linked with libsyncprof.a: its runtime stands
# down too, and the preload records its calls by return address.
#
# The profile under 'syncprof run' (with and without --hold) must have the
# same rows as the compiled-in profile alone, with the same counts where
# the program's work fixes them, no row inside syncprof's own sources, and
# exactly one report.
# Usage: instrumented_run.sh SYNCPROF_CLI BANK_INSTRUMENTED[_STATIC] PYTHON WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 bank=$2 py=$3 work=$4
mkdir -p "$work" && cd "$work" && rm -f ./*.json ./*.err

SYNCPROF_OPTIONS=enabled=1,format=json,output=alone.json "$bank" 3 20000 >/dev/null 2>alone.err ||
	fail "the compiled-in run failed: $(head -c 300 alone.err)"
for hold in "" --hold; do
	name=run${hold:+-hold}
	"$cli" run -f json -o "$name.json" $hold -- "$bank" 3 20000 >/dev/null 2>"$name.err" ||
		fail "syncprof run $hold failed: $(head -c 300 "$name.err")"
	"$py" - alone.json "$name.json" <<'PY' || fail "syncprof run $hold: profile differs (above)"
import json, sys
def rows(path):
    d = json.load(open(path))
    out = {}
    for r in d["rows"]:
        s = r["site"]
        key = (r["type"], s.get("file") or "", s.get("line"), s.get("function"))
        out[key] = out.get(key, 0) + r["acquisitions"]
    return d, out
_, alone = rows(sys.argv[1])
d, run = rows(sys.argv[2])
bad = 0
for (typ, f, line, fn), n in run.items():
    if "/src/record/" in f or "/src/runtime/" in f or "probe" in (fn or ""):
        print("  a row inside syncprof: %s %s:%s %s (%d)" % (typ, f, line, fn, n)); bad = 1
if set(alone) != set(run):
    print("  rows only compiled in:", sorted(set(alone) - set(run), key=str))
    print("  rows only under run:", sorted(set(run) - set(alone), key=str)); bad = 1
for k in set(alone) & set(run):
    # the transfer and audit sites: their counts are the program's work
    if alone[k] >= 1000 and alone[k] != run[k]:
        print("  %s: %d compiled in alone, %d under run" % (k, alone[k], run[k])); bad = 1
el = d.get("elapsed_ns", 0)
if not 0 < el < 600e9:
    print("  elapsed_ns %r is not the run's" % el); bad = 1
sys.exit(bad)
PY
done
# The table: one report, not two.
"$cli" run -- "$bank" 3 20000 >/dev/null 2>table.err || fail "syncprof run (table) failed"
n=$(grep -c "^syncprof: pid [0-9]*:" table.err)
[ "$n" -eq 1 ] || fail "$n reports in the table run, expected 1: $(head -c 600 table.err)"
grep -q "probe.c" table.err && fail "the table names probe.c: $(grep probe.c table.err | head -3)"
[ $fails -eq 0 ] && echo "instrumented_run: all checks passed"
exit $((fails > 0))
