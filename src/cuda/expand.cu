/*
 * expand.cu - expand on CUDA: a load-balancing search over the scanned counts (the merge-path formulation of
 * Baxter's moderngpu), in three launches.
 *
 * The idea. Item i owns the output slots [start(i), start(i) + counts[i]), start being the exclusive sum of
 * the counts. Picture two sorted lists merged into one: the items' starts A = start(0), start(1), ... and the
 * slot numbers B = 0, 1, ..., out - 1 (out = min(total, capacity)), an item going before a slot when
 * start(i) <= slot. Walking the merge, each slot meets the item it belongs to just before it: the last item
 * taken. The merged list has n + out entries whichever way they are spread, so cutting it into equal tiles of
 * NV = 256 threads x VT entries gives every block the same work, whether one item owns a million slots (its
 * slots spread over many blocks) or a million items own one slot each (their starts spread the same way).
 *
 *   1. scan:      the counts' exclusive sum into temp (64-bit, saturating at UINT64_MAX so that a sum past
 *                 2^64 cannot wrap onto small slot numbers), a tile program on the single-pass chain driver
 *                 (chain/single_pass.cuh); its last tile writes the total, to the caller and to temp.
 *   2. partition: where each tile's diagonal crosses the merge path: a binary search over the starts per tile
 *                 boundary (one thread each), into temp.
 *   3. expand:    each block takes tiles in turn (a grid sized to the device, the tile count read from the
 *                 total in temp, so a generous capacity costs no idle blocks): it loads the starts of its
 *                 items into shared memory, each thread finds its own diagonal inside the tile by a binary
 *                 search there and walks VT steps of the merge, recording each slot's item in shared memory;
 *                 then the block writes the slots out in order (coalesced): index, rank = slot - start, and
 *                 the gathered value.
 * The grid of steps 2 and 3 cannot depend on the total (it is on the device), so both loop over the tiles the
 * total implies, and their temp is sized for n + capacity.
 *
 * Work O(n + out); depth: the scan's chain plus log n for the searches. Global memory: the counts read once
 * (4 or 8 bytes per item), the starts written once and read about once (8 + 8 bytes per item), the slots
 * written once (4 or 8 bytes per index and per rank, value_bytes per value) and the values gathered (mostly
 * from cache, runs of one item being adjacent). Temp: 8 bytes per item, 8 per tile of n + capacity, the scan's
 * look-back entries. Not tuned yet (figures to come from the GPU machine); the starts' round trip through
 * memory is the obvious cost: a fused variant would expand inside the scan's own tile when its slots fit.
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "scan_problem.cuh"

#ifndef PS_EXPAND_SCAN_ITEMS
#define PS_EXPAND_SCAN_ITEMS 16 /* counts per thread in the scan: 4096-item tiles */
#endif
#ifndef PS_EXPAND_VT
#define PS_EXPAND_VT 8 /* merge steps per thread: 2048 items + slots per expand tile */
#endif
#define PS_EXPAND_THREADS 256
#define PS_EXPAND_SCAN_TILE (PS_EXPAND_SCAN_ITEMS * PS_EXPAND_THREADS)
#define PS_EXPAND_NV (PS_EXPAND_VT * PS_EXPAND_THREADS)

/* a + b, or UINT64_MAX when that overflows: still associative, so the chain may group sums any way. */
static __device__ __forceinline__ uint64_t ps_add_saturating(uint64_t a, uint64_t b) {
    const uint64_t s = a + b;
    return s < a ? ~0ull : s;
}

/* Writes a uint64_t at any address (the caller's total need not be 8-byte aligned). */
static __device__ __forceinline__ void ps_store_u64_anywhere(uint64_t *p, uint64_t v) {
    if (((uintptr_t)p & 7u) == 0) {
        *p = v;
    } else {
        unsigned char *c = (unsigned char *)p;
#pragma unroll
        for (int b = 0; b < 8; b++) c[b] = (unsigned char)(v >> (8 * b));
    }
}

/* ---- 1. the counts' exclusive sum: a tile program on the chain ------------------------------------------ */

