/*
 * bench_cuda.h - the CUDA side of `pscan bench`: timing with CUDA events, and the peers a scan is measured
 * against on the same GPU in the same run (a device-to-device copy, CUB's DeviceScan). Implemented in
 * bench_cuda.cu, built only with the CUDA backend; CUB is used here and nowhere in the library.
 *
 * Each function times on ctx's stream (ctx must be a CUDA context), warms up first, then times reps single
 * calls, each after a write of twice the L2 size (outside the timed region, so no size is timed from cache),
 * with CUDA events around the call alone; *t gets the median seconds per call and the spread,
 * (p90 - p10) / median.
 */
#ifndef PSCAN_BENCH_CUDA_H
#define PSCAN_BENCH_CUDA_H

#include "pscan.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ps_bench_time {
    double seconds; /* median per call */
    double spread;  /* (p90 - p10) / median */
} ps_bench_time;

/* pscan_scan(ctx, desc, in, out, n, temp, temp_bytes) */
pscan_status ps_bench_cuda_time_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                     uint64_t n, void *temp, size_t temp_bytes, int reps, ps_bench_time *t);
/* cudaMemcpyAsync device to device of bytes */
pscan_status ps_bench_cuda_time_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes, int reps,
                                     ps_bench_time *t);
/* CUB DeviceScan for the same request (every type; sum for all, product/min/max for 4- and 8-byte types) (sum through InclusiveSum/ExclusiveSum, other operators through
 * InclusiveScan/ExclusiveScan with a functor); PSCAN_ERROR_UNSUPPORTED_ALGORITHM where CUB has no
 * equivalent (e.g. reverse). Its temporary storage is allocated outside the timed region. */
pscan_status ps_bench_cuda_time_cub(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                    uint64_t n, int reps, ps_bench_time *t);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_BENCH_CUDA_H */
