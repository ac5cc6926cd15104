/*
 * user_op.cu - user operators on CUDA: the engine's own single-pass scan and reduce tile programs
 * (5_decoupled_lookback.cu, reduce.cu on chain/single_pass.cuh), compiled at run time by NVRTC together with the
 * user's C source, loaded with the runtime's library API (cudaLibraryLoadData: no link to libcuda, so the
 * library still loads on a machine without a driver), cached per context by the operator's hash.
 *
 * The program NVRTC sees: the embedded device files (cuda_embedded.c, made by embed_cuh.cmake; under
 * __CUDACC_RTC__ they include no host header), a <stdint.h> of our own (NVRTC has none), the user's source,
 * and a few lines that wrap the user's combine and identity as an operator functor and name the kernels: scan
 * forward, scan reverse, reduce, and the two scans of the larger tier (kernel_names). -default-device makes the
 * user's plain C functions device functions.
 * static_asserts check the user's elem_bytes and elem_align against the type, and the size and alignment of the
 * kernel parameters against the layout built here (NVRTC has no offsetof; the member order is the programs'),
 * so a mismatch is a compile error (PSCAN_ERROR_BUILD_FAILED), never a wrong launch.
 *
 * The vector tile programs need elements that tile a 16-byte vector: 1, 2, 4, 8 or 16 bytes. Every other size up
 * to PSCAN_USER_OP_MAX_BYTES (12, 24, 32, ...) goes to user_wide.cuh's programs, which hold whole elements,
 * warp-striped (ITEMS per thread, loads in the element's own alignment). Tiles: the scan's in two tiers by the
 * call's bytes, as the built-in scan's (32-40 KiB, then 40-52 KiB from PS_SCAN_LARGE_BYTES), the reduce's 64
 * KiB, the wide programs' USER_WIDE_ITEMS x 256 elements at every n.
 *
 * Measured (H100, tools/tune/tune_userop, 2^28 elements, median of 25, 2026-11-23, third session): the 8-byte
 * affine f32 scan (non-commutative) at 0.943 of a copy's bandwidth, a 16-byte 2x2 f32 matrix scan at 0.910
 * (2.9x CUB's DeviceScan with the same operator), an f32 sum written as a user operator at 0.951, the same as the
 * built-in sum; the first call of a new operator (create + first launch) 0.375 s, a second create with the same
 * source finds the cached module in 3 us. docs/bench/h100-userop-tune2.txt.
 *
 * Why 16-byte elements needed their own policy (issue 13): one element per vector, so the warp-serial scan
 * program runs a warp scan (7 shuffles of 4 words, 5 combines) per element, about 11 combines and 28 shuffled
 * words per element in all, and a 2x2 matrix product is 8 multiply-adds: 0.616 of copy. The thread-serial
 * program (BLOCKED in ps_scan_program: each thread scans its 8 consecutive elements, one warp scan per thread)
 * needs about 3.75 combines and 3.5 shuffled words per element; at 4 blocks/SM (64 registers) it runs at 0.911
 * (5 blocks: 0.744, 6: 0.697). 8-byte elements gain from it too (0.902 -> 0.944). PS_USER_SCAN16_* and
 * PS_USER_SCAN8_BLOCKED hold the choice; tools/tune/tune_userop.c times the variants (docs/tuning.md).
 *
 * Compile time: NVRTC's time goes to code generation for each kernel it is asked for (NVVM and ptxas; the front
 * end is under a tenth), so the kernels are compiled as a program each on a thread each (PS_USER_COMPILE_PARALLEL:
 * 0.56 s against 1.04 s for one program of three kernels on the H100 machine) and only the headers of the size's
 * programs are included.
 */
#include <nvrtc.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "chain/single_pass.cuh"
#include "cuda_backend.h"
#include "scan_tiers.h"

extern "C" const char *const ps_cuda_embedded_names[];
extern "C" const char *const ps_cuda_embedded_sources[];
extern "C" const size_t ps_cuda_embedded_count;

/* The policies compiled for user operators: the built-in scan's tiers (scan_tiers.h) but where tuned here, the
 * reduce's large-call tile (reduce.cu). */
/* The scan of 16-byte elements (one element per vector: a warp scan per element unless BLOCKED, see
 * ps_scan_program), separately, so that tools/tune/tune_userop.c can sweep it: vectors per thread, blocks per
 * SM, cp.async into the parking slots, thread-serial (BLOCKED). Defaults: the H100 run of the header, and 10
 * vectors a thread from the 2026-11-26 runs on both GPUs (below). */
#ifndef PS_USER_SCAN16_VECS
/* 40 KiB tiles: 2x2 f32 matrices at 2^28 0.806 -> 0.840 of copy on the H200, 0.908 -> 0.920 on the H100 (2^24:
 * 0.787 -> 0.804, 0.885 -> 0.902; tune_userop, 2026-11-26, docs/bench/h*-userop-large.txt) */
