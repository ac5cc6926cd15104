/*
 * opencl_patterns.c - reduce, select, partition, expand, the linear recurrences, the histogram, the sort, the
 * segmented scans, reduce by key and run-length encoding on OpenCL: sizes, temporary storage and launches of the
 * kernels in kernels/pattern_*.cl (the histogram's two passes, the sort's count, spine and scatter per digit and
 * the segmented family's heads, pairs and spines are written beside their own kernels).
 *
 * One design for the first five, three passes over fixed tiles, none waiting on another work-group (so it runs as
 * well on PoCL's CPU devices as on GPUs):
 *   upsweep    one value per tile into temp: its reduction (reduce), its kept items (select, partition), the
 *              sum of its counts (expand), its elements' affine maps composed (recurrence)
 *   spine      one work-group walks the tile values in order: reduce folds them into init and writes the
 *              result; the recurrence applies them to the initial state; the others scan them into each
 *              tile's first output slot and write the total to the caller's count (kernels/pattern_common.cl)
 *   downsweep  each tile again, from its slot (or state): scatter the kept (and rejected) items, fill the
 *              expanded slots, step the recurrence
 * The tiles, and every tree inside a work-group, depend only on n and the work-group size: float reductions
 * give the same bits on every run of a device. Every combine joins an earlier range with the later one next to
 * it, so no operator is assumed commutative. The algorithm is PSCAN_ALGO_REDUCE_THEN_SCAN (what AUTO picks);
 * any other is PSCAN_ERROR_UNSUPPORTED_ALGORITHM. Nothing here waits or allocates: every launch is enqueued on
 * the context's queue, and counts and results stay in device memory.
 * Limits: any n the core accepts; tile-looping kernels get at most 2^16 work-groups, the spine one.
 */
#include <string.h>

#include "opencl_backend.h"

/* Tile-looping kernels get at most this many work-groups; each then strides over tiles. */
#define PS_CL_PATTERN_MAX_GROUPS ((uint64_t)1 << 16)
/* Items per work-item of the expand tile (PS_EXPAND_ITEMS in kernels/pattern_expand.cl). */
#define PS_CL_EXPAND_ITEMS 8u

/* The kernels decide predicates by number: PS_PRED_* in kernels/pattern_select.cl mirror pscan.h's list. */
typedef char ps_cl_pred_order_check[PSCAN_PRED_NONZERO == 0 && PSCAN_PRED_EQ == 1 && PSCAN_PRED_NE == 2 &&
                                            PSCAN_PRED_LT == 3 && PSCAN_PRED_LE == 4 && PSCAN_PRED_GT == 5 &&
                                            PSCAN_PRED_GE == 6 && PSCAN_PRED_UNIQUE == 7 &&
                                            PSCAN_PRED_COUNT == 8
                                        ? 1
                                        : -1];

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
static uint64_t groups_for(uint64_t tiles) {
    return tiles < PS_CL_PATTERN_MAX_GROUPS ? tiles : PS_CL_PATTERN_MAX_GROUPS;
}

/* Elements per tile: PS_TILE of a program whose element is elem_bytes wide, and the expand tile. */
static uint64_t tile_of(const pscan_context *ctx, size_t elem_bytes) {
    return (uint64_t)ps_cl_state_of(ctx)->wg * ps_cl_pattern_items(elem_bytes);
}
static uint64_t expand_tile(const pscan_context *ctx) {
    return (uint64_t)ps_cl_state_of(ctx)->wg * PS_CL_EXPAND_ITEMS;
}

static size_t index_bytes(const ps_request *req) { return req->index_type == PSCAN_TYPE_U32 ? 4 : 8; }

/* Enqueues zeros over the first bytes of buf (a multiple of 8 or 4: select's and expand's uint64_t count, or a
 * histogram's counts, for calls of nothing). */
static pscan_status write_zeros_at(pscan_context *ctx, void *buf, size_t at, size_t bytes, size_t grain) {
    ps_cl_state *st = ps_cl_state_of(ctx);
    const cl_uint zero = 0;
    cl_int err = clEnqueueFillBuffer(st->queue, (cl_mem)buf, &zero, grain, at, bytes, 0, NULL, NULL);
    if (err == CL_SUCCESS && st->out_of_order) err = clEnqueueBarrierWithWaitList(st->queue, 0, NULL, NULL);
    return ps_cl_check(ctx, err);
}
static pscan_status write_zeros(pscan_context *ctx, void *buf, size_t bytes) {
    return write_zeros_at(ctx, buf, 0, bytes, sizeof(cl_uint));
}

/* Checks each (buffer, bytes) pair in turn, in the order given; NULL buffers are skipped. */
typedef struct buffer_need {
    const void *buf;
    uint64_t bytes;
    pscan_status too_small;
} buffer_need;

static pscan_status buffers_hold(pscan_context *ctx, const buffer_need *needs, int count) {
    for (int i = 0; i < count; i++) {
        if (!needs[i].buf || needs[i].bytes == 0) continue;
        pscan_status s = ps_cl_buffer_holds(ctx, (cl_mem)needs[i].buf, (size_t)needs[i].bytes, needs[i].too_small);
        if (s != PSCAN_SUCCESS) return s;
    }
    return PSCAN_SUCCESS;
}

/* ---- reduce --------------------------------------------------------------------------------------------- */

/* One tile needs no temp: the final work-group reads the input itself. */
static pscan_status reduce_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes));
    *bytes = tiles > 1 ? (size_t)tiles * req->elem_bytes : 0;
    return PSCAN_SUCCESS;
}

