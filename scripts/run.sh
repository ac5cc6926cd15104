#!/usr/bin/env bash
# scripts/run.sh - the main job of the README: `bash scripts/run.sh`.
#
# On a fresh Debian machine (as root, apt reachable) it installs what the build needs, builds pscan (Release;
# the CUDA backend too when nvcc is present, OpenCL when its headers and loader are), then runs
#   pscan info                                        the backends compiled in and the devices found
#   pscan bench --backend auto --type i32|f32 ...     every algorithm of the chosen backend against a copy
# The sizes run to 2^26 elements on the CPU (about a minute in all on 2 cores, build included) and to 2^28
# on a GPU. The tables are also written as CSV to out/bench-<backend>-<type>.csv.
# Environment: PSCAN_RUN_BUILD_DIR (default build-run), PSCAN_JOBS (default: all cores),
# PSCAN_RUN_MAX_LOG2 (largest size, 2^K elements), PSCAN_RUN_OPENCL=1 (also install PoCL, an OpenCL CPU device).
set -euo pipefail

source "$(dirname "${BASH_SOURCE[0]}")/setup.sh"
BUILD=${PSCAN_RUN_BUILD_DIR:-$ROOT/build-run}

# ---- what the build needs ---------------------------------------------------------------------------
PACKAGES=(build-essential cmake ninja-build pkg-config)
if [[ ${PSCAN_RUN_OPENCL:-0} == 1 ]]; then PACKAGES+=(pocl-opencl-icd ocl-icd-opencl-dev opencl-headers); fi
ensure_packages "${PACKAGES[@]}"

# ---- build -----------------------------------------------------------------------------------------------
say "configure ($BUILD)"
cmake -S "$ROOT" -B "$BUILD" "${GENERATOR[@]}" -DCMAKE_BUILD_TYPE=Release -DPSCAN_TESTS=OFF
say "build the pscan tool (-j$JOBS)"
cmake --build "$BUILD" -j "$JOBS" --target pscan-cli
PSCAN=$BUILD/tools/pscan

# ---- run -------------------------------------------------------------------------------------------------
say "pscan info"
"$PSCAN" info

# The backend AUTO picks decides the default size range: a GPU gets larger sizes.
backend=$("$PSCAN" info | awk '$1 == "auto" { print $3 }' | tr -d ':')
max_log2=${PSCAN_RUN_MAX_LOG2:-$([[ $backend == cpu || -z $backend ]] && echo 26 || echo 28)}
mkdir -p "$ROOT/out"
for type in i32 f32; do
  say "pscan bench --backend auto --type $type --min-log2 10 --max-log2 $max_log2"
  "$PSCAN" bench --backend auto --type "$type" --min-log2 10 --max-log2 "$max_log2" \
    --csv "$ROOT/out/bench-${backend:-auto}-$type.csv"
done
say "done in $(( $(date +%s) - START )) s; CSV in out/"
