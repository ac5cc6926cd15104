/*
 * bench_nccl.c - issue 15's multi-GPU speed table: pscan_nccl_scan_group over G GPUs of this host, each holding
 * n elements, against one GPU's pscan_scan of n elements (the scaling) and a device-to-device copy (the floor).
 *
 *   bench_nccl [--log2 L (30)] [--reps R (20)] [--type i32|i64] [--csv FILE]
 *
 * Per G = 1 .. every GPU: one NCCL communicator per GPU (ncclCommInitAll), one pscan CUDA context per GPU on its
 * own stream, n = 2^L random elements per GPU (a random block of 2^24 copied over the slice). Timing: host wall
 * clock around one call with every stream synchronized before and after (a multi-GPU call has no single
 * stream for CUDA events), median of R after 3 warm-ups; the single-GPU rows on GPU 0 use CUDA events. No L2
 * flush is needed: a slice (4 GiB at 2^30 i32) is 80x the L2.
 *
 * What bounds the scaling: GPU g cannot write one final element before the totals of slices 0..g-1 are known,
 * and those need every element of them read. So each GPU reads its slice once for its total (pscan_reduce),
 * then scans it (read + write): 3 passes where one GPU's scan of n elements makes 2. With the reduce at the
 * copy's per-byte speed, G GPUs of n each take about 1.5x one GPU's scan of n: scaling <= G / 1.5 (the
 * `bound` column: G x scan / (scan + reduce), both measured). A cross-GPU look-back would not help: GPU g's
 * first tile would wait for GPU g-1's last.
 *
 * Output: one line per G (time, G x n / time as elements/s, scaling against one GPU's scan, the bound) and a
 * check of each GPU's first and last output against sums computed here; --csv writes rows in the columns of
 * `pscan bench --csv` (algo copy, scan (one GPU) and nccl-scan-G; of_copy = copy time / time, n = all elements).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cuda_runtime_api.h>

#include "pscan_nccl.h"
#include "test_common.h" /* the rng and the timing helpers the benchmarks share */

#define MAX_GPUS 8
#define BLOCK_LOG2 24

