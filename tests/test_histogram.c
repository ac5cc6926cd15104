/*
 * test_histogram.c - the histogram test table, read as a specification of pscan_histogram().
 *
 *   test_histogram --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T] [--shard K/N]
 *
 * --shard K/N runs the types of index K mod N only, and of the untyped parts (bad inputs 0, examples 1, wraps 2)
 * those of index K mod N: the sanitizers split the table so (scripts/gpu-check.sh). Case seeds do not change.
 *
 * For one backend and one algorithm, every result is checked against a reference written here (never the
 * library's): integer bins from 128-bit arithmetic (floor((x - lower) * bins / (upper - lower)) with a true
 * division), float bins from pscan.h's formula, given edges by a lower-bound search of the upper edges.
 *  - run_examples(): pscan.h's worked examples, [0, 10) in 3 bins, u8 [0, 256) in 256 bins (bin v = v).
 *  - run_table(): every type x {evenly spaced, edges} x bins {1, 2, 255, 256, 257, 4096, 65536} x {u32, u64}
 *    counts, sizes cycling through 0, 1, 1000 and around the CUDA tile (16 KiB of samples: tile-1, tile,
 *    tile+1), data cycling through uniform (with samples out of range, on bin boundaries and, for floats,
 *    NaN), all-equal, all out of range; samples at their allocation's start or one element in; counts at
 *    its start or one count in; temp from the workspace or a caller buffer at +1 byte; every fourth case
 *    accumulates onto random counts instead of overwriting.
 *  - run_large(): every type at 64 tiles + 3 and one random size up to 2^22 (2^20 with --quick), uniform and
 *    all-equal (one bin gets every sample: the contention case), 256 and 65536 bins.
 *  - run_wraps(): 2^25 u16 samples in 65536 bins, nearly all in two bins, so that a block counts past 16 bits
 *    in both halves of one of the CUDA kernel's packed counters (u32 and u64 counts, accumulating near 2^32).
 *  - run_bad_inputs(): each bad argument returns its exact status and leaves counts as they were.
 * After each call: the status, every count, and that the counts' neighbours still hold poison.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_histogram: P passed, F failed".
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
#define TILE_BYTES 16384u /* the CUDA histogram tile: 256 threads x 4 vectors of 16 bytes (src/cuda/histogram.cu) */
#define MAX_BINS 65536u

__extension__ typedef __int128 i128;

static size_t tile_items(const type_info *t) { return TILE_BYTES / t->bytes; }

/* ---- values of any type as raw bits ---------------------------------------------------------------------- */

/* An integer sample as a 128-bit number (sign-extended or not). */
static i128 int_value(const type_info *t, uint64_t raw) {
    const unsigned shift = 64 - 8 * (unsigned)t->bytes;
    if (t->is_signed) return (i128)((int64_t)(raw << shift) >> shift);
    return (i128)(t->bytes == 8 ? raw : raw & ((1ull << (8 * t->bytes)) - 1));
}
static uint64_t int_raw(const type_info *t, i128 v) {
    const uint64_t r = (uint64_t)v;
    return t->bytes == 8 ? r : r & ((1ull << (8 * t->bytes)) - 1);
}
static i128 int_lowest(const type_info *t) {
    return t->is_signed ? -((i128)1 << (8 * t->bytes - 1)) : 0;
}
static i128 int_highest(const type_info *t) {
    return t->is_signed ? ((i128)1 << (8 * t->bytes - 1)) - 1 : ((i128)1 << (8 * t->bytes)) - 1;
}

/* Evenly spaced integer bounds are int64_t (signed samples) or uint64_t (unsigned), held here as their 64 bits;
 * float bounds are samples. */
static i128 bound_value(const type_info *t, uint64_t bits) {
    return t->is_signed ? (i128)(int64_t)bits : (i128)bits;
}

/* ---- the reference --------------------------------------------------------------------------------------- */

#define NO_BIN UINT32_MAX

/* Evenly spaced: the contract of pscan.h, in 128-bit integers or in the float type's own arithmetic. */
static uint32_t reference_even(const type_info *t, uint32_t bins, uint64_t lo_raw, uint64_t hi_raw, uint64_t raw) {
    if (!t->is_float) {
        const i128 x = int_value(t, raw), lo = bound_value(t, lo_raw), hi = bound_value(t, hi_raw);
        if (x < lo || x >= hi) return NO_BIN;
        return (uint32_t)((x - lo) * bins / (hi - lo));
    }
    uint32_t b;
    if (t->bytes == 4) {
        const float x = (float)raw_float(t, raw), lo = (float)raw_float(t, lo_raw), hi = (float)raw_float(t, hi_raw);
        if (!(x >= lo && x < hi)) return NO_BIN;
        const float range = hi - lo, scale = (float)bins / range, pos = (x - lo) * scale;
        b = (uint32_t)pos;
    } else {
        const double x = raw_float(t, raw), lo = raw_float(t, lo_raw), hi = raw_float(t, hi_raw);
        if (!(x >= lo && x < hi)) return NO_BIN;
        const double range = hi - lo, scale = (double)bins / range, pos = (x - lo) * scale;
        b = (uint32_t)pos;
    }
    return b < bins ? b : bins - 1;
}

