/*
 * reduce_by_key.cu - reduce by key and run-length encoding, as one tile program on the single-pass chain
 * driver (chain/single_pass.cuh); the sibling of segmented_scan.cu with one result per run instead of one per
 * item.
 *
 * The carry is a pair (c, v): c the number of runs that start in everything before (heads), v the running
 * value of the run open at its end. The combine
 *     (ca, a) . (cb, b) = (ca + cb, cb ? b : a (+) b)
 * is associative and not commutative, identity (0, identity of +). Run r's result belongs at index r, and the
 * run that ends at item i is run (heads in [0, i]) - 1, so every item knows where its run's result goes from the
 * pair before it and its own heads: the chain hands out the output positions and the values in one pass.
 * Run-length encoding is the same program over u64 sums with every item counting 1 (nothing is read but the
 * keys).
 *
 * The tile program (256 threads x ITEMS items, blocked, as segmented_scan.cu):
 *  - reduce: keys are compared with their predecessors coalesced (item k * 256 + thread), head bits and values
 *    go to shared memory, and one more compare says whether the tile's last item ends a run. Each thread scans
 *    its ITEMS consecutive items as pairs, then across the warp and the block.
 *  - consume(prefix): an item whose successor starts a run (or that is the last item) ends its run: it writes
 *    its key and init (+) its running value at prefix.c + (heads of its thread up to it) - 1. The last tile
 *    writes the number of runs, prefix.c + aggregate.c, to *count.
 *
 * Global memory: n keys read (and one more per tile), n values read (not for run-length encoding), one key and
 * one value written per run; 32-byte status entries, two per tile.
 *
 * Measured (pscan bench --backend cuda --primitive rle: i32 elements in runs of 8, u64 lengths; L2 flushed, median
 * of 20; H100 80GB HBM3, CUDA 13.0, CUB 3.0.1; docs/bench/h100-rle.csv), of copy / against CUB's
 * DeviceRunLengthEncode::Encode: 2^20 0.22 / 0.65x, 2^24 0.14 / 0.39x, 2^28 0.13 / 0.38x. Why (ptxas -v for sm_90,
 * the u64 sum instance run-length encoding runs, defaults):
 *  - 109 registers: the carry is a pair of u64 (16 bytes, shuffled word by word) and each thread keeps its 16
 *    running u64 values (32 registers) across the look-back. 2 blocks per SM (65536 / (112 x 256)), so 2 x 16 KiB
 *    of keys in flight per SM: a fifth of the plain scan's 160 KiB. The main cause.
 *  - 38,048 bytes of shared memory, 33.8 KB of it a u64 array that run-length encoding fills with ones and reads
 *    back (the items all count 1).
 *  - Keys: two four-byte loads per item (key i and key i - 1): 32 load instructions per thread and tile.
 *  - The compaction: each thread writes the runs that end in its 16 items itself, so a store instruction has
 *    about 4 of 32 lanes active, spread over about 512 bytes (8-byte lengths and 4-byte keys), and each key is
 *    read again from global memory at its scattered position; CUB gathers a tile's runs in shared memory first.
 *  - 16-byte carries: 32-byte status entries (as the chain's widest common case); one launch, no memset (n > 0).
 * Knobs (defaults = the above; tools/tune/tune_segscan.cu times them against CUB and a copy): VEC_LOADS=1 (keys
 * as 16-byte vectors, compared in registers, loads first; ones as constants), RLE_COUNTS=1 (run-length encoding's
 * own instance: no values kept, 77-80 registers), STAGE=1 (runs gathered in shared memory and written out
 * contiguously; with RLE_COUNTS only the end positions are staged, the lengths are their differences: 12.4 KB of
 * shared memory), MIN_BLOCKS=4 (64 registers, a few spilled bytes), RLE_ITEMS=32 (32 KiB of keys per tile).
 * Small n: run-length encoding has a second tier, the same program with smaller tiles (RLE_SMALL_*), for inputs
 * whose large tiles would leave most SMs idle; plan and launch take the tier from one function of n.
 */
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "block/ops.cuh"
#include "block/rows.cuh"
#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

