/*
 * explain.c - `pscan explain`: what a GPU scan does to a small array, step by step.
 *
 *   pscan explain hillis-steele|blelloch|blelloch-unpadded [--op OP] [--inclusive|--exclusive] [--init V] v0 v1 ...
 *
 * A CPU simulation of one block of src/cuda/1_hillis_steele.cu or 2_blelloch.cu with the same index
 * arithmetic: the loop over t stands for the block's threads, each pass of it for the work between two
 * __syncthreads. The array is padded to a power of two with the operator's identity, as the kernels pad their
 * last tile. Values are 64-bit signed integers; arithmetic wraps, as in the library. The last line printed is
 * the result alone, the n values separated by single spaces:
 *
 *   $ pscan explain blelloch 3 1 7 0 4 1 6 3
 *   ...
 *   0 3 4 11 11 15 16 22
 *
 * Hillis-Steele's natural result is inclusive and Blelloch's exclusive; --inclusive / --exclusive ask for the
 * other, converted the way the kernels convert it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "explain.h"

/* Enough for a screen; the simulation is quadratic in nothing, but nobody reads a longer trace. */
#define EXPLAIN_MAX 1024

typedef struct explain_state {
    pscan_op op;
    int width;          /* column width for values */
    int printing;       /* 0 on the first, measuring pass */
    int64_t v[2 * EXPLAIN_MAX]; /* Hillis-Steele's two buffers, or Blelloch's one tree */
} explain_state;

static int64_t combine(pscan_op op, int64_t a, int64_t b) {
    uint64_t x = (uint64_t)a, y = (uint64_t)b;
    switch (op) {
    case PSCAN_OP_SUM: return (int64_t)(x + y);
    case PSCAN_OP_PRODUCT: return (int64_t)(x * y);
    case PSCAN_OP_MIN: return b < a ? b : a;
    case PSCAN_OP_MAX: return a < b ? b : a;
    case PSCAN_OP_AND: return (int64_t)(x & y);
    case PSCAN_OP_OR: return (int64_t)(x | y);
    default: return (int64_t)(x ^ y);
    }
}

static int64_t identity(pscan_op op) {
    switch (op) {
    case PSCAN_OP_PRODUCT: return 1;
    case PSCAN_OP_MIN: return INT64_MAX;
    case PSCAN_OP_MAX: return INT64_MIN;
    case PSCAN_OP_AND: return -1;
    default: return 0;
    }
}

/* A value as printed: min's and max's identities (the padding) read as +inf and -inf. */
static void format(const explain_state *st, int64_t v, char *buf, size_t bytes) {
    if (st->op == PSCAN_OP_MIN && v == INT64_MAX)
        snprintf(buf, bytes, "+inf");
    else if (st->op == PSCAN_OP_MAX && v == INT64_MIN)
        snprintf(buf, bytes, "-inf");
    else
        snprintf(buf, bytes, "%" PRId64, v);
}

/* One row: a label, then count values; positions where mark[i] is set are bracketed. On the measuring pass
 * only the widest value is recorded. */
static void row(explain_state *st, const char *label, const int64_t *v, size_t count, const unsigned char *mark) {
    char buf[32];
    if (!st->printing) {
        for (size_t i = 0; i < count; i++) {
            format(st, v[i], buf, sizeof buf);
            if ((int)strlen(buf) > st->width) st->width = (int)strlen(buf);
        }
        return;
    }
    printf("%-24s", label);
    for (size_t i = 0; i < count; i++) {
        format(st, v[i], buf, sizeof buf);
        char cell[40];
        snprintf(cell, sizeof cell, mark && mark[i] ? "[%s]" : "%s ", buf);
        printf(" %*s", st->width + 2, cell);
    }
    putchar('\n');
}

static void note(const explain_state *st, const char *text) {
    if (st->printing) printf("%s\n", text);
}

/* ---- 1_hillis_steele.cu: double-buffered log-step scan, one element per thread ------------------------ */

