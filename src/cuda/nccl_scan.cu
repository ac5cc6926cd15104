/*
 * nccl_scan.cu - pscan_nccl.h: a scan of one array spread over GPUs, the GPUs being one more level of tiles.
 *
 * Built when CMake finds NCCL (PSCAN_NCCL, on by default). Tested on 2 H200s (ctest nccl.cuda); docs/scale-out.md
 * has the design, the bound below and the measured table.
 *
 *   reduce   pscan_reduce of the slice into a device slot (identity as init), on the context's stream
 *   spine    ncclAllGather of every GPU's slot: P totals on every GPU, then one GPU thread folds
 *            init (+) totals[0] (+) ... (+) totals[r-1] (reverse: totals[P-1] (+) ... (+) totals[r+1]), in order,
 *            into a carry slot
 *   scan     the slice's scan reads its initial value from the carry slot (ps_request.init_device, which the
 *            out-of-core driver introduced): no host round trip anywhere
 *
 * Work: the slice is read twice and written once, plus P elements per GPU over NVLink/PCIe. Depth: the slowest
 * slice plus one all-gather latency and a P-step fold (P <= 8 on one host).
 *
 * The three passes are the floor, not a shortcut: GPU g cannot write one final element before the totals of
 * slices 0..g-1 are known, and those need every element of them read, so each GPU spends at least a read of its
 * slice before it can scan it. G GPUs of n elements each therefore take about (scan + reduce) of n where one GPU
 * takes scan: scaling <= G x scan / (scan + reduce). Measured (2 x H200, 2^30 i32 per GPU, tools/bench_nccl.c,
 * 2026-11-23): one GPU's scan 2267 us, reduce 1099 us; 2 GPUs 3399 us = 1.334x one GPU (0.667 of G), the bound
 * 1.347x: the all-gather and the fold cost under 1%.
 *
 * Temp (256-byte aligned from the caller's pointer): [0, 16) the slice's total, [16, 32) the carry,
 * [256, 256 + 8P rounded to 256) every GPU's total, then the inner reduce's and scan's temp.
 */
#include <stdint.h>
#include <string.h>

#include <nccl.h>

#include "cuda_backend.h"
#include "cuda_ops.cuh"
#include "pscan_nccl.h"

/* ---- the fold: one thread, in rank order ------------------------------------------------------------- */

template <class T, class Op>
__global__ void ps_nccl_fold_kernel(const T *totals, uint64_t count, int reverse, T init, T *carry) {
    T acc = init;
    for (uint64_t k = 0; k < count; k++) acc = Op::combine(acc, totals[reverse ? count - 1 - k : k]);
    *carry = acc;
}

/* req: in = the totals to fold, n = how many, reverse = fold from the last, init, out = the carry slot. */
template <class T, class Op> struct ps_nccl_fold {
    static cudaError_t run(const ps_request *req, const ps_cuda_device *dev) {
        T init;
        memcpy(&init, req->init.bytes, sizeof(T));
        ps_nccl_fold_kernel<T, Op><<<1, 1, 0, dev->stream>>>((const T *)req->in, req->n, req->reverse, init,
                                                             (T *)req->out);
        return cudaGetLastError();
    }
};

/* ---- one GPU's part ----------------------------------------------------------------------------------- */

#define PS_NCCL_ALIGN ((size_t)256)

typedef struct gpu_part {
    pscan_context *ctx;
    ncclComm_t comm;
    int rank, ranks, device;
    cudaStream_t stream;
    const pscan_scan_desc *desc;
    const void *in;
    void *out;
    uint64_t n;
    size_t elem_bytes;
    char *mine, *carry, *all;
    void *inner;
    size_t inner_bytes;
} gpu_part;

static size_t totals_bytes(int ranks) { return ((size_t)ranks * 8 + PS_NCCL_ALIGN - 1) / PS_NCCL_ALIGN * PS_NCCL_ALIGN; }

/* The inner calls' temp (each query includes its own alignment slack) and the whole. */
static pscan_status needed_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n, int ranks,
                                 size_t *inner, size_t *total) {
    size_t scan_bytes = 0, reduce_bytes = 0;
    pscan_status s = pscan_scan_temp_bytes(ctx, desc, n, &scan_bytes);
    if (s != PSCAN_SUCCESS) return s;
    const pscan_reduce_desc r = {desc->type, desc->op, PSCAN_ALGO_AUTO, NULL};
    s = pscan_reduce_temp_bytes(ctx, &r, n, &reduce_bytes);
    if (s != PSCAN_SUCCESS) return s;
    *inner = scan_bytes > reduce_bytes ? scan_bytes : reduce_bytes;
    *total = (PS_NCCL_ALIGN - 1) + PS_NCCL_ALIGN + totals_bytes(ranks) + *inner;
    return PSCAN_SUCCESS;
}

