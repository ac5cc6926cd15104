/*
 * test_sort.c - the sort test table, read as a specification of pscan_sort().
 *
 *   test_sort --backend cpu|cuda|opencl [--algo NAME] [--quick] [--full] [--seed S] [--threads T] [--shard K/N]
 *             [--stress N]
 *
 * Every result is checked against a stable merge sort written here (never the library's) on the
 * order-preserving map of pscan.h, itself checked against the keys' numeric order: sorted keys bit for bit,
 * and the payloads, which hold each key's input index (truncated to 1, 2, 4 or 8 bytes), so that any
 * reordering of equal keys shows (stability).
 *  - run_table(): every key type x {ascending, descending} x sizes 0, 1, 2, 100, around the CUDA one-block
 *    sizes (1024, 2048 and the tile 4096: each -1, +0, +1), 1.5 tiles (+1), 2 tiles + 5, 5 tiles + 1, 64 tiles
 *    + 3; payload size cycling 0, 1, 2, 4, 8; inputs and outputs at their allocation's start or one element
 *    in; temp from the workspace or a caller buffer at +1 byte.
 *  - run_bits(): bit ranges (begin_bit, end_bit) on every key type: one bit, one digit, a digit and a half,
 *    the top bits, a range that ends below the top.
 *  - run_patterns(): all keys equal, sorted, reverse sorted, four distinct values, keys that differ only in
 *    their top 8 bits, only in their low 12, or below 2^24 (the CPU skips the passes whose digit is one value),
 *    and (floats) -0.0, +0.0, +-inf, NaNs of both signs and payloads, denormals.
 *  - run_large(): 2^20 + k keys of u32, u64, f32 and i16 with payloads (2^24 + k with --full); with --full also
 *    4-byte keys with 4-byte payloads at 2^25 and 2^25 + k, and i64 keys with 4-byte payloads at 2^22, where
 *    the CUDA passes take their LARGE tiles; and (run_joint_upsweep) all-equal u32 keys at 2^25, i16 keys of
 *    four values at 2^26 + k and u32 keys by bits [5, 29) at 2^25 + 3, past the size where the CUDA upsweep counts
 *    two digits with one atomic.
 *  - run_skewed(): those patterns at 2^22 + k keys, where none, one, two or three of the passes move a key (the
 *    CPU skips the others; CUDA's warps of one digit rank them), with payloads, a bit range, 64-bit status words.
 *  - run_bad_inputs(): each bad argument returns its exact status and writes nothing.
 *  - run_stress() (--stress N, instead of the above): N calls back to back on one stream and one temp, each with
 *    fresh keys of a random type, direction, payload, size and bit range, checked after its batch.
 * After each call: the status, the output keys and payloads, everything past them still poisoned, and the
 * inputs unchanged. On OpenCL, whose handles are cl_mem and cannot be offset, every buffer sits at its start (and
 * the overlap cases of run_bad_inputs, which need addresses, are left out).
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_sort: P passed, F failed".
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
#define TILE 4096u /* the CUDA one-block sort's limit: 256 threads x 16 keys (src/cuda/radix_sort.cu) */
#define GUARD_ITEMS 8

static const size_t value_cycle[] = {0, 4, 1, 8, 2};

static const type_info *type_named(pscan_type type) {
    for (size_t i = 0; i < TYPE_COUNT; i++)
        if (types[i].type == type) return &types[i];
    return &types[0];
}

/* ---- the reference ------------------------------------------------------------------------------------- */

static uint64_t all_bits(const type_info *t) { return t->bytes == 8 ? ~0ull : (1ull << (8 * t->bytes)) - 1; }

static int is_nan_raw(const type_info *t, uint64_t raw) {
    const double d = raw_float(t, raw);
    return d != d;
}

/* pscan.h's order as an unsigned integer (ascending): written from the contract, not from the library. */
static uint64_t order_key(const type_info *t, uint64_t raw) {
    const uint64_t top = 1ull << (8 * t->bytes - 1);
    if (!t->is_float) return t->is_signed ? (raw ^ top) & all_bits(t) : raw;
    if (is_nan_raw(t, raw)) return all_bits(t);
    return (raw & top) ? (~raw & all_bits(t)) : (raw | top);
}

/* The numeric order the map must agree with: -1, 0, 1; -0.0 < +0.0, NaN greater than all (NaNs equal). */
static int numeric_compare(const type_info *t, uint64_t a, uint64_t b) {
    if (t->is_float) {
        const int na = is_nan_raw(t, a), nb = is_nan_raw(t, b);
        if (na || nb) return na - nb;
        double x, y;
        if (t->bytes == 4) {
            float f, g;
            uint32_t ra = (uint32_t)a, rb = (uint32_t)b;
            memcpy(&f, &ra, 4), memcpy(&g, &rb, 4);
            x = f, y = g;
        } else {
            memcpy(&x, &a, 8), memcpy(&y, &b, 8);
        }
        if (x == 0 && y == 0) { /* -0.0 before +0.0 */
            const int sa = signbit(x) != 0, sb = signbit(y) != 0;
            return sb - sa;
        }
        return x < y ? -1 : x > y;
    }
    if (t->is_signed) {
        const unsigned shift = 64 - 8 * (unsigned)t->bytes;
        const int64_t x = (int64_t)(a << shift) >> shift, y = (int64_t)(b << shift) >> shift;
        return x < y ? -1 : x > y;
    }
    return a < b ? -1 : a > b;
}

