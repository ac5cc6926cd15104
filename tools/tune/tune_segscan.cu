/*
 * tune_segscan.cu - the tuning harness of the segmented scan by head flags and of run-length encoding: pscan's
 * tile programs (src/cuda/segmented_scan.cu, src/cuda/reduce_by_key.cu, included as source) timed beside a
 * device copy of the same input bytes and CUB's peer in one run, each result checked against CUB's first. The
 * programs' knobs are -D macros (PS_SEGSCAN_*, PS_RBK_*, see the two files); tools/tune/variants.sh builds this
 * file once per set of knobs and runs every build on the same GPU. Not part of the library.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc/core -Iinclude \
 *        [-DPS_SEGSCAN_VEC_LOADS=1 ...] -o tune_segscan tools/tune/tune_segscan.cu
 *   tune_segscan [--min-log2 20] [--max-log2 28] [--step 4] [--reps 20] [--prims segscan,rle] [--n N,N,...]
 * (--n: these sizes instead of the powers of two, e.g. around a tile's end, each result still checked)
 *
 * The problems are those of `pscan bench --backend cuda` (tools/cmd_bench.c):
 *   segscan  i32 values (sum), u8 head flags, a segment starting at each item with probability 1/1000 (and at 0).
 *            CUB: DeviceScan::InclusiveSumByKey with u8 keys = heads so far mod 256 (built outside the timing),
 *            which read as many bytes as the flags. Copy: the 5n input bytes; traffic 5n read + 4n written.
 *   sbk      scan by key (`--prims sbk`, not in the default set): the same values and segments, described by u32
 *            keys (the segment's number), as `pscan bench --primitive scan_by_key`; CUB: InclusiveSumByKey on the
 *            same keys. Copy: the 8n input bytes; traffic 8n read + 4n written.
 *   rle      i32 elements in runs of 8 on average; unique elements and u64 lengths out. CUB:
 *            DeviceRunLengthEncode::Encode (u64 lengths, i64 count). Copy: the 4n input bytes; traffic 4n read +
 *            12 bytes per run + 8 written.
 * Run-length encoding runs in the tier the library picks for n (reduce_by_key.cu's RLE_SMALL_*): its rows read
 * "pscan-small" in the small one, "pscan" in the large one.
 * One CSV row per (prim, impl, n): time, of_copy (traffic / time against the copy's 2 x input bytes / time), x CUB
 * (CUB's time / this one's), spread, check. Method as tune_common.cuh: 2x L2 written before each timed call, CUDA
 * events around the call alone, the median of reps after two warm-ups; temp allocated once, outside the timing.
 *
 * The sweep that picks the defaults (one device call, about 3 minutes on an H100 with 16 cores: 8 builds in
 * parallel, then about 10 s of runs each), each variant one step from the one before:
 *   tools/tune/variants.sh tools/tune/tune_segscan.cu $OUT/segscan-variants.csv "base=" \
 *     "vec=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_RBK_VEC_LOADS=1" \
 *     "park=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1" \
 *     "stage=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_SEGSCAN_MIN_BLOCKS=6 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1 -DPS_RBK_STAGE=1" \
 *     "big=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_SEGSCAN_ITEMS=32 -DPS_SEGSCAN_MIN_BLOCKS=4 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1 -DPS_RBK_STAGE=1 -DPS_RBK_MIN_BLOCKS=4" \
 *     "e4=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_SEGSCAN_ITEMS=32 -DPS_SEGSCAN_MIN_BLOCKS=4 -DPS_SEGSCAN_LANE_ENTRIES=4 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1 -DPS_RBK_STAGE=1 -DPS_RBK_MIN_BLOCKS=4 -DPS_RBK_LANE_ENTRIES=4" \
 *     "i24=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_SEGSCAN_ITEMS=24 -DPS_SEGSCAN_MIN_BLOCKS=5 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1 -DPS_RBK_STAGE=1 -DPS_RBK_RLE_ITEMS=24 -DPS_RBK_MIN_BLOCKS=3" \
 *     "rle32=-DPS_SEGSCAN_VEC_LOADS=1 -DPS_SEGSCAN_PARK=1 -DPS_SEGSCAN_MIN_BLOCKS=6 -DPS_RBK_VEC_LOADS=1 -DPS_RBK_RLE_COUNTS=1 -DPS_RBK_STAGE=1 -DPS_RBK_RLE_ITEMS=32 -DPS_RBK_MIN_BLOCKS=3" \
 *     -- --min-log2 20 --max-log2 28 --step 4
 * (ptxas -v, sm_90: segscan i32 48 registers (base), 54 (VEC_LOADS alone: 4 blocks per SM, so it may lose alone),
 * 39 (VEC_LOADS + PARK), 56 at ITEMS 32 / MIN_BLOCKS 4, 47 at
 * ITEMS 24; RLE 109 (base), 86 (VEC_LOADS + STAGE), 77-80 with RLE_COUNTS, 64 at MIN_BLOCKS 4 with 14 bytes
 * spilled, 80 at RLE_ITEMS 24 or 32 / MIN_BLOCKS 3 with 24 / 122 bytes spilled.) A knob becomes the default when
 * its step is correct at every size and faster at 2^24 and 2^28 by more than the spread.
 * Result (H100, 2026-11-23, docs/bench/h100-segscan-variants.csv): segscan took "park" (VEC_LOADS + PARK: 1.005x
 * CUB at 2^28, 1.03x at 2^24); RLE took i24's knobs (1.33x at 2^28, 1.18x at 2^24), at RLE_MIN_BLOCKS 3 for its
 * own instance only. Those are the defaults now, so "base=" above means them, and the rows before it no longer
 * step from the first version.
 *
 * RLE's small tier (sizes on both sides of the threshold; "off" is the large tier alone, "all" the small tier at
 * every size, which shows where the two cross):
 *   tools/tune/variants.sh tools/tune/tune_segscan.cu $OUT/rle-small.csv "off=-DPS_RBK_RLE_SMALL_TILES=0" "base=" \
 *     "b6=-DPS_RBK_RLE_SMALL_MIN_BLOCKS=6" "i12=-DPS_RBK_RLE_SMALL_ITEMS=12" \
 *     "i16=-DPS_RBK_RLE_SMALL_ITEMS=16" "all=-DPS_RBK_RLE_SMALL_TILES=0x40000000" \
 *     -- --prims rle --min-log2 16 --max-log2 28 --step 2
 * (ptxas -v, sm_90, the small instance: 56 registers at 8 items and 4 blocks per SM, no spills; 40 at 6 blocks
 * with 24 bytes spilled; 64 at 12 items, no spills; 64 at 16 items with 14 bytes spilled. The large one: 80
 * registers, 24 bytes spilled, as before.)
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/segmented_scan.cu"
#include "../../src/cuda/reduce_by_key.cu"
#define TUNE_DEFAULT_REPS 20
#include "tune_common.cuh"

static uint64_t g_state = 0x9E3779B97F4A7C15ull;
static uint64_t next_random(void) {
    g_state ^= g_state << 13, g_state ^= g_state >> 7, g_state ^= g_state << 17;
    return g_state;
}

static void row(const char *prim, const char *impl, uint64_t n, const timing &t, double of_copy, double x_cub,
                bool ok) {
    printf("%s,%s,%llu,%.2f,%.3f,%.3f,%.3f,%s\n", prim, impl, (unsigned long long)n, t.median_us, of_copy, x_cub,
           t.spread, ok ? "ok" : "WRONG");
    fflush(stdout);
}

/* ---- segmented scan by head flags (i32 sum, u8 flags), or by keys (BY_KEYS: u32 keys, the segment's number, as
 * `pscan bench --primitive scan_by_key`; CUB's peer takes the same keys) ---- */
