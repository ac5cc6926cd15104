/*
 * 1_hillis_steele.cl - the naive log-step scan (Hillis and Steele 1986; GPU Gems 3, ch. 39, first listing).
 *
 * Idea: one element per work-item; at step d every element adds the one d places to its left, d = 1, 2, 4..
 * Two local buffers alternate so that no step reads a value the same step has overwritten.
 * Work and depth: O(n log n) combines (PS_WG log2 PS_WG per tile), log2(PS_WG) steps, one barrier each.
 * Memory passes (multi-block, with propagate): read n, write n, then read and write n again, plus the
 * recursive scan of n / PS_WG totals: about 4n.
 * Limits: tile = PS_WG elements; any n through the recursion on the host (opencl_scan.c).
 * Measured: NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum, n = 2^28, median of 10 (pscan bench):
 *   2461 us, 873 GB/s, 0.295 of clEnqueueCopyBuffer (2955 GB/s).
 *   (Not profiled; n log n work in local memory and 4n traffic are the likely limits.)
 */

/* Scans tiles of PS_WG elements; aux_mode (PS_AUX_*) says whether aux receives tile totals or supplies carries. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_hillis_steele_tiles(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n, int reverse,
                       int exclusive, T carry_in, __global T *aux, ulong aux_off, int aux_mode) {
    __local T buf[2][PS_WG];
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_WG - 1) / PS_WG;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        /* ---- load ---- */
        ulong i = tile * PS_WG + lid;
        T x = ps_load(in, in_off, i, n, reverse);
        buf[0][lid] = x;
        barrier(CLK_LOCAL_MEM_FENCE);

        /* ---- log-step scan, double-buffered ---- */
        int src = 0;
        for (uint d = 1; d < PS_WG; d <<= 1) {
            T v = buf[src][lid];
            buf[1 - src][lid] = lid >= d ? ps_combine(buf[src][lid - d], v) : v;
            src = 1 - src;
            barrier(CLK_LOCAL_MEM_FENCE);
        }
        T incl = buf[src][lid];
        T excl = lid > 0 ? buf[src][lid - 1] : PS_IDENTITY;

        /* ---- store ---- */
        T carry = aux_mode == PS_AUX_READ_CARRIES ? aux[aux_off + tile] : carry_in;
        if (i < n) out[out_off + ps_phys(i, n, reverse)] = ps_combine(carry, exclusive ? excl : incl);
        if (aux_mode == PS_AUX_WRITE_TOTALS && lid == PS_WG - 1) aux[aux_off + tile] = incl;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile reuses buf */
    }
}