static pscan_status reduce_run(pscan_context *ctx, const ps_request *req) {
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes));
    const buffer_need needs[] = {
        {req->n ? req->in : NULL, req->n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {tiles > 1 ? req->temp : NULL, tiles * req->elem_bytes, PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    pscan_status s = buffers_hold(ctx, needs, 3);
    cl_kernel final = NULL;
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, req->op, PS_CL_REDUCE_FINAL, &final);
    if (s != PSCAN_SUCCESS) return s;

    cl_mem in = (cl_mem)req->in, out = (cl_mem)req->out;
    cl_ulong n = req->n;
    if (tiles > 1) {
        /* ---- upsweep: one total per tile ---- */
        cl_kernel k = NULL;
        s = ps_cl_kernel(ctx, req->type, req->op, PS_CL_REDUCE_TILES, &k);
        cl_mem totals = (cl_mem)req->temp;
        ps_cl_arg args[] = {PS_CL_ARG(in), PS_CL_ARG(n), PS_CL_ARG(totals)};
        if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, k, args, 3, groups_for(tiles));
        if (s != PSCAN_SUCCESS) return s;
        in = totals;
        n = tiles;
    }
    /* ---- spine: init (+) the totals (or the elements of the one tile), in order ---- */
    ps_cl_arg args[] = {PS_CL_ARG(in), PS_CL_ARG(n), {req->elem_bytes, req->init.bytes}, PS_CL_ARG(out)};
    return ps_cl_launch(ctx, final, args, 4, 1);
}

/* ---- select and partition ------------------------------------------------------------------------------- */

/* temp: one count per tile, then the number kept. */
static pscan_status select_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    *bytes = req->n ? (size_t)(ceil_div(req->n, tile_of(ctx, req->elem_bytes)) + 1) * sizeof(cl_ulong) : 0;
    return PSCAN_SUCCESS;
}

static pscan_status select_run(pscan_context *ctx, const ps_request *req) {
    const buffer_need total_need = {req->count, sizeof(cl_ulong), PSCAN_ERROR_TOO_LARGE};
    if (req->n == 0) {
        pscan_status s = buffers_hold(ctx, &total_need, 1);
        return s != PSCAN_SUCCESS ? s : write_zeros(ctx, req->count, sizeof(cl_ulong));
    }
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes));
    const uint64_t kb = req->n * req->elem_bytes, vb = req->n * req->value_bytes;
    const buffer_need needs[] = {
        {req->in, kb, PSCAN_ERROR_TOO_LARGE},        {req->in2, vb, PSCAN_ERROR_TOO_LARGE},
        {req->flags, req->n, PSCAN_ERROR_TOO_LARGE}, {req->out, kb, PSCAN_ERROR_TOO_LARGE},
        {req->out2, vb, PSCAN_ERROR_TOO_LARGE},      total_need,
        {req->temp, (tiles + 1) * sizeof(cl_ulong), PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    cl_kernel count = NULL, spine = NULL, scatter = NULL;
    pscan_status s = buffers_hold(ctx, needs, 7);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_SELECT_COUNT, &count);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_PATTERN_SPINE, &spine);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_SELECT_SCATTER, &scatter);
    if (s != PSCAN_SUCCESS) return s;

    cl_mem keys = (cl_mem)req->in, flags = (cl_mem)req->flags, offsets = (cl_mem)req->temp;
    cl_mem values = (cl_mem)req->in2, keys_out = (cl_mem)req->out, values_out = (cl_mem)req->out2;
    cl_mem total = (cl_mem)req->count;
    cl_int use_flags = req->flags != NULL, pred = (cl_int)req->pred, partition = req->prim == PS_PRIM_PARTITION;
    cl_ulong n = req->n, tiles_arg = tiles, value_bytes = req->value_bytes;
    const ps_cl_arg operand = {req->elem_bytes, req->operand.bytes};

    /* ---- upsweep: each tile's kept items ---- */
    ps_cl_arg count_args[] = {PS_CL_ARG(keys), PS_CL_ARG(flags), PS_CL_ARG(use_flags), PS_CL_ARG(pred), operand,
                              PS_CL_ARG(n),    PS_CL_ARG(offsets)};
    s = ps_cl_launch(ctx, count, count_args, 7, groups_for(tiles));
    /* ---- spine: each tile's first slot, and the number kept ---- */
    ps_cl_arg spine_args[] = {PS_CL_ARG(offsets), PS_CL_ARG(tiles_arg), PS_CL_ARG(total)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, spine, spine_args, 3, 1);
    /* ---- downsweep: every item to its slot ---- */
    ps_cl_arg scatter_args[] = {PS_CL_ARG(keys),     PS_CL_ARG(flags),       PS_CL_ARG(use_flags),
                                PS_CL_ARG(pred),     operand,                PS_CL_ARG(n),
                                PS_CL_ARG(offsets),  PS_CL_ARG(values),      PS_CL_ARG(value_bytes),
                                PS_CL_ARG(keys_out), PS_CL_ARG(values_out),  PS_CL_ARG(partition)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, scatter, scatter_args, 12, groups_for(tiles));
    return s;
}

/* ---- expand --------------------------------------------------------------------------------------------- */

/* temp: one slot count per tile, then the total. */
static pscan_status expand_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    *bytes = req->n ? (size_t)(ceil_div(req->n, expand_tile(ctx)) + 1) * sizeof(cl_ulong) : 0;
    return PSCAN_SUCCESS;
}

