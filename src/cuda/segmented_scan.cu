/*
 * segmented_scan.cu - segmented scan and scan by key, as one tile program on the single-pass chain driver
 * (chain/single_pass.cuh). The segments come as head flags, CSR offsets or runs of equal keys.
 *
 * The carry is a pair (f, v): v the running value of the segment open at the end of everything before, f
 * whether a segment starts anywhere in it. The segmented combine
 *     (fa, a) . (fb, b) = (fa | fb, fb ? b : a (+) b)
 * is associative and, like the operator, never commutative; (0, identity) is its identity. The value is the
 * segment's own running value without init: results are init (+) v, so init sits in front of every segment.
 *
 * Scan order. A reverse scan is a forward scan of the mirrored input, whose segments start where the physical
 * ones end. Either way the tile needs b(i) = "a segment starts at physical i" for one physical window:
 * b(p) for a forward tile, b(p + 1) for a reverse one (p in the tile). From head flags b(i) = flags[i] != 0;
 * from keys b(i) = key[i] != key[i - 1] (bit for bit); from offsets b(i) = i is one of the offsets, which a
 * tile marks in shared memory from the offsets that fall in its window (found by a short kernel before the
 * chain: one binary search per tile end, and the check of the offsets).
 *
 * The tile program (256 threads x ITEMS items, blocked; 32 items for elements of up to 4 bytes, 16 for 8):
 *  - reduce: the tile goes to shared memory with its boundary bits. An aligned, forward tile by head flags or keys
 *    (the fast tile: every tile of such a call, the partial last one included, FAST_PARTIAL) is copied with
 *    cp.async, values as 16-byte vectors and head bytes as 16-byte chunks, in a swizzled layout (ps_segscan_swz),
 *    so no register holds data in flight; other tiles (reverse, unaligned, by offsets) load a batch of rows at a
 *    time into a padded layout (ps_segscan_pad). Each thread then scans its ITEMS consecutive items in scan order
 *    as pairs (a head restarts the value), in place, scans its pair across the warp (in-order shuffles) and the
 *    warp totals across the block. The tile's pair is the aggregate.
 *  - The carry absorbs: a pair with a head in it (f = 1) is its own inclusive prefix whatever came before, bit
 *    for bit. So such a tile publishes its inclusive prefix with its aggregate (absorbs(), chain/single_pass.cuh):
 *    no tile waits for another's look-back, only for its load. And during warp 0's look-back the other warps
 *    whose pair before them in the tile has a head finish and store their part (early()): the look-back's round
 *    trip hides behind their stores, and after it only the warps before the tile's first head are left.
 *  - consume(prefix): each thread's pair before its first item is prefix . warp prefix . lane prefix; item j
 *    gets v_j = (head in the thread's items up to j) ? local v_j : prefix v (+) local v_j, and writes
 *    init (+) v_j (inclusive) or init / init (+) v_(j-1) (exclusive, init at a head). Fast tiles store each
 *    warp's contiguous stretch coalesced from shared memory (no block barrier); others go back through shared
 *    memory and out coalesced. In place is safe: a tile reads all of its input before it writes.
 *  - Offsets: the short kernel first checks offsets[0] == 0, ascending, offsets[count] == n into a word in
 *    temp; every tile reads it and, if the offsets are bad, writes nothing (so a bad call leaves out as it
 *    was, and never reads out of bounds). With PSCAN_SEGSCAN_CHECK_OFFSETS the host waits for the word.
 *
 * Work O(n) (+ O(segments) for offsets); depth: one tile plus n / (tile * 32) look-back rounds (none where tiles
 * hold heads). Global memory: n values in and out, n flags or n keys (plus one key per tile) in, or each offset
 * read twice; carries of 8-16 bytes: 16- or 32-byte status entries, two per tile.
 *
 * Measured (tools/tune/tune_segscan.cu, i32 sum, u8 head flags, segments of 1000 on average, L2 written over
 * before each call, median of 21; NVIDIA H200, CUDA 13.0, CUB 3.0.1; 2026-11-26, docs/bench/h200-segscan-*.csv),
 * of copy (5n bytes in, 4n out) / against CUB's InclusiveSumByKey: 2^20 0.98-1.00 / 1.66-1.69x, 2^24 0.90-0.91 /
 * 1.40-1.41x, 2^28 0.913 / 1.39-1.40x; the same tiles without the look-back (wrong results, a control): 0.99.
 * The steps, each measured at 2^28 in the same harness: 16 items held in registers across the look-back 0.66;
 * with the absorbing carry 0.69; cp.async tiles of 32 items 0.86 (of 16 items: 0.71; 32 items without cp.async:
 * 0.74); early() 0.84 -> with a window of 32 tiles instead of 64 and 5 blocks per SM 0.91. Before the absorbing
 * carry, larger tiles did not help at all (0.66 with 16 or 32 items, async or not): every tile waited for the
 * look-back of the tile 64 before it, so the chain, not the loads, set the pace.
 */
#include <stdint.h>
#include <string.h>

#include "block/ops.cuh"
#include "block/rows.cuh"
#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

/* Tuning knobs (tools/tune/tune_segscan.cu; the header says what each step measured). ITEMS4 / ITEMS8: items per
 * thread for elements of up to 4 / of 8 bytes (at most 32: a thread's head bits are one word; the fast path takes
 * 16 or 32). MIN_BLOCKS4 / 8: the launch bounds' blocks per SM. LANE_ENTRIES: the chain's look-back entries per
 * lane (window 32 x E tiles; with absorbing carries a wide window buys nothing and costs reads). VEC_LOADS: the
 * fast path (below; 0: every tile item by item). PARK: other tiles' scanned values wait for the look-back in
 * shared memory instead of registers. EARLY: below. History: the H100 sweep of 2026-11-23
 * (docs/bench/h100-segscan-variants.csv) chose register loads + PARK, 16 items, 2 blocks per SM, window 64: 0.81 of
 * copy there, 0.66 on the H200. */
