/*
 * fuzz_csv.c - the CSV column reader (RFC 4180 quotes, a header row found or forced, a column by number or
 * by name) over bytes in memory: never crashes, reads in chunks, and every refusal names its line.
 * Input: byte 0 the type, byte 1 the header mode and chunk size, byte 2 the column (below 128: number
 * 0..4, 0 = not chosen; else a name of (byte 2 - 128) % 8 bytes taken from what follows), then the CSV.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    pscan_type type = (pscan_type)(data[0] % PSCAN_TYPE_COUNT);
    int header = (int)(data[1] % 3) - 1;
    size_t chunk = (size_t)((data[1] >> 2) % 8) + 1, got = 0, skip = 3;
    ps_io_column column;
    memset(&column, 0, sizeof column);
    if (data[2] < 128) {
        column.index = data[2] % 5;
    } else {
        size_t len = (size_t)(data[2] - 128) % 8;
        if (len > size - skip) len = size - skip;
        memcpy(column.name, data + skip, len);
        column.name[len] = '\0';
        skip += len;
        if (column.name[0] == '\0') column.index = 1;
    }
    uint64_t values[8];
    ps_io_in in;
    ps_io_reader r;
    ps_io_in_open_memory(&in, data + skip, size - skip);
    if (ps_io_reader_open(&r, &in, PS_IO_CSV, type, &column, header) != 0) {
        if (strncmp(r.error, "line ", 5) != 0) abort();
        return 0;
    }
    for (;;) {
        if (ps_io_read(&r, values, chunk, &got) != 0) {
            if (strncmp(r.error, "line ", 5) != 0) abort();
            break;
        }
        if (got == 0) break;
        if (got > chunk) abort();
    }
    if (strlen(r.header_name) > PS_IO_TOKEN_MAX) abort();
    ps_io_reader_close(&r);
    return 0;
}
