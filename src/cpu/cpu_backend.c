/*
 * cpu_backend.c - the CPU backend behind the common table: host memory, a thread pool, two algorithms.
 *
 *   SERIAL   one loop and one carry (cpu_kernels.c): the test oracle, and the fastest path for small n.
 *   THREADS  cache-blocked reduce-then-scan over the context's pool (cpu_threads.c); select and partition
 *            count per thread, scan the counts, move per thread.
 *
 * The CPU "stream" is the calling thread: every call has finished when it returns.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cpu_backend.h"

/* Below this many bytes AUTO stays serial: waking the pool and chaining carries between threads costs more
 * than it saves (on the 2-core CI machine threads only pulled ahead of serial from 2^20 i32 elements). */
#define PSCAN_CPU_THREADS_MIN_BYTES ((uint64_t)4 << 20)

typedef struct cpu_state {
    ps_cpu_pool *pool;
} cpu_state;

static cpu_state *state_of(const pscan_context *ctx) { return (cpu_state *)ctx->backend; }

static unsigned online_processors(void) {
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    return count > 0 ? (unsigned)count : 1;
}

static void cpu_destroy(pscan_context *ctx) {
    cpu_state *st = state_of(ctx);
    if (!st) return;
    ps_cpu_pool_destroy(st->pool);
    free(st);
}

static pscan_status cpu_device_name(const pscan_context *ctx, char *buf, size_t buf_bytes) {
    snprintf(buf, buf_bytes, "CPU: %u threads", ps_cpu_pool_threads(state_of(ctx)->pool));
    return PSCAN_SUCCESS;
}

static pscan_status cpu_set_threads(pscan_context *ctx, unsigned threads) {
    cpu_state *st = state_of(ctx);
    ps_cpu_pool *pool = NULL;
    pscan_status s = ps_cpu_pool_create(threads ? threads : online_processors(), &pool);
    if (s != PSCAN_SUCCESS) return s;
    ps_cpu_pool_destroy(st->pool);
    st->pool = pool;
    return PSCAN_SUCCESS;
}

/* Whether the machine has a core to spare for each extra thread: the threaded scan chains carries from one
 * thread to the next, so one descheduled worker stalls the rest (measured: 3-6x slower than serial on a
 * 2-core machine with one core busy). The 1-minute load average is read at most every 100 ms. */
static int cores_are_idle(unsigned threads) {
    static double load = 0;
    static struct timespec last = {0, 0};
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double age = (double)(now.tv_sec - last.tv_sec) + 1e-9 * (double)(now.tv_nsec - last.tv_nsec);
    if (last.tv_sec == 0 || age > 0.1) {
        double l[1];
        if (getloadavg(l, 1) == 1) load = l[0];
        last = now;
    }
    /* the load counts the calling thread itself (it is running): one more than the others' demand */
    return load - 1.0 + (double)threads <= (double)online_processors() + 0.5;
}

/* AUTO: the pool when there is enough work for it and cores to run it, else one loop. Never slower than
 * serial by design: the rule falls back to serial whenever the pool could not run at full width. */
static pscan_algo cpu_auto_algo(const pscan_context *ctx, const ps_request *req) {
    const unsigned threads = ps_cpu_pool_threads(state_of(ctx)->pool);
    return req->n * req->elem_bytes >= PSCAN_CPU_THREADS_MIN_BYTES && threads > 1 && cores_are_idle(threads)
               ? PSCAN_ALGO_THREADS
               : PSCAN_ALGO_SERIAL;
}

/* Every primitive runs SERIAL and THREADS; the GPU algorithms are not the CPU's. */
static pscan_status cpu_plan(const pscan_context *ctx, ps_request *req, size_t *temp_bytes) {
    if (req->algo == PSCAN_ALGO_AUTO) req->algo = cpu_auto_algo(ctx, req);
    if (req->algo != PSCAN_ALGO_SERIAL && req->algo != PSCAN_ALGO_THREADS) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const ps_cpu_pool *pool = state_of(ctx)->pool;
    *temp_bytes = 0;
    if (req->algo == PSCAN_ALGO_THREADS && req->n > 0)
        *temp_bytes = req->prim == PS_PRIM_SCAN ? ps_cpu_threads_temp_bytes(pool) : ps_cpu_threads_reduce_temp_bytes(pool);
    return PSCAN_SUCCESS;
}

