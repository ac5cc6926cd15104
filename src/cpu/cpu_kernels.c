/*
 * cpu_kernels.c - reduce, scan, chains and combine for every (type, operator), expanded from the lists in
 * pscan.h and pscan_ops.h. The serial scan here is the reference every backend is tested against: one loop,
 * one carry, obviously correct.
 */
#include "cpu_kernels.h"

/* Eight independent accumulators, each over its own contiguous eighth of the range, combined in order: the
 * loads of the eight streams overlap and a floating-point add's latency is hidden, and no element ever meets
 * a later one before an earlier one (the operator is never assumed commutative: NaN and -0.0 keep their
 * order for min and max). */
#define PSCAN_CPU_LANES 8

/* One element of each chain, written out for four chains: x is read before out is written, so in == out works. */
#if PSCAN_CPU_CHAINS != 4
#error "PSCAN_CPU_CHAIN_STEP and the chains function are written for 4 chains"
#endif
#define PSCAN_CPU_CHAIN_STEP(OP, T, U, i, exclusive)                                                         \
    {                                                                                                        \
        T x0 = i0[i], x1 = i1[i], x2 = i2[i], x3 = i3[i];                                                    \
        if (exclusive) o0[i] = a0, o1[i] = a1, o2[i] = a2, o3[i] = a3;                                       \
        a0 = PSCAN_COMBINE_##OP(T, U, a0, x0);                                                               \
        a1 = PSCAN_COMBINE_##OP(T, U, a1, x1);                                                               \
        a2 = PSCAN_COMBINE_##OP(T, U, a2, x2);                                                               \
        a3 = PSCAN_COMBINE_##OP(T, U, a3, x3);                                                               \
        if (!(exclusive)) o0[i] = a0, o1[i] = a1, o2[i] = a2, o3[i] = a3;                                    \
    }

#define PSCAN_CPU_DEFINE(OP, op, NAME, name, T, U, LOWEST, HIGHEST)                                          \
    static void reduce_##name##_##op(const void *in_, uint64_t begin, uint64_t end, ps_value *total) {    \
        const T *in = (const T *)in_;                                                                        \
        T lane[PSCAN_CPU_LANES];                                                                             \
        for (int k = 0; k < PSCAN_CPU_LANES; k++) lane[k] = PSCAN_IDENTITY_##OP(T, LOWEST, HIGHEST);         \
        const uint64_t q = (end - begin) / PSCAN_CPU_LANES;                                                  \
        for (uint64_t i = 0; i < q; i++)                                                                     \
            for (int k = 0; k < PSCAN_CPU_LANES; k++)                                                        \
                lane[k] = PSCAN_COMBINE_##OP(T, U, lane[k], in[begin + (uint64_t)k * q + i]);                \
        T acc = lane[0];                                                                                     \
        for (int k = 1; k < PSCAN_CPU_LANES; k++) acc = PSCAN_COMBINE_##OP(T, U, acc, lane[k]);              \
        for (uint64_t i = begin + PSCAN_CPU_LANES * q; i < end; i++) acc = PSCAN_COMBINE_##OP(T, U, acc, in[i]); \
        total->name = acc;                                                                                   \
    }                                                                                                        \
    static void scan_##name##_##op(const void *in_, void *out_, uint64_t begin, uint64_t end, int exclusive, \
                                   int reverse, ps_value *carry) {                                        \
        const T *in = (const T *)in_;                                                                        \
        T *out = (T *)out_;                                                                                  \
        T acc = carry->name;                                                                                 \
        if (!reverse && !exclusive)                                                                          \
            for (uint64_t i = begin; i < end; i++) out[i] = acc = PSCAN_COMBINE_##OP(T, U, acc, in[i]);      \
        else if (!reverse)                                                                                   \
            for (uint64_t i = begin; i < end; i++) {                                                         \
                T x = in[i];                                                                                 \
                out[i] = acc;                                                                                \
                acc = PSCAN_COMBINE_##OP(T, U, acc, x);                                                      \
            }                                                                                                \
        else if (!exclusive)                                                                                 \
            for (uint64_t i = end; i-- > begin;) out[i] = acc = PSCAN_COMBINE_##OP(T, U, acc, in[i]);        \
        else                                                                                                 \
            for (uint64_t i = end; i-- > begin;) {                                                           \
                T x = in[i];                                                                                 \
                out[i] = acc;                                                                                \
                acc = PSCAN_COMBINE_##OP(T, U, acc, x);                                                      \
            }                                                                                                \
        carry->name = acc;                                                                                   \
    }                                                                                                        \
    static void chains_##name##_##op(const void *const *in, void *const *out, uint64_t len, int exclusive,   \
                                     int reverse, ps_value *carry) {                                         \
        const T *i0 = (const T *)in[0], *i1 = (const T *)in[1], *i2 = (const T *)in[2],                      \
                *i3 = (const T *)in[3];                                                                      \
        T *o0 = (T *)out[0], *o1 = (T *)out[1], *o2 = (T *)out[2], *o3 = (T *)out[3];                        \
        T a0 = carry[0].name, a1 = carry[1].name, a2 = carry[2].name, a3 = carry[3].name;                    \
        if (!reverse && !exclusive)                                                                          \
            for (uint64_t i = 0; i < len; i++) PSCAN_CPU_CHAIN_STEP(OP, T, U, i, 0)                          \
        else if (!reverse)                                                                                   \
            for (uint64_t i = 0; i < len; i++) PSCAN_CPU_CHAIN_STEP(OP, T, U, i, 1)                          \
        else if (!exclusive)                                                                                 \
            for (uint64_t i = len; i-- > 0;) PSCAN_CPU_CHAIN_STEP(OP, T, U, i, 0)                            \
        else                                                                                                 \
            for (uint64_t i = len; i-- > 0;) PSCAN_CPU_CHAIN_STEP(OP, T, U, i, 1)                            \
        carry[0].name = a0, carry[1].name = a1, carry[2].name = a2, carry[3].name = a3;                      \
    }                                                                                                        \
    static void combine_##name##_##op(ps_value *acc, const ps_value *x) {                              \
        acc->name = PSCAN_COMBINE_##OP(T, U, acc->name, x->name);                                            \
    }

