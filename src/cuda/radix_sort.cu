/*
 * radix_sort.cu - the stable LSD radix sort on CUDA, Onesweep-style (Adinets and Merrill, 2022): one upsweep
 * that counts the digits of every pass at once, then one kernel per 8-bit digit pass that ranks its tile in
 * shared memory and learns each digit's global offset from the tiles before it through a decoupled look-back.
 *
 * Keys are mapped to unsigned integers of their width whose order is the sort's (pscan.h: signed keys flip the
 * sign bit; floats flip every bit of negatives and the sign bit of positives, every NaN becomes all ones;
 * descending complements). Only digits come from the mapped key; keys and payloads move bit for bit.
 *
 * Phases:
 *  - upsweep (ps_sort_upsweep_kernel): a grid-stride read of the keys; each block counts the digits of every
 *    pass in shared memory (passes x 256 counters) and adds them to the global counts in temp. The keys do
 *    not change between passes, only their order, so one read serves all passes.
 *  - spine: each pass block scans that pass's 256 global counts itself (one block-wide exclusive scan of 256
 *    values, cheaper than a launch): the first slot of each digit in the output.
 *  - one pass per digit (ps_sort_pass_kernel), 256 threads x 16 keys = 4096-key tiles, tile id = blockIdx.x:
 *      load:      warp w loads keys w*512 ... w*512 + 511 of the tile, warp-striped (coalesced), and maps them;
 *      counts:    the tile's digit histogram (shared atomics); thread d publishes digit d's count at once, so
 *                 later tiles' look-backs pass this tile while it still ranks (CUB's "early counts");
 *      rank:      ps_sort_block_rank: each warp walks its 16 rows in order; 8 ballots (one per digit bit) find
 *                 the lanes with the same digit, their rank is the warp's running count of that digit plus the
 *                 peers in lower lanes; the lowest peer bumps the count. Then thread d scans digit d's counts
 *                 over the 8 warps (tile order is warp order) and the block scans the 256 digit totals: a key's
 *                 place in the tile's stable order is start[digit] + warp_before[warp][digit] + its rank;
 *      look-back: thread d walks back over earlier tiles' words for d (adding aggregates until it meets an
 *                 inclusive prefix) and publishes its own inclusive prefix: 256 independent chains in one
 *                 block, each one word per tile;
 *      scatter:   the keys go to shared memory in tile order; thread j then writes tile slot j to
 *                 out[digit_start + prefix - start[digit] + j], so each digit's run of the tile lands as one
 *                 contiguous, mostly coalesced, stretch; payloads follow through the same staging buffer.
 *  - small n (n <= 4096, one tile): ps_sort_small_kernel sorts in one block, all passes in shared memory (keys
 *    and a 16-bit index of where each came from), and gathers the payloads once at the end: one launch.
 *
 * Why a status protocol of its own: the engine's chain (chain/tile_state.cuh, single_pass.cuh) moves one
 * carry of at most 32 bytes per tile, combined in a fixed window. Here the carry is a vector of 256 counts
 * (1 KiB); as one entry it would need a 256-wide fixed-window reduction per tile and a torn-read-proof 1 KiB
 * write. But the 256 digits are independent sums, so each digit gets its own chain of self-tagged 64-bit
 * words: the high half holds the engine's tag (30 bits of a per-launch epoch from ps_chain_next_epoch, and
 * the status: aggregate or inclusive), the low half the count. A word is written and read as one
 * single-copy-atomic 64-bit access, so a reader never sees a count without its status; integer sums need no
 * fixed order (they are exact), so the classic look-back (stop at the first inclusive prefix) is used. Each
 * pass takes a fresh epoch, so one region of tiles x 256 words serves every pass: words of earlier passes
 * never validate. The region is zeroed once per call (with the upsweep's counts, one memset of n / 2 bytes for
 * u32 keys, under 1% of the sort's traffic), because 30 tag bits alone would leave foreign bytes of a shared
 * workspace (another primitive's entries, with epochs from another counter) a 2^-30 chance per word to pass
 * (the engine's entries carry 60 tag bits, at twice the bytes). Status 0 never validates. The count half is 32
 * bits, which is why CUDA sorts at most 2^32 - 1 keys.
 *
 * Work O(n x passes); global memory: the upsweep reads the keys once; each pass reads and writes keys (and
 * payloads) once, plus 2 KiB of status words written per 4096-key tile (about 12% of a u32 pass) and the
 * look-back's reads of them. Passes ping-pong between keys_out and one buffer in temp, the parity chosen so
 * that the last pass writes keys_out. Depth: passes x (one tile + the look-back chain).
 * Measured (H100, CUDA 13.0, CUB 3.0.1; tools/tune/tune_sort.cu through tools/tune/variants.sh, median of 20,
 * every result equal to CUB's; docs/bench/h100-sort-variants.csv): still slower than CUB. First version: random
 * u32 keys 0.40x CUB's Gkeys/s at 2^28 (19.7 against 48.7), u32 pairs 0.54x. Now (ballots instead of
 * __match_any_sync: 1.33x; early counts: 3-4%; 3 blocks per SM instead of 2: 1.2x): u32 keys 0.50x at 2^28
 * (24.5 Gkeys/s) and 0.59x at 2^24, u32 pairs 0.71x / 0.76x. Where the 2^28 u32 time goes (10.95 ms; CUB 5.51):
 * the upsweep 0.81 ms (four shared atomics per key: atomic-bound, not memory-bound; 16 keys per thread in flight
 * changed nothing), the look-back's waiting 1.66 ms (timed by a variant that skips it), and the four passes'
 * load, rank and scatter 8.5 ms, 2.1 ms a pass where a read and a write of the keys take 0.72 ms: the blocks
 * spend their life in dependent phases (load, count, rank, look-back, scatter) with three blocks per SM to
 * overlap them. Tried without gain: look-back windows of 8 and 16 words, tiles numbered by an atomic counter,
 * 12 keys x 4 blocks, 10 x 5, 8 x 6 per SM. Next, in order: keep the next tile's loads in flight during the
 * rank (persistent blocks or a split load), count the next pass's digits inside each pass so the upsweep does
 * one atomic per key, 32-bit status words (half the look-back traffic).
 *
 * Against CUB's Onesweep (CCCL main, 2026-08: agent_radix_sort_onesweep.cuh, block_radix_rank.cuh's
 * match/early-counts rank, agent_radix_sort_histogram.cuh, the sm90 tuning), by expected gain (docs/tuning.md,
 * "sort", has the reasoning):
 *  1. the rank: CUB counts per warp first, scans the counts over warps and digits before ranking, and its walk
 *     (the same 8 ballots) ends in one shared atomic by one lane that returns the final place; ours counts the
 *     tile twice (block histogram, then the walk's read-modify-write of counts between two __syncwarp()s, which
 *     leaves the 16 rows no overlap) and scans after the walk. Knob PS_SORT_RANK=1 ranks CUB's way;
 *  2. the tile: 384 threads x 19-20 u32 keys (7.3-7.7 K; u64: 15, 5.8 K) against our 4096: per-tile fixed
 *     costs (digit scans, barriers, look-back hops, status words) over 1.8x the keys, and a chain of half the
 *     tiles. Knobs PS_SORT_PASS_THREADS, PS_SORT_PASS_ITEMS, PS_SORT_PASS_ITEMS8 (with PS_SORT_RANK=1, which
 *     also packs each thread's digits four to a register and lets the staging buffer hold the rank's counts);
 *  3. status words of 32 bits (2 flag bits over a 30-bit count, 0 = not ready, cleared before every pass,
 *     inputs cut into portions of < 2^28 keys): half our look-back traffic;
 *  4. the upsweep: 128 threads x 16 keys at full occupancy, pass-major counting, no privatized copies on sm90;
 *     ours runs 4 x 256 threads per SM (3 for u64 keys: 66 registers). Knobs PS_SORT_UP_BLOCKS, PS_SORT_UP_BOUND;
 *  5. small: unchecked loads and stores for full tiles, programmatic dependent launch, the one-digit-tile
 *     shortcut. Same as ours: warp-striped loads, direct scatter through shared memory, one look-back thread
 *     per digit walking one tile at a time with no backoff, early counts, tile ids by atomic counter (tried).
 */
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "chain/single_pass.cuh" /* ps_chain_next_epoch: the per-launch epochs of the engine */
#include "chain/tile_state.cuh"  /* PS_TILE_AGGREGATE, PS_TILE_INCLUSIVE */
#include "cuda_backend.h"
#include "scan_problem.cuh"

