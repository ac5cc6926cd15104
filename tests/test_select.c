/*
 * test_select.c - the select and partition test table, read as a specification of pscan_select() and
 * pscan_partition().
 *
 *   test_select --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]
 *
 * For one backend and one algorithm, every result is checked against a serial loop written here (never the
 * library's): the kept items in input order, and for a partition the others after them in input order.
 * Payloads hold the item's index (truncated to 1, 2, 4 or 8 bytes), so any reordering inside a group shows.
 *  - run_table(): every key type x {select, partition} x {flags, and each of the 8 predicates, unique included}, at sizes 0, 1,
 *    1000 and around the CUDA tiles of each key size (32 KiB of keys: 8192 items of 4 bytes, 4096 of 8; tile-1,
 *    tile, tile+1, 16 tiles (one cluster) and one item more (not with --quick); the small tile + 1, twice the
 *    small tile and 16 small tiles + 1: see tile_items(), small_tile_items(); --quick: a third of the modes per
 *    type), payload size cycling through 0, 1, 2, 4, 8; inputs and outputs at their allocation's start or one element in
 *    (alternating); temp from the workspace or a caller buffer at +1 byte; the count at an 8-byte boundary
 *    or 3 bytes past one.
 *  - run_large(): every key type x {select, partition} at 64 * tile + 3 (past the 64-tile look-back window;
 *    on OpenCL 257 * tile + 3, past a row of its spine), at one random size up to 2^22 (2^20 with --quick) and
 *    (not OpenCL) at 256 * tile + 3, with 8-byte payloads: on CUDA a select of up to one half tile a SM takes
 *    half tiles (64 tiles + 3 on a GPU of 128 SMs or more), the default tiles past that.
 *  - run_counted() (CUDA): partitions of 2048 default tiles + 5 items, past what a GPU holds at once, so the
 *    first group is counted first: by flags aligned (their bits) and not, keys alone and with payloads.
 *  - run_patterns(): all kept, none kept, alternating (flags, and the same through nonzero keys), each payload
 *    size, at tile + 1 and 64 * tile + 3.
 *  - run_bad_inputs(): each bad argument returns its exact status and leaves every output as it was.
 * After each call: the status, *count, the written items, and that everything past them (for select past
 * *count, for both past n) still holds its poison bytes.
 *
 * On OpenCL, whose handles are cl_mem and cannot be offset, every buffer (and the count) sits at its start.
 *
 * Keys are small values (-4 .. 4, 0 .. 8 unsigned) with one in eight full-range, so every predicate both
 * keeps and rejects, and signed order is exercised; float keys include -0.0 and NaN.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_select: P passed, F failed".
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"
#include "test_types.h"

#define MAX_REPORTS 20
/* The CUDA tile of each key size (src/cuda/select_tile.h): the sizes follow it. */
#include "select_tile.h"
#define TILE ((size_t)PS_SELECT_ROWS * PS_SELECT_THREADS) /* the row tile: OpenCL's sizes and the API checks */
#define GUARD_ITEMS 8 /* items past n that must stay poisoned */

/* The CUDA tile of a type's keys, in items. */
static size_t tile_items(const type_info *t) {
    return (size_t)PS_SELECT_TILE_ITEMS(t->bytes);
}

/* The CUDA tile of small calls. */
static size_t small_tile_items(const type_info *t) {
    return (size_t)PS_SELECT_SMALL_TILE_ITEMS(t->bytes);
}

/* The largest 256 * tile + 3 of any type: run_large's largest size (run_patterns' is 64 * tile + 3). */
static size_t largest_window_size(void) {
    size_t m = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        if (256 * tile_items(&types[ti]) + 3 > m) m = 256 * tile_items(&types[ti]) + 3;
    return m;
}

static const pscan_pred preds[] = {PSCAN_PRED_NONZERO, PSCAN_PRED_EQ, PSCAN_PRED_NE, PSCAN_PRED_LT,
                                   PSCAN_PRED_LE,      PSCAN_PRED_GT, PSCAN_PRED_GE, PSCAN_PRED_UNIQUE};
