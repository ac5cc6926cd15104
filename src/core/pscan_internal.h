/*
 * pscan_internal.h - the one interface every backend implements, and the context they share. Internal.
 *
 * The core (src/core/api.c) validates every public call once, resolves defaults (the identity as initial
 * value, the workspace as temporary storage) and then dispatches through the backend's table. A backend sees
 * only well-formed requests: known type, operator and flags, n > 0, non-NULL pointers, no partial overlap.
 */
#ifndef PSCAN_INTERNAL_H
#define PSCAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pscan.h"
#include "pscan_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One validated scan request. init always holds a value: the caller's, or the operator's identity. */
typedef struct ps_scan_call {
    pscan_type type;
    pscan_op op;
    int exclusive;
    int reverse;
    pscan_algo algo; /* never AUTO: the backend's choose_algo has run */
    const void *in;
    void *out;
    uint64_t n;
    size_t elem_bytes;
    ps_value init;
    void *temp; /* device storage of temp_bytes >= the backend's scan_temp_bytes */
    size_t temp_bytes;
} ps_scan_call;

typedef struct ps_backend_ops {
    pscan_backend kind;
    /* 1 when data handles are addresses (CPU, CUDA), so the core can refuse partial overlap. */
    int handles_are_addresses;
    void (*destroy)(pscan_context *ctx);
    pscan_status (*device_name)(const pscan_context *ctx, char *buf, size_t buf_bytes);
    pscan_status (*set_threads)(pscan_context *ctx, unsigned threads); /* may be NULL */
    /* AUTO -> the backend's choice for this call; an algorithm it lacks -> PSCAN_ERROR_UNSUPPORTED_ALGORITHM. */
    pscan_status (*choose_algo)(const pscan_context *ctx, ps_scan_call *call);
    pscan_status (*scan_temp_bytes)(const pscan_context *ctx, const ps_scan_call *call, size_t *bytes);
    pscan_status (*scan)(pscan_context *ctx, const ps_scan_call *call);
    pscan_status (*mem_alloc)(pscan_context *ctx, size_t bytes, void **ptr);
    pscan_status (*mem_free)(pscan_context *ctx, void *ptr);
    pscan_status (*mem_upload)(pscan_context *ctx, void *dst, const void *src, size_t bytes);
    pscan_status (*mem_download)(pscan_context *ctx, void *dst, const void *src, size_t bytes);
    pscan_status (*mem_copy)(pscan_context *ctx, void *dst, const void *src, size_t bytes); /* device to device */
    pscan_status (*synchronize)(pscan_context *ctx);
} ps_backend_ops;

struct pscan_context {
    const ps_backend_ops *ops;
    void *backend;           /* the backend's own state */
    long long native_error;  /* last cudaError_t / cl_int that failed */
    char *build_log;         /* malloc'd, or NULL */
    void *workspace;         /* device memory from ops->mem_alloc */
    size_t workspace_bytes;
};

/* Each backend's constructor on its default device. A backend not compiled in is absent from the table in
 * api.c. On success ctx->ops and ctx->backend are set; on failure nothing is left allocated. */
/* gpu_only is set when PSCAN_BACKEND_AUTO asks: a backend then accepts only a GPU (OpenCL on PoCL's CPU
 * device is not what AUTO means; the CPU backend is faster there). */
pscan_status ps_cpu_context_init(pscan_context *ctx, int gpu_only);
#ifdef PSCAN_HAVE_CUDA
pscan_status ps_cuda_context_init_default(pscan_context *ctx, int gpu_only);
#endif
#ifdef PSCAN_HAVE_OPENCL
pscan_status ps_opencl_context_init_default(pscan_context *ctx, int gpu_only);
#endif

/* Allocates a zeroed context shell for the backend add-on constructors (pscan_cuda.h, pscan_opencl.h). */
pscan_status ps_core_context_alloc(pscan_context **ctx);
/* The operator's identity for the type (a validated pair): what pads partial tiles and starts later ones. */
const ps_value *ps_core_identity(pscan_type type, pscan_op op);
/* Records a build log on the context (copied); NULL clears it. */
pscan_status ps_core_set_build_log(pscan_context *ctx, const char *log);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_INTERNAL_H */
