/*
 * chain/single_pass.cuh - the single-pass chain driver: runs any tile program over n elements in one launch,
 * each tile learning the carry of every tile before it through a decoupled look-back (Merrill and Garland,
 * NVR-2016-002) in a fixed-order (sliding-window) form. Device code and its launcher; it includes no host dispatch
 * header. Internal.
 *
 * A tile program P supplies (see 5_decoupled_lookback.cu for the scan, reduce.cu for the reduction):
 *   typedef ... carry;                 what one tile hands to the next (any trivially copyable type <= 64 B)
 *   struct params;  struct smem;  struct local;       its kernel arguments, shared and per-thread state
 *   enum { THREADS, MIN_BLOCKS };      block size and the blocks per SM it is built for (launch bounds)
 *   static carry combine(carry earlier, carry later)   associative; never assumed commutative
 *   static carry identity();  static carry initial(const params &)   the carry into tile 0
 *   static carry reduce(const params &, uint32_t tile, local &, smem &)
 *                                      load the tile, keep what consume needs, return its aggregate (all threads)
 *   static void consume(const params &, uint32_t tile, carry prefix, carry aggregate, local &, smem &)
 *                                      finish the tile from the carry of every tile before it
 * and, optionally:
 *   static bool absorbs(const carry &a)  true when combine(x, a) == a for every x, bit for bit (a segmented
 *                                      scan's carry with a head in it): the tile's inclusive prefix is its
 *                                      aggregate, published with it before the look-back (see below)
 *   static void early(const params &, uint32_t tile, carry aggregate, local &, smem &)
 *                                      run by warps 1 .. THREADS/32 - 1 while warp 0 looks back (no block-wide
 *                                      barrier inside): the part of the tile that does not need the prefix
 *   static void prefetch(const params &, uint32_t tile)
 *                                      ask L2 for the input tile `tile` will read (block/prefetch.cuh): a tile
 *                                      starting calls it for the tile PS_CHAIN_PREFETCH ahead (below)
 *   static uint32_t stagger_row(const params &), with enum TILE_READ_BYTES
 *                                      the tiles of one row of the first wave (the SM count) for a call whose
 *                                      first wave should start row by row (below, PS_CHAIN_STAGGER_CYCLES_PER_KIB;
 *                                      a row waits in proportion to the bytes a tile reads); 0 not
 *   static bool total_wanted(const params &);  static void total(const params &, carry total, local &, smem &)
 *                                      when total_wanted, total runs in every thread before consume, with the
 *                                      carry after the last tile (the initial carry and every aggregate, in
 *                                      order): a call of one tile knows it; the cluster driver (chain/cluster.cuh)
 *                                      folds every aggregate after its barrier; a cooperative launch (every tile
 *                                      resident at once, so no tile can wait for one that never starts) has the
 *                                      last tile publish its inclusive prefix and every tile wait for it. The
 *                                      launcher asks ps_chain_single_pass_knows_total() whether a call of so many
 *                                      tiles gets it (a partition needs the size of its first group: such calls
 *                                      skip its counting pass)
 *
 * Design points, and why:
 *  - Tile ids are blockIdx.x. Blocks start in index order on NVIDIA GPUs (CUB's single-pass primitives rely
 *    on the same), so every tile a block waits for belongs to a block that already holds an SM: no deadlock.
 *    No ticket: nothing that must survive between calls lives in temp. (The earlier atomic ticket pre-armed
 *    its word for the next call; another algorithm's scratch written over a shared workspace in between left
 *    the tag and changed the count, and a scan returned success without writing: issue 8, bug 1.)
 *  - One launch, no initialisation kernel: entries are tagged with a fresh 60-bit epoch per call
 *    (tile_state.cuh), so stale or foreign words never validate.
 *  - Sliding-window look-back, the same expression on every run. Tile k publishes its aggregate A(k) as soon
 *    as it has loaded, and after its look-back its inclusive prefix I(k), in a second entry. Its prefix is
 *    always P(k) = I(k - W) (+) [A(k - W + 1) ... A(k - 1) combined in a fixed tree] (init in place of I for
 *    k < W), W = 32 x E: one round trip of warp 0 reads all W entries (E per lane), and each lane stops
 *    reading an entry once it is valid. A tile's prefix never depends on which predecessors happened to be
 *    done when it looked, so float results repeat bit for bit; the price against the classic look-back
 *    (which takes the nearest inclusive prefix it finds) is that every tile waits for the one exactly W back
 *    to finish, so the chain moves W tiles per round trip. (A group variant, waiting for the last tile of the
 *    previous group of W, and a Fenwick-tree variant, were measured slower: docs/performance.md; so were windows of
 *    256-1024 tiles read by the whole block, on the branch wip/chain-block-lookback, twenty-third session.)
 *  - Carries of any size: warp shuffles go word by word (block/warp.cuh), entries carry 32 value bits per
 *    64-bit word (tile_state.cuh).
 *  - Absorbing carries cut the chain. A tile whose aggregate absorbs everything before it (P::absorbs) publishes
 *    its inclusive prefix together with its aggregate, before its own look-back: I(k) = P(k) (+) A(k) = A(k)
 *    exactly, so the value and the fixed expression of every later prefix are unchanged, but tile k + W no longer
 *    waits for tile k's look-back, only for its load. A segmented scan whose tiles each hold a segment head then
 *    has no chain of waits at all (H200, 2^28 i32, segments of 1000: 0.66 of copy before; docs/performance.md).
 *
 * Work O(n); global memory: what the program moves, plus one entry per tile (16 bytes per 16 KiB tile for
 * carries up to 8 bytes, two per tile). Depth: the tile's own work plus one look-back round per W tiles.
 */
