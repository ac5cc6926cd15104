/*
 * cpu_threads.c - the CPU backend's parallel scan: cache-blocked reduce-then-scan over a persistent pool.
 *
 * Idea. The array is cut into rounds of T blocks, one block per thread, each block small enough to stay in
 * the thread's L2 cache. For each of its blocks a thread runs three phases:
 *   reduce phase:  reduce the block to one total (the block is now in the thread's cache);
 *   carry phase:   wait for the inclusive prefix the block before it has published (the previous thread's
 *                  block, or the last thread's of the round before), take it as the carry, and publish
 *                  carry + total for the block after it;
 *   scan phase:    scan the block, from cache, starting from the carry.
 * Only the carries are chained, not the scans: a thread publishes before it scans, so the threads drift
 * apart by part of a round and one's reduce (reading DRAM) overlaps another's scan (mostly writing), where a
 * barrier per round would have put all threads in the same phase at once. (This is the CPU cousin of the
 * GPU's chained scan; with one carry per thread and no look-back.)
 *
 * Chains. A serial scan is one long dependency chain: one add per cycle for integers, one per 2-4 cycles
 * for floats, too slow to keep up with memory on two cores. So the reduce phase also keeps the totals of
 * CHAINS equal segments of the block, which gives each segment its own carry, and the scan phase walks the
 * segments in lockstep: CHAINS independent chains that the core overlaps.
 *
 * Work O(n), two ops per element; depth O(n / T). Memory passes: the input is read from DRAM once and the
 * output written once (about 2n traffic, as a copy), because the second read of each block hits the cache.
 * Measured with pscan bench --backend cpu --min-log2 26 (2^26 elements, inclusive sum, median of 21, copy and
 * scans interleaved) on the 2-core AMD EPYC (Zen 5) VM, five runs each while other jobs shared the machine:
 *   i32: copy 24.9-35.3 GB/s, THREADS 24.1-29.0 GB/s: 0.72-1.00 of copy, median 0.82 (SERIAL 22-29 GB/s);
 *   f32: copy 25.1-35.1 GB/s, THREADS 22.0-28.2 GB/s: 0.72-0.88 of copy, median 0.80 (SERIAL 14-15 GB/s).
 * Best times (min of 25) on a quiet spell: i32 THREADS 16.3 ms against memcpy 14.2 ms (0.87), f32 17.2 against
 * 14.9 ms (0.87). THREADS is the most sensitive to a busy machine: it needs both cores at once.
 * One thread: 18.4 GB/s (i32); two: 24.8-29.9 GB/s. Before the chains and the chained carries (one chain, a
 * barrier per round) it was 17.5-19.6 GB/s i32 and 18.0-21.3 GB/s f32 (0.57-0.72 of copy).
 * Non-temporal stores (scan into an L1 staging buffer, stream it out) and software prefetch of the next
 * block were tried and gained nothing measurable on this machine: its write-allocate reads are not the
 * limit, so they were left out.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"

/* Bytes of input per block: well inside a 512 KiB - 2 MiB L2 (with the block's output), large enough that
 * the one carry hand-off per block costs little beside the block's memory traffic. */
#define PSCAN_CPU_BLOCK_BYTES (256u * 1024u)
/* Spins before a waiting thread yields its core (matters when threads outnumber cores, as under sanitizers). */
#define PSCAN_CPU_SPINS 4096
/* Spins of an idle worker before it sleeps (about 0.5 ms): calls closer together than that wake no thread. */
#define PSCAN_CPU_IDLE_SPINS 16384
/* One cache line per thread for the prefix it publishes, so that publishing does not disturb the others. */
#define PSCAN_CPU_SLOT_BYTES 64

/* ---- pool ------------------------------------------------------------------------------------------- */

/* One spin of a busy-wait: a pause leaves the core's resources to a sibling hardware thread or vCPU. */
static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

struct ps_cpu_pool {
    unsigned threads; /* workers + the calling thread */
    pthread_t *workers;
    pthread_mutex_t lock; /* only for sleeping: jobs are published through the atomics */
    pthread_cond_t wake;
    atomic_uint_fast64_t generation; /* one more per job */
    atomic_uint pending;             /* workers still running the current job */
    atomic_int stop;
    void (*job)(void *arg, unsigned thread);
    void *arg;
};

typedef struct worker_start {
    ps_cpu_pool *pool;
    unsigned index;
} worker_start;

static int no_new_job(ps_cpu_pool *pool, uint64_t seen) {
    return atomic_load_explicit(&pool->generation, memory_order_acquire) == seen && !atomic_load(&pool->stop);
}