static pscan_status expand_run(pscan_context *ctx, const ps_request *req) {
    const buffer_need total_need = {req->count, sizeof(cl_ulong), PSCAN_ERROR_TOO_LARGE};
    if (req->n == 0) {
        pscan_status s = buffers_hold(ctx, &total_need, 1);
        return s != PSCAN_SUCCESS ? s : write_zeros(ctx, req->count, sizeof(cl_ulong));
    }
    const uint64_t tiles = ceil_div(req->n, expand_tile(ctx)), cap = req->capacity;
    const buffer_need needs[] = {
        {req->in, req->n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->in2, req->n * req->value_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, cap * index_bytes(req), PSCAN_ERROR_TOO_LARGE},
        {req->ranks, cap * index_bytes(req), PSCAN_ERROR_TOO_LARGE},
        {req->out2, cap * req->value_bytes, PSCAN_ERROR_TOO_LARGE},
        total_need,
        {req->temp, (tiles + 1) * sizeof(cl_ulong), PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    cl_kernel count = NULL, spine = NULL, fill = NULL;
    pscan_status s = buffers_hold(ctx, needs, 7);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_EXPAND_COUNT, &count);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_PATTERN_SPINE, &spine);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_EXPAND_FILL, &fill);
    if (s != PSCAN_SUCCESS) return s;

    cl_mem counts = (cl_mem)req->in, starts = (cl_mem)req->temp, total = (cl_mem)req->count;
    cl_mem indices = (cl_mem)req->out, ranks = (cl_mem)req->ranks;
    cl_mem values = (cl_mem)req->in2, values_out = (cl_mem)req->out2;
    cl_ulong n = req->n, tiles_arg = tiles, capacity = cap, ib = index_bytes(req), value_bytes = req->value_bytes;

    /* ---- upsweep: each tile's slots ---- */
    ps_cl_arg count_args[] = {PS_CL_ARG(counts), PS_CL_ARG(n), PS_CL_ARG(starts)};
    s = ps_cl_launch(ctx, count, count_args, 3, groups_for(tiles));
    /* ---- spine: each tile's first slot, and the total ---- */
    ps_cl_arg spine_args[] = {PS_CL_ARG(starts), PS_CL_ARG(tiles_arg), PS_CL_ARG(total)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, spine, spine_args, 3, 1);
    /* ---- downsweep: the slots below the capacity, when any output is wanted ---- */
    if (s != PSCAN_SUCCESS || cap == 0 || (!req->out && !req->ranks && !req->value_bytes)) return s;
    ps_cl_arg fill_args[] = {PS_CL_ARG(counts),  PS_CL_ARG(n),      PS_CL_ARG(starts),     PS_CL_ARG(capacity),
                             PS_CL_ARG(indices), PS_CL_ARG(ranks),  PS_CL_ARG(ib),         PS_CL_ARG(values),
                             PS_CL_ARG(values_out), PS_CL_ARG(value_bytes)};
    return ps_cl_launch(ctx, fill, fill_args, 10, groups_for(tiles));
}

/* ---- linear recurrences (pscan_recurrence, pscan_recurrence2, pscan_polyval) ----------------------------- */

/* temp: each tile's composed map (6 elements), then the state entering it (2). */
static pscan_status recurrence_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    *bytes = (size_t)ceil_div(req->n, tile_of(ctx, req->elem_bytes)) * 8 * req->elem_bytes;
    return PSCAN_SUCCESS;
}

static pscan_status recurrence_run(pscan_context *ctx, const ps_request *req) {
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes)), bytes = req->n * req->elem_bytes;
    const buffer_need needs[] = {
        {req->in, bytes, PSCAN_ERROR_TOO_LARGE}, /* NULL for Horner's rule: every a is req->operand */
        {req->in2, bytes, PSCAN_ERROR_TOO_LARGE},
        {req->order == 2 ? req->in3 : NULL, bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, bytes, PSCAN_ERROR_TOO_LARGE},
        {req->temp, tiles * 8 * req->elem_bytes, PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    cl_kernel up = NULL, spine = NULL, apply = NULL;
    pscan_status s = buffers_hold(ctx, needs, 5);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_RECUR_TILES, &up);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_RECUR_SPINE, &spine);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_RECUR_APPLY, &apply);
    if (s != PSCAN_SUCCESS) return s;

    /* the maps, then the states, in one temp buffer (the kernels take the states' element offset) */
    cl_mem a = (cl_mem)req->in, b = (cl_mem)req->in2, c = (cl_mem)req->in3, y = (cl_mem)req->out;
    cl_mem maps = (cl_mem)req->temp;
    cl_int use_a = req->in != NULL, reverse = req->reverse, order = req->order;
    cl_ulong n = req->n, tiles_arg = tiles, states_at = tiles * 6;
    const ps_cl_arg a_const = {req->elem_bytes, req->operand.bytes};
    const ps_cl_arg y1 = {req->elem_bytes, req->init.bytes}, y2 = {req->elem_bytes, req->init2.bytes};
    if (req->order != 2) c = NULL;

    /* ---- upsweep: each tile's map ---- */
    ps_cl_arg up_args[] = {PS_CL_ARG(a), PS_CL_ARG(use_a), a_const,          PS_CL_ARG(b),
                           PS_CL_ARG(c), PS_CL_ARG(n),     PS_CL_ARG(reverse), PS_CL_ARG(order), PS_CL_ARG(maps)};
    s = ps_cl_launch(ctx, up, up_args, 9, groups_for(tiles));
    /* ---- spine: the state entering each tile ---- */
    ps_cl_arg spine_args[] = {PS_CL_ARG(maps), PS_CL_ARG(tiles_arg), y1, y2, PS_CL_ARG(order), PS_CL_ARG(states_at)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, spine, spine_args, 6, 1);
    /* ---- downsweep: y ---- */
    ps_cl_arg apply_args[] = {PS_CL_ARG(a), PS_CL_ARG(use_a),   a_const,          PS_CL_ARG(b),    PS_CL_ARG(c), PS_CL_ARG(n),
                              PS_CL_ARG(reverse), PS_CL_ARG(order), PS_CL_ARG(maps), PS_CL_ARG(states_at), PS_CL_ARG(y)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, apply, apply_args, 11, groups_for(tiles));
    return s;
}

