/*
 * test_mpi_scan.c - the MPI add-on's table, read as a specification of pscan_mpi_scan() and pscan_mpi_reduce().
 *
 *   mpirun -np P test_mpi_scan --backend cpu|cuda [--quick] [--seed S]
 *
 * Every rank builds the same whole array from the seed (so every rank knows every slice), computes the serial
 * reference of the whole array here (integers as raw bits in a uint64 with the type's wraparound, floats in long
 * double, one element at a time, never through the library) and checks its own slice of the result bit for bit.
 *
 * The table: every element type x every operator it has x {inclusive, exclusive} x {forward, reverse} x
 * {identity, a given init}, over slice layouts that cover the awkward cases: every rank 1 element; equal
 * slices; random unequal sizes; every other rank empty; only the last rank non-empty; only the first; every
 * rank empty; and (without --quick) one slice of 200003 elements beside small ones, so the local scans cross
 * CUDA tiles. Cases alternate in place / out of place and the context's workspace / a caller temp at an odd
 * address. pscan_mpi_reduce runs over the same layouts with and without init; the result must land on every
 * rank.
 * Float data are exact in every order of combination (as in test_reduce.c): multiples of 2^-4 for sums, +-1
 * and a few +-2^(+-1) for products, any values for min and max.
 *
 * Order: ranks hold one zero each, -0.0 on odd ranks and +0.0 on even ones. min and max keep the earlier of
 * equal elements, so a forward scan must hold rank 0's zero everywhere and a reverse scan the last rank's:
 * a spine that combined the totals out of rank order (or commuted them) flips a sign bit.
 *
 * Bad input: one rank passes a NULL input (n > 0), or too small a temp; that rank returns the status, the
 * ranks after it (before it, reversed) return it too, the others succeed, and no output of a failing rank
 * changes. A reduce with one rank's input NULL fails on every rank.
 *
 * Exit: 0 when every rank passed, 1 otherwise, 77 when the backend is missing. Rank 0 prints the summary line
 * "test_mpi_scan: P ranks, N passed, F failed".
 */
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan_mpi.h"
#include "test_common.h"
#include "test_reference.h"

#define MAX_REPORTS 10

/* ---- layouts: every rank computes every slice size from the same numbers ----------------------------- */

#define LAYOUT_COUNT 8
static const char *const layout_names[LAYOUT_COUNT] = {"one-each",   "equal",      "random",     "odd-empty",
                                                       "last-only",  "first-only", "all-empty",  "one-large"};

static size_t slice_size(int layout, int rank, int size, uint64_t seed) {
    switch (layout) {
    case 0: return 1;
    case 1: return 37;
    case 2: return (size_t)(test_mix64(seed ^ (uint64_t)rank * 0x9E37u) % 3001);
    case 3: return rank % 2 ? 0 : (size_t)(test_mix64(seed + (uint64_t)rank) % 700) + 1;
    case 4: return rank == size - 1 ? 1001 : 0;
    case 5: return rank == 0 ? 999 : 0;
    case 6: return 0;
    default: return rank == size / 2 ? 200003 : (size_t)rank * 5 + 3;
    }
}

/* ---- the harness ---------------------------------------------------------------------------------------- */

typedef struct harness {
    pscan_context *ctx;
    pscan_backend backend;
    int rank, size;
    uint64_t seed;
    unsigned long passed, failed, reports;
} harness;

static void check(harness *h, int ok, const char *what) {
    if (ok) {
        h->passed++;
        return;
    }
    h->failed++;
    if (h->reports++ < MAX_REPORTS)
        fprintf(stderr, "FAIL: rank %d/%d backend=%s seed=%" PRIu64 ": %s\n", h->rank, h->size,
                pscan_backend_name(h->backend), h->seed, what);
}

/* Device buffers of the case: in (n + 1 elements, the input at element `shift`) and out. */
typedef struct slice {
    void *d_in, *d_out, *d_temp;
    size_t n, offset, temp_bytes;
} slice;

