#!/bin/bash
# one_line_errors.sh - bad input gets one clear line, every time (issue 28,
# item 5, and item 3):
#   - 'trace export' without -o, 'trace dump' and 'trace stats' without a
#     file: one line naming what is missing, exit 2 (the usage is --help's);
#   - a trace whose header says writing failed with an errno no system has
#     (a damaged header): said as such, in one line, not "Unknown error -1";
#   - output=/proc/self/mem (preloaded) and run -o /proc/self/mem: refused
#     as a /proc file, not "No such file or directory"; the report goes to
#     stderr;
#   - 9,000 unknown SYNCPROF_OPTIONS keys: eight warnings and one line with
#     the count of the rest;
#   - 'report --trace' with the trace of another process than the
#     profile's: refused in one line, exit 1, no page.
# Usage: one_line_errors.sh SYNCPROF_CLI PRELOAD_LIB PROGRAM WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 preload=$2 prog=$3 work=$4
mkdir -p "$work" && cd "$work" && rm -f ./*.txt ./*.trace ./*.json ./*.html || exit 1
# one_line WANT_STATUS REGEX -- command...: stderr is one line matching REGEX
one_line() {
	local want=$1 re=$2
	shift 3
	"$@" > out.txt 2> err.txt
	local rc=$?
	[ "$rc" -eq "$want" ] || fail "'$*': exit $rc, expected $want: $(head -c 300 err.txt)"
	[ "$(wc -l < err.txt)" -eq 1 ] || fail "'$*': $(wc -l < err.txt) lines on stderr: $(head -c 600 err.txt)"
	grep -Eq "$re" err.txt || fail "'$*': stderr lacks /$re/: $(head -c 300 err.txt)"
}

"$cli" run --trace a.trace -f json -o a.json -- "$prog" > /dev/null 2>&1 || fail "the traced run failed"
"$cli" run --trace b.trace -f json -o b.json -- "$prog" > /dev/null 2>&1 || fail "the second traced run failed"
one_line 2 "trace export: -o OUT is missing" -- "$cli" trace export --format perfetto a.trace
one_line 2 "trace export: --format is missing" -- "$cli" trace export a.trace -o x.pftrace
one_line 2 "trace dump: the trace FILE is missing" -- "$cli" trace dump
one_line 2 "trace stats: the trace FILE is missing" -- "$cli" trace stats

# The header's write error flag (offset 56) and errno (60) set to -1.
cp a.trace damaged.trace
python3 - damaged.trace <<'PY'
import struct, sys
with open(sys.argv[1], "r+b") as f:
    f.seek(56)
    f.write(struct.pack("<Ii", 1, -1))
PY
one_line 3 "is incomplete: writing it failed \(an error number no system has, -1: the header may be damaged\)" \
	-- "$cli" trace stats damaged.trace
grep -q "Unknown error" err.txt && fail "trace stats says 'Unknown error': $(cat err.txt)"

# /proc/self/mem as the output.
SYNCPROF_OPTIONS=output=/proc/self/mem LD_PRELOAD=$preload "$prog" > /dev/null 2> mem.txt
grep -q "cannot write the report to '/proc/self/mem' (a file of /proc or /sys, where no report can go); writing it to stderr" mem.txt ||
	fail "output=/proc/self/mem: $(grep -m1 cannot mem.txt)"
grep -q '^syncprof: pid ' mem.txt || fail "output=/proc/self/mem: no report on stderr"
"$cli" run -o /proc/self/mem -- "$prog" > /dev/null 2> runmem.txt
grep -q "cannot write the report to '/proc/self/mem' (a file of /proc or /sys" runmem.txt ||
	fail "run -o /proc/self/mem: $(grep -m1 cannot runmem.txt)"

# 9,000 unknown keys.
SYNCPROF_OPTIONS=$(python3 -c "print(','.join('key%d=1' % i for i in range(9000)))") \
	"$cli" run -- "$prog" > /dev/null 2> keys.txt
n=$(grep -c "unknown option" keys.txt)
[ "$n" -eq 8 ] || fail "9,000 unknown keys: $n warning lines, want 8"
grep -q "^syncprof: warning: 8992 more problems in SYNCPROF_OPTIONS (not shown); ignored$" keys.txt ||
	fail "9,000 unknown keys: no count of the rest: $(grep -v 'unknown option' keys.txt | head -3)"

# Another process's trace under a profile.
one_line 1 "'b.trace' is the trace of process [0-9]+, 'a.json' the profile of process [0-9]+: not drawn together" \
	-- "$cli" report -f html --trace b.trace -o ab.html a.json
[ -e ab.html ] && fail "report --trace of another process wrote a page"
"$cli" report -f html --trace a.trace -o aa.html a.json 2> err.txt || fail "report --trace of the same process: $(cat err.txt)"

[ "$fails" -eq 0 ] || exit 1
echo "one_line_errors: ok"
