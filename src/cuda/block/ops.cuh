/*
 * block/ops.cuh - element types and operators on the device, from the same lists and macros as the CPU
 * (pscan_ops.h). Device-level code only: it includes no host dispatch header. Internal.
 *
 * Op::combine(a, b) is a (+) b, earlier element on the left (never assumed commutative); Op::identity<T>()
 * pads partial tiles; ps_cuda_type<T>::arith is the type integer arithmetic wraps in.
 */
#ifndef PSCAN_BLOCK_OPS_CUH
#define PSCAN_BLOCK_OPS_CUH

#include <cuda_runtime.h>

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

/* Whether a (+) b and b (+) a have the same bits for every a, b of type T (a reduce then folds in fewer steps):
 * yes for every operator on integers and for float sums and products; not for float min and max, whose
 * result among equal values (-0 and +0, NaNs of different payloads) is the left one. */
#define PS_CUDA_COMMUTES_SUM(T) true
#define PS_CUDA_COMMUTES_PRODUCT(T) true
#define PS_CUDA_COMMUTES_MIN(T) ((T)0.5 == (T)0) /* an integer type */
#define PS_CUDA_COMMUTES_MAX(T) ((T)0.5 == (T)0)
#define PS_CUDA_COMMUTES_AND(T) true
#define PS_CUDA_COMMUTES_OR(T) true
#define PS_CUDA_COMMUTES_XOR(T) true

/* Whether combine(x, x) == x, bit for bit, for every x: min and max return one of two identical operands (a NaN
 * included), and and or of a value with itself is the value. A warp scan of such an operator needs no lane test
 * (block/warp.cuh: ps_warp_inclusive_idempotent). */
#define PS_CUDA_IDEMPOTENT_SUM false
#define PS_CUDA_IDEMPOTENT_PRODUCT false
#define PS_CUDA_IDEMPOTENT_MIN true
#define PS_CUDA_IDEMPOTENT_MAX true
#define PS_CUDA_IDEMPOTENT_AND true
#define PS_CUDA_IDEMPOTENT_OR true
#define PS_CUDA_IDEMPOTENT_XOR false

/* One functor per operator of the public list: combine and identity from pscan_ops.h's macros. */
#define PS_CUDA_OP_(OP, op)                                                                                  \
    struct ps_cuda_op_##op {                                                                                 \
        template <class T> static __host__ __device__ constexpr bool commutes() { return PS_CUDA_COMMUTES_##OP(T); } \
        enum { IDEMPOTENT = PS_CUDA_IDEMPOTENT_##OP };                                                       \
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

/* Calls f(K()) with K the unsigned integer of key_bytes bytes (1, 2, 4, else 8), so a tile picks its keys' type
 * once and runs code templated on it (keys compare bit for bit as that integer). */
template <class F> static __device__ __forceinline__ void ps_with_key_type(uint32_t key_bytes, F f) {
    switch (key_bytes) {
    case 1: f(uint8_t()); break;
    case 2: f(uint16_t()); break;
    case 4: f(uint32_t()); break;
    default: f((unsigned long long)0); break;
    }
}

#endif /* PSCAN_BLOCK_OPS_CUH */