#define PS_USER_SCAN16_VECS 10
#endif
#ifndef PS_USER_SCAN16_MIN_BLOCKS
#define PS_USER_SCAN16_MIN_BLOCKS 4
#endif
#ifndef PS_USER_SCAN16_ASYNC
#define PS_USER_SCAN16_ASYNC 1
#endif
#ifndef PS_USER_SCAN16_BLOCKED
#define PS_USER_SCAN16_BLOCKED 1
#endif
/* 8-byte elements: thread-serial too (H100, affine f32 at 2^28: 0.944 of copy against 0.902 warp-serial) */
#ifndef PS_USER_SCAN8_BLOCKED
#define PS_USER_SCAN8_BLOCKED 1
#endif
#define USER_REDUCE_VECS 16
#define USER_REDUCE_MIN_BLOCKS 3
#define USER_THREADS 256
/* Elements per thread and blocks per SM of the wide programs (user_wide.cuh): up to 32 KiB tiles of 32-byte
 * elements, the items and their prefixes in registers. Not tuned on a GPU yet. */
#define USER_WIDE_ITEMS 4
#define USER_WIDE_MIN_BLOCKS 2

/* NVRTC has no C library headers: the fixed-width types the tile programs use, and memcpy is a builtin. */
static const char nvrtc_stdint[] = "typedef signed char int8_t; typedef unsigned char uint8_t;\n"
                                   "typedef short int16_t; typedef unsigned short uint16_t;\n"
                                   "typedef int int32_t; typedef unsigned int uint32_t;\n"
                                   "typedef long long int64_t; typedef unsigned long long uint64_t;\n"
                                   "typedef unsigned long long uintptr_t;\n";
static const char nvrtc_string[] = "/* memcpy is an NVRTC builtin */\n";

/* ---- kernel parameters, laid out as the device structs are (checked by static_asserts in the program) ---- */

static size_t align_up(size_t x, size_t a) { return (x + a - 1) / a * a; }

/* ps_scan_program::params: in, out, n, tiles, exclusive, aligned, init, then init_device and total_out (two
 * pointers of the out-of-core path) and stagger_row (a uint32_t, the chain's first-wave stagger), all left zero
 * here by the memset. */
static size_t scan_init_offset(size_t align) { return align_up(36, align); }
static size_t scan_params_bytes(size_t bytes, size_t align) {
    return align_up(align_up(scan_init_offset(align) + bytes, 8) + 2 * sizeof(void *) + sizeof(uint32_t),
                    align > 8 ? align : 8);
}
/* ps_reduce_program::params: in, result, n, tiles, aligned, init. */
static size_t reduce_init_offset(size_t align) { return align_up(32, align); }
static size_t reduce_params_bytes(size_t bytes, size_t align) {
    return align_up(reduce_init_offset(align) + bytes, align > 8 ? align : 8);
}

/* Whether elements of this size tile a 16-byte vector (the vector programs); else the wide ones. */
static int user_size_vectors(size_t bytes) { return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8 || bytes == 16; }

/* ---- the scan policy of the vector programs, per element size (index log2 bytes) ---------------------- */

struct ps_user_scan_policy {
    int vecs, min_blocks, async, blocked;
};

/* The shared memory of a vector scan program (ps_scan_program::smem: the parked tile, then 8 warp totals; the
 * program text checks it), and what of it a launch passes as dynamic: all of it past the 48 KiB of static
 * memory, the chain driver's rule (chain/single_pass.cuh). */
static size_t user_scan_smem_bytes(size_t bytes, ps_user_scan_policy scan) {
    return align_up((size_t)scan.vecs * USER_THREADS * 16 + 8 * bytes, 16);
}
static size_t user_scan_dynamic_bytes(size_t bytes, ps_user_scan_policy scan) {
    if (!user_size_vectors(bytes)) return 0;
    const size_t smem = user_scan_smem_bytes(bytes, scan);
    return smem > PS_CHAIN_STATIC_SMEM_MAX ? smem : 0;
}

/* A scan's two tiers, as the built-in scan's (scan_tiers.h): the calls below PS_SCAN_LARGE_BYTES (tier 0) and from
 * it (tier 1), whose larger tiles pay the look-back's wait once for more bytes but spread a smaller call over too
 * few blocks. (The built-in scan's third tier, 4 KiB tiles up to 256 KiB, is not compiled for user operators.) */
