/*
 * 5_decoupled_lookback.cl - single-pass chained scan with decoupled look-back (Merrill and Garland 2016) and
 * the decoupled fallback (Smith, Levien and Owens, SPAA 2025), so that it never depends on fair scheduling.
 *
 * Idea: each work-group takes the next tile id from an atomic counter (so every predecessor of a tile has
 * started), reduces its tile and publishes the AGGREGATE; it then looks back over its predecessors' status
 * words, combining aggregates until it meets an INCLUSIVE prefix, publishes its own INCLUSIVE prefix and
 * scans its tile from there. Input is read once and output written once.
 * Look-back: the first 32 work-items read a window of 32 predecessors at once; one work-item walks it.
 * Fallback: OpenCL promises nothing about a work-group that waits for another one (a CPU runtime or a GPU
 * that time-slices may not run the one waited for). A work-group that sees no progress for PS_DLB_SPIN_LIMIT
 * rounds reduces the stalled predecessor's tile itself from the input and carries on. The value is used only
 * if the predecessor has not published its INCLUSIVE prefix when the reduction is done: a tile writes its
 * output only after that, so even an in-place scan cannot have overwritten the input the fallback read.
 * Status words: flag and value in one 64-bit word for types of up to 4 bytes ((flag << 32) | bits, no value
 * bit stolen); 8-byte types use two words, each with the flag and 32 bits of the value, valid only when
 * both flags agree. Single 64-bit stores and loads need no fence between a value and its flag.
 * Work and depth: O(n) combines; the look-back adds O(1) status reads per tile when work-groups progress.
 * Memory passes: read n, write n: about 2n, plus 8 or 16 bytes of status per tile.
 * Limits: fewer than 2^32 tiles (n < 2^32 * PS_TILE).
 * Measured: NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum, n = 2^28, median of 10 (pscan bench):
 *   1245 us, 1725 GB/s, 0.584 of copy (copy 2955 GB/s). Not profiled; likely
 *   limits: the work-group scan (Kogge-Stone in local memory: OpenCL 1.2 has no sub-group shuffles), the
 *   staging of every tile through local memory, 4-byte loads. The stalled-tile test there took 1 to 5
 *   fallbacks per scan and passed.
 */

#define PS_FLAG_INVALID 0u
#define PS_FLAG_AGGREGATE 1u
#define PS_FLAG_INCLUSIVE 2u

#define PS_LOOK_WAIT 0
#define PS_LOOK_FALLBACK 1
#define PS_LOOK_DONE 2

#define PS_LOOKBACK_WINDOW (PS_WG < 32 ? PS_WG : 32)

#ifndef PS_DLB_SPIN_LIMIT
#define PS_DLB_SPIN_LIMIT 256
#endif
/* Test hook (tests/test_opencl_fallback.c): tile PS_DLB_STALL_TILE waits before publishing anything until
 * some work-group has reduced it by fallback (or PS_DLB_STALL_ROUNDS rounds have passed). */
#ifndef PS_DLB_STALL_TILE
#define PS_DLB_STALL_TILE (-1)
#endif
#define PS_DLB_STALL_ROUNDS (1ul << 28)

#if PS_T_BYTES <= 4
#define PS_STATUS_WORDS 1
#else
#define PS_STATUS_WORDS 2
#endif

PS_FN void ps_status_write(volatile __global ulong *status, ulong tile, uint flag, T v) {
#if PS_STATUS_WORDS == 1
    status[tile] = ((ulong)flag << 32) | (ulong)PS_CAT(as_, PS_BITS)(v);
#else
    ulong bits = as_ulong(v);
    status[2 * tile] = ((ulong)flag << 32) | (bits & 0xfffffffful);
    status[2 * tile + 1] = ((ulong)flag << 32) | (bits >> 32);
#endif
}

/* The flag of tile's status (INVALID while the two words of an 8-byte value disagree) and its value. */
PS_FN uint ps_status_read(volatile __global ulong *status, ulong tile, T *v) {
#if PS_STATUS_WORDS == 1
    ulong w = status[tile];
    *v = PS_CAT(as_, PS_T)((PS_BITS)w);
    return (uint)(w >> 32);
#else
    ulong lo = status[2 * tile], hi = status[2 * tile + 1];
    uint flag = (uint)(lo >> 32);
    if (flag != (uint)(hi >> 32)) return PS_FLAG_INVALID;
    *v = PS_CAT(as_, PS_T)((hi << 32) | (lo & 0xfffffffful));
    return flag;
#endif
}

/* init (+) the reduction of tiles 0 .. tile-1, for every work-item of the group. Tile 0's inclusive prefix
 * already holds init, so init enters only when the fallback reduces tile 0 itself. */
