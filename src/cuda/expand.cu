/*
 * expand.cu - expand on CUDA: the counts' scan expands its own tile, and tiles with many slots are left to a
 * second, balanced pass.
 *
 * The idea. Item i owns the output slots [start(i), start(i) + counts[i]), start being the exclusive sum of the
 * counts, and slot j belongs to the last item whose start is at most j (that item's count is never 0: the next
 * start lies past j). A tile of the counts' scan knows its items' starts in shared memory the moment its
 * look-back returns, so it can write its own slots at once, without the starts ever going through global memory.
 * In the same pass that turns its counts into starts, each thread sets a bit at the first slot of each of its
 * items with a nonzero count (a bit per slot of the tile, at most BUDGET an item) and counts those items; one
 * block scan then gives every 32-bit word of bits the bits set before it and every such item its place in a list
 * of them, in order. Slot q's item is the list's entry at (the bits set at or before q) - 1: a warp's 32 slots of a
 * row read one word and its count, a popcount and one 16-bit entry each. Then the block writes the tile's slots
 * in order, CHUNK at a time, coalesced: index, rank = slot - start, and the gathered value.
 *
 * Balance. One tile with a huge count (or 6144 items of 64 each) would keep one block busy while the others
 * idle, so a tile whose slots pass BUDGET leaves them to the second pass: it writes its first slot to temp and
 * counts its slots as "deferred". The chain carries (slots, deferred slots), so every tile also knows how many
 * deferred slots come before it (written per tile, the total after the last). The second pass cuts the deferred
 * slots (those below the capacity) evenly over a grid that fills the GPU: each block finds the tile of its first
 * slot by a galloping search over the per-tile counts, scans that tile's counts again into its starts (from its
 * first slot) in shared memory and expands
 * its share chunk by chunk, moving to the next deferred tile as needed: per chunk of CHUNK slots, every item
 * that starts inside it (with a nonzero count) marks its first slot with its index, the item owning the chunk's
 * first slot marks slot 0, and an inclusive max-scan over the chunk hands every slot its item (marks increase
 * with the slot, so the max is the last mark at or before it; each mark carries its chunk's number above the
 * item, so older chunks' marks lose every max and are never cleared); the same stores follow. No block ever
 * has more than BUDGET slots plus its even share of the deferred ones.
 *
 *   1. scan + expand (single-pass chain, chain/single_pass.cuh): counts -> starts (the chain's 64-bit, saturating
 *      at UINT64_MAX, so a sum past 2^64 cannot wrap onto small slot numbers; within a tile that writes its own
 *      slots, below BUDGET x TILE, in the counts' type); tiles with at most BUDGET slots write them; the last
 *      tile writes the total to the caller.
 *   2. deferred (a grid sized to the device, or a block per chunk of the capacity where that is fewer): the
 *      deferred tiles' slots, evenly shared. A call whose capacity is within one tile's budget has no deferred
 *      slot below it and skips this launch (PS_EXPAND_OWN_ALL): the small calls cost one launch.
 * Slots at or past the capacity are never written (each chunk is cut at it; the second pass shares only the
 * deferred slots below it, so a small capacity under a huge total costs nothing).
 *
 * Work O(n + out); depth: the chain plus a search of log(tiles) per deferred tile a block enters. Global memory:
 * counts read once (4 or 8 bytes per item), the slots written once (index, rank, value: as asked), the values
 * gathered (adjacent slots share items, so mostly from cache); for deferred tiles only, the counts read again
 * (small beside the BUDGET or more slots an item such a tile writes). Temp: 16 bytes per tile (its first slot,
 * the deferred slots before it) and the chain's entries (32 bytes per tile, two per tile). Until the nineteenth
 * session deferred tiles wrote their 64-bit starts to temp (8 bytes an item) for the second pass to read.
 *
 * Measured (NVIDIA H200, tools/tune/tune_expand.cu, u32 counts uniform in 0..8 / 0..128, u32 indices, median of
 * 21, L2 written over before each call; docs/bench/h200-expand-tune.csv): average count 4 at 2^28 items 0.42 of
 * a copy of the same bytes, average 64 at 2^24 items 0.61 (a memset of the output alone: 0.31 / 0.55 of its
 * speed); H100 80GB HBM3: 0.58 / 0.73. Tiles of 4096 items with a budget of 32768 slots from 2^20 items up
 * (twelfth session, docs/bench/h200-expand-tiles.csv, H200): 0.423 -> 0.471 at average 4, 0.607 -> 0.647 at 64,
 * 0.269 -> 0.356 at 1.5 (2^28; 64 at 2^24); below 2^20 they lose (2^18, average 4: 0.540 -> 0.430), so smaller
 * calls keep 2048-item tiles (PS_EXPAND_SMALL_ITEMS: two shapes of the program). The look-back is not
 * what holds expand back: without it (PS_CHAIN_CONTROL) the 2048-item tiles ran 0.30 / 0.38 at 1.5 / 4, and a
 * wider window (W = 128, 256) was slower; the tile's own phases are. The earlier three-launch merge-path
 * version (scan, partition, expand, every start through global memory, a binary search and a serial merge per
 * thread) reached 0.22 / 0.35 on the H200. The tile's owners from its bits, built in the scan's pass, instead
 * of the chunks' marks and max-scans in the first pass (twelfth session, docs/bench/h200-expand-tilebits.csv,
 * H200, 2^28): average 1.5 0.359 -> 0.470, average 4 0.470 -> 0.665; 2^16 0.289 -> 0.332 at 4; average 64 (the
 * second pass) unchanged, 0.649 at 2^24. Measured and not kept (2048-item tiles, chunks in both passes): chunks of
 * 4096 slots (0.40 / 0.56), a budget of 32768 (the same), chunks done by single warps without block barriers
 * (0.41 / 0.55), 16-byte vector stores from registers (0.29 / 0.14). A full chunk's rows at constant offsets
 * (3 instructions a slot) gained 3%. The second pass (average 64, H200, 2026-11-28, docs/bench/
 * h200-expand-second-pass.csv, 2^24): the marks never cleared, the max-scan's run in registers 0.635 -> 0.665
 * (one shared store and one load a slot fewer); not kept: a chunk's owners from bits (0.624, as in the first pass:
 * three shared loads a slot), sections of 32768 slots from bits (0.571), each warp writing its items' slots
 * line by line with no barriers (0.470: issue-bound, 73% of issue slots), the walk (H100 0.755 against 0.728, but
 * 2% lost at average 4). Nsight Compute (2^22, before): 58% of DRAM throughput, barrier, short-scoreboard
 * and MIO stalls first, 49% of issue slots.
 * Nineteenth session (H200, docs/bench/h200-expand-starts32.csv, h200-expand-firsts.csv, of copy at 2^28 items,
 * average 1.5 / 4; average 64 at 2^24): 0.471 / 0.677 / 0.668 before; the tile's counts in their own type (a
 * 32-bit add an item, 34 instead of 51 KiB of shared memory: 5 blocks/SM) 0.499 / 0.704 (but 0.595 at 64 while
 * deferred tiles stored their 64-bit starts a thread's run at a time); the second pass scanning the counts
 * itself 0.683 at 64; tiles of 6144 items at 4 blocks/SM 0.550 / 0.729 / 0.740.
 * Twentieth session (H200, docs/bench/h200-expand-control-spread.csv, h200-prefetch-expand.csv): the look-back
 * does hold the first pass back, contrary to the older reading above (that control gave every tile the same
 * prefix, so every tile wrote the same slots on a few L2 slices): with each tile's stores spread as the real
 * prefixes spread them, the control ran 0.865 of copy at average 4 (2^28) against 0.729 chained. A tile waits for
 * the aggregates of its window, each published after its tile's loads, and loads from DRAM queue behind the
 * stores; the driver's prefetch hook (prefetch() below: the counts of the tile 64 ahead into L2) took average 4
 * to 0.762 and 1.5 to 0.586. Not kept: 16-byte index stores from output-aligned groups of 4 slots (0.725 ->
 * 0.731), a window of 128 tiles (0.707), 8192-item tiles at 3 blocks/SM (0.689).
 */
