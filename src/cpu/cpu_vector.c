/*
 * cpu_vector.c - AVX2 block kernels for the threaded scan (cpu_threads.c): the reduce and the scan of one block
 * for the integer types and the operators whose identity is zero (sum, or, xor), chosen at run time where the
 * processor has AVX2. Everything else (other operators, floats, other processors) keeps the portable kernels
 * of cpu_kernels.c, which stay the reference.
 *
 * Why. The threaded scan reads each block twice (a reduce from DRAM, then the scan from L2) and must keep up
 * with a 16-core machine's copy, about 6 GB/s of traffic per core. The portable integer kernels are scalar:
 * about one element per cycle for the reduce and for each of the four scan chains, which leaves 4-byte types
 * with little margin once sixteen cores contend for memory. Here both passes take 32 bytes per step.
 *
 * The scan of one 32-byte vector x (8 x i32 shown; every width works the same way):
 *   in-lane prefix:  x (+)= x shifted up by 1, 2, 4, ... elements, zeros in (zero is the identity), inside
 *                    each 128-bit lane (vpslldq);
 *   cross lane:      lane 0's last element, broadcast, (+) into every element of lane 1;
 *   carry:           out = carry (+) x (or carry (+) x shifted up one element, for an exclusive scan);
 *                    carry (+)= x's last element broadcast (computed from x alone, so the loop-carried chain
 *                    is one vector op per 32 bytes).
 * A reverse scan reverses the elements of each vector, scans it forwards and reverses the result back, walking
 * the block from its end. Integer operators are associative, so this regrouping gives exactly the bits of the
 * serial loop; floats are never routed here (their threaded results depend only on the block layout, see the
 * float rule in cpu_backend.c).
 *
 * Streaming stores (stream != 0): the output goes around the cache (vmovntdq, 32-byte aligned, the first
 * unaligned elements and the tail by the scalar step) and an sfence ends the block. A normal store first
 * reads the line it writes (read for ownership): a scan that writes n elements through the cache moves 3n
 * bytes of DRAM traffic against a large copy's 2n. On the 2-core CI machine DRAM was never the limit (the
 * header of cpu_threads.c: non-temporal stores gained nothing there); on 16 cores i32 and i64 scans both
 * stalled at the same ~80 GB/s of counted traffic while the copy did ~95-105, the sign of a memory-side
 * limit. The threaded scan streams only outputs too large to stay in cache (PSCAN_CPU_STREAM_MIN_BYTES).
 *
 * Work: per 32 bytes about 10 vector ops for the scan (6 of them shuffles), 1 for the reduce. Depth per
 * block: its length / (32 bytes), one op each.
 */
#include <string.h>

#include "cpu_kernels.h"

#if (defined(__x86_64__) || defined(__i386__)) && (defined(__GNUC__) || defined(__clang__))
#define PS_CPU_VECTOR_AVX2 1
#include <immintrin.h>
#else
#define PS_CPU_VECTOR_AVX2 0
#endif

#if PS_CPU_VECTOR_AVX2

#define PS_AVX2 __attribute__((target("avx2")))

/* The vector form of each operator, for ES-byte elements (ES is a constant: the branches fold away). */
#define PS_VOP_SUM(ES, a, b)                                                                                 \
    ((ES) == 1   ? _mm256_add_epi8(a, b)                                                                     \
     : (ES) == 2 ? _mm256_add_epi16(a, b)                                                                    \
     : (ES) == 4 ? _mm256_add_epi32(a, b)                                                                    \
                 : _mm256_add_epi64(a, b))
#define PS_VOP_OR(ES, a, b) _mm256_or_si256(a, b)
#define PS_VOP_XOR(ES, a, b) _mm256_xor_si256(a, b)

/* Byte masks for vpshufb, the same in both 128-bit lanes: each lane's last element in all its slots, or the
 * lane's elements in reverse order. Built per block call (32 bytes), not per vector. */
PS_AVX2 static __m256i lane_last_mask(unsigned es) {
    unsigned char m[32];
    for (unsigned b = 0; b < 32; b++) m[b] = (unsigned char)(16 - es + b % es);
    return _mm256_loadu_si256((const __m256i *)m);
}