static const char *const pred_names[] = {"nonzero", "eq", "ne", "lt", "le", "gt", "ge", "unique"};
#define PRED_COUNT (sizeof preds / sizeof preds[0])
#define MODE_FLAGS ((int)PRED_COUNT) /* mode 0..7: a predicate; 8: flags */
/* every public predicate is in the table */
typedef char pred_table_covers_the_list[PRED_COUNT == PSCAN_PRED_COUNT ? 1 : -1];

static const size_t value_sizes[] = {0, 1, 2, 4, 8};
#define VALUE_SIZE_COUNT (sizeof value_sizes / sizeof value_sizes[0])

/* ---- the reference ------------------------------------------------------------------------------------- */

/* -1, 0, 1 as a < b, ==, >; 2 when unordered (a NaN). */
static int compare(const type_info *t, uint64_t a, uint64_t b) {
    if (t->is_float) {
        double x = raw_float(t, a), y = raw_float(t, b);
        return x < y ? -1 : x > y ? 1 : x == y ? 0 : 2;
    }
    if (t->is_signed) {
        int64_t x = raw_signed(t, a), y = raw_signed(t, b);
        return x < y ? -1 : x > y;
    }
    return a < b ? -1 : a > b;
}

/* prev: the key of the item before (its bits), has_prev: whether there is one (unique keeps item 0). */
static int reference_keep(const type_info *t, int mode, uint64_t key, uint64_t operand, unsigned char flag,
                          int has_prev, uint64_t prev) {
    if (mode == MODE_FLAGS) return flag != 0;
    if (preds[mode] == PSCAN_PRED_UNIQUE) return !has_prev || key != prev; /* bit for bit */
    const int c = compare(t, key, preds[mode] == PSCAN_PRED_NONZERO ? 0 : operand);
    switch (preds[mode]) {
    case PSCAN_PRED_NONZERO: return c != 0;
    case PSCAN_PRED_EQ: return c == 0;
    case PSCAN_PRED_NE: return c != 0;
    case PSCAN_PRED_LT: return c == -1;
    case PSCAN_PRED_LE: return c == -1 || c == 0;
    case PSCAN_PRED_GT: return c == 1;
    default: return c == 1 || c == 0;
    }
}

/* ---- input data ---------------------------------------------------------------------------------------- */

static uint64_t random_key(test_rng *rng, const type_info *t) {
    const uint64_t r = test_rng_next(rng);
    const int small = (int)(r % 9) - (t->is_signed ? 4 : 0);
    if (t->is_float) {
        const unsigned kind = (unsigned)(r >> 32) % 64;
        double d = kind == 0 ? NAN : kind < 3 ? -0.0 : (double)small;
        return float_raw(t, d);
    }
    const uint64_t mask = t->bytes == 8 ? ~0ull : (1ull << (8 * t->bytes)) - 1;
    if ((r >> 40) % 8 == 0) return test_rng_next(rng) & mask;
    return (uint64_t)(int64_t)small & mask;
}

/* Flag patterns: random, all kept, none kept, alternating. */
enum { PATTERN_RANDOM, PATTERN_ALL, PATTERN_NONE, PATTERN_ALTERNATING };
static const char *const pattern_names[] = {"random", "all", "none", "alternating"};

/* ---- the run ------------------------------------------------------------------------------------------- */

typedef test_options options; /* test_common.h */

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;
    size_t max_n;
    /* host: input keys, values, flags; the reference outputs; what came back */
    unsigned char *h_keys, *h_values, *h_flags, *h_ref_keys, *h_ref_values, *h_got;
    /* device: (max_n + 1 + GUARD_ITEMS) items of 8 bytes for each data buffer */
    void *d_keys, *d_values, *d_flags, *d_keys_out, *d_values_out, *d_count, *d_temp;
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

static size_t buffer_bytes(const harness *h) { return (h->max_n + 1 + GUARD_ITEMS) * 8; }

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)
TEST_HARNESS_TEMP(harness)
TEST_HARNESS_OUTPUTS(harness)

/* Fills the first `bytes` of every output buffer with the poison byte: a case poisons what it checks (its items
 * and the guard after them), not the whole buffer (sized for the largest case: poisoning all of it for every case
 * was 90 % of this program's time on the CPU backend). */
