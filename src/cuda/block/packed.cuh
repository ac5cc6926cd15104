/*
 * block/packed.cuh - a 16-byte vector of 1- or 2-byte integers scanned a 32-bit word at a time (SIMD within a
 * register) for the built-in operators that have a packed form: min, max, and, or, xor, and the sum of 1-byte ones.
 * The scan program (5_decoupled_lookback.cu, PS_SCAN_PACKED) uses it inside each thread's vectors. Device-level code;
 * every function also runs on the host, where tests/test_packed.cu checks it against the element-at-a-time scan.
 * Internal.
 *
 * Why. A vector holds 16 u8 or 8 u16 elements. Scanned one at a time, each element is taken out of its word,
 * combined and put back, and min and max must also clear or sign-extend what was taken out; ptxas for the u16 max
 * at 13 vectors spent about 3400 instructions a thread against 3328 for the sum, and the H200 runs the u8 sum at
 * 0.85 of copy and the u8 max at 0.64 where 4-byte sums run at 0.93 (docs/performance.md, seventeenth session).
 * Packed, a word's lanes combine in one instruction (__vmaxu4, __vmins2, ...; and, or, xor are the plain word ops):
 *
 *   inside a word:   w = w (+) (w << b | e)       b = 8 and 16 bits for bytes, 16 for halves (e: the identity
 *                                                 in the lanes shifted in), log2 of the lanes steps
 *   across words:    w[j] = w[j] (+) top(w[j-1])  top: the last lane copied to every lane (one byte permute)
 *   the result:      y = r (+) x                  r copied to every lane; exclusive: x moved one lane up first
 *                                                 (a funnel shift across the four words, the identity shifted in)
 *
 * so a vector of u8 takes 8 + 3 combines and 3 permutes instead of 15 combines with 16 extracts and inserts.
 * Measured (H200, eighteenth session): u16 max 0.73 -> 0.92 of copy, u8 max 0.67 -> 0.77; the sums, whose element
 * combine is a plain add, measured slower packed that way (u8 0.858 -> 0.824, __vadd4 being several instructions
 * on sm_90). The sum has a word scan of its own (ps_packed_word, below: the even and the odd bytes in 16-bit
 * fields, one multiply-add for the pairs' prefixes) and lanes added without carries across them (3-4 logic ops);
 * with it the u8 sum gains 1-2 points of copy at 2^24-2^30 in the large tier (twenty-second session), the u16 sum
 * nothing (kept unpacked).
 * Every operator here is commutative and exact on integers, so the order of a packed combine's operands does not
 * change a bit: the same results as the element-at-a-time scan. Reverse scans mirror it (shifts right, the first
 * lane copied).
 */
#ifndef PSCAN_BLOCK_PACKED_CUH
#define PSCAN_BLOCK_PACKED_CUH

#include <stdint.h>

/* #pragma unroll for the device passes only: these functions are __host__ too (tests/test_packed.cu), and the host
 * compiler warns of a pragma it does not know (-Wunknown-pragmas) in every file that includes this one. */
#ifdef __CUDA_ARCH__
#define PS_PACKED_UNROLL _Pragma("unroll")
#else
#define PS_PACKED_UNROLL
#endif

/* ps_packed<T, Op>::value: whether T (a 1- or 2-byte integer) under Op has a packed form, and then
 * ps_packed<T, Op>::combine(a, b), the word's lanes combined. None for other operators (a user's: NVRTC compiles
 * this file with the scan program, user_op.cu, and sees only this primary template). */
template <class T, class Op> struct ps_packed {
    enum { value = 0 };
};

#ifndef __CUDACC_RTC__
#include "block/ops.cuh"

/* The packed word combine of each operator, for lanes of B bytes (1 or 2), signed (S) or not; PS_PACKED_BYTES_<OP>:
 * the widest lanes (bytes) that take it, 0 for none. On the host, lane by lane (tests/test_packed.cu).
 * The sum is packed for 1-byte lanes only: H200 (twenty-second session, docs/bench/h200-scan-packed-sum.csv;
 * tools/tune/variants.sh tools/tune/tune_scan.cu OUT "base=" "pks=-DPS_PACKED_BYTES_SUM=2" -- --types defaults), of
 * copy at 2^24 / 2^26 / 2^28 / 2^30, u8 sum 0.675 / 0.764 / 0.864 / 0.918 -> 0.692 / 0.778 / 0.884 / 0.925 and u16
 * sum 0.804 / 0.894 / 0.944 / 0.957 -> 0.778 / 0.892 / 0.948 / 0.959. (With __vadd4 and the generic word scan, the
 * eighteenth session measured the u8 sum slower packed: 0.858 -> 0.824.) */
