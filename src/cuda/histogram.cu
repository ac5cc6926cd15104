/*
 * histogram.cu - the histogram on CUDA: per-block histograms in shared memory, warp-aggregated, merged into the
 * output by atomics. Not a chain: a histogram has no carry from one tile to the next (integer counts commute), so
 * it does not run on the single-pass driver; one kernel does everything.
 *
 * The kernel. A persistent grid (as many blocks as fit on the GPU at once) walks the tiles of the samples
 * (256 threads x 4 vectors of 16 bytes = 16 KiB per tile, each vector loaded by consecutive threads, so every
 * load is coalesced; the last tile and misaligned calls element by element through the same body). Each block
 * keeps its own u32 histogram in shared memory, so the atomics of a sample never leave the SM, and adds it to the
 * output once at the end (one global atomic per nonzero bin per block: bins x blocks, independent of n).
 *  - Bins that do not fit in shared memory: the bin range is cut into windows of at most 32768 counters
 *    (128 KiB; fewer where the GPU has less shared memory per block) and the grid gets one row of blocks per
 *    window (blockIdx.y). Every row reads every sample and counts those of its own window: 65536 bins read the
 *    samples twice, but no sample ever needs a global atomic.
 *  - Skew: a sample's bin is added through a warp-level aggregation (PS_HISTOGRAM_AGG). The default, adaptive,
 *    asks its neighbour lane (one shuffle and a vote): when the whole warp holds one bin (all-equal data) lane 0
 *    adds 32 at once; when some neighbours agree (sorted or few-valued data), __match_any_sync groups equal bins
 *    and each group's leader adds the group's size; when none do (uniform data over many bins) each lane adds
 *    its own 1, without paying for the match. So one hot bin costs one shared atomic per warp, not 32
 *    serialised ones. tools/tune/tune_histogram.cu times the four variants (plain, uniform, match, adaptive).
 *  - Which bin: histogram_bin.h, the same code as the CPU's (exact integer bins, in 32-bit arithmetic when the
 *    bounds allow; floats in their own rounding; edges by binary search, staged in shared memory when they fit beside the counters, else read through L1).
 * Without PSCAN_HISTOGRAM_ACCUMULATE the output is zeroed first (cudaMemsetAsync), then the blocks add to it.
 *
 * Work O(n + blocks x bins). Global memory: the samples are read once per window (once up to 32768 bins), the
 * counts written by bins x blocks atomics (plus the memset); no temp.
 * Measured (H100, tools/tune/tune_histogram.cu, 2^28 samples, median of 20, x CUB's HistogramEven): plain shared
 * atomics (variant 0) beat the three aggregating variants in every case, all-equal data included (Hopper's
 * shared-memory atomics on one address cost less than a vote or a match), so plain is the default. Plain, uniform
 * / all-equal data: u8 in 256 bins 0.65x / 0.55x CUB (the gap: one sample per byte, 4x the atomics per byte of
 * u32); u32 in 256 bins 1.61x / 1.43x (0.99 of copy bandwidth); f32 in 1024 bins 10.5x / 1.64x; f32 in 65536
 * bins 9.1x / 0.54x (two windows: the samples read twice). docs/bench/h100-histogram-tune.csv.
 */
#include <stdint.h>
#include <string.h>

#include "block/warp.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "histogram_bin.h"
#include "scan_problem.cuh"

/* Warp aggregation of equal bins: 0 plain atomics, 1 whole-warp-uniform check only, 2 __match_any_sync always,
 * 3 adaptive (see the header). */
#ifndef PS_HISTOGRAM_AGG
#define PS_HISTOGRAM_AGG 0 /* plain: the fastest in every case measured (header) */
#endif
#ifndef PS_HISTOGRAM_VECS
#define PS_HISTOGRAM_VECS 4
#endif
#define PS_HISTOGRAM_THREADS 256
/* The most u32 counters one block keeps in shared memory (128 KiB). */
#define PS_HISTOGRAM_WINDOW_MAX 32768u
/* Edges are staged in shared memory when they and the counters fit in this much (keeps several blocks per SM). */
#define PS_HISTOGRAM_STAGE_BYTES (48u * 1024u)

