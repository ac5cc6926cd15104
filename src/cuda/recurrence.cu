/*
 * recurrence.cu - linear recurrences on CUDA, first order y[i] = a[i] y[i-1] + b[i] and second order
 * y[i] = a[i] y[i-1] + b[i] y[i-2] + c[i] (forward, or reverse from the end), f32 and f64, as one tile program
 * on the single-pass chain driver (chain/single_pass.cuh). Compiled in (no NVRTC): the carry is fixed.
 *
 * Idea. Element i is an affine map of the state: first order x -> a x + b, the carry (A, B); second order the
 * companion map (s0, s1) -> (a s0 + b s1 + c, s0) on the two last values, whose composition keeps the form
 * "two rows of three" (the 3x3 homogeneous matrix's last row stays 0 0 1): the carry is 6 elements (24 bytes in
 * f32, 48 in f64). combine(earlier, later) = later after earlier, never commuted. The initial carry is the
 * constant map x -> y0 (A = 0, B = y0; second order rows (0 0 y1), (0 0 y2)): a prefix that starts with it is
 * again a constant map, whose constant terms are the state entering the tile, whatever the linear terms
 * became (a NaN or inf in a only reaches them).
 *
 * The tile program (256 threads x VECS 16-byte vectors of each input, warp-striped as the scan's):
 *  - reduce: each thread loads its vectors of a, b (and c) into registers, composes the maps of each vector in
 *    order, scans the vector maps across the warp (in lane order, carried across k), and the warp totals across
 *    the block: the tile's map is the aggregate. The inputs stay in registers across the look-back.
 *  - consume: the state entering each vector is its prefix map applied to the state entering the tile; each
 *    thread then runs the serial loop over its vector and stores y (16-byte vectors for full, aligned tiles,
 *    element by element for the last tile and misaligned calls, through the same body).
 *  - Reverse runs the same body in logical order: physical tile tiles-1-id, vectors and elements mirrored.
 *  - In place (y == a, b or c): a thread writes only the elements it loaded itself, after loading them.
 *  - Padding (the last tile): padded slots are identity maps, and consume does not step over them.
 *  - A constant multiplier (a NULL, pscan_polyval's Horner rule y = x y + c): a is not read, every a[i] is x.
 *
 * Work: the maps cost 2 (first order) or 9 (second order) multiply-adds per element in reduce, against the
 * serial loop's 1 or 2 that consume runs again. Depth: one tile plus n / (tile x 64) look-back rounds.
 * Global memory: reads 2n (3n) elements, writes n: the copy floor of the same bytes; one status entry pair per
 * tile (32 to 96 bytes per entry). Rounding: the parallel order differs from the serial loop's; the tests hold
 * the result to a long double loop within 256 eps (1 + log2(n + 1)) relative, with |a| < 1 (first order) and
 * both roots of z^2 = a z + b inside the unit circle (second order), so that errors do not grow along the chain.
 * Not measured on a GPU yet.
 */
#include <stdint.h>
#include <string.h>

#include "chain/single_pass.cuh"
#include "cuda_backend.h"

/* ---- the maps ------------------------------------------------------------------------------------------ */

/* First order: x -> a x + b. */
template <class T> struct ps_rec_map1 {
    T a, b;
};
/* Second order: (s0, s1) -> (r0 s0 + r1 s1 + r2, q0 s0 + q1 s1 + q2). */
template <class T> struct ps_rec_map2 {
    T r0, r1, r2, q0, q1, q2;
};

template <class T, int ORDER> struct ps_rec_ops;

template <class T> struct ps_rec_ops<T, 1> {
    typedef ps_rec_map1<T> map;
    static __device__ __forceinline__ map identity() {
        map m;
        m.a = 1, m.b = 0;
        return m;
    }
    static __device__ __forceinline__ map element(T a, T b, T) {
        map m;
        m.a = a, m.b = b;
        return m;
    }
    static __device__ __forceinline__ map constant(T y1, T) {
        map m;
        m.a = 0, m.b = y1;
        return m;
    }
    static __device__ __forceinline__ map combine(const map &e, const map &l) {
        map m;
        m.a = l.a * e.a;
        m.b = l.a * e.b + l.b;
        return m;
    }
    /* m applied to the state (s0; s1 unused) */
    static __device__ __forceinline__ void apply(const map &m, T &s0, T &) { s0 = m.a * s0 + m.b; }
    static __device__ __forceinline__ T step(T a, T b, T, T &s0, T &) { return s0 = a * s0 + b; }
};

