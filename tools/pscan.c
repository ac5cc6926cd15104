/*
 * pscan.c - the pscan command-line tool: dispatch to the subcommands, `pscan info`, and the helpers the
 * subcommands share (cli.h).
 *
 *   pscan info                       version, backends compiled in, devices found
 *   pscan scan IN OUT --type T ...   scan raw, text, CSV or .npy, files or pipes, of any size (cmd_scan.c)
 *   pscan reduce|compact|split|expand|sort|histogram|rle|segscan|recur ...   the patterns on files (cmd_patterns.c)
 *   pscan bench [...]                one harness for every backend and algorithm (cmd_bench.c)
 *   pscan explain [...]              step-by-step view of an algorithm (explain.c, when built)
 *
 * Exit codes: 0 ok, 1 runtime failure, 2 usage error.
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#ifdef PSCAN_HAVE_EXPLAIN
#include "explain.h"
#endif

/* ---- messages ---------------------------------------------------------------------------------------- */

void ps_cli_error(const char *format, ...) {
    va_list args;
    va_start(args, format);
    fputs("pscan: ", stderr);
    vfprintf(stderr, format, args);
    fputc('\n', stderr);
    va_end(args);
}

int ps_cli_status_error(pscan_context *ctx, const char *what, pscan_status status) {
    long long native = 0;
    if (ctx) pscan_context_native_error(ctx, &native);
    if (native)
        ps_cli_error("%s: %s: %s (backend error %lld)", what, pscan_status_name(status),
                     pscan_status_string(status), native);
    else
        ps_cli_error("%s: %s: %s", what, pscan_status_name(status), pscan_status_string(status));
    if (ctx && status == PSCAN_ERROR_BUILD_FAILED) {
        const char *log = NULL;
        if (pscan_context_build_log(ctx, &log) == PSCAN_SUCCESS && log && *log) fprintf(stderr, "%s\n", log);
    }
    return PS_CLI_FAILURE;
}

/* ---- options ----------------------------------------------------------------------------------------- */

int ps_cli_is_help(const char *arg) { return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0; }

int ps_cli_option(int argc, char **argv, int *i, const char *name, const char **value) {
    const char *arg = argv[*i];
    size_t len = strlen(name);
    if (strncmp(arg, name, len) != 0) return 0;
    if (arg[len] == '=') {
        *value = arg + len + 1;
        return 1;
    }
    if (arg[len] != '\0') return 0;
    if (*i + 1 >= argc) {
        ps_cli_error("option %s needs a value", name);
        return -1;
    }
    *value = argv[++*i];
    return 1;
}

/* Prints "unknown <what> 'text'; one of: a b c" for a name list. */
static int unknown_name(const char *what, const char *text, const char *(*name_of)(int), int count, int first) {
    fprintf(stderr, "pscan: unknown %s '%s'; one of:", what, text);
    for (int i = first; i < count; i++) fprintf(stderr, " %s", name_of(i));
    fputc('\n', stderr);
    return PS_CLI_USAGE;
}
static const char *type_name_of(int i) { return pscan_type_name((pscan_type)i); }
static const char *op_name_of(int i) { return pscan_op_name((pscan_op)i); }
static const char *backend_name_of(int i) { return pscan_backend_name((pscan_backend)i); }
static const char *algo_name_of(int i) { return pscan_algo_name((pscan_algo)i); }

int ps_cli_parse_type(const char *text, pscan_type *type) {
    if (pscan_type_parse(text, type) == PSCAN_SUCCESS) return PS_CLI_OK;
    return unknown_name("type", text, type_name_of, PSCAN_TYPE_COUNT, 0);
}
int ps_cli_parse_op(const char *text, pscan_op *op) {
    if (pscan_op_parse(text, op) == PSCAN_SUCCESS) return PS_CLI_OK;
    return unknown_name("operator", text, op_name_of, PSCAN_OP_COUNT, 0);
}
int ps_cli_parse_backend(const char *text, pscan_backend *backend) {
    if (pscan_backend_parse(text, backend) == PSCAN_SUCCESS) return PS_CLI_OK;
    return unknown_name("backend", text, backend_name_of, PSCAN_BACKEND_COUNT, 0);
}
int ps_cli_parse_algo(const char *text, pscan_algo *algo) {
    if (pscan_algo_parse(text, algo) == PSCAN_SUCCESS) return PS_CLI_OK;
    return unknown_name("algorithm", text, algo_name_of, PSCAN_ALGO_COUNT, 0);
}

int ps_cli_parse_uint(const char *text, const char *what, uint64_t lowest, uint64_t highest, uint64_t *value) {
    char *end = NULL;
    errno = 0;
    unsigned long long v = strtoull(text, &end, 10);
    if (*text == '\0' || *text == '-' || *end != '\0' || errno == ERANGE || v < lowest || v > highest) {
        ps_cli_error("%s '%s' is not an integer in [%" PRIu64 ", %" PRIu64 "]", what, text, lowest, highest);
        return PS_CLI_USAGE;
    }
    *value = v;
    return PS_CLI_OK;
}

int ps_cli_context_create(pscan_backend backend, pscan_context **ctx) {
    pscan_status s = pscan_context_create(backend, ctx);
    if (s == PSCAN_SUCCESS) return PS_CLI_OK;
    char what[64];
    snprintf(what, sizeof what, "cannot create a %s context", pscan_backend_name(backend));
    return ps_cli_status_error(NULL, what, s);
}

/* ---- pscan info -------------------------------------------------------------------------------------- */

static const char info_usage[] =
    "usage: pscan info\n"
    "\n"
    "Prints the library version and one line per backend saying plainly what was found: not compiled in;\n"
    "compiled in but no device (\"cuda: compiled in, no GPU found\"); or the device a context gets. The last\n"
    "line says which backend `--backend auto` picks here. Exit status 1 if no backend works at all.\n";