PS_AVX2 static __m256i lane_reverse_mask(unsigned es) {
    unsigned char m[32];
    for (unsigned b = 0; b < 32; b++) m[b] = (unsigned char)((16 / es - 1 - (b % 16) / es) * es + b % es);
    return _mm256_loadu_si256((const __m256i *)m);
}

/* x's elements in reverse order: within each lane, then the two lanes swapped. */
#define PS_VREVERSE(x, rev) _mm256_permute4x64_epi64(_mm256_shuffle_epi8(x, rev), 0x4E)

/* x shifted up by one element across the whole vector, zero in (the inclusive prefix made exclusive). */
#define PS_VSHIFT1(ES, x)                                                                                    \
    ((ES) == 1   ? _mm256_alignr_epi8(x, _mm256_permute2x128_si256(x, x, 0x08), 15)                          \
     : (ES) == 2 ? _mm256_alignr_epi8(x, _mm256_permute2x128_si256(x, x, 0x08), 14)                          \
     : (ES) == 4 ? _mm256_alignr_epi8(x, _mm256_permute2x128_si256(x, x, 0x08), 12)                          \
                 : _mm256_alignr_epi8(x, _mm256_permute2x128_si256(x, x, 0x08), 8))

/* One vector of the scan: x becomes its inclusive prefix, r the output (carry (+) prefix), carry advances. */
#define PS_VSTEP(OP, ES, x, r, carry, exclusive, last)                                                       \
    {                                                                                                        \
        /* in-lane prefix */                                                                                 \
        if ((ES) <= 1) x = PS_VOP_##OP(ES, x, _mm256_slli_si256(x, 1));                                      \
        if ((ES) <= 2) x = PS_VOP_##OP(ES, x, _mm256_slli_si256(x, 2));                                      \
        if ((ES) <= 4) x = PS_VOP_##OP(ES, x, _mm256_slli_si256(x, 4));                                      \
        x = PS_VOP_##OP(ES, x, _mm256_slli_si256(x, 8));                                                     \
        /* cross lane: lane 0's total into lane 1 */                                                         \
        __m256i t_ = _mm256_shuffle_epi8(x, last);                                                           \
        x = PS_VOP_##OP(ES, x, _mm256_permute2x128_si256(t_, t_, 0x08));                                     \
        /* the vector's total in every element, off the carry's chain */                                     \
        t_ = _mm256_shuffle_epi8(x, last);                                                                   \
        t_ = _mm256_permute2x128_si256(t_, t_, 0x11);                                                        \
        r = PS_VOP_##OP(ES, (exclusive) ? PS_VSHIFT1(ES, x) : x, carry);                                     \
        carry = PS_VOP_##OP(ES, carry, t_);                                                                  \
    }

/* One element in every slot. */
#define PS_VBROADCAST(ES, v)                                                                                 \
    ((ES) == 1   ? _mm256_set1_epi8((char)(v))                                                               \
     : (ES) == 2 ? _mm256_set1_epi16((short)(v))                                                             \
     : (ES) == 4 ? _mm256_set1_epi32((int)(v))                                                               \
                 : _mm256_set1_epi64x((long long)(v)))

/* One element by the scalar operator (the edges of a block, and the unaligned head when streaming). */
#define PS_SCALAR_STEP(OP, T, U, j)                                                                          \
    {                                                                                                        \
        T x_ = in[j], y_ = PSCAN_COMBINE_##OP(T, U, acc, x_);                                                \
        out[j] = exclusive ? acc : y_;                                                                       \
        acc = y_;                                                                                            \
    }