struct ps_user_scan_tiers {
    ps_user_scan_policy tier[2];
};
#define USER_SCAN_TIER0(bytes, blocked) {PS_SCAN_VECS(bytes), PS_SCAN_MIN_BLOCKS(bytes), 1, blocked}
#define USER_SCAN_TIER1(bytes, blocked) {(bytes) >= 2 ? PS_SCAN_LARGE_VECS(bytes) : 10, (bytes) >= 2 ? 4 : 5, 1, blocked}
/* Tier 1: the built-in scan's large tiles without its held vectors (PS_SCAN_LARGE_HELD; not timed for user
 * operators): 52 KiB at 4 blocks/SM, 40 KiB at 5 for 1 byte (the built-in u8 scan went to 48 KiB at 4);
 * thread-serial (BLOCKED) for 8 and 16 bytes, whose odd 13 vectors a thread need no swizzle (nineteenth session).
 * H200, 2^28, of copy (tune_userop, docs/bench/h200-userop-odd-28.txt, -24.txt): affine f32 pairs 0.901 at the
 * earlier 64 KiB x 3 blocks/SM -> 0.923 at 52 KiB x 4 (2^24: 0.859 -> 0.846), 2x2 f32 matrices 0.885 -> 0.898 (2^24:
 * 0.855 -> 0.873); 44 KiB x 5 0.916 / 0.754, 36 KiB x 6 (affine) 0.898. What decides it is the bytes an SM holds
 * while its tiles wait for their prefixes: 192 KiB at 64 x 3 against 208 KiB here, with the thread-serial program's
 * 64 registers at 4 blocks. The affine pair warp by warp (striped) at 64 KiB x 3 ran 0.918 the same day but its
 * kernel takes NVRTC about 1 s against 0.54 s (a first call of 1.16 s; issue 13: under 1 s). Past 48 KiB the tile
 * is in dynamic shared memory. */
static const ps_user_scan_tiers user_scan_default[5] = {
    {{USER_SCAN_TIER0(1, 0), USER_SCAN_TIER1(1, 0)}},
    {{USER_SCAN_TIER0(2, 0), USER_SCAN_TIER1(2, 0)}},
    {{USER_SCAN_TIER0(4, 0), USER_SCAN_TIER1(4, 0)}},
    {{USER_SCAN_TIER0(8, PS_USER_SCAN8_BLOCKED), USER_SCAN_TIER1(8, PS_USER_SCAN8_BLOCKED)}},
    {{{PS_USER_SCAN16_VECS, PS_USER_SCAN16_MIN_BLOCKS, PS_USER_SCAN16_ASYNC, PS_USER_SCAN16_BLOCKED},
      USER_SCAN_TIER1(16, PS_USER_SCAN16_BLOCKED)}}};
/* What the next compile uses (tools/tune/tune_userop.c changes it through ps_cuda_user_tune_scan). */
static ps_user_scan_tiers user_scan_now[5] = {user_scan_default[0], user_scan_default[1], user_scan_default[2],
                                              user_scan_default[3], user_scan_default[4]};
/* One extra NVRTC option for the next compiles, or NULL (the tuning tool's -Xptxas=-v). */
static const char *user_extra_option;

static int user_size_log2(size_t bytes) { return bytes == 16 ? 4 : bytes == 8 ? 3 : bytes == 4 ? 2 : bytes == 2; }

/* Tuning only (tools/tune/tune_userop.c; not exported from libpscan.so, not thread-safe): the scan policy the
 * next operators of elem_bytes (1, 2, 4, 8 or 16) are compiled with, for both tiers (a variant is timed at every
 * n); vecs 0 puts the defaults back. Each
 * compiled module keeps the policy it was built with (tiles and temp follow it), and the context's cache tells
 * policies apart. extra_option: one more NVRTC option (e.g. "-Xptxas=-v"; its report lands in the log). */
extern "C" void ps_cuda_user_tune_scan(size_t elem_bytes, int vecs, int min_blocks, int async, int blocked) {
    if (!user_size_vectors(elem_bytes)) return;
    const int i = user_size_log2(elem_bytes);
    if (vecs <= 0) {
        user_scan_now[i] = user_scan_default[i];
        return;
    }
    for (int t = 0; t < 2; t++) {
        ps_user_scan_policy *q = &user_scan_now[i].tier[t];
        q->vecs = vecs, q->min_blocks = min_blocks, q->async = async != 0, q->blocked = blocked != 0;
    }
}
extern "C" void ps_cuda_user_tune_option(const char *extra_option) { user_extra_option = extra_option; }

static ps_user_scan_tiers user_scan_policy(size_t bytes) {
    static const ps_user_scan_tiers none = {{{0, 0, 0, 0}, {0, 0, 0, 0}}};
    return user_size_vectors(bytes) ? user_scan_now[user_size_log2(bytes)] : none;
}

/* ---- the program ------------------------------------------------------------------------------------------ */

/* The kernels of a module: k = 0, 1 the scans forward and reverse of tier 0, 2 the reduce, 3 and 4 the scans of
 * tier 1 (vector programs only: USER_KERNELS_WIDE for the wide ones, whose one tier is 0). */
#define USER_KERNELS 5
#define USER_KERNELS_ALL 31u
#define USER_KERNELS_WIDE 7u
static const char *const kernel_names[USER_KERNELS] = {
    "ps_chain_single_pass_kernel<ps_user_scan_forward, %d>", "ps_chain_single_pass_kernel<ps_user_scan_reverse, %d>",
    "ps_chain_single_pass_kernel<ps_user_reduce, %d>", "ps_chain_single_pass_kernel<ps_user_scan_forward_large, %d>",
    "ps_chain_single_pass_kernel<ps_user_scan_reverse_large, %d>"};
static unsigned user_kernels_of(size_t bytes) { return user_size_vectors(bytes) ? USER_KERNELS_ALL : USER_KERNELS_WIDE; }

