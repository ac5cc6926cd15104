#!/usr/bin/env bash
# scripts/python-wheel.sh - builds the Python wheel with the CUDA backend into ./.whl, for a GPU machine
# that has no internet (scripts/gpu-python.sh installs from there, offline).
#
# Here (needs nvcc and pip with internet): a venv in build-py/wheel-venv with scikit-build-core, then
#   pip wheel . -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90   ->  .whl/pscan-0.1.0-py3-none-linux_x86_64.whl
# (one wheel for every CPython 3: the binding is cffi in ABI mode; libpscan.so links the CUDA runtime
# statically, so it needs only the driver there), and beside it the wheels the GPU machine's image lacks, for
# its Python 3.12: cffi and pycparser (the binding's needs), dask, partd and locket (so that the dask tests run
# there too). Builds in build-py/cuda (kept: a second run only relinks). About 10 minutes on 2 cores.
# Environment: PSCAN_WHEEL_PYTHON (default 3.12), PSCAN_CUDA_ARCHS (default 90), PSCAN_JOBS.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
PYVER=${PSCAN_WHEEL_PYTHON:-3.12}
command -v nvcc >/dev/null || { echo "python-wheel.sh: nvcc not found; the GPU wheel needs the CUDA backend" >&2; exit 1; }
ensure_packages python3 python3-venv build-essential cmake ninja-build

VENV=$ROOT/build-py/wheel-venv
say "venv with scikit-build-core ($VENV)"
[[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
"$VENV/bin/pip" install -q --upgrade pip scikit-build-core cffi numpy

say "pip wheel . with CUDA, sm_${PSCAN_CUDA_ARCHS:-90} (-j$JOBS)"
mkdir -p "$ROOT/.whl"
rm -f "$ROOT"/.whl/pscan-*.whl
CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$VENV/bin/pip" wheel "$ROOT" --no-deps --no-build-isolation -w "$ROOT/.whl" \
  -Cbuild-dir="$ROOT/build-py/cuda" -Ccmake.define.PSCAN_CUDA=ON \
  -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${PSCAN_CUDA_ARCHS:-90}"
unzip -l "$ROOT"/.whl/pscan-*.whl | grep -q "pscan/libpscan.so" || { echo "no libpscan.so in the wheel" >&2; exit 1; }

say "the wheels the GPU machine lacks, for CPython $PYVER (cffi, pycparser, dask, partd, locket)"
"$VENV/bin/pip" download -q --no-deps --only-binary=:all: --python-version "$PYVER" --implementation cp \
  --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
  -d "$ROOT/.whl" cffi pycparser dask partd locket
ls -l "$ROOT/.whl"
say "done: carry .whl to the GPU machine and run scripts/gpu-python.sh there"
