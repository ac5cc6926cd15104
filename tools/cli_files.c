/*
 * cli_files.c - what every file-reading subcommand of the pscan tool shares (cli_files.h): opening IN with its
 * format found (named, the extension's, or sniffed) and its element type checked, and the output target
 * written safely (a temporary file renamed onto OUT, copied back for hard links, straight through for pipes
 * and terminals). Moved out of cmd_scan.c so that `pscan scan` and the pattern commands (cmd_patterns.c)
 * behave the same on the same files.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include "cli_files.h"

/* The temporary output, removed by the signal handler if the user interrupts the command. */
static char temp_path[PATH_MAX + 32];
static volatile sig_atomic_t temp_live;

static void remove_temp_and_die(int sig) {
    if (temp_live) unlink(temp_path);
    signal(sig, SIG_DFL);
    raise(sig);
}

/* ---- input ------------------------------------------------------------------------------------------- */


int ps_cli_input_open(ps_cli_input_spec *o, ps_cli_input *in) {
    const char *path = o->in_path;
    int is_stdin = strcmp(path, "-") == 0;
    struct stat info;
    ps_io_in bytes;
    memset(in, 0, sizeof *in);
    in->count = UINT64_MAX;
    in->fd = is_stdin ? STDIN_FILENO : open(path, O_RDONLY);
    if (in->fd < 0) {
        ps_cli_error("cannot open %s: %s", path, strerror(errno));
        return PS_CLI_FAILURE;
    }
    if (fstat(in->fd, &info) != 0 || S_ISDIR(info.st_mode)) {
        ps_cli_error("cannot read %s: %s", path, S_ISDIR(info.st_mode) ? "it is a directory" : strerror(errno));
        return PS_CLI_FAILURE;
    }
    /* stdin redirected from a file counts as one only when nothing has read from it yet */
    in->regular = S_ISREG(info.st_mode) && (!is_stdin || lseek(in->fd, 0, SEEK_CUR) == 0);
    if (ps_io_in_open_fd(&bytes, in->fd) != 0) {
        ps_cli_error("out of memory");
        return PS_CLI_FAILURE;
    }

    /* The format: named, else the extension's, else what the first bytes say. A format that was not named
     * is checked against the first bytes, so that a text file is never scanned as binary. */
    ps_io_format format = o->in_format;
    if (format == PS_IO_AUTO && !is_stdin) format = ps_io_format_from_path(path);
    if (o->in_format == PS_IO_AUTO && (format == PS_IO_AUTO || format == PS_IO_RAW)) {
        size_t have = ps_io_in_fill(&bytes, 4096);
        if (have >= 6 && memcmp(bytes.buf + bytes.pos, "\x93NUMPY", 6) == 0) {
            format = PS_IO_NPY;
        } else if (ps_io_looks_like_text(bytes.buf + bytes.pos, have)) {
            ps_cli_error("%s looks like text, not raw binary: say --format text (or csv), or --format raw to "
                         "scan its bytes anyway", is_stdin ? "stdin" : path);
            ps_io_in_close(&bytes);
            return PS_CLI_USAGE;
        } else {
            format = PS_IO_RAW;
        }
    }
    o->in_format = format;
    if (format != PS_IO_CSV && (o->column.index || o->column.name[0] || o->header >= 0)) {
        ps_cli_error("--column, --header and --no-header are for CSV input, and %s is %s",
                     is_stdin ? "stdin" : path, ps_io_format_name(format));
        ps_io_in_close(&bytes);
        return PS_CLI_USAGE;
    }

    if (format != PS_IO_NPY && !o->have_type) {
        ps_cli_error("needs --type (only a .npy input carries its element type; pscan scan --help)");
        ps_io_in_close(&bytes);
        return PS_CLI_USAGE;
    }
    if (ps_io_reader_open(&in->reader, &bytes, format, o->type, &o->column, o->header) != 0) {
        ps_cli_error("%s: %s", is_stdin ? "stdin" : path, in->reader.error);
        return PS_CLI_FAILURE;
    }
    if (format == PS_IO_NPY) {
        if (o->have_type && o->type != in->reader.type) {
            ps_cli_error("%s holds %s elements but --type says %s", path, pscan_type_name(in->reader.type),
                         pscan_type_name(o->type));
            return PS_CLI_USAGE;
        }
        o->type = in->reader.type;
        o->have_type = 1;
        in->count = in->reader.remaining;
        in->offset = in->reader.in.pos; /* the header was the first thing read */
    }
    size_t esize = pscan_type_size(o->type);
    if (in->regular && format == PS_IO_RAW) {
        uint64_t size = (uint64_t)info.st_size;
        if (size % esize != 0) {
            ps_cli_error("%s is %" PRIu64 " bytes, not a whole number of %zu-byte %s elements", path, size, esize,
                         pscan_type_name(o->type));
            return PS_CLI_FAILURE;
        }
        in->count = size / esize;
    }
    if (in->regular && format == PS_IO_NPY && (uint64_t)info.st_size != in->offset + in->count * esize) {
        ps_cli_error("%s: the .npy header declares %" PRIu64 " elements (%" PRIu64 " bytes of data) but the file "
                     "holds %" PRIu64 " bytes of data", path, in->count, in->count * esize,
                     (uint64_t)info.st_size - in->offset);
        return PS_CLI_FAILURE;
    }
    return PS_CLI_OK;
}

