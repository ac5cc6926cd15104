/*
 * io_formats.c - raw, text, CSV-column and .npy readers and writers for `pscan scan` (see io_formats.h).
 *
 * Readers pull bytes from a ps_io_in buffer one at a time (text, CSV) or in bulk (raw, .npy data), so their
 * memory use is bounded whatever the input: no line or file is ever held whole. Numbers are parsed by one
 * function for every format and for --init.
 */
#define _POSIX_C_SOURCE 200809L
#include "io_formats.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

static void say(char *error, size_t error_bytes, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void say(char *error, size_t error_bytes, const char *format, ...) {
    va_list args;
    va_start(args, format);
    if (error && error_bytes) vsnprintf(error, error_bytes, format, args);
    va_end(args);
}

/* A token as a message shows it: at most 40 bytes, anything unprintable as '?'. */
static void show(const char *text, size_t len, char out[48]) {
    size_t n = len > 40 ? 40 : len, i;
    for (i = 0; i < n; i++) out[i] = (text[i] >= 0x20 && text[i] < 0x7f) ? text[i] : '?';
    if (len > n) memcpy(out + n, "...", 3), n += 3;
    out[n] = '\0';
}

static int host_little_endian(void) {
    const uint16_t one = 1;
    unsigned char first;
    memcpy(&first, &one, 1);
    return first == 1;
}

/* ---- formats ----------------------------------------------------------------------------------------- */

const char *ps_io_format_name(ps_io_format format) {
    static const char *const names[] = {"auto", "raw", "text", "csv", "npy"};
    return (unsigned)format < sizeof names / sizeof names[0] ? names[format] : "?";
}

int ps_io_format_parse(const char *text, ps_io_format *format) {
    static const struct { const char *name; ps_io_format format; } names[] = {
        {"raw", PS_IO_RAW}, {"bin", PS_IO_RAW}, {"text", PS_IO_TEXT}, {"txt", PS_IO_TEXT},
        {"csv", PS_IO_CSV}, {"npy", PS_IO_NPY}};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(text, names[i].name) == 0) {
            *format = names[i].format;
            return 0;
        }
    return -1;
}

ps_io_format ps_io_format_from_path(const char *path) {
    const char *slash = strrchr(path, '/'), *dot = strrchr(path, '.');
    if (!dot || (slash && dot < slash) || dot == path || dot[-1] == '/') return PS_IO_AUTO;
    dot++;
    if (strcasecmp(dot, "bin") == 0 || strcasecmp(dot, "raw") == 0) return PS_IO_RAW;
    if (strcasecmp(dot, "txt") == 0 || strcasecmp(dot, "text") == 0) return PS_IO_TEXT;
    if (strcasecmp(dot, "csv") == 0) return PS_IO_CSV;
    if (strcasecmp(dot, "npy") == 0) return PS_IO_NPY;
    return PS_IO_AUTO;
}

int ps_io_looks_like_text(const unsigned char *bytes, size_t len) {
    if (len == 0) return 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = bytes[i];
        if (c == 0x7f || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v')) return 0;
    }
    return 1;
}

/* ---- numbers ----------------------------------------------------------------------------------------- */

static int is_float(pscan_type type) { return type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64; }
static int is_signed(pscan_type type) {
    return type == PSCAN_TYPE_I8 || type == PSCAN_TYPE_I16 || type == PSCAN_TYPE_I32 || type == PSCAN_TYPE_I64;
}

/* Stores the low bits of v as an integer of size bytes (two's complement serves both signednesses). */
static void store_integer(unsigned char value[8], uint64_t v, size_t size) {
    uint8_t v8 = (uint8_t)v;
    uint16_t v16 = (uint16_t)v;
    uint32_t v32 = (uint32_t)v;
    const void *src = size == 1 ? (const void *)&v8 : size == 2 ? (const void *)&v16
                                                  : size == 4   ? (const void *)&v32
                                                                : (const void *)&v;
    memcpy(value, src, size);
}

static int digit_value(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return 99;
}

