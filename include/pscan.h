/*
 * pscan.h - data-parallel primitives built on the parallel prefix sum.
 *
 * One plain C99 header for every backend (CPU threads, CUDA, OpenCL); it includes no CUDA or OpenCL header.
 * Backend interop (a caller's cudaStream_t or cl_command_queue) lives in pscan_cuda.h and pscan_opencl.h.
 *
 * Contract shared by every function:
 *   - every call returns a pscan_status; the library never prints and never exits;
 *   - the caller owns the data and the stream or queue; calls are asynchronous on the context's stream or
 *     queue (the CPU backend completes before returning) and nothing synchronises behind the caller's back;
 *   - data pointers are "device pointers" of the context's backend: host pointers on the CPU backend, device
 *     pointers on CUDA, and cl_mem handles cast to void * on OpenCL (offset 0).
 *
 * Worked example:
 *   in = [3 1 7 0 4 1 6 3]  ->  inclusive sum = [3 4 11 11 15 16 22 25]
 *                               exclusive sum = [0 3 4 11 11 15 16 22]
 *                               reverse inclusive sum = [25 22 21 14 14 10 9 3]
 */
#ifndef PSCAN_H
#define PSCAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PSCAN_VERSION_MAJOR 0
#define PSCAN_VERSION_MINOR 1
#define PSCAN_VERSION_PATCH 0
/* One number that grows with every release: 10000 * major + 100 * minor + patch. */
#define PSCAN_VERSION (PSCAN_VERSION_MAJOR * 10000 + PSCAN_VERSION_MINOR * 100 + PSCAN_VERSION_PATCH)

/* The version of the library actually linked (may differ from PSCAN_VERSION of the header compiled against). */
unsigned pscan_version(void);
/* "MAJOR.MINOR.PATCH" of the linked library; a static string. */
const char *pscan_version_string(void);

/* ---------------------------------------------------------------------------------------------------------
 * Status codes: one list generates the enum, pscan_status_name() and pscan_status_string().
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_STATUS_LIST(X)                                                                                 \
    X(PSCAN_SUCCESS, "success")                                                                              \
    X(PSCAN_ERROR_NULL_POINTER, "a required pointer argument is NULL")                                       \
    X(PSCAN_ERROR_INVALID_VALUE, "an enum, flag or size argument is out of range")                           \
    X(PSCAN_ERROR_UNSUPPORTED_OPERATOR, "the operator is not available here (and, or and xor need an "      \
                                        "integer type; a user operator needs a host function on the CPU, "   \
                                        "device source and a backend that compiles it on a GPU)")           \
    X(PSCAN_ERROR_UNSUPPORTED_TYPE, "the device cannot compute on this element type "                        \
                                    "(f64 on a device without double precision)")                            \
    X(PSCAN_ERROR_UNSUPPORTED_ALGORITHM, "this backend does not implement the requested algorithm")          \
    X(PSCAN_ERROR_OVERLAP, "input and output overlap without being the same buffer")                         \
    X(PSCAN_ERROR_TEMP_TOO_SMALL, "the temporary storage is smaller than the size query returned")           \
    X(PSCAN_ERROR_OUT_OF_MEMORY, "an allocation failed")                                                     \
    X(PSCAN_ERROR_BACKEND_UNAVAILABLE, "the backend is not compiled in or found no usable device")           \
    X(PSCAN_ERROR_BACKEND, "the backend runtime reported an error; pscan_context_native_error() has it")     \
    X(PSCAN_ERROR_BUILD_FAILED, "device code failed to compile; pscan_context_build_log() has the log")      \
    X(PSCAN_ERROR_TOO_LARGE, "n is larger than this algorithm supports")

typedef enum pscan_status {
#define PSCAN_STATUS_ENUM_(name, message) name,
    PSCAN_STATUS_LIST(PSCAN_STATUS_ENUM_)
#undef PSCAN_STATUS_ENUM_
        PSCAN_STATUS_COUNT
} pscan_status;

/* "PSCAN_ERROR_OVERLAP" for PSCAN_ERROR_OVERLAP; "PSCAN_STATUS_UNKNOWN" for a value outside the list. */
const char *pscan_status_name(pscan_status status);
/* A one-line English explanation of the status; never NULL. */
const char *pscan_status_string(pscan_status status);

/* ---------------------------------------------------------------------------------------------------------
 * Element types and operators: closed lists. X(ENUM_SUFFIX, short_name, c_type)
 * Integer arithmetic wraps modulo 2^bits (two's complement), as unsigned arithmetic does in C, for signed
 * types too: an i32 sum that passes INT32_MAX continues from INT32_MIN. Floats follow IEEE rounding; the
 * order in which a parallel algorithm combines elements may differ from the serial order, so float results
 * differ from a serial loop by rounding; the same input on the same device and algorithm gives the same bits
 * on every run. Every operator is treated as associative, never as commutative: elements are combined in
 * their order. min and max propagate NaN, as numpy.minimum and torch.cummin do: from the first NaN on, every
 * result is that NaN (its bits). -0.0 and +0.0 compare equal, and of equal elements min and max keep the
 * earlier one.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_INT_TYPE_LIST(X)                                                                               \
    X(I8, i8, int8_t)                                                                                        \
    X(U8, u8, uint8_t)                                                                                       \
    X(I16, i16, int16_t)                                                                                     \
    X(U16, u16, uint16_t)                                                                                    \
    X(I32, i32, int32_t)                                                                                     \
    X(U32, u32, uint32_t)                                                                                    \
    X(I64, i64, int64_t)                                                                                     \
    X(U64, u64, uint64_t)
#define PSCAN_FLOAT_TYPE_LIST(X)                                                                             \
    X(F32, f32, float)                                                                                       \
    X(F64, f64, double)
#define PSCAN_TYPE_LIST(X) PSCAN_INT_TYPE_LIST(X) PSCAN_FLOAT_TYPE_LIST(X)

typedef enum pscan_type {
#define PSCAN_TYPE_ENUM_(NAME, name, ctype) PSCAN_TYPE_##NAME,
    PSCAN_TYPE_LIST(PSCAN_TYPE_ENUM_)
#undef PSCAN_TYPE_ENUM_
        PSCAN_TYPE_COUNT
} pscan_type;

/* Operators every type has, then the bitwise ones that only integer types have. X(ENUM_SUFFIX, short_name) */
#define PSCAN_ARITH_OP_LIST(X) X(SUM, sum) X(PRODUCT, product) X(MIN, min) X(MAX, max)
#define PSCAN_BITWISE_OP_LIST(X) X(AND, and) X(OR, or) X(XOR, xor)
#define PSCAN_OP_LIST(X) PSCAN_ARITH_OP_LIST(X) PSCAN_BITWISE_OP_LIST(X)

typedef enum pscan_op {
#define PSCAN_OP_ENUM_(NAME, name) PSCAN_OP_##NAME,
    PSCAN_OP_LIST(PSCAN_OP_ENUM_)
#undef PSCAN_OP_ENUM_
        PSCAN_OP_COUNT
} pscan_op;

/* "i32", "f64", ...; NULL outside the list. */
const char *pscan_type_name(pscan_type type);
/* Bytes per element; 0 outside the list. */
size_t pscan_type_size(pscan_type type);
/* The 64-bit type of type's kind, what PSCAN_SCAN_WIDEN accumulates in: i8, i16, i32 -> i64; u8, u16, u32 -> u64;
 * f32 -> f64; a 64-bit type is its own. PSCAN_TYPE_COUNT outside the list. */
