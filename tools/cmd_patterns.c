/*
 * cmd_patterns.c - the patterns scan makes possible, on files: `pscan reduce`, `pscan compact`, `pscan split`,
 * `pscan expand`, `pscan sort`, `pscan histogram`, `pscan rle`, `pscan segscan` and `pscan recur` (docs/cli.md is
 * the user's guide).
 *
 * Files are opened, sniffed and written exactly as by `pscan scan` (cli_files.c: formats raw, text, CSV column,
 * .npy; OUT written to a temporary file and renamed into place), but each input is read whole into memory and
 * sent to the device in one call: a compaction's or an expansion's output size is known only at the end, and
 * one call keeps each command a direct use of the library's contract (the count or total comes back in device
 * memory). Several outputs (keys and values, indices and ranks) are written one after the other.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "cli_files.h"
#include "io_formats.h"

static const char patterns_usage[] =
    "usage: pscan reduce IN [--type T] [--op OP] [--init V]\n"
    "       pscan compact IN OUT [--type T] (--flags FLAGS | --keep PRED) [--values VIN VOUT --value-type T]\n"
    "       pscan split IN OUT   [--type T] (--flags FLAGS | --keep PRED) [--values VIN VOUT --value-type T]\n"
    "       pscan expand COUNTS OUT [--type u32|u64] [--index-type u32|u64] [--ranks RANKS]\n"
    "                               [--values VIN VOUT --value-type T]\n"
    "       pscan sort IN OUT [--type T] [--descending] [--bits B:E] [--values VIN VOUT --value-type T]\n"
    "       pscan histogram IN [--type T] --bins N --range LO:HI [--out FILE]\n"
    "       pscan histogram IN [--type T] --edges EDGES [--bins N] [--out FILE]\n"
    "       pscan rle IN VALUES_OUT LENGTHS_OUT [--type T]\n"
    "       pscan rle --decode VALUES LENGTHS OUT [--type T]\n"
    "       pscan segscan IN OUT [--type T] [--op OP] (--offsets OFFSETS | --flags FLAGS) [--exclusive] [--reverse]\n"
    "                            [--init V]\n"
    "       pscan recur A B [C] OUT [--type f32|f64] [--order 1|2] [--reverse] [--init Y1] [--init2 Y2]\n"
    "       pscan recur C OUT --at X [--type f32|f64] [--reverse]\n"
    "   common: [--format F | --in-format F --out-format F] [--backend B] [--algo A] [--quiet]\n"
    "\n"
    "reduce   prints init (+) IN[0] (+) ... (+) IN[n-1] on stdout (--op sum product min max and or xor).\n"
    "compact  writes the items of IN that are kept, in order: FLAGS is a u8 file of the same length (nonzero\n"
    "         keeps), or PRED compares each item with a constant: '>0' '>=3' '<-1' '<=2.5' '==7' '!=0', or\n"
    "         'nonzero'; 'unique' keeps each item that differs from the one before it (drops consecutive\n"
    "         duplicates). --values carries a payload file VIN (of --value-type, 1, 2, 4 or 8 bytes) along into VOUT.\n"
    "split    writes every item: the kept ones first, then the others, each group in input order.\n"
    "compact and split report the number kept on stderr (\"kept K of N\"), unless --quiet.\n"
    "expand   COUNTS holds one count per item (u32 or u64); OUT gets, for each of the sum-of-counts slots, the\n"
    "         index of the item it came from; --ranks writes each slot's rank within its item's run, --values\n"
    "         the item's value from VIN.\n"
    "sort     a stable radix sort of IN (floats: -0 before +0, NaNs last); --descending reverses the order,\n"
    "         --bits B:E sorts by bits [B, E) of the key only (signed keys with the sign bit flipped), --values\n"
    "         moves a payload with each key.\n"
    "histogram counts IN in N bins evenly spaced over [LO, HI) (LO <= x < HI; integer bounds for integer\n"
    "         types), or between the ascending EDGES (a file of N + 1 elements of T); prints one u64 count per\n"
    "         line, or writes them to --out FILE. Samples outside the bins and NaNs count nowhere.\n"
    "rle      writes each run of equal consecutive elements once to VALUES_OUT and its length (u64) to\n"
    "         LENGTHS_OUT (bit for bit: -0.0 != +0.0). --decode is the inverse: OUT gets each of VALUES\n"
    "         repeated its LENGTHS (u64) times (pscan_expand; a length 0 writes nothing).\n"
    "segscan  scans each segment of IN: OFFSETS is a u64 file 0 = o0 <= o1 <= ... <= oS = n (segment k is\n"
    "         [ok, ok+1)), FLAGS a u8 file of IN's length (nonzero starts a segment); --init V goes in front\n"
    "         of every segment.\n"
    "recur    the linear recurrence OUT[i] = A[i] OUT[i-1] + B[i] from --init Y1 (default 0), or with C (the\n"
    "         second order) OUT[i] = A[i] OUT[i-1] + B[i] OUT[i-2] + C[i] from Y1 = OUT[-1], Y2 = OUT[-2];\n"
    "         --reverse runs from the end (OUT[i+1], OUT[i+2]). A, B and C have the same length and type.\n"
    "         --at X: Horner's rule, OUT[i] = X OUT[i-1] + C[i] from 0 (pscan_polyval): C holds a polynomial's\n"
    "         coefficients, highest degree first, OUT every Horner prefix, its last element the value at X;\n"
    "         with --reverse, lowest degree first, and the value is OUT[0].\n"
    "sort, rle, segscan and recur report a summary on stderr, unless --quiet.\n"
    "Example: printf '3 1 7 0 4 1 6 3' | pscan compact - - --format text --type i32 --keep '>2'\n"
    "         -> 3 7 4 6 3, one per line\n";

typedef struct patterns_options {
    const char *command;
    const char *paths[4]; /* IN and OUT (COUNTS and OUT; rle: IN VALUES_OUT LENGTHS_OUT; recur: A B [C] OUT) */
    int positional;
    ps_cli_input_spec in;
    ps_io_format out_format;
    pscan_backend backend;
    pscan_algo algo;
    pscan_op op;
    const char *init_text, *flags_path, *keep_text, *values_in, *values_out, *ranks_path;
    pscan_type value_type, index_type;
    int have_value_type, quiet;
    const char *bits_text, *range_text, *edges_path, *out_path, *offsets_path; /* sort, histogram, segscan */
    uint64_t bins;                                                             /* 0: not given */
    int descending, exclusive, reverse;
    int decode;             /* rle --decode: VALUES LENGTHS OUT */
    const char *init2_text; /* recur */
    const char *at_text;    /* recur --at X: Horner's rule (pscan_polyval) of C OUT */
    uint64_t order;         /* recur: 0 (from the number of inputs), 1 or 2 */
} patterns_options;

