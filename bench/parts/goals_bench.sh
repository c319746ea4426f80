#!/bin/bash
# goals_bench.sh - the raised cost goals of issue 14 (part 5), in one
# interleaved run: every configuration's invocation alternates with the
# others', REPEATS times, and each invocation measures the profiled loop
# against glibc's own calls in the same process (lockbench -M libc,...),
# so that machine noise falls on every mode alike.  Prints the median of
# each ratio next to its goal.
#
#   compiled in, on       lockbench -M libc,on (instrumented loop)        <= 1.05x
#   preloaded, on         LD_PRELOAD=... lockbench -M libc,plain            <= 1.10x
#   hold=1                both ways, SYNCPROF_OPTIONS=hold=1                <= 1.30x
#   failed trylock        -T -t 2 -m 1 (2 threads spinning on trylock)      <= 1.30x
#   (each 1 thread with 1 and with 1024 locks but the trylock case; time
#    per operation)
#   floor, floorhold      lockbench -M libc,floor|floorhold: glibc plus the
#                         least a per-(site, object) counter (and a held
#                         list) must do inline - lower bounds, not goals;
#                         floornear: the floor's counter found through a
#                         table of pointers, as syncprof's near[] finds it;
#                         floortry: the floor with a run-time flag, the
#                         lock tried first, a two-word key and its counters
#                         through TLS, the least a switchable probe that
#                         tells contention without a clock does;
#                         floorlock: floortry locking instead of trying
#                         (it tells no contention: what the try costs is
#                         floortry against it); floorshim: LD_PRELOAD=libfloorshim.so,
#                         the same as an interposer (bench/floorshim.c), the
#                         floor of the preloaded goal; floortryhold and
#                         FLOORSHIM=hold: those with hold lists and one
#                         hold in 16 timed, the floors of the hold=1 goal
#   trace event           tracebench -t 1, ns per event                     <= 15 ns
#   RSS added             pigz -p 4 of a 64 MiB file, peak RSS preloaded
#                         with hold=1 against without                       <= 4 MB
#                         and under 'syncprof run' with its report at exit
#                         (named by run, and --symbolize inprocess: by
#                         pigz itself), pigz's own peak (SYNCPROF_RUN_RUSAGE)
#
# Usage: bench/parts/goals_bench.sh [BUILD_DIR] [REPEATS] [MS] [ROUNDS]
set -eu
b=${1:-build} repeats=${2:-7} ms=${3:-30} rounds=${4:-21}
lb=$b/bench/lockbench tb=$b/bench/tracebench
pre=$(cd "$b" && pwd)/libsyncprof-preload.so
shim=$(cd "$b" && pwd)/bench/libfloorshim.so
for f in "$lb" "$tb" "$pre" "$shim"; do
	[ -e "$f" ] || { echo "goals_bench: build $f first (make build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
. "$(dirname "$0")/common.sh"

# ratio WAY(compiled|preload) OPTIONS LOCKBENCH-ARGS... -> time ratio to libc
ratio() {
	local way=$1 opts=$2 mode=on
	shift 2
	[ "$way" = preload ] && mode=plain
	[ "$way" = floorshim ] || [ "$way" = floorshimhold ] && mode=plain
	case $way in floor | floorhold | floornear | floortry | floortryhold | floorlock) mode=$way way=compiled ;; esac
	if [ "$way" = floorshim ]; then
		env LD_PRELOAD="$shim" "$lb" -M libc,plain -d "$ms" -r "$rounds" "$@"
	elif [ "$way" = floorshimhold ]; then
		env FLOORSHIM=hold LD_PRELOAD="$shim" "$lb" -M libc,plain -d "$ms" -r "$rounds" "$@"
	elif [ "$way" = preload ]; then
		env LD_PRELOAD="$pre" SYNCPROF_OPTIONS="report_at_exit=0$opts" \
			"$lb" -M libc,$mode -d "$ms" -r "$rounds" "$@"
	else
		env SYNCPROF_OPTIONS="report_at_exit=0$opts" "$lb" -M libc,$mode -d "$ms" -r "$rounds" "$@"
	fi | awk -v m=$mode '$1 == m { gsub("x", "", $4); print $4 }'
}