typedef struct sort_spec {
    const type_info *t;
    int descending;
    unsigned begin_bit, end_bit; /* end_bit resolved */
} sort_spec;

static uint64_t sort_key(const sort_spec *s, uint64_t raw) {
    const unsigned width = s->end_bit - s->begin_bit;
    const uint64_t mask = width == 64 ? ~0ull : (1ull << width) - 1;
    uint64_t k = (order_key(s->t, raw) >> s->begin_bit) & mask;
    return s->descending ? ~k & mask : k;
}

/* Stable merge sort of the indices idx[0..n) by keys[idx] (bottom-up, into scratch). */
static void merge_sort(size_t *idx, size_t *scratch, const uint64_t *keys, size_t n) {
    for (size_t w = 1; w < n; w *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * w) {
            size_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
            size_t i = lo, j = mid, k = lo;
            while (i < mid && j < hi) scratch[k++] = keys[idx[j]] < keys[idx[i]] ? idx[j++] : idx[i++];
            while (i < mid) scratch[k++] = idx[i++];
            while (j < hi) scratch[k++] = idx[j++];
        }
        memcpy(idx, scratch, n * sizeof *idx);
    }
}

/* ---- the harness --------------------------------------------------------------------------------------- */

typedef test_options options; /* test_common.h */

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;
    size_t max_n;
    unsigned char *h_keys, *h_values, *h_got, *h_ref_keys, *h_ref_values;
    uint64_t *h_sort_keys;
    size_t *h_idx, *h_scratch;
    void *d_keys, *d_values, *d_keys_out, *d_values_out, *d_temp;
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

static size_t buffer_bytes(const harness *h) { return (h->max_n + 1 + GUARD_ITEMS) * 8; }

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)
TEST_HARNESS_TEMP(harness)
TEST_HARNESS_OUTPUTS(harness)

/* Poisons the first `bytes` of each output: a case what it checks (its items and the guard after them), not the
 * whole buffer, which is sized for the largest case (as test_select.c). */
static int poison_outputs(harness *h, size_t bytes) {
    memset(h->h_got, TEST_POISON, bytes);
    return pscan_memory_upload(h->ctx, h->d_keys_out, h->h_got, bytes) == PSCAN_SUCCESS &&
           pscan_memory_upload(h->ctx, h->d_values_out, h->h_got, bytes) == PSCAN_SUCCESS;
}

static int outputs_untouched(harness *h) {
    const size_t bytes = buffer_bytes(h);
    const void *bufs[2] = {h->d_keys_out, h->d_values_out};
    for (int b = 0; b < 2; b++) {
        if (pscan_memory_download(h->ctx, h->h_got, bufs[b], bytes) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS || !test_poisoned(h->h_got, 0, bytes))
            return 0;
    }
    return 1;
}

/* Input patterns. */
enum { PAT_RANDOM, PAT_EQUAL, PAT_SORTED, PAT_REVERSE, PAT_FEW, PAT_TOP_BITS, PAT_LOW_BITS, PAT_BELOW_2_24, PAT_FLOAT_SPECIAL, PAT_COUNT };
static const char *const pattern_names[] = {"random", "all-equal", "sorted", "reverse-sorted", "few-distinct",
                                            "top-bits-only", "low-bits-only", "below-2^24", "float-specials"};

static uint64_t pattern_key(const type_info *t, int pattern, size_t i, size_t n, test_rng *rng, uint64_t fixed) {
    const uint64_t all = all_bits(t), r = test_rng_next(rng);
    const unsigned bits = 8 * (unsigned)t->bytes;
    switch (pattern) {
    case PAT_EQUAL: return fixed & all;
    case PAT_SORTED:
    case PAT_REVERSE: {
        /* spread i over the order (through the map's inverse for signed keys: raw = order ^ top) */
        const uint64_t step = n > 1 ? all / (n - 1) : 1, pos = pattern == PAT_SORTED ? i : n - 1 - i;
        uint64_t order = pos * (step ? step : 1) & all;
        if (t->is_float) return float_raw(t, (double)pos - (double)n / 2);
        return t->is_signed ? (order ^ (1ull << (bits - 1))) & all : order;
    }
    case PAT_FEW: {
        const uint64_t few[4] = {fixed & all, (fixed * 7 + 3) & all, (fixed >> 3) & all, all};
        return t->is_float ? float_raw(t, (double)(r % 4) - 1.5) : few[r % 4];
    }
    case PAT_TOP_BITS: return (r % 256) << (bits - 8);
    case PAT_LOW_BITS: return (r % 4096) & all; /* the top digits one value: passes that move nothing */
    case PAT_BELOW_2_24: return r & 0xffffffull & all; /* three digits move: an odd number of passes */
    case PAT_FLOAT_SPECIAL: {
        if (!t->is_float) return r & all;
        const uint64_t top = 1ull << (bits - 1);
        const uint64_t qnan = t->bytes == 4 ? 0x7fc00000ull : 0x7ff8000000000000ull;
        switch (r % 12) {
        case 0: return 0;                                   /* +0.0 */
        case 1: return top;                                 /* -0.0 */
        case 2: return float_raw(t, INFINITY);
        case 3: return float_raw(t, -INFINITY);
        case 4: return qnan;                                /* NaN */
        case 5: return qnan | top | ((r >> 8) & 0xff);      /* negative NaN with a payload */
        case 6: return 1;                                   /* the smallest denormal */
        case 7: return top | 1;
        case 8: return float_raw(t, 1.0);
        case 9: return float_raw(t, -1.0);
        default: return float_raw(t, ((double)(int)(r >> 16 & 0xff) - 128) / 4);
        }
    }
    default: return r & all;
    }
}

