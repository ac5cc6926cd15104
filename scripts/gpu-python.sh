#!/usr/bin/env bash
# scripts/gpu-python.sh - the Python package on the GPU machine (no internet there): installs the wheels of
# ./.whl (made here by scripts/python-wheel.sh) offline into /tmp/pscan-site, says which array libraries are
# present (torch, CuPy, numpy, dask), runs the Python tests (tests/python: the CUDA ones run on CuPy arrays
# and torch tensors where those are installed, and skip where not) and the benchmark beside torch.cumsum,
# cupy.cumsum, a device copy, the bare C call and numpy.cumsum (scripts/bench_python.py).
# Usage, in the repository root with .whl carried: bash scripts/gpu-python.sh [OUTDIR]  (CSV and logs there;
# default out/). Quick: PSCAN_BENCH_MAX_LOG2=24. Exits non-zero if the install or a test fails.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
OUTDIR=${1:-out}
mkdir -p "$OUTDIR"
PY=${PYTHON:-python3}
status=0
say() { printf '\n=== %s\n' "$*"; }

say "install .whl offline into /tmp/pscan-site"
ls .whl/*.whl || { echo "no .whl/: build it with scripts/python-wheel.sh on a machine with nvcc and internet"; exit 1; }
# Only the wheels the image lacks: a carried dask is skipped where one is installed already.
wheels=()
for w in .whl/*.whl; do
  name=$(basename "$w" | cut -d- -f1)
  if [[ $name != pscan ]] && "$PY" -c "import importlib.util, sys; sys.exit(importlib.util.find_spec('$name') is None)"; then
    continue
  fi
  wheels+=("$w")
done
"$PY" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/pscan-site \
  "${wheels[@]}" || exit 1
export PYTHONPATH=/tmp/pscan-site${PYTHONPATH:+:$PYTHONPATH}

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
import pscan
print("pscan", pscan.__version__, "cuda backend:", pscan.HAVE_CUDA, "from", pscan.__file__)
print("CPU context:", pscan.device_name())
PYEOF
[[ $? -eq 0 ]] || status=1

say "pytest tests/python (CUDA tests on CuPy and torch where installed)"
(cd tests/python && "$PY" -m pytest -q -p no:cacheprovider -rs 2>&1) | tee "$OUTDIR/python-tests.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

say "benchmark: pscan.scan vs torch.cumsum, cupy.cumsum, a device copy, the C call; numpy.cumsum on the CPU"
"$PY" scripts/bench_python.py --max-log2 "${PSCAN_BENCH_MAX_LOG2:-28}" --csv "$OUTDIR/python-bench.csv" 2>&1 \
  | tee "$OUTDIR/python-bench.log"
[[ ${PIPESTATUS[0]} -eq 0 ]] || status=1

say "gpu-python: $([[ $status -eq 0 ]] && echo PASSED || echo FAILED)"
exit "$status"
