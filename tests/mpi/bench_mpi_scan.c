/*
 * bench_mpi_scan.c - issue 15's MPI speed target ("the carry exchange adds at most 50 us per call on one host
 * for 4 ranks"): what pscan_mpi_scan() costs on each rank beyond pscan_scan() of the same slice alone.
 *
 *   mpirun -np P bench_mpi_scan [--backend cpu|cuda] [--sizes N,N,...] [--reps R (51)] [--warmup W (5)]
 *                               [--threads T] [--label TEXT] [--csv FILE] [--quick]
 *
 * Every rank holds n_local random i32 (seeded by rank) for each n_local of --sizes (default 1, 2^10, 2^16,
 * 2^20) and times, on its own context, with the same buffers (in -> out, one caller temp big enough for all):
 *   mpi-exscan  one MPI_Exscan of a 16-byte element (MPI_Type_contiguous of 16 MPI_BYTE) with a user MPI_Op
 *               created non-commutative that adds an int32 inside it: the shape of pscan's exchange with nothing
 *               of pscan in it (type and op created once, outside the timing): MPI's own latency
 *   mpi-exscan-new  the same with the datatype and the operator created and freed around it, as
 *               pscan_mpi_scan's exchange does on every call
 *   reduce      pscan_reduce of the slice into a device slot, its download, pscan_context_synchronize: the
 *               local pass pscan_mpi_scan adds before the exchange
 *   scan        pscan_scan of the slice, pscan_context_synchronize
 *   mpi-scan    pscan_mpi_scan of the slice (i32 sum, inclusive), pscan_context_synchronize
 * Each repetition: MPI_Barrier, then the host clock (CLOCK_MONOTONIC) around the call and the synchronize; the
 * five kinds are interleaved within a repetition, so slow phases of a shared machine hit them alike. Median and
 * spread ((p90 - p10) / median) of R repetitions after W warm-ups, on each rank.
 *
 * Rank 0 prints, per n_local, each kind's median as the maximum over ranks (a collective is as slow as its
 * slowest rank) with the largest spread, and
 *   added        = median(mpi-scan) - median(scan), computed on each rank, the maximum over ranks (MPI_MAX)
 *   beyond reduce = median(mpi-scan) - median(scan) - median(reduce), the same way: the exchange as the call
 *                  sees it (MPI_Exscan, creating and freeing its datatype and operator, combining the carry)
 * The 50 us is compared against `added` at 4 ranks; `beyond reduce` against mpi-exscan says how much of
 * it is MPI's and how much pscan's own.
 * A last pscan_mpi_scan per size is checked: each rank's first and last output against sums computed here.
 *
 * --threads: CPU worker threads per rank; default the host's online cores / the ranks on this host (at least
 * 1), so ranks do not fight over cores more than they must. --label adds text to the CSV's device column (such
 * as "yield_when_idle"). --quick: sizes 1 and 2^10, 21 repetitions after 2 warm-ups (the ctest).
 *
 * --csv FILE (rank 0): rows in the columns of `pscan bench --csv`; algo mpi-exscan, mpi-exscan-new, reduce, scan,
 * mpi-scan, mpi-added and mpi-beyond-reduce (time_us = added and beyond reduce; their spread empty); primitive
 * mpi-scan; n = all ranks' elements (P x n_local); device = the context's device name, ", P ranks" and the label;
 * gbps = bytes read and written / time (scan and mpi-scan as 2 x 4 bytes per element, however many passes they
 * make; reduce 4 bytes per element; empty for the others);
 * of_copy, of_cub, cub_time_us empty (no copy or CUB here); in_place 0.
 *
 * Exit: 0, 1 when a check fails, 77 when the backend is missing, 2 on bad arguments.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pscan_mpi.h"
#include "test_common.h"

#define MAX_SIZES 16

enum { KIND_EXSCAN, KIND_EXSCAN_NEW, KIND_REDUCE, KIND_SCAN, KIND_MPI_SCAN, KIND_COUNT };
static const char *const kind_names[KIND_COUNT] = {"mpi-exscan", "mpi-exscan-new", "reduce", "scan", "mpi-scan"};

/* ---- the raw exchange: 16 bytes, a non-commutative user operator that adds the int32 at offset 8 -------- */

static void pair_add(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    (void)datatype;
    const unsigned char *earlier = (const unsigned char *)in;
    unsigned char *later = (unsigned char *)inout;
    for (int i = 0; i < *len; i++) {
        uint32_t a, b;
        memcpy(&a, earlier + 16 * i + 8, 4);
        memcpy(&b, later + 16 * i + 8, 4);
        b += a;
        memcpy(later + 16 * i + 8, &b, 4);
    }
}

