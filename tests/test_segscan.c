/*
 * test_segscan.c - the segmented scan, scan-by-key, reduce-by-key and run-length-encoding test table, read as a
 * specification of pscan_segmented_scan(), pscan_scan_by_key(), pscan_reduce_by_key() and
 * pscan_run_length_encode().
 *
 *   test_segscan --backend cpu|cuda|opencl [--algo NAME] [--quick] [--full] [--seed S] [--threads T]
 *
 * Every result is checked against a serial loop written here (never the library's): for each segment [s, e)
 * of the input, init (+) in[s] (+) ... in scan order (reverse: from e - 1 down), inclusive or exclusive, with
 * the operator applied earlier-on-the-left, so a backend that swapped operands or crossed a segment boundary
 * shows. The segments of a case are drawn once, as CSR offsets, and given to the library in three forms: the
 * offsets themselves (empty segments included), head flags (random nonzero bytes at each start; flags[0] is
 * sometimes 0, which must not matter), and keys (a new key at each start; the key type cycles through the 8
 * integer types).
 *  - run_table(): every type x operator x {inclusive, exclusive} x {forward, reverse} x form, identity or a
 *    given init, at sizes 0, 1, 1000, tile-1, tile, tile+1 (the CUDA tile: 16 items x 256 threads) with
 *    random segment lengths (mean 1, 3, 30 or 1000);
 *  - run_lengths(): segments all of one length, 1, tile-1, tile, tile+1, and one segment for the whole input,
 *    over 5 tiles, and random lengths past the 64-tile look-back window: every form and direction;
 *  - run_large(): one segment of 2^24 + 3 (i32 sum; with --full every form, direction and a 64-bit type), and
 *    one random size up to 2^22 (2^20 with --quick) of random lengths;
 *  - run_bad_inputs(): each bad argument returns its exact status and leaves every output as it was; bad
 *    offsets on a device backend (CUDA, OpenCL): PSCAN_ERROR_INVALID_VALUE with PSCAN_SEGSCAN_CHECK_OFFSETS,
 *    and without it success with nothing written.
 * On OpenCL (cl_mem handles) every buffer and the count sit at their allocation's start.
 *  - run_by_key(), run_by_key_bad_inputs(): pscan_reduce_by_key (every value type x operator, key types
 *    cycling) and pscan_run_length_encode (every type) at the same sizes and run lengths, the count at an
 *    8-byte boundary or 3 bytes past one; everything past the runs stays poisoned.
 * Cases alternate in place (out == in) and out of place, data at the allocation's start or one element in,
 * temp from the workspace or a caller buffer at +1 byte. Outputs are poisoned first; everything past n must
 * stay poisoned.
 *
 * Values: integers are full-range random bits (sums and products wrap); floats are small integers for sums,
 * +-1 for products and small values with a rare NaN (one bit pattern) for min and max, so every order of
 * combination gives the same bits and results compare exactly.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_segscan: P passed, F failed".
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
/* the CUDA segmented-scan tile: 16 items x 256 threads (src/cuda/segmented_scan.cu); elements of up to 4 bytes
 * may take 32 items (PS_SEGSCAN_ITEMS4), so the table also runs around 2 x TILE */
#define TILE 4096u
#define GUARD_ITEMS 8
#define LARGE_SEGMENT ((1u << 24) + 3u)
#define RLE_TIER_N (1023u * 24u * 256u) /* the most items CUDA run-length encoding runs in its small tiles */

#define T_I32 4
#define T_U64 7

static const pscan_op ops[] = {PSCAN_OP_SUM, PSCAN_OP_PRODUCT, PSCAN_OP_MIN, PSCAN_OP_MAX,
                               PSCAN_OP_AND, PSCAN_OP_OR,      PSCAN_OP_XOR};
static const char *const op_names[] = {"sum", "product", "min", "max", "and", "or", "xor"};
#define OP_COUNT 7
#define ARITH_OPS 4

enum { FORM_OFFSETS, FORM_FLAGS, FORM_KEYS, FORM_COUNT };
static const char *const form_names[] = {"offsets", "flags", "keys"};

/* ---- the reference: raw bits in a uint64, the type's own arithmetic ------------------------------------- */

static uint64_t mask_of(const type_info *t) { return t->bytes == 8 ? ~0ull : (1ull << (8 * t->bytes)) - 1; }

/* a (+) b, a the earlier element. */
static uint64_t ref_combine(const type_info *t, pscan_op op, uint64_t a, uint64_t b) {
    if (t->is_float) {
        const double x = raw_float(t, a), y = raw_float(t, b);
        switch (op) {
        case PSCAN_OP_SUM: return t->bytes == 4 ? float_raw(t, (float)x + (float)y) : float_raw(t, x + y);
        case PSCAN_OP_PRODUCT: return t->bytes == 4 ? float_raw(t, (float)x * (float)y) : float_raw(t, x * y);
        case PSCAN_OP_MIN: return x != x ? a : y != y ? b : y < x ? b : a;
        default: return x != x ? a : y != y ? b : x < y ? b : a;
        }
    }
    const uint64_t m = mask_of(t);
    int less; /* b < a in the type's order */
    switch (op) {
    case PSCAN_OP_SUM: return (a + b) & m;
    case PSCAN_OP_PRODUCT: return (a * b) & m;
    case PSCAN_OP_AND: return a & b;
    case PSCAN_OP_OR: return a | b;
    case PSCAN_OP_XOR: return a ^ b;
    default:
        less = t->is_signed ? raw_signed(t, b) < raw_signed(t, a) : b < a;
        if (op == PSCAN_OP_MIN) return less ? b : a;
        return (t->is_signed ? raw_signed(t, a) < raw_signed(t, b) : a < b) ? b : a;
    }
}

