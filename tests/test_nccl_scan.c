/*
 * test_nccl_scan.c - pscan_nccl.h over every GPU of this machine (ncclCommInitAll), read as its specification.
 *
 *   test_nccl_scan [--gpus G] [--quick] [--seed S]
 *
 * Passed on 2 H200s of one host (2026-11-23: ctest nccl.cuda, 5 s). It runs on any number of
 * GPUs from 1 (one GPU still goes through the whole path: reduce, a one-rank all-gather, the fold, the scan
 * with its carry in device memory); 2 or more exercise what NCCL is for. Skips (77) without a GPU.
 *
 * The table: every type x operator x {inclusive, exclusive} x {forward, reverse} x {identity, init}, over slice
 * layouts (equal, random unequal, every other GPU empty, one large slice of 300007 beside small ones), through
 * pscan_nccl_scan_group from this thread, each GPU's slice checked bit for bit against the serial scan of the
 * whole array (test_reference.h); and the one-thread-per-GPU form, pscan_nccl_scan, from one pthread per GPU, for
 * i32 sums. Bad input: one GPU's input NULL, an algorithm other than AUTO/decoupled-lookback, temp one byte
 * short: the status, and nothing written on any GPU.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "pscan_nccl.h"
#include "test_common.h"
#include "test_reference.h"

#define MAX_GPUS 8
#define MAX_REPORTS 20

typedef struct harness {
    int gpus;
    ncclComm_t comms[MAX_GPUS];
    cudaStream_t streams[MAX_GPUS];
    pscan_context *ctxs[MAX_GPUS];
    uint64_t seed;
    unsigned long passed, failed, reports;
} harness;

static void check(harness *h, int ok, const char *what) {
    if (ok) {
        h->passed++;
        return;
    }
    h->failed++;
    if (h->reports++ < MAX_REPORTS) fprintf(stderr, "FAIL: %d GPUs seed=%" PRIu64 ": %s\n", h->gpus, h->seed, what);
}

static size_t slice_size(int layout, int g, int gpus, uint64_t seed) {
    switch (layout) {
    case 0: return 4099;
    case 1: return (size_t)(test_mix64(seed ^ (uint64_t)g) % 20001);
    case 2: return g % 2 ? 0 : (size_t)(test_mix64(seed + (uint64_t)g) % 5000) + 1;
    default: return g == gpus / 2 ? 300007 : (size_t)g * 7 + 1;
    }
}
#define LAYOUTS 4

/* Each GPU's slice on its device: in (n + 1 elements, poisoned past n) and out (the same). */
typedef struct slices {
    void *in[MAX_GPUS], *out[MAX_GPUS];
    size_t n[MAX_GPUS], first[MAX_GPUS];
    const void *ins[MAX_GPUS];
    void *outs[MAX_GPUS];
    uint64_t ns[MAX_GPUS];
} slices;

static int slices_make(harness *h, slices *s, const type_info *t, const unsigned char *g, int layout, uint64_t seed,
                       size_t *total) {
    memset(s, 0, sizeof *s);
    *total = 0;
    for (int d = 0; d < h->gpus; d++) {
        s->n[d] = slice_size(layout, d, h->gpus, seed);
        s->first[d] = *total;
        *total += s->n[d];
    }
    if (!g) return 0;
    for (int d = 0; d < h->gpus; d++) {
        const size_t b = (s->n[d] + 1) * t->bytes;
        if (pscan_memory_alloc(h->ctxs[d], b, &s->in[d]) != PSCAN_SUCCESS ||
            pscan_memory_alloc(h->ctxs[d], b, &s->out[d]) != PSCAN_SUCCESS)
            return 1;
        unsigned char *poison = (unsigned char *)malloc(b);
        memset(poison, 0xA5, b);
        pscan_memory_upload(h->ctxs[d], s->out[d], poison, b);
        pscan_memory_upload(h->ctxs[d], s->in[d], g + s->first[d] * t->bytes, s->n[d] * t->bytes);
        pscan_context_synchronize(h->ctxs[d]); /* the pageable upload of poison must finish before free */
        free(poison);
        s->ins[d] = s->in[d];
        s->outs[d] = s->out[d];
        s->ns[d] = s->n[d];
    }
    return 0;
}

static void slices_free(harness *h, slices *s) {
    for (int d = 0; d < h->gpus; d++) {
        pscan_memory_free(h->ctxs[d], s->in[d]);
        pscan_memory_free(h->ctxs[d], s->out[d]);
    }
}

/* Downloads every GPU's out and compares with ref (the whole array's scan); poisoned must say whether the
 * outputs are expected untouched instead. */
