/*
 * test_scan.c - the scan test table, read as a specification of pscan_scan().
 *
 *   test_scan --backend cpu|cuda|opencl --algo NAME [--quick] [--large | --large-bytes] [--seed S]
 *             [--type T] [--op O] [--n N] [--threads T]
 *
 * (--type, --op narrow the table; --n N runs only that size, any N, with all 16 flag combinations; --threads T
 * sizes the CPU backend's pool, e.g. more threads than cores to shake out races. The seed
 * defaults to PSCAN_TEST_SEED, else a fixed value; PSCAN_TEST_REQUIRE_BACKENDS="opencl ..." turns a missing
 * backend into a failure instead of a skip.)
 *
 * For one backend and one algorithm: every element type x every operator the type has x inclusive/exclusive
 * x forward/reverse x in place/out of place x identity/given initial value, over sizes around the tile
 * boundaries of the GPU algorithms (0, 1, 2, 3, 31..33, 1023..1025, 2^k-1..2^k+1, primes), each result checked
 * element by element against a plain serial loop written here. That loop is deliberately not the library's
 * SERIAL algorithm, so that the CPU backend is tested like every other one.
 * Sizes beyond 2^16+1 (2^17 and 2^17+-1, 1000003, 2^20+1, 3*2^20+7) run every type x operator with one flag combination
 * each, rotating, so the table stays affordable on a 2-core CI machine; --quick keeps fewer of them and
 * --large adds 2^24+1 and 2^25-1 (for GPU runs). --large-bytes runs, instead of the table, 2^28+17 elements of the
 * 1-byte types, the first size of their large tier on CUDA (256 MiB; its sums are packed a word at a time:
 * block/packed.cuh): all 16 flag combinations of the sum split between u8 and i8 (one takes the in-place ones, the
 * other the rest), each other operator once on one of the two. A case there costs about 5 s of host work on the
 * GPU machine (the input, the serial reference, the check); all 16 combinations on both types and every operator
 * (44 cases) took 334 s, past gpu-check's 330 s for the whole suite, so it is a ctest of its own, in parallel.
 *
 * Everything goes through the public API (pscan_memory_alloc/upload/download, pscan_context_synchronize), so
 * the same table runs on every backend. Both temporary-storage paths are used: a caller buffer of exactly
 * pscan_scan_temp_bytes() (filled with junk first, so an algorithm cannot rely on zeroed scratch) and the
 * context workspace (temp == NULL).
 *
 * What counts as correct:
 *   - integers: exact, wrapping modulo 2^bits like the reference (which works in uint64 with an explicit mask);
 *   - f32/f64 min and max: exact (the result is always one of the inputs, the init or +-infinity);
 *   - f32/f64 product: exact, because the factors are +-1 and a few +-2^(+-1), so every partial product in
 *     any order is a representable power of two (see random_float());
 *   - f32/f64 sum: relative error against a long double reference in scan order, within a tolerance that
 *     allows for the reordering of a parallel algorithm (see float_tolerance());
 *   - NaN never passes; elements past n (a guard zone) must stay untouched; an out-of-place scan must leave
 *     its input untouched; before each out-of-place run the output holds the bitwise complement of the
 *     expected result, so an element the algorithm forgets to write can never pass by accident.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_scan: P passed, F failed[, S skipped]"; a case is skipped only when the device
 * lacks the type (PSCAN_ERROR_UNSUPPORTED_TYPE, f64 on some OpenCL devices). An algorithm the backend should
 * have but lacks is a failure, never a skip.
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

/* Elements of guard zone after each buffer: catches a last tile that writes past n. */
#ifdef PSCAN_TEST_OPENCL_HOOKS
/* The OpenCL backend's look-back test hooks (opencl_backend.c; static library only): rebuild the look-back
 * kernel with another spin limit and a tile that stalls until a fallback happened; the fallbacks of the last
 * look-back scan. */
pscan_status ps_opencl_debug_set_lookback(pscan_context *ctx, unsigned spin_limit, long stall_tile);
pscan_status ps_opencl_debug_fallbacks(pscan_context *ctx, unsigned *fallbacks);
pscan_status ps_opencl_debug_set_lookback_window(pscan_context *ctx, unsigned window);
#endif

#define GUARD_ELEMS 64
/* Failure reports printed in full; later failures are only counted. */
#define MAX_REPORTS 20

/* ---- the element types and the serial reference: test_reference.h (written out by hand: the test is the
 * spec, not a copy of the library's lists) ---- */
#include "test_reference.h"

/* The scan as the header defines it, one element at a time, in scan order:
 *   inclusive: out[i] = init + in[first] + ... + in[i];  exclusive: the same without in[i];
 *   reverse runs from n-1 down to 0. */
static void reference_int(const type_info *t, pscan_op op, int exclusive, int reverse, uint64_t init,
                          const unsigned char *in, size_t n, uint64_t *expected) {
    uint64_t acc = init;
    for (size_t k = 0; k < n; k++) {
        size_t i = reverse ? n - 1 - k : k;
        uint64_t x = load_raw(in, i, t->bytes);
        if (exclusive) {
            expected[i] = acc;
            acc = int_combine(t, op, acc, x);
        } else {
            acc = int_combine(t, op, acc, x);
            expected[i] = acc;
        }
    }
}

