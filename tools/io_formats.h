/*
 * io_formats.h - the data formats of `pscan scan`: raw binary, text, one CSV column and .npy, read and
 * written as a stream of native-endian elements. Internal to tools/.
 *
 * Every parser is a plain function of bytes in memory (the fuzz targets in tests/fuzz/ call them directly):
 * numbers of each type, option values (format names, --column), the .npy header, and the text and CSV
 * readers, which pull bytes from a ps_io_in that is either a file descriptor or a buffer in memory. Nothing
 * here prints or exits: a failure returns -1 with a one-line message in the reader's or caller's buffer
 * ("line 17: 'abc' is not a valid i32").
 */
#ifndef PSCAN_IO_FORMATS_H
#define PSCAN_IO_FORMATS_H

#include <stddef.h>
#include <stdint.h>

#include "pscan.h"

#define PS_IO_TOKEN_MAX 255   /* the longest number or CSV field the readers accept, in bytes */
#define PS_IO_ERROR_MAX 384   /* the size of every message buffer */
#define PS_IO_NPY_HEADER_MAX 65536 /* the largest .npy header accepted (numpy itself stops at 10000) */

typedef enum ps_io_format { PS_IO_AUTO, PS_IO_RAW, PS_IO_TEXT, PS_IO_CSV, PS_IO_NPY } ps_io_format;

/* "raw", "text", "csv", "npy" (and "auto" for PS_IO_AUTO). */
const char *ps_io_format_name(ps_io_format format);
/* "raw"/"bin", "text"/"txt", "csv", "npy" -> *format; -1 if unknown. */
int ps_io_format_parse(const char *text, ps_io_format *format);
/* The format a path's extension names: .bin .raw -> RAW, .txt .text -> TEXT, .csv -> CSV, .npy -> NPY;
 * else AUTO. */
ps_io_format ps_io_format_from_path(const char *path);
/* Whether the first bytes of a stream look like text (printable ASCII and whitespace, nothing else). */
int ps_io_looks_like_text(const unsigned char *bytes, size_t len);

/* ---- numbers ----------------------------------------------------------------------------------------- */

/* Parses text[0 .. len) as one element of type into value[0 .. size): integers in decimal (leading zeros are
 * decimal, not octal) or 0x hex, with an optional sign; floats as strtod reads them ("2.5", "-1e-3", "inf",
 * "nan"). Returns 0, or -1 with "'abc' is not a valid i32" / "'300' is out of range for u8" in error. Integers
 * and float overflow are range-checked; float underflow rounds (to a subnormal or zero). */
int ps_io_number_parse(const char *text, size_t len, pscan_type type, unsigned char value[8], char *error,
                       size_t error_bytes);
/* Formats one element so that parsing it gives the same bits back (%.9g for f32, %.17g for f64). Returns
 * the length written (buf_bytes >= 32 always suffices). */
size_t ps_io_number_format(pscan_type type, const void *value, char *buf, size_t buf_bytes);

/* ---- option values ----------------------------------------------------------------------------------- */

/* A CSV column: by 1-based number ("3") or by the name in the header row ("price"). */
typedef struct ps_io_column {
    uint64_t index;                  /* 1-based; 0 when chosen by name or not chosen */
    char name[PS_IO_TOKEN_MAX + 1];  /* "" unless chosen by name */
} ps_io_column;
/* "3" -> index 3; "price" -> name "price". Refuses "", "0", and names longer than PS_IO_TOKEN_MAX. */
int ps_io_column_parse(const char *text, ps_io_column *column, char *error, size_t error_bytes);

/* ---- byte input -------------------------------------------------------------------------------------- */

typedef struct ps_io_in {
    int fd;               /* -1: only the bytes already in buf (a buffer in memory) */
    unsigned char *buf;
    size_t pos, len, cap; /* unread bytes are buf[pos .. len) */
    int owned, eof, err;  /* err: errno of a failed read */
} ps_io_in;

