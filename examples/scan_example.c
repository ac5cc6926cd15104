/* scan_example.c - the smallest complete pscan program: an exclusive sum on whichever backend is there. */
#include <stdio.h>

#include <pscan.h>

int main(void) {
    int in[8] = {3, 1, 7, 0, 4, 1, 6, 3}, out[8];
    pscan_context *ctx = NULL;
    pscan_status s = pscan_context_create(PSCAN_BACKEND_CPU, &ctx); /* host pointers: the CPU backend */
    pscan_scan_desc desc = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_AUTO, NULL};
    if (s == PSCAN_SUCCESS) s = pscan_scan(ctx, &desc, in, out, 8, NULL, 0);
    pscan_context_destroy(ctx);
    if (s != PSCAN_SUCCESS) {
        fprintf(stderr, "pscan: %s\n", pscan_status_string(s));
        return 1;
    }
    for (int i = 0; i < 8; i++) printf("%d%c", out[i], i < 7 ? ' ' : '\n'); /* 0 3 4 11 11 15 16 22 */
    return out[7] == 22 ? 0 : 1;
}