static void reference_float(const type_info *t, pscan_op op, int exclusive, int reverse, long double init,
                            const unsigned char *in, size_t n, long double *expected) {
    long double acc = init;
    for (size_t k = 0; k < n; k++) {
        size_t i = reverse ? n - 1 - k : k;
        long double x = load_float(in, i, t);
        if (exclusive) {
            expected[i] = acc;
            acc = float_combine(op, acc, x);
        } else {
            acc = float_combine(op, acc, x);
            expected[i] = acc;
        }
    }
}

/* Relative error allowed for a float sum of n terms.
 * Inputs are chosen so that no cancellation happens (values in [0, 1)), so every prefix is a sum of positive
 * terms and the relative error of any evaluation order is bounded by (number of roundings on the longest
 * path) * eps. A tree-shaped parallel scan has log2(n) of them; a blocked one (CPU threads, many items per GPU
 * thread) has up to a block's length, but its rounding errors are independent and unbiased, so they grow like
 * sqrt(n) * eps in practice (measured: a serial f32 sum of 3*2^20 such values is off by at most 5e-5 at any
 * prefix). Hence log2(n) terms with a generous constant (1e-4 for f32, 1e-12 for f64: far above the log-depth
 * bound, far below any missing or doubled term near the start of the array) plus 8 sqrt(n) eps, several
 * standard deviations of the blocked case. A lost or doubled term deep inside a huge array may hide below this;
 * the integer types, which run the same algorithm code, are compared exactly and catch it. */
static long double float_tolerance(const type_info *t, size_t n) {
    double lg = n > 1 ? log2((double)n) : 0.0;
    if (t->bytes == 4) return 1e-4 * (lg + 1.0) + 8.0 * FLT_EPSILON * sqrt((double)n);
    return 1e-12 * (lg + 1.0) + 8.0 * DBL_EPSILON * sqrt((double)n);
}

/* ---- input data ---------------------------------------------------------------------------------------- */

/* Integers: full-range random bits, so sums and products wrap all the time. Products use odd values (a unit
 * modulo 2^bits) so the running product never collapses to 0 after a few even factors; and/or use values with
 * few cleared/set bits so the running value does not saturate within the first handful of elements. */
static uint64_t random_int(test_rng *rng, const type_info *t, pscan_op op) {
    uint64_t mask = width_mask(t);
    uint64_t r = test_rng_next(rng);
    switch (op) {
    case PSCAN_OP_PRODUCT: return (r | 1) & mask;
    case PSCAN_OP_AND: {
        uint64_t sparse = r & test_rng_next(rng) & test_rng_next(rng) & test_rng_next(rng) & test_rng_next(rng);
        return ~sparse & mask; /* each bit cleared with probability 1/32 */
    }
    case PSCAN_OP_OR:
        return r & test_rng_next(rng) & test_rng_next(rng) & test_rng_next(rng) & test_rng_next(rng) & mask;
    default: return r & mask;
    }
}

/* Floats.
 * sum: values in [0, 1) (monotone prefixes, no cancellation). An f32 running sum of more than about 2^22 such
 * values reaches 2^23, where the spacing of floats is 1 and every further term is rounded with a bias in a
 * serial-order loop; for large n only one element in sparse_every is nonzero (zeros add exactly), which keeps
 * the number of real terms near 2^21 at every n.
 * product: +-1, and at most PRODUCT_OCTAVES factors of +-2 or +-1/2 spread over the array: the product of any
 * subset of the factors, in any order, with an init of +-2^(+-3), is an exact power of two within f32's range,
 * so products compare exactly whatever order an algorithm combines them in (the CPU's reductions run 8
 * interleaved lanes, so "contiguous" is not enough). The signs check every factor's presence by parity.
 * (Values near 1, such as exp(u) for small u, would drift: f32 rounding of such products has a systematic
 * bias, so the error of n factors grows like n * eps in any order and no order-independent bound is useful.)
 * min/max: values of many magnitudes and both signs. */
#define PRODUCT_OCTAVES 96
static long double random_float(test_rng *rng, const type_info *t, pscan_op op, size_t sparse_every,
                                size_t n, int *octaves_left) {
    switch (op) {
    case PSCAN_OP_SUM: {
        uint64_t r = test_rng_next(rng);
        if (sparse_every > 1 && (r & 0xFFFF) % sparse_every != 0) return 0.0L;
        /* 24 or 53 random bits: exactly representable in the element type */
        return t->bytes == 4 ? (long double)(test_rng_next(rng) >> 40) * 0x1.0p-24L : test_rng_unit(rng);
    }
    case PSCAN_OP_PRODUCT: {
        uint64_t r = test_rng_next(rng);
        int k = 0;
        /* a power of two other than 1 with probability about PRODUCT_OCTAVES / (2n), half of them at most */
        if (*octaves_left > 0 && (r >> 32) % (2 * n + 2) < PRODUCT_OCTAVES) {
            k = (r & 2) ? 1 : -1;
            (*octaves_left)--;
        }
        return (r & 1) ? -ldexpl(1.0L, k) : ldexpl(1.0L, k);
    }
    default: {
        uint64_t r = test_rng_next(rng);
        return ldexp(test_rng_unit(rng) * 2.0 - 1.0, (int)(r % 41) - 20);
    }
    }
}

