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
 *    not change between passes, only their order, so one read serves all passes. From 128 MiB of keys
 *    (ps_sort_upsweep_joint_kernel) two passes' digits share one atomic on a table of 65536 8-bit joint bins.
 *  - spine: each pass block scans that pass's 256 global counts itself, in the same block scan of 64-bit pairs
 *    as its tile's counts (cheaper than a launch): the first slot of each digit in the output, known before the
 *    look-back (after it, as a scan of its own, it cost 0.6-2%: H100, 2026-11-27, docs/bench/h100-sort-early.csv).
 *  - one pass per digit (ps_sort_pass_kernel), tiles of THREADS x ITEMS keys per case (ps_sort_pass_policy:
 *    256 x 20 u32 keys alone, 384 x 15 u64 keys alone, 384 x 16 u32 keys with u32 payloads, 256 x 16 with an
 *    8-byte key or payload), tile id = blockIdx.x; each pass a programmatic dependent launch (PS_SORT_PDL: its
 *    blocks are scheduled while the kernel in front ends, and wait for it before they read):
 *      load:      warp w loads its ITEMS rows of the tile, warp-striped (coalesced), and maps them; each
 *                 thread keeps its digits four to a register;
 *      counts:    each ranker (a warp, or a half-warp for keys of 4 and 8 bytes without payloads) counts its
 *                 own digits (shared atomics into its own row); thread d publishes digit d's tile count at once,
 *                 so later tiles' look-backs pass this tile while it still ranks (CUB's "early counts"); the
 *                 counts are scanned over rankers and digits, so each ranker's row holds its next place per
 *                 digit and s.start each digit's first place in the tile;
 *      rank:      each ranker walks its rows in order. Warps: the lanes with the same digit (each lane ors its
 *                 bit into its warp's word of the digit in shared memory, or 8 ballots, one per digit bit: the
 *                 policy mixes the two, row by row, to share the work between the shared-memory and ALU pipes;
 *                 keys of 1-2 bytes take ballots alone), the lowest of them takes the group's places with one
 *                 shared atomic on its warp's row, and a lane's place is the old value plus the peers in lower
 *                 lanes (CUB's Onesweep rank). Half-warps: a row's 16 lane bits and the half-warp's 16-bit place
 *                 share one word per digit, so one atomicAdd by every lane and one read give each lane its peers
 *                 and their places (ps_sort_half_rank; u32 keys at 2^28 1.052x -> 1.070x CUB on an H200, forty-
 *                 first session). A warp whose digits are all one (skewed keys) makes one atomic a ranker in
 *                 the counts and ranks as place + slot, with no walk (forty-third session: all-equal u32 keys at
 *                 2^28 0.54x -> 1.02x CUB on an H200);
 *      look-back: thread d walks back over earlier tiles' words for d (adding aggregates until it meets an
 *                 inclusive prefix) and publishes its own inclusive prefix: 256 independent chains in one
 *                 block, each one word per tile;
 *      scatter:   the keys go to shared memory in tile order; thread j then writes tile slot j to
 *                 out[digit_start + prefix - start[digit] + j], so each digit's run of the tile lands as one
 *                 contiguous, mostly coalesced, stretch; payloads follow through the same staging buffer.
 *  - small n (n <= 4096, one tile): ps_sort_small_kernel sorts in one block, all passes in shared memory (keys
 *    and a 16-bit index of where each came from); the payloads, read with the keys at the start and held in
 *    registers, are permuted once at the end through shared memory: one launch. Its 256 threads take 4, 8 or
 *    16 keys each, the fewest that hold n, since every pass ranks every slot of the block and padding costs as
 *    much as keys (with 16 for all n, pscan was slower than CUB from 1024 to 4096 keys on an H200; the section
 *    says by how much).
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
 * bits, which is why CUDA sorts at most 2^32 - 1 keys. Keys of up to 4 bytes, up to 2^30 keys, take CUB's
 * 32-bit words instead (2 status bits over a 30-bit count, no tag, so zeroed before each pass: two regions
 * in the same bytes, ps_sort_publish), with a look-back reading two words a round trip: 2-4% faster for them,
 * slower for 8-byte keys (ps_sort_pass_policy's STATUS32).
 *
 * Work O(n x passes); global memory: the upsweep reads the keys once; each pass reads and writes keys (and
 * payloads) once, plus 2 KiB of status words written per 4096-key tile (about 12% of a u32 pass) and the
 * look-back's reads of them. Passes ping-pong between keys_out and one buffer in temp, the parity chosen so
 * that the last pass writes keys_out. Depth: passes x (one tile + the look-back chain).
 * Measured (H200, CUDA 13.0, CUB 3.0.1, `pscan bench`, median of 25, docs/bench/h200-sort.csv, forty-third
 * session): CUB's time over pscan's at 2^20 / 2^28: u32 keys 1.38x / 1.093x (53.98 Gkeys/s at 2^28), u64 keys
 * 1.34x / 1.118x, u32 pairs 1.20x / 1.031x; skewed u32 keys at 2^28: all equal 1.028x, 16 random values 0.997x,
 * below 1024 1.028x. The H100's figures and every variant measured on the way, kept or not (ballots instead of
 * __match_any_sync, early counts, the per-case tiles, the upsweep's loop order, the passes without their
 * look-back, the key's kind as a template argument, payloads fetched early or staged beside the keys, the next
 * pass's digits counted inside each pass, lane-banked upsweep counters, ...): docs/performance.md, whose sections
 * name their CSVs under docs/bench/.
 * Against CUB's Onesweep (CCCL main, 2026-08: agent_radix_sort_onesweep.cuh, block_radix_rank.cuh's
 * match/early-counts rank, agent_radix_sort_histogram.cuh, the sm90 tuning; docs/tuning.md, "sort"): the rank is
 * now CUB's way and the tiles per case near CUB's sm90 ones (ps_sort_pass_policy says what each measured). Left:
 * the keys staged in shared memory before the look-back (measured: no gain, removed);
 * the upsweep at full occupancy (ours: 4 x 256 threads per SM; knobs PS_SORT_UP_BLOCKS, PS_SORT_UP_BOUND);
 * unchecked loads and stores for full tiles, programmatic dependent launch, the one-digit-tile shortcut (ours is
 * per warp: ps_sort_warp_counts). Same
 * as ours: warp-striped loads, direct scatter through shared memory, one look-back thread per digit walking one
 * tile at a time with no backoff, early counts, the digits' output offsets loaded before the look-back.
 */
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "chain/pdl.cuh"         /* the passes as programmatic dependent launches (PS_SORT_PDL) */
#include "chain/single_pass.cuh" /* ps_chain_next_epoch: the per-launch epochs of the engine */
#include "chain/tile_state.cuh"  /* PS_TILE_AGGREGATE, PS_TILE_INCLUSIVE */
#include "cuda_backend.h"
#include "scan_problem.cuh"

