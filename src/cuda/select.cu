/*
 * select.cu - select (compact) and partition, as one tile program on the single-pass chain driver
 * (chain/single_pass.cuh). The carry is a count: how many items the tiles before this one kept.
 *
 * The tile program (256 threads x ROWS rows; one tile is ROWS x 256 consecutive items, row k being items
 * k * 256 ... k * 256 + 255, one per thread, so every load is coalesced):
 *  - reduce: each thread loads its key (and flag) of every row and decides it; one ballot per warp and row
 *    records the decisions in shared memory (masks[row][warp]). Warp 0 scans the ROWS x WARPS ballot counts
 *    in row-major order, i.e. in item order: offsets[row][warp] is how many items of the tile before that
 *    warp's slice of that row are kept. The tile's kept count is the aggregate. Keys stay in registers across
 *    the look-back (ROWS of them); nothing else does.
 *  - consume(prefix = kept before the tile): an item's rank among the kept ones of its tile is
 *    offsets[row][warp] + popc(mask & lanes below); a rejected item's rank among the rejected is its index in
 *    the tile minus that. Each thread writes its items to a shared-memory staging buffer at their rank (kept
 *    first; for a partition the rejected after them), and then the block writes the buffer out in item order,
 *    consecutive threads to consecutive addresses: kept item j goes to out[prefix + j], rejected item j to
 *    out[kept_total + (tile_start - prefix) + j]. Payloads follow the same way through the same buffer, loaded
 *    only for the items that are written. The last tile writes prefix + aggregate to *count.
 *  - Stability: ranks follow item order inside a tile, and tiles follow each other through the carry.
 *  - A partition's second group starts at kept_total, unknown until the chain ends; a small counting kernel
 *    runs first (it reads the keys, or the flags, once more) and leaves kept_total in temp, so that both groups
 *    are written in place and in order in one pass (CUB's partition instead writes the rejected items
 *    reversed from the end; we want both groups in input order, and re-reading the keys costs less than
 *    reversing the keys and payloads of the second group).
 * Predicate and flags are runtime switches of one body; instances: key type (10) only, the payload size is a
 * runtime switch in consume (4 small copies of the staging loop).
 *
 * Global memory: select reads n keys (and n flags), writes count keys; partition reads them twice (the count)
 * and writes n; payloads are read and written once per item written. Two 16-byte status entries per 4096-item
 * tile. Depth: one tile plus n / (tile * 64) look-back rounds. The row tile's loads are one element per thread
 * and row (4 bytes for i32): 0.72x CUB at 2^28 i32 on an H100 (0.55 of copy), i64 0.89x (0.74), bound by the
 * tile's own work (docs/performance.md). The vector tile (ps_select_vec_program, PS_SELECT_VEC 1) loads 16-byte
 * vectors and ranks per-thread counts instead of per-row ballots; its header says how, and
 * tools/tune/tune_select.cu times the two side by side (not yet run on a GPU).
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

#include "select_tile.h" /* the tile's knobs, shared with tests/test_select.c */

/* The staging buffer's bytes: a tile whose kept items do not fit is written out in several passes. */
#define PS_SELECT_STAGE_BYTES 32768

/* The unsigned integer of a key's width: unique compares keys bit for bit. */
template <int BYTES> struct ps_select_bits;
template <> struct ps_select_bits<1> { typedef uint8_t type; };
template <> struct ps_select_bits<2> { typedef uint16_t type; };
template <> struct ps_select_bits<4> { typedef uint32_t type; };
template <> struct ps_select_bits<8> { typedef uint64_t type; };

/* The kernel arguments of both tile programs and of the counting kernel. */
template <class K> struct ps_select_params {
    const K *keys;
    const void *values;
    const uint8_t *flags; /* NULL: the predicate */
    K *keys_out;
    void *values_out;
    uint64_t *count;
    unsigned long long *kept_total; /* partition: the counting kernel's result; NULL for select */
    uint64_t n;
    uint32_t tiles;
    int pred;
    int partition;
    uint32_t value_bytes;
    K operand;
};

template <class K> __device__ __forceinline__ bool ps_select_same_bits(K a, K b) {
    typedef typename ps_select_bits<sizeof(K)>::type U; /* bit for bit: -0.0 != +0.0, equal NaNs equal */
    U x, y;
    memcpy(&x, &a, sizeof x);
    memcpy(&y, &b, sizeof y);
    return x == y;
}

/* Whether key k, item i of the input, passes the predicate. unique reads item i - 1 again (the same or the
 * previous cache line, which this or the previous tile has just loaded). */
template <class K> __device__ __forceinline__ bool ps_select_pass(const ps_select_params<K> &p, K k, uint64_t i) {
    const K c = p.operand;
    switch (p.pred) {
    case PSCAN_PRED_UNIQUE: return i == 0 || !ps_select_same_bits(k, p.keys[i - 1]);
    case PSCAN_PRED_NONZERO: return k != K(0);
    case PSCAN_PRED_EQ: return k == c;
    case PSCAN_PRED_NE: return k != c;
    case PSCAN_PRED_LT: return k < c;
    case PSCAN_PRED_LE: return k <= c;
    case PSCAN_PRED_GT: return k > c;
    default: return k >= c;
    }
}