/* ---- the run ------------------------------------------------------------------------------------------- */


/* Buffers sized once for the largest n, reused by every case. */
typedef struct harness {
    test_options opt;
    pscan_context *ctx;
    size_t max_n;         /* the largest n of the run: the host buffers' size */
    size_t determinism_n; /* the floats' repeated-bits check: the largest n every type runs at */
    unsigned char *h_in, *h_stage, *h_got, *h_check, *h_junk;
    uint64_t *exp_int;
    long double *exp_float;
    void *d_in, *d_out, *d_temp;
    size_t d_temp_bytes;
    unsigned long passed, failed, skipped, reports;
} harness;

typedef struct scan_case {
    const type_info *t;
    pscan_op op;
    unsigned flags;
    int in_place, with_init, caller_temp;
    size_t n;
} scan_case;

static unsigned char guard_byte(size_t j) { return (unsigned char)(0xC3u + 17u * (unsigned)j); }

static void describe(const harness *h, const scan_case *c, FILE *f) {
    fprintf(f, "backend=%s algo=%s type=%s op=%s flags=%s|%s place=%s init=%s temp=%s n=%zu",
            pscan_backend_name(h->opt.backend), pscan_algo_name(h->opt.algo), c->t->name, pscan_op_name(c->op),
            (c->flags & PSCAN_SCAN_EXCLUSIVE) ? "exclusive" : "inclusive",
            (c->flags & PSCAN_SCAN_REVERSE) ? "reverse" : "forward", c->in_place ? "in-place" : "out-of-place",
            c->with_init ? "given" : "identity", c->caller_temp ? "caller" : "workspace", c->n);
}

static void report_rerun(const harness *h, const scan_case *c) {
    fprintf(stderr, "  rerun: test_scan --backend %s --algo %s --seed %" PRIu64 " --type %s --op %s --n %zu\n",
            pscan_backend_name(h->opt.backend), pscan_algo_name(h->opt.algo), h->opt.seed, c->t->name,
            pscan_op_name(c->op), c->n);
}

/* Records one failed case; prints it unless enough have been printed already. */
static void fail_case(harness *h, const scan_case *c, const char *what) {
    h->failed++;
    if (h->reports++ >= MAX_REPORTS) return;
    fprintf(stderr, "FAIL: ");
    describe(h, c, stderr);
    fprintf(stderr, ": %s\n", what);
    report_rerun(h, c);
}