int ps_io_number_parse(const char *text, size_t len, pscan_type type, unsigned char value[8], char *error,
                       size_t error_bytes) {
    char shown[48];
    const char *tname = pscan_type_name(type);
    size_t size = pscan_type_size(type);
    memset(value, 0, 8);
    if (size == 0) {
        say(error, error_bytes, "unknown element type");
        return -1;
    }
    show(text, len, shown);
    if (len == 0 || len > PS_IO_TOKEN_MAX || memchr(text, '\0', len) || text[0] == ' ' || text[0] == '\t' ||
        text[0] == '\n' || text[0] == '\r' || text[0] == '\f' || text[0] == '\v') {
        say(error, error_bytes, "'%s' is not a valid %s", shown, tname);
        return -1;
    }
    if (is_float(type)) {
        char buf[PS_IO_TOKEN_MAX + 1], *end = NULL;
        memcpy(buf, text, len);
        buf[len] = '\0';
        errno = 0;
        int range;
        if (type == PSCAN_TYPE_F32) {
            float v = strtof(buf, &end);
            range = errno == ERANGE && isinf(v);
            memcpy(value, &v, sizeof v);
        } else {
            double v = strtod(buf, &end);
            range = errno == ERANGE && isinf(v);
            memcpy(value, &v, sizeof v);
        }
        if (end != buf + len) {
            say(error, error_bytes, "'%s' is not a valid %s", shown, tname);
            return -1;
        }
        if (range) {
            say(error, error_bytes, "'%s' is out of range for %s", shown, tname);
            return -1;
        }
        return 0;
    }

    const char *p = text, *e = text + len;
    int negative = 0, base = 10, overflow = 0;
    if (*p == '+' || *p == '-') negative = *p++ == '-';
    if (e - p > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) base = 16, p += 2;
    if (p == e) {
        say(error, error_bytes, "'%s' is not a valid %s", shown, tname);
        return -1;
    }
    uint64_t magnitude = 0;
    for (; p < e; p++) {
        int d = digit_value(*p);
        if (d >= base) {
            say(error, error_bytes, "'%s' is not a valid %s", shown, tname);
            return -1;
        }
        if (magnitude > (UINT64_MAX - (uint64_t)d) / (uint64_t)base) overflow = 1;
        else magnitude = magnitude * (uint64_t)base + (uint64_t)d;
    }
    unsigned bits = (unsigned)(8 * size);
    uint64_t limit = is_signed(type) ? (UINT64_MAX >> (65 - bits)) + (negative ? 1u : 0u)
                                     : (negative ? 0u : UINT64_MAX >> (64 - bits));
    if (overflow || magnitude > limit) {
        say(error, error_bytes, "'%s' is out of range for %s", shown, tname);
        return -1;
    }
    store_integer(value, negative ? (uint64_t)0 - magnitude : magnitude, size);
    return 0;
}

size_t ps_io_number_format(pscan_type type, const void *value, char *buf, size_t buf_bytes) {
    union {
        int8_t i8;
        uint8_t u8;
        int16_t i16;
        uint16_t u16;
        int32_t i32;
        uint32_t u32;
        int64_t i64;
        uint64_t u64;
        float f32;
        double f64;
    } v;
    int n;
    memset(&v, 0, sizeof v);
    memcpy(&v, value, pscan_type_size(type));
    switch (type) {
    case PSCAN_TYPE_I8: n = snprintf(buf, buf_bytes, "%d", v.i8); break;
    case PSCAN_TYPE_U8: n = snprintf(buf, buf_bytes, "%u", v.u8); break;
    case PSCAN_TYPE_I16: n = snprintf(buf, buf_bytes, "%d", v.i16); break;
    case PSCAN_TYPE_U16: n = snprintf(buf, buf_bytes, "%u", v.u16); break;
    case PSCAN_TYPE_I32: n = snprintf(buf, buf_bytes, "%" PRId32, v.i32); break;
    case PSCAN_TYPE_U32: n = snprintf(buf, buf_bytes, "%" PRIu32, v.u32); break;
    case PSCAN_TYPE_I64: n = snprintf(buf, buf_bytes, "%" PRId64, v.i64); break;
    case PSCAN_TYPE_U64: n = snprintf(buf, buf_bytes, "%" PRIu64, v.u64); break;
    case PSCAN_TYPE_F32: n = snprintf(buf, buf_bytes, "%.9g", (double)v.f32); break;
    case PSCAN_TYPE_F64: n = snprintf(buf, buf_bytes, "%.17g", v.f64); break;
    default: n = snprintf(buf, buf_bytes, "?"); break;
    }
    if (n < 0) return 0;
    return (size_t)n < buf_bytes ? (size_t)n : buf_bytes ? buf_bytes - 1 : 0;
}

/* ---- option values ----------------------------------------------------------------------------------- */