typedef struct one_case {
    sort_spec s;
    size_t value_bytes;
    size_t n;
    int pattern;
    int offset;      /* 0 or 1 element into every data buffer */
    int caller_temp; /* 0: the workspace; 1: a caller buffer at +1 byte */
    int full_bits;   /* pass end_bit 0 (all bits) */
} one_case;

static void describe(const one_case *c, char *text, size_t size) {
    snprintf(text, size, "%s %s bits [%u,%u) values=%zu n=%zu pattern=%s offset=%d temp=%s", c->s.t->name,
             c->s.descending ? "descending" : "ascending", c->s.begin_bit, c->s.end_bit, c->value_bytes, c->n,
             pattern_names[c->pattern], c->offset, c->caller_temp ? "caller+1" : "workspace");
}

static void run_case(harness *h, const one_case *given, uint64_t case_seed) {
    one_case placed = *given;
    if (!h->addresses) placed.offset = 0; /* cl_mem handles (OpenCL) cannot be offset: every buffer at its start */
    const one_case *c = &placed;
    const type_info *t = c->s.t;
    const size_t n = c->n, kb = t->bytes, vb = c->value_bytes, off = (size_t)c->offset;
    char desc[300];
    describe(c, desc, sizeof desc);
    test_rng rng = {test_mix64(case_seed)};
    const uint64_t fixed = test_rng_next(&rng);

    /* ---- inputs and the reference ---- */
    for (size_t i = 0; i < n; i++) {
        const uint64_t key = pattern_key(t, c->pattern, i, n, &rng, fixed), index = i;
        memcpy(h->h_keys + (off + i) * kb, &key, kb);
        if (vb) memcpy(h->h_values + (off + i) * vb, &index, vb);
        h->h_sort_keys[i] = sort_key(&c->s, key);
        h->h_idx[i] = i;
    }
    merge_sort(h->h_idx, h->h_scratch, h->h_sort_keys, n);
    for (size_t i = 0; i < n; i++) {
        memcpy(h->h_ref_keys + (off + i) * kb, h->h_keys + (off + h->h_idx[i]) * kb, kb);
        if (vb) memcpy(h->h_ref_values + (off + i) * vb, h->h_values + (off + h->h_idx[i]) * vb, vb);
    }
    /* the reference itself: over all bits, ascending order is the numeric order (descending its reverse) */
    if (c->s.begin_bit == 0 && c->s.end_bit == 8 * kb)
        for (size_t i = 1; i < n; i++) {
            const int cmp = numeric_compare(t, load_raw(h->h_ref_keys, off + i - 1, kb), load_raw(h->h_ref_keys, off + i, kb));
            if (c->s.descending ? cmp < 0 : cmp > 0) {
                fail_report(h, "the test's own reference disagrees with numeric order");
                return;
            }
        }

    /* ---- upload, poison, call ---- */
    const size_t end_bytes = (off + n + GUARD_ITEMS) * 8; /* what the checks below read of each output */
    if (pscan_memory_upload(h->ctx, h->d_keys, h->h_keys, (off + n) * kb + 1) != PSCAN_SUCCESS ||
        (vb && pscan_memory_upload(h->ctx, h->d_values, h->h_values, (off + n) * vb + 1) != PSCAN_SUCCESS) ||
        !poison_outputs(h, end_bytes)) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_sort_desc d = {t->type, vb, c->s.descending ? PSCAN_SORT_DESCENDING : 0u, c->s.begin_bit,
                         c->full_bits ? 0u : c->s.end_bit, h->opt.algo};
    void *temp = NULL;
    size_t temp_bytes = 0, need = 0;
    if (c->caller_temp) {
        const pscan_status ts = pscan_sort_temp_bytes(h->ctx, &d, n, &need);
        if (!case_temp(h, desc, "pscan_sort_temp_bytes", ts, need, &temp, &temp_bytes)) return;
    }
    void *keys_in = (char *)h->d_keys + off * kb, *keys_out = (char *)h->d_keys_out + off * kb;
    void *values_in = vb ? (char *)h->d_values + off * vb : NULL;
    void *values_out = vb ? (char *)h->d_values_out + off * vb : NULL;
    pscan_status s = pscan_sort(h->ctx, &d, keys_in, values_in, n, keys_out, values_out, temp, temp_bytes);
    if (!call_ok(h, desc, s)) return;

    /* ---- the items, the poison around them, the inputs ---- */
    for (int pass = 0; pass < (vb ? 2 : 1); pass++)
        if (!check_output(h, desc, pass ? "values_out" : "keys_out", pass ? h->d_values_out : h->d_keys_out, h->h_got,
                          pass ? h->h_ref_values : h->h_ref_keys, off, n, pass ? vb : kb, end_bytes))
            return;
    for (int pass = 0; pass < (vb ? 2 : 1); pass++) {
        const size_t bytes = (off + n) * (pass ? vb : kb);
        if (pscan_memory_download(h->ctx, h->h_got, pass ? h->d_values : h->d_keys, bytes) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
            fail_report(h, "download failed");
            return;
        }
        if (memcmp(h->h_got, pass ? h->h_values : h->h_keys, bytes) != 0) {
            char what[400];
            snprintf(what, sizeof what, "%s: the input %s changed", desc, pass ? "values" : "keys");
            fail_report(h, what);
            return;
        }
    }
    h->passed++;
}

