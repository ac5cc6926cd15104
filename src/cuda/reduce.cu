/*
 * reduce.cu - the reduce primitive: one result, init (+) in[0] (+) ... (+) in[n-1], written to device memory,
 * as a tile program. The library runs it on the even-share driver (chain/even_share.cuh: no look-back, each
 * block folds a contiguous run of tiles); user operators (user_op.cu) on the single-pass driver.
 *
 * The tile program: reduce loads 256 threads x VECS 16-byte vectors (warp-striped, as the scan). With an operator
 * that commutes bit for bit on T (every built-in one but float min and max) each lane folds its own vectors and
 * one shuffle tree folds the lanes; otherwise it folds in element order: each vector serially, the vector totals
 * of a warp by an in-order shuffle tree, the warp's k-th totals one after another. The warp totals in order.
 * consume does nothing but in the last tile, where thread 0 writes prefix (+) aggregate to the result. Every
 * combination follows a fixed tree, so float sums repeat bit for bit on the same device (the even-share driver's
 * grouping depends on the device's SM count). n == 0 runs one empty tile: the result is init.
 *
 * Global memory: n reads and one write; 16 bytes of status per block. Depth: a block's run of tiles plus one
 * fold of the blocks' partials. Measured on an NVIDIA H200 (tools/tune/tune_scan.cu --types reduce, 2026-11-26,
 * x CUB's DeviceReduce::Sum): i32 0.99x at 2^28, 0.99-1.02x at 2^24, 1.1-1.2x at 2^16-2^22; i64 0.98-0.99x
 * at 2^28-2^30; u8 1.02x at 2^28-2^30. The single-pass driver ran the same program at 0.82-0.87x from 2^26.
 * Small calls (pscan bench, 2026-11-26, NVIDIA H100): calls of 2-16 tiles on the cluster driver, a partial tile
 * loaded by whole vectors, one 4 KiB tile up to 4 KiB: 4.1-6.2 us a call from 2^10 to 2^16 (was 4.4-6.9), 1.1-1.5x
 * CUB but 0.95-0.96x where CUB's single-tile kernel runs (i32 2^12, i64 2^11, u8 2^13: 0.2 us behind). Twenty-fifth
 * session (pscan bench, NVIDIA H200): the even-share kernel no longer divides in 64 bits before its first load, and
 * calls of 256-512 KiB take 32 KiB tiles: a one-tile call 3.5-3.9 us (0.2-0.35 us less), as fast as CUB's
 * single-tile kernel (equal medians at i32 2^12, i64 2^11, u8 2^13), 1.05-1.64x CUB elsewhere to 2^20; i64 2^16
 * 5.57 us (was 5.98), 1.36x a copy call. Twenty-sixth session (pscan bench, NVIDIA H200, docs/bench/h200-reduce.csv):
 * calls of 16-32 KiB as one tile, 0.3-0.4 us faster (i32 2^13 4.16 us, 1.12x a copy call, was 1.28x); calls up to
 * 128 MiB read without allocating in L1: 1.07-1.21x CUB from 2^22 elements to 128 MiB (i32 2^24 1.14x, was 0.95x); from
 * 256 MiB 0.97-0.99x CUB (i32 2^30 0.978x, i64 0.988x, u8 0.985x), where CUB reads 4.5 TB/s. Twenty-seventh
 * session (the same): calls of 2-16 tiles on the even-share driver's own cluster kernel, i64 2^13-2^16 1.20-1.30x a
 * copy call (were 1.29-1.38x); the no_allocate calls on 4 waves, i32 2^24 1.20x CUB, u8 2^26 1.22x.
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#ifndef __CUDACC_RTC__ /* NVRTC compiles the tile program alone, for user operators (user_op.cu) */
#include "chain/even_share.cuh"
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

