/*
 * test_opencl_fallback.c - the OpenCL look-back scan finishes, with the right answer, when a predecessor never
 * publishes on its own: the decoupled fallback (Smith, Levien and Owens, SPAA 2025).
 *
 * The backend's test hook (ps_opencl_debug_set_lookback, static library only) builds the look-back kernel
 * with a small spin limit and one tile that stalls before publishing anything until another work-group has
 * reduced it by fallback. Without the fallback that is a deadlock (bounded by a long timeout in the kernel);
 * with it the later work-group computes the stalled tile's reduction from the input and carries on. Each
 * case checks every element against a serial loop and that fallbacks were counted:
 *   - i32 sum, tile 1 stalls, inclusive, out of place and in place (the fallback reads input that the stalled
 *     tile will overwrite: it must use it only while that tile has not published);
 *   - u64 xor and sum (two status words per tile), tile 0 stalls (the fallback must start from init),
 *     exclusive and reverse with an initial value;
 *   - f32 max with a spin limit of 1 and no stall: needless fallbacks whenever a predecessor is a little late,
 *     still exact (none need happen: this case does not require any);
 *   - a look-back window of one predecessor (i32 sum in place, u64 sum exclusive reverse with init): every walk
 *     past a published aggregate takes a second round and folds the aggregates of the earlier rounds again
 *     from their status entries (the fixed-order carry of issue 9);
 *   - the fold itself, from status entries written by hand (ps_opencl_debug_preset_lookback): one work-group
 *     runs tile k after predecessors given as a pattern (I published, A only, nothing, a torn or unknown entry),
 *     with aggregates and prefixes of many magnitudes that no input produced, so the carry it hands on (the
 *     first element of an exclusive scan) shows exactly which entries it used and in what order: bit for bit
 *     the left fold from the nearest I (or init) over the aggregates after it, missing ones reduced from the
 *     input by fallback (counted exactly), entries older than the base never touched; f32 and f64 (one and two
 *     status words), windows 1, 3, 32 and 64 (the backend's default).
 * Exit 0 pass, 1 fail, 77 skip (no OpenCL device, or a device with one compute unit, where a stalled
 * work-group cannot be overtaken).
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_backend.h"
#include "test_common.h"

static const char *program = "test_opencl_fallback";

typedef struct fallback_case {
    const char *name;
    pscan_type type;
    pscan_op op;
    unsigned flags;
    int in_place;
    int with_init;
    unsigned spin_limit;
    long stall_tile;
    uint64_t tiles; /* n is about this many look-back tiles, plus a partial one */
    unsigned window; /* predecessors the look-back's window round reads; 0: the backend's default (64) */
} fallback_case;

/* Serial reference over raw 64-bit values, for the few type x operator pairs used here. */
static uint64_t combine(const fallback_case *c, uint64_t a, uint64_t b) {
    switch (c->type) {
    case PSCAN_TYPE_I32:
        return (uint32_t)((uint32_t)a + (uint32_t)b);
    case PSCAN_TYPE_U64:
        return c->op == PSCAN_OP_XOR ? a ^ b : a + b;
    default: { /* f32 max on the bits of positive floats: their order is the integers' order */
        return a > b ? a : b;
    }
    }
}

static void reference(const fallback_case *c, const uint64_t *in, uint64_t *out, uint64_t n, uint64_t init) {
    int exclusive = (c->flags & PSCAN_SCAN_EXCLUSIVE) != 0, reverse = (c->flags & PSCAN_SCAN_REVERSE) != 0;
    uint64_t acc = init;
    for (uint64_t k = 0; k < n; k++) {
        uint64_t i = reverse ? n - 1 - k : k;
        uint64_t next = combine(c, acc, in[i]);
        out[i] = exclusive ? acc : next;
        acc = next;
    }
}

static uint64_t get(const void *buf, size_t bytes, uint64_t i) {
    uint64_t v = 0;
    memcpy(&v, (const char *)buf + i * bytes, bytes);
    return v;
}

/* One look-back scan of n * elem bytes from host into got (in place: d_in is the output), then the fallbacks it
 * took. The caller frees *d_in and *d_out. */
