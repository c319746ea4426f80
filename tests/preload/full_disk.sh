#!/bin/bash
# full_disk.sh - 'syncprof run --trace T -o R' when the disk is full
# (docs/trace-format.md, "Write errors").  Mode "tmpfs": a 64 KiB tmpfs,
# ENOSPC; mode "ulimit": RLIMIT_FSIZE of 64 KiB, EFBIG (and SIGXFSZ, which
# must not kill the program).  For the trace: the program's exit status is
# unchanged; stderr says at once, once, that writing the trace failed and at
# exit how many events that lost; 'syncprof trace dump' and 'stats' read the
# file to its end (no partial record) and say it is incomplete and what it
# lost.  For the report: no half-written JSON is left, no temporary file
# either; the report goes to stderr with a line saying why; a report that
# existed stays as it was, and is replaced once there is room.
# (With ulimit the report fits where the trace did not - the limit is per
# file - so the report's failure is made with a 1 KiB limit.)
# Usage: full_disk.sh SYNCPROF_CLI BANK WORKDIR tmpfs|ulimit
# Exits 77 (CTest: skipped) in mode tmpfs when mounting is not permitted
# (not root, no CAP_SYS_ADMIN, or mount fails).
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 bank=$2 work=$3 mode=$4
TEST_NAME="full_disk($mode)"

work=$work/$mode # one directory per mode: CTest runs them in parallel
mkdir -p "$work" && cd "$work" || exit 1
mnt=$work/mnt
mkdir -p "$mnt" && rm -rf "${mnt:?}"/*
if [ "$mode" = tmpfs ]; then
	why=
	[ "$(id -u)" = 0 ] || why="not root"
	if [ -z "$why" ]; then
		mountpoint -q "$mnt" && umount "$mnt"
		mount -t tmpfs -o size=64k tmpfs "$mnt" 2> mount.err || why="mount: $(cat mount.err)"
	fi
	if [ -n "$why" ]; then
		echo "full_disk: cannot mount a tmpfs ($why): skipped"
		exit 77
	fi
	trap 'umount "$mnt" 2>/dev/null || umount -l "$mnt"' EXIT
	error="No space left on device"
	limit() { "$@"; }
	no_room() { dd if=/dev/zero of="$mnt/fill" bs=1k count=200 2> /dev/null; "$@"; }
	room() { rm -f "$mnt/fill"; "$@"; }
else
	error="File too large"
	limit() ( ulimit -f 64 && "$@" )
	no_room() ( ulimit -f 1 && "$@" )
	room() { "$@"; }
fi
trace=$mnt/t.bin report=$mnt/r.json

# The trace fills the disk (or the limit); the report then has no room.
limit "$cli" run --trace "$trace" --trace-events all -o "$report" -f json -- "$bank" 4 50000 > out.txt 2> err.txt
rc=$?
[ $rc -eq 0 ] || fail "exit status $rc, expected the program's 0: $(head -c 300 err.txt)"
grep -q "books balance" out.txt || fail "the program's own output is missing"
want="syncprof: warning: writing the trace file '$trace' failed: $error; events from now on are counted as dropped"
[ "$(grep -cF -- "$want" err.txt)" = 1 ] || fail "stderr does not say once: $want"
grep -Eq "^syncprof: warning: [0-9]+ events were lost to the write error on the trace file '$trace' \($error\), from [0-9.]+ s to [0-9.]+ s after the trace started" err.txt ||
	fail "stderr does not count the lost events: $(grep syncprof: err.txt | head -5)"

# The trace: every record readable, and the loss stated; exit status 3.
"$cli" trace dump "$trace" > dump.txt 2> dump.err
rc=$?
[ $rc -eq 3 ] || fail "trace dump: exit $rc, expected 3 (incomplete): $(cat dump.err)"
grep -q "ends inside" dump.err && fail "trace dump found a partial record: $(cat dump.err)"
grep -q "is incomplete: writing it failed ($error)" dump.err ||
	fail "trace dump does not say the file is incomplete: $(cat dump.err)"
grep -q " lock_acquired " dump.txt || fail "trace dump shows no events"
"$cli" trace stats "$trace" > stats.txt 2> stats.err
rc=$?
[ $rc -eq 3 ] || fail "trace stats: exit $rc, expected 3: $(cat stats.err)"
grep -Eq "^lost: .*(after a write error \($error\))" stats.txt ||
	fail "trace stats has no 'lost:' line: $(cat stats.txt)"
grep -q "is incomplete: writing it failed ($error)" stats.err || fail "trace stats: $(cat stats.err)"

# The report: not in the file, not half in it; on stderr, whole.
check_report_on_stderr() {
	grep -Eq "^syncprof: (writing the report to '$report' failed: $error; the report follows on stderr|cannot write the report to '$report' \($error\); writing it to stderr)$" err.txt ||
		{ fail "stderr does not say the report could not be written: $(grep syncprof: err.txt | head -5)"; return; }
	python3 - err.txt <<'PY' || fail "the report on stderr is not whole JSON"
import json, re, sys
text = open(sys.argv[1]).read()
at = re.search(r"^syncprof: (writing|cannot write) the report.*\n", text, re.M).end()
json.loads(text[at:])
PY
}
if [ "$mode" = tmpfs ]; then
	check_report_on_stderr
	[ -e "$report" ] && fail "a report file was left: $(head -c 100 "$report")"
else
	python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$report" ||
		fail "the report is not whole JSON"
fi
ls "$mnt" | grep -q '\.tmp$' && fail "a temporary file was left: $(ls "$mnt")"

# No room for the report, and an older one: it stays as it was.  (stderr
# through a pipe: RLIMIT_FSIZE would cut a file.)
rm -f "$trace"
echo '{"old": true}' > "$report"
no_room "$cli" run -o "$report" -f json -- "$bank" 2 20000 2>&1 > out.txt | cat > err.txt
rc=${PIPESTATUS[0]}
[ $rc -eq 0 ] || fail "report only: exit status $rc: $(head -c 300 err.txt)"
[ "$(cat "$report")" = '{"old": true}' ] || fail "the older report changed: $(head -c 100 "$report")"
check_report_on_stderr
ls "$mnt" | grep -q '\.tmp$' && fail "a temporary file was left: $(ls "$mnt")"

# Room again: the report replaces the old one, whole.
room "$cli" run -o "$report" -f json -- "$bank" 2 20000 > out.txt 2> err.txt
rc=$?
[ $rc -eq 0 ] || fail "with room: exit status $rc: $(head -c 300 err.txt)"
grep -q "syncprof:" err.txt && fail "with room, stderr says: $(grep syncprof: err.txt)"
python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); assert d["format"] == "syncprof-profile"' \
	"$report" || fail "the new report is not whole JSON"
ls "$mnt" | grep -q '\.tmp$' && fail "a temporary file was left: $(ls "$mnt")"

[ $fails -eq 0 ] && echo "full_disk($mode): all passed"
[ $fails -eq 0 ]
