/*
 * test_widen.c - the widened scan (PSCAN_SCAN_WIDEN), read as a specification: a narrow type summed or multiplied
 * into its 64-bit type.
 *
 *   test_widen --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]
 *
 * Every result is checked against a serial loop written here, in the wide type (never the library's):
 *  - run_table(): every type that widens (i8 i16 i32 -> i64, u8 u16 u32 -> u64, f32 -> f64) x sum and product x
 *    inclusive / exclusive x forward / reverse, with the identity or an initial value, at sizes around the CUDA
 *    tiles (512, 4096 and 5632 wide elements) and the CPU's blocks (65536), input and output at their allocation's
 *    start or one element in (the vector loads' alignment), caller temp at +1 byte or the workspace. Integers must
 *    match exactly (sums of full-range values pass 2^32; products wrap modulo 2^64 as the wide type's own product
 *    does); f32 sums and products match the serial double loop within 1e-12 of the magnitudes summed (a parallel
 *    algorithm groups them differently), and a second run gives the same bits. The elements past n stay poisoned.
 *    OpenCL (no offsets: its handles are buffers): every algorithm, and an f32 result has the bits of the same
 *    algorithm's f64 scan of the converted input (the widened program is the f64 one with a converting load).
 *  - run_bad_inputs(): each refusal returns its exact status and leaves the output as it was: another operator,
 *    an unknown flag, out == in (every backend) and a partial overlap (address backends), an algorithm that does
 *    not widen (CUDA's teaching algorithms), pscan_scan_host on a GPU backend; a 64-bit type with the flag is an
 *    ordinary scan, in place too; pscan_type_widened's table.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device. An f32
 * case on an OpenCL device without f64 (PSCAN_ERROR_UNSUPPORTED_TYPE) is counted as skipped, as test_scan does.
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#define GUARD 8 /* wide elements past n that must keep the poison */

typedef test_options options;

typedef struct harness {
    options opt;
    pscan_context *ctx;
    int addresses;  /* handles are addresses (CPU, CUDA): offsets and partial overlaps can be tested */
    int f64_order;  /* an f32 result must have the bits of the f64 scan of the converted input (OpenCL) */
    unsigned long passed, failed, reports, skipped;
    void *temp_buf;
    size_t temp_buf_bytes;
} harness;

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)

static const pscan_type narrow_types[] = {PSCAN_TYPE_I8,  PSCAN_TYPE_I16, PSCAN_TYPE_I32, PSCAN_TYPE_U8,
                                          PSCAN_TYPE_U16, PSCAN_TYPE_U32, PSCAN_TYPE_F32};
#define NARROW_COUNT (sizeof narrow_types / sizeof narrow_types[0])

/* Element i of a narrow array as the wide type's value (int64 for signed, uint64 as int64 bits, double). */
static int64_t narrow_int(pscan_type t, const void *a, uint64_t i) {
    switch (t) {
    case PSCAN_TYPE_I8: return ((const int8_t *)a)[i];
    case PSCAN_TYPE_I16: return ((const int16_t *)a)[i];
    case PSCAN_TYPE_I32: return ((const int32_t *)a)[i];
    case PSCAN_TYPE_U8: return ((const uint8_t *)a)[i];
    case PSCAN_TYPE_U16: return ((const uint16_t *)a)[i];
    default: return ((const uint32_t *)a)[i];
    }
}

/* Random narrow data: full range for sums; for products, values whose running product keeps changing (mostly
 * 1, some 2, 3 and -1, never 0 past the start) so a wrong element shows; f32: magnitudes around 1. */