static pscan_status lookback_scan(pscan_context *ctx, const pscan_scan_desc *desc, const void *host, void *got,
                                  uint64_t n, size_t elem, int in_place, void **d_in, void **d_out,
                                  unsigned *fallbacks) {
    pscan_status s = pscan_memory_alloc(ctx, n * elem, d_in);
    if (s == PSCAN_SUCCESS && !in_place) s = pscan_memory_alloc(ctx, n * elem, d_out);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, *d_in, host, n * elem);
    void *out = in_place ? *d_in : *d_out;
    if (s == PSCAN_SUCCESS) s = pscan_scan(ctx, desc, *d_in, out, n, NULL, 0);
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, got, out, n * elem);
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_fallbacks(ctx, fallbacks);
    return s;
}

static int run_case(pscan_context *ctx, const fallback_case *c, uint64_t tile_elems) {
    size_t bytes = pscan_type_size(c->type);
    uint64_t n = c->tiles * tile_elems + tile_elems / 3;
    uint64_t *in = malloc(n * sizeof *in), *want = malloc(n * sizeof *want);
    void *host = malloc(n * bytes), *got = malloc(n * bytes);
    void *d_in = NULL, *d_out = NULL;
    int failed = 1;
    if (!in || !want || !host || !got) goto done;

    test_rng rng = {0x5eed0000u + (uint64_t)c->type};
    for (uint64_t i = 0; i < n; i++) {
        uint64_t r = test_rng_next(&rng);
        if (c->type == PSCAN_TYPE_I32)
            in[i] = (uint32_t)r;
        else if (c->type == PSCAN_TYPE_U64)
            in[i] = r;
        else { /* positive finite floats */
            float f = (float)(r >> 40) * 0x1p-10f;
            uint32_t b;
            memcpy(&b, &f, 4);
            in[i] = b;
        }
        memcpy((char *)host + i * bytes, &in[i], bytes);
    }
    uint64_t init = 0;
    if (c->with_init) init = c->type == PSCAN_TYPE_U64 ? 0x0123456789abcdefull : 12345u;
    reference(c, in, want, n, init);

    pscan_status s = ps_opencl_debug_set_lookback(ctx, c->spin_limit, c->stall_tile);
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_set_lookback_window(ctx, c->window ? c->window : 64);
    pscan_scan_desc desc = {c->type, c->op, c->flags, PSCAN_ALGO_DECOUPLED_LOOKBACK, c->with_init ? &init : NULL};
    unsigned fallbacks = 0;
    if (s == PSCAN_SUCCESS) s = lookback_scan(ctx, &desc, host, got, n, bytes, c->in_place, &d_in, &d_out, &fallbacks);
    if (s != PSCAN_SUCCESS) {
        const char *log = "";
        long long native = 0;
        pscan_context_build_log(ctx, &log);
        pscan_context_native_error(ctx, &native);
        fprintf(stderr, "%s: FAIL %s: %s (native %lld)\n%s\n", program, c->name, pscan_status_name(s), native, log);
        goto done;
    }

    uint64_t mask = bytes == 8 ? ~0ull : (1ull << (8 * bytes)) - 1;
    for (uint64_t i = 0; i < n; i++) {
        if (get(got, bytes, i) != (want[i] & mask)) {
            fprintf(stderr, "%s: FAIL %s: n=%" PRIu64 " index %" PRIu64 ": got 0x%" PRIx64 ", expected 0x%" PRIx64 "\n",
                    program, c->name, n, i, get(got, bytes, i), want[i] & mask);
            goto done;
        }
    }
    if (fallbacks == 0 && c->stall_tile >= 0) {
        fprintf(stderr, "%s: FAIL %s: correct, but no fallback was taken\n", program, c->name);
        goto done;
    }
    printf("%s: ok %s (n=%" PRIu64 ", %u fallbacks)\n", program, c->name, n, fallbacks);
    failed = 0;
done:
    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    free(in);
    free(want);
    free(host);
    free(got);
    return failed;
}

/* ---- the fold from hand-written status entries ---- */

/* A value of either sign and of magnitude up to 2^13, most a few binades from the others and from the running sum,
 * so every combine rounds and a fold in another order (two neighbours swapped) gives other bits. */
static double wild(test_rng *rng) {
    uint64_t r = test_rng_next(rng);
    return ((double)(r >> 11) * 0x1p-53 - 0.5) * ldexp(1.0, (int)(r % 9) + 6);
}

