#!/usr/bin/env bash
# scripts/opencl-ab.sh - OpenCL look-back variants side by side on one machine's OpenCL driver (NVIDIA's on the GPU
# machine): one CPU + OpenCL build per variant (no CUDA: 10-15 s each on 16 cores, all at once), then `pscan bench
# --backend opencl --algo decoupled-lookback` for i32 and i64 at 2^16..2^28, the variants interleaved, two rounds,
# and a table of the fraction of copy at each size; then, for the first variant, the look-back's tests with each
# case's output and a time stamp per line (a hang names its case).
#
#   bash scripts/opencl-ab.sh NAME=KERNEL[@WINDOW[@ITEMS[@ITEMS8[@OPTIONS]]]] ...  (repository root; OUT: where files go)
#
# KERNEL: a file to build in place of src/opencl/kernels/5_decoupled_lookback.cl ("-": the tree's own), or a folder
# whose .cl files replace the kernels of the same names; WINDOW:
# the backend's default look-back window for that build (PS_CL_DEFAULT_LOOKBACK_WINDOW; "" or left out: the
# tree's); ITEMS: items per work-item of the scan kernels for 4-byte types (PS_CL_ITEMS, where local memory allows;
# 8-byte types get half, at most ITEMS8 (PS_CL_ITEMS8); the patterns' programs have their own, PS_CL_PATTERN_ITEMS);
# OPTIONS: more build options for every program (PS_CL_BUILD_OPTIONS), e.g. -cl-nv-maxrregcount=64.
# Make the kernel files beforehand (`git show REF:src/opencl/kernels/5_decoupled_lookback.cl > build-ab/x.cl`)
# and carry their folder: the GPU machine's copy of the tree has no .git.
# Env: OCL_AB_TYPES (default "i32 i64"), OCL_AB_ALGOS (the algorithms benched for every variant, interleaved:
# default decoupled-lookback; auto and reduce-then-scan also fit; PRIMITIVE_ALGO, e.g. reduce_auto, benches
# `--primitive PRIMITIVE --algo ALGO`), OCL_AB_MIN_LOG2 (16), OCL_AB_MAX_LOG2 (28), OCL_AB_TEST_TIMEOUT (seconds for the tests, 200;
# 0 skips them), OCL_AB_REFERENCE_ALGO (reduce-then-scan: benched once with the first variant's build; "" skips). Writes $OUT/opencl-ab.tgz (every CSV and log); the table goes to stdout.
set -u -o pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
DEST=${OUT:-$ROOT/out}
mkdir -p "$DEST"
TYPES=${OCL_AB_TYPES:-i32 i64}
ALGOS=${OCL_AB_ALGOS:-decoupled-lookback}
MAXLOG=${OCL_AB_MAX_LOG2:-28}
MINLOG=${OCL_AB_MIN_LOG2:-16}
TEST_TIMEOUT=${OCL_AB_TEST_TIMEOUT:-200}
REF_ALGO=${OCL_AB_REFERENCE_ALGO-reduce-then-scan}
KERNEL=src/opencl/kernels/5_decoupled_lookback.cl
T0=$(date +%s)
[ $# -gt 0 ] || { sed -n '2,16p' "$0"; exit 2; }

build() { # name kernel window items items8 options
    local tree=/tmp/ocl-ab-$1/src build=/tmp/ocl-ab-$1/build
    mkdir -p "$tree" && (cd "$ROOT" && tar --exclude='./build*' --exclude='./out' --exclude='./.git' -cf - .) | tar -xf - -C "$tree"
    if [ -d "$ROOT/$2" ]; then # a folder of kernel files, each in place of the tree's file of that name
        cp "$ROOT/$2"/*.cl "$tree/src/opencl/kernels/" || return 1
    elif [ "$2" != - ]; then
        cp "$ROOT/$2" "$tree/$KERNEL" || return 1
    fi
    if [ -n "$3" ]; then
        sed -i "s/^#define PS_CL_DEFAULT_LOOKBACK_WINDOW [0-9]*$/#define PS_CL_DEFAULT_LOOKBACK_WINDOW $3/" \
            "$tree/src/opencl/opencl_backend.c"
        grep -q "^#define PS_CL_DEFAULT_LOOKBACK_WINDOW $3$" "$tree/src/opencl/opencl_backend.c" || return 1
    fi
    if [ -n "$4" ]; then
        sed -i "s/^#define PS_CL_ITEMS [0-9]*u$/#define PS_CL_ITEMS ${4}u/" "$tree/src/opencl/opencl_backend.c"
        grep -q "^#define PS_CL_ITEMS ${4}u$" "$tree/src/opencl/opencl_backend.c" || return 1
    fi
    if [ -n "$5" ]; then
        sed -i "s/^#define PS_CL_ITEMS8 [0-9]*u$/#define PS_CL_ITEMS8 ${5}u/" "$tree/src/opencl/opencl_backend.c"
        grep -q "^#define PS_CL_ITEMS8 ${5}u$" "$tree/src/opencl/opencl_backend.c" || return 1
    fi
    if [ -n "$6" ]; then
        sed -i "s|^#define PS_CL_BUILD_OPTIONS \"\"$|#define PS_CL_BUILD_OPTIONS \"$6\"|" "$tree/src/opencl/opencl_backend.c"
        grep -qF "#define PS_CL_BUILD_OPTIONS \"$6\"" "$tree/src/opencl/opencl_backend.c" || return 1
    fi
    cmake -S "$tree" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPSCAN_CUDA=OFF -DPSCAN_MPI=OFF \
        >"$DEST/build-$1.log" 2>&1 && ninja -C "$build" -j4 >>"$DEST/build-$1.log" 2>&1
}

NAMES=()
for spec in "$@"; do
    name=${spec%%=*} rest=${spec#*=}
    IFS=@ read -r kernel window items items8 options <<<"$rest"
    NAMES+=("$name")
    build "$name" "$kernel" "${window:-}" "${items:-}" "${items8:-}" "${options:-}" &
done
wait
for name in "${NAMES[@]}"; do
    [ -x "/tmp/ocl-ab-$name/build/tools/pscan" ] || { echo "opencl-ab: build of $name failed (build-$name.log)"; exit 1; }
done
echo "opencl-ab: ${#NAMES[@]} builds in $(($(date +%s) - T0)) s"

for round in 1 2; do
    for algo in $ALGOS; do
        for ty in $TYPES; do
            for name in "${NAMES[@]}"; do
                prim=scan a=$algo
                case $algo in *_*) prim=${algo%%_*} a=${algo#*_} ;; esac
                "/tmp/ocl-ab-$name/build/tools/pscan" bench --primitive "$prim" --backend opencl --algo "$a" --type "$ty" \
                    --min-log2 "$MINLOG" --max-log2 "$MAXLOG" --reps 25 --csv "$DEST/$name-$algo-$ty-r$round.csv" \
                    >"$DEST/$name-$algo-$ty-r$round.txt" 2>&1 || echo "opencl-ab: bench $name $algo $ty failed"
            done
        done
    done
    echo "opencl-ab: round $round at $(($(date +%s) - T0)) s"
done
python3 - "$DEST" "$TYPES" "$ALGOS" "${NAMES[@]}" <<'PY'
import csv, os, sys
dest, types, algos, names = sys.argv[1], sys.argv[2].split(), sys.argv[3].split(), sys.argv[4:]
def of_copy(path):
    if not os.path.exists(path):
        return {}
    return {int(r["n"]): float(r["of_copy"]) for r in csv.DictReader(open(path)) if r["algo"] != "copy"}
for algo in algos:
  for ty in types:
    runs = {(nm, r): of_copy(f"{dest}/{nm}-{algo}-{ty}-r{r}.csv") for nm in names for r in (1, 2)}
    sizes = sorted({n for v in runs.values() for n in v})
    print(f"\nfraction of copy, {algo}, {ty} sum (round 1 / round 2)")
    print("n".ljust(6) + "".join(nm.rjust(16) for nm in names))
    for n in sizes:
        cells = ["/".join("%.3f" % runs[(nm, r)][n] if n in runs[(nm, r)] else "-" for r in (1, 2)) for nm in names]
        print(("2^%d" % (n.bit_length() - 1)).ljust(6) + "".join(c.rjust(16) for c in cells))
PY

# the first variant's other algorithm beside it, once (AUTO's choice on this GPU: docs/opencl.md)
if [ -n "$REF_ALGO" ]; then
    for ty in $TYPES; do
        "/tmp/ocl-ab-${NAMES[0]}/build/tools/pscan" bench --backend opencl --algo "$REF_ALGO" --type "$ty" \
            --min-log2 "$MINLOG" --max-log2 "$MAXLOG" --reps 25 --csv "$DEST/ref-$REF_ALGO-$ty.csv" \
            >"$DEST/ref-$REF_ALGO-$ty.txt" 2>&1 || echo "opencl-ab: bench $REF_ALGO $ty failed"
        echo "opencl-ab: $REF_ALGO, $ty, of copy:" $(grep "$REF_ALGO" "$DEST/ref-$REF_ALGO-$ty.txt" |
            awk '{printf "%s=%s ", $4, $7}')
    done
fi

if [ "$TEST_TIMEOUT" -gt 0 ]; then
    first=/tmp/ocl-ab-${NAMES[0]}/build/tests
    for t in "test_scan --backend opencl --algo decoupled-lookback" test_opencl_fallback; do
        log=$DEST/tests-${NAMES[0]}-${t%% *}.log
        (cd "$first" && timeout "$TEST_TIMEOUT" stdbuf -oL ./$t 2>&1 | while IFS= read -r line; do
            echo "$(($(date +%s) - T0)) $line"
        done) >"$log"
        echo "opencl-ab: ${NAMES[0]}: $t: $(tail -1 "$log")"
    done
fi
(cd "$DEST" && tar czf opencl-ab.tgz ./*.csv ./*.txt ./*.log && rm -f ./*.csv ./*.txt ./*.log)
echo "opencl-ab: done in $(($(date +%s) - T0)) s"
