/*
 * select.cu - select (compact) and partition, as one tile program on the single-pass chain driver
 * (chain/single_pass.cuh). The carry is a count: how many items the tiles before this one kept.
 *
 * The tile program (256 threads x ROWS rows; one tile is ROWS x 256 consecutive items, 16-32 KiB of keys: 16 rows
 * of 8-byte keys, 32 of 4-byte keys, 64 of 2- and 1-byte keys; row k is items k * 256 ... k * 256 + 255, one per
 * thread):
 *  - reduce: the tile's keys (and flags) are parked in shared memory in item order, with cp.async for a full,
 *    aligned tile (no registers hold them in flight or across the look-back). Each thread decides its item of
 *    every row from there, with the predicate a template argument chosen once per tile (no per-item switch);
 *    one ballot per warp and row records the decisions (masks[row][warp]). Warp 0 scans the ROWS x WARPS
 *    ballot counts in row-major order, i.e. in item order: offsets[row][warp] is how many items of the tile
 *    before that warp's slice of that row are kept. The tile's kept count is the aggregate.
 *  - Keys of up to 4 bytes take the vector form (VEC, below): the ballot words are the tile's decisions in item
 *    order, 32 to a word, so a thread fills them 16 bytes of keys at a time (a half word or a byte of decisions),
 *    and consume stages those keys from registers and writes whole 16-byte blocks; payloads of the keys' width go
 *    the same way (VEC_VALUES), other payloads by the row form's move; the scan and the chain are the row form's.
 *    Six tiles a SM (their flags load to registers, not parked); a select of more than 2^24 1-byte keys takes
 *    128-row tiles (select_large_call). H200, 2^28, x CUB (thirty-sixth session, pscan bench): select i32 keys >
 *    midpoint 1.27x (0.81 of copy), by flags 1.52x; u8 2.46x / 2.97x; partition i32 1.08x / 1.44x.
 *  - consume(prefix = kept before the tile): each thread takes its keys from the parking place to registers
 *    (a barrier: the staging below writes over it). An item's rank among the kept ones of its tile is
 *    offsets[row][warp] + popc(mask & lanes below); a rejected item's rank among the rejected is its index in
 *    the tile minus that. Each thread writes its items to the staging buffer at their rank, and then the block
 *    writes the buffer out in item order, consecutive threads to consecutive addresses: kept item j goes to
 *    out[prefix + j], rejected item j to out[kept_total + (tile_start - prefix) + j]. A select of keys alone
 *    (the common case) does it in one pass; payloads go through move(), which loads payloads
 *    only for the items written. The last tile writes prefix + aggregate to *count.
 *  - Stability: ranks follow item order inside a tile, and tiles follow each other through the carry.
 *  - A partition's second group starts at kept_total, unknown until the chain ends. A call of one tile, of one
 *    cluster, or of no more tiles than the GPU holds at once (a cooperative launch: every tile waits for the last
 *    one's inclusive prefix) gets it from the driver (its total hook) and runs in one pass. A larger call counts
 *    first: a kernel reads the decisions' input once more (the flags, or the keys, in 16-byte vectors, a warp a
 *    tile; each block a run of tiles, whose local prefixes it leaves), and the last block to finish turns the
 *    blocks' totals into prefixes and the total. The tile program then runs on the given-prefix driver
 *    (chain/given.cuh): no tile waits for another's look-back, which on an H200 is what the chain cost. By
 *    aligned flags the count also leaves the full tiles' flags as bits, so the second pass reads an eighth of
 *    their bytes (PS_SELECT_BITS). H200, 2^28, x CUB: partition i32 by flags 1.07x -> 1.47x, i64 1.21x -> 1.26x,
 *    keys > 0 0.86x -> 1.00x (docs/performance.md, 2026-11-27, sixth session); with 8 loads a lane in flight in
 *    the count by keys (twenty-ninth session, tune_select) i32 / i64 keys > 0 1.067x / 0.903x, and 0.82-0.91x at
 *    2^22-2^24 where a warp a tile leaves few loads in flight (0.62-0.83x before). Both groups are written in place
 *    and in order (CUB's partition writes the rejected items reversed from the end, in one pass; re-reading the
 *    flags costs a ninth of the bytes, the keys a third). A partition of keys alone writes its tile in one pass, kept
 *    then rejected (PS_SELECT_SPLIT_KEYS); with payloads it goes through move().
 *    H100, partition i32 by flags: 2^18 15.1 -> 11.0 us, 2^20 18.3 -> 13.3, 2^22 34.6 -> 28.5 with the total from
 *    the driver (0.88x, 1.04x, 0.97x CUB; docs/performance.md, 2026-11-27).
 *  - Tiles by size (select_tile.h): small calls take tiles of 4 KiB of keys (8 for 8-byte keys), since a tile's
 *    rows run one after another in its block; a partition of up to 16 default tiles takes the smallest tile
 *    whose call gets the total from the driver. Tiles of at most 8 rows skip the parking and the staging (the
 *    program's DIRECT form: keys in registers, each written from there; 0.05-0.17 of a copy call less a call).
 *
 * Global memory: select reads n keys (and n flags), writes count keys; partition reads them twice (the count,
 * unless the driver has the total; by flags the second read is of n / 8 bytes of bits) and writes n, plus 8 bytes
 * a tile of prefixes; payloads are read and written once per item written. Two 16-byte status entries per tile
 * on the chain.
 * Depth: one tile plus n / (tile * 64) look-back rounds. Measured on an NVIDIA H200 (tools/tune/tune_select.cu,
 * 2026-11-26, keys > 0, about half kept), x CUB's DeviceSelect::If / DevicePartition::If at 2^28: select i32
 * 1.17x (0.75 of copy), i64 1.08x (0.81), u8 1.02x; partition i32 0.84x, i64 0.81x, u8 0.92x (the extra read).
 * Before parking and the per-tile predicate (16 rows in registers, a switch per item: 64 instructions an item
 * against 27): select i32 0.62x, i64 0.78x. A vector tile (16-byte loads, per-thread counts) measured 0.61-0.76x
 * and was removed; the vector form (thirty-fifth session) keeps the ballot words and warp 0's scan and vectorizes
 * only the decisions, the staging and the stores: H200 2^28 u8 1.84x, i32 1.24x CUB (`pscan bench`).
 */
#include <stdint.h>
#include <string.h>

#include <type_traits>

#include "chain/given.cuh"
#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

#include "select_tile.h" /* the tile's knobs, shared with tests/test_select.c */

/* The staging buffer's bytes: a tile whose kept items do not fit is written out in several passes. */
#define PS_SELECT_STAGE_BYTES 32768
/* 1: a partition of keys alone writes its tile in one pass, kept then rejected (consume); 0: through move(), as
 * partitions with payloads do. H200, tune_select, keys > 0 on the given-prefix driver, x CUB: i32 2^28 0.933x ->
 * 0.949x, 2^26 0.891x -> 0.921x; i64 unchanged (0.80x); docs/bench/h200-split-given.csv. */
#ifndef PS_SELECT_SPLIT_KEYS
#define PS_SELECT_SPLIT_KEYS 1
#endif
/* 1: a counted partition by 16-byte aligned flags has its count write the flags of full tiles as bits (a u32 per
 * 32 items, the tile's ballot words), so the second pass reads n / 8 bytes of decisions instead of n. Measured only
 * together with the count's block spine (H200, 2^28 i32 by flags: 733 -> 631 us; docs/performance.md, 2026-11-27,
 * sixth session); apart: docs/tuning.md, "Next". */
#ifndef PS_SELECT_BITS
#define PS_SELECT_BITS 1
#endif
/* 1: the small and half tiles of at most PS_SELECT_DIRECT_ROWS rows (select_tile.h: the small tiles of 4- and 8-byte
 * keys, 4 rows, and of 2-byte keys, 8 rows, not timed on their own; the half tile of 8-byte keys, 8 rows) take the
 * program's DIRECT form (keys in registers, no parking or staging); 0: they park and stage as the
 * default tile does. H200, tune_select --small, x a copy call at 2^10 / 2^13 / 2^16, select i32 keys > 0 1.30 /
 * 1.50 / 1.53 -> 1.25 / 1.42 / 1.48, by flags 1.38 / 1.48 / 1.57 -> 1.28 / 1.38 / 1.50; i64 1.31 / 1.47 / 1.55 ->
 * 1.20 / 1.37 / 1.47; partition i32 1.40 / 1.69 / 1.68 -> 1.31 / 1.57 / 1.59. Tiles of 16 rows lost by flags (u8,
 * 16 rows: 1.59-1.83 -> 1.85-2.32; a byte load a row and thread), so they keep parking
 * (docs/bench/h200-select-direct.csv and -flags.csv, twenty-eighth session). */
#ifndef PS_SELECT_SMALL_DIRECT
#define PS_SELECT_SMALL_DIRECT 1
#endif
#define PS_SELECT_DIRECT_ROWS 8
/* 1: a call of more than one small tile and at most two takes one DIRECT tile of twice the small tile's rows (i32
 * and i64: 8 rows), where a DIRECT tile of that size fits, instead of a cluster of two small ones. tune_select
 * --small at 2^11 (one such tile), x a copy call: select i32 1.27 against 1.39, by flags 1.19 against 1.28, i64 1.26
 * against 1.38, partition i32 1.39 against 1.53 (H200, twenty-eighth session, docs/bench/h200-select-direct*.csv);
 * pscan bench at 2^11, twenty-ninth session: select i32 4.86-4.90 -> 4.45-4.58 us, i64 4.86-4.93 -> 4.64, by flags
 * 4.99-5.02 -> 4.51-4.64, partition 5.38-5.44 -> 4.96-5.06 (docs/bench/h200-small-knobs.csv). */
#ifndef PS_SELECT_ONE_TILE
#define PS_SELECT_ONE_TILE 1
#endif
/* Unique, a parked tile (ballots below): the key before each item comes from the parked tile in shared memory, and
 * global memory is read for the tile's first item alone. Reading keys[i - 1] from global memory for every item made
 * each row's test wait for its load, one L2 round trip a row (the parked keys came by cp.async.cg, past L1). H200,
 * thirty-third session, tune_select --unique (runs of 2, median of 25; docs/bench/h200-select-unique-local.csv):
 * the default tiles at 2^28, i32 (32 rows) 739 -> 544 us (CUB 593), u8 629 -> 457 (CUB 432), i64 (16 rows) 1135 ->
 * 970 (CUB 1006); the small u8 tiles (16 rows, parked) 2^12-2^17 8.1-9.7 -> 6.0-7.5 us. i64 keys > 0 (the same
 * kernel, 16 bytes more spill) within 1 %. DIRECT tiles keep the global reads (their keys came through L1, so the
 * key before is an L1 hit); a shuffle form for them spilled more (u8 144 -> 260 bytes, i32 140 -> 172). */

