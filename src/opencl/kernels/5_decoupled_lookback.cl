/*
 * 5_decoupled_lookback.cl - single-pass chained scan with decoupled look-back (Merrill and Garland 2016) and
 * the decoupled fallback (Smith, Levien and Owens, SPAA 2025), so that it never depends on fair scheduling,
 * in a form whose float results repeat bit for bit (issue 9).
 *
 * Idea: each work-group takes the next tile id from an atomic counter (so every predecessor of a tile has
 * started), reduces its tile and publishes its AGGREGATE A(k); it then looks back over its predecessors'
 * status, publishes its INCLUSIVE prefix I(k) = carry (+) A(k) in a second entry and scans its tile from the
 * carry. Input is read once and output written once.
 * Fixed combination order (the same idea as the CUDA chain's fixed window, src/cuda/chain/single_pass.cuh):
 * the carry of tile k is always the left fold C(k-1) = (((init (+) A(0)) (+) A(1)) ...) (+) A(k-1), and
 * I(k) = C(k). Every published I(j) is therefore one intermediate of that single fold, so a tile may start from
 * whichever finished I(j) it meets nearest and fold A(j+1) .. A(k-1) forward onto it: it performs exactly the
 * combines, on exactly the operands, that the fold from init would have performed past j. The result cannot
 * depend on which predecessors happened to be finished (the classic look-back combined what it found from right
 * to left, A(k-2) (+) A(k-1) first, so its float sums changed with timing). Each A(j) is one fixed expression of
 * its tile's input (ps_tile_aggregate: blocked serial folds, then the Kogge-Stone tree), whoever computes it.
 * Look-back: the first 32 work-items read a window of 32 predecessors (I and A) at once; work-item 0 walks it
 * from the nearest down to the first I (or past tile 0: init), then folds the aggregates it passed forward.
 * Fallback: OpenCL promises nothing about a work-group that waits for another one (a CPU runtime or a GPU
 * that time-slices may not run the one waited for). A work-group that sees no progress for PS_DLB_SPIN_LIMIT
 * rounds reduces the stalled predecessor q from the input with the same ps_tile_aggregate, so the bits are
 * those q would publish, and publishes A(q) on its behalf, unless q has published A(q) or I(q) by the time the
 * reduction is done: a tile writes its output only after publishing both, so even an in-place scan cannot have
 * overwritten the input the fallback read. Two writers of A(q) write the same bits, so the entry stays valid.
 * Cost of the fixed order against the classic look-back: the same walk (it still stops at the nearest finished
 * I) and the same number of combines, run forward instead of backward; a second status entry per tile (8 or
 * 16 bytes); when the walk took more than one round, one more round of status reads per 32 aggregates it
 * passed in earlier rounds (they are re-read, not kept). No extra pass over the data; integer results are the
 * same as before (any order gives them).
 * Status entries: entry 2k holds A(k), entry 2k + 1 holds I(k), each written by value only once (A(k) maybe
 * twice with equal bits). Flag and value share one 64-bit word for types of up to 4 bytes ((flag << 32) |
 * bits, no value bit stolen); 8-byte types use two words, each with the flag and 32 bits of the value, valid
 * only when both flags agree. Single 64-bit stores and loads need no fence between a value and its flag.
 * Work and depth: O(n) combines; the look-back adds O(1) status reads per tile when work-groups progress.
 * Memory passes: read n, write n: about 2n, plus 16 or 32 bytes of status per tile.
 * Limits: fewer than 2^32 tiles (n < 2^32 * PS_TILE).
 * Measured (before issue 9's fixed order): NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum,
 *   n = 2^28, median of 10 (pscan bench): 1245 us, 1725 GB/s, 0.584 of copy (copy 2955 GB/s). Not profiled;
 *   likely limits: the work-group scan (Kogge-Stone in local memory: OpenCL 1.2 has no sub-group shuffles),
 *   the staging of every tile through local memory, 4-byte loads. The stalled-tile test there took 1 to 5
 *   fallbacks per scan and passed.
 * Measured with the fixed order (NVIDIA H200, driver 580.159.04, pscan bench, median of 25, 2026-12-03): 0.214
 *   of copy for i32 and 0.201 for i64 at 2^28, 0.30 / 0.27 at 2^22. Why not more: the left fold is serial, one
 *   combine a tile, so the chain moves at the speed of work-item 0's fold (a local read and a combine for each
 *   aggregate) plus a round trip and two barriers per 32 aggregates. Tried and not kept (docs/performance.md,
 *   fifty-third section): a walk by work-item 0 alone with no barrier in its loop (PoCL compiles it 30-40 %
 *   faster) spent a round trip on each predecessor: 0.047 / 0.037 of copy; reading 4-32 predecessors a round
 *   trip in that walk did not help (the older aggregates' re-reads are serial too). A window round (each of W
 *   work-items waits alone on its predecessor, one barrier, work-item 0 folds from local memory) made 0.323 /
 *   0.285 with W = 64 and passed every PoCL test, but its NVIDIA test run did not finish in the time left: on
 *   the branch wip/opencl-window-round until it has.
 */

