/*
 * 1_hillis_steele.cu - the naive parallel scan (Hillis and Steele 1986; GPU Gems 3, ch. 39, listing 39-1).
 *
 * Idea. One element per thread, 512 per block. In step k = 0, 1, ..., log2(512) - 1 every thread t >= 2^k
 * combines the value 2^k places to its left into its own: after step k each element holds the sum of the
 * 2^(k+1) elements ending at it. Each step reads one buffer of shared memory and writes the other (double
 * buffering), since a thread would otherwise read a neighbour's value that is being overwritten. The result
 * is inclusive; an exclusive scan takes the left neighbour's result (the identity for the first element).
 * Arrays longer than a block go through kernel_propagate.cuh: block scans, a recursive scan of the block
 * totals, a uniform add.
 *
 *   in        3  1  7  0  4  1  6  3
 *   offset 1  3  4  8  7  4  5  7  9
 *   offset 2  3  4 11 11 12 12 11 14
 *   offset 4  3  4 11 11 15 16 22 25     (pscan explain hillis-steele 3 1 7 0 4 1 6 3)
 *
 * Work and depth. O(n log B) operations for block size B (n log n for one block): not work-efficient, each
 * element is combined log2(512) = 9 times. Depth O(log n).
 * Memory passes. About 4n (read + write by the block scans, read + write by the uniform add), plus n/512
 * totals per level.
 * Limits. n < 2^31 * 512. Floats combine in tree order:
 *   sums differ from a serial loop by rounding; products of many factors near 1 drift by about n * eps/100.
 * Measured. NVIDIA H100 80GB HBM3 (CUDA 13.0), 2^28 i32, inclusive sum, pscan bench, 2026-11-21:
 *   2.668 ms, 805 GB/s effective = 0.27 of a device copy (2972 GB/s) in the same run.
 *   The block scan, not DRAM, is the limit: 9 dependent shared-memory steps and barriers per element.
 */
#include "kernel_propagate.cuh"

#define HS_THREADS 512 /* = the tile: one element per thread */

template <class T, class Op>
__global__ __launch_bounds__(HS_THREADS) void hs_scan_tiles(ps_cuda_problem<T> p, T carry, T *totals) {
    __shared__ T buf[2][HS_THREADS];
    const int t = threadIdx.x;
    const uint64_t i = (uint64_t)blockIdx.x * HS_THREADS + (uint64_t)t;

    /* ---- load: logical element i, the identity beyond n ---- */
    const T x = i < p.n ? p.in[p.phys(i)] : Op::template identity<T>();
    int pout = 0;
    buf[pout][t] = x;
    __syncthreads();

    /* ---- log-step scan, double-buffered ---- */
    for (int offset = 1; offset < HS_THREADS; offset *= 2) {
        pout = 1 - pout;
        const int pin = 1 - pout;
        buf[pout][t] = t >= offset ? Op::combine(buf[pin][t - offset], buf[pin][t]) : buf[pin][t];
        __syncthreads();
    }

    /* ---- store: carry (+) inclusive, or carry (+) the left neighbour's inclusive ---- */
    const T inclusive = buf[pout][t];
    if (totals && t == HS_THREADS - 1) totals[blockIdx.x] = inclusive;
    const T mine = p.exclusive ? (t > 0 ? buf[pout][t - 1] : Op::template identity<T>()) : inclusive;
    if (i < p.n) p.out[p.phys(i)] = Op::combine(carry, mine);
}

template <class T, class Op> struct hs_tile {
    enum { TILE = HS_THREADS };
    static cudaError_t scan_tiles(const ps_cuda_problem<T> &p, T carry, T *totals, cudaStream_t stream) {
        const uint64_t blocks = ps_cuda_div_up(p.n, TILE);
        hs_scan_tiles<T, Op><<<(unsigned)blocks, HS_THREADS, 0, stream>>>(p, carry, totals);
        PS_CUDA_CHECK_LAUNCH();
        return cudaSuccess;
    }
};

template <class T, class Op> struct hs_scan {
    static cudaError_t run(const ps_request *call, const ps_cuda_device *dev) {
        return ps_cuda_scan_propagate<T, Op, hs_tile<T, Op>>(ps_cuda_problem_of<T>(call),
                                                            (unsigned char *)call->temp, dev->stream);
    }
};

static pscan_status hs_temp_bytes(const ps_request *call, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    *bytes = ps_cuda_propagate_temp_bytes(call->n, call->elem_bytes, HS_THREADS);
    return PSCAN_SUCCESS;
}

static cudaError_t hs_run(const ps_request *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<hs_scan>::run(call, dev);
}

extern const ps_cuda_algorithm ps_cuda_hillis_steele = {PSCAN_ALGO_HILLIS_STEELE, hs_temp_bytes, hs_run};