/* How many positional paths each command takes, and what they are called in a message. */
static int positional_count(const char *command) {
    if (strcmp(command, "reduce") == 0 || strcmp(command, "histogram") == 0) return 1;
    if (strcmp(command, "recur") == 0) return 4; /* at most: A B C OUT; A B OUT is the first order */
    return strcmp(command, "rle") == 0 ? 3 : 2;
}

static int parse_format(const char *option, const char *text, ps_io_format *format) {
    if (ps_io_format_parse(text, format) == 0) return PS_CLI_OK;
    ps_cli_error("%s '%s' is not one of raw text csv npy", option, text);
    return PS_CLI_USAGE;
}

static int parse_options(int argc, char **argv, patterns_options *o) {
    memset(o, 0, sizeof *o);
    o->command = argv[0];
    o->in.header = -1;
    o->op = PSCAN_OP_SUM;
    o->algo = PSCAN_ALGO_AUTO;
    o->backend = PSCAN_BACKEND_AUTO;
    o->index_type = PSCAN_TYPE_U64;
    ps_io_format both = PS_IO_AUTO;
    const int reduce = strcmp(o->command, "reduce") == 0, expand = strcmp(o->command, "expand") == 0;
    const int sort = strcmp(o->command, "sort") == 0, histogram = strcmp(o->command, "histogram") == 0;
    const int rle = strcmp(o->command, "rle") == 0, segscan = strcmp(o->command, "segscan") == 0;
    const int recur = strcmp(o->command, "recur") == 0;
    const int select = !reduce && !expand && !sort && !histogram && !rle && !segscan && !recur; /* compact, split */
    const int wanted = positional_count(o->command);
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m, r = PS_CLI_OK;
        if (ps_cli_is_help(argv[i])) {
            fputs(patterns_usage, stdout);
            return -1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->in.type);
            o->in.have_type = 1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--value-type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->value_type);
            o->have_value_type = 1;
        } else if (expand && (m = ps_cli_option(argc, argv, &i, "--index-type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->index_type);
        } else if ((reduce || segscan) && (m = ps_cli_option(argc, argv, &i, "--op", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_op(v, &o->op);
        } else if ((reduce || segscan || recur) && (m = ps_cli_option(argc, argv, &i, "--init", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->init_text = v;
        } else if ((select || segscan) && (m = ps_cli_option(argc, argv, &i, "--flags", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->flags_path = v;
        } else if (select && (m = ps_cli_option(argc, argv, &i, "--keep", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->keep_text = v;
        } else if (expand && (m = ps_cli_option(argc, argv, &i, "--ranks", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->ranks_path = v;
        } else if (segscan && (m = ps_cli_option(argc, argv, &i, "--offsets", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->offsets_path = v;
        } else if (segscan && strcmp(argv[i], "--exclusive") == 0) {
            o->exclusive = 1;
        } else if (recur && (m = ps_cli_option(argc, argv, &i, "--init2", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->init2_text = v;
        } else if (recur && (m = ps_cli_option(argc, argv, &i, "--at", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->at_text = v;
        } else if (recur && (m = ps_cli_option(argc, argv, &i, "--order", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--order", 1, 2, &o->order);
        } else if ((segscan || recur) && strcmp(argv[i], "--reverse") == 0) {
            o->reverse = 1;
        } else if (rle && strcmp(argv[i], "--decode") == 0) {
            o->decode = 1;
        } else if (sort && strcmp(argv[i], "--descending") == 0) {
            o->descending = 1;
        } else if (sort && (m = ps_cli_option(argc, argv, &i, "--bits", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->bits_text = v;
        } else if (histogram && (m = ps_cli_option(argc, argv, &i, "--bins", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--bins", 1, PSCAN_HISTOGRAM_MAX_BINS, &o->bins);
        } else if (histogram && (m = ps_cli_option(argc, argv, &i, "--range", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->range_text = v;
        } else if (histogram && (m = ps_cli_option(argc, argv, &i, "--edges", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->edges_path = v;
        } else if (histogram && (m = ps_cli_option(argc, argv, &i, "--out", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->out_path = v;
        } else if ((select || expand || sort) && strcmp(argv[i], "--values") == 0) {
            if (i + 2 >= argc) {
                ps_cli_error("%s: --values needs VIN and VOUT", o->command);
                r = PS_CLI_USAGE;
            } else {
                o->values_in = argv[++i];
                o->values_out = argv[++i];
            }
        } else if ((m = ps_cli_option(argc, argv, &i, "--backend", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_backend(v, &o->backend);
        } else if ((m = ps_cli_option(argc, argv, &i, "--algo", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_algo(v, &o->algo);
        } else if ((m = ps_cli_option(argc, argv, &i, "--format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--format", v, &both);
        } else if ((m = ps_cli_option(argc, argv, &i, "--in-format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--in-format", v, &o->in.in_format);
        } else if ((m = ps_cli_option(argc, argv, &i, "--out-format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--out-format", v, &o->out_format);
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            o->quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            ps_cli_error("%s: unknown option '%s' (pscan %s --help)", o->command, argv[i], o->command);
            r = PS_CLI_USAGE;
        } else if (o->positional < wanted) {
            o->paths[o->positional++] = argv[i];
        } else {
            ps_cli_error("%s: unexpected argument '%s'", o->command, argv[i]);
            r = PS_CLI_USAGE;
        }
        if (r != PS_CLI_OK) return r;
    }
    if (recur && o->at_text) {
        if (o->positional != 2 || o->init_text || o->init2_text || o->order) {
            ps_cli_error("recur --at X: needs C OUT and takes no --init, --init2 or --order (pscan recur --help)");
            return PS_CLI_USAGE;
        }
    } else if (recur && (o->positional < 3 || (o->order && (uint64_t)o->positional != o->order + 2))) {
        ps_cli_error("recur: needs A B OUT (first order) or A B C OUT (second order)%s (pscan recur --help)",
                     o->order ? ", as --order says" : "");
        return PS_CLI_USAGE;
    }
    if (recur && o->at_text) {
        o->order = 0; /* Horner's rule: run_recur's own branch */
    } else if (recur) {
        o->order = (uint64_t)o->positional - 2;
        if (o->init2_text && o->order == 1) {
            ps_cli_error("recur: --init2 is the second order's y[-2] (give A B C OUT)");
            return PS_CLI_USAGE;
        }
    } else if (o->positional < wanted) {
        ps_cli_error("%s: needs %s (pscan %s --help)", o->command,
                     wanted == 1                ? "IN"
                     : expand                   ? "COUNTS and OUT"
                     : rle && o->decode ? "VALUES, LENGTHS and OUT"
                     : rle                      ? "IN, VALUES_OUT and LENGTHS_OUT"
                                                : "IN and OUT",
                     o->command);
        return PS_CLI_USAGE;
    }
    if (select && !o->flags_path == !o->keep_text) {
        ps_cli_error("%s: needs one of --flags FLAGS and --keep PRED", o->command);
        return PS_CLI_USAGE;
    }
    if (segscan && !o->flags_path == !o->offsets_path) {
        ps_cli_error("segscan: needs one of --offsets OFFSETS and --flags FLAGS");
        return PS_CLI_USAGE;
    }
    if (histogram && !o->range_text == !o->edges_path) {
        ps_cli_error("histogram: needs one of --range LO:HI (with --bins N) and --edges EDGES");
        return PS_CLI_USAGE;
    }
    if (histogram && o->range_text && o->bins == 0) {
        ps_cli_error("histogram: --range needs --bins N");
        return PS_CLI_USAGE;
    }
    if (o->values_in && !o->have_value_type) {
        ps_cli_error("%s: --values needs --value-type (the payload's element type)", o->command);
        return PS_CLI_USAGE;
    }
    if (expand && o->index_type != PSCAN_TYPE_U32 && o->index_type != PSCAN_TYPE_U64) {
        ps_cli_error("expand: --index-type must be u32 or u64");
        return PS_CLI_USAGE;
    }
    if (o->in.in_format == PS_IO_AUTO) o->in.in_format = both;
    if (o->out_format == PS_IO_AUTO) o->out_format = both;
    o->in.in_path = o->paths[0];
    return PS_CLI_OK;
}

/* ---- files ------------------------------------------------------------------------------------------- */

/* Reads the whole of a file (format from spec, as pscan scan finds it) into a malloc'd buffer. */
static int read_all(ps_cli_input_spec *spec, void **data, uint64_t *n) {
    ps_cli_input in;
    *data = NULL;
    *n = 0;
    int r = ps_cli_input_open(spec, &in);
    const size_t esize = pscan_type_size(spec->type);
    size_t cap = in.count != UINT64_MAX && in.count > 0 ? (size_t)in.count : 4096;
    unsigned char *buf = r == PS_CLI_OK ? (unsigned char *)malloc(cap * esize) : NULL;
    if (r == PS_CLI_OK && !buf) ps_cli_error("out of memory"), r = PS_CLI_FAILURE;
    while (r == PS_CLI_OK) {
        if (*n == cap) {
            unsigned char *grown = (unsigned char *)realloc(buf, 2 * cap * esize);
            if (!grown) {
                ps_cli_error("out of memory reading %s", spec->in_path);
                r = PS_CLI_FAILURE;
                break;
            }
            buf = grown, cap *= 2;
        }
        size_t got = 0;
        if (ps_io_read(&in.reader, buf + *n * esize, cap - (size_t)*n, &got) != 0) {
            ps_cli_error("%s: %s", strcmp(spec->in_path, "-") == 0 ? "stdin" : spec->in_path, in.reader.error);
            r = PS_CLI_FAILURE;
        }
        if (got == 0) break;
        *n += got;
    }
    ps_io_reader_close(&in.reader); /* zeroed by the opener, so safe after any failure */
    if (in.fd > STDIN_FILENO) close(in.fd);
    if (r != PS_CLI_OK) free(buf), buf = NULL, *n = 0;
    *data = buf;
    return r;
}

/* Reads a second input (flags, values) of a known type, whose length must be n. */
static int read_companion(const patterns_options *o, const char *what, const char *path, pscan_type type, uint64_t n,
                          void **data) {
    ps_cli_input_spec spec = {path, o->in.in_format, {0, ""}, -1, 1, type};
    uint64_t got = 0;
    int r = read_all(&spec, data, &got);
    if (r == PS_CLI_OK && got != n) {
        ps_cli_error("%s: %s %s holds %" PRIu64 " elements, but %s holds %" PRIu64, o->command, what, path, got,
                     strcmp(o->paths[0], "-") == 0 ? "stdin" : o->paths[0], n);
        free(*data), *data = NULL;
        r = PS_CLI_FAILURE;
    }
    return r;
}

/* Writes n elements of type to path (format: named, else the extension's, else fallback). */
static int write_all(const char *path, ps_io_format format, ps_io_format fallback, pscan_type type, const void *data,
                     uint64_t n) {
    if (format == PS_IO_AUTO && strcmp(path, "-") != 0) format = ps_io_format_from_path(path);
    if (format == PS_IO_AUTO) format = fallback;
    ps_cli_output out;
    int r = ps_cli_output_open(path, &out);
    if (r != PS_CLI_OK) return r;
    ps_io_writer w;
    if (ps_io_writer_open(&w, out.fd, format, type, out.seekable, n, NULL) != 0 ||
        ps_io_write(&w, data, (size_t)n) != 0) {
        ps_cli_error("cannot write %s: %s", path, strerror(w.err));
        r = PS_CLI_FAILURE;
    }
    if (ps_io_writer_close(&w) != 0 && r == PS_CLI_OK) {
        ps_cli_error("cannot write %s: %s", path, strerror(w.err));
        r = PS_CLI_FAILURE;
    }
    return ps_cli_output_close(&out, r);
}

/* ---- device ------------------------------------------------------------------------------------------ */

typedef struct device {
    pscan_context *ctx;
    void *buffers[8];
    int count;
} device;

/* Device memory for bytes (at least one byte), with host data uploaded when given. */
static int device_buffer(device *d, size_t bytes, const void *host, void **ptr) {
    pscan_status s = pscan_memory_alloc(d->ctx, bytes ? bytes : 1, ptr);
    if (s != PSCAN_SUCCESS) return ps_cli_status_error(d->ctx, "cannot allocate device memory", s);
    d->buffers[d->count++] = *ptr;
    if (host && bytes && (s = pscan_memory_upload(d->ctx, *ptr, host, bytes)) != PSCAN_SUCCESS)
        return ps_cli_status_error(d->ctx, "upload", s);
    return PS_CLI_OK;
}

static int device_download(device *d, void *host, const void *ptr, size_t bytes) {
    pscan_status s = PSCAN_SUCCESS;
    if (bytes && (s = pscan_memory_download(d->ctx, host, ptr, bytes)) == PSCAN_SUCCESS)
        s = pscan_context_synchronize(d->ctx);
    return s == PSCAN_SUCCESS ? PS_CLI_OK : ps_cli_status_error(d->ctx, "download", s);
}

/* Downloads n elements of type from the device array ptr into host (room for them) and writes them to path. */
static int save_device(device *d, const patterns_options *o, const char *path, pscan_type type, void *host,
                       const void *ptr, uint64_t n) {
    const int r = device_download(d, host, ptr, (size_t)n * pscan_type_size(type));
    return r == PS_CLI_OK ? write_all(path, o->out_format, o->in.in_format, type, host, n) : r;
}

static void device_close(device *d) {
    for (int i = 0; i < d->count; i++) pscan_memory_free(d->ctx, d->buffers[i]);
    if (d->ctx) pscan_context_destroy(d->ctx);
}

/* A call's failure: an algorithm or backend that cannot run this is a usage error, anything else a failure. */
static int call_error(device *d, const char *what, pscan_status s) {
    if (s == PSCAN_ERROR_UNSUPPORTED_ALGORITHM || s == PSCAN_ERROR_UNSUPPORTED_TYPE) {
        pscan_backend kind = PSCAN_BACKEND_AUTO;
        pscan_context_backend(d->ctx, &kind);
        ps_cli_error("%s: the %s backend cannot run this: %s", what, pscan_backend_name(kind), pscan_status_string(s));
        return PS_CLI_USAGE;
    }
    return ps_cli_status_error(d->ctx, what, s);
}

/* ---- reduce ------------------------------------------------------------------------------------------ */

static int run_reduce(patterns_options *o, device *d, const void *keys, uint64_t n) {
    const pscan_type type = o->in.type;
    unsigned char init[8], result[8];
    pscan_reduce_desc desc = {type, o->op, o->algo, NULL};
    if (o->init_text) {
        char message[PS_IO_ERROR_MAX];
        if (ps_io_number_parse(o->init_text, strlen(o->init_text), type, init, message, sizeof message)) {
            ps_cli_error("reduce: --init %s", message);
            return PS_CLI_USAGE;
        }
        desc.init = init;
    }
    if (o->op >= PSCAN_OP_AND && (type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64)) {
        ps_cli_error("reduce: operator %s needs an integer type, not %s", pscan_op_name(o->op), pscan_type_name(type));
        return PS_CLI_USAGE;
    }
    /* host memory through the device in pieces (pscan_reduce_host): files larger than the device reduce too */
    pscan_status s = pscan_reduce_host(d->ctx, &desc, keys, n, result);
    if (s != PSCAN_SUCCESS) return call_error(d, "reduce", s);
    char text[64];
    ps_io_number_format(type, result, text, sizeof text);
    printf("%s\n", text);
    return PS_CLI_OK;
}

/* ---- compact and split ------------------------------------------------------------------------------- */

/* '>0', '>=3', '<-1', '<=2.5', '==7', '!=0', 'nonzero' or 'unique' -> the predicate and its constant. */
static int parse_keep(const char *text, pscan_type type, pscan_pred *pred, unsigned char operand[8]) {
    static const struct {
        const char *prefix;
        pscan_pred pred;
    } forms[] = {{">=", PSCAN_PRED_GE}, {"<=", PSCAN_PRED_LE}, {"==", PSCAN_PRED_EQ}, {"!=", PSCAN_PRED_NE},
                 {">", PSCAN_PRED_GT},  {"<", PSCAN_PRED_LT}};
    memset(operand, 0, 8);
    if (strcmp(text, "nonzero") == 0 || strcmp(text, "unique") == 0) {
        *pred = text[0] == 'n' ? PSCAN_PRED_NONZERO : PSCAN_PRED_UNIQUE;
        return PS_CLI_OK;
    }
    for (size_t f = 0; f < sizeof forms / sizeof forms[0]; f++) {
        const size_t len = strlen(forms[f].prefix);
        if (strncmp(text, forms[f].prefix, len) != 0) continue;
        char message[PS_IO_ERROR_MAX];
        const char *number = text + len;
        if (*number && ps_io_number_parse(number, strlen(number), type, operand, message, sizeof message) == 0) {
            *pred = forms[f].pred;
            return PS_CLI_OK;
        }
        ps_cli_error("--keep '%s': %s", text, *number ? message : "a number must follow the comparison");
        return PS_CLI_USAGE;
    }
    ps_cli_error("--keep '%s' is not a comparison with a number ('>0', '>=3', '<-1', '<=2.5', '==7', '!=0') or "
                 "'nonzero' or 'unique'", text);
    return PS_CLI_USAGE;
}

/* Writes the written items of compact or split (and their payloads), reports, frees the host buffers. */
static int finish_select(patterns_options *o, int r, pscan_type type, size_t vb, unsigned char *keys_out,
                         unsigned char *values_out, uint64_t written, uint64_t n, uint64_t kept, void *flags,
                         void *values) {
    if (r == PS_CLI_OK) r = write_all(o->paths[1], o->out_format, o->in.in_format, type, keys_out, written);
    if (r == PS_CLI_OK && vb) r = write_all(o->values_out, o->out_format, o->in.in_format, o->value_type, values_out, written);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan %s: kept %" PRIu64 " of %" PRIu64 " %s elements\n", o->command, kept, n,
                pscan_type_name(type));
    free(flags), free(values), free(keys_out), free(values_out);
    return r;
}

static int run_select(patterns_options *o, device *d, const void *keys, uint64_t n) {
    const int split = strcmp(o->command, "split") == 0;
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type), vb = o->values_in ? pscan_type_size(o->value_type) : 0;
    unsigned char operand[8];
    pscan_select_desc desc = {type, vb, NULL, PSCAN_PRED_NONZERO, operand, o->algo};
    void *flags = NULL, *values = NULL, *d_keys = NULL, *d_flags = NULL, *d_values = NULL, *d_keys_out = NULL,
         *d_values_out = NULL, *d_count = NULL;
    unsigned char *keys_out = NULL, *values_out = NULL;
    int r = o->keep_text ? parse_keep(o->keep_text, type, &desc.pred, operand) : PS_CLI_OK;
    if (r == PS_CLI_OK && o->flags_path) r = read_companion(o, "flags file", o->flags_path, PSCAN_TYPE_U8, n, &flags);
    if (r == PS_CLI_OK && o->values_in) r = read_companion(o, "values file", o->values_in, o->value_type, n, &values);
    if (r == PS_CLI_OK && (!(keys_out = (unsigned char *)malloc((size_t)n * esize + 1)) ||
                           !(values_out = (unsigned char *)malloc((size_t)n * vb + 1)))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    uint64_t kept = 0;
    if (!split) { /* host memory through the device in pieces (pscan_select_host): any file that fits in memory */
        if (r == PS_CLI_OK) {
            desc.flags = flags;
            pscan_status s = pscan_select_host(d->ctx, &desc, keys, values, n, keys_out, values_out, &kept);
            if (s != PSCAN_SUCCESS) r = call_error(d, o->command, s);
        }
        return finish_select(o, r, type, vb, keys_out, values_out, kept, n, kept, flags, values);
    }
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, keys, &d_keys);
    if (r == PS_CLI_OK && flags) r = device_buffer(d, (size_t)n, flags, &d_flags);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)n * vb, values, &d_values);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, NULL, &d_keys_out);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)n * vb, NULL, &d_values_out);
    if (r == PS_CLI_OK) r = device_buffer(d, sizeof(uint64_t), NULL, &d_count);
    if (r == PS_CLI_OK) {
        desc.flags = d_flags;
        pscan_status s = pscan_partition(d->ctx, &desc, d_keys, d_values, n, d_keys_out, d_values_out,
                                         (uint64_t *)d_count, NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, o->command, s);
    }
    if (r == PS_CLI_OK) r = device_download(d, &kept, d_count, sizeof kept);
    if (r == PS_CLI_OK) r = device_download(d, keys_out, d_keys_out, (size_t)n * esize);
    if (r == PS_CLI_OK && vb) r = device_download(d, values_out, d_values_out, (size_t)n * vb);
    return finish_select(o, r, type, vb, keys_out, values_out, n, n, kept, flags, values);
}

/* ---- expand ------------------------------------------------------------------------------------------ */

/* Two calls: the first with no room learns the total (into device memory, as the contract has it), the
 * second fills exactly that many slots. */
static int run_expand(patterns_options *o, device *d, const void *counts, uint64_t n) {
    const pscan_type type = o->in.type;
    if (type != PSCAN_TYPE_U32 && type != PSCAN_TYPE_U64) {
        ps_cli_error("expand: counts must be u32 or u64, not %s", pscan_type_name(type));
        return PS_CLI_USAGE;
    }
    const size_t cb = pscan_type_size(type), ib = pscan_type_size(o->index_type);
    const size_t vb = o->values_in ? pscan_type_size(o->value_type) : 0;
    pscan_expand_desc desc = {type, o->index_type, vb, o->algo};
    void *values = NULL, *d_counts = NULL, *d_values = NULL, *d_total = NULL, *d_indices = NULL, *d_ranks = NULL,
         *d_values_out = NULL;
    unsigned char *host = NULL;
    uint64_t total = 0;
    int r = o->values_in ? read_companion(o, "values file", o->values_in, o->value_type, n, &values) : PS_CLI_OK;
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * cb, counts, &d_counts);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)n * vb, values, &d_values);
    if (r == PS_CLI_OK) r = device_buffer(d, sizeof(uint64_t), NULL, &d_total);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_expand(d->ctx, &desc, d_counts, d_values, n, NULL, NULL, NULL, 0, (uint64_t *)d_total,
                                      NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, "expand", s);
    }
    if (r == PS_CLI_OK) r = device_download(d, &total, d_total, sizeof total);
    const size_t widest = ib > vb ? ib : vb;
    if (r == PS_CLI_OK && (total > ((uint64_t)1 << 48) / widest || (ib == 4 && total > ((uint64_t)1 << 32)))) {
        ps_cli_error("expand: the counts add up to %" PRIu64 " slots, more than %s indices can hold", total,
                     pscan_type_name(o->index_type));
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)total * ib, NULL, &d_indices);
    if (r == PS_CLI_OK && o->ranks_path) r = device_buffer(d, (size_t)total * ib, NULL, &d_ranks);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)total * vb, NULL, &d_values_out);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_expand(d->ctx, &desc, d_counts, d_values, n, d_indices, d_ranks, d_values_out, total,
                                      (uint64_t *)d_total, NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, "expand", s);
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)total * widest + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[1], o->index_type, host, d_indices, total);
    if (r == PS_CLI_OK && o->ranks_path) r = save_device(d, o, o->ranks_path, o->index_type, host, d_ranks, total);
    if (r == PS_CLI_OK && vb) r = save_device(d, o, o->values_out, o->value_type, host, d_values_out, total);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan expand: %" PRIu64 " items -> %" PRIu64 " slots\n", n, total);
    free(values), free(host);
    return r;
}

/* ---- sort -------------------------------------------------------------------------------------------- */

/* "B:E" -> the bit range [B, E) of a key of type, 0 <= B < E <= its width. */
static int parse_bits(const char *text, pscan_type type, unsigned *begin, unsigned *end) {
    const unsigned width = 8u * (unsigned)pscan_type_size(type);
    const char *colon = strchr(text, ':');
    char first[24], second[24];
    uint64_t b = 0, e = 0;
    if (colon && (size_t)(colon - text) < sizeof first && strlen(colon + 1) < sizeof second) {
        memcpy(first, text, (size_t)(colon - text));
        first[colon - text] = '\0';
        strcpy(second, colon + 1);
        if (ps_cli_parse_uint(first, "sort: --bits B", 0, width, &b) != PS_CLI_OK ||
            ps_cli_parse_uint(second, "sort: --bits E", 0, width, &e) != PS_CLI_OK)
            return PS_CLI_USAGE;
        if (b < e) {
            *begin = (unsigned)b, *end = (unsigned)e;
            return PS_CLI_OK;
        }
    }
    ps_cli_error("sort: --bits '%s' is not B:E with 0 <= B < E <= %u (the width of %s)", text, width,
                 pscan_type_name(type));
    return PS_CLI_USAGE;
}

static int run_sort(patterns_options *o, device *d, const void *keys, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type), vb = o->values_in ? pscan_type_size(o->value_type) : 0;
    pscan_sort_desc desc = {type, vb, o->descending ? PSCAN_SORT_DESCENDING : 0u, 0, 0, o->algo};
    void *values = NULL, *d_keys = NULL, *d_values = NULL, *d_keys_out = NULL, *d_values_out = NULL;
    unsigned char *host = NULL;
    int r = o->bits_text ? parse_bits(o->bits_text, type, &desc.begin_bit, &desc.end_bit) : PS_CLI_OK;
    if (r == PS_CLI_OK && o->values_in) r = read_companion(o, "values file", o->values_in, o->value_type, n, &values);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, keys, &d_keys);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)n * vb, values, &d_values);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, NULL, &d_keys_out);
    if (r == PS_CLI_OK && vb) r = device_buffer(d, (size_t)n * vb, NULL, &d_values_out);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_sort(d->ctx, &desc, d_keys, d_values, n, d_keys_out, d_values_out, NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, "sort", s);
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)n * (esize > vb ? esize : vb) + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[1], type, host, d_keys_out, n);
    if (r == PS_CLI_OK && vb) r = save_device(d, o, o->values_out, o->value_type, host, d_values_out, n);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan sort: sorted %" PRIu64 " %s keys, %s%s%s\n", n, pscan_type_name(type),
                o->descending ? "descending" : "ascending", o->bits_text ? ", by bits " : "",
                o->bits_text ? o->bits_text : "");
    free(values), free(host);
    return r;
}

/* ---- histogram --------------------------------------------------------------------------------------- */

/* "LO:HI" -> the bounds, in the type the library takes them in: int64_t for signed samples, uint64_t for
 * unsigned ones, the sample type for floats (so u8 samples can say [0, 256)). */
static int parse_range(const char *text, pscan_type type, unsigned char lower[8], unsigned char upper[8]) {
    const int is_float = type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64;
    const int is_signed = type == PSCAN_TYPE_I8 || type == PSCAN_TYPE_I16 || type == PSCAN_TYPE_I32 ||
                          type == PSCAN_TYPE_I64;
    const pscan_type bound = is_float ? type : is_signed ? PSCAN_TYPE_I64 : PSCAN_TYPE_U64;
    const char *colon = strchr(text, ':');
    char message[PS_IO_ERROR_MAX] = "it is not LO:HI";
    if (colon && colon > text && colon[1] &&
        ps_io_number_parse(text, (size_t)(colon - text), bound, lower, message, sizeof message) == 0 &&
        ps_io_number_parse(colon + 1, strlen(colon + 1), bound, upper, message, sizeof message) == 0)
        return PS_CLI_OK;
    ps_cli_error("histogram: --range '%s': %s", text, message);
    return PS_CLI_USAGE;
}

static int run_histogram(patterns_options *o, device *d, const void *samples, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type);
    unsigned char lower[8], upper[8];
    pscan_histogram_desc desc = {type, PSCAN_TYPE_U64, (uint32_t)o->bins, lower, upper, NULL, 0, o->algo};
    void *edges = NULL, *d_samples = NULL, *d_edges = NULL, *d_counts = NULL;
    uint64_t *counts = NULL, edge_count = 0;
    int r = PS_CLI_OK;
    if (o->range_text) {
        r = parse_range(o->range_text, type, lower, upper);
    } else {
        ps_cli_input_spec spec = {o->edges_path, o->in.in_format, {0, ""}, -1, 1, type};
        r = read_all(&spec, &edges, &edge_count);
        if (r == PS_CLI_OK && (edge_count < 2 || edge_count - 1 > PSCAN_HISTOGRAM_MAX_BINS)) {
            ps_cli_error("histogram: edges file %s holds %" PRIu64 " elements; N bins need N + 1, from 2 to %u",
                         o->edges_path, edge_count, PSCAN_HISTOGRAM_MAX_BINS + 1);
            r = PS_CLI_FAILURE;
        } else if (r == PS_CLI_OK && o->bins && o->bins != edge_count - 1) {
            ps_cli_error("histogram: --bins %" PRIu64 ", but edges file %s holds %" PRIu64 " edges (%" PRIu64 " bins)",
                         o->bins, o->edges_path, edge_count, edge_count - 1);
            r = PS_CLI_FAILURE;
        }
        desc.bins = (uint32_t)(edge_count - 1);
    }
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, samples, &d_samples);
    if (r == PS_CLI_OK && edges) r = device_buffer(d, (size_t)edge_count * esize, edges, &d_edges);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)desc.bins * sizeof(uint64_t), NULL, &d_counts);
    if (r == PS_CLI_OK) {
        desc.edges = d_edges;
        pscan_status s = pscan_histogram(d->ctx, &desc, d_samples, n, d_counts, NULL, 0);
        if (s == PSCAN_ERROR_INVALID_VALUE && o->range_text) {
            /* The only value the command does not check itself: LO < HI, finite bounds and bin width. */
            ps_cli_error("histogram: --range '%s' needs LO < HI (finite, with a finite bin width)", o->range_text);
            r = PS_CLI_USAGE;
        } else if (s != PSCAN_SUCCESS) {
            r = call_error(d, "histogram", s);
        }
    }
    if (r == PS_CLI_OK && !(counts = (uint64_t *)malloc((size_t)desc.bins * sizeof *counts))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = device_download(d, counts, d_counts, (size_t)desc.bins * sizeof *counts);
    if (r == PS_CLI_OK && o->out_path)
        r = write_all(o->out_path, o->out_format, o->in.in_format, PSCAN_TYPE_U64, counts, desc.bins);
    else if (r == PS_CLI_OK)
        for (uint32_t b = 0; b < desc.bins; b++) printf("%" PRIu64 "\n", counts[b]);
    free(edges), free(counts);
    return r;
}

/* ---- rle --------------------------------------------------------------------------------------------- */

static int run_rle(patterns_options *o, device *d, const void *in, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type), widest = esize > 8 ? esize : 8;
    pscan_rle_desc desc = {type, o->algo};
    void *d_in = NULL, *d_values = NULL, *d_lengths = NULL, *d_runs = NULL;
    unsigned char *host = NULL;
    uint64_t runs = 0;
    int r = device_buffer(d, (size_t)n * esize, in, &d_in);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, NULL, &d_values);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * sizeof(uint64_t), NULL, &d_lengths);
    if (r == PS_CLI_OK) r = device_buffer(d, sizeof(uint64_t), NULL, &d_runs);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_run_length_encode(d->ctx, &desc, d_in, n, d_values, (uint64_t *)d_lengths,
                                                 (uint64_t *)d_runs, NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, "rle", s);
    }
    if (r == PS_CLI_OK) r = device_download(d, &runs, d_runs, sizeof runs);
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)runs * widest + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[1], type, host, d_values, runs);
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[2], PSCAN_TYPE_U64, host, d_lengths, runs);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan rle: %" PRIu64 " %s elements -> %" PRIu64 " runs\n", n, pscan_type_name(type), runs);
    free(host);
    return r;
}

/* rle --decode: the run values (read as IN) repeated by their lengths, through pscan_expand (docs/api.md,
 * "Run-length decoding"): the lengths are the counts, the values the items gathered, no indices wanted. */
static int run_rle_decode(patterns_options *o, device *d, const void *values, uint64_t runs) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type);
    const pscan_expand_desc desc = {PSCAN_TYPE_U64, PSCAN_TYPE_U64, esize, o->algo};
    void *lengths = NULL, *d_values = NULL, *d_lengths = NULL, *d_out = NULL, *d_total = NULL;
    unsigned char *host = NULL;
    uint64_t total = 0;
    int r = read_companion(o, "lengths file", o->paths[1], PSCAN_TYPE_U64, runs, &lengths);
    for (uint64_t i = 0; r == PS_CLI_OK && i < runs; i++) {
        const uint64_t length = ((const uint64_t *)lengths)[i];
        if (length > (UINT64_MAX >> 1) / esize - total) { /* the output's bytes must fit a size_t, with room */
            ps_cli_error("rle --decode: the lengths in %s add up to more than can be held", o->paths[1]);
            r = PS_CLI_FAILURE;
        }
        total += length;
    }
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)runs * esize, values, &d_values);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)runs * sizeof(uint64_t), lengths, &d_lengths);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)total * esize, NULL, &d_out);
    if (r == PS_CLI_OK) r = device_buffer(d, sizeof(uint64_t), NULL, &d_total);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_expand(d->ctx, &desc, d_lengths, d_values, runs, NULL, NULL, d_out, total,
                                      (uint64_t *)d_total, NULL, 0);
        if (s != PSCAN_SUCCESS) r = call_error(d, "rle --decode", s);
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)total * esize + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[2], type, host, d_out, total);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan rle --decode: %" PRIu64 " runs -> %" PRIu64 " %s elements\n", runs, total,
                pscan_type_name(type));
    free(lengths), free(host);
    return r;
}