#ifndef PSCAN_CHAIN_SINGLE_PASS_CUH
#define PSCAN_CHAIN_SINGLE_PASS_CUH

#include <stdint.h>

#ifndef __CUDACC_RTC__ /* NVRTC (user operators, user_op.cu) compiles the device side alone */
#include <atomic>
#include <chrono>
#endif

#include "block/prefetch.cuh"
#include "block/warp.cuh"
#include "chain/pdl.cuh"
#include "chain/tile_state.cuh"

/* Look-back entries per lane (W = 32 x E tiles of window); see docs/performance.md for the sweep. */
#ifndef PS_CHAIN_LANE_ENTRIES
#define PS_CHAIN_LANE_ENTRIES 2
#endif

/* A tile that starts asks L2 for the input of the tile PS_CHAIN_PREFETCH tiles after it (programs with a prefetch
 * hook), in calls of PS_CHAIN_PREFETCH_FROM tiles or more. Why: a tile's look-back waits for the aggregates of its
 * window, so the slowest load among 64 tiles sets the pace of the chain, and under a call's streaming stores a load
 * from DRAM is slow; from L2 it is short and even. The no-look-back control shows the stake: expand ran 0.729 of
 * copy chained against 0.865 without the chain (2^28 u32 counts averaging 4). H200, 2^28, of copy (twentieth
 * session, docs/bench/h200-prefetch-scan.csv, h200-prefetch-expand.csv): scan i32 0.932 -> 0.963, i64 0.936 ->
 * 0.960, u16 0.933 -> 0.953, u8 0.865 -> 0.889, f32 0.921 -> 0.946, f64 0.923 -> 0.949; 2^26 i32 0.916 -> 0.934;
 * expand at average 4 0.725 -> 0.763, 1.5 0.547 -> 0.586. 32-128 tiles ahead measured alike; 256 lost (i32 0.706:
 * the lines are fetched too early and fetched again). Below about 2000 tiles (the input about the size of L2) it
 * lost: 2^24 i32 (1092 tiles) 0.884 -> 0.853, so small calls do without. Nor does the first wave gain by asking
 * for the next wave's input while it waits (twenty-third session, docs/bench/h200-scan-prefetch-wave.csv: i32 2^24
 * 0.875 -> 0.885 half a wave ahead, 0.818 a wave ahead; the other types within their spread). */
#ifndef PS_CHAIN_PREFETCH
#define PS_CHAIN_PREFETCH 64
#endif
#ifndef PS_CHAIN_PREFETCH_FROM
#define PS_CHAIN_PREFETCH_FROM 2048
#endif

