/* cpu_backend.h - the CPU backend's internal pieces: the thread pool and the threaded scan. Internal. */
#ifndef PSCAN_CPU_BACKEND_H
#define PSCAN_CPU_BACKEND_H

#include "cpu_kernels.h"
#include "pscan_internal.h"

#include <string.h>

/* One element of `bytes` bytes: 1, 2, 4 and 8 as constant-size copies (one load and one store; in a loop the
 * switch goes the same way every time and predicts perfectly), any other size by memcpy. A memcpy call with a
 * variable size per element cost a fifth of run-length encoding's time (2026-11-28). */
static inline void ps_cpu_copy_element(void *dst, const void *src, size_t bytes) {
    switch (bytes) {
    case 1: memcpy(dst, src, 1); break;
    case 2: memcpy(dst, src, 2); break;
    case 4: memcpy(dst, src, 4); break;
    case 8: memcpy(dst, src, 8); break;
    default: memcpy(dst, src, bytes); break;
    }
}

typedef struct ps_cpu_pool ps_cpu_pool;

/* A pool of threads - 1 workers plus the calling thread, created once per context so no call spawns. */
pscan_status ps_cpu_pool_create(unsigned threads, ps_cpu_pool **pool);
void ps_cpu_pool_destroy(ps_cpu_pool *pool);
unsigned ps_cpu_pool_threads(const ps_cpu_pool *pool);
/* Runs job(arg, t) on every thread t of the pool (the caller is thread 0) and returns when all are done. */
void ps_cpu_pool_run(ps_cpu_pool *pool, void (*job)(void *arg, unsigned thread), void *arg);

/* The threaded scan needs a slot per thread and a block counter in call->temp (cpu_threads.c). */
size_t ps_cpu_threads_temp_bytes(const ps_cpu_pool *pool);
void ps_cpu_threads_scan(ps_cpu_pool *pool, const ps_request *call);
/* The threaded scan's knobs, read at every call. Their defaults are the PSCAN_CPU_* constants at the top of
 * cpu_threads.c (change the default there, in one line); only tools/tune/tune_cpu.c sets them, between calls,
 * to time the variants side by side in one run. Not thread-safe to change while scans run. */
typedef struct ps_cpu_scan_tuning {
    uint32_t block_bytes;      /* input bytes per block (a multiple of 64) */
    int vector;                /* 1: the vector block kernels (cpu_vector.c) where the processor has them */
    uint64_t stream_min_bytes; /* vector kernels: stream outputs of at least this many bytes; UINT64_MAX never */
    int dynamic;               /* 1: threads take the next block from a counter; 0: block b is thread b % T's */
} ps_cpu_scan_tuning;
extern ps_cpu_scan_tuning ps_cpu_scan_tune;
/* The threaded reduce: one contiguous range per thread, totals combined in order into *result (with init). */
/* The widened scan, PSCAN_SCAN_WIDEN (cpu_widen.c); THREADS needs ps_cpu_threads_widen_temp_bytes(n) of temp. */
void ps_cpu_widen_scan(const ps_request *req);
void ps_cpu_threads_widen_scan(ps_cpu_pool *pool, const ps_request *req);
size_t ps_cpu_threads_widen_temp_bytes(uint64_t n);

size_t ps_cpu_threads_reduce_temp_bytes(const ps_cpu_pool *pool);
void ps_cpu_threads_reduce(ps_cpu_pool *pool, const ps_request *req, ps_value *result);

/* memcpy of bytes split over the pool's threads (the machine's copy bandwidth: one core reaches a fraction). */
void ps_cpu_threads_copy(ps_cpu_pool *pool, void *dst, const void *src, size_t bytes);

/* A user operator's host function in the shapes of cpu_kernels.h (cpu_user.c): *acc = *acc (+) *x; the reduce
 * of [begin, end) in scan order (backwards if reverse; begin < end); the scan of [begin, end) from *carry. */
void ps_cpu_user_combine(const pscan_operator *op, ps_value *acc, const ps_value *x);
void ps_cpu_user_reduce(const pscan_operator *op, const void *in, uint64_t begin, uint64_t end, int reverse,
                        ps_value *total);
void ps_cpu_user_scan(const pscan_operator *op, const void *in, void *out, uint64_t begin, uint64_t end,
                      int exclusive, int reverse, ps_value *carry);

/* First- and second-order linear recurrences (cpu_recurrence.c): serial, and threaded (temp as for reduce). */
void ps_cpu_recurrence(const ps_request *req);
void ps_cpu_threads_recurrence(ps_cpu_pool *pool, const ps_request *req);
size_t ps_cpu_threads_recurrence_temp_bytes(const ps_cpu_pool *pool);

/* Select and partition (req->prim tells which), serial: cpu_select.c. Its two phases on [begin, end): the kept
 * count, and the move of kept items to kept_at... and (partition) the others to rejected_at... */
void ps_cpu_select(const ps_request *req);
uint64_t ps_cpu_select_count(const ps_request *req, uint64_t begin, uint64_t end);
uint64_t ps_cpu_select_move(const ps_request *req, uint64_t begin, uint64_t end, uint64_t kept_at,
                            uint64_t rejected_at);
/* Threaded: each thread counts one range, the counts are scanned, each moves its range (temp as for reduce). */
void ps_cpu_threads_select(ps_cpu_pool *pool, const ps_request *req);

/* Expand, serial: cpu_expand.c. Its pieces: the saturating sum of counts [begin, end); the item holding slot
 * (walking from item, whose run starts at start) and the slot's rank in it; the slots [slot, end) written from
 * item's rank on. */
void ps_cpu_expand(const ps_request *req);
uint64_t ps_cpu_expand_sum(const ps_request *req, uint64_t begin, uint64_t end);
void ps_cpu_expand_locate(const ps_request *req, uint64_t item, uint64_t start, uint64_t slot, uint64_t *found,
                          uint64_t *rank);
void ps_cpu_expand_fill(const ps_request *req, uint64_t item, uint64_t rank, uint64_t slot, uint64_t end);
/* Threaded: range sums, their scan, then equal pieces of the output per thread (temp as for reduce). */
void ps_cpu_threads_expand(ps_cpu_pool *pool, const ps_request *req);
/* Histogram (cpu_histogram.c): serial into counts; threaded into one private histogram per thread in temp,
 * then merged by bin ranges. */
size_t ps_cpu_histogram_temp_bytes(const ps_cpu_pool *pool, const ps_request *req);
void ps_cpu_histogram(ps_cpu_pool *pool, const ps_request *req);
/* Sort (cpu_sort.c): the temp both algorithms need, the serial reference and the threaded version. */
size_t ps_cpu_sort_temp_bytes(const ps_cpu_pool *pool, const ps_request *req);
void ps_cpu_sort(const ps_request *req);
void ps_cpu_threads_sort(ps_cpu_pool *pool, const ps_request *req);

/* Segmented scan and scan by key (cpu_segscan.c): serial, and threaded over the pool (temp as for reduce). */
void ps_cpu_segscan(const ps_request *req);
void ps_cpu_threads_segscan(ps_cpu_pool *pool, const ps_request *req);
/* Reduce by key and run-length encoding (req->prim tells which), serial and threaded: cpu_segscan.c. */
void ps_cpu_by_key(const ps_request *req);
void ps_cpu_threads_by_key(ps_cpu_pool *pool, const ps_request *req);

#endif /* PSCAN_CPU_BACKEND_H */