#define PS_VECTOR_DEFINE(OP, op, NAME, name, T, U)                                                           \
    PS_AVX2 static void vreduce_##name##_##op(const void *in_, uint64_t begin, uint64_t end, ps_value *total) { \
        const T *in = (const T *)in_;                                                                        \
        enum { V = 32 / sizeof(T) };                                                                         \
        __m256i a0 = _mm256_setzero_si256(), a1 = a0, a2 = a0, a3 = a0;                                      \
        uint64_t i = begin;                                                                                  \
        for (; i + 4 * V <= end; i += 4 * V) {                                                               \
            a0 = PS_VOP_##OP(sizeof(T), a0, _mm256_loadu_si256((const __m256i *)(in + i)));                  \
            a1 = PS_VOP_##OP(sizeof(T), a1, _mm256_loadu_si256((const __m256i *)(in + i + V)));              \
            a2 = PS_VOP_##OP(sizeof(T), a2, _mm256_loadu_si256((const __m256i *)(in + i + 2 * V)));          \
            a3 = PS_VOP_##OP(sizeof(T), a3, _mm256_loadu_si256((const __m256i *)(in + i + 3 * V)));          \
        }                                                                                                    \
        for (; i + V <= end; i += V) a0 = PS_VOP_##OP(sizeof(T), a0, _mm256_loadu_si256((const __m256i *)(in + i))); \
        a0 = PS_VOP_##OP(sizeof(T), PS_VOP_##OP(sizeof(T), a0, a1), PS_VOP_##OP(sizeof(T), a2, a3));         \
        T lanes[V], acc = (T)0;                                                                              \
        _mm256_storeu_si256((__m256i *)lanes, a0);                                                           \
        for (int k = 0; k < V; k++) acc = PSCAN_COMBINE_##OP(T, U, acc, lanes[k]);                           \
        for (; i < end; i++) acc = PSCAN_COMBINE_##OP(T, U, acc, in[i]);                                     \
        total->name = acc;                                                                                   \
    }                                                                                                        \
    PS_AVX2 static void vscan_##name##_##op(const void *in_, void *out_, uint64_t begin, uint64_t end,        \
                                             int exclusive, int reverse, int stream, ps_value *carry) {      \
        const T *in = (const T *)in_;                                                                        \
        T *out = (T *)out_;                                                                                  \
        enum { V = 32 / sizeof(T) };                                                                         \
        const __m256i last = lane_last_mask(sizeof(T)), rev = lane_reverse_mask(sizeof(T));                  \
        T acc = carry->name;                                                                                 \
        __m256i c, x, r;                                                                                     \
        if ((uintptr_t)out % sizeof(T)) stream = 0; /* never 32-byte aligned: store normally */              \
        if (!reverse) {                                                                                      \
            uint64_t i = begin;                                                                              \
            if (stream)                                                                                      \
                for (; i < end && ((uintptr_t)(out + i) & 31); i++) PS_SCALAR_STEP(OP, T, U, i)              \
            c = PS_VBROADCAST(sizeof(T), acc);                                                               \
            for (; end - i >= V; i += V) {                                                                   \
                x = _mm256_loadu_si256((const __m256i *)(in + i));                                           \
                PS_VSTEP(OP, sizeof(T), x, r, c, exclusive, last)                                            \
                if (stream)                                                                                  \
                    _mm256_stream_si256((__m256i *)(out + i), r);                                            \
                else                                                                                         \
                    _mm256_storeu_si256((__m256i *)(out + i), r);                                            \
            }                                                                                                \
            memcpy(&acc, &c, sizeof acc);                                                                    \
            for (; i < end; i++) PS_SCALAR_STEP(OP, T, U, i)                                                 \
        } else {                                                                                             \
            uint64_t i = end;                                                                                \
            if (stream)                                                                                      \
                for (; i > begin && ((uintptr_t)(out + i) & 31); i--) PS_SCALAR_STEP(OP, T, U, i - 1)        \
            c = PS_VBROADCAST(sizeof(T), acc);                                                               \
            for (; i - begin >= V; i -= V) {                                                                 \
                x = _mm256_loadu_si256((const __m256i *)(in + i - V));                                       \
                x = PS_VREVERSE(x, rev);                                                                     \
                PS_VSTEP(OP, sizeof(T), x, r, c, exclusive, last)                                            \
                r = PS_VREVERSE(r, rev);                                                                     \
                if (stream)                                                                                  \
                    _mm256_stream_si256((__m256i *)(out + i - V), r);                                        \
                else                                                                                         \
                    _mm256_storeu_si256((__m256i *)(out + i - V), r);                                        \
            }                                                                                                \
            memcpy(&acc, &c, sizeof acc);                                                                    \
            for (; i > begin; i--) PS_SCALAR_STEP(OP, T, U, i - 1)                                           \
        }                                                                                                    \
        if (stream) _mm_sfence(); /* the streamed lines are visible before the block is reported done */     \
        carry->name = acc;                                                                                   \
    }

