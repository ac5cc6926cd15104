/*
 * cmd_scan.c - `pscan scan IN OUT`: scans raw binary, text, a CSV column or a .npy array of any size, from a
 * file or a pipe, on any backend (docs/cli.md is the user's guide).
 *
 * Streaming. The input is read in chunks (64 MiB by default) through io_formats.c's readers, so neither
 * files larger than memory nor pipes of unknown length are a problem. Each chunk is scanned in place with
 * desc.init = the carry out of the chunks before it: by pscan_scan_host where the backend has it (CUDA: the
 * out-of-core pipeline of docs/scale-out.md; CPU: in place), else uploaded, scanned and downloaded. A forward
 * scan runs as a pipeline of three chunks: a reader thread reads and parses the next chunk and a writer thread
 * formats and writes the previous one while the device scans this one (50 MiB of u32 in 1 MiB chunks on 2
 * cores: 0.049 s, against 0.155 s in one chunk). The carry into the next
 * chunk is the last inclusive value of this one: the chunk's last output for an inclusive scan, and that
 * output combined with the chunk's last input for an exclusive one (a one-element inclusive scan does that
 * combine, so the tool needs no operator code of its own). A reverse scan visits the chunks from the end of
 * the input backwards, "last" being the first element of the chunk: it reads a raw or .npy file at offsets,
 * and anything else (a pipe, text, CSV) after spooling it to an unlinked temporary raw file.
 * --widen (PSCAN_SCAN_WIDEN) writes elements of the 64-bit type, so a chunk cannot be scanned in place: each
 * host buffer holds the wide output first and the narrow input after it, and the device gets a buffer for each.
 *
 * The output target. A regular file is written to OUT.tmp.XXXXXX in the directory of the file OUT resolves
 * to (symlinks followed) and renamed onto it when complete and synced, with the mode and owner OUT had, so a
 * failure or Ctrl-C never leaves a half-written OUT. A read-only OUT is refused. A file with other hard links
 * is written to the temporary file and then copied back into the same inode, so every link sees the result
 * (a rename would detach OUT from its other names). Anything that is not a regular file (a terminal,
 * /dev/null, a FIFO, a socket, stdout with `-`) is written straight through, in order.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "cli_files.h"
#include "io_formats.h"

static const char scan_usage[] =
    "usage: pscan scan IN OUT [--type T] [--op OP] [--exclusive] [--reverse] [--widen] [--init V]\n"
    "                         [--format F | --in-format F --out-format F] [--column N|NAME]\n"
    "                         [--header | --no-header] [--backend B] [--algo A] [--chunk-mb N]\n"
    "                         [--progress | --no-progress] [--quiet]\n"
    "\n"
    "Scans IN into OUT. IN or OUT may be - (stdin, stdout), a pipe or any file; IN may be OUT.\n"
    "  --type T      i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 (required unless IN is .npy, whose dtype sets it)\n"
    "  --op OP       sum product min max and or xor (default sum; and/or/xor need an integer type)\n"
    "  --exclusive   out[i] combines the elements before i (out[0] = init)\n"
    "  --reverse     scan from the end of the input towards its start\n"
    "  --widen       sum or multiply into the 64-bit type and write that: i8 i16 i32 -> i64, u8 u16 u32\n"
    "                -> u64, f32 -> f64 (--op sum or product; --init is then of the 64-bit type)\n"
    "  --init V      initial value (default: the operator's identity), e.g. 100, -3, 0x7f, 2.5\n"
    "  --format F    raw text csv npy, for IN and OUT (default: from the extension .bin/.raw .txt .csv\n"
    "                .npy; OUT without one gets IN's format); --in-format/--out-format for one side\n"
    "  --column C    the CSV column to scan: a number from 1 or a name in the header row\n"
    "  --header      the CSV's first row is a header; --no-header: it is data (default: a header when\n"
    "                the column's first field is not a number)\n"
    "  --backend B   auto cpu cuda opencl (default auto)\n"
    "  --algo A      an algorithm of that backend (default auto; see `pscan bench`)\n"
    "  --chunk-mb N  stream through the device N MiB at a time (default 64; --widen: of the output)\n"
    "  --progress    report progress on stderr (default: only when stderr is a terminal)\n"
    "  --quiet       no summary line on stderr at the end\n"
    "\n"
    "Raw files are native-endian elements. Text is numbers separated by whitespace or commas ('#' starts a\n"
    "comment); output text is one number per line, floats printed to round-trip. An IN of unknown format\n"
    "that looks like text is refused rather than scanned as bytes: name its format.\n"
    "Example: printf '3 1 7 0 4 1 6 3' | pscan scan - - --format text --type i32 --exclusive\n"
    "         -> 0 3 4 11 11 15 16 22, one per line\n"
    "         printf '200 200 200' | pscan scan - - --format text --type u8 --widen -> 200 400 600 (u64)\n";

typedef struct scan_options {
    const char *in_path, *out_path;
    pscan_scan_desc desc;
    pscan_type out_type; /* what OUT holds: desc.type, or with --widen its 64-bit type (once the type is known) */
    int have_type, progress, quiet, header;
    const char *init_text;
    ps_io_format in_format, out_format;
    ps_io_column column;
    pscan_backend backend;
    uint64_t chunk_bytes;
} scan_options;


