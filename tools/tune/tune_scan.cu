/*
 * tune_scan.cu - the tuning harness of the single-pass scan: several compiled variants of the scan tile
 * program (vectors per thread, blocks per SM, look-back entries per lane) timed side by side with a device
 * copy and CUB in one run, each checked against CUB's result first. Not part of the library.
 *
 *   tune_scan [--max-log2 30] [--reps 25]      prints one CSV row per (type, variant, n) and a summary
 *
 * Method: random data; each timed call is preceded by a write of 2x the L2 size (outside the timed region),
 * so no size is timed from cache; CUDA events around the call alone; the median of reps calls after two
 * warm-ups; the spread as (p90 - p10) / median. Fractions are of the copy of the same bytes in the same run.
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "block/ops.cuh"
#include "tune_common.cuh"
#include "chain/given.cuh"
#include "chain/single_pass.cuh"

/* the scan program of the library, included as a header for the variants */
#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/5_decoupled_lookback.cu"
#include "../../src/cuda/reduce.cu"
#include "chain/even_share.cuh"

static int g_sms = 132;
/* --stagger: nonzero (as the library since the twenty-fifth session) the first wave of every tile size starts row by
 * row (chain/single_pass.cuh, PS_CHAIN_STAGGER_CYCLES_PER_KIB), 0 no tile's */
static int g_stagger = 1;




/* The control of the chain's cost: the same tile program on the given-prefix driver (chain/given.cuh), each tile
 * taking the initial carry instead of looking back (no status entries, no waiting): what the tile's own sequence
 * (load, scan, park, store) reaches alone. Its results are wrong past the first tile, by design (the check column
 * says "control"). */
template <class P> struct tune_control : P {
    static __device__ __forceinline__ typename P::carry given(const typename P::params &p, uint32_t) {
        return P::initial(p);
    }
};

/* E = 0: the no-look-back control above. (E < 0 ran the propagated chain, a driver whose one warp folded every
 * aggregate and published each tile's prefix: 0.77-0.87 of copy against the window's 0.927 at 2^28 i32, H200,
 * seventeenth session; the code is in commit e1faad7.) Op: the sum, or another built-in operator (--types
 * product, ops). */
template <class T, int VECS, int MINB, int E, bool ASYNC = false, class Op = ps_cuda_op_sum, int HELD = 0,
          bool PACK = true>
struct variant {
    typedef ps_scan_program<T, Op, false, VECS, MINB, ASYNC, false, T, HELD, PACK> P;
    enum { CONTROL = E == 0 };
    static void run(const T *in, T *out, uint64_t n, void *temp) {
        typename P::params p;
        memset(&p, 0, sizeof p);
        p.in = in;
        p.out = out;
        p.n = n;
        p.tiles = (uint32_t)((n + P::TILE - 1) / P::TILE);
        p.aligned = 1;
        p.stagger_row = g_stagger ? (uint32_t)g_sms : 0;
        if (E == 0) {
            CK(ps_chain_given<tune_control<P>>(p, p.tiles, 0));
        } else {
            CK((ps_chain_single_pass<P, (E > 0 ? E : 1)>(p, p.tiles, temp, 0)));
        }
    }
    static const char *name() {
        static char buf[64];
        const char *op = ps_scan_same<Op, ps_cuda_op_sum>::value       ? ""
                         : ps_scan_same<Op, ps_cuda_op_product>::value ? ".product"
                                                                       : ".max";
        char held[16] = "";
        if (HELD) snprintf(held, sizeof held, ".h%d", HELD); /* of the VECS, HELD in registers */
        if (!PACK && ps_packed<T, Op>::value) /* a pair with a packed form, left unpacked */
            snprintf(held + strlen(held), sizeof held - strlen(held), ".unpacked");
        if (E == 0)
            snprintf(buf, sizeof buf, "v%d%s.b%d.nolookback%s%s", VECS, held, MINB, ASYNC ? ".async" : "", op);
        else
            snprintf(buf, sizeof buf, "v%d%s.b%d.e%d%s%s", VECS, held, MINB, E, ASYNC ? ".async" : "", op);
        return buf;
    }
};

/* A plain SM copy (16-byte vectors, 4 per thread, one tile per block): the floor for any kernel that moves the
 * bytes through the SMs, against cudaMemcpyAsync's (which may use the copy engines). */
__global__ void __launch_bounds__(256) sm_copy_kernel(const uint4 *in, uint4 *out, uint64_t vecs) {
    const uint64_t base = (uint64_t)blockIdx.x * 256 * 8;
    uint4 r[8];
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint64_t i = base + (uint64_t)k * 256 + threadIdx.x;
        if (i < vecs) r[k] = in[i];
    }
#pragma unroll
    for (int k = 0; k < 8; k++) {
        const uint64_t i = base + (uint64_t)k * 256 + threadIdx.x;
        if (i < vecs) out[i] = r[k];
    }
}

/* n random elements (xorshift64, seeded by seed) into the device array in. Floats are whole numbers from -8 to 8:
 * their running sums (a random walk, a few hundred thousand at 2^30) stay exact, so any order of adding gives
 * CUB's bits and the check below can compare bytes. */