static int poison_outputs(harness *h, size_t bytes) {
    memset(h->h_got, TEST_POISON, bytes);
    return pscan_memory_upload(h->ctx, h->d_keys_out, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_values_out, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_count, h->h_got, 16) == PSCAN_SUCCESS;
}

/* Whether every output buffer still holds only poison. */
static int outputs_untouched(harness *h) {
    const size_t bytes = buffer_bytes(h);
    const void *bufs[3] = {h->d_keys_out, h->d_values_out, h->d_count};
    const size_t sizes[3] = {bytes, bytes, 16};
    for (int b = 0; b < 3; b++) {
        if (pscan_memory_download(h->ctx, h->h_got, bufs[b], sizes[b]) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS)
            return 0;
        for (size_t j = 0; j < sizes[b]; j++)
            if (h->h_got[j] != TEST_POISON) return 0;
    }
    return 1;
}

typedef struct one_case {
    const type_info *t;
    int partition;
    int mode;
    size_t value_bytes;
    size_t n;
    int pattern;
    int offset;      /* 0 or 1 element into every data buffer */
    int caller_temp; /* 0: the workspace; 1: a caller buffer at +1 byte */
    int count_at;    /* byte offset of the count in its buffer: 0 or 3 */
    int keys_from_pattern; /* nonzero mode with keys 0 / 1 following the pattern */
} one_case;

static void describe(const one_case *c, char *text, size_t size) {
    snprintf(text, size, "%s %s %s values=%zu n=%zu pattern=%s offset=%d temp=%s count+%d", c->t->name,
             c->partition ? "partition" : "select", c->mode == MODE_FLAGS ? "flags" : pred_names[c->mode],
             c->value_bytes, c->n, pattern_names[c->pattern], c->offset, c->caller_temp ? "caller+1" : "workspace",
             c->count_at);
}