#define PS_SORT_THREADS 256
/* Keys per thread (a tuning knob: tools/tune/tune_sort.cu -DPS_SORT_ITEMS=12); at most 16, which the one-block
 * sort's static shared memory (u64 keys + 16-bit origins) is sized for. */
#ifndef PS_SORT_ITEMS
#define PS_SORT_ITEMS 16
#endif
static_assert(PS_SORT_ITEMS >= 1 && PS_SORT_ITEMS <= 16, "the one-block sort's shared memory holds 4096 keys");
#define PS_SORT_TILE (PS_SORT_THREADS * PS_SORT_ITEMS) /* 4096 keys; also the largest n sorted by one block */
#define PS_SORT_WARPS (PS_SORT_THREADS / 32)
#define PS_SORT_RADIX 256
#define PS_SORT_MAX_PASSES 8
#ifndef PS_SORT_UP_ITEMS
#define PS_SORT_UP_ITEMS 16 /* keys per thread per round of the upsweep */
#endif
/* 1: the upsweep counts the first pass's digits only, and each pass counts the next pass's digits of its tile
 * (keys already in registers) into the global counts: one shared atomic per key in the upsweep instead of one
 * per pass, the upsweep's limit. A tuning knob, not measured yet (docs/tuning.md). */
#ifndef PS_SORT_FUSED
#define PS_SORT_FUSED 0
#endif
#ifndef PS_SORT_MIN_BLOCKS
#define PS_SORT_MIN_BLOCKS 3
#endif
/* 1: the digit passes rank as CUB's Onesweep does (docs/tuning.md, "sort"): each warp counts its own digits
 * (shared atomics into its own row), the counts are scanned over warps and digits before the rank, so each
 * warp's row holds its next place per digit, and the rank walk is one match (8 ballots) and one shared atomic
 * by the lowest peer, whose old value is the group's final place: one walk, no read-then-write of counts
 * between __syncwarp()s, no scans after it. 0: ps_sort_block_rank (today's). A tuning knob, not measured.
 * With it, a thread's digits are kept four to a register and the counts live in the staging buffer. */
#ifndef PS_SORT_RANK
#define PS_SORT_RANK 0
#endif
/* Threads and keys per thread of the digit passes with PS_SORT_RANK=1, where a pass tile may be larger than
 * the one-block sort's 4096 keys (CUB's sm90 tiles: 384 threads, 5.8-7.7 K keys): PS_SORT_PASS_ITEMS when keys
 * and payloads are at most 4 bytes, PS_SORT_PASS_ITEMS8 otherwise (static shared memory: 48 KiB a block, the
 * staging buffer sharing it with the rank's counts). Threads past the 256th take no digit of their own. */
#ifndef PS_SORT_PASS_THREADS
#define PS_SORT_PASS_THREADS PS_SORT_THREADS
#endif
#define PS_SORT_PASS_WARPS (PS_SORT_PASS_THREADS / 32)
#ifndef PS_SORT_PASS_ITEMS
#define PS_SORT_PASS_ITEMS PS_SORT_ITEMS
#endif
#ifndef PS_SORT_PASS_ITEMS8
#define PS_SORT_PASS_ITEMS8 (PS_SORT_PASS_ITEMS < 16 ? PS_SORT_PASS_ITEMS : 16)
#endif
static_assert(PS_SORT_RANK || (PS_SORT_PASS_ITEMS == PS_SORT_ITEMS && PS_SORT_PASS_ITEMS8 == PS_SORT_ITEMS &&
                                PS_SORT_PASS_THREADS == PS_SORT_THREADS),
              "pass tiles other than the one-block sort's need PS_SORT_RANK=1");