static uint64_t ref_identity(const type_info *t, pscan_op op) {
    const uint64_t m = mask_of(t);
    if (t->is_float) {
        switch (op) {
        case PSCAN_OP_SUM: return float_raw(t, 0.0);
        case PSCAN_OP_PRODUCT: return float_raw(t, 1.0);
        case PSCAN_OP_MIN: return float_raw(t, HUGE_VAL);
        default: return float_raw(t, -HUGE_VAL);
        }
    }
    switch (op) {
    case PSCAN_OP_SUM: case PSCAN_OP_OR: case PSCAN_OP_XOR: return 0;
    case PSCAN_OP_PRODUCT: return 1;
    case PSCAN_OP_AND: return m;
    case PSCAN_OP_MIN: return t->is_signed ? m >> 1 : m;
    default: return t->is_signed ? (m >> 1) + 1 : 0;
    }
}

/* Scans every segment of in into want, serially. */
static void reference(const type_info *t, pscan_op op, int exclusive, int reverse, uint64_t init,
                      const uint64_t *offsets, size_t segments, const unsigned char *in, unsigned char *want) {
    const size_t b = t->bytes;
    for (size_t k = 0; k < segments; k++) {
        const size_t s = (size_t)offsets[k], e = (size_t)offsets[k + 1];
        uint64_t acc = init;
        for (size_t j = 0; j < e - s; j++) {
            const size_t i = reverse ? e - 1 - j : s + j;
            const uint64_t x = load_raw(in, i, b);
            if (exclusive) store_raw(want, i, b, acc);
            acc = ref_combine(t, op, acc, x);
            if (!exclusive) store_raw(want, i, b, acc);
        }
    }
}

/* ---- input data ---------------------------------------------------------------------------------------- */

static uint64_t random_value(test_rng *rng, const type_info *t, pscan_op op) {
    const uint64_t r = test_rng_next(rng);
    if (!t->is_float) return r & mask_of(t);
    double d;
    switch (op) {
    case PSCAN_OP_SUM: d = (double)((int)(r % 9) - 4); break;
    case PSCAN_OP_PRODUCT: d = (r & 1) ? 1.0 : -1.0; break;
    default: d = (r % 512 == 0) ? NAN : (double)((int)(r % 201) - 100) / 4; break;
    }
    return float_raw(t, d);
}

/* Segment lengths: random with mean `mean` (geometric-like, lengths 0 allowed where empty is set), or all
 * `fixed` (the last one shorter); writes the offsets and returns the segment count. */
static size_t make_segments(test_rng *rng, size_t n, size_t mean, size_t fixed, int empty, uint64_t *offsets) {
    size_t k = 0, at = 0;
    offsets[k++] = 0;
    while (at < n) {
        size_t len;
        if (fixed) {
            len = fixed;
        } else {
            len = 1 + (size_t)(test_rng_unit(rng) * (double)(2 * mean - 1));
            if (empty && test_rng_next(rng) % 8 == 0) len = 0;
        }
        if (len > n - at) len = n - at;
        at += len;
        offsets[k++] = at;
    }
    if (n == 0 && empty) offsets[k++] = 0; /* n == 0 with one empty segment */
    return k - 1;
}

/* ---- the run ------------------------------------------------------------------------------------------- */

typedef test_options options; /* test_common.h */

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;
    size_t max_n;
    unsigned char *h_in, *h_want, *h_got, *h_flags, *h_keys;
    uint64_t *h_offsets;
    void *d_in, *d_out, *d_segs, *d_temp, *d_out2, *d_count;
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

static size_t data_bytes(const harness *h) { return (h->max_n + 1 + GUARD_ITEMS) * 8; }
static size_t segs_bytes(const harness *h) { return (2 * h->max_n + 16) * 8; }

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)
TEST_HARNESS_TEMP(harness)

typedef struct one_case {
    const type_info *t;
    int op;         /* index into ops */
    int form;
    int exclusive, reverse;
    int with_init;
    size_t n;
    size_t mean, fixed; /* segment lengths: random of this mean, or all this length */
    int in_place;
    int offset;       /* 0 or 1 element into the data buffers */
    int caller_temp;
    int key_type;     /* index into types (integer types only) */
} one_case;

static void describe(const one_case *c, size_t segments, char *text, size_t size) {
    snprintf(text, size, "%s %s %s %s%s%s n=%zu segments=%zu (mean %zu, fixed %zu)%s%s offset=%d temp=%s",
             c->t->name, op_names[c->op], form_names[c->form], c->exclusive ? "exclusive" : "inclusive",
             c->reverse ? " reverse" : "", c->with_init ? " init" : "", c->n, segments, c->mean, c->fixed,
             c->form == FORM_KEYS ? " keys " : "", c->form == FORM_KEYS ? types[c->key_type].name : "", c->offset,
             c->caller_temp ? "caller+1" : "workspace");
}