template <class T> static void tune_random_fill(T *in, uint64_t n, uint64_t seed) {
    std::vector<T> h(n);
    uint64_t x = 0x9e3779b97f4a7c15ull * seed;
    for (uint64_t i = 0; i < n; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        h[i] = (T)0.5 != (T)0 ? (T)((int)(x % 17) - 8) : (T)x;
    }
    CK(cudaMemcpy(in, h.data(), n * sizeof(T), cudaMemcpyHostToDevice));
}

template <class T> static const char *tname() {
    if ((T)0.5 != (T)0) return sizeof(T) == 4 ? "f32" : "f64";
    return sizeof(T) == 1 ? "u8" : sizeof(T) == 2 ? "u16" : sizeof(T) == 4 ? "i32" : "i64";
}

template <class T, class V>
static void bench_variant(uint64_t n, const T *in, T *out, const T *ref, void *temp, double copy_us, double cub_us) {
    CK(cudaMemset(out, 0xa5, n * sizeof(T)));
    V::run(in, out, n, temp);
    CK(cudaDeviceSynchronize());
    /* check against CUB's result (integer sums wrap identically) */
    std::vector<T> a(n < (1u << 22) ? n : (1u << 22)), b(a.size());
    const uint64_t off = n - a.size();
    CK(cudaMemcpy(a.data(), out + off, a.size() * sizeof(T), cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(b.data(), ref + off, b.size() * sizeof(T), cudaMemcpyDeviceToHost));
    const bool ok = memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0;
    timing t = time_it([&] { V::run(in, out, n, temp); });
    printf("%s,%s,%llu,%.2f,%.3f,%.3f,%.3f,%s\n", tname<T>(), V::name(), (unsigned long long)n, t.median_us,
           copy_us / t.median_us, cub_us / t.median_us, t.spread, V::CONTROL ? "control" : ok ? "ok" : "WRONG");
    fflush(stdout);
}

/* The reduce's result against CUB's (integer sums wrap identically); frac_copy > 1: a reduce reads n bytes,
 * a copy reads and writes them. */
template <class T, class V>
static int bench_variant_reduce(uint64_t n, const T *in, T *out, const T *ref, void *temp, double copy_us, double cub_us) {
    V::run(in, out, n, temp);
    T a, b;
    CK(cudaMemcpy(&a, out, sizeof a, cudaMemcpyDeviceToHost));
    CK(cudaMemcpy(&b, ref, sizeof b, cudaMemcpyDeviceToHost));
    timing t = time_it([&] { V::run(in, out, n, temp); });
    printf("%s,%s,%llu,%.2f,%.3f,%.3f,%.3f,%s\n", tname<T>(), V::name(), (unsigned long long)n, t.median_us,
           copy_us / t.median_us, cub_us / t.median_us, t.spread, a == b ? "ok" : "WRONG");
    fflush(stdout);
    return 0;
}

/* CUB's product, the reference and peer of the product variants (wrapping integer products: both sides agree). */
struct tune_multiplies {
    template <class T> __host__ __device__ __forceinline__ T operator()(const T &a, const T &b) const { return a * b; }
};
struct tune_max {
    template <class T> __host__ __device__ __forceinline__ T operator()(const T &a, const T &b) const { return a < b ? b : a; }
};
template <class T, class CubOp> static cudaError_t tune_cub_scan(void *temp, size_t &bytes, const T *in, T *out,
                                                                 uint64_t n) {
    if constexpr (ps_scan_same<CubOp, void>::value)
        return cub::DeviceScan::InclusiveSum(temp, bytes, in, out, (int64_t)n);
    else
        return cub::DeviceScan::InclusiveScan(temp, bytes, in, out, CubOp(), (int64_t)n);
}

/* Copy, CUB and the variants Vs over sizes 2^min_log2 .. 2^max_log2; CubOp: void (CUB's sum) or tune_multiplies
 * (bench_product). */
template <class T, class CubOp, class... Vs> static void bench_type_op(int min_log2, int max_log2) {
    for (int lg = min_log2; lg <= max_log2; lg += (max_log2 <= 20 ? 1 : 2)) {
        const uint64_t n = 1ull << lg;
        T *in, *out, *ref;
        CK(cudaMalloc(&in, n * sizeof(T)));
        CK(cudaMalloc(&out, n * sizeof(T)));
        CK(cudaMalloc(&ref, n * sizeof(T)));
        tune_random_fill(in, n, lg + 1);
        size_t cub_bytes = 0;
        CK((tune_cub_scan<T, CubOp>(nullptr, cub_bytes, in, ref, n)));
        void *cub_temp, *temp;
        CK(cudaMalloc(&cub_temp, cub_bytes + 16));
        CK(cudaMalloc(&temp, 128 * ((n >> 8) + 64)));
        const timing copy = time_it([&] { CK(cudaMemcpyAsync(out, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
        const timing cub = time_it([&] { CK((tune_cub_scan<T, CubOp>(cub_temp, cub_bytes, in, ref, n))); });
        printf("%s,copy,%llu,%.2f,1.000,%.3f,%.3f,ok\n", tname<T>(), (unsigned long long)n, copy.median_us,
               cub.median_us / copy.median_us, copy.spread);
        printf("%s,cub,%llu,%.2f,%.3f,1.000,%.3f,ok\n", tname<T>(), (unsigned long long)n, cub.median_us,
               copy.median_us / cub.median_us, cub.spread);
        const uint64_t vecs = n * sizeof(T) / 16;
        const timing smc = time_it([&] {
            sm_copy_kernel<<<(unsigned)((vecs + 2047) / 2048), 256>>>((const uint4 *)in, (uint4 *)out, vecs);
            CK(cudaGetLastError());
        });
        printf("%s,sm-copy,%llu,%.2f,%.3f,%.3f,%.3f,ok\n", tname<T>(), (unsigned long long)n, smc.median_us,
               copy.median_us / smc.median_us, cub.median_us / smc.median_us, smc.spread);
        int dummy[] = {(bench_variant<T, Vs>(n, in, out, ref, temp, copy.median_us, cub.median_us), 0)...};
        (void)dummy;
        CK(cudaFree(in));
        CK(cudaFree(out));
        CK(cudaFree(ref));
        CK(cudaFree(cub_temp));
        CK(cudaFree(temp));
    }
}

template <class T, class... Vs> static void bench_type(int min_log2, int max_log2) {
    bench_type_op<T, void, Vs...>(min_log2, max_log2);
}

/* ---- trace (a build with -DPS_CHAIN_TRACE=1): what each tile of one call waits for ---- */
#if PS_CHAIN_TRACE
/* One flushed call of each variant at 2^lg after two warm-ups, traced (chain/single_pass.cuh): a CSV a variant in
 * dir (times in ns from the call's first block) and a summary line: the call's span, the medians of a tile's load
 * (start to aggregate), wait (aggregate to prefix) and finish (prefix to done), and what the last arrival of its
 * look-back was: the base I(k - W) (the chain) or an aggregate (a predecessor's load), and how far back. */
template <class T, class V> static void trace_variant(uint64_t n, const T *in, T *out, void *temp, const char *dir) {
    const uint32_t tiles = (uint32_t)((n + V::P::TILE - 1) / V::P::TILE);
    ps_chain_trace_entry *d = nullptr, *none = nullptr;
    CK(cudaMalloc(&d, tiles * sizeof *d));
    CK(cudaMemset(d, 0, tiles * sizeof *d));
    CK(cudaMemcpyToSymbol(ps_chain_trace, &none, sizeof none));
    for (int r = 0; r < 3; r++) {
        tune_flush(r);
        if (r == 2) CK(cudaMemcpyToSymbol(ps_chain_trace, &d, sizeof d));
        V::run(in, out, n, temp);
        CK(cudaDeviceSynchronize());
    }
    CK(cudaMemcpyToSymbol(ps_chain_trace, &none, sizeof none));
    std::vector<ps_chain_trace_entry> h(tiles);
    CK(cudaMemcpy(h.data(), d, tiles * sizeof *d, cudaMemcpyDeviceToHost));
    CK(cudaFree(d));
    unsigned long long t0 = ~0ull, t1 = 0;
    for (const auto &e : h) t0 = std::min(t0, e.start), t1 = std::max(t1, e.done);
    char path[512];
    snprintf(path, sizeof path, "%s/trace-%s-%s-%d.csv", dir, tname<T>(), V::name(), __builtin_ctzll(n));
    FILE *f = fopen(path, "w");
    if (f) fprintf(f, "tile,sm,start,loaded,prefixed,done,rounds,base_round,aggregate_round,aggregate_back\n");
    std::vector<double> load, wait, fin;
    uint32_t on_base = 0, on_aggregate = 0, no_wait = 0;
    double back = 0;
    for (uint32_t k = 0; k < tiles; k++) {
        const auto &e = h[k];
        if (f)
            fprintf(f, "%u,%u,%llu,%llu,%llu,%llu,%u,%u,%u,%u\n", k, e.sm, e.start - t0, e.loaded - t0,
                    e.prefixed - t0, e.done - t0, e.rounds, e.base_round, e.aggregate_round, e.aggregate_back);
        load.push_back((double)(e.loaded - e.start));
        wait.push_back((double)(e.prefixed - e.loaded));
        fin.push_back((double)(e.done - e.prefixed));
        if (k == 0) continue;
        if (e.rounds <= 1) no_wait++;
        else if (e.base_round >= e.aggregate_round) on_base++;
        else on_aggregate++, back += e.aggregate_back;
    }
    if (f) fclose(f);
    auto med = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() / 2]; };
    auto p90 = [](std::vector<double> v) { std::sort(v.begin(), v.end()); return v[v.size() * 9 / 10]; };
    printf("# trace %s %s n=2^%d: %u tiles, span %.1f us; a tile's load %.2f us (p90 %.2f), wait %.2f (p90 %.2f), "
           "finish %.2f (p90 %.2f); last arrival: none %u, base I(k-W) %u, an aggregate %u (%.1f tiles back on "
           "average)\n",
           tname<T>(), V::name(), __builtin_ctzll(n), tiles, (t1 - t0) / 1e3, med(load) / 1e3, p90(load) / 1e3,
           med(wait) / 1e3, p90(wait) / 1e3, med(fin) / 1e3, p90(fin) / 1e3, no_wait, on_base, on_aggregate,
           on_aggregate ? back / on_aggregate : 0.0);
    fflush(stdout);
}

template <class T, class... Vs> static void trace_type(int lg, const char *dir) {
    const uint64_t n = 1ull << lg;
    T *in, *out;
    void *temp;
    CK(cudaMalloc(&in, n * sizeof(T)));
    CK(cudaMalloc(&out, n * sizeof(T)));
    CK(cudaMalloc(&temp, 128 * ((n >> 8) + 64)));
    tune_random_fill(in, n, lg + 1);
    int dummy[] = {(trace_variant<T, Vs>(n, in, out, temp, dir), 0)...};
    (void)dummy;
    CK(cudaFree(in));
    CK(cudaFree(out));
    CK(cudaFree(temp));
}
#endif

/* ---- reduce: the second tile program on the same driver, beside CUB's DeviceReduce::Sum ---- */

/* E = 0: the even-share driver (chain/even_share.cuh, what the library runs); else the single-pass driver with
 * E look-back entries per lane. LOAD: how vectors are read (reduce.cu's ps_reduce_load: 0 plain, 1
 * ld.global.nc.L1::no_allocate, the library's large tier up to PS_REDUCE_NOALLOC_BYTES). WAVES: the even-share grid
 * as that many times the resident blocks (the library's PS_REDUCE_NOALLOC_WAVES with no_allocate, else 1). */
template <class T, int VECS, int MINB, int E = 2, int LOAD = 0, int WAVES = 1> struct rvariant {
    typedef ps_reduce_program<T, ps_cuda_op_sum, VECS, MINB, LOAD> P;
    static void run(const T *in, T *out, uint64_t n, void *temp) {
        typename P::params p;
        memset(&p, 0, sizeof p);
        p.in = in;
        p.result = out;
        p.n = n;
        p.tiles = (uint32_t)((n + P::TILE - 1) / P::TILE);
        p.aligned = 1;
        if (E == 0) CK(ps_even_share<P>(p, p.tiles, g_sms, WAVES, temp, 0));
        else
            CK(ps_chain_single_pass<P, E ? E : 1>(p, p.tiles, temp, 0));
    }
    static const char *name() {
        static const char *const loads[] = {"", ".noalloc"};
        static char buf[64];
        if (E == 0)
            snprintf(buf, sizeof buf, "reduce.v%d.b%d.even%s%s", VECS, MINB, loads[LOAD],
                     WAVES > 1 ? (WAVES == 2 ? ".w2" : WAVES == 4 ? ".w4" : ".w8") : "");
        else snprintf(buf, sizeof buf, "reduce.v%d.b%d.e%d", VECS, MINB, E);
        return buf;
    }
};

template <class T, class... Vs> static void bench_reduce(int min_log2, int max_log2) {
    for (int lg = min_log2; lg <= max_log2; lg += (max_log2 <= 20 ? 1 : 2)) {
        const uint64_t n = 1ull << lg;
        T *in, *out, *ref, *copy_dst;
        CK(cudaMalloc(&in, n * sizeof(T)));
        CK(cudaMalloc(&copy_dst, n * sizeof(T)));
        CK(cudaMalloc(&out, 64));
        CK(cudaMalloc(&ref, 64));
        tune_random_fill(in, n, lg + 7);
        /* CUB two ways: Sum (its accumulator the operator's result type: int for u8) and Reduce with plus<T> (T's
         * own, pscan bench's peer; for u8 about 4% faster at 2^28-2^30 on the H200); the faster is the peer */
        size_t sum_bytes = 0, red_bytes = 0;
        CK(cub::DeviceReduce::Sum(nullptr, sum_bytes, in, ref, (int64_t)n));
        CK(cub::DeviceReduce::Reduce(nullptr, red_bytes, in, ref, (int64_t)n, cuda::std::plus<T>(), T(0)));
        const size_t cub_bytes = sum_bytes > red_bytes ? sum_bytes : red_bytes;
        void *cub_temp, *temp;
        CK(cudaMalloc(&cub_temp, cub_bytes + 16));
        CK(cudaMalloc(&temp, 128 * ((n >> 8) + 64)));
        const timing copy = time_it([&] { CK(cudaMemcpyAsync(copy_dst, in, n * sizeof(T), cudaMemcpyDeviceToDevice)); });
        const timing sum = time_it([&] { CK(cub::DeviceReduce::Sum(cub_temp, sum_bytes, in, ref, (int64_t)n)); });
        const timing red = time_it([&] {
            CK(cub::DeviceReduce::Reduce(cub_temp, red_bytes, in, ref, (int64_t)n, cuda::std::plus<T>(), T(0)));
        });
        const timing cub = sum.median_us < red.median_us ? sum : red;
        printf("%s,reduce.cub.sum,%llu,%.2f,%.3f,%.3f,%.3f,ok\n", tname<T>(), (unsigned long long)n, sum.median_us,
               copy.median_us / sum.median_us, cub.median_us / sum.median_us, sum.spread);
        printf("%s,reduce.cub,%llu,%.2f,%.3f,1.000,%.3f,ok\n", tname<T>(), (unsigned long long)n, cub.median_us,
               copy.median_us / cub.median_us, cub.spread);
        int dummy[] = {(bench_variant_reduce<T, Vs>(n, in, out, ref, temp, copy.median_us, cub.median_us), 0)...};
        (void)dummy;
        CK(cudaFree(in));
        CK(cudaFree(copy_dst));
        CK(cudaFree(out));
        CK(cudaFree(ref));
        CK(cudaFree(cub_temp));
        CK(cudaFree(temp));
    }
}

int main(int argc, char **argv) {
    int min_log2 = 16, max_log2 = 30;
    const char *types = "i32,i64,u16,u8,reduce";
    const char *trace_dir = ".";
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--min-log2")) min_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--max-log2")) max_log2 = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--types")) types = argv[i + 1];
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[i + 1]);
        if (!strcmp(argv[i], "--trace-dir")) trace_dir = argv[i + 1];
        if (!strcmp(argv[i], "--stagger")) g_stagger = atoi(argv[i + 1]);
    }
    int dev = 0, l2 = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    g_sms = prop.multiProcessorCount;
    tune_flush_init();
    printf("# %s, L2 %d MB, CUDA runtime %d, reps %d\n", prop.name, l2 >> 20, CUDART_VERSION, g_reps);
    printf("type,variant,n,us,frac_copy,vs_cub,spread,check\n");
    /* the sweep behind the library's choice (docs/performance.md); earlier sweeps also tried 16 and 8 KiB tiles
     * at 4-8 blocks/SM and 1-4 look-back entries per lane */
    if (strstr(types, "small")) { /* small n: smaller tiles spread one call over more SMs */
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true>, variant<uint8_t, 1, 8, 2>, variant<uint8_t, 2, 8, 2>,
                   variant<uint8_t, 4, 8, 2>>(10, 20);
        bench_type<uint16_t, variant<uint16_t, 8, 5, 2, true>, variant<uint16_t, 1, 8, 2>, variant<uint16_t, 2, 8, 2>,
                   variant<uint16_t, 4, 8, 2>>(10, 20);
        bench_type<int32_t, variant<int32_t, 8, 5, 2, true>, variant<int32_t, 1, 8, 2>, variant<int32_t, 2, 8, 2>,
                   variant<int32_t, 4, 8, 2>>(10, 20);
        bench_type<int64_t, variant<int64_t, 8, 5, 2, true>, variant<int64_t, 1, 8, 2>, variant<int64_t, 2, 8, 2>,
                   variant<int64_t, 4, 8, 2>>(10, 20);
    }
    /* small calls on the cluster driver (chain/cluster.cuh): build with -DPS_CHAIN_CLUSTER_MAX=0, 8 and 16 through
     * variants.sh to compare; the scan's small tier (4 KiB tiles), 16 KiB tiles and its default tier, the reduce's
     * tiny (4 KiB), small (16 KiB) and large (64 KiB) tiers */
    if (strstr(types, "lat")) {
        const int hi = max_log2 < 20 ? max_log2 : 18;
        bench_type<int32_t, variant<int32_t, 1, 8, 2>, variant<int32_t, 4, 8, 2>, variant<int32_t, 8, 5, 2, true>>(10, hi);
        bench_type<int64_t, variant<int64_t, 1, 8, 2>, variant<int64_t, 4, 8, 2>, variant<int64_t, 8, 5, 2, true>>(10, hi);
        bench_type<uint8_t, variant<uint8_t, 1, 8, 2>, variant<uint8_t, 4, 8, 2>, variant<uint8_t, 8, 5, 2, true>>(10, hi);
        /* and 8 KiB and 32 KiB tiles (twenty-fifth session): a one-tile call of 16 KiB as two tiles of 8 KiB in a
         * cluster; the calls of 256 KiB - 1 MiB (i64 2^15 - 2^17 at 1.3-1.5x a copy call) as 16-32 tiles */
        bench_reduce<int32_t, rvariant<int32_t, 1, 8, 0>, rvariant<int32_t, 2, 8, 0>, rvariant<int32_t, 4, 8, 0>,
                     rvariant<int32_t, 8, 4, 0>, rvariant<int32_t, 16, 3, 0>>(10, hi);
        bench_reduce<int64_t, rvariant<int64_t, 1, 8, 0>, rvariant<int64_t, 2, 8, 0>, rvariant<int64_t, 4, 8, 0>,
                     rvariant<int64_t, 8, 4, 0>, rvariant<int64_t, 16, 3, 0>>(10, hi);
        bench_reduce<uint8_t, rvariant<uint8_t, 1, 8, 0>, rvariant<uint8_t, 2, 8, 0>, rvariant<uint8_t, 4, 8, 0>,
                     rvariant<uint8_t, 8, 4, 0>, rvariant<uint8_t, 16, 3, 0>>(10, hi);
        return 0;
    }
    /* large n: the default (v8.b5.e2.async) beside its no-look-back control (what the chain costs), wider
     * look-back windows (W = 32 E tiles per round trip) and more blocks per SM for the control; earlier sweeps
     * (docs/performance.md) also tried 24 KiB tiles at 7 blocks/SM, 6 blocks of 32 KiB and loads without
     * cp.async */
    /* the chain's cost at the library's tiles (the 32 KiB tier, the large tier) beside the no-look-back control;
     * build it several times through variants.sh to compare driver knobs (-DPS_CHAIN_LANE_ENTRIES=...) */
    /* tiles past the 44 KiB of the library's large tier, beside it: wider windows (E = 3, 4), five blocks of 44 KiB,
     * and 48-72 KiB tiles in dynamic shared memory (build with -DPS_CHAIN_STATIC_SMEM_MAX=0 to put the smaller
     * tiles there too, with -DPS_DYNAMIC_SMEM_ALIGN=... to change the array's alignment) */
    if (strstr(types, "big")) {
        bench_type<int32_t, variant<int32_t, 11, 4, 2, true>, variant<int32_t, 11, 4, 3, true>,
                   variant<int32_t, 11, 5, 2, true>, variant<int32_t, 12, 4, 2, true>, variant<int32_t, 13, 4, 2, true>,
                   variant<int32_t, 16, 3, 2, true>, variant<int32_t, 18, 3, 2, true>, variant<int32_t, 11, 4, 0, true>,
                   variant<int32_t, 13, 4, 0, true>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 11, 4, 2, true>, variant<int64_t, 11, 5, 2, true>,
                   variant<int64_t, 13, 4, 2, true>, variant<int64_t, 16, 3, 2, true>>(min_log2, max_log2);
        bench_type<uint16_t, variant<uint16_t, 8, 5, 2, true>, variant<uint16_t, 10, 5, 2, true>,
                   variant<uint16_t, 13, 4, 2, true>, variant<uint16_t, 16, 3, 2, true>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true>, variant<uint8_t, 10, 5, 2, true>,
                   variant<uint8_t, 13, 4, 2, true>, variant<uint8_t, 16, 3, 2, true>>(min_log2, max_log2);
        return 0;
    }
    /* the 64-bit product, whose 13-vector kernels spill (ptxas: 16-20 bytes a thread at 4 blocks/SM), at the large
     * tiles beside the sum's */
    /* what a tile waits for, at the library's tiles (the 32 KiB tier; the large tier, 15 vectors with 2 held) and a
     * larger one, beside the large tier's no-look-back control (a build with -DPS_CHAIN_TRACE=1 writes the traces;
     * any build times the same variants, so a plain build beside it shows what tracing costs) */
    if (strstr(types, "trace")) {
#if PS_CHAIN_TRACE
        for (int lg = min_log2; lg <= max_log2; lg += 2) {
            trace_type<int32_t, variant<int32_t, 8, 5, 2, true>, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                       variant<int32_t, 18, 3, 2, true>>(lg, trace_dir);
            trace_type<int64_t, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(lg, trace_dir);
        }
#else
        (void)trace_dir;
#endif
        bench_type<int32_t, variant<int32_t, 8, 5, 2, true>, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int32_t, 18, 3, 2, true>, variant<int32_t, 15, 4, 0, true, ps_cuda_op_sum, 2>>(min_log2,
                                                                                                    max_log2);
        bench_type<int64_t, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        return 0;
    }
    /* tiles whose last vectors are held in registers (ps_scan_program's REG_VECS: "v22.h4" is 18 vectors a thread
     * in shared memory and 4 in registers) beside the library's 52 KiB tile and the 72 KiB one: whether more bytes
     * of waiting tiles per SM (registers beside shared memory) buy speed; traced in a -DPS_CHAIN_TRACE=1 build */
    if (strstr(types, "held")) {
#if PS_CHAIN_TRACE
        for (int lg = min_log2; lg <= max_log2; lg += 2) {
            trace_type<int32_t, variant<int32_t, 13, 4, 2, true>, variant<int32_t, 22, 3, 2, true, ps_cuda_op_sum, 4>,
                       variant<int32_t, 24, 3, 2, true, ps_cuda_op_sum, 6>>(lg, trace_dir);
        }
#endif
        /* ptxas (sm_90): no spill but 4 bytes at 22 / 3; 26 vectors with 8 held spilled 208 bytes, not listed */
        bench_type<int32_t, variant<int32_t, 13, 4, 2, true>, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int32_t, 14, 4, 2, true, ps_cuda_op_sum, 4>, variant<int32_t, 18, 3, 2, true>,
                   variant<int32_t, 22, 3, 2, true, ps_cuda_op_sum, 4>,
                   variant<int32_t, 24, 3, 2, true, ps_cuda_op_sum, 6>,
                   variant<int32_t, 13, 4, 0, true>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 13, 4, 2, true>, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int64_t, 22, 3, 2, true, ps_cuda_op_sum, 4>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 10, 5, 2, true>, variant<uint8_t, 12, 4, 2, true, ps_cuda_op_sum, 2>>(
            min_log2, max_log2);
    } /* no return: --types ops,held runs both (and held,more,float) */
    /* the large tier as the library ships it, one variant a type: build it several times through variants.sh to
     * compare one knob across the types (-DPS_SCAN_PREFETCH=..., twentieth session) */
    if (strstr(types, "defaults")) {
        bench_type<int32_t, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<uint16_t, variant<uint16_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        /* u8: 12 vectors with 2 held (the eighteenth session's) beside 12 in shared memory: with the prefetch hook
         * the held ones spill (ptxas: 24 bytes a thread; twenty-first session) */
        bench_type<uint8_t, variant<uint8_t, 12, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<uint8_t, 12, 4, 2, true, ps_cuda_op_sum, 0>>(min_log2, max_log2);
        bench_type<float, variant<float, 13, 4, 2, true>>(min_log2, max_log2);
        bench_type<double, variant<double, 13, 4, 2, true>>(min_log2, max_log2);
        return 0;
    }
    /* the look-back window at the large tier: E entries a lane, W = 32 E tiles a round trip (the trace at 2^24-2^26,
     * twenty-second session: a poll round of 1.5-1.8 us under the bulk traffic, a chain step of 1.2-1.5 us per 64
     * tiles, p90 2.7-3.3 us) */
    if (strstr(types, "window")) {
        bench_type<int32_t, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int32_t, 15, 4, 3, true, ps_cuda_op_sum, 2>,
                   variant<int32_t, 15, 4, 4, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int64_t, 15, 4, 3, true, ps_cuda_op_sum, 2>,
                   variant<int64_t, 15, 4, 4, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 12, 4, 2, true>, variant<uint8_t, 12, 4, 3, true>>(min_log2, max_log2);
        return 0;
    }
    /* the first wave's stagger in the 32 KiB tier as the library runs it (8 vectors at 5 blocks/SM, sums unpacked)
     * beside the large tier's, per type: run a build per PS_CHAIN_STAGGER_CYCLES_PER_KIB with --stagger 1 beside
     * one with --stagger 0 (docs/bench/h200-scan-stagger-tier.csv, -kib.csv: twenty-fifth session) */
    if (strstr(types, "stagger")) {
        bench_type<int32_t, variant<int32_t, 8, 5, 2, true, ps_cuda_op_sum, 0, false>,
                   variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 8, 5, 2, true, ps_cuda_op_sum, 0, false>,
                   variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<uint16_t, variant<uint16_t, 8, 5, 2, true, ps_cuda_op_sum, 0, false>,
                   variant<uint16_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true, ps_cuda_op_sum, 0, false>,
                   variant<uint8_t, 12, 4, 2, true>>(min_log2, max_log2);
        return 0;
    }
    /* u8 sums below the large tier (2^24-2^27: 0.78 / 0.75 / 0.81 / 0.85 of copy, twenty-second session; 2^25's 1024
     * tiles of 32 KiB make 1.55 waves of 660): the library's 32 KiB tier unpacked, and packed, beside 40 KiB at 5
     * blocks/SM and the large tier's 48 KiB at 4, packed */
    if (strstr(types, "u8tier")) {
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true, ps_cuda_op_sum, 0, false>, variant<uint8_t, 8, 5, 2, true>,
                   variant<uint8_t, 10, 5, 2, true>, variant<uint8_t, 12, 4, 2, true>>(min_log2, max_log2);
        return 0;
    }
    /* u8 sums at the large tier's larger tiles, now that the sums are packed (twenty-third session): the library's 12
     * vectors in shared memory beside 13, and 14 of which 1 is held in registers (14 and 15 with 2 held, which spill 8
     * bytes, lost 4-5 points: docs/bench/h200-scan-u8-big.csv), the no-look-back control of the 12, and the 32 KiB
     * tier packed with its control (build with -DPS_SCAN_GROUPED_WARP=1 beside a plain build for the grouped warp
     * scan) */
    if (strstr(types, "onebyte")) {
        bench_type<uint8_t, variant<uint8_t, 12, 4, 2, true>, variant<uint8_t, 13, 4, 2, true>,
                   variant<uint8_t, 14, 4, 2, true, ps_cuda_op_sum, 1>, variant<uint8_t, 12, 4, 0, true>,
                   variant<uint8_t, 8, 5, 2, true>, variant<uint8_t, 8, 5, 0, true>>(min_log2, max_log2);
        return 0;
    }
    /* more held beside the library's 13 in shared memory with 2 held (the eighteenth session's default) */
    if (strstr(types, "more")) {
        bench_type<int32_t, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int32_t, 16, 4, 2, true, ps_cuda_op_sum, 3>,
                   variant<int32_t, 17, 4, 2, true, ps_cuda_op_sum, 4>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<int64_t, 16, 4, 2, true, ps_cuda_op_sum, 3>,
                   variant<int64_t, 17, 4, 2, true, ps_cuda_op_sum, 4>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 12, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<uint8_t, 13, 4, 2, true, ps_cuda_op_sum, 3>,
                   variant<uint8_t, 14, 4, 2, true, ps_cuda_op_sum, 4>>(min_log2, max_log2);
    }
    /* floats at the large tiles with and without held vectors: ptxas (sm_90) spills 56 bytes a thread for the f32
     * sum at 15 vectors with 2 held, 16-32 for f64, 0-8 for the integers' sums */
    if (strstr(types, "float")) {
        bench_type<float, variant<float, 13, 4, 2, true>, variant<float, 15, 4, 2, true, ps_cuda_op_sum, 2>,
                   variant<float, 14, 4, 2, true, ps_cuda_op_sum, 1>>(min_log2, max_log2);
        bench_type_op<float, tune_max, variant<float, 13, 4, 2, true, ps_cuda_op_max>,
                      variant<float, 15, 4, 2, true, ps_cuda_op_max, 2>>(min_log2, max_log2);
        bench_type<double, variant<double, 13, 4, 2, true>, variant<double, 15, 4, 2, true, ps_cuda_op_sum, 2>>(
            min_log2, max_log2);
        bench_type<int32_t, variant<int32_t, 13, 4, 2, true>, variant<int32_t, 15, 4, 2, true, ps_cuda_op_sum, 2>>(
            min_log2, max_log2);
    }
    /* the operators whose large-tier kernels spill (ptxas, sixteenth session: the 2-byte max and min 82-130 bytes
     * a thread at 13 vectors and 4 blocks/SM, the 64-bit product 16-20) at the large tiles and at 3 blocks/SM */
    /* Build it with -DPS_SCAN_PROMOTED_WARP=0 beside a plain build (variants.sh) to time the plain warp scan against
     * the promoted one (the default since the seventeenth session), or with -DPS_SCAN_PACKED=0 to time the element-
     * at-a-time vectors against the word-at-a-time ones (block/packed.cuh; the default since the eighteenth). */
    if (strstr(types, "ops")) {
        bench_type_op<uint16_t, tune_max, variant<uint16_t, 8, 5, 2, true, ps_cuda_op_max>,
                      variant<uint16_t, 10, 5, 2, true, ps_cuda_op_max>,
                      variant<uint16_t, 13, 4, 2, true, ps_cuda_op_max>,
                      variant<uint16_t, 16, 3, 2, true, ps_cuda_op_max>>(min_log2, max_log2);
        bench_type_op<uint8_t, tune_max, variant<uint8_t, 8, 5, 2, true, ps_cuda_op_max>,
                      variant<uint8_t, 10, 5, 2, true, ps_cuda_op_max>,
                      variant<uint8_t, 13, 4, 2, true, ps_cuda_op_max>>(min_log2, max_log2);
        bench_type<uint16_t, variant<uint16_t, 13, 4, 2, true>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 10, 5, 2, true>, variant<uint8_t, 13, 4, 2, true>>(min_log2, max_log2);
    }
    if (strstr(types, "product")) {
        bench_type_op<int64_t, tune_multiplies, variant<int64_t, 11, 4, 2, true, ps_cuda_op_product>,
                      variant<int64_t, 12, 4, 2, true, ps_cuda_op_product>,
                      variant<int64_t, 13, 4, 2, true, ps_cuda_op_product>,
                      variant<int64_t, 16, 3, 2, true, ps_cuda_op_product>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 13, 4, 2, true>>(min_log2, max_log2);
        return 0;
    }
    if (strstr(types, "chain")) {
        bench_type<int32_t, variant<int32_t, 8, 5, 2, true>, variant<int32_t, 11, 4, 2, true>,
                   variant<int32_t, 11, 4, 0, true>>(min_log2, max_log2);
        bench_type<int64_t, variant<int64_t, 8, 5, 2, true>, variant<int64_t, 11, 4, 2, true>>(min_log2, max_log2);
        bench_type<uint16_t, variant<uint16_t, 8, 5, 2, true>, variant<uint16_t, 10, 5, 2, true>>(min_log2, max_log2);
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true>, variant<uint8_t, 10, 5, 2, true>>(min_log2, max_log2);
        return 0;
    }
    if (strstr(types, "i32"))
        bench_type<int32_t, variant<int32_t, 8, 5, 2, true>, variant<int32_t, 10, 5, 2, true>, variant<int32_t, 11, 4, 2, true>,
                   variant<int32_t, 12, 4, 2, true>, variant<int32_t, 13, 4, 2, true>, variant<int32_t, 14, 3, 2, true>,
                   variant<int32_t, 16, 3, 2, true>, variant<int32_t, 16, 3, 0, true>>(min_log2, max_log2);
    if (strstr(types, "i64"))
        bench_type<int64_t, variant<int64_t, 8, 5, 2, true>, variant<int64_t, 10, 5, 2, true>, variant<int64_t, 11, 4, 2, true>,
                   variant<int64_t, 12, 4, 2, true>, variant<int64_t, 13, 4, 2, true>, variant<int64_t, 16, 3, 2, true>>(
            min_log2, max_log2);
    if (strstr(types, "u16"))
        bench_type<uint16_t, variant<uint16_t, 8, 5, 2, true>, variant<uint16_t, 10, 5, 2, true>,
                   variant<uint16_t, 12, 4, 2, true>, variant<uint16_t, 16, 3, 2, true>>(min_log2, max_log2);
    if (strstr(types, "u8"))
        bench_type<uint8_t, variant<uint8_t, 8, 5, 2, true>, variant<uint8_t, 10, 5, 2, true>,
                   variant<uint8_t, 12, 4, 2, true>, variant<uint8_t, 16, 3, 2, true>>(min_log2, max_log2);
    /* the reduce from 2^24 (issue 10: 0.98-0.99x CUB from 512 MiB on the H200): the shipped large tier's loads
     * (plain, no_allocate) at grids of 1, 2 and 4 waves; the L2::256B hint and CUB's shape (16 KiB tiles at 8
     * blocks/SM, 4 and 8 waves) lost at every size (twenty-seventh session, docs/bench/h200-reduce-rload.csv) */
    if (strstr(types, "rload")) {
#define TUNE_RLOAD(T)                                                                                                 \
    bench_reduce<T, rvariant<T, 16, 3, 0>, rvariant<T, 16, 3, 0, 1>, rvariant<T, 16, 3, 0, 0, 2>,                     \
                 rvariant<T, 16, 3, 0, 0, 4>, rvariant<T, 16, 3, 0, 1, 4>>(min_log2, max_log2)
        TUNE_RLOAD(int32_t);
        TUNE_RLOAD(int64_t);
        TUNE_RLOAD(uint8_t);
#undef TUNE_RLOAD
    }
    if (strstr(types, "reduce")) { /* the single-pass driver (e2) beside the even-share one (even), plain and
                                    * L1::no_allocate loads */
#define TUNE_REDUCE(T)                                                                                                \
    bench_reduce<T, rvariant<T, 16, 3>, rvariant<T, 16, 3, 0>, rvariant<T, 16, 3, 0, 1>, rvariant<T, 8, 4, 0>,        \
                 rvariant<T, 8, 6, 0>, rvariant<T, 4, 8, 0>, rvariant<T, 2, 8, 0>>(min_log2, max_log2)
        TUNE_REDUCE(int32_t);
        TUNE_REDUCE(int64_t);
        TUNE_REDUCE(uint8_t);
#undef TUNE_REDUCE
    }
    return 0;
}
