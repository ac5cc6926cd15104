/*
 * cpu_threads.c - the CPU backend's parallel scan: cache-blocked reduce-then-scan over a persistent pool.
 *
 * Idea. The array is cut into rounds of T blocks, one block per thread, each block small enough to stay in
 * the thread's L2 cache. In each round:
 *   reduce phase:  every thread reduces its block to one total (the block is now in its cache);
 *   barrier;
 *   carry phase:   every thread combines the running carry with the totals of the blocks before its own;
 *   scan phase:    every thread scans its block, from cache, starting from that carry.
 * The running carry moves on by all T totals; the totals are double-buffered by round parity so a fast
 * thread can start the next round's reduce while a slow one still reads this round's totals, and one
 * barrier per round is enough.
 *
 * Work O(n), two ops per element; depth O(n / T). Memory passes: the input is read from DRAM once and the
 * output written once (about 2n traffic, as a copy), because the second read of each block hits the cache.
 * Measured on the 2-core AMD EPYC CI machine: see docs/performance.md (pscan bench --backend cpu).
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "cpu_backend.h"

/* Bytes of input per thread per round: well inside a 512 KiB - 2 MiB L2, large enough that the one barrier
 * per round costs little beside the round's memory traffic. */
#define PSCAN_CPU_BLOCK_BYTES (256u * 1024u)
/* Spins before a waiting thread yields its core (matters when threads outnumber cores, as under sanitizers). */
#define PSCAN_CPU_SPINS 4096

/* ---- pool ------------------------------------------------------------------------------------------- */

struct ps_cpu_pool {
    unsigned threads; /* workers + the calling thread */
    pthread_t *workers;
    pthread_mutex_t lock;
    pthread_cond_t wake, done;
    uint64_t generation;
    unsigned pending;
    int stop;
    void (*job)(void *arg, unsigned thread);
    void *arg;
    atomic_uint barrier_count;
    atomic_int barrier_sense;
};

typedef struct worker_start {
    ps_cpu_pool *pool;
    unsigned index;
} worker_start;

static void *worker_main(void *start_) {
    worker_start start = *(worker_start *)start_;
    free(start_);
    ps_cpu_pool *pool = start.pool;
    uint64_t seen = 0;
    pthread_mutex_lock(&pool->lock);
    for (;;) {
        while (pool->generation == seen && !pool->stop) pthread_cond_wait(&pool->wake, &pool->lock);
        if (pool->stop) break;
        seen = pool->generation;
        pthread_mutex_unlock(&pool->lock);
        pool->job(pool->arg, start.index);
        pthread_mutex_lock(&pool->lock);
        if (--pool->pending == 0) pthread_cond_signal(&pool->done);
    }
    pthread_mutex_unlock(&pool->lock);
    return NULL;
}

void ps_cpu_pool_destroy(ps_cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i + 1 < pool->threads; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
    pthread_cond_destroy(&pool->done);
    pthread_mutex_destroy(&pool->lock);
    free(pool->workers);
    free(pool);
}

pscan_status ps_cpu_pool_create(unsigned threads, ps_cpu_pool **out) {
    ps_cpu_pool *pool = (ps_cpu_pool *)calloc(1, sizeof *pool);
    if (!pool) return PSCAN_ERROR_OUT_OF_MEMORY;
    pool->workers = (pthread_t *)calloc(threads, sizeof(pthread_t));
    if (!pool->workers) {
        free(pool);
        return PSCAN_ERROR_OUT_OF_MEMORY;
    }
    pthread_mutex_init(&pool->lock, NULL);
    pthread_cond_init(&pool->wake, NULL);
    pthread_cond_init(&pool->done, NULL);
    atomic_init(&pool->barrier_count, 0);
    atomic_init(&pool->barrier_sense, 0);
    pool->threads = 1;
    for (unsigned i = 1; i < threads; i++) {
        worker_start *start = (worker_start *)malloc(sizeof *start);
        if (!start) break;
        start->pool = pool;
        start->index = i;
        if (pthread_create(&pool->workers[i - 1], NULL, worker_main, start) != 0) {
            free(start);
            break;
        }
        pool->threads++;
    }
    if (pool->threads != threads) {
        ps_cpu_pool_destroy(pool);
        return PSCAN_ERROR_OUT_OF_MEMORY;
    }
    *out = pool;
    return PSCAN_SUCCESS;
}