/* VEC (select_tile.h; 1- to 4-byte keys, parked tiles): a thread takes 16 bytes of consecutive parked keys with one
 * shared load, tests them from registers and stores their decisions as one half word (1-byte keys) or one byte of a
 * mask word (4-byte keys: two lanes' four decisions, joined by a shuffle); consume stages the keys from the same
 * registers, each group at its output's offset in 16 bytes, and writes them out in 16-byte stores. The row form
 * (below) spends a shared load, a ballot and a mask store a key (unique: two loads), and three more shared loads and
 * a store a key to stage it: u8 keys > 0 at 2^28 ran at 0.24 of copy, and tiles of more rows lost (2026-11-26).
 * With the vector form the 1- and 2-byte tiles grow to 64 rows, four blocks a SM (52 KiB of shared memory each; six
 * since VEC_FLAGS below):
 * i16 2^28 keys > 0 400.5 -> 278.7 us, unique 396.5 -> 276.4, by flags 405.9 -> 321.9 (tune_select, 32 -> 64 rows;
 * docs/bench/h200-select-tiles.csv; partitions: select_partition_half below). H200,
 * thirty-fifth session, tune_select, best of two rounds, row form / vector form, us (CUB): u8 2^28 keys > 0 394.7
 * / 237.1 (435.6), unique 439.5 / 227.5 (426.3), by flags 409.2 / 244.6 (582.6), partition keys > 0 462.6 / 392.5
 * (712.0); 2^21 u8 keys > 0 11.26 / 9.54 (10.91); i16 2^28 keys > 0 423.1 / 401.8 (493.3); i32 2^28 keys > 0 504.5 /
 * 478.3 (593.3), unique 523.6 / 475.4 (586.0), 2^21 13.12 / 11.97 (12.99), unique 14.21 / 11.97 (13.34); 8-byte
 * keys lost 0-1 % then (i64 2^28 keys > 0 936.4 / 945.4; docs/bench/h200-select-vec.csv, h200-select-vec4.csv; the
 * i16 pair there is of 32-row tiles). They take it since the thirty-seventh session (select_tile.h,
 * PS_SELECT_VEC_BYTES 8), with the flags in registers, vector payloads and six blocks (below): H200, tune_select,
 * median of 25, i64 at 2^28, the row form at five blocks / the vector form at six, us (CUB): keys > 0 936.8 / 914.4
 * (1007.2), by flags 992.4 / 959.7 (1171.9), unique 951.0 / 910.8, with a payload of the key's width 1984.0 / 1594.5
 * (0.95 of copy); partitions lost 1-2 %: keys > 0 1532.1 / 1557.2 (1364.1), by flags 1152.1 / 1177.6 (1445.2),
 * unique 1619.9 / 1647.0 (docs/bench/h200-select-i64-vec.csv, c35). */
/* VEC_FLAGS: a vector-form tile by flags loads each vector's flags from global memory straight to registers (16, 8
 * or 4 bytes a thread and vector, coalesced) instead of parking them in shared memory. The parking place (as large
 * as a byte tile's keys) was in every tile's shared memory, whatever the call, so it set the blocks a SM: without it
 * a 64-row byte tile takes 36 KiB instead of 52, and six blocks fit instead of four. PAYLOAD_UNROLL: the row form's
 * payload move (move below; the vector form's for payloads of another width than the keys') unrolls its rows 8 at a
 * time: fully unrolled, the 64-row kernels spilled 196-228 bytes at 64 registers, and 700 at the 40 of six blocks, all
 * in that move. KEY_MIN_BLOCKS: the vector-form tiles (1- to 8-byte keys) run six blocks a SM. VEC_VALUES (below):
 * payloads of the keys' width in the vector form. H200, thirty-sixth session, tune_select, best of two rounds at 2^28,
 * us, e8fadbc's tiles (four blocks, five for i32, flags parked, full unroll, payloads by the row form) / these
 * (docs/bench/h200-select-occupancy.csv): keys > 0, by flags, unique, then partition the same: u8 238.8 / 219.1,
 * 252.7 / 231.9, 231.0 / 212.7, 392.9 / 357.8, 349.1 / 312.3, 344.9 / 317.6; i16 282.6 / 253.8, 323.7 / 292.2, 279.3
 * / 250.8, 473.4 / 432.6, 412.0 / 375.1, 460.6 / 429.9; i32 484.6 / 470.9, 528.3 / 511.7, 482.0 / 469.4, 776.2 /
 * 780.1, 631.8 / 636.1, 790.9 / 794.0. With a payload of the key's width, keys > 0, select / partition: u8 1247.4 /
 * 287.9 (0.68 of copy), 1477.1 / 564.5; i16 1357.8 / 419.5 (0.92), 1644.6 / 730.0; i32 1302.6 / 811.7 (0.94),
 * 1728.6 / 1331.0. 2^16-2^24: keys alone within 0.6 us either way, payloads 2^16 36.6-38.6 -> 8.7-9.9 us. */
#ifndef PS_SELECT_VEC_FLAGS
#define PS_SELECT_VEC_FLAGS 1
#endif
#ifndef PS_SELECT_PAYLOAD_UNROLL
#define PS_SELECT_PAYLOAD_UNROLL 8
#endif
#define PS_SELECT_KEY_MIN_BLOCKS(key_bytes) (PS_SELECT_VEC && (key_bytes) <= PS_SELECT_VEC_BYTES ? 6 : 5)
/* The large tiles (select_tile.h): five blocks a SM of 128 rows of 1-byte keys (40 KiB of shared memory each); for
 * other widths the default program itself. */
#define PS_SELECT_LARGE_MIN_BLOCKS(key_bytes)                                                                     \
    (PS_SELECT_LARGE_ROWS(key_bytes) != PS_SELECT_KEY_ROWS(key_bytes) ? 5 : PS_SELECT_KEY_MIN_BLOCKS(key_bytes))
/* VEC_VALUES: payloads of the keys' width move as the keys do in the vector form (vec_stage, vec_write): a full
 * tile's payload vectors loaded straight to registers, VEC_VALUES_GROUP a thread at a time, and staged at their
 * keys' ranks, instead of the row form's load, rank and store an item (its payload vector loads all at once
 * spilled 40-64 bytes in the 8-vector tiles, i16 and i32, and slowed their keys-alone calls 5-9 %; groups of 2
 * measured as 4, within 2 %). */
#ifndef PS_SELECT_VEC_VALUES
#define PS_SELECT_VEC_VALUES 1
#endif
#ifndef PS_SELECT_VEC_VALUES_GROUP
#define PS_SELECT_VEC_VALUES_GROUP 4
#endif
/* VEC_VALUES_WIDE: payloads of another width than the keys' in the vector form too (vec_values_wide; 0: by the row
 * form's move, 8 rows at a time). H200, thirty-seventh session, tune_select, median of 25, keys > 0 with payloads of
 * 1 / 2 / 4 / 8 bytes, the library's tiles, row form / vector form, us at 2^28 (of copy, payload bytes counted):
 * select u8 keys with u32 payloads 1235.9 / 526.2 (0.92; 128-row tiles), with u64 1620.5 / 919.0 (0.95); i32 with
 * u8 1016.5 / 587.6, with u64 1427.3 / 1187.4 (0.96); i64 with u32 1818.0 / 1256.2 (0.90); partitions u8 / u64 2376.8
 * / 1410.3, i32 / u64 2716.1 / 1879.5; 1.3-3.6x at 2^16-2^20 (docs/bench/h200-select-wide.csv, c36). Its first build
 * (each thread loading its own chunk, 32-128 bytes strided across the warp) lost to the row form where payloads pass
 * the staging four or eight times (u8 keys with u64 payloads 1255.0 / 1753.4 at 2^28): consecutive threads now load
 * consecutive 16 bytes. With it in the program, i16 partitions with 2-byte payloads (the same-width path) ran 3-4 %
 * slower (728.6 / 758.9 us; the i16 kernel spills 6 bytes); nothing else lost more than noise. The staging helper
 * (vec_stage_items) is the keys' and same-width payloads' too: by nvdisasm, the single-pass kernels did not change,
 * and the cluster kernels of the 32- to 128-row byte tiles (partitions of up to 16 tiles) have 4-6 shared loads and
 * 2-3 popcounts more: untimed. */
#ifndef PS_SELECT_VEC_VALUES_WIDE
#define PS_SELECT_VEC_VALUES_WIDE 1
#endif

/* The unsigned integer of a key's width: unique compares keys bit for bit. */
template <int BYTES> struct ps_select_bits;
template <> struct ps_select_bits<1> { typedef uint8_t type; };
template <> struct ps_select_bits<2> { typedef uint16_t type; };
template <> struct ps_select_bits<4> { typedef uint32_t type; };
template <> struct ps_select_bits<8> { typedef uint64_t type; };
/* The flags of a vector of B keys, as one load (VEC). */
template <int B> struct ps_select_vec_flags { typedef typename ps_select_bits<B>::type type; };
template <> struct ps_select_vec_flags<16> { typedef uint4 type; };

/* The kernel arguments of both tile programs and of the counting kernel. */
template <class K> struct ps_select_params {
    const K *keys;
    const void *values;
    const uint8_t *flags; /* NULL: the predicate */
    K *keys_out;
    void *values_out;
    uint64_t *count;
    unsigned long long *kept_total; /* partition: the counting kernel's result; NULL for select */
    uint64_t *tile_prefix;          /* with kept_total: per tile, the items kept before it in its count block */
    uint64_t *block_prefix;         /* per count block, the items kept before it (tile t's block: t / per) */
    uint32_t per;                   /* tiles a count block */
    uint32_t *bits;                 /* with kept_total, or NULL: the flags of full tiles, a bit an item */
    uint64_t n;
    uint32_t tiles;
    int pred;
    int partition;
    uint32_t value_bytes;
    K operand;
};