static void fill(pscan_type t, pscan_op op, void *a, uint64_t n, test_rng *rng) {
    const size_t size = pscan_type_size(t);
    for (uint64_t i = 0; i < n; i++) {
        const uint64_t r = test_rng_next(rng);
        if (t == PSCAN_TYPE_F32) {
            const double u = test_rng_unit(rng);
            const float v = op == PSCAN_OP_SUM ? (float)(u * 200.0 - 100.0) : (float)(0.999 + u * 0.002);
            memcpy((char *)a + i * 4, &v, 4);
            continue;
        }
        uint64_t v = r;
        if (op == PSCAN_OP_PRODUCT) {
            const int signed_type = t == PSCAN_TYPE_I8 || t == PSCAN_TYPE_I16 || t == PSCAN_TYPE_I32;
            const unsigned pick = (unsigned)(r % 16);
            v = pick < 11 ? 1 : pick < 14 ? 2 : pick < 15 ? 3 : signed_type ? (uint64_t)-1 : 5;
        }
        memcpy((char *)a + i * size, &v, size); /* little-endian: the low bytes */
    }
}

/* The serial reference: out[i] in the wide type (8 bytes each). */
static void reference(pscan_type t, pscan_op op, int exclusive, int reverse, const void *init, const void *in,
                      uint64_t n, void *out) {
    if (t == PSCAN_TYPE_F32) {
        double carry;
        memcpy(&carry, init, 8);
        for (uint64_t j = 0; j < n; j++) {
            const uint64_t i = reverse ? n - 1 - j : j;
            const double x = ((const float *)in)[i];
            if (exclusive) memcpy((char *)out + i * 8, &carry, 8);
            carry = op == PSCAN_OP_SUM ? carry + x : carry * x;
            if (!exclusive) memcpy((char *)out + i * 8, &carry, 8);
        }
        return;
    }
    uint64_t carry; /* two's complement: signed and unsigned wrap alike */
    memcpy(&carry, init, 8);
    for (uint64_t j = 0; j < n; j++) {
        const uint64_t i = reverse ? n - 1 - j : j;
        const uint64_t x = (uint64_t)narrow_int(t, in, i);
        if (exclusive) memcpy((char *)out + i * 8, &carry, 8);
        carry = op == PSCAN_OP_SUM ? carry + x : carry * x;
        if (!exclusive) memcpy((char *)out + i * 8, &carry, 8);
    }
}

/* Whether got matches want: exactly for integers; f32 within 1e-12 of the magnitudes behind each value. */
static int matches(pscan_type t, pscan_op op, const void *got, const void *want, const double *scale, uint64_t n,
                   uint64_t *bad) {
    for (uint64_t i = 0; i < n; i++) {
        if (t != PSCAN_TYPE_F32) {
            if (memcmp((const char *)got + i * 8, (const char *)want + i * 8, 8) != 0) return *bad = i, 0;
            continue;
        }
        double g, w;
        memcpy(&g, (const char *)got + i * 8, 8);
        memcpy(&w, (const char *)want + i * 8, 8);
        const double tol = op == PSCAN_OP_SUM ? 1e-12 * scale[i] + 1e-300 : 1e-12 * fabs(w) * (double)(n + 1);
        if (!(fabs(g - w) <= tol)) return *bad = i, 0;
    }
    return 1;
}

/* got, a widened f32 scan's n results, against the f64 scan of in converted, by the same algorithm with the same
 * flags and init: the bits must be equal (OpenCL's promise: the same tiles, in the same order of combines). */
static void check_f64_order(harness *h, const pscan_scan_desc *widened, const unsigned char *in, uint64_t n,
                            const unsigned char *got, const char *what) {
    double *wide = malloc((size_t)n * 8), *want = malloc((size_t)n * 8);
    void *buf = NULL;
    pscan_scan_desc d = *widened;
    d.type = PSCAN_TYPE_F64;
    d.flags &= ~PSCAN_SCAN_WIDEN;
    pscan_status s = wide && want ? pscan_memory_alloc(h->ctx, (size_t)n * 8, &buf) : PSCAN_ERROR_OUT_OF_MEMORY;
    for (uint64_t i = 0; s == PSCAN_SUCCESS && i < n; i++) {
        float x;
        memcpy(&x, in + i * 4, 4);
        wide[i] = x;
    }
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, buf, wide, (size_t)n * 8);
    if (s == PSCAN_SUCCESS) s = pscan_scan(h->ctx, &d, buf, buf, n, NULL, 0);
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(h->ctx, want, buf, (size_t)n * 8);
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(h->ctx);
    char msg[600];
    snprintf(msg, sizeof msg, "%s: the f64 scan of the converted input %s", what,
             s != PSCAN_SUCCESS ? pscan_status_name(s) : "gave other bits");
    check(h, s == PSCAN_SUCCESS && memcmp(got, want, (size_t)n * 8) == 0, __FILE__, __LINE__, msg);
    if (buf) pscan_memory_free(h->ctx, buf);
    free(wide);
    free(want);
}

