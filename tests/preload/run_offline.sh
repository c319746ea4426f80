#!/bin/bash
# run_offline.sh - the report at exit under 'syncprof run' is named by run,
# outside the program (run_report.c), and must be what the program would
# have printed itself (--symbolize inprocess):
#   - the same bytes, table and JSON, for a preloaded program with
#     interposed sites (stacks into libc, a site in another DSO, creation
#     sites, hold tracking) and for one built with instrument.h; only the timings
#     differ between two runs, so the table shows no timing column and the
#     JSON is compared without its times; ASLR is off (setarch -R) so that
#     both runs have the same addresses;
#   - -o FILE.%p: the program's pid, the file written whole;
#   - the program names no address: with SYNCPROF_TEST_NO_SYMBOLIZE=1 its
#     symbolizer aborts it, which it must not reach (and does, inprocess);
#   - no private directory (TMPDIR missing): said, and the program reports
#     itself; a hand-off that fails (RLIMIT_FSIZE): said, the same;
#   - a forked child hands its profile over too; exec, _exit and a death by a
#     signal leave no report and nothing in TMPDIR.
#   - lock-order cycles (tests/lockorder's case "wrapped"): their ends'
#     sites and stacks named alike.
# Usage: run_offline.sh SYNCPROF_CLI RUN_OFFLINE RUN_OFFLINE_INSTRUMENTED WORKDIR
#        LOCKORDER_CASES
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 plain=$2 inst=$3 work=$4 cases=$5
rm -rf "$work" && mkdir -p "$work/tmp" && cd "$work" || exit 1
export TMPDIR=$work/tmp SYNCPROF_CONTROL_DIR=$work/ctl
unset SYNCPROF_OPTIONS
setarch -R true 2> /dev/null || { echo "run_offline: setarch -R does not work here: skipped"; exit 77; }

tmp_empty() { [ -z "$(ls -A "$TMPDIR")" ] || fail "$1: left in TMPDIR: $(ls -A "$TMPDIR")"; }
# The header's pid and profiled time, blame's waited seconds, threads' ids,
# the threads' time account's figures, the hold ticker's lateness (a
# loaded machine) and the long holds' states and points' times (sampled)
# differ from run to run.
norm() {
	sed -E '/^syncprof: the hold ticker was late /d;
		/^syncprof: the waits exceed the blocked time /d;
		/^    held long [0-9.]+ s: /d;
		/^ +[0-9.]+ s  [a-z0-9_]+\(\)  holding /d;
		/^System calls under locks /d; /^  \([0-9]+ more\)$/d; /^$/d;
		s/; during their long holds the holders were .*//;
		s/^syncprof: pid [0-9]+: /syncprof: pid N: /;
		s/^syncprof: [0-9.]+ s profiled/syncprof: T s profiled/;
		s/^(syncprof: [0-9]+ threads? \([0-9]+ exited\) lived) .*/\1 T/;
		s/^syncprof: threads blocked .*/syncprof: threads blocked T/;
		/^      at .*: [0-9.]+ s \([0-9]+% of the time sampled there\)$/d;
		s/waited [0-9.]+ s/waited T s/; s/^  thread [0-9]+ took/  thread N took/' "$1"
}
# JSON without what depends on time or on the pid.
jnorm() {
	python3 - "$1" <<'PY'
import json, re, sys
def strip(v):
    if isinstance(v, dict):
        # the points of long holds are sampled: which ones a run has varies
        # with the machine's load (CI), so they are compared apart, by
        # address (same_points below)
        v = {k: x for k, x in v.items() if k != "hold_where"}
        return {k: strip(x) for k, x in v.items()
                if not re.search(r"(_ns|_hist|_buckets|^pid|^holds|^hold_late_ticks|^hold_ticker_late|^hold_states|^hold_state_.*|^hold_where_(points|lost)|^syscalls_under_lock|^thread|^tid)$", k)}
    if isinstance(v, list):
        return [strip(x) for x in v]
    return v
def addresses(v, out):
    # the addresses whose mappings a profile keeps (report/mappings.c,
    # addrs_collect(): not creation sites, not wait chains' roots)
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "address" and isinstance(x, str):
                out.add(int(x, 16))
            if k not in ("created_at", "root"):
                addresses(x, out)
    elif isinstance(v, list):
        for x in v:
            addresses(x, out)
    return out
text = open(sys.argv[1]).read()
p = strip(json.loads(text))
# a mapping that only the sampled points needed goes with them (a point
# in the program's own code kept its mapping in one run, and with it the
# mapping of a named creation site there, which the other run trimmed)
used = addresses({k: x for k, x in p.items() if k != "mappings"}, set())
if isinstance(p.get("mappings"), list):
    p["mappings"] = [m for m in p["mappings"] if any(
        int(m["start"], 16) <= a < int(m["limit"], 16) for a in used)]
print(json.dumps(p, indent=1, sort_keys=True))
PY
}

