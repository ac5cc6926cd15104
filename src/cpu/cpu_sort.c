/*
 * cpu_sort.c - the stable LSD radix sort on the CPU: the serial reference and the threaded version.
 *
 * Idea. Keys are mapped to unsigned integers of their width whose order is the sort's (the map of pscan.h:
 * signed keys flip the sign bit; floats flip every bit of negatives and the sign bit of positives, and every
 * NaN becomes all ones; descending complements the result). Bits [begin_bit, end_bit) of the mapped key are
 * cut into the fewest digits of at most 11 bits, as even as can be (32 bits: 11, 11, 10; 64: five of 11 and one
 * of 9; 16: two of 8), and sorted least significant digit first; each pass is a stable counting sort, so after
 * the last pass the keys are in order and equal keys in input order. Only the digits come from the mapped key:
 * the keys and payloads move as they are, bit for bit.
 *
 * Why 11 bits: a pass costs about the same with 256 to 4096 digits (its time is the scattered stores, not the
 * counters, which stay in L1 at 2048 x 8 bytes), so fewer passes win. On the 2-core CI-like machine
 * (2026-11-28, a C harness of the bare loops, 2^22 keys, median of 9): u32 keys 37 -> 28 ns a key (4 passes
 * -> 3), u64 94 -> 77 (8 -> 6). `pscan bench --backend cpu --primitive sort` at 2^22, before and after in turn
 * (docs/bench/cpu-sort-digits.csv), Gkeys/s serial / threads: u32 keys 0.029 -> 0.036 / 0.052 -> 0.063, u64 keys
 * 0.011 -> 0.014 / 0.020 -> 0.025, u32 pairs 0.018 -> 0.022 / 0.033 -> 0.041; serial 2^10-2^18 no slower.
 *
 * Serial: one sweep over the input counts the digits of every pass at once (the keys do not change between
 * passes, only their order; the GPU's upsweep does the same), then each pass is one exclusive scan of its
 * counts and one stable scatter. Threaded: each pass is cut into one contiguous range per thread; each
 * thread counts its range's digits, the caller scans the T x radix counts digit-major (digit d of thread t
 * goes after digit d of threads before t, after every smaller digit of all threads), and each thread
 * scatters its range from its offsets, in order: stable because ranges and the offsets are in order.
 *
 * Passes that move nothing are skipped: a pass whose digit is the same in every key (all-equal keys, keys whose
 * top bits are all zero) leaves the order as it is. The AND and the OR of every mapped key, taken in the first
 * read (the serial upsweep; the threaded version's first count), differ in a pass's bits iff two keys' digits
 * differ there. Keys below 1024 sort in one pass instead of three; all-equal keys are copied.
 *
 * Where the data goes: the passes that run ping-pong between keys_out and one buffer in temp, the parity chosen
 * so that the last writes keys_out; keys_in is only read (by the first). Work O(n x passes); memory: one read for
 * the counts, then per pass a read and a write of keys and payloads (the threaded one reads each pass's keys
 * twice: count, then scatter).
 */
#include <stdlib.h>
#include <string.h>

#include "cpu_backend.h"

#define SORT_DIGIT_BITS 11u
#define SORT_RADIX (1u << SORT_DIGIT_BITS) /* the most digits a pass counts */
#define SORT_MAX_PASSES ((64u + SORT_DIGIT_BITS - 1) / SORT_DIGIT_BITS)

/* How a key type maps to its order: unsigned keys as they are, signed with the sign bit flipped, floats. */
enum { KEY_UNSIGNED, KEY_SIGNED, KEY_FLOAT };

typedef struct sort_map {
    int kind;
    size_t kb, vb;
    uint64_t all;  /* the key's bits: 2^(8 kb) - 1 */
    uint64_t sign; /* the key's top bit */
    uint64_t flip; /* all for descending, else 0 */
    unsigned passes;
    unsigned radix; /* the digits of the widest pass: 2^(its bits) */
    unsigned shift[SORT_MAX_PASSES];
    uint64_t mask[SORT_MAX_PASSES];
} sort_map;

