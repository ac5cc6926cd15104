/*
 * kernel_propagate.cuh - the device-level scan-then-propagate driver that makes a one-block scan work for any
 * n (GPU Gems 3, ch. 39.2.4). Algorithms 1, 2 and 3 plug their own block-level tile scan into it. Internal.
 *
 *   Scan phase.      Each block scans one tile (Tile::scan_tiles) and writes the tile's total.
 *   Spine phase.     The totals are scanned, exclusive, seeded with the initial value: recursively, by the
 *                    same driver and the same tile scan, until they fit in one tile.
 *   Propagate phase. A uniform add combines tile b's scanned total into every element of tile b.
 *
 * Memory passes: read n + write n (scan), read n + write n (propagate): about 4n, plus n/TILE per level.
 * Temporary storage: one array of totals per level, ps_cuda_propagate_temp_bytes.
 *
 * Tile policy: struct with enum TILE and
 *   static cudaError_t scan_tiles(const ps_cuda_problem<T> &p, T carry, T *totals, cudaStream_t stream);
 * which launches one block per logical tile; block b scans tile b seeded with carry and, if totals is not
 * NULL, writes the tile's own total (without carry) to totals[b].
 */
#ifndef PSCAN_KERNEL_PROPAGATE_CUH
#define PSCAN_KERNEL_PROPAGATE_CUH

#include "scan_problem.cuh"

#define PS_PROPAGATE_THREADS 256

/* Block b combines prefix[b] into each result of logical tile b (tile elements), in place on out. */
template <class T, class Op>
__global__ __launch_bounds__(PS_PROPAGATE_THREADS) void ps_kernel_uniform_add(ps_cuda_problem<T> p, const T *prefix,
                                                                               int tile) {
    const T c = prefix[blockIdx.x];
    const uint64_t start = (uint64_t)blockIdx.x * (uint64_t)tile;
    for (int i = threadIdx.x; i < tile; i += PS_PROPAGATE_THREADS) {
        const uint64_t li = start + (uint64_t)i;
        if (li < p.n) {
            const uint64_t q = p.phys(li);
            p.out[q] = Op::combine(c, p.out[q]);
        }
    }
}

/* Bytes of totals the driver needs for n elements in tiles of tile elements. */
static inline size_t ps_cuda_propagate_temp_bytes(uint64_t n, size_t elem_bytes, uint64_t tile) {
    size_t bytes = 0;
    while (n > tile) {
        n = ps_cuda_div_up(n, tile);
        bytes += ps_cuda_align((size_t)n * elem_bytes);
    }
    return bytes;
}

template <class T, class Op, class Tile>
static cudaError_t ps_cuda_scan_propagate(const ps_cuda_problem<T> &p, unsigned char *temp, cudaStream_t stream) {
    const uint64_t tiles = ps_cuda_div_up(p.n, (uint64_t)Tile::TILE);
    if (tiles == 1) return Tile::scan_tiles(p, p.init, (T *)0, stream); /* one block: the carry is init */

    /* ---- scan phase: every tile from the identity, totals out ---- */
    T *totals = (T *)temp;
    PS_CUDA_TRY(Tile::scan_tiles(p, Op::template identity<T>(), totals, stream));

    /* ---- spine phase: totals[b] becomes init (+) total[0] (+) ... (+) total[b-1] ---- */
    ps_cuda_problem<T> spine;
    spine.in = totals;
    spine.out = totals;
    spine.n = tiles;
    spine.exclusive = 1;
    spine.reverse = 0; /* totals are in logical order already */
    spine.init = p.init;
    PS_CUDA_TRY((ps_cuda_scan_propagate<T, Op, Tile>(spine, temp + ps_cuda_align((size_t)tiles * sizeof(T)),
                                                     stream)));

    /* ---- propagate phase ---- */
    ps_kernel_uniform_add<T, Op><<<(unsigned)tiles, PS_PROPAGATE_THREADS, 0, stream>>>(p, totals, Tile::TILE);
    PS_CUDA_CHECK_LAUNCH();
    return cudaSuccess;
}

#endif /* PSCAN_KERNEL_PROPAGATE_CUH */