template <class K> __device__ __forceinline__ bool ps_select_same_bits(K a, K b) {
    typedef typename ps_select_bits<sizeof(K)>::type U; /* bit for bit: -0.0 != +0.0, equal NaNs equal */
    U x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* The decision of one item, with the predicate (or the flags: PS_SELECT_BY_FLAGS) fixed at compile time: the row
 * tile dispatches once per tile on the call's predicate, so an item costs one comparison, not a switch. */
#define PS_SELECT_BY_FLAGS (-1)
template <int MODE, class K>
__device__ __forceinline__ bool ps_select_test(const ps_select_params<K> &p, K k, uint8_t flag, uint64_t i) {
    const K c = p.operand;
    switch (MODE) {
    case PS_SELECT_BY_FLAGS: return flag != 0;
    case PSCAN_PRED_UNIQUE: return i == 0 || !ps_select_same_bits(k, p.keys[i - 1]);
    case PSCAN_PRED_NONZERO: return k != K(0);
    case PSCAN_PRED_EQ: return k == c;
    case PSCAN_PRED_NE: return k != c;
    case PSCAN_PRED_LT: return k < c;
    case PSCAN_PRED_LE: return k <= c;
    case PSCAN_PRED_GT: return k > c;
    default: return k >= c;
    }
}

/* One switch over every mode of a call, flags or a predicate of the public list (PSCAN_PRED_LIST), each case
 * expanding PS_SELECT_CALL_(MODE), which the site defines: the tile's ballots and the partition's count kernel
 * pick their compile-time mode from the same list. */
#define PS_SELECT_MODE_CASE_(NAME, name)                                                                       \
    case PSCAN_PRED_##NAME: PS_SELECT_CALL_(PSCAN_PRED_##NAME); break;
#define PS_SELECT_SWITCH_(mode)                                                                                \
    switch (mode) {                                                                                            \
    case PS_SELECT_BY_FLAGS: PS_SELECT_CALL_(PS_SELECT_BY_FLAGS); break;                                       \
        PSCAN_PRED_LIST(PS_SELECT_MODE_CASE_)                                                                  \
    default: break; /* the core refuses any other predicate */                                                 \
    }

/* The last tile's count: total items kept, at any address of *count. */
__device__ __forceinline__ void ps_select_store_count(uint64_t *count, uint64_t total) {
    if (((uintptr_t)count & 7u) == 0) {
        *count = total;
    } else {
        unsigned char *c = (unsigned char *)count;
#pragma unroll
        for (int b = 0; b < 8; b++) c[b] = (unsigned char)(total >> (8 * b));
    }
}

/* DIRECT (the small tiles' form, PS_SELECT_SMALL_DIRECT above): the keys (and flags) go straight to registers, a
 * row a load, and a select or partition of keys alone writes each item from its register to its output slot (a
 * warp's kept items of a row are consecutive slots: one coalesced run); no parking, no staging, three barriers
 * fewer. The default tile parks and stages: its 32 rows would hold 32 registers across the look-back, and its
 * writes are whole lines. */
/* WIDE_VALUES: the program has vec_values_wide (payloads of another width in the vector form, VEC_VALUES_WIDE); the
 * counted partitions of 2-byte keys alone or with payloads of their width run without it (select_tiers::counted). */
template <class K, int ROWS_ = PS_SELECT_KEY_ROWS(sizeof(K)), int MINB = PS_SELECT_KEY_MIN_BLOCKS(sizeof(K)), bool DIRECT = false,
          bool WIDE_VALUES = true>
struct ps_select_program {
    typedef uint64_t carry;
    typedef K key;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MINB,
        WARPS = THREADS / PS_WARP_LANES,
        ROWS = ROWS_,
        TILE = ROWS * THREADS,
        SLICES = ROWS * WARPS,               /* one ballot per row and warp */
        SLICES_PER_LANE = SLICES / PS_WARP_LANES,
        VEC = PS_SELECT_VEC && sizeof(K) <= PS_SELECT_VEC_BYTES && !DIRECT,
        VEC_ITEMS = 16 / sizeof(K),                  /* keys a 16-byte vector (VEC) */
        VEC_CHUNKS = TILE / VEC_ITEMS / THREADS,      /* vectors a thread (VEC) */
        VEC_LANES = VEC_ITEMS >= 8 ? 1 : 8 / VEC_ITEMS, /* lanes whose vectors' decisions make one byte (VEC) */
        VEC_FLAGS = VEC && PS_SELECT_VEC_FLAGS,        /* a select by flags holds them in registers (VEC) */
        PAYLOAD_UNROLL = PS_SELECT_PAYLOAD_UNROLL,
        VEC_GROUP = VEC_CHUNKS < PS_SELECT_VEC_VALUES_GROUP ? VEC_CHUNKS : PS_SELECT_VEC_VALUES_GROUP /* (VEC_VALUES) */
    };
    static_assert(SLICES % PS_WARP_LANES == 0, "warp 0 scans the slices, the same number per lane");
    static_assert((size_t)TILE * sizeof(K) <= PS_SELECT_STAGE_BYTES, "the tile's keys are parked in the staging buffer");
    static_assert(!VEC || VEC_CHUNKS % VEC_GROUP == 0, "VEC_VALUES: whole groups of vectors a thread");
    static_assert(!VEC || VEC_CHUNKS * VEC_ITEMS * THREADS == TILE,
                  "VEC: whole vectors a thread (the staging's 48 bytes more hold both groups' offsets in 16 bytes)");

    typedef ps_select_params<K> params;
    struct smem {
        /* the tile's keys in item order from the load to the start of consume (parked: no registers hold them
         * across the look-back), then the keys and payloads at their output ranks */
        /* 48 more (VEC): each run starts at its output's offset in 16 bytes and the rejected run after the kept run's
         * end rounded up to 16, three gaps of up to 15 bytes: with 32 more, a 64-row i16 or 32-row i32 partition tile
         * staged up to 10 bytes past the end (into the unused flags member behind it; found by a simulation of the
         * staging, thirty-sixth session) */
        uint64_t staging[(PS_SELECT_STAGE_BYTES + 48) / 8];
        uint4 flags[VEC_FLAGS ? 1 : TILE / 16]; /* the tile's flags, parked the same way (a select by flags) */
        uint32_t masks[ROWS][WARPS];
        uint32_t offsets[ROWS][WARPS];
        uint32_t kept;
    };
    struct local {
        K key[ROWS];
        uint8_t flag[ROWS]; /* DIRECT, by flags */
        typename ps_select_vec_flags<VEC_ITEMS>::type vflag[VEC_FLAGS ? VEC_CHUNKS : 1]; /* VEC_FLAGS, by flags */
        uint64_t base;
        uint64_t kept_total; /* a partition on a driver that knows the total (the total hook) */
        uint32_t valid;
        K edge; /* unique: the key before a parked tile (thread 0), loaded with the tile's copies */
    };

    static __device__ __forceinline__ uint64_t combine(uint64_t a, uint64_t b) { return a + b; }
    static __device__ __forceinline__ uint64_t identity() { return 0; }
    static __device__ __forceinline__ uint64_t initial(const params &) { return 0; }
    /* A partition whose launcher ran no counting pass (kept_total NULL: one tile, one cluster, or a cooperative
     * launch) takes the size of its first group from the driver. */
    static __host__ __device__ __forceinline__ bool total_wanted(const params &p) { return p.partition && !p.kept_total; }
    static __device__ __forceinline__ void total(const params &, uint64_t t, local &l, smem &) { l.kept_total = t; }
    /* A counted partition runs on the given-prefix driver (chain/given.cuh): the count left every tile's prefix. */
    static __device__ __forceinline__ uint64_t given(const params &p, uint32_t id) {
        return p.block_prefix[id / p.per] + p.tile_prefix[id];
    }

    /* One ballot per row and warp of the decisions (items past the end of the last tile are never kept). */
    template <int MODE>
    static __device__ __forceinline__ void ballots(const params &p, const local &l, smem &s) {
        /* the keys from their parking place: row k of a warp reads 32 consecutive keys, no bank conflict */
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        /* unique, a parked tile: the key before item o is parked at o - 1; the tile's first item's, before the tile,
         * is the one key read from global memory (the note above the key widths). The call's first item is asked as
         * o == 0 of tile 0, which rows k > 0 fold away (o >= THREADS), where l.base + o == 0, a 64-bit add the
         * compiler cannot prove never wraps, cost each of the 32 rows an add and compare (96 instructions of the i32
         * kernel's 8320). H200, thirty-fifth session, tune_select --unique, two rounds, best us before / after:
         * i32 2^21 14.34 / 13.98, 2^28 538.2 / 530.8 (CUB 592); u8 2^22 16.16 / 15.87, 2^28 454.5 / 443.6 (CUB
         * 431.7); i64 2^28 964.6 / 962.4 (docs/bench/h200-select-unique-first-row.csv). */
        constexpr bool LOCAL = MODE == PSCAN_PRED_UNIQUE && !DIRECT;
        const K *park = reinterpret_cast<const K *>(s.staging);
        if constexpr (VEC) {
            /* vector q of the tile, items VEC_ITEMS x q on, decides the bits VEC_ITEMS x q on of the mask words
             * (item order from bit 0, little-endian: a half word of 16 decisions, a byte of 8 or of two lanes' 4) */
            typedef typename ps_select_bits<VEC_ITEMS >= 8 ? VEC_ITEMS / 8 : 1>::type H;
#pragma unroll
            for (int c = 0; c < VEC_CHUNKS; c++) {
                const uint32_t q = c * THREADS + threadIdx.x, o = q * VEC_ITEMS;
                const uint4 v = reinterpret_cast<const uint4 *>(s.staging)[q];
                K key[VEC_ITEMS];
                memcpy(key, &v, sizeof key);
                uint8_t flag[16] = {0};
                if constexpr (MODE == PS_SELECT_BY_FLAGS) { /* the vector's flags in one load */
                    typedef typename ps_select_vec_flags<VEC_ITEMS>::type F;
                    F f;
                    if constexpr (VEC_FLAGS) f = l.vflag[c];
                    else f = reinterpret_cast<const F *>(s.flags)[q];
                    memcpy(flag, &f, VEC_ITEMS);
                }
                K before = K(0);
                if constexpr (LOCAL) before = o > 0 ? park[o - 1] : l.edge;
                uint32_t bits = 0;
#pragma unroll
                for (int j = 0; j < VEC_ITEMS; j++) {
                    bool keep;
                    if constexpr (LOCAL)
                        keep = (j == 0 && o == 0 && l.base == 0) || !ps_select_same_bits(key[j], j > 0 ? key[j - 1] : before);
                    else
                        keep = ps_select_test<MODE>(p, key[j], flag[j], 0);
                    bits |= (uint32_t)keep << j;
                }
                if (o + VEC_ITEMS > l.valid) bits &= o >= l.valid ? 0u : (1u << (l.valid - o)) - 1u;
                /* fewer than 8 decisions a vector: the next VEC_LANES - 1 lanes' (their vectors follow) to make a byte */
#pragma unroll
                for (int d = 1; d < VEC_LANES; d <<= 1) bits |= __shfl_down_sync(PS_WARP_ALL, bits, d) << (d * VEC_ITEMS);
                if (lane % VEC_LANES == 0) reinterpret_cast<H *>(&s.masks[0][0])[q / VEC_LANES] = (H)bits;
            }
        } else {
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                const K key = DIRECT ? l.key[k] : park[o];
                const uint8_t flag = MODE != PS_SELECT_BY_FLAGS ? 0
                                     : DIRECT                  ? l.flag[k]
                                                               : reinterpret_cast<const uint8_t *>(s.flags)[o];
                bool keep;
                if constexpr (LOCAL)
                    keep = o < l.valid && ((o == 0 && l.base == 0) || !ps_select_same_bits(key, o > 0 ? park[o - 1] : l.edge));
                else
                    keep = o < l.valid && ps_select_test<MODE>(p, key, flag, l.base + o);
                const unsigned mask = __ballot_sync(PS_WARP_ALL, keep);
                if (lane == 0) s.masks[k][warp] = mask;
            }
        }
    }

    /* No prefetch hook (chain/single_pass.cuh): H200, 2^28 (twentieth session, docs/bench/h200-prefetch-select.csv),
     * i32 keys > 0 0.751 -> 0.760 of copy, by flags 0.806 -> 0.793; i64 0.806 -> 0.818, 0.840 -> 0.844. */
    static __device__ __forceinline__ uint64_t reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load every row first, then decide: one ballot per row and warp. (Loading and deciding in one
         * loop let the compiler issue each row's load only after the previous row's ballot: one memory
         * latency per row, and select ran at 0.35 of copy.) ---- */
        /* ---- park the tile's keys in shared memory, in item order: a full, aligned tile with cp.async (16-byte
         * copies, no registers in flight), else key by key; the flags (if any) to registers ---- */
        K *park = reinterpret_cast<K *>(s.staging);
        uint8_t *flag_park = reinterpret_cast<uint8_t *>(s.flags);
        const bool full = l.valid == (uint32_t)TILE;
        const bool from_bits = full && p.bits; /* the count left this tile's ballots */
        if (DIRECT) { /* every row's load issued before any decision */
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                l.key[k] = o < l.valid ? p.keys[l.base + o] : K(0);
                l.flag[k] = p.flags && !from_bits && o < l.valid ? p.flags[l.base + o] : 0;
            }
            if (from_bits) {
                for (uint32_t w = threadIdx.x; w < (uint32_t)SLICES; w += THREADS)
                    (&s.masks[0][0])[w] = p.bits[(uint64_t)id * SLICES + w];
                __syncthreads(); /* the masks, for warp 0's scan (no ballots, no barrier after them) */
            }
        } else if (full && ((uintptr_t)p.keys & 15u) == 0) {
            enum { COPIES = TILE * sizeof(K) / 16 / THREADS };
            static_assert(COPIES * 16 * THREADS == TILE * sizeof(K), "a tile is whole 16-byte copies per thread");
            const uint4 *src = reinterpret_cast<const uint4 *>(p.keys + l.base);
#pragma unroll
            for (int c = 0; c < COPIES; c++) {
                const unsigned dst = (unsigned)__cvta_generic_to_shared(reinterpret_cast<uint4 *>(park) + c * THREADS + threadIdx.x);
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + c * THREADS + threadIdx.x) : "memory");
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
        } else {
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                park[o] = o < l.valid ? p.keys[l.base + o] : K(0);
            }
        }
        /* unique: the key before a parked tile, the one global load of its ballots, issued here rather than after
         * the copies' wait and barrier, so its round trip overlaps theirs (warp 0's first ballot waits for it, and the
         * barrier after the ballots for warp 0). H200, thirty-fourth session, tune_select --unique, two runs, before
         * / after us: i32 2^24 46.05 / 44.74, 45.92 / 45.06; 2^28 537.5 / 534.0, 537.4 / 533.0 (CUB 587); i64 2^28
         * 957.5 / 952.6, 958.9 / 952.1 (CUB 992); u8 2^28 452.9 / 450.2, 453.9 / 450.4 (CUB 427); keys > 0 unchanged
         * (2^28 503.7 / 504.8, 504.1 / 504.2). */
        if (!DIRECT && !p.flags && p.pred == PSCAN_PRED_UNIQUE)
            l.edge = threadIdx.x == 0 && l.base > 0 ? p.keys[l.base - 1] : K(0);
        if (DIRECT) {
            /* the flags were loaded with the keys, the bits' masks beside them */
        } else if (from_bits) {
            for (uint32_t w = threadIdx.x; w < (uint32_t)SLICES; w += THREADS)
                (&s.masks[0][0])[w] = p.bits[(uint64_t)id * SLICES + w]; /* row k, warp w: word k x WARPS + w */
        } else if (p.flags) {
            if constexpr (VEC_FLAGS) { /* each vector's flags to registers, in flight beside the keys' copies */
                const bool whole = full && ((uintptr_t)p.flags % VEC_ITEMS) == 0;
#pragma unroll
                for (int c = 0; c < VEC_CHUNKS; c++) {
                    const uint32_t o = (c * THREADS + threadIdx.x) * VEC_ITEMS;
                    typedef typename ps_select_vec_flags<VEC_ITEMS>::type F;
                    if (whole) {
                        l.vflag[c] = *reinterpret_cast<const F *>(p.flags + l.base + o);
                    } else {
                        uint8_t b[VEC_ITEMS];
#pragma unroll
                        for (int j = 0; j < VEC_ITEMS; j++) b[j] = o + j < l.valid ? p.flags[l.base + o + j] : 0;
                        memcpy(&l.vflag[c], b, VEC_ITEMS);
                    }
                }
            } else if (full && ((uintptr_t)p.flags & 15u) == 0) {
                const uint4 *src = reinterpret_cast<const uint4 *>(p.flags + l.base);
                for (uint32_t c = threadIdx.x; c < (uint32_t)TILE / 16; c += THREADS) {
                    const unsigned dst = (unsigned)__cvta_generic_to_shared(&s.flags[c]);
                    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src + c) : "memory");
                }
                asm volatile("cp.async.commit_group;" ::: "memory");
            } else {
#pragma unroll
                for (int k = 0; k < ROWS; k++) {
                    const uint32_t o = k * THREADS + threadIdx.x;
                    flag_park[o] = o < l.valid ? p.flags[l.base + o] : 0;
                }
            }
        }
        if (!DIRECT) {
            asm volatile("cp.async.wait_group 0;" ::: "memory");
            __syncthreads(); /* every thread's copies: a row's keys were copied by other threads */
        }
        /* once per tile: each item then costs one test */
        if (!from_bits) {
#define PS_SELECT_CALL_(MODE) ballots<MODE>(p, l, s)
            PS_SELECT_SWITCH_(p.flags ? PS_SELECT_BY_FLAGS : p.pred)
#undef PS_SELECT_CALL_
            __syncthreads();
        }

        /* ---- warp 0: exclusive scan of the slices' counts in item order ---- */
        if (warp == 0) {
            uint32_t c[SLICES_PER_LANE], sum = 0;
#pragma unroll
            for (int j = 0; j < SLICES_PER_LANE; j++) {
                c[j] = __popc((&s.masks[0][0])[lane * SLICES_PER_LANE + j]);
                sum += c[j];
            }
            uint32_t inclusive = sum;
#pragma unroll
            for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) {
                const uint32_t y = __shfl_up_sync(PS_WARP_ALL, inclusive, d);
                if (lane >= d) inclusive += y;
            }
            uint32_t running = inclusive - sum;