/* The first wave's tiles start row by row, for programs whose stagger_row(p) is a row (one tile an SM): the
 * first MIN_BLOCKS rows are resident at once, and row r waits r x PS_CHAIN_STAGGER_CYCLES_PER_KIB x (the KiB a
 * tile reads) SM cycles before it loads.
 * Why: at 2^24 the 528 tiles of a scan's first wave ask for 27 MB at once, so every load ends late and at about
 * the same time, and the chain, which needs tile 0's aggregate first, starts only then (the twenty-second
 * session's trace: 16.5 us from a first-wave tile's start to its prefix, 9-11 us later on). A row alone loads in
 * about 2 us, the chain starts then, and rows 1-3 load while it runs. H200, tune_scan --types defaults (the
 * scan's large tier, 60 KiB tiles), of copy, twenty-fourth session (docs/bench/h200-scan-stagger.csv): i32 2^24
 * 0.872 -> 0.894, 2^25 0.900 -> 0.921, 2^26 0.927 -> 0.945, 2^28 0.960 -> 0.965; i64 2^24 0.886 -> 0.912; u16 2^24
 * 0.796 -> 0.846; f64 2^24 0.884 -> 0.908; u8 2^28 0.884 -> 0.897. 1500, 3000, 5000, 7000, 10000 and 14000
 * cycles a row timed: 5000 best or within 0.01 everywhere; 7000 and up lose below 2^25. A self-clocked start (row
 * r once the tile a row before has its aggregate out) lost 2-6 points: the poll costs a round trip under the load.
 * The time a row needs alone is its bytes over the bandwidth, so the wait goes with the tile's bytes: the 32 KiB
 * tier (twenty-fifth session, docs/bench/h200-scan-stagger-tier.csv, tune_scan --types stagger) was best at
 * 2000-3000 cycles and lost with 5000-6000; 5000 / 60 KiB = 83 a KiB gives it 2656. 0: off. */
#ifndef PS_CHAIN_STAGGER_CYCLES_PER_KIB
#define PS_CHAIN_STAGGER_CYCLES_PER_KIB 83
#endif

/* Nanoseconds warp 0 sleeps before re-reading entries that were not ready (0: spin). */
#ifndef PS_CHAIN_BACKOFF_NS
#define PS_CHAIN_BACKOFF_NS 0
#endif

/* Tuning only (tools/tune): 1 gives every tile the initial carry without looking back, so a harness built with it
 * times what the tile program costs without the chain. Results are wrong past the first tile. */
#ifndef PS_CHAIN_CONTROL
#define PS_CHAIN_CONTROL 0
#endif

/* Tuning only (tools/tune/tune_scan.cu --types trace): 1 records for every tile, into the device array the harness
 * puts in ps_chain_trace (NULL: nothing), when its block started, had its aggregate, had its prefix and finished
 * (%globaltimer, ns), on which SM, how many rounds its look-back took, in which round the base I(k - W) and the
 * last aggregate of the window arrived, and how far back that aggregate's tile was: what a tile waits for. */
#ifndef PS_CHAIN_TRACE
#define PS_CHAIN_TRACE 0
#endif
#if PS_CHAIN_TRACE
struct ps_chain_trace_entry {
    unsigned long long start, loaded, prefixed, done;
    uint32_t sm, rounds, base_round, aggregate_round, aggregate_back, pad[3];
};
__device__ ps_chain_trace_entry *ps_chain_trace;
static __device__ __forceinline__ unsigned long long ps_chain_now(void) {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
/* Thread 0 of tile id, at its end: its four times and its SM; the entry, for the driver's look-back figures (NULL
 * in other threads and without a trace array). */
static __device__ __forceinline__ ps_chain_trace_entry *ps_chain_trace_end(uint32_t id, unsigned long long start,
                                                                           unsigned long long loaded,
                                                                           unsigned long long prefixed) {
    if (threadIdx.x != 0 || !ps_chain_trace) return nullptr;
    uint32_t sm;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(sm));
    ps_chain_trace_entry &r = ps_chain_trace[id];
    r.start = start, r.loaded = loaded, r.prefixed = prefixed, r.done = ps_chain_now(), r.sm = sm;
    return &r;
}
#endif

/* The optional hooks of a tile program: the specialization is chosen when P declares the member (no
 * <type_traits> under NVRTC), the primary template stands in for a program without it. */
template <class T> struct ps_chain_void { typedef void type; };
template <class P, class = void> struct ps_chain_absorbs {
    static __device__ __forceinline__ bool test(const typename P::carry &) { return false; }
};
template <class P> struct ps_chain_absorbs<P, typename ps_chain_void<decltype(&P::absorbs)>::type> {
    static __device__ __forceinline__ bool test(const typename P::carry &a) { return P::absorbs(a); }
};
template <class P, class = void> struct ps_chain_early {
    static __device__ __forceinline__ void run(const typename P::params &, uint32_t, const typename P::carry &,
                                               typename P::local &, typename P::smem &) {}
};
template <class P> struct ps_chain_early<P, typename ps_chain_void<decltype(&P::early)>::type> {
    static __device__ __forceinline__ void run(const typename P::params &p, uint32_t id, const typename P::carry &a,
                                               typename P::local &l, typename P::smem &s) {
        P::early(p, id, a, l, s);
    }
};