static void run_case(harness *h, const one_case *c, uint64_t case_seed) {
    const type_info *t = c->t;
    const pscan_op op = ops[c->op];
    /* cl_mem handles: every buffer at its start */
    const size_t n = c->n, b = t->bytes, off = h->addresses ? (size_t)c->offset : 0;
    test_rng rng = {test_mix64(case_seed)};

    /* ---- segments, inputs, the reference ---- */
    const size_t segments = make_segments(&rng, n, c->mean ? c->mean : 1, c->fixed, c->form == FORM_OFFSETS, h->h_offsets + off);
    char desc[400];
    describe(c, segments, desc, sizeof desc);
    const uint64_t *offsets = h->h_offsets + off;
    const type_info *kt = &types[c->key_type];
    memset(h->h_flags, 0, n + off + 1);
    uint64_t key = test_rng_next(&rng) & mask_of(kt);
    for (size_t k = 0; k < segments; k++) {
        if (offsets[k] == offsets[k + 1]) continue;
        h->h_flags[off + offsets[k]] = (unsigned char)(1 + test_rng_next(&rng) % 255);
        key = (key + 1 + test_rng_next(&rng) % 3) & mask_of(kt);
        for (uint64_t i = offsets[k]; i < offsets[k + 1]; i++) store_raw(h->h_keys, off + i, kt->bytes, key);
    }
    if (n > 0 && test_rng_next(&rng) % 2) h->h_flags[off] = 0; /* item 0 starts a segment anyway */
    for (size_t i = 0; i < n; i++) store_raw(h->h_in, off + i, b, random_value(&rng, t, op));
    const uint64_t init = c->with_init ? random_value(&rng, t, op) : ref_identity(t, op);
    reference(t, op, c->exclusive, c->reverse, init, offsets, segments, h->h_in + off * b, h->h_want + off * b);

    /* ---- upload, poison, call ---- */
    const size_t bytes = (off + n + GUARD_ITEMS) * b; /* what is checked below */
    memset(h->h_got, TEST_POISON, bytes);
    const void *segs_host = c->form == FORM_OFFSETS ? (const void *)h->h_offsets
                            : c->form == FORM_FLAGS  ? (const void *)h->h_flags
                                                     : (const void *)h->h_keys;
    const size_t seg_elem = c->form == FORM_OFFSETS ? 8 : c->form == FORM_FLAGS ? 1 : kt->bytes;
    const size_t seg_count = c->form == FORM_OFFSETS ? segments + 1 : n;
    void *d_in = (char *)h->d_in + off * b;
    void *d_out = c->in_place ? d_in : (char *)h->d_out + off * b;
    void *d_segs = (char *)h->d_segs + off * seg_elem;
    if (pscan_memory_upload(h->ctx, h->d_in, h->h_in, (off + n) * b + 1) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, h->d_segs, segs_host, (off + seg_count) * seg_elem + 1) != PSCAN_SUCCESS ||
        (!c->in_place && pscan_memory_upload(h->ctx, h->d_out, h->h_got, bytes) != PSCAN_SUCCESS)) {
        fail_report(h, "upload failed");
        return;
    }
    const unsigned flags = (c->exclusive ? PSCAN_SCAN_EXCLUSIVE : 0u) | (c->reverse ? PSCAN_SCAN_REVERSE : 0u);
    unsigned char init_bytes[8];
    memcpy(init_bytes, &init, 8);
    pscan_segscan_desc sd = {t->type, op, flags, h->opt.algo, c->with_init ? init_bytes : NULL,
                             c->form == FORM_OFFSETS ? PSCAN_SEGMENTS_OFFSETS : PSCAN_SEGMENTS_HEAD_FLAGS};
    pscan_scan_by_key_desc kd = {kt->type, t->type, op, flags, h->opt.algo, c->with_init ? init_bytes : NULL};
    void *temp = NULL;
    size_t temp_bytes = 0;
    pscan_status s;
    if (c->caller_temp) {
        size_t need = 0;
        s = c->form == FORM_KEYS ? pscan_scan_by_key_temp_bytes(h->ctx, &kd, n, &need)
                                 : pscan_segmented_scan_temp_bytes(h->ctx, &sd, n, segments, &need);
        if (!case_temp(h, desc, "temp query", s, need, &temp, &temp_bytes)) return;
    }
    s = c->form == FORM_KEYS ? pscan_scan_by_key(h->ctx, &kd, d_segs, d_in, d_out, n, temp, temp_bytes)
                             : pscan_segmented_scan(h->ctx, &sd, d_in, d_out, n, d_segs, segments, temp, temp_bytes);
    if (!call_ok(h, desc, s)) return;

    /* ---- the results, and the poison around them ---- */
    const size_t end = (off + n + GUARD_ITEMS) * b;
    if (pscan_memory_download(h->ctx, h->h_got, c->in_place ? h->d_in : h->d_out, end) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        return;
    }
    for (size_t i = off; i < off + n; i++) {
        if (memcmp(h->h_got + i * b, h->h_want + i * b, b) != 0) {
            char what[800];
            size_t seg = 0;
            while (seg + 1 < segments && offsets[seg + 1] <= i - off) seg++;
            snprintf(what, sizeof what, "%s: out[%zu] = 0x%" PRIx64 ", expected 0x%" PRIx64 " (segment %zu: [%" PRIu64
                     ", %" PRIu64 "))", desc, i - off, load_raw(h->h_got, i, b), load_raw(h->h_want, i, b), seg,
                     offsets[seg], offsets[seg + 1]);
            fail_report(h, what);
            return;
        }
    }
    if (!c->in_place && (!test_poisoned(h->h_got, 0, off * b) || !test_poisoned(h->h_got, (off + n) * b, end))) {
        char what[600];
        snprintf(what, sizeof what, "%s: out written outside [0, n)", desc);
        fail_report(h, what);
        return;
    }
    h->passed++;
}

static void run_table(harness *h) {
    const size_t sizes[] = {0, 1, 1000, TILE - 1, TILE, TILE + 1, 2 * TILE - 1, 2 * TILE, 2 * TILE + 1};
    const size_t means[] = {1, 3, 30, 1000};
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int oi = 0; oi < OP_COUNT; oi++) {
            if (types[ti].is_float && oi >= ARITH_OPS) continue;
            for (int form = 0; form < FORM_COUNT; form++)
                for (int dir = 0; dir < 4; dir++)
                    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, index++) {
                        if (!TEST_IN_SHARD(&h->opt, ti)) continue;
                        if (h->opt.quick && (index % 3) != 0 && sizes[si] >= TILE) continue;
                        one_case c = {&types[ti], oi, form, dir & 1, dir >> 1, (int)(index / 5 % 2), sizes[si],
                                      means[index % 4], 0, (int)(index / 7 % 2), (int)(index % 2), (int)(index / 2 % 2),
                                      (int)(index % 8)};
                        run_case(h, &c, h->opt.seed ^ (0x1000u + index));
                    }
        }
}

