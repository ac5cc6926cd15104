/*
 * 5_decoupled_lookback.cu - algorithm 5: single-pass chained scan with decoupled look-back
 * (Merrill and Garland, "Single-pass Parallel Prefix Scan with Decoupled Look-back", NVIDIA NVR-2016-002).
 *
 * Idea. One kernel. Each block scans one tile and needs only the combined value of every tile before it (its
 * carry-in). Instead of a second pass, each tile publishes its status as soon as it knows it: first its
 * AGGREGATE (the reduction of its own elements, known right after its load), later its INCLUSIVE prefix
 * (everything up to and including it). A tile finds its carry-in by looking back over its predecessors,
 * combining aggregates until it meets an inclusive prefix; it never waits for a predecessor's look-back to
 * finish, only for its load, so the chain of dependencies moves at the speed of the loads.
 *
 * Work O(n), depth O(log tile + look-back distance). Global memory: n reads + n writes (the copy floor), plus
 * 16 bytes of status per tile of 16 KiB (0.1%) and one atomic ticket per tile.
 *
 * Tile. 256 threads (8 warps) x 4 16-byte vectors each = 16 KiB: 4096 4-byte or 2048 8-byte elements (2
 * vectors, 8 KiB, for 1- and 2-byte types). Warp w owns a contiguous part of the tile; its lanes load vector k
 * of the warp's chunk as one coalesced 512-byte access (warp-striped, no shared-memory transpose). Per thread:
 * a serial scan inside each vector; per warp: a shuffle scan of the 32 vector totals for each k, carried across
 * k; per block: a scan of 8 warp totals.
 * 16-byte loads and stores when both pointers are 16-byte aligned, element-wise otherwise and in the one
 * partial tile (the same body; the operator's identity pads it).
 *
 * Design points, and why:
 *  - Tile ids come from an atomic ticket in launch order, not blockIdx: a block only ever waits for tiles
 *    whose blocks already took a ticket, i.e. are running, so no dispatch order can deadlock it.
 *  - One launch per call, no initialisation kernel. The status words of a call are tagged with a 60-bit
 *    per-call epoch E from a process-wide counter that starts at a random 64-bit value; a status is accepted
 *    only if its tag equals this call's E exactly. Stale words from earlier calls carry other epochs and can
 *    never match; arbitrary garbage (fresh cudaMalloc memory, another algorithm's scratch in a shared
 *    workspace) would have to reproduce 64 bits of tag (60 epoch bits + a 2-bit status in each half).
 *    The ticket counter is one 64-bit word {tag32(E), count32}: a block whose atomicAdd returns a word that
 *    is not tagged with this call's tag arms it with a compare-and-swap to {tag32(E), 1} and takes id 0
 *    (blocks that lose the race take a ticket from the armed word; none adds twice to a foreign word, so
 *    arming cannot livelock); the block that takes the last id pre-arms the word for epoch E+1, so
 *    back-to-back calls on one temp buffer skip the compare-and-swap. The ticket trusts 32 bits (a garbage
 *    word matching tag32(E) has probability 2^-32, and only on the first call after a foreign write to the
 *    temp buffer; a status, 2^-64). No state needs to survive between calls for correctness, so caller temp
 *    buffers may be fresh, reused by other algorithms, or moved.
 *  - Status and value in one self-tagged entry, never bits stolen from the value: each entry is two 64-bit
 *    words {tag_lo | value bits 0..31} {tag_hi | value bits 32..63}, each tag carrying the status. Each word
 *    is written and read as one single-copy-atomic 64-bit access, so a torn read (one half from the AGGREGATE
 *    write, one from the INCLUSIVE write) shows two different statuses and is simply re-read. The full range
 *    of every 1..8-byte type is preserved. Only the entries themselves carry data between blocks, so relaxed
 *    gpu-scope loads and stores suffice: no fences.
 *  - Warp-wide look-back: lane i reads predecessor (tile - 32 + i); the nearest INCLUSIVE lane ends the walk
 *    unless a not-yet-published tile lies between it and us (then the window is re-read); otherwise the 32
 *    aggregates are combined and the window moves back by 32.
 *  - Reverse scans run the same body in logical order: physical tile p = tiles-1-id, and inside the tile
 *    lanes, vectors and elements are mirrored, so accesses stay 16-byte vectors and coalesced (the partial
 *    tile is the first in chain order). In place is safe: each tile reads all of its own input before it
 *    writes, and reads no other tile's data.
 *
 * Limits: up to 2^31 - 1 tiles (the grid size; n < 2^43 for 4-byte types). Exclusive scans, the initial value
 * (the carry into the first tile) and alignment are runtime arguments; reverse is a template argument so that
 * register arrays are indexed by constants only.
 *
 * Measured (NVIDIA H100 80GB HBM3, CUDA 13.0, CUB 3.0.1, pscan bench, same run, 2026-11-21; docs/performance.md):
 * 2^28 i32 sum 882 us = 2434 GB/s, 0.81 of copy, 0.99x CUB; 2^28 i64 sum 0.71 of copy, 0.79x CUB; n <= 2^16 a
 * call costs 0.9-1.15x a copy call (CUB: 2.2x); min/max/product, exclusive and reverse within 1% of the sum.
 * The large-n gap: the tile rate (65-74 tiles/us, 16 KiB tiles) is capped near 32 tiles per look-back round
 * trip, and i64 runs 4 blocks/SM (58 registers) against i32's 6; see docs/performance.md for the next steps.
 */
