/*
 * test_reduce.c - the reduce test table, read as a specification of pscan_reduce().
 *
 *   test_reduce --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T] [--strict-order]
 *               [--shard K/N]   (the type table's types of index K mod N only: the sanitizers split it so)
 *               [--type T] [--op O] [--n N]   (one type, one operator, one size of the table: the racecheck
 *                                            jobs take the sum and min, whose folds cover every shared-memory path)
 *
 * (The seed defaults to PSCAN_TEST_SEED, else a fixed value; --threads T sizes the CPU backend's pool;
 * --strict-order adds the NaN-payload and -0.0/+0.0 order checks below; PSCAN_TEST_REQUIRE_BACKENDS="cuda ..."
 * turns a missing backend into a failure instead of a skip.)
 *
 * For one backend and one algorithm: every element type x every operator the type has, each result checked
 * against init (+) in[0] (+) ... (+) in[n-1] computed here by a plain serial loop (integers as raw bits in a
 * uint64 with the type's wraparound, floats in long double), never by the library. Sizes: 0, 1, 2, 31, 1000;
 * around the CUDA reduce tile (256 threads x 4 16-byte vectors: 16384 u8, 8192 u16, 4096 32-bit, 2048 64-bit
 * elements, the small tier's tile): tile-1, tile, tile+1, 2*tile-3 and 2*tile (one 32 KiB tile), 2*tile+1 (three
 * small tiles again), 16*tile and 16*tile+1 (the last call of the small tier,
 * 256 KiB, and the first of the 32 KiB tiles), 24*tile+7 (a partial 32 KiB tile), 32*tile and 32*tile+1 (the last
 * call of the 32 KiB tiles, 512 KiB, and the first of the 64 KiB ones), and 127*tile+5, 128*tile, 129*tile+3 (tens
 * of 64 KiB tiles); and one random size up to 2^22 (2^20 with --quick; 2^18 on OpenCL, whose CPU runtime is slow). Each (type, operator, size) runs five ways:
 * identity or a given init, the input at its allocation's start or one element in (misaligned for the vector
 * loads), the temporary storage from the context's workspace or a caller buffer at +0, +1 or +3 bytes (the
 * core aligns it), and once more with PSCAN_ALGO_AUTO. The result goes to device memory from
 * pscan_memory_alloc, poisoned first with the complement of the expected value and followed by guard bytes;
 * n == 0 must write init (the identity without one).
 *
 * What counts as correct: the exact bits, for every type. Float inputs are chosen so that any order of
 * combination gives the same value (see random_float()): sums of small multiples of 2^-4 whose total stays
 * within the mantissa, products of +-1 and a few +-2^(+-1), min/max of values (always one of the inputs).
 * Beyond exact values:
 *   - determinism: an f32 and an f64 sum of 2^20+1 random floats of both signs and many magnitudes (not
 *     exact) gives the same bits in 5 runs, through the workspace and caller temps at different offsets;
 *   - NaN: min and max return NaN when any element (or the init) is NaN;
 *   - with --strict-order, the rest of pscan.h's promise for min and max: the first NaN's bits, and of equal
 *     elements (-0.0 and +0.0) the earlier one (operators are never assumed commutative). ctest runs it as
 *     reduce.cpu.strict-order, reduce.cpu.threads-strict-order (the CPU's lanes are contiguous blocks folded in
 *     order), reduce.cuda.strict-order and on OpenCL;
 *   - bad inputs return their exact status and leave the result untouched (run_bad_inputs()).
 * OpenCL runs the same table around its own tile (256 work-items x 16 elements up to 4 bytes, x 8 for 8-byte
 * types: src/opencl/kernels/pattern_reduce.cl) instead of CUDA's, plus one size whose tile totals span several
 * of the final work-group's tiles (4097 tiles + 3); device buffers there are cl_mem handles, so inputs,
 * results and caller temp sit at their buffers' start. CUDA adds two sizes (u8 sum, i32 min, f64 product): 2112
 * of its 64 KiB tiles + 3, more tiles than its even-share driver has blocks, so blocks fold runs of tiles, and
 * 2000 + 3, the no_allocate tier's grid of 4 waves, whose later blocks start as earlier ones finish.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_reduce: P passed, F failed".
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

/* Failure reports printed in full; later failures are only counted. */
#define MAX_REPORTS 20
/* The result buffer: the result slot (at element 0 or 1) followed by guard bytes. */
#define RESULT_BUF_BYTES 64
/* Bytes of slack allocated around caller temp, for the +1 and +3 offsets. */
#define TEMP_SLACK 8

/* ---- the element types and the serial reference: test_reference.h (written out by hand: the test is the
 * spec, not a copy of the library's lists) ---- */
#include "test_reference.h"

/* The CUDA reduce tile of calls up to 256 KiB, in elements: 256 threads x 4 vectors of 16 bytes (src/cuda/reduce.cu;
 * larger calls use 16 vectors). */
static size_t cuda_reduce_tile(const type_info *t) { return 256u * 4u * (16u / t->bytes); }
/* The OpenCL reduce tile: 256 work-items x 16 elements (8 for 8-byte types) (PS_CL_PATTERN_ITEMS,
 * src/opencl/opencl_backend.c). */
static size_t opencl_reduce_tile(const type_info *t) { return 256u * (t->bytes <= 4 ? 16u : 8u); }
static size_t backend_reduce_tile(pscan_backend backend, const type_info *t) {
    return backend == PSCAN_BACKEND_OPENCL ? opencl_reduce_tile(t) : cuda_reduce_tile(t);
}

/* init (+) in[0] (+) ... (+) in[n-1], one element at a time, in order. */
static uint64_t reference_int(const type_info *t, pscan_op op, uint64_t init, const unsigned char *in, size_t n) {
    uint64_t acc = init;
    for (size_t i = 0; i < n; i++) acc = int_combine(t, op, acc, load_raw(in, i, t->bytes));
    return acc;
}

static long double reference_float(const type_info *t, pscan_op op, long double init, const unsigned char *in,
                                   size_t n) {
    long double acc = init;
    for (size_t i = 0; i < n; i++) acc = float_combine(op, acc, load_float(in, i, t));
    return acc;
}

/* ---- input data ---------------------------------------------------------------------------------------- */

/* Integers: full-range random bits, so sums and products wrap all the time. Products use odd values (a unit
 * modulo 2^bits) so the product never collapses to 0 after a few even factors; and/or use values with few
 * cleared/set bits so the result does not saturate within the first handful of elements. */