/* The whole program text (malloc'd) for an operator, or NULL when out of memory. */
static char *program_text(const char *source, const char *type_name, const char *combine_name, size_t bytes,
                          size_t align, const unsigned char *identity, ps_user_scan_tiers scan) {
    char words[256] = "";
    for (size_t i = 0; i < (bytes + 3) / 4; i++) {
        unsigned w = 0;
        for (size_t j = 0; j < 4 && 4 * i + j < bytes; j++) w |= (unsigned)identity[4 * i + j] << (8 * j);
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s0x%08xu", i ? ", " : "", w);
    }
    const char *format =
        "#define PS_TUNE_NO_LIBRARY_ENTRY 1\n"
        "%s"
        "#line 1 \"user_source\"\n"
        "%s\n"
        "#line 1 \"pscan_user_op\"\n"
        "typedef %s ps_user_t;\n"
        "static_assert(sizeof(ps_user_t) == %zu, \"elem_bytes is not sizeof(%s)\");\n"
        "static_assert(alignof(ps_user_t) == %zu, \"elem_align is not alignof(%s)\");\n"
        "struct ps_user_op {\n"
        "    template <class T> static __device__ __forceinline__ T combine(T a, T b) { return ::%s(a, b); }\n"
        "    template <class T> static __device__ __forceinline__ T identity() {\n"
        "        const unsigned int w[] = {%s};\n"
        "        T t;\n"
        "        memcpy(&t, w, sizeof t);\n"
        "        return t;\n"
        "    }\n"
        "};\n"
        "%s"
        "static_assert(sizeof(ps_user_scan_forward::params) == %zu, \"scan params size\");\n"
        "static_assert(alignof(ps_user_scan_forward::params) == %zu, \"scan params alignment\");\n"
        "static_assert(sizeof(ps_user_reduce::params) == %zu, \"reduce params size\");\n"
        "static_assert(alignof(ps_user_reduce::params) == %zu, \"reduce params alignment\");\n"
        "static_assert(PS_CHAIN_LANE_ENTRIES == %d, \"look-back entries\");\n";
    /* the programs: the vector ones for sizes that tile 16 bytes (two tiers of scans), else the wide ones */
    char programs[1024] = "";
    if (user_size_vectors(bytes)) {
        static const char *const suffix[2] = {"", "_large"};
        for (int t = 0; t < 2; t++) {
            const ps_user_scan_policy q = scan.tier[t];
            const char *async = q.async ? "true" : "false", *blocked = q.blocked ? "true" : "false";
            /* the launch passes the dynamic part of the shared memory by this size (user_scan_dynamic_bytes) */
            snprintf(programs + strlen(programs), sizeof programs - strlen(programs),
                     "typedef ps_scan_program<ps_user_t, ps_user_op, false, %d, %d, %s, %s> ps_user_scan_forward%s;\n"
                     "typedef ps_scan_program<ps_user_t, ps_user_op, true, %d, %d, %s, %s> ps_user_scan_reverse%s;\n"
                     "static_assert(sizeof(ps_user_scan_forward%s::smem) == %zu, \"scan shared memory size\");\n",
                     q.vecs, q.min_blocks, async, blocked, suffix[t], q.vecs, q.min_blocks, async, blocked, suffix[t],
                     suffix[t], user_scan_smem_bytes(bytes, q));
        }
        snprintf(programs + strlen(programs), sizeof programs - strlen(programs),
                 "typedef ps_reduce_program<ps_user_t, ps_user_op, %d, %d> ps_user_reduce;\n", USER_REDUCE_VECS,
                 USER_REDUCE_MIN_BLOCKS);
    } else
        snprintf(programs, sizeof programs,
                 "typedef ps_user_wide_program<ps_user_t, ps_user_op, false, false, %d, %d> ps_user_scan_forward;\n"
                 "typedef ps_user_wide_program<ps_user_t, ps_user_op, true, false, %d, %d> ps_user_scan_reverse;\n"
                 "typedef ps_user_wide_program<ps_user_t, ps_user_op, false, true, %d, %d> ps_user_reduce;\n",
                 USER_WIDE_ITEMS, USER_WIDE_MIN_BLOCKS, USER_WIDE_ITEMS, USER_WIDE_MIN_BLOCKS, USER_WIDE_ITEMS,
                 USER_WIDE_MIN_BLOCKS);
    const size_t len = strlen(format) + strlen(source) + 2 * strlen(type_name) + strlen(combine_name) +
                       strlen(words) + strlen(programs) + 640;
    char *text = (char *)malloc(len);
    if (!text) return NULL;
    /* only the programs this size uses: less for NVRTC's front end to read */
    const char *includes = user_size_vectors(bytes) ? "#include \"5_decoupled_lookback.cu\"\n#include \"reduce.cu\"\n"
                                                    : "#include \"user_wide.cuh\"\n";
    snprintf(text, len, format, includes, source, type_name, bytes, type_name, align, type_name, combine_name, words, programs,
             scan_params_bytes(bytes, align), align > 8 ? align : (size_t)8,
             reduce_params_bytes(bytes, align), align > 8 ? align : (size_t)8, PS_CHAIN_LANE_ENTRIES);
    return text;
}

