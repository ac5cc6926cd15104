/*
 * bench_cuda.h - the CUDA side of `pscan bench`: timing with CUDA events, and the peers a scan is measured
 * against on the same GPU in the same run (a device-to-device copy, CUB's DeviceScan). Implemented in
 * bench_cuda.cu, built only with the CUDA backend; CUB is used here and nowhere in the library.
 *
 * Each function times on ctx's stream (ctx must be a CUDA context), warms up first, and writes the median
 * seconds per call over reps timed repeats to *seconds.
 */
#ifndef PSCAN_BENCH_CUDA_H
#define PSCAN_BENCH_CUDA_H

#include "pscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* pscan_scan(ctx, desc, in, out, n, temp, temp_bytes) */
pscan_status ps_bench_cuda_time_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                     uint64_t n, void *temp, size_t temp_bytes, int reps, double *seconds);
/* cudaMemcpyAsync device to device of bytes */
pscan_status ps_bench_cuda_time_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes, int reps,
                                     double *seconds);
/* CUB DeviceScan for the same request (sum through InclusiveSum/ExclusiveSum, other operators through
 * InclusiveScan/ExclusiveScan with a functor); PSCAN_ERROR_UNSUPPORTED_ALGORITHM where CUB has no
 * equivalent (e.g. reverse). Its temporary storage is allocated outside the timed region. */
pscan_status ps_bench_cuda_time_cub(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                    uint64_t n, int reps, double *seconds);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_BENCH_CUDA_H */
