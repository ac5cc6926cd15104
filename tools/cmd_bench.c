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
 * Primitives (--primitive): scan, reduce, select, partition, expand and the ones listed below. The first four
 * are timed with their peers on CUDA (CUB's DeviceScan, DeviceReduce::Reduce, DeviceSelect::If / Flagged,
 * DevicePartition::If / Flagged) and the copy of their input's bytes.
 * GB/s counts the bytes a primitive must move at least: a scan reads n and writes n elements, a reduce reads n,
 * a select reads n keys and writes the kept ones, a partition reads n keys and writes n. Select and partition
 * keep about half: --case greater (the default) the keys greater than the midpoint of the random data's range,
 * --case flags the keys whose u8 flag is set (random, each set with probability 1/2; the flags are read too, n
 * more bytes in, and the copy moves them with the keys); select --case unique drops consecutive duplicates of keys
 * in runs averaging 2 (each key repeats the one before with probability 1/2), beside DeviceSelect::Unique; the
 * kept count comes from the pscan call itself.
 * of_copy compares that bandwidth with the copy's (a reduce can reach 2x the copy's time-ratio, never more
 * than 1.0 of its bandwidth); of_cub is CUB's time over pscan's, the same work. Expand (u32 or u64 counts
 * uniform in 0..M, u32 indices out; --case counts-0-3 (M = 3, the default), avg-4 (M = 8), avg-64 (M = 128))
 * reads the counts and writes one index per slot; CUB has no expand, so it is timed beside the copy alone, a
 * copy of as many bytes as expand moves on average (counts in, M/2 indices per count out: half read, half written).
 *
 * The by-key family and the rest, each with one input block and one output block (the copy moves the whole
 * input block, all the bytes the primitive reads):
 *   segscan        --type values (sum), u8 head flags, segments of BENCH_SEGMENT on average: reads values and
 *                  flags, writes values. CUB has no scan by flags: its peer is DeviceScan::InclusiveSumByKey
 *                  with u8 keys made from the flags (key = number of heads so far mod 256, built outside the
 *                  timed region), so it reads the same n bytes beside the values that pscan's flags take.
 *   scan_by_key    --type values, u32 keys in runs of BENCH_SEGMENT on average; CUB InclusiveSumByKey (sum).
 *   reduce_by_key  --type values, u32 keys in runs of BENCH_RUN on average; writes one key and one value per
 *                  run and the count; CUB DeviceReduce::ReduceByKey (sum).
 *   rle            --type elements in runs of BENCH_RUN on average; writes one element and one u64 length per
 *                  run; CUB DeviceRunLengthEncode::Encode (u64 lengths too).
 *   histogram      u32 samples, u32 counts, the case (--case; the `kind` column): uniform-256 (samples uniform
 *                  in [0, 256), 256 even bins), equal-256 (every sample the same: all threads on one bin),
 *                  uniform-65536; CUB DeviceHistogram::HistogramEven over the same range and bins.
 *   sort           --type u32 or u64 keys, uniform random; --case keys (keys only) or pairs (a u32 payload);
 *                  CUB DeviceRadixSort::SortKeys / SortPairs, all bits, the faster of its int and int64_t
 *                  offset calls (each tiles differently: H200 2^28 u32 keys 5.4 / 6.3 ms, pairs 8.5 / 7.4 ms,
 *                  int64_t / int). The copy moves the key (and value)
 *                  bytes. Here the gbps column carries Gkeys/s (1e9 keys sorted per second; the copy: keys
 *                  whose bytes it copies per second), so of_copy is the copy's time over the sort's.
 * Runs and segments: a new one starts at each item with probability 1/length (geometric lengths).
 */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#ifdef PSCAN_HAVE_CUDA
#include "bench_cuda.h"
#endif

/* The primitives bench can time: X(name). */
#define BENCH_PRIMITIVE_LIST(X)                                                                              \
    X(scan) X(reduce) X(select) X(partition) X(expand) X(segscan) X(scan_by_key) X(reduce_by_key) X(rle)       \
    X(histogram) X(sort)

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

/* The cases of a primitive that has several, named in the CSV's `kind` column: X(primitive, name, param,
 * equal): histogram: param = bins, equal = every sample the same; sort: param = payload bytes, equal = the keys'
 * skew (BENCH_SKEW_*: after the first pass equal keys sit together, so later passes meet runs of one digit);
 * expand: param =
 * the largest count (counts uniform in 0..param); select, partition: param = 1 keeps by u8 flags, 0 by the
 * predicate key > midpoint, 2 (select) drops consecutive duplicates. The first of a primitive's cases is its
 * default. */
