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
 *     from their status entries (the fixed-order carry of issue 9).
 * Exit 0 pass, 1 fail, 77 skip (no OpenCL device, or a device with one compute unit, where a stalled
 * work-group cannot be overtaken).
 */
#include <inttypes.h>
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
    unsigned window; /* the look-back window (aggregates a walk keeps; older ones re-read); 0: the default (32) */
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
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_set_lookback_window(ctx, c->window ? c->window : 32);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, n * bytes, &d_in);
    if (s == PSCAN_SUCCESS && !c->in_place) s = pscan_memory_alloc(ctx, n * bytes, &d_out);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, d_in, host, n * bytes);
    pscan_scan_desc desc = {c->type, c->op, c->flags, PSCAN_ALGO_DECOUPLED_LOOKBACK, c->with_init ? &init : NULL};
    void *out = c->in_place ? d_in : d_out;
    if (s == PSCAN_SUCCESS) s = pscan_scan(ctx, &desc, d_in, out, n, NULL, 0);
    if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, got, out, n * bytes);
    if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
    unsigned fallbacks = 0;
    if (s == PSCAN_SUCCESS) s = ps_opencl_debug_fallbacks(ctx, &fallbacks);
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
        uint64_t tile = (uint64_t)st->wg * ps_cl_items(pscan_type_size(cases[k].type));
        failures += run_case(ctx, &cases[k], tile);
    }
    pscan_context_destroy(ctx);
    printf("%s: %zu passed, %d failed\n", program, sizeof cases / sizeof cases[0] - (size_t)failures, failures);
    return failures ? 1 : 0;
}
