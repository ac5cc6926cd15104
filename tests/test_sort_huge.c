/*
 * test_sort_huge.c - sorts of 2^30 u32 keys: the largest n whose counts the CUDA passes' 32-bit status words
 * hold (30 bits; radix_sort.cu, ps_sort_passes_sized: the last tile publishes no count, so no word holds 2^30);
 * with --n 2^31, the passes of 4-byte keys on 64-bit words (ctest's large.sort.cuda.2p31).
 *
 *   test_sort_huge [--backend cpu|cuda] [--seed S] [--n N]
 *
 * Three sorts: ascending with a u32 payload (each key's input index), then the same keys descending alone, then
 * n equal keys with their indices, where every pass puts all n keys in one digit, so the last tile but one
 * publishes a count of n less the last tile (the edge of the 30 bits). The keys of the first two are a
 * permutation, key(i) = 4 * (i * A mod n) + 1 with A odd (from the seed; 2 * (..) + 1 at 2^31), so the sorted
 * output is known without a reference sort: keys_out[j] = 4j + 1 and values_out[j] = j * A^-1 mod n ascending,
 * keys_out[j] = 4 (n - 1 - j) + 1 descending; at 2^30 and 2^31 every digit of the 32-bit key varies. Equal keys
 * keep their order (values_out[j] = j: stability). Each check is one pass over the output (n must be a power of
 * two: --n 2^k for a quick run elsewhere).
 * About 25 GiB of device memory and 8 GiB of host memory at 2^30 (twice that at 2^31); exit 77 when either is
 * missing.
 */
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pscan.h"
#include "test_common.h"

#define EQUAL_KEY 0x5a5a5a5bu

static uint32_t key_of(uint64_t i, uint32_t a, uint32_t mask, int shift) { return (((uint32_t)i * a) & mask) << shift | 1u; }

/* the inverse of an odd a modulo 2^32 (Newton's iteration: each step doubles the correct low bits) */
static uint32_t inverse_odd(uint32_t a) {
    uint32_t x = a; /* correct to 3 bits */
    for (int k = 0; k < 4; k++) x *= 2u - a * x;
    return x;
}