/* x < y in the type's order (false when either is NaN). */
static int less(const type_info *t, uint64_t x, uint64_t y) {
    if (t->is_float) return raw_float(t, x) < raw_float(t, y);
    return int_value(t, x) < int_value(t, y);
}

/* Given edges: the first i whose upper edge edges[i + 1] is above x, once edges[0] <= x < edges[bins]. */
static uint32_t reference_edges(const type_info *t, uint32_t bins, const unsigned char *edges, uint64_t raw) {
    const uint64_t first = load_raw(edges, 0, t->bytes), last = load_raw(edges, bins, t->bytes);
    if (less(t, raw, first) || !less(t, raw, last)) return NO_BIN;
    if (t->is_float && isnan(raw_float(t, raw))) return NO_BIN;
    uint32_t lo = 0, hi = bins - 1; /* the answer is in [lo, hi] */
    while (lo < hi) {
        const uint32_t mid = lo + (hi - lo) / 2;
        if (less(t, raw, load_raw(edges, mid + 1, t->bytes)))
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

/* ---- the run ------------------------------------------------------------------------------------------- */

typedef test_options options; /* test_common.h */

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;
    size_t max_n;
    unsigned char *h_samples, *h_edges, *h_got, *h_start;
    uint64_t *h_ref;
    void *d_samples, *d_edges, *d_counts, *d_temp;
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

#define COUNTS_BYTES ((MAX_BINS + 4) * 8) /* room for one count of offset and guards after */

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)
TEST_HARNESS_TEMP(harness)

enum { DATA_UNIFORM, DATA_EQUAL, DATA_OUTSIDE, DATA_COUNT };
static const char *const data_names[] = {"uniform", "all-equal", "all-outside"};

typedef struct one_case {
    const type_info *t;
    int edges;        /* 0: evenly spaced; 1: given edges */
    uint32_t bins;
    size_t count_bytes;
    size_t n;
    int data;
    int offset;       /* samples 0 or 1 element in */
    int count_offset; /* counts 0 or 1 count in */
    int caller_temp;
    int accumulate;
} one_case;

static void describe(const one_case *c, const char *bounds, char *text, size_t size) {
    snprintf(text, size, "%s %s bins=%u counts=u%zu n=%zu data=%s offset=%d counts+%d temp=%s%s %s", c->t->name,
             c->edges ? "edges" : "even", c->bins, 8 * c->count_bytes, c->n, data_names[c->data], c->offset,
             c->count_offset, c->caller_temp ? "caller+1" : "workspace", c->accumulate ? " accumulate" : "", bounds);
}

/* Bounds for evenly spaced bins: a random sub-range of the type, sometimes the whole type or [0, 256). */
static void pick_bounds(test_rng *rng, const type_info *t, uint64_t *lo, uint64_t *hi) {
    const unsigned kind = (unsigned)(test_rng_next(rng) % 8);
    if (t->is_float) {
        double a = (double)(int64_t)(test_rng_next(rng) % 2001) - 1000.0 + 0.25;
        double w = kind == 0 ? 1e-3 : kind == 1 ? 1e6 : 1.0 + (double)(test_rng_next(rng) % 5000) * 0.5;
        *lo = float_raw(t, a);
        *hi = float_raw(t, a + w);
        return;
    }
    const i128 L = int_lowest(t), H = int_highest(t);
    const i128 BL = t->is_signed ? -((i128)1 << 63) : 0, BH = t->is_signed ? ((i128)1 << 63) - 1 : ((i128)1 << 64) - 1;
    i128 a, b;
    if (kind == 0) {
        a = L, b = H + 1 <= BH ? H + 1 : BH; /* the whole type (u64, i64: but the largest value) */
    } else if (kind == 1) {
        a = 0, b = 256; /* a shift for 256 bins; u8 samples over their whole range */
    } else if (kind == 2) {
        /* bounds beyond the type's values: the 64-bit forms for small types */
        a = L - (i128)(test_rng_next(rng) % 1000) * (t->is_signed || L > 0);
        b = H + 1 + (i128)(test_rng_next(rng) % 100000);
        if (a < BL) a = BL;
        if (b > BH) b = BH;
    } else {
        const uint64_t span = t->bytes == 8 ? test_rng_next(rng) >> (test_rng_next(rng) % 64)
                                            : test_rng_next(rng) % (uint64_t)(H - L);
        a = L + (i128)(test_rng_next(rng) % (uint64_t)((H - L) / 2 + 1));
        b = a + (i128)span + 1;
        if (b > H) b = H;
        if (a >= b) a = b - 1;
    }
    *lo = (uint64_t)a;
    *hi = (uint64_t)b;
}

/* A sample: mostly inside [lo, hi), some on bin boundaries, some outside, some NaN (floats). */
static uint64_t random_sample(test_rng *rng, const type_info *t, uint32_t bins, uint64_t lo, uint64_t hi) {
    const unsigned kind = (unsigned)(test_rng_next(rng) % 16);
    if (t->is_float) {
        const double a = raw_float(t, lo), b = raw_float(t, hi);
        if (kind == 0) return float_raw(t, NAN);
        if (kind == 1) return float_raw(t, a - (b - a) * 0.1 * test_rng_unit(rng));
        if (kind == 2) return kind == 2 && test_rng_next(rng) % 2 ? hi : lo;
        if (kind == 3) return float_raw(t, a + (b - a) * (double)(test_rng_next(rng) % (bins + 1)) / bins);
        return float_raw(t, a + (b - a) * 1.1 * test_rng_unit(rng));
    }
    const i128 L = int_lowest(t), H = int_highest(t), a = bound_value(t, lo), b = bound_value(t, hi);
    i128 x;
    if (kind == 0) {
        x = test_rng_next(rng) % 2 ? b : a - 1;
    } else if (kind <= 3) {
        /* the first sample of a random bin, or the one before it */
        const i128 k = (i128)(test_rng_next(rng) % (bins + 1));
        x = a + ((b - a) * k + bins - 1) / bins - (i128)(test_rng_next(rng) % 2);
    } else if (kind == 4) {
        x = L + (i128)(test_rng_next(rng) % (uint64_t)(H - L));
    } else {
        x = a + (i128)(test_rng_next(rng) % (uint64_t)(b - a > (i128)UINT64_MAX ? UINT64_MAX : b - a));
    }
    if (x < L) x = L;
    if (x > H) x = H;
    return int_raw(t, x);
}

/* Ascending edges: steps of random size from a random start, with repeated edges now and then. */
static void make_edges(test_rng *rng, const type_info *t, uint32_t bins, unsigned char *edges) {
    if (t->is_float) {
        double e = -(double)(test_rng_next(rng) % 1000);
        for (uint32_t i = 0; i <= bins; i++) {
            store_raw(edges, i, t->bytes, float_raw(t, e));
            e += test_rng_next(rng) % 16 == 0 ? 0.0 : 0.25 * (double)(1 + test_rng_next(rng) % 8);
            if (t->bytes == 4) e = (float)e;
        }
        return;
    }
    const i128 L = int_lowest(t), H = int_highest(t);
    const i128 room = H - L;
    /* an average step that spreads the edges over part of the type's range */
    const i128 step = room / ((i128)bins * 2) > 0 ? room / ((i128)bins * 2) : 0;
    i128 e = L + (room > 4 * (i128)bins ? (i128)(test_rng_next(rng) % (uint64_t)(room / 4)) : 0);
    for (uint32_t i = 0; i <= bins; i++) {
        store_raw(edges, i, t->bytes, int_raw(t, e));
        const i128 s = step > 0 ? (i128)(test_rng_next(rng) % (uint64_t)(2 * step + 1)) : (test_rng_next(rng) % 4 != 0);
        if (e + s <= H) e += s;
    }
}

static int poison_counts(harness *h) {
    memset(h->h_got, TEST_POISON, COUNTS_BYTES);
    return pscan_memory_upload(h->ctx, h->d_counts, h->h_got, COUNTS_BYTES) == PSCAN_SUCCESS;
}

static int counts_untouched(harness *h) {
    if (pscan_memory_download(h->ctx, h->h_got, h->d_counts, COUNTS_BYTES) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS)
        return 0;
    for (size_t j = 0; j < COUNTS_BYTES; j++)
        if (h->h_got[j] != TEST_POISON) return 0;
    return 1;
}

static void run_case(harness *h, const one_case *c, uint64_t case_seed) {
    const type_info *t = c->t;
    const size_t n = c->n, sb = t->bytes, cb = c->count_bytes, off = (size_t)c->offset;
    const uint32_t bins = c->bins;
    test_rng rng = {test_mix64(case_seed)};

    /* ---- bins, samples and the reference ---- */
    uint64_t lo = 0, hi = 0;
    if (c->edges) {
        make_edges(&rng, t, bins, h->h_edges);
        lo = load_raw(h->h_edges, 0, sb);
        hi = load_raw(h->h_edges, bins, sb);
        if (!less(t, lo, hi)) hi = lo; /* all edges equal: nothing can count */
        if (!t->is_float) lo = (uint64_t)int_value(t, lo), hi = (uint64_t)int_value(t, hi); /* as bounds */
    } else {
        pick_bounds(&rng, t, &lo, &hi);
    }
    char bounds[120], desc[400];
    if (t->is_float)
        snprintf(bounds, sizeof bounds, "[%.17g, %.17g)", raw_float(t, lo), raw_float(t, hi));
    else
        snprintf(bounds, sizeof bounds, t->is_signed ? "[%lld, %lld)" : "[%llu, %llu)", (long long)lo, (long long)hi);
    describe(c, bounds, desc, sizeof desc);

    /* a sample outside the bounds when the type has one (below lower, or at or above upper) */
    const i128 lo_v = bound_value(t, lo), hi_v = bound_value(t, hi);
    const int has_below = lo_v > int_lowest(t), has_above = hi_v <= int_highest(t);
    const uint64_t equal = lo == hi ? lo : random_sample(&rng, t, bins, lo, hi);
    for (size_t i = 0; i < n; i++) {
        uint64_t x;
        switch (c->data) {
        case DATA_EQUAL: x = equal; break;
        case DATA_OUTSIDE:
            if (t->is_float)
                x = i % 3 == 0 ? float_raw(t, NAN) : i % 2 ? hi : float_raw(t, raw_float(t, lo) - 1.0);
            else if ((i % 2 && has_above) || !has_below)
                x = has_above ? int_raw(t, hi_v) : int_raw(t, lo_v); /* no outside value: lower itself */
            else
                x = int_raw(t, lo_v - 1);
            break;
        default: x = lo == hi ? lo : random_sample(&rng, t, bins, lo, hi);
        }
        store_raw(h->h_samples, off + i, sb, x);
    }
    /* start counts: random when accumulating, else irrelevant (poisoned) */
    memset(h->h_start, TEST_POISON, COUNTS_BYTES);
    for (uint32_t b = 0; b < bins; b++) {
        const uint64_t v = c->accumulate ? test_rng_next(&rng) >> (test_rng_next(&rng) % 64) : 0;
        h->h_ref[b] = v;
        if (c->accumulate) store_raw(h->h_start, (size_t)c->count_offset + b, cb, v);
    }
    for (size_t i = 0; i < n; i++) {
        const uint64_t x = load_raw(h->h_samples, off + i, sb);
        const uint32_t b = c->edges ? reference_edges(t, bins, h->h_edges, x) : reference_even(t, bins, lo, hi, x);
        if (b != NO_BIN) h->h_ref[b]++;
    }

    /* ---- upload, call ---- */
    if ((n && pscan_memory_upload(h->ctx, h->d_samples, h->h_samples, (off + n) * sb) != PSCAN_SUCCESS) ||
        (c->edges && pscan_memory_upload(h->ctx, h->d_edges, h->h_edges, ((size_t)bins + 1) * sb) != PSCAN_SUCCESS) ||
        pscan_memory_upload(h->ctx, h->d_counts, h->h_start, COUNTS_BYTES) != PSCAN_SUCCESS) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_histogram_desc d = {t->type, cb == 4 ? PSCAN_TYPE_U32 : PSCAN_TYPE_U64, bins, &lo, &hi, NULL,
                              c->accumulate ? PSCAN_HISTOGRAM_ACCUMULATE : 0u, h->opt.algo};
    if (c->edges) d.edges = h->d_edges;
    void *temp = NULL;
    size_t temp_bytes = 0, need = 0;
    if (c->caller_temp) {
        const pscan_status ts = pscan_histogram_temp_bytes(h->ctx, &d, n, &need);
        if (!case_temp(h, desc, "pscan_histogram_temp_bytes", ts, need, &temp, &temp_bytes)) return;
    }
    void *counts = (char *)h->d_counts + (size_t)c->count_offset * cb;
    const void *samples = n ? (const char *)h->d_samples + off * sb : NULL;
    pscan_status s = pscan_histogram(h->ctx, &d, samples, n, counts, temp, temp_bytes);
    if (!call_ok(h, desc, s)) return;

    /* ---- every count, and the poison around them ---- */
    if (pscan_memory_download(h->ctx, h->h_got, h->d_counts, COUNTS_BYTES) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        return;
    }
    const uint64_t mask = cb == 8 ? ~0ull : 0xFFFFFFFFull;
    for (uint32_t b = 0; b < bins; b++) {
        const uint64_t got = load_raw(h->h_got, (size_t)c->count_offset + b, cb);
        if (got != (h->h_ref[b] & mask)) {
            char what[700];
            snprintf(what, sizeof what, "%s: counts[%u] = %" PRIu64 ", expected %" PRIu64, desc, b, got,
                     h->h_ref[b] & mask);
            fail_report(h, what);
            return;
        }
    }
    const size_t begin = (size_t)c->count_offset * cb, end = begin + (size_t)bins * cb;
    for (size_t j = 0; j < COUNTS_BYTES; j++) {
        if ((j < begin || j >= end) && h->h_got[j] != TEST_POISON) {
            char what[600];
            snprintf(what, sizeof what, "%s: byte %zu outside the counts written", desc, j);
            fail_report(h, what);
            return;
        }
    }
    h->passed++;
}

static const uint32_t table_bins[] = {1, 2, 255, 256, 257, 4096, 65536};
#define TABLE_BINS_COUNT (sizeof table_bins / sizeof table_bins[0])

/* Every type x form x bins x count size; sizes, data, offsets and temp cycle with the case index. */
static void run_table(harness *h) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
        const size_t tile = tile_items(&types[ti]);
        const size_t sizes[] = {0, 1, 1000, tile - 1, tile, tile + 1};
        for (int edges = 0; edges < 2; edges++)
            for (size_t bi = 0; bi < TABLE_BINS_COUNT; bi++)
                for (size_t cbi = 0; cbi < 2; cbi++)
                    for (int data = 0; data < DATA_COUNT; data++, index++) {
                        one_case c = {&types[ti], edges, table_bins[bi], cbi ? 8u : 4u,
                                      sizes[(index + bi) % 6], data, (int)(index % 2), (int)(index / 2 % 2),
                                      (int)(index / 3 % 2), index % 4 == 3};
                        if (data != DATA_UNIFORM && c.n == 0) c.n = 1000;
                        if (!h->addresses) c.offset = c.count_offset = 0; /* OpenCL: a cl_mem from offset 0 */
                        if (TEST_IN_SHARD(&h->opt, ti)) run_case(h, &c, h->opt.seed ^ (0x1000u + index));
                    }
    }
}