#define BENCH_BY_FLAGS 1
#define BENCH_UNIQUE 2
#define BENCH_SKEW_EQUAL 1 /* every key the same */
#define BENCH_SKEW_FEW 2   /* 16 distinct random keys */
#define BENCH_SKEW_LOW 3   /* keys below 1024: the top digits all 0 */
#define BENCH_CASE_LIST(X)                                                                                   \
    X(histogram, "uniform-256", 256, 0) X(histogram, "equal-256", 256, 1) X(histogram, "uniform-65536", 65536, 0) \
    X(sort, "keys", 0, 0) X(sort, "pairs", 4, 0) X(sort, "keys-equal", 0, BENCH_SKEW_EQUAL)                 \
    X(sort, "keys-few", 0, BENCH_SKEW_FEW) X(sort, "keys-low", 0, BENCH_SKEW_LOW)                           \
    X(expand, "counts-0-3", 3, 0) X(expand, "avg-4", 8, 0) X(expand, "avg-64", 128, 0)                      \
    X(select, "greater", 0, 0) X(select, "flags", BENCH_BY_FLAGS, 0) X(select, "unique", BENCH_UNIQUE, 0)          \
    X(partition, "greater", 0, 0) X(partition, "flags", BENCH_BY_FLAGS, 0)

typedef struct bench_case {
    int prim; /* a bench_primitive */
    const char *name;
    uint32_t param;
    int equal;
} bench_case;

static const bench_case bench_cases[] = {
#define BENCH_CASE_ROW_(prim, name, param, equal) {BENCH_##prim, name, param, equal},
    BENCH_CASE_LIST(BENCH_CASE_ROW_)
#undef BENCH_CASE_ROW_
};
#define BENCH_CASE_COUNT ((int)(sizeof bench_cases / sizeof bench_cases[0]))

/* Average segment length of segscan and scan_by_key, and average run length of reduce_by_key and rle. */
#define BENCH_SEGMENT 1000u
#define BENCH_RUN 8u

static const char bench_usage[] =
    "usage: pscan bench [--primitive P] [--case C] [--backend B] [--algo A|all] [--type T] [--op OP]\n"
    "                   [--exclusive] [--reverse] [--in-place] [--widen]\n"
    "                   [--min-log2 K] [--max-log2 K] [--reps R] [--threads N] [--seed S] [--csv FILE]\n"
    "\n"
    "Times each algorithm of the backend on n = 2^min .. 2^max elements of random data, next to a\n"
    "device copy of the same bytes (and CUB's peer on CUDA), in the same run.\n"
    "  --primitive P   scan (default), reduce, select or partition (~half kept: keys > the data's midpoint, or\n"
    "                  by u8 flags: --case), each beside its CUB peer on CUDA; expand (--type u32 or u64\n"
    "                  counts, u32 indices); segscan (u8 head flags, segments of 1000 on average),\n"
    "                  scan_by_key (u32 keys, runs of 1000), reduce_by_key (u32 keys, runs of 8), rle (runs of\n"
    "                  8), histogram (u32 samples), sort (--type u32 or u64 keys): all sums, each beside its\n"
    "                  CUB peer on CUDA\n"
    "  --case C        histogram: uniform-256 (default), equal-256, uniform-65536; sort: keys (default), pairs\n"
    "                  (a u32 payload), keys-equal, keys-few, keys-low (all one key, 16 distinct keys, keys\n"
    "                  below 1024); expand: counts-0-3 (default), avg-4, avg-64 (counts uniform in 0..3,\n"
    "                  0..8, 0..128); select, partition: greater (default: keys > the midpoint), flags (a\n"
    "                  random u8 flag per key, about half set; GB/s counts the flags read); select: unique\n"
    "                  (consecutive duplicates dropped, runs of 2 on average); named in the CSV's kind column\n"
    "  --backend B     auto cpu cuda opencl (default auto)\n"
    "  --algo A|all    one algorithm, or every one the backend implements (default all)\n"
    "  --type T        element type (default i32)     --op OP   operator (default sum)\n"
    "  --exclusive, --reverse   the scan's flags (default: forward inclusive); also for segscan and\n"
    "                  scan_by_key, whose CUB peer (forward inclusive) is then left out\n"
    "  --in-place      scan each input onto itself (out == in); the copy stays out of place\n"
    "  --widen         sum or multiply into the 64-bit type of --type's kind (PSCAN_SCAN_WIDEN; CUB's peer\n"
    "                  reads through a converting iterator); GB/s counts n of --type in and n x 8 bytes out\n"
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
    "2 * n * sizeof(T); sort: Gkeys/s, the copy's too); of_copy = GB/s / copy's GB/s; of_cub = CUB's time /\n"
    "pscan's (CUDA only); spread (CSV) = (p90 - p10) / median.\n";

/* Rotated buffers: at most this many pairs, and no more than needed to cover this many bytes. */
#define BENCH_MAX_PAIRS 64
#define BENCH_ROTATE_BYTES (64u << 20)
#define BENCH_WARMUP 2

typedef struct bench_options {
    bench_primitive prim;
    const bench_case *bcase;  /* the case of a primitive that has cases (BENCH_CASE_LIST); NULL for the others */
    unsigned char operand[8]; /* select, partition: keep keys greater than this (the data's midpoint) */
    pscan_backend backend;
    int all_algos;
    pscan_scan_desc desc;
    uint64_t min_log2, max_log2, reps, threads, seed;
    int have_max, have_type, in_place;
    const char *csv_path;
} bench_options;

