/*
 * test_api.c - the public API's contract at its edges: every bad input gets its exact status, on every backend.
 *
 *   test_api --backend cpu|cuda|opencl
 *
 * Backend-independent checks (names, parsing, version) run in every instance; the rest run on a context of the
 * named backend through the memory helpers, so the same file checks CPU, CUDA and OpenCL. Exit 77 when the
 * backend is not compiled in or has no device; the closing line reads "test_api: P passed, F failed".
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

static unsigned long passed, failed;

static void check(int ok, const char *file, int line, const char *what) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "%s:%d: FAIL: %s\n", file, line, what);
}

/* EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_scan(...)) reads as the specification it is. */
#define EXPECT_STATUS(expected, call)                                                                        \
    do {                                                                                                     \
        pscan_status got_ = (call);                                                                          \
        char what_[512];                                                                                     \
        snprintf(what_, sizeof what_, "%s returned %s, expected %s", #call, pscan_status_name(got_),         \
                 pscan_status_name(expected));                                                               \
        check(got_ == (expected), __FILE__, __LINE__, what_);                                                \
    } while (0)
#define EXPECT(cond) check((cond) != 0, __FILE__, __LINE__, #cond)

/* ---- names, parsing, version: no context needed ------------------------------------------------------- */

static void test_status_names(void) {
    static const pscan_status all[] = {
#define STATUS_VALUE_(name, message) name,
        PSCAN_STATUS_LIST(STATUS_VALUE_)
#undef STATUS_VALUE_
    };
    static const char *const spelled[] = {
#define STATUS_TEXT_(name, message) #name,
        PSCAN_STATUS_LIST(STATUS_TEXT_)
#undef STATUS_TEXT_
    };
    size_t count = sizeof all / sizeof all[0];
    EXPECT(count == PSCAN_STATUS_COUNT);
    EXPECT(PSCAN_SUCCESS == 0);
    for (size_t i = 0; i < count; i++) {
        const char *name = pscan_status_name(all[i]);
        const char *message = pscan_status_string(all[i]);
        EXPECT(name != NULL && strcmp(name, spelled[i]) == 0);
        EXPECT(message != NULL && message[0] != '\0');
        for (size_t j = 0; j < i; j++) {
            EXPECT(name && strcmp(name, pscan_status_name(all[j])) != 0);
            EXPECT(message && strcmp(message, pscan_status_string(all[j])) != 0);
        }
    }
    EXPECT(strcmp(pscan_status_name(PSCAN_STATUS_COUNT), "PSCAN_STATUS_UNKNOWN") == 0);
    EXPECT(strcmp(pscan_status_name((pscan_status)-1), "PSCAN_STATUS_UNKNOWN") == 0);
    EXPECT(strcmp(pscan_status_name((pscan_status)1000), "PSCAN_STATUS_UNKNOWN") == 0);
    EXPECT(pscan_status_string((pscan_status)1000) != NULL);
    EXPECT(strcmp(pscan_status_name(PSCAN_ERROR_OVERLAP), "PSCAN_ERROR_OVERLAP") == 0);
}

