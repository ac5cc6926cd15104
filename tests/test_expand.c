/*
 * test_expand.c - the expand test table, read as a specification of pscan_expand().
 *
 *   test_expand --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]
 *
 * Every result is checked against a serial loop written here (never the library's): for each slot below
 * min(total, capacity), the index of the item it came from, its rank in that item's run and the item's value;
 * the total (saturating at UINT64_MAX); and that nothing else was written (outputs are poisoned first, and
 * everything past the written slots, up to capacity and beyond, must still hold the poison).
 *  - run_table(): count type {u32, u64} x index type {u32, u64} x count pattern, at item counts 0, 1, 1000 and
 *    around the CUDA tiles (2048 items per tile of the counts' scan below 2^20 items), cycling the value
 *    size (0, 1, 2, 4, 8), which of indices / ranks is wanted, the capacity (exact, total + 5, total - 1, half,
 *    0, at most 4099), data at their allocation's start or one element in, temp from the workspace or a caller
 *    buffer at +1 byte, the total at an 8-byte boundary or 3 bytes past one.
 *  - Patterns: random small counts (half of them 0), all zero, all one, one huge count (2^20 + 3 slots at a
 *    random item, the rest small), random counts around 64, zeros with rare large counts, and tiles of 2048
 *    items alternating between a few slots and more than the 8 slots an item a CUDA tile writes itself (the
 *    others go to expand's second pass), so that both passes write parts of one output.
 *  - run_large(): 64 scan tiles + 3 items and one random size up to 2^20 (2^18 with --quick); on CUDA also
 *    2^20 + 4095 items, 256 tiles and a partial one of the 4096-item shape.
 *  - run_saturating(): u64 counts whose sum passes 2^64: the total is UINT64_MAX and the first slots right.
 *  - run_bad_inputs(): each bad argument returns its exact status and leaves every output as it was.
 * On OpenCL, whose handles are cl_mem and cannot be offset, every buffer (and the total) sits at its start.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_expand: P passed, F failed".
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#define MAX_REPORTS 20
#define SCAN_TILE 2048u /* the CUDA counts-scan tile below LARGE_FROM items (src/cuda/expand.cu): items per tile */
#define LARGE_TILE 4096u /* ... and from LARGE_FROM items on */
#define LARGE_FROM ((size_t)1 << 20)
#define GUARD_ITEMS 8
#define HUGE_COUNT ((1u << 20) + 3)

enum {
    PATTERN_RANDOM,
    PATTERN_ZEROS,
    PATTERN_ONES,
    PATTERN_HUGE,
    PATTERN_AROUND_64,
    PATTERN_SPARSE,
    PATTERN_TILES,
    PATTERN_COUNT
};
static const char *const pattern_names[] = {"random", "zeros", "ones", "huge", "around-64", "sparse", "tiles"};
/* capacity relative to the total */
/* small: at most 4099 slots, within a CUDA tile's budget (8 slots an item of 2048) however large the total, so a
 * tile whose slots pass that budget writes the part below the capacity itself where expand.cu's PS_EXPAND_OWN_ALL
 * is on (its in-tile starts clamped), and goes to the second pass where it is off */
enum { CAP_EXACT, CAP_MORE, CAP_LESS_ONE, CAP_HALF, CAP_ZERO, CAP_SMALL, CAP_COUNT };
static const char *const cap_names[] = {"exact", "total+5", "total-1", "half", "zero", "small"};

typedef test_options options; /* test_common.h */

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;
    size_t max_n, max_slots;
    uint64_t *h_counts;     /* the counts as u64, whatever their type */
    unsigned char *h_in;    /* staging for uploads */
    unsigned char *h_got;   /* downloads */
    void *d_counts, *d_values, *d_indices, *d_ranks, *d_values_out, *d_total, *d_temp;
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

static size_t in_bytes(const harness *h) { return (h->max_n + 1 + GUARD_ITEMS) * 8; }
static size_t out_bytes(const harness *h) { return (h->max_slots + 1 + GUARD_ITEMS) * 8; }

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)
TEST_HARNESS_TEMP(harness)

/* Poisons the first bytes of every output buffer (all of them when bytes is 0) and the total. */
static int poison_outputs(harness *h, size_t bytes) {
    if (bytes == 0 || bytes > out_bytes(h)) bytes = out_bytes(h);
    memset(h->h_got, TEST_POISON, bytes);
    return pscan_memory_upload(h->ctx, h->d_indices, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_ranks, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_values_out, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_total, h->h_got, 16) == PSCAN_SUCCESS;
}

