/*
 * test_userop.c - user operators (pscan_operator_create, pscan_scan_user, pscan_reduce_user) and linear
 * recurrences (pscan_recurrence, pscan_recurrence2), read as a specification.
 *
 *   test_userop --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]
 *
 * Operators chosen so that any reordering shows (none of them commutes) and every result is exact:
 *   affine   x -> a x + b over u32 (wrapping), 8 bytes: the composition of maps, earlier applied first;
 *   matrix   2x2 u32 matrices mod 65521, 16 bytes: the ordered product;
 *   argmax   (f32 value, u32 index), 8 bytes: the largest value, the earlier index on ties;
 *   affine16 the same over u16 pairs, 4 bytes (alignment 2);
 *   affine8  the same over u8 pairs, 2 bytes (alignment 1), its source in uint8_t (given on every backend);
 *   window K the last K ids of the concatenation (a count and K u32 ids), 4 + 4K bytes for K = 2, 5, 7:
 *            element sizes 12, 24 and 32 ("keep the right operand" is K = 1's shape);
 *   aff64    x -> a x + b over u64 with a count of maps composed, 24 bytes, alignment 8;
 *   mat64    2x2 u64 matrices mod 65521, 32 bytes, alignment 16 (__attribute__((aligned(16))) in the source: CUDA and OpenCL C both take it).
 * Each is checked against a serial loop written here, for scans (inclusive and exclusive, forward and
 * reverse, identity or init, in place and not) and reduces, at sizes around the CUDA tiles (2048-8192 elements)
 * and the look-back window (64 tiles), and at the CPU's per-thread blocks. Outputs beyond the scanned range
 * carry a sentinel that must survive. Bad inputs return their exact status and leave outputs untouched.
 *
 * Per backend: the CPU runs every operator through its host function; CUDA compiles each operator's source
 * with NVRTC (every size: 1, 2, 4, 8 and 16 bytes on the vector programs, 12, 24 and 32 on the wide ones) and
 * OpenCL builds it as OpenCL C (every size); on both a source that does not compile must be
 * PSCAN_ERROR_BUILD_FAILED with a non-empty log, and creating the same operator twice must reuse the module or
 * program (OpenCL, static library: the backend's build counter must not move). The sources are written by the
 * rules of docs/api.md for a source every backend compiles (uint64_t, not unsigned long long, ...).
 * Recurrences, first and second order (pscan_recurrence2): f32 and f64, forward and reverse, initial state or 0,
 * y == a, b or c in place, 16-byte aligned arrays and arrays one element off, at sizes around the CUDA tiles
 * (1024-4096 elements) and the look-back window, against a long double loop: |y - ref| <= tol (1 + |ref|) with
 * tol = 256 eps (1 + log2(n + 1)), eps the type's epsilon (coefficients keep errors from growing along the
 * chain, see the cases); bad inputs with their status and y untouched, on every backend (OpenCL: the sizes around
 * its 2048- and 1024-element tiles too; arrays one element off and overlapping ranges only where handles are
 * addresses). Polynomial evaluation (pscan_polyval, Horner's rule as the
 * recurrence with a = x): every Horner prefix against a long double Horner loop, the same tolerance, both
 * coefficient orders, in place or not, the pscan.h example, bad inputs.
 *
 * Exit status: 0 all passed, 1 any failure, 77 (skip) when the backend is not compiled in or has no device.
 */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#ifdef PSCAN_TEST_OPENCL_HOOKS
/* The OpenCL backend's count of user-operator program builds (opencl_user.c; static library only). */
pscan_status ps_opencl_debug_user_builds(const pscan_context *ctx, unsigned *builds);
#endif

#ifdef PSCAN_TEST_CUDA_HOOKS
/* The CUDA backend's scan policy for user operators of a vector size (user_op.cu; static library only). */
void ps_cuda_user_tune_scan(size_t elem_bytes, int vecs, int min_blocks, int async, int blocked);
#endif

#define MAX_REPORTS 20
#define SENTINEL 0xA5
#define GUARD 64 /* bytes past the output that must keep the sentinel */

static int passed, failed;
static pscan_context *ctx;
static pscan_backend backend;
static pscan_algo algo = PSCAN_ALGO_AUTO;
static int quick;
static uint64_t seed = 20261122;

#define CHECK(cond, ...)                                                                                     \
    do {                                                                                                     \
        if (cond) {                                                                                          \
            passed++;                                                                                        \
        } else {                                                                                             \
            if (failed++ < MAX_REPORTS) {                                                                    \
                printf("FAIL %s:%d: ", __FILE__, __LINE__);                                                  \
                printf(__VA_ARGS__);                                                                         \
                printf(" (seed %llu)\n", (unsigned long long)seed);                                          \
            }                                                                                                \
        }                                                                                                    \
    } while (0)

/* ---- the operators: C source for the GPU, the same function for the host ------------------------------- */

typedef struct affine {
    uint32_t a, b;
} affine;
static void affine_host(const void *x_, const void *y_, void *out, void *user) {
    const affine *x = (const affine *)x_, *y = (const affine *)y_;
    affine r = {y->a * x->a, y->a * x->b + y->b};
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char affine_source[] =
    "typedef struct { unsigned int a, b; } affine;\n"
    "affine combine(affine x, affine y) { affine r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; return r; }\n";

#define PRIME 65521u
typedef struct matrix {
    uint32_t m[4]; /* row-major */
} matrix;
static void matrix_host(const void *x_, const void *y_, void *out, void *user) {
    const matrix *x = (const matrix *)x_, *y = (const matrix *)y_;
    matrix r;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            r.m[2 * i + j] = (uint32_t)(((uint64_t)x->m[2 * i] * y->m[j] + (uint64_t)x->m[2 * i + 1] * y->m[2 + j]) % PRIME);
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char matrix_source[] =
    "typedef struct { unsigned int m[4]; } mat2;\n"
    "mat2 mul(mat2 x, mat2 y) {\n"
    "    mat2 r;\n"
    "    for (int i = 0; i < 2; i++)\n"
    "        for (int j = 0; j < 2; j++)\n"
    "            r.m[2 * i + j] = (unsigned int)(((uint64_t)x.m[2 * i] * y.m[j] +\n"
    "                                             (uint64_t)x.m[2 * i + 1] * y.m[2 + j]) % 65521u);\n"
    "    return r;\n"
    "}\n";

typedef struct argmax {
    float v;
    uint32_t i;
} argmax;
static void argmax_host(const void *x_, const void *y_, void *out, void *user) {
    const argmax *x = (const argmax *)x_, *y = (const argmax *)y_;
    (void)user;
    memcpy(out, y->v > x->v ? y : x, sizeof(argmax));
}
static const char argmax_source[] =
    "typedef struct { float v; unsigned int i; } argmax;\n"
    "argmax keep_max(argmax x, argmax y) { return y.v > x.v ? y : x; }\n";

typedef struct affine16 {
    uint16_t a, b;
} affine16;
static void affine16_host(const void *x_, const void *y_, void *out, void *user) {
    const affine16 *x = (const affine16 *)x_, *y = (const affine16 *)y_;
    affine16 r = {(uint16_t)(y->a * x->a), (uint16_t)(y->a * x->b + y->b)};
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char affine16_source[] =
    "typedef struct { unsigned short a, b; } affine16;\n"
    "affine16 compose(affine16 x, affine16 y) {\n"
    "    affine16 r; r.a = (unsigned short)(y.a * x.a); r.b = (unsigned short)(y.a * x.b + y.b); return r;\n"
    "}\n";

typedef struct aff64 {
    uint64_t a, b, calls;
} aff64;
static void aff64_host(const void *x_, const void *y_, void *out, void *user) {
    const aff64 *x = (const aff64 *)x_, *y = (const aff64 *)y_;
    aff64 r = {y->a * x->a, y->a * x->b + y->b, x->calls + y->calls};
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char aff64_source[] = "typedef struct { uint64_t a, b, calls; } aff64;\n"
                                   "aff64 compose64(aff64 x, aff64 y) {\n"
                                   "    aff64 r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; r.calls = x.calls + y.calls;\n"
                                   "    return r;\n"
                                   "}\n";

typedef struct mat64 {
    uint64_t m[4]; /* row-major, entries < PRIME */
} mat64;
static void mat64_host(const void *x_, const void *y_, void *out, void *user) {
    const mat64 *x = (const mat64 *)x_, *y = (const mat64 *)y_;
    mat64 r;
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) r.m[2 * i + j] = (x->m[2 * i] * y->m[j] + x->m[2 * i + 1] * y->m[2 + j]) % PRIME;
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char mat64_source[] =
    "typedef struct __attribute__((aligned(16))) { uint64_t m[4]; } mat64;\n"
    "mat64 mul64(mat64 x, mat64 y) {\n"
    "    mat64 r;\n"
    "    for (int i = 0; i < 2; i++)\n"
    "        for (int j = 0; j < 2; j++) r.m[2 * i + j] = (x.m[2 * i] * y.m[j] + x.m[2 * i + 1] * y.m[2 + j]) % (uint64_t)65521;\n"
    "    return r;\n"
    "}\n";

typedef struct affine8 {
    uint8_t a, b;
} affine8;
static void affine8_host(const void *x_, const void *y_, void *out, void *user) {
    const affine8 *x = (const affine8 *)x_, *y = (const affine8 *)y_;
    affine8 r = {(uint8_t)(y->a * x->a), (uint8_t)(y->a * x->b + y->b)};
    (void)user;
    memcpy(out, &r, sizeof r);
}
static const char affine8_source[] =
    "typedef struct { uint8_t a, b; } affine8;\n"
    "affine8 compose8(affine8 x, affine8 y) {\n"
    "    affine8 r; r.a = (uint8_t)(y.a * x.a); r.b = (uint8_t)(y.a * x.b + y.b); return r;\n"
    "}\n";

/* window K: count (<= K) and the last count ids, oldest first. */
#define WINDOW_MAX 7
typedef struct window {
    uint32_t count, ids[WINDOW_MAX];
} window;
static void window_host(const void *x_, const void *y_, void *out, void *user) {
    const uint32_t k = (uint32_t)(uintptr_t)user;
    window x, y, r;
    memset(&x, 0, sizeof x), memset(&y, 0, sizeof y), memset(&r, 0, sizeof r);
    memcpy(&x, x_, 4 + 4 * k), memcpy(&y, y_, 4 + 4 * k);
    uint32_t all[2 * WINDOW_MAX], c = 0;
    for (uint32_t i = 0; i < x.count; i++) all[c++] = x.ids[i];
    for (uint32_t i = 0; i < y.count; i++) all[c++] = y.ids[i];
    r.count = c < k ? c : k;
    for (uint32_t i = 0; i < r.count; i++) r.ids[i] = all[c - r.count + i];
    memcpy(out, &r, 4 + 4 * k);
}
/* The same in C for the device, K pasted in. */
static void window_source(uint32_t k, char *buf, size_t bytes) {
    snprintf(buf, bytes,
             "typedef struct { unsigned int count, ids[%u]; } window;\n"
             "window concat(window x, window y) {\n"
             "    unsigned int all[%u], c = 0;\n"
             "    for (unsigned int i = 0; i < x.count; i++) all[c++] = x.ids[i];\n"
             "    for (unsigned int i = 0; i < y.count; i++) all[c++] = y.ids[i];\n"
             "    window r; r.count = c < %uu ? c : %uu;\n"
             "    for (unsigned int i = 0; i < %u; i++) r.ids[i] = i < r.count ? all[c - r.count + i] : 0u;\n"
             "    return r;\n"
             "}\n",
             k, 2 * k, k, k, k);
}

typedef struct op_case {
    const char *name;
    size_t bytes, align;
    void (*host)(const void *, const void *, void *, void *);
    uint32_t window_k; /* window operators: K; also their user pointer */
    int is_window;
} op_case;

static const op_case op_cases[] = {
    {"affine", sizeof(affine), 4, affine_host, 0, 0},   {"matrix", sizeof(matrix), 4, matrix_host, 0, 0},
    {"argmax", sizeof(argmax), 4, argmax_host, 0, 0},   {"affine16", 4, 2, affine16_host, 0, 0},
    {"affine8", 2, 1, affine8_host, 0, 0},
    {"window2", 12, 4, window_host, 2, 1},              {"window5", 24, 4, window_host, 5, 1},
    {"window7", 32, 4, window_host, 7, 1},              {"aff64", sizeof(aff64), 8, aff64_host, 0, 0},
    {"mat64", sizeof(mat64), 16, mat64_host, 0, 0},
};
#define OP_CASES (sizeof op_cases / sizeof op_cases[0])

/* The identity of each operator, and one random element. */
static void op_identity(const op_case *c, unsigned char *e) {
    memset(e, 0, c->bytes);
    if (strcmp(c->name, "affine") == 0) {
        affine id = {1, 0};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "affine16") == 0) {
        affine16 id = {1, 0};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "affine8") == 0) {
        affine8 id = {1, 0};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "matrix") == 0) {
        matrix id = {{1, 0, 0, 1}};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "argmax") == 0) {
        argmax id = {-INFINITY, 0};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "aff64") == 0) {
        aff64 id = {1, 0, 0};
        memcpy(e, &id, sizeof id);
    } else if (strcmp(c->name, "mat64") == 0) {
        mat64 id = {{1, 0, 0, 1}};
        memcpy(e, &id, sizeof id);
    }
}