#ifdef PS_SEGSCAN_ITEMS /* one value for every element size (tools/tune) */
#define PS_SEGSCAN_ITEMS4 PS_SEGSCAN_ITEMS
#define PS_SEGSCAN_ITEMS8 PS_SEGSCAN_ITEMS
#endif
#ifndef PS_SEGSCAN_ITEMS4
#define PS_SEGSCAN_ITEMS4 32 /* elements of up to 4 bytes */
#endif
#ifndef PS_SEGSCAN_ITEMS8
#define PS_SEGSCAN_ITEMS8 16 /* 8-byte elements: 32 would not fit 48 KiB of static shared memory */
#endif
#ifdef PS_SEGSCAN_MIN_BLOCKS
#define PS_SEGSCAN_MIN_BLOCKS4 PS_SEGSCAN_MIN_BLOCKS
#define PS_SEGSCAN_MIN_BLOCKS8 PS_SEGSCAN_MIN_BLOCKS
#endif
#ifndef PS_SEGSCAN_MIN_BLOCKS4
#define PS_SEGSCAN_MIN_BLOCKS4 5
#endif
#ifndef PS_SEGSCAN_MIN_BLOCKS8
#define PS_SEGSCAN_MIN_BLOCKS8 5
#endif
/* The fast tile (VEC_LOADS: full, forward, by head flags 16-byte aligned or by keys, values 16-byte aligned, 16 or
 * 32 items a thread) is copied into shared memory with cp.async, values as 16-byte vectors and head bytes as
 * 16-byte chunks, in a swizzled layout (ps_segscan_swz) that is conflict-free both for the coalesced copies and for
 * each thread's reads of its own consecutive items. No register holds data in flight, so the blocks per SM are
 * bounded by shared memory and the tile can grow. (Loading the same tile through registers, the first fast path,
 * measured 0.74 of copy against 0.86 at 32 items on the H200, docs/bench/h200-segscan-absorb.csv.) */
/* EARLY: warps with a head before them in the tile finish during the look-back (early() below). */
#ifndef PS_SEGSCAN_EARLY
#define PS_SEGSCAN_EARLY 1
#endif
#define PS_SEGSCAN_ITEMS_OF(bytes) ((bytes) <= 4 ? PS_SEGSCAN_ITEMS4 : PS_SEGSCAN_ITEMS8)
#define PS_SEGSCAN_MIN_BLOCKS_OF(bytes) ((bytes) <= 4 ? PS_SEGSCAN_MIN_BLOCKS4 : PS_SEGSCAN_MIN_BLOCKS8)
#ifndef PS_SEGSCAN_LANE_ENTRIES
#define PS_SEGSCAN_LANE_ENTRIES 1
#endif
#ifndef PS_SEGSCAN_VEC_LOADS
#define PS_SEGSCAN_VEC_LOADS 1
#endif
#ifndef PS_SEGSCAN_PARK
#define PS_SEGSCAN_PARK 1
#endif
/* LOAD_BATCH: the other tiles (partial, reverse, unaligned, by offsets) load their rows this many at a time into
 * registers, values and boundary bits, before any of them goes to shared memory; 1 (or less) loads, tests and stores
 * row by row, as before the thirtieth session (its own loop was removed then). 4 since the thirtieth session: H200,
 * tune_segscan (i32 sums by flags, docs/bench/h200-segscan-batch.csv), the one-tile calls of 2^10 / 2^11 / 2^12 items
 * 10.50 / 12.58 / 15.78 us -> 10.14 / 10.66 / 11.68 (0.69 / 0.70 / 0.53x CUB -> 0.73 / 0.83 / 0.72), full tiles
 * (2^13-2^16) unchanged; 8 was faster there still (8.70 / 9.06 / 9.41) but spills (the launch bound's 5 blocks a SM cap
 * the registers) and the full tiles lost 5-9 %. Why batch at all: `pscan bench` on an H200 (2026-11-26, the
 * h200-segscan.csv of then) timed the one-tile calls of 2^10 / 2^11 / 2^12 items (a partial tile: this path) at 10.9 /
 * 12.5 / 15.4 us against 5.7 us for the full tile of 2^13 (the fast path), about 0.37 us more per row that has items:
 * each row's loads wait for the row before (0.35 of copy in select.cu before its loads were hoisted the same way). The
 * SASS says so (nvdisasm, docs/tuning.md): row by row, every row is a branch of its own (value and flag loads, then
 * the stores that wait for them); with 8, the loads of 8 rows issue together. */
#ifndef PS_SEGSCAN_LOAD_BATCH
#define PS_SEGSCAN_LOAD_BATCH 4
#endif
/* KEY_BATCH: a fast tile by keys reads each row's keys and the keys one before them (every lane its own, an L1 hit)
 * this many rows at a time, then writes their head bytes. Before the thirtieth session a row at a time, the key before
 * from the lane before (a shuffle) and lane 0's from memory, in a branch (the SASS showed lane 0's load in a branch of
 * its own each row); that form was removed, 1 is the nearest to it. 8 since the thirtieth session: H200, `pscan bench
 * --primitive scan_by_key` i32, two builds in one call (docs/bench/builds/h200-scan-by-key-keybatch0.csv and
 * -keybatch8.csv), 2^13 / 2^16 / 2^20: 11.04 / 12.45 / 14.27 us -> 8.58 / 9.63 / 11.46, 0.84 / 0.80 / 0.99x CUB -> 1.08
 * / 1.01 / 1.22x; the one-tile calls (2^10-2^12, the general path) and the segmented scan by flags unchanged. */
