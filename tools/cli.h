/*
 * cli.h - what the pscan tool's subcommands share: exit codes, option parsing, name and value parsing,
 * messages. Internal to tools/. Every parse helper prints its own message on failure, so that each
 * subcommand reads as a list of options.
 */
#ifndef PSCAN_CLI_H
#define PSCAN_CLI_H

#include <stdint.h>

#include "pscan.h"

/* Exit codes of every subcommand. */
#define PS_CLI_OK 0
#define PS_CLI_FAILURE 1 /* the request was well formed but failed: I/O, device, memory */
#define PS_CLI_USAGE 2   /* the request was malformed: unknown option, name or value */

/* Subcommands: argv[0] is the subcommand's name. */
int ps_cli_info(int argc, char **argv);
int ps_cli_scan(int argc, char **argv);
int ps_cli_bench(int argc, char **argv);
/* reduce, compact, split, expand, sort, histogram, rle, segscan and recur on files (cmd_patterns.c): argv[0]
 * names which. */
int ps_cli_patterns(int argc, char **argv);

/* "pscan: <message>\n" on stderr. */
void ps_cli_error(const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Whether argv[*i] is the option name ("--type"), given as "--type V" or "--type=V". On a match, *value is
 * set (and *i advanced past a separate value) and 1 is returned; 0 if argv[*i] is another option; -1 after
 * printing a message if the value is missing. */
int ps_cli_option(int argc, char **argv, int *i, const char *name, const char **value);
/* Whether argv[i] is "-h" or "--help". */
int ps_cli_is_help(const char *arg);

/* Name parsers: on an unknown name print the valid ones and return PS_CLI_USAGE; else PS_CLI_OK. */
int ps_cli_parse_type(const char *text, pscan_type *type);
int ps_cli_parse_op(const char *text, pscan_op *op);
int ps_cli_parse_backend(const char *text, pscan_backend *backend);
int ps_cli_parse_algo(const char *text, pscan_algo *algo);
/* An unsigned decimal in [lowest, highest]; what names the option in the message. */
int ps_cli_parse_uint(const char *text, const char *what, uint64_t lowest, uint64_t highest, uint64_t *value);

/* pscan_context_create with a message naming the backend and the status on failure. */
int ps_cli_context_create(pscan_backend backend, pscan_context **ctx);
/* Prints "pscan: <what>: <status name>: <status text>" (and the native error code if any); returns 1. */
int ps_cli_status_error(pscan_context *ctx, const char *what, pscan_status status);

#endif /* PSCAN_CLI_H */
