/*
 * 5_decoupled_lookback.cu - algorithm 5: single-pass chained scan with decoupled look-back, as a tile program
 * on the engine's single-pass chain driver (chain/single_pass.cuh).
 *
 * Idea. One kernel. Each block scans one tile and needs only the combined value of every tile before it (its
 * carry-in). Instead of a second pass, each tile publishes its aggregate (the reduction of its own elements)
 * as soon as it has loaded them, and finds its carry-in by combining its predecessors' published values (the
 * driver's look-back); it never waits for a predecessor's scan, only for its load, so the chain moves at
 * the speed of the loads.
 *
 * Work O(n), depth O(log tile + n / (tile * 64)): the look-back window is 64 tiles. Global memory: n reads + n
 * writes (the copy floor), plus two 16-byte status entries per tile of 32-44 KiB (0.1%).
 *
 * The tile program:
 *  - reduce: 256 threads x VECS 16-byte vectors each (32 KiB for VECS = 8). Warp w owns a contiguous part of
 *    the tile; its lanes load vector k of the warp's chunk as one coalesced 512-byte access (warp-striped),
 *    with cp.async straight into the thread's parking slots in shared memory for full tiles (ASYNC).
 *    Each thread scans inside each vector in registers and parks the scanned vectors in shared memory
 *    (its own slots: no barrier, no bank conflicts), keeping only one prefix per vector in registers: the
 *    data are not live across the look-back, so the kernel fits the register budget of MIN_BLOCKS blocks per
 *    SM and every block keeps its whole tile in flight. Vector totals are scanned across the warp (carried
 *    across k), warp totals across the block: the tile's aggregate.
 *  - consume: each thread reads its parked vectors back, combines prefix (+) warp prefix (+) vector prefix
 *    with each element and stores 16-byte vectors.
 *  - Full, aligned tiles take the vector path; the one partial tile and misaligned calls go element by
 *    element through the same body (identity padding).
 *  - Reverse scans run the same body in logical order: physical tile p = tiles-1-id, and inside the tile
 *    lanes, vectors and elements are mirrored, so accesses stay 16-byte vectors and coalesced. In place is
 *    safe: each tile reads all of its own input before it writes, and reads no other tile's data.
 *
 *  - A carry in device memory (ps_request.init_device, total_out; NULL for pscan_scan): the initial value is
 *    read from device memory when the kernel runs, and the last tile writes init (+) everything, so that the
 *    out-of-core driver (host_scan.cu) and the NCCL scan (nccl_scan.cu) chain pieces without a host round trip.
 *
 * Widening (PSCAN_SCAN_WIDEN: i8/i16/i32 -> i64, u8/u16/u32 -> u64, f32 -> f64; sum and product). The program's
 * last parameter In is the element read, T the carry and output type: the load converts and the rest of the tile
 * program is unchanged, so a widened scan is the 64-bit scan of the same tile (VEC = 2 output elements a vector,
 * tiles sized by the output element). The vector path reads the VEC narrow elements behind one output vector as
 * one aligned load of VEC * sizeof(In) bytes (2-8 bytes a lane: still coalesced, a warp reads 64-256 contiguous
 * bytes) and converts them in registers; the element path converts each element. So "aligned" means in aligned to
 * VEC * sizeof(In) bytes and out to 16. cp.async (ASYNC) copies bytes into the parking slots with no chance to
 * convert them, so widened programs are built with ASYNC off (a static_assert keeps it so) and hold their loads
 * in registers (at 5 blocks/SM the 32 KiB tier then spills 8-16 bytes a thread for sums, more for 64-bit
 * products, as the same program without widening does; the tiers are the 64-bit scan's, not re-tuned for
 * widening on a GPU). Global memory: n * sizeof(In) read + n * 8 written; converting inside the scan instead of a
 * separate widening pass saves writing and reading back n * 8 bytes, and the accumulation is exact where the
 * narrow scan overflows (integers) or rounds (f32).
 *
 * Limits: up to 2^31 - 1 tiles (the grid size).
 *
 * Measured (pscan bench through scripts/gpu-check.sh: L2 flushed, median of 21, CUB 3.0.1 in the same run, CUDA
 * 13.0), inclusive sum at 2^28, fraction of copy / speed against CUB:
 *   NVIDIA H100 80GB HBM3 (2026-11-24, 44 KiB tiles): u8 0.93 / 2.82x, u16 0.96 / 1.65x, i32 0.97 / 1.18x,
 *                          i64 0.96 / 1.07x
 *   NVIDIA H200 (2026-11-28, twentieth session, 52 KiB tiles + 2 held vectors for 2- to 8-byte integers, the
 *                input of the tile 64 ahead prefetched into L2 by the chain driver): u16 0.95 / 2.03x, i32 0.96 /
 *                1.32x, i64 0.96 / 1.18x, f32 0.95; u8 (twenty-first session, 48 KiB, none held) 0.87 / 3.58x, at
 *                2^30 0.92 (median of 25); twenty-fourth session, with the first wave of a large call started
 *                row by row (stagger_row() below): i32 0.97 / 1.32x at 2^28, 0.91 / 1.35x at 2^24 (was 0.88),
 *                i64 0.96 / 1.18x at 2^28, 0.93 at 2^24 (was 0.90), u16 0.96 / 2.06x, u8 0.90 / 3.69x;
 *                twenty-fifth session, the 32 KiB tier staggered too (its wait by its bytes): u8 0.79 / 2.61x at
 *                2^24 (was 0.77), 0.77 at 2^25 (0.74); u16 0.76 at 2^22 (0.72), 0.78 at 2^23 (0.75)
 * and 1.2-1.5x CUB at 2^16. What is left is the look-back's wait: the same program without the chain runs at
 * 0.98 of copy on both (docs/performance.md, 2026-11-24); traced (PS_CHAIN_TRACE), an H200 tile of the large tier
 * loads in 4 us and waits 8 us for the inclusive prefix W tiles back (docs/performance.md, sixteenth session),
 * which the prefetch (prefetch() below) shortens by making every tile's load, and so its aggregate, come sooner.
 * Operators whose large-tier kernels would spill (2-byte min and max, 64-bit integer products) take other large
 * tiles (dlb_heavy below, PS_SCAN_HEAVY_* in scan_tiers.h).
 */
