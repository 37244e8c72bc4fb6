/* app_runtime.c - launches through the runtime's exported entry points (linked with the
 * fake libcudart), which reach the driver through cuGetProcAddress pointers, as cudart's do.
 *
 * usage: app_runtime [--ptds] [--ex] name=ns:count ...
 *   Loads the kernels with the driver API, then launches each `count` times with
 *   cudaLaunchKernel (cudaLaunchKernelExC with --ex; the _ptsz forms with --ptds) on the
 *   NULL stream. Prints a line per kernel. Exits 1 on any error. */
#include "apputil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

cudaError_t cudaLaunchKernel_ptsz(const void *, dim3, dim3, void **, size_t, cudaStream_t);
cudaError_t cudaLaunchKernelExC_ptsz(const cudaLaunchConfig_t *, const void *, void **);

int main(int argc, char **argv)
{
    int ptds = 0, ex = 0, first = 1;
    char image[4096] = "";
    CUcontext ctx;
    CUmodule mod;

    app_prog = "app_runtime";
    for (; first < argc && argv[first][0] == '-'; first++) {
        if (!strcmp(argv[first], "--ptds"))
            ptds = 1;
        else if (!strcmp(argv[first], "--ex"))
            ex = 1;
    }
    for (int i = first; i < argc; i++) {
        char *colon = strrchr(argv[i], ':');
        if (!colon)
            return 2;
        strncat(image, argv[i], (size_t)(colon - argv[i]));
        strcat(image, ";");
    }
    CK(cuInit(0));
    CK(cuDevicePrimaryCtxRetain(&ctx, 0));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, image));
    for (int i = first; i < argc; i++) {
        char name[256];
        char *eq = strchr(argv[i], '=');
        long n = atol(strrchr(argv[i], ':') + 1);
        CUfunction f;
        dim3 g = { 1, 1, 1 }, b = { 32, 1, 1 };
        snprintf(name, sizeof name, "%.*s", (int)(eq - argv[i]), argv[i]);
        CK(cuModuleGetFunction(&f, mod, name));
        for (long k = 0; k < n; k++) {
            cudaError_t e;
            if (ex) {
                cudaLaunchConfig_t c;
                memset(&c, 0, sizeof c);
                c.gridDim = g;
                c.blockDim = b;
                e = (ptds ? cudaLaunchKernelExC_ptsz : cudaLaunchKernelExC)(&c, f, NULL);
            } else {
                e = (ptds ? cudaLaunchKernel_ptsz : cudaLaunchKernel)(f, g, b, NULL, 0, NULL);
            }
            if (e != cudaSuccess) {
                fprintf(stderr, "app_runtime: launch failed: %d\n", (int)e);
                return 1;
            }
        }
        printf("kernel %s launched %ld\n", name, n);
    }
    CK(cuCtxSynchronize());
    return 0;
}
