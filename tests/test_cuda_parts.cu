/* test_cuda_parts.cu - the split files' routing, on a machine with the CUDA toolkit and no GPU (CI).
 *
 * The heaviest CUDA files are compiled in four parts by element size (cuda_ops.cuh: "one file's instantiations
 * split over translation units"); each file's entry sends a call to the part that instantiates its type. A part
 * handed a type it does not hold answers cudaErrorInvalidValue before any CUDA call; the right part gets as far
 * as the runtime, which fails for want of a device. So every type through every split entry must answer
 * something other than cudaErrorInvalidValue, and a type sent to a wrong part directly must answer exactly it.
 * With a device present the calls would launch on host pointers: the test skips (77); the GPU test suite
 * (ctest -L cuda) covers every type there. */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>

#include "cuda_backend.h"
#include "pscan_internal.h"

cudaError_t ps_cuda_reduce_part3(const ps_request *, const ps_cuda_device *);
cudaError_t ps_cuda_select_part0(const ps_request *, const ps_cuda_device *);

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0) {
        printf("test_cuda_parts: a GPU is present; ctest -L cuda covers the routing there (skipped)\n");
        return 77;
    }
    static char buf[4096]; /* never read: no call reaches a device */
    ps_cuda_device dev;
    memset(&dev, 0, sizeof dev);
    dev.sm_count = 132;
    int checked = 0, wrong = 0;
    for (int t = 0; t < PSCAN_TYPE_COUNT; t++) {
        ps_request r;
        memset(&r, 0, sizeof r);
        r.type = r.out_type = (pscan_type)t;
        r.op = PSCAN_OP_SUM;
        r.algo = PSCAN_ALGO_DECOUPLED_LOOKBACK;
        r.in = r.in2 = buf;
        r.out = r.temp = r.count = buf;
        r.n = 100000;
        r.elem_bytes = r.out_elem_bytes = pscan_type_size((pscan_type)t);
        const char *entry[5] = {"reduce", "select", "segmented scan", "scan", "widened scan"};
        cudaError_t e[5];
        r.prim = PS_PRIM_REDUCE;
        e[0] = ps_cuda_reduce_run(&r, &dev);
        r.prim = PS_PRIM_SELECT;
        r.pred = PSCAN_PRED_GT;
        e[1] = ps_cuda_select_run(&r, &dev);
        r.prim = PS_PRIM_SEGMENTED_SCAN;
        r.flags = buf;
        r.seg_form = PS_SEGMENTS_FLAGS;
        e[2] = ps_cuda_segscan_run(&r, &dev);
        r.prim = PS_PRIM_SCAN;
        r.flags = NULL;
        e[3] = ps_cuda_decoupled_lookback.scan(&r, &dev);
        e[4] = cudaErrorNoDevice; /* a 64-bit type does not widen */
        if (r.elem_bytes < 8) {
            r.widen = 1;
            r.out_elem_bytes = 8;
            e[4] = ps_cuda_decoupled_lookback.scan(&r, &dev);
        }
        for (int k = 0; k < 5; k++, checked++)
            if (e[k] == cudaErrorInvalidValue) {
                printf("FAIL %s of %s: refused by the part it was sent to\n", entry[k], pscan_type_name((pscan_type)t));
                wrong++;
            }
    }
    /* the control: a part refuses the types of another */
    ps_request r;
    memset(&r, 0, sizeof r);
    r.op = PSCAN_OP_SUM;
    r.n = 10;
    r.type = PSCAN_TYPE_I8, r.elem_bytes = 1;
    const cudaError_t c1 = ps_cuda_reduce_part3(&r, &dev);
    r.type = PSCAN_TYPE_F64, r.elem_bytes = 8, r.pred = PSCAN_PRED_GT;
    const cudaError_t c2 = ps_cuda_select_part0(&r, &dev);
    if (c1 != cudaErrorInvalidValue || c2 != cudaErrorInvalidValue) {
        printf("FAIL a part ran a type of another part (%d, %d)\n", (int)c1, (int)c2);
        wrong++;
    }
    printf("test_cuda_parts: %d calls routed, %d wrong\n", checked + 2, wrong);
    return wrong ? 1 : 0;
}
