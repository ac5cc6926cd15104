/*
 * chain/tile_state.cuh - the status a tile publishes for the tiles after it, for a carry of any type up to 64
 * bytes, with no bits stolen from the value and no fences. Device-level code only. Internal.
 *
 * An entry is WORDS 64-bit words (at least two, an even number, 16 to 128 bytes). Word j holds 32 bits of the
 * carry's bytes [4j, 4j + 4) in its low half and a tag in its high half: 30 bits of this call's epoch (the low
 * 30 epoch bits in even words, the next 30 in odd ones: 60 in all) and a 2-bit status in the tag's low bits.
 * Each word is stored and loaded as one single-copy-atomic 64-bit access (pairs of them as one relaxed
 * v2.u64), so a reader never sees half a word; it accepts the entry only when every word carries this call's
 * tag and the same status. Every entry is written exactly once per call (a tile's aggregate and its inclusive
 * prefix go to two different entries), so an entry whose words all carry this call's tag holds one write's
 * bytes: a reader never assembles a torn carry. Words left by earlier calls
 * carry other epochs; garbage (fresh memory, another primitive's scratch in a shared workspace) would have to
 * reproduce 60 tag bits and a status pair. Statuses 0 and 3 never validate, so zeroed or 0xff-filled memory
 * is INVALID under any epoch. Only the entries carry data between blocks: relaxed gpu-scope accesses suffice.
 */
#ifndef PSCAN_CHAIN_TILE_STATE_CUH
#define PSCAN_CHAIN_TILE_STATE_CUH

#include <stdint.h>
#include <string.h>

#define PS_TILE_INVALID 0u
#define PS_TILE_AGGREGATE 1u
#define PS_TILE_INCLUSIVE 2u

template <class C> struct ps_tile_state {
    static_assert(sizeof(C) <= 64, "a carry is at most 64 bytes");
    enum { VALUE_WORDS = (sizeof(C) + 3) / 4, WORDS = VALUE_WORDS < 2 ? 2 : (VALUE_WORDS + 1) & ~1 };
    struct __align__(16) entry {
        unsigned long long w[WORDS];
    };

    entry *entries;
    uint32_t tag_lo, tag_hi; /* epoch bits, shifted left by 2: tag = base | status */

    static size_t bytes(uint64_t tiles) { return (size_t)tiles * sizeof(entry); }

    __device__ __forceinline__ void publish(uint32_t tile, unsigned status, const C &value) const {
        uint32_t v[WORDS];
#pragma unroll
        for (int j = 0; j < WORDS; j++) v[j] = 0;
        memcpy(v, &value, sizeof(C));
        unsigned long long *dst = entries[tile].w;
#pragma unroll
        for (int j = 0; j < WORDS; j += 2) {
            const unsigned long long w0 = ((unsigned long long)(tag_lo | status) << 32) | v[j];
            const unsigned long long w1 = ((unsigned long long)(tag_hi | status) << 32) | v[j + 1];
            asm volatile("st.relaxed.gpu.global.v2.u64 [%0], {%1, %2};" ::"l"(dst + j), "l"(w0), "l"(w1) : "memory");
        }
    }

    /* The entry's status (INVALID unless every word carries this call's tag and one status) and its value. */
    __device__ __forceinline__ unsigned read(uint32_t tile, C *value) const {
        uint32_t v[WORDS];
        uint32_t tags_lo = ~0u, tags_hi = ~0u, or_lo = 0, or_hi = 0;
        const unsigned long long *src = entries[tile].w;
#pragma unroll
        for (int j = 0; j < WORDS; j += 2) {
            unsigned long long w0, w1;
            asm volatile("ld.relaxed.gpu.global.v2.u64 {%0, %1}, [%2];" : "=l"(w0), "=l"(w1) : "l"(src + j) : "memory");
            v[j] = (uint32_t)w0;
            v[j + 1] = (uint32_t)w1;
            tags_lo &= (uint32_t)(w0 >> 32), or_lo |= (uint32_t)(w0 >> 32);
            tags_hi &= (uint32_t)(w1 >> 32), or_hi |= (uint32_t)(w1 >> 32);
        }
        memcpy(value, v, sizeof(C));
        /* all even words equal (and == or), all odd words equal, one status in both halves */
        const unsigned st = tags_lo & 3u;
        const bool ok = tags_lo == or_lo && tags_hi == or_hi && (st == PS_TILE_AGGREGATE || st == PS_TILE_INCLUSIVE) &&
                        tags_lo == (tag_lo | st) && tags_hi == (tag_hi | st);
        return ok ? st : PS_TILE_INVALID;
    }
};

#endif /* PSCAN_CHAIN_TILE_STATE_CUH */