static one_case make_case(const type_info *t, int descending, size_t vb, size_t n, int pattern, unsigned index) {
    one_case c;
    memset(&c, 0, sizeof c);
    c.s.t = t;
    c.s.descending = descending;
    c.s.begin_bit = 0;
    c.s.end_bit = 8 * (unsigned)t->bytes;
    c.value_bytes = vb;
    c.n = n;
    c.pattern = pattern;
    c.offset = (int)(index % 2);
    c.caller_temp = (int)(index / 2 % 2);
    c.full_bits = (int)(index / 3 % 2);
    return c;
}

/* Every type x direction at the small and tile sizes, random keys. */
static void run_table(harness *h) {
    /* the edges of the CUDA pass tiles (radix_sort.cu's ps_sort_pass_policy): 256 x 16 keys with payloads,
     * 256 x 20 (5120) keys of up to 4 bytes alone, 384 x 15 (5760) 8-byte keys alone; 7680 (384 x 20, an
     * earlier policy), 3 TILE / 2 and 5 TILE for tuning builds with 24 and 20 keys a thread; below TILE, the
     * edges of the one-block sort's 4 and 8 keys a thread (with the payload cycle, every key width x payload
     * width meets each of its 4, 8 and 16) */
    const size_t sizes[] = {0,     1,    2,    100,  1023, 1024, 1025, 2047, 2048, 2049,
                            TILE - 1, TILE,  TILE + 1, 3 * TILE / 2, 3 * TILE / 2 + 1,
                            5120,  5121, 5760, 5761, 7680, 7681, 2 * TILE + 5, 3 * 5120 - 1, 3 * 5760 - 1,
                            2 * 7680 + 1, 5 * TILE + 1,
                            64 * TILE + 3};
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++)
        for (int desc = 0; desc < 2; desc++)
            for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++, index++) {
                if (!TEST_IN_SHARD(&h->opt, ti)) continue;
                one_case c = make_case(&types[ti], desc, value_cycle[index % 5], sizes[si], PAT_RANDOM, index);
                run_case(h, &c, h->opt.seed ^ (0x1000u + index));
            }
}

/* Bit ranges of the mapped key on every type. */
static void run_bits(harness *h) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
        const unsigned bits = 8 * (unsigned)types[ti].bytes;
        const unsigned ranges[][2] = {{0, 1}, {bits - 1, bits}, {0, 8 < bits ? 8 : bits}, {bits / 2, bits},
                                      {bits > 8 ? 3 : 1, bits > 8 ? 15 : 7}, {bits > 16 ? 5 : 0, bits - 1}};
        for (size_t r = 0; r < sizeof ranges / sizeof ranges[0]; r++)
            for (int desc = 0; desc < 2; desc++, index++) {
                if (!TEST_IN_SHARD(&h->opt, ti)) continue;
                const size_t n = index % 3 == 0 ? 1000 : 3 * TILE + 17;
                one_case c = make_case(&types[ti], desc, 4, n, index % 4 == 3 ? PAT_FLOAT_SPECIAL : PAT_RANDOM, index);
                c.s.begin_bit = ranges[r][0];
                c.s.end_bit = ranges[r][1];
                c.full_bits = 0;
                run_case(h, &c, h->opt.seed ^ (0x2000u + index));
            }
    }
}

/* The patterns on every type, small (one block on CUDA) and past the look-back window. */
static void run_patterns(harness *h) {
    const size_t sizes[] = {TILE - 3, 40 * TILE + 1};
    unsigned index = 0;
    for (int pattern = PAT_EQUAL; pattern < PAT_COUNT; pattern++)
        for (size_t ti = 0; ti < TYPE_COUNT; ti++)
            for (size_t si = 0; si < 2; si++, index++) {
                if (pattern == PAT_FLOAT_SPECIAL && !types[ti].is_float) continue;
                if (!TEST_IN_SHARD(&h->opt, ti)) continue;
                one_case c = make_case(&types[ti], (int)(index % 2), value_cycle[index % 5] ? 4 : 0, sizes[si],
                                       pattern, index);
                run_case(h, &c, h->opt.seed ^ (0x3000u + index));
            }
}

/* Skewed keys at a size of many tiles and several CUDA blocks per SM: none of the passes moves a key (all equal),
 * one, two or three do (the CPU's skipped passes leave the keys in one buffer or the other by their parity), with
 * and without payloads, a bit range, 64-bit status words (8-byte keys). A device-side skip of such passes was
 * built for CUDA and measured (docs/tuning.md, forty-fifth session): these cases are its tests, should it return. */
