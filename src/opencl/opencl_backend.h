/*
 * opencl_backend.h - the OpenCL backend's state and the contract between opencl_backend.c (context, memory,
 * programs), opencl_scan.c (the scan algorithms' host side) and opencl_patterns.c (reduce, select, partition,
 * expand). Internal.
 */
#ifndef PSCAN_OPENCL_BACKEND_H
#define PSCAN_OPENCL_BACKEND_H

#include "pscan_internal.h"
#include "pscan_opencl.h"

/* The kernels of every program, in the order of kernel_names in opencl_backend.c. */
typedef enum ps_cl_kernel_id {
    PS_CL_PROPAGATE,
    PS_CL_HILLIS_STEELE_TILES,
    PS_CL_BLELLOCH_TILES,
    PS_CL_BLELLOCH_UNPADDED_TILES,
    PS_CL_SCAN_THEN_PROPAGATE_TILES,
    PS_CL_REDUCE_THEN_SCAN_REDUCE,
    PS_CL_DECOUPLED_LOOKBACK_SCAN,
    /* the patterns (opencl_patterns.c, kernels/pattern_*.cl), from here on in the patterns' programs */
    PS_CL_PATTERN_SPINE,
    PS_CL_FIRST_PATTERN_KERNEL = PS_CL_PATTERN_SPINE,
    PS_CL_REDUCE_TILES,
    PS_CL_REDUCE_FINAL,
    PS_CL_SELECT_COUNT,
    PS_CL_SELECT_SCATTER,
    PS_CL_EXPAND_COUNT,
    PS_CL_EXPAND_FILL,
    PS_CL_RECUR_TILES, /* f32 and f64 sum programs only (PS_REAL) */
    PS_CL_RECUR_SPINE,
    PS_CL_RECUR_APPLY,
    PS_CL_HIST_COUNT, /* sum programs (kernels/pattern_histogram.cl) */
    PS_CL_HIST_MERGE,
    PS_CL_SORT_COUNT, /* sum programs (kernels/pattern_sort.cl) */
    PS_CL_SORT_SPINE,
    PS_CL_SORT_SCATTER,
    PS_CL_SEGSCAN_CHECK, /* kernels/pattern_segscan.cl */
    PS_CL_SEGSCAN_OFFSET_HEADS,
    PS_CL_SEGSCAN_KEY_HEADS,
    PS_CL_SEGSCAN_TILES,
    PS_CL_SEGSCAN_SPINE,
    PS_CL_SEGSCAN_SCAN,
    PS_CL_RBK_TILES,
    PS_CL_RBK_SCATTER,
    PS_CL_KERNEL_COUNT
} ps_cl_kernel_id;

/* The embedded sources a program may hold (opencl_kernels_embedded.c has fewer; checked as a program is built). */
#define PS_CL_SOURCES_MAX 32

/* A program of a (type, operator), built on first use and kept for the context's lifetime. */
typedef struct ps_cl_program {
    cl_program program;
    cl_kernel kernels[PS_CL_KERNEL_COUNT]; /* created on first use */
} ps_cl_program;

typedef struct ps_cl_state {
    cl_context context;
    cl_device_id device;
    cl_command_queue queue;
    int out_of_order; /* the queue runs commands out of order: separate ours with barriers */
    int is_gpu;
    int has_fp64;
    unsigned compute_units;
    size_t wg; /* work-group size of every kernel (PS_WG) */
    unsigned items4; /* the scans' items per work-item for types of up to 4 bytes (ps_cl_scan_items) */
    char name[256];
    ps_cl_program programs[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT]; /* the scan kernels */
    ps_cl_program patterns[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT]; /* the patterns' kernels */
    /* widened scans' programs (PSCAN_SCAN_WIDEN), by input type: the widened type's program, loads converting */
    ps_cl_program widened[PSCAN_TYPE_COUNT][PSCAN_OP_COUNT];
    /* look-back knobs, baked into the programs (changing them drops the built programs) */
    unsigned dlb_spin_limit;
    long dlb_stall_tile;
    unsigned dlb_window; /* predecessors read in the window round, aggregates a walk keeps; smaller in tests */
    cl_mem last_lookback_temp; /* where the last look-back scan kept its counters (tests read them) */
    /* a test's status entries for the next look-back scan (ps_opencl_debug_preset_lookback), or NULL */
    const uint64_t *dlb_preset_words;
    size_t dlb_preset_count;
    uint64_t dlb_preset_first;
    struct ps_cl_user_cache *user; /* user operators' programs (opencl_user.c), or NULL */
} ps_cl_state;

static inline ps_cl_state *ps_cl_state_of(const pscan_context *ctx) { return (ps_cl_state *)ctx->backend; }