#pragma unroll
            for (int j = 0; j < SLICES_PER_LANE; j++) {
                (&s.offsets[0][0])[lane * SLICES_PER_LANE + j] = running;
                running += c[j];
            }
            if (lane == PS_WARP_LANES - 1) s.kept = inclusive;
        }
        __syncthreads();
        return s.kept;
    }

    /* Stages this thread's items at their ranks (KEYS: the keys it holds; else payloads, read from in), then
     * writes the staged items out in item order, consecutive threads to consecutive addresses. The items to
     * write (slots 0 .. written of the tile's output order) go through the buffer STAGE at a time: one pass for
     * keys (a tile's keys are at most the buffer's 32 KiB), two for 8-byte payloads of smaller keys; each item is
     * loaded once. */
    template <class V, bool KEYS>
    static __device__ __forceinline__ void move(const params &p, const V *in, V *out, const local &l, smem &s,
                                                uint64_t prefix, uint32_t kept, uint64_t rejected_at) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const uint32_t STAGE = PS_SELECT_STAGE_BYTES / sizeof(V);
        V *staged = reinterpret_cast<V *>(s.staging);
        const uint32_t written = p.partition ? l.valid : kept;
        for (uint32_t lo = 0; lo < written; lo += STAGE) { /* the same trip count in every thread */
#pragma unroll(KEYS ? ROWS : PAYLOAD_UNROLL)
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                if (o < l.valid) {
                    const unsigned mask = s.masks[k][warp];
                    const uint32_t rank = s.offsets[k][warp] + __popc(mask & ((1u << lane) - 1u));
                    const bool keep = (mask >> lane) & 1u;
                    const uint32_t slot = (keep ? rank : kept + (o - rank)) - lo; /* wraps when below lo */
                    if ((keep || p.partition) && slot < STAGE) {
                        V x;
                        if constexpr (KEYS)
                            x = l.key[k];
                        else
                            x = in[l.base + o];
                        staged[slot] = x;
                    }
                }
            }
            __syncthreads();
            const uint32_t end = written - lo < STAGE ? written : lo + STAGE;
            for (uint32_t j = lo + threadIdx.x; j < end; j += THREADS)
                out[j < kept ? prefix + j : rejected_at + (j - kept)] = staged[j - lo];
            __syncthreads(); /* the buffer is reused by the next pass or call */
        }
    }

    /* VEC: count items of E staged from slot first on (first at the output's offset in its 16 bytes) to the output at
     * address at: the whole 16-byte blocks in one store each, the first and the last (where the run starts or ends
     * inside them) item by item. */
    typedef typename ps_select_bits<sizeof(K)>::type U; /* VEC moves keys and payloads of their width as bits */
    template <class E = U>
    static __device__ __forceinline__ void vec_out(const smem &s, uint32_t first, uint32_t count, uintptr_t at) {
        const uint32_t from = first * (uint32_t)sizeof(E), end = from + count * (uint32_t)sizeof(E); /* staging bytes */
        const uintptr_t base = at - from; /* 16-aligned: the address of staging byte 0 */
        for (uint32_t b = from / 16 + threadIdx.x; b < (end + 15) / 16; b += THREADS) {
            if (16 * b >= from && 16 * b + 16 <= end) {
                *reinterpret_cast<uint4 *>(base + 16 * b) = reinterpret_cast<const uint4 *>(s.staging)[b];
            } else {
                const uint32_t lo = 16 * b > from ? 16 * b : from, hi = 16 * b + 16 < end ? 16 * b + 16 : end;
                for (uint32_t i = lo; i < hi; i += sizeof(E))
                    *reinterpret_cast<E *>(base + i) = reinterpret_cast<const E *>(s.staging)[i / sizeof(E)];
            }
        }
    }

    /* VEC: one array's items of the tile (keys, or payloads of the keys' width) are staged in two runs (kept, then
     * for a partition rejected), each at its output's offset in 16 bytes, so staged and output vectors line up and
     * the middle of each run goes out in 16-byte stores: vec_place says where the runs start, vec_stage stages N of
     * this thread's vectors (its chunks c0 on), vec_write writes the runs out after a barrier. */
    struct vec_runs {
        uintptr_t kept_at, rest_at; /* the runs' first output addresses */
        uint32_t a, r;              /* and their first slots in the staging */
    };
    /* the runs of kept_n kept items to out + kept_from and the rest to out + rest_from (items of E) */
    template <class E = U>
    static __device__ __forceinline__ vec_runs vec_place(const params &p, const E *out, uint64_t kept_from, uint32_t kept_n,
                                                         uint64_t rest_from) {
        enum { PER = 16 / sizeof(E) }; /* items of E a 16-byte block */
        vec_runs w;
        w.kept_at = (uintptr_t)(out + kept_from);
        w.rest_at = (uintptr_t)(out + rest_from);
        w.a = (uint32_t)(w.kept_at & 15u) / sizeof(E);
        w.r = p.partition ? (w.a + kept_n + PER - 1) / PER * PER + (uint32_t)(w.rest_at & 15u) / sizeof(E) : 0;
        return w;
    }
    /* the N items from item o on (x: their keys or payloads, of E) at their ranks in w's runs, which start at the
     * tile's k0-th kept and j0-th rejected item (N divides 32, o a multiple of N: one mask word) */
    template <class E, int N>
    static __device__ __forceinline__ void vec_stage_items(const params &p, const local &l, smem &s, const E (&x)[N],
                                                           uint32_t o, const vec_runs &w, uint32_t k0, uint32_t j0) {
        E *staged = reinterpret_cast<E *>(s.staging);
        const uint32_t word = o / 32;
        const uint32_t mask = (&s.masks[0][0])[word], bits = (mask >> (o % 32)) & ((1u << N) - 1u);
        const uint32_t before = (&s.offsets[0][0])[word] + __popc(mask & ((1u << (o % 32)) - 1u)); /* kept before o */
        uint32_t rank = before - k0, other = o - before - j0;
#pragma unroll
        for (int j = 0; j < N; j++) {
            if ((bits >> j) & 1u) staged[w.a + rank++] = x[j];
            else if (p.partition && o + j < l.valid) staged[w.r + other++] = x[j];
        }
    }
    template <int N>
    static __device__ __forceinline__ void vec_stage(const params &p, const local &l, smem &s, const uint4 (&v)[N], int c0,
                                                     const vec_runs &w) {
#pragma unroll
        for (int i = 0; i < N; i++) {
            U x[VEC_ITEMS];
            memcpy(x, &v[i], sizeof x);
            vec_stage_items(p, l, s, x, ((c0 + i) * THREADS + threadIdx.x) * VEC_ITEMS, w, 0, 0);
        }
    }
    static __device__ __forceinline__ void vec_write(const params &p, const local &l, const smem &s, const vec_runs &w,
                                                     uint32_t kept) {
        vec_out(s, w.a, kept, w.kept_at);
        if (p.partition) vec_out(s, w.r, l.valid - kept, w.rest_at);
    }

