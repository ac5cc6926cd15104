/*
 * pattern_select.cl - select (compact) and partition: the kept items in input order, then (partition) the
 * others in input order; keys of type T, payloads of any 1, 2, 4 or 8 bytes.
 *
 * Idea: three passes over tiles of PS_TILE items. ps_select_count counts each tile's kept items; the spine
 * (pattern_common.cl) scans the counts into each tile's first output slot and writes the total to the caller's
 * count; ps_select_scatter decides every item again and writes it to its slot. A tile is read as PS_ITEMS rows
 * of PS_WG consecutive items (coalesced), and each row's ranks come from one work-group scan of its keep bits,
 * carried row to row, so slots follow input order. A rejected item i of a partition goes to
 * kept_total + (i - kept items before i): the second group keeps input order too.
 * Work and depth: O(n); PS_ITEMS work-group scans per tile. Memory passes: the keys (and flags) twice, each
 * item written once: about 3n, plus the payload.
 */

/* Mirrors PSCAN_PRED_LIST's order in pscan.h (opencl_patterns.c checks it at compile time). */
#define PS_PRED_NONZERO 0
#define PS_PRED_EQ 1
#define PS_PRED_NE 2
#define PS_PRED_LT 3
#define PS_PRED_LE 4
#define PS_PRED_GT 5
#define PS_PRED_GE 6
#define PS_PRED_UNIQUE 7

/* Whether a and b are the same bits (unique: -0.0 and +0.0 differ, equal NaNs are equal). */
PS_FN int ps_same_bits(T a, T b) {
    union {
        T t;
        uchar c[sizeof(T)];
    } x, y;
    x.t = a;
    y.t = b;
    for (int j = 0; j < (int)sizeof(T); j++)
        if (x.c[j] != y.c[j]) return 0;
    return 1;
}

/* Whether item i is kept: its flag, or the predicate of its key against c (IEEE comparisons for floats: a NaN
 * passes only ne and nonzero, and -0.0 is not nonzero). */
PS_FN int ps_select_keep(__global const T *keys, __global const uchar *flags, int use_flags, int pred, T c, ulong i) {
    if (use_flags) return flags[i] != 0;
    T k = keys[i];
    switch (pred) {
    case PS_PRED_NONZERO: return k != (T)0;
    case PS_PRED_EQ: return k == c;
    case PS_PRED_NE: return k != c;
    case PS_PRED_LT: return k < c;
    case PS_PRED_LE: return k <= c;
    case PS_PRED_GT: return k > c;
    case PS_PRED_UNIQUE: return i == 0 || !ps_same_bits(k, keys[i - 1]);
    default: return k >= c;
    }
}

/* ---- upsweep: counts[tile] = the tile's kept items ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_select_count(__global const T *keys, __global const uchar *flags, int use_flags, int pred, T operand, ulong n,
                __global ulong *counts) {
    __local ulong scratch[PS_WG];
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong base = tile * PS_TILE, kept = 0, total;
        for (uint k = 0; k < PS_ITEMS; k++) {
            ulong i = base + k * PS_WG + lid;
            if (i < n) kept += ps_select_keep(keys, flags, use_flags, pred, operand, i);
        }
        ps_wg_scan_counts(kept, scratch, &total);
        if (lid == 0) counts[tile] = total;
    }
}

/* ---- downsweep: every item of the tile to its slot; offsets[tile] is the tile's first kept slot,
 * offsets[tiles] the number kept ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_select_scatter(__global const T *keys, __global const uchar *flags, int use_flags, int pred, T operand, ulong n,
                  __global const ulong *offsets, __global const uchar *values, ulong value_bytes,
                  __global T *keys_out, __global uchar *values_out, int partition) {
    __local ulong scratch[PS_WG];
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    ulong kept_total = offsets[tiles];
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong kept_before = offsets[tile]; /* kept items before this row */
        for (uint k = 0; k < PS_ITEMS; k++) {
            ulong i = tile * PS_TILE + k * PS_WG + lid, row;
            int valid = i < n;
            int keep = valid && ps_select_keep(keys, flags, use_flags, pred, operand, i);
            ulong kept_slot = kept_before + ps_wg_scan_counts((ulong)keep, scratch, &row);
            if (valid && (keep || partition)) {
                /* kept_slot counts the kept items before i; the other i - kept_slot were rejected */
                ulong slot = keep ? kept_slot : kept_total + (i - kept_slot);
                keys_out[slot] = keys[i];
                if (value_bytes) ps_copy_item(values_out, slot, values, i, value_bytes);
            }
            kept_before += row;
        }
    }
}