#define PS_SORT_THREADS 256
/* Keys per thread of the largest one-block sort, which sets the small-n limit PS_SORT_TILE (a tuning knob:
 * tools/tune/tune_sort.cu -DPS_SORT_ITEMS=12; smaller n take 4 or 8, ps_sort_small_kernel); at most 16, which
 * its static shared memory (u64 keys or payloads + 16-bit origins, 44 KiB) is sized for. */
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
 * per pass. A tuning knob: on the H100 (2026-11-23, docs/bench/h100-sort-fused.csv) the upsweep halved and the passes
 * absorbed it (u32 keys 0.485x -> 0.489x CUB at 2^28, before the upsweep counted in CUB's order). */
#ifndef PS_SORT_FUSED
#define PS_SORT_FUSED 0
#endif
/* Tuning only (tools/tune/tune_sort.cu): 1 skips the passes' look-back (every tile takes prefix 0), so a harness
 * built with it times a pass without waiting on its predecessors: what the look-back costs. Every store stays in
 * bounds (a tile's keys of digit d land in d's range), but the result is not sorted (tune_sort: MISMATCH). */
#ifndef PS_SORT_CONTROL
#define PS_SORT_CONTROL 0
#endif
/* Tuning (tools/tune/tune_sort.cu): which cases take 32-bit status words up to 2^30 keys (ps_sort_pass_policy's
 * STATUS32): -1 (default) the policy's choice, keys of at most 4 bytes; 0 none; 1 every case. */
#ifndef PS_SORT_STATUS32
#define PS_SORT_STATUS32 (-1)
#endif
/* Tuning: 1 puts every pass's staging buffer (its tile's keys, then payloads) in dynamic shared memory. Without
 * it only a tile past the 48 KiB of static shared memory has it there (u64 keys with 4-byte payloads in their
 * LARGE tiles, 384 x 16: 48 KiB of keys); the others keep a static buffer, and their kernels are the same as
 * before the knob. Every case at 1 measured within 1% of 0 (H100, 2026-11-27, docs/bench/h100-sort-tiles.csv). */
#ifndef PS_SORT_DYNAMIC_SMEM
#define PS_SORT_DYNAMIC_SMEM 0
#endif
/* Tuning: of every four rows of a warp's rank walk, how many find their peers by shared atomicOr, the rest by
 * ballots (ps_sort_warp_rank): -1 (default) the policy's (ps_sort_pass_policy's OR_ROWS4), 0-4 every case ranked
 * in warps (half-warps take the atomic on every row). */
#ifndef PS_SORT_OR_ROWS4
#define PS_SORT_OR_ROWS4 (-1)
#endif
/* Tuning: 1 ranks each pass's tile in half-warps (ps_sort_half_rank), 0 in warps (ps_sort_warp_rank), for every
 * case; -1 (default) the policy's (ps_sort_pass_policy's HALF: keys of 4 and 8 bytes without payloads). */
#ifndef PS_SORT_HALF
#define PS_SORT_HALF (-1)
#endif
/* Tuning: words after each half-warp's row of the rank's words (ps_sort_wrank's next, half-warp ranks only; 0: none).
 * The two half-warps of a warp issue their atomics as one instruction; rows 256 words apart put one digit of both
 * halves in one bank, so keys of few values (both halves hold the same digits) pay a 2-way conflict on every row.
 * 16 words put the second half's digit d in bank (d + 16) % 32. The rows share the staging union with the tile's
 * keys, which stay the larger (u32 keys: 24 rows of 272 words, 26 KiB, beside 30 KiB of keys): no occupancy change.
 * Measured on an H200 (forty-fourth session, tune_sort, docs/bench/h200-sort-skew-pad.csv), u32 keys at 2^28 x CUB:
 * 16 random full-width values 1.034 -> 1.061, 16 values 0-15 1.038 -> 1.048, below 1024 1.023 -> 1.051, random
 * 1.091 -> 1.094, all equal and u64 keys unchanged. */
#ifndef PS_SORT_ROW_PAD
#define PS_SORT_ROW_PAD 16
#endif
/* Tuning: the fewest keys (a power of two) that take a case's LARGE pass policy (ps_sort_pass_policy): 4-byte keys
 * with 4-byte payloads, and 8-byte keys with 4-byte payloads (_WIDE). */
#ifndef PS_SORT_LARGE_LOG2
#define PS_SORT_LARGE_LOG2 24
#endif
#ifndef PS_SORT_LARGE_LOG2_WIDE
#define PS_SORT_LARGE_LOG2_WIDE 22
#endif
/* Tuning: 1 counts what the look-backs do (ps_sort_lookback_stats, printed by tune_sort). Measured and removed
 * (H100, 2026-11-27, docs/bench/h100-sort-knobs.csv, pscan over CUB at 2^28 u32 keys / u32 pairs, base 0.883 /
 * 0.899): the keys staged before the look-back (CUB's order) 0.883 / 0.887; a sleep of 64 or 256 ns before a
 * word not yet written is read again 0.855 / 0.901; 8 words per look-back round trip 0.764 / 0.865. The payloads
 * prefetched into L2 (one line a thread, with the keys' loads or before the look-back) made u32 pairs slower
 * (0.944 -> 0.877 at 2^28, docs/bench/h100-sort-prefetch.csv). */
#ifndef PS_SORT_LOOKBACK_STATS
#define PS_SORT_LOOKBACK_STATS 0
#endif
/* A pass over 4-byte keys asks L2, as a tile starts, for the keys (not the payloads) of the tile PS_SORT_PREFETCH
 * after it (0: none), as the single-pass chain's prefetch hook does for the scan (chain/single_pass.cuh, from
 * PS_CHAIN_PREFETCH_FROM tiles). H200, against CUB's faster call (twenty-first session): tune_sort, u32 keys at 2^24
 * / 2^28 1.082x / 0.973x -> 1.094x / 1.001x (32 ahead; 64: 1.089x / 0.998x; docs/bench/h200-sort-prefetch.csv);
 * `pscan bench`, u32 pairs at 2^28 1.000x / 1.003x -> 1.013x / 1.010x in two runs (h200-sort-prefetch-pairs.csv).
 * With the payloads' lines too the pairs lost (u32 pairs 1.147x -> 1.133x, u64 keys with u32 payloads 1.024x ->
 * 0.965x in tune_sort), and 8-byte keys lose about 1% with their keys' lines (h200-sort-prefetch-cases.csv). */
#ifndef PS_SORT_PREFETCH
#define PS_SORT_PREFETCH 32
#endif
/* Each digit pass is a programmatic dependent launch (sm_90 and later; chain/pdl.cuh): its blocks may be scheduled
 * once every block of the kernel before it has passed its own wait, and each waits, before it reads anything,
 * until that kernel has finished and its writes are visible. What it saves is the gap between two launches (the
 * launch itself and the ramp of the next grid), not work: it matters where a pass is short. 0: plain launches.
 * H200, 2026-12-02 (docs/bench/h200-sort-pdl.csv, tune_sort, median of 15, mean of two rounds, plain -> PDL, us):
 * u32 keys 2^14 / 2^16 / 2^20 / 2^22 / 2^24 33.2 -> 28.3 / 36.4 -> 31.4 / 57.8 -> 52.9 / 118.3 -> 113.3 / 355.9
 * -> 352.8, u64 keys 2^16 70.3 -> 60.3, 2^24 1001 -> 986; u32 pairs 2^16 44.7 -> 39.9; at 2^26-2^28 every case
 * within 0.5 % (u64 pairs-u32 2^24 0.5 % slower, 1321 -> 1327). The one-block sort (n <= 4096) is one launch. */
#ifndef PS_SORT_PDL
#define PS_SORT_PDL 1
#endif
/* 1: the upsweep's memset clears only the status words this sort's passes use (ps_sort_clear_bytes: its tiles x
 * 256 words of its width, the first of the two 32-bit regions alone) instead of every byte of ps_sort_status_bytes
 * (sized for the smallest tile of any case, 4096 keys, and 64-bit words: 134 MB at 2^28 keys), and pass 0 of
 * 32-bit words clears the second region as every later pass clears the next. At 2^28 keys u32 keys clear 53.7 MB
 * (5120-key tiles, 32-bit words), u32 pairs 29.8 (9216-key tiles), u64 keys 95.4 (5760-key tiles, 64-bit words).
 * Measured (NVIDIA H200, tune_sort A/B in one run, forty-eighth session, docs/bench/h200-sort-clear-used.csv):
 * tune_sort's upsweep_us at 2^28 u32 keys 385.7 -> 369.5, u32 pairs 385.9 -> 364.4, u64 keys 728.9 -> 719.5; the
 * sort 4926.0 -> 4917.7 us (pass 0 now writes the second region the memset no longer does), pairs 7265.4 ->
 * 7243.4, u64 keys 14894.6 -> 14885.8; 2^26 3-7 us off; below 2^24 within +-1 us (u32 keys 2^16-2^22 +0.3-0.8 us,
 * pairs -0.7-+0.7: one run, the variants timed one after the other). test_sort --full on CUDA 863 of 863,
 * sort.cuda.stress and graph.cuda passed with it; 0 restores the whole-region memset. */
#ifndef PS_SORT_CLEAR_USED
#define PS_SORT_CLEAR_USED 1
#endif
/* Tuning: which passes prefetch: 1 those of 4-byte keys, alone or with payloads, the keys' lines only (the
 * default), 2 every case's keys (payloads not), 3 every case's keys and payloads (the lines the pairs lost with). */
#ifndef PS_SORT_PREFETCH_CASES
#define PS_SORT_PREFETCH_CASES 1
#endif
/* The digit passes' tile and occupancy, per case (ps_sort_pass_policy below): threads, keys per thread and
 * blocks per SM. Defining any of these with -D overrides it for every case (tools/tune/variants.sh sweeps them):
 * PS_SORT_PASS_THREADS (a multiple of 32, at least 256: threads past the 256th own no digit), PS_SORT_PASS_ITEMS
 * (keys and payloads of at most 4 bytes), PS_SORT_PASS_ITEMS8 (an 8-byte key or payload), PS_SORT_MIN_BLOCKS. */
template <class U, class V, bool LARGE = false> struct ps_sort_pass_policy;

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

/* pscan.h's order-preserving map of a key's bits. Two kinds reach the device: integers, whose map is x ^ flip
 * (ps_sort_desc folds a signed key's sign bit into flip, beside descending's all ones), and floats (negatives
 * complemented, the sign bit of positives set, every NaN all ones, after +inf; then ^ flip). Why two: a kind
 * tested at run time in every key's digit is slow unless NVVM unswitches the pass kernel's loops into one copy
 * per kind, and it stopped doing that when one unused field was added to ps_sort_pass_params (u64 keys 1.70x
 * slower; docs/performance.md, forty-fifth session). The keys-only pass kernels therefore take the kind as a
 * template argument (ps_sort_pass_policy::KIND_BODIES, ps_sort_digit::as); with two kinds that is two bodies. */
template <class U, bool REAL> __device__ __forceinline__ U ps_sort_map_as(U x, U flip) {
    if constexpr (REAL) {
        const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
        const U inf = (U)(sizeof(U) == 8 ? 0x7ff0000000000000ull : 0x7f800000ull);
        const U t = (U)(x & ~sign) > inf ? (U)~(U)0 : (x & sign) ? (U)~x : (U)(x | sign);
        return (U)(t ^ flip);
    } else {
        return (U)(x ^ flip);
    }
}
template <class U> __device__ __forceinline__ U ps_sort_map(U x, int kind, U flip) {
    return kind == PS_SORT_KEY_FLOAT ? ps_sort_map_as<U, true>(x, flip) : ps_sort_map_as<U, false>(x, flip);
}

/* A pass's digit of a key: its map's bits [shift, shift + 8) under mask. as<REAL>() is the same digit with the
 * kind fixed at compile time, for the pass kernel's bodies. */
template <class U, bool REAL> struct ps_sort_digit_as {
    U flip;
    unsigned shift, mask;
    __device__ __forceinline__ uint32_t operator()(U key) const {
        return (uint32_t)(ps_sort_map_as<U, REAL>(key, flip) >> shift) & mask;
    }
};
template <class U> struct ps_sort_digit {
    int kind;
    U flip;
    unsigned shift, mask;
    __device__ __forceinline__ uint32_t operator()(U key) const {
        return (uint32_t)(ps_sort_map<U>(key, kind, flip) >> shift) & mask;
    }
    /* KIND: 0 integers, 1 floats, -1 the kind left to run time (this digit itself) */
    template <int KIND> __device__ __forceinline__ auto as() const {
        if constexpr (KIND < 0) return *this;
        else return ps_sort_digit_as<U, KIND == 1>{flip, shift, mask};
    }
};

/* ---- block level: the stable rank of a tile's digits ----------------------------------------------------- */

/* The one-block sort's rank (ps_sort_block_rank): per warp and digit the warp's count, then its first place in
 * the tile (the digit's start plus the warps before; at most 4096, so 16 bits hold it). */
struct ps_sort_rank_smem {
    uint16_t warp_counts[PS_SORT_WARPS][PS_SORT_RADIX];
    uint32_t warp_totals[PS_SORT_WARPS];
};

/* Exclusive sum of one value per thread across the block (WARPS x 32 threads); *total gets the sum. T is
 * uint32_t, or uint64_t for two sums at once (two 32-bit halves that do not carry into each other). */
template <int WARPS = PS_SORT_WARPS, class T = uint32_t>
__device__ __forceinline__ T ps_sort_block_exclusive(T x, T *warp_totals, T *total) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    T inc = x;
#pragma unroll
    for (unsigned d = 1; d < 32; d <<= 1) {
        const T y = __shfl_up_sync(PS_WARP_ALL, inc, d);
        if (lane >= d) inc += y;
    }
    if (lane == 31) warp_totals[warp] = inc;
    __syncthreads();
    T before = 0, all = 0;
#pragma unroll
    for (unsigned w = 0; w < WARPS; w++) {
        const T t = warp_totals[w];
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

/* A digit pass's slots: warp-striped rows (ps_sort_slot_of), or with HALF each half-warp owns half of its warp's
 * slots, rows of 16 (item i of lane l of warp w is slot w * ITEMS * 32 + (l / 16) * ITEMS * 16 + i * 16 + l % 16), so
 * that a half-warp's rank walk meets its keys in slot order. */
template <int ITEMS, bool HALF> __device__ __forceinline__ uint32_t ps_sort_pass_slot(int i) {
    if constexpr (HALF)
        return (threadIdx.x / 32) * (ITEMS * 32) + (threadIdx.x / 16 % 2) * (ITEMS * 16) + i * 16 + threadIdx.x % 16;
    else
        return ps_sort_slot_of<ITEMS>(i);
}

/* The lanes of the warp whose 8 digit bits (bits shift .. shift + 7 of word; unrolled callers pass a constant) all equal this lane's: one ballot per
 * bit, each lane inverting the ballot where its own bit is clear, under the bit's predicate (a predicated not
 * where a select would cost two more instructions: the pass ran 125 instructions a key against CUB's 80, on an
 * H200 in ncu, 2026-11-26). A third of __match_any_sync's time (measured: the whole sort 1.33x faster on an
 * H100). */
__device__ __forceinline__ uint32_t ps_sort_peers(uint32_t word, int shift) {
    uint32_t peers = PS_WARP_ALL;
#pragma unroll
    for (int b = 0; b < 8; b++) {
        uint32_t m;
        asm("{\n\t.reg .pred p;\n\t"
            "and.b32 %0, %1, %2;\n\t"
            "setp.ne.u32 p, %0, 0;\n\t"
            "vote.sync.ballot.b32 %0, p, 0xffffffff;\n\t"
            "@!p not.b32 %0, %0;\n\t}"
            : "=r"(m)
            : "r"(word), "r"(1u << (shift + b)));
        peers &= m;
    }
    return peers;
}

/* Ranks a one-block tile's digits stably: rank[i] becomes item i's place in the tile sorted by digit (ties in
 * slot order, ps_sort_slot_of<ITEMS>). Each warp walks its ITEMS rows in order, a row's peers placed with one
 * read and one write of the warp's count; thread d then turns digit d's column of counts into each warp's first
 * place, so an item's place is one read. Its __syncthreads also order the caller's previous use of shared
 * memory before its next (see ps_sort_small_kernel). */
template <int ITEMS>
__device__ __forceinline__ void ps_sort_block_rank(const uint32_t (&digit)[ITEMS], uint32_t (&rank)[ITEMS],
                                                   ps_sort_rank_smem &s) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t below_mask = (1u << lane) - 1u;
    uint16_t *counts = s.warp_counts[warp];
    for (unsigned d = lane; d < PS_SORT_RADIX; d += 32) counts[d] = 0;
    __syncwarp();

    /* ---- per warp: rows in order, peers of one digit by ballots ---- */
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t d = digit[i];
        const uint32_t peers = ps_sort_peers(d, 0);
        const uint32_t below = __popc(peers & below_mask);
        const uint32_t c = counts[d];
        rank[i] = c + below;
        __syncwarp(); /* every peer has read the count before the lowest one bumps it */
        if (below == 0) counts[d] = (uint16_t)(c + __popc(peers));
        __syncwarp();
    }
    __syncthreads();

    /* ---- per digit: the digits before (the block's scan), then the warps before ---- */
    const unsigned d = threadIdx.x;
    uint32_t c[PS_SORT_WARPS], total = 0;
#pragma unroll
    for (unsigned w = 0; w < PS_SORT_WARPS; w++) {
        c[w] = s.warp_counts[w][d];
        total += c[w];
    }
    uint32_t all;
    uint32_t place = ps_sort_block_exclusive(total, s.warp_totals, &all);
#pragma unroll
    for (unsigned w = 0; w < PS_SORT_WARPS; w++) { /* column d is thread d's alone */
        s.warp_counts[w][d] = (uint16_t)place;
        place += c[w];
    }
    __syncthreads();
#pragma unroll
    for (int i = 0; i < ITEMS; i++) rank[i] += counts[digit[i]];
}

/* ---- block level, the digit passes: counts first, then a rank walk that yields final places ---------------- */

/* A pass block of THREADS threads: next (per ranker, a warp or with HALF a half-warp, and digit: its count, then its
 * next place in the tile) lives in the pass's staging buffer, which is free until the scatter. */
template <int THREADS, bool HALF = false> struct ps_sort_wrank {
    enum { WARPS = THREADS / 32, RANKERS = HALF ? 2 * WARPS : WARPS /* the warps or half-warps that rank */ };
    typedef uint32_t next[RANKERS][PS_SORT_RADIX + (HALF ? PS_SORT_ROW_PAD : 0)]; /* PS_SORT_ROW_PAD: banks */
    struct smem {
        uint32_t start[PS_SORT_RADIX]; /* the tile's first place of each digit */
        uint64_t warp_totals[WARPS];
    };
    /* thread d of the block has a digit (compile-time true for 256 threads) */
    static __device__ __forceinline__ bool digit_thread() { return THREADS == PS_SORT_RADIX || threadIdx.x < PS_SORT_RADIX; }
};

