/*
 * bench_cuda.cu - the CUDA side of `pscan bench` (see bench_cuda.h): CUDA-event timing of pscan_scan, and the
 * peers it is measured against on the same stream: a device-to-device cudaMemcpyAsync of the same bytes and
 * CUB's DeviceScan. CUB is used here only, never in the library.
 *
 * Timing, the same for all three: two warm-up calls, then reps single calls, each after a write of twice the
 * L2 size to a scratch buffer (outside the timed region: no size is timed from cache, and a call pays for
 * reaching memory as a user's first call on fresh data does), with CUDA events around the call alone. The
 * median and the spread (p90 - p10) / median are reported.
 *
 * CUB covers every type with sum, and the 4- and 8-byte types also with product, min and max; inclusive and
 * exclusive, forward, n < 2^31. Anything else (reverse, an initial value on an inclusive scan, other
 * operators) returns PSCAN_ERROR_UNSUPPORTED_ALGORITHM and the harness prints "-". Instantiations are kept
 * to that set because each costs seconds of compile time.
 *
 * The other primitives' peers (the end of the file) share one shape, cub_peer: a size query, the storage
 * allocated outside the timed region, the timing, the storage freed. Their sets are in bench_cuda.h.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cub/device/device_histogram.cuh>
#include <cub/device/device_partition.cuh>
#include <cub/device/device_radix_sort.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_run_length_encode.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <cuda/functional>
#include <thrust/iterator/transform_iterator.h>
#include <cuda/std/functional>

#include "bench_cuda.h"
#include "pscan_cuda.h"
#include "pscan_ops.h" /* PS_WIDEN_LIST: the library's pairs of a type and its 64-bit type */

#define BENCH_WARMUP 2

/* One thing to time: f(arg) enqueues one call on the stream. */
typedef ps_bench_fn bench_fn;

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static pscan_status cuda_status(cudaError_t err) {
    if (err == cudaSuccess) return PSCAN_SUCCESS;
    return err == cudaErrorMemoryAllocation ? PSCAN_ERROR_OUT_OF_MEMORY : PSCAN_ERROR_BACKEND;
}

/* The scratch buffer written between timed calls: twice the device's L2, allocated once per process. */
static pscan_status flush_buffer(void **buf, size_t *bytes) {
    static void *scratch = NULL;
    static size_t scratch_bytes = 0;
    if (!scratch) {
        int device = 0, l2 = 0;
        cudaError_t err = cudaGetDevice(&device);
        if (err == cudaSuccess) err = cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device);
        if (err == cudaSuccess) err = cudaMalloc(&scratch, (size_t)(l2 > 0 ? l2 : 1 << 20) * 2);
        if (err != cudaSuccess) {
            scratch = NULL;
            cudaGetLastError();
            return cuda_status(err);
        }
        scratch_bytes = (size_t)(l2 > 0 ? l2 : 1 << 20) * 2;
    }
    *buf = scratch;
    *bytes = scratch_bytes;
    return PSCAN_SUCCESS;
}