/* Many tiles: uniform and all-equal data at 256 and 65536 bins, both forms. */
static void run_large(harness *h, size_t random_n) {
    unsigned index = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
        const size_t sizes[] = {64 * tile_items(&types[ti]) + 3, random_n};
        for (size_t si = 0; si < 2; si++)
            for (int data = DATA_UNIFORM; data <= DATA_EQUAL; data++)
                for (int edges = 0; edges < 2; edges++, index++) {
                    one_case c = {&types[ti], edges, index % 2 ? 65536u : 256u, index / 2 % 2 ? 8u : 4u,
                                  sizes[si], data, (int)(index / 4 % 2), 0, (int)(index / 3 % 2), index % 5 == 4};
                    if (c.n > h->max_n) c.n = h->max_n;
                    if (!h->addresses) c.offset = 0;
                    if (TEST_IN_SHARD(&h->opt, ti)) run_case(h, &c, h->opt.seed ^ (0x2000u + index));
                }
    }
}

/* Counts past 16 bits in one block: u16 samples in 65536 bins, 2^25 of them, nearly all in bins 5 and 32773 (on
 * CUDA the low and high halves of one shared-memory word, whose wraps and carries the kernel corrects in the
 * output; with up to 256 blocks each still counts over 65535 of each), u32 and u64 counts, overwritten and
 * accumulated onto counts near their wrap. Bin v holds value v, so the reference is a tally. */
