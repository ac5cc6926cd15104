/*
 * tune_select.cu - the tuning harness of select (compact) and partition: variants of the row tile program (rows
 * per tile, blocks per SM, look-back entries per lane) timed side by side with a device copy and CUB's
 * DeviceSelect::If / DevicePartition::If in one run, each checked against CUB's result first (on the device).
 * Not part of the library.
 *
 *   tune_select [--reps 25] [--min-log2 16] [--max-log2 28] [--step 4] [--types i32,i64,u8,i16] [--ops sel,part]
 *               [--flags] [--small] [--unique] [--pairs] [--values | --value-bytes B]
 *
 * One CSV row per (type, variant, n): time, of copy, x CUB (CUB's time / the variant's, against CUB's select
 * or partition), spread. Variant names: sel. or part. (the operation), then r32.b5.e2 (32 rows, 5 blocks per
 * SM, 2 look-back entries per lane). of copy counts the bytes a select must move (n read + kept written), and
 * for a partition n read + n written, against the copy's 2n; the partition's counting pass reads n more, which
 * the figure does not count. Build:
 *   nvcc -O3 -std=c++17 -arch=sm_90 --expt-relaxed-constexpr -Isrc/cuda -Isrc/core -Iinclude \
 *        -o tune_select tools/tune/tune_select.cu
 * Method as tune_scan.cu: keys from a hash of the index (about half kept: x > 0 for signed keys, x > 127 for
 * u8; --flags: by a u8 flag array holding that decision, against CUB's DeviceSelect / DevicePartition::Flagged,
 * and of copy then counts the flags' bytes too; --unique: a select by PSCAN_PRED_UNIQUE of keys in pairs, key i the
 * hash of i / 2, so exactly half are kept, against CUB's DeviceSelect::Unique, and a partition by uniqueness
 * against CUB's DevicePartition::Flagged over first-of-run flags made before the timing (CUB has no partition by
 * uniqueness; that peer reads n flag bytes more and computes nothing); --pairs: keys > 0 kept exactly where unique
 * keeps (every even item: every tile keeps half, each warp's kept slots alternate), to tell the data's part of
 * unique's cost from its test's; --values: each key carries a payload of its own width (the key's bits, checked
 * like the keys; of copy counts its bytes too, x CUB stays against CUB's call on the keys alone); --value-bytes B:
 * a payload of B bytes (the key's bits widened or cut); 2x L2 written before each timed
 * call; CUDA events around the call; median of reps after two warm-ups; spread (p90 - p10) / median.
 */
#include <cub/cub.cuh>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define PS_TUNE_NO_LIBRARY_ENTRY
#include "../../src/cuda/select.cu"
#include "tune_common.cuh"

static int g_sms = 132;

template <class K> struct greater_than {
    K c;
    __host__ __device__ bool operator()(const K &x) const { return x > c; }
};

/* One launch of program P (E look-back entries per lane) as the library sets it up. */
static const uint8_t *g_flags; /* --flags: the decisions as a flag array, else NULL */
static bool g_unique;          /* --unique: the select drops consecutive duplicates */
static const void *g_values;   /* --values: the payloads (each key's bits, widened or cut to g_value_bytes), else NULL */
static void *g_values_out;
static uint32_t g_value_bytes; /* --values: the key's width; --value-bytes B: B */

template <class P, int E>
static void launch(bool partition, const typename P::key *in, typename P::key *out, uint64_t *count, uint64_t n,
                   typename P::key operand, void *temp) {
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.keys = in;
    p.flags = g_flags;
    p.keys_out = out;
    p.values = g_values;
    p.values_out = g_values_out;
    p.value_bytes = g_values ? g_value_bytes : 0;
    p.count = count;
    p.n = n;
    p.pred = g_unique ? PSCAN_PRED_UNIQUE : PSCAN_PRED_GT;
    p.partition = partition;
    p.operand = operand;
    CK(ps_select_launch<P, E>(p, temp, 0, g_sms));
}

/* The row tile: ROWS rows, MINB blocks per SM, E look-back entries per lane; D: the program's DIRECT form (keys in
 * registers, written from there: name .d). */
template <class K, int ROWS, int MINB, int E, bool D = false> struct rows {
    typedef ps_select_program<K, ROWS, MINB, D> P;
    static void run(bool part, const K *in, K *out, uint64_t *count, uint64_t n, K operand, void *temp) {
        launch<P, E>(part, in, out, count, n, operand, temp);
    }
    static std::string name() {
        return "r" + std::to_string(ROWS) + ".b" + std::to_string(MINB) + ".e" + std::to_string(E) + (D ? ".d" : "");
    }
};

