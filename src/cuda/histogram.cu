/*
 * histogram.cu - the histogram on CUDA: per-block histograms in shared memory, warp-aggregated, merged into the
 * output by atomics. Not a chain: a histogram has no carry from one tile to the next (integer counts commute), so
 * it does not run on the single-pass driver; one kernel does everything.
 *
 * The kernel. A persistent grid (as many blocks as fit on the GPU at once) walks the tiles of the samples
 * (256 threads x 4 vectors of 16 bytes = 16 KiB per tile, each vector loaded by consecutive threads, so every
 * load is coalesced; full tiles check nothing per sample, and the last tile and misaligned calls go element by
 * element through the same body, ps_hist_tile<FULL>). Each block keeps its own histogram in shared memory, so
 * the atomics of a sample never leave the SM, and adds it to the output once at the end (one global atomic per
 * nonzero bin per block: bins x blocks, independent of n). The counters have one of three layouts (hist_plan):
 *  - WORDS: one u32 per bin, up to 32768 bins (128 KiB; fewer where the GPU has less shared memory per block).
 *    A sample that does not count adds to a spare counter past the bins, so that no atomic sits behind a branch
 *    (with a branch per sample the u8 kernel ran about 30 instructions a sample; now about 10).
 *  - LANES (1-byte samples, up to 256 bins): 32 copies of each counter, lane l's in bank l, summed at the merge.
 *    A warp's 32 atomics then hit 32 banks whatever the data: no bank conflicts on uniform data and no
 *    same-address atomics on all-equal data (32 KiB a block).
 *  - PACKED (more bins than WORDS holds): two 16-bit counters per u32 word, so 65536 bins fit one 128 KiB window
 *    and the samples are read once; a half that wraps is corrected in the output by the thread whose atomic saw
 *    it (the argument is at ps_hist_packed_word). Only one such block fits on an SM, so it has 1024 threads.
 *    A vector's atomics are issued before their returned values are tested, so they do not wait on each other.
 *    Those atomics return values, so a warp's atomics on one word take turns: PS_HISTOGRAM_PACKED_AGG first
 *    checks whether the warp's vector lies in one slot (lane 0 then adds 32 x 4 at once) and, adaptive, whether
 *    some neighbours agree (then __match_any_sync groups equal slots), as ps_hist_packed_add_n says.
 *    Without PACKED (PS_HISTOGRAM_PACKED 0) the bins are cut into windows of WORDS, one grid row each
 *    (blockIdx.y), every row reading every sample.
 *  - Skew: a sample's bin may be added through a warp-level aggregation (PS_HISTOGRAM_AGG; plain by default).
 *    Adaptive asks its neighbour lane (one shuffle and a vote): when the whole warp holds one bin (all-equal
 *    data) lane 0 adds 32 at once; when some neighbours agree (sorted or few-valued data), __match_any_sync
 *    groups equal bins and each group's leader adds the group's size; when none do (uniform data over many bins)
 *    each lane adds its own 1, without paying for the match. tools/tune/tune_histogram.cu times the four
 *    variants (plain, uniform, match, adaptive).
 *  - Which bin: histogram_bin.h, the same code as the CPU's (exact integer bins, in 32-bit arithmetic when the
 *    bounds allow; floats in their own rounding; edges by binary search, staged in shared memory when they fit beside the counters, else read through L1).
 * Without PSCAN_HISTOGRAM_ACCUMULATE the output is zeroed first (cudaMemsetAsync), then the blocks add to it.
 *
 * Work O(n + blocks x bins). Global memory: the samples are read once per window (once up to 65536 bins, or
 * 32768 without PACKED), the counts written by bins x blocks atomics (plus the memset); no temp.
 * Measured (H100, tools/tune/tune_histogram.cu, 2^28 samples, median of 20, x CUB's HistogramEven), before the
 * layouts above: plain shared atomics (variant 0) beat the three aggregating variants in every case, all-equal
 * data included (Hopper's shared-memory atomics on one address cost less than a vote or a match), so plain is
 * the default. Plain, uniform / all-equal data: u8 in 256 bins 0.65x / 0.55x CUB (then one u32 per bin and a
 * branch per sample); u32 in 256 bins 1.61x / 1.43x (0.99 of copy bandwidth); f32 in 1024 bins 10.5x / 1.64x;
 * f32 in 65536 bins 9.1x / 0.54x (then two windows of 256-thread blocks: the samples read twice, one block an
 * SM). docs/bench/h100-histogram-tune.csv.
 * Measured since (NVIDIA H200, tools/tune/variants.sh over tune_histogram.cu, 2^28 samples, median of 10, x CUB;
 * docs/bench/h200-histogram-variants.csv), uniform / all-equal data:
 *  - branch-free WORDS (the default): u8 in 256 bins 0.99x / 0.70x CUB (CUB's all-equal u8 runs at 0.74 of
 *    copy); u32 in 256 bins 2.29x / 2.04x (1.00 of copy); f32 in 1024 bins 13.2x / 2.18x; u32 in 65536 bins
 *    (two windows) 16.5x / 1.11x, f32 16.5x / 0.99x.
 *  - LANES for u8: 0.89x / 0.61x, slower both ways, so off (PS_HISTOGRAM_LANES 0).
 *  - PACKED for 65536 bins: u32 38.8x / 0.70x (0.90 / 0.24 of copy), f32 35.9x / 0.69x: one read of the samples
 *    more than pays on spread data, but 1024 threads' atomics on one word (each returning its value, for the
 *    wrap) serialise on all-equal data, below CUB, unless the hot word is aggregated first. Its results were
 *    exact in every run (all-equal 2^28 wraps each half 4096 times).
 *  - PACKED with PS_HISTOGRAM_PACKED_AGG (docs/bench/h200-histogram-packed-agg.csv, 65536 bins, x CUB at 2^28,
 *    uniform / all-equal / half the samples in one bin), u32: two windows (no PACKED) 16.4x / 1.26x / 10.7x;
 *    packed, plain atomics 38.6x / 0.82x / 11.9x; whole-warp check (AGG 1, the default) 36.0x / 3.43x / 12.1x
 *    (0.84 / 0.98 of copy); match always (2) 4.9x / 2.4x / 5.7x; adaptive (3) 34.2x / 3.2x / 5.7x. f32 alike
 *    (AGG 1: 34.2x / 2.79x / 9.27x). At 2^24 AGG 1 is 17.0x / 4.26x / 9.57x against two windows' 11.3x / 2.3x /
 *    8.5x. So PACKED with the whole-warp check is the default for 32769..65536 bins.
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
/* Vectors per thread for 1-byte samples (16 samples a vector; at 4 some u8 kernels spill under the 64-register
 * bound: -Xptxas -v). */
