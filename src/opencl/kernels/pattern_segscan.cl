/*
 * pattern_segscan.cl - the segmented scan and scan by key: each segment of the input scanned on its own, init in
 * front of every segment, inclusive or exclusive, forward or reverse, any built-in operator (earlier on the left);
 * and, at the end of the file, reduce by key and run-length encoding on the same pairs.
 *
 * Idea: a segmented scan is a scan of (head, value) pairs under the operator
 *     (f1, v1) (+) (f2, v2) = (f1 | f2, f2 ? v2 : v1 (+) v2)
 * which is associative whenever (+) is, and never commutes. An element is the pair (1, init (+) x) where a segment
 * starts (its head) and (0, x) elsewhere, so a pair's value is "what the running value becomes", and the carry into
 * a tile is one value: the running value before its first element. Three passes over fixed tiles, as the other
 * patterns (opencl_patterns.c): ps_segscan_tiles folds each tile's pairs into one (its head flag and value),
 * ps_segscan_spine scans those in order from init into each tile's carry (one work-group), and ps_segscan_scan
 * reads each tile again and scans it from its carry. Within a tile each work-item folds its PS_ITEMS consecutive
 * pairs serially and a Kogge-Stone scan of the work-items' pairs gives each its carry: the tiles and trees depend
 * only on n and the work-group size, so float results repeat bit for bit on a device.
 * Heads: the caller's flags (any nonzero byte), or made into temp first (ps_segscan_offset_heads from CSR offsets,
 * after ps_segscan_check has judged them; ps_segscan_key_heads where a key differs from the one before). Logical
 * element 0 always starts a segment. Reverse: logical element j is physical n-1-j, and it starts a segment where
 * physical n-1-j ends one (the physical head after it, or the end).
 * Bad offsets: ps_segscan_check writes its verdict into temp; the scan pass then writes nothing, and the host
 * reads the verdict only when asked to wait (PSCAN_SEGSCAN_CHECK_OFFSETS), as on CUDA.
 * Work and depth: O(n) combines; depth 2 PS_ITEMS + 2 log2(PS_WG) per tile, and tiles / PS_WG rows in the spine.
 * Memory passes: the values twice and the heads twice (read n, read n, write n: about 3n), plus n bytes of heads
 * written for offsets and keys.
 */

/* (f, v) pairs: flag as a uint (0 or 1), value T. */
PS_FN T ps_seg_value(uint f_later, T earlier, T later) { return f_later ? later : ps_combine(earlier, later); }

/* Whether logical element j (< n) starts a segment. */
PS_FN int ps_seg_head(__global const uchar *heads, ulong j, ulong n, int reverse) {
    if (j == 0) return 1;
    return (reverse ? heads[n - j] : heads[j]) != 0;
}

/* Exclusive scan of one pair per work-item in order (Kogge-Stone in local memory); (*tf, *tv) gets the
 * combination of all PS_WG. Work-item 0's exclusive pair is (0, identity). */
PS_FN void ps_seg_wg_scan(uint f, T v, __local uint *sf, __local T *sv, uint *ef, T *ev, uint *tf, T *tv) {
    uint lid = get_local_id(0);
    sf[lid] = f;
    sv[lid] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        uint lf = 0;
        T lv = PS_IDENTITY;
        if (lid >= d) {
            lf = sf[lid - d];
            lv = sv[lid - d];
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid >= d) {
            v = ps_seg_value(f, lv, v);
            f |= lf;
        }
        sf[lid] = f;
        sv[lid] = v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    *ef = lid > 0 ? sf[lid - 1] : 0u;
    *ev = lid > 0 ? sv[lid - 1] : PS_IDENTITY;
    *tf = sf[PS_WG - 1];
    *tv = sv[PS_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* Each work-item's PS_ITEMS pairs (its items of the tile at base) folded in order: the flag to *f, the value
 * returned, and the number of heads among them to *heads_seen. */
PS_FN T ps_seg_fold(const T *items, __global const uchar *heads, ulong n, int reverse, ulong base, T init, uint *f,
                    ulong *heads_seen) {
    ulong first = base + (ulong)get_local_id(0) * PS_ITEMS, c = 0;
    T acc = PS_IDENTITY;
    for (uint k = 0; k < PS_ITEMS; k++) {
        ulong j = first + k;
        if (j >= n) break;
        if (ps_seg_head(heads, j, n, reverse)) {
            c++;
            acc = ps_combine(init, items[k]);
        } else {
            acc = ps_combine(acc, items[k]);
        }
    }
    *f = c != 0;
    *heads_seen = c;
    return acc;
}

/* temp (opencl_patterns.c): the verdict on the offsets (a uint) at byte 0, the tiles' flags at tf_at, their values
 * at tv_at, and for offsets and keys the heads (n bytes) at heads_at; the caller's flags are their own buffer. */

/* ---- check: temp's verdict = whether offsets[0 .. count] are not 0, ascending, n (one work-group) ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_check(__global const ulong *offsets, ulong count, ulong n, __global uint *bad) {
    __local uint any;
    uint lid = get_local_id(0);
    if (lid == 0) any = offsets[0] != 0 || offsets[count] != n;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (ulong k = lid; k < count; k += PS_WG)
        if (offsets[k] > offsets[k + 1]) any = 1; /* every writer writes 1 */
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid == 0) bad[0] = any;
}