int ps_io_column_parse(const char *text, ps_io_column *column, char *error, size_t error_bytes) {
    size_t len = strlen(text);
    char shown[48];
    memset(column, 0, sizeof *column);
    show(text, len, shown);
    if (len == 0 || len > PS_IO_TOKEN_MAX) {
        say(error, error_bytes, "--column '%s' is neither a column number (from 1) nor a header name", shown);
        return -1;
    }
    if (strspn(text, "0123456789") == len) {
        uint64_t v = 0;
        for (size_t i = 0; i < len && v <= UINT32_MAX; i++) v = v * 10 + (uint64_t)(text[i] - '0');
        if (v == 0 || v > UINT32_MAX) {
            say(error, error_bytes, "--column %s: columns are numbered from 1 to %" PRIu32, shown, UINT32_MAX);
            return -1;
        }
        column->index = v;
        return 0;
    }
    memcpy(column->name, text, len + 1);
    return 0;
}

/* ---- byte input -------------------------------------------------------------------------------------- */

int ps_io_in_open_fd(ps_io_in *in, int fd) {
    memset(in, 0, sizeof *in);
    in->fd = fd;
    in->cap = 128u << 10;
    in->buf = (unsigned char *)malloc(in->cap);
    in->owned = 1;
    return in->buf ? 0 : -1;
}

void ps_io_in_open_memory(ps_io_in *in, const void *bytes, size_t len) {
    memset(in, 0, sizeof *in);
    in->fd = -1;
    in->buf = (unsigned char *)(uintptr_t)bytes;
    in->len = in->cap = len;
    in->eof = 1;
}

void ps_io_in_close(ps_io_in *in) {
    if (in->owned) free(in->buf);
    memset(in, 0, sizeof *in);
    in->fd = -1;
}

size_t ps_io_in_fill(ps_io_in *in, size_t want) {
    if (want > in->cap) want = in->cap;
    while (in->len - in->pos < want && !in->eof && in->fd >= 0) {
        if (in->len == in->cap) {
            memmove(in->buf, in->buf + in->pos, in->len - in->pos);
            in->len -= in->pos;
            in->pos = 0;
        }
        ssize_t got = read(in->fd, in->buf + in->len, in->cap - in->len);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) in->err = errno;
        if (got <= 0) in->eof = 1;
        else in->len += (size_t)got;
    }
    return in->len - in->pos;
}

static int in_peek(ps_io_in *in) {
    if (in->pos == in->len && ps_io_in_fill(in, 1) == 0) return -1;
    return in->buf[in->pos];
}

static int in_get(ps_io_in *in) {
    int c = in_peek(in);
    if (c >= 0) in->pos++;
    return c;
}

/* ---- .npy -------------------------------------------------------------------------------------------- */

typedef struct npy_cursor {
    const char *p, *e;
} npy_cursor;

static void npy_space(npy_cursor *c) {
    while (c->p < c->e && (*c->p == ' ' || *c->p == '\t' || *c->p == '\n' || *c->p == '\r')) c->p++;
}

/* A quoted Python string without escapes, into out (at most 63 bytes). */
static int npy_string(npy_cursor *c, char out[64]) {
    if (c->p >= c->e || (*c->p != '\'' && *c->p != '"')) return -1;
    char quote = *c->p++;
    size_t n = 0;
    while (c->p < c->e && *c->p != quote) {
        if (*c->p == '\\' || n == 63) return -1;
        out[n++] = *c->p++;
    }
    if (c->p >= c->e) return -1;
    c->p++;
    out[n] = '\0';
    return 0;
}

static int npy_word(npy_cursor *c, const char *word) {
    size_t n = strlen(word);
    if ((size_t)(c->e - c->p) < n || memcmp(c->p, word, n) != 0) return 0;
    c->p += n;
    return 1;
}

/* descr -> type; -1 with a message if pscan cannot scan it. */
static int npy_descr(const char *descr, pscan_type *type, char *error, size_t error_bytes) {
    static const struct { char kind; char size; pscan_type type; } dtypes[] = {
        {'i', '1', PSCAN_TYPE_I8},  {'u', '1', PSCAN_TYPE_U8},  {'i', '2', PSCAN_TYPE_I16},
        {'u', '2', PSCAN_TYPE_U16}, {'i', '4', PSCAN_TYPE_I32}, {'u', '4', PSCAN_TYPE_U32},
        {'i', '8', PSCAN_TYPE_I64}, {'u', '8', PSCAN_TYPE_U64}, {'f', '4', PSCAN_TYPE_F32},
        {'f', '8', PSCAN_TYPE_F64}};
    const char *d = descr;
    char order = '=';
    if (*d == '<' || *d == '>' || *d == '|' || *d == '=') order = *d++;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++) {
        if (d[0] != dtypes[i].kind || d[1] != dtypes[i].size || d[2] != '\0') continue;
        int little = host_little_endian();
        if (dtypes[i].size != '1' && (order == '|' || order == (little ? '>' : '<'))) {
            say(error, error_bytes,
                "dtype '%s' is %s; pscan reads .npy in this machine's byte order: convert with "
                "a.astype('%c%s')",
                descr, order == '|' ? "not valid for a multi-byte type" : little ? "big-endian" : "little-endian",
                little ? '<' : '>', d);
            return -1;
        }
        *type = dtypes[i].type;
        return 0;
    }
    say(error, error_bytes, "dtype '%s' is not one pscan scans (i1 i2 i4 i8 u1 u2 u4 u8 f4 f8)", descr);
    return -1;
}

