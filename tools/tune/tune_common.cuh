/*
 * tune_common.cuh - what every tuning harness in tools/tune/ times with: a CUDA error check that exits, the
 * L2-flush buffer, and time_it(). Not part of the library.
 *
 * time_it(f): two warm-up calls, then g_reps calls of f, each after a write of the flush buffer (twice the L2,
 * outside the timed region, so no size is timed from cache), with CUDA events around the call alone on the
 * default stream; the median in microseconds and the spread (p90 - p10) / median. A harness sets g_flush and
 * g_flush_bytes (tune_flush_init) before timing, and may set g_reps from its options.
 *
 * TUNE_FLUSH=read in the environment reads the flush buffer instead of writing it (tune_flush): the L2 is emptied
 * of the call's data all the same, but holds no dirty lines for the timed call to write back. Why: a partition's
 * count at 2^23 i32 read 32 MiB in 18.5 us where its bytes alone take about 8 (thirtieth session, docs/tuning.md);
 * the written flush leaves up to the L2's size of dirty lines that go out during whichever call comes next. The
 * default stays the write, which every committed CSV used. (Measured on an H200, thirty-first session: the read
 * flush takes 1-3 us off every call alike, copy and CUB included, and leaves the ratios as they were.)
 * TUNE_FLUSH=none does not flush: a kernel that only waits (30 us, no memory traffic) stands in for the flush, so
 * the host has queued the event and the call before the GPU reaches them (without it the host's launch latency is
 * timed: 10-11 us for any one-block call on the H200), and the call runs with its data and its code warm in the
 * L2. Beside the flushed time it says how much of a small call is cold caches rather than work.
 */
#ifndef PSCAN_TUNE_COMMON_CUH
#define PSCAN_TUNE_COMMON_CUH

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(...)                                                                                              \
    do {                                                                                                     \
        cudaError_t e_ = (__VA_ARGS__);                                                                      \
        if (e_ != cudaSuccess) {                                                                             \
            fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #__VA_ARGS__, cudaGetErrorString(e_));    \
            exit(1);                                                                                         \
        }                                                                                                    \
    } while (0)

#ifndef TUNE_DEFAULT_REPS
#define TUNE_DEFAULT_REPS 25
#endif

static void *g_flush;
static size_t g_flush_bytes;
static int g_reps = TUNE_DEFAULT_REPS;

static bool g_flush_read; /* TUNE_FLUSH=read: flush by reading */
static bool g_flush_none; /* TUNE_FLUSH=none: no flush */

/* Reads n 16-byte words of the flush buffer; the sink keeps the reads from being dropped (never true in
 * practice: the buffer holds memset bytes, so the xor of an even count of equal words is 0). */
__global__ void tune_flush_read_kernel(const uint4 *p, size_t n, unsigned *sink) {
    uint32_t acc = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
        const uint4 w = p[i];
        acc ^= w.x ^ w.y ^ w.z ^ w.w;
    }
    if (acc == 0x9e3779b9u) *sink = acc;
}

/* TUNE_FLUSH=none's stand-in for the flush: one warp that waits, touching no memory. */
__global__ void tune_wait_kernel(long long cycles) {
    const long long t0 = clock64();
    while (clock64() - t0 < cycles) {
    }
}

/* Empties the L2 of the timed call's data before a call: a write of the flush buffer (the default), or a read of
 * it (TUNE_FLUSH=read; the sink is the buffer's first word, never written in practice); TUNE_FLUSH=none waits
 * instead. */
static void tune_flush(int r) {
    if (g_flush_none) { /* about 30 us at the H200's 1.98 GHz */
        tune_wait_kernel<<<1, 32>>>(60000);
        CK(cudaGetLastError());
        return;
    }
    if (!g_flush_read) {
        CK(cudaMemsetAsync(g_flush, r, g_flush_bytes));
        return;
    }
    tune_flush_read_kernel<<<1024, 256>>>((const uint4 *)g_flush, g_flush_bytes / 16, (unsigned *)g_flush);
    CK(cudaGetLastError());
}

/* Allocates the flush buffer: twice the current device's L2. */
static void tune_flush_init(void) {
    int device = 0, l2 = 0;
    CK(cudaGetDevice(&device));
    CK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, device));
    g_flush_bytes = (size_t)l2 * 2;
    CK(cudaMalloc(&g_flush, g_flush_bytes));
    const char *mode = getenv("TUNE_FLUSH");
    g_flush_read = mode && !strcmp(mode, "read");
    g_flush_none = mode && !strcmp(mode, "none");
    if (g_flush_read) CK(cudaMemset(g_flush, 0, g_flush_bytes)); /* written once, read before each call */
}

/* The library's device description (ps_cuda_device, from the library source the harness includes) of the
 * current device on the default stream, as the CUDA backend fills it; *prop gets the device's properties. Also
 * allocates the flush buffer (tune_flush_init). */
template <class Device> static void tune_device_init(Device &dev, cudaDeviceProp *prop) {
    memset(&dev, 0, sizeof dev);
    CK(cudaGetDevice(&dev.device));
    CK(cudaGetDeviceProperties(prop, dev.device));
    dev.sm_count = prop->multiProcessorCount;
    dev.l2_bytes = prop->l2CacheSize;
    dev.max_shared_per_block_optin = (int)prop->sharedMemPerBlockOptin;
    dev.stream = 0;
    tune_flush_init();
}

struct timing {
    double median_us, spread;
};

template <class F> static timing time_it(F f) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    std::vector<float> ms;
    for (int r = 0; r < g_reps + 2; r++) {
        tune_flush(r);
        CK(cudaEventRecord(a));
        f();
        CK(cudaEventRecord(b));
        CK(cudaEventSynchronize(b));
        float t = 0;
        CK(cudaEventElapsedTime(&t, a, b));
        if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double med = ms[ms.size() / 2];
    CK(cudaEventDestroy(a));
    CK(cudaEventDestroy(b));
    return timing{med * 1000.0, (ms[ms.size() * 9 / 10] - ms[ms.size() / 10]) / med};
}

#endif /* PSCAN_TUNE_COMMON_CUH */
