#!/usr/bin/env bash
# scripts/test.sh - the test command of the README: `bash scripts/test.sh`.
#
# On a fresh Debian machine (as root, apt reachable) it installs what the build and tests need, then:
#   1. a Release build with every backend whose toolchain is present (the CUDA backend whenever nvcc is: it
#      must compile and link without a GPU; its tests then skip with exit 77), and the whole ctest suite;
#   2. a sanitizer build (ASan + UBSan) of the library and tests, CPU backend only, and its ctest suite;
#   3. a ThreadSanitizer build of the scan table, run on the CPU's threaded scan;
#   4. the pscan tool's format tests and a short fuzz of its parsers;
#   5. the Python package: `pip install .` in a venv and its pytest suite (tests/python).
# Exits non-zero if anything fails. Build trees: build-ci/, build-ci-asan/, build-ci-tsan/ (PSCAN_CI_BUILD_DIR
# changes the prefix); PSCAN_JOBS sets the parallelism (default: all cores).
# Time on the 2-core CI machine: 1137 s on 2026-12-03 (fifty-first session; the probe loop below 2698 ms, packages
# already installed): step 1's build 191 s, its ctest 459 s (915 test-seconds on 2 cores; the OpenCL scan tables 312
# of them, PoCL compiling kernels: scan.opencl.decoupled-lookback 105 s), step 2 302 s, 3-5 176 s. The run before
# took 1885 s: test_select and test_sort poisoned their whole output buffers (34 MB) before every case
# (select.cpu.serial 274 s, .threads 244 s); they now poison what each case checks. Earlier: 1436 s (forty-ninth
# session), 2188-2599 s (fiftieth, a slower machine: probe 6900 ms).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
BUILD=${PSCAN_CI_BUILD_DIR:-$ROOT/build-ci}

# ---- what the build needs ---------------------------------------------------------------------------
# build-essential, cmake, ninja and pkg-config build and install; PoCL + the ICD loader + headers give an
# OpenCL device on the CPU, so the OpenCL backend is built and its tests really run; clinfo helps diagnose it.
# Debian's Open MPI builds the MPI add-on (pscan_mpi.h), whose tests run 1-4 ranks oversubscribed (label mpi).
PACKAGES=(build-essential cmake ninja-build pkg-config pocl-opencl-icd ocl-icd-opencl-dev opencl-headers clinfo
  libopenmpi-dev openmpi-bin)
ensure_packages "${PACKAGES[@]}"
# the machine's speed, so that this run's times can be read against another's: one core, a few seconds
probe_start=$(date +%s%N)
i=0
while [ $i -lt 1000000 ]; do i=$((i + 1)); done
say "machine: $(nproc) cores; a 10^6-step shell loop took $(( ($(date +%s%N) - probe_start) / 1000000 )) ms"

status=0

# ---- 1. Release build, every backend present, all tests ----------------------------------------------------
say "configure ($BUILD)"
# Without a GPU the CUDA backend is compiled to PTX alone (compute_90; a driver would compile it at load): its
# sm_90 machine code would never run here, and ptxas is half of the CUDA compile time (radix_sort.cu: 40 s -> 20 s
# on the 2-core CI machine). The GPU machine's build (scripts/gpu-check.sh) makes sm_90 code and runs it.
# Nor is that PTX ever run here, so NVVM's optimizer is off (-Xcicc -O0): it checks that every instantiation
# compiles, at a sixth of the time (radix_sort.cu: 30 s -> 4.4 s). PSCAN_CI_CUDA_FLAGS="" keeps it on.
CUDA_ARGS=()
if command -v nvcc >/dev/null 2>&1 && ! nvidia-smi -L >/dev/null 2>&1; then
  CUDA_ARGS=(-DCMAKE_CUDA_ARCHITECTURES="${PSCAN_CI_CUDA_ARCHS:-90-virtual}"
             -DCMAKE_CUDA_FLAGS="${PSCAN_CI_CUDA_FLAGS--Xcicc -O0}")
