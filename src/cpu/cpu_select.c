/*
 * cpu_select.c - select (compact) and partition on the CPU: the serial reference for both.
 *
 * One pass decides and counts, a second moves: select copies each kept item to out[kept so far]; partition
 * first counts the kept items (the start of the second group), then copies each item to the next slot of its
 * group. Both groups keep their input order. Keys are decided by the type's own comparison (generated from
 * the type list), one switch on the predicate per item.
 *
 * PSCAN_ALGO_THREADS runs this serial code for now (the pool would split the range, count per thread, scan
 * the counts and scatter: a later step); AUTO therefore means serial too.
 */
#include <string.h>

#include "cpu_backend.h"

/* Whether item i passes the request's predicate, one function per key type. */
#define PS_SELECT_PASS_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    static int pass_##name(const ps_request *req, uint64_t i) {                                              \
        const T k = ((const T *)req->in)[i], c = req->operand.name;                                          \
        switch (req->pred) {                                                                                 \
        case PSCAN_PRED_NONZERO: return k != (T)0;                                                           \
        case PSCAN_PRED_EQ: return k == c;                                                                   \
        case PSCAN_PRED_NE: return k != c;                                                                   \
        case PSCAN_PRED_LT: return k < c;                                                                    \
        case PSCAN_PRED_LE: return k <= c;                                                                   \
        case PSCAN_PRED_GT: return k > c;                                                                    \
        default: return k >= c;                                                                              \
        }                                                                                                    \
    }
PSCAN_ARITH_TYPE_LIST(PS_SELECT_PASS_)
#undef PS_SELECT_PASS_

typedef int (*pass_fn)(const ps_request *req, uint64_t i);

static pass_fn pass_of(pscan_type type) {
    switch (type) {
#define PS_SELECT_CASE_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    case PSCAN_TYPE_##NAME: return pass_##name;
        PSCAN_ARITH_TYPE_LIST(PS_SELECT_CASE_)
#undef PS_SELECT_CASE_
    default: return pass_u8; /* the core has validated the type */
    }
}

static int keeps(const ps_request *req, pass_fn pass, uint64_t i) {
    return req->flags ? ((const uint8_t *)req->flags)[i] != 0 : pass(req, i);
}

/* Item i of the input to slot d of the output: its key, and its payload if there is one. */
static void move_item(const ps_request *req, uint64_t i, uint64_t d) {
    const size_t kb = req->elem_bytes, vb = req->value_bytes;
    memcpy((unsigned char *)req->out + d * kb, (const unsigned char *)req->in + i * kb, kb);
    if (vb) memcpy((unsigned char *)req->out2 + d * vb, (const unsigned char *)req->in2 + i * vb, vb);
}

void ps_cpu_select(const ps_request *req) {
    const pass_fn pass = pass_of(req->type);
    const int partition = req->prim == PS_PRIM_PARTITION;
    uint64_t kept = 0;
    if (partition)
        for (uint64_t i = 0; i < req->n; i++) kept += (uint64_t)keeps(req, pass, i);
    uint64_t next_kept = 0, next_rejected = kept;
    for (uint64_t i = 0; i < req->n; i++) {
        if (keeps(req, pass, i))
            move_item(req, i, next_kept++);
        else if (partition)
            move_item(req, i, next_rejected++);
    }
    memcpy(req->count, &next_kept, sizeof next_kept);
}
