/*
 * cmd_scan.c - `pscan scan IN OUT`: scans a raw binary file of any size on any backend.
 *
 * The file is streamed through the device in chunks (64 MiB by default), so files larger than host or
 * device memory work. Each chunk is uploaded, scanned in place with desc.init = the carry out of the chunks
 * before it, and downloaded. The carry into the next chunk is the last inclusive value of this one: the
 * chunk's last output for an inclusive scan, and that output combined with the chunk's last input for an
 * exclusive one (a one-element inclusive scan does that combine, so the tool needs no operator code of its
 * own). A reverse scan visits the chunks from the end of the file backwards; "last" is then the first
 * element of the chunk. Reads and writes use pread/pwrite at the chunk's offset.
 *
 * The output goes to OUT.tmp.XXXXXX in OUT's directory and is renamed onto OUT only when everything has been
 * written and synced, so a failure (or Ctrl-C) never leaves a half-written OUT that looks complete.
 */
#define _POSIX_C_SOURCE 200809L
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include "cli.h"

static const char scan_usage[] =
    "usage: pscan scan IN OUT --type T [--op OP] [--exclusive] [--reverse] [--init V]\n"
    "                         [--backend B] [--algo A] [--chunk-mb N] [--progress]\n"
    "\n"
    "Scans the raw binary file IN (native-endian elements of type T) into OUT.\n"
    "  --type T      i8 u8 i16 u16 i32 u32 i64 u64 f32 f64 (required)\n"
    "  --op OP       sum product min max and or xor (default sum; and/or/xor need an integer type)\n"
    "  --exclusive   out[i] combines the elements before i (out[0] = init)\n"
    "  --reverse     scan from the end of the file towards its start\n"
    "  --init V      initial value (default: the operator's identity), e.g. 100, -3, 0x7f, 2.5\n"
    "  --backend B   auto cpu cuda opencl (default auto)\n"
    "  --algo A      an algorithm of that backend (default auto; see `pscan bench`)\n"
    "  --chunk-mb N  stream the file through the device N MiB at a time (default 64)\n"
    "  --progress    report progress on stderr (default: only when stderr is a terminal)\n"
    "\n"
    "OUT is written to a temporary file next to it and renamed when complete. IN may be OUT.\n"
    "Example: 8 i32 values 3 1 7 0 4 1 6 3, --exclusive -> 0 3 4 11 11 15 16 22\n";

typedef struct scan_options {
    const char *in_path, *out_path;
    pscan_scan_desc desc;
    int have_type, have_init, progress;
    unsigned char init[8];
    pscan_backend backend;
    uint64_t chunk_bytes;
} scan_options;

/* The temporary output, removed by the signal handler if the user interrupts the scan. */
static char temp_path[4096];
static volatile sig_atomic_t temp_live;