template <class T> struct ps_rec_ops<T, 2> {
    typedef ps_rec_map2<T> map;
    static __device__ __forceinline__ map identity() {
        map m;
        m.r0 = 1, m.r1 = 0, m.r2 = 0, m.q0 = 0, m.q1 = 1, m.q2 = 0;
        return m;
    }
    static __device__ __forceinline__ map element(T a, T b, T c) {
        map m;
        m.r0 = a, m.r1 = b, m.r2 = c, m.q0 = 1, m.q1 = 0, m.q2 = 0;
        return m;
    }
    static __device__ __forceinline__ map constant(T y1, T y2) {
        map m;
        m.r0 = 0, m.r1 = 0, m.r2 = y1, m.q0 = 0, m.q1 = 0, m.q2 = y2;
        return m;
    }
    /* l after e: each row of l combines the rows of e (and the homogeneous 0 0 1) */
    static __device__ __forceinline__ map combine(const map &e, const map &l) {
        map m;
        m.r0 = l.r0 * e.r0 + l.r1 * e.q0;
        m.r1 = l.r0 * e.r1 + l.r1 * e.q1;
        m.r2 = l.r0 * e.r2 + l.r1 * e.q2 + l.r2;
        m.q0 = l.q0 * e.r0 + l.q1 * e.q0;
        m.q1 = l.q0 * e.r1 + l.q1 * e.q1;
        m.q2 = l.q0 * e.r2 + l.q1 * e.q2 + l.q2;
        return m;
    }
    static __device__ __forceinline__ void apply(const map &m, T &s0, T &s1) {
        const T t0 = m.r0 * s0 + m.r1 * s1 + m.r2, t1 = m.q0 * s0 + m.q1 * s1 + m.q2;
        s0 = t0, s1 = t1;
    }
    static __device__ __forceinline__ T step(T a, T b, T c, T &s0, T &s1) {
        const T v = a * s0 + b * s1 + c;
        s1 = s0, s0 = v;
        return v;
    }
};

/* ---- the tile program ---------------------------------------------------------------------------------- */

