# Everything a fresh machine needs: `make demo` and `make test`.
SHELL := /bin/bash
BUILD ?= build
PY := .venv/bin/python
JOBS ?= $(shell nproc)
CMAKE_FLAGS ?=

.PHONY: setup build test test-cpp test-python lint format demo demo-dp tsan asan fuzz bench code-order docs clean

setup:
	@scripts/setup.sh

$(BUILD)/build.ninja:
	@scripts/setup.sh
	cmake -S . -B $(BUILD) -G Ninja -DPython_EXECUTABLE=/usr/bin/python3 $(CMAKE_FLAGS)

build: setup $(BUILD)/build.ninja
	cmake --build $(BUILD) -j $(JOBS)

test: build
	@$(MAKE) --no-print-directory test-cpp test-python

test-cpp:
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

test-python:
	MSRT_BUILD_DIR=$(abspath $(BUILD)) $(PY) -m pytest -q -p no:cacheprovider tests/python

# clang-format, clang-tidy (over src/, from the build's compile_commands.json) and flake8.
lint: build
	LINT_JOBS=$(JOBS) scripts/lint.sh $(BUILD)

# Formats every tracked C++ file in place with .clang-format.
format:
	scripts/format.sh

# The main job: LeNet-5 on Fashion-MNIST (Debian's dataset-fashion-mnist), 3 epochs.
# OpenMP workers (oneDNN) that spin between kernels starve the Python and
# dispatcher threads on a small machine: they wait passively unless told otherwise.
DEMO_DATA ?= /usr/share/datasets/fashion-mnist
DEMO_EPOCHS ?= 3
demo: build
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-PASSIVE} MSRT_BUILD_DIR=$(abspath $(BUILD)) \
	  $(PY) -m msrt.examples.lenet --mode graph --epochs $(DEMO_EPOCHS) --data-dir $(DEMO_DATA) --batch-size 32

# The same training, data parallel on 2 processes started by msrun: each rank
# trains on its half of the images with 16 rows per step, and the gradients are
# averaged, so the job takes one process's steps. Rank 0's log is shown as it is
# written; every process's log is in $(DEMO_LOG).
MSRUN := .venv/bin/msrun
DEMO_LOG ?= msrun_log
DEMO_PORT ?= 8118
demo-dp: build
	@rm -f $(DEMO_LOG)/worker_*.log; \
	OMP_WAIT_POLICY=$${OMP_WAIT_POLICY:-PASSIVE} MSRT_BUILD_DIR=$(abspath $(BUILD)) \
	  $(MSRUN) --worker_num=2 --local_worker_num=2 --master_port=$(DEMO_PORT) --log_dir=$(DEMO_LOG) --join=True \
	  python/msrt/examples/lenet.py --data-parallel --mode graph --epochs $(DEMO_EPOCHS) --data-dir $(DEMO_DATA) \
	  --batch-size 32 & pid=$$!; \
	tail -n +1 -F --pid=$$pid $(DEMO_LOG)/worker_0.log 2>/dev/null; wait $$pid

# Concurrency tests under ThreadSanitizer (clang).
tsan: setup
	cmake -S . -B build-tsan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DMSRT_SANITIZE=thread -DMSRT_BUILD_PYTHON=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMSRT_CUDA=OFF
	cmake --build build-tsan -j $(JOBS) --target msrt_tests
	TSAN_OPTIONS="halt_on_error=1 suppressions=$(abspath tests/tsan.supp)" build-tsan/tests/cpp/msrt_tests --gtest_filter='*Concurren*:*Thread*:*Interrupt*'

# The whole C++ and Python suites under AddressSanitizer and UndefinedBehaviorSanitizer
# (clang). python3 is not instrumented: the shared ASan runtime is preloaded into it, and
# leak checking is off for Python (the interpreter keeps its objects at exit). pytest
# captures sys.stdout/stderr only, so a sanitizer's report reaches the terminal.
ASAN_RUNTIME = $(shell clang++ -print-file-name=libclang_rt.asan-x86_64.so)
ASAN_COMMON = allocator_may_return_null=1:detect_odr_violation=0
UBSAN_ENV = UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1:$${UBSAN_OPTIONS}"
asan: setup
	cmake -S . -B build-asan -G Ninja -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang \
	  -DMSRT_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMSRT_CUDA=OFF -DMSRT_WERROR=OFF \
	  -DPython_EXECUTABLE=/usr/bin/python3
	cmake --build build-asan -j $(JOBS)
	cd build-asan && $(UBSAN_ENV) ASAN_OPTIONS="$(ASAN_COMMON):$${ASAN_OPTIONS}" ctest --output-on-failure -j $(JOBS)
	$(UBSAN_ENV) ASAN_OPTIONS="detect_leaks=0:$(ASAN_COMMON):$${ASAN_OPTIONS}" LD_PRELOAD=$(ASAN_RUNTIME) MSRT_BUILD_DIR=$(abspath build-asan) \
	  $(PY) -m pytest -q --capture=sys -p no:cacheprovider tests/python $(ASAN_PYTEST_ARGS)

# libFuzzer (clang, ASan + UBSan) over the context value parsers and every
# file reader (tests/fuzz/run.sh); FUZZ_SECONDS per target.
FUZZ_SECONDS ?= 60
fuzz: setup
	tests/fuzz/run.sh $(FUZZ_SECONDS)

bench: build
	@scripts/setup.sh --bench
	cmake -S . -B build-bench -G Ninja -DMSRT_BUILD_BENCHMARKS=ON -DMSRT_BUILD_PYTHON=OFF -DMSRT_BUILD_TESTS=OFF > /dev/null
	cmake --build build-bench --target context_bench collective_bench
	build-bench/benchmarks/context_bench
	build-bench/benchmarks/collective_bench
	$(PY) benchmarks/allreduce_bandwidth.py
	$(PY) benchmarks/grad_bucket.py
	$(PY) benchmarks/context_bench.py
	$(PY) benchmarks/tensor_op_overhead.py
	$(PY) benchmarks/lenet_step.py
	$(PY) benchmarks/fusion.py
	$(PY) benchmarks/conv_bias.py
	$(PY) benchmarks/memory_plan.py
	$(PY) benchmarks/compile_time.py
	$(PY) benchmarks/conv_matmul.py
	$(PY) benchmarks/dataset_pipeline.py
	$(PY) benchmarks/suite.py --out docs/performance.json --profile docs/profiles
	$(PY) benchmarks/report.py docs/performance.json

# Regenerates src/code_order.txt, the order in which the linker lays out
# libmsrt's functions, from traced runs (scripts/code_order/order.py): an
# instrumented build in $(BUILD)-trace, the scenarios, then a relink.
code-order: build
	cmake -S . -B $(BUILD)-trace -G Ninja -DPython_EXECUTABLE=/usr/bin/python3 -DMSRT_BUILD_TESTS=OFF \
	  -DCMAKE_CXX_FLAGS=-finstrument-functions $(CMAKE_FLAGS) > /dev/null
	cmake --build $(BUILD)-trace -j $(JOBS)
	/usr/bin/python3 scripts/code_order/order.py $(BUILD)-trace $(BUILD)
	cmake --build $(BUILD) -j $(JOBS)

docs: build
	MSRT_BUILD_DIR=$(abspath $(BUILD)) $(PY) tools/gen_context_docs.py > docs/context.md
	MSRT_BUILD_DIR=$(abspath $(BUILD)) $(PY) tools/gen_api_status.py > docs/mindspore-api.md

clean:
	rm -rf $(BUILD) build-tsan build-asan build-fuzz build-bench