/* The digits of a thread's items, four 8-bit digits a register (a register per key would be 20-32 more
 * registers at the larger tiles; unpacking is one bit-field extract). */
#define PS_SORT_DIGIT_WORDS(items) (((items) + 3) / 4)
template <int ITEMS>
__device__ __forceinline__ uint32_t ps_sort_digit_at(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)], int i) {
    return (digits[i / 4] >> (8 * (i % 4))) & 0xffu;
}

/* Each ranker (warp or half-warp) counts the digits of its own rows (every slot, padding too) into its own row of
 * next; a warp zeroes its rankers' rows first. Returns whether the warp's 32 x ITEMS digits are all one: skewed
 * keys (few values, small integers' zero top digits; after the first pass equal keys sit together) then make one
 * atomic a ranker and rank as place + slot with no walk, where 16-32 lanes' atomics on one word would take turns
 * row after row. The test is each thread's min and max digit (ALU) and two warp reductions a tile. Measured on an
 * H200 (forty-third session, docs/bench/h200-sort-skew-knobs.csv, "uw"): u32 keys at 2^28 all-equal 0.54x -> 1.02x
 * CUB, 16 values 0.63x -> 1.04x, below 1024 0.74x -> 1.02x; random keys 0.2 % slower (0.9 % u32 pairs at 2^24).
 * A test row by row (a shuffle and a ballot) cost random keys 7 % (forty-second session). A test of the packed digit
 * words (a compare a word, a shuffle and a vote; "pk", forty-fourth session, h200-sort-skew-pad.csv) was within
 * 0.2 % either way on every case: not kept. */
template <int THREADS, int ITEMS, bool HALF>
__device__ __forceinline__ bool ps_sort_warp_counts(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)],
                                                    typename ps_sort_wrank<THREADS, HALF>::next &next) {
    constexpr int PER_WARP = HALF ? 2 : 1; /* a row per half-warp */
    uint32_t *rows = next[threadIdx.x / 32 * PER_WARP]; /* the warp's rows and their pads, contiguous */
    for (unsigned d = threadIdx.x % 32; d < PER_WARP * (PS_SORT_RADIX + (HALF ? PS_SORT_ROW_PAD : 0)); d += 32) rows[d] = 0;
    __syncwarp();
    uint32_t *mine = next[PER_WARP == 1 ? threadIdx.x / 32 : threadIdx.x / 16];
    {
        uint32_t lo = ps_sort_digit_at<ITEMS>(digits, 0), hi = lo;
#pragma unroll
        for (int i = 1; i < ITEMS; i++) {
            lo = min(lo, ps_sort_digit_at<ITEMS>(digits, i));
            hi = max(hi, ps_sort_digit_at<ITEMS>(digits, i));
        }
        if (__reduce_min_sync(PS_WARP_ALL, lo) == __reduce_max_sync(PS_WARP_ALL, hi)) {
            if (threadIdx.x % (32 / PER_WARP) == 0) atomicAdd(&mine[lo], (32u / PER_WARP) * ITEMS);
            return true;
        }
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) atomicAdd(&mine[ps_sort_digit_at<ITEMS>(digits, i)], 1u);
    return false;
}

/* Thread d, after a __syncthreads that follows ps_sort_warp_counts: the tile's count of digit d, padding
 * included. */
template <int THREADS, bool HALF>
__device__ __forceinline__ uint32_t ps_sort_warp_total(const typename ps_sort_wrank<THREADS, HALF>::next &next) {
    uint32_t total = 0;
    if (ps_sort_wrank<THREADS>::digit_thread())
#pragma unroll
        for (unsigned w = 0; w < ps_sort_wrank<THREADS, HALF>::RANKERS; w++) total += next[w][threadIdx.x];
    return total;
}

/* Thread d: turns digit d's counts into each warp's first place of d in the tile's stable order (the start of
 * d, plus the warps before) and sets s.start[d]; returns the digit's first slot in the output (the digits
 * before it, from the pass's global counts: global_count is digit d's). Both scans share one block scan of
 * 64-bit pairs, so the output's slot is known before the look-back instead of after it (one block scan and a
 * load less on the path from the look-back to the scatter). Ends with a __syncthreads. */
template <int THREADS, bool HALF>
__device__ __forceinline__ uint32_t ps_sort_warp_places(typename ps_sort_wrank<THREADS>::smem &s,
                                                        typename ps_sort_wrank<THREADS, HALF>::next &next, uint32_t total,
                                                        uint32_t global_count) {
    const unsigned d = threadIdx.x;
    uint64_t all;
    const uint64_t both = ps_sort_block_exclusive<ps_sort_wrank<THREADS>::WARPS, uint64_t>(
        (uint64_t)global_count << 32 | total, s.warp_totals, &all);
    uint32_t place = (uint32_t)both; /* totals sum to the tile's slots: no carry into the high half */
    if (ps_sort_wrank<THREADS>::digit_thread()) {
        s.start[d] = place;
#pragma unroll
        for (unsigned w = 0; w < ps_sort_wrank<THREADS, HALF>::RANKERS; w++) { /* column d is thread d's alone */
            const uint32_t c = next[w][d];
            next[w][d] = HALF ? place << 16 : place; /* half-warps keep the place in the word's high half */
            place += c;
        }
    }
    __syncthreads();
    return (uint32_t)(both >> 32);
}

/* The rank walk: each warp takes its rows in order; the lanes with the same digit (8 ballots) are placed at
 * the warp's next place of that digit, in lane order; the lowest of them moves the place on by their number.
 * The atomic's old value is the place; the shuffle that hands it to the peers waits for it, so the next row's
 * atomic on the same digit cannot pass it. rank[i] is item i's place in the tile. */
template <int THREADS, int ITEMS, int OR_ROWS4>
__device__ __forceinline__ void ps_sort_warp_rank(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)],
                                                  uint32_t (&rank)[ITEMS], typename ps_sort_wrank<THREADS>::next &next,
                                                  typename ps_sort_wrank<THREADS>::next *bins, bool one) {
    const unsigned lane = threadIdx.x % 32, warp = threadIdx.x / 32;
    const uint32_t below_mask = (1u << lane) - 1u;
    uint32_t *mine = next[warp];
    if (one) { /* the warp's digits are all one: its keys keep their slot order */
        const uint32_t place = mine[ps_sort_digit_at<ITEMS>(digits, 0)];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) rank[i] = place + i * 32 + lane;
        return;
    }
    /* OR rows: the peers by a shared atomicOr of each lane's bit into its warp's word of the digit (a third of the
     * instructions of 8 ballots). A __syncwarp after the ors; after the shuffle that hands out the place (off the
     * path from the read to the place) a second one, then the leader clears the word. OR rows alternate between two
     * sets of words, so that the next OR row's ors never meet a clear (the one after it comes past two more
     * __syncwarp: every order is a barrier's, as racecheck asks). The ballot rows between them touch no word: they
     * cost ALU issue slots where OR rows cost shared-memory wavefronts, and the pass needs both pipes (the policy's
     * OR_ROWS4). */
    if constexpr (OR_ROWS4 > 0) {
#pragma unroll
        for (int k = 0; k < PS_SORT_RADIX / 32; k++) bins[0][warp][k * 32 + lane] = bins[1][warp][k * 32 + lane] = 0;
        __syncwarp();
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t d = ps_sort_digit_at<ITEMS>(digits, i);
        /* rows i % 4 < OR_ROWS4 take the atomicOr; the j-th of them uses set j & 1 of the words, so that two rows on
         * the same set always have a row with two __syncwarp between them (compile-time after unrolling) */
        const bool or_row = i % 4 < OR_ROWS4;
        const int set = ((i / 4) * OR_ROWS4 + i % 4) & 1;
        uint32_t peers;
        if (or_row) {
            atomicOr(&bins[set][warp][d], 1u << lane);
            __syncwarp();
            peers = *(volatile uint32_t *)&bins[set][warp][d];
        } else {
            peers = ps_sort_peers(digits[i / 4], 8 * (i % 4)); /* the bits in place: no extraction */
        }
        const int leader = __ffs(peers) - 1;
        uint32_t place = 0;
        if ((int)lane == leader) place = atomicAdd(&mine[d], (uint32_t)__popc(peers));
        place = __shfl_sync(PS_WARP_ALL, place, leader);
        if (or_row) {
            __syncwarp();
            if ((int)lane == leader) bins[set][warp][d] = 0;
        }
        rank[i] = place + __popc(peers & below_mask);
    }
}

/* The rank walk in half-warps (HALF): each half-warp of 16 lanes ranks its own rows with its own word per digit,
 * whose high half is the half-warp's next place of the digit and whose low half collects a row's peers, a bit a
 * lane. Every lane adds its bit and one place to the word in one atomicAdd (the bits are distinct and the low half
 * starts clear, so nothing carries); after a __syncwarp every lane reads the word: its peers are the low half,
 * their places end at the high half, so no leader's atomic and no shuffle; after a second __syncwarp the leader
 * clears the low half, and a third orders the clear before the next row's adds. One shared access a row fewer than
 * the warp's walk (the warp's OR word and place are two words, and its lane bits fill 32 bits). Rows by ballots
 * between them, as the warp's walk mixes, were slower (forty-first session: ps_sort_pass_policy) and are gone; so is
 * every row by ballots and the leader's plain update in tiles of at most 32 distinct digits ("fb", forty-fourth
 * session, h200-sort-skew-pad.csv: u32 keys at 2^28 6 % slower on 16 values and on random keys, whose tiles never
 * took it: the row's branch alone cost that). */
