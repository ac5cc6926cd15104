/*
 * tune_userop.c - user operators (issue 13): the first call of a new operator taken apart, and user-operator scans
 * against a device copy of the same bytes and against CUB's scan with the same operator as a C++ functor.
 *
 *   tune_userop [--backend cuda] [--log2 28] [--reps 25] [--variants 0|1] [--nvrtc-option OPT]
 *   tune_userop --compile ARCH        (no GPU: NVRTC compile times and ptxas figures of every variant, sm_ARCH)
 *
 * 1. The first call of a new operator, in order, each timed alone (host wall clock):
 *      context      pscan_context_create (CUDA context creation: not the operator's cost)
 *      built-in     the first built-in scan of 1024 elements (the library's own modules load)
 *      create 1     the first pscan_operator_create in the process: NVRTC's first use (its builtins library
 *                   loaded) + the compile + cudaLibraryLoadData + cudaLibraryGetKernel/cudaFuncSetAttribute
 *      launch 1     the first scan with it (1024 elements, synchronized: lazy kernel load + launch)
 *      launch 2     the second one (a warm launch)
 *      first call   create 1 + launch 1: issue 13's target, under 1 s
 *      compile      the same compile alone, warm (sm_90): as create does it (five programs on five threads,
 *                   PS_USER_COMPILE_PARALLEL) and as one program; create 1 - compile = NVRTC's first use + the
 *                   load
 *      create 2     pscan_operator_create of a second, new source (warm NVRTC), and create 3 of the first
 *                   source again (the context's cache)
 * 2. For the affine f32 pair (8 bytes) and a 2x2 f32 matrix (16 bytes): the median time of an inclusive scan
 *    and of pscan_memory_copy over n elements, effective GB/s ((read + written) / time) and the scan's fraction
 *    of copy; the built-in f32 sum through the user path (a 4-byte user operator) against pscan_scan's sum.
 * 3. --variants 1 (the default on CUDA): the vector scan program's policies for 16-byte (and 8-byte) user
 *    elements (user_op.cu, ps_cuda_user_tune_scan: vectors per thread, blocks per SM, cp.async, thread-serial
 *    BLOCKED), each compiled, checked exactly against a serial reference (the inputs are elements of a finite
 *    group: the 8 symmetries of the square as 2x2 matrices, and affine maps x -> +-x + {-1, 0, 1}, so every
 *    product is exact in f32 whatever the order of evaluation), timed beside the copy; then CUB's
 *    DeviceScan::InclusiveScan with the same combine as a functor (tune_userop_cub.cu), checked and timed.
 *    One line per variant, "variant" lines parseable: name, bytes, vecs, blocks, async, blocked, ms, fraction
 *    of copy, against CUB, check.
 * --nvrtc-option OPT: one more NVRTC option for every operator compiled (CUDA), e.g. --Ofast-compile=min, which
 * took the NVRTC time of the affine pair's five kernels from 0.87 to 0.54 s on a 2-core CI machine (warp by warp,
 * 64 KiB tiles; NVVM's optimizer is 60% of it, ptxas 38%, the front end 4%). Timed on the H200 (seventeenth
 * session): the first call 0.789 -> 0.523 s, but the scans 6-8% slower (affine 0.899 -> 0.845 of copy): not taken.
 * Times are host wall clock around pscan_context_synchronize, one call at a time (each call is milliseconds
 * at 2^28, so the launch and the synchronize are in the noise; no L2 flush: 2^28 x 8 bytes is 40x the L2).
 * Built by the tune_userop target (CUDA on: links the static library for the internal tuning entries, and
 * tune_userop_cub.cu for CUB).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "pscan.h"

#ifdef TUNE_USEROP_CUDA
/* src/cuda/user_op.cu: internal, for tuning */
pscan_status ps_cuda_user_compile(const char *source, const char *type_name, const char *combine_name, size_t bytes,
                                  size_t align, const unsigned char *identity, int arch, char **cubin,
                                  size_t *cubin_bytes, char *lowered[3], char **log);
