/*
 * test_common.h - what every pscan test program shares: the skip exit code, a seeded generator, and the
 * command-line backend lookup. Header-only so that each test stays one file plus this.
 */
#ifndef PSCAN_TEST_COMMON_H
#define PSCAN_TEST_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pscan.h"

/* ctest's SKIP_RETURN_CODE: the backend is not compiled in or found no device (liburing's convention). */
#define TEST_EXIT_SKIP 77

/* splitmix64: one 64-bit state, full-period, good enough bits for test data, and cheap to seed per case. */
static inline uint64_t test_mix64(uint64_t x) {
    x += 0x9E3779B97F4A7C15ull;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    return x ^ (x >> 31);
}

typedef struct test_rng {
    uint64_t state;
} test_rng;

static inline uint64_t test_rng_next(test_rng *r) {
    uint64_t x = test_mix64(r->state);
    r->state += 0x9E3779B97F4A7C15ull;
    return x;
}

/* A uniform double in [0, 1) with 53 random bits. */
static inline double test_rng_unit(test_rng *r) { return (double)(test_rng_next(r) >> 11) * 0x1.0p-53; }

/* ---- host timing for the benchmarks (bench_mpi_scan, bench_nccl, test_scan_host --bench) ---- */

/* Seconds on the monotonic clock. */
static inline double test_now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static inline int test_cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of r samples (sorted in place) and their spread, (p90 - p10) / median, as pscan bench's CSV has it. */
static inline double test_median_spread(double *t, int r, double *spread) {
    qsort(t, (size_t)r, sizeof t[0], test_cmp_double);
    const double m = t[r / 2];
    *spread = m > 0 ? (t[r * 9 / 10 < r ? r * 9 / 10 : r - 1] - t[r / 10]) / m : 0;
    return m;
}

/* The algorithms each backend must implement, as tests/CMakeLists.txt registers them; sets *algos and
 * returns the count. */
static inline size_t test_backend_algos(pscan_backend backend, const pscan_algo **algos) {
    static const pscan_algo cpu[] = {PSCAN_ALGO_SERIAL, PSCAN_ALGO_THREADS};
    static const pscan_algo gpu[] = {PSCAN_ALGO_HILLIS_STEELE,      PSCAN_ALGO_BLELLOCH_UNPADDED,
                                     PSCAN_ALGO_BLELLOCH,           PSCAN_ALGO_SCAN_THEN_PROPAGATE,
                                     PSCAN_ALGO_REDUCE_THEN_SCAN,   PSCAN_ALGO_DECOUPLED_LOOKBACK};
    if (backend == PSCAN_BACKEND_CPU) {
        *algos = cpu;
        return sizeof cpu / sizeof cpu[0];
    }
    *algos = gpu; /* CUDA and OpenCL implement the same progression */
    return sizeof gpu / sizeof gpu[0];
}

/* Whether the environment says this backend must be present (PSCAN_TEST_REQUIRE_BACKENDS="opencl cuda"), so
 * that a CI machine which should run it fails loudly instead of skipping when the backend is missing. */
static inline int test_backend_required(pscan_backend backend) {
    const char *list = getenv("PSCAN_TEST_REQUIRE_BACKENDS");
    const char *name = pscan_backend_name(backend);
    size_t len = name ? strlen(name) : 0;
    for (const char *p = list; p && name && (p = strstr(p, name)) != NULL; p += len) {
        int starts = p == list || p[-1] == ' ' || p[-1] == ',';
        int ends = p[len] == '\0' || p[len] == ' ' || p[len] == ',';
        if (starts && ends) return 1;
    }
    return 0;
}

/* Creates a context on the named backend, or explains why the test must skip (returns TEST_EXIT_SKIP) or fail
 * (returns 1). Returns 0 with *ctx set on success. */
static inline int test_open_backend(const char *program, pscan_backend backend, pscan_context **ctx) {
    int skip = test_backend_required(backend) ? 1 : TEST_EXIT_SKIP;
    const char *verdict = skip == 1 ? "FAIL (PSCAN_TEST_REQUIRE_BACKENDS)" : "SKIP";
    int compiled = 0;
    pscan_status s = pscan_backend_compiled(backend, &compiled);
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "%s: pscan_backend_compiled: %s\n", program, pscan_status_name(s));
        return 1;
    }
    if (!compiled) {
        printf("%s: %s: backend %s is not compiled into this library\n", program, verdict,
               pscan_backend_name(backend));
        return skip;
    }
    s = pscan_context_create(backend, ctx);
    if (s == PSCAN_ERROR_BACKEND_UNAVAILABLE) {
        printf("%s: %s: backend %s found no usable device\n", program, verdict, pscan_backend_name(backend));
        return skip;
    }
    if (s != PSCAN_SUCCESS) {
        /* compiled in and a device was expected: any other failure is the backend's bug, not a skip */
        fprintf(stderr, "%s: FAIL: pscan_context_create(%s): %s\n", program, pscan_backend_name(backend),
                pscan_status_name(s));
        return 1;
    }
    char name[256] = "";
    pscan_context_device_name(*ctx, name, sizeof name);
    printf("%s: backend %s, device \"%s\"\n", program, pscan_backend_name(backend), name);
    return 0;
}

