/*
 * cpu_kernels.h - the per type x operator building blocks of the CPU backend. Internal.
 *
 * Four functions per (type, operator), generated from one type list and one operator list in
 * cpu_kernels.c: everything the serial reference and the threaded scan need. All take physical index ranges
 * [begin, end); the scan walks them backwards when reverse is set. The threaded scan also takes, where the
 * processor has them, the vector block kernels of cpu_vector.c (ps_cpu_vector_get).
 */
#ifndef PSCAN_CPU_KERNELS_H
#define PSCAN_CPU_KERNELS_H

#include <stdint.h>

#include "pscan_ops.h"

/* Independent dependency chains per block in the threaded scan phase; 4 hides a float add's latency and still
 * keeps the 4 input and 4 output pointers in registers. */
#define PSCAN_CPU_CHAINS 4

typedef struct ps_cpu_kernels {
    /* *total = in[begin] (+) ... (+) in[end-1], without an initial value; begin < end. */
    void (*reduce)(const void *in, uint64_t begin, uint64_t end, ps_value *total);
    /* Scans [begin, end) with *carry as the value before the first element (in scan order), and leaves in
     * *carry the value after the last. out may equal in. */
    void (*scan)(const void *in, void *out, uint64_t begin, uint64_t end, int exclusive, int reverse,
                 ps_value *carry);
    /* Scans PSCAN_CPU_CHAINS ranges of len elements each, in lockstep: chain c reads [in[c], in[c] + len) and
     * writes [out[c], out[c] + len), backwards if reverse, starting from carry[c], and leaves in carry[c] the
     * value after its last element. in[c] may equal out[c]. */
    void (*chains)(const void *const *in, void *const *out, uint64_t len, int exclusive, int reverse,
                   ps_value *carry);
    /* *acc = *acc (+) x */
    void (*combine)(ps_value *acc, const ps_value *x);
} ps_cpu_kernels;

/* The kernels for a (type, op) pair the core has validated. */
const ps_cpu_kernels *ps_cpu_kernels_get(pscan_type type, pscan_op op);

/* Vector kernels of one whole block for the threaded scan (cpu_vector.c): the same contracts as reduce and
 * scan above, and the scan may stream its output around the cache (stream != 0; it fences before it returns).
 * One chain per block: the vector step needs no interleaved chains to hide latency. */
typedef struct ps_cpu_vector_kernels {
    void (*reduce)(const void *in, uint64_t begin, uint64_t end, ps_value *total);
    void (*scan)(const void *in, void *out, uint64_t begin, uint64_t end, int exclusive, int reverse, int stream,
                 ps_value *carry);
} ps_cpu_vector_kernels;

/* The vector kernels for (type, op) where this build and this processor have them (AVX2 on x86: integer
 * types with sum, or, xor), else NULL. */
const ps_cpu_vector_kernels *ps_cpu_vector_get(pscan_type type, pscan_op op);

/* memcpy whose stores go around the cache (AVX2 streaming stores, then a fence) where this build and processor
 * have them, else memcpy: a large copy then moves 2 bytes of DRAM traffic per byte copied, not 3 (no read for
 * ownership of the destination), as the threaded scan's streamed output does. */
void ps_cpu_copy_stream(void *dst, const void *src, size_t bytes);

#endif /* PSCAN_CPU_KERNELS_H */