static void op_random(const op_case *c, test_rng *r, uint64_t index, unsigned char *e) {
    memset(e, 0, c->bytes);
    if (strcmp(c->name, "affine") == 0) {
        affine x = {(uint32_t)test_rng_next(r) | 1u, (uint32_t)test_rng_next(r)};
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "affine16") == 0) {
        affine16 x = {(uint16_t)(test_rng_next(r) | 1u), (uint16_t)test_rng_next(r)};
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "affine8") == 0) {
        affine8 x = {(uint8_t)(test_rng_next(r) | 1u), (uint8_t)test_rng_next(r)};
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "matrix") == 0) {
        matrix x;
        for (int i = 0; i < 4; i++) x.m[i] = (uint32_t)(test_rng_next(r) % PRIME);
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "argmax") == 0) {
        argmax x = {(float)(test_rng_next(r) % 1000), (uint32_t)index}; /* many ties: the earlier index wins */
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "aff64") == 0) {
        aff64 x = {test_rng_next(r) | 1u, test_rng_next(r), 1};
        memcpy(e, &x, sizeof x);
    } else if (strcmp(c->name, "mat64") == 0) {
        mat64 x;
        for (int i = 0; i < 4; i++) x.m[i] = test_rng_next(r) % PRIME;
        memcpy(e, &x, sizeof x);
    } else {
        window x;
        memset(&x, 0, sizeof x);
        x.count = c->window_k ? (uint32_t)(test_rng_next(r) % 2) : 0;
        /* canonical: ids past count are 0, as every combine leaves them, so that init (+) identity == init bytewise
         * (an exclusive scan's first element is init combined with the identity on CUDA's wide program) */
        x.ids[0] = x.count ? (uint32_t)index : 0u;
        memcpy(e, &x, c->bytes);
    }
}

static int op_create(const op_case *c, int with_host, pscan_operator **op) {
    unsigned char identity[PSCAN_USER_OP_MAX_BYTES];
    char source[1024];
    op_identity(c, identity);
    pscan_user_op_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = c->bytes;
    d.elem_align = c->align;
    d.identity = identity;
    if (c->is_window) {
        window_source(c->window_k, source, sizeof source);
        d.source = source, d.type_name = "window", d.combine_name = "concat";
    } else if (strcmp(c->name, "affine") == 0) {
        d.source = affine_source, d.type_name = "affine", d.combine_name = "combine";
    } else if (strcmp(c->name, "affine16") == 0) {
        d.source = affine16_source, d.type_name = "affine16", d.combine_name = "compose";
    } else if (strcmp(c->name, "affine8") == 0) {
        d.source = affine8_source, d.type_name = "affine8", d.combine_name = "compose8";
    } else if (strcmp(c->name, "matrix") == 0) {
        d.source = matrix_source, d.type_name = "mat2", d.combine_name = "mul";
    } else if (strcmp(c->name, "aff64") == 0) {
        d.source = aff64_source, d.type_name = "aff64", d.combine_name = "compose64";
    } else if (strcmp(c->name, "mat64") == 0) {
        d.source = mat64_source, d.type_name = "mat64", d.combine_name = "mul64";
    } else {
        d.source = argmax_source, d.type_name = "argmax", d.combine_name = "keep_max";
    }
    d.host_combine = with_host ? c->host : NULL;
    d.user = (void *)(uintptr_t)c->window_k;
    return pscan_operator_create(ctx, &d, op);
}

/* What a backend must answer for an operator: CUDA compiles every size (user_op.cu). */
static pscan_status expected_create(const op_case *c) {
    (void)c;
    return PSCAN_SUCCESS;
}

/* ---- scans and reduces against the serial loop ----------------------------------------------------------- */

static void reference_scan(const op_case *c, const unsigned char *in, unsigned char *out, uint64_t n,
                           const unsigned char *init, int exclusive, int reverse) {
    unsigned char acc[PSCAN_USER_OP_MAX_BYTES], r[PSCAN_USER_OP_MAX_BYTES];
    memcpy(acc, init, c->bytes);
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = reverse ? n - 1 - k : k;
        c->host(acc, in + i * c->bytes, r, (void *)(uintptr_t)c->window_k);
        memcpy(out + i * c->bytes, exclusive ? acc : r, c->bytes);
        memcpy(acc, r, c->bytes);
    }
}

