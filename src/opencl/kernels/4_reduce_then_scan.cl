/*
 * 4_reduce_then_scan.cl - block reductions first, a scan of the totals, then each block scans its tile
 * starting from its carry.
 *
 * Idea: the first pass only reads (ps_reduce_then_scan_reduce: one total per tile), the host scans the
 * totals into carries (recursively, exclusive, starting from the initial value), and the last pass scans each
 * tile from its carry (ps_scan_then_propagate_tiles with PS_AUX_READ_CARRIES: the same tile body).
 * Compared with scan-then-propagate it saves one write of n: the output is written once.
 * Work and depth: O(n) combines; depth PS_ITEMS + log2(PS_WG) per tile, times the recursion levels.
 * Memory passes: read n, then read n + write n: about 3n.
 * Limits: any n.
 * Why it is the default on CPU devices (PoCL): it never waits on another work-group, and its three passes
 * over a tile are cheap there; the look-back's spinning only steals a core from the work-group it waits for.
 * Measured: NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum, n = 2^28, median of 10 (pscan bench):
 *   1390 us, 1545 GB/s, 0.523 of copy (copy 2955 GB/s).
 */

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_reduce_then_scan_reduce(__global const IN *in, ulong in_off, ulong n, int reverse, __global T *totals,
                           ulong totals_off) {
    __local T scratch[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T total = ps_tile_reduce(in, in_off, n, reverse, tile * PS_TILE, scratch);
        if (get_local_id(0) == 0) totals[totals_off + tile] = total;
    }
}
