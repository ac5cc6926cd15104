/*
 * pattern_recurrence.cl - linear recurrences on OpenCL (pscan_recurrence, pscan_recurrence2, pscan_polyval):
 * y[i] = a[i] y[i-1] + b[i] (order 1; a[i] the constant a_const for Horner's rule), or
 * y[i] = a[i] y[i-1] + b[i] y[i-2] + c[i] (order 2); reverse runs from the end (y[i+1], y[i+2]).
 *
 * Idea: element i is an affine map of the state s = (y[i-1], y[i-2]) to (y[i], y[i-1]); the maps compose in
 * order (never commuted), so the recurrence is their scan applied to the initial state. The three passes of
 * the other patterns (opencl_patterns.c), none waiting on another work-group:
 *   ps_recur_tiles   each tile's elements composed in order into one map (temp: 6 values a tile)
 *   ps_recur_spine   one work-item applies the tiles' maps in order to the initial state: the state entering
 *                    each tile (temp, after the maps at element states_at: 2 values a tile)
 *   ps_recur_apply   each tile again: every work-item composes its PS_ITEMS consecutive elements, an in-order
 *                    work-group scan of those maps gives the map from the tile's start to each work-item's
 *                    first element, and the work-item steps its elements from the state that map gives.
 * A map is two rows of three, (r0 r1 r2) and (q0 q1 q2), acting on (s0, s1, 1) (the third row is 0 0 1), as in
 * src/cpu/cpu_recurrence.c. Order 1 uses r0 (the product of the a's) and r2 (the affine part) alone and composes
 * them as the CPU does, A = a A, B = a B + b, so no multiplication by the unused zeros can turn an infinity into
 * a NaN. Appending one element to a map is the CPU's step too; only whole maps compose in the general form.
 * Determinism: the tiles and the work-group scan depend only on n and the work-group size, so results repeat
 * bit for bit on a device (they differ from the CPU's by rounding: another grouping).
 * Work: 2 (order 1) or 6 (order 2) multiply-adds an element to compose, the same again to step, against the
 * serial loop's 1 or 2; depth PS_ITEMS + log2(PS_WG) a tile plus one step a tile in the spine. Memory passes:
 * the inputs twice, y once, 8 values a tile of temp.
 */
#if defined(PS_REAL) && defined(PS_OP_SUM)

typedef struct ps_rmap {
    T r0, r1, r2, q0, q1, q2;
} ps_rmap;

PS_FN ps_rmap ps_rmap_identity(void) {
    ps_rmap m;
    m.r0 = 1, m.r1 = 0, m.r2 = 0, m.q0 = 0, m.q1 = 1, m.q2 = 0;
    return m;
}

/* Element k of the scan order (physical n-1-k when reversed) appended to m: m then the element's map. */
PS_FN ps_rmap ps_rmap_append(ps_rmap m, T a, T b, T c, int order) {
    if (order == 1) {
        m.r0 = a * m.r0;
        m.r2 = a * m.r2 + b;
        return m;
    }
    const T n0 = a * m.r0 + b * m.q0, n1 = a * m.r1 + b * m.q1, n2 = a * m.r2 + b * m.q2 + c;
    m.q0 = m.r0, m.q1 = m.r1, m.q2 = m.r2;
    m.r0 = n0, m.r1 = n1, m.r2 = n2;
    return m;
}

/* The map of an earlier range e followed by the later range l (l after e: l's rows times e's). */
PS_FN ps_rmap ps_rmap_then(ps_rmap e, ps_rmap l, int order) {
    ps_rmap m = e;
    if (order == 1) {
        m.r0 = l.r0 * e.r0;
        m.r2 = l.r0 * e.r2 + l.r2;
        return m;
    }
    m.r0 = l.r0 * e.r0 + l.r1 * e.q0;
    m.r1 = l.r0 * e.r1 + l.r1 * e.q1;
    m.r2 = l.r0 * e.r2 + l.r1 * e.q2 + l.r2;
    m.q0 = l.q0 * e.r0 + l.q1 * e.q0;
    m.q1 = l.q0 * e.r1 + l.q1 * e.q1;
    m.q2 = l.q0 * e.r2 + l.q1 * e.q2 + l.q2;
    return m;
}

/* The state after m from (*s0, *s1). */
PS_FN void ps_rmap_apply(ps_rmap m, T *s0, T *s1, int order) {
    if (order == 1) {
        *s0 = m.r0 * *s0 + m.r2;
        return;
    }
    const T t0 = m.r0 * *s0 + m.r1 * *s1 + m.r2;
    *s1 = m.q0 * *s0 + m.q1 * *s1 + m.q2;
    *s0 = t0;
}

/* The coefficients of scan-order element k: physical index n-1-k when reversed. */
#define PS_RECUR_ARGS                                                                                         \
    __global const T *a, int use_a, T a_const, __global const T *b, __global const T *c, ulong n, int reverse, \
        int order