static void explain_hillis_steele(explain_state *st, const int64_t *in, size_t n, size_t threads, int exclusive,
                                  int64_t init, int64_t *result) {
    int64_t *buf[2] = {st->v, st->v + threads};
    unsigned char mark[EXPLAIN_MAX];
    char label[64];
    note(st, "Hillis-Steele: at offset d every thread t >= d combines the value d places to its left into its");
    note(st, "own, reading one buffer and writing the other; [x] marks the threads that combined.");
    int pout = 0;
    for (size_t t = 0; t < threads; t++) buf[pout][t] = t < n ? in[t] : identity(st->op);
    row(st, threads > n ? "in (identity-padded)" : "in", buf[pout], threads, NULL);
    for (size_t offset = 1; offset < threads; offset *= 2) {
        pout = 1 - pout;
        int pin = 1 - pout;
        for (size_t t = 0; t < threads; t++) {
            buf[pout][t] = t >= offset ? combine(st->op, buf[pin][t - offset], buf[pin][t]) : buf[pin][t];
            mark[t] = t >= offset;
        }
        snprintf(label, sizeof label, "offset %zu", offset);
        row(st, label, buf[pout], threads, mark);
    }
    /* the store of the kernel: carry (+) inclusive, or carry (+) the left neighbour's inclusive */
    for (size_t t = 0; t < n; t++) {
        int64_t mine = exclusive ? (t > 0 ? buf[pout][t - 1] : identity(st->op)) : buf[pout][t];
        result[t] = combine(st->op, init, mine);
    }
    if (exclusive)
        note(st, "exclusive: each thread takes its left neighbour's inclusive value (thread 0: the identity)");
}

/* ---- 2_blelloch.cu: up-sweep, clear the root, down-sweep, two elements per thread --------------------- */

static void explain_blelloch(explain_state *st, const int64_t *in, size_t n, size_t tile, int exclusive,
                             int64_t init, int padded, int64_t *result) {
    int64_t *s = st->v;
    unsigned char mark[EXPLAIN_MAX];
    char label[64];
    note(st, "Blelloch: a balanced tree in place. Up-sweep: each right child b becomes s[a] (+) s[b]. The root,");
    note(st, "now the total, is set to the identity. Down-sweep: s[a] gets s[b], s[b] gets s[b] (+) the old s[a].");
    note(st, "[x] marks the elements written at each level.");
    if (padded && st->printing)
        printf("shared-memory slot of element i: i + (i >> 5) (CONFLICT_FREE_OFFSET; the values are the same)\n");
    for (size_t i = 0; i < tile; i++) s[i] = i < n ? in[i] : identity(st->op);
    row(st, tile > n ? "in (identity-padded)" : "in", s, tile, NULL);

    size_t offset = 1;
    for (size_t d = tile >> 1; d > 0; d >>= 1) {
        memset(mark, 0, tile);
        for (size_t t = 0; t < d; t++) {
            size_t a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            s[b] = combine(st->op, s[a], s[b]);
            mark[b] = 1;
        }
        snprintf(label, sizeof label, "up-sweep   stride %zu", offset);
        row(st, label, s, tile, mark);
        offset *= 2;
    }
    memset(mark, 0, tile);
    mark[tile - 1] = 1;
    s[tile - 1] = identity(st->op);
    row(st, "clear the root", s, tile, mark);
    for (size_t d = 1; d < tile; d *= 2) {
        offset >>= 1;
        memset(mark, 0, tile);
        for (size_t t = 0; t < d; t++) {
            size_t a = offset * (2 * t + 1) - 1, b = offset * (2 * t + 2) - 1;
            int64_t left = s[a];
            s[a] = s[b];
            s[b] = combine(st->op, s[b], left);
            mark[a] = mark[b] = 1;
        }
        snprintf(label, sizeof label, "down-sweep stride %zu", offset);
        row(st, label, s, tile, mark);
    }
    /* the store of the kernel: carry (+) exclusive, or carry (+) exclusive (+) own input */
    for (size_t i = 0; i < n; i++) result[i] = combine(st->op, init, exclusive ? s[i] : combine(st->op, s[i], in[i]));
    if (!exclusive) note(st, "inclusive: each element combines its own input into its exclusive value");
}

/* ---- the subcommand ----------------------------------------------------------------------------------- */

static void explain_usage(FILE *to) {
    fprintf(to, "usage: pscan explain ALGO [--op OP] [--inclusive|--exclusive] [--init V] v0 v1 ...\n"
                "  ALGO: hillis-steele (inclusive by default), blelloch or blelloch-unpadded (exclusive by default)\n"
                "  OP: sum (default), product, min, max, and, or, xor; values are 64-bit signed integers\n"
                "  at most %d values; the last line printed is the result\n",
                EXPLAIN_MAX);
}