static pscan_status time_median(pscan_context *ctx, bench_fn f, void *arg, int reps, ps_bench_time *out) {
    cudaStream_t stream;
    pscan_status s = pscan_cuda_context_stream(ctx, &stream);
    if (s != PSCAN_SUCCESS) return s;
    void *scratch = NULL;
    size_t scratch_bytes = 0;
    s = flush_buffer(&scratch, &scratch_bytes);
    if (s != PSCAN_SUCCESS) return s;
    if (reps < 1) reps = 1;
    double *t = (double *)malloc((size_t)reps * sizeof *t);
    if (!t) return PSCAN_ERROR_OUT_OF_MEMORY;
    cudaEvent_t start = NULL, stop = NULL;
    s = cuda_status(cudaEventCreate(&start));
    if (s == PSCAN_SUCCESS) s = cuda_status(cudaEventCreate(&stop));

    for (int w = 0; w < BENCH_WARMUP && s == PSCAN_SUCCESS; w++) s = f(arg);
    for (int r = 0; r < reps && s == PSCAN_SUCCESS; r++) {
        s = cuda_status(cudaMemsetAsync(scratch, r & 0xff, scratch_bytes, stream));
        if (s == PSCAN_SUCCESS) s = cuda_status(cudaEventRecord(start, stream));
        if (s == PSCAN_SUCCESS) s = f(arg);
        if (s == PSCAN_SUCCESS) s = cuda_status(cudaEventRecord(stop, stream));
        if (s == PSCAN_SUCCESS) s = cuda_status(cudaEventSynchronize(stop));
        float ms = 0;
        if (s == PSCAN_SUCCESS) s = cuda_status(cudaEventElapsedTime(&ms, start, stop));
        t[r] = 1e-3 * (double)ms;
    }
    if (s == PSCAN_SUCCESS) {
        qsort(t, (size_t)reps, sizeof *t, compare_doubles);
        out->seconds = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
        out->spread = out->seconds > 0 ? (t[reps * 9 / 10 < reps ? reps * 9 / 10 : reps - 1] - t[reps / 10]) / out->seconds : 0;
    }
    if (start) cudaEventDestroy(start);
    if (stop) cudaEventDestroy(stop);
    free(t);
    return s;
}

/* ---- any call ---------------------------------------------------------------------------------------- */

extern "C" pscan_status ps_bench_cuda_time_fn(pscan_context *ctx, ps_bench_fn fn, void *arg, int reps,
                                              ps_bench_time *t) {
    if (!ctx || !fn || !t) return PSCAN_ERROR_NULL_POINTER;
    return time_median(ctx, fn, arg, reps, t);
}

/* ---- copy ---------------------------------------------------------------------------------------------- */

typedef struct copy_args {
    cudaStream_t stream;
    void *dst;
    const void *src;
    size_t bytes;
} copy_args;

static pscan_status copy_once(void *arg) {
    const copy_args *a = (const copy_args *)arg;
    return cuda_status(cudaMemcpyAsync(a->dst, a->src, a->bytes, cudaMemcpyDeviceToDevice, a->stream));
}

extern "C" pscan_status ps_bench_cuda_time_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes,
                                                int reps, ps_bench_time *t) {
    if (!ctx || !dst || !src || !t) return PSCAN_ERROR_NULL_POINTER;
    copy_args a = {0, dst, src, bytes};
    pscan_status s = pscan_cuda_context_stream(ctx, &a.stream);
    if (s != PSCAN_SUCCESS) return s;
    return time_median(ctx, copy_once, &a, reps, t);
}

/* ---- CUB ----------------------------------------------------------------------------------------------- */

typedef struct cub_args {
    cudaStream_t stream;
    const void *in;
    void *out;
    int n;
    int exclusive;
    unsigned char init[8]; /* the exclusive scan's initial value */
    void *temp;
    size_t temp_bytes;
} cub_args;

/* One CUB scan (a size query when temp is NULL) writing T with operator functor Op, reading in (T's own elements,
 * or a converting iterator: cub_widen_call). */
template <class T, class Op, class In> static cudaError_t cub_scan(cub_args *a, In in) {
    T *out = (T *)a->out;
    if (a->exclusive) {
        T init;
        memcpy(&init, a->init, sizeof(T));
        return cub::DeviceScan::ExclusiveScan(a->temp, a->temp_bytes, in, out, Op(), init, a->n, a->stream);
    }
    return cub::DeviceScan::InclusiveScan(a->temp, a->temp_bytes, in, out, Op(), a->n, a->stream);
}
template <class T, class Op> static cudaError_t cub_call(cub_args *a) { return cub_scan<T, Op>(a, (const T *)a->in); }

typedef cudaError_t (*cub_fn)(cub_args *a);