static void run_wraps(harness *h) {
    const size_t n = (size_t)1 << 25;
    uint16_t *x = (uint16_t *)malloc(n * sizeof *x);
    uint64_t *want = (uint64_t *)calloc(MAX_BINS, sizeof *want), *start = (uint64_t *)malloc(MAX_BINS * 8);
    void *d_x = NULL;
    if (!x || !want || !start || pscan_memory_alloc(h->ctx, n * sizeof *x, &d_x) != PSCAN_SUCCESS) {
        fail_report(h, "wraps: out of memory");
        free(x), free(want), free(start);
        return;
    }
    test_rng rng = {test_mix64(h->opt.seed ^ 0x3a3au)};
    for (size_t i = 0; i < n; i++) {
        const uint64_t r = test_rng_next(&rng);
        x[i] = (uint16_t)(r % 64 == 0 ? r >> 48 : r % 2 ? 5u : 32773u);
        want[x[i]]++;
    }
    const uint64_t lo = 0, hi = 65536;
    int ok = pscan_memory_upload(h->ctx, d_x, x, n * sizeof *x) == PSCAN_SUCCESS;
    for (int k = 0; k < 4 && ok; k++) {
        const size_t cb = k % 2 ? 8 : 4;
        const int accumulate = k >= 2;
        memset(h->h_start, TEST_POISON, COUNTS_BYTES);
        for (uint32_t b = 0; b < MAX_BINS; b++) {
            start[b] = accumulate ? (cb == 4 ? 0xFFFFFF00u : 0xFFFFFFFFFFFFFF00ull) + test_rng_next(&rng) % 512 : 0;
            if (accumulate) store_raw(h->h_start, b, cb, start[b]);
        }
        pscan_histogram_desc d = {PSCAN_TYPE_U16, cb == 4 ? PSCAN_TYPE_U32 : PSCAN_TYPE_U64, MAX_BINS, &lo, &hi,
                                  NULL, accumulate ? PSCAN_HISTOGRAM_ACCUMULATE : 0u, h->opt.algo};
        if (pscan_memory_upload(h->ctx, h->d_counts, h->h_start, COUNTS_BYTES) != PSCAN_SUCCESS ||
            pscan_histogram(h->ctx, &d, d_x, n, h->d_counts, NULL, 0) != PSCAN_SUCCESS ||
            pscan_memory_download(h->ctx, h->h_got, h->d_counts, COUNTS_BYTES) != PSCAN_SUCCESS ||
            pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
            fail_report(h, "wraps: a call failed");
            ok = 0;
            break;
        }
        const uint64_t mask = cb == 8 ? ~0ull : 0xFFFFFFFFull;
        uint32_t b = 0;
        while (b < MAX_BINS && load_raw(h->h_got, b, cb) == ((start[b] + want[b]) & mask)) b++;
        if (b < MAX_BINS) {
            char what[300];
            snprintf(what, sizeof what, "wraps: u16 65536 bins n=%zu counts=u%zu%s: counts[%u] = %" PRIu64
                     ", expected %" PRIu64, n, 8 * cb, accumulate ? " accumulate" : "", b, load_raw(h->h_got, b, cb),
                     (start[b] + want[b]) & mask);
            fail_report(h, what);
        } else {
            h->passed++;
        }
    }
    pscan_memory_free(h->ctx, d_x);
    free(x), free(want), free(start);
}

