/*
 * 3_scan_then_propagate.cl - block scans with many items per work-item, a scan of the block totals, a
 * uniform add.
 *
 * Idea: each work-group scans a tile of PS_WG * PS_ITEMS elements (staged through local memory so that
 * global reads and writes stay coalesced, each work-item scanning PS_ITEMS consecutive elements serially,
 * then one work-group scan of the work-items' sums) and writes the tile's total. The host scans the totals
 * (recursively, with this same kernel) and ps_propagate (0_common.cl) adds each tile's carry.
 * Work and depth: O(n) combines; depth PS_ITEMS + log2(PS_WG) per tile, times the recursion levels.
 * Memory passes: read n + write n, then read n + write n in propagate: about 4n.
 * Limits: any n (levels of n / PS_TILE totals on the host).
 * Measured: NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum, n = 2^28, median of 10 (pscan bench):
 *   1784 us, 1204 GB/s, 0.407 of copy (copy 2955 GB/s).
 */

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_scan_then_propagate_tiles(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                             int reverse, int exclusive, T carry_in, __global T *aux, ulong aux_off,
                             int aux_mode) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T carry = aux_mode == PS_AUX_READ_CARRIES ? aux[aux_off + tile] : carry_in;
        T total = ps_tile_scan(in, in_off, out, out_off, n, reverse, exclusive, tile * PS_TILE, carry, stage,
                               scratch);
        if (aux_mode == PS_AUX_WRITE_TOTALS && get_local_id(0) == 0) aux[aux_off + tile] = total;
    }
}
