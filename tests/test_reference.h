/*
 * test_reference.h - the serial scan reference and exact test data shared by the scale-out tests
 * (test_scan_host.c, mpi/test_mpi_scan.c, test_nccl_scan.c). Header-only, like test_common.h.
 *
 * The reference: integers as raw bits in a uint64 with the type's wraparound, floats in long double, one element
 * at a time in scan order, never through the library. Float data are exact in every order of combination (as in
 * test_reduce.c): multiples of 2^-4 for sums, +-1 and a few +-2^(+-1) for products, any values for min and max,
 * so every result is checked bit for bit.
 */
#ifndef PSCAN_TEST_REFERENCE_H
#define PSCAN_TEST_REFERENCE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"
#include "test_types.h"

static const pscan_op ops[] = {PSCAN_OP_SUM, PSCAN_OP_PRODUCT, PSCAN_OP_MIN, PSCAN_OP_MAX,
                               PSCAN_OP_AND, PSCAN_OP_OR,      PSCAN_OP_XOR};
#define OP_COUNT (sizeof ops / sizeof ops[0])
static inline int op_is_bitwise(pscan_op op) { return op == PSCAN_OP_AND || op == PSCAN_OP_OR || op == PSCAN_OP_XOR; }

/* ---- the reference (as in test_reduce.c: raw integer bits with the type's wraparound, floats in long double) ---- */

static inline uint64_t width_mask(const type_info *t) { return t->bytes == 8 ? ~0ull : (1ull << (8 * t->bytes)) - 1; }
static inline uint64_t sign_bit(const type_info *t) { return 1ull << (8 * t->bytes - 1); }
static inline long double load_float(const unsigned char *b, size_t i, const type_info *t) {
    if (t->bytes == 4) {
        float f;
        memcpy(&f, b + i * 4, 4);
        return f;
    }
    double d;
    memcpy(&d, b + i * 8, 8);
    return d;
}
static inline void store_float(unsigned char *b, size_t i, const type_info *t, long double v) {
    if (t->bytes == 4) {
        float f = (float)v;
        memcpy(b + i * 4, &f, 4);
    } else {
        double d = (double)v;
        memcpy(b + i * 8, &d, 8);
    }
}
static inline int int_less(const type_info *t, uint64_t a, uint64_t b) {
    uint64_t flip = t->is_signed ? sign_bit(t) : 0;
    return (a ^ flip) < (b ^ flip);
}
static inline uint64_t int_identity(const type_info *t, pscan_op op) {
    uint64_t mask = width_mask(t);
    switch (op) {
    case PSCAN_OP_SUM: return 0;
    case PSCAN_OP_PRODUCT: return 1;
    case PSCAN_OP_MIN: return t->is_signed ? mask >> 1 : mask;
    case PSCAN_OP_MAX: return t->is_signed ? sign_bit(t) : 0;
    case PSCAN_OP_AND: return mask;
    default: return 0;
    }
}
static inline uint64_t int_combine(const type_info *t, pscan_op op, uint64_t a, uint64_t b) {
    uint64_t mask = width_mask(t);
    switch (op) {
    case PSCAN_OP_SUM: return (a + b) & mask;
    case PSCAN_OP_PRODUCT: return (a * b) & mask;
    case PSCAN_OP_MIN: return int_less(t, b, a) ? b : a;
    case PSCAN_OP_MAX: return int_less(t, a, b) ? b : a;
    case PSCAN_OP_AND: return a & b;
    case PSCAN_OP_OR: return a | b;
    default: return a ^ b;
    }
}
static inline long double float_identity(pscan_op op) {
    switch (op) {
    case PSCAN_OP_SUM: return 0.0L;
    case PSCAN_OP_PRODUCT: return 1.0L;
    case PSCAN_OP_MIN: return HUGE_VALL;
    default: return -HUGE_VALL;
    }
}
static inline long double float_combine(pscan_op op, long double a, long double b) {
    switch (op) {
    case PSCAN_OP_SUM: return a + b;
    case PSCAN_OP_PRODUCT: return a * b;
    case PSCAN_OP_MIN: return a != a ? a : b != b ? b : b < a ? b : a;
    default: return a != a ? a : b != b ? b : a < b ? b : a;
    }
}