#include <stdint.h>
#include <string.h>

#include "block/warp.cuh"
#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

/* Counts per thread: tiles of 6144 items from PS_EXPAND_LARGE_FROM items up, 2048 below (more tiles for the GPU).
 * H200, tune_expand, of copy at 2^24 / 2^28 items, average count 4 (docs/performance.md): 4096 against 2048 0.466 /
 * 0.471 against 0.429 / 0.423 (twelfth session; at 2^18 0.430 against 0.540); 6144 against 4096 at 4 blocks/SM, with
 * the counts' own type in shared memory, 0.711 / 0.729 against 0.687 / 0.704 (nineteenth session,
 * docs/bench/h200-expand-firsts.csv; at 2^20 0.604 against 0.628). */
#ifndef PS_EXPAND_ITEMS
#define PS_EXPAND_ITEMS 24
#endif
#ifndef PS_EXPAND_SMALL_ITEMS
#define PS_EXPAND_SMALL_ITEMS 8
#endif
#ifndef PS_EXPAND_LARGE_FROM
#define PS_EXPAND_LARGE_FROM (1ull << 20)
#endif
#ifndef PS_EXPAND_CHUNK_VT
#define PS_EXPAND_CHUNK_VT 32 /* slots per thread in a chunk's scan: 8192-slot chunks (16: 0.56 / 0.40 of copy) */
#endif
#ifndef PS_EXPAND_BUDGET
#define PS_EXPAND_BUDGET 8 /* the most slots a tile of the scan writes itself, per item of the tile */
#endif
/* Blocks per SM of the scan, both shapes (64 registers): the 6144-item tile of u32 counts has 50 KiB of shared
 * memory (4 fit), of u64 counts 75 KiB (3 fit). 4096-item tiles at 6 blocks/SM (40 registers) ran within 0.01 of 5. */
#ifndef PS_EXPAND_MIN_BLOCKS
#define PS_EXPAND_MIN_BLOCKS 4
#endif
/* The launch bound of the 6144-item tiles of u32 counts: 5 caps their registers at 48 (ptxas: 8 bytes spilled),
 * though shared memory keeps 4 blocks on an SM either way, and ran faster. H200, tune_expand, two runs (twenty-second
 * session, docs/bench/h200-expand-knobs.csv), of copy at 2^24 / 2^26 / 2^28, average 4: 0.726 / 0.747 / 0.762 ->
 * 0.734 / 0.758 / 0.776; average 64 and 2^20-2^22 within 0.003. The same sweep: 4096- and 5120-item tiles gained at
 * 2^20-2^24 (average 4) but lost 0.02 at average 64, 8192 lost everywhere, budgets of 4 and 16 slots an item lost. */
#ifndef PS_EXPAND_LARGE_MIN_BLOCKS
#define PS_EXPAND_LARGE_MIN_BLOCKS 5
#endif
/* Tiles of at most this many counts a thread build their bits (their items' starts in the tile, a bit at each first
 * slot, the list of nonzero items) in warps 1-7 while warp 0 looks back (early()); larger ones after the look-back,
 * by the whole block (consume). 0: none early, 24: both shapes. H200, tune_expand, of copy, early against after
 * (twenty-first session, docs/bench/h200-expand-early-bits.csv): the 2048-item tiles (below 2^20 items) at 2^16 / 2^18
 * 0.365 / 0.635 against 0.337 / 0.602 (average 4), 0.378 / 0.591 against 0.366 / 0.560 (1.5); the 6144-item tiles
 * lost, 0.685 / 0.753 against 0.725 / 0.763 at 2^24 / 2^28 (average 4): 7 warps doing 256 runs of 24 counts (warp 1
 * two of them) outlast the chain's wait, where runs of 8 do not. */
#ifndef PS_EXPAND_EARLY_ITEMS
#define PS_EXPAND_EARLY_ITEMS PS_EXPAND_SMALL_ITEMS
#endif
/* Calls of at most this many tiles build every tile's bits after the look-back, with the whole block, even where
 * EARLY: tile 0 has no look-back to hide them behind, and the first tiles' look-backs are short, so early() only
 * leaves warp 0 idle and gives warp 1 two runs. 0: every EARLY tile early. H200, tune_expand, fiftieth session
 * (docs/bench/h200-expand-late.csv, median of 25, us a call, 2048-item tiles; "lall" every tile late, "l1" tile 0
 * only, against all early): 1 tile (2^10) average 1.5 / 4 6.27 / 6.40 -> 5.54 / 5.82 (capacity 0: 5.60 -> 4.64);
 * 2 tiles 7.30 / 8.22 -> 6.85 / 7.20; 8 tiles (2^14) 8.77 / 9.70 -> 8.16 / 8.99; but 32 tiles (2^16) 8.51 / 9.09
 * -> 9.15 / 9.70, as the twenty-first session found at 2^16-2^18. Tile 0 alone late ("l1") took only the one-tile
 * calls' gain. (The ncu of the forty-ninth session: the bits were 29 % of the one-tile kernel's instructions.) */
/* Not kept (fifty-first session, docs/bench/h200-expand-direct.csv, two interleaved rounds): the slots of such small
 * calls written thread by thread, each thread walking its own run of items with no bits, no block scan of them and
 * no rows (for calls of at most 1 or 8 tiles of at most 2, 4 or 8 slots an item): 2^10 average 1.5 / 4 5.67 / 5.94
 * -> 5.82-6.02 / 7.55-7.67 us, 2^11 average 4 6.38 -> 12.3, 2^12-2^14 average 4 7.4-9.0 -> 13.3-15.2: a warp's
 * lanes storing far apart, and a warp waiting on its longest run, cost more than the bits and rows they skip. */
#ifndef PS_EXPAND_LATE_TILES
#define PS_EXPAND_LATE_TILES 8
#endif
/* 1: a chunk that is not full loops over its rows that hold a slot of the thread, instead of over all CHUNK_VT rows
 * with a test in each. H200, tune_expand, fiftieth session (docs/bench/h200-expand-late-large.csv, with tile 0
 * late, which large calls never see: their 6144-item tiles are not EARLY), of copy at 2^24 / 2^26 / 2^28: average
 * 1.5 (6144-item tiles of 9216 slots: a full chunk and a partial one) 0.576 / 0.580 / 0.584 -> 0.597 / 0.607 /
 * 0.613; average 4 0.743 / 0.760 / 0.776 -> 0.739 / 0.754 / 0.770 (within the two runs' spread elsewhere); the
 * small calls within 0.4 us either way. */
#ifndef PS_EXPAND_ROWS_BOUND
#define PS_EXPAND_ROWS_BOUND 1
#endif
/* Small capacities. 1: a call whose capacity is at most a tile's budget (PS_EXPAND_BUDGET x the tile's items: 16384
 * slots below 2^20 items) runs no second launch: no tile then has more slots below the capacity than it may write
 * itself, so none defers, and a tile past the budget writes the part of its slots below the capacity (its in-tile
 * starts clamped at the budget, so neither a u32 start can wrap nor a bit fall outside the tile's words). 0: such
 * tiles defer as any other. H200, twenty-ninth session (docs/bench/h200-small-knobs.csv, pscan bench, with
 * PS_EXPAND_GRID_BY_CAPACITY): u32 counts 0-3 at 2^10 / 2^13 10.2-10.6 / 10.9-11.5 us against 6.6 / 7.5, the
 * first launch alone (PS_EXPAND_CONTROL_FIRST) 6.4 in tune_expand: the small calls now cost one launch. */