#define PS_FLAG_INVALID 0u
#define PS_FLAG_AGGREGATE 1u
#define PS_FLAG_INCLUSIVE 2u

#define PS_LOOK_WAIT 0     /* walk back over the next window */
#define PS_LOOK_FALLBACK 1 /* reduce the stalled predecessor look_p ourselves */
#define PS_LOOK_FOLD 2     /* fold the aggregates look_hi .. tile-1, passed in earlier rounds, onto the base */
#define PS_LOOK_DONE 3

/* Predecessors read per round: 32 (the host's default; tests set fewer, see ps_opencl_debug_set_lookback_window). */
#ifndef PS_DLB_WINDOW
#define PS_DLB_WINDOW 32
#endif
#define PS_LOOKBACK_WINDOW (PS_WG < PS_DLB_WINDOW ? PS_WG : PS_DLB_WINDOW)

#ifndef PS_DLB_SPIN_LIMIT
#define PS_DLB_SPIN_LIMIT 256
#endif
/* Test hook (tests/test_opencl_fallback.c, tests/test_scan.c): tile PS_DLB_STALL_TILE waits before publishing
 * anything until some work-group has reduced a tile by fallback (or PS_DLB_STALL_ROUNDS rounds have passed). */
#ifndef PS_DLB_STALL_TILE
#define PS_DLB_STALL_TILE (-1)
#endif
#define PS_DLB_STALL_ROUNDS (1ul << 28)

#if PS_T_BYTES <= 4
#define PS_STATUS_WORDS 1
#else
#define PS_STATUS_WORDS 2
#endif

/* The two status entries of a tile. */
#define PS_ENTRY_AGGREGATE(t) (2 * (ulong)(t))
#define PS_ENTRY_INCLUSIVE(t) (2 * (ulong)(t) + 1)

PS_FN void ps_status_write(volatile __global ulong *status, ulong entry, uint flag, T v) {
#if PS_STATUS_WORDS == 1
    status[entry] = ((ulong)flag << 32) | (ulong)PS_CAT(as_, PS_BITS)(v);
#else
    ulong bits = as_ulong(v);
    status[2 * entry] = ((ulong)flag << 32) | (bits & 0xfffffffful);
    status[2 * entry + 1] = ((ulong)flag << 32) | (bits >> 32);
#endif
}

/* The flag of an entry (INVALID while the two words of an 8-byte value disagree) and its value. */
PS_FN uint ps_status_read(volatile __global ulong *status, ulong entry, T *v) {
#if PS_STATUS_WORDS == 1
    ulong w = status[entry];
    *v = PS_CAT(as_, PS_T)((PS_BITS)w);
    return (uint)(w >> 32);
#else
    ulong lo = status[2 * entry], hi = status[2 * entry + 1];
    uint flag = (uint)(lo >> 32);
    if (flag != (uint)(hi >> 32)) return PS_FLAG_INVALID;
    *v = PS_CAT(as_, PS_T)((hi << 32) | (lo & 0xfffffffful));
    return flag;
#endif
}

