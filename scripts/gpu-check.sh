#!/usr/bin/env bash
# gpu-check.sh - THE verification of the CUDA backend on a GPU machine: build for sm_90, the whole GPU test
# suite, compute-sanitizer over every CUDA algorithm, the benchmark with its plot, and a short summary last.
#
#   scripts/gpu-check.sh [--quick] [--only build,tests,opencl,python,sanitize,bench,patterns,multigpu] [--jobs N]
#
# Steps (all by default; --only picks some, build is implied when the build directory is missing):
#   build     cmake -G Ninja -DCMAKE_CUDA_ARCHITECTURES=90 in build-gpu (BUILD_DIR overrides), ninja -j16
#   tests     ctest -L cuda: the scan table for every CUDA algorithm, the API edges, 2^32+17 elements, and the
#             stress tests (1000 back-to-back decoupled look-back scans, 400 back-to-back sorts: fresh random data,
#             each checked), and
#             sort.cuda.codegen (scripts/check_sort_codegen.py: the sort's pass kernels' PTX against its baseline)
#   opencl    ctest -L opencl: every OpenCL test on the machine's own OpenCL driver (NVIDIA's on the GPU machine;
#             CI runs them on PoCL), skipped where the build has no OpenCL; then pscan bench --backend opencl
#             --algo all --type i32 2^16..2^28 into <gpu>-opencl-scan.csv, of copy per algorithm in the summary
#             and --algo auto for i32 and i64 into <gpu>-opencl-auto.csv, and the segmented scan, scan by key,
#             reduce by key and run-length encoding (i32, 2^16..2^28) into <gpu>-opencl-segscan.csv
#   python    scripts/gpu-python.sh --no-bench on the build's libpscan.so: tests/python's CUDA tests on torch and
#             CuPy arrays (torch.cuda.graph captures among them), each file in its own process, logs in
#             $OUT/python/; needs cffi (the image lacks it: carry .whl, `bash scripts/python-wheel.sh --deps-only`)
#   sanitize  compute-sanitizer memcheck and racecheck over test_scan --quick for every CUDA algorithm, on a
#             few type x operator pairs (the full quick table takes hours under the sanitizer), and over every
#             other primitive's quick table: one pool of 12 jobs, racecheck first (the longest tables split by
#             element type, --shard K/N); each job's time in the log
#   bench     pscan bench --backend cuda (L2 flushed before each call, median of 25): copy + CUB + every
#             algorithm for i32, copy + CUB + the default algorithm for u8, u16 and i64 sums, n = 2^10..2^30,
#             all rows in one CSV named after the GPU (h100-scan.csv, h200-scan.csv: docs/bench/ keeps them);
#             decoupled look-back spot checks at 2^28 (i32, i64, u16, u8, f32, f64): min, max, product,
#             exclusive, reverse, in place;
#             the PNG plot and the markdown table
#   patterns  pscan bench --primitive P beside CUB and copy, one CSV per primitive named <gpu>-<name>.csv:
#             reduce (i32 i64 u8), compact (select: i32 i64), split (partition: i32 i64), each by the predicate
#             (kind greater) and by u8 flags (kind flags), compact i32 unique (beside DeviceSelect::Unique),
#             expand (u32 counts averaging 1.5, 4 and 64 (to 2^26), beside the copy alone), segscan and
#             scan-by-key (forward, then reverse: no CUB peer, the direction column), reduce-by-key, rle (i32),
#             all n = 2^10..2^30; histogram (u32: uniform-256, equal-256, uniform-65536) to 2^28; sort (u32 and u64 keys to 2^30; u32 pairs,
#             and u32 keys skewed: keys-equal, keys-few, keys-low, to 2^28) and its plot <gpu>-sort.png (plot_bench.py --sort-png); the case in the kind column;
#             widen (the scan with --widen: i32, u8, f32 summed into their 64-bit type, beside CUB's scan over a
#             converting iterator).
#             GPU_CHECK_PATTERNS="sort rle" runs only those CSVs (names as in the file names; to split the step
#             over calls). The summary gives of copy and x CUB at 2^16, 2^24, 2^28 and 2^30 (sort: of copy =
#             copy time / sort time, its gbps column is Gkeys/s), then the issues' targets for what was benched
#             and the mission's "at least CUB at every n" per primitive, PASS/MISS (plot_bench.py --targets)
#   multigpu  the NCCL scan's test over every GPU (built when NCCL is found: beside the toolkit, or PyTorch's
#             nvidia-nccl wheel) and bench_nccl's scaling at 2^30 i32 per GPU into <gpu>-x<G>-nccl.csv; the
#             out-of-core scan of 16 GiB pinned host memory against a copy up and down (docs/scale-out.md)
#   primtune  (not in the default set) tools/tune/tune_sort.cu and tune_histogram.cu beside CUB's DeviceRadixSort and
#             DeviceHistogram, tune_expand.cu beside a copy, into <gpu>-sort-tune.csv, <gpu>-histogram-tune.csv and
#             <gpu>-expand-tune.csv
#   tune      (not in the default set) tools/tune/tune_scan.cu: the tile-program variants beside copy and CUB
# GPU_CHECK_TESTS_EXCLUDE: a ctest -E regex (e.g. '^large\.|hillis' when only other code changed).
# GPU_CHECK_SAN_ALGOS: the scan algorithms the sanitizers cover (default: all; --quick: decoupled-lookback).
# --quick (or GPU_CHECK_QUICK=1): the quick test table, no test labelled large (the 2^32 ones, sort.cuda.full),
# sanitizers on decoupled-lookback only, the benchmark for decoupled-lookback, copy and CUB only, 5 repeats
# (GPU_CHECK_REPS overrides: 10 / 5).
# Output: everything under $OUT when set (the device tool's folder), else build-gpu/gpu-check. The summary
# (pass/fail counts; per algorithm the fraction of copy and the ratio to CUB at 2^28 i32; the targets) is printed
# last and written to summary.txt. Exit status 0 when every test and sanitizer run passed.
set -u -o pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
BUILD=${BUILD_DIR:-$ROOT/build-gpu}
DEST=${OUT:-$BUILD/gpu-check}
QUICK=${GPU_CHECK_QUICK:-0}
ONLY=build,tests,opencl,python,sanitize,bench,patterns,multigpu
JOBS=16
while [ $# -gt 0 ]; do
    case "$1" in
    --quick) QUICK=1 ;;
    --only) ONLY=$2; shift ;;
    --jobs) JOBS=$2; shift ;;
    -h | --help) sed -n '2,20p' "$0"; exit 0 ;;
    *) echo "gpu-check: unknown argument $1" >&2; exit 2 ;;
    esac
    shift