#ifndef PS_EXPAND_OWN_ALL
#define PS_EXPAND_OWN_ALL 1
#endif
/* Small capacities, the other way: 1 sizes the deferred launch's grid by the capacity, a chunk of slots a block
 * (the deferred slots written are at most the capacity), instead of filling the GPU. tune_expand, H200,
 * twenty-ninth session (docs/bench/h200-expand-small-tune.csv), 2^10-2^16: 1.0-1.25 us off the calls of counts
 * averaging 1.5 and 4 (average 4 at 2^14: 12.2 against 10.9 us), 1.0-3.9 off average 64 (2^10: 14.1 against 10.2). */
#ifndef PS_EXPAND_GRID_BY_CAPACITY
#define PS_EXPAND_GRID_BY_CAPACITY 1
#endif
/* 1 launches the deferred pass as a programmatic dependent launch (chain/pdl.cuh): its blocks wait for the scan's
 * end before they read its firsts and prefixes; with PS_CHAIN_PDL_TRIGGER the scan's blocks let it be scheduled as
 * they start instead of as they exit. tune_expand, H200, forty-seventh session (docs/bench/h200-expand-pdl.csv,
 * median of 25, base / PDL / PDL with the trigger, us): counts averaging 1.5 at 2^14 10.21 / 8.86 / 8.80, 2^16
 * 10.08 / 8.61 / 8.48, 2^20 18.08 / 16.51 / 16.45; average 4 at 2^16 10.91 / 9.38 / 9.31; average 64 at 2^10
 * 10.08 / 9.06 / 8.99, 2^16 21.57 / 20.26 / 19.68; within 0.5 % from 2^22. The one-launch calls (2^10-2^12 of
 * small counts) unchanged, as they should be. A/B: tools/tune/variants.sh tools/tune/tune_expand.cu OUT "base=
 * -DPS_EXPAND_PDL=0 -DPS_CHAIN_PDL_TRIGGER=0" "pdl=-DPS_CHAIN_PDL_TRIGGER=0" "pdlt=" -- --min-log2 10 --max-log2 24. */
#ifndef PS_EXPAND_PDL
#define PS_EXPAND_PDL 1
#endif
/* Tuning control: 1 leaves the deferred launch out, so tune_expand times the first launch alone (the small calls'
 * floor: what a single launch could reach). Wrong results by design wherever a tile defers. */
#ifndef PS_EXPAND_CONTROL_FIRST
#define PS_EXPAND_CONTROL_FIRST 0
#endif
/* A mark holds its chunk's number above the item + 1: a tile's items (TILE < 8192) in the low bits; the numbers
 * wrap after 2^(32 - this) chunks of a block (29 makes that 8, to test the wrap). */
#ifndef PS_EXPAND_MARK_ITEM_BITS
#define PS_EXPAND_MARK_ITEM_BITS 13
#endif

#define PS_EXPAND_THREADS 256
#define PS_EXPAND_WARPS (PS_EXPAND_THREADS / PS_WARP_LANES)
#define PS_EXPAND_CHUNK (PS_EXPAND_CHUNK_VT * PS_EXPAND_THREADS)

/* a + b, or UINT64_MAX when that overflows: still associative, so the chain may group sums any way. */
static __device__ __forceinline__ uint64_t ps_add_saturating(uint64_t a, uint64_t b) {
    const uint64_t s = a + b;
    return s < a ? ~0ull : s;
}
struct ps_expand_sum {
    __device__ __forceinline__ uint64_t operator()(uint64_t a, uint64_t b) const { return ps_add_saturating(a, b); }
};
struct ps_expand_add32 {
    __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const { return a + b; }
};
struct ps_expand_max {
    __device__ __forceinline__ uint32_t operator()(uint32_t a, uint32_t b) const { return a > b ? a : b; }
};

/* Writes a uint64_t at any address (the caller's total need not be 8-byte aligned). */
static __device__ __forceinline__ void ps_store_u64_anywhere(uint64_t *p, uint64_t v) {
    if (((uintptr_t)p & 7u) == 0) {
        *p = v;
    } else {
        unsigned char *c = (unsigned char *)p;
#pragma unroll
        for (int b = 0; b < 8; b++) c[b] = (unsigned char)(v >> (8 * b));
    }
}

/* x's exclusive sum over the block in thread order (every thread calls; one barrier inside, after which
 * warp_totals, WARPS words, may be read but not rewritten until another barrier). */
static __device__ __forceinline__ uint32_t ps_expand_block_exclusive(uint32_t x, uint32_t *warp_totals) {
    const uint32_t lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
    const uint32_t inclusive = ps_warp_inclusive(x, lane, ps_expand_add32());
    if (lane == PS_WARP_LANES - 1) warp_totals[warp] = inclusive;
    __syncthreads();
    uint32_t before = inclusive - x;
#pragma unroll
    for (int w = 0; w < PS_EXPAND_WARPS; w++)
        if (w < (int)warp) before += warp_totals[w];
    return before;
}

/* ---- the chunk: a tile's slots [j0, j1), at most CHUNK of them ----------------------------------------- */

/* The second pass's (the scan's tiles have ps_expand_tile_smem). starts: the tile's counts, then its starts, with
 * entry `valid` the tile's end, padded one word per thread's run (at()) so the scan's runs and the rows read
 * without bank conflicts; owner: per slot
 * of the chunk, its chunk's number and item + 1 in the tile (ps_expand_owners_by_marks), padded one word per 32 (mark_at()) so that a thread's run of CHUNK_VT
 * slots and a row of the block are both conflict-free, and at constant offsets from one base per thread. */
template <int ITEMS_> struct ps_expand_smem {
    enum { ITEMS = ITEMS_, TILE = ITEMS_ * PS_EXPAND_THREADS, BITS_ROWS = 0 };
    static_assert(TILE < (1 << PS_EXPAND_MARK_ITEM_BITS), "a tile's item + 1 in a mark's low bits");
    uint64_t starts[TILE + TILE / ITEMS + 1];
    uint32_t owner[PS_EXPAND_CHUNK + PS_EXPAND_CHUNK / 32]; /* marks, then each slot's (chunk, item + 1) */
    uint32_t warp_max[PS_EXPAND_WARPS];
    uint64_t warp_sums[PS_EXPAND_WARPS];
    uint32_t range[2]; /* the chunk's items: first owns its first slot, first + 1 .. last - 1 start inside */
    static __device__ __forceinline__ uint32_t at(uint32_t i) { return i + i / ITEMS; } /* starts' padding */
    __device__ __forceinline__ uint64_t start(uint32_t item) const { return starts[at(item)]; }
};
static __device__ __forceinline__ uint32_t ps_expand_mark_at(uint32_t q) { return q + q / 32; }

/* The scan's tiles: the counts as read (C: 4 bytes for u32 counts), each replaced by its item's start in the tile
 * once the tile writes its own slots (then every start is below BUDGET x TILE); a bit per slot of the tile, set
 * where a nonzero item starts; per word the bits set before it; and the nonzero items in order, so that the owner
 * of slot q is nz[bits set at or before q, less one]. Starts within the tile in the counts' own type, not 64-bit
 * absolute ones: half the shared memory and a 32-bit add an item for u32 counts (nineteenth session). */
