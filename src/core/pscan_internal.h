/*
 * pscan_internal.h - the one interface every backend implements, and the context they share. Internal.
 *
 * The core (src/core/api.c) validates every public call once, resolves defaults (the identity as initial
 * value, the workspace as temporary storage) and then dispatches through the backend's table. A backend sees
 * only well-formed requests: known type, operator and flags, n > 0, non-NULL pointers, no partial overlap.
 */
#ifndef PSCAN_INTERNAL_H
#define PSCAN_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "pscan.h"
#include "pscan_ops.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The primitives, one list: each backend keeps one table of {plan, run} generated from it, and a new
 * primitive adds one row here, its public entry point (src/core/<primitive>.c) and its tile programs. */
#define PS_PRIMITIVE_LIST(X)                                                                                 \
    X(SCAN, scan)                                                                                            \
    X(REDUCE, reduce)                                                                                        \
    X(SELECT, select)                                                                                        \
    X(PARTITION, partition)                                                                                  \
    X(EXPAND, expand)                                                                                        \
    X(HISTOGRAM, histogram)                                                                                  \
    X(SORT, sort)                                                                                            \
    X(RECURRENCE, recurrence)                                                                                 \
    X(SEGMENTED_SCAN, segmented_scan)                                                                        \
    X(SCAN_BY_KEY, scan_by_key)                                                                              \
    X(REDUCE_BY_KEY, reduce_by_key)                                                                          \
    X(RUN_LENGTH_ENCODE, run_length_encode)

typedef enum ps_primitive {
#define PS_PRIMITIVE_ENUM_(NAME, name) PS_PRIM_##NAME,
    PS_PRIMITIVE_LIST(PS_PRIMITIVE_ENUM_)
#undef PS_PRIMITIVE_ENUM_
        PS_PRIM_COUNT
} ps_primitive;

/* A histogram's bins as the core resolved them (histogram_bin.h computes a sample's bin from it, on every
 * backend). */
typedef enum ps_histogram_form {
    /* integers whose bounds lie in the sample type's range (and up to one past its largest value): 32-bit
     * arithmetic (samples up to 32 bits only) */
    PS_HISTOGRAM_EVEN_SHIFT32, /* upper - lower == bins << shift: bin = (x - lower) >> shift */
    PS_HISTOGRAM_EVEN_DIV32,   /* any range: exact floor((x - lower) * bins / range) */
    /* any integer bounds: 64-bit arithmetic (128-bit products) */
    PS_HISTOGRAM_EVEN_SHIFT64,
    PS_HISTOGRAM_EVEN_DIV64,
    PS_HISTOGRAM_EVEN_FLOAT, /* floats: min(bins - 1, floor((x - lower) * scale)) in the sample type */
    PS_HISTOGRAM_EDGES       /* bins + 1 ascending edges in device memory, binary search */
} ps_histogram_form;

typedef struct ps_histogram_spec {
    ps_histogram_form form;
    uint32_t bins;
    uint32_t shift;       /* EVEN_SHIFT* */
    int accumulate;       /* add to counts instead of overwriting them */
    size_t count_bytes;   /* 4 (u32 counts) or 8 (u64) */
    ps_value lower, upper; /* even forms: integers as .i64 (signed samples) or .u64 (unsigned); floats .f32/.f64 */
    uint64_t range_m1;    /* integer even forms: upper - lower - 1 (the range itself may be 2^32 in 32 bits) */
    float scale_f;        /* EVEN_DIV32: bins / range, for the estimate; EVEN_FLOAT on f32: the scale */
    double scale_d;       /* EVEN_DIV64: bins / range, for the estimate; EVEN_FLOAT on f64: the scale */
    const void *edges;    /* EDGES */
} ps_histogram_spec;

/* Where a segmented scan's segments come from: the two public forms, and scan by key's runs of equal keys. */
typedef enum ps_segment_form { PS_SEGMENTS_FLAGS, PS_SEGMENTS_OFFSETS, PS_SEGMENTS_KEYS } ps_segment_form;

