#!/bin/sh
# run-trace-fuzz.sh SECONDS [TARGET...] - build trace libFuzzer targets with
# clang and run each for SECONDS (default 60) from a corpus of real traces.
# TARGET: fuzz_trace_reader (the reader), fuzz_trace_export (the exporters:
# timeline, Perfetto, Chrome JSON) or fuzz_trace_model (the model, replay
# and chains of 'trace what-if' and 'trace chains'); default: the reader,
# then the exporters.  Undefined behaviour is a finding too.
# Exit status: 0 no finding; non-zero when libFuzzer found a crash, leak or
# timeout (the reproducer is left in $BUILD_DIR, named crash-*/leak-*/timeout-*,
# prefixed with the target's name).
# Environment: BUILD_DIR (default <repo>/build-fuzz), JOBS (default 2).
set -eu
usage="usage: $0 SECONDS [fuzz_trace_reader|fuzz_trace_export|fuzz_trace_model...]"
secs=${1:-60}
case $secs in
	''|*[!0-9]*) echo "$usage" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
targets=${*:-fuzz_trace_reader fuzz_trace_export}
for t in $targets; do
	case $t in
		fuzz_trace_reader|fuzz_trace_export|fuzz_trace_model) ;;
		*) echo "$usage" >&2; exit 2 ;;
	esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-$root/build-fuzz}
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DSYNCPROF_FUZZ=ON \
	-DSYNCPROF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"${JOBS:-2}" --target $targets trace_fuzz_seed
corpus=$build/trace-corpus
mkdir -p "$corpus"
SYNCPROF_OPTIONS=report_at_exit=0 "$build/tests/fuzz/trace_fuzz_seed" "$corpus"
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for t in $targets; do
	"$build/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 \
		-max_len=65536 -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/$t-" "$corpus"
done
