/*
 * fuzz_number.c - ps_io_number_parse for every element type: never crashes, and whatever it accepts prints
 * (ps_io_number_format) to text that parses back to the same bits (NaN to a NaN).
 * Input: byte 0 picks the type, the rest is the text.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "io_formats.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    pscan_type type = (pscan_type)(data[0] % PSCAN_TYPE_COUNT);
    size_t esize = pscan_type_size(type);
    unsigned char value[8], again[8];
    char error[PS_IO_ERROR_MAX], text[64];
    if (ps_io_number_parse((const char *)data + 1, size - 1, type, value, error, sizeof error) != 0) {
        if (error[0] == '\0') abort(); /* a refusal always says why */
        return 0;
    }
    size_t len = ps_io_number_format(type, value, text, sizeof text);
    if (len == 0 || len >= sizeof text - 1) abort();
    if (ps_io_number_parse(text, len, type, again, error, sizeof error) != 0) abort();
    if (type == PSCAN_TYPE_F32) {
        float a, b;
        memcpy(&a, value, 4), memcpy(&b, again, 4);
        if (isnan(a) ? !isnan(b) : memcmp(value, again, esize) != 0) abort();
    } else if (type == PSCAN_TYPE_F64) {
        double a, b;
        memcpy(&a, value, 8), memcpy(&b, again, 8);
        if (isnan(a) ? !isnan(b) : memcmp(value, again, esize) != 0) abort();
    } else if (memcmp(value, again, esize) != 0) {
        abort();
    }
    return 0;
}
