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
 * one value written per run; 32-byte status entries, two per tile. Not tuned yet: the per-run writes go out
 * from each thread's items as they are (not staged for coalescing), element-wise loads.
 */
#include <stdint.h>
#include <string.h>

#include "block/ops.cuh"
#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

#ifndef PS_RBK_ITEMS
#define PS_RBK_ITEMS 16
#endif
#define PS_RBK_THREADS 256
#define PS_RBK_TILE (PS_RBK_ITEMS * PS_RBK_THREADS)

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

template <class T, class Op> struct ps_rbk_program {
    typedef ps_rbk_pair<T> carry;
    typedef ps_rbk_params params;
    enum {
        THREADS = PS_RBK_THREADS,
        MIN_BLOCKS = 2,
        WARPS = THREADS / PS_WARP_LANES,
        ITEMS = PS_RBK_ITEMS,
        TILE = PS_RBK_TILE
    };
    struct smem {
        T items[TILE + TILE / 32];
        uint8_t heads[TILE + 1]; /* heads[o]: item o starts a run; heads[valid]: the item after the tile does */
        carry warp_totals[WARPS];
    };
    struct local {
        T x[ITEMS];
        uint32_t hmask, emask; /* bit j: item j starts / ends a run */
        carry thread_prefix;
        uint64_t base;
        uint32_t valid;
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

    static __device__ __forceinline__ carry reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = Op::template identity<T>();
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load: values (or ones) and head bits, coalesced ---- */
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t o = k * THREADS + threadIdx.x;
            if (o < l.valid) {
                const uint64_t i = l.base + o;
                s.items[ps_rbk_pad(o)] = p.values ? ((const T *)p.values)[i] : T(1);
                s.heads[o] = i == 0 || ps_rbk_key_changes(p, i);
            }
        }
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
                x = s.items[ps_rbk_pad(L)];
                h = s.heads[L] != 0;
                end = s.heads[L + 1] != 0;
            }
            run.v = h ? x : Op::combine(run.v, x);
            run.c += h ? 1u : 0u;
            l.hmask |= (h ? 1u : 0u) << j;
            l.emask |= (end ? 1u : 0u) << j;
            l.x[j] = run.v;
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
        return aggregate;
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, carry prefix, carry aggregate,
                                                   local &l, smem &) {
        T init;
        memcpy(&init, &p.init, sizeof(T));
        const carry before = combine(prefix, l.thread_prefix);

        /* ---- store: one key and one value per run that ends in this thread's items ---- */
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            if (!((l.emask >> j) & 1u)) continue;
            const uint32_t upto = l.hmask & ((2u << j) - 1u);
            const T v = upto ? l.x[j] : Op::combine(before.v, l.x[j]);
            const unsigned long long r = before.c + __popc(upto) - 1;
            ((T *)p.values_out)[r] = Op::combine(init, v);
            ps_rbk_copy_key(p, r, l.base + threadIdx.x * ITEMS + j);
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

static uint64_t rbk_tiles(uint64_t n) { return ps_cuda_div_up(n, PS_RBK_TILE); }

pscan_status ps_cuda_rbk_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = rbk_tiles(req->n);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = req->n > 0 ? ps_chain_temp_bytes<ps_rbk_pair<uint64_t>>(tiles) : 0;
    return PSCAN_SUCCESS;
}

template <class T, class Op> struct rbk_launch {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        typedef ps_rbk_program<T, Op> P;
        static_assert((unsigned)P::TILE == PS_RBK_TILE, "one tile size for plan and launch");
        static_assert(sizeof(typename P::carry) <= sizeof(ps_rbk_pair<uint64_t>), "temp is sized for the widest pair");
        ps_rbk_params p;
        memset(&p, 0, sizeof p);
        p.keys = req->in2;
        p.values = req->prim == PS_PRIM_RUN_LENGTH_ENCODE ? NULL : req->in;
        p.keys_out = req->out;
        p.values_out = req->out2;
        p.count = (uint64_t *)req->count;
        p.n = req->n;
        p.tiles = (uint32_t)rbk_tiles(req->n);
        p.key_bytes = (uint32_t)req->key_bytes;
        memcpy(&p.init, req->init.bytes, sizeof(T));
        return ps_chain_single_pass<P>(p, p.tiles, req->temp, dev->stream);
    }
};

/* Both primitives (run-length encoding arrives as u64 sums); n == 0 writes the count alone. */
cudaError_t ps_cuda_rbk_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    return ps_cuda_dispatch<rbk_launch>::run(req, dev);
}
