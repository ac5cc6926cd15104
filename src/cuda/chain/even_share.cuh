/*
 * chain/even_share.cuh - the even-share driver: runs the reduce half of any tile program in one launch of G
 * blocks, G = the blocks that fit on the device at once or a few times that (the caller's waves; capped by the
 * tile count), for programs whose only output is the total (reduce). Device code and its launcher; it includes
 * no host dispatch header. Internal.
 *
 * Why a second driver: a reduction's tiles need nothing from each other, but on the single-pass driver every
 * tile still waits for one look-back round trip before its block may exit and the next tile's loads start. On
 * an H200 that held the reduce at 0.82-0.87x CUB from 2^26 on (docs/performance.md, 2026-11-26), with the
 * program itself able to read at copy speed. Here block b folds a contiguous run of T / G or T / G + 1 tiles (the
 * first T mod G blocks the longer runs) in order, one after another, with nothing between them but the program's
 * own barrier. The host divides: a 64-bit division in the kernel's first instructions (the runs were
 * [b T / G, (b + 1) T / G) until the twenty-fifth session) delays every block's first load, which is most of a
 * one-tile call.
 *
 * The blocks' partials meet without a second launch and without state kept between calls: blocks 0 .. G - 2
 * publish theirs as self-tagged entries (chain/tile_state.cuh, a fresh epoch per launch, so nothing is zeroed),
 * and block G - 1, which starts last (blocks start in index order), waits for them: every block it waits for
 * has started and waits for nothing, so it finishes. Warp 0 of the last block folds the G - 1 partials in order
 * (each lane a contiguous run of them, then an in-order shuffle tree) and calls the program's consume for the
 * last tile with prefix = init (+) partials and the last block's own aggregate. A call of 2 .. 16 tiles (the
 * cluster limit) runs instead as one thread-block cluster, a block a tile, whose blocks hand their aggregates to
 * the last block's shared memory (ps_even_share_cluster_kernel below).
 *
 * Order and bits: tiles are folded in index order inside a block, blocks in index order, so a non-commutative
 * operator is safe; the grouping depends on G (the device's SM count and the kernel's occupancy), so float
 * results repeat bit for bit on the same device and may differ between GPU models (as CUB's reduce).
 *
 * The program's contract is the single-pass driver's (chain/single_pass.cuh); reduce is called once per tile
 * with the same local and smem, so the program must leave smem reusable after its own barriers (the driver adds
 * one between tiles). Work O(n); global memory: n reads and one 16-byte entry per block.
 */
#ifndef PSCAN_CHAIN_EVEN_SHARE_CUH
#define PSCAN_CHAIN_EVEN_SHARE_CUH

#include <stdint.h>

#include "block/warp.cuh"
#include "chain/single_pass.cuh"
#include "chain/tile_state.cuh"