static void run_case(harness *h, const one_case *c_in, uint64_t case_seed) {
    one_case placed = *c_in;
    if (!h->addresses) placed.offset = 0, placed.count_at = 0; /* cl_mem handles: every buffer at its start */
    const one_case *c = &placed;
    const type_info *t = c->t;
    const size_t n = c->n, kb = t->bytes, vb = c->value_bytes, off = (size_t)c->offset;
    char desc[300];
    describe(c, desc, sizeof desc);
    test_rng rng = {test_mix64(case_seed)};

    /* ---- inputs and the reference ---- */
    uint64_t op = random_key(&rng, t);
    if (t->is_float && compare(t, op, op) == 2) op = 0; /* a NaN constant keeps nothing but ne: use 0 instead */
    for (size_t i = 0; i < n; i++) {
        uint64_t key = random_key(&rng, t);
        unsigned char flag;
        switch (c->pattern) {
        case PATTERN_ALL: flag = 1; break;
        case PATTERN_NONE: flag = 0; break;
        case PATTERN_ALTERNATING: flag = (unsigned char)(i % 2 == 0); break;
        default: flag = (unsigned char)(test_rng_next(&rng) % 3 == 0 ? 0 : 1 + test_rng_next(&rng) % 255);
        }
        if (c->keys_from_pattern) key = flag ? 1 : 0;
        memcpy(h->h_keys + (off + i) * kb, &key, kb);
        h->h_flags[off + i] = flag;
        const uint64_t index = i;
        if (vb) memcpy(h->h_values + (off + i) * vb, &index, vb);
    }
    uint64_t kept = 0;
    for (size_t i = 0; i < n; i++)
        kept += (uint64_t)reference_keep(t, c->mode, load_raw(h->h_keys, off + i, kb), op, h->h_flags[off + i], i > 0,
                                         i > 0 ? load_raw(h->h_keys, off + i - 1, kb) : 0);
    uint64_t next_kept = 0, next_rejected = kept;
    for (size_t i = 0; i < n; i++) {
        const int keep = reference_keep(t, c->mode, load_raw(h->h_keys, off + i, kb), op, h->h_flags[off + i], i > 0,
                                        i > 0 ? load_raw(h->h_keys, off + i - 1, kb) : 0);
        if (!keep && !c->partition) continue;
        const uint64_t d = keep ? next_kept++ : next_rejected++;
        memcpy(h->h_ref_keys + (off + d) * kb, h->h_keys + (off + i) * kb, kb);
        if (vb) memcpy(h->h_ref_values + (off + d) * vb, h->h_values + (off + i) * vb, vb);
    }
    const size_t written = c->partition ? n : (size_t)kept;
    const size_t end_bytes = (off + n + GUARD_ITEMS) * 8; /* what the checks below read of each output */

    /* ---- upload, poison, call ---- */
    if (pscan_memory_upload(h->ctx, h->d_keys, h->h_keys, (off + n) * kb + 1) != PSCAN_SUCCESS ||
        (vb && pscan_memory_upload(h->ctx, h->d_values, h->h_values, (off + n) * vb + 1) != PSCAN_SUCCESS) ||
        pscan_memory_upload(h->ctx, h->d_flags, h->h_flags, off + n + 1) != PSCAN_SUCCESS ||
        !poison_outputs(h, end_bytes)) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_select_desc d = {t->type, vb, NULL, PSCAN_PRED_NONZERO, NULL, h->opt.algo};
    if (c->mode == MODE_FLAGS) {
        d.flags = (char *)h->d_flags + off;
        d.pred = (pscan_pred)(case_seed % PRED_COUNT); /* ignored with flags */
    } else {
        d.pred = preds[c->mode];
        d.operand = &op;
    }
    void *temp = NULL;
    size_t temp_bytes = 0, need = 0;
    if (c->caller_temp) {
        const pscan_status ts = pscan_select_temp_bytes(h->ctx, &d, n, &need);
        if (!case_temp(h, desc, "pscan_select_temp_bytes", ts, need, &temp, &temp_bytes)) return;
    }
    uint64_t *count = (uint64_t *)((char *)h->d_count + c->count_at);
    void *keys_in = (char *)h->d_keys + off * kb, *keys_out = (char *)h->d_keys_out + off * kb;
    void *values_in = vb ? (char *)h->d_values + off * vb : NULL;
    void *values_out = vb ? (char *)h->d_values_out + off * vb : NULL;
    pscan_status s = c->partition
                         ? pscan_partition(h->ctx, &d, keys_in, values_in, n, keys_out, values_out, count, temp, temp_bytes)
                         : pscan_select(h->ctx, &d, keys_in, values_in, n, keys_out, values_out, count, temp, temp_bytes);
    if (!call_ok(h, desc, s)) return;

    /* ---- the count, the items, the poison around them ---- */
    unsigned char count_buf[16];
    if (pscan_memory_download(h->ctx, count_buf, h->d_count, 16) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        return;
    }
    uint64_t got_count;
    memcpy(&got_count, count_buf + c->count_at, 8);
    if (got_count != kept || !test_poisoned(count_buf, 0, (size_t)c->count_at) ||
        !test_poisoned(count_buf, (size_t)c->count_at + 8, 16)) {
        char what[500];
        snprintf(what, sizeof what, "%s: count %" PRIu64 ", expected %" PRIu64 " (or bytes around it written)", desc,
                 got_count, kept);
        fail_report(h, what);
        return;
    }
    for (int pass = 0; pass < (vb ? 2 : 1); pass++)
        if (!check_output(h, desc, pass ? "values_out" : "keys_out", pass ? h->d_values_out : h->d_keys_out, h->h_got,
                          pass ? h->h_ref_values : h->h_ref_keys, off, written, pass ? vb : kb, end_bytes))
            return;
    h->passed++;
}

static const size_t value_size_cycle[] = {0, 1, 2, 4, 8};

