/*
 * pattern_sort.cl - pscan_sort on OpenCL: a stable LSD radix sort of keys of type T (as bits: nothing is done in
 * the key's arithmetic) with payloads of 0, 1, 2, 4 or 8 bytes.
 *
 * Idea: the CPU backend's threaded sort (src/cpu/cpu_sort.c) with a work-item in place of a thread, so that no
 * work-group waits on another and a CPU runtime such as PoCL runs it as well as a GPU. Each of W work-items owns
 * one contiguous chunk of the keys. Per 8-bit digit pass:
 *   ps_sort_count    each work-item counts its chunk's digits into its own column of a digit-major table
 *                    (counts[d * W + w]: 8-byte counts, so any n fits)
 *   ps_sort_spine    one work-group scans the table in place, exclusive: entry (d, w) becomes the first output
 *                    slot of digit d's keys in chunk w, since every smaller digit and every earlier chunk of d
 *                    come first
 *   ps_sort_scatter  each work-item walks its chunk in order and moves each key (and payload) to its digit's
 *                    next slot: keys of one digit keep their input order, so the pass is stable
 * Keys compare through pscan.h's order-preserving map (ps_sort_map): unsigned as they are, signed with the sign
 * bit flipped, floats with every bit of negatives and the sign bit of positives flipped and every NaN made all
 * ones; descending complements it; only the digits come from the map, keys and payloads move bit for bit.
 * Work O(n x passes); memory per pass: the keys read twice and written once, the payloads read and written
 * once, and 256 x W x 8 bytes of counts written and read twice. Not a GPU-tuned kernel (a chunk per work-item
 * reads uncoalesced on a GPU); the CUDA backend's sort is the fast path.
 */
#ifdef PS_OP_SUM

typedef PS_BITS B;

#define PS_SORT_TOP ((B)((B)1 << (8 * PS_T_BYTES - 1)))

/* pscan.h's order-preserving map of a key's bits, complemented by flip (all ones: descending). */
PS_FN B ps_sort_map(B x, B flip) {
#if defined(PS_REAL)
    /* a NaN: the exponent all ones and a mantissa; every NaN maps to all ones, after +inf */
#if PS_T_BYTES == 4
    const B exponent = (B)0x7F800000u;
#else
    const B exponent = (B)0x7FF0000000000000ul;
#endif
    if ((B)(x & (B)~PS_SORT_TOP) > exponent) return (B)(~(B)0 ^ flip);
    const B m = (x & PS_SORT_TOP) ? (B)~x : (B)(x | PS_SORT_TOP);
#else
    const B m = ((T)-1 < (T)0) ? (B)(x ^ PS_SORT_TOP) : x; /* signed: the sign bit flipped */
#endif
    return (B)(m ^ flip);
}

PS_FN uint ps_sort_digit(B key, B flip, uint shift, uint mask) {
    return (uint)(ps_sort_map(key, flip) >> shift) & mask;
}

/* A buffer's bytes from a byte offset (temp holds the counts and the spare keys and payloads). */
#define PS_SORT_AT(type, buf, offset) ((__global type *)((__global uchar *)(buf) + (offset)))

/* Work-item w's chunk: [w * chunk, min(n, (w + 1) * chunk)). */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_sort_count(__global const uchar *keys_buf, ulong keys_at, ulong n, ulong chunk, uint workers, B flip, uint shift,
              uint mask, __global ulong *counts) {
    const uint w = (uint)get_global_id(0);
    if (w >= workers) return;
    __global const B *keys = PS_SORT_AT(const B, keys_buf, keys_at);
    for (uint d = 0; d <= mask; d++) counts[(ulong)d * workers + w] = 0;
    const ulong begin = (ulong)w * chunk, end = min(n, begin + chunk);
    for (ulong i = begin; i < end; i++) counts[(ulong)ps_sort_digit(keys[i], flip, shift, mask) * workers + w]++;
}

/* One work-group: an exclusive scan of entries 8-byte counts in place, each work-item a contiguous range, two
 * barriers in all. Not pattern_common.cl's ps_pattern_spine, whose rows of PS_WG counts take a Kogge-Stone scan
 * each: the table is 256 x W entries, not one count a tile, and with that spine the sort of 2^20 / 2^22 u32 keys
 * on PoCL took 59.7 / 123.9 ms instead of 29.4 / 91.7 (forty-third session). */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void ps_sort_spine(__global ulong *counts, ulong entries) {
    __local ulong sums[PS_WG];
    const uint t = (uint)get_local_id(0);
    const ulong per = (entries + PS_WG - 1) / PS_WG, begin = min(entries, t * per), end = min(entries, begin + per);
    ulong s = 0;
    for (ulong i = begin; i < end; i++) s += counts[i];
    sums[t] = s;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (t == 0) { /* PS_WG sums, in order */
        ulong run = 0;
        for (uint k = 0; k < PS_WG; k++) {
            const ulong v = sums[k];
            sums[k] = run;
            run += v;
        }
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong run = sums[t];
    for (ulong i = begin; i < end; i++) {
        const ulong v = counts[i];
        counts[i] = run;
        run += v;
    }
}

__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_sort_scatter(__global const uchar *keys_buf, ulong keys_at, __global const uchar *values_buf, ulong values_at,
                ulong n, ulong chunk, uint workers, B flip, uint shift, uint mask, __global ulong *offsets,
                __global uchar *keys_out_buf, ulong keys_out_at, __global uchar *values_out_buf, ulong values_out_at,
                uint value_bytes) {
    const uint w = (uint)get_global_id(0);
    if (w >= workers) return;
    __global const B *keys = PS_SORT_AT(const B, keys_buf, keys_at);
    __global B *keys_out = PS_SORT_AT(B, keys_out_buf, keys_out_at);
    const ulong begin = (ulong)w * chunk, end = min(n, begin + chunk);
    for (ulong i = begin; i < end; i++) {
        const B k = keys[i];
        const ulong slot = (ulong)ps_sort_digit(k, flip, shift, mask) * workers + w;
        const ulong p = offsets[slot];
        offsets[slot] = p + 1;
        keys_out[p] = k;
        if (value_bytes)
            ps_copy_item(PS_SORT_AT(uchar, values_out_buf, values_out_at), p,
                         PS_SORT_AT(const uchar, values_buf, values_at), i, value_bytes);
    }
}

#endif /* PS_OP_SUM */