/* Whether the first bytes of every output buffer and the total still hold only poison. */
static int outputs_untouched(harness *h, size_t bytes) {
    const void *bufs[4] = {h->d_indices, h->d_ranks, h->d_values_out, h->d_total};
    const size_t sizes[4] = {bytes, bytes, bytes, 16};
    for (int b = 0; b < 4; b++) {
        if (pscan_memory_download(h->ctx, h->h_got, bufs[b], sizes[b]) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS || !test_poisoned(h->h_got, 0, sizes[b]))
            return 0;
    }
    return 1;
}

/* ---- the reference ------------------------------------------------------------------------------------- */

static uint64_t add_saturating(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

/* The value of item i: its index and a tag, truncated to the value size (so a wrong item shows). */
static uint64_t item_value(uint64_t i) { return (i * 0x9E3779B97F4A7C15ull) ^ 0x5A5Au; }

typedef struct one_case {
    int count_u64, index_u64;
    int pattern;
    size_t value_bytes;
    int want_indices, want_ranks;
    int cap_mode;
    size_t n;
    int offset;      /* 0 or 1 element into every data buffer */
    int caller_temp; /* 0: the workspace; 1: a caller buffer at +1 byte */
    int total_at;    /* byte offset of the total in its buffer: 0 or 3 */
} one_case;

static void describe(const one_case *c, uint64_t total, uint64_t cap, char *text, size_t size) {
    snprintf(text, size,
             "counts=%s indices=%s%s ranks=%s values=%zu pattern=%s n=%zu total=%" PRIu64 " capacity=%" PRIu64
             " (%s) offset=%d temp=%s total+%d",
             c->count_u64 ? "u64" : "u32", c->index_u64 ? "u64" : "u32", c->want_indices ? "" : "(not wanted)",
             c->want_ranks ? "yes" : "no", c->value_bytes, pattern_names[c->pattern], c->n, total, cap,
             cap_names[c->cap_mode], c->offset, c->caller_temp ? "caller+1" : "workspace", c->total_at);
}

static uint64_t random_count(test_rng *rng, int pattern, size_t i, size_t huge_at) {
    const uint64_t r = test_rng_next(rng);
    switch (pattern) {
    case PATTERN_ZEROS: return 0;
    case PATTERN_ONES: return 1;
    case PATTERN_HUGE: return i == huge_at ? HUGE_COUNT : r % 3;
    case PATTERN_AROUND_64: return 32 + r % 65;
    case PATTERN_SPARSE: return r % 97 == 0 ? 1000 + r % 5000 : 0;
    /* every third CUDA tile past its budget of slots (8 slots per item: left to the second pass), the others
     * written by the scan's own tiles */
    case PATTERN_TILES: return i / SCAN_TILE % 3 == 1 ? 16 + r % 17 : r % 3;
    default: return r % 2 ? 0 : r % 9;
    }
}

/* Checks one output array: slots [0, written) against want(slot), the rest (to capacity + guard) poisoned. */
static int check_output(harness *h, const char *label, const char *desc, const void *dev, size_t off, size_t bytes,
                        uint64_t written, uint64_t cap, const uint64_t *slot_item, const uint64_t *slot_rank,
                        int what) {
    const size_t end_bytes = (off + cap + GUARD_ITEMS) * bytes;
    if (pscan_memory_download(h->ctx, h->h_got, dev, end_bytes) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        return 0;
    }
    for (uint64_t j = 0; j < written; j++) {
        uint64_t want = what == 0 ? slot_item[j] : what == 1 ? slot_rank[j] : item_value(slot_item[j]);
        uint64_t got = 0;
        memcpy(&got, h->h_got + (off + j) * bytes, bytes);
        if (bytes < 8) want &= (1ull << (8 * bytes)) - 1;
        if (got != want) {
            char text[700];
            snprintf(text, sizeof text, "%s: %s[%" PRIu64 "] = %" PRIu64 ", expected %" PRIu64, desc, label, j, got,
                     want);
            fail_report(h, text);
            return 0;
        }
    }
    if (!test_poisoned(h->h_got, 0, off * bytes) || !test_poisoned(h->h_got, (off + written) * bytes, end_bytes)) {
        char text[700];
        snprintf(text, sizeof text, "%s: %s written outside its %" PRIu64 " slots", desc, label, written);
        fail_report(h, text);
        return 0;
    }
    return 1;
}

/* Runs one expand of h->h_counts[0 .. n) and checks everything. */
static void run_counts(harness *h, const one_case *c_in, size_t n, uint64_t cap_override, int use_override) {
    one_case placed = *c_in;
    if (!h->addresses) placed.offset = 0, placed.total_at = 0; /* cl_mem handles: every buffer at its start */
    const one_case *c = &placed;
    const size_t cb = c->count_u64 ? 8 : 4, ib = c->index_u64 ? 8 : 4, vb = c->value_bytes, off = (size_t)c->offset;
    uint64_t total = 0;
    for (size_t i = 0; i < n; i++) total = add_saturating(total, h->h_counts[i]);
    uint64_t cap;
    if (use_override) {
        cap = cap_override;
    } else {
        switch (c->cap_mode) {
        case CAP_MORE: cap = total + 5; break;
        case CAP_LESS_ONE: cap = total ? total - 1 : 0; break;
        case CAP_HALF: cap = total / 2; break;
        case CAP_ZERO: cap = 0; break;
        case CAP_SMALL: cap = total < 4099 ? total : 4099; break;
        default: cap = total;
        }
    }
    char desc[400];
    describe(c, total, cap, desc, sizeof desc);
    if (cap > h->max_slots) {
        fail_report(h, "test bug: capacity beyond the buffers");
        return;
    }
    const uint64_t written = total < cap ? total : cap;

    /* ---- the reference: which item and rank each written slot holds ---- */
    uint64_t *slot_item = (uint64_t *)malloc((size_t)(written + 1) * 8);
    uint64_t *slot_rank = (uint64_t *)malloc((size_t)(written + 1) * 8);
    if (!slot_item || !slot_rank) {
        fail_report(h, "out of host memory");
        free(slot_item), free(slot_rank);
        return;
    }
    uint64_t j = 0;
    for (size_t i = 0; i < n && j < written; i++)
        for (uint64_t r = 0; r < h->h_counts[i] && j < written; r++, j++) slot_item[j] = i, slot_rank[j] = r;

    /* ---- upload, poison, call ---- */
    memset(h->h_in, 0, in_bytes(h));
    for (size_t i = 0; i < n; i++) {
        if (cb == 4) {
            const uint32_t v = (uint32_t)h->h_counts[i];
            memcpy(h->h_in + (off + i) * 4, &v, 4);
        } else {
            memcpy(h->h_in + (off + i) * 8, &h->h_counts[i], 8);
        }
    }
    int ok = pscan_memory_upload(h->ctx, h->d_counts, h->h_in, (off + n) * cb + 1) == PSCAN_SUCCESS;
    memset(h->h_in, 0, in_bytes(h));
    for (size_t i = 0; vb && i < n; i++) {
        const uint64_t v = item_value(i);
        memcpy(h->h_in + (off + i) * vb, &v, vb);
    }
    ok = ok && (!vb || pscan_memory_upload(h->ctx, h->d_values, h->h_in, (off + n) * vb + 1) == PSCAN_SUCCESS);
    if (!ok || !poison_outputs(h, (size_t)(off + cap + GUARD_ITEMS) * 8)) {
        fail_report(h, "upload failed");
        free(slot_item), free(slot_rank);
        return;
    }
    pscan_expand_desc d = {c->count_u64 ? PSCAN_TYPE_U64 : PSCAN_TYPE_U32, c->index_u64 ? PSCAN_TYPE_U64 : PSCAN_TYPE_U32,
                           vb, h->opt.algo};
    void *temp = NULL;
    size_t temp_bytes = 0, need = 0;
    if (c->caller_temp) {
        const pscan_status ts = pscan_expand_temp_bytes(h->ctx, &d, n, cap, &need);
        if (!case_temp(h, desc, "pscan_expand_temp_bytes", ts, need, &temp, &temp_bytes)) {
            free(slot_item), free(slot_rank);
            return;
        }
    }
    uint64_t *total_out = (uint64_t *)((char *)h->d_total + c->total_at);
    void *counts = (char *)h->d_counts + off * cb;
    void *values = vb ? (char *)h->d_values + off * vb : NULL;
    void *indices = c->want_indices ? (char *)h->d_indices + off * ib : NULL;
    void *ranks = c->want_ranks ? (char *)h->d_ranks + off * ib : NULL;
    void *values_out = vb ? (char *)h->d_values_out + off * vb : NULL;
    pscan_status s = pscan_expand(h->ctx, &d, counts, values, n, indices, ranks, values_out, cap, total_out, temp,
                                  temp_bytes);
    if (!call_ok(h, desc, s)) {
        free(slot_item), free(slot_rank);
        return;
    }

    /* ---- the total, the slots, the poison around them ---- */
    unsigned char total_buf[16];
    if (pscan_memory_download(h->ctx, total_buf, h->d_total, 16) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        free(slot_item), free(slot_rank);
        return;
    }
    uint64_t got_total;
    memcpy(&got_total, total_buf + c->total_at, 8);
    if (got_total != total || !test_poisoned(total_buf, 0, (size_t)c->total_at) ||
        !test_poisoned(total_buf, (size_t)c->total_at + 8, 16)) {
        char what[600];
        snprintf(what, sizeof what, "%s: total %" PRIu64 ", expected %" PRIu64 " (or bytes around it written)", desc,
                 got_total, total);
        fail_report(h, what);
        free(slot_item), free(slot_rank);
        return;
    }
    ok = check_output(h, "indices", desc, h->d_indices, off, ib, c->want_indices ? written : 0, cap, slot_item,
                      slot_rank, 0) &&
         check_output(h, "ranks", desc, h->d_ranks, off, ib, c->want_ranks ? written : 0, cap, slot_item, slot_rank,
                      1) &&
         check_output(h, "values_out", desc, h->d_values_out, off, vb ? vb : 8, vb ? written : 0, cap, slot_item,
                      slot_rank, 2);
    if (ok) h->passed++;
    free(slot_item), free(slot_rank);
}

static void run_case(harness *h, const one_case *c, uint64_t case_seed) {
    test_rng rng = {test_mix64(case_seed)};
    const size_t huge_at = c->n ? (size_t)(test_rng_next(&rng) % c->n) : 0;
    for (size_t i = 0; i < c->n; i++) h->h_counts[i] = random_count(&rng, c->pattern, i, huge_at);
    run_counts(h, c, c->n, 0, 0);
}

static const size_t value_cycle[] = {0, 1, 2, 4, 8};

/* Every count type x index type x pattern, at the small and tile sizes. */
static void run_table(harness *h) {
    const size_t sizes[] = {0, 1, 1000, SCAN_TILE - 1, SCAN_TILE, SCAN_TILE + 1, 2 * SCAN_TILE + 1, 4 * SCAN_TILE - 1};
    unsigned index = 0;
    for (int cu = 0; cu < 2; cu++)
        for (int iu = 0; iu < 2; iu++)
            for (int pattern = 0; pattern < PATTERN_COUNT; pattern++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, index++) {
                    /* big patterns at the small sizes only: their slots grow with n */
                    if ((pattern == PATTERN_AROUND_64 || pattern == PATTERN_HUGE) && sizes[si] > 2 * SCAN_TILE + 1) continue;
                    const int which = (int)(index % 4); /* indices and ranks, indices, ranks, neither (values) */
                    one_case c = {cu, iu, pattern, value_cycle[index % 5], which != 2 && which != 3, which != 1,
                                  (int)(index / 3 % CAP_COUNT), sizes[si], (int)(index % 2), (int)(index / 2 % 2),
                                  (index / 5 % 2) ? 3 : 0};
                    if (which == 3 && c.value_bytes == 0) c.want_indices = 1;
                    run_case(h, &c, h->opt.seed ^ (0x1000u + index));
                }
}

/* Past the scan's 64-tile look-back window, and a random size. */
static void run_large(harness *h, size_t random_n) {
    const size_t sizes[] = {64 * SCAN_TILE + 3, random_n, LARGE_FROM + LARGE_TILE - 1};
    const size_t n_sizes = h->opt.backend == PSCAN_BACKEND_CUDA ? 3 : 2; /* the large shape is CUDA's alone */
    unsigned index = 0;
    for (int cu = 0; cu < 2; cu++)
        for (size_t si = 0; si < n_sizes; si++)
            for (int pattern = 0; pattern < PATTERN_COUNT; pattern++, index++) {
                if (pattern == PATTERN_AROUND_64) continue; /* 64 slots per item: too many at these sizes */
                one_case c = {cu, (int)(index % 2), pattern, value_cycle[index % 5], 1, (int)(index % 3 != 0),
                              (int)(index % 2 ? CAP_EXACT : CAP_LESS_ONE), sizes[si], (int)(index % 2),
                              (int)(index / 2 % 2), 0};
                run_case(h, &c, h->opt.seed ^ (0x2000u + index));
            }
}

/* u64 counts whose sum passes 2^64: the total saturates, the first slots are still right. */
static void run_saturating(harness *h) {
    const uint64_t counts[][4] = {{3, UINT64_MAX / 2, UINT64_MAX / 2 + 7, 5}, {UINT64_MAX, 1, 0, 2}, {0, 2, UINT64_MAX, 0}};
    for (size_t k = 0; k < 3; k++) {
        memcpy(h->h_counts, counts[k], sizeof counts[k]);
        one_case c = {1, 1, PATTERN_RANDOM, 4, 1, 1, CAP_EXACT, 4, (int)(k % 2), 0, 0};
        run_counts(h, &c, 4, 20, 1);
    }
}

/* Each bad argument: its exact status, and no output written. */
static void run_bad_inputs(harness *h) {
    const uint64_t n = 16, cap = 64;
    const size_t checked = (cap + GUARD_ITEMS) * 8;
    if (!poison_outputs(h, checked)) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_context *ctx = h->ctx;
    const pscan_expand_desc good = {PSCAN_TYPE_U32, PSCAN_TYPE_U64, 4, h->opt.algo};
    pscan_expand_desc d;
    char *c = (char *)h->d_counts, *v = (char *)h->d_values, *io = (char *)h->d_indices, *ro = (char *)h->d_ranks,
         *vo = (char *)h->d_values_out;
    uint64_t *t = (uint64_t *)h->d_total;
    size_t bytes = 0;

    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(NULL, &good, c, v, n, io, ro, vo, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(ctx, NULL, c, v, n, io, ro, vo, cap, t, NULL, 0));
    const pscan_type bad_types[] = {PSCAN_TYPE_I32, PSCAN_TYPE_U8, PSCAN_TYPE_U16, PSCAN_TYPE_I64, PSCAN_TYPE_F32,
                                    PSCAN_TYPE_COUNT, (pscan_type)-1};
    for (size_t k = 0; k < sizeof bad_types / sizeof bad_types[0]; k++) {
        d = good, d.count_type = bad_types[k];
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
        d = good, d.index_type = bad_types[k];
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand_temp_bytes(ctx, &d, n, cap, &bytes));
    }
    d = good, d.value_bytes = 3;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
    d = good, d.value_bytes = 16;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
    d = good, d.algo = PSCAN_ALGO_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
    /* an invalid enum wins over a NULL pointer */
    d = good, d.value_bytes = 5;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_expand(ctx, &d, NULL, v, n, io, ro, vo, cap, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(ctx, &good, c, v, n, io, ro, vo, cap, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(ctx, &good, NULL, v, n, io, ro, vo, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(ctx, &good, c, NULL, n, io, ro, vo, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand(ctx, &good, c, v, n, io, ro, NULL, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand_temp_bytes(ctx, &good, n, cap, NULL));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand_temp_bytes(NULL, &good, n, cap, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_expand_temp_bytes(ctx, NULL, n, cap, &bytes));
    /* too large for any buffer; u32 indices past 2^32 items or slots */
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand(ctx, &good, c, v, 1ull << 60, io, ro, vo, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand(ctx, &good, c, v, n, io, ro, vo, 1ull << 60, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand_temp_bytes(ctx, &good, 1ull << 60, cap, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand_temp_bytes(ctx, &good, n, 1ull << 60, &bytes));
    d = good, d.index_type = PSCAN_TYPE_U32;
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand(ctx, &d, c, v, n, io, ro, vo, (1ull << 32) + 1, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand_temp_bytes(ctx, &d, (1ull << 32) + 1, cap, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_expand_temp_bytes(ctx, &d, n, (1ull << 32) + 1, &bytes));
    if (h->addresses) {
        /* no output may touch an input or another output */
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, c, ro, vo, cap, t, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, io, c + 4 * n - 1, vo, cap, t, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, io, ro, v + 8, cap, t, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, io, io + 8 * cap - 1, vo, cap, t, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, io, ro, vo, cap, (uint64_t *)(vo + 4), NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_expand(ctx, &good, c, v, n, io, ro, vo, cap, (uint64_t *)(c + 4 * n - 1), NULL, 0));
    }
    /* an algorithm the backend lacks, at n > 0 and n == 0 */
    d = good, d.algo = h->opt.backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_expand(ctx, &d, c, v, n, io, ro, vo, cap, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_expand(ctx, &d, NULL, NULL, 0, NULL, NULL, NULL, 0, t, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_expand_temp_bytes(ctx, &d, n, cap, &bytes));
    /* temp smaller than the query said (when the algorithm needs any) */
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_expand_temp_bytes(ctx, &good, 64 * SCAN_TILE, cap, &bytes));
    if (bytes > 1 && 64 * SCAN_TILE <= h->max_n)
        EXPECT_STATUS(h, PSCAN_ERROR_TEMP_TOO_SMALL,
                      pscan_expand(ctx, &good, c, v, 64 * SCAN_TILE, io, ro, vo, cap, t, h->d_temp ? h->d_temp : c, bytes - 1));
    EXPECT(h, outputs_untouched(h, checked));

    /* n == 0: the total is written, nothing else; data pointers may be NULL */
    if (!poison_outputs(h, checked)) return;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_expand(ctx, &good, NULL, NULL, 0, NULL, NULL, NULL, cap, t, NULL, 0));
    unsigned char buf[16];
    pscan_memory_download(ctx, buf, h->d_total, 16);
    pscan_context_synchronize(ctx);
    uint64_t got;
    memcpy(&got, buf, 8);
    EXPECT(h, got == 0 && test_poisoned(buf, 8, 16));
    /* capacity 0: the outputs may be NULL; the total is still written */
    h->h_counts[0] = 7;
    memcpy(h->h_in, &(uint32_t){7}, 4);
    if (pscan_memory_upload(ctx, h->d_counts, h->h_in, 4) != PSCAN_SUCCESS || !poison_outputs(h, checked)) return;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_expand(ctx, &good, c, v, 1, NULL, NULL, NULL, 0, t, NULL, 0));
    pscan_memory_download(ctx, buf, h->d_total, 16);
    pscan_context_synchronize(ctx);
    memcpy(&got, buf, 8);
    EXPECT(h, got == 7 && test_poisoned(buf, 8, 16));
}

static void finish(harness *h) {
    printf("test_expand: %lu passed, %lu failed\n", h->passed, h->failed);
    void *bufs[] = {h->d_counts, h->d_values, h->d_indices, h->d_ranks, h->d_values_out, h->d_total, h->d_temp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
    pscan_context_destroy(h->ctx);
    free(h->h_counts), free(h->h_in), free(h->h_got);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_expand", argc, argv, 0xE2BA2Dull, 0, &h.opt) != 0) return 1;
    int rc = test_open_context("test_expand", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_expand: algo %s, seed %" PRIu64 "%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "");

    test_rng size_rng = {test_mix64(h.opt.seed ^ 0xE2BAu)};
    const size_t random_n = 1 + (size_t)(test_rng_next(&size_rng) % (h.opt.quick ? (1u << 18) : (1u << 20)));
    h.max_n = 64 * SCAN_TILE + 3 > random_n ? 64 * SCAN_TILE + 3 : random_n;
    if (h.opt.backend == PSCAN_BACKEND_CUDA && h.max_n < LARGE_FROM + LARGE_TILE - 1) h.max_n = LARGE_FROM + LARGE_TILE - 1;
    /* the most slots any case asks for: sparse counts average 32, around-64 at 2 x SCAN_TILE + 1 items, huge */
    h.max_slots = h.max_n * 40;
    if (h.max_slots < (size_t)(2 * SCAN_TILE + 1) * 96 + 5) h.max_slots = (size_t)(2 * SCAN_TILE + 1) * 96 + 5;
    h.max_slots += HUGE_COUNT;
    h.h_counts = (uint64_t *)calloc(h.max_n + 1, 8);
    h.h_in = (unsigned char *)malloc(in_bytes(&h));
    h.h_got = (unsigned char *)malloc(out_bytes(&h));
    if (!h.h_counts || !h.h_in || !h.h_got || pscan_memory_alloc(h.ctx, in_bytes(&h), &h.d_counts) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, in_bytes(&h), &h.d_values) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, out_bytes(&h), &h.d_indices) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, out_bytes(&h), &h.d_ranks) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, out_bytes(&h), &h.d_values_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, 16, &h.d_total) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_expand: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }

    run_bad_inputs(&h);
    run_table(&h);
    run_saturating(&h);
    printf("test_expand: random size %zu\n", random_n);
    run_large(&h, random_n);
    finish(&h);
    return h.failed ? 1 : 0;
}
