#!/bin/bash
# explain_bench.sh - what the watchdog's explanations cost, in instructions
# (valgrind --tool=callgrind: repeatable where timings here are not):
# 1,000,000 uncontended lock+unlock pairs of bench/condloop, with and
# without a pthread_cond_signal() in each, preloaded and compiled in, with
# the features off and with deadlock=1 or warn_wait.  Prints instructions
# per iteration.  With a second build directory (e.g. of main), its
# figures come first, for comparison.
#
# Usage: bench/parts/explain_bench.sh BUILD_DIR [BASE_BUILD_DIR]
set -u
command -v valgrind >/dev/null || { echo "explain_bench: valgrind not installed"; exit 77; }
N=1000000
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

ir() { # LABEL [VAR=VALUE...] COMMAND...
	local label=$1 envs=()
	shift
	while [[ $1 == *=* ]]; do envs+=("$1"); shift; done
	env "${envs[@]}" valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$@" \
		>/dev/null 2>"$tmp/err" || { echo "$label: failed"; return; }
	awk -v l="$label" -v n=$N '/Collected :/ { printf "%-52s %8.1f\n", l, $NF / n }' "$tmp/err"
}

one() { # BUILD NAME (condloop: this build's; it links no syncprof)
	local b=$1 p=$2 pre=$1/libsyncprof-preload.so plain=$this/bench/condloop
	local instr=$b/bench/condloop_instrumented on=report_at_exit=0

	ir "$p: plain, no syncprof" X=1 "$plain" lock $N
	ir "$p: preloaded, on" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on "$plain" lock $N
	ir "$p: preloaded, on, + signal" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on "$plain" signal $N
	ir "$p: preloaded, hold=1" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on,hold=1 "$plain" lock $N
	ir "$p: preloaded, lock_order=1" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on,lock_order=1 \
		"$plain" lock $N
	ir "$p: preloaded, deadlock=1" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on,deadlock=1 \
		"$plain" lock $N
	ir "$p: preloaded, deadlock=1, + signal" LD_PRELOAD=$pre SYNCPROF_OPTIONS=$on,deadlock=1 \
		"$plain" signal $N
	ir "$p: preloaded, warn_wait=100, + signal" LD_PRELOAD=$pre \
		SYNCPROF_OPTIONS=$on,warn_wait=100 "$plain" signal $N
	if [ ! -x "$instr" ]; then
		# An older build without condloop: no compiled-in figures.
		echo "$p: no $instr: compiled-in figures skipped"
		return
	fi
	ir "$p: compiled in, off" SYNCPROF_OPTIONS=$on,enabled=0 "$instr" lock $N
	ir "$p: compiled in, on" SYNCPROF_OPTIONS=$on,enabled=1 "$instr" lock $N
	ir "$p: compiled in, on, + signal" SYNCPROF_OPTIONS=$on,enabled=1 "$instr" signal $N
	ir "$p: compiled in, deadlock=1" SYNCPROF_OPTIONS=$on,enabled=1,deadlock=1 "$instr" lock $N
}

this=$1
[ -x "$this/bench/condloop" ] || { echo "explain_bench: no $this/bench/condloop"; exit 1; }
echo "instructions per iteration (lock+unlock [+ signal]), $N iterations"
[ $# -ge 2 ] && one "$2" base
one "$1" this
