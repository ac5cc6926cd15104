/*
 * tune_sort.cu - the timing harness of the radix sort: pscan's Onesweep-style sort (src/cuda/radix_sort.cu,
 * included as source) beside cub::DeviceRadixSort::SortKeys and SortPairs in one run, each result checked
 * against CUB's first (both sorts are stable, so keys and payloads must match bit for bit). Not part of the
 * library.
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc/core -Iinclude \
 *        -o tune_sort tools/tune/tune_sort.cu
 *   tune_sort [--min-log2 16] [--max-log2 28] [--step 4] [--reps 20] [--types u32,u64] [--cases keys,pairs]
 *             [--n N,N,...]   (these sizes instead of the powers of two: awkward sizes to check a policy's tiles)
 *             [--dist random|equal|few|low|rfew]   (keys: random (default), all equal, 16 values, below 1024,
 *                                                16 random full-width values)
 *   (2^30 fits an 80 GB H100 with --types u32; u64 pairs at 2^30 need about 60 GB)
 *
 * Prints one CSV row per (keys, payload, n): times in microseconds, Gkeys/s = n / time, and pscan / CUB speed;
 * CUB is called with a 64-bit n (cub_us) and, below 2^31, with an int n as `pscan bench` calls it (cub_int_us):
 * CUB chooses its tile by the offset type.
 * Method: random keys over the whole key range (never all zeros); each timed call is preceded by a write of 2x
 * the L2 size (outside the timed region), so nothing is timed from cache; CUDA events around the call alone;
 * the median of reps calls after two warm-ups; temp is allocated once, outside the timing, for both.
 * Built with -DPS_SORT_LOOKBACK_STATS=1, each row is followed by a comment line of what the passes' look-backs
 * did in one more call (reads, aggregates passed, reads of words not yet written, cycles; radix_sort.cu).
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/radix_sort.cu"
#define TUNE_DEFAULT_REPS 20
#include "tune_common.cuh"



/* --dist random (0), equal (1), few (2: 16 values, each byte the value: digits 0-15), low (3: keys below 1024),
 * rfew (4: 16 random full-width values, as pscan bench's keys-few: their digits fall in random banks) */
static int g_dist = 0;

static uint64_t mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