static void sort_map_make(const ps_request *req, sort_map *m) {
    switch (req->type) {
    case PSCAN_TYPE_F32:
    case PSCAN_TYPE_F64: m->kind = KEY_FLOAT; break;
    case PSCAN_TYPE_I8:
    case PSCAN_TYPE_I16:
    case PSCAN_TYPE_I32:
    case PSCAN_TYPE_I64: m->kind = KEY_SIGNED; break;
    default: m->kind = KEY_UNSIGNED; break;
    }
    m->kb = req->elem_bytes;
    m->vb = req->value_bytes;
    m->all = m->kb == 8 ? ~0ull : (1ull << (8 * m->kb)) - 1;
    m->sign = 1ull << (8 * m->kb - 1);
    m->flip = req->descending ? m->all : 0;
    /* the fewest passes of at most SORT_DIGIT_BITS, then the width that spreads the bits evenly over them */
    const unsigned bits = req->end_bit - req->begin_bit;
    const unsigned passes = (bits + SORT_DIGIT_BITS - 1) / SORT_DIGIT_BITS;
    const unsigned width = passes ? (bits + passes - 1) / passes : 0;
    m->passes = 0;
    m->radix = 1u << width;
    for (unsigned b = req->begin_bit; b < req->end_bit; b += width) {
        const unsigned w = req->end_bit - b < width ? req->end_bit - b : width;
        m->shift[m->passes] = b;
        m->mask[m->passes] = (1ull << w) - 1;
        m->passes++;
    }
}

static uint64_t load_key(const unsigned char *base, uint64_t i, size_t kb) {
    switch (kb) {
    case 1: return base[i];
    case 2: { uint16_t v; memcpy(&v, base + 2 * i, 2); return v; }
    case 4: { uint32_t v; memcpy(&v, base + 4 * i, 4); return v; }
    default: { uint64_t v; memcpy(&v, base + 8 * i, 8); return v; }
    }
}

/* The order-preserving map of pscan.h. */
static inline uint64_t map_key(const sort_map *m, uint64_t raw) {
    uint64_t t = raw;
    if (m->kind == KEY_SIGNED) {
        t = raw ^ m->sign;
    } else if (m->kind == KEY_FLOAT) {
        const uint64_t inf = m->kb == 4 ? 0x7f800000ull : 0x7ff0000000000000ull;
        if ((raw & ~m->sign & m->all) > inf)
            t = m->all; /* every NaN after +inf */
        else
            t = raw & m->sign ? ~raw & m->all : raw | m->sign;
    }
    return t ^ m->flip;
}

/* The buffers of one pass: where it reads, where it writes. */
typedef struct sort_buffers {
    const unsigned char *keys_src, *values_src;
    unsigned char *keys_dst, *values_dst;
} sort_buffers;

/* The j-th of the runs passes that run reads what the one before wrote (the first reads the input) and writes
 * keys_out when runs - 1 - j is even, else the temp buffer: the last always lands in keys_out. */
static void pass_buffers(const ps_request *req, unsigned runs, unsigned j, unsigned char *tmp_keys,
                         unsigned char *tmp_values, sort_buffers *b) {
    const int to_out = (runs - 1 - j) % 2 == 0;
    b->keys_dst = to_out ? (unsigned char *)req->out : tmp_keys;
    b->values_dst = to_out ? (unsigned char *)req->out2 : tmp_values;
    if (j == 0) {
        b->keys_src = (const unsigned char *)req->in;
        b->values_src = (const unsigned char *)req->in2;
    } else {
        b->keys_src = to_out ? tmp_keys : (const unsigned char *)req->out;
        b->values_src = to_out ? tmp_values : (const unsigned char *)req->out2;
    }
}

/* The passes that move something, in order, into run[]; returns how many. differ = the AND of every mapped key
 * XOR their OR: the bits in which some two keys differ. */
static unsigned passes_to_run(const sort_map *m, uint64_t differ, unsigned *run) {
    unsigned runs = 0;
    for (unsigned p = 0; p < m->passes; p++)
        if ((differ >> m->shift[p]) & m->mask[p]) run[runs++] = p;
    return runs;
}

/* No pass moves anything: the input is the result. */
static void copy_through(const ps_request *req, const sort_map *m) {
    memcpy(req->out, req->in, (size_t)req->n * m->kb);
    if (m->vb) memcpy(req->out2, req->in2, (size_t)req->n * m->vb);
}

/* Moves items [begin, end) of src to their slots: item i goes to offsets[digit]++. The map, the pass's shift and
 * mask and the 256 offsets are copied into locals first, and each key width has a loop of its own: the stores go
 * through byte pointers that may alias anything, so reading through m and offsets reloaded them for every key.
 * A u32 pass over 2^22 keys, alone in a C harness on the 2-core machine of 2026-11-28: 10.3 -> 6.4 ns a key.
 * Write combining (16 keys a digit buffered, then written together) measured 7.4 there: not kept. */