#ifndef PS_HISTOGRAM_VECS_U8
#define PS_HISTOGRAM_VECS_U8 4
#endif
#ifndef PS_HISTOGRAM_THREADS
#define PS_HISTOGRAM_THREADS 256
#endif
/* Bins beyond one window of u32 counters: 1 two 16-bit counters per word (one window up to 65536 bins), 0 more
 * windows of u32 counters. */
#ifndef PS_HISTOGRAM_PACKED
#define PS_HISTOGRAM_PACKED 1 /* with PACKED_AGG 1: faster than two windows on every data measured (header) */
#endif
/* Warp aggregation before PACKED's atomics (with plain PS_HISTOGRAM_AGG), a PS_HIST_AGG_* value: 0 none, 1 a
 * vector's samples all in one slot across the warp, 2 __match_any_sync always, 3 adaptive (ps_hist_packed_add_n). */
#ifndef PS_HISTOGRAM_PACKED_AGG
#define PS_HISTOGRAM_PACKED_AGG 1 /* the whole-warp check: the best of the four measured (header) */
#endif
/* Threads of a packed block: only one 128 KiB block fits on an SM, so it is a large one. */
#ifndef PS_HISTOGRAM_PACKED_THREADS
#define PS_HISTOGRAM_PACKED_THREADS 1024
#endif
/* Samples of at most this many bytes, in at most PS_HISTOGRAM_LANE_BINS bins, count in a copy of the counters per
 * lane (0: never). */