static uint64_t random_int(test_rng *rng, const type_info *t, pscan_op op) {
    uint64_t mask = width_mask(t);
    uint64_t r = test_rng_next(rng);
    switch (op) {
    case PSCAN_OP_PRODUCT: return (r | 1) & mask;
    case PSCAN_OP_AND: return ~(1ull << (r % (8 * t->bytes))) & mask;
    case PSCAN_OP_OR: return (1ull << (r % (8 * t->bytes))) & mask;
    default: return r & mask;
    }
}

/* Floats whose reduction is exact in every order:
 * sum: m * 2^-4 with |m| <= sum_bound, where (n + 1) * sum_bound < 2^24 (f32) or 2^53 (f64): every partial sum
 * of any subset is a multiple of 2^-4 below 2^20 (2^49) in magnitude, hence exactly representable.
 * product: +-1, and at most PRODUCT_OCTAVES factors of +-2 or +-1/2 spread over the array: every partial
 * product, with an init of +-2^(+-3), is an exact power of two within f32's range; the signs check every
 * factor's presence by parity.
 * min/max: values of many magnitudes and both signs (the result is always one of them). */
#define PRODUCT_OCTAVES 96
static uint64_t float_sum_bound(const type_info *t, size_t n) {
    uint64_t limit = t->bytes == 4 ? (1ull << 24) - 1 : (1ull << 53) - 1;
    uint64_t bound = limit / ((uint64_t)n + 1);
    uint64_t cap = t->bytes == 4 ? 1ull << 12 : 1ull << 40;
    return bound < cap ? bound : cap;
}

static long double random_float(test_rng *rng, const type_info *t, pscan_op op, size_t n, int *octaves_left) {
    uint64_t r = test_rng_next(rng);
    switch (op) {
    case PSCAN_OP_SUM: {
        uint64_t bound = float_sum_bound(t, n);
        long double m = (long double)(r % (2 * bound + 1)) - (long double)bound;
        return ldexpl(m, -4);
    }
    case PSCAN_OP_PRODUCT: {
        int k = 0;
        /* a power of two other than 1 with probability about PRODUCT_OCTAVES / (2n), half of them at most */
        if (*octaves_left > 0 && (r >> 32) % (2 * (uint64_t)n + 2) < PRODUCT_OCTAVES) {
            k = (r & 2) ? 1 : -1;
            (*octaves_left)--;
        }
        return (r & 1) ? -ldexpl(1.0L, k) : ldexpl(1.0L, k);
    }
    default:
        return ldexp(test_rng_unit(rng) * 2.0 - 1.0, (int)(r % 41) - 20);
    }
}

/* ---- the run ------------------------------------------------------------------------------------------- */

typedef struct harness {
    test_options opt;
    pscan_context *ctx;
    int addresses;         /* device pointers are addresses (CPU, CUDA): offsets and overlap are meaningful */
    size_t max_n;          /* elements of the largest 64-bit case */
    unsigned char *h_in;   /* n elements of the case */
    unsigned char *h_junk; /* what caller temp is filled with first */
    void *d_in;            /* max_n + 1 elements of 8 bytes */
    void *d_result;        /* RESULT_BUF_BYTES */
    void *d_temp;          /* d_temp_bytes */
    size_t d_temp_bytes;
    unsigned long passed, failed, reports;
} harness;

static unsigned char guard_byte(size_t j) { return (unsigned char)(0xC3u + 17u * (unsigned)j); }

/* Records one failed check; prints it unless enough have been printed already. */
static void fail_report(harness *h, const char *fmt_what, const char *detail) {
    h->failed++;
    if (h->reports++ >= MAX_REPORTS) return;
    fprintf(stderr, "FAIL: backend=%s algo=%s seed=%" PRIu64 ": %s%s%s\n", pscan_backend_name(h->opt.backend),
            pscan_algo_name(h->opt.algo), h->opt.seed, fmt_what, detail ? ": " : "", detail ? detail : "");
}

static void check(harness *h, int ok, const char *file, int line, const char *what) {
    if (ok) {
        h->passed++;
        return;
    }
    char where[640];
    snprintf(where, sizeof where, "%s:%d: %s", file, line, what);
    fail_report(h, where, NULL);
}

/* EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce(...)) reads as the specification it is. */
#define EXPECT_STATUS(h, expected, call)                                                                     \
    do {                                                                                                     \
        pscan_status got_ = (call);                                                                          \
        char what_[512];                                                                                     \
        snprintf(what_, sizeof what_, "%s returned %s, expected %s", #call, pscan_status_name(got_),         \
                 pscan_status_name(expected));                                                               \
        check((h), got_ == (expected), __FILE__, __LINE__, what_);                                           \
    } while (0)
#define EXPECT(h, cond) check((h), (cond) != 0, __FILE__, __LINE__, #cond)

static void format_value(const type_info *t, const unsigned char *buf, size_t i, char *text, size_t size) {
    if (t->is_float) {
        snprintf(text, size, "%.17Lg (0x%" PRIx64 ")", load_float(buf, i, t), load_raw(buf, i, t->bytes));
        return;
    }
    uint64_t v = load_raw(buf, i, t->bytes);
    if (t->is_signed && (v & sign_bit(t))) {
        int64_t s = (int64_t)(v | ~width_mask(t));
        snprintf(text, size, "%" PRId64 " (0x%" PRIx64 ")", s, v);
    } else {
        snprintf(text, size, "%" PRIu64 " (0x%" PRIx64 ")", v, v);
    }
}

/* The result buffer: the slot at element `slot` holds the complement of want, every other byte a guard. */
static pscan_status result_poison(harness *h, const type_info *t, size_t slot, const unsigned char *want) {
    unsigned char buf[RESULT_BUF_BYTES];
    for (size_t j = 0; j < RESULT_BUF_BYTES; j++) buf[j] = guard_byte(j);
    for (size_t j = 0; j < t->bytes; j++) buf[slot * t->bytes + j] = (unsigned char)~want[j];
    return pscan_memory_upload(h->ctx, h->d_result, buf, RESULT_BUF_BYTES);
}

static pscan_status result_fetch(harness *h, unsigned char *buf) {
    pscan_status s = pscan_memory_download(h->ctx, buf, h->d_result, RESULT_BUF_BYTES);
    pscan_status sync = pscan_context_synchronize(h->ctx);
    return s != PSCAN_SUCCESS ? s : sync;
}