static_assert(PS_SORT_PASS_ITEMS >= 1 && PS_SORT_PASS_ITEMS8 >= 1 && PS_SORT_PASS_THREADS % 32 == 0 &&
                  PS_SORT_PASS_THREADS >= PS_SORT_RADIX && PS_SORT_PASS_THREADS <= 1024,
              "a digit pass has at least one thread per digit");
/* The smallest pass tile of any key and payload size: status words are sized for it. */
#define PS_SORT_MIN_PASS_TILE \
    (PS_SORT_PASS_THREADS * (PS_SORT_PASS_ITEMS < PS_SORT_PASS_ITEMS8 ? PS_SORT_PASS_ITEMS : PS_SORT_PASS_ITEMS8))
/* Blocks per SM of the upsweep's grid (256 threads each, a grid-stride loop), and its launch bound: 1 makes
 * the compiler fit PS_SORT_UP_BLOCKS blocks per SM (u64 keys use 66 registers today: only 3 of the 4 blocks
 * per SM fit, the 4th runs after them). */
#ifndef PS_SORT_UP_BLOCKS
#define PS_SORT_UP_BLOCKS 4
#endif
#ifndef PS_SORT_UP_BOUND
#define PS_SORT_UP_BOUND 0
#endif
#define PS_SORT_UP_MIN_BLOCKS (PS_SORT_UP_BOUND ? PS_SORT_UP_BLOCKS : 1)

enum { PS_SORT_KEY_UNSIGNED, PS_SORT_KEY_SIGNED, PS_SORT_KEY_FLOAT };

/* The payload type of a keys-only sort. */
struct ps_sort_no_value {};

/* ---- keys and digits ----------------------------------------------------------------------------------- */

/* pscan.h's order-preserving map; flip is all ones for descending. */
template <class U> __device__ __forceinline__ U ps_sort_map(U x, int kind, U flip) {
    const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
    U t = x;
    if (kind == PS_SORT_KEY_SIGNED) {
        t = (U)(x ^ sign);
    } else if (kind == PS_SORT_KEY_FLOAT) {
        const U inf = (U)(sizeof(U) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);
        t = (U)(x & ~sign) > inf ? (U)~(U)0 : (x & sign) ? (U)~x : (U)(x | sign);
    }
    return (U)(t ^ flip);
}

template <class U> struct ps_sort_digit {
    int kind;
    U flip;
    unsigned shift, mask;
    __device__ __forceinline__ uint32_t operator()(U key) const {
        return (uint32_t)(ps_sort_map<U>(key, kind, flip) >> shift) & mask;
    }
};

/* ---- block level: the stable rank of a tile's digits ----------------------------------------------------- */

struct ps_sort_rank_smem {
    uint16_t warp_counts[PS_SORT_WARPS][PS_SORT_RADIX]; /* per warp and digit: counts, then the warps before */
    uint32_t start[PS_SORT_RADIX];                      /* the tile's first slot of each digit */
    uint32_t warp_totals[PS_SORT_WARPS];
};

/* Exclusive sum of one value per thread across the block (WARPS x 32 threads); *total gets the sum. */
template <int WARPS = PS_SORT_WARPS>
__device__ __forceinline__ uint32_t ps_sort_block_exclusive(uint32_t x, uint32_t *warp_totals, uint32_t *total) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    uint32_t inc = x;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const uint32_t y = __shfl_up_sync(PS_WARP_ALL, inc, d);
        if (lane >= d) inc += y;
    }
    if (lane == 31) warp_totals[warp] = inc;
    __syncthreads();
    uint32_t before = 0, all = 0;
#pragma unroll
    for (unsigned w = 0; w < WARPS; w++) {
        const uint32_t t = warp_totals[w];
        before += w < warp ? t : 0;
        all += t;
    }
    __syncthreads(); /* warp_totals is reused by the next call */
    *total = all;
    return before + inc - x;
}

/* Item i of lane l of warp w is tile slot w * ITEMS * 32 + i * 32 + l (warp-striped rows). */
template <int ITEMS> __device__ __forceinline__ uint32_t ps_sort_slot_of(int i) {
    return (threadIdx.x / 32) * (ITEMS * 32) + i * 32 + threadIdx.x % 32;
}
__device__ __forceinline__ uint32_t ps_sort_slot(int i) { return ps_sort_slot_of<PS_SORT_ITEMS>(i); }

/* Ranks the tile's digits stably: rank[i] becomes item i's place in the tile sorted by digit (ties in slot
 * order). Returns the count of digit threadIdx.x in the tile; s.start holds each digit's first place. */
__device__ __forceinline__ uint32_t ps_sort_block_rank(const uint32_t (&digit)[PS_SORT_ITEMS],
                                                       uint32_t (&rank)[PS_SORT_ITEMS], ps_sort_rank_smem &s) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t below_mask = (1u << lane) - 1u;
    uint16_t *counts = s.warp_counts[warp];
    for (unsigned d = lane; d < PS_SORT_RADIX; d += 32) counts[d] = 0;
    __syncwarp();

    /* ---- per warp: rows in order, peers of one digit by match ---- */
#pragma unroll
    for (int i = 0; i < PS_SORT_ITEMS; i++) {
        const uint32_t d = digit[i];
        /* the lanes whose 8 digit bits all equal ours: 8 ballots, which cost a third of __match_any_sync's time
         * here (measured: the whole sort 1.33x faster on an H100, tools/tune/variants.sh) */
        uint32_t peers = PS_WARP_ALL;
#pragma unroll
        for (int b = 0; b < 8; b++) {
            const uint32_t bit = (d >> b) & 1u, set = __ballot_sync(PS_WARP_ALL, bit);
            peers &= bit ? set : ~set;
        }
        const uint32_t below = __popc(peers & below_mask);
        const uint32_t c = counts[d];
        rank[i] = c + below;
        __syncwarp(); /* every peer has read the count before the lowest one bumps it */
        if (below == 0) counts[d] = (uint16_t)(c + __popc(peers));
        __syncwarp();
    }
    __syncthreads();

    /* ---- per digit: the warps before, then the digits before ---- */
    const unsigned d = threadIdx.x;
    uint32_t total = 0;
