/*
 * cpu_select.c - select (compact) and partition on the CPU: the serial reference for both.
 *
 * One pass counts the kept items (the start of a partition's second group), a second moves each item to the
 * next slot of its group (select: kept items only). Both groups keep their input order. Keys are decided by
 * the type's own comparison (generated from the type list), a block of items at a time.
 *
 * The serial select needs no count first and moves in one pass; the serial partition reads its keys twice
 * (count, then move). The same two functions are the threaded version's phases (cpu_threads.c: each thread
 * counts its range, the counts are scanned, each thread moves its range from its offsets).
 */
#include <string.h>

#include "cpu_backend.h"

/* Items are decided a block at a time into a byte array, the predicate chosen once per block, so that each
 * loop is one comparison the compiler vectorises (deciding item by item through a function pointer and a
 * switch cost about 10 ns per item). Unique keeps the input's first item before its loop: tested inside the loop,
 * `begin + i == 0` kept it from vectorising (2^20 keys, runs of 2, the 2-core machine, 2026-11-30,
 * docs/bench/cpu2-select-unique.csv, medians of three rounds: u8 2.16 -> 1.11 ms serial, i32 2.38 -> 1.73). */
#define PS_SELECT_BLOCK 4096

#define PS_SELECT_MARK_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    static void mark_##name(const ps_request *req, uint64_t begin, size_t len, uint8_t *keep) {              \
        const T *k = (const T *)req->in + begin, c = req->operand.name;                                      \
        switch (req->pred) {                                                                                 \
        case PSCAN_PRED_NONZERO: for (size_t i = 0; i < len; i++) keep[i] = k[i] != (T)0; break;             \
        case PSCAN_PRED_EQ: for (size_t i = 0; i < len; i++) keep[i] = k[i] == c; break;                     \
        case PSCAN_PRED_NE: for (size_t i = 0; i < len; i++) keep[i] = k[i] != c; break;                     \
        case PSCAN_PRED_LT: for (size_t i = 0; i < len; i++) keep[i] = k[i] < c; break;                      \
        case PSCAN_PRED_LE: for (size_t i = 0; i < len; i++) keep[i] = k[i] <= c; break;                     \
        case PSCAN_PRED_GT: for (size_t i = 0; i < len; i++) keep[i] = k[i] > c; break;                      \
        case PSCAN_PRED_UNIQUE: { /* bit for bit against the item before (begin - 1 too: a thread's range); */ \
            size_t i = 0;         /* the input's first item, kept, outside the loop: the loop vectorises */   \
            if (begin == 0 && len > 0) keep[i++] = 1;                                                        \
            for (; i < len; i++) keep[i] = memcmp(k + i, k + i - 1, sizeof(T)) != 0;                         \
            break;                                                                                           \
        }                                                                                                    \
        default: for (size_t i = 0; i < len; i++) keep[i] = k[i] >= c; break;                               \
        }                                                                                                    \
    }
PSCAN_ARITH_TYPE_LIST(PS_SELECT_MARK_)
#undef PS_SELECT_MARK_

typedef void (*mark_fn)(const ps_request *req, uint64_t begin, size_t len, uint8_t *keep);

static mark_fn mark_of(pscan_type type) {
    switch (type) {
#define PS_SELECT_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    case PSCAN_TYPE_##NAME: return mark_##name;
        PSCAN_ARITH_TYPE_LIST(PS_SELECT_CASE_)
#undef PS_SELECT_CASE_
    default: return mark_u8; /* the core has validated the type */
    }
}

/* keep[0 .. len) for items begin .. begin + len: from the flags, or the predicate. */
static void mark(const ps_request *req, mark_fn fn, uint64_t begin, size_t len, uint8_t *keep) {
    if (!req->flags) {
        fn(req, begin, len, keep);
        return;
    }
    const uint8_t *f = (const uint8_t *)req->flags + begin;
    for (size_t i = 0; i < len; i++) keep[i] = f[i] != 0;
}

uint64_t ps_cpu_select_count(const ps_request *req, uint64_t begin, uint64_t end) {
    const mark_fn fn = mark_of(req->type);
    uint8_t keep[PS_SELECT_BLOCK];
    uint64_t kept = 0;
    for (uint64_t b = begin; b < end; b += PS_SELECT_BLOCK) {
        const size_t len = (size_t)(end - b < PS_SELECT_BLOCK ? end - b : PS_SELECT_BLOCK);
        mark(req, fn, b, len, keep);
        for (size_t i = 0; i < len; i++) kept += keep[i];
    }
    return kept;
}

/* Moves a block's items into two staging runs without a branch per item (a kept/rejected branch on random
 * data mispredicts half the time): every item is written to the end of both runs and only the run it belongs
 * to advances (a select stages its kept run alone). The runs then go out with one memcpy each, so nothing is
 * written past a group's last item (the output beyond *count stays as it was, and threads never touch each
 * other's slots). Keys alone, the common case, take a loop per key width (a switch on the width for every item,
 * which the compiler left in the loop, cost more than the moves). 2^22 keys > the midpoint on the 2-core machine
 * (2026-11-28, docs/bench/cpu-select.csv), serial / threaded ms, with the select's count dropped: select i32
 * 12.2-17.0 / 8.8-9.2 -> 9.8-10.4 / 6.7-7.1, i64 19-30 / 15.7 -> 14-16 / 12.1-12.5, u8 12.6-13.3 / 6.4-6.8 ->
 * 3.6-7.4 / 4.6-4.9; partition i32 12.5-12.7 / 9.1-9.7 -> 8.7-13.4 / 6.3-6.8 (i64 serial no gain). */
