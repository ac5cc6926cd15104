/*
 * chain/cluster.cuh - the cluster driver: runs any tile program of a small call (2 .. PS_CHAIN_CLUSTER_MAX tiles)
 * as one thread-block cluster (sm_90), the tiles' aggregates passed through distributed shared memory and one
 * hardware cluster barrier instead of the look-back's status entries in global memory. Included by
 * chain/single_pass.cuh, whose launcher (and chain/even_share.cuh's) sends small calls here; device code and
 * its launcher, no host dispatch header. Internal.
 *
 * Why: below a few hundred KiB a call is latency, not bandwidth. On the single-pass driver the second tile of a
 * call waits for the first one's entry to travel to L2 and back (a release store, then polling loads), and a
 * call of two tiles cost about 1.1 us more than a call of one on an H200 (a 4-byte reduce: 5.5 us against 4.4,
 * where a copy call takes 3.7; docs/performance.md). Blocks of one cluster run at once on one GPC and reach each
 * other's shared memory, and the cluster barrier is a hardware one.
 *
 * The kernel, block b of a cluster of `tiles` blocks (tile id = blockIdx.x = the block's rank in the cluster):
 *   aggregate = reduce(tile b); thread 0 parks it in shared memory; every thread arrives at the cluster barrier
 *   (release) and waits on it (acquire): every aggregate is visible. Warp 0 reads the aggregates of tiles
 *   0 .. b - 1 from their blocks' shared memory into the window slots the look-back would have filled, and folds
 *   them with ps_chain_window_fold (the same fixed expression: a tile's prefix has the same bits on both drivers,
 *   since tiles <= 32 < the window), and for a program that asks (its total hook) every tile's aggregate the
 *   same way; the other warps run the program's early() hook meanwhile. Then consume.
 *   A block may leave only when no other block still reads its shared memory: every thread arrives once more
 *   after the reads and waits before it exits (the wait costs nothing but to the last reader's block).
 *
 * Absorbing carries need nothing here: there is no chain to cut. Global memory: what the program moves, no status
 * entries, no temp. The launcher asks the occupancy API once per program whether a cluster of each size fits
 * (a program with large shared memory may not) and takes the largest that does; a device or build without
 * clusters (below sm_90) keeps the single-pass driver.
 */
#ifndef PSCAN_CHAIN_CLUSTER_CUH
#define PSCAN_CHAIN_CLUSTER_CUH

#ifndef __CUDACC_RTC__ /* user operators (NVRTC, user_op.cu) keep the single-pass driver */

/* The largest cluster the driver launches: 8 is the portable limit, 16 the H100's and H200's with the non-portable
 * attribute; 0 or 1 turns the driver off (tuning). Larger calls take the single-pass chain. */
#ifndef PS_CHAIN_CLUSTER_MAX
#define PS_CHAIN_CLUSTER_MAX 16
#endif
static_assert(PS_CHAIN_CLUSTER_MAX <= 32, "a cluster's tiles fit in one look-back window (ps_chain_window_fold)");

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
#define PS_CHAIN_HAS_CLUSTERS 1
#else
#define PS_CHAIN_HAS_CLUSTERS 0
#endif

/* The cluster barrier, split: arrive (release: this thread's earlier writes and reads are done for the others),
 * wait (acquire: what the others did before arriving is visible). Every thread of every block takes part. */
