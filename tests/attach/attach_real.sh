#!/bin/sh
# attach_real.sh SYNCPROF python3|memcached - 'syncprof attach' twice on a
# real program from Debian that was started without syncprof, under load:
#   python3    a threaded workload (threading.Lock, Condition, the GIL);
#   memcached  4 worker threads, a Python client in 4 threads setting and
#              getting keys (and checking every answer).
# Both reports need rows at the program's own call sites; the program's
# output (python3) or the client's checks (memcached), and the exit status
# after SIGTERM (memcached), are those of a run without attach.
set -u
SYNCPROF=$1
WHAT=$2
. "$(dirname "$0")/attach_util.sh"
# Debian's python3 (the one .ci/packages installs), else the first in PATH.
PY=/usr/bin/python3
[ -x $PY ] || PY=$(command -v python3) || { echo "SKIP: no python3"; exit 77; }
attach_can_ptrace

dir=$(mktemp -d)
pid=""
trap 'exec 3>&- 2>/dev/null; [ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT

# attach_twice PID DSO: two sessions, JSON then table; rows of DSO in each.
attach_twice() {
	"$SYNCPROF" attach $1 -d 1.5 -f json -o "$dir/one.json" 2> "$dir/one.err"
	rc=$?
	attach_skip_if_refused "$dir/one.err"
	cat "$dir/one.err"
	[ $rc = 0 ] || fail "first attach exited with $rc"
	not_stopped $1
	python3 - "$dir/one.json" "$2" <<'PY' || fail "first report"
import json, sys
d = json.load(open(sys.argv[1]))
own = [r for r in d["rows"] if sys.argv[2] in (r["site"]["dso"] or "")]
assert own, ("no row at a site of", sys.argv[2], [r["site"] for r in d["rows"]])
assert sum(r["acquisitions"] for r in own) > 0, own
print("first report: %d rows, %d at %s's sites, types %s" % (len(d["rows"]), len(own),
      sys.argv[2], sorted({r["type"] for r in own})))
PY
	"$SYNCPROF" attach $1 -d 1.5 -n 5 -f csv > "$dir/two.csv" 2> "$dir/two.err"
	rc=$?
	cat "$dir/two.err" "$dir/two.csv"
	[ $rc = 0 ] || fail "second attach exited with $rc"
	grep -q "$2" "$dir/two.csv" || fail "second report has no row of $2"
	not_stopped $1
}

case "$WHAT" in
python3)
	cat > "$dir/work.py" <<'PY'
import sys, threading
lock = threading.Lock()
cond = threading.Condition()
stop = threading.Event()
counts = [0] * 4
total = [0]
box = []
def worker(i):
    while not stop.is_set():
        with lock:
            total[0] += 1
            counts[i] += 1
def producer():
    n = 0
    while not stop.is_set():
        with cond:
            while box and not stop.is_set():
                cond.wait(0.05)
            box.append(n); n += 1
            cond.notify_all()
def consumer():
    while not stop.is_set():
        with cond:
            while not box and not stop.is_set():
                cond.wait(0.05)
            box.clear()
            cond.notify_all()
ts = [threading.Thread(target=worker, args=(i,)) for i in range(4)]
ts += [threading.Thread(target=producer), threading.Thread(target=consumer)]
for t in ts: t.start()
print("ready", flush=True)
for line in sys.stdin:
    if line.strip() == "quit": break
stop.set()
for t in ts: t.join()
print("lock counter", "consistent" if sum(counts) == total[0] else "WRONG")
sys.exit(7)
PY
	(sleep 0.5; echo quit) | "$PY" "$dir/work.py" > "$dir/plain.out"
	plain_rc=$?
	mkfifo "$dir/in"
	"$PY" "$dir/work.py" < "$dir/in" > "$dir/attached.out" &
	pid=$!
	exec 3> "$dir/in"
	for i in $(seq 200); do grep -q ready "$dir/attached.out" && break; sleep 0.05; done
	exe=$(readlink /proc/$pid/exe)
	attach_twice $pid python3
	echo quit >&3
	exec 3>&-
	wait $pid
	rc=$?
	pid=""
	[ $rc = $plain_rc ] || fail "python3 exit status $rc with attach, $plain_rc without"
	cmp "$dir/plain.out" "$dir/attached.out" || fail "python3 output differs"
	echo "PASS: python3 ($exe) attached twice; same output and exit status ($rc)"
	;;
memcached)
	MC=$(command -v memcached || ls /usr/bin/memcached 2>/dev/null) ||
		{ echo "SKIP: no memcached (Debian package memcached)"; exit 77; }
	user=""
	[ "$(id -u)" = 0 ] && user="-u root"
	cat > "$dir/client.py" <<'PY'
import socket, sys, threading, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
bad = []
def client(c):
    s = socket.create_connection(("127.0.0.1", port))
    f = s.makefile("rb")
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        key = b"k%d_%d" % (c, n % 500)
        val = b"v%d" % n
        s.sendall(b"set %s 0 0 %d\r\n%s\r\n" % (key, len(val), val))
        if f.readline() != b"STORED\r\n": bad.append("set")
        s.sendall(b"get %s\r\n" % key)
        if f.readline() != b"VALUE %s 0 %d\r\n" % (key, len(val)) or \
           f.readline() != val + b"\r\n" or f.readline() != b"END\r\n":
            bad.append("get")
        n += 1
    s.close()
ts = [threading.Thread(target=client, args=(c,)) for c in range(4)]
for t in ts: t.start()
for t in ts: t.join()
print("answers", "consistent" if not bad else "WRONG %d" % len(bad))
PY
	run_memcached() { # -> $pid, $port
		for try in 1 2 3 4 5; do
			port=$(( 20000 + ($$ * 7 + try * 131) % 30000 ))
			"$MC" -l 127.0.0.1 -p $port -U 0 -t 4 $user > "$dir/mc.log" 2>&1 &
			pid=$!
			for i in $(seq 100); do
				python3 -c "import socket; socket.create_connection(('127.0.0.1', $port))" \
					2> /dev/null && return 0
				kill -0 $pid 2> /dev/null || break
				sleep 0.05
			done
			kill $pid 2> /dev/null; wait $pid 2> /dev/null
		done
		fail "memcached did not start: $(cat "$dir/mc.log")"
	}
	# Without attach.
	run_memcached
	python3 "$dir/client.py" $port 2 > "$dir/plain.out"
	kill -TERM $pid; wait $pid; plain_rc=$?
	# With two attaches, under the same load.
	run_memcached
	python3 "$dir/client.py" $port 6 > "$dir/attached.out" &
	client=$!
	sleep 0.5
	attach_twice $pid memcached
	wait $client
	kill -TERM $pid; wait $pid; rc=$?
	pid=""
	cat "$dir/attached.out"
	[ $rc = $plain_rc ] || fail "memcached exit status $rc with attach, $plain_rc without"
	cmp "$dir/plain.out" "$dir/attached.out" || fail "client: $(cat "$dir/attached.out")"
	echo "PASS: memcached attached twice under load; answers right, exit status $rc"
	;;
*) fail "usage: attach_real.sh SYNCPROF python3|memcached";;
esac
