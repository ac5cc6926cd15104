/*
 * cpu_histogram.c - the histogram on the CPU: the serial reference and the threaded version, one body.
 *
 * Idea. Each thread counts one contiguous range of the samples into its own private histogram of 64-bit counts
 * (in temp, so no two threads ever write one counter and no atomics are needed); then each thread merges one
 * range of bins over every private histogram into the output (overwriting it, or adding to it with
 * PSCAN_HISTOGRAM_ACCUMULATE; u32 counts keep the sum modulo 2^32). SERIAL is the same with one thread: one
 * pass, one private histogram, one merge. Which bin a sample falls in is histogram_bin.h's, shared with CUDA.
 *
 * Work O(n + threads * bins), depth O(n / threads + bins). Memory: the samples are read once; temp holds
 * threads * bins * 8 bytes (512 KiB per thread at 65536 bins), written once and read once by the merge.
 */
#include <string.h>

#include "cpu_backend.h"
#include "histogram_bin.h"

#define PS_CPU_HIST_ALIGN 64u /* each private histogram starts on its own cache line */

/* Counts samples [begin, end) into hist (bins 64-bit counters, added to). */
typedef void (*hist_count_fn)(const ps_request *req, uint64_t begin, uint64_t end, uint64_t *hist);

/* The spec is copied into a local, and each even form has its own loop with the form a constant: the counter
 * stores may alias the request (both are memory the compiler cannot tell apart), so reading the bounds through
 * req reloaded them for every sample, and the form's branches then stayed in the loop. Up to 1024 bins, four
 * u32 sub-histograms take samples in turn, so that a run of samples in one bin does not chain each increment on
 * the one before (store to load), and are added into hist at the end. 2^22 u32 samples on the 2-core machine
 * (2026-11-28, `pscan bench --backend cpu --primitive histogram`, docs/bench/cpu-histogram.csv), serial /
 * threaded ms: uniform over 256 bins 5.0-5.2 / 4.8-4.9 -> 2.6-2.8 / 2.1-2.4; one bin of 256 5.1-9.3 / 4.8 ->
 * 4.1-4.3 / 2.9-3.0; 65536 bins (no sub-histograms) 14.4-14.6 / 7.7 -> 9.0-9.7 / 5.5-7.3. */
#define PS_HIST_LANES 4
#define PS_HIST_LANE_BINS 1024
#define PS_HIST_LANE_SPAN ((uint64_t)1 << 31) /* samples a round: no u32 counter wraps */
#define PS_HIST_EVEN_LOOP_(name, FORM)                                                                       \
    if (hs.bins <= PS_HIST_LANE_BINS) {                                                                      \
        for (uint64_t c0 = begin; c0 < end; c0 += PS_HIST_LANE_SPAN) {                                       \
            const uint64_t c1 = end - c0 < PS_HIST_LANE_SPAN ? end : c0 + PS_HIST_LANE_SPAN;                 \
            uint32_t lanes[PS_HIST_LANES][PS_HIST_LANE_BINS];                                                \
            for (int k = 0; k < PS_HIST_LANES; k++) memset(lanes[k], 0, hs.bins * sizeof lanes[k][0]);      \
            uint64_t i = c0;                                                                                 \
            for (; i + PS_HIST_LANES <= c1; i += PS_HIST_LANES)                                              \
                for (int k = 0; k < PS_HIST_LANES; k++) {                                                    \
                    const uint32_t b = ps_histogram_even_##name(&hs, FORM, x[i + k]);                        \
                    if (b != PS_HISTOGRAM_NONE) lanes[k][b]++;                                               \
                }                                                                                            \
            for (; i < c1; i++) {                                                                            \
                const uint32_t b = ps_histogram_even_##name(&hs, FORM, x[i]);                                \
                if (b != PS_HISTOGRAM_NONE) lanes[0][b]++;                                                   \
            }                                                                                                \
            for (uint32_t b = 0; b < hs.bins; b++)                                                           \
                for (int k = 0; k < PS_HIST_LANES; k++) hist[b] += lanes[k][b];                              \
        }                                                                                                    \
    } else                                                                                                   \
        for (uint64_t i = begin; i < end; i++) {                                                             \
            const uint32_t b = ps_histogram_even_##name(&hs, FORM, x[i]);                                    \
            if (b != PS_HISTOGRAM_NONE) hist[b]++;                                                           \
        }
