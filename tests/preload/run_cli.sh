#!/bin/bash
# run_cli.sh - 'syncprof run': options, errors, exit status, signals,
# stdio pass-through, %p outputs, finding the preload library.
# Usage: run_cli.sh SYNCPROF_CLI TEST_PROGRAM_DIR WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 progs=$2 work=$3
mkdir -p "$work" && cd "$work" && rm -f out.* err.*

# expect STATUS STDERR_REGEX -- command...
expect() {
	local want=$1 re=$2
	shift 3
	"$@" > out.txt 2> err.txt < /dev/null
	local rc=$?
	[ $rc -eq "$want" ] || fail "'$*': exit $rc, expected $want ($(head -c 300 err.txt))"
	[ -z "$re" ] || grep -Eq "$re" err.txt || fail "'$*': stderr lacks /$re/: $(head -c 300 err.txt)"
}

expect 0 "" -- "$cli" run --help
grep -q "Example" out.txt || fail "--help has no example"
for o in --output --format --top --sort --no-coalesce --frames --skip --hold; do
	grep -q -- "$o" out.txt || fail "--help does not document $o"
done
expect 2 "unknown option '--bogus'" -- "$cli" run --bogus -- true
expect 2 "bad value 'xml' for --format" -- "$cli" run -f xml -- true
expect 2 "bad value 'many' for --top" -- "$cli" run -n many -- true
expect 2 "bad value 'speed' for --sort" -- "$cli" run -s speed -- true
expect 2 "bad value '99' for --frames" -- "$cli" run --frames 99 -- true
expect 2 "no program given" -- "$cli" run --
expect 2 "no program given" -- "$cli" run --hold
expect 2 "needs a value" -- "$cli" run --skip
expect 2 "bad value '\(' for --skip" -- "$cli" run --skip '(' -- true
expect 2 "bad value 'a,b:c' for --columns" -- "$cli" run --columns 'a,b:c' -- true
expect 2 "takes no value" -- "$cli" run --hold=1 -- true
expect 127 "no-such-program: command not found" -- "$cli" run -- no-such-program
expect 127 "No such file" -- "$cli" run -- ./no/such/file
# A 32-bit program: said clearly (ld.so alone would only say "wrong ELF
# class"), and it still runs.  A minimal i386 executable that exits 0, made
# here (no gcc-multilib needed); where the kernel cannot run i386 programs
# run exits 126, after the same warning.
python3 - <<'PY'
import struct
code = bytes([0xb8, 1, 0, 0, 0, 0x31, 0xdb, 0xcd, 0x80])  # exit(0) via int 0x80
base, eh_size, ph_size = 0x08048000, 52, 32
entry = base + eh_size + ph_size
eh = b"\x7fELF" + bytes([1, 1, 1, 0]) + bytes(8) + struct.pack(
    "<HHIIIIIHHHHHH", 2, 3, 1, entry, eh_size, 0, 0, eh_size, ph_size, 1, 0, 0, 0)
size = eh_size + ph_size + len(code)
ph = struct.pack("<IIIIIIII", 1, 0, base, base, size, size, 5, 0x1000)
open("out.i386", "wb").write(eh + ph + code)
PY
chmod +x out.i386
"$cli" run -- ./out.i386 > out.txt 2> err.txt < /dev/null
rc=$?
# 0 where the kernel runs 32-bit programs; 126 or 127 where it has no
# IA-32 emulation (execvp then hands the file to sh, which fails on it).
[ $rc -eq 0 ] || [ $rc -eq 126 ] || [ $rc -eq 127 ] || fail "32-bit program: exit $rc"
grep -q "is a 32-bit program" err.txt || fail "32-bit program: no warning: $(head -c 300 err.txt)"
printf 'x' > out.notexec
expect 126 "not an executable file" -- "$cli" run -- ./out.notexec
expect 126 "not an executable file" -- "$cli" run -- /tmp
# A static program is run, with a warning that it cannot be interposed.
if printf 'int main(void){return 4;}' | cc -static -x c - -o out.static 2>/dev/null; then
	expect 4 "statically linked" -- "$cli" run -- ./out.static
	# ... and so is one a shell under run starts (the preload's execve),
	# which still runs and returns its status; a missing program still
	# fails as without the profiler (errno kept: 127, not found).
	expect 4 "warning: ./out.static is statically linked: its lock calls cannot be interposed, it runs unprofiled" \
		-- "$cli" run -o /dev/null -- sh -c './out.static; exit $?'
	expect 127 "not found" -- "$cli" run -o /dev/null -- sh -c './no-such-program-here'
	grep -q "statically linked" err.txt && fail "a missing program was said to be static"