#if PS_SELECT_VEC_VALUES_WIDE
    /* VEC_VALUES_WIDE: payloads of another width than the keys' (E) in the vector form. A chunk (a thread's VEC_ITEMS
     * consecutive items) carries VEC_ITEMS x sizeof(E) bytes of payload, loaded 16 bytes (or the whole chunk, if less)
     * a thread at a time and staged at the keys' ranks. Payloads wider than the keys pass the staging in passes of G
     * chunk indices: the chunks of one index across the block are consecutive items, so a pass's kept and rejected
     * items are consecutive runs of each group's output (from the k0-th kept and j0-th rejected item of the tile, read
     * from the offsets of the pass's first mask word). A full tile, payloads on a 16-byte boundary (consume). */
    template <class E>
    static __device__ __forceinline__ void vec_values_wide(const params &p, const local &l, smem &s, uint64_t prefix,
                                                           uint32_t kept, uint64_t rejected_at) {
        enum {
            ROW = THREADS * VEC_ITEMS, /* the items of one chunk index across the block */
            FIT = PS_SELECT_STAGE_BYTES / (ROW * (int)sizeof(E)),
            G = FIT < 1 ? 1 : FIT > VEC_CHUNKS ? VEC_CHUNKS : FIT, /* chunk indices a pass */
            LB = VEC_ITEMS * (int)sizeof(E),                        /* a chunk's payload bytes */
            SUB = LB < 16 ? VEC_ITEMS : 16 / (int)sizeof(E),        /* items a load */
        };
        static_assert((size_t)ROW * sizeof(E) <= PS_SELECT_STAGE_BYTES && VEC_CHUNKS % G == 0, "whole chunk indices a pass");
        typedef typename ps_select_vec_flags<SUB * sizeof(E)>::type LT; /* the unsigned type of a load's bytes */
        const E *in = reinterpret_cast<const E *>(p.values) + l.base;
        const E *out = reinterpret_cast<const E *>(p.values_out);
#pragma unroll
        for (int g0 = 0; g0 < VEC_CHUNKS; g0 += G) {
            const uint32_t o0 = g0 * ROW, o1 = (g0 + G) * ROW;
            const uint32_t k0 = (&s.offsets[0][0])[o0 / 32], k1 = o1 < (uint32_t)TILE ? (&s.offsets[0][0])[o1 / 32] : kept;
            const uint32_t j0 = o0 - k0, j1 = o1 - k1;
            const vec_runs w = vec_place<E>(p, out, prefix + k0, k1 - k0, rejected_at + j0);
            if (g0 > 0) __syncthreads(); /* the last pass's stores have read the staging */
#pragma unroll
            for (int c = g0; c < g0 + G; c++) {
#pragma unroll
                for (int b = 0; b < VEC_ITEMS / SUB; b++) {
                    /* consecutive threads load consecutive 16 bytes of the chunk index's payloads (a thread's own
                     * chunk, 32-128 bytes, put each warp load on 32 lines) */
                    const uint32_t o = c * ROW + (b * THREADS + threadIdx.x) * SUB;
                    const LT t = *reinterpret_cast<const LT *>(in + o);
                    E x[SUB];
                    memcpy(x, &t, sizeof x);
                    vec_stage_items(p, l, s, x, o, w, k0, j0);
                }
            }
            __syncthreads();
            vec_out<E>(s, w.a, k1 - k0, w.kept_at);
            if (p.partition) vec_out<E>(s, w.r, j1 - j0, w.rest_at);
        }
    }
#endif

    template <class V>
    static __device__ __forceinline__ void move_values(const params &p, const local &l, smem &s, uint64_t prefix,
                                                       uint32_t kept, uint64_t rejected_at) {
        move<V, false>(p, (const V *)p.values, (V *)p.values_out, l, s, prefix, kept, rejected_at);
    }

    /* The payloads of the items written, by their width (the keys already out). */
    static __device__ __forceinline__ void move_payloads(const params &p, const local &l, smem &s, uint64_t prefix,
                                                         uint32_t kept, uint64_t rejected_at) {
        switch (p.value_bytes) {
        case 1: move_values<uint8_t>(p, l, s, prefix, kept, rejected_at); break;
        case 2: move_values<uint16_t>(p, l, s, prefix, kept, rejected_at); break;
        case 4: move_values<uint32_t>(p, l, s, prefix, kept, rejected_at); break;
        case 8: move_values<uint64_t>(p, l, s, prefix, kept, rejected_at); break;
        default: break;
        }
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, uint64_t prefix, uint64_t aggregate,
                                                   local &l, smem &s) {
        const uint32_t kept = (uint32_t)aggregate;
        /* the first slot of this tile's rejected items: after every kept item, and the tiles' rejected before */
        const uint64_t rejected_at =
            p.partition && kept < l.valid ? (p.kept_total ? (uint64_t)*p.kept_total : l.kept_total) + (l.base - prefix) : 0;
        if constexpr (VEC) {
            /* the keys from the parked vectors (vec_place, vec_stage, vec_write); payloads of the keys' width in a
             * full tile at a 16-byte boundary the same way, loaded straight to registers; other payloads as the row
             * form moves them (vec_values_wide in a full tile at a 16-byte boundary) */
            uint4 v[VEC_CHUNKS];
#pragma unroll
            for (int c = 0; c < VEC_CHUNKS; c++) v[c] = reinterpret_cast<const uint4 *>(s.staging)[c * THREADS + threadIdx.x];
            __syncthreads(); /* the staging below writes over the parking place */
            vec_runs w = vec_place(p, reinterpret_cast<const U *>(p.keys_out), prefix, kept, rejected_at);
            vec_stage(p, l, s, v, 0, w);
            __syncthreads();
            vec_write(p, l, s, w, kept);
            if (p.value_bytes != 0) {
                /* payloads of the keys' width, a full tile at a 16-byte boundary (a tile is whole vectors: TILE x K):
                 * VEC_GROUP vectors a thread at a time from global memory to registers (all of an i16 or i32 tile's
                 * eight at once spilled at six blocks' 40 registers), the first group in flight while the keys'
                 * stores drain */
                const bool vec_values = PS_SELECT_VEC_VALUES && p.value_bytes == sizeof(K) && l.valid == (uint32_t)TILE &&
                                        ((uintptr_t)p.values & 15u) == 0;
                const uint4 *src = reinterpret_cast<const uint4 *>(reinterpret_cast<const U *>(p.values) + l.base);
                uint4 u[VEC_GROUP];
                if (vec_values) {
#pragma unroll
                    for (int i = 0; i < VEC_GROUP; i++) u[i] = src[i * THREADS + threadIdx.x];
                }
                __syncthreads(); /* the payloads' staging writes over the keys' */
                if (vec_values) {
                    w = vec_place(p, reinterpret_cast<const U *>(p.values_out), prefix, kept, rejected_at);
#pragma unroll
                    for (int c0 = 0; c0 < VEC_CHUNKS; c0 += VEC_GROUP) {
                        if (c0 > 0) {
#pragma unroll
                            for (int i = 0; i < VEC_GROUP; i++) u[i] = src[(c0 + i) * THREADS + threadIdx.x];
                        }
                        vec_stage(p, l, s, u, c0, w);
                    }
                    __syncthreads();
                    vec_write(p, l, s, w, kept);
                }
#if PS_SELECT_VEC_VALUES_WIDE
                else if (WIDE_VALUES && l.valid == (uint32_t)TILE && ((uintptr_t)p.values & 15u) == 0) {
                    switch (p.value_bytes) {
                    case 1: vec_values_wide<uint8_t>(p, l, s, prefix, kept, rejected_at); break;
                    case 2: vec_values_wide<uint16_t>(p, l, s, prefix, kept, rejected_at); break;
                    case 4: vec_values_wide<uint32_t>(p, l, s, prefix, kept, rejected_at); break;
                    default: vec_values_wide<uint64_t>(p, l, s, prefix, kept, rejected_at); break;
                    }
                }
#endif
                else {
                    move_payloads(p, l, s, prefix, kept, rejected_at);
                }
            }
            if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
            return;
        }
        if (!DIRECT) { /* the parked keys to registers, then a barrier: the staging below writes over the parking place */
#pragma unroll
            for (int k = 0; k < ROWS; k++) l.key[k] = reinterpret_cast<const K *>(s.staging)[k * THREADS + threadIdx.x];
            __syncthreads();
        }
        if (DIRECT && p.value_bytes == 0) { /* keys alone, each from its register to its slot */
            const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
            const unsigned below = (1u << lane) - 1u;
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                const unsigned mask = s.masks[k][warp];
                const uint32_t rank = s.offsets[k][warp] + __popc(mask & below);
                if ((mask >> lane) & 1u) p.keys_out[prefix + rank] = l.key[k];
                else if (p.partition && o < l.valid) p.keys_out[rejected_at + (o - rank)] = l.key[k];
            }
            if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
            return;
        }
        if (!p.partition && p.value_bytes == 0) {
            /* the common case, a select of keys alone: every kept key of the tile fits the staging buffer at once,
             * so no pass loop, no second group, no payload and no bounds (items past the end are never kept) */
            const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
            const unsigned below = (1u << lane) - 1u;
            K *staged = reinterpret_cast<K *>(s.staging);
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const unsigned mask = s.masks[k][warp];
                if ((mask >> lane) & 1u) staged[s.offsets[k][warp] + __popc(mask & below)] = l.key[k];
            }
            __syncthreads();
            K *out = p.keys_out + prefix;
#pragma unroll 4
            for (uint32_t j = threadIdx.x; j < kept; j += THREADS) out[j] = staged[j];
            if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
            return;
        }
#if PS_SELECT_SPLIT_KEYS
        if (p.partition && p.value_bytes == 0) {
            /* a partition of keys alone: the whole tile fits the staging buffer, so one pass as the select's, and
             * two plain loops out (kept, then rejected) instead of move()'s per-item choice of group and bounds */
            const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
            const unsigned below = (1u << lane) - 1u;
            K *staged = reinterpret_cast<K *>(s.staging);
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                const unsigned mask = s.masks[k][warp];
                const uint32_t rank = s.offsets[k][warp] + __popc(mask & below);
                if (o < l.valid) staged[(mask >> lane) & 1u ? rank : kept + (o - rank)] = l.key[k];
            }
            __syncthreads();
            K *out = p.keys_out + prefix;
#pragma unroll 4
            for (uint32_t j = threadIdx.x; j < kept; j += THREADS) out[j] = staged[j];
            if (kept < l.valid) {
                out = p.keys_out + (rejected_at - kept); /* rejected item j of the tile, at slot kept + j of staged */
#pragma unroll 4
                for (uint32_t j = kept + threadIdx.x; j < l.valid; j += THREADS) out[j] = staged[j];
            }
            if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
            return;
        }
#endif

        /* ---- store: keys, then payloads ---- */
        move<K, true>(p, (const K *)NULL, p.keys_out, l, s, prefix, kept, rejected_at);
        move_payloads(p, l, s, prefix, kept, rejected_at);

        if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
    }
};

/* ---- the partition's first pass: how many items each tile keeps, then every tile's prefix and the total. It
 * reads what the decisions need (the flags, or the keys), a warp a tile, in whole 16-byte vectors with UNROLL of
 * them in flight per lane (one byte a thread per load ran at about a third of the copy's bandwidth: 2^28 i32 on an
 * H100, about 240 of the partition's 1114 us; docs/performance.md, 2026-11-27); a source not aligned to its
 * element, or to 16 bytes, goes element by element. Each block takes a run of tiles and leaves their prefixes
 * within the run and the run's total; the last block to finish (a counter in temp, zeroed before the launch, as
 * CUDA's threadFenceReduction sample) turns the runs' totals into prefixes and writes the total: the second pass
 * then needs no look-back (chain/given.cuh). The predicate is a template
 * argument, as in the row tile's ballots. ---- */
template <int MODE, class K> struct ps_select_count_elem { typedef K type; }; /* what the count reads */
template <class K> struct ps_select_count_elem<PS_SELECT_BY_FLAGS, K> { typedef uint8_t type; };

