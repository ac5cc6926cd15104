/*
 * cpu_recurrence.c - first-order linear recurrences on the CPU: y[i] = a[i] * y[i-1] + b[i] (forward), or
 * y[i] = a[i] * y[i+1] + b[i] (reverse), from y0; with a NULL, every a[i] is the constant req->operand (Horner's
 * rule for pscan_polyval).
 *
 * Serial: the loop itself, in the element type's own precision (the reference the tests hold up is f64).
 * Threaded: the scan of the affine maps x -> a x + b, in two passes over one contiguous range per thread:
 *   reduce phase:  each thread composes the maps of its range in scan order into one map (A, B);
 *   spine:         the caller applies them in range order to y0: the y entering each range;
 *   scan phase:    each thread runs the serial loop over its range from that y.
 * Composition (x -> a2 (a1 x + b1) + b2 = (a2 a1) x + (a2 b1 + b2)) does not commute: ranges are composed in
 * order only. Work 3n multiply-adds against the loop's n; the loop's one dependent multiply-add per element
 * is its limit (4 cycles), not memory, so two threads win from about 2^16 elements.
 *
 * Second order (req->order == 2): y[i] = a[i] y[i-1] + b[i] y[i-2] + c[i] (reverse: y[i+1], y[i+2]). The state
 * is the pair s = (y[i-1], y[i-2]) and each element the affine map s -> (a s0 + b s1 + c, s0): the companion
 * matrix [[a, b, c], [1, 0, 0], [0, 0, 1]] acting on (s0, s1, 1). A composed map keeps the last row (0 0 1), so
 * it is two rows of three, P; appending element i gives row0' = a row0 + b row1 + c e2, row1' = row0 (ordered,
 * as above). Same two passes; work 6 multiply-adds per element in the reduce phase against the loop's 2.
 */
#include <string.h>

#include "cpu_backend.h"

/* a[i], or the constant multiplier ac when a is NULL (pscan_polyval: Horner's rule, a[i] = x). */
#define A_AT(a, i, ac) ((a) ? (a)[i] : (ac))

#define RECURRENCE_LOOP(T, a, ac, b, y, begin, end, reverse, state)                                          \
    do {                                                                                                     \
        if (reverse)                                                                                         \
            for (uint64_t i = (end); i-- > (begin);) (y)[i] = state = A_AT(a, i, ac) * state + (b)[i];       \
        else                                                                                                 \
            for (uint64_t i = (begin); i < (end); i++) (y)[i] = state = A_AT(a, i, ac) * state + (b)[i];     \
    } while (0)

/* y over [begin, end) in scan order from *state (the y before the range), leaving the last y in *state. */
static void recurrence_range(const ps_request *req, uint64_t begin, uint64_t end, ps_value *state) {
    if (req->type == PSCAN_TYPE_F32) {
        const float *a = (const float *)req->in, *b = (const float *)req->in2;
        float *y = (float *)req->out, s = state->f32;
        RECURRENCE_LOOP(float, a, req->operand.f32, b, y, begin, end, req->reverse, s);
        state->f32 = s;
    } else {
        const double *a = (const double *)req->in, *b = (const double *)req->in2;
        double *y = (double *)req->out, s = state->f64;
        RECURRENCE_LOOP(double, a, req->operand.f64, b, y, begin, end, req->reverse, s);
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
            const T ai = A_AT(a, i, req->operand.field);                                                     \
            A = ai * A;                                                                                      \
            B = ai * B + b[i];                                                                               \
        }                                                                                                    \
        map[0].field = A, map[1].field = B;                                                                  \
    }
    if (req->type == PSCAN_TYPE_F32)
        COMPOSE(float, f32)
    else
        COMPOSE(double, f64)
#undef COMPOSE
}

/* ---- second order -------------------------------------------------------------------------------------- */

/* y over [begin, end) in scan order from the state s = (s[0], s[1]) = the two y before the range, leaving the
 * last two there. Each element's a, b, c are read before its y is written, so y may be any one of them. */
#define RECURRENCE2_RANGE(T, req, begin, end, s)                                                             \
    do {                                                                                                     \
        const T *a = (const T *)(req)->in, *b = (const T *)(req)->in2, *c = (const T *)(req)->in3;           \
        T *y = (T *)(req)->out, s0 = (s)[0], s1 = (s)[1];                                                    \
        for (uint64_t k = 0; k < (end) - (begin); k++) {                                                     \
            const uint64_t i = (req)->reverse ? (end) - 1 - k : (begin) + k;                                 \
            const T v = a[i] * s0 + b[i] * s1 + c[i];                                                        \
            s1 = s0, s0 = v;                                                                                 \
            y[i] = v;                                                                                        \
        }                                                                                                    \
        (s)[0] = s0, (s)[1] = s1;                                                                            \
    } while (0)

