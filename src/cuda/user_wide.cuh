/*
 * user_wide.cuh - scan and reduce tile programs for user operators whose element does not tile a 16-byte vector
 * (12, 24, 32 bytes, and any other size that is not 1, 2, 4, 8 or 16), on the single-pass chain driver
 * (chain/single_pass.cuh). Compiled only by NVRTC with the user's source (user_op.cu); device code only.
 *
 * Why a second program: the scan and reduce programs (5_decoupled_lookback.cu, reduce.cu) move 16-byte vectors
 * of 16 / sizeof(T) elements, which needs sizeof(T) to divide 16. Here each thread holds ITEMS whole elements,
 * warp-striped: item k of lane l of warp w is element (w ITEMS + k) 32 + l of the tile, so each load and store
 * instruction of a warp covers 32 consecutive elements (coalesced, in the element's own alignment). Items stay
 * in registers across the look-back.
 *  - reduce: per item k, an in-order warp scan (scan) or warp reduction (reduce) of the 32 lanes' items,
 *    carried across k; warp totals in order: the tile's aggregate.
 *  - consume: prefix (+) warp prefix (+) item prefix (+) item, stored where it was loaded (so in place is safe).
 *  - Reverse mirrors the tile (physical tile tiles-1-id, element TILE-1-i), as the vector program does.
 * The params structs are member for member the vector programs', so user_op.cu lays out one set of kernel
 * parameters for both (its static_asserts check the sizes).
 *
 * Work O(n); global memory: n reads and n writes (scan), n reads (reduce); depth one tile plus n / (tile x 64)
 * look-back rounds. Not measured on a GPU yet: the per-item warp scans (ITEMS x 5 shuffle steps of sizeof(T) / 4
 * words) are the cost a wide carry pays.
 */
#ifndef PSCAN_USER_WIDE_CUH
#define PSCAN_USER_WIDE_CUH

#include <stdint.h>

#include "block/warp.cuh"
#include "chain/single_pass.cuh"

/* S, or U when R: the scan's or the reduce's params. */
template <bool R, class S, class U> struct ps_user_wide_pick {
    typedef S type;
};
template <class S, class U> struct ps_user_wide_pick<true, S, U> {
    typedef U type;
};

template <class T, class Op, bool Reverse, bool Reduce, int ITEMS_, int MIN_BLOCKS_> struct ps_user_wide_program {
    typedef T carry;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MIN_BLOCKS_,
        WARPS = THREADS / PS_WARP_LANES,
        ITEMS = ITEMS_,
        TILE = ITEMS * THREADS
    };
    /* ps_scan_program::params (scan) or ps_reduce_program::params (reduce), member for member */
    struct scan_params {
        const T *in;
        T *out;
        uint64_t n;
        uint32_t tiles;
        int exclusive;
        int aligned; /* unused here */
        T init;
        const T *init_device;
        T *total_out;
        uint32_t stagger_row; /* unused here: the wide programs declare no stagger_row hook */
    };
    struct reduce_params {
        const T *in;
        T *result;
        uint64_t n;
        uint32_t tiles;
        int aligned; /* unused here */
        T init;
    };
    typedef typename ps_user_wide_pick<Reduce, scan_params, reduce_params>::type params;
    struct smem {
        T warp_totals[WARPS];
    };
    struct local {
        T item[ITEMS];
        T item_prefix[Reduce ? 1 : ITEMS]; /* scan: everything in this warp's chunk before item k of this lane */
        T warp_prefix;                      /* scan: everything in the tile before this warp's chunk */
        uint64_t base;
        uint32_t valid;
    };

    static __device__ __forceinline__ T combine(T a, T b) { return Op::combine(a, b); }
    static __device__ __forceinline__ T identity() { return Op::template identity<T>(); }
    static __device__ __forceinline__ T initial(const scan_params &p) { return p.init_device ? *p.init_device : p.init; }
    static __device__ __forceinline__ T initial(const reduce_params &p) { return p.init; }

    /* Physical element (within the tile) of item k of this thread. */
    static __device__ __forceinline__ uint32_t element_of(unsigned warp, unsigned lane, int k) {
        const uint32_t e = (warp * ITEMS + k) * PS_WARP_LANES + lane;
        return Reverse ? TILE - 1 - e : e;
    }

    static __device__ __forceinline__ T reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = identity();
        const uint32_t ptile = Reverse ? p.tiles - 1 - id : id;
        l.base = (uint64_t)ptile * TILE;
        const uint64_t left = p.n > l.base ? p.n - l.base : 0;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load: every item first ---- */
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t o = element_of(warp, lane, k);
            l.item[k] = o < l.valid ? p.in[l.base + o] : e;
        }

        /* ---- items across the warp, in order, carried across k ---- */
        T running = e;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            if (Reduce) {
                running = combine(running, ps_warp_reduce_to_lane0(l.item[k], lane, ps_chain_combine<ps_user_wide_program>()));
            } else {
                const T inclusive = ps_warp_inclusive(l.item[k], lane, ps_chain_combine<ps_user_wide_program>());
                T before = ps_shfl_up(inclusive, 1);
                if (lane == 0) before = e;
                l.item_prefix[Reduce ? 0 : k] = combine(running, before);
                running = combine(running, ps_shfl_idx(inclusive, PS_WARP_LANES - 1));
            }
        }

        /* ---- the tile's aggregate: warp totals in order ---- */
        if (lane == 0) s.warp_totals[warp] = running;
        __syncthreads();
        T aggregate = e;
        l.warp_prefix = e;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w == (int)warp) l.warp_prefix = aggregate;
            aggregate = combine(aggregate, s.warp_totals[w]);
        }
        return aggregate;
    }

    static __device__ __forceinline__ void finish(const reduce_params &p, uint32_t id, T prefix, T aggregate, local &) {
        if (id == p.tiles - 1 && threadIdx.x == 0) *p.result = combine(prefix, aggregate);
    }
    static __device__ __forceinline__ void finish(const scan_params &p, uint32_t id, T prefix, T aggregate, local &l) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T thread_base = combine(prefix, l.warp_prefix);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const T r = combine(thread_base, l.item_prefix[Reduce ? 0 : k]);
            const uint32_t o = element_of(warp, lane, k);
            if (o < l.valid) p.out[l.base + o] = p.exclusive ? r : combine(r, l.item[k]);
        }
        if (p.total_out && id == p.tiles - 1 && threadIdx.x == 0) *p.total_out = combine(prefix, aggregate);
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, T prefix, T aggregate, local &l,
                                                   smem &) {
        finish(p, id, prefix, aggregate, l);
    }
};

#endif /* PSCAN_USER_WIDE_CUH */