static void test_type_op_names(void) {
    static const struct {
        pscan_type type;
        const char *name;
        size_t bytes;
    } expected_types[] = {{PSCAN_TYPE_I8, "i8", 1},   {PSCAN_TYPE_U8, "u8", 1},   {PSCAN_TYPE_I16, "i16", 2},
                          {PSCAN_TYPE_U16, "u16", 2}, {PSCAN_TYPE_I32, "i32", 4}, {PSCAN_TYPE_U32, "u32", 4},
                          {PSCAN_TYPE_I64, "i64", 8}, {PSCAN_TYPE_U64, "u64", 8}, {PSCAN_TYPE_F32, "f32", 4},
                          {PSCAN_TYPE_F64, "f64", 8}};
    EXPECT(sizeof expected_types / sizeof expected_types[0] == PSCAN_TYPE_COUNT);
    for (int i = 0; i < PSCAN_TYPE_COUNT; i++) {
        pscan_type parsed = PSCAN_TYPE_COUNT;
        EXPECT(pscan_type_name(expected_types[i].type) != NULL &&
               strcmp(pscan_type_name(expected_types[i].type), expected_types[i].name) == 0);
        EXPECT(pscan_type_size(expected_types[i].type) == expected_types[i].bytes);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_type_parse(expected_types[i].name, &parsed));
        EXPECT(parsed == expected_types[i].type);
    }
    pscan_type t = PSCAN_TYPE_I8;
    EXPECT(pscan_type_name(PSCAN_TYPE_COUNT) == NULL);
    EXPECT(pscan_type_name((pscan_type)-1) == NULL);
    EXPECT(pscan_type_size(PSCAN_TYPE_COUNT) == 0);
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_type_parse("int", &t));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_type_parse("", &t));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_type_parse("I32", &t));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_type_parse(NULL, &t));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_type_parse("i32", NULL));

    static const char *const op_names[] = {"sum", "product", "min", "max", "and", "or", "xor"};
    EXPECT(sizeof op_names / sizeof op_names[0] == PSCAN_OP_COUNT);
    for (int i = 0; i < PSCAN_OP_COUNT; i++) {
        pscan_op parsed = PSCAN_OP_COUNT;
        EXPECT(pscan_op_name((pscan_op)i) != NULL && strcmp(pscan_op_name((pscan_op)i), op_names[i]) == 0);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_op_parse(op_names[i], &parsed));
        EXPECT(parsed == (pscan_op)i);
    }
    pscan_op o = PSCAN_OP_SUM;
    EXPECT(pscan_op_name(PSCAN_OP_COUNT) == NULL);
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_op_parse("add", &o));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_op_parse(NULL, &o));
}

static void test_backend_algo_names(void) {
    static const char *const backend_names[] = {"auto", "cpu", "cuda", "opencl"};
    EXPECT(sizeof backend_names / sizeof backend_names[0] == PSCAN_BACKEND_COUNT);
    for (int i = 0; i < PSCAN_BACKEND_COUNT; i++) {
        pscan_backend parsed = PSCAN_BACKEND_COUNT;
        EXPECT(pscan_backend_name((pscan_backend)i) != NULL &&
               strcmp(pscan_backend_name((pscan_backend)i), backend_names[i]) == 0);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_backend_parse(backend_names[i], &parsed));
        EXPECT(parsed == (pscan_backend)i);
    }
    static const char *const algo_names[] = {"auto",      "serial",           "threads",
                                             "hillis-steele", "blelloch-unpadded", "blelloch",
                                             "scan-then-propagate", "reduce-then-scan", "decoupled-lookback"};
    EXPECT(sizeof algo_names / sizeof algo_names[0] == PSCAN_ALGO_COUNT);
    for (int i = 0; i < PSCAN_ALGO_COUNT; i++) {
        pscan_algo parsed = PSCAN_ALGO_COUNT;
        EXPECT(pscan_algo_name((pscan_algo)i) != NULL &&
               strcmp(pscan_algo_name((pscan_algo)i), algo_names[i]) == 0);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_algo_parse(algo_names[i], &parsed));
        EXPECT(parsed == (pscan_algo)i);
    }
    pscan_backend b = PSCAN_BACKEND_AUTO;
    pscan_algo a = PSCAN_ALGO_AUTO;
    EXPECT(pscan_backend_name(PSCAN_BACKEND_COUNT) == NULL);
    EXPECT(pscan_algo_name(PSCAN_ALGO_COUNT) == NULL);
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_backend_parse("vulkan", &b));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_algo_parse("hillis_steele", &a));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_backend_parse(NULL, &b));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_algo_parse("serial", NULL));

    int compiled = -1;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_backend_compiled(PSCAN_BACKEND_CPU, &compiled));
    EXPECT(compiled == 1);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_backend_compiled(PSCAN_BACKEND_AUTO, &compiled));
    EXPECT(compiled == 1);
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_backend_compiled(PSCAN_BACKEND_COUNT, &compiled));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_backend_compiled(PSCAN_BACKEND_CPU, NULL));
}

static void test_version(void) {
    char text[64];
    EXPECT(PSCAN_VERSION == pscan_version());
    EXPECT(PSCAN_VERSION == PSCAN_VERSION_MAJOR * 10000 + PSCAN_VERSION_MINOR * 100 + PSCAN_VERSION_PATCH);
    snprintf(text, sizeof text, "%d.%d.%d", PSCAN_VERSION_MAJOR, PSCAN_VERSION_MINOR, PSCAN_VERSION_PATCH);
    EXPECT(pscan_version_string() != NULL && strcmp(pscan_version_string(), text) == 0);
}

