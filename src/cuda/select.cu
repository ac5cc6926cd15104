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
 * tile. Depth: one tile plus n / (tile * 64) look-back rounds. Not tuned yet: the loads are one element per
 * thread and row (not 16-byte vectors as the scan's), and the tile size is the first that fit.
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

#ifndef PS_SELECT_ROWS
#define PS_SELECT_ROWS 16
#endif

/* The staging buffer's bytes: a tile whose kept items do not fit is written out in several passes. */
#define PS_SELECT_STAGE_BYTES 32768

/* The unsigned integer of a key's width: unique compares keys bit for bit. */
template <int BYTES> struct ps_select_bits;
template <> struct ps_select_bits<1> { typedef uint8_t type; };
template <> struct ps_select_bits<2> { typedef uint16_t type; };
template <> struct ps_select_bits<4> { typedef uint32_t type; };
template <> struct ps_select_bits<8> { typedef uint64_t type; };

template <class K, int ROWS_ = PS_SELECT_ROWS, int MINB = 4> struct ps_select_program {
    typedef uint64_t carry;
    typedef K key;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MINB,
        WARPS = THREADS / PS_WARP_LANES,
        ROWS = ROWS_,
        TILE = ROWS * THREADS,
        SLICES = ROWS * WARPS,               /* one ballot per row and warp */
        SLICES_PER_LANE = SLICES / PS_WARP_LANES
    };
    static_assert(SLICES % PS_WARP_LANES == 0, "warp 0 scans the slices, the same number per lane");

    struct params {
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

    /* Whether key k, item i of the input, passes the predicate. unique reads item i - 1 again (the same or the
     * previous cache line, which this or the previous tile has just loaded). */
    static __device__ __forceinline__ bool pass(const params &p, K k, uint64_t i) {
        const K c = p.operand;
        switch (p.pred) {
        case PSCAN_PRED_UNIQUE: {
            if (i == 0) return true;
            typedef typename ps_select_bits<sizeof(K)>::type U; /* bit for bit: -0.0 != +0.0, equal NaNs equal */
            const K before = p.keys[i - 1];
            U x, y;
            memcpy(&x, &k, sizeof x);
            memcpy(&y, &before, sizeof y);
            return x != y;
        }
        case PSCAN_PRED_NONZERO: return k != K(0);
        case PSCAN_PRED_EQ: return k == c;
        case PSCAN_PRED_NE: return k != c;
        case PSCAN_PRED_LT: return k < c;
        case PSCAN_PRED_LE: return k <= c;
        case PSCAN_PRED_GT: return k > c;
        default: return k >= c;
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
#pragma unroll
        for (int k = 0; k < ROWS; k++) {
            const uint32_t o = k * THREADS + threadIdx.x;
            const bool in = o < l.valid;
            l.key[k] = in ? p.keys[l.base + o] : K(0);
            flag[k] = in && p.flags ? p.flags[l.base + o] : 0;
        }
#pragma unroll
        for (int k = 0; k < ROWS; k++) {
            const bool in = k * THREADS + threadIdx.x < l.valid;
            const bool keep = in && (p.flags ? flag[k] != 0 : pass(p, l.key[k], l.base + k * THREADS + threadIdx.x));
            const unsigned mask = __ballot_sync(PS_WARP_ALL, keep);
            if (lane == 0) s.masks[k][warp] = mask;
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

        if (id == p.tiles - 1 && threadIdx.x == 0) {
            const uint64_t total = prefix + aggregate;
            if (((uintptr_t)p.count & 7u) == 0) {
                *p.count = total;
            } else {
                unsigned char *c = (unsigned char *)p.count;
#pragma unroll
                for (int b = 0; b < 8; b++) c[b] = (unsigned char)(total >> (8 * b));
            }
        }
    }
};

/* ---- the partition's first pass: how many items are kept, into *p.kept_total (zeroed before) ---- */
template <class P> __global__ void __launch_bounds__(256) ps_select_count_kernel(const typename P::params p) {
    typedef typename P::key K;
    uint32_t c = 0;
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; i < p.n; i += stride)
        c += (p.flags ? p.flags[i] != 0 : P::pass(p, p.keys[i], i)) ? 1u : 0u;
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
        ps_select_count_kernel<P><<<grid, 256, 0, stream>>>(p);
        if ((err = cudaGetLastError()) != cudaSuccess) return err;
    }
    return ps_chain_single_pass<P, E>(p, p.tiles, temp, stream);
}

#ifndef PS_TUNE_NO_LIBRARY_ENTRY /* tools/tune/tune_select.cu includes the program alone */

/* ---- host side ----------------------------------------------------------------------------------------- */

#define PS_SELECT_TILE (PS_SELECT_ROWS * 256u)

static uint64_t select_tiles(uint64_t n) { return ps_cuda_div_up(n, PS_SELECT_TILE); }

pscan_status ps_cuda_select_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = select_tiles(req->n);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = 0;
    if (req->n > 0)
        /* select and partition need the same temp (the size query answers for both): the partition keeps its
         * kept total after the chain entries */
        *bytes = select_chain_bytes(tiles) + sizeof(unsigned long long);
    return PSCAN_SUCCESS;
}

template <class K> static cudaError_t select_launch(const ps_request *req, const ps_cuda_device *dev) {
    typedef ps_select_program<K> P;
    static_assert((unsigned)P::TILE == PS_SELECT_TILE, "one tile size for plan and launch");
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