enum { PS_HIST_AGG_PLAIN, PS_HIST_AGG_UNIFORM, PS_HIST_AGG_MATCH, PS_HIST_AGG_ADAPTIVE };

/* The per-type functions of histogram_bin.h behind one template. */
template <class T> struct ps_hist_type;
#define PS_HIST_TYPE_(NAME, name, T, U, LOWEST, HIGHEST)                                                     \
    template <> struct ps_hist_type<T> {                                                                     \
        static __device__ __forceinline__ uint32_t even(const ps_histogram_spec *h, ps_histogram_form f, T x) { \
            return ps_histogram_even_##name(h, f, x);                                                        \
        }                                                                                                    \
        static __device__ __forceinline__ uint32_t search(const T *edges, uint32_t bins, T x) {              \
            return ps_histogram_search_##name(edges, bins, x);                                               \
        }                                                                                                    \
    };
PSCAN_ARITH_TYPE_LIST(PS_HIST_TYPE_)
#undef PS_HIST_TYPE_

template <class T> struct ps_hist_params {
    const T *in;
    void *counts;
    uint64_t n;
    uint64_t tiles;
    ps_histogram_spec h;
    uint32_t window;     /* counters per block; blockIdx.y picks the window */
    uint32_t edges_at;   /* byte offset of the staged edges in shared memory; 0: not staged */
    int aligned;         /* in is 16-byte aligned */
};

/* ---- warp level: add one sample's slot (PS_HISTOGRAM_NONE: nothing) to the block's histogram ---------------- */

/* Every lane of the warp calls this together, each with its own slot. */
template <int AGG> static __device__ __forceinline__ void ps_hist_warp_add(uint32_t *hist, uint32_t slot) {
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    if (AGG == PS_HIST_AGG_PLAIN) {
        if (slot != PS_HISTOGRAM_NONE) atomicAdd(&hist[slot], 1u);
        return;
    }
    if (AGG == PS_HIST_AGG_MATCH) {
        const unsigned peers = __match_any_sync(PS_WARP_ALL, slot);
        if (slot != PS_HISTOGRAM_NONE && lane == (unsigned)(__ffs(peers) - 1)) atomicAdd(&hist[slot], (uint32_t)__popc(peers));
        return;
    }
    /* UNIFORM and ADAPTIVE: does the whole warp hold one slot? (lane 31's neighbour is itself) */
    const uint32_t next = __shfl_down_sync(PS_WARP_ALL, slot, 1);
    if (__all_sync(PS_WARP_ALL, next == slot)) {
        if (lane == 0 && slot != PS_HISTOGRAM_NONE) atomicAdd(&hist[slot], 32u);
        return;
    }
    if (AGG == PS_HIST_AGG_ADAPTIVE && __any_sync(PS_WARP_ALL, lane < PS_WARP_LANES - 1 && next == slot)) {
        const unsigned peers = __match_any_sync(PS_WARP_ALL, slot);
        if (slot != PS_HISTOGRAM_NONE && lane == (unsigned)(__ffs(peers) - 1)) atomicAdd(&hist[slot], (uint32_t)__popc(peers));
        return;
    }
    if (slot != PS_HISTOGRAM_NONE) atomicAdd(&hist[slot], 1u);
}

/* ---- the kernel --------------------------------------------------------------------------------------------- */

