#!/usr/bin/env bash
# scripts/gpu-python.sh - the Python package on the GPU machine (no internet there): finds or makes libpscan.so
# with the CUDA backend, installs the Python packages the image lacks from ./.whl offline into /tmp/pscan-site,
# says which array libraries are present (torch, CuPy, numpy, dask), runs the Python tests (tests/python: the
# CUDA ones run on CuPy arrays and torch tensors where those are installed, and skip where not) and the
# benchmark beside torch.cumsum, cupy.cumsum, a device copy, the bare C call and numpy.cumsum
# (scripts/bench_python.py).
#
# Usage, in the repository root:  bash scripts/gpu-python.sh [--build] [--no-tests] [--no-bench] [OUTDIR]
# (quick: PSCAN_BENCH_MAX_LOG2=24; PSCAN_BENCH_ARGS="--only small": small calls' host time and reduce by
# rows). Exits non-zero if the library, an install or a test fails. Writes three
# files in OUTDIR (default $OUT when set, else out/): python-tests.log (every test file's whole pytest -v
# output), python-bench.csv and python-bench.log; prints a digest per test file and, last, a table of them.
# The tests: each file of tests/python in its own process, or PSCAN_TEST_FILES="test_a.py test_b.py,test_c.py"
# (a comma runs files in one process, in that order); each stopped after PSCAN_PYTEST_TIMEOUT seconds
# (default 240), with stacks; a test past PSCAN_TEST_SLOW seconds (default 100) has its stacks dumped.
#
# The library, the first of these that applies:
#   1. PSCAN_LIBRARY=path/to/libpscan.so: a CUDA build's library carried from elsewhere (carry the real file,
#      build-cuda/libpscan.so.0.1.0: the libpscan.so beside it is a symlink, which travels as a dangling
#      link). The package is then imported from python/ (PYTHONPATH=python), which loads that file;
#   2. --build: builds it here, only the library (target pscan_shared, sm_90, every core) in build-gpu-py/,
#      then as in 1 (a minute or two on 16 cores);
#   3. .whl/pscan-*.whl (scripts/python-wheel.sh, about 11 minutes on 2 cores elsewhere): installed into
#      /tmp/pscan-site with the package;
#   4. build-gpu/libpscan.so left by scripts/gpu-check.sh in the same command, then as in 1.
# Where the library's CUDA libraries (libcudart, libnvrtc) are not found by its RUNPATH, their folders under
# /usr/local/cuda* or the Python's nvidia/* packages are put on LD_LIBRARY_PATH (and said so).
#
# The binding needs cffi (and cffi pycparser), which the GPU image lacks, and the dask tests need dask, partd
# and locket: `bash scripts/python-wheel.sh --deps-only` (seconds, with internet) downloads their wheels for
# CPython 3.10, 3.11 and 3.12 into .whl/; carry .whl. Each is installed by name with pip --no-index
# --find-links .whl, which picks the wheel for the running Python, and only where the image lacks it. Without
# cffi the script stops and says so.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
BUILD=0 TESTS=1 BENCH=1 OUTDIR=${OUT:-out}
while [[ $# -gt 0 ]]; do
  case $1 in
    --build) BUILD=1 ;;
    --no-tests) TESTS=0 ;;
    --no-bench) BENCH=0 ;;
    -h | --help) sed -n '2,33p' "$0"; exit 0 ;;
    -*) echo "gpu-python.sh: unknown option $1" >&2; exit 2 ;;
    *) OUTDIR=$1 ;;
  esac
  shift
done
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
SITE=/tmp/pscan-site
status=0
say() { printf '\n=== %s\n' "$*"; }
pip_install() { "$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$@"; }
has_module() { "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$1') is None)" 2>/dev/null; }

# ---- the library -----------------------------------------------------------------------------------------
LIBRARY=${PSCAN_LIBRARY:-}
if [[ -z $LIBRARY && $BUILD -eq 1 ]]; then
  say "building libpscan.so (pscan_shared, CUDA sm_${PSCAN_CUDA_ARCHS:-90}) in build-gpu-py"
  command -v nvcc >/dev/null || export PATH=/usr/local/cuda/bin:$PATH
  cmake -S . -B build-gpu-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DPSCAN_CUDA=ON -DPSCAN_OPENCL=OFF \
    -DPSCAN_TESTS=OFF -DPSCAN_MPI=OFF -DCMAKE_CUDA_ARCHITECTURES="${PSCAN_CUDA_ARCHS:-90}" >/tmp/pscan-python-build.log 2>&1 &&
    ninja -C build-gpu-py -j"$(nproc)" pscan_shared >>/tmp/pscan-python-build.log 2>&1 ||
    { tail -40 /tmp/pscan-python-build.log; echo "gpu-python: the build failed"; exit 1; }
  LIBRARY=$ROOT/build-gpu-py/libpscan.so
fi
WHEEL=$(ls .whl/pscan-*.whl 2>/dev/null | head -1)
if [[ -z $LIBRARY && -z $WHEEL && -e build-gpu/libpscan.so ]]; then
  LIBRARY=$ROOT/build-gpu/libpscan.so
