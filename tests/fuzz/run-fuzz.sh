#!/bin/sh
# run-fuzz.sh SECONDS [TARGET...] - build libFuzzer targets with clang
# (libFuzzer + ASan + UBSan) in their own build directory and run each for
# SECONDS seconds (default 60).
#
# TARGET (default: fuzz_trace_reader fuzz_trace_export):
#   fuzz_trace_reader  the trace reader
#   fuzz_trace_export  the trace exporters: timeline, Perfetto, Chrome JSON
#   fuzz_trace_model   the model, replay and chains of 'trace what-if/chains'
#   fuzz_ctl           the control-request parser
#   fuzz_profile_load  the saved-profile (JSON) reader
# The trace targets start from a corpus of real traces written by
# trace_fuzz_seed (the model's also from tests/fuzz/model-seeds, inputs
# it once failed on); the others from the seeds under tests/fuzz/.
#
# Exit status: 0 no finding; non-zero when libFuzzer found a crash, leak,
# timeout or undefined behaviour (the reproducer is left in the build
# directory, named after the target: TARGET-crash-*, TARGET-leak-*, ...).
# Environment: BUILD_DIR or SYNCPROF_FUZZ_BUILD (default <repo>/build-fuzz),
# JOBS (default 2).
set -eu
usage="usage: $0 SECONDS [fuzz_trace_reader|fuzz_trace_export|fuzz_trace_model|fuzz_ctl|fuzz_profile_load...]"
secs=${1:-60}
case $secs in
	''|*[!0-9]*) echo "$usage" >&2; exit 2 ;;
esac
[ $# -gt 0 ] && shift
targets=${*:-fuzz_trace_reader fuzz_trace_export}
build_targets=
for t in $targets; do
	case $t in
		fuzz_trace_*) build_targets="$build_targets $t trace_fuzz_seed" ;;
		fuzz_ctl|fuzz_profile_load) build_targets="$build_targets $t" ;;
		*) echo "$usage" >&2; exit 2 ;;
	esac
done
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${BUILD_DIR:-${SYNCPROF_FUZZ_BUILD:-$root/build-fuzz}}
cmake -S "$root" -B "$build" -DCMAKE_C_COMPILER=clang -DSYNCPROF_FUZZ=ON \
	-DSYNCPROF_BUILD_BENCH=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# shellcheck disable=SC2086
cmake --build "$build" -j"${JOBS:-2}" --target $build_targets >/dev/null
export SYNCPROF_OPTIONS=report_at_exit=0
export UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
for t in $targets; do
	# per target: corpus directory, seeds, longest input, extra flags
	case $t in
	fuzz_trace_*)
		corpus=$build/trace-corpus seeds= max_len=65536 extra=
		mkdir -p "$corpus"
		"$build/tests/fuzz/trace_fuzz_seed" "$corpus"
		# inputs that once failed, run first every time
		[ "$t" = fuzz_trace_model ] && seeds=$root/tests/fuzz/model-seeds ;;
	fuzz_ctl)
		corpus=$build/fuzz-ctl-corpus seeds=$root/tests/fuzz/ctl-seeds max_len=2048
		extra=-dict=$root/tests/fuzz/ctl.dict ;;
	fuzz_profile_load)
		corpus=$build/fuzz-profile-corpus seeds=$root/tests/fuzz/profile-seeds
		max_len=8192 extra= ;;
	esac
	mkdir -p "$corpus"
	# shellcheck disable=SC2086
	(cd "$build" && "$build/tests/fuzz/$t" -max_total_time="$secs" -timeout=10 \
		-max_len=$max_len -rss_limit_mb=2048 -print_final_stats=1 \
		-artifact_prefix="$build/$t-" $extra "$corpus" $seeds)
done