template <class C, int ITEMS_> struct ps_expand_tile_smem {
    enum { ITEMS = ITEMS_, TILE = ITEMS_ * PS_EXPAND_THREADS, BITS_ROWS = 1 };
    enum { WORDS = PS_EXPAND_BUDGET * TILE / 32, THREAD_WORDS = WORDS / PS_EXPAND_THREADS };
    static_assert(WORDS % PS_EXPAND_THREADS == 0, "whole words of bits a thread");
    static_assert(TILE <= 65535, "the block scan counts a tile's nonzero items (and as many bits) in 16 bits each");
    static_assert((uint64_t)PS_EXPAND_BUDGET * TILE <= 0xffffffffu, "a start in the tile fits the counts' type");
    C counts[TILE + TILE / ITEMS];
    /* per word of 32 slots: .x its bits; .y 2 x (the bits set before it - 1), the byte offset in nz of the
     * entry before its first bit's. One 8-byte load a row finds both, and nz's address is one multiply-add:
     * average 4 at 2^28 0.663 -> 0.675 of copy against two arrays (H200, 2026-11-28, h200-expand-wordpairs.csv). */
    uint2 word[WORDS];
    uint16_t nz[TILE];
    uint64_t warp_sums[PS_EXPAND_WARPS];
    uint32_t warp_max[PS_EXPAND_WARPS];
    /* per thread's run of ITEMS counts: its slots before it within its warp, and which of its items are nonzero
     * (early(): warps 1-7 do every run, warp 0's too) */
    uint32_t run_before[PS_EXPAND_THREADS], run_nonzero[PS_EXPAND_THREADS];
    uint64_t slots0; /* the tile's first slot */
    static __device__ __forceinline__ uint32_t at(uint32_t i) { return i + i / ITEMS; }
    __device__ __forceinline__ uint64_t start(uint32_t item) const { return slots0 + (uint64_t)counts[at(item)]; }
};
static_assert(32 % PS_EXPAND_CHUNK_VT == 0, "a thread's run of a chunk lies within one padded row of 32");

/* Where the slots go. */
struct ps_expand_out {
    const void *values;
    void *indices, *ranks, *values_out;
    uint32_t value_bytes;
};

/* The nz entry at a byte offset (a word's .y plus twice the bits set before the slot, at or below it). */
static __device__ __forceinline__ uint32_t ps_expand_nz_at(const uint16_t *nz, uint32_t byte_offset) {
    return *(const uint16_t *)((const char *)nz + byte_offset);
}

/* Calls f(k, owner) for the thread's slot of each row k of the chunk (slot threadIdx.x + k x THREADS). A full
 * chunk tests nothing, and f's addresses are constant offsets from the thread's base: the per-slot instructions
 * are what this kernel spends, so each output is its own pass over the rows (a NULL one costs nothing). */
template <bool FULL, class S, class F>
static __device__ __forceinline__ void ps_expand_rows(const S &s, uint32_t word0, uint32_t len, F f) {
    if constexpr (S::BITS_ROWS) {
        /* slot q = threadIdx.x + k THREADS of the chunk is bit lane of word word0 + warp + k THREADS / 32: the
         * warp reads one word */
        const uint32_t lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const uint32_t upto = 0xffffffffu >> (31 - lane); /* the bits at or below this lane's */
        const int rows = FULL || !PS_EXPAND_ROWS_BOUND ? PS_EXPAND_CHUNK_VT
                         : len > threadIdx.x ? (int)((len - threadIdx.x + PS_EXPAND_THREADS - 1) / PS_EXPAND_THREADS)
                                             : 0;
#pragma unroll 8
        for (int k = 0; k < rows; k++) {
            const uint32_t w = word0 + warp + k * (PS_EXPAND_THREADS / 32);
            if (FULL || PS_EXPAND_ROWS_BOUND || threadIdx.x + k * PS_EXPAND_THREADS < len) {
                const uint2 word = s.word[w];
                f(k * PS_EXPAND_THREADS, ps_expand_nz_at(s.nz, word.y + 2u * __popc(word.x & upto)));
            }
        }
    } else {
        enum { ROW = PS_EXPAND_THREADS + PS_EXPAND_THREADS / 32 }; /* a row of owners, padded */
        const uint32_t *const owners = s.owner + ps_expand_mark_at(threadIdx.x);
#pragma unroll 8
        for (int k = 0; k < PS_EXPAND_CHUNK_VT; k++)
            if (FULL || threadIdx.x + k * PS_EXPAND_THREADS < len)
                f(k * PS_EXPAND_THREADS, (owners[k * ROW] & ((1u << PS_EXPAND_MARK_ITEM_BITS) - 1u)) - 1u);
    }
}

/* Each slot's item's value. */
template <class V, bool FULL, class S>
static __device__ __forceinline__ void ps_expand_gather(const ps_expand_out &o, const S &s, uint32_t word0,
                                                        uint64_t item0, uint64_t j0, uint32_t len) {
    V *const out = (V *)o.values_out + j0 + threadIdx.x;
    const V *const values = (const V *)o.values + item0;
    ps_expand_rows<FULL>(s, word0, len, [&](int k, uint32_t owner) { out[k] = values[owner]; });
}

/* The chunk's slots in order, each row of the block one coalesced store per output. */
template <class I, bool FULL, class S>
static __device__ __forceinline__ void ps_expand_store(const ps_expand_out &o, const S &s, uint32_t word0,
                                                       uint64_t item0, uint64_t j0, uint32_t len) {
    if (o.indices) {
        I *const out = (I *)o.indices + j0 + threadIdx.x;
        const I first = (I)item0;
        ps_expand_rows<FULL>(s, word0, len, [&](int k, uint32_t owner) { out[k] = first + (I)owner; });
    }
    if (o.ranks) {
        I *const out = (I *)o.ranks + j0 + threadIdx.x;
        const uint64_t slot = j0 + threadIdx.x;
        ps_expand_rows<FULL>(s, word0, len, [&](int k, uint32_t owner) {
            out[k] = (I)(slot + k - s.start(owner));
        });
    }
    switch (o.value_bytes) {
    case 1: ps_expand_gather<uint8_t, FULL>(o, s, word0, item0, j0, len); break;
    case 2: ps_expand_gather<uint16_t, FULL>(o, s, word0, item0, j0, len); break;
    case 4: ps_expand_gather<uint32_t, FULL>(o, s, word0, item0, j0, len); break;
    case 8: ps_expand_gather<uint64_t, FULL>(o, s, word0, item0, j0, len); break;
    default: break;
    }
}

/* How many of the tile's items start at or below x (all 32 lanes of a warp call): a 32-way search, each round
 * one probe per lane and a ballot, so 3 rounds of shared-memory latency for 6144 items instead of 13. */
template <class S>
static __device__ __forceinline__ uint32_t ps_expand_rank(const S &s, uint32_t valid, uint64_t x,
                                                          uint32_t lane) {
    uint32_t lo = 0, hi = valid; /* items below lo start at or below x; items from hi on start past it */
    while (lo < hi) {
        const uint32_t step = (hi - lo + PS_WARP_LANES - 1) / PS_WARP_LANES, probe = lo + lane * step;
        const bool below = probe < hi && s.starts[S::at(probe)] <= x;
        const uint32_t c = __popc(__ballot_sync(PS_WARP_ALL, below)); /* the probes below x come first */
        if (c == 0) break;
        const uint32_t next = lo + c * step;
        lo += (c - 1) * step + 1;
        if (next < hi) hi = next;
    }
    return lo;
}