static void run_skewed(harness *h, size_t n) {
    static const struct {
        pscan_type type;
        int pattern, descending;
        size_t value_bytes;
        unsigned begin_bit, end_bit; /* 0, 0: all bits */
    } cases[] = {
        {PSCAN_TYPE_U32, PAT_EQUAL, 0, 4, 0, 0},       {PSCAN_TYPE_U64, PAT_EQUAL, 1, 0, 0, 0},
        {PSCAN_TYPE_U32, PAT_TOP_BITS, 1, 0, 0, 0},    {PSCAN_TYPE_F32, PAT_TOP_BITS, 0, 4, 0, 0},
        {PSCAN_TYPE_U16, PAT_TOP_BITS, 0, 2, 0, 0},    {PSCAN_TYPE_U32, PAT_LOW_BITS, 0, 4, 0, 0},
        {PSCAN_TYPE_I64, PAT_LOW_BITS, 1, 0, 0, 0},    {PSCAN_TYPE_U32, PAT_BELOW_2_24, 0, 0, 0, 0},
        {PSCAN_TYPE_U64, PAT_BELOW_2_24, 0, 4, 0, 0},  {PSCAN_TYPE_U32, PAT_LOW_BITS, 1, 4, 4, 28},
    };
    for (unsigned i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        one_case c = make_case(type_named(cases[i].type), cases[i].descending, cases[i].value_bytes, n,
                               cases[i].pattern, 20 + i);
        if (cases[i].end_bit) c.s.begin_bit = cases[i].begin_bit, c.s.end_bit = cases[i].end_bit, c.full_bits = 0;
        run_case(h, &c, h->opt.seed ^ (0x4400u + i));
    }
}

/* Large sizes with payloads: 2^20 + k (2^24 + k with --full). */
static void run_large(harness *h, size_t n) {
    const pscan_type large_types[] = {PSCAN_TYPE_U32, PSCAN_TYPE_U64, PSCAN_TYPE_F32, PSCAN_TYPE_I16};
    const size_t vbs[] = {0, 4, 8, 4};
    for (unsigned i = 0; i < 4; i++) {
        one_case c = make_case(type_named(large_types[i]), (int)(i == 2), vbs[i], n, PAT_RANDOM, i);
        run_case(h, &c, h->opt.seed ^ (0x4000u + i));
    }
    one_case c = make_case(type_named(PSCAN_TYPE_U32), 0, 4, n, PAT_FEW, 5);
    run_case(h, &c, h->opt.seed ^ 0x4100u);
}

/* radix_sort.cu's LARGE pass policies: 4-byte keys with 4-byte payloads from 2^25 keys on (384 x 24 keys a tile)
 * at its first size and past it with a partial last tile; 8-byte keys with 4-byte payloads from 2^22 on (384 x
 * 16, the staging buffer in dynamic shared memory) at its first size (run_large's u64 case at 2^24 + k is past
 * it). */
static void run_large_tiles(harness *h, size_t n) {
    one_case c = make_case(type_named(PSCAN_TYPE_U32), 0, 4, (size_t)1 << 25, PAT_RANDOM, 6);
    run_case(h, &c, h->opt.seed ^ 0x4200u);
    c = make_case(type_named(PSCAN_TYPE_F32), 1, 4, n, PAT_RANDOM, 7);
    run_case(h, &c, h->opt.seed ^ 0x4201u);
    c = make_case(type_named(PSCAN_TYPE_I64), 1, 4, (size_t)1 << 22, PAT_RANDOM, 8);
    run_case(h, &c, h->opt.seed ^ 0x4202u);
}

/* radix_sort.cu's upsweep by digit pairs (from 128 MiB of keys): all-equal u32 keys, whose one joint bin wraps its
 * 8-bit counter every 256 keys (the corrections), i16 keys of four values at 2^26 + k (one pair), and u32 keys by
 * bits [5, 29), descending (three passes: one pair at an odd shift, then one pass alone). run_large's u64 keys at
 * 2^24 + k take three pairs, run_large_tiles's 4-byte keys at 2^25 two. */
static void run_joint_upsweep(harness *h, size_t n16) {
    one_case c = make_case(type_named(PSCAN_TYPE_U32), 0, 0, (size_t)1 << 25, PAT_EQUAL, 9);
    run_case(h, &c, h->opt.seed ^ 0x4300u);
    c = make_case(type_named(PSCAN_TYPE_I16), 1, 2, n16, PAT_FEW, 10);
    run_case(h, &c, h->opt.seed ^ 0x4301u);
    c = make_case(type_named(PSCAN_TYPE_U32), 1, 4, ((size_t)1 << 25) + 3, PAT_RANDOM, 11);
    c.s.begin_bit = 5, c.s.end_bit = 29, c.full_bits = 0;
    run_case(h, &c, h->opt.seed ^ 0x4302u);
}