/* Context-free calls that must refuse NULL or an unknown backend. */
static void test_context_edges(void) {
    pscan_context *ctx = NULL;
    pscan_backend b;
    long long code;
    const char *log;
    char buf[8];
    void *p = NULL;
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_create(PSCAN_BACKEND_CPU, NULL));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_context_create(PSCAN_BACKEND_COUNT, &ctx));
    EXPECT(ctx == NULL);
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_context_create((pscan_backend)-1, &ctx));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_destroy(NULL));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_backend(NULL, &b));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_device_name(NULL, buf, sizeof buf));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_native_error(NULL, &code));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_build_log(NULL, &log));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_set_threads(NULL, 2));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_reserve(NULL, 16));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_synchronize(NULL));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_alloc(NULL, 16, &p));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_free(NULL, p));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_upload(NULL, buf, buf, 1));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_download(NULL, buf, buf, 1));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_copy(NULL, buf, buf + 4, 1));

    /* AUTO always finds something: the CPU at worst, and never reports AUTO as its backend */
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_create(PSCAN_BACKEND_AUTO, &ctx));
    if (ctx) {
        b = PSCAN_BACKEND_AUTO;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_backend(ctx, &b));
        EXPECT(b != PSCAN_BACKEND_AUTO);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_destroy(ctx));
    }
}

/* ---- on a context of the backend under test ------------------------------------------------------------ */

typedef struct api_fixture {
    pscan_backend backend;
    pscan_context *ctx;
    int addresses; /* handles are addresses (CPU, CUDA): pointer arithmetic and partial overlap exist */
} api_fixture;

static void test_context_queries(api_fixture *f) {
    pscan_backend b = PSCAN_BACKEND_AUTO;
    char name[128] = "";
    long long code = -1;
    const char *log = NULL;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_backend(f->ctx, &b));
    EXPECT(b == f->backend);
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_backend(f->ctx, NULL));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_device_name(f->ctx, name, sizeof name));
    EXPECT(name[0] != '\0');
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_device_name(f->ctx, NULL, 16));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_context_device_name(f->ctx, name, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_native_error(f->ctx, &code));
    EXPECT(code == 0);
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_native_error(f->ctx, NULL));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_build_log(f->ctx, &log));
    EXPECT(log != NULL);
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_build_log(f->ctx, NULL));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_set_threads(f->ctx, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_reserve(f->ctx, 4096));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));

    void *p = (void *)&code;
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_alloc(f->ctx, 16, NULL));
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_memory_alloc(f->ctx, 0, &p));
    EXPECT(p == NULL);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, NULL));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, 64, &p));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_upload(f->ctx, p, NULL, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_upload(f->ctx, NULL, name, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_download(f->ctx, NULL, p, 8));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_memory_download(f->ctx, name, NULL, 8));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, NULL, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, NULL, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_memory_copy(f->ctx, p, p, 8));
    if (f->addresses) EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_memory_copy(f->ctx, (char *)p + 4, p, 8));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, p));
}

/* Scans n i32 elements of host in[] on the device and leaves the result in host out[]. */
static pscan_status scan_i32(api_fixture *f, const pscan_scan_desc *desc, const int32_t *in, int32_t *out,
                             size_t n) {
    void *d = NULL;
    pscan_status s = pscan_memory_alloc(f->ctx, n * sizeof(int32_t), &d);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(f->ctx, d, in, n * sizeof(int32_t));
    if (s == PSCAN_SUCCESS) s = pscan_scan(f->ctx, desc, d, d, n, NULL, 0);
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(f->ctx, out, d, n * sizeof(int32_t));
    pscan_status sync = pscan_context_synchronize(f->ctx);
    if (s == PSCAN_SUCCESS) s = sync;
    pscan_memory_free(f->ctx, d);
    return s;
}

#define EXPECT_ARRAY8(got, ...)                                                                              \
    do {                                                                                                     \
        static const int32_t want_[8] = {__VA_ARGS__};                                                       \
        EXPECT(memcmp((got), want_, sizeof want_) == 0);                                                     \
    } while (0)