/* Tuning knobs (tools/tune/tune_segscan.cu). Defaults from one H100 run of every variant (2026-11-23,
 * docs/bench/h100-segscan-variants.csv, i32 keys, runs of 8): VEC_LOADS + STAGE + RLE_COUNTS with 24-item tiles
 * at 3 blocks per SM took run-length encoding from 0.38x CUB to 1.33x at 2^28 (0.13 -> 0.47 of copy) and 1.18x at
 * 2^24; the same knobs at 16 items and 2 blocks per SM gave 1.16x. The values program (reduce by key) keeps 16
 * items at 2 blocks per SM, which it was not measured against. ITEMS: items per thread
 * (at most 32: a thread's head and end bits are one word each). MIN_BLOCKS: the launch bounds' blocks per SM.
 * LANE_ENTRIES: the chain's look-back entries per lane. VEC_LOADS: full, aligned tiles load keys (and values) as
 * 16-byte vectors, every load issued before any shared-memory store, with each key compared to its predecessor
 * in registers (one scalar load per vector for the key before it) instead of two scalar loads per item; run-length
 * encoding takes its ones as constants instead of through shared memory. STAGE: the runs that end in a tile are
 * gathered in shared memory (value, and the key's position in the tile) and written out contiguously by the whole
 * block, instead of each thread writing its own runs (about one lane in eight active per store) and re-reading
 * each key from global memory at a scattered address. */
#ifndef PS_RBK_ITEMS
#define PS_RBK_ITEMS 16
#endif
#ifndef PS_RBK_MIN_BLOCKS
#define PS_RBK_MIN_BLOCKS 2
#endif
#ifndef PS_RBK_LANE_ENTRIES
#define PS_RBK_LANE_ENTRIES PS_CHAIN_LANE_ENTRIES
#endif
#ifndef PS_RBK_VEC_LOADS
#define PS_RBK_VEC_LOADS 1
#endif
#ifndef PS_RBK_STAGE
#define PS_RBK_STAGE 1
#endif
/* RLE_COUNTS: run-length encoding runs its own instance of the program, whose items all count 1: an item's
 * length so far follows from the head bits (items since the last head), so the thread keeps no values in
 * registers across the look-back (16 u64 = 32 registers today, 109 in all: 2 blocks per SM) and the tile parks
 * no ones in shared memory. */
#ifndef PS_RBK_RLE_COUNTS
#define PS_RBK_RLE_COUNTS 1
#endif
/* RLE_ITEMS: items per thread of that instance (it parks no values, so its tiles can be larger). */
#ifndef PS_RBK_RLE_ITEMS
#define PS_RBK_RLE_ITEMS 24
#endif
/* RLE_MIN_BLOCKS: that instance's blocks per SM (no values in registers: 3 fit). */
#ifndef PS_RBK_RLE_MIN_BLOCKS
#define PS_RBK_RLE_MIN_BLOCKS 3
#endif
/* RLE_SMALL_*: the small tier of that instance, the same program with RLE_SMALL_ITEMS items per thread at
 * RLE_SMALL_MIN_BLOCKS blocks per SM, run when RLE_ITEMS tiles would be fewer than RLE_SMALL_TILES (0: never;
 * 1024: n up to 6,285,312 at the defaults). At 2^20 items the large tiles are 171 for 132 SMs x 3 blocks: most
 * SMs idle. Measured (NVIDIA H200, tools/tune/tune_segscan.cu --prims rle, i32 in runs of 8, x CUB's
 * DeviceRunLengthEncode::Encode, docs/bench/h200-rle-small-tune.csv), 2^16 / 2^18 / 2^20 / 2^22: without the tier
 * 0.58 / 0.70 / 0.82 / 0.98x; 8 items 1.22 / 1.21 / 0.95 / 0.88x; 12 items (the default) 1.11 / 1.20 / 1.08 /
 * 1.10x; the large tiles stay from 2^24 (1.19x; 8-item tiles there 0.84x). */