/* One (key type, payload) at size n: pscan and CUB on the same input, checked, timed. */
template <class K, bool PAIRS> static void bench(const char *name, uint64_t n, const ps_cuda_device &dev) {
    std::vector<K> h_keys(n);
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t r = mix64(i * 0x2545F4914F6CDD1Dull + sizeof(K));
        /* --dist: the digit counts' corner cases (an upsweep's counters wrap on few distinct digits) */
        h_keys[i] = g_dist == 1 ? (K)0x5A5A5A5A5A5A5A5Aull : g_dist == 2 ? (K)(r & 15) * (K)0x0101010101010101ull
                  : g_dist == 3 ? (K)(r & 0x3FF) : g_dist == 4 ? (K)mix64(0x5EED + (r & 15)) : (K)r;
    }
    std::vector<uint32_t> h_values(PAIRS ? n : 0);
    for (uint64_t i = 0; i < h_values.size(); i++) h_values[i] = (uint32_t)i;

    K *keys_in, *keys_out, *keys_ref;
    uint32_t *values_in = NULL, *values_out = NULL, *values_ref = NULL;
    CK(cudaMalloc(&keys_in, n * sizeof(K)));
    CK(cudaMalloc(&keys_out, n * sizeof(K)));
    CK(cudaMalloc(&keys_ref, n * sizeof(K)));
    CK(cudaMemcpy(keys_in, h_keys.data(), n * sizeof(K), cudaMemcpyHostToDevice));
    if (PAIRS) {
        CK(cudaMalloc(&values_in, n * 4));
        CK(cudaMalloc(&values_out, n * 4));
        CK(cudaMalloc(&values_ref, n * 4));
        CK(cudaMemcpy(values_in, h_values.data(), n * 4, cudaMemcpyHostToDevice));
    }

    /* ---- CUB: with a 64-bit n, and below 2^31 with an int n as `pscan bench` (tools/bench_cuda.cu) and most
     * callers pass it: CUB picks its pass policy by the offset type (384 x 19 keys a tile for 64-bit n, 384 x 20
     * for int, u32 keys, from the SASS) ---- */
    auto cub_sort = [&](void *temp, size_t &bytes, auto count) {
        if (PAIRS)
            CK(cub::DeviceRadixSort::SortPairs(temp, bytes, keys_in, keys_ref, values_in, values_ref, count));
        else
            CK(cub::DeviceRadixSort::SortKeys(temp, bytes, keys_in, keys_ref, count));
    };
    const bool int_n = n <= (uint64_t)INT_MAX;
    size_t cub_bytes = 0, cub_int_bytes = 0;
    cub_sort(nullptr, cub_bytes, (int64_t)n);
    if (int_n) cub_sort(nullptr, cub_int_bytes, (int)n);
    void *cub_temp, *cub_int_temp;
    CK(cudaMalloc(&cub_temp, cub_bytes ? cub_bytes : 1));
    CK(cudaMalloc(&cub_int_temp, cub_int_bytes ? cub_int_bytes : 1));
    auto cub_call = [&] { cub_sort(cub_temp, cub_bytes, (int64_t)n); };
    auto cub_int_call = [&] { cub_sort(cub_int_temp, cub_int_bytes, (int)n); };

    /* ---- pscan ---- */
    const size_t ps_bytes = ps_sort_temp_bytes(n, sizeof(K), PAIRS ? 4 : 0);
    void *ps_temp;
    CK(cudaMalloc(&ps_temp, ps_bytes ? ps_bytes : 1));
    ps_sort_args a;
    memset(&a, 0, sizeof a);
    a.keys_in = keys_in;
    a.keys_out = keys_out;
    a.values_in = values_in;
    a.values_out = values_out;
    a.n = n;
    a.kind = PS_SORT_KEY_UNSIGNED;
    a.begin_bit = 0;
    a.end_bit = 8 * sizeof(K);
    a.temp = ps_temp;
    auto ps_call = [&] { CK(ps_sort_run_args(a, sizeof(K), PAIRS ? 4 : 0, &dev)); };

    /* ---- check: pscan against CUB, keys and payloads ---- */
    cub_call();
    ps_call();
    CK(cudaDeviceSynchronize());
    std::vector<K> got(n), want(n);
    CK(cudaMemcpy(got.data(), keys_out, n * sizeof(K), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(want.data(), keys_ref, n * sizeof(K), cudaMemcpyDeviceToHost));
    bool ok = got == want;
    if (PAIRS && ok) {
        std::vector<uint32_t> gv(n), wv(n);
        CK(cudaMemcpy(gv.data(), values_out, n * 4, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(wv.data(), values_ref, n * 4, cudaMemcpyDeviceToHost));
        ok = gv == wv;
    }
    if (int_n && ok) { /* the int call sorts alike (into keys_ref again) */
        cub_int_call();
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), keys_ref, n * sizeof(K), cudaMemcpyDeviceToHost));
        ok = got == want;
    }

    const double cub_us = time_it(cub_call).median_us, ps_us = time_it(ps_call).median_us;
    const double cub_int_us = int_n ? time_it(cub_int_call).median_us : 0.0;
    /* the upsweep alone (memset and digit counts): the rest of pscan's time is the digit passes */
    typedef typename std::conditional<PAIRS, uint32_t, ps_sort_no_value>::type PV;
    const size_t clear = ps_sort_clear_bytes<K, PV>(n);
    const double up_us = n > PS_SORT_TILE ? time_it([&] { CK(ps_sort_upsweep<K>(a, clear, &dev)); }).median_us : 0.0;
    printf("%s,%s,%llu,%.2f,%.2f,%.3f,%.3f,%.3f,%s,%.2f,%.2f,%.3f\n", name, PAIRS ? "pairs-u32" : "keys",
           (unsigned long long)n, ps_us, cub_us, n / ps_us * 1e-3, n / cub_us * 1e-3, cub_us / ps_us,
           ok ? "ok" : "MISMATCH", up_us, cub_int_us, int_n ? cub_int_us / ps_us : 0.0);