/* Segments of one length, around the tile, over 5 tiles; random lengths past the look-back window. */
static void run_lengths(harness *h) {
    const size_t fixed[] = {1, TILE - 1, TILE, TILE + 1, 5 * TILE + 7};
    const int type_cycle[] = {T_I32, 8 /* f32 */, T_U64, 0 /* i8 */, 9 /* f64 */};
    unsigned index = 0;
    for (size_t fi = 0; fi < sizeof fixed / sizeof fixed[0]; fi++)
        for (int form = 0; form < FORM_COUNT; form++)
            for (int dir = 0; dir < 4; dir++, index++) {
                const int ti = type_cycle[index % 5];
                one_case c = {&types[ti], (int)(index % ARITH_OPS), form, dir & 1, dir >> 1, (int)(index % 2),
                              5 * TILE + 7, 0, fixed[fi], (int)(index / 3 % 2), (int)(index / 2 % 2), (int)(index % 2),
                              (int)(index % 8)};
                run_case(h, &c, h->opt.seed ^ (0x2000u + index));
            }
    const size_t means[] = {2, 100, 5000};
    for (size_t mi = 0; mi < 3; mi++)
        for (int form = 0; form < FORM_COUNT; form++)
            for (int dir = 0; dir < 4; dir++, index++) {
                const int ti = type_cycle[index % 5];
                one_case c = {&types[ti], (int)(index % ARITH_OPS), form, dir & 1, dir >> 1, (int)(index % 2),
                              64 * TILE + 3, means[mi], 0, (int)(index / 3 % 2), (int)(index / 2 % 2), (int)(index % 2),
                              (int)(index % 8)};
                run_case(h, &c, h->opt.seed ^ (0x2000u + index));
            }
}

/* One segment of 2^24 + 3; one random size of random lengths. */
static void run_large(harness *h, size_t random_n) {
    unsigned index = 0;
    for (int form = 0; form < FORM_COUNT; form++)
        for (int dir = 0; dir < 4; dir++)
            for (int ti = 0; ti < 2; ti++, index++) {
                if (!h->opt.full && (dir != 0 || ti != 0 || form != FORM_OFFSETS)) continue;
                one_case c = {&types[ti ? T_U64 : T_I32], 0, form, dir & 1, dir >> 1, 1, LARGE_SEGMENT, 0,
                              LARGE_SEGMENT, 0, (int)(index % 2), (int)(index / 2 % 2), 6};
                run_case(h, &c, h->opt.seed ^ (0x3000u + index));
            }
    for (int form = 0; form < FORM_COUNT; form++, index++) {
        one_case c = {&types[index % TYPE_COUNT], 0, form, (int)(index % 2), (int)(index / 2 % 2), 1, random_n,
                      100, 0, 0, 1, 1, (int)(index % 8)};
        run_case(h, &c, h->opt.seed ^ (0x3000u + index));
    }
}

/* ---- bad inputs ---------------------------------------------------------------------------------------- */

static int poison_outputs(harness *h) {
    memset(h->h_got, TEST_POISON, data_bytes(h));
    return pscan_memory_upload(h->ctx, h->d_out, h->h_got, data_bytes(h)) == PSCAN_SUCCESS;
}

static int outputs_untouched(harness *h) {
    if (pscan_memory_download(h->ctx, h->h_got, h->d_out, data_bytes(h)) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS)
        return 0;
    return test_poisoned(h->h_got, 0, data_bytes(h));
}

/* The reduce-by-key outputs (keys, values, count) all still poisoned. */
static int by_key_outputs_untouched(harness *h) {
    if (!outputs_untouched(h)) return 0;
    unsigned char c[16];
    if (pscan_memory_download(h->ctx, h->h_got, h->d_out2, data_bytes(h)) != PSCAN_SUCCESS ||
        pscan_memory_download(h->ctx, c, h->d_count, 16) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS)
        return 0;
    return test_poisoned(h->h_got, 0, data_bytes(h)) && test_poisoned(c, 0, 16);
}

/* Uploads offsets (count + 1 of them) to d_segs. */
static int upload_offsets(harness *h, const uint64_t *o, size_t count) {
    return pscan_memory_upload(h->ctx, h->d_segs, o, (count + 1) * 8) == PSCAN_SUCCESS;
}

