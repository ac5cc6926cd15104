/*
 * reduce.cu - the reduce primitive: one result, init (+) in[0] (+) ... (+) in[n-1], written to device memory,
 * as a tile program on the single-pass chain driver (chain/single_pass.cuh).
 *
 * The tile program: reduce loads 256 threads x VECS 16-byte vectors (warp-striped, as the scan) and folds
 * them in element order: each vector serially, the vector totals of a warp by an in-order shuffle tree, the
 * warp's k-th totals one after another, the warp totals in order. consume does nothing but in the last
 * tile, where thread 0 writes prefix (+) aggregate to the result. Nothing is ever assumed commutative, and
 * every combination follows a fixed tree, so float sums repeat bit for bit (the driver's look-back is fixed
 * too). n == 0 runs one empty tile: the result is init.
 *
 * Global memory: n reads and one write; 32 bytes of status per tile. Depth: one tile plus n / (tile * 64)
 * look-back rounds. Measured (tools/tune/tune_scan.cu, 2026-11-22), speed against CUB's DeviceReduce::Sum:
 * NVIDIA H100 1.2-1.3x at 2^16-2^20, 0.95-1.00x at 2^24-2^30; NVIDIA H200 1.1-1.3x, and 0.88-0.96x from 2^24.
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#ifndef __CUDACC_RTC__ /* NVRTC compiles the tile program alone, for user operators (user_op.cu) */
#include "block/ops.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"
#endif

/* 64 KiB tiles at 3 blocks/SM: a reduce reads only, so it needs twice the scan's tile rate for the same bytes;
 * the sweep (docs/performance.md) found 16 vectors per thread at 3 blocks/SM on a par with CUB at large n. */
#ifndef PS_REDUCE_VECS
#define PS_REDUCE_VECS 16
#endif

template <class T, class Op, int VECS_, int MIN_BLOCKS_ = 3> struct ps_reduce_program {
    typedef T carry;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MIN_BLOCKS_,
        WARPS = THREADS / PS_WARP_LANES,
        VEC = 16 / sizeof(T),
        VECS = VECS_,
        TILE = VEC * VECS * THREADS
    };
    struct params {
        const T *in;
        T *result;
        uint64_t n;
        uint32_t tiles;
        int aligned;
        T init;
    };
    struct smem {
        T warp_totals[WARPS];
    };
    struct local {};

    static __device__ __forceinline__ T combine(T a, T b) { return Op::combine(a, b); }
    static __device__ __forceinline__ T identity() { return Op::template identity<T>(); }
    static __device__ __forceinline__ T initial(const params &p) { return p.init; }

    static __device__ __forceinline__ T reduce(const params &p, uint32_t id, local &, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = identity();
        const uint64_t base = (uint64_t)id * TILE;
        const uint64_t left = p.n > base ? p.n - base : 0;
        const uint32_t valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        const bool fast = p.aligned && valid == (uint32_t)TILE;

        /* ---- load: every vector first ---- */
        uint4 raw[VECS];
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const uint32_t pv = (warp * VECS + k) * PS_WARP_LANES + lane;
            if (fast) {
                raw[k] = reinterpret_cast<const uint4 *>(p.in + base)[pv];
            } else {
                T t[VEC];
#pragma unroll
                for (int i = 0; i < VEC; i++) t[i] = pv * VEC + i < valid ? p.in[base + pv * VEC + i] : e;
                memcpy(&raw[k], t, sizeof raw[k]);
            }
        }

        /* ---- fold in element order: vectors, lanes, k, warps ---- */
        T running = e;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T x[VEC];
            memcpy(x, &raw[k], sizeof raw[k]);
            T acc = x[0];
#pragma unroll
            for (int i = 1; i < VEC; i++) acc = combine(acc, x[i]);
            acc = ps_warp_reduce_to_lane0(acc, lane, ps_chain_combine<ps_reduce_program>());
            running = combine(running, acc); /* meaningful in lane 0 */
        }
        if (lane == 0) s.warp_totals[warp] = running;
        __syncthreads();
        T aggregate = e;
#pragma unroll
        for (int w = 0; w < WARPS; w++) aggregate = combine(aggregate, s.warp_totals[w]);
        return aggregate;
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, T prefix, T aggregate, local &,
                                                   smem &) {
        if (id == p.tiles - 1 && threadIdx.x == 0) *p.result = combine(prefix, aggregate);
    }
};

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_scan.cu and user_op.cu include the program alone */

template <class T> struct reduce_policy {
    enum { TILE = 16 / sizeof(T) * PS_REDUCE_VECS * 256 };
};

static uint64_t reduce_tiles(uint64_t n, size_t elem_bytes) {
    const uint64_t tile = elem_bytes == 1   ? (uint64_t)reduce_policy<uint8_t>::TILE
                          : elem_bytes == 2 ? (uint64_t)reduce_policy<uint16_t>::TILE
                          : elem_bytes == 4 ? (uint64_t)reduce_policy<uint32_t>::TILE
                                            : (uint64_t)reduce_policy<uint64_t>::TILE;
    return n == 0 ? 1 : ps_cuda_div_up(n, tile);
}

pscan_status ps_cuda_reduce_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = reduce_tiles(req->n, req->elem_bytes);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = ps_chain_temp_bytes<uint64_t>(tiles);
    return PSCAN_SUCCESS;
}

template <class T, class Op> struct reduce_launch {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        typedef ps_reduce_program<T, Op, PS_REDUCE_VECS> P;
        typename P::params p;
        memset(&p, 0, sizeof p);
        p.in = (const T *)req->in;
        p.result = (T *)req->out;
        p.n = req->n;
        p.tiles = (uint32_t)reduce_tiles(req->n, sizeof(T));
        p.aligned = ((uintptr_t)req->in & 15u) == 0;
        memcpy(&p.init, req->init.bytes, sizeof(T));
        return ps_chain_single_pass<P>(p, p.tiles, req->temp, dev->stream);
    }
};

cudaError_t ps_cuda_reduce_run(const ps_request *req, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<reduce_launch>::run(req, dev);
}

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