static void *worker_main(void *start_) {
    worker_start start = *(worker_start *)start_;
    free(start_);
    ps_cpu_pool *pool = start.pool;
    uint64_t seen = 0;
    for (;;) {
        /* Spin a while before sleeping, so that back-to-back calls find the workers awake: waking a thread
         * from a condition variable costs 10-100 us, more than a whole scan of 2^16 elements. */
        for (unsigned spins = 0; spins < PSCAN_CPU_IDLE_SPINS && no_new_job(pool, seen); spins++) cpu_relax();
        if (no_new_job(pool, seen)) {
            pthread_mutex_lock(&pool->lock);
            while (no_new_job(pool, seen)) pthread_cond_wait(&pool->wake, &pool->lock);
            pthread_mutex_unlock(&pool->lock);
        }
        if (atomic_load(&pool->stop)) break;
        seen = atomic_load_explicit(&pool->generation, memory_order_acquire);
        pool->job(pool->arg, start.index);
        atomic_fetch_sub_explicit(&pool->pending, 1, memory_order_acq_rel);
    }
    return NULL;
}

void ps_cpu_pool_destroy(ps_cpu_pool *pool) {
    if (!pool) return;
    pthread_mutex_lock(&pool->lock);
    atomic_store(&pool->stop, 1);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    for (unsigned i = 0; i + 1 < pool->threads; i++) pthread_join(pool->workers[i], NULL);
    pthread_cond_destroy(&pool->wake);
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
    atomic_init(&pool->generation, 0);
    atomic_init(&pool->pending, 0);
    atomic_init(&pool->stop, 0);
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
    pool->job = job;
    pool->arg = arg;
    atomic_store_explicit(&pool->pending, pool->threads - 1, memory_order_relaxed);
    /* publishes job, arg and pending to the workers that spin ... */
    atomic_fetch_add_explicit(&pool->generation, 1, memory_order_acq_rel);
    /* ... and wakes those that sleep: they test the generation under the lock, so none misses it */
    pthread_mutex_lock(&pool->lock);
    pthread_cond_broadcast(&pool->wake);
    pthread_mutex_unlock(&pool->lock);
    job(arg, 0);
    /* The workers run the same job and finish about when the caller does: spin, yielding after a while. */
    for (unsigned spins = 0; atomic_load_explicit(&pool->pending, memory_order_acquire) > 0; spins++) {
        if (spins >= PSCAN_CPU_SPINS)
            sched_yield();
        else
            cpu_relax();
    }
}

void ps_cpu_pool_run(ps_cpu_pool *pool, void (*job)(void *, unsigned), void *arg) { pool_run(pool, job, arg); }

/* ---- scan -------------------------------------------------------------------------------------------- */

/* What thread t has published: the inclusive prefix up to the end of its block of round (round - 1). */
typedef struct threads_slot {
    atomic_uint_fast64_t round;
    ps_value prefix;
    unsigned char pad[PSCAN_CPU_SLOT_BYTES - sizeof(atomic_uint_fast64_t) - sizeof(ps_value)];
} threads_slot;

typedef struct threads_job {
    ps_cpu_pool *pool;
    const ps_request *call;
    const ps_cpu_kernels *kernels;
    uint64_t block; /* elements per thread per round */
    threads_slot *slots; /* [threads], in the caller's temp */
} threads_job;

/* One block [begin, end) cut into CHAINS segments of q elements in scan order, the last one also taking the
 * remainder: seg[c] is the physical start of segment c, tail the remainder's. */
typedef struct block_split {
    uint64_t q, seg[PSCAN_CPU_CHAINS], tail_begin, tail_end;
} block_split;

static void block_split_make(uint64_t begin, uint64_t end, int reverse, block_split *b) {
    b->q = (end - begin) / PSCAN_CPU_CHAINS;
    for (unsigned c = 0; c < PSCAN_CPU_CHAINS; c++)
        b->seg[c] = reverse ? end - (c + 1) * b->q : begin + c * b->q;
    b->tail_begin = reverse ? begin : begin + PSCAN_CPU_CHAINS * b->q;
    b->tail_end = reverse ? end - PSCAN_CPU_CHAINS * b->q : end;
}

/* Reduce phase of one block: the totals of the first CHAINS - 1 segments in seg_totals, the whole block's in
 * *total. */
static void block_reduce(const threads_job *job, const block_split *b, ps_value *seg_totals, ps_value *total) {
    const ps_request *call = job->call;
    const ps_cpu_kernels *k = job->kernels;
    int have = 0;
    for (unsigned c = 0; c < PSCAN_CPU_CHAINS; c++) {
        if (b->q == 0) break;
        k->reduce(call->in, b->seg[c], b->seg[c] + b->q, &seg_totals[c]);
        if (have)
            k->combine(total, &seg_totals[c]);
        else
            *total = seg_totals[c];
        have = 1;
    }
    if (b->tail_begin < b->tail_end) {
        ps_value tail;
        k->reduce(call->in, b->tail_begin, b->tail_end, &tail);
        if (have)
            k->combine(total, &tail);
        else
            *total = tail;
    }
}