/* Compiles an operator's program for sm_<arch> into a cubin, with the kernels k of the mask kernels (bit k:
 * kernel_names[k]) only: NVRTC generates code only for the kernels named. Needs no GPU (the tests call it on any
 * machine). On success *cubin (malloc'd) and lowered[k] (the mangled names of the kernels compiled, each
 * malloc'd; NULL for the others) are set; on a compile error *log (malloc'd, may be set on success too) has
 * NVRTC's log and the status is PSCAN_ERROR_BUILD_FAILED. */
static pscan_status user_compile(const char *source, const char *type_name, const char *combine_name, size_t bytes,
                                 size_t align, const unsigned char *identity, int arch, ps_user_scan_tiers scan,
                                 unsigned kernels, char **cubin, size_t *cubin_bytes, char *lowered[USER_KERNELS],
                                 char **log) {
    *cubin = NULL;
    *log = NULL;
    for (int k = 0; k < USER_KERNELS; k++) lowered[k] = NULL;
    char *text = program_text(source, type_name, combine_name, bytes, align, identity, scan);
    if (!text) return PSCAN_ERROR_OUT_OF_MEMORY;
    const size_t headers = ps_cuda_embedded_count + 2;
    const char **contents = (const char **)malloc(headers * sizeof *contents);
    const char **names = (const char **)malloc(headers * sizeof *names);
    nvrtcProgram prog = NULL;
    pscan_status status = PSCAN_ERROR_OUT_OF_MEMORY;
    char expr[USER_KERNELS][128];
    if (!contents || !names) goto done;
    for (size_t i = 0; i < ps_cuda_embedded_count; i++) contents[i] = ps_cuda_embedded_sources[i], names[i] = ps_cuda_embedded_names[i];
    contents[headers - 2] = nvrtc_stdint, names[headers - 2] = "stdint.h";
    contents[headers - 1] = nvrtc_string, names[headers - 1] = "string.h";
    status = PSCAN_ERROR_BACKEND;
    if (nvrtcCreateProgram(&prog, text, "pscan_user_op.cu", (int)headers, contents, names) != NVRTC_SUCCESS) goto done;
    for (int k = 0; k < USER_KERNELS; k++) {
        snprintf(expr[k], sizeof expr[k], kernel_names[k], PS_CHAIN_LANE_ENTRIES);
        if ((kernels >> k & 1u) && nvrtcAddNameExpression(prog, expr[k]) != NVRTC_SUCCESS) goto done;
    }
    {
        char arch_option[64];
        snprintf(arch_option, sizeof arch_option, "--gpu-architecture=sm_%d", arch);
        const char *options[] = {arch_option, "--std=c++17", "-default-device", "--extra-device-vectorization",
                                 user_extra_option};
        const int count = (int)(sizeof options / sizeof options[0]) - (user_extra_option ? 0 : 1);
        const nvrtcResult compiled = nvrtcCompileProgram(prog, count, options);
        size_t log_bytes = 0;
        if (nvrtcGetProgramLogSize(prog, &log_bytes) == NVRTC_SUCCESS && log_bytes > 0 &&
            (*log = (char *)malloc(log_bytes + 1)) != NULL) {
            (*log)[0] = '\0';
            nvrtcGetProgramLog(prog, *log);
        }
        if (compiled == NVRTC_ERROR_COMPILATION) {
            status = PSCAN_ERROR_BUILD_FAILED;
            goto done;
        }
        if (compiled != NVRTC_SUCCESS) goto done;
    }
    if (nvrtcGetCUBINSize(prog, cubin_bytes) != NVRTC_SUCCESS || !(*cubin = (char *)malloc(*cubin_bytes)) ||
        nvrtcGetCUBIN(prog, *cubin) != NVRTC_SUCCESS)
        goto done;
    for (int k = 0; k < USER_KERNELS; k++) {
        const char *name = NULL;
        if (!(kernels >> k & 1u)) continue;
        if (nvrtcGetLoweredName(prog, expr[k], &name) != NVRTC_SUCCESS || !(lowered[k] = strdup(name))) goto done;
    }
    status = PSCAN_SUCCESS;
done:
    if (status != PSCAN_SUCCESS) {
        free(*cubin);
        *cubin = NULL;
        for (int k = 0; k < USER_KERNELS; k++) free(lowered[k]), lowered[k] = NULL;
    }
    if (prog) nvrtcDestroyProgram(&prog);
    free(contents);
    free(names);
    free(text);
    return status;
}

