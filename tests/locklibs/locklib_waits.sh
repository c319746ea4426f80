#!/bin/bash
# locklib_waits.sh - waits of lock libraries that never call pthread, seen
# through syscall(SYS_futex) under 'syncprof run' (record/probe_futex.c,
# record/locklib.c): Rust std's Mutex (Debian's rustc), parking_lot
# (Debian's librust-parking-lot-dev, cargo --offline) and Abseil's
# absl::Mutex (libabsl-dev).  The program (std_mutex.rs, pl_mutex/,
# absl_mutex.cc) is built here, into WORKDIR.  Checked:
#   - its waits are rows of type futex at the program's own lock line
#     (LINE_WAIT), one row for the lock (parking_lot and Abseil wait on a
#     word per thread: coalesced per call site), none inside the library
#     (the holder's own lock line, LINE_HOLD, may wait too);
#   - their total is what the program measured around its lock calls:
#     never more (+10% for the clock's and the probe's own time) and, for
#     std (whose spinning is short), not 10% less.  parking_lot and Abseil
#     spin with sched_yield() before they sleep, a wait no futex sees and
#     that a loaded machine makes milliseconds long: for them the floor is
#     a quarter (bench/parts/locklib_bench.sh measures the share on a quiet one);
#   - the joins are at the program's line (LINE_JOIN), not inside std's
#     or libstdc++'s join;
#   - the table prints the program's file:line; the exit status is the
#     bare run's.
# Without the compiler or the library: skipped (77), or failed under CI=true.
# Usage: locklib_waits.sh SYNCPROF_CLI std|parking_lot|absl SOURCE_DIR WORKDIR
. "$(dirname "$0")/../lib.sh"
set -u
cli=$1 kind=$2 src=$3 work=$4
mkdir -p "$work" && cd "$work" && rm -f ./*.json ./*.txt
TEST_NAME="locklib_waits($kind)"
missing() {
	if [ -n "${CI:-}" ]; then
		echo "locklib_waits($kind): FAIL: $1 is missing (.ci/packages installs it)"
		exit 1
	fi
	echo "SKIP: $1 is missing (Debian: $2)"
	exit 77
}
# Debian's rustc (rustup's, first on a developer's PATH, has another std).
rustc=/usr/bin/rustc cargo=/usr/bin/cargo
case $kind in
std)
	[ -x "$rustc" ] || missing rustc rustc
	source=$src/std_mutex.rs
	"$rustc" -g -O "$source" -o prog 2> build.txt || { cat build.txt; exit 1; }
	;;
parking_lot)
	[ -x "$cargo" ] || missing cargo cargo
	[ -d /usr/share/cargo/registry ] && ls -d /usr/share/cargo/registry/parking_lot-0.12* > /dev/null 2>&1 ||
		missing "parking_lot 0.12's sources" librust-parking-lot-dev
	source=$src/pl_mutex/src/main.rs
	# A copy: cargo writes Cargo.lock next to Cargo.toml.  Debian's crates
	# are a directory source; nothing is fetched.
	rm -rf pl && mkdir -p pl cargo-home && cp -r "$src/pl_mutex/Cargo.toml" "$src/pl_mutex/src" pl/
	printf '[source.crates-io]\nreplace-with = "debian"\n[source.debian]\ndirectory = "/usr/share/cargo/registry"\n' \
		> cargo-home/config.toml
	(cd pl && CARGO_HOME=$work/cargo-home RUSTC=$rustc "$cargo" build --offline --release \
		--target-dir "$work/target") > build.txt 2>&1 || { cat build.txt; exit 1; }
	cp target/release/pl_mutex prog
	;;
absl)
	pkg-config --exists absl_synchronization 2> /dev/null || missing "Abseil" libabsl-dev
	source=$src/absl_mutex.cc
	# shellcheck disable=SC2046
	c++ -std=c++17 -g -O2 "$source" -o prog $(pkg-config --cflags --libs absl_synchronization) \
		-pthread 2> build.txt || { cat build.txt; exit 1; }
	;;
*)
	echo "usage: locklib_waits.sh SYNCPROF_CLI std|parking_lot|absl SOURCE_DIR WORKDIR" >&2
	exit 2
	;;
esac
line_of() { grep -n "$1" "$source" | head -1 | cut -d: -f1; }
wait_line=$(line_of LINE_WAIT) join_line=$(line_of LINE_JOIN) hold_line=$(line_of LINE_HOLD)

./prog > bare.txt
bare_rc=$?
"$cli" run -f json -o prof.json -- ./prog > run.txt 2> err.txt
rc=$?
[ "$rc" -eq "$bare_rc" ] || fail "exit status $rc under syncprof, $bare_rc bare: $(head -c 300 err.txt)"
"$cli" report -n 5 prof.json > table.txt 2>&1 || fail "report of the profile failed: $(head -c 300 table.txt)"
grep -q "$(basename "$source"):$wait_line " table.txt ||
	fail "the table does not print $(basename "$source"):$wait_line: $(cat table.txt)"
floor=0.9
[ "$kind" = std ] || floor=0.25
python3 - "$(basename "$source")" "$wait_line" "$join_line" "$floor" "$kind" "$hold_line" <<'PY' || fails=$((fails + 1))
import json, re, sys
name, wait_line, join_line, floor, kind = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
hold_line = int(sys.argv[6])
p = json.load(open("prof.json"))
measured = int(re.search(r"measured_wait_ns (\d+)", open("run.txt").read()).group(1))
def at(r, line):
    return (r["site"].get("file") or "").endswith(name) and r["site"].get("line") == line
def where(rs):
    return [(r["type"], r["site"].get("function"), r["site"].get("file"), r["site"].get("line")) for r in rs]
bad = []
futex = [r for r in p["rows"] if r["type"] == "futex"]
mine = [r for r in futex if at(r, wait_line)]
if len(mine) != 1:
    bad.append("%d futex rows at %s:%d, not one: %s" % (len(mine), name, wait_line, where(futex)))
elsewhere = [r for r in futex if r not in mine and not at(r, hold_line)]
if elsewhere:
    bad.append("futex rows not at the program's lock line: %s" % where(elsewhere))
wait = sum(r["wait_ns"] for r in mine)
if measured < 100e6:
    bad.append("the program measured only %.1f ms of waits: the test did not contend" % (measured / 1e6))
if wait > 1.1 * measured or wait < floor * measured:
    bad.append("futex wait %.1f ms, the program measured %.1f ms (outside %.2f..1.1 of it)" %
               (wait / 1e6, measured / 1e6, floor))
joins = [r for r in p["rows"] if r["type"] == "join"]
if not joins or any(not at(r, join_line) for r in joins):
    bad.append("joins not at %s:%d: %s" % (name, join_line, where(joins)))
for b in bad:
    print("locklib_waits(%s): FAIL: %s" % (kind, b))
print("locklib_waits(%s): futex wait %.1f ms in %d waits, measured %.1f ms (%.1f%%)" %
      (kind, wait / 1e6, sum(r["contended"] for r in mine), measured / 1e6, 100.0 * wait / max(measured, 1)))
sys.exit(1 if bad else 0)
PY
[ "$fails" -eq 0 ] || exit 1
echo "locklib_waits($kind): ok"