/* Scan phase of one block from carry: the chains in lockstep, then the remainder. */
static void block_scan(const threads_job *job, const block_split *b, const ps_value *seg_totals, ps_value carry) {
    const ps_request *call = job->call;
    const size_t es = call->elem_bytes;
    ps_value chain_carry[PSCAN_CPU_CHAINS];
    chain_carry[0] = carry;
    if (b->q > 0) {
        const void *src[PSCAN_CPU_CHAINS];
        void *dst[PSCAN_CPU_CHAINS];
        for (unsigned c = 0; c < PSCAN_CPU_CHAINS; c++) {
            if (c > 0) {
                chain_carry[c] = chain_carry[c - 1];
                job->kernels->combine(&chain_carry[c], &seg_totals[c - 1]);
            }
            src[c] = (const char *)call->in + b->seg[c] * es;
            dst[c] = (char *)call->out + b->seg[c] * es;
        }
        job->kernels->chains(src, dst, b->q, call->exclusive, call->reverse, chain_carry);
    }
    /* The remainder continues the last chain (or is the whole block, if it is shorter than CHAINS). */
    if (b->tail_begin < b->tail_end)
        job->kernels->scan(call->in, call->out, b->tail_begin, b->tail_end, call->exclusive, call->reverse,
                           &chain_carry[b->q > 0 ? PSCAN_CPU_CHAINS - 1 : 0]);
}

/* Waits until *word == value: spins, then yields the core (threads may outnumber cores, as under sanitizers). */
static void wait_for(const atomic_uint_fast64_t *word, uint64_t value) {
    for (unsigned spins = 0; atomic_load_explicit(word, memory_order_acquire) != value; spins++) {
        if (spins >= PSCAN_CPU_SPINS)
            sched_yield();
        else
            cpu_relax();
    }
}

static void threads_job_run(void *arg, unsigned t) {
    const threads_job *job = (const threads_job *)arg;
    const ps_request *call = job->call;
    const ps_cpu_kernels *k = job->kernels;
    const uint64_t n = call->n, block = job->block, threads = job->pool->threads;
    ps_value total, seg_totals[PSCAN_CPU_CHAINS];
    /* the slot this thread waits on: its left neighbour's, or for thread 0 the last thread's, one round back */
    const threads_slot *before = &job->slots[t ? t - 1 : threads - 1];
    threads_slot *mine_slot = &job->slots[t];

    for (uint64_t r = 0, first = t * block; first < n; r++, first += threads * block) {
        /* positions in scan order; a reverse scan meets the array's end first */
        uint64_t last = first + block < n ? first + block : n;
        uint64_t begin = call->reverse ? n - last : first, end = call->reverse ? n - first : last;
        block_split split;
        block_split_make(begin, end, call->reverse, &split);

        /* Reduce phase. */
        block_reduce(job, &split, seg_totals, &total);

        /* Carry phase: the inclusive prefix of the block before this one, and this one's for the next. */
        ps_value carry = call->init;
        if (r > 0 || t > 0) {
            wait_for(&before->round, t ? r + 1 : r);
            carry = before->prefix;
        }
        mine_slot->prefix = carry;
        k->combine(&mine_slot->prefix, &total);
        atomic_store_explicit(&mine_slot->round, r + 1, memory_order_release);

        /* Scan phase: the block comes back from cache. */
        block_scan(job, &split, seg_totals, carry);
    }
}

size_t ps_cpu_threads_temp_bytes(const ps_cpu_pool *pool) {
    return (size_t)(pool->threads + 1) * PSCAN_CPU_SLOT_BYTES; /* + 1: room to align the caller's buffer */
}