#pragma unroll
    for (unsigned w = 0; w < PS_SORT_WARPS; w++) {
        const uint32_t c = s.warp_counts[w][d];
        s.warp_counts[w][d] = (uint16_t)total;
        total += c;
    }
    uint32_t all;
    s.start[d] = ps_sort_block_exclusive(total, s.warp_totals, &all);
    __syncthreads();
#pragma unroll
    for (int i = 0; i < PS_SORT_ITEMS; i++) rank[i] += s.start[digit[i]] + counts[digit[i]];
    return total;
}

/* ---- block level, PS_SORT_RANK=1: counts first, then a rank walk that yields final places ------------------ */

/* next (per warp and digit: its count, then its next place in the tile) lives in the pass's staging buffer,
 * which is free until the scatter. */
typedef uint32_t ps_sort_wrank_next[PS_SORT_PASS_WARPS][PS_SORT_RADIX];
struct ps_sort_wrank_smem {
    uint32_t start[PS_SORT_RADIX]; /* the tile's first place of each digit */
    uint32_t warp_totals[PS_SORT_PASS_WARPS];
};
/* Thread d of a digit pass has a digit (compile-time true for 256 threads). */
#define PS_SORT_DIGIT_THREAD (PS_SORT_PASS_THREADS == PS_SORT_RADIX || threadIdx.x < PS_SORT_RADIX)

/* The digits of a thread's items, four 8-bit digits a register (a register per key would be 20-32 more
 * registers at the larger tiles; unpacking is one bit-field extract). */
#define PS_SORT_DIGIT_WORDS(items) (((items) + 3) / 4)
template <int ITEMS>
__device__ __forceinline__ uint32_t ps_sort_digit_at(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)], int i) {
    return (digits[i / 4] >> (8 * (i % 4))) & 0xffu;
}

/* Each warp counts the digits of its own rows (every slot, padding too) into its own row of next. */
template <int ITEMS>
__device__ __forceinline__ void ps_sort_warp_counts(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)],
                                                    ps_sort_wrank_next &next) {
    uint32_t *mine = next[threadIdx.x / 32];
    for (unsigned d = threadIdx.x % 32; d < PS_SORT_RADIX; d += 32) mine[d] = 0;
    __syncwarp();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) atomicAdd(&mine[ps_sort_digit_at<ITEMS>(digits, i)], 1u);
}

/* Thread d, after a __syncthreads that follows ps_sort_warp_counts: the tile's count of digit d, padding
 * included. */
__device__ __forceinline__ uint32_t ps_sort_warp_total(const ps_sort_wrank_next &next) {
    uint32_t total = 0;
    if (PS_SORT_DIGIT_THREAD)
#pragma unroll
        for (unsigned w = 0; w < PS_SORT_PASS_WARPS; w++) total += next[w][threadIdx.x];
    return total;
}

/* Thread d: turns digit d's counts into each warp's first place of d in the tile's stable order (the start of
 * d, plus the warps before) and sets s.start[d]. Ends with a __syncthreads. */
__device__ __forceinline__ void ps_sort_warp_places(ps_sort_wrank_smem &s, ps_sort_wrank_next &next, uint32_t total) {
    const unsigned d = threadIdx.x;
    uint32_t all;
    uint32_t place = ps_sort_block_exclusive<PS_SORT_PASS_WARPS>(total, s.warp_totals, &all);
    if (PS_SORT_DIGIT_THREAD) {
        s.start[d] = place;
#pragma unroll
        for (unsigned w = 0; w < PS_SORT_PASS_WARPS; w++) { /* column d is thread d's alone */
            const uint32_t c = next[w][d];
            next[w][d] = place;
            place += c;
        }
    }
    __syncthreads();
}

/* The rank walk: each warp takes its rows in order; the lanes with the same digit (8 ballots) are placed at
 * the warp's next place of that digit, in lane order; the lowest of them moves the place on by their number.
 * The atomic's old value is the place; the shuffle that hands it to the peers waits for it, so the next row's
 * atomic on the same digit cannot pass it. rank[i] is item i's place in the tile. */
template <int ITEMS>
__device__ __forceinline__ void ps_sort_warp_rank(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)],
                                                  uint32_t (&rank)[ITEMS], ps_sort_wrank_next &next) {
    const unsigned lane = threadIdx.x % 32;
    const uint32_t below_mask = (1u << lane) - 1u;
    uint32_t *mine = next[threadIdx.x / 32];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t d = ps_sort_digit_at<ITEMS>(digits, i);
        uint32_t peers = PS_WARP_ALL;
#pragma unroll
        for (int b = 0; b < 8; b++) {
            const uint32_t bit = (d >> b) & 1u, set = __ballot_sync(PS_WARP_ALL, bit);
            peers &= bit ? set : ~set;
        }
        const int leader = __ffs(peers) - 1;
        uint32_t place = 0;
        if ((int)lane == leader) place = atomicAdd(&mine[d], (uint32_t)__popc(peers));
        place = __shfl_sync(PS_WARP_ALL, place, leader);
        rank[i] = place + __popc(peers & below_mask);
    }
}

/* ---- device level: one digit pass ------------------------------------------------------------------------ */

template <class U> struct ps_sort_pass_params {
    const U *keys_in;
    U *keys_out;
    const void *values_in;
    void *values_out;
    uint32_t n, tiles;
    ps_sort_digit<U> digit;
    const uint32_t *counts;      /* this pass's 256 global digit counts (upsweep) */
    uint32_t *next_counts;       /* PS_SORT_FUSED: the next pass's 256 counts, added to here; NULL: last pass */
    ps_sort_digit<U> next_digit; /* PS_SORT_FUSED: the next pass's digit */
    unsigned long long *status;  /* tiles x 256 self-tagged words */
    uint32_t tag;                /* this launch's epoch bits, shifted left by 2 */
};