fi
# Exit status and signals pass through.
expect 3 "" -- "$cli" run -- sh -c 'exit 3'
expect 137 "killed by signal 9" -- "$cli" run -- sh -c 'kill -9 $$'
expect 143 "killed by signal 15" -- "$cli" run -- sh -c 'kill -TERM $$'
# A killed program's -o FILE from an earlier run is removed, but only a
# regular file: a FIFO (as /dev/null would be) stays what it was.
echo stale > out.stale
expect 137 "removed 'out.stale'" -- "$cli" run -o out.stale -- sh -c 'kill -9 $$'
[ -e out.stale ] && fail "a killed run left the earlier report out.stale"
rm -f out.fifo && mkfifo out.fifo
expect 137 "killed by signal 9" -- "$cli" run -o out.fifo -- sh -c 'kill -9 $$'
[ -p out.fifo ] || fail "a killed run removed the FIFO given to -o"
grep -q "removed" err.txt && fail "a killed run says it removed the FIFO: $(cat err.txt)"
rm -f out.fifo
# stdin/stdout pass through; the report goes to stderr by default.
out=$(echo piped | "$cli" run -- "$progs/preload_sites" wrapped 2> err.txt | head -1)
[ -n "$out" ] || fail "no stdout from the program"
grep -q "^syncprof: pid" err.txt || fail "no report on stderr"
[ "$(echo hello | "$cli" run -- cat 2>/dev/null)" = hello ] || fail "stdin/stdout"
# -o with %p, -f json, -n, -s, --no-coalesce, --frames, --skip, --hold.
"$cli" run -o out.%p.json -f json -n 1 -s count --no-coalesce --frames 2 \
	--skip '^wrap_lock$' --skip '^wrap_unlock$' --hold -- "$progs/preload_sites" skipped \
	> /dev/null 2> err.txt || fail "full option set: $(cat err.txt)"
ls out.*.json > /dev/null 2>&1 || fail "-o out.%p.json wrote nothing"
grep -q "matched no function" err.txt && fail "a matching --skip said it matched nothing: $(cat err.txt)"
# On a terminal (script(1) gives one): -f pprof without -o is refused
# before the program runs (gzip bytes), and -o FILE says where the report
# went; 'report -f pprof' to a terminal is refused too.
if command -v script > /dev/null; then
	script -qec "\"$cli\" run -f pprof -- true" /dev/null > tty.txt 2>&1
	grep -q "pprof writes gzip-compressed protobuf, not text: give -o FILE" tty.txt ||
		fail "run -f pprof on a terminal: $(cat tty.txt)"
	script -qec "\"$cli\" run -o out.tty.txt -- \"$progs/preload_sites\" wrapped > /dev/null" \
		/dev/null > tty.txt 2>&1
	grep -q "syncprof: the report is in .*/out.tty.txt" tty.txt ||
		fail "run -o FILE on a terminal does not say where the report went: $(cat tty.txt)"
	grep -q "^syncprof: pid" out.tty.txt || fail "run -o FILE on a terminal: no report in it"
	script -qec "\"$cli\" report -f pprof $(ls out.*.json | head -1)" /dev/null > tty.txt 2>&1
	grep -q "pprof writes gzip-compressed protobuf" tty.txt ||
		fail "report -f pprof on a terminal: $(head -c 200 tty.txt)"
fi
"$cli" run -o out.notty.txt -- "$progs/preload_sites" wrapped > /dev/null 2> err.txt
grep -q "the report is in" err.txt && fail "run -o FILE said where the report went into a file"
# A --skip regex that matches no function: said once by each process that
# reports (the program twice here), never by the shell that recorded nothing.
"$cli" run -o /dev/null --skip '^no_such_wrapper_fn$' --skip '^wrap_lock$' -- \
	sh -c "\"$progs/preload_sites\" skipped >/dev/null; \"$progs/preload_sites\" skipped >/dev/null" \
	2> err.txt || fail "--skip matching nothing: $(cat err.txt)"
n=$(grep -c "skip='^no_such_wrapper_fn\$' matched no function of preload_sites" err.txt)
[ "$n" = 2 ] || fail "--skip matching nothing said $n times, not once per program: $(cat err.txt)"
grep -q "skip='^wrap_lock\$' matched no" err.txt && fail "a matching --skip was said to match nothing"
grep -q "of sh " err.txt && fail "the shell, which recorded nothing, spoke: $(cat err.txt)"
python3 - out.*.json <<'PY' || fail "options not applied in the JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["sort"] == "count" and d["coalesced"] is False, (d["sort"], d["coalesced"])
assert len(d["rows"]) == 1, len(d["rows"])
r = d["rows"][0]
assert r["site"]["function"] in ("caller_a", "caller_b"), r["site"]
assert len(r["stack"]) <= 2 and r["hold_ns"] is not None and "blame" in r, r
assert d["pid"] > 0 and sys.argv[1] == "out.%d.json" % d["pid"]
PY
# A forking program: one report per process.
rm -f out.*.json
rm -f out.*.txt
"$cli" run -o out.%p.txt -- bash -c "\"$progs/preload_sites\" wrapped; echo y" > /dev/null 2> err.txt ||
	fail "fork: $(cat err.txt)"
