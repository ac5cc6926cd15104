/*
 * select_tile.h - the CUDA select/partition tile, as plain C macros: src/cuda/select.cu builds its tile
 * programs from them, and tests/test_select.c aims its sizes at their tile boundaries. One definition, so a knob
 * changed here (or with -D, in the C and CUDA flags alike) moves both.
 *
 * Row tile (the default): PS_SELECT_ROWS rows x 256 threads, one item per thread and row.
 * PS_SELECT_VEC 1: the vector tile (select.cu: ps_select_vec_program) with PS_SELECT_VECS(key bytes) 16-byte
 * vectors per thread at PS_SELECT_VEC_MIN_BLOCKS blocks per SM. Measured against each other on an H200
 * (docs/performance.md, 2026-11-23, second session): no gain for select, +15% for i32 partition; the row tile
 * stays the default. Fewer vectors for small keys: every item costs its own instructions, and 8 vectors of u8
 * (128 items a thread) spill at 64 registers.
 */
#ifndef PS_SELECT_TILE_H
#define PS_SELECT_TILE_H

#ifndef PS_SELECT_ROWS
#define PS_SELECT_ROWS 16
#endif
#ifndef PS_SELECT_VEC
#define PS_SELECT_VEC 0
#endif
#ifndef PS_SELECT_VECS
#define PS_SELECT_VECS(bytes) ((bytes) >= 4 ? 8 : (bytes) == 2 ? 4 : 2)
#endif
#ifndef PS_SELECT_VEC_MIN_BLOCKS
#define PS_SELECT_VEC_MIN_BLOCKS 3
#endif
#define PS_SELECT_THREADS 256

/* Items per tile for keys of key_bytes: VECS x 4 KiB, or ROWS x THREADS. */
#define PS_SELECT_TILE_ITEMS(key_bytes)                                                                       \
    (PS_SELECT_VEC ? (uint64_t)PS_SELECT_VECS(key_bytes) * 16u * PS_SELECT_THREADS / (key_bytes)               \
                   : (uint64_t)PS_SELECT_ROWS * PS_SELECT_THREADS)

#endif /* PS_SELECT_TILE_H */