#define CK(call)                                                                                                  \
    do {                                                                                                          \
        cudaError_t e_ = (call);                                                                                  \
        if (e_ != cudaSuccess) {                                                                                  \
            fprintf(stderr, "bench_nccl: %s: %s (line %d)\n", #call, cudaGetErrorString(e_), __LINE__);          \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)
#define PK(call)                                                                                                  \
    do {                                                                                                          \
        pscan_status s_ = (call);                                                                                 \
        if (s_ != PSCAN_SUCCESS) {                                                                                \
            fprintf(stderr, "bench_nccl: %s: %s (line %d)\n", #call, pscan_status_name(s_), __LINE__);           \
            exit(1);                                                                                              \
        }                                                                                                         \
    } while (0)

typedef struct gpu {
    cudaStream_t stream;
    pscan_context *ctx;
    void *in, *out;
} gpu;

static FILE *csv;
static const char *device_name;

static void csv_row(const char *algo, const char *type, uint64_t n_all, double seconds, size_t elem, double copy_s,
                    double spread) {
    if (!csv) return;
    fprintf(csv, "cuda,\"%s\",%s,%s,sum,inclusive,forward,%llu,%.3f,%.3f,%.4f,,,0,%.4f,nccl-scan\n", device_name,
            algo, type, (unsigned long long)n_all, seconds * 1e6, 2.0 * (double)n_all * (double)elem / seconds * 1e-9,
            copy_s / seconds, spread);
}

/* One GPU's copy, scan and reduce of n elements on GPU 0, timed with events. */
static void single_gpu(gpu *g, const pscan_scan_desc *d, uint64_t n, size_t elem, int reps, double *copy_s,
                       double *scan_s, double *reduce_s, double spreads[3]) {
    const pscan_reduce_desc rd = {d->type, d->op, PSCAN_ALGO_AUTO, NULL};
    void *slot = NULL;
    CK(cudaSetDevice(0));
    CK(cudaMalloc(&slot, 256));
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    double *res[3] = {copy_s, scan_s, reduce_s};
    for (int what = 0; what < 3; what++) {
        for (int r = -3; r < reps; r++) {
            CK(cudaEventRecord(a, g->stream));
            if (what == 0) CK(cudaMemcpyAsync(g->out, g->in, n * elem, cudaMemcpyDeviceToDevice, g->stream));
            if (what == 1) PK(pscan_scan(g->ctx, d, g->in, g->out, n, NULL, 0));
            if (what == 2) PK(pscan_reduce(g->ctx, &rd, g->in, n, slot, NULL, 0));
            CK(cudaEventRecord(b, g->stream));
            CK(cudaEventSynchronize(b));
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, a, b));
            if (r >= 0) t[r] = ms * 1e-3;
        }
        *res[what] = test_median_spread(t, reps, &spreads[what]);
    }
    free(t);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
    cudaFree(slot);
}

int main(int argc, char **argv) {
    int log2n = 30, reps = 20, wide = 0;
    const char *csv_path = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--log2") == 0 && i + 1 < argc) {
            log2n = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) {
            reps = atoi(argv[++i]);
        } else if (strcmp(argv[i], "--type") == 0 && i + 1 < argc) {
            wide = strcmp(argv[++i], "i64") == 0;
        } else if (strcmp(argv[i], "--csv") == 0 && i + 1 < argc) {
            csv_path = argv[++i];
        } else {
            fprintf(stderr, "usage: bench_nccl [--log2 L] [--reps R] [--type i32|i64] [--csv FILE]\n");
            return 2;
        }
    }
    if (log2n < BLOCK_LOG2 || log2n > 34 || reps < 5) {
        fprintf(stderr, "bench_nccl: --log2 between %d and 34, --reps at least 5\n", BLOCK_LOG2);
        return 2;
    }
    int count = 0;
    if (cudaGetDeviceCount(&count) != cudaSuccess || count < 1) {
        printf("bench_nccl: SKIP: no CUDA device\n");
        return 77;
    }
    if (count > MAX_GPUS) count = MAX_GPUS;
    struct cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    device_name = prop.name;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            perror(csv_path);
            return 2;
        }
        fprintf(csv, "backend,device,algo,type,op,kind,direction,n,time_us,gbps,of_copy,of_cub,cub_time_us,in_place,"
                     "spread,primitive\n");
    }
    const uint64_t n = (uint64_t)1 << log2n, block = (uint64_t)1 << BLOCK_LOG2;
    const size_t elem = wide ? 8 : 4;
    const char *tname = wide ? "i64" : "i32";
    const pscan_scan_desc d = {wide ? PSCAN_TYPE_I64 : PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};

    /* the random block every slice repeats, and the sums that check each GPU's first and last output */
    unsigned char *host = (unsigned char *)malloc(block * elem);
    uint64_t block_sum = 0;
    for (uint64_t i = 0; i < block; i++) {
        const uint64_t v = test_mix64(i);
        if (wide) {
            const int64_t x = (int64_t)(v >> 40); /* 2^34 elements of < 2^24: no signed overflow */
            memcpy(host + i * 8, &x, 8);
            block_sum += (uint64_t)x;
        } else {
            const int32_t x = (int32_t)(uint32_t)v;
            memcpy(host + i * 4, &x, 4);
            block_sum += (uint64_t)(int64_t)x;
        }
    }
    const uint64_t slice_sum = block_sum * (n / block);

    gpu g[MAX_GPUS];
    memset(g, 0, sizeof g);
    for (int k = 0; k < count; k++) {
        CK(cudaSetDevice(k));
        CK(cudaStreamCreateWithFlags(&g[k].stream, cudaStreamNonBlocking));
        PK(pscan_cuda_context_create(g[k].stream, &g[k].ctx));
        CK(cudaMalloc(&g[k].in, n * elem));
        CK(cudaMalloc(&g[k].out, n * elem));
        for (uint64_t at = 0; at < n; at += block)
            CK(cudaMemcpy((char *)g[k].in + at * elem, host, block * elem, cudaMemcpyHostToDevice));
    }
    printf("bench_nccl: %d x %s, %s sum inclusive, 2^%d elements per GPU, median of %d\n", count, prop.name, tname,
           log2n, reps);

    double copy_s = 0, scan_s = 0, reduce_s = 0, sp[3];
    single_gpu(&g[0], &d, n, elem, reps, &copy_s, &scan_s, &reduce_s, sp);
    printf("one GPU: copy %.1f us (spread %.3f), scan %.1f us (%.3f of copy, spread %.3f), reduce %.1f us "
           "(%.3f of copy's time)\n",
           copy_s * 1e6, sp[0], scan_s * 1e6, copy_s / scan_s, sp[1], reduce_s * 1e6, reduce_s / copy_s);
    csv_row("copy", tname, n, copy_s, elem, copy_s, sp[0]);
    csv_row("scan", tname, n, scan_s, elem, copy_s, sp[1]);

    int failed = 0;
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    for (int G = 1; G <= count; G++) {
        ncclComm_t comms[MAX_GPUS];
        int devs[MAX_GPUS];
        for (int k = 0; k < G; k++) devs[k] = k;
        ncclResult_t r = ncclCommInitAll(comms, G, devs);
        if (r != ncclSuccess) {
            fprintf(stderr, "bench_nccl: ncclCommInitAll(%d): %s\n", G, ncclGetErrorString(r));
            return 1;
        }
        pscan_context *ctxs[MAX_GPUS];
        const void *ins[MAX_GPUS];
        void *outs[MAX_GPUS];
        uint64_t ns[MAX_GPUS];
        for (int k = 0; k < G; k++) {
            ctxs[k] = g[k].ctx;
            ins[k] = g[k].in;
            outs[k] = g[k].out;
            ns[k] = n;
            CK(cudaSetDevice(k));
            CK(cudaMemsetAsync(g[k].out, 0, n * elem, g[k].stream));
        }
        for (int rep = -3; rep < reps; rep++) {
            for (int k = 0; k < G; k++) CK(cudaStreamSynchronize(g[k].stream));
            const double t0 = test_now_seconds();
            PK(pscan_nccl_scan_group(G, ctxs, comms, &d, ins, outs, ns, NULL, NULL));
            for (int k = 0; k < G; k++) CK(cudaStreamSynchronize(g[k].stream));
            if (rep >= 0) t[rep] = test_now_seconds() - t0;
        }
        double spread = 0;
        const double tg = test_median_spread(t, reps, &spread);
        /* GPU k's first output is everything before it plus the block's first element; its last, k + 1 slices */
        for (int k = 0; k < G; k++) {
            unsigned char first[8] = {0}, last[8] = {0};
            CK(cudaSetDevice(k));
            CK(cudaMemcpy(first, g[k].out, elem, cudaMemcpyDeviceToHost));
            CK(cudaMemcpy(last, (char *)g[k].out + (n - 1) * elem, elem, cudaMemcpyDeviceToHost));
            uint64_t want_first = slice_sum * (uint64_t)k, want_last = slice_sum * (uint64_t)(k + 1), got_f, got_l;
            if (wide) {
                int64_t x0, f, l;
                memcpy(&x0, host, 8);
                memcpy(&f, first, 8);
                memcpy(&l, last, 8);
                want_first += (uint64_t)x0;
                got_f = (uint64_t)f;
                got_l = (uint64_t)l;
            } else {
                int32_t x0, f, l;
                memcpy(&x0, host, 4);
                memcpy(&f, first, 4);
                memcpy(&l, last, 4);
                want_first = (uint32_t)(want_first + (uint64_t)(int64_t)x0);
                want_last = (uint32_t)want_last;
                got_f = (uint32_t)f;
                got_l = (uint32_t)l;
            }
            if (got_f != want_first || got_l != want_last) {
                printf("bench_nccl: FAIL: G=%d GPU %d first/last output wrong\n", G, k);
                failed = 1;
            }
        }
        const double scaling = G * scan_s / tg, bound = G * scan_s / (scan_s + reduce_s);
        printf("G=%d: %.1f us (spread %.3f), %.2f Gelem/s, scaling %.3f x one GPU (%.3f of G), bound %.3f (%.3f "
               "of G)%s\n",
               G, tg * 1e6, spread, (double)G * (double)n / tg * 1e-9, scaling, scaling / G, bound, bound / G,
               failed ? "" : ", outputs checked");
        char algo[32];
        snprintf(algo, sizeof algo, "nccl-scan-%d", G);
        csv_row(algo, tname, n * (uint64_t)G, tg, elem, copy_s, spread); /* the copy runs on every GPU at once */
        for (int k = 0; k < G; k++) ncclCommDestroy(comms[k]);
    }
    for (int k = 0; k < count; k++) {
        CK(cudaSetDevice(k));
        pscan_context_destroy(g[k].ctx);
        cudaFree(g[k].in);
        cudaFree(g[k].out);
        cudaStreamDestroy(g[k].stream);
    }
    free(t);
    free(host);
    if (csv) fclose(csv);
    return failed;
}