done
want() { case ",$ONLY," in *",$1,"*) return 0 ;; *) return 1 ;; esac; }

mkdir -p "$DEST"
LOG=$DEST/gpu-check.log
: >"$LOG"
SUMMARY=$DEST/summary.txt
: >"$SUMMARY"
START=$(date +%s)
note() { echo "[gpu-check $(($(date +%s) - START))s] $*" | tee -a "$LOG"; }
say() { echo "$*" >>"$SUMMARY"; }

ALGOS="hillis-steele blelloch-unpadded blelloch scan-then-propagate reduce-then-scan decoupled-lookback"
SAN_ALGOS=$ALGOS
[ "$QUICK" = 1 ] && SAN_ALGOS=decoupled-lookback
SAN_ALGOS=${GPU_CHECK_SAN_ALGOS:-$SAN_ALGOS}
STATUS=0

# ---- environment -------------------------------------------------------------------------------------------
{
    echo "date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
    echo "cuda: $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\), V\([0-9.]*\).*/\1 (nvcc \2)/p')"
    cub_h="$(dirname "$(command -v nvcc)")/../include/cccl/cub/version.cuh"
    echo "cub: $(grep -m1 'define CUB_VERSION ' "$cub_h" 2>/dev/null | awk '{print $3}')"
    dirty=$(git -C "$ROOT" diff --quiet 2>/dev/null || echo ' + local changes')
    echo "commit: $(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo 'unknown (no .git)')$dirty"
} >"$DEST/env.txt"
tee -a "$LOG" <"$DEST/env.txt"

# The short name of the GPU (h100, h200, ...) that the CSVs are named after; "gpu" when unknown.
GPU_TAG=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1 | grep -oiE 'h100|h200|a100|b200|l40s?' |
    head -1 | tr 'A-Z' 'a-z')
GPU_TAG=${GPU_TAG:-gpu}

# ---- build -------------------------------------------------------------------------------------------------
if want build || [ ! -f "$BUILD/build.ninja" ]; then
    note "configure + build ($BUILD)"
    QUICK_TESTS=OFF
    [ "$QUICK" = 1 ] && QUICK_TESTS=ON
    # NCCL: beside the toolkit, or the nvidia-nccl wheel PyTorch brings (include/ and lib/libnccl.so.2)
    NCCL_ARGS=()
    nccl_root=${PSCAN_NCCL_ROOT:-$(python3 -c 'import nvidia.nccl, os; print(os.path.dirname(nvidia.nccl.__file__) if nvidia.nccl.__file__ else list(nvidia.nccl.__path__)[0])' 2>/dev/null)}
    [ -n "$nccl_root" ] && [ -f "$nccl_root/include/nccl.h" ] && NCCL_ARGS=(-DPSCAN_NCCL=ON -DPSCAN_NCCL_ROOT="$nccl_root")
    note "NCCL: ${nccl_root:-not found} ${NCCL_ARGS[*]}"
    if ! cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        -DPSCAN_TEST_QUICK=$QUICK_TESTS "${NCCL_ARGS[@]}" >>"$LOG" 2>&1 || ! ninja -C "$BUILD" -j"$JOBS" >>"$LOG" 2>&1; then
        note "BUILD FAILED (tail of the log follows)"
        tail -40 "$LOG"
        say "build: FAILED"
        cat "$SUMMARY"
        exit 1
    fi
    say "build: ok (sm_90, $BUILD)"
