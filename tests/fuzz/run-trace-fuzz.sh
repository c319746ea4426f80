#!/bin/sh
# run-trace-fuzz.sh SECONDS - build the libFuzzer targets of the trace reader
# and of the exporters (trace export --format perfetto|chrome) with clang and
# run each for SECONDS (default 60) from a corpus of real traces.
# Exit status: 0 no finding; non-zero when libFuzzer found a crash, leak or
# timeout (the reproducer is left in $BUILD_DIR, named crash-*/leak-*/timeout-*).
# Environment: BUILD_DIR (default <repo>/build-fuzz), JOBS (default 2).
set -eu
secs=${1:-60}
case $secs in
	''|*[!0-9]*) echo "usage: $0 SECONDS" >&2; exit 2 ;;
esac
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DSYNCPROF_FUZZ=ON \
	-DSYNCPROF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j"${JOBS:-2}" --target fuzz_trace_reader fuzz_trace_export \
	trace_fuzz_seed
corpus=$build/trace-corpus
mkdir -p "$corpus"
SYNCPROF_OPTIONS=report_at_exit=0 "$build/tests/fuzz/trace_fuzz_seed" "$corpus"
# The reader, then the exporters (timeline, Perfetto, Chrome JSON) on the
# same corpus, SECONDS each.  Undefined behaviour is a finding too.
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
"$build/tests/fuzz/fuzz_trace_reader" -max_total_time="$secs" -timeout=10 \
	-max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$build/" "$corpus"
exec "$build/tests/fuzz/fuzz_trace_export" -max_total_time="$secs" -timeout=10 \
	-max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
	-artifact_prefix="$build/export-" "$corpus"