/* One widened scan on the device: in at in_off narrow elements, out at out_off wide ones into their buffers;
 * checks the result, the poison past it and a repeat's bits. */
static void run_case(harness *h, pscan_type t, pscan_op op, unsigned flags, int with_init, uint64_t n, int in_off,
                     int out_off, int caller_temp, test_rng *rng) {
    const size_t isz = pscan_type_size(t), wsz = 8;
    const pscan_type wt = pscan_type_widened(t);
    const int exclusive = (flags & PSCAN_SCAN_EXCLUSIVE) != 0, reverse = (flags & PSCAN_SCAN_REVERSE) != 0;
    char what[400];
    snprintf(what, sizeof what, "%s->%s %s%s%s n=%" PRIu64 " in+%d out+%d %s%s", pscan_type_name(t),
             pscan_type_name(wt), pscan_op_name(op), exclusive ? " exclusive" : "", reverse ? " reverse" : "", n,
             in_off, out_off, with_init ? "init" : "identity", caller_temp ? " temp+1" : "");
    const size_t in_bytes = (size_t)(n + in_off) * isz + 1, out_bytes = (size_t)(n + out_off + GUARD) * wsz;
    unsigned char *hin = malloc(in_bytes), *hout = malloc(out_bytes), *want = malloc((size_t)n * wsz + 8),
                  *again = malloc(out_bytes);
    double *scale = malloc((size_t)(n + 1) * sizeof *scale);
    void *din = NULL, *dout = NULL;
    if (!hin || !hout || !want || !again || !scale || pscan_memory_alloc(h->ctx, in_bytes, &din) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h->ctx, out_bytes, &dout) != PSCAN_SUCCESS) {
        fail_report(h, "allocation failed");
        goto done;
    }
    memset(hin, 0, in_bytes);
    fill(t, op, hin + (size_t)in_off * isz, n, rng);
    unsigned char init[8];
    if (t == PSCAN_TYPE_F32) {
        const double v = with_init ? (op == PSCAN_OP_SUM ? 12.5 : 0.75) : (op == PSCAN_OP_SUM ? 0.0 : 1.0);
        memcpy(init, &v, 8);
    } else {
        const uint64_t v = with_init ? (op == PSCAN_OP_SUM ? (uint64_t)-77 - (test_rng_next(rng) & 0xffff) : 3)
                                     : (op == PSCAN_OP_SUM ? 0 : 1);
        memcpy(init, &v, 8);
    }
    reference(t, op, exclusive, reverse, init, hin + (size_t)in_off * isz, n, want);
    if (t == PSCAN_TYPE_F32) { /* the magnitudes summed up to each output */
        double acc = fabs(*(double *)(void *)init);
        for (uint64_t j = 0; j < n; j++) {
            const uint64_t i = reverse ? n - 1 - j : j;
            acc += fabs((double)((const float *)(void *)(hin + (size_t)in_off * isz))[i]);
            scale[i] = acc;
        }
    }
    memset(hout, TEST_POISON, out_bytes);
    if (pscan_memory_upload(h->ctx, din, hin, in_bytes) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, dout, hout, out_bytes) != PSCAN_SUCCESS) {
        fail_report(h, "upload failed");
        goto done;
    }
    const pscan_scan_desc d = {t, op, flags | PSCAN_SCAN_WIDEN, h->opt.algo, with_init ? init : NULL};
    size_t tb = 0;
    pscan_status s = pscan_scan_temp_bytes(h->ctx, &d, n, &tb);
    void *temp = NULL;
    if (s == PSCAN_SUCCESS && caller_temp && tb) temp = test_caller_temp(h->ctx, &h->temp_buf, &h->temp_buf_bytes, tb);
    const void *src = (const char *)din + (h->addresses ? (size_t)in_off * isz : 0);
    void *dst = (char *)dout + (h->addresses ? (size_t)out_off * wsz : 0);
    for (int rep = 0; rep < 2 && s == PSCAN_SUCCESS; rep++) {
        s = pscan_scan(h->ctx, &d, src, dst, n, temp, temp ? tb : 0);
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(h->ctx);
        if (s == PSCAN_SUCCESS) s = pscan_memory_download(h->ctx, rep ? again : hout, dout, out_bytes);
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(h->ctx);
    }
    char msg[600];
    if (s == PSCAN_ERROR_UNSUPPORTED_TYPE && t == PSCAN_TYPE_F32 && h->f64_order) {
        h->skipped++; /* an OpenCL device without cl_khr_fp64 has no f64 to widen into: a clear status is right */
        goto done;
    }
    if (s != PSCAN_SUCCESS) {
        snprintf(msg, sizeof msg, "%s: %s", what, pscan_status_name(s));
        fail_report(h, msg);
        goto done;
    }
    const size_t at = h->addresses ? (size_t)out_off * wsz : 0;
    uint64_t bad = 0;
    int ok = matches(t, op, hout + at, want, scale, n, &bad);
    if (!ok) {
        uint64_t g, w;
        memcpy(&g, hout + at + bad * wsz, 8);
        memcpy(&w, want + bad * wsz, 8);
        snprintf(msg, sizeof msg, "%s: out[%" PRIu64 "] = 0x%016" PRIx64 ", expected 0x%016" PRIx64, what, bad, g, w);
    }
    check(h, ok, __FILE__, __LINE__, ok ? what : msg);
    int poisoned = 1;
    for (size_t b = 0; b < out_bytes; b++)
        if ((b < at || b >= at + (size_t)n * wsz) && hout[b] != TEST_POISON) poisoned = 0;
    snprintf(msg, sizeof msg, "%s: a byte outside out[0, n) was written", what);
    check(h, poisoned, __FILE__, __LINE__, msg);
    snprintf(msg, sizeof msg, "%s: a second run gave other bits", what);
    check(h, memcmp(hout, again, out_bytes) == 0, __FILE__, __LINE__, msg);
    if (t == PSCAN_TYPE_F32 && h->f64_order) check_f64_order(h, &d, hin + (size_t)in_off * isz, n, hout + at, what);
