/*
 * test_types.h - the element types as the primitives' tests see them, one row per entry of pscan.h's
 * PSCAN_TYPE_LIST (so a type added there is tested everywhere at once): enum, name, bytes, float, signed.
 * Header-only; included by test_reference.h, test_select.c, test_sort.c, test_histogram.c and test_segscan.c.
 */
#ifndef PSCAN_TEST_TYPES_H
#define PSCAN_TEST_TYPES_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "pscan.h"

typedef struct type_info {
    pscan_type type;
    const char *name;
    size_t bytes;
    int is_float;
    int is_signed; /* floats too: they have a sign */
} type_info;

#define TEST_TYPE_INFO_(NAME, name, ctype) {PSCAN_TYPE_##NAME, #name, sizeof(ctype), (ctype)0.5 != 0,                 \
                                            (long double)(ctype)-1 < 0},
static const type_info types[] = {PSCAN_TYPE_LIST(TEST_TYPE_INFO_)};
#undef TEST_TYPE_INFO_
#define TYPE_COUNT (sizeof types / sizeof types[0])

/* Element i of an array of bytes-wide elements, as raw bits (little-endian, zero-extended), and back. */
static inline uint64_t load_raw(const unsigned char *buf, size_t i, size_t bytes) {
    uint64_t v = 0;
    memcpy(&v, buf + i * bytes, bytes);
    return v;
}
static inline void store_raw(unsigned char *buf, size_t i, size_t bytes, uint64_t v) { memcpy(buf + i * bytes, &v, bytes); }

/* An integer element's raw bits as a signed 64-bit value (sign-extended from the type's width). */
static inline int64_t raw_signed(const type_info *t, uint64_t raw) {
    const unsigned shift = 64 - 8 * (unsigned)t->bytes;
    return (int64_t)(raw << shift) >> shift;
}

/* A float element's raw bits as a double (f32 widened exactly), and a double as the type's raw bits (rounded). */
static inline double raw_float(const type_info *t, uint64_t raw) {
    if (t->bytes == 4) {
        float f;
        const uint32_t r = (uint32_t)raw;
        memcpy(&f, &r, 4);
        return f;
    }
    double d;
    memcpy(&d, &raw, 8);
    return d;
}
static inline uint64_t float_raw(const type_info *t, double v) {
    if (t->bytes == 4) {
        const float f = (float)v;
        uint32_t u;
        memcpy(&u, &f, 4);
        return u;
    }
    uint64_t u;
    memcpy(&u, &v, 8);
    return u;
}

#endif /* PSCAN_TEST_TYPES_H */