static void slices_check(harness *h, slices *s, const type_info *t, const unsigned char *ref, int untouched,
                         const char *label) {
    for (int d = 0; d < h->gpus; d++) {
        const size_t n = s->n[d], b = (n + 1) * t->bytes;
        unsigned char *got = (unsigned char *)malloc(b);
        pscan_memory_download(h->ctxs[d], got, s->out[d], b);
        pscan_context_synchronize(h->ctxs[d]);
        size_t bad = n;
        for (size_t i = 0; i < n && bad == n; i++)
            if (untouched ? got[i * t->bytes] != 0xA5 : memcmp(got + i * t->bytes, ref + (s->first[d] + i) * t->bytes, t->bytes) != 0)
                bad = i;
        int guard = got[n * t->bytes] == 0xA5;
        char what[512];
        snprintf(what, sizeof what, "%s: GPU %d slice of %zu at %zu: element %zu %s%s", label, d, n, s->first[d], bad,
                 bad == n ? "ok" : untouched ? "was written" : "differs", guard ? "" : "; wrote past the slice");
        check(h, bad == n && guard, what);
        free(got);
    }
}

static void run_table(harness *h, int quick) {
    const unsigned flag_sets[4] = {0, PSCAN_SCAN_EXCLUSIVE, PSCAN_SCAN_REVERSE,
                                   PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE};
    for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
        const type_info *t = &types[ti];
        for (size_t oi = 0; oi < OP_COUNT; oi++) {
            if (t->is_float && op_is_bitwise(ops[oi])) continue;
            for (int layout = 0; layout < (quick ? LAYOUTS - 1 : LAYOUTS); layout++) {
                const uint64_t seed = test_mix64(h->seed ^ (ti << 8) ^ (oi << 16) ^ ((uint64_t)layout << 24));
                slices s;
                size_t total = 0;
                slices_make(h, &s, t, NULL, layout, seed, &total);
                unsigned char *g = (unsigned char *)malloc((total + 1) * t->bytes);
                unsigned char *ref = (unsigned char *)malloc((total + 1) * t->bytes);
                test_rng rng = {seed};
                fill(&rng, t, ops[oi], g, total);
                for (int f = 0; f < 4; f++) {
                    for (int given = 0; given < 2; given++) {
                        unsigned char init[8] = {0};
                        pick_init(&rng, t, ops[oi], given, init);
                        reference_scan(t, ops[oi], flag_sets[f], init, g, total, ref);
                        if (slices_make(h, &s, t, g, layout, seed, &total)) {
                            check(h, 0, "device allocation failed");
                            continue;
                        }
                        const pscan_scan_desc desc = {t->type, ops[oi], flag_sets[f], PSCAN_ALGO_AUTO, given ? init : NULL};
                        pscan_status st = pscan_nccl_scan_group(h->gpus, h->ctxs, h->comms, &desc, s.ins, s.outs,
                                                                s.ns, NULL, NULL);
                        char label[256];
                        snprintf(label, sizeof label, "%s %s flags=%u init=%d layout=%d: %s", t->name,
                                 pscan_op_name(ops[oi]), flag_sets[f], given, layout, pscan_status_name(st));
                        check(h, st == PSCAN_SUCCESS, label);
                        slices_check(h, &s, t, ref, 0, label);
                        slices_free(h, &s);
                    }
                }
                free(g);
                free(ref);
            }
        }
    }
}

/* ---- one thread per GPU: pscan_nccl_scan --------------------------------------------------------------- */

typedef struct worker {
    harness *h;
    int d;
    const pscan_scan_desc *desc;
    slices *s;
    pscan_status status;
} worker;

static void *worker_main(void *arg) {
    worker *w = (worker *)arg;
    cudaSetDevice(w->d);
    w->status = pscan_nccl_scan(w->h->ctxs[w->d], w->h->comms[w->d], w->desc, w->s->in[w->d], w->s->out[w->d],
                                w->s->n[w->d], NULL, 0);
    return NULL;
}

static void run_threads(harness *h) {
    const type_info *t = &types[4]; /* i32 */
    for (unsigned flags = 0; flags < 4; flags++) {
        const uint64_t seed = test_mix64(h->seed ^ 0x7157u ^ flags);
        slices s;
        size_t total = 0;
        slices_make(h, &s, t, NULL, 1, seed, &total);
        unsigned char *g = (unsigned char *)malloc((total + 1) * 4), *ref = (unsigned char *)malloc((total + 1) * 4);
        test_rng rng = {seed};
        fill(&rng, t, PSCAN_OP_SUM, g, total);
        unsigned char init[8] = {0};
        pick_init(&rng, t, PSCAN_OP_SUM, 1, init);
        reference_scan(t, PSCAN_OP_SUM, flags, init, g, total, ref);
        if (slices_make(h, &s, t, g, 1, seed, &total) == 0) {
            const pscan_scan_desc desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, flags, PSCAN_ALGO_AUTO, init};
            pthread_t threads[MAX_GPUS];
            worker w[MAX_GPUS];
            for (int d = 0; d < h->gpus; d++) {
                w[d] = (worker){h, d, &desc, &s, PSCAN_SUCCESS};
                pthread_create(&threads[d], NULL, worker_main, &w[d]);
            }
            for (int d = 0; d < h->gpus; d++) {
                pthread_join(threads[d], NULL);
                check(h, w[d].status == PSCAN_SUCCESS, "pscan_nccl_scan from one thread per GPU");
            }
            char label[64];
            snprintf(label, sizeof label, "threads i32 sum flags=%u", flags);
            slices_check(h, &s, t, ref, 0, label);
        }
        slices_free(h, &s);
        free(g);
        free(ref);
    }
}