#include <stdint.h>
#include <string.h>

#include <atomic>
#include <chrono>

#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"
#include "warp_scan.cuh"

#define DLB_THREADS 256
#define DLB_WARPS (DLB_THREADS / PS_WARP_THREADS)
/* 16-byte vectors per thread: 4 (64 bytes) for 4- and 8-byte types; 2 for 1- and 2-byte types, whose
 * 32 or 16 elements per vector already give each thread a long serial scan (and registers run out). */
#define DLB_VECS_OF(bytes) ((bytes) >= 4 ? 4 : 2)

/* Tile status, in the low 2 bits of each tag. 0 and 3 never validate, so zeroed or all-ones memory is
 * INVALID whatever the epoch. */
#define DLB_INVALID 0u
#define DLB_AGGREGATE 1u
#define DLB_INCLUSIVE 2u

template <class T> struct dlb_shape {
    enum {
        VEC = 16 / sizeof(T),                  /* elements per 16-byte vector */
        VECS = DLB_VECS_OF(sizeof(T)),         /* vectors per thread */
        ITEMS = VEC * VECS,                    /* elements per thread */
        TILE = ITEMS * DLB_THREADS,            /* elements per tile */
        TILE_VECS = VECS * DLB_THREADS         /* vectors per tile */
    };
};

static inline uint64_t dlb_tile_items(size_t elem_bytes) {
    return (uint64_t)DLB_THREADS * DLB_VECS_OF(elem_bytes) * 16 / elem_bytes;
}

template <class T> struct dlb_params {
    const T *in;
    T *out;
    uint64_t n;
    uint32_t tiles;
    int exclusive;
    int aligned; /* in and out both 16-byte aligned: vector accesses allowed */
    T init;
    unsigned long long *ticket; /* {tag32, count32}; NULL when tiles == 1 */
    ulonglong2 *status;         /* one self-tagged entry per tile */
    uint32_t tag_lo, tag_hi;    /* epoch bits, shifted left by 2: tag = base | status */
    uint32_t ticket_tag, next_ticket_tag;
};

/* ---- tile status --------------------------------------------------------------------------------------- */

template <class T> __device__ __forceinline__ unsigned long long dlb_bits(T v) {
    unsigned long long b = 0;
    memcpy(&b, &v, sizeof(T));
    return b;
}
template <class T> __device__ __forceinline__ T dlb_from_bits(unsigned long long b) {
    T v;
    memcpy(&v, &b, sizeof(T));
    return v;
}

template <class T>
__device__ __forceinline__ void dlb_publish(const dlb_params<T> &p, uint32_t tile, unsigned status, T value) {
    const unsigned long long b = dlb_bits(value);
    const unsigned long long w0 = ((unsigned long long)(p.tag_lo | status) << 32) | (b & 0xffffffffull);
    const unsigned long long w1 = ((unsigned long long)(p.tag_hi | status) << 32) | (b >> 32);
    asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(p.status + tile), "l"(w0), "l"(w1)
                 : "memory");
}

