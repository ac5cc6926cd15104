/*
 * 2_blelloch.cu - the work-efficient scan (Blelloch 1990; GPU Gems 3, ch. 39, listings 39-2 and 39-3).
 *
 * Idea. Two elements per thread, 1024 per block of 512 threads, in a balanced binary tree in shared memory.
 *   Up-sweep (reduce): level by level, each node's right child becomes the sum of its two children; the
 *     root ends up holding the tile's total.
 *   Clear the root to the identity.
 *   Down-sweep: level by level from the root, each node passes its value to its left child and the sum of
 *     its value and the left child's old value to its right child.
 * The tree now holds the exclusive scan; the inclusive one adds each thread's own input back. Arrays longer
 * than a block go through kernel_propagate.cuh (block scans, recursive scan of the totals, uniform add).
 *
 *   in          3  1  7  0  4  1  6  3
 *   up-sweep    3  4  7  7  4  5  6  9  -> 3  4  7 11  4  5  6 14 -> 3  4  7 11  4  5  6 25
 *   clear root  3  4  7 11  4  5  6  0
 *   down-sweep  3  4  7  0  4  5  6 11 -> 3  0  7  4  4 11  6 16 -> 0  3  4 11 11 15 16 22
 *   (pscan explain blelloch 3 1 7 0 4 1 6 3)
 *
 * Bank conflicts. Tree level d touches every 2^d-th element: with 32 four-byte banks, up to 16 threads of a
 * warp hit the same bank. CONFLICT_FREE_OFFSET inserts one padding slot after every 32 elements, which
 * spreads those strides over the banks. ps_cuda_blelloch_unpadded is the same kernel with the padding
 * compiled out (template flag), so the two can be timed side by side.
 *
 * Work and depth. O(n): 2(B-1) combines per tile of B, about 2n in all; depth 2 log2(1024) per block.
 * Memory passes. About 4n, as algorithm 1; the gain is in the block scan's work and shared-memory traffic.
 * Limits. n < 2^31 * 1024. Floats combine in tree order:
 *   sums differ from a serial loop by rounding; products of many factors near 1 drift by about n * eps/100.
 * Measured. NVIDIA H100 80GB HBM3 (CUDA 13.0), 2^28 i32, inclusive sum, pscan bench, 2026-11-21, same run:
 *   padded    2.284 ms, 940 GB/s = 0.32 of a device copy (2972 GB/s)
 *   unpadded  3.264 ms, 658 GB/s = 0.22 of copy: the padding makes the block scan 1.43x faster (and the
 *             unpadded tree is slower than Hillis-Steele's conflict-free log steps, 0.27).
 */
#include "kernel_propagate.cuh"

#define BL_THREADS 512
#define BL_TILE (2 * BL_THREADS)
#define BL_LOG_NUM_BANKS 5

/* CONFLICT_FREE_OFFSET(i): one extra slot every 2^BL_LOG_NUM_BANKS elements, or none. */
template <bool Padded> __device__ __forceinline__ int bl_offset(int i) { return Padded ? i >> BL_LOG_NUM_BANKS : 0; }

template <class T, class Op, bool Padded>
__global__ __launch_bounds__(BL_THREADS) void bl_scan_tiles(ps_cuda_problem<T> p, T carry, T *totals) {
    __shared__ T s[BL_TILE + (Padded ? BL_TILE >> BL_LOG_NUM_BANKS : 0)];
    const T e = Op::template identity<T>();
    const int t = threadIdx.x;
    const uint64_t start = (uint64_t)blockIdx.x * BL_TILE;

    /* ---- load: elements t and t + 512 of the tile (coalesced), the identity beyond n ---- */
    const int ai = t, bi = t + BL_THREADS;
    const T xa = start + ai < p.n ? p.in[p.phys(start + ai)] : e;
    const T xb = start + bi < p.n ? p.in[p.phys(start + bi)] : e;
    s[ai + bl_offset<Padded>(ai)] = xa;
    s[bi + bl_offset<Padded>(bi)] = xb;

    /* ---- up-sweep: build sums in place up the tree ---- */
    int offset = 1;
    for (int d = BL_TILE >> 1; d > 0; d >>= 1) {
        __syncthreads();
        if (t < d) {
            int a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            a += bl_offset<Padded>(a);
            b += bl_offset<Padded>(b);
            s[b] = Op::combine(s[a], s[b]);
        }
        offset *= 2;
    }

    /* ---- clear the root: its value is the tile's total ---- */
    const int root = BL_TILE - 1 + bl_offset<Padded>(BL_TILE - 1);
    if (t == 0) {
        if (totals) totals[blockIdx.x] = s[root];
        s[root] = e;
    }

    /* ---- down-sweep: traverse down the tree, building the exclusive scan ---- */
    for (int d = 1; d < BL_TILE; d *= 2) {
        offset >>= 1;
        __syncthreads();
        if (t < d) {
            int a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            a += bl_offset<Padded>(a);
            b += bl_offset<Padded>(b);
            const T left = s[a];
            s[a] = s[b];
            s[b] = Op::combine(s[b], left);
        }
    }
    __syncthreads();

    /* ---- store: carry (+) exclusive, or carry (+) exclusive (+) own input ---- */
    const T ea = s[ai + bl_offset<Padded>(ai)], eb = s[bi + bl_offset<Padded>(bi)];
    if (start + ai < p.n) p.out[p.phys(start + ai)] = Op::combine(carry, p.exclusive ? ea : Op::combine(ea, xa));
    if (start + bi < p.n) p.out[p.phys(start + bi)] = Op::combine(carry, p.exclusive ? eb : Op::combine(eb, xb));
}

template <class T, class Op, bool Padded> struct bl_tile {
    enum { TILE = BL_TILE };
    static cudaError_t scan_tiles(const ps_cuda_problem<T> &p, T carry, T *totals, cudaStream_t stream) {
        const uint64_t blocks = ps_cuda_div_up(p.n, TILE);
        bl_scan_tiles<T, Op, Padded><<<(unsigned)blocks, BL_THREADS, 0, stream>>>(p, carry, totals);
        PS_CUDA_CHECK_LAUNCH();
        return cudaSuccess;
    }
};

template <class T, class Op, bool Padded> struct bl_scan {
    static cudaError_t run(const ps_request *call, const ps_cuda_device *dev) {
        return ps_cuda_scan_propagate<T, Op, bl_tile<T, Op, Padded>>(ps_cuda_problem_of<T>(call),
                                                                    (unsigned char *)call->temp, dev->stream);
    }
};
template <class T, class Op> using bl_scan_padded = bl_scan<T, Op, true>;
template <class T, class Op> using bl_scan_unpadded = bl_scan<T, Op, false>;

static pscan_status bl_temp_bytes(const ps_request *call, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    *bytes = ps_cuda_propagate_temp_bytes(call->n, call->elem_bytes, BL_TILE);
    return PSCAN_SUCCESS;
}

static cudaError_t bl_run_padded(const ps_request *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<bl_scan_padded>::run(call, dev);
}
static cudaError_t bl_run_unpadded(const ps_request *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<bl_scan_unpadded>::run(call, dev);
}

extern const ps_cuda_algorithm ps_cuda_blelloch = {PSCAN_ALGO_BLELLOCH, bl_temp_bytes, bl_run_padded};
extern const ps_cuda_algorithm ps_cuda_blelloch_unpadded = {PSCAN_ALGO_BLELLOCH_UNPADDED, bl_temp_bytes,
                                                            bl_run_unpadded};
