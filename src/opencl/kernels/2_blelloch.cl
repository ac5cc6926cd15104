/*
 * 2_blelloch.cl - the work-efficient tree scan (Blelloch 1990; GPU Gems 3, ch. 39.2), with and without the
 * padding that keeps the tree's strided local-memory accesses free of bank conflicts.
 *
 * Idea: two elements per work-item. Up-sweep: a reduction tree leaves partial sums in place; the root is
 * cleared to the identity; down-sweep: each node passes its value to its left child and (value (+) left sum)
 * to its right child, which leaves the exclusive scan. The inclusive scan adds each element back.
 * Conflict-free padding: tree accesses at stride 2^k hit the same local-memory bank; inserting one empty slot
 * every 32 elements (CONFLICT_FREE_OFFSET(i) = i >> 5) spreads them over the banks.
 * Work and depth: O(n) combines (2 (2 PS_WG) per tile), 2 log2(2 PS_WG) steps.
 * Memory passes: as Hillis-Steele (about 4n with propagate), with tiles twice as long.
 * Limits: tile = 2 PS_WG elements; any n through the recursion on the host.
 * Measured: NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum, n = 2^28, median of 10 (pscan bench):
 *   padded 2449 us, 877 GB/s, 0.297 of copy; unpadded 3332 us, 645 GB/s, 0.218 of copy: the padding makes
 *   it 1.36x faster. No faster than Hillis-Steele here (not profiled: both do 2 log steps of barriers per
 *   tile and 4n traffic, which likely dominate the work saved).
 */

#define PS_BLELLOCH_TILE (2 * PS_WG)

PS_FN uint ps_blelloch_offset(uint i, int padded) { return padded ? (i >> 5) : 0; }

PS_FN void ps_blelloch_tiles(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                              int reverse, int exclusive, T carry_in, __global T *aux, ulong aux_off,
                              int aux_mode, __local T *tree, __local T *root, const int padded) {
    uint lid = get_local_id(0);
    ulong tiles = (n + PS_BLELLOCH_TILE - 1) / PS_BLELLOCH_TILE;
    for (ulong tile = get_group_id(0); tile < tiles; tile += get_num_groups(0)) {
        /* ---- load: elements lid and lid + PS_WG (coalesced) ---- */
        ulong base = tile * PS_BLELLOCH_TILE;
        uint a = lid, b = lid + PS_WG;
        T xa = ps_load(in, in_off, base + a, n, reverse);
        T xb = ps_load(in, in_off, base + b, n, reverse);
        tree[a + ps_blelloch_offset(a, padded)] = xa;
        tree[b + ps_blelloch_offset(b, padded)] = xb;

        /* ---- up-sweep (reduce) ---- */
        uint offset = 1;
        for (uint d = PS_WG; d > 0; d >>= 1) {
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < d) {
                uint l = offset * (2 * lid + 1) - 1, r = offset * (2 * lid + 2) - 1;
                l += ps_blelloch_offset(l, padded);
                r += ps_blelloch_offset(r, padded);
                tree[r] = ps_combine(tree[l], tree[r]);
            }
            offset <<= 1;
        }

        /* ---- clear the root ---- */
        if (lid == 0) {
            uint last = PS_BLELLOCH_TILE - 1 + ps_blelloch_offset(PS_BLELLOCH_TILE - 1, padded);
            *root = tree[last];
            tree[last] = PS_IDENTITY;
        }

        /* ---- down-sweep ---- */
        for (uint d = 1; d < PS_BLELLOCH_TILE; d <<= 1) {
            offset >>= 1;
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid < d) {
                uint l = offset * (2 * lid + 1) - 1, r = offset * (2 * lid + 2) - 1;
                l += ps_blelloch_offset(l, padded);
                r += ps_blelloch_offset(r, padded);
                T left = tree[l];
                tree[l] = tree[r];
                tree[r] = ps_combine(tree[r], left);
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);

        /* ---- store ---- */
        T carry = aux_mode == PS_AUX_READ_CARRIES ? aux[aux_off + tile] : carry_in;
        T ea = tree[a + ps_blelloch_offset(a, padded)], eb = tree[b + ps_blelloch_offset(b, padded)];
        if (base + a < n)
            out[out_off + ps_phys(base + a, n, reverse)] = ps_combine(carry, exclusive ? ea : ps_combine(ea, xa));
        if (base + b < n)
            out[out_off + ps_phys(base + b, n, reverse)] = ps_combine(carry, exclusive ? eb : ps_combine(eb, xb));
        if (aux_mode == PS_AUX_WRITE_TOTALS && lid == 0) aux[aux_off + tile] = *root;
        barrier(CLK_LOCAL_MEM_FENCE); /* the next tile reuses tree and root */
    }
}

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_blelloch_padded_tiles(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n, int reverse,
                         int exclusive, T carry_in, __global T *aux, ulong aux_off, int aux_mode) {
    __local T tree[PS_BLELLOCH_TILE + (PS_BLELLOCH_TILE >> 5)];
    __local T root;
    ps_blelloch_tiles(in, in_off, out, out_off, n, reverse, exclusive, carry_in, aux, aux_off, aux_mode, tree,
                      &root, 1);
}

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_blelloch_unpadded_tiles(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                           int reverse, int exclusive, T carry_in, __global T *aux, ulong aux_off, int aux_mode) {
    __local T tree[PS_BLELLOCH_TILE];
    __local T root;
    ps_blelloch_tiles(in, in_off, out, out_off, n, reverse, exclusive, carry_in, aux, aux_off, aux_mode, tree,
                      &root, 0);
}