/* Buffered input from fd (reads up to 128 KiB at a time). Returns -1 if the buffer cannot be allocated. */
int ps_io_in_open_fd(ps_io_in *in, int fd);
/* Input from bytes in memory (not copied; they must outlive the reader). */
void ps_io_in_open_memory(ps_io_in *in, const void *bytes, size_t len);
void ps_io_in_close(ps_io_in *in);
/* Reads until at least want bytes are buffered or the input ends; returns how many are buffered. */
size_t ps_io_in_fill(ps_io_in *in, size_t want);

/* ---- .npy -------------------------------------------------------------------------------------------- */

typedef struct ps_io_npy {
    pscan_type type;
    uint64_t count;       /* shape[0] */
    size_t header_bytes;  /* where the data start */
} ps_io_npy;

/* Parses a .npy header from bytes[0 .. len) (magic, version, header length, dict). Returns 0; 1 if more bytes
 * are needed (*needed says how many in all); -1 with a message for a header pscan cannot scan: not .npy,
 * big-endian, structured, not 1-D, an unknown dtype. */
int ps_io_npy_parse(const unsigned char *bytes, size_t len, ps_io_npy *npy, size_t *needed, char *error,
                    size_t error_bytes);
/* Writes a version 1.0 header for count elements of type into buf (PS_IO_NPY_HEADER_BYTES); the shape has a
 * fixed width so that a header written before the count was known can be rewritten in place. */
#define PS_IO_NPY_HEADER_BYTES 128
void ps_io_npy_header(pscan_type type, uint64_t count, unsigned char buf[PS_IO_NPY_HEADER_BYTES]);

/* ---- element readers --------------------------------------------------------------------------------- */

typedef struct ps_io_reader {
    ps_io_in in;
    ps_io_format format;       /* never AUTO */
    pscan_type type;
    size_t esize;
    uint64_t remaining;        /* npy: elements left to read */
    uint64_t line;             /* text, csv: the line being read, from 1 */
    /* csv */
    ps_io_column column;
    int header;                /* 1 the first row is a header, 0 it is not, -1 decide from that row */
    uint64_t pending;          /* csv: the line of a first data row read by ps_io_reader_open, else 0 */
    char header_name[PS_IO_TOKEN_MAX + 1]; /* the chosen column's name in the header row, "" if none */
    char token[PS_IO_TOKEN_MAX + 2];
    size_t token_len;
    char error[PS_IO_ERROR_MAX];
} ps_io_reader;

/* Prepares r to read elements of type in format from in (which r takes over). A .npy header is read and
 * checked here, its dtype setting r->type (the caller compares it with --type); so is a CSV's first row, so
 * that r->header_name is known before the first read. Returns 0 or -1 (r->error). */
int ps_io_reader_open(ps_io_reader *r, ps_io_in *in, ps_io_format format, pscan_type type,
                      const ps_io_column *column, int header);
/* Reads up to max elements into dst; *got = 0 at the end. Returns 0, or -1 with the message in r->error. */
int ps_io_read(ps_io_reader *r, void *dst, size_t max, size_t *got);
void ps_io_reader_close(ps_io_reader *r);

/* ---- element writers --------------------------------------------------------------------------------- */

typedef struct ps_io_writer {
    int fd;
    ps_io_format format;       /* never AUTO */
    pscan_type type;
    size_t esize;
    int seekable;              /* fd is a file pscan created: a .npy count can be fixed at the end */
    uint64_t declared, count;  /* .npy: the count in the header; elements written */
    char *buf;
    size_t len, cap;
    int err;                   /* errno of the first failed write */
} ps_io_writer;

/* Starts writing elements of type in format to fd: a .npy header for count elements (UINT64_MAX: not known
 * yet; the header is then rewritten at the end, which needs a seekable fd), a CSV header row (column_name,
 * or "value" when NULL or ""). Returns 0 or -1 (errno in w->err). */
int ps_io_writer_open(ps_io_writer *w, int fd, ps_io_format format, pscan_type type, int seekable,
                      uint64_t count, const char *column_name);
int ps_io_write(ps_io_writer *w, const void *src, size_t n);
/* Flushes, and fixes the .npy header's count if it was not known. Returns 0 or -1 (errno in w->err). */
int ps_io_writer_close(ps_io_writer *w);

#endif /* PSCAN_IO_FORMATS_H */
