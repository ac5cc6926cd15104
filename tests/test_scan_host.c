/*
 * test_scan_host.c - pscan_scan_host (host memory, out of core), read as its specification.
 *
 *   test_scan_host --backend cpu|cuda|opencl [--pinned] [--quick] [--seed S]
 *   test_scan_host --backend cuda --large BYTES [--pinned]     one u32 sum of BYTES of host memory, in place
 *   test_scan_host --backend cuda --bench BYTES                pinned: the scan against a copy up and down
 *
 * The table: every element type x every operator it has x {inclusive, exclusive} x {forward, reverse} x
 * {identity, a given init}, checked bit for bit against a serial scan computed here, with guard elements on both
 * sides of the output that must survive, in place and out of place. The piece size (pscan_context_set_host_chunk_bytes)
 * is set small so that the calls cross many pieces: 256 bytes (1-32 elements a piece; sizes up to 50 pieces),
 * 4 KiB (one small tile of the CUDA scan; up to 17 pieces), 100 KiB (3.125 large tiles: pieces end inside a
 * tile; 2^20 + 3 elements), and the default with sizes 0, 1, 1000 and 100003. Sizes sit at c-1, c, c+1 for a
 * piece of c elements. Float data are exact in any order (as in test_reduce.c), so every bit is checked.
 *
 * Host memory: malloc'd (pageable) by default; with --pinned (CUDA) the input is cudaMallocHost'd, and the
 * output too in every other case (the rest pageable: one pinned and one pageable buffer in one call).
 *
 * pscan_reduce_host: every type x operator x {identity, init}, sizes 0, 1 and around pieces of 256 bytes, 4 KiB
 * and the default, against the serial reduction, with guard bytes around the result; its refusals leave the
 * result untouched. pscan_select_host: every type x {flags, nonzero, unique, gt} x payloads of 0, 1, 4, 8 bytes,
 * at the same sizes, on data with runs (unique must drop a repeat that starts a piece), against a serial select,
 * with the outputs past the count untouched; refusals with their statuses.
 *
 * Bad input, each with its exact status and the output untouched: NULL ctx or desc, unknown flags, a NULL
 * buffer with n > 0, outputs overlapping the input by one element, n beyond 2^48 bytes, an algorithm the
 * backend lacks (CUDA, OpenCL: anything but AUTO and decoupled-lookback; CPU: a GPU algorithm), and on CUDA a
 * device pointer (PSCAN_ERROR_INVALID_VALUE). OpenCL runs the core's piece-by-piece driver (the carry through the
 * host): the same table, so on PoCL in CI the small piece sizes stand for a device smaller than the data.
 *
 * Exit: 0 all passed, 1 any failure, 77 when the backend is missing. Last line "test_scan_host: P passed, F failed".
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <pthread.h>
#include <unistd.h>

#include "pscan.h"
#include "test_common.h"
#include "test_reference.h"

#ifdef PSCAN_TEST_HAVE_CUDA
#include <cuda_runtime_api.h>
#endif

#define MAX_REPORTS 20

/* ---- host buffers: pageable or pinned -------------------------------------------------------------------- */

static void *host_alloc(size_t bytes, int pinned) {
#ifdef PSCAN_TEST_HAVE_CUDA
    if (pinned) {
        void *p = NULL;
        return cudaMallocHost(&p, bytes) == cudaSuccess ? p : NULL;
    }
#else
    (void)pinned;
#endif
    return malloc(bytes);
}

static void host_free(void *p, int pinned) {
#ifdef PSCAN_TEST_HAVE_CUDA
    if (pinned) {
        cudaFreeHost(p);
        return;
    }
#else
    (void)pinned;
#endif
    free(p);
}

/* ---- the harness --------------------------------------------------------------------------------------- */

typedef struct harness {
    pscan_context *ctx;
    pscan_backend backend;
    uint64_t seed;
    int pinned, quick;
    unsigned long passed, failed, reports;
} harness;

static void check(harness *h, int ok, const char *what) {
    if (ok) {
        h->passed++;
        return;
    }
    h->failed++;
    if (h->reports++ < MAX_REPORTS)
        fprintf(stderr, "FAIL: backend=%s seed=%" PRIu64 "%s: %s\n", pscan_backend_name(h->backend), h->seed,
                h->pinned ? " pinned" : "", what);
}