#ifndef PS_HISTOGRAM_LANES
#define PS_HISTOGRAM_LANES 0 /* 1: slower for u8 on uniform and all-equal data alike (header) */
#endif
#define PS_HISTOGRAM_LANE_BINS 256u
/* The most u32 counters one block keeps in shared memory (128 KiB). */
#define PS_HISTOGRAM_WINDOW_MAX 32768u
/* Edges are staged in shared memory when they and the counters fit in this much (keeps several blocks per SM). */
#define PS_HISTOGRAM_STAGE_BYTES (48u * 1024u)

enum { PS_HIST_AGG_PLAIN, PS_HIST_AGG_UNIFORM, PS_HIST_AGG_MATCH, PS_HIST_AGG_ADAPTIVE };
/* How a block keeps its counters in shared memory (hist_plan picks one per call):
 *  WORDS  one u32 per bin: counter[s]
 *  LANES  32 u32 copies per bin, lane l's in bank l: counter[s * 32 + l]; conflict-free whatever the data
 *  PACKED two 16-bit counters per u32 word, the window's first half in the low halves and the second half in
 *         the high halves; each half's wraps are added to the output as they happen (ps_hist_packed_fix) */
enum { PS_HIST_WORDS, PS_HIST_LANES, PS_HIST_PACKED };

static constexpr int ps_hist_threads(int layout) {
    return layout == PS_HIST_PACKED ? PS_HISTOGRAM_PACKED_THREADS : PS_HISTOGRAM_THREADS;
}

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
    uint32_t window;     /* bins per window; blockIdx.y picks the window */
    uint32_t edges_at;   /* byte offset of the staged edges in shared memory; 0: not staged */
    int aligned;         /* in is 16-byte aligned */
};

/* One block's counters: the window of bins [lo, lo + bins) in shared memory. A slot is a bin less lo; it counts
 * iff it is below bins (PS_HISTOGRAM_NONE, and a sample of another window, wrap past every window). */
struct ps_hist_block {
    uint32_t *hist;
    uint32_t *mine; /* LANES: hist + this lane, so that slot s's copy is mine[s * 32] */
    uint32_t lo, bins;
    uint32_t half;  /* PACKED: words, (bins + 1) / 2; slot s < half is word s's low half, else word s - half's high */
    void *counts;   /* the output, for PACKED's wraps */
    int wide;       /* u64 counts */
};

/* ---- block level: add to one slot's counter ------------------------------------------------------------------ */

/* Adds delta (mod 2^32 or 2^64, so that -1 subtracts) to the output's count of bin b. */
static __device__ __forceinline__ void ps_hist_global_add(const ps_hist_block &blk, uint32_t b, int64_t delta) {
    if (blk.wide)
        atomicAdd((unsigned long long *)blk.counts + b, (unsigned long long)delta);
    else
        atomicAdd((unsigned int *)blk.counts + b, (unsigned int)delta);
}