/* The decision of one item, with the predicate (or the flags: PS_SELECT_BY_FLAGS) fixed at compile time: the row
 * tile dispatches once per tile on the call's predicate, so an item costs one comparison, not a switch. */
#define PS_SELECT_BY_FLAGS (-1)
template <int MODE, class K>
__device__ __forceinline__ bool ps_select_test(const ps_select_params<K> &p, K k, uint8_t flag, uint64_t i) {
    const K c = p.operand;
    switch (MODE) {
    case PS_SELECT_BY_FLAGS: return flag != 0;
    case PSCAN_PRED_UNIQUE: return i == 0 || !ps_select_same_bits(k, p.keys[i - 1]);
    case PSCAN_PRED_NONZERO: return k != K(0);
    case PSCAN_PRED_EQ: return k == c;
    case PSCAN_PRED_NE: return k != c;
    case PSCAN_PRED_LT: return k < c;
    case PSCAN_PRED_LE: return k <= c;
    case PSCAN_PRED_GT: return k > c;
    default: return k >= c;
    }
}

/* The last tile's count: total items kept, at any address of *count. */
__device__ __forceinline__ void ps_select_store_count(uint64_t *count, uint64_t total) {
    if (((uintptr_t)count & 7u) == 0) {
        *count = total;
    } else {
        unsigned char *c = (unsigned char *)count;
#pragma unroll
        for (int b = 0; b < 8; b++) c[b] = (unsigned char)(total >> (8 * b));
    }
}

template <class K, int ROWS_ = PS_SELECT_ROWS, int MINB = 4> struct ps_select_program {
    typedef uint64_t carry;
    typedef K key;
    enum {
        VECTOR = 0, /* its partition counts with element loads */
        THREADS = 256,
        MIN_BLOCKS = MINB,
        WARPS = THREADS / PS_WARP_LANES,
        ROWS = ROWS_,
        TILE = ROWS * THREADS,
        SLICES = ROWS * WARPS,               /* one ballot per row and warp */
        SLICES_PER_LANE = SLICES / PS_WARP_LANES
    };
    static_assert(SLICES % PS_WARP_LANES == 0, "warp 0 scans the slices, the same number per lane");

    typedef ps_select_params<K> params;
    struct smem {
        uint64_t staging[PS_SELECT_STAGE_BYTES / 8]; /* keys, then payloads, at their output ranks */
        uint32_t masks[ROWS][WARPS];
        uint32_t offsets[ROWS][WARPS];
        uint32_t kept;
    };
    struct local {
        K key[ROWS];
        uint64_t base;
        uint32_t valid;
    };

    static __device__ __forceinline__ uint64_t combine(uint64_t a, uint64_t b) { return a + b; }
    static __device__ __forceinline__ uint64_t identity() { return 0; }
    static __device__ __forceinline__ uint64_t initial(const params &) { return 0; }

    /* One ballot per row and warp of the decisions (items past the end of the last tile are never kept). */
    template <int MODE>
    static __device__ __forceinline__ void ballots(const params &p, const local &l, smem &s, const uint8_t (&flag)[ROWS]) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
#pragma unroll
        for (int k = 0; k < ROWS; k++) {
            const uint32_t o = k * THREADS + threadIdx.x;
            const bool keep = o < l.valid && ps_select_test<MODE>(p, l.key[k], flag[k], l.base + o);
            const unsigned mask = __ballot_sync(PS_WARP_ALL, keep);
            if (lane == 0) s.masks[k][warp] = mask;
        }
    }

    static __device__ __forceinline__ uint64_t reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load every row first, then decide: one ballot per row and warp. (Loading and deciding in one
         * loop let the compiler issue each row's load only after the previous row's ballot: one memory
         * latency per row, and select ran at 0.35 of copy.) ---- */
        uint8_t flag[ROWS];
        if (l.valid == (uint32_t)TILE) { /* a full tile: no bounds to check */
            const K *src = p.keys + l.base + threadIdx.x;
#pragma unroll
            for (int k = 0; k < ROWS; k++) l.key[k] = src[k * THREADS];
            if (p.flags) {
                const uint8_t *f = p.flags + l.base + threadIdx.x;
#pragma unroll
                for (int k = 0; k < ROWS; k++) flag[k] = f[k * THREADS];
            }
        } else {
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                const bool in = o < l.valid;
                l.key[k] = in ? p.keys[l.base + o] : K(0);
                flag[k] = in && p.flags ? p.flags[l.base + o] : 0;
            }
        }
        switch (p.flags ? PS_SELECT_BY_FLAGS : p.pred) { /* once per tile: each item then costs one test */
        case PS_SELECT_BY_FLAGS: ballots<PS_SELECT_BY_FLAGS>(p, l, s, flag); break;
        case PSCAN_PRED_UNIQUE: ballots<PSCAN_PRED_UNIQUE>(p, l, s, flag); break;
        case PSCAN_PRED_NONZERO: ballots<PSCAN_PRED_NONZERO>(p, l, s, flag); break;
        case PSCAN_PRED_EQ: ballots<PSCAN_PRED_EQ>(p, l, s, flag); break;
        case PSCAN_PRED_NE: ballots<PSCAN_PRED_NE>(p, l, s, flag); break;
        case PSCAN_PRED_LT: ballots<PSCAN_PRED_LT>(p, l, s, flag); break;
        case PSCAN_PRED_LE: ballots<PSCAN_PRED_LE>(p, l, s, flag); break;
        case PSCAN_PRED_GT: ballots<PSCAN_PRED_GT>(p, l, s, flag); break;
        default: ballots<PSCAN_PRED_GE>(p, l, s, flag); break;
        }
        __syncthreads();

        /* ---- warp 0: exclusive scan of the slices' counts in item order ---- */
        if (warp == 0) {
            uint32_t c[SLICES_PER_LANE], sum = 0;
#pragma unroll
            for (int j = 0; j < SLICES_PER_LANE; j++) {
                c[j] = __popc((&s.masks[0][0])[lane * SLICES_PER_LANE + j]);
                sum += c[j];
            }
            uint32_t inclusive = sum;
#pragma unroll
            for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) {
                const uint32_t y = __shfl_up_sync(PS_WARP_ALL, inclusive, d);
                if (lane >= d) inclusive += y;
            }
            uint32_t running = inclusive - sum;
