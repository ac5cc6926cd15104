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

/* A call of 4- or 8-byte elements (not widened) of more than one small tile and at most this many bytes runs as
 * one tile of PS_SCAN_ONE_TILE_VECS vectors a thread (16 KiB: one block, no cluster of 2-4 small tiles, no barrier
 * across blocks). H200, tools/tune/tune_scan.cu --types lat (fourth session, docs/bench/h200-cluster-lat.csv, the
 * same program with 4 vectors a thread against 1, in builds with clusters of up to 16 blocks, as the library's
 * driver, of up to 8, and none), us a call: i32 2^11 4.48 / 4.35 / 4.35 against 4.61 / 4.51 / 4.67, 2^12 4.38 / 4.19
 * / 4.32 against 4.61 / 4.54 / 5.02; i64 2^10 4.45 / 4.35 / 4.48 against 4.67 / 4.51 / 4.64, 2^11 4.80 / 4.64 / 4.48
 * against 4.80 / 4.64 / 4.99. 1-byte elements lose (u8 2^13 7.2-7.4 us against 4.6-4.8: 64 serial elements a
 * thread), 2-byte ones were not timed; at 4 KiB and below one small tile is faster (i32 2^10 3.7-3.8 against
 * 4.2-4.3: a quarter-full tile takes the element path). Chosen in the fiftieth session from those rows; in the
 * library (fifty-first session, `pscan bench`, two rounds, median of 31, docs/bench/h200-scan-small-51.csv against
 * h200-scan-small-49.csv) i32 2^11 4.64 -> 4.54 / 4.45 us, 2^12 4.80 -> 4.38 / 5.02 (1.19x / 1.32x a copy call, were
 * 1.32x); f32 2^12 4.48 / 4.45 (1.22x), beside 2^13's 4.77 / 4.74 (1.30x / 1.25x): 0.1-0.3 us, near the
 * cross-run noise. 0: off. */
#ifndef PS_SCAN_ONE_TILE_BYTES
#define PS_SCAN_ONE_TILE_BYTES ((uint64_t)16 << 10)
#endif
#define PS_SCAN_ONE_TILE_VECS 4

/* Vectors per thread and blocks per SM, from the sweeps of tools/tune/tune_scan.cu (docs/performance.md): 32 KiB tiles
 * at 5 blocks/SM below PS_SCAN_LARGE_BYTES of input; above it, larger tiles at 4 blocks/SM: 52 KiB of shared memory
 * (13 vectors) for 2-, 4- and 8-byte elements, 48 KiB (12) for 1-byte ones, and for 2- to 8-byte integers 2 vectors
 * more held in registers (PS_SCAN_LARGE_HELD): 60 KiB tiles. A tile's look-back waits, mostly for the inclusive prefix
 * of the tile 64 back (traced: docs/performance.md, sixteenth session; the no-look-back control runs at 0.98 of copy on
 * both GPUs where the chained scan stopped at 0.88 on the H200 and 0.94 on the H100), and a larger tile pays that wait
 * once for more bytes: at 2^28 on the H200, i32 0.876 (32 KiB) -> 0.909 (44 KiB) -> 0.926 (52 KiB), i64 0.872 -> 0.907
 * -> 0.927, u16 0.871 -> 0.905 (40 KiB) -> 0.924; on the H100 i32 0.940 -> 0.964 (44 KiB). Tiles past 48 KiB live in
 * dynamic shared memory (chain/single_pass.cuh), which costs nothing once the array is aligned (fifteenth session; 64
 * and 72 KiB at 3 blocks/SM measured within 0.01 of 52 KiB). Below the threshold the larger tiles spread the call over
 * too few blocks (1- and 2-byte ones also pay for 16-104 serial elements per thread; u8 lost 3% with 52 KiB tiles at
 * 2^28). A widened call (PSCAN_SCAN_WIDEN) loads through registers, 4 bytes of them per 4 bytes of tile: its large
 * tiles stay at 44 KiB (11 vectors). */
