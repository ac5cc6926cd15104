/*
 * tune_expand.cu - the timing harness of expand (src/cuda/expand.cu, included as source): its two launches
 * (the counts' scan expanding its own tiles, the deferred tiles' pass) at knob settings given with -D through
 * tools/tune/variants.sh (PS_EXPAND_ITEMS: counts per thread of a tile, PS_EXPAND_SMALL_ITEMS below
 * PS_EXPAND_LARGE_FROM items; PS_EXPAND_CHUNK_VT: slots per thread of a chunk; PS_EXPAND_BUDGET: the most slots
 * a tile writes itself, per item; PS_EXPAND_MIN_BLOCKS, for both shapes; PS_EXPAND_CONTROL_FIRST=1: the first
 * launch alone, WRONG by design where a tile defers), beside a device copy of the bytes
 * expand must move (counts in, indices out), each result checked on the host (one more call writes the ranks
 * too, checked as well). Not part of the library.
 *
 *   tools/tune/variants.sh tools/tune/tune_expand.cu OUT.csv "base=" "b16=-DPS_EXPAND_BUDGET=16" -- [--reps 21]
 *   tune_expand [--min-log2 16] [--max-log2 26] [--step 2] [--reps 21] [--cases 1.5,4,64]
 *
 * Counts uniform in 0..M for M = 3, 8 and 128 (averages 1.5, 4 and 64), u32 counts, u32 indices out. Method as
 * tune_scan.cu: 2x L2 written before each timed call, CUDA events around the call, median of reps after two
 * warm-ups; of_copy = the copy's time over expand's, the copy moving counts + indices bytes (read + write);
 * of_memset = a cudaMemsetAsync of the indices' bytes (the write alone) over expand's time; cap0_us = the same
 * call with capacity 0 (the scan and its chain, no slot written).
 */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "../../src/cuda/expand.cu"
#include "tune_common.cuh"

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

