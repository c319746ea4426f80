#!/bin/bash
# memcached_bench.sh - what profiling costs a real server (issue 25, "no
# cost a real workload notices"): Debian's memcached -t 4 (4 worker
# threads, TCP on 127.0.0.1) loaded by memcslap --concurrency=4 (4 client
# threads), on this machine's 2 cores, server and client together.
#
#   throughput [BUILD_DIR] [ROUNDS] [SECONDS]
#       ROUNDS interleaved rounds (default 3), each running every mode
#       once: memcached started under the mode on a free port, a set phase
#       (memcslap --test=set) and a get phase (--test=get, which first
#       loads its keys from one thread, untimed), each a fixed count of
#       operations sized by a bare calibration run to last about SECONDS/2
#       bare (default SECONDS 10), then memcached stopped by SIGTERM (sent
#       to run, which fetches the report first; the report must be there).
#       Modes:
#         bare    memcached alone
#         run     syncprof run -o FILE (report at exit)
#         hold    syncprof run --hold -o FILE
#         order   syncprof run --lock-order -o FILE
#         trace   syncprof run --trace FILE -o FILE (contended events)
#       MEMCACHED_BENCH_MODES="bare hold old-hold" picks modes (bare among
#       them); old-run, old-hold and old-order are run, hold and order with
#       the syncprof of MEMCACHED_BENCH_OLD=BUILD_DIR, another build, for
#       an A/B of two builds in the same rounds.
#       Prints, per phase and mode, memcslap's throughput (operations by
#       all client threads / the phase's time): the median, the spread
#       (min-max), the ratio of the medians against bare, and the ratio of
#       each round against that round's bare run.
#   edges [BUILD_DIR] [SECONDS]
#       memcached -t 4 under syncprof run --lock-order -f json, loaded by
#       memcslap (set and get runs in turn) for SECONDS (default 60), then
#       stopped by SIGTERM; prints the lock-order graph's counts from the
#       JSON profile: edges kept and dropped (the goal: none dropped),
#       cycles dropped, searches cut, cycles found.
#
# Fails with a message (exit 1) when memcached or memcslap is missing, a
# server does not answer within 20 s, memcslap fails or takes far longer
# than planned, or a server does not end within 30 s of its SIGTERM; its
# servers are killed and its temporary directory removed on any exit.
#
# Usage: bench/parts/memcached_bench.sh throughput|edges [BUILD_DIR] [...]
set -eu
. "$(dirname "$0")/common.sh"
what=${1:-}
[ $# -gt 0 ] && shift
case $what in
throughput) b=${1:-build} rounds=${2:-3} seconds=${3:-10} ;;
edges) b=${1:-build} seconds=${2:-60} ;;
*)
	sed -n '2,/^set -eu/p' "$0" | sed '$d; s/^# \{0,1\}//' >&2
	exit 2
	;;
esac
fail() { echo "memcached_bench: $*" >&2; exit 1; }
sp=$b/syncprof
[ -x "$sp" ] || fail "build $sp first (make build)"
[ -e "$b/libsyncprof-preload.so" ] || fail "build $b/libsyncprof-preload.so first (make build)"
mc=${MEMCACHED:-$(command -v memcached || echo /usr/bin/memcached)}
[ -x "$mc" ] || fail "no memcached: apt-get install memcached"
slap=${MEMCSLAP:-$(command -v memcslap || echo /usr/bin/memcslap)}
[ -x "$slap" ] || fail "no memcslap: apt-get install libmemcached-tools"
user=
[ "$(id -u)" = 0 ] && user="-u root" # memcached refuses root without -u
tmp=$(mktemp -d)
srv= # the server's pid: memcached's, or syncprof run's
cleanup() { # (set -e holds in traps too: nothing here may fail)
	[ -z "$srv" ] || end_process "$srv"
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# stats_pid PORT: memcached's pid on PORT, from its 'stats'; nothing when none
# answers there (bash's /dev/tcp, every read bounded by 2 s)
stats_pid() {
	(
		exec 4<> "/dev/tcp/127.0.0.1/$1" || exit 0
		printf 'stats\r\n' >&4
		while read -r -t 2 a k v <&4; do
			[ "$a" = STAT ] && [ "$k" = pid ] && echo "${v%$'\r'}"
			[ "${a%$'\r'}" = END ] && break
		done
		exit 0
	) 2> /dev/null
}
# start MODE: memcached under MODE on a free port -> $srv, $port
start() {
	local try i p
	local -a pre
	case $1 in
	bare) pre=() ;;
	run) pre=("$sp" run -o "$tmp/$1.report") ;;
	hold) pre=("$sp" run --hold -o "$tmp/$1.report") ;;
	order) pre=("$sp" run --lock-order -o "$tmp/$1.report") ;;
	old-run) pre=("$old_sp" run -o "$tmp/$1.report") ;;
	old-hold) pre=("$old_sp" run --hold -o "$tmp/$1.report") ;;
	old-order) pre=("$old_sp" run --lock-order -o "$tmp/$1.report") ;;
	trace) pre=("$sp" run --trace "$tmp/trace.bin" -o "$tmp/$1.report") ;;
	edges) pre=("$sp" run --lock-order -f json -o "$tmp/$1.report") ;;
	esac
	rm -f "$tmp/$1.report" "$tmp/trace.bin"
	for try in 1 2 3; do
		port=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
		[ -z "$(stats_pid $port)" ] || continue # taken
		"${pre[@]}" "$mc" -l 127.0.0.1 -p "$port" -U 0 -t 4 $user > "$tmp/mc.log" 2>&1 &
		srv=$!
		for i in $(seq 400); do
			p=$(stats_pid $port)
			# ours: memcached itself, or run's child
			if [ -n "$p" ] && { [ "$p" = "$srv" ] ||
				[ "$(awk '$1 == "PPid:" {print $2}' /proc/$p/status 2> /dev/null)" = "$srv" ]; }; then
				return 0
			fi
			kill -0 "$srv" 2> /dev/null || break
			sleep 0.05
		done
		kill -KILL "$srv" 2> /dev/null || :
		wait "$srv" 2> /dev/null || :
		srv=
	done
	fail "memcached ($1) did not start in 3 tries: $(tail -5 "$tmp/mc.log")"
}
# stop MODE: SIGTERM, at most 30 s to end, and its report must be there
stop() {
	local i rc=0
	kill -TERM "$srv"
	for i in $(seq 300); do
		kill -0 "$srv" 2> /dev/null || break
		sleep 0.1
	done
	if kill -0 "$srv" 2> /dev/null; then
		kill -KILL "$srv"
		fail "memcached ($1) still running 30 s after SIGTERM"
	fi
	wait "$srv" || rc=$?
	srv=
	# memcached exits 0 on SIGTERM; under run, the status is memcached's
	[ $rc = 0 ] || [ $rc = 143 ] || fail "memcached ($1) exited with $rc: $(tail -5 "$tmp/mc.log")"
	[ "$1" = bare ] || [ -s "$tmp/$1.report" ] ||
		fail "no report from syncprof run ($1) after SIGTERM: $(tail -5 "$tmp/mc.log")"
}
# slap TEST N LIMIT: memcslap on $port, N operations per client thread,
# at most LIMIT seconds; prints operations per second of the timed phase
slap() {
	timeout -k 5 "$3" "$slap" --servers="127.0.0.1:$port" --concurrency=4 \
		--execute-number="$2" --test="$1" > "$tmp/slap.out" 2>&1 ||
		fail "memcslap --test=$1 failed or took more than $3 s: $(tail -5 "$tmp/slap.out")"
	awk -v t="$1" '$1 == "Time" && $3 == t && $6 == "by" { print $4 / $9; n++ }
		END { if (!n) exit 1 }' "$tmp/slap.out" ||
		fail "no '$1 ... by 4 threads' line from memcslap: $(cat "$tmp/slap.out")"
}

