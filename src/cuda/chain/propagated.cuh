/*
 * chain/propagated.cuh - an experimental chain driver (tuning only: tools/tune/tune_scan.cu, not used by the
 * library): one warp of its own carries the chain for every tile, and a tile waits for one entry, not a window.
 * Device code and its launcher. Internal.
 *
 * Why. Traced on the H200 (docs/performance.md, sixteenth session), a tile of the single-pass driver loads in 4 us
 * and then waits 8 us for I(k - W), the inclusive prefix of the tile W back, which that tile published only after
 * its own wait: the chain moves W tiles a step, and every step pays a poll's round trip from an SM busy loading
 * (1.0-2.2 us by tile size). Here block 0 runs no tile: its warp 0 reads the aggregates as the tiles publish them,
 * folds them into the running carry in registers, and publishes every tile's inclusive prefix. The chain's steps
 * are then register operations; a tile pays the propagator's round trip and its own poll of one entry, once.
 *
 * How. Tile k is block k + 1 (block 0 is resident first, and every tile's aggregate comes from a block that started
 * before the tiles that wait on it: no deadlock). The propagator reads aggregates in batches of 32 tiles (a lane a
 * tile), E batches a round; for the first batch not yet complete it scans the contiguous run of published
 * aggregates from the batch's start (ps_warp_inclusive: lane l's result depends on lanes 0..l only, so a partial
 * run gives final values) and publishes I(t) = carry (+) A(32j) (+) ... (+) A(t) for the lanes not yet published;
 * a complete batch moves the carry on and the next batch is taken in the same round. Every I(t) is the same fixed
 * expression whenever it is published: float results repeat bit for bit, as with the window. Tile k's prefix is
 * I(k - 1) (the initial carry for tile 0).
 *
 * tools/tune/propagated_model.py runs the same loop on the host with aggregates arriving in random orders and
 * checks that every prefix is published once, exactly, as the same expression (run it after changing the loop).
 *
 * Limits: no total() and no absorbs() hooks (a tuning driver for the scan program); one block's shared memory is
 * held by the propagator for the whole call (one slot of 4-5 an SM, on one SM).
 */
#ifndef PSCAN_CHAIN_PROPAGATED_CUH
#define PSCAN_CHAIN_PROPAGATED_CUH

#include "chain/single_pass.cuh"

/* Run by warp 0 of block 0: every tile's inclusive prefix but the last one's, from the aggregates. */
template <class P, int E>
__device__ __forceinline__ void ps_chain_propagate(const typename P::params &p, const ps_tile_state<typename P::carry> &ts,
                                                   uint32_t tiles) {
    typedef typename P::carry C;
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    const int64_t last = (int64_t)tiles - 2; /* the last tile whose inclusive prefix a tile reads */
    C carry = P::initial(p);                 /* I(base - 1) */
    int64_t base = 0;                        /* the first tile of batch slot 0 */
    unsigned published = 0;                  /* lanes of slot 0 whose I is out */
    C v[E];
    bool have[E];
#pragma unroll
    for (int e = 0; e < E; e++) v[e] = P::identity(), have[e] = false;
    while (base <= last) {
#pragma unroll
        for (int e = 0; e < E; e++) {
            const int64_t t = base + PS_WARP_LANES * e + lane;
            if (!have[e]) {
                C x;
                if (t > last) /* no reader: the identity keeps the scan's lanes below it exact */
                    v[e] = P::identity(), have[e] = true;
                else if (ts.read(ps_chain_aggregate_entry((uint32_t)t), &x) == PS_TILE_AGGREGATE)
                    v[e] = x, have[e] = true;
            }
        }
#pragma unroll
        for (int step = 0; step < E; step++) {
            const unsigned valid = __ballot_sync(PS_WARP_ALL, have[0]);
            const unsigned run = valid == PS_WARP_ALL ? PS_WARP_LANES : __ffs(~valid) - 1;
            const C inclusive = P::combine(carry, ps_warp_inclusive(v[0], lane, ps_chain_combine<P>()));
            if (lane >= published && lane < run && base + lane <= last)
                ts.publish(ps_chain_inclusive_entry((uint32_t)(base + lane)), PS_TILE_INCLUSIVE, inclusive);
            published = run > published ? run : published;
            if (run < PS_WARP_LANES) break;
            carry = ps_shfl_idx(inclusive, PS_WARP_LANES - 1);
            base += PS_WARP_LANES, published = 0;
#pragma unroll
            for (int e = 0; e + 1 < E; e++) v[e] = v[e + 1], have[e] = have[e + 1];
            v[E - 1] = P::identity(), have[E - 1] = false;
            if (base > last) break;
        }
    }
}

