/*
 * cli_files.h - input files and output targets of the pscan tool's file subcommands (cli_files.c). Internal to
 * tools/. Every function prints its own message on failure and returns a PS_CLI_* exit code.
 */
#ifndef PSCAN_CLI_FILES_H
#define PSCAN_CLI_FILES_H

#include <limits.h>
#include <stdint.h>
#include <sys/stat.h>

#include "cli.h"
#include "io_formats.h"

/* What the caller knows about IN before opening it; ps_cli_input_open fills in format and (for .npy) type. */
typedef struct ps_cli_input_spec {
    const char *in_path;   /* a path, or - for stdin */
    ps_io_format in_format; /* PS_IO_AUTO: the extension's, else sniffed; set to the format found */
    ps_io_column column;   /* CSV only */
    int header;            /* CSV only: 1, 0, -1 decide */
    int have_type;         /* type was given (required unless IN is .npy, whose dtype sets it) */
    pscan_type type;
} ps_cli_input_spec;

typedef struct ps_cli_input {
    int fd, regular;  /* regular: a regular file, readable at offsets */
    ps_io_reader reader;
    uint64_t count;   /* elements, when known before reading (a raw or .npy file); else UINT64_MAX */
    uint64_t offset;  /* where the elements start in the file */
} ps_cli_input;

/* Opens IN for reading: its format, the .npy dtype against --type, a raw file's size in whole elements. */
int ps_cli_input_open(ps_cli_input_spec *o, ps_cli_input *in);

typedef enum target_kind {
    TARGET_THROUGH, /* not a regular file, or stdout: written in order, straight through */
    TARGET_RENAME,  /* a regular file (new or not): a temporary file renamed onto it */
    TARGET_COPY     /* a regular file with other hard links: a temporary file copied back into it */
} target_kind;

typedef struct ps_cli_output {
    target_kind kind;
    int fd;            /* what the scan writes: the temporary file, or the target itself */
    int seekable;      /* fd is a file at offset 0 that pwrite can patch */
    char real[PATH_MAX];
    struct stat old;   /* the target as it was (kind != THROUGH and it existed) */
    int existed;
} ps_cli_output;

/* Opens the target OUT (a path, or - for stdout): see cmd_scan.c's header for what each kind of target gets. */
int ps_cli_output_open(const char *path, ps_cli_output *out);
/* Publishes the temporary file (r == PS_CLI_OK) or removes it; returns the final status. One output may be
 * open at a time (the signal handler removes its temporary file). */
int ps_cli_output_close(ps_cli_output *out, int r);

#endif /* PSCAN_CLI_FILES_H */
