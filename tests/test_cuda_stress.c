/*
 * test_cuda_stress.c - back-to-back scans with fresh random data, every result checked: the test that catches
 * look-back races (a tile reading a predecessor's status too early, a stale status from an earlier call, a
 * ticket counter that was not re-armed), which a table of single calls rarely provokes.
 *
 *   test_cuda_stress [--backend cuda] [--algo decoupled-lookback|mixed] [--iters 1000] [--seed S]
 *
 * --algo mixed picks every call's algorithm at random from the backend's list (and AUTO): algorithms that
 * share the workspace then write their own scratch over one another's between calls. Before the rounds, the
 * sequence of issue 8 (bug 1) runs on the fresh context with the workspace: a scan that returned success
 * without writing its output once, because the look-back trusted a word another algorithm had overwritten.
 * The caller temp buffer is used at a random offset (0..255 bytes) in each round: any address must work.
 *
 * Each round enqueues BATCH scans back to back on one stream, without synchronising in between, all sharing
 * one temporary buffer (alternately a caller buffer filled with junk once, and the context workspace): a call
 * starts while the previous one's status words are still in that buffer. Every scan gets its own fresh random
 * input, a random length (log-uniform from 1 to 2^22, sometimes 2^24 + k so that many tiles are in flight at
 * once), a random type x operator (integers only, so results are exact; full-range values, so a status word
 * that stole value bits would show), random flags, a random initial value half the time, and is in place a
 * quarter of the time. After the round every output is downloaded and compared element by element with a
 * serial loop. Exit 0: all passed; 1: any failure (the first few are printed with the seed); 77: no CUDA.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#define BATCH 8
#define MAX_LOG2 22
#define BIG_N ((1u << 24) + 3)
#define MAX_REPORTS 10

typedef struct stress_type {
    pscan_type type;
    size_t bytes;
    int is_signed;
} stress_type;

static const stress_type types[] = {
    {PSCAN_TYPE_I32, 4, 1}, {PSCAN_TYPE_U32, 4, 0}, {PSCAN_TYPE_I64, 8, 1},
    {PSCAN_TYPE_U64, 8, 0}, {PSCAN_TYPE_U8, 1, 0},  {PSCAN_TYPE_I16, 2, 1}, {PSCAN_TYPE_I8, 1, 1},
};
#define TYPE_COUNT (sizeof types / sizeof types[0])
static const pscan_op ops[] = {PSCAN_OP_SUM, PSCAN_OP_SUM, PSCAN_OP_SUM, PSCAN_OP_MIN,
                               PSCAN_OP_MAX, PSCAN_OP_XOR, PSCAN_OP_PRODUCT};
#define OP_COUNT (sizeof ops / sizeof ops[0])

typedef struct stress_case {
    const stress_type *t;
    pscan_scan_desc desc;
    uint64_t init_bits;
    int in_place;
    uint64_t n;
    unsigned char *host_in, *host_out;
    void *dev_in, *dev_out;
} stress_case;

static uint64_t mask_of(size_t bytes) { return bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1; }

static uint64_t get_bits(const unsigned char *p, uint64_t i, size_t bytes) {
    uint64_t v = 0;
    memcpy(&v, p + i * bytes, bytes); /* little-endian */
    return v;
}

/* Signed comparison of two width-bit values: sign-flip, then compare unsigned. */
static int less(uint64_t a, uint64_t b, const stress_type *t) {
    if (t->is_signed) {
        uint64_t flip = 1ull << (8 * t->bytes - 1);
        a ^= flip;
        b ^= flip;
    }
    return a < b;
}

static uint64_t combine(pscan_op op, uint64_t a, uint64_t b, const stress_type *t) {
    uint64_t m = mask_of(t->bytes);
    switch (op) {
    case PSCAN_OP_SUM: return (a + b) & m;
    case PSCAN_OP_PRODUCT: return (a * b) & m;
    case PSCAN_OP_MIN: return less(b, a, t) ? b : a;
    case PSCAN_OP_MAX: return less(a, b, t) ? b : a;
    case PSCAN_OP_XOR: return a ^ b;
    case PSCAN_OP_OR: return a | b;
    case PSCAN_OP_AND: return a & b;
    default: return 0;
    }
}

