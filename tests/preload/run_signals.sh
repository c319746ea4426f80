#!/bin/bash
# run_signals.sh - 'syncprof run' passes the signals sent to it (TERM, HUP,
# INT, QUIT, USR1, USR2) on to the program, leaves no program behind, and
# exits as the program did (killed by signal N: killed by N itself).
# Usage: run_signals.sh SYNCPROF_CLI WORKDIR
#
# Every wait is bounded (wait_until, 10 s) and so is every program (30 s):
# a broken run fails the test, never hangs it or leaves processes behind.
# No time is asserted.
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 work=$2
mkdir -p "$work" && cd "$work" && rm -f pid.* out.* err.*
ulimit -c 0

# A background command of a non-interactive shell starts with SIGINT and
# SIGQUIT ignored (and run leaves ignored signals alone): reset them.  An
# array, not a function, so that $! is the pid of syncprof run itself.
dfl=(python3 -c 'import os, signal, sys
for s in (signal.SIGINT, signal.SIGQUIT):
	signal.signal(s, signal.SIG_DFL)
os.execvp(sys.argv[1], sys.argv[1:])')

# Running and not a zombie.
alive() { [ -r "/proc/$1/status" ] && ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null; }
dead() { ! alive "$1"; }
wait_until() {
	for _ in $(seq 100); do
		"$@" && return 0
		sleep 0.1
	done
	return 1
}

run_pid= prog_pid=
# start NAME SCRIPT: 'syncprof run -- sh -c SCRIPT' in the background; the
# script's first command writes its pid to pid.NAME.
start() {
	local name=$1 script=$2

	rm -f "pid.$name"
	"${dfl[@]}" "$cli" run -- sh -c "echo \$\$ > pid.$name; $script" > "out.$name" 2> "err.$name" &
	run_pid=$!
	prog_pid=
	if ! wait_until test -s "pid.$name"; then
		fail "$name: the program did not start: $(head -c 300 "err.$name")"
		return 1
	fi
	prog_pid=$(cat "pid.$name")
}

# finish NAME WANT_STATUS: run must end with WANT_STATUS and the program
# must be gone (not left running, reparented to init).
finish() {
	local name=$1 want=$2 rc

	if ! wait_until dead "$run_pid"; then
		fail "$name: syncprof run still running"
		kill -KILL "$run_pid" 2> /dev/null
	fi
	wait "$run_pid" 2> /dev/null
	rc=$?
	[ "$rc" -eq "$want" ] || fail "$name: syncprof run exited $rc, expected $want ($(head -c 300 "err.$name"))"
	if [ -n "$prog_pid" ] && ! wait_until dead "$prog_pid"; then
		fail "$name: the program (pid $prog_pid) is still running"
		kill -KILL "$prog_pid" 2> /dev/null
	fi
}

# Signals that kill the program: run dies of the same signal.
for sig in TERM HUP INT; do
	start "$sig" 'exec sleep 30' || continue
	kill -s "$sig" "$run_pid"
	finish "$sig" $((128 + $(kill -l "$sig")))
	grep -q "killed by signal $(kill -l "$sig")" "err.$sig" ||
		fail "$sig: no 'killed by signal' message: $(head -c 300 "err.$sig")"
done

# Signals the program handles: it exits 0, and so does run.
for sig in USR1 USR2 QUIT; do
	start "$sig" "trap 'echo got $sig; exit 0' $sig; for i in \$(seq 300); do sleep 0.1; done" || continue
	kill -s "$sig" "$run_pid"
	finish "$sig" 0
	grep -q "^got $sig\$" "out.$sig" || fail "$sig: the program did not get it: $(head -c 300 "out.$sig")"
done

# A signal ignored when run starts (nohup) stays ignored, by run and by the
# program; the next one still works.
rm -f pid.nohup
env --ignore-signal=HUP true 2> /dev/null && {
	env --ignore-signal=HUP "$cli" run -- sh -c 'echo $$ > pid.nohup; exec sleep 30' \
		> out.nohup 2> err.nohup &
	run_pid=$!
	if wait_until test -s pid.nohup; then
		prog_pid=$(cat pid.nohup)
		kill -s HUP "$run_pid"
		kill -s TERM "$run_pid"
		finish nohup 143
	else
		fail "nohup: the program did not start"
	fi
}

# run dies of the program's signal, not just exit(128 + N): a caller that
# waits sees WIFSIGNALED (Python's returncode -N).
python3 - "$cli" <<'PY' || fail "run does not die of the program's signal"
import subprocess, sys
for sig in (15, 9):
	p = subprocess.run([sys.argv[1], "run", "--", "sh", "-c", "kill -%d $$" % sig],
			   stderr=subprocess.DEVNULL, timeout=30)
	assert p.returncode == -sig, (sig, p.returncode)
PY

# ^C at a terminal reaches the whole foreground process group: the program
# gets it from the kernel and run must not send it a second one.  A copy
# that comes while the first is still pending merges with it, so the helper
# spins on sigtimedwait() to take the kernel's at once, then waits 0.3 s for
# a second; six rounds.  A duplicate may go unseen, but a correct run can
# never fail this.
python3 - "$cli" <<'PY' || fail "terminal ^C"
import os, pty, re, select, sys, time
rounds = 6
helper = r"""
import signal, time
signal.pthread_sigmask(signal.SIG_BLOCK, [signal.SIGINT])
for _ in range(%d):
	print("ready", flush=True)
	end, first = time.monotonic() + 20, None
	while first is None and time.monotonic() < end:
		first = signal.sigtimedwait([signal.SIGINT], 0)
	got = [first] if first else []
	while True:
		i = signal.sigtimedwait([signal.SIGINT], 0.3)
		if i is None:
			break
		got.append(i)
	print("sigint", " ".join("%%d:%%d" %% (i.si_code, i.si_pid) for i in got), flush=True)
""" % rounds
try:
	pid, fd = pty.fork()
except OSError as e:
	print("run_signals: no pty (%s): ^C not tested" % e)
	sys.exit(0)
if pid == 0:
	os.execv(sys.argv[1], [sys.argv[1], "run", "--", sys.executable, "-c", helper])
out, sent = b"", 0
deadline = time.monotonic() + 60
while time.monotonic() < deadline:
	if out.count(b"ready") > sent:
		os.write(fd, b"\x03")
		sent += 1
	if select.select([fd], [], [], 0.5)[0]:
		try:
			chunk = os.read(fd, 4096)
		except OSError: # EIO: the other side is closed
			break
		if not chunk:
			break
		out += chunk
else:
	os.kill(pid, 9)
_, status = os.waitpid(pid, 0)
text = out.decode(errors="replace")
got = re.findall(r"sigint((?: -?[0-9]+:[0-9]+)+)", text)
assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0, (status, text)
assert len(got) == rounds, ("%d rounds of %d" % (len(got), rounds), text)
assert all(len(g.split()) == 1 for g in got), ("SIGINT (si_code:si_pid) delivered twice", got)
PY

[ $fails -eq 0 ] && echo "run_signals: ok"
exit $((fails != 0))