#define PSCAN_CPU_DEFINE_ARITH(NAME, name, T, U, LOWEST, HIGHEST)                                            \
    PSCAN_CPU_DEFINE(SUM, sum, NAME, name, T, U, LOWEST, HIGHEST)                                            \
    PSCAN_CPU_DEFINE(PRODUCT, product, NAME, name, T, U, LOWEST, HIGHEST)                                    \
    PSCAN_CPU_DEFINE(MIN, min, NAME, name, T, U, LOWEST, HIGHEST)                                            \
    PSCAN_CPU_DEFINE(MAX, max, NAME, name, T, U, LOWEST, HIGHEST)
#define PSCAN_CPU_DEFINE_BITWISE(NAME, name, T, U, LOWEST, HIGHEST)                                          \
    PSCAN_CPU_DEFINE(AND, and, NAME, name, T, U, LOWEST, HIGHEST)                                            \
    PSCAN_CPU_DEFINE(OR, or, NAME, name, T, U, LOWEST, HIGHEST)                                              \
    PSCAN_CPU_DEFINE(XOR, xor, NAME, name, T, U, LOWEST, HIGHEST)

PSCAN_ARITH_TYPE_LIST(PSCAN_CPU_DEFINE_ARITH)
PSCAN_ARITH_INT_TYPE_LIST(PSCAN_CPU_DEFINE_BITWISE)

#define PSCAN_CPU_ENTRY(NAME, name, OP, op)                                                                  \
    [PSCAN_TYPE_##NAME][PSCAN_OP_##OP] = {reduce_##name##_##op, scan_##name##_##op, chains_##name##_##op,    \
                                          combine_##name##_##op},
#define PSCAN_CPU_ROW_ARITH(NAME, name, T, U, LOWEST, HIGHEST)                                               \
    PSCAN_CPU_ENTRY(NAME, name, SUM, sum)                                                                    \
    PSCAN_CPU_ENTRY(NAME, name, PRODUCT, product)                                                            \
    PSCAN_CPU_ENTRY(NAME, name, MIN, min) PSCAN_CPU_ENTRY(NAME, name, MAX, max)
#define PSCAN_CPU_ROW_BITWISE(NAME, name, T, U, LOWEST, HIGHEST)                                             \
    PSCAN_CPU_ENTRY(NAME, name, AND, and)                                                                    \
    PSCAN_CPU_ENTRY(NAME, name, OR, or) PSCAN_CPU_ENTRY(NAME, name, XOR, xor)

static const ps_cpu_kernels kernel_table[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT] = {
    PSCAN_ARITH_TYPE_LIST(PSCAN_CPU_ROW_ARITH) PSCAN_ARITH_INT_TYPE_LIST(PSCAN_CPU_ROW_BITWISE)};

const ps_cpu_kernels *ps_cpu_kernels_get(pscan_type type, pscan_op op) { return &kernel_table[type][op]; }