#include <stdint.h>
#include <string.h>

#include "block/packed.cuh"
#include "chain/single_pass.cuh"
#ifndef __CUDACC_RTC__ /* NVRTC compiles the tile program alone, for user operators (user_op.cu) */
#include "block/ops.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"
#include "scan_tiers.h"
#endif

/* The tiles by the call's bytes (vectors per thread, blocks per SM, thresholds): scan_tiers.h. */
/* Full tiles go to shared memory with cp.async: +4-5% on the H200 at 2^28 (0.837 -> 0.876 of copy for i32, same
 * run), where registers alone cannot hold enough bytes in flight. A widening scan loads through registers: copying
 * its 4- or 8-byte input vectors with cp.async.ca into the parking slots and converting them there gained nothing
 * (H200, 2026-11-27, 2^28 into 64 bits: i32 0.822 -> 0.816 of copy, f32 0.823 -> 0.816; removed, the run in
 * docs/bench/h200-widen-async.csv). */
#define PS_SCAN_ASYNC 1

/* The aligned vector of Bytes bytes a widening load reads (the VEC narrow elements behind one output vector). */
template <int Bytes> struct ps_scan_raw;
template <> struct ps_scan_raw<1> { typedef unsigned char type; };
template <> struct ps_scan_raw<2> { typedef unsigned short type; };
template <> struct ps_scan_raw<4> { typedef unsigned type; };
template <> struct ps_scan_raw<8> { typedef uint2 type; };
template <> struct ps_scan_raw<16> { typedef uint4 type; };
template <class A, class B> struct ps_scan_same { enum { value = 0 }; }; /* no <type_traits> under NVRTC */
template <class A> struct ps_scan_same<A, A> { enum { value = 1 }; };

/* Physical vector pv of the tile at base, as the 16 bytes of T the program works on. Widening (In narrower than
 * T): the VEC elements of In behind it, one aligned load of VEC * sizeof(In) bytes, each converted to T. */
template <class T, class In, int VEC> struct ps_scan_load {
    typedef typename ps_scan_raw<VEC * sizeof(In)>::type raw;
    static __device__ __forceinline__ uint4 vector(const In *base, uint32_t pv) {
        const raw r = reinterpret_cast<const raw *>(base)[pv];
        In a[VEC];
        memcpy(a, &r, sizeof a);
        T x[VEC];
#pragma unroll
        for (int i = 0; i < VEC; i++) x[i] = (T)a[i];
        uint4 v;
        memcpy(&v, x, sizeof v);
        return v;
    }
};
template <class T, int VEC> struct ps_scan_load<T, T, VEC> {
    static __device__ __forceinline__ uint4 vector(const T *base, uint32_t pv) {
        return reinterpret_cast<const uint4 *>(base)[pv];
    }
};

/* PS_SCAN_PACKED: 1- and 2-byte integers under min, max, and, or, xor, and 1-byte sums, scanned a 32-bit word at a
 * time inside each thread's vectors (block/packed.cuh), not element by element. H200, 2^28, of copy (eighteenth
 * session, docs/bench/h200-scan-packed-held.csv; tools/tune/variants.sh tools/tune/tune_scan.cu OUT "base="
 * "pk=-DPS_SCAN_PACKED=1" -- --types ops): u16 max at 52 KiB tiles 0.732 -> 0.920 (at 32 KiB, the heavy tier it needed
 * before, 0.836 -> 0.865), u8 max at 32 KiB 0.670 -> 0.771. The sums with __vadd4 lost then (u8 0.858 -> 0.824, u16
 * 0.925 -> 0.923); with the sum's own word scan (block/packed.cuh, twenty-second session) the u8 sum at 48 KiB tiles
 * gains 0.864 -> 0.884 at 2^28 and the u16 sum nothing, so 2-byte sums stay unpacked (PS_PACKED_BYTES_SUM), and
 * 1-byte ones below the large tier too (dlb_launch's PACK).
 * tests/test_packed.cu checks block/packed.cuh on the host and, with a GPU, on the device. */
#ifndef PS_SCAN_PACKED
#define PS_SCAN_PACKED 1
#endif
#ifndef PS_SCAN_PROMOTED_WARP
#define PS_SCAN_PROMOTED_WARP 1
#endif
/* Whether Op declares IDEMPOTENT (the built-in operators: block/ops.cuh) and it is set; user operators' functors
 * (user_op.cu) do not declare it. */
template <class Op, class = void> struct ps_scan_idempotent {
    enum { value = 0 };
};
template <class Op> struct ps_scan_idempotent<Op, typename ps_chain_void<decltype(Op::IDEMPOTENT)>::type> {
    enum { value = Op::IDEMPOTENT != 0 };
};
/* Whether the warp scans T as a promoted int (PS_SCAN_PROMOTED_WARP, below): a 1- or 2-byte integer under an
 * idempotent operator. T is looked at only for a built-in operator, so a user's struct never meets (T)0.5. */