unsigned ps_cpu_pool_threads(const ps_cpu_pool *pool) { return pool->threads; }

/* Runs job(arg, t) on every thread t of the pool, the caller being thread 0, and returns when all are done. */
static void pool_run(ps_cpu_pool *pool, void (*job)(void *, unsigned), void *arg) {
    pthread_mutex_lock(&pool->lock);
    pool->job = job;
    pool->arg = arg;
    pool->pending = pool->threads - 1;
    pool->generation++;
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    job(arg, 0);
    pthread_mutex_lock(&pool->lock);
    while (pool->pending > 0) pthread_cond_wait(&pool->done, &pool->lock);
    pthread_mutex_unlock(&pool->lock);
}

/* Sense-reversing barrier over all the pool's threads; *sense is the caller's own copy. */
static void pool_barrier(ps_cpu_pool *pool, int *sense) {
    *sense = !*sense;
    if (atomic_fetch_add(&pool->barrier_count, 1) == pool->threads - 1) {
        atomic_store(&pool->barrier_count, 0);
        atomic_store(&pool->barrier_sense, *sense);
        return;
    }
    for (unsigned spins = 0; atomic_load(&pool->barrier_sense) != *sense; spins++)
        if (spins >= PSCAN_CPU_SPINS) sched_yield();
}

/* ---- scan -------------------------------------------------------------------------------------------- */

typedef struct threads_job {
    ps_cpu_pool *pool;
    const ps_scan_call *call;
    const ps_cpu_kernels *kernels;
    uint64_t block; /* elements per thread per round */
    ps_value *totals; /* [2][threads] */
} threads_job;

static void threads_job_run(void *arg, unsigned t) {
    const threads_job *job = (const threads_job *)arg;
    const ps_scan_call *call = job->call;
    const ps_cpu_kernels *k = job->kernels;
    const uint64_t n = call->n, block = job->block, threads = job->pool->threads, round = threads * block;
    ps_value carry = call->init;
    int sense = atomic_load(&job->pool->barrier_sense);

    for (uint64_t start = 0, r = 0; start < n; start += round, r++) {
        /* positions in scan order; a reverse scan meets the array's end first */
        uint64_t first = start + t * block, last = first + block;
        if (first > n) first = n;
        if (last > n) last = n;
        uint64_t begin = call->reverse ? n - last : first, end = call->reverse ? n - first : last;
        ps_value *totals = job->totals + (r & 1) * threads;
        uint64_t blocks = (n - start < round ? n - start + block - 1 : round) / block;

        /* Reduce phase. */
        if (begin < end) k->reduce(call->in, begin, end, &totals[t]);
        pool_barrier(job->pool, &sense);

        /* Carry phase. */
        ps_value mine = carry;
        for (unsigned j = 0; j < t && j < blocks; j++) k->combine(&mine, &totals[j]);
        for (unsigned j = 0; j < blocks; j++) k->combine(&carry, &totals[j]);

        /* Scan phase: the block comes back from cache. */
        if (begin < end) k->scan(call->in, call->out, begin, end, call->exclusive, call->reverse, &mine);
    }
}

size_t ps_cpu_threads_temp_bytes(const ps_cpu_pool *pool) { return 2 * pool->threads * sizeof(ps_value); }

void ps_cpu_threads_scan(ps_cpu_pool *pool, const ps_scan_call *call) {
    threads_job job;
    job.pool = pool;
    job.call = call;
    job.kernels = ps_cpu_kernels_get(call->type, call->op);
    job.block = PSCAN_CPU_BLOCK_BYTES / call->elem_bytes;
    job.totals = (ps_value *)call->temp;
    pool_run(pool, threads_job_run, &job);
}
