#!/bin/bash
# run_kids.sh - under 'syncprof run', every process hands its profile to
# run, which names and renders them all at the end with the same libdw
# sessions (issue 25, part 1: a report at exit costs each process little):
#   - two processes started by the program: their reports, named, before
#     the program's own; none of them named an address itself (with
#     SYNCPROF_TEST_NO_SYMBOLIZE=1 naming one in the process aborts it);
#   - a process whose stderr is not run's (a script's 2>FILE) writes its
#     report there itself, as before;
#   - a process with SYNCPROF_OPTIONS of its own (format=json, output=FILE)
#     gets its report rendered with them;
#   - a binary rebuilt at the same path between two runs: the first run's
#     addresses are not named from the new build (another build ID): they
#     keep the DSO and offset; the second run's are named;
#   - the preload does not load libdw at start-up (base/libdw.h);
#   - nothing is left in TMPDIR.
# Usage: run_kids.sh SYNCPROF_CLI PRELOAD_LIB RUN_KIDS_A RUN_KIDS_B WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 pre=$2 a=$3 b=$4 work=$5
rm -rf "$work" && mkdir -p "$work/tmp" && cd "$work" || exit 1
export TMPDIR=$work/tmp SYNCPROF_CONTROL_DIR=$work/ctl
unset SYNCPROF_OPTIONS
tmp_empty() { [ -z "$(ls -A "$TMPDIR")" ] || fail "$1: left in TMPDIR: $(ls -A "$TMPDIR")"; }
# the program lines of the reports in FILE, in order: "kid" or "root"
order() { sed -n 's/^syncprof: pid [0-9]*: //p' "$1" | sed -E 's/^bash .*/root/; s/^.*run_kids.*/kid/' | tr '\n' ' '; }

# Two processes, named by run, then the program (bash).
SYNCPROF_TEST_NO_SYMBOLIZE=1 "$cli" run -- bash -c "$a; $a; :" > two.out 2> two.err ||
	fail "two: exit $?: $(head -c 400 two.err)"
[ "$(order two.err)" = "kid kid root " ] || fail "two: reports $(order two.err): $(cat two.err)"
[ "$(grep -c 'site_alpha run_kids.c:[0-9]' two.err)" -ge 2 ] ||
	fail "two: sites not named: $(cat two.err)"
tmp_empty two

# A process whose stderr is a file of its own reports there, itself.
"$cli" run -- bash -c "$a 2> own.err; $a; :" > own.out 2> own.err2 ||
	fail "own stderr: exit $?: $(head -c 400 own.err2)"
[ "$(order own.err2)" = "kid root " ] || fail "own stderr: run's reports $(order own.err2)"
[ "$(order own.err)" = "kid " ] || fail "own stderr: its file has $(order own.err): $(cat own.err)"
grep -q 'site_alpha run_kids.c:[0-9]' own.err || fail "own stderr: not named: $(cat own.err)"
tmp_empty "own stderr"

# A process with options of its own.
"$cli" run -- bash -c "SYNCPROF_OPTIONS=\"\$SYNCPROF_OPTIONS,format=json,output=$work/k.%p.json\" $a; :" \
	> opts.out 2> opts.err || fail "options: exit $?: $(head -c 400 opts.err)"
[ "$(order opts.err)" = "root " ] || fail "options: run's reports $(order opts.err)"
set -- k.*.json
[ -f "$1" ] && python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$1" ||
	fail "options: no JSON report in $work: $(ls) $(cat opts.err)"
[ -f "$1" ] && grep -q '"function":"site_alpha"' "$1" || fail "options: site not named in $1"
tmp_empty options

# The binary rebuilt between two runs of it.  (Each command line ends in
# ':' so that bash does not exec its last command: the program stays bash.)
cp "$a" prog && chmod +x prog
"$cli" run -- bash -c "./prog; cat '$b' > prog; ./prog; :" > rebuilt.out 2> rebuilt.err ||
	fail "rebuilt: exit $?: $(head -c 400 rebuilt.err)"
[ "$(sed -n 's/^syncprof: pid [0-9]*: //p' rebuilt.err | tr '\n' ' ')" = "./prog ./prog bash -c ./prog; cat '$b' > prog; ./prog; : " ] ||
	fail "rebuilt: reports: $(grep '^syncprof: pid' rebuilt.err)"
first=$(awk '/^syncprof: pid/ {n++} n == 1' rebuilt.err)
second=$(awk '/^syncprof: pid/ {n++} n == 2' rebuilt.err)
echo "$first" | grep -q 'site_' && fail "rebuilt: the first run named from the new build: $first"
echo "$first" | grep -Eq '^mutex +0x[0-9a-f]+ +prog\+0x[0-9a-f]+ ' ||
	fail "rebuilt: the first run's site is not prog+0x...: $first"
echo "$second" | grep -q 'site_beta run_kids.c:[0-9]' || fail "rebuilt: second run not named: $second"
tmp_empty rebuilt

# libdw is not loaded at start-up.
LD_PRELOAD=$pre SYNCPROF_OPTIONS=report_at_exit=0 cat /proc/self/maps > maps.txt ||
	fail "maps: exit $?"
grep -q syncprof-preload maps.txt || fail "maps: the preload is not loaded"
grep -q 'libdw' maps.txt && fail "maps: libdw loaded at start-up: $(grep libdw maps.txt)"

[ "$fails" = 0 ] && echo "run_kids: ok"
exit $((fails > 0))