template <class P, class = void> struct ps_chain_prefetch {
    static __device__ __forceinline__ void run(const typename P::params &, uint32_t) {}
};
template <class P> struct ps_chain_prefetch<P, typename ps_chain_void<decltype(&P::prefetch)>::type> {
    static __device__ __forceinline__ void run(const typename P::params &p, uint32_t tile) { P::prefetch(p, tile); }
};

template <class P, class = void> struct ps_chain_stagger {
    static __device__ __forceinline__ uint32_t row(const typename P::params &) { return 0; }
    enum { CYCLES = 0 };
};
template <class P> struct ps_chain_stagger<P, typename ps_chain_void<decltype(&P::stagger_row)>::type> {
    static __device__ __forceinline__ uint32_t row(const typename P::params &p) { return P::stagger_row(p); }
    enum { CYCLES = (uint64_t)PS_CHAIN_STAGGER_CYCLES_PER_KIB * P::TILE_READ_BYTES / 1024 }; /* a row's wait */
};

template <class P, class = void> struct ps_chain_total {
    static __device__ __forceinline__ bool wanted(const typename P::params &) { return false; }
#ifndef __CUDACC_RTC__
    static __host__ __forceinline__ bool wanted_host(const typename P::params &) { return false; }
#endif
    static __device__ __forceinline__ void give(const typename P::params &, const typename P::carry &,
                                                typename P::local &, typename P::smem &) {}
};
template <class P> struct ps_chain_total<P, typename ps_chain_void<decltype(&P::total)>::type> {
    static __device__ __forceinline__ bool wanted(const typename P::params &p) { return P::total_wanted(p); }
#ifndef __CUDACC_RTC__
    static __host__ __forceinline__ bool wanted_host(const typename P::params &p) { return P::total_wanted(p); }
#endif
    static __device__ __forceinline__ void give(const typename P::params &p, const typename P::carry &t,
                                                typename P::local &l, typename P::smem &s) {
        P::total(p, t, l, s);
    }
};

template <class P> struct ps_chain_combine {
    __device__ __forceinline__ typename P::carry operator()(const typename P::carry &a, const typename P::carry &b) const {
        return P::combine(a, b);
    }
};

/* Entry 2t holds tile t's aggregate, entry 2t + 1 its inclusive prefix. */
__device__ __forceinline__ uint32_t ps_chain_aggregate_entry(uint32_t t) { return 2 * t; }
__device__ __forceinline__ uint32_t ps_chain_inclusive_entry(uint32_t t) { return 2 * t + 1; }

/* The fixed expression of a prefix, run by the whole of warp 0: base (+) the window's values, lane by lane (slot
 * lane x E + e) and then by the warp's shuffle tree; every lane gets the result. Both drivers fold through it, so
 * a tile's prefix has the same bits whichever ran it. */
template <class P, int E>
__device__ __forceinline__ typename P::carry ps_chain_window_fold(const typename P::carry &base,
                                                                    const typename P::carry (&v)[E], unsigned lane) {
    typename P::carry part = v[0];
#pragma unroll
    for (int e = 1; e < E; e++) part = P::combine(part, v[e]);
    const typename P::carry r = ps_warp_reduce_to_lane0(part, lane, ps_chain_combine<P>());
    return ps_shfl_idx(P::combine(base, r), 0);
}

/* Run by the whole of warp 0 of tile id: the carry of every tile before id (with the program's initial
 * carry), always as I(id - W) (+) the fixed-tree combination of A(id - W + 1) ... A(id - 1). */
template <class P, int E>
__device__ __forceinline__ typename P::carry ps_chain_look_back(const typename P::params &p,
                                                                  const ps_tile_state<typename P::carry> &ts,
                                                                  uint32_t id) {
    typedef typename P::carry C;
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    const int64_t W = PS_WARP_LANES * E;
    const int64_t first = (int64_t)id - W + 1; /* the tile of slot 0; slot W - 1 would be id itself */
    C v[E];
    bool have[E];
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int64_t slot = (int64_t)lane * E + e, t = first + slot;
        v[e] = P::identity();
        have[e] = t < 0 || slot >= W - 1;
    }
    C base = P::initial(p);
    bool have_base = lane != 0 || first - 1 < 0;
