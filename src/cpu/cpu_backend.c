/*
 * cpu_backend.c - the CPU backend behind the common table: host memory, a thread pool, two algorithms.
 *
 *   SERIAL   one loop and one carry (cpu_kernels.c): the test oracle, and the fastest path for small n.
 *   THREADS  cache-blocked reduce-then-scan over the context's pool (cpu_threads.c); select and partition
 *            count per thread, scan the counts, move per thread.
 *
 * The CPU "stream" is the calling thread: every call has finished when it returns.
 */
#define _GNU_SOURCE /* sched_getaffinity, CPU_COUNT */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
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

/* The cores this process may run on: its affinity mask (taskset, a container's cpuset), capped by a cgroup
 * v2 CPU quota (cpu.max "quota period", rounded up), which is how containers and CI runners are limited
 * more often than by the processor count. Read once. */
static unsigned usable_cores(void) {
    static unsigned cores = 0;
    if (cores) return cores;
    long count = sysconf(_SC_NPROCESSORS_ONLN);
    unsigned c = count > 0 ? (unsigned)count : 1;
#ifdef CPU_COUNT
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0) c = (unsigned)CPU_COUNT(&set);
#endif
    FILE *f = fopen("/sys/fs/cgroup/cpu.max", "r");
    if (f) {
        char quota[32] = "";
        unsigned long long period = 0;
        if (fscanf(f, "%31s %llu", quota, &period) == 2 && strcmp(quota, "max") != 0 && period > 0) {
            unsigned long long q = strtoull(quota, NULL, 10), limit = (q + period - 1) / period;
            if (limit >= 1 && limit < c) c = (unsigned)limit;
        }
        fclose(f);
    }
    cores = c;
    return cores;
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
    pscan_status s = ps_cpu_pool_create(threads ? threads : usable_cores(), &pool);
    if (s != PSCAN_SUCCESS) return s;
    ps_cpu_pool_destroy(st->pool);
    st->pool = pool;
    return PSCAN_SUCCESS;
}

/* The processors this process may run on (the affinity mask; all online ones where the mask cannot be read)
 * and their count, read once: other processes' load is only measured on these, and only these can run the
 * pool. A container on a larger host sees the host's /proc/stat: the other tenants' load on processors
 * outside its cpuset is not competition for its threads (counting it made pscan_memory_copy fall back to one
 * core's memcpy on the GPU machine's host, 10 GB/s against 95 GB/s, seen by tools/tune/tune_cpu). */
#ifdef CPU_COUNT
static const cpu_set_t *own_cpus(unsigned *count) {
    static cpu_set_t set;
    static unsigned n = 0;
    static int state = 0; /* 0 not read, 1 read, 2 unreadable */
    if (state == 0) {
        state = sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0 ? 1 : 2;
        n = state == 1 ? (unsigned)CPU_COUNT(&set) : 0;
    }
    *count = n;
    return state == 1 ? &set : NULL;
}
#endif

/* Busy CPU seconds of the processors this process may run on (/proc/stat's per-processor lines, all but idle
 * and iowait; the machine's total line where the mask is unknown) and of this process (all its threads, the
 * pool's included). 0 when /proc/stat cannot be read. */