/* ---- segscan ----------------------------------------------------------------------------------------- */

static int run_segscan(patterns_options *o, device *d, const void *in, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type);
    unsigned char init[8];
    const unsigned flags = (o->exclusive ? PSCAN_SCAN_EXCLUSIVE : 0u) | (o->reverse ? PSCAN_SCAN_REVERSE : 0u) |
                           (o->offsets_path ? PSCAN_SEGSCAN_CHECK_OFFSETS : 0u); /* bad offsets: a status, always */
    pscan_segscan_desc desc = {type, o->op, flags, o->algo, NULL,
                               o->offsets_path ? PSCAN_SEGMENTS_OFFSETS : PSCAN_SEGMENTS_HEAD_FLAGS};
    if (o->op >= PSCAN_OP_AND && (type == PSCAN_TYPE_F32 || type == PSCAN_TYPE_F64)) {
        ps_cli_error("segscan: operator %s needs an integer type, not %s", pscan_op_name(o->op), pscan_type_name(type));
        return PS_CLI_USAGE;
    }
    if (o->init_text) {
        char message[PS_IO_ERROR_MAX];
        if (ps_io_number_parse(o->init_text, strlen(o->init_text), type, init, message, sizeof message)) {
            ps_cli_error("segscan: --init %s", message);
            return PS_CLI_USAGE;
        }
        desc.init = init;
    }
    void *segments = NULL, *d_in = NULL, *d_segments = NULL, *d_out = NULL;
    unsigned char *host = NULL;
    uint64_t segment_count = 0, segment_bytes = n; /* head flags: one byte per item */
    int r = PS_CLI_OK;
    if (o->flags_path) {
        r = read_companion(o, "flags file", o->flags_path, PSCAN_TYPE_U8, n, &segments);
        for (uint64_t i = 0; r == PS_CLI_OK && i < n; i++) segment_count += i == 0 || ((unsigned char *)segments)[i];
    } else {
        ps_cli_input_spec spec = {o->offsets_path, o->in.in_format, {0, ""}, -1, 1, PSCAN_TYPE_U64};
        uint64_t m = 0;
        r = read_all(&spec, &segments, &m);
        if (r == PS_CLI_OK && m == 0) {
            ps_cli_error("segscan: offsets file %s is empty: S segments need S + 1 offsets, 0 first", o->offsets_path);
            r = PS_CLI_FAILURE;
        }
        segment_count = m ? m - 1 : 0, segment_bytes = m * sizeof(uint64_t);
    }
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, in, &d_in);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)segment_bytes, segments, &d_segments);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, NULL, &d_out);
    if (r == PS_CLI_OK) {
        pscan_status s = pscan_segmented_scan(d->ctx, &desc, d_in, d_out, n, d_segments, segment_count, NULL, 0);
        if (s == PSCAN_ERROR_INVALID_VALUE && o->offsets_path) {
            ps_cli_error("segscan: the offsets in %s are not 0 = o0 <= o1 <= ... <= oS = %" PRIu64 " (IN's length)",
                         o->offsets_path, n);
            r = PS_CLI_FAILURE;
        } else if (s != PSCAN_SUCCESS) {
            r = call_error(d, "segscan", s);
        }
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)n * esize + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[1], type, host, d_out, n);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan segscan: %" PRIu64 " %s elements in %" PRIu64 " segments\n", n, pscan_type_name(type),
                segment_count);
    free(segments), free(host);
    return r;
}

