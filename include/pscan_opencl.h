/*
 * pscan_opencl.h - OpenCL interop for pscan: a context on the caller's command queue.
 *
 * Include after (or instead of) pscan.h in code that has the OpenCL headers. On an OpenCL context every data
 * "pointer" of the pscan API (in, out, temp, and what pscan_memory_alloc returns) is a cl_mem buffer handle
 * cast to void *, addressed from offset 0; sub-buffers (clCreateSubBuffer) give an offset. Every call is
 * enqueued on the context's queue and returns without waiting, except pscan_memory_upload, which returns
 * when the host buffer may be reused. On an out-of-order queue pscan orders its own commands with barriers;
 * order yours against them with events or barriers of your own.
 *
 * Kernels are compiled the first time a (type, operator) is used on a context and kept for its lifetime; a
 * failed build returns PSCAN_ERROR_BUILD_FAILED with the log in pscan_context_build_log(). f64 needs a device
 * with cl_khr_fp64 (else PSCAN_ERROR_UNSUPPORTED_TYPE). pscan_context_native_error() holds the last failing
 * cl_int.
 *
 * Worked example:
 *   cl_command_queue q = clCreateCommandQueue(cl_ctx, device, 0, &err);
 *   pscan_context *ctx; pscan_opencl_context_create(q, &ctx);
 *   pscan_scan_desc d = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_AUTO, NULL};
 *   pscan_scan(ctx, &d, (void *)buf_in, (void *)buf_out, n, NULL, 0); // [3 1 7 0 4 1 6 3] -> [0 3 4 11 11 15 16 22]
 *   clFinish(q);
 *   pscan_context_destroy(ctx);                                         // finishes q; releases its reference
 */
#ifndef PSCAN_OPENCL_H
#define PSCAN_OPENCL_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include "pscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates an OpenCL context that enqueues on the caller's queue, on the queue's device and cl_context. The
 * context holds its own reference to the queue until pscan_context_destroy(). Returns
 * PSCAN_ERROR_NULL_POINTER for a NULL queue, PSCAN_ERROR_BACKEND if the queue cannot be queried. */
pscan_status pscan_opencl_context_create(cl_command_queue queue, pscan_context **ctx);

/* Sets *queue to the queue an OpenCL context enqueues on (not retained for the caller): the caller's, or the
 * one pscan_context_create() made on the default device. PSCAN_ERROR_INVALID_VALUE if ctx is not OpenCL. */
pscan_status pscan_opencl_context_queue(const pscan_context *ctx, cl_command_queue *queue);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_OPENCL_H */