fi
PSCAN=$BUILD/tools/pscan
TEST_SCAN=$BUILD/tests/test_scan

# ---- tests -------------------------------------------------------------------------------------------------
if want tests; then
    EXCLUDE=()
    # --quick leaves out the label large: the 2^32 tests and sort.cuda.full (over 300 s alone; the session that
    # changes the sort runs it by name)
    [ "$QUICK" = 1 ] && EXCLUDE=(-LE large)
    [ -n "${GPU_CHECK_TESTS_EXCLUDE:-}" ] && EXCLUDE=(-E "$GPU_CHECK_TESTS_EXCLUDE")
    note "ctest -L cuda ${EXCLUDE[*]}"
    # a hung GPU test must not eat the device's 10-minute limit: the whole suite took about 80 s on the H100
    (cd "$BUILD" && timeout 330 ctest -L cuda "${EXCLUDE[@]}" -j6 --output-on-failure --timeout 300) \
        >"$DEST/ctest.txt" 2>&1
    rc=$?
    cat "$DEST/ctest.txt" >>"$LOG"
    grep -E "tests passed|Passed|Failed|Not Run|Skipped|\*\*\*" "$DEST/ctest.txt" | grep -v "^ *Start" | tail -20
    line=$(grep -E "tests passed" "$DEST/ctest.txt" | tail -1)
    skipped=$(grep -c "\*\*\*Skipped" "$DEST/ctest.txt")
    say "tests (ctest -L cuda): ${line:-no result} (rc $rc), $skipped skipped"
    grep -E "\*\*\*(Failed|Timeout|Exception)|Failed  " "$DEST/ctest.txt" | grep -v "^ *Start" | sed 's/^/  /' >>"$SUMMARY"
    # on the GPU machine a skipped CUDA test means the backend found no device: that is a failure here
    if [ $rc -ne 0 ] || [ "$skipped" -ne 0 ]; then STATUS=1; fi
    rm -f "$DEST/ctest.txt"
fi

# ---- OpenCL on the GPU's own driver -------------------------------------------------------------------------
if want opencl; then
    n_cl=$(cd "$BUILD" && ctest -N -L opencl 2>/dev/null | grep -c "Test *#")
    if [ "$n_cl" -eq 0 ]; then
        say "opencl: not built (no OpenCL headers or loader at configure)"
    else
        note "ctest -L opencl ($n_cl tests: the OpenCL backend on the first GPU platform, NVIDIA's here)"
        (cd "$BUILD" && timeout 330 ctest -L opencl -j4 --output-on-failure --timeout 300) >"$DEST/ctest-opencl.txt" 2>&1
        rc=$?
        cat "$DEST/ctest-opencl.txt" >>"$LOG"
        line=$(grep -E "tests passed" "$DEST/ctest-opencl.txt" | tail -1)
        skipped=$(grep -c "\*\*\*Skipped" "$DEST/ctest-opencl.txt")
        # skips are no failure here: a machine without an OpenCL driver skips the whole label
        say "opencl (ctest -L opencl): ${line:-no result} (rc $rc), $skipped skipped"
        grep -E "\*\*\*(Failed|Timeout|Exception)|Failed  " "$DEST/ctest-opencl.txt" | grep -v "^ *Start" |
            sed 's/^/  /' >>"$SUMMARY"
        [ $rc -ne 0 ] && STATUS=1
        # the look-back's tests by time: a slow look-back shows here before it hangs (fifty-third session)
        grep -E "Test +#.*decoupled-lookback" "$DEST/ctest-opencl.txt" | sed 's/^ *[0-9]*\/[0-9]* */  /' >>"$SUMMARY"
        rm -f "$DEST/ctest-opencl.txt"
        # the OpenCL scans' speed on this GPU beside clEnqueueCopyBuffer: the fifty-second session's look-back
        # lost 4.5x on NVIDIA's driver and no step measured it (AUTO's choice rests on this table too)
        csv=$DEST/$GPU_TAG-opencl-scan.csv
        note "pscan bench --backend opencl --algo all --type i32, 2^16..2^28 -> $(basename "$csv")"
        if timeout 240 "$PSCAN" bench --backend opencl --algo all --type i32 --min-log2 16 --max-log2 28 --reps 25 \
            --csv "$csv" >>"$LOG" 2>&1; then
            say "opencl bench (i32 sum, of copy at 2^20 / 2^24 / 2^28):"
            python3 - "$csv" >>"$SUMMARY" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
for algo in dict.fromkeys(r["algo"] for r in rows if r["algo"] != "copy"):
    at = {int(r["n"]): float(r["of_copy"]) for r in rows if r["algo"] == algo}
    print("  %-20s %s" % (algo, " / ".join("%.3f" % at[1 << k] if (1 << k) in at else "-" for k in (20, 24, 28))))
