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

typedef size_t (*ps_cuda_temp_fn)(const ps_scan_call *call, const ps_cuda_device *dev);
typedef cudaError_t (*ps_cuda_scan_fn)(const ps_scan_call *call, const ps_cuda_device *dev);

typedef struct ps_cuda_algorithm {
    pscan_algo algo;
    ps_cuda_temp_fn temp_bytes; /* bytes of call->temp the launcher needs (0 allowed) */
    ps_cuda_scan_fn scan;       /* call->temp holds at least temp_bytes(call, dev) bytes */
} ps_cuda_algorithm;

/* The progression, one file each. */
extern const ps_cuda_algorithm ps_cuda_hillis_steele;      /* 1_hillis_steele.cu */
extern const ps_cuda_algorithm ps_cuda_blelloch;           /* 2_blelloch.cu */
extern const ps_cuda_algorithm ps_cuda_blelloch_unpadded;  /* 2_blelloch.cu, without conflict-free padding */
extern const ps_cuda_algorithm ps_cuda_scan_then_propagate; /* 3_scan_then_propagate.cu */
extern const ps_cuda_algorithm ps_cuda_reduce_then_scan;   /* 4_reduce_then_scan.cu */
extern const ps_cuda_algorithm ps_cuda_decoupled_lookback; /* 5_decoupled_lookback.cu */

#endif /* PSCAN_CUDA_BACKEND_H */
