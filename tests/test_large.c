/*
 * test_large.c - counts are 64-bit: a scan of 2^32 + 17 u8 elements, beyond every 32-bit index.
 *
 *   test_large [--backend cpu|cuda|opencl] [--algo NAME] [--seed S]
 *
 * Per algorithm (default: every one the backend must implement), two in-place scans of the same array:
 *   1. inclusive forward sum (wraps modulo 256 all the time);
 *   2. exclusive reverse xor with an initial value (the reverse index and the exclusive shift at 2^32).
 * (The CPU's SERIAL runs only the second by default, to keep the program near a minute on 2 cores.)
 * The input is a pure function of (seed, index), so the check regenerates it while it streams through the
 * result instead of keeping a second 4 GiB copy. On the CPU backend device pointers are host pointers (the
 * API's contract), so the array is filled and checked where it lies; on a GPU it goes through one host
 * buffer with pscan_memory_upload/download.
 * Exit 77 when the backend is absent or the device cannot hold the array.
 */
#define _POSIX_C_SOURCE 199309L /* clock_gettime */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pscan.h"
#include "test_common.h"

#define LARGE_N ((1ull << 32) + 17)
#define XOR_INIT 0x5Au

/* Input byte i: byte (i mod 8) of a hash of (seed, i / 8), so any element can be regenerated on its own. */
static uint64_t input_word(uint64_t seed, uint64_t word) { return test_mix64(seed ^ test_mix64(word)); }

static void fill(unsigned char *buf, uint64_t n, uint64_t seed) {
    uint64_t words = n / 8;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t x = input_word(seed, w);
        memcpy(buf + 8 * w, &x, 8); /* little-endian: byte k of the word is element 8w + k */
    }
    uint64_t x = input_word(seed, words);
    for (uint64_t i = 8 * words; i < n; i++) buf[i] = (unsigned char)(x >> (8 * (i % 8)));
}

static unsigned char input_byte(uint64_t seed, uint64_t i) {
    return (unsigned char)(input_word(seed, i / 8) >> (8 * (i % 8)));
}

/* The checks run a word (8 elements) at a time: one hash and one 8-byte compare per word. */

/* Returns the first wrong index of the inclusive forward sum, or n. */
static uint64_t check_sum(const unsigned char *out, uint64_t n, uint64_t seed) {
    unsigned char acc = 0;
    uint64_t words = n / 8;
    for (uint64_t w = 0; w < words; w++) {
        uint64_t x = input_word(seed, w), want = 0, got;
        for (int b = 0; b < 8; b++) {
            acc = (unsigned char)(acc + (unsigned char)(x >> (8 * b)));
            want |= (uint64_t)acc << (8 * b);
        }
        memcpy(&got, out + 8 * w, 8);
        if (got != want)
            for (int b = 0; b < 8; b++)
                if ((unsigned char)(got >> (8 * b)) != (unsigned char)(want >> (8 * b))) return 8 * w + b;
    }
    for (uint64_t i = 8 * words; i < n; i++) {
        acc = (unsigned char)(acc + input_byte(seed, i));
        if (out[i] != acc) return i;
    }
    return n;
}

/* Returns the first wrong index (from the end) of the exclusive reverse xor, or n. */
static uint64_t check_xor(const unsigned char *out, uint64_t n, uint64_t seed) {
    unsigned char acc = XOR_INIT;
    uint64_t words = n / 8;
    for (uint64_t i = n; i-- > 8 * words;) {
        if (out[i] != acc) return i;
        acc ^= input_byte(seed, i);
    }
    for (uint64_t w = words; w-- > 0;) {
        uint64_t x = input_word(seed, w), want = 0, got;
        for (int b = 7; b >= 0; b--) {
            want |= (uint64_t)acc << (8 * b);
            acc ^= (unsigned char)(x >> (8 * b));
        }
        memcpy(&got, out + 8 * w, 8);
        if (got != want)
            for (int b = 7; b >= 0; b--)
                if ((unsigned char)(got >> (8 * b)) != (unsigned char)(want >> (8 * b))) return 8 * w + b;
    }
    return n;
}

