/* test_packed.cu - block/packed.cuh, the scan of a 16-byte vector of 1- and 2-byte integers a word at a time,
 * against the element-at-a-time scan it replaces (the scan program's loop, 5_decoupled_lookback.cu).
 *
 * Every type (i8, u8, i16, u16) x operator with a packed form (sum, min, max, and, or, xor; the 2-byte sums too,
 * which the library leaves unpacked unless built with -DPS_PACKED_BYTES_SUM=2) x direction x
 * inclusive / exclusive, on seeded random vectors drawn to hit the lanes' extremes (0, -1, the lowest and the
 * highest value, so a signed/unsigned or a carry-between-lanes mistake shows) and a random value before the
 * vector. The host runs the functions with its lane-by-lane stand-ins for the SIMD intrinsics; where a GPU is
 * present, a kernel runs the same vectors through the device's intrinsics (__vminu4, __vmaxs2, __byte_perm,
 * __funnelshift_l, ...) and must give the same words. Exit 0 when every result matches. */
#include <cuda_runtime.h>

#include <cstdio>
#include <cstring>
#include <vector>

#include "block/packed.cuh"

enum { CASES = 4000 };

struct vec_case {
    uint32_t in[4];
    uint32_t r; /* the value before the vector, in the low lane */
};
struct vec_result {
    uint32_t out[4];
    uint32_t total;
};

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint32_t rng() {
    rng_state ^= rng_state << 13, rng_state ^= rng_state >> 7, rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
/* a lane value: mostly uniform, often an extreme */
template <class T> static T draw() {
    const uint32_t k = rng() % 8;
    const T lo = ps_cuda_type<T>::lowest(), hi = ps_cuda_type<T>::highest();
    return k == 0 ? lo : k == 1 ? hi : k == 2 ? (T)0 : k == 3 ? (T)-1 : (T)rng();
}

/* the packed path: what the scan program computes for one vector */
template <class T, class Op, bool Reverse>
static __host__ __device__ vec_result packed_run(const vec_case &c, bool exclusive) {
    vec_result res;
    uint32_t w[4] = {c.in[0], c.in[1], c.in[2], c.in[3]};
    const T total = ps_packed_scan<T, Op, Reverse>(w);
    ps_packed_finish<T, Op, Reverse>(w, (T)c.r, exclusive);
    memcpy(res.out, w, sizeof w);
    res.total = (uint32_t)total;
    return res;
}

/* the element-at-a-time reference: the program's loop before block/packed.cuh */
template <class T, class Op, bool Reverse> static vec_result serial_run(const vec_case &c, bool exclusive) {
    enum { VEC = 16 / sizeof(T) };
    T x[VEC], y[VEC];
    memcpy(x, c.in, sizeof x);
    T acc = x[Reverse ? VEC - 1 : 0];
    for (int i = 1; i < VEC; i++) {
        const int q = Reverse ? VEC - 1 - i : i;
        acc = Op::template combine<T>(acc, x[q]);
        x[q] = acc;
    }
    const T r = (T)c.r;
    for (int i = 0; i < VEC; i++) {
        const int q = Reverse ? VEC - 1 - i : i, qp = Reverse ? VEC - i : i - 1;
        y[q] = exclusive ? (i == 0 ? r : Op::template combine<T>(r, x[qp])) : Op::template combine<T>(r, x[q]);
    }
    vec_result res;
    memcpy(res.out, y, sizeof y);
    res.total = (uint32_t)acc;
    return res;
}

template <class T, class Op, bool Reverse>
__global__ void packed_kernel(const vec_case *cases, vec_result *out, int n, bool exclusive) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = packed_run<T, Op, Reverse>(cases[i], exclusive);
}

static bool g_gpu = false;
static int g_checked = 0, g_failed = 0, g_gpu_checked = 0;

static bool same(const vec_result &a, const vec_result &b, size_t total_bytes) {
    const uint32_t mask = total_bytes == 1 ? 0xffu : 0xffffu;
    return !memcmp(a.out, b.out, sizeof a.out) && (a.total & mask) == (b.total & mask);
}

