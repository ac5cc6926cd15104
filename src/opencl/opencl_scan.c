/*
 * opencl_scan.c - the host side of the OpenCL scan algorithms: sizes, temporary storage, launches.
 *
 * Two shapes cover the progression (kernels in kernels/1_ .. 5_*.cl):
 *   multi-level  tiles of one work-group; their totals are scanned recursively, in temporary storage, by the
 *                same algorithm (exclusive, from the initial value) and carried back into the tiles:
 *                  Hillis-Steele, Blelloch (padded, unpadded), scan-then-propagate:
 *                      scan tiles + write totals | scan totals | propagate carries
 *                  reduce-then-scan:
 *                      reduce tiles to totals    | scan totals | scan tiles from their carries
 *   single pass  the decoupled look-back scan: zero the tile counter and status words, one launch.
 * One tile needs one launch of the tile kernel, with the initial value as its carry.
 * A widened scan (PSCAN_SCAN_WIDEN) runs as the widened type's scan (its tile sizes, temporary storage and
 * initial value) whose first level reads the narrow input through the widened program's converting load; the
 * totals below are of the widened type already, so the spine is the widened type's ordinary scan.
 * Every launch is asynchronous on the context's queue; nothing here waits or allocates device memory.
 */
#include <string.h>

#include "opencl_backend.h"

/* Tile-looping kernels get at most this many work-groups; each then strides over tiles. */
#define PS_CL_MAX_GROUPS ((uint64_t)1 << 16)

/* Mirrors PS_AUX_* in kernels/0_common.cl. */
enum { AUX_NONE = 0, AUX_WRITE_TOTALS = 1, AUX_READ_CARRIES = 2 };

/* How one multi-level algorithm runs: its tile kernel, its first pass and last pass, its tile size. */
typedef struct level_plan {
    ps_cl_kernel_id tiles; /* scans tiles; the single-tile launch and (reduce-then-scan) the last pass */
    int reduce_first;      /* first pass: 1 = reduce kernel, 0 = tiles kernel writing totals */
    uint64_t tile;         /* elements per tile */
} level_plan;

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

static pscan_status plan_of(const pscan_context *ctx, const ps_request *call, level_plan *plan) {
    const ps_cl_state *st = ps_cl_state_of(ctx);
    uint64_t wg = st->wg, items = ps_cl_scan_items(st, call->out_elem_bytes);
    memset(plan, 0, sizeof *plan);
    switch (call->algo) {
    case PSCAN_ALGO_HILLIS_STEELE:
        plan->tiles = PS_CL_HILLIS_STEELE_TILES;
        plan->tile = wg;
        return PSCAN_SUCCESS;
    case PSCAN_ALGO_BLELLOCH:
    case PSCAN_ALGO_BLELLOCH_UNPADDED:
        plan->tiles = call->algo == PSCAN_ALGO_BLELLOCH ? PS_CL_BLELLOCH_TILES : PS_CL_BLELLOCH_UNPADDED_TILES;
        plan->tile = 2 * wg;
        return PSCAN_SUCCESS;
    case PSCAN_ALGO_SCAN_THEN_PROPAGATE:
        plan->tiles = PS_CL_SCAN_THEN_PROPAGATE_TILES;
        plan->tile = wg * items;
        return PSCAN_SUCCESS;
    case PSCAN_ALGO_REDUCE_THEN_SCAN:
        plan->tiles = PS_CL_SCAN_THEN_PROPAGATE_TILES;
        plan->reduce_first = 1;
        plan->tile = wg * items;
        return PSCAN_SUCCESS;
    default:
        return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    }
}

/* Elements of temporary storage the totals of every level need. */
static uint64_t level_temp_elems(uint64_t n, uint64_t tile) {
    uint64_t total = 0;
    while (n > tile) {
        n = ceil_div(n, tile);
        total += n;
    }
    return total;
}

/* Look-back temporary storage: two counters, then two status entries (8 or 16 bytes each) per tile: its
 * aggregate and its inclusive prefix (kernels/5_decoupled_lookback.cl). */