/* A(t) of the tile at base, for every work-item: its blocked items folded serially per work-item (as
 * ps_thread_reduce), then the Kogge-Stone total, the very combines the tile's own kernel does; the fallback's
 * copy of a stalled tile's aggregate has the same bits as the tile's own. Uses stage and scratch. */
PS_FN T ps_tile_aggregate(__global const IN *in, ulong in_off, ulong n, int reverse, ulong base,
                           __local T *stage, __local T *scratch) {
    uint lid = get_local_id(0);
    for (uint k = 0; k < PS_ITEMS; k++) {
        uint j = k * PS_WG + lid;
        stage[PS_PAD(j)] = ps_load(in, in_off, base + j, n, reverse);
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    T acc = stage[PS_PAD(lid * PS_ITEMS)];
    for (uint k = 1; k < PS_ITEMS; k++) acc = ps_combine(acc, stage[PS_PAD(lid * PS_ITEMS + k)]);
    barrier(CLK_LOCAL_MEM_FENCE);
    T aggregate;
    ps_wg_scan_exclusive(acc, scratch, &aggregate);
    return aggregate;
}

/* C(tile - 1) = init (+) A(0) (+) ... (+) A(tile - 1), folded left, for every work-item: from the nearest
 * finished I(j), or from init, with A(j + 1) .. A(tile - 1) folded on in order (see the header). */
PS_FN T ps_lookback(ulong tile, T init, volatile __global ulong *status, __global uint *counters,
                     __global const IN *in, ulong in_off, ulong n, int reverse, __local uint *win_flag,
                     __local T *win_val, __local T *stage, __local T *scratch, __local long *look_p,
                     __local long *look_hi, __local T *look_acc, __local int *look_state, __local uint *look_spins) {
    const long W = PS_LOOKBACK_WINDOW;
    uint lid = get_local_id(0);
    if (lid == 0) {
        *look_p = (long)tile - 1;
        *look_state = PS_LOOK_WAIT;
        *look_spins = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    for (;;) {
        long p = *look_p, hi = *look_hi;
        int state = *look_state;
        if (state == PS_LOOK_DONE) break;

        if (state == PS_LOOK_FALLBACK) {
            /* ---- fallback: the stalled predecessor p has published nothing; reduce it from its input ---- */
            T r = ps_tile_aggregate(in, in_off, n, reverse, (ulong)p * PS_TILE, stage, scratch);
            if (lid == 0) {
                mem_fence(CLK_GLOBAL_MEM_FENCE);
                T v;
                if (ps_status_read(status, PS_ENTRY_AGGREGATE(p), &v) != PS_FLAG_AGGREGATE &&
                    ps_status_read(status, PS_ENTRY_INCLUSIVE(p), &v) != PS_FLAG_INCLUSIVE) {
                    ps_status_write(status, PS_ENTRY_AGGREGATE(p), PS_FLAG_AGGREGATE, r);
                    atomic_inc(&counters[1]);
                } /* else p published meanwhile (the same bits, or its I): the next window reads it */
                *look_state = PS_LOOK_WAIT;
                *look_spins = 0;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            continue;
        }

        if (state == PS_LOOK_FOLD) {
            /* ---- fold A(hi) .. A(hi + W - 1) (up to tile - 1) onto the base, in order ---- */
            if (lid < W && hi + (long)lid < (long)tile) {
                T v;
                while (ps_status_read(status, PS_ENTRY_AGGREGATE(hi + (long)lid), &v) != PS_FLAG_AGGREGATE) {
                } /* seen valid during the walk: write-once, so this only waits out a stale read */
                win_val[W + lid] = v;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            if (lid == 0) {
                T acc = *look_acc;
                for (long m = 0; m < W && hi + m < (long)tile; m++) acc = ps_combine(acc, win_val[W + m]);
                *look_acc = acc;
                *look_hi = hi + W;
                *look_state = hi + W < (long)tile ? PS_LOOK_FOLD : PS_LOOK_DONE;
            }
            barrier(CLK_LOCAL_MEM_FENCE);
            continue;
        }

        /* ---- walk: read I and A of p, p-1, ..., p-31 at once ---- */
        if (lid < W) {
            long q = p - (long)lid;
            T vi = PS_IDENTITY, va = PS_IDENTITY;
            uint fi = PS_FLAG_INVALID, fa = PS_FLAG_INVALID;
            if (q >= 0) { /* both at once: one round trip, not two */
                fi = ps_status_read(status, PS_ENTRY_INCLUSIVE(q), &vi);
                fa = ps_status_read(status, PS_ENTRY_AGGREGATE(q), &va);
            }
            win_flag[lid] = fi == PS_FLAG_INCLUSIVE;
            win_val[lid] = vi;
            win_flag[W + lid] = fa == PS_FLAG_AGGREGATE;
            win_val[W + lid] = va;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        if (lid == 0) {
            long k = 0;
            int found = 0;
            for (; k < W && p - k >= 0; k++) {
                if (win_flag[k]) {
                    found = 1;
                    break;
                }
                if (!win_flag[W + k]) break;
            }
            if (found || p - k < 0) {
                /* base I(p - k), or init below tile 0; then A(p - k + 1) .. A(p) of this window, in order */
                T acc = found ? win_val[k] : init;
                for (long m = k - 1; m >= 0; m--) acc = ps_combine(acc, win_val[W + m]);
                *look_acc = acc;
                *look_hi = p + 1; /* A(p + 1) .. A(tile - 1) were passed in earlier rounds */
                *look_state = p + 1 < (long)tile ? PS_LOOK_FOLD : PS_LOOK_DONE;
            } else {
                *look_p = p - k;
                if (k == 0) {
                    if (++*look_spins >= PS_DLB_SPIN_LIMIT) *look_state = PS_LOOK_FALLBACK;
                } else {
                    *look_spins = 0;
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    return *look_acc;
}

/* temp: counters[0] the next tile id, counters[1] the fallbacks taken (read by tests), then from byte 8 two
 * status entries per tile; the host passes the same zeroed buffer as both arguments. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_decoupled_lookback_scan(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                           int reverse, int exclusive, T init, __global uint *counters, __global ulong *temp) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    __local uint win_flag[2 * PS_LOOKBACK_WINDOW];
    __local T win_val[2 * PS_LOOKBACK_WINDOW];
    __local uint tile_id;
    __local long look_p, look_hi;
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

    /* ---- load and reduce: A(tile), by the same combines as ps_tile_aggregate ---- */
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

    /* ---- publish A(tile), look back for C(tile - 1), publish I(tile) = C(tile) ---- */
    if (lid == 0) ps_status_write(status, PS_ENTRY_AGGREGATE(tile), PS_FLAG_AGGREGATE, aggregate);
    T carry = init;
    if (tile > 0)
        carry = ps_lookback(tile, init, status, counters, in, in_off, n, reverse, win_flag, win_val, stage, scratch,
                            &look_p, &look_hi, &look_acc, &look_state, &look_spins);
    if (lid == 0) ps_status_write(status, PS_ENTRY_INCLUSIVE(tile), PS_FLAG_INCLUSIVE, ps_combine(carry, aggregate));
    /* both entries are visible before this tile's output overwrites its input (see Fallback above) */
    if (lid == 0) mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);

    /* ---- scan the tile from its carry and store ---- */
    ps_thread_scan(items, ps_combine(carry, prefix), exclusive);
    ps_tile_store(out, out_off, n, reverse, base, stage, items);
}
