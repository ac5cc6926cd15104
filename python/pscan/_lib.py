"""The C library through cffi in ABI mode: its declarations, the loaded libpscan.so, names and errors.

Why ABI mode: the binding stays in C terms (the declarations below are pscan.h's own, less its macros), it
needs no compiler at import time and no C++ at build time, and the wheel holds no Python-version-specific
code: one ``py3-none-<platform>`` wheel serves every CPython 3 (the GPU machine's 3.12 as well as CI's 3.11).

The enums are declared as ``int`` (their size on every ABI pscan supports) and their values are read from the
library's own name functions at import, so this file cannot drift from pscan.h's lists. Only the predicate
list has no name function in the C API; it is written out here in pscan.h's order (PSCAN_PRED_LIST), as is
the segments list (PSCAN_SEGMENTS_LIST) and the few flag macros.
"""
from __future__ import annotations

import os

from cffi import FFI

CDEF = """
typedef int pscan_status;
typedef int pscan_type;
typedef int pscan_op;
typedef int pscan_backend;
typedef int pscan_algo;
typedef int pscan_pred;
typedef struct pscan_context pscan_context;

unsigned pscan_version(void);
const char *pscan_version_string(void);
const char *pscan_status_name(pscan_status status);
const char *pscan_status_string(pscan_status status);
const char *pscan_type_name(pscan_type type);
size_t pscan_type_size(pscan_type type);
pscan_type pscan_type_widened(pscan_type type);
const char *pscan_op_name(pscan_op op);
const char *pscan_backend_name(pscan_backend backend);
pscan_status pscan_backend_parse(const char *name, pscan_backend *backend);
pscan_status pscan_backend_compiled(pscan_backend backend, int *compiled);

pscan_status pscan_context_create(pscan_backend backend, pscan_context **ctx);
pscan_status pscan_context_destroy(pscan_context *ctx);
pscan_status pscan_context_device_name(const pscan_context *ctx, char *buf, size_t buf_bytes);
pscan_status pscan_context_native_error(const pscan_context *ctx, long long *code);
pscan_status pscan_context_set_threads(pscan_context *ctx, unsigned threads);
pscan_status pscan_context_synchronize(pscan_context *ctx);
typedef struct pscan_allocator {
    void *(*alloc)(void *user, size_t bytes);
    void (*release)(void *user, void *ptr);
    void *user;
} pscan_allocator;
pscan_status pscan_context_set_allocator(pscan_context *ctx, const pscan_allocator *allocator);

typedef struct pscan_scan_desc {
    pscan_type type;
    pscan_op op;
    unsigned flags;
    pscan_algo algo;
    const void *init;
} pscan_scan_desc;
pscan_status pscan_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out, uint64_t n,
                        void *temp, size_t temp_bytes);

typedef struct pscan_reduce_desc {
    pscan_type type;
    pscan_op op;
    pscan_algo algo;
    const void *init;
} pscan_reduce_desc;
pscan_status pscan_reduce(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                          void *result, void *temp, size_t temp_bytes);

typedef struct pscan_select_desc {
    pscan_type type;
    size_t value_bytes;
    const void *flags;
    pscan_pred pred;
    const void *operand;
    pscan_algo algo;
} pscan_select_desc;
pscan_status pscan_select(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                          const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                          void *temp, size_t temp_bytes);
pscan_status pscan_partition(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                             const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                             void *temp, size_t temp_bytes);

typedef struct pscan_sort_desc {
    pscan_type type;
    size_t value_bytes;
    unsigned flags;
    unsigned begin_bit;
    unsigned end_bit;
    pscan_algo algo;
} pscan_sort_desc;
pscan_status pscan_sort(pscan_context *ctx, const pscan_sort_desc *desc, const void *keys_in, const void *values_in,
                        uint64_t n, void *keys_out, void *values_out, void *temp, size_t temp_bytes);

typedef struct pscan_histogram_desc {
    pscan_type type;
    pscan_type count_type;
    uint32_t bins;
    const void *lower;
    const void *upper;
    const void *edges;
    unsigned flags;
    pscan_algo algo;
} pscan_histogram_desc;
pscan_status pscan_histogram(pscan_context *ctx, const pscan_histogram_desc *desc, const void *samples, uint64_t n,
                             void *counts, void *temp, size_t temp_bytes);

typedef int pscan_segments;
typedef struct pscan_segscan_desc {
    pscan_type type;
    pscan_op op;
    unsigned flags;
    pscan_algo algo;
    const void *init;
    pscan_segments segments;
} pscan_segscan_desc;
pscan_status pscan_segmented_scan(pscan_context *ctx, const pscan_segscan_desc *desc, const void *in, void *out,
                                  uint64_t n, const void *segments, uint64_t segment_count, void *temp,
                                  size_t temp_bytes);

typedef struct pscan_rle_desc {
    pscan_type type;
    pscan_algo algo;
} pscan_rle_desc;
pscan_status pscan_run_length_encode(pscan_context *ctx, const pscan_rle_desc *desc, const void *in, uint64_t n,
                                     void *values_out, uint64_t *lengths_out, uint64_t *run_count, void *temp,
                                     size_t temp_bytes);

typedef struct pscan_expand_desc {
    pscan_type count_type;
    pscan_type index_type;
    size_t value_bytes;
    pscan_algo algo;
} pscan_expand_desc;
pscan_status pscan_expand(pscan_context *ctx, const pscan_expand_desc *desc, const void *counts,
                          const void *values_in, uint64_t n, void *indices_out, void *ranks_out, void *values_out,
                          uint64_t capacity, uint64_t *total, void *temp, size_t temp_bytes);

pscan_status pscan_context_build_log(const pscan_context *ctx, const char **log);
pscan_status pscan_memory_alloc(pscan_context *ctx, size_t bytes, void **ptr);
pscan_status pscan_memory_free(pscan_context *ctx, void *ptr);
pscan_status pscan_memory_upload(pscan_context *ctx, void *device_dst, const void *host_src, size_t bytes);

pscan_status pscan_scan_host(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                             uint64_t n);
pscan_status pscan_reduce_host(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                               void *result);
pscan_status pscan_context_set_host_chunk_bytes(pscan_context *ctx, size_t bytes);
pscan_status pscan_select_host(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                               const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count);

typedef struct pscan_scan_by_key_desc {
    pscan_type key_type;
    pscan_type type;
    pscan_op op;
    unsigned flags;
    pscan_algo algo;
    const void *init;
} pscan_scan_by_key_desc;
pscan_status pscan_scan_by_key(pscan_context *ctx, const pscan_scan_by_key_desc *desc, const void *keys,
                               const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes);

typedef struct pscan_reduce_by_key_desc {
    pscan_type key_type;
    pscan_type type;
    pscan_op op;
    pscan_algo algo;
    const void *init;
} pscan_reduce_by_key_desc;
pscan_status pscan_reduce_by_key(pscan_context *ctx, const pscan_reduce_by_key_desc *desc, const void *keys_in,
                                 const void *values_in, uint64_t n, void *keys_out, void *values_out,
                                 uint64_t *run_count, void *temp, size_t temp_bytes);

typedef struct pscan_recurrence_desc {
    pscan_type type;
    unsigned flags;
    pscan_algo algo;
    const void *y0;
} pscan_recurrence_desc;
pscan_status pscan_recurrence(pscan_context *ctx, const pscan_recurrence_desc *desc, const void *a, const void *b,
                              void *y, uint64_t n, void *temp, size_t temp_bytes);
typedef struct pscan_recurrence2_desc {
    pscan_type type;
    unsigned flags;
    pscan_algo algo;
    const void *y1;
    const void *y2;
} pscan_recurrence2_desc;
pscan_status pscan_recurrence2(pscan_context *ctx, const pscan_recurrence2_desc *desc, const void *a, const void *b,
                               const void *c, void *y, uint64_t n, void *temp, size_t temp_bytes);
typedef struct pscan_polyval_desc {
    pscan_type type;
    unsigned flags;
    pscan_algo algo;
    const void *x;
} pscan_polyval_desc;
pscan_status pscan_polyval(pscan_context *ctx, const pscan_polyval_desc *desc, const void *c, void *values,
                           uint64_t n, void *temp, size_t temp_bytes);

typedef struct pscan_operator pscan_operator;
typedef struct pscan_user_op_desc {
    size_t elem_bytes;
    size_t elem_align;
    const void *identity;
    const char *source;
    const char *type_name;
    const char *combine_name;
    void (*host_combine)(const void *earlier, const void *later, void *out, void *user);
    void *user;
} pscan_user_op_desc;
pscan_status pscan_operator_create(pscan_context *ctx, const pscan_user_op_desc *desc, pscan_operator **op);
pscan_status pscan_operator_destroy(pscan_operator *op);
pscan_status pscan_scan_user(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *op,
                             const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes);
pscan_status pscan_reduce_user(pscan_context *ctx, const pscan_reduce_desc *desc, const pscan_operator *op,
                               const void *in, uint64_t n, void *result, void *temp, size_t temp_bytes);
"""