#define GUARD 0x5Au

/* One (type, operator, size) under one piece size: 4 flag sets x {identity, init}, alternating in place. */
static void run_case(harness *h, const type_info *t, pscan_op op, size_t n, size_t chunk_bytes, int *variant) {
    const size_t eb = t->bytes, bytes = (n + 2) * eb;
    unsigned char *g = (unsigned char *)malloc(n * eb + 1), *ref = (unsigned char *)malloc(n * eb + 1);
    test_rng rng = {test_mix64(h->seed ^ (uint64_t)n * 0x9E3779B97F4A7C15ull ^ ((uint64_t)t->type << 40) ^
                               ((uint64_t)op << 48) ^ chunk_bytes)};
    fill(&rng, t, op, g, n);
    const unsigned flag_sets[4] = {0, PSCAN_SCAN_EXCLUSIVE, PSCAN_SCAN_REVERSE,
                                   PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE};
    for (int f = 0; f < 4; f++) {
        for (int given = 0; given < 2; given++) {
            const int v = (*variant)++, in_place = v & 1, out_pinned = h->pinned && !in_place && (v & 2);
            unsigned char init[8] = {0};
            pick_init(&rng, t, op, given, init);
            reference_scan(t, op, flag_sets[f], init, g, n, ref);
            /* in at element 1 of its buffer, out at element 1 of its own (or the same one): guards either side */
            unsigned char *bin = (unsigned char *)host_alloc(bytes, h->pinned);
            unsigned char *bout = in_place ? bin : (unsigned char *)host_alloc(bytes, out_pinned);
            if (!bin || !bout) {
                check(h, 0, "host allocation failed");
                return;
            }
            memset(bout, GUARD, bytes);
            memcpy(bin + eb, g, n * eb);
            const pscan_scan_desc desc = {t->type, op, flag_sets[f], PSCAN_ALGO_AUTO, given ? init : NULL};
            pscan_status s = pscan_scan_host(h->ctx, &desc, bin + eb, bout + eb, n);
            size_t bad = n;
            for (size_t i = 0; i < n && bad == n; i++)
                if (memcmp(bout + (i + 1) * eb, ref + i * eb, eb) != 0) bad = i;
            int guards = 1;
            for (size_t j = 0; j < eb; j++) guards = guards && bout[j] == GUARD && bout[(n + 1) * eb + j] == GUARD;
            char what[512];
            snprintf(what, sizeof what,
                     "%s %s flags=%u init=%d n=%zu chunk=%zu %s%s: %s, element %zu is 0x%" PRIx64
                     ", expected 0x%" PRIx64 "%s",
                     t->name, pscan_op_name(op), flag_sets[f], given, n, chunk_bytes,
                     in_place ? "in place" : "out of place", out_pinned ? " (out pinned)" : "", pscan_status_name(s),
                     bad, bad < n ? load_raw(bout + eb, bad, eb) : 0, bad < n ? load_raw(ref, bad, eb) : 0,
                     guards ? "" : "; a guard element changed");
            check(h, s == PSCAN_SUCCESS && bad == n && guards, what);
            if (!in_place) host_free(bout, out_pinned);
            host_free(bin, h->pinned);
        }
    }
    free(g);
    free(ref);
}

