/*
 * cmd_bench.c - `pscan bench`: one harness for every backend, every primitive and every algorithm it implements.
 *
 * For each n = 2^k the same seeded random input (never zeros) is scanned by every algorithm the backend
 * implements, and a device-to-device copy of the same bytes is timed in the same run: a scan reads n
 * elements and writes n, as a copy does, so the copy is the bandwidth a scan can at best reach. Reported:
 * the median time per call, the effective bandwidth (bytes read + bytes written) / time = 2 n size / time,
 * and its fraction of the copy's; on CUDA also CUB's DeviceScan and the fraction of CUB's bandwidth.
 *
 * Timing. CPU and OpenCL: a monotonic host clock around the calls plus pscan_context_synchronize(); each
 * timed repeat runs once through a set of input/output buffer pairs (rotated, up to 64 MiB in all, so
 * small n are not measured from a cache warmed by the previous call alone) and counts the mean per call;
 * the copy and the algorithms take their repeats in turn (interleaved), so that a busy spell of a shared
 * machine does not favour one of them; the median over repeats after a warm-up is reported.
 * CUDA: CUDA events in bench_cuda.cu, each measurement with its own warm-up and median.
 *
 * Primitives (--primitive): scan, reduce, select, partition. Each is timed with its peer on CUDA (CUB's
 * DeviceScan, DeviceReduce::Reduce, DeviceSelect::If, DevicePartition::If) and the copy of its input's bytes.
 * GB/s counts the bytes a primitive must move at least: a scan and a partition read n and write n elements, a
 * reduce reads n, a select reads n and writes the kept ones (select and partition keep the keys greater than
 * the midpoint of the random data's range, about half; the kept count comes from the pscan call itself).
 * of_copy compares that bandwidth with the copy's (a reduce can reach 2x the copy's time-ratio, never more
 * than 1.0 of its bandwidth); of_cub is CUB's time over pscan's, the same work. Expand (u32 or u64 counts
 * 0..3, u32 indices out, capacity 3n) reads the counts and writes one index per slot; CUB has no expand, so it
 * is timed beside the copy alone.
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#ifdef PSCAN_HAVE_CUDA
#include "bench_cuda.h"
#endif

/* The primitives bench can time: X(name). */
#define BENCH_PRIMITIVE_LIST(X) X(scan) X(reduce) X(select) X(partition) X(expand)

typedef enum bench_primitive {
#define BENCH_PRIMITIVE_ENUM_(name) BENCH_##name,
    BENCH_PRIMITIVE_LIST(BENCH_PRIMITIVE_ENUM_)
#undef BENCH_PRIMITIVE_ENUM_
        BENCH_PRIMITIVE_COUNT
} bench_primitive;

static const char *const bench_primitive_names[] = {
#define BENCH_PRIMITIVE_NAME_(name) #name,
    BENCH_PRIMITIVE_LIST(BENCH_PRIMITIVE_NAME_)
#undef BENCH_PRIMITIVE_NAME_
};

static const char bench_usage[] =
    "usage: pscan bench [--primitive P] [--backend B] [--algo A|all] [--type T] [--op OP] [--exclusive]\n"
    "                   [--reverse] [--in-place]\n"
    "                   [--min-log2 K] [--max-log2 K] [--reps R] [--threads N] [--seed S] [--csv FILE]\n"
    "\n"
    "Times each algorithm of the backend on n = 2^min .. 2^max elements of random data, next to a\n"
    "device copy of the same bytes (and CUB's DeviceScan on CUDA), in the same run.\n"
    "  --primitive P   scan (default), reduce, select or partition (keys > the data's midpoint, ~half kept),\n"
    "                  each beside its CUB peer on CUDA; expand (--type u32 or u64 counts of 0..3, u32 indices)\n"
    "  --backend B     auto cpu cuda opencl (default auto)\n"
    "  --algo A|all    one algorithm, or every one the backend implements (default all)\n"
    "  --type T        element type (default i32)     --op OP   operator (default sum)\n"
    "  --exclusive, --reverse   the scan's flags (default: forward inclusive)\n"
    "  --in-place      scan each input onto itself (out == in); the copy stays out of place\n"
    "  --min-log2 K    smallest n = 2^K (default 10)\n"
    "  --max-log2 K    largest n = 2^K (default 26 on the CPU, 30 on a GPU; sizes that do not fit in\n"
    "                  device memory are skipped with a note)\n"
    "  --reps R        timed calls per measurement, after a warm-up; the median is reported (default 25);\n"
    "                  on CUDA each call follows a write of twice the L2 size, so no size is timed from cache\n"
    "  --threads N     CPU backend: worker threads (default: one per usable core)\n"
    "  --seed S        seed of the random input (default 1)\n"
    "  --csv FILE      also write every measurement to FILE as CSV\n"
    "\n"
    "Columns: time_us = median time per call; GB/s = bytes the primitive must read + write / time (a scan:\n"
    "2 * n * sizeof(T)); of_copy = GB/s / copy's GB/s; of_cub = CUB's time / pscan's (CUDA only);\n"
    "spread (CSV) = (p90 - p10) / median.\n";