/* The instantiated set: 4- and 8-byte types x sum, product, min, max; 1- and 2-byte types x sum. */
static cub_fn cub_lookup(pscan_type type, pscan_op op) {
#define BENCH_CUB_OPS_(T)                                                                                    \
    switch (op) {                                                                                            \
    case PSCAN_OP_SUM:                                                                                       \
        return cub_call<T, cuda::std::plus<T>>;                                                              \
    case PSCAN_OP_PRODUCT:                                                                                   \
        return cub_call<T, cuda::std::multiplies<T>>;                                                        \
    case PSCAN_OP_MIN:                                                                                       \
        return cub_call<T, cuda::minimum<T>>;                                                                \
    case PSCAN_OP_MAX:                                                                                       \
        return cub_call<T, cuda::maximum<T>>;                                                                \
    default:                                                                                                 \
        return NULL;                                                                                         \
    }
    switch (type) {
    case PSCAN_TYPE_I32:
        BENCH_CUB_OPS_(int32_t)
    case PSCAN_TYPE_U32:
        BENCH_CUB_OPS_(uint32_t)
    case PSCAN_TYPE_F32:
        BENCH_CUB_OPS_(float)
    case PSCAN_TYPE_I64:
        BENCH_CUB_OPS_(int64_t)
    case PSCAN_TYPE_U64:
        BENCH_CUB_OPS_(uint64_t)
    case PSCAN_TYPE_F64:
        BENCH_CUB_OPS_(double)
    case PSCAN_TYPE_I8: return op == PSCAN_OP_SUM ? cub_call<int8_t, cuda::std::plus<int8_t>> : NULL;
    case PSCAN_TYPE_U8: return op == PSCAN_OP_SUM ? cub_call<uint8_t, cuda::std::plus<uint8_t>> : NULL;
    case PSCAN_TYPE_I16: return op == PSCAN_OP_SUM ? cub_call<int16_t, cuda::std::plus<int16_t>> : NULL;
    case PSCAN_TYPE_U16: return op == PSCAN_OP_SUM ? cub_call<uint16_t, cuda::std::plus<uint16_t>> : NULL;
    default:
        return NULL;
    }
#undef BENCH_CUB_OPS_
}

/* PSCAN_SCAN_WIDEN's peer: CUB's scan in the 64-bit type W over the narrow input T, read through a converting
 * iterator (CUB's loads convert too: the same bytes moved). */
template <class T, class W> struct cub_widen_op {
    __host__ __device__ W operator()(T x) const { return (W)x; }
};
template <class T, class W, class Op> static cudaError_t cub_widen_call(cub_args *a) {
    return cub_scan<W, Op>(a, thrust::transform_iterator<cub_widen_op<T, W>, const T *>((const T *)a->in,
                                                                                      cub_widen_op<T, W>()));
}
static cub_fn cub_widen_lookup(pscan_type type, pscan_op op) {
    switch (type) {
#define BENCH_CUB_WIDEN_(NAME, T, WIDE, W)                                                                   \
    case PSCAN_TYPE_##NAME:                                                                                  \
        return op == PSCAN_OP_SUM       ? cub_widen_call<T, W, cuda::std::plus<W>>                           \
               : op == PSCAN_OP_PRODUCT ? cub_widen_call<T, W, cuda::std::multiplies<W>>                     \
                                        : NULL;
        PS_WIDEN_LIST(BENCH_CUB_WIDEN_)
#undef BENCH_CUB_WIDEN_
    default: return NULL;
    }
}

