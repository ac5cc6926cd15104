/*
 * cuda_ops.cuh - element types and operators on the device, from the same lists and macros as the CPU
 * (pscan_ops.h), plus the one table that turns a runtime (type, op) into a template instantiation. Internal.
 *
 * Usage in an algorithm file:
 *   template <class T, class Op> struct my_scan {
 *       static cudaError_t run(const ps_request *call, const ps_cuda_device *dev);
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

#include "block/ops.cuh"

/* Algo<T, Op>::run for a runtime (type, op), by a switch generated from the public lists: every type x
 * operator pair the core accepts has an instantiation (bitwise operators on floats are refused before any
 * backend runs). pscan_ops.h checks at compile time that its arithmetic list names exactly the public types. */
template <template <class, class> class Algo> struct ps_cuda_dispatch {
    template <class T> static cudaError_t run_arith(const ps_request *call, const ps_cuda_device *dev) {
        switch (call->op) {
        case PSCAN_OP_SUM: return Algo<T, ps_cuda_op_sum>::run(call, dev);
        case PSCAN_OP_PRODUCT: return Algo<T, ps_cuda_op_product>::run(call, dev);
        case PSCAN_OP_MIN: return Algo<T, ps_cuda_op_min>::run(call, dev);
        case PSCAN_OP_MAX: return Algo<T, ps_cuda_op_max>::run(call, dev);
        default: return cudaErrorInvalidValue;
        }
    }
    template <class T> static cudaError_t run_int(const ps_request *call, const ps_cuda_device *dev) {
        switch (call->op) {
        case PSCAN_OP_AND: return Algo<T, ps_cuda_op_and>::run(call, dev);
        case PSCAN_OP_OR: return Algo<T, ps_cuda_op_or>::run(call, dev);
        case PSCAN_OP_XOR: return Algo<T, ps_cuda_op_xor>::run(call, dev);
        default: return run_arith<T>(call, dev);
        }
    }
    static cudaError_t run(const ps_request *call, const ps_cuda_device *dev) {
        switch (call->type) {
#define PS_CUDA_CASE_INT_(NAME, name, T, U, LOWEST, HIGHEST)                                                 \
    case PSCAN_TYPE_##NAME: return run_int<T>(call, dev);
#define PS_CUDA_CASE_FLOAT_(NAME, name, T, U, LOWEST, HIGHEST)                                               \
    case PSCAN_TYPE_##NAME: return run_arith<T>(call, dev);
            PSCAN_ARITH_INT_TYPE_LIST(PS_CUDA_CASE_INT_)
            PSCAN_ARITH_FLOAT_TYPE_LIST(PS_CUDA_CASE_FLOAT_)
#undef PS_CUDA_CASE_INT_
#undef PS_CUDA_CASE_FLOAT_
        default: return cudaErrorInvalidValue;
        }
    }
};

#endif /* PSCAN_CUDA_OPS_CUH */
