/* app_manyctx.c - creates, uses and destroys many contexts in turn (cuCtxCreate /
 * cuCtxDestroy), launching a few kernels in each.
 *
 * usage: app_manyctx CONTEXTS N   (N launches of k, 125 us, per context) */
#include "apputil.h"
#include "cudartlike.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

typedef CUresult (*gpa_fn)(const char *, void **, int, cuuint64_t, CUdriverProcAddressQueryResult *);

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext primary;
    CUresult (*create)(CUcontext *, unsigned int, CUdevice);
    CUresult (*destroy)(CUcontext);
    CUdriverProcAddressQueryResult st;
    long nctx = argc > 2 ? atol(argv[1]) : 10, n = argc > 2 ? atol(argv[2]) : 3;
    void *h;
    gpa_fn gpa;

    app_prog = "app_manyctx";
    cl_load(&cl);
    cl_init_primary(&cl, &primary);
    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    gpa = h ? (gpa_fn)dlsym(h, "cuGetProcAddress_v2") : NULL;
    if (!gpa)
        return 1;
    CK(gpa("cuCtxCreate", (void **)&create, 3020, 0, &st));
    CK(gpa("cuCtxDestroy", (void **)&destroy, 4000, 0, &st));
    for (long c = 0; c < nctx; c++) {
        CUcontext ctx;
        CUmodule mod;
        CUfunction f;
        CK(create(&ctx, 0, 0));
        CK(cl.ModuleLoadData(&mod, "k=125000"));
        CK(cl.ModuleGetFunction(&f, mod, "k"));
        for (long i = 0; i < n; i++)
            CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        CK(cl.CtxSynchronize());
        CK(destroy(ctx));
    }
    printf("%ld contexts, %ld launches each\n", nctx, n);
    return 0;
}