#pragma unroll
            for (int j = 0; j < SLICES_PER_LANE; j++) {
                (&s.offsets[0][0])[lane * SLICES_PER_LANE + j] = running;
                running += c[j];
            }
            if (lane == PS_WARP_LANES - 1) s.kept = inclusive;
        }
        __syncthreads();
        return s.kept;
    }

    /* Stages this thread's items at their ranks (KEYS: the keys it holds; else payloads, read from in), then
     * writes the staged items out in item order, consecutive threads to consecutive addresses. The items to
     * write (slots 0 .. written of the tile's output order) go through the buffer STAGE at a time: one pass
     * when they fit (4-byte keys of a 8192-item tile), more otherwise; each item is loaded once. */
    template <class V, bool KEYS>
    static __device__ __forceinline__ void move(const params &p, const V *in, V *out, const local &l, smem &s,
                                                uint64_t prefix, uint32_t kept, uint64_t rejected_at) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const uint32_t STAGE = PS_SELECT_STAGE_BYTES / sizeof(V);
        V *staged = reinterpret_cast<V *>(s.staging);
        const uint32_t written = p.partition ? l.valid : kept;
        for (uint32_t lo = 0; lo < written; lo += STAGE) { /* the same trip count in every thread */
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const uint32_t o = k * THREADS + threadIdx.x;
                if (o < l.valid) {
                    const unsigned mask = s.masks[k][warp];
                    const uint32_t rank = s.offsets[k][warp] + __popc(mask & ((1u << lane) - 1u));
                    const bool keep = (mask >> lane) & 1u;
                    const uint32_t slot = (keep ? rank : kept + (o - rank)) - lo; /* wraps when below lo */
                    if ((keep || p.partition) && slot < STAGE) {
                        V x;
                        if constexpr (KEYS)
                            x = l.key[k];
                        else
                            x = in[l.base + o];
                        staged[slot] = x;
                    }
                }
            }
            __syncthreads();
            const uint32_t end = written - lo < STAGE ? written : lo + STAGE;
            for (uint32_t j = lo + threadIdx.x; j < end; j += THREADS)
                out[j < kept ? prefix + j : rejected_at + (j - kept)] = staged[j - lo];
            __syncthreads(); /* the buffer is reused by the next pass or call */
        }
    }

    template <class V>
    static __device__ __forceinline__ void move_values(const params &p, const local &l, smem &s, uint64_t prefix,
                                                       uint32_t kept, uint64_t rejected_at) {
        move<V, false>(p, (const V *)p.values, (V *)p.values_out, l, s, prefix, kept, rejected_at);
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, uint64_t prefix, uint64_t aggregate,
                                                   local &l, smem &s) {
        const uint32_t kept = (uint32_t)aggregate;
        if (!p.partition && p.value_bytes == 0 && (size_t)TILE * sizeof(K) <= PS_SELECT_STAGE_BYTES) {
            /* the common case, a select of keys alone: every kept key of the tile fits the staging buffer at once,
             * so no pass loop, no second group and no payload; about 8 instructions an item fewer than move() */
            const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
            const unsigned below = (1u << lane) - 1u;
            K *staged = reinterpret_cast<K *>(s.staging);
#pragma unroll
            for (int k = 0; k < ROWS; k++) {
                const unsigned mask = s.masks[k][warp];
                if ((mask >> lane) & 1u) staged[s.offsets[k][warp] + __popc(mask & below)] = l.key[k];
            }
            __syncthreads();
            K *out = p.keys_out + prefix;
#pragma unroll 4
            for (uint32_t j = threadIdx.x; j < kept; j += THREADS) out[j] = staged[j];
            if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
            return;
        }
        /* the first slot of this tile's rejected items: after every kept item, and the tiles' rejected before */
        const uint64_t rejected_at =
            p.partition && kept < l.valid ? (uint64_t)*p.kept_total + (l.base - prefix) : 0;

        /* ---- store: keys, then payloads ---- */
        move<K, true>(p, (const K *)NULL, p.keys_out, l, s, prefix, kept, rejected_at);
        switch (p.value_bytes) {
        case 1: move_values<uint8_t>(p, l, s, prefix, kept, rejected_at); break;
        case 2: move_values<uint16_t>(p, l, s, prefix, kept, rejected_at); break;
        case 4: move_values<uint32_t>(p, l, s, prefix, kept, rejected_at); break;
        case 8: move_values<uint64_t>(p, l, s, prefix, kept, rejected_at); break;
        default: break;
        }

        if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
    }
};

