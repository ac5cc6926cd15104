/*
 * tune_histogram.cu - the tuning harness of the CUDA histogram: pscan's kernel (src/cuda/histogram.cu, included
 * as a header) in each warp-aggregation variant, timed beside a device copy of the same bytes and CUB's
 * DeviceHistogram::HistogramEven in one run, each checked against CUB's counts first. Not part of the library.
 *
 *   tune_histogram [--log2 28[,24...]] [--reps 20] [--agg K] [--bins B] [--data uniform,all-equal[,half]]
 *                                                                 prints one CSV row per (n, case, implementation)
 *
 * Cases: u8 samples in 256 bins over [0, 256); u32 samples in 256 bins over [0, 1024) (the issue's target
 * case); f32 samples in 1024 bins over [0, 1); u32 samples in 65536 bins over [0, 65536) and f32 samples in
 * 65536 bins over [0, 1) (packed counters: the all-equal u32 data wraps a low half, bin 7, the f32 data a high
 * half, bin 32768); each with uniform data and with all-equal data (every sample in one bin: the contention
 * case), and on request half data (each sample, with probability 1/2, in the all-equal data's bin, else uniform:
 * skew that no whole-warp check sees). --log2 takes a list of sizes (2^24 and 2^28: --log2 24,28); --agg K times
 * only aggregation variant K; --bins B only the cases of B bins; --data the kinds of data, in that order.
 * Method: each timed call is preceded by a write of 2x the L2 size (outside the timed region); CUDA events
 * around the call alone; the median of reps calls after two warm-ups; the spread as (p90 - p10) / median.
 * Columns: input_gbs = sample bytes / time; frac_copy = input_gbs / the copy's bandwidth (a copy of the same
 * bytes reads and writes them: 2 x bytes / its time), so 1.0 reads the samples as fast as a copy moves bytes;
 * vs_cub = CUB's time / this time (above 1: faster than CUB). pscan's rows: agg0 plain atomics, agg1 whole-warp
 * check, agg2 __match_any_sync always, agg3 adaptive (PS_HISTOGRAM_AGG says which is the library's default).
 * The comment line names the layout knobs the build had (tools/tune/variants.sh builds several).
 *
 * Build and run on the GPU machine (from the repository root):
 *   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc/core -Iinclude \
 *        -o tune_histogram tools/tune/tune_histogram.cu && ./tune_histogram --log2 28 --reps 20
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/histogram.cu"
#define TUNE_DEFAULT_REPS 20
#include "tune_common.cuh"


static ps_cuda_device g_dev;
static int g_agg = -1; /* --agg: the one aggregation variant to time; -1 all four */
static uint32_t g_bins;  /* --bins: the one bin count to time; 0 all */
enum { DATA_UNIFORM, DATA_EQUAL, DATA_HALF };
static const char *const g_data_names[] = {"uniform", "all-equal", "half"};


/* The request the library's core would build for evenly spaced bins (api.c's hist_bounds, for these cases). */
template <class T> static ps_request make_request(const T *in, uint64_t n, uint32_t *counts, uint32_t bins, double lo, double hi) {
    ps_request r;
    memset(&r, 0, sizeof r);
    r.prim = PS_PRIM_HISTOGRAM;
    r.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    r.in = in;
    r.out = counts;
    r.n = n;
    r.elem_bytes = sizeof(T);
    ps_histogram_spec &h = r.hist;
    h.bins = bins;
    h.count_bytes = 4;
    if ((T)0.5 != (T)0) {
        h.form = PS_HISTOGRAM_EVEN_FLOAT;
        h.lower.f32 = (float)lo;
        h.upper.f32 = (float)hi;
        h.scale_f = (float)bins / ((float)hi - (float)lo);
    } else {
        const uint64_t range = (uint64_t)hi - (uint64_t)lo, q = range / bins;
        h.lower.u64 = (uint64_t)lo;
        h.upper.u64 = (uint64_t)hi;
        h.range_m1 = range - 1;
        const bool shift = range % bins == 0 && (q & (q - 1)) == 0;
        h.form = shift ? PS_HISTOGRAM_EVEN_SHIFT32 : PS_HISTOGRAM_EVEN_DIV32;
        while (shift && (1ull << h.shift) < q) h.shift++;
        h.scale_f = (float)bins / (float)range;
        h.scale_d = (double)bins / (double)range;
    }
    return r;
}

