#!/bin/sh
# chains_contended.sh CLI BANK DIR - 'syncprof trace chains' on the default
# (contended-only) trace of an unmodified program that cannot deadlock
# (bank takes its two account locks in address order, the journal lock
# inside them): no wait chain may be a cycle.  In such a trace an
# acquisition whose release nobody waited for has no release in the file;
# treating it as held to the end of the trace (or from an older
# acquisition to a later written release) made cycles that never were.
# Also: the trace says it is contended only (trace stats), and what-if
# refuses it with one line and exit 1 that gives the command recording a
# trace it takes (run here, and what-if then explains its prediction).
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 bank=$2 dir=$3
rm -rf "$dir" && mkdir -p "$dir" && cd "$dir" || exit 1
"$cli" run --trace t.bin -o /dev/null -- "$bank" 4 100000 > /dev/null 2> run.err ||
	die "syncprof run: $(cat run.err)"
"$cli" trace stats t.bin > stats.txt || die "trace stats failed"
grep -q '^locks:    contended only' stats.txt || die "not a contended-only trace: $(cat stats.txt)"
"$cli" trace chains t.bin > chains.txt 2> chains.err || die "trace chains: $(cat chains.err)"
grep -q '^wait chains' chains.txt || die "no chains header: $(head -3 chains.txt)"
if grep -q 'DEADLOCK' chains.txt; then
	grep -B1 -A3 DEADLOCK chains.txt | head -20 >&2
	die "a cycle in a program that cannot deadlock"
fi
"$cli" trace chains --json t.bin > chains.json 2> /dev/null || die "trace chains --json"
"$cli" trace what-if t.bin --site journal_append --factor 2 > whatif.txt 2> whatif.err
rc=$?
[ $rc -eq 1 ] || die "what-if on a contended-only trace: exit $rc, expected 1"
[ "$(wc -l < whatif.err)" -eq 1 ] || die "what-if: not one line: $(cat whatif.err)"
grep -q 'trace_events=all' whatif.err || die "what-if does not say how to trace: $(cat whatif.err)"
# The line gives the command that records a suitable trace, with the
# program's path: run it (fewer transfers) and what-if takes that trace.
want="record it again with: syncprof run --trace t.bin --trace-events all --trace-buffer 268435456 -- $bank [ARGS]"
grep -qF "$want" whatif.err || die "what-if does not give the command line: $(cat whatif.err)"
again=$(sed -n 's/.*record it again with: syncprof \(run .*\) \[ARGS\] (compiled in.*/\1/p' whatif.err)
[ -n "$again" ] || die "no command in: $(cat whatif.err)"
# shellcheck disable=SC2086 # the command's words, as printed
"$cli" $again 4 2000 > /dev/null 2> again.err || die "the command failed: $again: $(cat again.err)"
"$cli" trace what-if t.bin --site journal_append --factor 2 > whatif2.txt 2> whatif2.err ||
	die "what-if on the trace its command recorded: $(cat whatif2.err)"
grep -q '^what bounds it' whatif2.txt || die "no explanation: $(head -20 whatif2.txt)"
echo "chains_contended: ok ($(grep -c 'times' chains.txt) chains, no cycle)"