/* PACKED: slot s's counter is the low half of word s when s < half, else the high half of word s - half. Adding
 * k (0 <= k < 65536; at most 32 x 16 = 512 here) to it adds k or k << 16 to the word, and the add wrapped the half
 * iff the half's old value + k passes 0xFFFF; as k < 65536, one add wraps a half at most once. The count stays
 * exact whatever the interleaving, because the atomics on a word take effect one at a time, so every wrap of a
 * half is seen by exactly one atomic, the one whose returned old value it follows, and that atomic's thread
 * corrects the output:
 *  - a low half that wrapped (old low + k > 0xFFFF) holds its true count - 65536 and carried exactly 1 into the
 *    high half (old low + k < 2 x 65536): add 65536 to the low bin's output and take 1 from the high bin's; the
 *    carry itself wraps the high half iff old high == 0xFFFF, so then add 65536 to the high bin too (65535 in all);
 *  - a high half that wrapped (old high + k > 0xFFFF) lost 65536 out of the word's top: add 65536 to the high bin.
 * So each half ends as (its adds + carries into it) mod 65536, the 65536s it lost went to the output, the carries
 * were taken back, and the merge adds what is left: per bin, final half + 65536 x wraps - carries = its true
 * count. The output's adds commute, so their order does not matter (a count may dip below zero mid-kernel, modulo
 * its width, but nothing reads it before the kernel ends). When bins is odd the last word's high half is no bin:
 * only carries land there, and it is neither corrected nor merged. Wraps are rare (one per 65536 counts of a bin
 * in a block), so their global atomics cost nothing measurable. An aggregated add (k > 1) is one such add: the
 * argument holds for any k below 65536, whichever lanes' samples it stands for. */
static __device__ __forceinline__ uint32_t ps_hist_packed_word(const ps_hist_block &blk, uint32_t s) {
    return s < blk.half ? s : s - blk.half;
}
static __device__ __forceinline__ uint32_t ps_hist_packed_delta(const ps_hist_block &blk, uint32_t s, uint32_t k) {
    return s < blk.half ? k : k << 16;
}
static __device__ __forceinline__ bool ps_hist_packed_wrapped(const ps_hist_block &blk, uint32_t s, uint32_t old,
                                                              uint32_t k) {
    return (s < blk.half ? old & 0xFFFFu : old >> 16) + k > 0xFFFFu;
}
/* The corrections of an add of k to slot s that returned old, if it wrapped. */
static __device__ void ps_hist_packed_fix(const ps_hist_block &blk, uint32_t s, uint32_t old, uint32_t k) {
    if (!ps_hist_packed_wrapped(blk, s, old, k)) return;
    ps_hist_global_add(blk, blk.lo + s, 65536);
    if (s < blk.half && s + blk.half < blk.bins)
        ps_hist_global_add(blk, blk.lo + s + blk.half, old >> 16 == 0xFFFFu ? 65535 : -1);
}

/* Adds k (1 <= k <= 32, or a warp's 32 x N for PACKED) to slot s (< bins). */
template <int LAYOUT>
static __device__ __forceinline__ void ps_hist_counter_add(const ps_hist_block &blk, uint32_t s, uint32_t k) {
    if (LAYOUT == PS_HIST_WORDS) atomicAdd(&blk.hist[s], k);
    if (LAYOUT == PS_HIST_LANES) atomicAdd(&blk.mine[s * PS_WARP_LANES], k);
    if (LAYOUT == PS_HIST_PACKED) {
        const uint32_t old = atomicAdd(&blk.hist[ps_hist_packed_word(blk, s)], ps_hist_packed_delta(blk, s, k));
        ps_hist_packed_fix(blk, s, old, k);
    }
}

/* PACKED: adds k[i] to slot s[i] for each i, every atomic first and then one test for a wrap among them, so that
 * no atomic waits for the value the one before returned. SKIP: a k of 0 adds nothing (a branch); else it adds 0
 * to word 0 (no branch, for the few samples of a last tile that do not count). */
template <bool SKIP, int N>
static __device__ __forceinline__ void ps_hist_packed_add_k(const ps_hist_block &blk, const uint32_t (&s)[N],
                                                            const uint32_t (&k)[N]) {
    uint32_t old[N];
    bool wrapped = false;
#pragma unroll
    for (int i = 0; i < N; i++) {
        old[i] = 0;
        if (!SKIP || k[i])
            old[i] = atomicAdd(&blk.hist[ps_hist_packed_word(blk, s[i])], ps_hist_packed_delta(blk, s[i], k[i]));
        wrapped |= ps_hist_packed_wrapped(blk, s[i], old[i], k[i]);
    }
    if (wrapped)
        for (int i = 0; i < N; i++) ps_hist_packed_fix(blk, s[i], old[i], k[i]);
}

