/* app_reset.c - rounds of launches with cuDevicePrimaryCtxReset (cudaDeviceReset) between
 * them; the primary context comes back, often under the same handle. Timing must resume in
 * every round.
 *
 * usage: app_reset ROUNDS N   (N launches of k, 125 us, per round) */
#include "apputil.h"
#include "cudartlike.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUresult (*reset)(CUdevice);
    CUdriverProcAddressQueryResult st;
    long rounds = argc > 2 ? atol(argv[1]) : 3, n = argc > 2 ? atol(argv[2]) : 20;
    CUresult (*gpa)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);
    void *h;

    app_prog = "app_reset";
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa = h ? (CUresult(*)(const char *, void **, int, cuuint64_t,
                           CUdriverProcAddressQueryResult *))dlsym(h, "cuGetProcAddress_v2")
            : NULL;
    if (!gpa)
        return 1;
    CK(gpa("cuDevicePrimaryCtxReset", (void **)&reset, 11000, 0, &st));
    for (long r = 0; r < rounds; r++) {
        CUmodule mod;
        CUfunction f;
        CK(cl.ModuleLoadData(&mod, "k=125000"));
        CK(cl.ModuleGetFunction(&f, mod, "k"));
        for (long i = 0; i < n; i++)
            CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        CK(cl.CtxSynchronize());
        CK(reset(0));
        CK(cl.PrimaryRetain(&ctx, 0));
        CK(cl.CtxSetCurrent(ctx));
        printf("round %ld: %ld launches\n", r, n);
    }
    return 0;
}