# same_points IN OUT: the sampled points of long holds (hold_where) that
# both JSON reports have, by address (ASLR is off), are named alike.
same_points() {
	python3 - "$1" "$2" <<'PY'
import json, sys
def points(path):
    seen = {}
    def walk(v):
        if isinstance(v, dict):
            for w in v.get("hold_where") or []:
                s = w.get("site") or {}
                seen[s.get("address")] = json.dumps(s, sort_keys=True)
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(json.load(open(path)))
    return seen
a, b = points(sys.argv[1]), points(sys.argv[2])
bad = [(k, a[k], b[k]) for k in a.keys() & b.keys() if a[k] != b[k]]
if bad:
    print("hold points named differently: %s" % bad[:3])
    sys.exit(1)
PY
}

# same NAME PROGRAM -- RUN OPTIONS: the program's report named in it and
# named by run, compared.
same() {
	local name=$1 prog=$2 arg=
	shift 3
	case $prog in *lockorder_cases) arg=wrapped ;; esac
	setarch -R "$cli" run --symbolize inprocess "$@" -- "$prog" $arg > "$name.in.out" 2> "$name.in.err" ||
		fail "$name: inprocess: exit $?: $(head -c 300 "$name.in.err")"
	setarch -R "$cli" run "$@" -- "$prog" $arg > "$name.off.out" 2> "$name.off.err" ||
		fail "$name: offline: exit $?: $(head -c 300 "$name.off.err")"
	tmp_empty "$name"
	grep -Eq '^(syncprof: pid|\{"format":"syncprof-profile")' "$name.off.err" ||
		fail "$name: no report: $(head -c 300 "$name.off.err")"
	if grep -q "^{" "$name.off.err"; then
		jnorm "$name.in.err" > "$name.in.norm" && jnorm "$name.off.err" > "$name.off.norm" ||
			fail "$name: not JSON"
		same_points "$name.in.err" "$name.off.err" > "$name.points" ||
			fail "$name: $(cat "$name.points")"
	else
		norm "$name.in.err" > "$name.in.norm"
		norm "$name.off.err" > "$name.off.norm"
	fi
	cmp -s "$name.in.norm" "$name.off.norm" ||
		fail "$name: named by run differs: $(diff "$name.in.norm" "$name.off.norm" | head -n 8)"
}
cols=(-s count --columns type,object,site,count,contended)

same plain-table "$plain" -- "${cols[@]}"
grep -q "try_held run_offline.c:" plain-table.off.err || fail "plain-table: sites not named: $(cat plain-table.off.err)"
grep -q "early_lib_work early_lib.c:" plain-table.off.err || fail "plain-table: the DSO's site not named"
same plain-objects "$plain" -- "${cols[@]}" --no-coalesce --hold
grep -q "lock created at lock_made\|lock created at main run_offline.c" plain-objects.off.err ||
	fail "plain-objects: no creation site: $(cat plain-objects.off.err)"
same plain-json "$plain" -- -f json -s count --no-coalesce --hold --frames 6
python3 - plain-json.off.err 2> plain-json.py.err <<'PY' || fail "plain-json: $(tail -n 3 plain-json.py.err)"
import json, sys
p = json.load(open(sys.argv[1]))
funcs = {f.get("function") for r in p["rows"] for f in [r["site"]] + (r.get("stack") or [])}
assert "try_held" in funcs and "wait_past" in funcs and "main" in funcs, funcs
assert any(r.get("created_at") for r in p["rows"]), "no created_at"
assert p.get("mappings"), "no mappings"
PY
same plain-json-coalesced "$plain" -- -f json -s count
same inst-table "$inst" -- "${cols[@]}"
grep -q "run_offline.c:" inst-table.off.err || fail "inst-table: no instrumented site: $(cat inst-table.off.err)"
same inst-json "$inst" -- -f json -s count --no-coalesce --hold
lo=(--lock-order --frames 4 --skip '^acct_lock$' --skip '^acct_unlock$')
same lockorder-table "$cases" -- "${lo[@]}" "${cols[@]}"
grep -q "^  thread [0-9]* took mutex 0x[0-9a-f]* at transfer lockorder_cases.c:" lockorder-table.off.err ||
	fail "lockorder-table: no named cycle: $(cat lockorder-table.off.err)"
same lockorder-json "$cases" -- "${lo[@]}" -f json --no-coalesce

