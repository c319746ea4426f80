#!/bin/sh
# account.sh - the threads' time account (docs/accounting.md) of
# tests/account_prog.c, whose worker sleeps, reads an empty pipe, waits
# for a mutex and computes, about 300 ms each:
#   run.json       under 'syncprof run' (preloaded; the profile goes to run
#                  as JSON and is re-rendered there: tools/syncprof/run_report.c)
#   preload.json   preloaded by hand, the report at exit written by the process
#   compiled.json  compiled in (-include syncprof/instrument.h)
#   off.json       preloaded with account=0: no account
# each checked by check_account.py against what the program measured, and
# against the schema; then run.json re-rendered ('syncprof report') must
# give the same bytes, its table must say what the rows explain, and a
# profile whose kernel gave no schedstat must say so instead of zeros.
# With PROG and PRELOAD_LIB "-", the compiled-in run alone (account_compiled:
# the sanitizer trees run it, the preload being out of their reach).
# Usage: account.sh SYNCPROF_CLI PROG PROG_INSTRUMENTED PRELOAD_LIB PYTHON SRCDIR WORKDIR
. "$(dirname "$0")/lib.sh"
set -u
cli=$1 prog=$2 prog_instr=$3 preload=$4 python=$5 src=$6 work=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
unset SYNCPROF_OPTIONS
check() { "$python" "$src/tests/check_account.py" "$@" || fails=$((fails + 1)); }
schema() {
	"$python" "$src/tests/check_profile_schema.py" --schema "$src/docs/profile.schema.json" "$@" ||
		fail "schema: $*"
}

if [ "$prog" = - ]; then
	SYNCPROF_OPTIONS=enabled=1,format=json,output=compiled.json "$prog_instr" \
		> compiled.out 2>&1 || fail "compiled in: $(tail -n 3 compiled.out)"
	check compiled.json compiled.out "compiled in"
	schema compiled.json
	"$cli" report -f json compiled.json > again.json 2> again.err || fail "report -f json"
	cmp -s compiled.json again.json || fail "compiled.json re-rendered differs"
	echo "account: $fails failed"
	[ "$fails" -eq 0 ]
	exit
fi
"$cli" run -f json -o run.json -- "$prog" > run.out 2>&1 || fail "syncprof run: $(tail -n 3 run.out)"
check run.json run.out "syncprof run" exact
LD_PRELOAD=$preload SYNCPROF_OPTIONS=enabled=1,format=json,output=preload.json "$prog" \
	> preload.out 2>&1 || fail "preloaded: $(tail -n 3 preload.out)"
check preload.json preload.out preloaded exact
SYNCPROF_OPTIONS=enabled=1,format=json,output=compiled.json "$prog_instr" > compiled.out 2>&1 ||
	fail "compiled in: $(tail -n 3 compiled.out)"
check compiled.json compiled.out "compiled in"
schema run.json preload.json compiled.json
# account=0: nothing read, no account in the report
LD_PRELOAD=$preload SYNCPROF_OPTIONS=enabled=1,account=0,format=json,output=off.json "$prog" \
	> off.out 2>&1 || fail "account=0: $(tail -n 3 off.out)"
grep -q '"rows":' off.json || fail "account=0: no profile"
grep -q '"accounting"\|"threads"' off.json && fail "account=0: the profile has an account"

"$cli" report -f json run.json > again.json 2> again.err || fail "report -f json: $(cat again.err)"
cmp -s run.json again.json || fail "run.json re-rendered differs: $(diff run.json again.json | head -n 4)"
"$cli" report run.json > table.txt 2>&1 || fail "report run.json: $(cat table.txt)"
grep -Eq '^syncprof: [0-9]+ threads \([0-9]+ exited\) lived [0-9.]+ s: [0-9.]+ s running, [0-9.]+ s preempted, [0-9.]+ s blocked$' \
	table.txt || fail "the table has no lifetime line: $(head -n 5 table.txt)"
grep -Eq '^syncprof: threads blocked [0-9.]+ s: [0-9.]+ s in the waits below, [0-9.]+ s elsewhere \(I/O, sleep, poll\)$' \
	table.txt || fail "the table has no 'threads blocked' line: $(head -n 5 table.txt)"

# No schedstat: the loader keeps the reason, the table says it, no zeros.
"$python" - run.json > nosched.json <<'PY' || fail "cannot write nosched.json"
import json, sys
p = json.load(open(sys.argv[1]))
p.pop("threads")
p["accounting"] = {"unavailable": "/proc/self/task/TID/schedstat: No such file or directory"}
print(json.dumps(p))
PY
"$cli" report nosched.json > nosched.txt 2>&1 || fail "report nosched.json: $(cat nosched.txt)"
grep -q '^syncprof: no thread time account: the kernel gives no per-thread schedstat (/proc/self/task/TID/schedstat: No such file or directory)$' \
	nosched.txt || fail "no schedstat: the table does not say so: $(head -n 4 nosched.txt)"
grep -q 'threads blocked' nosched.txt && fail "no schedstat: the table prints figures"
"$cli" report -f json nosched.json > nosched2.json 2>&1 || fail "report -f json nosched.json"
grep -q '"accounting":{"unavailable":"/proc/self/task/TID/schedstat: No such file or directory"},' \
	nosched2.json || fail "no schedstat: the JSON does not keep the reason"
schema nosched2.json
echo "account: $fails failed"
[ "$fails" -eq 0 ]