#ifndef PS_SEGSCAN_KEY_BATCH
#define PS_SEGSCAN_KEY_BATCH 8
#endif
/* FAST_PARTIAL: a forward aligned tile by flags or keys that is not full (the last tile of a call; the only one of a
 * call of fewer items than a tile) takes the fast path too: cp.async copies the bytes before the tile's end and fills
 * the rest of its 16-byte units with zeros (a copy of 0 bytes reads nothing), values and heads; the zero items come
 * after every item of the tile in scan order, so no result depends on them (only the tile's aggregate does, and
 * nothing reads the last tile's); the stores stop at the end; such a tile does not finish early (early() keeps the
 * full tile's plain stores, and the registers). 0: those tiles take the general path, LOAD_BATCH rows at a time. 1
 * since the thirty-first session: H200, tools/tune/tune_segscan.cu (i32 sums by u8 flags, L2 written before each call,
 * median of 20, two rounds agreeing within 0.5 us; docs/bench/h200-segscan-partial.csv), against CUB's
 * InclusiveSumByKey: one-tile calls 2^10 / 2^11 / 2^12 8.29 / 8.80 / 9.86 us -> 5.86 / 6.02 / 6.02 (0.89 / 1.01 /
 * 0.85x -> 1.26 / 1.47 / 1.39x); a partial last tile cost up to 8 us at mid sizes (1,048,573 items: 16.99 us against
 * 8.67 for 2^20) and now about 1: 1,048,573 9.70 us (0.85 -> 1.49x), 12,345 12.48 -> 7.30, 1,000,001 12.90 -> 9.57,
 * 10,000,019 38.11 -> 32.80, 268,435,459 598 -> 614. The price, where n is a whole number of tiles (the per-unit size
 * arithmetic and a larger kernel, by the SASS; its 4 bytes of "spill" are one predicate stored once: LEAN_PARTIAL
 * below), 2^13 / 2^20 / 2^24 / 2^28 5.89 / 8.67 / 46.5 / 596 us -> 6.69 / 9.57 / 48.9 / 613 (1.50 -> 1.32x, 1.65 ->
 * 1.49x, 1.42 -> 1.35x, 1.45 -> 1.41x CUB); by keys (`pscan bench --primitive scan_by_key`, gpu-check, same day,
 * docs/bench/h200-scan-by-key.csv against the CSV before) the same ~1 us took 2^13-2^17 from 1.0-1.1x CUB to
 * 0.90-0.95x, and its one-tile calls moved 2^10 / 2^11 / 2^12 10.62 / 11.10 / 12.13 -> 8.48 / 10.18 / 13.06 us
 * (docs/tuning.md: next). (Tried in the same runs: the full tiles' copies kept without the size operand beside a
 * partial loop: 64 bytes of spill and 10 % off at 2^28; a partial path out of line (noinline): 47 us at 10^7; an L2
 * prefetch of the tile before the general path's batched loads: twice as slow.) */
#ifndef PS_SEGSCAN_FAST_PARTIAL
#define PS_SEGSCAN_FAST_PARTIAL 1
#endif
/* The key loads of a fast tile (key_heads below): no load waits for another. The first form's `before = first item ?
 * x : keys[i - 1]` copied x into before's register ahead of the predicated load, so each row's second load waited
 * for its first (the SASS: IMAD.MOV before @P LDG): two round trips a batch on a full tile, one a row on a partial
 * one (loads under the bound, in branches), 0.3-0.5 us each. Now full tiles load at immediate offsets from one base
 * (only row 0 computes an index: its first lane may be the input's item 0) and partial tiles clamp (a row past the
 * end reads the tile's last key, item 0 its own). A clamp on every tile (thirty-second session) cost full tiles
 * (2^24 75.6 -> 80.1 us) and the scan by flags, which runs none of it, 5 % at 2^28 through the shared kernel's
 * registers: hence a kernel per form, below.
 *
 * One kernel for calls by keys and another for calls by flags or offsets (segscan_launch: the FORMS of each
 * program), so neither carries the other's code or registers; the price is two kernels a type x operator.
 *
 * LEAN_PARTIAL, in the kernel by flags or offsets only: the bytes of a unit as one clamp (2-3 instructions where
 * unit_bytes took about 5, on every unit of every fast tile) and the unit a partial tile ends in stored by an
 * unrolled loop (no local array). In the keys' kernel it lost at large n, so that kernel keeps the first forms.
 *
 * H200, thirty-third session, tune_segscan --prims segscan,sbk (i32 sums, L2 written before each call, median of
 * 20, two rounds; docs/bench/h200-segscan-forms.csv), the shipped kernels (keys: KEY_NODEP + FORM_KERNELS; flags:
 * FORM_KERNELS + LEAN_PARTIAL) against the single kernel before: by keys 2^10 / 2^11 / 2^12 8.45 / 10.27 / 12.58 us
 * -> 7.49 / 7.68 / 8.03 (CUB 7.97 / 8.29 / 8.93), 1,048,573 21.25 -> 11.49 (CUB 13.98), 2^24 76.0 -> 70.7, 2^28 973
 * -> 880 (CUB 1061); by flags 2^10-2^12 5.86-5.98 -> 5.92-6.14 (within the run's drift: its copy and CUB ran 3-5 %
 * slower), 2^24 48.5 -> 47.7, 2^28 614.9 -> 601.1 (CUB 876; copy 638). With LEAN_PARTIAL in the keys' kernel too:
 * one-tile calls by keys 7.26 / 7.52 / 7.74 but 2^24 73.3 and 2^28 929. */
#ifndef PS_SEGSCAN_LEAN_PARTIAL
#define PS_SEGSCAN_LEAN_PARTIAL 1
#endif
#define PS_SEGSCAN_THREADS 256
#define PS_SEGSCAN_TILE_OF(bytes) (PS_SEGSCAN_ITEMS_OF(bytes) * PS_SEGSCAN_THREADS)

template <class T> struct ps_seg_pair {
    T v;
    uint32_t f;
};

/* What every instance shares: the request as the kernels see it. */
struct ps_segscan_params {
    const void *in;
    void *out;
    uint64_t n;
    uint32_t tiles;
    uint32_t tile; /* items per tile (by element size) */
    int exclusive, reverse;
    int form;              /* ps_segment_form */
    uint32_t key_bytes;
    const uint8_t *flags;
    const void *keys;
    const uint64_t *offsets;
    uint64_t segment_count;
    const unsigned *bad;             /* offsets: nonzero when they are malformed */
    const unsigned long long *ranges; /* offsets: per tile, the first and one past the last offset in its window */
    unsigned long long init;         /* the init value's bytes */
};

/* Shared memory index of item o of a tile: one pad element per 32, so that a thread's blocked items fall in
 * different banks. */
__device__ __forceinline__ uint32_t ps_segscan_pad(uint32_t o) { return o + o / 32; }