extern "C" pscan_status ps_cuda_user_compile(const char *source, const char *type_name, const char *combine_name,
                                             size_t bytes, size_t align, const unsigned char *identity, int arch,
                                             char **cubin, size_t *cubin_bytes, char *lowered[3], char **log) {
    /* every kernel of the size, so that the larger tier's code generation is checked too (without a GPU); the
     * names of the first three are returned */
    char *all[USER_KERNELS];
    const pscan_status s = user_compile(source, type_name, combine_name, bytes, align, identity, arch,
                                        user_scan_policy(bytes), user_kernels_of(bytes), cubin, cubin_bytes, all, log);
    for (int k = 0; k < USER_KERNELS; k++) {
        if (k < 3)
            lowered[k] = all[k];
        else
            free(all[k]);
    }
    return s;
}

/* ---- the kernels compiled side by side ------------------------------------------------------------------ */

/* Each kernel is compiled by a program of its own on a thread of its own: NVRTC spends most of a compile
 * generating code for each kernel it is asked for (one kernel of three alone: about a third of the time), and
 * separate programs may be compiled concurrently, so the wall time is about the slowest kernel's on a machine
 * with a core a kernel (the front end reads the source once a kernel; on one core the total is about the same
 * as one program's). PS_USER_COMPILE_PARALLEL 0: one program with every kernel. On the H100 machine's 16 cores
 * the first call of a new operator fell from 0.86 s to 0.38 s with three kernels, and the three modules passed
 * test_userop; five since the fifteenth session (two tiers of scans). */
#ifndef PS_USER_COMPILE_PARALLEL
#define PS_USER_COMPILE_PARALLEL 1
#endif

struct user_compile_job {
    const char *source, *type_name, *combine_name;
    size_t bytes, align;
    const unsigned char *identity;
    int arch;
    ps_user_scan_tiers scan;
    unsigned kernels;
    pscan_status status;
    char *cubin, *log, *lowered[USER_KERNELS];
    size_t cubin_bytes;
};

static void *user_compile_run(void *arg) {
    user_compile_job *j = (user_compile_job *)arg;
    if (!j->kernels) { /* a kernel this size has none of (the wide programs' tier 1) */
        j->status = PSCAN_SUCCESS;
        return NULL;
    }
    j->status = user_compile(j->source, j->type_name, j->combine_name, j->bytes, j->align, j->identity, j->arch,
                             j->scan, j->kernels, &j->cubin, &j->cubin_bytes, j->lowered, &j->log);
    return NULL;
}

/* Compiles the jobs (PS_USER_COMPILE_PARALLEL: one per kernel, each on a thread; else one with every kernel);
 * returns how many jobs there are (a job with no kernel of this size compiles nothing and has no cubin). A
 * thread that cannot start runs its job here. */
static int user_compile_all(user_compile_job jobs[USER_KERNELS], const user_compile_job *what, int parallel) {
    const int count = parallel ? USER_KERNELS : 1;
    const unsigned mask = user_kernels_of(what->bytes);
    pthread_t threads[USER_KERNELS];
    int started[USER_KERNELS] = {0};
    for (int k = 0; k < count; k++) {
        jobs[k] = *what;
        jobs[k].kernels = count == 1 ? mask : mask & (1u << k);
    }
    for (int k = 1; k < count; k++) started[k] = pthread_create(&threads[k], NULL, user_compile_run, &jobs[k]) == 0;
    user_compile_run(&jobs[0]);
    for (int k = 1; k < count; k++) {
        if (started[k])
            pthread_join(threads[k], NULL);
        else
            user_compile_run(&jobs[k]);
    }
    return count;
}

static void user_compile_free(user_compile_job jobs[USER_KERNELS], int count) {
    for (int j = 0; j < count; j++) {
        free(jobs[j].cubin);
        free(jobs[j].log);
        for (int k = 0; k < USER_KERNELS; k++) free(jobs[j].lowered[k]), jobs[j].lowered[k] = NULL;
        jobs[j].cubin = jobs[j].log = NULL;
    }
}

/* Tuning (tools/tune/tune_userop.c --compile): what ps_cuda_operator_build compiles, with parallel 1 or 0 (a
 * program a kernel, each on a thread, or one), without loading it; the first status that is not success. */
extern "C" pscan_status ps_cuda_user_compile_jobs(const char *source, const char *type_name, const char *combine_name,
                                                  size_t bytes, size_t align, const unsigned char *identity, int arch,
                                                  int parallel) {
    user_compile_job what, jobs[USER_KERNELS];
    memset(&what, 0, sizeof what);
    what.source = source, what.type_name = type_name, what.combine_name = combine_name;
    what.bytes = bytes, what.align = align, what.identity = identity, what.arch = arch;
    what.scan = user_scan_policy(bytes);
    const int count = user_compile_all(jobs, &what, parallel);
    pscan_status s = PSCAN_SUCCESS;
    for (int j = 0; j < count; j++)
        if (s == PSCAN_SUCCESS) s = jobs[j].status;
    user_compile_free(jobs, count);
    return s;
}

/* ---- the per-context cache of modules ------------------------------------------------------------------- */