#ifndef PS_PACKED_BYTES_SUM
#define PS_PACKED_BYTES_SUM 1
#endif
#define PS_PACKED_BYTES_PRODUCT 0
#define PS_PACKED_BYTES_MIN 2
#define PS_PACKED_BYTES_MAX 2
#define PS_PACKED_BYTES_AND 2
#define PS_PACKED_BYTES_OR 2
#define PS_PACKED_BYTES_XOR 2
#ifdef __CUDA_ARCH__
#define PS_PACKED_MIN(B, S, a, b)                                                                            \
    ((B) == 1 ? ((S) ? __vmins4(a, b) : __vminu4(a, b)) : ((S) ? __vmins2(a, b) : __vminu2(a, b)))
#define PS_PACKED_MAX(B, S, a, b)                                                                            \
    ((B) == 1 ? ((S) ? __vmaxs4(a, b) : __vmaxu4(a, b)) : ((S) ? __vmaxs2(a, b) : __vmaxu2(a, b)))
#else
#define PS_PACKED_MIN(B, S, a, b) ps_packed_lanes<B, S>(a, b, false)
#define PS_PACKED_MAX(B, S, a, b) ps_packed_lanes<B, S>(a, b, true)
#endif
/* the lanes' sums without carries across lanes: each lane's low bits added, its top bit XORed back in */
#define PS_PACKED_SUM(B, S, a, b)                                                                            \
    ((((a) & ((B) == 1 ? 0x7f7f7f7fu : 0x7fff7fffu)) + ((b) & ((B) == 1 ? 0x7f7f7f7fu : 0x7fff7fffu))) ^     \
     (((a) ^ (b)) & ((B) == 1 ? 0x80808080u : 0x80008000u)))
#define PS_PACKED_PRODUCT(B, S, a, b) (a) /* none: never called (PS_PACKED_BYTES_PRODUCT) */
#define PS_PACKED_AND(B, S, a, b) ((a) & (b))
#define PS_PACKED_OR(B, S, a, b) ((a) | (b))
#define PS_PACKED_XOR(B, S, a, b) ((a) ^ (b))

/* The host's lane-by-lane form of the SIMD intrinsics above: the lanes' min, or max. */
template <int B, bool S> static inline uint32_t ps_packed_lanes(uint32_t a, uint32_t b, bool max) {
    uint32_t r = 0;
    for (int lane = 0; lane < 4 / B; lane++) {
        const int shift = 8 * B * lane;
        const uint32_t mask = B == 1 ? 0xffu : 0xffffu;
        const uint32_t ua = (a >> shift) & mask, ub = (b >> shift) & mask;
        const int32_t sa = B == 1 ? (int32_t)(int8_t)ua : (int32_t)(int16_t)ua;
        const int32_t sb = B == 1 ? (int32_t)(int8_t)ub : (int32_t)(int16_t)ub;
        const bool less = S ? sa < sb : ua < ub;
        const uint32_t v = less != max ? ua : ub;
        r |= (v & mask) << shift;
    }
    return r;
}

#define PS_PACKED_OP_(OP, op)                                                                                \
    template <class T> struct ps_packed<T, ps_cuda_op_##op> {                                                \
        enum { value = (int)sizeof(T) <= PS_PACKED_BYTES_##OP && (T)0.5 == (T)0 };                           \
        static __host__ __device__ __forceinline__ uint32_t combine(uint32_t a, uint32_t b) {                \
            return PS_PACKED_##OP((int)sizeof(T), (T)-1 < (T)0, a, b);                                       \
        }                                                                                                    \
    };
PSCAN_OP_LIST(PS_PACKED_OP_)
#undef PS_PACKED_OP_
#endif /* __CUDACC_RTC__ */

/* Lane 0 of w (Last: the last lane) copied to every lane; x copied to every lane. */
template <class T, bool Last> static __host__ __device__ __forceinline__ uint32_t ps_packed_spread(uint32_t w) {
#ifdef __CUDA_ARCH__
    return __byte_perm(w, 0, sizeof(T) == 1 ? (Last ? 0x3333 : 0x0000) : (Last ? 0x3232 : 0x1010));
#else
    const uint32_t lane = Last ? w >> (32 - 8 * sizeof(T)) : w & (sizeof(T) == 1 ? 0xffu : 0xffffu);
    return lane * (sizeof(T) == 1 ? 0x01010101u : 0x00010001u);
#endif
}
template <class T> static __host__ __device__ __forceinline__ uint32_t ps_packed_splat(T x) {
    return (uint32_t)(sizeof(T) == 1 ? (uint8_t)x : (uint16_t)x) * (sizeof(T) == 1 ? 0x01010101u : 0x00010001u);
}
/* hi:lo shifted left (up) by s bits, the high word; and right (down), the low word. */
static __host__ __device__ __forceinline__ uint32_t ps_packed_up(uint32_t lo, uint32_t hi, unsigned s) {
#ifdef __CUDA_ARCH__
    return __funnelshift_l(lo, hi, s);
#else
    return (uint32_t)(((((uint64_t)hi << 32) | lo) << s) >> 32);
#endif
}
static __host__ __device__ __forceinline__ uint32_t ps_packed_down(uint32_t lo, uint32_t hi, unsigned s) {
#ifdef __CUDA_ARCH__
    return __funnelshift_r(lo, hi, s);
#else
    return (uint32_t)((((uint64_t)hi << 32) | lo) >> s);
#endif
}