/* The operator's identity as the exclusive scan's initial value when the caller gave none. */
static void cub_identity(pscan_type type, pscan_op op, unsigned char bytes[8]) {
    memset(bytes, 0, 8);
#define BENCH_IDENTITY_(T, LOWEST, HIGHEST)                                                                  \
    do {                                                                                                     \
        T x = op == PSCAN_OP_PRODUCT ? (T)1                                                                  \
              : op == PSCAN_OP_MIN   ? (T)(HIGHEST)                                                          \
              : op == PSCAN_OP_MAX   ? (T)(LOWEST)                                                           \
                                     : (T)0;                                                                 \
        memcpy(bytes, &x, sizeof x);                                                                         \
    } while (0)
    switch (type) {
    case PSCAN_TYPE_I32: BENCH_IDENTITY_(int32_t, INT32_MIN, INT32_MAX); break;
    case PSCAN_TYPE_U32: BENCH_IDENTITY_(uint32_t, 0, UINT32_MAX); break;
    case PSCAN_TYPE_F32: BENCH_IDENTITY_(float, -__builtin_huge_valf(), __builtin_huge_valf()); break;
    case PSCAN_TYPE_I64: BENCH_IDENTITY_(int64_t, INT64_MIN, INT64_MAX); break;
    case PSCAN_TYPE_U64: BENCH_IDENTITY_(uint64_t, 0, UINT64_MAX); break;
    case PSCAN_TYPE_F64: BENCH_IDENTITY_(double, -__builtin_huge_val(), __builtin_huge_val()); break;
    default: break;
    }
#undef BENCH_IDENTITY_
}

typedef struct cub_timed {
    cub_fn fn;
    cub_args args;
} cub_timed;

static pscan_status cub_once(void *arg) {
    cub_timed *c = (cub_timed *)arg;
    return cuda_status(c->fn(&c->args));
}

extern "C" pscan_status ps_bench_cuda_time_cub(pscan_context *ctx, const pscan_scan_desc *desc, const void *in,
                                               void *out, uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || !desc || !t) return PSCAN_ERROR_NULL_POINTER;
    if ((unsigned)desc->type >= PSCAN_TYPE_COUNT || (unsigned)desc->op >= PSCAN_OP_COUNT)
        return PSCAN_ERROR_INVALID_VALUE;
    const int exclusive = (desc->flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    /* widened: CUB scans in the 64-bit type; init and the identity are of it */
    const pscan_type out_type = desc->flags & PSCAN_SCAN_WIDEN ? pscan_type_widened(desc->type) : desc->type;
    cub_timed c;
    memset(&c, 0, sizeof c);
    c.fn = out_type != desc->type ? cub_widen_lookup(desc->type, desc->op) : cub_lookup(desc->type, desc->op);
    if (!c.fn || (desc->flags & PSCAN_SCAN_REVERSE) || (desc->init && !exclusive) || n == 0 || n > 0x7fffffffull)
        return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    pscan_status s = pscan_cuda_context_stream(ctx, &c.args.stream);
    if (s != PSCAN_SUCCESS) return s;
    c.args.in = in;
    c.args.out = out;
    c.args.n = (int)n;
    c.args.exclusive = exclusive;
    if (desc->init)
        memcpy(c.args.init, desc->init, pscan_type_size(out_type));
    else
        cub_identity(out_type, desc->op, c.args.init);

    /* size query, then the temporary storage, outside the timed region */
    s = cuda_status(c.fn(&c.args));
    if (s != PSCAN_SUCCESS) return s;
    if (c.args.temp_bytes == 0) c.args.temp_bytes = 1;
    s = cuda_status(cudaMalloc(&c.args.temp, c.args.temp_bytes));
    if (s != PSCAN_SUCCESS) {
        cudaGetLastError();
        return s;
    }
    s = time_median(ctx, cub_once, &c, reps, t);
    cudaError_t err = cudaStreamSynchronize(c.args.stream);
    cudaFree(c.args.temp);
    return s != PSCAN_SUCCESS ? s : cuda_status(err);
}

/* ---- CUB peers of pscan bench --primitive reduce, select, partition, segscan, ..., sort ----------------------- */

