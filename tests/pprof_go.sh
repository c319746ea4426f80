#!/bin/sh
# pprof_go.sh SYNCPROF BANK TMPDIR - the pprof output read by the tool its
# users open it with, `go tool pprof` (Debian's golang-go); skipped (77)
# when go is absent.  Profiles the bank example (preloaded, hold tracking
# on) and checks what pprof shows:
#   -raw     the Mappings: the first is bank itself, with the build ID
#            that readelf reads from the file, and libc is one too;
#            the four sample types, delay the default; the lock type as a
#            label; a Location with more than one Line (an inlined frame:
#            bank's static journal_append and transfer are inlined);
#   -traces  the lock type "[mutex]" as the leaf frame of a mutex's trace;
#   -top     the holder side (-sample_index=holder_delay) names transfer,
#            the holder that made the others wait, and its total is the
#            sum of the blame in the JSON profile of the same run.
. "$(dirname "$0")/lib.sh"
set -eu
cli=$1
bank=$2
tmp=$3
if ! command -v go >/dev/null 2>&1; then
	echo "pprof_go: go (Debian golang-go) not installed: skipped"
	exit 77
fi
rm -rf "$tmp"
mkdir -p "$tmp/home"
export HOME="$tmp/home" GOCACHE="$tmp/home/cache" GOFLAGS=-mod=mod GOTOOLCHAIN=local
"$cli" run --hold -f json -o "$tmp/p.json" -- "$bank" 4 100000 >/dev/null ||
	die "syncprof run exited $?"
# Rendered from the saved profile: the same bytes as live (rerender.sh).
"$cli" report -f pprof -o "$tmp/p.pb.gz" "$tmp/p.json" || die "report -f pprof exited $?"

go tool pprof -raw "$tmp/p.pb.gz" >"$tmp/raw" 2>"$tmp/raw.err" || die "pprof -raw: $(cat "$tmp/raw.err")"
grep -q '^contentions/count delay/nanoseconds\[dflt\] holder_contentions/count holder_delay/nanoseconds$' \
	"$tmp/raw" || die "sample types: $(head -n 8 "$tmp/raw")"
grep -q 'lock type:\[mutex\]' "$tmp/raw" || die "no lock type label: $(cat "$tmp/raw")"
# Locations: "  N: 0xADDR M=.. function file:line" then one indented line
# per function it was inlined into.
bid=$(readelf -n "$bank" | sed -n 's/.*Build ID: \([0-9a-f]*\).*/\1/p')
test -n "$bid" || die "bank has no build ID (readelf -n)"
sed -n '/^Mappings/,$p' "$tmp/raw" >"$tmp/maps"
grep -q "^1: 0x[0-9a-f]*/0x[0-9a-f]*/0x[0-9a-f]* $(readlink -f "$bank") $bid" "$tmp/maps" ||
	die "mapping 1 is not bank with build ID $bid: $(cat "$tmp/maps")"
grep -q "/libc\.so\.6 [0-9a-f]\{40\}" "$tmp/maps" || die "no libc mapping with a build ID: $(cat "$tmp/maps")"
awk '/^Locations/ { on = 1; next } /^Mappings/ { on = 0 }
     on && /^ +[0-9]+: / { cur = $1; next }
     on && cur != "" && /^ +[^ 0-9]/ { inl++ }
     END { exit inl ? 0 : 1 }' "$tmp/raw" || die "no location with inlined lines: $(sed -n '/^Locations/,$p' "$tmp/raw")"

go tool pprof -traces "$tmp/p.pb.gz" >"$tmp/traces" 2>&1 || die "pprof -traces: $(cat "$tmp/traces")"
awk '/^-----/ { first = 1; next }
     first && NF >= 2 && $1 ~ /^[0-9.]+[mnu]?s$/ { if ($2 == "[mutex]") ok = 1; first = 0 }
     END { exit ok ? 0 : 1 }' "$tmp/traces" || die "no trace with the leaf [mutex]: $(cat "$tmp/traces")"

go tool pprof -top -sample_index=holder_delay -unit=ns "$tmp/p.pb.gz" >"$tmp/top" 2>&1 ||
	die "pprof -top holder_delay: $(cat "$tmp/top")"
grep -q "Build ID: $bid" "$tmp/top" || die "pprof -top does not name bank's build ID: $(head -n 4 "$tmp/top")"
grep -q 'Type: holder_delay' "$tmp/top" || die "holder_delay: $(cat "$tmp/top")"
grep -q ' transfer' "$tmp/top" || die "holder side lacks transfer: $(cat "$tmp/top")"
want=$(python3 -c 'import json,sys
p = json.load(open(sys.argv[1]))
print(sum(b["wait_ns"] for r in p["rows"] for b in r.get("blame") or []))' "$tmp/p.json")
test "$want" -gt 0 || die "the profile has no blame"
got=$(sed -n 's/.*Total samples = \([0-9]*\)ns.*/\1/p' "$tmp/top")
test "$got" = "$want" || die "holder_delay total $got ns, the JSON's blame $want ns: $(head -n 5 "$tmp/top")"
echo "pprof_go: ok (holder_delay $got ns)"