/* ---- output target ----------------------------------------------------------------------------------- */


/* A unix socket is connected to, not opened. */
static int socket_open(const char *path) {
    struct sockaddr_un addr;
    memset(&addr, 0, sizeof addr);
    addr.sun_family = AF_UNIX;
    if (strlen(path) >= sizeof addr.sun_path) return errno = ENAMETOOLONG, -1;
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&addr, sizeof addr) != 0) {
        int e = errno;
        close(fd);
        return errno = e, -1;
    }
    return fd;
}

int ps_cli_output_open(const char *path, ps_cli_output *out) {
    struct stat info, std_out;
    memset(out, 0, sizeof *out);
    out->fd = -1;
    int is_stdout = strcmp(path, "-") == 0;
    if (!is_stdout && stat(path, &info) == 0 && fstat(STDOUT_FILENO, &std_out) == 0 &&
        info.st_dev == std_out.st_dev && info.st_ino == std_out.st_ino)
        is_stdout = 1; /* /dev/stdout, /proc/self/fd/1 or the very file stdout is: write to stdout as is */
    if (is_stdout) {
        out->kind = TARGET_THROUGH;
        out->fd = STDOUT_FILENO;
        out->seekable = fstat(STDOUT_FILENO, &std_out) == 0 && S_ISREG(std_out.st_mode) &&
                        lseek(STDOUT_FILENO, 0, SEEK_CUR) == 0;
        return PS_CLI_OK;
    }

    if (stat(path, &info) != 0) {
        struct stat link;
        if (errno != ENOENT) {
            ps_cli_error("cannot write %s: %s", path, strerror(errno));
            return PS_CLI_FAILURE;
        }
        if (lstat(path, &link) == 0) {
            ps_cli_error("%s is a symbolic link to a file that does not exist; pscan does not create through it",
                         path);
            return PS_CLI_FAILURE;
        }
        out->kind = TARGET_RENAME;
        if (strlen(path) >= sizeof out->real) {
            ps_cli_error("output path too long: %s", path);
            return PS_CLI_USAGE;
        }
        strcpy(out->real, path);
    } else if (S_ISDIR(info.st_mode)) {
        ps_cli_error("%s is a directory", path);
        return PS_CLI_FAILURE;
    } else if (!S_ISREG(info.st_mode)) {
        out->kind = TARGET_THROUGH;
        snprintf(out->real, sizeof out->real, "%s", path);
        out->fd = S_ISSOCK(info.st_mode) ? socket_open(path) : open(path, O_WRONLY);
        if (out->fd < 0) {
            ps_cli_error("cannot write %s: %s", path, strerror(errno));
            return PS_CLI_FAILURE;
        }
        return PS_CLI_OK;
    } else {
        if (!realpath(path, out->real)) {
            ps_cli_error("cannot resolve %s: %s", path, strerror(errno));
            return PS_CLI_FAILURE;
        }
        if ((info.st_mode & 0222) == 0 || access(out->real, W_OK) != 0) {
            ps_cli_error("%s is read-only (mode %04o); pscan does not replace it: make it writable or remove it",
                         path, (unsigned)(info.st_mode & 07777));
            return PS_CLI_FAILURE;
        }
        out->kind = info.st_nlink > 1 ? TARGET_COPY : TARGET_RENAME;
        out->old = info;
        out->existed = 1;
    }

    /* A temporary file in the target's directory, so that rename() is atomic. */
    if (snprintf(temp_path, sizeof temp_path, "%s.tmp.XXXXXX", out->real) >= (int)sizeof temp_path) {
        ps_cli_error("output path too long: %s", out->real);
        return PS_CLI_USAGE;
    }
    signal(SIGINT, remove_temp_and_die);
    signal(SIGTERM, remove_temp_and_die);
    signal(SIGHUP, remove_temp_and_die);
    out->fd = mkstemp(temp_path);
    if (out->fd < 0) {
        ps_cli_error("cannot create %s: %s", temp_path, strerror(errno));
        return PS_CLI_FAILURE;
    }
    temp_live = 1;
    out->seekable = 1;
    return PS_CLI_OK;
}

