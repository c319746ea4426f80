#!/bin/sh
# folded_sites.sh SYNCPROF BANK TMPDIR - folded stacks of an unmodified
# program (preloaded): two interposed call sites in one function are two
# frames, "transfer (bank.c:78)" and "transfer (bank.c:79)", each under its
# own lock type leaf "[mutex]", and the weights sum to the JSON profile's
# total wait (the same run re-rendered).  bank's transfer() takes two
# account mutexes at lines 78 and 79; 4 tellers contend on both.  Waits
# are not certain in one short run, so up to 3 runs are tried.  At -O2
# (the default build) transfer() is inlined into teller(): the teller
# frame comes from the site's inline records, and must be there.
. "$(dirname "$0")/lib.sh"
set -eu
cli=$1
bank=$2
tmp=$3
rm -rf "$tmp"
mkdir -p "$tmp"
for try in 1 2 3; do
	"$cli" run --frames 3 -f json -o "$tmp/p.json" -- "$bank" 4 100000 >/dev/null ||
		die "syncprof run exited $?"
	"$cli" report -f folded "$tmp/p.json" >"$tmp/folded" || die "report -f folded exited $?"
	if grep -q ';teller;transfer (bank\.c:78);\[mutex\] [0-9]*$' "$tmp/folded" &&
		grep -q ';teller;transfer (bank\.c:79);\[mutex\] [0-9]*$' "$tmp/folded"; then
		break
	fi
	test "$try" -lt 3 || die "no two transfer sites (teller;transfer bank.c:78, :79) in: $(cat "$tmp/folded")"
done
# Every leaf is a [lock type], and the site under it is no bare function.
awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); if (f[n] !~ /^\[[a-z_]+\]$/) { print "leaf: " $0; bad = 1 } }
     END { exit bad }' "$tmp/folded" || die "a leaf is not a lock type"
sum=$(awk '{ s += $NF } END { printf "%d", s }' "$tmp/folded")
want=$(python3 -c 'import json,sys
print(sum(r["wait_ns"] for r in json.load(open(sys.argv[1]))["rows"]))' "$tmp/p.json")
test "$sum" = "$want" || die "weights sum to $sum, the profile's wait is $want"
echo "folded_sites: ok"
