/*
 * histogram_bin.h - which bin a histogram sample falls in: the one definition that the CPU backend (C) and the
 * CUDA kernels (CUDA C) both compile, so that every backend puts every sample in the same bin. Internal.
 *
 * The core resolves the bins once (api.c fills a ps_histogram_spec); these functions then map one sample to its
 * bin, or to PS_HISTOGRAM_NONE when it is counted nowhere (outside the bins, or NaN):
 *   ps_histogram_even_<type>(h, form, x)       evenly spaced bins; form is h->form, passed apart so that a
 *                                              kernel templated on it folds the branches away
 *   ps_histogram_search_<type>(edges, bins, x) given edges (the caller says where they are: the CUDA kernel may
 *                                              stage them in shared memory)
 *
 * Integer bins are exact: floor((x - lower) * bins / range) with range = upper - lower. When range is bins times
 * a power of two (u8 samples over [0, 256) in 256 bins, say) it is one shift. Otherwise a float estimate of the
 * quotient (off by at most one: its relative error is below 2^-21 and the quotient below 2^16) is corrected by
 * one exact comparison of products: est * range <= d * bins < (est + 1) * range. The products are 64-bit in the
 * 32-bit forms (d < 2^32, bins <= 2^16) and 128-bit in the 64-bit ones (64-bit samples, or bounds outside a
 * smaller type's range). No division: on a GPU a 64-bit
 * division is a long software sequence, and the estimate costs one multiply.
 */
#ifndef PSCAN_HISTOGRAM_BIN_H
#define PSCAN_HISTOGRAM_BIN_H

#include <stdint.h>

#include "pscan_internal.h"

#ifdef __CUDACC__
#define PS_HIST_FN static __host__ __device__ __forceinline__
#else
#define PS_HIST_FN static inline
#endif

#define PS_HISTOGRAM_NONE 0xFFFFFFFFu

/* EVEN_DIV32: d < range <= 2^32. */
PS_HIST_FN uint32_t ps_histogram_div32(uint32_t d, uint64_t range, uint32_t bins, float scale) {
    uint32_t b = (uint32_t)((float)d * scale);
    const uint64_t p = (uint64_t)d * bins, lo = (uint64_t)b * range;
    if (lo > p)
        b--;
    else if (p - lo >= range)
        b++;
    return b;
}

/* (hi, lo) = a * b, 128 bits. */
PS_HIST_FN void ps_histogram_mul128(uint64_t a, uint64_t b, uint64_t *hi, uint64_t *lo) {
#ifdef __CUDA_ARCH__
    *hi = __umul64hi(a, b);
    *lo = a * b;
#else
    __extension__ typedef unsigned __int128 u128;
    const u128 p = (u128)a * b;
    *hi = (uint64_t)(p >> 64);
    *lo = (uint64_t)p;
#endif
}

/* EVEN_DIV64: d < range <= 2^64 - 1, the products in 128 bits. */
PS_HIST_FN uint32_t ps_histogram_div64(uint64_t d, uint64_t range, uint32_t bins, double scale) {
    uint32_t b = (uint32_t)((double)d * scale);
    uint64_t ph, pl, lh, ll;
    ps_histogram_mul128(d, bins, &ph, &pl);
    ps_histogram_mul128(b, range, &lh, &ll);
    if (lh > ph || (lh == ph && ll > pl)) {
        b--;
    } else {
        /* p - lo, then whether it reaches range */
        const uint64_t dl = pl - ll, dh = ph - lh - (pl < ll ? 1u : 0u);
        if (dh > 0 || dl >= range) b++;
    }
    return b;
}

/* Integer samples, evenly spaced bins. One unsigned difference tests both bounds: d = x - lower wraps to a
 * number >= range exactly when x < lower (as x and upper lie within 2^bits of each other), so x counts iff
 * d <= range - 1. The 32-bit forms work modulo 2^32, valid when the bounds lie in the sample type's range. */
