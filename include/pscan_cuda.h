/*
 * pscan_cuda.h - CUDA interop for pscan: a context on the caller's stream.
 *
 * Include after (or instead of) pscan.h in code compiled with the CUDA runtime headers available. Data
 * pointers passed to pscan on a CUDA context are device pointers (cudaMalloc, cudaMallocAsync, or
 * pscan_memory_alloc); every call is enqueued on the context's stream and returns without synchronising.
 *
 * Worked example:
 *   cudaStream_t s; cudaStreamCreate(&s);
 *   pscan_context *ctx; pscan_cuda_context_create(s, &ctx);
 *   pscan_scan_desc d = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_AUTO, NULL};
 *   pscan_scan(ctx, &d, d_in, d_out, n, NULL, 0);   // d_in = [3 1 7 0 4 1 6 3] -> d_out = [0 3 4 11 11 15 16 22]
 *   cudaStreamSynchronize(s);
 *   pscan_context_destroy(ctx);                      // synchronises s; does not destroy it
 */
#ifndef PSCAN_CUDA_H
#define PSCAN_CUDA_H

#include <cuda_runtime_api.h>

#include "pscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Creates a CUDA context that enqueues on the caller's stream, which the context uses but never destroys
 * (0 is the legacy default stream). The stream must belong to the current device (cudaGetDevice), which the
 * context then keeps using. Returns PSCAN_ERROR_BACKEND_UNAVAILABLE if no CUDA device is usable. Destroy with
 * pscan_context_destroy(), before the stream. */
pscan_status pscan_cuda_context_create(cudaStream_t stream, pscan_context **ctx);

/* Sets *stream to the stream a CUDA context enqueues on: the caller's, or the one pscan_context_create()
 * made for it (owned by the context). PSCAN_ERROR_INVALID_VALUE if ctx is not a CUDA context. */
pscan_status pscan_cuda_context_stream(const pscan_context *ctx, cudaStream_t *stream);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_CUDA_H */