static void run_scan_case(const op_case *c, pscan_operator *op, uint64_t n, unsigned flags, int with_init,
                          int in_place, test_rng *rng) {
    const size_t es = c->bytes, bytes = (size_t)n * es;
    unsigned char *in = (unsigned char *)malloc(bytes + 1), *expect = (unsigned char *)malloc(bytes + 1);
    unsigned char *got = (unsigned char *)malloc(bytes + GUARD);
    unsigned char init[PSCAN_USER_OP_MAX_BYTES];
    for (uint64_t i = 0; i < n; i++) op_random(c, rng, i, in + i * es);
    if (with_init)
        op_random(c, rng, 1u << 30, init);
    else
        op_identity(c, init);
    reference_scan(c, in, expect, n, init, (flags & PSCAN_SCAN_EXCLUSIVE) != 0, (flags & PSCAN_SCAN_REVERSE) != 0);

    void *d_in = NULL, *d_out = NULL;
    pscan_memory_alloc(ctx, bytes + GUARD, &d_in);
    pscan_memory_alloc(ctx, bytes + GUARD, &d_out);
    memset(got, SENTINEL, bytes + GUARD);
    pscan_memory_upload(ctx, d_out, got, bytes + GUARD);
    pscan_memory_upload(ctx, in_place ? d_out : d_in, in, bytes);
    pscan_scan_desc desc = {PSCAN_TYPE_U8, PSCAN_OP_SUM, flags, algo, with_init ? init : NULL};
    pscan_status s = pscan_scan_user(ctx, &desc, op, in_place ? d_out : d_in, d_out, n, NULL, 0);
    pscan_memory_download(ctx, got, d_out, bytes + GUARD);
    pscan_context_synchronize(ctx);
    CHECK(s == PSCAN_SUCCESS, "%s scan n=%llu flags=%u: %s", c->name, (unsigned long long)n, flags, pscan_status_name(s));
    uint64_t bad = n;
    for (uint64_t i = 0; i < n && s == PSCAN_SUCCESS; i++)
        if (memcmp(got + i * es, expect + i * es, es) != 0) {
            bad = i;
            break;
        }
    CHECK(bad == n, "%s scan n=%llu flags=%u init=%d in_place=%d: first wrong element %llu", c->name,
          (unsigned long long)n, flags, with_init, in_place, (unsigned long long)bad);
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD; i++) guard_ok &= got[bytes + i] == SENTINEL;
    CHECK(guard_ok, "%s scan n=%llu: wrote past the output", c->name, (unsigned long long)n);
    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    free(in), free(expect), free(got);
}

static void run_reduce_case(const op_case *c, pscan_operator *op, uint64_t n, int with_init, test_rng *rng) {
    const size_t es = c->bytes, bytes = (size_t)n * es;
    unsigned char *in = (unsigned char *)malloc(bytes + 1), *scanned = (unsigned char *)malloc(bytes + 1);
    unsigned char init[PSCAN_USER_OP_MAX_BYTES], expect[PSCAN_USER_OP_MAX_BYTES], got[PSCAN_USER_OP_MAX_BYTES + GUARD];
    for (uint64_t i = 0; i < n; i++) op_random(c, rng, i, in + i * es);
    if (with_init)
        op_random(c, rng, 1u << 30, init);
    else
        op_identity(c, init);
    reference_scan(c, in, scanned, n, init, 0, 0);
    memcpy(expect, n ? scanned + (n - 1) * es : init, es);
    void *d_in = NULL, *d_out = NULL;
    pscan_memory_alloc(ctx, bytes + GUARD, &d_in);
    pscan_memory_alloc(ctx, es + GUARD, &d_out);
    memset(got, SENTINEL, sizeof got);
    pscan_memory_upload(ctx, d_out, got, es + GUARD);
    pscan_memory_upload(ctx, d_in, in, bytes);
    pscan_reduce_desc desc = {PSCAN_TYPE_U8, PSCAN_OP_SUM, algo, with_init ? init : NULL};
    pscan_status s = pscan_reduce_user(ctx, &desc, op, d_in, n, d_out, NULL, 0);
    pscan_memory_download(ctx, got, d_out, es + GUARD);
    pscan_context_synchronize(ctx);
    CHECK(s == PSCAN_SUCCESS && memcmp(got, expect, es) == 0, "%s reduce n=%llu init=%d: %s", c->name,
          (unsigned long long)n, with_init, pscan_status_name(s));
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD; i++) guard_ok &= got[es + i] == SENTINEL;
    CHECK(guard_ok, "%s reduce n=%llu: wrote past the result", c->name, (unsigned long long)n);
    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    free(in), free(scanned);
}

static void run_operator(const op_case *c, test_rng *rng) {
    pscan_operator *op = NULL;
    pscan_status s = op_create(c, 1, &op);
    const pscan_status want = expected_create(c);
    CHECK(s == want, "%s: create returned %s, expected %s", c->name, pscan_status_name(s), pscan_status_name(want));
    if (s != PSCAN_SUCCESS) {
        CHECK(op == NULL, "%s: a failed create left an operator", c->name);
        return;
    }
    /* tiles of the CUDA scan hold 2048 (16-byte), 4096 (8-byte) or 8192 (4-byte) elements, and 1024 for the
     * sizes that do not divide 16 (user_wide.cuh); the look-back window is 64 tiles; the CPU's threads take
     * 256 KiB blocks; OpenCL's tiles are 2048 elements of any size (work-groups of 256 on PoCL and NVIDIA, 8
     * items each: opencl_user.c) */
    const uint64_t tile = backend == PSCAN_BACKEND_OPENCL ? 2048 : 16 % c->bytes == 0 ? 32768 / c->bytes : 1024;
    const uint64_t sizes[] = {0, 1, 2, 31, 1000, tile - 1, tile, tile + 1, 3 * tile + 7, 64 * tile + 3,
                              (256u << 10) / c->bytes * 5 + 11};
    const size_t count = sizeof sizes / sizeof sizes[0] - (quick ? 2 : 0);
    for (size_t i = 0; i < count; i++) {
        for (unsigned flags = 0; flags < 4; flags++)
            run_scan_case(c, op, sizes[i], flags, (int)(flags + i) % 2, (int)(i + flags / 2) % 2, rng);
        run_reduce_case(c, op, sizes[i], (int)i % 2, rng);
    }
    /* CUDA: a call in the scan's larger tier (user_op.cu: from 16 MiB, 32 MiB of 2-byte elements; of 1-byte ones
     * from 256 MiB, not run here), past the look-back window of its tiles of up to 52 KiB and into a partial one (8- and 16-byte elements: 13
     * vectors a thread, BLOCKED, unswizzled) */
    if (backend == PSCAN_BACKEND_CUDA && !quick && 16 % c->bytes == 0 && c->bytes >= 2) {
        const uint64_t n = ((uint64_t)(c->bytes >= 4 ? 16 : 32) << 20) / c->bytes + 64 * (65536 / c->bytes) + 3;
        for (unsigned flags = 0; flags < 4; flags++) run_scan_case(c, op, n, flags, (int)flags % 2, (int)flags / 2, rng);
    }
    /* OpenCL: three levels of tile totals (more than 2048 * 2048 elements), for the small elements */
    if (backend == PSCAN_BACKEND_OPENCL && !quick && c->bytes <= 8) {
        const uint64_t n = 2048u * 2048u + 2048u + 5u;
        run_scan_case(c, op, n, 0, 1, 0, rng);
        run_scan_case(c, op, n, PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE, 0, 1, rng);
        run_reduce_case(c, op, n, 1, rng);
    }
    pscan_operator_destroy(op);
}

/* ---- bad inputs: exact statuses, outputs untouched -------------------------------------------------------- */