#ifndef PS_RBK_RLE_SMALL_TILES
#define PS_RBK_RLE_SMALL_TILES 1024
#endif
/* LOAD_BATCH: tiles off the vector path (the partial last tile, unaligned ones) load their rows this many at a time
 * into registers, values and head bits, before any of them goes to shared memory; 1 (or less) loads, tests and stores
 * row by row, as before the thirtieth session (its own loop was removed then). 8 since the thirtieth session, a small
 * gain: H200, tune_segscan --prims rle (docs/bench/h200-rle-batch.csv), last tiles of 2048 items at 2^11 / 2^13 / 2^15:
 * 8.19 / 9.31 / 9.38 us -> 7.90 / 9.12 / 9.12, the others unchanged; the 1.5-2 us such a tile costs over one of 1024
 * items is mostly elsewhere. Why it was tried: RLE by `pscan bench` on an H200 (docs/bench/h200-rle.csv) ran the calls
 * whose last tile has 2048 items (2^11, 2^13, 2^15: 7.9, 8.9, 8.9 us) 1.5-2 us slower than those whose last tile has
 * 1024 (2^12, 2^14, 2^16: 6.8, 7.3, 7.4), 0.81-0.88x CUB, and the SASS shows each row in a branch of its own, key loads
 * then the store that waits for them. */
#ifndef PS_RBK_LOAD_BATCH
#define PS_RBK_LOAD_BATCH 8
#endif
/* The general path's key before item i is loaded at i - 1 (item 0: at 0) with nothing computed from another load,
 * and item 0 becomes a head where it is stored (load_rows). The first form's `b = i > 0 ? keys[i - 1] : ~keys[i]`
 * put `@!P LOP3 b = ~a` after each row's loads (the SASS), and that instruction waited for the row's first load even
 * where its predicate was off: every row of a batch waited for the one before. H200, thirty-third session,
 * tune_segscan --prims rle (u32 keys, the partial last tiles of the large tier; docs/bench/h200-segscan-forms.csv):
 * 2^24 78.3 -> 76.3 us, 2^24 + 43 78.2 -> 76.2, 10^8 + 7 383.2 -> 382.2, 2^28 + 3 1012.5 -> 1008.1 (CUB 93.0 /
 * 93.7 / 515.7 / 1370.3). The SASS still interleaves each row's compare between the next row's loads, reusing their
 * registers, so a row may still wait for the one before. */
/* VEC_PARTIAL: run-length encoding's small tier takes the vector path for the keys of its partial last tile too
 * (heads_vec): whole vectors before its end as 16-byte loads, the vector it ends in key by key, nothing after it (no
 * head byte past the end is written: thread 0 writes the one at the end). 0: its rows go through the general path,
 * LOAD_BATCH at a time. */
#ifndef PS_RBK_VEC_PARTIAL
#define PS_RBK_VEC_PARTIAL 1
#endif
#ifndef PS_RBK_RLE_SMALL_ITEMS
#define PS_RBK_RLE_SMALL_ITEMS 12
#endif
#ifndef PS_RBK_RLE_SMALL_MIN_BLOCKS
#define PS_RBK_RLE_SMALL_MIN_BLOCKS 4
#endif
#define PS_RBK_THREADS 256
#define PS_RBK_TILE (PS_RBK_ITEMS * PS_RBK_THREADS)

/* Unsigned integer of N bytes (keys compared bit for bit). */
template <int N> struct ps_rbk_uint;
template <> struct ps_rbk_uint<1> { typedef uint8_t type; };
template <> struct ps_rbk_uint<2> { typedef uint16_t type; };
template <> struct ps_rbk_uint<4> { typedef uint32_t type; };
template <> struct ps_rbk_uint<8> { typedef unsigned long long type; };

