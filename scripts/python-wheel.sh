#!/usr/bin/env bash
# scripts/python-wheel.sh - the wheels a GPU machine without internet needs for the Python package, into ./.whl
# (scripts/gpu-python.sh installs from there, offline).
#
#   bash scripts/python-wheel.sh --deps-only   seconds: only the wheels the GPU image lacks, for CPython 3.10,
#                                              3.11 and 3.12: cffi and pycparser (the binding's needs), dask,
#                                              partd and locket (so that the dask tests run there too). Enough
#                                              when the GPU machine uses a carried or freshly built libpscan.so
#                                              (gpu-python.sh, ways 1, 2 and 4).
#   bash scripts/python-wheel.sh               those, and the pscan wheel itself with the CUDA backend (needs
#                                              nvcc): a venv in build-py/wheel-venv with scikit-build-core, then
#   pip wheel . -Ccmake.define.CMAKE_CUDA_ARCHITECTURES=90   ->  .whl/pscan-0.1.0-py3-none-linux_x86_64.whl
# (one wheel for every CPython 3: the binding is cffi in ABI mode; libpscan.so links the CUDA runtime
# statically, so it needs only the driver and NVRTC there). Builds in build-py/cuda (kept: a second run only
# relinks). About 11 minutes on 2 cores.
# Environment: PSCAN_WHEEL_PYTHONS (default "3.10 3.11 3.12"), PSCAN_CUDA_ARCHS (default 90), PSCAN_JOBS.
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
DEPS_ONLY=0
[[ ${1:-} == --deps-only ]] && DEPS_ONLY=1
PYVERS=${PSCAN_WHEEL_PYTHONS:-${PSCAN_WHEEL_PYTHON:-3.10 3.11 3.12}}
mkdir -p "$ROOT/.whl"

if [[ $DEPS_ONLY -eq 0 ]]; then
  command -v nvcc >/dev/null || { echo "python-wheel.sh: nvcc not found; the GPU wheel needs the CUDA backend" >&2; exit 1; }
  ensure_packages python3 python3-venv build-essential cmake ninja-build
  VENV=$ROOT/build-py/wheel-venv
  say "venv with scikit-build-core ($VENV)"
  [[ -x $VENV/bin/python ]] || python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q --upgrade pip scikit-build-core cffi numpy

  say "pip wheel . with CUDA, sm_${PSCAN_CUDA_ARCHS:-90} (-j$JOBS)"
  rm -f "$ROOT"/.whl/pscan-*.whl
  CMAKE_BUILD_PARALLEL_LEVEL=$JOBS "$VENV/bin/pip" wheel "$ROOT" --no-deps --no-build-isolation -w "$ROOT/.whl" \
    -Cbuild-dir="$ROOT/build-py/cuda" -Ccmake.define.PSCAN_CUDA=ON \
    -Ccmake.define.CMAKE_CUDA_ARCHITECTURES="${PSCAN_CUDA_ARCHS:-90}"
  unzip -l "$ROOT"/.whl/pscan-*.whl | grep -q "pscan/libpscan.so" || { echo "no libpscan.so in the wheel" >&2; exit 1; }
  PIP=("$VENV/bin/pip")
else
  PIP=(python3 -m pip)
  "${PIP[@]}" --version >/dev/null 2>&1 || { ensure_packages python3-pip; }
fi

# One call per Python version: cffi's wheels are per version (cp310, cp311, cp312); the others are pure Python
# (and pycparser's newest differs between versions). gpu-python.sh installs each by name with --find-links,
# so pip there takes the one wheel that fits its Python.
for v in $PYVERS; do
  say "the wheels the GPU machine lacks, for CPython $v (cffi, pycparser, dask, partd, locket)"
  "${PIP[@]}" download -q --no-deps --only-binary=:all: --python-version "$v" --implementation cp \
    --platform manylinux_2_28_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 \
    -d "$ROOT/.whl" cffi pycparser dask partd locket
done
ls -l "$ROOT/.whl"
say "done: carry .whl to the GPU machine and run scripts/gpu-python.sh there"