__device__ __forceinline__ void ps_sort_publish(unsigned long long *word, uint32_t tag, unsigned status, uint32_t count) {
    const unsigned long long w = ((unsigned long long)(tag | status) << 32) | count;
    asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(word), "l"(w) : "memory");
}

__device__ __forceinline__ unsigned long long ps_sort_read(const unsigned long long *word) {
    unsigned long long w;
    asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(word) : "memory");
    return w;
}

/* Thread d: how many keys of digit d the tiles before this one hold. The tile's count was published (as an
 * aggregate) before the rank; this publishes its inclusive count after. One word per round trip: reading 8 or
 * 16 earlier tiles' words at once measured the same or slower (the wait is for predecessors, not the walk). */
__device__ __forceinline__ uint32_t ps_sort_look_back(unsigned long long *status, uint32_t tag, uint32_t tiles,
                                                      uint32_t tile, uint32_t count) {
    const unsigned d = threadIdx.x;
    if (tile == 0) return 0;
    uint32_t prefix = 0;
    for (int64_t t = (int64_t)tile - 1;;) {
        const unsigned long long w = ps_sort_read(status + (size_t)t * PS_SORT_RADIX + d);
        const uint32_t hi = (uint32_t)(w >> 32);
        if (hi == (tag | PS_TILE_INCLUSIVE)) {
            prefix += (uint32_t)w;
            break;
        }
        if (hi == (tag | PS_TILE_AGGREGATE)) {
            prefix += (uint32_t)w;
            t--;
        }
    }
    if (tile + 1 != tiles) /* nobody reads the last tile's words */
        ps_sort_publish(status + (size_t)tile * PS_SORT_RADIX + d, tag, PS_TILE_INCLUSIVE, prefix + count);
    return prefix;
}

/* Thread d publishes the tile's count of digit d before the tile ranks (tile 0 publishes it as inclusive), so
 * that later tiles' look-backs pass this tile while it still ranks, as in CUB's Onesweep ("early counts"). */
__device__ __forceinline__ void ps_sort_publish_count(unsigned long long *status, uint32_t tag, uint32_t tiles,
                                                      uint32_t tile, uint32_t count) {
    if (tile + 1 == tiles) return;
    ps_sort_publish(status + (size_t)tile * PS_SORT_RADIX + threadIdx.x, tag,
                    tile == 0 ? PS_TILE_INCLUSIVE : PS_TILE_AGGREGATE, count);
}

/* Keys per thread of a digit pass: PS_SORT_ITEMS, or with PS_SORT_RANK=1 the pass knobs by element size. */
template <class U, class V> struct ps_sort_pass_items {
    static constexpr int value = sizeof(U) > 4 || sizeof(V) > 4 ? PS_SORT_PASS_ITEMS8 : PS_SORT_PASS_ITEMS;
};

template <class U, class V, int ITEMS> union ps_sort_stage {
    U keys[PS_SORT_PASS_THREADS * ITEMS];
    V values[PS_SORT_PASS_THREADS * ITEMS];
#if PS_SORT_RANK
    ps_sort_wrank_next next; /* the rank's, done before the scatter */
#endif
};

template <class U, class V>
__global__ void __launch_bounds__(PS_SORT_PASS_THREADS, PS_SORT_MIN_BLOCKS)
    ps_sort_pass_kernel(const ps_sort_pass_params<U> p) {
    constexpr bool HAS_VALUES = !std::is_same<V, ps_sort_no_value>::value;
    constexpr int ITEMS = ps_sort_pass_items<U, V>::value;
    constexpr uint32_t TILE = PS_SORT_PASS_THREADS * ITEMS;
    __shared__ ps_sort_stage<U, V, ITEMS> stage;
#if PS_SORT_RANK
    __shared__ ps_sort_wrank_smem rs;
    static_assert(sizeof(ps_sort_stage<U, V, ITEMS>) + sizeof(ps_sort_wrank_smem) + (1 + PS_SORT_FUSED) * 1024 <=
                      48 * 1024,
                  "a pass tile fits 48 KiB of static shared memory: fewer PS_SORT_PASS_ITEMS(8)");
#else
    __shared__ ps_sort_rank_smem rs;
#endif
    __shared__ uint32_t dest_base[PS_SORT_RADIX];
    const uint32_t tile = blockIdx.x, base = tile * TILE;
    const uint32_t valid = p.n - base < TILE ? p.n - base : TILE;

    /* ---- load: warp-striped rows; slots past n take the last digit, so they rank last ---- */
    U key[ITEMS];
    uint32_t rank[ITEMS];
#if PS_SORT_RANK
    uint32_t digits[PS_SORT_DIGIT_WORDS(ITEMS)];
#else
    uint32_t digit[ITEMS];
#endif
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t slot = ps_sort_slot_of<ITEMS>(i);
        key[i] = slot < valid ? p.keys_in[base + slot] : (U)0;
        const uint32_t dg = slot < valid ? p.digit(key[i]) : p.digit.mask;
#if PS_SORT_RANK
        digits[i / 4] = i % 4 ? digits[i / 4] | dg << (8 * (i % 4)) : dg;
#else
        digit[i] = dg;
#endif
    }

    const unsigned d = threadIdx.x; /* the digit of threads d < 256 */
#if PS_SORT_FUSED
    __shared__ uint32_t next_hist[PS_SORT_RADIX]; /* the next pass's digits of this tile */
    if (PS_SORT_DIGIT_THREAD) next_hist[d] = 0;
#endif
#if PS_SORT_RANK
    /* ---- counts per warp, then places; the tile's count is published as soon as it is known (early
     * counts); the padding (last digit, partial last tile only) is not part of it ---- */
    ps_sort_warp_counts<ITEMS>(digits, stage.next);
    __syncthreads();
#if PS_SORT_FUSED
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (p.next_counts && ps_sort_slot_of<ITEMS>(i) < valid) atomicAdd(&next_hist[p.next_digit(key[i])], 1u);
#endif
    const uint32_t total = ps_sort_warp_total(stage.next);
    const uint32_t count = total - (d == p.digit.mask ? TILE - valid : 0u);
    if (PS_SORT_DIGIT_THREAD) ps_sort_publish_count(p.status, p.tag, p.tiles, tile, count);
    ps_sort_warp_places(rs, stage.next, total);