#if PS_SORT_LOOKBACK_STATS
    if (n > PS_SORT_TILE) { /* one more call, counted: what a digit thread's look-back did, per tile and pass */
        unsigned long long slots[PS_SORT_STATS_SLOTS][4] = {}, st[4] = {0, 0, 0, 0};
        CK(cudaMemcpyToSymbol(ps_sort_lookback_stats, slots, sizeof slots));
        ps_call();
        CK(cudaMemcpyFromSymbol(slots, ps_sort_lookback_stats, sizeof slots));
        for (int i = 0; i < PS_SORT_STATS_SLOTS; i++)
            for (int k = 0; k < 4; k++) st[k] += slots[i][k];
        typedef typename std::conditional<PAIRS, uint32_t, ps_sort_no_value>::type V;
        const uint32_t tile = ps_sort_large<K, V>(n)
                                  ? ps_sort_pass_policy<K, V, true>::TILE
                                  : ps_sort_pass_policy<K, V>::TILE;
        const double walks = (double)(ps_cuda_div_up(n, tile) - 1) * PS_SORT_RADIX * sizeof(K);
        printf("# look-back %s %s n=%llu, per tile, digit and pass: %.2f reads, %.2f aggregates passed, %.2f reads "
               "of unwritten words, %.0f cycles\n",
               name, PAIRS ? "pairs-u32" : "keys", (unsigned long long)n, st[0] / walks, st[1] / walks, st[2] / walks,
               st[3] / walks);
    }
#endif
    fflush(stdout);

    CK(cudaFree(keys_in));
    CK(cudaFree(keys_out));
    CK(cudaFree(keys_ref));
    if (PAIRS) {
        CK(cudaFree(values_in));
        CK(cudaFree(values_out));
        CK(cudaFree(values_ref));
    }
    CK(cudaFree(cub_temp));
    CK(cudaFree(cub_int_temp));
    CK(cudaFree(ps_temp));
}

int main(int argc, char **argv) {
    int min_log2 = 16, max_log2 = 28, step = 4;
    const char *types = "u32,u64", *cases = "keys,pairs", *sizes = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-log2")) min_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--max-log2")) max_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--step")) step = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--types")) types = argv[i + 1];
        if (!strcmp(argv[i], "--cases")) cases = argv[i + 1];
        if (!strcmp(argv[i], "--n")) sizes = argv[i + 1];
        if (!strcmp(argv[i], "--dist"))
            g_dist = !strcmp(argv[i + 1], "equal") ? 1 : !strcmp(argv[i + 1], "few") ? 2 : !strcmp(argv[i + 1], "low") ? 3
                   : !strcmp(argv[i + 1], "rfew") ? 4 : 0;
    }
    ps_cuda_device dev;
    cudaDeviceProp prop;
    tune_device_init(dev, &prop);
    printf("# %s, L2 %d MB, CUDA runtime %d, CUB %d.%d.%d, reps %d (median)\n", prop.name, prop.l2CacheSize >> 20,
           CUDART_VERSION, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION, g_reps);
    printf("keys,payload,n,pscan_us,cub_us,pscan_gkeys_s,cub_gkeys_s,pscan_over_cub,check,upsweep_us,cub_int_us,"
           "pscan_over_cub_int\n");
    std::vector<uint64_t> ns;
    if (sizes)
        for (const char *c = sizes; *c; c += strcspn(c, ",") + (c[strcspn(c, ",")] == ',')) ns.push_back(strtoull(c, NULL, 0));
    else
        for (int l = min_log2; l <= max_log2; l += step) ns.push_back(1ull << l);
    for (const uint64_t n : ns) {
        const bool keys = strstr(cases, "keys") != NULL, pairs = strstr(cases, "pairs") != NULL;
        if (strstr(types, "u32")) {
            if (keys) bench<uint32_t, false>("u32", n, dev);
            if (pairs) bench<uint32_t, true>("u32", n, dev);
        }
        if (strstr(types, "u64")) {
            if (keys) bench<uint64_t, false>("u64", n, dev);
            if (pairs) bench<uint64_t, true>("u64", n, dev);
        }
    }
    return 0;
}
