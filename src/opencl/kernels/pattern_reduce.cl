/*
 * pattern_reduce.cl - reduce: init (+) in[0] (+) ... (+) in[n-1], combining earlier with later, in order.
 *
 * Idea: ps_reduce_tiles reduces each tile of PS_TILE elements to one total (temporary storage), and
 * ps_reduce_final, one work-group, folds the totals in order into init: init (+) (t0 (+) t1 (+) ...). One tile
 * needs no totals: ps_reduce_final reads the input itself. Within a tile each work-item reduces its PS_ITEMS
 * consecutive elements serially, then a pairwise tree joins neighbours (work-item 2k with 2k+1, then 4k with
 * 4k+2, ...), so every combine joins two adjacent ranges, the earlier on the left: right for operators that do
 * not commute, and min/max keep the first NaN and the earlier of equal elements. Elements past n are never
 * combined (no identity padding: -0.0 sums stay -0.0).
 * Determinism: the tiles and the tree depend only on n and the work-group size, so float results repeat bit
 * for bit on a device (they may differ from the CPU's, which groups differently).
 * Work and depth: O(n) combines; depth PS_ITEMS + log2(PS_WG) per tile, plus tiles / PS_TILE steps of the final
 * work-group. Memory passes: read n (plus the totals, n / PS_TILE).
 */

/* The in-order reduction of the values of the first `valid` work-items (valid >= 1); every work-item gets it. */
PS_FN T ps_wg_reduce_in_order(T x, uint valid, __local T *scratch) {
    uint lid = get_local_id(0);
    scratch[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        /* lid holds [lid, lid + d) and lid + d holds [lid + d, lid + 2d), both cut at valid */
        if ((lid & (2 * d - 1)) == 0 && lid + d < valid) scratch[lid] = ps_combine(scratch[lid], scratch[lid + d]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* The reduction of elements [base, min(base + PS_TILE, n)) of in, base < n. */
PS_FN T ps_reduce_tile(__global const T *in, ulong n, ulong base, __local T *stage, __local T *scratch) {
    T items[PS_ITEMS];
    ps_tile_load(in, 0, n, 0, base, stage, items);
    ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
    uint mine = first >= n ? 0 : (uint)min((ulong)PS_ITEMS, n - first);
    T acc = items[0];
    for (uint k = 1; k < mine; k++) acc = ps_combine(acc, items[k]);
    uint valid = (uint)min((ulong)PS_WG, (n - base + PS_ITEMS - 1) / PS_ITEMS);
    return ps_wg_reduce_in_order(acc, valid, scratch);
}

/* ---- upsweep: totals[tile] = the reduction of the tile; work-groups stride over tiles ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_reduce_tiles(__global const T *in, ulong n, __global T *totals) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T total = ps_reduce_tile(in, n, tile * PS_TILE, stage, scratch);
        if (get_local_id(0) == 0) totals[tile] = total;
    }
}

/* ---- final: out[0] = init (+) (in[0] (+) ... (+) in[n-1]), one work-group, tile after tile in order ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_reduce_final(__global const T *in, ulong n, T init, __global T *out) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    T acc = init;
    for (ulong base = 0; base < n; base += PS_TILE) acc = ps_combine(acc, ps_reduce_tile(in, n, base, stage, scratch));
    if (get_local_id(0) == 0) out[0] = acc;
}
