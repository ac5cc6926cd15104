/*
 * scan_tiers.h - the tiles of the single-pass scan by the call's bytes (5_decoupled_lookback.cu), which user
 * operators' scans follow too (user_op.cu): plain macros, so that host code and the scan program share them.
 * Internal.
 */
#ifndef PSCAN_CUDA_SCAN_TIERS_H
#define PSCAN_CUDA_SCAN_TIERS_H

#include <stdint.h>

/* Up to this many bytes a call uses 4 KiB tiles (one vector per thread, 8 blocks/SM): a small call is spread over
 * more SMs and each thread's serial work is short. H100 sweep (docs/performance.md): u8 at 2^10-2^14 1.4-1.8x CUB
 * with 4 KiB tiles against 0.7-0.9x with 32 KiB ones; i32/i64 at 2^10-2^16 1.4-1.7x against 1.2-1.5x. */
#define PS_SCAN_SMALL_BYTES ((uint64_t)256 << 10)

/* Vectors per thread and blocks per SM, from the sweeps of tools/tune/tune_scan.cu (docs/performance.md): 32 KiB
 * tiles at 5 blocks/SM below PS_SCAN_LARGE_BYTES of input; above it, larger tiles: 52 KiB (13 vectors) at 4
 * blocks/SM for 2-, 4- and 8-byte elements, 40 KiB (10) at 5 for 1-byte ones. A tile's look-back waits, mostly
 * for the inclusive prefix of the tile 64 back (traced: docs/performance.md, sixteenth session; the no-look-back
 * control runs at 0.98 of copy on both GPUs where the chained scan stopped at 0.88 on the H200 and 0.94 on the
 * H100), and a larger tile pays that wait once for more bytes: at 2^28 on the H200, i32 0.876 (32 KiB) -> 0.909 (44 KiB) -> 0.926 (52 KiB), i64 0.872 -> 0.907 -> 0.927,
 * u16 0.871 -> 0.905 (40 KiB) -> 0.924; on the H100 i32 0.940 -> 0.964 (44 KiB). Tiles past 48 KiB live in
 * dynamic shared memory (chain/single_pass.cuh), which costs nothing once the array is aligned (fifteenth session;
 * 64 and 72 KiB at 3 blocks/SM measured within 0.01 of 52 KiB). Below the threshold the larger tiles spread the
 * call over too few blocks (1- and 2-byte ones also pay for 16-104 serial elements per thread; u8 lost 3% with 52
 * KiB tiles at 2^28). A widened call (PSCAN_SCAN_WIDEN) loads through registers, 4 bytes of them per 4 bytes of
 * tile: its large tiles stay at 44 KiB (11 vectors). */
#define PS_SCAN_VECS(bytes) 8
#define PS_SCAN_MIN_BLOCKS(bytes) 5
#define PS_SCAN_LARGE_VECS(bytes) ((bytes) >= 2 ? 13 : 10)
#define PS_SCAN_LARGE_MIN_BLOCKS(bytes) ((bytes) >= 2 ? 4 : 5)
#define PS_SCAN_WIDEN_LARGE_VECS 11
/* Of PS_SCAN_LARGE_VECS, how many a thread holds in registers through the look-back instead of in shared memory
 * (ps_scan_program's REG_VECS; tools/tune/tune_scan.cu --types held; not timed yet: 0). */
#define PS_SCAN_LARGE_HELD(bytes) 0
/* Operators whose large-tier kernels spill at the 64 registers of 4 blocks/SM (ptxas: 2-byte min and max 82-130
 * bytes a thread, the 64-bit integer product 16-20; the sums none) take other large tiles: H200, 2^28, of copy,
 * i64 product 0.874 (52 KiB) -> 0.910 (64 KiB at 3 blocks/SM; 44 KiB: 0.902; sixteenth session,
 * docs/bench/h200-scan-product.csv); u16 max, with the promoted warp scan (PS_SCAN_PROMOTED_WARP), 0.732 (52 KiB)
 * -> 0.840 (32 KiB at 5 blocks/SM; 40 KiB at 5: 0.749; 64 KiB at 3: 0.777; seventeenth session,
 * docs/bench/h200-scan-promoted.csv; tools/tune/tune_scan.cu --types ops). Which pairs: dlb_heavy in
 * 5_decoupled_lookback.cu. */
#define PS_SCAN_HEAVY_LARGE_VECS(bytes) ((bytes) == 8 ? 16 : 8)
#define PS_SCAN_HEAVY_LARGE_MIN_BLOCKS(bytes) ((bytes) == 8 ? 3 : 5)
#define PS_SCAN_LARGE_BYTES(bytes) ((uint64_t)((bytes) >= 4 ? 16 : (bytes) == 2 ? 32 : 256) << 20)

#endif /* PSCAN_CUDA_SCAN_TIERS_H */