/* Every type x {select, partition} x mode at the small and tile sizes. */
static void run_table(harness *h) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int part = 0; part < 2; part++)
            for (int mode = 0; mode <= MODE_FLAGS; mode++) {
                /* --quick (the sanitizers' table): a third of the modes per type and side, every mode over the
                 * types; racecheck of the whole table ran past 400 s on an H100 */
                if (h->opt.quick && (size_t)(mode + (int)ti + part) % 3 != 0) {
                    index += 9; /* the quick table's sizes */
                    continue;
                }
                for (size_t si = 0; si < (h->opt.quick ? 9u : 11u); si++, index++) {
                    if (!TEST_IN_SHARD(&h->opt, ti)) continue;
                    /* CUDA's tiers: the small tile, two of them (one tile of twice the rows where
                     * PS_SELECT_ONE_TILE is on), the cluster of 16 small tiles a partition fits in, the default
                     * tile, and 16 of them (past it, a partition counts first; not with --quick, which the
                     * sanitizers run: racecheck took over 400 s on an H100 with them) */
                    const size_t tile = tile_items(&types[ti]), small = small_tile_items(&types[ti]);
                    const size_t sizes[11] = {0,        1,    1000,     small + 1, 2 * small, 16 * small + 1,
                                              tile - 1, tile, tile + 1, 16 * tile, 16 * tile + 1};
                    one_case c = {&types[ti], part, mode, value_size_cycle[index % VALUE_SIZE_COUNT], sizes[si],
                                  PATTERN_RANDOM, (int)(index % 2), (int)(index / 2 % 2), (index / 3 % 2) ? 3 : 0, 0};
                    run_case(h, &c, h->opt.seed ^ (0x1000u + index));
                }
            }
}

/* Past the look-back window and one random size, 8-byte payloads (the full index). OpenCL: past 256 tiles
 * instead, a row of its one-work-group spine (src/opencl/kernels/pattern_common.cl). */
#define OPENCL_LARGE (257 * TILE + 3)
static void run_large(harness *h, size_t random_n) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int part = 0; part < 2; part++)
            for (size_t si = 0; si < 3; si++, index++) {
                /* CUDA: 64 tiles + 3 take half tiles for a select on a GPU of 128 SMs or more
                 * (select_half_call), 256 tiles + 3 the default tiles up to 512 SMs */
                const size_t tile = tile_items(&types[ti]);
                const size_t sizes[3] = {h->addresses ? 64 * tile + 3 : OPENCL_LARGE, random_n,
                                         h->addresses ? 256 * tile + 3 : 0};
                if (si == 2 && !h->addresses) continue;
                const int mode = (int)(index % (PRED_COUNT + 1));
                one_case c = {&types[ti], part, mode, 8, sizes[si], PATTERN_RANDOM, (int)(index % 2),
                              (int)(index / 2 % 2), 0, 0};
                run_case(h, &c, h->opt.seed ^ (0x2000u + index));
            }
}

/* CUDA: a partition of more tiles than a GPU holds at once (an H100 holds 660 default tiles) counts its first
 * group first and runs on the given-prefix driver, where smaller ones take it from the chain's last tile (a
 * cooperative launch). Flags at offset 0 are 16-byte aligned, so the count also leaves the full tiles' flags as
 * bits (select.cu, PS_SELECT_BITS); at offset 1 they are read as flags. Keys alone take the one-pass store
 * (PS_SELECT_SPLIT_KEYS), payloads move(). The last tile (5 items) is partial: flags there, never bits. */