template <class T, bool Idempotent> struct ps_scan_promoted {
    enum { value = 0 };
};
template <class T> struct ps_scan_promoted<T, true> {
    enum { value = PS_SCAN_PROMOTED_WARP && sizeof(T) < 4 && (T)0.5 == (T)0 };
};
template <bool Promoted> struct ps_scan_warp { /* the warp's inclusive scan, with the lane test */
    template <class P, class T> static __device__ __forceinline__ T run(T x, unsigned lane) {
        return ps_warp_inclusive(x, lane, ps_chain_combine<P>());
    }
};
template <> struct ps_scan_warp<true> { /* as ints, without the lane test */
    template <class P, class T> static __device__ __forceinline__ T run(T x, unsigned) {
        return (T)ps_warp_inclusive_idempotent((int)x, typename P::promoted_combine());
    }
};

/* ASYNC: full tiles are copied straight into the parking slots with cp.async (no registers hold data in flight,
 * so the blocks per SM are bounded by shared memory instead: more bytes in flight per SM).
 * BLOCKED (user operators, user_op.cu; the built-in scans leave it off): each thread scans VECS consecutive
 * vectors of its warp's chunk serially and the warp scans one total per thread, instead of one warp scan per
 * vector. The loads and stores stay warp-striped and coalesced; the warp's chunk is transposed through its own
 * parking slots (swizzled: conflict-free both ways). Per element: about 2 + 14 / (VEC VECS) combines against
 * 2 + 8 / VEC + 9 / (VEC VECS), and one warp scan (7 shuffles of sizeof(T) / 4 words) per VEC VECS elements
 * against one per VEC: what a 16-byte element (VEC = 1: 3.75 combines against 11, 3.5 shuffled words against
 * 28), whose combine may be expensive (a 2x2 matrix product: 8 multiply-adds), pays per element otherwise.
 * tools/tune/userop_blocked_model.py models its index maps (run it after changing them).
 * In (PSCAN_SCAN_WIDEN; T otherwise): the element read, narrower than T and converted as it is loaded (the header
 * says how); the rest of the program sees only T. */
template <class T, class Op, bool Reverse, int VECS_, int MIN_BLOCKS_, bool ASYNC = false, bool BLOCKED = false,
          class In = T, int REG_VECS_ = 0, bool PACK = true>