static void run_bad_inputs(harness *h) {
    const size_t n = 16;
    if (!poison_outputs(h, buffer_bytes(h))) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_context *ctx = h->ctx;
    const pscan_sort_desc good = {PSCAN_TYPE_I32, 4, 0, 0, 0, h->opt.algo};
    pscan_sort_desc d;
    char *k = (char *)h->d_keys, *v = (char *)h->d_values, *ko = (char *)h->d_keys_out, *vo = (char *)h->d_values_out;
    size_t bytes = 0;
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(NULL, &good, k, v, n, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(ctx, NULL, k, v, n, ko, vo, NULL, 0));
    d = good, d.type = PSCAN_TYPE_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.value_bytes = 3;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.value_bytes = 16;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.flags = 2;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.algo = PSCAN_ALGO_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    /* bit ranges: empty, reversed, beyond the key (end_bit 0 means all bits, so begin_bit 32 is empty too) */
    d = good, d.begin_bit = 8, d.end_bit = 8;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.begin_bit = 9, d.end_bit = 8;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.end_bit = 33;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    d = good, d.begin_bit = 32;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort_temp_bytes(ctx, &d, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, k, v, 1ull << 60, ko, vo, NULL, 0)); /* before n */
    /* an invalid value wins over a NULL pointer */
    d = good, d.value_bytes = 5;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_sort(ctx, &d, NULL, v, n, NULL, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(ctx, &good, NULL, v, n, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(ctx, &good, k, v, n, NULL, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(ctx, &good, k, NULL, n, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort(ctx, &good, k, v, n, ko, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_sort(ctx, &good, k, v, 1ull << 60, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_sort_temp_bytes(ctx, &good, 1ull << 60, &bytes));
    if (h->addresses) {
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, k, vo, NULL, 0)); /* in place */
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, k + 4 * n - 4, vo, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, ko, v + 8, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, ko, k, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, ko, ko + 4 * n - 1, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_sort(ctx, &good, k, v, n, v, vo, NULL, 0));
    }
    /* an algorithm the backend lacks for sort, at any n */
    d = good, d.algo = h->opt.backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_sort(ctx, &d, k, v, n, ko, vo, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_sort(ctx, &d, NULL, NULL, 0, NULL, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_sort_temp_bytes(ctx, &d, n, &bytes));
    /* temp smaller than the query said */
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_sort_temp_bytes(ctx, &good, 64 * TILE, &bytes));
    EXPECT(h, bytes > 1);
    if (bytes > 1 && h->d_temp)
        EXPECT_STATUS(h, PSCAN_ERROR_TEMP_TOO_SMALL, pscan_sort(ctx, &good, k, v, 64 * TILE, ko, vo, h->d_temp, bytes - 1));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort_temp_bytes(ctx, &good, n, NULL));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort_temp_bytes(NULL, &good, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_sort_temp_bytes(ctx, NULL, n, &bytes));
    /* n == 0: nothing written, data pointers may be NULL */
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_sort(ctx, &good, NULL, NULL, 0, NULL, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_sort_temp_bytes(ctx, &good, 0, &bytes));
    EXPECT(h, outputs_untouched(h));
}

/* run_stress (--stress N): N sorts back to back on one stream, in batches of STRESS_BATCH enqueued with no
 * synchronize between them, each with its own buffers and fresh keys, all on one temp (the context's workspace,
 * or one caller buffer at a random offset, by turns). A table of single calls rarely provokes what this does: a
 * CUDA pass that reads before the kernel in front of it has finished (the passes are programmatic dependent
 * launches), or a status word left in temp by the sort before. Each call draws its key type, direction, payload
 * width, size (log-uniform from 1 to 2^STRESS_MAX_LOG2, one in sixteen just below 2^STRESS_MAX_LOG2 + 64), a bit
 * range one time in four, and random keys or keys below 4096 (passes that move nothing); each result is checked
 * against the reference, payloads (input indices) included. */
#define STRESS_BATCH 4
#define STRESS_MAX_LOG2 22

typedef struct stress_slot {
    one_case c;
    unsigned char *keys; /* the input keys, kept for the reference */
    void *d_keys, *d_values, *d_keys_out, *d_values_out;
} stress_slot;

static void stress_check(harness *h, const stress_slot *sl, long call) {
    const one_case *c = &sl->c;
    const size_t n = c->n, kb = c->s.t->bytes, vb = c->value_bytes;
    char desc[400], what[600];
    describe(c, desc, sizeof desc);
    for (size_t i = 0; i < n; i++) {
        h->h_sort_keys[i] = sort_key(&c->s, load_raw(sl->keys, i, kb));
        h->h_idx[i] = i;
    }
    merge_sort(h->h_idx, h->h_scratch, h->h_sort_keys, n);
    for (int pass = 0; pass < (vb ? 2 : 1); pass++) {
        const size_t bytes = pass ? vb : kb;
        if (pscan_memory_download(h->ctx, h->h_got, pass ? sl->d_values_out : sl->d_keys_out, n * bytes) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
            fail_report(h, "download failed");
            return;
        }
        for (size_t i = 0; i < n; i++) {
            const uint64_t index = h->h_idx[i];
            const int same = pass ? memcmp(h->h_got + i * vb, &index, vb) == 0 /* little-endian: the index's low bytes */
                                  : memcmp(h->h_got + i * kb, sl->keys + index * kb, kb) == 0;
            if (!same) {
                snprintf(what, sizeof what, "stress call %ld: %s: %s[%zu] differs from the stable order's", call, desc,
                         pass ? "values_out" : "keys_out", i);
                fail_report(h, what);
                return;
            }
        }
    }
    h->passed++;
}

