#!/bin/bash
# account_churn.sh - the time account's ration of exit reads (issue 25
# part 2; registry.c, docs/accounting.md): bench/thread_churn -y starts and
# ends 3,000 short threads, each sleeping once (a context switch: its
# exit reads its /proc file) and taking two locks; preloaded, every one
# of them registers, so each exit is either read (counted in "exited",
# at most 1,000 files a second after a burst of 1,000: one file an exit,
# the preload having started each thread) or skipped (counted in
# "exited_skipped"): together exactly 3,000.  When the threads came
# faster than the ration (the program's own elapsed time says so), some
# were skipped and the table says how many; a re-render keeps the count;
# the profile is valid against the schema.  Then the same without -y:
# threads that never left their CPU are accounted without a file
# (account.c, sp_sched_self_unswitched()), outside the ration; read and
# skipped still add up to 3,000.
# Usage: account_churn.sh SYNCPROF_CLI THREAD_CHURN PRELOAD_LIB WORKDIR
. "$(dirname "$0")/lib.sh"
set -u
cli=$1 churn=$2 preload=$3 work=$4
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work" && cd "$work" && rm -f ./*.json ./*.txt || exit 1
n=3000
LD_PRELOAD=$preload SYNCPROF_OPTIONS=enabled=1,format=json,output=churn.json,control=0 \
	"$churn" -y $n 4 > churn.txt 2> churn.err || die "thread_churn exited $?: $(head -c 300 churn.err)"
elapsed_us=$(sed -n 's/.* elapsed_us \([0-9]*\) .*/\1/p' churn.txt)
[ -n "$elapsed_us" ] || die "thread_churn printed no elapsed_us: $(cat churn.txt)"
read -r exited skipped <<< "$(python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["accounting"]
print(a["exited"], a.get("exited_skipped", 0))' churn.json)"
[ $((exited + skipped)) -eq $n ] ||
	fail "exited $exited + skipped $skipped is not the $n threads that exited"
# the ration: a burst of 1,000, then 1,000 a second (while the loop ran,
# and the start-up before it: one second of slack)
max=$((1000 + 1000 * (elapsed_us / 1000000 + 2)))
[ "$exited" -le "$max" ] || fail "$exited exits read in $elapsed_us us: more than the ration ($max)"
# past the ration for sure when even a burst and a rate over the whole loop
# fall short of n: 1000 + 1000 x 1.5 s < 3000
if [ "$elapsed_us" -lt 1500000 ]; then
	[ "$skipped" -gt 0 ] || fail "$n threads in $elapsed_us us, none skipped"
	"$cli" report churn.json > churn.table 2>&1 || fail "report of churn.json exited $?"
	grep -q "^syncprof: $skipped more exited threads not accounted: threads exited faster than" \
		churn.table || fail "the table does not say $skipped exits were skipped: $(grep '^syncprof:' churn.table)"
	"$cli" report -f json churn.json > again.json && cmp -s churn.json again.json ||
		fail "the re-rendered JSON differs"
else
	echo "account_churn: the loop took $elapsed_us us: slower than the ration, nothing to skip"
fi
python3 "$here/check_profile_schema.py" churn.json > /dev/null || fail "churn.json: not valid against the schema"
# without a switch: no file, no ration (how many had none is the scheduler's)
LD_PRELOAD=$preload SYNCPROF_OPTIONS=enabled=1,format=json,output=plain.json,control=0 \
	"$churn" $n 4 > plain.txt 2> plain.err || die "thread_churn exited $?: $(head -c 300 plain.err)"
read -r exited2 skipped2 <<< "$(python3 -c 'import json, sys
a = json.load(open(sys.argv[1]))["accounting"]
print(a["exited"], a.get("exited_skipped", 0))' plain.json)"
[ $((exited2 + skipped2)) -eq $n ] ||
	fail "without -y: exited $exited2 + skipped $skipped2 is not the $n threads that exited"
[ "$fails" -eq 0 ] || exit 1
echo "account_churn: ok ($exited read, $skipped skipped in $elapsed_us us; without a sleep $exited2 accounted, $skipped2 skipped)"
