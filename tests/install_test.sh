#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR - the user's path: install into a
# prefix, then build programs against it with pkg-config and
# -include syncprof/instrument.h (dynamic, static, and C++), run them with
# profiling on, and check the report names the exact call sites; then the
# other ways in:
#   CMake    a consumer project with find_package(syncprof CONFIG):
#            syncprof::instrument, syncprof::syncprof_static, and an
#            unmodified program run with SYNCPROF_PRELOAD_LIBRARY;
#   man      syncprof.1.gz and syncprof-CMD.1.gz for each command (gzip
#            -9n: no name or time in the header), each naming every option
#            its --help names, rendered by man(1) when present;
#   bash     the installed completion completes commands, options, values;
#   .deb     'cpack -G DEB' builds a package whose contents, extracted
#            (dpkg-deb -x), run: its syncprof profiles a program with its
#            own preload library.
. "$(dirname "$0")/lib.sh"
set -eu
build=$1
src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
pcdir=$(dirname "$(find "$tmp/prefix" -name syncprof.pc | head -n 1)")
export PKG_CONFIG_PATH="$pcdir"
test -f "$tmp/prefix/include/syncprof.h"
test -f "$tmp/prefix/include/syncprof/instrument.h"
cflags=$(pkg-config --cflags syncprof)
libs=$(pkg-config --libs syncprof)
libdir=$(pkg-config --variable=libdir syncprof)


# Dynamic.
cc -O2 -g -include syncprof/instrument.h $cflags "$src/examples/bank.c" $libs -pthread \
	-o "$tmp/bank"
LD_LIBRARY_PATH="$libdir" SYNCPROF_OPTIONS=enabled=1 "$tmp/bank" 2 20000 \
	>"$tmp/out" 2>"$tmp/err" || die "dynamic bank exited $?"
grep -q 'books balance' "$tmp/out" || die "dynamic bank output: $(cat "$tmp/out")"
grep -q 'bank.c:56' "$tmp/err" || die "dynamic report lacks bank.c:56: $(cat "$tmp/err")"
grep -q 'rwlock_write' "$tmp/err" || die "dynamic report lacks rwlock_write"

# Static: no shared library involved at all.
cc -O2 -g -static -include syncprof/instrument.h $cflags "$src/examples/bank.c" \
	"$libdir/libsyncprof.a" -pthread -o "$tmp/bank-static" 2>"$tmp/ld-warnings" ||
	die "static link: $(cat "$tmp/ld-warnings")"
file_out=$(LC_ALL=C readelf -d "$tmp/bank-static" 2>&1 || true)
echo "$file_out" | grep -q NEEDED && die "static binary has NEEDED entries"
SYNCPROF_OPTIONS=enabled=1,format=json,output="$tmp/static.json" "$tmp/bank-static" 2 20000 \
	>/dev/null || die "static bank exited $?"
python3 "$src/tests/check_profile_schema.py" "$tmp/static.json" --expect-site bank.c:56 >/dev/null ||
	die "static profile: $(python3 "$src/tests/check_profile_schema.py" "$tmp/static.json" --expect-site bank.c:56)"

# C++: the header must compile in C++ (std::mutex and raw pthread calls).
if command -v c++ >/dev/null 2>&1; then
	cat >"$tmp/cxx.cc" <<'CXX'
