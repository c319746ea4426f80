#!/bin/sh
# lock_names.sh - lock names and creation sites end to end: tests/lock_names.c
# compiled in (SYNCPROF_OPTIONS) and preloaded ('syncprof run'), one row
# per lock (coalesce=0, --no-coalesce), each profile checked in every
# output by check_lock_names.py and against docs/profile.schema.json.
# Usage: lock_names.sh SYNCPROF_CLI LOCK_NAMES_INSTRUMENTED LOCK_NAMES_PLAIN PYTHON SRCDIR WORKDIR
set -u
cli=$1 inst=$2 plain=$3 python=$4 src=$5 work=$6
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
unset SYNCPROF_OPTIONS
fails=0
SYNCPROF_OPTIONS=enabled=1,coalesce=0,format=json,output=compiled.json "$inst" > inst.out 2>&1 ||
	{ echo "lock_names: FAIL: compiled in: $(tail -n 3 inst.out)"; fails=1; }
"$cli" run --no-coalesce -f json -o preload.json -- "$plain" > plain.out 2>&1 ||
	{ echo "lock_names: FAIL: preloaded: $(tail -n 3 plain.out)"; fails=1; }
[ "$fails" -eq 0 ] || exit 1
for p in compiled.json preload.json; do
	echo "lock_names: $p"
	"$python" "$src/tests/check_lock_names.py" "$cli" "$p" "$src/tests/lock_names.c" || fails=1
	"$python" "$src/tests/check_profile_schema.py" --schema "$src/docs/profile.schema.json" "$p" ||
		fails=1
done
exit "$fails"
