#!/usr/bin/env bash
# tests/fuzz/run.sh [SECONDS] - builds the libFuzzer targets of the pscan tool's parsers with clang
# (ASan + UBSan, in build-fuzz/) and runs each for SECONDS (default 20), one after the other, from a corpus
# kept in build-fuzz/corpus/<target> (seeded with a few valid inputs). Prints one line per target: seconds,
# executions, corpus size. Exits 1 if a target crashes (the reproducer is left in build-fuzz/).
#   PSCAN_FUZZ_BUILD_DIR  build tree (default build-fuzz)    PSCAN_FUZZ_CC  compiler (default clang-14/clang)
#   PSCAN_FUZZ_TARGETS    which targets (default all five)   PSCAN_JOBS     build parallelism (default 2)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
ROOT=$(pwd)
SECS=${1:-20}
BUILD=${PSCAN_FUZZ_BUILD_DIR:-$ROOT/build-fuzz}
CC=${PSCAN_FUZZ_CC:-$(command -v clang-14 || command -v clang || true)}
TARGETS=(${PSCAN_FUZZ_TARGETS:-fuzz_number fuzz_text fuzz_csv fuzz_npy fuzz_options})
[[ -n $CC ]] || { echo "fuzz: no clang found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 1; }
GEN=(); command -v ninja >/dev/null 2>&1 && GEN=(-G Ninja)

cmake -S "$ROOT" -B "$BUILD" "${GEN[@]}" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER="$CC" \
  -DPSCAN_FUZZ=ON -DPSCAN_CUDA=OFF -DPSCAN_OPENCL=OFF -DPSCAN_TESTS=OFF >/dev/null
cmake --build "$BUILD" -j "${PSCAN_JOBS:-2}" --target "${TARGETS[@]}" >/dev/null

# Seeds: one valid input per parser, so the fuzzer starts inside the grammar. Byte 0 is the type (4 = i32,
# 8 = f32), see each target's header.
seed() { mkdir -p "$BUILD/corpus/$1"; printf "$3" >"$BUILD/corpus/$1/seed-$2"; }
seed fuzz_number a '\x04-2147483648'
seed fuzz_number b '\x08-1.17549435e-38'
seed fuzz_number c '\x060x7fffffffffffffff'
seed fuzz_text a '\x04\x023 1 7 0\n4,1,6,3 # comment\n'
seed fuzz_text b '\x09\x07 2.5e-3\n-inf nan\n0x1p3\n'
seed fuzz_csv a '\x04\x00\x01id,price\n1,3\n2,"4"\n'
seed fuzz_csv b '\x08\x02\x85pricename,price\n"a,""b",1.5\r\nc,2\n'
mkdir -p "$BUILD/corpus/fuzz_npy"
{ printf '\x93NUMPY\x01\x00\x76\x00'; printf '%-117s\n' "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"
  printf '\x01\x00\x00\x00\x02\x00\x00\x00'; } >"$BUILD/corpus/fuzz_npy/seed-a"
seed fuzz_options a '\x01price'
seed fuzz_options b '\x03-0x80'

status=0
for t in "${TARGETS[@]}"; do
  log="$BUILD/$t.log"
  if (cd "$BUILD" && "$BUILD/tests/fuzz/$t" -max_total_time="$SECS" -print_final_stats=1 -max_len=4096 \
      "$BUILD/corpus/$t" >"$log" 2>&1); then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    echo "fuzz: $t: ${SECS} s, ${execs:-?} executions, corpus $(ls "$BUILD/corpus/$t" | wc -l) inputs, no crash"
  else
    echo "fuzz: $t: FAILED (log $log, reproducer in $BUILD):"
    grep -E 'ERROR|SUMMARY|crash-|leak-|timeout-' "$log" | head -20
    status=1
  fi
done
exit "$status"