int main(int argc, char **argv) {
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_algo only_algo = PSCAN_ALGO_COUNT;
    uint64_t seed = 20260101;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(argv[i], "--backend") && pscan_backend_parse(v, &backend) == PSCAN_SUCCESS) {
            i++;
        } else if (v && !strcmp(argv[i], "--algo") && pscan_algo_parse(v, &only_algo) == PSCAN_SUCCESS) {
            i++;
        } else if (v && !strcmp(argv[i], "--seed")) {
            seed = strtoull(v, NULL, 0);
            i++;
        } else {
            fprintf(stderr, "usage: test_large [--backend cpu|cuda|opencl] [--algo NAME] [--seed S]\n");
            return 2;
        }
    }

    const pscan_algo *algos = NULL;
    size_t algo_count = test_backend_algos(backend, &algos);
    if (only_algo != PSCAN_ALGO_COUNT) {
        algos = &only_algo;
        algo_count = 1;
    }

    pscan_context *ctx = NULL;
    int rc = test_open_backend("test_large", backend, &ctx);
    if (rc != 0) return rc;
    pscan_backend actual = backend;
    pscan_context_backend(ctx, &actual);
    const uint64_t n = LARGE_N;
    printf("test_large: n = 2^32 + 17 = %" PRIu64 " u8 elements, seed %" PRIu64 "\n", n, seed);

    void *dev = NULL;
    pscan_status s = pscan_memory_alloc(ctx, (size_t)n, &dev);
    if (s == PSCAN_ERROR_OUT_OF_MEMORY) {
        printf("test_large: SKIP: the device cannot hold %" PRIu64 " bytes\n", n);
        pscan_context_destroy(ctx);
        return TEST_EXIT_SKIP;
    }
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "test_large: FAIL: pscan_memory_alloc: %s\n", pscan_status_name(s));
        pscan_context_destroy(ctx);
        return 1;
    }
    /* on the CPU the device buffer is host memory: fill and check it in place */
    int direct = actual == PSCAN_BACKEND_CPU;
    unsigned char *host = direct ? (unsigned char *)dev : (unsigned char *)malloc((size_t)n);
    if (!host) {
        printf("test_large: SKIP: no host memory for %" PRIu64 " bytes\n", n);
        pscan_memory_free(ctx, dev);
        pscan_context_destroy(ctx);
        return TEST_EXIT_SKIP;
    }

    unsigned long passed = 0, failed = 0;
    for (size_t a = 0; a < algo_count; a++) {
        /* the CPU's serial loop gets only the reverse pass (its forward loop is the simpler one), keeping
         * the whole program near a minute on a 2-core machine */
        int first_pass = actual == PSCAN_BACKEND_CPU && algos[a] == PSCAN_ALGO_SERIAL && algo_count > 1;
        for (int pass = first_pass; pass < 2; pass++) {
            unsigned char init = XOR_INIT;
            pscan_scan_desc desc = {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, algos[a], NULL};
            if (pass == 1) {
                desc.op = PSCAN_OP_XOR;
                desc.flags = PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE;
                desc.init = &init;
            }
            const char *what = pass == 0 ? "inclusive sum" : "exclusive reverse xor";
            double t0 = test_now_seconds();
            fill(host, n, seed);
            s = direct ? PSCAN_SUCCESS : pscan_memory_upload(ctx, dev, host, (size_t)n);
            double t1 = test_now_seconds();
            if (s == PSCAN_SUCCESS) s = pscan_scan(ctx, &desc, dev, dev, n, NULL, 0);
            if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
            double t2 = test_now_seconds();
            if (s == PSCAN_SUCCESS && !direct) s = pscan_memory_download(ctx, host, dev, (size_t)n);
            if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
            if (s != PSCAN_SUCCESS) {
                long long native = 0;
                pscan_context_native_error(ctx, &native);
                fprintf(stderr, "FAIL: backend=%s algo=%s %s n=%" PRIu64 ": %s (native error %lld)\n",
                        pscan_backend_name(actual), pscan_algo_name(algos[a]), what, n, pscan_status_name(s),
                        native);
                failed++;
                break;
            }
            uint64_t bad = pass == 0 ? check_sum(host, n, seed) : check_xor(host, n, seed);
            double t3 = test_now_seconds();
            if (bad < n) {
                unsigned char expected = 0;
                if (pass == 0) {
                    for (uint64_t i = 0; i <= bad; i++) expected = (unsigned char)(expected + input_byte(seed, i));
                } else {
                    expected = XOR_INIT;
                    for (uint64_t i = n - 1; i > bad; i--) expected ^= input_byte(seed, i);
                }
                fprintf(stderr,
                        "FAIL: backend=%s algo=%s %s n=%" PRIu64 " index=%" PRIu64 ": got %u, expected %u\n"
                        "  rerun: test_large --backend %s --algo %s --seed %" PRIu64 "\n",
                        pscan_backend_name(actual), pscan_algo_name(algos[a]), what, n, bad, host[bad], expected,
                        pscan_backend_name(actual), pscan_algo_name(algos[a]), seed);
                failed++;
            } else {
                passed++;
            }
            printf("test_large: %-20s %-22s %s  (fill %.1f s, scan %.2f s, check %.1f s)\n",
                   pscan_algo_name(algos[a]), what, bad < n ? "FAIL" : "ok", t1 - t0, t2 - t1, t3 - t2);
            fflush(stdout);
        }
    }

    if (!direct) free(host);
    pscan_memory_free(ctx, dev);
    pscan_context_destroy(ctx);
    printf("test_large: %lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