static int slice_alloc(harness *h, slice *s, size_t n, size_t bytes, size_t temp_bytes) {
    memset(s, 0, sizeof *s);
    s->n = n;
    const size_t b = (n + 1) * bytes;
    if (pscan_memory_alloc(h->ctx, b, &s->d_in) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h->ctx, b, &s->d_out) != PSCAN_SUCCESS ||
        pscan_memory_alloc(h->ctx, temp_bytes + 8, &s->d_temp) != PSCAN_SUCCESS)
        return 1;
    s->temp_bytes = temp_bytes;
    return 0;
}

static void slice_free(harness *h, slice *s) {
    pscan_memory_free(h->ctx, s->d_in);
    pscan_memory_free(h->ctx, s->d_out);
    pscan_memory_free(h->ctx, s->d_temp);
}

/* One scan case on every rank: this rank's slice of g starts at element `first`. */
static void run_scan_case(harness *h, const type_info *t, pscan_op op, unsigned flags, int with_init, int layout,
                          int variant, const unsigned char *g, size_t total, size_t first, size_t n,
                          unsigned char *ref, unsigned char *got, test_rng *rng) {
    unsigned char init[8] = {0};
    pick_init(rng, t, op, with_init, init); /* drawn on every rank alike, so the seed stays in step */
    reference_scan(t, op, flags, init, g, total, ref);

    const int in_place = variant & 1, caller_temp = (variant & 2) != 0;
    const pscan_scan_desc desc = {t->type, op, flags, PSCAN_ALGO_AUTO, with_init ? init : NULL};
    size_t need = 0;
    pscan_status st = pscan_mpi_scan_temp_bytes(h->ctx, &desc, n, &need);
    char what[512];
    snprintf(what, sizeof what, "temp query %s %s flags=%u layout=%s: %s", t->name, pscan_op_name(op), flags,
             layout_names[layout], pscan_status_name(st));
    check(h, st == PSCAN_SUCCESS, what);
    slice s;
    if (slice_alloc(h, &s, n, t->bytes, need)) {
        check(h, 0, "device allocation failed");
        return;
    }
    /* out poisoned with 0xA5, in holds the slice */
    memset(got, 0xA5, (n + 1) * t->bytes);
    pscan_memory_upload(h->ctx, s.d_out, got, (n + 1) * t->bytes);
    pscan_memory_upload(h->ctx, s.d_in, g + first * t->bytes, n * t->bytes);
    void *out = in_place ? s.d_in : s.d_out;
    void *temp = caller_temp ? (void *)((char *)s.d_temp + 3) : NULL;
    st = pscan_mpi_scan(h->ctx, MPI_COMM_WORLD, &desc, s.d_in, out, n, temp, caller_temp ? need : 0);
    pscan_context_synchronize(h->ctx);
    snprintf(what, sizeof what, "pscan_mpi_scan %s %s flags=%u init=%d layout=%s variant=%d: %s", t->name,
             pscan_op_name(op), flags, with_init, layout_names[layout], variant, pscan_status_name(st));
    check(h, st == PSCAN_SUCCESS, what);
    memset(got, 0, (n + 1) * t->bytes);
    pscan_memory_download(h->ctx, got, out, (n + 1) * t->bytes);
    pscan_context_synchronize(h->ctx);
    size_t bad = n;
    for (size_t i = 0; i < n && bad == n; i++)
        if (memcmp(got + i * t->bytes, ref + (first + i) * t->bytes, t->bytes) != 0) bad = i;
    snprintf(what, sizeof what, "%s %s flags=%u init=%d layout=%s variant=%d: slice of %zu at %zu: element %zu "
             "(global %zu) is 0x%" PRIx64 ", expected 0x%" PRIx64, t->name, pscan_op_name(op), flags, with_init,
             layout_names[layout], variant, n, first, bad, first + bad,
             bad < n ? load_raw(got, bad, t->bytes) : 0, bad < n ? load_raw(ref, first + bad, t->bytes) : 0);
    check(h, bad == n, what);
    if (!in_place) {
        /* the element past the slice is never written */
        int guard = 1;
        for (size_t j = 0; j < t->bytes; j++) guard = guard && got[n * t->bytes + j] == 0xA5;
        check(h, guard, "pscan_mpi_scan wrote past the slice");
    }
    slice_free(h, &s);
}

