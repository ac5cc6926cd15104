/*
 * cuda_backend.cu - the CUDA backend behind the common table: device memory, one stream, the algorithms.
 *
 * A context holds one device and one stream: its own (pscan_context_create) or the caller's
 * (pscan_cuda_context_create). Everything is enqueued on that stream; only synchronize (and destroy, through
 * the core) waits. Memory is stream-ordered (cudaMallocAsync / cudaFreeAsync) where the device has memory
 * pools, so that growing the workspace never waits for queued work that still reads the old one.
 *
 * The algorithms live one per file (1_hillis_steele.cu ... 5_decoupled_lookback.cu) behind the launcher
 * contract of cuda_backend.h; this file only picks one and maps CUDA errors to pscan statuses.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_backend.h"
#include "pscan_cuda.h"

typedef struct cuda_state {
    ps_cuda_device dev;
    int owns_stream;
    int has_pools; /* cudaMallocAsync works on this device */
    ps_cuda_user_module *user_modules; /* user operators compiled on this context (user_op.cu) */
    char name[256];
    ps_cuda_host_staging staging; /* pscan_scan_host's pinned buffers (host_scan.cu) */
} cuda_state;

static cuda_state *state_of(const pscan_context *ctx) { return (cuda_state *)ctx->backend; }

/* Makes the context's device current for one backend call and restores the caller's afterwards, so that a
 * context keeps working when the calling thread has moved to another device, without side effects. */
struct device_guard {
    int previous;
    bool switched;
    explicit device_guard(int device) : previous(0), switched(false) {
        if (cudaGetDevice(&previous) == cudaSuccess && previous != device)
            switched = cudaSetDevice(device) == cudaSuccess;
    }
    ~device_guard() {
        if (switched) cudaSetDevice(previous);
    }
};

/* Records a failing CUDA call on the context and turns it into a status. The failed runtime call also left its
 * error as the thread's last error (a launch through cudaLaunchKernelEx or a copy returns it without clearing it);
 * it is cleared here, so that the next call's launch check (cudaGetLastError after <<<>>>) does not report it. A
 * sticky error (a fault on the device) stays whatever is cleared. */
static pscan_status fail(pscan_context *ctx, cudaError_t err) {
    if (err == cudaSuccess) return PSCAN_SUCCESS;
    cudaGetLastError();
    ctx->native_error = (long long)err;
    return err == cudaErrorMemoryAllocation ? PSCAN_ERROR_OUT_OF_MEMORY : PSCAN_ERROR_BACKEND;
}

/* ---- algorithms -------------------------------------------------------------------------------------- */

/* Indexed by pscan_algo; NULL where the backend lacks the algorithm. */
static const ps_cuda_algorithm *algorithm_of(pscan_algo algo) {
    switch (algo) {
    case PSCAN_ALGO_HILLIS_STEELE:
        return &ps_cuda_hillis_steele;
    case PSCAN_ALGO_BLELLOCH_UNPADDED:
        return &ps_cuda_blelloch_unpadded;
    case PSCAN_ALGO_BLELLOCH:
        return &ps_cuda_blelloch;
    case PSCAN_ALGO_SCAN_THEN_PROPAGATE:
        return &ps_cuda_scan_then_propagate;
    case PSCAN_ALGO_REDUCE_THEN_SCAN:
        return &ps_cuda_reduce_then_scan;
    case PSCAN_ALGO_DECOUPLED_LOOKBACK:
        return &ps_cuda_decoupled_lookback;
    default:
        return NULL;
    }
}

/* The backend's fastest for every primitive: the single-pass chain (5_decoupled_lookback.cu, reduce.cu). */
static const pscan_algo cuda_auto_algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;

/* Grids of the multi-pass algorithms reach 2^31 - 1 blocks of at least 256 elements; beyond 2^39 elements no
 * CUDA algorithm can launch (and no GPU has the memory). The single-pass ones check their own tile count. */