void ps_cuda_user_tune_scan(size_t elem_bytes, int vecs, int min_blocks, int async, int blocked);
void ps_cuda_user_tune_option(const char *extra_option);
pscan_status ps_cuda_user_compile_jobs(const char *source, const char *type_name, const char *combine_name,
                                       size_t bytes, size_t align, const unsigned char *identity, int arch,
                                       int parallel);
/* tune_userop_cub.cu: CUB's inclusive scan of n 2x2 f32 matrices (16 bytes each) or affine pairs (8 bytes):
 * the median seconds of reps calls (after two warm-ups); the last call's output stays in out. 0 on success. */
int tune_userop_cub(int bytes, const void *in, void *out, unsigned long long n, int reps, double *seconds);
/* tune_userop_cub.cu: zeroes bytes of device memory and waits for the device. 0 on success. */
int tune_userop_clear(void *p, size_t bytes);
#endif

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

#ifdef TUNE_USEROP_CUDA /* the compile timings: CUDA only */
/* CPU seconds of the whole process (every thread): the compile's work, apart from the machine's load. */
static double cpu_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}
#endif

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

static const char affine_src[] = "typedef struct { float a, b; } affine;\n"
                                 "affine combine(affine x, affine y) { affine r; r.a = y.a * x.a; "
                                 "r.b = fmaf(y.a, x.b, y.b); return r; }\n";
static const char matrix_src[] =
    "typedef struct { float m[4]; } mat2;\n"
    "mat2 mul(mat2 x, mat2 y) { mat2 r;\n"
    "  r.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2]; r.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];\n"
    "  r.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2]; r.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];\n"
    "  return r; }\n";
static const char sum_src[] = "typedef float f32;\nf32 add(f32 x, f32 y) { return x + y; }\n";
static const float affine_id[2] = {1, 0}, matrix_id[4] = {1, 0, 0, 1}, sum_id[1] = {0};

#ifdef TUNE_USEROP_CUDA
/* The host combines of the variants' checks (the same expressions as the sources). */
static void matrix_mul(const float *x, const float *y, float *r) {
    r[0] = x[0] * y[0] + x[1] * y[2], r[1] = x[0] * y[1] + x[1] * y[3];
    r[2] = x[2] * y[0] + x[3] * y[2], r[3] = x[2] * y[1] + x[3] * y[3];
}
static void affine_combine(const float *x, const float *y, float *r) { r[0] = y[0] * x[0], r[1] = y[0] * x[1] + y[1]; }
#endif

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

#ifdef TUNE_USEROP_CUDA /* the variants and their checks: CUDA only */
/* ---- the variants of the vector scan program for user elements ------------------------------------------- */

struct variant {
    const char *name;
    int bytes, vecs, min_blocks, async, blocked;
};
/* A variant sets both of the scan's tiers (user_op.cu), so it runs at every n. The first of each size is today's
 * lower tier ("default"), the v13.b4 blocked ones the upper tier's (from 16 MiB). Tiles: 16 x vecs x 256 bytes, parked in
 * shared memory (static up to 48 KiB a block, dynamic past it), vecs x min_blocks <= 55 for 227 KiB an SM;
 * registers a thread 65536 / (256 min_blocks), rounded down to 8: 48 at 5 blocks, 64 at 4, 40 at 6, 32 at 8.
 * BLOCKED swizzles even vector counts and leaves odd ones as they are (ps_scan_program::chunk_swizzle). */