#define COUNTED_TILES 2048
static size_t counted_size(const type_info *t) { return COUNTED_TILES * tile_items(t) + 5; }
typedef struct counted_case {
    size_t type; /* index in types[] */
    int mode;
    size_t value_bytes;
    int offset, caller_temp;
    int quick; /* also in --quick (the sanitizers' table: 16.7M items a case) */
} counted_case;
static const counted_case counted[] = {
    {4, 5, 4, 0, 0, 0},          /* i32 by gt, 4-byte payloads */
    {6, MODE_FLAGS, 4, 1, 0, 1}, /* i64 by flags off 16-byte alignment */
    {4, MODE_FLAGS, 0, 0, 0, 1}, /* i32 keys alone by aligned flags: bits, one-pass store */
    {6, MODE_FLAGS, 8, 0, 1, 1}, /* i64 by aligned flags (16-row tiles) with 8-byte payloads, caller temp */
    {1, MODE_FLAGS, 0, 0, 0, 0}, /* u8 keys alone by aligned flags */
    {8, 7, 0, 1, 0, 0},          /* f32 keys alone, unique, off alignment */
    {4, 7, 4, 0, 0, 0},          /* i32 by unique, aligned: the count kernel's vector path for unique */
    {2, 5, 2, 1, 0, 0},          /* i16 by gt, 2-byte payloads, off alignment: the 64-row vector tile past 2^24 */
    {1, 5, 1, 0, 0, 0},          /* u8 by gt, 1-byte payloads, aligned: the vector form's payloads (VEC_VALUES) */
    {2, MODE_FLAGS, 2, 0, 0, 0}, /* i16 by aligned flags, 2-byte payloads: the same, flags in registers */
    {2, 5, 0, 0, 0, 0},          /* i16 keys alone by gt: the counted program without vec_values_wide */
    {2, 5, 8, 0, 0, 0},          /* i16 by gt, 8-byte payloads, aligned: the default program's vec_values_wide */
};
#define COUNTED_CASES (sizeof counted / sizeof counted[0])
/* CUDA: each case of a list, a select or a partition of size(type) items (--quick: the quick ones). */
static void run_cuda_cases(harness *h, const counted_case *cases, size_t count, int partition,
                           size_t (*size)(const type_info *), unsigned seed_base) {
    if (h->opt.backend != PSCAN_BACKEND_CUDA) return;
    for (size_t k = 0; k < count; k++) {
        if (h->opt.quick && !cases[k].quick) continue;
        const type_info *t = &types[cases[k].type];
        one_case c = {t, partition, cases[k].mode, cases[k].value_bytes, size(t), PATTERN_RANDOM,
                      cases[k].offset, cases[k].caller_temp, 0, 0};
        run_case(h, &c, h->opt.seed ^ (seed_base + (unsigned)k));
    }
}
static void run_counted(harness *h) { run_cuda_cases(h, counted, COUNTED_CASES, 1, counted_size, 0x4000u); }

/* Payloads of the keys' width, each type, select and partition: at offset 0 (values on a 16-byte boundary) CUDA's
 * vector-form tiles move them as the keys (select.cu, PS_SELECT_VEC_VALUES), the last, partial tile by the row
 * form; at offset 1 every tile by the row form. 256 tiles and 3 items: a select takes the default tiles on GPUs of up
 * to 512 SMs (select_half_call); a partition of 1- and 2-byte keys that small takes the half tiles, so run_counted
 * has the default tiles' vector payloads past 2^24. */
static void run_same_width_payloads(harness *h) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int part = 0; part < 2; part++)
            for (int offset = 0; offset < 2; offset++, index++) {
                const int modes[3] = {5 /* gt */, 7 /* unique */, MODE_FLAGS};
                one_case c = {&types[ti], part, modes[index % 3], types[ti].bytes, 256 * tile_items(&types[ti]) + 3,
                              PATTERN_RANDOM, offset, 0, 0, 0};
                run_case(h, &c, h->opt.seed ^ (0x5000u + index));
            }
}

/* CUDA: a select of more than PS_SELECT_LARGE_FROM 1-byte keys takes the large tiles (select_tile.h): three of them
 * past the bound and a partial one, by each kind of test, with and without payloads, on and off alignment. */
static size_t large_select_size(const type_info *t) {
    return (size_t)(PS_SELECT_LARGE_FROM + 3 * PS_SELECT_LARGE_TILE_ITEMS(t->bytes) + 5);
}
static const counted_case large_selects[] = { /* every one in --quick too */
    {1, 5, 1, 0, 0, 1},          /* u8 by gt, 1-byte payloads, aligned: the vector form's payloads */
    {1, 7, 0, 1, 0, 1},          /* u8 unique, keys alone, off alignment */
    {1, MODE_FLAGS, 8, 0, 1, 1}, /* u8 by aligned flags, 8-byte payloads (the row form's move), caller temp */
    {0, 3, 0, 0, 0, 1},          /* i8 by lt, keys alone */
};
#define LARGE_SELECTS (sizeof large_selects / sizeof large_selects[0])
static void run_large_selects(harness *h) {
    run_cuda_cases(h, large_selects, LARGE_SELECTS, 0, large_select_size, 0x6000u);
}

