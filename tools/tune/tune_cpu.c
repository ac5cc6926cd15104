/*
 * tune_cpu.c - the CPU backend's threaded scan (src/cpu/cpu_threads.c) in each of its variants, beside the
 * all-core copy, in one run (issue 8: THREADS must reach 0.9 of copy for i32 and i64 on 16 cores).
 *
 *   tune_cpu [--min-log2 22] [--max-log2 28] [--reps 21] [--threads N]   (sizes: 2^10 .. 2^31)
 *   tune_cpu --check        (correctness of every variant against SERIAL; exit 0 or 1; a ctest)
 *
 * The variants are run-time settings of the knobs in ps_cpu_scan_tune (cpu_backend.h), so one binary times
 * them all; each is the library's code, only the knobs differ:
 *   before:chains/static  the scan before issue 8's change: scalar kernels, four interleaved chains per block,
 *                         block b always thread b % T's;
 *   vector                AVX2 block kernels (cpu_vector.c): one vectorised reduce, one in-register scan per
 *                         block; blocks taken from a shared counter (dynamic);
 *   vector+stream         the same, the output written with non-temporal stores at every size;
 *   vector+stream/static  ... with the static block deal of before;
 *   vector+stream/128K, /512K   ... with 128 KiB / 512 KiB blocks instead of 256 KiB;
 *   default               what the library does when nobody touches the knobs.
 * Part 1 times one thread on one block that stays in L2 (the per-thread compute speed: a core must sustain
 * about copy / threads GB/s with both passes for the scan to keep up with the copy). Part 2 times all threads
 * on n = 2^min .. 2^max cold elements: every call takes the next window of a 2^max-element arena (1-2 GiB,
 * larger than any L3), so no call finds its data in cache; the copy (ps_cpu_threads_copy on a pool of the
 * context's size: always all cores, whatever the machine's load says; on 2026-11-23 pscan_memory_copy, which
 * decides by the load, fell back to one core at some sizes and made this floor useless) and the variants take turns within each repeat, back to back (the pool's workers stay
 * awake); the median of --reps is reported. Part 3 repeats 2^24 with 20 ms of idle before every call (copy
 * included), so the workers have gone to sleep and each call pays their wake-up: what `pscan bench` measures
 * for THREADS, which it times right after SERIAL (its copy follows THREADS and finds them awake).
 * GB/s = 2 n sizeof(T) / time; of_copy = GB/s / copy's GB/s.
 *
 * Build and run (CPU only, about a minute on 16 cores):
 *   cmake -S . -B build-tune -G Ninja -DPSCAN_CUDA=OFF -DPSCAN_OPENCL=OFF -DPSCAN_MPI=OFF -DPSCAN_TESTS=OFF
 *   ninja -C build-tune tune_cpu && build-tune/tools/tune_cpu
 * To change the library's default, edit PSCAN_CPU_BLOCK_BYTES, PSCAN_CPU_VECTOR or PSCAN_CPU_STREAM_MIN_BYTES
 * at the top of src/cpu/cpu_threads.c (one line each).
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_backend.h" /* ps_cpu_scan_tune, ps_cpu_vector_get: internal, this tool links the static library */
#include "pscan.h"

#define NEVER UINT64_MAX

/* The variants: X(name, block bytes, vector, stream_min_bytes, dynamic). */
#define TUNE_VARIANT_LIST(X)                                                                                 \
    X("before:chains/static", 256u << 10, 0, NEVER, 0)                                                       \
    X("vector", 256u << 10, 1, NEVER, 1)                                                                     \
    X("vector+stream", 256u << 10, 1, 0, 1)                                                                  \
    X("vector+stream/static", 256u << 10, 1, 0, 0)                                                           \
    X("vector+stream/128K", 128u << 10, 1, 0, 1)                                                             \
    X("vector+stream/512K", 512u << 10, 1, 0, 1)

typedef struct variant {
    const char *name;
    ps_cpu_scan_tuning knobs;
} variant;