pscan_type pscan_type_widened(pscan_type type);
/* "sum", "xor", ...; NULL outside the list. */
const char *pscan_op_name(pscan_op op);
/* Parse a short name ("u16", "max") into *type or *op; PSCAN_ERROR_INVALID_VALUE if unknown. */
pscan_status pscan_type_parse(const char *name, pscan_type *type);
pscan_status pscan_op_parse(const char *name, pscan_op *op);

/* ---------------------------------------------------------------------------------------------------------
 * Backends and algorithms.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_BACKEND_LIST(X)                                                                                \
    X(AUTO, auto) /* the GPU when one works (CUDA, then OpenCL), else the CPU */                             \
    X(CPU, cpu)                                                                                              \
    X(CUDA, cuda)                                                                                            \
    X(OPENCL, opencl)

typedef enum pscan_backend {
#define PSCAN_BACKEND_ENUM_(NAME, name) PSCAN_BACKEND_##NAME,
    PSCAN_BACKEND_LIST(PSCAN_BACKEND_ENUM_)
#undef PSCAN_BACKEND_ENUM_
        PSCAN_BACKEND_COUNT
} pscan_backend;

/* The scan algorithms, in the order a learner meets them. Each backend implements a subset; asking for one
 * it lacks returns PSCAN_ERROR_UNSUPPORTED_ALGORITHM. AUTO lets the backend choose its fastest. */
#define PSCAN_ALGO_LIST(X)                                                                                   \
    X(AUTO, auto)                                                                                            \
    X(SERIAL, serial)                       /* CPU: one thread, the reference */                             \
    X(THREADS, threads)                     /* CPU: cache-blocked reduce-then-scan over a thread pool */     \
    X(HILLIS_STEELE, hillis-steele)         /* GPU: naive log-step scan, double-buffered */                  \
    X(BLELLOCH_UNPADDED, blelloch-unpadded) /* GPU: work-efficient tree, no bank-conflict padding */         \
    X(BLELLOCH, blelloch)                   /* GPU: work-efficient tree with conflict-free padding */        \
    X(SCAN_THEN_PROPAGATE, scan-then-propagate) /* GPU: block scans, scan of totals, uniform add */          \
    X(REDUCE_THEN_SCAN, reduce-then-scan)   /* GPU: block reductions, scan of totals, scan with carry */     \
    X(DECOUPLED_LOOKBACK, decoupled-lookback) /* GPU: single pass, chained scan with decoupled look-back */

typedef enum pscan_algo {
#define PSCAN_ALGO_ENUM_(NAME, name) PSCAN_ALGO_##NAME,
    PSCAN_ALGO_LIST(PSCAN_ALGO_ENUM_)
#undef PSCAN_ALGO_ENUM_
        PSCAN_ALGO_COUNT
} pscan_algo;

/* "cuda", "blelloch", ...; NULL outside the list. Parse functions return PSCAN_ERROR_INVALID_VALUE if unknown. */
const char *pscan_backend_name(pscan_backend backend);
const char *pscan_algo_name(pscan_algo algo);
pscan_status pscan_backend_parse(const char *name, pscan_backend *backend);
pscan_status pscan_algo_parse(const char *name, pscan_algo *algo);

/* Sets *compiled to 1 if the backend was built into this library (AUTO and CPU always are), else 0. */
pscan_status pscan_backend_compiled(pscan_backend backend, int *compiled);

/* ---------------------------------------------------------------------------------------------------------
 * Contexts.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct pscan_context pscan_context;
/* A user operator (pscan_operator_create, below). */
typedef struct pscan_operator pscan_operator;

/* Creates a context on the backend's default device and default stream or queue. AUTO tries CUDA, then
 * OpenCL on a GPU, then the CPU. Returns PSCAN_ERROR_BACKEND_UNAVAILABLE if the backend is not compiled in or
 * finds no device. Destroy with pscan_context_destroy(). */
pscan_status pscan_context_create(pscan_backend backend, pscan_context **ctx);
/* Waits for the context's outstanding work, frees its workspace and the context itself. NULL is a no-op. */
pscan_status pscan_context_destroy(pscan_context *ctx);
/* The backend the context runs on (never AUTO). */
pscan_status pscan_context_backend(const pscan_context *ctx, pscan_backend *backend);
/* Copies a short description of the device ("NVIDIA H100 80GB HBM3", "CPU: 2 threads") into buf. */
pscan_status pscan_context_device_name(const pscan_context *ctx, char *buf, size_t buf_bytes);
/* The backend's own error code from the last failing call (a cudaError_t or cl_int), 0 if none. */
pscan_status pscan_context_native_error(const pscan_context *ctx, long long *code);
/* The device compiler's log of the last failed kernel build (OpenCL), "" if none. Owned by the context. */
pscan_status pscan_context_build_log(const pscan_context *ctx, const char **log);
/* CPU backend: sets the number of worker threads (0 = one per usable core: the affinity mask, capped by a
 * cgroup CPU quota). Other backends ignore it. */
pscan_status pscan_context_set_threads(pscan_context *ctx, unsigned threads);
/* Grows the context-owned workspace to at least bytes now, so later calls with temp == NULL never allocate
 * (allocation may synchronise the device). CUDA: while the context's stream is being captured into a graph the
 * workspace does not grow (memory allocated under capture would belong to the graph): this call, and any call
 * with temp == NULL that needs more than the workspace holds, returns PSCAN_ERROR_TEMP_TOO_SMALL, enqueues
 * nothing and leaves the capture valid. Reserve before the capture, or pass temp. A workspace that a captured call
 * used is kept past a later growth (the graph's replays still write it) and freed by pscan_context_destroy: a
 * graph must not be replayed after its context is destroyed. */
pscan_status pscan_context_reserve(pscan_context *ctx, size_t bytes);
/* A caller's allocator for the temporary storage of calls made with temp == NULL: PyTorch's or CuPy's caching
 * allocator, RMM, a pool of the caller's. alloc(user, bytes) returns device memory of the context's backend (an
 * address on CPU and CUDA, a cl_mem on OpenCL) or NULL; release(user, ptr) hands it back. */
typedef struct pscan_allocator {
    void *(*alloc)(void *user, size_t bytes);
    void (*release)(void *user, void *ptr);
    void *user;
} pscan_allocator;
/* Set, the allocator replaces the context's workspace: each call with temp == NULL that needs temporary storage
 * asks alloc for exactly that much (its size query's bytes) and releases it as soon as the call is enqueued,
 * so the allocator must be stream-ordered on the context's stream or queue (memory released may serve only work
 * queued after the release on that stream, as PyTorch's and CuPy's caching allocators and cudaFreeAsync do).
 * alloc returning NULL fails the call with PSCAN_ERROR_OUT_OF_MEMORY and nothing written. With a capture-aware
 * allocator (PyTorch's), calls with temp == NULL capture into a CUDA graph without a warm-up: the memory is the
 * graph's. allocator NULL restores the workspace; alloc or release NULL: PSCAN_ERROR_NULL_POINTER. The
 * allocator is copied; user must outlive its use. pscan_scan_host and the multi-GPU scan keep the workspace. */
pscan_status pscan_context_set_allocator(pscan_context *ctx, const pscan_allocator *allocator);
/* Blocks until every call issued on the context's stream or queue has finished. */
pscan_status pscan_context_synchronize(pscan_context *ctx);

/* ---------------------------------------------------------------------------------------------------------
 * Memory helpers, so that portable code (and the pscan tool and tests) can run on any backend. The caller
 * still owns what they return. Copies are ordered on the context's stream or queue; a host buffer written
 * by pscan_memory_download is ready after pscan_context_synchronize().
 * ------------------------------------------------------------------------------------------------------- */
