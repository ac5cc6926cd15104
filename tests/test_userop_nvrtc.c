/*
 * test_userop_nvrtc.c - the CUDA user-operator program (src/cuda/user_op.cu: the embedded tile programs plus a
 * user's source) compiled by NVRTC for sm_90, on any machine: nvrtcCompileProgram needs no GPU, so a header that
 * stops compiling standalone under NVRTC fails here, not first on the GPU machine.
 *
 *   test_userop_nvrtc [ARCH]      (ARCH as 90 for sm_90; the default)
 *
 * Checks: an 8-byte affine operator, a 16-byte 2x2 matrix, a 4-byte pair of u16 and a 1-byte operator compile
 * (every kernel of the size: the scans of both tiers and the reduce) and give a cubin and the names of the tier-0
 * scans and the reduce, and so do the sizes that go to the wide programs (user_wide.cuh): 12
 * bytes (alignment 4), 24 (alignment 8), 32 (alignment 16), 20 and 3; a source with a syntax error, a combine name the source lacks and
 * an elem_bytes or elem_align that do not match the type are PSCAN_ERROR_BUILD_FAILED with a non-empty log.
 * Links the static library for the internal entry point (not exported from libpscan.so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"

/* src/cuda/user_op.cu */
pscan_status ps_cuda_user_compile(const char *source, const char *type_name, const char *combine_name, size_t bytes,
                                  size_t align, const unsigned char *identity, int arch, char **cubin,
                                  size_t *cubin_bytes, char *lowered[3], char **log);

static int failed, passed;

static void expect(const char *what, const char *source, const char *type, const char *combine, size_t bytes,
                   size_t align, int arch, pscan_status want) {
    static const unsigned char identity[32] = {1};
    char *cubin = NULL, *log = NULL, *lowered[3];
    size_t cubin_bytes = 0;
    pscan_status s = ps_cuda_user_compile(source, type, combine, bytes, align, identity, arch, &cubin, &cubin_bytes,
                                          lowered, &log);
    int ok = s == want;
    if (want == PSCAN_SUCCESS) ok = ok && cubin && cubin_bytes > 0 && lowered[0] && lowered[1] && lowered[2];
    if (want == PSCAN_ERROR_BUILD_FAILED) ok = ok && log && strlen(log) > 0 && !cubin;
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s: %s (expected %s)\n%s\n", what, pscan_status_name(s), pscan_status_name(want), log ? log : "");
    }
    if (s == PSCAN_SUCCESS)
        for (int k = 0; k < 3; k++) free(lowered[k]);
    free(cubin);
    free(log);
}

int main(int argc, char **argv) {
    const int arch = argc > 1 ? atoi(argv[1]) : 90;
    const char *affine = "typedef struct { float a, b; } affine;\n"
                         "affine combine(affine x, affine y) { affine r; r.a = y.a * x.a; r.b = fmaf(y.a, x.b, y.b); "
                         "return r; }\n";
    const char *matrix = "typedef struct { unsigned int m[4]; } mat2;\n"
                         "mat2 mul(mat2 x, mat2 y) { mat2 r;\n"
                         "  for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++)\n"
                         "    r.m[2*i+j] = (unsigned int)(((unsigned long long)x.m[2*i] * y.m[j] + "
                         "(unsigned long long)x.m[2*i+1] * y.m[2+j]) % 65521u);\n"
                         "  return r; }\n";
    const char *pair16 = "typedef struct { unsigned short a, b; } p16;\n"
                         "p16 f(p16 x, p16 y) { p16 r; r.a = (unsigned short)(x.a * y.a); r.b = (unsigned short)(y.a * x.b + y.b); return r; }\n";
    const char *byte = "typedef unsigned char u8;\nu8 keep_right(u8 x, u8 y) { return y ? y : x; }\n";
    expect("affine f32 (8 bytes)", affine, "affine", "combine", 8, 4, arch, PSCAN_SUCCESS);
    expect("2x2 matrix (16 bytes)", matrix, "mat2", "mul", 16, 4, arch, PSCAN_SUCCESS);
    expect("u16 pair (4 bytes)", pair16, "p16", "f", 4, 2, arch, PSCAN_SUCCESS);
    expect("u8 (1 byte)", byte, "u8", "keep_right", 1, 1, arch, PSCAN_SUCCESS);
    const char *window2 = "typedef struct { unsigned int count, ids[2]; } window;\n"
                          "window concat(window x, window y) { window r = y; if (y.count < 2u) { r.count = x.count + y.count "
                          "< 2u ? x.count + y.count : 2u; r.ids[0] = y.count ? x.ids[x.count - 1] : x.ids[0]; "
                          "r.ids[1] = y.count ? y.ids[0] : x.ids[1]; } return r; }\n";
    const char *affine64 = "typedef struct { unsigned long long a, b, calls; } aff64;\n"
                           "aff64 g(aff64 x, aff64 y) { aff64 r; r.a = y.a * x.a; r.b = y.a * x.b + y.b; "
                           "r.calls = x.calls + y.calls; return r; }\n";
    const char *matrix64 = "typedef struct alignas(16) { unsigned long long m[4]; } m64;\n"
                           "m64 mul64(m64 x, m64 y) { m64 r; for (int i = 0; i < 2; i++) for (int j = 0; j < 2; j++)\n"
                           "  r.m[2*i+j] = (x.m[2*i] * y.m[j] + x.m[2*i+1] * y.m[2+j]) % 65521ull; return r; }\n";
    const char *five = "typedef struct { unsigned int v[5]; } five;\n"
                       "five right(five x, five y) { return y.v[0] ? y : x; }\n";
    const char *three = "typedef struct { unsigned char v[3]; } three;\n"
                        "three right3(three x, three y) { return y.v[0] ? y : x; }\n";
    expect("window of 2 ids (12 bytes)", window2, "window", "concat", 12, 4, arch, PSCAN_SUCCESS);
    expect("u64 affine and a count (24 bytes, alignment 8)", affine64, "aff64", "g", 24, 8, arch, PSCAN_SUCCESS);
    expect("2x2 u64 matrix (32 bytes, alignment 16)", matrix64, "m64", "mul64", 32, 16, arch, PSCAN_SUCCESS);
    expect("five u32 (20 bytes)", five, "five", "right", 20, 4, arch, PSCAN_SUCCESS);
    expect("three u8 (3 bytes)", three, "three", "right3", 3, 1, arch, PSCAN_SUCCESS);
    expect("32 bytes with the wrong alignment", matrix64, "m64", "mul64", 32, 8, arch, PSCAN_ERROR_BUILD_FAILED);
    expect("syntax error", "typedef struct { float a, b; } affine;\naffine combine(affine x, affine y) { return x +* y; }\n",
           "affine", "combine", 8, 4, arch, PSCAN_ERROR_BUILD_FAILED);
    expect("missing combine", affine, "affine", "combine2", 8, 4, arch, PSCAN_ERROR_BUILD_FAILED);
    expect("wrong elem_bytes", affine, "affine", "combine", 16, 4, arch, PSCAN_ERROR_BUILD_FAILED);
    expect("wrong elem_align", affine, "affine", "combine", 8, 8, arch, PSCAN_ERROR_BUILD_FAILED);
    printf("test_userop_nvrtc: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
