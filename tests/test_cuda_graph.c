/*
 * test_cuda_graph.c - pscan calls captured into a CUDA graph, the graph replayed with fresh data, every result
 * checked: the way PyTorch's CUDA graphs and any capture-then-replay loop use the library.
 *
 *   test_cuda_graph [--rounds 4] [--seed S]
 *
 * What it guards: a call's parameters are fixed when it is captured, so whatever a launch takes on the host per
 * call is taken once and replayed. The look-back's entries are tagged with a per-launch epoch taken on the host
 * (chain/single_pass.cuh); replayed, a launch keeps its epoch, and the entries the previous replay left in the same
 * temp would validate: a tile would take its predecessor's prefix of the previous data, and the call would report
 * success with wrong results. The drivers clear their entries under capture (ps_chain_fresh_state); the
 * sort and the counted partition clear their own status with a memset every call. So every primitive whose CUDA
 * code runs on the chain drivers is here, most over thousands of tiles: scan, reduce, two partitions,
 * select, expand, sort, segmented scan by head flags, scan by key, reduce by key, run-length encoding (its own
 * instance of reduce_by_key.cu's program, so a call of its own), the linear recurrence, and a scan through a user
 * operator (NVRTC's kernel, launched by user_op.cu itself, which sets up the tile state without the driver's
 * launch). The histogram is no chain (a memset, then per-block counts added by atomics), but a replay that lost
 * its memset would add each round's counts to the last round's, so it is here too. The calls also take every
 * kind of launch the library makes inside one graph: the single-pass chain over many tiles (with carries of one
 * element, of pairs, of affine maps, of a user's type), the even-share reduce, a cooperative partition, a counted
 * partition (memset, count, then the given-prefix driver as a programmatic dependent launch), expand's two
 * launches (the second a dependent launch), the sort's digit passes (dependent launches), a kernel of a library
 * loaded at run time (cudaKernel_t), a memset and a persistent grid. Every buffer and temp is allocated before
 * the capture, each call is run once before it (as PyTorch warms up; the user operator is compiled when it is
 * created and its module loaded by that first launch), and the capture is global (the strictest mode: any call
 * that may synchronise fails it). A user operator that cannot be created because NVRTC does not work here skips
 * that one call, with a line that says so. Then two captures without a warm-up: a scan on the context's workspace
 * (refused until a warm-up grew it) and a second user operator's first call (its kernels loaded under capture).
 *
 * Each round writes fresh random inputs into the same device buffers, launches the graph once, and compares every
 * output with a serial reference; rounds 1..R replay a graph whose calls have their own temps, R+1..2R one whose
 * calls share a single temp (round 0 is the warm-up, outside any graph). Then a scan on a fresh context's workspace
 * (temp == NULL, the Python layer's way): refused under capture with PSCAN_ERROR_TEMP_TOO_SMALL while the workspace
 * is too small, the capture left valid; captured after a warm-up, replayed R times and checked.
 * Exit 0: all passed; 1: any failure; 77: no CUDA device.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "pscan.h"
#include "pscan_cuda.h"

#define SCAN_N ((1u << 24) + 3)    /* i32 sum, inclusive: thousands of tiles on the single-pass chain */
#define REDUCE_N ((1u << 24) + 5)  /* i64 sum: the even-share driver */
#define COOP_N ((1u << 20) + 3)    /* i32 partition by keys > 0: no more tiles than are resident (cooperative) */
#define COUNTED_N ((1u << 22) + 7) /* i64 partition by keys > 0: counted first, then the given-prefix driver */
#define SELECT_N ((1u << 21) + 1)  /* i32 select by keys > 0, a window of 128 tiles */
#define EXPAND_N ((1u << 16) + 1)  /* u32 counts 0..7: both of expand's launches */
#define EXPAND_CAP (8u * EXPAND_N)
#define SORT_N ((1u << 20) + 9) /* u32 keys with u32 payloads (their input index: stability shows) */
#define SEGSCAN_N ((1u << 24) + 3) /* i32 sum by head flags, inclusive: 2049 tiles of 8192, a head in about 1000 */
#define BY_KEY_N ((1u << 24) + 1)  /* i32 sum by i32 keys in runs of 1..64: the segmented program over keys */
#define RBK_N ((1u << 23) + 5)     /* i32 sums by i32 keys in runs of 1..16 (2049 tiles of 4096); RLE of i32 */
#define HIST_N ((1u << 22) + 7)    /* u32 samples over [0, 2^32) in 256 bins: bin x >> 24, u32 counts */
#define HIST_BINS 256u
#define REC_N ((1u << 21) + 3)  /* f64 y = a y + b: 1025 tiles of 2048; integer data keep it exact (fill_inputs) */
#define USER_N ((1u << 24) + 9) /* u32 affine maps composed (8 bytes), a user operator: 2521 tiles of 6656 */
#define COUNTS 6                /* device counts: partitions (2), select, expand's total, reduce by key, RLE */

/* The temps, one per call (enqueue's order). */
enum {
    T_SCAN,
    T_REDUCE,
    T_COOP,
    T_COUNTED,
    T_SELECT,
    T_EXPAND,
    T_SORT,
    T_SEGSCAN,
    T_BY_KEY,
    T_RBK,
    T_RLE,
    T_HIST,
    T_REC,
    T_USER,
    TEMPS
};