static void run_stress(harness *h, long calls) {
    const size_t cap = ((size_t)1 << STRESS_MAX_LOG2) + 64, cap_bytes = cap * 8;
    stress_slot slots[STRESS_BATCH];
    memset(slots, 0, sizeof slots);
    int ok = cap <= h->max_n;
    for (int b = 0; b < STRESS_BATCH && ok; b++) {
        stress_slot *sl = &slots[b];
        ok = (sl->keys = (unsigned char *)malloc(cap_bytes)) != NULL &&
             pscan_memory_alloc(h->ctx, cap_bytes, &sl->d_keys) == PSCAN_SUCCESS &&
             pscan_memory_alloc(h->ctx, cap_bytes, &sl->d_values) == PSCAN_SUCCESS &&
             pscan_memory_alloc(h->ctx, cap_bytes, &sl->d_keys_out) == PSCAN_SUCCESS &&
             pscan_memory_alloc(h->ctx, cap_bytes, &sl->d_values_out) == PSCAN_SUCCESS;
    }
    /* one caller temp for the largest call of any type and payload, plus room for the offsets; junk in it */
    size_t temp_bytes = 0;
    for (size_t ti = 0; ti < TYPE_COUNT && ok; ti++)
        for (int v = 0; v < 5 && ok; v++) {
            const pscan_sort_desc d = {types[ti].type, value_cycle[v], 0u, 0u, 0u, h->opt.algo};
            size_t need = 0;
            ok = pscan_sort_temp_bytes(h->ctx, &d, cap, &need) == PSCAN_SUCCESS;
            if (need > temp_bytes) temp_bytes = need;
        }
    test_rng rng = {test_mix64(h->opt.seed ^ 0x57e55u)};
    void *temp = NULL;
    if (ok && temp_bytes) {
        temp_bytes += 256;
        unsigned char *junk = (unsigned char *)malloc(temp_bytes);
        ok = junk && pscan_memory_alloc(h->ctx, temp_bytes, &temp) == PSCAN_SUCCESS;
        for (size_t i = 0; ok && i < temp_bytes; i++) junk[i] = (unsigned char)test_rng_next(&rng);
        ok = ok && pscan_memory_upload(h->ctx, temp, junk, temp_bytes) == PSCAN_SUCCESS &&
             pscan_context_synchronize(h->ctx) == PSCAN_SUCCESS;
        free(junk);
    }
    if (!ok) fail_report(h, "stress: setup failed (memory)");

    for (long done = 0, round = 0; ok && done < calls; round++) {
        const int count = (int)(calls - done < STRESS_BATCH ? calls - done : STRESS_BATCH);
        const int caller_temp = temp && round % 2 == 0;
        const size_t offset = h->addresses ? (size_t)(test_rng_next(&rng) % 256) : 0;
        for (int b = 0; b < count && ok; b++) {
            stress_slot *sl = &slots[b];
            const type_info *t = &types[test_rng_next(&rng) % TYPE_COUNT];
            const unsigned width = 8 * (unsigned)t->bytes;
            size_t n = test_rng_next(&rng) % 16 == 0
                           ? cap - (size_t)(test_rng_next(&rng) % 64)
                           : 1 + (size_t)(test_rng_next(&rng) >> (63 - (int)(test_rng_next(&rng) % STRESS_MAX_LOG2)));
            if (n > cap) n = cap;
            sl->c = make_case(t, (int)(test_rng_next(&rng) % 2), value_cycle[test_rng_next(&rng) % 5], n,
                              test_rng_next(&rng) % 4 == 0 ? PAT_LOW_BITS : PAT_RANDOM, 0);
            sl->c.offset = 0;
            sl->c.caller_temp = caller_temp;
            sl->c.full_bits = 0;
            if (test_rng_next(&rng) % 4 == 0) {
                sl->c.s.begin_bit = (unsigned)(test_rng_next(&rng) % width);
                sl->c.s.end_bit = sl->c.s.begin_bit + 1 + (unsigned)(test_rng_next(&rng) % (width - sl->c.s.begin_bit));
            }
            const size_t kb = t->bytes, vb = sl->c.value_bytes;
            const uint64_t fixed = test_rng_next(&rng);
            for (size_t i = 0; i < n; i++) {
                const uint64_t key = pattern_key(t, sl->c.pattern, i, n, &rng, fixed), index = i;
                memcpy(sl->keys + i * kb, &key, kb);
                if (vb) memcpy(h->h_values + i * vb, &index, vb);
            }
            ok = pscan_memory_upload(h->ctx, sl->d_keys, sl->keys, n * kb) == PSCAN_SUCCESS &&
                 (!vb || pscan_memory_upload(h->ctx, sl->d_values, h->h_values, n * vb) == PSCAN_SUCCESS) &&
                 pscan_context_synchronize(h->ctx) == PSCAN_SUCCESS; /* h_values is reused by the next slot */
            if (!ok) fail_report(h, "stress: upload failed");
        }
        /* the batch, back to back on one stream and one temp */
        for (int b = 0; b < count && ok; b++) {
            stress_slot *sl = &slots[b];
            const one_case *c = &sl->c;
            const size_t vb = c->value_bytes;
            const pscan_sort_desc d = {c->s.t->type, vb, c->s.descending ? PSCAN_SORT_DESCENDING : 0u, c->s.begin_bit,
                                       c->s.end_bit, h->opt.algo};
            const pscan_status s =
                pscan_sort(h->ctx, &d, sl->d_keys, vb ? sl->d_values : NULL, c->n, sl->d_keys_out,
                           vb ? sl->d_values_out : NULL, caller_temp ? (char *)temp + offset : NULL,
                           caller_temp ? temp_bytes - offset : 0);
            char desc[400];
            describe(c, desc, sizeof desc);
            ok = call_ok(h, desc, s);
        }
        for (int b = 0; b < count && ok; b++) stress_check(h, &slots[b], done + b);
        done += count;
    }
    for (int b = 0; b < STRESS_BATCH; b++) {
        stress_slot *sl = &slots[b];
        void *bufs[] = {sl->d_keys, sl->d_values, sl->d_keys_out, sl->d_values_out};
        for (size_t i = 0; i < 4; i++)
            if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
        free(sl->keys);
    }
    if (temp) pscan_memory_free(h->ctx, temp);
}