static inline void reference_scan(const type_info *t, pscan_op op, unsigned flags, const unsigned char *init,
                           const unsigned char *g, size_t n, unsigned char *ref) {
    const int excl = (flags & PSCAN_SCAN_EXCLUSIVE) != 0, rev = (flags & PSCAN_SCAN_REVERSE) != 0;
    uint64_t iacc = t->is_float ? 0 : load_raw(init, 0, t->bytes);
    long double facc = t->is_float ? load_float(init, 0, t) : 0;
    for (size_t k = 0; k < n; k++) {
        const size_t i = rev ? n - 1 - k : k;
        if (t->is_float) {
            if (excl) store_float(ref, i, t, facc);
            facc = float_combine(op, facc, load_float(g, i, t));
            if (!excl) store_float(ref, i, t, facc);
        } else {
            if (excl) store_raw(ref, i, t->bytes, iacc);
            iacc = int_combine(t, op, iacc, load_raw(g, i, t->bytes));
            if (!excl) store_raw(ref, i, t->bytes, iacc);
        }
    }
}

#define PRODUCT_OCTAVES 96
static inline void fill(test_rng *rng, const type_info *t, pscan_op op, unsigned char *g, size_t n) {
    int octaves = PRODUCT_OCTAVES;
    const uint64_t mask = width_mask(t);
    uint64_t limit = t->bytes == 4 ? (1ull << 24) - 1 : (1ull << 53) - 1, bound = limit / ((uint64_t)n + 2);
    if (bound > 4096) bound = 4096;
    for (size_t i = 0; i < n; i++) {
        uint64_t r = test_rng_next(rng);
        if (!t->is_float) {
            uint64_t v = r & mask;
            if (op == PSCAN_OP_PRODUCT) v = (r | 1) & mask;
            if (op == PSCAN_OP_AND) v = ~(1ull << (r % (8 * t->bytes))) & mask;
            if (op == PSCAN_OP_OR) v = (1ull << (r % (8 * t->bytes))) & mask;
            store_raw(g, i, t->bytes, v);
        } else if (op == PSCAN_OP_SUM) {
            store_float(g, i, t, ldexpl((long double)(r % (2 * bound + 1)) - (long double)bound, -4));
        } else if (op == PSCAN_OP_PRODUCT) {
            int k = 0;
            if (octaves > 0 && (r >> 32) % (2 * (uint64_t)n + 2) < PRODUCT_OCTAVES) k = (r & 2) ? 1 : -1, octaves--;
            store_float(g, i, t, (r & 1) ? -ldexpl(1.0L, k) : ldexpl(1.0L, k));
        } else {
            store_float(g, i, t, ldexp(test_rng_unit(rng) * 2.0 - 1.0, (int)(r % 41) - 20));
        }
    }
}

static inline void pick_init(test_rng *rng, const type_info *t, pscan_op op, int given, unsigned char *init) {
    uint64_t r = test_rng_next(rng);
    if (!given && t->is_float)
        store_float(init, 0, t, float_identity(op));
    else if (!given)
        store_raw(init, 0, t->bytes, int_identity(t, op));
    else if (!t->is_float)
        store_raw(init, 0, t->bytes, op == PSCAN_OP_PRODUCT ? (r | 1) & width_mask(t) : r & width_mask(t));
    else if (op == PSCAN_OP_SUM)
        store_float(init, 0, t, ldexpl((long double)(r % 2001) - 1000.0L, -4));
    else if (op == PSCAN_OP_PRODUCT)
        store_float(init, 0, t, (r & 1) ? -8.0L : 0.125L);
    else
        store_float(init, 0, t, ldexp(test_rng_unit(rng) * 2.0 - 1.0, (int)(r % 41) - 20));
}

#endif /* PSCAN_TEST_REFERENCE_H */