/* The header's worked example: in = [3 1 7 0 4 1 6 3]. */
static void test_worked_example(api_fixture *f) {
    static const int32_t in[8] = {3, 1, 7, 0, 4, 1, 6, 3};
    int32_t out[8], init = 10;
    pscan_scan_desc d = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 3, 4, 11, 11, 15, 16, 22, 25);
    d.flags = PSCAN_SCAN_EXCLUSIVE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 0, 3, 4, 11, 11, 15, 16, 22);
    d.flags = PSCAN_SCAN_REVERSE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 25, 22, 21, 14, 14, 10, 9, 3);
    d.flags = PSCAN_SCAN_REVERSE | PSCAN_SCAN_EXCLUSIVE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 22, 21, 14, 14, 10, 9, 3, 0);
    d.init = &init;
    d.flags = 0;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 13, 14, 21, 21, 25, 26, 32, 35);
    d.flags = PSCAN_SCAN_EXCLUSIVE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 10, 13, 14, 21, 21, 25, 26, 32);
    d.flags = PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, 32, 31, 24, 24, 20, 19, 13, 10);
    /* max, exclusive: the identity (INT32_MIN) comes first */
    d.op = PSCAN_OP_MAX;
    d.init = NULL;
    d.flags = PSCAN_SCAN_EXCLUSIVE;
    EXPECT_STATUS(PSCAN_SUCCESS, scan_i32(f, &d, in, out, 8));
    EXPECT_ARRAY8(out, INT32_MIN, 3, 3, 7, 7, 7, 7, 7);
}

