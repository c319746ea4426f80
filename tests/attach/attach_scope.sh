#!/bin/sh
# attach_scope.sh SYNCPROF TARGET - under Yama's ptrace_scope=1, an
# unprivileged 'syncprof attach' to a process of its own user that is not
# its descendant is refused with one line that names the setting, and a
# non-zero exit; the target is left running, not stopped, not traced.
#
# Runs only where it can be true: ptrace_scope is 1 (it is read, never
# written), and the test can be an unprivileged user - as root, the CLI
# and the target both run as nobody (setpriv drops every capability with
# the uid); as another user without CAP_SYS_PTRACE, as that user.
# Otherwise it exits 77 (CTest: skipped) saying why.
set -u
SYNCPROF=$1
TARGET=$2
. "$(dirname "$0")/attach_util.sh"

scope_file=/proc/sys/kernel/yama/ptrace_scope
[ -r $scope_file ] || { echo "SKIP: no Yama here ($scope_file)"; exit 77; }
scope=$(cat $scope_file)
[ "$scope" = 1 ] || { echo "SKIP: kernel.yama.ptrace_scope is $scope, not 1"; exit 77; }

eff=$(sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
as=""
if [ "$(id -u)" = 0 ]; then
	command -v setpriv > /dev/null || { echo "SKIP: root, and no setpriv to drop it"; exit 77; }
	as="setpriv --reuid=65534 --regid=65534 --clear-groups"
	$as true 2> /dev/null || { echo "SKIP: setpriv cannot switch to uid 65534"; exit 77; }
	for f in "$SYNCPROF" "$TARGET"; do
		$as test -x "$f" || { echo "SKIP: uid 65534 cannot run $f"; exit 77; }
	done
	eff=$($as sed -n 's/^CapEff:[[:space:]]*//p' /proc/self/status)
fi
if [ -n "$eff" ] && [ $(( (0x$eff >> 19) & 1 )) = 1 ]; then
	echo "SKIP: the test's user keeps CAP_SYS_PTRACE"; exit 77
fi

dir=$(mktemp -d)
pid=""
trap 'exec 3>&- 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT

# The target: started by this shell (its sibling, not the CLI's child).
mkfifo "$dir/in"
$as "$TARGET" < "$dir/in" > "$dir/out" &
pid=$!
exec 3> "$dir/in"
for i in $(seq 200); do grep -q ready "$dir/out" && break; sleep 0.05; done
grep -q ready "$dir/out" || fail "the target did not start"
[ "$(sed -n 's/^Uid:[[:space:]]*\([0-9]*\).*/\1/p' /proc/$pid/status)" = "$(
	$as id -u)" ] || fail "the target does not run as the CLI's user"

$as "$SYNCPROF" attach $pid -d 1 > "$dir/report" 2> "$dir/err"
rc=$?
cat "$dir/err"
[ $rc != 0 ] || fail "attach under ptrace_scope=1 exited 0"
[ "$(wc -l < "$dir/err")" = 1 ] || fail "not one line: $(cat "$dir/err")"
grep -q "kernel.yama.ptrace_scope is 1" "$dir/err" || fail "the line does not name the setting"
[ -s "$dir/report" ] && fail "a report was written"
not_stopped $pid
echo status >&3
for i in $(seq 100); do grep -q '^got=' "$dir/out" && break; sleep 0.05; done
grep -q '^got=libc$' "$dir/out" || fail "the target's GOT slot: $(grep '^got=' "$dir/out")"
echo quit >&3
exec 3>&-
wait $pid
rc=$?
pid=""
[ $rc = 7 ] || fail "the target exited with $rc, not 7"
echo "PASS: refused under ptrace_scope=1 (exit $rc of the target unchanged)"