# pscan_cuda.h: a cudaStream_t is a pointer; declared apart because a CPU-only library lacks the symbol.
CDEF_CUDA = """
pscan_status pscan_cuda_context_create(void *stream, pscan_context **ctx);
"""

# PSCAN_PRED_LIST's order (pscan.h); the scan flags PSCAN_SCAN_EXCLUSIVE, PSCAN_SCAN_REVERSE and PSCAN_SCAN_WIDEN.
PREDS = ("nonzero", "eq", "ne", "lt", "le", "gt", "ge", "unique")  # PSCAN_PRED_LIST's order
SCAN_EXCLUSIVE = 1
SCAN_REVERSE = 2
SCAN_WIDEN = 4
ALGO_AUTO = 0
# PSCAN_SORT_DESCENDING; PSCAN_SEGMENTS_LIST's order (head-flags, offsets) and PSCAN_SEGSCAN_CHECK_OFFSETS;
# PSCAN_HISTOGRAM_MAX_BINS.
SORT_DESCENDING = 1
SEGMENTS_HEAD_FLAGS = 0
SEGMENTS_OFFSETS = 1
SEGSCAN_CHECK_OFFSETS = 4
HISTOGRAM_MAX_BINS = 65536
# PSCAN_USER_OP_MAX_BYTES.
USER_OP_MAX_BYTES = 32

