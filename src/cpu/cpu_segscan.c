/*
 * cpu_segscan.c - segmented scan and scan by key on the CPU: the serial reference, and the threaded version.
 *
 * Both walk the segments in physical order, whatever the scan direction: a segment [s, e) is one call of the
 * type x operator scan kernel (cpu_kernels.c) from init, forwards or backwards. Where segments start comes from
 * one function, next_head(): the next head flag, the next offset, or the next change of key.
 *
 * Threads. Each thread takes one contiguous range and, in scan order, reduces it to a pair (f, v): f says
 * whether a segment starts in the range (in scan order: for a reverse scan, whether one ends there), v is the
 * reduction of the range's last open piece (the one that runs on into the next range). The caller folds the
 * pairs in scan order with the segmented combine
 *     (fa, a) . (fb, b) = (fa | fb, fb ? b : a + b)      (associative, never commutative)
 * and each thread then scans its range, the open piece at its scan-order start continuing from init + v of the
 * fold before it. Two reads of the input (the reduce reads one piece per range only), one write. Work O(n),
 * depth O(n / T + T).
 */
#include <string.h>

#include "cpu_backend.h"

/* ---- where segments start ----------------------------------------------------------------------------- */

/* Walks heads upwards; for offsets it keeps the index of the first offset above the last position asked. */
typedef struct seg_cursor {
    const ps_request *req;
    uint64_t k;
} seg_cursor;