template <int THREADS, int ITEMS>
__device__ __forceinline__ void ps_sort_half_rank(const uint32_t (&digits)[PS_SORT_DIGIT_WORDS(ITEMS)],
                                                  uint32_t (&rank)[ITEMS], typename ps_sort_wrank<THREADS, true>::next &next,
                                                  bool one) {
    const unsigned hlane = threadIdx.x % 16;
    const uint32_t below = (1u << hlane) - 1u;
    uint32_t *mine = next[threadIdx.x / 16];
    if (one) { /* the warp's digits are all one: each half-warp's keys keep their slot order */
        const uint32_t place = mine[ps_sort_digit_at<ITEMS>(digits, 0)] >> 16;
#pragma unroll
        for (int i = 0; i < ITEMS; i++) rank[i] = place + i * 16 + hlane;
        return;
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t d = ps_sort_digit_at<ITEMS>(digits, i);
        atomicAdd(&mine[d], 1u << 16 | 1u << hlane);
        __syncwarp();
        const uint32_t word = *(volatile uint32_t *)&mine[d];
        const uint32_t peers = word & 0xffffu;
        rank[i] = (word >> 16) - __popc(peers) + __popc(peers & below);
        __syncwarp();
        if (hlane == (unsigned)(__ffs(peers) - 1)) mine[d] = word & 0xffff0000u;
        __syncwarp();
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
    void *status;                /* tiles x 256 status words of the kernel's W (64-bit ones self-tagged) */
    void *clear;                 /* 32-bit words: the next pass's, each tile zeroing its own; or NULL */
    uint32_t tag;                /* this launch's epoch bits, shifted left by 2 */
};

/* The passes' status words, W of 64 or 32 bits (ps_sort_pass_policy's STATUS32). A 64-bit word is the
 * launch's epoch tag and a status over a 32-bit count: never cleared, a word of an earlier launch holds another
 * tag. A 32-bit word is CUB's form, 2 status bits over a 30-bit count (so for n up to 2^30 only;
 * ps_sort_passes_sized says why 2^30 fits): no tag, so the words are zero before each pass (two regions of tiles
 * x 256 words, the one of pass q + 1 zeroed by pass q's tiles, the first by the upsweep's memset); half the bytes
 * a look-back reads. */
template <class W> __device__ __forceinline__ void ps_sort_publish(W *word, uint32_t tag, unsigned status, uint32_t count) {
    if constexpr (sizeof(W) == 4) {
        asm volatile("st.relaxed.gpu.global.u32 [%0], %1;" ::"l"(word), "r"(status << 30 | count) : "memory");
    } else {
        const unsigned long long w = ((unsigned long long)(tag | status) << 32) | count;
        asm volatile("st.relaxed.gpu.global.u64 [%0], %1;" ::"l"(word), "l"(w) : "memory");
    }
}

/* One status word, read relaxed; ps_sort_is tells whether it holds the given status in this pass (a word not
 * yet written holds neither), ps_sort_count its count. Comparing the whole tag word, as here, rather than
 * decoding a status first measured 1.6% faster (u32 keys at 2^24 and 2^28, H100, 2026-11-27). */
template <class W> __device__ __forceinline__ W ps_sort_read(const W *word) {
    W w;
    if constexpr (sizeof(W) == 4)
        asm volatile("ld.relaxed.gpu.global.u32 %0, [%1];" : "=r"(w) : "l"(word) : "memory");
    else
        asm volatile("ld.relaxed.gpu.global.u64 %0, [%1];" : "=l"(w) : "l"(word) : "memory");
    return w;
}
template <class W> __device__ __forceinline__ bool ps_sort_is(W w, uint32_t tag, unsigned status) {
    if constexpr (sizeof(W) == 4)
        return w >> 30 == status;
    else
        return (uint32_t)(w >> 32) == (tag | status);
}
template <class W> __device__ __forceinline__ uint32_t ps_sort_count(W w) {
    return sizeof(W) == 4 ? (uint32_t)w & 0x3fffffffu : (uint32_t)w;
}

#if PS_SORT_LOOKBACK_STATS
/* Tuning only: summed over every digit thread of every tile of every pass since the last reset: words read,
 * aggregates passed, reads that found a word not yet written, and clock cycles in the look-back (tune_sort prints
 * them per tile and digit). Each warp adds its sums to one of 64 slots, so that counting moves the timing little
 * (one global counter per figure, added to by every thread, made the passes 20 times slower). */
#define PS_SORT_STATS_SLOTS 64
__device__ unsigned long long ps_sort_lookback_stats[PS_SORT_STATS_SLOTS][4];
/* Called by every thread of the look-back's warps (the digit threads are whole warps). */
__device__ __forceinline__ void ps_sort_lookback_count(uint32_t reads, uint32_t passed, uint32_t unwritten,
                                                       uint32_t cycles) {
    const uint32_t v[4] = {reads, passed, unwritten, cycles};
    unsigned long long *slot = ps_sort_lookback_stats[(blockIdx.x * 8 + threadIdx.x / 32) % PS_SORT_STATS_SLOTS];
#pragma unroll
    for (int k = 0; k < 4; k++) {
        /* 64-bit sums: a warp's cycles pass 2^32 */
        const uint32_t lo = __reduce_add_sync(0xffffffffu, v[k] & 0xffffu), hi = __reduce_add_sync(0xffffffffu, v[k] >> 16);
        if (threadIdx.x % 32 == 0) atomicAdd(slot + k, ((unsigned long long)hi << 16) + lo);
    }
}
#endif

/* Thread d: how many keys of digit d the tiles before this one hold. The tile's count was published (as an
 * aggregate) before the rank; this publishes its inclusive count after. 64-bit words: one word per round trip,
 * as CUB's Onesweep (reading 8 or 16 earlier tiles' words at once measured slower, H100, 2026-11-23 and
 * 2026-11-27). 32-bit words: two words per round trip, the second used when the first is an aggregate; with
 * the 64-bit words it lost 1-3%, with the 32-bit ones it gained 2-4% (ps_sort_pass_policy's STATUS32). */
template <class W>
__device__ __forceinline__ uint32_t ps_sort_look_back(W *status, uint32_t tag, uint32_t tiles, uint32_t tile, uint32_t count) {
    const unsigned d = threadIdx.x;
    if (tile == 0) return 0;
    uint32_t prefix = 0;
#if PS_SORT_LOOKBACK_STATS
    uint32_t reads = 0, passed = 0, unwritten = 0;
    const long long t0 = clock64();
#define PS_SORT_COUNT_READ(w)                                                                                  \
    (reads++, passed += ps_sort_is(w, tag, PS_TILE_AGGREGATE),                                                 \
     unwritten += !ps_sort_is(w, tag, PS_TILE_AGGREGATE) && !ps_sort_is(w, tag, PS_TILE_INCLUSIVE))
#else
#define PS_SORT_COUNT_READ(w) ((void)0)
#endif
    /* tile 0's word is inclusive: every walk ends there at the latest */
    if constexpr (sizeof(W) == 4) {
        for (int64_t t = (int64_t)tile - 1;;) {
            const W w = ps_sort_read(status + (size_t)t * PS_SORT_RADIX + d);
            const W w1 = t > 0 ? ps_sort_read(status + (size_t)(t - 1) * PS_SORT_RADIX + d) : 0u;
            PS_SORT_COUNT_READ(w);
            if (ps_sort_is(w, tag, PS_TILE_INCLUSIVE)) {
                prefix += ps_sort_count(w);
                break;
            }
            if (!ps_sort_is(w, tag, PS_TILE_AGGREGATE)) continue; /* not written yet: read it again */
            prefix += ps_sort_count(w);
            t--;
            PS_SORT_COUNT_READ(w1);
            if (ps_sort_is(w1, tag, PS_TILE_INCLUSIVE)) {
                prefix += ps_sort_count(w1);
                break;
            }
            if (ps_sort_is(w1, tag, PS_TILE_AGGREGATE)) {
                prefix += ps_sort_count(w1);
                t--;
            }
        }
    } else {
        for (int64_t t = (int64_t)tile - 1;;) {
            const W w = ps_sort_read(status + (size_t)t * PS_SORT_RADIX + d);
            PS_SORT_COUNT_READ(w);
            if (ps_sort_is(w, tag, PS_TILE_INCLUSIVE)) {
                prefix += ps_sort_count(w);
                break;
            }
            if (ps_sort_is(w, tag, PS_TILE_AGGREGATE)) { /* else not written yet: read it again */
                prefix += ps_sort_count(w);
                t--;
            }
        }
    }
#undef PS_SORT_COUNT_READ
#if PS_SORT_LOOKBACK_STATS
    ps_sort_lookback_count(reads, passed, unwritten, (uint32_t)(clock64() - t0));
#endif
    if (tile + 1 != tiles) /* nobody reads the last tile's words */
        ps_sort_publish(status + (size_t)tile * PS_SORT_RADIX + d, tag, PS_TILE_INCLUSIVE, prefix + count);
    return prefix;
}

/* Thread d publishes the tile's count of digit d before the tile ranks (tile 0 publishes it as inclusive), so
 * that later tiles' look-backs pass this tile while it still ranks, as in CUB's Onesweep ("early counts"). */
template <class W>
__device__ __forceinline__ void ps_sort_publish_count(W *status, uint32_t tag, uint32_t tiles, uint32_t tile, uint32_t count) {
    if (tile + 1 == tiles) return;
    ps_sort_publish(status + (size_t)tile * PS_SORT_RADIX + threadIdx.x, tag,
                    tile == 0 ? PS_TILE_INCLUSIVE : PS_TILE_AGGREGATE, count);
}

/* The pass policy per case. Measured on an H100 (tools/tune/variants.sh tools/tune/tune_sort.cu,
 * docs/bench/h100-sort-rank.csv, CUB's time over pscan's at 2^24 / 2^28; the pass before this policy, 256 threads x
 * 16 keys at 3 blocks/SM with ps_sort_block_rank, in brackets):
 *   keys alone, u32:          256 threads x 20 keys, 4 blocks/SM (H200, 2026-11-26, with ps_sort_peers:
 *                             0.987 / 0.897; 384 x 20 at 3 blocks 0.971 / 0.883; at 2 blocks, 80 registers,
 *                             0.914 / 0.816). On the H100 before ps_sort_peers, 384 x 20 at 2: 0.808 / 0.716
 *                             (0.570 / 0.485)
 *   keys alone, u64:          384 threads x 15 keys, 2 blocks/SM: 0.998 / 0.955 (0.742 / 0.692)
 *   u32 keys, u32 payloads:   384 threads x 16 keys, 2 blocks/SM (H200, 2026-11-27, docs/bench/h200-sort-pairs.csv:
 *                             0.930 / 0.884 against 256 x 16 at 3 blocks' 0.900 / 0.839, which loses at 2^20: 1.19x
 *                             -> 1.14x; 384 x 18 0.729, 384 x 20 0.818, 448 x 14 0.735, 320 x 16 0.848, 512 x 12
 *                             0.797, 256 x 20 at 3 0.778, 256 x 16 at 4 0.797 at 2^28). On the H100 before
 *                             ps_sort_peers, 256 x 16 at 3: 0.867 / 0.738 (0.727 / 0.692)
 *                             From 2^PS_SORT_LARGE_LOG2 (24) keys on, 4-byte keys with 4-byte payloads take the
 *                             LARGE policy, 384 x 24 (H100, 2026-11-27, pscan bench: 0.879x -> 0.921x CUB at
 *                             2^28, 0.890x -> 0.913x at 2^26, 0.930x -> 0.937x at 2^25; below it lost, 0.974x ->
 *                             0.943x at 2^24, 1.335x -> 0.858x at 2^14: fewer tiles than the GPU has slots;
 *                             384 x 20 at 2^28 0.913 in tune_sort against 24's 0.942 and 16's 0.890). From 2^24
 *                             since the thirty-ninth session: on the H200 (tune_sort, median of 25, two rounds,
 *                             against CUB's int call, docs/bench/h200-sort-pairs-tiles.csv) 2^24 keys 0.954 /
 *                             0.957 -> 1.051 / 1.049, 1.5 x 2^24 0.919 / 0.920 -> 1.022 / 1.021; 2^23 and 2^25
 *                             unchanged (1.02); 384 x 20 below 2^25: 2^23 1.077 / 1.072, 2^24 1.020, 2^25 0.978
 *   u64 keys, u32 payloads:   256 threads x 16 keys, 2 blocks/SM: 0.909 / 0.876 (0.812 / 0.826)
 *                             From 2^PS_SORT_LARGE_LOG2_WIDE (22) keys on, the LARGE policy: 384 x 16 at 2 blocks
 *                             (H100, 2026-11-27, docs/bench/h100-sort-tiles.csv, tune_sort, median of 15, at 2^22
 *                             / 2^24 / 2^26 / 2^28: 1.077 -> 1.121 / 0.941 -> 0.986 / 0.877 -> 0.938 / 0.896 ->
 *                             0.957; at 2^20 it lost, 1.286 -> 1.183). Its 48 KiB of staged keys take dynamic
 *                             shared memory (ps_sort_staging)
 * (with payloads, 384 threads leave 80 registers and spill). Keys of 1 and 2 bytes and payloads of 1, 2 and 8
 * bytes, not measured, follow the case of their width: an 8-byte key or payload is "wide". */
template <class U, class V, bool LARGE> struct ps_sort_pass_policy {
    static constexpr bool KEYS_ONLY = std::is_same<V, ps_sort_no_value>::value;
    static constexpr bool WIDE = sizeof(U) > 4 || (!KEYS_ONLY && sizeof(V) > 4);
#ifdef PS_SORT_PASS_THREADS
    static constexpr int THREADS = PS_SORT_PASS_THREADS;
#else
    /* 384: u64 keys alone, narrow pairs, and wide pairs' LARGE tiles */
    static constexpr int THREADS = WIDE != KEYS_ONLY && !(WIDE && LARGE) ? 256 : 384;
#endif
#if defined(PS_SORT_PASS_ITEMS) && defined(PS_SORT_PASS_ITEMS8)
    static constexpr int ITEMS = WIDE ? PS_SORT_PASS_ITEMS8 : PS_SORT_PASS_ITEMS;
#elif defined(PS_SORT_PASS_ITEMS) /* narrow cases only: the wide ones keep their own */
    static constexpr int ITEMS = WIDE ? (KEYS_ONLY ? 15 : 16) : PS_SORT_PASS_ITEMS;
#elif defined(PS_SORT_PASS_ITEMS8)
    static constexpr int ITEMS = WIDE ? PS_SORT_PASS_ITEMS8 : KEYS_ONLY ? 20 : LARGE ? 24 : 16;
#else
    static constexpr int ITEMS = KEYS_ONLY ? (WIDE ? 15 : 20) : WIDE ? 16 : LARGE ? 24 : 16;
#endif
#ifdef PS_SORT_MIN_BLOCKS
    static constexpr int MIN_BLOCKS = PS_SORT_MIN_BLOCKS;
#else
    static constexpr int MIN_BLOCKS = KEYS_ONLY && !WIDE ? 4 : 2;
#endif
    /* Full tiles without a check of each slot against n (work<true> in the pass kernel; the partial last tile
     * keeps the checks): on for u32 pairs alone. H200, 2026-11-27 (docs/bench/h200-sort-full.csv, tune_sort,
     * median of 15), pscan over CUB at 2^24 / 2^28: u32 pairs 0.931 -> 0.965 / 0.884 -> 0.907; u32 keys 0.988
     * -> 0.978 / 0.897 -> 0.881 (the second body spills 44 bytes a thread), u64 keys 1.067 -> 1.007 / 1.025 ->
     * 0.966, u64 pairs 0.888 -> 0.870 / 0.840 -> 0.819. PS_SORT_FULL 0 or 1 sets it for every case. */
    /* One body of the pass per key kind (integer, float) with the kind a template argument (ps_sort_map), for the
     * keys-only cases of 4- and 8-byte keys; the rest test the kind at run time and rely on NVVM's unswitching.
     * H200, 2026-12-02 (docs/bench/h200-sort-kind.csv, tune_sort, median of 15, two rounds, time before -> after,
     * signed keys folded into flip in both): u32 keys 2^24 / 2^28 359 -> 354.5 / 4951 -> 4920 us, u64 keys
     * equal (1005, 14900), and with an unused params field (the forty-fifth session's 1.70x) both unchanged;
     * u32 pairs 523 -> 515 / 7152 -> 7162, u64 pairs-u32 1318 -> 1307 / 19956 -> 19684 (these keep the run-time
     * kind: with bodies by kind their registers rose, 95 -> 124 for u64 pairs, 1.35x slower; with the field
     * u64 pairs still lose 1.40x, which scripts/check_sort_codegen.py catches). 1- and 2-byte keys: their kernels
     * spilled 12 bytes with bodies by kind. */
#ifdef PS_SORT_KIND_BODIES
    static constexpr bool KIND_BODIES = PS_SORT_KIND_BODIES != 0;
#else
    static constexpr bool KIND_BODIES = KEYS_ONLY && sizeof(U) >= 4;
#endif
#ifdef PS_SORT_FULL
    static constexpr bool FULL = PS_SORT_FULL != 0;
#else
    static constexpr bool FULL = !KEYS_ONLY && !WIDE;
#endif
    static constexpr uint32_t TILE = (uint32_t)THREADS * ITEMS;
    /* 32-bit status words up to 2^30 keys (ps_sort_publish), with the look-back reading two words a round trip.
     * H100, 2026-11-27 (docs/bench/h100-sort-walk.csv, tune_sort, median of 15, pscan over CUB at 2^20 / 2^24 /
     * 2^28, 64-bit words and one word a round trip before): u32 keys 1.292 -> 1.345 / 1.064 -> 1.095 / 0.940 ->
     * 0.962, u32 pairs 1.213 -> 1.252 / 1.031 -> 1.035 / 0.938 -> 0.953; u64 keys 1.266 -> 1.304 / 1.080 ->
     * 1.088 / 1.040 -> 1.015 and u64 keys with u32 payloads 0.957 -> 0.932 at 2^28 lost at large n, so 8-byte
     * keys keep 64-bit words. Either change alone: 32-bit words within 1% (four earlier runs: pairs +1.5-2%),
     * two words a round trip of 64 bits 1-3% slower. */
#if PS_SORT_STATUS32 >= 0
    static constexpr bool STATUS32 = PS_SORT_STATUS32 != 0;
#else
    static constexpr bool STATUS32 = sizeof(U) <= 4;
#endif
    /* The rank's peers by shared atomicOr (ps_sort_warp_rank), thirty-ninth session: every row for 4- and 8-byte keys
     * but in the u32 pairs' 384 x 24 tiles (keys of 1 and 2 bytes, not measured, keep the ballots: their kernels spill
     * more with it). H200,
     * thirty-ninth session (tune_sort, median of 25, two rounds each, us, ballots -> atomicOr as shipped, call c56;
     * docs/bench/h200-sort-peers-or.csv): u32 keys 2^24 380.0 -> 369.4, 2^28 5426.4 -> 5308.5 (0.999x -> 1.021x
     * CUB); u64 keys 1031.0 -> 1017.2, 15192.4 -> 15060.6; u64 keys with u32 payloads (384 x 16 from 2^22) 1327.5 ->
     * 1301.2, 19706.0 -> 19663.0; at 2^20 (c54) u32 keys 61.0 -> 60.3, u64 keys 128.4 -> 125.9, u32 pairs (384 x 16
     * below 2^24) 76.6 -> 73.7, u64 keys with u32 payloads (256 x 16) 143.4 -> 141.7. The u32 pairs' 384 x 24 kernel
     * spills 76 bytes with it instead of 60 (c52: 2^24 / 2^28 523.3 -> 541.2 / 7333.6 -> 7519.4). Where the leader
     * clears the word: a first form cleared it after the shuffle with one set of words (racecheck warned: the
     * clear was ordered after the peers' reads by the shuffle, not by a barrier); a second cleared it between the
     * read and the leader's atomic, behind a __syncwarp (c54: u64 keys with u32 payloads lost 4-6 % in 384 x 16);
     * the shipped one clears it after the shuffle behind a __syncwarp, on two sets of words. 16 or 24 keys a thread
     * for u32 keys with it lost (5691.6 / 5461.5 us at 2^28).
     * Rows mixed (OR_ROWS4 of every four by the atomicOr, the others by ballots), fortieth session: ncu over one u32
     * keys pass at 2^26 (H200) found the L1's LSU pipe 84.6 % busy, 72 % of it shared-memory wavefronts (the
     * atomicOr, its read and clear, the counts' atomics and the staging all hit a random digit's bank, about 3.5
     * wavefronts a row each) beside 61 % of issue slots: the shared pipe, not issue, was the limit, and ballots
     * cost ALU slots instead. One row of four by ballots: LSU 84.6 -> 80.3 %, issue 61.2 -> 64.5 %, the pass 396.8 ->
     * 385.3 us. tune_sort (call c58, median of 25, two rounds, us, OR_ROWS4 4 / 3 / 2 / 1 where the case had 4;
     * docs/bench/h200-sort-or-rows.csv): u32 keys 2^24 368.8 / 362.9 / 364.2 / 371.9, 2^28 5307.7 / 5160.3 / 5165.2 /
     * 5315.1 (1.020x -> 1.048x CUB); u64 keys 2^20 123.3 / 124.1 / 125.6 / 125.3, 2^28 15056.5 / 15127.4 / 14945.3 /
     * 14912.6 (kept at 4: the small calls lose what 2^28 gains); u64 keys with u32 payloads 2^20 (256 x 16) 141.8 /
     * 149.0 / 150.0 / 141.2 (kept at 4), from 2^22 (384 x 16) 2^28 19567.9 / 19222.5 / 20189.2 / 19526.8; the u32
     * pairs' 384 x 24 tiles (all ballots before: 0 / 3 / 2 / 1) 2^24 524.5 / 517.0 / 522.4 / 520.9, 2^28 7334.9 /
     * 7280.2 / 7341.1 / 7305.9 (3 rows spill 48 bytes, ballots alone 60); their 384 x 16 tiles 2^20 73.2 / 73.4 /
     * 74.6 / 75.0. The rows' other peers by __match_any_sync instead of ballots lost everywhere (c59: u32 keys 2^28
     * 5163.4 -> 5752.6 us with one row of four, 10675.2 with every row; docs/bench/h200-sort-peers-match.csv). `pscan
     * bench` on the policy (c59, docs/bench/h200-sort.csv): u32 keys 2^28 1.021x -> 1.052x CUB (52.0 Gkeys/s), 2^30
     * 1.057x, every case and n from 2^10 at least 1.012x. */
    /* The rank walk in half-warps (ps_sort_half_rank), forty-first session: a word per half-warp and digit holds the
     * place and a row's peers, so a row's walk is one atomicAdd, a read and the leader's clear where the warp's is an
     * atomicOr, a read, a clear and the leader's atomic. ncu over one u32 keys pass at 2^26 (H200, call c62): shared
     * wavefronts 51.0 M -> 50.2 M (the counts' sweep and their scan now cover twice the rankers), instructions 194.5 M
     * -> 179.3 M (no shuffle, no leader's atomic), the pass 384.2 -> 376.9 us. tune_sort (calls c61, c62, median of
     * 25, four runs each averaged, us; docs/bench/h200-sort-half.csv), warps with the policy's OR rows -> half-warps
     * with every row by the atomic: u32 keys 2^20 59.2 -> 57.5, 2^24 363.3 -> 357.6, 2^28 5162.2 -> 5070.9; u64 keys
     * 2^20 123.9 -> 121.8, 2^24 1019.8 -> 1001.1, 2^28 15073.2 -> 15036.3. Payloads keep the warps: u32 pairs within
     * 0.5 % either way, u64 keys with u32 payloads 1-4 % slower (2^28 19387.8 -> 20145.0). Half-warps with 3 or 2 rows of
     * four by the atomic and the rest by ballots (as the warps mix them) were slower than with every row by the atomic
     * (u32 keys 2^28 5119.8 / 5250.0; the ballot rows were removed after), and so were 24 and 16 keys a thread
     * (5071.7 / 5482.3, one run each). */
#if PS_SORT_HALF >= 0
    static constexpr bool HALF = PS_SORT_HALF != 0;
#else
    static constexpr bool HALF = KEYS_ONLY && sizeof(U) >= 4;
#endif
#if PS_SORT_OR_ROWS4 >= 0
    static constexpr int OR_ROWS4 = PS_SORT_OR_ROWS4;
#else
    static constexpr int OR_ROWS4 = sizeof(U) < 4 ? 0 : sizeof(U) == 4 || LARGE ? 3 : 4; /* warps only */
#endif
    static constexpr bool PEERS_OR = OR_ROWS4 > 0 && !HALF; /* the warps' shared words for the atomicOr */
    /* n >= 2^LARGE_LOG2 keys launch the case's LARGE policy (ps_sort_large); 0: the case has none. Measured for
     * 4- and 8-byte keys with 4-byte payloads only. */
    static constexpr int LARGE_LOG2 = KEYS_ONLY || sizeof(V) != 4 ? 0
                                      : sizeof(U) == 4           ? PS_SORT_LARGE_LOG2
                                      : sizeof(U) == 8           ? PS_SORT_LARGE_LOG2_WIDE
                                                                 : 0;
    static_assert(ITEMS >= 1 && THREADS % 32 == 0 && THREADS >= PS_SORT_RADIX && THREADS <= 1024,
                  "a digit pass has at least one thread per digit");
    static_assert(!HALF || TILE < 65536u, "a half-warp's places fit the high 16 bits of its words");
};

/* Whether a sort of n keys takes the case's LARGE pass policy (the launch and tune_sort's stats ask alike). */
template <class U, class V> constexpr bool ps_sort_large(uint64_t n) {
    return ps_sort_pass_policy<U, V>::LARGE_LOG2 != 0 && n >= (1ull << ps_sort_pass_policy<U, V>::LARGE_LOG2);
}

/* The smallest pass tile of any case (keys of 1-8 bytes, payloads of 0-8): status words are sized for it. */
static constexpr uint32_t ps_sort_min2(uint32_t a, uint32_t b) { return a < b ? a : b; }
#define PS_SORT_MIN_PASS_TILE                                                                                  \
    ps_sort_min2(ps_sort_min2(ps_sort_pass_policy<uint32_t, ps_sort_no_value>::TILE,                           \
                              ps_sort_pass_policy<uint64_t, ps_sort_no_value>::TILE),                          \
                 ps_sort_min2(ps_sort_pass_policy<uint32_t, uint32_t>::TILE, ps_sort_pass_policy<uint64_t, uint32_t>::TILE))

/* The rank's shared words, done before the scatter: next, and with PEERS_OR a word per warp and digit for the
 * peers' bits after it. */
template <int THREADS, bool PEERS_OR, bool HALF> struct ps_sort_rank_words {
    typename ps_sort_wrank<THREADS>::next next, bins[2]; /* bins: rows alternate between the two */
};
template <int THREADS, bool HALF> struct ps_sort_rank_words<THREADS, false, HALF> {
    typename ps_sort_wrank<THREADS, HALF>::next next;
};
template <class U, class V, int THREADS, int ITEMS, bool PEERS_OR, bool HALF> union ps_sort_stage {
    U keys[THREADS * ITEMS];
    V values[THREADS * ITEMS];
    ps_sort_rank_words<THREADS, PEERS_OR, HALF> rank;
};

extern __shared__ __align__(PS_DYNAMIC_SMEM_ALIGN) unsigned char ps_sort_dynamic_smem[];


/* Where a pass keeps its staging buffer: static shared memory where the tile fits 48 KiB beside the rank's and
 * the counts' (that kernel is the same as before dynamic memory was an option), else dynamic shared memory of
 * BYTES, which ps_sort_passes opts into per launch (u64 keys with 4-byte payloads' LARGE tiles: 48 KiB of keys). */
template <class U, class V, bool LARGE> struct ps_sort_staging {
    typedef ps_sort_pass_policy<U, V, LARGE> Policy;
    typedef ps_sort_stage<U, V, Policy::THREADS, Policy::ITEMS, Policy::PEERS_OR, Policy::HALF> Stage;
    static constexpr bool DYNAMIC = PS_SORT_DYNAMIC_SMEM || sizeof(Stage) + sizeof(typename ps_sort_wrank<Policy::THREADS>::smem) +
                                                                    (1 + PS_SORT_FUSED) * 1024 > 48 * 1024;
    static constexpr size_t BYTES = DYNAMIC ? sizeof(Stage) : 0;
    __device__ static Stage &get() {
        if constexpr (DYNAMIC) {
            return *reinterpret_cast<Stage *>(ps_sort_dynamic_smem);
        } else {
            __shared__ Stage stage;
            return stage;
        }
    }
};

/* One digit pass over one tile (the header's phases), shaped by the case's policy. */
template <class U, class V, bool LARGE, class W>
__global__ void __launch_bounds__(ps_sort_pass_policy<U, V, LARGE>::THREADS, ps_sort_pass_policy<U, V, LARGE>::MIN_BLOCKS)
    ps_sort_pass_kernel(const ps_sort_pass_params<U> p) {
    typedef ps_sort_pass_policy<U, V, LARGE> Policy;
    W *const status = (W *)p.status;
    constexpr bool HAS_VALUES = !Policy::KEYS_ONLY;
    constexpr int THREADS = Policy::THREADS, ITEMS = Policy::ITEMS;
    constexpr uint32_t TILE = Policy::TILE;
    typedef ps_sort_wrank<THREADS> Rank;
    typename ps_sort_staging<U, V, LARGE>::Stage &stage = ps_sort_staging<U, V, LARGE>::get();
    __shared__ typename Rank::smem rs;
    __shared__ uint32_t dest_base[PS_SORT_RADIX];
    if (PS_SORT_PDL) { /* the kernel in front (upsweep or pass) has ended; the next pass may now be scheduled */
        ps_pdl_wait();
        ps_pdl_trigger();
    }
    const uint32_t tile = blockIdx.x, base = tile * TILE;
    const uint32_t valid_keys = p.n - base < TILE ? p.n - base : TILE;
    if constexpr (PS_SORT_PREFETCH > 0 && (PS_SORT_PREFETCH_CASES > 1 || sizeof(U) == 4)) {
        if (p.tiles >= PS_CHAIN_PREFETCH_FROM && (uint64_t)tile + PS_SORT_PREFETCH < p.tiles) {
            const uint64_t b = (uint64_t)(tile + PS_SORT_PREFETCH) * TILE, e = p.n - b < TILE ? p.n : b + TILE;
            ps_block_prefetch_l2<THREADS>(p.keys_in + b, p.keys_in + e);
            if constexpr (HAS_VALUES && PS_SORT_PREFETCH_CASES > 2)
                ps_block_prefetch_l2<THREADS>((const V *)p.values_in + b, (const V *)p.values_in + e);
        }
    }
    const bool digit_thread = Rank::digit_thread();
    /* this pass's global count of digit d (threads d < 256), loaded with the keys */
    const uint32_t global_count = digit_thread ? p.counts[threadIdx.x] : 0u;
#if PS_SORT_FUSED
    __shared__ uint32_t next_hist[PS_SORT_RADIX]; /* the next pass's digits of this tile */
#endif
    /* The tile's work, once for full tiles (FULL: every slot holds a key, so no slot is checked against n) and
     * once for the partial last tile; without Policy::FULL every tile takes the checked path. And once per key
     * kind (real: floats), so that no key's digit tests the kind (ps_sort_map_as). */
    auto work = [&](auto full, auto kind) {
        constexpr bool FULL = decltype(full)::value;
        const uint32_t valid = FULL ? TILE : valid_keys;
        const auto digit = p.digit.template as<decltype(kind)::value>();

        /* ---- load: warp-striped rows; slots past n take the last digit, so they rank last ---- */
        U key[ITEMS];
        uint32_t rank[ITEMS];
        uint32_t digits[PS_SORT_DIGIT_WORDS(ITEMS)];
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const uint32_t slot = ps_sort_pass_slot<ITEMS, Policy::HALF>(i);
            key[i] = (FULL || slot < valid) ? p.keys_in[base + slot] : (U)0;
            const uint32_t dg = (FULL || slot < valid) ? digit(key[i]) : digit.mask;
            digits[i / 4] = i % 4 ? digits[i / 4] | dg << (8 * (i % 4)) : dg;
        }

        const unsigned d = threadIdx.x; /* the digit of threads d < 256 */
        if (sizeof(W) == 4 && digit_thread && p.clear) ((W *)p.clear)[(size_t)tile * PS_SORT_RADIX + d] = 0;
#if PS_SORT_FUSED
        if (digit_thread) next_hist[d] = 0;
#endif
        /* ---- counts per warp, then places; the tile's count is published as soon as it is known (early counts:
         * later tiles' look-backs pass this one while it ranks); the padding (last digit, partial last tile only)
         * is not part of it ---- */
        const bool one = ps_sort_warp_counts<THREADS, ITEMS, Policy::HALF>(digits, stage.rank.next);
        __syncthreads();
#if PS_SORT_FUSED
#pragma unroll
        for (int i = 0; i < ITEMS; i++)
            if (p.next_counts && (FULL || ps_sort_pass_slot<ITEMS, Policy::HALF>(i) < valid)) atomicAdd(&next_hist[p.next_digit(key[i])], 1u);
#endif
        const uint32_t total = ps_sort_warp_total<THREADS, Policy::HALF>(stage.rank.next);
        const uint32_t count = total - (d == digit.mask ? TILE - valid : 0u);
        if (digit_thread) ps_sort_publish_count(status, p.tag, p.tiles, tile, count);
        const uint32_t digit_start = ps_sort_warp_places<THREADS, Policy::HALF>(rs, stage.rank.next, total, global_count);
#if PS_SORT_FUSED
        if (digit_thread && p.next_counts && next_hist[d]) atomicAdd(&p.next_counts[d], next_hist[d]);
#endif

        /* ---- rank: final places in one walk ---- */
        if constexpr (Policy::HALF) ps_sort_half_rank<THREADS, ITEMS>(digits, rank, stage.rank.next, one);
        else if constexpr (Policy::PEERS_OR) ps_sort_warp_rank<THREADS, ITEMS, Policy::OR_ROWS4>(digits, rank, stage.rank.next, stage.rank.bins, one);
        else ps_sort_warp_rank<THREADS, ITEMS, 0>(digits, rank, stage.rank.next, nullptr, one);

        /* ---- look-back: the keys of digit d in earlier tiles ---- */
        const uint32_t prefix =
            digit_thread && !PS_SORT_CONTROL ? ps_sort_look_back(status, p.tag, p.tiles, tile, count) : 0u;
        if (digit_thread) dest_base[d] = digit_start + prefix - rs.start[d];
        __syncthreads(); /* the rank is done with the staging buffer; dest_base is written */

        /* ---- scatter: keys through shared memory in tile order, then out by digit runs ---- */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) stage.keys[rank[i]] = key[i];
        __syncthreads();
        uint32_t out_digits[PS_SORT_DIGIT_WORDS(ITEMS)]; /* the payloads' destinations, packed: fewer registers */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            const uint32_t j = i * THREADS + threadIdx.x;
            uint32_t dg = 0;
            if (FULL || j < valid) {
                const U k = stage.keys[j];
                dg = digit(k);
                p.keys_out[dest_base[dg] + j] = k;
            }
            out_digits[i / 4] = i % 4 ? out_digits[i / 4] | dg << (8 * (i % 4)) : dg;
        }
        if constexpr (HAS_VALUES) {
            const V *values_in = (const V *)p.values_in;
            V *values_out = (V *)p.values_out;
            V v[ITEMS];
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                const uint32_t slot = ps_sort_pass_slot<ITEMS, Policy::HALF>(i);
                if (FULL || slot < valid) v[i] = values_in[base + slot];
            }
            __syncthreads(); /* the keys are out of the staging buffer */
