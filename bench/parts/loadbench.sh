#!/bin/bash
# loadbench.sh - how long 'syncprof report' takes, and how much memory, to
# re-render a large saved profile: N rows (default 1,000,000), one per lock
# object, written by bench/membench under the compiled-in library.
# Usage: bench/parts/loadbench.sh [BUILD_DIR] [N]
set -eu
build=${1:-build} n=${2:-1000000}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
SYNCPROF_OPTIONS=enabled=1,format=json,coalesce=0,output=$tmp/p.json \
	"$build/bench/membench" "$n" > /dev/null
echo "loadbench: $(stat -c %s "$tmp/p.json") bytes of profile JSON, $n rows"
for args in "-n 10" "--no-coalesce -n 10 -s count"; do
	# shellcheck disable=SC2086
	/usr/bin/time -f "%e s wall, %U s user, %S s sys, %M KiB peak" "$build/syncprof" report $args "$tmp/p.json" \
		> /dev/null 2> "$tmp/time"
	echo "loadbench: syncprof report $args: $(tail -n 1 "$tmp/time")"
done