/* ---- histogram ------------------------------------------------------------------------------------------ */

/* The kernels decide the bin's form by number: PS_HIST_* in kernels/pattern_histogram.cl mirror the core's. */
typedef char ps_cl_hist_form_check[PS_HISTOGRAM_EVEN_SHIFT32 == 0 && PS_HISTOGRAM_EVEN_DIV32 == 1 &&
                                           PS_HISTOGRAM_EVEN_SHIFT64 == 2 && PS_HISTOGRAM_EVEN_DIV64 == 3 &&
                                           PS_HISTOGRAM_EVEN_FLOAT == 4 && PS_HISTOGRAM_EDGES == 5
                                       ? 1
                                       : -1];

/* Work-groups of the count pass: four per compute unit, at most 256 and at most 2^22 / bins (16 MiB of temp at
 * 65536 bins), each over one contiguous chunk of fewer than 2^31 samples, so its 32-bit counts cannot wrap. */
static uint64_t hist_groups(const pscan_context *ctx, uint64_t n, uint32_t bins) {
    const ps_cl_state *st = ps_cl_state_of(ctx);
    const uint64_t by_size = ceil_div(n, (uint64_t)st->wg * 16), by_temp = ((uint64_t)1 << 22) / bins;
    uint64_t g = (uint64_t)st->compute_units * 4;
    if (g > 256) g = 256;
    if (g > by_temp) g = by_temp;
    if (g > by_size) g = by_size;
    const uint64_t least = ceil_div(n, (uint64_t)1 << 31);
    if (g < least) g = least;
    return g ? g : 1;
}

static pscan_status histogram_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    *bytes = req->n ? (size_t)(hist_groups(ctx, req->n, req->hist.bins) * req->hist.bins * sizeof(cl_uint)) : 0;
    return PSCAN_SUCCESS;
}

static pscan_status histogram_run(pscan_context *ctx, const ps_request *req) {
    const ps_histogram_spec *h = &req->hist;
    const int edges_form = h->form == PS_HISTOGRAM_EDGES;
    const uint64_t groups = hist_groups(ctx, req->n, h->bins);
    const buffer_need needs[] = {
        {req->n ? req->in : NULL, req->n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {edges_form ? h->edges : NULL, ((uint64_t)h->bins + 1) * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, (uint64_t)h->bins * h->count_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->n ? req->temp : NULL, groups * h->bins * sizeof(cl_uint), PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    pscan_status s = buffers_hold(ctx, needs, 4);
    if (s != PSCAN_SUCCESS) return s;
    if (req->n == 0) /* nothing counted: zeros, or the counts as they were */
        return h->accumulate ? PSCAN_SUCCESS : write_zeros(ctx, req->out, (size_t)h->bins * h->count_bytes);
    cl_kernel count = NULL, merge = NULL;
    s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_HIST_COUNT, &count);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_HIST_MERGE, &merge);
    if (s != PSCAN_SUCCESS) return s;

    cl_mem samples = (cl_mem)req->in, edges = (cl_mem)h->edges, priv = (cl_mem)req->temp, counts = (cl_mem)req->out;
    cl_ulong n = req->n, chunk = ceil_div(req->n, groups), lower = h->lower.u64, range_m1 = h->range_m1;
    cl_ulong groups_arg = groups;
    cl_int form = (cl_int)h->form, wide = h->count_bytes == 8, accumulate = h->accumulate;
    cl_uint bins = h->bins, shift = h->shift;
    /* the integer forms' estimate of bins / range (the 64-bit forms resolve it in double only) */
    cl_float estimate = h->form == PS_HISTOGRAM_EVEN_DIV64 || h->form == PS_HISTOGRAM_EVEN_SHIFT64 ? (cl_float)h->scale_d
                                                                                                 : h->scale_f;
    /* the float form's bounds and scale in the sample type (zeros of its size for the others) */
    ps_value lower_t, upper_t, scale_t;
    memset(&lower_t, 0, sizeof lower_t), memset(&upper_t, 0, sizeof upper_t), memset(&scale_t, 0, sizeof scale_t);
    if (h->form == PS_HISTOGRAM_EVEN_FLOAT) {
        lower_t = h->lower, upper_t = h->upper;
        if (req->type == PSCAN_TYPE_F32)
            scale_t.f32 = h->scale_f;
        else
            scale_t.f64 = h->scale_d;
    }
    const size_t eb = req->elem_bytes;
    ps_cl_arg count_args[] = {PS_CL_ARG(samples), PS_CL_ARG(n),      PS_CL_ARG(chunk),    PS_CL_ARG(form),
                              PS_CL_ARG(bins),    PS_CL_ARG(shift),  PS_CL_ARG(lower),    PS_CL_ARG(range_m1),
                              PS_CL_ARG(estimate), {eb, lower_t.bytes}, {eb, upper_t.bytes}, {eb, scale_t.bytes},
                              PS_CL_ARG(edges),   PS_CL_ARG(priv)};
    s = ps_cl_launch(ctx, count, count_args, 14, groups);
    ps_cl_arg merge_args[] = {PS_CL_ARG(priv), PS_CL_ARG(groups_arg), PS_CL_ARG(bins), PS_CL_ARG(wide),
                              PS_CL_ARG(accumulate), PS_CL_ARG(counts)};
    if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, merge, merge_args, 6, ceil_div(h->bins, ps_cl_state_of(ctx)->wg));
    return s;
}