/* The index of the first guard byte (outside the slot) that changed, or RESULT_BUF_BYTES. */
static size_t result_guard_broken(const type_info *t, size_t slot, const unsigned char *buf) {
    for (size_t j = 0; j < RESULT_BUF_BYTES; j++) {
        if (j >= slot * t->bytes && j < (slot + 1) * t->bytes) continue;
        if (buf[j] != guard_byte(j)) return j;
    }
    return RESULT_BUF_BYTES;
}

static int ensure_temp(harness *h, size_t bytes) {
    bytes += TEMP_SLACK;
    if (bytes <= h->d_temp_bytes) return 1;
    pscan_memory_free(h->ctx, h->d_temp);
    h->d_temp = NULL;
    h->d_temp_bytes = 0;
    free(h->h_junk);
    h->h_junk = (unsigned char *)malloc(bytes);
    if (!h->h_junk || pscan_memory_alloc(h->ctx, bytes, &h->d_temp) != PSCAN_SUCCESS) return 0;
    memset(h->h_junk, 0xA5, bytes);
    h->d_temp_bytes = bytes;
    return 1;
}

/* One way of running a case. temp: 0 workspace, 1..3 caller temp at byte offset 0, 1, 3. */
typedef struct reduce_case {
    const type_info *t;
    pscan_op op;
    size_t n;
    int with_init;
    int misaligned; /* input (and result) one element into their allocations */
    int temp;
    pscan_algo algo;
} reduce_case;

static const size_t temp_offsets[] = {0, 0, 1, 3};

static void describe_case(const reduce_case *c, char *text, size_t size) {
    snprintf(text, size, "type=%s op=%s n=%zu init=%s place=%s temp=%s algo=%s", c->t->name,
             pscan_op_name(c->op), c->n, c->with_init ? "given" : "identity",
             c->misaligned ? "offset-1-element" : "aligned",
             c->temp == 0 ? "workspace" : c->temp == 1 ? "caller+0" : c->temp == 2 ? "caller+1" : "caller+3",
             pscan_algo_name(c->algo));
}

static void fail_case(harness *h, const reduce_case *c, const char *what) {
    char text[640];
    describe_case(c, text, sizeof text);
    fail_report(h, text, what);
    if (h->reports <= MAX_REPORTS)
        fprintf(stderr, "  rerun: test_reduce --backend %s --algo %s --seed %" PRIu64 "\n",
                pscan_backend_name(h->opt.backend), pscan_algo_name(h->opt.algo), h->opt.seed);
}

/* Stages the caller temp for c (filled with junk, so an algorithm cannot rely on zeroed scratch), or NULL. */
static pscan_status stage_temp(harness *h, const pscan_reduce_desc *desc, size_t n, int temp, void **ptr,
                               size_t *bytes) {
    *ptr = NULL;
    *bytes = 0;
    if (temp == 0) return PSCAN_SUCCESS;
    pscan_status s = pscan_reduce_temp_bytes(h->ctx, desc, n, bytes);
    if (s != PSCAN_SUCCESS) return s;
    if (!ensure_temp(h, *bytes)) return PSCAN_ERROR_OUT_OF_MEMORY;
    s = pscan_memory_upload(h->ctx, h->d_temp, h->h_junk, h->d_temp_bytes);
    *ptr = (char *)h->d_temp + (h->addresses ? temp_offsets[temp] : 0);
    return s;
}

/* Runs one case on the input in h_in (n elements) and checks the result slot against want (type's bits). */
static void run_case(harness *h, const reduce_case *c, const unsigned char *init, const unsigned char *want) {
    const type_info *t = c->t;
    const size_t eb = t->bytes, slot = c->misaligned && h->addresses ? 1 : 0;
    char what[512];
    void *in = c->misaligned && h->addresses ? (void *)((char *)h->d_in + eb) : h->d_in;
    if (c->n == 0 && c->misaligned) in = NULL; /* n == 0: in may be NULL */
    pscan_status s = PSCAN_SUCCESS;
    if (c->n > 0) s = pscan_memory_upload(h->ctx, in, h->h_in, c->n * eb);
    if (s == PSCAN_SUCCESS) s = result_poison(h, t, slot, want);
    pscan_reduce_desc desc = {t->type, c->op, c->algo, c->with_init ? init : NULL};
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (s == PSCAN_SUCCESS) s = stage_temp(h, &desc, c->n, c->temp, &temp, &temp_bytes);
    if (s != PSCAN_SUCCESS) {
        snprintf(what, sizeof what, "staging returned %s", pscan_status_name(s));
        fail_case(h, c, what);
        return;
    }
    void *result = (char *)h->d_result + slot * eb;
    s = pscan_reduce(h->ctx, &desc, in, c->n, result, temp, temp_bytes);
    unsigned char got[RESULT_BUF_BYTES];
    pscan_status fetched = result_fetch(h, got);
    if (s == PSCAN_SUCCESS) s = fetched;
    if (s != PSCAN_SUCCESS) {
        long long native = 0;
        pscan_context_native_error(h->ctx, &native);
        snprintf(what, sizeof what, "returned %s (native error %lld)", pscan_status_name(s), native);
        fail_case(h, c, what);
        return;
    }
    if (memcmp(got + slot * eb, want, eb) != 0) {
        char g[96], w[96];
        format_value(t, got, slot, g, sizeof g);
        format_value(t, want, 0, w, sizeof w);
        int poisoned = 1;
        for (size_t j = 0; j < eb; j++) poisoned &= got[slot * eb + j] == (unsigned char)~want[j];
        snprintf(what, sizeof what, "got %s, expected %s%s", g, w, poisoned ? " (the result was never written)" : "");
        fail_case(h, c, what);
        return;
    }
    size_t broken = result_guard_broken(t, slot, got);
    if (broken < RESULT_BUF_BYTES) {
        snprintf(what, sizeof what, "wrote outside the result: byte %zu of the result buffer changed", broken);
        fail_case(h, c, what);
        return;
    }
    h->passed++;
}

/* Fills h_in for (type, op, n), seeded by (seed, type, op, n) only; returns the init and the two expected
 * results (identity, init) in the type's bits. */
