/*
 * cpu_expand.c - expand on the CPU: the serial reference, and the two pieces the threaded version is built of.
 *
 * Serial: one pass sums the counts (saturating at UINT64_MAX, which keeps the sum associative), then one walk
 * over the items writes each item's run of slots until the capacity or the total is reached.
 *
 * Threaded (cpu_threads.c): the items are cut into one contiguous range per thread and each thread sums its
 * range (ps_cpu_expand_sum); the caller scans the range sums in order. Then the *output* slots, not the items,
 * are cut into equal pieces: thread t finds the item holding its first slot (the last range starting at or
 * before it, then a walk through that range's counts: ps_cpu_expand_locate) and writes its slots from there
 * (ps_cpu_expand_fill). One item with a huge count is shared by all threads, and no n-sized temp is needed.
 * Work: two reads of the counts, one write per slot; each thread's walk reads at most one range again.
 */
#include <string.h>

#include "cpu_backend.h"

static uint64_t count_at(const ps_request *req, uint64_t i) {
    return req->type == PSCAN_TYPE_U32 ? (uint64_t)((const uint32_t *)req->in)[i] : ((const uint64_t *)req->in)[i];
}

/* a + b, or UINT64_MAX when that overflows: associative, so every order of summing agrees. */
static uint64_t add_saturating(uint64_t a, uint64_t b) { return a + b < a ? UINT64_MAX : a + b; }

uint64_t ps_cpu_expand_sum(const ps_request *req, uint64_t begin, uint64_t end) {
    uint64_t sum = 0;
    for (uint64_t i = begin; i < end; i++) sum = add_saturating(sum, count_at(req, i));
    return sum;
}

void ps_cpu_expand_locate(const ps_request *req, uint64_t item, uint64_t start, uint64_t slot, uint64_t *found,
                          uint64_t *rank) {
    for (;;) {
        const uint64_t next = add_saturating(start, count_at(req, item));
        if (next > slot) break; /* the caller guarantees slot < the total: the loop ends before item n */
        start = next;
        item++;
    }
    *found = item;
    *rank = slot - start;
}

#define PS_CPU_EXPAND_SHORT 8 /* slots */

/* m slots from slot on, each `value` (an item's index) or value + k (its ranks, step 1), as 4- or 8-byte words:
 * plain loops the compiler vectorizes. */
static inline void fill_index(void *out, int wide, uint64_t slot, uint64_t m, uint64_t value, uint64_t step) {
    if (wide) {
        uint64_t *p = (uint64_t *)out + slot;
        for (uint64_t k = 0; k < m; k++) p[k] = value + step * k;
    } else {
        uint32_t *p = (uint32_t *)out + slot;
        const uint32_t v = (uint32_t)value, s = (uint32_t)step;
        for (uint64_t k = 0; k < m; k++) p[k] = v + s * (uint32_t)k;
    }
}

/* m copies of the vb-byte value at v from slot on. */
static inline void fill_value(unsigned char *out, size_t vb, uint64_t slot, uint64_t m, const unsigned char *v) {
#define PS_CPU_FILL_AS(T)                                                                                         \
    do {                                                                                                          \
        T x, *p = (T *)(void *)(out + slot * sizeof(T));                                                          \
        memcpy(&x, v, sizeof x);                                                                                  \
        for (uint64_t k = 0; k < m; k++) memcpy(p + k, &x, sizeof x);                                             \
    } while (0)
    switch (vb) {
    case 1: memset(out + slot, *v, (size_t)m); break;
    case 2: PS_CPU_FILL_AS(uint16_t); break;
    case 4: PS_CPU_FILL_AS(uint32_t); break;
    case 8: PS_CPU_FILL_AS(uint64_t); break;
    default:
        for (uint64_t k = 0; k < m; k++) memcpy(out + (slot + k) * vb, v, vb);
        break;
    }
#undef PS_CPU_FILL_AS
}

/* Each item's run of slots is one loop per output, everything the loop reads in locals (the stores could alias
 * *req as far as the compiler can tell). Before (a branch and a reload of the request per output and slot): 4-5 ns
 * a slot, 0.02-0.03 of the streaming copy on the 2-core machine of 2026-11-28; now 1.7 ns at counts of 0-8 and
 * 0.5 ns at 0-128 (serial), about the speed of a plain store loop there (25 ms for 64 MiB). Staging windows
 * streamed out around the cache (as the scan's large outputs are) gained nothing on that machine: not kept. */
void ps_cpu_expand_fill(const ps_request *req, uint64_t item, uint64_t rank, uint64_t slot, uint64_t end) {
    const size_t vb = req->value_bytes;
    void *const out = req->out, *const ranks = req->ranks;
    unsigned char *const values_out = (unsigned char *)req->out2;
    const unsigned char *const values = (const unsigned char *)req->in2;
    const int wide = req->index_type != PSCAN_TYPE_U32;
    const uint32_t *const c32 = req->type == PSCAN_TYPE_U32 ? (const uint32_t *)req->in : NULL;
    const uint64_t *const c64 = (const uint64_t *)req->in;
    while (slot < end) {
        const uint64_t count = c32 ? (uint64_t)c32[item] : c64[item];
        if (rank < count) {
            const uint64_t m = count - rank < end - slot ? count - rank : end - slot;
            /* a short run writes PS_CPU_EXPAND_SHORT slots whatever its length, when they are this range's: the
             * next run writes over the rest, and a loop of constant length (unrolled) beats one whose length the
             * branch predictor cannot guess (counts of 0-8: 2x) */
            if (m <= PS_CPU_EXPAND_SHORT && end - slot >= PS_CPU_EXPAND_SHORT) {
                if (out) fill_index(out, wide, slot, PS_CPU_EXPAND_SHORT, item, 0);
                if (ranks) fill_index(ranks, wide, slot, PS_CPU_EXPAND_SHORT, rank, 1);
                if (vb) fill_value(values_out, vb, slot, PS_CPU_EXPAND_SHORT, values + item * vb);
            } else {
                if (out) fill_index(out, wide, slot, m, item, 0);
                if (ranks) fill_index(ranks, wide, slot, m, rank, 1);
                if (vb) fill_value(values_out, vb, slot, m, values + item * vb);
            }
            slot += m;
        }
        item++;
        rank = 0;
    }
}

void ps_cpu_expand(const ps_request *req) {
    const uint64_t total = ps_cpu_expand_sum(req, 0, req->n);
    ps_cpu_expand_fill(req, 0, 0, 0, total < req->capacity ? total : req->capacity);
    memcpy(req->count, &total, sizeof total);
}
