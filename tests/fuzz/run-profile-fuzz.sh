#!/bin/sh
# run-profile-fuzz.sh SECONDS - build the saved-profile reader's fuzzer with clang
# (libFuzzer + ASan + UBSan) in its own build directory and run it for
# SECONDS seconds on the seed corpus.  Exit status 0 when no crash, leak
# or sanitizer report was found; a reproducer is left in the build
# directory otherwise.  Environment: BUILD_DIR or SYNCPROF_FUZZ_BUILD (build
# directory, default build-fuzz in the source tree), JOBS (default 2).
set -eu
secs=${1:?usage: run-profile-fuzz.sh SECONDS}
src=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-${SYNCPROF_FUZZ_BUILD:-$src/build-fuzz}}
cmake -S "$src" -B "$build" -DCMAKE_C_COMPILER=clang -DSYNCPROF_FUZZ=ON \
	-DSYNCPROF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_profile_load >/dev/null
corpus=$build/fuzz-profile-corpus
mkdir -p "$corpus"
cd "$build"
export SYNCPROF_OPTIONS=report_at_exit=0
exec "$build/tests/fuzz/fuzz_profile_load" -max_total_time="$secs" -max_len=8192 -timeout=10 \
	-rss_limit_mb=2048 -print_final_stats=1 \
	"$corpus" "$src/tests/fuzz/profile-seeds"