static void run_table(harness *h) {
    /* piece sizes and the sizes each one is crossed with, in pieces of c elements (c = bytes / element) */
    const size_t chunks[4] = {256, 4096, 100 << 10, 0};
    int variant = 0;
    for (int ci = 0; ci < 4; ci++) {
        pscan_status s = pscan_context_set_host_chunk_bytes(h->ctx, chunks[ci]);
        check(h, s == PSCAN_SUCCESS, "pscan_context_set_host_chunk_bytes");
        for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
            const type_info *t = &types[ti];
            const size_t c = chunks[ci] / t->bytes;
            size_t sizes[6];
            size_t count = 0;
            if (ci == 0) {
                const size_t list[6] = {1, c - 1, c, c + 1, 3 * c + 5, 50 * c + 7};
                memcpy(sizes, list, sizeof list), count = 6;
            } else if (ci == 1) {
                const size_t list[4] = {c - 1, c + 1, 2 * c, 17 * c + 3};
                memcpy(sizes, list, sizeof list), count = h->quick ? 3 : 4;
            } else if (ci == 2) {
                sizes[0] = h->quick ? 3 * c + 1 : ((size_t)1 << 20) + 3, count = 1;
            } else {
                const size_t list[4] = {0, 1, 1000, 100003};
                memcpy(sizes, list, sizeof list), count = 4;
            }
            for (size_t oi = 0; oi < OP_COUNT; oi++) {
                if (t->is_float && op_is_bitwise(ops[oi])) continue;
                /* the largest sizes for a few operators only: the rest of the table covers the operators */
                if (ci == 2 && oi % 3 != ti % 3) continue;
                for (size_t si = 0; si < count; si++) run_case(h, t, ops[oi], sizes[si], chunks[ci], &variant);
            }
        }
    }
}

/* ---- pscan_reduce_host: every type x operator, identity and init, sizes around the piece ---- */

static void run_reduce_table(harness *h) {
    const size_t chunks[3] = {256, 4096, 0};
    for (int ci = 0; ci < 3; ci++) {
        pscan_context_set_host_chunk_bytes(h->ctx, chunks[ci]);
        for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
            const type_info *t = &types[ti];
            const size_t eb = t->bytes, c = (chunks[ci] ? chunks[ci] : 1000) / eb;
            const size_t sizes[6] = {0, 1, c - 1, c + 1, 3 * c + 5, h->quick ? 2 * c : 17 * c + 3};
            for (size_t oi = 0; oi < OP_COUNT; oi++) {
                if (t->is_float && op_is_bitwise(ops[oi])) continue;
                for (size_t si = 0; si < 6; si++) {
                    const size_t n = sizes[si];
                    test_rng rng = {test_mix64(h->seed ^ 0x5EDuLL ^ (uint64_t)n << 20 ^ (uint64_t)t->type << 40 ^
                                               (uint64_t)ops[oi] << 48 ^ chunks[ci])};
                    unsigned char *g = (unsigned char *)malloc(n * eb + 1), *ref = (unsigned char *)malloc(n * eb + 1);
                    fill(&rng, t, ops[oi], g, n);
                    for (int given = 0; given < 2; given++) {
                        unsigned char init[8] = {0}, want[8] = {0}, got[16];
                        pick_init(&rng, t, ops[oi], given, init);
                        reference_scan(t, ops[oi], 0, init, g, n, ref);
                        memcpy(want, n ? ref + (n - 1) * eb : init, eb);
                        memset(got, GUARD, sizeof got);
                        const pscan_reduce_desc d = {t->type, ops[oi], PSCAN_ALGO_AUTO, given ? init : NULL};
                        pscan_status st = pscan_reduce_host(h->ctx, &d, g, n, got + 4);
                        int guards = 1;
                        for (size_t j = 0; j < 4; j++) guards = guards && got[j] == GUARD && got[4 + eb + j] == GUARD;
                        char what[256];
                        snprintf(what, sizeof what, "reduce_host %s %s init=%d n=%zu chunk=%zu: %s, 0x%" PRIx64
                                 " expected 0x%" PRIx64 "%s", t->name, pscan_op_name(ops[oi]), given, n, chunks[ci],
                                 pscan_status_name(st), load_raw(got + 4, 0, eb), load_raw(want, 0, eb),
                                 guards ? "" : "; a guard byte changed");
                        check(h, st == PSCAN_SUCCESS && memcmp(got + 4, want, eb) == 0 && guards, what);
                    }
                    free(g);
                    free(ref);
                }
            }
        }
    }
    /* refusals leave the result untouched */
    int32_t buf[8] = {3, 1, 7, 0, 4, 1, 6, 3}, result = -1;
    pscan_reduce_desc d = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    check(h, pscan_reduce_host(h->ctx, &d, buf, 8, &result) == PSCAN_SUCCESS && result == 25,
          "reduce_host of 3 1 7 0 4 1 6 3 is 25");
    result = -1;
    check(h, pscan_reduce_host(NULL, &d, buf, 8, &result) == PSCAN_ERROR_NULL_POINTER && result == -1,
          "reduce_host NULL ctx: PSCAN_ERROR_NULL_POINTER, result untouched");
    check(h, pscan_reduce_host(h->ctx, &d, NULL, 8, &result) == PSCAN_ERROR_NULL_POINTER && result == -1,
          "reduce_host NULL in: PSCAN_ERROR_NULL_POINTER");
    check(h, pscan_reduce_host(h->ctx, &d, buf, 8, NULL) == PSCAN_ERROR_NULL_POINTER, "reduce_host NULL result");
    check(h, pscan_reduce_host(h->ctx, &d, buf, 8, buf + 3) == PSCAN_ERROR_OVERLAP, "reduce_host result inside in");
    check(h, pscan_reduce_host(h->ctx, &d, buf, (uint64_t)1 << 60, &result) == PSCAN_ERROR_TOO_LARGE && result == -1,
          "reduce_host n beyond 2^48 bytes: PSCAN_ERROR_TOO_LARGE");
    d.algo = PSCAN_ALGO_HILLIS_STEELE;
    check(h, pscan_reduce_host(h->ctx, &d, buf, 8, &result) == PSCAN_ERROR_UNSUPPORTED_ALGORITHM && result == -1,
          "reduce_host with a scan-only algorithm: PSCAN_ERROR_UNSUPPORTED_ALGORITHM, result untouched");
    pscan_context_set_host_chunk_bytes(h->ctx, 0);
}