void ps_cpu_threads_scan(ps_cpu_pool *pool, const ps_request *call) {
    threads_job job;
    job.pool = pool;
    job.call = call;
    job.kernels = ps_cpu_kernels_get(call->type, call->op);
    job.block = PSCAN_CPU_BLOCK_BYTES / call->elem_bytes;
    uintptr_t temp = ((uintptr_t)call->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.slots = (threads_slot *)temp;
    for (unsigned t = 0; t < pool->threads; t++) atomic_init(&job.slots[t].round, 0);
    pool_run(pool, threads_job_run, &job);
}

/* ---- reduce ------------------------------------------------------------------------------------------ */

/* Each thread reduces one contiguous range; the caller combines the totals in order (never assuming the
 * operator commutes). One pass over the data at the speed of the reads. */
typedef struct reduce_job {
    const ps_request *req;
    const ps_cpu_kernels *kernels;
    uint64_t chunk;
    ps_value *totals; /* [threads] in temp, one per cache line */
} reduce_job;

static void reduce_job_run(void *arg, unsigned t) {
    const reduce_job *job = (const reduce_job *)arg;
    const uint64_t begin = t * job->chunk, end = begin + job->chunk < job->req->n ? begin + job->chunk : job->req->n;
    ps_value *slot = (ps_value *)((char *)job->totals + (size_t)t * PSCAN_CPU_SLOT_BYTES);
    if (begin < end) job->kernels->reduce(job->req->in, begin, end, slot);
}

size_t ps_cpu_threads_reduce_temp_bytes(const ps_cpu_pool *pool) {
    return (size_t)(pool->threads + 1) * PSCAN_CPU_SLOT_BYTES;
}

void ps_cpu_threads_reduce(ps_cpu_pool *pool, const ps_request *req, ps_value *result) {
    reduce_job job;
    job.req = req;
    job.kernels = ps_cpu_kernels_get(req->type, req->op);
    job.chunk = (req->n + pool->threads - 1) / pool->threads;
    uintptr_t temp = ((uintptr_t)req->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.totals = (ps_value *)temp;
    pool_run(pool, reduce_job_run, &job);
    *result = req->init;
    for (unsigned t = 0; t < pool->threads; t++)
        if ((uint64_t)t * job.chunk < req->n)
            job.kernels->combine(result, (const ps_value *)((char *)job.totals + (size_t)t * PSCAN_CPU_SLOT_BYTES));
}

/* ---- select and partition ---------------------------------------------------------------------------- */

/* Phase 1: each thread counts the kept items of its range; phase 2, after the caller has scanned the counts:
 * each moves its range from its offsets. Both groups stay in order: ranges are in order, and so are offsets. */
typedef struct select_job {
    const ps_request *req;
    uint64_t chunk;
    int phase;
    uint64_t kept_total;
    unsigned char *slots; /* [threads] in temp, one per cache line: the count, then the kept offset */
} select_job;

static void select_job_run(void *arg, unsigned t) {
    const select_job *job = (const select_job *)arg;
    const uint64_t n = job->req->n, begin = t * job->chunk, end = begin + job->chunk < n ? begin + job->chunk : n;
    uint64_t *slot = (uint64_t *)(job->slots + (size_t)t * PSCAN_CPU_SLOT_BYTES);
    if (begin >= end) return;
    if (job->phase == 0) {
        *slot = ps_cpu_select_count(job->req, begin, end);
    } else {
        const uint64_t kept_before = *slot, rejected_before = begin - kept_before;
        ps_cpu_select_move(job->req, begin, end, kept_before, job->kept_total + rejected_before);
    }
}

void ps_cpu_threads_select(ps_cpu_pool *pool, const ps_request *req) {
    select_job job;
    job.req = req;
    job.chunk = (req->n + pool->threads - 1) / pool->threads;
    job.phase = 0;
    job.kept_total = 0;
    uintptr_t temp = ((uintptr_t)req->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.slots = (unsigned char *)temp;
    pool_run(pool, select_job_run, &job);
    /* ---- spine: exclusive scan of the counts, in range order ---- */
    for (unsigned t = 0; t < pool->threads; t++) {
        if ((uint64_t)t * job.chunk >= req->n) break;
        uint64_t *slot = (uint64_t *)(job.slots + (size_t)t * PSCAN_CPU_SLOT_BYTES);
        const uint64_t count = *slot;
        *slot = job.kept_total;
        job.kept_total += count;
    }
    job.phase = 1;
    pool_run(pool, select_job_run, &job);
    memcpy(req->count, &job.kept_total, sizeof job.kept_total);
}

/* ---- copy -------------------------------------------------------------------------------------------- */

/* One contiguous slice per thread, cut at 64-byte boundaries of dst so no two threads write one cache line. */
typedef struct copy_job {
    unsigned char *dst;
    const unsigned char *src;
    size_t bytes, slice;
} copy_job;

static void copy_job_run(void *arg, unsigned t) {
    const copy_job *job = (const copy_job *)arg;
    const uintptr_t base = (uintptr_t)job->dst;
    size_t begin = (size_t)t * job->slice, end = begin + job->slice;
    /* move both cuts to the next line boundary of dst (thread 0 starts at 0, the last ends at bytes) */
    if (t > 0) begin += (size_t)((64 - ((base + begin) & 63)) & 63);
    end += (size_t)((64 - ((base + end) & 63)) & 63);
    if (end > job->bytes) end = job->bytes;
    if (begin < end) memcpy(job->dst + begin, job->src + begin, end - begin);
}

void ps_cpu_threads_copy(ps_cpu_pool *pool, void *dst, const void *src, size_t bytes) {
    copy_job job = {(unsigned char *)dst, (const unsigned char *)src, bytes, (bytes + pool->threads - 1) / pool->threads};
    pool_run(pool, copy_job_run, &job);
}
