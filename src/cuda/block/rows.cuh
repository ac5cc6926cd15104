/*
 * block/rows.cuh - a tile's rows moved from global to shared memory a batch of rows at a time: every load of a
 * batch is issued before the first store, so the batch waits for memory once. Written row by row (load, then the
 * store that needs it), the compiler gives each row a branch of its own whose stores wait for its loads: one
 * round trip to memory a row (the SASS of the segmented scan's and the RLE's partial tiles, twenty-ninth session;
 * docs/tuning.md). Device code only. Internal.
 */
#ifndef PSCAN_BLOCK_ROWS_CUH
#define PSCAN_BLOCK_ROWS_CUH

#include <stdint.h>

/* Item o = row * THREADS + thread of a tile of ROWS rows, for o < valid: v = load(o) for B rows, then store(o, v)
 * for them, batch after batch (the last may be short). V is what load returns (a value and its head bit, say). */
template <int ROWS, int THREADS, int B, class V, class Load, class Store>
static __device__ __forceinline__ void ps_block_rows_batched(uint32_t valid, Load load, Store store) {
    static_assert(B >= 1, "a batch holds a row");
#pragma unroll
    for (int k0 = 0; k0 < ROWS; k0 += B) {
        V v[B];
#pragma unroll
        for (int b = 0; b < B; b++) {
            const uint32_t o = (k0 + b) * THREADS + threadIdx.x;
            if (k0 + b < ROWS && o < valid) v[b] = load(o);
        }
#pragma unroll
        for (int b = 0; b < B; b++) {
            const uint32_t o = (k0 + b) * THREADS + threadIdx.x;
            if (k0 + b < ROWS && o < valid) store(o, v[b]);
        }
    }
}

#endif /* PSCAN_BLOCK_ROWS_CUH */