pscan_status pscan_memory_alloc(pscan_context *ctx, size_t bytes, void **ptr);
pscan_status pscan_memory_free(pscan_context *ctx, void *ptr);
pscan_status pscan_memory_upload(pscan_context *ctx, void *device_dst, const void *host_src, size_t bytes);
pscan_status pscan_memory_download(pscan_context *ctx, void *host_dst, const void *device_src, size_t bytes);
/* Device-to-device copy (the bandwidth floor every scan is measured against); the ranges must not overlap. */
pscan_status pscan_memory_copy(pscan_context *ctx, void *device_dst, const void *device_src, size_t bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Scan.
 *   inclusive:            out[i] = init + in[0] + ... + in[i]
 *   exclusive:            out[i] = init + in[0] + ... + in[i-1]        (out[0] = init)
 *   reverse inclusive:    out[i] = init + in[n-1] + ... + in[i]
 *   reverse exclusive:    out[i] = init + in[n-1] + ... + in[i+1]      (out[n-1] = init)
 * where + is the operator and init is the operator's identity unless desc->init gives a value.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_SCAN_EXCLUSIVE 1u
#define PSCAN_SCAN_REVERSE 2u
/* Sums and products of small types overflow (a 32-bit cumulative count past 2^31) or round (f32) long before the
 * data end: PSCAN_SCAN_WIDEN reads elements of type and accumulates and writes pscan_type_widened(type), as numpy's
 * cumsum does for small integers. out then holds n elements of the widened type and init, when given, is one
 * element of it; in and out must not overlap at all unless type is already 64-bit (out == in included:
 * PSCAN_ERROR_OVERLAP). Built-in PSCAN_OP_SUM and PSCAN_OP_PRODUCT only: another operator is
 * PSCAN_ERROR_UNSUPPORTED_OPERATOR, a user operator PSCAN_ERROR_INVALID_VALUE. The CPU, CUDA (decoupled
 * look-back) and OpenCL (every algorithm) backends run it; CUDA's other algorithms and pscan_scan_host on a GPU
 * backend return PSCAN_ERROR_UNSUPPORTED_ALGORITHM. Example: i32 in = [2147483647 1 1], sum -> i64 out =
 * [2147483647 2147483648 2147483649]. */
#define PSCAN_SCAN_WIDEN 4u

typedef struct pscan_scan_desc {
    pscan_type type;
    pscan_op op;
    unsigned flags;   /* PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE | PSCAN_SCAN_WIDEN, or 0 (forward inclusive) */
    pscan_algo algo;  /* PSCAN_ALGO_AUTO unless a particular algorithm is wanted */
    const void *init; /* host pointer to one element of type (widened: of pscan_type_widened(type)), or NULL for the
                         operator's identity */
} pscan_scan_desc;

/* Sets *bytes to the temporary storage pscan_scan() needs for this desc and n (0 is possible). */
pscan_status pscan_scan_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, uint64_t n, size_t *bytes);

/* Scans n elements of in into out on the context's stream or queue.
 * out == in scans in place; any other overlap returns PSCAN_ERROR_OVERLAP. n == 0 is a valid no-op (in and
 * out may then be NULL). temp is caller-owned device storage of temp_bytes >= pscan_scan_temp_bytes(), at any
 * address (the size includes the slack to align it); pass temp == NULL to use the context's workspace instead
 * (grown on demand, see pscan_context_reserve()). n whose bytes exceed 2^48 (no real buffer spans them) or
 * whose range wraps the address space is PSCAN_ERROR_TOO_LARGE, as is an n beyond an algorithm's own limit;
 * pscan_scan_temp_bytes() returns the same errors the call would.
 * Example: in = [3 1 7 0 4 1 6 3], PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE -> out = [0 3 4 11 11 15 16 22]. */
pscan_status pscan_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out, uint64_t n,
                        void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Scan of host memory (out of core): an array in host memory, however much larger than the device, scanned
 * through the device in pieces. On the CPU backend it is pscan_scan (host memory is its memory).
 * ------------------------------------------------------------------------------------------------------- */

/* Scans n elements of host memory in into host memory out, as pscan_scan defines it, and returns when out is
 * written (the one blocking call: host memory is the caller's to read at once). in and out may be pageable
 * (malloc) or pinned (cudaMallocHost, cudaHostRegister) and need not be the same kind; out == in scans in place,
 * any other overlap is PSCAN_ERROR_OVERLAP. CUDA moves pieces of pscan_context_set_host_chunk_bytes() through
 * three device buffers, uploads, scans and downloads overlapped on three streams (the context's stream scans, so
 * the call is ordered after work already queued there), each piece's carry handed to the next on the device;
 * pageable buffers are staged through pinned buffers the context keeps (freed with it), pinned ones go straight.
 * Device memory is the context's workspace (3 pieces and the scan's temp). CUDA: algo AUTO or
 * DECOUPLED_LOOKBACK (others: PSCAN_ERROR_UNSUPPORTED_ALGORITHM), a device pointer for in or out is
 * PSCAN_ERROR_INVALID_VALUE. OpenCL: the same algorithms; pieces go up, are scanned and come down one after
 * another (device memory: one piece), the carry through the host. n == 0 is a no-op.
 * Example: in = [3 1 7 0 4 1 6 3] in a malloc'd buffer, PSCAN_OP_SUM -> out = [3 4 11 11 15 16 22 25]. */
pscan_status pscan_scan_host(pscan_context *ctx, const pscan_scan_desc *desc, const void *in, void *out,
                             uint64_t n);

/* Sets the piece pscan_scan_host moves through the device at once: bytes rounded down to a multiple of 256
 * (at least 256); 0 restores the default (64 MiB). Small pieces bound the device memory the call takes (3 pieces)
 * and let a test cross many pieces; large ones amortise each piece's launch. The CPU backend ignores it. */
pscan_status pscan_context_set_host_chunk_bytes(pscan_context *ctx, size_t bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Reduce: one result, init (+) in[0] (+) ... (+) in[n-1], written to device memory (so nothing synchronises).
 * ------------------------------------------------------------------------------------------------------- */
typedef struct pscan_reduce_desc {
    pscan_type type;
    pscan_op op;
    pscan_algo algo;  /* AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK; OpenCL: REDUCE_THEN_SCAN */
    const void *init; /* host pointer to one element of type, or NULL for the operator's identity */
} pscan_reduce_desc;

/* Sets *bytes to the temporary storage pscan_reduce() needs for this desc and n (0 is possible). */
pscan_status pscan_reduce_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc, uint64_t n, size_t *bytes);

/* Reduces n elements of in into *result, one element of desc->type in device memory (a host pointer on the
 * CPU backend, a cl_mem of at least one element on OpenCL), on the context's stream or queue. n == 0 writes
 * init (the identity without one). result must not overlap in (PSCAN_ERROR_OVERLAP). temp as for pscan_scan.
 * Float results repeat bit for bit for the same input, n and device (CUDA groups by the GPU's SM count: another
 * GPU model may round differently). OpenCL: AUTO or REDUCE_THEN_SCAN (three
 * passes over tiles, docs/opencl.md). Example: in = [3 1 7 0 4 1 6 3], PSCAN_OP_SUM -> *result = 25; PSCAN_OP_MAX -> 7. */
pscan_status pscan_reduce(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                          void *result, void *temp, size_t temp_bytes);

