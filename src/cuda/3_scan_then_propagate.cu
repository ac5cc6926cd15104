/*
 * 3_scan_then_propagate.cu - scan the tiles, scan their totals, propagate: with a block scan that does real
 * work per thread.
 *
 * Idea. Algorithms 1 and 2 give each thread one or two elements, so most of a block's time goes into
 * barriers and shared-memory tree steps. Here a block of 256 threads owns a tile of 256 * ITEMS elements
 * (ITEMS = 16 for 4-byte types: 64 bytes per thread):
 *   load    the tile into shared memory, coalesced, 16 bytes per thread where aligned;
 *   thread  each thread reduces its ITEMS consecutive elements serially (registers);
 *   block   warp shuffles scan the 256 thread totals (cta_scan.cuh: 5 shuffle steps per warp, one scan of
 *           the 8 warp totals), with no shared-memory tree and three barriers;
 *   thread  each thread rescans its elements from its carry-in and the tile is stored.
 * The device level is the same as algorithms 1 and 2 (kernel_propagate.cuh): the tiles' totals are scanned
 * recursively (4096x fewer per level), then a uniform add brings each tile its prefix.
 *
 * Work and depth. O(n): about 2n combines plus O(n / ITEMS) in the block scans; depth O(ITEMS + log n).
 * Memory passes. About 4n: read n + write n to scan the tiles, read n + write n to propagate.
 * Limits. n < 2^31 * 4096 (4-byte types). Floats combine in a blocked order:
 *   sums differ from a serial loop by rounding; products of many factors near 1 drift by about n * eps/100.
 * Measured. NVIDIA H100 80GB HBM3 (CUDA 13.0), 2^28 i32, inclusive sum, pscan bench, 2026-11-21:
 *   1.553 ms, 1383 GB/s effective = 0.47 of a device copy (2972 GB/s) in the same run; 4n traffic caps it
 *   at 0.5, so the block scan is no longer the limit.
 */
#include "cta_scan.cuh"
#include "kernel_propagate.cuh"

#define STP_THREADS 256

template <class T, class Op> struct stp_tile {
    enum { ITEMS = ps_cuda_tile_items(sizeof(T)), TILE = STP_THREADS * ITEMS };
    typedef ps_cta_tile<T, Op, STP_THREADS, ITEMS> cta;
    static cudaError_t scan_tiles(const ps_cuda_problem<T> &p, T carry, T *totals, cudaStream_t stream);
};

template <class T, class Op>
__global__ __launch_bounds__(STP_THREADS) void stp_scan_tiles(ps_cuda_problem<T> p, T carry, T *totals) {
    typedef typename stp_tile<T, Op>::cta cta;
    __shared__ typename cta::storage s;
    const uint64_t start = (uint64_t)blockIdx.x * cta::TILE;
    const int len = (int)(p.n - start < (uint64_t)cta::TILE ? p.n - start : (uint64_t)cta::TILE);

    cta::load(p, start, len, s);
    const T total = cta::scan(s, carry, p.exclusive);
    if (totals && threadIdx.x == 0) totals[blockIdx.x] = total;
    cta::store(p, start, len, s);
}

template <class T, class Op>
cudaError_t stp_tile<T, Op>::scan_tiles(const ps_cuda_problem<T> &p, T carry, T *totals, cudaStream_t stream) {
    const uint64_t blocks = ps_cuda_div_up(p.n, TILE);
    stp_scan_tiles<T, Op><<<(unsigned)blocks, STP_THREADS, 0, stream>>>(p, carry, totals);
    PS_CUDA_CHECK_LAUNCH();
    return cudaSuccess;
}

template <class T, class Op> struct stp_scan {
    static cudaError_t run(const ps_request *call, const ps_cuda_device *dev) {
        return ps_cuda_scan_propagate<T, Op, stp_tile<T, Op>>(ps_cuda_problem_of<T>(call),
                                                             (unsigned char *)call->temp, dev->stream);
    }
};

static pscan_status stp_temp_bytes(const ps_request *call, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    *bytes = ps_cuda_propagate_temp_bytes(call->n, call->elem_bytes,
                                        (uint64_t)STP_THREADS * ps_cuda_tile_items(call->elem_bytes));
    return PSCAN_SUCCESS;
}

static cudaError_t stp_run(const ps_request *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<stp_scan>::run(call, dev);
}

extern const ps_cuda_algorithm ps_cuda_scan_then_propagate = {PSCAN_ALGO_SCAN_THEN_PROPAGATE, stp_temp_bytes,
                                                              stp_run};