/* How the large tier reads a whole vector (twenty-sixth session, H200, tune_scan --types reduce beside CUB's
 * DeviceReduce::Sum, L2 flushed, docs/bench/h200-reduce-load.csv): read-only and not allocated in L1
 * (ld.global.nc.L1::no_allocate: nothing is read twice) ran i32 2^24 at 1.15x CUB against 0.98-0.99x for a plain
 * load, i64 2^24 1.10x against 1.02x, u8 2^26 1.22x against 1.05x; at 256 MiB it tied, from 512 MiB it lost (i32
 * 2^28 0.94x against 0.99x, i64 2^26-2^30 0.93-0.96x against 0.98-1.00x). So calls up to PS_REDUCE_NOALLOC_BYTES
 * read so, larger ones by a plain load. __ldg (ld.global.nc, L1 allocated) was no faster than a plain load and lost
 * 0.3x CUB at i64; asking L2 for the next tile of a block's run as each starts (the prefetch hook) lost 0.15-0.35x. */
#ifndef PS_REDUCE_NOALLOC_BYTES
#define PS_REDUCE_NOALLOC_BYTES (128u << 20)
#endif

/* The even-share grid of those no_allocate calls, in waves of the resident blocks (a lagging block then holds a
 * quarter of what it did): H200, tune_scan --types rload, two runs, twenty-seventh session: i32 2^24 1.205-1.207x
 * CUB against 1.159-1.162 at one wave, u8 2^26 1.186-1.195 against 1.123-1.130, i64 2^24 1.096-1.110 against
 * 1.105-1.107. The plain loads beyond keep one wave: 2 and 4 were no faster from 256 MiB (i64 2^26 0.983 and 0.968
 * against 0.994). */
#define PS_REDUCE_NOALLOC_WAVES 4

/* LOAD 0: a plain load; 1: ld.global.nc.L1::no_allocate (the library's up to PS_REDUCE_NOALLOC_BYTES). Either
 * with the L2::256B prefetch-size hint lost (H200, twenty-seventh session, docs/bench/h200-reduce-rload.csv: the
 * plain load 0.92-0.98x CUB from 2^26 against 0.98-0.99x without, no_allocate no faster anywhere). */
template <int LOAD> static __device__ __forceinline__ uint4 ps_reduce_load(const uint4 *a) {
    if (LOAD == 0) return *a;
    uint4 v;
    asm("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
        : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
        : "l"(a));
    return v;
}

/* Whether Op says it commutes bit for bit on T: the built-in operators do, but for float min and max
 * (block/ops.cuh); a user's operator, which has no commutes(), is never assumed to. */
template <class Op, class T, class = void> struct ps_reduce_commutative {
    enum { value = 0 };
};
template <class Op, class T> struct ps_reduce_commutative<Op, T, decltype((void)Op::template commutes<T>())> {
    enum { value = Op::template commutes<T>() };
};