/* Expects counts (u32) to equal want after a call on host-side samples. */
static void expect_counts_u32(harness *h, const pscan_histogram_desc *d, const void *samples, size_t n,
                              size_t sample_bytes, const uint32_t *want, const char *what) {
    if (pscan_memory_upload(h->ctx, h->d_samples, samples, n * sample_bytes) != PSCAN_SUCCESS || !poison_counts(h)) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_status s = pscan_histogram(h->ctx, d, h->d_samples, n, h->d_counts, NULL, 0);
    uint32_t got[256];
    if (s != PSCAN_SUCCESS || pscan_memory_download(h->ctx, got, h->d_counts, d->bins * 4) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        char text[300];
        snprintf(text, sizeof text, "%s: %s", what, pscan_status_name(s));
        fail_report(h, text);
        return;
    }
    for (uint32_t b = 0; b < d->bins; b++) {
        if (got[b] != want[b]) {
            char text[300];
            snprintf(text, sizeof text, "%s: counts[%u] = %u, expected %u", what, b, got[b], want[b]);
            fail_report(h, text);
            return;
        }
    }
    h->passed++;
}

/* pscan.h's worked examples and the exactness promises of the evenly spaced integer bins. */
static void run_examples(harness *h) {
    const int32_t in[8] = {3, 1, 7, 0, 4, 1, 6, 3};
    const int64_t lo = 0, hi = 8;
    const int32_t edges[5] = {0, 1, 2, 4, 8};
    pscan_histogram_desc d = {PSCAN_TYPE_I32, PSCAN_TYPE_U32, 4, &lo, &hi, NULL, 0, h->opt.algo};
    const uint32_t even_want[4] = {3, 2, 1, 2}, edges_want[4] = {1, 2, 2, 3};
    expect_counts_u32(h, &d, in, 8, 4, even_want, "example, evenly spaced");
    if (pscan_memory_upload(h->ctx, h->d_edges, edges, sizeof edges) != PSCAN_SUCCESS) return;
    d.edges = h->d_edges;
    expect_counts_u32(h, &d, in, 8, 4, edges_want, "example, edges");

    /* [2, 7) in 5 bins: 0, 1, 1 and 7 outside */
    const int64_t two = 2, seven = 7;
    const uint32_t narrow_want[5] = {0, 2, 1, 0, 1};
    pscan_histogram_desc d5 = {PSCAN_TYPE_I32, PSCAN_TYPE_U32, 5, &two, &seven, NULL, 0, h->opt.algo};
    expect_counts_u32(h, &d5, in, 8, 4, narrow_want, "example, [2, 7) in 5 bins");

    /* [0, 10) in 3 bins: {0..3} {4..6} {7..9} */
    const int64_t ten = 10;
    const int32_t tens[10] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
    const uint32_t thirds[3] = {4, 3, 3};
    pscan_histogram_desc d3 = {PSCAN_TYPE_I32, PSCAN_TYPE_U32, 3, &lo, &ten, NULL, 0, h->opt.algo};
    expect_counts_u32(h, &d3, tens, 10, 4, thirds, "[0, 10) in 3 bins");

    /* u8 over [0, 256) in 256 bins: sample v in bin v; in one bin: every sample there */
    uint8_t bytes[256];
    const uint64_t lo8 = 0, hi8 = 256;
    uint32_t ones[256];
    for (int i = 0; i < 256; i++) bytes[i] = (uint8_t)i, ones[i] = 1;
    pscan_histogram_desc d8 = {PSCAN_TYPE_U8, PSCAN_TYPE_U32, 256, &lo8, &hi8, NULL, 0, h->opt.algo};
    expect_counts_u32(h, &d8, bytes, 256, 1, ones, "u8 [0, 256) in 256 bins");
    const uint32_t all[1] = {256};
    d8.bins = 1;
    expect_counts_u32(h, &d8, bytes, 256, 1, all, "u8 [0, 256) in 1 bin");
    /* i8 over [-128, 128) in 2 bins: the negative ones, then the others */
    const int64_t lo_i8 = -128, hi_i8 = 128;
    const uint32_t halves[2] = {128, 128};
    pscan_histogram_desc di8 = {PSCAN_TYPE_I8, PSCAN_TYPE_U32, 2, &lo_i8, &hi_i8, NULL, 0, h->opt.algo};
    expect_counts_u32(h, &di8, bytes, 256, 1, halves, "i8 [-128, 128) in 2 bins");
}