/* ---- pscan_select_host: flags, nonzero, unique and gt, with and without payloads, sizes around the piece ---- */

/* Element v (0..3) of type t: small values, so runs repeat and the predicates split the data. */
static void put_small(const type_info *t, unsigned char *dst, int v) {
    if (t->type == PSCAN_TYPE_F32) {
        const float f = (float)v;
        memcpy(dst, &f, 4);
    } else if (t->type == PSCAN_TYPE_F64) {
        const double f = (double)v;
        memcpy(dst, &f, 8);
    } else {
        const uint64_t x = (uint64_t)v;
        memcpy(dst, &x, t->bytes); /* little-endian: the low bytes */
    }
}

static void run_select_table(harness *h) {
    const size_t chunks[3] = {256, 4096, 0};
    const size_t value_cycle[4] = {0, 4, 8, 1};
    enum { BY_FLAGS, NONZERO, UNIQUE, GT, MODES };
    static const char *const mode_names[MODES] = {"flags", "nonzero", "unique", "gt 1"};
    unsigned variant = 0;
    for (int ci = 0; ci < 3; ci++) {
        pscan_context_set_host_chunk_bytes(h->ctx, chunks[ci]);
        for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
            const type_info *t = &types[ti];
            const size_t eb = t->bytes, c = (chunks[ci] ? chunks[ci] : 1000) / eb;
            const size_t sizes[7] = {0, 1, c - 1, c, c + 1, 3 * c + 5, h->quick ? 2 * c : 17 * c + 3};
            for (int mode = 0; mode < MODES; mode++)
                for (size_t si = 0; si < 7; si++, variant++) {
                    const size_t n = sizes[si], vb = value_cycle[variant % 4];
                    test_rng rng = {test_mix64(h->seed ^ 0x5E1ECull ^ (uint64_t)variant << 20)};
                    int *v = (int *)malloc((n + 1) * sizeof(int));
                    unsigned char *keys = (unsigned char *)malloc(n * eb + 1), *vals = (unsigned char *)malloc(n * vb + 1);
                    unsigned char *flags = (unsigned char *)malloc(n + 1);
                    unsigned char *kout = (unsigned char *)malloc((n + 2) * eb), *vout = (unsigned char *)malloc((n + 2) * vb + 1);
                    unsigned char *kref = (unsigned char *)malloc(n * eb + 1), *vref = (unsigned char *)malloc(n * vb + 1);
                    size_t kept = 0;
                    for (size_t i = 0; i < n; i++) {
                        /* runs: half the elements repeat the one before (unique drops them, across pieces too) */
                        v[i] = i > 0 && (test_rng_next(&rng) & 1) ? v[i - 1] : (int)(test_rng_next(&rng) % 4);
                        put_small(t, keys + i * eb, v[i]);
                        for (size_t b = 0; b < vb; b++) vals[i * vb + b] = (unsigned char)test_rng_next(&rng);
                        flags[i] = (unsigned char)(test_rng_next(&rng) % 3 == 0 ? 0 : test_rng_next(&rng) | 1);
                        const int keep = mode == BY_FLAGS ? flags[i] != 0
                                         : mode == NONZERO ? v[i] != 0
                                         : mode == UNIQUE  ? i == 0 || v[i] != v[i - 1]
                                                           : v[i] > 1;
                        if (keep) {
                            memcpy(kref + kept * eb, keys + i * eb, eb);
                            memcpy(vref + kept * vb, vals + i * vb, vb);
                            kept++;
                        }
                    }
                    unsigned char operand[8];
                    put_small(t, operand, 1);
                    const pscan_select_desc d = {t->type, vb, mode == BY_FLAGS ? flags : NULL,
                                                 mode == NONZERO ? PSCAN_PRED_NONZERO
                                                 : mode == UNIQUE ? PSCAN_PRED_UNIQUE
                                                                  : PSCAN_PRED_GT,
                                                 operand, PSCAN_ALGO_AUTO};
                    memset(kout, GUARD, (n + 2) * eb);
                    memset(vout, GUARD, (n + 2) * vb + 1);
                    uint64_t count = 0xdeadbeefu;
                    const pscan_status st = pscan_select_host(h->ctx, &d, keys, vals, n, kout, vout, &count);
                    int ok = st == PSCAN_SUCCESS && count == kept && memcmp(kout, kref, kept * eb) == 0 &&
                             memcmp(vout, vref, kept * vb) == 0;
                    for (size_t j = kept * eb; ok && j < (n + 2) * eb; j++) ok = kout[j] == GUARD;
                    for (size_t j = kept * vb; ok && j < (n + 2) * vb; j++) ok = vout[j] == GUARD;
                    char what[256];
                    snprintf(what, sizeof what, "select_host %s %s values=%zu n=%zu chunk=%zu: %s, count %" PRIu64
                             " expected %zu", t->name, mode_names[mode], vb, n, chunks[ci], pscan_status_name(st),
                             count, kept);
                    check(h, ok, what);
                    free(v), free(keys), free(vals), free(flags), free(kout), free(vout), free(kref), free(vref);
                }
        }
    }
    /* refusals write nothing */
    int32_t buf[8] = {3, 1, 7, 0, 4, 1, 6, 3}, out[8], two = 2;
    uint64_t count = 99;
    memset(out, 0x5A, sizeof out);
    pscan_select_desc d = {PSCAN_TYPE_I32, 0, NULL, PSCAN_PRED_GT, &two, PSCAN_ALGO_AUTO};
    check(h, pscan_select_host(h->ctx, &d, buf, NULL, 8, out, NULL, &count) == PSCAN_SUCCESS && count == 5 &&
                 out[0] == 3 && out[1] == 7 && out[2] == 4 && out[3] == 6 && out[4] == 3,
          "select_host gt 2 of 3 1 7 0 4 1 6 3 is 3 7 4 6 3");
    count = 99;
    check(h, pscan_select_host(NULL, &d, buf, NULL, 8, out, NULL, &count) == PSCAN_ERROR_NULL_POINTER && count == 99,
          "select_host NULL ctx: PSCAN_ERROR_NULL_POINTER, count untouched");
    check(h, pscan_select_host(h->ctx, &d, buf, NULL, 8, out, NULL, NULL) == PSCAN_ERROR_NULL_POINTER,
          "select_host NULL count: PSCAN_ERROR_NULL_POINTER");
    check(h, pscan_select_host(h->ctx, &d, buf, NULL, 8, buf + 4, NULL, &count) == PSCAN_ERROR_OVERLAP && count == 99,
          "select_host keys_out overlapping keys_in: PSCAN_ERROR_OVERLAP, count untouched");
    check(h, pscan_select_host(h->ctx, &d, buf, NULL, 8, out, NULL, (uint64_t *)(void *)(out + 2)) ==
                 PSCAN_ERROR_OVERLAP,
          "select_host count inside keys_out: PSCAN_ERROR_OVERLAP");
    check(h, pscan_select_host(h->ctx, &d, buf, NULL, (uint64_t)1 << 60, out, NULL, &count) == PSCAN_ERROR_TOO_LARGE,
          "select_host n beyond 2^48 bytes: PSCAN_ERROR_TOO_LARGE");
    d.value_bytes = 3;
    check(h, pscan_select_host(h->ctx, &d, buf, buf, 8, out, out, &count) == PSCAN_ERROR_INVALID_VALUE && count == 99,
          "select_host value_bytes 3: PSCAN_ERROR_INVALID_VALUE");
    pscan_context_set_host_chunk_bytes(h->ctx, 0);
}