static void put_entry(uint64_t *words, int two, uint64_t entry, uint32_t flag, uint32_t flag_hi, uint64_t bits) {
    if (!two) {
        words[entry] = (uint64_t)flag << 32 | (bits & 0xffffffffu);
    } else {
        words[2 * entry] = (uint64_t)flag << 32 | (bits & 0xffffffffu);
        words[2 * entry + 1] = (uint64_t)flag_hi << 32 | bits >> 32;
    }
}

/* pattern: tile j < k is 'I' (A and I published), 'A' (A only), '-' (nothing) or 't' (torn: f64's two words'
 * flags disagree; f32: a flag no writer uses); tile k runs alone. */
static int run_fold_case(pscan_context *ctx, const char *pattern, pscan_type type, unsigned window,
                         uint64_t tile_elems) {
    const int f64 = type == PSCAN_TYPE_F64;
    const size_t bytes = f64 ? 8 : 4;
    const uint64_t k = strlen(pattern), n = (k + 1) * tile_elems, words_per_entry = f64 ? 2 : 1;
    uint64_t *words = calloc(2 * k * words_per_entry + 1, sizeof *words);
    void *host = malloc(n * bytes);
    void *d_in = NULL, *d_out = NULL;
    int failed = 1;
    if (!words || !host || k > 256) goto done;

    /* input all ones: a missing tile's aggregate is exactly tile_elems, whatever the order of its reduction */
    for (uint64_t i = 0; i < n; i++) {
        if (f64)
            ((double *)host)[i] = 1.0;
        else
            ((float *)host)[i] = 1.0f;
    }
    test_rng rng = {0xf01d0000u + k * 7 + window};
    const double init_d = wild(&rng);
    double agg[256], incl[256];
    for (uint64_t j = 0; j < k; j++) {
        agg[j] = wild(&rng);
        incl[j] = wild(&rng);
        if (!f64) agg[j] = (float)agg[j], incl[j] = (float)incl[j];
        char c = pattern[j];
        if (c == '-' || c == 't') agg[j] = (double)tile_elems;
        uint64_t abits, ibits;
        if (f64) {
            memcpy(&abits, &agg[j], 8);
            memcpy(&ibits, &incl[j], 8);
        } else {
            float a = (float)agg[j], in = (float)incl[j];
            uint32_t a32, i32;
            memcpy(&a32, &a, 4);
            memcpy(&i32, &in, 4);
            abits = a32, ibits = i32;
        }
        if (c == 'I' || c == 'A') put_entry(words, f64, 2 * j, 1, 1, abits); /* PS_FLAG_AGGREGATE */
        if (c == 'I') put_entry(words, f64, 2 * j + 1, 2, 2, ibits);         /* PS_FLAG_INCLUSIVE */
        if (c == 't') put_entry(words, f64, 2 * j, f64 ? 1 : 7, f64 ? 0 : 7, abits ^ 0x5555u);
    }

    /* the model: the nearest I (or init), then every aggregate after it, left to right, in the type */
    long base = (long)k - 1;
    while (base >= 0 && pattern[base] != 'I') base--;
    unsigned want_fallbacks = 0;
    double want_d = base >= 0 ? incl[base] : init_d; /* f32: incl[] holds floats already */
    float want_f = (float)want_d;
    for (uint64_t j = (uint64_t)(base + 1); j < k; j++) {
        want_d = want_d + agg[j];
        want_f = want_f + (float)agg[j];
        want_fallbacks += pattern[j] == '-' || pattern[j] == 't';
    }

    float init_f = (float)init_d;
    pscan_status s = ps_opencl_debug_set_lookback(ctx, 256, -1);
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_set_lookback_window(ctx, window);
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_preset_lookback(ctx, k, words, 2 * k * words_per_entry);
    pscan_scan_desc desc = {type, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_DECOUPLED_LOOKBACK,
                            f64 ? (const void *)&init_d : (const void *)&init_f};
    unsigned fallbacks = 0;
    if (s == PSCAN_SUCCESS) s = lookback_scan(ctx, &desc, host, host, n, bytes, 0, &d_in, &d_out, &fallbacks);
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "%s: FAIL fold %s %s window %u: %s\n", program, pscan_type_name(type), pattern, window,
                pscan_status_name(s));
        goto done;
    }
    const char *first = (const char *)host + k * tile_elems * bytes;
    const void *want = f64 ? (const void *)&want_d : (const void *)&want_f;
    if (memcmp(first, want, bytes) != 0 || fallbacks != want_fallbacks) {
        double g = f64 ? *(const double *)first : *(const float *)first;
        fprintf(stderr, "%s: FAIL fold %s %s window %u: carry %a, expected %a; %u fallbacks, expected %u\n",
                program, pscan_type_name(type), pattern, window, g, f64 ? want_d : want_f, fallbacks,
                want_fallbacks);
        goto done;
    }
    failed = 0;
