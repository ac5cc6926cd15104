/*
 * fuzz_text.c - the text reader (numbers separated by whitespace or commas, '#' comments) over bytes in
 * memory: never crashes, reads in chunks of 1..8 elements, and every refusal names its line.
 * Input: byte 0 picks the type, byte 1 the chunk size, the rest is the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 2) return 0;
    pscan_type type = (pscan_type)(data[0] % PSCAN_TYPE_COUNT);
    size_t chunk = (size_t)(data[1] % 8) + 1, got = 0;
    uint64_t values[8];
    ps_io_in in;
    ps_io_reader r;
    ps_io_in_open_memory(&in, data + 2, size - 2);
    if (ps_io_reader_open(&r, &in, PS_IO_TEXT, type, NULL, -1) != 0) abort();
    for (;;) {
        if (ps_io_read(&r, values, chunk, &got) != 0) {
            if (strncmp(r.error, "line ", 5) != 0) abort();
            break;
        }
        if (got == 0) break;
        if (got > chunk) abort();
    }
    ps_io_reader_close(&r);
    return 0;
}