template <int MODE, class K, class E>
__device__ __forceinline__ uint32_t ps_select_count_one(const ps_select_params<K> &p, E e, uint64_t i) {
    if (MODE == PS_SELECT_BY_FLAGS) return e != E(0);
    return ps_select_test<MODE>(p, (K)e, 0, i) ? 1u : 0u;
}

/* The decisions in one 16-byte vector of E at item i0 (a vector of zero flags counts nothing). */
template <int MODE, class K, class E>
__device__ __forceinline__ uint32_t ps_select_count_vector(const ps_select_params<K> &p, uint4 w, uint64_t i0) {
    if (MODE == PS_SELECT_BY_FLAGS) /* 0xff per nonzero byte */
        return (__popc(__vcmpne4(w.x, 0u)) + __popc(__vcmpne4(w.y, 0u)) + __popc(__vcmpne4(w.z, 0u)) +
                __popc(__vcmpne4(w.w, 0u))) >> 3;
    enum { V = 16 / sizeof(E) };
    E e[V];
    memcpy(e, &w, sizeof e);
    uint32_t c = 0;
#pragma unroll
    for (int j = 0; j < V; j++)
        /* unique: the key before item j > 0 is in this vector; only item 0's is read from global memory (one load a
         * vector, where each item's load waited for the compare before it). H200, thirty-fourth session, tune_select
         * --unique --ops part, two rounds (docs/bench/h200-split-unique-count.csv), the default tiles' counted
         * partitions at 2^28, us: i32 848.5 / 847.6 -> 817.9 / 820.7, u8 637.0 / 637.1 -> 566.8 / 568.0, i64 1654.9 /
         * 1650.8 -> 1618.5 / 1617.7 (CUB's DevicePartition::Flagged over precomputed first-of-run flags: 903, 663,
         * 1425); u8 2^24 54.5 / 54.1 -> 50.4 / 50.3. */
        if constexpr (MODE == PSCAN_PRED_UNIQUE)
            c += j == 0 ? ps_select_count_one<MODE, K>(p, e[0], i0) : !ps_select_same_bits((K)e[j], (K)e[j - 1]);
        else
            c += ps_select_count_one<MODE, K>(p, e[j], i0 + j);
    return c;
}

/* A bit per flag of a 16-byte vector of flags, item order from bit 0. */
__device__ __forceinline__ uint32_t ps_select_flag_bits(uint4 w) {
    const uint32_t x[4] = {w.x, w.y, w.z, w.w};
    uint32_t r = 0;
#pragma unroll
    for (int j = 0; j < 4; j++) {
        const uint32_t m = __vcmpne4(x[j], 0u) & 0x01010101u; /* bit 0 of each byte */
        r |= ((m | m >> 7 | m >> 14 | m >> 21) & 0xfu) << (4 * j);
    }
    return r;
}

/* The most tiles one counting block takes (its counts sit in shared memory): the launch takes more blocks than the
 * device holds where the tiles need it. */
#define PS_SELECT_COUNT_PER 1024
/* The 16-byte loads a lane of the count has in flight, by flags and by keys. A counted partition of 2^22-2^24
 * items has 1024-4096 tiles, a warp each: with 4 loads a lane by keys the SMs ran short of bytes in flight. H200,
 * tune_select, keys > 0, x CUB, 4 -> 8 (twenty-ninth session, docs/bench/h200-split-count-keys2.csv): i32 2^23
 * 0.727 -> 0.864, 2^24 0.825 -> 0.911, 2^26 0.981 -> 1.013, 2^28 1.035 -> 1.067; i64 2^22 0.616 -> 0.819, 2^23
 * 0.712 -> 0.824, 2^25 0.830 -> 0.872, 2^28 0.857 -> 0.903; u8 2^28 1.540 -> 1.578 (2^25 1.369 -> 1.348). 16 gained
 * nothing more; by flags (a 16-byte load is 16 items there) 8 gained nothing (h200-split-count-flags*.csv); nor did
 * 2-8 warps a tile where the tiles are fewer than 32 warps a SM, on top of 8. */
#define PS_SELECT_COUNT_UNROLL_FLAGS 4
#ifndef PS_SELECT_COUNT_UNROLL_KEYS
#define PS_SELECT_COUNT_UNROLL_KEYS 8
#endif
/* Tuning control for a counted partition: 1 runs the count alone (no second pass), 3 the count kernel alone (no
 * memset of its arrival counter, so no block finds itself last after the first call: the count without its memset
 * and its last block's work), so tune_select times them apart; the second pass's time is the whole call's less 1's.
 * Wrong results by design. (2, the second pass alone on prefixes an earlier call left, was dropped in the thirtieth
 * session: tune_select's fresh buffers hold none, and it read out of bounds.) What they showed (H200, thirtieth
 * session, docs/bench/h200-split-count-parts.csv, keys > 0): i32 2^23, whole call 41.8 us, CUB 36.6, copy 20.5,
 * the count alone 20.4 (18.5 without its memset and last block); i64 2^22 39.9 / 30.9 / 20.5 / 20.2. The second
 * read of the keys is what a partition stable in both groups pays (CUB writes its rejected items in reverse
 * order, in one pass): the count reads the bytes at about 4 TB/s past a fixed 10 us (likely the L2's dirty lines
 * from the harness's flush going out during the call; the copy and CUB pay them too). 2 or 4 warps a tile
 * (PS_SELECT_COUNT_SPLIT, tried and removed) changed nothing; nor did an L2 evict_last policy on the count's
 * loads (PS_SELECT_COUNT_EVICT_LAST, removed; h200-split-count-evict.csv), nor the count's blocks taking their runs
 * of tiles last to first, so that the keys read last are the first read again (thirty-seventh session, within 1 %
 * either way at 2^20-2^28, i32 and i64, every test; h200-split-count-reverse.csv). */
#ifndef PS_SELECT_COUNT_CONTROL
#define PS_SELECT_COUNT_CONTROL 0
#endif

/* 1 launches a counted partition's second pass (the given-prefix driver) as a programmatic dependent launch of
 * its count (chain/pdl.cuh): the count's blocks let it be scheduled as they start, and its blocks wait for the
 * count's end before they read the tiles' prefixes or the flags' bits. tune_select -DTUNE_SELECT_DEFAULTS, H200,
 * forty-seventh session, median of 21, off -> on, us (docs/bench/h200-split-pdl-keys.csv, -flags.csv): the counted
 * calls, keys > 0, i32 2^23 41.02 -> 40.00, 2^24 66.11 -> 65.25; i64 2^22 39.01 -> 38.21, 2^23 64.45 -> 63.10, 2^24
 * 115.26 -> 114.21; by flags i32 2^24 53.41 -> 52.19, i64 2^22 32.00 -> 30.59, 2^23 49.38 -> 47.90; the calls that
 * count nothing (below those sizes) within 0.3 us either way, as they should be. */
#ifndef PS_SELECT_PDL
#define PS_SELECT_PDL 1
#endif

/* A call of PS_SELECT_WIDE_FROM .. PS_SELECT_WIDE_TO default tiles looks back over a window of
 * PS_SELECT_WIDE_ENTRIES x 32 tiles instead of the chain's 64 (PS_CHAIN_LANE_ENTRIES, tuned for the scan): there
 * the chain's round trips are what a call waits for (a partition's cooperative launch waits for the last tile's
 * prefix), and half as many of them pay for the reads. H200, thirty-eighth session, tune_select, two rounds, x the
 * 64-tile window's time (docs/bench/h200-select-window.csv): i32 select keys > 0 / by flags / unique, 256 tiles (2^21)
 * 1.044 / 1.026 / 1.033, 512 (2^22) 1.072 / 1.077 / 1.078, 1024 1.017 / 1.048 / 1.051, 2048 1.014 / 1.019 / 1.029,
 * 4096 (2^25) 0.952 / 0.980 / 0.965, 32768 (2^28) 0.892 / 0.921 / 0.912; 128 (2^20) 0.981 / 0.978 / 0.970; partitions
 * (the cooperative launch up to 792 tiles) i32 256 / 512 tiles 1.041 / 1.095, i64 1.025 / 1.101 (2^20 / 2^21); i64
 * select 256 / 512 / 1024 tiles 1.041 / 1.072 / 1.054, 4096 0.962; u8 64-row select 512 / 1024 tiles 1.053 / 1.021,
 * 128-row 512 / 1024 1.082 / 1.043, 2048 0.931-0.993; i16 select 512 / 1024 1.060 / 1.007, 2048 0.958-0.973. So the
 * wider window from 256 tiles to 1024 (beyond, its reads cost more than its rounds save) in the default tiles; a window
 * of 256 tiles (E = 8) lost to 128 everywhere. Not the large tiles (a u8 select past 2^24: 513-1024 of them take the
 * window's range), whose 1024 tiles measured 1.043 / 0.963 / 1.027 in tune_select, and in `pscan bench` u8 2^25 keys >
 * midpoint took 35.3 us with the window, 34.3 without. */
#define PS_SELECT_WIDE_ENTRIES 4
#ifndef PS_SELECT_WIDE_FROM
#define PS_SELECT_WIDE_FROM 256u
#endif
#ifndef PS_SELECT_WIDE_TO
#define PS_SELECT_WIDE_TO 1024u
#endif

/* A block-wide inclusive sum of the 256 threads' v, in thread order (every thread calls; one barrier, and one
 * more before warp_sums is written again). */
__device__ __forceinline__ uint64_t ps_select_inclusive_sum(uint64_t v, unsigned lane, uint64_t *warp_sums, unsigned warp) {
    uint64_t inclusive = ps_warp_inclusive(v, lane, [](uint64_t a, uint64_t b) { return a + b; });
    if (lane == PS_WARP_LANES - 1) warp_sums[warp] = inclusive;
    __syncthreads();
    for (unsigned w = 0; w < warp; w++) inclusive += warp_sums[w];
    __syncthreads();
    return inclusive;
}

