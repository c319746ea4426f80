#!/bin/bash
# skip_stripped.sh PRELOAD UNSTRIPPED STRIPPED MODE - run the stripped
# preload_skip_stripped under the preload, its wrapper skipped by MODE:
# regex (a .dynsym name), range (DSO+0xSTART-0xEND from nm of the
# unstripped copy) or frames (skip_frames=1).
set -eu
preload=$1 unstripped=$2 stripped=$3 mode=$4
case $mode in
regex) skip='skip=^skip_lock$' ;;
range)
	# nm -S: address and size of skip_lock; the program is PIE or not,
	# offsets count from its first mapped byte as reports print them.
	read -r addr size _ < <(nm -S "$unstripped" | awk '$4 == "skip_lock"')
	first=$(readelf -lW "$unstripped" | awk '$1 == "LOAD" { print $3; exit }')
	lo=$(( 0x$addr - (first & ~0xfff) ))
	skip=$(printf 'skip=%s+0x%x-0x%x' "$(basename "$stripped")" "$lo" $(( lo + 0x$size )))
	;;
frames) skip='skip_frames=1' ;;
*) echo "unknown mode $mode" >&2; exit 2 ;;
esac
echo "SYNCPROF_OPTIONS=report_at_exit=0,control=0,$skip"
LD_PRELOAD=$preload SYNCPROF_OPTIONS="report_at_exit=0,control=0,$skip" "$stripped"
