/*
 * cuda_ops.cuh - element types and operators on the device, from the same lists and macros as the CPU
 * (pscan_ops.h), plus the one table that turns a runtime (type, op) into a template instantiation. Internal.
 *
 * Usage in an algorithm file:
 *   template <class T, class Op> struct my_scan {
 *       static cudaError_t run(const ps_scan_call *call, const ps_cuda_device *dev);
 *   };
 *   ... ps_cuda_dispatch<my_scan>::run(call, dev) calls my_scan<int32_t, ps_cuda_op_sum>::run for i32 + sum.
 * Op::combine(a, b) is a (+) b; Op::identity<T>() pads partial tiles; ps_cuda_type<T>::arith is the type
 * integer arithmetic wraps in.
 */
#ifndef PSCAN_CUDA_OPS_CUH
#define PSCAN_CUDA_OPS_CUH

#include <cuda_runtime.h>

#include "cuda_backend.h"
#include "pscan_ops.h"

template <class T> struct ps_cuda_type;
#define PS_CUDA_TYPE_INT_(NAME, name, T, U, LOWEST, HIGHEST)                                                 \
    template <> struct ps_cuda_type<T> {                                                                     \
        typedef U arith;                                                                                     \
        static __host__ __device__ __forceinline__ T lowest() { return (T)(LOWEST); }                        \
        static __host__ __device__ __forceinline__ T highest() { return (T)(HIGHEST); }                      \
    };
PSCAN_ARITH_INT_TYPE_LIST(PS_CUDA_TYPE_INT_)
#undef PS_CUDA_TYPE_INT_
/* Infinities are the identities of min and max on floats; __builtin_huge_val works on host and device. */
template <> struct ps_cuda_type<float> {
    typedef float arith;
    static __host__ __device__ __forceinline__ float lowest() { return -__builtin_huge_valf(); }
    static __host__ __device__ __forceinline__ float highest() { return __builtin_huge_valf(); }
};
template <> struct ps_cuda_type<double> {
    typedef double arith;
    static __host__ __device__ __forceinline__ double lowest() { return -__builtin_huge_val(); }
    static __host__ __device__ __forceinline__ double highest() { return __builtin_huge_val(); }
};

/* One functor per operator of the public list: combine and identity from pscan_ops.h's macros. */
#define PS_CUDA_OP_(OP, op)                                                                                  \
    struct ps_cuda_op_##op {                                                                                 \
        template <class T> static __host__ __device__ __forceinline__ T combine(T a, T b) {                  \
            typedef typename ps_cuda_type<T>::arith U;                                                       \
            return PSCAN_COMBINE_##OP(T, U, a, b);                                                           \
        }                                                                                                    \
        template <class T> static __host__ __device__ __forceinline__ T identity() {                         \
            return PSCAN_IDENTITY_##OP(T, ps_cuda_type<T>::lowest(), ps_cuda_type<T>::highest());            \
        }                                                                                                    \
    };
PSCAN_OP_LIST(PS_CUDA_OP_)
#undef PS_CUDA_OP_

/* The table of Algo<T, Op>::run over the public type x operator lists, in enum order; bitwise operators on
 * float types have no entry (the core refuses them before any backend runs). */
template <template <class, class> class Algo> struct ps_cuda_dispatch {
    typedef cudaError_t (*fn)(const ps_scan_call *, const ps_cuda_device *);
#define PS_CUDA_ARITH_(T) &Algo<T, ps_cuda_op_sum>::run, &Algo<T, ps_cuda_op_product>::run,                  \
                          &Algo<T, ps_cuda_op_min>::run, &Algo<T, ps_cuda_op_max>::run
#define PS_CUDA_ROW_INT_(NAME, name, T, U, LOWEST, HIGHEST)                                                  \
    {PS_CUDA_ARITH_(T), &Algo<T, ps_cuda_op_and>::run, &Algo<T, ps_cuda_op_or>::run,                         \
     &Algo<T, ps_cuda_op_xor>::run},
#define PS_CUDA_ROW_FLOAT_(NAME, name, T, U, LOWEST, HIGHEST) {PS_CUDA_ARITH_(T), 0, 0, 0},
    static cudaError_t run(const ps_scan_call *call, const ps_cuda_device *dev) {
        static const fn table[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT] = {
            PSCAN_ARITH_INT_TYPE_LIST(PS_CUDA_ROW_INT_) PSCAN_ARITH_FLOAT_TYPE_LIST(PS_CUDA_ROW_FLOAT_)};
        return table[call->type][call->op](call, dev);
    }
#undef PS_CUDA_ARITH_
#undef PS_CUDA_ROW_INT_
#undef PS_CUDA_ROW_FLOAT_
};

#endif /* PSCAN_CUDA_OPS_CUH */