#if PS_CHAIN_TRACE
    uint32_t round = 0, base_round = 0, last = 0; /* last: round << 8 | distance back of the latest aggregate */
#endif
    for (;;) {
#pragma unroll
        for (int e = 0; e < E; e++) {
            if (!have[e]) {
                C t;
                if (ts.read(ps_chain_aggregate_entry((uint32_t)(first + lane * E + e)), &t) == PS_TILE_AGGREGATE) {
                    v[e] = t, have[e] = true;
#if PS_CHAIN_TRACE
                    last = max(last, round << 8 | (uint32_t)(W - 1 - (lane * E + e)));
#endif
                }
            }
        }
        if (!have_base) {
            C t;
            if (ts.read(ps_chain_inclusive_entry((uint32_t)(first - 1)), &t) == PS_TILE_INCLUSIVE) {
                base = t, have_base = true;
#if PS_CHAIN_TRACE
                base_round = round;
#endif
            }
        }
        bool all = have_base;
#pragma unroll
        for (int e = 0; e < E; e++) all = all && have[e];
#if PS_CHAIN_TRACE
        round++;
#endif
        if (__all_sync(PS_WARP_ALL, all)) break;
#if PS_CHAIN_BACKOFF_NS > 0
        __nanosleep(PS_CHAIN_BACKOFF_NS);
#endif
    }
#if PS_CHAIN_TRACE
    last = __reduce_max_sync(PS_WARP_ALL, last);
    if (lane == 0 && ps_chain_trace) {
        ps_chain_trace_entry &r = ps_chain_trace[id];
        r.rounds = round, r.base_round = base_round, r.aggregate_round = last >> 8, r.aggregate_back = last & 255u;
    }
#endif
    return ps_chain_window_fold<P, E>(base, v, lane);
}

/* A program's shared memory: static up to the 48 KiB a block may declare, dynamic beyond (larger tiles parked in
 * shared memory; the launcher passes the size). The dynamic array is declared aligned to PS_DYNAMIC_SMEM_ALIGN
 * (block/warp.cuh): at 16 bytes it began behind the kernel's few static words, off a 128-byte row, and the same
 * tile ran 7-8% slower there than in static memory (H200, fifteenth session; the 9% that a module-scope static
 * buffer cost in 2026-11-24 was most likely the same misplacement). NVRTC-compiled programs (user_op.cu) follow
 * the same rule; their launcher computes the size (user_scan_dynamic_bytes, checked by a static_assert). */