#define TUNE_VARIANT_ROW(name, block, vec, stream, dyn) {name, {block, vec, stream, dyn}},
static variant variants[] = {TUNE_VARIANT_LIST(TUNE_VARIANT_ROW){"default", {0, 0, 0, 0}}};
#define VARIANTS ((int)(sizeof variants / sizeof variants[0]))

static pscan_context *ctx;
static ps_cpu_scan_tuning library_default;

#define CHECK(call)                                                                                          \
    do {                                                                                                     \
        pscan_status s_ = (call);                                                                            \
        if (s_ != PSCAN_SUCCESS) {                                                                           \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, pscan_status_name(s_));            \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

static double now_s(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *t, int count) {
    qsort(t, (size_t)count, sizeof *t, cmp_double);
    return count % 2 ? t[count / 2] : 0.5 * (t[count / 2 - 1] + t[count / 2]);
}

static int same_knobs(const ps_cpu_scan_tuning *a, const ps_cpu_scan_tuning *b) {
    return a->block_bytes == b->block_bytes && a->vector == b->vector && a->stream_min_bytes == b->stream_min_bytes &&
           a->dynamic == b->dynamic;
}

static void fill_random(void *p, size_t bytes, uint64_t seed) {
    uint64_t x = seed * 0x9E3779B97F4A7C15ull + 1;
    unsigned char *b = (unsigned char *)p;
    size_t i = 0;
    for (; i + 8 <= bytes; i += 8) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        memcpy(b + i, &x, 8);
    }
    for (; i < bytes; i++) b[i] = (unsigned char)i;
}

/* The copy's own pool, as many threads as the context's: the floor is a copy by all cores, never one core. */
static ps_cpu_pool *copy_pool;

/* One inclusive sum scan of n elements with variant v's knobs (v < 0: the copy). */
static void call_one(int v, pscan_type type, const void *in, void *out, uint64_t n, size_t es) {
    if (v < 0) {
        ps_cpu_threads_copy(copy_pool, out, in, n * es);
        return;
    }
    pscan_scan_desc d = {type, PSCAN_OP_SUM, 0, PSCAN_ALGO_THREADS, NULL};
    ps_cpu_scan_tune = variants[v].knobs;
    CHECK(pscan_scan(ctx, &d, in, out, n, NULL, 0));
    ps_cpu_scan_tune = library_default;
}

/* ---- part 1: one thread, one block, from L2 ------------------------------------------------------------ */

static void per_thread(pscan_type type, const char *tname, size_t es, int reps) {
    const uint64_t n = library_default.block_bytes / es; /* one block of the default size */
    void *in = malloc(n * es), *out = malloc(n * es);
    fill_random(in, n * es, 7);
    const int batch = 64;
    double *t = (double *)malloc(sizeof(double) * (size_t)reps * VARIANTS);
    for (int r = -2; r < reps; r++)
        for (int v = 0; v < VARIANTS; v++) {
            const double t0 = now_s();
            for (int b = 0; b < batch; b++) call_one(v, type, in, out, n, es);
            if (r >= 0) t[v * reps + r] = (now_s() - t0) / batch;
        }
    for (int v = 0; v < VARIANTS; v++) {
        const double s = median(t + v * reps, reps);
        printf("  %-4s %-20s %8.2f us %7.1f GB/s\n", tname, variants[v].name, s * 1e6, 2.0 * (double)n * (double)es / s * 1e-9);
    }
    free(t);
    free(in);
    free(out);
}

/* ---- part 2: all threads, cold data -------------------------------------------------------------------- */

typedef struct row {
    double copy_gbps, gbps[16];
} row;