/* Each bad argument: its exact status, and counts left as they were. */
static void run_bad_inputs(harness *h) {
    const size_t n = 16;
    if (!poison_counts(h)) {
        fail_report(h, "upload failed");
        return;
    }
    pscan_context *ctx = h->ctx;
    const int64_t lo = 0, hi = 100, lo_eq = 100;
    const pscan_histogram_desc good = {PSCAN_TYPE_I32, PSCAN_TYPE_U32, 16, &lo, &hi, NULL, 0, h->opt.algo};
    pscan_histogram_desc d;
    char *s = (char *)h->d_samples, *c = (char *)h->d_counts;
    size_t bytes = 0;

    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(NULL, &good, s, n, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, NULL, s, n, c, NULL, 0));
    d = good, d.type = PSCAN_TYPE_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.count_type = PSCAN_TYPE_I32;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.count_type = PSCAN_TYPE_F64;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.bins = 0;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.bins = PSCAN_HISTOGRAM_MAX_BINS + 1;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.flags = 2;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.algo = PSCAN_ALGO_COUNT;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    /* an invalid enum wins over NULL bounds and NULL buffers */
    d = good, d.bins = 0, d.lower = NULL;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, NULL, n, NULL, NULL, 0));
    d = good, d.lower = NULL;
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.upper = NULL;
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    /* lower >= upper */
    d = good, d.lower = &lo_eq;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    d = good, d.lower = &hi, d.upper = &lo;
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram_temp_bytes(ctx, &d, n, &bytes));
    /* float bounds: NaN, infinite, a range that overflows, a scale that overflows */
    const float f0 = 0.0f, f1 = 1.0f, fnan = NAN, finf = INFINITY, fmax = 3.0e38f, fmin = -3.0e38f;
    const float tiny = 1e-45f;
    const float *bad_pairs[][2] = {{&fnan, &f1}, {&f0, &fnan}, {&f0, &finf}, {&fmin, &fmax}, {&f0, &tiny}, {&f1, &f1}};
    for (size_t i = 0; i < sizeof bad_pairs / sizeof bad_pairs[0]; i++) {
        d = good, d.type = PSCAN_TYPE_F32, d.lower = bad_pairs[i][0], d.upper = bad_pairs[i][1], d.bins = 65536;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    }
    /* n too large for any buffer */
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_histogram(ctx, &good, s, 1ull << 60, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_histogram_temp_bytes(ctx, &good, 1ull << 60, &bytes));
    /* NULL buffers */
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, &good, s, n, NULL, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, &good, NULL, n, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram(ctx, &good, NULL, 0, NULL, NULL, 0));
    if (h->addresses) {
        /* counts misaligned for its count size */
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &good, s, n, c + 2, NULL, 0));
        d = good, d.count_type = PSCAN_TYPE_U64;
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_histogram(ctx, &d, s, n, c + 4, NULL, 0));
        /* counts overlapping the samples or the edges */
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_histogram(ctx, &good, s, n, s + 4 * n - 4, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_histogram(ctx, &good, s + 60, n, s, NULL, 0));
        d = good, d.edges = c + 16 * 4 - 4;
        EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    }
    /* an algorithm the backend lacks */
    d = good, d.algo = h->opt.backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_DECOUPLED_LOOKBACK : PSCAN_ALGO_SERIAL;
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_histogram(ctx, &d, s, n, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_histogram(ctx, &d, NULL, 0, c, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_histogram_temp_bytes(ctx, &d, n, &bytes));
    /* temp smaller than the query said (when the algorithm needs any) */
    d = good, d.bins = 65536;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_histogram_temp_bytes(ctx, &d, 1000, &bytes));
    if (bytes > 1) /* the edges buffer stands in for temp: a refused call never touches it */
        EXPECT_STATUS(h, PSCAN_ERROR_TEMP_TOO_SMALL, pscan_histogram(ctx, &d, s, 1000, c, h->d_edges, bytes - 1));
    EXPECT(h, counts_untouched(h));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram_temp_bytes(ctx, &good, n, NULL));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram_temp_bytes(NULL, &good, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_histogram_temp_bytes(ctx, NULL, n, &bytes));

    /* n == 0: counts are zeroed (or, accumulating, left as they were); samples may be NULL */
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_histogram(ctx, &good, NULL, 0, c, NULL, 0));
    uint32_t got[17];
    pscan_memory_download(ctx, got, c, sizeof got);
    pscan_context_synchronize(ctx);
    int zeros = 1;
    for (int b = 0; b < 16; b++) zeros &= got[b] == 0;
    EXPECT(h, zeros && got[16] == 0xA5A5A5A5u);
    d = good, d.flags = PSCAN_HISTOGRAM_ACCUMULATE;
    if (!poison_counts(h)) return;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_histogram(ctx, &d, NULL, 0, c, NULL, 0));
    EXPECT(h, counts_untouched(h));
}

