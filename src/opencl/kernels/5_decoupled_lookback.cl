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
 * Look-back, a window round and then, only if needed, a walk. Work-item i < W (PS_LOOKBACK_WINDOW) reads the I and
 * A entries of predecessor tile - 1 - i, each alone and with no barrier in its loop, until one is valid; one
 * barrier; work-item 0 takes the nearest I among them (or init below tile 0) and folds the aggregates of the
 * nearer predecessors onto it, oldest first, from local memory. When the window holds no I, work-item 0 walks on
 * alone past it (reading each predecessor's I and A together, keeping the last W aggregates it passed and
 * re-reading older ones from their entries) and the window's aggregates are folded onto what it found. Why the
 * round: the left fold makes the chain serial, one combine a tile, so what bounds the scan is the time a tile
 * takes per predecessor it folds; a walk by one work-item spends a round trip on each (NVIDIA H200, 2^28 i32:
 * 0.047 of copy, where the 32-work-item window it replaced made 0.21), while the round pays one round trip for W
 * and then a local read and a combine for each. Why no barrier in a loop: PoCL's work-group function generation
 * (it splits the kernel at barriers and loops over the work-items of each region) pays most for barriers in
 * loops with a data-dependent trip count: see Compile time below.
 * Fallback: OpenCL promises nothing about a work-group that waits for another one (a CPU runtime or a GPU that
 * time-slices may not run the one waited for). A work-group that sees no progress for PS_DLB_SPIN_LIMIT rounds (reads
 * of the nearest unfinished predecessor) reduces the stalled predecessor q from the input with the same
 * ps_tile_aggregate, so the bits are those q would publish, and publishes A(q) on its behalf, unless q has published
 * A(q) or I(q) by the time the reduction is done: a tile writes its output only after publishing both, so even an
 * in-place scan cannot have overwritten the input the fallback read. Two writers of A(q) write the same bits, so the
 * entry stays valid.
 * Cost of the fixed order against the classic look-back: the same walk (it still stops at the nearest finished
 * I) and the same number of combines, run forward instead of backward; a second status entry per tile (8 or
 * 16 bytes); when a walk passed more than W aggregates, one more status read for each one past the W
 * nearest the base (they are re-read, not kept). No extra pass over the data; integer results are the same as
 * before (any order gives them).
 * Status entries: entry 2k holds A(k), entry 2k + 1 holds I(k), each written by value only once (A(k) maybe
 * twice with equal bits). Flag and value share one 64-bit word for types of up to 4 bytes ((flag << 32) |
 * bits, no value bit stolen); 8-byte types use two words, each with the flag and 32 bits of the value, valid
 * only when both flags agree. Single 64-bit stores and loads need no fence between a value and its flag.
 * Work and depth: O(n) combines; the look-back adds O(1) status reads per tile when work-groups progress.
 * Memory passes: read n, write n: about 2n, plus 16 or 32 bytes of status per tile.
 * Limits: fewer than 2^32 tiles (n < 2^32 * PS_TILE).
 * Compile time (PoCL builds this kernel's work-group function for every (type, operator) program, twice: its
 * "smallgrid" variant too; most of an OpenCL CI run's time): PoCL 3.1 (LLVM 15), pthread device, Xeon
 * (skylake-avx512), 2 cores, empty kernel cache, one local size. The look-back with the window read by 32
 * work-items (barriers in every branch of its loop): 630 ms (i32 sum) and 780 ms (f64 sum), of which work-group
 * function generation 350 and 440 ms. The fifty-second session's walk by work-item 0 alone (no barrier in its
 * loop): 450 and 450 ms (generation 240 and 245 ms). Controls (i32): that walk without the fallback's
 * ps_tile_aggregate, whose barriers are the only ones left in a loop, 340 ms; ps_lookback replaced by a
 * barrier-free stand-in, 300 ms. ctest with an empty PoCL cache, same machine: scan.opencl.decoupled-lookback
 * 120 -> 86 s, widen.opencl.decoupled-lookback 17 -> 11 s, fallback.opencl.decoupled-lookback 9.1 -> 5.6 s.
 * This window round (no barrier in a loop either) with 32 items: scan.opencl.decoupled-lookback 73 s (the
 * 32-work-item window at 16 items: 107 s), fallback 10 s.
 * Measured (before issue 9's fixed order): NVIDIA H100 80GB HBM3 through NVIDIA's OpenCL driver, i32 sum,
 *   n = 2^28, median of 10 (pscan bench): 1245 us, 1725 GB/s, 0.584 of copy (copy 2955 GB/s). Not profiled;
 *   likely limits: the work-group scan (Kogge-Stone in local memory: OpenCL 1.2 has no sub-group shuffles),
 *   the staging of every tile through local memory, 4-byte loads. The stalled-tile test there took 1 to 5
 *   fallbacks per scan and passed.
 * Measured with the fixed order (NVIDIA H200, driver 580.159.04, pscan bench, median of 25, two rounds
 *   interleaved, scripts/opencl-ab.sh; docs/performance.md fifty-third and fifty-fourth sections), fraction of
 *   copy at 2^28, i32 / i64 sum: the 32-work-item window read with barriers in its loop 0.21 / 0.20; a walk by
 *   work-item 0 alone 0.047 / 0.037 (a round trip per predecessor); this window round, W = 64, 0.35 / 0.31
 *   (0.33 / 0.28 with one load per combine in the fold, 0.31 / 0.27 with W = 128); with 32 items per work-item
 *   (16 for i64, PS_CL_ITEMS) 0.37 / 0.52: half the tiles halve i64's chain, but i32's 32 items held in registers
 *   across the look-back took 172 registers, one work-group an SM; restaged (PS_DLB_RESTAGE below) 128, two an
 *   SM, and 0.53 of copy at 2^28 (fifty-fifth section). From 2^21 i32 (2^20 i64) it stays below reduce-then-scan
 *   (0.66 / 0.62 at 2^28), so AUTO takes it only for calls of up to 128 tiles, where it makes 0.60 of copy
 *   against 0.44-0.50 (opencl_backend.c). The whole OpenCL suite passed on that driver (ctest -L opencl, 23
 *   tests, with 16 and with 32 items, and restaged; this file's test_scan 29081 cases, 27-28 s with a warm kernel
 *   cache, 100-135 s cold: NVIDIA's compiler builds each (type, operator) program on its first call).
 */

#define PS_FLAG_INVALID 0u
#define PS_FLAG_AGGREGATE 1u
#define PS_FLAG_INCLUSIVE 2u

/* The window round's work-items and the aggregates a walk keeps: the host passes its default, 64 (tests set fewer, see
 * ps_opencl_debug_set_lookback_window). */
#ifndef PS_DLB_WINDOW
#define PS_DLB_WINDOW 64
#endif
#define PS_LOOKBACK_WINDOW (PS_WG < PS_DLB_WINDOW ? PS_WG : PS_DLB_WINDOW)

/* Restage: 1 lets the items go from registers once the tile's aggregate is known and reads them back from the stage
 * (which still holds the tile; or from the input again, where a fallback used the stage) after the look-back, so
 * that registers held across the look-back do not decide how many work-groups an SM runs. NVIDIA H200, its OpenCL
 * driver (tune_opencl_build -cl-nv-verbose, pscan bench; docs/performance.md fifty-fifth section): i32 at 32 items
 * 172 -> 128 registers, one work-group of 256 an SM -> two, 0.37 -> 0.52 of copy at 2^28 (0.46 -> 0.53 at
 * 2^23); i64 at 16 items 128 (24 bytes spilled) -> 106, two an SM either way, 0.52 -> 0.50: the extra local
 * reads with no occupancy to gain. So on for types of up to 4 bytes. */
#ifndef PS_DLB_RESTAGE
#define PS_DLB_RESTAGE (PS_T_BYTES <= 4)
#endif

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

/* Work-item 0 alone: walks back from predecessor *p to the nearest finished I(j) (or past tile 0: init), keeping
 * the last PS_LOOKBACK_WINDOW aggregates it passes in kept[] (indexed by tile mod the window), then folds
 * A(j + 1) .. A(tile - 1) onto that base in order, re-reading those it no longer keeps. Returns -1 with
 * *carry = C(tile - 1), or, after PS_DLB_SPIN_LIMIT reads without progress, the stalled predecessor (*p stays
 * there, so the walk resumes at it after the fallback). */
PS_FN long ps_lookback_walk(ulong tile, T init, volatile __global ulong *status, __local T *kept, long *p,
                            __local T *carry) {
    const long W = PS_LOOKBACK_WINDOW;
    long q = *p;
    uint spins = 0;
    T acc = init;
    while (q >= 0) {
        T vi, va;
        uint fi = ps_status_read(status, PS_ENTRY_INCLUSIVE(q), &vi); /* both at once: one round trip, not two */
        uint fa = ps_status_read(status, PS_ENTRY_AGGREGATE(q), &va);
        if (fi == PS_FLAG_INCLUSIVE) {
            acc = vi;
            break;
        }
        if (fa == PS_FLAG_AGGREGATE) {
            kept[q % W] = va;
            q--;
            spins = 0;
        } else if (++spins >= PS_DLB_SPIN_LIMIT) {
            *p = q;
            return q;
        }
    }
    *p = q;
    /* q + 1 .. q + W were the last W passed, so kept[] still holds them */
    for (long j = q + 1; j < (long)tile; j++) {
        T v;
        if (j <= q + W)
            v = kept[j % W];
        else
            while (ps_status_read(status, PS_ENTRY_AGGREGATE(j), &v) != PS_FLAG_AGGREGATE) {
            } /* seen valid during the walk: write-once, so this only waits out a stale read */
        acc = ps_combine(acc, v);
    }
    *carry = acc;
    return -1;
}

/* acc (+) v[hi] (+) v[hi - 1] (+) ... (+) v[0], left to right. Eight loads are issued before their combines: only
 * the chain of combines must be serial, and a local read's latency is several combines (PS_DLB_FOLD_UNROLL 0: one
 * load, one combine). */
#ifndef PS_DLB_FOLD_UNROLL
#define PS_DLB_FOLD_UNROLL 1
#endif
PS_FN T ps_fold_down(T acc, __local const T *v, long hi) {
    long i = hi;
#if PS_DLB_FOLD_UNROLL
    for (; i >= 7; i -= 8) {
        T v0 = v[i], v1 = v[i - 1], v2 = v[i - 2], v3 = v[i - 3];
        T v4 = v[i - 4], v5 = v[i - 5], v6 = v[i - 6], v7 = v[i - 7];
        acc = ps_combine(ps_combine(ps_combine(ps_combine(acc, v0), v1), v2), v3);
        acc = ps_combine(ps_combine(ps_combine(ps_combine(acc, v4), v5), v6), v7);
    }
#endif
    for (; i >= 0; i--) acc = ps_combine(acc, v[i]);
    return acc;
}

/* What a work-item of the window round found for its predecessor. */
#define PS_WIN_AGGREGATE 0 /* A(q) valid, I(q) not */
#define PS_WIN_INCLUSIVE 1 /* I(q) valid: a base */
#define PS_WIN_BELOW 2     /* q < 0: init is the base */
#define PS_WIN_STALLED 3   /* nothing valid after PS_DLB_SPIN_LIMIT reads */

/* C(tile - 1) = init (+) A(0) (+) ... (+) A(tile - 1), folded left, for every work-item (see the header).
 * Window round: work-item i < W reads predecessor tile - 1 - i, alone and without a barrier, until it holds A or I
 * (or gives up); one barrier; work-item 0 takes the nearest I (or init) at m, with every predecessor nearer than m
 * an A, and folds win_val[m - 1] .. win_val[0] onto it, oldest first. When the window holds no base (the I nearest
 * is more than W back, or a predecessor stalled), work-item 0 walks on alone from tile - 1 - m (ps_lookback_walk)
 * for C(tile - 1 - m) and folds the window's aggregates onto that; only a walk that stopped at a stalled
 * predecessor brings the group round again, through the fallback, which needs every work-item. */
PS_FN T ps_lookback(ulong tile, T init, volatile __global ulong *status, __global uint *counters,
                     __global const IN *in, ulong in_off, ulong n, int reverse, __local T *kept, __local T *win_val,
                     __local uint *win_kind, __local T *stage, __local T *scratch, __local long *look_stalled,
                     __local T *look_carry, int *fell_back) {
    const long W = PS_LOOKBACK_WINDOW;
    uint lid = get_local_id(0);
    if (lid < W) {
        long q = (long)tile - 1 - (long)lid;
        uint kind = PS_WIN_BELOW;
        if (q >= 0)
            for (uint spins = 0;;) {
                T vi, va;
                uint fi = ps_status_read(status, PS_ENTRY_INCLUSIVE(q), &vi); /* both at once: one round trip */
                uint fa = ps_status_read(status, PS_ENTRY_AGGREGATE(q), &va);
                if (fi == PS_FLAG_INCLUSIVE || fa == PS_FLAG_AGGREGATE) {
                    kind = fi == PS_FLAG_INCLUSIVE ? PS_WIN_INCLUSIVE : PS_WIN_AGGREGATE;
                    win_val[lid] = fi == PS_FLAG_INCLUSIVE ? vi : va;
                    break;
                }
                if (++spins >= PS_DLB_SPIN_LIMIT) {
                    kind = PS_WIN_STALLED;
                    break;
                }
            }
        win_kind[lid] = kind;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    long m = 0, p = 0; /* work-item 0's: the window's base index, and its walk kept across fallbacks */
    int walk = 0;
    if (lid == 0) {
        while (m < W && win_kind[m] == PS_WIN_AGGREGATE) m++;
        walk = m == W || win_kind[m] == PS_WIN_STALLED;
        p = (long)tile - 1 - m;
    }
    for (;;) {
        if (lid == 0) {
            long stalled = -1;
            T acc = init;
            if (!walk)
                acc = win_kind[m] == PS_WIN_INCLUSIVE ? win_val[m] : init;
            else if ((stalled = ps_lookback_walk((ulong)(tile - m), init, status, kept, &p, look_carry)) < 0)
                acc = *look_carry;
            if (stalled < 0) {
                acc = ps_fold_down(acc, win_val, m - 1);
                *look_carry = acc;
            }
            *look_stalled = stalled;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        long q = *look_stalled;
        if (q < 0) return *look_carry;

        /* ---- fallback: the stalled predecessor q has published nothing; reduce it from its input ---- */
        *fell_back = 1; /* the stage no longer holds this work-group's own tile */
        T r = ps_tile_aggregate(in, in_off, n, reverse, (ulong)q * PS_TILE, stage, scratch);
        if (lid == 0) {
            mem_fence(CLK_GLOBAL_MEM_FENCE);
            T v;
            if (ps_status_read(status, PS_ENTRY_AGGREGATE(q), &v) != PS_FLAG_AGGREGATE &&
                ps_status_read(status, PS_ENTRY_INCLUSIVE(q), &v) != PS_FLAG_INCLUSIVE) {
                ps_status_write(status, PS_ENTRY_AGGREGATE(q), PS_FLAG_AGGREGATE, r);
                atomic_inc(&counters[1]);
            } /* else q published meanwhile (the same bits, or its I): the walk reads it */
        }
        /* every work-item read *look_stalled before ps_tile_aggregate's barriers: work-item 0 may overwrite it */
    }
}

/* temp: counters[0] the next tile id, counters[1] the fallbacks taken (read by tests), then from byte 8 two
 * status entries per tile; the host passes the same zeroed buffer as both arguments. */
__kernel __attribute__((reqd_work_group_size(PS_WG, 1, 1))) void
ps_decoupled_lookback_scan(__global const IN *in, ulong in_off, __global T *out, ulong out_off, ulong n,
                           int reverse, int exclusive, T init, __global uint *counters, __global ulong *temp) {
    __local T stage[PS_STAGE_ELEMS];
    __local T scratch[PS_WG];
    __local T kept[PS_LOOKBACK_WINDOW];
    __local T win_val[PS_LOOKBACK_WINDOW];
    __local uint win_kind[PS_LOOKBACK_WINDOW];
    __local uint tile_id;
    __local long look_stalled;
    __local T look_carry;
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
    int fell_back = 0;
    if (tile > 0)
        carry = ps_lookback(tile, init, status, counters, in, in_off, n, reverse, kept, win_val, win_kind, stage,
                            scratch, &look_stalled, &look_carry, &fell_back);
    if (lid == 0) ps_status_write(status, PS_ENTRY_INCLUSIVE(tile), PS_FLAG_INCLUSIVE, ps_combine(carry, aggregate));
    /* both entries are visible before this tile's output overwrites its input (see Fallback above) */
    if (lid == 0) mem_fence(CLK_GLOBAL_MEM_FENCE);
    barrier(CLK_GLOBAL_MEM_FENCE);

    /* ---- scan the tile from its carry and store ---- */
#if PS_DLB_RESTAGE
    if (fell_back)
        ps_tile_load(in, in_off, n, reverse, base, stage, items);
    else
        for (uint k = 0; k < PS_ITEMS; k++) items[k] = stage[PS_PAD(lid * PS_ITEMS + k)];
#endif
    ps_thread_scan(items, ps_combine(carry, prefix), exclusive);
    ps_tile_store(out, out_off, n, reverse, base, stage, items);
}