static void scatter(const sort_map *m, unsigned pass, const sort_buffers *b, uint64_t begin, uint64_t end,
                    uint64_t *offsets) {
    const sort_map mm = *m;
    const unsigned shift = mm.shift[pass];
    const uint64_t mask = mm.mask[pass];
    const size_t vb = mm.vb;
    const unsigned char *const ks = b->keys_src, *const vs = b->values_src;
    unsigned char *const kd = b->keys_dst, *const vd = b->values_dst;
    uint64_t off[SORT_RADIX];
    memcpy(off, offsets, mm.radix * sizeof off[0]);
#define PS_CPU_SORT_SCATTER(T)                                                                                    \
    for (uint64_t i = begin; i < end; i++) {                                                                      \
        T raw;                                                                                                    \
        memcpy(&raw, ks + i * sizeof(T), sizeof(T));                                                              \
        const uint64_t d = off[(map_key(&mm, raw) >> shift) & mask]++;                                            \
        memcpy(kd + d * sizeof(T), &raw, sizeof(T));                                                              \
        if (vb) ps_cpu_copy_element(vd + d * vb, vs + i * vb, vb);                                                \
    }
    switch (mm.kb) {
    case 1: PS_CPU_SORT_SCATTER(uint8_t); break;
    case 2: PS_CPU_SORT_SCATTER(uint16_t); break;
    case 4: PS_CPU_SORT_SCATTER(uint32_t); break;
    default: PS_CPU_SORT_SCATTER(uint64_t); break;
    }
#undef PS_CPU_SORT_SCATTER
    memcpy(offsets, off, mm.radix * sizeof off[0]);
}

static size_t align_up(size_t x) { return (x + 63) & ~(size_t)63; }

/* temp: the keys buffer, the payload buffer, then the counts: a row of radix per pass (serial) or per thread
 * (threaded, followed by each thread's AND and OR of its keys). */
size_t ps_cpu_sort_temp_bytes(const ps_cpu_pool *pool, const ps_request *req) {
    if (req->n == 0) return 0;
    sort_map m;
    sort_map_make(req, &m);
    const int threaded = req->algo == PSCAN_ALGO_THREADS;
    const size_t rows = threaded ? ps_cpu_pool_threads(pool) : m.passes;
    return align_up((size_t)req->n * req->elem_bytes) + align_up((size_t)req->n * req->value_bytes) +
           (rows * m.radix + (threaded ? 2 * rows : 0)) * sizeof(uint64_t);
}

static unsigned char *tmp_values_of(const ps_request *req, unsigned char *tmp_keys) {
    return tmp_keys + align_up((size_t)req->n * req->elem_bytes);
}

static uint64_t *counts_of(const ps_request *req, unsigned char *tmp_keys) {
    return (uint64_t *)(tmp_values_of(req, tmp_keys) + align_up((size_t)req->n * req->value_bytes));
}

/* ---- serial ------------------------------------------------------------------------------------------ */

void ps_cpu_sort(const ps_request *req) {
    if (req->n == 0) return;
    sort_map m;
    sort_map_make(req, &m);
    unsigned char *tmp_keys = (unsigned char *)req->temp, *tmp_values = tmp_values_of(req, tmp_keys);

    /* ---- upsweep: the digit counts of every pass in one read (pass p's row at counts + p x radix) ---- */
    uint64_t *const counts = counts_of(req, tmp_keys);
    memset(counts, 0, (size_t)m.passes * m.radix * sizeof *counts);
    uint64_t all = m.all, any = 0; /* the AND and the OR of every mapped key */
    for (uint64_t i = 0; i < req->n; i++) {
        const uint64_t t = map_key(&m, load_key((const unsigned char *)req->in, i, m.kb));
        all &= t, any |= t;
        for (unsigned p = 0; p < m.passes; p++) counts[p * m.radix + ((t >> m.shift[p]) & m.mask[p])]++;
    }
    unsigned run[SORT_MAX_PASSES];
    const unsigned runs = passes_to_run(&m, all ^ any, run);
    if (runs == 0) {
        copy_through(req, &m);
        return;
    }

    /* ---- per pass that moves something: scan the counts, scatter stably ---- */
    for (unsigned j = 0; j < runs; j++) {
        const unsigned p = run[j];
        uint64_t *const row = counts + (size_t)p * m.radix, running = 0;
        for (unsigned d = 0; d < m.radix; d++) {
            const uint64_t c = row[d];
            row[d] = running;
            running += c;
        }
        sort_buffers b;
        pass_buffers(req, runs, j, tmp_keys, tmp_values, &b);
        scatter(&m, p, &b, 0, req->n, row);
    }
}