/* One validated request of any primitive: the one shape that crosses from the core to a backend. Fields a
 * primitive does not use stay zero. init always holds a value: the caller's, or the operator's identity. */
typedef struct ps_request {
    ps_primitive prim;
    pscan_type type; /* element type of in (and of out, for a scan); unused (0) with a user operator */
    pscan_op op;     /* unused (0) with a user operator */
    /* scan, reduce: a user operator built for this context (element size, identity, combine), or NULL. Every
     * backend branch on type and op tests it first. */
    const pscan_operator *user_op;
    int exclusive;   /* scan */
    int reverse;     /* scan */
    /* scan: out (and init) hold out_type, out_elem_bytes each: type itself, or with widen (PSCAN_SCAN_WIDEN on a
     * type narrower than 64 bits, sum or product, only on a backend with scan_widen) its 64-bit type, the
     * elements of in converted as they are read */
    int widen;
    pscan_type out_type;
    size_t out_elem_bytes;
    pscan_algo algo; /* never AUTO once the backend's plan has run */
    const void *in;
    void *out;       /* scan: n elements; reduce: one element (the result), in device memory */
    uint64_t n;      /* may be 0 for a reduce (the result is init) */
    size_t elem_bytes;
    ps_value init;   /* the carry into the first element (scan, reduce) */
    /* select, partition: in and out are the keys (n elements, out has room for n); in2 and out2 the payload of
     * value_bytes per item (0: none, both NULL); count one uint64_t in device memory, any address; flags n
     * bytes or NULL for pred against operand (a key). */
    const void *in2;
    void *out2;
    void *count;
    const void *flags;
    pscan_pred pred;
    ps_value operand;
    size_t value_bytes;
    /* expand: in the counts (type u32 or u64), in2 / out2 the values (value_bytes, 0: none), out the item
     * indices and ranks the ranks (capacity elements of index_type; either may be NULL), count the total (one
     * uint64_t, any address); slots from capacity on are never written. */
    void *ranks;
    uint64_t capacity;
    pscan_type index_type;
    /* histogram: in the samples, out the counts; everything else resolved once by the core */
    ps_histogram_spec hist;
    /* sort: in/out the keys, in2/out2 the payloads (value_bytes, as select); bits [begin_bit, end_bit) of the
     * order-preserving key (end_bit resolved, never 0), descending when set */
    unsigned begin_bit, end_bit;
    int descending;
    /* recurrence: in and in2 are a and b, out is y (n elements of type each); init is y0. Order 2 (order 1 or
     * 2): in3 is c, init is y[-1] and init2 y[-2] (reverse: y[n], y[n+1]). Order 1 with in NULL (pscan_polyval):
     * every a[i] is operand. */
    int order;
    const void *in3;
    ps_value init2;
    /* segmented scan, scan by key (exclusive, reverse, init as for a scan, init at every segment): in and out
     * the values; the segments as head flags (flags, n bytes), CSR offsets (in2, segment_count + 1 uint64_t)
     * or keys (in2, n of key_bytes). check: wait for the device's verdict on the offsets.
     * reduce by key: in2 the keys, in the values, out the unique keys, out2 the reduced values, count the
     * number of runs. run-length encode: the same with in2 the input (key_bytes each), in NULL, type u64 and
     * op sum for the lengths (each item counts 1), out2 the lengths. */
    ps_segment_form seg_form;
    uint64_t segment_count;
    size_t key_bytes;
    int check;
    void *temp;      /* device storage of temp_bytes >= what plan returned, 256-byte aligned (addresses) */
    size_t temp_bytes;
    /* Scan, set only by a backend's out-of-core driver (pscan_scan_host), never by the core: it chains the
     * carry from one piece to the next on the device, without the host waiting in between. init_device:
     * non-NULL, the initial value is read from this device address when the scan runs (init is ignored);
     * total_out: non-NULL, init (+) every element is written there (one element). Only the algorithms the
     * driver asks for honour them (CUDA: 5_decoupled_lookback.cu). */
    const void *init_device;
    void *total_out;
} ps_request;