static void cpu_scan(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS) {
        ps_cpu_threads_scan(state_of(ctx)->pool, req);
    } else {
        ps_value carry = req->init;
        ps_cpu_kernels_get(req->type, req->op)->scan(req->in, req->out, 0, req->n, req->exclusive, req->reverse, &carry);
    }
}

static void cpu_reduce(pscan_context *ctx, const ps_request *req) {
    ps_value result = req->init;
    if (req->n > 0 && req->algo == PSCAN_ALGO_THREADS) {
        ps_cpu_threads_reduce(state_of(ctx)->pool, req, &result);
    } else if (req->n > 0) {
        const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
        ps_value total;
        k->reduce(req->in, 0, req->n, &total);
        k->combine(&result, &total);
    }
    memcpy(req->out, result.bytes, req->elem_bytes);
}

/* Select and partition (cpu_select.c; the threaded phases in cpu_threads.c). */
static void cpu_select(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS && req->n > 0)
        ps_cpu_threads_select(state_of(ctx)->pool, req);
    else
        ps_cpu_select(req);
}
#define cpu_partition cpu_select

/* Segmented scan and scan by key (cpu_segscan.c): one runner, the segments' form is in the request. */
static void cpu_segmented_scan(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS)
        ps_cpu_threads_segscan(state_of(ctx)->pool, req);
    else
        ps_cpu_segscan(req);
}
#define cpu_scan_by_key cpu_segmented_scan

/* Reduce by key and run-length encoding (cpu_segscan.c); n == 0 writes the run count alone. */
static void cpu_reduce_by_key(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS)
        ps_cpu_threads_by_key(state_of(ctx)->pool, req);
    else
        ps_cpu_by_key(req);
}
#define cpu_run_length_encode cpu_reduce_by_key

/* One runner per primitive, generated from the core's list: a primitive without a CPU runner fails to link. */
#define CPU_RUNNER_(NAME, name) [PS_PRIM_##NAME] = cpu_##name,
static void (*const cpu_runners[PS_PRIM_COUNT])(pscan_context *, const ps_request *) = {
    PS_PRIMITIVE_LIST(CPU_RUNNER_)};
#undef CPU_RUNNER_

static pscan_status cpu_run(pscan_context *ctx, const ps_request *req) {
    cpu_runners[req->prim](ctx, req);
    return PSCAN_SUCCESS;
}

static pscan_status cpu_mem_alloc(pscan_context *ctx, size_t bytes, void **ptr) {
    (void)ctx;
    *ptr = malloc(bytes);
    return *ptr ? PSCAN_SUCCESS : PSCAN_ERROR_OUT_OF_MEMORY;
}

static pscan_status cpu_mem_free(pscan_context *ctx, void *ptr) {
    (void)ctx;
    free(ptr);
    return PSCAN_SUCCESS;
}

/* memcpy, not a loop of ours: the copy is the bandwidth floor the benchmark compares the scan with. */
static pscan_status cpu_mem_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes) {
    (void)ctx;
    memcpy(dst, src, bytes);
    return PSCAN_SUCCESS;
}

static pscan_status cpu_synchronize(pscan_context *ctx) {
    (void)ctx;
    return PSCAN_SUCCESS;
}

static const ps_backend_ops cpu_ops = {
    .kind = PSCAN_BACKEND_CPU,
    .handles_are_addresses = 1,
    .destroy = cpu_destroy,
    .device_name = cpu_device_name,
    .set_threads = cpu_set_threads,
    .plan = cpu_plan,
    .run = cpu_run,
    .mem_alloc = cpu_mem_alloc,
    .mem_free = cpu_mem_free,
    .mem_upload = cpu_mem_copy,
    .mem_download = cpu_mem_copy,
    .mem_copy = cpu_mem_copy,
    .synchronize = cpu_synchronize,
};

pscan_status ps_cpu_context_init(pscan_context *ctx, int gpu_only) {
    (void)gpu_only;
    cpu_state *st = (cpu_state *)calloc(1, sizeof *st);
    if (!st) return PSCAN_ERROR_OUT_OF_MEMORY;
    pscan_status s = ps_cpu_pool_create(online_processors(), &st->pool);
    if (s != PSCAN_SUCCESS) {
        free(st);
        return s;
    }
    ctx->ops = &cpu_ops;
    ctx->backend = st;
    return PSCAN_SUCCESS;
}