/* Warps 0 and 1 put the items of chunk [j0, j1) in s.range: the one owning j0, and one past the last starting
 * before j1 (the caller's next barrier publishes them). */
template <class S>
static __device__ __forceinline__ void ps_expand_chunk_items(S &s, uint32_t valid, uint64_t j0, uint64_t j1) {
    const uint32_t lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
    if (warp < 2) {
        const uint32_t r = ps_expand_rank(s, valid, warp ? j1 - 1 : j0, lane);
        if (lane == 0) s.range[warp] = warp ? r : r - 1;
    }
}

/* The owner of each slot of [j0, j1) into s.owner by marks: each item's first slot gets (gen, its index + 1), then
 * an inclusive max-scan over the chunk hands every slot the last mark at or before it. gen numbers the block's
 * chunks from 1 up, so no mark is ever cleared: slot 0 always holds this chunk's mark, above every older one, and
 * the max passes over the rest (clearing cost a shared store a slot: 3.5-5% at average 64, H200, 2026-11-28). */
template <class S>
static __device__ __forceinline__ void ps_expand_owners_by_marks(S &s, uint32_t valid, uint64_t j0, uint64_t j1,
                                                                 uint32_t gen) {
    const uint32_t lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;

    /* ---- warps 0 and 1 find the chunk's items ---- */
    ps_expand_chunk_items(s, valid, j0, j1);
    __syncthreads();

    /* ---- mark: each item's first slot (items with no slots mark nothing) ---- */
    const uint32_t first = s.range[0], last = s.range[1], tag = gen << PS_EXPAND_MARK_ITEM_BITS;
    if (threadIdx.x == 0) s.owner[0] = tag | (first + 1);
    for (uint32_t i = first + 1 + threadIdx.x; i < last; i += PS_EXPAND_THREADS) {
        const uint64_t start = s.starts[S::at(i)];
        if (s.starts[S::at(i + 1)] > start) s.owner[ps_expand_mark_at((uint32_t)(start - j0))] = tag | (i + 1);
    }
    __syncthreads();

    /* ---- scan: inclusive max over the whole chunk, a run of CHUNK_VT per thread held in registers ---- */
    const uint32_t base = ps_expand_mark_at(threadIdx.x * PS_EXPAND_CHUNK_VT);
    uint32_t v[PS_EXPAND_CHUNK_VT], run = 0;
#pragma unroll
    for (int k = 0; k < PS_EXPAND_CHUNK_VT; k++) run = max(run, v[k] = s.owner[base + k]);
    const uint32_t inclusive = ps_warp_inclusive(run, lane, ps_expand_max());
    if (lane == PS_WARP_LANES - 1) s.warp_max[warp] = inclusive;
    __syncthreads();
    run = __shfl_up_sync(PS_WARP_ALL, inclusive, 1);
    if (lane == 0) run = 0;
#pragma unroll
    for (int w = 0; w < PS_EXPAND_WARPS; w++)
        if (w < (int)warp) run = max(run, s.warp_max[w]);
#pragma unroll
    for (int k = 0; k < PS_EXPAND_CHUNK_VT; k++) s.owner[base + k] = run = max(run, v[k]);
}

/* Writes slots [j0, j1) of the tile whose first item is item0 and whose `valid` starts (and end) are in
 * s.starts; start(0) <= j0 < j1 <= end, j1 - j0 <= CHUNK; gen: the chunk's number in the block (from 1). Called by
 * the whole block; leaves s.starts as it was. */
template <class I, class S>
static __device__ __forceinline__ void ps_expand_chunk(const ps_expand_out &o, S &s, uint32_t valid,
                                                       uint64_t item0, uint64_t j0, uint64_t j1, uint32_t gen) {
    const uint32_t len = (uint32_t)(j1 - j0);
    ps_expand_owners_by_marks(s, valid, j0, j1, gen);
    __syncthreads();

    /* ---- store ---- */
    if (len == PS_EXPAND_CHUNK)
        ps_expand_store<I, true>(o, s, 0, item0, j0, len);
    else
        ps_expand_store<I, false>(o, s, 0, item0, j0, len);
    __syncthreads(); /* owner, range (and, in the second pass, starts) are refilled next */
}

/* ---- 1. the counts' scan, expanding its own tiles: a tile program on the chain ------------------------- */

struct ps_expand_carry {
    uint64_t slots, deferred; /* every slot before; those of them in deferred tiles */
};

template <class C, class I, int ITEMS_> struct ps_expand_scan_program {
    typedef ps_expand_carry carry;
    typedef ps_expand_tile_smem<C, ITEMS_> smem;
    typedef smem S;
    enum {
        THREADS = PS_EXPAND_THREADS,
        MIN_BLOCKS =
            sizeof(C) == 4 && ITEMS_ > PS_EXPAND_SMALL_ITEMS ? PS_EXPAND_LARGE_MIN_BLOCKS : PS_EXPAND_MIN_BLOCKS,
        ITEMS = ITEMS_,
        TILE = smem::TILE,
        WARPS = PS_EXPAND_WARPS,
        EARLY = ITEMS_ <= PS_EXPAND_EARLY_ITEMS
    };
    struct params {
        const C *counts;
        uint64_t *firsts;  /* deferred tiles' first slots */
        uint64_t *dprefix; /* per tile the deferred slots before it; entry tiles: all of them */
        uint64_t *total;   /* the caller's, any address */
        ps_expand_out out;
        uint64_t n, capacity;
        uint32_t tiles;
        int own_all; /* PS_EXPAND_OWN_ALL: the capacity is within a tile's budget, no tile defers */
    };
    struct local {
        uint32_t valid;
    };
    enum : uint32_t { LIMIT = PS_EXPAND_BUDGET * TILE }; /* the slots a tile writes itself, and its bits */

    static __device__ __forceinline__ carry combine(carry a, carry b) {
        carry c = {ps_add_saturating(a.slots, b.slots), ps_add_saturating(a.deferred, b.deferred)};
        return c;
    }
    static __device__ __forceinline__ carry identity() {
        carry c = {0, 0};
        return c;
    }
    static __device__ __forceinline__ carry initial(const params &) { return identity(); }

    /* The counts tile `tile` reads, asked of L2 ahead of it (chain/single_pass.cuh). */
    static __device__ __forceinline__ void prefetch(const params &p, uint32_t tile) {
        const uint64_t b = (uint64_t)tile * TILE;
        ps_block_prefetch_l2<THREADS>(p.counts + b, p.counts + (p.n - b < (uint64_t)TILE ? p.n : b + TILE));
    }

    static __device__ __forceinline__ carry reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const uint64_t base = (uint64_t)id * TILE, left = p.n - base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load: coalesced rows into shared memory (zeros past the end) ---- */
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t i = k * THREADS + threadIdx.x;
            s.counts[S::at(i)] = i < l.valid ? p.counts[base + i] : (C)0;
        }