template <class T, int FORM, int AGG, int VECS>
__global__ void __launch_bounds__(PS_HISTOGRAM_THREADS) ps_histogram_kernel(const ps_hist_params<T> p) {
    enum { VEC = 16 / sizeof(T), TILE = PS_HISTOGRAM_THREADS * VECS * VEC };
    extern __shared__ __align__(16) unsigned char ps_hist_smem[];
    uint32_t *hist = reinterpret_cast<uint32_t *>(ps_hist_smem);
    const uint32_t w_lo = blockIdx.y * p.window;
    const uint32_t w_bins = p.h.bins - w_lo < p.window ? p.h.bins - w_lo : p.window;

    /* ---- setup: zero the counters; stage the edges ---- */
    const T *edges = (const T *)p.h.edges;
    if (FORM == PS_HISTOGRAM_EDGES && p.edges_at) {
        T *staged = reinterpret_cast<T *>(ps_hist_smem + p.edges_at);
        for (uint32_t i = threadIdx.x; i <= p.h.bins; i += PS_HISTOGRAM_THREADS) staged[i] = edges[i];
        edges = staged;
    }
    for (uint32_t i = threadIdx.x; i < w_bins; i += PS_HISTOGRAM_THREADS) hist[i] = 0;
    __syncthreads();

    /* ---- count: tile by tile, every lane of a warp through the same iterations ---- */
    for (uint64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const uint64_t base = tile * TILE;
        const uint32_t valid = p.n - base < (uint64_t)TILE ? (uint32_t)(p.n - base) : (uint32_t)TILE;
        const bool fast = p.aligned && valid == (uint32_t)TILE;
        uint4 raw[VECS];
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const uint32_t pv = k * PS_HISTOGRAM_THREADS + threadIdx.x;
            if (fast) {
                raw[k] = reinterpret_cast<const uint4 *>(p.in + base)[pv];
            } else {
                T t[VEC];
#pragma unroll
                for (int i = 0; i < VEC; i++) t[i] = pv * VEC + i < valid ? p.in[base + pv * VEC + i] : T(0);
                memcpy(&raw[k], t, sizeof raw[k]);
            }
        }
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T x[VEC];
            memcpy(x, &raw[k], sizeof raw[k]);
            const uint32_t pv = k * PS_HISTOGRAM_THREADS + threadIdx.x;
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                uint32_t slot = PS_HISTOGRAM_NONE;
                if (fast || pv * VEC + i < valid) {
                    const uint32_t b = FORM == PS_HISTOGRAM_EDGES
                                           ? ps_hist_type<T>::search(edges, p.h.bins, x[i])
                                           : ps_hist_type<T>::even(&p.h, (ps_histogram_form)FORM, x[i]);
                    if (b - w_lo < w_bins) slot = b - w_lo; /* NONE wraps past every window */
                }
                ps_hist_warp_add<AGG>(hist, slot);
            }
        }
    }
    __syncthreads();

    /* ---- merge: this block's nonzero counters into the output ---- */
    for (uint32_t i = threadIdx.x; i < w_bins; i += PS_HISTOGRAM_THREADS) {
        const uint32_t c = hist[i];
        if (c == 0) continue;
        if (p.h.count_bytes == 8)
            atomicAdd((unsigned long long *)p.counts + w_lo + i, (unsigned long long)c);
        else
            atomicAdd((unsigned int *)p.counts + w_lo + i, c);
    }
}

/* ---- host side ---------------------------------------------------------------------------------------------- */

/* The counters one block keeps: every bin when they fit, else the bins split evenly over the fewest windows. */
static uint32_t hist_window(uint32_t bins, const ps_cuda_device *dev) {
    uint32_t most = (uint32_t)dev->max_shared_per_block_optin / 4u;
    most = (most < PS_HISTOGRAM_WINDOW_MAX ? most : PS_HISTOGRAM_WINDOW_MAX) & ~31u;
    if (bins <= most) return bins;
    const uint32_t windows = (bins + most - 1) / most;
    return ((bins + windows - 1) / windows + 31u) & ~31u;
}