# -o FILE.%p: the program's pid; nothing on stderr.
setarch -R "$cli" run -s count --columns type,site,count -o "out.%p.txt" -- "$plain" > o.out 2> o.err ||
	fail "-o: exit $?: $(head -c 300 o.err)"
[ -s o.err ] && fail "-o: stderr says: $(head -c 300 o.err)"
f=$(ls out.*.txt 2> /dev/null)
pid=${f#out.}
pid=${pid%.txt}
grep -q "^syncprof: pid $pid: " "$f" 2> /dev/null || fail "-o: '$f' is not the report of pid $pid"
grep -q "try_held run_offline.c" "$f" 2> /dev/null || fail "-o: sites not named in '$f'"
tmp_empty "-o"

# The program names nothing; inprocess, it does (the test point works).
SYNCPROF_TEST_NO_SYMBOLIZE=1 "$cli" run -n 3 -- "$plain" > t.out 2> t.err ||
	fail "test point: offline: exit $?: $(head -c 300 t.err)"
grep -q "wait_past run_offline.c" t.err || fail "test point: offline: not named: $(head -c 300 t.err)"
( ulimit -c 0; SYNCPROF_TEST_NO_SYMBOLIZE=1 "$cli" run --symbolize inprocess -n 3 -- "$plain" > t.out 2> t.err )
rc=$?
[ $rc -eq 134 ] || fail "test point: inprocess: exit $rc, expected 134 (SIGABRT): $(head -c 300 t.err)"
grep -q "killed by signal 6" t.err || fail "test point: inprocess: $(head -c 300 t.err)"
tmp_empty "test point"

# No private directory: said; the program reports (and names) itself.
TMPDIR=$work/no/such/dir "$cli" run -n 3 -- "$plain" > n.out 2> n.err || fail "no TMPDIR: exit $?"
grep -q "^syncprof run: cannot create a private directory in '$work/no/such/dir' (No such file or directory): the program names its report's call sites itself$" n.err ||
	fail "no TMPDIR: not said: $(head -c 300 n.err)"
grep -q "wait_past run_offline.c" n.err || fail "no TMPDIR: no report: $(head -c 300 n.err)"
( TMPDIR=$work/no/such/dir SYNCPROF_TEST_NO_SYMBOLIZE=1 "$cli" run -n 3 -- "$plain" > n.out 2> n.err )
[ $? -eq 134 ] || fail "no TMPDIR: the program did not name its sites itself"

# The hand-off fails (1 KiB file size limit): said; the program reports
# itself (stderr through a pipe, which the limit does not cut).
( ulimit -f 1 && exec "$cli" run -f json -- "$plain" ) 2>&1 > /dev/null | cat > h.err
grep -q "^syncprof: cannot hand the profile to syncprof run ($TMPDIR/syncprof-run\.[^:]*: File too large); the program reports itself$" h.err ||
	fail "hand-off: not said: $(head -c 300 h.err)"
python3 - h.err <<'PY' || fail "hand-off: no whole report on stderr: $(head -c 300 h.err)"
import json, sys
text = open(sys.argv[1]).read()
json.loads(text[text.index("{"):])
PY
tmp_empty "hand-off"

# A forked child and the program: both reports through run.
"$cli" run -n 3 -- "$plain" fork > f.out 2> f.err || fail "fork: exit $?"
[ "$(grep -c "^syncprof: pid" f.err)" = 2 ] || fail "fork: not two reports: $(cat f.err)"
[ "$(grep "^syncprof: pid" f.err | sort -u | wc -l)" = 2 ] || fail "fork: one pid twice: $(cat f.err)"
[ "$(grep -c "wait_past run_offline.c" f.err)" = 2 ] || fail "fork: sites not named: $(cat f.err)"
tmp_empty "fork"

# exec, _exit, a signal: no report (as before), nothing left.
for m in exec exit; do
	"$cli" run -- "$plain" "$m" > e.out 2> e.err || fail "$m: exit $?"
	grep -q "^syncprof" e.err && fail "$m: a report or a message: $(head -c 300 e.err)"
	tmp_empty "$m"
done
"$cli" run -- sh -c 'kill -TERM $$' > s.out 2> s.err
rc=$?
[ $rc -eq 143 ] || fail "signal: exit $rc, expected 143"
tmp_empty "signal"

# The option is checked like any other.
"$cli" run --symbolize elsewhere -- true > b.out 2> b.err
[ $? -eq 2 ] && grep -q "bad value 'elsewhere' for --symbolize" b.err || fail "--symbolize elsewhere: $(cat b.err)"

[ $fails -eq 0 ] && echo "run_offline: all passed"
exit $((fails > 0))