static const struct variant variants[] = {
    {"m16.v10.b4.async.blocked (default)", 16, 10, 4, 1, 1},
    {"a8.v8.b5.async.blocked (default)", 8, 8, 5, 1, 1},
    /* the upper tier until the nineteenth session (64 KiB at 3 blocks/SM, 192 KiB an SM) and the other 192-216 KiB
     * ones timed before: H200, 2^28, of copy (sixteenth session, docs/bench/h200-userop-v16-28.txt): a8 v12.b4
     * 0.898, v16.b3 0.899, v18.b3 0.901, v16.b3 striped 0.914 (compiles in about 1 s); m16 v12.b4 0.878, v16.b3
     * 0.891, v18.b3 0.893. 8-vector variants at 4-5 blocks and without cp.async (0.58-0.82) are in the same file
     * and were dropped from here. */
    {"m16.v16.b3.async.blocked", 16, 16, 3, 1, 1},
    {"m16.v18.b3.async.blocked", 16, 18, 3, 1, 1},
    {"a8.v16.b3.async.blocked", 8, 16, 3, 1, 1},
    {"a8.v18.b3.async.blocked", 8, 18, 3, 1, 1},
    {"a8.v16.b3.async", 8, 16, 3, 1, 0},
    /* odd vector counts, BLOCKED since the nineteenth session (unswizzled): more bytes an SM than 192 KiB with
     * the blocked program's registers, 208 KiB (13 x 4, the built-in scan's large tile: the upper tier since the
     * nineteenth session) and 220 KiB (11 x 5) */
    {"m16.v13.b4.async.blocked", 16, 13, 4, 1, 1},
    {"m16.v11.b5.async.blocked", 16, 11, 5, 1, 1},
    {"a8.v13.b4.async.blocked", 8, 13, 4, 1, 1},
    {"a8.v11.b5.async.blocked", 8, 11, 5, 1, 1},
    {"a8.v9.b6.async.blocked", 8, 9, 6, 1, 1},
};
#define VARIANTS (int)(sizeof variants / sizeof variants[0])

/* --compile ARCH: every variant's program compiled by NVRTC with -Xptxas=-v (no GPU); times and ptxas lines. */
static int compile_only(int arch) {
    static const unsigned char ident[16] = {0};
    printf("tune_userop --compile %d: NVRTC compile times (wall clock, this machine) and ptxas figures\n", arch);
    /* what pscan_operator_create compiles: one program with the five kernels, or five on five threads */
    for (int r = 0; r < 3; r++)
        for (int m = 0; m < 2; m++)
            for (int parallel = 0; parallel < 2; parallel++) {
                const double t0 = now_s(), c0 = cpu_s();
                const pscan_status s = ps_cuda_user_compile_jobs(m ? matrix_src : affine_src, m ? "mat2" : "affine",
                                                                 m ? "mul" : "combine", m ? 16 : 8, 4, ident, arch,
                                                                 parallel);
                const double wall = now_s() - t0, cpu = cpu_s() - c0;
                printf("create's compile, %s, %-31s wall %.3f s, cpu %.3f s  %s%s\n", m ? "2x2 matrix" : "affine    ",
                       parallel ? "five programs on five threads " : "one program, five kernels", wall, cpu,
                       pscan_status_name(s), r == 0 && m == 0 && parallel == 0 ? " (NVRTC's first use)" : "");
                if (s != PSCAN_SUCCESS) return 1;
            }
    for (int pass = 1; pass < 2; pass++) { /* every variant with ptxas -v */
        for (int i = 0; i < VARIANTS; i++) {
            const struct variant *v = &variants[pass == 0 ? 0 : i];
            const int m = v->bytes == 16;
            if (pass == 1) ps_cuda_user_tune_scan((size_t)v->bytes, v->vecs, v->min_blocks, v->async, v->blocked);
            ps_cuda_user_tune_option(pass == 1 ? "-Xptxas=-v" : NULL);
            char *cubin = NULL, *log = NULL, *lowered[3];
            size_t cubin_bytes = 0;
            const double t0 = now_s();
            const pscan_status s = ps_cuda_user_compile(m ? matrix_src : affine_src, m ? "mat2" : "affine",
                                                        m ? "mul" : "combine", (size_t)v->bytes, 4, ident, arch,
                                                        &cubin, &cubin_bytes, lowered, &log);
            const double t = now_s() - t0;
            printf("%s %-28s compile %.3f s  %s, cubin %zu bytes\n", pass == 0 ? "default" : "variant", v->name, t,
                   pscan_status_name(s), cubin_bytes);
            if (pass == 1 && log) { /* ptxas -v: one "Used N registers" line per kernel, after its name */
                for (char *line = strtok(log, "\n"); line; line = strtok(NULL, "\n"))
                    if (strstr(line, "Compiling entry") || strstr(line, "Used") || strstr(line, "spill"))
                        printf("    %s\n", line);
            }
            if (s == PSCAN_SUCCESS)
                for (int k = 0; k < 3; k++) free(lowered[k]);
            free(cubin);
            free(log);
            ps_cuda_user_tune_scan((size_t)v->bytes, 0, 0, 0, 0);
            ps_cuda_user_tune_option(NULL);
            if (s != PSCAN_SUCCESS) return 1;
        }
    }
    return 0;
}