/* ---- recur ------------------------------------------------------------------------------------------- */

/* --at X: C is already read (in, n elements); OUT gets every Horner prefix at X (pscan_polyval). */
static int run_polyval(patterns_options *o, device *d, const void *c, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type);
    unsigned char x[8];
    char message[PS_IO_ERROR_MAX];
    if (ps_io_number_parse(o->at_text, strlen(o->at_text), type, x, message, sizeof message)) {
        ps_cli_error("recur: --at %s", message);
        return PS_CLI_USAGE;
    }
    void *d_c = NULL;
    unsigned char *host = NULL;
    int r = device_buffer(d, (size_t)n * esize, c, &d_c);
    if (r == PS_CLI_OK) {
        pscan_polyval_desc desc = {type, o->reverse ? PSCAN_SCAN_REVERSE : 0u, o->algo, x};
        const pscan_status s = pscan_polyval(d->ctx, &desc, d_c, d_c, n, NULL, 0); /* in place */
        if (s != PSCAN_SUCCESS) r = call_error(d, "recur", s);
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)n * esize + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[1], type, host, d_c, n);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan recur: %" PRIu64 " %s coefficients, Horner's rule at %s%s\n", n, pscan_type_name(type),
                o->at_text, o->reverse ? ", lowest degree first" : "");
    free(host);
    return r;
}