template <bool BY_KEYS> static void bench_segscan(uint64_t n, const ps_cuda_device &dev) {
    typedef typename std::conditional<BY_KEYS, uint32_t, uint8_t>::type key_t;
    const char *prim = BY_KEYS ? "sbk" : "segscan";
    const size_t kb = sizeof(key_t); /* bytes an item of segment description (flags: 1) */
    std::vector<int32_t> hv(n);
    std::vector<uint8_t> hf(n);
    std::vector<key_t> hk(n);
    key_t key = 0;
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t r = next_random();
        hv[i] = (int32_t)(r >> 40) - (1 << 23);
        hf[i] = i == 0 || (r & 0xffffffu) % 1000u == 0;
        hk[i] = key = (key_t)(key + (i > 0 && hf[i]));
    }
    int32_t *in, *out, *ref;
    uint8_t *flags, *copy_dst;
    key_t *keys;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&out, n * 4));
    CK(cudaMalloc(&ref, n * 4));
    CK(cudaMalloc(&flags, n));
    CK(cudaMalloc(&keys, n * sizeof(key_t)));
    CK(cudaMalloc(&copy_dst, n * (4 + kb)));
    CK(cudaMemcpy(in, hv.data(), n * 4, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(flags, hf.data(), n, cudaMemcpyHostToDevice));
    CK(cudaMemcpy(keys, hk.data(), n * sizeof(key_t), cudaMemcpyHostToDevice));

    size_t cub_bytes = 0;
    CK(cub::DeviceScan::InclusiveSumByKey(nullptr, cub_bytes, keys, in, ref, (int)n));
    void *cub_temp;
    CK(cudaMalloc(&cub_temp, cub_bytes ? cub_bytes : 1));
    auto cub_call = [&] { CK(cub::DeviceScan::InclusiveSumByKey(cub_temp, cub_bytes, keys, in, ref, (int)n)); };

    ps_request req;
    memset(&req, 0, sizeof req);
    req.prim = PS_PRIM_SEGMENTED_SCAN;
    req.type = PSCAN_TYPE_I32;
    req.op = PSCAN_OP_SUM;
    req.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    req.in = in;
    req.out = out;
    req.n = n;
    req.elem_bytes = 4;
    if (BY_KEYS) {
        req.seg_form = PS_SEGMENTS_KEYS;
        req.in2 = keys;
        req.key_bytes = sizeof(key_t);
    } else {
        req.seg_form = PS_SEGMENTS_FLAGS;
        req.flags = flags;
    }
    size_t ps_bytes = 0;
    if (ps_cuda_segscan_plan(&req, &dev, &ps_bytes) != PSCAN_SUCCESS) {
        fprintf(stderr, "segscan plan failed\n");
        exit(1);
    }
    CK(cudaMalloc(&req.temp, ps_bytes ? ps_bytes : 1));
    req.temp_bytes = ps_bytes;
    auto ps_call = [&] { CK(segscan_launch<int32_t, ps_cuda_op_sum>::run(&req, &dev)); };

    cub_call();
    CK(cudaMemset(out, 0x5a, n * 4));
    ps_call();
    CK(cudaDeviceSynchronize());
    std::vector<int32_t> got(n), want(n);
    CK(cudaMemcpy(got.data(), out, n * 4, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want.data(), ref, n * 4, cudaMemcpyDeviceToHost));
    const bool ok = got == want;

    const timing copy = time_it([&] {
        CK(cudaMemcpyAsync(copy_dst, in, n * 4, cudaMemcpyDeviceToDevice));
        CK(cudaMemcpyAsync(copy_dst + n * 4, BY_KEYS ? (const void *)keys : flags, n * kb, cudaMemcpyDeviceToDevice));
    });
    const timing cub = time_it(cub_call), ps = time_it(ps_call);
    const double copy_bw = 2.0 * (4 + kb) * n / copy.median_us, traffic = (8.0 + kb) * n;
    row(prim, "copy", n, copy, 1.0, cub.median_us / copy.median_us, true);
    row(prim, "cub", n, cub, traffic / cub.median_us / copy_bw, 1.0, true);
    row(prim, "pscan", n, ps, traffic / ps.median_us / copy_bw, cub.median_us / ps.median_us, ok);

    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(ref));
    CK(cudaFree(flags));
    CK(cudaFree(keys));
    CK(cudaFree(copy_dst));
    CK(cudaFree(cub_temp));
    CK(cudaFree(req.temp));
}