int ps_io_npy_parse(const unsigned char *bytes, size_t len, ps_io_npy *npy, size_t *needed, char *error,
                    size_t error_bytes) {
    static const unsigned char magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};
    memset(npy, 0, sizeof *npy);
    *needed = 0;
    if (memcmp(bytes, magic, len < 6 ? len : 6) != 0) {
        say(error, error_bytes, "not a .npy file (it does not start with \\x93NUMPY)");
        return -1;
    }
    if (len < 10) return *needed = 10, 1;
    size_t start, header_len;
    if (bytes[6] == 1) {
        start = 10;
        header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8;
    } else if (bytes[6] == 2 || bytes[6] == 3) {
        if (len < 12) return *needed = 12, 1;
        start = 12;
        header_len = (size_t)bytes[8] | (size_t)bytes[9] << 8 | (size_t)bytes[10] << 16 | (size_t)bytes[11] << 24;
    } else {
        say(error, error_bytes, ".npy format version %u.%u is not supported (1.0, 2.0 and 3.0 are)", bytes[6],
            bytes[7]);
        return -1;
    }
    if (header_len > PS_IO_NPY_HEADER_MAX) {
        say(error, error_bytes, ".npy header of %zu bytes is larger than %d", header_len, PS_IO_NPY_HEADER_MAX);
        return -1;
    }
    if (len < start + header_len) return *needed = start + header_len, 1;

    npy_cursor c = {(const char *)bytes + start, (const char *)bytes + start + header_len};
    char key[64], descr[64] = "";
    int have_descr = 0, have_order = 0, have_shape = 0, dims = 0;
    uint64_t shape[2] = {0, 0};
    npy_space(&c);
    if (!npy_word(&c, "{")) goto malformed;
    for (;;) {
        npy_space(&c);
        if (npy_word(&c, "}")) break;
        if (npy_string(&c, key) != 0) goto malformed;
        npy_space(&c);
        if (!npy_word(&c, ":")) goto malformed;
        npy_space(&c);
        if (strcmp(key, "descr") == 0 && !have_descr) {
            if (c.p < c.e && *c.p == '[') {
                say(error, error_bytes, "a structured dtype (fields) is not supported: save one 1-D field");
                return -1;
            }
            if (npy_string(&c, descr) != 0) goto malformed;
            have_descr = 1;
        } else if (strcmp(key, "fortran_order") == 0 && !have_order) {
            /* Either order is the same layout for the 1-D arrays accepted below. */
            if (!npy_word(&c, "False") && !npy_word(&c, "True")) goto malformed;
            have_order = 1;
        } else if (strcmp(key, "shape") == 0 && !have_shape) {
            if (!npy_word(&c, "(")) goto malformed;
            for (;;) {
                npy_space(&c);
                if (npy_word(&c, ")")) break;
                if (c.p >= c.e || *c.p < '0' || *c.p > '9') goto malformed;
                uint64_t v = 0;
                for (; c.p < c.e && *c.p >= '0' && *c.p <= '9'; c.p++) {
                    if (v > (UINT64_MAX - 9) / 10) goto malformed;
                    v = v * 10 + (uint64_t)(*c.p - '0');
                }
                npy_word(&c, "L");
                if (dims < 2) shape[dims] = v;
                if (dims < 64) dims++;
                npy_space(&c);
                if (npy_word(&c, ")")) break;
                if (!npy_word(&c, ",")) goto malformed;
            }
            have_shape = 1;
        } else {
            char shown[48];
            show(key, strlen(key), shown);
            say(error, error_bytes, ".npy header: unexpected or repeated key '%s'", shown);
            return -1;
        }
        npy_space(&c);
        if (npy_word(&c, "}")) break;
        if (!npy_word(&c, ",")) goto malformed;
    }
    npy_space(&c);
    if (c.p != c.e || !have_descr || !have_order || !have_shape) goto malformed;
    if (npy_descr(descr, &npy->type, error, error_bytes) != 0) return -1;
    if (dims != 1) {
        if (dims == 0)
            say(error, error_bytes, "the array is 0-D (a scalar); pscan scans 1-D arrays");
        else
            say(error, error_bytes,
                "the array is %d-D (shape (%" PRIu64 ", %" PRIu64 "%s)); pscan scans 1-D arrays: save "
                "a.ravel() or one column",
                dims, shape[0], shape[1], dims > 2 ? ", ..." : "");
        return -1;
    }
    if (shape[0] > UINT64_MAX / pscan_type_size(npy->type)) {
        say(error, error_bytes, "the array's shape (%" PRIu64 ",) is too large", shape[0]);
        return -1;
    }
    npy->count = shape[0];
    npy->header_bytes = start + header_len;
    return 0;