static void remove_temp_and_die(int sig) {
    if (temp_live) unlink(temp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

static int parse_options(int argc, char **argv, scan_options *o) {
    memset(o, 0, sizeof *o);
    o->desc.op = PSCAN_OP_SUM;
    o->desc.algo = PSCAN_ALGO_AUTO;
    o->backend = PSCAN_BACKEND_AUTO;
    o->chunk_bytes = 64u << 20;
    o->progress = isatty(STDERR_FILENO);
    const char *init_text = NULL;
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
            init_text = v;
        } else if ((m = ps_cli_option(argc, argv, &i, "--chunk-mb", &v)) != 0) {
            uint64_t mb = 0;
            r = m < 0 ? PS_CLI_USAGE : ps_cli_parse_uint(v, "--chunk-mb", 1, 1u << 20, &mb);
            o->chunk_bytes = mb << 20;
        } else if (strcmp(argv[i], "--exclusive") == 0) {
            o->desc.flags |= PSCAN_SCAN_EXCLUSIVE;
        } else if (strcmp(argv[i], "--reverse") == 0) {
            o->desc.flags |= PSCAN_SCAN_REVERSE;
        } else if (strcmp(argv[i], "--progress") == 0) {
            o->progress = 1;
        } else if (strcmp(argv[i], "--no-progress") == 0) {
            o->progress = 0;
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
    if (positional < 2 || !o->have_type) {
        ps_cli_error("scan: %s (pscan scan --help)", positional < 2 ? "needs IN and OUT" : "needs --type");
        return PS_CLI_USAGE;
    }
    if (init_text) {
        int r = ps_cli_parse_value(init_text, o->desc.type, o->init);
        if (r != PS_CLI_OK) return r;
        o->have_init = 1;
    }
    if (o->desc.op >= PSCAN_OP_AND && (o->desc.type == PSCAN_TYPE_F32 || o->desc.type == PSCAN_TYPE_F64)) {
        ps_cli_error("scan: operator %s needs an integer type, not %s", pscan_op_name(o->desc.op),
                     pscan_type_name(o->desc.type));
        return PS_CLI_USAGE;
    }
    return PS_CLI_OK;
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

/* Device side of the streaming scan: one chunk buffer scanned in place, one element for the carry. */
typedef struct stream {
    pscan_context *ctx;
    void *chunk, *one;
    unsigned char *host;
} stream;

static void progress_report(uint64_t done, uint64_t total, int final) {
    fprintf(stderr, "\rpscan scan: %" PRIu64 " / %" PRIu64 " MiB (%3.0f%%)%s", done >> 20, total >> 20,
            total ? 100.0 * (double)done / (double)total : 100.0, final ? "\n" : "");
    fflush(stderr);
}

/* Scans the whole input into fd_out; 0 on success, else after printing a message, PS_CLI_FAILURE. */
static int scan_file(const scan_options *o, int fd_in, int fd_out, uint64_t n, stream *st) {
    const size_t esize = pscan_type_size(o->desc.type);
    const int exclusive = (o->desc.flags & PSCAN_SCAN_EXCLUSIVE) != 0;
    const int reverse = (o->desc.flags & PSCAN_SCAN_REVERSE) != 0;
    uint64_t chunk_elems = o->chunk_bytes / esize;
    if (chunk_elems == 0) chunk_elems = 1;
    if (chunk_elems > n) chunk_elems = n;
    if (n == 0) return PS_CLI_OK;

    pscan_status s;
    st->host = (unsigned char *)malloc(chunk_elems * esize);
    if (!st->host) {
        ps_cli_error("cannot allocate a %" PRIu64 " MiB host buffer (try a smaller --chunk-mb)",
                     (chunk_elems * esize) >> 20);
        return PS_CLI_FAILURE;
    }
    if ((s = pscan_memory_alloc(st->ctx, chunk_elems * esize, &st->chunk)) != PSCAN_SUCCESS ||
        (s = pscan_memory_alloc(st->ctx, esize, &st->one)) != PSCAN_SUCCESS)
        return ps_cli_status_error(st->ctx, "cannot allocate device memory (try a smaller --chunk-mb)", s);

    unsigned char carry[8], last_in[8];
    memcpy(carry, o->init, sizeof carry);
    int have_carry = o->have_init;
    pscan_scan_desc desc = o->desc;

    for (uint64_t done = 0; done < n;) {
        /* Chunk [begin, begin + count) in elements; scan order runs backwards through the file if reverse. */
        uint64_t count = n - done < chunk_elems ? n - done : chunk_elems;
        uint64_t begin = reverse ? n - done - count : done;
        size_t bytes = (size_t)(count * esize);
        size_t last = reverse ? 0 : (size_t)(count - 1) * esize; /* byte offset of the last in scan order */
        int err = read_at(fd_in, st->host, bytes, begin * esize);
        if (err) {
            ps_cli_error("cannot read %s: %s", o->in_path, strerror(err));
            return PS_CLI_FAILURE;
        }
        memcpy(last_in, st->host + last, esize);

        desc.init = have_carry ? carry : NULL;
        if ((s = pscan_memory_upload(st->ctx, st->chunk, st->host, bytes)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "upload", s);
        if ((s = pscan_scan(st->ctx, &desc, st->chunk, st->chunk, count, NULL, 0)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "scan", s);
        if ((s = pscan_memory_download(st->ctx, st->host, st->chunk, bytes)) != PSCAN_SUCCESS ||
            (s = pscan_context_synchronize(st->ctx)) != PSCAN_SUCCESS)
            return ps_cli_status_error(st->ctx, "download", s);

        /* Carry phase: the last inclusive value of this chunk goes into the next one. */
        memcpy(carry, st->host + last, esize);
        if (exclusive) {
            pscan_scan_desc one = {o->desc.type, o->desc.op, 0, PSCAN_ALGO_AUTO, carry};
            if ((s = pscan_memory_upload(st->ctx, st->one, last_in, esize)) != PSCAN_SUCCESS ||
                (s = pscan_scan(st->ctx, &one, st->one, st->one, 1, NULL, 0)) != PSCAN_SUCCESS ||
                (s = pscan_memory_download(st->ctx, carry, st->one, esize)) != PSCAN_SUCCESS ||
                (s = pscan_context_synchronize(st->ctx)) != PSCAN_SUCCESS)
                return ps_cli_status_error(st->ctx, "carry", s);
        }
        have_carry = 1;

        err = write_at(fd_out, st->host, bytes, begin * esize);
        if (err) {
            ps_cli_error("cannot write %s: %s", temp_path, strerror(err));
            return PS_CLI_FAILURE;
        }
        done += count;
        if (o->progress) progress_report(done * esize, n * esize, done == n);
    }
    return PS_CLI_OK;
}

int ps_cli_scan(int argc, char **argv) {
    scan_options o;
    int r = parse_options(argc, argv, &o);
    if (r != PS_CLI_OK) return r < 0 ? PS_CLI_OK : r;
    const size_t esize = pscan_type_size(o.desc.type);

    /* Input: a regular file (pread needs one) whose size is a whole number of elements. */
    int fd_in = open(o.in_path, O_RDONLY);
    if (fd_in < 0) {
        ps_cli_error("cannot open %s: %s", o.in_path, strerror(errno));
        return PS_CLI_FAILURE;
    }
    struct stat info;
    if (fstat(fd_in, &info) != 0 || !S_ISREG(info.st_mode)) {
        ps_cli_error("%s is not a regular file (pscan scan reads files at offsets)", o.in_path);
        close(fd_in);
        return PS_CLI_FAILURE;
    }
    uint64_t size = (uint64_t)info.st_size;
    if (size % esize != 0) {
        ps_cli_error("%s is %" PRIu64 " bytes, not a whole number of %zu-byte %s elements", o.in_path, size,
                     esize, pscan_type_name(o.desc.type));
        close(fd_in);
        return PS_CLI_FAILURE;
    }

    /* Output: a temporary file in OUT's directory, so that rename() is atomic. */
    if (snprintf(temp_path, sizeof temp_path, "%s.tmp.XXXXXX", o.out_path) >= (int)sizeof temp_path) {
        ps_cli_error("output path too long: %s", o.out_path);
        close(fd_in);
        return PS_CLI_USAGE;
    }
    signal(SIGINT, remove_temp_and_die);
    signal(SIGTERM, remove_temp_and_die);
    signal(SIGHUP, remove_temp_and_die);
    int fd_out = mkstemp(temp_path);
    if (fd_out < 0) {
        ps_cli_error("cannot create %s: %s", temp_path, strerror(errno));
        close(fd_in);
        return PS_CLI_FAILURE;
    }
    temp_live = 1;

    stream st = {NULL, NULL, NULL, NULL};
    r = ps_cli_context_create(o.backend, &st.ctx);
    if (r == PS_CLI_OK) {
        /* Refuse an algorithm the backend lacks before any data moves. */
        size_t temp_bytes = 0;
        pscan_status s = pscan_scan_temp_bytes(st.ctx, &o.desc, o.chunk_bytes / esize + 1, &temp_bytes);
        if (s == PSCAN_ERROR_UNSUPPORTED_ALGORITHM || s == PSCAN_ERROR_UNSUPPORTED_TYPE) {
            pscan_backend kind = o.backend;
            pscan_context_backend(st.ctx, &kind);
            ps_cli_error("scan: the %s backend cannot run %s %s with algorithm %s: %s", pscan_backend_name(kind),
                         pscan_type_name(o.desc.type), pscan_op_name(o.desc.op), pscan_algo_name(o.desc.algo),
                         pscan_status_string(s));
            r = PS_CLI_USAGE;
        }
    }
    if (r == PS_CLI_OK) r = scan_file(&o, fd_in, fd_out, size / esize, &st);
    if (st.ctx) {
        pscan_memory_free(st.ctx, st.chunk);
        pscan_memory_free(st.ctx, st.one);
        pscan_context_destroy(st.ctx);
    }
    free(st.host);
    close(fd_in);

    /* Publish: mkstemp made the file 0600; give it the mode a plain create would have (0666 & ~umask). */
    if (r == PS_CLI_OK) {
        mode_t mask = umask(0);
        umask(mask);
        if (fchmod(fd_out, 0666 & ~mask) != 0 || fsync(fd_out) != 0) {
            ps_cli_error("cannot finish %s: %s", temp_path, strerror(errno));
            r = PS_CLI_FAILURE;
        }
    }
    if (close(fd_out) != 0 && r == PS_CLI_OK) {
        ps_cli_error("cannot close %s: %s", temp_path, strerror(errno));
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK && rename(temp_path, o.out_path) != 0) {
        ps_cli_error("cannot rename %s to %s: %s", temp_path, o.out_path, strerror(errno));
        r = PS_CLI_FAILURE;
    }
    if (r != PS_CLI_OK) unlink(temp_path);
    temp_live = 0;
    return r;
}
