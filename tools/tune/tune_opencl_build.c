/*
 * tune_opencl_build.c - what an OpenCL driver makes of one of pscan's programs: the device's limits and
 * sub-group extensions, the build log (with NVIDIA's -cl-nv-verbose: ptxas' registers, spills and shared memory
 * per kernel) and each kernel's work-group size, local and private memory as clGetKernelWorkGroupInfo reports them.
 * It exists to say why a kernel runs below copy speed on a GPU's OpenCL driver before a variant is timed
 * (docs/tuning.md): occupancy from registers or local memory, spills, the work-group scan's sub-group options.
 *
 *   tune_opencl_build [--binary FILE] "BUILD OPTIONS" SOURCE.cl [SOURCE.cl ...]
 *
 * The sources are concatenated in order, as the backend does (0_common.cl first); the options are those the
 * backend passes (opencl_backend.c, program_build), for example
 *   "-cl-std=CL1.2 -DPS_T=int -DPS_IN=int -DPS_U=uint -DPS_BITS=uint -DPS_T_BYTES=4 -DPS_OP_SUM -DPS_LOWEST=INT_MIN
 *    -DPS_HIGHEST=INT_MAX -DPS_WG=256 -DPS_ITEMS=32 -DPS_DLB_SPIN_LIMIT=1000000 -DPS_DLB_STALL_TILE=-1
 *    -DPS_DLB_WINDOW=64 -cl-nv-verbose"
 * --binary writes the program's binary (PTX text on NVIDIA's driver). Runs on the first GPU of the first platform
 * that has one, else the first device. Exit status 0 when the program built.
 */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char *read_file(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = n >= 0 ? malloc((size_t)n + 1) : NULL;
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) {
        free(s);
        s = NULL;
    }
    fclose(f);
    if (s) {
        s[n] = '\0';
        *len = (size_t)n;
    }
    return s;
}

static int pick_device(cl_device_id *dev) {
    cl_platform_id plats[16];
    cl_uint np = 0;
    if (clGetPlatformIDs(16, plats, &np) != CL_SUCCESS || np == 0) return 0;
    for (int want_gpu = 1; want_gpu >= 0; want_gpu--)
        for (cl_uint p = 0; p < np; p++)
            if (clGetDeviceIDs(plats[p], want_gpu ? CL_DEVICE_TYPE_GPU : CL_DEVICE_TYPE_ALL, 1, dev, NULL) ==
                CL_SUCCESS)
                return 1;
    return 0;
}

int main(int argc, char **argv) {
    const char *binary_path = NULL;
    int a = 1;
    if (a + 1 < argc && strcmp(argv[a], "--binary") == 0) {
        binary_path = argv[a + 1];
        a += 2;
    }
    if (argc - a < 2) {
        fprintf(stderr, "usage: %s [--binary FILE] \"BUILD OPTIONS\" SOURCE.cl [SOURCE.cl ...]\n", argv[0]);
        return 2;
    }
    const char *options = argv[a++];
    cl_uint count = (cl_uint)(argc - a);
    char **sources = calloc(count, sizeof *sources);
    size_t *lengths = calloc(count, sizeof *lengths);
    for (cl_uint i = 0; i < count; i++)
        if (!(sources[i] = read_file(argv[a + i], &lengths[i]))) {
            fprintf(stderr, "cannot read %s\n", argv[a + i]);
            return 2;
        }

    cl_device_id dev;
    if (!pick_device(&dev)) {
        fprintf(stderr, "no OpenCL device\n");
        return 1;
    }
    char name[256] = "", version[256] = "", driver[256] = "";
    cl_ulong local_mem = 0;
    cl_uint units = 0;
    size_t ext_len = 0;
    clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof name, name, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_VERSION, sizeof version, version, NULL);
    clGetDeviceInfo(dev, CL_DRIVER_VERSION, sizeof driver, driver, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_LOCAL_MEM_SIZE, sizeof local_mem, &local_mem, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL);
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, 0, NULL, &ext_len);
    char *ext = calloc(ext_len + 1, 1);
    clGetDeviceInfo(dev, CL_DEVICE_EXTENSIONS, ext_len, ext, NULL);
    printf("device: %s; %s; driver %s; %u compute units; local memory %llu bytes\n", name, version, driver, units,
           (unsigned long long)local_mem);
    printf("sub-group extensions:");
    for (char *tok = strtok(ext, " "); tok; tok = strtok(NULL, " "))
        if (strstr(tok, "subgroup") || strstr(tok, "sub_group") || strstr(tok, "shuffle")) printf(" %s", tok);
    printf("\n");

    cl_int err = CL_SUCCESS;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateContext: %d\n", err);
        return 1;
    }
    cl_program prog = clCreateProgramWithSource(ctx, count, (const char **)sources, lengths, &err);
    if (err != CL_SUCCESS) {
        fprintf(stderr, "clCreateProgramWithSource: %d\n", err);
        return 1;
    }
    cl_int built = clBuildProgram(prog, 1, &dev, options, NULL, NULL);
    size_t log_len = 0;
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, 0, NULL, &log_len);
    char *log = calloc(log_len + 1, 1);
    clGetProgramBuildInfo(prog, dev, CL_PROGRAM_BUILD_LOG, log_len, log, NULL);
    printf("build: %s (%d)\n--- build log ---\n%s\n--- end of build log ---\n", built == CL_SUCCESS ? "ok" : "FAILED",
           built, log);
    if (built != CL_SUCCESS) return 1;

    if (binary_path) {
        size_t bin_len = 0;
        clGetProgramInfo(prog, CL_PROGRAM_BINARY_SIZES, sizeof bin_len, &bin_len, NULL);
        unsigned char *bin = malloc(bin_len ? bin_len : 1);
        unsigned char *bins[1] = {bin};
        FILE *f = fopen(binary_path, "wb");
        if (f && clGetProgramInfo(prog, CL_PROGRAM_BINARIES, sizeof bins, bins, NULL) == CL_SUCCESS)
            fwrite(bin, 1, bin_len, f);
        if (f) fclose(f);
        printf("binary: %zu bytes -> %s\n", bin_len, binary_path);
    }

    cl_uint nk = 0;
    clCreateKernelsInProgram(prog, 0, NULL, &nk);
    cl_kernel *ks = calloc(nk ? nk : 1, sizeof *ks);
    clCreateKernelsInProgram(prog, nk, ks, NULL);
    printf("%-40s %8s %10s %10s %8s\n", "kernel", "max_wg", "local_B", "private_B", "wg_mult");
    for (cl_uint i = 0; i < nk; i++) {
        char kname[128] = "";
        size_t wg = 0, mult = 0;
        cl_ulong lmem = 0, pmem = 0;
        clGetKernelInfo(ks[i], CL_KERNEL_FUNCTION_NAME, sizeof kname, kname, NULL);
        clGetKernelWorkGroupInfo(ks[i], dev, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL);
        clGetKernelWorkGroupInfo(ks[i], dev, CL_KERNEL_LOCAL_MEM_SIZE, sizeof lmem, &lmem, NULL);
        clGetKernelWorkGroupInfo(ks[i], dev, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof pmem, &pmem, NULL);
        clGetKernelWorkGroupInfo(ks[i], dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, sizeof mult, &mult, NULL);
        printf("%-40s %8zu %10llu %10llu %8zu\n", kname, wg, (unsigned long long)lmem, (unsigned long long)pmem,
               mult);
        clReleaseKernel(ks[i]);
    }
    clReleaseProgram(prog);
    clReleaseContext(ctx);
    return 0;
}