#define PS_SCAN_VECS(bytes) 8
#define PS_SCAN_MIN_BLOCKS(bytes) 5
#define PS_SCAN_LARGE_VECS(bytes) ((bytes) >= 2 ? 13 : 12) /* in shared memory; PS_SCAN_LARGE_HELD more */
#define PS_SCAN_LARGE_MIN_BLOCKS(bytes) 4
#define PS_SCAN_WIDEN_LARGE_VECS 11
/* Beyond PS_SCAN_LARGE_VECS, the vectors a thread holds in registers through the look-back (ps_scan_program's
 * REG_VECS), for integers: a waiting tile holds its bytes, and the SM's shared memory caps the bytes of tiles
 * resident (4 x 52 KiB); registers beside it raise that cap. H200, of copy at 2^24 / 2^28 / 2^30, 13 vectors at 4
 * blocks/SM -> 15 with 2 held (eighteenth session, docs/bench/h200-scan-packed-held.csv, tools/tune/tune_scan.cu
 * --types held): i32 0.857 / 0.923 / 0.924 -> 0.867 / 0.934 / 0.932, i64 0.885 / 0.923 / 0.917 -> 0.902 / 0.937 /
 * 0.929; u8 at 10 vectors and 5 blocks -> 12 with 2 held at 4: 0.629 / 0.857 / 0.893 -> 0.705 / 0.868 / 0.898. More
 * held gains no more (i32 at 2^28: 14 with 4 held 0.928; at 3 blocks/SM 22 with 4 held 0.925, 24 with 6 0.937,
 * 0.922 in the traced build's run), and at 2^22, the tier's first size, 15 with 2 held is 0.01 slower (i32 0.838 ->
 * 0.826). The trace (2^28) shows why the gain is small: the tile's wait stays 8 us but its load and its stores grow
 * with its bytes (4.1 -> 5.3 us and 1.4 -> 2.9 us at 22 with 4 held). Floats hold none: their kernels spill with
 * held vectors (ptxas: 56 bytes a thread for the f32 sum, 16-32 for f64) and lose, at 2^28 f32 sum 0.925 -> 0.852
 * (14 with 1 held: 0.889), f32 max 0.920 -> 0.860, f64 sum 0.927 -> 0.898 (docs/bench/h200-scan-float-held.csv,
 * --types float). 1-byte integers hold none either since the twenty-first session: with the chain's prefetch hook
 * their 10 + 2 spilled (ptxas: 24 bytes a thread for the u8 sum) and lost to the same kernel without the hook
 * (`pscan bench`, H200, 2^28 / 2^30: 0.837 / 0.876 against 0.871 / 0.902); 12 vectors in shared memory (48 KiB,
 * no spill) with the hook ran 0.872 / 0.920 in the same run as 0.871 / 0.899 without it
 * (docs/bench/h200-scan-u8-held.csv). */
#define PS_SCAN_LARGE_HELD(bytes, integer) ((integer) && (bytes) >= 2 ? 2 : 0)
/* Operators whose large tiles run faster smaller: the 64-bit integer product, whose kernels spill at the 64 registers
 * of 4 blocks/SM (ptxas: 16-20 bytes a thread), and the 1-byte min and max. H200, 2^28, of copy, i64 product 0.874 (52
 * KiB) -> 0.910 (64 KiB at 3 blocks/SM; 44 KiB: 0.902; sixteenth session, docs/bench/h200-scan-product.csv); u8 max,
 * packed (PS_SCAN_PACKED), 0.721 (52 KiB at 4 blocks/SM) -> 0.744 (40 KiB at 5) -> 0.771 (32 KiB at 5; eighteenth
 * session, docs/bench/h200-scan-packed-held.csv; tools/tune/tune_scan.cu --types ops). The 2-byte min and max, which
 * spilled 82-130 bytes element at a time, no longer do packed and take the large tier (u16 max at 13 vectors 0.920, at
 * 32 KiB 0.865; with the large tier's 2 held, the library's `pscan bench` 0.936). Which pairs: dlb_heavy in
 * 5_decoupled_lookback.cu. */
#define PS_SCAN_HEAVY_LARGE_VECS(bytes) ((bytes) == 8 ? 16 : 8)
#define PS_SCAN_HEAVY_LARGE_MIN_BLOCKS(bytes) ((bytes) == 8 ? 3 : 5)
#define PS_SCAN_LARGE_BYTES(bytes) ((uint64_t)((bytes) >= 4 ? 16 : (bytes) == 2 ? 32 : 256) << 20)

#endif /* PSCAN_CUDA_SCAN_TIERS_H */