/* The fast tile's layout: 16-byte unit u of a tile (a vector of values, or 16 head bytes) sits in slot
 * u ^ ((u >> 3) & 7) of its array. Only the low three bits move, by bits above them: a permutation. A 16-byte
 * access is served 8 lanes at a time, and the 8 units in one 128-byte row fill the 32 banks once: the coalesced
 * copy (8 consecutive units, one row) is conflict-free, and so is a thread's read of its own k-th unit when threads
 * own 1, 2, 4 or 8 consecutive units each (8 consecutive threads then land on 8 different slots of the row mod 8). */
__device__ __forceinline__ uint32_t ps_segscan_swz(uint32_t u) { return u ^ ((u >> 3) & 7u); }

/* Four head bytes to four head bits: bit 7 of each byte of bits is set when the byte is nonzero, and the multiply
 * gathers bits 7, 15, 23, 31 into bits 21-24 (the products land on distinct bits, so nothing carries). */
__device__ __forceinline__ uint32_t ps_segscan_head_bits(uint32_t word) {
    const uint32_t bits = (((word & 0x7f7f7f7fu) + 0x7f7f7f7fu) | word) & 0x80808080u;
    return (((bits >> 7) * 0x204081u) >> 21) & 0xfu;
}

/* FORMS: the segment forms this program serves, one bit each (ps_segment_form): segscan_launch runs one program by
 * keys and one by flags or offsets. */
#define PS_SEGSCAN_FORM_BIT(f) (1u << (f))
#define PS_SEGSCAN_ALL_FORMS                                                                                          \
    (PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_FLAGS) | PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_OFFSETS) | PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_KEYS))
template <class T, class Op, unsigned FORMS = PS_SEGSCAN_ALL_FORMS> struct ps_segscan_program {
    typedef ps_seg_pair<T> carry;
    typedef ps_segscan_params params;
    /* Is the call's form f? A constant where the program serves f alone or not at all, so the other forms' code goes. */
    static __device__ __forceinline__ bool is(const params &p, int f) {
        return (FORMS & PS_SEGSCAN_FORM_BIT(f)) != 0 && (FORMS == PS_SEGSCAN_FORM_BIT(f) || p.form == f);
    }
    enum {
        THREADS = PS_SEGSCAN_THREADS,
        MIN_BLOCKS = PS_SEGSCAN_MIN_BLOCKS_OF(sizeof(T)),
        WARPS = THREADS / PS_WARP_LANES,
        ITEMS = PS_SEGSCAN_ITEMS_OF(sizeof(T)),
        TILE = ITEMS * THREADS,
        VEC = 16 / sizeof(T), /* items per 16-byte vector */
        VECS = ITEMS / VEC, /* the fast path: vectors per thread */
        /* the fast path: a thread's vectors and head bytes are whole 16-byte units, 1 to 8 each (ps_segscan_swz) */
        FAST = PS_SEGSCAN_VEC_LOADS && ITEMS % VEC == 0 && (ITEMS == 16 || ITEMS == 32) && VECS <= 8,
        CHUNKS = ITEMS / 16, /* the fast path: 16-byte chunks of head bytes per thread */
        /* LEAN_PARTIAL above: in a program without the keys' form */
        LEAN = PS_SEGSCAN_LEAN_PARTIAL && !(FORMS & PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_KEYS))
    };
    static_assert(ITEMS >= 1 && ITEMS <= 32, "a thread's head bits are one word");
    typedef uint4 vec_t; /* the fast tile's 16-byte unit */
    struct smem {
        alignas(16) T items[TILE + TILE / 32]; /* padded (ps_segscan_pad), or swizzled vectors (fast) */
        alignas(16) uint8_t heads[TILE]; /* b() of the tile's window, by physical offset */
        carry warp_totals[WARPS];
    };
    struct local {
        T x[ITEMS];       /* the thread's items scanned as pairs (value part) */
        uint32_t hmask;   /* bit j: item j starts a segment (in scan order) */
        carry thread_prefix; /* the pair before the thread's first item, within the tile */
        uint64_t pbase;   /* first physical element of the tile */
        uint32_t valid;
        bool skip;        /* bad offsets: the tile writes nothing */
        bool fast;        /* the fast path: a forward, aligned tile by flags or keys (full, or FAST_PARTIAL) */
        bool done;        /* fast: the warp finished its part in early(), during the look-back */
    };

    static __device__ __forceinline__ carry combine(carry a, carry b) {
        carry r;
        r.v = b.f ? b.v : Op::combine(a.v, b.v);
        r.f = a.f | b.f;
        return r;
    }
    static __device__ __forceinline__ carry identity() {
        carry r;
        r.v = Op::template identity<T>();
        r.f = 0;
        return r;
    }
    static __device__ __forceinline__ carry initial(const params &) { return identity(); }
    /* A tile with a head: combine(x, a) = (x.f | 1, a.v) = a, bit for bit, so its inclusive prefix is published
     * with its aggregate and the chain does not wait for its look-back (chain/single_pass.cuh). */
    static __device__ __forceinline__ bool absorbs(const carry &a) { return a.f != 0; }

    static __device__ __forceinline__ T init_of(const params &p) {
        T v;
        memcpy(&v, &p.init, sizeof(T));
        return v;
    }

    /* ---- the fast tile, in the swizzled layout; unit u of the tile is 16 bytes (VEC values or 16 heads) */
    static __device__ __forceinline__ vec_t *vecs(smem &s) { return reinterpret_cast<vec_t *>(s.items); }

    /* One 16-byte cp.async of the bytes of [src, src + 16) before `bytes` (the rest of the 16 zero-filled; 0 reads
     * nothing: src is then the tile's first unit, always in bounds). */
    static __device__ __forceinline__ void copy16(uint32_t dst, const vec_t *src, uint32_t bytes) {
        asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(dst), "l"(src), "r"(bytes) : "memory");
    }
    /* The bytes of unit u (16 bytes of items of `size` bytes) before item `valid`: 16, fewer, or 0. (LEAN: the same
     * as a clamp of the bytes left, valid * size - 16 u, to [0, 16]: at most 2^16 each way.) */
    static __device__ __forceinline__ uint32_t unit_bytes(uint32_t u, uint32_t valid, uint32_t size) {
        if (LEAN) return (uint32_t)min(max((int32_t)(valid * size) - (int32_t)(16u * u), 0), 16);
        const uint32_t first = u * (16 / size);
        return first >= valid ? 0u : valid - first >= 16 / size ? 16u : (valid - first) * size;
    }

    /* The copies of a fast tile, one cp.async group per thread: vector v = k * THREADS + thread (coalesced); of a
     * partial tile (FAST_PARTIAL) what lies before its end, the rest zero-filled. */
    static __device__ __forceinline__ void copy_async(const params &p, const local &l, smem &s) {
        const vec_t *in = reinterpret_cast<const vec_t *>((const T *)p.in + l.pbase);
        const vec_t *fl = reinterpret_cast<const vec_t *>(p.flags + l.pbase);
        const uint32_t items = (uint32_t)__cvta_generic_to_shared(s.items);
        const uint32_t heads = (uint32_t)__cvta_generic_to_shared(s.heads);
        const bool full = !PS_SEGSCAN_FAST_PARTIAL || l.valid == (uint32_t)TILE;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const uint32_t v = k * THREADS + threadIdx.x, b = full ? 16u : unit_bytes(v, l.valid, sizeof(T));
            copy16(items + 16 * ps_segscan_swz(v), b ? in + v : in, b);
        }
