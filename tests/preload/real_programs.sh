#!/bin/bash
# real_programs.sh - syncprof run on programs nobody here wrote, from
# Debian (.ci/packages): pigz and sysbench; and the profile JSON of a -g
# program checked against "profile JSON version 1".
#
# Usage: real_programs.sh SYNCPROF_CLI SITES_TEST_PROGRAM WORKDIR
#   pigz -p 2 compresses and decompresses a generated 40 MB file under the
#   profiler; the output must be byte-identical to an unprofiled run, and
#   the report must have sites inside pigz.  sysbench's mutex test runs
#   under the profiler with --hold; its JSON is validated and must show
#   sites inside sysbench with the test's lock count.
# Exits 77 (CTest: skipped) when pigz, sysbench or python3 is missing.
. "$(dirname "$0")/../lib.sh"
set -eu
cli=$1 sites=$2 work=$3
here=$(cd "$(dirname "$0")" && pwd)
check="python3 $here/../check_profile_schema.py"

for tool in pigz sysbench python3 cmp; do
	command -v $tool >/dev/null || { echo "real_programs: $tool not installed; skipped"; exit 77; }
done
mkdir -p "$work"
cd "$work"
rm -f pigz.* sysbench.* sites.*


# ---- pigz ----
# 40 MB: compressible text and incompressible noise, so both paths work.
python3 - <<'PY'
import random
r = random.Random(42)
with open("pigz.in", "wb") as f:
    words = [b"lock", b"wait", b"mutex", b"thread", b"hold", b"site", b"blame", b"\n"]
    for _ in range(20):
        f.write(b" ".join(r.choice(words) for _ in range(200000)))
        f.write(r.randbytes(1 << 20))
PY
size=$(stat -c %s pigz.in)
[ "$size" -gt 30000000 ] || die "generated file too small ($size)"

pigz -p 2 -c pigz.in > pigz.plain.gz
"$cli" run -f json -o pigz.c.json -- pigz -p 2 -c pigz.in > pigz.prof.gz
cmp pigz.plain.gz pigz.prof.gz || die "pigz output differs under the profiler"
"$cli" run -n 10 -o pigz.d.txt -- pigz -p 2 -d -c pigz.prof.gz > pigz.out
cmp pigz.in pigz.out || die "pigz -d output differs under the profiler"
$check pigz.c.json --dso-suffix /pigz || die "pigz profile"
grep -Eq 'pigz\+0x|pigz [a-z_]' pigz.d.txt || { cat pigz.d.txt; die "no site inside pigz in the table"; }
# Exit status and stdin pass through.
echo hello | "$cli" run -- pigz -p 2 -c > pigz.stdin.gz
[ "$(pigz -dc pigz.stdin.gz)" = hello ] || die "stdin not passed through"
set +e
"$cli" run -- pigz -p 2 -d no-such-file.gz 2> pigz.err
rc=$?
set -e
[ $rc -ne 0 ] || die "pigz's failure status was not passed through"
# A debuginfod server in the environment that never answers (Debian sets
# DEBUGINFOD_URLS for login shells): the report must not wait for it.
# The "server" is a listener on loopback that accepts and never answers.
python3 -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
print(s.getsockname()[1], flush=True); time.sleep(120)' > pigz.port &
silent=$!
for _ in 1 2 3 4 5 6 7 8 9 10; do [ -s pigz.port ] && break; sleep 0.2; done
head -c 1000000 pigz.in | DEBUGINFOD_URLS="http://127.0.0.1:$(cat pigz.port)" timeout 60 \
	"$cli" run -- pigz -p 2 -c > /dev/null 2> pigz.dbg.txt || { kill $silent; die "report waited on debuginfod"; }
kill $silent 2>/dev/null || true
echo "real_programs: pigz ok ($size bytes, byte-identical)"

# ---- GNU sort and xz: programs that close stderr in an atexit handler ----
# (gnulib's close_stdout).  The report must still reach the stderr the
# program started with, and the outputs must be those of unprofiled runs.
if command -v xz >/dev/null && command -v sort >/dev/null; then
	head -c 8000000 pigz.in | base64 > sort.in
	sort --parallel=2 -S 20M sort.in -o sort.plain
	"$cli" run -n 5 -- sort --parallel=2 -S 20M sort.in -o sort.prof 2> sort.txt
	cmp sort.plain sort.prof || die "sort output differs under the profiler"
	grep -q 'syncprof: pid' sort.txt || { cat sort.txt; die "no report from GNU sort (stderr closed at exit)"; }
	grep -Eq 'sort\+0x|sort [a-z_]' sort.txt || { cat sort.txt; die "no site inside sort"; }
	xz -T2 -c sort.in > xz.plain
	"$cli" run -n 5 -- xz -T2 -c sort.in > xz.prof 2> xz.txt
	cmp xz.plain xz.prof || die "xz output differs under the profiler"
	grep -q 'syncprof: pid' xz.txt || { cat xz.txt; die "no report from xz"; }
	grep -q 'liblzma' xz.txt || { cat xz.txt; die "no site inside liblzma"; }
	echo "real_programs: GNU sort and xz -T2 ok (byte-identical, reports present)"
fi
head -12 pigz.d.txt

# ---- sysbench mutex ----
"$cli" run --hold -f json -o sysbench.json -- \
	sysbench mutex --threads=2 --mutex-num=64 --mutex-locks=20000 --mutex-loops=50 run \
	> sysbench.out
grep -q "total number of events" sysbench.out || die "sysbench output"
$check sysbench.json --hold --dso-suffix /sysbench --min-acquisitions 40000 || die "sysbench profile"
"$cli" run -n 5 -- sysbench mutex --threads=2 --mutex-num=64 --mutex-locks=20000 \
	--mutex-loops=50 run 2> sysbench.txt > /dev/null
grep -Eq 'sysbench\+0x|sb_[a-z_]+' sysbench.txt || die "no site inside sysbench"
echo "real_programs: sysbench ok"
cat sysbench.txt

# ---- a -g program: site.file and site.line filled ----
"$cli" run --hold --frames 6 -f json -o sites.json -- "$sites" wrapped > /dev/null
$check sites.json --hold --need-file-line preload_sites.c || die "file:line profile"
"$cli" run --no-coalesce -f json -o sites.noco.json -s count -- "$sites" wrapped > /dev/null
$check sites.noco.json --need-file-line preload_sites.c || die "--no-coalesce profile"
python3 -c '
import json, sys
d = json.load(open("sites.noco.json"))
assert d["coalesced"] is False and d["sort"] == "count", (d["coalesced"], d["sort"])
assert all(r["n_objects"] == 1 and r["object"] for r in d["rows"])
' || die "--no-coalesce/--sort not applied"
echo "real_programs: ok"