/* ---- bad input ---------------------------------------------------------------------------------------- */

static void run_bad_inputs(harness *h) {
    int32_t buf[64];
    for (int i = 0; i < 64; i++) buf[i] = -7;
    int32_t keep[64];
    memcpy(keep, buf, sizeof buf);
    const pscan_scan_desc ok = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    pscan_scan_desc d = ok;
    char what[256];
#define EXPECT_STATUS(expected, call)                                                                        \
    do {                                                                                                     \
        pscan_status got_ = (call);                                                                          \
        snprintf(what, sizeof what, "%s returned %s, expected %s", #call, pscan_status_name(got_),           \
                 pscan_status_name(expected));                                                               \
        check(h, got_ == (expected), what);                                                                  \
    } while (0)
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_host(NULL, &ok, buf, buf + 32, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_host(h->ctx, NULL, buf, buf + 32, 8));
    d.flags = 8; /* 4 is PSCAN_SCAN_WIDEN (test_widen) */
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_host(h->ctx, &d, buf, buf + 32, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_host(h->ctx, &ok, NULL, buf + 32, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_host(h->ctx, &ok, buf, NULL, 8));
    EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_scan_host(h->ctx, &ok, buf, buf + 1, 8));
    EXPECT_STATUS(PSCAN_ERROR_TOO_LARGE, pscan_scan_host(h->ctx, &ok, buf, buf + 32, (uint64_t)1 << 60));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_host(h->ctx, &ok, NULL, NULL, 0));
    d = ok;
    d.algo = PSCAN_ALGO_BLELLOCH;
    EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_scan_host(h->ctx, &d, buf, buf + 32, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_set_host_chunk_bytes(NULL, 4096));
    check(h, memcmp(buf, keep, sizeof buf) == 0, "a refused call changed the output");
    if (h->backend == PSCAN_BACKEND_CUDA) {
        void *dev = NULL;
        pscan_memory_alloc(h->ctx, 8 * sizeof(int32_t), &dev);
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_host(h->ctx, &ok, dev, buf + 32, 8));
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_host(h->ctx, &ok, buf, dev, 8));
        pscan_memory_free(h->ctx, dev);
        check(h, memcmp(buf, keep, sizeof buf) == 0, "a refused call changed the output");
    }