template <class P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    ps_even_share_kernel(const typename P::params p, const ps_tile_state<typename P::carry> ts, uint32_t tiles,
                         uint32_t blocks, uint32_t per, uint32_t longer) {
    typedef typename P::carry C;
    PS_CHAIN_PROGRAM_SMEM(P, s);
    __shared__ C prefix_sh;
    typename P::local l;
    const uint32_t b = blockIdx.x;
    /* per = tiles / blocks, longer = tiles % blocks (the launcher's): blocks before `longer` take per + 1 */
    const uint32_t lo = b * per + (b < longer ? b : longer), hi = lo + per + (b < longer ? 1u : 0u);

    /* ---- this block's tiles, folded in order (the first one's aggregate as it is: no identity combined in), a
     * block fold each. Asking L2 for the next tile of the run as each starts lost 0.15-0.35x CUB on the reduce
     * (H200, twenty-sixth session): the blocks' own loads already keep the memory busy. Folding the run thread by
     * thread and the block once at the end (CUB's shape, a program hook) lost 0.05-0.3x CUB when it kept a
     * thread's 16 vectors apart (spilled) and tied or lost up to 0.05x with one running value a thread (H200,
     * twenty-seventh and twenty-eighth sessions, docs/bench/h200-reduce-run*.csv) ---- */
    C acc = P::reduce(p, lo, l, s);
    for (uint32_t t = lo + 1; t < hi; t++) {
        __syncthreads(); /* the previous tile's reads of smem are done */
        acc = P::combine(acc, P::reduce(p, t, l, s));
    }
    if (b + 1 < blocks) {
        if (threadIdx.x == 0) ts.publish(b, PS_TILE_AGGREGATE, acc);
        return;
    }
    if (blocks == 1) { /* a call of one tile: nothing to fold (the same value as below with no partials) */
        P::consume(p, tiles - 1, P::initial(p), acc, l, s);
        return;
    }

    /* ---- the last block: init (+) the partials of blocks 0 .. G - 2, in order. Thread i folds its contiguous run
     * of them (all its reads issued before any wait), the warps fold their threads' runs in lane order, thread 0
     * the warps' in order. A thread with no run holds the identity. ---- */
    __shared__ C warp_sh[P::THREADS / PS_WARP_LANES];
    const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
    const uint32_t others = blocks - 1, each = (others + P::THREADS - 1) / P::THREADS;
    const uint32_t first = threadIdx.x * each < others ? threadIdx.x * each : others;
    const uint32_t last = first + each < others ? first + each : others;
    C part = P::identity();
    for (uint32_t j0 = first; j0 < last; j0 += 4) {
        C v[4];
        unsigned st[4];
#pragma unroll
        for (int k = 0; k < 4; k++) st[k] = j0 + k < last ? ts.read(j0 + k, &v[k]) : PS_TILE_INVALID;
#pragma unroll
        for (int k = 0; k < 4; k++) {
            if (j0 + k < last) {
                while (st[k] != PS_TILE_AGGREGATE) st[k] = ts.read(j0 + k, &v[k]);
                part = j0 + k == first ? v[k] : P::combine(part, v[k]);
            }
        }
    }
    part = ps_warp_reduce_to_lane0(part, lane, ps_chain_combine<P>());
    if (lane == 0) warp_sh[warp] = part;
    __syncthreads();
    if (threadIdx.x == 0) {
        C r = warp_sh[0];
#pragma unroll
        for (int w = 1; w < P::THREADS / PS_WARP_LANES; w++) r = P::combine(r, warp_sh[w]);
        prefix_sh = others ? P::combine(P::initial(p), r) : P::initial(p);
    }
    __syncthreads();
    P::consume(p, tiles - 1, prefix_sh, acc, l, s);
}

#ifndef __CUDACC_RTC__

/* A small call as one cluster, a block a tile, for programs whose only output is the total. The scan's cluster
 * driver gives every tile its prefix: each block waits for every aggregate, reads the earlier ones from their
 * blocks, and waits again before it leaves so that none of its own is read after. Here only the last tile needs
 * one: every other block writes its aggregate into the last block's shared memory and leaves, and the last block
 * waits once and folds them in order. Cluster barrier: phase 1 says a block has started (its shared memory may be
 * written; every thread arrives first thing and waits after its tile), phase 2 that its aggregate is written
 * (arrive with release; the others then wait too, only for the last block's arrival). */
template <class P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS) ps_even_share_cluster_kernel(const typename P::params p) {
#if PS_CHAIN_HAS_CLUSTERS
    typedef typename P::carry C;
    enum { WORDS = (sizeof(C) + 3) / 4 };
    PS_CHAIN_PROGRAM_SMEM(P, s);
    __shared__ uint32_t partial_sh[PS_CHAIN_CLUSTER_MAX][WORDS]; /* the last block's: the others' aggregates */
    __shared__ C prefix_sh;
    typename P::local l;
    const uint32_t id = blockIdx.x, last = gridDim.x - 1;

    ps_cluster_arrive_relaxed(); /* phase 1: started */
    const C aggregate = P::reduce(p, id, l, s);
    ps_cluster_wait(); /* every block has started */
    if (id != last) {
        if (threadIdx.x == 0) {
            uint32_t w[WORDS] = {};
            memcpy(w, &aggregate, sizeof aggregate);
#pragma unroll
            for (int k = 0; k < WORDS; k++) ps_cluster_write_word(partial_sh[id], (uint32_t)k, last, w[k]);
        }
        ps_cluster_arrive(); /* phase 2: written (release) */
        ps_cluster_wait();   /* (the last block arrives as it starts to wait: no delay, and nothing waits on
                              * this one; leaving before it hung compute-sanitizer's racecheck) */
        return;
    }
    ps_cluster_arrive();
    ps_cluster_wait(); /* every other block's aggregate is in partial_sh (acquire) */
    static_assert(PS_CHAIN_CLUSTER_MAX <= PS_WARP_LANES, "warp 0 holds one aggregate a lane");
    if (threadIdx.x < PS_WARP_LANES) { /* lane b block b's aggregate, one in-order shuffle tree (thread 0 alone
                                        * read and folded them one after another: up to 15 dependent steps) */
        C v = P::identity();
        if (threadIdx.x < last) memcpy(&v, partial_sh[threadIdx.x], sizeof v);
        v = ps_warp_reduce_to_lane0(v, threadIdx.x, ps_chain_combine<P>());
        if (threadIdx.x == 0) prefix_sh = P::combine(P::initial(p), v);
    }
    __syncthreads();
    P::consume(p, last, prefix_sh, aggregate, l, s);
#else
    __trap(); /* never launched: the launcher checks the kernel was built for sm_90 */
#endif
}