int main(int argc, char **argv) {
    pscan_backend backend = PSCAN_BACKEND_CUDA;
    uint64_t seed = 20261127, n = 1ull << 30;
    for (int i = 1; i < argc; i++) {
        const char *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (v && !strcmp(argv[i], "--backend") && pscan_backend_parse(v, &backend) == PSCAN_SUCCESS) {
            i++;
        } else if (v && !strcmp(argv[i], "--seed")) {
            seed = strtoull(v, NULL, 0), i++;
        } else if (v && !strcmp(argv[i], "--n")) {
            n = strtoull(v, NULL, 0), i++;
        } else {
            fprintf(stderr, "usage: test_sort_huge [--backend cpu|cuda] [--seed S] [--n N (a power of two, 4..2^31)]\n");
            return 2;
        }
    }
    if (n < 4 || n > (1ull << 31) || (n & (n - 1))) {
        fprintf(stderr, "test_sort_huge: --n must be a power of two from 4 to 2^31\n");
        return 2;
    }
    pscan_context *ctx = NULL;
    int rc = test_open_backend("test_sort_huge", backend, &ctx);
    if (rc != 0) return rc;

    const uint32_t mask = (uint32_t)(n - 1), a = (uint32_t)test_mix64(seed) | 1u, a_inv = inverse_odd(a);
    const int shift = n > (1ull << 30) ? 1 : 2; /* the permutation's 31 bits at 2^31 leave room for one */
    const size_t bytes = (size_t)n * 4;
    pscan_sort_desc desc = {PSCAN_TYPE_U32, 4, 0, 0, 0, PSCAN_ALGO_AUTO};
    size_t temp_bytes = 0;
    void *keys = NULL, *values = NULL, *keys_out = NULL, *values_out = NULL, *temp = NULL;
    uint32_t *host = (uint32_t *)malloc(bytes), *host2 = (uint32_t *)malloc(bytes);
    pscan_status s = pscan_sort_temp_bytes(ctx, &desc, n, &temp_bytes);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &keys);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &values);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &keys_out);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, bytes, &values_out);
    if (s == PSCAN_SUCCESS) s = pscan_memory_alloc(ctx, temp_bytes, &temp);
    int result = 0;
    if (s == PSCAN_ERROR_OUT_OF_MEMORY || !host || !host2) {
        printf("test_sort_huge: SKIP: no room for %" PRIu64 " keys (device or host memory)\n", n);
        result = TEST_EXIT_SKIP;
        goto done;
    }
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "test_sort_huge: FAIL: setup: %s\n", pscan_status_name(s));
        result = 1;
        goto done;
    }
    printf("test_sort_huge: n = %" PRIu64 " u32 keys, seed %" PRIu64 " (A = 0x%08x)\n", n, seed, a);

    for (uint64_t i = 0; i < n; i++) host[i] = key_of(i, a, mask, shift), host2[i] = (uint32_t)i;
    s = pscan_memory_upload(ctx, keys, host, bytes);
    if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, values, host2, bytes);

    for (int pass = 0; pass < 3 && s == PSCAN_SUCCESS; pass++) {
        const int pairs = pass != 1, equal = pass == 2;
        desc.value_bytes = pairs ? 4 : 0;
        desc.flags = pass == 1 ? PSCAN_SORT_DESCENDING : 0;
        const char *what = pass == 0 ? "ascending pairs" : pass == 1 ? "descending keys" : "equal keys with payloads";
        if (equal) { /* the same key everywhere (its low bits set, so no digit is 0), the payload its index */
            for (uint64_t i = 0; i < n; i++) host[i] = EQUAL_KEY, host2[i] = (uint32_t)i;
            s = pscan_memory_upload(ctx, keys, host, bytes);
            if (s == PSCAN_SUCCESS) s = pscan_memory_upload(ctx, values, host2, bytes);
            if (s != PSCAN_SUCCESS) break;
        }
        s = pscan_sort(ctx, &desc, keys, pairs ? values : NULL, n, keys_out, pairs ? values_out : NULL, temp,
                       temp_bytes);
        if (s == PSCAN_SUCCESS) s = pscan_memory_download(ctx, host, keys_out, bytes);
        if (s == PSCAN_SUCCESS && pairs) s = pscan_memory_download(ctx, host2, values_out, bytes);
        if (s == PSCAN_SUCCESS) s = pscan_context_synchronize(ctx);
        if (s != PSCAN_SUCCESS) {
            long long native = 0;
            pscan_context_native_error(ctx, &native);
            fprintf(stderr, "test_sort_huge: FAIL: %s: %s (native error %lld)\n", what, pscan_status_name(s), native);
            result = 1;
            break;
        }
        uint64_t bad = n;
        for (uint64_t j = 0; j < n && bad == n; j++) {
            if (equal) {
                if (host[j] != EQUAL_KEY || host2[j] != (uint32_t)j) bad = j;
                continue;
            }
            const uint32_t rank = pass == 0 ? (uint32_t)j : (uint32_t)(n - 1 - j);
            if (host[j] != (rank << shift | 1u) || (pairs && host2[j] != ((uint32_t)j * a_inv & mask))) bad = j;
        }
        if (bad < n) {
            fprintf(stderr,
                    "test_sort_huge: FAIL: %s, index %" PRIu64 ": key %u, payload %u\n"
                    "  rerun: test_sort_huge --backend %s --seed %" PRIu64 " --n %" PRIu64 "\n",
                    what, bad, host[bad], pairs ? host2[bad] : 0u, pscan_backend_name(backend), seed, n);
            result = 1;
        } else {
            printf("test_sort_huge: %s ok\n", what);
        }
    }
    if (s != PSCAN_SUCCESS && result == 0) {
        fprintf(stderr, "test_sort_huge: FAIL: upload: %s\n", pscan_status_name(s));
        result = 1;
    }
done:
    pscan_memory_free(ctx, keys), pscan_memory_free(ctx, values), pscan_memory_free(ctx, keys_out);
    pscan_memory_free(ctx, values_out), pscan_memory_free(ctx, temp);
    free(host), free(host2);
    pscan_context_destroy(ctx);
    return result;
}