static void run_bad_inputs(void) {
    const op_case *c = &op_cases[0]; /* affine */
    unsigned char identity[8];
    op_identity(c, identity);
    pscan_user_op_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = 8, d.elem_align = 4, d.identity = identity;
    d.source = affine_source, d.type_name = "affine", d.combine_name = "combine", d.host_combine = affine_host;
    pscan_operator *op = (pscan_operator *)&d; /* must be set to NULL by a failing create */
    pscan_user_op_desc b;

#define EXPECT_CREATE(status, ...)                                                                           \
    do {                                                                                                     \
        b = d;                                                                                               \
        __VA_ARGS__;                                                                                         \
        op = (pscan_operator *)&d;                                                                           \
        pscan_status s_ = pscan_operator_create(ctx, &b, &op);                                               \
        CHECK(s_ == (status) && (s_ == PSCAN_SUCCESS) == (op != NULL), "create with %s: %s, expected %s", #__VA_ARGS__,                \
              pscan_status_name(s_), pscan_status_name(status));                                            \
    } while (0)

    CHECK(pscan_operator_create(NULL, &d, &op) == PSCAN_ERROR_NULL_POINTER, "create(NULL ctx)");
    CHECK(pscan_operator_create(ctx, NULL, &op) == PSCAN_ERROR_NULL_POINTER, "create(NULL desc)");
    CHECK(pscan_operator_create(ctx, &d, NULL) == PSCAN_ERROR_NULL_POINTER, "create(NULL op)");
    EXPECT_CREATE(PSCAN_ERROR_NULL_POINTER, b.identity = NULL);
    EXPECT_CREATE(PSCAN_ERROR_NULL_POINTER, b.type_name = NULL);
    EXPECT_CREATE(PSCAN_ERROR_NULL_POINTER, b.combine_name = NULL);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_bytes = 0);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_bytes = PSCAN_USER_OP_MAX_BYTES + 1);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_align = 0);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_align = 3);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_align = 32);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.elem_bytes = 12, b.elem_align = 8);
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.type_name = "affine x");
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.combine_name = "1combine");
    EXPECT_CREATE(PSCAN_ERROR_INVALID_VALUE, b.combine_name = "");
    if (backend == PSCAN_BACKEND_CPU) {
        /* the CPU runs the host function only */
        EXPECT_CREATE(PSCAN_ERROR_UNSUPPORTED_OPERATOR, b.host_combine = NULL);
        EXPECT_CREATE(PSCAN_SUCCESS, b.source = NULL, b.type_name = NULL, b.combine_name = NULL);
        pscan_operator_destroy(op);
    } else {
        /* a GPU runs the source only */
        EXPECT_CREATE(PSCAN_ERROR_UNSUPPORTED_OPERATOR, b.source = NULL, b.type_name = NULL, b.combine_name = NULL);
    }

    op = NULL;
    pscan_status s = pscan_operator_create(ctx, &d, &op);
    CHECK(s == PSCAN_SUCCESS && op, "create(affine): %s", pscan_status_name(s));
    if (s != PSCAN_SUCCESS) return;

    /* the calls: outputs untouched on every error */
    enum { N = 100 };
    affine in[N], out[N], sentinel[N];
    for (int i = 0; i < N; i++) in[i].a = (uint32_t)i | 1u, in[i].b = (uint32_t)i;
    memset(sentinel, SENTINEL, sizeof sentinel);
    void *d_in = NULL, *d_out = NULL;
    pscan_memory_alloc(ctx, sizeof in, &d_in);
    pscan_memory_alloc(ctx, sizeof out, &d_out);
    pscan_memory_upload(ctx, d_in, in, sizeof in);
    pscan_memory_upload(ctx, d_out, sentinel, sizeof sentinel);
    pscan_scan_desc sd = {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, algo, NULL};
    pscan_reduce_desc rd = {PSCAN_TYPE_U8, PSCAN_OP_SUM, algo, NULL};
    size_t bytes = 1;
    CHECK(pscan_scan_user(ctx, &sd, NULL, d_in, d_out, N, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "scan_user(NULL op)");
    CHECK(pscan_scan_user(ctx, NULL, op, d_in, d_out, N, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "scan_user(NULL desc)");
    CHECK(pscan_scan_user(ctx, &sd, op, NULL, d_out, N, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "scan_user(NULL in)");
    CHECK(pscan_scan_user_temp_bytes(ctx, &sd, NULL, N, &bytes) == PSCAN_ERROR_NULL_POINTER && bytes == 0,
          "scan_user_temp_bytes(NULL op)");
    CHECK(pscan_reduce_user(ctx, &rd, NULL, d_in, N, d_out, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "reduce_user(NULL op)");
    CHECK(pscan_reduce_user(ctx, &rd, op, d_in, N, NULL, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "reduce_user(NULL result)");
    sd.flags = 4;
    /* PSCAN_SCAN_WIDEN: built-in sums and products only */
    CHECK(pscan_scan_user(ctx, &sd, op, d_in, d_out, N, NULL, 0) == PSCAN_ERROR_INVALID_VALUE, "scan_user(flags 4)");
    sd.flags = 0;
    sd.algo = PSCAN_ALGO_COUNT;
    CHECK(pscan_scan_user(ctx, &sd, op, d_in, d_out, N, NULL, 0) == PSCAN_ERROR_INVALID_VALUE, "scan_user(bad algo)");
    /* type and op are not looked at */
    sd.algo = algo, sd.type = (pscan_type)999, sd.op = (pscan_op)999;
    CHECK(pscan_scan_user_temp_bytes(ctx, &sd, op, N, &bytes) == PSCAN_SUCCESS, "scan_user ignores type and op");
    sd.type = PSCAN_TYPE_U8, sd.op = PSCAN_OP_SUM;
    /* overlap: out one element into in (OpenCL's cl_mem handles are not addresses: no such call exists) */
    if (backend != PSCAN_BACKEND_OPENCL)
        CHECK(pscan_scan_user(ctx, &sd, op, d_in, (char *)d_in + 8, N - 1, NULL, 0) == PSCAN_ERROR_OVERLAP,
              "scan_user(partial overlap)");
    /* the algorithms that may reorder combines refuse user operators */
    const pscan_algo refused = backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_HILLIS_STEELE : PSCAN_ALGO_BLELLOCH;
    sd.algo = refused;
    CHECK(pscan_scan_user(ctx, &sd, op, d_in, d_out, N, NULL, 0) == PSCAN_ERROR_UNSUPPORTED_ALGORITHM,
          "scan_user(%s)", pscan_algo_name(refused));
    CHECK(pscan_scan_user(ctx, &sd, op, d_in, d_out, 0, NULL, 0) == PSCAN_ERROR_UNSUPPORTED_ALGORITHM,
          "scan_user(%s, n = 0)", pscan_algo_name(refused));
    sd.algo = algo;
    /* temp too small */
    size_t need = 0;
    s = pscan_scan_user_temp_bytes(ctx, &sd, op, 1u << 20, &need);
    CHECK(s == PSCAN_SUCCESS, "scan_user_temp_bytes: %s", pscan_status_name(s));
    /* an operator of another context */
    pscan_context *other = NULL;
    if (pscan_context_create(PSCAN_BACKEND_CPU, &other) == PSCAN_SUCCESS) {
        CHECK(pscan_scan_user(other, &sd, op, in, out, N, NULL, 0) == PSCAN_ERROR_INVALID_VALUE,
              "scan_user on another context");
        pscan_context_destroy(other);
    }
    pscan_memory_download(ctx, out, d_out, sizeof out);
    pscan_context_synchronize(ctx);
    CHECK(memcmp(out, sentinel, sizeof out) == 0, "a refused call wrote its output");

    /* the same operator again: the module (CUDA) or program (OpenCL) comes from the context's cache, also
     * with another identity (a kernel argument on OpenCL) */
    pscan_operator *again = NULL;
#ifdef PSCAN_TEST_OPENCL_HOOKS
    unsigned builds_before = 0, builds_after = 0;
    if (backend == PSCAN_BACKEND_OPENCL) ps_opencl_debug_user_builds(ctx, &builds_before);
#endif
    s = pscan_operator_create(ctx, &d, &again);
    CHECK(s == PSCAN_SUCCESS, "create(affine) again: %s", pscan_status_name(s));
    pscan_operator_destroy(again);
#ifdef PSCAN_TEST_OPENCL_HOOKS
    if (backend == PSCAN_BACKEND_OPENCL) {
        ps_opencl_debug_user_builds(ctx, &builds_after);
        CHECK(builds_before >= 1 && builds_after == builds_before, "create(affine) again built a program (%u -> %u)",
              builds_before, builds_after);
    }
#endif

    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    pscan_operator_destroy(op);
    CHECK(pscan_operator_destroy(NULL) == PSCAN_SUCCESS, "destroy(NULL)");
}

/* A source that does not compile: BUILD_FAILED with the compiler's log (GPU backends compile it). */
static void run_build_failure(void) {
    if (backend == PSCAN_BACKEND_CPU) return;
    unsigned char identity[PSCAN_USER_OP_MAX_BYTES] = {1}; /* the size-mismatch case reads 16 bytes */
    pscan_user_op_desc d;
    memset(&d, 0, sizeof d);
    d.elem_bytes = 8, d.elem_align = 4, d.identity = identity;
    d.source = "typedef struct { unsigned int a, b; } affine;\n"
               "affine combine(affine x, affine y) { return x +* y; }\n";
    d.type_name = "affine", d.combine_name = "combine";
    pscan_operator *op = NULL;
    pscan_status s = pscan_operator_create(ctx, &d, &op);
    const char *log = NULL;
    pscan_context_build_log(ctx, &log);
    CHECK(s == PSCAN_ERROR_BUILD_FAILED && op == NULL, "a bad source: %s", pscan_status_name(s));
    CHECK(log && strlen(log) > 0, "a bad source left no build log");
    /* a name the source does not define is a compile error too */
    d.source = affine_source, d.combine_name = "combine2";
    s = pscan_operator_create(ctx, &d, &op);
    CHECK(s == PSCAN_ERROR_BUILD_FAILED, "an undefined combine name: %s", pscan_status_name(s));
    /* a size that does not match the type */
    d.combine_name = "combine", d.elem_bytes = 16;
    s = pscan_operator_create(ctx, &d, &op);
    CHECK(s == PSCAN_ERROR_BUILD_FAILED, "elem_bytes that do not match the type: %s", pscan_status_name(s));
    /* an alignment that does not match the type (8 bytes of two u32: alignment 4) */
    d.elem_bytes = 8, d.elem_align = 8;
    s = pscan_operator_create(ctx, &d, &op);
    CHECK(s == PSCAN_ERROR_BUILD_FAILED, "elem_align that does not match the type: %s", pscan_status_name(s));
    d.elem_align = 4;
    if (backend == PSCAN_BACKEND_OPENCL) {
        /* the log names the user's lines as the user wrote them, and a failed build caches nothing */
        d.source = "typedef struct { unsigned int a, b; } affine;\n"
                   "affine combine(affine x, affine y) { return x +* y; }\n";
        s = pscan_operator_create(ctx, &d, &op);
        log = NULL;
        pscan_context_build_log(ctx, &log);
        CHECK(s == PSCAN_ERROR_BUILD_FAILED && log && strstr(log, "user_source:2:"), "OpenCL log of a bad source: %s",
              log ? log : "(none)");
    }
}

/* The temporary storage contract: the size query answers what the call would (also its refusals); caller temp
 * of exactly that size works (one byte into a buffer on address backends, its own cl_mem on OpenCL) and one byte
 * less is PSCAN_ERROR_TEMP_TOO_SMALL with the output untouched; NULL temp is the context's workspace. */
static void run_temp_contract(test_rng *rng) {
    const op_case *c = &op_cases[0]; /* affine */
    pscan_operator *op = NULL;
    pscan_status s = op_create(c, 1, &op);
    CHECK(s == PSCAN_SUCCESS, "temp contract: create: %s", pscan_status_name(s));
    if (s != PSCAN_SUCCESS) return;
    enum { N = 20011 }; /* several tiles on every backend */
    const size_t es = c->bytes, bytes = N * es;
    unsigned char *in = (unsigned char *)malloc(bytes), *expect = (unsigned char *)malloc(bytes);
    unsigned char *got = (unsigned char *)malloc(bytes), *sentinel = (unsigned char *)malloc(bytes);
    unsigned char identity[PSCAN_USER_OP_MAX_BYTES], total[PSCAN_USER_OP_MAX_BYTES];
    for (uint64_t i = 0; i < N; i++) op_random(c, rng, i, in + i * es);
    op_identity(c, identity);
    reference_scan(c, in, expect, N, identity, 0, 0);
    memset(sentinel, SENTINEL, bytes);
    void *d_in = NULL, *d_out = NULL, *buf = NULL, *small = NULL;
    size_t buf_bytes = 0;
    pscan_memory_alloc(ctx, bytes, &d_in);
    pscan_memory_alloc(ctx, bytes, &d_out);
    pscan_memory_upload(ctx, d_in, in, bytes);

    const pscan_algo refused = backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_HILLIS_STEELE : PSCAN_ALGO_BLELLOCH;
    pscan_scan_desc sd = {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, refused, NULL};
    pscan_reduce_desc rd = {PSCAN_TYPE_U8, PSCAN_OP_SUM, refused, NULL};
    size_t need = 1;
    CHECK(pscan_scan_user_temp_bytes(ctx, &sd, op, N, &need) == PSCAN_ERROR_UNSUPPORTED_ALGORITHM && need == 0,
          "scan_user_temp_bytes(%s)", pscan_algo_name(refused));
    if (backend != PSCAN_BACKEND_CPU) /* the CPU's reduce has no algorithm to refuse */
        CHECK(pscan_reduce_user_temp_bytes(ctx, &rd, op, N, &need) == PSCAN_ERROR_UNSUPPORTED_ALGORITHM,
              "reduce_user_temp_bytes(%s)", pscan_algo_name(refused));
    sd.algo = algo, rd.algo = algo;

    for (int prim = 0; prim < 2; prim++) {
        const char *what = prim ? "reduce" : "scan";
        s = prim ? pscan_reduce_user_temp_bytes(ctx, &rd, op, N, &need) : pscan_scan_user_temp_bytes(ctx, &sd, op, N, &need);
        CHECK(s == PSCAN_SUCCESS, "%s temp_bytes: %s", what, pscan_status_name(s));
        if (s != PSCAN_SUCCESS || need == 0) continue;
        /* caller temp of exactly the size */
        void *temp = NULL;
        if (backend == PSCAN_BACKEND_OPENCL) {
            if (buf) pscan_memory_free(ctx, buf);
            buf = NULL;
            pscan_memory_alloc(ctx, need, &buf);
            temp = buf;
        } else {
            temp = test_caller_temp(ctx, &buf, &buf_bytes, need);
        }
        pscan_memory_upload(ctx, d_out, sentinel, bytes);
        s = prim ? pscan_reduce_user(ctx, &rd, op, d_in, N, d_out, temp, need)
                 : pscan_scan_user(ctx, &sd, op, d_in, d_out, N, temp, need);
        pscan_memory_download(ctx, got, d_out, bytes);
        pscan_context_synchronize(ctx);
        memcpy(total, expect + (N - 1) * es, es);
        CHECK(s == PSCAN_SUCCESS && memcmp(got, prim ? total : expect, prim ? es : bytes) == 0,
              "%s with caller temp of %zu bytes: %s", what, need, pscan_status_name(s));
        /* one byte less: in temp_bytes, and (OpenCL) in the buffer itself */
        pscan_memory_upload(ctx, d_out, sentinel, bytes);
        s = prim ? pscan_reduce_user(ctx, &rd, op, d_in, N, d_out, temp, need - 1)
                 : pscan_scan_user(ctx, &sd, op, d_in, d_out, N, temp, need - 1);
        CHECK(s == PSCAN_ERROR_TEMP_TOO_SMALL, "%s with temp_bytes one short: %s", what, pscan_status_name(s));
        if (backend == PSCAN_BACKEND_OPENCL && need > 1) {
            pscan_memory_alloc(ctx, need - 1, &small);
            s = prim ? pscan_reduce_user(ctx, &rd, op, d_in, N, d_out, small, need)
                     : pscan_scan_user(ctx, &sd, op, d_in, d_out, N, small, need);
            CHECK(s == PSCAN_ERROR_TEMP_TOO_SMALL, "%s with a temp buffer one byte short: %s", what,
                  pscan_status_name(s));
            pscan_memory_free(ctx, small);
        }
        pscan_memory_download(ctx, got, d_out, bytes);
        pscan_context_synchronize(ctx);
        CHECK(memcmp(got, sentinel, bytes) == 0, "%s with too little temp wrote its output", what);
    }
    if (buf) pscan_memory_free(ctx, buf);
    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    pscan_operator_destroy(op);
    free(in), free(expect), free(got), free(sentinel);
}

/* ---- recurrences ----------------------------------------------------------------------------------------- */

/* misalign: a, b and y start one element past a 16-byte boundary (the CUDA tiles' element-by-element path). */
/* The first of y[0 .. n) (f32 or f64 in got) farther from the long double reference than the recurrence tests
 * allow, or n: |y - ref| <= 256 eps (1 + log2(n + 1)) (1 + |ref|), eps the type's (the coefficients keep errors
 * from growing along the chain; the tolerance still grows with log n for the parallel composition). */
static uint64_t first_far_from(pscan_type type, const unsigned char *got, const long double *ref, uint64_t n) {
    const double eps = type == PSCAN_TYPE_F32 ? FLT_EPSILON : DBL_EPSILON;
    const double tol = eps * 256 * (1 + log2((double)n + 1));
    for (uint64_t i = 0; i < n; i++) {
        double v;
        if (type == PSCAN_TYPE_F32) {
            float f;
            memcpy(&f, got + i * 4, 4);
            v = f;
        } else {
            memcpy(&v, got + i * 8, 8);
        }
        if (!(fabs(v - (double)ref[i]) <= tol * (1 + fabs((double)ref[i])))) return i;
    }
    return n;
}

static void run_recurrence_case(pscan_type type, uint64_t n, int reverse, int with_y0, int in_place, int misalign,
                                test_rng *rng) {
    const size_t es = type == PSCAN_TYPE_F32 ? 4 : 8;
    double *a = (double *)malloc(n * 8 + 8), *b = (double *)malloc(n * 8 + 8);
    long double *ref = (long double *)malloc(n * sizeof(long double) + 16);
    unsigned char *ha = (unsigned char *)malloc(n * es + 1), *hb = (unsigned char *)malloc(n * es + 1);
    unsigned char *got = (unsigned char *)malloc(n * es + GUARD);
    for (uint64_t i = 0; i < n; i++) {
        a[i] = (test_rng_unit(rng) < 0.5 ? -1 : 1) * (0.5 + 0.49 * test_rng_unit(rng));
        b[i] = 2 * test_rng_unit(rng) - 1;
        if (type == PSCAN_TYPE_F32) {
            float fa = (float)a[i], fb = (float)b[i];
            a[i] = fa, b[i] = fb;
            memcpy(ha + i * 4, &fa, 4), memcpy(hb + i * 4, &fb, 4);
        } else {
            memcpy(ha + i * 8, &a[i], 8), memcpy(hb + i * 8, &b[i], 8);
        }
    }
    const double y0 = with_y0 ? 0.75 : 0;
    long double y = y0;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = reverse ? n - 1 - k : k;
        ref[i] = y = (long double)a[i] * y + b[i];
    }
    void *m_a = NULL, *m_b = NULL, *m_y = NULL;
    const size_t off = misalign ? es : 0;
    pscan_memory_alloc(ctx, n * es + GUARD + off, &m_a);
    pscan_memory_alloc(ctx, n * es + GUARD + off, &m_b);
    pscan_memory_alloc(ctx, n * es + GUARD + off, &m_y);
    void *d_a = (char *)m_a + off, *d_b = (char *)m_b + off, *d_y = (char *)m_y + off;
    memset(got, SENTINEL, n * es + GUARD);
    pscan_memory_upload(ctx, d_a, ha, n * es);
    pscan_memory_upload(ctx, d_b, hb, n * es);
    pscan_memory_upload(ctx, d_y, got, n * es + GUARD);
    if (in_place) pscan_memory_upload(ctx, d_y, hb, n * es);
    float y0f = (float)y0;
    pscan_recurrence_desc desc = {type, reverse ? PSCAN_SCAN_REVERSE : 0u, algo,
                                  with_y0 ? (type == PSCAN_TYPE_F32 ? (const void *)&y0f : (const void *)&y0) : NULL};
    pscan_status s = pscan_recurrence(ctx, &desc, d_a, in_place ? d_y : d_b, d_y, n, NULL, 0);
    pscan_memory_download(ctx, got, d_y, n * es + GUARD);
    pscan_context_synchronize(ctx);
    CHECK(s == PSCAN_SUCCESS, "recurrence %s n=%llu: %s", pscan_type_name(type), (unsigned long long)n,
          pscan_status_name(s));
    /* |a| < 1: errors do not grow along the chain beyond a few ulps per step of its memory (1 / (1 - |a|)
     * <= 100 steps) */
    const uint64_t bad = s == PSCAN_SUCCESS ? first_far_from(type, got, ref, n) : n;
    CHECK(bad == n, "recurrence %s n=%llu reverse=%d y0=%d in_place=%d misalign=%d: first wrong element %llu",
          pscan_type_name(type), (unsigned long long)n, reverse, with_y0, in_place, misalign, (unsigned long long)bad);
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD; i++) guard_ok &= got[n * es + i] == SENTINEL;
    CHECK(guard_ok, "recurrence n=%llu wrote past y", (unsigned long long)n);
    pscan_memory_free(ctx, m_a), pscan_memory_free(ctx, m_b), pscan_memory_free(ctx, m_y);
    free(a), free(b), free(ref), free(ha), free(hb), free(got);
}

/* A recurrence of order 1 or 2 on n <= 16 host floats, through device memory on a GPU backend (y is written
 * back only on success). */
static pscan_status recurrence_small(const void *desc, int order, const float *a, const float *b, const float *c,
                                     float *y, uint64_t n) {
    if (backend == PSCAN_BACKEND_CPU)
        return order == 1 ? pscan_recurrence(ctx, (const pscan_recurrence_desc *)desc, a, b, y, n, NULL, 0)
                          : pscan_recurrence2(ctx, (const pscan_recurrence2_desc *)desc, a, b, c, y, n, NULL, 0);
    void *d[4] = {NULL, NULL, NULL, NULL};
    const float *h[3] = {a, b, c};
    for (int k = 0; k < 4; k++) pscan_memory_alloc(ctx, 16 * sizeof(float), &d[k]);
    for (int k = 0; k < 3; k++)
        if (h[k]) pscan_memory_upload(ctx, d[k], h[k], n * sizeof(float));
    pscan_status s = order == 1 ? pscan_recurrence(ctx, (const pscan_recurrence_desc *)desc, d[0], d[1], d[3], n, NULL, 0)
                                : pscan_recurrence2(ctx, (const pscan_recurrence2_desc *)desc, d[0], d[1], d[2], d[3], n,
                                                    NULL, 0);
    if (s == PSCAN_SUCCESS) pscan_memory_download(ctx, y, d[3], n * sizeof(float));
    pscan_context_synchronize(ctx);
    for (int k = 0; k < 4; k++) pscan_memory_free(ctx, d[k]);
    return s;
}

static void run_recurrences(test_rng *rng) {
    pscan_recurrence_desc desc = {PSCAN_TYPE_F32, 0, algo, NULL};
    size_t bytes = 0;
    pscan_status s = pscan_recurrence_temp_bytes(ctx, &desc, 1000, &bytes);
    CHECK(s == PSCAN_SUCCESS, "recurrence_temp_bytes: %s", pscan_status_name(s));
    desc.type = PSCAN_TYPE_I32;
    CHECK(pscan_recurrence_temp_bytes(ctx, &desc, 10, &bytes) == PSCAN_ERROR_UNSUPPORTED_TYPE, "recurrence(i32)");
    desc.type = PSCAN_TYPE_F32, desc.flags = PSCAN_SCAN_EXCLUSIVE;
    CHECK(pscan_recurrence_temp_bytes(ctx, &desc, 10, &bytes) == PSCAN_ERROR_INVALID_VALUE, "recurrence(exclusive)");
    desc.flags = 0;
    float buf[16];
    if (backend != PSCAN_BACKEND_OPENCL) /* OpenCL's cl_mem handles are not addresses: no such call exists */
        CHECK(pscan_recurrence(ctx, &desc, buf, buf + 4, buf + 2, 4, NULL, 0) == PSCAN_ERROR_OVERLAP,
              "recurrence overlap");
    CHECK(pscan_recurrence(ctx, &desc, NULL, buf, buf + 8, 4, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "recurrence(NULL a)");
    /* the pscan.h example */
    float a[4] = {2, 2, 2, 2}, b[4] = {1, 1, 1, 1}, y[4];
    CHECK(recurrence_small(&desc, 1, a, b, NULL, y, 4) == PSCAN_SUCCESS && y[0] == 1 && y[1] == 3 && y[2] == 7 &&
              y[3] == 15,
          "recurrence example");
    desc.flags = PSCAN_SCAN_REVERSE;
    CHECK(recurrence_small(&desc, 1, a, b, NULL, y, 4) == PSCAN_SUCCESS && y[0] == 15 && y[3] == 1,
          "reverse recurrence example");
    /* an initial state: y0 = 1 -> y = [3 7 15 31] */
    const float one = 1;
    desc.flags = 0, desc.y0 = &one;
    CHECK(recurrence_small(&desc, 1, a, b, NULL, y, 4) == PSCAN_SUCCESS && y[0] == 3 && y[3] == 31,
          "recurrence example with y0");
    desc.y0 = NULL;

    /* CUDA tiles: 4096 (f32) and 2048 (f64) elements, a look-back window of 64 tiles; OpenCL's: 2048 and 1024
     * (256 work-items of 8 or 4), spine of one work-item over the tiles. misalign only where handles are
     * addresses. */
    const uint64_t sizes[] = {0, 1, 2, 1000, 2047, 2048, 2049, 4095, 4096, 4097, 65537, 64 * 4096 + 5, 1000003};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] - (quick ? 1 : 0); i++)
        for (int t = 0; t < 2; t++)
            for (int reverse = 0; reverse < 2; reverse++)
                run_recurrence_case(t ? PSCAN_TYPE_F64 : PSCAN_TYPE_F32, sizes[i], reverse, (int)(i + reverse) % 2,
                                    (int)(i + t) % 2, backend != PSCAN_BACKEND_OPENCL && (int)(i + t + reverse) % 3 == 0,
                                    rng);
}

/* ---- second-order recurrences ---------------------------------------------------------------------------- */

/* |a| + |b| <= 0.95: both roots of z^2 = a z + b lie inside the unit circle, so errors fade along the chain (as
 * |a| < 1 does in the first order) and the tolerance is the first order's. */
static void run_recurrence2_case(pscan_type type, uint64_t n, int reverse, int with_init, int in_place,
                                 test_rng *rng) {
    const size_t es = type == PSCAN_TYPE_F32 ? 4 : 8;
    double *coef[3];
    unsigned char *host[3];
    for (int k = 0; k < 3; k++) coef[k] = (double *)malloc(n * 8 + 8), host[k] = (unsigned char *)malloc(n * es + 1);
    long double *ref = (long double *)malloc(n * sizeof(long double) + 16);
    unsigned char *got = (unsigned char *)malloc(n * es + GUARD);
    for (uint64_t i = 0; i < n; i++) {
        const double ma = 0.3 + 0.3 * test_rng_unit(rng), mb = 0.35 * test_rng_unit(rng);
        coef[0][i] = (test_rng_unit(rng) < 0.5 ? -1 : 1) * ma;
        coef[1][i] = (test_rng_unit(rng) < 0.5 ? -1 : 1) * mb;
        coef[2][i] = 2 * test_rng_unit(rng) - 1;
        for (int k = 0; k < 3; k++) {
            if (type == PSCAN_TYPE_F32) {
                float f = (float)coef[k][i];
                coef[k][i] = f;
                memcpy(host[k] + i * 4, &f, 4);
            } else {
                memcpy(host[k] + i * 8, &coef[k][i], 8);
            }
        }
    }
    const double y1 = with_init ? 0.75 : 0, y2 = with_init ? -0.5 : 0;
    long double s0 = y1, s1 = y2;
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = reverse ? n - 1 - k : k;
        const long double v = (long double)coef[0][i] * s0 + (long double)coef[1][i] * s1 + coef[2][i];
        s1 = s0, s0 = v;
        ref[i] = v;
    }
    void *d[3] = {NULL, NULL, NULL}, *d_y = NULL;
    for (int k = 0; k < 3; k++) {
        pscan_memory_alloc(ctx, n * es + GUARD, &d[k]);
        pscan_memory_upload(ctx, d[k], host[k], n * es);
    }
    pscan_memory_alloc(ctx, n * es + GUARD, &d_y);
    memset(got, SENTINEL, n * es + GUARD);
    pscan_memory_upload(ctx, d_y, got, n * es + GUARD);
    /* in_place 1, 2, 3: y is a, b or c */
    if (in_place) pscan_memory_upload(ctx, d_y, host[in_place - 1], n * es);
    const void *ins[3] = {d[0], d[1], d[2]};
    if (in_place) ins[in_place - 1] = d_y;
    float y1f = (float)y1, y2f = (float)y2;
    pscan_recurrence2_desc desc = {type, reverse ? PSCAN_SCAN_REVERSE : 0u, algo, NULL, NULL};
    if (with_init) {
        desc.y1 = type == PSCAN_TYPE_F32 ? (const void *)&y1f : (const void *)&y1;
        desc.y2 = type == PSCAN_TYPE_F32 ? (const void *)&y2f : (const void *)&y2;
    }
    pscan_status s = pscan_recurrence2(ctx, &desc, ins[0], ins[1], ins[2], d_y, n, NULL, 0);
    pscan_memory_download(ctx, got, d_y, n * es + GUARD);
    pscan_context_synchronize(ctx);
    CHECK(s == PSCAN_SUCCESS, "recurrence2 %s n=%llu: %s", pscan_type_name(type), (unsigned long long)n,
          pscan_status_name(s));
    const uint64_t bad = s == PSCAN_SUCCESS ? first_far_from(type, got, ref, n) : n;
    CHECK(bad == n, "recurrence2 %s n=%llu reverse=%d init=%d in_place=%d: first wrong element %llu",
          pscan_type_name(type), (unsigned long long)n, reverse, with_init, in_place, (unsigned long long)bad);
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD; i++) guard_ok &= got[n * es + i] == SENTINEL;
    CHECK(guard_ok, "recurrence2 n=%llu wrote past y", (unsigned long long)n);
    for (int k = 0; k < 3; k++) pscan_memory_free(ctx, d[k]), free(coef[k]), free(host[k]);
    pscan_memory_free(ctx, d_y);
    free(ref), free(got);
}