static void test_scan_arguments(api_fixture *f) {
    const size_t n = 1000;
    void *in = NULL, *out = NULL;
    int32_t host[1000];
    for (size_t i = 0; i < n; i++) host[i] = (int32_t)(i % 7);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, 2 * n * sizeof(int32_t), &in));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, n * sizeof(int32_t), &out));
    if (!in || !out) return;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, in, host, n * sizeof(int32_t)));

    pscan_scan_desc good = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    pscan_scan_desc d = good;
    size_t bytes = 0;

    /* NULL pointers */
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan(NULL, &d, in, out, n, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan(f->ctx, NULL, in, out, n, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan(f->ctx, &d, NULL, out, n, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan(f->ctx, &d, in, NULL, n, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_temp_bytes(NULL, &d, n, &bytes));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_temp_bytes(f->ctx, NULL, n, &bytes));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_scan_temp_bytes(f->ctx, &d, n, NULL));

    /* values outside the closed enums and flags */
    static const int bad_types[] = {PSCAN_TYPE_COUNT, -1, 1000};
    for (size_t i = 0; i < sizeof bad_types / sizeof bad_types[0]; i++) {
        d = good;
        d.type = (pscan_type)bad_types[i];
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
        d = good;
        d.op = (pscan_op)(bad_types[i] == PSCAN_TYPE_COUNT ? PSCAN_OP_COUNT : bad_types[i]);
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
        d = good;
        d.algo = (pscan_algo)(bad_types[i] == PSCAN_TYPE_COUNT ? PSCAN_ALGO_COUNT : bad_types[i]);
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
    }
    static const unsigned bad_flags[] = {8u, 0x80000000u, PSCAN_SCAN_EXCLUSIVE | 16u}; /* 4: WIDEN (test_widen) */
    for (size_t i = 0; i < sizeof bad_flags / sizeof bad_flags[0]; i++) {
        d = good;
        d.flags = bad_flags[i];
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
    }

    /* bitwise operators need an integer type */
    static const pscan_op bitwise[] = {PSCAN_OP_AND, PSCAN_OP_OR, PSCAN_OP_XOR};
    static const pscan_type floats[] = {PSCAN_TYPE_F32, PSCAN_TYPE_F64};
    for (size_t i = 0; i < 3; i++) {
        for (size_t j = 0; j < 2; j++) {
            d = good;
            d.op = bitwise[i];
            d.type = floats[j];
            EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
            EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
        }
    }

    /* n == 0 is a no-op, and the only case where NULL data is fine */
    d = good;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, NULL, NULL, 0, NULL, 0));
    bytes = 123;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &d, 0, &bytes));
    EXPECT(bytes == 0);

    /* an algorithm this backend does not implement */
    d = good;
    d.algo = f->backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_BLELLOCH : PSCAN_ALGO_THREADS;
    EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
    EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
    if (f->backend == PSCAN_BACKEND_CPU) {
        d.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
        EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_scan(f->ctx, &d, in, out, n, NULL, 0));
    }

    /* in place is fine; partial overlap in either direction is refused; adjacent ranges are fine */
    d = good;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, in, in, n, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
    if (f->addresses) {
        char *base = (char *)in;
        EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_scan(f->ctx, &d, base, base + 4, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_scan(f->ctx, &d, base + 4, base, n, NULL, 0));
        EXPECT_STATUS(PSCAN_ERROR_OVERLAP, pscan_scan(f->ctx, &d, base, base + 4 * (n - 1), n, NULL, 0));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, base, base + 4 * n, n, NULL, 0));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
    }

    /* temporary storage: exactly the size asked for works, one byte less is refused, for every algorithm */
    const pscan_algo *algos = NULL;
    size_t algo_count = test_backend_algos(f->backend, &algos);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, in, host, n * sizeof(int32_t))); /* scanned above */
    int some_needs_temp = 0;
    const uint64_t big_n = 1u << 20; /* large enough that multi-block algorithms need storage for totals */
    for (size_t k = 0; k < algo_count; k++) {
        d = good;
        d.algo = algos[k];
        bytes = 0;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &d, big_n, &bytes));
        size_t small_bytes = 0;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &d, n, &small_bytes));
        if (small_bytes == 0) continue;
        some_needs_temp = 1;
        void *temp = NULL;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, small_bytes, &temp));
        if (!temp) continue;
        EXPECT_STATUS(PSCAN_ERROR_TEMP_TOO_SMALL, pscan_scan(f->ctx, &d, in, out, n, temp, small_bytes - 1));
        EXPECT_STATUS(PSCAN_ERROR_TEMP_TOO_SMALL, pscan_scan(f->ctx, &d, in, out, n, temp, 0));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, in, out, n, temp, small_bytes));
        int32_t result[1000];
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, result, out, sizeof result));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
        int32_t acc = 0;
        int ok = 1;
        for (size_t i = 0; i < n; i++) {
            acc += host[i];
            ok &= result[i] == acc;
        }
        char what[128];
        snprintf(what, sizeof what, "algo %s with exactly %zu bytes of caller temp computes the scan",
                 pscan_algo_name(algos[k]), small_bytes);
        check(ok, __FILE__, __LINE__, what);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, temp));
    }
    /* the CPU's threaded scan keeps per-thread totals in temp; GPU multi-block algorithms keep block totals */
    if (f->backend == PSCAN_BACKEND_CPU) EXPECT(some_needs_temp);

    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, in));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, out));
}

/* Issue 8, bugs 2, 3 and 6: n beyond any memory is PSCAN_ERROR_TOO_LARGE (from the call and the size query
 * alike) with the output untouched; caller temp at any address works; which error wins at n == 0. */