/* A CUB call with its temporary storage: run() is a size query while temp is NULL. */
typedef struct cub_peer {
    cudaStream_t stream;
    const void *in, *in2; /* in2: keys (by key), payloads (sort), u8 flags (select, partition) */
    void *out, *out2, *count; /* out2: keys out (reduce by key), lengths (rle), payloads out (sort) */
    int n;
    int wide; /* the run passes n64 (CUB's 64-bit offsets): any n */
    int64_t n64;
    int bins; /* histogram */
    unsigned char value[8]; /* reduce: the initial value; select: the operand */
    void *temp;
    size_t temp_bytes;
    cudaError_t (*run)(struct cub_peer *p);
} cub_peer;

template <class T, class Op> static cudaError_t cub_reduce(cub_peer *p) {
    T init;
    memcpy(&init, p->value, sizeof(T));
    return cub::DeviceReduce::Reduce(p->temp, p->temp_bytes, (const T *)p->in, (T *)p->out, p->n, Op(), init,
                                     p->stream);
}

template <class T> struct cub_greater_than {
    T c;
    __host__ __device__ bool operator()(const T &x) const { return x > c; }
};

template <class T, int PARTITION> static cudaError_t cub_select(cub_peer *p) {
    T c;
    memcpy(&c, p->value, sizeof(T));
    if (PARTITION)
        return cub::DevicePartition::If(p->temp, p->temp_bytes, (const T *)p->in, (T *)p->out, (int64_t *)p->count,
                                        p->n, cub_greater_than<T>{c}, p->stream);
    return cub::DeviceSelect::If(p->temp, p->temp_bytes, (const T *)p->in, (T *)p->out, (int64_t *)p->count, p->n,
                                 cub_greater_than<T>{c}, p->stream);
}

/* By flags the keys are only moved: K is an unsigned integer of the key's width. */
template <class K, int PARTITION> static cudaError_t cub_flagged(cub_peer *p) {
    if (PARTITION)
        return cub::DevicePartition::Flagged(p->temp, p->temp_bytes, (const K *)p->in, (const uint8_t *)p->in2,
                                             (K *)p->out, (int64_t *)p->count, p->n, p->stream);
    return cub::DeviceSelect::Flagged(p->temp, p->temp_bytes, (const K *)p->in, (const uint8_t *)p->in2, (K *)p->out,
                                      (int64_t *)p->count, p->n, p->stream);
}

/* Unique compares bit for bit, as pscan's PSCAN_PRED_UNIQUE: K is an unsigned integer of the key's width. */
template <class K> static cudaError_t cub_unique(cub_peer *p) {
    return cub::DeviceSelect::Unique(p->temp, p->temp_bytes, (const K *)p->in, (K *)p->out, (int64_t *)p->count, p->n,
                                     p->stream);
}

static pscan_status cub_peer_once(void *arg) {
    cub_peer *p = (cub_peer *)arg;
    return cuda_status(p->run(p));
}

/* Size query, storage outside the timed region, the timing, then the storage freed. */
static pscan_status cub_peer_time(pscan_context *ctx, cub_peer *p, uint64_t n, int reps, ps_bench_time *t) {
    if (!p->run || n == 0 || (!p->wide && n > 0x7fffffffull)) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    pscan_status s = pscan_cuda_context_stream(ctx, &p->stream);
    if (s != PSCAN_SUCCESS) return s;
    p->n = (int)(p->wide ? 0 : n);
    p->n64 = (int64_t)n;
    p->temp = NULL;
    p->temp_bytes = 0;
    s = cuda_status(p->run(p));
    if (s != PSCAN_SUCCESS) return s;
    if (p->temp_bytes == 0) p->temp_bytes = 1;
    s = cuda_status(cudaMalloc(&p->temp, p->temp_bytes));
    if (s != PSCAN_SUCCESS) {
        cudaGetLastError();
        return s;
    }
    s = time_median(ctx, cub_peer_once, p, reps, t);
    cudaError_t err = cudaStreamSynchronize(p->stream);
    cudaFree(p->temp);
    return s != PSCAN_SUCCESS ? s : cuda_status(err);
}

