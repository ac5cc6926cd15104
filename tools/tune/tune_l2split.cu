/*
 * tune_l2split.cu - what a stable two-way split of 8-byte items could cost in its data movement alone, by the
 * shape of its passes (issue 10: the partition by a predicate trails CUB's at 2^21-2^25, where pscan counts first
 * and reads the keys twice). No scan and no predicate: the even items are "kept" and the odd ones "rejected", so
 * every store stream is contiguous and the times are the passes' memory traffic and launches alone. Not part of
 * the library.
 *
 *   copy        one kernel: in -> out (the floor: n items read, n written)
 *   count       the shipped shape: a kernel reads in (a count), a second reads in again and writes both groups
 *   count.alone its first kernel alone
 *   temp        one pass writes the kept items in place and the rejected ones to a temporary buffer, a second
 *               copies the temporary behind them (a one-pass stable split needs the kept total before the
 *               rejected group's first store: the temporary holds them until it is known)
 *   temp.last   temp, its temporary written with an L2 evict_last policy and the streams with evict_first, so
 *               that the second kernel reads the temporary from L2
 *   temp.drop   temp.last, and the second kernel discards each temporary line from L2 after reading it
 *               (discard.global.L2: the dirty lines are never written back to memory)
 *   cub         cub::DevicePartition::If, keys > midpoint on random keys (the peer; its rejected group reversed)
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 -Isrc/cuda -Isrc/core -Iinclude tools/tune/tune_l2split.cu -o tune_l2split
 *   ./tune_l2split [--reps R] [--min-log2 A] [--max-log2 B]
 *
 * Prints CSV: variant,n,time_us,of_copy,x_cub,spread (of_copy: copy's time over the variant's).
 */
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include <cub/device/device_partition.cuh>

#include "tune_common.cuh"

enum { L2_PLAIN = 0, L2_HINTS = 1, L2_DROP = 2 };

__device__ __forceinline__ uint64_t policy_first() {
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ uint64_t policy_last() {
    uint64_t p;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
    return p;
}
__device__ __forceinline__ uint4 load16(const uint4 *p, bool hint, uint64_t pol) {
    if (!hint) return *p;
    uint4 v;
    asm volatile("ld.global.L1::no_allocate.L2::cache_hint.v4.u32 {%0,%1,%2,%3}, [%4], %5;"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p), "l"(pol));
    return v;
}
__device__ __forceinline__ void store8(uint64_t *p, uint64_t v, bool hint, uint64_t pol) {
    if (!hint) {
        *p = v;
        return;
    }
    asm volatile("st.global.L2::cache_hint.u64 [%0], %1, %2;" ::"l"(p), "l"(v), "l"(pol) : "memory");
}
__device__ __forceinline__ void store16(uint4 *p, uint4 v, bool hint, uint64_t pol) {
    if (!hint) {
        *p = v;
        return;
    }
    asm volatile("st.global.L2::cache_hint.v4.u32 [%0], {%1,%2,%3,%4}, %5;" ::"l"(p), "r"(v.x), "r"(v.y), "r"(v.z),
                 "r"(v.w), "l"(pol)
                 : "memory");
}

/* in (m pairs of items) -> out; 16 bytes a thread a step */
__global__ void copy_kernel(const uint4 *in, uint4 *out, size_t m) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (size_t)gridDim.x * blockDim.x) out[i] = in[i];
}

/* the count: reads every pair, a word a warp (nothing but a sum, so the reads stay; no atomics, which at a word a
 * thread cost more than the reads) */
__global__ void count_kernel(const uint4 *in, size_t m, unsigned *sums) {
    unsigned s = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = in[i];
        s += v.x & 1u;
    }
    s = __reduce_add_sync(0xffffffffu, s);
    if (threadIdx.x % 32 == 0) sums[blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32] = s;
}

/* pair i: its even item to kept[i], its odd one to rejected[i] */
template <int MODE> __global__ void split_kernel(const uint4 *in, uint64_t *kept, uint64_t *rejected, size_t m) {
    const uint64_t first = MODE != L2_PLAIN ? policy_first() : 0, last = MODE != L2_PLAIN ? policy_last() : 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < m; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = load16(in + i, MODE != L2_PLAIN, first);
        store8(kept + i, (uint64_t)v.y << 32 | v.x, MODE != L2_PLAIN, first);
        store8(rejected + i, (uint64_t)v.w << 32 | v.z, MODE != L2_PLAIN, last);
    }
}

