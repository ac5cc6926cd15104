/*
 * api.c - the public entry points: names, validation, defaults and dispatch to a backend.
 *
 * Every argument check happens here, once, so that backends see only well-formed requests and every backend
 * refuses bad input with the same status.
 */
#include <stdlib.h>
#include <string.h>

#include "pscan_internal.h"
#include "pscan_ops.h"

#define PSCAN_STRINGIFY_(x) #x
#define PSCAN_STRINGIFY(x) PSCAN_STRINGIFY_(x)

unsigned pscan_version(void) { return PSCAN_VERSION; }

const char *pscan_version_string(void) {
    return PSCAN_STRINGIFY(PSCAN_VERSION_MAJOR) "." PSCAN_STRINGIFY(PSCAN_VERSION_MINOR) "." PSCAN_STRINGIFY(
        PSCAN_VERSION_PATCH);
}

/* ---- names ------------------------------------------------------------------------------------------- */

const char *pscan_status_name(pscan_status status) {
    switch (status) {
#define PSCAN_CASE_(name, message)                                                                           \
    case name:                                                                                               \
        return #name;
        PSCAN_STATUS_LIST(PSCAN_CASE_)
#undef PSCAN_CASE_
    default:
        return "PSCAN_STATUS_UNKNOWN";
    }
}

const char *pscan_status_string(pscan_status status) {
    switch (status) {
#define PSCAN_CASE_(name, message)                                                                           \
    case name:                                                                                               \
        return message;
        PSCAN_STATUS_LIST(PSCAN_CASE_)
#undef PSCAN_CASE_
    default:
        return "unknown status code";
    }
}

static const char *const type_names[] = {
#define PSCAN_NAME_(NAME, name, ctype) #name,
    PSCAN_TYPE_LIST(PSCAN_NAME_)
#undef PSCAN_NAME_
};
static const size_t type_sizes[] = {
#define PSCAN_SIZE_(NAME, name, ctype) sizeof(ctype),
    PSCAN_TYPE_LIST(PSCAN_SIZE_)
#undef PSCAN_SIZE_
};
static const char *const op_names[] = {
#define PSCAN_NAME_(NAME, name) #name,
    PSCAN_OP_LIST(PSCAN_NAME_)
#undef PSCAN_NAME_
};
static const char *const backend_names[] = {
#define PSCAN_NAME_(NAME, name) #name,
    PSCAN_BACKEND_LIST(PSCAN_NAME_)
#undef PSCAN_NAME_
};
static const char *const algo_names[] = {
#define PSCAN_NAME_(NAME, name) #name,
    PSCAN_ALGO_LIST(PSCAN_NAME_)
#undef PSCAN_NAME_
};

/* Looks value up in a list of count names, for the four parse functions. */
static pscan_status parse_name(const char *const *names, int count, const char *text, int *value) {
    if (!text || !value) return PSCAN_ERROR_NULL_POINTER;
    for (int i = 0; i < count; i++) {
        if (strcmp(names[i], text) == 0) {
            *value = i;
            return PSCAN_SUCCESS;
        }
    }
    return PSCAN_ERROR_INVALID_VALUE;
}

#define PSCAN_IN_RANGE(value, count) ((unsigned)(value) < (unsigned)(count))

const char *pscan_type_name(pscan_type type) {
    return PSCAN_IN_RANGE(type, PSCAN_TYPE_COUNT) ? type_names[type] : NULL;
}
size_t pscan_type_size(pscan_type type) { return PSCAN_IN_RANGE(type, PSCAN_TYPE_COUNT) ? type_sizes[type] : 0; }
pscan_type pscan_type_widened(pscan_type type) {
    switch (type) {
#define PS_WIDEN_CASE_(NAME, T, WIDE, W)                                                                     \
    case PSCAN_TYPE_##NAME: return PSCAN_TYPE_##WIDE;
        PS_WIDEN_LIST(PS_WIDEN_CASE_)
#undef PS_WIDEN_CASE_
    default: return PSCAN_IN_RANGE(type, PSCAN_TYPE_COUNT) ? type : PSCAN_TYPE_COUNT;
    }
}
const char *pscan_op_name(pscan_op op) { return PSCAN_IN_RANGE(op, PSCAN_OP_COUNT) ? op_names[op] : NULL; }
const char *pscan_backend_name(pscan_backend backend) {
    return PSCAN_IN_RANGE(backend, PSCAN_BACKEND_COUNT) ? backend_names[backend] : NULL;
}
const char *pscan_algo_name(pscan_algo algo) {
    return PSCAN_IN_RANGE(algo, PSCAN_ALGO_COUNT) ? algo_names[algo] : NULL;
}

pscan_status pscan_type_parse(const char *name, pscan_type *type) {
    if (!type) return PSCAN_ERROR_NULL_POINTER;
    int v = 0;
    pscan_status s = parse_name(type_names, PSCAN_TYPE_COUNT, name, &v);
    if (s == PSCAN_SUCCESS) *type = (pscan_type)v;
    return s;
}
pscan_status pscan_op_parse(const char *name, pscan_op *op) {
    if (!op) return PSCAN_ERROR_NULL_POINTER;
    int v = 0;
    pscan_status s = parse_name(op_names, PSCAN_OP_COUNT, name, &v);
    if (s == PSCAN_SUCCESS) *op = (pscan_op)v;
    return s;
}
pscan_status pscan_backend_parse(const char *name, pscan_backend *backend) {
    if (!backend) return PSCAN_ERROR_NULL_POINTER;
    int v = 0;
    pscan_status s = parse_name(backend_names, PSCAN_BACKEND_COUNT, name, &v);
    if (s == PSCAN_SUCCESS) *backend = (pscan_backend)v;
    return s;
}
pscan_status pscan_algo_parse(const char *name, pscan_algo *algo) {
    if (!algo) return PSCAN_ERROR_NULL_POINTER;
    int v = 0;
    pscan_status s = parse_name(algo_names, PSCAN_ALGO_COUNT, name, &v);
    if (s == PSCAN_SUCCESS) *algo = (pscan_algo)v;
    return s;
}

/* ---- contexts ---------------------------------------------------------------------------------------- */

typedef pscan_status (*context_init_fn)(pscan_context *ctx, int gpu_only);

/* The constructor of each backend compiled in; NULL where it is absent. AUTO tries them GPU first. */
static context_init_fn backend_init(pscan_backend backend) {
    switch (backend) {
    case PSCAN_BACKEND_CPU:
        return ps_cpu_context_init;
#ifdef PSCAN_HAVE_CUDA
    case PSCAN_BACKEND_CUDA:
        return ps_cuda_context_init_default;
#endif
#ifdef PSCAN_HAVE_OPENCL
    case PSCAN_BACKEND_OPENCL:
        return ps_opencl_context_init_default;
#endif
    default:
        return NULL;
    }
}

pscan_status pscan_backend_compiled(pscan_backend backend, int *compiled) {
    if (!compiled) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(backend, PSCAN_BACKEND_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    *compiled = backend == PSCAN_BACKEND_AUTO || backend_init(backend) != NULL;
    return PSCAN_SUCCESS;
}

pscan_status ps_core_context_alloc(pscan_context **ctx) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    *ctx = (pscan_context *)calloc(1, sizeof(pscan_context));
    return *ctx ? PSCAN_SUCCESS : PSCAN_ERROR_OUT_OF_MEMORY;
}

pscan_status ps_core_set_build_log(pscan_context *ctx, const char *log) {
    free(ctx->build_log);
    ctx->build_log = NULL;
    if (!log) return PSCAN_SUCCESS;
    size_t len = strlen(log);
    ctx->build_log = (char *)malloc(len + 1);
    if (!ctx->build_log) return PSCAN_ERROR_OUT_OF_MEMORY;
    memcpy(ctx->build_log, log, len + 1);
    return PSCAN_SUCCESS;
}

pscan_status pscan_context_create(pscan_backend backend, pscan_context **ctx) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    *ctx = NULL;
    if (!PSCAN_IN_RANGE(backend, PSCAN_BACKEND_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    static const pscan_backend auto_order[] = {PSCAN_BACKEND_CUDA, PSCAN_BACKEND_OPENCL, PSCAN_BACKEND_CPU};
    const pscan_backend *order = backend == PSCAN_BACKEND_AUTO ? auto_order : &backend;
    size_t tries = backend == PSCAN_BACKEND_AUTO ? sizeof auto_order / sizeof auto_order[0] : 1;

    pscan_context *c = NULL;
    pscan_status s = ps_core_context_alloc(&c);
    if (s != PSCAN_SUCCESS) return s;
    s = PSCAN_ERROR_BACKEND_UNAVAILABLE;
    for (size_t i = 0; i < tries; i++) {
        context_init_fn init = backend_init(order[i]);
        if (!init) continue;
        s = init(c, backend == PSCAN_BACKEND_AUTO && order[i] != PSCAN_BACKEND_CPU);
        if (s == PSCAN_SUCCESS) {
            *ctx = c;
            return PSCAN_SUCCESS;
        }
        memset(c, 0, sizeof *c); /* a failed init leaves nothing allocated; start the next one clean */
    }
    free(c);
    return s;
}

pscan_status pscan_context_destroy(pscan_context *ctx) {
    if (!ctx) return PSCAN_SUCCESS;
    pscan_status s = ctx->ops->synchronize(ctx);
    if (ctx->workspace) ctx->ops->mem_free(ctx, ctx->workspace);
    for (size_t i = 0; i < ctx->retired_count; i++) ctx->ops->mem_free(ctx, ctx->retired[i]);
    free(ctx->retired);
    ctx->ops->destroy(ctx);
    free(ctx->build_log);
    free(ctx);
    return s;
}

pscan_status pscan_context_backend(const pscan_context *ctx, pscan_backend *backend) {
    if (!ctx || !backend) return PSCAN_ERROR_NULL_POINTER;
    *backend = ctx->ops->kind;
    return PSCAN_SUCCESS;
}

pscan_status pscan_context_device_name(const pscan_context *ctx, char *buf, size_t buf_bytes) {
    if (!ctx || !buf) return PSCAN_ERROR_NULL_POINTER;
    if (buf_bytes == 0) return PSCAN_ERROR_INVALID_VALUE;
    return ctx->ops->device_name(ctx, buf, buf_bytes);
}

pscan_status pscan_context_native_error(const pscan_context *ctx, long long *code) {
    if (!ctx || !code) return PSCAN_ERROR_NULL_POINTER;
    *code = ctx->native_error;
    return PSCAN_SUCCESS;
}

pscan_status pscan_context_build_log(const pscan_context *ctx, const char **log) {
    if (!ctx || !log) return PSCAN_ERROR_NULL_POINTER;
    *log = ctx->build_log ? ctx->build_log : "";
    return PSCAN_SUCCESS;
}

pscan_status pscan_context_set_threads(pscan_context *ctx, unsigned threads) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    return ctx->ops->set_threads ? ctx->ops->set_threads(ctx, threads) : PSCAN_SUCCESS;
}