/* ---- run-length encoding: i32 elements, runs of 8, u64 lengths ---- */
static void bench_rle(uint64_t n, const ps_cuda_device &dev) {
    std::vector<int32_t> hk(n);
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t r = next_random();
        if (i == 0 || (r & 7u) == 0) {
            int32_t x;
            do x = (int32_t)(next_random() >> 32);
            while (i > 0 && x == hk[i - 1]);
            hk[i] = x;
        } else {
            hk[i] = hk[i - 1];
        }
    }
    int32_t *in, *uniq, *uniq_ref, *copy_dst;
    uint64_t *len, *len_ref, *count;
    int64_t *cub_count;
    CK(cudaMalloc(&in, n * 4));
    CK(cudaMalloc(&uniq, n * 4));
    CK(cudaMalloc(&uniq_ref, n * 4));
    CK(cudaMalloc(&copy_dst, n * 4));
    CK(cudaMalloc(&len, n * 8));
    CK(cudaMalloc(&len_ref, n * 8));
    CK(cudaMalloc(&count, 8));
    CK(cudaMalloc(&cub_count, 8));
    CK(cudaMemcpy(in, hk.data(), n * 4, cudaMemcpyHostToDevice));

    size_t cub_bytes = 0;
    CK(cub::DeviceRunLengthEncode::Encode(nullptr, cub_bytes, in, uniq_ref, len_ref, cub_count, (int64_t)n));
    void *cub_temp;
    CK(cudaMalloc(&cub_temp, cub_bytes ? cub_bytes : 1));
    auto cub_call = [&] {
        CK(cub::DeviceRunLengthEncode::Encode(cub_temp, cub_bytes, in, uniq_ref, len_ref, cub_count, (int64_t)n));
    };

    ps_request req;
    memset(&req, 0, sizeof req);
    req.prim = PS_PRIM_RUN_LENGTH_ENCODE;
    req.type = PSCAN_TYPE_U64;
    req.op = PSCAN_OP_SUM;
    req.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    req.in2 = in;
    req.out = uniq;
    req.out2 = len;
    req.count = count;
    req.n = n;
    req.elem_bytes = 8;
    req.key_bytes = 4;
    size_t ps_bytes = 0;
    if (ps_cuda_rbk_plan(&req, &dev, &ps_bytes) != PSCAN_SUCCESS) {
        fprintf(stderr, "rle plan failed\n");
        exit(1);
    }
    CK(cudaMalloc(&req.temp, ps_bytes ? ps_bytes : 1));
    req.temp_bytes = ps_bytes;
    /* the program run-length encoding runs, in the tier the library picks for n (not rbk_launch::run, which also
     * instantiates reduce by key's u64 program: its shared memory does not fit at the RLE_ITEMS the RLE_COUNTS
     * instance allows) */
    typedef rbk_launch<uint64_t, ps_cuda_op_sum> rle_launch;
    auto ps_call = [&] {
#if PS_RBK_RLE_COUNTS
        CK(rle_launch::rle(&req, &dev));
#else
        CK(rle_launch::launch<ps_rbk_program<uint64_t, ps_cuda_op_sum>>(&req, &dev));
#endif
    };

    cub_call();
    CK(cudaMemset(uniq, 0x5a, n * 4));
    CK(cudaMemset(len, 0x5a, n * 8));
    ps_call();
    CK(cudaDeviceSynchronize());
    int64_t runs = 0;
    uint64_t c = 0;
    CK(cudaMemcpy(&runs, cub_count, 8, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&c, count, 8, cudaMemcpyDeviceToHost));
    bool ok = c == (uint64_t)runs;
    if (ok) {
        std::vector<int32_t> gk(runs), wk(runs);
        std::vector<uint64_t> gl(runs), wl(runs);
        CK(cudaMemcpy(gk.data(), uniq, runs * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(wk.data(), uniq_ref, runs * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(gl.data(), len, runs * 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(wl.data(), len_ref, runs * 8, cudaMemcpyDeviceToHost));
        ok = gk == wk && gl == wl;
    }

    const timing copy = time_it([&] { CK(cudaMemcpyAsync(copy_dst, in, n * 4, cudaMemcpyDeviceToDevice)); });
    const timing cub = time_it(cub_call), ps = time_it(ps_call);
    const double copy_bw = 2.0 * 4 * n / copy.median_us, traffic = 4.0 * n + 12.0 * (double)runs + 8;
    row("rle", "copy", n, copy, 1.0, cub.median_us / copy.median_us, true);
    row("rle", "cub", n, cub, traffic / cub.median_us / copy_bw, 1.0, true);
    row("rle", PS_RBK_RLE_COUNTS && rbk_rle_small(n) ? "pscan-small" : "pscan", n, ps, traffic / ps.median_us / copy_bw,
        cub.median_us / ps.median_us, ok);

    CK(cudaFree(in));
    CK(cudaFree(uniq));
    CK(cudaFree(uniq_ref));
    CK(cudaFree(copy_dst));
    CK(cudaFree(len));
    CK(cudaFree(len_ref));
    CK(cudaFree(count));
    CK(cudaFree(cub_count));
    CK(cudaFree(cub_temp));
    CK(cudaFree(req.temp));
}

int main(int argc, char **argv) {
    int min_log2 = 20, max_log2 = 28, step = 4;
    const char *prims = "segscan,rle", *sizes = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-log2")) min_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--max-log2")) max_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--step")) step = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--prims")) prims = argv[i + 1];
        if (!strcmp(argv[i], "--n")) sizes = argv[i + 1];
    }
    ps_cuda_device dev;
    cudaDeviceProp prop;
    tune_device_init(dev, &prop);
    printf("# tune_segscan on %s, CUDA runtime %d, CUB %d.%d.%d, median of %d; segscan: ITEMS %d MIN_BLOCKS %d E %d "
           "VEC_LOADS %d PARK %d EARLY %d; rle: ITEMS %d MIN_BLOCKS %d E %d VEC_LOADS %d STAGE %d RLE_COUNTS %d RLE_ITEMS %d "
           "RLE_MIN_BLOCKS %d RLE_SMALL_TILES %d RLE_SMALL_ITEMS %d RLE_SMALL_MIN_BLOCKS %d\n",
           prop.name, CUDART_VERSION, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, g_reps,
           PS_SEGSCAN_ITEMS4, PS_SEGSCAN_MIN_BLOCKS4, PS_SEGSCAN_LANE_ENTRIES, PS_SEGSCAN_VEC_LOADS, PS_SEGSCAN_PARK,
           PS_SEGSCAN_EARLY,
           PS_RBK_ITEMS, PS_RBK_MIN_BLOCKS, PS_RBK_LANE_ENTRIES, PS_RBK_VEC_LOADS, PS_RBK_STAGE, PS_RBK_RLE_COUNTS,
           PS_RBK_RLE_ITEMS, PS_RBK_RLE_MIN_BLOCKS, PS_RBK_RLE_SMALL_TILES, PS_RBK_RLE_SMALL_ITEMS,
           PS_RBK_RLE_SMALL_MIN_BLOCKS);
    printf("prim,impl,n,time_us,of_copy,x_cub,spread,check\n");
    std::vector<uint64_t> ns;
    for (const char *c = sizes; c && *c;) {
        char *end;
        const unsigned long long v = strtoull(c, &end, 10);
        if (end == c || v == 0 || (*end && *end != ',')) {
            fprintf(stderr, "tune_segscan: --n wants sizes (at least 1) separated by commas, got %s\n", sizes);
            return 2;
        }
        ns.push_back(v);
        c = *end ? end + 1 : end;
    }
    for (int l = min_log2; !sizes && l <= max_log2; l += step) ns.push_back(1ull << l);
    for (uint64_t n : ns) {
        if (strstr(prims, "segscan")) bench_segscan<false>(n, dev);
        if (strstr(prims, "sbk")) bench_segscan<true>(n, dev);
        if (strstr(prims, "rle")) bench_rle(n, dev);
    }
    return 0;
}