cases=(
	"compiled-on-1|compiled||-t 1 -m 1"
	"compiled-on-1024|compiled||-t 1 -m 1024"
	"preload-on-1|preload||-t 1 -m 1"
	"preload-on-1024|preload||-t 1 -m 1024"
	"compiled-hold-1|compiled|,hold=1|-t 1 -m 1"
	"compiled-hold-1024|compiled|,hold=1|-t 1 -m 1024"
	"preload-hold-1|preload|,hold=1|-t 1 -m 1"
	"preload-hold-1024|preload|,hold=1|-t 1 -m 1024"
	"compiled-trylock|compiled||-T -t 2 -m 1"
	"preload-trylock|preload||-T -t 2 -m 1"
	"floor-1|floor||-t 1 -m 1"
	"floor-1024|floor||-t 1 -m 1024"
	"floorhold-1|floorhold||-t 1 -m 1"
	"floorhold-1024|floorhold||-t 1 -m 1024"
	"floornear-1024|floornear||-t 1 -m 1024"
	"floortry-1|floortry||-t 1 -m 1"
	"floortry-1024|floortry||-t 1 -m 1024"
	"floorlock-1|floorlock||-t 1 -m 1"
	"floorlock-1024|floorlock||-t 1 -m 1024"
	"floorshim-1|floorshim||-t 1 -m 1"
	"floorshim-1024|floorshim||-t 1 -m 1024"
	"floortryhold-1|floortryhold||-t 1 -m 1"
	"floortryhold-1024|floortryhold||-t 1 -m 1024"
	"floorshimhold-1|floorshimhold||-t 1 -m 1"
	"floorshimhold-1024|floorshimhold||-t 1 -m 1024"
)
for ((i = 0; i < repeats; i++)); do
	for c in "${cases[@]}"; do
		IFS='|' read -r name way opts args <<<"$c"
		# shellcheck disable=SC2086
		ratio "$way" "$opts" $args >>"$tmp/$name"
	done
	"$tb" -t 1 -r 5 2>/dev/null | awk '$1 == "percpu" || /percpu/ { for (i = 1; i <= NF; i++) if ($i ~ /^[0-9.]+$/) { print $i; exit } }' >>"$tmp/trace" || true
done

goal() { # NAME LABEL GOAL
	printf "%-44s %8.3fx   goal <= %s\n" "$2" "$(median <"$tmp/$1")" "$3"
}
echo "goals_bench: $repeats repeats of $rounds rounds of $ms ms, medians; time ratios to glibc in the same process"
goal compiled-on-1 "compiled in, on, 1 thread, 1 lock" 1.05x
goal compiled-on-1024 "compiled in, on, 1 thread, 1024 locks" 1.05x
goal preload-on-1 "preloaded, on, 1 thread, 1 lock" 1.10x
goal preload-on-1024 "preloaded, on, 1 thread, 1024 locks" 1.10x
goal compiled-hold-1 "compiled in, hold=1, 1 thread, 1 lock" 1.30x
goal compiled-hold-1024 "compiled in, hold=1, 1 thread, 1024 locks" 1.30x
goal preload-hold-1 "preloaded, hold=1, 1 thread, 1 lock" 1.30x
goal preload-hold-1024 "preloaded, hold=1, 1 thread, 1024 locks" 1.30x
goal compiled-trylock "compiled in, trylock spin, 2 threads, 1 lock" 1.30x
goal preload-trylock "preloaded, trylock spin, 2 threads, 1 lock" 1.30x
goal floor-1 "floor (lockbench -M floor), 1 lock" "(lower bound)"
goal floor-1024 "floor, 1024 locks" "(lower bound)"
goal floorhold-1 "floor with hold lists (floorhold), 1 lock" "(lower bound)"
goal floorhold-1024 "floor with hold lists, 1024 locks" "(lower bound)"
goal floornear-1024 "floor through a pointer table, 1024 locks" "(lower bound)"
goal floortry-1 "floor switchable, tried first (floortry), 1 lock" "(lower bound)"
goal floortry-1024 "floor switchable, tried first, 1024 locks" "(lower bound)"
goal floorlock-1 "floortry with no try: locked (floorlock), 1 lock" "(lower bound)"
goal floorlock-1024 "floortry with no try: locked, 1024 locks" "(lower bound)"
goal floorshim-1 "floor interposed (floorshim.c), 1 lock" "(lower bound)"
goal floorshim-1024 "floor interposed, 1024 locks" "(lower bound)"
goal floortryhold-1 "floortry with hold lists, sampled, 1 lock" "(lower bound)"
goal floortryhold-1024 "floortry with hold lists, sampled, 1024 locks" "(lower bound)"
goal floorshimhold-1 "floorshim with hold lists, sampled, 1 lock" "(lower bound)"
goal floorshimhold-1024 "floorshim with hold lists, sampled, 1024" "(lower bound)"
if [ -s "$tmp/trace" ]; then
	printf "%-44s %8.1f ns  goal <= 15 ns\n" "trace event, 1 thread (tracebench)" "$(median <"$tmp/trace")"