[ "$(ls out.*.txt 2>/dev/null | wc -l)" -eq 2 ] || fail "expected a report from bash and one from its child"
# A process the program starts that locked nothing stays quiet (shell
# wrappers start many); the program itself always reports.
rm -f out.*.txt
"$cli" run -o out.%p.txt -- bash -c '/bin/true; /bin/true; echo y' > /dev/null 2> err.txt ||
	fail "quiet children: $(cat err.txt)"
[ "$(ls out.*.txt 2>/dev/null | wc -l)" -eq 1 ] || fail "expected only the program's report: $(ls out.*.txt)"
# SYNCPROF_OPTIONS already set is kept; options given here win.
SYNCPROF_OPTIONS=format=json,top=7 "$cli" run -n 1 -o out.env.json -- "$progs/preload_sites" wrapped \
	> /dev/null 2>&1
python3 -c 'import json; d = json.load(open("out.env.json")); assert len(d["rows"]) <= 1' ||
	fail "SYNCPROF_OPTIONS not merged"
# Values with separators reach the program escaped: an output name with
# ',', ':' and a space, and a columns list.
rm -f "out a,b:c.txt"
expect 0 "" -- "$cli" run -o "out a,b:c.txt" --columns site,count -- "$progs/preload_sites" wrapped
grep -q "Call site" "out a,b:c.txt" || fail "-o 'out a,b:c.txt' not written: $(ls)"
head -n 4 "out a,b:c.txt" | grep -q "Wait Time" && fail "--columns site,count not applied"
grep -q "warning" err.txt && fail "escaped values warned: $(cat err.txt)"
# The twin with the sanitizers' separators, and a quoted value.
SYNCPROF_OPTIONS="format=json:top=1 output='out.sep,1.json'" "$cli" run -- "$progs/preload_sites" wrapped \
	> /dev/null 2> err.txt
python3 -c 'import json; d = json.load(open("out.sep,1.json")); assert len(d["rows"]) <= 1' ||
	fail "':', ' ' and quotes in SYNCPROF_OPTIONS: $(cat err.txt)"
# A bad option warns once, also when the program's children inherit it:
# sh, then the program it runs, each load the library.
SYNCPROF_OPTIONS=bogus=1 "$cli" run -o /dev/null -- sh -c "\"$progs/preload_sites\" wrapped" \
	> /dev/null 2> err.txt
[ "$(grep -c "unknown option 'bogus'" err.txt)" -eq 1 ] || fail "bad option not warned once: $(cat err.txt)"
# ctl --help says what run turns on by default, and it is true: a program
# started by run (no options) answers ctl.
"$cli" ctl --help > out.txt
grep -q "syncprof run -- ./prog' (or LD_PRELOAD" out.txt && grep -q -- "--no-control (control=0)" out.txt &&
	grep -q "(enabled=1) and, with it, the control socket (control=1)" out.txt ||
	fail "ctl --help does not say what run enables: $(cat out.txt)"
mkdir -p -m 700 "$work/ctl"
SYNCPROF_CONTROL_DIR="$work/ctl" "$cli" run -o /dev/null -- sleep 20 > /dev/null 2>&1 &
rp=$! child=
for _ in $(seq 100); do
	child=$(cat /proc/$rp/task/*/children 2>/dev/null | tr -d ' ')
	[ -n "$child" ] && [ -S "$work/ctl/$child.sock" ] && break
	sleep 0.1
done
SYNCPROF_CONTROL_DIR="$work/ctl" "$cli" ctl "$child" status > out.txt 2>&1
grep -q "profiling: on" out.txt || fail "a program started by run does not answer ctl: $(cat out.txt)"
kill -TERM $rp
wait $rp 2>/dev/null
# The preload library: override, and a clear error when it is missing.
SYNCPROF_PRELOAD=/nonexistent.so expect 1 "cannot find libsyncprof-preload.so" -- \
	env SYNCPROF_PRELOAD=/nonexistent.so "$cli" run -- true
[ $fails -eq 0 ] && echo "run_cli: ok"
exit $((fails != 0))
