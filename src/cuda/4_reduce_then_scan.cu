/*
 * 4_reduce_then_scan.cu - reduce first, scan once: the output is written a single time.
 *
 * Idea. Algorithm 3 writes every element twice (the tile scan, then the uniform add). Here the grid is a
 * fixed G = 4 blocks per SM, and block b owns a contiguous range of whole tiles:
 *   Upsweep phase.   Each block reduces its range to one value (16-byte loads, 4 in flight per thread,
 *                    warp shuffles, one partial per block). Nothing is written but the G partials.
 *   Spine phase.     One block scans the G partials, exclusive, seeded with the initial value: each
 *                    becomes the carry into its block's range.
 *   Downsweep phase. Each block walks its range tile by tile (cta_scan.cuh: 256 threads x 16 items for
 *                    4-byte types, coalesced 16-byte loads and stores, a serial scan per thread, warp
 *                    shuffles across threads), seeding each tile with the running carry.
 * The spine is the downsweep kernel itself, run by one block over the partials. No recursion: G is at most
 * a few hundred, always within one block's walk.
 *
 * Work and depth. O(n): about 3n combines; depth O(n / G) (each block's walk is sequential over its tiles).
 * Memory passes. About 3n: read n (upsweep) + read n and write n (downsweep), plus 2G partials.
 * Limits. n < 2^64; the upsweep reduces in a different order than the scan, so float results differ by
 * rounding between algorithms (the operators are commutative, which the upsweep relies on).
 * Measured. NVIDIA H100 80GB HBM3 (CUDA 13.0), 2^28 i32, inclusive sum, pscan bench, 2026-11-21:
 *   1.351 ms, 1589 GB/s effective = 0.53 of a device copy (2972 GB/s) in the same run; 3n traffic caps it
 *   at 0.67.
 */
#include "cta_scan.cuh"

#define RTS_THREADS 256
#define RTS_BLOCKS_PER_SM 4
#define RTS_UNROLL 4 /* 16-byte loads in flight per thread in the upsweep */

template <class T> struct rts_shape {
    enum { ITEMS = ps_cuda_tile_items(sizeof(T)), TILE = RTS_THREADS * ITEMS };
};

/* The grid: G blocks of tiles_per_block tiles each (the last one shorter). */
typedef struct rts_grid {
    uint64_t tiles_per_block;
    unsigned blocks;
} rts_grid;

static rts_grid rts_grid_of(uint64_t n, uint64_t tile, const ps_cuda_device *dev) {
    const uint64_t tiles = ps_cuda_div_up(n, tile);
    uint64_t g = (uint64_t)(dev->sm_count > 0 ? dev->sm_count : 1) * RTS_BLOCKS_PER_SM;
    if (g > tiles) g = tiles;
    rts_grid grid;
    grid.tiles_per_block = ps_cuda_div_up(tiles, g);
    grid.blocks = (unsigned)ps_cuda_div_up(tiles, grid.tiles_per_block);
    return grid;
}

/* Upsweep: partials[b] = the combination of every element of block b's logical range, in any order. */
template <class T, class Op>
__global__ __launch_bounds__(RTS_THREADS) void rts_upsweep(ps_cuda_problem<T> p, T *partials,
                                                           uint64_t tiles_per_block) {
    typedef ps_cta_vector<T> vec;
    __shared__ typename ps_cta_scan<RTS_THREADS, Op, T>::storage s;
    const uint64_t span = tiles_per_block * rts_shape<T>::TILE;
    const uint64_t start = (uint64_t)blockIdx.x * span;
    const uint64_t len = p.n - start < span ? p.n - start : span;
    const T *base = p.in + p.phys_base(start, len);
    const int t = threadIdx.x;
    T acc = Op::template identity<T>();

    /* ---- scalar head up to 16-byte alignment, then vectors, then the scalar tail ---- */
    const bool can_vectorise = (uintptr_t)base % sizeof(T) == 0; /* else all goes to the scalar tail */
    uint64_t head = can_vectorise ? (uint64_t)((16 - (uintptr_t)base % 16) % 16) / sizeof(T) : 0;
    if (head > len) head = len;
    if (t < head) acc = base[t];
    const vec *v = (const vec *)(base + head);
    const uint64_t vectors = can_vectorise ? (len - head) / vec::VEC : 0;
    uint64_t i = t;
    for (; i + (RTS_UNROLL - 1) * RTS_THREADS < vectors; i += RTS_UNROLL * RTS_THREADS) {
        vec r[RTS_UNROLL];
#pragma unroll
        for (int u = 0; u < RTS_UNROLL; u++) r[u].raw = v[i + u * RTS_THREADS].raw;
#pragma unroll
        for (int u = 0; u < RTS_UNROLL; u++)
#pragma unroll
            for (int j = 0; j < vec::VEC; j++) acc = Op::combine(acc, r[u].items[j]);
    }
    for (; i < vectors; i += RTS_THREADS) {
        vec r;
        r.raw = v[i].raw;
#pragma unroll
        for (int j = 0; j < vec::VEC; j++) acc = Op::combine(acc, r.items[j]);
    }
    for (uint64_t k = head + vectors * vec::VEC + t; k < len; k += RTS_THREADS) acc = Op::combine(acc, base[k]);

    /* ---- block reduce ---- */
    acc = ps_cta_scan<RTS_THREADS, Op, T>::reduce(acc, s);
    if (t == 0) partials[blockIdx.x] = acc;
}

