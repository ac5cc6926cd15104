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
 * sort and the counted partition clear their own status with a memset every call. The calls also take every kind
 * of launch the library makes inside one graph: the single-pass chain over many tiles, the even-share reduce, a
 * cooperative partition, a counted partition (memset, count, then the given-prefix driver as a programmatic
 * dependent launch), expand's two launches (the second a dependent launch), the sort's digit passes (dependent
 * launches). Every buffer and temp is allocated before the capture, each call is run once before it (as PyTorch
 * warms up), and the capture is global (the strictest mode: any call that may synchronise fails it).
 *
 * Each round writes fresh random inputs into the same device buffers, launches the graph once, and compares every
 * output with a serial reference; rounds 1..R replay a graph whose calls have their own temps, R+1..2R one whose
 * calls share a single temp (round 0 is the warm-up, outside any graph). Exit 0: all passed; 1: any failure; 77: no CUDA device.
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
    uint64_t *counts; /* device: the three kept counts, expand's total */
    uint32_t *expand_counts, *expand_out;
    uint32_t *sort_keys, *sort_values, *sort_keys_out, *sort_values_out;
    void *temp[7];
    size_t temp_bytes[7];
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

/* The calls the graph holds, in order; the same calls run once before the capture. */
static void enqueue(pscan_context *ctx, graph_case *g) {
    pscan_scan_desc scan = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    PSCAN_OK(pscan_scan(ctx, &scan, g->scan_in, g->scan_out, SCAN_N, g->temp[0], g->temp_bytes[0]));
    pscan_reduce_desc reduce = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    PSCAN_OK(pscan_reduce(ctx, &reduce, g->reduce_in, REDUCE_N, g->reduce_out, g->temp[1], g->temp_bytes[1]));
    pscan_select_desc s32 = select_desc(PSCAN_TYPE_I32, &zero32), s64 = select_desc(PSCAN_TYPE_I64, &zero64);
    PSCAN_OK(pscan_partition(ctx, &s32, g->coop_in, NULL, COOP_N, g->coop_out, NULL, &g->counts[0], g->temp[2],
                             g->temp_bytes[2]));
    PSCAN_OK(pscan_partition(ctx, &s64, g->counted_in, NULL, COUNTED_N, g->counted_out, NULL, &g->counts[1],
                             g->temp[3], g->temp_bytes[3]));
    PSCAN_OK(pscan_select(ctx, &s32, g->select_in, NULL, SELECT_N, g->select_out, NULL, &g->counts[2], g->temp[4],
                          g->temp_bytes[4]));
    pscan_expand_desc expand = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_expand(ctx, &expand, g->expand_counts, NULL, EXPAND_N, g->expand_out, NULL, NULL, EXPAND_CAP,
                          &g->counts[3], g->temp[5], g->temp_bytes[5]));
    pscan_sort_desc sort = {PSCAN_TYPE_U32, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_sort(ctx, &sort, g->sort_keys, g->sort_values, SORT_N, g->sort_keys_out, g->sort_values_out,
                        g->temp[6], g->temp_bytes[6]));
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
}

static int sort_pair_cmp(const void *a, const void *b) {
    const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b; /* key << 32 | index: stable by index */
    return x < y ? -1 : x > y;
}

/* Downloads every output and compares it with the serial reference of the inputs fill_inputs wrote (read back
 * from the device, so each check sees exactly what the graph read). */
static void check(graph_case *g, long round, int32_t *a32, int32_t *b32, int64_t *a64, int64_t *b64, uint32_t *au,
                  uint32_t *bu, uint64_t *pairs) {
    uint64_t counts[4];
    CUDA_OK(cudaMemcpy(counts, g->counts, sizeof counts, cudaMemcpyDeviceToHost));

    /* scan: inclusive sum, wrapping in 32 bits */
    CUDA_OK(cudaMemcpy(a32, g->scan_in, SCAN_N * 4, cudaMemcpyDeviceToHost));
    CUDA_OK(cudaMemcpy(b32, g->scan_out, SCAN_N * 4, cudaMemcpyDeviceToHost));
    uint32_t run = 0;
    for (uint64_t i = 0; i < SCAN_N; i++) {
        run += (uint32_t)a32[i];
        if ((uint32_t)b32[i] != run) {
            fail("scan i32 sum", round, i, (uint32_t)b32[i], run);
            break;
        }
    }

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
    g.counts = dev_alloc(4 * sizeof(uint64_t));
    g.expand_counts = dev_alloc(EXPAND_N * 4);
    g.expand_out = dev_alloc(EXPAND_CAP * 4ull);
    g.sort_keys = dev_alloc(SORT_N * 4);
    g.sort_values = dev_alloc(SORT_N * 4);
    g.sort_keys_out = dev_alloc(SORT_N * 4);
    g.sort_values_out = dev_alloc(SORT_N * 4);

    /* temps sized by the library, each its own (one temp shared by every call would serve as well: calls on one
     * stream use it in turn) */
    pscan_scan_desc scan = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    pscan_reduce_desc reduce = {PSCAN_TYPE_I64, PSCAN_OP_SUM, PSCAN_ALGO_AUTO, NULL};
    pscan_select_desc s32 = select_desc(PSCAN_TYPE_I32, &zero32), s64 = select_desc(PSCAN_TYPE_I64, &zero64);
    pscan_expand_desc expand = {PSCAN_TYPE_U32, PSCAN_TYPE_U32, 0, PSCAN_ALGO_AUTO};
    pscan_sort_desc sort = {PSCAN_TYPE_U32, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
    PSCAN_OK(pscan_scan_temp_bytes(ctx, &scan, SCAN_N, &g.temp_bytes[0]));
    PSCAN_OK(pscan_reduce_temp_bytes(ctx, &reduce, REDUCE_N, &g.temp_bytes[1]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s32, COOP_N, &g.temp_bytes[2]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s64, COUNTED_N, &g.temp_bytes[3]));
    PSCAN_OK(pscan_select_temp_bytes(ctx, &s32, SELECT_N, &g.temp_bytes[4]));
    PSCAN_OK(pscan_expand_temp_bytes(ctx, &expand, EXPAND_N, EXPAND_CAP, &g.temp_bytes[5]));
    PSCAN_OK(pscan_sort_temp_bytes(ctx, &sort, SORT_N, &g.temp_bytes[6]));
    for (int k = 0; k < 7; k++) g.temp[k] = dev_alloc(g.temp_bytes[k]);

    const uint64_t most = SCAN_N > COUNTED_N ? (SCAN_N > REDUCE_N ? SCAN_N : REDUCE_N) : COUNTED_N;
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
    for (int k = 0; k < 7; k++)
        if (g.temp_bytes[k] > shared_bytes) shared_bytes = g.temp_bytes[k];
    void *shared = dev_alloc(shared_bytes), *own[7];
    memcpy(own, g.temp, sizeof own);
    for (int mode = 0; mode < 2; mode++) {
        if (mode == 1)
            for (int k = 0; k < 7; k++) g.temp[k] = shared;
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
    for (int k = 0; k < 7; k++) CUDA_OK(cudaFree(own[k]));
    CUDA_OK(cudaFree(shared));

    pscan_context_destroy(ctx);
    CUDA_OK(cudaStreamDestroy(stream));
    printf("test_cuda_graph: %ld replays each of two %zu-node graphs (scan, reduce, two partitions, select, expand, "
           "sort; own temps, then one shared temp), %d failures\n", rounds, nodes, failures);
    return failures ? 1 : 0;
}