#undef EXPECT_STATUS
}


/* ---- large: one u32 sum of BYTES of host memory, in place (on the GPU machine: more than the GPU holds) ---- */

/* The large array is filled and checked on every core (one thread would take minutes for 200 GB): each part
 * of the array fills its range and sums it (phase 0); after the scan, each part checks its range starting from
 * the sum of the parts before it (phase 1). */
typedef struct large_part {
    uint32_t *a;
    uint64_t seed, begin, end, bad;
    uint32_t sum, carry;
    int phase;
} large_part;

static uint32_t large_value(uint64_t seed, uint64_t i) { return (uint32_t)(test_mix64(seed + i) & 0xffu); }

static void *large_worker(void *arg) {
    large_part *p = (large_part *)arg;
    uint32_t acc = p->phase ? p->carry : 0;
    for (uint64_t i = p->begin; i < p->end; i++) {
        acc += large_value(p->seed, i);
        if (p->phase == 0) {
            p->a[i] = large_value(p->seed, i);
        } else if (p->a[i] != acc) {
            p->bad = i;
            break;
        }
    }
    p->sum = acc;
    return NULL;
}

#define LARGE_MAX_THREADS 64

static void large_run(large_part *parts, int count, int phase) {
    pthread_t threads[LARGE_MAX_THREADS];
    for (int k = 0; k < count; k++) {
        parts[k].phase = phase;
        if (pthread_create(&threads[k], NULL, large_worker, &parts[k]) != 0) large_worker(&parts[k]), threads[k] = 0;
    }
    for (int k = 0; k < count; k++)
        if (threads[k]) pthread_join(threads[k], NULL);
}