static int cpu_seconds(double *machine, double *self) {
    FILE *f = fopen("/proc/stat", "r");
    if (!f) return 0;
    const cpu_set_t *mine = NULL;
#ifdef CPU_COUNT
    unsigned mine_count = 0;
    mine = own_cpus(&mine_count);
#endif
    char line[512];
    unsigned long long busy_ticks = 0;
    int found = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "cpu", 3) != 0) break; /* the processor lines come first */
        unsigned long long v[8] = {0};
        int id = -1, got;
        if (line[3] == ' ') {
            if (mine) continue; /* the total: used only without a mask */
            got = sscanf(line + 3, "%llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3], &v[4],
                         &v[5], &v[6], &v[7]);
        } else {
            if (!mine) continue;
            got = sscanf(line + 3, "%d %llu %llu %llu %llu %llu %llu %llu %llu", &id, &v[0], &v[1], &v[2], &v[3],
                         &v[4], &v[5], &v[6], &v[7]) - 1;
#ifdef CPU_COUNT
            if (id < 0 || id >= CPU_SETSIZE || !CPU_ISSET(id, mine)) continue;
#endif
        }
        if (got < 4) continue;
        /* user nice system idle iowait irq softirq steal */
        busy_ticks += v[0] + v[1] + v[2] + v[5] + v[6] + v[7];
        found = 1;
    }
    fclose(f);
    if (!found) return 0;
    const double tick = (double)sysconf(_SC_CLK_TCK);
    *machine = (double)busy_ticks / (tick > 0 ? tick : 100.0);
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    *self = (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_sec +
            1e-6 * (double)ru.ru_stime.tv_usec;
    return 1;
}

/* How many cores other processes kept busy lately: the machine's busy time minus this process's own, over
 * the time since the previous sample (samples at least 100 ms apart). Our own pool is not counted, so that
 * steady large scans do not push AUTO off the threads they use (the load average counts them; it made
 * AUTO flip to serial under a steady stream of large calls). Before the first interval, or where /proc/stat
 * does not exist, the 1-minute load average less the calling thread stands in. */
static double others_busy_cores(void) {
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    static double last_wall = 0, last_machine = 0, last_self = 0, busy = -1;
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    const double wall = (double)now.tv_sec + 1e-9 * (double)now.tv_nsec;
    double machine = 0, self = 0, result;
    pthread_mutex_lock(&lock);
    if (wall - last_wall >= 0.1 && cpu_seconds(&machine, &self)) {
        if (last_wall > 0) {
            const double b = (machine - last_machine - (self - last_self)) / (wall - last_wall);
            busy = b > 0 ? b : 0;
        }
        last_wall = wall, last_machine = machine, last_self = self;
    }
    result = busy;
    pthread_mutex_unlock(&lock);
    if (result < 0) {
        double l[1] = {0};
        result = getloadavg(l, 1) == 1 && l[0] > 1.0 ? l[0] - 1.0 : 0;
    }
    return result;
}

/* Whether the machine has a core to spare for each extra thread: the threaded scan chains carries from one
 * thread to the next, so one descheduled worker stalls the rest (measured: 3-6x slower than serial on a
 * 2-core machine with one core busy). */
static int cores_are_idle(unsigned threads) {
    /* against the processors we may run on, which a quota may leave more of than the pool has threads */
    unsigned cpus = usable_cores();
#ifdef CPU_COUNT
    unsigned mask = 0;
    if (own_cpus(&mask) && mask > cpus) cpus = mask;
#endif
    return others_busy_cores() + (double)threads <= (double)cpus + 0.5;
}

/* AUTO: the pool when there is enough work for it and cores to run it, else one loop, so that AUTO is not
 * slower than serial when other processes hold the cores; except where the choice would change a float's
 * rounding (below): there the same bits every time come first. */
/* Whether bytes of work are enough for the pool, and the pool has more than one thread: AUTO and the copy. */
static int pool_worth_waking(const ps_cpu_pool *pool, uint64_t bytes) {
    return bytes >= PSCAN_CPU_THREADS_MIN_BYTES && ps_cpu_pool_threads(pool) > 1;
}

