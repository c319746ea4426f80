#!/bin/sh
# attach.sh SYNCPROF TARGET - 'syncprof attach' on a running lock-heavy
# program (attach_target.c), three times in a row (the last one ended by
# SIGTERM instead of --duration): the reports have rows for the
# program's sites, the program's GOT slot is redirected while attached and
# put back after, and its output and exit status are those of a run
# without attach.  While the first attach lasts, the program forks a
# child that locks (the "fork" command): the child must find its GOT slot
# put back and profiling off, and print and exit as without attach.
set -u
SYNCPROF=$1
TARGET=$2
. "$(dirname "$0")/attach_util.sh"
attach_can_ptrace

dir=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill $pid 2>/dev/null; rm -rf "$dir"' EXIT

# Without attach.
(sleep 0.5; echo fork; sleep 0.5; echo quit) | "$TARGET" > "$dir/plain.out"
plain_rc=$?
[ $plain_rc = 7 ] || fail "the target alone exited with $plain_rc, not 7"

# With two attaches.
mkfifo "$dir/in"
"$TARGET" < "$dir/in" > "$dir/attached.out" &
pid=$!
exec 3> "$dir/in"
for i in $(seq 100); do grep -q ready "$dir/attached.out" && break; sleep 0.05; done

# ask COMMAND PATTERN TRIES: send the target COMMAND, wait (TRIES x 50 ms
# at most) for one more output line starting with PATTERN, print the last.
ask() {
	n=$(grep -c "^$2" "$dir/attached.out")
	echo "$1" >&3
	for i in $(seq "$3"); do
		[ "$(grep -c "^$2" "$dir/attached.out")" -gt "$n" ] && break
		sleep 0.05
	done
	grep "^$2" "$dir/attached.out" | tail -1
}
# ask_status: which function the target's GOT slot holds ("got=NAME").
ask_status() { ask status got= 100; }
# ask_fork: the target forks a child and waits for it ("child exited N").
ask_fork() { ask fork 'child exited' 200 > /dev/null; }

[ "$(ask_status)" = got=libc ] || fail "before attach: $(ask_status)"
threads=$(ls /proc/$pid/task | wc -l)
fds=$(ls /proc/$pid/fd | wc -l)

# left_as_before: no thread, no descriptor of ours left in the target.
left_as_before() {
	[ "$(ls /proc/$pid/task | wc -l)" = "$threads" ] ||
		fail "$1: $(ls /proc/$pid/task | wc -l) threads, $threads before attach"
	[ "$(ls /proc/$pid/fd | wc -l)" = "$fds" ] ||
		fail "$1: open files $(ls -l /proc/$pid/fd), $fds before attach"
}

# 1: JSON into a file; the slot is looked at while attached.
"$SYNCPROF" attach $pid -d 2 -f json -o "$dir/one.json" 2> "$dir/one.err" &
cli=$!
for i in $(seq 100); do grep -q "attached to" "$dir/one.err" && break; sleep 0.05; done
attach_skip_if_refused "$dir/one.err"
during=$(ask_status)
ask_fork
wait $cli
rc=$?
cat "$dir/one.err"
[ $rc = 0 ] || fail "first attach exited with $rc"
[ "$during" = got=other ] || fail "while attached the GOT slot was not redirected ($during)"
grep -q '^child exited 5$' "$dir/attached.out" || fail "the child forked while attached: $(
	grep '^child' "$dir/attached.out")"
grep -q '^child got=libc$' "$dir/attached.out" ||
	fail "a child forked while attached kept the redirected GOT slot"
grep -q '^child profiling off$' "$dir/attached.out" ||
	fail "a child forked while attached is profiled: $(grep '^child' "$dir/attached.out")"
not_stopped $pid
left_as_before "after the first detach"
[ "$(ask_status)" = got=libc ] || fail "after the first detach the slot is not libc's"
grep -q "slots put back" "$dir/one.err" || fail "no detach line"

python3 - "$dir/one.json" <<'PY' || fail "first report"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["format"] == "syncprof-profile", d.get("format")
fns = {r["site"]["function"]: r for r in d["rows"]}
for want, typ in [("worker_mutex", "mutex"), ("worker_reader", "rwlock_read"),
                  ("worker_writer", "rwlock_write"), ("producer", "condvar"),
                  ("consumer", "condvar")]:
    assert want in fns, ("no row for", want, sorted(fns))
rows = [r for r in d["rows"] if r["site"]["function"] == "worker_mutex"]
assert sum(r["acquisitions"] for r in rows) > 0, rows
assert all(r["site"]["file"] and r["site"]["file"].endswith("attach_target.c") for r in rows), rows
assert "child_worker" not in fns, "the forked child's locks are in the parent's report"
print("first report:", len(d["rows"]), "rows")
PY

# 2: the default table on stdout, top 3.
"$SYNCPROF" attach $pid --duration 1 -n 3 > "$dir/two.txt" 2> "$dir/two.err"
rc=$?
cat "$dir/two.err" "$dir/two.txt"
[ $rc = 0 ] || fail "second attach exited with $rc"
grep -q "attach_target.c:" "$dir/two.txt" || fail "second report has no row of the target"
# rows only: the lines under a row (lock created at ...) are indented
[ "$(grep -c '^[^ ].*attach_target.c:' "$dir/two.txt")" -le 3 ] || fail "-n 3 not applied"
not_stopped $pid
left_as_before "after the second detach"
[ "$(ask_status)" = got=libc ] || fail "after the second detach the slot is not libc's"

# 3: no --duration: until SIGTERM (Ctrl-C's SIGINT is ignored by a
# background job of a script); the report still comes, folded.
"$SYNCPROF" attach $pid -f folded > "$dir/three.folded" 2> "$dir/three.err" &
cli=$!
for i in $(seq 200); do grep -q "attached to" "$dir/three.err" && break; sleep 0.05; done
sleep 0.5
kill -TERM $cli
wait $cli
rc=$?
cat "$dir/three.err"
[ $rc = 0 ] || fail "third attach (ended by SIGTERM) exited with $rc"
grep -q "worker_mutex" "$dir/three.folded" || fail "third report: $(head -3 "$dir/three.folded")"
not_stopped $pid
left_as_before "after the third detach"
[ "$(ask_status)" = got=libc ] || fail "after the third detach the slot is not libc's"

echo quit >&3
exec 3>&-
wait $pid
rc=$?
[ $rc = $plain_rc ] || fail "exit status with attach $rc, without $plain_rc"
grep -v -e '^got=' -e '^ready' "$dir/attached.out" > "$dir/attached.filtered"
grep -v -e '^ready' "$dir/plain.out" > "$dir/plain.filtered"
cmp "$dir/plain.filtered" "$dir/attached.filtered" ||
	fail "output differs: $(cat "$dir/attached.filtered")"
echo "PASS: three attaches, same output and exit status ($rc)"