PY
        else
            say "opencl bench: FAILED or timed out (log)"
            STATUS=1
        fi
        # AUTO's choice (the look-back up to 128 tiles, reduce-then-scan past: opencl_backend.c) for 4- and 8-byte
        # sums, the figure a user gets
        csv=$DEST/$GPU_TAG-opencl-auto.csv
        note "pscan bench --backend opencl --algo auto --type i32 and i64, 2^16..2^28 -> $(basename "$csv")"
        rm -f "$csv"
        for ty in i32 i64; do
            if timeout 60 "$PSCAN" bench --backend opencl --algo auto --type $ty --min-log2 16 --max-log2 28 --reps 25 \
                --csv "$DEST/opencl-auto-$ty.csv" >>"$LOG" 2>&1; then
                if [ -f "$csv" ]; then tail -n +2 "$DEST/opencl-auto-$ty.csv" >>"$csv"; else cat "$DEST/opencl-auto-$ty.csv" >"$csv"; fi
                say "opencl bench, AUTO, $ty, of copy at 2^16 / 2^20 / 2^24 / 2^28: $(awk -F, '$3 == "auto" &&
                    ($8 == 65536 || $8 == 1048576 || $8 == 16777216 || $8 == 268435456) {printf "%s%.3f", s, $11; s = " / "}' \
                    "$DEST/opencl-auto-$ty.csv")"
            else
                say "opencl bench, AUTO, $ty: FAILED or timed out (log)"
                STATUS=1
            fi
            rm -f "$DEST/opencl-auto-$ty.csv"
        done
        # the primitives OpenCL runs as three passes over (flag, value) pairs (kernels/pattern_segscan.cl), i32,
        # one CSV with the primitive column; GPU_CHECK_OPENCL_PRIMS="" skips them
        csv=$DEST/$GPU_TAG-opencl-segscan.csv
        note "pscan bench --backend opencl --primitive segscan, scan_by_key, reduce_by_key, rle (i32) -> $(basename "$csv")"
        rm -f "$csv"
        for prim in ${GPU_CHECK_OPENCL_PRIMS-segscan scan_by_key reduce_by_key rle}; do
            if timeout 120 "$PSCAN" bench --backend opencl --primitive $prim --type i32 --min-log2 16 --max-log2 28 \
                --reps 25 --csv "$DEST/opencl-$prim.csv" >>"$LOG" 2>&1; then
                if [ -f "$csv" ]; then tail -n +2 "$DEST/opencl-$prim.csv" >>"$csv"; else cat "$DEST/opencl-$prim.csv" >"$csv"; fi
                say "opencl bench, $prim i32, of copy at 2^16 / 2^20 / 2^24 / 2^28: $(awk -F, '$3 != "copy" &&
                    ($8 == 65536 || $8 == 1048576 || $8 == 16777216 || $8 == 268435456) {printf "%s%.3f", s, $11; s = " / "}' \
                    "$DEST/opencl-$prim.csv")"
            else
                say "opencl bench, $prim: FAILED or timed out (log)"
                STATUS=1
            fi
            rm -f "$DEST/opencl-$prim.csv"
        done
    fi
fi

# ---- the Python package on the GPU: torch and CuPy arrays ---------------------------------------------------
if want python; then
    lib=$(ls "$BUILD"/libpscan.so.*.*.* 2>/dev/null | head -1)
    if [ -z "$lib" ]; then
        say "python: no $BUILD/libpscan.so.X.Y.Z (the build makes it): not run"
        STATUS=1
    else
        note "scripts/gpu-python.sh --no-bench on $lib"
        mkdir -p "$DEST/python"
        PSCAN_LIBRARY=$lib timeout 400 bash "$ROOT/scripts/gpu-python.sh" --no-bench "$DEST/python" \
            >"$DEST/python/gpu-python.txt" 2>&1
        rc=$?
        cat "$DEST/python/gpu-python.txt" >>"$LOG"
        # gpu-python.sh ends with a table, a line per test file: "test_cuda.py  54 passed  0 failed ..."
        line=$(grep -E "^test_[a-z_]+\.py +[0-9]+ passed" "$DEST/python/gpu-python.txt" |
            awk '{p += $2; f += $4} END {if (NR) printf "%d passed, %d failed in %d files", p, f, NR}')
        say "python (tests/python on the GPU): ${line:-no result} (rc $rc)"
        if [ $rc -ne 0 ]; then
            grep -E "gpu-python: |FAILED|failed +[1-9]" "$DEST/python/gpu-python.txt" | head -10 | sed 's/^/  /' >>"$SUMMARY"
            STATUS=1
        fi
    fi
fi

