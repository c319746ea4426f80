#!/bin/bash
# debug_files.sh SYNCPROF BANK DIR - a program whose debug info is in a
# separate file (objcopy --only-keep-debug, .gnu_debuglink) is named with
# file:line when that file is where libdw looks: next to the program, in
# its .debug directory, or next to the file a symlink to the program
# points at; without one it is named by its symbols.  And naming does
# not load libdebuginfod when DEBUGINFOD_URLS is unset (libdw 0.188
# dlopen()s it, with libcurl and GnuTLS, after every search that found
# nothing: 12 ms per report, issue 25).
set -eu
sp=$1 bank=$2 dir=$3
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/elsewhere"
cp "$bank" "$dir/bin/bank"
objcopy --only-keep-debug "$dir/bin/bank" "$dir/bank.debug"
objcopy --strip-debug --add-gnu-debuglink="$dir/bank.debug" "$dir/bin/bank"
ln -s "$dir/bin/bank" "$dir/elsewhere/bank"
unset DEBUGINFOD_URLS
fail() { echo "FAIL: $*" >&2; exit 1; }

# report PROGRAM: the rows of a short run (the join row is always there:
# main() joins its tellers at one line of bank.c)
report() {
	LD_DEBUG=files "$sp" run -n 5 -o "$dir/report" -- "$1" 4 2000 > /dev/null 2> "$dir/ld"
	if grep -q "libdebuginfod" "$dir/ld"; then
		grep "libdebuginfod" "$dir/ld" | head -3 >&2
		fail "libdebuginfod was loaded with DEBUGINFOD_URLS unset"
	fi
	cat "$dir/report"
}

want_line() { # CASE REPORT
	grep -Eq '^join .* main bank\.c:[0-9]+' <<< "$2" || {
		echo "$2" >&2
		fail "$1: the join site is not named main bank.c:LINE"
	}
	echo "ok: $1"
}

mv "$dir/bank.debug" "$dir/bin/bank.debug"
want_line "debug file next to the program" "$(report "$dir/bin/bank")"
want_line "through a symlink" "$(report "$dir/elsewhere/bank")"

mkdir "$dir/bin/.debug"
mv "$dir/bin/bank.debug" "$dir/bin/.debug/bank.debug"
want_line "debug file in .debug/" "$(report "$dir/bin/bank")"

rm -r "$dir/bin/.debug"
out=$(report "$dir/bin/bank")
grep -Eq '^join .* main\+0x[0-9a-f]+' <<< "$out" || {
	echo "$out" >&2
	fail "no debug file: the join site is not named main+0xOFFSET"
}
echo "ok: no debug file, named by symbol"
