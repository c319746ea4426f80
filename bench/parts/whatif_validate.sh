#!/bin/sh
# whatif_validate.sh - 'syncprof trace what-if' against real runs.
#
# whatif_bench (T threads, each N times: W ns of work, then H ns of work
# holding one mutex in critical_section()) is traced at hold H, with the
# preload library and every event kept, TRACES times; what-if predicts the
# wall time with the critical section F times as long (median over the
# traces); the program is then run unprofiled at hold H*F and at H,
# interleaved, REPEATS times each, and the medians compared.  What is compared is the ratio to the hold-H run
# (predicted: predicted / measured span of the trace; real: run at H*F /
# run at H), so the tracing's own cost cancels out; the absolute figures
# are printed too, and the prediction's 90% interval (what-if's, from
# replays with the hand-off latencies and the run's blocks drawn again:
# median of the traces' bounds, as ratios) with whether the real ratio
# falls in it, and the spread of the point predictions over the traces
# (min..max).  No threshold: this prints, a person judges.
#
# Usage: bench/parts/whatif_validate.sh [BUILD_DIR] [REPEATS] [ITERATIONS] [HOLD_NS] [WORK_NS] [TRACES]
#        (defaults: build 5 10000 2000 4000 3)
# Machines with fewer CPUs than threads (and busy machines) break the
# model's first assumption: docs/whatif.md.
set -eu

B=${1:-build}
R=${2:-5}
N=${3:-10000}
H=${4:-2000}
W=${5:-4000}
TR=${6:-3}
FACTORS="0.5 2 4"
THREADS="2 4"
cli=$B/syncprof
pre=$B/libsyncprof-preload.so
bench=$B/bench/whatif_bench
for f in "$cli" "$pre" "$bench"; do
	[ -e "$f" ] || { echo "whatif_validate: $f not found (build first: make build)" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# One calibration for every run, so that H ns means the same loop count:
# the fastest of five (a busy machine only ever makes it slower).
lpus=$(for i in 1 2 3 4 5; do
	"$bench" -t 1 -n 1 -H 0 -W 0 2>&1 >/dev/null | sed -n 's/^loops_per_us //p'
done | sort -g | tail -n 1)

median() { sort -n | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
json() { sed -n "s/.*\"$1\":\\([0-9-]*\\).*/\\1/p"; }

echo "# whatif_bench: N=$N iterations, hold H=$H ns, work W=$W ns, loops/us=$lpus; $(nproc) CPUs;" \
     "load $(cut -d' ' -f1-3 /proc/loadavg); predictions: median of $TR traces; real: medians of $R runs"
printf '%-3s %-6s %14s %14s %10s %10s %8s %15s %4s %15s\n' T F "predicted ms" "real ms" "pred/1" \
       "real/1" error "90% interval" "in" "traces min..max"
for t in $THREADS; do
	for i in $(seq "$TR"); do
		trace=$tmp/t$t.$i.trace
		SYNCPROF_OPTIONS="trace=$trace,trace_events=all,trace_buffer=268435456,report_at_exit=0,control=0" \
			LD_PRELOAD=$pre "$bench" -t "$t" -n "$N" -H "$H" -W "$W" -c "$lpus" >/dev/null 2>&1
		m=$("$cli" trace what-if "$trace" --site critical_section --factor 1 --json |
		    json measured_wall_ns)
		echo "$m" >>"$tmp/measured.$t"
		for f in $FACTORS; do
			"$cli" trace what-if "$trace" --site critical_section --factor "$f" \
			    --json >"$tmp/w.json"
			for k in predicted_wall_ns predicted_wall_low_ns predicted_wall_high_ns; do
				p=$(json $k <"$tmp/w.json")
				awk -v p="$p" -v m="$m" 'BEGIN {printf "%.6f\n", p / m}' >>"$tmp/$k.$t.$f"
			done
		done
	done
	measured=$(median <"$tmp/measured.$t")
	# Real runs, interleaved: one run of each length per round.
	for r in $(seq "$R"); do
		for f in 1 $FACTORS; do
			h=$(awk -v h="$H" -v f="$f" 'BEGIN {printf "%d", h * f}')
			"$bench" -t "$t" -n "$N" -H "$h" -W "$W" -c "$lpus" 2>/dev/null >>"$tmp/real.$t.$f"
		done
	done
	real1=$(median <"$tmp/real.$t.1")
	for f in $FACTORS; do
		pr=$(median <"$tmp/predicted_wall_ns.$t.$f")
		lo=$(median <"$tmp/predicted_wall_low_ns.$t.$f")
		hi=$(median <"$tmp/predicted_wall_high_ns.$t.$f")
		pmin=$(sort -g "$tmp/predicted_wall_ns.$t.$f" | head -n 1)
		pmax=$(sort -g "$tmp/predicted_wall_ns.$t.$f" | tail -n 1)
		realf=$(median <"$tmp/real.$t.$f")
		awk -v t="$t" -v f="$f" -v pr="$pr" -v r="$realf" -v r1="$real1" -v lo="$lo" \
		    -v hi="$hi" -v pmin="$pmin" -v pmax="$pmax" 'BEGIN {
			rr = r / r1;
			printf "%-3s %-6s %14.3f %14.3f %10.3f %10.3f %+7.1f%% %7.3f..%-6.3f %4s %7.3f..%-6.3f\n",
			       t, f, pr * r1 / 1e6, r / 1e6, pr, rr, 100 * (pr - rr) / rr, lo, hi,
			       (rr >= lo && rr <= hi) ? "yes" : "no", pmin, pmax }'
	done
	echo "    (T=$t: traced span (median of $TR) $(awk -v m="$measured" 'BEGIN {printf "%.3f", m / 1e6}') ms," \
	     "real run at H $(awk -v r="$real1" 'BEGIN {printf "%.3f", r / 1e6}') ms)"
done