/* The largest range of bytes a buffer can span on any backend (2^48 = 256 TiB, the x86-64 and arm64 user
 * address space); a request beyond it cannot describe real memory and is PSCAN_ERROR_TOO_LARGE. */
#define PS_MAX_RANGE_BYTES (1ull << 48)
/* Alignment the core guarantees for temp (it rounds the caller's pointer up and asks for this much slack). */
#define PS_TEMP_ALIGN 256u

typedef struct ps_backend_ops {
    pscan_backend kind;
    /* 1 when data handles are addresses (CPU, CUDA), so the core can refuse partial overlap. */
    int handles_are_addresses;
    void (*destroy)(pscan_context *ctx);
    pscan_status (*device_name)(const pscan_context *ctx, char *buf, size_t buf_bytes);
    pscan_status (*set_threads)(pscan_context *ctx, unsigned threads); /* may be NULL */
    /* Resolves req->algo (AUTO -> the backend's choice; an algorithm it lacks for this primitive ->
     * PSCAN_ERROR_UNSUPPORTED_ALGORITHM), checks the algorithm's limits (PSCAN_ERROR_TOO_LARGE) and sets
     * *temp_bytes. Everything the call could refuse, it refuses here: the size query returns the same. */
    pscan_status (*plan)(const pscan_context *ctx, ps_request *req, size_t *temp_bytes);
    /* Runs a planned request; req->temp holds at least what plan asked for. */
    pscan_status (*run)(pscan_context *ctx, const ps_request *req);
    pscan_status (*mem_alloc)(pscan_context *ctx, size_t bytes, void **ptr);
    pscan_status (*mem_free)(pscan_context *ctx, void *ptr);
    pscan_status (*mem_upload)(pscan_context *ctx, void *dst, const void *src, size_t bytes);
    pscan_status (*mem_download)(pscan_context *ctx, void *dst, const void *src, size_t bytes);
    pscan_status (*mem_copy)(pscan_context *ctx, void *dst, const void *src, size_t bytes); /* device to device */
    pscan_status (*synchronize)(pscan_context *ctx);
    /* Makes a user operator runnable on this context (CPU: checks its host function; CUDA: compiles its source
     * or finds the module compiled for the same hash, and sets op->device; OpenCL: the same with a program).
     * NULL: the backend takes no user operators (PSCAN_ERROR_UNSUPPORTED_OPERATOR). */
    pscan_status (*operator_build)(pscan_context *ctx, pscan_operator *op);
    /* pscan_scan_host: 1 when the backend's data are host memory (CPU), so the core runs a host scan as an
     * ordinary one; else scan_host runs it (blocking: the host's out is written when it returns), or is NULL
     * when the backend has no out-of-core driver (PSCAN_ERROR_UNSUPPORTED_ALGORITHM). */
    int data_in_host_memory;
    pscan_status (*scan_host)(pscan_context *ctx, ps_request *req);
    /* 1 when plan and run honour ps_request.widen (each algorithm that cannot refuses it in plan); 0: the core
     * refuses a widened scan (PSCAN_ERROR_UNSUPPORTED_ALGORITHM) before the backend sees it */
    int scan_widen;
    /* 1 while the context's stream is being captured into a CUDA graph (NULL: never). The workspace does not grow
     * then: an allocation made under capture would belong to the graph (cudaMallocAsync becomes a graph node whose
     * memory exists only while the graph runs; a plain cudaMalloc may fail the capture), and calls after the capture
     * would use it. pscan_context_reserve refuses it instead (PSCAN_ERROR_TEMP_TOO_SMALL). */
    int (*capturing)(pscan_context *ctx);
} ps_backend_ops;

