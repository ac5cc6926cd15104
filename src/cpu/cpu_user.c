/*
 * cpu_user.c - the CPU's building blocks for a user operator: its host function in the shapes the serial and
 * threaded scans and reduces use (cpu_backend.c, cpu_threads.c), the counterparts of cpu_kernels.c's table.
 *
 * Every loop combines the carry (everything earlier in scan order) on the left with the next element on the
 * right, so a non-commutative operator gets the order it was written for; a reverse range is walked from its
 * end. The host function writes to a separate value (its out never overlaps its operands), which is copied
 * back: one extra copy of at most 32 bytes per element, small beside an indirect call.
 */
#include <string.h>

#include "cpu_backend.h"

void ps_cpu_user_combine(const pscan_operator *op, ps_value *acc, const ps_value *x) {
    ps_value r;
    op->host_combine(acc->bytes, x->bytes, r.bytes, op->user);
    memcpy(acc->bytes, r.bytes, op->elem_bytes);
}

void ps_cpu_user_reduce(const pscan_operator *op, const void *in_, uint64_t begin, uint64_t end, int reverse,
                        ps_value *total) {
    const unsigned char *in = (const unsigned char *)in_;
    const size_t es = op->elem_bytes;
    ps_value acc, r;
    memcpy(acc.bytes, in + (reverse ? end - 1 : begin) * es, es);
    for (uint64_t k = 1; k < end - begin; k++) {
        const uint64_t i = reverse ? end - 1 - k : begin + k;
        op->host_combine(acc.bytes, in + i * es, r.bytes, op->user);
        memcpy(acc.bytes, r.bytes, es);
    }
    *total = acc;
}

void ps_cpu_user_scan(const pscan_operator *op, const void *in_, void *out_, uint64_t begin, uint64_t end,
                      int exclusive, int reverse, ps_value *carry) {
    const unsigned char *in = (const unsigned char *)in_;
    unsigned char *out = (unsigned char *)out_;
    const size_t es = op->elem_bytes;
    ps_value acc = *carry, x, r;
    for (uint64_t k = 0; k < end - begin; k++) {
        const uint64_t i = reverse ? end - 1 - k : begin + k;
        memcpy(x.bytes, in + i * es, es); /* read before out[i] is written: in place works */
        op->host_combine(acc.bytes, x.bytes, r.bytes, op->user);
        memcpy(out + i * es, exclusive ? acc.bytes : r.bytes, es);
        memcpy(acc.bytes, r.bytes, es);
    }
    *carry = acc;
}