/* A call that must fail with want and leave y (host memory, CPU backend) untouched. */
static void expect_recurrence2(pscan_status want, const pscan_recurrence2_desc *desc, const void *a, const void *b,
                               const void *c, float *y, const char *what) {
    float before[4];
    if (y) memcpy(before, y, sizeof before);
    pscan_status s = pscan_recurrence2(ctx, desc, a, b, c, y, 4, NULL, 0);
    CHECK(s == want, "recurrence2 %s: %s, want %s", what, pscan_status_name(s), pscan_status_name(want));
    CHECK(!y || memcmp(before, y, sizeof before) == 0, "recurrence2 %s wrote y", what);
}

static void run_recurrences2(test_rng *rng) {
    pscan_recurrence2_desc desc = {PSCAN_TYPE_F32, 0, algo, NULL, NULL};
    size_t bytes = 0;
    pscan_status s = pscan_recurrence2_temp_bytes(ctx, &desc, 1000, &bytes);
    CHECK(s == PSCAN_SUCCESS, "recurrence2_temp_bytes: %s", pscan_status_name(s));
    CHECK(pscan_recurrence2_temp_bytes(ctx, NULL, 10, &bytes) == PSCAN_ERROR_NULL_POINTER, "recurrence2(NULL desc)");
    CHECK(pscan_recurrence2_temp_bytes(ctx, &desc, 10, NULL) == PSCAN_ERROR_NULL_POINTER, "recurrence2(NULL bytes)");
    float a[4] = {1, 1, 1, 1}, b[4] = {1, 1, 1, 1}, c[4] = {0, 0, 0, 0}, buf[16], y[4];
    for (int i = 0; i < 16; i++) buf[i] = (float)i;
    for (int i = 0; i < 4; i++) y[i] = -7;
    desc.type = PSCAN_TYPE_I32;
    CHECK(pscan_recurrence2_temp_bytes(ctx, &desc, 10, &bytes) == PSCAN_ERROR_UNSUPPORTED_TYPE, "recurrence2(i32)");
    expect_recurrence2(PSCAN_ERROR_UNSUPPORTED_TYPE, &desc, a, b, c, y, "i32");
    desc.type = PSCAN_TYPE_F32, desc.flags = PSCAN_SCAN_EXCLUSIVE;
    CHECK(pscan_recurrence2_temp_bytes(ctx, &desc, 10, &bytes) == PSCAN_ERROR_INVALID_VALUE, "recurrence2(exclusive)");
    expect_recurrence2(PSCAN_ERROR_INVALID_VALUE, &desc, a, b, c, y, "exclusive");
    desc.flags = 0x100;
    expect_recurrence2(PSCAN_ERROR_INVALID_VALUE, &desc, a, b, c, y, "unknown flag");
    desc.flags = 0;
    expect_recurrence2(PSCAN_ERROR_NULL_POINTER, NULL, a, b, c, y, "NULL desc");
    expect_recurrence2(PSCAN_ERROR_NULL_POINTER, &desc, NULL, b, c, y, "NULL a");
    expect_recurrence2(PSCAN_ERROR_NULL_POINTER, &desc, a, NULL, c, y, "NULL b");
    expect_recurrence2(PSCAN_ERROR_NULL_POINTER, &desc, a, b, NULL, y, "NULL c");
    expect_recurrence2(PSCAN_ERROR_NULL_POINTER, &desc, a, b, c, NULL, "NULL y");
    /* y overlapping a, b or c other than exactly (addresses only: OpenCL's handles are not) */
    if (backend != PSCAN_BACKEND_OPENCL) {
        expect_recurrence2(PSCAN_ERROR_OVERLAP, &desc, buf, buf + 8, buf + 12, buf + 2, "overlapping a");
        expect_recurrence2(PSCAN_ERROR_OVERLAP, &desc, buf + 8, buf, buf + 12, buf + 2, "overlapping b");
        expect_recurrence2(PSCAN_ERROR_OVERLAP, &desc, buf + 8, buf + 12, buf, buf + 2, "overlapping c");
    }
    /* Fibonacci, the pscan.h and docs/api.md example, forward and reverse */
    float y1 = 1, y2 = 0, fib[5] = {1, 1, 1, 1, 1}, fb[5] = {1, 1, 1, 1, 1}, fc[5] = {0}, fy[5];
    desc.y1 = &y1, desc.y2 = &y2;
    CHECK(recurrence_small(&desc, 2, fib, fb, fc, fy, 5) == PSCAN_SUCCESS && fy[0] == 1 && fy[1] == 2 &&
              fy[2] == 3 && fy[3] == 5 && fy[4] == 8,
          "recurrence2 Fibonacci");
    desc.flags = PSCAN_SCAN_REVERSE;
    CHECK(recurrence_small(&desc, 2, fib, fb, fc, fy, 5) == PSCAN_SUCCESS && fy[4] == 1 && fy[3] == 2 &&
              fy[2] == 3 && fy[1] == 5 && fy[0] == 8,
          "reverse recurrence2 Fibonacci");
    /* y0 and y2 NULL: 0, so y = c's own recurrence; n = 0 is a no-op that still validates */
    desc.flags = 0, desc.y1 = NULL, desc.y2 = NULL;
    CHECK(pscan_recurrence2(ctx, &desc, NULL, NULL, NULL, NULL, 0, NULL, 0) == PSCAN_SUCCESS, "recurrence2 n=0");

    /* CUDA tiles: 2048 (f32) and 1024 (f64) elements */
    const uint64_t sizes[] = {0, 1, 2, 3, 1000, 1023, 1024, 1025, 2047, 2048, 2049, 65537, (1u << 20) + 3};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        for (int t = 0; t < 2; t++)
            for (int reverse = 0; reverse < 2; reverse++)
                run_recurrence2_case(t ? PSCAN_TYPE_F64 : PSCAN_TYPE_F32, sizes[i], reverse, (int)(i + reverse) % 2,
                                     (int)(i + t + reverse) % 4, rng);
}