/* The byte written over every output buffer before a call: the bytes the call must not write still hold it. */
#define TEST_POISON 0xA5u

/* 1 when every byte of buf[from, to) still holds TEST_POISON. */
static inline int test_poisoned(const unsigned char *buf, size_t from, size_t to) {
    for (size_t j = from; j < to; j++)
        if (buf[j] != TEST_POISON) return 0;
    return 1;
}

/* Caller temp of need bytes one byte into *buf, device memory of *buf_bytes grown as needed (the library must
 * take temp at any address); on OpenCL, whose handles are cl_mem and cannot be offset, *buf itself. NULL when
 * the allocation failed. */
static inline void *test_caller_temp(pscan_context *ctx, void **buf, size_t *buf_bytes, size_t need) {
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_context_backend(ctx, &backend);
    const size_t offset = backend == PSCAN_BACKEND_OPENCL ? 0 : 1;
    if (need + 1 > *buf_bytes) {
        if (*buf) pscan_memory_free(ctx, *buf);
        *buf = NULL;
        *buf_bytes = 0;
        if (pscan_memory_alloc(ctx, need + 1, buf) != PSCAN_SUCCESS) return NULL;
        *buf_bytes = need + 1;
    }
    return (char *)*buf + offset;
}

/* The options every primitive's test program takes (test_select, test_sort, test_histogram, test_segscan,
 * test_expand): --backend, --algo, --seed (default: PSCAN_TEST_SEED, else the program's own), --threads, --quick
 * and, where the program has larger cases, --full; --shard K/N where the program's tables honour it (TEST_IN_SHARD). */
typedef struct test_options {
    pscan_backend backend;
    pscan_algo algo;
    uint64_t seed;
    int quick, full;
    int large;             /* --large (test_scan): the sizes past 2^24 (1); --large-bytes: the 1-byte types' (2) */
    int strict_order;      /* --strict-order (test_reduce): the first NaN's bits, the earlier of equal elements */
    int only_type, only_op; /* --type T, --op O (test_scan, test_reduce): one type or operator; -1: all */
    long long only_n;      /* --n N (test_scan, test_reduce): one size; -1: all */
    long threads;          /* -1: the backend's default */
    unsigned shard, shards; /* --shard K/N: only the types whose index is K mod N (0/0: all) */
    long stress;           /* --stress N (test_sort): N calls back to back instead of the tables; 0: the tables */
} test_options;

/* The options a program takes beside --backend, --algo, --seed, --threads and --quick (test_parse_options). */
enum {
    TEST_OPT_FULL = 1,         /* --full */
    TEST_OPT_SHARD = 2,        /* --shard K/N: only where the program skips by TEST_IN_SHARD */
    TEST_OPT_LARGE = 4,        /* --large, --large-bytes */
    TEST_OPT_STRICT_ORDER = 8, /* --strict-order */
    TEST_OPT_ONLY = 16,        /* --type, --op, --n */
    TEST_OPT_STRESS = 32,      /* --stress N */
};

/* --shard K/N: the sanitizers' jobs split a program's table by element type, so no one job runs past its time
 * limit (racecheck of test_reduce's quick table passed 400 s beside 11 other jobs on an H200). Returns 0 on a
 * well-formed K/N with K < N. */
static inline int test_parse_shard(const char *s, unsigned *shard, unsigned *shards) {
    char *end;
    const unsigned long k = strtoul(s, &end, 10);
    if (end == s || *end != '/') return 1;
    const char *ns = end + 1;
    const unsigned long n = strtoul(ns, &end, 10);
    if (end == ns || *end || n == 0 || n > 64 || k >= n) return 1;
    *shard = (unsigned)k, *shards = (unsigned)n;
    return 0;
}

/* Whether the type of index ti is in the options' shard (any struct with shard and shards); a program's parts not
 * split by type are numbered 0, 1, ... and go to the shards the same way. */
#define TEST_IN_SHARD(o, ti) ((o)->shards == 0 || (size_t)(ti) % (o)->shards == (o)->shard)
/* Whether --type / --op (any struct with only_type and only_op) select this type / operator. */
#define TEST_TYPE_SELECTED(o, type) ((o)->only_type < 0 || (o)->only_type == (int)(type))
#define TEST_OP_SELECTED(o, op) ((o)->only_op < 0 || (o)->only_op == (int)(op))

