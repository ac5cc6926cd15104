#line 2 "1_user_scan.cl"
/*
 * 1_user_scan.cl - scan and reduce of a user operator on OpenCL: reduce-then-scan over elements of any type.
 *
 * The host (opencl_user.c) builds this after 0_prelude.cl and the user's source, with
 *   PS_USER_T, PS_USER_COMBINE   the element type and the combine function the source defines
 *   PS_USER_BYTES, PS_USER_ALIGN the caller's elem_bytes and elem_align (checked against the type below)
 *   PS_WG, PS_ITEMS              work-group size and items per work-item (a tile is PS_WG * PS_ITEMS elements)
 *
 * Idea: the reduce-then-scan of 4_reduce_then_scan.cl written for a combine that is only associative:
 *   ps_user_reduce_tiles  one total per tile                   (read n)
 *   (host)                the totals scanned by the same two kernels, exclusive, from the initial value
 *   ps_user_scan_tiles    each tile scanned from its carry     (read n, write n)
 * Every combine takes the earlier operand on the left: a work-item holds PS_ITEMS consecutive elements (a
 * blocked arrangement, read straight from global memory), the work-group scan is Kogge-Stone over the
 * work-items in order, and tiles, totals and carries are in the scan's logical order. The result is the same
 * for any launch shape, so a float combine repeats bit for bit. Elements cross as values in private memory
 * (the user's combine takes and returns its type by value, as in C), so its source needs no address spaces.
 * Work and depth: about 2n combines; depth PS_ITEMS + log2(PS_WG) per tile, times the levels.
 * Memory passes: about 3n. The identity is the value of an element past n and of an empty work-item.
 */

typedef PS_USER_T ps_t;

/* The caller's size and alignment must be the device's, or elements would be misread: a compile error. */
typedef char ps_elem_bytes_is_not_sizeof_the_type[sizeof(ps_t) == PS_USER_BYTES ? 1 : -1];
#if defined(__clang__) || defined(__GNUC__)
typedef char ps_elem_align_is_not_the_alignment_of_the_type[__alignof__(ps_t) == PS_USER_ALIGN ? 1 : -1];
#endif

#define PS_TILE (PS_WG * PS_ITEMS)

/* a (+) b, a the earlier; a combine name the source lacks is an error here (no implicit declarations). */
static inline ps_t ps_user_combine(ps_t a, ps_t b) { return PS_USER_COMBINE(a, b); }

/* The physical index of logical element i (a reverse scan runs from the end). */
static inline ulong ps_user_phys(ulong i, ulong n, int reverse) { return reverse ? n - 1 - i : i; }

/* The reduction of work-item lid's PS_ITEMS consecutive elements of the tile at base, in order; the
 * identity when they all lie past n. */
static inline ps_t ps_user_thread_reduce(__global const ps_t *in, ulong off, ulong n, int reverse, ulong base,
                                         ps_t identity) {
    ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
    if (first >= n) return identity;
    ps_t acc = in[off + ps_user_phys(first, n, reverse)];
    for (uint k = 1; k < PS_ITEMS && first + k < n; k++)
        acc = ps_user_combine(acc, in[off + ps_user_phys(first + k, n, reverse)]);
    return acc;
}

/* Kogge-Stone over the work-items' values, in order. Returns the combine of the values of work-items before
 * this one (the identity for work-item 0) and sets *total to that of all PS_WG values. */
static inline ps_t ps_user_wg_scan_exclusive(ps_t x, __local ps_t *scratch, ps_t identity, ps_t *total) {
    uint lid = get_local_id(0);
    ps_t incl = x;
    scratch[lid] = incl;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        ps_t left = identity;
        if (lid >= d) left = scratch[lid - d];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid >= d) incl = ps_user_combine(left, incl);
        scratch[lid] = incl;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    ps_t excl = identity;
    if (lid > 0) excl = scratch[lid - 1];
    *total = scratch[PS_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return excl;
}

/* ---- upsweep: totals[tile] = the reduction of the tile ----------------------------------------------------
 * With fold_init (one tile, the last level of a reduce), totals[0] = init (+) the reduction, or init when n
 * is 0. Work-groups stride over tiles. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_user_reduce_tiles(__global const ps_t *in, ulong in_off, ulong n, int reverse, ps_t identity,
                     __global ps_t *totals, ulong totals_off, int fold_init, ps_t init) {
    __local ps_t scratch[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    if (fold_init && n == 0) {
        if (get_global_id(0) == 0) totals[totals_off] = init;
        return;
    }
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ps_t total;
        ps_user_wg_scan_exclusive(ps_user_thread_reduce(in, in_off, n, reverse, tile * PS_TILE, identity), scratch,
                                  identity, &total);
        if (get_local_id(0) == 0) totals[totals_off + tile] = fold_init ? ps_user_combine(init, total) : total;
    }
}

/* ---- downsweep: each tile scanned from its carry -----------------------------------------------------------
 * The carry of a tile is carries[carries_off + tile] with use_carries, else carry_in (a single tile). A
 * work-item reads its elements before the work-group scan's barriers and writes only those: in place works. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_user_scan_tiles(__global const ps_t *in, ulong in_off, __global ps_t *out, ulong out_off, ulong n, int reverse,
                   int exclusive, ps_t identity, ps_t carry_in, __global const ps_t *carries, ulong carries_off,
                   int use_carries) {
    __local ps_t scratch[PS_WG];
    ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        ulong first = tile * PS_TILE + (ulong)get_local_id(0) * PS_ITEMS;
        ps_t items[PS_ITEMS];
        for (uint k = 0; k < PS_ITEMS; k++)
            items[k] = first + k < n ? in[in_off + ps_user_phys(first + k, n, reverse)] : identity;

        /* the prefix of this work-item: the carry, then the work-items before it in this tile */
        ps_t acc = items[0];
        for (uint k = 1; k < PS_ITEMS && first + k < n; k++) acc = ps_user_combine(acc, items[k]);
        if (first >= n) acc = identity;
        ps_t total, before = ps_user_wg_scan_exclusive(acc, scratch, identity, &total);
        ps_t carry = use_carries ? carries[carries_off + tile] : carry_in;
        if (get_local_id(0) > 0) carry = ps_user_combine(carry, before);

        for (uint k = 0; k < PS_ITEMS && first + k < n; k++) {
            ps_t next = ps_user_combine(carry, items[k]);
            out[out_off + ps_user_phys(first + k, n, reverse)] = exclusive ? carry : next;
            carry = next;
        }
    }
}
