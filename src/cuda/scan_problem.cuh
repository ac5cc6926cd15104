/*
 * scan_problem.cuh - one scan request as the kernels see it, and the index mapping that lets one kernel body
 * serve forward and reverse scans. Internal.
 *
 * Kernels work in logical order: logical element i is in[phys(i)], where phys(i) = i forward and n-1-i in
 * reverse, and logical result i goes to out[phys(i)]. A logical tile [start, start + len) is therefore one
 * contiguous physical range either way, so tiles stay coalesced and a block that reads its whole tile before
 * writing it is safe in place (out == in). In logical order every scan is a forward one:
 *   inclusive: y[i] = init (+) x[0] (+) ... (+) x[i]      exclusive: y[i] = init (+) x[0] (+) ... (+) x[i-1]
 * so the initial value is simply the carry into the first tile.
 */
#ifndef PSCAN_SCAN_PROBLEM_CUH
#define PSCAN_SCAN_PROBLEM_CUH

#include <stdint.h>
#include <string.h>

#include "cuda_ops.cuh"

/* Returns the first CUDA error from a call or, after a <<<>>> launch, from cudaGetLastError(). */
#define PS_CUDA_TRY(expr)                                                                                    \
    do {                                                                                                     \
        cudaError_t ps_err_ = (expr);                                                                        \
        if (ps_err_ != cudaSuccess) return ps_err_;                                                          \
    } while (0)
#define PS_CUDA_CHECK_LAUNCH() PS_CUDA_TRY(cudaGetLastError())

template <class T> struct ps_cuda_problem {
    const T *in;
    T *out;
    uint64_t n;
    int exclusive;
    int reverse;
    T init;

    __host__ __device__ __forceinline__ uint64_t phys(uint64_t i) const { return reverse ? n - 1 - i : i; }
    /* First physical index of the logical range [start, start + len). */
    __host__ __device__ __forceinline__ uint64_t phys_base(uint64_t start, uint64_t len) const {
        return reverse ? n - start - len : start;
    }
};

template <class T> static ps_cuda_problem<T> ps_cuda_problem_of(const ps_request *call) {
    ps_cuda_problem<T> p;
    p.in = (const T *)call->in;
    p.out = (T *)call->out;
    p.n = call->n;
    p.exclusive = call->exclusive;
    p.reverse = call->reverse;
    memcpy(&p.init, call->init.bytes, sizeof(T));
    return p;
}

/* Temporary arrays are laid out back to back at this alignment (vector loads, and the allocator's own). */
static inline size_t ps_cuda_align(size_t bytes) { return (bytes + 255) & ~(size_t)255; }

static inline uint64_t ps_cuda_div_up(uint64_t a, uint64_t b) { return (a + b - 1) / b; }

/* Items per thread of the many-items tiles (algorithms 3 and 4): 64 bytes per thread for 1..4-byte types,
 * at least 8 items, so that each thread's serial scan amortises the block-wide scan; a multiple of the
 * 16-byte vector width in elements. */
__host__ __device__ constexpr int ps_cuda_tile_items(size_t elem_bytes) {
    return elem_bytes >= 8 ? 8 : elem_bytes == 4 ? 16 : 32;
}

#endif /* PSCAN_SCAN_PROBLEM_CUH */