/* PACKED: adds 1 to each counting slot of a thread's vector of N samples; every lane of the warp calls this
 * together. The atomics return their old values (for the wraps), so the atomics of a warp on one word take turns:
 * with all-equal data, 1024 threads on one word ran at 0.24 of copy (header). PS_HISTOGRAM_PACKED_AGG first
 * looks for the warp's equal slots, at the cost of N - 1 compares, a shuffle and a vote a vector:
 *  - the whole warp's vector in one slot (all-equal data): lane 0 adds 32 x N with one atomic;
 *  - else, adaptive, when some thread's neighbouring samples (or a lane's first and its neighbour lane's) share a
 *    slot (sorted, few-valued or skewed data), or always, with MATCH: sample by sample, __match_any_sync groups
 *    the lanes of equal slots and each group's first lane adds the group's size (at most 32);
 *  - else (spread data) each sample adds its own 1, without paying for the match.
 * Each aggregated add is one add of k < 65536 to one slot, corrected as ps_hist_packed_fix says. */
template <int N>
static __device__ __forceinline__ void ps_hist_packed_add_n(const ps_hist_block &blk, const uint32_t (&slot)[N]) {
    enum { AGG = PS_HISTOGRAM_PACKED_AGG };
    static_assert(PS_WARP_LANES * N < 65536, "an aggregated add must wrap a half at most once");
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    uint32_t s[N], k[N];
    bool match = AGG == PS_HIST_AGG_MATCH;
    if (AGG == PS_HIST_AGG_UNIFORM || AGG == PS_HIST_AGG_ADAPTIVE) {
        const uint32_t next = __shfl_down_sync(PS_WARP_ALL, slot[0], 1); /* lane 31's is its own */
        bool same = next == slot[0], pair = lane < PS_WARP_LANES - 1 && next == slot[0];
#pragma unroll
        for (int i = 1; i < N; i++) {
            same &= slot[i] == slot[0];
            pair |= slot[i] == slot[i - 1];
        }
        if (__all_sync(PS_WARP_ALL, same)) {
            if (lane == 0 && slot[0] < blk.bins) ps_hist_counter_add<PS_HIST_PACKED>(blk, slot[0], PS_WARP_LANES * N);
            return;
        }
        match = AGG == PS_HIST_AGG_ADAPTIVE && __any_sync(PS_WARP_ALL, pair);
    }
    if (match) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            const unsigned peers = __match_any_sync(PS_WARP_ALL, slot[i]);
            k[i] = slot[i] < blk.bins && lane == (unsigned)(__ffs(peers) - 1) ? (uint32_t)__popc(peers) : 0u;
            s[i] = k[i] ? slot[i] : 0;
        }
        ps_hist_packed_add_k<true>(blk, s, k);
        return;
    }
#pragma unroll
    for (int i = 0; i < N; i++) {
        k[i] = slot[i] < blk.bins;
        s[i] = k[i] ? slot[i] : 0;
    }
    ps_hist_packed_add_k<false>(blk, s, k);
}

/* The block's final count of slot s (after a barrier). LANES reads the 32 copies from 32 banks: copy (s + j) %
 * 32 at step j, so that the neighbouring slots of a warp's lanes fall in different banks. */
template <int LAYOUT>
static __device__ __forceinline__ uint32_t ps_hist_counter_read(const ps_hist_block &blk, uint32_t s) {
    if (LAYOUT == PS_HIST_WORDS) return blk.hist[s];
    if (LAYOUT == PS_HIST_PACKED) return s < blk.half ? blk.hist[s] & 0xFFFFu : blk.hist[s - blk.half] >> 16;
    uint32_t c = 0;
    for (uint32_t j = 0; j < PS_WARP_LANES; j++) c += blk.hist[s * PS_WARP_LANES + (s + j) % PS_WARP_LANES];
    return c;
}