/* ---- one rank's state ----------------------------------------------------------------------------------- */

typedef struct bench {
    pscan_context *ctx;
    int rank, size;
    MPI_Datatype pair_type;
    MPI_Op pair_op;
    void *in, *out, *slot, *temp;
    size_t temp_bytes;
} bench;

#define PK(call)                                                                                                  \
    do {                                                                                                          \
        pscan_status s_ = (call);                                                                                 \
        if (s_ != PSCAN_SUCCESS) {                                                                                \
            fprintf(stderr, "bench_mpi_scan: rank %d: %s: %s (line %d)\n", b->rank, #call, pscan_status_name(s_), \
                    __LINE__);                                                                                    \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                                         \
        }                                                                                                         \
    } while (0)

static const pscan_scan_desc scan_desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
static const pscan_reduce_desc reduce_desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};

/* One timed call of a kind on n elements: barrier, clock, call, synchronize, clock. */
static double time_once(bench *b, int kind, uint64_t n) {
    unsigned char mine[16] = {0}, got[16] = {0}, total[4];
    MPI_Barrier(MPI_COMM_WORLD);
    const double t0 = test_now_seconds();
    switch (kind) {
    case KIND_EXSCAN: MPI_Exscan(mine, got, 1, b->pair_type, b->pair_op, MPI_COMM_WORLD); break;
    case KIND_EXSCAN_NEW: {
        MPI_Datatype type;
        MPI_Op op;
        MPI_Type_contiguous(16, MPI_BYTE, &type);
        MPI_Type_commit(&type);
        MPI_Op_create(pair_add, 0, &op);
        MPI_Exscan(mine, got, 1, type, op, MPI_COMM_WORLD);
        MPI_Op_free(&op);
        MPI_Type_free(&type);
        break;
    }
    case KIND_REDUCE:
        PK(pscan_reduce(b->ctx, &reduce_desc, b->in, n, b->slot, b->temp, b->temp_bytes));
        PK(pscan_memory_download(b->ctx, total, b->slot, 4));
        break;
    case KIND_SCAN: PK(pscan_scan(b->ctx, &scan_desc, b->in, b->out, n, b->temp, b->temp_bytes)); break;
    default: PK(pscan_mpi_scan(b->ctx, MPI_COMM_WORLD, &scan_desc, b->in, b->out, n, b->temp, b->temp_bytes));
    }
    PK(pscan_context_synchronize(b->ctx));
    return test_now_seconds() - t0;
}

/* A last pscan_mpi_scan, checked: out[0] = carry + in[0], out[n-1] = carry + the slice's sum (mod 2^32). */
static int check_mpi_scan(bench *b, const uint32_t *host, uint64_t n) {
    uint32_t sum = 0, carry = 0;
    for (uint64_t i = 0; i < n; i++) sum += host[i];
    MPI_Exscan(&sum, &carry, 1, MPI_UINT32_T, MPI_SUM, MPI_COMM_WORLD);
    if (b->rank == 0) carry = 0;
    PK(pscan_mpi_scan(b->ctx, MPI_COMM_WORLD, &scan_desc, b->in, b->out, n, b->temp, b->temp_bytes));
    uint32_t first = 0, last = 0;
    PK(pscan_memory_download(b->ctx, &first, b->out, 4));
    PK(pscan_memory_download(b->ctx, &last, (char *)b->out + (n - 1) * 4, 4));
    PK(pscan_context_synchronize(b->ctx));
    const int ok = first == carry + host[0] && last == carry + sum;
    if (!ok)
        fprintf(stderr, "bench_mpi_scan: FAIL: rank %d n_local %llu: first %u (want %u), last %u (want %u)\n",
                b->rank, (unsigned long long)n, first, carry + host[0], last, carry + sum);
    return ok;
}

static FILE *csv;
static char csv_device[512];
static const char *csv_backend;

static void csv_row(const char *algo, uint64_t n_all, double seconds, double bytes_per_elem, double spread,
                    int have_spread) {
    if (!csv) return;
    char gbps[32] = "", sp[32] = "";
    if (bytes_per_elem > 0 && seconds > 0)
        snprintf(gbps, sizeof gbps, "%.4f", bytes_per_elem * (double)n_all / seconds * 1e-9);
    if (have_spread) snprintf(sp, sizeof sp, "%.4f", spread);
    fprintf(csv, "%s,\"%s\",%s,i32,sum,inclusive,forward,%llu,%.3f,%s,,,,0,%s,mpi-scan\n", csv_backend, csv_device,
            algo, (unsigned long long)n_all, seconds * 1e6, gbps, sp);
}