struct ps_scan_program {
    typedef T carry;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MIN_BLOCKS_,
        WARPS = THREADS / PS_WARP_LANES,
        VEC = 16 / sizeof(T), /* elements per 16-byte vector */
        VECS = VECS_,         /* vectors per thread */
        /* REG_VECS (tuning; tools/tune/tune_scan.cu --types held): the last vectors of each thread's share are
         * loaded into registers and held there, scanned, until the tile's prefix comes, instead of in shared
         * memory. A tile waiting for its prefix holds its bytes; an SM's shared memory caps the bytes of tiles
         * resident (4 x 52 KiB), and registers are most of another 256 KiB that the cp.async path leaves empty. */
        REG_VECS = REG_VECS_,
        SMEM_VECS = VECS - REG_VECS,
        TILE = VEC * VECS * THREADS,
        TILE_VECS = VECS * THREADS,
        TILE_READ_BYTES = TILE * sizeof(In), /* the first wave's stagger waits in proportion (chain/single_pass.cuh) */
        /* a vector's scan and results a word at a time (PS_SCAN_PACKED; block/packed.cuh), where the tier's
         * PACK (dlb_launch) keeps it */
        PACKED = PS_SCAN_PACKED && PACK && !BLOCKED && ps_packed<T, Op>::value
    };
    /* In narrower than T (widening) is converted where it is read; cp.async copies bytes as they are */
    static_assert(sizeof(In) <= sizeof(T), "the element read is at most the carry's size");
    static_assert(!ASYNC || ps_scan_same<In, T>::value, "ASYNC copies raw bytes: a widening program cannot use it");
    static_assert(REG_VECS == 0 || (ASYNC && !BLOCKED && REG_VECS < VECS), "held vectors: the cp.async path only");
    /* user_op.cu lays these bytes out by hand for its NVRTC launches, and user_wide.cuh mirrors them member for
     * member: a change here goes there too (the NVRTC text's static_asserts fail otherwise, which
     * test_userop_nvrtc shows without a GPU) */
    struct params {
        const In *in;
        T *out;
        uint64_t n;
        uint32_t tiles;
        int exclusive;
        int aligned; /* in aligned to VEC * sizeof(In) bytes (16 unless widening), out to 16 */
        T init;
        /* out-of-core pieces (host_scan.cu; NULL otherwise): the carry in is read from device memory, and the
         * last tile writes init (+) everything, the next piece's carry, so the host never waits in between */
        const T *init_device;
        T *total_out;
        uint32_t stagger_row; /* the chain's stagger_row hook (chain/single_pass.cuh): all but the small and
                               * one-tile tiers' */
    };
    struct smem {
        uint4 parked[SMEM_VECS][THREADS]; /* each thread's scanned vectors, its own slots */
        T warp_totals[WARPS];
    };
    struct local {
        T vector_prefix[BLOCKED ? 1 : VECS]; /* everything in this warp's chunk before vector k of this lane
                                                * (BLOCKED: unused) */
        T warp_prefix; /* everything in the tile before this warp's chunk (BLOCKED: before this thread's) */
        uint4 held[REG_VECS > 0 ? REG_VECS : 1]; /* vectors SMEM_VECS .. VECS - 1, scanned (REG_VECS) */
        uint64_t base;         /* first physical element of the tile */
        uint32_t valid;        /* elements in the tile */
        bool fast;             /* whole and aligned: 16-byte vectors */
    };

    static __device__ __forceinline__ T combine(T a, T b) { return Op::combine(a, b); }
    /* The warp's inclusive scan of one value a lane. PS_SCAN_PROMOTED_WARP (on; 0 builds the plain warp scan for
     * tuning): 1- and 2-byte integers under an idempotent operator (min, max, and, or) are scanned as ints, without
     * the lane test. The 16-bit values otherwise get masked back to 16 bits after every shuffle; ptxas for the u16
     * max at 13 vectors and 4 blocks/SM: spill 116 -> 54 bytes, 3712 -> 3400 instructions (the sum's: 3328, no
     * spill); the lane test alone dropped, without the promotion, spilled more (134). Exact: a promotion keeps the
     * order and the bits. H200, 2^28, of copy (seventeenth session, docs/bench/h200-scan-promoted.csv): u16 max
     * 0.535 -> 0.840 at 32 KiB tiles (0.682 -> 0.749 at 40 KiB), u8 max 0.568 -> 0.641; the sums unchanged. */
    struct promoted_combine {
        __device__ __forceinline__ int operator()(int a, int b) const { return Op::template combine<int>(a, b); }
    };
    static __device__ __forceinline__ T warp_inclusive(T x, unsigned lane) {
        return ps_scan_warp<ps_scan_promoted<T, ps_scan_idempotent<Op>::value != 0>::value != 0>::template run<
            ps_scan_program>(x, lane);
    }
    static __device__ __forceinline__ T identity() { return Op::template identity<T>(); }
    static __device__ __forceinline__ T initial(const params &p) { return p.init_device ? *p.init_device : p.init; }

    /* Physical vector of logical slot k of this thread. */
    static __device__ __forceinline__ uint32_t vector_of(unsigned warp, unsigned lane, int k) {
        const uint32_t fv = (warp * VECS + k) * PS_WARP_LANES + lane;
        return Reverse ? TILE_VECS - 1 - fv : fv;
    }

    /* BLOCKED: slot j of this warp's chunk (j = 32 k + lane striped, VECS lane + k blocked), its low three bits
     * crossed with the 128-byte row's owner so that 8 lanes' 16-byte accesses hit 8 different bank groups both
     * ways (D = VECS, at least 8: a striped row has one D-group, a blocked row one thread). An odd VECS needs no
     * swizzle: 8 lanes' VECS lane + k already fall in 8 bank groups (and the XOR would not be one to one). */
    static __host__ __device__ constexpr uint32_t chunk_swizzle(uint32_t j) {
        return VECS % 2 ? j : j ^ ((j / (VECS >= 8 ? VECS : 8)) & 7u);
    }
    static __device__ __forceinline__ uint4 *chunk_slot(smem &s, unsigned warp, uint32_t j) {
        return &s.parked[0][0] + warp * VECS * PS_WARP_LANES + chunk_swizzle(j);
    }
    /* Whether chunk_slot is one to one over a chunk: the XOR's bits come from j / D, which for an odd D depends on
     * the very bits it flips, so two slots would share a place (tune_userop's 11-vector variants gave wrong results
     * on the H200, 2026-11-26, before odd counts went unswizzled). Checked at compile time for every BLOCKED
     * instance. */
    static constexpr bool chunk_slots_distinct() {
        bool seen[PS_WARP_LANES * VECS] = {};
        for (uint32_t j = 0; j < PS_WARP_LANES * VECS; j++) {
            const uint32_t t = chunk_swizzle(j);
            if (t >= PS_WARP_LANES * VECS || seen[t]) return false;
            seen[t] = true;
        }
        return true;
    }
    static_assert(!BLOCKED || chunk_slots_distinct(), "BLOCKED: this many vectors a thread would overlap parking slots");

    /* Where tile id lies: its first physical element, its elements, whether it takes the vector path. */
    static __device__ __forceinline__ void place(const params &p, uint32_t id, local &l) {
        const uint32_t ptile = Reverse ? p.tiles - 1 - id : id;
        l.base = (uint64_t)ptile * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        l.fast = p.aligned && l.valid == (uint32_t)TILE;
    }

    /* Vector k of this thread's share: in its parking slot, or held in registers (REG_VECS). k is a constant once
     * the loops unroll, so the choice costs nothing and the held vectors stay in registers. */
    static __device__ __forceinline__ uint4 vector_get(const smem &s, const local &l, int k) {
        return k >= SMEM_VECS ? l.held[k >= SMEM_VECS ? k - SMEM_VECS : 0]
                              : s.parked[k < SMEM_VECS ? k : 0][threadIdx.x];
    }
    static __device__ __forceinline__ void vector_put(smem &s, local &l, int k, const uint4 &v) {
        if (k >= SMEM_VECS)
            l.held[k >= SMEM_VECS ? k - SMEM_VECS : 0] = v;
        else
            s.parked[k < SMEM_VECS ? k : 0][threadIdx.x] = v;
    }

    static __device__ __forceinline__ uint32_t stagger_row(const params &p) { return p.stagger_row; }

    /* The input tile `tile` (in the order tiles start) reads, asked of L2 ahead of it (chain/single_pass.cuh). */
    static __device__ __forceinline__ void prefetch(const params &p, uint32_t tile) {
        const uint64_t b = (uint64_t)(Reverse ? p.tiles - 1 - tile : tile) * TILE;
        ps_block_prefetch_l2<THREADS>(p.in + b, p.in + (p.n - b < (uint64_t)TILE ? p.n : b + TILE));
    }

    /* A full tile's copies straight into this thread's parking slots, as one cp.async group. */
    static __device__ __forceinline__ void issue_copies(const params &p, const local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
#pragma unroll
        for (int k = 0; k < SMEM_VECS; k++) {
            const uint4 *src = reinterpret_cast<const uint4 *>(p.in + l.base) + vector_of(warp, lane, k);
            const unsigned dst = (unsigned)__cvta_generic_to_shared(&s.parked[k][threadIdx.x]);
            asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
        }
        asm volatile("cp.async.commit_group;" ::: "memory");
    }

    static __device__ __forceinline__ T reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const T e = identity();
        place(p, id, l);
        if (BLOCKED) return reduce_blocked(p, l, s, lane, warp);

        /* ---- load: every vector first, so the whole tile is in flight at once ---- */
        uint4 raw[ASYNC ? 1 : VECS];
        if (ASYNC && l.fast) {
            issue_copies(p, l, s);
#pragma unroll
            for (int k = SMEM_VECS; k < VECS; k++) /* in flight with the copies */
                l.held[k - SMEM_VECS] = ps_scan_load<T, In, VEC>::vector(p.in + l.base, vector_of(warp, lane, k));
            asm volatile("cp.async.wait_group 0;" ::: "memory"); /* this thread's own copies: no barrier */
        } else if (l.fast) {
#pragma unroll
            for (int k = 0; k < (ASYNC ? 0 : VECS); k++)
                raw[k] = ps_scan_load<T, In, VEC>::vector(p.in + l.base, vector_of(warp, lane, k));
        } else {
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                T t[VEC];
                const uint32_t pv = vector_of(warp, lane, k);
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = pv * VEC + i;
                    t[i] = o < l.valid ? (T)p.in[l.base + o] : e;
                }
                if (ASYNC && k >= SMEM_VECS)
                    memcpy(&l.held[k >= SMEM_VECS ? k - SMEM_VECS : 0], t, sizeof(uint4));
                else if (ASYNC)
                    memcpy(&s.parked[k < SMEM_VECS ? k : 0][threadIdx.x], t, sizeof(uint4));
                else
                    memcpy(&raw[ASYNC ? 0 : k], t, sizeof(uint4));
            }
        }

        /* ---- scan inside each vector, park it; scan the vector totals across the warp ---- */
        T running = e;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T acc;
            if constexpr (PACKED) {
                const uint4 v = ASYNC ? vector_get(s, l, k) : raw[ASYNC ? 0 : k];
                uint32_t w[4] = {v.x, v.y, v.z, v.w};
                acc = ps_packed_scan<T, Op, Reverse>(w);
                vector_put(s, l, k, make_uint4(w[0], w[1], w[2], w[3]));
            } else {
                T x[VEC];
                if (ASYNC) {
                    const uint4 v = vector_get(s, l, k);
                    memcpy(x, &v, sizeof v);
                } else {
                    memcpy(x, &raw[ASYNC ? 0 : k], sizeof(uint4));
                }
                acc = x[Reverse ? VEC - 1 : 0];
#pragma unroll
                for (int i = 1; i < VEC; i++) {
                    const int q = Reverse ? VEC - 1 - i : i;
                    acc = combine(acc, x[q]);
                    x[q] = acc;
                }
                uint4 scanned;
                memcpy(&scanned, x, sizeof scanned);
                vector_put(s, l, k, scanned);
            }
            const T inclusive = warp_inclusive(acc, lane);
            T before = ps_shfl_up(inclusive, 1);
            if (lane == 0) before = e;
            l.vector_prefix[BLOCKED ? 0 : k] = combine(running, before);
            running = combine(running, ps_shfl_idx(inclusive, PS_WARP_LANES - 1));
        }

        /* ---- the tile's aggregate: warp totals in order ---- */
        return tile_aggregate(running, l, s, lane, warp);
    }

    /* The tile's aggregate from each warp's total: warp totals in order (every thread), and this warp's prefix. */
    static __device__ __forceinline__ T tile_aggregate(T running, local &l, smem &s, unsigned lane, unsigned warp) {
        if (lane == 0) s.warp_totals[warp] = running;
        __syncthreads();
        T aggregate = identity();
        l.warp_prefix = identity();
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w == (int)warp) l.warp_prefix = aggregate;
            aggregate = combine(aggregate, s.warp_totals[w]);
        }
        return aggregate;
    }

    /* BLOCKED reduce: the warp's chunk into its slots striped (coalesced), each thread's VECS consecutive vectors
     * scanned serially in place, one warp scan of the thread totals. */
    static __device__ __forceinline__ T reduce_blocked(const params &p, local &l, smem &s, unsigned lane,
                                                       unsigned warp) {
        const T e = identity();
        if (ASYNC && l.fast) {
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                const uint4 *src = reinterpret_cast<const uint4 *>(p.in + l.base) + vector_of(warp, lane, k);
                const unsigned dst = (unsigned)__cvta_generic_to_shared(chunk_slot(s, warp, k * PS_WARP_LANES + lane));
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
            }
            asm volatile("cp.async.commit_group;" ::: "memory");
            asm volatile("cp.async.wait_group 0;" ::: "memory");
        } else if (l.fast) {
            uint4 raw[VECS];
#pragma unroll
            for (int k = 0; k < VECS; k++)
                raw[k] = ps_scan_load<T, In, VEC>::vector(p.in + l.base, vector_of(warp, lane, k));
#pragma unroll
            for (int k = 0; k < VECS; k++) *chunk_slot(s, warp, k * PS_WARP_LANES + lane) = raw[k];
        } else {
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                T t[VEC];
                const uint32_t pv = vector_of(warp, lane, k);
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = pv * VEC + i;
                    t[i] = o < l.valid ? (T)p.in[l.base + o] : e;
                }
                memcpy(chunk_slot(s, warp, k * PS_WARP_LANES + lane), t, sizeof(uint4));
            }
        }
        __syncwarp(); /* the other lanes' copies (cp.async waited for by each lane) are visible to this one */

        /* ---- this thread's VECS consecutive vectors, in logical order, scanned serially in place ---- */
        T acc = e;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            uint4 *slot = chunk_slot(s, warp, lane * VECS + k);
            const uint4 v = *slot;
            T x[VEC];
            memcpy(x, &v, sizeof v);
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const int q = Reverse ? VEC - 1 - i : i;
                acc = (k == 0 && i == 0) ? x[q] : combine(acc, x[q]);
                x[q] = acc;
            }
            uint4 scanned;
            memcpy(&scanned, x, sizeof scanned);
            *slot = scanned;
        }
        const T inclusive = warp_inclusive(acc, lane);
        T before = ps_shfl_up(inclusive, 1);
        if (lane == 0) before = e;
        const T aggregate = tile_aggregate(ps_shfl_idx(inclusive, PS_WARP_LANES - 1), l, s, lane, warp);
        /* one prefix kept across the look-back (registers): everything in the tile before this thread */
        l.warp_prefix = combine(l.warp_prefix, before);
        return aggregate;
    }

    /* BLOCKED consume: each thread finishes its vectors in place, then the warp stores its chunk striped. */
    static __device__ __forceinline__ void consume_blocked(const params &p, T prefix, local &l, smem &s,
                                                           unsigned lane, unsigned warp) {
        /* the parked values are this thread's inclusive scan: one combine each with everything before the
         * thread (independent of each other); the exclusive value is the element before's inclusive one */
        const T base = combine(prefix, l.warp_prefix);
        T before = base;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            uint4 *slot = chunk_slot(s, warp, lane * VECS + k);
            const uint4 scanned = *slot;
            T x[VEC];
            memcpy(x, &scanned, sizeof scanned);
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const int q = Reverse ? VEC - 1 - i : i;
                const T inclusive = combine(base, x[q]);
                x[q] = p.exclusive ? before : inclusive;
                before = inclusive;
            }
            uint4 out;
            memcpy(&out, x, sizeof out);
            *slot = out;
        }
        __syncwarp();
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const uint4 out = *chunk_slot(s, warp, k * PS_WARP_LANES + lane);
            const uint32_t pv = vector_of(warp, lane, k);
            if (l.fast) {
                reinterpret_cast<uint4 *>(p.out + l.base)[pv] = out;
            } else {
                T y[VEC];
                memcpy(y, &out, sizeof out);
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = pv * VEC + i;
                    if (o < l.valid) p.out[l.base + o] = y[i];
                }
            }
        }
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, T prefix, T aggregate, local &l,
                                                   smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        if (BLOCKED) {
            consume_blocked(p, prefix, l, s, lane, warp);
            if (p.total_out && id == p.tiles - 1 && threadIdx.x == 0) *p.total_out = combine(prefix, aggregate);
            return;
        }
        const T thread_base = combine(prefix, l.warp_prefix);
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const T r = combine(thread_base, l.vector_prefix[BLOCKED ? 0 : k]);
            const uint4 scanned = vector_get(s, l, k);
            T y[VEC];
            if constexpr (PACKED) {
                uint32_t w[4] = {scanned.x, scanned.y, scanned.z, scanned.w};
                ps_packed_finish<T, Op, Reverse>(w, r, p.exclusive != 0);
                memcpy(y, w, sizeof w);
            } else {
                T x[VEC];
                memcpy(x, &scanned, sizeof scanned);
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const int q = Reverse ? VEC - 1 - i : i, qp = Reverse ? VEC - i : i - 1;
                    y[q] = p.exclusive ? (i == 0 ? r : combine(r, x[qp])) : combine(r, x[q]);
                }
            }
            const uint32_t pv = vector_of(warp, lane, k);
            if (l.fast) {
                uint4 out;
                memcpy(&out, y, sizeof out);
                reinterpret_cast<uint4 *>(p.out + l.base)[pv] = out;
            } else {
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = pv * VEC + i;
                    if (o < l.valid) p.out[l.base + o] = y[i];
                }
            }
        }
        if (p.total_out && id == p.tiles - 1 && threadIdx.x == 0) *p.total_out = combine(prefix, aggregate);
    }
};

