#!/bin/sh
# attach_futex.sh SYNCPROF TARGET SOURCE - 'syncprof attach' on a running
# program whose waits never call pthread (attach_futex_target.c): its own
# futex lock through syscall() and a stdio FILE lock inside fprintf().
# Twice in a row: each report has a futex row at the program's syscall()
# line and a glibc_lock row at its fprintf() line; the program's
# syscall() results stay right (it counts errors), it keeps running
# between and after the attaches (the glibc patch outlives a detach, only
# waiting), and it exits as without attach.
set -u
SYNCPROF=$1 TARGET=$2 SRC=$3
. "$(dirname "$0")/attach_util.sh"
attach_can_ptrace

dir=$(mktemp -d)
trap 'exec 3>&- 2>/dev/null; kill $pid 2>/dev/null; rm -rf "$dir"' EXIT
futex_line=$(grep -n LINE_FUTEX "$SRC" | head -1 | cut -d: -f1)
stdio_line=$(grep -n LINE_STDIO "$SRC" | head -1 | cut -d: -f1)

mkfifo "$dir/in"
"$TARGET" < "$dir/in" > "$dir/out" &
pid=$!
exec 3> "$dir/in"
for i in $(seq 100); do grep -q ready "$dir/out" && break; sleep 0.05; done
grep -q ready "$dir/out" || fail "the target did not start"

for n in 1 2; do
	"$SYNCPROF" attach $pid -d 1.5 -f json -o "$dir/$n.json" 2> "$dir/$n.err"
	rc=$?
	attach_skip_if_refused "$dir/$n.err"
	[ $rc = 0 ] || fail "attach $n exited with $rc: $(cat "$dir/$n.err")"
	python3 - "$dir/$n.json" "$futex_line" "$stdio_line" "$n" <<'PY' || exit 1
import json, sys
p = json.load(open(sys.argv[1]))
futex_line, stdio_line, n = int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
def rows(t, line):
    return [r for r in p["rows"] if r["type"] == t and r["site"].get("line") == line and
            (r["site"].get("file") or "").endswith("attach_futex_target.c")]
where = [(r["type"], r["site"].get("function"), r["site"].get("line")) for r in p["rows"]]
bad = []
f, s = rows("futex", futex_line), rows("glibc_lock", stdio_line)
if not f or sum(r["wait_ns"] for r in f) <= 0:
    bad.append("no futex wait at line %d: %s" % (futex_line, where))
if not s or sum(r["wait_ns"] for r in s) <= 0:
    bad.append("no glibc_lock wait at line %d (fprintf): %s" % (stdio_line, where))
for b in bad:
    print("FAIL: attach %s: %s" % (n, b), file=sys.stderr)
if not bad:
    print("attach %s: futex %.1f ms in %d waits, stdio %.1f ms in %d waits" % (
        n, sum(r["wait_ns"] for r in f) / 1e6, sum(r["contended"] for r in f),
        sum(r["wait_ns"] for r in s) / 1e6, sum(r["contended"] for r in s)))
sys.exit(1 if bad else 0)
PY
	not_stopped $pid
	sleep 0.5 # running detached: the patch only waits
done
echo quit >&3
exec 3>&-
wait $pid
rc=$?
cat "$dir/out" | tail -1
[ $rc = 0 ] || fail "the target exited with $rc after the attaches: $(tail -1 "$dir/out")"
grep -q "errors 0" "$dir/out" || fail "syscall() results went wrong: $(tail -1 "$dir/out")"
echo "attach_futex: ok"
