# The two commands the README promises, and a few more.
#   make demo    build, then profile the bundled bank example and print the report
#   make check   build and run the whole test suite: plain, ASan+UBSan, TSan,
#                then fuzz the trace reader, the exporters, the control parser
#                and the saved-profile reader (bounded)
# Build trees: build/ (release with debug info), build-asan/, build-tsan/.

JOBS ?= 2
CMAKE_FLAGS ?=
BUILD := build

.PHONY: all deps build demo check check-fast check-asan check-tsan fuzz bench install clean

all: build

deps:
	@./scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DSYNCPROF_WERROR=ON $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(BUILD) -j$(JOBS)

demo: build
	@echo
	@echo "== syncprof run --hold -n 8 -- bank 4 300000   (unmodified program, preloaded) =="
	@$(BUILD)/syncprof run --hold -n 8 -- $(BUILD)/examples/bank 4 300000
	@echo
	@echo "== the same program built with -include syncprof/instrument.h =="
	@SYNCPROF_OPTIONS=enabled=1,top=5 $(BUILD)/examples/bank_instrumented 4 300000

check-fast: build
	@cd $(BUILD) && ctest --output-on-failure -j$(JOBS)

check-asan: deps
	@cmake -S . -B build-asan -DSYNCPROF_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
		-DSYNCPROF_SANITIZE=address,undefined -DSYNCPROF_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-asan -j$(JOBS)
	@cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j$(JOBS) -LE nosan

check-tsan: deps
	@cmake -S . -B build-tsan -DSYNCPROF_WERROR=ON -DCMAKE_BUILD_TYPE=Debug \
		-DSYNCPROF_SANITIZE=thread -DSYNCPROF_BUILD_BENCH=OFF $(CMAKE_FLAGS) >/dev/null
	@cmake --build build-tsan -j$(JOBS)
	@cd build-tsan && TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tests/tsan.supp" \
		SYNCPROF_TEST_SCALE=4 ctest --output-on-failure -j$(JOBS) -LE nosan

# libFuzzer targets (clang, with ASan+UBSan) for the trace reader, the
# model of trace what-if and chains, and the control-request parser, each
# for a bounded time.
FUZZ_SECONDS ?= 30
fuzz: deps
	@echo "== fuzzing the trace reader, then the trace exporters, for $(FUZZ_SECONDS) s each =="
	@./tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) fuzz_trace_reader fuzz_trace_export > fuzz-trace.log 2>&1 || \
		{ tail -n 40 fuzz-trace.log; exit 1; }
	@tail -n 3 fuzz-trace.log
	@echo "== fuzzing trace what-if's and chains' model for $(FUZZ_SECONDS) s =="
	@./tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) fuzz_trace_model > fuzz-model.log 2>&1 || \
		{ tail -n 40 fuzz-model.log; exit 1; }
	@tail -n 3 fuzz-model.log
	@echo "== fuzzing the control-request parser for $(FUZZ_SECONDS) s =="
	@./tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) fuzz_ctl > fuzz-ctl.log 2>&1 || \
		{ tail -n 40 fuzz-ctl.log; exit 1; }
	@tail -n 3 fuzz-ctl.log
	@echo "== fuzzing the saved-profile reader for $(FUZZ_SECONDS) s =="
	@./tests/fuzz/run-fuzz.sh $(FUZZ_SECONDS) fuzz_profile_load > fuzz-profile.log 2>&1 || \
		{ tail -n 40 fuzz-profile.log; exit 1; }
	@tail -n 3 fuzz-profile.log

check: check-fast check-asan check-tsan fuzz
	@echo "syncprof: all test suites passed (plain, ASan+UBSan, TSan) and fuzzing found nothing"

bench: build
	@$(BUILD)/bench/lockbench -t 1 -m 1
	@$(BUILD)/bench/lockbench -t 1 -m 1024
	@$(BUILD)/bench/lockbench -t 2 -m 1

install: build
	@cmake --install $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz fuzz-trace.log fuzz-ctl.log fuzz-profile.log