template <class T, class Op, int VECS_, int MIN_BLOCKS_ = 3, int LOAD_ = 0> struct ps_reduce_program {
    typedef T carry;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MIN_BLOCKS_,
        WARPS = THREADS / PS_WARP_LANES,
        VEC = 16 / sizeof(T),
        VECS = VECS_,
        LOAD = LOAD_,
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

    /* A tile's vectors, each folded in element order: acc[k] the thread's k-th vector. */
    static __device__ __forceinline__ void tile_vectors(const params &p, uint32_t id, T (&acc)[VECS]) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = identity();
        const uint64_t base = (uint64_t)id * TILE;
        const uint64_t left = p.n > base ? p.n - base : 0;
        const uint32_t valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        const bool fast = p.aligned && valid == (uint32_t)TILE;

        /* ---- load: every vector first; in a partial tile every whole vector still takes one 16-byte load (a
         * small call is one partial tile: element by element, a 1-byte reduce of 8 KiB cost 6.0 us a call on an
         * H200 against 4.8 for a full tile of 16 KiB) ---- */
        uint4 raw[VECS];
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const uint32_t pv = (warp * VECS + k) * PS_WARP_LANES + lane;
            if (fast || (p.aligned && (pv + 1) * VEC <= valid)) {
                raw[k] = ps_reduce_load<LOAD>(reinterpret_cast<const uint4 *>(p.in + base) + pv);
            } else if (pv * VEC >= valid) { /* past the end: no element by element code to run */
                T t[VEC];
#pragma unroll
                for (int i = 0; i < VEC; i++) t[i] = e;
                memcpy(&raw[k], t, sizeof raw[k]);
            } else {
                T t[VEC];
#pragma unroll
                for (int i = 0; i < VEC; i++) t[i] = pv * VEC + i < valid ? p.in[base + pv * VEC + i] : e;
                memcpy(&raw[k], t, sizeof raw[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T x[VEC];
            memcpy(x, &raw[k], sizeof raw[k]);
            acc[k] = x[0];
#pragma unroll
            for (int i = 1; i < VEC; i++) acc[k] = combine(acc[k], x[i]);
        }
    }

    /* A commutative operator: the thread's vectors folded pairwise (a fixed order, so float sums repeat bit for
     * bit). */
    static __device__ __forceinline__ T lane_total(T (&acc)[VECS]) {
#pragma unroll
        for (int d = 1; d < VECS; d <<= 1) /* log2(VECS) dependent steps */
#pragma unroll
            for (int k = 0; k + d < VECS; k += 2 * d) acc[k] = combine(acc[k], acc[k + d]);
        return acc[0];
    }

    /* The block's total of the warps' lane-0 values, in warp order. */
    static __device__ __forceinline__ T block_total(T running, smem &s) {
        if (threadIdx.x % PS_WARP_LANES == 0) s.warp_totals[threadIdx.x / PS_WARP_LANES] = running;
        __syncthreads();
        T aggregate = identity();
#pragma unroll
        for (int w = 0; w < WARPS; w++) aggregate = combine(aggregate, s.warp_totals[w]);
        return aggregate;
    }

    static __device__ __forceinline__ T reduce(const params &p, uint32_t id, local &, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES;
        T acc[VECS];
        tile_vectors(p, id, acc);
        /* ---- a commutative operator: each lane its own vectors, then one shuffle tree (16 times fewer shuffles);
         * otherwise element order: the lanes' k-th vectors by an in-order shuffle tree, k after k (running is
         * meaningful in lane 0) ---- */
        const ps_chain_combine<ps_reduce_program> op;
        if (ps_reduce_commutative<Op, T>::value)
            return block_total(ps_warp_reduce_to_lane0(lane_total(acc), lane, op), s);
        T running = identity();
#pragma unroll
        for (int k = 0; k < VECS; k++) running = combine(running, ps_warp_reduce_to_lane0(acc[k], lane, op));
        return block_total(running, s);
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, T prefix, T aggregate, local &,
                                                   smem &) {
        if (id == p.tiles - 1 && threadIdx.x == 0) *p.result = combine(prefix, aggregate);
    }
};

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_scan.cu and user_op.cu include the program alone */

/* Tiers by the call's bytes:
 * - up to PS_REDUCE_TINY_BYTES, one 4 KiB tile (a vector a thread: the one-tile call is all latency, and the fewer
 *   instructions the block runs the sooner it is done);
 * - up to PS_REDUCE_SMALL_BYTES, 4 vectors a thread at 8 blocks/SM (16 KiB tiles, up to 16 of them: one cluster,
 *   chain/cluster.cuh), except above one such tile and up to PS_REDUCE_ONE_TILE_BYTES, where one tile of 8 vectors
 *   beats a cluster of two (H200, tune_scan --types lat, three runs each, twenty-fifth session, us a call at 32
 *   KiB: i32 4.10-4.29 against 4.48-4.64, i64 4.26-4.38 against 4.61-4.64, u8 4.45-4.61 against 4.61-4.74; above
 *   32 KiB two tiles or more win again);
 * - up to PS_REDUCE_MID_BYTES, 8 vectors at 4 blocks/SM (32 KiB tiles, again up to 16 in a cluster: the same
 *   harness, 512 KiB in 5.34-5.50 us against 5.82-5.86 in 8 tiles of 64 KiB, i32 2^17 and i64 2^16; at 1 MiB the
 *   64 KiB tiles are as fast);
 * - beyond, PS_REDUCE_VECS at 3 blocks/SM (64 KiB tiles), read without allocating in L1 up to
 *   PS_REDUCE_NOALLOC_BYTES (above). */
#define PS_REDUCE_TINY_BYTES 4096u
#define PS_REDUCE_SMALL_BYTES (256u * 1024u)
#define PS_REDUCE_SMALL_VECS 4
#define PS_REDUCE_SMALL_MIN_BLOCKS 8
#define PS_REDUCE_MID_BYTES (512u * 1024u)
#define PS_REDUCE_MID_VECS 8
#define PS_REDUCE_MID_MIN_BLOCKS 4
/* one tile of PS_REDUCE_MID_VECS (32 KiB) */
#define PS_REDUCE_ONE_TILE_BYTES (16u * PS_REDUCE_MID_VECS * 256u)

static int reduce_vecs(uint64_t n, size_t elem_bytes) {
    const uint64_t bytes = n * elem_bytes;
    const uint64_t small_tile = (uint64_t)16 * PS_REDUCE_SMALL_VECS * 256;
    return bytes <= PS_REDUCE_TINY_BYTES                                    ? 1
           : bytes > small_tile && bytes <= PS_REDUCE_ONE_TILE_BYTES        ? PS_REDUCE_MID_VECS
           : bytes <= PS_REDUCE_SMALL_BYTES                                 ? PS_REDUCE_SMALL_VECS
           : bytes <= PS_REDUCE_MID_BYTES                                   ? PS_REDUCE_MID_VECS
                                                                            : PS_REDUCE_VECS;
}

static uint64_t reduce_tiles(uint64_t n, size_t elem_bytes) {
    const uint64_t tile = 16 / elem_bytes * (uint64_t)reduce_vecs(n, elem_bytes) * 256;
    return n == 0 ? 1 : ps_cuda_div_up(n, tile);
}

#if PS_CUDA_PART_ZERO /* per call, not per type: in part 0 of the split (cuda_ops.cuh) */
pscan_status ps_cuda_reduce_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = reduce_tiles(req->n, req->elem_bytes);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = ps_even_share_temp_bytes<uint64_t>(tiles);
    return PSCAN_SUCCESS;
}
#endif