#define PS_VECTOR_DEFINE_TYPE(NAME, name, T, U, LOWEST, HIGHEST)                                             \
    PS_VECTOR_DEFINE(SUM, sum, NAME, name, T, U)                                                             \
    PS_VECTOR_DEFINE(OR, or, NAME, name, T, U)                                                               \
    PS_VECTOR_DEFINE(XOR, xor, NAME, name, T, U)
PSCAN_ARITH_INT_TYPE_LIST(PS_VECTOR_DEFINE_TYPE)

#define PS_VECTOR_ENTRY(NAME, name, OP, op) [PSCAN_TYPE_##NAME][PSCAN_OP_##OP] = {vreduce_##name##_##op, vscan_##name##_##op},
#define PS_VECTOR_ROW(NAME, name, T, U, LOWEST, HIGHEST)                                                     \
    PS_VECTOR_ENTRY(NAME, name, SUM, sum) PS_VECTOR_ENTRY(NAME, name, OR, or) PS_VECTOR_ENTRY(NAME, name, XOR, xor)

/* Rows left out (floats, the other operators) stay NULL: no vector kernel. */
static const ps_cpu_vector_kernels vector_table[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT] = {
    PSCAN_ARITH_INT_TYPE_LIST(PS_VECTOR_ROW)};

const ps_cpu_vector_kernels *ps_cpu_vector_get(pscan_type type, pscan_op op) {
    if (!__builtin_cpu_supports("avx2")) return NULL;
    const ps_cpu_vector_kernels *k = &vector_table[type][op];
    return k->scan ? k : NULL;
}

/* Head by memcpy up to dst's next 32-byte boundary, whole vectors streamed (src read unaligned), tail by memcpy. */
PS_AVX2 static void copy_stream_avx2(unsigned char *dst, const unsigned char *src, size_t bytes) {
    size_t head = (size_t)((32 - ((uintptr_t)dst & 31)) & 31);
    if (head > bytes) head = bytes;
    memcpy(dst, src, head);
    size_t i = head;
    for (; i + 128 <= bytes; i += 128) { /* four loads in flight per step */
        const __m256i a = _mm256_loadu_si256((const __m256i *)(src + i));
        const __m256i b = _mm256_loadu_si256((const __m256i *)(src + i + 32));
        const __m256i c = _mm256_loadu_si256((const __m256i *)(src + i + 64));
        const __m256i d = _mm256_loadu_si256((const __m256i *)(src + i + 96));
        _mm256_stream_si256((__m256i *)(dst + i), a);
        _mm256_stream_si256((__m256i *)(dst + i + 32), b);
        _mm256_stream_si256((__m256i *)(dst + i + 64), c);
        _mm256_stream_si256((__m256i *)(dst + i + 96), d);
    }
    for (; i + 32 <= bytes; i += 32)
        _mm256_stream_si256((__m256i *)(dst + i), _mm256_loadu_si256((const __m256i *)(src + i)));
    memcpy(dst + i, src + i, bytes - i);
    _mm_sfence(); /* the streamed stores are visible before the pool reports the job done */
}

void ps_cpu_copy_stream(void *dst, const void *src, size_t bytes) {
    if (__builtin_cpu_supports("avx2"))
        copy_stream_avx2((unsigned char *)dst, (const unsigned char *)src, bytes);
    else
        memcpy(dst, src, bytes);
}

#else /* no AVX2 kernels on this processor family or compiler: the portable kernels do everything */

const ps_cpu_vector_kernels *ps_cpu_vector_get(pscan_type type, pscan_op op) {
    (void)type;
    (void)op;
    return NULL;
}

void ps_cpu_copy_stream(void *dst, const void *src, size_t bytes) { memcpy(dst, src, bytes); }

#endif