done:
    if (din) pscan_memory_free(h->ctx, din);
    if (dout) pscan_memory_free(h->ctx, dout);
    free(hin);
    free(hout);
    free(want);
    free(again);
    free(scale);
}

static void run_table(harness *h) {
    test_rng rng = {h->opt.seed};
    /* CUDA: 512 wide elements a small-tier tile, 4096 a default one, 5632 a large one; the CPU's block 65536 */
    static const uint64_t sizes[] = {1, 2, 31, 511, 512, 513, 4095, 4096, 4097, 5633, 8191 * 2 + 1, 65535, 65537,
                                     16 * 4096 + 3, 100003};
    static const uint64_t more[] = {(1u << 20) + 7, (1u << 22) + 4097};
    const size_t nsizes = sizeof sizes / sizeof sizes[0];
    unsigned k = 0;
    for (size_t ti = 0; ti < NARROW_COUNT; ti++) {
        for (int op = 0; op < 2; op++) {
            const pscan_op o = op ? PSCAN_OP_PRODUCT : PSCAN_OP_SUM;
            for (unsigned flags = 0; flags < 4; flags++) {
                for (size_t si = 0; si < nsizes; si++, k++) {
                    if (h->opt.quick && si % 2 == 1 && si + 1 < nsizes) continue;
                    const int off = h->addresses && k % 3 == 1;
                    run_case(h, narrow_types[ti], o, flags, (int)(k % 2), sizes[si], off, h->addresses && k % 5 == 2,
                             k % 4 == 3, &rng);
                }
            }
        }
    }
    if (!h->opt.quick)
        for (size_t ti = 0; ti < NARROW_COUNT; ti++)
            for (size_t m = 0; m < sizeof more / sizeof more[0]; m++, k++)
                run_case(h, narrow_types[ti], PSCAN_OP_SUM, (unsigned)(k % 4), 1, more[m], 0, 0, 0, &rng);
}