__device__ __forceinline__ void ps_cluster_arrive(void) {
#if PS_CHAIN_HAS_CLUSTERS
    asm volatile("barrier.cluster.arrive.release.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void ps_cluster_wait(void) {
#if PS_CHAIN_HAS_CLUSTERS
    asm volatile("barrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}

/* Arrive without release: only says this thread has run this far (the even-share cluster's "started"). */
__device__ __forceinline__ void ps_cluster_arrive_relaxed(void) {
#if PS_CHAIN_HAS_CLUSTERS
    asm volatile("barrier.cluster.arrive.relaxed.aligned;\n" ::: "memory");
#endif
}

/* Writes word w of a shared-memory array in the block of cluster rank `rank` (the same variable as `local` there);
 * that block must have started (a cluster barrier phase every block arrived at first says so). */
__device__ __forceinline__ void ps_cluster_write_word(uint32_t *local, uint32_t w, uint32_t rank, uint32_t v) {
#if PS_CHAIN_HAS_CLUSTERS
    uint32_t remote;
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(local + w);
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("st.shared::cluster.u32 [%0], %1;\n" ::"r"(remote), "r"(v) : "memory");
#endif
}

/* Word w of a shared-memory array in the block of cluster rank `rank` (the same variable as `local` there). */
__device__ __forceinline__ uint32_t ps_cluster_read_word(const uint32_t *local, uint32_t w, uint32_t rank) {
    uint32_t v = 0;
#if PS_CHAIN_HAS_CLUSTERS
    uint32_t remote;
    const uint32_t addr = (uint32_t)__cvta_generic_to_shared(local + w);
    asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(remote) : "r"(addr), "r"(rank));
    asm volatile("ld.shared::cluster.u32 %0, [%1];\n" : "=r"(v) : "r"(remote) : "memory");
#endif
    return v;
}

/* Run by the whole of warp 0: base (+) the aggregates of the cluster's tiles 0 .. end - 1 (end <= the cluster's
 * size), read from their blocks' shared memory into the slots the look-back's window would give them for a tile
 * end (slot lane x E + e is tile end - W + 1 + slot; the identity elsewhere), folded by the look-back's own
 * expression: for end = a tile's id, its prefix with the same bits as on the single-pass driver (end < W). */
template <class P, int E>
__device__ __forceinline__ typename P::carry ps_chain_cluster_fold(const typename P::carry &base,
                                                                     const uint32_t *aggregate_sh, uint32_t end) {
    typedef typename P::carry C;
    enum { WORDS = (sizeof(C) + 3) / 4 };
    const unsigned lane = threadIdx.x % PS_WARP_LANES;
    const int64_t first = (int64_t)end - PS_WARP_LANES * E + 1;
    C v[E];
#pragma unroll
    for (int e = 0; e < E; e++) {
        const int64_t t = first + (int64_t)lane * E + e;
        v[e] = P::identity();
        if (t >= 0 && t < (int64_t)end) {
            uint32_t w[WORDS];
#pragma unroll
            for (int k = 0; k < WORDS; k++) w[k] = ps_cluster_read_word(aggregate_sh, k, (uint32_t)t);
            memcpy(&v[e], w, sizeof(C));
        }
    }
    return ps_chain_window_fold<P, E>(base, v, lane);
}

/* The launch bound is the program's, as its single-pass kernel's, though a cluster is one call of at most 16 blocks.
 * A bound of 2 blocks a SM (thirty-third session, H200, tune_select / tune_segscan --small): select's small calls
 * within the run's drift (its CUB ran 3-5 % faster too), segmented scans 2^14 / 2^16 7.46 / 7.78 -> 8.13 / 8.51 us;
 * docs/bench/h200-segscan-forms.csv, h200-select-cluster-bound.csv. */
template <class P, int E>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS)
    ps_chain_cluster_kernel(const typename P::params p) {
#if PS_CHAIN_HAS_CLUSTERS
    typedef typename P::carry C;
    enum { WORDS = (sizeof(C) + 3) / 4 };
    PS_CHAIN_PROGRAM_SMEM(P, s);
    __shared__ uint32_t aggregate_sh[WORDS]; /* read by the later blocks of the cluster */
    __shared__ C prefix_sh, total_sh;
    typename P::local l;
    const uint32_t id = blockIdx.x;
    if (PS_CHAIN_PDL_TRIGGER) ps_pdl_trigger(); /* chain/pdl.cuh: a dependent next kernel may be scheduled */

    const C aggregate = P::reduce(p, id, l, s);
    if (threadIdx.x == 0) memcpy(aggregate_sh, &aggregate, sizeof aggregate);
    ps_cluster_arrive();
    ps_cluster_wait();

    if (threadIdx.x < PS_WARP_LANES) {
        const C prefix = ps_chain_cluster_fold<P, E>(P::initial(p), aggregate_sh, id);
        if (threadIdx.x == 0) prefix_sh = prefix;
        if (ps_chain_total<P>::wanted(p)) { /* every tile's, for the program's total hook */
            const C total = ps_chain_cluster_fold<P, E>(P::initial(p), aggregate_sh, gridDim.x);
            if (threadIdx.x == 0) total_sh = total;
        }
    } else {
        ps_chain_early<P>::run(p, id, aggregate, l, s);
    }
    __syncthreads();
    ps_cluster_arrive(); /* this block reads no other block's shared memory from here on */
    if (ps_chain_total<P>::wanted(p)) ps_chain_total<P>::give(p, total_sh, l, s);
    P::consume(p, id, prefix_sh, aggregate, l, s);
    ps_cluster_wait(); /* ... and leaves only when no other block reads its own */
#else
    __trap(); /* never launched: the launcher checks the kernel was built for sm_90 */
#endif
}

/* The launch of one cluster of `blocks` blocks of P (the attribute lives beside the configuration that points to it). */
template <class P> struct ps_chain_cluster_launch {
    cudaLaunchConfig_t cfg;
    cudaLaunchAttribute attr;
    ps_chain_cluster_launch(uint32_t blocks, cudaStream_t stream) : cfg(), attr() {
        attr.id = cudaLaunchAttributeClusterDimension;
        attr.val.clusterDim.x = blocks;
        attr.val.clusterDim.y = attr.val.clusterDim.z = 1;
        cfg.gridDim = dim3(blocks);
        cfg.blockDim = dim3(P::THREADS);
        cfg.dynamicSmemBytes = ps_chain_dynamic_bytes<P>();
        cfg.stream = stream;
        cfg.attrs = &attr;
        cfg.numAttrs = 1;
    }
};

/* A launch limit of one program, cached per device: a process may drive GPUs of different models (asked once per
 * program and device; a device ordinal past the table is asked each time). */
#define PS_CHAIN_DEVICES 64
/* The current device's index for the per-device caches, or -1 (none, or past PS_CHAIN_DEVICES: not cached). */
static inline int ps_chain_device_slot(void) {
    int d = -1;
    if (cudaGetDevice(&d) != cudaSuccess) cudaGetLastError(), d = -1;
    return d >= 0 && d < PS_CHAIN_DEVICES ? d : -1;
}

template <int (*ASK)(void)> static int ps_chain_per_device(void) {
    static int cached[PS_CHAIN_DEVICES]; /* the limit + 1; 0: not asked yet */
    const int d = ps_chain_device_slot();
    if (d >= 0 && cached[d]) return cached[d] - 1;
    const int limit = ASK();
    if (d >= 0) cached[d] = limit + 1;
    return limit;
}

/* The largest cluster of blocks of kernel K (a kernel of P's) the current device runs (0: none; the launcher keeps
 * the chain): K must have been built for sm_90 or later, and a cluster of that many blocks, each with P's shared
 * memory, must fit on one GPC. */
template <class P, void (*K)(const typename P::params)> static int ps_chain_cluster_ask_kernel(void) {
    if (PS_CHAIN_CLUSTER_MAX < 2) return 0;
    cudaFuncAttributes fa;
    if (cudaFuncGetAttributes(&fa, K) != cudaSuccess || fa.binaryVersion < 90 ||
        ps_chain_kernel_attributes(K, ps_chain_dynamic_bytes<P>()) != cudaSuccess ||
        (PS_CHAIN_CLUSTER_MAX > 8 &&
         cudaFuncSetAttribute(K, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) != cudaSuccess)) {
        cudaGetLastError(); /* a missing feature is not an error of the caller's next launch */
        return 0;
    }
    for (int size = PS_CHAIN_CLUSTER_MAX; size >= 2; size--) {
        ps_chain_cluster_launch<P> launch((uint32_t)size, 0);
        int clusters = 0;
        if (cudaOccupancyMaxActiveClusters(&clusters, K, &launch.cfg) == cudaSuccess && clusters > 0) return size;
        cudaGetLastError();
    }
    return 0;
}
template <class P, int E> static int ps_chain_cluster_limit(void) {
    return ps_chain_per_device<ps_chain_cluster_ask_kernel<P, ps_chain_cluster_kernel<P, E>>>();
}

/* Launches P over tiles tiles (2 .. ps_chain_cluster_limit<P, E>()) as one cluster on stream. */
template <class P, int E>
static cudaError_t ps_chain_cluster(const typename P::params &p, uint32_t tiles, cudaStream_t stream) {
    ps_chain_cluster_launch<P> launch(tiles, stream);
    return cudaLaunchKernelEx(&launch.cfg, ps_chain_cluster_kernel<P, E>, p);
}

#endif /* __CUDACC_RTC__ */

#endif /* PSCAN_CHAIN_CLUSTER_CUH */