/* Rotated buffers: at most this many pairs, and no more than needed to cover this many bytes. */
#define BENCH_MAX_PAIRS 64
#define BENCH_ROTATE_BYTES (64u << 20)
#define BENCH_WARMUP 2

typedef struct bench_options {
    bench_primitive prim;
    unsigned char operand[8]; /* select, partition: keep keys greater than this (the data's midpoint) */
    pscan_backend backend;
    int all_algos;
    pscan_scan_desc desc;
    uint64_t min_log2, max_log2, reps, threads, seed;
    int have_max, in_place;
    const char *csv_path;
} bench_options;

/* One size's buffers: pairs of input and output, all holding the same input bytes. */
typedef struct bench_buffers {
    pscan_context *ctx;
    int pairs;
    void *in[BENCH_MAX_PAIRS], *out[BENCH_MAX_PAIRS];
    void *temp;
    size_t temp_bytes;
    void *result; /* 8 bytes: a reduce's result, a select's count */
} bench_buffers;

typedef struct bench_row {
    const char *algo;
    double seconds; /* 0 when not measured */
} bench_row;

static int parse_options(int argc, char **argv, bench_options *o) {
    memset(o, 0, sizeof *o);
    o->backend = PSCAN_BACKEND_AUTO;
    o->all_algos = 1;
    o->desc.type = PSCAN_TYPE_I32;
    o->desc.op = PSCAN_OP_SUM;
    o->desc.algo = PSCAN_ALGO_AUTO;
    o->min_log2 = 10;
    o->reps = 25;
    o->seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m, r = PS_CLI_OK;
        if (ps_cli_is_help(argv[i])) {
            fputs(bench_usage, stdout);
            return -1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--primitive", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_FAILURE;
            for (int p = 0; m > 0 && p < BENCH_PRIMITIVE_COUNT; p++)
                if (strcmp(v, bench_primitive_names[p]) == 0) o->prim = (bench_primitive)p, r = PS_CLI_OK;
            if (r == PS_CLI_FAILURE) {
                ps_cli_error("bench: unknown primitive '%s' (scan, reduce, select, partition)", v);
                r = PS_CLI_USAGE;
            }
        } else if ((m = ps_cli_option(argc, argv, &i, "--backend", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_backend(v, &o->backend);
        } else if ((m = ps_cli_option(argc, argv, &i, "--algo", &v)) != 0) {
            o->all_algos = m > 0 && strcmp(v, "all") == 0;
            r = m < 0 ? PS_CLI_USAGE : o->all_algos ? PS_CLI_OK : ps_cli_parse_algo(v, &o->desc.algo);
        } else if ((m = ps_cli_option(argc, argv, &i, "--type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->desc.type);
        } else if ((m = ps_cli_option(argc, argv, &i, "--op", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_op(v, &o->desc.op);
        } else if ((m = ps_cli_option(argc, argv, &i, "--min-log2", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--min-log2", 0, 40, &o->min_log2);
        } else if ((m = ps_cli_option(argc, argv, &i, "--max-log2", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--max-log2", 0, 40, &o->max_log2);
            o->have_max = 1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--reps", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--reps", 1, 100000, &o->reps);
        } else if ((m = ps_cli_option(argc, argv, &i, "--threads", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--threads", 1, 1024, &o->threads);
        } else if ((m = ps_cli_option(argc, argv, &i, "--seed", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--seed", 0, UINT64_MAX, &o->seed);
        } else if ((m = ps_cli_option(argc, argv, &i, "--csv", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->csv_path = v;
        } else if (strcmp(argv[i], "--in-place") == 0) {
            o->in_place = 1;
        } else if (strcmp(argv[i], "--exclusive") == 0) {
            o->desc.flags |= PSCAN_SCAN_EXCLUSIVE;
        } else if (strcmp(argv[i], "--reverse") == 0) {
            o->desc.flags |= PSCAN_SCAN_REVERSE;
        } else {
            ps_cli_error("bench: unknown argument '%s' (pscan bench --help)", argv[i]);
            r = PS_CLI_USAGE;
        }
        if (r != PS_CLI_OK) return r;
    }
    if (o->desc.op >= PSCAN_OP_AND && (o->desc.type == PSCAN_TYPE_F32 || o->desc.type == PSCAN_TYPE_F64)) {
        ps_cli_error("bench: operator %s needs an integer type, not %s", pscan_op_name(o->desc.op),
                     pscan_type_name(o->desc.type));
        return PS_CLI_USAGE;
    }
    if (o->prim == BENCH_expand && o->desc.type != PSCAN_TYPE_U32 && o->desc.type != PSCAN_TYPE_U64) {
        ps_cli_error("bench: --primitive expand counts are u32 or u64 (--type u32|u64)");
        return PS_CLI_USAGE;
    }
    if (o->prim != BENCH_scan && (o->desc.flags || o->in_place)) {
        ps_cli_error("bench: --exclusive, --reverse and --in-place are for --primitive scan");
        return PS_CLI_USAGE;
    }
    if (o->have_max && o->max_log2 < o->min_log2) {
        ps_cli_error("bench: --max-log2 is below --min-log2");
        return PS_CLI_USAGE;
    }
    return PS_CLI_OK;
}

/* ---- input ------------------------------------------------------------------------------------------- */

static uint64_t splitmix64(uint64_t *state) {
    uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* Random non-zero elements. Products get odd integers (a product of odd numbers never becomes zero) or
 * +-1.0 (never underflows into slow denormals); sums of floats get values in [1, 2). */
static void fill_random(void *data, uint64_t n, pscan_type type, pscan_op op, uint64_t seed) {
    uint64_t state = seed;
    size_t esize = pscan_type_size(type);
    unsigned char *bytes = (unsigned char *)data;
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(&state);
        if (type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64) {
            double x = op == PSCAN_OP_PRODUCT ? ((r & 1) ? 1.0 : -1.0) : 1.0 + (double)(r >> 11) * 0x1p-53;
            float xf = (float)x;
            memcpy(bytes + i * esize, type == PSCAN_TYPE_F32 ? (const void *)&xf : (const void *)&x, esize);
        } else {
            r |= 1; /* odd: never zero in any width */
            memcpy(bytes + i * esize, &r, esize); /* little-endian: the low bytes */
        }
    }
}

/* The middle of fill_random's range for the type, so that about half the keys are greater: 0 for signed
 * integers, 2^(bits-1) for unsigned ones, 1.5 for floats (sums get [1, 2)). */
static void midpoint(pscan_type type, unsigned char operand[8]) {
    size_t esize = pscan_type_size(type);
    memset(operand, 0, 8);
    if (type == PSCAN_TYPE_F32) {
        float x = 1.5f;
        memcpy(operand, &x, sizeof x);
    } else if (type == PSCAN_TYPE_F64) {
        double x = 1.5;
        memcpy(operand, &x, sizeof x);
    } else if (type == PSCAN_TYPE_U8 || type == PSCAN_TYPE_U16 || type == PSCAN_TYPE_U32 || type == PSCAN_TYPE_U64) {
        operand[esize - 1] = 0x80; /* little-endian: the top bit */
    }
}

/* ---- timing ------------------------------------------------------------------------------------------ */

static double now_seconds(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* What a timed call does with pair p: a copy (o == NULL), or the primitive with algorithm algo. */
typedef struct bench_call {
    bench_buffers *buf;
    const bench_options *o;
    pscan_algo algo;
    uint64_t n;
    size_t bytes;
} bench_call;

static pscan_select_desc select_desc(const bench_options *o, pscan_algo algo) {
    pscan_select_desc d = {o->desc.type, 0, NULL, PSCAN_PRED_GT, o->operand, algo};
    return d;
}

/* The primitive's temp size query (temp == NULL, out == NULL) or its call. */
static pscan_status primitive(const bench_options *o, pscan_algo algo, bench_buffers *b, int p, uint64_t n,
                              size_t *temp_bytes) {
    pscan_context *ctx = b->ctx;
    const void *in = temp_bytes ? NULL : b->in[p];
    void *out = temp_bytes ? NULL : o->in_place ? b->in[p] : b->out[p];
    pscan_scan_desc scan = o->desc;
    pscan_reduce_desc reduce = {o->desc.type, o->desc.op, algo, o->desc.init};
    pscan_select_desc select = select_desc(o, algo);
    pscan_expand_desc expand = {o->desc.type, PSCAN_TYPE_U32, 0, algo};
    scan.algo = algo;
    switch (o->prim) {
    case BENCH_scan:
        return temp_bytes ? pscan_scan_temp_bytes(ctx, &scan, n, temp_bytes)
                          : pscan_scan(ctx, &scan, in, out, n, b->temp, b->temp_bytes);
    case BENCH_reduce:
        return temp_bytes ? pscan_reduce_temp_bytes(ctx, &reduce, n, temp_bytes)
                          : pscan_reduce(ctx, &reduce, in, n, b->result, b->temp, b->temp_bytes);
    case BENCH_select:
        return temp_bytes ? pscan_select_temp_bytes(ctx, &select, n, temp_bytes)
                          : pscan_select(ctx, &select, in, NULL, n, out, NULL, (uint64_t *)b->result, b->temp,
                                         b->temp_bytes);
    case BENCH_partition:
        return temp_bytes ? pscan_select_temp_bytes(ctx, &select, n, temp_bytes)
                          : pscan_partition(ctx, &select, in, NULL, n, out, NULL, (uint64_t *)b->result, b->temp,
                                            b->temp_bytes);
    case BENCH_expand:
        return temp_bytes ? pscan_expand_temp_bytes(ctx, &expand, n, 3 * n, temp_bytes)
                          : pscan_expand(ctx, &expand, in, NULL, n, out, NULL, NULL, 3 * n, (uint64_t *)b->result,
                                         b->temp, b->temp_bytes);
    default:
        return PSCAN_ERROR_INVALID_VALUE;
    }
}

static pscan_status call_once(const bench_call *c, int p) {
    if (!c->o) return pscan_memory_copy(c->buf->ctx, c->buf->out[p], c->buf->in[p], c->bytes);
    return primitive(c->o, c->algo, c->buf, p, c->n, NULL);
}

#ifdef PSCAN_HAVE_CUDA
static pscan_status call_first(void *arg) { return call_once((const bench_call *)arg, 0); }
#endif

static double median(double *t, int count) {
    qsort(t, (size_t)count, sizeof *t, compare_doubles);
    return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

/* Host clock: times calls[0 .. count) interleaved, one repeat of each in turn, so that a slow spell of a
 * shared machine hits the copy and the scans alike and their ratio stays fair. A repeat is one pass
 * through the buffer pairs, counted as the mean per call. seconds[i] = the median over reps, after a
 * warm-up. */
static pscan_status time_host(const bench_call *calls, int count, int reps, double *seconds, double *spread) {
    bench_buffers *b = calls[0].buf;
    pscan_status s = PSCAN_SUCCESS;
    double *t = (double *)malloc((size_t)reps * (size_t)count * sizeof *t);
    if (!t) return PSCAN_ERROR_OUT_OF_MEMORY;
    for (int r = -BENCH_WARMUP; r < reps && s == PSCAN_SUCCESS; r++) {
        for (int i = 0; i < count && s == PSCAN_SUCCESS; i++) {
            double start = now_seconds();
            for (int p = 0; p < b->pairs && s == PSCAN_SUCCESS; p++) s = call_once(&calls[i], p);
            if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(b->ctx);
            if (r >= 0) t[i * reps + r] = (now_seconds() - start) / b->pairs;
        }
    }
    for (int i = 0; i < count && s == PSCAN_SUCCESS; i++) {
        double *ti = t + i * reps;
        seconds[i] = median(ti, reps); /* sorts ti */
        spread[i] = seconds[i] > 0 ? (ti[reps * 9 / 10 < reps ? reps * 9 / 10 : reps - 1] - ti[reps / 10]) / seconds[i] : 0;
    }
    free(t);
    return s;
}

/* Times every call: on CUDA one after the other with CUDA events (bench_cuda.cu), else time_host(). */
static pscan_status time_calls(const bench_call *calls, int count, int on_cuda, int reps, double *seconds,
                               double *spread) {
#ifdef PSCAN_HAVE_CUDA
    if (on_cuda) {
        pscan_status s = PSCAN_SUCCESS;
        for (int i = 0; i < count && s == PSCAN_SUCCESS; i++) {
            const bench_call *c = &calls[i];
            bench_buffers *b = c->buf;
            ps_bench_time t = {0, 0};
            if (!c->o)
                s = ps_bench_cuda_time_copy(b->ctx, b->out[0], b->in[0], c->bytes, reps, &t);
            else
                s = ps_bench_cuda_time_fn(b->ctx, call_first, (void *)c, reps, &t);
            seconds[i] = t.seconds;
            spread[i] = t.spread;
        }
        return s;
    }
#else
    (void)on_cuda;
#endif
    return time_host(calls, count, reps, seconds, spread);
}

/* ---- buffers ----------------------------------------------------------------------------------------- */

static void buffers_free(bench_buffers *b) {
    for (int p = 0; p < b->pairs; p++) {
        pscan_memory_free(b->ctx, b->in[p]);
        pscan_memory_free(b->ctx, b->out[p]);
    }
    pscan_memory_free(b->ctx, b->temp);
    pscan_memory_free(b->ctx, b->result);
    b->result = NULL;
    b->pairs = 0;
    b->temp = NULL;
    b->temp_bytes = 0;
}

/* Allocates the pairs (inputs of bytes, outputs of out_bytes) and uploads host to every input. */
static pscan_status buffers_alloc(bench_buffers *b, int pairs, const void *host, size_t bytes, size_t out_bytes) {
    pscan_status s = pscan_memory_alloc(b->ctx, 8, &b->result);
    b->pairs = 0;
    for (int p = 0; p < pairs && s == PSCAN_SUCCESS; p++) {
        b->in[p] = b->out[p] = NULL;
        s = pscan_memory_alloc(b->ctx, bytes, &b->in[p]);
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(b->ctx, out_bytes, &b->out[p]);
        b->pairs = p + 1;
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(b->ctx, b->in[p], host, bytes);
    }
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(b->ctx);
    return s;
}

/* ---- report ------------------------------------------------------------------------------------------ */

typedef struct bench_report {
    FILE *csv;
    const char *primitive, *backend, *device, *type, *op;
    unsigned flags;
    int have_cub, in_place;
} bench_report;

/* traffic: the bytes the row's call must move (the copy: 2 n esize); copy_gbps: the copy's bandwidth. */
static void report_row(const bench_report *rep, const char *algo, uint64_t log2n, double traffic, double seconds,
                       double spread, double copy_gbps, double cub_seconds) {
    uint64_t n = 1ull << log2n;
    double gbps = traffic / seconds * 1e-9;
    double of_copy = copy_gbps > 0 ? gbps / copy_gbps : 0;
    double of_cub = cub_seconds > 0 ? cub_seconds / seconds : 0;
    printf("%-8s %-20s %-5s 2^%-3" PRIu64 " %12.2f %9.2f %8.3f", rep->backend, algo, rep->type, log2n,
           seconds * 1e6, gbps, of_copy);
    if (rep->have_cub) {
        if (of_cub > 0)
            printf(" %8.3f", of_cub);
        else
            printf(" %8s", "-");
    }
    printf("\n");
    fflush(stdout);
    if (rep->csv)
        fprintf(rep->csv, "%s,\"%s\",%s,%s,%s,%s,%s,%" PRIu64 ",%.9g,%.6g,%.6g,%.6g,%.6g,%d,%.4f,%s\n", rep->backend,
                rep->device, algo, rep->type, rep->op, rep->flags & PSCAN_SCAN_EXCLUSIVE ? "exclusive" : "inclusive",
                rep->flags & PSCAN_SCAN_REVERSE ? "reverse" : "forward", n, seconds * 1e6, gbps, of_copy,
                of_cub > 0 ? of_cub : 0.0, cub_seconds > 0 ? cub_seconds * 1e6 : 0.0,
                rep->in_place && strcmp(algo, "copy") != 0, spread, rep->primitive);
}

/* ---- main -------------------------------------------------------------------------------------------- */

int ps_cli_bench(int argc, char **argv) {
    bench_options o;
    int r = parse_options(argc, argv, &o);
    if (r != PS_CLI_OK) return r < 0 ? PS_CLI_OK : r;

    bench_buffers b;
    memset(&b, 0, sizeof b);
    if ((r = ps_cli_context_create(o.backend, &b.ctx)) != PS_CLI_OK) return r;
    pscan_status s;
    if (o.threads && (s = pscan_context_set_threads(b.ctx, (unsigned)o.threads)) != PSCAN_SUCCESS) {
        r = ps_cli_status_error(b.ctx, "set threads", s);
        pscan_context_destroy(b.ctx);
        return r;
    }
    pscan_backend kind = PSCAN_BACKEND_CPU;
    char device[256] = "";
    pscan_context_backend(b.ctx, &kind);
    pscan_context_device_name(b.ctx, device, sizeof device);
    const int on_cuda = kind == PSCAN_BACKEND_CUDA;
    if (!o.have_max) o.max_log2 = kind == PSCAN_BACKEND_CPU ? 26 : 30;
    const size_t esize = pscan_type_size(o.desc.type);
    midpoint(o.desc.type, o.operand);

    /* The algorithms to time: the one asked for, or every one the backend implements (AUTO is one of them
     * under another name, so it is not listed). */
    pscan_algo algos[PSCAN_ALGO_COUNT];
    int algo_count = 0;
    for (int a = o.all_algos ? 1 : (int)o.desc.algo; a < (o.all_algos ? PSCAN_ALGO_COUNT : (int)o.desc.algo + 1);
         a++) {
        size_t bytes = 0;
        s = primitive(&o, (pscan_algo)a, &b, 0, 1ull << o.min_log2, &bytes);
        if (s == PSCAN_ERROR_UNSUPPORTED_ALGORITHM && o.all_algos) continue;
        if (s != PSCAN_SUCCESS) {
            char what[160];
            snprintf(what, sizeof what, "%s %s on %s, %s %s", bench_primitive_names[o.prim], pscan_algo_name((pscan_algo)a),
                     pscan_backend_name(kind), pscan_type_name(o.desc.type), pscan_op_name(o.desc.op));
            r = ps_cli_status_error(b.ctx, what, s);
            pscan_context_destroy(b.ctx);
            return r;
        }
        algos[algo_count++] = (pscan_algo)a;
    }

    bench_report rep = {NULL,
                        bench_primitive_names[o.prim],
                        pscan_backend_name(kind),
                        device,
                        pscan_type_name(o.desc.type),
                        pscan_op_name(o.desc.op),
                        o.desc.flags,
                        on_cuda,
                        o.in_place};
    if (o.csv_path) {
        rep.csv = fopen(o.csv_path, "w");
        if (!rep.csv) {
            ps_cli_error("cannot write %s", o.csv_path);
            pscan_context_destroy(b.ctx);
            return PS_CLI_FAILURE;
        }
        fprintf(rep.csv, "backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us,"
                         "in_place,spread,primitive\n");
    }
    printf("# pscan bench %s: %s (%s), %s %s, %s %s%s, median of %" PRIu64 " after warm-up\n", rep.primitive,
           rep.backend, device, rep.type, rep.op, o.desc.flags & PSCAN_SCAN_EXCLUSIVE ? "exclusive" : "inclusive",
           o.desc.flags & PSCAN_SCAN_REVERSE ? "reverse" : "forward", o.in_place ? " in place" : "", o.reps);
    printf("%-8s %-20s %-5s %-5s %12s %9s %8s%s\n", "backend", "algo", "type", "n", "time_us", "GB/s", "of_copy",
           on_cuda ? "   of_cub" : "");

    unsigned char *host = NULL;
    for (uint64_t k = o.min_log2; k <= o.max_log2 && r == PS_CLI_OK; k++) {
        const uint64_t n = 1ull << k;
        const size_t bytes = (size_t)(n * esize);
        int pairs = on_cuda ? 1 : (int)((BENCH_ROTATE_BYTES + 2 * bytes - 1) / (2 * bytes));
        if (pairs > BENCH_MAX_PAIRS) pairs = BENCH_MAX_PAIRS;
        if (pairs < 1) pairs = 1;

        free(host);
        host = (unsigned char *)malloc(bytes);
        if (!host) {
            printf("# n = 2^%" PRIu64 ": skipped, no host memory for the input\n", k);
            continue;
        }
        size_t out_bytes = bytes;
        if (o.prim == BENCH_expand) { /* counts 0..3: up to 3n u32 indices */
            uint64_t state = o.seed;
            for (uint64_t i = 0; i < n; i++) {
                const uint64_t c = splitmix64(&state) & 3u;
                memcpy(host + i * esize, &c, esize); /* little-endian: the low bytes */
            }
            out_bytes = (size_t)(3 * n * 4);
        } else {
            fill_random(host, n, o.desc.type, o.desc.op, o.seed);
        }
        s = buffers_alloc(&b, pairs, host, bytes, out_bytes);
        if (s != PSCAN_SUCCESS) {
            printf("# n = 2^%" PRIu64 ": skipped, %s (%s)\n", k, pscan_status_name(s), pscan_status_string(s));
            buffers_free(&b);
            continue;
        }

        /* Temporary storage: one buffer of the largest size any algorithm asks, outside the timed region. */
        size_t temp_bytes = 0;
        for (int a = 0; a < algo_count && s == PSCAN_SUCCESS; a++) {
            size_t bytes_a = 0;
            s = primitive(&o, algos[a], &b, 0, n, &bytes_a);
            if (bytes_a > temp_bytes) temp_bytes = bytes_a;
        }
        if (s == PSCAN_SUCCESS && temp_bytes > 0) {
            s = pscan_memory_alloc(b.ctx, temp_bytes, &b.temp);
            if (s == PSCAN_SUCCESS) b.temp_bytes = temp_bytes;
        }
        if (s != PSCAN_SUCCESS) {
            printf("# n = 2^%" PRIu64 ": skipped, %s (%s)\n", k, pscan_status_name(s), pscan_status_string(s));
            buffers_free(&b);
            continue;
        }

        /* The floor, a device copy of the same bytes, then every algorithm, timed together. */
        bench_call calls[PSCAN_ALGO_COUNT + 1];
        double seconds[PSCAN_ALGO_COUNT + 1], spread[PSCAN_ALGO_COUNT + 1], cub_seconds = 0, cub_spread = 0;
        uint64_t kept = n;
        int count = 1;
        calls[0].buf = &b, calls[0].o = NULL, calls[0].algo = PSCAN_ALGO_AUTO, calls[0].n = n, calls[0].bytes = bytes;
        for (int a = 0; a < algo_count; a++) {
            /* An algorithm with a size limit (one block, 32-bit indices) sits out the sizes it refuses. */
            calls[count] = calls[0];
            calls[count].o = &o;
            calls[count].algo = algos[a];
            s = call_once(&calls[count], 0);
            if (s == PSCAN_SUCCESS && (o.prim == BENCH_select || o.prim == BENCH_expand))
                s = pscan_memory_download(b.ctx, &kept, b.result, sizeof kept); /* what it writes: kept, total */
            if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(b.ctx);
            if (s == PSCAN_SUCCESS)
                count++;
            else if (s == PSCAN_ERROR_TOO_LARGE || s == PSCAN_ERROR_OUT_OF_MEMORY)
                printf("# %s at n = 2^%" PRIu64 ": skipped, %s\n", pscan_algo_name(algos[a]), k,
                       pscan_status_name(s));
            else
                break;
        }
        if (s == PSCAN_SUCCESS || s == PSCAN_ERROR_TOO_LARGE || s == PSCAN_ERROR_OUT_OF_MEMORY)
            s = time_calls(calls, count, on_cuda, (int)o.reps, seconds, spread);
        if (s == PSCAN_ERROR_TOO_LARGE || s == PSCAN_ERROR_OUT_OF_MEMORY) {
            printf("# n = 2^%" PRIu64 ": skipped, %s (%s)\n", k, pscan_status_name(s), pscan_status_string(s));
            buffers_free(&b);
            continue;
        }
        if (s != PSCAN_SUCCESS) {
            r = ps_cli_status_error(b.ctx, "timing", s);
            break;
        }
#ifdef PSCAN_HAVE_CUDA
        if (on_cuda) {
            ps_bench_time t = {0, 0};
            switch (o.prim) {
            case BENCH_scan: s = ps_bench_cuda_time_cub(b.ctx, &o.desc, b.in[0], b.out[0], n, (int)o.reps, &t); break;
            case BENCH_reduce:
                s = o.desc.init ? PSCAN_ERROR_UNSUPPORTED_ALGORITHM
                                : ps_bench_cuda_time_cub_reduce(b.ctx, o.desc.type, o.desc.op, b.in[0], b.result, n,
                                                                (int)o.reps, &t);
                break;
            case BENCH_expand: s = PSCAN_ERROR_UNSUPPORTED_ALGORITHM; break; /* CUB has no expand */
            default:
                s = ps_bench_cuda_time_cub_select(b.ctx, o.desc.type, o.operand, o.prim == BENCH_partition, b.in[0],
                                                  b.out[0], b.result, n, (int)o.reps, &t);
                break;
            }
            cub_seconds = s == PSCAN_SUCCESS ? t.seconds : 0; /* CUB has no equivalent (e.g. reverse): "-" */
            cub_spread = t.spread;
        }
#endif
        /* the bytes each primitive must move at least (see the header) */
        const double in_bytes = (double)bytes;
        const double traffic = o.prim == BENCH_reduce   ? in_bytes
                               : o.prim == BENCH_select ? in_bytes + (double)kept * (double)esize
                               : o.prim == BENCH_expand ? in_bytes + (double)kept * 4.0
                                                        : 2 * in_bytes;
        const double copy_gbps = 2 * in_bytes / seconds[0] * 1e-9;
        report_row(&rep, "copy", k, 2 * in_bytes, seconds[0], spread[0], copy_gbps, cub_seconds);
        if (cub_seconds > 0) report_row(&rep, "cub", k, traffic, cub_seconds, cub_spread, copy_gbps, cub_seconds);
        for (int i = 1; i < count; i++)
            report_row(&rep, pscan_algo_name(calls[i].algo), k, traffic, seconds[i], spread[i], copy_gbps,
                       cub_seconds);
        buffers_free(&b);
    }
    free(host);
    buffers_free(&b);
    if (rep.csv && fclose(rep.csv) != 0 && r == PS_CLI_OK) {
        ps_cli_error("cannot write %s", o.csv_path);
        r = PS_CLI_FAILURE;
    }
    pscan_context_destroy(b.ctx);
    return r;
}