static void make_input(harness *h, const type_info *t, pscan_op op, size_t n, unsigned char *init,
                       unsigned char *want_identity, unsigned char *want_init) {
    test_rng rng = {test_mix64(h->opt.seed ^ test_mix64(((uint64_t)t->type << 48) ^ ((uint64_t)op << 40) ^ n))};
    int octaves_left = PRODUCT_OCTAVES;
    for (size_t i = 0; i < n; i++) {
        if (t->is_float)
            store_float(h->h_in, i, t, random_float(&rng, t, op, n, &octaves_left));
        else
            store_raw(h->h_in, i, t->bytes, random_int(&rng, t, op));
    }
    if (t->is_float) {
        long double x;
        if (op == PSCAN_OP_PRODUCT) {
            uint64_t r = test_rng_next(&rng);
            x = ldexpl((r & 1) ? -1.0L : 1.0L, (int)((r >> 1) % 7) - 3);
        } else {
            x = random_float(&rng, t, op, n, &octaves_left);
        }
        store_float(init, 0, t, x);
        long double v = load_float(init, 0, t);
        store_float(want_identity, 0, t, reference_float(t, op, float_identity(op), h->h_in, n));
        store_float(want_init, 0, t, reference_float(t, op, v, h->h_in, n));
    } else {
        uint64_t v = random_int(&rng, t, op);
        store_raw(init, 0, t->bytes, v);
        store_raw(want_identity, 0, t->bytes, reference_int(t, op, int_identity(t, op), h->h_in, n));
        store_raw(want_init, 0, t->bytes, reference_int(t, op, v, h->h_in, n));
    }
}

/* Every type x operator at size n (or, with per_type_tile, at tile_multiple * tile + tile_extra of each type),
 * five ways each. */
static void run_size(harness *h, size_t n_fixed, long tile_multiple, long tile_extra, unsigned size_index) {
    for (unsigned ti = 0; ti < TYPE_COUNT; ti++) {
        if (!TEST_IN_SHARD(&h->opt, ti) || !TEST_TYPE_SELECTED(&h->opt, types[ti].type)) continue;
        const type_info *t = &types[ti];
        size_t n = tile_multiple >= 0
                       ? (size_t)((long)backend_reduce_tile(h->opt.backend, t) * tile_multiple + tile_extra)
                       : n_fixed;
        for (unsigned oi = 0; oi < OP_COUNT; oi++) {
            pscan_op op = ops[oi];
            if ((t->is_float && op_is_bitwise(op)) || !TEST_OP_SELECTED(&h->opt, op)) continue;
            unsigned char init[8], want_identity[8], want_init[8];
            make_input(h, t, op, n, init, want_identity, want_init);
            for (unsigned v = 0; v < 5; v++) {
                reduce_case c;
                c.t = t;
                c.op = op;
                c.n = n;
                c.with_init = (int)(v & 1);
                c.misaligned = (int)((v >> 1) & 1);
                c.temp = (int)((v + size_index + ti + oi) % 4);
                c.algo = h->opt.algo;
                if (v == 4) {
                    c.algo = PSCAN_ALGO_AUTO;
                    c.with_init = (int)((size_index + oi) & 1);
                    c.misaligned = 0;
                }
                run_case(h, &c, init, c.with_init ? want_init : want_identity);
            }
        }
    }
}

/* ---- fixed cases: the worked example and the edges of each type, spelled out --------------------------- */

typedef struct fixed_case {
    pscan_type type;
    pscan_op op;
    int has_init;
    int64_t init;
    size_t n;
    int64_t in[8];
    int64_t expected; /* the type's value; u64 uses the bit pattern */
} fixed_case;

static const fixed_case fixed_cases[] = {
    /* the header's worked example */
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3}, 25},
    {PSCAN_TYPE_I32, PSCAN_OP_MAX, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3}, 7},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 1, 100, 8, {3, 1, 7, 0, 4, 1, 6, 3}, 125},
    /* integer arithmetic wraps modulo 2^bits, signed types too */
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 0, 2, {INT32_MAX, 1}, INT32_MIN},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 1, INT32_MAX, 1, {1}, INT32_MIN},
    {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, 0, 2, {255, 1}, 0},
    {PSCAN_TYPE_I8, PSCAN_OP_SUM, 0, 0, 3, {127, 1, -1}, 127},
    {PSCAN_TYPE_I64, PSCAN_OP_SUM, 0, 0, 2, {INT64_MAX, 1}, INT64_MIN},
    {PSCAN_TYPE_U64, PSCAN_OP_SUM, 0, 0, 2, {-1, 2}, 1},
    {PSCAN_TYPE_U16, PSCAN_OP_PRODUCT, 0, 0, 2, {256, 256}, 0},
    {PSCAN_TYPE_I16, PSCAN_OP_PRODUCT, 0, 0, 3, {200, 200, -1}, 25536},
    {PSCAN_TYPE_U32, PSCAN_OP_PRODUCT, 0, 0, 2, {65536, 65537}, 65536},
    /* signed order for min/max; n == 0 gives init, or the identity */
    {PSCAN_TYPE_I8, PSCAN_OP_MAX, 0, 0, 3, {-5, 3, -128}, 3},
    {PSCAN_TYPE_I8, PSCAN_OP_MIN, 0, 0, 3, {-5, 3, -128}, -128},
    {PSCAN_TYPE_U8, PSCAN_OP_MIN, 0, 0, 3, {200, 7, 255}, 7},
    {PSCAN_TYPE_I16, PSCAN_OP_MIN, 0, 0, 0, {0}, INT16_MAX},
    {PSCAN_TYPE_I64, PSCAN_OP_MAX, 0, 0, 0, {0}, INT64_MIN},
    {PSCAN_TYPE_U32, PSCAN_OP_AND, 0, 0, 0, {0}, UINT32_MAX},
    {PSCAN_TYPE_I32, PSCAN_OP_PRODUCT, 1, -7, 0, {0}, -7},
};

static void run_fixed(harness *h) {
    for (size_t k = 0; k < sizeof fixed_cases / sizeof fixed_cases[0]; k++) {
        const fixed_case *f = &fixed_cases[k];
        const type_info *t = &types[f->type];
        unsigned char init[8], want[8];
        for (size_t i = 0; i < f->n; i++) store_raw(h->h_in, i, t->bytes, (uint64_t)f->in[i]);
        store_raw(init, 0, t->bytes, (uint64_t)f->init);
        store_raw(want, 0, t->bytes, (uint64_t)f->expected & width_mask(t));
        reduce_case c = {t, f->op, f->n, f->has_init, 0, (int)(k % 4), h->opt.algo};
        run_case(h, &c, init, want);
    }
}