PS_FN T ps_lookback(ulong tile, T init, volatile __global ulong *status, __global uint *counters,
                     __global const T *in, ulong in_off, ulong n, int reverse, __local uint *win_flag,
                     __local T *win_val, __local T *scratch, __local long *look_p, __local T *look_acc,
                     __local int *look_state, __local uint *look_spins) {
    uint lid = get_local_id(0);
    if (lid == 0) {
        *look_p = (long)tile - 1;
        *look_acc = PS_IDENTITY;
        *look_state = PS_LOOK_WAIT;
        *look_spins = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        long p = *look_p;
        int state = *look_state;
        if (state == PS_LOOK_DONE) break;

        if (state == PS_LOOK_FALLBACK) {
            /* ---- fallback: reduce the stalled predecessor p from its input ---- */
            T r = ps_tile_reduce(in, in_off, n, reverse, (ulong)p * PS_TILE, scratch);
            if (lid == 0) {
                mem_fence(CLK_GLOBAL_MEM_FENCE);
                T v;
                int next = PS_LOOK_WAIT;
                if (ps_status_read(status, (ulong)p, &v) != PS_FLAG_INCLUSIVE) {
                    T acc = ps_combine(r, *look_acc);
                    if (p == 0) { /* tile 0 itself stalled: nothing inclusive to meet, start from init */
                        acc = ps_combine(init, acc);
                        next = PS_LOOK_DONE;
                    }
                    *look_acc = acc;
                    *look_p = p - 1;
                    atomic_inc(&counters[1]);
                } /* else p finished meanwhile: the next window reads its inclusive prefix */
                *look_state = next;
                *look_spins = 0;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            continue;
        }

        /* ---- look-back: read the status of p, p-1, ..., p-31 at once ---- */
        if (lid < PS_LOOKBACK_WINDOW) {
            T v = PS_IDENTITY;
            uint f = PS_FLAG_INVALID;
            if (p >= (long)lid) f = ps_status_read(status, (ulong)(p - (long)lid), &v);
            win_flag[lid] = f;
            win_val[lid] = v;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            T acc = *look_acc;
            int next = PS_LOOK_WAIT;
            long k = 0;
            while (k < PS_LOOKBACK_WINDOW && p - k >= 0) {
                uint f = win_flag[k];
                if (f == PS_FLAG_INVALID) break;
                acc = ps_combine(win_val[k], acc);
                k++;
                if (f == PS_FLAG_INCLUSIVE) {
                    next = PS_LOOK_DONE;
                    break;
                }
            }
            *look_acc = acc;
            *look_p = p - k;
            if (next == PS_LOOK_WAIT && k == 0) {
                if (++*look_spins >= PS_DLB_SPIN_LIMIT) next = PS_LOOK_FALLBACK;
            } else {
                *look_spins = 0;
            }
            *look_state = next;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return *look_acc;
}

/* temp: counters[0] the next tile id, counters[1] the fallbacks taken (read by tests), then from byte 8 one
 * status slot per tile; the host passes the same zeroed buffer as both arguments. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_decoupled_lookback_scan(__global const T *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                           int reverse, int exclusive, T init, __global uint *counters, __global ulong *temp) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    __local uint win_flag[PS_LOOKBACK_WINDOW];
    __local T win_val[PS_LOOKBACK_WINDOW];
    __local uint tile_id;
    __local long look_p;
    __local T look_acc;
    __local int look_state;
    __local uint look_spins;
    volatile __global ulong *status = temp + 1;
    uint lid = get_local_id(0);

    /* ---- tile id, in the order work-groups start ---- */
    if (lid == 0) tile_id = atomic_inc(&counters[0]);
    barrier(CLK_LOCAL_MEM_FENCE);
    ulong tile = tile_id;
    ulong base = tile * PS_TILE;

    /* ---- load and reduce ---- */
    T items[PS_ITEMS];
    ps_tile_load(in, in_off, n, reverse, base, stage, items);
    T aggregate;
    T prefix = ps_wg_scan_exclusive(ps_thread_reduce(items), scratch, &aggregate);

#if PS_DLB_STALL_TILE >= 0
    if (tile == PS_DLB_STALL_TILE) {
        if (lid == 0)
            for (ulong r = 0; r < PS_DLB_STALL_ROUNDS && atomic_add(&counters[1], 0u) == 0u; r++) {
            }
        barrier(CLK_GLOBAL_MEM_FENCE);
    }
#endif

    /* ---- publish the aggregate, look back, publish the inclusive prefix ---- */
    T carry = init;
    if (tile == 0) {
        if (lid == 0) ps_status_write(status, 0, PS_FLAG_INCLUSIVE, ps_combine(init, aggregate));
    } else {
        if (lid == 0) ps_status_write(status, tile, PS_FLAG_AGGREGATE, aggregate);
        carry = ps_lookback(tile, init, status, counters, in, in_off, n, reverse, win_flag, win_val, scratch,
                            &look_p, &look_acc, &look_state, &look_spins);
        if (lid == 0) ps_status_write(status, tile, PS_FLAG_INCLUSIVE, ps_combine(carry, aggregate));
    }
    /* the inclusive prefix is visible before this tile's output overwrites its input (see Fallback above) */
    if (lid == 0) mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);

    /* ---- scan the tile from its carry and store ---- */
    ps_thread_scan(items, ps_combine(carry, prefix), exclusive);
    ps_tile_store(out, out_off, n, reverse, base, stage, items);
}
