#!/bin/sh
# profile_schema.sh - real profiles against docs/profile.schema.json, the
# JSON Schema of "profile JSON version 1" (docs/formats.md):
#   hold.json     the example bank under 'syncprof run --hold --frames 4'
#   objects.json  the same with --no-coalesce (one row per lock object)
#   compiled.json bank_instrumented, the compiled-in instrumentation
#   report.json   hold.json re-rendered by 'syncprof report -f json'
#                 (which must also give the same bytes)
#   nohold.json   the example bank without hold tracking
#   order.json    a program with a lock-order cycle under 'syncprof run
#                 --lock-order' (tests/lockorder's case abba)
# then broken copies of hold.json, which the schema must reject
# (check_profile_schema.py --broken), so that this test can fail.
#
# python3-jsonschema is a declared dependency (.ci/packages): without it
# the test fails with a message; it is not skipped.
#
# Usage: profile_schema.sh SYNCPROF_CLI BANK BANK_INSTRUMENTED PYTHON SRCDIR WORKDIR LOCKORDER_CASES
. "$(dirname "$0")/lib.sh"
set -u
cli=$1 bank=$2 bank_instrumented=$3 python=$4 src=$5 work=$6 cases=$7
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
unset SYNCPROF_OPTIONS
schema() { "$python" "$src/tests/check_profile_schema.py" --schema "$src/docs/profile.schema.json" "$@"; }

# The dependency first, with its own message.
"$python" -c 'import jsonschema' 2> /dev/null || {
	echo "profile_schema: FAIL: $python cannot import jsonschema, a declared dependency" \
		"(.ci/packages): apt-get install python3-jsonschema, or run scripts/deps.sh"
	exit 1
}

"$cli" run --hold --frames 4 -f json -o hold.json -- "$bank" > bank.out 2>&1 ||
	fail "syncprof run --hold: $(tail -n 3 bank.out)"
"$cli" run --hold --frames 4 -f json --no-coalesce -o objects.json -- "$bank" \
	> bank.out 2>&1 || fail "syncprof run --no-coalesce: $(tail -n 3 bank.out)"
SYNCPROF_OPTIONS=enabled=1,format=json,output=compiled.json "$bank_instrumented" \
	> bank.out 2>&1 || fail "bank_instrumented: $(tail -n 3 bank.out)"
"$cli" report -f json hold.json > report.json 2> report.err ||
	fail "syncprof report -f json: $(cat report.err)"
"$cli" run --frames 4 -f json -o nohold.json -- "$bank" > bank.out 2>&1 ||
	fail "syncprof run (no hold): $(tail -n 3 bank.out)"
"$cli" run --lock-order --frames 4 -f json -o order.json -- "$cases" abba > order.out 2>&1 ||
	fail "syncprof run --lock-order: $(tail -n 3 order.out)"
[ "$fails" -eq 0 ] || exit 1

# Each profile must exercise the part of the schema it is here for.
grep -q '"hold_tracking":true' hold.json || fail "hold.json: no hold tracking"
grep -q '"blame":\[{' hold.json || fail "hold.json: no blame entry to check"
grep -q '"stack":\[{' hold.json || fail "hold.json: no stack frame to check"
grep -q '"wait_buckets":\[\[' hold.json || fail "hold.json: no wait bucket to check"
grep -q '"hold_buckets":\[\[' hold.json || fail "hold.json: no hold bucket to check"
grep -q '"coalesced":false' objects.json || fail "objects.json: coalesced"
grep -q '"address":null' compiled.json || fail "compiled.json: not instrumented sites"
grep -q '"hold_tracking":false' nohold.json || fail "nohold.json: hold tracking on"
grep -q '"hold_ns":null' nohold.json || fail "nohold.json: no null hold_ns"
grep -q '"lock_order":{"edges_kept":2,' order.json && grep -q '^{"count":1,"edges":\[{"held"' \
	order.json || fail "order.json: no lock-order cycle to check"
cmp -s hold.json report.json || fail "syncprof report -f json does not give the saved bytes back"

schema hold.json objects.json compiled.json report.json nohold.json order.json ||
	fail "schema validation"
schema --broken hold.json > broken.txt || { cat broken.txt; fail "broken profiles"; }
tail -n 1 broken.txt

[ "$fails" -eq 0 ] && echo "profile_schema: ok"
[ "$fails" -eq 0 ]
