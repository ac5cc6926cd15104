/*
 * fuzz_options.c - the option values `pscan scan` parses: --format/--in-format/--out-format names, --column,
 * --type/--op/--backend/--algo names, --init for every type, and the format an OUT or IN path's extension
 * or first bytes imply. Never crashes; a refusal always says why.
 * Input: byte 0 picks the option, the rest is its value (NUL-terminated here, as argv is).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1 || size > 4096) return 0;
    char *text = (char *)malloc(size);
    memcpy(text, data + 1, size - 1);
    text[size - 1] = '\0';
    char error[PS_IO_ERROR_MAX] = "";
    unsigned char value[8];
    switch (data[0] % 6) {
    case 0: {
        ps_io_format format;
        if (ps_io_format_parse(text, &format) == 0 && format == PS_IO_AUTO) abort();
        break;
    }
    case 1: {
        ps_io_column column;
        int rc = ps_io_column_parse(text, &column, error, sizeof error);
        if (rc != 0 && error[0] == '\0') abort();
        if (rc == 0 && (column.index == 0) == (column.name[0] == '\0')) abort();
        break;
    }
    case 2: {
        pscan_type type;
        pscan_op op;
        pscan_backend backend;
        pscan_algo algo;
        if (pscan_type_parse(text, &type) == PSCAN_SUCCESS && pscan_type_name(type) == NULL) abort();
        if (pscan_op_parse(text, &op) == PSCAN_SUCCESS && pscan_op_name(op) == NULL) abort();
        if (pscan_backend_parse(text, &backend) == PSCAN_SUCCESS && pscan_backend_name(backend) == NULL) abort();
        if (pscan_algo_parse(text, &algo) == PSCAN_SUCCESS && pscan_algo_name(algo) == NULL) abort();
        break;
    }
    case 3:
        for (int t = 0; t < PSCAN_TYPE_COUNT; t++)
            if (ps_io_number_parse(text, strlen(text), (pscan_type)t, value, error, sizeof error) != 0 &&
                error[0] == '\0')
                abort();
        break;
    case 4: (void)ps_io_format_from_path(text); break;
    default: (void)ps_io_looks_like_text((const unsigned char *)data + 1, size - 1); break;
    }
    free(text);
    return 0;
}