template <class T> struct ps_rbk_pair {
    unsigned long long c;
    T v;
};

struct ps_rbk_params {
    const void *keys;
    const void *values; /* NULL for run-length encoding: every item counts 1 */
    void *keys_out;
    void *values_out;
    uint64_t *count;
    uint64_t n;
    uint32_t tiles;
    uint32_t key_bytes;
    unsigned long long init;
};

__device__ __forceinline__ uint32_t ps_rbk_pad(uint32_t o) { return o + o / 32; }

/* Whether keys i - 1 and i differ, bit for bit (0 < i < n). */
__device__ __forceinline__ bool ps_rbk_key_changes(const ps_rbk_params &p, uint64_t i) {
    switch (p.key_bytes) {
    case 1: return ((const uint8_t *)p.keys)[i] != ((const uint8_t *)p.keys)[i - 1];
    case 2: return ((const uint16_t *)p.keys)[i] != ((const uint16_t *)p.keys)[i - 1];
    case 4: return ((const uint32_t *)p.keys)[i] != ((const uint32_t *)p.keys)[i - 1];
    default: return ((const unsigned long long *)p.keys)[i] != ((const unsigned long long *)p.keys)[i - 1];
    }
}

__device__ __forceinline__ void ps_rbk_copy_key(const ps_rbk_params &p, uint64_t to, uint64_t from) {
    switch (p.key_bytes) {
    case 1: ((uint8_t *)p.keys_out)[to] = ((const uint8_t *)p.keys)[from]; break;
    case 2: ((uint16_t *)p.keys_out)[to] = ((const uint16_t *)p.keys)[from]; break;
    case 4: ((uint32_t *)p.keys_out)[to] = ((const uint32_t *)p.keys)[from]; break;
    default: ((unsigned long long *)p.keys_out)[to] = ((const unsigned long long *)p.keys)[from]; break;
    }
}

/* ONES: every item counts 1 (run-length encoding with RLE_COUNTS; T is u64 and Op the sum). SMALL: its small
 * tier (RLE_SMALL_ITEMS, RLE_SMALL_MIN_BLOCKS). */