struct ps_cuda_user_module {
    uint64_t hash;
    cudaLibrary_t library[USER_KERNELS]; /* one per compile (PS_USER_COMPILE_PARALLEL), else library[0]; NULL unused */
    cudaKernel_t kernels[USER_KERNELS];  /* kernel_names' order; NULL where the size has none */
    size_t elem_bytes, elem_align;
    ps_user_scan_tiers scan; /* what the vector scan programs were compiled with (tiles follow it) */
    ps_cuda_user_module *next;
};

void ps_cuda_user_cache_destroy(ps_cuda_user_module *cache) {
    while (cache) {
        ps_cuda_user_module *next = cache->next;
        for (int j = 0; j < USER_KERNELS; j++)
            if (cache->library[j]) cudaLibraryUnload(cache->library[j]);
        free(cache);
        cache = next;
    }
}

pscan_status ps_cuda_operator_build(pscan_context *ctx, ps_cuda_user_module **cache, const ps_cuda_device *dev,
                                    pscan_operator *op) {
    if (!op->source) return PSCAN_ERROR_UNSUPPORTED_OPERATOR;
    const ps_user_scan_tiers scan = user_scan_policy(op->elem_bytes);
    for (ps_cuda_user_module *m = *cache; m; m = m->next) {
        if (m->hash == op->hash && m->elem_bytes == op->elem_bytes && m->elem_align == op->elem_align &&
            memcmp(&m->scan, &scan, sizeof scan) == 0) {
            op->device = m; /* compiled before: nothing to do */
            return PSCAN_SUCCESS;
        }
    }
    int major = 0, minor = 0;
    cudaError_t err;
    if ((err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev->device)) != cudaSuccess ||
        (err = cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev->device)) != cudaSuccess) {
        ctx->native_error = (long long)err;
        return PSCAN_ERROR_BACKEND;
    }
    user_compile_job what, jobs[USER_KERNELS];
    memset(&what, 0, sizeof what);
    what.source = op->source, what.type_name = op->type_name, what.combine_name = op->combine_name;
    what.bytes = op->elem_bytes, what.align = op->elem_align, what.identity = op->identity.bytes;
    what.arch = 10 * major + minor, what.scan = scan;
    const int count = user_compile_all(jobs, &what, PS_USER_COMPILE_PARALLEL);
    /* a compile error wins (its log goes to the context), then any other failure */
    pscan_status s = PSCAN_SUCCESS;
    for (int j = 0; j < count; j++) {
        if (jobs[j].status == PSCAN_ERROR_BUILD_FAILED && s != PSCAN_ERROR_BUILD_FAILED) {
            s = PSCAN_ERROR_BUILD_FAILED;
            ps_core_set_build_log(ctx, jobs[j].log ? jobs[j].log : "NVRTC reported no log");
        } else if (jobs[j].status != PSCAN_SUCCESS && s == PSCAN_SUCCESS) {
            s = jobs[j].status;
        }
    }

    ps_cuda_user_module *m = s == PSCAN_SUCCESS ? (ps_cuda_user_module *)calloc(1, sizeof *m) : NULL;
    cudaError_t r = cudaErrorMemoryAllocation;
    if (m) {
        r = cudaSuccess;
        for (int j = 0; j < count && r == cudaSuccess; j++) {
            if (!jobs[j].cubin) continue; /* no kernel of this size */
            r = cudaLibraryLoadData(&m->library[j], jobs[j].cubin, NULL, NULL, 0, NULL, NULL, 0);
            for (int k = 0; k < USER_KERNELS && r == cudaSuccess; k++) {
                if (!jobs[j].lowered[k]) continue;
                r = cudaLibraryGetKernel(&m->kernels[k], m->library[j], jobs[j].lowered[k]);
                /* the tiles are parked in shared memory: ask for the largest carveout, as the chain driver does,
                 * and for a scan tile past 48 KiB its dynamic shared memory */
                if (r == cudaSuccess)
                    r = cudaFuncSetAttribute((const void *)m->kernels[k],
                                             cudaFuncAttributePreferredSharedMemoryCarveout,
                                             (int)cudaSharedmemCarveoutMaxShared);
                const size_t dynamic = k == 2 ? 0 : user_scan_dynamic_bytes(op->elem_bytes, scan.tier[k > 2]);
                if (r == cudaSuccess && dynamic)
                    r = cudaFuncSetAttribute((const void *)m->kernels[k], cudaFuncAttributeMaxDynamicSharedMemorySize,
                                             (int)dynamic);
            }
        }
    }
    user_compile_free(jobs, count);
    if (s != PSCAN_SUCCESS) return s;
    if (r != cudaSuccess) {
        for (int j = 0; m && j < USER_KERNELS; j++)
            if (m->library[j]) cudaLibraryUnload(m->library[j]);
        free(m);
        cudaGetLastError();
        ctx->native_error = (long long)r;
        return r == cudaErrorMemoryAllocation ? PSCAN_ERROR_OUT_OF_MEMORY : PSCAN_ERROR_BACKEND;
    }
    m->hash = op->hash;
    m->elem_bytes = op->elem_bytes;
    m->elem_align = op->elem_align;
    m->scan = scan;
    m->next = *cache;
    *cache = m;
    op->device = m;
    return PSCAN_SUCCESS;
}

