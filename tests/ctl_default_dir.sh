#!/bin/bash
# ctl_default_dir.sh - where control sockets and run's hand-off directory
# go when the user names no place (control_wire.h, sp_ctl_dir(); run_report.c,
# tmp_root()), and that 'syncprof ctl' finds the socket in either place.
#
#   1. SYNCPROF_CONTROL_DIR unset: the socket is /dev/shm/syncprof-UID/PID.sock
#      (tmpfs: a socket file in an ext4 /tmp cost up to 0.84 ms of every
#      process's start on the VM of docs/cost.md); ctl status and ctl --list
#      reach it.
#   2. /dev/shm unusable (a read-only tmpfs over it, in a mount namespace of
#      the target's own: skipped where unshare -m is not allowed): the socket
#      is /tmp/syncprof-UID/PID.sock, and ctl, outside that namespace, still
#      finds it and lists the process once.
#   3. (with "run": that part alone, as it preloads, which the sanitizer
#      builds cannot) syncprof run without TMPDIR hands the profile over in
#      /dev/shm; with TMPDIR, there.
# Usage: ctl_default_dir.sh SYNCPROF_CLI CTL_TARGET [run]
. "$(dirname "$0")/lib.sh"
cli=$1 target=$2 part=${3:-ctl}
unset SYNCPROF_CONTROL_DIR TMPDIR
uid=$(id -u)
work=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2> /dev/null; done
	wait 2> /dev/null
	rm -rf "$work"
}
trap cleanup EXIT

# start NAME CMD...: runs CMD (a ctl_target idle) with its stdin held open;
# sets $pid to the target's pid once it printed "ready".
start() {
	local name=$1
	shift
	mkfifo "$work/$name.in"
	SYNCPROF_OPTIONS=enabled=1,control=1,report_at_exit=0 "$@" < "$work/$name.in" > "$work/$name.out" 2> "$work/$name.err" &
	pids+=($!)
	exec {fd}> "$work/$name.in"
	for _ in $(seq 100); do
		grep -q ready "$work/$name.out" 2> /dev/null && break
		sleep 0.1
	done
	grep -q ready "$work/$name.out" || die "$name: the target did not start: $(cat "$work/$name.err")"
	pid=${pids[-1]}
}

# wait_sock PATH: the helper thread makes the socket just after start-up.
wait_sock() {
	for _ in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

if [ "$part" = run ]; then
	# 3. run's hand-off directory.
	"$cli" run -o /dev/null -- sh -c 'echo "$SYNCPROF_RUN"' > "$work/run1" 2>&1 || fail "run: $(cat "$work/run1")"
	if [ -d /dev/shm ] && [ -w /dev/shm ]; then
		grep -q ":/dev/shm/syncprof-run\." "$work/run1" ||
			fail "run's directory is not in /dev/shm: $(cat "$work/run1")"
	fi
	mkdir "$work/tmpdir"
	TMPDIR=$work/tmpdir "$cli" run -o /dev/null -- sh -c 'echo "$SYNCPROF_RUN"' > "$work/run2" 2>&1 ||
		fail "run with TMPDIR: $(cat "$work/run2")"
	grep -q ":$work/tmpdir/syncprof-run\." "$work/run2" || fail "run ignored TMPDIR: $(cat "$work/run2")"
	exit "$fails"
fi

# 1. The default: /dev/shm.
if [ -d /dev/shm ] && [ -w /dev/shm ]; then
	start shm "$target" idle
	wait_sock "/dev/shm/syncprof-$uid/$pid.sock" || fail "no /dev/shm/syncprof-$uid/$pid.sock"
	[ -e "/tmp/syncprof-$uid/$pid.sock" ] && fail "a socket in /tmp too"
	"$cli" ctl "$pid" status > "$work/status1" 2>&1 || fail "ctl status (shm): $(cat "$work/status1")"
	grep -q "profiling" "$work/status1" || fail "ctl status (shm) said: $(cat "$work/status1")"
	"$cli" ctl --list > "$work/list1" 2>&1
	grep -qE "^ *$pid " "$work/list1" || fail "ctl --list does not list $pid: $(cat "$work/list1")"
else
	echo "ctl_default_dir: /dev/shm not writable here: part 1 skipped"
fi

# 2. The fallback: /tmp, found by ctl from outside the target's namespace.
if unshare -m true 2> /dev/null; then
	# unshare and sh exec: the job's pid is the target's.
	start tmp unshare -m sh -c 'mount -t tmpfs -o ro none /dev/shm && exec "$@"' sh "$target" idle
	wait_sock "/tmp/syncprof-$uid/$pid.sock" ||
		fail "no /tmp/syncprof-$uid/$pid.sock with /dev/shm read-only: $(cat "$work/tmp.err")"
	[ -e "/dev/shm/syncprof-$uid/$pid.sock" ] && fail "a socket in /dev/shm, read-only in its namespace"
	grep -q "control socket not started" "$work/tmp.err" && fail "warned: $(cat "$work/tmp.err")"
	"$cli" ctl "$pid" status > "$work/status2" 2>&1 || fail "ctl status (tmp): $(cat "$work/status2")"
	grep -q "profiling" "$work/status2" || fail "ctl status (tmp) said: $(cat "$work/status2")"
	"$cli" ctl --list > "$work/list2" 2>&1
	[ "$(grep -cE "^ *$pid " "$work/list2")" = 1 ] ||
		fail "ctl --list does not list $pid once: $(cat "$work/list2")"
else
	echo "ctl_default_dir: unshare -m not allowed here: part 2 skipped"
fi

exit "$fails"