/* ---- the vector tile (PS_SELECT_VEC) --------------------------------------------------------------------- */

/* VEC bytes of flags, the flags of one 16-byte vector of keys, as one aligned load. */
template <int BYTES> struct ps_select_flag_chunk;
template <> struct ps_select_flag_chunk<2> { typedef uint16_t type; };
template <> struct ps_select_flag_chunk<4> { typedef uint32_t type; };
template <> struct ps_select_flag_chunk<8> { typedef uint2 type; };
template <> struct ps_select_flag_chunk<16> { typedef uint4 type; };

/* Whether item x[i] of a vector of consecutive keys, item index of the input, is kept: unique compares with
 * the item before in registers, and reads memory only for the vector's first item. */
template <class K, int VEC>
__device__ __forceinline__ bool ps_select_pass_in_vector(const ps_select_params<K> &p, const K (&x)[VEC], int i,
                                                         uint64_t index) {
    if (p.pred == PSCAN_PRED_UNIQUE && i > 0) return !ps_select_same_bits(x[i], x[i - 1]);
    return ps_select_pass(p, x[i], index);
}

/*
 * The vector tile: 256 threads x VECS 16-byte vectors (VEC = 16 / sizeof(K) keys each; a tile is VECS x 4 KiB).
 * Warp w owns the CHUNK consecutive items w * CHUNK ...; vector k of lane q is vector k * 32 + q of the warp's
 * chunk, so each vector load of a warp is one coalesced 512-byte access (the scan's layout), and each thread's
 * VEC items of a vector are consecutive.
 *  - reduce: every vector (and its VEC flags, one VEC-byte load) first, then each thread decides its items in
 *    registers: a VEC-bit keep mask per vector. The counts popc(mask) of PER_WORD vectors are packed into one
 *    32-bit word (fields of FIELD bits, wide enough for a warp's total), so one 5-step shuffle scan ranks
 *    PER_WORD vectors at once: the rank of lane q's vector k in its warp's chunk is the kept count of the warp's
 *    vectors 0 .. k - 1 plus that of lanes 0 .. q - 1 in vector k. Lane 0 of each warp posts the warp's total;
 *    one barrier, and each thread sums the totals before its warp (8 shared reads): its warp's prefix, and the
 *    tile's aggregate. Per vector a thread keeps the rank and the mask, packed in one word, beside the keys.
 *  - consume: a warp's kept items are one contiguous run of the output (prefix + warp prefix ...), and for a
 *    partition its rejected items another (rejected_at + chunk start - warp prefix ...). So each warp stages
 *    its own items in its own slice of shared memory, at their rank in the warp's run, and writes the slice out
 *    in order, consecutive lanes to consecutive addresses: __syncwarp only, no block barrier in consume.
 *    Payloads follow through the same slice, loaded only for the items written.
 *  - Why not write from registers straight to global memory, now that the runs are contiguous per warp: lane
 *    q's kept items of vector k go to consecutive addresses, but one store instruction of the warp ("item j
 *    of each lane") scatters over the warp's run with gaps, and a vector needs up to VEC predicated store
 *    instructions per lane instead of one element store per 32 items: about VEC times the store instructions
 *    and L2 write requests (partial sectors written several times), against a shared-memory round trip that
 *    costs one store and one load per item and no global requests. The slice keeps the global stores whole
 *    (128 bytes per instruction for 4-byte keys); dropping the block barrier is what the per-warp runs buy.
 *  - Full tiles whose keys are 16-byte aligned (and flags VEC-byte aligned) load vectors; the partial last
 *    tile and misaligned calls load element by element into the same registers and go through the same body.
 *  - Stability: ranks follow item order in a warp's chunk (vector k before k + 1, lane q before q + 1, item i
 *    before i + 1 of a vector, which is item order), warps follow each other, and tiles through the carry.
 * Registers: VECS x 4 words of keys and VECS words of ranks and masks, live across the look-back.
 */
