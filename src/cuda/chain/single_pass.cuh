/*
 * chain/single_pass.cuh - the single-pass chain driver: runs any tile program over n elements in one launch,
 * each tile learning the carry of every tile before it through a decoupled look-back (Merrill and Garland,
 * NVR-2016-002) in a grouped, fixed-order form. Device code and its launcher; it includes no host dispatch
 * header. Internal.
 *
 * A tile program P supplies (see 5_decoupled_lookback.cu for the scan, reduce.cu for the reduction):
 *   typedef ... carry;                 what one tile hands to the next (any trivially copyable type <= 32 B)
 *   struct params;  struct smem;  struct local;       its kernel arguments, shared and per-thread state
 *   enum { THREADS, MIN_BLOCKS };      block size and the blocks per SM it is built for (launch bounds)
 *   static carry combine(carry earlier, carry later)   associative; never assumed commutative
 *   static carry identity();  static carry initial(const params &)   the carry into tile 0
 *   static carry reduce(const params &, uint32_t tile, local &, smem &)
 *                                      load the tile, keep what consume needs, return its aggregate (all threads)
 *   static void consume(const params &, uint32_t tile, carry prefix, carry aggregate, local &, smem &)
 *                                      finish the tile from the carry of every tile before it
 *
 * Design points, and why:
 *  - Tile ids are blockIdx.x. Blocks start in index order on NVIDIA GPUs (CUB's single-pass primitives rely
 *    on the same), so every tile a block waits for belongs to a block that already holds an SM: no deadlock.
 *    No ticket: nothing that must survive between calls lives in temp. (The earlier atomic ticket pre-armed
 *    its word for the next call; another algorithm's scratch written over a shared workspace in between left
 *    the tag and changed the count, and a scan returned success without writing: issue 8, bug 1.)
 *  - One launch, no initialisation kernel: entries are tagged with a fresh 60-bit epoch per call
 *    (tile_state.cuh), so stale or foreign words never validate.
 *  - Grouped look-back, the same expression on every run. Tiles form groups of G = 32 * E. A tile in group g
 *    (first tile g0) takes as its prefix: [inclusive prefix of tile g0 - 1] (+) [aggregates of tiles g0 .. id-1,
 *    combined in a fixed tree]. Only the last tile of a group publishes its INCLUSIVE prefix; the others
 *    publish their AGGREGATE. So a tile's prefix never depends on which predecessors happened to be done
 *    when it looked, float results repeat bit for bit, and one round trip of warp 0 reads up to G entries
 *    (E per lane, back to back), so the start-up walk of the classic 32-wide look-back is gone.
 *  - Carries of any size: warp shuffles go word by word (block/warp.cuh), entries carry 32 value bits per
 *    64-bit word (tile_state.cuh).
 *
 * Work O(n); global memory: what the program moves, plus one entry per tile (16 bytes per 16 KiB tile for
 * carries up to 8 bytes: 0.1%). Depth: the tile's own work plus the chain of group ends, one step per G tiles.
 */
#ifndef PSCAN_CHAIN_SINGLE_PASS_CUH
#define PSCAN_CHAIN_SINGLE_PASS_CUH

#include <stdint.h>

#include <atomic>
#include <chrono>

#include "block/warp.cuh"
#include "chain/tile_state.cuh"

/* Look-back entries read per lane per round trip (G = 32 * E tiles per group); see docs/performance.md. */
#ifndef PS_CHAIN_LANE_ENTRIES
#define PS_CHAIN_LANE_ENTRIES 4
#endif
/* Nanoseconds warp 0 sleeps before re-reading entries that were not ready (0: spin). */
#ifndef PS_CHAIN_BACKOFF_NS
#define PS_CHAIN_BACKOFF_NS 0
#endif

template <class P> struct ps_chain_combine {
    __device__ __forceinline__ typename P::carry operator()(const typename P::carry &a, const typename P::carry &b) const {
        return P::combine(a, b);
    }
};

