/*
 * select_tile.h - the CUDA select/partition tile, as plain C macros: src/cuda/select.cu builds its tile
 * program from them, and tests/test_select.c aims its sizes at their tile boundaries. One definition, so a knob
 * changed here (or with -D, in the C and CUDA flags alike) moves both.
 *
 * Row tile: PS_SELECT_KEY_ROWS(key bytes) rows x 256 threads, one item per thread and row (16-32 KiB of keys;
 * docs/performance.md, 2026-11-26). PS_SELECT_ROWS is also the OpenCL tile's row count.
 */
#ifndef PS_SELECT_TILE_H
#define PS_SELECT_TILE_H

#ifndef PS_SELECT_ROWS
#define PS_SELECT_ROWS 16
#endif
#define PS_SELECT_THREADS 256
/* 1: the tiles of keys of up to PS_SELECT_VEC_BYTES test, stage and write them 16 bytes a thread (the vector form,
 * src/cuda/select.cu), and 1- and 2-byte keys take tiles of 64 rows, which the row form's per-key costs kept at 32;
 * 0: the row form for every key. */
#ifndef PS_SELECT_VEC
#define PS_SELECT_VEC 1
#endif
/* The largest keys (bytes) that take the vector form: 8 since the thirty-seventh session (4 before: 8-byte keys lost
 * 0-1 % while their flags were parked and their payloads went by the row form; src/cuda/select.cu). */
#ifndef PS_SELECT_VEC_BYTES
#define PS_SELECT_VEC_BYTES 8
#endif
/* The CUDA row tile's rows for keys of key_bytes, parked in shared memory: 32 KiB of 8-, 4- and 2-byte keys (16, 32
 * and 64 rows) and 16 KiB of 1-byte keys (64 rows); without the vector form 1- and 2-byte keys take 32 rows (8 and
 * 16 KiB). PS_SELECT_ROWS stays the OpenCL tile's. */
#ifndef PS_SELECT_KEY_ROWS
#define PS_SELECT_KEY_ROWS(key_bytes)                                                                           \
    ((key_bytes) >= 8 ? PS_SELECT_ROWS : (key_bytes) <= 2 && PS_SELECT_VEC ? 4 * PS_SELECT_ROWS : 2 * PS_SELECT_ROWS)
#endif

/* Selects (not partitions) of more than PS_SELECT_LARGE_FROM 1-byte keys take tiles of 128 rows (32 KiB; five
 * blocks a SM): at these widths the tile count still sets the pace of a large call (src/cuda/select.cu,
 * select_large_call). Other widths: the default tile. */
#define PS_SELECT_LARGE_ROWS(key_bytes) ((key_bytes) == 1 && PS_SELECT_VEC ? 8 * PS_SELECT_ROWS : PS_SELECT_KEY_ROWS(key_bytes))
#define PS_SELECT_LARGE_TILE_ITEMS(key_bytes) ((uint64_t)PS_SELECT_LARGE_ROWS(key_bytes) * PS_SELECT_THREADS)
#define PS_SELECT_LARGE_FROM ((uint64_t)1 << 24)

/* Items per CUDA tile for keys of key_bytes. */
#define PS_SELECT_TILE_ITEMS(key_bytes) ((uint64_t)PS_SELECT_KEY_ROWS(key_bytes) * PS_SELECT_THREADS)

/* Small calls take small tiles: a tile's rows run one after another in its block, so below a few hundred KiB a
 * call is faster spread over more blocks of fewer rows (H100, 2026-11-27: one tile of 1024 i32 keys 4.5 us with
 * 4 rows, 6.8 with 32; docs/performance.md). 4 KiB of keys (the least a tile parks by whole 16-byte copies per
 * thread), 8 KiB for 8-byte keys (4 rows measured faster than 8 and 16 there). Selects up to
 * PS_SELECT_SMALL_BYTES of keys take them; a partition of up to 16 default tiles takes the smallest of the
 * small, the half and the default tile whose call learns its first group's size inside the call (one cluster,
 * or a cooperative launch: src/cuda/select.cu). */
#define PS_SELECT_SMALL_ROWS(key_bytes) ((key_bytes) >= 8 ? 4 : 16 / (key_bytes))
#define PS_SELECT_SMALL_TILE_ITEMS(key_bytes) ((uint64_t)PS_SELECT_SMALL_ROWS(key_bytes) * PS_SELECT_THREADS)
#define PS_SELECT_SMALL_BYTES ((uint64_t)512 << 10)

#endif /* PS_SELECT_TILE_H */