/* Copies the temporary file into the target's own inode (TARGET_COPY). */
static int copy_back(ps_cli_output *out) {
    int fd = open(out->real, O_WRONLY | O_TRUNC);
    if (fd < 0) return -1;
    static char buf[1 << 16];
    int err = 0;
    for (off_t at = 0;;) {
        ssize_t got = pread(out->fd, buf, sizeof buf, at);
        if (got < 0 && errno == EINTR) continue;
        if (got <= 0) {
            err = got < 0 ? errno : 0;
            break;
        }
        for (ssize_t done = 0; done < got && !err;) {
            ssize_t put = write(fd, buf + done, (size_t)(got - done));
            if (put < 0 && errno != EINTR) err = errno;
            if (put > 0) done += put;
        }
        if (err) break;
        at += got;
    }
    if (!err && fsync(fd) != 0) err = errno;
    if (close(fd) != 0 && !err) err = errno;
    return err ? (errno = err, -1) : 0;
}

/* Publishes the temporary file (r == PS_CLI_OK) or removes it; returns the final status. */
int ps_cli_output_close(ps_cli_output *out, int r) {
    if (out->kind == TARGET_THROUGH) {
        if (out->fd != STDOUT_FILENO && close(out->fd) != 0 && r == PS_CLI_OK) {
            ps_cli_error("cannot close %s: %s", out->real, strerror(errno));
            r = PS_CLI_FAILURE;
        }
        return r;
    }
    if (out->fd < 0) return r;
    if (r == PS_CLI_OK && out->kind == TARGET_RENAME) {
        /* mkstemp made the file 0600: give it the target's mode and owner, or a plain create's mode. */
        mode_t mask = umask(0);
        umask(mask);
        mode_t mode = out->existed ? out->old.st_mode & 07777 : 0666 & ~mask;
        if (out->existed && fchown(out->fd, out->old.st_uid, out->old.st_gid) != 0) {
            /* not the owner: the file becomes ours, as with any program that rewrites a file */
        }
        if (fchmod(out->fd, mode) != 0 || fsync(out->fd) != 0) {
            ps_cli_error("cannot finish %s: %s", temp_path, strerror(errno));
            r = PS_CLI_FAILURE;
        }
    }
    if (r == PS_CLI_OK && out->kind == TARGET_COPY && copy_back(out) != 0) {
        ps_cli_error("cannot copy the result back into %s: %s (it may be incomplete; the result is in %s)",
                     out->real, strerror(errno), temp_path);
        close(out->fd);
        temp_live = 0;
        return PS_CLI_FAILURE;
    }
    if (close(out->fd) != 0 && r == PS_CLI_OK) {
        ps_cli_error("cannot close %s: %s", temp_path, strerror(errno));
        r = PS_CLI_FAILURE;
    }
    if (r == PS_CLI_OK && out->kind == TARGET_RENAME && rename(temp_path, out->real) != 0) {
        ps_cli_error("cannot rename %s to %s: %s", temp_path, out->real, strerror(errno));
        r = PS_CLI_FAILURE;
    }
    if (r != PS_CLI_OK || out->kind == TARGET_COPY) unlink(temp_path);
    temp_live = 0;
    return r;
}