/* ---- polynomial evaluation (Horner's rule as a recurrence) --------------------------------------------- */

/* |x| <= 0.9 and |c| <= 1: every Horner prefix is at most 10 in size and errors fade along the chain as in the
 * first order (x is the constant a). */
static void run_polyval_case(pscan_type type, uint64_t n, int reverse, int in_place, double x, test_rng *rng) {
    const size_t es = type == PSCAN_TYPE_F32 ? 4 : 8;
    double *c = (double *)malloc(n * 8 + 8);
    long double *ref = (long double *)malloc(n * sizeof(long double) + 16);
    unsigned char *hc = (unsigned char *)malloc(n * es + 1), *got = (unsigned char *)malloc(n * es + GUARD);
    const float xf = (float)x;
    if (type == PSCAN_TYPE_F32) x = xf;
    for (uint64_t i = 0; i < n; i++) {
        c[i] = 2 * test_rng_unit(rng) - 1;
        if (type == PSCAN_TYPE_F32) {
            float f = (float)c[i];
            c[i] = f;
            memcpy(hc + i * 4, &f, 4);
        } else {
            memcpy(hc + i * 8, &c[i], 8);
        }
    }
    long double v = 0; /* the serial Horner loop */
    for (uint64_t k = 0; k < n; k++) {
        const uint64_t i = reverse ? n - 1 - k : k;
        ref[i] = v = v * x + c[i];
    }
    void *d_c = NULL, *d_v = NULL;
    pscan_memory_alloc(ctx, n * es + GUARD, &d_c);
    pscan_memory_alloc(ctx, n * es + GUARD, &d_v);
    memset(got, SENTINEL, n * es + GUARD);
    pscan_memory_upload(ctx, d_v, got, n * es + GUARD);
    pscan_memory_upload(ctx, in_place ? d_v : d_c, hc, n * es);
    pscan_polyval_desc desc = {type, reverse ? PSCAN_SCAN_REVERSE : 0u, algo,
                               type == PSCAN_TYPE_F32 ? (const void *)&xf : (const void *)&x};
    pscan_status s = pscan_polyval(ctx, &desc, in_place ? d_v : d_c, d_v, n, NULL, 0);
    pscan_memory_download(ctx, got, d_v, n * es + GUARD);
    pscan_context_synchronize(ctx);
    CHECK(s == PSCAN_SUCCESS, "polyval %s n=%llu: %s", pscan_type_name(type), (unsigned long long)n,
          pscan_status_name(s));
    const uint64_t bad = s == PSCAN_SUCCESS ? first_far_from(type, got, ref, n) : n;
    CHECK(bad == n, "polyval %s n=%llu reverse=%d in_place=%d x=%g: first wrong element %llu", pscan_type_name(type),
          (unsigned long long)n, reverse, in_place, x, (unsigned long long)bad);
    int guard_ok = 1;
    for (size_t i = 0; i < GUARD; i++) guard_ok &= got[n * es + i] == SENTINEL;
    CHECK(guard_ok, "polyval n=%llu wrote past values", (unsigned long long)n);
    pscan_memory_free(ctx, d_c), pscan_memory_free(ctx, d_v);
    free(c), free(ref), free(hc), free(got);
}