fi
if [[ -n $LIBRARY ]]; then
  [[ $LIBRARY == /* ]] || LIBRARY=$ROOT/$LIBRARY
  [[ -f $LIBRARY ]] || { echo "gpu-python: PSCAN_LIBRARY=$LIBRARY is not a file (a carried symlink? carry libpscan.so.0.1.0)"; exit 1; }
  export PSCAN_LIBRARY=$LIBRARY
  say "the library: $LIBRARY, the package from python/"
elif [[ -n $WHEEL ]]; then
  say "the library: installing $WHEEL into $SITE"
  pip_install "$WHEEL" || exit 1
  LIBRARY=$SITE/pscan/libpscan.so
else
  echo "gpu-python: no library: set PSCAN_LIBRARY to a carried CUDA build's libpscan.so.0.1.0, pass --build,"
  echo "            or carry .whl/pscan-*.whl (scripts/python-wheel.sh)"
  exit 1
fi

# ---- its CUDA libraries ----------------------------------------------------------------------------------
missing=$(ldd "$LIBRARY" 2>/dev/null | awk '/not found/ {print $1}')
for lib in $missing; do
  dir=$( { ls -d /usr/local/cuda*/lib64 /usr/local/cuda*/lib /usr/local/cuda*/targets/*/lib 2>/dev/null
           "$PY" -c "import nvidia, os; [print(os.path.join(p, d, 'lib')) for p in nvidia.__path__ for d in os.listdir(p)]" 2>/dev/null
         } | while read -r d; do [[ -e $d/$lib ]] && { echo "$d"; break; }; done)
  if [[ -n $dir ]]; then
    echo "gpu-python: $lib is not on the library's RUNPATH; found in $dir (added to LD_LIBRARY_PATH)"
    export LD_LIBRARY_PATH=$dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  else
    echo "gpu-python: $lib, which $LIBRARY needs, is nowhere here"; status=1
  fi
done

# ---- the Python packages the image lacks -----------------------------------------------------------------
say "cffi, pycparser, dask, partd, locket from .whl where the image lacks them"
for name in cffi pycparser dask partd locket; do
  has_module "$name" && { echo "$name: the image's"; continue; }
  if ls .whl/"$name"-*.whl >/dev/null 2>&1; then
    pip_install --find-links .whl "$name" && echo "$name: from .whl" || echo "$name: no wheel in .whl fits this Python"
  else
    echo "$name: missing, and no wheel in .whl"
  fi
done
export PYTHONPATH=${PSCAN_LIBRARY:+$ROOT/python:}$SITE${PYTHONPATH:+:$PYTHONPATH}
if ! PYTHONPATH=$PYTHONPATH "$PY" -c "import cffi" 2>/dev/null; then
  echo "gpu-python: cffi is not installed and no wheel of it fits this Python ($("$PY" -V 2>&1)): the binding"
  echo "            cannot load. Run 'bash scripts/python-wheel.sh --deps-only' with internet and carry .whl."
  exit 1
fi

say "what is here"
"$PY" - <<'PYEOF'
import importlib, sys
print("python", sys.version.split()[0], sys.executable)
for name in ("numpy", "cffi", "torch", "cupy", "dask"):
    try:
        m = importlib.import_module(name)
        extra = ""
        if name == "torch":
            extra = f" cuda={m.version.cuda} available={m.cuda.is_available()} devices={m.cuda.device_count()}"
        if name == "cupy":
            extra = f" devices={m.cuda.runtime.getDeviceCount()}"
        print(f"{name:6s} {m.__version__}{extra}")
    except Exception as e:
        print(f"{name:6s} not usable: {type(e).__name__}: {e}")
import os
import pscan
print("pscan", pscan.__version__, "cuda backend:", pscan.HAVE_CUDA, "from", pscan.__file__,
      "library", os.environ.get("PSCAN_LIBRARY", "(beside it)"))
print("CPU context:", pscan.device_name())
if pscan.HAVE_CUDA:
    try:
        print("CUDA context:", pscan.device_name(0))
    except pscan.PscanError as e:
        print("no CUDA context:", e)
PYEOF
[[ $? -eq 0 ]] || { echo "gpu-python: pscan does not import"; exit 1; }

# ---- the tests: each file in its own process, under its own time limit ------------------------------------
# Why one process per file: a failure or a hang in one file (the CUDA tests leave device arrays, streams and
# operators behind, kept alive by a failed test's traceback) then tells nothing about the next, and each file's
# time and counts are its own. A group "a.py,b.py" in PSCAN_TEST_FILES runs those files in one process, in
# that order (to look for something one file leaves to the next).
# Per file: pytest -v into the log, and printed: the counts and time, the 5 slowest tests, the garbage
# collector's time (conftest.py), and on a failure the failing tests with their own frames. A test running
# past PSCAN_TEST_SLOW seconds (default 100) has every thread's stack dumped by pytest's faulthandler_timeout,
# and goes on; a file running past PSCAN_PYTEST_TIMEOUT seconds (default 240) is stopped: first what its
# threads are doing in the kernel (state, wait channel, CPU time over one second, from /proc; gdb's stack of
# the main thread where gdb is installed), then SIGABRT, which makes faulthandler print every thread's stack.
# Two stacks far apart in time at the same place: stuck; at different places: slow.
TEST_ROWS=()
kernel_threads() {  # pid: each thread's name, state, wait channel and CPU ticks in one second, alike ones once
  local pid=$1 t
  declare -A before
  for t in /proc/"$pid"/task/*; do before[${t##*/}]=$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null); done
  sleep 1
  printf '===== threads in the kernel =====\n'
  for t in /proc/"$pid"/task/*; do
    local tid=${t##*/} now
    now=$(awk '{print $14 + $15}' "$t/stat" 2>/dev/null) || continue
    printf '%s state=%s wchan=%s cpu_ticks_per_s=%s%s\n' "$(cat "$t/comm" 2>/dev/null)" \
      "$(awk '{print $3}' "$t/stat" 2>/dev/null)" "$(cat "$t/wchan" 2>/dev/null || echo ?)" \
      "$(( now - ${before[$tid]:-$now} ))" "$([[ $tid == "$pid" ]] && echo ' (main)')"
  done | sort | uniq -c | sort -rn | head -12
  if command -v gdb >/dev/null; then
    printf 'gdb, the main thread:\n'
    timeout 60 gdb -p "$pid" -batch -ex 'bt 16' 2>/dev/null | grep '^#' | sed 's/ (.*) at / at /' | head -16
  fi
  printf '===== the end of the threads =====\n'
}
run_test_group() {  # "test_a.py[,test_b.py...]": one pytest process, its log appended to python-tests.log
  local group=$1 log rc=0 timed_out=0 t0 pid limit=${PSCAN_PYTEST_TIMEOUT:-240}
  log=$(mktemp /tmp/pscan-pytest.XXXXXX)
  t0=$(date +%s.%N)
  (cd tests/python && exec "$PY" -X faulthandler -m pytest -v -p no:cacheprovider -rfEs --tb=short --durations=5 \
    -o faulthandler_timeout="${PSCAN_TEST_SLOW:-100}" ${group//,/ }) >>"$log" 2>&1 &  # appending: our notes too
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if (( $(date +%s) - ${t0%.*} >= limit )); then
      timed_out=1
      kernel_threads "$pid" >>"$log" 2>&1
      kill -ABRT "$pid" 2>/dev/null
      for _ in 1 2 3 4 5 6 7 8 9 10; do kill -0 "$pid" 2>/dev/null || break; sleep 1; done
      kill -KILL "$pid" 2>/dev/null
      break
    fi
    sleep 1
  done
  wait "$pid"; rc=$?
  local secs
  secs=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN {printf "%.1f", b - a}')
  printf '\n##### %s (rc %s, %s s%s)\n' "$group" "$rc" "$secs" "$([[ $timed_out -eq 1 ]] && echo ", stopped at ${limit} s")" \
    >>"$OUTDIR/python-tests.log"
  cat "$log" >>"$OUTDIR/python-tests.log"
  printf -- '--- %s\n' "$group"
  local digest
  digest=$("$PY" scripts/pytest_digest.py "$log" "$group" "$rc" "$secs" "$timed_out")
  printf '%s\n' "$digest" | sed '$d'
  TEST_ROWS+=("$(printf '%s\n' "$digest" | tail -1)")
  rm -f "$log"
  [[ ($rc -eq 0 || $rc -eq 5) && $timed_out -eq 0 ]] || status=1  # 5: nothing ran (test_cuda without CUDA)
}

if [[ $TESTS -eq 1 ]]; then
  say "pytest, one process per file of tests/python (CUDA tests on CuPy and torch where installed)"
  : >"$OUTDIR/python-tests.log"
  # shellcheck disable=SC2206
  groups=(${PSCAN_TEST_FILES:-$(cd tests/python && ls test_*.py)})
  for g in "${groups[@]}"; do run_test_group "$g" 2>>"$OUTDIR/python-tests.log"; done  # (bash's "Aborted")
fi

if [[ $BENCH -eq 1 ]]; then
  say "benchmark: pscan.scan vs torch.cumsum, cupy.cumsum, a device copy, the C call; numpy.cumsum on the CPU"
  # shellcheck disable=SC2086 # PSCAN_BENCH_ARGS: more options, split (e.g. "--only small")
  "$PY" scripts/bench_python.py --max-log2 "${PSCAN_BENCH_MAX_LOG2:-28}" ${PSCAN_BENCH_ARGS:-} \
    --csv "$OUTDIR/python-bench.csv" 2>&1 \
    | tee "$OUTDIR/python-bench.log"
  [[ ${PIPESTATUS[0]} -eq 0 ]] || status=1
fi

if [[ ${#TEST_ROWS[@]} -gt 0 ]]; then
  say "the tests, per file (whole logs: $OUTDIR/python-tests.log)"
  printf '%s\n' "${TEST_ROWS[@]}"
fi
say "gpu-python: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)"
exit "$status"
