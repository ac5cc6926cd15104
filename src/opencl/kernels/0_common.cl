/*
 * 0_common.cl - what every OpenCL scan kernel shares: the element type and operator, the logical-to-physical
 * index mapping, and the work-group building blocks (tile load and store, thread scan, work-group scan).
 *
 * The host builds one program per (type, operator) from this file followed by 1_..5_*.cl, with:
 *   PS_T, PS_U       the element type and the type its arithmetic is done in (unsigned for integers, so that
 *                    sums and products wrap instead of being undefined, as in src/core/pscan_ops.h)
 *   PS_IN            the element type of a scan's input, PS_T but in a widened scan's program (PSCAN_SCAN_WIDEN:
 *                    a narrower type that ps_load converts, so nothing after the load sees it; the host builds
 *                    that program from 0_..5_*.cl alone)
 *   PS_BITS          the unsigned type of PS_T's size (status words of the look-back hold PS_T's bits)
 *   PS_T_BYTES       sizeof(PS_T)
 *   PS_OP_<NAME>     the operator; PS_LOWEST, PS_HIGHEST the type's range (identities of max and min)
 *   PS_WG, PS_ITEMS  work-group size and items per work-item of the tiled kernels (powers of two)
 *   PS_FP64          defined when PS_T is double
 *
 * Data layout: every scan is "logical": logical element i of an array of n is physical element n-1-i when the
 * scan is reversed, else i. Tiles, totals and carries are always in logical order. Buffers arrive as a base
 * pointer plus an element offset (cl_mem handles cannot be offset on the host without sub-buffers).
 */
#ifdef PS_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

/* Helpers are static inline: a plain C99 "inline" gives no external definition, which a compiler that does
 * not inline (-cl-opt-disable) would then fail to link. */
#define PS_FN static inline

typedef PS_T T;
typedef PS_U U;
typedef PS_IN IN;

#define PS_CAT_(a, b) a##b
#define PS_CAT(a, b) PS_CAT_(a, b)

#if defined(PS_OP_SUM)
#define PS_COMBINE(a, b) ((T)((U)(a) + (U)(b)))
#define PS_IDENTITY ((T)0)
#elif defined(PS_OP_PRODUCT)
#define PS_COMBINE(a, b) ((T)((U)(a) * (U)(b)))
#define PS_IDENTITY ((T)1)
#elif defined(PS_OP_MIN)
/* NaN propagates (the first one wins); of equal elements the earlier is kept (pscan_ops.h) */
#define PS_COMBINE(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (b) < (a) ? (b) : (a))
#define PS_IDENTITY ((T)(PS_HIGHEST))
#elif defined(PS_OP_MAX)
#define PS_COMBINE(a, b) ((a) != (a) ? (a) : (b) != (b) ? (b) : (a) < (b) ? (b) : (a))
#define PS_IDENTITY ((T)(PS_LOWEST))
#elif defined(PS_OP_AND)
#define PS_COMBINE(a, b) ((T)((a) & (b)))
#define PS_IDENTITY ((T)~(T)0)
#elif defined(PS_OP_OR)
#define PS_COMBINE(a, b) ((T)((a) | (b)))
#define PS_IDENTITY ((T)0)
#elif defined(PS_OP_XOR)
#define PS_COMBINE(a, b) ((T)((a) ^ (b)))
#define PS_IDENTITY ((T)0)
#else
#error "no operator defined (PS_OP_SUM, ...)"
#endif

/* a (+) b, where a holds the earlier elements. */
PS_FN T ps_combine(T a, T b) { return PS_COMBINE(a, b); }

#define PS_TILE (PS_WG * PS_ITEMS)
/* One padding slot per 32 elements keeps the blocked reads of a staged tile (stride PS_ITEMS) free of local
 * memory bank conflicts. */
#define PS_PAD(i) ((i) + ((i) >> 5))
#define PS_STAGE_ELEMS PS_PAD(PS_TILE)

/* What a tile kernel does with its auxiliary buffer. */
#define PS_AUX_NONE 0
#define PS_AUX_WRITE_TOTALS 1 /* aux[tile] = the tile's reduction (the first pass of a multi-block scan) */
#define PS_AUX_READ_CARRIES 2 /* aux[tile] is the carry-in of the tile (the last pass of reduce-then-scan) */

/* The physical index of logical element i. */
PS_FN ulong ps_phys(ulong i, ulong n, int reverse) { return reverse ? n - 1 - i : i; }

/* Logical element i of a scan's input, converted to T (sign- or zero-extended, or float to double); the identity
 * past n. */
PS_FN T ps_load(__global const IN *a, ulong off, ulong i, ulong n, int reverse) {
    return i < n ? (T)a[off + ps_phys(i, n, reverse)] : PS_IDENTITY;
}

/* ---- work-item level ------------------------------------------------------------------------------------ */

PS_FN T ps_thread_reduce(const T *items) {
    T acc = items[0];
    for (int k = 1; k < PS_ITEMS; k++) acc = ps_combine(acc, items[k]);
    return acc;
}

/* items[] becomes its own inclusive (or exclusive) scan, starting from carry. */
PS_FN void ps_thread_scan(T *items, T carry, int exclusive) {
    for (int k = 0; k < PS_ITEMS; k++) {
        T next = ps_combine(carry, items[k]);
        items[k] = exclusive ? carry : next;
        carry = next;
    }
}