static uint64_t lookback_tile(const pscan_context *ctx, const ps_request *call) {
    const ps_cl_state *st = ps_cl_state_of(ctx);
    return (uint64_t)st->wg * ps_cl_scan_items(st, call->out_elem_bytes);
}
static size_t lookback_temp_bytes(uint64_t tiles, size_t elem_bytes) {
    return 8 + (size_t)tiles * 2 * (elem_bytes <= 4 ? 8 : 16);
}

pscan_status ps_cl_scan_temp_bytes(const pscan_context *ctx, const ps_request *call, size_t *bytes) {
    if (call->algo == PSCAN_ALGO_DECOUPLED_LOOKBACK) {
        uint64_t tiles = ceil_div(call->n, lookback_tile(ctx, call));
        if (tiles >= ((uint64_t)1 << 32)) return PSCAN_ERROR_TOO_LARGE;
        *bytes = lookback_temp_bytes(tiles, call->out_elem_bytes);
        return PSCAN_SUCCESS;
    }
    level_plan plan;
    pscan_status s = plan_of(ctx, call, &plan);
    if (s != PSCAN_SUCCESS) return s;
    *bytes = (size_t)level_temp_elems(call->n, plan.tile) * call->out_elem_bytes;
    return PSCAN_SUCCESS;
}

/* ---- launching ------------------------------------------------------------------------------------------ */

/* Sets the arguments and enqueues groups work-groups of the context's work-group size. */
pscan_status ps_cl_launch(pscan_context *ctx, cl_kernel kernel, const ps_cl_arg *args, int count, uint64_t groups) {
    ps_cl_state *st = ps_cl_state_of(ctx);
    for (int i = 0; i < count; i++) {
        cl_int err = clSetKernelArg(kernel, (cl_uint)i, args[i].size, args[i].value);
        if (err != CL_SUCCESS) return ps_cl_check(ctx, err);
    }
    size_t local = st->wg, global = (size_t)groups * st->wg;
    cl_int err = clEnqueueNDRangeKernel(st->queue, kernel, 1, NULL, &global, &local, 0, NULL, NULL);
    if (err == CL_SUCCESS && st->out_of_order) err = clEnqueueBarrierWithWaitList(st->queue, 0, NULL, NULL);
    return ps_cl_check(ctx, err);
}

/* One array of a level: a buffer, an element offset into it, its length and direction; widen: in holds the
 * call's narrow type (the first level of a widened scan), else the type of out. */
typedef struct level_io {
    cl_mem in, out;
    cl_ulong in_off, out_off, n;
    cl_int reverse, exclusive;
    int widen;
} level_io;

/* Kernel id of the program that reads io's input. */
static pscan_status level_kernel(pscan_context *ctx, const ps_request *call, const level_io *io, ps_cl_kernel_id id,
                                 cl_kernel *kernel) {
    if (io->widen) return ps_cl_kernel_widened(ctx, call->type, call->op, id, kernel);
    return ps_cl_kernel(ctx, call->out_type, call->op, id, kernel);
}

/* Launches the tile kernel over io with a carry-in value and an auxiliary array (totals or carries). */
static pscan_status launch_tiles(pscan_context *ctx, const ps_request *call, const level_plan *plan,
                                 const level_io *io, const ps_value *carry, cl_mem aux, cl_ulong aux_off,
                                 cl_int aux_mode) {
    cl_kernel k = NULL;
    pscan_status s = level_kernel(ctx, call, io, plan->tiles, &k);
    if (s != PSCAN_SUCCESS) return s;
    uint64_t tiles = ceil_div(io->n, plan->tile);
    ps_cl_arg args[] = {PS_CL_ARG(io->in),      PS_CL_ARG(io->in_off),  PS_CL_ARG(io->out),
                        PS_CL_ARG(io->out_off), PS_CL_ARG(io->n),       PS_CL_ARG(io->reverse),
                        PS_CL_ARG(io->exclusive), {call->out_elem_bytes, carry->bytes},
                        PS_CL_ARG(aux),         PS_CL_ARG(aux_off),     PS_CL_ARG(aux_mode)};
    return ps_cl_launch(ctx, k, args, (int)(sizeof args / sizeof args[0]),
                  tiles < PS_CL_MAX_GROUPS ? tiles : PS_CL_MAX_GROUPS);
}