static int parse_format(const char *option, const char *text, ps_io_format *format) {
    if (ps_io_format_parse(text, format) == 0) return PS_CLI_OK;
    ps_cli_error("scan: %s '%s' is not one of raw text csv npy", option, text);
    return PS_CLI_USAGE;
}

static int parse_options(int argc, char **argv, scan_options *o) {
    memset(o, 0, sizeof *o);
    o->desc.op = PSCAN_OP_SUM;
    o->desc.algo = PSCAN_ALGO_AUTO;
    o->backend = PSCAN_BACKEND_AUTO;
    o->chunk_bytes = 64u << 20;
    o->progress = isatty(STDERR_FILENO);
    o->header = -1;
    ps_io_format both = PS_IO_AUTO;
    int positional = 0;
    for (int i = 1; i < argc; i++) {
        const char *v = NULL;
        int m, r = PS_CLI_OK;
        if (ps_cli_is_help(argv[i])) {
            fputs(scan_usage, stdout);
            return -1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--type", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_type(v, &o->desc.type);
            o->have_type = 1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--op", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_op(v, &o->desc.op);
        } else if ((m = ps_cli_option(argc, argv, &i, "--backend", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_backend(v, &o->backend);
        } else if ((m = ps_cli_option(argc, argv, &i, "--algo", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_algo(v, &o->desc.algo);
        } else if ((m = ps_cli_option(argc, argv, &i, "--init", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            o->init_text = v;
        } else if ((m = ps_cli_option(argc, argv, &i, "--format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--format", v, &both);
        } else if ((m = ps_cli_option(argc, argv, &i, "--in-format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--in-format", v, &o->in_format);
        } else if ((m = ps_cli_option(argc, argv, &i, "--out-format", &v)) != 0) {
            r = m < 0 ? PS_CLI_USAGE : parse_format("--out-format", v, &o->out_format);
        } else if ((m = ps_cli_option(argc, argv, &i, "--column", &v)) != 0) {
            char message[PS_IO_ERROR_MAX];
            r = m < 0 ? PS_CLI_USAGE : PS_CLI_OK;
            if (m > 0 && ps_io_column_parse(v, &o->column, message, sizeof message) != 0) {
                ps_cli_error("scan: %s", message);
                r = PS_CLI_USAGE;
            }
        } else if ((m = ps_cli_option(argc, argv, &i, "--chunk-mb", &v)) != 0) {
            uint64_t mb = 0;
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--chunk-mb", 1, 1u << 20, &mb);
            o->chunk_bytes = mb << 20;
        } else if (strcmp(argv[i], "--exclusive") == 0) {
            o->desc.flags |= PSCAN_SCAN_EXCLUSIVE;
        } else if (strcmp(argv[i], "--reverse") == 0) {
            o->desc.flags |= PSCAN_SCAN_REVERSE;
        } else if (strcmp(argv[i], "--widen") == 0) {
            o->desc.flags |= PSCAN_SCAN_WIDEN;
        } else if (strcmp(argv[i], "--header") == 0 || strcmp(argv[i], "--no-header") == 0) {
            o->header = argv[i][2] == 'h';
        } else if (strcmp(argv[i], "--progress") == 0 || strcmp(argv[i], "--no-progress") == 0) {
            o->progress = argv[i][2] == 'p';
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            o->quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1] != '\0') {
            ps_cli_error("scan: unknown option '%s' (pscan scan --help)", argv[i]);
            r = PS_CLI_USAGE;
        } else if (positional < 2) {
            *(positional++ == 0 ? &o->in_path : &o->out_path) = argv[i];
        } else {
            ps_cli_error("scan: unexpected argument '%s'", argv[i]);
            r = PS_CLI_USAGE;
        }
        if (r != PS_CLI_OK) return r;
    }
    if (positional < 2) {
        ps_cli_error("scan: needs IN and OUT (pscan scan --help)");
        return PS_CLI_USAGE;
    }
    if (o->in_format == PS_IO_AUTO) o->in_format = both;
    if (o->out_format == PS_IO_AUTO) o->out_format = both;
    return PS_CLI_OK;
}

/* The element type is known once the input is open (a .npy header carries it): check what depends on it. */
static int check_typed_options(scan_options *o, unsigned char init[8]) {
    if (o->desc.op >= PSCAN_OP_AND && (o->desc.type == PSCAN_TYPE_F32 || o->desc.type == PSCAN_TYPE_F64)) {
        ps_cli_error("scan: operator %s needs an integer type, not %s", pscan_op_name(o->desc.op),
                     pscan_type_name(o->desc.type));
        return PS_CLI_USAGE;
    }
    const int widen = (o->desc.flags & PSCAN_SCAN_WIDEN) != 0;
    if (widen && o->desc.op != PSCAN_OP_SUM && o->desc.op != PSCAN_OP_PRODUCT) {
        ps_cli_error("scan: --widen sums or multiplies into the 64-bit type; --op %s does not widen (use sum or "
                     "product, or drop --widen)", pscan_op_name(o->desc.op));
        return PS_CLI_USAGE;
    }
    o->out_type = widen ? pscan_type_widened(o->desc.type) : o->desc.type;
    if (o->init_text) { /* of the type scanned in, which --widen makes the 64-bit one */
        char message[PS_IO_ERROR_MAX];
        if (ps_io_number_parse(o->init_text, strlen(o->init_text), o->out_type, init, message, sizeof message)) {
            ps_cli_error("scan: --init %s", message);
            return PS_CLI_USAGE;
        }
        o->desc.init = init;
    }
    return PS_CLI_OK;
}


/* IN through the shared opener (cli_files.c), the options it settles copied back. */
static int scan_input_open(scan_options *o, ps_cli_input *in) {
    ps_cli_input_spec spec = {o->in_path, o->in_format, o->column, o->header, o->have_type, o->desc.type};
    int r = ps_cli_input_open(&spec, in);
    o->in_format = spec.in_format;
    o->desc.type = spec.type;
    o->have_type = spec.have_type;
    return r;
}

/* ---- the scan ---------------------------------------------------------------------------------------- */

/* Device side of the streaming scan: one chunk buffer scanned in place, one element for the carry. On a backend
 * that scans host memory itself (pscan_scan_host: CUDA pipelines each chunk up, through the scan and down in
 * pieces on several streams; the CPU scans it in place) the chunk goes there instead, until the backend
 * refuses (OpenCL, a widened scan on a GPU, or an algorithm its driver does not run), and then through the
 * chunk buffer. A widened scan reads from buffers of its own (chunk_in, one_in: the narrow input); otherwise
 * they are chunk and one, and each host buffer holds its input at in_at = 0. */
typedef struct stream {
    pscan_context *ctx;
    void *chunk, *one, *chunk_in, *one_in;
    unsigned char *host;
    size_t chunk_elems, esize, out_esize; /* out_esize: of the type written (esize but with --widen) */
    size_t in_at, host_bytes;             /* a host buffer: out at 0, in at in_at bytes; its size */
    pscan_scan_desc desc;
    unsigned char carry[8];
    int have_carry, use_scan_host;
} stream;

/* Scans the count elements at host + in_at into host (in place unless widened), continuing from the chunks
 * before it; 0 or PS_CLI_FAILURE. */
static int scan_chunk(stream *st, unsigned char *host, uint64_t count) {
    const size_t esize = st->esize, out_esize = st->out_esize;
    unsigned char *in = host + st->in_at;
    const uint64_t last = (st->desc.flags & PSCAN_SCAN_REVERSE) ? 0 : count - 1; /* the last in scan order */
    unsigned char last_in[8];
    pscan_scan_desc desc = st->desc;
    pscan_status s = PSCAN_ERROR_UNSUPPORTED_ALGORITHM;
    memcpy(last_in, in + last * esize, esize);
    if (st->have_carry) desc.init = st->carry;
    if (st->use_scan_host) {
        s = pscan_scan_host(st->ctx, &desc, in, host, count);
        if (s == PSCAN_ERROR_UNSUPPORTED_ALGORITHM) st->use_scan_host = 0;
        else if (s != PSCAN_SUCCESS) return ps_cli_status_error(st->ctx, "scan", s);
    }
    if (!st->use_scan_host) {
        if ((s = pscan_memory_upload(st->ctx, st->chunk_in, in, (size_t)count * esize)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "upload", s);
        if ((s = pscan_scan(st->ctx, &desc, st->chunk_in, st->chunk, count, NULL, 0)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "scan", s);
        if ((s = pscan_memory_download(st->ctx, host, st->chunk, (size_t)count * out_esize)) != PSCAN_SUCCESS ||
            (s = pscan_context_synchronize(st->ctx)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "download", s);
    }

    /* Carry phase: the last inclusive value of this chunk goes into the next one. */
    memcpy(st->carry, host + last * out_esize, out_esize);
    if (desc.flags & PSCAN_SCAN_EXCLUSIVE) {
        pscan_scan_desc one = {desc.type, desc.op, desc.flags & PSCAN_SCAN_WIDEN, PSCAN_ALGO_AUTO, st->carry};
        if ((s = pscan_memory_upload(st->ctx, st->one_in, last_in, esize)) != PSCAN_SUCCESS ||
            (s = pscan_scan(st->ctx, &one, st->one_in, st->one, 1, NULL, 0)) != PSCAN_SUCCESS ||
            (s = pscan_memory_download(st->ctx, st->carry, st->one, out_esize)) != PSCAN_SUCCESS ||
            (s = pscan_context_synchronize(st->ctx)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "carry", s);
    }
    st->have_carry = 1;
    return PS_CLI_OK;
}

static void progress_report(uint64_t done_bytes, uint64_t total_bytes, int final) {
    if (total_bytes == UINT64_MAX)
        fprintf(stderr, "\rpscan scan: %" PRIu64 " MiB%s", done_bytes >> 20, final ? "\n" : "");
    else
        fprintf(stderr, "\rpscan scan: %" PRIu64 " / %" PRIu64 " MiB (%3.0f%%)%s", done_bytes >> 20,
                total_bytes >> 20, total_bytes ? 100.0 * (double)done_bytes / (double)total_bytes : 100.0,
                final ? "\n" : "");
    fflush(stderr);
}

static int io_error(const char *what, const char *path, int err) {
    ps_cli_error("cannot %s %s: %s", what, path, strerror(err));
    return PS_CLI_FAILURE;
}

/* Whole-buffer pread/pwrite: they may transfer less than asked. 0 on success, else errno (EIO on EOF). */
static int read_at(int fd, void *buf, size_t bytes, uint64_t offset) {
    for (size_t done = 0; done < bytes;) {
        ssize_t got = pread(fd, (char *)buf + done, bytes - done, (off_t)(offset + done));
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) return errno;
        if (got == 0) return EIO; /* the file shrank under us */
        done += (size_t)got;
    }
    return 0;
}

static int write_at(int fd, const void *buf, size_t bytes, uint64_t offset) {
    for (size_t done = 0; done < bytes;) {
        ssize_t put = pwrite(fd, (const char *)buf + done, bytes - done, (off_t)(offset + done));
        if (put < 0 && errno == EINTR) continue;
        if (put < 0) return errno;
        done += (size_t)put;
    }
    return 0;
}

/* An unlinked temporary file for spooling a reverse scan's input or output. */
static int spool_create(void) {
    const char *dir = getenv("TMPDIR");
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/pscan-spool.XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd >= 0) unlink(path);
    else ps_cli_error("cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp", strerror(errno));
    return fd;
}

/* Forward, as a pipeline of PIPE_SLOTS host buffers: a reader thread reads (and parses) chunk k+1 and a writer
 * thread writes (and formats) chunk k-1 while this thread scans chunk k, so the file is read and written while
 * the device works. Each slot goes FREE -> READ (by the reader) -> SCANNED (here) -> FREE (by the writer), in
 * chunk order; the first failure anywhere stops all three at the next slot. *n counts the elements. */
#define PIPE_SLOTS 3
enum { SLOT_FREE, SLOT_READ, SLOT_SCANNED };

typedef struct pipeline {
    const scan_options *o;
    ps_cli_input *in;
    ps_io_writer *w;
    size_t chunk_elems, in_at; /* in_at: where a slot's input starts (stream.in_at) */
    unsigned char *host[PIPE_SLOTS];
    size_t count[PIPE_SLOTS]; /* elements in the slot; 0 marks the end of the input */
    int state[PIPE_SLOTS];
    int failed; /* PS_CLI_OK, or the first failure (its message printed by the thread that failed) */
    pthread_mutex_t lock;
    pthread_cond_t changed;
} pipeline;

/* Waits until slot k % PIPE_SLOTS is in state `want` or the pipeline failed; 0 when it is. */
static int pipe_wait(pipeline *p, uint64_t k, int want) {
    pthread_mutex_lock(&p->lock);
    while (p->state[k % PIPE_SLOTS] != want && p->failed == PS_CLI_OK) pthread_cond_wait(&p->changed, &p->lock);
    int ok = p->failed == PS_CLI_OK;
    pthread_mutex_unlock(&p->lock);
    return ok ? 0 : -1;
}

static void pipe_set(pipeline *p, uint64_t k, int state, int failure) {
    pthread_mutex_lock(&p->lock);
    if (failure != PS_CLI_OK && p->failed == PS_CLI_OK) p->failed = failure;
    if (failure == PS_CLI_OK) p->state[k % PIPE_SLOTS] = state;
    pthread_cond_broadcast(&p->changed);
    pthread_mutex_unlock(&p->lock);
}

static void *pipe_reader(void *arg) {
    pipeline *p = (pipeline *)arg;
    const char *in_name = strcmp(p->o->in_path, "-") == 0 ? "stdin" : p->o->in_path;
    for (uint64_t k = 0;; k++) {
        if (pipe_wait(p, k, SLOT_FREE) != 0) return NULL;
        size_t got = 0;
        const int slot = (int)(k % PIPE_SLOTS);
        if (ps_io_read(&p->in->reader, p->host[slot] + p->in_at, p->chunk_elems, &got) != 0) {
            ps_cli_error("%s: %s", in_name, p->in->reader.error);
            pipe_set(p, k, SLOT_FREE, PS_CLI_FAILURE);
            return NULL;
        }
        p->count[slot] = got;
        pipe_set(p, k, SLOT_READ, PS_CLI_OK);
        if (got == 0) return NULL;
    }
}

static void *pipe_writer(void *arg) {
    pipeline *p = (pipeline *)arg;
    for (uint64_t k = 0;; k++) {
        if (pipe_wait(p, k, SLOT_SCANNED) != 0) return NULL;
        const int slot = (int)(k % PIPE_SLOTS);
        if (p->count[slot] == 0) return NULL;
        if (ps_io_write(p->w, p->host[slot], p->count[slot]) != 0) {
            pipe_set(p, k, SLOT_FREE, io_error("write", p->o->out_path, p->w->err));
            return NULL;
        }
        pipe_set(p, k, SLOT_FREE, PS_CLI_OK);
    }
}

static int scan_forward(const scan_options *o, ps_cli_input *in, ps_io_writer *w, stream *st, uint64_t *n) {
    uint64_t total = in->count == UINT64_MAX ? UINT64_MAX : in->count * st->esize;
    pipeline p;
    memset(&p, 0, sizeof p);
    p.o = o, p.in = in, p.w = w, p.chunk_elems = st->chunk_elems, p.in_at = st->in_at, p.failed = PS_CLI_OK;
    /* the stream's buffer is slot 0; a chunk that holds the whole input needs no pipeline */
    const int slots = in->count != UINT64_MAX && in->count <= st->chunk_elems ? 1 : PIPE_SLOTS;
    p.host[0] = st->host;
    for (int k = 1; k < slots; k++)
        if (!(p.host[k] = (unsigned char *)malloc(st->host_bytes))) {
            ps_cli_error("cannot allocate %d host buffers of %zu MiB (try a smaller --chunk-mb)", PIPE_SLOTS,
                         st->host_bytes >> 20);
            for (int j = 1; j < k; j++) free(p.host[j]);
            return PS_CLI_FAILURE;
        }
    int r = PS_CLI_OK;
    if (slots == 1) {
        /* one chunk: read, scan, write on this thread */
        size_t got = 0;
        if (ps_io_read(&in->reader, st->host + st->in_at, st->chunk_elems, &got) != 0) {
            ps_cli_error("%s: %s", strcmp(o->in_path, "-") == 0 ? "stdin" : o->in_path, in->reader.error);
            return PS_CLI_FAILURE;
        }
        if (got > 0 && (r = scan_chunk(st, st->host, got)) == PS_CLI_OK && ps_io_write(w, st->host, got) != 0)
            r = io_error("write", o->out_path, w->err);
        *n += got;
    } else {
        pthread_mutex_init(&p.lock, NULL);
        pthread_cond_init(&p.changed, NULL);
        pthread_t reader, writer;
        int have_reader = pthread_create(&reader, NULL, pipe_reader, &p) == 0;
        int have_writer = have_reader && pthread_create(&writer, NULL, pipe_writer, &p) == 0;
        if (!have_writer) {
            ps_cli_error("cannot start the reader and writer threads");
            pipe_set(&p, 0, SLOT_FREE, PS_CLI_FAILURE);
        }
        for (uint64_t k = 0; have_writer; k++) {
            if (pipe_wait(&p, k, SLOT_READ) != 0) break;
            const int slot = (int)(k % PIPE_SLOTS);
            const size_t got = p.count[slot];
            int sr = got ? scan_chunk(st, p.host[slot], got) : PS_CLI_OK;
            pipe_set(&p, k, SLOT_SCANNED, sr);
            if (sr != PS_CLI_OK || got == 0) break;
            *n += got;
            if (o->progress) progress_report(*n * st->esize, total, 0);
        }
        if (have_reader) pthread_join(reader, NULL);
        if (have_writer) pthread_join(writer, NULL);
        r = p.failed;
        pthread_cond_destroy(&p.changed);
        pthread_mutex_destroy(&p.lock);
    }
    for (int k = 1; k < slots; k++) free(p.host[k]);
    if (o->progress && r == PS_CLI_OK) progress_report(*n * st->esize, total, 1);
    return r;
}

/* Reverse: the input at offsets (spooled first unless a raw or .npy file), chunks from the end backwards,
 * written at offsets into the output file when it is raw or .npy in a file of ours, else into a spool that
 * is then written out in order. */
static int scan_reverse(const scan_options *o, ps_cli_input *in, ps_cli_output *out, stream *st, uint64_t *n) {
    const char *in_name = strcmp(o->in_path, "-") == 0 ? "stdin" : o->in_path;
    const size_t esize = st->esize, out_esize = st->out_esize;
    int fd_in = in->fd, spool_in = -1, spool_out = -1, r = PS_CLI_OK;
    uint64_t in_offset = in->offset, count = in->count;
    if (!(in->regular && (o->in_format == PS_IO_RAW || o->in_format == PS_IO_NPY))) {
        if ((spool_in = spool_create()) < 0) return PS_CLI_FAILURE;
        fd_in = spool_in, in_offset = 0, count = 0;
        for (;;) {
            size_t got = 0;
            if (ps_io_read(&in->reader, st->host, st->chunk_elems, &got) != 0) {
                ps_cli_error("%s: %s", in_name, in->reader.error);
                r = PS_CLI_FAILURE;
                break;
            }
            if (got == 0) break;
            int err = write_at(spool_in, st->host, got * esize, count * esize);
            if (err) {
                r = io_error("spool", in_name, err);
                break;
            }
            count += got;
        }
    }
    int direct = out->kind != TARGET_THROUGH && (o->out_format == PS_IO_RAW || o->out_format == PS_IO_NPY);
    int fd_out = out->fd;
    uint64_t out_offset = 0;
    if (r == PS_CLI_OK && direct && o->out_format == PS_IO_NPY) {
        unsigned char header[PS_IO_NPY_HEADER_BYTES];
        ps_io_npy_header(o->out_type, count, header);
        int err = write_at(fd_out, header, sizeof header, 0);
        if (err) r = io_error("write", o->out_path, err);
        out_offset = sizeof header;
    }
    if (r == PS_CLI_OK && !direct) {
        if ((spool_out = spool_create()) < 0) r = PS_CLI_FAILURE;
        fd_out = spool_out;
    }
    for (uint64_t done = 0; r == PS_CLI_OK && done < count;) {
        uint64_t chunk = count - done < st->chunk_elems ? count - done : st->chunk_elems;
        uint64_t begin = count - done - chunk;
        int err = read_at(fd_in, st->host + st->in_at, (size_t)(chunk * esize), in_offset + begin * esize);
        if (err) r = io_error("read", in_name, err);
        if (r == PS_CLI_OK) r = scan_chunk(st, st->host, chunk);
        if (r == PS_CLI_OK &&
            (err = write_at(fd_out, st->host, (size_t)(chunk * out_esize), out_offset + begin * out_esize)) != 0)
            r = io_error("write", direct ? o->out_path : "a temporary file for", err);
        done += chunk;
        if (o->progress && r == PS_CLI_OK) progress_report(done * esize, count * esize, done == count);
    }
    if (r == PS_CLI_OK && !direct) { /* the spool, in order, through the output's format */
        ps_io_writer w;
        if (ps_io_writer_open(&w, out->fd, o->out_format, o->out_type, out->seekable, count,
                              in->reader.header_name) != 0)
            r = io_error("write", o->out_path, w.err);
        for (uint64_t done = 0; r == PS_CLI_OK && done < count;) {
            uint64_t chunk = count - done < st->chunk_elems ? count - done : st->chunk_elems;
            int err = read_at(spool_out, st->host, (size_t)(chunk * out_esize), done * out_esize);
            if (err) r = io_error("read back", "a temporary file", err);
            else if (ps_io_write(&w, st->host, (size_t)chunk) != 0) r = io_error("write", o->out_path, w.err);
            done += chunk;
        }
        if (ps_io_writer_close(&w) != 0 && r == PS_CLI_OK) r = io_error("write", o->out_path, w.err);
    }
    if (spool_in >= 0) close(spool_in);
    if (spool_out >= 0) close(spool_out);
    *n = count;
    return r;
}

static double seconds_now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int ps_cli_scan(int argc, char **argv) {
    scan_options o;
    unsigned char init[8];
    int r = parse_options(argc, argv, &o);
    if (r != PS_CLI_OK) return r < 0 ? PS_CLI_OK : r;
    double start = seconds_now();

    ps_cli_input in;
    r = scan_input_open(&o, &in);
    if (r == PS_CLI_OK) r = check_typed_options(&o, init);
    const size_t esize = pscan_type_size(o.desc.type), out_esize = pscan_type_size(o.out_type);
    const int widen = r == PS_CLI_OK && o.out_type != o.desc.type; /* --widen of a type narrower than 64 bits */
    if (r == PS_CLI_OK && o.out_format == PS_IO_AUTO)
        o.out_format = strcmp(o.out_path, "-") == 0 ? PS_IO_AUTO : ps_io_format_from_path(o.out_path);
    if (o.out_format == PS_IO_AUTO) o.out_format = o.in_format;

    /* The device before the output: a backend or algorithm that cannot run this leaves no output behind. */
    stream st;
    memset(&st, 0, sizeof st);
    st.desc = o.desc;
    st.esize = esize;
    st.out_esize = out_esize;
    if (r == PS_CLI_OK) r = ps_cli_context_create(o.backend, &st.ctx);
    if (r == PS_CLI_OK) {
        size_t temp_bytes = 0;
        pscan_status s = pscan_scan_temp_bytes(st.ctx, &o.desc, o.chunk_bytes / out_esize + 1, &temp_bytes);
        if (s == PSCAN_ERROR_UNSUPPORTED_ALGORITHM || s == PSCAN_ERROR_UNSUPPORTED_TYPE) {
            pscan_backend kind = o.backend;
            pscan_context_backend(st.ctx, &kind);
            ps_cli_error("scan: the %s backend cannot run %s %s%s with algorithm %s: %s", pscan_backend_name(kind),
                         pscan_type_name(o.desc.type), pscan_op_name(o.desc.op), widen ? " widened" : "",
                         pscan_algo_name(o.desc.algo), pscan_status_string(s));
            r = PS_CLI_USAGE;
        }
    }
    if (r == PS_CLI_OK) {
        pscan_backend kind = PSCAN_BACKEND_CPU;
        pscan_context_backend(st.ctx, &kind);
        st.use_scan_host = kind != PSCAN_BACKEND_OPENCL; /* OpenCL refuses pscan_scan_host (docs/scale-out.md) */
        /* --chunk-mb counts the output, the larger side of a widened scan */
        st.chunk_elems = (size_t)(o.chunk_bytes / out_esize);
        if (in.count != UINT64_MAX && in.count < st.chunk_elems) st.chunk_elems = in.count ? (size_t)in.count : 1;
        st.in_at = widen ? st.chunk_elems * out_esize : 0;
        st.host_bytes = st.in_at + st.chunk_elems * (widen ? esize : out_esize);
        pscan_status s;
        st.host = (unsigned char *)malloc(st.host_bytes);
        if (!st.host) {
            ps_cli_error("cannot allocate a %zu MiB host buffer (try a smaller --chunk-mb)", st.host_bytes >> 20);
            r = PS_CLI_FAILURE;
        } else if ((s = pscan_memory_alloc(st.ctx, st.chunk_elems * out_esize, &st.chunk)) != PSCAN_SUCCESS ||
                   (s = pscan_memory_alloc(st.ctx, out_esize, &st.one)) != PSCAN_SUCCESS ||
                   (widen && (s = pscan_memory_alloc(st.ctx, st.chunk_elems * esize, &st.chunk_in)) != PSCAN_SUCCESS) ||
                   (widen && (s = pscan_memory_alloc(st.ctx, esize, &st.one_in)) != PSCAN_SUCCESS)) {
            r = ps_cli_status_error(st.ctx, "cannot allocate device memory (try a smaller --chunk-mb)", s);
        }
        if (!widen) st.chunk_in = st.chunk, st.one_in = st.one; /* scanned in place */
    }

    ps_cli_output out;
    int have_out = 0;
    if (r == PS_CLI_OK) r = ps_cli_output_open(o.out_path, &out), have_out = 1;
    if (r == PS_CLI_OK && o.out_format == PS_IO_NPY && !out.seekable && in.count == UINT64_MAX &&
        !(o.desc.flags & PSCAN_SCAN_REVERSE)) {
        ps_cli_error("scan: a .npy header states the element count first: write .npy from a raw or .npy input "
                     "file, or to a file rather than a pipe");
        r = PS_CLI_USAGE;
    }
    uint64_t n = 0;
    if (r == PS_CLI_OK) {
        if (o.desc.flags & PSCAN_SCAN_REVERSE) {
            r = scan_reverse(&o, &in, &out, &st, &n);
        } else {
            ps_io_writer w;
            if (ps_io_writer_open(&w, out.fd, o.out_format, o.out_type, out.seekable, in.count,
                                  in.reader.header_name) != 0)
                r = io_error("write", o.out_path, w.err);
            if (r == PS_CLI_OK) r = scan_forward(&o, &in, &w, &st, &n);
            if (ps_io_writer_close(&w) != 0 && r == PS_CLI_OK) r = io_error("write", o.out_path, w.err);
        }
    }
    if (have_out) r = ps_cli_output_close(&out, r);

    if (r == PS_CLI_OK && !o.quiet) {
        double seconds = seconds_now() - start;
        char device[128] = "";
        pscan_backend kind = o.backend;
        pscan_context_backend(st.ctx, &kind);
        pscan_context_device_name(st.ctx, device, sizeof device);
        fprintf(stderr, "pscan scan: %" PRIu64 " %s elements%s%s (%s -> %s) in %.3f s, %.2f GB/s (read + written), "
                        "backend %s (%s)\n",
                n, pscan_type_name(o.desc.type), widen ? " widened to " : "", widen ? pscan_type_name(o.out_type) : "",
                ps_io_format_name(o.in_format), ps_io_format_name(o.out_format), seconds,
                seconds > 0 ? (double)n * (double)(esize + out_esize) / seconds / 1e9 : 0.0, pscan_backend_name(kind),
                device);
    }
    if (st.ctx) {
        if (st.chunk_in != st.chunk) pscan_memory_free(st.ctx, st.chunk_in);
        if (st.one_in != st.one) pscan_memory_free(st.ctx, st.one_in);
        pscan_memory_free(st.ctx, st.chunk);
        pscan_memory_free(st.ctx, st.one);
        pscan_context_destroy(st.ctx);
    }
    free(st.host);
    ps_io_reader_close(&in.reader);
    if (in.fd > STDIN_FILENO) close(in.fd);
    return r;
}
