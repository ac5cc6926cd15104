/*
 * cpu_threads.c - the CPU backend's parallel scan: cache-blocked reduce-then-scan over a persistent pool.
 *
 * Idea. The array is cut into blocks small enough to stay in a thread's L2 cache; the threads take them in
 * order, each the next one nobody has taken (a shared counter; issue 8: before, thread t took blocks t, t + T,
 * ..., so one worker that woke late from its sleep stalled every block after its first). For each block it
 * takes a thread runs three phases:
 *   reduce phase:  reduce the block to one total (the block is now in the thread's cache);
 *   carry phase:   wait for the inclusive prefix the block before it has published (held by a thread that is
 *                  running: blocks are taken in order), take it as the carry, and publish carry + total for
 *                  the block after it;
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
 *
 * Issue 8 (0.9 of an all-core copy on 16 cores). Measured on the GPU machine's 16-core host before this change
 * (pscan bench, 2^24..2^28): i32 0.60, 0.69, 0.81, 0.82, 0.82 of copy; i64 0.75, 0.88, 0.88, 0.85, 0.92. Two
 * readings of those figures, and a change for each:
 *   - i32 and i64 both stopped near 80 GB/s of counted traffic while the copy did 90-108: the same bytes per
 *     second at 4 and 8 bytes per element points at memory, not compute. Through the cache a scan moves 3n
 *     bytes (each output line is read for ownership before it is written), a large copy 2n (glibc streams
 *     it). So integer sum/or/xor blocks take the AVX2 kernels of cpu_vector.c (vectorised reduce, in-register
 *     scan: 39-41 GB/s per thread from L2 for i32 and i64 on the CI machine's Xeon against 17 and 26 for the
 *     chains; a 16-core share of the copy is ~6 GB/s), and outputs of PSCAN_CPU_STREAM_MIN_BYTES and more are
 *     written with non-temporal stores. The 2-core finding above stands for that machine; 16 cores are
 *     where DRAM becomes the limit.
 *   - The shortfall shrank with size like a fixed cost of a few hundred microseconds per call: pscan bench
 *     times THREADS right after SERIAL (milliseconds, long enough for the workers to fall asleep), and with
 *     the static deal the latest worker to wake delayed every block after its first. Hence the block counter.
 * Floats, min, max, and, product and user operators keep the chains; block boundaries depend only on the
 * element size, so a float sum's bits are the same on any pool and for any deal of the blocks.
 * tools/tune/tune_cpu.c times every knob below side by side (not yet run on 16 cores: its figures go here).
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
/* 1: integer sum/or/xor blocks take the AVX2 kernels of cpu_vector.c where the processor has them. */
#define PSCAN_CPU_VECTOR 1
/* Outputs of at least this many bytes are written around the cache by the vector kernels (non-temporal
 * stores: no read for ownership, 2n bytes of DRAM traffic instead of 3n). 32 MiB: beyond what a 16-core share
 * of an L3 holds, so such an output would not stay in cache for its reader anyway. UINT64_MAX turns it off. */
#define PSCAN_CPU_STREAM_MIN_BYTES ((uint64_t)32 << 20)
/* 1: each thread takes the next untaken block from a shared counter; 0: thread t takes blocks t, t + T, ...
 * Taken in order, a block's predecessor is always held by a running thread, so a worker that wakes late (or is
 * descheduled between blocks) only joins later instead of stalling every block after its own. */