template <class K> static const char *tname() {
    return sizeof(K) == 1 ? "u8" : sizeof(K) == 2 ? "i16" : sizeof(K) == 4 ? "i32" : "i64";
}

/* Keys from a hash of the index: uniform bits, so about half pass x > operand. */
template <class K> __global__ void fill_keys(K *k, uint64_t n, int shift) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        uint64_t z = (i >> shift) * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
        z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
        z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
        k[i] = (K)(z ^ (z >> 31));
    }
}

/* --pairs: keys > operand exactly where unique keeps its keys in pairs (every even item: the top bit chosen so, the
 * other bits hashed), so every tile keeps half and the kept slots alternate as unique's do. */
template <class K> __global__ void mark_even(K *k, uint64_t n) {
    typedef typename ps_select_bits<sizeof(K)>::type U;
    const U top = (U)((U)1 << (8 * sizeof(K) - 1));
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        U u;
        memcpy(&u, &k[i], sizeof u);
        u = (U)(u & (U)~top) | (U)(sizeof(K) > 1 ? 0 : top); /* u8 (keys > 127): top set keeps; signed: clear keeps */
        if (i % 2) u ^= top;                                /* odd items the other way */
        if (sizeof(K) > 1 && u == 0) u = 1;                  /* 0 > 0 is false: an even signed key must be positive */
        memcpy(&k[i], &u, sizeof u);
    }
}

/* Whether got matches CUB's ref: the kept items in order; for a partition the rest after them in order, which
 * CUB writes reversed from the end. *bad (zeroed before) counts the differences. */
template <class K>
__global__ void check_kernel(const K *got, const K *ref, uint64_t n, uint64_t kept, int partition, unsigned *bad) {
    const uint64_t end = partition ? n : kept;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < end; i += (uint64_t)gridDim.x * blockDim.x) {
        const K want = i < kept ? ref[i] : ref[n - 1 - (i - kept)];
        if (got[i] != want) atomicAdd(bad, 1u); /* integer keys: equal values are equal bits */
    }
}

struct options {
    int min_log2 = 16, max_log2 = 28, step = 4;
    bool i32 = true, i64 = true, u8 = true, i16 = false, sel = true, part = true, flags = false, small = false, unique = false;
    bool pairs = false; /* keys > 0 kept where unique keeps: the data's part of unique's cost apart from its test's */
    bool values = false; /* a payload with each key: of the key's width, or of value_bytes (1, 2, 4, 8) */
    int value_bytes = 0;
};

/* --values: item i's payload, its key's bits widened (zero-extended) or cut to vb bytes. */
template <class K> __device__ uint64_t payload_of(K k, uint32_t vb) {
    typedef typename ps_select_bits<sizeof(K)>::type U;
    U u;
    memcpy(&u, &k, sizeof u);
    return vb >= 8 ? (uint64_t)u : (uint64_t)u & ((1ull << (8 * vb)) - 1);
}
template <class K> __global__ void payloads(void *v, const K *k, uint64_t n, uint32_t vb) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t x = payload_of(k[i], vb);
        memcpy((char *)v + i * vb, &x, vb); /* little-endian: the low vb bytes */
    }
}
/* The payloads out against CUB's keys (ref), as check_kernel. */
template <class K>
__global__ void check_payloads(const void *got, uint32_t vb, const K *ref, uint64_t n, uint64_t kept, int partition,
                               unsigned *bad) {
    const uint64_t end = partition ? n : kept;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < end; i += (uint64_t)gridDim.x * blockDim.x) {
        const uint64_t want = payload_of(i < kept ? ref[i] : ref[n - 1 - (i - kept)], vb);
        uint64_t x = 0;
        memcpy(&x, (const char *)got + i * vb, vb);
        if (x != want) atomicAdd(bad, 1u);
    }
}

/* --unique's partition peer: a flag for the first item of each run of equal keys. */
template <class K> __global__ void fill_first_of_run(uint8_t *f, const K *k, uint64_t n) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        f[i] = i == 0 || k[i] != k[i - 1];
}