template <class T, class Op> struct reduce_launch {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        switch (reduce_vecs(req->n, sizeof(T))) {
        case 1: return go<ps_reduce_program<T, Op, 1, PS_REDUCE_SMALL_MIN_BLOCKS> >(req, dev);
        case PS_REDUCE_SMALL_VECS: return go<ps_reduce_program<T, Op, PS_REDUCE_SMALL_VECS, PS_REDUCE_SMALL_MIN_BLOCKS> >(req, dev);
        case PS_REDUCE_MID_VECS: return go<ps_reduce_program<T, Op, PS_REDUCE_MID_VECS, PS_REDUCE_MID_MIN_BLOCKS> >(req, dev);
        default:
            if (req->n * sizeof(T) <= PS_REDUCE_NOALLOC_BYTES)
                return go<ps_reduce_program<T, Op, PS_REDUCE_VECS, 3, 1> >(req, dev);
            return go<ps_reduce_program<T, Op, PS_REDUCE_VECS> >(req, dev);
        }
    }
    template <class P> static cudaError_t go(const ps_request *req, const ps_cuda_device *dev) {
        typename P::params p;
        memset(&p, 0, sizeof p);
        p.in = (const T *)req->in;
        p.result = (T *)req->out;
        p.n = req->n;
        p.tiles = (uint32_t)reduce_tiles(req->n, sizeof(T));
        static_assert(P::TILE == 16 / sizeof(T) * P::VECS * 256, "reduce_tiles counts the program's tiles");
        p.aligned = ((uintptr_t)req->in & 15u) == 0;
        memcpy(&p.init, req->init.bytes, sizeof(T));
        return ps_even_share<P>(p, p.tiles, dev->sm_count, P::LOAD == 1 ? PS_REDUCE_NOALLOC_WAVES : 1, req->temp,
                                dev->stream);
    }
};

PS_CUDA_PART_DECLARE(ps_cuda_reduce_part);
cudaError_t PS_CUDA_PART_FN(ps_cuda_reduce_part)(const ps_request *req, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<reduce_launch>::run(req, dev); /* this part's types (cuda_ops.cuh: the split) */
}
#if PS_CUDA_PART_ZERO
cudaError_t ps_cuda_reduce_run(const ps_request *req, const ps_cuda_device *dev) {
    PS_CUDA_PART_CALL(ps_cuda_reduce_part, req, dev)
}
#endif

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