template <class K, int VECS_, int MINB> struct ps_select_vec_program {
    typedef uint64_t carry;
    typedef K key;
    typedef ps_select_params<K> params;
    enum {
        VECTOR = 1, /* its partition counts with 16-byte loads */
        THREADS = 256,
        MIN_BLOCKS = MINB,
        WARPS = THREADS / PS_WARP_LANES,
        VEC = 16 / (int)sizeof(K), /* keys per 16-byte vector */
        VECS = VECS_,              /* vectors per thread */
        CHUNK = VECS * PS_WARP_LANES * VEC, /* a warp's consecutive items */
        TILE = CHUNK * WARPS,
        FIELD = PS_WARP_LANES * VEC < 256 ? 8 : 16, /* bits of one vector's count, enough for the warp's sum */
        PER_WORD = 32 / FIELD,
        WORDS = (VECS + PER_WORD - 1) / PER_WORD,
        FLAG_WORDS = (VEC + 3) / 4,
        SLICE_BYTES = PS_SELECT_STAGE_BYTES / WARPS /* each warp's staging slice */
    };
    static_assert(CHUNK <= 65536 && VEC <= 16, "a rank and a mask share one 32-bit word");
    typedef typename ps_select_flag_chunk<VEC>::type flag_chunk;

    struct smem {
        uint64_t staging[PS_SELECT_STAGE_BYTES / 8]; /* WARPS slices of SLICE_BYTES */
        uint32_t warp_kept[WARPS];
    };
    struct local {
        uint4 raw[VECS];       /* the keys */
        uint32_t info[VECS];   /* low 16 bits: rank in the warp's chunk of the vector's first item; high: keep mask */
        uint32_t warp_prefix;  /* kept items of the tile before this warp's chunk */
        uint32_t warp_kept;    /* kept items of this warp's chunk */
        uint64_t base;
        uint32_t valid;
    };

    static __device__ __forceinline__ uint64_t combine(uint64_t a, uint64_t b) { return a + b; }
    static __device__ __forceinline__ uint64_t identity() { return 0; }
    static __device__ __forceinline__ uint64_t initial(const params &) { return 0; }
    static __device__ __forceinline__ bool pass(const params &p, K k, uint64_t i) { return ps_select_pass(p, k, i); }

    /* Item of the warp's chunk held as item i of lane's vector k. */
    static __device__ __forceinline__ uint32_t chunk_item(unsigned lane, int k, int i) {
        return ((uint32_t)k * PS_WARP_LANES + lane) * VEC + i;
    }

    static __device__ __forceinline__ uint64_t reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        const uint64_t chunk = l.base + (uint64_t)warp * CHUNK; /* first item of this warp's chunk */
        const bool fast = l.valid == (uint32_t)TILE && ((uintptr_t)p.keys & 15u) == 0 &&
                          ((uintptr_t)p.flags & (VEC - 1u)) == 0;

        /* ---- load: every vector (and its flags) first, so the whole tile is in flight at once ---- */
        uint32_t flag[VECS][FLAG_WORDS]; /* the VEC flag bytes of each vector, packed */
#pragma unroll
        for (int k = 0; k < VECS; k++)
#pragma unroll
            for (int w = 0; w < FLAG_WORDS; w++) flag[k][w] = 0;
        if (fast) {
#pragma unroll
            for (int k = 0; k < VECS; k++)
                l.raw[k] = reinterpret_cast<const uint4 *>(p.keys + chunk)[k * PS_WARP_LANES + lane];
            if (p.flags) {
#pragma unroll
                for (int k = 0; k < VECS; k++) {
                    const flag_chunk f = reinterpret_cast<const flag_chunk *>(p.flags + chunk)[k * PS_WARP_LANES + lane];
                    memcpy(flag[k], &f, VEC);
                }
            }
        } else {
            const uint32_t start = warp * CHUNK; /* in the tile */
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                K t[VEC];
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = start + chunk_item(lane, k, i);
                    const bool in = o < l.valid;
                    t[i] = in ? p.keys[l.base + o] : K(0);
                    flag[k][i / 4] |= (uint32_t)(in && p.flags ? p.flags[l.base + o] : 0) << (8 * (i % 4));
                }
                memcpy(&l.raw[k], t, sizeof(uint4));
            }
        }

        /* ---- decide in registers; pack each vector's count into its field ---- */
        uint32_t mask[VECS], packed[WORDS];
#pragma unroll
        for (int w = 0; w < WORDS; w++) packed[w] = 0;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            K x[VEC];
            memcpy(x, &l.raw[k], sizeof(uint4));
            uint32_t m = 0;
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const uint32_t o = warp * CHUNK + chunk_item(lane, k, i);
                const bool in = fast || o < l.valid;
                const bool keep = in && (p.flags ? ((flag[k][i / 4] >> (8 * (i % 4))) & 0xffu) != 0
                                                 : ps_select_pass_in_vector(p, x, i, l.base + o));
                m |= (uint32_t)keep << i;
            }
            mask[k] = m;
            packed[k / PER_WORD] += (uint32_t)__popc(m) << (FIELD * (k % PER_WORD));
        }

        /* ---- rank: one warp scan per packed word; vector k's rank is the warp's count of vectors before k
         * plus the lanes before in vector k ---- */
        uint32_t exclusive[WORDS], total[WORDS];