/* ---- plan and run ----------------------------------------------------------------------------------------- */

/* Whether a call takes the scan's tier 1 (its larger tiles): a vector program's scan of PS_SCAN_LARGE_BYTES or
 * more. */
static int user_large(const ps_request *req) {
    return req->prim == PS_PRIM_SCAN && user_size_vectors(req->elem_bytes) &&
           req->n * req->elem_bytes >= PS_SCAN_LARGE_BYTES(req->elem_bytes);
}

static uint64_t user_tile(const ps_request *req) {
    if (!user_size_vectors(req->elem_bytes)) return (uint64_t)USER_WIDE_ITEMS * USER_THREADS;
    const uint64_t vec = 16 / req->elem_bytes;
    const ps_cuda_user_module *m = (const ps_cuda_user_module *)req->user_op->device;
    return vec * USER_THREADS *
           (req->prim == PS_PRIM_SCAN ? (uint64_t)m->scan.tier[user_large(req)].vecs : USER_REDUCE_VECS);
}

static uint64_t user_tiles(const ps_request *req) {
    return req->n == 0 ? 1 : (req->n + user_tile(req) - 1) / user_tile(req);
}

/* Temp of the chain for tiles of a carry of elem_bytes (tile_state.cuh: 2 entries per tile). An entry has an even
 * number of words of 4 carry bytes each, so every size in (8(k-1), 8k] has the entry of 8k bytes. */
template <int S> struct user_blob {
    unsigned char b[S];
};
static size_t user_temp_bytes(size_t elem_bytes, uint64_t tiles) {
    switch ((elem_bytes + 7) / 8) {
    case 1: return ps_chain_temp_bytes<user_blob<8> >(tiles);
    case 2: return ps_chain_temp_bytes<user_blob<16> >(tiles);
    case 3: return ps_chain_temp_bytes<user_blob<24> >(tiles);
    default: return ps_chain_temp_bytes<user_blob<32> >(tiles);
    }
}

pscan_status ps_cuda_user_plan(const ps_request *req, const ps_cuda_device *dev, size_t *bytes) {
    (void)dev;
    /* only the single-pass chain keeps every combine in order; the progression may not */
    if (req->algo != PSCAN_ALGO_DECOUPLED_LOOKBACK) return PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    const uint64_t tiles = user_tiles(req);
    if (tiles > PS_CHAIN_MAX_TILES) return PSCAN_ERROR_TOO_LARGE;
    *bytes = user_temp_bytes(req->elem_bytes, tiles);
    return PSCAN_SUCCESS;
}

cudaError_t ps_cuda_user_run(const ps_request *req, const ps_cuda_device *dev) {
    const ps_cuda_user_module *m = (const ps_cuda_user_module *)req->user_op->device;
    const size_t es = req->elem_bytes, align = req->user_op->elem_align;
    const uint32_t tiles = (uint32_t)user_tiles(req);
    /* params: the same bytes as the device struct (the program's static_asserts hold the offsets) */
    union {
        unsigned char b[128];
        unsigned long long align_;
    } params;
    memset(&params, 0, sizeof params);
    const uint64_t n = req->n;
    memcpy(params.b + 0, &req->in, sizeof(void *));
    memcpy(params.b + 8, &req->out, sizeof(void *));
    memcpy(params.b + 16, &n, 8);
    memcpy(params.b + 24, &tiles, 4);
    int kernel;
    if (req->prim == PS_PRIM_SCAN) {
        const int exclusive = req->exclusive, aligned = (((uintptr_t)req->in | (uintptr_t)req->out) & 15u) == 0;
        memcpy(params.b + 28, &exclusive, 4);
        memcpy(params.b + 32, &aligned, 4);
        memcpy(params.b + scan_init_offset(align), req->init.bytes, es);
        kernel = (req->reverse ? 1 : 0) + (user_large(req) ? 3 : 0);
    } else {
        const int aligned = ((uintptr_t)req->in & 15u) == 0;
        memcpy(params.b + 28, &aligned, 4);
        memcpy(params.b + reduce_init_offset(align), req->init.bytes, es);
        kernel = 2;
    }
    /* the tile state, as ps_chain_single_pass sets it up: a fresh epoch per launch (cleared first under capture) */
    ps_tile_state<user_blob<16> > ts;
    const cudaError_t fresh = ps_chain_fresh_state(req->temp, user_temp_bytes(req->elem_bytes, tiles), dev->stream, &ts);
    if (fresh != cudaSuccess) return fresh;
    void *args[3] = {params.b, &ts, (void *)&tiles};
    /* a cudaKernel_t launches through cudaLaunchKernel like a function pointer */
    const size_t dynamic = kernel == 2 ? 0 : user_scan_dynamic_bytes(es, m->scan.tier[kernel > 2]);
    cudaError_t err = cudaLaunchKernel((const void *)m->kernels[kernel], dim3(tiles), dim3(USER_THREADS), args,
                                       dynamic, dev->stream);
    return err != cudaSuccess ? err : cudaGetLastError();
}