template <class T, int AGG> static cudaError_t run_pscan(const ps_request &r) {
    switch (r.hist.form) {
    case PS_HISTOGRAM_EVEN_SHIFT32: return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_SHIFT32, AGG>(&r, &g_dev);
    case PS_HISTOGRAM_EVEN_DIV32: return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_DIV32, AGG>(&r, &g_dev);
    default: return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_FLOAT, AGG>(&r, &g_dev);
    }
}

/* Host data: uniform over the bins' range (floats in [0, 1), integers in [0, hi)), every sample equal, or half
 * (each sample equal with probability 1/2, from the generator's top bit, else uniform). */
template <class T> static void fill(std::vector<T> &h, int data, double hi, uint64_t seed) {
    uint64_t x = 0x9e3779b97f4a7c15ull ^ seed;
    for (size_t i = 0; i < h.size(); i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        if (data == DATA_EQUAL || (data == DATA_HALF && (x >> 63)))
            h[i] = (T)((T)0.5 != (T)0 ? 0.5 : 7);
        else if ((T)0.5 != (T)0)
            h[i] = (T)((double)(x >> 11) * 0x1.0p-53);
        else
            h[i] = (T)(x % (uint64_t)hi);
    }
}

template <class T> static const char *tname() { return (T)0.5 != (T)0 ? "f32" : sizeof(T) == 1 ? "u8" : "u32"; }