extern "C" pscan_status ps_bench_cuda_time_cub_reduce(pscan_context *ctx, pscan_type type, pscan_op op,
                                                      const void *in, void *out, uint64_t n, int reps,
                                                      ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.out = out;
    cub_identity(type, op, p.value);
    /* the same set as the scan's peer (cub_lookup), through the same switch shape */
#define BENCH_CUB_REDUCE_(T)                                                                                     p.run = op == PSCAN_OP_SUM   ? cub_reduce<T, cuda::std::plus<T>>                                                     : op == PSCAN_OP_MIN ? cub_reduce<T, cuda::minimum<T>>                                                       : op == PSCAN_OP_MAX ? cub_reduce<T, cuda::maximum<T>>                                                                            : NULL
    switch (type) {
    case PSCAN_TYPE_I32: BENCH_CUB_REDUCE_(int32_t); break;
    case PSCAN_TYPE_U32: BENCH_CUB_REDUCE_(uint32_t); break;
    case PSCAN_TYPE_F32: BENCH_CUB_REDUCE_(float); break;
    case PSCAN_TYPE_I64: BENCH_CUB_REDUCE_(int64_t); break;
    case PSCAN_TYPE_U64: BENCH_CUB_REDUCE_(uint64_t); break;
    case PSCAN_TYPE_F64: BENCH_CUB_REDUCE_(double); break;
    case PSCAN_TYPE_U8: p.run = op == PSCAN_OP_SUM ? cub_reduce<uint8_t, cuda::std::plus<uint8_t>> : NULL; break;
    case PSCAN_TYPE_U16: p.run = op == PSCAN_OP_SUM ? cub_reduce<uint16_t, cuda::std::plus<uint16_t>> : NULL; break;
    default: break;
    }
#undef BENCH_CUB_REDUCE_
    return cub_peer_time(ctx, &p, n, reps, t);
}

extern "C" pscan_status ps_bench_cuda_time_cub_select(pscan_context *ctx, pscan_type type, const void *operand,
                                                      const void *flags, int unique, int partition, const void *in,
                                                      void *out, void *count, uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || (!operand && !flags && !unique) || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = in;
    p.in2 = flags;
    p.out = out;
    p.count = count;
    if (unique) { /* CUB has no partition by uniqueness */
        switch (partition ? 0 : pscan_type_size(type)) {
        case 1: p.run = cub_unique<uint8_t>; break;
        case 2: p.run = cub_unique<uint16_t>; break;
        case 4: p.run = cub_unique<uint32_t>; break;
        case 8: p.run = cub_unique<uint64_t>; break;
        default: break;
        }
        return cub_peer_time(ctx, &p, n, reps, t);
    }
    if (flags) {
        switch (pscan_type_size(type)) {
        case 1: p.run = partition ? cub_flagged<uint8_t, 1> : cub_flagged<uint8_t, 0>; break;
        case 2: p.run = partition ? cub_flagged<uint16_t, 1> : cub_flagged<uint16_t, 0>; break;
        case 4: p.run = partition ? cub_flagged<uint32_t, 1> : cub_flagged<uint32_t, 0>; break;
        case 8: p.run = partition ? cub_flagged<uint64_t, 1> : cub_flagged<uint64_t, 0>; break;
        default: break;
        }
        return cub_peer_time(ctx, &p, n, reps, t);
    }
    memcpy(p.value, operand, pscan_type_size(type));
#define BENCH_CUB_SELECT_(NAME, name, ctype)                                                                   \
    case PSCAN_TYPE_##NAME: p.run = partition ? cub_select<ctype, 1> : cub_select<ctype, 0>; break;
    switch (type) {
        PSCAN_TYPE_LIST(BENCH_CUB_SELECT_)
    default: break;
    }
#undef BENCH_CUB_SELECT_
    return cub_peer_time(ctx, &p, n, reps, t);
}

