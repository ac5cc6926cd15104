/*
 * pattern_histogram.cl - pscan_histogram on OpenCL: counts of n samples in evenly spaced bins or between given
 * edges, into u32 or u64 counts, overwritten or added to.
 *
 * Idea: two passes, no work-group waiting on another and no 64-bit atomics (optional in OpenCL 1.2):
 *   ps_hist_count  each work-group counts one contiguous chunk of the samples into its own 32-bit histogram in
 *                  temp: in local memory with local atomics when the bins fit (PS_HIST_LOCAL_BINS), else with
 *                  32-bit global atomics on its own region; a chunk holds fewer than 2^32 samples (the host
 *                  sizes the grid so), so no private count wraps
 *   ps_hist_merge  one work-item a bin adds the work-groups' counts in 64 bits and writes (or adds to) the
 *                  caller's count, wrapping modulo 2^32 or 2^64
 * Which bin a sample falls in is src/core/histogram_bin.h's rule, written again in OpenCL C below: exact integer
 * bins (a float estimate of the quotient corrected by one comparison of exact products: within one of the
 * answer, so the result does not depend on the estimate), float bins in the sample type's own arithmetic, and a
 * binary search of the edges. Integer counts do not depend on the order of the samples: every backend gives the
 * same counts. Work O(n + groups x bins); memory: the samples once, groups x bins x 4 bytes of temp written and
 * read once.
 */
#ifdef PS_OP_SUM

/* src/core/pscan_internal.h's ps_histogram_form, in its order (opencl_patterns.c checks it at compile time) */
#define PS_HIST_EVEN_SHIFT32 0
#define PS_HIST_EVEN_DIV32 1
#define PS_HIST_EVEN_SHIFT64 2
#define PS_HIST_EVEN_DIV64 3
#define PS_HIST_EVEN_FLOAT 4
#define PS_HIST_EDGES 5
#define PS_HIST_NONE 0xFFFFFFFFu
/* Bins counted in local memory (16 KiB of 32-bit counters); more go to the work-group's region in temp. */
#define PS_HIST_LOCAL_BINS 4096

#if defined(PS_REAL)
#define PS_HIST_IS_FLOAT 1
#else
#define PS_HIST_IS_FLOAT 0
#endif

/* The bins of evenly spaced bins and how to find one (ps_histogram_spec, as the core resolved it). */
typedef struct ps_hist_even {
    int form;
    uint bins, shift;
    ulong lower, range_m1; /* integers: lower as a 64-bit pattern, upper - lower - 1 */
    float estimate;        /* the integer forms' bins / range, for the estimate */
} ps_hist_even;

/* floor(d * bins / range) for d < range, exactly: the estimate is within one of it (its relative error is a few
 * 2^-24 and the quotient below 2^16), and one comparison of exact products corrects it. 32-bit forms: the
 * products in 64 bits; 64-bit forms: in 128 (mul_hi). */
PS_FN uint ps_hist_div(ulong d, ulong range, uint bins, float estimate) {
    uint b = convert_uint_rtz(max((float)d * estimate, 0.0f));
    const ulong ph = mul_hi(d, (ulong)bins), pl = d * (ulong)bins;
    const ulong lh = mul_hi((ulong)b, range), ll = (ulong)b * range;
    if (lh > ph || (lh == ph && ll > pl)) {
        b--;
    } else {
        const ulong dl = pl - ll, dh = ph - lh - (pl < ll ? 1ul : 0ul);
        if (dh > 0 || dl >= range) b++;
    }
    return b;
}

/* The bin of sample x, or PS_HIST_NONE. */
PS_FN uint ps_hist_bin(T x, const ps_hist_even *h, T lower_t, T upper_t, T scale_t, __global const T *edges) {
    if (h->form == PS_HIST_EDGES) {
        if (!(x >= edges[0] && x < edges[h->bins])) return PS_HIST_NONE;
        uint lo = 0, hi = h->bins;
        while (hi - lo > 1) {
            const uint mid = lo + (hi - lo) / 2;
            if (x < edges[mid])
                hi = mid;
            else
                lo = mid;
        }
        return lo;
    }
#if PS_HIST_IS_FLOAT
    /* (x - lower) * scale, each step rounded in the sample type, truncated; NaN fails both comparisons */
    if (!(x >= lower_t && x < upper_t)) return PS_HIST_NONE;
    const uint b = convert_uint_rtz((x - lower_t) * scale_t);
    return b < h->bins ? b : h->bins - 1;
#else
    /* one unsigned difference tests both bounds (it wraps past range_m1 below lower) */
    if (h->form == PS_HIST_EVEN_SHIFT32 || h->form == PS_HIST_EVEN_DIV32) {
        const uint d = (uint)x - (uint)h->lower;
        if (d > (uint)h->range_m1) return PS_HIST_NONE;
        return h->form == PS_HIST_EVEN_SHIFT32 ? d >> h->shift : ps_hist_div(d, h->range_m1 + 1, h->bins, h->estimate);
    }
    const ulong d = (ulong)x - h->lower;
    if (d > h->range_m1) return PS_HIST_NONE;
    return h->form == PS_HIST_EVEN_SHIFT64 ? (uint)(d >> h->shift)
                                           : ps_hist_div(d, h->range_m1 + 1, h->bins, h->estimate);
#endif
}

/* ---- count: work-group g counts samples [g chunk, (g + 1) chunk) into priv[g bins .. (g + 1) bins) ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_hist_count(__global const T *samples, ulong n, ulong chunk, int form, uint bins, uint shift, ulong lower,
              ulong range_m1, float estimate, T lower_t, T upper_t, T scale_t, __global const T *edges,
              __global uint *priv) {
    __local uint local_counts[PS_HIST_LOCAL_BINS];
    const ps_hist_even h = {form, bins, shift, lower, range_m1, estimate};
    const uint lid = get_local_id(0);
    const ulong g = get_group_id(0), begin = g * chunk, end = min(n, begin + chunk);
    __global uint *mine = priv + g * (ulong)bins;
    const int in_local = bins <= PS_HIST_LOCAL_BINS;
    if (in_local) {
        for (uint b = lid; b < bins; b += PS_WG) local_counts[b] = 0;
        barrier(CLK_LOCAL_MEM_FENCE);
    } else {
        for (uint b = lid; b < bins; b += PS_WG) mine[b] = 0;
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
    for (ulong i = begin + lid; i < end; i += PS_WG) {
        const uint b = ps_hist_bin(samples[i], &h, lower_t, upper_t, scale_t, edges);
        if (b == PS_HIST_NONE) continue;
        if (in_local)
            atomic_inc(&local_counts[b]);
        else
            atomic_inc(&mine[b]);
    }
    if (in_local) {
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint b = lid; b < bins; b += PS_WG) mine[b] = local_counts[b];
    }
}

/* ---- merge: counts[b] (+)= the work-groups' counts of bin b, in 64 bits, wrapping to the count's size ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_hist_merge(__global const uint *priv, ulong groups, uint bins, int wide, int accumulate, __global uchar *counts) {
    const ulong b = get_global_id(0);
    if (b >= bins) return;
    ulong sum = 0;
    for (ulong g = 0; g < groups; g++) sum += priv[g * bins + b];
    if (wide) {
        __global ulong *c = (__global ulong *)counts;
        c[b] = accumulate ? c[b] + sum : sum;
    } else {
        __global uint *c = (__global uint *)counts;
        c[b] = accumulate ? c[b] + (uint)sum : (uint)sum;
    }
}

#endif /* PS_OP_SUM */
