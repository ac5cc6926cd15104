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
/* CUB DeviceSelect (partition = 0) or DevicePartition (partition = 1), the count of kept items as one int64 in
 * device memory at count; keys only. flags NULL: If, keeping the keys greater than *operand (host pointer to one
 * key), for the 4- and 8-byte types, u8 and u16; flags (n uint8_t in device memory, nonzero keeps): Flagged, for
 * every type (the keys are only moved, so by their width; operand is ignored); unique (a select): Unique, every
 * type, bit for bit as PSCAN_PRED_UNIQUE. PSCAN_ERROR_UNSUPPORTED_ALGORITHM otherwise. */
pscan_status ps_bench_cuda_time_cub_select(pscan_context *ctx, pscan_type type, const void *operand,
                                           const void *flags, int unique, int partition, const void *in, void *out,
                                           void *count, uint64_t n, int reps, ps_bench_time *t);

/* The peers of segscan and scan_by_key: CUB DeviceScan::InclusiveSumByKey of n values of type under keys of
 * key_bytes (1: u8, 4: u32) into out; sum only, values i32, u32, i64, u64 (through the signed instantiation: the
 * same bits), f32, f64. PSCAN_ERROR_UNSUPPORTED_ALGORITHM otherwise. */
pscan_status ps_bench_cuda_time_cub_scan_by_key(pscan_context *ctx, pscan_type type, pscan_op op, size_t key_bytes,
                                                const void *keys, const void *in, void *out, uint64_t n, int reps,
                                                ps_bench_time *t);
/* CUB DeviceReduce::ReduceByKey: u32 keys, values of type (as above), the run count as one int64 at count. */
pscan_status ps_bench_cuda_time_cub_reduce_by_key(pscan_context *ctx, pscan_type type, pscan_op op,
                                                  const void *keys_in, const void *values_in, void *keys_out,
                                                  void *values_out, void *count, uint64_t n, int reps,
                                                  ps_bench_time *t);
/* CUB DeviceRunLengthEncode::Encode of any type (compared as unsigned integers of its width: bit for bit, as
 * pscan does), u64 lengths, the run count as one int64 at count. */
pscan_status ps_bench_cuda_time_cub_rle(pscan_context *ctx, pscan_type type, const void *in, void *values_out,
                                        void *lengths_out, void *count, uint64_t n, int reps, ps_bench_time *t);
/* CUB DeviceHistogram::HistogramEven of n u32 samples into bins u32 counters, levels 0 .. bins. */
pscan_status ps_bench_cuda_time_cub_histogram(pscan_context *ctx, uint32_t bins, const void *samples, void *counts,
                                              uint64_t n, int reps, ps_bench_time *t);
/* CUB DeviceRadixSort::SortKeys (value_bytes 0) or SortPairs (value_bytes 4: u32 payloads) of u32 or u64 keys,
 * every bit: the faster of its calls with int and with int64_t offsets (CUB's tile depends on the offset type).
 * PSCAN_ERROR_UNSUPPORTED_ALGORITHM otherwise. */
pscan_status ps_bench_cuda_time_cub_sort(pscan_context *ctx, pscan_type type, size_t value_bytes, const void *keys_in,
                                         const void *values_in, void *keys_out, void *values_out, uint64_t n, int reps,
                                         ps_bench_time *t);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_BENCH_CUDA_H */
