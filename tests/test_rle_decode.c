/*
 * test_rle_decode.c - run-length decoding is pscan_expand(), read as a specification of the recipe in
 * docs/api.md ("Run-length decoding"): pscan_run_length_encode() then pscan_expand() with the lengths as counts
 * and the run values as the values to gather gives back the input, bit for bit.
 *
 *   test_rle_decode --backend cpu|cuda [--algo NAME] [--quick] [--seed S] [--threads T]
 *
 *  - Every type (so value_bytes 1, 2, 4 and 8), at n = 0, 1, 2, 1000, around the CUDA tiles (2047 .. 4097),
 *    100003 and 2^20 + 5 (not with --quick), runs of average length 1, 3, 8 and 1000, and one run of the whole
 *    input. Neighbouring runs differ bit for bit (as the encoder sees them).
 *  - Two forms, both checked against the input:
 *      exact: the run count downloaded first (one synchronisation), expand over that many runs, temp given by
 *             the caller one byte into a buffer (test_caller_temp);
 *      async: lengths zero-filled before the encode, expand over n items (runs <= n; the zero lengths past the
 *             run count add no slots), nothing downloaded between the two calls, temp from the workspace.
 *    In both, *total == n and decoded slots past n (a guard) keep their poison.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 * The closing line reads "test_rle_decode: P passed, F failed".
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#define MAX_REPORTS 20
#define GUARD 16 /* elements past n in the decoded buffer that must keep their poison */

typedef struct harness {
    test_options opt;
    pscan_context *ctx;
    unsigned long passed, failed, reports;
} harness;

#include "test_harness.h"
TEST_HARNESS_CHECKS(harness)

/* n elements of esize bytes in runs that start at each element with probability 1 / length (length 0: one run),
 * each run's value random and different from the run before it. */
static void make_runs(unsigned char *x, size_t n, size_t esize, uint64_t length, test_rng *rng) {
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && (length == 0 || test_rng_next(rng) % length != 0)) {
            memcpy(x + i * esize, x + (i - 1) * esize, esize);
            continue;
        }
        do {
            const uint64_t r = test_rng_next(rng);
            memcpy(x + i * esize, &r, esize); /* little-endian: the low bytes */
        } while (i > 0 && memcmp(x + i * esize, x + (i - 1) * esize, esize) == 0);
    }
}