template <class T, class Op, bool Reverse> static void check(const char *type, const char *op) {
    std::vector<vec_case> cases(CASES);
    for (vec_case &c : cases) {
        T lanes[16 / sizeof(T)];
        for (T &v : lanes) v = draw<T>();
        memcpy(c.in, lanes, sizeof lanes);
        const T r = draw<T>();
        c.r = 0;
        memcpy(&c.r, &r, sizeof r);
    }
    for (int exclusive = 0; exclusive < 2; exclusive++) {
        std::vector<vec_result> want(CASES), got(CASES);
        int bad = 0;
        for (int i = 0; i < CASES; i++) {
            want[i] = serial_run<T, Op, Reverse>(cases[i], exclusive);
            got[i] = packed_run<T, Op, Reverse>(cases[i], exclusive);
            if (!same(want[i], got[i], sizeof(T)) && bad++ == 0)
                printf("FAIL host %s %s %s %s case %d: in %08x %08x %08x %08x r %x -> %08x %08x %08x %08x total %x, "
                       "want %08x %08x %08x %08x total %x\n",
                       type, op, Reverse ? "reverse" : "forward", exclusive ? "exclusive" : "inclusive", i,
                       cases[i].in[0], cases[i].in[1], cases[i].in[2], cases[i].in[3], cases[i].r, got[i].out[0],
                       got[i].out[1], got[i].out[2], got[i].out[3], got[i].total, want[i].out[0], want[i].out[1],
                       want[i].out[2], want[i].out[3], want[i].total);
        }
        g_checked++, g_failed += bad != 0;
        if (!g_gpu) continue;
        vec_case *dc = nullptr;
        vec_result *dr = nullptr;
        bool ok = cudaMalloc(&dc, CASES * sizeof *dc) == cudaSuccess &&
                  cudaMalloc(&dr, CASES * sizeof *dr) == cudaSuccess &&
                  cudaMemcpy(dc, cases.data(), CASES * sizeof *dc, cudaMemcpyHostToDevice) == cudaSuccess;
        if (ok) {
            packed_kernel<T, Op, Reverse><<<(CASES + 255) / 256, 256>>>(dc, dr, CASES, exclusive != 0);
            ok = cudaGetLastError() == cudaSuccess &&
                 cudaMemcpy(got.data(), dr, CASES * sizeof *dr, cudaMemcpyDeviceToHost) == cudaSuccess;
        }
        cudaFree(dc);
        cudaFree(dr);
        int gbad = ok ? 0 : 1;
        for (int i = 0; ok && i < CASES; i++)
            if (!same(want[i], got[i], sizeof(T)) && gbad++ == 0)
                printf("FAIL device %s %s %s %s case %d: %08x %08x %08x %08x total %x, want %08x %08x %08x %08x "
                       "total %x\n",
                       type, op, Reverse ? "reverse" : "forward", exclusive ? "exclusive" : "inclusive", i,
                       got[i].out[0], got[i].out[1], got[i].out[2], got[i].out[3], got[i].total, want[i].out[0],
                       want[i].out[1], want[i].out[2], want[i].out[3], want[i].total);
        if (!ok) printf("FAIL device %s %s: a CUDA call failed\n", type, op);
        g_gpu_checked++, g_failed += gbad != 0;
    }
}

/* every type and direction of one operator; nothing for an operator without a packed form */
template <class Op, bool Has = ps_packed<uint8_t, Op>::value != 0> struct check_op {
    static void run(const char *op) {
        check<int8_t, Op, false>("i8", op), check<int8_t, Op, true>("i8", op);
        check<uint8_t, Op, false>("u8", op), check<uint8_t, Op, true>("u8", op);
        check<int16_t, Op, false>("i16", op), check<int16_t, Op, true>("i16", op);
        check<uint16_t, Op, false>("u16", op), check<uint16_t, Op, true>("u16", op);
    }
};
template <class Op> struct check_op<Op, false> {
    static void run(const char *) {}
};

int main() {
    int devices = 0;
    g_gpu = cudaGetDeviceCount(&devices) == cudaSuccess && devices > 0;
    /* which pairs have a packed form: 1- and 2-byte integers, every operator but the product, the sum 1-byte ones */
    static_assert(!ps_packed<uint8_t, ps_cuda_op_product>::value && ps_packed<uint8_t, ps_cuda_op_sum>::value &&
                      ps_packed<int16_t, ps_cuda_op_sum>::value == (PS_PACKED_BYTES_SUM >= 2) &&
                      !ps_packed<int32_t, ps_cuda_op_max>::value &&
                      !ps_packed<float, ps_cuda_op_max>::value && ps_packed<int16_t, ps_cuda_op_xor>::value,
                  "ps_packed's pairs");
#define PS_TEST_PACKED_OP_(OP, op) check_op<ps_cuda_op_##op>::run(#op);
    PSCAN_OP_LIST(PS_TEST_PACKED_OP_)
#undef PS_TEST_PACKED_OP_
    printf("test_packed: %d host tables, %d device tables (%s), %d cases each: %d failed\n", g_checked, g_gpu_checked,
           g_gpu ? "GPU present" : "no GPU", CASES, g_failed);
    return g_failed ? 1 : 0;
}