#pragma unroll
        for (int k = 0; k < CHUNKS; k++) {
            if (!is(p, PS_SEGMENTS_FLAGS)) break; /* keys: key_heads() writes them */
            const uint32_t c = k * THREADS + threadIdx.x, b = full ? 16u : unit_bytes(c, l.valid, 1);
            copy16(heads + 16 * ps_segscan_swz(c), b ? fl + c : fl, b);
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
        asm volatile("cp.async.wait_group 0;" ::: "memory"); /* the barrier after it shows every thread's copies */
    }

    /* A fast tile by keys: its head bytes in the swizzled layout, b(i) = key[i] != key[i - 1] bit for bit. Each
     * warp reads 32 consecutive keys a row (coalesced) and every lane the key before its own (an L1 hit: the lane
     * before just read it), KEY_BATCH rows before any head is written. Item 0 of the input is a head whatever its
     * flag (scan_async). FULL: no item is past the tile's end; otherwise those past it get no head (their loads
     * read the tile's last key: no load waits on a bound, the note above LEAN_PARTIAL). */
    template <class K, bool FULL>
    static __device__ __forceinline__ void key_heads(const params &p, const local &l, smem &s) {
        const K *keys = (const K *)p.keys + l.pbase;
        const int32_t lead = l.pbase > 0 ? 1 : 0; /* item 0 of the tile has a key before it */
        enum { B = PS_SEGSCAN_KEY_BATCH < 1 ? 1 : PS_SEGSCAN_KEY_BATCH < ITEMS ? PS_SEGSCAN_KEY_BATCH : ITEMS };
        static_assert(ITEMS % B == 0, "whole batches of rows");
#pragma unroll
        for (int k0 = 0; k0 < ITEMS; k0 += B) {
            K x[B], before[B];
#pragma unroll
            for (int b = 0; b < B; b++) {
                const uint32_t o = (k0 + b) * THREADS + threadIdx.x;
                if (FULL) { /* rows after the first: o - 1 is in the tile */
                    x[b] = keys[o];
                    before[b] = k0 + b > 0 ? keys[o - 1] : keys[(int32_t)o - (o > 0 ? 1 : lead)];
                } else { /* past the end: the last key, masked below */
                    const int32_t c = (int32_t)min(o, l.valid - 1);
                    x[b] = keys[c];
                    before[b] = keys[c - (c > 0 ? 1 : lead)];
                }
            }
#pragma unroll
            for (int b = 0; b < B; b++) {
                const uint32_t o = (k0 + b) * THREADS + threadIdx.x;
                s.heads[16 * ps_segscan_swz(o / 16) + o % 16] = (FULL || o < l.valid) && x[b] != before[b];
            }
        }
    }
    static __device__ __forceinline__ void key_heads_any(const params &p, const local &l, smem &s) {
        ps_with_key_type(p.key_bytes, [&](auto k) { /* once per tile */
            if (!PS_SEGSCAN_FAST_PARTIAL || l.valid == (uint32_t)TILE)
                key_heads<decltype(k), true>(p, l, s);
            else
                key_heads<decltype(k), false>(p, l, s);
        });
    }

    /* The fast tile's scan (the general loop in reduce costs 65 instructions an item: bounds, mirror and a 64-bit
     * first-item test on each; Nsight Compute, H200): the thread's CHUNKS head chunks, then its items in place. */
    static __device__ __forceinline__ void scan_async(local &l, smem &s, carry &run) {
#pragma unroll
        for (int c = 0; c < CHUNKS; c++) {
            const uint4 h = reinterpret_cast<const uint4 *>(s.heads)[ps_segscan_swz(threadIdx.x * CHUNKS + c)];
            l.hmask |= (ps_segscan_head_bits(h.x) | ps_segscan_head_bits(h.y) << 4 | ps_segscan_head_bits(h.z) << 8 |
                        ps_segscan_head_bits(h.w) << 12)
                       << (16 * c);
        }
        if (l.pbase == 0 && threadIdx.x == 0) l.hmask |= 1u; /* item 0 of the input starts a segment */
#pragma unroll
        for (int q = 0; q < VECS; q++) {
            vec_t &slot = vecs(s)[ps_segscan_swz(threadIdx.x * VECS + q)];
            T x[VEC];
            memcpy(x, &slot, sizeof x);
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                run.v = (l.hmask >> (q * VEC + i)) & 1u ? x[i] : Op::combine(run.v, x[i]);
                x[i] = run.v;
            }
            memcpy(&slot, x, sizeof x);
        }
        run.f = l.hmask != 0;
    }

    /* The fast tile's results: item j restarted at the thread's first head at or before it. */
    template <bool EXCLUSIVE>
    static __device__ __forceinline__ void results_async(const params &p, const carry &before, const local &l, smem &s) {
        const T init = init_of(p);
        const int first_head = l.hmask ? __ffs(l.hmask) - 1 : ITEMS;
        T prev = before.v;
#pragma unroll
        for (int q = 0; q < VECS; q++) {
            vec_t &slot = vecs(s)[ps_segscan_swz(threadIdx.x * VECS + q)];
            T x[VEC];
            memcpy(x, &slot, sizeof x);
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const int j = q * VEC + i;
                const T v = j >= first_head ? x[i] : Op::combine(before.v, x[i]);
                x[i] = EXCLUSIVE ? ((l.hmask >> j) & 1u ? init : Op::combine(init, prev)) : Op::combine(init, v);
                prev = v;
            }
            memcpy(&slot, x, sizeof x);
        }
    }

    /* A fast tile's warp part, from the carry before each thread: results in place, then the warp's own stretch of
     * the tile (32 x VECS units, contiguous) stored coalesced, lane l taking units l, l + 32, ... (no block barrier:
     * each warp reads back only what it wrote). A partial tile stores what lies before its end. */
    template <bool MAYBE_PARTIAL = PS_SEGSCAN_FAST_PARTIAL>
    static __device__ __forceinline__ void finish_async(const params &p, const carry &before, const local &l, smem &s) {
        if (p.exclusive)
            results_async<true>(p, before, l, s);
        else
            results_async<false>(p, before, l, s);
        __syncwarp();
        const uint32_t lane = threadIdx.x % PS_WARP_LANES, u0 = threadIdx.x / PS_WARP_LANES * PS_WARP_LANES * VECS;
        vec_t *out = reinterpret_cast<vec_t *>((T *)p.out + l.pbase);
        if constexpr (MAYBE_PARTIAL) { /* one loop for full and partial tiles (two spilled: FAST_PARTIAL above) */
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                const uint32_t u = u0 + k * PS_WARP_LANES + lane, b = unit_bytes(u, l.valid, sizeof(T));
                if (b == 16) {
                    out[u] = vecs(s)[ps_segscan_swz(u)];
                } else if (b) { /* the unit the tile ends in */
                    T x[VEC];
                    memcpy(x, &vecs(s)[ps_segscan_swz(u)], sizeof x);
                    if (LEAN) { /* unrolled: x stays in registers (no local array) */
#pragma unroll
                        for (int i = 0; i < VEC; i++)
                            if (i * sizeof(T) < b) ((T *)p.out)[l.pbase + u * VEC + i] = x[i];
                    } else {
                        for (uint32_t i = 0; i < b / sizeof(T); i++) ((T *)p.out)[l.pbase + u * VEC + i] = x[i];
                    }
                }
            }
        } else {
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                const uint32_t u = u0 + k * PS_WARP_LANES + lane;
                out[u] = vecs(s)[ps_segscan_swz(u)];
            }
        }
    }

    /* The chain driver's optional early(): warps 1 .. WARPS-1 run it while warp 0 looks back. A warp with a head
     * before it in the tile (lane 0's pair before it has f set) owes nothing to the tiles before: every thread's
     * carry in is its in-tile pair bit for bit, whatever the prefix (the pair absorbs it), so the warp finishes and
     * stores its part now, and the look-back's round trip hides behind those stores. With segments of 1000 and
     * tiles of 8192 items, warp 0's part is the only one left after the look-back most of the time. */
    static __device__ __forceinline__ void early(const params &p, uint32_t, const carry &, local &l, smem &s) {
        if constexpr (FAST && PS_SEGSCAN_EARLY) {
            if (!l.fast || !__shfl_sync(PS_WARP_ALL, l.thread_prefix.f, 0)) return;
            if (l.valid != (uint32_t)TILE) return; /* FAST_PARTIAL: a partial tile finishes after the look-back */
            finish_async<false>(p, l.thread_prefix, l, s);
            l.done = true;
        }
    }

    /* The values and flags or keys tile `tile` reads, asked of L2 ahead of it (chain/single_pass.cuh); offsets
     * are few beside them. */
    static __device__ __forceinline__ void prefetch(const params &p, uint32_t tile) {
        const uint64_t start = (uint64_t)tile * TILE, valid = p.n - start < (uint64_t)TILE ? p.n - start : TILE;
        const uint64_t b = p.reverse ? p.n - start - valid : start;
        ps_block_prefetch_l2<THREADS>((const T *)p.in + b, (const T *)p.in + b + valid);
        if (is(p, PS_SEGMENTS_FLAGS)) ps_block_prefetch_l2<THREADS>(p.flags + b, p.flags + b + valid);
        if (is(p, PS_SEGMENTS_KEYS))
            ps_block_prefetch_l2<THREADS>((const char *)p.keys + b * p.key_bytes,
                                          (const char *)p.keys + (b + valid) * p.key_bytes);
    }

    /* An other tile's rows, LOAD_BATCH rows at a time (block/rows.cuh): the values, and the flags or the keys at i
     * and i - 1, loaded raw and compared when stored (a compare beside its load makes the batch wait for it). K: the
     * keys' type (flags: uint8_t; offsets: unused). */
    template <class K> struct row_item {
        T x;
        K a, b; /* flags: the flag, 0; keys: key[i], key[i - 1]; equal where i starts no segment by position */
    };
    template <class K>
    static __device__ __forceinline__ void load_rows(const params &p, const local &l, smem &s, uint64_t wbase) {
        enum { B = PS_SEGSCAN_LOAD_BATCH < 1 ? 1 : PS_SEGSCAN_LOAD_BATCH < ITEMS ? PS_SEGSCAN_LOAD_BATCH : ITEMS };
        const T *in = (const T *)p.in;
        const K *keys = (const K *)p.keys;
        const uint8_t *flags = p.flags;
        ps_block_rows_batched<ITEMS, THREADS, B, row_item<K>>(
            l.valid,
            [&](uint32_t o) {
                const uint64_t i = wbase + o;
                const bool inside = i > 0 && i < p.n;
                row_item<K> r;
                r.x = in[l.pbase + o];
                r.a = r.b = 0;
                if (is(p, PS_SEGMENTS_FLAGS) && inside) r.a = (K)flags[i];
                if (is(p, PS_SEGMENTS_KEYS) && inside) r.a = keys[i], r.b = keys[i - 1];
                return r;
            },
            [&](uint32_t o, const row_item<K> &r) {
                s.items[ps_segscan_pad(o)] = r.x;
                if (!is(p, PS_SEGMENTS_OFFSETS)) s.heads[o] = r.a != r.b; /* bit for bit: K is unsigned */
            });
    }
    static __device__ __forceinline__ void load_batched(const params &p, const local &l, smem &s, uint64_t wbase) {
        if (!is(p, PS_SEGMENTS_KEYS)) return load_rows<uint8_t>(p, l, s, wbase);
        ps_with_key_type(p.key_bytes, [&](auto k) { load_rows<decltype(k)>(p, l, s, wbase); }); /* once per tile */
    }

    static __device__ __forceinline__ carry reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = Op::template identity<T>();
        const uint64_t start = (uint64_t)id * TILE;
        const uint64_t left = p.n - start;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        l.pbase = p.reverse ? p.n - start - l.valid : start;
        l.skip = is(p, PS_SEGMENTS_OFFSETS) && *p.bad != 0;
        l.done = false;
        /* set before the skip's return: early() reads it during the look-back, and a skipped tile left it
         * undefined until the thirtieth session (with PS_SEGSCAN_KEY_BATCH=8's register allocation a tile of a
         * call with bad offsets read it as true and stored its part: test_segscan's untouched outputs caught it) */
        l.fast = false;
        if (l.skip) return identity(); /* every tile sees the same word: none waits for a tile that writes */
        const T *in = (const T *)p.in;
        /* the window of b(): b(pbase + r + o) for o in the tile, r = 1 for a reverse scan */
        const uint64_t wbase = l.pbase + (p.reverse ? 1 : 0);

        /* ---- load: values and boundary bits, coalesced, by physical offset ---- */
        if (is(p, PS_SEGMENTS_OFFSETS)) {
            for (uint32_t o = threadIdx.x; o < l.valid; o += THREADS) s.heads[o] = 0;
            __syncthreads();
            const unsigned long long first = p.ranges[2 * id], last = p.ranges[2 * id + 1];
            for (unsigned long long k = first + threadIdx.x; k < last; k += THREADS) {
                const uint64_t o = p.offsets[k] - wbase;
                if (o < l.valid) s.heads[o] = 1;
            }
        }
        l.fast = FAST && !p.reverse && (PS_SEGSCAN_FAST_PARTIAL || l.valid == (uint32_t)TILE) &&
                 (((uintptr_t)(in + l.pbase) | (uintptr_t)((T *)p.out + l.pbase)) & 15u) == 0 &&
                 (is(p, PS_SEGMENTS_KEYS) || (is(p, PS_SEGMENTS_FLAGS) && ((uintptr_t)(p.flags + l.pbase) & 15u) == 0));
        if (FAST && l.fast) {
            copy_async(p, l, s);
            if (is(p, PS_SEGMENTS_KEYS)) key_heads_any(p, l, s);
        } else {
            load_batched(p, l, s, wbase);
        }
        __syncthreads();

        /* ---- the thread's items in scan order, scanned as pairs ---- */
        const uint64_t first_item = p.reverse ? p.n - 1 : 0; /* the scan's first item always starts a segment */
        carry run = identity();
        l.hmask = 0;
        if constexpr (FAST) {
            if (l.fast) { /* a forward aligned tile by flags or keys: no bounds, no mirror, no per-item head test */
                scan_async(l, s, run);
                goto scanned;
            }
        }
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const uint32_t L = threadIdx.x * ITEMS + j; /* logical position in the tile */
            T x = e;
            bool h = false;
            if (L < l.valid) {
                const uint32_t o = p.reverse ? l.valid - 1 - L : L;
                x = s.items[ps_segscan_pad(o)];
                h = s.heads[o] != 0 || l.pbase + o == first_item;
            }
            run.v = h ? x : Op::combine(run.v, x);
            run.f |= h ? 1u : 0u;
            l.hmask |= (h ? 1u : 0u) << j;
            if (PS_SEGSCAN_PARK) {
                /* back into the slot this thread just read: no other thread reads it before consume */
                if (L < l.valid) s.items[ps_segscan_pad(p.reverse ? l.valid - 1 - L : L)] = run.v;
            } else {
                l.x[j] = run.v;
            }
        }

    scanned:
        /* ---- across the warp, then across the block ---- */
        const carry inclusive = ps_warp_inclusive(run, lane, ps_chain_combine<ps_segscan_program>());
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

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, carry prefix, carry, local &l,
                                                   smem &s) {
        (void)id;
        if (l.skip) return;
        const T init = init_of(p);
        const carry before = combine(prefix, l.thread_prefix);

        /* ---- results in scan order, back to shared memory by physical offset ---- */
        if constexpr (FAST) {
            if (l.fast) { /* the same branch for the whole block: no barrier below is skipped by some only */
                if (!l.done) finish_async(p, before, l, s);
                return;
            }
        }
        {
        T prev = before.v; /* the running value of the item before, in scan order */
#pragma unroll
        for (int j = 0; j < ITEMS; j++) {
            const uint32_t L = threadIdx.x * ITEMS + j;
            const bool h = (l.hmask >> j) & 1u;
            const bool restarted = (l.hmask & ((2u << j) - 1u)) != 0;
            const uint32_t slot = ps_segscan_pad(p.reverse ? l.valid - 1 - L : L);
            const T xj = PS_SEGSCAN_PARK ? (L < l.valid ? s.items[slot] : Op::template identity<T>()) : l.x[j];
            const T v = restarted ? xj : Op::combine(before.v, xj);
            const T y = p.exclusive ? (h ? init : Op::combine(init, prev)) : Op::combine(init, v);
            prev = v;
            if (L < l.valid) s.items[slot] = y;
        }
        }
        __syncthreads();

        /* ---- store, coalesced ---- */
        T *out = (T *)p.out;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t o = k * THREADS + threadIdx.x;
            if (o < l.valid) out[l.pbase + o] = s.items[ps_segscan_pad(o)];
        }
    }
};