static void finish(harness *h) {
    printf("test_histogram: %lu passed, %lu failed\n", h->passed, h->failed);
    void *bufs[] = {h->d_samples, h->d_edges, h->d_counts, h->d_temp};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++)
        if (bufs[i]) pscan_memory_free(h->ctx, bufs[i]);
    pscan_context_destroy(h->ctx);
    free(h->h_samples), free(h->h_edges), free(h->h_got), free(h->h_start), free(h->h_ref);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_histogram", argc, argv, 0x4157ull, TEST_OPT_SHARD, &h.opt) != 0) return 1;
    int rc = test_open_context("test_histogram", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_histogram: algo %s, seed %" PRIu64 "%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "");

    test_rng size_rng = {test_mix64(h.opt.seed ^ 0x4157u)};
    const size_t random_n = 1 + (size_t)(test_rng_next(&size_rng) % (h.opt.quick ? (1u << 20) : (1u << 22)));
    h.max_n = 64 * TILE_BYTES + 3 > random_n ? 64 * TILE_BYTES + 3 : random_n;
    const size_t sample_bytes = (h.max_n + 2) * 8;
    h.h_samples = (unsigned char *)calloc(sample_bytes, 1);
    h.h_edges = (unsigned char *)malloc((MAX_BINS + 1) * 8);
    h.h_got = (unsigned char *)malloc(COUNTS_BYTES);
    h.h_start = (unsigned char *)malloc(COUNTS_BYTES);
    h.h_ref = (uint64_t *)malloc(MAX_BINS * sizeof(uint64_t));
    if (!h.h_samples || !h.h_edges || !h.h_got || !h.h_start || !h.h_ref ||
        pscan_memory_alloc(h.ctx, sample_bytes, &h.d_samples) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, (MAX_BINS + 1) * 8, &h.d_edges) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, COUNTS_BYTES, &h.d_counts) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_histogram: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }

    if (TEST_IN_SHARD(&h.opt, 0)) run_bad_inputs(&h);
    if (TEST_IN_SHARD(&h.opt, 1)) run_examples(&h);
    run_table(&h);
    printf("test_histogram: random size %zu\n", random_n);
    run_large(&h, random_n);
    if (TEST_IN_SHARD(&h.opt, 2)) run_wraps(&h);
    finish(&h);
    return h.failed ? 1 : 0;
}