/* Inputs of exact products: the 8 symmetries of the square (16 bytes) or maps x -> +-x + {-1, 0, 1} (8 bytes). */
static void make_inputs(float *h, uint64_t n, int bytes) {
    static const float d4[8][4] = {{1, 0, 0, 1},  {0, -1, 1, 0}, {-1, 0, 0, -1}, {0, 1, -1, 0},
                                   {1, 0, 0, -1}, {0, 1, 1, 0},  {-1, 0, 0, 1},  {0, -1, -1, 0}};
    unsigned long long z = 0x9E3779B97F4A7C15ull;
    for (uint64_t i = 0; i < n; i++) {
        z ^= z << 13, z ^= z >> 7, z ^= z << 17;
        if (bytes == 16)
            memcpy(h + 4 * i, d4[z % 8], 16);
        else
            h[2 * i] = (z & 1) ? 1.0f : -1.0f, h[2 * i + 1] = (float)((int)((z >> 1) % 3) - 1);
    }
}

/* The serial inclusive scan of the inputs. */
static void reference(const float *h, float *ref, uint64_t n, int bytes) {
    const int w = bytes / 4;
    memcpy(ref, h, (size_t)bytes);
    for (uint64_t i = 1; i < n; i++) {
        if (w == 4)
            matrix_mul(ref + 4 * (i - 1), h + 4 * i, ref + 4 * i);
        else
            affine_combine(ref + 2 * (i - 1), h + 2 * i, ref + 2 * i);
    }
}

/* The first index where got differs from ref (as floats: -0 == 0), or n. */
static uint64_t first_difference(const float *got, const float *ref, uint64_t n, int bytes) {
    const uint64_t words = n * (uint64_t)(bytes / 4);
    for (uint64_t i = 0; i < words; i++)
        if (got[i] != ref[i]) return i / (uint64_t)(bytes / 4);
    return n;
}

/* A variant's scan at sizes around its tile, forward and reverse, inclusive and exclusive, and (8 bytes) one
 * element off the 16-byte alignment: the partial tile, the mirrored tile and the element-by-element path, which
 * the timed full tiles do not reach. h holds at least 2^20 + 4 inputs. The failures. */