/* Encodes then decodes (form async or exact) n elements of type and checks the result. */
static void run_case(harness *h, pscan_type type, size_t n, uint64_t length, int async, uint64_t seed) {
    const size_t esize = pscan_type_size(type), slots = n + GUARD;
    char what[200];
    snprintf(what, sizeof what, "%s n=%zu run length %" PRIu64 " (%s) seed=%" PRIu64, pscan_type_name(type), n,
             length, async ? "async" : "exact", seed);
    test_rng rng = {seed};
    unsigned char *in = (unsigned char *)malloc(n * esize + 1), *got = (unsigned char *)malloc(slots * esize);
    void *d_in = NULL, *d_values = NULL, *d_lengths = NULL, *d_runs = NULL, *d_out = NULL, *d_total = NULL;
    void *temp_buf = NULL;
    size_t temp_buf_bytes = 0;
    pscan_status s = in && got ? PSCAN_SUCCESS : PSCAN_ERROR_OUT_OF_MEMORY;
    if (s == PSCAN_SUCCESS) make_runs(in, n, esize, length, &rng);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, n * esize + 1, &d_in);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, n * esize + 1, &d_values);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, n * 8 + 8, &d_lengths);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, 8, &d_runs);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, slots * esize, &d_out);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(h->ctx, 8, &d_total);
    if (s == PSCAN_SUCCESS && n) s = pscan_memory_upload(h->ctx, d_in, in, n * esize);
    memset(got, TEST_POISON, slots * esize);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(h->ctx, d_out, got, slots * esize);
    if (s == PSCAN_SUCCESS && async) { /* zero lengths past the run count: they add no slots */
        unsigned char *zeros = (unsigned char *)calloc(n * 8 + 8, 1);
        s = zeros ? pscan_memory_upload(h->ctx, d_lengths, zeros, n * 8 + 8) : PSCAN_ERROR_OUT_OF_MEMORY;
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(h->ctx);
        free(zeros);
    }
    if (s != PSCAN_SUCCESS) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: setup failed: %s", what, pscan_status_name(s));
        fail_report(h, msg);
        goto done;
    }

    /* ---- encode ---- */
    const pscan_rle_desc rle = {type, h->opt.algo};
    EXPECT_STATUS(h, PSCAN_SUCCESS,
                  pscan_run_length_encode(h->ctx, &rle, d_in, n, d_values, (uint64_t *)d_lengths, (uint64_t *)d_runs,
                                          NULL, 0));
    uint64_t runs = n; /* async: every item, the zero-length ones too */
    if (!async) {
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_memory_download(h->ctx, &runs, d_runs, sizeof runs));
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_context_synchronize(h->ctx));
    }

    /* ---- decode: expand the runs' values by their lengths, values only ---- */
    const pscan_expand_desc decode = {PSCAN_TYPE_U64, PSCAN_TYPE_U64, esize, h->opt.algo};
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (!async) {
        EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_expand_temp_bytes(h->ctx, &decode, runs, n, &temp_bytes));
        temp = test_caller_temp(h->ctx, &temp_buf, &temp_buf_bytes, temp_bytes);
        EXPECT(h, temp != NULL);
    }
    EXPECT_STATUS(h, PSCAN_SUCCESS,
                  pscan_expand(h->ctx, &decode, d_lengths, d_values, runs, NULL, NULL, d_out, n, (uint64_t *)d_total,
                               temp, temp_bytes));
    uint64_t total = UINT64_MAX;
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_memory_download(h->ctx, &total, d_total, sizeof total));
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_memory_download(h->ctx, got, d_out, slots * esize));
    EXPECT_STATUS(h, PSCAN_SUCCESS, pscan_context_synchronize(h->ctx));

    /* ---- check: the input again, the total n, the guard untouched ---- */
    if (total != n) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: total %" PRIu64 ", expected %zu", what, total, n);
        fail_report(h, msg);
    }
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (memcmp(got + i * esize, in + i * esize, esize) != 0) bad = i;
    for (size_t i = n * esize; i < slots * esize && bad == n; i++)
        if (got[i] != TEST_POISON) bad = i / esize;
    if (bad != n) {
        char msg[300];
        snprintf(msg, sizeof msg, "%s: decoded element %zu differs from the input%s", what, bad,
                 bad >= n ? " (past n: the guard was written)" : "");
        fail_report(h, msg);
    } else {
        h->passed++;
    }
done:
    pscan_memory_free(h->ctx, d_in), pscan_memory_free(h->ctx, d_values), pscan_memory_free(h->ctx, d_lengths);
    pscan_memory_free(h->ctx, d_runs), pscan_memory_free(h->ctx, d_out), pscan_memory_free(h->ctx, d_total);
    pscan_memory_free(h->ctx, temp_buf);
    free(in), free(got);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    if (test_parse_options("test_rle_decode", argc, argv, 0x41E0DEC0DEull, 0, &h.opt)) return 1;
    int rc = test_open_context("test_rle_decode", &h.opt, &h.ctx);
    if (rc != 0) return rc;

    static const size_t sizes[] = {0, 1, 2, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 100003, (1u << 20) + 5};
    static const uint64_t lengths[] = {1, 3, 8, 1000, 0 /* one run */};
    const size_t size_count = sizeof sizes / sizeof sizes[0] - (h.opt.quick ? 1 : 0);
    uint64_t index = 0;
    for (int t = 0; t < PSCAN_TYPE_COUNT; t++)
        for (size_t z = 0; z < size_count; z++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                for (int async = 0; async < 2; async++)
                    run_case(&h, (pscan_type)t, sizes[z], lengths[l], async, test_mix64(h.opt.seed + ++index));

    pscan_context_destroy(h.ctx);
    printf("test_rle_decode: %lu passed, %lu failed\n", h.passed, h.failed);
    return h.failed ? 1 : 0;
}