/* ---- NaN and the order of equal elements ---------------------------------------------------------------- */

/* One f32 or f64 value with the given bits (a NaN's payload is part of the result). */
static void store_bits(unsigned char *buf, size_t i, const type_info *t, uint64_t bits) {
    store_raw(buf, i, t->bytes, bits);
}

/* min and max of 100000 elements with one NaN in the middle: the result is NaN (its bits); a NaN init too.
 * With --strict-order: two NaNs with different payloads give the first one's bits; -0.0 and +0.0 as the
 * extreme give the earlier one. The positions are chosen so that a reduction over interleaved lanes (elements
 * i, i+8, ... in one lane) would meet the later one first. */
static void run_nan(harness *h) {
    const size_t n = 100000;
    for (unsigned fi = 0; fi < 2; fi++) {
        const type_info *t = &types[fi == 0 ? PSCAN_TYPE_F32 : PSCAN_TYPE_F64];
        const uint64_t nan_a = t->bytes == 4 ? 0x7FC00001u : 0x7FF8000000000001ull;
        const uint64_t nan_b = t->bytes == 4 ? 0xFFC00002u : 0xFFF8000000000002ull;
        const uint64_t plus_zero = 0, minus_zero = t->bytes == 4 ? 0x80000000u : 0x8000000000000000ull;
        for (int oi = 0; oi < 2; oi++) {
            pscan_op op = oi == 0 ? PSCAN_OP_MIN : PSCAN_OP_MAX;
            test_rng rng = {test_mix64(h->opt.seed ^ 0x4E614Eu ^ ((uint64_t)t->type << 8) ^ (uint64_t)op)};
            unsigned char init[8], want[8];
            int unused = 0;
            for (size_t i = 0; i < n; i++) store_float(h->h_in, i, t, random_float(&rng, t, op, n, &unused));
            store_float(init, 0, t, 0.5L);

            /* one NaN in the middle: NaN, with and without init */
            store_bits(h->h_in, n / 2, t, nan_a);
            store_bits(want, 0, t, nan_a);
            for (int with_init = 0; with_init < 2; with_init++) {
                reduce_case c = {t, op, n, with_init, with_init, 1 + with_init, h->opt.algo};
                run_case(h, &c, init, want);
            }
            /* a NaN init propagates, also over no elements at all */
            store_bits(init, 0, t, nan_b);
            store_bits(want, 0, t, nan_b);
            {
                reduce_case c = {t, op, n, 1, 0, 3, h->opt.algo};
                run_case(h, &c, init, want);
                reduce_case e = {t, op, 0, 1, 0, 0, h->opt.algo};
                run_case(h, &e, init, want);
            }
            if (!h->opt.strict_order) continue;

            /* two NaNs: the first one's bits (a later NaN in an earlier lane must not win) */
            store_bits(want, 0, t, nan_a);
            store_bits(h->h_in, n / 2 + 1, t, nan_a);
            store_bits(h->h_in, n / 2, t, 0);
            store_bits(h->h_in, n / 2 + 8, t, nan_b);
            store_bits(h->h_in, n - 1, t, nan_b);
            {
                reduce_case c = {t, op, n, 0, 0, 0, h->opt.algo};
                run_case(h, &c, init, want);
            }
            /* the extreme value is a zero, +0.0 at index 9 before -0.0 at index 16 (and the reverse): min and max
             * keep the earlier of equal elements */
            for (size_t i = 0; i < n; i++) {
                long double x = 1.0L + (long double)(test_rng_next(&rng) % 1000);
                store_float(h->h_in, i, t, op == PSCAN_OP_MIN ? x : -x);
            }
            for (int order = 0; order < 2; order++) {
                store_bits(h->h_in, 9, t, order == 0 ? plus_zero : minus_zero);
                store_bits(h->h_in, 16, t, order == 0 ? minus_zero : plus_zero);
                store_bits(want, 0, t, order == 0 ? plus_zero : minus_zero);
                reduce_case c = {t, op, n, 0, 0, order, h->opt.algo};
                run_case(h, &c, init, want);
            }
        }
    }
}

/* ---- determinism: the same float sum, bit for bit, every time -------------------------------------------- */

static void run_determinism(harness *h) {
    const size_t n = (1u << 20) + 1;
    for (unsigned fi = 0; fi < 2; fi++) {
        const type_info *t = &types[fi == 0 ? PSCAN_TYPE_F32 : PSCAN_TYPE_F64];
        const size_t eb = t->bytes;
        test_rng rng = {test_mix64(h->opt.seed ^ 0xDE7u ^ (uint64_t)t->type)};
        long double abs_sum = 0.0L;
        for (size_t i = 0; i < n; i++) {
            uint64_t r = test_rng_next(&rng);
            store_float(h->h_in, i, t, ldexp(test_rng_unit(&rng) * 2.0 - 1.0, (int)(r % 21) - 10));
            abs_sum += fabsl(load_float(h->h_in, i, t));
        }
        long double want = reference_float(t, PSCAN_OP_SUM, 0.0L, h->h_in, n);
        pscan_reduce_desc desc = {t->type, PSCAN_OP_SUM, h->opt.algo, NULL};
        pscan_status s = pscan_memory_upload(h->ctx, h->d_in, h->h_in, n * eb);
        unsigned char first[8] = {0};
        for (int run = 0; run < 5 && s == PSCAN_SUCCESS; run++) {
            unsigned char got[RESULT_BUF_BYTES], zero[8] = {0};
            void *temp = NULL;
            size_t temp_bytes = 0;
            s = result_poison(h, t, 0, zero);
            if (s == PSCAN_SUCCESS) s = stage_temp(h, &desc, n, run % 4, &temp, &temp_bytes);
            if (s == PSCAN_SUCCESS) s = pscan_reduce(h->ctx, &desc, h->d_in, n, h->d_result, temp, temp_bytes);
            pscan_status fetched = result_fetch(h, got);
            if (s == PSCAN_SUCCESS) s = fetched;
            if (s != PSCAN_SUCCESS) break;
            char text[256];
            if (run == 0) {
                memcpy(first, got, eb);
                /* not exact, but near: the rounding of any order is far below a missing or doubled term of the
                 * first few (the terms reach 2^10, the bound is 4 sqrt(n) eps sum|x|; see test_scan.c) */
                long double g = load_float(got, 0, t);
                long double eps = eb == 4 ? FLT_EPSILON : DBL_EPSILON;
                long double tol = 4.0L * sqrtl((long double)n) * eps * abs_sum;
                snprintf(text, sizeof text, "determinism %s sum n=%zu: got %.17Lg, reference %.17Lg, tolerance %.3Lg",
                         t->name, n, g, want, tol);
                if (fabsl(g - want) <= tol)
                    h->passed++;
                else
                    fail_report(h, text, NULL);
            } else if (memcmp(first, got, eb) != 0) {
                snprintf(text, sizeof text,
                         "determinism %s sum n=%zu: run %d gave 0x%" PRIx64 ", run 0 gave 0x%" PRIx64, t->name, n,
                         run, load_raw(got, 0, eb), load_raw(first, 0, eb));
                fail_report(h, text, NULL);
            } else {
                h->passed++;
            }
        }
        if (s != PSCAN_SUCCESS) {
            char text[256];
            snprintf(text, sizeof text, "determinism %s sum n=%zu returned %s", t->name, n, pscan_status_name(s));
            fail_report(h, text, NULL);
        }
    }
}