static uint64_t identity(pscan_op op, const stress_type *t) {
    uint64_t m = mask_of(t->bytes), top = 1ull << (8 * t->bytes - 1);
    switch (op) {
    case PSCAN_OP_PRODUCT: return 1;
    case PSCAN_OP_MIN: return t->is_signed ? (top - 1) : m;
    case PSCAN_OP_MAX: return t->is_signed ? top : 0;
    case PSCAN_OP_AND: return m;
    default: return 0;
    }
}

/* Returns the number of wrong elements (0 when the case passed); reports the first. */
static uint64_t check(const stress_case *c, uint64_t seed, int round, int slot, int *reports) {
    const stress_type *t = c->t;
    const int exclusive = (c->desc.flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    const int reverse = (c->desc.flags & PSCAN_SCAN_REVERSE) != 0;
    uint64_t acc = c->desc.init ? c->init_bits : identity(c->desc.op, t), wrong = 0;
    for (uint64_t k = 0; k < c->n; k++) {
        uint64_t i = reverse ? c->n - 1 - k : k;
        uint64_t x = get_bits(c->host_in, i, t->bytes);
        uint64_t next = combine(c->desc.op, acc, x, t);
        uint64_t want = exclusive ? acc : next;
        acc = next;
        uint64_t got = get_bits(c->host_out, i, t->bytes);
        if (got != want) {
            if (wrong == 0 && (*reports)++ < MAX_REPORTS)
                fprintf(stderr,
                        "FAIL seed %" PRIu64 " round %d slot %d: %s %s%s%s%s%s n=%" PRIu64 ": out[%" PRIu64
                        "] = 0x%" PRIx64 ", want 0x%" PRIx64 "\n",
                        seed, round, slot, pscan_type_name(c->desc.type), pscan_op_name(c->desc.op),
                        exclusive ? " exclusive" : "", reverse ? " reverse" : "", c->in_place ? " in-place" : "",
                        c->desc.init ? " init" : "", c->n, i, got, want);
            wrong++;
        }
    }
    return wrong;
}

/* Issue 8, bug 1, exactly as reported: on one fresh context with the workspace, out of place, the last call's
 * output was left untouched while every call returned PSCAN_SUCCESS. Each output is poisoned first. */
static pscan_status prelude(pscan_context *ctx, long *passed, long *failed) {
    static const struct {
        pscan_type type;
        size_t bytes;
        int is_signed;
        pscan_op op;
        unsigned flags;
        pscan_algo algo;
        int with_init;
        uint64_t n;
    } seq[] = {
        {PSCAN_TYPE_U32, 4, 0, PSCAN_OP_OR, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_BLELLOCH, 0, 2389},
        {PSCAN_TYPE_U64, 8, 0, PSCAN_OP_OR, 0, PSCAN_ALGO_DECOUPLED_LOOKBACK, 1, 2389},
        {PSCAN_TYPE_I8, 1, 1, PSCAN_OP_MIN, PSCAN_SCAN_REVERSE, PSCAN_ALGO_HILLIS_STEELE, 1, 697},
        {PSCAN_TYPE_I32, 4, 1, PSCAN_OP_SUM, 0, PSCAN_ALGO_DECOUPLED_LOOKBACK, 0, 5941},
    };
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_context_backend(ctx, &backend);
    if (backend != PSCAN_BACKEND_CUDA && backend != PSCAN_BACKEND_OPENCL) return PSCAN_SUCCESS;
    test_rng rng = {0xb001};
    pscan_status s = PSCAN_SUCCESS;
    for (size_t q = 0; q < sizeof seq / sizeof seq[0] && s == PSCAN_SUCCESS; q++) {
        stress_type t = {seq[q].type, seq[q].bytes, seq[q].is_signed};
        stress_case c;
        memset(&c, 0, sizeof c);
        c.t = &t;
        c.desc = (pscan_scan_desc){seq[q].type, seq[q].op, seq[q].flags, seq[q].algo, NULL};
        c.init_bits = 0x5a & mask_of(t.bytes);
        if (seq[q].with_init) c.desc.init = &c.init_bits;
        c.n = seq[q].n;
        const size_t bytes = (size_t)c.n * t.bytes;
        c.host_in = (unsigned char *)malloc(bytes);
        c.host_out = (unsigned char *)malloc(bytes);
        unsigned char *poison = (unsigned char *)malloc(bytes);
        if (!c.host_in || !c.host_out || !poison) s = PSCAN_ERROR_OUT_OF_MEMORY;
        for (size_t i = 0; s == PSCAN_SUCCESS && i < bytes; i++) c.host_in[i] = (unsigned char)test_rng_next(&rng);
        if (s == PSCAN_SUCCESS) memset(poison, 0xa5, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &c.dev_in);
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &c.dev_out);
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, c.dev_in, c.host_in, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, c.dev_out, poison, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_scan(ctx, &c.desc, c.dev_in, c.dev_out, c.n, NULL, 0);
        if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, c.host_out, c.dev_out, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
        int reports = 0;
        if (s == PSCAN_SUCCESS) {
            if (check(&c, 0xb001, -1, (int)q, &reports) == 0)
                ++*passed;
            else
                ++*failed;
        }
        pscan_memory_free(ctx, c.dev_in);
        pscan_memory_free(ctx, c.dev_out);
        free(c.host_in);
        free(c.host_out);
        free(poison);
    }
    if (s != PSCAN_SUCCESS) fprintf(stderr, "test_cuda_stress: issue 8 sequence: %s\n", pscan_status_name(s));
    return s;
}