static void all_threads(pscan_type type, const char *tname, size_t es, int min_log2, int max_log2, int reps,
                        int arena_log2, double idle_s, row *rows) {
    const size_t arena = ((size_t)1 << arena_log2) * es;
    unsigned char *in = (unsigned char *)malloc(arena), *out = (unsigned char *)malloc(arena);
    if (!in || !out) {
        fprintf(stderr, "tune_cpu: cannot allocate 2 x %zu bytes\n", arena);
        exit(1);
    }
    fill_random(in, arena, 11);
    memset(out, 0, arena); /* fault the pages in before timing */
    double *t = (double *)malloc(sizeof(double) * (size_t)reps * (VARIANTS + 1));
    for (int k = min_log2; k <= max_log2; k++) {
        const uint64_t n = (uint64_t)1 << k;
        const size_t bytes = (size_t)n * es, windows = arena / bytes;
        size_t w = 0;
        for (int r = -2; r < reps; r++)
            for (int v = -1; v < VARIANTS; v++) { /* -1: the copy */
                const size_t at = (w++ % windows) * bytes;
                if (idle_s > 0) {
                    const struct timespec idle = {0, (long)(idle_s * 1e9)};
                    nanosleep(&idle, NULL);
                }
                const double t0 = now_s();
                call_one(v, type, in + at, out + at, n, es);
                if (r >= 0) t[(v + 1) * reps + r] = now_s() - t0;
            }
        row *rw = &rows[k - min_log2];
        const double traffic = 2.0 * (double)bytes;
        rw->copy_gbps = traffic / median(t, reps) * 1e-9;
        printf("  %-4s 2^%-2d %-20s %8.3f ms %7.1f GB/s\n", tname, k, "copy", traffic / rw->copy_gbps * 1e-6,
               rw->copy_gbps);
        int best = 0;
        for (int v = 0; v < VARIANTS; v++) {
            rw->gbps[v] = traffic / median(t + (v + 1) * reps, reps) * 1e-9;
            if (rw->gbps[v] > rw->gbps[best]) best = v;
        }
        for (int v = 0; v < VARIANTS; v++)
            printf("  %-4s 2^%-2d %-20s %8.3f ms %7.1f GB/s  of_copy %.3f%s\n", tname, k, variants[v].name,
                   traffic / rw->gbps[v] * 1e-6, rw->gbps[v], rw->gbps[v] / rw->copy_gbps, v == best ? "  <- best" : "");
    }
    free(t);
    free(in);
    free(out);
}

/* ---- --check: every variant against SERIAL --------------------------------------------------------------- */

static int check(void) {
    static const pscan_type types[] = {PSCAN_TYPE_I8, PSCAN_TYPE_U16, PSCAN_TYPE_I32, PSCAN_TYPE_U32,
                                       PSCAN_TYPE_I64, PSCAN_TYPE_U64};
    static const size_t type_bytes[] = {1, 2, 4, 4, 8, 8};
    static const pscan_op ops[] = {PSCAN_OP_SUM, PSCAN_OP_OR, PSCAN_OP_XOR, PSCAN_OP_MAX};
    static const uint64_t sizes[] = {1, 2, 31, 33, 1000, 65535, 65537, 262145, 700001};
    static const unsigned pools[] = {2, 3};
    const uint64_t max_n = 700001 + 64;
    unsigned char *in = (unsigned char *)malloc(max_n * 8), *out = (unsigned char *)malloc(max_n * 8 + 64),
                  *ref = (unsigned char *)malloc(max_n * 8);
    int failures = 0, cases = 0;
    fill_random(in, max_n * 8, 3);
    for (size_t p = 0; p < sizeof pools / sizeof pools[0]; p++) {
        CHECK(pscan_context_set_threads(ctx, pools[p]));
        for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++)
            for (size_t oi = 0; oi < sizeof ops / sizeof ops[0]; oi++)
                for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
                    for (unsigned flags = 0; flags < 4; flags++)
                        for (int shift = 0; shift < 3; shift++) { /* output offset (elements); 2: in place */
                            const size_t es = type_bytes[ti];
                            const uint64_t n = sizes[si];
                            const unsigned char init[8] = {5, 1, 2, 3, 4, 5, 6, 7};
                            pscan_scan_desc d = {types[ti], ops[oi], flags, PSCAN_ALGO_SERIAL, init};
                            unsigned char *src = in + (size_t)(si % 3) * es; /* inputs at several alignments */
                            CHECK(pscan_scan(ctx, &d, src, ref, n, NULL, 0));
                            d.algo = PSCAN_ALGO_THREADS;
                            for (int v = 0; v < VARIANTS; v++) {
                                unsigned char *dst = out + (size_t)(shift % 2) * es;
                                if (shift == 2) memcpy(dst, src, n * es); /* in place: a copy scanned onto itself */
                                ps_cpu_scan_tune = variants[v].knobs;
                                CHECK(pscan_scan(ctx, &d, shift == 2 ? dst : src, dst, n, NULL, 0));
                                ps_cpu_scan_tune = library_default;
                                cases++;
                                if (memcmp(dst, ref, n * es) != 0) {
                                    if (failures++ < 20)
                                        printf("FAIL: %s type %s op %s n %llu flags %u shift %d pool %u\n",
                                               variants[v].name, pscan_type_name(types[ti]), pscan_op_name(ops[oi]),
                                               (unsigned long long)n, flags, shift, pools[p]);
                                }
                            }
                        }
    }
    CHECK(pscan_context_set_threads(ctx, 0));
    printf("tune_cpu --check: %d cases, %d failed\n", cases, failures);
    free(in);
    free(out);
    free(ref);
    return failures ? 1 : 0;
}