/* ---- heads from offsets (heads zeroed first): a nonempty segment's first element; never past n ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_offset_heads(__global const ulong *offsets, ulong count, ulong n, __global uchar *heads_buf,
                        ulong heads_at) {
    __global uchar *heads = heads_buf + heads_at;
    for (ulong k = get_global_id(0); k < count; k += get_global_size(0)) {
        ulong o = offsets[k];
        if (o < n && offsets[k + 1] > o) heads[o] = 1;
    }
}

/* ---- heads from keys of key_bytes (1, 2, 4 or 8): where a key differs from the one before ---- */
PS_FN ulong ps_seg_key(__global const uchar *keys, ulong i, ulong key_bytes) {
    switch (key_bytes) {
    case 1: return keys[i];
    case 2: return ((__global const ushort *)keys)[i];
    case 4: return ((__global const uint *)keys)[i];
    default: return ((__global const ulong *)keys)[i];
    }
}
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_key_heads(__global const uchar *keys, ulong key_bytes, ulong n, __global uchar *heads_buf,
                     ulong heads_at) {
    __global uchar *heads = heads_buf + heads_at;
    for (ulong i = get_global_id(0); i < n; i += get_global_size(0))
        heads[i] = i == 0 || ps_seg_key(keys, i, key_bytes) != ps_seg_key(keys, i - 1, key_bytes);
}

/* ---- upsweep: (tf[tile], tv[tile]) = the tile's pairs combined ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_tiles(__global const T *in, ulong n, int reverse, __global const uchar *heads_buf, ulong heads_at, T init,
                 __global uchar *temp, ulong tf_at, ulong tv_at) {
    __global const uchar *heads = heads_buf + heads_at;
    __global uint *tf = (__global uint *)(temp + tf_at);
    __global T *tv = (__global T *)(temp + tv_at);
    __local T stage[PS_STAGE_ELEMS];
    __local uint sf[PS_WG];
    __local T sv[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T items[PS_ITEMS];
        ps_tile_load(in, 0, n, reverse, tile * PS_TILE, stage, items);
        uint f, ef, total_f;
        ulong c;
        T v = ps_seg_fold(items, heads, n, reverse, tile * PS_TILE, init, &f, &c), ev, total_v;
        ps_seg_wg_scan(f, v, sf, sv, &ef, &ev, &total_f, &total_v);
        if (get_local_id(0) == 0) {
            tf[tile] = total_f;
            tv[tile] = total_v;
        }
    }
}

/* ---- spine: tv[tile] becomes the running value before the tile (init before tile 0); one work-group ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_spine(__global uchar *temp, ulong tf_at, ulong tv_at, ulong tiles, T init) {
    __global const uint *tf = (__global const uint *)(temp + tf_at);
    __global T *tv = (__global T *)(temp + tv_at);
    __local uint sf[PS_WG];
    __local T sv[PS_WG];
    uint lid = get_local_id(0);
    T carry = init;
    for (ulong base = 0; base < tiles; base += PS_WG) {
        ulong i = base + lid;
        uint ef, rf;
        T ev, rv;
        ps_seg_wg_scan(i < tiles ? tf[i] : 0u, i < tiles ? tv[i] : PS_IDENTITY, sf, sv, &ef, &ev, &rf, &rv);
        if (i < tiles) tv[i] = ps_seg_value(ef, carry, ev);
        carry = ps_seg_value(rf, carry, rv);
    }
}

/* ---- downsweep: each tile scanned from its carry; nothing written when the offsets were judged bad ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_segscan_scan(__global const T *in, __global T *out, ulong n, int reverse, int exclusive,
                __global const uchar *heads_buf, ulong heads_at, T init, __global const uchar *temp, ulong tv_at) {
    __global const uchar *heads = heads_buf + heads_at;
    __global const T *carries = (__global const T *)(temp + tv_at);
    __global const uint *bad = (__global const uint *)temp;
    __local T stage[PS_STAGE_ELEMS];
    __local uint sf[PS_WG];
    __local T sv[PS_WG];
    if (bad[0]) return; /* the same word for every work-item: the whole grid returns */
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong base = tile * PS_TILE;
        T items[PS_ITEMS];
        ps_tile_load(in, 0, n, reverse, base, stage, items);
        uint f, ef, total_f;
        ulong c;
        T v = ps_seg_fold(items, heads, n, reverse, base, init, &f, &c), ev, total_v;
        ps_seg_wg_scan(f, v, sf, sv, &ef, &ev, &total_f, &total_v);
        T acc = ps_seg_value(ef, carries[tile], ev);
        ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
        for (uint k = 0; k < PS_ITEMS; k++) {
            ulong j = first + k;
            if (j < n && ps_seg_head(heads, j, n, reverse)) acc = init;
            T next = ps_combine(acc, items[k]);
            items[k] = exclusive ? acc : next;
            acc = next;
        }
        ps_tile_store(out, 0, n, reverse, base, stage, items);
    }
}