static void test_limits_and_alignment(api_fixture *f) {
    const size_t n = 70001; /* several blocks for every GPU algorithm: they all need temp */
    unsigned char *host = (unsigned char *)malloc(n), *got = (unsigned char *)malloc(n);
    void *in = NULL, *out = NULL;
    if (!host || !got) return;
    for (size_t i = 0; i < n; i++) host[i] = (unsigned char)(i * 7 + 3);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, n, &in));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, n, &out));
    if (!in || !out) return;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, in, host, n));
    const pscan_algo *algos = NULL;
    const size_t algo_count = test_backend_algos(f->backend, &algos);
    const uint64_t huge[] = {UINT64_MAX, 1ull << 63, (1ull << 48) + 1, 1ull << 41};
    for (size_t k = 0; k <= algo_count; k++) {
        pscan_scan_desc d = {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, k < algo_count ? algos[k] : PSCAN_ALGO_AUTO, NULL};
        char what[160];
        for (size_t h = 0; h < sizeof huge / sizeof huge[0]; h++) {
            if (huge[h] == 1ull << 41 && f->backend != PSCAN_BACKEND_CUDA) continue; /* CUDA's own limit: 2^39 */
            size_t bytes = 12345;
            EXPECT_STATUS(PSCAN_ERROR_TOO_LARGE, pscan_scan_temp_bytes(f->ctx, &d, huge[h], &bytes));
            memset(got, 0x5a, n);
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, out, got, n));
            /* out of place, a range this long overlaps the next allocation: overlap is checked before the
             * backend's own limits (2^41 on CUDA), so only the sizes no address space holds are TOO_LARGE */
            if (huge[h] != 1ull << 41)
                EXPECT_STATUS(PSCAN_ERROR_TOO_LARGE, pscan_scan(f->ctx, &d, in, out, huge[h], NULL, 0));
            EXPECT_STATUS(PSCAN_ERROR_TOO_LARGE, pscan_scan(f->ctx, &d, out, out, huge[h], NULL, 0));
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, got, out, n));
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
            int untouched = 1;
            for (size_t i = 0; i < n; i++) untouched &= got[i] == 0x5a;
            snprintf(what, sizeof what, "algo %s, n = %llu refused with the output untouched",
                     pscan_algo_name(d.algo), (unsigned long long)huge[h]);
            check(untouched, __FILE__, __LINE__, what);
        }
        /* caller temp at any address: offsets 1..255 past an allocation */
        size_t bytes = 0;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &d, n, &bytes));
        if (bytes == 0 || !f->addresses) continue;
        void *temp = NULL;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, bytes + 256, &temp));
        if (!temp) continue;
        static const size_t offsets[] = {1, 2, 4, 7, 8, 100, 255};
        for (size_t o = 0; o < sizeof offsets / sizeof offsets[0]; o++) {
            memset(got, 0x5a, n);
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, out, got, n));
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, in, out, n, (char *)temp + offsets[o], bytes));
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, got, out, n));
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
            unsigned char acc = 0;
            int ok = 1;
            for (size_t i = 0; i < n; i++) ok &= got[i] == (acc = (unsigned char)(acc + host[i]));
            snprintf(what, sizeof what, "algo %s with caller temp at offset %zu", pscan_algo_name(d.algo), offsets[o]);
            check(ok, __FILE__, __LINE__, what);
        }
        /* the context is still usable afterwards (a misaligned access on CUDA would have poisoned it) */
        void *probe = NULL;
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, 64, &probe));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, probe));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, temp));
    }
    /* which error wins at n == 0: bad flags, then the operator, then the algorithm; then success */
    pscan_scan_desc d = {PSCAN_TYPE_F32, PSCAN_OP_XOR, 0x80, PSCAN_ALGO_AUTO, NULL};
    EXPECT_STATUS(PSCAN_ERROR_INVALID_VALUE, pscan_scan(f->ctx, &d, NULL, NULL, 0, NULL, 0));
    d.flags = 0;
    EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_OPERATOR, pscan_scan(f->ctx, &d, NULL, NULL, 0, NULL, 0));
    d.op = PSCAN_OP_SUM;
    d.algo = f->backend == PSCAN_BACKEND_CPU ? PSCAN_ALGO_BLELLOCH : PSCAN_ALGO_THREADS;
    EXPECT_STATUS(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, pscan_scan(f->ctx, &d, NULL, NULL, 0, NULL, 0));
    d.algo = PSCAN_ALGO_AUTO;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &d, NULL, NULL, 0, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, in));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_free(f->ctx, out));
    free(host);
    free(got);
}

/* A copy large enough to take the all-core path (and, on the CPU, streaming stores: 32 MiB and more), from and to
 * addresses off every alignment: every byte arrives and the bytes around the destination stay untouched. */
static void test_large_copy(api_fixture *f) {
    const size_t bytes = ((size_t)32 << 20) + 1001, room = bytes + 64;
    const size_t so = f->addresses ? 7 : 0, dof = f->addresses ? 3 : 0; /* OpenCL: cl_mem handles, no offsets */
    unsigned char *host = (unsigned char *)malloc(room), *back = (unsigned char *)malloc(room);
    void *src = NULL, *dst = NULL;
    if (!host || !back) {
        EXPECT(!"out of host memory");
        free(host);
        free(back);
        return;
    }
    test_rng rng = {test_mix64(0xC0B1)};
    for (size_t i = 0; i < room; i++) host[i] = (unsigned char)test_rng_next(&rng);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, room, &src));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, room, &dst));
    if (src && dst) {
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, src, host, room));
        memset(back, 0xA5, room);
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, dst, back, room));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_copy(f->ctx, (char *)dst + dof, (const char *)src + so, bytes));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, back, dst, room));
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
        EXPECT(memcmp(back + dof, host + so, bytes) == 0);
        size_t untouched = 0;
        for (size_t i = 0; i < room; i++) untouched += (i < dof || i >= dof + bytes) && back[i] == 0xA5;
        EXPECT(untouched == room - bytes);
    }
    pscan_memory_free(f->ctx, src);
    pscan_memory_free(f->ctx, dst);
    free(host);
    free(back);
}