/* ---- threaded ---------------------------------------------------------------------------------------- */

typedef struct sort_job {
    const sort_map *m;
    uint64_t n, chunk;
    unsigned pass;
    int phase;         /* 0: count, 1: scatter */
    sort_buffers b;
    uint64_t *offsets; /* [threads][radix]: the counts, then the first slot of each digit */
    uint64_t *bits;    /* [threads][2]: each count's AND and OR of its range's mapped keys (the census) */
} sort_job;

static void sort_job_run(void *arg, unsigned t) {
    const sort_job *job = (const sort_job *)arg;
    const uint64_t begin = t * job->chunk, end = begin + job->chunk < job->n ? begin + job->chunk : job->n;
    uint64_t *mine = job->offsets + (size_t)t * job->m->radix;
    if (job->phase == 0) {
        /* counted in locals: mine's stores may alias the map's words, which the compiler would reload a key */
        const sort_map mm = *job->m;
        const unsigned pass = job->pass;
        const unsigned char *const ks = job->b.keys_src;
        uint64_t counts[SORT_RADIX];
        memset(counts, 0, mm.radix * sizeof counts[0]);
        uint64_t all = mm.all, any = 0; /* the census: only the first count's is read */
        for (uint64_t i = begin; i < end; i++) {
            const uint64_t key = map_key(&mm, load_key(ks, i, mm.kb));
            all &= key, any |= key;
            counts[(key >> mm.shift[pass]) & mm.mask[pass]]++;
        }
        job->bits[2 * t] = all, job->bits[2 * t + 1] = any;
        memcpy(mine, counts, mm.radix * sizeof counts[0]);
    } else if (begin < end) {
        scatter(job->m, job->pass, &job->b, begin, end, mine);
    }
}

void ps_cpu_threads_sort(ps_cpu_pool *pool, const ps_request *req) {
    if (req->n == 0) return;
    sort_map m;
    sort_map_make(req, &m);
    const unsigned threads = ps_cpu_pool_threads(pool);
    unsigned char *tmp_keys = (unsigned char *)req->temp, *tmp_values = tmp_values_of(req, tmp_keys);
    sort_job job;
    job.m = &m;
    job.n = req->n;
    job.chunk = (req->n + threads - 1) / threads;
    job.offsets = counts_of(req, tmp_keys);
    job.bits = job.offsets + (size_t)threads * m.radix;

    /* ---- the first pass's count, with the census that says which passes move something ---- */
    job.pass = 0, job.phase = 0;
    job.b.keys_src = (const unsigned char *)req->in;
    ps_cpu_pool_run(pool, sort_job_run, &job);
    uint64_t all = m.all, any = 0;
    for (unsigned t = 0; t < threads; t++) all &= job.bits[2 * t], any |= job.bits[2 * t + 1];
    unsigned run[SORT_MAX_PASSES];
    const unsigned runs = passes_to_run(&m, all ^ any, run);
    if (runs == 0) {
        ps_cpu_threads_copy(pool, req->out, req->in, (size_t)req->n * m.kb);
        if (m.vb) ps_cpu_threads_copy(pool, req->out2, req->in2, (size_t)req->n * m.vb);
        return;
    }

    for (unsigned j = 0; j < runs; j++) {
        const unsigned p = run[j];
        job.pass = p;
        pass_buffers(req, runs, j, tmp_keys, tmp_values, &job.b);
        job.phase = 0;
        if (j > 0 || p > 0) ps_cpu_pool_run(pool, sort_job_run, &job); /* pass 0's counts are taken */
        /* ---- spine: digit-major exclusive scan of the per-thread counts ---- */
        uint64_t running = 0;
        for (unsigned d = 0; d < m.radix; d++)
            for (unsigned t = 0; t < threads; t++) {
                const uint64_t c = job.offsets[(size_t)t * m.radix + d];
                job.offsets[(size_t)t * m.radix + d] = running;
                running += c;
            }
        job.phase = 1;
        ps_cpu_pool_run(pool, sort_job_run, &job);
    }
}