# ---- sanitizers --------------------------------------------------------------------------------------------
if want sanitize; then
    if ! command -v compute-sanitizer >/dev/null; then
        PATH=$PATH:/usr/local/cuda/bin
    fi
    note "compute-sanitizer memcheck + racecheck: $SAN_ALGOS, and every other primitive"
    SAN_DIR=$(mktemp -d)
    # One job a line, "tool program args": the scan's table for every CUDA algorithm (memcheck on a 4-byte and an
    # 8-byte case, racecheck on one; the full quick table takes hours under the sanitizer), then every other
    # primitive and the interleaved stress test (issue 8, bug 1): memcheck, and racecheck where a kernel shares
    # memory between threads in new ways. Both lists run in one pool of 12, so the step takes about its longest
    # job (until 2026-11-27 the second list waited for the first: 416 s on the H100); each job's time is logged.
    jobs_file=$SAN_DIR/jobs
    {
        for algo in $SAN_ALGOS; do
            for spec in "memcheck i32 sum" "memcheck u64 max" "racecheck i32 sum"; do
                read -r tool type op <<<"$spec"
                echo "$tool test_scan --backend cuda --algo $algo --quick --type $type --op $op"
            done
        done
        # racecheck: the even-share fold and select's parked tile. Racecheck jobs past 300 s in the pool are
        # split by element type (--shard K/N): on the H200 (2026-11-27) test_reduce and test_segscan ran past
        # the 400 s limit beside 11 other jobs, test_sort and test_select took 364 and 361 s. The pool shares
        # one GPU, so a split shortens the job, not the step (430 s either way): test_reduce in 3 shards still
        # took 400+, 396 and 303 s, test_select in 2 354 and 278 s, test_segscan in 3 and test_sort in 2 under
        # 330 s; hence 5 and 3. On 2026-11-29 (twenty-sixth session) the five test_reduce shards and test_histogram
        # ran past 400 s (the reduce's table had grown by six sizes): racecheck now takes the reduce's sum and min
        # only (their folds are every shared-memory path: the lane-order fold of commutative operators and the
        # element-order one of float min), memcheck the whole table, and test_histogram splits in 3. On 2026-12-02
        # (forty-seventh session) test_sort's shard 0 of 2 ran past 400 s (its passes had become dependent
        # launches): 3 shards now; and expand's deferred pass, a dependent launch since, takes racecheck too (its
        # quick table alone: 41 s, clean). On the forty-eighth's run shard 2 of those 3 ran past 400 s (0 and 1
        # clean in 373 and 329 s): 4 shards. On the forty-ninth's (31 jobs, all clean, the step 503 s) the last
        # jobs to start ended at 392 s (test_sort shard 2 of 4) and 394 s (test_select shard 1 of 3): jobs that
        # start late share the GPU with fewer others but still run to the step's end, so the limit is now 480 s
        # (a hang still ends; the step's length is set by the pool's total work, not by the limit).
        shards() { # shards PROGRAM N ARGS...: N racecheck jobs, one a shard
            local prog=$1 n=$2 k
            shift 2
            for ((k = 0; k < n; k++)); do echo "racecheck $prog $* --shard $k/$n"; done
        }
        echo "memcheck test_reduce --backend cuda --algo decoupled-lookback --quick"
        echo "memcheck test_select --backend cuda --algo decoupled-lookback --quick"
        shards test_reduce 3 --backend cuda --algo decoupled-lookback --quick --op sum
        shards test_reduce 2 --backend cuda --algo decoupled-lookback --quick --op min
        shards test_select 3 --backend cuda --algo decoupled-lookback --quick
        echo "memcheck test_cuda_stress --backend cuda --algo mixed --iters 60"
        for prog in test_sort test_histogram test_userop test_segscan test_expand test_widen; do
            [ -x "$BUILD/tests/$prog" ] || continue
            echo "memcheck $prog --backend cuda --quick"
            case $prog in
            test_sort) shards $prog 4 --backend cuda --quick ;;
            test_segscan) shards $prog 3 --backend cuda --quick ;;
            test_histogram) shards $prog 3 --backend cuda --quick ;;
            test_expand) echo "racecheck $prog --backend cuda --quick" ;; # no --shard option
            esac
        done
    } >"$jobs_file"
    run_job() {
        local dir=$1 n=$2 tool=$3 prog=$4 t0=$SECONDS
        shift 4
        timeout 480 compute-sanitizer --tool "$tool" --error-exitcode 99 --print-limit 20 "$BUILD/tests/$prog" "$@" \
            >"$dir/job.$n.log" 2>&1
        echo "$? $((SECONDS - t0)) $n $tool $prog $*" >>"$dir/results"
    }
    export -f run_job
    export BUILD
    # the slowest first, so that the pool's last minutes are not one long job alone
    grep -n . "$jobs_file" | sed 's/:/ /' | sort -k2,2r -s | xargs -P 12 -L 1 bash -c 'run_job "'"$SAN_DIR"'" "$@"' _
    pass=0
    fail=0
    while read -r rc secs n tool prog args; do
        if [ "$rc" = 0 ]; then
            pass=$((pass + 1))
        else
            fail=$((fail + 1))
            say "  sanitizer FAIL (rc $rc): $tool $prog $args"
            echo "---- $tool $prog $args (rc $rc)" >>"$LOG"
            tail -30 "$SAN_DIR/job.$n.log" >>"$LOG"
        fi
        echo "---- ${secs} s, $tool $prog $args: $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|passed' "$SAN_DIR/job.$n.log" | tail -2 | tr '\n' ' ')" >>"$LOG"
    done <"$SAN_DIR/results"
    note "sanitizers: $pass clean, $fail failed; the slowest: $(sort -k2,2nr "$SAN_DIR/results" | head -3 | awk '{printf "%s s %s %s; ", $2, $4, $5}')"
    say "sanitizers (memcheck+racecheck over test_scan --quick; $SAN_ALGOS; and every other primitive): $pass clean, $fail failed"
    [ $fail -ne 0 ] && STATUS=1
    rm -rf "$SAN_DIR"