/* pscan_polyval on n <= 16 host floats, through device memory on a GPU backend, in place there. */
static pscan_status polyval_small(const pscan_polyval_desc *desc, const float *c, float *values, uint64_t n) {
    if (backend == PSCAN_BACKEND_CPU) return pscan_polyval(ctx, desc, c, values, n, NULL, 0);
    void *d = NULL;
    pscan_memory_alloc(ctx, 16 * sizeof(float), &d);
    pscan_memory_upload(ctx, d, c, n * sizeof(float));
    pscan_status s = pscan_polyval(ctx, desc, d, d, n, NULL, 0);
    if (s == PSCAN_SUCCESS) pscan_memory_download(ctx, values, d, n * sizeof(float));
    pscan_context_synchronize(ctx);
    pscan_memory_free(ctx, d);
    return s;
}

static void run_polyvals(test_rng *rng) {
    const float two = 2;
    pscan_polyval_desc desc = {PSCAN_TYPE_F32, 0, algo, &two};
    size_t bytes = 0;
    pscan_status s = pscan_polyval_temp_bytes(ctx, &desc, 1000, &bytes);
    CHECK(s == PSCAN_SUCCESS, "polyval_temp_bytes: %s", pscan_status_name(s));
    CHECK(pscan_polyval_temp_bytes(ctx, NULL, 10, &bytes) == PSCAN_ERROR_NULL_POINTER, "polyval(NULL desc)");
    CHECK(pscan_polyval_temp_bytes(ctx, &desc, 10, NULL) == PSCAN_ERROR_NULL_POINTER, "polyval(NULL bytes)");
    float buf[16], vals[4];
    for (int i = 0; i < 16; i++) buf[i] = (float)i;
    for (int i = 0; i < 4; i++) vals[i] = -7;
    /* refused calls: exact status, values untouched (host memory: the core refuses before any backend runs) */
    desc.x = NULL;
    CHECK(pscan_polyval(ctx, &desc, buf, vals, 4, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "polyval(NULL x)");
    desc.x = &two, desc.type = PSCAN_TYPE_I32;
    CHECK(pscan_polyval(ctx, &desc, buf, vals, 4, NULL, 0) == PSCAN_ERROR_UNSUPPORTED_TYPE, "polyval(i32)");
    desc.type = PSCAN_TYPE_F32, desc.flags = PSCAN_SCAN_EXCLUSIVE;
    CHECK(pscan_polyval(ctx, &desc, buf, vals, 4, NULL, 0) == PSCAN_ERROR_INVALID_VALUE, "polyval(exclusive)");
    desc.flags = 0;
    CHECK(pscan_polyval(ctx, &desc, NULL, vals, 4, NULL, 0) == PSCAN_ERROR_NULL_POINTER, "polyval(NULL c)");
    if (backend != PSCAN_BACKEND_OPENCL) /* addresses only */
        CHECK(pscan_polyval(ctx, &desc, buf, buf + 2, 4, NULL, 0) == PSCAN_ERROR_OVERLAP, "polyval overlap");
    CHECK(vals[0] == -7 && vals[3] == -7 && buf[2] == 2, "a refused polyval wrote its output");
    CHECK(pscan_polyval(ctx, &desc, NULL, NULL, 0, NULL, 0) == PSCAN_SUCCESS, "polyval n=0");
    /* the pscan.h example: x^2 + 2x + 3 at 2, every Horner prefix; reversed, 3x^2 + 2x + 1 */
    const float c3[3] = {1, 2, 3};
    float v3[3] = {0, 0, 0};
    s = polyval_small(&desc, c3, v3, 3);
    CHECK(s == PSCAN_SUCCESS && v3[0] == 1 && v3[1] == 4 && v3[2] == 11, "polyval example: %s [%g %g %g]",
          pscan_status_name(s), v3[0], v3[1], v3[2]);
    desc.flags = PSCAN_SCAN_REVERSE;
    s = polyval_small(&desc, c3, v3, 3);
    CHECK(s == PSCAN_SUCCESS && v3[0] == 17 && v3[1] == 8 && v3[2] == 3, "reverse polyval example: %s [%g %g %g]",
          pscan_status_name(s), v3[0], v3[1], v3[2]);

    const uint64_t sizes[] = {0, 1, 2, 1000, 2047, 2048, 2049, 4097, 65537, 64 * 4096 + 5};
    const double xs[] = {0.9, -0.7, 0.5, -0.9};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0] - (quick ? 1 : 0); i++)
        for (int t = 0; t < 2; t++)
            for (int reverse = 0; reverse < 2; reverse++)
                run_polyval_case(t ? PSCAN_TYPE_F64 : PSCAN_TYPE_F32, sizes[i], reverse, (int)(i + t + reverse) % 2,
                                 xs[(i + 2 * t + reverse) % 4], rng);
}