fi
# The OpenCL scan tables run --quick here (PoCL, on 2 cores: about 10% of their time, the rest is compiling
# kernels); scripts/gpu-check.sh runs them in full on the GPU.
cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DPSCAN_TEST_OPENCL_QUICK=ON "${CUDA_ARGS[@]}"
say "build (-j$JOBS; the CUDA backend's type x operator instantiations are the slow part)"
cmake --build "$BUILD" -j "$JOBS" 2>&1 | tee "$BUILD/build-output.txt"
# The build is warning-free (the compilers' -Wall, nvcc's host side included): a warning fails CI here, where it is
# seen, instead of scrolling past (the forty-sixth session's launcher warned in 15 files through two CI runs).
if grep -q "warning" "$BUILD/build-output.txt"; then
  say "FAIL: the build printed warnings:"
  grep "warning" "$BUILD/build-output.txt" | sort | uniq -c | sort -rn | head -20
  status=1
fi
# PoCL was installed above, so the OpenCL backend must be compiled in and find its CPU device: its tests fail
# rather than skip if it does not. CUDA skips here (no GPU on CI machines).
# PoCL caches the kernels it compiles (~/.cache/pocl by default), and compiling them is most of the OpenCL tests'
# time: a cache per build tree keeps every run's time that of a fresh CI machine (a warm ~/.cache/pocl took this
# step from about 700 s to 320 s on 2026-12-03 and hid it).
export POCL_CACHE_DIR=${POCL_CACHE_DIR:-$BUILD/pocl-cache}
say "ctest (all labels: cpu, cuda, opencl, mpi, large, install; absent backends skip, OpenCL required)"
PSCAN_TEST_REQUIRE_BACKENDS=${PSCAN_TEST_REQUIRE_BACKENDS:-opencl} \
  ctest --test-dir "$BUILD" --output-on-failure -j "$JOBS" || status=1

# ---- 2. sanitizer build --------------------------------------------------------------------------------
# CPU backend only: the CUDA runtime and the OpenCL ICD loader / PoCL are not ASan-clean (they leak at exit and
# touch memory the sanitizer cannot see), so their reports would be theirs, not ours. The tables run --quick
# (PSCAN_TEST_QUICK: every tile edge and awkward size, fewer large ones; the Release run above has the full
# tables; under ASan the full ones took 492 s of a 1913 s CI run); the "large" label does not: under ASan the
# 2^32-element case takes minutes and 4 GiB more of shadow memory, and the Release run above covers it. Nor does
# "install": a user's plain program cannot link a sanitizer-instrumented static libpscan (the Release run above
# covers it too).
ASAN_BUILD=${BUILD}-asan
say "configure sanitizer build ($ASAN_BUILD)"
# No MPI add-on either: Open MPI's own allocations at MPI_Init and MPI_Finalize are reported as leaks.
cmake -S "$ROOT" -B "$ASAN_BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPSCAN_SANITIZE=ON \
  -DPSCAN_CUDA=OFF -DPSCAN_OPENCL=OFF -DPSCAN_MPI=OFF -DPSCAN_TEST_QUICK=ON
say "build sanitizer build"
cmake --build "$ASAN_BUILD" -j "$JOBS"
say "ctest under ASan + UBSan (labels large and install excluded)"
ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1} \
UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1} \
  ctest --test-dir "$ASAN_BUILD" --output-on-failure -j "$JOBS" -LE "large|install" || status=1

# ---- 3. ThreadSanitizer on the CPU's threaded scan --------------------------------------------------------
# Its pool and its carries chained between threads are lock-free; TSan checks every access is ordered. Two
# narrow runs (TSan is slow): 8- and 1-byte elements with every flag combination at all sizes up to 2^20+1, on
# the default pool and on an odd one with more threads than cores.
TSAN_BUILD=${BUILD}-tsan
say "ThreadSanitizer build of test_scan ($TSAN_BUILD)"
cmake -S "$ROOT" -B "$TSAN_BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPSCAN_CUDA=OFF \
  -DPSCAN_OPENCL=OFF -DCMAKE_C_FLAGS=-fsanitize=thread -DCMAKE_EXE_LINKER_FLAGS=-fsanitize=thread >/dev/null