template <class P, int MODE>
__global__ void __launch_bounds__(256) ps_select_count_kernel(const typename P::params p, unsigned *done) {
    typedef typename P::key K;
    typedef typename ps_select_count_elem<MODE, K>::type E;
    enum {
        V = 16 / sizeof(E),
        UNROLL = MODE == PS_SELECT_BY_FLAGS ? PS_SELECT_COUNT_UNROLL_FLAGS : PS_SELECT_COUNT_UNROLL_KEYS,
        WARPS = 256 / PS_WARP_LANES
    };
    const E *src = MODE == PS_SELECT_BY_FLAGS ? (const E *)(const void *)p.flags : (const E *)(const void *)p.keys;
    const bool vectors = ((uintptr_t)src & 15u) == 0; /* then every tile starts on a vector (TILE x E: whole ones) */
    static_assert((uint64_t)P::TILE * sizeof(E) % 16 == 0, "a tile is whole vectors");
    static_assert(MODE != PS_SELECT_BY_FLAGS || P::TILE % (32 * 16) == 0, "every lane of a warp takes the bits' shuffle");
    const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
    __shared__ uint32_t counts[PS_SELECT_COUNT_PER];
    __shared__ uint64_t warp_sums[WARPS];
    const uint32_t lo = blockIdx.x * p.per, hi = min(lo + p.per, p.tiles);
    if (PS_SELECT_PDL) ps_pdl_trigger(); /* the second pass may be scheduled; it waits for this kernel's end */

    /* ---- this block's run of tiles, a warp a tile: each tile's kept count to shared memory ---- */
    for (uint32_t t = lo + warp; t < hi; t += WARPS) {
        const uint64_t base = (uint64_t)t * P::TILE, left = p.n - base;
        const uint32_t valid = left < (uint64_t)P::TILE ? (uint32_t)left : (uint32_t)P::TILE;
        uint32_t c = 0, from = 0;
        if (vectors) {
            const uint4 *vec = reinterpret_cast<const uint4 *>(src + base);
            const uint32_t whole = valid / V;
            from = whole * V;
            for (uint32_t v0 = lane; v0 < whole; v0 += UNROLL * PS_WARP_LANES) {
                uint4 w[UNROLL];
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    const uint32_t v = v0 + u * PS_WARP_LANES;
                    w[u] = v < whole ? vec[v] : make_uint4(0, 0, 0, 0);
                }
#pragma unroll
                for (int u = 0; u < UNROLL; u++) {
                    const uint32_t v = v0 + u * PS_WARP_LANES;
                    if (MODE == PS_SELECT_BY_FLAGS || v < whole) c += ps_select_count_vector<MODE, K, E>(p, w[u], base + (uint64_t)v * V);
                    if (MODE == PS_SELECT_BY_FLAGS && p.bits && valid == (uint32_t)P::TILE) {
                        /* 16 flags a lane: a bit each; lanes 2j and 2j + 1 hold items 32j .. 32j + 31 */
                        const uint32_t half = ps_select_flag_bits(w[u]);
                        const uint32_t other = __shfl_xor_sync(PS_WARP_ALL, half, 1);
                        if (!(lane & 1) && v < whole) p.bits[(base + (uint64_t)v * V) / 32] = half | other << 16;
                    }
                }
            }
        }
        for (uint32_t i = from + lane; i < valid; i += PS_WARP_LANES) c += ps_select_count_one<MODE, K>(p, src[base + i], base + i);
#pragma unroll
        for (unsigned d = PS_WARP_LANES / 2; d > 0; d >>= 1) c += __shfl_down_sync(PS_WARP_ALL, c, d);
        if (lane == 0) counts[t - lo] = c;
    }
    __syncthreads();

    /* ---- the run's exclusive prefixes (each thread PER / 256 consecutive counts), and its total ---- */
    enum { RUN = PS_SELECT_COUNT_PER / 256 };
    uint32_t c[RUN], sum = 0;
#pragma unroll
    for (int j = 0; j < RUN; j++) {
        const uint32_t i = threadIdx.x * RUN + j;
        c[j] = lo + i < hi ? counts[i] : 0;
        sum += c[j];
    }
    uint64_t inclusive = ps_select_inclusive_sum(sum, lane, warp_sums, warp);
    uint64_t before = inclusive - sum;
#pragma unroll
    for (int j = 0; j < RUN; j++) {
        const uint32_t i = threadIdx.x * RUN + j;
        if (lo + i < hi) p.tile_prefix[lo + i] = before;
        before += c[j];
    }
    if (threadIdx.x == 255) p.block_prefix[blockIdx.x] = before; /* the block's total, until the last block */

    /* ---- the last block to arrive: the blocks' totals to exclusive prefixes, and the kept total ---- */
    __shared__ bool last;
    __threadfence(); /* this block's total is visible before its arrival is */
    __syncthreads();
    if (threadIdx.x == 0) last = atomicAdd(done, 1u) == gridDim.x - 1;
    __syncthreads();
    if (!last) return;
    __threadfence();
    const uint32_t blocks = gridDim.x, per = (blocks + 255) / 256;
    const uint32_t b0 = min(threadIdx.x * per, blocks), b1 = min(b0 + per, blocks);
    uint64_t run = 0;
    for (uint32_t b = b0; b < b1; b++) run += __ldcg(&p.block_prefix[b]); /* L2: other blocks wrote them */
    inclusive = ps_select_inclusive_sum(run, lane, warp_sums, warp);
    before = inclusive - run;
    for (uint32_t b = b0; b < b1; b++) {
        const uint64_t t = __ldcg(&p.block_prefix[b]);
        p.block_prefix[b] = before;
        before += t;
    }
    if (threadIdx.x == 255) *p.kept_total = before;
}

template <class P>
static void ps_select_count(const typename P::params &p, unsigned grid, unsigned *done, cudaStream_t stream) {
#define PS_SELECT_CALL_(MODE) ps_select_count_kernel<P, MODE><<<grid, 256, 0, stream>>>(p, done)
    PS_SELECT_SWITCH_(p.flags ? PS_SELECT_BY_FLAGS : p.pred)
#undef PS_SELECT_CALL_
}

/* The look-back entries (a counted partition: the tiles' prefixes in their place), then the kept total and the
 * count's arrival counter at a 16-byte boundary, then (a counted partition by flags) the flags' bits. */
static size_t select_chain_bytes(uint64_t tiles) {
    static_assert(sizeof(uint64_t) <= 2 * sizeof(ps_tile_state<uint64_t>::entry), "a tile's prefix fits its entries");
    return (ps_chain_temp_bytes<uint64_t>(tiles) + 15u) & ~(size_t)15u;
}
#define PS_SELECT_TOTAL_BYTES 16u
#if PS_CUDA_PART_ZERO /* the plan's (cuda_ops.cuh: the split) */
static size_t select_bits_bytes(uint64_t n) { return (n + 31) / 32 * 4; }
#endif

/* A counted partition in P's tiles: the count (by C's kernel: of the same tiles; P's where C is P), then the
 * given-prefix driver. p as ps_select_launch sets it. */
template <class P, class C = P>
static cudaError_t ps_select_counted(typename P::params p, void *temp, cudaStream_t stream, int sm_count) {
    static_assert((int)C::TILE == (int)P::TILE, "the count's tiles are the driver's");
    /* blocks of the count: at most PS_SELECT_COUNT_PER tiles each, and no more blocks than tiles / 8 (a warp a
     * tile) or than the device holds at 8 a SM, unless the tiles need them */
    const uint64_t fill = (uint64_t)sm_count * 8, by_warps = ps_cuda_div_up(p.tiles, 256 / PS_WARP_LANES);
    uint64_t blocks = by_warps < fill ? by_warps : fill;
    if (blocks < ps_cuda_div_up(p.tiles, PS_SELECT_COUNT_PER)) blocks = ps_cuda_div_up(p.tiles, PS_SELECT_COUNT_PER);
    p.per = (uint32_t)ps_cuda_div_up(p.tiles, blocks);
    const unsigned grid = (unsigned)ps_cuda_div_up(p.tiles, p.per);
    p.tile_prefix = (uint64_t *)temp;
    p.block_prefix = p.tile_prefix + p.tiles; /* grid <= tiles entries: both fit the chain's 32 bytes a tile */
    p.kept_total = (unsigned long long *)((char *)temp + select_chain_bytes(p.tiles));
    if (PS_SELECT_BITS && p.flags && ((uintptr_t)p.flags & 15u) == 0)
        p.bits = (uint32_t *)((char *)p.kept_total + PS_SELECT_TOTAL_BYTES);
    unsigned *done = (unsigned *)(p.kept_total + 1);
    cudaError_t err = PS_SELECT_COUNT_CONTROL == 3 ? cudaSuccess : cudaMemsetAsync(p.kept_total, 0, PS_SELECT_TOTAL_BYTES, stream);
    if (err != cudaSuccess) return err;
    ps_select_count<C>(p, grid, done, stream);
    if ((err = cudaGetLastError()) != cudaSuccess || PS_SELECT_COUNT_CONTROL != 0) return err;
    return ps_chain_given<P>(p, p.tiles, stream, PS_SELECT_PDL != 0);
}

/* Runs program P over p (n, pointers, predicate set; tiles, kept_total and tile_prefix filled in here). A
 * partition whose driver cannot hand it the total counts first, then runs on the given-prefix driver in program
 * PC's tiles (ps_select_counted: P's, or the same tiles without a path this call does not take); the rest run on
 * the chain, with WIDE (the default tiles) a call of PS_SELECT_WIDE_FROM .. PS_SELECT_WIDE_TO tiles on a window of
 * PS_SELECT_WIDE_ENTRIES x 32 tiles. temp holds select_chain_bytes(tiles) + PS_SELECT_TOTAL_BYTES. */
template <class P, int E = PS_CHAIN_LANE_ENTRIES, bool WIDE = false, class PC = P>
static cudaError_t ps_select_launch(typename P::params p, void *temp, cudaStream_t stream, int sm_count) {
    p.tiles = (uint32_t)ps_cuda_div_up(p.n, (uint64_t)P::TILE);
    p.kept_total = NULL;
    p.tile_prefix = p.block_prefix = NULL;
    p.per = 1;
    p.bits = NULL;
    const bool wide = WIDE && p.tiles >= PS_SELECT_WIDE_FROM && p.tiles <= PS_SELECT_WIDE_TO;
    /* (the driver's limits asked of partitions alone: a select call pays no device query) */
    if (p.partition && !(wide ? p.tiles <= ps_chain_resident_limit<P, PS_SELECT_WIDE_ENTRIES>()
                              : ps_chain_single_pass_knows_total<P, E>(p.tiles)))
        return ps_select_counted<PC, P>(p, temp, stream, sm_count);
    if constexpr (WIDE) {
        if (wide) return ps_chain_single_pass_launch<P, PS_SELECT_WIDE_ENTRIES>(p, p.tiles, temp, stream);
    }
    return ps_chain_single_pass<P, E>(p, p.tiles, temp, stream);
}

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_select.cu includes the program alone */

/* ---- host side ----------------------------------------------------------------------------------------- */

/* The tile programs of a key type: the small tile, half the default tile, the default (the same program where two
 * coincide). */
template <class K> struct select_tiers {
    typedef ps_select_program<K, PS_SELECT_SMALL_ROWS(sizeof(K)), 5,
                              PS_SELECT_SMALL_DIRECT && PS_SELECT_SMALL_ROWS(sizeof(K)) <= PS_SELECT_DIRECT_ROWS>
        small;
    typedef ps_select_program<K, PS_SELECT_KEY_ROWS(sizeof(K)) / 2, 5,
                              PS_SELECT_SMALL_DIRECT && PS_SELECT_KEY_ROWS(sizeof(K)) / 2 <= PS_SELECT_DIRECT_ROWS>
        half;
    /* a call of two small tiles as one tile (PS_SELECT_ONE_TILE), where twice the small rows take the DIRECT form */
    enum { ONE = PS_SELECT_ONE_TILE && PS_SELECT_SMALL_DIRECT && 2 * PS_SELECT_SMALL_ROWS(sizeof(K)) <= PS_SELECT_DIRECT_ROWS };
    typedef ps_select_program<K, 2 * PS_SELECT_SMALL_ROWS(sizeof(K)), 5, true> one;
    typedef ps_select_program<K> full;
    /* the default tiles of a counted partition of 2-byte keys alone or with payloads of their width: the given-prefix
     * kernel without vec_values_wide, which made the i16 kernel spill (6 bytes) and those partitions 2-9 % slower
     * (H200, thirty-ninth session, tune_select -DTUNE_SELECT_DEFAULTS, i16 partitions 2^24-2^28, vec_values_wide
     * compiled out / in, us: by flags 2^26 109.8 / 120.0, 2^28 374.6 / 408.1; keys > 0 2^26 127.9 / 133.4, 2^28
     * 434.5 / 453.3; selects and u8 within 2 %: docs/bench/h200-select-vecwide.csv, c50). Other keys: full. */
    typedef ps_select_program<K, PS_SELECT_KEY_ROWS(sizeof(K)), PS_SELECT_KEY_MIN_BLOCKS(sizeof(K)), false, sizeof(K) != 2>
        counted;
    /* a select past PS_SELECT_LARGE_FROM (select_large_call); the same program as full but for 1-byte keys */
    typedef ps_select_program<K, PS_SELECT_LARGE_ROWS(sizeof(K)), PS_SELECT_LARGE_MIN_BLOCKS(sizeof(K))> large;
    static_assert((uint64_t)small::TILE == PS_SELECT_SMALL_TILE_ITEMS(sizeof(K)) &&
                      (uint64_t)full::TILE == PS_SELECT_TILE_ITEMS(sizeof(K)) &&
                      (uint64_t)large::TILE == PS_SELECT_LARGE_TILE_ITEMS(sizeof(K)) &&
                      (uint64_t)large::TILE >= (uint64_t)full::TILE && /* the plan counts full tiles */
                      (uint64_t)small::TILE <= (uint64_t)half::TILE && (uint64_t)half::TILE == PS_SELECT_TILE_ITEMS(sizeof(K)) / 2,
                  "one set of tiles for plan and launch");
};