template <class T, class Op, bool ONES = false, bool SMALL = false> struct ps_rbk_program {
    typedef ps_rbk_pair<T> carry;
    typedef ps_rbk_params params;
    enum {
        THREADS = PS_RBK_THREADS,
        MIN_BLOCKS = SMALL ? PS_RBK_RLE_SMALL_MIN_BLOCKS : ONES ? PS_RBK_RLE_MIN_BLOCKS : PS_RBK_MIN_BLOCKS,
        WARPS = THREADS / PS_WARP_LANES,
        ITEMS = SMALL ? PS_RBK_RLE_SMALL_ITEMS : ONES ? PS_RBK_RLE_ITEMS : PS_RBK_ITEMS,
        TILE = ITEMS * PS_RBK_THREADS,
        VEC = 16 / sizeof(T), /* values per 16-byte vector */
        VEC_VALUES = PS_RBK_VEC_LOADS && ITEMS % VEC == 0,
        VECS = VEC_VALUES ? ITEMS / VEC : 1,
        VEC_PARTIAL = PS_RBK_VEC_PARTIAL && SMALL /* the large tier's registers would spill (268 bytes; 20 without) */
    };
    static_assert(ITEMS >= 1 && ITEMS <= 32, "a thread's head and end bits are one word each");
    static_assert(ONES || !SMALL, "the small tier is run-length encoding's");
    static_assert(!PS_RBK_STAGE || TILE <= 65536, "staged positions are 16-bit");
    struct smem {
        /* loaded values; with STAGE, the tile's results in run order after the scan */
        T items[ONES ? 1 : TILE + TILE / 32]; /* ONES stages positions alone (lengths are their differences) */
        alignas(16) uint8_t heads[TILE + 1]; /* heads[o]: item o starts a run; heads[valid]: the item after does */
        carry warp_totals[WARPS];
        uint16_t stage_pos[PS_RBK_STAGE ? TILE : 1]; /* STAGE: the tile position of each run's last item */
    };
    struct local {
        T x[ITEMS];
        uint32_t hmask, emask; /* bit j: item j starts / ends a run */
        carry thread_prefix;
        uint64_t base;
        uint32_t valid;
        bool h0; /* STAGE: the tile's first item starts a run */
    };

    static __device__ __forceinline__ carry combine(carry a, carry b) {
        carry r;
        r.v = b.c ? b.v : Op::combine(a.v, b.v);
        r.c = a.c + b.c;
        return r;
    }
    static __device__ __forceinline__ carry identity() {
        carry r;
        r.v = Op::template identity<T>();
        r.c = 0;
        return r;
    }
    static __device__ __forceinline__ carry initial(const params &) { return identity(); }

    /* A tile's rows off the vector path, LOAD_BATCH at a time (block/rows.cuh): the values, the keys at i and
     * i - 1, loaded raw and compared when stored (a compare beside its load makes the batch wait for it). K: the
     * keys' unsigned integer (the heads compare bit for bit). */
    template <class K> struct row_item {
        T x;
        K a, b; /* key[i], key[i - 1]; for i = 0 b = a: the store makes item 0 a head */
    };
    template <class K>
    static __device__ __forceinline__ void load_rows(const params &p, const local &l, smem &s, bool values,
                                                     bool heads) {
        /* rows a batch (at least 1: row by row) */
        enum { B = PS_RBK_LOAD_BATCH < 1 ? 1 : PS_RBK_LOAD_BATCH < ITEMS ? PS_RBK_LOAD_BATCH : ITEMS };
        const K *keys = (const K *)p.keys;
        ps_block_rows_batched<ITEMS, THREADS, B, row_item<K>>(
            l.valid,
            [&](uint32_t o) {
                const uint64_t i = l.base + o;
                row_item<K> r;
                r.x = values && p.values ? ((const T *)p.values)[i] : T(1);
                r.a = r.b = 0;
                if (heads) {
                    r.a = keys[i];
                    r.b = keys[l.base + (int32_t)(o - (o > 0 || l.base > 0 ? 1u : 0u))]; /* item 0: its own key */
                }
                return r;
            },
            [&](uint32_t o, const row_item<K> &r) {
                if (values) s.items[ps_rbk_pad(o)] = r.x;
                if (heads) s.heads[o] = r.a != r.b || l.base + o == 0;
            });
    }

    static __device__ __forceinline__ carry reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = Op::template identity<T>();
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load: values (or ones) and head bits, coalesced ---- */
        bool fast_keys = false;
        if (PS_RBK_VEC_LOADS && (VEC_PARTIAL || l.valid == (uint32_t)TILE)) {
            switch (p.key_bytes) {
            case 1: fast_keys = heads_vec<1>(p, l, s); break;
            case 2: fast_keys = heads_vec<2>(p, l, s); break;
            case 4: fast_keys = heads_vec<4>(p, l, s); break;
            default: fast_keys = heads_vec<8>(p, l, s); break;
            }
        }
        const bool fast_values = !ONES && VEC_VALUES && p.values && l.valid == (uint32_t)TILE &&
                                 ((uintptr_t)((const T *)p.values + l.base) & 15u) == 0;
        if (fast_values) {
            typedef uint4 vec_t;
            vec_t raw[VECS];
#pragma unroll
            for (int k = 0; k < VECS; k++)
                raw[k] = reinterpret_cast<const vec_t *>((const T *)p.values + l.base)[k * THREADS + threadIdx.x];
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                const uint32_t o = (k * THREADS + threadIdx.x) * VEC;
                T x[VEC];
                memcpy(x, &raw[k], sizeof x);
#pragma unroll
                for (int i = 0; i < VEC; i++) s.items[ps_rbk_pad(o + i)] = x[i]; /* one pad run: 32 % VEC == 0 */
            }
        }
        /* run-length encoding: the scan takes constants */
        const bool ones = ONES || (PS_RBK_VEC_LOADS && !p.values);
        const bool load_values = !fast_values && !ones, load_heads = !fast_keys; /* what the rows still need */
        if (load_values || load_heads)
            ps_with_key_type(p.key_bytes, [&](auto k) { load_rows<decltype(k)>(p, l, s, load_values, load_heads); });
        if (threadIdx.x == 0) {
            const uint64_t after = l.base + l.valid;
            s.heads[l.valid] = after >= p.n || ps_rbk_key_changes(p, after);
        }
        __syncthreads();

        /* ---- the thread's items, scanned as pairs ---- */
        carry run = identity();
        l.hmask = 0;
        l.emask = 0;
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const uint32_t L = threadIdx.x * ITEMS + j;
            T x = e;
            bool h = false, end = false;
            if (L < l.valid) {
                x = ones ? T(1) : s.items[ps_rbk_pad(L)];
                h = s.heads[L] != 0;
                end = s.heads[L + 1] != 0;
            }
            run.v = h ? x : Op::combine(run.v, x);
            run.c += h ? 1u : 0u;
            l.hmask |= (h ? 1u : 0u) << j;
            l.emask |= (end ? 1u : 0u) << j;
            if (!ONES) l.x[j] = run.v;
        }

        /* ---- across the warp, then across the block ---- */
        const carry inclusive = ps_warp_inclusive(run, lane, ps_chain_combine<ps_rbk_program>());
        carry before = ps_shfl_up(inclusive, 1);
        if (lane == 0) before = identity();
        if (lane == PS_WARP_LANES - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        carry aggregate = identity(), warp_prefix = identity();
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w == (int)warp) warp_prefix = aggregate;
            aggregate = combine(aggregate, s.warp_totals[w]);
        }
        l.thread_prefix = combine(warp_prefix, before);
        if (PS_RBK_STAGE) l.h0 = s.heads[0] != 0;
        return aggregate;
    }

    /* VEC_LOADS, a full tile (and with VEC_PARTIAL a partial one): head bits from keys of KB bytes loaded as 16-byte
     * vectors (vector v = k * 256 + thread), each vector's first key compared with the key before it (one scalar load,
     * from the line the previous vector brought in). A partial tile loads the vector it ends in key by key and writes
     * no head at or past its end. False, having done nothing, when the keys are not 16-byte aligned. */
    template <int KB> static __device__ __forceinline__ bool heads_vec(const params &p, local &l, smem &s) {
        typedef typename ps_rbk_uint<KB>::type K;
        enum { KV = 16 / KB, KVECS = ITEMS / KV };
        if (ITEMS % KV != 0) return false;
        const K *keys = (const K *)p.keys + l.base;
        if (((uintptr_t)keys & 15u) != 0) return false;
        const bool full = !VEC_PARTIAL || l.valid == (uint32_t)TILE; /* a constant without VEC_PARTIAL */
        uint4 raw[KVECS > 0 ? KVECS : 1];
        K before[KVECS > 0 ? KVECS : 1];
#pragma unroll
        for (int k = 0; k < KVECS; k++) {
            const uint32_t v = k * THREADS + threadIdx.x, first = v * KV;
            if (full || first + KV <= l.valid) {
                raw[k] = reinterpret_cast<const uint4 *>(keys)[v];
            } else if (first < l.valid) { /* the vector the tile ends in */
                K x[KV];
#pragma unroll
                for (int i = 0; i < KV; i++) x[i] = first + i < l.valid ? keys[first + i] : K(0);
                memcpy(&raw[k], x, sizeof x);
            }
            before[k] = (full || first < l.valid) && l.base + first > 0 ? keys[(int64_t)first - 1] : K(0);
        }
#pragma unroll
        for (int k = 0; k < KVECS; k++) {
            const uint32_t v = k * THREADS + threadIdx.x, first = v * KV;
            K x[KV];
            memcpy(x, &raw[k], sizeof x);
            uint8_t h[KV];
#pragma unroll
            for (int i = 0; i < KV; i++) h[i] = (i == 0 ? before[k] : x[i - 1]) != x[i];
            if (l.base + first == 0) h[0] = 1;
            if (full || first + KV <= l.valid)
                memcpy(&s.heads[first], h, KV); /* aligned to KV bytes: one store of KV bytes */
            else
#pragma unroll
                for (int i = 0; i < KV; i++)
                    if (first + i < l.valid) s.heads[first + i] = h[i];
        }
        return true;
    }

    /* Item j's running value within the thread's items (from its last head, or from the thread's first item). */
    static __device__ __forceinline__ T local_value(const local &l, int j, uint32_t upto) {
        if (ONES) return T(upto ? (uint32_t)j - (31u - (uint32_t)__clz(upto)) + 1u : (uint32_t)j + 1u);
        return l.x[j];
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, carry prefix, carry aggregate,
                                                   local &l, smem &s) {
        T init;
        memcpy(&init, &p.init, sizeof(T));
        const carry before = combine(prefix, l.thread_prefix);

        if (PS_RBK_STAGE) {
            /* ---- store, staged: the tile's runs in order in shared memory, then out contiguously ---- */
            /* the tile's k-th ending run is run first + k: runs ending here are aggregate.c - h0 + (last ends) */
            const uint32_t h0 = l.h0 ? 1u : 0u;
            const unsigned long long first = prefix.c + h0 - 1;
            const uint32_t ends = (uint32_t)aggregate.c - h0 + (s.heads[l.valid] != 0 ? 1u : 0u);
            __syncthreads(); /* s.items and s.heads were read by every thread in reduce */
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                if (!((l.emask >> j) & 1u)) continue;
                const uint32_t upto = l.hmask & ((2u << j) - 1u);
                const T v = upto ? local_value(l, j, upto) : Op::combine(before.v, local_value(l, j, upto));
                const uint32_t q = (uint32_t)(l.thread_prefix.c + __popc(upto)) - h0;
                if (!ONES) s.items[q] = Op::combine(init, v);
                s.stage_pos[q] = (uint16_t)(threadIdx.x * ITEMS + j);
            }
            __syncthreads();
            for (uint32_t q = threadIdx.x; q < ends; q += THREADS) {
                T y;
                if (ONES) {
                    /* runs are contiguous: a run's length is its end less the previous run's end; the tile's
                     * first run also counts what it carried in (prefix.v) unless it starts here */
                    const uint32_t e = s.stage_pos[q];
                    y = Op::combine(init, q ? T(e - s.stage_pos[q - 1]) : Op::combine(h0 ? T(0) : prefix.v, T(e + 1)));
                } else {
                    y = s.items[q];
                }
                ((T *)p.values_out)[first + q] = y;
                ps_rbk_copy_key(p, first + q, l.base + s.stage_pos[q]);
            }
        } else {
            /* ---- store: one key and one value per run that ends in this thread's items ---- */
#pragma unroll
            for (int j = 0; j < ITEMS; j++) {
                if (!((l.emask >> j) & 1u)) continue;
                const uint32_t upto = l.hmask & ((2u << j) - 1u);
                const T v = upto ? local_value(l, j, upto) : Op::combine(before.v, local_value(l, j, upto));
                const unsigned long long r = before.c + __popc(upto) - 1;
                ((T *)p.values_out)[r] = Op::combine(init, v);
                ps_rbk_copy_key(p, r, l.base + threadIdx.x * ITEMS + j);
            }
        }

        if (id == p.tiles - 1 && threadIdx.x == 0) {
            const uint64_t total = prefix.c + aggregate.c;
            if (((uintptr_t)p.count & 7u) == 0) {
                *p.count = total;
            } else {
                unsigned char *c = (unsigned char *)p.count;
#pragma unroll
                for (int b = 0; b < 8; b++) c[b] = (unsigned char)(total >> (8 * b));
            }
        }
    }
};