/* The flags of --flags: the same decision as greater_than, one byte an item. */
template <class K> __global__ void fill_flags(uint8_t *f, const K *k, uint64_t n, K operand) {
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (uint64_t)gridDim.x * blockDim.x)
        f[i] = k[i] > operand;
}

template <class K, class... Vs> static void bench_type(const options &o) {
    if (!(sizeof(K) == 1 ? o.u8 : sizeof(K) == 2 ? o.i16 : sizeof(K) == 4 ? o.i32 : o.i64)) return;
    for (int lg = o.min_log2; lg <= o.max_log2; lg += o.step) {
        const uint64_t n = 1ull << lg;
        K *in, *out, *ref;
        uint64_t *count;
        int64_t *cub_count;
        unsigned *bad;
        void *temp;
        CK(cudaMalloc(&in, n * sizeof(K)));
        CK(cudaMalloc(&out, n * sizeof(K)));
        CK(cudaMalloc(&ref, n * sizeof(K)));
        CK(cudaMalloc(&count, 8));
        CK(cudaMalloc(&cub_count, 8));
        CK(cudaMalloc(&bad, sizeof(unsigned)));
        CK(cudaMalloc(&temp, (n / 1024 + 64) * 64 + n / 8 + (1 << 20))); /* chain entries, total, flag bits */
        fill_keys<K><<<g_sms * 8, 256>>>(in, n, o.unique ? 1 : 0);
        if (o.pairs) mark_even<K><<<g_sms * 8, 256>>>(in, n);
        CK(cudaGetLastError());
        const K operand = sizeof(K) == 1 ? (K)127 : (K)0;
        uint8_t *flags = nullptr;
        if (o.flags) {
            CK(cudaMalloc(&flags, n));
            fill_flags<K><<<g_sms * 8, 256>>>(flags, in, n, operand);
            CK(cudaGetLastError());
        }
        g_flags = flags;
        void *vals = nullptr, *vals_out = nullptr; /* --values, --value-bytes */
        const uint32_t vb = o.value_bytes ? (uint32_t)o.value_bytes : (uint32_t)sizeof(K);
        g_value_bytes = vb;
        if (o.values) {
            CK(cudaMalloc(&vals, n * vb));
            CK(cudaMalloc(&vals_out, n * vb));
            payloads<K><<<g_sms * 8, 256>>>(vals, in, n, vb);
            CK(cudaGetLastError());
        }
        g_values = vals;
        g_values_out = vals_out;
        uint8_t *first = nullptr; /* --unique: the partition peer's flags */
        if (o.unique && o.part) {
            CK(cudaMalloc(&first, n));
            fill_first_of_run<K><<<g_sms * 8, 256>>>(first, in, n);
            CK(cudaGetLastError());
        }
        size_t sel_bytes = 0, part_bytes = 0;
        void *sel_temp = nullptr, *part_temp = nullptr;
        if (o.unique) {
            CK(cub::DeviceSelect::Unique(nullptr, sel_bytes, in, ref, cub_count, (int64_t)n));
            if (first) CK(cub::DevicePartition::Flagged(nullptr, part_bytes, in, first, ref, cub_count, (int64_t)n));
        } else if (o.flags) {
            CK(cub::DeviceSelect::Flagged(nullptr, sel_bytes, in, flags, ref, cub_count, (int64_t)n));
            CK(cub::DevicePartition::Flagged(nullptr, part_bytes, in, flags, ref, cub_count, (int64_t)n));
        } else {
            CK(cub::DeviceSelect::If(nullptr, sel_bytes, in, ref, cub_count, (int64_t)n, greater_than<K>{operand}));
            CK(cub::DevicePartition::If(nullptr, part_bytes, in, ref, cub_count, (int64_t)n, greater_than<K>{operand}));
        }
        CK(cudaMalloc(&sel_temp, sel_bytes));
        CK(cudaMalloc(&part_temp, part_bytes));
        const timing copy = time_it([&] { CK(cudaMemcpyAsync(out, in, n * sizeof(K), cudaMemcpyDeviceToDevice)); });
        const double copy_gbps = 2.0 * n * sizeof(K) / copy.median_us * 1e-3;
        printf("%s,copy,%llu,%.2f,1.000,-,%.3f,ok\n", tname<K>(), (unsigned long long)n, copy.median_us, copy.spread);
        for (int part = 0; part < 2; part++) {
            if (!(part ? o.part : o.sel)) continue;
            const char *op = part ? "part" : "sel";
            auto cub_call = [&] {
                if (o.unique && part)
                    CK(cub::DevicePartition::Flagged(part_temp, part_bytes, in, first, ref, cub_count, (int64_t)n));
                else if (o.unique)
                    CK(cub::DeviceSelect::Unique(sel_temp, sel_bytes, in, ref, cub_count, (int64_t)n));
                else if (o.flags && part)
                    CK(cub::DevicePartition::Flagged(part_temp, part_bytes, in, flags, ref, cub_count, (int64_t)n));
                else if (o.flags)
                    CK(cub::DeviceSelect::Flagged(sel_temp, sel_bytes, in, flags, ref, cub_count, (int64_t)n));
                else if (part)
                    CK(cub::DevicePartition::If(part_temp, part_bytes, in, ref, cub_count, (int64_t)n,
                                                greater_than<K>{operand}));
                else
                    CK(cub::DeviceSelect::If(sel_temp, sel_bytes, in, ref, cub_count, (int64_t)n,
                                             greater_than<K>{operand}));
            };
            const timing cub = time_it(cub_call);
            cub_call(); /* ref holds CUB's result of this operation */
            int64_t kept = 0;
            CK(cudaMemcpy(&kept, cub_count, 8, cudaMemcpyDeviceToHost));
            const double traffic = ((double)n + (double)(part ? n : kept)) * (sizeof(K) + (o.values ? vb : 0)) +
                                   (o.flags ? (double)n : 0);
            printf("%s,%s.cub,%llu,%.2f,%.3f,1.000,%.3f,ok\n", tname<K>(), op, (unsigned long long)n, cub.median_us,
                   traffic / cub.median_us * 1e-3 / copy_gbps, cub.spread);
            auto one = [&](auto v) {
                typedef decltype(v) V;
                CK(cudaMemset(out, 0, n * sizeof(K)));
                CK(cudaMemset(bad, 0, sizeof(unsigned)));
                V::run(part, in, out, count, n, operand, temp);
                check_kernel<K><<<g_sms * 8, 256>>>(out, ref, n, (uint64_t)kept, part, bad);
                if (vals_out) check_payloads<K><<<g_sms * 8, 256>>>(vals_out, vb, ref, n, (uint64_t)kept, part, bad);
                CK(cudaGetLastError());
                CK(cudaDeviceSynchronize());
                uint64_t c = 0;
                unsigned wrong = 0;
                CK(cudaMemcpy(&c, count, 8, cudaMemcpyDeviceToHost));
                CK(cudaMemcpy(&wrong, bad, sizeof wrong, cudaMemcpyDeviceToHost));
                const bool ok = c == (uint64_t)kept && wrong == 0;
                const timing t = time_it([&] { V::run(part, in, out, count, n, operand, temp); });
                printf("%s,%s.%s,%llu,%.2f,%.3f,%.3f,%.3f,%s\n", tname<K>(), op, V::name().c_str(),
                       (unsigned long long)n, t.median_us, traffic / t.median_us * 1e-3 / copy_gbps,
                       cub.median_us / t.median_us, t.spread, ok ? "ok" : "WRONG");
                fflush(stdout);
            };
            (one(Vs()), ...);
        }
        CK(cudaFree(in));
        CK(cudaFree(out));
        CK(cudaFree(ref));
        CK(cudaFree(count));
        CK(cudaFree(cub_count));
        CK(cudaFree(bad));
        CK(cudaFree(temp));
        CK(cudaFree(sel_temp));
        CK(cudaFree(part_temp));
        if (flags) CK(cudaFree(flags));
        if (first) CK(cudaFree(first));
        if (vals) CK(cudaFree(vals));
        if (vals_out) CK(cudaFree(vals_out));
        g_flags = nullptr;
        g_values = g_values_out = nullptr;
    }
}