static void run_bad_inputs(harness *h) {
    const size_t n = 16;
    pscan_context *ctx = h->ctx;
    const int cpu = h->opt.backend == PSCAN_BACKEND_CPU;
    memset(h->h_in, 1, n * 4);
    if (!poison_outputs(h) || pscan_memory_upload(ctx, h->d_in, h->h_in, n * 4) != PSCAN_SUCCESS) {
        fail_report(h, "upload failed");
        return;
    }
    const pscan_segscan_desc good = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, h->opt.algo, NULL, PSCAN_SEGMENTS_OFFSETS};
    const pscan_scan_by_key_desc kgood = {PSCAN_TYPE_U16, PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, h->opt.algo, NULL};
    pscan_segscan_desc d;
    pscan_scan_by_key_desc kd;
    char *in = (char *)h->d_in, *out = (char *)h->d_out, *segs = (char *)h->d_segs;
    size_t bytes = 0;
    const uint64_t ok_offsets[4] = {0, 5, 5, 16};
    if (!upload_offsets(h, ok_offsets, 3)) return;

    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(NULL, &good, in, out, n, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(ctx, NULL, in, out, n, segs, 3, NULL, 0));
    d = good, d.flags = 8;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    d = good, d.segments = PSCAN_SEGMENTS_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    d = good, d.type = PSCAN_TYPE_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    d = good, d.algo = PSCAN_ALGO_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    d = good, d.type = PSCAN_TYPE_F32, d.op = PSCAN_OP_XOR;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(ctx, &good, NULL, out, n, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(ctx, &good, in, NULL, n, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(ctx, &good, in, out, n, NULL, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan(ctx, &good, NULL, NULL, 0, NULL, 0, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_segmented_scan(ctx, &good, in, out, 1ull << 60, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_segmented_scan(ctx, &good, in, out, n, segs, 1ull << 60, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_segmented_scan_temp_bytes(ctx, &good, 1ull << 60, 3, &bytes));
    /* no segment for n items: known without reading the offsets */
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &good, in, out, n, segs, 0, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan_temp_bytes(ctx, &good, n, 0, &bytes));
    if (h->addresses) {
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_segmented_scan(ctx, &good, in, in + 4, n, segs, 3, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_segmented_scan(ctx, &good, in, segs + 8, n, segs, 3, NULL, 0));
        d = good, d.segments = PSCAN_SEGMENTS_HEAD_FLAGS;
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_segmented_scan(ctx, &d, in, out, n, out + 4 * n - 1, 0, NULL, 0));
        kd = kgood;
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_scan_by_key(ctx, &kd, out + 2, in, out, n, NULL, 0));
    }
    d = good, d.algo = cpu ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_segmented_scan(ctx, &d, NULL, NULL, 0, segs, 0, NULL, 0));
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_segmented_scan_temp_bytes(ctx, &good, 64 * TILE, 3, &bytes));
    if (bytes > 1) {
        const uint64_t big[4] = {0, 5, 5, 64 * TILE};
        if (!upload_offsets(h, big, 3)) return;
        /* a short caller temp: a pointer past the data, or (cl_mem handles) a buffer of its own */
        void *small = in + 64 * TILE * 4 + 64;
        if (!h->addresses && pscan_memory_alloc(ctx, bytes - 1, &small) != PSCAN_SUCCESS) {
            fail_report(h, "temp allocation failed");
            return;
        }
        EXPECT_STATUS(h, PSCAN_ERROR_TEMP_TOO_SMALL,
                      pscan_segmented_scan(ctx, &good, in, out, 64 * TILE, segs, 3, small, bytes - 1));
        if (!h->addresses) pscan_memory_free(ctx, small);
        if (!upload_offsets(h, ok_offsets, 3)) return;
    }

    /* scan by key: the key type must be an integer type */
    kd = kgood, kd.key_type = PSCAN_TYPE_F32;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_scan_by_key(ctx, &kd, segs, in, out, n, NULL, 0));
    kd = kgood, kd.key_type = PSCAN_TYPE_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_scan_by_key_temp_bytes(ctx, &kd, n, &bytes));
    kd = kgood, kd.flags = PSCAN_SEGSCAN_CHECK_OFFSETS;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_scan_by_key(ctx, &kd, segs, in, out, n, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_scan_by_key(ctx, &kgood, NULL, in, out, n, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_scan_by_key_temp_bytes(ctx, &kgood, n, NULL));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_segmented_scan_temp_bytes(ctx, &good, n, 3, NULL));
    EXPECT(h, outputs_untouched(h));

    /* bad offsets: first not 0, descending, last not n, last past n; and n == 0 with a nonzero offset */
    const uint64_t bad[5][4] = {{1, 5, 5, 16}, {0, 9, 5, 16}, {0, 5, 5, 15}, {0, 5, 5, 17}, {0, 5, 16, 5}};
    for (int i = 0; i < 5; i++) {
        if (!upload_offsets(h, bad[i], 3)) return;
        for (int checked = 0; checked < 2; checked++) {
            d = good, d.flags = checked ? PSCAN_SEGSCAN_CHECK_OFFSETS | PSCAN_SCAN_REVERSE : 0u;
            pscan_status s = pscan_segmented_scan(ctx, &d, in, out, n, segs, 3, NULL, 0);
            /* the CPU reads the offsets on the host; a device backend answers only when asked to wait */
            if (cpu || checked)
                EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, s);
            else
                EXPECT_STATUS(h, PSCAN_SUCCESS, s);
            EXPECT(h, outputs_untouched(h));
        }
    }
    const uint64_t zeros_bad[3] = {0, 1, 0};
    if (!upload_offsets(h, zeros_bad, 2)) return;
    d = good, d.flags = PSCAN_SEGSCAN_CHECK_OFFSETS;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_segmented_scan(ctx, &d, NULL, NULL, 0, segs, 2, NULL, 0));
    const uint64_t zeros[3] = {0, 0, 0};
    if (!upload_offsets(h, zeros, 2)) return;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_segmented_scan(ctx, &d, NULL, NULL, 0, segs, 2, NULL, 0));
    EXPECT(h, outputs_untouched(h));

    /* the worked example of pscan.h */
    const int32_t ex_in[8] = {3, 1, 7, 0, 4, 1, 6, 3};
    const uint64_t ex_off[4] = {0, 3, 5, 8};
    const int32_t want[8] = {103, 104, 111, 100, 104, 101, 107, 110};
    const int32_t hundred = 100;
    int32_t got[8];
    d = good, d.init = &hundred, d.flags = PSCAN_SEGSCAN_CHECK_OFFSETS;
    if (pscan_memory_upload(ctx, in, ex_in, sizeof ex_in) != PSCAN_SUCCESS || !upload_offsets(h, ex_off, 3)) return;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_segmented_scan(ctx, &d, in, out, 8, segs, 3, NULL, 0));
    pscan_memory_download(ctx, got, out, sizeof got);
    pscan_context_synchronize(ctx);
    EXPECT(h, memcmp(got, want, sizeof want) == 0);
}

