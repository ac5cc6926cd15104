/*
 * tune_userop_cub.cu - the peer of tune_userop.c's user-operator scans: CUB's DeviceScan::InclusiveScan with the
 * same combine written as a C++ functor (2x2 f32 matrix product, affine f32 map), timed the same way (host wall
 * clock around a synchronize, median of reps calls after two warm-ups). Not part of the library.
 */
#include <cub/device/device_scan.cuh>

#include <algorithm>
#include <chrono>
#include <vector>

namespace {

struct mat2 {
    float m[4];
};
struct mat2_mul { /* earlier x, later y: x y (the same expressions as tune_userop.c's source) */
    __device__ __forceinline__ mat2 operator()(const mat2 &x, const mat2 &y) const {
        mat2 r;
        r.m[0] = x.m[0] * y.m[0] + x.m[1] * y.m[2], r.m[1] = x.m[0] * y.m[1] + x.m[1] * y.m[3];
        r.m[2] = x.m[2] * y.m[0] + x.m[3] * y.m[2], r.m[3] = x.m[2] * y.m[1] + x.m[3] * y.m[3];
        return r;
    }
};
struct affine {
    float a, b;
};
struct affine_combine {
    __device__ __forceinline__ affine operator()(const affine &x, const affine &y) const {
        affine r;
        r.a = y.a * x.a;
        r.b = fmaf(y.a, x.b, y.b);
        return r;
    }
};

template <class T, class Op> int time_cub(const void *in, void *out, unsigned long long n, int reps, double *seconds) {
    const T *d_in = static_cast<const T *>(in);
    T *d_out = static_cast<T *>(out);
    size_t temp_bytes = 0;
    if (cub::DeviceScan::InclusiveScan(nullptr, temp_bytes, d_in, d_out, Op(), (int64_t)n) != cudaSuccess) return 1;
    void *temp = nullptr;
    if (cudaMalloc(&temp, temp_bytes) != cudaSuccess) return 1;
    std::vector<double> t;
    int rc = 0;
    for (int r = -2; r < reps && rc == 0; r++) {
        if (cudaDeviceSynchronize() != cudaSuccess) rc = 1;
        const auto t0 = std::chrono::steady_clock::now();
        if (cub::DeviceScan::InclusiveScan(temp, temp_bytes, d_in, d_out, Op(), (int64_t)n) != cudaSuccess ||
            cudaDeviceSynchronize() != cudaSuccess)
            rc = 1;
        if (r >= 0) t.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    }
    cudaFree(temp);
    if (rc || t.empty()) return 1;
    std::sort(t.begin(), t.end());
    *seconds = t[t.size() / 2];
    return 0;
}

} // namespace

extern "C" int tune_userop_cub(int bytes, const void *in, void *out, unsigned long long n, int reps, double *seconds) {
    *seconds = 0;
    if (bytes == 16) return time_cub<mat2, mat2_mul>(in, out, n, reps, seconds);
    if (bytes == 8) return time_cub<affine, affine_combine>(in, out, n, reps, seconds);
    return 1;
}

extern "C" int tune_userop_clear(void *p, size_t bytes) {
    return cudaMemset(p, 0, bytes) != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess;
}
