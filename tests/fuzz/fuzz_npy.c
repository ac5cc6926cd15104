/*
 * fuzz_npy.c - the .npy header parser and reader over bytes in memory: never crashes; a header that parses
 * gives a type and count that ps_io_npy_header writes back to a header that parses to the same; every prefix
 * of a good header asks for more bytes rather than failing; the reader delivers exactly count elements or
 * refuses with a message.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    ps_io_npy npy, back;
    size_t needed = 0;
    char error[PS_IO_ERROR_MAX];
    int rc = ps_io_npy_parse(data, size, &npy, &needed, error, sizeof error);
    if (rc == 1 && needed <= size) abort();
    if (rc < 0 && error[0] == '\0') abort();
    if (rc == 0) {
        unsigned char header[PS_IO_NPY_HEADER_BYTES];
        if (npy.header_bytes > size) abort();
        ps_io_npy_header(npy.type, npy.count, header);
        if (ps_io_npy_parse(header, sizeof header, &back, &needed, error, sizeof error) != 0) abort();
        if (back.type != npy.type || back.count != npy.count || back.header_bytes != sizeof header) abort();
        for (size_t cut = 0; cut < npy.header_bytes; cut += 7)
            if (ps_io_npy_parse(data, cut, &back, &needed, error, sizeof error) != 1) abort();
    }

    ps_io_in in;
    ps_io_reader r;
    ps_io_in_open_memory(&in, data, size);
    if (ps_io_reader_open(&r, &in, PS_IO_NPY, PSCAN_TYPE_U8, NULL, -1) == 0) {
        uint64_t values[16], total = 0;
        size_t got = 0;
        while (ps_io_read(&r, values, 16, &got) == 0 && got > 0) total += got;
        if (rc == 0 && r.error[0] == '\0' && total != npy.count) abort();
    }
    ps_io_reader_close(&r);
    return 0;
}
