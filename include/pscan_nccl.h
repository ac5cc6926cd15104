/*
 * pscan_nccl.h - scans of one array spread over the GPUs of one host (or of a job), through NCCL. Compiled into
 * the pscan library when CMake finds NCCL beside the CUDA backend (pscan_backend_compiled says CUDA; the
 * functions below exist when PSCAN_HAVE_NCCL is defined by the build, see docs/scale-out.md).
 *
 * Tested on 2 H200s of one host (tests/test_nccl_scan.c, ctest nccl.cuda, label cuda; 1 GPU runs the same
 * path); speed in docs/scale-out.md (tools/bench_nccl.c).
 *
 * The array is the concatenation of every GPU's slice in NCCL rank order. Each GPU has its own CUDA context (its
 * device, its stream) and its NCCL communicator; everything is enqueued on the context's stream and nothing
 * waits on the host:
 *   1. pscan_reduce of the slice into a device slot;
 *   2. ncclAllGather of the P slots (NCCL has no exclusive scan; for a handful of GPUs one all-gather of P
 *      elements costs the same single latency);
 *   3. one GPU thread folds init (+) the totals before this rank, in rank order (after it, in reverse rank order,
 *      for a reverse scan) into a carry slot;
 *   4. the slice's scan reads that carry from device memory (the out-of-core driver's init_device).
 * CUDA contexts only; the scan's algorithm is AUTO or DECOUPLED_LOOKBACK.
 *
 * Errors: every argument is checked before anything is enqueued. A GPU whose arguments fail returns at once and
 * does not join the all-gather, so the others wait in it, as with any NCCL collective one rank skips: check with
 * pscan_nccl_scan_temp_bytes on every GPU first, or use pscan_nccl_scan_group, which checks every GPU's arguments
 * before it enqueues anything on any of them.
 *
 * Example, 2 GPUs, inclusive sum: GPU 0 [3 1 7 0], GPU 1 [4 1 6 3] -> totals [11 14] on both; carries 0 and 11
 *   -> GPU 0 [3 4 11 11], GPU 1 [15 16 22 25].
 */
#ifndef PSCAN_NCCL_H
#define PSCAN_NCCL_H

#include <nccl.h>

#include "pscan_cuda.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Sets *bytes to the device temp pscan_nccl_scan needs for a slice of n_local elements among ranks GPUs. */
pscan_status pscan_nccl_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n_local,
                                        int ranks, size_t *bytes);

/* One GPU's part, for one thread (or process) per GPU: collective over comm, enqueued on ctx's stream. in, out
 * and temp are device pointers on ctx's device; temp == NULL uses the context's workspace. */
pscan_status pscan_nccl_scan(pscan_context *ctx, ncclComm_t comm, const pscan_scan_desc *desc, const void *in,
                             void *out, uint64_t n_local, void *temp, size_t temp_bytes);

/* Every GPU's part from one thread: count contexts and communicators (one per GPU, e.g. from ncclCommInitAll),
 * the slices and temps (temps and temp_bytes may be NULL: the workspaces). NCCL needs one thread that drives
 * several GPUs to group their collectives; this call does, between the reductions and the scans. */
pscan_status pscan_nccl_scan_group(int count, pscan_context *const *ctxs, const ncclComm_t *comms,
                                   const pscan_scan_desc *desc, const void *const *ins, void *const *outs,
                                   const uint64_t *n_locals, void *const *temps, const size_t *temp_bytes);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_NCCL_H */