/* ---- reduce by key and run-length encoding ------------------------------------------------------------- */

/* One reduce by key (rle = 0; values of type t) or run-length encoding (rle = 1; the input of type t). The
 * runs are drawn as for the scans; the reference writes the first key and init + the values (or the length)
 * of each run. */
static void run_by_key_case(harness *h, const one_case *c, int rle, uint64_t case_seed) {
    const type_info *t = c->t, *kt = rle ? c->t : &types[c->key_type];
    const type_info *vt = rle ? &types[T_U64] : t;
    const pscan_op op = rle ? PSCAN_OP_SUM : ops[c->op];
    /* cl_mem handles: every buffer (the count too) at its start */
    const size_t n = c->n, kb = kt->bytes, vb = vt->bytes, off = h->addresses ? (size_t)c->offset : 0;
    const size_t count_at = h->addresses && c->offset ? 3 : 0;
    test_rng rng = {test_mix64(case_seed)};
    const size_t runs = make_segments(&rng, n, c->mean ? c->mean : 1, c->fixed, 0, h->h_offsets);
    char desc[400];
    snprintf(desc, sizeof desc, "%s %s%s%s n=%zu runs=%zu (mean %zu, fixed %zu) offset=%d temp=%s",
             rle ? "run-length-encode" : "reduce-by-key", t->name, rle ? "" : " keys ", rle ? "" : kt->name, n, runs,
             c->mean, c->fixed, c->offset, c->caller_temp ? "caller+1" : "workspace");
    /* keys: a new value (bit for bit) at every run; floats get random bits, NaN patterns included */
    uint64_t key = test_rng_next(&rng) & mask_of(kt);
    for (size_t r = 0; r < runs; r++) {
        key = (key + 1 + test_rng_next(&rng) % 3) & mask_of(kt);
        for (uint64_t i = h->h_offsets[r]; i < h->h_offsets[r + 1]; i++) store_raw(h->h_keys, off + i, kb, key);
    }
    for (size_t i = 0; i < n; i++) store_raw(h->h_in, off + i, vb, rle ? 0 : random_value(&rng, vt, op));
    const uint64_t init = !rle && c->with_init ? random_value(&rng, vt, op) : ref_identity(vt, op);
    /* reference: keys into h_want at [0, runs), values into h_flags' neighbour buffer h_got later */
    unsigned char *want_keys = h->h_want, *want_values = h->h_want + (runs + 1) * kb;
    for (size_t r = 0; r < runs; r++) {
        const size_t s0 = (size_t)h->h_offsets[r], e0 = (size_t)h->h_offsets[r + 1];
        uint64_t acc = init;
        for (size_t i = s0; i < e0; i++) acc = ref_combine(vt, op, acc, rle ? 1 : load_raw(h->h_in, off + i, vb));
        store_raw(want_keys, r, kb, load_raw(h->h_keys, off + s0, kb));
        store_raw(want_values, r, vb, acc);
    }

    /* ---- upload, poison, call ---- */
    const size_t guard_bytes = (off + n + GUARD_ITEMS) * 8;
    memset(h->h_got, TEST_POISON, guard_bytes);
    if (pscan_memory_upload(h->ctx, h->d_segs, h->h_keys, (off + n) * kb + 1) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, h->d_in, h->h_in, (off + n) * vb + 1) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, h->d_out, h->h_got, guard_bytes) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, h->d_out2, h->h_got, guard_bytes) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, h->d_count, h->h_got, 16) != PSCAN_SUCCESS) {
        fail_report(h, "upload failed");
        return;
    }
    unsigned char init_bytes[8];
    memcpy(init_bytes, &init, 8);
    const pscan_reduce_by_key_desc rd = {kt->type, t->type, op, h->opt.algo, c->with_init ? init_bytes : NULL};
    const pscan_rle_desc ld = {t->type, h->opt.algo};
    void *temp = NULL;
    size_t temp_bytes = 0;
    pscan_status s;
    if (c->caller_temp) {
        size_t need = 0;
        s = rle ? pscan_run_length_encode_temp_bytes(h->ctx, &ld, n, &need)
                : pscan_reduce_by_key_temp_bytes(h->ctx, &rd, n, &need);
        if (!case_temp(h, desc, "temp query", s, need, &temp, &temp_bytes)) return;
    }
    void *keys_in = (char *)h->d_segs + off * kb, *values_in = (char *)h->d_in + off * vb;
    void *keys_out = (char *)h->d_out + off * kb, *values_out = (char *)h->d_out2 + off * vb;
    uint64_t *count = (uint64_t *)((char *)h->d_count + count_at);
    s = rle ? pscan_run_length_encode(h->ctx, &ld, keys_in, n, keys_out, (uint64_t *)values_out, count, temp, temp_bytes)
            : pscan_reduce_by_key(h->ctx, &rd, keys_in, values_in, n, keys_out, values_out, count, temp, temp_bytes);
    if (!call_ok(h, desc, s)) return;

    /* ---- the count, the runs, the poison after them ---- */
    unsigned char count_buf[16];
    if (pscan_memory_download(h->ctx, count_buf, h->d_count, 16) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        return;
    }
    uint64_t got_runs;
    memcpy(&got_runs, count_buf + count_at, 8);
    if (got_runs != runs) {
        char what[600];
        snprintf(what, sizeof what, "%s: run count %" PRIu64 ", expected %zu", desc, got_runs, runs);
        fail_report(h, what);
        return;
    }
    for (int pass = 0; pass < 2; pass++) {
        const size_t b = pass ? vb : kb;
        const unsigned char *want = pass ? want_values : want_keys;
        if (pscan_memory_download(h->ctx, h->h_got, pass ? h->d_out2 : h->d_out, guard_bytes) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
            fail_report(h, "download failed");
            return;
        }
        for (size_t r = 0; r < runs; r++) {
            if (memcmp(h->h_got + (off + r) * b, want + r * b, b) != 0) {
                char what[700];
                snprintf(what, sizeof what, "%s: %s[%zu] = 0x%" PRIx64 ", expected 0x%" PRIx64 " (run [%" PRIu64
                         ", %" PRIu64 "))", desc, pass ? "values_out" : "keys_out", r, load_raw(h->h_got, off + r, b),
                         load_raw(want, r, b), h->h_offsets[r], h->h_offsets[r + 1]);
                fail_report(h, what);
                return;
            }
        }
        if (!test_poisoned(h->h_got, 0, off * b) || !test_poisoned(h->h_got, (off + runs) * b, guard_bytes)) {
            char what[600];
            snprintf(what, sizeof what, "%s: %s written outside its runs", desc, pass ? "values_out" : "keys_out");
            fail_report(h, what);
            return;
        }
    }
    h->passed++;
}

