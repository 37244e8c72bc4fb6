/* app_fail.c - failing launches must reach the program with the driver's error unchanged.
 *
 * usage: app_fail [--null] [--dead-stream] N B
 *   Launches f_ok (125000 ns) N times successfully and f_bad (250000 ns) B times with
 *   gridDimX == 0 through cuLaunchKernel, plus B times through cuLaunchKernelEx with a zero
 *   grid; each bad launch must return CUDA_ERROR_INVALID_VALUE. --null also launches a NULL
 *   function (CUDA_ERROR_INVALID_VALUE); --dead-stream also launches f_ok once on a destroyed
 *   stream (CUDA_ERROR_INVALID_HANDLE). Prints each distinct result once; exits 1 on any
 *   unexpected result.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int expect(CUresult got, CUresult want, const char *what)
{
    if (got != want) {
        fprintf(stderr, "%s: %s returned %s, want %s\n", app_prog, what, app_errname(got), app_errname(want));
        return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fok, fbad;
    CUlaunchConfig cfg;
    long n = -1, b = -1, i;
    int nul = 0, dead = 0, bad = 0, a;
    app_prog = "app_fail";
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--null")) nul = 1;
        else if (!strcmp(argv[a], "--dead-stream")) dead = 1;
        else if (n < 0) n = app_long(argv[a], "N");
        else if (b < 0) b = app_long(argv[a], "B");
    }
    if (n < 0 || b < 0) {
        fprintf(stderr, "usage: %s [--null] [--dead-stream] N B\n", app_prog);
        return 2;
    }
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "f_ok=125000;f_bad=250000"));
    CK(cl.ModuleGetFunction(&fok, mod, "f_ok"));
    CK(cl.ModuleGetFunction(&fbad, mod, "f_bad"));
    memset(&cfg, 0, sizeof cfg);
    cfg.gridDimX = 0;
    cfg.gridDimY = cfg.gridDimZ = 1;
    cfg.blockDimX = 32;
    cfg.blockDimY = cfg.blockDimZ = 1;
    for (i = 0; i < n || i < b; i++) {
        if (i < n)
            CK(cl.Launch(fok, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
        if (i < b) {
            bad |= expect(cl.Launch(fbad, 0, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
                          "cuLaunchKernel(gridDimX=0)");
            bad |= expect(cl.LaunchEx(&cfg, fbad, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
                          "cuLaunchKernelEx(gridDimX=0)");
        }
    }
    printf("bad_grid %s x%ld\n", app_errname(CUDA_ERROR_INVALID_VALUE), 2 * b);
    if (nul) {
        bad |= expect(cl.Launch(NULL, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL), CUDA_ERROR_INVALID_VALUE,
                      "cuLaunchKernel(NULL)");
        printf("null_function %s\n", app_errname(CUDA_ERROR_INVALID_VALUE));
    }
    if (dead) {
        CUstream s;
        CK(cl.StreamCreate(&s, 0));
        CK(cl.StreamDestroy(s));
        bad |= expect(cl.Launch(fok, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL), CUDA_ERROR_INVALID_HANDLE,
                      "cuLaunchKernel(destroyed stream)");
        printf("dead_stream %s\n", app_errname(CUDA_ERROR_INVALID_HANDLE));
    }
    CK(cl.CtxSynchronize());
    CK(cl.ModuleUnload(mod));
    printf("kernel f_ok launched %ld\n", n);
    return bad;
}