/* Reads tile's entry; returns its status (INVALID unless both halves carry this call's tag and agree). */
template <class T>
__device__ __forceinline__ unsigned dlb_read(const dlb_params<T> &p, uint32_t tile, T *value) {
    unsigned long long w0, w1;
    asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(p.status + tile)
                 : "memory");
    const uint32_t t0 = (uint32_t)(w0 >> 32), t1 = (uint32_t)(w1 >> 32), st = t0 & 3u;
    const bool ok = (st == DLB_AGGREGATE || st == DLB_INCLUSIVE) && t0 == (p.tag_lo | st) && t1 == (p.tag_hi | st);
    *value = dlb_from_bits<T>((w0 & 0xffffffffull) | (w1 << 32));
    return ok ? st : DLB_INVALID;
}

/* The next tile id in launch order (see the header for the arming protocol). Called by one thread per block.
 * A block adds to the word once; if that add met a word not armed for this call, it only ever compare-and-
 * swaps afterwards (never adds again), so the adds that can spoil a compare-and-swap are bounded by the number
 * of blocks and arming cannot livelock, however many blocks arrive together. */
template <class T> __device__ __forceinline__ uint32_t dlb_take_ticket(const dlb_params<T> &p) {
    const unsigned long long armed = (unsigned long long)p.ticket_tag << 32;
    const unsigned long long seen = atomicAdd(p.ticket, 1ull);
    uint32_t id;
    if ((uint32_t)(seen >> 32) == p.ticket_tag) {
        id = (uint32_t)seen;
    } else {
        unsigned long long expect = seen + 1;
        for (;;) {
            const unsigned long long prev = atomicCAS(p.ticket, expect, armed | 1ull);
            if (prev == expect) { /* we armed it: id 0, the count is 1 */
                id = 0;
                break;
            }
            if ((uint32_t)(prev >> 32) == p.ticket_tag) { /* another block armed it */
                id = (uint32_t)atomicAdd(p.ticket, 1ull);
                break;
            }
            expect = prev;
        }
    }
    /* every block of this call now holds its ticket: nobody else touches the word before the next call */
    if (id == p.tiles - 1) atomicExch(p.ticket, (unsigned long long)p.next_ticket_tag << 32);
    return id;
}

/* ---- warp-level look-back ------------------------------------------------------------------------------ */

/* Run by one whole warp of tile id > 0: returns the combination of every tile before id (with init). */
template <class T, class Op> __device__ __forceinline__ T dlb_look_back(const dlb_params<T> &p, uint32_t id) {
    const unsigned lane = threadIdx.x % PS_WARP_THREADS;
    const T e = Op::template identity<T>();
    T suffix = e;                  /* combination of the windows already passed (they follow the current one) */
    int64_t top = (int64_t)id - 1; /* the predecessor read by lane 31 */
    for (;;) {
        const int64_t j = top - (PS_WARP_THREADS - 1) + lane;
        T v = e;
        unsigned st = DLB_INCLUSIVE; /* before tile 0: an inclusive identity */
        if (j >= 0) st = dlb_read(p, (uint32_t)j, &v);
        const unsigned inc = __ballot_sync(PS_WARP_FULL_MASK, st == DLB_INCLUSIVE);
        const unsigned inv = __ballot_sync(PS_WARP_FULL_MASK, st == DLB_INVALID);
        const int near_inc = inc ? 31 - __clz(inc) : -1;
        const int near_inv = inv ? 31 - __clz(inv) : -1;
        if (near_inv > near_inc) continue; /* a tile between us and the nearest inclusive has not published */
        if ((int)lane < near_inc) v = e;
        T w = ps_warp_scan_inclusive<Op>(v, lane);
        w = ps_warp_shfl(w, PS_WARP_THREADS - 1);
        suffix = Op::combine(w, suffix);
        if (near_inc >= 0) return suffix;
        top -= PS_WARP_THREADS;
    }
}

/* ---- the kernel ---------------------------------------------------------------------------------------- */

/* Logical slot (k, e) of this thread <-> physical vector pv of the tile and element pe inside it. */
template <class T, bool Reverse>
__device__ __forceinline__ uint32_t dlb_vector_of(unsigned warp, unsigned lane, int k) {
    typedef dlb_shape<T> S;
    const uint32_t fv = (warp * S::VECS + k) * PS_WARP_THREADS + lane;
    return Reverse ? S::TILE_VECS - 1 - fv : fv;
}