/* All kept, none kept, alternating: through flags and through nonzero keys, each payload size. */
static void run_patterns(harness *h) {
    unsigned index = 0;
    for (int pattern = PATTERN_ALL; pattern <= PATTERN_ALTERNATING; pattern++)
        for (int part = 0; part < 2; part++)
            for (size_t vi = 0; vi < VALUE_SIZE_COUNT; vi++)
                for (int via_keys = 0; via_keys < 2; via_keys++)
                    for (size_t si = 0; si < 2; si++, index++) {
                        const size_t tile = tile_items(&types[index % TYPE_COUNT]);
                        const size_t sizes[2] = {tile + 1, 64 * tile + 3};
                        one_case c = {&types[index % TYPE_COUNT], part, via_keys ? 0 : MODE_FLAGS, value_sizes[vi],
                                      sizes[si], pattern, (int)(index % 2), (int)(index / 2 % 2), 0, via_keys};
                        run_case(h, &c, h->opt.seed ^ (0x3000u + index));
                    }
}

/* Each bad argument: its exact status, and no output written. */
static void run_bad_inputs(harness *h) {
    const size_t n = 16;
    if (!poison_outputs(h, buffer_bytes(h))) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_context *ctx = h->ctx;
    const int32_t two = 2;
    const pscan_select_desc good = {PSCAN_TYPE_I32, 4, NULL, PSCAN_PRED_GT, &two, h->opt.algo};
    pscan_select_desc d;
    char *k = (char *)h->d_keys, *v = (char *)h->d_values, *ko = (char *)h->d_keys_out, *vo = (char *)h->d_values_out;
    uint64_t *cnt = (uint64_t *)h->d_count;
    size_t bytes = 0;

    for (int part = 0; part < 2; part++) {
        pscan_status (*call)(pscan_context *, const pscan_select_desc *, const void *, const void *, uint64_t, void *,
                             void *, uint64_t *, void *, size_t) = part ? pscan_partition : pscan_select;
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(NULL, &good, k, v, n, ko, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, NULL, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.type = PSCAN_TYPE_COUNT;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.pred = PSCAN_PRED_COUNT;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.pred = (pscan_pred)-1;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.value_bytes = 3;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.value_bytes = 16;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        d = good, d.algo = PSCAN_ALGO_COUNT;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        /* an invalid enum wins over a NULL pointer */
        d = good, d.value_bytes = 5;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, call(ctx, &d, NULL, v, n, ko, vo, NULL, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &good, k, v, n, ko, vo, NULL, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &good, NULL, v, n, ko, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &good, k, v, n, NULL, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &good, k, NULL, n, ko, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &good, k, v, n, ko, NULL, cnt, NULL, 0));
        d = good, d.operand = NULL;
        EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        /* n too large for any buffer */
        EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, call(ctx, &good, k, v, 1ull << 60, ko, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_select_temp_bytes(ctx, &good, 1ull << 60, &bytes));
        if (h->addresses) {
            /* no output may touch an input or another output; in place is not allowed either */
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, k, vo, cnt, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, k + 4 * n - 4, vo, cnt, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, ko, v + 8, cnt, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, ko, ko + 4 * n - 1, cnt, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, ko, vo, (uint64_t *)(ko + 8), NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &good, k, v, n, ko, vo, (uint64_t *)(k + 4 * n - 1), NULL, 0));
            d = good, d.flags = h->d_flags;
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &d, k, v, n, ko, vo, (uint64_t *)((char *)h->d_flags + n - 1), NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, call(ctx, &d, k, v, n, (char *)h->d_flags + 2, vo, cnt, NULL, 0));
        }
        /* an algorithm the backend lacks for these primitives */
        d = good, d.algo = h->opt.backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
        EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, call(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, call(ctx, &d, NULL, NULL, 0, NULL, NULL, cnt, NULL, 0));
        /* temp smaller than the query said (when the algorithm needs any) */
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_select_temp_bytes(ctx, &good, 64 * TILE, &bytes));
        if (bytes > 1)
            EXPECT_STATUS(h, PSCAN_ERROR_TEMP_TOO_SMALL,
                          call(ctx, &good, k, v, 64 * TILE, ko, vo, cnt, h->d_temp ? h->d_temp : ko, bytes - 1));
        EXPECT(h, outputs_untouched(h));
    }
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_select_temp_bytes(ctx, &good, n, NULL));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_select_temp_bytes(NULL, &good, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_select_temp_bytes(ctx, NULL, n, &bytes));

    /* n == 0: the count is written, nothing else; data pointers may be NULL; NONZERO needs no operand */
    for (int part = 0; part < 2; part++) {
        d = good, d.pred = PSCAN_PRED_NONZERO, d.operand = NULL;
        if (!poison_outputs(h, 16)) return;
        EXPECT_STATUS(h, PSCAN_SUCCESS, (part ? pscan_partition : pscan_select)(ctx, &d, NULL, NULL, 0, NULL, NULL, cnt, NULL, 0));
        unsigned char buf[16];
        pscan_memory_download(ctx, buf, h->d_count, 16);
        pscan_context_synchronize(ctx);
        uint64_t got;
        memcpy(&got, buf, 8);
        EXPECT(h, got == 0 && test_poisoned(buf, 8, 16));
    }
}