#define PS_HIST_COUNT_(NAME, name, T, U, LOWEST, HIGHEST)                                                    \
    static void count_##name(const ps_request *req, uint64_t begin, uint64_t end, uint64_t *hist) {          \
        const ps_histogram_spec hs = req->hist;                                                              \
        const T *x = (const T *)req->in;                                                                     \
        switch (hs.form) {                                                                                   \
        case PS_HISTOGRAM_EDGES: {                                                                           \
            const T *edges = (const T *)hs.edges;                                                            \
            for (uint64_t i = begin; i < end; i++) {                                                         \
                const uint32_t b = ps_histogram_search_##name(edges, hs.bins, x[i]);                         \
                if (b != PS_HISTOGRAM_NONE) hist[b]++;                                                       \
            }                                                                                                \
            break;                                                                                           \
        }                                                                                                    \
        case PS_HISTOGRAM_EVEN_SHIFT32: PS_HIST_EVEN_LOOP_(name, PS_HISTOGRAM_EVEN_SHIFT32) break;           \
        case PS_HISTOGRAM_EVEN_DIV32: PS_HIST_EVEN_LOOP_(name, PS_HISTOGRAM_EVEN_DIV32) break;               \
        case PS_HISTOGRAM_EVEN_SHIFT64: PS_HIST_EVEN_LOOP_(name, PS_HISTOGRAM_EVEN_SHIFT64) break;           \
        default: PS_HIST_EVEN_LOOP_(name, hs.form) break; /* DIV64; the floats' one form */                  \
        }                                                                                                    \
    }
PSCAN_ARITH_TYPE_LIST(PS_HIST_COUNT_)
#undef PS_HIST_COUNT_
#undef PS_HIST_EVEN_LOOP_

static hist_count_fn count_of(pscan_type type) {
    switch (type) {
#define PS_HIST_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                     \
    case PSCAN_TYPE_##NAME: return count_##name;
        PSCAN_ARITH_TYPE_LIST(PS_HIST_CASE_)
#undef PS_HIST_CASE_
    default: return count_u8; /* the core has validated the type */
    }
}

typedef struct hist_job {
    const ps_request *req;
    hist_count_fn count;
    unsigned threads;
    uint64_t chunk;      /* samples per thread */
    uint32_t bin_chunk;  /* bins per thread in the merge */
    size_t stride;       /* uint64_t counters from one private histogram to the next */
    uint64_t *privates;  /* [threads][stride] in temp */
    int phase;           /* 0: count; 1: merge */
} hist_job;

static void hist_job_run(void *arg, unsigned t) {
    const hist_job *job = (const hist_job *)arg;
    const ps_request *req = job->req;
    const uint32_t bins = req->hist.bins;
    if (job->phase == 0) {
        /* ---- count: this thread's range into its private histogram ---- */
        uint64_t *mine = job->privates + (size_t)t * job->stride;
        memset(mine, 0, bins * sizeof *mine);
        const uint64_t begin = t * job->chunk, end = begin + job->chunk < req->n ? begin + job->chunk : req->n;
        if (begin < end) job->count(req, begin, end, mine);
        return;
    }
    /* ---- merge: this thread's bins over every private histogram, into the output ---- */
    const uint32_t b0 = t * job->bin_chunk, b1 = b0 + job->bin_chunk < bins ? b0 + job->bin_chunk : bins;
    for (uint32_t b = b0; b < b1; b++) {
        uint64_t sum = 0;
        for (unsigned p = 0; p < job->threads; p++) sum += job->privates[(size_t)p * job->stride + b];
        if (req->hist.count_bytes == 8) {
            uint64_t *c = (uint64_t *)req->out + b;
            *c = req->hist.accumulate ? *c + sum : sum;
        } else {
            uint32_t *c = (uint32_t *)req->out + b;
            *c = req->hist.accumulate ? *c + (uint32_t)sum : (uint32_t)sum;
        }
    }
}

static unsigned hist_threads(const ps_cpu_pool *pool, const ps_request *req) {
    return req->algo == PSCAN_ALGO_THREADS ? ps_cpu_pool_threads(pool) : 1;
}

static size_t hist_stride(uint32_t bins) {
    const size_t per_line = PS_CPU_HIST_ALIGN / sizeof(uint64_t);
    return (bins + per_line - 1) / per_line * per_line;
}

size_t ps_cpu_histogram_temp_bytes(const ps_cpu_pool *pool, const ps_request *req) {
    if (req->n == 0) return 0;
    return (size_t)hist_threads(pool, req) * hist_stride(req->hist.bins) * sizeof(uint64_t) + PS_CPU_HIST_ALIGN;
}

void ps_cpu_histogram(ps_cpu_pool *pool, const ps_request *req) {
    const uint32_t bins = req->hist.bins;
    if (req->n == 0) {
        if (!req->hist.accumulate) memset(req->out, 0, (size_t)bins * req->hist.count_bytes);
        return;
    }
    hist_job job;
    job.req = req;
    job.count = count_of(req->type);
    job.threads = hist_threads(pool, req);
    job.chunk = (req->n + job.threads - 1) / job.threads;
    job.bin_chunk = (bins + job.threads - 1) / job.threads;
    job.stride = hist_stride(bins);
    uintptr_t temp = ((uintptr_t)req->temp + PS_CPU_HIST_ALIGN - 1) & ~(uintptr_t)(PS_CPU_HIST_ALIGN - 1);
    job.privates = (uint64_t *)temp;
    if (job.threads == 1) {
        job.phase = 0;
        hist_job_run(&job, 0);
        job.phase = 1;
        hist_job_run(&job, 0);
        return;
    }
    job.phase = 0;
    ps_cpu_pool_run(pool, hist_job_run, &job);
    job.phase = 1;
    ps_cpu_pool_run(pool, hist_job_run, &job);
}