/* Fills *o from argv. Returns 0, or prints the program's usage line and returns 1 on anything it does not know
 * (--full too, unless with_full). */
static inline int test_parse_options(const char *program, int argc, char **argv, uint64_t default_seed,
                                     unsigned accept, test_options *o) {
    memset(o, 0, sizeof *o);
    o->backend = PSCAN_BACKEND_CPU;
    o->algo = PSCAN_ALGO_AUTO;
    o->threads = -1;
    o->only_type = o->only_op = -1;
    o->only_n = -1;
    const char *env_seed = getenv("PSCAN_TEST_SEED");
    o->seed = env_seed && *env_seed ? strtoull(env_seed, NULL, 0) : default_seed;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int ok = 1;
        pscan_type type = PSCAN_TYPE_COUNT;
        pscan_op op = PSCAN_OP_COUNT;
        if (v && strcmp(a, "--backend") == 0)
            ok = pscan_backend_parse(argv[++i], &o->backend) == PSCAN_SUCCESS;
        else if (v && strcmp(a, "--algo") == 0)
            ok = pscan_algo_parse(argv[++i], &o->algo) == PSCAN_SUCCESS;
        else if (v && strcmp(a, "--seed") == 0)
            o->seed = strtoull(argv[++i], NULL, 0);
        else if (v && strcmp(a, "--threads") == 0)
            o->threads = strtol(argv[++i], NULL, 0);
        else if (strcmp(a, "--quick") == 0)
            o->quick = 1;
        else if ((accept & TEST_OPT_FULL) && strcmp(a, "--full") == 0)
            o->full = 1;
        else if ((accept & TEST_OPT_LARGE) && strcmp(a, "--large") == 0)
            o->large = 1;
        else if ((accept & TEST_OPT_LARGE) && strcmp(a, "--large-bytes") == 0)
            o->large = 2;
        else if ((accept & TEST_OPT_STRICT_ORDER) && strcmp(a, "--strict-order") == 0)
            o->strict_order = 1;
        else if ((accept & TEST_OPT_SHARD) && v && strcmp(a, "--shard") == 0)
            ok = test_parse_shard(argv[++i], &o->shard, &o->shards) == 0;
        else if ((accept & TEST_OPT_ONLY) && v && strcmp(a, "--type") == 0)
            ok = pscan_type_parse(argv[++i], &type) == PSCAN_SUCCESS, o->only_type = (int)type;
        else if ((accept & TEST_OPT_ONLY) && v && strcmp(a, "--op") == 0)
            ok = pscan_op_parse(argv[++i], &op) == PSCAN_SUCCESS, o->only_op = (int)op;
        else if ((accept & TEST_OPT_ONLY) && v && strcmp(a, "--n") == 0)
            o->only_n = strtoll(argv[++i], NULL, 0);
        else if ((accept & TEST_OPT_STRESS) && v && strcmp(a, "--stress") == 0)
            ok = (o->stress = strtol(argv[++i], NULL, 0)) > 0;
        else
            ok = 0;
        if (!ok) {
            fprintf(stderr, "usage: %s --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]",
                    program);
            fprintf(stderr, "%s%s%s%s%s%s\n", accept & TEST_OPT_FULL ? " [--full]" : "",
                    accept & TEST_OPT_LARGE ? " [--large | --large-bytes]" : "", accept & TEST_OPT_STRICT_ORDER ? " [--strict-order]" : "",
                    accept & TEST_OPT_SHARD ? " [--shard K/N]" : "", accept & TEST_OPT_ONLY ? " [--type T] [--op O] [--n N]" : "",
                    accept & TEST_OPT_STRESS ? " [--stress N]" : "");
            return 1;
        }
    }
    return 0;
}

/* test_open_backend, then --threads: 0 with *ctx set, TEST_EXIT_SKIP, or 1 (nothing left open). */
static inline int test_open_context(const char *program, const test_options *o, pscan_context **ctx) {
    int rc = test_open_backend(program, o->backend, ctx);
    if (rc != 0) return rc;
    if (o->threads >= 0) {
        const pscan_status st = pscan_context_set_threads(*ctx, (unsigned)o->threads);
        if (st != PSCAN_SUCCESS) {
            fprintf(stderr, "%s: FAIL: pscan_context_set_threads(%ld): %s\n", program, o->threads,
                    pscan_status_name(st));
            pscan_context_destroy(*ctx);
            *ctx = NULL;
            return 1;
        }
        char name[256] = "";
        pscan_context_device_name(*ctx, name, sizeof name);
        printf("%s: now \"%s\"\n", program, name);
    }
    return 0;
}

#endif /* PSCAN_TEST_COMMON_H */