/* ---- reduce by key and run-length encoding: one (key, init (+) values) per run of equal keys ----------------
 * The same pairs over the runs (their heads from ps_segscan_key_heads), and each tile's number of heads, scanned by
 * ps_pattern_spine into each tile's first run (its total is the caller's count); ps_rbk_scatter scans each tile
 * again and writes the running value at each run's last element, with that element's key, to the run's slot.
 * Run-length encoding is the u64 sum program with every value 1 (ones: the values are not read).
 * temp: the tiles' head counts (tiles + 1 ulongs) at byte 0, the pairs' flags at tf_at and values at tv_at, the
 * heads at heads_at. */

/* Loads the tile at base as ps_tile_load does, or (ones) items of 1; elements past n are the identity. */
PS_FN void ps_rbk_load(__global const T *in, int ones, ulong n, ulong base, __local T *stage, T *items) {
    if (!ones) {
        ps_tile_load(in, 0, n, 0, base, stage, items);
        return;
    }
    ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
    for (uint k = 0; k < PS_ITEMS; k++) items[k] = first + k < n ? (T)1 : PS_IDENTITY;
}

/* ---- upsweep: each tile's pair (tf, tv) and its number of heads (counts) ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_rbk_tiles(__global const T *in, int ones, ulong n, __global const uchar *heads_buf, ulong heads_at, T init,
             __global uchar *temp, ulong tf_at, ulong tv_at) {
    __local T stage[PS_STAGE_ELEMS];
    __local uint sf[PS_WG];
    __local T sv[PS_WG];
    __local ulong sc[PS_WG];
    __global const uchar *heads = heads_buf + heads_at;
    __global ulong *counts = (__global ulong *)temp;
    __global uint *tf = (__global uint *)(temp + tf_at);
    __global T *tv = (__global T *)(temp + tv_at);
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T items[PS_ITEMS];
        ps_rbk_load(in, ones, n, tile * PS_TILE, stage, items);
        uint f, ef, total_f;
        ulong c, total_c;
        T v = ps_seg_fold(items, heads, n, 0, tile * PS_TILE, init, &f, &c), ev, total_v;
        ps_seg_wg_scan(f, v, sf, sv, &ef, &ev, &total_f, &total_v);
        ps_wg_scan_counts(c, sc, &total_c);
        if (get_local_id(0) == 0) {
            tf[tile] = total_f;
            tv[tile] = total_v;
            counts[tile] = total_c;
        }
    }
}

/* ---- downsweep: each run's key and value to its slot (counts: each tile's first run, from the spine) ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_rbk_scatter(__global const T *in, int ones, ulong n, __global const uchar *keys, ulong key_bytes,
               __global const uchar *heads_buf, ulong heads_at, T init, __global const uchar *temp, ulong tv_at,
               __global uchar *keys_out, __global T *values_out) {
    __local T stage[PS_STAGE_ELEMS];
    __local uint sf[PS_WG];
    __local T sv[PS_WG];
    __local ulong sc[PS_WG];
    __global const uchar *heads = heads_buf + heads_at;
    __global const ulong *counts = (__global const ulong *)temp;
    __global const T *carries = (__global const T *)(temp + tv_at);
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong base = tile * PS_TILE;
        T items[PS_ITEMS];
        ps_rbk_load(in, ones, n, base, stage, items);
        uint f, ef, total_f;
        ulong c, total_c;
        T v = ps_seg_fold(items, heads, n, 0, base, init, &f, &c), ev, total_v;
        ps_seg_wg_scan(f, v, sf, sv, &ef, &ev, &total_f, &total_v);
        ulong runs = counts[tile] + ps_wg_scan_counts(c, sc, &total_c); /* heads before this work-item's items */
        T acc = ps_seg_value(ef, carries[tile], ev);
        ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
        for (uint k = 0; k < PS_ITEMS; k++) {
            ulong j = first + k;
            if (j >= n) break;
            if (ps_seg_head(heads, j, n, 0)) {
                runs++;
                acc = init;
            }
            acc = ps_combine(acc, items[k]);
            if (j + 1 == n || heads[j + 1]) { /* the run's last element */
                values_out[runs - 1] = acc;
                ps_copy_item(keys_out, runs - 1, keys, j, key_bytes);
            }
        }
    }
}