#pragma unroll
        for (int j = 0; j < S::THREAD_WORDS; j++) s.word[j * THREADS + threadIdx.x].x = 0; /* consume sets them */
        __syncthreads();

        /* ---- reduce: each thread its run of ITEMS consecutive counts (4-byte ones cannot overflow 64 bits there),
         * then the block in thread order ---- */
        uint64_t sum = 0;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint64_t count = s.counts[S::at(threadIdx.x * ITEMS + k)];
            sum = sizeof(C) == 4 ? sum + count : ps_add_saturating(sum, count);
        }
        const uint64_t inclusive = ps_warp_inclusive(sum, lane, ps_expand_sum());
        const uint64_t before = ps_shfl_up(inclusive, 1);
        if (lane == PS_WARP_LANES - 1) s.warp_sums[warp] = inclusive;
        /* read only by tiles that write their own slots, clamped at LIMIT as warp_before */
        s.run_before[threadIdx.x] = lane ? (uint32_t)(before > LIMIT ? LIMIT : before) : 0u;
        __syncthreads();
        uint64_t aggregate = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) aggregate = ps_add_saturating(aggregate, s.warp_sums[w]);
        carry c = {aggregate, !p.own_all && aggregate > (uint64_t)LIMIT ? aggregate : 0};
        return c;
    }

    /* The slots before warp w's runs in the tile, clamped at LIMIT: only a tile that writes its own slots asks,
     * and it has at most LIMIT of them, or (own_all) writes none past LIMIT, its capacity being below it. */
    static __device__ __forceinline__ uint32_t warp_before(const smem &s, uint32_t w) {
        uint64_t b = 0;
#pragma unroll
        for (int v = 0; v < WARPS; v++)
            if (v < (int)w) b += s.warp_sums[v] < LIMIT ? s.warp_sums[v] : LIMIT; /* (u64 counts: no wrap) */
        return b < LIMIT ? (uint32_t)b : (uint32_t)LIMIT;
    }
    /* Run r (the ITEMS counts of thread r in reduce): each count replaced by its item's start in the tile, a bit at
     * each nonzero item's first slot, the run's nonzero items in run_nonzero. CLAMP (own_all, whose tile may pass
     * LIMIT slots): starts held at LIMIT (64-bit sums: a count may pass 2^32) and items from there left out, as
     * their slots lie past the capacity; without it the tile's slots are at most LIMIT. */
    template <bool CLAMP>
    static __device__ __forceinline__ void bits_of_run(smem &s, uint32_t r, uint32_t before_warp) {
        uint32_t q = before_warp + s.run_before[r], nonzero = 0; /* each at most LIMIT: no wrap */
        if (CLAMP && q > LIMIT) q = LIMIT;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t at = S::at(r * ITEMS + k);
            const C count = s.counts[at];
            s.counts[at] = (C)q;
            if (count && (!CLAMP || q < LIMIT)) {
                atomicOr(&s.word[q / 32].x, 1u << (q % 32));
                nonzero |= 1u << k;
            }
            if (CLAMP)
                q = count < (C)(LIMIT - q) ? q + (uint32_t)count : (uint32_t)LIMIT; /* q <= LIMIT: no wrap */
            else
                q += (uint32_t)count;
        }
        s.run_nonzero[r] = nonzero;
    }
    static __device__ __forceinline__ void bits_of_run(const params &p, smem &s, uint32_t r, uint32_t before_warp) {
        if (PS_EXPAND_OWN_ALL && p.own_all)
            bits_of_run<true>(s, r, before_warp);
        else
            bits_of_run<false>(s, r, before_warp);
    }
    /* What run r adds to the block scan of the bits: the bits set in its THREAD_WORDS words (high 16 bits) and its
     * nonzero items (low 16; at most TILE of each). */
    static __device__ __forceinline__ uint32_t bits_scan_input(const smem &s, uint32_t r) {
        uint32_t set = 0;
#pragma unroll
        for (int j = 0; j < S::THREAD_WORDS; j++) set += __popc(s.word[r * S::THREAD_WORDS + j].x);
        return set << 16 | (uint32_t)__popc(s.run_nonzero[r]);
    }
    /* From run r's exclusive scan: per word of it the bits set before it, per nonzero item its place in nz. */
    static __device__ __forceinline__ void bits_place(smem &s, uint32_t r, uint32_t before) {
        uint32_t bits_before = before >> 16;
#pragma unroll
        for (int j = 0; j < S::THREAD_WORDS; j++) {
            const uint32_t w = r * S::THREAD_WORDS + j;
            s.word[w].y = 2u * bits_before - 2u; /* every slot has a bit at or before it (slot 0's) */
            bits_before += __popc(s.word[w].x);
        }
        const uint32_t place = before & 0xffffu, nonzero = s.run_nonzero[r];
#pragma unroll
        for (int k = 0; k < ITEMS; k++)
            if (nonzero >> k & 1u) s.nz[place + __popc(nonzero & ((1u << k) - 1u))] = (uint16_t)(r * ITEMS + k);
    }

    /* Warps 1-7 (HELPERS threads) build the tile's bits while warp 0 looks back: none of it needs the prefix, only
     * the tile's own counts (the prefix moves every slot by the same amount). They sync among themselves on named
     * barrier 1 (barrier 0 is the block's); the driver's barrier after the look-back hands the bits to consume.
     * 256 runs over 224 threads: warp 1 also does warp 7's runs (v = 224 + lane). */
    enum { HELPERS = THREADS - PS_WARP_LANES };
    static __device__ __forceinline__ void helpers_sync() {
        asm volatile("bar.sync 1, %0;" ::"r"((uint32_t)HELPERS) : "memory");
    }
    static __device__ __forceinline__ bool late(const params &p) { return !EARLY || p.tiles <= PS_EXPAND_LATE_TILES; }
    static __device__ __forceinline__ void early(const params &p, uint32_t, const carry &aggregate, local &, smem &s) {
        if (late(p) || aggregate.deferred) return; /* the second pass writes a deferred tile's slots */
        const uint32_t t = threadIdx.x - PS_WARP_LANES, lane = t % PS_WARP_LANES, g = t / PS_WARP_LANES;
        const bool second = t < THREADS - HELPERS; /* warp 1: runs 224 + lane too */
        bits_of_run(p, s, t, warp_before(s, g));
        if (second) bits_of_run(p, s, HELPERS + t, warp_before(s, WARPS - 1));
        helpers_sync();
        const uint32_t x0 = bits_scan_input(s, t), x1 = second ? bits_scan_input(s, HELPERS + t) : 0u;
        const uint32_t i0 = ps_warp_inclusive(x0, lane, ps_expand_add32());
        const uint32_t i1 = second ? ps_warp_inclusive(x1, lane, ps_expand_add32()) : 0u;
        if (lane == PS_WARP_LANES - 1) {
            s.warp_max[g] = i0;
            if (second) s.warp_max[WARPS - 1] = i1;
        }
        helpers_sync();
        uint32_t before = i0 - x0, all = 0;
#pragma unroll
        for (int w = 0; w < WARPS - 1; w++) {
            if (w < (int)g) before += s.warp_max[w];
            all += s.warp_max[w];
        }
        bits_place(s, t, before);
        if (second) bits_place(s, HELPERS + t, all + i1 - x1);
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, carry prefix, carry aggregate,
                                                   local &l, smem &s) {
#if PS_CHAIN_CONTROL
        /* Tuning only: without the look-back every tile would write the same slots, piling all the stores on a few
         * L2 slices; id x its own aggregate spreads them as the real prefixes do (results wrong by design). */
        prefix.slots = (uint64_t)id * aggregate.slots;
        prefix.deferred = 0;
#endif
        const uint64_t end = ps_add_saturating(prefix.slots, aggregate.slots);
        if (threadIdx.x == 0) {
            p.dprefix[id] = prefix.deferred;
            if (id == p.tiles - 1) {
                p.dprefix[p.tiles] = ps_add_saturating(prefix.deferred, aggregate.deferred);
                ps_store_u64_anywhere(p.total, end);
            }
        }
        if (aggregate.deferred) { /* the second pass writes this tile's slots from its counts and first slot */
            if (threadIdx.x == 0) p.firsts[id] = prefix.slots;
            return;
        }
        if (threadIdx.x == 0) s.slots0 = prefix.slots;
        if (late(p)) {
            bits_of_run(p, s, threadIdx.x, warp_before(s, threadIdx.x / PS_WARP_LANES));
            __syncthreads();
        }
        const uint64_t stop = end < p.capacity ? end : p.capacity;
        if (prefix.slots >= stop) return;
        if (late(p))
            bits_place(s, threadIdx.x, ps_expand_block_exclusive(bits_scan_input(s, threadIdx.x), s.warp_max));
        __syncthreads(); /* the bits (and slots0) */
        /* the chunks' rows read what no thread writes any more: no barrier between them */
        for (uint64_t j0 = prefix.slots, c = 0; j0 < stop; j0 += PS_EXPAND_CHUNK, c++) {
            const uint32_t len = stop - j0 > PS_EXPAND_CHUNK ? PS_EXPAND_CHUNK : (uint32_t)(stop - j0);
            const uint32_t word0 = (uint32_t)c * (PS_EXPAND_CHUNK / 32);
            if (len == PS_EXPAND_CHUNK)
                ps_expand_store<I, true>(p.out, s, word0, (uint64_t)id * TILE, j0, len);
            else
                ps_expand_store<I, false>(p.out, s, word0, (uint64_t)id * TILE, j0, len);
        }
    }
};

