#!/usr/bin/env bash
# tools/tune/variants.sh - compiles one tuning harness several times with different -D knobs (in parallel, on
# the GPU machine's cores) and runs each build in turn, so one device call compares every variant on the same
# GPU. Each CSV row of a variant's output is prefixed with the variant's name; comment lines pass through as
# they are for the first variant, with "# NAME: " before them for the others.
#
#   tools/tune/variants.sh tools/tune/tune_sort.cu OUT.csv "base=" "s32=-DPS_SORT_STATUS32=1" ... -- [harness args]
#
# A variant is NAME=FLAGS (FLAGS: space-separated -D options, may be empty). Builds go to ${TUNE_BUILD:-/tmp/tune}.
# TUNE_STAGE=build compiles only (to overlap with another build); TUNE_STAGE=run runs what an earlier build made.
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
SRC=$1 OUT=$2
shift 2
variants=()
while [ $# -gt 0 ] && [ "$1" != -- ]; do variants+=("$1"); shift; done
[ "${1:-}" = -- ] && shift
BUILD=${TUNE_BUILD:-/tmp/tune}
mkdir -p "$BUILD"
NVCC=(nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -I"$ROOT/src/cuda" -I"$ROOT/src/core" -I"$ROOT/include")
STAGE=${TUNE_STAGE:-all}
pids=()
for v in "${variants[@]}"; do
    [ "$STAGE" = run ] && { true & pids+=($!); continue; }
    name=${v%%=*} flags=${v#*=}
    # shellcheck disable=SC2086 # flags are words
    "${NVCC[@]}" $flags -o "$BUILD/$name" "$SRC" >"$BUILD/$name.log" 2>&1 &
    pids+=($!)
done
if [ "$STAGE" = build ]; then
    for i in "${!variants[@]}"; do wait "${pids[$i]}" || { echo "variant ${variants[$i]%%=*}: build FAILED" >&2; exit 1; }; done
    exit 0
fi
status=0 header=0
: >"$OUT"
for i in "${!variants[@]}"; do
    name=${variants[$i]%%=*}
    if ! wait "${pids[$i]}"; then
        echo "# variant $name: build FAILED: $(head -c 600 "$BUILD/$name.log")" | tee -a "$OUT" >&2
        status=1
        continue
    fi
    echo "variants.sh: running $name (${variants[$i]#*=})" >&2
    timeout "${TUNE_TIMEOUT:-120}" "$BUILD/$name" "$@" >"$BUILD/$name.csv" 2>"$BUILD/$name.err" || {
        echo "# variant $name: run FAILED: $(tail -c 400 "$BUILD/$name.err")" | tee -a "$OUT" >&2
        status=1
    }
    while IFS= read -r line; do
        case $line in
        '#'*) if [ $header -lt 1 ]; then echo "$line"; else echo "# $name: ${line#\# }"; fi >>"$OUT" ;;
        keys,* | *,n,*) [ $header -lt 1 ] && echo "variant,$line" >>"$OUT" ;;
        *) echo "$name,$line" >>"$OUT" ;;
        esac
    done <"$BUILD/$name.csv"
    header=1
done
exit $status