/* ---- by key, rle, histogram, sort ---------------------------------------------------------------------- */

template <class K, class T> static cudaError_t cub_scan_by_key(cub_peer *p) {
    return cub::DeviceScan::InclusiveSumByKey(p->temp, p->temp_bytes, (const K *)p->in2, (const T *)p->in,
                                              (T *)p->out, p->n, cuda::std::equal_to<>{}, p->stream);
}

template <class T> static cudaError_t cub_reduce_by_key(cub_peer *p) {
    return cub::DeviceReduce::ReduceByKey(p->temp, p->temp_bytes, (const uint32_t *)p->in2, (uint32_t *)p->out2,
                                          (const T *)p->in, (T *)p->out, (int64_t *)p->count, cuda::std::plus<T>{},
                                          p->n, p->stream);
}

template <class T> static cudaError_t cub_rle(cub_peer *p) {
    return cub::DeviceRunLengthEncode::Encode(p->temp, p->temp_bytes, (const T *)p->in, (T *)p->out,
                                              (uint64_t *)p->out2, (int64_t *)p->count, p->n, p->stream);
}

static cudaError_t cub_histogram(cub_peer *p) {
    return cub::DeviceHistogram::HistogramEven(p->temp, p->temp_bytes, (const uint32_t *)p->in, (unsigned int *)p->out,
                                               p->bins + 1, 0u, (unsigned int)p->bins, p->n, p->stream);
}

/* N: CUB's offset type, int (n) or int64_t (n64): CUB picks its onesweep tile by it. */
template <class K, int PAIRS, class N> static cudaError_t cub_sort(cub_peer *p) {
    const N n = sizeof(N) == 8 ? (N)p->n64 : (N)p->n;
    if (PAIRS)
        return cub::DeviceRadixSort::SortPairs(p->temp, p->temp_bytes, (const K *)p->in, (K *)p->out,
                                               (const uint32_t *)p->in2, (uint32_t *)p->out2, n, 0,
                                               (int)sizeof(K) * 8, p->stream);
    return cub::DeviceRadixSort::SortKeys(p->temp, p->temp_bytes, (const K *)p->in, (K *)p->out, n, 0,
                                          (int)sizeof(K) * 8, p->stream);
}

/* The value types the by-key peers instantiate (sum only; each costs seconds of compile time): u32 and u64 sums
 * go through i32 and i64, whose wrapping sums have the same bits. */
#define BENCH_CUB_BY_KEY_(TEMPLATE, ...)                                                                          \
    switch (type) {                                                                                          \
    case PSCAN_TYPE_I32:                                                                                     \
    case PSCAN_TYPE_U32: p.run = TEMPLATE<__VA_ARGS__ int32_t>; break;                                        \
    case PSCAN_TYPE_I64:                                                                                     \
    case PSCAN_TYPE_U64: p.run = TEMPLATE<__VA_ARGS__ int64_t>; break;                                        \
    case PSCAN_TYPE_F32: p.run = TEMPLATE<__VA_ARGS__ float>; break;                                          \
    case PSCAN_TYPE_F64: p.run = TEMPLATE<__VA_ARGS__ double>; break;                                         \
    default: break;                                                                                          \
    }

extern "C" pscan_status ps_bench_cuda_time_cub_scan_by_key(pscan_context *ctx, pscan_type type, pscan_op op,
                                                           size_t key_bytes, const void *keys, const void *in,
                                                           void *out, uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = in, p.in2 = keys, p.out = out;
    if (op == PSCAN_OP_SUM && key_bytes == 1) {
        BENCH_CUB_BY_KEY_(cub_scan_by_key, uint8_t, )
    } else if (op == PSCAN_OP_SUM && key_bytes == 4) {
        BENCH_CUB_BY_KEY_(cub_scan_by_key, uint32_t, )
    }
    return cub_peer_time(ctx, &p, n, reps, t);
}