/* A is already read (in, n elements); B (and C) are read here with A's type and length. */
static int run_recur(patterns_options *o, device *d, const void *a, uint64_t n) {
    const pscan_type type = o->in.type;
    const size_t esize = pscan_type_size(type);
    const int order = (int)o->order;
    if (type != PSCAN_TYPE_F32 && type != PSCAN_TYPE_F64) {
        ps_cli_error("recur: --type must be f32 or f64, not %s", pscan_type_name(type));
        return PS_CLI_USAGE;
    }
    if (o->at_text) return run_polyval(o, d, a, n);
    unsigned char init[2][8];
    const char *texts[2] = {o->init_text, o->init2_text};
    for (int k = 0; k < 2; k++) {
        char message[PS_IO_ERROR_MAX];
        if (texts[k] && ps_io_number_parse(texts[k], strlen(texts[k]), type, init[k], message, sizeof message)) {
            ps_cli_error("recur: --init%s %s", k ? "2" : "", message);
            return PS_CLI_USAGE;
        }
    }
    void *coef[2] = {NULL, NULL}, *d_in[3] = {NULL, NULL, NULL}, *d_y = NULL;
    unsigned char *host = NULL;
    int r = read_companion(o, "B", o->paths[1], type, n, &coef[0]);
    if (r == PS_CLI_OK && order == 2) r = read_companion(o, "C", o->paths[2], type, n, &coef[1]);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, a, &d_in[0]);
    for (int k = 0; k < order && r == PS_CLI_OK; k++) r = device_buffer(d, (size_t)n * esize, coef[k], &d_in[k + 1]);
    if (r == PS_CLI_OK) r = device_buffer(d, (size_t)n * esize, NULL, &d_y);
    if (r == PS_CLI_OK) {
        const unsigned flags = o->reverse ? PSCAN_SCAN_REVERSE : 0u;
        const void *y1 = o->init_text ? init[0] : NULL, *y2 = o->init2_text ? init[1] : NULL;
        pscan_status s;
        if (order == 1) {
            pscan_recurrence_desc desc = {type, flags, o->algo, y1};
            s = pscan_recurrence(d->ctx, &desc, d_in[0], d_in[1], d_y, n, NULL, 0);
        } else {
            pscan_recurrence2_desc desc = {type, flags, o->algo, y1, y2};
            s = pscan_recurrence2(d->ctx, &desc, d_in[0], d_in[1], d_in[2], d_y, n, NULL, 0);
        }
        if (s != PSCAN_SUCCESS) r = call_error(d, "recur", s);
    }
    if (r == PS_CLI_OK && !(host = (unsigned char *)malloc((size_t)n * esize + 1))) {
        ps_cli_error("out of memory");
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK) r = save_device(d, o, o->paths[order + 1], type, host, d_y, n);
    if (r == PS_CLI_OK && !o->quiet)
        fprintf(stderr, "pscan recur: %" PRIu64 " %s elements, order %d%s\n", n, pscan_type_name(type), order,
                o->reverse ? ", reverse" : "");
    free(coef[0]), free(coef[1]), free(host);
    return r;
}