#define PS_CUDA_MAX_N (1ull << 39)

static pscan_status cuda_scan_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    const ps_cuda_algorithm *a = algorithm_of(req->algo);
    if (!a) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    return a->plan(req, dev, bytes);
}

static cudaError_t cuda_scan_run(const ps_request *req, const ps_cuda_device *dev) {
    return algorithm_of(req->algo)->scan(req, dev);
}

/* One {plan, run} per primitive, generated from the core's list: a primitive without a CUDA entry fails to
 * link. The scan's go through the algorithm table above, the others through their own file (select.cu runs
 * select and partition). */
typedef struct cuda_primitive {
    pscan_status (*plan)(const ps_request *, const ps_cuda_device *, size_t *);
    cudaError_t (*run)(const ps_request *, const ps_cuda_device *);
} cuda_primitive;
#define CUDA_PRIMITIVE_(NAME, name) {ps_cuda_##name##_plan, ps_cuda_##name##_run},
#define ps_cuda_scan_plan cuda_scan_plan
#define ps_cuda_scan_run cuda_scan_run
#define ps_cuda_partition_plan ps_cuda_select_plan /* select.cu runs both */
#define ps_cuda_partition_run ps_cuda_select_run
#define ps_cuda_segmented_scan_plan ps_cuda_segscan_plan /* segmented_scan.cu runs both */
#define ps_cuda_segmented_scan_run ps_cuda_segscan_run
#define ps_cuda_scan_by_key_plan ps_cuda_segscan_plan
#define ps_cuda_scan_by_key_run ps_cuda_segscan_run
#define ps_cuda_reduce_by_key_plan ps_cuda_rbk_plan /* reduce_by_key.cu runs both */
#define ps_cuda_reduce_by_key_run ps_cuda_rbk_run
#define ps_cuda_run_length_encode_plan ps_cuda_rbk_plan
#define ps_cuda_run_length_encode_run ps_cuda_rbk_run
static const cuda_primitive cuda_primitives[PS_PRIM_COUNT] = {PS_PRIMITIVE_LIST(CUDA_PRIMITIVE_)};
#undef ps_cuda_scan_plan
#undef ps_cuda_scan_run
#undef ps_cuda_partition_plan
#undef ps_cuda_partition_run
#undef ps_cuda_segmented_scan_plan
#undef ps_cuda_segmented_scan_run
#undef ps_cuda_scan_by_key_plan
#undef ps_cuda_scan_by_key_run
#undef ps_cuda_reduce_by_key_plan
#undef ps_cuda_reduce_by_key_run
#undef ps_cuda_run_length_encode_plan
#undef ps_cuda_run_length_encode_run
#undef CUDA_PRIMITIVE_

static pscan_status cuda_plan(const pscan_context *ctx, ps_request *req, size_t *bytes) {
    *bytes = 0;
    if (req->algo == PSCAN_ALGO_AUTO) req->algo = cuda_auto_algo;
    /* PSCAN_SCAN_WIDEN: only the single-pass scan's tile program converts as it loads; the teaching algorithms
     * (1-4) read and write one type */
    if (req->widen && req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (req->user_op) return ps_cuda_user_plan(req, &state_of(ctx)->dev, bytes); /* scan and reduce, user_op.cu */
    /* a carry in device memory: only the single-pass scan reads it (5_decoupled_lookback.cu) */
    if ((req->init_device || req->total_out) &&
        (req->prim != PS_PRIM_SCAN || req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK))
        return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (req->n == 0 && req->prim == PS_PRIM_SCAN) {
        /* a scan of nothing still refuses an algorithm the backend lacks; the algorithms' own sizing divides
         * by tile counts, so it is asked about one element, and nothing runs */
        size_t ignored = 0;
        ps_request one = *req;
        one.n = 1;
        return cuda_primitives[req->prim].plan(&one, &state_of(ctx)->dev, &ignored);
    }
    if (req->n > PS_CUDA_MAX_N) {
        /* still refuse an algorithm the backend lacks first, as for any n */
        size_t ignored = 0;
        ps_request small = *req;
        small.n = 1;
        pscan_status s = cuda_primitives[req->prim].plan(&small, &state_of(ctx)->dev, &ignored);
        return s != PSCAN_SUCCESS ? s : PSCAN_ERROR_TOO_LARGE;
    }
    return cuda_primitives[req->prim].plan(req, &state_of(ctx)->dev, bytes);
}

static pscan_status cuda_run(pscan_context *ctx, const ps_request *req) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    if (req->user_op) return fail(ctx, ps_cuda_user_run(req, &st->dev));
    const cudaError_t err = cuda_primitives[req->prim].run(req, &st->dev);
    if (err == PS_CUDA_INVALID_INPUT) return PSCAN_ERROR_INVALID_VALUE; /* the caller's data, checked on the device */
    return fail(ctx, err);
}

