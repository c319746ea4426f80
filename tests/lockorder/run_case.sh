#!/bin/sh
# run_case.sh - one lock-order test: run a case of lockorder_cases with
# lock-order checking on, one of three ways, and check the profile's
# cycles with check_lock_order.py.
#
# Usage: run_case.sh WAY TOOL PROGRAM CASE PYTHON CHECKER WORKDIR [OPTIONS] -- CHECK-ARGS...
#   WAY preload:  TOOL is libsyncprof-preload.so; PROGRAM an unmodified build
#   WAY compiled: TOOL is unused (-); PROGRAM built with syncprof/instrument.h
#   WAY cli:      TOOL is the syncprof CLI: 'syncprof run --lock-order'
#   OPTIONS: more SYNCPROF_OPTIONS keys, ",key=value,..." (cli: more run options)
set -u
way=$1 tool=$2 prog=$3 case=$4 python=$5 checker=$6 work=$7
shift 7
extra=
while [ $# -gt 0 ] && [ "$1" != "--" ]; do extra="$extra $1"; shift; done
[ $# -gt 0 ] && shift
mkdir -p "$work" || exit 1
out=$work/$case.$way.json
rm -f "$out"
unset SYNCPROF_OPTIONS
case $way in
preload)
	LD_PRELOAD=$tool SYNCPROF_OPTIONS="control=0,lock_order=1,format=json,output=$out$(echo $extra | tr -d ' ')" \
		"$prog" "$case" || { echo "run_case: $prog $case failed"; exit 1; } ;;
compiled)
	SYNCPROF_OPTIONS="enabled=1,lock_order=1,format=json,output=$out$(echo $extra | tr -d ' ')" \
		"$prog" "$case" || { echo "run_case: $prog $case failed"; exit 1; } ;;
cli)
	# shellcheck disable=SC2086
	"$tool" run --lock-order --no-control -f json -o "$out" $extra -- "$prog" "$case" ||
		{ echo "run_case: syncprof run $prog $case failed"; exit 1; } ;;
*)
	echo "run_case: unknown way '$way'"; exit 2 ;;
esac
[ -s "$out" ] || { echo "run_case: no profile written to $out"; exit 1; }
exec "$python" "$checker" "$out" "$@"