/* Reduces n elements of host memory in into *result, one element in host memory, and returns when it is written
 * (blocking, like pscan_scan_host). The CPU reduces in place; CUDA and OpenCL move pieces of
 * pscan_context_set_host_chunk_bytes() through the device one after another, each reduced with the result of
 * the pieces before it as its init (device memory: one piece). Algorithms as for pscan_reduce. A refused or
 * failed call leaves *result untouched. Example: in = [3 1 7 0 4 1 6 3] in a malloc'd buffer, PSCAN_OP_SUM ->
 * *result = 25. */
pscan_status pscan_reduce_host(pscan_context *ctx, const pscan_reduce_desc *desc, const void *in, uint64_t n,
                               void *result);

/* ---------------------------------------------------------------------------------------------------------
 * User operators: an element of up to PSCAN_USER_OP_MAX_BYTES bytes and an associative combine written once in
 * C, run by pscan_scan_user and pscan_reduce_user. The combine is never assumed commutative: every algorithm
 * that accepts a user operator combines earlier with later elements, in order.
 *
 * Why separate entry points rather than a type value or a desc field: the element type and operator lists
 * stay closed lists of C types (every table generated from them stays exact), and the existing descs keep
 * their size and their positional initialisers. The _user calls take the same descs: flags, algo and init
 * mean what they mean for a built-in operator (init points to one element of elem_bytes), type and op are
 * not looked at.
 *
 * The source defines the element type and the combine, e.g.
 *     typedef struct { float a, b; } affine;                        (x -> a * x + b)
 *     affine combine(affine x, affine y) {                           (x first, then y)
 *         affine r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; return r;
 *     }
 * with type_name "affine" and combine_name "combine". GPU backends compile it at run time as device code
 * (CUDA: NVRTC, as C++17 with every function a device function; OpenCL: as OpenCL C 1.2): write the common
 * subset of C and C++ (no compound literals or designated initialisers), include no header, use the
 * fixed-width types (int8_t ... uint64_t; never long or long long), declare nothing at file scope but types,
 * macros and functions, and name nothing ps_ or PS_ (the library's own names). The float math functions
 * fabsf, fminf, fmaxf, fmaf, sqrtf, expf, logf, powf, floorf, ceilf, sinf, cosf are available. docs/api.md
 * ("A source for every backend") has the whole list.
 *
 * Backends:
 *   CPU     runs host_combine (SERIAL and THREADS); without one, pscan_operator_create returns
 *           PSCAN_ERROR_UNSUPPORTED_OPERATOR.
 *   CUDA    compiles source with NVRTC into the single-pass kernels (DECOUPLED_LOOKBACK only: the
 *           progression algorithms 1-4 may reorder combines and refuse user operators with
 *           PSCAN_ERROR_UNSUPPORTED_ALGORITHM); every elem_bytes up to 32 (1, 2, 4, 8, 16 on 16-byte vectors,
 *           the others, such as 12, 24 and 32, element by element in elem_align). Modules are cached per context by a hash of the source, names,
 *           size, alignment and identity: a second operator with the same description compiles nothing.
 *   OpenCL  builds source as OpenCL C into reduce-then-scan kernels over the type (AUTO, REDUCE_THEN_SCAN),
 *           every elem_bytes; programs are cached per context by the source, names, size and alignment.
 *           docs/api.md ("A source for every backend") has the rules for a source both GPU backends build.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_USER_OP_MAX_BYTES 32

typedef struct pscan_user_op_desc {
    size_t elem_bytes;        /* 1 .. PSCAN_USER_OP_MAX_BYTES */
    size_t elem_align;        /* a power of two <= 16 dividing elem_bytes: the type's alignment (_Alignof) */
    const void *identity;     /* host pointer to elem_bytes bytes: e with combine(e, x) == combine(x, e) == x */
    const char *source;       /* C source of the type and the combine; NULL: no device code (CPU only) */
    const char *type_name;    /* the element type's name in source (a C identifier) */
    const char *combine_name; /* the combine function's name in source: T combine(T earlier, T later) */
    /* The same combine on the host: *out = earlier (+) later; out never overlaps earlier or later. NULL: no
     * CPU execution. user is passed through unchanged. */
    void (*host_combine)(const void *earlier, const void *later, void *out, void *user);
    void *user;
} pscan_user_op_desc;

/* Creates an operator for use on ctx (and only there), compiling its device code now on GPU backends, so that a
 * source that does not compile fails here: PSCAN_ERROR_BUILD_FAILED, with the compiler's log in
 * pscan_context_build_log(). NULL desc, op or identity: PSCAN_ERROR_NULL_POINTER, as are NULL names with a
 * source. elem_bytes 0 or above PSCAN_USER_OP_MAX_BYTES, elem_align not a power of two, above 16 or not
 * dividing elem_bytes, and names that are not C identifiers: PSCAN_ERROR_INVALID_VALUE. A backend that cannot
 * run the operator: PSCAN_ERROR_UNSUPPORTED_OPERATOR (see above). The desc's strings are copied. Destroy with
 * pscan_operator_destroy() before the context. */
pscan_status pscan_operator_create(pscan_context *ctx, const pscan_user_op_desc *desc, pscan_operator **op);
/* Frees the operator (the context keeps its compiled module for the next operator of the same source). NULL
 * is a no-op. Calls already enqueued with it may still run. */
pscan_status pscan_operator_destroy(pscan_operator *op);

/* pscan_scan and pscan_scan_temp_bytes with op as the element type and the operator (desc->type and desc->op
 * are ignored). NULL op: PSCAN_ERROR_NULL_POINTER; an op created on another context: PSCAN_ERROR_INVALID_VALUE.
 * Example (the affine maps above, a scan composes them): in = [(2,1) (2,1) (2,1)] -> out = [(2,1) (4,3) (8,7)],
 * the maps x -> 2x + 1, x -> 4x + 3, x -> 8x + 7. */
pscan_status pscan_scan_user_temp_bytes(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *op,
                                        uint64_t n, size_t *bytes);
pscan_status pscan_scan_user(pscan_context *ctx, const pscan_scan_desc *desc, const pscan_operator *op,
                             const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes);
/* pscan_reduce and pscan_reduce_temp_bytes with op, as above; *result is one element of op's elem_bytes. */
pscan_status pscan_reduce_user_temp_bytes(pscan_context *ctx, const pscan_reduce_desc *desc,
                                          const pscan_operator *op, uint64_t n, size_t *bytes);
pscan_status pscan_reduce_user(pscan_context *ctx, const pscan_reduce_desc *desc, const pscan_operator *op,
                               const void *in, uint64_t n, void *result, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Linear recurrences, first order: y[i] = a[i] * y[i-1] + b[i] with y[-1] = y0 (forward), or
 * y[i] = a[i] * y[i+1] + b[i] with y[n] = y0 (PSCAN_SCAN_REVERSE): a scan of the affine maps x -> a x + b,
 * which compose without commuting. f32 or f64; a, b and y are device arrays of n elements; y may be a or b.
 * Example: a = [2 2 2 2], b = [1 1 1 1], y0 = 0  ->  y = [1 3 7 15]; reversed: y = [15 7 3 1].
 * Floats: the parallel order of evaluation differs from the serial loop's by rounding.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct pscan_recurrence_desc {
    pscan_type type;  /* PSCAN_TYPE_F32 or PSCAN_TYPE_F64 (else PSCAN_ERROR_UNSUPPORTED_TYPE) */
    unsigned flags;   /* 0 or PSCAN_SCAN_REVERSE */
    pscan_algo algo;  /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS */
    const void *y0;   /* host pointer to one element of type, or NULL for 0 */
} pscan_recurrence_desc;

/* Sets *bytes to the temporary storage pscan_recurrence() needs for this desc and n. */
pscan_status pscan_recurrence_temp_bytes(pscan_context *ctx, const pscan_recurrence_desc *desc, uint64_t n,
                                         size_t *bytes);