fi

# RSS: pigz (Debian) compressing 64 MiB with 4 threads, peak RSS.
if command -v pigz >/dev/null && [ -x /usr/bin/time ]; then
	head -c 67108864 /dev/urandom >"$tmp/data"
	rss() { /usr/bin/time -f %M env "$@" pigz -p 4 -c "$tmp/data" 2>&1 >/dev/null | tail -1; }
	for ((i = 0; i < 3; i++)); do
		rss LD_PRELOAD= >>"$tmp/rss-bare"
		rss LD_PRELOAD="$pre" SYNCPROF_OPTIONS=report_at_exit=0 >>"$tmp/rss-on"
		rss LD_PRELOAD="$pre" SYNCPROF_OPTIONS=report_at_exit=0,hold=1 >>"$tmp/rss-hold"
	done
	bare=$(median <"$tmp/rss-bare") on=$(median <"$tmp/rss-on") hold=$(median <"$tmp/rss-hold")
	awk -v b="$bare" -v o="$on" -v h="$hold" 'BEGIN { printf "pigz -p 4 peak RSS: bare %.1f MB, preloaded %.1f MB (+%.1f), hold=1 %.1f MB (+%.1f); goal: +4 MB at most\n", b / 1024, o / 1024, (o - b) / 1024, h / 1024, (h - b) / 1024 }'
	# With the report at exit: 'syncprof run' (default options), pigz's own
	# peak as run got it from wait4 (/usr/bin/time would show run's, which
	# names the sites).
	cli=$b/syncprof
	runrss() {
		SYNCPROF_RUN_RUSAGE=1 "$cli" run "$@" -- pigz -p 4 -c "$tmp/data" 2>&1 >/dev/null |
			sed -n 's/.*peak RSS \([0-9]*\) kB$/\1/p'
	}
	if [ -x "$cli" ]; then
		for ((i = 0; i < 3; i++)); do
			runrss >>"$tmp/rss-run"
			runrss --hold >>"$tmp/rss-run-hold"
			runrss --symbolize inprocess >>"$tmp/rss-run-in"
			runrss --hold --symbolize inprocess >>"$tmp/rss-run-in-hold"
		done
		for m in run run-hold run-in run-in-hold; do
			median <"$tmp/rss-$m" >"$tmp/m-$m"
		done
		awk -v b="$bare" -v r="$(cat "$tmp/m-run")" -v rh="$(cat "$tmp/m-run-hold")" \
			-v i="$(cat "$tmp/m-run-in")" -v ih="$(cat "$tmp/m-run-in-hold")" 'BEGIN {
			printf "pigz -p 4 peak RSS with the report at exit (syncprof run): %.1f MB (+%.1f), --hold %.1f MB (+%.1f); named in pigz (--symbolize inprocess): %.1f MB (+%.1f), --hold %.1f MB (+%.1f)\n",
				r / 1024, (r - b) / 1024, rh / 1024, (rh - b) / 1024, i / 1024, (i - b) / 1024, ih / 1024, (ih - b) / 1024 }'
	fi
fi
