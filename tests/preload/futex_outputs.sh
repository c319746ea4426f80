#!/bin/bash
# futex_outputs.sh - every output knows the futex rows (issue 23, part 4):
# futex_waits.c's futex lock, profiled with 'syncprof run --hold
# --lock-order --trace', and glibc_locks.c's stdio case (glibc_lock rows):
#   - CSV, folded, pprof (protoc and Python's protobuf) and HTML rendered
#     from the saved profile have the rows, typed, at the program's line,
#     with the JSON profile's waits;
#   - the trace: a lock_acquired of that type per wait, futex_wake events
#     at the waking line; its Perfetto and Chrome exports: a wait slice
#     per wait, a lock track, futex wake instants with flows to the waits
#     they ended (check_futex_outputs.py, with trace_export_check.py's
#     structure checks);
#   - 'syncprof top' on the live process lists the futex rows, HOLD "-";
#   - the watchdog warns about a futex wait longer than --warn-wait,
#     naming the waking line with --hold, saying how to see it without;
#   - the lock-order graph draws nothing for futex locks (never held).
# Usage: futex_outputs.sh SYNCPROF FUTEX_WAITS FUTEX_SRC GLIBC_LOCKS GLIBC_SRC
#                         PROFILE_PROTO PERFETTO_PROTO WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 prog=$2 src=$3 gprog=$4 gsrc=$5 pproto=$6 fproto=$7 work=$8
here=$(cd "$(dirname "$0")" && pwd)
tests=$(dirname "$here")
rm -rf "$work" && mkdir -p "$work" && cd "$work" || exit 1
line_of() { grep -n "$2" "$1" | head -1 | cut -d: -f1; }
wait_line=$(line_of "$src" LINE_WAIT) wake_line=$(line_of "$src" LINE_WAKE)
log_line=$(grep -n 'rc = fprintf(out, "worker' "$gsrc" | head -1 | cut -d: -f1)

# The outputs of one profile: rendered from the saved JSON by 'report'.
render() { # PREFIX
	for f in csv folded html; do
		"$cli" report -f $f -o "$1prof.$f" "$1prof.json" || fail "report -f $f $1prof.json"
	done
	"$cli" report -f pprof -o "$1prof.pb.gz" "$1prof.json" || fail "report -f pprof"
	"$cli" report -f json -o "$1prof.rerender.json" "$1prof.json" || fail "report -f json"
	"$cli" trace dump --json "$1t.trace" > "$1dump.jsonl" || fail "trace dump $1t.trace"
	"$cli" trace export --format perfetto "$1t.trace" -o "$1t.pftrace" || fail "export perfetto"
	"$cli" trace export --format chrome "$1t.trace" -o "$1t.chrome.json" || fail "export chrome"
}

# ---- futex_waits: profile, trace, lock order; the watchdog -------------------
"$cli" run --hold --lock-order --trace t.trace -f json -o prof.json -- "$prog" > run.out 2> run.err ||
	fail "run: $(head -c 300 run.err)"
render ""
"$cli" run --hold --warn-wait 25 -f json -o /dev/null -- "$prog" > /dev/null 2> warn_hold.err ||
	fail "run --warn-wait --hold: $(head -c 300 warn_hold.err)"
"$cli" run --warn-wait 25 -f json -o /dev/null -- "$prog" > /dev/null 2> warn_nohold.err ||
	fail "run --warn-wait: $(head -c 300 warn_nohold.err)"

# ---- glibc_locks stdio: glibc_lock rows in the same outputs -----------------
"$cli" run --trace g.t.trace -f json -o g.prof.json -- "$gprog" stdio > g.run.out 2> g.run.err ||
	fail "run glibc_locks stdio: $(tail -c 300 g.run.err)"
render g.

status=0
python3 "$here/check_futex_outputs.py" futex "$work" "$wait_line" "$wake_line" "$pproto" "$fproto" \
	"$tests" || status=$?
[ $status -eq 77 ] && exit 77
[ $status -eq 0 ] || fails=$((fails + 1))
python3 "$here/check_futex_outputs.py" glibc "$work" "$log_line" "$pproto" "$fproto" "$tests" ||
	fails=$((fails + 1))

# ---- top: the live process's futex rows ---------------------------------------
export SYNCPROF_CONTROL_DIR=$work/ctl
mkdir -m 700 "$SYNCPROF_CONTROL_DIR"
"$cli" run --hold -f json -o live.json -- "$prog" --linger "$work/go" > live.out 2> live.err &
run_pid=$!
for _ in $(seq 400); do
	grep -q '^lingering' live.out 2>/dev/null && break
	sleep 0.05
done
pid=$(ls "$SYNCPROF_CONTROL_DIR" | sed -n 's/\.sock$//p' | head -1)
if [ -z "$pid" ] || ! grep -q '^lingering' live.out; then
	fail "the lingering program did not come up: $(head -c 300 live.err)"
else
	"$cli" top "$pid" -b 1 -n 50 > top.txt 2> top.err || fail "top: $(cat top.err)"
	# TYPE ACQ/s WAITS/s WAIT% ACQS WAITS WAIT AVG MAX HOLD OBJECT SITE
	grep -Eq "^futex .* - +0x[0-9a-f]+ +word_lock futex_waits\.c:$wait_line\$" top.txt ||
		fail "top: no futex row at word_lock futex_waits.c:$wait_line with HOLD '-': $(cat top.txt)"
	grep -Eq "^futex .* - +0x[0-9a-f]+ +main futex_waits\.c:" top.txt ||
		fail "top: no futex row of the timed-out wait in main: $(cat top.txt)"
fi
touch "$work/go"
wait "$run_pid" || fail "the lingering run exited $?"

[ "$fails" -eq 0 ] || exit 1
echo "futex_outputs: ok"