static void run_reduce_case(harness *h, const type_info *t, pscan_op op, int with_init, int layout,
                            const unsigned char *g, size_t total, size_t first, size_t n, test_rng *rng) {
    unsigned char init[8] = {0}, want[8] = {0}, got[8] = {0};
    pick_init(rng, t, op, with_init, init);
    unsigned char *ref = (unsigned char *)malloc((total + 1) * t->bytes);
    reference_scan(t, op, 0, init, g, total, ref);
    memcpy(want, total ? ref + (total - 1) * t->bytes : init, t->bytes);
    free(ref);
    const pscan_reduce_desc desc = {t->type, op, PSCAN_ALGO_AUTO, with_init ? init : NULL};
    slice s;
    if (slice_alloc(h, &s, n, t->bytes, 0)) {
        check(h, 0, "device allocation failed");
        return;
    }
    pscan_memory_upload(h->ctx, s.d_in, g + first * t->bytes, n * t->bytes);
    pscan_status st = pscan_mpi_reduce(h->ctx, MPI_COMM_WORLD, &desc, s.d_in, n, s.d_out, NULL, 0);
    pscan_memory_download(h->ctx, got, s.d_out, t->bytes);
    pscan_context_synchronize(h->ctx);
    char what[256];
    snprintf(what, sizeof what, "pscan_mpi_reduce %s %s init=%d layout=%s: %s, 0x%" PRIx64 " expected 0x%" PRIx64,
             t->name, pscan_op_name(op), with_init, layout_names[layout], pscan_status_name(st),
             load_raw(got, 0, t->bytes), load_raw(want, 0, t->bytes));
    check(h, st == PSCAN_SUCCESS && memcmp(got, want, t->bytes) == 0, what);
    slice_free(h, &s);
}

static void run_table(harness *h, int quick) {
    const unsigned flag_sets[4] = {0, PSCAN_SCAN_EXCLUSIVE, PSCAN_SCAN_REVERSE,
                                   PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE};
    const int layouts = quick ? LAYOUT_COUNT - 1 : LAYOUT_COUNT;
    int variant = 0;
    for (size_t ti = 0; ti < TYPE_COUNT; ti++) {
        const type_info *t = &types[ti];
        for (size_t oi = 0; oi < OP_COUNT; oi++) {
            if (t->is_float && op_is_bitwise(ops[oi])) continue;
            for (int layout = 0; layout < layouts; layout++) {
                const uint64_t case_seed = test_mix64(h->seed ^ (ti << 8) ^ (oi << 16) ^ ((uint64_t)layout << 24));
                size_t total = 0, first = 0, n = 0;
                for (int r = 0; r < h->size; r++) {
                    size_t k = slice_size(layout, r, h->size, case_seed);
                    if (r == h->rank) first = total, n = k;
                    total += k;
                }
                unsigned char *g = (unsigned char *)malloc((total + 1) * t->bytes);
                unsigned char *ref = (unsigned char *)malloc((total + 1) * t->bytes);
                unsigned char *got = (unsigned char *)malloc((n + 1) * t->bytes);
                test_rng rng = {case_seed};
                fill(&rng, t, ops[oi], g, total);
                for (int f = 0; f < 4; f++)
                    for (int with_init = 0; with_init < 2; with_init++)
                        run_scan_case(h, t, ops[oi], flag_sets[f], with_init, layout, variant++ & 3, g, total,
                                      first, n, ref, got, &rng);
                for (int with_init = 0; with_init < 2; with_init++)
                    run_reduce_case(h, t, ops[oi], with_init, layout, g, total, first, n, &rng);
                free(g);
                free(ref);
                free(got);
            }
        }
    }
}

/* ---- order: signed zeros, one per rank ---------------------------------------------------------------- */