/* ---- host side ----------------------------------------------------------------------------------------- */

/* Whether run-length encoding of n items (with RLE_COUNTS) runs the small tier: the one choice that both the
 * plan (temp for its tiles) and the launch follow. */
static bool rbk_rle_small(uint64_t n) {
    return (int64_t)ps_cuda_div_up(n, (uint64_t)PS_RBK_RLE_ITEMS * PS_RBK_THREADS) < (int64_t)PS_RBK_RLE_SMALL_TILES;
}

/* Items per tile of the program a request runs (run-length encoding has its own with RLE_COUNTS, in two tiers). */
static uint64_t rbk_tile_items(const ps_request *req) {
    if (!PS_RBK_RLE_COUNTS || req->prim != PS_PRIM_RUN_LENGTH_ENCODE) return (uint64_t)PS_RBK_TILE;
    return (uint64_t)(rbk_rle_small(req->n) ? PS_RBK_RLE_SMALL_ITEMS : PS_RBK_RLE_ITEMS) * PS_RBK_THREADS;
}
static uint64_t rbk_tiles(const ps_request *req) { return ps_cuda_div_up(req->n, rbk_tile_items(req)); }

pscan_status ps_cuda_rbk_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = rbk_tiles(req);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = req->n > 0 ? ps_chain_temp_bytes<ps_rbk_pair<uint64_t>>(tiles) : 0;
    return PSCAN_SUCCESS;
}