int main(int argc, char **argv) {
    int min_log2 = 22, max_log2 = 28, reps = 21, do_check = 0;
    long threads = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "--check")) do_check = 1;
        else if (v && !strcmp(a, "--min-log2")) min_log2 = atoi(v), i++;
        else if (v && !strcmp(a, "--max-log2")) max_log2 = atoi(v), i++;
        else if (v && !strcmp(a, "--reps")) reps = atoi(v), i++;
        else if (v && !strcmp(a, "--threads")) threads = atol(v), i++;
        else {
            fprintf(stderr, "usage: tune_cpu [--min-log2 K] [--max-log2 K] [--reps R] [--threads N] | --check\n");
            return 2;
        }
    }
    if (min_log2 < 10 || max_log2 > 31 || min_log2 > max_log2 || max_log2 - min_log2 >= 16 || reps < 1) {
        fprintf(stderr, "tune_cpu: need 10 <= min-log2 <= max-log2 <= 31 (at most 16 sizes), reps >= 1\n");
        return 2;
    }
    library_default = ps_cpu_scan_tune;
    variants[VARIANTS - 1].knobs = library_default;
    CHECK(pscan_context_create(PSCAN_BACKEND_CPU, &ctx));
    if (do_check) return check();
    if (threads > 0) CHECK(pscan_context_set_threads(ctx, (unsigned)threads));

    char name[128], model[256] = "?";
    pscan_context_device_name(ctx, name, sizeof name);
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        char line[512];
        while (fgets(line, sizeof line, f))
            if (!strncmp(line, "model name", 10) && strchr(line, ':')) {
                snprintf(model, sizeof model, "%s", strchr(line, ':') + 2);
                model[strcspn(model, "\n")] = 0;
                break;
            }
        fclose(f);
    }
    const int avx2 = ps_cpu_vector_get(PSCAN_TYPE_I32, PSCAN_OP_SUM) != NULL;
    printf("tune_cpu: %s, %s; AVX2 kernels %s; L3 %ld KiB (sysconf); reps %d (median)\n", name, model,
           avx2 ? "available" : "NOT available (vector rows run the chains)", sysconf(_SC_LEVEL3_CACHE_SIZE) >> 10,
           reps);
    printf("library default (src/cpu/cpu_threads.c): block %u KiB, vector %d, dynamic %d, stream from %s",
           library_default.block_bytes >> 10, library_default.vector, library_default.dynamic,
           library_default.stream_min_bytes == NEVER ? "never" : "");
    if (library_default.stream_min_bytes != NEVER)
        printf("%llu MiB of output", (unsigned long long)(library_default.stream_min_bytes >> 20));
    printf("\nvariants: before = issue 8's starting point (scalar chains, static blocks); vector = AVX2 block "
           "kernels, dynamic blocks; +stream = non-temporal stores at every size; /static = static blocks; /128K, "
           "/512K = block size; default = the library as built\n");
    for (int v = 0; v + 1 < VARIANTS; v++)
        if (same_knobs(&variants[v].knobs, &library_default)) printf("default = %s\n", variants[v].name);

    printf("\n== part 1: one thread, one %u KiB block in L2 (inclusive sum; the per-thread speed of both\n"
           "   passes; +stream rows write to DRAM around the cache, so they show one core's streaming-store rate)\n",
           library_default.block_bytes >> 10);
    CHECK(pscan_context_set_threads(ctx, 1));
    per_thread(PSCAN_TYPE_I32, "i32", 4, reps);
    per_thread(PSCAN_TYPE_I64, "i64", 8, reps);
    CHECK(pscan_context_set_threads(ctx, (unsigned)threads));
    {
        char pool_name[128];
        unsigned copy_threads = 1;
        CHECK(pscan_context_device_name(ctx, pool_name, sizeof pool_name));
        if (sscanf(pool_name, "CPU: %u", &copy_threads) != 1 || copy_threads == 0) copy_threads = 1;
        CHECK(ps_cpu_pool_create(copy_threads, &copy_pool));
    }

    printf("\n== part 2: all threads, cold data (windows of a 2^%d-element arena), inclusive sum, GB/s = 2 n "
           "sizeof(T) / time\n",
           max_log2);
    row rows[2][16], idle_rows[2][1];
    all_threads(PSCAN_TYPE_I32, "i32", 4, min_log2, max_log2, reps, max_log2, 0, rows[0]);
    all_threads(PSCAN_TYPE_I64, "i64", 8, min_log2, max_log2, reps, max_log2, 0, rows[1]);
    const int idle_log2 = max_log2 < 24 ? max_log2 : 24;
    printf("\n== part 3: 2^%d after 20 ms idle before every call (the workers asleep: each call pays their wake-up)\n",
           idle_log2);
    all_threads(PSCAN_TYPE_I32, "i32", 4, idle_log2, idle_log2, reps, max_log2, 0.02, idle_rows[0]);
    all_threads(PSCAN_TYPE_I64, "i64", 8, idle_log2, idle_log2, reps, max_log2, 0.02, idle_rows[1]);

    printf("\n== summary: of_copy per size (target >= 0.90 everywhere), worst over 2^%d..2^%d\n", min_log2, max_log2);
    for (int ty = 0; ty < 2; ty++) {
        printf("  %-4s %-20s", ty ? "i64" : "i32", "variant");
        for (int k = min_log2; k <= max_log2; k++) printf("   2^%-2d", k);
        printf("   worst   idle 2^%d\n", idle_log2);
        for (int v = 0; v < VARIANTS; v++) {
            double worst = 1e9;
            printf("  %-4s %-20s", ty ? "i64" : "i32", variants[v].name);
            for (int k = min_log2; k <= max_log2; k++) {
                const row *rw = &rows[ty][k - min_log2];
                const double f = rw->gbps[v] / rw->copy_gbps;
                if (f < worst) worst = f;
                printf("  %5.3f", f);
            }
            printf("  %5.3f   %5.3f\n", worst, idle_rows[ty][0].gbps[v] / idle_rows[ty][0].copy_gbps);
        }
    }
    unsigned pool = 1;
    pscan_context_device_name(ctx, name, sizeof name);
    if (sscanf(name, "CPU: %u", &pool) != 1 || pool == 0) pool = 1;
    printf("\nper-thread need: the copy at 2^%d over the pool's %u threads = %.1f GB/s (i32), %.1f GB/s (i64); the "
           "part 1 rows without +stream must be well above it\n",
           max_log2, pool, rows[0][max_log2 - min_log2].copy_gbps / pool, rows[1][max_log2 - min_log2].copy_gbps / pool);
    printf("to make another variant the default, change its knob in src/cpu/cpu_threads.c: PSCAN_CPU_VECTOR (0/1), "
           "PSCAN_CPU_STREAM_MIN_BYTES (UINT64_MAX: never), PSCAN_CPU_DYNAMIC (0/1), PSCAN_CPU_BLOCK_BYTES\n");
    pscan_context_destroy(ctx);
    ps_cpu_pool_destroy(copy_pool);
    return 0;
}