/* Run by the whole of warp 0 of tile id: the carry of every tile before id (with the program's initial carry). */
template <class P, int E>
__device__ __forceinline__ typename P::carry ps_chain_look_back(const typename P::params &p,
                                                                  const ps_tile_state<typename P::carry> &ts, uint32_t id) {
    typedef typename P::carry C;
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    const uint32_t G = PS_WARP_LANES * E;
    const uint32_t g0 = id - id % G;
    for (;;) {
        bool missing = false;
        C part = P::identity();
#pragma unroll
        for (int j = 0; j < E; j++) {
            const uint32_t t = g0 + lane * E + j;
            if (t < id) {
                C v;
                if (ts.read(t, &v) != PS_TILE_AGGREGATE) missing = true;
                part = P::combine(part, v);
            }
        }
        C base = P::initial(p);
        if (g0 > 0 && lane == 0 && ts.read(g0 - 1, &base) != PS_TILE_INCLUSIVE) missing = true;
        if (!__any_sync(PS_WARP_ALL, missing)) {
            const C r = ps_warp_reduce_to_lane0(part, lane, ps_chain_combine<P>());
            return ps_shfl_idx(P::combine(base, r), 0);
        }
#if PS_CHAIN_BACKOFF_NS > 0
        __nanosleep(PS_CHAIN_BACKOFF_NS);
#endif
    }
}

template <class P, int E>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    ps_chain_single_pass_kernel(const typename P::params p, const ps_tile_state<typename P::carry> ts, uint32_t tiles) {
    typedef typename P::carry C;
    __shared__ typename P::smem s;
    __shared__ C prefix_sh;
    typename P::local l;
    const uint32_t id = blockIdx.x;
    const uint32_t G = PS_WARP_LANES * E;

    /* ---- reduce: the program loads its tile and returns the tile's aggregate ---- */
    const C aggregate = P::reduce(p, id, l, s);

    /* ---- look-back: warp 0 publishes and finds the carry of everything before this tile ---- */
    if (threadIdx.x < PS_WARP_LANES) {
        const bool group_end = id % G == G - 1, read_later = id + 1 < tiles;
        if (!group_end && read_later && threadIdx.x == 0) ts.publish(id, PS_TILE_AGGREGATE, aggregate);
        const C prefix = id == 0 ? P::initial(p) : ps_chain_look_back<P, E>(p, ts, id);
        if (threadIdx.x == 0) {
            if (group_end && read_later) ts.publish(id, PS_TILE_INCLUSIVE, P::combine(prefix, aggregate));
            prefix_sh = prefix;
        }
    }
    __syncthreads();

    /* ---- consume: the program finishes its tile from the prefix ---- */
    P::consume(p, id, prefix_sh, aggregate, l, s);
}

/* ---- host side ----------------------------------------------------------------------------------------- */

static inline unsigned long long ps_chain_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A fresh epoch per launch: unique within the process (2^60 of them), randomly placed across processes. */
static inline unsigned long long ps_chain_next_epoch(void) {
    static std::atomic<unsigned long long> counter(
        ps_chain_mix((unsigned long long)std::chrono::high_resolution_clock::now().time_since_epoch().count() ^
                     (unsigned long long)(uintptr_t)&counter));
    return counter.fetch_add(1, std::memory_order_relaxed);
}

/* Temp bytes for tiles tiles of carry C (tiles > 1 need entries; one tile needs none). */
template <class C> static inline size_t ps_chain_temp_bytes(uint64_t tiles) {
    return tiles > 1 ? ps_tile_state<C>::bytes(tiles) : 0;
}

/* The most tiles one launch can run (the grid's x limit). */
#define PS_CHAIN_MAX_TILES 0x7fffffffull

/* Launches P over tiles tiles on stream; temp holds ps_chain_temp_bytes<carry>(tiles), 16-byte aligned. */
template <class P, int E = PS_CHAIN_LANE_ENTRIES>
static cudaError_t ps_chain_single_pass(const typename P::params &p, uint32_t tiles, void *temp, cudaStream_t stream) {
    ps_tile_state<typename P::carry> ts;
    const unsigned long long epoch = ps_chain_next_epoch();
    ts.entries = (typename ps_tile_state<typename P::carry>::entry *)temp;
    ts.tag_lo = (uint32_t)(epoch & 0x3fffffffull) << 2;
    ts.tag_hi = (uint32_t)((epoch >> 30) & 0x3fffffffull) << 2;
    ps_chain_single_pass_kernel<P, E><<<tiles, P::THREADS, 0, stream>>>(p, ts, tiles);
    return cudaGetLastError();
}

#endif /* PSCAN_CHAIN_SINGLE_PASS_CUH */
