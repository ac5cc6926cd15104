/* recurrence.c - the first-order linear recurrence y[i] = a[i] * y[i-1] + b[i] as a scan with your own operator,
 * written in plain C, beside the library's built-in pscan_recurrence.
 *
 * Each element is the affine map x -> a x + b; composing two maps (first `earlier`, then `later`) gives another:
 * x -> later.a (earlier.a x + earlier.b) + later.b. The composition is associative but not commutative, which is
 * all a scan needs: the inclusive scan of the maps gives, at i, the map from y[-1] to y[i], so
 * y[i] = A[i] * y0 + B[i]. The operator is handed over twice, as C source (compiled for the GPU at run time) and
 * as a host function (for the CPU backend); the library runs whichever the context's backend needs.
 *
 *   a = [0.5 0.5 0.5 0.5 0.5 0.5 0.5 0.5], b = [1 2 3 4 5 6 7 8], y0 = 0
 *   -> y = [1 2.5 4.25 6.125 8.0625 10.0312 12.0156 14.0078]
 */
#include <stdio.h>
#include <string.h>

#include <pscan.h>

#define N 8

typedef struct affine {
    float a, b; /* x -> a x + b */
} affine;

/* The combine for the GPU: C source, compiled by the backend (the struct must match the host's). */
static const char affine_source[] =
    "typedef struct { float a, b; } affine;\n"
    "affine compose(affine earlier, affine later) {\n"
    "    affine r; r.a = later.a * earlier.a; r.b = later.a * earlier.b + later.b; return r;\n"
    "}\n";

/* The same combine for the CPU backend. */
static void compose_host(const void *earlier_, const void *later_, void *out, void *user) {
    const affine *earlier = (const affine *)earlier_, *later = (const affine *)later_;
    affine r;
    (void)user;
    r.a = later->a * earlier->a;
    r.b = later->a * earlier->b + later->b;
    memcpy(out, &r, sizeof r);
}

/* The operator on ctx: its element (8 bytes, 4-aligned), its identity x -> x, its combine. */
static pscan_status affine_operator(pscan_context *ctx, pscan_operator **op) {
    const affine identity = {1.0f, 0.0f};
    pscan_user_op_desc desc;
    memset(&desc, 0, sizeof desc);
    desc.elem_bytes = sizeof(affine);
    desc.elem_align = 4;
    desc.identity = &identity;
    desc.source = affine_source;
    desc.type_name = "affine";
    desc.combine_name = "compose";
    desc.host_combine = compose_host;
    return pscan_operator_create(ctx, &desc, op);
}

static float absf(float x) { return x < 0 ? -x : x; }

static int fail(pscan_context *ctx, const char *what, pscan_status s) {
    const char *log = NULL;
    fprintf(stderr, "recurrence: %s: %s\n", what, pscan_status_string(s));
    if (s == PSCAN_ERROR_BUILD_FAILED && pscan_context_build_log(ctx, &log) == PSCAN_SUCCESS && log)
        fprintf(stderr, "%s\n", log);
    return 1;
}

int main(void) {
    affine maps[N], scanned[N];
    float a[N], b[N], y_builtin[N], y_serial[N], y0 = 0.0f, y = 0.0f;
    for (int i = 0; i < N; i++) {
        a[i] = 0.5f, b[i] = (float)(i + 1);
        maps[i].a = a[i], maps[i].b = b[i];
        y_serial[i] = y = a[i] * y + b[i]; /* the loop the scan replaces */
    }

    /* Any backend: the GPU if there is one. A backend that takes no user operators: the CPU instead. */
    pscan_context *ctx = NULL;
    pscan_operator *op = NULL;
    pscan_status s = pscan_context_create(PSCAN_BACKEND_AUTO, &ctx);
    if (s != PSCAN_SUCCESS) return fail(ctx, "context", s);
    s = affine_operator(ctx, &op);
    if (s == PSCAN_ERROR_UNSUPPORTED_OPERATOR) {
        pscan_context_destroy(ctx);
        ctx = NULL;
        if ((s = pscan_context_create(PSCAN_BACKEND_CPU, &ctx)) == PSCAN_SUCCESS) s = affine_operator(ctx, &op);
    }
    if (s != PSCAN_SUCCESS) return fail(ctx, "operator", s);

    /* Device memory (host memory on the CPU backend): the maps, their scan, and a, b, y for the built-in call. */
    void *d_maps = NULL, *d_scanned = NULL, *d_a = NULL, *d_b = NULL, *d_y = NULL;
    if ((s = pscan_memory_alloc(ctx, sizeof maps, &d_maps)) != PSCAN_SUCCESS ||
        (s = pscan_memory_alloc(ctx, sizeof scanned, &d_scanned)) != PSCAN_SUCCESS ||
        (s = pscan_memory_alloc(ctx, sizeof a, &d_a)) != PSCAN_SUCCESS ||
        (s = pscan_memory_alloc(ctx, sizeof b, &d_b)) != PSCAN_SUCCESS ||
        (s = pscan_memory_alloc(ctx, sizeof y_builtin, &d_y)) != PSCAN_SUCCESS)
        return fail(ctx, "memory", s);
    pscan_memory_upload(ctx, d_maps, maps, sizeof maps);
    pscan_memory_upload(ctx, d_a, a, sizeof a);
    pscan_memory_upload(ctx, d_b, b, sizeof b);

    /* 1. The scan of the maps with the user operator (type and op in the desc are not looked at). */
    pscan_scan_desc scan = {PSCAN_TYPE_U8, PSCAN_OP_SUM, 0, PSCAN_ALGO_AUTO, NULL};
    if ((s = pscan_scan_user(ctx, &scan, op, d_maps, d_scanned, N, NULL, 0)) != PSCAN_SUCCESS)
        return fail(ctx, "pscan_scan_user", s);
    /* 2. The same recurrence, built in. */
    pscan_recurrence_desc rec = {PSCAN_TYPE_F32, 0, PSCAN_ALGO_AUTO, &y0};
    if ((s = pscan_recurrence(ctx, &rec, d_a, d_b, d_y, N, NULL, 0)) != PSCAN_SUCCESS)
        return fail(ctx, "pscan_recurrence", s);
    pscan_memory_download(ctx, scanned, d_scanned, sizeof scanned);
    pscan_memory_download(ctx, y_builtin, d_y, sizeof y_builtin);
    if ((s = pscan_context_synchronize(ctx)) != PSCAN_SUCCESS) return fail(ctx, "synchronize", s);

    int ok = 1;
    for (int i = 0; i < N; i++) {
        const float y_scan = scanned[i].a * y0 + scanned[i].b; /* the map from y[-1] to y[i], applied */
        printf("y[%d] = %g (scan) %g (pscan_recurrence) %g (loop)\n", i, y_scan, y_builtin[i], y_serial[i]);
        ok &= absf(y_scan - y_serial[i]) <= 1e-5f * (1 + absf(y_serial[i])) &&
              absf(y_builtin[i] - y_serial[i]) <= 1e-5f * (1 + absf(y_serial[i]));
    }

    pscan_memory_free(ctx, d_maps), pscan_memory_free(ctx, d_scanned);
    pscan_memory_free(ctx, d_a), pscan_memory_free(ctx, d_b), pscan_memory_free(ctx, d_y);
    pscan_operator_destroy(op);
    pscan_context_destroy(ctx);
    return ok ? 0 : 1;
}