#define PS_RECUR_AT(k) ((reverse) ? (n) - 1 - (k) : (k))
#define PS_RECUR_A(i) (use_a ? a[i] : a_const)
#define PS_RECUR_C(i) (order == 2 ? c[i] : (T)0)

/* This work-item's elements of the tile at base (scan order), composed: *count of them (0: the identity). */
PS_FN ps_rmap ps_recur_compose_mine(PS_RECUR_ARGS, ulong base, uint *count) {
    const ulong first = base + (ulong)get_local_id(0) * PS_ITEMS;
    const uint mine = first >= n ? 0 : (uint)min((ulong)PS_ITEMS, n - first);
    ps_rmap m = ps_rmap_identity();
    for (uint j = 0; j < mine; j++) {
        const ulong i = PS_RECUR_AT(first + j);
        m = ps_rmap_append(m, PS_RECUR_A(i), b[i], PS_RECUR_C(i), order);
    }
    *count = mine;
    return m;
}

/* In-order inclusive scan of the first `valid` work-items' maps (valid >= 1; the others keep theirs): each of
 * them gets the map of work-items 0 .. lid. Only ranges of elements are ever composed (never the identity). */
PS_FN ps_rmap ps_recur_wg_scan(ps_rmap x, uint valid, int order, __local ps_rmap *scratch) {
    const uint lid = get_local_id(0);
    scratch[lid] = x;
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint d = 1; d < PS_WG; d <<= 1) {
        const int has = lid >= d && lid < valid;
        ps_rmap left;
        if (has) left = scratch[lid - d];
        barrier(CLK_LOCAL_MEM_FENCE);
        if (has) {
            x = ps_rmap_then(left, x, order);
            scratch[lid] = x;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return x;
}

/* ---- upsweep: maps[6 tile .. 6 tile + 6) = the tile's elements composed; work-groups stride over tiles ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void ps_recur_tiles(PS_RECUR_ARGS, __global T *maps) {
    __local ps_rmap scratch[PS_WG];
    const ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        const ulong base = tile * PS_TILE;
        uint count;
        ps_rmap m = ps_recur_compose_mine(a, use_a, a_const, b, c, n, reverse, order, base, &count);
        const uint valid = (uint)min((ulong)PS_WG, (n - base + PS_ITEMS - 1) / PS_ITEMS);
        m = ps_recur_wg_scan(m, valid, order, scratch);
        if (get_local_id(0) == valid - 1) {
            __global T *o = maps + 6 * tile;
            o[0] = m.r0, o[1] = m.r1, o[2] = m.r2, o[3] = m.q0, o[4] = m.q1, o[5] = m.q2;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the next tile */
    }
}

/* ---- spine: states[2 tile], states[2 tile + 1] = the state entering the tile; one work-item, in order ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_recur_spine(__global T *maps, ulong tiles, T y1, T y2, int order, ulong states_at) {
    if (get_local_id(0) != 0) return;
    __global T *states = maps + states_at;
    T s0 = y1, s1 = y2;
    for (ulong t = 0; t < tiles; t++) {
        states[2 * t] = s0, states[2 * t + 1] = s1;
        __global const T *p = maps + 6 * t;
        ps_rmap m;
        m.r0 = p[0], m.r1 = p[1], m.r2 = p[2], m.q0 = p[3], m.q1 = p[4], m.q2 = p[5];
        ps_rmap_apply(m, &s0, &s1, order);
    }
}

/* ---- downsweep: y of every element, each work-item from the state its predecessors' maps give ---- */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_recur_apply(PS_RECUR_ARGS, __global const T *temp, ulong states_at, __global T *y) {
    __global const T *states = temp + states_at;
    __local ps_rmap scratch[PS_WG];
    const ulong tiles = (n + PS_TILE - 1) / PS_TILE;
    const uint lid = get_local_id(0);
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        const ulong base = tile * PS_TILE;
        uint count;
        ps_rmap m = ps_recur_compose_mine(a, use_a, a_const, b, c, n, reverse, order, base, &count);
        const uint valid = (uint)min((ulong)PS_WG, (n - base + PS_ITEMS - 1) / PS_ITEMS);
        ps_recur_wg_scan(m, valid, order, scratch);
        T s0 = states[2 * tile], s1 = states[2 * tile + 1];
        if (lid > 0 && lid < valid) ps_rmap_apply(scratch[lid - 1], &s0, &s1, order);
        /* every element's inputs are read before its y is written, so y may be a, b or c itself */
        const ulong first = base + (ulong)lid * PS_ITEMS;
        for (uint j = 0; j < count; j++) {
            const ulong i = PS_RECUR_AT(first + j);
            const T v = order == 1 ? PS_RECUR_A(i) * s0 + b[i] : PS_RECUR_A(i) * s0 + b[i] * s1 + c[i];
            s1 = s0, s0 = v;
            y[i] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE); /* scratch is reused by the next tile */
    }
}

#undef PS_RECUR_ARGS
#undef PS_RECUR_AT
#undef PS_RECUR_A
#undef PS_RECUR_C
#endif /* PS_REAL && PS_OP_SUM */
