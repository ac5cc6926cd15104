/*
 * tune_tail_launch.cu - is a kernel slower when launched from the device? A tile copy (one 256-thread block per
 * 4096-word tile, the grid of a sort pass, 2^28 words) launched from the host, as a CUDA dynamic parallelism tail
 * launch and fire-and-forget, and as a CUDA graph's kernel node (alone, or the body of an IF or SWITCH conditional
 * node set by a kernel in the graph), with no dynamic shared memory and with 35 KiB (a sort pass's), under
 * carveout hints.
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
 * Graphs (the forty-sixth session, docs/bench/h200-graph-launch.txt): a graph's kernel node runs at the host
 * launch's speed (528.5 against 528.4 us; 35 KiB 523.7 against 523.4), and a conditional node adds about 8 us
 * at 2^28 words and 9 us at 2^22 (IF or SWITCH alike: 536.4 / 537.1 us; 20.7 / 21.2 against 11.9 at 2^22), the
 * setter kernel included; updating the bodies' kernel parameters before each launch costs 2.4-2.9 us of host time
 * for four nodes.
 */
#include <chrono>
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

/* The conditional's setter, as a sort's plan kernel would be: one thread sets the graph's condition. */
__global__ void set_condition(cudaGraphConditionalHandle h, unsigned value) { cudaGraphSetConditional(h, value); }

/* A graph of the copy alone (cond 0), or of a setter and a conditional node around the copy (1: an IF node,
 * 2: a SWITCH node of four bodies, the setter choosing the third), as the sort's passes would be skipped by a
 * graph (docs/tuning.md, forty-fifth session, item 1). Every body is the same copy. */
struct copy_graph_t {
    cudaGraphExec_t exec;
    cudaGraphNode_t nodes[4]; /* the copy's kernel nodes (one, or one a body) */
    unsigned count;
    cudaKernelNodeParams kp;
};

static copy_graph_t copy_graph(int cond, const uint4 *&in, uint4 *&out, uint32_t tiles, size_t smem) {
    copy_graph_t r = {};
    cudaGraph_t g;
    CK(cudaGraphCreate(&g, 0));
    static const void *kargs[2];
    kargs[0] = &in;
    kargs[1] = &out;
    cudaKernelNodeParams &kp = r.kp;
    kp.func = (void *)tile_copy;
    kp.gridDim = dim3(tiles);
    kp.blockDim = dim3(256);
    kp.sharedMemBytes = (unsigned)smem;
    kp.kernelParams = (void **)kargs;
    cudaGraphNode_t node;
    if (cond == 0) {
        CK(cudaGraphAddKernelNode(&node, g, nullptr, 0, &kp));
        r.nodes[r.count++] = node;
    } else {
        cudaGraphConditionalHandle h;
        CK(cudaGraphConditionalHandleCreate(&h, g, 0, 0));
        unsigned value = cond == 1 ? 1u : 2u;
        const void *sargs[2] = {&h, &value};
        cudaKernelNodeParams sp = {};
        sp.func = (void *)set_condition;
        sp.gridDim = dim3(1);
        sp.blockDim = dim3(32);
        sp.kernelParams = (void **)sargs;
        cudaGraphNode_t setter;
        CK(cudaGraphAddKernelNode(&setter, g, nullptr, 0, &sp));
        cudaGraphNodeParams cp = {};
        cp.type = cudaGraphNodeTypeConditional;
        cp.conditional.handle = h;
        cp.conditional.type = cond == 1 ? cudaGraphCondTypeIf : cudaGraphCondTypeSwitch;
        cp.conditional.size = cond == 1 ? 1 : 4;
        CK(cudaGraphAddNode(&node, g, &setter, nullptr, 1, &cp));
        for (unsigned b = 0; b < cp.conditional.size; b++) {
            CK(cudaGraphAddKernelNode(&r.nodes[r.count++], cp.conditional.phGraph_out[b], nullptr, 0, &kp));
        }
    }
    CK(cudaGraphInstantiate(&r.exec, g, 0));
    return r; /* the graph stays alive: its nodes name the exec's for updates */
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
    /* graph-switch-upd: every body's kernel params set again before each launch, as a call with new buffers
     * would (the host time of those updates is printed apart) */
    const char *names[] = {"host", "tail", "fire-and-forget", "graph", "graph-if", "graph-switch", "graph-switch-upd"};
    for (uint32_t grid : {tiles, tiles >> 6})
    for (size_t smem : {(size_t)0, (size_t)35 * 1024})
        for (int how = 0; how < 7; how++) {
            const uint4 *gin = in;
            uint4 *gout = out;
            copy_graph_t cg = {};
            if (how >= 3) cg = copy_graph(how == 6 ? 2 : how - 3, gin, gout, grid, smem);
            double upd_us = 0;
            int upd_calls = 0;
            const timing t = time_it([&] {
                if (how == 0) tile_copy<<<grid, 256, smem>>>(in, out);
                else if (how < 3) parent<<<1, 1, psmem>>>(in, out, grid, smem, how - 1);
                else {
                    if (how == 6) {
                        const auto t0 = std::chrono::steady_clock::now();
                        for (unsigned b = 0; b < cg.count; b++) CK(cudaGraphExecKernelNodeSetParams(cg.exec, cg.nodes[b], &cg.kp));
                        upd_us += std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count();
                        upd_calls++;
                    }
                    CK(cudaGraphLaunch(cg.exec, 0));
                }
                CK(cudaGetLastError());
            });
            if (cg.exec) CK(cudaGraphExecDestroy(cg.exec));
            if (how == 6) printf("  (updates of %u nodes: %.2f us of host time a call)\n", cg.count, upd_us / upd_calls);
            printf("tile copy %u tiles, smem %zu, %-16s median %.1f us, spread %.3f\n", grid, smem, names[how],
                   t.median_us, t.spread);
        }
    return 0;
}