/* AUTO on the CPU picks SERIAL or THREADS by the cores' load, which may differ between the size query and the
 * call: the size it asks for must serve either, for every primitive whose temp differs between them (the sort:
 * a serial sort keeps a row of counts per pass, a threaded one a row per thread; the threaded scan and
 * histogram need more than the serial ones). */
/* A caller's allocator (pscan_context_set_allocator) lending device memory through the memory helpers, counting
 * what it lends and gets back; refuse makes it return NULL. */
typedef struct counting_allocator {
    api_fixture *f;
    int allocs, releases, strays, refuse;
    size_t last_bytes;
    void *lent;
} counting_allocator;

static void *counting_alloc(void *user, size_t bytes) {
    counting_allocator *a = (counting_allocator *)user;
    a->allocs++;
    a->last_bytes = bytes;
    a->lent = NULL;
    if (a->refuse || pscan_memory_alloc(a->f->ctx, bytes, &a->lent) != PSCAN_SUCCESS) return NULL;
    return a->lent;
}

static void counting_release(void *user, void *ptr) {
    counting_allocator *a = (counting_allocator *)user;
    a->releases++;
    a->strays += ptr != a->lent; /* handed back something it did not lend */
    pscan_memory_free(a->f->ctx, ptr);
}

/* With an allocator set, a call with temp == NULL borrows exactly its size query's bytes and gives them back, once;
 * a refused loan fails the call with PSCAN_ERROR_OUT_OF_MEMORY and leaves its output as it was; NULL restores the
 * workspace (the allocator no longer asked). A scan of 2^20 + 7 i32 takes temp on every backend. */
static void test_allocator(api_fixture *f) {
    counting_allocator a;
    memset(&a, 0, sizeof a);
    a.f = f;
    const pscan_allocator mine = {counting_alloc, counting_release, &a};
    const pscan_allocator half = {counting_alloc, NULL, &a};
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_set_allocator(NULL, &mine));
    EXPECT_STATUS(PSCAN_ERROR_NULL_POINTER, pscan_context_set_allocator(f->ctx, &half));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_set_allocator(f->ctx, &mine));

    const size_t n = (1u << 20) + 7;
    int32_t *in = (int32_t *)malloc(n * sizeof *in), *out = (int32_t *)malloc(n * sizeof *out);
    void *d = NULL;
    if (!in || !out || pscan_memory_alloc(f->ctx, n * sizeof *in, &d) != PSCAN_SUCCESS) {
        EXPECT(!"allocation for test_allocator");
        free(in);
        free(out);
        pscan_context_set_allocator(f->ctx, NULL);
        return;
    }
    for (size_t i = 0; i < n; i++) in[i] = (int32_t)((uint32_t)(i * 2654435761u) >> 20) - 2048;
    pscan_scan_desc sd = {PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    size_t need = 0;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &sd, n, &need));
    EXPECT(need > 0);

    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, d, in, n * sizeof *in));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &sd, d, d, n, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, out, d, n * sizeof *out));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
    uint32_t run = 0;
    size_t wrong = 0;
    for (size_t i = 0; i < n; i++) wrong += (uint32_t)out[i] != (run += (uint32_t)in[i]);
    EXPECT(wrong == 0);
    EXPECT(a.allocs == 1 && a.releases == 1 && a.strays == 0 && a.last_bytes == need);

    a.refuse = 1; /* the loan refused: the call fails before anything is enqueued */
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_upload(f->ctx, d, in, n * sizeof *in));
    EXPECT_STATUS(PSCAN_ERROR_OUT_OF_MEMORY, pscan_scan(f->ctx, &sd, d, d, n, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_download(f->ctx, out, d, n * sizeof *out));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
    EXPECT(memcmp(out, in, n * sizeof *in) == 0);
    EXPECT(a.allocs == 2 && a.releases == 1);

    a.refuse = 0; /* a caller temp is used as given: no loan */
    void *t = NULL;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_memory_alloc(f->ctx, need, &t));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &sd, d, d, n, t, need));
    EXPECT(a.allocs == 2);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_set_allocator(f->ctx, NULL)); /* back to the workspace */
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan(f->ctx, &sd, d, d, n, NULL, 0));
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_synchronize(f->ctx));
    EXPECT(a.allocs == 2 && a.releases == 1);
    pscan_memory_free(f->ctx, t);
    pscan_memory_free(f->ctx, d);
    free(in);
    free(out);
}