#include <mutex>
#include <thread>
#include <pthread.h>
static pthread_mutex_t raw = PTHREAD_MUTEX_INITIALIZER;
int main()
{
	std::mutex m;
	long n = 0;
	auto work = [&] {
		for (int i = 0; i < 10000; i++) {
			std::lock_guard<std::mutex> g(m);
			n++;
			pthread_mutex_lock(&raw);
			pthread_mutex_unlock(&raw);
		}
	};
	std::thread a(work), b(work);
	a.join();
	b.join();
	return n == 20000 ? 0 : 1;
}
CXX
	c++ -O2 -g -include syncprof/instrument.h $cflags "$tmp/cxx.cc" $libs -pthread \
		-o "$tmp/cxx" || die "C++ build"
	LD_LIBRARY_PATH="$libdir" SYNCPROF_OPTIONS=enabled=1 "$tmp/cxx" 2>"$tmp/err" ||
		die "C++ program exited $?"
	grep -q 'cxx.cc:13' "$tmp/err" || die "C++ report lacks cxx.cc:13: $(cat "$tmp/err")"
	# The std::mutex row names the lock_guard's line, not libstdc++'s header.
	grep -q 'cxx.cc:11' "$tmp/err" || die "C++ report lacks cxx.cc:11: $(cat "$tmp/err")"
	grep -q 'gthr' "$tmp/err" && die "C++ report names libstdc++'s header: $(cat "$tmp/err")"
	# Static, libc alone: libdw is referred to weakly, the site is an address.
	c++ -O2 -g -static -include syncprof/instrument.h $cflags "$tmp/cxx.cc" \
		"$libdir/libsyncprof.a" -pthread -o "$tmp/cxx-static" 2>"$tmp/ld-warnings" ||
		die "static C++ link: $(cat "$tmp/ld-warnings")"
	SYNCPROF_OPTIONS=enabled=1 "$tmp/cxx-static" 2>"$tmp/err" ||
		die "static C++ program exited $?"
	grep -q 'cxx.cc:13' "$tmp/err" || die "static C++ report lacks cxx.cc:13: $(cat "$tmp/err")"
	test "$(grep -c '^mutex ' "$tmp/err")" = 2 || die "static C++ report: $(cat "$tmp/err")"
fi

# ---- CMake package config -------------------------------------------------
prefix="$tmp/prefix"
test -f "$prefix/lib/cmake/syncprof/syncprofConfig.cmake" || die "no syncprofConfig.cmake"
mkdir -p "$tmp/consumer"
cp "$src/examples/bank.c" "$tmp/consumer/"
cat >"$tmp/consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer C)
find_package(syncprof 0.1 CONFIG REQUIRED)
add_executable(bank_instr bank.c)
target_link_libraries(bank_instr PRIVATE syncprof::instrument)
add_executable(bank_static bank.c)
target_compile_options(bank_static PRIVATE -include syncprof/instrument.h)
target_link_libraries(bank_static PRIVATE syncprof::syncprof_static)
add_executable(bank_plain bank.c)
target_link_libraries(bank_plain PRIVATE Threads::Threads)
get_target_property(preload_loc syncprof::preload IMPORTED_LOCATION)
if(NOT preload_loc STREQUAL SYNCPROF_PRELOAD_LIBRARY OR NOT EXISTS "${SYNCPROF_PRELOAD_LIBRARY}")
  message(FATAL_ERROR "preload: '${preload_loc}' vs '${SYNCPROF_PRELOAD_LIBRARY}'")
endif()
file(WRITE ${CMAKE_BINARY_DIR}/found.txt
  "${SYNCPROF_PRELOAD_LIBRARY}\n${SYNCPROF_EXECUTABLE}\n${syncprof_VERSION}\n")
CMAKE
cmake -S "$tmp/consumer" -B "$tmp/consumer/build" -DCMAKE_PREFIX_PATH="$prefix" \
	>"$tmp/cmake.log" 2>&1 || die "find_package(syncprof CONFIG): $(cat "$tmp/cmake.log")"
cmake --build "$tmp/consumer/build" >"$tmp/cmake.log" 2>&1 || die "consumer build: $(cat "$tmp/cmake.log")"
cb="$tmp/consumer/build"
test "$(sed -n 1p "$cb/found.txt")" = "$prefix/lib/libsyncprof-preload.so" ||
	die "SYNCPROF_PRELOAD_LIBRARY: $(cat "$cb/found.txt")"
test "$(sed -n 2p "$cb/found.txt")" = "$prefix/bin/syncprof" || die "SYNCPROF_EXECUTABLE: $(cat "$cb/found.txt")"
SYNCPROF_OPTIONS=enabled=1 "$cb/bank_instr" 2 20000 >/dev/null 2>"$tmp/err" || die "cmake bank_instr exited $?"
grep -q 'bank.c:56' "$tmp/err" || die "cmake bank_instr report lacks bank.c:56: $(cat "$tmp/err")"
readelf -d "$cb/bank_static" | grep -q 'NEEDED.*libsyncprof' && die "bank_static needs libsyncprof.so"
SYNCPROF_OPTIONS=enabled=1 "$cb/bank_static" 2 20000 >/dev/null 2>"$tmp/err" || die "cmake bank_static exited $?"
grep -q 'bank.c:56' "$tmp/err" || die "cmake bank_static report lacks bank.c:56: $(cat "$tmp/err")"
LD_PRELOAD="$(sed -n 1p "$cb/found.txt")" "$cb/bank_plain" 2 20000 >/dev/null 2>"$tmp/err" ||
	die "bank_plain under SYNCPROF_PRELOAD_LIBRARY exited $?"