/* ---- host side ----------------------------------------------------------------------------------------- */
#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_scan.cu and user_op.cu include the program alone */

/* The (type, operator) pairs that take the heavy operators' large tiles (scan_tiers.h: PS_SCAN_HEAVY_*): 1-byte
 * min and max, the 64-bit integer product. */
template <class T, class Op> struct dlb_heavy { enum { value = 0 }; };
template <class T> struct dlb_heavy<T, ps_cuda_op_min> { enum { value = sizeof(T) == 1 }; };
template <class T> struct dlb_heavy<T, ps_cuda_op_max> { enum { value = sizeof(T) == 1 }; };
template <class T> struct dlb_heavy<T, ps_cuda_op_product> { enum { value = sizeof(T) == 8 && (T)0.5 == (T)0 }; };

/* The tile of a call, by its bytes: small (4 KiB tiles), one (a call of 4- or 8-byte elements of up to 16 KiB as
 * one tile: scan_tiers.h, PS_SCAN_ONE_TILE_BYTES), default (32 KiB) or large (40-64 KiB). */
enum { DLB_SMALL, DLB_ONE, DLB_DEFAULT, DLB_LARGE };
template <class T, int Tier, bool Widen = false, bool Heavy = false> struct dlb_policy {
    enum {
        /* of the VECS, held in registers (ps_scan_program's REG_VECS): the large tier of the integers, not the heavy
         * operators' or the widened calls' tiles */
        HELD = Tier == DLB_LARGE && !Widen && !Heavy ? PS_SCAN_LARGE_HELD(sizeof(T), (T)0.5 == (T)0) : 0,
        VECS = Tier == DLB_SMALL   ? 1
               : Tier == DLB_ONE   ? PS_SCAN_ONE_TILE_VECS
               : Tier == DLB_LARGE ? (Widen   ? PS_SCAN_WIDEN_LARGE_VECS
                                      : Heavy ? PS_SCAN_HEAVY_LARGE_VECS(sizeof(T))
                                              : PS_SCAN_LARGE_VECS(sizeof(T)) + HELD)
                                   : PS_SCAN_VECS(sizeof(T)),
        MIN_BLOCKS = Tier == DLB_SMALL || Tier == DLB_ONE ? 8
                     : Tier == DLB_LARGE ? (Heavy && !Widen ? PS_SCAN_HEAVY_LARGE_MIN_BLOCKS(sizeof(T))
                                                            : PS_SCAN_LARGE_MIN_BLOCKS(sizeof(T)))
                                         : PS_SCAN_MIN_BLOCKS(sizeof(T)),
        ASYNC = Tier == DLB_SMALL || Tier == DLB_ONE ? 0 : PS_SCAN_ASYNC, /* as timed (tune_scan's v4.b8.e2) */
        TILE = 16 / sizeof(T) * VECS * 256
    };
};

