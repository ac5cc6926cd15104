/*
 * cpu_select.c - select (compact) and partition on the CPU: the serial reference for both.
 *
 * One pass counts the kept items (the start of a partition's second group), a second moves each item to the
 * next slot of its group (select: kept items only). Both groups keep their input order. Keys are decided by the type's own comparison (generated from
 * the type list), one switch on the predicate per item.
 *
 * The serial select reads the keys twice too (count, then move): the same two functions are the threaded
 * version's phases (cpu_threads.c: each thread counts its range, the counts are scanned, each thread moves
 * its range from its offsets).
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

uint64_t ps_cpu_select_count(const ps_request *req, uint64_t begin, uint64_t end) {
    const pass_fn pass = pass_of(req->type);
    uint64_t kept = 0;
    for (uint64_t i = begin; i < end; i++) kept += (uint64_t)keeps(req, pass, i);
    return kept;
}

void ps_cpu_select_move(const ps_request *req, uint64_t begin, uint64_t end, uint64_t kept_at,
                        uint64_t rejected_at) {
    const pass_fn pass = pass_of(req->type);
    const int partition = req->prim == PS_PRIM_PARTITION;
    for (uint64_t i = begin; i < end; i++) {
        if (keeps(req, pass, i))
            move_item(req, i, kept_at++);
        else if (partition)
            move_item(req, i, rejected_at++);
    }
}

void ps_cpu_select(const ps_request *req) {
    const uint64_t kept = ps_cpu_select_count(req, 0, req->n);
    ps_cpu_select_move(req, 0, req->n, 0, kept);
    memcpy(req->count, &kept, sizeof kept);
}
