// saxpy.cu - the example ktime profiles in the quick start: two kernels of different
// lengths launched many times, and a checksum computed from real device work.
#include <cstdio>
#include <cuda_runtime.h>

__global__ void saxpy(int n, float a, const float *x, float *y)
{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n)
        y[i] = a * x[i] + y[i];
}

__global__ void scale(int n, float s, float *y)
{
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        y[i] = y[i] * s + 1e-3f;
}

#define CHECK(call)                                                                    \
    do {                                                                               \
        cudaError_t e = (call);                                                        \
        if (e != cudaSuccess) {                                                        \
            fprintf(stderr, "saxpy: %s failed: %s\n", #call, cudaGetErrorString(e));   \
            return 1;                                                                  \
        }                                                                              \
    } while (0)

int main()
{
    const int n = 1 << 22;
    float *x, *y, h[4];
    CHECK(cudaMalloc(&x, n * sizeof(float)));
    CHECK(cudaMalloc(&y, n * sizeof(float)));
    CHECK(cudaMemset(x, 0, n * sizeof(float)));
    CHECK(cudaMemset(y, 0, n * sizeof(float)));
    for (int it = 0; it < 200; it++) {
        saxpy<<<(n + 255) / 256, 256>>>(n, 0.5f, x, y);
        if (it % 4 == 0)
            scale<<<132, 256>>>(n, 0.999f, y);
    }
    CHECK(cudaGetLastError());
    CHECK(cudaMemcpy(h, y, sizeof h, cudaMemcpyDeviceToHost));
    printf("saxpy: y[0] = %.6f after 200 saxpy and 50 scale launches\n", h[0]);
    CHECK(cudaFree(x));
    CHECK(cudaFree(y));
    return 0;
}