template <class T, class Op, bool Reverse>
__global__ void __launch_bounds__(DLB_THREADS) dlb_kernel(const dlb_params<T> p) {
    typedef dlb_shape<T> S;
    __shared__ T warp_totals[DLB_WARPS];
    __shared__ T carry_in;
    __shared__ uint32_t tile_id;
    const unsigned lane = threadIdx.x % PS_WARP_THREADS, warp = threadIdx.x / PS_WARP_THREADS;
    const T e = Op::template identity<T>();

    /* ---- ticket: tile ids in launch order ---- */
    uint32_t id = 0;
    if (p.tiles > 1) {
        if (threadIdx.x == 0) tile_id = dlb_take_ticket(p);
        __syncthreads();
        id = tile_id;
        if (id >= p.tiles) return; /* cannot happen with a sound ticket word; never touch memory out of range */
    }
    const uint32_t ptile = Reverse ? p.tiles - 1 - id : id;
    const uint64_t base = (uint64_t)ptile * S::TILE;
    const uint64_t left = p.n - base;
    const uint32_t valid = left < (uint64_t)S::TILE ? (uint32_t)left : (uint32_t)S::TILE;

    /* ---- load: 16-byte vectors where whole and aligned, elements otherwise ---- */
    T x[S::VECS][S::VEC];
#pragma unroll
    for (int k = 0; k < S::VECS; k++) {
        const uint32_t pv = dlb_vector_of<T, Reverse>(warp, lane, k);
        if (p.aligned && (pv + 1) * S::VEC <= valid) {
            const uint4 raw = reinterpret_cast<const uint4 *>(p.in + base)[pv];
            T t[S::VEC];
            memcpy(t, &raw, sizeof raw);
#pragma unroll
            for (int i = 0; i < S::VEC; i++) x[k][i] = t[Reverse ? S::VEC - 1 - i : i];
        } else {
#pragma unroll
            for (int i = 0; i < S::VEC; i++) {
                const uint32_t o = pv * S::VEC + (Reverse ? S::VEC - 1 - i : i);
                x[k][i] = o < valid ? p.in[base + o] : e;
            }
        }
    }

    /* ---- reduce: vector totals, their warp scans carried across k, warp totals ---- */
    T vector_prefix[S::VECS]; /* everything in this warp's chunk before vector k of this lane */
    T running = e;
#pragma unroll
    for (int k = 0; k < S::VECS; k++) {
        T s = x[k][0];
#pragma unroll
        for (int i = 1; i < S::VEC; i++) s = Op::combine(s, x[k][i]);
        const T inclusive = ps_warp_scan_inclusive<Op>(s, lane);
        T before = ps_warp_shfl_up(inclusive, 1);
        if (lane == 0) before = e;
        vector_prefix[k] = Op::combine(running, before);
        running = Op::combine(running, ps_warp_shfl(inclusive, PS_WARP_THREADS - 1));
    }
    if (lane == 0) warp_totals[warp] = running;
    __syncthreads();
    T warp_prefix = e, aggregate = e;
#pragma unroll
    for (int w = 0; w < DLB_WARPS; w++) {
        if (w == (int)warp) warp_prefix = aggregate;
        aggregate = Op::combine(aggregate, warp_totals[w]);
    }

    /* ---- look-back: warp 0 publishes and finds the carry-in ---- */
    if (warp == 0) {
        T carry = p.init;
        const bool read_later = id + 1 < p.tiles; /* the last tile's status is never read */
        if (id == 0) {
            if (lane == 0 && read_later) dlb_publish(p, 0, DLB_INCLUSIVE, Op::combine(p.init, aggregate));
        } else {
            if (lane == 0 && read_later) dlb_publish(p, id, DLB_AGGREGATE, aggregate);
            carry = dlb_look_back<T, Op>(p, id);
            if (lane == 0 && read_later) dlb_publish(p, id, DLB_INCLUSIVE, Op::combine(carry, aggregate));
        }
        if (lane == 0) carry_in = carry;
    }
    __syncthreads();

    /* ---- down-sweep and store ---- */
    const T thread_base = Op::combine(carry_in, warp_prefix);
#pragma unroll
    for (int k = 0; k < S::VECS; k++) {
        T r = Op::combine(thread_base, vector_prefix[k]);
        T y[S::VEC];
#pragma unroll
        for (int i = 0; i < S::VEC; i++) {
            const T next = Op::combine(r, x[k][i]);
            y[i] = p.exclusive ? r : next;
            r = next;
        }
        const uint32_t pv = dlb_vector_of<T, Reverse>(warp, lane, k);
        if (p.aligned && (pv + 1) * S::VEC <= valid) {
            T t[S::VEC];
#pragma unroll
            for (int i = 0; i < S::VEC; i++) t[Reverse ? S::VEC - 1 - i : i] = y[i];
            uint4 raw;
            memcpy(&raw, t, sizeof raw);
            reinterpret_cast<uint4 *>(p.out + base)[pv] = raw;
        } else {
#pragma unroll
            for (int i = 0; i < S::VEC; i++) {
                const uint32_t o = pv * S::VEC + (Reverse ? S::VEC - 1 - i : i);
                if (o < valid) p.out[base + o] = y[i];
            }
        }
    }
}