static int usage(void) {
    fprintf(stderr, "usage: test_cuda_stress [--backend cuda] [--algo NAME] [--iters N] [--seed S]\n");
    return 2;
}

int main(int argc, char **argv) {
    pscan_backend backend = PSCAN_BACKEND_CUDA;
    pscan_algo algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
    long iters = 1000;
    uint64_t seed = 0x5eed;
    int mixed = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(a, "--backend")) {
            if (pscan_backend_parse(v, &backend) != PSCAN_SUCCESS) return usage();
        } else if (v && !strcmp(a, "--algo")) {
            mixed = !strcmp(v, "mixed");
            if (mixed)
                algo = PSCAN_ALGO_AUTO;
            else if (pscan_algo_parse(v, &algo) != PSCAN_SUCCESS)
                return usage();
        } else if (v && !strcmp(a, "--iters")) {
            iters = strtol(v, NULL, 10);
        } else if (v && !strcmp(a, "--seed")) {
            seed = strtoull(v, NULL, 0);
        } else {
            return usage();
        }
        i++;
    }
    if (iters < 1) return usage();

    pscan_context *ctx = NULL;
    int rc = test_open_backend("test_cuda_stress", backend, &ctx);
    if (rc != 0) return rc;

    const pscan_algo *algos = NULL;
    const size_t algo_count = test_backend_algos(backend, &algos);
    test_rng rng = {seed};
    long passed = 0, failed = 0;
    int reports = 0;
    if (prelude(ctx, &passed, &failed) != PSCAN_SUCCESS) failed++;
    size_t cap_bytes = (size_t)BIG_N * 8;
    stress_case cases[BATCH];
    memset(cases, 0, sizeof cases);
    pscan_status s = PSCAN_SUCCESS;
    for (int b = 0; b < BATCH && s == PSCAN_SUCCESS; b++) {
        cases[b].host_in = (unsigned char *)malloc(cap_bytes);
        cases[b].host_out = (unsigned char *)malloc(cap_bytes);
        if (!cases[b].host_in || !cases[b].host_out) s = PSCAN_ERROR_OUT_OF_MEMORY;
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, cap_bytes, &cases[b].dev_in);
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, cap_bytes, &cases[b].dev_out);
    }
    /* one caller temp buffer for the largest request, filled with junk once */
    void *temp = NULL;
    size_t temp_bytes = 0;
    if (s == PSCAN_SUCCESS) {
        for (size_t t = 0; t < TYPE_COUNT && s == PSCAN_SUCCESS; t++) {
            for (size_t a = 0; a < (mixed ? algo_count : 1) && s == PSCAN_SUCCESS; a++) {
                pscan_scan_desc big = {types[t].type, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE,
                                       mixed ? algos[a] : algo, NULL};
                size_t bytes = 0;
                s = pscan_scan_temp_bytes(ctx, &big, BIG_N, &bytes);
                if (bytes > temp_bytes) temp_bytes = bytes;
            }
        }
        if (s == PSCAN_SUCCESS && temp_bytes > 0) {
            temp_bytes += 256; /* room for the random offset of each round */
            unsigned char *junk = (unsigned char *)malloc(temp_bytes);
            s = junk ? pscan_memory_alloc(ctx, temp_bytes, &temp) : PSCAN_ERROR_OUT_OF_MEMORY;
            if (s == PSCAN_SUCCESS) {
                for (size_t i = 0; i < temp_bytes; i++) junk[i] = (unsigned char)test_rng_next(&rng);
                s = pscan_memory_upload(ctx, temp, junk, temp_bytes);
                if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
            }
            free(junk);
        }
    }
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "test_cuda_stress: setup: %s\n", pscan_status_name(s));
        return 1;
    }

    const long rounds = (iters + BATCH - 1) / BATCH;
    for (long r = 0; r < rounds && s == PSCAN_SUCCESS; r++) {
        const int count = (int)(r == rounds - 1 ? iters - r * BATCH : BATCH);
        const int use_caller_temp = (r & 1) == 0 && temp != NULL;
        const size_t offset = (size_t)(test_rng_next(&rng) % 256);
        for (int b = 0; b < count && s == PSCAN_SUCCESS; b++) {
            stress_case *c = &cases[b];
            c->t = &types[test_rng_next(&rng) % TYPE_COUNT];
            c->desc.type = c->t->type;
            c->desc.op = ops[test_rng_next(&rng) % OP_COUNT];
            c->desc.flags = (unsigned)(test_rng_next(&rng) % 4);
            c->desc.algo = mixed ? (test_rng_next(&rng) % 4 == 0 ? PSCAN_ALGO_AUTO
                                                                 : algos[test_rng_next(&rng) % algo_count])
                                 : algo;
            c->init_bits = test_rng_next(&rng) & mask_of(c->t->bytes);
            c->desc.init = test_rng_next(&rng) % 2 ? &c->init_bits : NULL;
            c->in_place = test_rng_next(&rng) % 4 == 0;
            if (test_rng_next(&rng) % 16 == 0)
                c->n = BIG_N - test_rng_next(&rng) % 64;
            else
                c->n = 1 + (test_rng_next(&rng) >> (64 - 1 - (int)(test_rng_next(&rng) % MAX_LOG2)));
            const size_t bytes = (size_t)c->n * c->t->bytes;
            uint64_t op_mask = c->desc.op == PSCAN_OP_PRODUCT ? 1 : 0; /* odd factors: products stay nonzero */
            for (size_t i = 0; i < bytes; i += 8) {
                uint64_t x = test_rng_next(&rng);
                size_t k = bytes - i < 8 ? bytes - i : 8;
                memcpy(c->host_in + i, &x, k);
            }
            if (op_mask)
                for (uint64_t i = 0; i < c->n; i++) c->host_in[i * c->t->bytes] |= 1;
            s = pscan_memory_upload(ctx, c->dev_in, c->host_in, bytes);
        }
        /* the batch, back to back on one stream and one temporary buffer */
        for (int b = 0; b < count && s == PSCAN_SUCCESS; b++) {
            stress_case *c = &cases[b];
            void *out = c->in_place ? c->dev_in : c->dev_out;
            s = pscan_scan(ctx, &c->desc, c->dev_in, out, c->n, use_caller_temp ? (char *)temp + offset : NULL,
                           use_caller_temp ? temp_bytes - offset : 0);
        }
        for (int b = 0; b < count && s == PSCAN_SUCCESS; b++) {
            stress_case *c = &cases[b];
            s = pscan_memory_download(ctx, c->host_out, c->in_place ? c->dev_in : c->dev_out,
                                      (size_t)c->n * c->t->bytes);
        }
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
        for (int b = 0; b < count && s == PSCAN_SUCCESS; b++) {
            if (check(&cases[b], seed, (int)r, b, &reports) == 0)
                passed++;
            else
                failed++;
        }
    }
    if (s != PSCAN_SUCCESS) {
        long long native = 0;
        pscan_context_native_error(ctx, &native);
        fprintf(stderr, "test_cuda_stress: %s (native error %lld)\n", pscan_status_name(s), native);
        failed++;
    }
    for (int b = 0; b < BATCH; b++) {
        pscan_memory_free(ctx, cases[b].dev_in);
        pscan_memory_free(ctx, cases[b].dev_out);
        free(cases[b].host_in);
        free(cases[b].host_out);
    }
    pscan_memory_free(ctx, temp);
    pscan_context_destroy(ctx);
    printf("test_cuda_stress: %s, %ld scans: %ld passed, %ld failed (seed %" PRIu64 ")\n", mixed ? "mixed" : pscan_algo_name(algo),
           iters, passed, failed, seed);
    return failed ? 1 : 0;
}