static pscan_status nccl_status(pscan_context *ctx, ncclResult_t r) {
    if (r == ncclSuccess) return PSCAN_SUCCESS;
    ctx->native_error = (long long)r;
    return PSCAN_ERROR_BACKEND;
}

/* Everything the part could refuse, before anything is enqueued; places its temp. */
static pscan_status part_prepare(pscan_context *ctx, ncclComm_t comm, const pscan_scan_desc *desc, const void *in,
                                 void *out, uint64_t n, void *temp, size_t temp_bytes, gpu_part *p) {
    memset(p, 0, sizeof *p);
    if (!ctx || !desc || !comm) return PSCAN_ERROR_NULL_POINTER;
    if (pscan_cuda_context_stream(ctx, &p->stream) != PSCAN_SUCCESS) return PSCAN_ERROR_INVALID_VALUE;
    if (desc->algo != PSCAN_ALGO_AUTO && desc->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) {
        /* an unknown value is still INVALID_VALUE, as pscan_scan says */
        size_t ignored = 0;
        pscan_status s = pscan_scan_temp_bytes(ctx, desc, 0, &ignored);
        return s != PSCAN_SUCCESS ? s : PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    }
    pscan_status s = nccl_status(ctx, ncclCommCount(comm, &p->ranks));
    if (s == PSCAN_SUCCESS) s = nccl_status(ctx, ncclCommUserRank(comm, &p->rank));
    if (s == PSCAN_SUCCESS) s = nccl_status(ctx, ncclCommCuDevice(comm, &p->device));
    if (s != PSCAN_SUCCESS) return s;
    size_t inner = 0, total = 0;
    s = needed_bytes(ctx, desc, n, p->ranks, &inner, &total);
    if (s != PSCAN_SUCCESS) return s;
    /* the scan's own checks (pointers, overlap, limits), without running it */
    static const unsigned char probe[16] = {0};
    s = ps_core_scan_check_init_device(ctx, desc, in, out, n, probe);
    if (s != PSCAN_SUCCESS) return s;
    if (temp) {
        if (temp_bytes < total) return PSCAN_ERROR_TEMP_TOO_SMALL;
    } else {
        s = pscan_context_reserve(ctx, total);
        if (s != PSCAN_SUCCESS) return s;
        temp = ps_core_workspace_use(ctx);
    }
    char *base = (char *)(((uintptr_t)temp + PS_NCCL_ALIGN - 1) & ~(uintptr_t)(PS_NCCL_ALIGN - 1));
    p->ctx = ctx;
    p->comm = comm;
    p->desc = desc;
    p->in = in;
    p->out = out;
    p->n = n;
    p->elem_bytes = pscan_type_size(desc->type);
    p->mine = base;
    p->carry = base + 16;
    p->all = base + PS_NCCL_ALIGN;
    p->inner = base + PS_NCCL_ALIGN + totals_bytes(p->ranks);
    p->inner_bytes = inner;
    return PSCAN_SUCCESS;
}

/* The device a part's NCCL call and kernel run on, for the length of a scope. */
struct nccl_device_guard {
    int previous;
    bool switched;
    explicit nccl_device_guard(int device) : previous(0), switched(false) {
        if (cudaGetDevice(&previous) == cudaSuccess && previous != device) switched = cudaSetDevice(device) == cudaSuccess;
    }
    ~nccl_device_guard() {
        if (switched) cudaSetDevice(previous);
    }
};

/* ---- reduce: the slice's total into its slot ---- */
static pscan_status part_reduce(gpu_part *p) {
    const pscan_reduce_desc r = {p->desc->type, p->desc->op, PSCAN_ALGO_AUTO, NULL};
    return pscan_reduce(p->ctx, &r, p->in, p->n, p->mine, p->inner, p->inner_bytes);
}

/* ---- spine: every GPU's total, on every GPU ---- */
static pscan_status part_gather(gpu_part *p) {
    nccl_device_guard guard(p->device);
    return nccl_status(p->ctx, ncclAllGather(p->mine, p->all, p->elem_bytes, ncclUint8, p->comm, p->stream));
}