#pragma unroll
        for (int w = 0; w < WORDS; w++) {
            uint32_t inclusive = packed[w];
#pragma unroll
            for (unsigned d = 1; d < PS_WARP_LANES; d <<= 1) {
                const uint32_t y = __shfl_up_sync(PS_WARP_ALL, inclusive, d);
                if (lane >= d) inclusive += y;
            }
            exclusive[w] = inclusive - packed[w];
            total[w] = __shfl_sync(PS_WARP_ALL, inclusive, PS_WARP_LANES - 1);
        }
        const uint32_t field_mask = (1u << FIELD) - 1u;
        uint32_t running = 0;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            const unsigned shift = FIELD * (k % PER_WORD);
            l.info[k] = (running + ((exclusive[k / PER_WORD] >> shift) & field_mask)) | (mask[k] << 16);
            running += (total[k / PER_WORD] >> shift) & field_mask;
        }

        /* ---- the block: warp totals in order ---- */
        if (lane == 0) s.warp_kept[warp] = running;
        __syncthreads();
        uint32_t aggregate = 0;
        l.warp_prefix = 0;
        l.warp_kept = running;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w == (int)warp) l.warp_prefix = aggregate;
            aggregate += s.warp_kept[w];
        }
        return aggregate;
    }

    /* Stages this warp's items in its slice at their rank in the warp's run (KEYS: the keys it holds; else
     * payloads, read from in), then writes the slice out in order, consecutive lanes to consecutive
     * addresses: kept item j of the warp to out[kept_at + j], rejected item j to out[rejected_at + j]. The
     * items go through the slice SLICE at a time (one pass for the keys while VECS <= 8). */
    template <class V, bool KEYS>
    static __device__ __forceinline__ void move(const params &p, const V *in, V *out, const local &l, smem &s,
                                                uint64_t kept_at, uint64_t rejected_at, uint32_t warp_valid) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const uint32_t SLICE = SLICE_BYTES / sizeof(V);
        V *staged = reinterpret_cast<V *>(s.staging) + warp * SLICE;
        const uint64_t chunk = l.base + (uint64_t)warp * CHUNK;
        const uint32_t written = p.partition ? warp_valid : l.warp_kept;
        /* one pass when a whole chunk fits the slice (the keys, for VECS <= 8): no loop, so the compiler cannot
         * hoist every item's slot out of it and hold them all in registers */
        const bool one_pass = (uint32_t)CHUNK <= SLICE;
        for (uint32_t lo = 0; one_pass ? lo == 0 : lo < written; lo += SLICE) { /* the same trip count in every lane */
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                K x[VEC];
                memcpy(x, &l.raw[k], sizeof(uint4));
                const uint32_t mask = l.info[k] >> 16;
                uint32_t rank = l.info[k] & 0xffffu;
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = chunk_item(lane, k, i);
                    const bool keep = (mask >> i) & 1u;
                    const uint32_t slot = (keep ? rank : l.warp_kept + (o - rank)) - lo; /* wraps when below lo */
                    if (o < warp_valid && (keep || p.partition) && slot < SLICE) {
                        V y;
                        if constexpr (KEYS)
                            y = x[i];
                        else
                            y = in[chunk + o];
                        staged[slot] = y;
                    }
                    rank += keep;
                }
            }
            __syncwarp();
            const uint32_t end = written - lo < SLICE ? written : lo + SLICE;
            for (uint32_t j = lo + lane; j < end; j += PS_WARP_LANES)
                out[j < l.warp_kept ? kept_at + j : rejected_at + (j - l.warp_kept)] = staged[j - lo];
            __syncwarp(); /* the slice is reused by the next pass or call */
        }
    }

    template <class V>
    static __device__ __forceinline__ void move_values(const params &p, const local &l, smem &s, uint64_t kept_at,
                                                       uint64_t rejected_at, uint32_t warp_valid) {
        move<V, false>(p, (const V *)p.values, (V *)p.values_out, l, s, kept_at, rejected_at, warp_valid);
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, uint64_t prefix, uint64_t aggregate,
                                                   local &l, smem &s) {
        const unsigned warp = threadIdx.x / PS_WARP_LANES;
        const uint32_t kept = (uint32_t)aggregate, start = warp * CHUNK;
        const uint32_t warp_valid = l.valid > start ? (l.valid - start < CHUNK ? l.valid - start : CHUNK) : 0;
        /* this warp's runs: its kept items after the tiles' and warps' before; its rejected items after every
         * kept item, the tiles' rejected before (base - prefix) and the warps' before (start - warp prefix) */
        const uint64_t kept_at = prefix + l.warp_prefix;
        const uint64_t rejected_at = p.partition && kept < l.valid
                                         ? (uint64_t)*p.kept_total + (l.base - prefix) + (start - l.warp_prefix)
                                         : 0;

        /* ---- store: keys, then payloads ---- */
        move<K, true>(p, (const K *)NULL, p.keys_out, l, s, kept_at, rejected_at, warp_valid);
        switch (p.value_bytes) {
        case 1: move_values<uint8_t>(p, l, s, kept_at, rejected_at, warp_valid); break;
        case 2: move_values<uint16_t>(p, l, s, kept_at, rejected_at, warp_valid); break;
        case 4: move_values<uint32_t>(p, l, s, kept_at, rejected_at, warp_valid); break;
        case 8: move_values<uint64_t>(p, l, s, kept_at, rejected_at, warp_valid); break;
        default: break;
        }

        if (id == p.tiles - 1 && threadIdx.x == 0) ps_select_store_count(p.count, prefix + aggregate);
    }
};