#ifndef PS_CHAIN_STATIC_SMEM_MAX /* tuning: 0 puts every program's shared memory in the dynamic array */
#define PS_CHAIN_STATIC_SMEM_MAX (48u * 1024u)
#endif
struct ps_chain_no_smem {
    uint4 unused;
};
template <class S, bool DYNAMIC> struct ps_chain_static_smem { typedef S type; };
template <class S> struct ps_chain_static_smem<S, true> { typedef ps_chain_no_smem type; };
template <class P> struct ps_chain_smem {
    enum { DYNAMIC = sizeof(typename P::smem) > PS_CHAIN_STATIC_SMEM_MAX };
    typedef typename ps_chain_static_smem<typename P::smem, DYNAMIC>::type static_type;
};
/* The program's shared memory from a driver kernel's own declarations (the static one, or the dynamic array). */
template <class P>
__device__ __forceinline__ typename P::smem &ps_chain_program_smem(typename ps_chain_smem<P>::static_type &s_static,
                                                                   uint4 *dynamic) {
    return *reinterpret_cast<typename P::smem *>(ps_chain_smem<P>::DYNAMIC ? (void *)dynamic : (void *)&s_static);
}
/* Declares s, the program P's shared memory, in a driver kernel (every driver's first line). */
#define PS_CHAIN_PROGRAM_SMEM(P, s)                                                                                   \
    __shared__ typename ps_chain_smem<P>::static_type s##_static;                                                     \
    extern __shared__ __align__(PS_DYNAMIC_SMEM_ALIGN) uint4 ps_chain_dynamic[];                                      \
    typename P::smem &s = ps_chain_program_smem<P>(s##_static, ps_chain_dynamic)

template <class P, int E>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    ps_chain_single_pass_kernel(const typename P::params p, const ps_tile_state<typename P::carry> ts, uint32_t tiles) {
    typedef typename P::carry C;
    PS_CHAIN_PROGRAM_SMEM(P, s);
    __shared__ C prefix_sh, total_sh;
    typename P::local l;
    const uint32_t id = blockIdx.x;
    const uint32_t W = PS_WARP_LANES * E;
    const bool wants_total = ps_chain_total<P>::wanted(p); /* then every tile is resident (see total above) */
    if (PS_CHAIN_PDL_TRIGGER) ps_pdl_trigger(); /* chain/pdl.cuh: a dependent next kernel may be scheduled */

#if PS_CHAIN_TRACE
    const unsigned long long trace_start = ps_chain_now();
#endif
    if (PS_CHAIN_STAGGER_CYCLES_PER_KIB) {
        const uint32_t row = ps_chain_stagger<P>::row(p);
        if (row && id >= row && id < row * (uint32_t)P::MIN_BLOCKS) { /* the same for the whole block */
            if (threadIdx.x == 0) {
                const long long t0 = clock64(), wait = (long long)(id / row) * ps_chain_stagger<P>::CYCLES;
                while (clock64() - t0 < wait) __nanosleep(64);
            }
            __syncthreads();
        }
    }
    if (PS_CHAIN_PREFETCH && tiles >= PS_CHAIN_PREFETCH_FROM && (uint64_t)id + PS_CHAIN_PREFETCH < tiles)
        ps_chain_prefetch<P>::run(p, id + PS_CHAIN_PREFETCH);
    /* ---- reduce: the program loads its tile and returns the tile's aggregate ---- */
    const C aggregate = P::reduce(p, id, l, s);
#if PS_CHAIN_TRACE
    const unsigned long long trace_loaded = ps_chain_now();
#endif

    /* ---- look-back: warp 0 publishes and finds the carry of everything before this tile ---- */
    if (threadIdx.x < PS_WARP_LANES) {
        const bool absorbs = ps_chain_absorbs<P>::test(aggregate); /* I(id) = A(id), known now */
        if (threadIdx.x == 0 && id + 1 < tiles) {
            ts.publish(ps_chain_aggregate_entry(id), PS_TILE_AGGREGATE, aggregate);
            if (absorbs && (uint64_t)id + W < tiles) ts.publish(ps_chain_inclusive_entry(id), PS_TILE_INCLUSIVE, aggregate);
        }
        const C prefix = id == 0 || PS_CHAIN_CONTROL ? P::initial(p) : ps_chain_look_back<P, E>(p, ts, id);
        if (threadIdx.x == 0) {
            /* the last W tiles' inclusive prefixes have no reader, but for the total the last tile's */
            const bool early = absorbs && (uint64_t)id + W < tiles;
            if (!early && ((uint64_t)id + W < tiles || (wants_total && id + 1 == tiles && tiles > 1)))
                ts.publish(ps_chain_inclusive_entry(id), PS_TILE_INCLUSIVE, P::combine(prefix, aggregate));
            prefix_sh = prefix;
        }
    } else {
        ps_chain_early<P>::run(p, id, aggregate, l, s); /* the other warps, meanwhile */
    }
    __syncthreads();

    /* ---- the total, for a program that wants it: the last tile's inclusive prefix ---- */
    if (wants_total) {
        if (threadIdx.x == 0) {
            C t = P::combine(prefix_sh, aggregate);
            if (id + 1 < tiles)
                while (ts.read(ps_chain_inclusive_entry(tiles - 1), &t) != PS_TILE_INCLUSIVE) {
                }
            total_sh = t;
        }
        __syncthreads();
        ps_chain_total<P>::give(p, total_sh, l, s);
    }

#if PS_CHAIN_TRACE
    const unsigned long long trace_prefixed = ps_chain_now();
#endif
    /* ---- consume: the program finishes its tile from the prefix ---- */
    P::consume(p, id, prefix_sh, aggregate, l, s);
#if PS_CHAIN_TRACE
    if (ps_chain_trace_entry *r = ps_chain_trace_end(id, trace_start, trace_loaded, trace_prefixed))
        if (id == 0) r->rounds = r->base_round = r->aggregate_round = r->aggregate_back = 0; /* no look-back */
#endif
}

/* ---- host side ----------------------------------------------------------------------------------------- */
#ifndef __CUDACC_RTC__

static inline unsigned long long ps_chain_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A fresh epoch per launch: unique within the library (2^60 of them), randomly placed across processes. One
 * counter for every translation unit: an inline function with external linkage has one static local in the
 * whole binary. (Until the forty-eighth session it was `static inline`, which gives each .cu file a counter of
 * its own, each seeded at random: two whose runs met would hand out the same epochs, and a launch could then
 * validate the entries an earlier launch from another file left in the same temp.) */
inline unsigned long long ps_chain_next_epoch(void) {
    static std::atomic<unsigned long long> counter(
        ps_chain_mix((unsigned long long)std::chrono::high_resolution_clock::now().time_since_epoch().count() ^
                     (unsigned long long)(uintptr_t)&counter));
    return counter.fetch_add(1, std::memory_order_relaxed);
}

/* Temp bytes for tiles tiles of carry C: two entries per tile; one tile needs none. */
template <class C> static inline size_t ps_chain_temp_bytes(uint64_t tiles) {
    return tiles > 1 ? ps_tile_state<C>::bytes(2 * tiles) : 0;
}

/* The most tiles one launch can run (the grid's x limit). */
#define PS_CHAIN_MAX_TILES 0x7fffffffull

/* Under stream capture (a CUDA graph in the making), the memset that ps_chain_fresh_state enqueues. PS_CHAIN_GRAPH_CLEAR
 * is a test control: 0 leaves the entries as they are under capture too, which is the bug test_cuda_graph exists
 * to catch (built with 0, it failed 39 checks on an H200, every chain primitive's, in the forty-eighth session). */
#ifndef PS_CHAIN_GRAPH_CLEAR
#define PS_CHAIN_GRAPH_CLEAR 1
#endif

/* The entries in temp, tagged with a fresh epoch: one per launch of any driver; bytes: the entries the launch may
 * read. The epoch is taken here on the host, so a launch captured into a CUDA graph keeps it on every replay of
 * the graph, and the entries a previous replay left in the same temp would carry this launch's tag: a tile would
 * take its predecessor's prefix of the previous data and the call would succeed with wrong results. So under
 * capture the entries are cleared first, by a memset on the stream that the graph replays before the kernel
 * (zeros never validate: status 0). Outside capture nothing is cleared (every launch's epoch is new): one
 * cudaStreamIsCapturing a launch, a fraction of a us of host time. */
template <class C>
static inline cudaError_t ps_chain_fresh_state(void *temp, size_t bytes, cudaStream_t stream, ps_tile_state<C> *ts) {
    const unsigned long long epoch = ps_chain_next_epoch();
    ts->entries = (typename ps_tile_state<C>::entry *)temp;
    ts->tag_lo = (uint32_t)(epoch & 0x3fffffffull) << 2;
    ts->tag_hi = (uint32_t)((epoch >> 30) & 0x3fffffffull) << 2;
    if (!PS_CHAIN_GRAPH_CLEAR || bytes == 0) return cudaSuccess;
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    const cudaError_t err = cudaStreamIsCapturing(stream, &capture);
    if (err != cudaSuccess) return err;
    return capture == cudaStreamCaptureStatusNone ? cudaSuccess : cudaMemsetAsync(temp, 0, bytes, stream);
}

/* The dynamic shared memory a driver kernel of P launches with: the program's, past 48 KiB; else none. */
template <class P> static inline size_t ps_chain_dynamic_bytes(void) {
    return ps_chain_smem<P>::DYNAMIC ? sizeof(typename P::smem) : 0;
}

/* Once per kernel (the caller keeps the flag): the largest shared-memory carveout, since programs that park
 * tiles in shared memory are bounded by it, not by registers (and every driver asks the same, so alternating
 * calls do not reconfigure the SMs); and the dynamic shared memory of a program past 48 KiB. */
template <class F> static inline cudaError_t ps_chain_kernel_attributes(F *kernel, size_t dynamic) {
    cudaError_t err =
        cudaFuncSetAttribute(kernel, cudaFuncAttributePreferredSharedMemoryCarveout, (int)cudaSharedmemCarveoutMaxShared);
    if (err == cudaSuccess && dynamic)
        err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)dynamic);
    return err;
}