/* Blocks of P's even-share kernel resident on an SM of the current device (asked once a device). */
template <class P> static int ps_even_share_per_sm_ask(void) {
    int per_sm = 0;
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ps_even_share_kernel<P>, P::THREADS,
                                                      ps_chain_dynamic_bytes<P>()) != cudaSuccess ||
        per_sm < 1) {
        cudaGetLastError();
        per_sm = P::MIN_BLOCKS;
    }
    return per_sm;
}
/* The blocks of one even-share launch of P over tiles tiles: waves times as many as fit on the device at once,
 * capped by the tile count. */
template <class P> static inline uint32_t ps_even_share_blocks(uint64_t tiles, int sm_count, int waves) {
    const int per_sm = ps_chain_per_device<ps_even_share_per_sm_ask<P>>();
    const uint64_t g = (uint64_t)per_sm * (uint64_t)(sm_count > 0 ? sm_count : 1) * (uint64_t)(waves > 0 ? waves : 1);
    return (uint32_t)(tiles < g ? tiles : g);
}

/* Temp bytes for an even-share launch over tiles tiles (an upper bound on the blocks' entries). */
template <class C> static inline size_t ps_even_share_temp_bytes(uint64_t tiles) {
    return tiles > 1 ? ps_tile_state<C>::bytes(tiles) : 0;
}

/* Launches P over tiles tiles on stream in ps_even_share_blocks(tiles, sm_count, waves) blocks; temp holds
 * ps_even_share_temp_bytes<carry>(tiles), 16-byte aligned. A grid of more than one wave (blocks start in index
 * order as others finish) gives each block a shorter run, so a block that lags holds less of the call.
 *
 * A small call, 2 .. the cluster limit tiles, runs as one cluster, a block a tile, on the kernel above rather than
 * the scan's cluster driver (chain/cluster.cuh), which makes every block wait twice: H200, tune_scan --types lat,
 * three runs alternated, twenty-seventh session: the reduce's 16 KiB tiles, i32 2^13 4.26-4.42 us against
 * 4.64-4.74, i64 2^12 4.29-4.42 against 4.70-4.74, u8 2^16 4.51-4.64 against 4.77-4.86. */
template <class P>
static cudaError_t ps_even_share(const typename P::params &p, uint32_t tiles, int sm_count, int waves, void *temp,
                                 cudaStream_t stream) {
    if (tiles > 1 &&
        tiles <= (uint32_t)ps_chain_per_device<ps_chain_cluster_ask_kernel<P, ps_even_share_cluster_kernel<P>>>()) {
        ps_chain_cluster_launch<P> launch(tiles, stream);
        return cudaLaunchKernelEx(&launch.cfg, ps_even_share_cluster_kernel<P>, p);
    }
    ps_tile_state<typename P::carry> ts;
    const size_t dynamic = ps_chain_dynamic_bytes<P>();
    static bool attributes_set[PS_CHAIN_DEVICES]; /* before the occupancy query, which needs them */
    cudaError_t err = ps_chain_kernel_attributes_once(ps_even_share_kernel<P>, dynamic, attributes_set);
    if (err == cudaSuccess) err = ps_chain_fresh_state(temp, ps_even_share_temp_bytes<typename P::carry>(tiles), stream, &ts);
    if (err != cudaSuccess) return err;
    const uint32_t blocks = ps_even_share_blocks<P>(tiles, sm_count, waves);
    ps_even_share_kernel<P><<<blocks, P::THREADS, dynamic, stream>>>(p, ts, tiles, blocks, tiles / blocks,
                                                                      tiles % blocks);
    return cudaGetLastError();
}

#endif /* __CUDACC_RTC__ */

#endif /* PSCAN_CHAIN_EVEN_SHARE_CUH */