/* ---- offsets: the check and each tile's range of offsets, before the chain ---- */

/* The index of the first of offsets[0 .. count] that is >= x (count + 1 if none). */
__device__ __forceinline__ unsigned long long ps_segscan_lower_bound(const uint64_t *o, uint64_t count, uint64_t x) {
    unsigned long long lo = 0, hi = count + 1;
    while (lo < hi) {
        const unsigned long long mid = lo + (hi - lo) / 2;
        if (o[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static __global__ void __launch_bounds__(256) ps_segscan_offsets_kernel(ps_segscan_params p, unsigned *bad,
                                                                 unsigned long long *ranges) {
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    const uint64_t count = p.segment_count;
    for (uint64_t k = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; k <= count; k += stride) {
        const uint64_t o = p.offsets[k];
        if ((k == 0 && o != 0) || (k == count && o != p.n) || (k < count && o > p.offsets[k + 1])) *bad = 1;
    }
    /* tile t's window of b() is [w, w + valid) with w = pbase + (reverse ? 1 : 0) */
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t < p.tiles; t += stride) {
        const uint64_t start = t * p.tile, left = p.n - start;
        const uint64_t valid = left < p.tile ? left : p.tile;
        const uint64_t w = (p.reverse ? p.n - start - valid : start) + (p.reverse ? 1 : 0);
        ranges[2 * t] = ps_segscan_lower_bound(p.offsets, count, w);
        ranges[2 * t + 1] = ps_segscan_lower_bound(p.offsets, count, w + valid);
    }
}

/* ---- host side ----------------------------------------------------------------------------------------- */

static uint64_t segscan_tiles(uint64_t n, size_t elem_bytes) {
    return ps_cuda_div_up(n, PS_SEGSCAN_TILE_OF(elem_bytes));
}

/* temp: the chain's entries (carries up to 16 bytes, as for the widest type), then for offsets each tile's
 * range of offsets and the bad word. */
static size_t segscan_chain_bytes(uint64_t tiles) { return ps_cuda_align(ps_chain_temp_bytes<ps_seg_pair<uint64_t>>(tiles)); }
static size_t segscan_ranges_bytes(uint64_t tiles) { return ps_cuda_align((size_t)tiles * 2 * sizeof(unsigned long long)); }

#if PS_CUDA_PART_ZERO /* per call, not per type: in part 0 of the split (cuda_ops.cuh) */
pscan_status ps_cuda_segscan_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = segscan_tiles(req->n, req->elem_bytes);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = 0;
    if (req->seg_form == PS_SEGMENTS_OFFSETS)
        *bytes = segscan_chain_bytes(tiles) + segscan_ranges_bytes(tiles) + sizeof(unsigned);
    else if (req->n > 0)
        *bytes = ps_chain_temp_bytes<ps_seg_pair<uint64_t>>(tiles);
    return PSCAN_SUCCESS;
}
#endif

template <class T, class Op> struct segscan_launch {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        typedef ps_segscan_program<T, Op> P;
        static_assert((unsigned)P::TILE == PS_SEGSCAN_TILE_OF(sizeof(T)), "one tile size for plan and launch");
        static_assert(sizeof(typename P::carry) <= sizeof(ps_seg_pair<uint64_t>), "temp is sized for the widest pair");
        ps_segscan_params p;
        memset(&p, 0, sizeof p);
        p.in = req->in;
        p.out = req->out;
        p.n = req->n;
        p.tiles = (uint32_t)segscan_tiles(req->n, sizeof(T));
        p.tile = P::TILE;
        p.exclusive = req->exclusive;
        p.reverse = req->reverse;
        p.form = (int)req->seg_form;
        p.key_bytes = (uint32_t)req->key_bytes;
        p.flags = (const uint8_t *)req->flags;
        p.keys = req->in2;
        p.offsets = (const uint64_t *)req->in2;
        p.segment_count = req->segment_count;
        memcpy(&p.init, req->init.bytes, sizeof(T));
        if (p.form == PS_SEGMENTS_OFFSETS) {
            char *base = (char *)req->temp + segscan_chain_bytes(p.tiles);
            unsigned long long *ranges = (unsigned long long *)base;
            unsigned *bad = (unsigned *)(base + segscan_ranges_bytes(p.tiles));
            p.ranges = ranges;
            p.bad = bad;
            PS_CUDA_TRY(cudaMemsetAsync(bad, 0, sizeof *bad, dev->stream));
            const uint64_t work = p.segment_count + 1 > p.tiles ? p.segment_count + 1 : p.tiles;
            const uint64_t blocks = ps_cuda_div_up(work, 256);
            const unsigned grid = (unsigned)(blocks < (uint64_t)dev->sm_count * 8 ? blocks : (uint64_t)dev->sm_count * 8);
            ps_segscan_offsets_kernel<<<grid, 256, 0, dev->stream>>>(p, bad, ranges);
            PS_CUDA_CHECK_LAUNCH();
            if (req->check) {
                /* asked to wait for the verdict: a 4-byte copy and a synchronisation */
                unsigned verdict = 0;
                PS_CUDA_TRY(cudaMemcpyAsync(&verdict, bad, sizeof verdict, cudaMemcpyDeviceToHost, dev->stream));
                PS_CUDA_TRY(cudaStreamSynchronize(dev->stream));
                if (verdict) return PS_CUDA_INVALID_INPUT;
            }
        }
        if (p.n == 0) return cudaSuccess;
        /* a kernel by keys and one by positions (the note above LEAN_PARTIAL) */
        typedef ps_segscan_program<T, Op, PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_KEYS)> by_keys;
        typedef ps_segscan_program<T, Op, PS_SEGSCAN_ALL_FORMS & ~PS_SEGSCAN_FORM_BIT(PS_SEGMENTS_KEYS)> by_positions;
        if (p.form == PS_SEGMENTS_KEYS)
            return ps_chain_single_pass<by_keys, PS_SEGSCAN_LANE_ENTRIES>(p, p.tiles, req->temp, dev->stream);
        return ps_chain_single_pass<by_positions, PS_SEGSCAN_LANE_ENTRIES>(p, p.tiles, req->temp, dev->stream);
    }
};

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_segscan.cu instantiates the one launch it times */
PS_CUDA_PART_DECLARE(ps_cuda_segscan_part);
cudaError_t PS_CUDA_PART_FN(ps_cuda_segscan_part)(const ps_request *req, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<segscan_launch>::run(req, dev); /* this part's types (cuda_ops.cuh: the split) */
}
#if PS_CUDA_PART_ZERO
/* Both primitives (the form is in the request). */
cudaError_t ps_cuda_segscan_run(const ps_request *req, const ps_cuda_device *dev) {
    PS_CUDA_PART_CALL(ps_cuda_segscan_part, req, dev)
}
#endif
#endif