static void format_value(const type_info *t, const unsigned char *buf, size_t i, char *text, size_t size) {
    if (t->is_float) {
        snprintf(text, size, "%.17Lg", load_float(buf, i, t));
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

/* Compares h_got with the reference; returns the first wrong index, or n when all elements are right. */
static size_t first_mismatch(const harness *h, const scan_case *c) {
    const type_info *t = c->t;
    if (!t->is_float) {
        for (size_t i = 0; i < c->n; i++)
            if (load_raw(h->h_got, i, t->bytes) != h->exp_int[i]) return i;
        return c->n;
    }
    int exact = c->op != PSCAN_OP_SUM;
    long double tol = float_tolerance(t, c->n);
    for (size_t i = 0; i < c->n; i++) {
        long double got = load_float(h->h_got, i, t);
        long double want = h->exp_float[i];
        if (isnan(got)) return i;
        if (exact) {
            /* min/max: an input, the init or +-infinity; product: a power of two (see random_float) */
            if (got != want) return i;
        } else if (fabsl(got - want) > tol * fabsl(want)) {
            return i;
        }
    }
    return c->n;
}

static int ensure_temp(harness *h, size_t bytes) {
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

/* Runs one case on the input already in h_in (n elements followed by the guard zone). */
static void run_case(harness *h, const scan_case *c, uint64_t init_int, long double init_float) {
    const type_info *t = c->t;
    size_t n = c->n, eb = t->bytes, bytes = (n + GUARD_ELEMS) * eb;
    int exclusive = (c->flags & PSCAN_SCAN_EXCLUSIVE) != 0, reverse = (c->flags & PSCAN_SCAN_REVERSE) != 0;
    char what[512];

    /* the expected result, and the init value in the element type */
    unsigned char init_bytes[8];
    if (t->is_float) {
        long double init = c->with_init ? init_float : float_identity(c->op);
        reference_float(t, c->op, exclusive, reverse, init, h->h_in, n, h->exp_float);
        store_float(init_bytes, 0, t, init_float);
    } else {
        uint64_t init = c->with_init ? init_int : int_identity(t, c->op);
        reference_int(t, c->op, exclusive, reverse, init, h->h_in, n, h->exp_int);
        store_raw(init_bytes, 0, eb, init_int);
    }

    /* stage the buffers: out-of-place output starts as the complement of the expected result */
    pscan_status s = PSCAN_SUCCESS;
    void *src;
    if (c->in_place) {
        s = pscan_memory_upload(h->ctx, h->d_out, h->h_in, bytes);
        src = h->d_out;
    } else {
        for (size_t i = 0; i < n; i++) {
            if (t->is_float) {
                unsigned char tmp[8];
                store_float(tmp, 0, t, h->exp_float[i]);
                store_raw(h->h_stage, i, eb, ~load_raw(tmp, 0, eb));
            } else {
                store_raw(h->h_stage, i, eb, ~h->exp_int[i]);
            }
        }
        memcpy(h->h_stage + n * eb, h->h_in + n * eb, GUARD_ELEMS * eb);
        s = pscan_memory_upload(h->ctx, h->d_in, h->h_in, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, h->d_out, h->h_stage, bytes);
        src = h->d_in;
    }
    if (s != PSCAN_SUCCESS) {
        snprintf(what, sizeof what, "staging upload returned %s", pscan_status_name(s));
        fail_case(h, c, what);
        return;
    }

    pscan_scan_desc desc = {t->type, c->op, c->flags, h->opt.algo, c->with_init ? init_bytes : NULL};
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (c->caller_temp) {
        s = pscan_scan_temp_bytes(h->ctx, &desc, n, &temp_bytes);
        if (s == PSCAN_SUCCESS && temp_bytes > 0) {
            if (!ensure_temp(h, temp_bytes)) {
                snprintf(what, sizeof what, "could not allocate %zu bytes of temporary storage", temp_bytes);
                fail_case(h, c, what);
                return;
            }
            s = pscan_memory_upload(h->ctx, h->d_temp, h->h_junk, temp_bytes);
            temp = h->d_temp;
        }
    }
    if (s == PSCAN_SUCCESS) s = pscan_scan(h->ctx, &desc, src, h->d_out, n, temp, temp_bytes);
    if (s == PSCAN_ERROR_UNSUPPORTED_TYPE) {
        h->skipped++; /* the device has no such type (f64 on some OpenCL devices): a clear status is right */
        return;
    }
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(h->ctx, h->h_got, h->d_out, bytes);
    if (s == PSCAN_SUCCESS && !c->in_place) s = pscan_memory_download(h->ctx, h->h_check, h->d_in, bytes);
    pscan_status sync = pscan_context_synchronize(h->ctx);
    if (s == PSCAN_SUCCESS) s = sync;
    if (s != PSCAN_SUCCESS) {
        long long native = 0;
        pscan_context_native_error(h->ctx, &native);
        snprintf(what, sizeof what, "returned %s (native error %lld)", pscan_status_name(s), native);
        fail_case(h, c, what);
        return;
    }

    size_t bad = first_mismatch(h, c);
    if (bad < n) {
        char got[96], want[96];
        format_value(t, h->h_got, bad, got, sizeof got);
        if (t->is_float) {
            snprintf(want, sizeof want, "%.17Lg", h->exp_float[bad]);
        } else {
            unsigned char tmp[8];
            store_raw(tmp, 0, eb, h->exp_int[bad]);
            format_value(t, tmp, 0, want, sizeof want);
        }
        snprintf(what, sizeof what, "index %zu: got %s, expected %s", bad, got, want);
        fail_case(h, c, what);
        return;
    }
    for (size_t j = 0; j < GUARD_ELEMS * eb; j++) {
        if (h->h_got[n * eb + j] != guard_byte(j)) {
            snprintf(what, sizeof what, "wrote past the end: guard byte %zu (element n+%zu) changed", j, j / eb);
            fail_case(h, c, what);
            return;
        }
    }
    if (!c->in_place && memcmp(h->h_check, h->h_in, bytes) != 0) {
        size_t j = 0;
        while (h->h_check[j] == h->h_in[j]) j++;
        snprintf(what, sizeof what, "an out-of-place scan modified its input at element %zu", j / eb);
        fail_case(h, c, what);
        return;
    }
    h->passed++;
}

/* Fills h_in with n elements for (type, op) followed by the guard zone. Seeded by (seed, type, op, n) only, so
 * a failure reruns identically with --type/--op/--n filters. Returns the initial values to use. */
static void make_input(harness *h, const type_info *t, pscan_op op, size_t n, uint64_t *init_int,
                       long double *init_float) {
    test_rng rng = {test_mix64(h->opt.seed ^ test_mix64(((uint64_t)t->type << 48) ^ ((uint64_t)op << 40) ^ n))};
    size_t sparse_every = t->bytes == 4 && n > (1u << 21) ? n >> 21 : 1;
    int octaves_left = PRODUCT_OCTAVES;
    for (size_t i = 0; i < n; i++) {
        if (t->is_float)
            store_float(h->h_in, i, t, random_float(&rng, t, op, sparse_every, n, &octaves_left));
        else
            store_raw(h->h_in, i, t->bytes, random_int(&rng, t, op));
    }
    for (size_t j = 0; j < GUARD_ELEMS * t->bytes; j++) h->h_in[n * t->bytes + j] = guard_byte(j);
    *init_int = random_int(&rng, t, op);
    /* rounded to the element type, as the library will see it */
    unsigned char tmp[8];
    long double init = 0.0L;
    if (op == PSCAN_OP_PRODUCT) {
        uint64_t r = test_rng_next(&rng);
        init = ldexpl((r & 1) ? -1.0L : 1.0L, (int)((r >> 1) % 7) - 3);
    } else {
        int unused = 0;
        init = random_float(&rng, t->is_float ? t : &types[PSCAN_TYPE_F64], op, 1, 1, &unused);
    }
    store_float(tmp, 0, t->is_float ? t : &types[PSCAN_TYPE_F64], init);
    *init_float = load_float(tmp, 0, t->is_float ? t : &types[PSCAN_TYPE_F64]);
}

/* The 16 flag combinations of a case, as bits: exclusive, reverse, in place, given init. */
static scan_case make_case(const type_info *t, pscan_op op, size_t n, unsigned combo, unsigned size_index) {
    scan_case c;
    c.t = t;
    c.op = op;
    c.n = n;
    c.flags = ((combo & 1) ? PSCAN_SCAN_EXCLUSIVE : 0u) | ((combo & 2) ? PSCAN_SCAN_REVERSE : 0u);
    c.in_place = (combo & 4) != 0;
    c.with_init = (combo & 8) != 0;
    /* caller temp or workspace: the parity of all four flags and the size, so each flag meets both paths */
    c.caller_temp = (int)((combo ^ (combo >> 1) ^ (combo >> 2) ^ (combo >> 3) ^ size_index) & 1u);
    return c;
}

/* Runs every type x operator at size n. full: all 16 flag combinations for every operator (1), for the sum only and
 * one, rotating, for the others (2), or one, rotating, for each (0). elem_bytes: only the types of that many bytes
 * (0: every type). */
static void run_size(harness *h, size_t n, unsigned size_index, int full, size_t elem_bytes) {
    size_t bytes = (n + GUARD_ELEMS) * 8;
    if (pscan_memory_alloc(h->ctx, bytes, &h->d_in) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h->ctx, bytes, &h->d_out) != PSCAN_SUCCESS) {
        fprintf(stderr, "FAIL: could not allocate 2 x %zu bytes on the device for n=%zu\n", bytes, n);
        h->failed++;
        pscan_memory_free(h->ctx, h->d_in);
        h->d_in = NULL;
        return;
    }
    for (unsigned ti = 0; ti < TYPE_COUNT; ti++) {
        const type_info *t = &types[ti];
        if (!TEST_TYPE_SELECTED(&h->opt, t->type)) continue;
        if (elem_bytes && t->bytes != elem_bytes) continue;
        for (unsigned oi = 0; oi < OP_COUNT; oi++) {
            pscan_op op = ops[oi];
            if (!TEST_OP_SELECTED(&h->opt, op)) continue;
            if (t->is_float && op_is_bitwise(op)) continue;
            if (full == 2 && op != PSCAN_OP_SUM && ((ti + oi) & 1u)) continue; /* every other operator on one type */
            uint64_t init_int;
            long double init_float;
            make_input(h, t, op, n, &init_int, &init_float);
            if (full == 1) {
                for (unsigned combo = 0; combo < 16; combo++) {
                    scan_case c = make_case(t, op, n, combo, size_index);
                    run_case(h, &c, init_int, init_float);
                }
            } else if (full == 2 && op == PSCAN_OP_SUM) {
                /* the types of elem_bytes share the 16 combinations: the in-place bit (4) by the type's parity */
                for (unsigned combo = 0; combo < 16; combo++) {
                    if (((combo >> 2) & 1u) != (ti & 1u)) continue;
                    scan_case c = make_case(t, op, n, combo, size_index);
                    run_case(h, &c, init_int, init_float);
                }
            } else {
                unsigned combo = (ti * 7u + oi * 3u + size_index * 5u) & 15u;
                scan_case c = make_case(t, op, n, combo, size_index);
                run_case(h, &c, init_int, init_float);
            }
        }
    }
    pscan_memory_free(h->ctx, h->d_in);
    pscan_memory_free(h->ctx, h->d_out);
    h->d_in = h->d_out = NULL;
}

/* ---- fixed cases: the worked example and integer wraparound, spelled out ------------------------------- */

typedef struct fixed_case {
    pscan_type type;
    pscan_op op;
    unsigned flags;
    int64_t init; /* used when has_init */
    int has_init;
    size_t n;
    int64_t in[8];
    int64_t expected[8]; /* as the type's values; u64 uses the bit pattern */
} fixed_case;

static const fixed_case fixed_cases[] = {
    /* the header's worked example */
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3}, {3, 4, 11, 11, 15, 16, 22, 25}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3},
     {0, 3, 4, 11, 11, 15, 16, 22}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_REVERSE, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3},
     {25, 22, 21, 14, 14, 10, 9, 3}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE, 0, 0, 8, {3, 1, 7, 0, 4, 1, 6, 3},
     {22, 21, 14, 14, 10, 9, 3, 0}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, 100, 1, 8, {3, 1, 7, 0, 4, 1, 6, 3},
     {100, 103, 104, 111, 111, 115, 116, 122}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 100, 1, 8, {3, 1, 7, 0, 4, 1, 6, 3}, {103, 104, 111, 111, 115, 116, 122, 125}},
    /* integer arithmetic wraps modulo 2^bits, signed types too */
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 0, 0, 2, {INT32_MAX, 1}, {INT32_MAX, INT32_MIN}},
    {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, 0, 0, 2, {255, 1}, {255, 0}},
    {PSCAN_TYPE_I8, PSCAN_OP_SUM, 0, 0, 0, 3, {127, 1, -1}, {127, -128, 127}},
    {PSCAN_TYPE_I64, PSCAN_OP_SUM, 0, 0, 0, 2, {INT64_MAX, 1}, {INT64_MAX, INT64_MIN}},
    {PSCAN_TYPE_U64, PSCAN_OP_SUM, 0, 0, 0, 2, {-1, 2}, {-1, 1}},
    {PSCAN_TYPE_U16, PSCAN_OP_PRODUCT, 0, 0, 0, 2, {256, 256}, {256, 0}},
    {PSCAN_TYPE_I16, PSCAN_OP_PRODUCT, 0, 0, 0, 3, {200, 200, -1}, {200, -25536, 25536}},
    {PSCAN_TYPE_U32, PSCAN_OP_PRODUCT, 0, 0, 0, 2, {65536, 65537}, {65536, 65536}},
    {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, INT32_MAX, 1, 2, {1, 1}, {INT32_MAX, INT32_MIN}},
    /* signed order for min/max, identity of min/max on an exclusive scan */
    {PSCAN_TYPE_I8, PSCAN_OP_MAX, PSCAN_SCAN_EXCLUSIVE, 0, 0, 3, {-5, 3, -128}, {-128, -5, 3}},
    {PSCAN_TYPE_U8, PSCAN_OP_MIN, PSCAN_SCAN_EXCLUSIVE, 0, 0, 3, {200, 7, 255}, {255, 200, 7}},
};

