#!/bin/sh
# attach_refusals.sh SYNCPROF TARGET STATIC PRELOAD - every refusal of
# 'syncprof attach' is one line on stderr and a non-zero exit (2 for bad
# usage), and the process it refused is left running, not stopped, not
# traced, and (for the preloaded one) with its output unchanged.
set -u
SYNCPROF=$1
TARGET=$2
STATIC=$3
PRELOAD=$4
. "$(dirname "$0")/attach_util.sh"

dir=$(mktemp -d)
pids=""
trap 'for p in $pids; do kill -CONT $p; kill $p; done 2>/dev/null; rm -rf "$dir"' EXIT

# refused WANT_RC PATTERN ARGS...: exit status WANT_RC, one stderr line
# matching PATTERN.
refused() {
	want=$1; pattern=$2; shift 2
	"$SYNCPROF" attach "$@" > "$dir/out" 2> "$dir/err"
	rc=$?
	[ $rc = "$want" ] || fail "attach $*: exit $rc, not $want: $(cat "$dir/err")"
	[ "$(wc -l < "$dir/err")" = 1 ] || fail "attach $*: not one line: $(cat "$dir/err")"
	grep -q -- "$pattern" "$dir/err" || fail "attach $*: '$(cat "$dir/err")' lacks '$pattern'"
	[ -s "$dir/out" ] && fail "attach $*: wrote a report"
	echo "ok ($rc): attach $* -> $(cat "$dir/err")"
}

# A target with stdin from a FIFO held open on fd 3.
start_target() { # NAME PROGRAM
	mkfifo "$dir/$1.in"
	"$2" < "$dir/$1.in" > "$dir/$1.out" &
	eval "$1=$!"
	pids="$pids $!"
	exec 3> "$dir/$1.in"
	for i in $(seq 400); do grep -q ready "$dir/$1.out" && break; sleep 0.05; done
}

# Usage.
refused 2 "usage" 
refused 2 "not a process id" abc
refused 2 "not a process id" 0
refused 2 "duration" 1 --duration 0
refused 2 "duration" 1 -d x
refused 2 "unexpected argument" 1 --frobnicate
refused 2 "unexpected argument" 1 2
refused 2 "format" 1 -f nope
"$SYNCPROF" attach --help | grep -q "Usage: syncprof attach PID" || fail "--help"

# No such process.
p=$(( $(cat /proc/sys/kernel/pid_max) - 1 ))
while [ -e /proc/$p ]; do p=$((p - 1)); done
refused 1 "no process $p" $p

# The caller itself.
"$SYNCPROF" --help > /dev/null
sh -c 'exec "$0" attach $$ 2> "$1"' "$SYNCPROF" "$dir/self.err"
rc=$?
[ $rc = 1 ] && grep -q "syncprof itself" "$dir/self.err" || fail "self: $rc $(cat "$dir/self.err")"
echo "ok (1): attach to itself -> $(cat "$dir/self.err")"

# A zombie: a child whose parent exec'd into something that never waits.
(sleep 0 & echo $! > "$dir/zombie"; exec sleep 30) &
pids="$pids $!"
for i in $(seq 100); do
	[ -s "$dir/zombie" ] && [ "$(proc_state "$(cat "$dir/zombie")")" = Z ] && break
	sleep 0.05
done
refused 1 "zombie" "$(cat "$dir/zombie")"

# A stopped process stays stopped, and untraced.
start_target stopped "$TARGET"
kill -STOP $stopped
for i in $(seq 200); do [ "$(proc_state $stopped)" = T ] && break; sleep 0.05; done
refused 1 "is stopped" $stopped
[ "$(proc_state $stopped)" = T ] || fail "the stopped process is now $(proc_state $stopped)"
kill -CONT $stopped
not_stopped $stopped
echo quit >&3
exec 3>&-
wait $stopped

# Statically linked (when this machine can link one: libc6-dev's libc.a).
if [ -n "$STATIC" ]; then
	start_target static "$STATIC"
	refused 1 "statically linked" $static
	not_stopped $static
	exec 3>&-
	wait $static
else
	echo "note: no static libc here: the statically linked refusal not tried"
fi

# Another user's process (needs root to run as someone else).
if [ "$(id -u)" = 0 ] && command -v setpriv > /dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups true 2> /dev/null &&
   setpriv --reuid=65534 --regid=65534 --clear-groups "$SYNCPROF" --version > /dev/null 2>&1; then
	start_target other "$TARGET"
	setpriv --reuid=65534 --regid=65534 --clear-groups "$SYNCPROF" attach $other \
		> "$dir/out" 2> "$dir/err"
	rc=$?
	[ $rc = 1 ] && [ "$(wc -l < "$dir/err")" = 1 ] && grep -q "belongs to uid 0" "$dir/err" ||
		fail "another user's process: $rc $(cat "$dir/err")"
	echo "ok (1): as uid 65534 -> $(cat "$dir/err")"
	not_stopped $other
	echo quit >&3
	exec 3>&-
	wait $other
else
	echo "note: not root or no setpriv: another user's process not tried"
fi

if ! (attach_can_ptrace) > "$dir/why"; then
	cat "$dir/why"
	echo "PASS (the refusals that need ptrace were skipped)"
	exit 0
fi

# Profiled already: preloaded.  The process goes on as before.
(sleep 0.5; echo quit) | LD_PRELOAD="$PRELOAD" SYNCPROF_OPTIONS=report_at_exit=0 "$TARGET" > "$dir/plain.out"
plain_rc=$?
mkfifo "$dir/pre.in"
LD_PRELOAD="$PRELOAD" SYNCPROF_OPTIONS=report_at_exit=0 "$TARGET" < "$dir/pre.in" \
	> "$dir/pre.out" &
pre=$!
pids="$pids $pre"
exec 3> "$dir/pre.in"
for i in $(seq 100); do grep -q ready "$dir/pre.out" && break; sleep 0.05; done
refused 1 "profiled already.*syncprof ctl" $pre
not_stopped $pre
echo quit >&3
exec 3>&-
wait $pre
rc=$?
[ $rc = $plain_rc ] || fail "preloaded target: exit $rc after the refusal, $plain_rc before"
cmp "$dir/plain.out" "$dir/pre.out" || fail "preloaded target: output changed"

# The process exits while attached: one line, exit 1.
start_target gone "$TARGET"
"$SYNCPROF" attach $gone -d 20 > "$dir/out" 2> "$dir/err" &
cli=$!
for i in $(seq 200); do grep -q "attached to" "$dir/err" && break; sleep 0.05; done
attach_skip_if_refused "$dir/err"
echo quit >&3
exec 3>&-
wait $gone
wait $cli
rc=$?
[ $rc = 1 ] && grep -q "exited while attached" "$dir/err" || fail "exit while attached: $rc $(cat "$dir/err")"
echo "ok (1): $(tail -1 "$dir/err")"
echo PASS
