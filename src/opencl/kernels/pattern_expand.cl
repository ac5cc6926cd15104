/*
 * pattern_expand.cl - expand: item i of n owns counts[i] output slots starting at counts[0] + ... +
 * counts[i-1]; each slot below min(total, capacity) gets its item's index, its rank in the item's run and the
 * item's value. T is the count type (uint or ulong).
 *
 * Idea: three passes over tiles of PS_EXPAND_TILE items. ps_expand_count sums each tile's counts; the spine
 * (pattern_common.cl) scans the sums into each tile's first slot and writes the total; ps_expand_fill scans the
 * tile's counts again into local memory (the end of every item's run) and then spreads the tile's slots over
 * the work-group: work-item lid takes slots start + lid, start + lid + PS_WG, ... and finds each slot's item
 * by binary search in the run ends. So an item with a huge count is shared by the work-group that holds it
 * (not by the whole device, as CUDA's expand does: simpler, and one work-group is still balanced inside).
 * Sums saturate at ULONG_MAX (ps_add_sat), as on the CPU.
 * Work and depth: O(n + slots written); a slot costs log2(PS_EXPAND_TILE) steps of search.
 * Memory passes: the counts twice, each slot written once (index, rank, value), the values gathered.
 */

/* 8 items per work-item whatever the count type: the tile's run ends (8 bytes each) then take 16 KiB of local
 * memory with 256 work-items, half of what OpenCL 1.2 guarantees. */
#define PS_EXPAND_ITEMS 8
#define PS_EXPAND_TILE (PS_WG * PS_EXPAND_ITEMS)

/* ---- upsweep: sums[tile] = the tile's counts, saturating ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_expand_count(__global const T *counts, ulong n, __global ulong *sums) {
    __local ulong scratch[PS_WG];
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_EXPAND_TILE - 1) / PS_EXPAND_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong sum = 0, total;
        for (uint k = 0; k < PS_EXPAND_ITEMS; k++) {
            ulong i = tile * PS_EXPAND_TILE + k * PS_WG + lid;
            if (i < n) sum = ps_add_sat(sum, (ulong)counts[i]);
        }
        ps_wg_scan_counts(sum, scratch, &total);
        if (lid == 0) sums[tile] = total;
    }
}

/* index or rank value to slot of an array of index_bytes (4 or 8) elements */
PS_FN void ps_store_index(__global uchar *out, ulong index_bytes, ulong slot, ulong value) {
    if (index_bytes == 4)
        ((__global uint *)out)[slot] = (uint)value;
    else
        ((__global ulong *)out)[slot] = value;
}

/* ---- downsweep: the slots of each tile; starts[tile] is the tile's first slot, starts[tiles] the total.
 * indices and ranks may be NULL (not wanted); values_out is written when value_bytes > 0. ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_expand_fill(__global const T *counts, ulong n, __global const ulong *starts, ulong capacity,
               __global uchar *indices, __global uchar *ranks, ulong index_bytes, __global const uchar *values,
               __global uchar *values_out, ulong value_bytes) {
    __local ulong ends[PS_EXPAND_TILE]; /* ends[j]: the slot after item base + j's run */
    __local ulong scratch[PS_WG];
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_EXPAND_TILE - 1) / PS_EXPAND_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong start = starts[tile], limit = min(starts[tile + 1], capacity);
        if (start >= limit) continue; /* the same for the whole work-group: nothing of this tile is written */

        /* ---- the run ends, a row of PS_WG items at a time ---- */
        ulong base = tile * PS_EXPAND_TILE, carry = start;
        for (uint k = 0; k < PS_EXPAND_ITEMS; k++) {
            uint j = k * PS_WG + lid;
            ulong i = base + j, row;
            ulong c = i < n ? (ulong)counts[i] : 0;
            ulong excl = ps_wg_scan_counts(c, scratch, &row);
            ends[j] = ps_add_sat(carry, ps_add_sat(excl, c));
            carry = ps_add_sat(carry, row);
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* ---- the slots: each one's item is the first whose run ends after it ---- */
        uint items = (uint)min((ulong)PS_EXPAND_TILE, n - base);
        for (ulong slot = start + lid; slot < limit; slot += PS_WG) {
            uint lo = 0, hi = items - 1; /* slot < limit <= ends[items - 1]: the answer is in range */
            while (lo < hi) {
                uint mid = (lo + hi) / 2;
                if (ends[mid] > slot)
                    hi = mid;
                else
                    lo = mid + 1;
            }
            ulong item = base + lo;
            if (indices) ps_store_index(indices, index_bytes, slot, item);
            if (ranks) ps_store_index(ranks, index_bytes, slot, slot - (lo > 0 ? ends[lo - 1] : start));
            if (value_bytes) ps_copy_item(values_out, slot, values, item, value_bytes);
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile rewrites ends */
    }
}