template <class C> struct ps_expand_scan_program {
    typedef uint64_t carry;
    enum {
        THREADS = PS_EXPAND_THREADS,
        MIN_BLOCKS = 4,
        ITEMS = PS_EXPAND_SCAN_ITEMS,
        TILE = PS_EXPAND_SCAN_TILE,
        WARPS = THREADS / PS_WARP_LANES,
        PADDED = TILE + TILE / ITEMS /* one spare word per thread's run: conflict-free both ways */
    };
    struct params {
        const C *counts;
        uint64_t *starts;
        uint64_t *total;      /* the caller's, any address */
        uint64_t *total_copy; /* in temp, for steps 2 and 3 */
        uint64_t n;
        uint32_t tiles;
    };
    struct smem {
        uint64_t staged[PADDED]; /* the tile's counts, then its starts, in item order (padded) */
        uint64_t warp_totals[WARPS];
    };
    struct local {
        uint64_t base, offset; /* the tile's first item; this thread's sum before its run, in the tile */
        uint32_t valid;
    };

    static __device__ __forceinline__ uint64_t combine(uint64_t a, uint64_t b) { return ps_add_saturating(a, b); }
    static __device__ __forceinline__ uint64_t identity() { return 0; }
    static __device__ __forceinline__ uint64_t initial(const params &) { return 0; }
    static __device__ __forceinline__ uint32_t slot(uint32_t i) { return i + i / ITEMS; }

    static __device__ __forceinline__ uint64_t reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        l.base = (uint64_t)id * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;

        /* ---- load: coalesced rows into shared memory ---- */
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t i = k * THREADS + threadIdx.x;
            s.staged[slot(i)] = i < l.valid ? (uint64_t)p.counts[l.base + i] : 0;
        }
        __syncthreads();

        /* ---- reduce: each thread its run of ITEMS consecutive counts, then the block in thread order ---- */
        uint64_t sum = 0;
#pragma unroll
        for (int k = 0; k < ITEMS; k++) sum = combine(sum, s.staged[slot(threadIdx.x * ITEMS + k)]);
        const uint64_t inclusive = ps_warp_inclusive(sum, lane, ps_chain_combine<ps_expand_scan_program>());
        const uint64_t before = ps_shfl_up(inclusive, 1);
        if (lane == PS_WARP_LANES - 1) s.warp_totals[warp] = inclusive;
        __syncthreads();
        uint64_t warp_before = 0, aggregate = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w < (int)warp) warp_before = combine(warp_before, s.warp_totals[w]);
            aggregate = combine(aggregate, s.warp_totals[w]);
        }
        l.offset = combine(warp_before, lane ? before : 0);
        return aggregate;
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t id, uint64_t prefix, uint64_t aggregate,
                                                   local &l, smem &s) {
        /* ---- scan: each thread's run, from the carry of every item before it ---- */
        uint64_t running = combine(prefix, l.offset);
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t at = slot(threadIdx.x * ITEMS + k);
            const uint64_t count = s.staged[at];
            s.staged[at] = running;
            running = combine(running, count);
        }
        __syncthreads();

        /* ---- store: coalesced rows ---- */
#pragma unroll
        for (int k = 0; k < ITEMS; k++) {
            const uint32_t i = k * THREADS + threadIdx.x;
            if (i < l.valid) p.starts[l.base + i] = s.staged[slot(i)];
        }
        if (id == p.tiles - 1 && threadIdx.x == 0) {
            const uint64_t total = combine(prefix, aggregate);
            *p.total_copy = total;
            ps_store_u64_anywhere(p.total, total);
        }
    }
};

/* ---- 2. partition: where each tile boundary crosses the merge path ------------------------------------- */

/* How many items come before the slots among the first d entries of the merge of starts[0 .. n) with the
 * slots 0 .. out - 1 (an item goes first when its start is at most the slot). */
