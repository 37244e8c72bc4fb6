/* app_reset.c - rounds of launches with the primary context torn down between them, as
 * cudaDeviceReset does; the primary context comes back, often under the same handle. Timing
 * must resume in every round.
 *
 * usage: app_reset ROUNDS N [HOW]   (N launches of k, 125 us, per round)
 *   HOW: reset (cuDevicePrimaryCtxReset asked for at 11000, _v2, the default), reset_v1 (asked
 *   for at 7000), release (the last cuDevicePrimaryCtxRelease, _v2), release_v1 */
#include "apputil.h"
#include "cudartlike.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUresult (*reset)(CUdevice);
    const char *how = argc > 3 ? argv[3] : "reset";
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
    if (!strcmp(how, "reset"))
        CK(gpa("cuDevicePrimaryCtxReset", (void **)&reset, 11000, 0, &st));
    else if (!strcmp(how, "reset_v1"))
        CK(gpa("cuDevicePrimaryCtxReset", (void **)&reset, 7000, 0, &st));
    else if (!strcmp(how, "release"))
        CK(gpa("cuDevicePrimaryCtxRelease", (void **)&reset, 11000, 0, &st));
    else if (!strcmp(how, "release_v1"))
        CK(gpa("cuDevicePrimaryCtxRelease", (void **)&reset, 7000, 0, &st));
    else
        return 2;
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