malformed:
    say(error, error_bytes, ".npy header is malformed (expected {'descr': ..., 'fortran_order': ..., "
                            "'shape': (...)})");
    return -1;
}

void ps_io_npy_header(pscan_type type, uint64_t count, unsigned char buf[PS_IO_NPY_HEADER_BYTES]) {
    static const char *const kinds[] = {"i1", "u1", "i2", "u2", "i4", "u4", "i8", "u8", "f4", "f8"};
    char order = pscan_type_size(type) == 1 ? '|' : host_little_endian() ? '<' : '>';
    char *dict = (char *)buf + 10;
    const size_t dict_bytes = PS_IO_NPY_HEADER_BYTES - 10;
    memset(buf, ' ', PS_IO_NPY_HEADER_BYTES);
    memcpy(buf, "\x93NUMPY\x01\x00", 8);
    buf[8] = (unsigned char)(dict_bytes & 0xff);
    buf[9] = (unsigned char)(dict_bytes >> 8);
    int n = snprintf(dict, dict_bytes, "{'descr': '%c%s', 'fortran_order': False, 'shape': (%" PRIu64 ",), }",
                     order, (unsigned)type < 10 ? kinds[type] : "?", count);
    if (n >= 0 && (size_t)n < dict_bytes) dict[n] = ' '; /* padding after the dict, as numpy writes it */
    buf[PS_IO_NPY_HEADER_BYTES - 1] = '\n';
}

/* ---- element readers --------------------------------------------------------------------------------- */