#pragma unroll
            for (int i = 0; i < ITEMS; i++)
                if (FULL || ps_sort_pass_slot<ITEMS, Policy::HALF>(i) < valid) stage.values[rank[i]] = v[i];
            __syncthreads();
#pragma unroll
            for (int i = 0; i < ITEMS; i++) {
                const uint32_t j = i * THREADS + threadIdx.x;
                if (FULL || j < valid)
                    values_out[dest_base[ps_sort_digit_at<ITEMS>(out_digits, i)] + j] = stage.values[j];
            }
        }
    };
    auto by_kind = [&](auto full) {
        if constexpr (Policy::KIND_BODIES) {
            if (p.digit.kind == PS_SORT_KEY_FLOAT) work(full, std::integral_constant<int, 1>());
            else work(full, std::integral_constant<int, 0>());
        } else {
            work(full, std::integral_constant<int, -1>());
        }
    };
    if (Policy::FULL && valid_keys == TILE)
        by_kind(std::true_type());
    else
        by_kind(std::false_type());
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

/* One chunk's keys (ITEMS a thread, strided by the block's THREADS), loaded and mapped. CHECKED only for the
 * grid's one partial chunk: a full chunk's loads and counts carry no bounds test. */
template <class U, bool CHECKED, unsigned THREADS, int ITEMS>
__device__ __forceinline__ void ps_sort_chunk_load(const U *keys, uint64_t c, uint32_t n, const ps_sort_keys_desc<U> &k,
                                                   U (&t)[ITEMS]) {
#pragma unroll
    for (int j = 0; j < ITEMS; j++) {
        const uint64_t i = c + (uint64_t)j * THREADS + threadIdx.x;
        t[j] = !CHECKED || i < n ? keys[i] : (U)0;
    }
#pragma unroll
    for (int j = 0; j < ITEMS; j++) t[j] = ps_sort_map<U>(t[j], k.kind, k.flip);
}

