#include <stdio.h>
#include "pscan.h"
int main(void) {
    pscan_context *ctx;
    if (pscan_context_create(PSCAN_BACKEND_CPU, &ctx)) return 1;
    int in[8] = {3, 1, 7, 0, 4, 1, 6, 3}, out[8];
    pscan_scan_desc d = {PSCAN_TYPE_I32, PSCAN_OP_SUM, PSCAN_SCAN_EXCLUSIVE, PSCAN_ALGO_AUTO, NULL};
    pscan_status s = pscan_scan(ctx, &d, in, out, 8, NULL, 0);
    for (int i = 0; i < 8; i++) printf("%d ", out[i]);
    printf("%s\n", pscan_status_name(s));
    pscan_context_destroy(ctx);
    return !(s == 0 && out[7] == 22);
}