/* ---- the partition's first pass: how many items are kept, into *p.kept_total (zeroed before). The predicate
 * is a template argument (as in the row tile's ballots) and UNROLL items a thread are in flight at once. ---- */
template <class P, int MODE> __global__ void __launch_bounds__(256) ps_select_count_kernel(const typename P::params p) {
    typedef typename P::key K;
    enum { UNROLL = 8 };
    uint32_t c = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i0 = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i0 < p.n; i0 += UNROLL * stride) {
        K k[UNROLL];
        uint8_t f[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t i = i0 + u * stride;
            k[u] = K(0), f[u] = 0;
            if (i < p.n) {
                if (MODE == PS_SELECT_BY_FLAGS) f[u] = p.flags[i];
                else k[u] = p.keys[i];
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t i = i0 + u * stride;
            c += i < p.n && ps_select_test<MODE>(p, k[u], f[u], i) ? 1u : 0u;
        }
    }
#pragma unroll
    for (unsigned d = PS_WARP_LANES / 2; d > 0; d >>= 1) c += __shfl_down_sync(PS_WARP_ALL, c, d);
    if (threadIdx.x % PS_WARP_LANES == 0 && c) atomicAdd(p.kept_total, (unsigned long long)c);
}

template <class P>
static void ps_select_count(const typename P::params &p, unsigned grid, cudaStream_t stream) {
    switch (p.flags ? PS_SELECT_BY_FLAGS : p.pred) {
#define PS_SELECT_COUNT_(MODE)                                                                                  \
    ps_select_count_kernel<P, MODE><<<grid, 256, 0, stream>>>(p);                                              \
    break;
    case PS_SELECT_BY_FLAGS: PS_SELECT_COUNT_(PS_SELECT_BY_FLAGS)
    case PSCAN_PRED_UNIQUE: PS_SELECT_COUNT_(PSCAN_PRED_UNIQUE)
    case PSCAN_PRED_NONZERO: PS_SELECT_COUNT_(PSCAN_PRED_NONZERO)
    case PSCAN_PRED_EQ: PS_SELECT_COUNT_(PSCAN_PRED_EQ)
    case PSCAN_PRED_NE: PS_SELECT_COUNT_(PSCAN_PRED_NE)
    case PSCAN_PRED_LT: PS_SELECT_COUNT_(PSCAN_PRED_LT)
    case PSCAN_PRED_LE: PS_SELECT_COUNT_(PSCAN_PRED_LE)
    case PSCAN_PRED_GT: PS_SELECT_COUNT_(PSCAN_PRED_GT)
    default: PS_SELECT_COUNT_(PSCAN_PRED_GE)
#undef PS_SELECT_COUNT_
    }
}

/* How many bytes of w are nonzero: bit 7 of each byte ends up set exactly when the byte is nonzero (its low
 * seven bits plus 0x7f carry into bit 7 and never past it). */
__device__ __forceinline__ uint32_t ps_select_nonzero_bytes(uint32_t w) {
    return (uint32_t)__popc((((w & 0x7f7f7f7fu) + 0x7f7f7f7fu) | w) & 0x80808080u);
}

/* The same count for the vector tile (PS_SELECT_VEC): 16-byte loads of the keys (or of the flags), UNROLL of
 * them in flight per thread; the items before the first 16-byte boundary and after the last whole vector go one
 * by one. */
template <class P> __global__ void __launch_bounds__(256) ps_select_count_vec_kernel(const typename P::params p) {
    typedef typename P::key K;
    enum { VEC = 16 / (int)sizeof(K), UNROLL = 4 };
    uint32_t c = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x, first = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
    const uintptr_t addr = p.flags ? (uintptr_t)p.flags : (uintptr_t)p.keys;
    const unsigned size = p.flags ? 1u : (unsigned)sizeof(K), step = p.flags ? 16u : (unsigned)VEC;
    uint64_t head = addr % size ? p.n : ((16u - addr % 16u) % 16u) / size; /* items before the first vector */
    if (head > p.n) head = p.n;
    const uint64_t vectors = (p.n - head) / step, tail = head + vectors * step;
    for (uint64_t j = first; j < vectors; j += UNROLL * stride) {
        uint4 v[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t q = j + u * stride;
            if (q < vectors)
                v[u] = p.flags ? reinterpret_cast<const uint4 *>(p.flags + head)[q]
                               : reinterpret_cast<const uint4 *>(p.keys + head)[q];
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            const uint64_t q = j + u * stride;
            if (q >= vectors) break;
            if (p.flags) {
                c += ps_select_nonzero_bytes(v[u].x) + ps_select_nonzero_bytes(v[u].y) +
                     ps_select_nonzero_bytes(v[u].z) + ps_select_nonzero_bytes(v[u].w);
            } else {
                K x[VEC];
                memcpy(x, &v[u], sizeof(uint4));
#pragma unroll
                for (int i = 0; i < VEC; i++) c += ps_select_pass_in_vector(p, x, i, head + q * VEC + i) ? 1u : 0u;
            }
        }
    }
    const uint64_t loose = head + (p.n - tail); /* items outside the vectors: 0 .. head - 1, then tail .. n - 1 */
    for (uint64_t j = first; j < loose; j += stride) {
        const uint64_t i = j < head ? j : tail + (j - head);
        c += (p.flags ? p.flags[i] != 0 : ps_select_pass(p, p.keys[i], i)) ? 1u : 0u;
    }
#pragma unroll
    for (unsigned d = PS_WARP_LANES / 2; d > 0; d >>= 1) c += __shfl_down_sync(PS_WARP_ALL, c, d);
    if (threadIdx.x % PS_WARP_LANES == 0 && c) atomicAdd(p.kept_total, (unsigned long long)c);
}