static void test_auto_temp_serves_either(api_fixture *f) {
    if (f->backend != PSCAN_BACKEND_CPU) return;
    const uint64_t n = 100000;
    const pscan_algo algos[] = {PSCAN_ALGO_SERIAL, PSCAN_ALGO_THREADS};
    size_t automatic = 0, each = 0;
    for (int key = 0; key < 2; key++) { /* u8 keys sort in one pass, u64 in six */
        pscan_sort_desc d = {key ? PSCAN_TYPE_U64 : PSCAN_TYPE_U8, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_sort_temp_bytes(f->ctx, &d, n, &automatic));
        for (int a = 0; a < 2; a++) {
            d.algo = algos[a];
            EXPECT_STATUS(PSCAN_SUCCESS, pscan_sort_temp_bytes(f->ctx, &d, n, &each));
            if (automatic < each)
                fprintf(stderr, "sort, %s keys: AUTO's temp %zu bytes, %s's %zu\n", key ? "u64" : "u8", automatic,
                        pscan_algo_name(algos[a]), each);
            EXPECT(automatic >= each);
        }
    }
    pscan_scan_desc sd;
    memset(&sd, 0, sizeof sd);
    sd.type = PSCAN_TYPE_I32;
    sd.op = PSCAN_OP_SUM;
    sd.algo = PSCAN_ALGO_AUTO;
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &sd, n, &automatic));
    for (int a = 0; a < 2; a++) {
        sd.algo = algos[a];
        EXPECT_STATUS(PSCAN_SUCCESS, pscan_scan_temp_bytes(f->ctx, &sd, n, &each));
        if (automatic < each)
            fprintf(stderr, "scan: AUTO's temp %zu bytes, %s's %zu\n", automatic, pscan_algo_name(algos[a]), each);
        EXPECT(automatic >= each);
    }
}

int main(int argc, char **argv) {
    api_fixture f;
    memset(&f, 0, sizeof f);
    f.backend = PSCAN_BACKEND_CPU;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--backend") && i + 1 < argc &&
            pscan_backend_parse(argv[i + 1], &f.backend) == PSCAN_SUCCESS && f.backend != PSCAN_BACKEND_AUTO) {
            i++;
        } else {
            fprintf(stderr, "usage: test_api --backend cpu|cuda|opencl\n");
            return 2;
        }
    }

    test_status_names();
    test_type_op_names();
    test_backend_algo_names();
    test_version();
    test_context_edges();

    int rc = test_open_backend("test_api", f.backend, &f.ctx);
    if (rc == TEST_EXIT_SKIP) {
        if (failed) rc = 1; /* the backend-independent checks still count */
        printf("test_api: %lu passed, %lu failed\n", passed, failed);
        return rc;
    }
    if (rc != 0) {
        printf("test_api: %lu passed, %lu failed\n", passed, failed + 1);
        return 1;
    }
    f.addresses = f.backend != PSCAN_BACKEND_OPENCL;

    test_context_queries(&f);
    test_worked_example(&f);
    test_scan_arguments(&f);
    test_limits_and_alignment(&f);
    test_large_copy(&f);
    test_allocator(&f);
    test_auto_temp_serves_either(&f);
    EXPECT_STATUS(PSCAN_SUCCESS, pscan_context_destroy(f.ctx));

    printf("test_api: %lu passed, %lu failed\n", passed, failed);
    return failed ? 1 : 0;
}
