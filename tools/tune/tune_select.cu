/*
 * tune_select.cu - the tuning harness of select (compact): variants of the select tile program (rows per tile,
 * blocks per SM, look-back entries per lane) timed side by side with a device copy and CUB's DeviceSelect::If
 * in one run, each checked against CUB's result first. Not part of the library.
 *
 *   tune_select [--reps 25]     one CSV row per (type, variant, n): time, of copy (bandwidth: n read + kept
 *                               written, against the copy's 2n), x CUB (CUB's time / the variant's), spread
 * Build: nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc/core -Iinclude \
 *        -o tune_select tools/tune/tune_select.cu
 * Method as tune_scan.cu: random keys, about half greater than the operand; 2x L2 written before each timed
 * call; CUDA events around the call; median of reps after two warm-ups; spread (p90 - p10) / median.
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/select.cu"
#include "tune_common.cuh"


static int g_sms = 132;


template <class K> struct greater_than {
    K c;
    __host__ __device__ bool operator()(const K &x) const { return x > c; }
};

template <class K, int ROWS, int MINB, int E> struct variant {
    typedef ps_select_program<K, ROWS, MINB> P;
    static void run(const K *in, K *out, uint64_t *count, uint64_t n, K operand, void *temp) {
        typename P::params p;
        memset(&p, 0, sizeof p);
        p.keys = in;
        p.keys_out = out;
        p.count = count;
        p.n = n;
        p.pred = PSCAN_PRED_GT;
        p.operand = operand;
        CK(ps_select_launch<P, E>(p, temp, 0, g_sms));
    }
    static const char *name() {
        static char buf[64];
        snprintf(buf, sizeof buf, "r%d.b%d.e%d", ROWS, MINB, E);
        return buf;
    }
};

template <class K> static const char *tname() { return sizeof(K) == 4 ? "i32" : "i64"; }

template <class K, class... Vs> static void bench_type(const std::vector<int> &sizes) {
    for (int lg : sizes) {
        const uint64_t n = 1ull << lg;
        K *in, *out, *ref;
        uint64_t *count;
        int64_t *cub_count;
        void *temp;
        CK(cudaMalloc(&in, n * sizeof(K)));
        CK(cudaMalloc(&out, n * sizeof(K)));
        CK(cudaMalloc(&ref, n * sizeof(K)));
        CK(cudaMalloc(&count, 8));
        CK(cudaMalloc(&cub_count, 8));
        CK(cudaMalloc(&temp, (n / 1024 + 64) * 64 + (1 << 20)));
        std::vector<K> h(n);
        uint64_t x = 88172645463325252ull;
        for (uint64_t i = 0; i < n; i++) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            h[i] = (K)x; /* signed: about half > 0 */
        }
        CK(cudaMemcpy(in, h.data(), n * sizeof(K), cudaMemcpyHostToDevice));
        const K operand = 0;
        size_t cub_bytes = 0;
        void *cub_temp = nullptr;
        CK(cub::DeviceSelect::If(nullptr, cub_bytes, in, ref, cub_count, (int64_t)n, greater_than<K>{operand}));
        CK(cudaMalloc(&cub_temp, cub_bytes));
        const timing copy = time_it([&] { CK(cudaMemcpyAsync(out, in, n * sizeof(K), cudaMemcpyDeviceToDevice)); });
        const timing cub = time_it([&] {
            CK(cub::DeviceSelect::If(cub_temp, cub_bytes, in, ref, cub_count, (int64_t)n, greater_than<K>{operand}));
        });
        int64_t kept = 0;
        CK(cudaMemcpy(&kept, cub_count, 8, cudaMemcpyDeviceToHost));
        const double traffic = (double)n * sizeof(K) + (double)kept * sizeof(K);
        const double copy_gbps = 2.0 * n * sizeof(K) / copy.median_us * 1e-3;
        printf("%s,copy,%llu,%.2f,1.000,-,%.3f,ok\n", tname<K>(), (unsigned long long)n, copy.median_us, copy.spread);
        printf("%s,cub,%llu,%.2f,%.3f,1.000,%.3f,ok\n", tname<K>(), (unsigned long long)n, cub.median_us,
               traffic / cub.median_us * 1e-3 / copy_gbps, cub.spread);
        auto one = [&](auto v) {
            typedef decltype(v) V;
            CK(cudaMemset(out, 0, n * sizeof(K)));
            V::run(in, out, count, n, operand, temp);
            CK(cudaDeviceSynchronize());
            uint64_t c = 0;
            CK(cudaMemcpy(&c, count, 8, cudaMemcpyDeviceToHost));
            std::vector<K> a(kept), b(kept);
            CK(cudaMemcpy(a.data(), out, kept * sizeof(K), cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(b.data(), ref, kept * sizeof(K), cudaMemcpyDeviceToHost));
            const bool ok = c == (uint64_t)kept && memcmp(a.data(), b.data(), kept * sizeof(K)) == 0;
            const timing t = time_it([&] { V::run(in, out, count, n, operand, temp); });
            printf("%s,%s,%llu,%.2f,%.3f,%.3f,%.3f,%s\n", tname<K>(), V::name(), (unsigned long long)n, t.median_us,
                   traffic / t.median_us * 1e-3 / copy_gbps, cub.median_us / t.median_us, t.spread, ok ? "ok" : "WRONG");
            fflush(stdout);
        };
        (one(Vs()), ...);
        CK(cudaFree(in));
        CK(cudaFree(out));
        CK(cudaFree(ref));
        CK(cudaFree(count));
        CK(cudaFree(cub_count));
        CK(cudaFree(temp));
        CK(cudaFree(cub_temp));
    }
}

int main(int argc, char **argv) {
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[++i]);
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
    tune_flush_init();
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("# tune_select on %s, median of %d; type,variant,n,time_us,of_copy,x_cub,spread,check\n", prop.name, g_reps);
    const std::vector<int> sizes = {16, 20, 24, 28};
    bench_type<int32_t, variant<int32_t, 16, 4, 2>, variant<int32_t, 16, 4, 4>, variant<int32_t, 32, 3, 2>,
               variant<int32_t, 32, 3, 4>, variant<int32_t, 32, 2, 4>, variant<int32_t, 64, 2, 4>>(sizes);
    bench_type<int64_t, variant<int64_t, 16, 4, 2>, variant<int64_t, 16, 4, 4>, variant<int64_t, 32, 2, 2>,
               variant<int64_t, 32, 2, 4>, variant<int64_t, 24, 3, 4>>(sizes);
    return 0;
}
