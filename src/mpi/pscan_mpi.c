/*
 * pscan_mpi.c - scans and reductions over the ranks of an MPI communicator (pscan_mpi.h).
 *
 * A rank is one more level of tiles: its slice is reduced on its own backend, the slice totals are scanned
 * across ranks by MPI (the spine), and each slice is scanned with its carry (the down-sweep). Only the public
 * pscan API is used, plus pscan_ops.h's operator macros for combining totals on the host.
 *
 *   reduce   pscan_reduce of the slice into a device slot (identity as init), downloaded; the one wait
 *   spine    MPI_Exscan (scan) or MPI_Allreduce (reduce) of {status, total} with one user MPI_Op, created
 *            non-commutative: MPI then combines in rank order; a reverse scan runs the same MPI_Exscan on a
 *            reversed copy of the communicator (rank r there is P-1-r), cached on comm as an MPI attribute
 *   scan     pscan_scan of the slice with init (+) carry as its initial value; nothing more to wait for
 *
 * Work: the slice is read twice and written once (reduce-then-scan), plus O(log P) messages of 16 bytes.
 * Depth: the slowest rank's slice, plus the exchange. The status travels with the total, so a rank whose
 * arguments fail still takes part and no rank waits forever; ranks whose carry depends on it fail with it.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pscan_mpi.h"
#include "pscan_ops.h"

/* ---- the operators on the host: acc = acc (+) later, one function per (type, operator) --------------- */

typedef void (*combine_fn)(ps_value *acc, const ps_value *later);

#define COMBINE_FN_(name, T, U, OP)                                                                          \
    static void combine_##name##_##OP(ps_value *acc, const ps_value *later) {                                \
        const T a = acc->name, b = later->name;                                                              \
        acc->name = PSCAN_COMBINE_##OP(T, U, a, b);                                                          \
    }
#define ARITH_FNS_(NAME, name, T, U, LOWEST, HIGHEST)                                                        \
    COMBINE_FN_(name, T, U, SUM) COMBINE_FN_(name, T, U, PRODUCT) COMBINE_FN_(name, T, U, MIN)               \
        COMBINE_FN_(name, T, U, MAX)
#define BITWISE_FNS_(NAME, name, T, U, LOWEST, HIGHEST)                                                      \
    COMBINE_FN_(name, T, U, AND) COMBINE_FN_(name, T, U, OR) COMBINE_FN_(name, T, U, XOR)
PSCAN_ARITH_TYPE_LIST(ARITH_FNS_)
PSCAN_ARITH_INT_TYPE_LIST(BITWISE_FNS_)