static int check_variant(const struct variant *v, const pscan_operator *op, const float *h, void *in, void *out) {
    const uint64_t tile = (uint64_t)(16 / v->bytes) * (uint64_t)v->vecs * 256u;
    const uint64_t sizes[] = {1, tile - 1, tile, tile + 1, 5 * tile + 7, (1u << 20) + 3};
    const int w = v->bytes / 4;
    const uint64_t most = (1u << 20) + 4;
    float *ref = (float *)malloc(most * 16), *got = (float *)malloc(most * 16);
    int failures = 0;
    CHECK(pscan_memory_upload(ctx, in, h, most * (uint64_t)v->bytes));
    for (int s = 0; s < (int)(sizeof sizes / sizeof sizes[0]); s++)
        for (int flags = 0; flags < 4; flags++)
            for (int off = 0; off < (v->bytes == 8 ? 2 : 1); off++) {
                const uint64_t m = sizes[s];
                const float *src = h + off * w;
                /* the reference: scan order forward or reverse, init = identity in front */
                float acc[4], t[4];
                memcpy(acc, v->bytes == 16 ? matrix_id : affine_id, (size_t)v->bytes);
                for (uint64_t k = 0; k < m; k++) {
                    const uint64_t i = (flags & PSCAN_SCAN_REVERSE) ? m - 1 - k : k;
                    if (flags & PSCAN_SCAN_EXCLUSIVE) memcpy(ref + i * w, acc, (size_t)v->bytes);
                    if (w == 4)
                        matrix_mul(acc, src + i * w, t);
                    else
                        affine_combine(acc, src + i * w, t);
                    memcpy(acc, t, (size_t)v->bytes);
                    if (!(flags & PSCAN_SCAN_EXCLUSIVE)) memcpy(ref + i * w, acc, (size_t)v->bytes);
                }
                if (tune_userop_clear(out, (m + 1) * (uint64_t)v->bytes)) exit(1);
                pscan_scan_desc desc = {PSCAN_TYPE_F32, PSCAN_OP_SUM, (unsigned)flags, PSCAN_ALGO_AUTO, NULL};
                CHECK(pscan_scan_user(ctx, &desc, op, (const char *)in + off * v->bytes,
                                      (char *)out + off * v->bytes, m, NULL, 0));
                CHECK(pscan_memory_download(ctx, got, (const char *)out + off * v->bytes, m * (uint64_t)v->bytes));
                CHECK(pscan_context_synchronize(ctx));
                const uint64_t bad = first_difference(got, ref, m, v->bytes);
                if (bad != m) {
                    if (failures++ < 4)
                        printf("# %s: n=%llu flags=%d misaligned=%d: first wrong element %llu\n", v->name,
                               (unsigned long long)m, flags, off, (unsigned long long)bad);
                }
            }
    free(ref), free(got);
    return failures;
}
#endif

static int run_variants(uint64_t n, int reps) {
#ifdef TUNE_USEROP_CUDA
    int failures = 0;
    const uint64_t check_n = (1u << 20) + 4, hn = n > check_n ? n : check_n; /* check_variant's sizes */
    float *h = (float *)malloc(hn * 16), *ref = (float *)malloc(n * 16), *got = (float *)malloc(n * 16);
    void *in = NULL, *out = NULL, *check_in = NULL, *check_out = NULL;
    CHECK(pscan_memory_alloc(ctx, n * 16, &in));
    CHECK(pscan_memory_alloc(ctx, n * 16, &out));
    CHECK(pscan_memory_alloc(ctx, check_n * 16, &check_in));
    CHECK(pscan_memory_alloc(ctx, check_n * 16, &check_out));
    printf("# variant,name,bytes,vecs,min_blocks,async,blocked,compile_s,scan_ms,copy_ms,fraction_of_copy,vs_cub,check\n");
    for (int bytes = 16; bytes >= 8; bytes -= 8) {
        make_inputs(h, hn, bytes);
        reference(h, ref, n, bytes);
        CHECK(pscan_memory_upload(ctx, in, h, n * (uint64_t)bytes));
        const double copy = time_median(NULL, 1, in, out, n, (size_t)bytes, reps);
        double cub = 0;
        CHECK(pscan_context_synchronize(ctx));
        const int cub_rc = tune_userop_clear(out, n * (uint64_t)bytes) || tune_userop_cub(bytes, in, out, n, reps, &cub);
        uint64_t bad = n;
        if (cub_rc == 0) {
            CHECK(pscan_memory_download(ctx, got, out, n * (uint64_t)bytes));
            CHECK(pscan_context_synchronize(ctx));
            bad = first_difference(got, ref, n, bytes);
        }
        printf("variant,cub.%s,%d,,,,,,%.4f,%.4f,%.3f,1.000,%s\n", bytes == 16 ? "mat2" : "affine", bytes, 1e3 * cub,
               1e3 * copy, cub > 0 ? copy / cub : 0.0, cub_rc ? "CUB FAILED" : bad == n ? "ok" : "WRONG");
        failures += cub_rc != 0 || bad != n;
        for (int i = 0; i < VARIANTS; i++) {
            const struct variant *v = &variants[i];
            if (v->bytes != bytes) continue;
            ps_cuda_user_tune_scan((size_t)bytes, v->vecs, v->min_blocks, v->async, v->blocked);
            pscan_user_op_desc d = {(size_t)bytes, 4, bytes == 16 ? (const void *)matrix_id : (const void *)affine_id,
                                    bytes == 16 ? matrix_src : affine_src, bytes == 16 ? "mat2" : "affine",
                                    bytes == 16 ? "mul" : "combine", NULL, NULL};
            pscan_operator *op = NULL;
            const double t0 = now_s();
            const pscan_status cs = pscan_operator_create(ctx, &d, &op);
            const double compile = now_s() - t0;
            ps_cuda_user_tune_scan((size_t)bytes, 0, 0, 0, 0);
            if (cs != PSCAN_SUCCESS) {
                printf("variant,%s,%d,%d,%d,%d,%d,,,,,,BUILD %s\n", v->name, bytes, v->vecs, v->min_blocks, v->async,
                       v->blocked, pscan_status_name(cs));
                failures++;
                continue;
            }
            const int small_failures = check_variant(v, op, h, check_in, check_out);
            failures += small_failures != 0;
            CHECK(pscan_context_synchronize(ctx));
            if (tune_userop_clear(out, n * (uint64_t)bytes)) exit(1);
            const double scan = time_median(op, 0, in, out, n, (size_t)bytes, reps);
            CHECK(pscan_memory_download(ctx, got, out, n * (uint64_t)bytes));
            CHECK(pscan_context_synchronize(ctx));
            bad = first_difference(got, ref, n, bytes);
            char check[96] = "ok";
            if (bad != n) snprintf(check, sizeof check, "WRONG at %llu", (unsigned long long)bad);
            if (small_failures) snprintf(check + strlen(check), sizeof check - strlen(check),
                                         " small sizes: %d WRONG", small_failures);
            failures += bad != n;
            printf("variant,%s,%d,%d,%d,%d,%d,%.3f,%.4f,%.4f,%.3f,%.3f,%s\n", v->name, bytes, v->vecs, v->min_blocks,
                   v->async, v->blocked, compile, 1e3 * scan, 1e3 * copy, copy / scan, cub > 0 ? cub / scan : 0.0,
                   check);
            fflush(stdout);
            pscan_operator_destroy(op);
        }
    }
    pscan_memory_free(ctx, in);
    pscan_memory_free(ctx, out);
    pscan_memory_free(ctx, check_in);
    pscan_memory_free(ctx, check_out);
    free(h), free(ref), free(got);
    return failures;
#else
    (void)n, (void)reps;
    return 0;
#endif
}