#if PS_SORT_FUSED
    if (PS_SORT_DIGIT_THREAD && p.next_counts && next_hist[d]) atomicAdd(&p.next_counts[d], next_hist[d]);
#endif

    /* ---- rank: final places in one walk ---- */
    ps_sort_warp_rank<ITEMS>(digits, rank, stage.next);
#else
    /* ---- early counts: the tile's digit histogram, published before the rank (3-4% faster at 2^28 than
     * publishing the rank's counts after it: later tiles pass this one while it ranks) ---- */
    dest_base[d] = 0;
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++)
        if (ps_sort_slot_of<ITEMS>(i) < valid) {
            atomicAdd(&dest_base[digit[i]], 1u);
#if PS_SORT_FUSED
            if (p.next_counts) atomicAdd(&next_hist[p.next_digit(key[i])], 1u);
#endif
        }
    __syncthreads();
    const uint32_t count = dest_base[d];
#if PS_SORT_FUSED
    if (p.next_counts && next_hist[d]) atomicAdd(&p.next_counts[d], next_hist[d]);
#endif
    ps_sort_publish_count(p.status, p.tag, p.tiles, tile, count);

    /* ---- rank ---- */
    ps_sort_block_rank(digit, rank, rs);
#endif

    /* ---- look-back: the keys of digit d in earlier tiles; the digit's first slot in the output (the block
     * scan's barriers also end the rank's use of the staging buffer) ---- */
    const uint32_t prefix = PS_SORT_DIGIT_THREAD ? ps_sort_look_back(p.status, p.tag, p.tiles, tile, count) : 0u;
    uint32_t ignored;
    const uint32_t digit_start = ps_sort_block_exclusive<PS_SORT_PASS_WARPS>(PS_SORT_DIGIT_THREAD ? p.counts[d] : 0u,
                                                                             rs.warp_totals, &ignored);
    if (PS_SORT_DIGIT_THREAD) dest_base[d] = digit_start + prefix - rs.start[d];

    /* ---- scatter: keys through shared memory in tile order, then out by digit runs ---- */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) stage.keys[rank[i]] = key[i];
    __syncthreads();
#if PS_SORT_RANK
    uint32_t out_digits[PS_SORT_DIGIT_WORDS(ITEMS)]; /* the payloads' destinations, packed: fewer registers */
#else
    uint32_t dest[ITEMS];
#endif
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t j = i * PS_SORT_PASS_THREADS + threadIdx.x;
#if PS_SORT_RANK
        uint32_t dg = 0;
        if (j < valid) {
            const U k = stage.keys[j];
            dg = p.digit(k);
            p.keys_out[dest_base[dg] + j] = k;
        }
        out_digits[i / 4] = i % 4 ? out_digits[i / 4] | dg << (8 * (i % 4)) : dg;
#else
        if (j < valid) {
            const U k = stage.keys[j];
            dest[i] = dest_base[p.digit(k)] + j;
            p.keys_out[dest[i]] = k;
        }
#endif
    }
    if constexpr (HAS_VALUES) {
        const V *values_in = (const V *)p.values_in;
        V *values_out = (V *)p.values_out;
        V v[ITEMS];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const uint32_t slot = ps_sort_slot_of<ITEMS>(i);
            if (slot < valid) v[i] = values_in[base + slot];
        }
        __syncthreads(); /* the keys are out of the staging buffer */
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (ps_sort_slot_of<ITEMS>(i) < valid) stage.values[rank[i]] = v[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const uint32_t j = i * PS_SORT_PASS_THREADS + threadIdx.x;
#if PS_SORT_RANK
            if (j < valid) values_out[dest_base[ps_sort_digit_at<ITEMS>(out_digits, i)] + j] = stage.values[j];
#else
            if (j < valid) values_out[dest[i]] = stage.values[j];
#endif
        }
    }
}

/* ---- upsweep: the digit counts of every pass in one read -------------------------------------------------- */

template <class U> struct ps_sort_keys_desc {
    int kind;
    U flip;
    unsigned begin_bit, end_bit, passes;
};

/* Pass q's digit: 8 bits from begin_bit + 8 q, fewer in a last pass that reaches end_bit. */
template <class U> __host__ __device__ __forceinline__ ps_sort_digit<U> ps_sort_pass_digit(const ps_sort_keys_desc<U> &k,
                                                                                          unsigned q) {
    ps_sort_digit<U> dg;
    dg.kind = k.kind, dg.flip = k.flip, dg.shift = k.begin_bit + 8 * q;
    const unsigned bits = k.end_bit - dg.shift < 8 ? k.end_bit - dg.shift : 8;
    dg.mask = (1u << bits) - 1u;
    return dg;
}

template <class U>
__global__ void __launch_bounds__(PS_SORT_THREADS, PS_SORT_UP_MIN_BLOCKS) ps_sort_upsweep_kernel(const U *keys, uint32_t n,
                                                                          const ps_sort_keys_desc<U> k,
                                                                          uint32_t *counts) {
    __shared__ uint32_t h[PS_SORT_MAX_PASSES][PS_SORT_RADIX];
    const unsigned passes = PS_SORT_FUSED ? 1u : k.passes; /* fused: the passes count the others */
    for (unsigned q = 0; q < passes; q++) h[q][threadIdx.x] = 0;
    __syncthreads();
    /* PS_SORT_UP_ITEMS independent loads per thread before any count: one key per thread in flight would
     * leave 4 KiB per SM outstanding, a fifth of what the memory needs to stream at full speed */
    const uint64_t chunk = (uint64_t)PS_SORT_THREADS * PS_SORT_UP_ITEMS;
    for (uint64_t c = (uint64_t)blockIdx.x * chunk; c < n; c += (uint64_t)gridDim.x * chunk) {
        U key[PS_SORT_UP_ITEMS];
#pragma unroll
        for (int j = 0; j < PS_SORT_UP_ITEMS; j++) {
            const uint64_t i = c + (uint64_t)j * PS_SORT_THREADS + threadIdx.x;
            key[j] = i < n ? keys[i] : (U)0;
        }
#pragma unroll
        for (int j = 0; j < PS_SORT_UP_ITEMS; j++) {
            if (c + (uint64_t)j * PS_SORT_THREADS + threadIdx.x >= n) break;
            const U t = ps_sort_map<U>(key[j], k.kind, k.flip);
            for (unsigned q = 0; q < passes; q++) {
                const ps_sort_digit<U> dg = ps_sort_pass_digit(k, q); /* on the key mapped once above */
                atomicAdd(&h[q][(uint32_t)(t >> dg.shift) & dg.mask], 1u);
            }
        }
    }
    __syncthreads();
    for (unsigned q = 0; q < passes; q++) {
        const uint32_t c = h[q][threadIdx.x];
        if (c) atomicAdd(&counts[q * PS_SORT_RADIX + threadIdx.x], c);
    }
}