/* ---- bad inputs: the exact status, and the result untouched ---------------------------------------------- */

/* The result slot is poisoned with 0x5A bytes before a call that must fail; still 0x5A after it, or a failure. */
static void poison_slot(harness *h) {
    unsigned char buf[RESULT_BUF_BYTES];
    memset(buf, 0x5A, sizeof buf);
    pscan_memory_upload(h->ctx, h->d_result, buf, sizeof buf);
}
static void check_untouched(harness *h, int line) {
    unsigned char buf[RESULT_BUF_BYTES];
    pscan_status s = result_fetch(h, buf);
    int ok = s == PSCAN_SUCCESS;
    for (size_t j = 0; ok && j < sizeof buf; j++) ok = buf[j] == 0x5A;
    check(h, ok, __FILE__, line, "a rejected call left the result buffer untouched");
}
#define EXPECT_REJECTED(h, expected, call)                                                                   \
    do {                                                                                                     \
        poison_slot(h);                                                                                      \
        EXPECT_STATUS(h, expected, call);                                                                    \
        check_untouched(h, __LINE__);                                                                        \
    } while (0)

static void run_bad_inputs(harness *h) {
    pscan_context *ctx = h->ctx;
    const pscan_algo algo = h->opt.algo;
    const uint64_t n = 1000;
    void *in = h->d_in, *res = h->d_result;
    size_t bytes = 0;
    int32_t ones[1000];
    for (size_t i = 0; i < n; i++) ones[i] = 1;
    pscan_memory_upload(ctx, in, ones, sizeof ones);
    const pscan_reduce_desc ok = {PSCAN_TYPE_I32, PSCAN_OP_SUM, algo, NULL};

    /* NULL pointers */
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(NULL, &ok, in, n, res, NULL, 0));
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(ctx, NULL, in, n, res, NULL, 0));
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(ctx, &ok, in, n, NULL, NULL, 0));
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(ctx, &ok, in, 0, NULL, NULL, 0));
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(ctx, &ok, NULL, n, res, NULL, 0));
    EXPECT_REJECTED(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce(ctx, &ok, NULL, 1, res, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_temp_bytes(NULL, &ok, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_temp_bytes(ctx, NULL, n, &bytes));
    EXPECT_STATUS(h, PSCAN_ERROR_NULL_POINTER, pscan_reduce_temp_bytes(ctx, &ok, n, NULL));
    /* n == 0 with in == NULL is valid and writes the identity */
    {
        unsigned char buf[RESULT_BUF_BYTES];
        poison_slot(h);
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_reduce(ctx, &ok, NULL, 0, res, NULL, 0));
        EXPECT(h, result_fetch(h, buf) == PSCAN_SUCCESS && load_raw(buf, 0, 4) == 0 && buf[4] == 0x5A);
    }

    /* enum values outside their lists */
    static const pscan_reduce_desc bad_enum[] = {
        {PSCAN_TYPE_COUNT, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL}, {(pscan_type)-1, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL},
        {PSCAN_TYPE_I32, PSCAN_OP_COUNT, PSCAN_ALGO_AUTO, NULL}, {PSCAN_TYPE_I32, (pscan_op)-1, PSCAN_ALGO_AUTO, NULL},
        {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_ALGO_COUNT, NULL},  {PSCAN_TYPE_I32, PSCAN_OP_SUM, (pscan_algo)-1, NULL},
        {PSCAN_TYPE_I32, PSCAN_OP_SUM, (pscan_algo)1000, NULL},
    };
    for (size_t k = 0; k < sizeof bad_enum / sizeof bad_enum[0]; k++) {
        EXPECT_REJECTED(h, PSCAN_ERROR_INVALID_VALUE, pscan_reduce(ctx, &bad_enum[k], in, n, res, NULL, 0));
        EXPECT_REJECTED(h, PSCAN_ERROR_INVALID_VALUE, pscan_reduce(ctx, &bad_enum[k], in, 0, res, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_INVALID_VALUE, pscan_reduce_temp_bytes(ctx, &bad_enum[k], n, &bytes));
    }

    /* and, or, xor need an integer type */
    for (int f = 0; f < 2; f++)
        for (pscan_op op = PSCAN_OP_AND; op <= PSCAN_OP_XOR; op = (pscan_op)(op + 1)) {
            pscan_reduce_desc d = {f ? PSCAN_TYPE_F64 : PSCAN_TYPE_F32, op, algo, NULL};
            EXPECT_REJECTED(h, PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_reduce(ctx, &d, in, n / 2, res, NULL, 0));
            EXPECT_REJECTED(h, PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_reduce(ctx, &d, in, 0, res, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_reduce_temp_bytes(ctx, &d, n, &bytes));
        }

    /* n too large: 2^63, UINT64_MAX, and bytes just beyond 2^48 (no real buffer spans them) */
    const uint64_t huge[] = {1ull << 63, UINT64_MAX, (1ull << 48) / 4 + 1};
    for (size_t k = 0; k < sizeof huge / sizeof huge[0]; k++) {
        EXPECT_REJECTED(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce(ctx, &ok, in, huge[k], res, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce_temp_bytes(ctx, &ok, huge[k], &bytes));
    }
    {
        pscan_reduce_desc d64 = {PSCAN_TYPE_U64, PSCAN_OP_MAX, algo, NULL};
        EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce_temp_bytes(ctx, &d64, 1ull << 62, &bytes));
        EXPECT_REJECTED(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce(ctx, &d64, in, 1ull << 62, res, NULL, 0));
    }

    /* Hillis-Steele is a scan network, never a reduce, on every backend; and each backend's own list */
    {
        pscan_reduce_desc d = ok;
        d.algo = PSCAN_ALGO_HILLIS_STEELE;
        EXPECT_REJECTED(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce(ctx, &d, in, n, res, NULL, 0));
        EXPECT_REJECTED(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce(ctx, &d, in, 0, res, NULL, 0));
        EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce_temp_bytes(ctx, &d, n, &bytes));
        EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce_temp_bytes(ctx, &d, 0, &bytes));
        for (int a = 0; a < PSCAN_ALGO_COUNT; a++) {
            int cpu_algo = a == PSCAN_ALGO_SERIAL || a == PSCAN_ALGO_THREADS;
            int has = a == PSCAN_ALGO_AUTO ||
                      (h->opt.backend == PSCAN_BACKEND_CPU      ? cpu_algo
                       : h->opt.backend == PSCAN_BACKEND_OPENCL ? a == PSCAN_ALGO_REDUCE_THEN_SCAN
                                                                : a == PSCAN_ALGO_DECOUPLED_LOOKBACK);
            if (has) continue;
            d.algo = (pscan_algo)a;
            EXPECT_REJECTED(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce(ctx, &d, in, n, res, NULL, 0));
            EXPECT_STATUS(h, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_reduce_temp_bytes(ctx, &d, n, &bytes));
        }
    }

    /* caller temp one byte smaller than the query (when the algorithm needs any) */
    bytes = 0;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_reduce_temp_bytes(ctx, &ok, n, &bytes));
    if (ensure_temp(h, bytes)) {
        if (bytes > 0) {
            EXPECT_REJECTED(h, PSCAN_ERROR_TEMP_TOO_SMALL, pscan_reduce(ctx, &ok, in, n, res, h->d_temp, bytes - 1));
            EXPECT_REJECTED(h, PSCAN_ERROR_TEMP_TOO_SMALL, pscan_reduce(ctx, &ok, in, n, res, h->d_temp, 0));
        }
        /* exactly the query's bytes at every offset works */
        for (int k = 0; k < 4; k++) {
            unsigned char buf[RESULT_BUF_BYTES];
            void *temp = (char *)h->d_temp + (h->addresses ? temp_offsets[k] : 0);
            poison_slot(h);
            EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_reduce(ctx, &ok, in, n, res, temp, bytes));
            EXPECT(h, result_fetch(h, buf) == PSCAN_SUCCESS && load_raw(buf, 0, 4) == n);
        }
    } else {
        fail_report(h, "could not allocate caller temp", NULL);
    }

    if (!h->addresses) return;
    /* the result inside the input range (or straddling one of its ends) overlaps; right beside it does not */
    {
        char *base = (char *)in + 16; /* input of 1000 i32 at in + 16: the bytes before and after are ours */
        pscan_memory_upload(ctx, base, ones, sizeof ones);
        char *inside[] = {base, base + 5 * 4, base + (n - 1) * 4, base + n * 4 - 1, base - 3, base + 2};
        for (size_t k = 0; k < sizeof inside / sizeof inside[0]; k++) {
            int32_t back[1000];
            EXPECT_STATUS(h, PSCAN_ERROR_OVERLAP, pscan_reduce(ctx, &ok, base, n, inside[k], NULL, 0));
            pscan_status s = pscan_memory_download(ctx, back, base, sizeof back);
            pscan_status sync = pscan_context_synchronize(ctx);
            EXPECT(h, s == PSCAN_SUCCESS && sync == PSCAN_SUCCESS && memcmp(back, ones, sizeof ones) == 0);
        }
        char *beside[] = {base - 4, base + n * 4};
        for (size_t k = 0; k < 2; k++) {
            int32_t got = 0;
            EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_reduce(ctx, &ok, base, n, beside[k], NULL, 0));
            pscan_status s = pscan_memory_download(ctx, &got, beside[k], sizeof got);
            pscan_status sync = pscan_context_synchronize(ctx);
            EXPECT(h, s == PSCAN_SUCCESS && sync == PSCAN_SUCCESS && got == (int32_t)n);
        }
    }
    /* a range that wraps the address space cannot be real memory */
    EXPECT_REJECTED(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce(ctx, &ok, (void *)(UINTPTR_MAX - 15), 8, res, NULL, 0));
    EXPECT_STATUS(h, PSCAN_ERROR_TOO_LARGE, pscan_reduce(ctx, &ok, in, 8, (void *)(UINTPTR_MAX - 1), NULL, 0));
}

