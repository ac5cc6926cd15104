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

static void store_index(void *out, pscan_type type, uint64_t slot, uint64_t value) {
    if (type == PSCAN_TYPE_U32)
        ((uint32_t *)out)[slot] = (uint32_t)value;
    else
        ((uint64_t *)out)[slot] = value;
}

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

void ps_cpu_expand_fill(const ps_request *req, uint64_t item, uint64_t rank, uint64_t slot, uint64_t end) {
    const size_t vb = req->value_bytes;
    while (slot < end) {
        const uint64_t count = count_at(req, item);
        for (; rank < count && slot < end; rank++, slot++) {
            if (req->out) store_index(req->out, req->index_type, slot, item);
            if (req->ranks) store_index(req->ranks, req->index_type, slot, rank);
            if (vb) memcpy((unsigned char *)req->out2 + slot * vb, (const unsigned char *)req->in2 + item * vb, vb);
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