pscan_status pscan_context_reserve(pscan_context *ctx, size_t bytes) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    if (bytes <= ctx->workspace_bytes) return PSCAN_SUCCESS;
    if (ctx->ops->capturing && ctx->ops->capturing(ctx)) return PSCAN_ERROR_TEMP_TOO_SMALL; /* (ps_backend_ops) */
    if (ctx->workspace && ctx->workspace_in_graph && ctx->retired_count == ctx->retired_cap) {
        /* room to retire the old workspace first, so that a refusal leaves everything as it was */
        const size_t cap = ctx->retired_cap ? 2 * ctx->retired_cap : 4;
        void **more = (void **)realloc(ctx->retired, cap * sizeof *more);
        if (!more) return PSCAN_ERROR_OUT_OF_MEMORY;
        ctx->retired = more;
        ctx->retired_cap = cap;
    }
    void *grown = NULL;
    pscan_status s = ctx->ops->mem_alloc(ctx, bytes, &grown);
    if (s != PSCAN_SUCCESS) return s;
    if (ctx->workspace && ctx->workspace_in_graph) {
        ctx->retired[ctx->retired_count++] = ctx->workspace; /* a graph's replays still write it */
    } else if (ctx->workspace) {
        /* the old workspace may still be in use by queued work: free is stream-ordered on every backend */
        s = ctx->ops->mem_free(ctx, ctx->workspace);
    }
    ctx->workspace = grown;
    ctx->workspace_bytes = bytes;
    ctx->workspace_in_graph = 0;
    return s;
}

void *ps_core_workspace_use(pscan_context *ctx) {
    if (ctx->ops->capturing && !ctx->workspace_in_graph && ctx->ops->capturing(ctx))
        ctx->workspace_in_graph = 1; /* kept past a later growth: pscan_context_reserve */
    return ctx->workspace;
}

pscan_status pscan_context_set_allocator(pscan_context *ctx, const pscan_allocator *allocator) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    if (allocator && (!allocator->alloc || !allocator->release)) return PSCAN_ERROR_NULL_POINTER;
    if (allocator) ctx->allocator = *allocator;
    else memset(&ctx->allocator, 0, sizeof ctx->allocator);
    return PSCAN_SUCCESS;
}

pscan_status pscan_context_synchronize(pscan_context *ctx) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    return ctx->ops->synchronize(ctx);
}

/* ---- memory ------------------------------------------------------------------------------------------ */

pscan_status pscan_memory_alloc(pscan_context *ctx, size_t bytes, void **ptr) {
    if (!ctx || !ptr) return PSCAN_ERROR_NULL_POINTER;
    *ptr = NULL;
    if (bytes == 0) return PSCAN_ERROR_INVALID_VALUE;
    return ctx->ops->mem_alloc(ctx, bytes, ptr);
}

pscan_status pscan_memory_free(pscan_context *ctx, void *ptr) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    return ptr ? ctx->ops->mem_free(ctx, ptr) : PSCAN_SUCCESS;
}

pscan_status pscan_memory_upload(pscan_context *ctx, void *device_dst, const void *host_src, size_t bytes) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    if (bytes == 0) return PSCAN_SUCCESS;
    if (!device_dst || !host_src) return PSCAN_ERROR_NULL_POINTER;
    return ctx->ops->mem_upload(ctx, device_dst, host_src, bytes);
}

pscan_status pscan_memory_copy(pscan_context *ctx, void *device_dst, const void *device_src, size_t bytes) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    if (bytes == 0) return PSCAN_SUCCESS;
    if (!device_dst || !device_src) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) {
        uintptr_t a = (uintptr_t)device_src, b = (uintptr_t)device_dst;
        if (a < b + bytes && b < a + bytes) return PSCAN_ERROR_OVERLAP;
    } else if (device_dst == device_src) {
        return PSCAN_ERROR_OVERLAP;
    }
    return ctx->ops->mem_copy(ctx, device_dst, device_src, bytes);
}

pscan_status pscan_memory_download(pscan_context *ctx, void *host_dst, const void *device_src, size_t bytes) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    if (bytes == 0) return PSCAN_SUCCESS;
    if (!host_dst || !device_src) return PSCAN_ERROR_NULL_POINTER;
    return ctx->ops->mem_download(ctx, host_dst, device_src, bytes);
}

/* ---- scan -------------------------------------------------------------------------------------------- */