/* What "no device" means for each backend, in the user's words. */
static const char *no_device_words(pscan_backend backend) {
    switch (backend) {
    case PSCAN_BACKEND_CUDA: return "no GPU found";
    case PSCAN_BACKEND_OPENCL: return "no OpenCL device found (is an ICD such as PoCL or a GPU driver installed?)";
    default: return "no device found";
    }
}

int ps_cli_info(int argc, char **argv) {
    for (int i = 1; i < argc; i++) {
        if (ps_cli_is_help(argv[i])) {
            fputs(info_usage, stdout);
            return PS_CLI_OK;
        }
        ps_cli_error("info: unexpected argument '%s'", argv[i]);
        fputs(info_usage, stderr);
        return PS_CLI_USAGE;
    }
    printf("pscan %s (header %d.%d.%d)\n", pscan_version_string(), PSCAN_VERSION_MAJOR, PSCAN_VERSION_MINOR,
           PSCAN_VERSION_PATCH);
    int usable = 0;
    /* the concrete backends first, AUTO's choice last */
    static const pscan_backend order[] = {PSCAN_BACKEND_CPU, PSCAN_BACKEND_CUDA, PSCAN_BACKEND_OPENCL,
                                          PSCAN_BACKEND_AUTO};
    for (size_t b = 0; b < sizeof order / sizeof order[0]; b++) {
        pscan_backend backend = order[b];
        int compiled = 0;
        pscan_backend_compiled(backend, &compiled);
        printf("%s: ", pscan_backend_name(backend));
        if (!compiled) {
            printf("not compiled in\n");
            continue;
        }
        pscan_context *ctx = NULL;
        pscan_status s = pscan_context_create(backend, &ctx);
        if (s == PSCAN_ERROR_BACKEND_UNAVAILABLE) {
            printf(backend == PSCAN_BACKEND_AUTO ? "no backend works\n" : "compiled in, %s\n",
                   no_device_words(backend));
            continue;
        }
        if (s != PSCAN_SUCCESS) {
            printf("compiled in, but no context: %s (%s)\n", pscan_status_name(s), pscan_status_string(s));
            continue;
        }
        char device[256] = "";
        pscan_backend actual = backend;
        pscan_context_device_name(ctx, device, sizeof device);
        pscan_context_backend(ctx, &actual);
        const char *shown = strncmp(device, "CPU: ", 5) == 0 ? device + 5 : device;
        if (backend == PSCAN_BACKEND_AUTO)
            printf("picks %s (%s)\n", pscan_backend_name(actual), shown);
        else if (backend == PSCAN_BACKEND_CPU)
            printf("%s\n", shown);
        else
            printf("compiled in, device: %s\n", shown);
        usable += backend != PSCAN_BACKEND_AUTO;
        pscan_context_destroy(ctx);
    }
    return usable > 0 ? PS_CLI_OK : PS_CLI_FAILURE;
}

/* ---- dispatch ---------------------------------------------------------------------------------------- */

typedef struct subcommand {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} subcommand;

static const subcommand subcommands[] = {
    {"info", ps_cli_info, "version, backends compiled in, devices found"},
    {"scan", ps_cli_scan, "scan raw, text, CSV or .npy data of any size, files or pipes (streamed in chunks)"},
    {"reduce", ps_cli_patterns, "reduce a file to one value (sum, product, min, max, and, or, xor)"},
    {"compact", ps_cli_patterns, "keep the items of a file that a flags file or a comparison selects"},
    {"split", ps_cli_patterns, "write the selected items first, then the others, both in order"},
    {"expand", ps_cli_patterns, "from per-item counts, the item index (rank, value) of every output slot"},
    {"sort", ps_cli_patterns, "stable radix sort of a file (descending, a bit range, a payload file)"},
    {"histogram", ps_cli_patterns, "count a file's items in evenly spaced bins or between given edges"},
    {"rle", ps_cli_patterns, "run-length encode a file into a values file and a lengths file"},
    {"segscan", ps_cli_patterns, "scan each segment of a file (offsets or head-flags file)"},
    {"recur", ps_cli_patterns, "first- or second-order linear recurrence of coefficient files (f32, f64)"},
    {"bench", ps_cli_bench, "time every algorithm of a backend against a copy (and CUB on CUDA)"},
#ifdef PSCAN_HAVE_EXPLAIN
    {"explain", ps_cli_explain, "show an algorithm's steps on a small input"},
#endif
};
#define SUBCOMMAND_COUNT (sizeof subcommands / sizeof subcommands[0])

static void usage(FILE *to) {
    fprintf(to, "usage: pscan <command> [options]    (pscan <command> --help for its options)\n\ncommands:\n");
    for (size_t i = 0; i < SUBCOMMAND_COUNT; i++)
        fprintf(to, "  %-9s %s\n", subcommands[i].name, subcommands[i].summary);
    fprintf(to, "\nexit status: 0 ok, 1 runtime failure, 2 usage error\n");
}

int main(int argc, char **argv) {
    if (argc < 2) {
        usage(stderr);
        return PS_CLI_USAGE;
    }
    if (ps_cli_is_help(argv[1]) || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return PS_CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("pscan %s\n", pscan_version_string());
        return PS_CLI_OK;
    }
    for (size_t i = 0; i < SUBCOMMAND_COUNT; i++)
        if (strcmp(argv[1], subcommands[i].name) == 0) return subcommands[i].run(argc - 1, argv + 1);
    ps_cli_error("unknown command '%s'", argv[1]);
    usage(stderr);
    return PS_CLI_USAGE;
}
