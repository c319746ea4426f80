#!/bin/sh
# install_test.sh BUILD_DIR SOURCE_DIR - the user's path: install into a
# prefix, then build programs against it with pkg-config and
# -include syncprof/instrument.h (dynamic, static, and C++), run them with
# profiling on, and check the report names the exact call sites.
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

fail() { echo "install_test: FAIL: $*" >&2; exit 1; }

# Dynamic.
cc -O2 -g -include syncprof/instrument.h $cflags "$src/examples/bank.c" $libs -pthread \
	-o "$tmp/bank"
LD_LIBRARY_PATH="$libdir" SYNCPROF_OPTIONS=enabled=1 "$tmp/bank" 2 20000 \
	>"$tmp/out" 2>"$tmp/err" || fail "dynamic bank exited $?"
grep -q 'books balance' "$tmp/out" || fail "dynamic bank output: $(cat "$tmp/out")"
grep -q 'bank.c:56' "$tmp/err" || fail "dynamic report lacks bank.c:56: $(cat "$tmp/err")"
grep -q 'rwlock_write' "$tmp/err" || fail "dynamic report lacks rwlock_write"

# Static: no shared library involved at all.
cc -O2 -g -static -include syncprof/instrument.h $cflags "$src/examples/bank.c" \
	"$libdir/libsyncprof.a" -pthread -o "$tmp/bank-static" 2>"$tmp/ld-warnings" ||
	fail "static link: $(cat "$tmp/ld-warnings")"
file_out=$(LC_ALL=C readelf -d "$tmp/bank-static" 2>&1 || true)
echo "$file_out" | grep -q NEEDED && fail "static binary has NEEDED entries"
SYNCPROF_OPTIONS=enabled=1,format=json,output="$tmp/static.json" "$tmp/bank-static" 2 20000 \
	>/dev/null || fail "static bank exited $?"
python3 "$src/tests/check_profile_json.py" "$tmp/static.json" --expect-site bank.c:56 >/dev/null ||
	fail "static profile: $(python3 "$src/tests/check_profile_json.py" "$tmp/static.json" --expect-site bank.c:56)"

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
		-o "$tmp/cxx" || fail "C++ build"
	LD_LIBRARY_PATH="$libdir" SYNCPROF_OPTIONS=enabled=1 "$tmp/cxx" 2>"$tmp/err" ||
		fail "C++ program exited $?"
	grep -q 'cxx.cc:13' "$tmp/err" || fail "C++ report lacks cxx.cc:13: $(cat "$tmp/err")"
	# The std::mutex row names the lock_guard's line, not libstdc++'s header.
	grep -q 'cxx.cc:11' "$tmp/err" || fail "C++ report lacks cxx.cc:11: $(cat "$tmp/err")"
	grep -q 'gthr' "$tmp/err" && fail "C++ report names libstdc++'s header: $(cat "$tmp/err")"
	# Static, libc alone: libdw is referred to weakly, the site is an address.
	c++ -O2 -g -static -include syncprof/instrument.h $cflags "$tmp/cxx.cc" \
		"$libdir/libsyncprof.a" -pthread -o "$tmp/cxx-static" 2>"$tmp/ld-warnings" ||
		fail "static C++ link: $(cat "$tmp/ld-warnings")"
	SYNCPROF_OPTIONS=enabled=1 "$tmp/cxx-static" 2>"$tmp/err" ||
		fail "static C++ program exited $?"
	grep -q 'cxx.cc:13' "$tmp/err" || fail "static C++ report lacks cxx.cc:13: $(cat "$tmp/err")"
	test "$(grep -c '^mutex ' "$tmp/err")" = 2 || fail "static C++ report: $(cat "$tmp/err")"
fi
echo "install_test: ok"