/* A refused call: the status, and out (and in) as they were. */
static void expect_refusal(harness *h, const pscan_scan_desc *d, pscan_status expected, int in_place, int partial,
                           int host, const char *what) {
    const uint64_t n = 1000;
    unsigned char hin[4 * 1000 + 64], hout[8 * 1000 + 64], after[8 * 1000 + 64];
    memset(hin, 7, sizeof hin);
    memset(hout, TEST_POISON, sizeof hout);
    void *din = NULL, *dout = NULL;
    pscan_status s;
    char msg[500];
    if (host) {
        memcpy(after, hout, sizeof hout);
        s = pscan_scan_host(h->ctx, d, hin, after, n);
        snprintf(msg, sizeof msg, "%s: pscan_scan_host returned %s, expected %s", what, pscan_status_name(s),
                 pscan_status_name(expected));
        check(h, s == expected, __FILE__, __LINE__, msg);
        check(h, memcmp(after, hout, sizeof hout) == 0, __FILE__, __LINE__, what);
        return;
    }
    if (pscan_memory_alloc(h->ctx, sizeof hout, &dout) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, dout, hout, sizeof hout) != PSCAN_SUCCESS ||
        (!in_place && !partial && (pscan_memory_alloc(h->ctx, sizeof hin, &din) != PSCAN_SUCCESS ||
                                   pscan_memory_upload(h->ctx, din, hin, sizeof hin) != PSCAN_SUCCESS))) {
        fail_report(h, "allocation failed");
        goto done;
    }
    const void *src = in_place ? dout : partial ? (const char *)dout + 8 : din;
    size_t tb = 0;
    const pscan_status q = pscan_scan_temp_bytes(h->ctx, d, n, &tb);
    s = pscan_scan(h->ctx, d, src, dout, n, NULL, 0);
    snprintf(msg, sizeof msg, "%s: pscan_scan returned %s, expected %s", what, pscan_status_name(s),
             pscan_status_name(expected));
    check(h, s == expected, __FILE__, __LINE__, msg);
    /* the size query refuses what the call refuses, overlaps aside (it sees no pointers) */
    if (!in_place && !partial) {
        snprintf(msg, sizeof msg, "%s: pscan_scan_temp_bytes returned %s", what, pscan_status_name(q));
        check(h, q == expected, __FILE__, __LINE__, msg);
    }
    if (pscan_memory_download(h->ctx, after, dout, sizeof after) != PSCAN_SUCCESS ||
        pscan_context_synchronize(h->ctx) != PSCAN_SUCCESS) {
        fail_report(h, "download failed");
        goto done;
    }
    snprintf(msg, sizeof msg, "%s: the output was written", what);
    check(h, memcmp(after, hout, sizeof hout) == 0, __FILE__, __LINE__, msg);
done:
    if (din) pscan_memory_free(h->ctx, din);
    if (dout) pscan_memory_free(h->ctx, dout);
}