/* The u32 words of a block's counters. WORDS and LANES keep a spare slot past the window, never merged, where
 * plain atomics put the samples that do not count, so that the atomic need not sit behind a branch. */
static constexpr uint32_t ps_hist_words(int layout, uint32_t bins) {
    return layout == PS_HIST_LANES ? (bins + 1) * PS_WARP_LANES : layout == PS_HIST_PACKED ? (bins + 1) / 2 : bins + 1;
}

/* ---- warp level: add one sample's slot to the block's histogram ----------------------------------------------- */

/* Every lane of the warp calls this together, each with its own slot. */
template <int AGG, int LAYOUT>
static __device__ __forceinline__ void ps_hist_warp_add(const ps_hist_block &blk, uint32_t slot) {
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    const bool counts = slot < blk.bins;
    if (AGG == PS_HIST_AGG_PLAIN) { /* (PACKED goes through ps_hist_packed_add_n) */
        ps_hist_counter_add<LAYOUT>(blk, counts ? slot : blk.bins, 1u); /* the spare slot: no branch */
        return;
    }
    if (AGG == PS_HIST_AGG_MATCH) {
        const unsigned peers = __match_any_sync(PS_WARP_ALL, slot);
        if (counts && lane == (unsigned)(__ffs(peers) - 1))
            ps_hist_counter_add<LAYOUT>(blk, slot, (uint32_t)__popc(peers));
        return;
    }
    /* UNIFORM and ADAPTIVE: does the whole warp hold one slot? (lane 31's neighbour is itself) */
    const uint32_t next = __shfl_down_sync(PS_WARP_ALL, slot, 1);
    if (__all_sync(PS_WARP_ALL, next == slot)) {
        if (lane == 0 && counts) ps_hist_counter_add<LAYOUT>(blk, slot, 32u);
        return;
    }
    if (AGG == PS_HIST_AGG_ADAPTIVE && __any_sync(PS_WARP_ALL, lane < PS_WARP_LANES - 1 && next == slot)) {
        const unsigned peers = __match_any_sync(PS_WARP_ALL, slot);
        if (counts && lane == (unsigned)(__ffs(peers) - 1))
            ps_hist_counter_add<LAYOUT>(blk, slot, (uint32_t)__popc(peers));
        return;
    }
    if (counts) ps_hist_counter_add<LAYOUT>(blk, slot, 1u);
}

/* ---- the kernel --------------------------------------------------------------------------------------------- */

/* One tile: FULL (every sample valid and the samples 16-byte aligned) loads vectors and checks nothing per
 * sample; the last tile and misaligned calls load element by element and drop what lies past valid. */