static void finish(harness *h) {
    printf("test_sort: %lu passed, %lu failed\n", h->passed, h->failed);
    void *bufs[] = {h->d_keys, h->d_values, h->d_keys_out, h->d_values_out, h->d_temp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
    pscan_context_destroy(h->ctx);
    free(h->h_keys), free(h->h_values), free(h->h_got), free(h->h_ref_keys), free(h->h_ref_values);
    free(h->h_sort_keys), free(h->h_idx), free(h->h_scratch);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_sort", argc, argv, 0x50F7ull, TEST_OPT_FULL | TEST_OPT_SHARD | TEST_OPT_STRESS, &h.opt) != 0)
        return 1;
    int rc = test_open_context("test_sort", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_sort: algo %s, seed %" PRIu64 "%s%s%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "", h.opt.full ? ", full" : "", h.opt.stress ? ", stress" : "");

    test_rng size_rng = {test_mix64(h.opt.seed ^ 0x50F7u)};
    const size_t large_n = (h.opt.full ? (1u << 24) : h.opt.quick ? (1u << 18) : (1u << 20)) + 1 +
                           (size_t)(test_rng_next(&size_rng) % 5000);
    const size_t tiles_n = h.opt.full ? ((size_t)1 << 25) + 1 + (size_t)(test_rng_next(&size_rng) % 9216) : 0;
    h.max_n = 64 * TILE + 3 > large_n ? 64 * TILE + 3 : large_n;
    const size_t skewed_n = ((size_t)1 << 22) + 1 + (size_t)(test_rng_next(&size_rng) % 5000);
    if (skewed_n > h.max_n) h.max_n = skewed_n;
    if (tiles_n > h.max_n) h.max_n = tiles_n;
    const size_t joint_n = h.opt.full ? ((size_t)1 << 26) + 1 + (size_t)(test_rng_next(&size_rng) % 9216) : 0;
    if (joint_n > h.max_n) h.max_n = joint_n;
    if (h.opt.stress && h.max_n < ((size_t)1 << STRESS_MAX_LOG2) + 64) h.max_n = ((size_t)1 << STRESS_MAX_LOG2) + 64;
    const size_t bytes = buffer_bytes(&h);
    h.h_keys = (unsigned char *)malloc(bytes), h.h_values = (unsigned char *)malloc(bytes);
    h.h_got = (unsigned char *)malloc(bytes), h.h_ref_keys = (unsigned char *)malloc(bytes);
    h.h_ref_values = (unsigned char *)malloc(bytes);
    h.h_sort_keys = (uint64_t *)malloc(h.max_n * sizeof(uint64_t));
    h.h_idx = (size_t *)malloc(h.max_n * sizeof(size_t)), h.h_scratch = (size_t *)malloc(h.max_n * sizeof(size_t));
    if (!h.h_keys || !h.h_values || !h.h_got || !h.h_ref_keys || !h.h_ref_values || !h.h_sort_keys || !h.h_idx ||
        !h.h_scratch || pscan_memory_alloc(h.ctx, bytes, &h.d_keys) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_values) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_keys_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, bytes, &h.d_values_out) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_sort: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }
    memset(h.h_keys, 0, bytes), memset(h.h_values, 0, bytes);

    if (h.opt.stress) { /* the calls back to back alone */
        run_stress(&h, h.opt.stress);
        finish(&h);
        return h.failed ? 1 : 0;
    }
    run_table(&h);
    if (TEST_IN_SHARD(&h.opt, 0)) run_bad_inputs(&h);
    run_bits(&h);
    run_patterns(&h);
    printf("test_sort: large size %zu\n", large_n);
    if (TEST_IN_SHARD(&h.opt, 1)) run_large(&h, large_n);
    if (TEST_IN_SHARD(&h.opt, 2)) run_skewed(&h, skewed_n);
    if (tiles_n && TEST_IN_SHARD(&h.opt, 2)) run_large_tiles(&h, tiles_n);
    if (joint_n && TEST_IN_SHARD(&h.opt, 3)) run_joint_upsweep(&h, joint_n);
    finish(&h);
    return h.failed ? 1 : 0;
}