#include "chain/cluster.cuh" /* small calls: one thread-block cluster, no look-back */

/* ps_chain_kernel_attributes once per kernel and device; set is the caller's static array, one flag a device. A
 * kernel's attributes belong to the device they were set on (each device loads its own copy of the module): a
 * single flag for the whole process, as the drivers kept until the sixteenth session, left every device after the
 * first without the dynamic shared memory of the tiles past 48 KiB, and their launches failed there. */
template <class F>
static inline cudaError_t ps_chain_kernel_attributes_once(F *kernel, size_t dynamic, bool (&set)[PS_CHAIN_DEVICES]) {
    const int d = ps_chain_device_slot();
    if (d >= 0 && set[d]) return cudaSuccess;
    const cudaError_t err = ps_chain_kernel_attributes(kernel, dynamic);
    if (err == cudaSuccess && d >= 0) set[d] = true;
    return err;
}

/* The most blocks of P's single-pass kernel resident at once on the current device (0: no cooperative launch). */
template <class P, int E> static int ps_chain_resident_ask(void) {
    void (*kernel)(const typename P::params, const ps_tile_state<typename P::carry>, uint32_t) =
        ps_chain_single_pass_kernel<P, E>;
    const size_t dynamic = ps_chain_dynamic_bytes<P>();
    int dev = 0, coop = 0, sms = 0, blocks = 0;
    if (cudaGetDevice(&dev) == cudaSuccess && cudaDeviceGetAttribute(&coop, cudaDevAttrCooperativeLaunch, dev) == cudaSuccess &&
        coop && cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) == cudaSuccess &&
        ps_chain_kernel_attributes(kernel, dynamic) == cudaSuccess &&
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, P::THREADS, dynamic) == cudaSuccess)
        return blocks * sms;
    cudaGetLastError(); /* a missing feature is not an error of the caller's next launch */
    return 0;
}
template <class P, int E> static uint32_t ps_chain_resident_limit(void) {
    return (uint32_t)ps_chain_per_device<ps_chain_resident_ask<P, E>>();
}