/* Scans io; the totals of this level live at temp[temp_off ...], deeper levels after them. */
static pscan_status scan_level(pscan_context *ctx, const ps_request *call, const level_plan *plan,
                               const level_io *io, cl_mem temp, cl_ulong temp_off) {
    uint64_t tiles = ceil_div(io->n, plan->tile);
    if (tiles <= 1) return launch_tiles(ctx, call, plan, io, &call->init, io->in, 0, AUX_NONE);

    /* ---- first pass: one total per tile ---- */
    const ps_value *identity = ps_core_identity(call->out_type, call->op);
    pscan_status s;
    if (plan->reduce_first) {
        cl_kernel k = NULL;
        s = level_kernel(ctx, call, io, PS_CL_REDUCE_THEN_SCAN_REDUCE, &k);
        if (s != PSCAN_SUCCESS) return s;
        ps_cl_arg args[] = {PS_CL_ARG(io->in),      PS_CL_ARG(io->in_off), PS_CL_ARG(io->n),
                            PS_CL_ARG(io->reverse), PS_CL_ARG(temp),       PS_CL_ARG(temp_off)};
        s = ps_cl_launch(ctx, k, args, 6, tiles < PS_CL_MAX_GROUPS ? tiles : PS_CL_MAX_GROUPS);
    } else {
        s = launch_tiles(ctx, call, plan, io, identity, temp, temp_off, AUX_WRITE_TOTALS);
    }
    if (s != PSCAN_SUCCESS) return s;

    /* ---- spine: the totals become carries, exclusive, from the initial value ---- */
    level_io spine = {temp, temp, temp_off, temp_off, tiles, 0, 1, 0};
    s = scan_level(ctx, call, plan, &spine, temp, temp_off + tiles);
    if (s != PSCAN_SUCCESS) return s;

    /* ---- last pass: each tile takes its carry ---- */
    if (plan->reduce_first) return launch_tiles(ctx, call, plan, io, identity, temp, temp_off, AUX_READ_CARRIES);
    cl_kernel k = NULL;
    s = level_kernel(ctx, call, io, PS_CL_PROPAGATE, &k);
    if (s != PSCAN_SUCCESS) return s;
    cl_ulong tile_elems = plan->tile;
    ps_cl_arg args[] = {PS_CL_ARG(io->out), PS_CL_ARG(io->out_off), PS_CL_ARG(io->n), PS_CL_ARG(io->reverse),
                        PS_CL_ARG(temp),    PS_CL_ARG(temp_off),    PS_CL_ARG(tile_elems)};
    return ps_cl_launch(ctx, k, args, 7, tiles < PS_CL_MAX_GROUPS ? tiles : PS_CL_MAX_GROUPS);
}

