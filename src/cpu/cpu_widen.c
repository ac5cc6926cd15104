/*
 * cpu_widen.c - the widened scan (PSCAN_SCAN_WIDEN) on the CPU: elements of a narrow type summed or multiplied into
 * its 64-bit type. The input is converted a block at a time into a buffer on the stack, and each block is scanned
 * by the wide type's own kernel (cpu_kernels.c) with the carry running through, so there is no second scan to keep
 * right: the conversion is the only new code.
 *
 * SERIAL: the blocks in scan order on the calling thread. THREADS: the same blocks reduced in parallel, their
 * carries chained in scan order on one thread, the blocks scanned in parallel from their carries. The blocks do not
 * depend on the thread count, so a float sum gives the same bits on any pool (the rule cpu_backend.c states for
 * every threaded float scan). Memory: reads in twice under THREADS (once to reduce, once to scan), out once.
 */
#include <string.h>

#include "cpu_backend.h"
#include "cpu_kernels.h"
#include "pscan_ops.h"

/* Elements converted at a time (32 KiB of the wide type on the stack), and the elements of one THREADS block. */
#define PS_WIDEN_CHUNK 4096u
#define PS_WIDEN_BLOCK ((uint64_t)1 << 16)

typedef void (*ps_widen_fn)(const void *in, uint64_t begin, uint64_t count, void *wide);

#define PS_WIDEN_FN_(NAME, T, WIDE, W)                                                                       \
    static void widen_##NAME(const void *in, uint64_t begin, uint64_t count, void *wide) {                   \
        const T *x = (const T *)in + begin;                                                                  \
        W *y = (W *)wide;                                                                                    \
        for (uint64_t i = 0; i < count; i++) y[i] = (W)x[i];                                                 \
    }
PS_WIDEN_LIST(PS_WIDEN_FN_)
#undef PS_WIDEN_FN_

static ps_widen_fn widen_fn(pscan_type type) {
    switch (type) {
#define PS_WIDEN_CASE_(NAME, T, WIDE, W)                                                                     \
    case PSCAN_TYPE_##NAME: return widen_##NAME;
        PS_WIDEN_LIST(PS_WIDEN_CASE_)
#undef PS_WIDEN_CASE_
    default: return NULL; /* the core sets widen only for the listed types */
    }
}

/* Scans elements [begin, end) of the request with *carry before them (in scan order) and leaves in *carry the
 * value after them: chunk by chunk, each converted and handed to the wide kernel. */
static void widen_scan_range(const ps_request *req, const ps_cpu_kernels *k, uint64_t begin, uint64_t end,
                             ps_value *carry) {
    uint64_t wide[PS_WIDEN_CHUNK]; /* 8-byte elements of the widened type */
    const ps_widen_fn convert = widen_fn(req->type);
    for (uint64_t done = 0; done < end - begin; done += PS_WIDEN_CHUNK) {
        const uint64_t len = end - begin - done < PS_WIDEN_CHUNK ? end - begin - done : PS_WIDEN_CHUNK;
        const uint64_t lo = req->reverse ? end - done - len : begin + done; /* reverse: the chunks from the end */
        convert(req->in, lo, len, wide);
        k->scan(wide, (char *)req->out + lo * req->out_elem_bytes, 0, len, req->exclusive, req->reverse, carry);
    }
}

/* *total = the combination of elements [begin, end) (begin < end), in scan order. */
static void widen_reduce_range(const ps_request *req, const ps_cpu_kernels *k, uint64_t begin, uint64_t end,
                               ps_value *total) {
    uint64_t wide[PS_WIDEN_CHUNK];
    const ps_widen_fn convert = widen_fn(req->type);
    for (uint64_t done = 0; done < end - begin; done += PS_WIDEN_CHUNK) {
        const uint64_t len = end - begin - done < PS_WIDEN_CHUNK ? end - begin - done : PS_WIDEN_CHUNK;
        const uint64_t lo = req->reverse ? end - done - len : begin + done;
        ps_value part;
        convert(req->in, lo, len, wide);
        k->reduce(wide, 0, len, &part);
        if (done == 0)
            *total = part;
        else
            k->combine(total, &part);
    }
}

void ps_cpu_widen_scan(const ps_request *req) {
    ps_value carry = req->init;
    if (req->n > 0) widen_scan_range(req, ps_cpu_kernels_get(req->out_type, req->op), 0, req->n, &carry);
}

size_t ps_cpu_threads_widen_temp_bytes(uint64_t n) {
    return (size_t)((n + PS_WIDEN_BLOCK - 1) / PS_WIDEN_BLOCK) * sizeof(ps_value); /* the core aligns temp */
}

typedef struct widen_job {
    const ps_request *req;
    const ps_cpu_kernels *k;
    uint64_t blocks;
    unsigned threads;
    ps_value *values; /* [blocks]: each block's total, then the carry into it */
    int scan;         /* 0: reduce the blocks; 1: scan them */
} widen_job;

/* Block b (in memory order) of the request: [b * BLOCK, min(n, (b + 1) * BLOCK)). Thread t takes every
 * threads-th block. */
static void widen_job_run(void *arg, unsigned t) {
    const widen_job *job = (const widen_job *)arg;
    for (uint64_t b = t; b < job->blocks; b += job->threads) {
        const uint64_t begin = b * PS_WIDEN_BLOCK, end = begin + PS_WIDEN_BLOCK < job->req->n ? begin + PS_WIDEN_BLOCK
                                                                                                : job->req->n;
        if (job->scan)
            widen_scan_range(job->req, job->k, begin, end, &job->values[b]);
        else
            widen_reduce_range(job->req, job->k, begin, end, &job->values[b]);
    }
}

void ps_cpu_threads_widen_scan(ps_cpu_pool *pool, const ps_request *req) {
    if (req->n == 0) return;
    widen_job job;
    job.req = req;
    job.k = ps_cpu_kernels_get(req->out_type, req->op);
    job.blocks = (req->n + PS_WIDEN_BLOCK - 1) / PS_WIDEN_BLOCK;
    job.threads = ps_cpu_pool_threads(pool);
    job.values = (ps_value *)req->temp;
    job.scan = 0;
    ps_cpu_pool_run(pool, widen_job_run, &job);
    /* the blocks' totals become the carries into them, in scan order */
    ps_value carry = req->init;
    for (uint64_t i = 0; i < job.blocks; i++) {
        const uint64_t b = req->reverse ? job.blocks - 1 - i : i;
        const ps_value total = job.values[b];
        job.values[b] = carry;
        job.k->combine(&carry, &total);
    }
    job.scan = 1;
    ps_cpu_pool_run(pool, widen_job_run, &job);
}