/* ---- fold the carry, then scan with it ---- */
static pscan_status part_scan(gpu_part *p) {
    ps_request fold;
    memset(&fold, 0, sizeof fold);
    fold.type = p->desc->type;
    fold.op = p->desc->op;
    fold.elem_bytes = p->elem_bytes;
    if (p->desc->init)
        memcpy(fold.init.bytes, p->desc->init, p->elem_bytes);
    else
        fold.init = *ps_core_identity(p->desc->type, p->desc->op);
    fold.reverse = (p->desc->flags & PSCAN_SCAN_REVERSE) != 0;
    fold.in = fold.reverse ? p->all + (size_t)(p->rank + 1) * p->elem_bytes : p->all;
    fold.n = fold.reverse ? (uint64_t)(p->ranks - 1 - p->rank) : (uint64_t)p->rank;
    fold.out = p->carry;
    ps_cuda_device dev;
    memset(&dev, 0, sizeof dev);
    dev.device = p->device;
    dev.stream = p->stream;
    cudaError_t err;
    {
        nccl_device_guard guard(p->device);
        err = ps_cuda_dispatch<ps_nccl_fold>::run(&fold, &dev);
    }
    if (err != cudaSuccess) {
        p->ctx->native_error = (long long)err;
        return PSCAN_ERROR_BACKEND;
    }
    return ps_core_scan_init_device(p->ctx, p->desc, p->in, p->out, p->n, p->carry, p->inner, p->inner_bytes);
}

/* ---- public entry points ------------------------------------------------------------------------------- */

extern "C" pscan_status pscan_nccl_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc,
                                                   uint64_t n_local, int ranks, size_t *bytes) {
    if (!bytes) return PSCAN_ERROR_NULL_POINTER;
    *bytes = 0;
    if (!ctx || !desc) return PSCAN_ERROR_NULL_POINTER;
    if (ranks < 1) return PSCAN_ERROR_INVALID_VALUE;
    size_t inner = 0;
    return needed_bytes(ctx, desc, n_local, ranks, &inner, bytes);
}

extern "C" pscan_status pscan_nccl_scan(pscan_context *ctx, ncclComm_t comm, const pscan_scan_desc *desc,
                                        const void *in, void *out, uint64_t n_local, void *temp, size_t temp_bytes) {
    gpu_part p;
    pscan_status s = part_prepare(ctx, comm, desc, in, out, n_local, temp, temp_bytes, &p);
    if (s == PSCAN_SUCCESS) s = part_reduce(&p);
    if (s == PSCAN_SUCCESS) s = part_gather(&p);
    if (s == PSCAN_SUCCESS) s = part_scan(&p);
    return s;
}

#define PS_NCCL_MAX_GROUP 64

extern "C" pscan_status pscan_nccl_scan_group(int count, pscan_context *const *ctxs, const ncclComm_t *comms,
                                              const pscan_scan_desc *desc, const void *const *ins,
                                              void *const *outs, const uint64_t *n_locals, void *const *temps,
                                              const size_t *temp_bytes) {
    if (!ctxs || !comms || !desc || !ins || !outs || !n_locals) return PSCAN_ERROR_NULL_POINTER;
    if (count < 1 || count > PS_NCCL_MAX_GROUP) return PSCAN_ERROR_INVALID_VALUE;
    gpu_part parts[PS_NCCL_MAX_GROUP];
    /* every GPU's arguments first: nothing is enqueued anywhere unless all are good */
    for (int g = 0; g < count; g++) {
        pscan_status s = part_prepare(ctxs[g], comms[g], desc, ins[g], outs[g], n_locals[g], temps ? temps[g] : NULL,
                                      temp_bytes ? temp_bytes[g] : 0, &parts[g]);
        if (s != PSCAN_SUCCESS) return s;
    }
    pscan_status first = PSCAN_SUCCESS;
    for (int g = 0; g < count && first == PSCAN_SUCCESS; g++) first = part_reduce(&parts[g]);
    if (first != PSCAN_SUCCESS) return first; /* no collective started: nothing waits */
    /* one thread, several GPUs: NCCL launches the grouped collectives together at ncclGroupEnd */
    pscan_status s = nccl_status(parts[0].ctx, ncclGroupStart());
    for (int g = 0; g < count && s == PSCAN_SUCCESS; g++) s = part_gather(&parts[g]);
    pscan_status end = nccl_status(parts[0].ctx, ncclGroupEnd());
    if (s == PSCAN_SUCCESS) s = end;
    for (int g = 0; g < count && s == PSCAN_SUCCESS; g++) s = part_scan(&parts[g]);
    return s;
}