template <class P, int E>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    ps_chain_propagated_kernel(const typename P::params p, const ps_tile_state<typename P::carry> ts, uint32_t tiles) {
    typedef typename P::carry C;
    __shared__ typename ps_chain_smem<P>::static_type s_static;
    extern __shared__ __align__(PS_DYNAMIC_SMEM_ALIGN) uint4 ps_chain_dynamic[];
    if (blockIdx.x == 0) {
        if (threadIdx.x < PS_WARP_LANES) ps_chain_propagate<P, E>(p, ts, tiles);
        return;
    }
    typename P::smem &s = ps_chain_program_smem<P>(s_static, ps_chain_dynamic);
    __shared__ C prefix_sh;
    typename P::local l;
    const uint32_t id = blockIdx.x - 1;
#if PS_CHAIN_TRACE
    const unsigned long long trace_start = ps_chain_now();
#endif
    const C aggregate = P::reduce(p, id, l, s);
#if PS_CHAIN_TRACE
    const unsigned long long trace_loaded = ps_chain_now();
    uint32_t polls = 0;
#endif
    if (threadIdx.x == 0) {
        if (id + 1 < tiles) ts.publish(ps_chain_aggregate_entry(id), PS_TILE_AGGREGATE, aggregate);
        C prefix = P::initial(p);
        if (id > 0)
            while (ts.read(ps_chain_inclusive_entry(id - 1), &prefix) != PS_TILE_INCLUSIVE) {
#if PS_CHAIN_TRACE
                polls++;
#endif
            }
        prefix_sh = prefix;
    } else if (threadIdx.x >= PS_WARP_LANES) {
        ps_chain_early<P>::run(p, id, aggregate, l, s);
    }
    __syncthreads();
#if PS_CHAIN_TRACE
    const unsigned long long trace_prefixed = ps_chain_now();
#endif
    P::consume(p, id, prefix_sh, aggregate, l, s);
#if PS_CHAIN_TRACE
    if (ps_chain_trace_entry *r = ps_chain_trace_end(id, trace_start, trace_loaded, trace_prefixed))
        r->rounds = polls + 1, r->base_round = polls, r->aggregate_round = 0, r->aggregate_back = 0;
#endif
}

#ifndef __CUDACC_RTC__
/* Launches P over tiles tiles (plus the propagator's block) on stream; temp as ps_chain_single_pass's. */
template <class P, int E = 4>
static cudaError_t ps_chain_propagated(const typename P::params &p, uint32_t tiles, void *temp, cudaStream_t stream) {
    const ps_tile_state<typename P::carry> ts = ps_chain_fresh_state<typename P::carry>(temp);
    const size_t dynamic = ps_chain_dynamic_bytes<P>();
    static bool attributes_set[PS_CHAIN_DEVICES];
    const cudaError_t err = ps_chain_kernel_attributes_once(ps_chain_propagated_kernel<P, E>, dynamic, attributes_set);
    if (err != cudaSuccess) return err;
    ps_chain_propagated_kernel<P, E><<<tiles + 1, P::THREADS, dynamic, stream>>>(p, ts, tiles);
    return cudaGetLastError();
}
#endif

#endif /* PSCAN_CHAIN_PROPAGATED_CUH */