done:
    pscan_memory_free(ctx, d_in);
    pscan_memory_free(ctx, d_out);
    free(words);
    free(host);
    return failed;
}

int main(void) {
    pscan_context *ctx = NULL;
    int rc = test_open_backend(program, PSCAN_BACKEND_OPENCL, &ctx);
    if (rc != 0) return rc;
    ps_cl_state *st = ps_cl_state_of(ctx);
    if (st->compute_units < 2) {
        printf("%s: SKIP: one compute unit: no work-group can overtake a stalled one\n", program);
        pscan_context_destroy(ctx);
        return TEST_EXIT_SKIP;
    }

    static const fallback_case cases[] = {
        {"i32 sum, tile 1 stalls, out of place", PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 0, 0, 8, 1, 6, 0},
        {"i32 sum, tile 1 stalls, in place", PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 1, 1, 8, 1, 6, 0},
        {"u64 xor, tile 0 stalls, exclusive reverse, init", PSCAN_TYPE_U64, PSCAN_OP_XOR,
         PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE, 0, 1, 8, 0, 5, 0},
        {"u64 sum, tile 2 stalls, exclusive, init, in place", PSCAN_TYPE_U64, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, 1,
         1, 8, 2, 5, 0},
        {"f32 max, spin limit 1, no stall", PSCAN_TYPE_F32, PSCAN_OP_MAX, 0, 0, 0, 1, -1, 200, 0},
        {"i32 sum, window 1, spin limit 2, tile 3 stalls, in place", PSCAN_TYPE_I32, PSCAN_OP_SUM, 0, 1, 1, 2, 3, 60,
         1},
        {"u64 sum, window 1, tile 1 stalls, exclusive reverse, init", PSCAN_TYPE_U64, PSCAN_OP_SUM,
         PSCAN_SCAN_EXCLUSIVE | PSCAN_SCAN_REVERSE, 0, 1, 8, 1, 60, 1},
    };
    int failures = 0;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        uint64_t tile = (uint64_t)st->wg * ps_cl_scan_items(st, pscan_type_size(cases[k].type));
        failures += run_case(ctx, &cases[k], tile);
    }
    /* 70 aggregates after the base: past every window; 40 with no I: init; gaps and torn entries between the base
     * and the tile; an older I and a missing tile behind the nearest I (never reduced); tile 0 missing */
    static const char *patterns[] = {
        "IAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA",
        "IA-AAtAAAA-A",
        "AAI-AAIAAA",
        "-----A",
    };
    static const pscan_type fold_types[] = {PSCAN_TYPE_F32, PSCAN_TYPE_F64};
    static const unsigned windows[] = {1, 3, 32, 64};
    size_t fold_cases = 0;
    int fold_failures = 0;
    for (size_t t = 0; t < 2; t++) {
        if (fold_types[t] == PSCAN_TYPE_F64 && !st->has_fp64) continue;
        uint64_t tile = (uint64_t)st->wg * ps_cl_scan_items(st, pscan_type_size(fold_types[t]));
        for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++)
            for (size_t p = 0; p < sizeof patterns / sizeof patterns[0]; p++, fold_cases++)
                fold_failures += run_fold_case(ctx, patterns[p], fold_types[t], windows[w], tile);
    }
    printf("%s: fold from hand-written entries: %zu passed, %d failed\n", program,
           fold_cases - (size_t)fold_failures, fold_failures);
    pscan_context_destroy(ctx);
    failures += fold_failures;
    size_t total = sizeof cases / sizeof cases[0] + fold_cases;
    printf("%s: %zu passed, %d failed\n", program, total - (size_t)failures, failures);
    return failures ? 1 : 0;
}