template <class T, int ORDER, bool Reverse, int VECS_, int MIN_BLOCKS_> struct ps_recurrence_program {
    typedef ps_rec_ops<T, ORDER> ops;
    typedef typename ops::map carry;
    enum {
        THREADS = 256,
        MIN_BLOCKS = MIN_BLOCKS_,
        WARPS = THREADS / PS_WARP_LANES,
        VEC = 16 / sizeof(T), /* elements per 16-byte vector */
        VECS = VECS_,         /* vectors per thread, of each input */
        TILE = VEC * VECS * THREADS,
        TILE_VECS = VECS * THREADS,
        INPUTS = ORDER + 1 /* a, b (, c) */
    };
    struct params {
        const T *in[3]; /* a, b, c (c NULL in the first order; a NULL: every a[i] is a_const) */
        T *y;
        uint64_t n;
        uint32_t tiles;
        int aligned; /* every input and y 16-byte aligned */
        T init1, init2;
        T a_const; /* pscan_polyval: Horner's rule, a[i] = x */
    };
    struct smem {
        carry warp_totals[WARPS];
    };
    struct local {
        uint4 raw[INPUTS][VECS]; /* the inputs, kept for consume */
        carry vector_prefix[VECS]; /* everything in this warp's chunk before vector k of this lane */
        carry warp_prefix;         /* everything in the tile before this warp's chunk */
        uint64_t base;             /* first physical element of the tile */
        uint32_t valid;            /* elements in the tile */
        bool fast;                 /* whole and aligned: 16-byte vectors */
    };

    static __device__ __forceinline__ carry combine(const carry &e, const carry &l) { return ops::combine(e, l); }
    static __device__ __forceinline__ carry identity() { return ops::identity(); }
    static __device__ __forceinline__ carry initial(const params &p) { return ops::constant(p.init1, p.init2); }

    /* Physical vector of logical slot k of this thread. */
    static __device__ __forceinline__ uint32_t vector_of(unsigned warp, unsigned lane, int k) {
        const uint32_t fv = (warp * VECS + k) * PS_WARP_LANES + lane;
        return Reverse ? TILE_VECS - 1 - fv : fv;
    }

    static __device__ __forceinline__ carry reduce(const params &p, uint32_t id, local &l, smem &s) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        const carry e = identity();
        const uint32_t ptile = Reverse ? p.tiles - 1 - id : id;
        l.base = (uint64_t)ptile * TILE;
        const uint64_t left = p.n - l.base;
        l.valid = left < (uint64_t)TILE ? (uint32_t)left : (uint32_t)TILE;
        l.fast = p.aligned && l.valid == (uint32_t)TILE;

        /* ---- load: every vector of every input first, so the whole tile is in flight at once ---- */
#pragma unroll
        for (int j = 0; j < INPUTS; j++) {
#pragma unroll
            for (int k = 0; k < VECS; k++) {
                const uint32_t pv = vector_of(warp, lane, k);
                if (j == 0 && !p.in[0]) {
                    T t[VEC];
#pragma unroll
                    for (int i = 0; i < VEC; i++) t[i] = p.a_const;
                    memcpy(&l.raw[j][k], t, sizeof(uint4));
                } else if (l.fast) {
                    l.raw[j][k] = reinterpret_cast<const uint4 *>(p.in[j] + l.base)[pv];
                } else {
                    T t[VEC];
#pragma unroll
                    for (int i = 0; i < VEC; i++) {
                        const uint32_t o = pv * VEC + i;
                        t[i] = o < l.valid ? p.in[j][l.base + o] : (T)0;
                    }
                    memcpy(&l.raw[j][k], t, sizeof(uint4));
                }
            }
        }

        /* ---- compose each vector's maps; scan the vector maps across the warp ---- */
        carry running = e;
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T x[INPUTS][VEC];
#pragma unroll
            for (int j = 0; j < INPUTS; j++) memcpy(x[j], &l.raw[j][k], sizeof(uint4));
            const uint32_t pv = vector_of(warp, lane, k);
            carry acc = e;
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const int q = Reverse ? VEC - 1 - i : i;
                if (pv * VEC + q < l.valid)
                    acc = combine(acc, ops::element(x[0][q], x[1][q], x[INPUTS - 1][q]));
            }
            const carry inclusive = ps_warp_inclusive(acc, lane, ps_chain_combine<ps_recurrence_program>());
            carry before = ps_shfl_up(inclusive, 1);
            if (lane == 0) before = e;
            l.vector_prefix[k] = combine(running, before);
            running = combine(running, ps_shfl_idx(inclusive, PS_WARP_LANES - 1));
        }

        /* ---- the tile's map: warp totals in order ---- */
        if (lane == 0) s.warp_totals[warp] = running;
        __syncthreads();
        carry aggregate = e;
        l.warp_prefix = e;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            if (w == (int)warp) l.warp_prefix = aggregate;
            aggregate = combine(aggregate, s.warp_totals[w]);
        }
        return aggregate;
    }

    static __device__ __forceinline__ void consume(const params &p, uint32_t, carry prefix, carry, local &l,
                                                   smem &) {
        const unsigned lane = threadIdx.x % PS_WARP_LANES, warp = threadIdx.x / PS_WARP_LANES;
        /* the prefix is a constant map: its constant terms are the state entering the tile */
        T t0 = prefix_state0(prefix), t1 = prefix_state1(prefix);
        ops::apply(l.warp_prefix, t0, t1);
#pragma unroll
        for (int k = 0; k < VECS; k++) {
            T s0 = t0, s1 = t1;
            ops::apply(l.vector_prefix[k], s0, s1);
            T x[INPUTS][VEC], y[VEC];
#pragma unroll
            for (int j = 0; j < INPUTS; j++) memcpy(x[j], &l.raw[j][k], sizeof(uint4));
            const uint32_t pv = vector_of(warp, lane, k);
#pragma unroll
            for (int i = 0; i < VEC; i++) {
                const int q = Reverse ? VEC - 1 - i : i;
                y[q] = 0;
                if (pv * VEC + q < l.valid) y[q] = ops::step(x[0][q], x[1][q], x[INPUTS - 1][q], s0, s1);
            }
            if (l.fast) {
                uint4 out;
                memcpy(&out, y, sizeof out);
                reinterpret_cast<uint4 *>(p.y + l.base)[pv] = out;
            } else {
#pragma unroll
                for (int i = 0; i < VEC; i++) {
                    const uint32_t o = pv * VEC + i;
                    if (o < l.valid) p.y[l.base + o] = y[i];
                }
            }
        }
    }

    static __device__ __forceinline__ T prefix_state0(const ps_rec_map1<T> &m) { return m.b; }
    static __device__ __forceinline__ T prefix_state1(const ps_rec_map1<T> &) { return 0; }
    static __device__ __forceinline__ T prefix_state0(const ps_rec_map2<T> &m) { return m.r2; }
    static __device__ __forceinline__ T prefix_state1(const ps_rec_map2<T> &m) { return m.q2; }
};