template <class T, int FORM, int AGG, int VECS, int LAYOUT, bool FULL>
static __device__ __forceinline__ void ps_hist_tile(const ps_hist_params<T> &p, const ps_hist_block &blk,
                                                    const T *edges, uint64_t base, uint32_t valid) {
    enum { THREADS = ps_hist_threads(LAYOUT), VEC = 16 / sizeof(T) };
    uint4 raw[VECS];
#pragma unroll
    for (int k = 0; k < VECS; k++) {
        const uint32_t pv = k * THREADS + threadIdx.x;
        if (FULL) {
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
        const uint32_t pv = k * THREADS + threadIdx.x;
        uint32_t slot[VEC];
#pragma unroll
        for (int i = 0; i < VEC; i++) {
            const uint32_t b = FORM == PS_HISTOGRAM_EDGES ? ps_hist_type<T>::search(edges, p.h.bins, x[i])
                                                          : ps_hist_type<T>::even(&p.h, (ps_histogram_form)FORM, x[i]);
            slot[i] = FULL || pv * VEC + i < valid ? b - blk.lo : PS_HISTOGRAM_NONE;
        }
        if (LAYOUT == PS_HIST_PACKED && AGG == PS_HIST_AGG_PLAIN) {
            ps_hist_packed_add_n(blk, slot);
        } else {
#pragma unroll
            for (int i = 0; i < VEC; i++) ps_hist_warp_add<AGG, LAYOUT>(blk, slot[i]);
        }
    }
}

/* At most 64 registers a thread, so that 1024 threads fit on an SM (unbounded, the u8 kernels took 128). */
template <class T, int FORM, int AGG, int VECS, int LAYOUT>
__global__ void __launch_bounds__(ps_hist_threads(LAYOUT), 1024 / ps_hist_threads(LAYOUT))
    ps_histogram_kernel(const ps_hist_params<T> p) {
    enum { THREADS = ps_hist_threads(LAYOUT), TILE = THREADS * VECS * (16 / sizeof(T)) };
    extern __shared__ __align__(PS_DYNAMIC_SMEM_ALIGN) unsigned char ps_hist_smem[];
    ps_hist_block blk;
    blk.hist = reinterpret_cast<uint32_t *>(ps_hist_smem);
    blk.mine = blk.hist + threadIdx.x % PS_WARP_LANES;
    blk.lo = blockIdx.y * p.window;
    blk.bins = p.h.bins - blk.lo < p.window ? p.h.bins - blk.lo : p.window;
    blk.half = (blk.bins + 1) / 2;
    blk.counts = p.counts;
    blk.wide = p.h.count_bytes == 8;

    /* ---- setup: zero the counters; stage the edges ---- */
    const T *edges = (const T *)p.h.edges;
    if (FORM == PS_HISTOGRAM_EDGES && p.edges_at) {
        T *staged = reinterpret_cast<T *>(ps_hist_smem + p.edges_at);
        for (uint32_t i = threadIdx.x; i <= p.h.bins; i += THREADS) staged[i] = edges[i];
        edges = staged;
    }
    for (uint32_t i = threadIdx.x; i < ps_hist_words(LAYOUT, blk.bins); i += THREADS) blk.hist[i] = 0;
    __syncthreads();

    /* ---- count: tile by tile, every lane of a warp through the same iterations ---- */
    for (uint64_t tile = blockIdx.x; tile < p.tiles; tile += gridDim.x) {
        const uint64_t base = tile * TILE;
        const uint32_t valid = p.n - base < (uint64_t)TILE ? (uint32_t)(p.n - base) : (uint32_t)TILE;
        if (p.aligned && valid == (uint32_t)TILE)
            ps_hist_tile<T, FORM, AGG, VECS, LAYOUT, true>(p, blk, edges, base, valid);
        else
            ps_hist_tile<T, FORM, AGG, VECS, LAYOUT, false>(p, blk, edges, base, valid);
    }
    __syncthreads();

    /* ---- merge: this block's nonzero counts into the output ---- */
    for (uint32_t s = threadIdx.x; s < blk.bins; s += THREADS) {
        const uint32_t c = ps_hist_counter_read<LAYOUT>(blk, s);
        if (c != 0) ps_hist_global_add(blk, blk.lo + s, c);
    }
}

/* ---- host side ---------------------------------------------------------------------------------------------- */

/* How a block keeps the counters: per lane for narrow samples in few bins, one u32 each when they fit, else packed
 * (or u32 windows), the bins split evenly over the fewest windows. */
struct ps_hist_plan {
    int layout;
    uint32_t window; /* bins per window */
};
static ps_hist_plan hist_plan(uint32_t bins, size_t sample_bytes, const ps_cuda_device *dev) {
    uint32_t most = (uint32_t)dev->max_shared_per_block_optin / 4u - PS_WARP_LANES; /* u32 words, less the spare */
    most =
        (most < PS_HISTOGRAM_WINDOW_MAX ? most : PS_HISTOGRAM_WINDOW_MAX) & ~63u; /* a packed window is 64 bins x k */
    if (sample_bytes <= PS_HISTOGRAM_LANES && bins <= PS_HISTOGRAM_LANE_BINS && bins * PS_WARP_LANES <= most)
        return {PS_HIST_LANES, bins};
    if (bins <= most) return {PS_HIST_WORDS, bins};
    const uint32_t per = PS_HISTOGRAM_PACKED ? 2 * most : most, windows = (bins + per - 1) / per;
    return {PS_HISTOGRAM_PACKED ? PS_HIST_PACKED : PS_HIST_WORDS, ((bins + windows - 1) / windows + 63u) & ~63u};
}

template <class T, int FORM, int AGG, int VECS, int LAYOUT>
static cudaError_t ps_histogram_start(ps_hist_params<T> p, const ps_cuda_device *dev) {
    enum { THREADS = ps_hist_threads(LAYOUT), TILE = THREADS * VECS * (16 / sizeof(T)) };
    p.tiles = ps_cuda_div_up(p.n, TILE);
    const uint32_t windows = (p.h.bins + p.window - 1) / p.window;
    size_t smem = (size_t)ps_hist_words(LAYOUT, p.window) * 4u;
    if (FORM == PS_HISTOGRAM_EDGES) {
        const size_t at = (smem + 15u) & ~(size_t)15u, edge_bytes = ((size_t)p.h.bins + 1) * sizeof(T);
        if (at + edge_bytes <= PS_HISTOGRAM_STAGE_BYTES) {
            p.edges_at = (uint32_t)at;
            smem = at + edge_bytes;
        }
    }

    auto kernel = ps_histogram_kernel<T, FORM, AGG, VECS, LAYOUT>;
    PS_CUDA_TRY(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)smem));
    int per_sm = 0;
    PS_CUDA_TRY(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
    if (per_sm < 1) per_sm = 1;
    /* a persistent grid over the windows; no block counts more than 2^31 samples, so no u32 counter overflows */
    uint64_t blocks = (uint64_t)per_sm * (uint64_t)dev->sm_count / windows;
    const uint64_t fewest = ps_cuda_div_up(p.tiles, ((uint64_t)1 << 31) / TILE);
    if (blocks < fewest) blocks = fewest;
    if (blocks > p.tiles) blocks = p.tiles;
    if (blocks < 1) blocks = 1;
    dim3 grid((unsigned)blocks, windows);
    kernel<<<grid, THREADS, smem, dev->stream>>>(p);
    return cudaGetLastError();
}