#define PSCAN_CPU_DYNAMIC 1
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
void ps_cpu_pool_run(ps_cpu_pool *pool, void (*job)(void *, unsigned), void *arg) {
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

/* ---- scan -------------------------------------------------------------------------------------------- */

/* What block b published, in slot b % threads: done = b + 1 once prefix holds the inclusive prefix up to the
 * end of block b. A slot is reused by block b + threads only after block b + 1 has read it: the publishes
 * form one chain in block order, and block b + 1 reads before it publishes. */
typedef struct threads_slot {
    atomic_uint_fast64_t done;
    ps_value prefix;
    unsigned char pad[PSCAN_CPU_SLOT_BYTES - sizeof(atomic_uint_fast64_t) - sizeof(ps_value)];
} threads_slot;

typedef struct threads_job {
    ps_cpu_pool *pool;
    const ps_request *call;
    const ps_cpu_kernels *kernels; /* built-in operators; NULL for a user operator (call->user_op) */
    const ps_cpu_vector_kernels *vector; /* whole-block vector kernels, or NULL: the chains */
    int stream;                          /* the vector scan streams its output around the cache */
    uint64_t block;                /* elements per block */
    uint64_t blocks;               /* blocks in the array */
    int dynamic;                   /* blocks taken from next_block, else block b is thread b % threads's */
    atomic_uint_fast64_t *next_block; /* the next block nobody has taken, in the caller's temp */
    threads_slot *slots;           /* [threads], in the caller's temp */
} threads_job;

ps_cpu_scan_tuning ps_cpu_scan_tune = {PSCAN_CPU_BLOCK_BYTES, PSCAN_CPU_VECTOR, PSCAN_CPU_STREAM_MIN_BYTES,
                                       PSCAN_CPU_DYNAMIC};

/* ---- the operator: the built-in kernels, or a user operator's host function (cpu_user.c) ----------------- */

/* The reduce of [begin, end). A user operator's is taken in scan order (backwards in a reverse scan): it may not
 * commute. (The built-in kernels reduce in physical order; every built-in operator commutes.) */
static void op_reduce(const threads_job *job, uint64_t begin, uint64_t end, ps_value *total) {
    if (job->kernels)
        job->kernels->reduce(job->call->in, begin, end, total);
    else
        ps_cpu_user_reduce(job->call->user_op, job->call->in, begin, end, job->call->reverse, total);
}

static void op_combine(const threads_job *job, ps_value *acc, const ps_value *x) {
    if (job->kernels)
        job->kernels->combine(acc, x);
    else
        ps_cpu_user_combine(job->call->user_op, acc, x);
}

static void op_scan(const threads_job *job, uint64_t begin, uint64_t end, ps_value *carry) {
    const ps_request *call = job->call;
    if (job->kernels)
        job->kernels->scan(call->in, call->out, begin, end, call->exclusive, call->reverse, carry);
    else
        ps_cpu_user_scan(call->user_op, call->in, call->out, begin, end, call->exclusive, call->reverse, carry);
}

/* The chains in lockstep (built-in), or one after the other (a user operator: an indirect call per element
 * leaves no latency for the lockstep to hide). */
static void op_chains(const threads_job *job, const void *const *src, void *const *dst, uint64_t len,
                      ps_value *carry) {
    const ps_request *call = job->call;
    if (job->kernels) {
        job->kernels->chains(src, dst, len, call->exclusive, call->reverse, carry);
        return;
    }
    for (unsigned c = 0; c < PSCAN_CPU_CHAINS; c++)
        ps_cpu_user_scan(call->user_op, src[c], dst[c], 0, len, call->exclusive, call->reverse, &carry[c]);
}

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
    int have = 0;
    for (unsigned c = 0; c < PSCAN_CPU_CHAINS; c++) {
        if (b->q == 0) break;
        op_reduce(job, b->seg[c], b->seg[c] + b->q, &seg_totals[c]);
        if (have)
            op_combine(job, total, &seg_totals[c]);
        else
            *total = seg_totals[c];
        have = 1;
    }
    if (b->tail_begin < b->tail_end) {
        ps_value tail;
        op_reduce(job, b->tail_begin, b->tail_end, &tail);
        if (have)
            op_combine(job, total, &tail);
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
                op_combine(job, &chain_carry[c], &seg_totals[c - 1]);
            }
            src[c] = (const char *)call->in + b->seg[c] * es;
            dst[c] = (char *)call->out + b->seg[c] * es;
        }
        op_chains(job, src, dst, b->q, chain_carry);
    }
    /* The remainder continues the last chain (or is the whole block, if it is shorter than CHAINS). */
    if (b->tail_begin < b->tail_end)
        op_scan(job, b->tail_begin, b->tail_end, &chain_carry[b->q > 0 ? PSCAN_CPU_CHAINS - 1 : 0]);
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
    const uint64_t n = call->n, threads = job->pool->threads;
    ps_value total, seg_totals[PSCAN_CPU_CHAINS];

    for (uint64_t b = t;; b += threads) {
        /* the next block: the first one nobody has taken, or this thread's next one by the static deal */
        if (job->dynamic) b = atomic_fetch_add_explicit(job->next_block, 1, memory_order_relaxed);
        if (b >= job->blocks) break;
        /* positions in scan order; a reverse scan meets the array's end first */
        const uint64_t first = b * job->block, last = first + job->block < n ? first + job->block : n;
        const uint64_t begin = call->reverse ? n - last : first, end = call->reverse ? n - first : last;
        block_split split;
        block_split_make(begin, end, call->reverse, &split);

        /* Reduce phase. */
        if (job->vector)
            job->vector->reduce(call->in, begin, end, &total);
        else
            block_reduce(job, &split, seg_totals, &total);

        /* Carry phase: the inclusive prefix of the block before this one, and this one's for the next. */
        ps_value carry = call->init;
        if (b > 0) {
            const threads_slot *before = &job->slots[(b - 1) % threads];
            wait_for(&before->done, b);
            carry = before->prefix;
        }
        threads_slot *mine = &job->slots[b % threads];
        mine->prefix = carry;
        op_combine(job, &mine->prefix, &total);
        atomic_store_explicit(&mine->done, b + 1, memory_order_release);

        /* Scan phase: the block comes back from cache. */
        if (job->vector)
            job->vector->scan(call->in, call->out, begin, end, call->exclusive, call->reverse, job->stream, &carry);
        else
            block_scan(job, &split, seg_totals, carry);
    }
}