/* The identity of every operator for every type it is defined for, generated from the two lists. */
#define PSCAN_ARITH_ROW_(NAME, name, T, U, LOWEST, HIGHEST)                                                  \
    [PSCAN_TYPE_##NAME][PSCAN_OP_SUM] = {.name = PSCAN_IDENTITY_SUM(T, LOWEST, HIGHEST)},                    \
    [PSCAN_TYPE_##NAME][PSCAN_OP_PRODUCT] = {.name = PSCAN_IDENTITY_PRODUCT(T, LOWEST, HIGHEST)},            \
    [PSCAN_TYPE_##NAME][PSCAN_OP_MIN] = {.name = PSCAN_IDENTITY_MIN(T, LOWEST, HIGHEST)},                    \
    [PSCAN_TYPE_##NAME][PSCAN_OP_MAX] = {.name = PSCAN_IDENTITY_MAX(T, LOWEST, HIGHEST)},
#define PSCAN_BITWISE_ROW_(NAME, name, T, U, LOWEST, HIGHEST)                                                \
    [PSCAN_TYPE_##NAME][PSCAN_OP_AND] = {.name = PSCAN_IDENTITY_AND(T, LOWEST, HIGHEST)},                    \
    [PSCAN_TYPE_##NAME][PSCAN_OP_OR] = {.name = PSCAN_IDENTITY_OR(T, LOWEST, HIGHEST)},                      \
    [PSCAN_TYPE_##NAME][PSCAN_OP_XOR] = {.name = PSCAN_IDENTITY_XOR(T, LOWEST, HIGHEST)},
static const ps_value identities[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT] = {
    PSCAN_ARITH_TYPE_LIST(PSCAN_ARITH_ROW_) PSCAN_ARITH_INT_TYPE_LIST(PSCAN_BITWISE_ROW_)};
#undef PSCAN_ARITH_ROW_
#undef PSCAN_BITWISE_ROW_

const ps_value *ps_core_identity(pscan_type type, pscan_op op) { return &identities[type][op]; }

/* ---- the request path every primitive shares: check, plan, temp, run ------------------------------------ */

/* Checks what every primitive shares: type, operator and algorithm enums, the size limit, and (for backends
 * whose handles are addresses) that no range wraps the address space. Fills the common fields of req. The
 * order of the checks is the contract's (docs/engine.md, "Which error wins"): NULL pointers, then enum and flag
 * values, then the operator for the type, then n too large; the algorithm is then planned even when n == 0,
 * so a program that asks for an algorithm the backend lacks hears it on its first call. */
static pscan_status request_prepare(const pscan_context *ctx, ps_primitive prim, pscan_type type, pscan_op op,
                                    const pscan_operator *user_op, pscan_algo algo, const void *init, uint64_t n,
                                    ps_request *req) {
    if (!PSCAN_IN_RANGE(algo, PSCAN_ALGO_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    /* a user operator defines the element and the operator: type and op are not looked at */
    if (user_op && user_op->ctx != ctx) return PSCAN_ERROR_INVALID_VALUE;
    if (!user_op && (!PSCAN_IN_RANGE(type, PSCAN_TYPE_COUNT) || !PSCAN_IN_RANGE(op, PSCAN_OP_COUNT)))
        return PSCAN_ERROR_INVALID_VALUE;
    if (!user_op && !ps_op_supports_type(op, type)) return PSCAN_ERROR_UNSUPPORTED_OPERATOR;
    memset(req, 0, sizeof *req);
    req->prim = prim;
    req->type = user_op ? (pscan_type)0 : type;
    req->op = user_op ? (pscan_op)0 : op;
    req->user_op = user_op;
    req->algo = algo;
    req->n = n;
    req->elem_bytes = user_op ? user_op->elem_bytes : pscan_type_size(type);
    if (init)
        memcpy(req->init.bytes, init, req->elem_bytes);
    else
        req->init = user_op ? user_op->identity : *ps_core_identity(type, op);
    if (n > PS_MAX_RANGE_BYTES / req->elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return PSCAN_SUCCESS;
}

static int ranges_overlap(const void *a, uint64_t abytes, const void *b, uint64_t bbytes);

/* A range [p, p + bytes) that wraps the address space cannot be real memory. */
static int range_wraps(const void *p, uint64_t bytes) { return (uintptr_t)p > UINTPTR_MAX - bytes; }

/* The temp bytes a caller must provide for a plan that needs `needed`: on address backends the core rounds
 * the caller's pointer up to PS_TEMP_ALIGN, so any address works and the slack is part of the size. */
static size_t temp_with_slack(const pscan_context *ctx, size_t needed) {
    return needed && ctx->ops->handles_are_addresses ? needed + PS_TEMP_ALIGN - 1 : needed;
}

static pscan_status request_temp_bytes(pscan_context *ctx, ps_request *req, size_t *bytes) {
    size_t needed = 0;
    pscan_status s = ctx->ops->plan(ctx, req, &needed);
    if (s != PSCAN_SUCCESS) return s;
    *bytes = temp_with_slack(ctx, needed);
    return PSCAN_SUCCESS;
}

/* Plans req, places its temp (the caller's, aligned, or the workspace) and runs it. */
static pscan_status request_submit(pscan_context *ctx, ps_request *req, void *temp, size_t temp_bytes) {
    size_t needed = 0;
    pscan_status s = ctx->ops->plan(ctx, req, &needed);
    if (s != PSCAN_SUCCESS) return s;
    if (req->n == 0 && (req->prim == PS_PRIM_SCAN || req->prim == PS_PRIM_RECURRENCE))
        return PSCAN_SUCCESS; /* the others still write a result */
    void *lent = NULL; /* the caller's allocator's, released once the call is enqueued */
    if (needed > 0) {
        const size_t with_slack = temp_with_slack(ctx, needed);
        if (temp) {
            if (temp_bytes < with_slack) return PSCAN_ERROR_TEMP_TOO_SMALL;
        } else if (ctx->allocator.alloc) {
            if (!(lent = ctx->allocator.alloc(ctx->allocator.user, with_slack))) return PSCAN_ERROR_OUT_OF_MEMORY;
            temp = lent;
            temp_bytes = with_slack;
        } else {
            s = pscan_context_reserve(ctx, with_slack);
            if (s != PSCAN_SUCCESS) return s;
            temp = ps_core_workspace_use(ctx);
            temp_bytes = ctx->workspace_bytes;
        }
        if (ctx->ops->handles_are_addresses) {
            const uintptr_t a = ((uintptr_t)temp + PS_TEMP_ALIGN - 1) & ~(uintptr_t)(PS_TEMP_ALIGN - 1);
            temp_bytes -= (size_t)(a - (uintptr_t)temp);
            temp = (void *)a;
        }
        req->temp = temp;
        req->temp_bytes = temp_bytes;
    }
    s = ctx->ops->run(ctx, req);
    if (lent) ctx->allocator.release(ctx->allocator.user, lent); /* stream-ordered: the allocator's contract */
    return s;
}

/* ---- scan -------------------------------------------------------------------------------------------- */

/* Checks desc and the buffers and fills req; the algorithm is still as the caller asked. */
static pscan_status scan_prepare(const pscan_context *ctx, const pscan_scan_desc *desc,
                                 const pscan_operator *user_op, const void *in, void *out, uint64_t n,
                                 ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if ((desc->flags & ~(PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE | PSCAN_SCAN_WIDEN)) != 0)
        return PSCAN_ERROR_INVALID_VALUE;
    const int widen = (desc->flags & PSCAN_SCAN_WIDEN) != 0;
    if (widen && user_op) return PSCAN_ERROR_INVALID_VALUE;
    /* a widened init is of the wide type: request_prepare copies only the narrow one */
    pscan_status s =
        request_prepare(ctx, PS_PRIM_SCAN, desc->type, desc->op, user_op, desc->algo, widen ? NULL : desc->init, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->exclusive = (desc->flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    req->reverse = (desc->flags & PSCAN_SCAN_REVERSE) != 0;
    req->out_type = req->type;
    req->out_elem_bytes = req->elem_bytes;
    if (widen) {
        if (desc->op != PSCAN_OP_SUM && desc->op != PSCAN_OP_PRODUCT) return PSCAN_ERROR_UNSUPPORTED_OPERATOR;
        req->out_type = pscan_type_widened(desc->type);
        req->out_elem_bytes = pscan_type_size(req->out_type);
        req->widen = req->out_type != req->type; /* a 64-bit type: an ordinary scan */
        if (desc->init)
            memcpy(req->init.bytes, desc->init, req->out_elem_bytes);
        else
            req->init = *ps_core_identity(req->out_type, desc->op);
        if (req->widen && !ctx->ops->scan_widen) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
        if (n > PS_MAX_RANGE_BYTES / req->out_elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    }
    req->in = in;
    req->out = out;
    if (n == 0) return PSCAN_SUCCESS;
    if (!in || !out) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) {
        const uint64_t in_bytes = n * req->elem_bytes, out_bytes = n * req->out_elem_bytes;
        if (range_wraps(in, in_bytes) || range_wraps(out, out_bytes)) return PSCAN_ERROR_TOO_LARGE;
        /* in place only element for element: a widened out over its own input would overwrite unread input */
        const int in_place = in == (const void *)out && !req->widen;
        if (!in_place && ranges_overlap(in, in_bytes, out, out_bytes)) return PSCAN_ERROR_OVERLAP;
    } else if (req->widen && in == (const void *)out) {
        return PSCAN_ERROR_OVERLAP; /* one buffer (OpenCL's handles): the same refusal as for addresses */
    }
    return PSCAN_SUCCESS;
}

static pscan_status scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *user_op,
                                    uint64_t n, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = scan_prepare(ctx, desc, user_op, NULL, NULL, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n; /* the size depends on n and the request, not on where the data is */
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n, size_t *bytes) {
    return scan_temp_bytes(ctx, desc, NULL, n, bytes);
}

pscan_status pscan_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out, uint64_t n,
                        void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = scan_prepare(ctx, desc, NULL, in, out, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

pscan_status pscan_scan_user_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *op,
                                        uint64_t n, size_t *bytes) {
    if (bytes) *bytes = 0;
    if (!op) return PSCAN_ERROR_NULL_POINTER;
    return scan_temp_bytes(ctx, desc, op, n, bytes);
}

pscan_status pscan_scan_user(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *op,
                             const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes) {
    if (!op) return PSCAN_ERROR_NULL_POINTER;
    ps_request req;
    pscan_status s = scan_prepare(ctx, desc, op, in, out, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* A scan whose initial value is read from device memory when it runs (ps_request.init_device), for the add-ons
 * that chain carries on the device (pscan_nccl.h). Only the CUDA single-pass scan reads init there; other
 * backends refuse, and the CUDA plan refuses its other algorithms. */
static pscan_status scan_init_device_prepare(const pscan_context *ctx, const pscan_scan_desc *desc, const void *in,
                                             void *out, uint64_t n, const void *init_device, ps_request *req) {
    pscan_status s = scan_prepare(ctx, desc, NULL, in, out, n, req);
    if (s != PSCAN_SUCCESS) return s;
    if (req->widen) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM; /* the device carry is of one type */
    if (!init_device) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->kind != PSCAN_BACKEND_CUDA) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    req->init_device = init_device;
    return PSCAN_SUCCESS;
}

pscan_status ps_core_scan_check_init_device(pscan_context *ctx, const pscan_scan_desc *desc, const void *in,
                                            void *out, uint64_t n, const void *init_device) {
    ps_request req;
    pscan_status s = scan_init_device_prepare(ctx, desc, in, out, n, init_device, &req);
    size_t needed = 0;
    return s != PSCAN_SUCCESS ? s : ctx->ops->plan(ctx, &req, &needed);
}

pscan_status ps_core_scan_init_device(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                      uint64_t n, const void *init_device, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = scan_init_device_prepare(ctx, desc, in, out, n, init_device, &req);
    return s != PSCAN_SUCCESS ? s : request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- scan of host memory (out of core) --------------------------------------------------------------- */

pscan_status pscan_context_set_host_chunk_bytes(pscan_context *ctx, size_t bytes) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    ctx->host_chunk_bytes = bytes;
    return PSCAN_SUCCESS;
}

size_t ps_core_host_piece_bytes(const pscan_context *ctx) {
    const size_t bytes = ctx->host_chunk_bytes ? ctx->host_chunk_bytes : (size_t)64 << 20;
    return bytes < 256 ? 256 : bytes / 256 * 256;
}

/* Out of core on a backend without a driver of its own (OpenCL): pieces of the context's piece size go up, are
 * scanned in place with the carry of the pieces before them as their initial value, and come down, one after
 * another; the carry passes through the host, one element per piece (the scan-order last output, combined with
 * the last input for an exclusive scan by a one-element inclusive scan, so the core needs no operator code). The
 * device holds one piece and one element. Slower than CUDA's pipeline (nothing overlaps), the same results. */
static pscan_status scan_host_pieces(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                     uint64_t n, size_t eb) {
    const uint64_t piece_max = ps_core_host_piece_bytes(ctx) / eb, piece = piece_max < n ? piece_max : n;
    const int reverse = (desc->flags & PSCAN_SCAN_REVERSE) != 0;
    void *buf = NULL, *one = NULL;
    pscan_status s = pscan_memory_alloc(ctx, (size_t)piece * eb, &buf);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, eb, &one);
    unsigned char carry[sizeof(ps_value)], last_in[sizeof(ps_value)];
    int have_carry = 0;
    for (uint64_t done = 0; s == PSCAN_SUCCESS && done < n;) {
        const uint64_t count = n - done < piece ? n - done : piece;
        const uint64_t begin = reverse ? n - done - count : done;
        const size_t bytes = (size_t)count * eb, last = reverse ? 0 : (size_t)(count - 1) * eb;
        const unsigned char *src = (const unsigned char *)in + begin * eb;
        unsigned char *dst = (unsigned char *)out + begin * eb;
        memcpy(last_in, src + last, eb); /* before an in-place piece is overwritten */
        pscan_scan_desc d = *desc;
        if (have_carry) d.init = carry;
        if ((s = pscan_memory_upload(ctx, buf, src, bytes)) != PSCAN_SUCCESS ||
            (s = pscan_scan(ctx, &d, buf, buf, count, NULL, 0)) != PSCAN_SUCCESS ||
            (s = pscan_memory_download(ctx, dst, buf, bytes)) != PSCAN_SUCCESS ||
            (s = ctx->ops->synchronize(ctx)) != PSCAN_SUCCESS)
            break;
        memcpy(carry, dst + last, eb);
        if (desc->flags & PSCAN_SCAN_EXCLUSIVE) {
            const pscan_scan_desc inclusive = {desc->type, desc->op, 0, PSCAN_ALGO_AUTO, carry};
            if ((s = pscan_memory_upload(ctx, one, last_in, eb)) != PSCAN_SUCCESS ||
                (s = pscan_scan(ctx, &inclusive, one, one, 1, NULL, 0)) != PSCAN_SUCCESS ||
                (s = pscan_memory_download(ctx, carry, one, eb)) != PSCAN_SUCCESS ||
                (s = ctx->ops->synchronize(ctx)) != PSCAN_SUCCESS)
                break;
        }
        have_carry = 1;
        done += count;
    }
    if (one) pscan_memory_free(ctx, one);
    if (buf) pscan_memory_free(ctx, buf);
    return s;
}

pscan_status pscan_scan_host(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                             uint64_t n) {
    ps_request req;
    pscan_status s = scan_prepare(ctx, desc, NULL, in, out, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    if (req.widen && !ctx->ops->data_in_host_memory) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM; /* pieces: one type */
    if (n > 0 && !ctx->ops->handles_are_addresses) {
        /* host pointers are addresses on every backend: the checks scan_prepare left to address backends */
        const uint64_t bytes = n * req.elem_bytes;
        if (range_wraps(in, bytes) || range_wraps(out, bytes)) return PSCAN_ERROR_TOO_LARGE;
        if (in != (const void *)out && ranges_overlap(in, bytes, out, bytes)) return PSCAN_ERROR_OVERLAP;
    }
    if (ctx->ops->data_in_host_memory) {
        s = request_submit(ctx, &req, NULL, 0);
        pscan_status w = ctx->ops->synchronize(ctx);
        return s != PSCAN_SUCCESS ? s : w;
    }
    if (ctx->ops->scan_host) return ctx->ops->scan_host(ctx, &req);
    /* the pieces' driver runs the single-pass scan, as CUDA's does */
    if (desc->algo != PSCAN_ALGO_AUTO && desc->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK)
        return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    return n == 0 ? PSCAN_SUCCESS : scan_host_pieces(ctx, desc, in, out, n, req.elem_bytes);
}

/* ---- reduce ------------------------------------------------------------------------------------------ */

static pscan_status reduce_prepare(const pscan_context *ctx, const pscan_reduce_desc *desc,
                                   const pscan_operator *user_op, const void *in, uint64_t n, void *result,
                                   ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    pscan_status s = request_prepare(ctx, PS_PRIM_REDUCE, desc->type, desc->op, user_op, desc->algo, desc->init, n,
                                     req);
    if (s != PSCAN_SUCCESS) return s;
    req->in = in;
    req->out = result;
    if (!result || (n > 0 && !in)) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses && n > 0) {
        const uint64_t bytes = n * req->elem_bytes;
        if (range_wraps(in, bytes) || range_wraps(result, req->elem_bytes)) return PSCAN_ERROR_TOO_LARGE;
        uintptr_t a = (uintptr_t)in, b = (uintptr_t)result;
        if (a < b + req->elem_bytes && b < a + bytes) return PSCAN_ERROR_OVERLAP;
    } else if (!ctx->ops->handles_are_addresses && n > 0 && in == (const void *)result) {
        return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

static pscan_status reduce_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc,
                                      const pscan_operator *user_op, uint64_t n, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static char dummy;
    ps_request req;
    pscan_status s = reduce_prepare(ctx, desc, user_op, NULL, 0, &dummy, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_reduce_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc, uint64_t n,
                                     size_t *bytes) {
    return reduce_temp_bytes(ctx, desc, NULL, n, bytes);
}

pscan_status pscan_reduce(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                          void *result, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = reduce_prepare(ctx, desc, NULL, in, n, result, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

pscan_status pscan_reduce_user_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc,
                                          const pscan_operator *op, uint64_t n, size_t *bytes) {
    if (bytes) *bytes = 0;
    if (!op) return PSCAN_ERROR_NULL_POINTER;
    return reduce_temp_bytes(ctx, desc, op, n, bytes);
}

pscan_status pscan_reduce_user(pscan_context *ctx, const pscan_reduce_desc *desc, const pscan_operator *op,
                               const void *in, uint64_t n, void *result, void *temp, size_t temp_bytes) {
    if (!op) return PSCAN_ERROR_NULL_POINTER;
    ps_request req;
    pscan_status s = reduce_prepare(ctx, desc, op, in, n, result, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- reduce of host memory (out of core) ----------------------------------------------------------------
 * The CPU reduces host memory in place of device memory. Elsewhere pieces of the context's piece size go up one
 * after another and each is reduced with the result of the pieces before it as its init (the carry of a reduce
 * is its result, so this is the scan's piece driver with a one-element output); *result is written last, on
 * the host, so a refused or failed call leaves it untouched. Device memory: one piece and one element. */
pscan_status pscan_reduce_host(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                               void *result) {
    ps_request req;
    pscan_status s = reduce_prepare(ctx, desc, NULL, in, n, result, &req);
    if (s != PSCAN_SUCCESS) return s;
    const size_t eb = req.elem_bytes;
    if (!ctx->ops->handles_are_addresses) {
        /* host pointers are addresses on every backend: the checks reduce_prepare left to address backends */
        if (n > 0 && (range_wraps(in, n * eb) || range_wraps(result, eb))) return PSCAN_ERROR_TOO_LARGE;
        if (ranges_overlap(in, n * eb, result, eb)) return PSCAN_ERROR_OVERLAP;
    }
    if (ctx->ops->data_in_host_memory) {
        s = request_submit(ctx, &req, NULL, 0);
        pscan_status w = ctx->ops->synchronize(ctx);
        return s != PSCAN_SUCCESS ? s : w;
    }
    const uint64_t piece_max = ps_core_host_piece_bytes(ctx) / eb, piece = piece_max < n ? piece_max : (n ? n : 1);
    void *buf = NULL, *slot = NULL;
    s = pscan_memory_alloc(ctx, (size_t)piece * eb, &buf);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, eb, &slot);
    unsigned char carry[sizeof(ps_value)];
    int have_carry = 0;
    uint64_t done = 0;
    do { /* once at n == 0: the reduce of nothing writes init */
        const uint64_t count = n - done < piece ? n - done : piece;
        pscan_reduce_desc d = *desc;
        if (have_carry) d.init = carry;
        if (s != PSCAN_SUCCESS ||
            (count && (s = pscan_memory_upload(ctx, buf, (const unsigned char *)in + done * eb, (size_t)count * eb)) !=
                          PSCAN_SUCCESS) ||
            (s = pscan_reduce(ctx, &d, buf, count, slot, NULL, 0)) != PSCAN_SUCCESS ||
            (s = pscan_memory_download(ctx, carry, slot, eb)) != PSCAN_SUCCESS ||
            (s = ctx->ops->synchronize(ctx)) != PSCAN_SUCCESS)
            break;
        have_carry = 1;
        done += count;
    } while (done < n);
    if (slot) pscan_memory_free(ctx, slot);
    if (buf) pscan_memory_free(ctx, buf);
    if (s == PSCAN_SUCCESS) memcpy(result, carry, eb);
    return s;
}

/* ---- select and partition ---------------------------------------------------------------------------- */

/* [a, a + abytes) and [b, b + bbytes) share a byte (empty ranges share none). */
static int ranges_overlap(const void *a, uint64_t abytes, const void *b, uint64_t bbytes) {
    const uintptr_t x = (uintptr_t)a, y = (uintptr_t)b;
    return abytes > 0 && bbytes > 0 && x < y + bbytes && y < x + abytes;
}

static pscan_status select_check_ranges(const ps_request *req, const pscan_select_desc *desc, uint64_t n);

/* Checks desc and the buffers and fills req. Inputs are keys, values, flags; outputs keys, values, count: no
 * output may touch an input or another output. */
static pscan_status select_prepare(const pscan_context *ctx, ps_primitive prim, const pscan_select_desc *desc,
                                   const void *keys_in, const void *values_in, uint64_t n, void *keys_out,
                                   void *values_out, void *count, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(desc->pred, PSCAN_PRED_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    const size_t vb = desc->value_bytes;
    if (vb != 0 && vb != 1 && vb != 2 && vb != 4 && vb != 8) return PSCAN_ERROR_INVALID_VALUE;
    /* no operator: sum is defined for every type, and init is unused */
    pscan_status s = request_prepare(ctx, prim, desc->type, PSCAN_OP_SUM, NULL, desc->algo, NULL, n, req);
    if (s != PSCAN_SUCCESS) return s;
    if (n > PS_MAX_RANGE_BYTES / (req->elem_bytes + vb + 1)) return PSCAN_ERROR_TOO_LARGE;
    req->value_bytes = vb;
    req->flags = desc->flags;
    req->pred = desc->pred;
    const int needs_operand = !desc->flags && desc->pred != PSCAN_PRED_NONZERO && desc->pred != PSCAN_PRED_UNIQUE;
    if (!count || (needs_operand && !desc->operand)) return PSCAN_ERROR_NULL_POINTER;
    if (needs_operand) memcpy(req->operand.bytes, desc->operand, req->elem_bytes);
    req->in = keys_in;
    req->out = keys_out;
    req->in2 = vb ? values_in : NULL;
    req->out2 = vb ? values_out : NULL;
    req->count = count;
    if (n == 0) return PSCAN_SUCCESS;
    if (!keys_in || !keys_out || (vb && (!values_in || !values_out))) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) return select_check_ranges(req, desc, n);
    const void *const outs[3] = {keys_out, req->out2, count};
    const void *const ins[3] = {keys_in, req->in2, desc->flags};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            if (outs[i] && outs[i] == ins[j]) return PSCAN_ERROR_OVERLAP;
        for (int j = i + 1; j < 3; j++)
            if (outs[i] && outs[i] == outs[j]) return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

/* The address checks of a select's buffers (req filled by select_prepare, n > 0): no range wraps, no output
 * touches an input or another output. */
static pscan_status select_check_ranges(const ps_request *req, const pscan_select_desc *desc, uint64_t n) {
    const size_t vb = req->value_bytes;
    const uint64_t kb = n * req->elem_bytes, vbytes = n * vb, fb = desc->flags ? n : 0;
    if (range_wraps(req->in, kb) || range_wraps(req->out, kb) || range_wraps(req->count, sizeof(uint64_t)) ||
        (vb && (range_wraps(req->in2, vbytes) || range_wraps(req->out2, vbytes))) || (fb && range_wraps(desc->flags, fb)))
        return PSCAN_ERROR_TOO_LARGE;
    const void *const outs[3] = {req->out, req->out2, req->count};
    const uint64_t out_bytes[3] = {kb, vbytes, sizeof(uint64_t)};
    const void *const ins[3] = {req->in, req->in2, desc->flags};
    const uint64_t in_bytes[3] = {kb, vbytes, fb};
    for (int i = 0; i < 3; i++) {
        for (int j = 0; j < 3; j++)
            if (ranges_overlap(outs[i], out_bytes[i], ins[j], in_bytes[j])) return PSCAN_ERROR_OVERLAP;
        for (int j = i + 1; j < 3; j++)
            if (ranges_overlap(outs[i], out_bytes[i], outs[j], out_bytes[j])) return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_select_temp_bytes(pscan_context *ctx, const pscan_select_desc *desc, uint64_t n, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static uint64_t dummy_count;
    static const unsigned char dummy_operand[8];
    ps_request req;
    pscan_select_desc d;
    if (desc) {
        d = *desc;
        d.operand = dummy_operand; /* the size does not depend on the constant */
        desc = &d;
    }
    /* a partition needs at least what a select does */
    pscan_status s = select_prepare(ctx, PS_PRIM_PARTITION, desc, NULL, NULL, 0, NULL, NULL, &dummy_count, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / (req.elem_bytes + req.value_bytes + 1)) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_select(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                          const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                          void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s =
        select_prepare(ctx, PS_PRIM_SELECT, desc, keys_in, values_in, n, keys_out, values_out, count, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

pscan_status pscan_partition(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                             const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                             void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s =
        select_prepare(ctx, PS_PRIM_PARTITION, desc, keys_in, values_in, n, keys_out, values_out, count, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* Out of core on every device backend: pieces of the context's piece size go up (keys, payloads, flags), are
 * selected on the device into device buffers, and their kept items come down to the end of what the pieces
 * before kept; the kept count comes down after each piece (the carry of a select is that count). UNIQUE compares
 * each piece's first key with the last key of the piece before on the host (the device keeps a piece's first
 * item): a repeat is dropped from the output. The CPU selects in place. */
pscan_status pscan_select_host(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                               const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count) {
    ps_request req;
    pscan_status s =
        select_prepare(ctx, PS_PRIM_SELECT, desc, keys_in, values_in, n, keys_out, values_out, count, &req);
    if (s != PSCAN_SUCCESS) return s;
    /* host pointers are addresses on every backend: the checks select_prepare left to address backends */
    if (n > 0 && !ctx->ops->handles_are_addresses && (s = select_check_ranges(&req, desc, n)) != PSCAN_SUCCESS)
        return s;
    if (ctx->ops->data_in_host_memory) {
        s = request_submit(ctx, &req, NULL, 0);
        pscan_status w = ctx->ops->synchronize(ctx);
        return s != PSCAN_SUCCESS ? s : w;
    }
    if (n == 0) {
        *count = 0;
        return PSCAN_SUCCESS;
    }
    const size_t eb = req.elem_bytes, vb = req.value_bytes;
    const uint64_t piece_max = ps_core_host_piece_bytes(ctx) / eb, piece = piece_max < n ? piece_max : n;
    void *kin = NULL, *kout = NULL, *vin = NULL, *vout = NULL, *fin = NULL, *kept_dev = NULL;
    s = pscan_memory_alloc(ctx, (size_t)piece * eb, &kin);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, (size_t)piece * eb, &kout);
    if (s == PSCAN_SUCCESS && vb) s = pscan_memory_alloc(ctx, (size_t)piece * vb, &vin);
    if (s == PSCAN_SUCCESS && vb) s = pscan_memory_alloc(ctx, (size_t)piece * vb, &vout);
    if (s == PSCAN_SUCCESS && desc->flags) s = pscan_memory_alloc(ctx, (size_t)piece, &fin);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, sizeof(uint64_t), &kept_dev);
    const unsigned char *keys = (const unsigned char *)keys_in, *values = (const unsigned char *)values_in;
    const unsigned char *flags = (const unsigned char *)desc->flags;
    unsigned char *kdst = (unsigned char *)keys_out, *vdst = (unsigned char *)values_out;
    pscan_select_desc d = *desc;
    d.flags = fin;
    const int unique = !desc->flags && desc->pred == PSCAN_PRED_UNIQUE;
    uint64_t total = 0;
    for (uint64_t done = 0; s == PSCAN_SUCCESS && done < n;) {
        const uint64_t m = n - done < piece ? n - done : piece;
        uint64_t kept = 0;
        if ((s = pscan_memory_upload(ctx, kin, keys + done * eb, (size_t)m * eb)) != PSCAN_SUCCESS ||
            (vb && (s = pscan_memory_upload(ctx, vin, values + done * vb, (size_t)m * vb)) != PSCAN_SUCCESS) ||
            (flags && (s = pscan_memory_upload(ctx, fin, flags + done, (size_t)m)) != PSCAN_SUCCESS) ||
            (s = pscan_select(ctx, &d, kin, vin, m, kout, vout, (uint64_t *)kept_dev, NULL, 0)) != PSCAN_SUCCESS ||
            (s = pscan_memory_download(ctx, &kept, kept_dev, sizeof kept)) != PSCAN_SUCCESS ||
            (s = ctx->ops->synchronize(ctx)) != PSCAN_SUCCESS)
            break;
        /* the device kept this piece's first item as unique; it repeats the last key of the piece before: it comes
         * down with the rest and is moved out, and the slot that frees keeps what the caller had there */
        const int repeat = unique && done > 0 && kept > 0 && memcmp(keys + done * eb, keys + (done - 1) * eb, eb) == 0;
        unsigned char kslot[sizeof(ps_value)], vslot[8];
        if (repeat) {
            memcpy(kslot, kdst + (total + kept - 1) * eb, eb);
            if (vb) memcpy(vslot, vdst + (total + kept - 1) * vb, vb);
        }
        if (kept > 0 && ((s = pscan_memory_download(ctx, kdst + total * eb, kout, (size_t)kept * eb)) != PSCAN_SUCCESS ||
                         (vb && (s = pscan_memory_download(ctx, vdst + total * vb, vout, (size_t)kept * vb)) !=
                                    PSCAN_SUCCESS) ||
                         (s = ctx->ops->synchronize(ctx)) != PSCAN_SUCCESS))
            break;
        if (repeat) {
            memmove(kdst + total * eb, kdst + (total + 1) * eb, (size_t)(kept - 1) * eb);
            memcpy(kdst + (total + kept - 1) * eb, kslot, eb);
            if (vb) {
                memmove(vdst + total * vb, vdst + (total + 1) * vb, (size_t)(kept - 1) * vb);
                memcpy(vdst + (total + kept - 1) * vb, vslot, vb);
            }
            kept--;
        }
        total += kept;
        done += m;
    }
    void *const bufs[6] = {kin, kout, vin, vout, fin, kept_dev};
    for (int i = 0; i < 6; i++)
        if (bufs[i]) pscan_memory_free(ctx, bufs[i]);
    if (s == PSCAN_SUCCESS) *count = total;
    return s;
}

/* ---- histogram --------------------------------------------------------------------------------------- */

/* Evenly spaced integer bins: lower < upper as int64_t (signed samples) or uint64_t (unsigned), the range minus
 * one, whether the 32-bit forms apply (samples up to 32 bits, bounds within the type's values and one past its
 * largest), and whether the range is bins times a power of two (one shift per sample). */
#define PS_HIST_INT_BOUNDS_(NAME, name, T, U, LOWEST, HIGHEST)                                               \
    static pscan_status hist_bounds_##name(const void *lo, const void *hi, ps_histogram_spec *h) {           \
        int narrow;                                                                                          \
        if ((LOWEST) < 0) {                                                                                  \
            int64_t lower, upper;                                                                            \
            memcpy(&lower, lo, sizeof lower);                                                                \
            memcpy(&upper, hi, sizeof upper);                                                                \
            if (!(lower < upper)) return PSCAN_ERROR_INVALID_VALUE;                                          \
            h->lower.i64 = lower;                                                                            \
            h->upper.i64 = upper;                                                                            \
            narrow = sizeof(T) <= 4 && lower >= (int64_t)(LOWEST) && upper - 1 <= (int64_t)(HIGHEST);        \
        } else {                                                                                             \
            uint64_t lower, upper;                                                                           \
            memcpy(&lower, lo, sizeof lower);                                                                \
            memcpy(&upper, hi, sizeof upper);                                                                \
            if (!(lower < upper)) return PSCAN_ERROR_INVALID_VALUE;                                          \
            h->lower.u64 = lower;                                                                            \
            h->upper.u64 = upper;                                                                            \
            narrow = sizeof(T) <= 4 && upper - 1 <= (uint64_t)(HIGHEST);                                     \
        }                                                                                                    \
        const uint64_t range = h->upper.u64 - h->lower.u64, q = range / h->bins;                             \
        const int shift = range % h->bins == 0 && (q & (q - 1)) == 0;                                       \
        h->range_m1 = range - 1;                                                                             \
        h->form = narrow ? (shift ? PS_HISTOGRAM_EVEN_SHIFT32 : PS_HISTOGRAM_EVEN_DIV32)                      \
                         : (shift ? PS_HISTOGRAM_EVEN_SHIFT64 : PS_HISTOGRAM_EVEN_DIV64);                     \
        while (shift && (1ull << h->shift) < q) h->shift++;                                                  \
        h->scale_f = (float)h->bins / (float)range;                                                          \
        h->scale_d = (double)h->bins / (double)range;                                                        \
        return PSCAN_SUCCESS;                                                                                \
    }
PSCAN_ARITH_INT_TYPE_LIST(PS_HIST_INT_BOUNDS_)
#undef PS_HIST_INT_BOUNDS_

/* Evenly spaced float bins: finite bounds, lower < upper, and a finite range and scale in the sample type. */
static pscan_status hist_bounds_f32(const void *lo, const void *hi, ps_histogram_spec *h) {
    float lower, upper;
    memcpy(&lower, lo, sizeof lower);
    memcpy(&upper, hi, sizeof upper);
    if (!isfinite(lower) || !isfinite(upper) || !(lower < upper)) return PSCAN_ERROR_INVALID_VALUE;
    const float range = upper - lower, scale = (float)h->bins / range;
    if (!isfinite(range) || !isfinite(scale)) return PSCAN_ERROR_INVALID_VALUE;
    h->lower.f32 = lower;
    h->upper.f32 = upper;
    h->form = PS_HISTOGRAM_EVEN_FLOAT;
    h->scale_f = scale;
    return PSCAN_SUCCESS;
}

static pscan_status hist_bounds_f64(const void *lo, const void *hi, ps_histogram_spec *h) {
    double lower, upper;
    memcpy(&lower, lo, sizeof lower);
    memcpy(&upper, hi, sizeof upper);
    if (!isfinite(lower) || !isfinite(upper) || !(lower < upper)) return PSCAN_ERROR_INVALID_VALUE;
    const double range = upper - lower, scale = (double)h->bins / range;
    if (!isfinite(range) || !isfinite(scale)) return PSCAN_ERROR_INVALID_VALUE;
    h->lower.f64 = lower;
    h->upper.f64 = upper;
    h->form = PS_HISTOGRAM_EVEN_FLOAT;
    h->scale_d = scale;
    return PSCAN_SUCCESS;
}

static pscan_status hist_bounds(pscan_type type, const void *lo, const void *hi, ps_histogram_spec *h) {
    switch (type) {
#define PS_HIST_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                     \
    case PSCAN_TYPE_##NAME: return hist_bounds_##name(lo, hi, h);
        PSCAN_ARITH_TYPE_LIST(PS_HIST_CASE_)
#undef PS_HIST_CASE_
    default: return PSCAN_ERROR_INVALID_VALUE;
    }
}

/* Checks desc and the buffers in the documented order (pscan.h) and fills req with the resolved bins. */
static pscan_status histogram_prepare(const pscan_context *ctx, const pscan_histogram_desc *desc,
                                      const void *samples, uint64_t n, void *counts, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(desc->type, PSCAN_TYPE_COUNT) || !PSCAN_IN_RANGE(desc->algo, PSCAN_ALGO_COUNT) ||
        (desc->count_type != PSCAN_TYPE_U32 && desc->count_type != PSCAN_TYPE_U64) ||
        (desc->flags & ~PSCAN_HISTOGRAM_ACCUMULATE) != 0 || desc->bins == 0 ||
        desc->bins > PSCAN_HISTOGRAM_MAX_BINS)
        return PSCAN_ERROR_INVALID_VALUE;
    ps_histogram_spec h;
    memset(&h, 0, sizeof h);
    h.bins = desc->bins;
    h.accumulate = (desc->flags & PSCAN_HISTOGRAM_ACCUMULATE) != 0;
    h.count_bytes = pscan_type_size(desc->count_type);
    if (desc->edges) {
        h.form = PS_HISTOGRAM_EDGES;
        h.edges = desc->edges;
    } else {
        if (!desc->lower || !desc->upper) return PSCAN_ERROR_NULL_POINTER;
        pscan_status s = hist_bounds(desc->type, desc->lower, desc->upper, &h);
        if (s != PSCAN_SUCCESS) return s;
    }
    /* no operator: sum is defined for every type, and init is unused */
    pscan_status s = request_prepare(ctx, PS_PRIM_HISTOGRAM, desc->type, PSCAN_OP_SUM, NULL, desc->algo, NULL, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->hist = h;
    req->in = samples;
    req->out = counts;
    if (!counts || (n > 0 && !samples)) return PSCAN_ERROR_NULL_POINTER;
    const uint64_t cb = (uint64_t)h.bins * h.count_bytes, sb = n * req->elem_bytes;
    const uint64_t eb = h.edges ? ((uint64_t)h.bins + 1) * req->elem_bytes : 0;
    if (ctx->ops->handles_are_addresses) {
        if ((uintptr_t)counts % h.count_bytes != 0) return PSCAN_ERROR_INVALID_VALUE;
        if (range_wraps(counts, cb) || (n > 0 && range_wraps(samples, sb)) || (eb && range_wraps(h.edges, eb)))
            return PSCAN_ERROR_TOO_LARGE;
        if (ranges_overlap(counts, cb, samples, sb) || ranges_overlap(counts, cb, h.edges, eb))
            return PSCAN_ERROR_OVERLAP;
    } else if ((n > 0 && counts == samples) || counts == h.edges) {
        return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

/* ---- sort -------------------------------------------------------------------------------------------- */

/* Checks desc and the buffers and fills req: inputs keys and values, outputs keys and values; no output may
 * touch an input or the other output. */
static pscan_status sort_prepare(const pscan_context *ctx, const pscan_sort_desc *desc, const void *keys_in,
                                 const void *values_in, uint64_t n, void *keys_out, void *values_out,
                                 ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    const size_t vb = desc->value_bytes;
    if (vb != 0 && vb != 1 && vb != 2 && vb != 4 && vb != 8) return PSCAN_ERROR_INVALID_VALUE;
    if ((desc->flags & ~PSCAN_SORT_DESCENDING) != 0) return PSCAN_ERROR_INVALID_VALUE;
    /* the bit range is a value check too: before n (request_prepare refuses a type outside the list) */
    const unsigned key_bits = 8u * (unsigned)pscan_type_size(desc->type);
    const unsigned end_bit = desc->end_bit ? desc->end_bit : key_bits;
    if (key_bits && (end_bit > key_bits || desc->begin_bit >= end_bit)) return PSCAN_ERROR_INVALID_VALUE;
    /* no operator: sum is defined for every type, and init is unused */
    pscan_status s = request_prepare(ctx, PS_PRIM_SORT, desc->type, PSCAN_OP_SUM, NULL, desc->algo, NULL, n, req);
    if (s != PSCAN_SUCCESS) return s;
    if (n > PS_MAX_RANGE_BYTES / (req->elem_bytes + vb)) return PSCAN_ERROR_TOO_LARGE;
    req->value_bytes = vb;
    req->begin_bit = desc->begin_bit;
    req->end_bit = end_bit;
    req->descending = (desc->flags & PSCAN_SORT_DESCENDING) != 0;
    req->in = keys_in;
    req->out = keys_out;
    req->in2 = vb ? values_in : NULL;
    req->out2 = vb ? values_out : NULL;
    if (n == 0) return PSCAN_SUCCESS;
    if (!keys_in || !keys_out || (vb && (!values_in || !values_out))) return PSCAN_ERROR_NULL_POINTER;
    const uint64_t kb = n * req->elem_bytes, vbytes = n * vb;
    if (ctx->ops->handles_are_addresses) {
        if (range_wraps(keys_in, kb) || range_wraps(keys_out, kb) ||
            (vb && (range_wraps(values_in, vbytes) || range_wraps(values_out, vbytes))))
            return PSCAN_ERROR_TOO_LARGE;
        if (ranges_overlap(keys_out, kb, keys_in, kb) || ranges_overlap(keys_out, kb, req->in2, vbytes) ||
            ranges_overlap(req->out2, vbytes, keys_in, kb) || ranges_overlap(req->out2, vbytes, req->in2, vbytes) ||
            ranges_overlap(keys_out, kb, req->out2, vbytes))
            return PSCAN_ERROR_OVERLAP;
    } else if (keys_out == keys_in || keys_out == req->in2 || (vb && (values_out == keys_in ||
               values_out == values_in || values_out == keys_out))) {
        return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_histogram_temp_bytes(pscan_context *ctx, const pscan_histogram_desc *desc, uint64_t n,
                                        size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static uint64_t dummy_counts; /* aligned for either count size; never written */
    ps_request req;
    pscan_status s = histogram_prepare(ctx, desc, NULL, 0, &dummy_counts, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n; /* the size depends on n and the bins, not on where the data is */
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_histogram(pscan_context *ctx, const pscan_histogram_desc *desc, const void *samples, uint64_t n,
                             void *counts, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = histogram_prepare(ctx, desc, samples, n, counts, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

pscan_status pscan_sort_temp_bytes(pscan_context *ctx, const pscan_sort_desc *desc, uint64_t n, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = sort_prepare(ctx, desc, NULL, NULL, 0, NULL, NULL, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n; /* the size depends on n and the request, not on where the data is */
    if (n > PS_MAX_RANGE_BYTES / (req.elem_bytes + req.value_bytes)) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_sort(pscan_context *ctx, const pscan_sort_desc *desc, const void *keys_in, const void *values_in,
                        uint64_t n, void *keys_out, void *values_out, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = sort_prepare(ctx, desc, keys_in, values_in, n, keys_out, values_out, &req);
    if (s != PSCAN_SUCCESS) return s;
    if (n == 0) { /* nothing to write; the plan still refuses an algorithm the backend lacks */
        size_t ignored = 0;
        return ctx->ops->plan(ctx, &req, &ignored);
    }
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- recurrence -------------------------------------------------------------------------------------- */

/* Checks desc and the buffers and fills req: in = a, in2 = b, out = y, init = y0 (0 without one). */
static pscan_status recurrence_prepare(const pscan_context *ctx, const pscan_recurrence_desc *desc, const void *a,
                                       const void *b, void *y, uint64_t n, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if ((desc->flags & ~PSCAN_SCAN_REVERSE) != 0 || !PSCAN_IN_RANGE(desc->type, PSCAN_TYPE_COUNT))
        return PSCAN_ERROR_INVALID_VALUE;
    if (desc->type != PSCAN_TYPE_F32 && desc->type != PSCAN_TYPE_F64) return PSCAN_ERROR_UNSUPPORTED_TYPE;
    /* the sum's identity is the 0 that y0 defaults to */
    pscan_status s = request_prepare(ctx, PS_PRIM_RECURRENCE, desc->type, PSCAN_OP_SUM, NULL, desc->algo, desc->y0,
                                     n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->order = 1;
    req->reverse = (desc->flags & PSCAN_SCAN_REVERSE) != 0;
    req->in = a;
    req->in2 = b;
    req->out = y;
    if (n == 0) return PSCAN_SUCCESS;
    if (!a || !b || !y) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) {
        const uint64_t bytes = n * req->elem_bytes;
        if (range_wraps(a, bytes) || range_wraps(b, bytes) || range_wraps(y, bytes)) return PSCAN_ERROR_TOO_LARGE;
        if ((y != a && ranges_overlap(y, bytes, a, bytes)) || (y != b && ranges_overlap(y, bytes, b, bytes)))
            return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_recurrence_temp_bytes(pscan_context *ctx, const pscan_recurrence_desc *desc, uint64_t n,
                                         size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = recurrence_prepare(ctx, desc, NULL, NULL, NULL, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_recurrence(pscan_context *ctx, const pscan_recurrence_desc *desc, const void *a, const void *b,
                              void *y, uint64_t n, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = recurrence_prepare(ctx, desc, a, b, y, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* Second order: the first order's checks with y2 and c added (in3 = c, init2 = y2). y may be exactly a, b or c:
 * every element's inputs are read before its y is written. */
static pscan_status recurrence2_prepare(const pscan_context *ctx, const pscan_recurrence2_desc *desc, const void *a,
                                        const void *b, const void *c, void *y, uint64_t n, ps_request *req) {
    if (!desc) return PSCAN_ERROR_NULL_POINTER;
    const pscan_recurrence_desc first = {desc->type, desc->flags, desc->algo, desc->y1};
    pscan_status s = recurrence_prepare(ctx, &first, a, b, y, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->order = 2;
    req->in3 = c;
    if (desc->y2) memcpy(req->init2.bytes, desc->y2, req->elem_bytes); /* else 0, from request_prepare */
    if (n == 0) return PSCAN_SUCCESS;
    if (!c) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) {
        const uint64_t bytes = n * req->elem_bytes;
        if (range_wraps(c, bytes)) return PSCAN_ERROR_TOO_LARGE;
        if (y != c && ranges_overlap(y, bytes, c, bytes)) return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_recurrence2_temp_bytes(pscan_context *ctx, const pscan_recurrence2_desc *desc, uint64_t n,
                                          size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = recurrence2_prepare(ctx, desc, NULL, NULL, NULL, NULL, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_recurrence2(pscan_context *ctx, const pscan_recurrence2_desc *desc, const void *a, const void *b,
                               const void *c, void *y, uint64_t n, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = recurrence2_prepare(ctx, desc, a, b, c, y, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* Horner's rule as a first-order recurrence with a constant multiplier: in NULL, operand = x, in2 = c. */
static pscan_status polyval_prepare(const pscan_context *ctx, const pscan_polyval_desc *desc, const void *c,
                                    void *values, uint64_t n, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if ((desc->flags & ~PSCAN_SCAN_REVERSE) != 0 || !PSCAN_IN_RANGE(desc->type, PSCAN_TYPE_COUNT))
        return PSCAN_ERROR_INVALID_VALUE;
    if (desc->type != PSCAN_TYPE_F32 && desc->type != PSCAN_TYPE_F64) return PSCAN_ERROR_UNSUPPORTED_TYPE;
    if (!desc->x) return PSCAN_ERROR_NULL_POINTER;
    pscan_status s = request_prepare(ctx, PS_PRIM_RECURRENCE, desc->type, PSCAN_OP_SUM, NULL, desc->algo, NULL, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->order = 1;
    req->reverse = (desc->flags & PSCAN_SCAN_REVERSE) != 0;
    memcpy(req->operand.bytes, desc->x, req->elem_bytes);
    req->in = NULL;
    req->in2 = c;
    req->out = values;
    if (n == 0) return PSCAN_SUCCESS;
    if (!c || !values) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops->handles_are_addresses) {
        const uint64_t bytes = n * req->elem_bytes;
        if (range_wraps(c, bytes) || range_wraps(values, bytes)) return PSCAN_ERROR_TOO_LARGE;
        if (values != c && ranges_overlap(values, bytes, c, bytes)) return PSCAN_ERROR_OVERLAP;
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_polyval_temp_bytes(pscan_context *ctx, const pscan_polyval_desc *desc, uint64_t n, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = polyval_prepare(ctx, desc, NULL, NULL, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / req.elem_bytes) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_polyval(pscan_context *ctx, const pscan_polyval_desc *desc, const void *c, void *values,
                           uint64_t n, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = polyval_prepare(ctx, desc, c, values, n, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- expand ------------------------------------------------------------------------------------------ */

static int is_expand_type(pscan_type t) { return t == PSCAN_TYPE_U32 || t == PSCAN_TYPE_U64; }

/* Checks desc and the buffers and fills req. Inputs are counts and values; outputs indices, ranks, values
 * and total: no output may touch an input or another output. */
static pscan_status expand_prepare(const pscan_context *ctx, const pscan_expand_desc *desc, const void *counts,
                                   const void *values_in, uint64_t n, void *indices_out, void *ranks_out,
                                   void *values_out, uint64_t capacity, void *total, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!is_expand_type(desc->count_type) || !is_expand_type(desc->index_type)) return PSCAN_ERROR_INVALID_VALUE;
    const size_t vb = desc->value_bytes;
    if (vb != 0 && vb != 1 && vb != 2 && vb != 4 && vb != 8) return PSCAN_ERROR_INVALID_VALUE;
    /* no operator: the counts are summed (saturating), init is unused */
    pscan_status s = request_prepare(ctx, PS_PRIM_EXPAND, desc->count_type, PSCAN_OP_SUM, NULL, desc->algo, NULL, n,
                                     req);
    if (s != PSCAN_SUCCESS) return s;
    const size_t cb = req->elem_bytes, ib = pscan_type_size(desc->index_type), ob = ib > vb ? ib : vb;
    if (n > PS_MAX_RANGE_BYTES / (cb + vb) || capacity > PS_MAX_RANGE_BYTES / ob) return PSCAN_ERROR_TOO_LARGE;
    /* u32 indices: every item index (< n) and every rank (< capacity) must fit */
    if (ib == 4 && (n > (1ull << 32) || capacity > (1ull << 32))) return PSCAN_ERROR_TOO_LARGE;
    req->value_bytes = vb;
    req->index_type = desc->index_type;
    req->capacity = capacity;
    req->in = counts;
    req->in2 = vb ? values_in : NULL;
    req->out = indices_out;
    req->ranks = ranks_out;
    req->out2 = vb ? values_out : NULL;
    req->count = total;
    if (!total) return PSCAN_ERROR_NULL_POINTER;
    if (n > 0 && (!counts || (vb && !values_in))) return PSCAN_ERROR_NULL_POINTER;
    if (n > 0 && capacity > 0 && vb && !values_out) return PSCAN_ERROR_NULL_POINTER;
    if (n == 0) return PSCAN_SUCCESS;
    const void *const outs[4] = {indices_out, ranks_out, req->out2, total};
    const uint64_t out_bytes[4] = {indices_out ? capacity * ib : 0, ranks_out ? capacity * ib : 0, capacity * vb,
                                   sizeof(uint64_t)};
    const void *const ins[2] = {counts, req->in2};
    const uint64_t in_bytes[2] = {n * cb, n * vb};
    if (ctx->ops->handles_are_addresses) {
        for (int i = 0; i < 4; i++)
            if (outs[i] && range_wraps(outs[i], out_bytes[i])) return PSCAN_ERROR_TOO_LARGE;
        for (int j = 0; j < 2; j++)
            if (ins[j] && range_wraps(ins[j], in_bytes[j])) return PSCAN_ERROR_TOO_LARGE;
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 2; j++)
                if (ranges_overlap(outs[i], out_bytes[i], ins[j], in_bytes[j])) return PSCAN_ERROR_OVERLAP;
            for (int j = i + 1; j < 4; j++)
                if (ranges_overlap(outs[i], out_bytes[i], outs[j], out_bytes[j])) return PSCAN_ERROR_OVERLAP;
        }
    } else {
        for (int i = 0; i < 4; i++) {
            for (int j = 0; j < 2; j++)
                if (outs[i] && outs[i] == ins[j]) return PSCAN_ERROR_OVERLAP;
            for (int j = i + 1; j < 4; j++)
                if (outs[i] && outs[i] == outs[j]) return PSCAN_ERROR_OVERLAP;
        }
    }
    return PSCAN_SUCCESS;
}

pscan_status pscan_expand_temp_bytes(pscan_context *ctx, const pscan_expand_desc *desc, uint64_t n,
                                     uint64_t capacity, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static uint64_t dummy_total;
    ps_request req;
    pscan_status s = expand_prepare(ctx, desc, NULL, NULL, 0, NULL, NULL, NULL, capacity, &dummy_total, &req);
    if (s != PSCAN_SUCCESS) return s;
    /* the size depends on n and capacity, not on where the data are */
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / (req.elem_bytes + req.value_bytes)) return PSCAN_ERROR_TOO_LARGE;
    if (req.index_type == PSCAN_TYPE_U32 && n > (1ull << 32)) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_expand(pscan_context *ctx, const pscan_expand_desc *desc, const void *counts,
                          const void *values_in, uint64_t n, void *indices_out, void *ranks_out, void *values_out,
                          uint64_t capacity, uint64_t *total, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = expand_prepare(ctx, desc, counts, values_in, n, indices_out, ranks_out, values_out, capacity,
                                    total, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- segmented scan and scan by key ------------------------------------------------------------------ */

/* Whether CSR offsets are well formed: offsets[0] == 0, ascending, offsets[count] == n. Host memory only. */
static int offsets_valid(const uint64_t *offsets, uint64_t count, uint64_t n) {
    if (offsets[0] != 0 || offsets[count] != n) return 0;
    for (uint64_t k = 0; k < count; k++)
        if (offsets[k] > offsets[k + 1]) return 0;
    return 1;
}

/* The two primitives' shared checks. The segments are flags (n bytes), offsets (segment_count + 1 words) or
 * keys (n of key_bytes), in device memory; out may equal in, never touch the segments. query: a size query,
 * which has no data pointers and checks everything else the call would. */
static pscan_status segscan_prepare(const pscan_context *ctx, ps_primitive prim, ps_segment_form form,
                                    pscan_type type, pscan_op op, unsigned flags, pscan_algo algo, const void *init,
                                    const void *in, void *out, uint64_t n, const void *segments,
                                    uint64_t segment_count, size_t key_bytes, int query, ps_request *req) {
    /* PSCAN_SEGSCAN_CHECK_OFFSETS belongs to pscan_segscan_desc (either form; with head flags it does nothing) */
    const unsigned known =
        PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE | (form != PS_SEGMENTS_KEYS ? PSCAN_SEGSCAN_CHECK_OFFSETS : 0u);
    if ((flags & ~known) != 0) return PSCAN_ERROR_INVALID_VALUE;
    pscan_status s = request_prepare(ctx, prim, type, op, NULL, algo, init, n, req);
    if (s != PSCAN_SUCCESS) return s;
    const uint64_t seg_bytes = form == PS_SEGMENTS_FLAGS ? 1 : form == PS_SEGMENTS_KEYS ? key_bytes : 0;
    if (n > PS_MAX_RANGE_BYTES / (req->elem_bytes + seg_bytes)) return PSCAN_ERROR_TOO_LARGE;
    if (form == PS_SEGMENTS_OFFSETS && segment_count > PS_MAX_RANGE_BYTES / sizeof(uint64_t) - 1)
        return PSCAN_ERROR_TOO_LARGE;
    req->exclusive = (flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    req->reverse = (flags & PSCAN_SCAN_REVERSE) != 0;
    req->check = (flags & PSCAN_SEGSCAN_CHECK_OFFSETS) != 0;
    req->seg_form = form;
    req->segment_count = form == PS_SEGMENTS_OFFSETS ? segment_count : 0;
    req->key_bytes = key_bytes;
    req->in = in;
    req->out = out;
    if (form == PS_SEGMENTS_FLAGS)
        req->flags = segments;
    else
        req->in2 = segments;
    /* n items cannot be cut into no segment (detectable without reading the offsets) */
    if (form == PS_SEGMENTS_OFFSETS && n > 0 && segment_count == 0) return PSCAN_ERROR_INVALID_VALUE;
    if (query) return PSCAN_SUCCESS;
    /* the offsets are read at n == 0 too (they must all be 0); the other forms need nothing then */
    if (form == PS_SEGMENTS_OFFSETS && !segments) return PSCAN_ERROR_NULL_POINTER;
    if (n == 0 && form != PS_SEGMENTS_OFFSETS) return PSCAN_SUCCESS;
    if ((n > 0 && (!in || !out)) || !segments) return PSCAN_ERROR_NULL_POINTER;
    const uint64_t vbytes = n * req->elem_bytes;
    const uint64_t sbytes = form == PS_SEGMENTS_OFFSETS ? (segment_count + 1) * sizeof(uint64_t) : n * seg_bytes;
    if (ctx->ops->handles_are_addresses) {
        if ((n > 0 && (range_wraps(in, vbytes) || range_wraps(out, vbytes))) || range_wraps(segments, sbytes))
            return PSCAN_ERROR_TOO_LARGE;
        if (in != (const void *)out && ranges_overlap(in, vbytes, out, vbytes)) return PSCAN_ERROR_OVERLAP;
        if (ranges_overlap(out, vbytes, segments, sbytes)) return PSCAN_ERROR_OVERLAP;
    } else if (n > 0 && out == segments) {
        return PSCAN_ERROR_OVERLAP;
    }
    /* offsets in host memory are checked here, once; a device backend checks them on the device */
    if (form == PS_SEGMENTS_OFFSETS && ctx->ops->kind == PSCAN_BACKEND_CPU &&
        !offsets_valid((const uint64_t *)segments, segment_count, n))
        return PSCAN_ERROR_INVALID_VALUE;
    return PSCAN_SUCCESS;
}

static pscan_status segscan_desc_prepare(const pscan_context *ctx, const pscan_segscan_desc *desc, const void *in,
                                         void *out, uint64_t n, const void *segments, uint64_t segment_count,
                                         int query, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(desc->segments, PSCAN_SEGMENTS_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    const ps_segment_form form = desc->segments == PSCAN_SEGMENTS_OFFSETS ? PS_SEGMENTS_OFFSETS : PS_SEGMENTS_FLAGS;
    return segscan_prepare(ctx, PS_PRIM_SEGMENTED_SCAN, form, desc->type, desc->op, desc->flags, desc->algo,
                           desc->init, in, out, n, segments, segment_count, 0, query, req);
}

pscan_status pscan_segmented_scan_temp_bytes(pscan_context *ctx, const pscan_segscan_desc *desc, uint64_t n,
                                             uint64_t segment_count, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = segscan_desc_prepare(ctx, desc, NULL, NULL, n, NULL, segment_count, 1, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_segmented_scan(pscan_context *ctx, const pscan_segscan_desc *desc, const void *in, void *out,
                                  uint64_t n, const void *segments, uint64_t segment_count, void *temp,
                                  size_t temp_bytes) {
    ps_request req;
    pscan_status s = segscan_desc_prepare(ctx, desc, in, out, n, segments, segment_count, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

static pscan_status by_key_prepare(const pscan_context *ctx, const pscan_scan_by_key_desc *desc, const void *keys,
                                   const void *in, void *out, uint64_t n, int query, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    /* keys compare bit for bit: integer types only (a float's -0.0 and NaN would make equality ambiguous) */
    if (!PSCAN_IN_RANGE(desc->key_type, PSCAN_TYPE_COUNT) || desc->key_type == PSCAN_TYPE_F32 ||
        desc->key_type == PSCAN_TYPE_F64)
        return PSCAN_ERROR_INVALID_VALUE;
    return segscan_prepare(ctx, PS_PRIM_SCAN_BY_KEY, PS_SEGMENTS_KEYS, desc->type, desc->op, desc->flags,
                           desc->algo, desc->init, in, out, n, keys, 0, pscan_type_size(desc->key_type), query, req);
}

pscan_status pscan_scan_by_key_temp_bytes(pscan_context *ctx, const pscan_scan_by_key_desc *desc, uint64_t n,
                                          size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    ps_request req;
    pscan_status s = by_key_prepare(ctx, desc, NULL, NULL, NULL, n, 1, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_scan_by_key(pscan_context *ctx, const pscan_scan_by_key_desc *desc, const void *keys,
                               const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = by_key_prepare(ctx, desc, keys, in, out, n, 0, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

/* ---- reduce by key and run-length encode ------------------------------------------------------------- */

/* keys_in (n of key_bytes) and values_in (n of elem_bytes; NULL for run-length encoding) in; keys_out,
 * values_out (n each) and the count out: no output may touch an input or another output. */
static pscan_status by_key_outputs_prepare(const pscan_context *ctx, const void *keys_in, const void *values_in,
                                           uint64_t n, void *keys_out, void *values_out, void *count,
                                           ps_request *req) {
    const size_t kb = req->key_bytes, vb = req->elem_bytes;
    if (n > PS_MAX_RANGE_BYTES / (kb + vb)) return PSCAN_ERROR_TOO_LARGE;
    req->in2 = keys_in;
    req->in = values_in;
    req->out = keys_out;
    req->out2 = values_out;
    req->count = count;
    if (!count) return PSCAN_ERROR_NULL_POINTER;
    if (n == 0) return PSCAN_SUCCESS;
    const int rle = req->prim == PS_PRIM_RUN_LENGTH_ENCODE;
    if (!keys_in || !keys_out || !values_out || (!rle && !values_in)) return PSCAN_ERROR_NULL_POINTER;
    const void *const outs[3] = {keys_out, values_out, count};
    const void *const ins[2] = {keys_in, values_in};
    if (ctx->ops->handles_are_addresses) {
        const uint64_t out_bytes[3] = {n * kb, n * vb, sizeof(uint64_t)};
        const uint64_t in_bytes[2] = {n * kb, rle ? 0 : n * vb};
        for (int i = 0; i < 3; i++)
            if (range_wraps(outs[i], out_bytes[i])) return PSCAN_ERROR_TOO_LARGE;
        for (int i = 0; i < 2; i++)
            if (range_wraps(ins[i], in_bytes[i])) return PSCAN_ERROR_TOO_LARGE;
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++)
                if (ranges_overlap(outs[i], out_bytes[i], ins[j], in_bytes[j])) return PSCAN_ERROR_OVERLAP;
            for (int j = i + 1; j < 3; j++)
                if (ranges_overlap(outs[i], out_bytes[i], outs[j], out_bytes[j])) return PSCAN_ERROR_OVERLAP;
        }
    } else {
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++)
                if (ins[j] && outs[i] == ins[j]) return PSCAN_ERROR_OVERLAP;
            for (int j = i + 1; j < 3; j++)
                if (outs[i] == outs[j]) return PSCAN_ERROR_OVERLAP;
        }
    }
    return PSCAN_SUCCESS;
}

static pscan_status rbk_prepare(const pscan_context *ctx, const pscan_reduce_by_key_desc *desc, const void *keys_in,
                                const void *values_in, uint64_t n, void *keys_out, void *values_out, void *count,
                                ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(desc->key_type, PSCAN_TYPE_COUNT) || desc->key_type == PSCAN_TYPE_F32 ||
        desc->key_type == PSCAN_TYPE_F64)
        return PSCAN_ERROR_INVALID_VALUE;
    pscan_status s = request_prepare(ctx, PS_PRIM_REDUCE_BY_KEY, desc->type, desc->op, NULL, desc->algo, desc->init, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->seg_form = PS_SEGMENTS_KEYS;
    req->key_bytes = pscan_type_size(desc->key_type);
    return by_key_outputs_prepare(ctx, keys_in, values_in, n, keys_out, values_out, count, req);
}

pscan_status pscan_reduce_by_key_temp_bytes(pscan_context *ctx, const pscan_reduce_by_key_desc *desc, uint64_t n,
                                            size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static uint64_t dummy_count;
    ps_request req;
    pscan_status s = rbk_prepare(ctx, desc, NULL, NULL, 0, NULL, NULL, &dummy_count, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / (req.key_bytes + req.elem_bytes)) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_reduce_by_key(pscan_context *ctx, const pscan_reduce_by_key_desc *desc, const void *keys_in,
                                 const void *values_in, uint64_t n, void *keys_out, void *values_out,
                                 uint64_t *run_count, void *temp, size_t temp_bytes) {
    ps_request req;
    pscan_status s = rbk_prepare(ctx, desc, keys_in, values_in, n, keys_out, values_out, run_count, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}

static pscan_status rle_prepare(const pscan_context *ctx, const pscan_rle_desc *desc, const void *in, uint64_t n,
                                void *values_out, void *lengths_out, void *count, ps_request *req) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (!PSCAN_IN_RANGE(desc->type, PSCAN_TYPE_COUNT)) return PSCAN_ERROR_INVALID_VALUE;
    /* the lengths are the "values": u64, summed, each item counting 1 */
    pscan_status s = request_prepare(ctx, PS_PRIM_RUN_LENGTH_ENCODE, PSCAN_TYPE_U64, PSCAN_OP_SUM, NULL, desc->algo, NULL, n, req);
    if (s != PSCAN_SUCCESS) return s;
    req->seg_form = PS_SEGMENTS_KEYS;
    req->key_bytes = pscan_type_size(desc->type);
    return by_key_outputs_prepare(ctx, in, NULL, n, values_out, lengths_out, count, req);
}

pscan_status pscan_run_length_encode_temp_bytes(pscan_context *ctx, const pscan_rle_desc *desc, uint64_t n,
                                                size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    static uint64_t dummy_count;
    ps_request req;
    pscan_status s = rle_prepare(ctx, desc, NULL, 0, NULL, NULL, &dummy_count, &req);
    if (s != PSCAN_SUCCESS) return s;
    req.n = n;
    if (n > PS_MAX_RANGE_BYTES / (req.key_bytes + req.elem_bytes)) return PSCAN_ERROR_TOO_LARGE;
    return request_temp_bytes(ctx, &req, bytes);
}

pscan_status pscan_run_length_encode(pscan_context *ctx, const pscan_rle_desc *desc, const void *in, uint64_t n,
                                     void *values_out, uint64_t *lengths_out, uint64_t *run_count, void *temp,
                                     size_t temp_bytes) {
    ps_request req;
    pscan_status s = rle_prepare(ctx, desc, in, n, values_out, lengths_out, run_count, &req);
    if (s != PSCAN_SUCCESS) return s;
    return request_submit(ctx, &req, temp, temp_bytes);
}
