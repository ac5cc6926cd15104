/*
 * chain/given.cuh - the given-prefix driver: runs a tile program whose tiles' carries are known before it starts,
 * because a first pass over fewer bytes already computed them (a partition's count reads the flags, one byte an
 * item, and leaves every tile's prefix in temp). No tile waits for another: no status entries, no look-back, a
 * block a tile in any order. This is the downsweep of reduce-then-scan, for programs whose reduce pass is cheap
 * beside the tile program's own traffic. Device code and its launcher; it includes no host dispatch header.
 * Internal.
 *
 * The program is a single-pass one (chain/single_pass.cuh: params, smem, local, THREADS, MIN_BLOCKS, reduce,
 * consume) plus
 *   static carry given(const params &, uint32_t tile)   the carry of every tile before this one (all threads)
 * given() is called before reduce(), so its load is in flight while the tile loads. A program that returns its
 * initial carry from given() is the chain's control: the tile's own cost without any look-back (tools/tune).
 *
 * Why: on the single-pass chain a tile waits for the slowest load among the tiles of its look-back window; on an
 * H200 that wait is what keeps a chained scan at 0.91 of copy where the same tiles with no look-back run at 0.98
 * (docs/performance.md, 2026-11-24). A partition pays for its count pass anyway (its second group starts at the
 * total), so handing out per-tile prefixes from that pass removes the chain for the cost of one u64 per tile.
 * Measured: docs/performance.md, 2026-11-27 (sixth session).
 */
#ifndef PSCAN_CHAIN_GIVEN_CUH
#define PSCAN_CHAIN_GIVEN_CUH

#include "chain/pdl.cuh"
#include "chain/single_pass.cuh"

template <class P>
__global__ void __launch_bounds__(P::THREADS, P::MIN_BLOCKS) ps_chain_given_kernel(const typename P::params p) {
    PS_CHAIN_PROGRAM_SMEM(P, s);
    typename P::local l;
    const uint32_t id = blockIdx.x;
    ps_pdl_wait(); /* launched as a dependent (ps_chain_given's dependent): the pass that wrote the prefixes has ended */
    const typename P::carry prefix = P::given(p, id);
    const typename P::carry aggregate = P::reduce(p, id, l, s);
    __syncthreads(); /* as on the chain, where the look-back's barrier lies between reduce and consume */
    P::consume(p, id, prefix, aggregate, l, s);
}

#ifndef __CUDACC_RTC__
/* Launches P over tiles tiles on stream, a block a tile; dependent: as a programmatic dependent launch of the
 * kernel in front (chain/pdl.cuh), which must be the pass that wrote what given() reads. */
template <class P>
static cudaError_t ps_chain_given(const typename P::params &p, uint32_t tiles, cudaStream_t stream, bool dependent = false) {
    const size_t dynamic = ps_chain_dynamic_bytes<P>();
    static bool attributes_set[PS_CHAIN_DEVICES];
    const cudaError_t err = ps_chain_kernel_attributes_once(ps_chain_given_kernel<P>, dynamic, attributes_set);
    if (err != cudaSuccess) return err;
    return ps_pdl_launch(dependent, ps_chain_given_kernel<P>, dim3(tiles), dim3(P::THREADS), dynamic, stream, p);
}
#endif

#endif /* PSCAN_CHAIN_GIVEN_CUH */