/* The look-back entries, then (partition) the kept total at a 16-byte boundary. */
static size_t select_chain_bytes(uint64_t tiles) { return (ps_chain_temp_bytes<uint64_t>(tiles) + 15u) & ~(size_t)15u; }

/* Runs program P over p (n, pointers, predicate set; tiles and kept_total filled in here): for a partition the
 * counting kernel first, then the chain. temp holds select_chain_bytes(tiles) + 8 bytes. */
template <class P, int E = PS_CHAIN_LANE_ENTRIES>
static cudaError_t ps_select_launch(typename P::params p, void *temp, cudaStream_t stream, int sm_count) {
    p.tiles = (uint32_t)ps_cuda_div_up(p.n, (uint64_t)P::TILE);
    if (p.partition) {
        p.kept_total = (unsigned long long *)((char *)temp + select_chain_bytes(p.tiles));
        cudaError_t err = cudaMemsetAsync(p.kept_total, 0, sizeof *p.kept_total, stream);
        if (err != cudaSuccess) return err;
        const uint64_t blocks = ps_cuda_div_up(p.n, 256);
        const unsigned grid = (unsigned)(blocks < (uint64_t)sm_count * 8 ? blocks : (uint64_t)sm_count * 8);
        if constexpr (P::VECTOR)
            ps_select_count_vec_kernel<P><<<grid, 256, 0, stream>>>(p);
        else
            ps_select_count<P>(p, grid, stream);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    return ps_chain_single_pass<P, E>(p, p.tiles, temp, stream);
}

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_select.cu includes the program alone */

/* ---- host side ----------------------------------------------------------------------------------------- */

/* The tile program the library runs for keys K: the row tile, or the vector tile with PS_SELECT_VEC. */
#if PS_SELECT_VEC
template <class K> struct ps_select_default {
    typedef ps_select_vec_program<K, PS_SELECT_VECS(sizeof(K)), PS_SELECT_VEC_MIN_BLOCKS> program;
};
#else
template <class K> struct ps_select_default {
    typedef ps_select_program<K> program;
};
#endif
static constexpr uint64_t select_tile_items(size_t key_bytes) { return PS_SELECT_TILE_ITEMS(key_bytes); }

static uint64_t select_tiles(uint64_t n, size_t key_bytes) { return ps_cuda_div_up(n, select_tile_items(key_bytes)); }

pscan_status ps_cuda_select_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = select_tiles(req->n, req->elem_bytes);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = 0;
    if (req->n > 0)
        /* select and partition need the same temp (the size query answers for both): the partition keeps its
         * kept total after the chain entries */
        *bytes = select_chain_bytes(tiles) + sizeof(unsigned long long);
    return PSCAN_SUCCESS;
}

template <class K> static cudaError_t select_launch(const ps_request *req, const ps_cuda_device *dev) {
    typedef typename ps_select_default<K>::program P;
    static_assert((uint64_t)P::TILE == select_tile_items(sizeof(K)), "one tile size for plan and launch");
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.keys = (const K *)req->in;
    p.values = req->in2;
    p.flags = (const uint8_t *)req->flags;
    p.keys_out = (K *)req->out;
    p.values_out = req->out2;
    p.count = (uint64_t *)req->count;
    p.n = req->n;
    p.pred = (int)req->pred;
    p.partition = req->prim == PS_PRIM_PARTITION;
    p.value_bytes = (uint32_t)req->value_bytes;
    memcpy(&p.operand, req->operand.bytes, sizeof(K));
    return ps_select_launch<P>(p, req->temp, dev->stream, dev->sm_count);
}

/* Both primitives; n == 0 writes the count alone. */
cudaError_t ps_cuda_select_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    switch (req->type) {
#define PS_SELECT_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    case PSCAN_TYPE_##NAME: return select_launch<T>(req, dev);
        PSCAN_ARITH_TYPE_LIST(PS_SELECT_CASE_)
#undef PS_SELECT_CASE_
    default: return cudaErrorInvalidValue;
    }
}

#endif /* PS_TUNE_NO_LIBRARY_ENTRY */