template <class T, class Op> struct rbk_launch {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        if constexpr (PS_RBK_RLE_COUNTS && std::is_same<T, uint64_t>::value && std::is_same<Op, ps_cuda_op_sum>::value)
            if (req->prim == PS_PRIM_RUN_LENGTH_ENCODE) return rle(req, dev);
        return launch<ps_rbk_program<T, Op>>(req, dev);
    }
    /* Run-length encoding's own instance (RLE_COUNTS; u64 sums), in the tier rbk_rle_small picks. */
    static cudaError_t rle(const ps_request *req, const ps_cuda_device *dev) {
        if constexpr (PS_RBK_RLE_SMALL_TILES > 0)
            if (rbk_rle_small(req->n)) return launch<ps_rbk_program<T, Op, true, true>>(req, dev);
        return launch<ps_rbk_program<T, Op, true>>(req, dev);
    }
    template <class P> static cudaError_t launch(const ps_request *req, const ps_cuda_device *dev) {
        if ((uint64_t)P::TILE != rbk_tile_items(req)) return cudaErrorInvalidValue; /* plan and launch agree */
        static_assert(sizeof(typename P::carry) <= sizeof(ps_rbk_pair<uint64_t>), "temp is sized for the widest pair");
        ps_rbk_params p;
        memset(&p, 0, sizeof p);
        p.keys = req->in2;
        p.values = req->prim == PS_PRIM_RUN_LENGTH_ENCODE ? NULL : req->in;
        p.keys_out = req->out;
        p.values_out = req->out2;
        p.count = (uint64_t *)req->count;
        p.n = req->n;
        p.tiles = (uint32_t)rbk_tiles(req);
        p.key_bytes = (uint32_t)req->key_bytes;
        memcpy(&p.init, req->init.bytes, sizeof(T));
        return ps_chain_single_pass<P, PS_RBK_LANE_ENTRIES>(p, p.tiles, req->temp, dev->stream);
    }
};

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_segscan.cu instantiates the one launch it times */
/* Both primitives (run-length encoding arrives as u64 sums); n == 0 writes the count alone. */
cudaError_t ps_cuda_rbk_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    return ps_cuda_dispatch<rbk_launch>::run(req, dev);
}
#endif