#define ARITH_ROW_(NAME, name, T, U, LOWEST, HIGHEST)                                                        \
    [PSCAN_TYPE_##NAME][PSCAN_OP_SUM] = combine_##name##_SUM,                                                \
    [PSCAN_TYPE_##NAME][PSCAN_OP_PRODUCT] = combine_##name##_PRODUCT,                                        \
    [PSCAN_TYPE_##NAME][PSCAN_OP_MIN] = combine_##name##_MIN, [PSCAN_TYPE_##NAME][PSCAN_OP_MAX] = combine_##name##_MAX,
#define BITWISE_ROW_(NAME, name, T, U, LOWEST, HIGHEST)                                                      \
    [PSCAN_TYPE_##NAME][PSCAN_OP_AND] = combine_##name##_AND, [PSCAN_TYPE_##NAME][PSCAN_OP_OR] = combine_##name##_OR, \
    [PSCAN_TYPE_##NAME][PSCAN_OP_XOR] = combine_##name##_XOR,
static const combine_fn combiners[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT] = {
    PSCAN_ARITH_TYPE_LIST(ARITH_ROW_) PSCAN_ARITH_INT_TYPE_LIST(BITWISE_ROW_)};
#undef COMBINE_FN_
#undef ARITH_FNS_
#undef BITWISE_FNS_
#undef ARITH_ROW_
#undef BITWISE_ROW_

/* ---- what crosses between ranks: one slice's total, or why there is none ------------------------------- */

typedef struct mpi_carry {
    int32_t status; /* PSCAN_SUCCESS, or the status of the first rank (in scan order) that failed */
    uint8_t type, op;
    uint8_t unused[2];
    ps_value value; /* the combined totals, when status is PSCAN_SUCCESS */
} mpi_carry;

/* MPI's user function: inout[i] = in[i] (+) inout[i], in[i] being the earlier operand (MPI's convention for
 * non-commutative operators). A failure wins over any total; the earlier failure over a later one. */
static void carry_combine(void *in, void *inout, int *len, MPI_Datatype *datatype) {
    (void)datatype;
    const mpi_carry *earlier = (const mpi_carry *)in;
    mpi_carry *later = (mpi_carry *)inout;
    for (int i = 0; i < *len; i++) {
        mpi_carry r = earlier[i];
        if (r.status == PSCAN_SUCCESS) {
            if (later[i].status != PSCAN_SUCCESS)
                r.status = later[i].status;
            else
                combiners[r.type][r.op](&r.value, &later[i].value);
        }
        later[i] = r;
    }
}

typedef enum exchange_kind { EXCHANGE_EXSCAN, EXCHANGE_ALLREDUCE } exchange_kind;

/* One collective over comm with a datatype and an operator made for it (both local objects, freed at once).
 * For EXSCAN, *got on the first rank is "nothing before": success and the identity. */
static pscan_status exchange(MPI_Comm comm, exchange_kind kind, const mpi_carry *mine, mpi_carry *got,
                             const ps_value *identity) {
    MPI_Datatype type;
    MPI_Op op;
    int err = MPI_Type_contiguous((int)sizeof(mpi_carry), MPI_BYTE, &type);
    if (err == MPI_SUCCESS) err = MPI_Type_commit(&type);
    if (err != MPI_SUCCESS) return PSCAN_ERROR_BACKEND;
    err = MPI_Op_create(carry_combine, 0 /* not commutative: combine in rank order */, &op);
    if (err != MPI_SUCCESS) {
        MPI_Type_free(&type);
        return PSCAN_ERROR_BACKEND;
    }
    *got = *mine;
    if (kind == EXCHANGE_EXSCAN) {
        err = MPI_Exscan(mine, got, 1, type, op, comm);
        int rank = 0;
        if (err == MPI_SUCCESS) err = MPI_Comm_rank(comm, &rank);
        if (rank == 0) { /* MPI leaves rank 0's result undefined */
            got->status = PSCAN_SUCCESS;
            got->value = *identity;
        }
    } else {
        err = MPI_Allreduce(mine, got, 1, type, op, comm);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&type);
    return err == MPI_SUCCESS ? PSCAN_SUCCESS : PSCAN_ERROR_BACKEND;
}

/* ---- the reversed communicator, cached on comm ----------------------------------------------------------- */

static int reversed_keyval = MPI_KEYVAL_INVALID;
static pthread_once_t reversed_once = PTHREAD_ONCE_INIT;

/* Frees the cached copy when comm is freed (MPI calls this; MPI_Comm_dup does not copy it). */
static int reversed_delete(MPI_Comm comm, int keyval, void *attribute, void *extra) {
    (void)comm, (void)keyval, (void)extra;
    MPI_Comm *held = (MPI_Comm *)attribute;
    int err = MPI_Comm_free(held);
    free(held);
    return err;
}

static void reversed_keyval_create(void) {
    MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, reversed_delete, &reversed_keyval, NULL);
}

/* comm with its ranks in reverse order (collective on the first call for comm, local afterwards). */
static pscan_status reversed_comm(MPI_Comm comm, MPI_Comm *reversed) {
    pthread_once(&reversed_once, reversed_keyval_create);
    if (reversed_keyval == MPI_KEYVAL_INVALID) return PSCAN_ERROR_BACKEND;
    MPI_Comm *held = NULL;
    int found = 0;
    if (MPI_Comm_get_attr(comm, reversed_keyval, &held, &found) != MPI_SUCCESS) return PSCAN_ERROR_BACKEND;
    if (found) {
        *reversed = *held;
        return PSCAN_SUCCESS;
    }
    int rank = 0, size = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || MPI_Comm_size(comm, &size) != MPI_SUCCESS)
        return PSCAN_ERROR_BACKEND;
    held = (MPI_Comm *)malloc(sizeof *held);
    if (!held) return PSCAN_ERROR_OUT_OF_MEMORY; /* every rank runs out alike, or the split below hangs: rare */
    if (MPI_Comm_split(comm, 0, size - 1 - rank, held) != MPI_SUCCESS) {
        free(held);
        return PSCAN_ERROR_BACKEND;
    }
    if (MPI_Comm_set_attr(comm, reversed_keyval, held) != MPI_SUCCESS) {
        MPI_Comm_free(held);
        free(held);
        return PSCAN_ERROR_BACKEND;
    }
    *reversed = *held;
    return PSCAN_SUCCESS;
}

/* ---- the local total --------------------------------------------------------------------------------- */

/* temp holds: up to 15 bytes to align, a 16-byte slot for the total, then the inner calls' temp. */
#define SLOT_BYTES 16u
#define SLOT_OVERHEAD (2u * SLOT_BYTES)

typedef struct placement {
    void *slot;      /* one element of device memory for the slice's total */
    void *inner;     /* temp for pscan_reduce / pscan_scan, or NULL for the workspace */
    size_t inner_bytes;
    int slot_owned;  /* slot came from pscan_memory_alloc (temp == NULL) */
} placement;

static pscan_status place(pscan_context *ctx, void *temp, size_t temp_bytes, size_t needed, placement *p) {
    memset(p, 0, sizeof *p);
    if (!temp) {
        p->slot_owned = 1;
        return pscan_memory_alloc(ctx, SLOT_BYTES, &p->slot);
    }
    if (temp_bytes < needed) return PSCAN_ERROR_TEMP_TOO_SMALL;
    const uintptr_t a = ((uintptr_t)temp + SLOT_BYTES - 1) & ~(uintptr_t)(SLOT_BYTES - 1);
    p->slot = (void *)a;
    p->inner = (void *)(a + SLOT_BYTES);
    p->inner_bytes = temp_bytes - (size_t)(a + SLOT_BYTES - (uintptr_t)temp);
    return PSCAN_SUCCESS;
}

/* The slice's total (identity as init) into *total, on the host: reduce into the slot, download, wait. */
static pscan_status slice_total(pscan_context *ctx, pscan_type type, pscan_op op, const void *in, uint64_t n,
                                const placement *p, ps_value *total) {
    const pscan_reduce_desc d = {type, op, PSCAN_ALGO_AUTO, NULL};
    pscan_status s = pscan_reduce(ctx, &d, in, n, p->slot, p->inner, p->inner_bytes);
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, total->bytes, p->slot, pscan_type_size(type));
    pscan_status w = pscan_context_synchronize(ctx);
    return s != PSCAN_SUCCESS ? s : w;
}

static void release(pscan_context *ctx, placement *p) {
    if (p->slot_owned && p->slot) pscan_memory_free(ctx, p->slot);
    p->slot = NULL;
}

/* The operator's identity, through the library (a reduce of nothing on the host is not possible on a device
 * context, so the identity comes from the operator macros' list instead). */
static ps_value identity_of(pscan_type type, pscan_op op) {
    ps_value v;
    memset(&v, 0, sizeof v);
#define IDENTITY_ARITH_(NAME, name, T, U, LOWEST, HIGHEST)                                                   \
    if (type == PSCAN_TYPE_##NAME) {                                                                         \
        if (op == PSCAN_OP_SUM) v.name = PSCAN_IDENTITY_SUM(T, LOWEST, HIGHEST);                              \
        if (op == PSCAN_OP_PRODUCT) v.name = PSCAN_IDENTITY_PRODUCT(T, LOWEST, HIGHEST);                      \
        if (op == PSCAN_OP_MIN) v.name = PSCAN_IDENTITY_MIN(T, LOWEST, HIGHEST);                              \
        if (op == PSCAN_OP_MAX) v.name = PSCAN_IDENTITY_MAX(T, LOWEST, HIGHEST);                              \
    }
#define IDENTITY_BITWISE_(NAME, name, T, U, LOWEST, HIGHEST)                                                 \
    if (type == PSCAN_TYPE_##NAME && op == PSCAN_OP_AND) v.name = PSCAN_IDENTITY_AND(T, LOWEST, HIGHEST);
    PSCAN_ARITH_TYPE_LIST(IDENTITY_ARITH_)
    PSCAN_ARITH_INT_TYPE_LIST(IDENTITY_BITWISE_)
#undef IDENTITY_ARITH_
#undef IDENTITY_BITWISE_
    return v; /* or, xor: zero */
}

/* init (+) carry: the caller's init, or the identity without one. */
static ps_value with_init(pscan_type type, pscan_op op, const void *init, const ps_value *carry) {
    ps_value v = identity_of(type, op);
    if (init) memcpy(v.bytes, init, pscan_type_size(type));
    combiners[type][op](&v, carry);
    return v;
}

/* ---- scan ------------------------------------------------------------------------------------------ */

static pscan_status scan_needed(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n, size_t *bytes) {
    size_t scan_bytes = 0, reduce_bytes = 0;
    pscan_status s = pscan_scan_temp_bytes(ctx, desc, n, &scan_bytes);
    if (s != PSCAN_SUCCESS) return s;
    const pscan_reduce_desc r = {desc->type, desc->op, PSCAN_ALGO_AUTO, NULL};
    s = pscan_reduce_temp_bytes(ctx, &r, n, &reduce_bytes);
    if (s != PSCAN_SUCCESS) return s;
    *bytes = SLOT_OVERHEAD + (scan_bytes > reduce_bytes ? scan_bytes : reduce_bytes);
    return PSCAN_SUCCESS;
}

pscan_status pscan_mpi_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n_local,
                                       size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    return scan_needed(ctx, desc, n_local, bytes);
}

pscan_status pscan_mpi_scan(pscan_context *ctx, MPI_Comm comm, const pscan_scan_desc *desc, const void *in,
                            void *out, uint64_t n_local, void *temp, size_t temp_bytes) {
    /* without these the rank cannot know which exchange the others run: it cannot take part */
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (comm == MPI_COMM_NULL) return PSCAN_ERROR_INVALID_VALUE;

    /* ---- reduce: this slice's total, or the reason there is none ---- */
    mpi_carry mine;
    memset(&mine, 0, sizeof mine);
    size_t needed = 0;
    placement p;
    memset(&p, 0, sizeof p);
    pscan_status s = scan_needed(ctx, desc, n_local, &needed);
    if (s == PSCAN_SUCCESS) s = place(ctx, temp, temp_bytes, needed, &p);
    if (s == PSCAN_SUCCESS) s = slice_total(ctx, desc->type, desc->op, in, n_local, &p, &mine.value);
    release(ctx, &p);
    mine.status = (int32_t)s;
    mine.type = (uint8_t)desc->type;
    mine.op = (uint8_t)desc->op;

    /* ---- spine: the totals of the ranks before this one (after it, for a reverse scan) ---- */
    MPI_Comm order = comm;
    if (desc->flags & PSCAN_SCAN_REVERSE) {
        pscan_status r = reversed_comm(comm, &order);
        if (r != PSCAN_SUCCESS) return r;
    }
    const ps_value identity = identity_of(desc->type, desc->op);
    mpi_carry before;
    pscan_status x = exchange(order, EXCHANGE_EXSCAN, &mine, &before, &identity);
    if (x != PSCAN_SUCCESS) return x;
    if (s != PSCAN_SUCCESS) return s;
    if (before.status != PSCAN_SUCCESS) return (pscan_status)before.status;

    /* ---- scan: the slice with init (+) carry as its initial value ---- */
    const ps_value carry = with_init(desc->type, desc->op, desc->init, &before.value);
    pscan_scan_desc local = *desc;
    local.init = carry.bytes;
    return pscan_scan(ctx, &local, in, out, n_local, p.inner, p.inner_bytes);
}

/* ---- reduce ------------------------------------------------------------------------------------------ */

static pscan_status reduce_needed(pscan_context *ctx, const pscan_reduce_desc *desc, uint64_t n, size_t *bytes) {
    size_t reduce_bytes = 0;
    const pscan_reduce_desc r = {desc->type, desc->op, desc->algo, NULL};
    pscan_status s = pscan_reduce_temp_bytes(ctx, &r, n, &reduce_bytes);
    if (s != PSCAN_SUCCESS) return s;
    *bytes = SLOT_OVERHEAD + reduce_bytes;
    return PSCAN_SUCCESS;
}

pscan_status pscan_mpi_reduce_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc, uint64_t n_local,
                                         size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    return reduce_needed(ctx, desc, n_local, bytes);
}

pscan_status pscan_mpi_reduce(pscan_context *ctx, MPI_Comm comm, const pscan_reduce_desc *desc, const void *in,
                              uint64_t n_local, void *result, void *temp, size_t temp_bytes) {
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (comm == MPI_COMM_NULL) return PSCAN_ERROR_INVALID_VALUE;

    /* ---- reduce: this slice's total (the caller's algorithm; identity as init) ---- */
    mpi_carry mine;
    memset(&mine, 0, sizeof mine);
    size_t needed = 0;
    placement p;
    pscan_status s = reduce_needed(ctx, desc, n_local, &needed);
    if (s == PSCAN_SUCCESS && !result) s = PSCAN_ERROR_NULL_POINTER;
    if (s == PSCAN_SUCCESS) s = place(ctx, temp, temp_bytes, needed, &p);
    if (s == PSCAN_SUCCESS) {
        const pscan_reduce_desc d = {desc->type, desc->op, desc->algo, NULL};
        s = pscan_reduce(ctx, &d, in, n_local, p.slot, p.inner, p.inner_bytes);
        if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, mine.value.bytes, p.slot, pscan_type_size(desc->type));
        pscan_status w = pscan_context_synchronize(ctx);
        if (s == PSCAN_SUCCESS) s = w;
        release(ctx, &p);
    }
    mine.status = (int32_t)s;
    mine.type = (uint8_t)desc->type;
    mine.op = (uint8_t)desc->op;

    /* ---- spine: every rank's total, in rank order, on every rank ---- */
    mpi_carry all;
    pscan_status x = exchange(comm, EXCHANGE_ALLREDUCE, &mine, &all, &mine.value);
    if (x != PSCAN_SUCCESS) return x;
    if (all.status != PSCAN_SUCCESS) return (pscan_status)all.status;

    /* ---- result: init (+) every total, written through the library (a reduce of nothing writes init) ---- */
    const ps_value total = with_init(desc->type, desc->op, desc->init, &all.value);
    const pscan_reduce_desc w = {desc->type, desc->op, desc->algo, total.bytes};
    return pscan_reduce(ctx, &w, NULL, 0, result, NULL, 0);
}