/* Whether a call of tiles tiles on ps_chain_single_pass hands P's total hook the total: one tile, one cluster, or
 * no more tiles than are resident at once (a cooperative launch). */
template <class P, int E = PS_CHAIN_LANE_ENTRIES> static bool ps_chain_single_pass_knows_total(uint32_t tiles) {
    return tiles == 1 || tiles <= (uint32_t)ps_chain_cluster_limit<P, E>() || tiles <= ps_chain_resident_limit<P, E>();
}

/* Launches P's single-pass kernel over tiles tiles on stream, never the cluster (a launcher that knows its calls are
 * larger than one, without instantiating the cluster kernel: select's wider windows); temp as below. A program
 * that wants the total needs tiles <= ps_chain_resident_limit<P, E>(). */
template <class P, int E>
static cudaError_t ps_chain_single_pass_launch(const typename P::params &p, uint32_t tiles, void *temp, cudaStream_t stream) {
    ps_tile_state<typename P::carry> ts;
    const size_t dynamic = ps_chain_dynamic_bytes<P>();
    static bool attributes_set[PS_CHAIN_DEVICES];
    cudaError_t err = ps_chain_kernel_attributes_once(ps_chain_single_pass_kernel<P, E>, dynamic, attributes_set);
    if (err == cudaSuccess) err = ps_chain_fresh_state(temp, ps_chain_temp_bytes<typename P::carry>(tiles), stream, &ts);
    if (err != cudaSuccess) return err;
    if (tiles > 1 && ps_chain_total<P>::wanted_host(p)) {
        /* the tiles wait for the last one: all of them must be resident (the launcher checked the count with
         * ps_chain_single_pass_knows_total; a cooperative launch guarantees it or fails) */
        void *args[] = {(void *)&p, (void *)&ts, (void *)&tiles};
        return cudaLaunchCooperativeKernel((const void *)ps_chain_single_pass_kernel<P, E>, dim3(tiles), dim3(P::THREADS),
                                           args, dynamic, stream);
    }
    ps_chain_single_pass_kernel<P, E><<<tiles, P::THREADS, dynamic, stream>>>(p, ts, tiles);
    return cudaGetLastError();
}

/* Launches P over tiles tiles on stream; temp holds ps_chain_temp_bytes<carry>(tiles), 16-byte aligned. A call of
 * 2 .. ps_chain_cluster_limit tiles runs as one cluster (chain/cluster.cuh), the same prefixes to the bit. */
template <class P, int E = PS_CHAIN_LANE_ENTRIES>
static cudaError_t ps_chain_single_pass(const typename P::params &p, uint32_t tiles, void *temp, cudaStream_t stream) {
    if (tiles > 1 && tiles <= (uint32_t)ps_chain_cluster_limit<P, E>()) return ps_chain_cluster<P, E>(p, tiles, stream);
    return ps_chain_single_pass_launch<P, E>(p, tiles, temp, stream);
}

#endif /* __CUDACC_RTC__ */

#endif /* PSCAN_CHAIN_SINGLE_PASS_CUH */