/* ---- sort ----------------------------------------------------------------------------------------------- */

/* The work-items of a sort, each owning a contiguous chunk of at least PS_CL_SORT_MIN_CHUNK keys, at most
 * PS_CL_SORT_MAX_WORKERS of them (the digit-major table of counts: 256 x W x 8 bytes, 8 MiB at most). */
#define PS_CL_SORT_MIN_CHUNK 256u
#define PS_CL_SORT_MAX_WORKERS 4096u
#define PS_CL_SORT_RADIX 256u

static uint64_t sort_workers(uint64_t n) {
    const uint64_t w = ceil_div(n, PS_CL_SORT_MIN_CHUNK);
    return w < PS_CL_SORT_MAX_WORKERS ? w : PS_CL_SORT_MAX_WORKERS;
}
/* 8-aligned byte offsets in temp: the counts, then the spare keys, then the spare payloads. */
static uint64_t align8(uint64_t b) { return (b + 7) & ~(uint64_t)7; }
static uint64_t sort_keys_at(uint64_t n) { return align8(sort_workers(n) * PS_CL_SORT_RADIX * sizeof(cl_ulong)); }
static uint64_t sort_values_at(const ps_request *req) { return sort_keys_at(req->n) + align8(req->n * req->elem_bytes); }

static pscan_status sort_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    (void)ctx;
    *bytes = req->n ? (size_t)(sort_values_at(req) + req->n * req->value_bytes) : 0;
    return PSCAN_SUCCESS;
}

/* One pass per 8 bits of [begin_bit, end_bit), ping-ponging between keys_out and temp so that the last pass
 * writes keys_out (kernels/pattern_sort.cl). */
static pscan_status sort_run(pscan_context *ctx, const ps_request *req) {
    if (req->n == 0) return PSCAN_SUCCESS;
    const uint64_t kb = req->n * req->elem_bytes, vbytes = req->n * req->value_bytes;
    size_t temp_need = 0;
    sort_plan(ctx, req, &temp_need);
    const buffer_need needs[] = {
        {req->in, kb, PSCAN_ERROR_TOO_LARGE},       {req->in2, vbytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, kb, PSCAN_ERROR_TOO_LARGE},      {req->out2, vbytes, PSCAN_ERROR_TOO_LARGE},
        {req->temp, temp_need, PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    pscan_status s = buffers_hold(ctx, needs, 5);
    cl_kernel count = NULL, spine = NULL, scatter = NULL;
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_SORT_COUNT, &count);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_SORT_SPINE, &spine);
    if (s == PSCAN_SUCCESS) s = ps_cl_kernel(ctx, req->type, PSCAN_OP_SUM, PS_CL_SORT_SCATTER, &scatter);
    if (s != PSCAN_SUCCESS) return s;

    const uint64_t workers = sort_workers(req->n);
    const uint64_t groups = ceil_div(workers, ps_cl_state_of(ctx)->wg);
    cl_mem temp = (cl_mem)req->temp, counts = temp;
    cl_ulong n = req->n, chunk = ceil_div(req->n, workers);
    cl_uint workers_arg = (cl_uint)workers, value_bytes = (cl_uint)req->value_bytes;
    const cl_ulong keys_at = sort_keys_at(req->n), values_at = sort_values_at(req);
    ps_value flip; /* the key's width of all ones (descending) or zeros */
    memset(&flip, req->descending ? 0xFF : 0, sizeof flip);
    const unsigned passes = (req->end_bit - req->begin_bit + 7) / 8;
    for (unsigned q = 0; q < passes && s == PSCAN_SUCCESS; q++) {
        cl_uint shift = req->begin_bit + 8 * q;
        const unsigned bits = req->end_bit - shift < 8 ? req->end_bit - shift : 8;
        cl_uint mask = (1u << bits) - 1u;
        cl_ulong entries = (cl_ulong)(mask + 1) * workers;
        /* pass q reads keys_in (first) or the other buffer, and writes keys_out iff passes - 1 - q is even */
        const int to_out = (passes - 1 - q) % 2 == 0;
        cl_mem src_keys = q == 0 ? (cl_mem)req->in : to_out ? temp : (cl_mem)req->out;
        cl_mem src_values = q == 0 ? (cl_mem)req->in2 : to_out ? temp : (cl_mem)req->out2;
        cl_ulong src_keys_at = q == 0 || !to_out ? 0 : keys_at, src_values_at = q == 0 || !to_out ? 0 : values_at;
        cl_mem dst_keys = to_out ? (cl_mem)req->out : temp, dst_values = to_out ? (cl_mem)req->out2 : temp;
        cl_ulong dst_keys_at = to_out ? 0 : keys_at, dst_values_at = to_out ? 0 : values_at;
        if (!req->value_bytes) src_values = dst_values = NULL, src_values_at = dst_values_at = 0;
        ps_cl_arg count_args[] = {PS_CL_ARG(src_keys), PS_CL_ARG(src_keys_at), PS_CL_ARG(n), PS_CL_ARG(chunk),
                                  PS_CL_ARG(workers_arg), {req->elem_bytes, flip.bytes}, PS_CL_ARG(shift),
                                  PS_CL_ARG(mask), PS_CL_ARG(counts)};
        s = ps_cl_launch(ctx, count, count_args, 9, groups);
        ps_cl_arg spine_args[] = {PS_CL_ARG(counts), PS_CL_ARG(entries)};
        if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, spine, spine_args, 2, 1);
        ps_cl_arg scatter_args[] = {PS_CL_ARG(src_keys),    PS_CL_ARG(src_keys_at),  PS_CL_ARG(src_values),
                                    PS_CL_ARG(src_values_at), PS_CL_ARG(n),          PS_CL_ARG(chunk),
                                    PS_CL_ARG(workers_arg), {req->elem_bytes, flip.bytes}, PS_CL_ARG(shift),
                                    PS_CL_ARG(mask),        PS_CL_ARG(counts),       PS_CL_ARG(dst_keys),
                                    PS_CL_ARG(dst_keys_at), PS_CL_ARG(dst_values),   PS_CL_ARG(dst_values_at),
                                    PS_CL_ARG(value_bytes)};
        if (s == PSCAN_SUCCESS) s = ps_cl_launch(ctx, scatter, scatter_args, 16, groups);
    }
    return s;
}