static void run_bad_inputs(harness *h) {
    /* the table of widened types */
    for (int t = 0; t < PSCAN_TYPE_COUNT; t++) {
        const pscan_type w = pscan_type_widened((pscan_type)t);
        const int f = t == PSCAN_TYPE_F32 || t == PSCAN_TYPE_F64;
        const int sgn = t == PSCAN_TYPE_I8 || t == PSCAN_TYPE_I16 || t == PSCAN_TYPE_I32 || t == PSCAN_TYPE_I64;
        EXPECT(h, w == (f ? PSCAN_TYPE_F64 : sgn ? PSCAN_TYPE_I64 : PSCAN_TYPE_U64));
    }
    EXPECT(h, pscan_type_widened(PSCAN_TYPE_COUNT) == PSCAN_TYPE_COUNT);
    EXPECT(h, pscan_type_widened((pscan_type)-1) == PSCAN_TYPE_COUNT);

    const pscan_scan_desc sum = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_WIDEN, h->opt.algo, NULL};
    pscan_scan_desc d = sum;
    d.op = PSCAN_OP_MAX;
    expect_refusal(h, &d, PSCAN_ERROR_UNSUPPORTED_OPERATOR, 0, 0, 0, "widened max");
    d = sum;
    d.flags |= 8u;
    expect_refusal(h, &d, PSCAN_ERROR_INVALID_VALUE, 0, 0, 0, "an unknown flag");
    expect_refusal(h, &sum, PSCAN_ERROR_OVERLAP, 1, 0, 0, "widened in place");
    if (h->addresses) expect_refusal(h, &sum, PSCAN_ERROR_OVERLAP, 0, 1, 0, "widened over part of its input");
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_context_backend(h->ctx, &backend);
    if (backend == PSCAN_BACKEND_CUDA) {
        d = sum;
        d.algo = PSCAN_ALGO_BLELLOCH;
        expect_refusal(h, &d, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, 0, 0, 0, "widened on a teaching algorithm");
    }
    if (backend != PSCAN_BACKEND_CPU)
        expect_refusal(h, &sum, PSCAN_ERROR_UNSUPPORTED_ALGORITHM, 0, 0, 1, "widened pscan_scan_host on a GPU");

    /* a 64-bit type with the flag is an ordinary scan, in place too */
    enum { N = 3000 };
    int64_t hv[N], want[N], got[N];
    test_rng rng = {h->opt.seed ^ 0x5eed};
    int64_t acc = 5;
    for (int i = 0; i < N; i++) hv[i] = (int64_t)(test_rng_next(&rng) >> 20), want[i] = acc += hv[i];
    const int64_t five = 5;
    const pscan_scan_desc wide = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_SCAN_WIDEN, h->opt.algo, &five};
    void *buf = NULL;
    if (pscan_memory_alloc(h->ctx, sizeof hv, &buf) != PSCAN_SUCCESS ||
        pscan_memory_upload(h->ctx, buf, hv, sizeof hv) != PSCAN_SUCCESS) {
        fail_report(h, "allocation failed");
        return;
    }
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_scan(h->ctx, &wide, buf, buf, N, NULL, 0));
    if (pscan_memory_download(h->ctx, got, buf, sizeof got) == PSCAN_SUCCESS &&
        pscan_context_synchronize(h->ctx) == PSCAN_SUCCESS)
        EXPECT(h, memcmp(got, want, sizeof got) == 0);
    else
        fail_report(h, "download failed");
    pscan_memory_free(h->ctx, buf);

    /* the host scan on a backend whose data are host memory */
    if (backend == PSCAN_BACKEND_CPU) {
        int16_t small[N];
        int64_t out[N], ref[N];
        int64_t run = 0;
        for (int i = 0; i < N; i++) small[i] = (int16_t)(test_rng_next(&rng) >> 48), ref[i] = run += small[i];
        const pscan_scan_desc d16 = {PSCAN_TYPE_I16, PSCAN_OP_SUM, PSCAN_SCAN_WIDEN, h->opt.algo, NULL};
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_scan_host(h->ctx, &d16, small, out, N));
        EXPECT(h, memcmp(out, ref, sizeof out) == 0);
    }
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_widen", argc, argv, 0x77696465ull, 0, &h.opt)) return 1;
    int rc = test_open_context("test_widen", &h.opt, &h.ctx);
    if (rc != 0) return rc;
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_context_backend(h.ctx, &backend);
    h.addresses = backend != PSCAN_BACKEND_OPENCL;
    h.f64_order = backend == PSCAN_BACKEND_OPENCL;
    run_bad_inputs(&h);
    run_table(&h);
    if (h.temp_buf) pscan_memory_free(h.ctx, h.temp_buf);
    pscan_context_destroy(h.ctx);
    printf("test_widen: %lu passed, %lu failed", h.passed, h.failed);
    if (h.skipped) printf(", %lu skipped (no f64 on the device)", h.skipped);
    printf("\n");
    return h.failed ? 1 : 0;
}