static int usage(void) {
    fprintf(stderr, "usage: test_userop --backend cpu|cuda|opencl [--algo NAME] [--quick] [--seed S] [--threads T]\n"
                    "                   [--user-scan VECS,BLOCKS,ASYNC,BLOCKED]  (CUDA: the scan program's policy for\n"
                    "                   every element size of the vector programs, user_op.cu)\n");
    return 2;
}

int main(int argc, char **argv) {
    int have_backend = 0;
    long threads = -1;
    const char *env_seed = getenv("PSCAN_TEST_SEED");
    if (env_seed) seed = strtoull(env_seed, NULL, 0);
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--backend") == 0 && i + 1 < argc) {
            if (pscan_backend_parse(argv[++i], &backend) != PSCAN_SUCCESS) return usage();
            have_backend = 1;
        } else if (strcmp(argv[i], "--algo") == 0 && i + 1 < argc) {
            if (pscan_algo_parse(argv[++i], &algo) != PSCAN_SUCCESS) return usage();
        } else if (strcmp(argv[i], "--seed") == 0 && i + 1 < argc) {
            seed = strtoull(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            threads = strtol(argv[++i], NULL, 0);
        } else if (strcmp(argv[i], "--quick") == 0) {
            quick = 1;
        } else if (strcmp(argv[i], "--user-scan") == 0 && i + 1 < argc) {
            int v = 0, b = 0, a = 0, k = 0;
            if (sscanf(argv[++i], "%d,%d,%d,%d", &v, &b, &a, &k) != 4 || v <= 0) return usage();
#ifdef PSCAN_TEST_CUDA_HOOKS
            for (size_t bytes = 1; bytes <= 16; bytes *= 2) ps_cuda_user_tune_scan(bytes, v, b, a, k);
#else
            printf("test_userop: --user-scan needs the static library with CUDA\n");
            return 77;
#endif
        } else {
            return usage();
        }
    }
    if (!have_backend) return usage();
    int rc = test_open_backend("test_userop", backend, &ctx);
    if (rc != 0) return rc;
    if (threads >= 0) pscan_context_set_threads(ctx, (unsigned)threads);
    test_rng rng = {seed};

    run_bad_inputs();
    run_build_failure();
    run_temp_contract(&rng);
    for (size_t i = 0; i < OP_CASES; i++) run_operator(&op_cases[i], &rng);
    run_recurrences(&rng);
    run_recurrences2(&rng);
    run_polyvals(&rng);

    pscan_context_destroy(ctx);
    printf("test_userop: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