/* ---- the subcommands --------------------------------------------------------------------------------- */

int ps_cli_patterns(int argc, char **argv) {
    patterns_options o;
    int r = parse_options(argc, argv, &o);
    if (r != PS_CLI_OK) return r < 0 ? PS_CLI_OK : r;
    void *data = NULL;
    uint64_t n = 0;
    device d;
    memset(&d, 0, sizeof d);
    r = read_all(&o.in, &data, &n);
    if (r == PS_CLI_OK) r = ps_cli_context_create(o.backend, &d.ctx);
    if (r == PS_CLI_OK) {
        if (strcmp(o.command, "reduce") == 0)
            r = run_reduce(&o, &d, data, n);
        else if (strcmp(o.command, "expand") == 0)
            r = run_expand(&o, &d, data, n);
        else if (strcmp(o.command, "sort") == 0)
            r = run_sort(&o, &d, data, n);
        else if (strcmp(o.command, "histogram") == 0)
            r = run_histogram(&o, &d, data, n);
        else if (strcmp(o.command, "rle") == 0)
            r = o.decode ? run_rle_decode(&o, &d, data, n) : run_rle(&o, &d, data, n);
        else if (strcmp(o.command, "segscan") == 0)
            r = run_segscan(&o, &d, data, n);
        else if (strcmp(o.command, "recur") == 0)
            r = run_recur(&o, &d, data, n);
        else
            r = run_select(&o, &d, data, n);
    }
    device_close(&d);
    free(data);
    return r;
}