/* ---- bad input: nothing is enqueued anywhere ------------------------------------------------------------ */

static void run_bad_inputs(harness *h) {
    const type_info *t = &types[4];
    slices s;
    size_t total = 0;
    slices_make(h, &s, t, NULL, 0, 1, &total);
    unsigned char *g = (unsigned char *)calloc(total + 1, 4);
    if (slices_make(h, &s, t, g, 0, 1, &total)) return;
    const pscan_scan_desc ok = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    const int culprit = h->gpus - 1;
    s.ins[culprit] = NULL;
    check(h, pscan_nccl_scan_group(h->gpus, h->ctxs, h->comms, &ok, s.ins, s.outs, s.ns, NULL, NULL) ==
                 PSCAN_ERROR_NULL_POINTER, "group with one GPU's input NULL: PSCAN_ERROR_NULL_POINTER");
    s.ins[culprit] = s.in[culprit];
    pscan_scan_desc d = ok;
    d.algo = PSCAN_ALGO_BLELLOCH;
    check(h, pscan_nccl_scan_group(h->gpus, h->ctxs, h->comms, &d, s.ins, s.outs, s.ns, NULL, NULL) ==
                 PSCAN_ERROR_UNSUPPORTED_ALGORITHM, "blelloch: PSCAN_ERROR_UNSUPPORTED_ALGORITHM");
    size_t need = 0;
    check(h, pscan_nccl_scan_temp_bytes(h->ctxs[0], &ok, s.n[0], h->gpus, &need) == PSCAN_SUCCESS, "temp query");
    void *temps[MAX_GPUS] = {0};
    size_t temp_bytes[MAX_GPUS];
    for (int k = 0; k < h->gpus; k++) {
        pscan_nccl_scan_temp_bytes(h->ctxs[k], &ok, s.n[k], h->gpus, &temp_bytes[k]);
        pscan_memory_alloc(h->ctxs[k], temp_bytes[k], &temps[k]);
    }
    temp_bytes[culprit] -= 1;
    check(h, pscan_nccl_scan_group(h->gpus, h->ctxs, h->comms, &ok, s.ins, s.outs, s.ns, temps, temp_bytes) ==
                 PSCAN_ERROR_TEMP_TOO_SMALL, "temp one byte short on one GPU: PSCAN_ERROR_TEMP_TOO_SMALL");
    slices_check(h, &s, t, NULL, 1, "after refused calls");
    for (int k = 0; k < h->gpus; k++) pscan_memory_free(h->ctxs[k], temps[k]);
    slices_free(h, &s);
    free(g);
}

int main(int argc, char **argv) {
    harness h;
    memset(&h, 0, sizeof h);
    const char *seed_env = getenv("PSCAN_TEST_SEED");
    h.seed = seed_env ? strtoull(seed_env, NULL, 0) : 20261123u;
    int quick = 0, want = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--gpus") == 0 && i + 1 < argc) {
            want = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            h.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            fprintf(stderr, "usage: test_nccl_scan [--gpus G] [--quick] [--seed S]\n");
            return 2;
        }
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
        printf("test_nccl_scan: SKIP: no CUDA device\n");
        return TEST_EXIT_SKIP;
    }
    h.gpus = want > 0 && want < count ? want : count;
    if (h.gpus > MAX_GPUS) h.gpus = MAX_GPUS;
    int devs[MAX_GPUS];
    for (int d = 0; d < h.gpus; d++) devs[d] = d;
    ncclResult_t r = ncclCommInitAll(h.comms, h.gpus, devs);
    if (r != ncclSuccess) {
        fprintf(stderr, "test_nccl_scan: FAIL: ncclCommInitAll: %s\n", ncclGetErrorString(r));
        return 1;
    }
    for (int d = 0; d < h.gpus; d++) {
        cudaSetDevice(d);
        cudaStreamCreateWithFlags(&h.streams[d], cudaStreamNonBlocking);
        pscan_status s = pscan_cuda_context_create(h.streams[d], &h.ctxs[d]);
        if (s != PSCAN_SUCCESS) {
            fprintf(stderr, "test_nccl_scan: FAIL: pscan_cuda_context_create on GPU %d: %s\n", d, pscan_status_name(s));
            return 1;
        }
    }
    printf("test_nccl_scan: %d GPU(s)\n", h.gpus);
    run_bad_inputs(&h);
    run_threads(&h);
    run_table(&h, quick);
    for (int d = 0; d < h.gpus; d++) {
        pscan_context_destroy(h.ctxs[d]);
        cudaSetDevice(d);
        cudaStreamDestroy(h.streams[d]);
        ncclCommDestroy(h.comms[d]);
    }
    printf("test_nccl_scan: %lu passed, %lu failed\n", h.passed, h.failed);
    return h.failed ? 1 : 0;
}