/* All kinds for one n_local; rank 0 prints the line and the CSV rows. Returns 1 when the check passed. */
static int run_size(bench *b, uint64_t n, int reps, int warmup, uint64_t seed) {
    const size_t bytes = (size_t)n * 4;
    uint32_t *host = (uint32_t *)malloc(bytes);
    test_rng rng = {seed ^ ((uint64_t)b->rank << 32) ^ n};
    for (uint64_t i = 0; i < n; i++) host[i] = (uint32_t)test_rng_next(&rng);
    size_t need[3] = {0, 0, 0};
    PK(pscan_mpi_scan_temp_bytes(b->ctx, &scan_desc, n, &need[0]));
    PK(pscan_scan_temp_bytes(b->ctx, &scan_desc, n, &need[1]));
    PK(pscan_reduce_temp_bytes(b->ctx, &reduce_desc, n, &need[2]));
    b->temp_bytes = 64;
    for (int i = 0; i < 3; i++)
        if (need[i] > b->temp_bytes) b->temp_bytes = need[i];
    PK(pscan_memory_alloc(b->ctx, bytes, &b->in));
    PK(pscan_memory_alloc(b->ctx, bytes, &b->out));
    PK(pscan_memory_alloc(b->ctx, 16, &b->slot));
    PK(pscan_memory_alloc(b->ctx, b->temp_bytes, &b->temp));
    PK(pscan_memory_upload(b->ctx, b->in, host, bytes));
    PK(pscan_context_synchronize(b->ctx));

    double *t[KIND_COUNT];
    for (int k = 0; k < KIND_COUNT; k++) t[k] = (double *)malloc(sizeof(double) * (size_t)reps);
    for (int r = -warmup; r < reps; r++)
        for (int k = 0; k < KIND_COUNT; k++) {
            const double s = time_once(b, k, n);
            if (r >= 0) t[k][r] = s;
        }
    /* per rank: medians and spreads; then the maximum over ranks of each, and of the differences */
    double med[KIND_COUNT], spread[KIND_COUNT];
    for (int k = 0; k < KIND_COUNT; k++) med[k] = test_median_spread(t[k], reps, &spread[k]);
    double mine[2 * KIND_COUNT + 2], worst[2 * KIND_COUNT + 2];
    for (int k = 0; k < KIND_COUNT; k++) {
        mine[k] = med[k];
        mine[KIND_COUNT + k] = spread[k];
    }
    mine[2 * KIND_COUNT] = med[KIND_MPI_SCAN] - med[KIND_SCAN];
    mine[2 * KIND_COUNT + 1] = med[KIND_MPI_SCAN] - med[KIND_SCAN] - med[KIND_REDUCE];
    MPI_Reduce(mine, worst, 2 * KIND_COUNT + 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);

    int ok = check_mpi_scan(b, host, n), all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (b->rank == 0) {
        printf("%9llu %10llu", (unsigned long long)n, (unsigned long long)n * (unsigned long long)b->size);
        for (int k = 0; k < KIND_COUNT; k++) printf(" %10.2f (%5.2f)", worst[k] * 1e6, worst[KIND_COUNT + k]);
        printf(" %10.2f %10.2f%s\n", worst[2 * KIND_COUNT] * 1e6, worst[2 * KIND_COUNT + 1] * 1e6,
               all_ok ? "" : "  CHECK FAILED");
        const uint64_t n_all = n * (uint64_t)b->size;
        const double per_elem[KIND_COUNT] = {0, 0, 4, 8, 8};
        for (int k = 0; k < KIND_COUNT; k++)
            csv_row(kind_names[k], n_all, worst[k], per_elem[k], worst[KIND_COUNT + k], 1);
        csv_row("mpi-added", n_all, worst[2 * KIND_COUNT], 0, 0, 0);
        csv_row("mpi-beyond-reduce", n_all, worst[2 * KIND_COUNT + 1], 0, 0, 0);
        fflush(stdout);
    }
    for (int k = 0; k < KIND_COUNT; k++) free(t[k]);
    pscan_memory_free(b->ctx, b->in);
    pscan_memory_free(b->ctx, b->out);
    pscan_memory_free(b->ctx, b->slot);
    pscan_memory_free(b->ctx, b->temp);
    free(host);
    return all_ok;
}

