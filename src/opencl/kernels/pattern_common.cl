/*
 * pattern_common.cl - what the OpenCL patterns (pattern_reduce.cl, pattern_select.cl, pattern_expand.cl) share:
 * counts in 64 bits, a work-group scan of them, the one-work-group spine that turns per-tile counts into
 * per-tile offsets, and the copy of one payload item.
 *
 * The patterns run as three passes over fixed tiles (opencl_patterns.c): an upsweep writes one count per tile,
 * ps_pattern_spine scans the counts in place (one work-group, in order) and writes the total, and a downsweep
 * reads each tile again with its offset. Counts add with saturation at ULONG_MAX: associative, so any grouping
 * gives the same sum, and an expand whose counts pass 2^64 reports UINT64_MAX as the CPU does (select counts
 * never come near it).
 */

/* a + b, or ULONG_MAX where that overflows. */
PS_FN ulong ps_add_sat(ulong a, ulong b) {
    ulong s = a + b;
    return s < a ? ULONG_MAX : s;
}

/* Exclusive scan of one count per work-item (Kogge-Stone in local memory); *total gets the sum of all PS_WG.
 * scratch holds PS_WG counts and may be reused after the call. */
PS_FN ulong ps_wg_scan_counts(ulong x, __local ulong *scratch, ulong *total) {
    uint lid = get_local_id(0);
    ulong incl = x;
    scratch[lid] = incl;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        ulong left = lid >= d ? scratch[lid - d] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        incl = ps_add_sat(left, incl);
        scratch[lid] = incl;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ulong excl = lid > 0 ? scratch[lid - 1] : 0;
    *total = scratch[PS_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return excl;
}

/* ---- spine: counts[0 .. tiles) become their exclusive scan; counts[tiles] and *total get the sum ----------
 * One work-group walks the counts a row of PS_WG at a time, carrying the running sum: the same order on every
 * run and device. Launched with exactly one work-group. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_pattern_spine(__global ulong *counts, ulong tiles, __global ulong *total) {
    __local ulong scratch[PS_WG];
    uint lid = get_local_id(0);
    ulong carry = 0;
    for (ulong base = 0; base < tiles; base += PS_WG) {
        ulong i = base + lid, row;
        ulong excl = ps_wg_scan_counts(i < tiles ? counts[i] : 0, scratch, &row);
        if (i < tiles) counts[i] = ps_add_sat(carry, excl);
        carry = ps_add_sat(carry, row);
    }
    if (lid == 0) {
        counts[tiles] = carry;
        total[0] = carry;
    }
}

/* dst item d = src item s, items of value_bytes (1, 2, 4 or 8; buffers start at a cl_mem's base, so aligned). */
PS_FN void ps_copy_item(__global uchar *dst, ulong d, __global const uchar *src, ulong s, ulong value_bytes) {
    switch (value_bytes) {
    case 1: dst[d] = src[s]; break;
    case 2: ((__global ushort *)dst)[d] = ((__global const ushort *)src)[s]; break;
    case 4: ((__global uint *)dst)[d] = ((__global const uint *)src)[s]; break;
    default: ((__global ulong *)dst)[d] = ((__global const ulong *)src)[s]; break;
    }
}