static uint64_t rng_state;
static uint64_t rng(void) { /* splitmix64 */
    uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

static int failures;
static void fail(const char *what, long round, uint64_t at, uint64_t got, uint64_t want) {
    if (failures++ < 20)
        printf("FAIL round %ld: %s at %" PRIu64 ": got %" PRIu64 " (0x%" PRIx64 "), want %" PRIu64 " (0x%" PRIx64 ")\n",
               round, what, at, got, got, want, want);
}

/* An inclusive i32 sum, wrapping in 32 bits, of in's SCAN_N elements against out: the first mismatch fails. */
static void check_scan_sum(const int32_t *in, const int32_t *out, const char *what, long round) {
    uint32_t run = 0;
    for (uint64_t i = 0; i < SCAN_N; i++) {
        run += (uint32_t)in[i];
        if ((uint32_t)out[i] != run) {
            fail(what, round, i, (uint32_t)out[i], run);
            return;
        }
    }
}

#define CUDA_OK(call)                                                                                          \
    do {                                                                                                       \
        cudaError_t e_ = (call);                                                                               \
        if (e_ != cudaSuccess) {                                                                               \
            printf("FAIL: %s: %s (%s:%d)\n", #call, cudaGetErrorString(e_), __FILE__, __LINE__);               \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)
#define PSCAN_OK(call)                                                                                         \
    do {                                                                                                       \
        pscan_status s_ = (call);                                                                              \
        if (s_ != PSCAN_SUCCESS) {                                                                             \
            printf("FAIL: %s: %s (%s:%d)\n", #call, pscan_status_string(s_), __FILE__, __LINE__);             \
            exit(1);                                                                                           \
        }                                                                                                      \
    } while (0)

static void *dev_alloc(size_t bytes) {
    void *p = NULL;
    CUDA_OK(cudaMalloc(&p, bytes ? bytes : 1));
    return p;
}
static void *host_alloc(size_t bytes) {
    void *p = malloc(bytes ? bytes : 1);
    if (!p) {
        printf("FAIL: out of host memory (%zu bytes)\n", bytes);
        exit(1);
    }
    return p;
}

/* Every buffer of the calls; host copies of the inputs and outputs for the checks. */
typedef struct graph_case {
    int32_t *scan_in, *scan_out;
    int64_t *reduce_in, *reduce_out;
    int32_t *coop_in, *coop_out;
    int64_t *counted_in, *counted_out;
    int32_t *select_in, *select_out;
    uint64_t *counts; /* device, COUNTS: the three kept counts, expand's total, the two numbers of runs */
    uint32_t *expand_counts, *expand_out;
    uint32_t *sort_keys, *sort_values, *sort_keys_out, *sort_values_out;
    uint8_t *seg_flags;
    int32_t *seg_in, *seg_out;
    int32_t *key_keys, *key_in, *key_out;
    int32_t *rbk_keys, *rbk_values, *rbk_keys_out, *rbk_values_out;
    int32_t *rle_in, *rle_values_out;
    uint64_t *rle_lengths;
    uint32_t *hist_samples, *hist_counts;
    double *rec_a, *rec_b, *rec_y;
    uint32_t *user_in, *user_out; /* USER_N (a, b) pairs */
    pscan_operator *user_op;      /* NULL: NVRTC unavailable, the user scan is skipped */
    void *temp[TEMPS];
    size_t temp_bytes[TEMPS];
} graph_case;

static pscan_select_desc select_desc(pscan_type type, const void *zero) {
    pscan_select_desc d;
    memset(&d, 0, sizeof d);
    d.type = type;
    d.pred = PSCAN_PRED_GT;
    d.operand = zero;
    d.algo = PSCAN_ALGO_AUTO;
    return d;
}

static const int32_t zero32 = 0;
static const int64_t zero64 = 0;

/* The descs of the calls added after the sort, one each (enqueue and the temp sizes take the same). Item 0 starts
 * a segment whatever its flag, so flags[0] is left random. The histogram overwrites its counts (no
 * PSCAN_HISTOGRAM_ACCUMULATE): its memset is part of the graph. y0 = 3 so that the first tile's carry is not the
 * identity's. */
static const uint64_t hist_lower = 0, hist_upper = 1ull << 32; /* unsigned samples: uint64_t bounds */
static const double rec_y0 = 3.0;
static const pscan_segscan_desc segscan_desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL,
                                                PSCAN_SEGMENTS_HEAD_FLAGS};
static const pscan_scan_by_key_desc by_key_desc = {PSCAN_TYPE_I32, PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO,
                                                   NULL};
static const pscan_reduce_by_key_desc rbk_desc = {PSCAN_TYPE_I32, PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
static const pscan_rle_desc rle_desc = {PSCAN_TYPE_I32, PSCAN_ALGO_AUTO};
static const pscan_histogram_desc hist_desc = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, HIST_BINS, &hist_lower, &hist_upper,
                                               NULL, 0, PSCAN_ALGO_AUTO};
static const pscan_recurrence_desc rec_desc = {PSCAN_TYPE_F64, 0, PSCAN_ALGO_AUTO, &rec_y0};
static const pscan_scan_desc user_desc = {PSCAN_TYPE_U32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL}; /* type, op unread */

/* The user operator: x -> a x + b over u32 (wrapping), composed earlier first. It does not commute, so a tile that
 * took a wrong or stale prefix, or combined out of order, shows; with odd a the products never reach 0, so every
 * element of the input reaches the end of the scan. The source follows docs/api.md's rules (uint32_t, no header). */
typedef struct user_affine {
    uint32_t a, b;
} user_affine;
static const char user_source[] =
    "typedef struct { uint32_t a, b; } affine;\n"
    "affine combine(affine x, affine y) { affine r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; return r; }\n";
static const user_affine user_identity = {1, 0};

/* The user scan's output bu against the maps au composed in order, inclusive, wrapping in 32 bits (two u32 a map). */
static void check_user_scan(const uint32_t *au, const uint32_t *bu, const char *what, long round) {
    user_affine acc = user_identity;
    for (uint64_t i = 0; i < USER_N; i++) {
        const uint32_t a = au[2 * i], b = au[2 * i + 1];
        acc.b = a * acc.b + b, acc.a = a * acc.a;
        if (bu[2 * i] != acc.a || bu[2 * i + 1] != acc.b) {
            fail(what, round, i, (uint64_t)bu[2 * i] << 32 | bu[2 * i + 1], (uint64_t)acc.a << 32 | acc.b);
            return;
        }
    }
}

/* Creates the user operator, compiling it with NVRTC now. NULL where NVRTC does not work here (a backend error, or
 * no device compiler): then only the user scan is skipped. A source that fails to build, or any other status, is
 * a failure of the test. */
static pscan_operator *user_op_create(pscan_context *ctx, const char *source, const char *type_name,
                                      const char *combine_name) {
    pscan_user_op_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = sizeof(user_affine);
    d.elem_align = 4;
    d.identity = &user_identity;
    d.source = source;
    d.type_name = type_name;
    d.combine_name = combine_name;
    pscan_operator *op = NULL;
    const pscan_status s = pscan_operator_create(ctx, &d, &op);
    if (s == PSCAN_SUCCESS) return op;
    if (s == PSCAN_ERROR_BACKEND || s == PSCAN_ERROR_UNSUPPORTED_OPERATOR) {
        printf("test_cuda_graph: no user operator here (%s: NVRTC unavailable?): its scan is skipped\n",
               pscan_status_name(s));
        return NULL;
    }
    const char *log = NULL;
    pscan_context_build_log(ctx, &log);
    printf("FAIL: pscan_operator_create(%s): %s\n%s\n", type_name, pscan_status_string(s), log ? log : "");
    failures++;
    return NULL;
}

/* The calls the graph holds, in order; the same calls run once before the capture. */
static void enqueue(pscan_context *ctx, graph_case *g) {
    pscan_scan_desc scan = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    PSCAN_OK(pscan_scan(ctx, &scan, g->scan_in, g->scan_out, SCAN_N, g->temp[T_SCAN], g->temp_bytes[T_SCAN]));
    pscan_reduce_desc reduce = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    PSCAN_OK(pscan_reduce(ctx, &reduce, g->reduce_in, REDUCE_N, g->reduce_out, g->temp[T_REDUCE],
                          g->temp_bytes[T_REDUCE]));
    pscan_select_desc s32 = select_desc(PSCAN_TYPE_I32, &zero32), s64 = select_desc(PSCAN_TYPE_I64, &zero64);
    PSCAN_OK(pscan_partition(ctx, &s32, g->coop_in, NULL, COOP_N, g->coop_out, NULL, &g->counts[0], g->temp[T_COOP],
                             g->temp_bytes[T_COOP]));
    PSCAN_OK(pscan_partition(ctx, &s64, g->counted_in, NULL, COUNTED_N, g->counted_out, NULL, &g->counts[1],
                             g->temp[T_COUNTED], g->temp_bytes[T_COUNTED]));
    PSCAN_OK(pscan_select(ctx, &s32, g->select_in, NULL, SELECT_N, g->select_out, NULL, &g->counts[2],
                          g->temp[T_SELECT], g->temp_bytes[T_SELECT]));
    pscan_expand_desc expand = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_expand(ctx, &expand, g->expand_counts, NULL, EXPAND_N, g->expand_out, NULL, NULL, EXPAND_CAP,
                          &g->counts[3], g->temp[T_EXPAND], g->temp_bytes[T_EXPAND]));
    pscan_sort_desc sort = {PSCAN_TYPE_U32, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_sort(ctx, &sort, g->sort_keys, g->sort_values, SORT_N, g->sort_keys_out, g->sort_values_out,
                        g->temp[T_SORT], g->temp_bytes[T_SORT]));
    PSCAN_OK(pscan_segmented_scan(ctx, &segscan_desc, g->seg_in, g->seg_out, SEGSCAN_N, g->seg_flags, 0,
                                  g->temp[T_SEGSCAN], g->temp_bytes[T_SEGSCAN]));
    PSCAN_OK(pscan_scan_by_key(ctx, &by_key_desc, g->key_keys, g->key_in, g->key_out, BY_KEY_N, g->temp[T_BY_KEY],
                               g->temp_bytes[T_BY_KEY]));
    PSCAN_OK(pscan_reduce_by_key(ctx, &rbk_desc, g->rbk_keys, g->rbk_values, RBK_N, g->rbk_keys_out,
                                 g->rbk_values_out, &g->counts[4], g->temp[T_RBK], g->temp_bytes[T_RBK]));
    PSCAN_OK(pscan_run_length_encode(ctx, &rle_desc, g->rle_in, RBK_N, g->rle_values_out, g->rle_lengths,
                                     &g->counts[5], g->temp[T_RLE], g->temp_bytes[T_RLE]));
    PSCAN_OK(pscan_histogram(ctx, &hist_desc, g->hist_samples, HIST_N, g->hist_counts, g->temp[T_HIST],
                             g->temp_bytes[T_HIST]));
    PSCAN_OK(pscan_recurrence(ctx, &rec_desc, g->rec_a, g->rec_b, g->rec_y, REC_N, g->temp[T_REC],
                              g->temp_bytes[T_REC]));
    if (g->user_op)
        PSCAN_OK(pscan_scan_user(ctx, &user_desc, g->user_op, g->user_in, g->user_out, USER_N, g->temp[T_USER],
                                 g->temp_bytes[T_USER]));
}

/* n keys in runs of 1..longest items, each run's key random (two neighbouring runs may share a key, rarely: the
 * references find runs from the keys, as the library does). */
static void fill_runs(int32_t *keys, uint64_t n, unsigned longest) {
    int32_t key = 0;
    uint64_t left = 0;
    for (uint64_t i = 0; i < n; i++, left--) {
        if (left == 0) key = (int32_t)rng(), left = 1 + rng() % longest;
        keys[i] = key;
    }
}

/* Fresh random inputs: keys of both signs for the partitions and the select, counts 0..7, sort keys in a range
 * narrow enough that equal keys are common (their payloads then show stability). */
static void fill_inputs(graph_case *g, int32_t *h32, int64_t *h64, uint32_t *hu) {
    for (uint64_t i = 0; i < SCAN_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->scan_in, h32, SCAN_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < REDUCE_N; i++) h64[i] = (int64_t)rng();
    CUDA_OK(cudaMemcpy(g->reduce_in, h64, REDUCE_N * 8ull, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < COOP_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->coop_in, h32, COOP_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < COUNTED_N; i++) h64[i] = (int64_t)rng();
    CUDA_OK(cudaMemcpy(g->counted_in, h64, COUNTED_N * 8ull, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < SELECT_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->select_in, h32, SELECT_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < EXPAND_N; i++) hu[i] = (uint32_t)(rng() % 8);
    CUDA_OK(cudaMemcpy(g->expand_counts, hu, EXPAND_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < SORT_N; i++) hu[i] = (uint32_t)(rng() % 100000);
    CUDA_OK(cudaMemcpy(g->sort_keys, hu, SORT_N * 4, cudaMemcpyHostToDevice));

    /* segmented scan: a head in about 1000 items (flags[0] too: item 0 heads a segment either way) */
    uint8_t *flags = (uint8_t *)hu;
    for (uint64_t i = 0; i < SEGSCAN_N; i++) flags[i] = rng() % 1000 == 0 ? (uint8_t)(1 + rng() % 255) : 0;
    CUDA_OK(cudaMemcpy(g->seg_flags, flags, SEGSCAN_N, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < SEGSCAN_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->seg_in, h32, SEGSCAN_N * 4, cudaMemcpyHostToDevice));
    /* scan by key: runs of 1..64 */
    fill_runs(h32, BY_KEY_N, 64);
    CUDA_OK(cudaMemcpy(g->key_keys, h32, BY_KEY_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < BY_KEY_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->key_in, h32, BY_KEY_N * 4, cudaMemcpyHostToDevice));
    /* reduce by key and run-length encoding: runs of 1..16, so that a tile holds hundreds of runs */
    fill_runs(h32, RBK_N, 16);
    CUDA_OK(cudaMemcpy(g->rbk_keys, h32, RBK_N * 4, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < RBK_N; i++) h32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->rbk_values, h32, RBK_N * 4, cudaMemcpyHostToDevice));
    fill_runs(h32, RBK_N, 16);
    CUDA_OK(cudaMemcpy(g->rle_in, h32, RBK_N * 4, cudaMemcpyHostToDevice));
    /* histogram: any u32 counts */
    for (uint64_t i = 0; i < HIST_N; i++) hu[i] = (uint32_t)rng();
    CUDA_OK(cudaMemcpy(g->hist_samples, hu, HIST_N * 4, cudaMemcpyHostToDevice));
    /* recurrence, exact in f64 in any order of evaluation: a in {-1, 0, 1} (mostly 1, now and then -1, rarely 0,
     * which restarts y), b an integer in [-8, 8]. Every composed map (A, B) then has A in {-1, 0, 1} and B an
     * integer with |B| <= 8 n < 2^25, and y an integer with |y| <= 3 + 8 n: every product and sum is exact, so
     * the device's y must equal the serial loop's exactly, whatever the tiles and their carries. */
    double *hd = (double *)h64;
    for (uint64_t i = 0; i < REC_N; i++) {
        const unsigned r = (unsigned)(rng() % 64);
        hd[i] = r == 0 ? 0.0 : r < 8 ? -1.0 : 1.0;
    }
    CUDA_OK(cudaMemcpy(g->rec_a, hd, REC_N * 8ull, cudaMemcpyHostToDevice));
    for (uint64_t i = 0; i < REC_N; i++) hd[i] = (double)((int)(rng() % 17) - 8);
    CUDA_OK(cudaMemcpy(g->rec_b, hd, REC_N * 8ull, cudaMemcpyHostToDevice));
    /* user operator: maps with odd a, any b */
    for (uint64_t i = 0; i < USER_N; i++) {
        const uint64_t r = rng();
        hu[2 * i] = (uint32_t)r | 1u, hu[2 * i + 1] = (uint32_t)(r >> 32);
    }
    CUDA_OK(cudaMemcpy(g->user_in, hu, USER_N * 8ull, cudaMemcpyHostToDevice));
}

static int sort_pair_cmp(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; /* key << 32 | index: stable by index */
    return x < y ? -1 : x > y;
}

/* Downloads every output and compares it with the serial reference of the inputs fill_inputs wrote (read back
 * from the device, so each check sees exactly what the graph read). */
static void check(graph_case *g, long round, int32_t *a32, int32_t *b32, int64_t *a64, int64_t *b64, uint32_t *au,
                  uint32_t *bu, uint64_t *pairs) {
    uint64_t counts[COUNTS];
    CUDA_OK(cudaMemcpy(counts, g->counts, sizeof counts, cudaMemcpyDeviceToHost));

    /* scan: inclusive sum, wrapping in 32 bits */
    CUDA_OK(cudaMemcpy(a32, g->scan_in, SCAN_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->scan_out, SCAN_N * 4, cudaMemcpyDeviceToHost));
    check_scan_sum(a32, b32, "scan i32 sum", round);

    /* reduce: sum, wrapping in 64 bits */
    CUDA_OK(cudaMemcpy(a64, g->reduce_in, REDUCE_N * 8ull, cudaMemcpyDeviceToHost));
    uint64_t sum = 0, got = 0;
    for (uint64_t i = 0; i < REDUCE_N; i++) sum += (uint64_t)a64[i];
    CUDA_OK(cudaMemcpy(&got, g->reduce_out, 8, cudaMemcpyDeviceToHost));
    if (got != sum) fail("reduce i64 sum", round, 0, got, sum);

    /* the partitions: keys > 0 first, then the rest, both in input order */
    for (int wide = 0; wide < 2; wide++) {
        const uint64_t n = wide ? COUNTED_N : COOP_N;
        const size_t es = wide ? 8 : 4;
        void *in = wide ? (void *)a64 : (void *)a32, *out = wide ? (void *)b64 : (void *)b32;
        CUDA_OK(cudaMemcpy(in, wide ? (void *)g->counted_in : (void *)g->coop_in, n * es, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(out, wide ? (void *)g->counted_out : (void *)g->coop_out, n * es, cudaMemcpyDeviceToHost));
        uint64_t kept = 0;
        for (uint64_t i = 0; i < n; i++) kept += wide ? a64[i] > 0 : a32[i] > 0;
        const char *what = wide ? "partition i64 (counted) count" : "partition i32 (cooperative) count";
        if (counts[wide] != kept) {
            fail(what, round, 0, counts[wide], kept);
            continue;
        }
        uint64_t front = 0, back = kept;
        for (uint64_t i = 0; i < n; i++) {
            const int64_t x = wide ? a64[i] : a32[i];
            const uint64_t at = x > 0 ? front++ : back++;
            const int64_t y = wide ? b64[at] : b32[at];
            if (y != x) {
                fail(wide ? "partition i64 (counted)" : "partition i32 (cooperative)", round, at, (uint64_t)y, (uint64_t)x);
                break;
            }
        }
    }

    /* select: keys > 0 in input order */
    CUDA_OK(cudaMemcpy(a32, g->select_in, SELECT_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->select_out, SELECT_N * 4, cudaMemcpyDeviceToHost));
    uint64_t kept = 0;
    for (uint64_t i = 0; i < SELECT_N; i++)
        if (a32[i] > 0) {
            if (kept < SELECT_N && b32[kept] != a32[i]) {
                fail("select i32", round, kept, (uint32_t)b32[kept], (uint32_t)a32[i]);
                break;
            }
            kept++;
        }
    if (counts[2] != kept) fail("select i32 count", round, 0, counts[2], kept);

    /* expand: each slot holds the index of the item whose run holds it */
    CUDA_OK(cudaMemcpy(au, g->expand_counts, EXPAND_N * 4, cudaMemcpyDeviceToHost));
    uint64_t total = 0;
    for (uint64_t i = 0; i < EXPAND_N; i++) total += au[i];
    if (counts[3] != total) fail("expand total", round, 0, counts[3], total);
    CUDA_OK(cudaMemcpy(bu, g->expand_out, (total < EXPAND_CAP ? total : EXPAND_CAP) * 4, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0, slot = 0; i < EXPAND_N && slot < EXPAND_CAP; i++)
        for (uint32_t k = 0; k < au[i] && slot < EXPAND_CAP; k++, slot++)
            if (bu[slot] != i) {
                fail("expand u32", round, slot, bu[slot], i);
                i = EXPAND_N;
                break;
            }

    /* sort: keys ascending, equal keys in input order (the payload is the input index) */
    CUDA_OK(cudaMemcpy(au, g->sort_keys, SORT_N * 4, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < SORT_N; i++) pairs[i] = (uint64_t)au[i] << 32 | i;
    qsort(pairs, SORT_N, sizeof *pairs, sort_pair_cmp);
    CUDA_OK(cudaMemcpy(au, g->sort_keys_out, SORT_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(bu, g->sort_values_out, SORT_N * 4, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < SORT_N; i++)
        if (au[i] != (uint32_t)(pairs[i] >> 32) || bu[i] != (uint32_t)pairs[i]) {
            fail("sort u32 pairs (key << 32 | payload)", round, i, (uint64_t)au[i] << 32 | bu[i], pairs[i]);
            break;
        }

    /* segmented scan: inclusive sum restarting at item 0 and at every nonzero flag, wrapping in 32 bits */
    uint8_t *flags = (uint8_t *)au;
    CUDA_OK(cudaMemcpy(flags, g->seg_flags, SEGSCAN_N, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(a32, g->seg_in, SEGSCAN_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->seg_out, SEGSCAN_N * 4, cudaMemcpyDeviceToHost));
    uint32_t run = 0;
    for (uint64_t i = 0; i < SEGSCAN_N; i++) {
        run = (i == 0 || flags[i] ? 0u : run) + (uint32_t)a32[i];
        if ((uint32_t)b32[i] != run) {
            fail("segmented scan i32 sum (head flags)", round, i, (uint32_t)b32[i], run);
            break;
        }
    }

    /* scan by key: the same, restarting wherever the key differs from the one before */
    CUDA_OK(cudaMemcpy(au, g->key_keys, BY_KEY_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(a32, g->key_in, BY_KEY_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->key_out, BY_KEY_N * 4, cudaMemcpyDeviceToHost));
    run = 0;
    for (uint64_t i = 0; i < BY_KEY_N; i++) {
        run = (i == 0 || au[i] != au[i - 1] ? 0u : run) + (uint32_t)a32[i];
        if ((uint32_t)b32[i] != run) {
            fail("scan by key i32 sum", round, i, (uint32_t)b32[i], run);
            break;
        }
    }

    /* reduce by key: run r's key and sum at index r, the number of runs in counts[4] */
    CUDA_OK(cudaMemcpy(a32, g->rbk_keys, RBK_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->rbk_values, RBK_N * 4, cudaMemcpyDeviceToHost));
    uint64_t runs = 0;
    for (uint64_t i = 0; i < RBK_N; i++) runs += i == 0 || a32[i] != a32[i - 1];
    if (counts[4] != runs) {
        fail("reduce by key i32 count", round, 0, counts[4], runs);
    } else {
        CUDA_OK(cudaMemcpy(au, g->rbk_keys_out, runs * 4, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(bu, g->rbk_values_out, runs * 4, cudaMemcpyDeviceToHost));
        uint32_t value = 0;
        for (uint64_t i = 0, r = 0; i < RBK_N; i++) {
            value += (uint32_t)b32[i];
            if (i + 1 < RBK_N && a32[i + 1] == a32[i]) continue; /* the run goes on */
            if (au[r] != (uint32_t)a32[i]) {
                fail("reduce by key i32 key", round, r, au[r], (uint32_t)a32[i]);
                break;
            }
            if (bu[r] != value) {
                fail("reduce by key i32 sum", round, r, bu[r], value);
                break;
            }
            r++, value = 0;
        }
    }

    /* run-length encoding: run r's element and length at index r, the number of runs in counts[5] */
    CUDA_OK(cudaMemcpy(a32, g->rle_in, RBK_N * 4, cudaMemcpyDeviceToHost));
    runs = 0;
    for (uint64_t i = 0; i < RBK_N; i++) runs += i == 0 || a32[i] != a32[i - 1];
    if (counts[5] != runs) {
        fail("run-length encode i32 count", round, 0, counts[5], runs);
    } else {
        uint64_t *lengths = (uint64_t *)b64;
        CUDA_OK(cudaMemcpy(b32, g->rle_values_out, runs * 4, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(lengths, g->rle_lengths, runs * 8, cudaMemcpyDeviceToHost));
        for (uint64_t i = 0, r = 0, start = 0; i < RBK_N; i++) {
            if (i + 1 < RBK_N && a32[i + 1] == a32[i]) continue;
            if (b32[r] != a32[i]) {
                fail("run-length encode i32 value", round, r, (uint32_t)b32[r], (uint32_t)a32[i]);
                break;
            }
            if (lengths[r] != i + 1 - start) {
                fail("run-length encode i32 length", round, r, lengths[r], i + 1 - start);
                break;
            }
            r++, start = i + 1;
        }
    }

    /* histogram: [0, 2^32) in 256 bins puts x in bin x >> 24; every count overwritten, not added to */
    uint32_t want[HIST_BINS], got_counts[HIST_BINS];
    memset(want, 0, sizeof want);
    CUDA_OK(cudaMemcpy(au, g->hist_samples, HIST_N * 4, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < HIST_N; i++) want[au[i] >> 24]++;
    CUDA_OK(cudaMemcpy(got_counts, g->hist_counts, sizeof got_counts, cudaMemcpyDeviceToHost));
    for (uint32_t k = 0; k < HIST_BINS; k++)
        if (got_counts[k] != want[k]) {
            fail("histogram u32 256 bins", round, k, got_counts[k], want[k]);
            break;
        }

    /* recurrence: the serial loop from y0, exact (fill_inputs), computed in place of a; compared as numbers, the
     * report gives the bits */
    double *ya = (double *)a64, *yb = (double *)b64;
    CUDA_OK(cudaMemcpy(ya, g->rec_a, REC_N * 8ull, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(yb, g->rec_b, REC_N * 8ull, cudaMemcpyDeviceToHost));
    double y = rec_y0;
    for (uint64_t i = 0; i < REC_N; i++) ya[i] = y = ya[i] * y + yb[i];
    CUDA_OK(cudaMemcpy(yb, g->rec_y, REC_N * 8ull, cudaMemcpyDeviceToHost));
    for (uint64_t i = 0; i < REC_N; i++)
        if (!(yb[i] == ya[i])) {
            uint64_t gb, wb;
            memcpy(&gb, &yb[i], 8);
            memcpy(&wb, &ya[i], 8);
            fail("recurrence f64 (bits)", round, i, gb, wb);
            break;
        }

    /* user operator: the maps composed in order, inclusive, wrapping in 32 bits */
    if (g->user_op) {
        CUDA_OK(cudaMemcpy(au, g->user_in, USER_N * 8ull, cudaMemcpyDeviceToHost));
        CUDA_OK(cudaMemcpy(bu, g->user_out, USER_N * 8ull, cudaMemcpyDeviceToHost));
        check_user_scan(au, bu, "user operator scan (affine u32, a << 32 | b)", round);
    }
}

/* The context's workspace under capture (temp == NULL, as the Python layer calls). A context whose workspace is
 * too small refuses the call with PSCAN_ERROR_TEMP_TOO_SMALL, enqueues nothing and leaves the capture valid
 * (growing the workspace then would hand the context memory that belongs to the graph, gone outside it); after
 * one call outside the capture (the warm-up) has grown it, the captured call runs on the workspace and replays
 * right with fresh data, also after the workspace has grown again (the old one kept for the graph). */
static void workspace_capture(cudaStream_t stream, graph_case *g, int32_t *a32, int32_t *b32, long rounds) {
    pscan_context *ws = NULL;
    PSCAN_OK(pscan_cuda_context_create(stream, &ws));
    pscan_scan_desc scan = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    size_t nodes = 0;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const pscan_status refused = pscan_scan(ws, &scan, g->scan_in, g->scan_out, SCAN_N, NULL, 0);
    const pscan_status reserve = pscan_context_reserve(ws, 1u << 20);
    CUDA_OK(cudaStreamEndCapture(stream, &graph)); /* an allocation attempted under capture would fail it here */
    CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
    CUDA_OK(cudaGraphDestroy(graph));
    const pscan_status got[2] = {refused, reserve};
    for (int k = 0; k < 2; k++)
        if (got[k] != PSCAN_ERROR_TEMP_TOO_SMALL && failures++ < 20)
            printf("FAIL workspace under capture: %s returned %s, want PSCAN_ERROR_TEMP_TOO_SMALL\n",
                   k ? "pscan_context_reserve" : "pscan_scan (temp NULL)", pscan_status_string(got[k]));
    if (nodes != 0) fail("workspace under capture: nodes the refused calls left in the graph", 0, 0, nodes, 0);

    PSCAN_OK(pscan_scan(ws, &scan, g->scan_in, g->scan_out, SCAN_N, NULL, 0)); /* the warm-up grows it */
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    PSCAN_OK(pscan_scan(ws, &scan, g->scan_in, g->scan_out, SCAN_N, NULL, 0));
    CUDA_OK(cudaStreamEndCapture(stream, &graph));
    CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
    for (long r = 1; r <= rounds; r++) {
        for (uint64_t i = 0; i < SCAN_N; i++) a32[i] = (int32_t)rng();
        CUDA_OK(cudaMemcpy(g->scan_in, a32, SCAN_N * 4, cudaMemcpyHostToDevice));
        CUDA_OK(cudaGraphLaunch(exec, stream));
        CUDA_OK(cudaStreamSynchronize(stream));
        CUDA_OK(cudaMemcpy(b32, g->scan_out, SCAN_N * 4, cudaMemcpyDeviceToHost));
        check_scan_sum(a32, b32, "scan i32 sum on the workspace, captured", r);
    }

    /* The workspace grows after the capture (a larger call, or a reserve): the graph's replays still write the
     * old one, so the context must keep it (retired until pscan_context_destroy), not free it. Freed, the pool
     * hands its memory to the next stream-ordered allocation of the size, here a bystander filled with 0x5A,
     * which the next replay would overwrite (or, trimmed back to the system, fault on). */
    size_t need = 0;
    PSCAN_OK(pscan_scan_temp_bytes(ws, &scan, SCAN_N, &need));
    PSCAN_OK(pscan_context_reserve(ws, 4 * need + (64u << 20)));
    unsigned char *bystander = NULL, *seen = host_alloc(need);
    CUDA_OK(cudaMallocAsync((void **)&bystander, need, stream));
    CUDA_OK(cudaMemsetAsync(bystander, 0x5A, need, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    for (uint64_t i = 0; i < SCAN_N; i++) a32[i] = (int32_t)rng();
    CUDA_OK(cudaMemcpy(g->scan_in, a32, SCAN_N * 4, cudaMemcpyHostToDevice));
    CUDA_OK(cudaGraphLaunch(exec, stream));
    CUDA_OK(cudaStreamSynchronize(stream));
    CUDA_OK(cudaMemcpy(b32, g->scan_out, SCAN_N * 4, cudaMemcpyDeviceToHost));
    check_scan_sum(a32, b32, "scan i32 sum on the workspace, replayed after the workspace grew", rounds + 1);
    CUDA_OK(cudaMemcpy(seen, bystander, need, cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < need; i++)
        if (seen[i] != 0x5A) {
            fail("a replay wrote memory the context had freed (bystander byte)", rounds + 1, i, seen[i], 0x5A);
            break;
        }
    CUDA_OK(cudaFreeAsync(bystander, stream));
    free(seen);
    CUDA_OK(cudaGraphExecDestroy(exec));
    CUDA_OK(cudaGraphDestroy(graph));
    PSCAN_OK(pscan_context_destroy(ws));
}

/* A user operator whose first call is captured: its kernels are compiled at create, outside the capture, but the
 * first launch loads them onto the device (lazy loading), under the capture. Either the call captures (and the graph
 * replays right with fresh data), or it returns a status and the capture stays valid and empty: a call that reports
 * success and breaks the capture, or replays wrong, fails. Which of the two happened is printed. A source of its
 * own, so no cache of the operator above serves it. */
static void user_first_call_captured(cudaStream_t stream, pscan_context *ctx, graph_case *g, uint32_t *au, uint32_t *bu,
                                     long rounds) {
    static const char source[] = "/* first call under capture */\n"
                                 "typedef struct { uint32_t a, b; } affine2;\n"
                                 "affine2 compose(affine2 x, affine2 y) {\n"
                                 "    affine2 r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; return r;\n"
                                 "}\n";
    pscan_operator *op = user_op_create(ctx, source, "affine2", "compose");
    if (!op) return;
    size_t bytes = 0;
    PSCAN_OK(pscan_scan_user_temp_bytes(ctx, &user_desc, op, USER_N, &bytes));
    void *temp = dev_alloc(bytes);
    cudaGraph_t graph = NULL;
    CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
    const pscan_status s = pscan_scan_user(ctx, &user_desc, op, g->user_in, g->user_out, USER_N, temp, bytes);
    const cudaError_t ended = cudaStreamEndCapture(stream, &graph);
    size_t nodes = 0;
    if (ended == cudaSuccess) CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
    printf("test_cuda_graph: a user operator's first call under capture: %s, the capture %s (%zu nodes)\n",
           pscan_status_name(s), ended == cudaSuccess ? "valid" : cudaGetErrorString(ended), nodes);
    if (ended != cudaSuccess || (s != PSCAN_SUCCESS && nodes != 0)) {
        printf("FAIL: a user operator's first call broke the capture or left nodes behind a refusal\n");
        failures++;
    } else if (s == PSCAN_SUCCESS) {
        cudaGraphExec_t exec;
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        for (long r = 1; r <= rounds; r++) {
            for (uint64_t i = 0; i < USER_N; i++) au[2 * i] = (uint32_t)rng() | 1u, au[2 * i + 1] = (uint32_t)rng();
            CUDA_OK(cudaMemcpy(g->user_in, au, USER_N * 8ull, cudaMemcpyHostToDevice));
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            CUDA_OK(cudaMemcpy(bu, g->user_out, USER_N * 8ull, cudaMemcpyDeviceToHost));
            check_user_scan(au, bu, "user operator, first call captured (a << 32 | b)", r);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
    }
    if (graph) CUDA_OK(cudaGraphDestroy(graph));
    CUDA_OK(cudaFree(temp));
    PSCAN_OK(pscan_operator_destroy(op));
}

int main(int argc, char **argv) {
    long rounds = 4;
    uint64_t seed = 0x6A7F11ull;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--rounds") == 0 && i + 1 < argc) rounds = strtol(argv[++i], NULL, 10);
        else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) seed = strtoull(argv[++i], NULL, 0);
        else {
            fprintf(stderr, "usage: test_cuda_graph [--rounds R] [--seed S]\n");
            return 1;
        }
    }
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        printf("test_cuda_graph: no CUDA device (skipped)\n");
        return 77;
    }
    rng_state = seed;

    cudaStream_t stream;
    CUDA_OK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    pscan_context *ctx = NULL;
    PSCAN_OK(pscan_cuda_context_create(stream, &ctx));

    graph_case g;
    memset(&g, 0, sizeof g);
    g.scan_in = dev_alloc(SCAN_N * 4);
    g.scan_out = dev_alloc(SCAN_N * 4);
    g.reduce_in = dev_alloc(REDUCE_N * 8ull);
    g.reduce_out = dev_alloc(8);
    g.coop_in = dev_alloc(COOP_N * 4);
    g.coop_out = dev_alloc(COOP_N * 4);
    g.counted_in = dev_alloc(COUNTED_N * 8ull);
    g.counted_out = dev_alloc(COUNTED_N * 8ull);
    g.select_in = dev_alloc(SELECT_N * 4);
    g.select_out = dev_alloc(SELECT_N * 4);
    g.counts = dev_alloc(COUNTS * sizeof(uint64_t));
    g.expand_counts = dev_alloc(EXPAND_N * 4);
    g.expand_out = dev_alloc(EXPAND_CAP * 4ull);
    g.sort_keys = dev_alloc(SORT_N * 4);
    g.sort_values = dev_alloc(SORT_N * 4);
    g.sort_keys_out = dev_alloc(SORT_N * 4);
    g.sort_values_out = dev_alloc(SORT_N * 4);
    g.seg_flags = dev_alloc(SEGSCAN_N);
    g.seg_in = dev_alloc(SEGSCAN_N * 4);
    g.seg_out = dev_alloc(SEGSCAN_N * 4);
    g.key_keys = dev_alloc(BY_KEY_N * 4);
    g.key_in = dev_alloc(BY_KEY_N * 4);
    g.key_out = dev_alloc(BY_KEY_N * 4);
    g.rbk_keys = dev_alloc(RBK_N * 4);
    g.rbk_values = dev_alloc(RBK_N * 4);
    g.rbk_keys_out = dev_alloc(RBK_N * 4); /* room for n runs, as the call asks */
    g.rbk_values_out = dev_alloc(RBK_N * 4);
    g.rle_in = dev_alloc(RBK_N * 4);
    g.rle_values_out = dev_alloc(RBK_N * 4);
    g.rle_lengths = dev_alloc(RBK_N * 8ull);
    g.hist_samples = dev_alloc(HIST_N * 4);
    g.hist_counts = dev_alloc(HIST_BINS * 4);
    g.rec_a = dev_alloc(REC_N * 8ull);
    g.rec_b = dev_alloc(REC_N * 8ull);
    g.rec_y = dev_alloc(REC_N * 8ull);
    g.user_in = dev_alloc(USER_N * 8ull);
    g.user_out = dev_alloc(USER_N * 8ull);
    g.user_op = user_op_create(ctx, user_source, "affine", "combine"); /* NVRTC compiles it now, outside any capture */

    /* temps sized by the library, each its own (one temp shared by every call would serve as well: calls on one
     * stream use it in turn) */
    pscan_scan_desc scan = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    pscan_reduce_desc reduce = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    pscan_select_desc s32 = select_desc(PSCAN_TYPE_I32, &zero32), s64 = select_desc(PSCAN_TYPE_I64, &zero64);
    pscan_expand_desc expand = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, 0, PSCAN_ALGO_AUTO};
    pscan_sort_desc sort = {PSCAN_TYPE_U32, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_scan_temp_bytes(ctx, &scan, SCAN_N, &g.temp_bytes[T_SCAN]));
    PSCAN_OK(pscan_reduce_temp_bytes(ctx, &reduce, REDUCE_N, &g.temp_bytes[T_REDUCE]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s32, COOP_N, &g.temp_bytes[T_COOP]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s64, COUNTED_N, &g.temp_bytes[T_COUNTED]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s32, SELECT_N, &g.temp_bytes[T_SELECT]));
    PSCAN_OK(pscan_expand_temp_bytes(ctx, &expand, EXPAND_N, EXPAND_CAP, &g.temp_bytes[T_EXPAND]));
    PSCAN_OK(pscan_sort_temp_bytes(ctx, &sort, SORT_N, &g.temp_bytes[T_SORT]));
    PSCAN_OK(pscan_segmented_scan_temp_bytes(ctx, &segscan_desc, SEGSCAN_N, 0, &g.temp_bytes[T_SEGSCAN]));
    PSCAN_OK(pscan_scan_by_key_temp_bytes(ctx, &by_key_desc, BY_KEY_N, &g.temp_bytes[T_BY_KEY]));
    PSCAN_OK(pscan_reduce_by_key_temp_bytes(ctx, &rbk_desc, RBK_N, &g.temp_bytes[T_RBK]));
    PSCAN_OK(pscan_run_length_encode_temp_bytes(ctx, &rle_desc, RBK_N, &g.temp_bytes[T_RLE]));
    PSCAN_OK(pscan_histogram_temp_bytes(ctx, &hist_desc, HIST_N, &g.temp_bytes[T_HIST]));
    PSCAN_OK(pscan_recurrence_temp_bytes(ctx, &rec_desc, REC_N, &g.temp_bytes[T_REC]));
    if (g.user_op) PSCAN_OK(pscan_scan_user_temp_bytes(ctx, &user_desc, g.user_op, USER_N, &g.temp_bytes[T_USER]));
    for (int k = 0; k < TEMPS; k++) g.temp[k] = dev_alloc(g.temp_bytes[k]);

    /* host copies: each buffer holds `most` elements of its own type, enough for every call's inputs and outputs
     * (the user maps go to au and bu as two u32 each, hence 2 USER_N; the head flags to au, a byte each; the
     * recurrence's f64 to a64 and b64) */
    const uint64_t sizes[] = {SCAN_N,    REDUCE_N, COOP_N, COUNTED_N, SELECT_N, SORT_N,
                              SEGSCAN_N, BY_KEY_N, RBK_N,  HIST_N,    REC_N,    2 * (uint64_t)USER_N};
    uint64_t most = 0;
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++)
        if (sizes[k] > most) most = sizes[k];
    int32_t *a32 = host_alloc(most * 4), *b32 = host_alloc(most * 4);
    int64_t *a64 = host_alloc(most * 8), *b64 = host_alloc(most * 8);
    uint32_t *au = host_alloc((most > EXPAND_CAP ? most : EXPAND_CAP) * 4);
    uint32_t *bu = host_alloc((most > EXPAND_CAP ? most : EXPAND_CAP) * 4);
    uint64_t *pairs = host_alloc(SORT_N * 8ull);
    uint32_t *index = host_alloc(SORT_N * 4);
    for (uint32_t i = 0; i < SORT_N; i++) index[i] = i;
    CUDA_OK(cudaMemcpy(g.sort_values, index, SORT_N * 4, cudaMemcpyHostToDevice));

    /* warm-up outside the capture, checked like a round (round 0) */
    fill_inputs(&g, a32, a64, au);
    enqueue(ctx, &g);
    PSCAN_OK(pscan_context_synchronize(ctx));
    check(&g, 0, a32, b32, a64, b64, au, bu, pairs);

    /* two graphs: each call with its own temp, then every call on one shared temp (the calls use it in stream
     * order, so each launch's entries lie over the previous call's, of another epoch) */
    size_t shared_bytes = 0, nodes = 0;
    for (int k = 0; k < TEMPS; k++)
        if (g.temp_bytes[k] > shared_bytes) shared_bytes = g.temp_bytes[k];
    void *shared = dev_alloc(shared_bytes), *own[TEMPS];
    memcpy(own, g.temp, sizeof own);
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1)
            for (int k = 0; k < TEMPS; k++) g.temp[k] = shared;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_OK(cudaStreamBeginCapture(stream, cudaStreamCaptureModeGlobal));
        enqueue(ctx, &g);
        CUDA_OK(cudaStreamEndCapture(stream, &graph));
        CUDA_OK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_OK(cudaGraphGetNodes(graph, NULL, &nodes));
        for (long r = 1; r <= rounds; r++) {
            fill_inputs(&g, a32, a64, au);
            CUDA_OK(cudaGraphLaunch(exec, stream));
            CUDA_OK(cudaStreamSynchronize(stream));
            check(&g, mode * rounds + r, a32, b32, a64, b64, au, bu, pairs);
        }
        CUDA_OK(cudaGraphExecDestroy(exec));
        CUDA_OK(cudaGraphDestroy(graph));
    }
    for (int k = 0; k < TEMPS; k++) CUDA_OK(cudaFree(own[k]));
    CUDA_OK(cudaFree(shared));
    workspace_capture(stream, &g, a32, b32, rounds);
    if (g.user_op) user_first_call_captured(stream, ctx, &g, au, bu, rounds);

    pscan_operator_destroy(g.user_op);
    pscan_context_destroy(ctx);
    CUDA_OK(cudaStreamDestroy(stream));
    printf("test_cuda_graph: %ld replays each of two %zu-node graphs (scan, reduce, two partitions, select, expand, "
           "sort, segmented scan, scan by key, reduce by key, run-length encoding, histogram, recurrence, %s; own "
           "temps, then one shared temp; a scan on the context's workspace, refused under capture until a warm-up grew it; "
           "a user operator's first call captured), %d failures\n",
           rounds, nodes, g.user_op ? "user operator scan" : "no user operator (skipped)", failures);
    return failures ? 1 : 0;
}