#define PS_SELECT_STAGE 1024

/* Stages keys [0, len) of src by keep: kept ones into k0 (and, with both, the others into k1). */
#define PS_SELECT_STAGE_KEYS_(T)                                                                                 \
    static void stage_keys_##T(const unsigned char *src, const uint8_t *keep, size_t len, int both,              \
                               unsigned char *k0, unsigned char *k1, size_t *kept, size_t *rejected) {           \
        size_t a = 0, r = 0;                                                                                     \
        if (both)                                                                                                \
            for (size_t i = 0; i < len; i++) {                                                                   \
                T v;                                                                                             \
                memcpy(&v, src + i * sizeof(T), sizeof(T));                                                      \
                memcpy(k0 + a * sizeof(T), &v, sizeof(T));                                                       \
                memcpy(k1 + r * sizeof(T), &v, sizeof(T));                                                       \
                a += keep[i];                                                                                    \
                r += 1u - keep[i];                                                                               \
            }                                                                                                    \
        else                                                                                                     \
            for (size_t i = 0; i < len; i++) {                                                                   \
                T v;                                                                                             \
                memcpy(&v, src + i * sizeof(T), sizeof(T));                                                      \
                memcpy(k0 + a * sizeof(T), &v, sizeof(T));                                                       \
                a += keep[i];                                                                                    \
            }                                                                                                    \
        *kept = a;                                                                                               \
        *rejected = len - a;                                                                                     \
    }
PS_SELECT_STAGE_KEYS_(uint8_t)
PS_SELECT_STAGE_KEYS_(uint16_t)
PS_SELECT_STAGE_KEYS_(uint32_t)
PS_SELECT_STAGE_KEYS_(uint64_t)
#undef PS_SELECT_STAGE_KEYS_

uint64_t ps_cpu_select_move(const ps_request *req, uint64_t begin, uint64_t end, uint64_t kept_at,
                            uint64_t rejected_at) {
    const mark_fn fn = mark_of(req->type);
    const int partition = req->prim == PS_PRIM_PARTITION;
    const size_t kb = req->elem_bytes, vb = req->value_bytes;
    const unsigned char *in = (const unsigned char *)req->in, *in2 = (const unsigned char *)req->in2;
    unsigned char *out = (unsigned char *)req->out, *out2 = (unsigned char *)req->out2;
    uint8_t keep[PS_SELECT_STAGE];
    unsigned char keys[2][PS_SELECT_STAGE * 8 + 8], values[2][PS_SELECT_STAGE * 8 + 8];
    for (uint64_t b = begin; b < end; b += PS_SELECT_STAGE) {
        const size_t len = (size_t)(end - b < PS_SELECT_STAGE ? end - b : PS_SELECT_STAGE);
        size_t kept = 0, rejected = 0;
        mark(req, fn, b, len, keep);
        if (!vb) {
            const unsigned char *src = in + b * kb;
            switch (kb) {
            case 1: stage_keys_uint8_t(src, keep, len, partition, keys[0], keys[1], &kept, &rejected); break;
            case 2: stage_keys_uint16_t(src, keep, len, partition, keys[0], keys[1], &kept, &rejected); break;
            case 4: stage_keys_uint32_t(src, keep, len, partition, keys[0], keys[1], &kept, &rejected); break;
            default: stage_keys_uint64_t(src, keep, len, partition, keys[0], keys[1], &kept, &rejected); break;
            }
        } else {
            for (size_t i = 0; i < len; i++) {
                const unsigned char *k = in + (b + i) * kb, *v = in2 + (b + i) * vb;
                ps_cpu_copy_element(keys[0] + kept * kb, k, kb);
                ps_cpu_copy_element(keys[1] + rejected * kb, k, kb);
                ps_cpu_copy_element(values[0] + kept * vb, v, vb);
                ps_cpu_copy_element(values[1] + rejected * vb, v, vb);
                kept += keep[i];
                rejected += 1u - keep[i];
            }
        }
        memcpy(out + kept_at * kb, keys[0], kept * kb);
        if (vb) memcpy(out2 + kept_at * vb, values[0], kept * vb);
        kept_at += kept;
        if (partition) {
            memcpy(out + rejected_at * kb, keys[1], rejected * kb);
            if (vb) memcpy(out2 + rejected_at * vb, values[1], rejected * vb);
            rejected_at += rejected;
        }
    }
    return kept_at;
}

/* A partition counts first (the second group starts after the kept items); a select needs no count before it
 * moves, so it reads its keys once. */
void ps_cpu_select(const ps_request *req) {
    uint64_t kept = 0;
    if (req->prim == PS_PRIM_PARTITION) {
        kept = ps_cpu_select_count(req, 0, req->n);
        ps_cpu_select_move(req, 0, req->n, 0, kept);
    } else {
        kept = ps_cpu_select_move(req, 0, req->n, 0, 0);
    }
    memcpy(req->count, &kept, sizeof kept);
}