/* ---- small n: one block, every pass in shared memory ------------------------------------------------------ */

template <class U, class V>
__global__ void __launch_bounds__(PS_SORT_THREADS) ps_sort_small_kernel(const U *keys_in, U *keys_out,
                                                                        const void *values_in, void *values_out,
                                                                        uint32_t n, const ps_sort_keys_desc<U> k) {
    constexpr bool HAS_VALUES = !std::is_same<V, ps_sort_no_value>::value;
    __shared__ U keys[PS_SORT_TILE];
    __shared__ uint16_t from[HAS_VALUES ? PS_SORT_TILE : 1];
    __shared__ ps_sort_rank_smem rs;
    U key[PS_SORT_ITEMS];
    uint32_t origin[PS_SORT_ITEMS], digit[PS_SORT_ITEMS], rank[PS_SORT_ITEMS];
#pragma unroll
    for (int i = 0; i < PS_SORT_ITEMS; i++) {
        const uint32_t slot = ps_sort_slot(i);
        key[i] = slot < n ? keys_in[slot] : (U)0;
        origin[i] = slot;
    }
    for (unsigned q = 0; q < k.passes; q++) {
        const ps_sort_digit<U> dg = ps_sort_pass_digit(k, q);
        /* slots past n hold the padding: it takes the last digit in every pass, so it stays last */
#pragma unroll
        for (int i = 0; i < PS_SORT_ITEMS; i++) digit[i] = ps_sort_slot(i) < n ? dg(key[i]) : dg.mask;
        ps_sort_block_rank(digit, rank, rs);
#pragma unroll
        for (int i = 0; i < PS_SORT_ITEMS; i++) {
            keys[rank[i]] = key[i];
            if constexpr (HAS_VALUES) from[rank[i]] = (uint16_t)origin[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < PS_SORT_ITEMS; i++) {
            key[i] = keys[ps_sort_slot(i)];
            if constexpr (HAS_VALUES) origin[i] = from[ps_sort_slot(i)];
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < PS_SORT_ITEMS; i++) {
        const uint32_t slot = ps_sort_slot(i);
        if (slot < n) {
            keys_out[slot] = key[i];
            if constexpr (HAS_VALUES) ((V *)values_out)[slot] = ((const V *)values_in)[origin[i]];
        }
    }
}

/* ---- host side --------------------------------------------------------------------------------------------- */

/* Everything one sort needs, whatever called it (the library or tools/tune/tune_sort.cu). */
struct ps_sort_args {
    const void *keys_in;
    void *keys_out;
    const void *values_in;
    void *values_out;
    uint64_t n;
    int kind, descending;
    unsigned begin_bit, end_bit;
    void *temp; /* ps_sort_temp_bytes(n, key_bytes, value_bytes), 256-byte aligned */
};

/* Tiles of the digit passes: status words are sized for the smallest pass tile of any element size. */
static uint64_t ps_sort_tiles(uint64_t n) { return ps_cuda_div_up(n, PS_SORT_MIN_PASS_TILE); }

/* counts (8 passes x 256), status words (tiles x 256), a keys buffer and a payload buffer; none for one tile. */
static size_t ps_sort_counts_bytes(void) { return ps_cuda_align(PS_SORT_MAX_PASSES * PS_SORT_RADIX * sizeof(uint32_t)); }
static size_t ps_sort_status_bytes(uint64_t n) { return ps_cuda_align((size_t)ps_sort_tiles(n) * PS_SORT_RADIX * 8); }
static size_t ps_sort_temp_bytes(uint64_t n, size_t key_bytes, size_t value_bytes) {
    if (n <= PS_SORT_TILE) return 0;
    return ps_sort_counts_bytes() + ps_sort_status_bytes(n) + ps_cuda_align((size_t)n * key_bytes) +
           ps_cuda_align((size_t)n * value_bytes);
}

template <class U> static ps_sort_keys_desc<U> ps_sort_desc(const ps_sort_args &a) {
    ps_sort_keys_desc<U> k;
    k.kind = a.kind;
    k.flip = a.descending ? (U)~(U)0 : (U)0;
    k.begin_bit = a.begin_bit;
    k.end_bit = a.end_bit;
    k.passes = (a.end_bit - a.begin_bit + 7) / 8;
    return k;
}

/* Clears the counts and status words and counts every pass's digits (n > one tile). Its own function so that
 * tools/tune/tune_sort.cu can time it apart from the passes. */
template <class U> static cudaError_t ps_sort_upsweep(const ps_sort_args &a, const ps_cuda_device *dev) {
    const uint32_t n = (uint32_t)a.n;
    uint32_t *counts = (uint32_t *)a.temp;
    /* one memset clears the counts and every status word: no foreign bytes can validate (see the header) */
    cudaError_t err = cudaMemsetAsync(counts, 0, ps_sort_counts_bytes() + ps_sort_status_bytes(n), dev->stream);
    if (err != cudaSuccess) return err;
    const uint64_t want = ps_cuda_div_up(n, PS_SORT_THREADS * PS_SORT_UP_ITEMS);
    const uint64_t most = (uint64_t)dev->sm_count * PS_SORT_UP_BLOCKS;
    const unsigned grid = (unsigned)(want < most ? want : most);
    ps_sort_upsweep_kernel<U><<<grid, PS_SORT_THREADS, 0, dev->stream>>>((const U *)a.keys_in, n, ps_sort_desc<U>(a),
                                                                         counts);
    return cudaGetLastError();
}

template <class U, class V> static cudaError_t ps_sort_launch(const ps_sort_args &a, const ps_cuda_device *dev) {
    const uint32_t n = (uint32_t)a.n;
    const ps_sort_keys_desc<U> k = ps_sort_desc<U>(a);
    if (n == 0) return cudaSuccess;
    if (n <= PS_SORT_TILE) {
        ps_sort_small_kernel<U, V><<<1, PS_SORT_THREADS, 0, dev->stream>>>(
            (const U *)a.keys_in, (U *)a.keys_out, a.values_in, a.values_out, n, k);
        return cudaGetLastError();
    }

    /* ---- upsweep ---- */
    char *t = (char *)a.temp;
    uint32_t *counts = (uint32_t *)t;
    unsigned long long *status = (unsigned long long *)(t + ps_sort_counts_bytes());
    U *tmp_keys = (U *)(t + ps_sort_counts_bytes() + ps_sort_status_bytes(n));
    void *tmp_values = (char *)tmp_keys + ps_cuda_align((size_t)n * sizeof(U));
    cudaError_t err = ps_sort_upsweep<U>(a, dev);
    if (err != cudaSuccess) return err;

    /* ---- one launch per digit pass: ping-pong so that the last pass writes keys_out ---- */
    ps_sort_pass_params<U> p;
    memset(&p, 0, sizeof p);
    p.n = n;
    p.tiles = (uint32_t)ps_cuda_div_up(n, PS_SORT_PASS_THREADS * ps_sort_pass_items<U, V>::value);
    p.status = status;
    for (unsigned q = 0; q < k.passes; q++) {
        const bool to_out = (k.passes - 1 - q) % 2 == 0;
        p.keys_in = q == 0 ? (const U *)a.keys_in : to_out ? tmp_keys : (const U *)a.keys_out;
        p.values_in = q == 0 ? a.values_in : to_out ? tmp_values : a.values_out;
        p.keys_out = to_out ? (U *)a.keys_out : tmp_keys;
        p.values_out = to_out ? a.values_out : tmp_values;
        p.digit = ps_sort_pass_digit(k, q);
        p.counts = counts + q * PS_SORT_RADIX;
        p.next_counts = NULL;
        if (PS_SORT_FUSED && q + 1 < k.passes) {
            p.next_counts = counts + (q + 1) * PS_SORT_RADIX;
            p.next_digit = ps_sort_pass_digit(k, q + 1);
        }
        p.tag = (uint32_t)(ps_chain_next_epoch() & 0x3fffffffull) << 2;
        ps_sort_pass_kernel<U, V><<<p.tiles, PS_SORT_PASS_THREADS, 0, dev->stream>>>(p);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    return cudaSuccess;
}

template <class U> static cudaError_t ps_sort_launch_values(const ps_sort_args &a, size_t value_bytes,
                                                            const ps_cuda_device *dev) {
    switch (value_bytes) {
    case 0: return ps_sort_launch<U, ps_sort_no_value>(a, dev);
    case 1: return ps_sort_launch<U, uint8_t>(a, dev);
    case 2: return ps_sort_launch<U, uint16_t>(a, dev);
    case 4: return ps_sort_launch<U, uint32_t>(a, dev);
    case 8: return ps_sort_launch<U, uint64_t>(a, dev);
    default: return cudaErrorInvalidValue;
    }
}

/* The sort of keys of key_bytes (1, 2, 4, 8) with payloads of value_bytes (0, 1, 2, 4, 8). */
static cudaError_t ps_sort_run_args(const ps_sort_args &a, size_t key_bytes, size_t value_bytes,
                                    const ps_cuda_device *dev) {
    switch (key_bytes) {
    case 1: return ps_sort_launch_values<uint8_t>(a, value_bytes, dev);
    case 2: return ps_sort_launch_values<uint16_t>(a, value_bytes, dev);
    case 4: return ps_sort_launch_values<uint32_t>(a, value_bytes, dev);
    case 8: return ps_sort_launch_values<uint64_t>(a, value_bytes, dev);
    default: return cudaErrorInvalidValue;
    }
}

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_sort.cu includes the kernels alone */

/* The largest n: counts and destinations are 32-bit. */
#define PS_SORT_MAX_N 0xffffffffull

pscan_status ps_cuda_sort_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (req->n > PS_SORT_MAX_N) return PSCAN_ERROR_TOO_LARGE;
    *bytes = ps_sort_temp_bytes(req->n, req->elem_bytes, req->value_bytes);
    return PSCAN_SUCCESS;
}

cudaError_t ps_cuda_sort_run(const ps_request *req, const ps_cuda_device *dev) {
    ps_sort_args a;
    memset(&a, 0, sizeof a);
    a.keys_in = req->in;
    a.keys_out = req->out;
    a.values_in = req->in2;
    a.values_out = req->out2;
    a.n = req->n;
    switch (req->type) {
    case PSCAN_TYPE_F32:
    case PSCAN_TYPE_F64: a.kind = PS_SORT_KEY_FLOAT; break;
    case PSCAN_TYPE_I8:
    case PSCAN_TYPE_I16:
    case PSCAN_TYPE_I32:
    case PSCAN_TYPE_I64: a.kind = PS_SORT_KEY_SIGNED; break;
    default: a.kind = PS_SORT_KEY_UNSIGNED; break;
    }
    a.descending = req->descending;
    a.begin_bit = req->begin_bit;
    a.end_bit = req->end_bit;
    a.temp = req->temp;
    return ps_sort_run_args(a, req->elem_bytes, req->value_bytes, dev);
}

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