/* Computes y from a, b and y0 on the context's stream. n == 0 is a no-op. y overlapping a or b other than
 * exactly (y == a or y == b) is PSCAN_ERROR_OVERLAP. temp as for pscan_scan. CPU: SERIAL or THREADS; CUDA:
 * DECOUPLED_LOOKBACK (the single-pass chain); OpenCL: REDUCE_THEN_SCAN (three passes over tiles, docs/opencl.md). */
pscan_status pscan_recurrence(pscan_context *ctx, const pscan_recurrence_desc *desc, const void *a, const void *b,
                              void *y, uint64_t n, void *temp, size_t temp_bytes);

/* Second order: y[i] = a[i] * y[i-1] + b[i] * y[i-2] + c[i] from y[-1] = y1, y[-2] = y2 (forward), or
 * y[i] = a[i] * y[i+1] + b[i] * y[i+2] + c[i] from y[n] = y1, y[n+1] = y2 (PSCAN_SCAN_REVERSE): a scan of the
 * affine maps (y[i-1], y[i-2]) -> (a y[i-1] + b y[i-2] + c, y[i-1]). A separate desc so that
 * pscan_recurrence_desc's positional initialisers stay valid. Everything else as for pscan_recurrence; y may be
 * a, b or c. Example (Fibonacci): a = b = [1 1 1 1 1], c = 0, y1 = 1, y2 = 0  ->  y = [1 2 3 5 8]. */
typedef struct pscan_recurrence2_desc {
    pscan_type type;  /* PSCAN_TYPE_F32 or PSCAN_TYPE_F64 (else PSCAN_ERROR_UNSUPPORTED_TYPE) */
    unsigned flags;   /* 0 or PSCAN_SCAN_REVERSE */
    pscan_algo algo;  /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS */
    const void *y1;   /* host pointer to one element of type: y[-1] (reverse: y[n]), or NULL for 0 */
    const void *y2;   /* host pointer to one element of type: y[-2] (reverse: y[n+1]), or NULL for 0 */
} pscan_recurrence2_desc;

pscan_status pscan_recurrence2_temp_bytes(pscan_context *ctx, const pscan_recurrence2_desc *desc, uint64_t n,
                                          size_t *bytes);
pscan_status pscan_recurrence2(pscan_context *ctx, const pscan_recurrence2_desc *desc, const void *a, const void *b,
                               const void *c, void *y, uint64_t n, void *temp, size_t temp_bytes);

/* Polynomial evaluation by Horner's rule, run as a first-order recurrence with a constant multiplier:
 * values[k] = x * values[k-1] + c[k] from values[-1] = 0, i.e. values[k] = c[0] x^k + c[1] x^(k-1) + ... + c[k],
 * the polynomial of the coefficients c[0..k] (highest degree first) at x: every Horner prefix, and
 * values[n-1] = p(x). PSCAN_SCAN_REVERSE takes the coefficients lowest degree first (c[k] multiplies x^k):
 * values[k] = c[k] + c[k+1] x + ... + c[n-1] x^(n-1-k), and values[0] = p(x).
 * Why this form: Horner's loop is the recurrence y = x y + c; run as a scan, the work is parallel along the
 * degree, which is what a recurrence engine adds. One polynomial at many points is a map (one independent Horner
 * loop per point), not a scan: call this once per point for long polynomials, or write the map.
 * c and values are device arrays of n elements of type (f32 or f64); values may be c. x: host pointer to one
 * element (NULL: PSCAN_ERROR_NULL_POINTER). Backends, temp and errors as for pscan_recurrence.
 * Example: c = [1 2 3] (x^2 + 2x + 3), x = 2  ->  values = [1 4 11]; reversed (3x^2 + 2x + 1): values = [17 8 3]. */
typedef struct pscan_polyval_desc {
    pscan_type type; /* PSCAN_TYPE_F32 or PSCAN_TYPE_F64 (else PSCAN_ERROR_UNSUPPORTED_TYPE) */
    unsigned flags;  /* 0 or PSCAN_SCAN_REVERSE */
    pscan_algo algo; /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS */
    const void *x;   /* host pointer to one element of type: the point */
} pscan_polyval_desc;

pscan_status pscan_polyval_temp_bytes(pscan_context *ctx, const pscan_polyval_desc *desc, uint64_t n, size_t *bytes);
pscan_status pscan_polyval(pscan_context *ctx, const pscan_polyval_desc *desc, const void *c, void *values,
                           uint64_t n, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Select (compact) and partition: which items are kept is decided per item, by a u8 flag (nonzero keeps) or
 * by a predicate of the key against one constant; both are stable. X(ENUM_SUFFIX, short_name)
 *   nonzero: key != 0        eq: key == c   ne: key != c   lt: key < c   le: key <= c   gt: key > c   ge: key >= c
 * in the key type's own order (signed types signed). Floats compare as IEEE does: -0.0 == +0.0 (so -0.0 is
 * not nonzero), and a NaN key fails every predicate but ne and nonzero.
 *   unique: the key differs from the key of the item before it, bit for bit (item 0 always passes): select
 *   with unique drops consecutive duplicates (numpy's x[np.r_[True, x[1:] != x[:-1]]], bitwise: -0.0 and +0.0
 *   differ, equal NaNs are duplicates, as in pscan_run_length_encode); no constant.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_PRED_LIST(X)                                                                                   \
    X(NONZERO, nonzero) X(EQ, eq) X(NE, ne) X(LT, lt) X(LE, le) X(GT, gt) X(GE, ge) X(UNIQUE, unique)

typedef enum pscan_pred {
#define PSCAN_PRED_ENUM_(NAME, name) PSCAN_PRED_##NAME,
    PSCAN_PRED_LIST(PSCAN_PRED_ENUM_)
#undef PSCAN_PRED_ENUM_
        PSCAN_PRED_COUNT
} pscan_pred;

typedef struct pscan_select_desc {
    pscan_type type;      /* the key type */
    size_t value_bytes;   /* 0: keys only; 1, 2, 4 or 8: a payload of that many bytes per item, moved with its key */
    const void *flags;    /* device array of n uint8_t (nonzero keeps the item), or NULL to use pred */
    pscan_pred pred;      /* used when flags is NULL (always checked to be in the list) */
    const void *operand;  /* host pointer to one key of type, the constant c; ignored for nonzero, unique or flags */
    pscan_algo algo;      /* AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK; OpenCL: REDUCE_THEN_SCAN */
} pscan_select_desc;

/* Sets *bytes to the temporary storage pscan_select() and pscan_partition() need for this desc and n (the
 * larger of the two; 0 is possible). */
pscan_status pscan_select_temp_bytes(pscan_context *ctx, const pscan_select_desc *desc, uint64_t n, size_t *bytes);

/* Copies the kept items of keys_in (and values_in, when desc->value_bytes > 0) to the front of keys_out (and
 * values_out), in their input order, and writes how many were kept to *count, one uint64_t in device memory
 * (a host pointer on the CPU backend; any address), so nothing synchronises. Elements of keys_out and
 * values_out from *count on are left as they were. keys_out and values_out have room for n items; no output
 * may overlap an input or another output (PSCAN_ERROR_OVERLAP; inputs may overlap each other). values_in and
 * values_out are ignored (may be NULL) when value_bytes == 0; NULL otherwise is PSCAN_ERROR_NULL_POINTER, as
 * is a NULL count, or a NULL operand where the predicate needs it. value_bytes other than 0, 1, 2, 4, 8 and
 * pred outside the list are PSCAN_ERROR_INVALID_VALUE. n == 0 writes 0 to *count (the data pointers may then
 * be NULL). temp as for pscan_scan. On any error status nothing is written. OpenCL: AUTO or REDUCE_THEN_SCAN
 * (three passes over tiles, docs/opencl.md).
 * Example: keys = [3 1 7 0 4 1 6 3], pred gt, operand 2 -> keys_out = [3 7 4 6 3], *count = 5; with
 * values = [0 1 2 3 4 5 6 7] -> values_out = [0 2 4 6 7]. */