static void run_order(harness *h) {
    for (int is_min = 0; is_min < 2; is_min++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            const pscan_op op = is_min ? PSCAN_OP_MIN : PSCAN_OP_MAX;
            const double mine = h->rank % 2 ? -0.0 : 0.0;
            const int source = flags & PSCAN_SCAN_REVERSE ? h->size - 1 : 0; /* whose zero every result holds */
            void *d = NULL;
            pscan_memory_alloc(h->ctx, sizeof(double), &d);
            pscan_memory_upload(h->ctx, d, &mine, sizeof mine);
            const pscan_scan_desc desc = {PSCAN_TYPE_F64, op, flags, PSCAN_ALGO_AUTO, NULL};
            pscan_status st = pscan_mpi_scan(h->ctx, MPI_COMM_WORLD, &desc, d, d, 1, NULL, 0);
            double got = 1.0;
            pscan_memory_download(h->ctx, &got, d, sizeof got);
            pscan_context_synchronize(h->ctx);
            const int is_first = flags & PSCAN_SCAN_REVERSE ? h->rank == h->size - 1 : h->rank == 0;
            char what[256];
            snprintf(what, sizeof what, "order: %s flags=%u: %s, got %s0.0, expected the zero of rank %d",
                     pscan_op_name(op), flags, pscan_status_name(st), signbit(got) ? "-" : "+", source);
            if (flags & PSCAN_SCAN_EXCLUSIVE && is_first) {
                check(h, st == PSCAN_SUCCESS && isinf(got), what); /* the identity */
            } else {
                check(h, st == PSCAN_SUCCESS && got == 0.0 && !!signbit(got) == (source % 2), what);
            }
            pscan_memory_free(h->ctx, d);
        }
    }
}

/* ---- bad input: one rank fails, the ranks downstream fail with it, nothing of theirs is written --------- */