/* Whether a partition of n items in P's tiles learns its first group's size inside the call (one tile, one
 * cluster, or no more tiles than the GPU holds at once), so that no counting pass runs. */
template <class P> static bool select_total_known(uint64_t n) {
    return ps_chain_single_pass_knows_total<P>((uint32_t)ps_cuda_div_up(n, (uint64_t)P::TILE));
}

/* The calls that may take the small tiles, asked alike by plan and launch: any call of up to
 * PS_SELECT_SMALL_BYTES of keys, and a partition of up to one cluster of default tiles (select_launch picks among
 * its tiles there). */
static bool select_small_call(uint64_t n, size_t key_bytes) { return n * key_bytes <= PS_SELECT_SMALL_BYTES; }
/* A select past the small tiles and of at most one half tile a SM takes the half tiles, where the default tiles
 * leave most SMs idle (a tile's rows run one after another). H200, thirty-third session, tune_select, median of 25
 * (docs/bench/h200-select-mid.csv), half / default tile / CUB us: i32 keys > 0 2^18 7.49 / 8.70 / 9.02, 2^19 8.54 /
 * 9.12 / 9.92, 2^20 (past the bound) 10.46 / 10.46; unique 2^18 8.10 / 9.76 / 9.25, 2^19 9.06 / 10.34 / 9.44; i64
 * (half: 8 rows, DIRECT) keys > 0 2^17 6.98 / 7.65, 2^18 7.84 / 8.03. Partitions keep their own choice
 * (select_launch). The size query plans as a partition (api.c: "a partition needs at least what a select does"), so
 * select_plan_tiles counts the most tiles either runs (its first build planned the default tiles' look-back entries
 * for a select that ran twice as many: 44 test_select cases failed). Thirty-fourth session, library build: test_select
 * 2234 passed on the H200; `pscan bench` i32 unique 2^18 1.13x CUB, 2^19 1.06x. */
static bool select_half_call(uint64_t n, size_t key_bytes, int sm_count) {
    return n <= (uint64_t)sm_count * (PS_SELECT_TILE_ITEMS(key_bytes) / 2);
}
/* A partition of up to 2^24 items takes the half tiles where the default tile is of 64 rows (1- and 2-byte keys):
 * H200, thirty-fifth session, tune_select, partition keys > 0 / unique / flags, 32 / 64 rows, us: i16 2^21 12.67 /
 * 13.25, 12.00 / 12.16, 13.12 / 13.76; 2^24 46.43 / 49.15, 45.47 / 47.26, 41.70 / 46.34; 2^28 484.3 / 474.9, 483.1 /
 * 460.5, 419.4 / 411.6 (the default tile); u8 2^20 9.92 / 11.23, 9.47 / 10.43, 10.24 / 11.36, 2^24 38.82 / 39.52,
 * 36.45 / 36.77, 37.18 / 39.14 (docs/bench/h200-select-vec.csv, h200-select-tiles.csv). A partition of 4- and
 * 8-byte keys takes them (16 rows of 4-byte keys, 8 DIRECT rows of 8-byte ones) up to 4 MiB of keys: H200,
 * thirty-seventh session, tune_select, partition keys > 0 / by flags, half / default tile (CUB), us: i32 2^18 8.13 /
 * 9.79 (9.12), 8.10 / 9.79 (10.56); 2^19 9.15 / 10.14, 9.44 / 10.40; 2^20 11.46 / 11.74, 11.74 / 11.81; 2^21 (past
 * the bound) 16.26 / 15.36, 16.86 / 15.78; i64 2^17 6.91 / 9.25 (9.86), 7.10 / 8.83; 2^18 8.16 / 9.63, 8.35 / 9.34;
 * 2^19 10.37 / 11.10, 10.56 / 10.82; 2^20 (past) 15.58 / 14.75, 16.26 / 14.72 (docs/bench/h200-select-mid.csv). */
static bool select_partition_half(uint64_t n, size_t key_bytes) {
    return (PS_SELECT_KEY_ROWS(key_bytes) > 2 * PS_SELECT_ROWS && n <= ((uint64_t)1 << 24)) ||
           (key_bytes >= 4 && n * key_bytes <= ((uint64_t)4 << 20));
}
/* A select of more than PS_SELECT_LARGE_FROM 1-byte keys takes the large tiles (128 rows): fewer, larger tiles at
 * five blocks a SM. H200, thirty-sixth session, tune_select, best of two rounds, 64 rows x 6 blocks / 128 x 5, us:
 * u8 2^28 keys > 0 219.1 / 180.7, by flags 231.9 / 199.7, unique 212.7 / 168.6, with a payload of its width 287.9 /
 * 275.2; 2^24 21.4 / 21.9, 25.9 / 23.7, 21.0 / 20.0, 27.8 / 30.0; 2^21 9.4 / 11.1; partitions 2^28 357.8 / 372.3,
 * by flags 312.3 / 326.4 (docs/bench/h200-select-occupancy.csv, c28, build g4). */
static bool select_large_call(uint64_t n, size_t key_bytes) {
    return PS_SELECT_LARGE_ROWS(key_bytes) != PS_SELECT_KEY_ROWS(key_bytes) && n > PS_SELECT_LARGE_FROM;
}
static bool select_partition_picks(uint64_t n, size_t key_bytes) {
    return n <= PS_CHAIN_CLUSTER_MAX * PS_SELECT_TILE_ITEMS(key_bytes);
}

#if PS_CUDA_PART_ZERO /* per call, not per type: in part 0 of the split (cuda_ops.cuh) */
/* The most tiles a call may run: its plan's look-back entries, in small tiles where the launcher may take them. One
 * plan serves select and partition alike (the size query asks as a partition), so it counts the most either runs. */
static uint64_t select_plan_tiles(const ps_request *req, int sm_count) {
    const size_t kb = req->elem_bytes;
    if (select_small_call(req->n, kb) || (req->prim == PS_PRIM_PARTITION && select_partition_picks(req->n, kb)))
        return ps_cuda_div_up(req->n, PS_SELECT_SMALL_TILE_ITEMS(kb));
    if (select_half_call(req->n, kb, sm_count) || (req->prim == PS_PRIM_PARTITION && select_partition_half(req->n, kb)))
        return ps_cuda_div_up(req->n, PS_SELECT_TILE_ITEMS(kb) / 2);
    return ps_cuda_div_up(req->n, PS_SELECT_TILE_ITEMS(kb));
}

pscan_status ps_cuda_select_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (ps_cuda_div_up(req->n, PS_SELECT_TILE_ITEMS(req->elem_bytes)) > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = 0;
    if (req->n > 0)
        /* select and partition need the same temp (the size query answers for both): the partition keeps its
         * kept total after the chain entries */
        *bytes = select_chain_bytes(select_plan_tiles(req, dev->sm_count)) + PS_SELECT_TOTAL_BYTES +
                 (req->prim == PS_PRIM_PARTITION && req->flags ? select_bits_bytes(req->n) : 0);
    return PSCAN_SUCCESS;
}
#endif

template <class K> static cudaError_t select_launch(const ps_request *req, const ps_cuda_device *dev) {
    typedef select_tiers<K> T;
    ps_select_params<K> p;
    memset(&p, 0, sizeof p);
    p.keys = (const K *)req->in;
    p.values = req->in2;
    p.flags = (const uint8_t *)req->flags;
    p.keys_out = (K *)req->out;
    p.values_out = req->out2;
    p.count = (uint64_t *)req->count;
    p.n = req->n;
    p.pred = (int)req->pred;
    p.partition = req->prim == PS_PRIM_PARTITION;
    p.value_bytes = (uint32_t)req->value_bytes;
    memcpy(&p.operand, req->operand.bytes, sizeof(K));
    const cudaStream_t stream = dev->stream;
    if constexpr ((bool)T::ONE) {
        if (p.n > (uint64_t)T::small::TILE && p.n <= (uint64_t)T::one::TILE)
            return ps_select_launch<typename T::one>(p, req->temp, stream, dev->sm_count);
    }
    if (p.partition && select_partition_picks(p.n, sizeof(K))) {
        /* the small tiles, when the driver knows the total for them (H100, 2^16 i32: 6.8 us in 64 small tiles of
         * a cooperative launch, 8.2 in a cluster of 16 half tiles, 11.1 in 32 tiles with the counting pass); else
         * the smallest that fit one cluster */
        if (select_total_known<typename T::small>(p.n)) return ps_select_launch<typename T::small>(p, req->temp, stream, dev->sm_count);
        if (select_total_known<typename T::half>(p.n)) return ps_select_launch<typename T::half>(p, req->temp, stream, dev->sm_count);
        if (select_total_known<typename T::full>(p.n))
            return ps_select_launch<typename T::full, PS_CHAIN_LANE_ENTRIES, true>(p, req->temp, stream, dev->sm_count);
    }
    if (select_small_call(p.n, sizeof(K))) return ps_select_launch<typename T::small>(p, req->temp, stream, dev->sm_count);
    if (p.partition ? select_partition_half(p.n, sizeof(K)) : select_half_call(p.n, sizeof(K), dev->sm_count))
        return ps_select_launch<typename T::half>(p, req->temp, stream, dev->sm_count);
    if (!p.partition && select_large_call(p.n, sizeof(K))) return ps_select_launch<typename T::large>(p, req->temp, stream, dev->sm_count);
    if constexpr (!std::is_same<typename T::counted, typename T::full>::value) {
        if (p.partition && (p.value_bytes == 0 || p.value_bytes == sizeof(K)))
            return ps_select_launch<typename T::full, PS_CHAIN_LANE_ENTRIES, true, typename T::counted>(p, req->temp, stream,
                                                                                                        dev->sm_count);
    }
    return ps_select_launch<typename T::full, PS_CHAIN_LANE_ENTRIES, true>(p, req->temp, stream, dev->sm_count);
}

PS_CUDA_PART_DECLARE(ps_cuda_select_part);
cudaError_t PS_CUDA_PART_FN(ps_cuda_select_part)(const ps_request *req, const ps_cuda_device *dev) {
    switch (req->type) { /* this part's types (cuda_ops.cuh: the split) */
#define PS_SELECT_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    case PSCAN_TYPE_##NAME:                                                                                  \
        if constexpr (ps_cuda_here<T>()) return select_launch<T>(req, dev);                                  \
        return cudaErrorInvalidValue;
        PSCAN_ARITH_TYPE_LIST(PS_SELECT_CASE_)
#undef PS_SELECT_CASE_
    default: return cudaErrorInvalidValue;
    }
}
#if PS_CUDA_PART_ZERO
/* Both primitives; n == 0 writes the count alone. */
cudaError_t ps_cuda_select_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    PS_CUDA_PART_CALL(ps_cuda_select_part, req, dev)
}
#endif

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
