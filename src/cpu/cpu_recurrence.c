/*
 * cpu_recurrence.c - first-order linear recurrences on the CPU: y[i] = a[i] * y[i-1] + b[i] (forward), or
 * y[i] = a[i] * y[i+1] + b[i] (reverse), from y0.
 *
 * Serial: the loop itself, in the element type's own precision (the reference the tests hold up is f64).
 * Threaded: the scan of the affine maps x -> a x + b, in two passes over one contiguous range per thread:
 *   reduce phase:  each thread composes the maps of its range in scan order into one map (A, B);
 *   spine:         the caller applies them in range order to y0: the y entering each range;
 *   scan phase:    each thread runs the serial loop over its range from that y.
 * Composition (x -> a2 (a1 x + b1) + b2 = (a2 a1) x + (a2 b1 + b2)) does not commute: ranges are composed in
 * order only. Work 3n multiply-adds against the loop's n; the loop's one dependent multiply-add per element
 * is its limit (4 cycles), not memory, so two threads win from about 2^16 elements.
 */
#include <string.h>

#include "cpu_backend.h"

#define RECURRENCE_LOOP(T, a, b, y, begin, end, reverse, state)                                              \
    do {                                                                                                     \
        if (reverse)                                                                                         \
            for (uint64_t i = (end); i-- > (begin);) (y)[i] = state = (a)[i] * state + (b)[i];               \
        else                                                                                                 \
            for (uint64_t i = (begin); i < (end); i++) (y)[i] = state = (a)[i] * state + (b)[i];             \
    } while (0)

/* y over [begin, end) in scan order from *state (the y before the range), leaving the last y in *state. */
static void recurrence_range(const ps_request *req, uint64_t begin, uint64_t end, ps_value *state) {
    if (req->type == PSCAN_TYPE_F32) {
        const float *a = (const float *)req->in, *b = (const float *)req->in2;
        float *y = (float *)req->out, s = state->f32;
        RECURRENCE_LOOP(float, a, b, y, begin, end, req->reverse, s);
        state->f32 = s;
    } else {
        const double *a = (const double *)req->in, *b = (const double *)req->in2;
        double *y = (double *)req->out, s = state->f64;
        RECURRENCE_LOOP(double, a, b, y, begin, end, req->reverse, s);
        state->f64 = s;
    }
}

/* The composed map of [begin, end) in scan order, in the element type's precision: map[0] = A, map[1] = B. */
static void recurrence_compose(const ps_request *req, uint64_t begin, uint64_t end, ps_value map[2]) {
#define COMPOSE(T, field)                                                                                    \
    {                                                                                                        \
        const T *a = (const T *)req->in, *b = (const T *)req->in2;                                           \
        T A = 1, B = 0;                                                                                      \
        for (uint64_t k = 0; k < end - begin; k++) {                                                         \
            const uint64_t i = req->reverse ? end - 1 - k : begin + k;                                       \
            A = a[i] * A;                                                                                    \
            B = a[i] * B + b[i];                                                                             \
        }                                                                                                    \
        map[0].field = A, map[1].field = B;                                                                  \
    }
    if (req->type == PSCAN_TYPE_F32)
        COMPOSE(float, f32)
    else
        COMPOSE(double, f64)
#undef COMPOSE
}

void ps_cpu_recurrence(const ps_request *req) {
    ps_value state = req->init;
    recurrence_range(req, 0, req->n, &state);
}

/* ---- threaded ------------------------------------------------------------------------------------------ */

#define RECURRENCE_SLOT_BYTES 128 /* two cache lines per thread: its map, then the y entering its range */

typedef struct recurrence_job {
    const ps_request *req;
    uint64_t chunk; /* elements per thread, in scan order */
    int phase;
    unsigned char *slots;
} recurrence_job;

static void recurrence_job_run(void *arg, unsigned t) {
    const recurrence_job *job = (const recurrence_job *)arg;
    const ps_request *req = job->req;
    const uint64_t first = (uint64_t)t * job->chunk;
    if (first >= req->n) return;
    const uint64_t last = first + job->chunk < req->n ? first + job->chunk : req->n;
    /* positions in scan order map to physical ones mirrored in a reverse recurrence */
    const uint64_t begin = req->reverse ? req->n - last : first, end = req->reverse ? req->n - first : last;
    ps_value *slot = (ps_value *)(job->slots + (size_t)t * RECURRENCE_SLOT_BYTES);
    if (job->phase == 0)
        recurrence_compose(req, begin, end, slot);
    else
        recurrence_range(req, begin, end, &slot[2]);
}

void ps_cpu_threads_recurrence(ps_cpu_pool *pool, const ps_request *req) {
    const unsigned threads = ps_cpu_pool_threads(pool);
    recurrence_job job;
    job.req = req;
    job.chunk = (req->n + threads - 1) / threads;
    job.phase = 0;
    const uintptr_t temp = ((uintptr_t)req->temp + 63) & ~(uintptr_t)63;
    job.slots = (unsigned char *)temp;
    ps_cpu_pool_run(pool, recurrence_job_run, &job);
    /* ---- spine: the y entering each range, in range order ---- */
    ps_value y = req->init;
    for (unsigned t = 0; t < threads && (uint64_t)t * job.chunk < req->n; t++) {
        ps_value *slot = (ps_value *)(job.slots + (size_t)t * RECURRENCE_SLOT_BYTES);
        slot[2] = y;
        if (req->type == PSCAN_TYPE_F32)
            y.f32 = slot[0].f32 * y.f32 + slot[1].f32;
        else
            y.f64 = slot[0].f64 * y.f64 + slot[1].f64;
    }
    job.phase = 1;
    ps_cpu_pool_run(pool, recurrence_job_run, &job);
}

size_t ps_cpu_threads_recurrence_temp_bytes(const ps_cpu_pool *pool) {
    return (size_t)(ps_cpu_pool_threads(pool) + 1) * RECURRENCE_SLOT_BYTES;
}