/* The composed map of [begin, end) in scan order: p[0..2] = row 0, p[3..5] = row 1 (row 2 is 0 0 1). */
#define RECURRENCE2_COMPOSE(T, req, begin, end, p)                                                           \
    do {                                                                                                     \
        const T *a = (const T *)(req)->in, *b = (const T *)(req)->in2, *c = (const T *)(req)->in3;           \
        T r0 = 1, r1 = 0, r2 = 0, q0 = 0, q1 = 1, q2 = 0; /* the identity */                                 \
        for (uint64_t k = 0; k < (end) - (begin); k++) {                                                     \
            const uint64_t i = (req)->reverse ? (end) - 1 - k : (begin) + k;                                 \
            const T n0 = a[i] * r0 + b[i] * q0, n1 = a[i] * r1 + b[i] * q1, n2 = a[i] * r2 + b[i] * q2 + c[i]; \
            q0 = r0, q1 = r1, q2 = r2;                                                                       \
            r0 = n0, r1 = n1, r2 = n2;                                                                       \
        }                                                                                                    \
        (p)[0] = r0, (p)[1] = r1, (p)[2] = r2, (p)[3] = q0, (p)[4] = q1, (p)[5] = q2;                        \
    } while (0)

/* Applies a composed map p to the state s in place. */
#define RECURRENCE2_APPLY(T, p, s)                                                                           \
    do {                                                                                                     \
        const T s0 = (s)[0], s1 = (s)[1];                                                                    \
        (s)[0] = (p)[0] * s0 + (p)[1] * s1 + (p)[2];                                                         \
        (s)[1] = (p)[3] * s0 + (p)[4] * s1 + (p)[5];                                                         \
    } while (0)

/* A thread's slot in order 2, in the element type: its map (6), then the state entering its range (2). */
#define RECURRENCE2_MAP 0
#define RECURRENCE2_STATE 6

static void recurrence2_range(const ps_request *req, uint64_t begin, uint64_t end, void *state) {
    if (req->type == PSCAN_TYPE_F32)
        RECURRENCE2_RANGE(float, req, begin, end, (float *)state);
    else
        RECURRENCE2_RANGE(double, req, begin, end, (double *)state);
}

void ps_cpu_recurrence(const ps_request *req) {
    if (req->order == 2) {
        float sf[2] = {req->init.f32, req->init2.f32};
        double sd[2] = {req->init.f64, req->init2.f64};
        recurrence2_range(req, 0, req->n, req->type == PSCAN_TYPE_F32 ? (void *)sf : (void *)sd);
        return;
    }
    ps_value state = req->init;
    recurrence_range(req, 0, req->n, &state);
}

/* ---- threaded ------------------------------------------------------------------------------------------ */

#define RECURRENCE_SLOT_BYTES 128 /* two cache lines per thread: its map, then the y entering its range */
/* a thread's slot holds a first-order map and state (3 values), and a second-order one (8 elements) */
typedef char recurrence_slot_fits_[3 * sizeof(ps_value) <= RECURRENCE_SLOT_BYTES &&
                                           8 * sizeof(double) <= RECURRENCE_SLOT_BYTES
                                       ? 1
                                       : -1];

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
    if (req->order == 2) {
        unsigned char *slot2 = job->slots + (size_t)t * RECURRENCE_SLOT_BYTES;
        if (job->phase == 1)
            recurrence2_range(req, begin, end, slot2 + RECURRENCE2_STATE * req->elem_bytes);
        else if (req->type == PSCAN_TYPE_F32)
            RECURRENCE2_COMPOSE(float, req, begin, end, (float *)slot2 + RECURRENCE2_MAP);
        else
            RECURRENCE2_COMPOSE(double, req, begin, end, (double *)slot2 + RECURRENCE2_MAP);
        return;
    }
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
    if (req->order == 2) {
        float sf[2] = {req->init.f32, req->init2.f32};
        double sd[2] = {req->init.f64, req->init2.f64};
        for (unsigned t = 0; t < threads && (uint64_t)t * job.chunk < req->n; t++) {
            unsigned char *slot = job.slots + (size_t)t * RECURRENCE_SLOT_BYTES;
            if (req->type == PSCAN_TYPE_F32) {
                float *p = (float *)slot;
                p[RECURRENCE2_STATE] = sf[0], p[RECURRENCE2_STATE + 1] = sf[1];
                RECURRENCE2_APPLY(float, p + RECURRENCE2_MAP, sf);
            } else {
                double *p = (double *)slot;
                p[RECURRENCE2_STATE] = sd[0], p[RECURRENCE2_STATE + 1] = sd[1];
                RECURRENCE2_APPLY(double, p + RECURRENCE2_MAP, sd);
            }
        }
        job.phase = 1;
        ps_cpu_pool_run(pool, recurrence_job_run, &job);
        return;
    }
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