/* The vectors a thread of a large-tier call scans. One rule: the kernel's policy (dlb_launch) and the plan
 * (dlb_tile_items) both read dlb_policy, the plan reaching it through the public lists, so the tile the plan sizes
 * temp for is the tile the kernel runs. */
template <class T> static int dlb_large_vecs_of(pscan_op op) {
    switch (op) {
#define PS_DLB_LARGE_OP_(OP, op)                                                                             \
    case PSCAN_OP_##OP: return dlb_policy<T, DLB_LARGE, false, dlb_heavy<T, ps_cuda_op_##op>::value != 0>::VECS;
        PSCAN_OP_LIST(PS_DLB_LARGE_OP_)
#undef PS_DLB_LARGE_OP_
    default: return dlb_policy<T, DLB_LARGE>::VECS;
    }
}
/* The tile is sized by the element the program carries and writes: a widened call's output element (its input
 * elements are what fills one output vector, VEC of them, however narrow). */
static size_t dlb_elem_bytes(const ps_request *req) { return req->widen ? req->out_elem_bytes : req->elem_bytes; }

/* Whether the one-tile tier exists for T read as In (dlb_scan_of instantiates it only there). */
template <class T, class In> struct dlb_has_one {
    enum { value = PS_SCAN_ONE_TILE_BYTES > 0 && sizeof(T) >= 4 && ps_scan_same<In, T>::value };
};

