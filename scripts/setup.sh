# scripts/setup.sh - what scripts/run.sh and scripts/test.sh share; sourced, not run.
# Defines ROOT, JOBS, START, say(), and ensure_packages PKG... (installs those not yet installed, as root or
# via sudo, then sets GENERATOR to Ninja when ninja is there); puts the CUDA toolkit's usual home on PATH.

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$(pwd)
JOBS=${PSCAN_JOBS:-$(nproc 2>/dev/null || echo 2)}
START=$(date +%s)

say() { printf '\n=== %s (%ds)\n' "$*" "$(( $(date +%s) - START ))"; }

GENERATOR=()
ensure_packages() {
  local missing=() p
  if command -v dpkg-query >/dev/null 2>&1; then
    for p in "$@"; do
      dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
    done
  fi
  if (( ${#missing[@]} )); then
    say "installing ${missing[*]}"
    local sudo=""
    if [[ $(id -u) -ne 0 ]]; then sudo=sudo; fi
    export DEBIAN_FRONTEND=noninteractive
    $sudo apt-get update -qq
    $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
  if command -v ninja >/dev/null 2>&1; then GENERATOR=(-G Ninja); fi
}

# The CUDA toolkit's usual home is not always on PATH in a non-login shell.
if ! command -v nvcc >/dev/null 2>&1 && [[ -x /usr/local/cuda/bin/nvcc ]]; then
  export PATH=/usr/local/cuda/bin:$PATH
fi