/* Every value type x operator (reduce by key) and every type (run-length encoding), around the tile; run
 * lengths around the tile and past the look-back window. */
static void run_by_key(harness *h, size_t random_n) {
    const size_t sizes[] = {0, 1, 1000, TILE - 1, TILE, TILE + 1};
    const size_t means[] = {1, 3, 8, 1000};
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int oi = 0; oi <= OP_COUNT; oi++) { /* oi == OP_COUNT: run-length encoding */
            if (types[ti].is_float && oi >= ARITH_OPS && oi < OP_COUNT) continue;
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, index++) {
                one_case c = {&types[ti], oi == OP_COUNT ? 0 : oi, FORM_KEYS, 0, 0, (int)(index / 5 % 2), sizes[si],
                              means[index % 4], 0, 0, (int)(index % 2), (int)(index / 2 % 2), (int)(index % 8)};
                run_by_key_case(h, &c, oi == OP_COUNT, h->opt.seed ^ (0x4000u + index));
            }
        }
    const size_t fixed[] = {1, TILE - 1, TILE, TILE + 1, 64 * TILE + 3};
    const size_t big_sizes[] = {5 * TILE + 7, 5 * TILE + 7, 5 * TILE + 7, 5 * TILE + 7, 64 * TILE + 3};
    for (size_t fi = 0; fi < 5; fi++)
        for (int rle = 0; rle < 2; rle++, index++) {
            one_case c = {&types[index % TYPE_COUNT], (int)(index % ARITH_OPS), FORM_KEYS, 0, 0, 1, big_sizes[fi], 0,
                          fixed[fi], 0, (int)(index % 2), (int)(index / 2 % 2), (int)(index % 8)};
            run_by_key_case(h, &c, rle, h->opt.seed ^ (0x4000u + index));
        }
    /* and on both sides of CUDA run-length encoding's switch from its small tiles to its large ones
     * (src/cuda/reduce_by_key.cu: up to 1023 tiles of 6144 items run small) */
    const size_t more[] = {64 * TILE + 3, random_n, RLE_TIER_N, RLE_TIER_N + 1};
    for (size_t mi = 0; mi < sizeof more / sizeof more[0]; mi++)
        for (int rle = 0; rle < 2; rle++, index++) {
            one_case c = {&types[index % TYPE_COUNT], 0, FORM_KEYS, 0, 0, 1, more[mi], 8, 0, 0, (int)(index % 2), 1,
                          (int)(index % 8)};
            run_by_key_case(h, &c, rle, h->opt.seed ^ (0x4000u + index));
        }
}