/* ---- host side ----------------------------------------------------------------------------------------- */

static unsigned long long dlb_mix(unsigned long long z) {
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

/* A fresh epoch per launch: unique within the process, randomly placed across processes. */
static unsigned long long dlb_next_epoch(void) {
    static std::atomic<unsigned long long> counter(
        dlb_mix((unsigned long long)std::chrono::high_resolution_clock::now().time_since_epoch().count() ^
                (unsigned long long)(uintptr_t)&counter));
    return counter.fetch_add(1, std::memory_order_relaxed);
}

/* The ticket word's tag for an epoch. Its low two bits are 3, a status no entry ever carries, so a ticket word
 * and a status word can never be taken for one another (were the temp buffer's base to move between calls);
 * never zero, and never all ones (0xff-filled memory). Distinct for 2^30 consecutive epochs. */
static uint32_t dlb_ticket_tag(unsigned long long epoch) {
    const uint32_t t = (uint32_t)(epoch << 2) | 3u;
    return t == 0xffffffffu ? 0x5ca11ed3u : t;
}

static size_t dlb_temp_bytes(const ps_scan_call *call, const ps_cuda_device *dev) {
    (void)dev;
    const uint64_t tiles = ps_cuda_div_up(call->n, dlb_tile_items(call->elem_bytes));
    /* 16 bytes of slack to align, the ticket word (padded to 16), one 16-byte entry per tile */
    return tiles > 1 ? (size_t)(32 + 16 * tiles) : 0;
}

template <class T, class Op> struct dlb_scan {
    static cudaError_t run(const ps_scan_call *call, const ps_cuda_device *dev) {
        typedef dlb_shape<T> S;
        const uint64_t tiles = ps_cuda_div_up(call->n, (uint64_t)S::TILE);
        if (tiles > 0xfffffffeull || tiles > 0x7fffffffull) return cudaErrorInvalidValue;
        dlb_params<T> p;
        memset(&p, 0, sizeof p);
        p.in = (const T *)call->in;
        p.out = (T *)call->out;
        p.n = call->n;
        p.tiles = (uint32_t)tiles;
        p.exclusive = call->exclusive;
        p.aligned = (((uintptr_t)call->in | (uintptr_t)call->out) & 15u) == 0;
        memcpy(&p.init, call->init.bytes, sizeof(T));
        if (tiles > 1) {
            const uintptr_t a = ((uintptr_t)call->temp + 15u) & ~(uintptr_t)15u;
            const unsigned long long epoch = dlb_next_epoch();
            p.ticket = (unsigned long long *)a;
            p.status = (ulonglong2 *)(a + 16);
            p.tag_lo = (uint32_t)(epoch & 0x3fffffffull) << 2;
            p.tag_hi = (uint32_t)((epoch >> 30) & 0x3fffffffull) << 2;
            p.ticket_tag = dlb_ticket_tag(epoch);
            p.next_ticket_tag = dlb_ticket_tag(epoch + 1);
        }
        if (call->reverse)
            dlb_kernel<T, Op, true><<<(unsigned)tiles, DLB_THREADS, 0, dev->stream>>>(p);
        else
            dlb_kernel<T, Op, false><<<(unsigned)tiles, DLB_THREADS, 0, dev->stream>>>(p);
        return cudaGetLastError();
    }
};

static cudaError_t dlb_run(const ps_scan_call *call, const ps_cuda_device *dev) {
    return ps_cuda_dispatch<dlb_scan>::run(call, dev);
}

extern const ps_cuda_algorithm ps_cuda_decoupled_lookback = {PSCAN_ALGO_DECOUPLED_LOOKBACK, dlb_temp_bytes,
                                                             dlb_run};
