/*
 * warp_scan.cuh - warp-level building blocks: shuffles of any 1..8-byte element, inclusive scan and
 * all-reduce across the 32 lanes of a full warp. Internal; usable by every algorithm file.
 *
 * Work and depth: log2(32) = 5 shuffle steps, no shared memory, no __syncthreads. All 32 lanes must call.
 */
#ifndef PSCAN_WARP_SCAN_CUH
#define PSCAN_WARP_SCAN_CUH

#include <string.h>

#include "cuda_ops.cuh"

#define PS_WARP_THREADS 32
#define PS_WARP_FULL_MASK 0xffffffffu

/* __shfl_*_sync move 32- or 64-bit words; narrower elements travel in the low bytes of a 32-bit word. */
template <class T> struct ps_warp_word {
    typedef unsigned int type;
};
template <> struct ps_warp_word<int64_t> {
    typedef unsigned long long type;
};
template <> struct ps_warp_word<uint64_t> {
    typedef unsigned long long type;
};
template <> struct ps_warp_word<double> {
    typedef unsigned long long type;
};

template <class T> __device__ __forceinline__ typename ps_warp_word<T>::type ps_warp_to_word(T v) {
    typename ps_warp_word<T>::type w = 0;
    memcpy(&w, &v, sizeof(T));
    return w;
}
template <class T> __device__ __forceinline__ T ps_warp_from_word(typename ps_warp_word<T>::type w) {
    T v;
    memcpy(&v, &w, sizeof(T));
    return v;
}

template <class T> __device__ __forceinline__ T ps_warp_shfl_up(T v, unsigned delta) {
    return ps_warp_from_word<T>(__shfl_up_sync(PS_WARP_FULL_MASK, ps_warp_to_word(v), delta));
}
template <class T> __device__ __forceinline__ T ps_warp_shfl_xor(T v, int mask) {
    return ps_warp_from_word<T>(__shfl_xor_sync(PS_WARP_FULL_MASK, ps_warp_to_word(v), mask));
}
template <class T> __device__ __forceinline__ T ps_warp_shfl(T v, int lane) {
    return ps_warp_from_word<T>(__shfl_sync(PS_WARP_FULL_MASK, ps_warp_to_word(v), lane));
}

/* Inclusive scan across the warp, in lane order: lane k gets x[0] (+) ... (+) x[k] (Kogge-Stone). */
template <class Op, class T> __device__ __forceinline__ T ps_warp_scan_inclusive(T x, unsigned lane) {
#pragma unroll
    for (unsigned d = 1; d < PS_WARP_THREADS; d <<= 1) {
        T y = ps_warp_shfl_up(x, d);
        if (lane >= d) x = Op::combine(y, x);
    }
    return x;
}

/* Every lane gets x[0] (+) ... (+) x[31] (butterfly; the operators are commutative). */
template <class Op, class T> __device__ __forceinline__ T ps_warp_reduce(T x) {
#pragma unroll
    for (int d = PS_WARP_THREADS / 2; d > 0; d >>= 1) x = Op::combine(x, ps_warp_shfl_xor(x, d));
    return x;
}

#endif /* PSCAN_WARP_SCAN_CUH */