static void run_fixed(harness *h) {
    for (size_t k = 0; k < sizeof fixed_cases / sizeof fixed_cases[0]; k++) {
        const fixed_case *f = &fixed_cases[k];
        const type_info *t = &types[f->type];
        size_t eb = t->bytes;
        unsigned char in[64], out[64], init[8];
        for (size_t i = 0; i < f->n; i++) store_raw(in, i, eb, (uint64_t)f->in[i]);
        store_raw(init, 0, eb, (uint64_t)f->init);
        pscan_scan_desc desc = {f->type, f->op, f->flags, h->opt.algo, f->has_init ? init : NULL};
        void *d = NULL;
        pscan_status s = pscan_memory_alloc(h->ctx, f->n * eb, &d);
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, d, in, f->n * eb);
        if (s == PSCAN_SUCCESS) s = pscan_scan(h->ctx, &desc, d, d, f->n, NULL, 0);
        if (s == PSCAN_SUCCESS) s = pscan_memory_download(h->ctx, out, d, f->n * eb);
        pscan_status sync = pscan_context_synchronize(h->ctx);
        if (s == PSCAN_SUCCESS) s = sync;
        pscan_memory_free(h->ctx, d);
        int ok = s == PSCAN_SUCCESS;
        for (size_t i = 0; ok && i < f->n; i++)
            ok = load_raw(out, i, eb) == ((uint64_t)f->expected[i] & width_mask(t));
        if (ok) {
            h->passed++;
            continue;
        }
        h->failed++;
        fprintf(stderr, "FAIL: fixed case %zu: backend=%s algo=%s type=%s op=%s flags=%u init=%s n=%zu: %s; got",
                k, pscan_backend_name(h->opt.backend), pscan_algo_name(h->opt.algo), t->name,
                pscan_op_name(f->op), f->flags, f->has_init ? "given" : "identity", f->n, pscan_status_name(s));
        for (size_t i = 0; s == PSCAN_SUCCESS && i < f->n; i++) {
            char text[64];
            format_value(t, out, i, text, sizeof text);
            fprintf(stderr, " %s", text);
        }
        fprintf(stderr, "\n");
    }
}