/* ---- 2. the deferred tiles' slots, shared evenly ------------------------------------------------------- */

struct ps_expand_params {
    const void *counts;               /* C */
    const uint64_t *firsts, *dprefix; /* as the scan program's */
    ps_expand_out out;
    uint64_t n, capacity;
    uint32_t tiles;
};

/* The last tile t in [from, tiles) with dprefix[t] <= d, given dprefix[from] <= d: galloping, since the next
 * deferred tile is usually the next tile, and a binary search when it is far. */
static __device__ __forceinline__ uint32_t ps_expand_find_tile(const uint64_t *dprefix, uint32_t from, uint32_t tiles,
                                                               uint64_t d) {
    uint32_t lo = from, step = 1;
    while (step < tiles - lo && dprefix[lo + step] <= d) lo += step, step *= 2;
    uint32_t hi = step < tiles - lo ? lo + step : tiles;
    while (hi - lo > 1) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (dprefix[mid] <= d)
            lo = mid;
        else
            hi = mid;
    }
    return lo;
}

/* A deferred tile's starts from its counts: first (+) the exclusive sums, saturating as the first pass's (the same
 * values: a saturating sum of counts is associative), into s.starts; every entry from `valid` on, and the one past
 * the tile, holds its end. Each thread scans a run of ITEMS, then the block in thread order. Ends on a barrier. */
template <class C, class S>
static __device__ __forceinline__ void ps_expand_starts_of(S &s, const C *counts, uint32_t valid, uint64_t first) {
    const uint32_t lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
#pragma unroll
    for (int k = 0; k < S::ITEMS; k++) {
        const uint32_t i = k * PS_EXPAND_THREADS + threadIdx.x;
        s.starts[S::at(i)] = i < valid ? (uint64_t)counts[i] : 0;
    }
    __syncthreads();
    uint64_t sum = 0;
#pragma unroll
    for (int k = 0; k < S::ITEMS; k++) sum = ps_add_saturating(sum, s.starts[S::at(threadIdx.x * S::ITEMS + k)]);
    const uint64_t inclusive = ps_warp_inclusive(sum, lane, ps_expand_sum());
    const uint64_t before = ps_shfl_up(inclusive, 1);
    if (lane == PS_WARP_LANES - 1) s.warp_sums[warp] = inclusive;
    __syncthreads();
    uint64_t running = first;
#pragma unroll
    for (int w = 0; w < PS_EXPAND_WARPS; w++)
        if (w < (int)warp) running = ps_add_saturating(running, s.warp_sums[w]);
    if (lane) running = ps_add_saturating(running, before);
#pragma unroll
    for (int k = 0; k < S::ITEMS; k++) {
        const uint32_t at = S::at(threadIdx.x * S::ITEMS + k);
        const uint64_t count = s.starts[at];
        s.starts[at] = running;
        running = ps_add_saturating(running, count);
    }
    if (threadIdx.x == PS_EXPAND_THREADS - 1) s.starts[S::at(S::TILE)] = running;
    __syncthreads();
}

/* The chunk's shared memory as the chain driver sees a program's: static up to 48 KiB, dynamic past it. */
template <int ITEMS> struct ps_expand_smem_of {
    typedef ps_expand_smem<ITEMS> smem;
};

/* No launch bound beyond the block size: the second pass runs 125 registers, and its 84 KiB of shared memory keep 2
 * blocks on an SM. Capped at 80 or 64 registers (bounds of 3 and 4 blocks, no spill) it ran slower, average count
 * 64 at 2^24 0.745 -> 0.723 / 0.727 of copy (H200, twenty-third session, docs/bench/h200-expand-caps.csv). */
template <class C, class I, int ITEMS>
__global__ void __launch_bounds__(PS_EXPAND_THREADS) ps_expand_deferred_kernel(const ps_expand_params p) {
    typedef ps_expand_smem<ITEMS> S;
    enum { TILE = S::TILE };
    __shared__ typename ps_chain_smem<ps_expand_smem_of<ITEMS>>::static_type s_static;
    extern __shared__ __align__(PS_DYNAMIC_SMEM_ALIGN) uint4 ps_expand_dynamic[];
    S &s = ps_chain_program_smem<ps_expand_smem_of<ITEMS>>(s_static, ps_expand_dynamic);
    __shared__ uint32_t s_tile;
    if (PS_EXPAND_PDL) ps_pdl_wait(); /* the scan has ended: its firsts and prefixes are visible */
    /* deferred slot d of tile t is slot start(t) + d - dprefix[t]: the mapping only grows, so those below the
     * capacity are the first min(total, capacity) or fewer */
    const uint64_t total = p.dprefix[p.tiles], useful = total < p.capacity ? total : p.capacity;
    const uint64_t share = (useful + gridDim.x - 1) / gridDim.x;
    uint64_t d = (uint64_t)blockIdx.x * share;
    const uint64_t d_end = d + share < useful ? d + share : useful;
    uint32_t t = 0, gen = 0; /* gen: the chunks so far, the marks' numbers (the marks start cleared) */
    for (uint32_t q = threadIdx.x; q < sizeof s.owner / 4; q += PS_EXPAND_THREADS) s.owner[q] = 0;
    while (d < d_end) {
        if (threadIdx.x == 0) s_tile = ps_expand_find_tile(p.dprefix, t, p.tiles, d);
        __syncthreads();
        t = s_tile;
        const uint64_t item0 = (uint64_t)t * TILE, left = p.n - item0;
        const uint32_t valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        ps_expand_starts_of(s, (const C *)p.counts + item0, valid, p.firsts[t]);
        const uint64_t t_first = p.dprefix[t], t_end = p.dprefix[t + 1], start = s.starts[0];
        const uint64_t stop = d_end < t_end ? d_end : t_end;
        while (d < stop) { /* at least once: t holds d, so d < t_end */
            const uint64_t j0 = start + (d - t_first), len = stop - d < PS_EXPAND_CHUNK ? stop - d : PS_EXPAND_CHUNK;
            if (j0 >= p.capacity) return;
            if (++gen == 1u << (32 - PS_EXPAND_MARK_ITEM_BITS)) { /* the numbers wrap: clear the marks */
                for (uint32_t q = threadIdx.x; q < sizeof s.owner / 4; q += PS_EXPAND_THREADS) s.owner[q] = 0;
                gen = 1; /* (the last chunk ended on a barrier, and the next chunk's first barrier follows) */
            }
            ps_expand_chunk<I>(p.out, s, valid, item0, j0, j0 + len < p.capacity ? j0 + len : p.capacity, gen);
            d += len;
        }
        t++;
    }
}

