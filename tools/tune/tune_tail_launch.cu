/*
 * tune_tail_launch.cu - is a kernel slower when launched from the device? A tile copy (one 256-thread block per
 * 4096-word tile, the grid of a sort pass, 2^28 words) launched from the host, as a CUDA dynamic parallelism tail
 * launch and fire-and-forget, with no dynamic shared memory and with 35 KiB (a sort pass's), under carveout hints.
 * Not part of the library: the forty-fifth session's question why the sort's device-launched passes ran 1.3-1.9x
 * slower (docs/performance.md). Timed by tune_common.cuh's time_it (median of 20 after two warm-ups, the L2
 * written over before each call; the spread is (p90 - p10) / median).
 *
 *   nvcc -O3 -std=c++17 -arch=sm_90 -rdc=true -o tune_tail_launch tools/tune/tune_tail_launch.cu -lcudadevrt
 *   tune_tail_launch [variant]   (bits: 1 the parent's preferred carveout 100 %, 2 the child's, 4 the parent
 *                                 launched with 200 KiB of dynamic shared memory)
 *
 * Measured (H200, CUDA 13.0, 2026-12-02, by this file's first version, which flushed with its own 256 MiB write
 * and timed the same way): no shared memory 531 us from the host, 549 as a tail launch (+3.4 %);
 * 35 KiB 530 us from the host, 655 as a tail launch or fire-and-forget (+24 %), with every variant alike.
 */
#include <cstdint>

#define TUNE_DEFAULT_REPS 20
#include "tune_common.cuh"

/* One tile of 4096 words a block; the shared memory is the launch's, referenced so it is not optimised away. */
__global__ void __launch_bounds__(256) tile_copy(const uint4 *in, uint4 *out) {
    extern __shared__ uint4 sm[];
    const uint4 *src = in + (size_t)blockIdx.x * 1024;
    uint4 *dst = out + (size_t)blockIdx.x * 1024;
    uint4 v[4];
#pragma unroll
    for (int i = 0; i < 4; i++) v[i] = src[i * 256 + threadIdx.x];
#pragma unroll
    for (int i = 0; i < 4; i++) dst[i * 256 + threadIdx.x] = v[i];
    if (v[0].x == 0xdeadbeef && v[1].y == 0x12345) sm[threadIdx.x] = v[2];
}

/* One thread launches the copy from the device: a tail launch (mode 0) or fire-and-forget (mode 1). */
__global__ void parent(const uint4 *in, uint4 *out, uint32_t tiles, size_t smem, int mode) {
    if (mode == 0) tile_copy<<<tiles, 256, smem, cudaStreamTailLaunch>>>(in, out);
    else tile_copy<<<tiles, 256, smem, cudaStreamFireAndForget>>>(in, out);
}

int main(int argc, char **argv) {
    const uint32_t tiles = 1u << 16; /* 2^28 words, 1 GiB each way */
    const int variant = argc > 1 ? atoi(argv[1]) : 0;
    uint4 *in, *out;
    CK(cudaMalloc(&in, (size_t)tiles * 16384));
    CK(cudaMalloc(&out, (size_t)tiles * 16384));
    CK(cudaMemset(in, 1, (size_t)tiles * 16384));
    tune_flush_init();
    CK(cudaFuncSetAttribute(tile_copy, cudaFuncAttributeMaxDynamicSharedMemorySize, 36 * 1024));
    size_t psmem = 0;
    if (variant & 1) CK(cudaFuncSetAttribute(parent, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    if (variant & 2) CK(cudaFuncSetAttribute(tile_copy, cudaFuncAttributePreferredSharedMemoryCarveout, 100));
    if (variant & 4) {
        psmem = 200 * 1024;
        CK(cudaFuncSetAttribute(parent, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)psmem));
    }
    printf("variant %d (1: parent carveout 100, 2: child carveout 100, 4: parent 200 KiB dynamic smem)\n", variant);
    const char *names[] = {"host", "tail", "fire-and-forget"};
    for (size_t smem : {(size_t)0, (size_t)35 * 1024})
        for (int how = 0; how < 3; how++) {
            const timing t = time_it([&] {
                if (how == 0) tile_copy<<<tiles, 256, smem>>>(in, out);
                else parent<<<1, 1, psmem>>>(in, out, tiles, smem, how - 1);
                CK(cudaGetLastError());
            });
            printf("tile copy 2 GiB moved, smem %zu, %-16s median %.1f us, spread %.3f\n", smem, names[how], t.median_us,
                   t.spread);
        }
    return 0;
}