static int dlb_tier(const ps_request *req) {
    const size_t elem = dlb_elem_bytes(req);
    const uint64_t bytes = req->n * elem;
    /* the one-tile tier's condition is dlb_has_one's, on the request (elem: the element read and written) */
    if (PS_SCAN_ONE_TILE_BYTES > 0 && !req->widen && elem >= 4 && bytes > (uint64_t)16 * 256 /* one small tile */ &&
        bytes <= PS_SCAN_ONE_TILE_BYTES)
        return DLB_ONE;
    return bytes <= PS_SCAN_SMALL_BYTES ? DLB_SMALL : bytes >= PS_SCAN_LARGE_BYTES(elem) ? DLB_LARGE : DLB_DEFAULT;
}

#if PS_CUDA_PART_ZERO /* per call, not per type: in part 0 of the split (cuda_ops.cuh) */
static inline int dlb_large_vecs(const ps_request *req) {
    if (req->widen) return PS_SCAN_WIDEN_LARGE_VECS; /* widened calls keep their own large tile (dlb_policy) */
    switch (req->type) {
#define PS_DLB_LARGE_TYPE_(NAME, name, T, U, LOWEST, HIGHEST)                                                \
    case PSCAN_TYPE_##NAME: return dlb_large_vecs_of<T>(req->op);
        PSCAN_ARITH_TYPE_LIST(PS_DLB_LARGE_TYPE_)
#undef PS_DLB_LARGE_TYPE_
    default: return PS_SCAN_LARGE_VECS(req->elem_bytes);
    }
}

static uint64_t dlb_tile_items(const ps_request *req) {
    const int tier = dlb_tier(req);
    const size_t elem = dlb_elem_bytes(req);
    const uint64_t vecs = tier == DLB_SMALL   ? 1
                          : tier == DLB_ONE   ? PS_SCAN_ONE_TILE_VECS
                          : tier == DLB_LARGE ? (uint64_t)dlb_large_vecs(req)
                                              : PS_SCAN_VECS(elem);
    return 16 / elem * vecs * 256;
}

static pscan_status dlb_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    const uint64_t tiles = ps_cuda_div_up(req->n, dlb_tile_items(req));
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    /* every carry of a built-in scan is one element: entries of two 64-bit words */
    *bytes = ps_chain_temp_bytes<uint64_t>(tiles);
    return PSCAN_SUCCESS;
}
#endif