/* ---- memory and stream ------------------------------------------------------------------------------- */

static pscan_status cuda_mem_alloc(pscan_context *ctx, size_t bytes, void **ptr) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    cudaError_t err = st->has_pools ? cudaMallocAsync(ptr, bytes, st->dev.stream) : cudaMalloc(ptr, bytes);
    if (err != cudaSuccess) {
        *ptr = NULL;
        cudaGetLastError(); /* an allocation failure is not sticky; leave no trace for the next launch check */
    }
    return fail(ctx, err);
}

static pscan_status cuda_mem_free(pscan_context *ctx, void *ptr) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return fail(ctx, st->has_pools ? cudaFreeAsync(ptr, st->dev.stream) : cudaFree(ptr));
}

static pscan_status cuda_mem_upload(pscan_context *ctx, void *dst, const void *src, size_t bytes) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return fail(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, st->dev.stream));
}

static pscan_status cuda_mem_download(pscan_context *ctx, void *dst, const void *src, size_t bytes) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return fail(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, st->dev.stream));
}

static pscan_status cuda_mem_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return fail(ctx, cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, st->dev.stream));
}

static pscan_status cuda_synchronize(pscan_context *ctx) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return fail(ctx, cudaStreamSynchronize(st->dev.stream));
}

/* pscan_scan_host: pieces through the device, overlapped (host_scan.cu). */
static pscan_status cuda_scan_host(pscan_context *ctx, ps_request *req) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return ps_cuda_scan_host(ctx, req, &st->dev, &st->staging);
}

/* ---- context ----------------------------------------------------------------------------------------- */

static void cuda_destroy(pscan_context *ctx) {
    cuda_state *st = state_of(ctx);
    if (!st) return;
    device_guard guard(st->dev.device);
    ps_cuda_user_cache_destroy(st->user_modules);
    if (st->owns_stream) cudaStreamDestroy(st->dev.stream);
    if (st->staging.pinned) cudaFreeHost(st->staging.pinned);
    free(st);
    ctx->backend = NULL;
}

static pscan_status cuda_device_name(const pscan_context *ctx, char *buf, size_t buf_bytes) {
    snprintf(buf, buf_bytes, "%s", state_of(ctx)->name);
    return PSCAN_SUCCESS;
}

static pscan_status cuda_operator_build(pscan_context *ctx, pscan_operator *op) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    return ps_cuda_operator_build(ctx, &st->user_modules, &st->dev, op);
}

/* Whether the context's stream is being captured into a graph (the workspace then does not grow: ps_backend_ops). */
static int cuda_capturing(pscan_context *ctx) {
    cuda_state *st = state_of(ctx);
    device_guard guard(st->dev.device);
    cudaStreamCaptureStatus capture = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(st->dev.stream, &capture) != cudaSuccess) {
        cudaGetLastError(); /* not sticky: the allocation that follows reports what is wrong */
        return 0;
    }
    return capture != cudaStreamCaptureStatusNone;
}