int main(int argc, char **argv) {
    options o;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i], v = i + 1 < argc ? argv[i + 1] : "";
        if (a == "--flags") o.flags = true;
        else if (a == "--unique") o.unique = g_unique = true;
        else if (a == "--small") o.small = true;
        else if (a == "--pairs") o.pairs = true;
        else if (a == "--values") o.values = true;
        else if (a == "--value-bytes") o.values = true, o.value_bytes = atoi(argv[++i]);
        else if (a == "--reps") g_reps = atoi(argv[++i]);
        else if (a == "--min-log2") o.min_log2 = atoi(argv[++i]);
        else if (a == "--max-log2") o.max_log2 = atoi(argv[++i]);
        else if (a == "--step") o.step = atoi(argv[++i]) > 0 ? atoi(argv[i]) : 1;
        else if (a == "--types") o.i32 = v.find("i32") != std::string::npos, o.i64 = v.find("i64") != std::string::npos,
                                 o.u8 = v.find("u8") != std::string::npos, o.i16 = v.find("i16") != std::string::npos, i++;
        else if (a == "--ops") o.sel = v.find("sel") != std::string::npos, o.part = v.find("part") != std::string::npos, i++;
    }
    int dev = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
    tune_flush_init();
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    printf("# tune_select on %s, median of %d%s%s; type,variant,n,time_us,of_copy,x_cub,spread,check\n", prop.name, g_reps,
           o.unique ? ", unique" : o.flags ? ", by flags" : "",
           !o.values ? "" : o.value_bytes ? (", with payloads of " + std::to_string(o.value_bytes) + " bytes").c_str() : ", with payloads");
    /* the library's tile (r32.b6 for 4-byte keys, r64.b6 for 1- and 2-byte keys since the thirty-sixth session, r16.b6
     * for 8-byte ones since the thirty-seventh (the vector form; r16.b5 was the row form's); u8 selects past 2^24
     * r128.b5) and its neighbours; 2026-11-26 also measured 8 rows of i64 at 6 blocks and 3 look-back entries
     * (all slower), and, in the row form, 4 blocks per SM and 64 rows of u8 (no gain); the smaller tiles are for small
     * calls (2026-11-27) */
    if (o.small) { /* the small calls' tiles, parked and DIRECT (--small: run with --min-log2 10 --max-log2 17 --step 1) */
        bench_type<int32_t, rows<int32_t, 4, 5, 2>, rows<int32_t, 4, 5, 2, true>, rows<int32_t, 8, 5, 2>,
                   rows<int32_t, 8, 5, 2, true>, rows<int32_t, 16, 5, 2>, rows<int32_t, 16, 5, 2, true>>(o);
        bench_type<int64_t, rows<int64_t, 4, 5, 2>, rows<int64_t, 4, 5, 2, true>, rows<int64_t, 8, 5, 2>,
                   rows<int64_t, 8, 5, 2, true>>(o);
        bench_type<uint8_t, rows<uint8_t, 16, 5, 2>, rows<uint8_t, 16, 5, 2, true>>(o);
        return 0;
    }
