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

/* Any call: fn(arg) enqueues one call on ctx's stream (a pscan primitive, say) and returns its status. */
typedef pscan_status (*ps_bench_fn)(void *arg);
pscan_status ps_bench_cuda_time_fn(pscan_context *ctx, ps_bench_fn fn, void *arg, int reps, ps_bench_time *t);
/* cudaMemcpyAsync device to device of bytes */
pscan_status ps_bench_cuda_time_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes, int reps,
                                     ps_bench_time *t);
/* CUB DeviceScan for the same request (every type; sum for all, product/min/max for 4- and 8-byte types) (sum through InclusiveSum/ExclusiveSum, other operators through
 * InclusiveScan/ExclusiveScan with a functor); PSCAN_ERROR_UNSUPPORTED_ALGORITHM where CUB has no
 * equivalent (e.g. reverse). Its temporary storage is allocated outside the timed region. */
pscan_status ps_bench_cuda_time_cub(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                    uint64_t n, int reps, ps_bench_time *t);
/* CUB DeviceReduce::Reduce into *out (one element in device memory): sum for every type, min and max for the
 * 4- and 8-byte types. PSCAN_ERROR_UNSUPPORTED_ALGORITHM otherwise. */
pscan_status ps_bench_cuda_time_cub_reduce(pscan_context *ctx, pscan_type type, pscan_op op, const void *in,
                                           void *out, uint64_t n, int reps, ps_bench_time *t);
/* CUB DeviceSelect::If (partition = 0) or DevicePartition::If (partition = 1) keeping the keys greater than
 * *operand (host pointer to one key), the count of kept items as one int64 in device memory at count; keys
 * only; the 4- and 8-byte types, u8 and u16. PSCAN_ERROR_UNSUPPORTED_ALGORITHM otherwise. */
pscan_status ps_bench_cuda_time_cub_select(pscan_context *ctx, pscan_type type, const void *operand, int partition,
                                           const void *in, void *out, void *count, uint64_t n, int reps,
                                           ps_bench_time *t);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_BENCH_CUDA_H */