static int parse_int64(const char *text, int64_t *value) {
    char *end = NULL;
    long long v = strtoll(text, &end, 0);
    if (!*text || *end) {
        ps_cli_error("explain: '%s' is not an integer", text);
        return PS_CLI_USAGE;
    }
    *value = (int64_t)v;
    return PS_CLI_OK;
}

int ps_cli_explain(int argc, char **argv) {
    pscan_algo algo = PSCAN_ALGO_AUTO;
    pscan_op op = PSCAN_OP_SUM;
    int exclusive = -1, have_algo = 0;
    int64_t init = 0, *in = NULL;
    int have_init = 0;
    size_t n = 0;
    int rc = PS_CLI_OK;
    in = (int64_t *)malloc(sizeof(int64_t) * (size_t)(argc > 0 ? argc : 1));
    int64_t *result = (int64_t *)malloc(sizeof(int64_t) * (size_t)(argc > 0 ? argc : 1));
    explain_state *st = (explain_state *)calloc(1, sizeof *st);
    if (!in || !result || !st) {
        ps_cli_error("explain: out of memory");
        rc = PS_CLI_FAILURE;
        goto done;
    }

    for (int i = 1; i < argc && rc == PS_CLI_OK; i++) {
        const char *value = NULL;
        int m;
        if (ps_cli_is_help(argv[i])) {
            explain_usage(stdout);
            goto done;
        } else if (strcmp(argv[i], "--inclusive") == 0) {
            exclusive = 0;
        } else if (strcmp(argv[i], "--exclusive") == 0) {
            exclusive = 1;
        } else if ((m = ps_cli_option(argc, argv, &i, "--op", &value)) != 0) {
            rc = m < 0 ? PS_CLI_USAGE : ps_cli_parse_op(value, &op);
        } else if ((m = ps_cli_option(argc, argv, &i, "--init", &value)) != 0) {
            rc = m < 0 ? PS_CLI_USAGE : parse_int64(value, &init);
            have_init = 1;
        } else if (strncmp(argv[i], "--", 2) == 0) {
            ps_cli_error("explain: unknown option '%s'", argv[i]);
            rc = PS_CLI_USAGE;
        } else if (!have_algo) {
            rc = ps_cli_parse_algo(argv[i], &algo);
            have_algo = 1;
        } else if (n == EXPLAIN_MAX) {
            ps_cli_error("explain: at most %d values", EXPLAIN_MAX);
            rc = PS_CLI_USAGE;
        } else {
            rc = parse_int64(argv[i], &in[n++]);
        }
    }
    if (rc != PS_CLI_OK) goto done;
    if (!have_algo || n == 0) {
        explain_usage(stderr);
        rc = PS_CLI_USAGE;
        goto done;
    }
    if (algo != PSCAN_ALGO_HILLIS_STEELE && algo != PSCAN_ALGO_BLELLOCH && algo != PSCAN_ALGO_BLELLOCH_UNPADDED) {
        ps_cli_error("explain: no explanation for %s yet; try hillis-steele or blelloch", pscan_algo_name(algo));
        rc = PS_CLI_USAGE;
        goto done;
    }
    if (exclusive < 0) exclusive = algo != PSCAN_ALGO_HILLIS_STEELE;
    if (!have_init) init = identity(op);
    st->op = op;

    /* The block the kernels would run: a power of two, two elements per thread for Blelloch. */
    size_t tile = 2;
    while (tile < n) tile *= 2;

    /* Two passes: the first measures the widest value, the second prints with that width. */
    for (st->printing = 0; st->printing < 2; st->printing++) {
        if (st->printing) {
            printf("pscan explain %s, %s %s scan of %zu values", pscan_algo_name(algo),
                   exclusive ? "exclusive" : "inclusive", pscan_op_name(op), n);
            if (have_init) printf(", initial value %" PRId64, init);
            printf(", one block of %zu threads\n", algo == PSCAN_ALGO_HILLIS_STEELE ? tile : tile / 2);
        }
        if (algo == PSCAN_ALGO_HILLIS_STEELE)
            explain_hillis_steele(st, in, n, tile, exclusive, init, result);
        else
            explain_blelloch(st, in, n, tile, exclusive, init, algo == PSCAN_ALGO_BLELLOCH, result);
        row(st, "result", result, n, NULL);
    }
    for (size_t i = 0; i < n; i++) printf(i ? " %" PRId64 : "%" PRId64, result[i]);
    putchar('\n');

done:
    free(in);
    free(result);
    free(st);
    return rc;
}