/* T: the carry and output type; In: the element read (T, or a narrower one that widens to T: no cp.async). */
template <class T, class Op, bool Reverse, int Tier, class In = T>
static cudaError_t dlb_launch(const ps_request *req, const ps_cuda_device *dev) {
    typedef dlb_policy<T, Tier, !ps_scan_same<In, T>::value, dlb_heavy<T, Op>::value != 0> Policy;
    /* PACK: the 1-byte sums are packed in the large tier only; at the 32 KiB tiles packed they lost 1-1.5 points of
     * copy at 2^24-2^25 (and gained 2-5 at 2^19-2^21; H200, pscan bench, two runs, twenty-second session) */
    enum {
        ASYNC = Policy::ASYNC != 0 && ps_scan_same<In, T>::value,
        PACK = Tier == DLB_LARGE || !ps_scan_same<Op, ps_cuda_op_sum>::value
    };
    typedef ps_scan_program<T, Op, Reverse, Policy::VECS, Policy::MIN_BLOCKS, ASYNC != 0, false, In,
                            ASYNC ? Policy::HELD : 0, PACK != 0>
        P;
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.in = (const In *)req->in;
    p.out = (T *)req->out;
    p.n = req->n;
    p.tiles = (uint32_t)ps_cuda_div_up(req->n, (uint64_t)P::TILE);
    p.exclusive = req->exclusive;
    /* the vector path reads VEC elements of In (one output vector's worth) at once and writes 16 bytes */
    const uintptr_t in_align = (uintptr_t)P::VEC * sizeof(In);
    p.aligned = ((uintptr_t)req->in & (in_align - 1)) == 0 && ((uintptr_t)req->out & 15u) == 0;
    memcpy(&p.init, req->init.bytes, sizeof(T));
    p.init_device = (const T *)req->init_device;
    p.total_out = (T *)req->total_out;
    /* the first wave starts row by row, a row being one tile an SM (chain/single_pass.cuh,
     * PS_CHAIN_STAGGER_CYCLES_PER_KIB; a call of one row waits for nothing): the large tier since the twenty-fourth
     * session, the 32 KiB tier since the twenty-fifth (H200, tune_scan --types stagger: 1-5 points of copy at
     * 2^21-2^27, every type) */
    p.stagger_row = Tier != DLB_SMALL && Tier != DLB_ONE ? (uint32_t)dev->sm_count : 0;
    return ps_chain_single_pass<P>(p, p.tiles, req->temp, dev->stream);
}

/* One (type, op): the tier, then the direction. In is T except for a widened call (see dlb_widen_run). */
template <class T, class Op, class In> struct dlb_scan_of {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        switch (dlb_tier(req)) {
        case DLB_SMALL: return run_tier<DLB_SMALL>(req, dev);
        case DLB_ONE:
            if constexpr (dlb_has_one<T, In>::value) return run_tier<DLB_ONE>(req, dev);
            return cudaErrorInvalidValue; /* dlb_tier never picks it for these types */
        case DLB_LARGE: return run_tier<DLB_LARGE>(req, dev);
        default: return run_tier<DLB_DEFAULT>(req, dev);
        }
    }
    template <int Tier> static cudaError_t run_tier(const ps_request *req, const ps_cuda_device *dev) {
        return req->reverse ? dlb_launch<T, Op, true, Tier, In>(req, dev)
                            : dlb_launch<T, Op, false, Tier, In>(req, dev);
    }
};
template <class T, class Op> using dlb_scan = dlb_scan_of<T, Op, T>;

/* PSCAN_SCAN_WIDEN: req->type is the input's, the program's T its 64-bit type; sum and product only (the core
 * refuses other operators), so 7 types x 2 operators x 2 directions x the tiers. */
static cudaError_t dlb_widen_run(const ps_request *req, const ps_cuda_device *dev) {
    switch (req->type) {
#define PS_DLB_WIDEN_CASE_(NAME, T, WIDE, W)                                                                 \
    case PSCAN_TYPE_##NAME:                                                                                  \
        if constexpr (ps_cuda_here<T>())                                                                     \
            return req->op == PSCAN_OP_SUM       ? dlb_scan_of<W, ps_cuda_op_sum, T>::run(req, dev)          \
                   : req->op == PSCAN_OP_PRODUCT ? dlb_scan_of<W, ps_cuda_op_product, T>::run(req, dev)      \
                                                 : cudaErrorInvalidValue;                                    \
        return cudaErrorInvalidValue;
        PS_WIDEN_LIST(PS_DLB_WIDEN_CASE_)
#undef PS_DLB_WIDEN_CASE_
    default: return cudaErrorInvalidValue;
    }
}

PS_CUDA_PART_DECLARE(ps_cuda_dlb_part);
cudaError_t PS_CUDA_PART_FN(ps_cuda_dlb_part)(const ps_request *req, const ps_cuda_device *dev) {
    if (req->widen) return dlb_widen_run(req, dev);
    return ps_cuda_dispatch<dlb_scan>::run(req, dev); /* this part's types (cuda_ops.cuh: the split) */
}

#if PS_CUDA_PART_ZERO
static cudaError_t dlb_run(const ps_request *req, const ps_cuda_device *dev) {
    PS_CUDA_PART_CALL(ps_cuda_dlb_part, req, dev)
}

extern const ps_cuda_algorithm ps_cuda_decoupled_lookback = {PSCAN_ALGO_DECOUPLED_LOOKBACK, dlb_plan, dlb_run};
#endif

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