/* ---- segmented scan and scan by key (kernels/pattern_segscan.cl) ------------------------------------------ */

/* Kernel id of the request's program, launched on groups work-groups with args. */
static pscan_status launch(pscan_context *ctx, const ps_request *req, ps_cl_kernel_id id, const ps_cl_arg *args,
                           int count, uint64_t groups) {
    cl_kernel k = NULL;
    pscan_status s = ps_cl_kernel(ctx, req->type, req->op, id, &k);
    return s != PSCAN_SUCCESS ? s : ps_cl_launch(ctx, k, args, count, groups);
}

/* Head flags (a byte each) at temp + heads_at: 1 where a key differs from the one before it, and at 0. */
static pscan_status key_heads(pscan_context *ctx, const ps_request *req, cl_mem keys, cl_mem temp, cl_ulong heads_at) {
    cl_ulong key_bytes = req->key_bytes, n = req->n;
    ps_cl_arg args[] = {PS_CL_ARG(keys), PS_CL_ARG(key_bytes), PS_CL_ARG(n), PS_CL_ARG(temp), PS_CL_ARG(heads_at)};
    return launch(ctx, req, PS_CL_SEGSCAN_KEY_HEADS, args, 5, groups_for(ceil_div(req->n, ps_cl_state_of(ctx)->wg)));
}

/* The spine over the tiles' (flag, value) pairs at temp + tf_at / tv_at: each tile's carry, from init. */
static pscan_status pair_spine(pscan_context *ctx, const ps_request *req, cl_mem temp, cl_ulong tf_at, cl_ulong tv_at,
                               cl_ulong tiles) {
    ps_cl_arg args[] = {PS_CL_ARG(temp), PS_CL_ARG(tf_at), PS_CL_ARG(tv_at), PS_CL_ARG(tiles),
                        {req->elem_bytes, req->init.bytes}};
    return launch(ctx, req, PS_CL_SEGSCAN_SPINE, args, 5, 1);
}

/* temp: the verdict on the offsets (8 bytes), each tile's head flag (a uint) and value, then, for offsets and
 * keys, the heads (n bytes) the scan reads; the caller's head flags are read where they are. */
static uint64_t segscan_tf_at(void) { return 8; }
static uint64_t segscan_tv_at(uint64_t tiles) { return segscan_tf_at() + align8(tiles * sizeof(cl_uint)); }
static uint64_t segscan_heads_at(uint64_t tiles, size_t elem_bytes) {
    return segscan_tv_at(tiles) + align8(tiles * elem_bytes);
}

static pscan_status segscan_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes));
    const uint64_t heads = req->seg_form == PS_SEGMENTS_FLAGS ? 0 : req->n;
    *bytes = (size_t)(segscan_heads_at(tiles, req->elem_bytes) + heads);
    return PSCAN_SUCCESS;
}

/* Offsets: judged on the device first (ps_segscan_check), the scan writing nothing when they are bad; the host
 * waits for that verdict only with PSCAN_SEGSCAN_CHECK_OFFSETS (req->check), as on CUDA. */