/* The digits of passes first .. passes - 1 of a loaded chunk, one shared atomic a key and pass. The pass loop runs
 * outside the key loop and is unrolled to the type's most passes, so each pass's shift and mask sit in registers
 * and the inner loop is a shift, a mask and a shared atomic a key (CUB's histogram agent orders it so too). */
template <class U, bool CHECKED, unsigned THREADS, int ITEMS>
__device__ __forceinline__ void ps_sort_chunk_count(const U (&t)[ITEMS], uint64_t c, uint32_t n,
                                                    const ps_sort_keys_desc<U> &k, unsigned first, unsigned passes,
                                                    uint32_t (*h)[PS_SORT_RADIX]) {
    constexpr unsigned MOST = sizeof(U); /* 8-bit digits */
#pragma unroll
    for (unsigned q = 0; q < MOST; q++) {
        if (q < first) continue;
        if (q >= passes) break;
        const ps_sort_digit<U> dg = ps_sort_pass_digit(k, q);
#pragma unroll
        for (int j = 0; j < ITEMS; j++)
            if (!CHECKED || c + (uint64_t)j * THREADS + threadIdx.x < n)
                atomicAdd(&h[q][(uint32_t)(t[j] >> dg.shift) & dg.mask], 1u);
    }
}

/* One chunk counted into every pass's shared histogram. */
template <class U, bool CHECKED, unsigned THREADS = PS_SORT_THREADS, int ITEMS = PS_SORT_UP_ITEMS>
__device__ __forceinline__ void ps_sort_upsweep_chunk(const U *keys, uint64_t c, uint32_t n, const ps_sort_keys_desc<U> &k,
                                                      unsigned passes, uint32_t (*h)[PS_SORT_RADIX]) {
    U t[ITEMS];
    ps_sort_chunk_load<U, CHECKED, THREADS, ITEMS>(keys, c, n, k, t);
    ps_sort_chunk_count<U, CHECKED, THREADS, ITEMS>(t, c, n, k, 0, passes, h);
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
        if (c + chunk <= n)
            ps_sort_upsweep_chunk<U, false>(keys, c, n, k, passes, h);
        else
            ps_sort_upsweep_chunk<U, true>(keys, c, n, k, passes, h);
    }
    __syncthreads();
    for (unsigned q = 0; q < passes; q++) {
        const uint32_t c = h[q][threadIdx.x];
        if (c) atomicAdd(&counts[q * PS_SORT_RADIX + threadIdx.x], c);
    }
}

/* ---- upsweep by digit pairs: one shared atomic counts two passes' digits (from 128 MiB of keys) --------- */