static void bench(uint64_t n, uint32_t most, const ps_cuda_device &dev) {
    std::vector<uint32_t> h(n);
    uint64_t total = 0;
    for (uint64_t i = 0; i < n; i++) h[i] = (uint32_t)(mix64(i + most) % (most + 1)), total += h[i];
    uint32_t *counts, *indices, *copy_src, *copy_dst;
    uint64_t *count;
    const size_t out_bytes = total * 4, move = n * 4 + out_bytes;
    CK(cudaMalloc(&counts, n * 4));
    CK(cudaMalloc(&indices, out_bytes + 4));
    CK(cudaMalloc(&count, 8));
    CK(cudaMalloc(&copy_src, move / 2 + 16));
    CK(cudaMalloc(&copy_dst, std::max(move / 2, out_bytes) + 16));
    CK(cudaMemcpy(counts, h.data(), n * 4, cudaMemcpyHostToDevice));
    ps_request req;
    memset(&req, 0, sizeof req);
    req.type = PSCAN_TYPE_U32;
    req.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    req.in = counts;
    req.out = indices;
    req.n = n;
    req.elem_bytes = 4;
    req.count = count;
    req.capacity = total;
    req.index_type = PSCAN_TYPE_U32;
    size_t temp_bytes = 0;
    if (ps_cuda_expand_plan(&req, &dev, &temp_bytes) != PSCAN_SUCCESS) exit(1);
    CK(cudaMalloc(&req.temp, temp_bytes + 16));
    /* check (a call with ranks too; the timed calls write the indices alone): every slot's item and rank, the
     * total */
    uint32_t *ranks;
    CK(cudaMalloc(&ranks, out_bytes + 4));
    req.ranks = ranks;
    CK(ps_cuda_expand_run(&req, &dev));
    CK(cudaDeviceSynchronize());
    req.ranks = NULL;
    std::vector<uint32_t> got(total), got_ranks(total);
    uint64_t got_total = 0;
    CK(cudaMemcpy(got.data(), indices, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(got_ranks.data(), ranks, out_bytes, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&got_total, count, 8, cudaMemcpyDeviceToHost));
    CK(cudaFree(ranks));
    bool ok = got_total == total;
    for (uint64_t i = 0, slot = 0; ok && i < n; i++)
        for (uint32_t k = 0; k < h[i]; k++, slot++) ok = ok && got[slot] == (uint32_t)i && got_ranks[slot] == k;
    /* the copy moves counts + indices bytes: read half, write half */
    const timing copy = time_it([&] { CK(cudaMemcpyAsync(copy_dst, copy_src, move / 2, cudaMemcpyDeviceToDevice)); });
    /* the write alone: a memset of the indices' bytes (expand writes them, and reads only the counts) */
    const timing fill = time_it([&] { CK(cudaMemsetAsync(copy_dst, 0, out_bytes)); });
    const timing t = time_it([&] { CK(ps_cuda_expand_run(&req, &dev)); });
    /* the same call with capacity 0: the counts' scan and its chain, no slot written (the writes' share apart) */
    req.capacity = 0;
    const timing scan = time_it([&] { CK(ps_cuda_expand_run(&req, &dev)); });
    req.capacity = total;
    printf("avg-%g,%llu,%.2f,%.2f,%.3f,%.2f,%.3f,%.1f,%.3f,%.2f,%s\n", most / 2.0, (unsigned long long)n, t.median_us,
           copy.median_us, copy.median_us / t.median_us, fill.median_us, fill.median_us / t.median_us,
           move / t.median_us * 1e-3, t.spread, scan.median_us, ok ? "ok" : "WRONG");
    fflush(stdout);
    CK(cudaFree(counts));
    CK(cudaFree(indices));
    CK(cudaFree(count));
    CK(cudaFree(copy_src));
    CK(cudaFree(copy_dst));
    CK(cudaFree(req.temp));
}

/* Whether name is one of the comma-separated list's entries ("4" is not in "64"). */
static bool listed(const char *list, const char *name) {
    const size_t len = strlen(name);
    for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
        if (!strncmp(p, name, len) && (p[len] == ',' || p[len] == 0)) return true;
    return false;
}

int main(int argc, char **argv) {
    int min_log2 = 16, max_log2 = 26, step = 2;
    const char *wanted = "1.5,4,64"; /* average counts: 1.5, 4, 64 */
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-log2")) min_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--max-log2")) max_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--step")) step = atoi(argv[i + 1]) > 0 ? atoi(argv[i + 1]) : 1;
        if (!strcmp(argv[i], "--cases")) wanted = argv[i + 1];
    }
    ps_cuda_device dev;
    cudaDeviceProp prop;
    tune_device_init(dev, &prop);
    printf("# %s, PS_EXPAND_ITEMS %d from %llu items (PS_EXPAND_SMALL_ITEMS %d below), PS_EXPAND_CHUNK_VT %d, "
           "PS_EXPAND_BUDGET %d slots an item, blocks per SM %d (large tiles of u32 counts %d), reps %d\n",
           prop.name, PS_EXPAND_ITEMS, (unsigned long long)PS_EXPAND_LARGE_FROM, PS_EXPAND_SMALL_ITEMS,
           PS_EXPAND_CHUNK_VT, PS_EXPAND_BUDGET, (int)PS_EXPAND_MIN_BLOCKS, (int)PS_EXPAND_LARGE_MIN_BLOCKS, g_reps);
    printf("case,n,us,copy_us,of_copy,memset_us,of_memset,gbps,spread,cap0_us,check\n");
    const uint32_t cases[] = {3, 8, 128};
    for (uint32_t m : cases)
        for (int lg = min_log2; lg <= max_log2; lg += step) {
            if (!listed(wanted, m == 3 ? "1.5" : m == 8 ? "4" : "64")) continue;
            if (m == 128 && lg > 24) continue; /* 2^24 x 64 slots of 4 bytes: 4 GiB */
            bench(1ull << lg, m, dev);
        }
    return 0;
}