static __device__ __forceinline__ uint64_t ps_merge_path(const uint64_t *starts, uint64_t n, uint64_t out, uint64_t d) {
    uint64_t lo = d > out ? d - out : 0, hi = d < n ? d : n;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (starts[mid] <= d - 1 - mid)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

struct ps_expand_params {
    const uint64_t *starts;
    const uint64_t *total; /* the copy in temp */
    uint64_t *parts;       /* the item count at each tile boundary */
    const void *values;
    void *indices, *ranks, *values_out;
    uint64_t n, capacity;
    uint32_t value_bytes;
};

/* Expand tiles of the merge of n items with out slots. */
static __device__ __forceinline__ uint64_t ps_expand_tiles(uint64_t merged) {
    return (merged + PS_EXPAND_NV - 1) / PS_EXPAND_NV;
}

static __device__ __forceinline__ uint64_t ps_expand_slots(const ps_expand_params &p) {
    const uint64_t total = *p.total;
    return total < p.capacity ? total : p.capacity;
}

__global__ void __launch_bounds__(256) ps_expand_partition_kernel(const ps_expand_params p) {
    const uint64_t out = ps_expand_slots(p);
    if (out == 0) return;
    const uint64_t merged = p.n + out, tiles = ps_expand_tiles(merged);
    const uint64_t stride = (uint64_t)gridDim.x * blockDim.x;
    for (uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x; t <= tiles; t += stride) {
        const uint64_t d = t * PS_EXPAND_NV < merged ? t * PS_EXPAND_NV : merged;
        p.parts[t] = ps_merge_path(p.starts, p.n, out, d);
    }
}

/* ---- 3. expand: each tile's part of the merge, then its slots written in order -------------------------- */

template <class V> static __device__ __forceinline__ void ps_expand_gather(const ps_expand_params &p, uint64_t item,
                                                                           uint64_t slot) {
    ((V *)p.values_out)[slot] = ((const V *)p.values)[item];
}

template <class I> __global__ void __launch_bounds__(PS_EXPAND_THREADS) ps_expand_kernel(const ps_expand_params p) {
    __shared__ uint64_t s_starts[PS_EXPAND_NV + 1]; /* the starts of items a0 - 1 ... a1 - 1 */
    __shared__ uint32_t s_item[PS_EXPAND_NV];       /* per slot of the tile: its item, as an index into s_starts */
    const uint64_t out = ps_expand_slots(p);
    if (out == 0) return;
    const uint64_t merged = p.n + out, tiles = ps_expand_tiles(merged);

    for (uint64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
        /* ---- load: the tile's part of both lists ---- */
        const uint64_t d0 = t * PS_EXPAND_NV, d1 = d0 + PS_EXPAND_NV < merged ? d0 + PS_EXPAND_NV : merged;
        const uint64_t a0 = p.parts[t], a1 = p.parts[t + 1], b0 = d0 - a0;
        const uint32_t na = (uint32_t)(a1 - a0), nb = (uint32_t)(d1 - a1 - b0);
        for (uint32_t k = threadIdx.x; k <= na; k += PS_EXPAND_THREADS)
            s_starts[k] = a0 + k >= 1 ? p.starts[a0 + k - 1] : 0;
        __syncthreads();

        /* ---- search: this thread's diagonal inside the tile ---- */
        const uint32_t dt = threadIdx.x * PS_EXPAND_VT < na + nb ? threadIdx.x * PS_EXPAND_VT : na + nb;
        uint32_t lo = dt > nb ? dt - nb : 0, hi = dt < na ? dt : na;
        while (lo < hi) {
            const uint32_t mid = (lo + hi) / 2;
            if (s_starts[1 + mid] <= b0 + (dt - 1 - mid))
                lo = mid + 1;
            else
                hi = mid;
        }

        /* ---- merge: VT steps; a slot belongs to the last item taken ---- */
        uint32_t a = lo, b = dt - lo;
#pragma unroll
        for (int step = 0; step < PS_EXPAND_VT; step++) {
            if (a + b >= na + nb) break;
            if (a < na && (b >= nb || s_starts[1 + a] <= b0 + b))
                a++;
            else
                s_item[b++] = a;
        }
        __syncthreads();

        /* ---- store: the tile's slots in order ---- */
        for (uint32_t k = threadIdx.x; k < nb; k += PS_EXPAND_THREADS) {
            const uint32_t rel = s_item[k];
            const uint64_t item = a0 + rel - 1, slot = b0 + k;
            if (p.indices) ((I *)p.indices)[slot] = (I)item;
            if (p.ranks) ((I *)p.ranks)[slot] = (I)(slot - s_starts[rel]);
            switch (p.value_bytes) {
            case 1: ps_expand_gather<uint8_t>(p, item, slot); break;
            case 2: ps_expand_gather<uint16_t>(p, item, slot); break;
            case 4: ps_expand_gather<uint32_t>(p, item, slot); break;
            case 8: ps_expand_gather<uint64_t>(p, item, slot); break;
            default: break;
            }
        }
        __syncthreads(); /* the shared arrays are refilled for the next tile */
    }
}

/* ---- host side ----------------------------------------------------------------------------------------- */

/* Where each piece lives in temp, every piece 256-byte aligned. */
typedef struct expand_layout {
    uint64_t scan_tiles, expand_tiles;
    size_t chain, starts, parts, total, bytes;
} expand_layout;

static expand_layout expand_layout_of(uint64_t n, uint64_t capacity) {
    expand_layout L;
    L.scan_tiles = ps_cuda_div_up(n, PS_EXPAND_SCAN_TILE);
    L.expand_tiles = ps_cuda_div_up(n + capacity, PS_EXPAND_NV);
    L.chain = 0;
    L.starts = L.chain + ps_cuda_align(ps_chain_temp_bytes<uint64_t>(L.scan_tiles));
    L.parts = L.starts + ps_cuda_align((size_t)n * 8);
    L.total = L.parts + ps_cuda_align((size_t)(L.expand_tiles + 1) * 8);
    L.bytes = L.total + 8;
    return L;
}

pscan_status ps_cuda_expand_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo == PSCAN_ALGO_AUTO) return PSCAN_ERROR_INVALID_VALUE; /* resolved by the backend first */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const expand_layout L = expand_layout_of(req->n, req->capacity);
    if (L.scan_tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = req->n > 0 ? L.bytes : 0;
    return PSCAN_SUCCESS;
}