#ifdef TUNE_SELECT_DEFAULTS /* the library's default tiles alone, with look-back windows of 64, 128 (and 256) tiles:
                              * the calls of 256-1024 tiles take 128 since the thirty-eighth session (PS_SELECT_WIDE_*) */
    bench_type<int32_t, rows<int32_t, 32, 6, 2>, rows<int32_t, 32, 6, 4>, rows<int32_t, 32, 6, 8>>(o);
    bench_type<int64_t, rows<int64_t, 16, 6, 2>, rows<int64_t, 16, 6, 4>, rows<int64_t, 16, 6, 8>>(o);
    bench_type<uint8_t, rows<uint8_t, 64, 6, 2>, rows<uint8_t, 64, 6, 4>, rows<uint8_t, 128, 5, 2>, rows<uint8_t, 128, 5, 4>>(o);
    bench_type<int16_t, rows<int16_t, 64, 6, 2>, rows<int16_t, 64, 6, 4>>(o);
    return 0;
#endif
    bench_type<int32_t, rows<int32_t, 32, 6, 2>, rows<int32_t, 32, 5, 2>, rows<int32_t, 16, 5, 2>, rows<int32_t, 8, 5, 2>>(o);
    bench_type<int64_t, rows<int64_t, 16, 5, 2>, rows<int64_t, 16, 6, 2>, rows<int64_t, 8, 5, 2>, rows<int64_t, 8, 6, 2>,
               rows<int64_t, 4, 5, 2>>(o);
    bench_type<uint8_t, rows<uint8_t, 64, 6, 2>, rows<uint8_t, 64, 4, 2>, rows<uint8_t, 32, 5, 2>, rows<uint8_t, 128, 5, 2>,
               rows<uint8_t, 128, 4, 2>>(o);
    bench_type<int16_t, rows<int16_t, 64, 6, 2>, rows<int16_t, 64, 4, 2>, rows<int16_t, 32, 5, 2>>(o); /* --types i16 */
    return 0;
}
