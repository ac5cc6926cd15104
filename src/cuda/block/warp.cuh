/*
 * block/warp.cuh - warp-level pieces for a value of any trivially copyable type up to 64 bytes (an element,
 * or a tile program's carry: a pair, an affine map): shuffles word by word, and an in-order reduction.
 * Device-level code only. Internal.
 *
 * In order means the result is x[0] (+) x[1] (+) ... (+) x[31] for a non-commutative operator too, and the
 * tree is fixed, so float results repeat bit for bit. All 32 lanes must call.
 */
#ifndef PSCAN_BLOCK_WARP_CUH
#define PSCAN_BLOCK_WARP_CUH

#include <string.h>

#define PS_WARP_LANES 32
#define PS_WARP_ALL 0xffffffffu

/* The alignment every dynamic shared-memory array is declared with. A kernel's dynamic array starts after its
 * static shared variables, at the next multiple of the alignment it is declared with: declared at 16 bytes, the
 * chain driver's (behind a few static words) began 32-48 bytes into a 128-byte row, and the same scan ran 7-8%
 * slower than with its tile in static memory (H200; docs/performance.md, fifteenth session). */
#ifndef PS_DYNAMIC_SMEM_ALIGN
#define PS_DYNAMIC_SMEM_ALIGN 128
#endif

template <class T> struct ps_words {
    enum { COUNT = (sizeof(T) + 3) / 4 };
    unsigned int w[COUNT];
};

template <class T> __device__ __forceinline__ T ps_shfl_idx(T v, int src) {
    ps_words<T> a, b;
    a.w[ps_words<T>::COUNT - 1] = 0;
    memcpy(a.w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < ps_words<T>::COUNT; i++) b.w[i] = __shfl_sync(PS_WARP_ALL, a.w[i], src);
    memcpy(&v, b.w, sizeof(T));
    return v;
}
template <class T> __device__ __forceinline__ T ps_shfl_up(T v, unsigned d) {
    ps_words<T> a, b;
    a.w[ps_words<T>::COUNT - 1] = 0;
    memcpy(a.w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < ps_words<T>::COUNT; i++) b.w[i] = __shfl_up_sync(PS_WARP_ALL, a.w[i], d);
    memcpy(&v, b.w, sizeof(T));
    return v;
}
template <class T> __device__ __forceinline__ T ps_shfl_down(T v, unsigned d) {
    ps_words<T> a, b;
    a.w[ps_words<T>::COUNT - 1] = 0;
    memcpy(a.w, &v, sizeof(T));
#pragma unroll
    for (int i = 0; i < ps_words<T>::COUNT; i++) b.w[i] = __shfl_down_sync(PS_WARP_ALL, a.w[i], d);
    memcpy(&v, b.w, sizeof(T));
    return v;
}

/* Inclusive scan across the warp in lane order (Kogge-Stone): lane k gets x[0] (+) ... (+) x[k]. combine is
 * any callable combine(earlier, later). */
template <class T, class Combine> __device__ __forceinline__ T ps_warp_inclusive(T x, unsigned lane, Combine combine) {
#pragma unroll
    for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) {
        const T y = ps_shfl_up(x, d);
        if (lane >= d) x = combine(y, x);
    }
    return x;
}

/* The same for an idempotent operator (combine(x, x) == x bit for bit: min, max, and, or): a lane below d gets its
 * own value back from shfl_up, and combining it with itself changes nothing, so every lane combines without the
 * lane test (one select and one compare fewer a step). */
template <class T, class Combine>
__device__ __forceinline__ T ps_warp_inclusive_idempotent(T x, Combine combine) {
#pragma unroll
    for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) x = combine(ps_shfl_up(x, d), x);
    return x;
}

/* x[0] (+) ... (+) x[31] in lane order, in lane 0 (other lanes hold partial results): a fixed tree of
 * shfl_down steps in which lane i always combines itself (earlier) with lane i + d (later). */
template <class T, class Combine> __device__ __forceinline__ T ps_warp_reduce_to_lane0(T x, unsigned lane, Combine combine) {
#pragma unroll
    for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) {
        const T y = ps_shfl_down(x, d);
        if (lane + d < PS_WARP_LANES) x = combine(x, y);
    }
    return x;
}

#endif /* PSCAN_BLOCK_WARP_CUH */