extern "C" pscan_status ps_bench_cuda_time_cub_reduce_by_key(pscan_context *ctx, pscan_type type, pscan_op op,
                                                             const void *keys_in, const void *values_in,
                                                             void *keys_out, void *values_out, void *count,
                                                             uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = values_in, p.in2 = keys_in, p.out = values_out, p.out2 = keys_out, p.count = count;
    if (op == PSCAN_OP_SUM) {
        BENCH_CUB_BY_KEY_(cub_reduce_by_key, )
    }
    return cub_peer_time(ctx, &p, n, reps, t);
}
#undef BENCH_CUB_BY_KEY_

extern "C" pscan_status ps_bench_cuda_time_cub_rle(pscan_context *ctx, pscan_type type, const void *in,
                                                   void *values_out, void *lengths_out, void *count, uint64_t n,
                                                   int reps, ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = in, p.out = values_out, p.out2 = lengths_out, p.count = count;
    switch (pscan_type_size(type)) { /* bit for bit: unsigned integers of the element's width */
    case 1: p.run = cub_rle<uint8_t>; break;
    case 2: p.run = cub_rle<uint16_t>; break;
    case 4: p.run = cub_rle<uint32_t>; break;
    case 8: p.run = cub_rle<uint64_t>; break;
    default: break;
    }
    return cub_peer_time(ctx, &p, n, reps, t);
}

extern "C" pscan_status ps_bench_cuda_time_cub_histogram(pscan_context *ctx, uint32_t bins, const void *samples,
                                                         void *counts, uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = samples, p.out = counts, p.bins = (int)bins;
    p.run = bins >= 1 && bins <= 65536 ? cub_histogram : NULL;
    return cub_peer_time(ctx, &p, n, reps, t);
}

/* Neither of CUB's offset types sorts faster everywhere (H200, 2^28, tools/tune/tune_sort.cu: u32 keys 5.41 ms
 * with int64_t against 6.32 ms with int, u32 pairs 8.49 against 7.41), so the peer is the faster of the two
 * calls, as a user who timed both would choose (int only below 2^31). */
extern "C" pscan_status ps_bench_cuda_time_cub_sort(pscan_context *ctx, pscan_type type, size_t value_bytes,
                                                    const void *keys_in, const void *values_in, void *keys_out,
                                                    void *values_out, uint64_t n, int reps, ps_bench_time *t) {
    if (!ctx || !t) return PSCAN_ERROR_NULL_POINTER;
    if (value_bytes != 0 && value_bytes != 4) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
#define BENCH_CUB_SORT_(K, N) (value_bytes == 4 ? cub_sort<K, 1, N> : cub_sort<K, 0, N>)
    cudaError_t (*narrow)(cub_peer *) = NULL, (*wide)(cub_peer *) = NULL;
    if (type == PSCAN_TYPE_U32) narrow = BENCH_CUB_SORT_(uint32_t, int), wide = BENCH_CUB_SORT_(uint32_t, int64_t);
    else if (type == PSCAN_TYPE_U64) narrow = BENCH_CUB_SORT_(uint64_t, int), wide = BENCH_CUB_SORT_(uint64_t, int64_t);
#undef BENCH_CUB_SORT_
    cub_peer p;
    memset(&p, 0, sizeof p);
    p.in = keys_in, p.in2 = values_in, p.out = keys_out, p.out2 = values_out;
    p.run = wide, p.wide = 1;
    pscan_status s = cub_peer_time(ctx, &p, n, reps, t);
    if (s != PSCAN_SUCCESS || n > 0x7fffffffull) return s;
    ps_bench_time t_int;
    p.run = narrow, p.wide = 0;
    s = cub_peer_time(ctx, &p, n, reps, &t_int);
    if (s == PSCAN_SUCCESS && t_int.seconds < t->seconds) *t = t_int;
    return s;
}