template <class T, int FORM, int AGG = PS_HISTOGRAM_AGG,
          int VECS = sizeof(T) == 1 ? PS_HISTOGRAM_VECS_U8 : PS_HISTOGRAM_VECS>
static cudaError_t ps_histogram_launch(const ps_request *req, const ps_cuda_device *dev) {
    ps_hist_params<T> p;
    memset(&p, 0, sizeof p);
    p.in = (const T *)req->in;
    p.counts = req->out;
    p.n = req->n;
    p.h = req->hist;
    const ps_hist_plan plan = hist_plan(p.h.bins, sizeof(T), dev);
    p.window = plan.window;
    p.aligned = ((uintptr_t)req->in & 15u) == 0;
    if (!p.h.accumulate) PS_CUDA_TRY(cudaMemsetAsync(req->out, 0, (size_t)p.h.bins * p.h.count_bytes, dev->stream));
    if (plan.layout == PS_HIST_PACKED) return ps_histogram_start<T, FORM, AGG, VECS, PS_HIST_PACKED>(p, dev);
    if constexpr (sizeof(T) <= PS_HISTOGRAM_LANES)
        if (plan.layout == PS_HIST_LANES) return ps_histogram_start<T, FORM, AGG, VECS, PS_HIST_LANES>(p, dev);
    return ps_histogram_start<T, FORM, AGG, VECS, PS_HIST_WORDS>(p, dev);
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