/* The upsweep above makes one shared atomic per key and pass, and from 2^24 keys it runs at the shared atomics'
 * rate (at 2^28 u32 keys about twice a read of the keys). Here passes 2p and 2p + 1 (p < PS_SORT_UP_JOINT) are
 * counted together: the 16 bits of both digits select one of 65536 joint bins, 8-bit counters four to a word
 * (64 KiB a pair in dynamic shared memory, one 1024-thread block per SM), so one atomic counts a key for two
 * passes. Each pass's 256 counts are the table's column (pass 2p) and row (pass 2p + 1) sums, taken once per
 * block at the end. The passes past the pairs count as above, one counter per digit. u16 keys take one pair,
 * u32 two, u64 three and two passes alone (5 atomics a key instead of 8).
 * Wraps: adding 1 to field f of a word wraps the field iff its old value is 0xFF, and then carries 1 into field
 * f + 1, which wraps too iff its old value is 0xFF, and so on (out of the word past field 3). The atomics on a
 * word take effect one at a time, so the thread whose atomic returned old knows exactly which fields its add
 * wrapped and which took a carry: a wrapped field lost 256 (add 256 to its bin's count), a field that took a
 * carry gained a spurious 1 (take 1 from it). The corrections go straight to the pair's two rows of 32-bit
 * counts (a bin's correction counts for both its digits), so field + corrections = the bin's true count in any
 * interleaving (the rows are added modulo 2^32; nothing reads them before the end). Random keys wrap no field
 * below about 2^24 keys a block; all-equal keys wrap one every 256 keys.
 * Skew: a block whose bin wraps before its 2^22nd key (256 keys in one bin: all-equal keys, few distinct ones, keys
 * whose top 16 bits are all zero) counts its next chunks plainly, as the kernel above does, since atomics that
 * return their value take turns on a hot word: without that fallback all-equal u32 keys at 2^28 took 2261 us in
 * the upsweep against the plain 320 (keys below 1024: 2169 against 327).
 * Measured (H200, tools/tune/tune_sort.cu, median of 10-15, two runs each, forty-second session, docs/bench/
 * h200-sort-joint*.csv): at 2^28 u32 keys the upsweep 493 -> 377 us and the sort 1.068x -> 1.093x CUB; u64 keys
 * at 2^27 479 -> 365 us with three pairs (two: 760 against 945 us at 2^28); skewed keys within 22 us of the plain
 * upsweep (all-equal, 16 values, below 1024). 12 keys a thread: 16 spilled 56 bytes with the fallback (452 us), 8
 * kept too few loads in flight (398). Below 2^24 keys the block's fixed work (zeroing and summing 64-192 KiB)
 * costs more than the atomics save (2^20 u32 keys: 11 -> 16 us); at 64 MiB of keys it ties (2^24 u32 keys; u32
 * pairs 1% slower), at 128 MiB it gains (2^24 u64 keys: 69 -> 64 us): PS_SORT_UP_JOINT_BYTES of keys and more. */
#ifndef PS_SORT_UP_JOINT
#define PS_SORT_UP_JOINT 3
#endif
#ifndef PS_SORT_UP_JOINT_BYTES /* the fewest bytes of keys counted by pairs */
#define PS_SORT_UP_JOINT_BYTES ((uint64_t)128 << 20)
#endif
#define PS_SORT_JOINT_THREADS 1024
#ifndef PS_SORT_JOINT_ITEMS /* keys a thread for 1- to 4-byte keys (8-byte: 8) */
#define PS_SORT_JOINT_ITEMS 12
#endif
#define PS_SORT_JOINT_WORDS 16384 /* 65536 8-bit bins */

template <class U> struct ps_sort_joint {
    static constexpr unsigned MOST_PAIRS = PS_SORT_UP_JOINT < sizeof(U) / 2 ? PS_SORT_UP_JOINT : sizeof(U) / 2;
    static constexpr int ITEMS = sizeof(U) > 4 ? 8 : PS_SORT_JOINT_ITEMS; /* keys a thread in flight: 32-64 KiB an SM */
    static __host__ __device__ unsigned pairs(unsigned passes) {
        return passes / 2 > MOST_PAIRS ? MOST_PAIRS : passes / 2; /* (not <: MOST_PAIRS is 0 for u8 keys) */
    }
};

/* The corrections of the add of k (1 <= k <= 255) to bin b (field b & 3 of its word) whose atomic returned old;
 * nothing unless the add wrapped its field (a field takes at most one carry: old field + k < 512). */
static __device__ __noinline__ void ps_sort_joint_fix(uint32_t b, uint32_t k, uint32_t old, uint32_t *lo_row,
                                                      uint32_t *hi_row) {
    const uint32_t f0 = b & 3u, delta = k << (8 * f0), now = old + delta;
    const uint32_t carries = old ^ now ^ delta; /* bit i: a carry came into bit i */
    for (uint32_t f = f0; f < 4; f++) {
        const bool in = f > f0 && ((carries >> (8 * f)) & 1u);
        const bool out = f < 3 ? ((carries >> (8 * f + 8)) & 1u) != 0 : now < old;
        const uint32_t c = (out ? 256u : 0u) - (in ? 1u : 0u);
        if (c) {
            const uint32_t bin = (b & ~3u) | f;
            atomicAdd(&lo_row[bin & 0xFFu], c);
            atomicAdd(&hi_row[bin >> 8], c);
        }
    }
}

template <class U, bool CHECKED>
__device__ __forceinline__ void ps_sort_joint_chunk(const U *keys, uint64_t c, uint32_t n, const ps_sort_keys_desc<U> &k,
                                                    unsigned pairs, uint32_t *joint, uint32_t (*rows)[PS_SORT_RADIX],
                                                    uint32_t *plain) {
    constexpr int ITEMS = ps_sort_joint<U>::ITEMS;
    U t[ITEMS];
    ps_sort_chunk_load<U, CHECKED, PS_SORT_JOINT_THREADS, ITEMS>(keys, c, n, k, t);
#pragma unroll
    for (unsigned p = 0; p != ps_sort_joint<U>::MOST_PAIRS; p++) {
        if (p >= pairs) break;
        const unsigned shift = k.begin_bit + 16 * p;
        const unsigned bits = k.end_bit - shift < 16 ? k.end_bit - shift : 16;
        const uint32_t mask = (1u << bits) - 1u;
        uint32_t *table = joint + p * PS_SORT_JOINT_WORDS;
        uint32_t old[ITEMS];
        bool wrapped = false;
        /* every atomic first, then one test: no atomic waits for the value the one before returned */
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const uint32_t b = (uint32_t)(t[j] >> shift) & mask;
            old[j] = 0;
            if (!CHECKED || c + (uint64_t)j * PS_SORT_JOINT_THREADS + threadIdx.x < n)
                old[j] = atomicAdd(&table[b >> 2], 1u << (8 * (b & 3u)));
            wrapped |= ((old[j] >> (8 * (b & 3u))) & 0xFFu) == 0xFFu;
        }
        if (wrapped) {
            /* A bin holds 256 of the block's keys before its first 2^22: skewed keys, whose atomics on a few words
             * take turns (all-equal keys: the upsweep 7x slower than plain counting at 2^28 u32 keys); the block
             * counts its next chunks plainly. Random keys wrap no bin there (about 64 a bin by then). */
            if (c / gridDim.x < (1u << 22)) atomicOr(plain, 1u);
            for (int j = 0; j < ITEMS; j++)
                if (!CHECKED || c + (uint64_t)j * PS_SORT_JOINT_THREADS + threadIdx.x < n)
                    ps_sort_joint_fix((uint32_t)(t[j] >> shift) & mask, 1u, old[j], rows[2 * p], rows[2 * p + 1]);
        }
    }
    ps_sort_chunk_count<U, CHECKED, PS_SORT_JOINT_THREADS, ITEMS>(t, c, n, k, 2 * pairs, k.passes, rows);
}

template <class U>
__global__ void __launch_bounds__(PS_SORT_JOINT_THREADS, 1) ps_sort_upsweep_joint_kernel(const U *keys, uint32_t n,
                                                                                        const ps_sort_keys_desc<U> k,
                                                                                        uint32_t *counts) {
    __shared__ uint32_t rows[PS_SORT_MAX_PASSES][PS_SORT_RADIX];
    __shared__ uint32_t plain;
    uint32_t *joint = reinterpret_cast<uint32_t *>(ps_sort_dynamic_smem);
    if (threadIdx.x == 0) plain = 0;
    const unsigned pairs = ps_sort_joint<U>::pairs(k.passes);
    for (unsigned i = threadIdx.x; i < pairs * PS_SORT_JOINT_WORDS; i += PS_SORT_JOINT_THREADS) joint[i] = 0;
    for (unsigned i = threadIdx.x; i < k.passes * PS_SORT_RADIX; i += PS_SORT_JOINT_THREADS) (&rows[0][0])[i] = 0;
    __syncthreads();
    const uint64_t chunk = (uint64_t)PS_SORT_JOINT_THREADS * ps_sort_joint<U>::ITEMS;
    for (uint64_t c = (uint64_t)blockIdx.x * chunk; c < n; c += (uint64_t)gridDim.x * chunk) {
        const bool full = c + chunk <= n;
        /* lane 0 reads the flag for its warp, by an atomic as another thread may set it meanwhile (each thread's
         * keys count in one table or the other: either is exact, so a late read costs only time) */
        const uint32_t skewed = __shfl_sync(0xFFFFFFFFu, (threadIdx.x & 31) == 0 ? atomicOr(&plain, 0u) : 0u, 0);
        if (skewed) {
            if (full)
                ps_sort_upsweep_chunk<U, false, PS_SORT_JOINT_THREADS, ps_sort_joint<U>::ITEMS>(keys, c, n, k, k.passes, rows);
            else
                ps_sort_upsweep_chunk<U, true, PS_SORT_JOINT_THREADS, ps_sort_joint<U>::ITEMS>(keys, c, n, k, k.passes, rows);
        } else if (full) {
            ps_sort_joint_chunk<U, false>(keys, c, n, k, pairs, joint, rows, &plain);
        } else {
            ps_sort_joint_chunk<U, true>(keys, c, n, k, pairs, joint, rows, &plain);
        }
    }
    __syncthreads();
    /* Thread x reads words x + 1024 i: the same four low digits (4 (x mod 64) + 0..3) in every word, the high
     * digit x / 64 + 16 i, shared by its warp. Its column sums stay in 16-bit lanes (16 words of at most 255). */
    for (unsigned p = 0; p < pairs; p++) {
        const uint32_t *table = joint + p * PS_SORT_JOINT_WORDS;
        uint32_t even = 0, odd = 0;
#pragma unroll 4
        for (unsigned i = 0; i < PS_SORT_JOINT_WORDS / PS_SORT_JOINT_THREADS; i++) {
            const uint32_t w = threadIdx.x + i * PS_SORT_JOINT_THREADS, x = table[w];
            even += x & 0x00FF00FFu;
            odd += (x >> 8) & 0x00FF00FFu;
            const uint32_t row = __reduce_add_sync(0xFFFFFFFFu, __dp4a(x, 0x01010101u, 0u));
            if ((threadIdx.x & 31) == 0 && row) atomicAdd(&rows[2 * p + 1][w >> 6], row);
        }
        const uint32_t lo = 4 * (threadIdx.x & 63);
        atomicAdd(&rows[2 * p][lo + 0], even & 0xFFFFu);
        atomicAdd(&rows[2 * p][lo + 1], odd & 0xFFFFu);
        atomicAdd(&rows[2 * p][lo + 2], even >> 16);
        atomicAdd(&rows[2 * p][lo + 3], odd >> 16);
    }
    __syncthreads();
    for (unsigned i = threadIdx.x; i < k.passes * PS_SORT_RADIX; i += PS_SORT_JOINT_THREADS) {
        const uint32_t c = (&rows[0][0])[i];
        if (c) atomicAdd(&counts[i], c);
    }
}

/* ---- small n: one block, every pass in shared memory ------------------------------------------------------ */

/* n <= PS_SORT_TILE: one block of 256 threads (one per digit) x ITEMS keys, the smallest of 4, 8 and
 * PS_SORT_ITEMS that holds n (ps_sort_launch). Every pass ranks all 256 x ITEMS slots, padding included, and a
 * warp's rank walks its rows one after another, so the time goes with ITEMS, not n: with 16 for every n, 1024
 * keys ranked three padding slots per key. On an H200 at 16 (docs/bench/h200-sort.csv, microseconds a call, each
 * alone, pscan / CUB; a copy call takes 3.4): u64 keys 20.4 / 15.3 at n = 1024 and 21.6 / 16.4 at 2048, u32
 * pairs 14.5 / 13.0, 15.6 / 13.8 and 17.2 / 15.2 at 1024, 2048 and 4096, u32 keys 12.0 / 11.8 and 13.0 / 12.7
 * at 2048 and 4096.
 * Each pass scatters the keys (and a 16-bit index of the slot each came from) to shared memory in rank order and
 * reads them back by slot. The payloads are loaded with the keys at the start, so one DRAM latency covers both,
 * and held in registers; after the last pass they go to shared memory at their input slots and each output slot
 * takes its own by the index. (Before, each thread read its payloads from global memory at the end, each load
 * behind the previous store, which the compiler cannot tell apart from values_in: ITEMS dependent round trips.) */
template <class U, class V, int ITEMS> union ps_sort_small_stage {
    U keys[PS_SORT_THREADS * ITEMS];
    V values[PS_SORT_THREADS * ITEMS]; /* after the last pass */
};

/* One block runs, so one block per SM is the bound: without it ptxas kept some cases at 80 or 128 registers
 * and spilled the held payloads (4 to 32 bytes). */
