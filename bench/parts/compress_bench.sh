#!/bin/bash
# compress_bench.sh - what profiling costs real multithreaded programs from
# Debian (issue 25, "no cost a real workload notices"): pigz -p 4 (its
# threads hand blocks over with mutexes and condition variables) and
# xz -T 4 (pthreads, one block per thread) compressing a generated file,
# in one interleaved run of these modes:
#
#   bare    the program alone
#   run     syncprof run -o FILE: the report at exit, written to a file
#   hold    syncprof run --hold -o FILE
#
# The input is made once, in a temporary directory: MIB MiB (default 64)
# of lines of base64 of /dev/urandom (incompressible beyond base64's 6
# bits a byte) between lines of seq's counting (very compressible); pigz
# reads all of it (-c, default level), xz its first MIB/4 MiB (-1: about
# as long as pigz's run here; 3 MiB blocks, so that -T 4 has blocks for
# its 4 threads).  Each round runs every program in every mode once;
# REPEATS rounds (default 5).  Each output is compared with the bare one
# (the same bytes, or the run fails).  Prints, per program and mode, the
# median wall time (the report at exit included), its spread (min-max),
# the ratio of the medians against bare and each round's ratio against
# that round's bare run.
#
# Usage: bench/parts/compress_bench.sh [BUILD_DIR] [REPEATS] [MIB]
set -eu
b=${1:-build} repeats=${2:-5} mib=${3:-64}
fail() { echo "compress_bench: $*" >&2; exit 1; }
sp=$b/syncprof
[ -x "$sp" ] || fail "build $sp first (make build)"
[ -e "$b/libsyncprof-preload.so" ] || fail "build $b/libsyncprof-preload.so first (make build)"
pigz=$(command -v pigz) || fail "no pigz: apt-get install pigz"
xz=$(command -v xz) || fail "no xz: apt-get install xz-utils"
[ "$mib" -ge 4 ] 2> /dev/null || fail "MIB must be a number >= 4, not '$mib'"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM

paste -d '\n' <(head -c $((mib * 3 / 4 * 1048576)) /dev/urandom | base64 -w 76) \
	<(seq 1 $((mib * 1048576))) | head -c $((mib * 1048576)) > "$tmp/data" || :
head -c $((mib * 1048576 / 4)) "$tmp/data" > "$tmp/data.xz-part"
[ "$(stat -c %s "$tmp/data")" = $((mib * 1048576)) ] || fail "could not make $mib MiB in $tmp"

# one PROGRAM MODE: its wall time in seconds; its output is compared with bare's
one() {
	local cmd t0 t1 rc=0 pre=()
	case $1 in
	pigz) cmd=("$pigz" -p 4 -c "$tmp/data") ;;
	xz) cmd=("$xz" -T 4 -1 -c "$tmp/data.xz-part") ;;
	esac
	case $2 in
	run) pre=("$sp" run -o "$tmp/report") ;;
	hold) pre=("$sp" run --hold -o "$tmp/report") ;;
	esac
	rm -f "$tmp/report"
	t0=$(date +%s%N)
	timeout -k 5 600 "${pre[@]}" "${cmd[@]}" > "$tmp/out" 2> "$tmp/err" || rc=$?
	t1=$(date +%s%N)
	[ $rc = 0 ] || fail "$1 ($2) exited with $rc (124: over 600 s): $(tail -5 "$tmp/err")"
	[ "$2" = bare ] || [ -s "$tmp/report" ] || fail "$1 ($2): no report: $(tail -5 "$tmp/err")"
	if [ "$2" = bare ]; then
		[ -e "$tmp/$1.sum" ] || cksum < "$tmp/out" > "$tmp/$1.sum"
	fi
	cksum < "$tmp/out" | cmp -s - "$tmp/$1.sum" ||
		fail "$1 ($2): output differs from the bare run's"
	echo "$t0 $t1" | awk '{ printf "%.4f\n", ($2 - $1) / 1e9 }'
}
. "$(dirname "$0")/common.sh"
progs="pigz xz" modes="bare run hold"
declare -A runs
for r in $(seq "$repeats"); do
	for p in $progs; do
		for m in $modes; do
			runs[$p.$m]="${runs[$p.$m]:-} $(one $p $m)"
		done
	done
done
echo "pigz -p 4 -c on $mib MiB, xz -T 4 -1 -c on $((mib / 4)) MiB (base64 and seq lines)," \
	"$repeats rounds interleaved"
echo "wall seconds, median (min-max), ratio of medians to bare, per-round ratios"
for p in $progs; do
	for m in $modes; do
		summarize "${runs[$p.$m]}" "${runs[$p.bare]}"
		printf "  %-5s %-5s %7.3f s  (%.3f-%.3f)  %6.3fx  [%s ]\n" "$p" "$m" "$med" "$lo" "$hi" \
			"$ratio" "$per"
	done
done
