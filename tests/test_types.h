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

#endif /* PSCAN_TEST_TYPES_H */