static pscan_algo cpu_auto_algo(const pscan_context *ctx, const ps_request *req) {
    const ps_cpu_pool *pool = state_of(ctx)->pool;
    if (!pool_worth_waking(pool, req->n * req->elem_bytes)) return PSCAN_ALGO_SERIAL;
    /* Float sums and products round differently in the threaded order than in the serial one (so may a user
     * operator and a recurrence): their AUTO does not look at the load, so that the same call on the same
     * context gives the same bits every time. Exact results (integers, min, max, bitwise, counts, moves)
     * come out the same either way, and take the threads only when the cores are free. */
    /* the primitives that combine values with req->op (the others carry PSCAN_OP_SUM as a placeholder) */
    const int combines = req->prim == PS_PRIM_SCAN || req->prim == PS_PRIM_REDUCE ||
                         req->prim == PS_PRIM_SEGMENTED_SCAN || req->prim == PS_PRIM_SCAN_BY_KEY ||
                         req->prim == PS_PRIM_REDUCE_BY_KEY;
    const int float_type = req->type == PSCAN_TYPE_F32 || req->type == PSCAN_TYPE_F64;
    const int rounds = req->user_op || req->prim == PS_PRIM_RECURRENCE ||
                       (combines && float_type && (req->op == PSCAN_OP_SUM || req->op == PSCAN_OP_PRODUCT));
    if (rounds) return PSCAN_ALGO_THREADS;
    return cores_are_idle(ps_cpu_pool_threads(pool)) ? PSCAN_ALGO_THREADS : PSCAN_ALGO_SERIAL;
}

/* The temp req's algorithm (SERIAL or THREADS) needs. */
static size_t cpu_temp_bytes(const ps_cpu_pool *pool, const ps_request *req) {
    size_t bytes = 0;
    if (req->prim == PS_PRIM_SORT)
        bytes = ps_cpu_sort_temp_bytes(pool, req); /* both algorithms ping-pong through temp */
    else if (req->algo == PSCAN_ALGO_THREADS && req->n > 0)
        bytes = req->prim == PS_PRIM_SCAN         ? ps_cpu_threads_temp_bytes(pool)
                : req->prim == PS_PRIM_RECURRENCE ? ps_cpu_threads_recurrence_temp_bytes(pool)
                                                  : ps_cpu_threads_reduce_temp_bytes(pool);
    if (req->prim == PS_PRIM_HISTOGRAM) bytes = ps_cpu_histogram_temp_bytes(pool, req); /* serial too */
    if (req->widen && req->algo == PSCAN_ALGO_THREADS && req->n > 0) bytes = ps_cpu_threads_widen_temp_bytes(req->n);
    return bytes;
}

/* Every primitive runs SERIAL and THREADS; the GPU algorithms are not the CPU's. AUTO asks for the temp of
 * either algorithm, the larger: it picks one by the cores' load, which may change between the caller's
 * pscan_*_temp_bytes() and the call, and the temp sized by the first must serve the second (a serial sort's
 * count rows per pass can outnumber a threaded one's rows per thread, and the reverse). */
static pscan_status cpu_plan(const pscan_context *ctx, ps_request *req, size_t *temp_bytes) {
    const int automatic = req->algo == PSCAN_ALGO_AUTO;
    if (automatic) req->algo = cpu_auto_algo(ctx, req);
    if (req->algo != PSCAN_ALGO_SERIAL && req->algo != PSCAN_ALGO_THREADS) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const ps_cpu_pool *pool = state_of(ctx)->pool;
    *temp_bytes = cpu_temp_bytes(pool, req);
    if (automatic) {
        ps_request other = *req;
        other.algo = req->algo == PSCAN_ALGO_SERIAL ? PSCAN_ALGO_THREADS : PSCAN_ALGO_SERIAL;
        const size_t bytes = cpu_temp_bytes(pool, &other);
        if (bytes > *temp_bytes) *temp_bytes = bytes;
    }
    return PSCAN_SUCCESS;
}