/* ---- main ---------------------------------------------------------------------------------------------- */

/* ---- determinism: a float sum scan gives the same bits on every call ---------------------------------------- */

/* Three calls of the same f32 and f64 sum scans (forward and reverse exclusive) of 3 x 2^20 + 7 random floats
 * of both signs and many magnitudes, on fresh outputs: every byte must match the first call's. On the CPU the
 * size is past AUTO's threading threshold, so AUTO must not switch algorithms between calls (it would change
 * the rounding); on a GPU there are hundreds of tiles, so the look-back must not depend on timing.
 * The OpenCL look-back (with the static library's hooks) is also perturbed on purpose, since a quiet CPU
 * runtime rarely varies its timing by itself: call 1 stalls tile 1 until another work-group has reduced it by
 * fallback (so the tiles after it meet other finished predecessors than in call 0), call 2 gives up waiting
 * after one round, stalls tile 5 and reads one predecessor per round (so every walk past an aggregate folds
 * the aggregates of its earlier rounds again from the status entries). The classic look-back fails this (its
 * fallback reduced a tile in another order, and it combined what it met right to left). */
#ifdef PSCAN_TEST_OPENCL_HOOKS
typedef struct lookback_setting {
    unsigned spin_limit;
    long stall_tile;
    unsigned window;
} lookback_setting;
/* {256, -1, 64}: the backend's default */
static const lookback_setting determinism_settings[3] = {{256, -1, 64}, {8, 1, 32}, {1, 5, 1}};
#endif