static const ps_backend_ops cuda_ops = {
    PSCAN_BACKEND_CUDA,
    1, /* handles_are_addresses */
    cuda_destroy,
    cuda_device_name,
    NULL, /* set_threads */
    cuda_plan,
    cuda_run,
    cuda_mem_alloc,
    cuda_mem_free,
    cuda_mem_upload,
    cuda_mem_download,
    cuda_mem_copy,
    cuda_synchronize,
    cuda_operator_build,
    0, /* data_in_host_memory */
    cuda_scan_host,
    1, /* scan_widen: the decoupled look-back scan; cuda_plan refuses the other algorithms */
    cuda_capturing,
};

/* Fills a new state for the current device; the stream is set by the caller. */
static pscan_status state_create(pscan_context *ctx, cuda_state **out) {
    int count = 0;
    cudaError_t err = cudaGetDeviceCount(&count);
    if (err != cudaSuccess || count == 0) {
        cudaGetLastError();
        ctx->native_error = (long long)err;
        return PSCAN_ERROR_BACKEND_UNAVAILABLE;
    }
    cuda_state *st = (cuda_state *)calloc(1, sizeof *st);
    if (!st) return PSCAN_ERROR_OUT_OF_MEMORY;
    cudaDeviceProp prop;
    int pools = 0;
    if ((err = cudaGetDevice(&st->dev.device)) != cudaSuccess ||
        (err = cudaGetDeviceProperties(&prop, st->dev.device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, st->dev.device)) != cudaSuccess) {
        free(st);
        cudaGetLastError();
        ctx->native_error = (long long)err;
        return PSCAN_ERROR_BACKEND_UNAVAILABLE;
    }
    st->dev.sm_count = prop.multiProcessorCount;
    st->dev.l2_bytes = prop.l2CacheSize;
    st->dev.max_shared_per_block_optin = (int)prop.sharedMemPerBlockOptin;
    st->has_pools = pools;
    snprintf(st->name, sizeof st->name, "%s", prop.name);
    *out = st;
    return PSCAN_SUCCESS;
}

extern "C" pscan_status ps_cuda_context_init_default(pscan_context *ctx, int gpu_only) {
    (void)gpu_only; /* a CUDA device is always a GPU */
    cuda_state *st = NULL;
    pscan_status s = state_create(ctx, &st);
    if (s != PSCAN_SUCCESS) return s;
    /* Non-blocking: the context's work neither waits for nor delays the legacy default stream. */
    cudaError_t err = cudaStreamCreateWithFlags(&st->dev.stream, cudaStreamNonBlocking);
    if (err != cudaSuccess) {
        free(st);
        return fail(ctx, err);
    }
    st->owns_stream = 1;
    ctx->ops = &cuda_ops;
    ctx->backend = st;
    return PSCAN_SUCCESS;
}

extern "C" pscan_status pscan_cuda_context_create(cudaStream_t stream, pscan_context **ctx) {
    if (!ctx) return PSCAN_ERROR_NULL_POINTER;
    *ctx = NULL;
    pscan_context *c = NULL;
    pscan_status s = ps_core_context_alloc(&c);
    if (s != PSCAN_SUCCESS) return s;
    cuda_state *st = NULL;
    s = state_create(c, &st);
    if (s != PSCAN_SUCCESS) {
        free(c);
        return s;
    }
    st->dev.stream = stream;
    st->owns_stream = 0;
    c->ops = &cuda_ops;
    c->backend = st;
    *ctx = c;
    return PSCAN_SUCCESS;
}

extern "C" pscan_status pscan_cuda_context_stream(const pscan_context *ctx, cudaStream_t *stream) {
    if (!ctx || !stream) return PSCAN_ERROR_NULL_POINTER;
    if (ctx->ops != &cuda_ops) return PSCAN_ERROR_INVALID_VALUE;
    *stream = state_of(ctx)->dev.stream;
    return PSCAN_SUCCESS;
}
