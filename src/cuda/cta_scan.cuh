/*
 * cta_scan.cuh - block-level (CTA) building blocks on top of warp_scan.cuh. Internal; usable by every
 * algorithm file.
 *
 *   ps_cta_scan<THREADS, Op, T>          exclusive scan and reduction of one value per thread:
 *                                        warp scans, a scan of the warp totals by warp 0, a uniform add.
 *   ps_cta_tile<T, Op, THREADS, ITEMS>   one tile of THREADS * ITEMS elements: a coalesced load into shared
 *                                        memory (16-byte vectors where aligned), a serial scan of ITEMS
 *                                        consecutive elements per thread, ps_cta_scan of the thread totals,
 *                                        and a coalesced store. Full and partial tiles, forward and reverse,
 *                                        all go through the one body (see scan_problem.cuh).
 *
 * Storage structs live in __shared__ memory supplied by the kernel. Between two uses of the same storage
 * there must be a __syncthreads (each function below ends with one where the next use could race).
 */
#ifndef PSCAN_CTA_SCAN_CUH
#define PSCAN_CTA_SCAN_CUH

#include <stdint.h>

#include "scan_problem.cuh"
#include "warp_scan.cuh"

template <int THREADS, class Op, class T> struct ps_cta_scan {
    enum { WARPS = THREADS / PS_WARP_THREADS };
    static_assert(THREADS % PS_WARP_THREADS == 0 && WARPS <= PS_WARP_THREADS, "THREADS: 32..1024, whole warps");

    struct storage {
        T warp_totals[WARPS];
    };

    /* Returns x[0] (+) ... (+) x[t-1] for thread t (the identity for thread 0) and sets *total to the
     * block's x[0] (+) ... (+) x[THREADS-1]. */
    static __device__ __forceinline__ T exclusive(T x, T *total, storage &s) {
        const unsigned lane = threadIdx.x % PS_WARP_THREADS, warp = threadIdx.x / PS_WARP_THREADS;
        const T e = Op::template identity<T>();
        T inclusive = ps_warp_scan_inclusive<Op>(x, lane);
        if (lane == PS_WARP_THREADS - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        if (warp == 0) {
            T w = lane < WARPS ? s.warp_totals[lane] : e;
            w = ps_warp_scan_inclusive<Op>(w, lane);
            if (lane < WARPS) s.warp_totals[lane] = w;
        }
        __syncthreads();
        T within = ps_warp_shfl_up(inclusive, 1);
        if (lane == 0) within = e;
        *total = s.warp_totals[WARPS - 1];
        T result = warp > 0 ? Op::combine(s.warp_totals[warp - 1], within) : within;
        __syncthreads(); /* s may be reused at once */
        return result;
    }

    /* Every thread gets x[0] (+) ... (+) x[THREADS-1]. */
    static __device__ __forceinline__ T reduce(T x, storage &s) {
        const unsigned lane = threadIdx.x % PS_WARP_THREADS, warp = threadIdx.x / PS_WARP_THREADS;
        x = ps_warp_reduce<Op>(x);
        if (lane == 0) s.warp_totals[warp] = x;
        __syncthreads();
        T total = s.warp_totals[0];
        for (int w = 1; w < WARPS; w++) total = Op::combine(total, s.warp_totals[w]);
        __syncthreads();
        return total;
    }
};

/* 16 bytes: the widest load a thread can issue; VEC elements of T. */
template <class T> struct ps_cta_vector {
    enum { VEC = 16 / sizeof(T) };
    union {
        uint4 raw;
        T items[VEC];
    };
};

template <class T, class Op, int THREADS, int ITEMS> struct ps_cta_tile {
    enum { TILE = THREADS * ITEMS, ROW = ITEMS + 1, VEC = ps_cta_vector<T>::VEC };
    static_assert(ITEMS % VEC == 0, "ITEMS must be a multiple of the 16-byte vector width");

    /* Thread t's ITEMS consecutive elements sit in one padded row, so that the serial phase, where thread t
     * reads row t, does not make all threads of a warp hit the same bank. */
    struct storage {
        T items[THREADS * ROW];
        typename ps_cta_scan<THREADS, Op, T>::storage scan;
    };
    static __device__ __forceinline__ int slot(int i) { return i + i / ITEMS; }

    /* Reads the logical range [start, start + len), len <= TILE, into s in logical order; the identity pads
     * the rest. Threads read physical offsets q, 16 bytes at a time where the range's start is aligned. */
    static __device__ __forceinline__ void load(const ps_cuda_problem<T> &p, uint64_t start, int len, storage &s) {
        const T e = Op::template identity<T>();
        const T *base = p.in + p.phys_base(start, len);
        const bool aligned = ((uintptr_t)base % 16) == 0;
#pragma unroll
        for (int k = 0; k < ITEMS / VEC; k++) {
            const int q = (k * THREADS + (int)threadIdx.x) * VEC;
            ps_cta_vector<T> v;
            if (aligned && q + VEC <= len) {
                v.raw = *(const uint4 *)(base + q);
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++) v.items[j] = q + j < len ? base[q + j] : e;
            }
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const int logical = p.reverse ? (q + j < len ? len - 1 - (q + j) : q + j) : q + j;
                s.items[slot(logical)] = v.items[j];
            }
        }
        __syncthreads();
    }

    /* Scans the tile in s in place: element i becomes carry (+) x[0] (+) ... (+) x[i] (inclusive) or
     * carry (+) x[0] (+) ... (+) x[i-1] (exclusive). Returns the tile's own total x[0] (+) ... (+) x[TILE-1],
     * without carry (padding is the identity, so a partial tile's total is that of its len elements). */
    static __device__ __forceinline__ T scan(storage &s, T carry, int exclusive) {
        T x[ITEMS];
        T *row = s.items + threadIdx.x * ROW;
        T sum = Op::template identity<T>();
        /* ---- thread: reduce my ITEMS consecutive elements ---- */
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            x[j] = row[j];
            sum = Op::combine(sum, x[j]);
        }
        /* ---- block: exclusive scan of the thread totals ---- */
        T total;
        T run = Op::combine(carry, ps_cta_scan<THREADS, Op, T>::exclusive(sum, &total, s.scan));
        /* ---- thread: rescan my elements from my carry-in ---- */
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            T next = Op::combine(run, x[j]);
            row[j] = exclusive ? run : next;
            run = next;
        }
        __syncthreads();
        return total;
    }

    /* Writes s's logical range [start, start + len) to out, the mirror of load. Ends with a barrier so s can
     * be loaded again at once. */
    static __device__ __forceinline__ void store(const ps_cuda_problem<T> &p, uint64_t start, int len, storage &s) {
        T *base = p.out + p.phys_base(start, len);
        const bool aligned = ((uintptr_t)base % 16) == 0;
#pragma unroll
        for (int k = 0; k < ITEMS / VEC; k++) {
            const int q = (k * THREADS + (int)threadIdx.x) * VEC;
            ps_cta_vector<T> v;
#pragma unroll
            for (int j = 0; j < VEC; j++) {
                const int logical = p.reverse ? (q + j < len ? len - 1 - (q + j) : q + j) : q + j;
                v.items[j] = s.items[slot(logical)];
            }
            if (aligned && q + VEC <= len) {
                *(uint4 *)(base + q) = v.raw;
            } else {
#pragma unroll
                for (int j = 0; j < VEC; j++)
                    if (q + j < len) base[q + j] = v.items[j];
            }
        }
        __syncthreads();
    }
};

#endif /* PSCAN_CTA_SCAN_CUH */