/* Records err as the context's native error and maps it to a status; CL_SUCCESS -> PSCAN_SUCCESS. */
pscan_status ps_cl_check(pscan_context *ctx, cl_int err);

/* The kernel id of the (type, op) program, building the program on first use. */
pscan_status ps_cl_kernel(pscan_context *ctx, pscan_type type, pscan_op op, ps_cl_kernel_id id, cl_kernel *kernel);
/* The same from the widened scan's program of (in_type, op): the kernels of pscan_type_widened(in_type) whose
 * input (in) holds in_type, converted as it is loaded. Scan kernels only (PS_CL_PROPAGATE .. the look-back). */
pscan_status ps_cl_kernel_widened(pscan_context *ctx, pscan_type in_type, pscan_op op, ps_cl_kernel_id id,
                                  cl_kernel *kernel);

/* Items per work-item (PS_ITEMS) of the scan kernels for an element size: st->items4 for types of up to 4 bytes,
 * half that for 8-byte types, so that a tile is the same bytes either way; and of the patterns' kernels. */
unsigned ps_cl_scan_items(const ps_cl_state *st, size_t elem_bytes);
unsigned ps_cl_pattern_items(size_t elem_bytes);

/* opencl_scan.c: the algorithms behind the backend table. */
pscan_status ps_cl_scan_temp_bytes(const pscan_context *ctx, const ps_request *call, size_t *bytes);
pscan_status ps_cl_scan(pscan_context *ctx, const ps_request *call);

/* opencl_user.c: user operators (pscan_operator_create, pscan_scan_user, pscan_reduce_user). */
pscan_status ps_cl_operator_build(pscan_context *ctx, pscan_operator *op);
pscan_status ps_cl_user_plan(const pscan_context *ctx, ps_request *req, size_t *temp_bytes);
pscan_status ps_cl_user_run(pscan_context *ctx, const ps_request *req);
void ps_cl_user_release(ps_cl_state *st);
/* Test hook (tests/test_userop.c, static library only): clBuildProgram calls for user operators so far. */
pscan_status ps_opencl_debug_user_builds(const pscan_context *ctx, unsigned *builds);

/* One kernel argument: its size and where its value is (ARG(x) for a variable x). */
typedef struct ps_cl_arg {
    size_t size;
    const void *value;
} ps_cl_arg;
#define PS_CL_ARG(x) {sizeof(x), &(x)}
/* Sets count arguments and enqueues groups work-groups of the context's work-group size (opencl_scan.c). */
pscan_status ps_cl_launch(pscan_context *ctx, cl_kernel kernel, const ps_cl_arg *args, int count, uint64_t groups);
/* PSCAN_SUCCESS when the buffer holds bytes, else too_small (a cl_mem knows its size; opencl_scan.c). */
pscan_status ps_cl_buffer_holds(pscan_context *ctx, cl_mem buf, size_t bytes, pscan_status too_small);

/* opencl_patterns.c: every primitive but the scan. plan refuses a primitive the backend lacks with
 * PSCAN_ERROR_UNSUPPORTED_ALGORITHM, as the backend table's plan must. */
pscan_status ps_cl_pattern_plan(const pscan_context *ctx, ps_request *req, size_t *temp_bytes);
pscan_status ps_cl_pattern_run(pscan_context *ctx, const ps_request *req);

/* Test hooks (tests/test_opencl_fallback.c; the static library only): the look-back spin limit, a tile that
 * stalls before publishing until another work-group reduced it by fallback (-1: none), and the number of
 * fallbacks the last look-back scan took (synchronises). */
pscan_status ps_opencl_debug_set_lookback(pscan_context *ctx, unsigned spin_limit, long stall_tile);
pscan_status ps_opencl_debug_fallbacks(pscan_context *ctx, unsigned *fallbacks);
/* (tests/test_scan.c) The look-back window, 64 by default: a window of 1 sends every tile whose predecessor has
 * not published its I into the walk, which keeps one aggregate, so the re-read of the older ones runs on any
 * device. */
pscan_status ps_opencl_debug_set_lookback_window(pscan_context *ctx, unsigned window);
/* (tests/test_opencl_fallback.c) The next look-back scan starts at tile first_tile with the status words given
 * (count 64-bit words from the first status entry on, in the kernel's layout: kernels/5_decoupled_lookback.cl)
 * instead of zeros, and runs only the tiles from first_tile on; the words are written before that call returns,
 * and that call drops the preset whatever its outcome (PSCAN_ERROR_INVALID_VALUE when first_tile or count is past
 * its tiles).
 * So a test can hand a tile any mix of published, missing and torn predecessors and check the fold it makes. */
pscan_status ps_opencl_debug_preset_lookback(pscan_context *ctx, uint64_t first_tile, const uint64_t *words,
                                             size_t count);

#endif /* PSCAN_OPENCL_BACKEND_H */