/* ---- host side ----------------------------------------------------------------------------------------- */

/* Where each piece lives in temp, every piece 256-byte aligned. */
typedef struct expand_layout {
    int items; /* counts per thread of a tile: PS_EXPAND_ITEMS or PS_EXPAND_SMALL_ITEMS, by n */
    uint64_t tiles;
    size_t chain, firsts, dprefix, bytes;
} expand_layout;

static expand_layout expand_layout_of(uint64_t n) {
    expand_layout L;
    L.items = n >= PS_EXPAND_LARGE_FROM ? PS_EXPAND_ITEMS : PS_EXPAND_SMALL_ITEMS;
    const uint64_t tile = (uint64_t)L.items * PS_EXPAND_THREADS;
    L.tiles = ps_cuda_div_up(n, tile);
    L.chain = 0;
    L.firsts = L.chain + ps_cuda_align(ps_chain_temp_bytes<ps_expand_carry>(L.tiles));
    L.dprefix = L.firsts + ps_cuda_align((size_t)L.tiles * 8);
    L.bytes = L.dprefix + (size_t)(L.tiles + 1) * 8;
    return L;
}

pscan_status ps_cuda_expand_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const expand_layout L = expand_layout_of(req->n);
    if (L.tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = req->n > 0 ? L.bytes : 0;
    return PSCAN_SUCCESS;
}

/* Whether no tile of the call defers (PS_EXPAND_OWN_ALL): its capacity is within a tile's budget. */
static bool expand_own_all(const ps_request *req, int items) {
    return PS_EXPAND_OWN_ALL && req->capacity <= (uint64_t)PS_EXPAND_BUDGET * items * PS_EXPAND_THREADS;
}

template <class C, class I, int ITEMS>
static cudaError_t expand_scan(const ps_request *req, const expand_layout &L, const ps_expand_out &out, bool own_all,
                               const ps_cuda_device *dev) {
    typedef ps_expand_scan_program<C, I, ITEMS> P;
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.counts = (const C *)req->in;
    p.firsts = (uint64_t *)((char *)req->temp + L.firsts);
    p.dprefix = (uint64_t *)((char *)req->temp + L.dprefix);
    p.total = (uint64_t *)req->count;
    p.out = out;
    p.n = req->n;
    p.capacity = req->capacity;
    p.tiles = (uint32_t)L.tiles;
    p.own_all = own_all;
    return ps_chain_single_pass<P>(p, p.tiles, (char *)req->temp + L.chain, dev->stream);
}

/* Blocks of the deferred kernel resident on an SM of the current device, after its attributes are set (asked once
 * a device through ps_chain_per_device, as the chain drivers do); -1 when the query failed, which is not cached
 * and leaves its error to cudaGetLastError. */
template <class C, class I, int ITEMS> static int expand_deferred_per_sm_ask(void) {
    int per_sm = 0;
    const size_t dynamic = ps_chain_dynamic_bytes<ps_expand_smem_of<ITEMS>>();
    if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ps_expand_deferred_kernel<C, I, ITEMS>,
                                                      PS_EXPAND_THREADS, dynamic) != cudaSuccess)
        return -1;
    return per_sm < 1 ? 1 : per_sm;
}

template <class C, class I, int ITEMS>
static cudaError_t expand_deferred(const ps_expand_params &p, const ps_cuda_device *dev) {
    /* enough blocks to fill the device, each taking an even share of the deferred slots */
    const size_t dynamic = ps_chain_dynamic_bytes<ps_expand_smem_of<ITEMS>>();
    static bool attributes_set[PS_CHAIN_DEVICES]; /* a device's own, as the occupancy below (the chain drivers') */
    const cudaError_t err =
        ps_chain_kernel_attributes_once(ps_expand_deferred_kernel<C, I, ITEMS>, dynamic, attributes_set);
    if (err != cudaSuccess) return err;
    const int per_sm = ps_chain_per_device<expand_deferred_per_sm_ask<C, I, ITEMS>>();
    if (per_sm < 0) {
        const cudaError_t failed = cudaGetLastError();
        return failed != cudaSuccess ? failed : cudaErrorUnknown;
    }
    unsigned grid = (unsigned)(dev->sm_count * per_sm);
    if (PS_EXPAND_GRID_BY_CAPACITY) { /* a chunk of the at most capacity deferred slots a block */
        const uint64_t need = ps_cuda_div_up(p.capacity, (uint64_t)PS_EXPAND_CHUNK);
        if (need < grid) grid = (unsigned)(need ? need : 1);
    }
    return ps_pdl_launch(PS_EXPAND_PDL != 0, ps_expand_deferred_kernel<C, I, ITEMS>, dim3(grid), dim3(PS_EXPAND_THREADS),
                         dynamic, dev->stream, p);
}

/* Both launches at one tile shape. */
template <int ITEMS>
static cudaError_t expand_shaped(const ps_request *req, const expand_layout &L, const ps_expand_out &out,
                                 const ps_cuda_device *dev) {
    const bool u32_counts = req->type == PSCAN_TYPE_U32, u32_indices = req->index_type == PSCAN_TYPE_U32;

    const bool own_all = expand_own_all(req, ITEMS); /* then no tile defers: no second launch */

    /* ---- 1. scan + expand ---- */
    PS_CUDA_TRY(u32_counts ? (u32_indices ? expand_scan<uint32_t, uint32_t, ITEMS>(req, L, out, own_all, dev)
                                          : expand_scan<uint32_t, uint64_t, ITEMS>(req, L, out, own_all, dev))
                           : (u32_indices ? expand_scan<uint64_t, uint32_t, ITEMS>(req, L, out, own_all, dev)
                                          : expand_scan<uint64_t, uint64_t, ITEMS>(req, L, out, own_all, dev)));
    if (req->capacity == 0 || own_all || PS_EXPAND_CONTROL_FIRST) return cudaSuccess;

    /* ---- 2. deferred ---- */
    ps_expand_params p;
    memset(&p, 0, sizeof p);
    p.counts = req->in;
    p.firsts = (const uint64_t *)((char *)req->temp + L.firsts);
    p.dprefix = (const uint64_t *)((char *)req->temp + L.dprefix);
    p.out = out;
    p.n = req->n;
    p.capacity = req->capacity;
    p.tiles = (uint32_t)L.tiles;
    return u32_counts ? (u32_indices ? expand_deferred<uint32_t, uint32_t, ITEMS>(p, dev)
                                     : expand_deferred<uint32_t, uint64_t, ITEMS>(p, dev))
                      : (u32_indices ? expand_deferred<uint64_t, uint32_t, ITEMS>(p, dev)
                                     : expand_deferred<uint64_t, uint64_t, ITEMS>(p, dev));
}

cudaError_t ps_cuda_expand_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    const expand_layout L = expand_layout_of(req->n);
    ps_expand_out out;
    memset(&out, 0, sizeof out);
    out.values = req->in2;
    out.indices = req->out;
    out.ranks = req->ranks;
    out.values_out = req->out2;
    out.value_bytes = (uint32_t)req->value_bytes;
    return L.items == PS_EXPAND_ITEMS ? expand_shaped<PS_EXPAND_ITEMS>(req, L, out, dev)
                                      : expand_shaped<PS_EXPAND_SMALL_ITEMS>(req, L, out, dev);
}