/* ---- many tiles: OpenCL's final work-group, CUDA's even-share blocks ------------------------------------ */

/* OpenCL: 4097 tiles + 3 elements: the final work-group folds its tiles of totals in order, one after another. */
static size_t opencl_many_tiles_n(const type_info *t) { return 4097 * opencl_reduce_tile(t) + 3; }
/* CUDA: 2112 of the 64 KiB tiles + 3 elements (132 MiB: plain loads, one wave of the even-share driver's blocks,
 * 396 on a GPU of 132 SMs at 3 each: src/cuda/chain/even_share.cuh), so every block folds a run of five or six. */
static size_t cuda_many_tiles_n(const type_info *t) { return (size_t)2112 * (65536u / t->bytes) + 3; }
/* CUDA: 2000 of them + 3 (125 MiB, up to PS_REDUCE_NOALLOC_BYTES: no_allocate loads on a grid of 4 waves, 1584
 * blocks on 132 SMs), so the first 417 blocks fold runs of two tiles, the rest one, and the last block waits for
 * blocks that started waves before it. */
static size_t cuda_waves_tiles_n(const type_info *t) { return (size_t)2000 * (65536u / t->bytes) + 3; }

static void run_many_tiles(harness *h, unsigned size_index, size_t (*size_of)(const type_info *)) {
    static const struct {
        pscan_type type;
        pscan_op op;
    } cases[] = {{PSCAN_TYPE_U8, PSCAN_OP_SUM}, {PSCAN_TYPE_I32, PSCAN_OP_MIN}, {PSCAN_TYPE_F64, PSCAN_OP_PRODUCT}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const type_info *t = &types[cases[k].type];
        if (!TEST_TYPE_SELECTED(&h->opt, cases[k].type) || !TEST_OP_SELECTED(&h->opt, cases[k].op)) continue;
        const size_t n = size_of(t);
        unsigned char init[8], want_identity[8], want_init[8];
        make_input(h, t, cases[k].op, n, init, want_identity, want_init);
        reduce_case c = {t, cases[k].op, n, (int)(k & 1), 0, (int)((size_index + k) % 4), h->opt.algo};
        run_case(h, &c, init, c.with_init ? want_init : want_identity);
    }
}