template <class T, class Level>
static void bench_case(uint64_t n, uint32_t bins, Level lo, Level hi, int kind) {
    if (g_bins && bins != g_bins) return;
    const char *data = g_data_names[kind];
    T *in;
    uint32_t *counts, *ref;
    CK(cudaMalloc(&in, n * sizeof(T)));
    CK(cudaMalloc(&counts, bins * sizeof(uint32_t)));
    CK(cudaMalloc(&ref, bins * sizeof(uint32_t)));
    {
        std::vector<T> h(n);
        fill(h, kind, (double)hi, n ^ bins);
        CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
    }
    void *copy_dst;
    CK(cudaMalloc(&copy_dst, n * sizeof(T)));
    size_t cub_bytes = 0;
    CK(cub::DeviceHistogram::HistogramEven(nullptr, cub_bytes, in, ref, (int)bins + 1, lo, hi, (int64_t)n));
    void *cub_temp;
    CK(cudaMalloc(&cub_temp, cub_bytes + 16));
    const double bytes = (double)n * sizeof(T);

    const timing copy = time_it([&] { CK(cudaMemcpyAsync(copy_dst, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
    const timing cub = time_it([&] {
        CK(cub::DeviceHistogram::HistogramEven(cub_temp, cub_bytes, in, ref, (int)bins + 1, lo, hi, (int64_t)n));
    });
    const double copy_gbs = 2.0 * bytes / (copy.median_us * 1e3);
    auto row = [&](const char *impl, const timing &t, const char *check) {
        const double gbs = bytes / (t.median_us * 1e3);
        printf("%s,%u,%s,%s,%llu,%.2f,%.1f,%.3f,%.3f,%.3f,%s\n", tname<T>(), bins, data, impl, (unsigned long long)n,
               t.median_us, gbs, gbs / copy_gbs, cub.median_us / t.median_us, t.spread, check);
        fflush(stdout);
    };
    row("copy", copy, "ok");
    row("cub", cub, "ok");

    std::vector<uint32_t> want(bins), got(bins);
    CK(cudaMemcpy(want.data(), ref, bins * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    const ps_request r = make_request<T>(in, n, counts, bins, (double)lo, (double)hi);
    auto variant = [&](const char *name, cudaError_t (*run)(const ps_request &)) {
        CK(cudaMemset(counts, 0xa5, bins * sizeof(uint32_t)));
        CK(run(r));
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(got.data(), counts, bins * sizeof(uint32_t), cudaMemcpyDeviceToHost));
        size_t differ = 0;
        for (uint32_t b = 0; b < bins; b++) differ += got[b] != want[b];
        char check[64];
        snprintf(check, sizeof check, differ ? "DIFFER(%zu bins)" : "ok", differ);
        const timing t = time_it([&] { CK(run(r)); });
        row(name, t, check);
    };
    if (g_agg < 0 || g_agg == 0) variant("pscan.agg0", run_pscan<T, PS_HIST_AGG_PLAIN>);
    if (g_agg < 0 || g_agg == 1) variant("pscan.agg1", run_pscan<T, PS_HIST_AGG_UNIFORM>);
    if (g_agg < 0 || g_agg == 2) variant("pscan.agg2", run_pscan<T, PS_HIST_AGG_MATCH>);
    if (g_agg < 0 || g_agg == 3) variant("pscan.agg3", run_pscan<T, PS_HIST_AGG_ADAPTIVE>);

    CK(cudaFree(in));
    CK(cudaFree(counts));
    CK(cudaFree(ref));
    CK(cudaFree(copy_dst));
    CK(cudaFree(cub_temp));
}

int main(int argc, char **argv) {
    std::vector<int> sizes, kinds;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--log2") && i + 1 < argc) {
            for (char *at = argv[++i]; *at;) {
                sizes.push_back((int)strtol(at, &at, 10));
                if (*at == ',') at++;
                else if (*at) break;
            }
        } else if (!strcmp(argv[i], "--reps") && i + 1 < argc) {
            g_reps = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--agg") && i + 1 < argc) {
            g_agg = atoi(argv[++i]);
        } else if (!strcmp(argv[i], "--bins") && i + 1 < argc) {
            g_bins = (uint32_t)strtoul(argv[++i], nullptr, 10);
        } else if (!strcmp(argv[i], "--data") && i + 1 < argc) {
            for (char *at = strtok(argv[++i], ","); at; at = strtok(nullptr, ",")) {
                int k = 0;
                while (k < 3 && strcmp(at, g_data_names[k])) k++;
                if (k == 3) {
                    fprintf(stderr, "tune_histogram: unknown data %s\n", at);
                    return 2;
                }
                kinds.push_back(k);
            }
        } else {
            fprintf(stderr, "usage: tune_histogram [--log2 28[,24...]] [--reps 20] [--agg K] [--bins B] "
                            "[--data uniform,all-equal[,half]]\n");
            return 2;
        }
    }
    if (sizes.empty()) sizes.push_back(28);
    if (kinds.empty()) kinds = {DATA_UNIFORM, DATA_EQUAL};
    cudaDeviceProp prop;
    tune_device_init(g_dev, &prop);
    printf("# %s, %d SMs, CUB %d.%d.%d, default aggregation %d, vecs %d, threads %d, packed %d (%d threads, "
           "aggregation %d), lanes %d, median of %d\n",
           prop.name, prop.multiProcessorCount, CUB_MAJOR_VERSION, CUB_MINOR_VERSION, CUB_SUBMINOR_VERSION,
           PS_HISTOGRAM_AGG, PS_HISTOGRAM_VECS, PS_HISTOGRAM_THREADS, PS_HISTOGRAM_PACKED,
           PS_HISTOGRAM_PACKED_THREADS, PS_HISTOGRAM_PACKED_AGG, PS_HISTOGRAM_LANES, g_reps);
    printf("type,bins,data,impl,n,median_us,input_gbs,frac_copy,vs_cub,spread,check\n");
    for (int log2n : sizes) {
        const uint64_t n = 1ull << log2n;
        for (int kind : kinds) {
            bench_case<uint8_t, int>(n, 256, 0, 256, kind);
            bench_case<uint32_t, unsigned>(n, 256, 0u, 1024u, kind);
            bench_case<float, float>(n, 1024, 0.0f, 1.0f, kind);
            bench_case<uint32_t, unsigned>(n, 65536, 0u, 65536u, kind);
            bench_case<float, float>(n, 65536, 0.0f, 1.0f, kind);
        }
    }
    CK(cudaFree(g_flush));
    return 0;
}