static void run_bad_inputs(harness *h) {
    const int culprit = h->size / 2;
    for (int kind = 0; kind < 2; kind++) {
        for (unsigned flags = 0; flags < 4; flags++) {
            const size_t n = 100;
            int32_t host[101];
            for (size_t i = 0; i <= n; i++) host[i] = (int32_t)i + 1;
            void *d_in = NULL, *d_out = NULL, *d_temp = NULL;
            pscan_memory_alloc(h->ctx, sizeof host, &d_in);
            pscan_memory_alloc(h->ctx, sizeof host, &d_out);
            const pscan_scan_desc desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, flags, PSCAN_ALGO_AUTO, NULL};
            size_t need = 0;
            pscan_mpi_scan_temp_bytes(h->ctx, &desc, n, &need);
            pscan_memory_alloc(h->ctx, need, &d_temp);
            pscan_memory_upload(h->ctx, d_in, host, sizeof host);
            int32_t poison[101];
            for (size_t i = 0; i <= n; i++) poison[i] = -7;
            pscan_memory_upload(h->ctx, d_out, poison, sizeof poison);
            const int bad = h->rank == culprit;
            const pscan_status expected = kind == 0 ? PSCAN_ERROR_NULL_POINTER : PSCAN_ERROR_TEMP_TOO_SMALL;
            pscan_status st = pscan_mpi_scan(h->ctx, MPI_COMM_WORLD, &desc, bad && kind == 0 ? NULL : d_in, d_out,
                                             n, d_temp, bad && kind == 1 ? need - 1 : need);
            const int downstream = flags & PSCAN_SCAN_REVERSE ? h->rank <= culprit : h->rank >= culprit;
            int32_t got[101];
            pscan_memory_download(h->ctx, got, d_out, sizeof got);
            pscan_context_synchronize(h->ctx);
            char what[256];
            snprintf(what, sizeof what, "bad input (%s on rank %d) flags=%u: %s, expected %s",
                     kind == 0 ? "NULL in" : "temp too small", culprit, flags, pscan_status_name(st),
                     pscan_status_name(downstream ? expected : PSCAN_SUCCESS));
            check(h, st == (downstream ? expected : PSCAN_SUCCESS), what);
            if (downstream) check(h, memcmp(got, poison, sizeof got) == 0, "a failing rank's output changed");
            pscan_memory_free(h->ctx, d_in);
            pscan_memory_free(h->ctx, d_out);
            pscan_memory_free(h->ctx, d_temp);
        }
    }
    /* a reduce fails on every rank */
    int64_t one = 1, result = -7;
    void *d_in = NULL, *d_res = NULL;
    pscan_memory_alloc(h->ctx, sizeof one, &d_in);
    pscan_memory_alloc(h->ctx, sizeof result, &d_res);
    pscan_memory_upload(h->ctx, d_in, &one, sizeof one);
    pscan_memory_upload(h->ctx, d_res, &result, sizeof result);
    const pscan_reduce_desc rd = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    pscan_status st = pscan_mpi_reduce(h->ctx, MPI_COMM_WORLD, &rd, h->rank == culprit ? NULL : d_in, 1, d_res,
                                       NULL, 0);
    pscan_memory_download(h->ctx, &result, d_res, sizeof result);
    pscan_context_synchronize(h->ctx);
    check(h, st == PSCAN_ERROR_NULL_POINTER && result == -7, "a reduce with one rank's input NULL must fail on "
                                                             "every rank and write nothing");
    pscan_memory_free(h->ctx, d_in);
    pscan_memory_free(h->ctx, d_res);
    /* arguments no rank could take part with */
    check(h, pscan_mpi_scan(NULL, MPI_COMM_WORLD, NULL, NULL, NULL, 0, NULL, 0) == PSCAN_ERROR_NULL_POINTER,
          "NULL ctx");
    const pscan_scan_desc desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    check(h, pscan_mpi_scan(h->ctx, MPI_COMM_NULL, &desc, NULL, NULL, 0, NULL, 0) == PSCAN_ERROR_INVALID_VALUE,
          "MPI_COMM_NULL");
    size_t bytes = 1;
    check(h, pscan_mpi_scan_temp_bytes(h->ctx, NULL, 0, &bytes) == PSCAN_ERROR_NULL_POINTER && bytes == 0,
          "temp query with a NULL desc");
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    harness h;
    memset(&h, 0, sizeof h);
    MPI_Comm_rank(MPI_COMM_WORLD, &h.rank);
    MPI_Comm_size(MPI_COMM_WORLD, &h.size);
    h.backend = PSCAN_BACKEND_CPU;
    const char *seed_env = getenv("PSCAN_TEST_SEED");
    h.seed = seed_env ? strtoull(seed_env, NULL, 0) : 20261123u;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            if (pscan_backend_parse(argv[++i], &h.backend) != PSCAN_SUCCESS) {
                fprintf(stderr, "test_mpi_scan: unknown backend %s\n", argv[i]);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            h.seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            fprintf(stderr, "usage: test_mpi_scan --backend cpu|cuda [--quick] [--seed S]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    /* every rank opens its backend; if any cannot, all skip (or fail) together */
    int open = test_open_backend("test_mpi_scan", h.backend, &h.ctx), worst = 0;
    MPI_Allreduce(&open, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst != 0) {
        pscan_context_destroy(h.ctx);
        MPI_Finalize();
        return worst == TEST_EXIT_SKIP ? TEST_EXIT_SKIP : 1;
    }
    run_order(&h);
    run_bad_inputs(&h);
    run_table(&h, quick);
    unsigned long counts[2] = {h.passed, h.failed}, sums[2] = {0, 0};
    MPI_Reduce(counts, sums, 2, MPI_UNSIGNED_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    unsigned long any_failed = 0;
    MPI_Allreduce(&h.failed, &any_failed, 1, MPI_UNSIGNED_LONG, MPI_MAX, MPI_COMM_WORLD);
    if (h.rank == 0) printf("test_mpi_scan: %d ranks, %lu passed, %lu failed\n", h.size, sums[0], sums[1]);
    pscan_context_destroy(h.ctx);
    MPI_Finalize();
    return any_failed ? 1 : 0;
}
