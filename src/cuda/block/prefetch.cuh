/*
 * block/prefetch.cuh - the block asks L2 for a range of global memory, a line (128 bytes) a thread, so that a tile
 * starting later finds its input there instead of queueing for DRAM behind the stores of the tiles before it
 * (chain/single_pass.cuh's prefetch hook says when, and what it gained). Device code only. Internal.
 */
#ifndef PSCAN_BLOCK_PREFETCH_CUH
#define PSCAN_BLOCK_PREFETCH_CUH

#include <stdint.h>

/* The lines holding [lo, hi), by the block's THREADS threads. A hint: nothing waits for it, and no line outside the
 * range's own is asked for. (L2::evict_last, to keep the lines against the stores streaming through L2, measured
 * within 0.004 of it: H200, twentieth session.) */
template <int THREADS> static __device__ __forceinline__ void ps_block_prefetch_l2(const void *lo, const void *hi) {
    const uintptr_t stop = (uintptr_t)hi;
    for (uintptr_t a = ((uintptr_t)lo & ~(uintptr_t)127) + threadIdx.x * (uintptr_t)128; a < stop;
         a += THREADS * (uintptr_t)128)
        asm volatile("prefetch.global.L2 [%0];" ::"l"(a));
}

#endif