static pscan_status determinism_set(harness *h, int run) {
#ifdef PSCAN_TEST_OPENCL_HOOKS
    if (h->opt.backend == PSCAN_BACKEND_OPENCL && h->opt.algo == PSCAN_ALGO_DECOUPLED_LOOKBACK) {
        const lookback_setting *l = &determinism_settings[run];
        pscan_status s = ps_opencl_debug_set_lookback(h->ctx, l->spin_limit, l->stall_tile);
        return s == PSCAN_SUCCESS ? ps_opencl_debug_set_lookback_window(h->ctx, l->window) : s;
    }
#endif
    (void)h, (void)run;
    return PSCAN_SUCCESS;
}

/* After call run: how many fallbacks it took, printed for the perturbed OpenCL calls. */
static void determinism_note(harness *h, const char *type_name, unsigned flags, int run) {
#ifdef PSCAN_TEST_OPENCL_HOOKS
    unsigned fallbacks = 0;
    if (h->opt.backend == PSCAN_BACKEND_OPENCL && h->opt.algo == PSCAN_ALGO_DECOUPLED_LOOKBACK && run > 0 &&
        ps_opencl_debug_fallbacks(h->ctx, &fallbacks) == PSCAN_SUCCESS)
        printf("test_scan: determinism %s flags %u call %d: spin limit %u, tile %ld stalled, window %u, "
               "%u fallbacks\n", type_name, flags, run, determinism_settings[run].spin_limit,
               determinism_settings[run].stall_tile, determinism_settings[run].window, fallbacks);
#endif
    (void)h, (void)type_name, (void)flags, (void)run;
}