/* ---- work-group level ----------------------------------------------------------------------------------- */

/* Exclusive scan of one value per work-item (Kogge-Stone in local memory, two barriers a step); *total gets
 * the reduction of all PS_WG values. scratch holds PS_WG elements and may be reused after the call. */
PS_FN T ps_wg_scan_exclusive(T x, __local T *scratch, T *total) {
    uint lid = get_local_id(0);
    T incl = x;
    scratch[lid] = incl;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        T left = lid >= d ? scratch[lid - d] : PS_IDENTITY;
        barrier(CLK_LOCAL_MEM_FENCE);
        incl = ps_combine(left, incl);
        scratch[lid] = incl;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T excl = lid > 0 ? scratch[lid - 1] : PS_IDENTITY;
    *total = scratch[PS_WG - 1];
    barrier(CLK_LOCAL_MEM_FENCE);
    return excl;
}

/* Reduction of one value per work-item (a halving tree); every work-item gets the result. */
PS_FN T ps_wg_reduce(T x, __local T *scratch) {
    uint lid = get_local_id(0);
    scratch[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = PS_WG / 2; d > 0; d >>= 1) {
        if (lid < d) scratch[lid] = ps_combine(scratch[lid], scratch[lid + d]);
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    T r = scratch[0];
    barrier(CLK_LOCAL_MEM_FENCE);
    return r;
}

/* ---- tile level: PS_TILE = PS_WG * PS_ITEMS logical elements from base --------------------------------- */

/* Loads a tile into a blocked arrangement (work-item lid holds logical elements lid*PS_ITEMS ...), reading
 * global memory striped (coalesced) through the stage. Elements past n are the identity. */
PS_FN void ps_tile_load(__global const IN *in, ulong off, ulong n, int reverse, ulong base, __local T *stage,
                         T *items) {
    uint lid = get_local_id(0);
    for (uint k = 0; k < PS_ITEMS; k++) {
        uint j = k * PS_WG + lid;
        stage[PS_PAD(j)] = ps_load(in, off, base + j, n, reverse);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < PS_ITEMS; k++) items[k] = stage[PS_PAD(lid * PS_ITEMS + k)];
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The inverse of ps_tile_load: a blocked arrangement back to global memory, striped; stops at n. */
PS_FN void ps_tile_store(__global T *out, ulong off, ulong n, int reverse, ulong base, __local T *stage,
                          const T *items) {
    uint lid = get_local_id(0);
    for (uint k = 0; k < PS_ITEMS; k++) stage[PS_PAD(lid * PS_ITEMS + k)] = items[k];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint k = 0; k < PS_ITEMS; k++) {
        uint j = k * PS_WG + lid;
        ulong i = base + j;
        if (i < n) out[off + ps_phys(i, n, reverse)] = stage[PS_PAD(j)];
    }
    barrier(CLK_LOCAL_MEM_FENCE);
}

/* The reduction of one tile, read striped straight from global memory (no stage: order does not matter to
 * an associative, commutative operator; floats may round differently from the scan's order). */
PS_FN T ps_tile_reduce(__global const IN *in, ulong off, ulong n, int reverse, ulong base, __local T *scratch) {
    uint lid = get_local_id(0);
    T acc = PS_IDENTITY;
    for (uint k = 0; k < PS_ITEMS; k++) acc = ps_combine(acc, ps_load(in, off, base + k * PS_WG + lid, n, reverse));
    return ps_wg_reduce(acc, scratch);
}

/* Scans one tile with carry as the prefix of its first element: the body that scan-then-propagate,
 * reduce-then-scan and the look-back scan share. Returns the tile's reduction (without carry). The carry is
 * known only after the tile is loaded in the look-back scan, so that one calls the halves itself. */
PS_FN T ps_tile_scan(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n, int reverse,
                      int exclusive, ulong base, T carry, __local T *stage, __local T *scratch) {
    T items[PS_ITEMS];
    ps_tile_load(in, in_off, n, reverse, base, stage, items);
    T total;
    T prefix = ps_wg_scan_exclusive(ps_thread_reduce(items), scratch, &total);
    ps_thread_scan(items, ps_combine(carry, prefix), exclusive);
    ps_tile_store(out, out_off, n, reverse, base, stage, items);
    return total;
}

/* ---- propagate: out[i] = carries[tile of i] (+) out[i] ---------------------------------------------------
 * The last pass of the scan-then-propagate family (Hillis-Steele, Blelloch, scan-then-propagate).
 * tile_elems is the tile size of the pass that wrote the carries. Work-groups stride over tiles. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_propagate(__global T *out, ulong out_off, ulong n, int reverse, __global const T *carries, ulong carries_off,
             ulong tile_elems) {
    uint lid = get_local_id(0);
    ulong tiles = (n + tile_elems - 1) / tile_elems;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        T carry = carries[carries_off + tile];
        ulong base = tile * tile_elems;
        ulong end = min(base + tile_elems, n);
        for (ulong i = base + lid; i < end; i += PS_WG) {
            ulong p = out_off + ps_phys(i, n, reverse);
            out[p] = ps_combine(carry, out[p]);
        }
    }
}