/* One size's buffers: pairs of input and output, all holding the same input bytes. Each in[p] is one block
 * holding the primitive's inputs one after the other (the second at offset in2: flags, keys or values), each
 * out[p] one block of its outputs (the second at out2), at least as large as the input block, which is what
 * the copy moves. */
typedef struct bench_buffers {
    pscan_context *ctx;
    int pairs;
    void *in[BENCH_MAX_PAIRS], *out[BENCH_MAX_PAIRS];
    size_t in2, out2;
    /* Where handles are not addresses (OpenCL's cl_mem), the second input and output are buffers of their own
     * (in2 and out2 then say where they start in the host block and the copy's); else NULL. */
    void *in2_buf[BENCH_MAX_PAIRS], *out2_buf[BENCH_MAX_PAIRS];
    void *temp;
    size_t temp_bytes;
    void *result; /* 8 bytes: a reduce's result, a select's count */
} bench_buffers;

typedef struct bench_row {
    const char *algo;
    double seconds; /* 0 when not measured */
} bench_row;

static int parse_options(int argc, char **argv, bench_options *o) {
    const char *case_name = NULL;
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
                ps_cli_error("bench: unknown primitive '%s' (scan, reduce, select, partition, expand, segscan, "
                             "scan_by_key, reduce_by_key, rle, histogram, sort)", v);
                r = PS_CLI_USAGE;
            }
        } else if ((m = ps_cli_option(argc, argv, &i, "--backend", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_backend(v, &o->backend);
        } else if ((m = ps_cli_option(argc, argv, &i, "--algo", &v)) != 0) {
            o->all_algos = m > 0 && strcmp(v, "all") == 0;
            r = m < 0 ? PS_CLI_USAGE : o->all_algos ? PS_CLI_OK : ps_cli_parse_algo(v, &o->desc.algo);
        } else if ((m = ps_cli_option(argc, argv, &i, "--type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->desc.type);
            o->have_type = 1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--case", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            case_name = v;
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
        } else if (strcmp(argv[i], "--widen") == 0) {
            o->desc.flags |= PSCAN_SCAN_WIDEN;
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
    /* the case: the one named, else the primitive's first; only the primitives of BENCH_CASE_LIST have cases */
    for (int c = 0; c < BENCH_CASE_COUNT && !o->bcase; c++)
        if (bench_cases[c].prim == (int)o->prim && (!case_name || strcmp(case_name, bench_cases[c].name) == 0))
            o->bcase = &bench_cases[c];
    if (case_name && !o->bcase) {
        ps_cli_error("bench: --primitive %s has no case '%s' (histogram: uniform-256, equal-256, uniform-65536; "
                     "sort: keys, pairs; expand: counts-0-3, avg-4, avg-64; select: greater, flags, unique; "
                     "partition: greater, flags)",
                     bench_primitive_names[o->prim], case_name);
        return PS_CLI_USAGE;
    }
    if ((o->prim == BENCH_histogram || o->prim == BENCH_sort) && !o->have_type) o->desc.type = PSCAN_TYPE_U32;
    if (o->prim == BENCH_histogram && o->desc.type != PSCAN_TYPE_U32) {
        ps_cli_error("bench: --primitive histogram samples are u32 (--type u32)");
        return PS_CLI_USAGE;
    }
    if (o->prim == BENCH_sort && o->desc.type != PSCAN_TYPE_U32 && o->desc.type != PSCAN_TYPE_U64) {
        ps_cli_error("bench: --primitive sort keys are u32 or u64 (--type u32|u64)");
        return PS_CLI_USAGE;
    }
    if ((o->prim == BENCH_rle || o->prim == BENCH_histogram || o->prim == BENCH_sort) && o->desc.op != PSCAN_OP_SUM) {
        ps_cli_error("bench: --op is for scan, reduce, segscan, scan_by_key and reduce_by_key");
        return PS_CLI_USAGE;
    }
    if (o->prim == BENCH_expand && o->desc.type != PSCAN_TYPE_U32 && o->desc.type != PSCAN_TYPE_U64) {
        ps_cli_error("bench: --primitive expand counts are u32 or u64 (--type u32|u64)");
        return PS_CLI_USAGE;
    }
    /* the segmented scans take the scan's direction and form too (their general tiles: a reverse scan never takes
     * the fast one); CUB's peer is then left out (it has no reverse scan by key) */
    const unsigned seg_allowed = PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE;
    if (o->prim != BENCH_scan &&
        (o->in_place || (o->desc.flags & ~((o->prim == BENCH_segscan || o->prim == BENCH_scan_by_key) ? seg_allowed : 0u)))) {
        ps_cli_error("bench: --in-place and --widen are for --primitive scan; --exclusive and --reverse for scan, "
                     "segscan and scan_by_key");
        return PS_CLI_USAGE;
    }
    if ((o->desc.flags & PSCAN_SCAN_WIDEN) &&
        (o->in_place || (o->desc.op != PSCAN_OP_SUM && o->desc.op != PSCAN_OP_PRODUCT))) {
        ps_cli_error("bench: --widen is a sum or product, out of place (its output is of another type)");
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

/* The blocks of one size (see bench_buffers): in_bytes = every input; in2 = the second input's offset; out_bytes =
 * every output, at least in_bytes; out2 = the second output's offset; copy_bytes = what the copy moves, the input
 * block (expand: half the bytes it reads and writes, since its output outweighs its input; both blocks hold it). */
typedef struct bench_layout {
    size_t in_bytes, in2, out_bytes, out2, copy_bytes;
} bench_layout;

static size_t align256(size_t x) { return (x + 255) & ~(size_t)255; }

/* Expand's output capacity for n counts uniform in 0..M: the mean n M / 2 plus 4 sqrt(n) M (the sum's standard
 * deviation is about 0.29 sqrt(n) M: 14 of them), never more than n M, the most there can be. */
static uint64_t expand_capacity(const bench_options *o, uint64_t n) {
    const double m = o->bcase->param, most = (double)n * m, want = most / 2 + 4.0 * sqrt((double)n) * m + 64;
    return (uint64_t)(want < most ? want : most);
}

static bench_layout layout_of(const bench_options *o, uint64_t n) {
    const size_t items = (size_t)n * pscan_type_size(o->desc.type), second = align256(items);
    bench_layout l = {items, 0, items, 0, 0};
    switch (o->prim) {
    case BENCH_scan: /* widened: n elements of the 64-bit type out */
        if (o->desc.flags & PSCAN_SCAN_WIDEN) l.out_bytes = (size_t)n * pscan_type_size(pscan_type_widened(o->desc.type));
        break;
    case BENCH_expand: /* u32 indices; the copy: counts in, the mean n M / 2 indices out */
        l.out_bytes = (size_t)expand_capacity(o, n) * 4;
        l.copy_bytes = (items + (size_t)((double)n * o->bcase->param / 2) * 4) / 2;
        break;
    case BENCH_select:
    case BENCH_partition: /* keys (and u8 flags) */
        if (o->bcase->param == BENCH_BY_FLAGS) l.in2 = second, l.in_bytes = second + (size_t)n;
        break;
    case BENCH_segscan: l.in2 = second, l.in_bytes = second + (size_t)n; break; /* values, u8 flags */
    case BENCH_scan_by_key: l.in2 = second, l.in_bytes = second + (size_t)n * 4; break; /* values, u32 keys */
    case BENCH_reduce_by_key: /* values and u32 keys in; values and keys out */
        l.in2 = l.out2 = second, l.in_bytes = l.out_bytes = second + (size_t)n * 4;
        break;
    case BENCH_rle: l.out2 = second, l.out_bytes = second + (size_t)n * 8; break; /* values, u64 lengths out */
    case BENCH_histogram: l.out_bytes = (size_t)o->bcase->param * 4; break;      /* u32 counts */
    case BENCH_sort: /* keys (and the payload) in and out */
        if (o->bcase->param) l.in2 = l.out2 = second, l.in_bytes = l.out_bytes = second + (size_t)n * o->bcase->param;
        break;
    default: break;
    }
    if (l.copy_bytes == 0) l.copy_bytes = l.in_bytes;
    if (l.out_bytes < l.in_bytes) l.out_bytes = l.in_bytes;
    if (l.out_bytes < l.copy_bytes) l.out_bytes = l.copy_bytes;
    return l;
}

/* One element of fill_random's kind that differs bit for bit from prev (NULL: any): a run's new value. */
static void fresh_element(unsigned char *x, const unsigned char *prev, pscan_type type, pscan_op op, uint64_t *state) {
    const size_t esize = pscan_type_size(type);
    do fill_random(x, 1, type, op, splitmix64(state));
    while (prev && memcmp(x, prev, esize) == 0);
}

/* The host input block of n items (layout l) for the primitive: seeded, values never zero (see fill_random);
 * segments and runs start at each item with probability 1/length. */
static void fill_input(const bench_options *o, uint64_t n, const bench_layout *l, unsigned char *host) {
    const pscan_type type = o->desc.type;
    const size_t esize = pscan_type_size(type);
    unsigned char *second = host + l->in2;
    uint64_t state = o->seed, heads = o->seed ^ 0x5E65C0FFEEull, segment = 0;
    switch (o->prim) {
    case BENCH_expand:
        for (uint64_t i = 0; i < n; i++) {
            const uint64_t c = splitmix64(&state) % (o->bcase->param + 1);
            memcpy(host + i * esize, &c, esize); /* little-endian: the low bytes */
        }
        break;
    case BENCH_select:
    case BENCH_partition: /* the keys of the predicate's case, so that both cases time the same keys; flags: the top
                             bit of each draw, set with probability 1/2 */
        fill_random(host, n, type, o->desc.op, o->seed);
        for (uint64_t i = 0; o->bcase->param == BENCH_BY_FLAGS && i < n; i++)
            second[i] = (unsigned char)(splitmix64(&heads) >> 63);
        for (uint64_t i = 1; o->bcase->param == BENCH_UNIQUE && i < n; i++) /* runs of 2 on average: half kept */
            if (splitmix64(&heads) >> 63)
                memcpy(host + i * esize, host + (i - 1) * esize, esize);
            else if (memcmp(host + i * esize, host + (i - 1) * esize, esize) == 0)
                fresh_element(host + i * esize, host + (i - 1) * esize, type, o->desc.op, &state);
        break;
    case BENCH_segscan:
        fill_random(host, n, type, o->desc.op, o->seed);
        for (uint64_t i = 0; i < n; i++) second[i] = i == 0 || splitmix64(&heads) % BENCH_SEGMENT == 0;
        break;
    case BENCH_scan_by_key:
    case BENCH_reduce_by_key: {
        const uint64_t length = o->prim == BENCH_scan_by_key ? BENCH_SEGMENT : BENCH_RUN;
        fill_random(host, n, type, o->desc.op, o->seed);
        for (uint64_t i = 0; i < n; i++) {
            segment += i > 0 && splitmix64(&heads) % length == 0;
            /* an odd multiplier is a bijection mod 2^32: consecutive segments never share a key, none is 0 */
            const uint32_t key = (uint32_t)(segment + 1) * 2654435761u;
            memcpy(second + i * 4, &key, 4);
        }
        break;
    }
    case BENCH_rle:
        for (uint64_t i = 0; i < n; i++) {
            if (i == 0 || splitmix64(&heads) % BENCH_RUN == 0)
                fresh_element(host + i * esize, i ? host + (i - 1) * esize : NULL, type, o->desc.op, &state);
            else
                memcpy(host + i * esize, host + (i - 1) * esize, esize);
        }
        break;
    case BENCH_histogram: {
        const uint32_t bins = o->bcase->param, same = (uint32_t)(1 + splitmix64(&state) % (bins - 1));
        for (uint64_t i = 0; i < n; i++) {
            const uint32_t x = o->bcase->equal ? same : (uint32_t)(splitmix64(&state) % bins);
            memcpy(host + i * 4, &x, 4);
        }
        break;
    }
    case BENCH_sort: { /* uniform keys over every bit (0 becomes 1), or skewed; the payload: each key's input index */
        uint64_t few[16];
        for (int j = 0; j < 16; j++) few[j] = splitmix64(&state) | 1u;
        for (uint64_t i = 0; i < n; i++) {
            uint64_t r = splitmix64(&state);
            switch (o->bcase->equal) {
            case BENCH_SKEW_EQUAL: r = few[0]; break;
            case BENCH_SKEW_FEW: r = few[r % 16]; break;
            case BENCH_SKEW_LOW: r = 1 + r % 1023; break;
            default: if ((esize == 4 ? (uint32_t)r : r) == 0) r = 1;
            }
            memcpy(host + i * esize, &r, esize);
            if (o->bcase->param) {
                const uint32_t v = (uint32_t)i;
                memcpy(second + i * 4, &v, 4);
            }
        }
        break;
    }
    default: fill_random(host, n, type, o->desc.op, o->seed); break;
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

/* flags: the u8 flags of the flags case (NULL: the predicate key > the midpoint, or unique). */
static pscan_select_desc select_desc(const bench_options *o, pscan_algo algo, const void *flags) {
    const pscan_pred pred = o->bcase && o->bcase->param == BENCH_UNIQUE ? PSCAN_PRED_UNIQUE : PSCAN_PRED_GT;
    pscan_select_desc d = {o->desc.type, 0, flags, pred, o->operand, algo};
    return d;
}

/* The primitive's temp size query (temp == NULL, out == NULL) or its call. */
static pscan_status primitive(const bench_options *o, pscan_algo algo, bench_buffers *b, int p, uint64_t n,
                              size_t *temp_bytes) {
    pscan_context *ctx = b->ctx;
    const void *in = temp_bytes ? NULL : b->in[p];
    void *out = temp_bytes ? NULL : o->in_place ? b->in[p] : b->out[p];
    const void *in2 = temp_bytes      ? NULL /* flags, keys, values */
                      : b->in2_buf[p] ? b->in2_buf[p]
                                      : (const void *)((const unsigned char *)b->in[p] + b->in2);
    void *out2 = temp_bytes ? NULL : b->out2_buf[p] ? b->out2_buf[p] : (unsigned char *)b->out[p] + b->out2;
    const pscan_type type = o->desc.type;
    const uint32_t param = o->bcase ? o->bcase->param : 0;
    const uint64_t lower = 0, upper = param; /* histogram: [0, bins) in bins even bins */
    pscan_scan_desc scan = o->desc;
    pscan_reduce_desc reduce = {type, o->desc.op, algo, o->desc.init};
    /* the size query reads no flags, yet is asked for a select by flags: any non-NULL address stands in */
    const void *flags = !o->bcase || o->bcase->param != BENCH_BY_FLAGS ? NULL : temp_bytes ? (const void *)o : in2;
    pscan_select_desc select = select_desc(o, algo, flags);
    pscan_expand_desc expand = {type, PSCAN_TYPE_U32, 0, algo};
    const unsigned seg_flags = o->desc.flags & (PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE);
    pscan_segscan_desc segscan = {type, o->desc.op, seg_flags, algo, NULL, PSCAN_SEGMENTS_HEAD_FLAGS};
    pscan_scan_by_key_desc by_key = {PSCAN_TYPE_U32, type, o->desc.op, seg_flags, algo, NULL};
    pscan_reduce_by_key_desc reduce_by_key = {PSCAN_TYPE_U32, type, o->desc.op, algo, NULL};
    pscan_rle_desc rle = {type, algo};
    pscan_histogram_desc histogram = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, param, &lower, &upper, NULL, 0, algo};
    pscan_sort_desc sort = {type, param, 0, 0, 0, algo};
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
        return temp_bytes ? pscan_expand_temp_bytes(ctx, &expand, n, expand_capacity(o, n), temp_bytes)
                          : pscan_expand(ctx, &expand, in, NULL, n, out, NULL, NULL, expand_capacity(o, n), (uint64_t *)b->result,
                                         b->temp, b->temp_bytes);
    case BENCH_segscan:
        return temp_bytes ? pscan_segmented_scan_temp_bytes(ctx, &segscan, n, 0, temp_bytes)
                          : pscan_segmented_scan(ctx, &segscan, in, out, n, in2, 0, b->temp, b->temp_bytes);
    case BENCH_scan_by_key:
        return temp_bytes ? pscan_scan_by_key_temp_bytes(ctx, &by_key, n, temp_bytes)
                          : pscan_scan_by_key(ctx, &by_key, in2, in, out, n, b->temp, b->temp_bytes);
    case BENCH_reduce_by_key:
        return temp_bytes ? pscan_reduce_by_key_temp_bytes(ctx, &reduce_by_key, n, temp_bytes)
                          : pscan_reduce_by_key(ctx, &reduce_by_key, in2, in, n, out2, out, (uint64_t *)b->result,
                                                b->temp, b->temp_bytes);
    case BENCH_rle:
        return temp_bytes ? pscan_run_length_encode_temp_bytes(ctx, &rle, n, temp_bytes)
                          : pscan_run_length_encode(ctx, &rle, in, n, out, (uint64_t *)out2, (uint64_t *)b->result,
                                                    b->temp, b->temp_bytes);
    case BENCH_histogram:
        return temp_bytes ? pscan_histogram_temp_bytes(ctx, &histogram, n, temp_bytes)
                          : pscan_histogram(ctx, &histogram, in, n, out, b->temp, b->temp_bytes);
    case BENCH_sort:
        return temp_bytes ? pscan_sort_temp_bytes(ctx, &sort, n, temp_bytes)
                          : pscan_sort(ctx, &sort, in, param ? in2 : NULL, n, out, param ? out2 : NULL, b->temp,
                                       b->temp_bytes);
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
        pscan_memory_free(b->ctx, b->in2_buf[p]);
        pscan_memory_free(b->ctx, b->out2_buf[p]);
        b->in2_buf[p] = b->out2_buf[p] = NULL;
    }
    pscan_memory_free(b->ctx, b->temp);
    pscan_memory_free(b->ctx, b->result);
    b->result = NULL;
    b->pairs = 0;
    b->temp = NULL;
    b->temp_bytes = 0;
}

/* Allocates the pairs (inputs of bytes, outputs of out_bytes) and uploads host to every input. */
/* Each pair: the input block (uploaded from host, bytes of it; in_alloc >= bytes, the copy's source) and out. */
static pscan_status buffers_alloc(bench_buffers *b, int pairs, const void *host, size_t bytes, size_t in_alloc,
                                  size_t out_bytes) {
    pscan_status s = pscan_memory_alloc(b->ctx, 8, &b->result);
    pscan_backend backend = PSCAN_BACKEND_CPU;
    pscan_context_backend(b->ctx, &backend);
    const int handles = backend == PSCAN_BACKEND_OPENCL;
    b->pairs = 0;
    for (int p = 0; p < pairs && s == PSCAN_SUCCESS; p++) {
        b->in[p] = b->out[p] = b->in2_buf[p] = b->out2_buf[p] = NULL;
        s = pscan_memory_alloc(b->ctx, in_alloc, &b->in[p]);
        if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(b->ctx, out_bytes, &b->out[p]);
        b->pairs = p + 1;
        if (s == PSCAN_SUCCESS) s = pscan_memory_upload(b->ctx, b->in[p], host, bytes);
        if (handles && b->in2 && s == PSCAN_SUCCESS) {
            s = pscan_memory_alloc(b->ctx, bytes - b->in2, &b->in2_buf[p]);
            if (s == PSCAN_SUCCESS)
                s = pscan_memory_upload(b->ctx, b->in2_buf[p], (const unsigned char *)host + b->in2, bytes - b->in2);
        }
        if (handles && b->out2 && s == PSCAN_SUCCESS) s = pscan_memory_alloc(b->ctx, out_bytes - b->out2, &b->out2_buf[p]);
    }
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(b->ctx);
    return s;
}

#ifdef PSCAN_HAVE_CUDA
/* segscan's CUB peer scans by key: u8 keys made from the head flags (the number of heads so far, mod 256), so
 * that two neighbours share a key exactly when no segment starts between them, in as many bytes as the flags.
 * Built on the host and uploaded, outside the timed region; *keys is freed by the caller. */
static pscan_status segscan_cub_keys(pscan_context *ctx, const unsigned char *flags, uint64_t n, void **keys) {
    unsigned char *host = (unsigned char *)malloc((size_t)n), key = 0;
    if (!host) return PSCAN_ERROR_OUT_OF_MEMORY;
    for (uint64_t i = 0; i < n; i++) host[i] = key = (unsigned char)(key + (i > 0 && flags[i]));
    pscan_status s = pscan_memory_alloc(ctx, (size_t)n, keys);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, *keys, host, (size_t)n);
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
    free(host);
    return s;
}
#endif

/* ---- report ------------------------------------------------------------------------------------------ */

typedef struct bench_report {
    FILE *csv;
    const char *primitive, *backend, *device, *type, *op, *kind; /* kind: inclusive, exclusive or the case */
    unsigned flags;
    int have_cub, in_place;
} bench_report;

/* traffic: the bytes the row's call must move (the copy: twice the input's); copy_gbps: the copy's bandwidth.
 * Sort counts keys instead of bytes, so "GB/s" is Gkeys/s there. */
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
                rep->device, algo, rep->type, rep->op, rep->kind,
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
    const int widen = (o.desc.flags & PSCAN_SCAN_WIDEN) != 0, exclusive = (o.desc.flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    const char *const kind_name = o.bcase   ? o.bcase->name
                                  : widen     ? (exclusive ? "widen-exclusive" : "widen-inclusive")
                                  : exclusive ? "exclusive"
                                              : "inclusive";

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
    if (algo_count == 0) { /* --algo all on a backend without this primitive: a table of copies says nothing */
        ps_cli_error("bench: %s has no algorithm on %s for %s %s", bench_primitive_names[o.prim],
                     pscan_backend_name(kind), pscan_type_name(o.desc.type), pscan_op_name(o.desc.op));
        pscan_context_destroy(b.ctx);
        return PS_CLI_FAILURE;
    }

    bench_report rep = {NULL,
                        bench_primitive_names[o.prim],
                        pscan_backend_name(kind),
                        device,
                        pscan_type_name(o.desc.type),
                        pscan_op_name(o.desc.op),
                        kind_name,
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
           rep.backend, device, rep.type, rep.op, kind_name, o.desc.flags & PSCAN_SCAN_REVERSE ? "reverse" : "forward",
           o.in_place ? " in place" : "", o.reps);
    printf("%-8s %-20s %-5s %-5s %12s %9s %8s%s\n", "backend", "algo", "type", "n", "time_us",
           o.prim == BENCH_sort ? "Gkeys/s" : "GB/s", "of_copy", on_cuda ? "   of_cub" : "");

    unsigned char *host = NULL;
    for (uint64_t k = o.min_log2; k <= o.max_log2 && r == PS_CLI_OK; k++) {
        const uint64_t n = 1ull << k;
        const bench_layout lay = layout_of(&o, n);
        const size_t bytes = lay.in_bytes, in_alloc = bytes > lay.copy_bytes ? bytes : lay.copy_bytes;
        int pairs = on_cuda ? 1 : (int)((BENCH_ROTATE_BYTES + in_alloc + lay.out_bytes - 1) / (in_alloc + lay.out_bytes));
        if (pairs > BENCH_MAX_PAIRS) pairs = BENCH_MAX_PAIRS;
        if (pairs < 1) pairs = 1;

        free(host);
        host = (unsigned char *)malloc(bytes);
        if (!host) {
            printf("# n = 2^%" PRIu64 ": skipped, no host memory for the input\n", k);
            continue;
        }
        fill_input(&o, n, &lay, host);
        b.in2 = lay.in2, b.out2 = lay.out2;
        s = buffers_alloc(&b, pairs, host, bytes, in_alloc, lay.out_bytes);
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
        calls[0].buf = &b, calls[0].o = NULL, calls[0].algo = PSCAN_ALGO_AUTO, calls[0].n = n, calls[0].bytes = lay.copy_bytes;
        for (int a = 0; a < algo_count; a++) {
            /* An algorithm with a size limit (one block, 32-bit indices) sits out the sizes it refuses. */
            calls[count] = calls[0];
            calls[count].o = &o;
            calls[count].algo = algos[a];
            s = call_once(&calls[count], 0);
            if (s == PSCAN_SUCCESS && (o.prim == BENCH_select || o.prim == BENCH_expand ||
                                       o.prim == BENCH_reduce_by_key || o.prim == BENCH_rle))
                s = pscan_memory_download(b.ctx, &kept, b.result, sizeof kept); /* kept, total, runs */
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
            case BENCH_segscan: {
                void *keys = NULL; /* u8 keys from the flags, outside the timed region */
                if (o.desc.flags) { /* exclusive or reverse: CUB's peer is forward inclusive */
                    s = PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
                    break;
                }
                s = segscan_cub_keys(b.ctx, host + lay.in2, n, &keys);
                if (s == PSCAN_SUCCESS)
                    s = ps_bench_cuda_time_cub_scan_by_key(b.ctx, o.desc.type, o.desc.op, 1, keys, b.in[0], b.out[0],
                                                           n, (int)o.reps, &t);
                pscan_memory_free(b.ctx, keys);
                break;
            }
            case BENCH_scan_by_key:
                if (o.desc.flags) { /* as for segscan */
                    s = PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
                    break;
                }
                s = ps_bench_cuda_time_cub_scan_by_key(b.ctx, o.desc.type, o.desc.op, 4,
                                                       (const unsigned char *)b.in[0] + lay.in2, b.in[0], b.out[0], n,
                                                       (int)o.reps, &t);
                break;
            case BENCH_reduce_by_key:
                s = ps_bench_cuda_time_cub_reduce_by_key(b.ctx, o.desc.type, o.desc.op,
                                                         (const unsigned char *)b.in[0] + lay.in2, b.in[0],
                                                         (unsigned char *)b.out[0] + lay.out2, b.out[0], b.result, n,
                                                         (int)o.reps, &t);
                break;
            case BENCH_rle:
                s = ps_bench_cuda_time_cub_rle(b.ctx, o.desc.type, b.in[0], b.out[0],
                                               (unsigned char *)b.out[0] + lay.out2, b.result, n, (int)o.reps, &t);
                break;
            case BENCH_histogram:
                s = ps_bench_cuda_time_cub_histogram(b.ctx, o.bcase->param, b.in[0], b.out[0], n, (int)o.reps, &t);
                break;
            case BENCH_sort:
                s = ps_bench_cuda_time_cub_sort(b.ctx, o.desc.type, o.bcase->param, b.in[0],
                                                (const unsigned char *)b.in[0] + lay.in2, b.out[0],
                                                (unsigned char *)b.out[0] + lay.out2, n, (int)o.reps, &t);
                break;
            default: /* select, partition: by the same flags, else by the predicate */
                s = ps_bench_cuda_time_cub_select(
                    b.ctx, o.desc.type, o.operand,
                    o.bcase->param == BENCH_BY_FLAGS ? (const unsigned char *)b.in[0] + lay.in2 : NULL,
                    o.bcase->param == BENCH_UNIQUE, o.prim == BENCH_partition, b.in[0], b.out[0], b.result, n,
                    (int)o.reps, &t);
                break;
            }
            cub_seconds = s == PSCAN_SUCCESS ? t.seconds : 0; /* CUB has no equivalent (e.g. reverse): "-" */
            cub_spread = t.spread;
        }
#endif
        /* the bytes each primitive must move at least (see the header); sort: keys */
        const double in_bytes = (double)bytes, values = (double)n * (double)esize, runs = (double)kept;
        double traffic = 2 * in_bytes, copy_traffic = 2 * (double)lay.copy_bytes;
        switch (o.prim) {
        case BENCH_scan: /* widened: narrow in, 64-bit out */
            if (widen) traffic = in_bytes + (double)n * (double)pscan_type_size(pscan_type_widened(o.desc.type));
            break;
        case BENCH_reduce: traffic = in_bytes; break;
        case BENCH_select: traffic = in_bytes + runs * (double)esize; break;
        case BENCH_expand: traffic = in_bytes + runs * 4.0; break;
        case BENCH_partition: /* keys (and flags) in, keys out */
        case BENCH_segscan:
        case BENCH_scan_by_key: traffic = in_bytes + values; break;
        case BENCH_reduce_by_key: traffic = in_bytes + runs * (double)(esize + 4) + 8; break;
        case BENCH_rle: traffic = in_bytes + runs * (double)(esize + 8) + 8; break;
        case BENCH_histogram: traffic = in_bytes + 4.0 * o.bcase->param; break;
        case BENCH_sort: traffic = copy_traffic = (double)n; break;
        default: break;
        }
        const double copy_gbps = copy_traffic / seconds[0] * 1e-9;
        report_row(&rep, "copy", k, copy_traffic, seconds[0], spread[0], copy_gbps, cub_seconds);
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