pscan_status pscan_select(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                          const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                          void *temp, size_t temp_bytes);

/* As pscan_select, but every item is written: the kept ones first, in input order, then the others, in input
 * order too (both groups stable), and *count is the number kept (the first index of the second group).
 * Example: keys = [3 1 7 0 4 1 6 3], pred gt, operand 2 -> keys_out = [3 7 4 6 3 1 0 1], *count = 5; with
 * values = [0 1 2 3 4 5 6 7] -> values_out = [0 2 4 6 7 1 3 5]. */
pscan_status pscan_partition(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                             const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count,
                             void *temp, size_t temp_bytes);

/* pscan_select for host memory larger than the device (out of core), blocking: keys_in, values_in, desc->flags
 * (n bytes), keys_out, values_out and count are host pointers, and *count is written when the call returns. The
 * CPU selects in place; CUDA and OpenCL move pieces of pscan_context_set_host_chunk_bytes() through the device one
 * after another (device memory: one piece of each input and output), each piece's kept items written after the
 * pieces before; PSCAN_PRED_UNIQUE compares a piece's first key with the previous piece's last. Checks, statuses
 * and algorithms as for pscan_select; a refused call writes nothing, a call that fails part way may have written
 * part of keys_out and values_out (never *count). Example: keys = [3 1 7 0 4 1 6 3] in a malloc'd buffer, pred gt,
 * operand 2 -> keys_out = [3 7 4 6 3], *count = 5. */
pscan_status pscan_select_host(pscan_context *ctx, const pscan_select_desc *desc, const void *keys_in,
                               const void *values_in, uint64_t n, void *keys_out, void *values_out, uint64_t *count);

/* ---------------------------------------------------------------------------------------------------------
 * Expand (load-balanced): item i of n has counts[i] output slots; slot j belongs to the item whose run
 * [start(i), start(i) + counts[i]) holds j, start(i) being counts[0] + ... + counts[i-1]. For each slot the call
 * writes the item's index, optionally the slot's rank inside the run (j - start(i)), and optionally the item's
 * value gathered from values_in. Balanced: an item with a huge count spreads over the whole device.
 * ------------------------------------------------------------------------------------------------------- */
typedef struct pscan_expand_desc {
    pscan_type count_type; /* PSCAN_TYPE_U32 or PSCAN_TYPE_U64: the element type of counts */
    pscan_type index_type; /* PSCAN_TYPE_U32 or PSCAN_TYPE_U64: the element type of indices_out and ranks_out */
    size_t value_bytes;    /* 0: no values; 1, 2, 4 or 8: values_in holds n items of that many bytes */
    pscan_algo algo;       /* AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK; OpenCL: REDUCE_THEN_SCAN */
} pscan_expand_desc;

/* Sets *bytes to the temporary storage pscan_expand() needs for this desc, n and capacity (0 is possible). */
pscan_status pscan_expand_temp_bytes(pscan_context *ctx, const pscan_expand_desc *desc, uint64_t n,
                                     uint64_t capacity, size_t *bytes);

/* Expands n items into at most capacity output slots on the context's stream or queue, and writes the total
 * number of slots the counts ask for, counts[0] + ... + counts[n-1], to *total: one uint64_t in device memory
 * (any address), so nothing synchronises. The sum saturates at UINT64_MAX instead of wrapping.
 * Capacity: slots j < min(*total, capacity) are written; nothing at or past capacity ever is. A total larger
 * than capacity is not an error (the status cannot wait for a sum still on the device): the call succeeds,
 * the first capacity slots hold the start of the expansion, and the caller who finds *total > capacity can
 * allocate *total slots and call again. Each of indices_out, ranks_out (capacity elements of index_type) and
 * values_out (capacity items of value_bytes) may be NULL when not wanted (values_out and values_in are ignored
 * when value_bytes == 0, and required otherwise). With index_type u32, n and capacity must not exceed 2^32
 * (PSCAN_ERROR_TOO_LARGE), as neither may exceed 2^48 bytes of any buffer. No output may overlap an input or
 * another output (PSCAN_ERROR_OVERLAP). count_type or index_type other than u32 and u64, and value_bytes
 * other than 0, 1, 2, 4, 8, are PSCAN_ERROR_INVALID_VALUE; a NULL total, or a NULL counts (n > 0), values_in
 * (n > 0) or values_out (capacity > 0) where needed, PSCAN_ERROR_NULL_POINTER. n == 0 writes 0 to *total.
 * temp as for pscan_scan. On any error status nothing is written. OpenCL: AUTO or REDUCE_THEN_SCAN (three
 * passes over tiles, docs/opencl.md).
 * Example: counts = [2 0 3 1], values = [a b c d], capacity 8 -> *total = 6, indices_out = [0 0 2 2 2 3],
 * ranks_out = [0 1 0 1 2 0], values_out = [a a c c c d]; with capacity 4: indices_out = [0 0 2 2], *total = 6. */