static int parse_sizes(const char *s, uint64_t *sizes) {
    int count = 0;
    while (*s && count < MAX_SIZES) {
        char *end = NULL;
        const unsigned long long v = strtoull(s, &end, 0);
        if (end == s || v == 0) return 0;
        sizes[count++] = v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',') return 0;
    }
    return *s ? 0 : count;
}

int main(int argc, char **argv) {
    MPI_Init(&argc, &argv);
    bench bb;
    bench *b = &bb;
    memset(b, 0, sizeof *b);
    MPI_Comm_rank(MPI_COMM_WORLD, &b->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &b->size);
    pscan_backend backend = PSCAN_BACKEND_CPU;
    uint64_t sizes[MAX_SIZES] = {1, 1u << 10, 1u << 16, 1u << 20};
    int count = 4, reps = 51, warmup = 5, quick = 0, bad = 0;
    long threads = -1;
    const char *csv_path = NULL, *label = NULL;
    for (int i = 1; i < argc && !bad; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            bad = pscan_backend_parse(argv[++i], &backend) != PSCAN_SUCCESS;
        } else if (strcmp(argv[i], "--sizes") == 0 && i + 1 < argc) {
            count = parse_sizes(argv[++i], sizes);
            bad = count == 0;
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
            bad = reps < 21;
        } else if (strcmp(argv[i], "--warmup") == 0 && i + 1 < argc) {
            warmup = atoi(argv[++i]);
            bad = warmup < 0;
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = atol(argv[++i]);
            bad = threads < 0;
        } else if (strcmp(argv[i], "--label") == 0 && i + 1 < argc) {
            label = argv[++i];
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv_path = argv[++i];
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else {
            bad = 1;
        }
    }
    if (bad) {
        if (b->rank == 0)
            fprintf(stderr, "usage: bench_mpi_scan [--backend cpu|cuda] [--sizes N,N,...] [--reps R>=21] "
                            "[--warmup W] [--threads T] [--label TEXT] [--csv FILE] [--quick]\n");
        MPI_Finalize();
        return 2;
    }
    if (quick) {
        sizes[0] = 1;
        sizes[1] = 1u << 10;
        count = 2;
        reps = 21;
        warmup = 2;
    }
    /* threads per rank: the host's cores shared among the ranks on this host */
    MPI_Comm node;
    int node_ranks = 1;
    MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &node_ranks);
    MPI_Comm_free(&node);
    if (threads < 0) {
        const long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores / node_ranks > 0 ? cores / node_ranks : 1;
    }

    /* every rank opens its backend; if any cannot, all skip (or fail) together */
    int open = test_open_backend("bench_mpi_scan", backend, &b->ctx);
    int worst = 0;
    MPI_Allreduce(&open, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    if (worst != 0) {
        pscan_context_destroy(b->ctx);
        MPI_Finalize();
        return worst == TEST_EXIT_SKIP ? TEST_EXIT_SKIP : 1;
    }
    PK(pscan_context_set_threads(b->ctx, (unsigned)threads));
    char device[256] = "";
    pscan_context_device_name(b->ctx, device, sizeof device);
    snprintf(csv_device, sizeof csv_device, "%s, %d ranks%s%s", device, b->size, label ? ", " : "",
             label ? label : "");
    csv_backend = pscan_backend_name(backend);
    if (b->rank == 0 && csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        fprintf(csv, "backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us,in_place,"
                     "spread,primitive\n");
    }

    MPI_Type_contiguous(16, MPI_BYTE, &b->pair_type);
    MPI_Type_commit(&b->pair_type);
    MPI_Op_create(pair_add, 0 /* not commutative, as pscan's */, &b->pair_op);

    if (b->rank == 0) {
        printf("bench_mpi_scan: %d ranks (%d on this host), backend %s, device \"%s\", %ld thread(s) per rank, "
               "i32 sum inclusive, median of %d after %d warm-ups; us, (spread), the maximum over ranks\n",
               b->size, node_ranks, csv_backend, device, threads, reps, warmup);
        printf("%9s %10s %18s %18s %18s %18s %18s %10s %10s\n", "n_local", "n", "mpi-exscan", "mpi-exscan-new",
               "reduce", "scan", "mpi-scan", "added", "beyond-red");
    }
    int failed = 0;
    for (int i = 0; i < count; i++) failed |= !run_size(b, sizes[i], reps, warmup, 20261123u);

    MPI_Op_free(&b->pair_op);
    MPI_Type_free(&b->pair_type);
    pscan_context_destroy(b->ctx);
    if (csv) fclose(csv);
    MPI_Finalize();
    return failed;
}
