/*
 * cuda_backend.h - the contract between the CUDA backend (cuda_backend.cu) and its algorithm files. Internal.
 *
 * Every algorithm file N_name.cu exports one ps_cuda_algorithm: a temporary-storage size function and a
 * launcher with the same signature. Launchers enqueue on dev->stream, never synchronise, never allocate, and
 * return the first CUDA error they meet (cudaSuccess otherwise). Each is templated on the element type T
 * and an operator functor Op only (see cuda_ops.cuh); inclusive/exclusive, forward/reverse, the initial
 * value and in-place are runtime arguments of the same kernel body.
 */
#ifndef PSCAN_CUDA_BACKEND_H
#define PSCAN_CUDA_BACKEND_H

#include <cuda_runtime.h>

#include "pscan_internal.h"

typedef struct ps_cuda_device {
    int device;
    int sm_count;
    int l2_bytes;
    int max_shared_per_block_optin;
    cudaStream_t stream;
} ps_cuda_device;

/* Checks the algorithm's limits (PSCAN_ERROR_TOO_LARGE) and sets *bytes to the temp it needs (0 allowed). */
typedef pscan_status (*ps_cuda_plan_fn)(const ps_request *call, const ps_cuda_device *dev, size_t *bytes);
typedef cudaError_t (*ps_cuda_scan_fn)(const ps_request *call, const ps_cuda_device *dev);

typedef struct ps_cuda_algorithm {
    pscan_algo algo;
    ps_cuda_plan_fn plan; /* limits and the bytes of call->temp the launcher needs */
    ps_cuda_scan_fn scan; /* call->temp holds at least what plan asked for */
} ps_cuda_algorithm;

/* The progression, one file each. */
extern const ps_cuda_algorithm ps_cuda_hillis_steele;      /* 1_hillis_steele.cu */
extern const ps_cuda_algorithm ps_cuda_blelloch;           /* 2_blelloch.cu */
extern const ps_cuda_algorithm ps_cuda_blelloch_unpadded;  /* 2_blelloch.cu, without conflict-free padding */
extern const ps_cuda_algorithm ps_cuda_scan_then_propagate; /* 3_scan_then_propagate.cu */
extern const ps_cuda_algorithm ps_cuda_reduce_then_scan;   /* 4_reduce_then_scan.cu */
extern const ps_cuda_algorithm ps_cuda_decoupled_lookback; /* 5_decoupled_lookback.cu */

/* The primitives other than scan, one file each: plan and run, as in ps_backend_ops. */
pscan_status ps_cuda_reduce_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_reduce_run(const ps_request *req, const ps_cuda_device *dev);
/* select.cu: select and partition (req->prim tells which). */
pscan_status ps_cuda_select_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_select_run(const ps_request *req, const ps_cuda_device *dev);
/* expand.cu: the counts' scan writing its own tiles' slots, and a balanced pass for tiles with many. */
pscan_status ps_cuda_expand_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_expand_run(const ps_request *req, const ps_cuda_device *dev);
/* radix_sort.cu: the Onesweep-style radix sort. */
pscan_status ps_cuda_sort_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_sort_run(const ps_request *req, const ps_cuda_device *dev);

/* histogram.cu: one kernel, no temp. */
pscan_status ps_cuda_histogram_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_histogram_run(const ps_request *req, const ps_cuda_device *dev);

/* user_op.cu: user operators compiled with NVRTC, one module per operator hash in the context's cache. */
typedef struct ps_cuda_user_module ps_cuda_user_module;
pscan_status ps_cuda_operator_build(pscan_context *ctx, ps_cuda_user_module **cache, const ps_cuda_device *dev,
                                    pscan_operator *op);
void ps_cuda_user_cache_destroy(ps_cuda_user_module *cache);
pscan_status ps_cuda_user_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_user_run(const ps_request *req, const ps_cuda_device *dev);
/* recurrence.cu: first- and second-order linear recurrences (req->order), a compiled-in tile program. */
pscan_status ps_cuda_recurrence_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_recurrence_run(const ps_request *req, const ps_cuda_device *dev);

/* host_scan.cu: pscan_scan_host, out of core. The pinned staging buffers for pageable user memory belong to the
 * context (allocated on first use, grown on demand, cudaFreeHost'd with it). Blocking. */
typedef struct ps_cuda_host_staging {
    void *pinned;
    size_t bytes;
} ps_cuda_host_staging;
pscan_status ps_cuda_scan_host(pscan_context *ctx, ps_request *req, const ps_cuda_device *dev,
                               ps_cuda_host_staging *staging);

/* segmented_scan.cu: segmented scan and scan by key (req->seg_form tells the segments' form). */
pscan_status ps_cuda_segscan_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_segscan_run(const ps_request *req, const ps_cuda_device *dev);
/* reduce_by_key.cu: reduce by key and run-length encoding (req->prim tells which). */
pscan_status ps_cuda_rbk_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes);
cudaError_t ps_cuda_rbk_run(const ps_request *req, const ps_cuda_device *dev);

/* What a run returns when it has checked the caller's data on the device and found it invalid (a segmented
 * scan's offsets, with PSCAN_SEGSCAN_CHECK_OFFSETS): the backend reports PSCAN_ERROR_INVALID_VALUE. A value
 * outside CUDA's own error codes. */
#define PS_CUDA_INVALID_INPUT ((cudaError_t)0x7fff0001)

#endif /* PSCAN_CUDA_BACKEND_H */