static int reader_fail(ps_io_reader *r, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static int reader_fail(ps_io_reader *r, const char *format, ...) {
    va_list args;
    va_start(args, format);
    vsnprintf(r->error, sizeof r->error, format, args);
    va_end(args);
    return -1;
}

static int csv_start(ps_io_reader *r);

int ps_io_reader_open(ps_io_reader *r, ps_io_in *in, ps_io_format format, pscan_type type,
                      const ps_io_column *column, int header) {
    memset(r, 0, sizeof *r);
    r->in = *in;
    r->format = format;
    r->type = type;
    r->esize = pscan_type_size(type);
    r->line = 1;
    r->header = header;
    if (column) r->column = *column;
    if (format == PS_IO_CSV) return csv_start(r) < 0 ? -1 : 0;
    if (format != PS_IO_NPY) return 0;

    size_t needed = 10;
    for (;;) {
        size_t have = ps_io_in_fill(&r->in, needed);
        ps_io_npy npy;
        int rc = ps_io_npy_parse(r->in.buf + r->in.pos, have, &npy, &needed, r->error, sizeof r->error);
        if (rc < 0) return -1;
        if (rc == 0) {
            r->in.pos += npy.header_bytes;
            r->type = npy.type;
            r->esize = pscan_type_size(npy.type);
            r->remaining = npy.count;
            return 0;
        }
        if (have >= needed || r->in.eof)
            return reader_fail(r, r->in.err ? "cannot read the .npy header: %s" : "the .npy header is cut short%s",
                               r->in.err ? strerror(r->in.err) : "");
    }
}

void ps_io_reader_close(ps_io_reader *r) { ps_io_in_close(&r->in); }

/* Raw bytes: what is buffered, then straight from the descriptor into dst. */
static int read_raw(ps_io_reader *r, void *dst, size_t max, size_t *got) {
    size_t want = max * r->esize, done = r->in.len - r->in.pos;
    if (done > want) done = want;
    memcpy(dst, r->in.buf + r->in.pos, done);
    r->in.pos += done;
    while (done < want && !r->in.eof && r->in.fd >= 0) {
        ssize_t n = read(r->in.fd, (char *)dst + done, want - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) r->in.err = errno;
        if (n <= 0) r->in.eof = 1;
        else done += (size_t)n;
    }
    if (r->in.err) return reader_fail(r, "read failed: %s", strerror(r->in.err));
    if (done % r->esize != 0)
        return reader_fail(r, "the input ends with %zu bytes, not a whole %zu-byte %s element", done % r->esize,
                           r->esize, pscan_type_name(r->type));
    *got = done / r->esize;
    return 0;
}

static int read_npy(ps_io_reader *r, void *dst, size_t max, size_t *got) {
    if (max > r->remaining) max = (size_t)r->remaining;
    if (read_raw(r, dst, max, got) != 0) return -1;
    r->remaining -= *got;
    if (*got < max)
        return reader_fail(r, "the .npy data end %" PRIu64 " elements before the shape in its header says",
                           r->remaining);
    if (r->remaining == 0 && max == 0 && ps_io_in_fill(&r->in, 1) > 0)
        return reader_fail(r, "the .npy file has bytes after the elements its header declares");
    return 0;
}

static int is_space(int c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\f' || c == '\v'; }

static int parse_token(ps_io_reader *r, const char *text, size_t len, void *dst, uint64_t line, uint64_t column) {
    char message[PS_IO_ERROR_MAX];
    unsigned char value[8];
    if (len > PS_IO_TOKEN_MAX)
        return column ? reader_fail(r, "line %" PRIu64 ", column %" PRIu64 ": a value longer than %d bytes", line,
                                    column, PS_IO_TOKEN_MAX)
                      : reader_fail(r, "line %" PRIu64 ": a value longer than %d bytes", line, PS_IO_TOKEN_MAX);
    if (ps_io_number_parse(text, len, r->type, value, message, sizeof message) != 0)
        return column ? reader_fail(r, "line %" PRIu64 ", column %" PRIu64 ": %s", line, column, message)
                      : reader_fail(r, "line %" PRIu64 ": %s", line, message);
    memcpy(dst, value, r->esize);
    return 0;
}

/* Text: numbers separated by whitespace or commas, '#' starts a comment that runs to the end of the line. */
static int read_text(ps_io_reader *r, void *dst, size_t max, size_t *got) {
    size_t n = 0;
    while (n < max) {
        int c = in_peek(&r->in);
        if (c < 0) break;
        if (c == '#') {
            while ((c = in_get(&r->in)) >= 0 && c != '\n') {}
            if (c == '\n') r->line++;
            continue;
        }
        if (is_space(c) || c == ',') {
            r->in.pos++;
            if (c == '\n') r->line++;
            continue;
        }
        size_t len = 0;
        while ((c = in_peek(&r->in)) >= 0 && !is_space(c) && c != ',' && c != '#') {
            if (len <= PS_IO_TOKEN_MAX) r->token[len] = (char)c;
            len++;
            r->in.pos++;
        }
        if (parse_token(r, r->token, len > PS_IO_TOKEN_MAX ? PS_IO_TOKEN_MAX + 1 : len,
                        (char *)dst + n * r->esize, r->line, 0) != 0)
            return -1;
        n++;
    }
    if (r->in.err) return reader_fail(r, "read failed: %s", strerror(r->in.err));
    *got = n;
    return 0;
}

/* Trims spaces, tabs and carriage returns from both ends of text[0 .. *len). */
static const char *trim(const char *text, size_t *len) {
    while (*len && (text[0] == ' ' || text[0] == '\t' || text[0] == '\r')) text++, (*len)--;
    while (*len && (text[*len - 1] == ' ' || text[*len - 1] == '\t' || text[*len - 1] == '\r')) (*len)--;
    return text;
}

/* Reads one CSV record (RFC 4180: "quoted, fields" with "" for a quote, newlines inside quotes). Field want
 * (from 0) lands in r->token / r->token_len (PS_IO_TOKEN_MAX + 1 if longer); with match, the first field equal
 * to r->column.name sets *found to its number (from 1). Blank lines are skipped. Returns 1, 0 at the end of
 * the input, -1 on an unterminated quote or text after a closing quote. */
static int csv_record(ps_io_reader *r, uint64_t want, int match, uint64_t *fields, uint64_t *found,
                      uint64_t *first_line) {
    char field[PS_IO_TOKEN_MAX + 2];
    for (;;) {
        int c = in_peek(&r->in);
        if (c < 0) return 0;
        *first_line = r->line;
        *fields = 0;
        r->token_len = 0;
        int blank = 1;
        for (;;) { /* one field per iteration */
            size_t len = 0;
            c = in_get(&r->in);
            while (c == ' ' || c == '\t') {
                field[len < PS_IO_TOKEN_MAX + 1 ? len++ : len] = (char)c;
                c = in_get(&r->in);
            }
            if (c == '"') {
                len = 0; /* the spaces before a quote are not part of the field */
                blank = 0;
                for (;;) {
                    c = in_get(&r->in);
                    if (c < 0)
                        return reader_fail(r, "line %" PRIu64 ": a quoted field is never closed", *first_line);
                    if (c == '\n') r->line++;
                    if (c == '"' && in_peek(&r->in) == '"') r->in.pos++;
                    else if (c == '"') break;
                    if (len < PS_IO_TOKEN_MAX + 1) field[len++] = (char)c;
                }
                while ((c = in_get(&r->in)) == ' ' || c == '\t' || c == '\r') {}
                if (c >= 0 && c != ',' && c != '\n')
                    return reader_fail(r, "line %" PRIu64 ": text after a closing quote", r->line);
            } else {
                while (c >= 0 && c != ',' && c != '\n') {
                    if (len < PS_IO_TOKEN_MAX + 1) field[len++] = (char)c;
                    c = in_get(&r->in);
                }
            }
            size_t tlen = len;
            const char *t = trim(field, &tlen);
            if (tlen || c == ',') blank = 0;
            if (*fields == want) {
                memcpy(r->token, t, tlen);
                r->token_len = tlen;
            }
            if (match && !*found && tlen == strlen(r->column.name) && memcmp(t, r->column.name, tlen) == 0)
                *found = *fields + 1;
            (*fields)++;
            if (c == '\n') r->line++;
            if (c != ',') break;
        }
        if (!blank) return 1;
    }
}

/* The first row: a header (named column, --header, or a column whose first field is not a number) or the
 * first data row, whose value is then kept in r->token for the first read (r->pending). */
static int csv_start(ps_io_reader *r) {
    uint64_t fields = 0, found = 0, line = 0;
    if (r->column.name[0]) {
        int rc = csv_record(r, UINT64_MAX, 1, &fields, &found, &line);
        if (rc <= 0) return rc;
        if (!found)
            return reader_fail(r, "line %" PRIu64 ": no column named '%s' in the header row", line,
                               r->column.name);
        r->column.index = found;
        memcpy(r->header_name, r->column.name, sizeof r->header_name);
        return 0;
    }
    int chosen = r->column.index != 0;
    if (!chosen) r->column.index = 1;
    int rc = csv_record(r, r->column.index - 1, 0, &fields, &found, &line);
    if (rc <= 0) return rc;
    if (!chosen && fields > 1)
        return reader_fail(r, "line %" PRIu64 ": %" PRIu64 " columns; choose one with --column N (from 1) or "
                              "--column NAME", line, fields);
    unsigned char value[8];
    int numeric = fields >= r->column.index && r->token_len <= PS_IO_TOKEN_MAX &&
                  ps_io_number_parse(r->token, r->token_len, r->type, value, NULL, 0) == 0;
    if (r->header == 1 || (r->header < 0 && !numeric)) {
        if (fields >= r->column.index && r->token_len <= PS_IO_TOKEN_MAX) {
            memcpy(r->header_name, r->token, r->token_len);
            r->header_name[r->token_len] = '\0';
        }
        return 0;
    }
    if (fields < r->column.index)
        return reader_fail(r, "line %" PRIu64 ": %" PRIu64 " field%s, no column %" PRIu64, line, fields,
                           fields == 1 ? "" : "s", r->column.index);
    r->pending = line;
    return 0;
}

static int read_csv(ps_io_reader *r, void *dst, size_t max, size_t *got) {
    uint64_t fields = 0, found = 0, line = 0;
    size_t n = 0;
    if (r->pending && max > 0) {
        if (parse_token(r, r->token, r->token_len, dst, r->pending, r->column.index) != 0) return -1;
        r->pending = 0;
        n = 1;
    }
    while (n < max) {
        int rc = csv_record(r, r->column.index - 1, 0, &fields, &found, &line);
        if (rc < 0) return -1;
        if (rc == 0) break;
        if (fields < r->column.index)
            return reader_fail(r, "line %" PRIu64 ": %" PRIu64 " field%s, no column %" PRIu64, line, fields,
                               fields == 1 ? "" : "s", r->column.index);
        if (r->token_len == 0)
            return reader_fail(r, "line %" PRIu64 ", column %" PRIu64 ": empty value", line, r->column.index);
        if (parse_token(r, r->token, r->token_len, (char *)dst + n * r->esize, line, r->column.index) != 0)
            return -1;
        n++;
    }
    if (r->in.err) return reader_fail(r, "read failed: %s", strerror(r->in.err));
    *got = n;
    return 0;
}

int ps_io_read(ps_io_reader *r, void *dst, size_t max, size_t *got) {
    *got = 0;
    switch (r->format) {
    case PS_IO_RAW: return read_raw(r, dst, max, got);
    case PS_IO_NPY: return read_npy(r, dst, max, got);
    case PS_IO_TEXT: return read_text(r, dst, max, got);
    case PS_IO_CSV: return read_csv(r, dst, max, got);
    default: return reader_fail(r, "internal: no reader for format %s", ps_io_format_name(r->format));
    }
}

/* ---- element writers --------------------------------------------------------------------------------- */

static int write_all(ps_io_writer *w, const void *bytes, size_t len) {
    for (size_t done = 0; done < len && !w->err;) {
        ssize_t put = write(w->fd, (const char *)bytes + done, len - done);
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) w->err = errno;
        else done += (size_t)put;
    }
    return w->err ? -1 : 0;
}

static int flush(ps_io_writer *w) {
    int rc = write_all(w, w->buf, w->len);
    w->len = 0;
    return rc;
}

int ps_io_writer_open(ps_io_writer *w, int fd, ps_io_format format, pscan_type type, int seekable,
                      uint64_t count, const char *column_name) {
    memset(w, 0, sizeof *w);
    w->fd = fd;
    w->format = format;
    w->type = type;
    w->esize = pscan_type_size(type);
    w->seekable = seekable;
    w->cap = 64u << 10;
    w->buf = (char *)malloc(w->cap);
    if (!w->buf) return w->err = ENOMEM, -1;
    if (format == PS_IO_NPY) {
        if (count == UINT64_MAX && !seekable) return w->err = ESPIPE, -1;
        w->declared = count == UINT64_MAX ? 0 : count;
        ps_io_npy_header(type, w->declared, (unsigned char *)w->buf);
        w->len = PS_IO_NPY_HEADER_BYTES;
    } else if (format == PS_IO_CSV) {
        const char *name = column_name && *column_name ? column_name : "value";
        int quote = strpbrk(name, ",\"\r\n") != NULL || name[0] == ' ' || name[strlen(name) - 1] == ' ';
        if (quote) w->buf[w->len++] = '"';
        for (; *name && w->len < w->cap - 4; name++) {
            if (*name == '"') w->buf[w->len++] = '"';
            w->buf[w->len++] = *name;
        }
        if (quote) w->buf[w->len++] = '"';
        w->buf[w->len++] = '\n';
    }
    return 0;
}

int ps_io_write(ps_io_writer *w, const void *src, size_t n) {
    const unsigned char *p = (const unsigned char *)src;
    if (w->format == PS_IO_RAW || w->format == PS_IO_NPY) {
        size_t bytes = n * w->esize;
        if (w->len + bytes > w->cap) {
            if (flush(w) != 0) return -1;
            if (bytes > w->cap) {
                w->count += n;
                return write_all(w, p, bytes);
            }
        }
        memcpy(w->buf + w->len, p, bytes);
        w->len += bytes;
    } else {
        for (size_t i = 0; i < n; i++) {
            if (w->cap - w->len < 48 && flush(w) != 0) return -1;
            w->len += ps_io_number_format(w->type, p + i * w->esize, w->buf + w->len, w->cap - w->len);
            w->buf[w->len++] = '\n';
        }
    }
    w->count += n;
    return w->err ? -1 : 0;
}

int ps_io_writer_close(ps_io_writer *w) {
    int rc = w->buf ? flush(w) : -1;
    if (rc == 0 && w->format == PS_IO_NPY && w->declared != w->count) {
        unsigned char header[PS_IO_NPY_HEADER_BYTES];
        ps_io_npy_header(w->type, w->count, header);
        if (!w->seekable) w->err = ESPIPE;
        else if (pwrite(w->fd, header, sizeof header, 0) != (ssize_t)sizeof header) w->err = errno ? errno : EIO;
        rc = w->err ? -1 : 0;
    }
    free(w->buf);
    w->buf = NULL;
    return rc;
}