grep -q 'transfer' "$tmp/err" || die "preloaded report lacks transfer: $(cat "$tmp/err")"

# ---- man pages, from --help ----------------------------------------------
mandir="$prefix/share/man/man1"
cmds=$("$prefix/bin/syncprof" --help | sed -n '/^Commands:/,/^[^ ]/s/^  \([a-z][a-z-]*\) .*/\1/p')
test -n "$cmds" || die "no commands in syncprof --help"
for page in syncprof $(for c in $cmds; do echo "syncprof-$c"; done); do
	f="$mandir/$page.1.gz"
	test -f "$f" || die "no man page $page.1.gz: $(ls "$mandir")"
	# Reproducible: no file name (flag FNAME, byte 3) nor time (4-7) in the header.
	test "$(od -An -tx1 -j3 -N5 "$f" | tr -d ' ')" = 0000000000 ||
		die "$page.1.gz has a name or time in its gzip header: $(od -An -tx1 -N10 "$f")"
	gzip -dc "$f" >"$tmp/page.1" || die "$page.1.gz does not decompress"
	up=$(echo "$page" | tr a-z A-Z)
	grep -q "^\.TH \"$up\" \"1\"" "$tmp/page.1" || die "$page.1 has no .TH $up"
	grep -q '^\.SH SYNOPSIS' "$tmp/page.1" && grep -q '^\.SH DESCRIPTION' "$tmp/page.1" ||
		die "$page.1 sections"
	cmd=${page#syncprof}; cmd=${cmd#-}
	# Every option the --help names is in the page (roff writes - as \-).
	for o in $("$prefix/bin/syncprof" $cmd --help | grep -oE -- '--[a-z][a-z-]+' | sort -u); do
		grep -qF -- "$(echo "$o" | sed 's/-/\\-/g')" "$tmp/page.1" || die "$page.1 lacks $o"
	done
	if command -v man >/dev/null 2>&1; then
		MANWIDTH=80 man -l "$f" >"$tmp/man.txt" 2>/dev/null || die "man -l $page.1"
		grep -q "NAME" "$tmp/man.txt" || die "man -l $page.1: $(head "$tmp/man.txt")"
		# troff has nothing to warn about (a word too long to fit a line)
		man --warnings -E UTF-8 -l -Tutf8 -Z "$f" 2>"$tmp/man.warn" >/dev/null
		[ -s "$tmp/man.warn" ] && die "troff warns on $page.1: $(head -3 "$tmp/man.warn")"
	fi
done
gzip -dc "$mandir/syncprof-run.1.gz" | grep -qF -- '\fB\-\-hold\fR' || die "syncprof-run.1 lacks --hold"
gzip -dc "$prefix/share/doc/syncprof/changelog.gz" | head -n 1 |
	grep -q "^syncprof ($("$prefix/bin/syncprof" --version | awk '{print $NF}')) " ||
	die "changelog.gz does not open with syncprof's version"

# ---- bash completion ------------------------------------------------------
comp="$prefix/share/bash-completion/completions/syncprof"
test -f "$comp" || die "no bash completion"
if command -v bash >/dev/null 2>&1; then
	# shellcheck disable=SC2016
	got=$(PATH="$prefix/bin:$PATH" bash -c '
		. "$1"
		c() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _syncprof; echo "${COMPREPLY[*]}"; }
		c syncprof r; c syncprof run --ho; c syncprof report -f ""; c syncprof run -s co
		c syncprof trace ""; c syncprof t; c syncprof top 1 -s r; c syncprof top 1 --b
		c syncprof trace export --format ""; c syncprof run --symbolize ""
		c syncprof run --trace-events a; c syncprof run -- true
		c syncprof run --report-signal ""' _ "$comp")
	echo "$got" | sed -n 1p | grep -qx 'run report' || die "completion of 'syncprof r': $got"
	echo "$got" | sed -n 2p | grep -qx -- '--hold --hold-clock --hold-states --hold-where' || die "completion of 'run --ho': $got"
	echo "$got" | sed -n 3p | grep -q 'json.*pprof' || die "completion of '-f': $got"
	echo "$got" | sed -n 4p | grep -qx 'count contended' || die "completion of '-s co': $got"
	echo "$got" | sed -n 5p | grep -q 'dump' || die "completion of 'trace': $got"
	echo "$got" | sed -n 6p | grep -qx 'top trace' || die "completion of 'syncprof t': $got"
	echo "$got" | sed -n 7p | grep -qx 'rate' || die "completion of 'top -s r': $got"
	echo "$got" | sed -n 8p | grep -qx -- '--batch' || die "completion of 'top --b': $got"
	echo "$got" | sed -n 9p | grep -qx 'chrome perfetto' || die "completion of 'trace export --format': $got"
	echo "$got" | sed -n 10p | grep -qx 'offline inprocess' || die "completion of '--symbolize': $got"
	echo "$got" | sed -n 11p | grep -qx 'all' || die "completion of '--trace-events a': $got"
	echo "$got" | sed -n 12p | grep -qx 'true' || die "completion of 'run -- true' (once): $got"
	echo "$got" | sed -n 13p | grep -qx 'USR1 USR2 none' || die "completion of '--report-signal': $got"
fi

# ---- cpack -G DEB -----------------------------------------------------------
if command -v dpkg-deb >/dev/null 2>&1; then
	(cd "$build" && cpack -G DEB -B "$tmp/deb" >"$tmp/cpack.log" 2>&1) ||
		die "cpack -G DEB: $(tail -n 20 "$tmp/cpack.log")"
	deb=$(ls "$tmp/deb"/*.deb)
	test -f "$deb" || die "no .deb: $(ls "$tmp/deb")"
	dpkg-deb -I "$deb" >"$tmp/deb.info"
	grep -q '^ Package: syncprof$' "$tmp/deb.info" || die "deb info: $(cat "$tmp/deb.info")"
	grep -q '^ Depends:.*libc6' "$tmp/deb.info" || die "deb has no Depends: $(cat "$tmp/deb.info")"
	dpkg-deb -c "$deb" >"$tmp/deb.list"
	for f in ./usr/bin/syncprof ./usr/lib/libsyncprof-preload.so ./usr/include/syncprof.h \
		./usr/lib/cmake/syncprof/syncprofConfig.cmake ./usr/share/man/man1/syncprof-run.1.gz \
		./usr/share/bash-completion/completions/syncprof ./usr/lib/pkgconfig/syncprof.pc \
		./usr/share/doc/syncprof/copyright ./usr/share/doc/syncprof/changelog.gz; do
		grep -q " $f\$" "$tmp/deb.list" || grep -q " $f -> " "$tmp/deb.list" ||
			die "the .deb lacks $f: $(cat "$tmp/deb.list")"
	done
	dpkg-deb -x "$deb" "$tmp/root"
	# Its syncprof runs a program with its own preload library.
	env -u SYNCPROF_PRELOAD "$tmp/root/usr/bin/syncprof" run -f json -o "$tmp/deb.json" -- \
		sh -c 'grep -o "/[^ ]*libsyncprof-preload.so" /proc/$$/maps | sort -u' \
		>"$tmp/deb.out" 2>"$tmp/err" || die "the .deb's syncprof run exited $?: $(cat "$tmp/err")"
	test "$(cat "$tmp/deb.out")" = "$tmp/root/usr/lib/libsyncprof-preload.so" ||
		die "the .deb's syncprof loaded '$(cat "$tmp/deb.out")'"
	python3 "$src/tests/check_profile_schema.py" "$tmp/deb.json" >/dev/null ||
		die "the .deb's profile: $(python3 "$src/tests/check_profile_schema.py" "$tmp/deb.json")"
fi
echo "install_test: ok"