int main(int argc, char **argv) {
    pscan_backend backend = PSCAN_BACKEND_CUDA;
    int log2n = 28, reps = 25, with_variants = 1;
    const char *nvrtc_option = NULL;
    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--backend") == 0) pscan_backend_parse(argv[i + 1], &backend);
        if (strcmp(argv[i], "--log2") == 0) log2n = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--reps") == 0) reps = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--variants") == 0) with_variants = atoi(argv[i + 1]);
        if (strcmp(argv[i], "--nvrtc-option") == 0) nvrtc_option = argv[i + 1];
        if (strcmp(argv[i], "--compile") == 0) {
#ifdef TUNE_USEROP_CUDA
            return compile_only(atoi(argv[i + 1]));
#else
            printf("tune_userop: built without CUDA\n");
            return 77;
#endif
        }
    }
#ifdef TUNE_USEROP_CUDA
    if (nvrtc_option) {
        ps_cuda_user_tune_option(nvrtc_option);
        printf("tune_userop: every operator compiled with NVRTC option %s\n", nvrtc_option);
    }
#else
    if (nvrtc_option) printf("tune_userop: built without CUDA, --nvrtc-option ignored\n");
#endif
    /* ---- 1. the first call of a new operator, taken apart ---- */
    double t0 = now_s();
    if (pscan_context_create(backend, &ctx) != PSCAN_SUCCESS) {
        printf("tune_userop: no %s device\n", pscan_backend_name(backend));
        return 77;
    }
    const double t_context = now_s() - t0;
    char name[256];
    pscan_context_device_name(ctx, name, sizeof name);
    printf("tune_userop: %s\n", name);
    const uint64_t n = 1ull << log2n;
    void *small_in = NULL, *small_out = NULL;
    CHECK(pscan_memory_alloc(ctx, 1024 * 16, &small_in));
    CHECK(pscan_memory_alloc(ctx, 1024 * 16, &small_out));
    static const float zeros[1024 * 4];
    CHECK(pscan_memory_upload(ctx, small_in, zeros, sizeof zeros));
    pscan_scan_desc desc = {PSCAN_TYPE_F32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    CHECK(pscan_context_synchronize(ctx));
    t0 = now_s();
    CHECK(pscan_scan(ctx, &desc, small_in, small_out, 1024, NULL, 0));
    CHECK(pscan_context_synchronize(ctx));
    const double t_builtin = now_s() - t0;

    pscan_user_op_desc d = {8, 4, affine_id, affine_src, "affine", "combine", NULL, NULL};
    pscan_operator *affine = NULL, *again = NULL, *matrix = NULL, *sum = NULL;
    t0 = now_s();
    CHECK(pscan_operator_create(ctx, &d, &affine));
    const double t_create1 = now_s() - t0;
    t0 = now_s();
    CHECK(pscan_scan_user(ctx, &desc, affine, small_in, small_out, 512, NULL, 0));
    CHECK(pscan_context_synchronize(ctx));
    const double t_launch1 = now_s() - t0;
    t0 = now_s();
    CHECK(pscan_scan_user(ctx, &desc, affine, small_in, small_out, 512, NULL, 0));
    CHECK(pscan_context_synchronize(ctx));
    const double t_launch2 = now_s() - t0;
    printf("first call: context %.3f s (not the operator's), first built-in scan %.3f s, "
           "operator_create (first NVRTC use + compile + load) %.3f s, first launch %.4f s, second launch %.6f s\n",
           t_context, t_builtin, t_create1, t_launch1, t_launch2);
    printf("first call of a new operator (create + first launch): %.3f s (target < 1 s)\n", t_create1 + t_launch1);
#ifdef TUNE_USEROP_CUDA
    if (backend == PSCAN_BACKEND_CUDA) {
        /* what create 1 compiled, again, without the load: five programs on five threads (create's way,
         * PS_USER_COMPILE_PARALLEL) and one program with the five kernels */
        static const unsigned char ident[8] = {0};
        for (int parallel = 1; parallel >= 0; parallel--) {
            t0 = now_s();
            CHECK(ps_cuda_user_compile_jobs(affine_src, "affine", "combine", 8, 4, ident, 90, parallel));
            printf("compile alone (NVRTC, warm, sm_90), %s: %.3f s\n",
                   parallel ? "five programs on five threads" : "one program", now_s() - t0);
        }
    }
#endif
    t0 = now_s();
    pscan_user_op_desc dm = {16, 4, matrix_id, matrix_src, "mat2", "mul", NULL, NULL};
    CHECK(pscan_operator_create(ctx, &dm, &matrix));
    const double t_create2 = now_s() - t0;
    t0 = now_s();
    CHECK(pscan_operator_create(ctx, &d, &again));
    const double t_create3 = now_s() - t0;
    printf("operator_create: a second new source (warm NVRTC) %.3f s, the first source again (cached) %.6f s\n",
           t_create2, t_create3);
    pscan_user_op_desc ds = {4, 4, sum_id, sum_src, "f32", "add", NULL, NULL};
    CHECK(pscan_operator_create(ctx, &ds, &sum));
    pscan_memory_free(ctx, small_in);
    pscan_memory_free(ctx, small_out);

    /* ---- 2. the default programs against a copy ---- */
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

    /* ---- 3. the variants, checked, beside the copy and CUB ---- */
    int failures = 0;
    if (with_variants && backend == PSCAN_BACKEND_CUDA) failures = run_variants(n, reps);
    pscan_context_destroy(ctx);
    if (failures) printf("tune_userop: %d variant(s) FAILED\n", failures);
    return failures ? 1 : 0;
}