static pscan_status scan_lookback(pscan_context *ctx, const ps_request *call, const level_io *io, cl_mem temp) {
    ps_cl_state *st = ps_cl_state_of(ctx);
    cl_kernel k = NULL;
    pscan_status s = level_kernel(ctx, call, io, PS_CL_DECOUPLED_LOOKBACK_SCAN, &k);
    if (s != PSCAN_SUCCESS) return s;
    uint64_t tiles = ceil_div(io->n, lookback_tile(ctx, call));
    size_t bytes = lookback_temp_bytes(tiles, call->out_elem_bytes);
    cl_uint zero = 0;
    cl_int err = clEnqueueFillBuffer(st->queue, temp, &zero, sizeof zero, 0, bytes, 0, NULL, NULL);
    /* a test's preset (ps_opencl_debug_preset_lookback), used by this call whatever happens: counters and
     * entries, then only its tiles */
    const uint64_t *preset = st->dlb_preset_words;
    uint64_t first = 0;
    st->dlb_preset_words = NULL;
    if (err == CL_SUCCESS && preset) {
        first = st->dlb_preset_first;
        if (first >= tiles || 8 + st->dlb_preset_count * 8 > bytes) return PSCAN_ERROR_INVALID_VALUE;
        cl_uint counters[2] = {(cl_uint)first, 0};
        if (st->out_of_order) err = clEnqueueBarrierWithWaitList(st->queue, 0, NULL, NULL); /* after the fill */
        if (err == CL_SUCCESS)
            err = clEnqueueWriteBuffer(st->queue, temp, CL_TRUE, 0, sizeof counters, counters, 0, NULL, NULL);
        if (err == CL_SUCCESS)
            err = clEnqueueWriteBuffer(st->queue, temp, CL_TRUE, 8, st->dlb_preset_count * 8, preset, 0, NULL, NULL);
    }
    if (err == CL_SUCCESS && st->out_of_order) err = clEnqueueBarrierWithWaitList(st->queue, 0, NULL, NULL);
    if (err != CL_SUCCESS) return ps_cl_check(ctx, err);

    /* the tests read the fallback counter of the last look-back scan */
    if (st->last_lookback_temp != temp) {
        clRetainMemObject(temp);
        if (st->last_lookback_temp) clReleaseMemObject(st->last_lookback_temp);
        st->last_lookback_temp = temp;
    }

    ps_cl_arg args[] = {PS_CL_ARG(io->in),        PS_CL_ARG(io->in_off),  PS_CL_ARG(io->out),
                        PS_CL_ARG(io->out_off),   PS_CL_ARG(io->n),       PS_CL_ARG(io->reverse),
                        PS_CL_ARG(io->exclusive), {call->out_elem_bytes, call->init.bytes},
                        PS_CL_ARG(temp),          PS_CL_ARG(temp)};
    return ps_cl_launch(ctx, k, args, (int)(sizeof args / sizeof args[0]), tiles - first);
}

/* Bytes of a buffer, to refuse one smaller than the call needs. */
pscan_status ps_cl_buffer_holds(pscan_context *ctx, cl_mem buf, size_t bytes, pscan_status too_small) {
    size_t size = 0;
    cl_int err = clGetMemObjectInfo(buf, CL_MEM_SIZE, sizeof size, &size, NULL);
    if (err != CL_SUCCESS) return ps_cl_check(ctx, err);
    return size >= bytes ? PSCAN_SUCCESS : too_small;
}

pscan_status ps_cl_scan(pscan_context *ctx, const ps_request *call) {
    if (call->out_type == PSCAN_TYPE_F64 && !ps_cl_state_of(ctx)->has_fp64) return PSCAN_ERROR_UNSUPPORTED_TYPE;
    size_t in_bytes = (size_t)call->n * call->elem_bytes, out_bytes = (size_t)call->n * call->out_elem_bytes;
    size_t temp_bytes = 0;
    pscan_status s = ps_cl_scan_temp_bytes(ctx, call, &temp_bytes);
    /* n beyond the buffers: the n is too large for the memory it names */
    if (s == PSCAN_SUCCESS) s = ps_cl_buffer_holds(ctx, (cl_mem)call->in, in_bytes, PSCAN_ERROR_TOO_LARGE);
    if (s == PSCAN_SUCCESS) s = ps_cl_buffer_holds(ctx, (cl_mem)call->out, out_bytes, PSCAN_ERROR_TOO_LARGE);
    if (s == PSCAN_SUCCESS && temp_bytes > 0)
        s = ps_cl_buffer_holds(ctx, (cl_mem)call->temp, temp_bytes, PSCAN_ERROR_TEMP_TOO_SMALL);
    if (s != PSCAN_SUCCESS) return s;

    level_io io = {(cl_mem)call->in, (cl_mem)call->out, 0, 0, call->n, call->reverse, call->exclusive, call->widen};
    if (call->algo == PSCAN_ALGO_DECOUPLED_LOOKBACK) return scan_lookback(ctx, call, &io, (cl_mem)call->temp);
    level_plan plan;
    s = plan_of(ctx, call, &plan);
    if (s != PSCAN_SUCCESS) return s;
    return scan_level(ctx, call, &plan, &io, (cl_mem)call->temp, 0);
}
