/*
 * pscan_ops.h - what each operator does to each element type, as macros that C, CUDA C and the CPU reference
 * share. Internal; not installed.
 *
 * PSCAN_ARITH_TYPE_LIST(X) extends the public type list with the type the arithmetic is done in and the
 * type's lowest and highest values: X(NAME, name, T, U, LOWEST, HIGHEST). Integer sums and products go
 * through U, an unsigned type at least as wide as unsigned int, so that signed overflow wraps instead of
 * being undefined and 16-bit products never overflow a promoted int.
 */
#ifndef PSCAN_OPS_H
#define PSCAN_OPS_H

#include <math.h>
#include <stdint.h>

#include "pscan.h"

#define PSCAN_ARITH_INT_TYPE_LIST(X)                                                                         \
    X(I8, i8, int8_t, uint32_t, INT8_MIN, INT8_MAX)                                                          \
    X(U8, u8, uint8_t, uint32_t, 0, UINT8_MAX)                                                               \
    X(I16, i16, int16_t, uint32_t, INT16_MIN, INT16_MAX)                                                     \
    X(U16, u16, uint16_t, uint32_t, 0, UINT16_MAX)                                                           \
    X(I32, i32, int32_t, uint32_t, INT32_MIN, INT32_MAX)                                                     \
    X(U32, u32, uint32_t, uint32_t, 0, UINT32_MAX)                                                           \
    X(I64, i64, int64_t, uint64_t, INT64_MIN, INT64_MAX)                                                     \
    X(U64, u64, uint64_t, uint64_t, 0, UINT64_MAX)
#define PSCAN_ARITH_FLOAT_TYPE_LIST(X)                                                                       \
    X(F32, f32, float, float, -HUGE_VALF, HUGE_VALF)                                                         \
    X(F64, f64, double, double, -HUGE_VAL, HUGE_VAL)
#define PSCAN_ARITH_TYPE_LIST(X) PSCAN_ARITH_INT_TYPE_LIST(X) PSCAN_ARITH_FLOAT_TYPE_LIST(X)

/* Compile-time check that the arithmetic list names exactly the public types: each row must name a public
 * enum value (else PSCAN_TYPE_<NAME> is undeclared), its C type must have the public type's size, and the
 * counts must agree, so every backend table generated from either list covers every type. */
#define PS_ARITH_ROW_CHECK_(NAME, name, T, U, LOWEST, HIGHEST)                                               \
    typedef char ps_arith_row_##name##_[(PSCAN_TYPE_##NAME >= 0 && sizeof(T) == sizeof(ps_public_##name##_)) ? 1 : -1];
#define PS_PUBLIC_TYPEDEF_(NAME, name, ctype) typedef ctype ps_public_##name##_;
PSCAN_TYPE_LIST(PS_PUBLIC_TYPEDEF_)
PSCAN_ARITH_TYPE_LIST(PS_ARITH_ROW_CHECK_)
#define PS_ARITH_COUNT_(NAME, name, T, U, LOWEST, HIGHEST) +1
typedef char ps_arith_list_covers_public_types_[(0 PSCAN_ARITH_TYPE_LIST(PS_ARITH_COUNT_)) == PSCAN_TYPE_COUNT ? 1 : -1];
#undef PS_ARITH_ROW_CHECK_
#undef PS_PUBLIC_TYPEDEF_
#undef PS_ARITH_COUNT_

/* PSCAN_SCAN_WIDEN: every type that widens, its C type, its 64-bit type and that one's C type, X(NAME, T, WIDE, W);
 * the 64-bit types widen to themselves and are not listed. */
#define PS_WIDEN_LIST(X)                                                                                     \
    X(I8, int8_t, I64, int64_t) X(U8, uint8_t, U64, uint64_t) X(I16, int16_t, I64, int64_t)                  \
    X(U16, uint16_t, U64, uint64_t) X(I32, int32_t, I64, int64_t) X(U32, uint32_t, U64, uint64_t)            \
    X(F32, float, F64, double)

/* a (+) b for each operator. T is the element type, U its arithmetic type (see above). */
#define PSCAN_COMBINE_SUM(T, U, a, b) ((T)((U)(a) + (U)(b)))
#define PSCAN_COMBINE_PRODUCT(T, U, a, b) ((T)((U)(a) * (U)(b)))
/* min and max propagate the first NaN (x != x only for a NaN; for integers the compiler drops the test), which
 * keeps them associative on floats; of equal elements (-0.0 and +0.0 too) they keep the earlier one. */
#define PSCAN_COMBINE_MIN(T, U, a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define PSCAN_COMBINE_MAX(T, U, a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (b) : (a))
#define PSCAN_COMBINE_AND(T, U, a, b) ((T)((a) & (b)))
#define PSCAN_COMBINE_OR(T, U, a, b) ((T)((a) | (b)))
#define PSCAN_COMBINE_XOR(T, U, a, b) ((T)((a) ^ (b)))

/* The identity e of each operator: e (+) x == x for every x of the type. Partial tiles are padded with it. */
#define PSCAN_IDENTITY_SUM(T, LOWEST, HIGHEST) ((T)0)
#define PSCAN_IDENTITY_PRODUCT(T, LOWEST, HIGHEST) ((T)1)
#define PSCAN_IDENTITY_MIN(T, LOWEST, HIGHEST) ((T)(HIGHEST))
#define PSCAN_IDENTITY_MAX(T, LOWEST, HIGHEST) ((T)(LOWEST))
#define PSCAN_IDENTITY_AND(T, LOWEST, HIGHEST) ((T)~(T)0)
#define PSCAN_IDENTITY_OR(T, LOWEST, HIGHEST) ((T)0)
#define PSCAN_IDENTITY_XOR(T, LOWEST, HIGHEST) ((T)0)

/* One element of any type, a user operator's too (PSCAN_USER_OP_MAX_BYTES), for initial values and
 * identities passed by value. */
typedef union ps_value {
#define PSCAN_VALUE_MEMBER_(NAME, name, ctype) ctype name;
    PSCAN_TYPE_LIST(PSCAN_VALUE_MEMBER_)
#undef PSCAN_VALUE_MEMBER_
    unsigned char bytes[PSCAN_USER_OP_MAX_BYTES];
} ps_value;

/* Whether the operator is defined for the type: bitwise operators need an integer type. */
static inline int ps_op_supports_type(pscan_op op, pscan_type type) {
    int bitwise = op == PSCAN_OP_AND || op == PSCAN_OP_OR || op == PSCAN_OP_XOR;
    int floating = type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64;
    return !(bitwise && floating);
}

#endif /* PSCAN_OPS_H */