/* ---- host side ----------------------------------------------------------------------------------------- */

/* Vectors per thread and blocks per SM: the inputs stay in registers across the look-back (2 or 3 inputs x
 * VECS 16-byte vectors), so the second order takes fewer vectors; the blocks per SM are the most that compile
 * without spilling on sm_90 (the f64 second order's 48-byte map needs about 155 registers). Not tuned on a GPU
 * yet. */
#define PS_REC_VECS(order) ((order) == 1 ? 4 : 2)
template <class T, int ORDER> struct rec_policy {
    enum {
        VECS = PS_REC_VECS(ORDER),
        MIN_BLOCKS = sizeof(T) == 4 ? (ORDER == 1 ? 3 : 2) : (ORDER == 1 ? 2 : 1),
        TILE = 16 / sizeof(T) * VECS * 256
    };
};

static uint64_t rec_tile(const ps_request *req) {
    const uint64_t vec = 16 / req->elem_bytes;
    return vec * 256 * PS_REC_VECS(req->order);
}

static size_t rec_temp_bytes(const ps_request *req, uint64_t tiles) {
    if (req->order == 2)
        return req->type == PSCAN_TYPE_F32 ? ps_chain_temp_bytes<ps_rec_map2<float> >(tiles)
                                           : ps_chain_temp_bytes<ps_rec_map2<double> >(tiles);
    return req->type == PSCAN_TYPE_F32 ? ps_chain_temp_bytes<ps_rec_map1<float> >(tiles)
                                       : ps_chain_temp_bytes<ps_rec_map1<double> >(tiles);
}

pscan_status ps_cuda_recurrence_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = (req->n + rec_tile(req) - 1) / rec_tile(req);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = rec_temp_bytes(req, tiles);
    return PSCAN_SUCCESS;
}

template <class T, int ORDER, bool Reverse> static cudaError_t rec_launch(const ps_request *req, const ps_cuda_device *dev) {
    typedef rec_policy<T, ORDER> Policy;
    typedef ps_recurrence_program<T, ORDER, Reverse, Policy::VECS, Policy::MIN_BLOCKS> P;
    typename P::params p;
    memset(&p, 0, sizeof p);
    p.in[0] = (const T *)req->in;
    p.in[1] = (const T *)req->in2;
    p.in[2] = ORDER == 2 ? (const T *)req->in3 : NULL;
    p.y = (T *)req->out;
    p.n = req->n;
    p.tiles = (uint32_t)((req->n + P::TILE - 1) / P::TILE);
    uintptr_t addresses = (uintptr_t)req->in | (uintptr_t)req->in2 | (uintptr_t)req->out;
    if (ORDER == 2) addresses |= (uintptr_t)req->in3;
    p.aligned = (addresses & 15u) == 0;
    memcpy(&p.init1, req->init.bytes, sizeof(T));
    memcpy(&p.init2, req->init2.bytes, sizeof(T));
    memcpy(&p.a_const, req->operand.bytes, sizeof(T));
    return ps_chain_single_pass<P>(p, p.tiles, req->temp, dev->stream);
}

template <class T, int ORDER> static cudaError_t rec_run(const ps_request *req, const ps_cuda_device *dev) {
    return req->reverse ? rec_launch<T, ORDER, true>(req, dev) : rec_launch<T, ORDER, false>(req, dev);
}

cudaError_t ps_cuda_recurrence_run(const ps_request *req, const ps_cuda_device *dev) {
    if (req->n == 0) return cudaSuccess;
    if (req->type == PSCAN_TYPE_F32) return req->order == 2 ? rec_run<float, 2>(req, dev) : rec_run<float, 1>(req, dev);
    return req->order == 2 ? rec_run<double, 2>(req, dev) : rec_run<double, 1>(req, dev);
}