static void run_determinism(harness *h) {
    const size_t n = h->determinism_n;
    for (unsigned fi = 0; fi < 2; fi++) {
        const type_info *t = &types[fi == 0 ? PSCAN_TYPE_F32 : PSCAN_TYPE_F64];
        if (!TEST_TYPE_SELECTED(&h->opt, t->type)) continue;
        test_rng rng = {test_mix64(h->opt.seed ^ 0xD37u ^ (uint64_t)t->type)};
        for (size_t i = 0; i < n; i++)
            store_float(h->h_in, i, t, ldexp(test_rng_unit(&rng) * 2.0 - 1.0, (int)(test_rng_next(&rng) % 21) - 10));
        const size_t bytes = n * t->bytes;
        for (unsigned flags = 0; flags <= (PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE); flags += 3) {
            pscan_scan_desc desc = {t->type, PSCAN_OP_SUM, flags, h->opt.algo, NULL};
            void *d_in = NULL, *d_out = NULL;
            pscan_status s = pscan_memory_alloc(h->ctx, bytes, &d_in);
            if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, bytes, &d_out);
            if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, d_in, h->h_in, bytes);
            for (int run = 0; run < 3 && s == PSCAN_SUCCESS; run++) {
                unsigned char *dst = run == 0 ? h->h_check : h->h_got;
                memset(h->h_stage, 0x5a + run, bytes);
                s = determinism_set(h, run);
                if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, d_out, h->h_stage, bytes); /* fresh output */
                if (s == PSCAN_SUCCESS) s = pscan_scan(h->ctx, &desc, d_in, d_out, n, NULL, 0);
                if (s == PSCAN_SUCCESS) s = pscan_memory_download(h->ctx, dst, d_out, bytes);
                if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(h->ctx);
                if (s != PSCAN_SUCCESS || run == 0) continue;
                determinism_note(h, t->name, flags, run);
                size_t i = 0;
                while (i < n && memcmp(h->h_check + i * t->bytes, h->h_got + i * t->bytes, t->bytes) == 0) i++;
                if (i == n) {
                    h->passed++;
                } else {
                    h->failed++;
                    if (h->reports++ < MAX_REPORTS)
                        fprintf(stderr, "FAIL determinism: %s sum flags %u n=%zu: call %d differs from call 0 at %zu "
                                "(0x%" PRIx64 " vs 0x%" PRIx64 ")\n", t->name, flags, n, run, i,
                                load_raw(h->h_got, i, t->bytes), load_raw(h->h_check, i, t->bytes));
                }
            }
            if (s != PSCAN_SUCCESS) {
                h->failed++;
                if (h->reports++ < MAX_REPORTS)
                    fprintf(stderr, "FAIL determinism: %s sum flags %u n=%zu: %s\n", t->name, flags, n,
                            pscan_status_name(s));
            }
            /* back to the default kernel for the rest of the table */
            pscan_status r = determinism_set(h, 0);
            if (r != PSCAN_SUCCESS) {
                h->failed++;
                if (h->reports++ < MAX_REPORTS)
                    fprintf(stderr, "FAIL determinism: restoring the look-back: %s\n", pscan_status_name(r));
            }
            pscan_memory_free(h->ctx, d_in);
            pscan_memory_free(h->ctx, d_out);
        }
    }
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_scan", argc, argv, 20260101, TEST_OPT_LARGE | TEST_OPT_ONLY, &h.opt) != 0) return 2;
    if (TYPE_COUNT != PSCAN_TYPE_COUNT || OP_COUNT != PSCAN_OP_COUNT) {
        fprintf(stderr, "test_scan: FAIL: the library has types or operators this table does not know\n");
        return 1;
    }

    /* all 16 flag combinations: around every tile boundary a GPU algorithm is likely to have */
    static const size_t full_sizes[] = {0,     1,     2,     3,     31,    32,    33,    1000,  1023, 1024,
                                        1025,  2047,  2048,  2049,  4093,  4095,  4096,  4097,  8191, 8192,
                                        8193,  16383, 16384, 16385, 65521, 65535, 65536, 65537};
    /* one rotating flag combination per type x operator: multi-level spines and many tiles */
    static const size_t quick_sizes[] = {131071, 131073, (1u << 20) + 1};
    static const size_t more_sizes[] = {131072, 1000003, 3u * (1u << 20) + 7};
    static const size_t large_sizes[] = {(1u << 24) + 1, (1u << 25) - 1};
    static const size_t large_byte_size = (1u << 28) + 17; /* 1-byte types only */
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

    h.max_n = 3u * (1u << 20) + 7;
    if (h.opt.large == 1) h.max_n = (1u << 25);
    if (h.opt.only_n > (long long)h.max_n) h.max_n = (size_t)h.opt.only_n;
    h.determinism_n = h.max_n;
    if (h.opt.large == 2) h.max_n = large_byte_size;
    int rc = test_open_context("test_scan", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    printf("test_scan: algo %s, seed %" PRIu64 "%s%s\n", pscan_algo_name(h.opt.algo), h.opt.seed,
           h.opt.quick ? ", quick" : "", h.opt.large == 2 ? ", large bytes" : h.opt.large ? ", large" : "");

    /* an algorithm this backend must implement but does not is a failure, reported once */
    pscan_scan_desc probe = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, h.opt.algo, NULL};
    size_t probe_bytes = 0;
    pscan_status s = pscan_scan_temp_bytes(h.ctx, &probe, 1024, &probe_bytes);
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "FAIL: backend %s, algo %s: pscan_scan_temp_bytes returned %s\n",
                pscan_backend_name(h.opt.backend), pscan_algo_name(h.opt.algo), pscan_status_name(s));
        printf("test_scan: 0 passed, 1 failed\n");
        pscan_context_destroy(h.ctx);
        return 1;
    }

    size_t cap = (h.max_n + GUARD_ELEMS) * 8;
    h.h_in = (unsigned char *)malloc(cap);
    h.h_stage = (unsigned char *)malloc(cap);
    h.h_got = (unsigned char *)malloc(cap);
    h.h_check = (unsigned char *)malloc(cap);
    h.exp_int = (uint64_t *)malloc(h.max_n * sizeof(uint64_t));
    h.exp_float = (long double *)malloc(h.max_n * sizeof(long double));
    if (!h.h_in || !h.h_stage || !h.h_got || !h.h_check || !h.exp_int || !h.exp_float) {
        fprintf(stderr, "test_scan: FAIL: out of host memory\n");
        return 1;
    }

    run_fixed(&h);
    if (TEST_OP_SELECTED(&h.opt, PSCAN_OP_SUM)) run_determinism(&h);
    if (h.opt.large == 2) {
        run_size(&h, large_byte_size, 0, 2, 1);
    } else if (h.opt.only_n >= 0) {
        /* one size, any size, with all 16 flag combinations: a superset of what the full run did at it */
        run_size(&h, (size_t)h.opt.only_n, 0, 1, 0);
    } else {
        unsigned size_index = 0;
        for (size_t k = 0; k < COUNT_OF(full_sizes); k++) run_size(&h, full_sizes[k], size_index++, 1, 0);
        for (size_t k = 0; k < COUNT_OF(quick_sizes); k++) run_size(&h, quick_sizes[k], size_index++, 0, 0);
        if (!h.opt.quick)
            for (size_t k = 0; k < COUNT_OF(more_sizes); k++) run_size(&h, more_sizes[k], size_index++, 0, 0);
        if (h.opt.large) {
            for (size_t k = 0; k < COUNT_OF(large_sizes); k++) run_size(&h, large_sizes[k], size_index++, 0, 0);
        }
    }

    if (h.failed) {
        if (h.reports > MAX_REPORTS) fprintf(stderr, "(%lu more failures not shown)\n", h.reports - MAX_REPORTS);
        fprintf(stderr, "test_scan: seed %" PRIu64 "; rerun with --seed %" PRIu64 " (add --type/--op/--n to narrow)\n",
                h.opt.seed, h.opt.seed);
    }
    if (h.skipped)
        printf("test_scan: %lu passed, %lu failed, %lu skipped\n", h.passed, h.failed, h.skipped);
    else
        printf("test_scan: %lu passed, %lu failed\n", h.passed, h.failed);

    pscan_memory_free(h.ctx, h.d_temp);
    pscan_context_destroy(h.ctx);
    free(h.h_in);
    free(h.h_stage);
    free(h.h_got);
    free(h.h_check);
    free(h.h_junk);
    free(h.exp_int);
    free(h.exp_float);
    return h.failed ? 1 : 0;
}