size_t ps_cpu_threads_temp_bytes(const ps_cpu_pool *pool) {
    /* a slot per thread, the block counter, and room to align the caller's buffer */
    return (size_t)(pool->threads + 2) * PSCAN_CPU_SLOT_BYTES;
}

void ps_cpu_threads_scan(ps_cpu_pool *pool, const ps_request *call) {
    threads_job job;
    job.pool = pool;
    job.call = call;
    job.kernels = call->user_op ? NULL : ps_cpu_kernels_get(call->type, call->op);
    job.vector = call->user_op || !ps_cpu_scan_tune.vector ? NULL : ps_cpu_vector_get(call->type, call->op);
    job.stream = call->n * call->elem_bytes >= ps_cpu_scan_tune.stream_min_bytes;
    /* The block depends on the element size alone, never on the thread count: a float sum's rounding follows
     * the blocks (cpu_backend.c), so the same call gives the same bits on any pool. */
    job.block = ps_cpu_scan_tune.block_bytes / call->elem_bytes;
    job.blocks = (call->n + job.block - 1) / job.block;
    job.dynamic = ps_cpu_scan_tune.dynamic;
    uintptr_t temp = ((uintptr_t)call->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.slots = (threads_slot *)temp;
    for (unsigned t = 0; t < pool->threads; t++) atomic_init(&job.slots[t].done, 0);
    job.next_block = (atomic_uint_fast64_t *)(temp + (size_t)pool->threads * PSCAN_CPU_SLOT_BYTES);
    atomic_init(job.next_block, 0);
    ps_cpu_pool_run(pool, threads_job_run, &job);
}

/* ---- reduce ------------------------------------------------------------------------------------------ */

/* Each thread reduces one contiguous range; the caller combines the totals in order (never assuming the
 * operator commutes). One pass over the data at the speed of the reads. */
typedef struct reduce_job {
    const ps_request *req;
    const ps_cpu_kernels *kernels; /* NULL for a user operator (req->user_op) */
    uint64_t chunk;
    ps_value *totals; /* [threads] in temp, one per cache line */
} reduce_job;

static void reduce_job_run(void *arg, unsigned t) {
    const reduce_job *job = (const reduce_job *)arg;
    const uint64_t begin = t * job->chunk, end = begin + job->chunk < job->req->n ? begin + job->chunk : job->req->n;
    ps_value *slot = (ps_value *)((char *)job->totals + (size_t)t * PSCAN_CPU_SLOT_BYTES);
    if (begin < end && job->kernels)
        job->kernels->reduce(job->req->in, begin, end, slot);
    else if (begin < end)
        ps_cpu_user_reduce(job->req->user_op, job->req->in, begin, end, 0, slot);
}

size_t ps_cpu_threads_reduce_temp_bytes(const ps_cpu_pool *pool) {
    return (size_t)(pool->threads + 1) * PSCAN_CPU_SLOT_BYTES;
}

void ps_cpu_threads_reduce(ps_cpu_pool *pool, const ps_request *req, ps_value *result) {
    reduce_job job;
    job.req = req;
    job.kernels = req->user_op ? NULL : ps_cpu_kernels_get(req->type, req->op);
    job.chunk = (req->n + pool->threads - 1) / pool->threads;
    uintptr_t temp = ((uintptr_t)req->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.totals = (ps_value *)temp;
    ps_cpu_pool_run(pool, reduce_job_run, &job);
    *result = req->init;
    for (unsigned t = 0; t < pool->threads; t++) {
        if ((uint64_t)t * job.chunk >= req->n) continue;
        const ps_value *total = (const ps_value *)((char *)job.totals + (size_t)t * PSCAN_CPU_SLOT_BYTES);
        if (job.kernels)
            job.kernels->combine(result, total);
        else
            ps_cpu_user_combine(req->user_op, result, total);
    }
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
    ps_cpu_pool_run(pool, select_job_run, &job);
    /* ---- spine: exclusive scan of the counts, in range order ---- */
    for (unsigned t = 0; t < pool->threads; t++) {
        if ((uint64_t)t * job.chunk >= req->n) break;
        uint64_t *slot = (uint64_t *)(job.slots + (size_t)t * PSCAN_CPU_SLOT_BYTES);
        const uint64_t count = *slot;
        *slot = job.kept_total;
        job.kept_total += count;
    }
    job.phase = 1;
    ps_cpu_pool_run(pool, select_job_run, &job);
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
    if (begin >= end) return;
    /* Large copies stream, as the scan streams large outputs: a slice stored through the cache costs a read for
     * ownership of every line (glibc's memcpy keeps normal stores up to tens of MiB per call), which held the
     * 16-core copy at 80-125 GB/s while the streaming scan moved 126-178 (docs/performance.md, 2026-11-23). */
    if (job->bytes >= PSCAN_CPU_STREAM_MIN_BYTES)
        ps_cpu_copy_stream(job->dst + begin, job->src + begin, end - begin);
    else
        memcpy(job->dst + begin, job->src + begin, end - begin);
}

void ps_cpu_threads_copy(ps_cpu_pool *pool, void *dst, const void *src, size_t bytes) {
    copy_job job = {(unsigned char *)dst, (const unsigned char *)src, bytes, (bytes + pool->threads - 1) / pool->threads};
    ps_cpu_pool_run(pool, copy_job_run, &job);
}

/* ---- expand ------------------------------------------------------------------------------------------ */

/* Phase 1: each thread sums the counts of its item range; phase 2, after the caller has scanned the sums:
 * each thread writes an equal share of the output slots, from the item that holds its first slot (found from
 * the range starts and a walk through one range), so one huge count is shared by every thread. */
typedef struct expand_job {
    const ps_request *req;
    uint64_t chunk, slots;
    unsigned threads;
    int phase;
    unsigned char *starts; /* [threads] in temp, one per cache line: the range's sum, then its start */
} expand_job;

static uint64_t *expand_slot(const expand_job *job, unsigned t) {
    return (uint64_t *)(job->starts + (size_t)t * PSCAN_CPU_SLOT_BYTES);
}

static void expand_job_run(void *arg, unsigned t) {
    const expand_job *job = (const expand_job *)arg;
    const uint64_t n = job->req->n;
    if (job->phase == 0) {
        const uint64_t begin = t * job->chunk, end = begin + job->chunk < n ? begin + job->chunk : n;
        if (begin < end) *expand_slot(job, t) = ps_cpu_expand_sum(job->req, begin, end);
        return;
    }
    const uint64_t lo = job->slots / job->threads * t + (job->slots % job->threads) * t / job->threads;
    const uint64_t hi = job->slots / job->threads * (t + 1) + (job->slots % job->threads) * (t + 1) / job->threads;
    if (lo >= hi) return;
    unsigned r = 0; /* the last range that starts at or before lo */
    for (unsigned q = 1; q < job->threads && (uint64_t)q * job->chunk < n; q++)
        if (*expand_slot(job, q) <= lo) r = q;
    uint64_t item, rank;
    ps_cpu_expand_locate(job->req, (uint64_t)r * job->chunk, *expand_slot(job, r), lo, &item, &rank);
    ps_cpu_expand_fill(job->req, item, rank, lo, hi);
}

void ps_cpu_threads_expand(ps_cpu_pool *pool, const ps_request *req) {
    expand_job job;
    job.req = req;
    job.threads = pool->threads;
    job.chunk = (req->n + pool->threads - 1) / pool->threads;
    job.phase = 0;
    uintptr_t temp = ((uintptr_t)req->temp + PSCAN_CPU_SLOT_BYTES - 1) & ~(uintptr_t)(PSCAN_CPU_SLOT_BYTES - 1);
    job.starts = (unsigned char *)temp;
    ps_cpu_pool_run(pool, expand_job_run, &job);
    /* ---- spine: the ranges' starts, saturating, in range order ---- */
    uint64_t total = 0;
    for (unsigned t = 0; t < pool->threads && (uint64_t)t * job.chunk < req->n; t++) {
        uint64_t *slot = expand_slot(&job, t);
        const uint64_t sum = *slot;
        *slot = total;
        total = total + sum < total ? UINT64_MAX : total + sum;
    }
    job.slots = total < req->capacity ? total : req->capacity;
    if (job.slots > 0) {
        job.phase = 1;
        ps_cpu_pool_run(pool, expand_job_run, &job);
    }
    memcpy(req->count, &total, sizeof total);
}