pscan_status pscan_expand(pscan_context *ctx, const pscan_expand_desc *desc, const void *counts,
                          const void *values_in, uint64_t n, void *indices_out, void *ranks_out, void *values_out,
                          uint64_t capacity, uint64_t *total, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Histogram: counts of n samples of any type in bins, either evenly spaced over [lower, upper) or between given
 * edges. A sample outside the bins, and every NaN, is counted nowhere.
 *
 * Evenly spaced (edges == NULL): lower < upper, host pointers to one int64_t each for signed integer samples,
 * one uint64_t each for unsigned ones, one sample of the type for f32 and f64 (64-bit bounds let u8 samples
 * use [0, 256), which no u8 could say; the largest i64 or u64 value can never lie below upper, so it is
 * counted only through edges). A sample x counts iff lower <= x < upper, into bin
 *   integers: floor((x - lower) * bins / (upper - lower)), exact: computed in integers wide enough that nothing
 *             overflows or rounds (so u8 samples over [0, 256) in 256 bins put v in bin v, and [0, 10) in 3
 *             bins gives bins {0..3}, {4..6}, {7..9});
 *   floats:   min(bins - 1, floor((x - lower) * s)) where s = bins / (upper - lower), each operation rounded to
 *             nearest in the sample type (f32 in float, f64 in double), so a sample within rounding of a bin
 *             boundary may land one bin off the real-number answer, the same on every backend. lower and
 *             upper must be finite, and upper - lower and s finite (PSCAN_ERROR_INVALID_VALUE otherwise).
 * Given edges (edges != NULL; lower and upper are ignored): a device array of bins + 1 samples of desc->type,
 * ascending (edges[i] <= edges[i + 1]) and free of NaN: bin i holds edges[i] <= x < edges[i + 1], found by
 * binary search. The order is a precondition, not checked: with edges out of order every sample is still counted
 * at most once, in some bin, and nothing outside counts is written.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_HISTOGRAM_MAX_BINS 65536u
/* Adds the new counts to what counts already holds, instead of overwriting it. */
#define PSCAN_HISTOGRAM_ACCUMULATE 1u

typedef struct pscan_histogram_desc {
    pscan_type type;       /* the sample type (and the edges' and bounds' type) */
    pscan_type count_type; /* PSCAN_TYPE_U32 or PSCAN_TYPE_U64: each count wraps modulo 2^32 or 2^64 */
    uint32_t bins;         /* 1 .. PSCAN_HISTOGRAM_MAX_BINS */
    const void *lower;     /* evenly spaced: host pointer to the first bin's lower edge: int64_t, uint64_t or float */
    const void *upper;     /* evenly spaced: host pointer to the last bin's upper edge (excluded), the same type */
    const void *edges;     /* NULL for evenly spaced bins, else bins + 1 ascending samples in device memory */
    unsigned flags;        /* PSCAN_HISTOGRAM_ACCUMULATE, or 0 to overwrite counts */
    pscan_algo algo;       /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK (its one kernel) */
} pscan_histogram_desc;

/* Sets *bytes to the temporary storage pscan_histogram() needs for this desc and n (0 is possible). */
pscan_status pscan_histogram_temp_bytes(pscan_context *ctx, const pscan_histogram_desc *desc, uint64_t n,
                                        size_t *bytes);

/* Counts the n samples into counts, desc->bins elements of desc->count_type in device memory (a host pointer on
 * the CPU backend), aligned to the count's size. Without PSCAN_HISTOGRAM_ACCUMULATE every count is overwritten
 * (n == 0 writes zeros); with it the new counts are added. counts must not overlap the samples or the edges
 * (PSCAN_ERROR_OVERLAP). Errors, in this order, leave counts untouched: NULL ctx or desc
 * (PSCAN_ERROR_NULL_POINTER); a type or algo outside its list, count_type other than u32 and u64, unknown flags,
 * bins 0 or above PSCAN_HISTOGRAM_MAX_BINS (PSCAN_ERROR_INVALID_VALUE); evenly spaced: NULL lower or upper
 * (PSCAN_ERROR_NULL_POINTER), then lower >= upper or the float bounds above (PSCAN_ERROR_INVALID_VALUE); n too
 * large (PSCAN_ERROR_TOO_LARGE); NULL counts, or NULL samples with n > 0 (PSCAN_ERROR_NULL_POINTER); counts not
 * aligned to its count size (PSCAN_ERROR_INVALID_VALUE); overlap; then the algorithm and temp as for pscan_scan. Integer
 * counts do not depend on the order of the samples, so every backend and algorithm gives the same counts (OpenCL:
 * AUTO or REDUCE_THEN_SCAN, a count pass and a merge pass; docs/opencl.md).
 * Example: samples = [3 1 7 0 4 1 6 3] (i32), lower 0, upper 8 (int64_t), 4 bins -> counts = [3 2 1 2];
 *          the same with edges [0 1 2 4 8] -> counts = [1 2 2 3]. */
pscan_status pscan_histogram(pscan_context *ctx, const pscan_histogram_desc *desc, const void *samples, uint64_t n,
                             void *counts, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Sort: a stable LSD radix sort of keys, optionally moving a payload with each key.
 * Order: keys compare through an order-preserving map to unsigned integers of the key's width: unsigned keys
 * as they are, signed keys with the sign bit flipped, floats by IEEE total order with two exceptions: -0.0
 * sorts before +0.0 (they are distinct keys), and every NaN (either sign, any payload) maps to the largest
 * value, so NaNs sort after +inf, in their input order. Only bits [begin_bit, end_bit) of the mapped key take
 * part (end_bit 0 means all of them): keys equal in those bits keep their input order. Descending sorts by
 * the complement of the mapped key: the exact reverse order, still stable (equal keys in input order; NaNs
 * first).
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_SORT_DESCENDING 1u

typedef struct pscan_sort_desc {
    pscan_type type;     /* the key type */
    size_t value_bytes;  /* 0: keys only; 1, 2, 4 or 8: a payload of that many bytes per key, moved with it */
    unsigned flags;      /* PSCAN_SORT_DESCENDING, or 0 for ascending */
    unsigned begin_bit;  /* the lowest bit of the mapped key that counts */
    unsigned end_bit;    /* one past the highest bit that counts; 0 means 8 x the key's size */
    pscan_algo algo;     /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK (Onesweep) */
} pscan_sort_desc;

/* Sets *bytes to the temporary storage pscan_sort() needs for this desc and n (0 is possible). */
pscan_status pscan_sort_temp_bytes(pscan_context *ctx, const pscan_sort_desc *desc, uint64_t n, size_t *bytes);

/* Sorts n keys of keys_in (and their payloads in values_in, when desc->value_bytes > 0) into keys_out (and
 * values_out), out of place: the inputs are left as they were, and the result is always in keys_out and
 * values_out (the intermediate passes ping-pong between keys_out and temp). No output may overlap an input or
 * the other output (PSCAN_ERROR_OVERLAP); values_in and values_out are ignored (may be NULL) when value_bytes
 * is 0, NULL otherwise is PSCAN_ERROR_NULL_POINTER. value_bytes other than 0, 1, 2, 4, 8, flags other than
 * PSCAN_SORT_DESCENDING, or a bit range with begin_bit >= end_bit or end_bit beyond the key are
 * PSCAN_ERROR_INVALID_VALUE. n == 0 is a valid no-op. temp as for pscan_scan (the temp holds one more copy of
 * the keys and payloads). CUDA sorts at most 2^32 - 1 keys (PSCAN_ERROR_TOO_LARGE beyond). OpenCL: AUTO or
 * REDUCE_THEN_SCAN (8-bit digit passes over fixed chunks; docs/opencl.md). On any error status nothing is written.
 * Example: keys = [3 1 7 0 4 1 6 3], values = [0 1 2 3 4 5 6 7] -> keys_out = [0 1 1 3 3 4 6 7],
 * values_out = [3 1 5 0 7 4 6 2]; descending -> keys_out = [7 6 4 3 3 1 1 0], values_out = [2 6 4 0 7 1 5 3]. */
pscan_status pscan_sort(pscan_context *ctx, const pscan_sort_desc *desc, const void *keys_in, const void *values_in,
                        uint64_t n, void *keys_out, void *values_out, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Segmented scan and scan by key: a scan that starts again at every segment, with init in front of each.
 * For a segment [s, e) of the input (physical order; a reverse scan runs each segment from e - 1 down to s):
 *   inclusive:          out[i] = init + in[s] + ... + in[i]           reverse: init + in[e-1] + ... + in[i]
 *   exclusive:          out[i] = init + in[s] + ... + in[i-1]         reverse: init + in[e-1] + ... + in[i+1]
 * (so an exclusive scan writes init at each segment's first item in scan order). Segments are given as
 * X(ENUM_SUFFIX, short_name):
 *   head-flags  n uint8_t, flags[i] != 0 starts a segment at i (item 0 always starts one, whatever flags[0]);
 *   offsets     segment_count + 1 ascending uint64_t (CSR): segment k is [offsets[k], offsets[k + 1]),
 *               offsets[0] == 0, offsets[segment_count] == n; empty segments (equal offsets) are allowed.
 * pscan_scan_by_key takes its segments from the runs of equal consecutive keys instead.
 * ------------------------------------------------------------------------------------------------------- */
#define PSCAN_SEGMENTS_LIST(X) X(HEAD_FLAGS, head-flags) X(OFFSETS, offsets)

typedef enum pscan_segments {
#define PSCAN_SEGMENTS_ENUM_(NAME, name) PSCAN_SEGMENTS_##NAME,
    PSCAN_SEGMENTS_LIST(PSCAN_SEGMENTS_ENUM_)
#undef PSCAN_SEGMENTS_ENUM_
        PSCAN_SEGMENTS_COUNT
} pscan_segments;

/* With PSCAN_SCAN_EXCLUSIVE and PSCAN_SCAN_REVERSE: on a device backend, check the offsets and wait for the
 * verdict, so that bad offsets return PSCAN_ERROR_INVALID_VALUE (the call then synchronises). */
#define PSCAN_SEGSCAN_CHECK_OFFSETS 4u

typedef struct pscan_segscan_desc {
    pscan_type type;
    pscan_op op;
    unsigned flags;          /* PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE | PSCAN_SEGSCAN_CHECK_OFFSETS, or 0 */
    pscan_algo algo;         /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK (single pass) */
    const void *init;        /* host pointer to one element of type, put in front of every segment; NULL: identity */
    pscan_segments segments; /* how the segments argument describes them */
} pscan_segscan_desc;

/* Sets *bytes to the temporary storage pscan_segmented_scan() needs for this desc, n and segment_count. */
pscan_status pscan_segmented_scan_temp_bytes(pscan_context *ctx, const pscan_segscan_desc *desc, uint64_t n,
                                             uint64_t segment_count, size_t *bytes);

/* Scans each segment of in into out. segments is a device array: n head flags (segment_count is then ignored),
 * or segment_count + 1 offsets. out == in scans in place; any other overlap of out with in, or any overlap of
 * out with segments, is PSCAN_ERROR_OVERLAP. n == 0 is valid (in and out may then be NULL). temp as for
 * pscan_scan. Offsets that do not start at 0, decrease, or do not end at n are PSCAN_ERROR_INVALID_VALUE, and
 * a refused call writes nothing:
 *   - checked on the host before anything runs: segment_count == 0 with n > 0; on the CPU backend (host
 *     memory) every offset;
 *   - on CUDA and OpenCL the offsets are in device memory: a short kernel checks them on the device before the
 *     scan, and the scan then writes nothing if they are bad; the call returns before that verdict (it is
 *     asynchronous) unless desc->flags has PSCAN_SEGSCAN_CHECK_OFFSETS, which waits for it and returns the status.
 * OpenCL runs PSCAN_ALGO_REDUCE_THEN_SCAN (AUTO's choice there).
 * Example: in = [3 1 7 0 4 1 6 3], head flags [1 0 0 1 0 1 0 0] (offsets [0 3 5 8], segment_count 3), sum:
 *   inclusive -> [3 4 11 0 4 1 7 10]     exclusive -> [0 3 4 0 0 0 1 7]     reverse inclusive -> [11 8 7 4 4 10 9 3]
 *   inclusive with init 100 -> [103 104 111 100 104 101 107 110] */
pscan_status pscan_segmented_scan(pscan_context *ctx, const pscan_segscan_desc *desc, const void *in, void *out,
                                  uint64_t n, const void *segments, uint64_t segment_count, void *temp,
                                  size_t temp_bytes);

typedef struct pscan_scan_by_key_desc {
    pscan_type key_type; /* any integer type (keys compare equal bit for bit); a float type is INVALID_VALUE */
    pscan_type type;     /* the values' type */
    pscan_op op;
    unsigned flags;      /* PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE, or 0 */
    pscan_algo algo;     /* as for pscan_segscan_desc */
    const void *init;    /* host pointer to one value, put in front of every run of equal keys; NULL: identity */
} pscan_scan_by_key_desc;

/* Sets *bytes to the temporary storage pscan_scan_by_key() needs for this desc and n. */
pscan_status pscan_scan_by_key_temp_bytes(pscan_context *ctx, const pscan_scan_by_key_desc *desc, uint64_t n,
                                          size_t *bytes);

/* A segmented scan of in into out whose segments are the runs of equal consecutive keys (n keys of
 * desc->key_type in device memory). Overlap, n == 0 and temp as for pscan_segmented_scan (out may equal in,
 * never overlap keys).
 * Example: keys = [5 5 5 2 2 5 5 5], in = [3 1 7 0 4 1 6 3], sum -> inclusive [3 4 11 0 4 1 7 10]. */
pscan_status pscan_scan_by_key(pscan_context *ctx, const pscan_scan_by_key_desc *desc, const void *keys,
                               const void *in, void *out, uint64_t n, void *temp, size_t temp_bytes);

/* ---------------------------------------------------------------------------------------------------------
 * Reduce by key and run-length encoding: one result per run of equal consecutive keys (bit for bit).
 * ------------------------------------------------------------------------------------------------------- */
typedef struct pscan_reduce_by_key_desc {
    pscan_type key_type; /* any integer type; a float type is PSCAN_ERROR_INVALID_VALUE */
    pscan_type type;     /* the values' type */
    pscan_op op;
    pscan_algo algo;     /* PSCAN_ALGO_AUTO; CPU: SERIAL or THREADS; CUDA: DECOUPLED_LOOKBACK (single pass) */
    const void *init;    /* host pointer to one value, put in front of every run; NULL: the identity */
} pscan_reduce_by_key_desc;

/* Sets *bytes to the temporary storage pscan_reduce_by_key() needs for this desc and n. */
pscan_status pscan_reduce_by_key_temp_bytes(pscan_context *ctx, const pscan_reduce_by_key_desc *desc, uint64_t n,
                                            size_t *bytes);

/* For the r-th run of equal consecutive keys [s, e) of keys_in: keys_out[r] = keys_in[s] and values_out[r] =
 * init + values_in[s] + ... + values_in[e-1]; *run_count (one uint64_t in device memory, any address) gets the
 * number of runs, so nothing synchronises. keys_out and values_out have room for n items; those from
 * *run_count on are left as they were. No output may overlap an input or another output (PSCAN_ERROR_OVERLAP);
 * NULL pointers as for pscan_select. n == 0 writes 0 to *run_count. temp as for pscan_scan.
 * Example: keys = [5 5 5 2 2 5 5 5], values = [3 1 7 0 4 1 6 3], sum -> keys_out = [5 2 5],
 * values_out = [11 4 10], *run_count = 3. */
pscan_status pscan_reduce_by_key(pscan_context *ctx, const pscan_reduce_by_key_desc *desc, const void *keys_in,
                                 const void *values_in, uint64_t n, void *keys_out, void *values_out,
                                 uint64_t *run_count, void *temp, size_t temp_bytes);

typedef struct pscan_rle_desc {
    pscan_type type; /* any type; elements compare bit for bit (so -0.0 != +0.0, and equal NaNs form a run) */
    pscan_algo algo; /* as for pscan_reduce_by_key_desc */
} pscan_rle_desc;

/* Sets *bytes to the temporary storage pscan_run_length_encode() needs for this desc and n. */
pscan_status pscan_run_length_encode_temp_bytes(pscan_context *ctx, const pscan_rle_desc *desc, uint64_t n,
                                                size_t *bytes);

/* Run-length encodes in: for the r-th run of equal consecutive elements, values_out[r] is its element and
 * lengths_out[r] (uint64_t) its length; *run_count gets the number of runs (device memory, any address).
 * Outputs, overlap, n == 0 and temp as for pscan_reduce_by_key.
 * Example: in = [5 5 5 2 2 5 5 5] -> values_out = [5 2 5], lengths_out = [3 2 3], *run_count = 3. */
pscan_status pscan_run_length_encode(pscan_context *ctx, const pscan_rle_desc *desc, const void *in, uint64_t n,
                                     void *values_out, uint64_t *lengths_out, uint64_t *run_count, void *temp,
                                     size_t temp_bytes);

#ifdef __cplusplus
}
#endif

#endif /* PSCAN_H */