template <class C> static cudaError_t expand_scan(const ps_request *req, const expand_layout &L, const ps_cuda_device *dev) {
    typedef ps_expand_scan_program<C> P;
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.counts = (const C *)req->in;
    p.starts = (uint64_t *)((char *)req->temp + L.starts);
    p.total = (uint64_t *)req->count;
    p.total_copy = (uint64_t *)((char *)req->temp + L.total);
    p.n = req->n;
    p.tiles = (uint32_t)L.scan_tiles;
    return ps_chain_single_pass<P>(p, p.tiles, (char *)req->temp + L.chain, dev->stream);
}

template <class I> static cudaError_t expand_launch(const ps_expand_params &p, const expand_layout &L,
                                                     const ps_cuda_device *dev) {
    /* enough blocks to fill the device; each loops over the tiles the total implies */
    static int per_sm = 0;
    if (per_sm == 0) {
        cudaError_t err = cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, ps_expand_kernel<I>, PS_EXPAND_THREADS, 0);
        if (err != cudaSuccess) return err;
        if (per_sm < 1) per_sm = 1;
    }
    const uint64_t most = (uint64_t)dev->sm_count * (uint64_t)per_sm;
    const unsigned grid = (unsigned)(L.expand_tiles < most ? L.expand_tiles : most);
    ps_expand_kernel<I><<<grid, PS_EXPAND_THREADS, 0, dev->stream>>>(p);
    return cudaGetLastError();
}

cudaError_t ps_cuda_expand_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaMemsetAsync(req->count, 0, sizeof(uint64_t), dev->stream);
    const expand_layout L = expand_layout_of(req->n, req->capacity);

    /* ---- 1. scan ---- */
    PS_CUDA_TRY(req->type == PSCAN_TYPE_U32 ? expand_scan<uint32_t>(req, L, dev) : expand_scan<uint64_t>(req, L, dev));
    if (req->capacity == 0) return cudaSuccess;

    /* ---- 2. partition ---- */
    ps_expand_params p;
    memset(&p, 0, sizeof p);
    p.starts = (const uint64_t *)((char *)req->temp + L.starts);
    p.total = (const uint64_t *)((char *)req->temp + L.total);
    p.parts = (uint64_t *)((char *)req->temp + L.parts);
    p.values = req->in2;
    p.indices = req->out;
    p.ranks = req->ranks;
    p.values_out = req->out2;
    p.n = req->n;
    p.capacity = req->capacity;
    p.value_bytes = (uint32_t)req->value_bytes;
    const uint64_t bounds = ps_cuda_div_up(L.expand_tiles + 1, 256), most = (uint64_t)dev->sm_count * 8;
    ps_expand_partition_kernel<<<(unsigned)(bounds < most ? bounds : most), 256, 0, dev->stream>>>(p);
    PS_CUDA_CHECK_LAUNCH();

    /* ---- 3. expand ---- */
    return req->index_type == PSCAN_TYPE_U32 ? expand_launch<uint32_t>(p, L, dev) : expand_launch<uint64_t>(p, L, dev);
}