static void finish(harness *h) {
    printf("test_select: %lu passed, %lu failed\n", h->passed, h->failed);
    void *bufs[] = {h->d_keys, h->d_values, h->d_flags, h->d_keys_out, h->d_values_out, h->d_count, h->d_temp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
    pscan_context_destroy(h->ctx);
    free(h->h_keys), free(h->h_values), free(h->h_flags), free(h->h_ref_keys), free(h->h_ref_values), free(h->h_got);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_select", argc, argv, 0x5E1EC7ull, TEST_OPT_SHARD, &h.opt) != 0) return 1;
    int rc = test_open_context("test_select", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_select: algo %s, seed %" PRIu64 "%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "");

    test_rng size_rng = {test_mix64(h.opt.seed ^ 0x5E1Eu)};
    const size_t random_n = 1 + (size_t)(test_rng_next(&size_rng) % (h.opt.quick ? (1u << 20) : (1u << 22)));
    h.max_n = largest_window_size() > random_n ? largest_window_size() : random_n;
    for (size_t k = 0; h.opt.backend == PSCAN_BACKEND_CUDA && k < COUNTED_CASES; k++)
        if (counted_size(&types[counted[k].type]) > h.max_n) h.max_n = counted_size(&types[counted[k].type]);
    for (size_t k = 0; k < LARGE_SELECTS; k++)
        if (large_select_size(&types[large_selects[k].type]) > h.max_n) h.max_n = large_select_size(&types[large_selects[k].type]);
    if (!h.addresses && h.max_n < OPENCL_LARGE) h.max_n = OPENCL_LARGE;
    const size_t bytes = buffer_bytes(&h);
    h.h_keys = (unsigned char *)malloc(bytes), h.h_values = (unsigned char *)malloc(bytes);
    h.h_flags = (unsigned char *)calloc(h.max_n + 2, 1), h.h_ref_keys = (unsigned char *)malloc(bytes);
    h.h_ref_values = (unsigned char *)malloc(bytes), h.h_got = (unsigned char *)malloc(bytes);
    if (!h.h_keys || !h.h_values || !h.h_flags || !h.h_ref_keys || !h.h_ref_values || !h.h_got ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_keys) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_values) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, h.max_n + 2, &h.d_flags) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_keys_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_values_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, 16, &h.d_count) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_select: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }
    memset(h.h_keys, 0, bytes), memset(h.h_values, 0, bytes);

    if (TEST_IN_SHARD(&h.opt, 0)) run_bad_inputs(&h);
    run_table(&h);
    if (TEST_IN_SHARD(&h.opt, 1)) run_patterns(&h);
    if (TEST_IN_SHARD(&h.opt, 4)) run_same_width_payloads(&h);
    printf("test_select: random size %zu\n", random_n);
    if (TEST_IN_SHARD(&h.opt, 2)) run_large(&h, random_n);
    if (TEST_IN_SHARD(&h.opt, 3)) run_counted(&h);
    if (TEST_IN_SHARD(&h.opt, 5)) run_large_selects(&h);
    finish(&h);
    return h.failed ? 1 : 0;
}