/* ---- main ---------------------------------------------------------------------------------------------- */

static void finish(harness *h) {
    if (h->failed) {
        if (h->reports > MAX_REPORTS) fprintf(stderr, "(%lu more failures not shown)\n", h->reports - MAX_REPORTS);
        fprintf(stderr, "test_reduce: seed %" PRIu64 "; rerun with --seed %" PRIu64 "\n", h->opt.seed, h->opt.seed);
    }
    printf("test_reduce: %lu passed, %lu failed\n", h->passed, h->failed);
    pscan_memory_free(h->ctx, h->d_temp);
    pscan_memory_free(h->ctx, h->d_in);
    pscan_memory_free(h->ctx, h->d_result);
    pscan_context_destroy(h->ctx);
    free(h->h_in);
    free(h->h_junk);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_reduce", argc, argv, 20260101, TEST_OPT_STRICT_ORDER | TEST_OPT_SHARD | TEST_OPT_ONLY,
                           &h.opt) != 0)
        return 2;
    if (TYPE_COUNT != PSCAN_TYPE_COUNT || OP_COUNT != PSCAN_OP_COUNT) {
        fprintf(stderr, "test_reduce: FAIL: the library has types or operators this table does not know\n");
        return 1;
    }

    int rc = test_open_context("test_reduce", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    h.addresses = h.opt.backend != PSCAN_BACKEND_OPENCL;
    printf("test_reduce: algo %s, seed %" PRIu64 "%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "");

    /* the random size: up to 2^22 elements (2^20 with --quick), the same for every type */
    test_rng size_rng = {test_mix64(h.opt.seed ^ 0x517Eu)};
    const int opencl = h.opt.backend == PSCAN_BACKEND_OPENCL;
    const size_t random_cap = opencl ? (1u << 18) : h.opt.quick ? (1u << 20) : (1u << 22);
    const size_t random_n = 1 + (size_t)(test_rng_next(&size_rng) % random_cap);
    /* the largest n of any case: 129 tiles of u8 + 3 (OpenCL, CUDA: their many-tiles size), the random size, the
     * determinism check */
    const int cuda = h.opt.backend == PSCAN_BACKEND_CUDA;
    h.max_n = 129 * cuda_reduce_tile(&types[PSCAN_TYPE_U8]) + 3;
    if (opencl) h.max_n = opencl_many_tiles_n(&types[PSCAN_TYPE_U8]);
    if (cuda) h.max_n = cuda_many_tiles_n(&types[PSCAN_TYPE_U8]);
    if (random_n > h.max_n) h.max_n = random_n;
    if ((1u << 20) + 1 > h.max_n) h.max_n = (1u << 20) + 1;
    if (h.opt.only_n > (long long)h.max_n) h.max_n = (size_t)h.opt.only_n;
    h.h_in = (unsigned char *)malloc((h.max_n + 1) * 8);
    if (!h.h_in || pscan_memory_alloc(h.ctx, (h.max_n + 1) * 8, &h.d_in) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h.ctx, RESULT_BUF_BYTES, &h.d_result) != PSCAN_SUCCESS) {
        fprintf(stderr, "test_reduce: FAIL: out of memory\n");
        h.failed++;
        finish(&h);
        return 1;
    }

    /* an algorithm this backend must implement but does not is a failure, reported once */
    pscan_reduce_desc probe = {PSCAN_TYPE_I32, PSCAN_OP_SUM, h.opt.algo, NULL};
    size_t probe_bytes = 0;
    pscan_status s = pscan_reduce_temp_bytes(h.ctx, &probe, 1024, &probe_bytes);
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "FAIL: backend %s, algo %s: pscan_reduce_temp_bytes returned %s\n",
                pscan_backend_name(h.opt.backend), pscan_algo_name(h.opt.algo), pscan_status_name(s));
        h.failed++;
        finish(&h);
        return 1;
    }

    if (TEST_IN_SHARD(&h.opt, 0)) run_fixed(&h);
    if (TEST_IN_SHARD(&h.opt, 1)) run_bad_inputs(&h);
    if (TEST_IN_SHARD(&h.opt, 2)) run_nan(&h);
    if (TEST_IN_SHARD(&h.opt, 3)) run_determinism(&h);

    static const size_t small_sizes[] = {0, 1, 2, 31, 1000};
    /* 16 tiles: the CUDA small tier's last size (256 KiB) and the first of the 32 KiB tiles; 32: their last
     * (512 KiB) and the first of the 64 KiB tiles */
    static const long tile_sizes[][2] = {{1, -1}, {1, 0}, {1, 1}, {2, -3}, {2, 0}, {2, 1}, {16, 0}, {16, 1},
                                         {24, 7}, {32, 0}, {32, 1}, {127, 5}, {128, 0}, {129, 3}};
    unsigned size_index = 0;
    if (h.opt.only_n >= 0) { /* one size, every type and operator asked for, five ways each */
        run_size(&h, (size_t)h.opt.only_n, -1, 0, size_index);
        finish(&h);
        return h.failed ? 1 : 0;
    }
    for (size_t k = 0; k < sizeof small_sizes / sizeof small_sizes[0]; k++)
        run_size(&h, small_sizes[k], -1, 0, size_index++);
    for (size_t k = 0; k < sizeof tile_sizes / sizeof tile_sizes[0]; k++)
        run_size(&h, 0, tile_sizes[k][0], tile_sizes[k][1], size_index++);
    printf("test_reduce: random size %zu\n", random_n);
    run_size(&h, random_n, -1, 0, size_index++);
    if (TEST_IN_SHARD(&h.opt, 4) && opencl) run_many_tiles(&h, size_index++, opencl_many_tiles_n);
    if (TEST_IN_SHARD(&h.opt, 5) && cuda) run_many_tiles(&h, size_index++, cuda_many_tiles_n);
    if (TEST_IN_SHARD(&h.opt, 6) && cuda) run_many_tiles(&h, size_index++, cuda_waves_tiles_n);

    finish(&h);
    return h.failed ? 1 : 0;
}