/* The inclusive scan of one word's lanes (Reverse: from the top lane): the word combined with itself shifted by
 * one lane, then two, e (the identity in every lane) shifted in. */
template <class T, class Op, bool Reverse> struct ps_packed_word {
    static __host__ __device__ __forceinline__ uint32_t scan(uint32_t w, uint32_t e) {
        PS_PACKED_UNROLL
        for (unsigned s = 8 * sizeof(T); s < 32; s *= 2)
            w = ps_packed<T, Op>::combine(w, Reverse ? ps_packed_down(w, e, s) : ps_packed_up(e, w, s));
        return w;
    }
};
#ifndef __CUDACC_RTC__
/* The sum's by integer arithmetic. 2-byte lanes: one multiply (the low lane's carry falls off the word's top).
 * 1-byte lanes: the even and the odd ones apart in 16-bit fields, whose headroom takes the carries; t = e + o holds
 * the pairs' sums, and the fields' low bytes are the results. */
template <class T, bool Reverse> struct ps_packed_word<T, ps_cuda_op_sum, Reverse> {
    static __host__ __device__ __forceinline__ uint32_t scan(uint32_t w, uint32_t) {
        if (sizeof(T) == 2) return Reverse ? ((w + (w >> 16)) & 0xffffu) | (w & 0xffff0000u) : w * 0x10001u;
        const uint32_t e = w & 0x00ff00ffu, o = (w >> 8) & 0x00ff00ffu, t = e + o;
        if (Reverse) { /* u = [b0 + b1 + b2 + b3, b2 + b3], v = [b1 + b2 + b3, b3] */
            const uint32_t u = t + (t >> 16), v = o + (t >> 16);
            return (u & 0x00ff00ffu) | (v & 0x00ff00ffu) << 8;
        }
        const uint32_t u = t * 0x10001u, v = e + (u << 16); /* u = [b0 + b1, all four], v = [b0, b0 + b1 + b2] */
        return (v & 0x00ff00ffu) | (u & 0x00ff00ffu) << 8;
    }
};
#endif

/* The inclusive scan of the vector's elements in place, in element order (Reverse: from the last); returns the
 * vector's total (the last element's inclusive value in scan order). */
template <class T, class Op, bool Reverse>
static __host__ __device__ __forceinline__ T ps_packed_scan(uint32_t w[4]) {
    typedef ps_packed<T, Op> K;
    const uint32_t e = ps_packed_splat<T>(Op::template identity<T>());
    PS_PACKED_UNROLL
    for (int j = 0; j < 4; j++) w[j] = ps_packed_word<T, Op, Reverse>::scan(w[j], e);
    PS_PACKED_UNROLL
    for (int j = 1; j < 4; j++) {
        const int to = Reverse ? 3 - j : j, from = Reverse ? 4 - j : j - 1;
        w[to] = K::combine(w[to], ps_packed_spread<T, !Reverse>(w[from]));
    }
    return Reverse ? (T)w[0] : (T)(w[3] >> (32 - 8 * sizeof(T)));
}

/* The vector's results from its inclusive scan w (in place) and r, everything before the vector: r (+) w, or for
 * an exclusive scan r (+) w moved one element along (r itself for the first element). */
template <class T, class Op, bool Reverse>
static __host__ __device__ __forceinline__ void ps_packed_finish(uint32_t w[4], T r, bool exclusive) {
    typedef ps_packed<T, Op> K;
    const unsigned s = 8 * sizeof(T);
    if (exclusive) {
        const uint32_t e = ps_packed_splat<T>(Op::template identity<T>());
        if (Reverse) {
            PS_PACKED_UNROLL
            for (int j = 0; j < 4; j++) w[j] = ps_packed_down(w[j], j < 3 ? w[j + 1] : e, s);
        } else {
            PS_PACKED_UNROLL
            for (int j = 3; j >= 0; j--) w[j] = ps_packed_up(j > 0 ? w[j - 1] : e, w[j], s);
        }
    }
    const uint32_t rr = ps_packed_splat<T>(r);
    PS_PACKED_UNROLL
    for (int j = 0; j < 4; j++) w[j] = K::combine(rr, w[j]);
}

#endif /* PSCAN_BLOCK_PACKED_CUH */