template <class U, class V, int ITEMS>
__global__ void __launch_bounds__(PS_SORT_THREADS, 1) ps_sort_small_kernel(const U *keys_in, U *keys_out,
                                                                           const void *values_in, void *values_out,
                                                                           uint32_t n, const ps_sort_keys_desc<U> k) {
    constexpr bool HAS_VALUES = !std::is_same<V, ps_sort_no_value>::value;
    __shared__ ps_sort_small_stage<U, V, ITEMS> stage;
    __shared__ uint16_t from[HAS_VALUES ? PS_SORT_THREADS * ITEMS : 1];
    __shared__ ps_sort_rank_smem rs;
    U key[ITEMS];
    V value[ITEMS];
    uint32_t origin[ITEMS], digit[ITEMS], rank[ITEMS];
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t slot = ps_sort_slot_of<ITEMS>(i);
        key[i] = slot < n ? keys_in[slot] : (U)0;
        if constexpr (HAS_VALUES) value[i] = slot < n ? ((const V *)values_in)[slot] : (V)0;
        origin[i] = slot;
    }
    for (unsigned q = 0; q < k.passes; q++) {
        const ps_sort_digit<U> dg = ps_sort_pass_digit(k, q);
        /* slots past n hold the padding: it takes the last digit in every pass, so it stays last */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) digit[i] = ps_sort_slot_of<ITEMS>(i) < n ? dg(key[i]) : dg.mask;
        /* no barrier between the previous pass's reads of the stage and this scatter: every thread reaches the
         * rank's first __syncthreads only after its reads */
        ps_sort_block_rank<ITEMS>(digit, rank, rs);
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            stage.keys[rank[i]] = key[i];
            if constexpr (HAS_VALUES) from[rank[i]] = (uint16_t)origin[i];
        }
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) {
            key[i] = stage.keys[ps_sort_slot_of<ITEMS>(i)];
            if constexpr (HAS_VALUES) origin[i] = from[ps_sort_slot_of<ITEMS>(i)];
        }
    }
    if constexpr (HAS_VALUES) {
        __syncthreads(); /* every thread has read its keys: the stage takes the payloads */
#pragma unroll
        for (int i = 0; i < ITEMS; i++) stage.values[ps_sort_slot_of<ITEMS>(i)] = value[i];
        __syncthreads();
#pragma unroll
        for (int i = 0; i < ITEMS; i++) value[i] = stage.values[origin[i]];
    }
#pragma unroll
    for (int i = 0; i < ITEMS; i++) {
        const uint32_t slot = ps_sort_slot_of<ITEMS>(i);
        if (slot < n) {
            keys_out[slot] = key[i];
            if constexpr (HAS_VALUES) ((V *)values_out)[slot] = value[i];
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
    return ps_sort_counts_bytes() + ps_sort_status_bytes(n) +
           ps_cuda_align((size_t)n * key_bytes) + ps_cuda_align((size_t)n * value_bytes);
}

/* Whether the passes of a case take 32-bit status words (ps_sort_passes_sized says why up to 2^30 keys). */
template <class U, class V, bool LARGE> constexpr bool ps_sort_status32(uint64_t n) {
    return ps_sort_pass_policy<U, V, LARGE>::STATUS32 && n <= (1ull << 30);
}

/* The status bytes the upsweep's memset clears for a sort of n keys of case (U, V) with the LARGE policy or not:
 * with PS_SORT_CLEAR_USED the words its passes read (their tiles x 256, of their width; of 32-bit words the first
 * region alone, pass 0 clearing the second), else all of ps_sort_status_bytes. */
template <class U, class V, bool LARGE> static size_t ps_sort_clear_bytes_of(uint64_t n) {
    if (!PS_SORT_CLEAR_USED) return ps_sort_status_bytes(n);
    const size_t words = (size_t)ps_cuda_div_up(n, (uint64_t)ps_sort_pass_policy<U, V, LARGE>::TILE) * PS_SORT_RADIX;
    return words * (ps_sort_status32<U, V, LARGE>(n) ? 4 : 8);
}
template <class U, class V> static size_t ps_sort_clear_bytes(uint64_t n) {
    if constexpr (ps_sort_pass_policy<U, V>::LARGE_LOG2 != 0)
        if (ps_sort_large<U, V>(n)) return ps_sort_clear_bytes_of<U, V, true>(n);
    return ps_sort_clear_bytes_of<U, V, false>(n);
}

template <class U> static ps_sort_keys_desc<U> ps_sort_desc(const ps_sort_args &a) {
    ps_sort_keys_desc<U> k;
    const U sign = (U)((U)1 << (8 * sizeof(U) - 1));
    /* signed integers map as unsigned ones with the sign bit flipped: folded into flip (ps_sort_map) */
    k.kind = a.kind == PS_SORT_KEY_FLOAT ? PS_SORT_KEY_FLOAT : PS_SORT_KEY_UNSIGNED;
    k.flip = (U)((a.descending ? (U)~(U)0 : (U)0) ^ (a.kind == PS_SORT_KEY_SIGNED ? sign : (U)0));
    k.begin_bit = a.begin_bit;
    k.end_bit = a.end_bit;
    k.passes = (a.end_bit - a.begin_bit + 7) / 8;
    return k;
}

/* Clears the counts and status_bytes of status words (ps_sort_clear_bytes) and counts every pass's digits
 * (n > one tile). Its own function so that tools/tune/tune_sort.cu can time it apart from the passes. */
template <class U>
static cudaError_t ps_sort_upsweep(const ps_sort_args &a, size_t status_bytes, const ps_cuda_device *dev) {
    const uint32_t n = (uint32_t)a.n;
    uint32_t *counts = (uint32_t *)a.temp;
    /* one memset clears the counts and every status word a pass reads: no foreign bytes can validate (see the
     * header) */
    cudaError_t err = cudaMemsetAsync(counts, 0, ps_sort_counts_bytes() + status_bytes, dev->stream);
    if (err != cudaSuccess) return err;
    const ps_sort_keys_desc<U> k = ps_sort_desc<U>(a);
    const unsigned pairs = ps_sort_joint<U>::pairs(k.passes);
    /* the pairs' tables (64 KiB each) and the kernel's static rows must fit one block's shared memory: 3 pairs
     * take 200 KiB (an H100 or H200 gives 227 KiB a block; an A100 163: its u64 keys count plainly) */
    const size_t smem = (size_t)pairs * PS_SORT_JOINT_WORDS * 4;
    const size_t smem_static = sizeof(uint32_t) * (PS_SORT_MAX_PASSES * PS_SORT_RADIX + 1);
    if (!PS_SORT_FUSED && pairs && (uint64_t)n * sizeof(U) >= PS_SORT_UP_JOINT_BYTES &&
        smem + smem_static <= (size_t)dev->max_shared_per_block_optin) {
        if ((err = cudaFuncSetAttribute(ps_sort_upsweep_joint_kernel<U>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)smem)) != cudaSuccess)
            return err;
        const uint64_t want = ps_cuda_div_up(n, PS_SORT_JOINT_THREADS * ps_sort_joint<U>::ITEMS);
        const unsigned grid = (unsigned)(want < (uint64_t)dev->sm_count ? want : dev->sm_count);
        ps_sort_upsweep_joint_kernel<U><<<grid, PS_SORT_JOINT_THREADS, smem, dev->stream>>>((const U *)a.keys_in, n, k,
                                                                                           counts);
        return cudaGetLastError();
    }
    const uint64_t want = ps_cuda_div_up(n, PS_SORT_THREADS * PS_SORT_UP_ITEMS);
    const uint64_t most = (uint64_t)dev->sm_count * PS_SORT_UP_BLOCKS;
    const unsigned grid = (unsigned)(want < most ? want : most);
    ps_sort_upsweep_kernel<U><<<grid, PS_SORT_THREADS, 0, dev->stream>>>((const U *)a.keys_in, n, k, counts);
    return cudaGetLastError();
}

/* The digit passes, one launch each, ping-pong so that the last pass writes keys_out, with the case's policy and
 * status words of type W (ps_sort_publish). */
template <class U, class V, bool LARGE, class W>
static cudaError_t ps_sort_passes(const ps_sort_args &a, const ps_sort_keys_desc<U> &k, uint32_t *counts,
                                  W *status, U *tmp_keys, void *tmp_values, const ps_cuda_device *dev) {
    typedef ps_sort_pass_policy<U, V, LARGE> Policy;
    constexpr bool S32 = sizeof(W) == 4;
    const size_t dynamic_smem = ps_sort_staging<U, V, LARGE>::BYTES;
    ps_sort_pass_params<U> p;
    cudaError_t err;
    const uint32_t n = (uint32_t)a.n;
    const size_t region = (size_t)ps_sort_tiles(n) * PS_SORT_RADIX; /* 32-bit words: those of one pass */
    memset(&p, 0, sizeof p);
    p.n = n;
    p.tiles = (uint32_t)ps_cuda_div_up(n, Policy::TILE);
    for (unsigned q = 0; q < k.passes; q++) {
        p.status = S32 ? status + (q & 1) * region : status;
        /* the next pass's region, zeroed by this pass's tiles; the first region by the upsweep's memset, and the
         * second by it too unless it clears the words in use alone (PS_SORT_CLEAR_USED) */
        p.clear = S32 && (q >= 1 || PS_SORT_CLEAR_USED) && q + 1 < k.passes ? status + ((q + 1) & 1) * region : NULL;
        const bool to_out = (k.passes - 1 - q) % 2 == 0; /* the last pass writes keys_out */
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
        if (dynamic_smem && (err = cudaFuncSetAttribute(ps_sort_pass_kernel<U, V, LARGE, W>,
                                                        cudaFuncAttributeMaxDynamicSharedMemorySize,
                                                        (int)dynamic_smem)) != cudaSuccess)
            return err;
        if ((err = ps_pdl_launch(PS_SORT_PDL != 0, ps_sort_pass_kernel<U, V, LARGE, W>, dim3(p.tiles),
                                 dim3(Policy::THREADS), dynamic_smem, dev->stream, p)) != cudaSuccess)
            return err;
    }
    return cudaSuccess;
}

/* 32-bit status words where the case's policy takes them and every count fits their 30 bits, else 64-bit.
 * Up to 2^30 keys every published count fits: a tile's own count is at most its size, and the largest inclusive
 * count published is that of the last tile but one, at most n less the last tile's keys, so below 2^30 (the last
 * tile publishes nothing: ps_sort_look_back). test_sort_huge sorts 2^30 equal keys to hold that edge. */
template <class U, class V, bool LARGE>
static cudaError_t ps_sort_passes_sized(const ps_sort_args &a, const ps_sort_keys_desc<U> &k, uint32_t *counts,
                                        void *status, U *tmp_keys, void *tmp_values, const ps_cuda_device *dev) {
    if constexpr (ps_sort_pass_policy<U, V, LARGE>::STATUS32)
        if (ps_sort_status32<U, V, LARGE>(a.n))
            return ps_sort_passes<U, V, LARGE>(a, k, counts, (uint32_t *)status, tmp_keys, tmp_values, dev);
    return ps_sort_passes<U, V, LARGE>(a, k, counts, (unsigned long long *)status, tmp_keys, tmp_values, dev);
}

template <class U, class V> static cudaError_t ps_sort_launch(const ps_sort_args &a, const ps_cuda_device *dev) {
    const uint32_t n = (uint32_t)a.n;
    const ps_sort_keys_desc<U> k = ps_sort_desc<U>(a);
    if (n == 0) return cudaSuccess;
    if (n <= PS_SORT_TILE) {
        /* the fewest keys a thread that hold n: every pass ranks all of the block's slots */
        void (*small)(const U *, U *, const void *, void *, uint32_t, ps_sort_keys_desc<U>) =
            ps_sort_small_kernel<U, V, PS_SORT_ITEMS>;
        if (PS_SORT_ITEMS > 8 && n <= PS_SORT_THREADS * 8) small = ps_sort_small_kernel<U, V, 8>;
        if (PS_SORT_ITEMS > 4 && n <= PS_SORT_THREADS * 4) small = ps_sort_small_kernel<U, V, 4>;
        small<<<1, PS_SORT_THREADS, 0, dev->stream>>>((const U *)a.keys_in, (U *)a.keys_out, a.values_in,
                                                      a.values_out, n, k);
        return cudaGetLastError();
    }

    /* ---- upsweep ---- */
    char *t = (char *)a.temp;
    uint32_t *counts = (uint32_t *)t;
    void *status = t + ps_sort_counts_bytes();
    U *tmp_keys = (U *)(t + ps_sort_counts_bytes() + ps_sort_status_bytes(n));
    void *tmp_values = (char *)tmp_keys + ps_cuda_align((size_t)n * sizeof(U));
    cudaError_t err = ps_sort_upsweep<U>(a, ps_sort_clear_bytes<U, V>(n), dev);
    if (err != cudaSuccess) return err;

    /* ---- one launch per digit pass ---- */
    if constexpr (ps_sort_pass_policy<U, V>::LARGE_LOG2 != 0)
        if (ps_sort_large<U, V>(n))
            return ps_sort_passes_sized<U, V, true>(a, k, counts, status, tmp_keys, tmp_values, dev);
    return ps_sort_passes_sized<U, V, false>(a, k, counts, status, tmp_keys, tmp_values, dev);
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