cmake --build "$TSAN_BUILD" -j "$JOBS" --target test_scan
say "test_scan --algo threads under TSan"
for args in "--type i64" "--type u8 --threads 3"; do
  # shellcheck disable=SC2086
  if out=$(TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1} \
    "$TSAN_BUILD/tests/test_scan" --backend cpu --algo threads --quick $args 2>&1); then
    echo "$args: ${out##*$'\n'}"
  else
    printf '%s\n' "$out" | tail -60
    echo "$args: FAILED under ThreadSanitizer"
    status=1
  fi
done

# ---- 4. the pscan tool: format tests with python3, and a short fuzz of its parsers ------------------------
# tests/test_cli.sh compares the tool's formats with a serial reference written in python3 (no numpy); if
# python3 was missing when ctest ran it above, those tests were skipped: install it and run them now. Then
# libFuzzer (clang-14, ASan + UBSan) over every parser of `pscan scan` (numbers of each type, text lines, CSV
# rows and columns, the .npy header, option values), 20 s per target; docs/cli.md has the long runs.
had_python=$(command -v python3 || true)
say "pscan tool: installing python3 (format tests), clang-14 and libFuzzer (fuzzing) if missing"
ensure_packages python3 clang-14 libclang-rt-14-dev
if [[ -z $had_python ]]; then
  say "pscan tool: the format tests skipped by ctest, now with python3"
  bash "$ROOT/tests/test_cli.sh" "$BUILD/tools/pscan" || status=1
fi
say "pscan tool: fuzzing 5 parsers, ${PSCAN_FUZZ_SECONDS:-20} s each (tests/fuzz/run.sh, in ${BUILD}-fuzz)"
PSCAN_FUZZ_BUILD_DIR=${BUILD}-fuzz PSCAN_FUZZ_CC=clang-14 PSCAN_JOBS=$JOBS \
  bash "$ROOT/tests/fuzz/run.sh" "${PSCAN_FUZZ_SECONDS:-20}" || status=1

# ---- 5. the Python package: pip install . in a venv, then pytest ------------------------------------------
# A user's `pip install .` (pyproject.toml: scikit-build-core runs CMake and packs libpscan.so with the cffi
# binding), in a fresh venv with numpy, pytest and dask (dask's tests skip if pip cannot get it). CUDA is left
# out of this build: these tests run numpy arrays on the CPU backend, and the CUDA objects would double the
# build time (scripts/python-wheel.sh builds the CUDA wheel; scripts/gpu-python.sh tests it on a GPU). Then
# tests/python: every dtype x operator x flag x size against numpy, axis, out=, bad inputs with their status,
# the GIL released, pscan.dask. About 1.5 minutes on 2 cores.
PY_BUILD=${BUILD}-python
say "Python: pip install . into a venv ($PY_BUILD/venv), numpy, pytest, dask"
ensure_packages python3 python3-venv
[[ -x $PY_BUILD/venv/bin/python ]] || python3 -m venv "$PY_BUILD/venv"
"$PY_BUILD/venv/bin/pip" install -q numpy pytest cffi scikit-build-core || status=1
"$PY_BUILD/venv/bin/pip" install -q "dask[array]" || echo "dask not installed: pscan.dask's tests will skip"
CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$PY_BUILD/venv/bin/pip" install -q --no-build-isolation --force-reinstall \
  --no-deps "$ROOT" -Cbuild-dir="$PY_BUILD/build" -Ccmake.define.PSCAN_CUDA=OFF || status=1
say "Python: pytest tests/python"
(cd "$ROOT/tests/python" && "$PY_BUILD/venv/bin/python" -m pytest -q -p no:cacheprovider -rs) || status=1

say "done: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED) in $(( $(date +%s) - START )) s"
exit "$status"