static void run_by_key_bad_inputs(harness *h) {
    const size_t n = 16;
    pscan_context *ctx = h->ctx;
    const int cpu = h->opt.backend == PSCAN_BACKEND_CPU;
    memset(h->h_got, TEST_POISON, data_bytes(h));
    if (pscan_memory_upload(ctx, h->d_out, h->h_got, data_bytes(h)) != PSCAN_SUCCESS ||
        pscan_memory_upload(ctx, h->d_out2, h->h_got, data_bytes(h)) != PSCAN_SUCCESS ||
        pscan_memory_upload(ctx, h->d_count, h->h_got, 16) != PSCAN_SUCCESS) {
        fail_report(h, "upload failed");
        return;
    }
    const pscan_reduce_by_key_desc good = {PSCAN_TYPE_U32, PSCAN_TYPE_I32, PSCAN_OP_SUM, h->opt.algo, NULL};
    const pscan_rle_desc lgood = {PSCAN_TYPE_F32, h->opt.algo};
    pscan_reduce_by_key_desc d;
    pscan_rle_desc ld;
    char *k = (char *)h->d_segs, *v = (char *)h->d_in, *ko = (char *)h->d_out, *vo = (char *)h->d_out2;
    uint64_t *cnt = (uint64_t *)h->d_count;
    size_t bytes = 0;
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_by_key(NULL, &good, k, v, n, ko, vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_by_key(ctx, NULL, k, v, n, ko, vo, cnt, NULL, 0));
    d = good, d.key_type = PSCAN_TYPE_F64;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_reduce_by_key(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
    d = good, d.type = PSCAN_TYPE_F32, d.op = PSCAN_OP_AND;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_reduce_by_key(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_by_key(ctx, &good, k, v, n, ko, vo, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_by_key(ctx, &good, k, NULL, n, ko, vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_by_key(ctx, &good, k, v, n, ko, NULL, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce_by_key(ctx, &good, k, v, 1ull << 60, ko, vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce_by_key_temp_bytes(ctx, &good, 1ull << 60, &bytes));
    ld = lgood, ld.type = PSCAN_TYPE_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_run_length_encode(ctx, &ld, k, n, ko, (uint64_t *)vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_run_length_encode(ctx, &lgood, NULL, n, ko, (uint64_t *)vo, cnt, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_run_length_encode_temp_bytes(ctx, &lgood, n, NULL));
    if (h->addresses) {
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce_by_key(ctx, &good, k, v, n, k + 4, vo, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce_by_key(ctx, &good, k, v, n, ko, v, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce_by_key(ctx, &good, k, v, n, ko, ko + 4 * n - 4, cnt, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce_by_key(ctx, &good, k, v, n, ko, vo, (uint64_t *)(vo + 8), NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_run_length_encode(ctx, &lgood, k, n, k + 60, (uint64_t *)vo, cnt, NULL, 0));
    }
    d = good, d.algo = cpu ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce_by_key(ctx, &d, k, v, n, ko, vo, cnt, NULL, 0));
    ld = lgood, ld.algo = d.algo;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_run_length_encode(ctx, &ld, NULL, 0, NULL, NULL, cnt, NULL, 0));
    EXPECT(h, by_key_outputs_untouched(h));
    /* n == 0 writes 0 runs, nothing else */
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_run_length_encode(ctx, &lgood, NULL, 0, NULL, NULL, cnt, NULL, 0));
    uint64_t got = 1;
    pscan_memory_download(ctx, &got, cnt, 8);
    pscan_context_synchronize(ctx);
    EXPECT(h, got == 0);

    /* the worked examples of pscan.h */
    const uint32_t keys[8] = {5, 5, 5, 2, 2, 5, 5, 5};
    const int32_t vals[8] = {3, 1, 7, 0, 4, 1, 6, 3};
    uint32_t kgot[3];
    int32_t vgot[3];
    uint64_t lgot[3];
    pscan_memory_upload(ctx, k, keys, sizeof keys);
    pscan_memory_upload(ctx, v, vals, sizeof vals);
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_reduce_by_key(ctx, &good, k, v, 8, ko, vo, cnt, NULL, 0));
    pscan_memory_download(ctx, kgot, ko, sizeof kgot);
    pscan_memory_download(ctx, vgot, vo, sizeof vgot);
    pscan_memory_download(ctx, &got, cnt, 8);
    pscan_context_synchronize(ctx);
    EXPECT(h, got == 3 && kgot[0] == 5 && kgot[1] == 2 && kgot[2] == 5 && vgot[0] == 11 && vgot[1] == 4 && vgot[2] == 10);
    ld = lgood, ld.type = PSCAN_TYPE_U32;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_run_length_encode(ctx, &ld, k, 8, ko, (uint64_t *)vo, cnt, NULL, 0));
    pscan_memory_download(ctx, kgot, ko, sizeof kgot);
    pscan_memory_download(ctx, lgot, vo, sizeof lgot);
    pscan_memory_download(ctx, &got, cnt, 8);
    pscan_context_synchronize(ctx);
    EXPECT(h, got == 3 && kgot[0] == 5 && kgot[1] == 2 && kgot[2] == 5 && lgot[0] == 3 && lgot[1] == 2 && lgot[2] == 3);
}

static void finish(harness *h) {
    printf("test_segscan: %lu passed, %lu failed\n", h->passed, h->failed);
    void *bufs[] = {h->d_in, h->d_out, h->d_segs, h->d_temp, h->d_out2, h->d_count};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
    pscan_context_destroy(h->ctx);
    free(h->h_in), free(h->h_want), free(h->h_got), free(h->h_flags), free(h->h_keys), free(h->h_offsets);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_segscan", argc, argv, 0x5E65CAull, TEST_OPT_FULL | TEST_OPT_SHARD, &h.opt) != 0)
        return 1;
    int rc = test_open_context("test_segscan", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_segscan: algo %s, seed %" PRIu64 "%s%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "", h.opt.full ? ", full" : "");

    test_rng size_rng = {test_mix64(h.opt.seed ^ 0x5E65u)};
    const size_t random_n = 1 + (size_t)(test_rng_next(&size_rng) % (h.opt.quick ? (1u << 20) : (1u << 22)));
    h.max_n = LARGE_SEGMENT > random_n ? LARGE_SEGMENT : random_n;
    if (h.max_n < 64 * TILE + 3) h.max_n = 64 * TILE + 3;
    const size_t bytes = data_bytes(&h);
    h.h_in = (unsigned char *)malloc(bytes), h.h_want = (unsigned char *)malloc(bytes);
    h.h_got = (unsigned char *)malloc(bytes), h.h_keys = (unsigned char *)calloc(1, bytes);
    h.h_flags = (unsigned char *)calloc(h.max_n + 2, 1);
    h.h_offsets = (uint64_t *)calloc(2 * h.max_n + 16, 8);
    if (!h.h_in || !h.h_want || !h.h_got || !h.h_keys || !h.h_flags || !h.h_offsets ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_in) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, segs_bytes(&h), &h.d_segs) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_out2) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, 16, &h.d_count) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_segscan: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }
    memset(h.h_in, 0, bytes);

    if (TEST_IN_SHARD(&h.opt, 0)) run_bad_inputs(&h);
    run_table(&h);
    if (TEST_IN_SHARD(&h.opt, 1)) run_lengths(&h);
    printf("test_segscan: random size %zu\n", random_n);
    if (TEST_IN_SHARD(&h.opt, 2)) run_large(&h, random_n);
    if (TEST_IN_SHARD(&h.opt, 3)) run_by_key_bad_inputs(&h);
    if (TEST_IN_SHARD(&h.opt, 4)) run_by_key(&h, random_n);
    finish(&h);
    return h.failed ? 1 : 0;
}