template <class T, int FORM, int AGG = PS_HISTOGRAM_AGG, int VECS = PS_HISTOGRAM_VECS>
static cudaError_t ps_histogram_launch(const ps_request *req, const ps_cuda_device *dev) {
    enum { TILE = PS_HISTOGRAM_THREADS * VECS * (16 / sizeof(T)) };
    ps_hist_params<T> p;
    memset(&p, 0, sizeof p);
    p.in = (const T *)req->in;
    p.counts = req->out;
    p.n = req->n;
    p.tiles = ps_cuda_div_up(req->n, TILE);
    p.h = req->hist;
    p.window = hist_window(p.h.bins, dev);
    p.aligned = ((uintptr_t)req->in & 15u) == 0;
    const uint32_t windows = (p.h.bins + p.window - 1) / p.window;
    size_t smem = (size_t)p.window * 4u;
    if (FORM == PS_HISTOGRAM_EDGES) {
        const size_t at = (smem + 15u) & ~(size_t)15u, edge_bytes = ((size_t)p.h.bins + 1) * sizeof(T);
        if (at + edge_bytes <= PS_HISTOGRAM_STAGE_BYTES) {
            p.edges_at = (uint32_t)at;
            smem = at + edge_bytes;
        }
    }

    auto kernel = ps_histogram_kernel<T, FORM, AGG, VECS>;
    PS_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    PS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, PS_HISTOGRAM_THREADS, smem));
    if (per_sm < 1) per_sm = 1;
    /* a persistent grid over the windows; no block counts more than 2^31 samples, so no u32 counter overflows */
    uint64_t blocks = (uint64_t)per_sm * (uint64_t)dev->sm_count / windows;
    const uint64_t fewest = ps_cuda_div_up(p.tiles, ((uint64_t)1 << 31) / TILE);
    if (blocks < fewest) blocks = fewest;
    if (blocks > p.tiles) blocks = p.tiles;
    if (blocks < 1) blocks = 1;
    if (!p.h.accumulate) PS_CUDA_TRY(cudaMemsetAsync(req->out, 0, (size_t)p.h.bins * p.h.count_bytes, dev->stream));
    dim3 grid((unsigned)blocks, windows);
    kernel<<<grid, PS_HISTOGRAM_THREADS, smem, dev->stream>>>(p);
    return cudaGetLastError();
}

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_histogram.cu includes the kernel alone */

pscan_status ps_cuda_histogram_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    *bytes = 0;
    return PSCAN_SUCCESS;
}

/* The forms each type can have: integers SHIFT32 and DIV32 (up to 32 bits), SHIFT64, DIV64, EDGES; floats
 * FLOAT, EDGES. */
template <class T> static cudaError_t histogram_run_type(const ps_request *req, const ps_cuda_device *dev) {
    constexpr bool integer = (T)0.5 == (T)0, narrow = integer && sizeof(T) <= 4;
    switch (req->hist.form) {
    case PS_HISTOGRAM_EDGES: return ps_histogram_launch<T, PS_HISTOGRAM_EDGES>(req, dev);
    case PS_HISTOGRAM_EVEN_SHIFT32:
        if constexpr (narrow) return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_SHIFT32>(req, dev);
        break;
    case PS_HISTOGRAM_EVEN_DIV32:
        if constexpr (narrow) return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_DIV32>(req, dev);
        break;
    case PS_HISTOGRAM_EVEN_SHIFT64:
        if constexpr (integer) return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_SHIFT64>(req, dev);
        break;
    case PS_HISTOGRAM_EVEN_DIV64:
        if constexpr (integer) return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_DIV64>(req, dev);
        break;
    case PS_HISTOGRAM_EVEN_FLOAT:
        if constexpr (!integer) return ps_histogram_launch<T, PS_HISTOGRAM_EVEN_FLOAT>(req, dev);
        break;
    }
    return cudaErrorInvalidValue; /* the core never resolves a form the type lacks */
}

cudaError_t ps_cuda_histogram_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0)
        return req->hist.accumulate ? cudaSuccess
                                    : cudaMemsetAsync(req->out, 0, (size_t)req->hist.bins * req->hist.count_bytes,
                                                      dev->stream);
    switch (req->type) {
#define PS_HIST_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                     \
    case PSCAN_TYPE_##NAME: return histogram_run_type<T>(req, dev);
        PSCAN_ARITH_TYPE_LIST(PS_HIST_CASE_)
#undef PS_HIST_CASE_
    default: return cudaErrorInvalidValue;
    }
}

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