#define PS_HISTOGRAM_EVEN_INT_(NAME, name, T, U, LOWEST, HIGHEST)                                            \
    PS_HIST_FN uint32_t ps_histogram_even_##name(const ps_histogram_spec *h, ps_histogram_form form, T x) {  \
        if (form == PS_HISTOGRAM_EVEN_SHIFT32 || form == PS_HISTOGRAM_EVEN_DIV32) {                          \
            const uint32_t d = (uint32_t)x - (uint32_t)h->lower.u64;                                         \
            if (d > (uint32_t)h->range_m1) return PS_HISTOGRAM_NONE;                                         \
            if (form == PS_HISTOGRAM_EVEN_SHIFT32) return d >> h->shift;                                     \
            return ps_histogram_div32(d, h->range_m1 + 1, h->bins, h->scale_f);                              \
        }                                                                                                    \
        const uint64_t d = (uint64_t)x - h->lower.u64;                                                       \
        if (d > h->range_m1) return PS_HISTOGRAM_NONE;                                                       \
        if (form == PS_HISTOGRAM_EVEN_SHIFT64) return (uint32_t)(d >> h->shift);                             \
        return ps_histogram_div64(d, h->range_m1 + 1, h->bins, h->scale_d);                                  \
    }
PSCAN_ARITH_INT_TYPE_LIST(PS_HISTOGRAM_EVEN_INT_)
#undef PS_HISTOGRAM_EVEN_INT_

/* Float samples: (x - lower) * scale, each step rounded to nearest in the sample type (the CUDA intrinsics say
 * so explicitly; nothing here could be contracted into a fused multiply-add anyway), truncated, and the rare
 * x just below upper whose product rounds up to bins kept in the last bin. NaN fails both comparisons. */
PS_HIST_FN uint32_t ps_histogram_even_f32(const ps_histogram_spec *h, ps_histogram_form form, float x) {
    (void)form;
    const float lower = h->lower.f32;
    if (!(x >= lower && x < h->upper.f32)) return PS_HISTOGRAM_NONE;
#ifdef __CUDA_ARCH__
    const uint32_t b = __float2uint_rz(__fmul_rn(__fsub_rn(x, lower), h->scale_f));
#else
    const uint32_t b = (uint32_t)((x - lower) * h->scale_f);
#endif
    return b < h->bins ? b : h->bins - 1;
}

PS_HIST_FN uint32_t ps_histogram_even_f64(const ps_histogram_spec *h, ps_histogram_form form, double x) {
    (void)form;
    const double lower = h->lower.f64;
    if (!(x >= lower && x < h->upper.f64)) return PS_HISTOGRAM_NONE;
#ifdef __CUDA_ARCH__
    const uint32_t b = __double2uint_rz(__dmul_rn(__dsub_rn(x, lower), h->scale_d));
#else
    const uint32_t b = (uint32_t)((x - lower) * h->scale_d);
#endif
    return b < h->bins ? b : h->bins - 1;
}

/* Given edges: the last i with edges[i] <= x, among edges[0] <= x < edges[bins]. The search keeps lo < hi in
 * [0, bins], so even edges out of order give a bin in [0, bins - 1]. */
#define PS_HISTOGRAM_SEARCH_(NAME, name, T, U, LOWEST, HIGHEST)                                              \
    PS_HIST_FN uint32_t ps_histogram_search_##name(const T *edges, uint32_t bins, T x) {                     \
        if (!(x >= edges[0] && x < edges[bins])) return PS_HISTOGRAM_NONE;                                   \
        uint32_t lo = 0, hi = bins;                                                                          \
        while (hi - lo > 1) {                                                                                \
            const uint32_t mid = lo + (hi - lo) / 2;                                                         \
            if (x < edges[mid])                                                                              \
                hi = mid;                                                                                    \
            else                                                                                             \
                lo = mid;                                                                                    \
        }                                                                                                    \
        return lo;                                                                                           \
    }
PSCAN_ARITH_TYPE_LIST(PS_HISTOGRAM_SEARCH_)
#undef PS_HISTOGRAM_SEARCH_

#endif /* PSCAN_HISTOGRAM_BIN_H */