if [ "$what" = edges ]; then
	start edges
	t0=$(date +%s)
	end=$((t0 + seconds))
	ops=0 runs=0
	while [ "$(date +%s)" -lt $end ]; do
		for t in set get; do
			r=$(slap $t 5000 $((seconds + 120)))
			ops=$((ops + 20000)) runs=$((runs + 1))
		done
	done
	el=$(($(date +%s) - t0))
	stop edges
	j=$tmp/edges.report
	num() { grep -o "\"$1\":[0-9]*" "$j" | head -1 | cut -d: -f2; }
	grep -q '"lock_order"' "$j" || fail "the JSON profile has no lock_order: $(head -c 300 "$j")"
	kept=$(num edges_kept) dropped=$(num edges_dropped)
	cyc_dropped=$(num cycles_dropped) cut=$(num searches_cut)
	cycles=$(python3 -c 'import json, sys
print(len(json.load(open(sys.argv[1]))["lock_order"]["cycles"]))' "$j" 2> /dev/null || echo "?")
	echo "memcached -t 4 under syncprof run --lock-order, memcslap --concurrency=4 for ${el} s"
	echo "($runs memcslap runs of 5000 sets or gets per client thread: $ops operations timed)"
	printf "  %-16s %s\n" "edges kept" "$kept" "edges dropped" "$dropped" \
		"cycles dropped" "$cyc_dropped" "searches cut" "$cut" "cycles found" "$cycles"
	if [ "$dropped" = 0 ]; then
		echo "goal (no edge dropped): met"
	else
		echo "goal (no edge dropped): NOT met, $dropped edges dropped"
	fi
	exit 0
fi

modes=${MEMCACHED_BENCH_MODES:-bare run hold order trace}
case " $modes " in *" bare "*) ;; *) fail "MEMCACHED_BENCH_MODES must include bare" ;; esac
case " $modes " in
*" old-"*)
	old_sp=${MEMCACHED_BENCH_OLD:-}/syncprof
	[ -x "$old_sp" ] || fail "old-* modes need MEMCACHED_BENCH_OLD=BUILD_DIR of another build"
	;;
esac
# Calibration, bare: operations per client thread for SECONDS/2 per phase.
start bare
rate=$(slap set 5000 120)
stop bare
n=$(awk -v r="$rate" -v s="$seconds" 'BEGIN { n = int(r * s / 2 / 4); print n < 1000 ? 1000 : n }')
limit=$((seconds * 20 + 60))
declare -A runs
for r in $(seq "$rounds"); do
	for m in $modes; do
		start $m
		for t in set get; do
			runs[$m.$t]="${runs[$m.$t]:-} $(slap $t "$n" $limit)"
		done
		stop $m
	done
done
echo "memcached -t 4, memcslap --concurrency=4 --execute-number=$n (set, then get)," \
	"$rounds rounds interleaved"
echo "(calibrated bare: $(printf %.0f "$rate") sets/s; each phase ~$(awk -v s="$seconds" 'BEGIN { print s / 2 }') s bare)"
for t in set get; do
	echo "$t: operations/s, median (min-max), ratio of medians to bare, per-round ratios"
	for m in $modes; do
		summarize "${runs[$m.$t]}" "${runs[bare.$t]}"
		printf "  %-6s %9.0f  (%.0f-%.0f)  %6.3fx  [%s ]\n" "$m" "$med" "$lo" "$hi" "$ratio" \
			"$per"
	done
done