/* Downsweep (and spine): block b scans its tiles in order, seeded with carries[b] (p.init if NULL). */
template <class T, class Op>
__global__ __launch_bounds__(RTS_THREADS) void rts_downsweep(ps_cuda_problem<T> p, const T *carries,
                                                             uint64_t tiles_per_block) {
    typedef ps_cta_tile<T, Op, RTS_THREADS, rts_shape<T>::ITEMS> cta;
    __shared__ typename cta::storage s;
    T carry = carries ? carries[blockIdx.x] : p.init;
    uint64_t start = (uint64_t)blockIdx.x * tiles_per_block * cta::TILE;
    for (uint64_t k = 0; k < tiles_per_block && start < p.n; k++, start += cta::TILE) {
        const int len = (int)(p.n - start < (uint64_t)cta::TILE ? p.n - start : (uint64_t)cta::TILE);
        cta::load(p, start, len, s);
        carry = Op::combine(carry, cta::scan(s, carry, p.exclusive));
        cta::store(p, start, len, s);
    }
}

template <class T, class Op> struct rts_scan {
    static cudaError_t run(const ps_request *call, const ps_cuda_device *dev) {
        const ps_cuda_problem<T> p = ps_cuda_problem_of<T>(call);
        const rts_grid grid = rts_grid_of(p.n, rts_shape<T>::TILE, dev);
        if (grid.blocks == 1) { /* one block: a single pass seeded with init */
            rts_downsweep<T, Op><<<1, RTS_THREADS, 0, dev->stream>>>(p, (const T *)0, grid.tiles_per_block);
            PS_CUDA_CHECK_LAUNCH();
            return cudaSuccess;
        }
        T *partials = (T *)call->temp;

        /* ---- upsweep phase: reduce each block's range to a partial ---- */
        rts_upsweep<T, Op><<<grid.blocks, RTS_THREADS, 0, dev->stream>>>(p, partials, grid.tiles_per_block);
        PS_CUDA_CHECK_LAUNCH();

        /* ---- spine phase: exclusive scan of the partials from init, by one block ---- */
        ps_cuda_problem<T> spine;
        spine.in = partials;
        spine.out = partials;
        spine.n = grid.blocks;
        spine.exclusive = 1;
        spine.reverse = 0;
        spine.init = p.init;
        rts_downsweep<T, Op><<<1, RTS_THREADS, 0, dev->stream>>>(
            spine, (const T *)0, ps_cuda_div_up(grid.blocks, rts_shape<T>::TILE));
        PS_CUDA_CHECK_LAUNCH();

        /* ---- downsweep phase: scan each block's tiles from its carry ---- */
        rts_downsweep<T, Op><<<grid.blocks, RTS_THREADS, 0, dev->stream>>>(p, partials, grid.tiles_per_block);
        PS_CUDA_CHECK_LAUNCH();
        return cudaSuccess;
    }
};

static pscan_status rts_temp_bytes(const ps_request *call, const ps_cuda_device *dev, size_t *bytes) {
    const rts_grid grid =
        rts_grid_of(call->n, (uint64_t)RTS_THREADS * ps_cuda_tile_items(call->elem_bytes), dev);
    *bytes = grid.blocks > 1 ? ps_cuda_align((size_t)grid.blocks * call->elem_bytes) : 0;
    return PSCAN_SUCCESS;
}

static cudaError_t rts_run(const ps_request *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<rts_scan>::run(call, dev);
}

extern const ps_cuda_algorithm ps_cuda_reduce_then_scan = {PSCAN_ALGO_REDUCE_THEN_SCAN, rts_temp_bytes, rts_run};