static void cpu_scan(pscan_context *ctx, const ps_request *req) {
    if (req->widen) {
        if (req->algo == PSCAN_ALGO_THREADS)
            ps_cpu_threads_widen_scan(state_of(ctx)->pool, req);
        else
            ps_cpu_widen_scan(req);
    } else if (req->algo == PSCAN_ALGO_THREADS) {
        ps_cpu_threads_scan(state_of(ctx)->pool, req);
    } else if (req->user_op) {
        ps_value carry = req->init;
        ps_cpu_user_scan(req->user_op, req->in, req->out, 0, req->n, req->exclusive, req->reverse, &carry);
    } else {
        ps_value carry = req->init;
        ps_cpu_kernels_get(req->type, req->op)->scan(req->in, req->out, 0, req->n, req->exclusive, req->reverse, &carry);
    }
}

static void cpu_reduce(pscan_context *ctx, const ps_request *req) {
    ps_value result = req->init;
    if (req->n > 0 && req->algo == PSCAN_ALGO_THREADS) {
        ps_cpu_threads_reduce(state_of(ctx)->pool, req, &result);
    } else if (req->n > 0 && req->user_op) {
        ps_value total;
        ps_cpu_user_reduce(req->user_op, req->in, 0, req->n, 0, &total);
        ps_cpu_user_combine(req->user_op, &result, &total);
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

/* Expand (cpu_expand.c; the threaded phases in cpu_threads.c). */
static void cpu_expand(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS && req->n > 0)
        ps_cpu_threads_expand(state_of(ctx)->pool, req);
    else
        ps_cpu_expand(req);
}
/* Histogram (cpu_histogram.c): SERIAL is the threaded body on one thread. */
static void cpu_histogram(pscan_context *ctx, const ps_request *req) { ps_cpu_histogram(state_of(ctx)->pool, req); }
/* Sort (cpu_sort.c). */
static void cpu_sort(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS)
        ps_cpu_threads_sort(state_of(ctx)->pool, req);
    else
        ps_cpu_sort(req);
}

/* First- and second-order linear recurrences (cpu_recurrence.c). */
static void cpu_recurrence(pscan_context *ctx, const ps_request *req) {
    if (req->algo == PSCAN_ALGO_THREADS)
        ps_cpu_threads_recurrence(state_of(ctx)->pool, req);
    else
        ps_cpu_recurrence(req);
}

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

/* memcpy, split over the pool when the copy is large and the cores are free, by the same rule as AUTO: one
 * core reaches a fraction of a machine's bandwidth (on 16 cores about 20 GB/s of 60-100), and the copy is
 * the floor the benchmark measures the threaded primitives against. Upload and download are copies too. */
static pscan_status cpu_mem_copy(pscan_context *ctx, void *dst, const void *src, size_t bytes) {
    ps_cpu_pool *pool = state_of(ctx)->pool;
    if (pool_worth_waking(pool, bytes) && cores_are_idle(ps_cpu_pool_threads(pool)))
        ps_cpu_threads_copy(pool, dst, src, bytes);
    else
        memcpy(dst, src, bytes);
    return PSCAN_SUCCESS;
}

static pscan_status cpu_synchronize(pscan_context *ctx) {
    (void)ctx;
    return PSCAN_SUCCESS;
}

/* A user operator runs on the CPU through its host function, and only through it. */
static pscan_status cpu_operator_build(pscan_context *ctx, pscan_operator *op) {
    (void)ctx;
    return op->host_combine ? PSCAN_SUCCESS : PSCAN_ERROR_UNSUPPORTED_OPERATOR;
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
    .operator_build = cpu_operator_build,
    .data_in_host_memory = 1, /* pscan_scan_host is pscan_scan here */
    .scan_widen = 1,
};

pscan_status ps_cpu_context_init(pscan_context *ctx, int gpu_only) {
    (void)gpu_only;
    cpu_state *st = (cpu_state *)calloc(1, sizeof *st);
    if (!st) return PSCAN_ERROR_OUT_OF_MEMORY;
    pscan_status s = ps_cpu_pool_create(usable_cores(), &st->pool);
    if (s != PSCAN_SUCCESS) {
        free(st);
        return s;
    }
    ctx->ops = &cpu_ops;
    ctx->backend = st;
    return PSCAN_SUCCESS;
}
