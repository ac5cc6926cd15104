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

/* ---- one file's instantiations split over translation units -----------------------------------------------
 * The heaviest files (every type x operator x tier) take minutes each to compile, and a parallel build waits for
 * the slowest. CMake (PSCAN_CUDA_SPLIT_SOURCES in src/cuda/CMakeLists.txt) compiles each of them PS_CUDA_PARTS
 * times, with PS_CUDA_PART 0 to 3: part k instantiates the element types of part k only (by size: 1 byte, 2, 4,
 * 8) and defines its share of the entry, name##k; part 0 also holds what is per call, not per type (the
 * plan, the algorithm's table entry, the entry that picks a part by the call's type: PS_CUDA_PART_CALL). A file
 * compiled without PS_CUDA_PART (the tuning harnesses include the files) instantiates every type. */
#define PS_CUDA_PARTS 4
template <class T> constexpr int ps_cuda_part_of() {
    return sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
}

/* The part that instantiates a call's element type (the input's, for a widened scan). */
static inline int ps_cuda_type_part(pscan_type type) {
    switch (type) {
#define PS_CUDA_PART_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                \
    case PSCAN_TYPE_##NAME: return ps_cuda_part_of<T>();
        PSCAN_ARITH_TYPE_LIST(PS_CUDA_PART_CASE_)
#undef PS_CUDA_PART_CASE_
    default: return 0;
    }
}

/* PS_CUDA_PART_DECLARE(name) declares the parts' entries name0 .. name3 (each a cudaError_t (const
 * ps_request *, const ps_cuda_device *)); PS_CUDA_PART_FN(name) names this translation unit's; PS_CUDA_PART_CALL
 * is the entry's body (the part that instantiates the call's type runs it); PS_CUDA_PART_ZERO is 1 where the
 * per-call definitions belong. Unsplit, name0 takes every type. */
#define PS_CUDA_CAT_(a, b) a##b
#define PS_CUDA_CAT(a, b) PS_CUDA_CAT_(a, b)
#define PS_CUDA_PART_DECLARE(name)                                                                           \
    cudaError_t name##0(const ps_request *, const ps_cuda_device *);                                         \
    cudaError_t name##1(const ps_request *, const ps_cuda_device *);                                         \
    cudaError_t name##2(const ps_request *, const ps_cuda_device *);                                         \
    cudaError_t name##3(const ps_request *, const ps_cuda_device *)
#ifdef PS_CUDA_PART
static_assert(PS_CUDA_PART >= 0 && PS_CUDA_PART < PS_CUDA_PARTS, "a part of the split");
template <class T> constexpr bool ps_cuda_here() { return ps_cuda_part_of<T>() == PS_CUDA_PART; }
#define PS_CUDA_PART_FN(name) PS_CUDA_CAT(name, PS_CUDA_PART)
#define PS_CUDA_PART_ZERO (PS_CUDA_PART == 0)
#define PS_CUDA_PART_CALL(name, req, dev)                                                                    \
    switch (ps_cuda_type_part((req)->type)) {                                                                \
    case 1: return name##1(req, dev);                                                                        \
    case 2: return name##2(req, dev);                                                                        \
    case 3: return name##3(req, dev);                                                                        \
    default: return name##0(req, dev);                                                                       \
    }
#else
template <class T> constexpr bool ps_cuda_here() { return true; }
#define PS_CUDA_PART_FN(name) name##0
#define PS_CUDA_PART_ZERO 1
#define PS_CUDA_PART_CALL(name, req, dev) return name##0(req, dev);
#endif

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
/* a split file's part instantiates its own types only (the others never reach it: PS_CUDA_PART_CALL) */
#define PS_CUDA_CASE_INT_(NAME, name, T, U, LOWEST, HIGHEST)                                                 \
    case PSCAN_TYPE_##NAME:                                                                                  \
        if constexpr (ps_cuda_here<T>()) return run_int<T>(call, dev);                                       \
        return cudaErrorInvalidValue;
#define PS_CUDA_CASE_FLOAT_(NAME, name, T, U, LOWEST, HIGHEST)                                               \
    case PSCAN_TYPE_##NAME:                                                                                  \
        if constexpr (ps_cuda_here<T>()) return run_arith<T>(call, dev);                                     \
        return cudaErrorInvalidValue;
            PSCAN_ARITH_INT_TYPE_LIST(PS_CUDA_CASE_INT_)
            PSCAN_ARITH_FLOAT_TYPE_LIST(PS_CUDA_CASE_FLOAT_)
#undef PS_CUDA_CASE_INT_
#undef PS_CUDA_CASE_FLOAT_
        default: return cudaErrorInvalidValue;
        }
    }
};

#endif /* PSCAN_CUDA_OPS_CUH */
