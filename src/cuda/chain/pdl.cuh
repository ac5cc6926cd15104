/*
 * chain/pdl.cuh - programmatic dependent launch (sm_90 and later) between the kernels of one primitive's call:
 * the second kernel is launched with ps_pdl_launch (the stream attribute that lets its blocks be scheduled before
 * the kernel in front of it has ended) and its first act is ps_pdl_wait (griddepcontrol.wait: the kernel in front
 * has ended and its writes are visible); the kernel in front may call ps_pdl_trigger (griddepcontrol.
 * launch_dependents) early, so that the second launch is scheduled once every one of its blocks has called it,
 * instead of as its blocks exit. Device code and a launcher; no host dispatch header. Internal.
 *
 * Why: a call of a few tiles per kernel is mostly launch gaps (a launch and the next grid's ramp, a few us each on
 * an H200), and the gaps overlap the kernel in front. Nothing is read early: the wait comes before every read of
 * what the kernel in front wrote, and a trigger at a kernel's start is safe because by then every block of that
 * kernel holds its slot, so the dependent blocks, which wait, never take a slot one of them still needs. Without
 * the launch attribute (or before sm_90) both instructions do nothing.
 *
 * Measured: the sort's digit passes (radix_sort.cu, PS_SORT_PDL; H200, forty-sixth session): u32 keys 2^16 36.4 ->
 * 31.4 us, 2^20 57.8 -> 52.9, nothing from 2^26 (docs/performance.md). Expand's deferred pass (expand.cu,
 * PS_EXPAND_PDL, with the chain kernels' trigger PS_CHAIN_PDL_TRIGGER; forty-seventh session): 1.0-1.7 us off
 * its two-launch calls from 2^14 to 2^20 counts (average 1.5 at 2^16 10.08 -> 8.48 us), the trigger 0.1-0.6 of it.
 */
#ifndef PSCAN_CHAIN_PDL_CUH
#define PSCAN_CHAIN_PDL_CUH

/* The chain's kernels (single pass, cluster) trigger their dependents as they start: for a primitive whose next
 * kernel is a dependent launch (PS_EXPAND_PDL). Nothing changes for a next kernel launched plainly. */
#ifndef PS_CHAIN_PDL_TRIGGER
#define PS_CHAIN_PDL_TRIGGER 1
#endif

__device__ __forceinline__ void ps_pdl_wait() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

__device__ __forceinline__ void ps_pdl_trigger() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

#ifndef __CUDACC_RTC__ /* NVRTC (user operators, user_op.cu) compiles the device side alone */

/* Launches kernel<<<grid, block, smem, stream>>>(args...) as a programmatic dependent launch where the current
 * device is sm_90 or later and dependent is set, plainly otherwise. */
template <class... K, class... A>
static cudaError_t ps_pdl_launch(bool dependent, void (*kernel)(K...), dim3 grid, dim3 block, size_t smem,
                                 cudaStream_t stream, A &&...args) {
    int device = 0, major = 0;
    cudaError_t err;
    if (dependent && ((err = cudaGetDevice(&device)) != cudaSuccess ||
                      (err = cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device)) != cudaSuccess))
        return err;
    /* value-initialized (zeroed, as chain/cluster.cuh's): a memset of the configuration warns, its dim3 members
     * having constructors */
    cudaLaunchAttribute attr = cudaLaunchAttribute();
    attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
    attr.val.programmaticStreamSerializationAllowed = 1;
    cudaLaunchConfig_t cfg = cudaLaunchConfig_t();
    cfg.gridDim = grid;
    cfg.blockDim = block;
    cfg.dynamicSmemBytes = smem;
    cfg.stream = stream;
    cfg.attrs = &attr;
    cfg.numAttrs = dependent && major >= 9 ? 1 : 0;
    return cudaLaunchKernelEx(&cfg, kernel, static_cast<A &&>(args)...);
}
#endif /* __CUDACC_RTC__ */

#endif /* PSCAN_CHAIN_PDL_CUH */