static pscan_status segscan_run(pscan_context *ctx, const ps_request *req) {
    ps_cl_state *st = ps_cl_state_of(ctx);
    const int offsets = req->seg_form == PS_SEGMENTS_OFFSETS, keys = req->seg_form == PS_SEGMENTS_KEYS;
    const uint64_t n = req->n, tiles = ceil_div(n, tile_of(ctx, req->elem_bytes));
    const uint64_t seg_bytes = offsets ? (req->segment_count + 1) * sizeof(cl_ulong) : keys ? n * req->key_bytes : n;
    size_t temp_need = 0;
    segscan_plan(ctx, req, &temp_need);
    const buffer_need needs[] = {
        {n ? req->in : NULL, n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {n ? req->out : NULL, n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {offsets ? req->in2 : keys ? (n ? req->in2 : NULL) : (n ? req->flags : NULL), seg_bytes,
         PSCAN_ERROR_TOO_LARGE},
        {req->temp, temp_need, PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    pscan_status s = buffers_hold(ctx, needs, 4);
    if (s != PSCAN_SUCCESS) return s;
    if (n == 0 && !offsets) return PSCAN_SUCCESS;
    cl_mem temp = (cl_mem)req->temp, segs = offsets || keys ? (cl_mem)req->in2 : (cl_mem)req->flags;
    cl_ulong count = req->segment_count, n_arg = n;

    /* ---- the heads and (offsets) the verdict; the verdict word is 0 for the other forms ---- */
    if (offsets) {
        ps_cl_arg check_args[] = {PS_CL_ARG(segs), PS_CL_ARG(count), PS_CL_ARG(n_arg), PS_CL_ARG(temp)};
        s = launch(ctx, req, PS_CL_SEGSCAN_CHECK, check_args, 4, 1);
    } else {
        s = write_zeros(ctx, temp, 8);
    }
    cl_ulong heads_at = 0;
    cl_mem heads = segs;
    if (s == PSCAN_SUCCESS && n > 0 && (offsets || keys)) {
        heads = temp;
        heads_at = segscan_heads_at(tiles, req->elem_bytes);
        if (offsets) {
            s = write_zeros_at(ctx, temp, (size_t)heads_at, (size_t)n, 1); /* a head flag a byte */
            ps_cl_arg args[] = {PS_CL_ARG(segs), PS_CL_ARG(count), PS_CL_ARG(n_arg), PS_CL_ARG(temp),
                                PS_CL_ARG(heads_at)};
            if (s == PSCAN_SUCCESS)
                s = launch(ctx, req, PS_CL_SEGSCAN_OFFSET_HEADS, args, 5, groups_for(ceil_div(count, st->wg)));
        } else {
            s = key_heads(ctx, req, segs, temp, heads_at);
        }
    }

    /* ---- upsweep, spine, downsweep ---- */
    if (s == PSCAN_SUCCESS && n > 0) {
        cl_mem in = (cl_mem)req->in, out = (cl_mem)req->out;
        cl_ulong tf_at = segscan_tf_at(), tv_at = segscan_tv_at(tiles), tiles_arg = tiles;
        cl_int reverse = req->reverse, exclusive = req->exclusive;
        const ps_cl_arg init = {req->elem_bytes, req->init.bytes};
        ps_cl_arg up_args[] = {PS_CL_ARG(in),       PS_CL_ARG(n_arg), PS_CL_ARG(reverse), PS_CL_ARG(heads),
                               PS_CL_ARG(heads_at), init,             PS_CL_ARG(temp),    PS_CL_ARG(tf_at),
                               PS_CL_ARG(tv_at)};
        s = launch(ctx, req, PS_CL_SEGSCAN_TILES, up_args, 9, groups_for(tiles));
        if (s == PSCAN_SUCCESS) s = pair_spine(ctx, req, temp, tf_at, tv_at, tiles_arg);
        ps_cl_arg scan_args[] = {PS_CL_ARG(in),   PS_CL_ARG(out),      PS_CL_ARG(n_arg), PS_CL_ARG(reverse),
                                 PS_CL_ARG(exclusive), PS_CL_ARG(heads), PS_CL_ARG(heads_at), init,
                                 PS_CL_ARG(temp), PS_CL_ARG(tv_at)};
        if (s == PSCAN_SUCCESS) s = launch(ctx, req, PS_CL_SEGSCAN_SCAN, scan_args, 10, groups_for(tiles));
    }

    /* ---- the verdict, when the caller waits for it ---- */
    if (s == PSCAN_SUCCESS && offsets && req->check) {
        cl_uint bad = 0;
        s = ps_cl_check(ctx, clEnqueueReadBuffer(st->queue, temp, CL_TRUE, 0, sizeof bad, &bad, 0, NULL, NULL));
        if (s == PSCAN_SUCCESS && bad) return PSCAN_ERROR_INVALID_VALUE;
    }
    return s;
}

/* ---- reduce by key and run-length encoding (kernels/pattern_segscan.cl) ---------------------------------- */

/* temp: each tile's number of runs started (tiles + 1 ulongs: ps_pattern_spine scans them in place), each tile's
 * (flag, value) pair, then the heads (n bytes). */
static uint64_t rbk_tf_at(uint64_t tiles) { return align8((tiles + 1) * sizeof(cl_ulong)); }
static uint64_t rbk_tv_at(uint64_t tiles) { return rbk_tf_at(tiles) + align8(tiles * sizeof(cl_uint)); }
static uint64_t rbk_heads_at(uint64_t tiles, size_t elem_bytes) {
    return rbk_tv_at(tiles) + align8(tiles * elem_bytes);
}

static pscan_status rbk_plan(const pscan_context *ctx, const ps_request *req, size_t *bytes) {
    const uint64_t tiles = ceil_div(req->n, tile_of(ctx, req->elem_bytes));
    *bytes = req->n ? (size_t)(rbk_heads_at(tiles, req->elem_bytes) + req->n) : 0;
    return PSCAN_SUCCESS;
}

/* Run-length encoding is the u64 sum with every value 1: in is NULL and the kernels do not read it. */
static pscan_status rbk_run(pscan_context *ctx, const ps_request *req) {
    const buffer_need total_need = {req->count, sizeof(cl_ulong), PSCAN_ERROR_TOO_LARGE};
    if (req->n == 0) {
        pscan_status s = buffers_hold(ctx, &total_need, 1);
        return s != PSCAN_SUCCESS ? s : write_zeros(ctx, req->count, sizeof(cl_ulong));
    }
    const int ones = req->prim == PS_PRIM_RUN_LENGTH_ENCODE;
    const uint64_t n = req->n, tiles = ceil_div(n, tile_of(ctx, req->elem_bytes));
    size_t temp_need = 0;
    rbk_plan(ctx, req, &temp_need);
    const buffer_need needs[] = {
        {req->in2, n * req->key_bytes, PSCAN_ERROR_TOO_LARGE},
        {ones ? NULL : req->in, n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out, n * req->key_bytes, PSCAN_ERROR_TOO_LARGE},
        {req->out2, n * req->elem_bytes, PSCAN_ERROR_TOO_LARGE},
        total_need,
        {req->temp, temp_need, PSCAN_ERROR_TEMP_TOO_SMALL},
    };
    pscan_status s = buffers_hold(ctx, needs, 6);
    if (s != PSCAN_SUCCESS) return s;
    cl_mem temp = (cl_mem)req->temp, keys = (cl_mem)req->in2, total = (cl_mem)req->count;
    /* the values' argument must be a buffer even where it is not read (run-length encoding): keys stand in */
    cl_mem in = ones ? keys : (cl_mem)req->in, keys_out = (cl_mem)req->out, values_out = (cl_mem)req->out2;
    cl_ulong n_arg = n, key_bytes = req->key_bytes, tiles_arg = tiles, heads_at = rbk_heads_at(tiles, req->elem_bytes);
    cl_ulong tf_at = rbk_tf_at(tiles), tv_at = rbk_tv_at(tiles);
    cl_int ones_arg = ones;
    const ps_cl_arg init = {req->elem_bytes, req->init.bytes};

    /* ---- heads, where a key differs from the one before ---- */
    s = key_heads(ctx, req, keys, temp, heads_at);
    /* ---- upsweep: each tile's pair and runs started ---- */
    ps_cl_arg up_args[] = {PS_CL_ARG(in),   PS_CL_ARG(ones_arg), PS_CL_ARG(n_arg), PS_CL_ARG(temp), PS_CL_ARG(heads_at),
                           init,            PS_CL_ARG(temp),     PS_CL_ARG(tf_at), PS_CL_ARG(tv_at)};
    if (s == PSCAN_SUCCESS) s = launch(ctx, req, PS_CL_RBK_TILES, up_args, 9, groups_for(tiles));
    /* ---- spines: each tile's first run and the count; each tile's carry ---- */
    ps_cl_arg count_args[] = {PS_CL_ARG(temp), PS_CL_ARG(tiles_arg), PS_CL_ARG(total)};
    if (s == PSCAN_SUCCESS) s = launch(ctx, req, PS_CL_PATTERN_SPINE, count_args, 3, 1);
    if (s == PSCAN_SUCCESS) s = pair_spine(ctx, req, temp, tf_at, tv_at, tiles_arg);
    /* ---- downsweep: each run to its slot ---- */
    ps_cl_arg scatter_args[] = {PS_CL_ARG(in),       PS_CL_ARG(ones_arg), PS_CL_ARG(n_arg),     PS_CL_ARG(keys),
                                PS_CL_ARG(key_bytes), PS_CL_ARG(temp),    PS_CL_ARG(heads_at),  init,
                                PS_CL_ARG(temp),      PS_CL_ARG(tv_at),   PS_CL_ARG(keys_out),  PS_CL_ARG(values_out)};
    if (s == PSCAN_SUCCESS) s = launch(ctx, req, PS_CL_RBK_SCATTER, scatter_args, 12, groups_for(tiles));
    return s;
}

/* ---- the primitives this file runs ---------------------------------------------------------------------- */

typedef struct cl_pattern {
    pscan_status (*plan)(const pscan_context *ctx, const ps_request *req, size_t *bytes);
    pscan_status (*run)(pscan_context *ctx, const ps_request *req);
} cl_pattern;

/* Every primitive but the scan (opencl_scan.c); one without a row would be PSCAN_ERROR_UNSUPPORTED_ALGORITHM. */
static const cl_pattern patterns[PS_PRIM_COUNT] = {
    [PS_PRIM_REDUCE] = {reduce_plan, reduce_run},
    [PS_PRIM_SELECT] = {select_plan, select_run},
    [PS_PRIM_PARTITION] = {select_plan, select_run},
    [PS_PRIM_EXPAND] = {expand_plan, expand_run},
    [PS_PRIM_RECURRENCE] = {recurrence_plan, recurrence_run},
    [PS_PRIM_HISTOGRAM] = {histogram_plan, histogram_run},
    [PS_PRIM_SORT] = {sort_plan, sort_run},
    [PS_PRIM_SEGMENTED_SCAN] = {segscan_plan, segscan_run},
    [PS_PRIM_SCAN_BY_KEY] = {segscan_plan, segscan_run},
    [PS_PRIM_REDUCE_BY_KEY] = {rbk_plan, rbk_run},
    [PS_PRIM_RUN_LENGTH_ENCODE] = {rbk_plan, rbk_run},
};

pscan_status ps_cl_pattern_plan(const pscan_context *ctx, ps_request *req, size_t *temp_bytes) {
    *temp_bytes = 0;
    const cl_pattern *p = &patterns[req->prim];
    if (!p->plan) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (req->algo == PSCAN_ALGO_AUTO) req->algo = PSCAN_ALGO_REDUCE_THEN_SCAN;
    if (req->algo != PSCAN_ALGO_REDUCE_THEN_SCAN) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    if (req->user_op) return PSCAN_ERROR_UNSUPPORTED_OPERATOR;
    if (req->type == PSCAN_TYPE_F64 && !ps_cl_state_of(ctx)->has_fp64) return PSCAN_ERROR_UNSUPPORTED_TYPE;
    return p->plan(ctx, req, temp_bytes);
}

pscan_status ps_cl_pattern_run(pscan_context *ctx, const ps_request *req) { return patterns[req->prim].run(ctx, req); }