fi

# ---- benchmark ---------------------------------------------------------------------------------------------
if want bench; then
    REPS=${GPU_CHECK_REPS:-25}
    ALGO_ARG=(--algo all)
    if [ "$QUICK" = 1 ]; then
        REPS=${GPU_CHECK_REPS:-5}
        ALGO_ARG=(--algo decoupled-lookback)
    fi
    BENCH_CSV=$DEST/$GPU_TAG-scan.csv
    BENCH_TMP=$(mktemp -d)
    for t in i32 u8 u16 i64; do
        algo=(--algo decoupled-lookback)
        [ "$t" = i32 ] && algo=("${ALGO_ARG[@]}")
        note "bench $t sum, 2^10..2^30 (${algo[*]})"
        timeout 150 "$PSCAN" bench --backend cuda --type "$t" --op sum "${algo[@]}" --min-log2 10 --max-log2 30 \
            --reps $REPS --csv "$BENCH_TMP/bench_$t.csv" >>"$LOG" 2>&1 || { note "bench $t FAILED"; STATUS=1; }
    done
    head -1 "$BENCH_TMP/bench_i32.csv" >"$BENCH_CSV"
    for t in i32 u8 u16 i64; do tail -n +2 "$BENCH_TMP/bench_$t.csv" >>"$BENCH_CSV"; done
    SPOT=$DEST/bench_spot.csv
    echo "spot,backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us" >"$SPOT"
    INPLACE=
    "$PSCAN" bench --help 2>/dev/null | grep -q -- --in-place && INPLACE=1
    # every element size: the operators' kernels differ in registers by size (2-byte min and max spilled at the
    # 52 KiB tiles, 0.50 of copy against 0.93 for the sum: sixteenth session; f32 sums spilled 56 bytes with held
    # vectors, 0.852 of copy, and floats hold none since: eighteenth)
    for t in i32 i64 u16 u8 f32 f64; do
        for spec in "sum:--op sum" "min:--op min" "max:--op max" "product:--op product" \
            "exclusive:--op sum --exclusive" "reverse:--op sum --reverse" \
            "excl-reverse:--op sum --exclusive --reverse" ${INPLACE:+"in-place:--op sum --in-place"}; do
            name=${spec%%:*}
            note "bench spot $t $name at 2^28"
            # shellcheck disable=SC2086
            timeout 30 "$PSCAN" bench --backend cuda --type "$t" ${spec#*:} --algo decoupled-lookback --min-log2 28 \
                --max-log2 28 --reps $REPS --csv "$DEST/spot.tmp" >>"$LOG" 2>&1 &&
                tail -n +2 "$DEST/spot.tmp" | sed "s/^/$name,/" >>"$SPOT"
        done
    done
    rm -f "$DEST/spot.tmp"
    [ -z "$INPLACE" ] && say "bench: pscan bench has no --in-place here; in-place spot check not run"
    python3 "$ROOT/scripts/plot_bench.py" --png "$DEST/performance.png" --markdown "$DEST/bench_table.md" \
        "$BENCH_TMP/bench_i32.csv" "$BENCH_TMP/bench_i64.csv" >>"$LOG" 2>&1 || note "plot failed (see log)"
    python3 "$ROOT/scripts/plot_bench.py" --summary --spot "$SPOT" "$BENCH_TMP/bench_i32.csv" "$BENCH_TMP/bench_i64.csv" \
        >>"$SUMMARY" 2>>"$LOG" || say "bench summary failed (see gpu-check.log)"
    # fraction of copy and ratio to CUB of the default algorithm, every type, from the one CSV
    awk -F, 'NR > 1 { key = $4 "," $8 } NR > 1 && $3 == "decoupled-lookback" { f[key] = $11; c[key] = $12 }
        END { for (k in f) { split(k, a, ","); if (a[2] >= 65536) printf "  %s n=%s: %.3f of copy, %.2fx CUB\n", a[1], a[2], f[k], c[k] } }' \
        "$BENCH_CSV" | sort -t= -k1,1 -k2n >>"$SUMMARY"
    rm -rf "$BENCH_TMP"
fi

# ---- the other primitives beside their CUB peers ------------------------------------------------------------
if want patterns; then
    REPS=${GPU_CHECK_REPS:-25}
    [ "$QUICK" = 1 ] && REPS=${GPU_CHECK_REPS:-5}
    PAT_TMP=$(mktemp -d)
    # name:primitive:type[:case[:max-log2]]: the rows of <gpu>-<name>.csv, in order (no case: the primitive's
    # default; compact and split: greater, the predicate, then flags, the case issue 10's targets name; reverse:
    # the segmented scans' reverse direction)
    PAT_SPECS="reduce:reduce:i32 reduce:reduce:i64 reduce:reduce:u8 compact:select:i32 compact:select:i64
        compact:select:i32:flags compact:select:i64:flags compact:select:i32:unique split:partition:i32
        split:partition:i64
        split:partition:i32:flags split:partition:i64:flags expand:expand:u32:counts-0-3 expand:expand:u32:avg-4
        expand:expand:u32:avg-64:26 segscan:segscan:i32 segscan:segscan:i32:reverse scan-by-key:scan_by_key:i32
        scan-by-key:scan_by_key:i32:reverse
        reduce-by-key:reduce_by_key:i32 rle:rle:i32 histogram:histogram:u32:uniform-256:28
        histogram:histogram:u32:equal-256:28 histogram:histogram:u32:uniform-65536:28 sort:sort:u32:keys:30
        sort:sort:u64:keys:30 sort:sort:u32:pairs:28 sort:sort:u32:keys-equal:28 sort:sort:u32:keys-few:28
        sort:sort:u32:keys-low:28 widen:scan:i32 widen:scan:u8 widen:scan:f32"
    PAT_NAMES=${GPU_CHECK_PATTERNS:-reduce compact split expand segscan scan-by-key reduce-by-key rle histogram sort widen}
    PAT_CSVS=()
    for spec in $PAT_SPECS; do
        IFS=: read -r name prim t case max <<<"$spec"
        case " $PAT_NAMES " in *" $name "*) ;; *) continue ;; esac
        csv=$DEST/$GPU_TAG-$name.csv
        args=(--primitive "$prim" --type "$t")
        # "reverse" is the segmented scans' direction, not a case: their reverse tiles take the general path
        # (no CUB peer: the targets judge the forward rows)
        if [ "$case" = reverse ]; then args+=(--reverse); elif [ -n "$case" ]; then args+=(--case "$case"); fi
        [ "$name" = widen ] && args+=(--widen) # PSCAN_SCAN_WIDEN: the sum into the 64-bit type, beside CUB's
        note "bench ${args[*]}, 2^10..2^${max:-30} -> $(basename "$csv")"
        # 120 s is ample for the longest row too, sort u64 keys to 2^30: at 2^30 about 68 ms a sort (4x the 2^28
        # time), 27 timed copies + 28 pscan + 27 CUB calls (25 reps) ~ 4 s, every size below half that, so ~8 s
        # on the GPU, plus filling and uploading 2^31 keys in all (~5-10 s)
        timeout 120 "$PSCAN" bench --backend cuda "${args[@]}" --min-log2 10 --max-log2 "${max:-30}" \
            --reps $REPS --csv "$PAT_TMP/p.csv" >>"$LOG" 2>&1 || { note "bench ${args[*]} FAILED"; STATUS=1; }
        [ -s "$PAT_TMP/p.csv" ] || continue
        case " ${PAT_CSVS[*]:-} " in
        *" $csv "*) ;;
        *) head -1 "$PAT_TMP/p.csv" >"$csv"; PAT_CSVS+=("$csv") ;;
        esac
        tail -n +2 "$PAT_TMP/p.csv" >>"$csv"
        rm -f "$PAT_TMP/p.csv"
    done
    sort_csv=$DEST/$GPU_TAG-sort.csv
    case " ${PAT_CSVS[*]:-} " in
    *" $sort_csv "*)
        python3 "$ROOT/scripts/plot_bench.py" --sort-png "$DEST/$GPU_TAG-sort.png" "$sort_csv" >>"$LOG" 2>&1 ||
            note "no $GPU_TAG-sort.png (matplotlib missing? see log)" ;;
    esac
    say "primitives beside CUB (pscan's default algorithm; GB/s counts the bytes each must move; sort: keys):"
    [ ${#PAT_CSVS[@]} -gt 0 ] && awk -F, 'FNR > 1 && $3 == "decoupled-lookback" && ($8 == 65536 || $8 == 16777216 || $8 == 268435456 || $8 == 1073741824) {
        printf "  %-13s %-3s %-17s n=2^%d: %.3f of copy, %s (spread %.3f)\n", $16, $4, $6 ($7 == "reverse" ? " rev" : ""),
            log($8) / log(2) + 0.5, $11, ($12 > 0 ? sprintf("%.2fx CUB", $12) : "no CUB peer"), $15 }' \
        "${PAT_CSVS[@]}" >>"$SUMMARY"
    # the issues' speed targets for the primitives benched in this call, PASS/MISS (plot_bench.py: no matplotlib)
    [ ${#PAT_CSVS[@]} -gt 0 ] && python3 "$ROOT/scripts/plot_bench.py" --targets "${PAT_CSVS[@]}" >>"$SUMMARY" 2>>"$LOG"
    rm -rf "$PAT_TMP"
fi

# ---- several GPUs and host memory (issue 15; in the default set) ----------------------------------------------
# test_nccl_scan over every GPU (1 GPU still runs the whole path), bench_nccl's scaling at 2^30 i32 per GPU, and
# the out-of-core scan of 16 GiB of pinned host memory against a copy up and down of the same bytes.
if want multigpu; then
    export NCCL_NVLS_ENABLE=0 # NVLink multicast can put the host's shared GPUs out of service (device KINDS.md)
    gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    if [ -x "$BUILD/tests/test_nccl_scan" ]; then
        note "test_nccl_scan on $gpus GPU(s) (unless the tests step ran it as ctest nccl.cuda), bench_nccl"
        if ! want tests; then
            timeout 300 "$BUILD/tests/test_nccl_scan" >"$DEST/nccl-test.txt" 2>&1
            rc=$?
            say "nccl test ($gpus GPUs): $(tail -1 "$DEST/nccl-test.txt") (rc $rc)"
            [ $rc -ne 0 ] && { STATUS=1; grep FAIL "$DEST/nccl-test.txt" | head -5 >>"$SUMMARY"; }
        fi
        timeout 200 "$BUILD/tools/bench_nccl" --log2 30 --reps 20 --csv "$DEST/$GPU_TAG-x$gpus-nccl.csv" \
            >"$DEST/nccl-bench.txt" 2>&1 || STATUS=1
        sed 's/^/  /' "$DEST/nccl-bench.txt" >>"$SUMMARY"
    else
        say "nccl: not built (NCCL not found at configure)"
    fi
    note "test_scan_host --bench 16 GiB pinned"
    timeout 200 "$BUILD/tests/test_scan_host" --backend cuda --bench 17179869184 >"$DEST/host-bench.txt" 2>&1 || STATUS=1
    say "out of core: $(grep -E 'bench|FAIL' "$DEST/host-bench.txt" | head -3)"
fi

# ---- sort and histogram beside CUB, expand beside copy (only when asked: --only primtune) ------------------------
if want primtune; then
    NVCC_TUNE=(nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -I"$ROOT/src/cuda" -I"$ROOT/src/core" -I"$ROOT/include")
    note "tools/tune/tune_sort.cu, tune_histogram.cu and tune_expand.cu: build (in parallel) and run"
    "${NVCC_TUNE[@]}" -o "$BUILD/tune_sort" "$ROOT/tools/tune/tune_sort.cu" >>"$LOG" 2>&1 &
    p1=$!
    "${NVCC_TUNE[@]}" -o "$BUILD/tune_histogram" "$ROOT/tools/tune/tune_histogram.cu" >>"$LOG" 2>&1 &
    p2=$!
    "${NVCC_TUNE[@]}" -o "$BUILD/tune_expand" "$ROOT/tools/tune/tune_expand.cu" >>"$LOG" 2>&1 &
    p3=$!
    wait $p1 && timeout 200 "$BUILD/tune_sort" --min-log2 12 --max-log2 28 --step 4 --reps 20 \
        >"$DEST/$GPU_TAG-sort-tune.csv" 2>>"$LOG" || { say "tune_sort: FAILED (see log)"; STATUS=1; }
    wait $p2 && timeout 120 "$BUILD/tune_histogram" --log2 28 --reps 20 \
        >"$DEST/$GPU_TAG-histogram-tune.csv" 2>>"$LOG" || { say "tune_histogram: FAILED (see log)"; STATUS=1; }
    wait $p3 && timeout 120 "$BUILD/tune_expand" --min-log2 16 --max-log2 26 --reps 20 \
        >"$DEST/$GPU_TAG-expand-tune.csv" 2>>"$LOG" || { say "tune_expand: FAILED (see log)"; STATUS=1; }
    for f in "$DEST/$GPU_TAG-sort-tune.csv" "$DEST/$GPU_TAG-histogram-tune.csv" "$DEST/$GPU_TAG-expand-tune.csv"; do
        [ -s "$f" ] && { say "$(basename "$f"):"; sed 's/^/  /' "$f" >>"$SUMMARY"; }
    done
fi

# ---- tune (only when asked: --only tune) ----------------------------------------------------------------------
if want tune; then
    note "tools/tune/tune_scan.cu: build and run"
    if nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -I"$ROOT/src/cuda" -I"$ROOT/src/core" \
        -I"$ROOT/include" -o "$BUILD/tune_scan" "$ROOT/tools/tune/tune_scan.cu" >>"$LOG" 2>&1; then
        timeout 400 "$BUILD/tune_scan" --max-log2 30 --reps 21 >"$DEST/tune.csv" 2>>"$LOG" || STATUS=1
        say "tune: $(grep -vc '^#' "$DEST/tune.csv") rows in tune.csv"
    else
        say "tune: build FAILED"
        STATUS=1
    fi
fi

note "done in $(($(date +%s) - START)) s; files in $DEST"
echo
echo "==== gpu-check summary ($(head -2 "$DEST/env.txt" | tail -1)) ===="
cat "$SUMMARY"
exit $STATUS