/* the temporary (m items, as pairs) behind the kept group; DROP discards each 128-byte line once read */
template <int MODE> __global__ void behind_kernel(const uint4 *tmp, uint4 *out, size_t pairs) {
    const uint64_t first = MODE != L2_PLAIN ? policy_first() : 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < pairs; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 v = load16(tmp + i, MODE != L2_PLAIN, first);
        store16(out + i, v, MODE != L2_PLAIN, first);
        if (MODE == L2_DROP) {
            __syncwarp(); /* the warp's 512 bytes are read: four lines */
            if (threadIdx.x % 8 == 0 && i + 8 <= pairs) asm volatile("discard.global.L2 [%0], 128;" ::"l"(tmp + i) : "memory");
        }
    }
}

struct midpoint_above {
    int64_t mid;
    __device__ bool operator()(int64_t x) const { return x > mid; }
};

__global__ void fill_kernel(uint64_t *p, size_t n, uint64_t seed) {
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        uint64_t x = (i + 1) * 0x9e3779b97f4a7c15ull ^ seed;
        x ^= x >> 31;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 29;
        p[i] = x;
    }
}

int main(int argc, char **argv) {
    int lo = 20, hi = 25;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (!strcmp(argv[i], "--reps")) g_reps = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--min-log2")) lo = atoi(argv[i + 1]);
        else if (!strcmp(argv[i], "--max-log2")) hi = atoi(argv[i + 1]);
    }
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    tune_flush_init();
    printf("# %s, L2 %d MB, reps %d (median); 8-byte items, half kept\n", prop.name, prop.l2CacheSize >> 20, g_reps);
    printf("variant,n,time_us,of_copy,x_cub,spread\n");
    const size_t nmax = (size_t)1 << hi;
    uint64_t *in, *out, *tmp;
    unsigned *sums;
    unsigned long long *count;
    CK(cudaMalloc(&in, nmax * 8));
    CK(cudaMalloc(&out, nmax * 8));
    CK(cudaMalloc(&tmp, nmax * 4));
    CK(cudaMalloc(&sums, (size_t)prop.multiProcessorCount * 8 * 8 * sizeof(unsigned)));
    CK(cudaMalloc(&count, 8));
    fill_kernel<<<1024, 256>>>(in, nmax, 12345);
    size_t cub_bytes = 0;
    CK(cub::DevicePartition::If(nullptr, cub_bytes, (int64_t *)in, (int64_t *)out, count, (int64_t)nmax, midpoint_above{0}));
    void *cub_tmp;
    CK(cudaMalloc(&cub_tmp, cub_bytes + 256));
    const int grid = prop.multiProcessorCount * 8;
    for (int lg = lo; lg <= hi; lg++) {
        const size_t n = (size_t)1 << lg, m = n / 2; /* m pairs */
        size_t bytes = cub_bytes;
        const timing cub = time_it([&] {
            CK(cub::DevicePartition::If(cub_tmp, bytes, (int64_t *)in, (int64_t *)out, count, (int64_t)n, midpoint_above{0}));
        });
        const timing copy = time_it([&] { copy_kernel<<<grid, 256>>>((const uint4 *)in, (uint4 *)out, m); });
        const timing count_alone = time_it([&] { count_kernel<<<grid, 256>>>((const uint4 *)in, m, sums); });
        const timing cnt = time_it([&] {
            count_kernel<<<grid, 256>>>((const uint4 *)in, m, sums);
            split_kernel<L2_PLAIN><<<grid, 256>>>((const uint4 *)in, out, out + m, m);
        });
        auto temp = [&](auto mode) {
            constexpr int MODE = decltype(mode)::value;
            return time_it([&] {
                split_kernel<MODE><<<grid, 256>>>((const uint4 *)in, out, tmp, m);
                behind_kernel<MODE><<<grid, 256>>>((const uint4 *)tmp, (uint4 *)(out + m), m / 2);
            });
        };
        const timing t0 = temp(std::integral_constant<int, L2_PLAIN>());
        const timing t1 = temp(std::integral_constant<int, L2_HINTS>());
        const timing t2 = temp(std::integral_constant<int, L2_DROP>());
        CK(cudaGetLastError());
        const struct { const char *name; timing t; } rows[] = {{"copy", copy}, {"cub", cub}, {"count.alone", count_alone}, {"count", cnt},
                                                               {"temp", t0}, {"temp.last", t1}, {"temp.drop", t2}};
        for (const auto &r : rows)
            printf("%s,%zu,%.2f,%.3f,%.3f,%.3f\n", r.name, n, r.t.median_us, copy.median_us / r.t.median_us,
                   cub.median_us / r.t.median_us, r.t.spread);
        fflush(stdout);
    }
    return 0;
}