ffi = FFI()
ffi.cdef(CDEF)
ffi.cdef(CDEF_CUDA)


def _library_path() -> str:
    """PSCAN_LIBRARY names another libpscan.so (a build tree's, say); by default the one installed beside us."""
    return os.environ.get("PSCAN_LIBRARY") or os.path.join(os.path.dirname(__file__), "libpscan.so")


lib = ffi.dlopen(_library_path())


def _names(fn) -> list:
    """Reads a closed list from the library: fn(i) for i = 0, 1, ... until it returns NULL."""
    out = []
    while True:
        p = fn(len(out))
        if p == ffi.NULL:
            return out
        out.append(ffi.string(p).decode())


TYPE_NAMES = _names(lib.pscan_type_name)  # ["i8", "u8", ..., "f64"]
OP_NAMES = _names(lib.pscan_op_name)  # ["sum", "product", "min", "max", "and", "or", "xor"]
TYPE_IDS = {name: i for i, name in enumerate(TYPE_NAMES)}
OP_IDS = {name: i for i, name in enumerate(OP_NAMES)}


def _status_names() -> list:
    out = []
    while True:
        name = ffi.string(lib.pscan_status_name(len(out))).decode()
        if name == "PSCAN_STATUS_UNKNOWN":
            return out
        out.append(name)


STATUS_NAMES = _status_names()  # index = status code
STATUS_CODES = {name: i for i, name in enumerate(STATUS_NAMES)}


def backend_compiled(name: str) -> bool:
    """True if the library was built with this backend ("cpu", "cuda", "opencl")."""
    b = ffi.new("pscan_backend *")
    if lib.pscan_backend_parse(name.encode(), b) != 0:
        return False
    c = ffi.new("int *")
    return lib.pscan_backend_compiled(b[0], c) == 0 and bool(c[0])


HAVE_CUDA = backend_compiled("cuda")
