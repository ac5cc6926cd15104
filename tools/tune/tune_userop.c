/*
 * tune_userop.c - times a user-operator scan against a device copy of the same bytes, through the public API
 * only, on any backend (CUDA is what it is for: issue 13's target is copy speed for the 8-byte affine map).
 *
 *   tune_userop [--backend cuda] [--log2 28] [--reps 25]
 *
 * Prints the compile time of the first pscan_operator_create (NVRTC), the second one (the context's cache),
 * then for the affine f32 pair (8 bytes) and a 2x2 f32 matrix (16 bytes): the median time of an inclusive scan
 * and of pscan_memory_copy over n elements, effective GB/s ((read + written) / time) and the scan's fraction of
 * copy; also the built-in f32 sum through the user path (a 4-byte user operator) against pscan_scan's sum.
 * Times are host wall clock around pscan_context_synchronize, one call at a time (each call is milliseconds
 * at 2^28, so the launch and the synchronize are in the noise; no L2 flush: 2^28 x 8 bytes is 40x the L2).
 * Build: cc -O2 tools/tune/tune_userop.c -Iinclude build/libpscan.a -lcudart -lnvrtc -lstdc++ -lm -lpthread
 * (or the tune_userop target when CUDA is on).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pscan.h"

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        pscan_status s_ = (call);                                                                            \
        if (s_ != PSCAN_SUCCESS) {                                                                           \
            const char *log_ = "";                                                                           \
            pscan_context_build_log(ctx, &log_);                                                             \
            fprintf(stderr, "%s: %s\n%s\n", #call, pscan_status_name(s_), log_);                             \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static pscan_context *ctx;

/* Median seconds of reps calls: a scan with op (or the built-in f32 sum when op is NULL), or a copy. */
static double time_median(const pscan_operator *op, int copy, void *in, void *out, uint64_t n, size_t es, int reps) {
    double *t = (double *)malloc(sizeof(double) * (size_t)reps);
    pscan_scan_desc desc = {PSCAN_TYPE_F32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    for (int r = -2; r < reps; r++) { /* two warm-up calls */
        CHECK(pscan_context_synchronize(ctx));
        const double t0 = now_s();
        if (copy)
            CHECK(pscan_memory_copy(ctx, out, in, n * es));
        else if (op)
            CHECK(pscan_scan_user(ctx, &desc, op, in, out, n, NULL, 0));
        else
            CHECK(pscan_scan(ctx, &desc, in, out, n, NULL, 0));
        CHECK(pscan_context_synchronize(ctx));
        if (r >= 0) t[r] = now_s() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    const double m = t[reps / 2];
    free(t);
    return m;
}

static void report(const char *name, const pscan_operator *op, void *in, void *out, uint64_t n, size_t es, int reps) {
    const double scan = time_median(op, 0, in, out, n, es, reps), copy = time_median(NULL, 1, in, out, n, es, reps);
    const double gb = 2.0 * (double)n * (double)es / 1e9;
    printf("%-28s n=2^%-2d scan %8.3f ms %7.1f GB/s   copy %8.3f ms %7.1f GB/s   fraction of copy %.3f\n", name,
           __builtin_ctzll(n), 1e3 * scan, gb / scan, 1e3 * copy, gb / copy, copy / scan);
}

int main(int argc, char **argv) {
    pscan_backend backend = PSCAN_BACKEND_CUDA;
    int log2n = 28, reps = 25;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0) pscan_backend_parse(argv[i + 1], &backend);
        if (strcmp(argv[i], "--log2") == 0) log2n = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
    }
    if (pscan_context_create(backend, &ctx) != PSCAN_SUCCESS) {
        printf("tune_userop: no %s device\n", pscan_backend_name(backend));
        return 77;
    }
    char name[256];
    pscan_context_device_name(ctx, name, sizeof name);
    printf("tune_userop: %s\n", name);
    const uint64_t n = 1ull << log2n;

    static const char affine_src[] = "typedef struct { float a, b; } affine;\n"
                                     "affine combine(affine x, affine y) { affine r; r.a = y.a * x.a; "
                                     "r.b = fmaf(y.a, x.b, y.b); return r; }\n";
    static const char matrix_src[] = "typedef struct { float m[4]; } mat2;\n"
                                     "mat2 mul(mat2 x, mat2 y) { mat2 r;\n"
                                     "  r.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2]; r.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];\n"
                                     "  r.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2]; r.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];\n"
                                     "  return r; }\n";
    static const char sum_src[] = "typedef float f32;\nf32 add(f32 x, f32 y) { return x + y; }\n";
    const float affine_id[2] = {1, 0}, matrix_id[4] = {1, 0, 0, 1}, sum_id[1] = {0};
    pscan_user_op_desc d = {8, 4, affine_id, affine_src, "affine", "combine", NULL, NULL};
    pscan_operator *affine = NULL, *again = NULL, *matrix = NULL, *sum = NULL;
    double t0 = now_s();
    CHECK(pscan_operator_create(ctx, &d, &affine));
    const double first = now_s() - t0;
    t0 = now_s();
    CHECK(pscan_operator_create(ctx, &d, &again));
    const double second = now_s() - t0;
    printf("operator_create: first (NVRTC) %.3f s, second (cached) %.6f s\n", first, second);
    pscan_user_op_desc dm = {16, 4, matrix_id, matrix_src, "mat2", "mul", NULL, NULL};
    CHECK(pscan_operator_create(ctx, &dm, &matrix));
    pscan_user_op_desc ds = {4, 4, sum_id, sum_src, "f32", "add", NULL, NULL};
    CHECK(pscan_operator_create(ctx, &ds, &sum));

    void *in = NULL, *out = NULL;
    CHECK(pscan_memory_alloc(ctx, n * 16, &in));
    CHECK(pscan_memory_alloc(ctx, n * 16, &out));
    /* inputs: all ones (as floats the maps x -> x + 1 and the identity matrix... values do not matter for time) */
    float *host = (float *)calloc(n * 4, sizeof(float));
    for (uint64_t i = 0; i < n * 4; i++) host[i] = 1.0f;
    CHECK(pscan_memory_upload(ctx, in, host, n * 16));
    free(host);
    report("affine f32 (8 bytes)", affine, in, out, n, 8, reps);
    report("2x2 f32 matrix (16 bytes)", matrix, in, out, n, 16, reps);
    report("f32 sum, user operator", sum, in, out, n, 4, reps);
    report("f32 sum, built-in", NULL, in, out, n, 4, reps);
    pscan_memory_free(ctx, in);
    pscan_memory_free(ctx, out);
    pscan_operator_destroy(affine), pscan_operator_destroy(again), pscan_operator_destroy(matrix);
    pscan_operator_destroy(sum);
    pscan_context_destroy(ctx);
    return 0;
}