/* The index of the first offset > x (offsets are ascending, offsets[count] == n > x when x < n). */
static uint64_t offsets_above(const ps_request *req, uint64_t x) {
    const uint64_t *o = (const uint64_t *)req->in2;
    uint64_t lo = 0, hi = req->segment_count + 1;
    while (lo < hi) {
        const uint64_t mid = lo + (hi - lo) / 2;
        if (o[mid] <= x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static void cursor_init(seg_cursor *c, const ps_request *req, uint64_t from) {
    c->req = req;
    c->k = req->seg_form == PS_SEGMENTS_OFFSETS ? offsets_above(req, from) : 0;
}

/* The first q in [from, limit) where keys q - 1 and q differ bit for bit (0 < from), or limit: keys of 1, 2, 4 and 8
 * bytes compared as words in a loop of their own (a memcmp call a key cost about 10 ns: run-length encoding ran
 * at 0.03 of a copy, 2026-11-28); keys may sit at any address, hence the memcpy loads. */
static uint64_t next_key_change(const ps_request *req, uint64_t from, uint64_t limit) {
    const size_t kb = req->key_bytes;
    const unsigned char *k = (const unsigned char *)req->in2;
    uint64_t q = from;
#define PS_CPU_KEY_RUN(T)                                                                                         \
    do {                                                                                                          \
        T prev, cur;                                                                                              \
        memcpy(&prev, k + (q - 1) * sizeof(T), sizeof(T));                                                       \
        for (; q < limit; q++, prev = cur) {                                                                      \
            memcpy(&cur, k + q * sizeof(T), sizeof(T));                                                           \
            if (cur != prev) break;                                                                               \
        }                                                                                                         \
    } while (0)
    switch (kb) {
    case 1: PS_CPU_KEY_RUN(uint8_t); break;
    case 2: PS_CPU_KEY_RUN(uint16_t); break;
    case 4: PS_CPU_KEY_RUN(uint32_t); break;
    case 8: PS_CPU_KEY_RUN(uint64_t); break;
    default:
        while (q < limit && memcmp(k + (q - 1) * kb, k + q * kb, kb) == 0) q++;
        break;
    }
#undef PS_CPU_KEY_RUN
    return q;
}

/* The first segment start q with i < q < limit, or limit. Calls on one cursor ask about increasing i. */
static uint64_t next_head(seg_cursor *c, uint64_t i, uint64_t limit) {
    const ps_request *req = c->req;
    uint64_t q = i + 1;
    switch (req->seg_form) {
    case PS_SEGMENTS_FLAGS: {
        const uint8_t *f = (const uint8_t *)req->flags;
        while (q < limit && !f[q]) q++;
        return q < limit ? q : limit;
    }
    case PS_SEGMENTS_KEYS:
        return q < limit ? next_key_change(req, q, limit) : limit;
    default: {
        const uint64_t *o = (const uint64_t *)req->in2;
        while (o[c->k] <= i) c->k++; /* stops at offsets[count] == n > i */
        return o[c->k] < limit ? o[c->k] : limit;
    }
    }
}

/* Whether a segment starts at i (i < n). */
static int is_head(const ps_request *req, uint64_t i) {
    if (i == 0) return 1;
    seg_cursor c;
    cursor_init(&c, req, i - 1);
    return next_head(&c, i - 1, i + 1) == i;
}

/* ---- one range ---------------------------------------------------------------------------------------- */

/* Scans the segments of [lo, hi), each clipped to the range, from init; the piece open at the range's start in
 * scan order (forward: at lo, reverse: at hi) continues from *open instead, when open is not NULL. */
static void scan_range(const ps_request *req, uint64_t lo, uint64_t hi, const ps_value *open) {
    const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
    seg_cursor c;
    cursor_init(&c, req, lo);
    for (uint64_t s = lo, e; s < hi; s = e) {
        e = next_head(&c, s, hi);
        ps_value carry = req->init;
        if (open && (req->reverse ? e == hi : s == lo)) carry = *open;
        k->scan(req->in, req->out, s, e, req->exclusive, req->reverse, &carry);
    }
}

void ps_cpu_segscan(const ps_request *req) {
    if (req->n > 0) scan_range(req, 0, req->n, NULL);
}

/* ---- threads ------------------------------------------------------------------------------------------ */

typedef struct seg_pair {
    ps_value v;
    int f;
} seg_pair;

/* The segmented combine: a then b in scan order. */
static seg_pair pair_combine(const ps_cpu_kernels *k, seg_pair a, seg_pair b) {
    if (!b.f) k->combine(&a.v, &b.v);
    else
        a.v = b.v;
    a.f |= b.f;
    return a;
}

/* The range's pair in scan order (see the header). */
static seg_pair reduce_range(const ps_request *req, uint64_t lo, uint64_t hi) {
    const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
    seg_pair p;
    seg_cursor c;
    cursor_init(&c, req, lo);
    if (!req->reverse) {
        /* the last piece [s, hi) is the open one; a segment starts in the range if lo or a later item is a head */
        uint64_t s = lo;
        for (uint64_t e = next_head(&c, lo, hi); e < hi; e = next_head(&c, e, hi)) s = e;
        p.f = s > lo || is_head(req, lo);
        k->reduce(req->in, s, hi, &p.v);
        return p;
    }
    /* reverse: the first piece [lo, q) is the open one, reduced from its end; a segment (in scan order) starts
     * in the range if one ends there: at a head in (lo, hi), or at hi's head, or at the array's end */
    const uint64_t q = next_head(&c, lo, hi);
    p.f = q < hi || hi == req->n || is_head(req, hi);
    const size_t es = req->elem_bytes;
    memcpy(p.v.bytes, (const char *)req->in + (q - 1) * es, es);
    for (uint64_t i = q - 1; i-- > lo;) {
        ps_value x;
        memcpy(x.bytes, (const char *)req->in + i * es, es);
        k->combine(&p.v, &x);
    }
    return p;
}

typedef struct segscan_job {
    const ps_request *req;
    uint64_t chunk;
    int phase;
    unsigned char *slots; /* [threads] in temp, one cache line each: the range's pair, then its carry-in */
} segscan_job;

#define SEGSCAN_SLOT_BYTES 64
typedef char segscan_slot_fits_[sizeof(seg_pair) <= SEGSCAN_SLOT_BYTES ? 1 : -1];

/* Sets up job over the pool's ranges of req (a slot each, cache-line aligned in req->temp), runs phase 0 of run
 * on them and returns how many ranges there are. */
static unsigned segscan_job_start(ps_cpu_pool *pool, const ps_request *req, void (*run)(void *, unsigned),
                                  segscan_job *job) {
    const unsigned threads = ps_cpu_pool_threads(pool);
    job->req = req;
    job->chunk = (req->n + threads - 1) / threads;
    job->phase = 0;
    const uintptr_t temp = ((uintptr_t)req->temp + SEGSCAN_SLOT_BYTES - 1) & ~(uintptr_t)(SEGSCAN_SLOT_BYTES - 1);
    job->slots = (unsigned char *)temp;
    ps_cpu_pool_run(pool, run, job);
    return (unsigned)((req->n + job->chunk - 1) / job->chunk);
}

static void segscan_job_run(void *arg, unsigned t) {
    const segscan_job *job = (const segscan_job *)arg;
    const ps_request *req = job->req;
    const uint64_t lo = t * job->chunk, hi = lo + job->chunk < req->n ? lo + job->chunk : req->n;
    seg_pair *slot = (seg_pair *)(job->slots + (size_t)t * SEGSCAN_SLOT_BYTES);
    if (lo >= hi) return;
    if (job->phase == 0) {
        *slot = reduce_range(req, lo, hi);
    } else {
        /* the caller left f = 1 where the range's open piece continues from slot->v */
        scan_range(req, lo, hi, slot->f ? &slot->v : NULL);
    }
}

void ps_cpu_threads_segscan(ps_cpu_pool *pool, const ps_request *req) {
    if (req->n == 0) return;
    const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
    segscan_job job;
    const unsigned used = segscan_job_start(pool, req, segscan_job_run, &job);

    /* ---- spine: fold the pairs in scan order; each range gets init + the open value before it ---- */
    seg_pair fold;
    fold.f = 0;
    fold.v = *ps_core_identity(req->type, req->op);
    for (unsigned j = 0; j < used; j++) {
        const unsigned t = req->reverse ? used - 1 - j : j;
        seg_pair *slot = (seg_pair *)(job.slots + (size_t)t * SEGSCAN_SLOT_BYTES);
        const seg_pair mine = *slot;
        const uint64_t lo = t * job.chunk, hi = lo + job.chunk < req->n ? lo + job.chunk : req->n;
        /* open: the range's first piece in scan order continues a segment of an earlier range */
        const int open = req->reverse ? hi < req->n && !is_head(req, hi) : !is_head(req, lo);
        slot->f = open;
        slot->v = req->init;
        if (open) k->combine(&slot->v, &fold.v);
        fold = pair_combine(k, fold, mine);
    }
    job.phase = 1;
    ps_cpu_pool_run(pool, segscan_job_run, &job);
}

/* ---- reduce by key and run-length encoding --------------------------------------------------------------
 * The runs of equal keys are the segments; one result per run, at the run's index (the heads before it).
 * Threads: each range counts its heads and reduces its last piece; the caller scans the counts and folds the
 * pieces as above; each range then writes the runs that end in it, the first one continuing from its carry. */

/* The value of the piece [s, e): its values reduced, or for run-length encoding its length. */
static void piece_value(const ps_request *req, const ps_cpu_kernels *k, uint64_t s, uint64_t e, ps_value *v) {
    if (req->prim == PS_PRIM_RUN_LENGTH_ENCODE)
        v->u64 = e - s;
    else
        k->reduce(req->in, s, e, v);
}

/* Writes the runs that end in [lo, hi) from index first_run on, the first continuing from *open when open is
 * not NULL (lo does not start a run); returns the index after the last one written. */
static uint64_t by_key_range(const ps_request *req, uint64_t lo, uint64_t hi, uint64_t first_run, const ps_value *open) {
    const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
    const size_t kb = req->key_bytes, eb = req->elem_bytes;
    seg_cursor c;
    cursor_init(&c, req, lo);
    uint64_t r = first_run;
    for (uint64_t s = lo, e; s < hi; s = e) {
        e = next_head(&c, s, hi);
        if (e == hi && hi < req->n && !is_head(req, hi)) break; /* the run ends in a later range */
        ps_value v = s == lo && open ? *open : req->init, x;
        piece_value(req, k, s, e, &x);
        k->combine(&v, &x);
        ps_cpu_copy_element((char *)req->out + r * kb, (const char *)req->in2 + s * kb, kb);
        ps_cpu_copy_element((char *)req->out2 + r * eb, v.bytes, eb);
        r++;
    }
    return r;
}

void ps_cpu_by_key(const ps_request *req) {
    const uint64_t runs = req->n > 0 ? by_key_range(req, 0, req->n, 0, NULL) : 0;
    memcpy(req->count, &runs, sizeof runs);
}

/* Phase 1 of a range: its heads, and its last piece's value. */
typedef struct by_key_slot {
    uint64_t heads;
    seg_pair pair; /* f: a head in the range; v: the last piece; after the spine: f = open, v = its carry */
    uint64_t first_run;
} by_key_slot;
typedef char by_key_slot_fits_[sizeof(by_key_slot) <= SEGSCAN_SLOT_BYTES ? 1 : -1];

static void by_key_job_run(void *arg, unsigned t) {
    const segscan_job *job = (const segscan_job *)arg;
    const ps_request *req = job->req;
    const uint64_t lo = t * job->chunk, hi = lo + job->chunk < req->n ? lo + job->chunk : req->n;
    by_key_slot *slot = (by_key_slot *)(job->slots + (size_t)t * SEGSCAN_SLOT_BYTES);
    if (lo >= hi) return;
    if (job->phase == 0) {
        seg_cursor c;
        cursor_init(&c, req, lo);
        uint64_t s = lo, heads = (uint64_t)is_head(req, lo);
        for (uint64_t e = next_head(&c, lo, hi); e < hi; e = next_head(&c, e, hi)) s = e, heads++;
        slot->heads = heads;
        slot->pair.f = heads > 0;
        piece_value(req, ps_cpu_kernels_get(req->type, req->op), s, hi, &slot->pair.v);
    } else {
        by_key_range(req, lo, hi, slot->first_run, slot->pair.f ? &slot->pair.v : NULL);
    }
}

void ps_cpu_threads_by_key(ps_cpu_pool *pool, const ps_request *req) {
    uint64_t runs = 0;
    if (req->n > 0) {
        const ps_cpu_kernels *k = ps_cpu_kernels_get(req->type, req->op);
        segscan_job job;
        const unsigned used = segscan_job_start(pool, req, by_key_job_run, &job);

        /* ---- spine: the heads before each range, and the carry of its open run ---- */
        seg_pair fold;
        fold.f = 0;
        fold.v = *ps_core_identity(req->type, req->op);
        for (unsigned t = 0; t < used; t++) {
            by_key_slot *slot = (by_key_slot *)(job.slots + (size_t)t * SEGSCAN_SLOT_BYTES);
            const seg_pair mine = slot->pair;
            const int open = !is_head(req, t * job.chunk);
            slot->first_run = open ? runs - 1 : runs;
            runs += slot->heads;
            slot->pair.f = open;
            slot->pair.v = req->init;
            if (open) k->combine(&slot->pair.v, &fold.v);
            fold = pair_combine(k, fold, mine);
        }
        job.phase = 1;
        ps_cpu_pool_run(pool, by_key_job_run, &job);
    }
    memcpy(req->count, &runs, sizeof runs);
}