static void run_large(harness *h, uint64_t bytes) {
    const uint64_t n = bytes / 4;
    uint32_t *a = (uint32_t *)host_alloc(n * 4, h->pinned);
    if (!a) {
        check(h, 0, "could not allocate the large host array");
        return;
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    const int count = cores < 1 ? 1 : cores > LARGE_MAX_THREADS ? LARGE_MAX_THREADS : (int)cores;
    large_part parts[LARGE_MAX_THREADS];
    for (int k = 0; k < count; k++)
        parts[k] = (large_part){a, h->seed, n / count * k, k == count - 1 ? n : n / count * (k + 1), n, 0, 0, 0};
    const double f0 = test_now_seconds();
    large_run(parts, count, 0);
    uint32_t carry = 0;
    for (int k = 0; k < count; k++) {
        parts[k].carry = carry;
        carry += parts[k].sum;
    }
    const double f1 = test_now_seconds();
    const pscan_scan_desc d = {PSCAN_TYPE_U32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    const double t0 = test_now_seconds();
    pscan_status s = pscan_scan_host(h->ctx, &d, a, a, n);
    const double t1 = test_now_seconds();
    large_run(parts, count, 1);
    uint64_t bad = n;
    for (int k = 0; k < count && bad == n; k++) bad = parts[k].bad;
    char what[256];
    snprintf(what, sizeof what, "large: %" PRIu64 " bytes %s: %s, first wrong element %" PRIu64, bytes,
             h->pinned ? "pinned" : "pageable", pscan_status_name(s), bad);
    check(h, s == PSCAN_SUCCESS && bad == n, what);
    printf("test_scan_host: large %" PRIu64 " bytes (%s): %.3f s, %.2f GB/s each way (fill on %d threads %.1f s)\n",
           bytes, h->pinned ? "pinned" : "pageable", t1 - t0, (double)bytes / (t1 - t0) * 1e-9, count, f1 - f0);
    host_free(a, h->pinned);
}

#ifdef PSCAN_TEST_HAVE_CUDA
/* The floor: the same bytes up and back down through three device buffers of one piece on two streams, the way
 * the scan moves them, without the scan. */
static double copy_up_down_seconds(void *host, uint64_t bytes, size_t chunk) {
    void *dbuf[3] = {NULL, NULL, NULL};
    cudaStream_t up, down;
    cudaEvent_t uploaded[3], downloaded[3];
    cudaStreamCreateWithFlags(&up, cudaStreamNonBlocking);
    cudaStreamCreateWithFlags(&down, cudaStreamNonBlocking);
    for (int j = 0; j < 3; j++) {
        cudaMalloc(&dbuf[j], chunk);
        cudaEventCreateWithFlags(&uploaded[j], cudaEventDisableTiming);
        cudaEventCreateWithFlags(&downloaded[j], cudaEventDisableTiming);
    }
    const double t0 = test_now_seconds();
    uint64_t k = 0;
    for (uint64_t at = 0; at < bytes; at += chunk, k++) {
        const int j = (int)(k % 3);
        const size_t len = bytes - at < chunk ? (size_t)(bytes - at) : chunk;
        if (k >= 3) cudaStreamWaitEvent(up, downloaded[j], 0);
        cudaMemcpyAsync(dbuf[j], (char *)host + at, len, cudaMemcpyHostToDevice, up);
        cudaEventRecord(uploaded[j], up);
        cudaStreamWaitEvent(down, uploaded[j], 0);
        cudaMemcpyAsync((char *)host + at, dbuf[j], len, cudaMemcpyDeviceToHost, down);
        cudaEventRecord(downloaded[j], down);
    }
    cudaStreamSynchronize(up);
    cudaStreamSynchronize(down);
    const double t = test_now_seconds() - t0;
    for (int j = 0; j < 3; j++) {
        cudaFree(dbuf[j]);
        cudaEventDestroy(uploaded[j]);
        cudaEventDestroy(downloaded[j]);
    }
    cudaStreamDestroy(up);
    cudaStreamDestroy(down);
    return t;
}

/* The speed table of docs/scale-out.md: pinned u32 sum in place, median of 5, against the copy floor. */
static void run_bench(harness *h, uint64_t bytes) {
    const size_t chunk = (size_t)64 << 20;
    void *a = host_alloc(bytes, 1);
    if (!a) {
        check(h, 0, "could not allocate the pinned bench array");
        return;
    }
    /* random data (the rules of docs/performance.md): a random 64 MiB block repeated */
    for (uint64_t i = 0; i < (chunk < bytes ? chunk : bytes) / 8; i++) ((uint64_t *)a)[i] = test_mix64(h->seed + i);
    for (uint64_t at = chunk; at < bytes; at += chunk) memcpy((char *)a + at, a, bytes - at < chunk ? bytes - at : chunk);
    pscan_context_set_host_chunk_bytes(h->ctx, chunk);
    const pscan_scan_desc d = {PSCAN_TYPE_U32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    double scan[5], copy[5];
    pscan_scan_host(h->ctx, &d, a, a, bytes / 4); /* warm: workspace and first launches */
    copy_up_down_seconds(a, bytes, chunk);
    for (int r = 0; r < 5; r++) {
        double t0 = test_now_seconds();
        pscan_status s = pscan_scan_host(h->ctx, &d, a, a, bytes / 4);
        scan[r] = test_now_seconds() - t0;
        check(h, s == PSCAN_SUCCESS, "bench scan");
        copy[r] = copy_up_down_seconds(a, bytes, chunk);
    }
    qsort(scan, 5, sizeof scan[0], test_cmp_double);
    qsort(copy, 5, sizeof copy[0], test_cmp_double);
    printf("test_scan_host: bench %" PRIu64 " bytes pinned, 64 MiB pieces: scan %.4f s (%.2f GB/s each way), "
           "copy up+down %.4f s (%.2f GB/s), fraction of copy %.3f\n",
           bytes, scan[2], (double)bytes / scan[2] * 1e-9, copy[2], (double)bytes / copy[2] * 1e-9,
           copy[2] / scan[2]);
    host_free(a, 1);
}
#endif

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    h.backend = PSCAN_BACKEND_CPU;
    const char *seed_env = getenv("PSCAN_TEST_SEED");
    h.seed = seed_env ? strtoull(seed_env, NULL, 0) : 20261123u;
    uint64_t large = 0, bench = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            if (pscan_backend_parse(argv[++i], &h.backend) != PSCAN_SUCCESS) {
                fprintf(stderr, "test_scan_host: unknown backend %s\n", argv[i]);
                return 2;
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            h.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--large") == 0 && i + 1 < argc) {
            large = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--bench") == 0 && i + 1 < argc) {
            bench = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--pinned") == 0) {
            h.pinned = 1;
        } else if (strcmp(argv[i], "--quick") == 0) {
            h.quick = 1;
        } else {
            fprintf(stderr, "usage: test_scan_host --backend cpu|cuda|opencl [--pinned] [--quick] [--seed S] "
                            "[--large BYTES] [--bench BYTES]\n");
            return 2;
        }
    }
#ifndef PSCAN_TEST_HAVE_CUDA
    if (h.pinned || bench) {
        printf("test_scan_host: SKIP: --pinned and --bench need the CUDA runtime (built without CUDA)\n");
        return TEST_EXIT_SKIP;
    }
#endif
    int open = test_open_backend("test_scan_host", h.backend, &h.ctx);
    if (open != 0) return open;
    if (large) {
        run_large(&h, large);
    } else if (bench) {
#ifdef PSCAN_TEST_HAVE_CUDA
        run_bench(&h, bench);
#endif
    } else {
        run_bad_inputs(&h);
        run_table(&h);
        run_reduce_table(&h);
        run_select_table(&h);
    }
    pscan_context_destroy(h.ctx);
    printf("test_scan_host: %lu passed, %lu failed\n", h.passed, h.failed);
    return h.failed ? 1 : 0;
}