/* A user operator (pscan_operator_create): the desc, copied, and what the backend built from it. */
struct pscan_operator {
    const pscan_context *ctx; /* the only context it runs on */
    size_t elem_bytes, elem_align;
    ps_value identity;
    char *source, *type_name, *combine_name; /* malloc'd copies; source NULL when there is no device code */
    void (*host_combine)(const void *earlier, const void *later, void *out, void *user);
    void *user;
    uint64_t hash;      /* FNV-1a of everything the device code depends on: the module cache's key */
    const void *device; /* the backend's compiled form (CUDA: a module owned by the context's cache), or NULL */
};

struct pscan_context {
    const ps_backend_ops *ops;
    void *backend;           /* the backend's own state */
    long long native_error;  /* last cudaError_t / cl_int that failed */
    char *build_log;         /* malloc'd, or NULL */
    void *workspace;         /* device memory from ops->mem_alloc */
    size_t workspace_bytes;
    /* Set when a call ran on the workspace under stream capture: a graph now refers to it, and replays after the
     * capture still write it. A later growth retires it to `retired` instead of freeing it, so a replay never
     * writes memory handed out again; pscan_context_destroy frees them (a graph must not outlive its context). */
    int workspace_in_graph;
    void **retired;
    size_t retired_count, retired_cap;
    pscan_allocator allocator; /* the caller's (pscan_context_set_allocator), in place of the workspace; or zeros */
    size_t host_chunk_bytes; /* pscan_scan_host's piece size (pscan_context_set_host_chunk_bytes); 0: default */
};

/* Each backend's constructor on its default device. A backend not compiled in is absent from the table in
 * api.c. On success ctx->ops and ctx->backend are set; on failure nothing is left allocated. */
/* gpu_only is set when PSCAN_BACKEND_AUTO asks: a backend then accepts only a GPU (OpenCL on PoCL's CPU
 * device is not what AUTO means; the CPU backend is faster there). */
pscan_status ps_cpu_context_init(pscan_context *ctx, int gpu_only);
#ifdef PSCAN_HAVE_CUDA
pscan_status ps_cuda_context_init_default(pscan_context *ctx, int gpu_only);
#endif
#ifdef PSCAN_HAVE_OPENCL
pscan_status ps_opencl_context_init_default(pscan_context *ctx, int gpu_only);
#endif

/* The workspace, for a call about to run on it (after pscan_context_reserve): under stream capture it is marked as
 * a graph's (workspace_in_graph), so that a later growth retires it instead of freeing it. */
void *ps_core_workspace_use(pscan_context *ctx);
/* Allocates a zeroed context shell for the backend add-on constructors (pscan_cuda.h, pscan_opencl.h). */
pscan_status ps_core_context_alloc(pscan_context **ctx);
/* The operator's identity for the type (a validated pair): what pads partial tiles and starts later ones. */
const ps_value *ps_core_identity(pscan_type type, pscan_op op);
/* pscan_scan with ps_request.init_device set (api.c): the carry is read from device memory when the scan runs. */
pscan_status ps_core_scan_init_device(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                                      uint64_t n, const void *init_device, void *temp, size_t temp_bytes);
/* Everything ps_core_scan_init_device would refuse (pointers, overlap, the plan), without running anything. */
pscan_status ps_core_scan_check_init_device(pscan_context *ctx, const pscan_scan_desc *desc, const void *in,
                                            void *out, uint64_t n, const void *init_device);
/* The piece pscan_scan_host and pscan_reduce_host move through the device, in bytes: the context's
 * (pscan_context_set_host_chunk_bytes) rounded down to a multiple of 256, at least 256; 64 MiB by default. */
size_t ps_core_host_piece_bytes(const pscan_context *ctx);
/* Records a build log on the context (copied); NULL clears it. */
pscan_status ps_core_set_build_log(pscan_context *ctx, const char *log);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_INTERNAL_H */
