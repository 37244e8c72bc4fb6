/* app_api_nodrv.c - the timer API in a program linked with -lktime but not with libcuda
 * (api.sh). Prints "ok - ..." / "not ok - ..." lines (selfcheck.h), exits 1 if any failed.
 *
 * usage: app_api_nodrv
 *   1. no CUDA driver in the process: ktime_gpu_timer_create is KTIME_ERR_NO_DRIVER, the CPU
 *      timer works;
 *   2. then it loads libcuda.so.1 (the fake, from LD_LIBRARY_PATH) with dlopen, as cudart
 *      does: the GPU timer now works, exactly; and it launches api_late (250 us) 10 times, so
 *      that api.sh can check, under LD_PRELOAD, that ktime still times kernels after being
 *      asked for a driver before one was loaded.
 */
#include <cuda.h>
#include <dlfcn.h>
#include <stdio.h>

#include "ktime.h"
#include "selfcheck.h"

#define SYM(name) ((__typeof__(&name))dlsym(h, #name))

int main(void)
{
    ktime_gpu_timer *t = (ktime_gpu_timer *)&t;
    ktime_cpu_timer c = KTIME_CPU_TIMER_INIT;
    double cms = -1.0;
    float ms = -7.0f;
    void *h;
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    CUresult r;

    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_ERR_NO_DRIVER,
             "nodrv: create without a CUDA driver in the process is KTIME_ERR_NO_DRIVER");
    check(t == (ktime_gpu_timer *)&t, "nodrv: ... and writes no timer", "*t was written");
    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_ERR_NO_DRIVER, "nodrv: ... also when asked again");
    CHECK_RC(ktime_cpu_timer_start(&c), KTIME_OK, "nodrv: the CPU timer starts");
    CHECK_RC(ktime_cpu_timer_stop(&c), KTIME_OK, "nodrv: ... stops");
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&c, &cms), KTIME_OK, "nodrv: ... and has a value");
    check(cms >= 0.0, "nodrv: the CPU timer's value is not negative", "%g", cms);

    h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        check(0, "nodrv: dlopen libcuda.so.1", "%s", dlerror());
        return 1;
    }
    CUresult (*init)(unsigned) = SYM(cuInit);
    CUresult (*devget)(CUdevice *, int) = SYM(cuDeviceGet);
    CUresult (*retain)(CUcontext *, CUdevice) = SYM(cuDevicePrimaryCtxRetain);
    CUresult (*setcur)(CUcontext) = SYM(cuCtxSetCurrent);
    CUresult (*load)(CUmodule *, const void *) = SYM(cuModuleLoadData);
    CUresult (*getfn)(CUfunction *, CUmodule, const char *) = SYM(cuModuleGetFunction);
    CUresult (*lk)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                   CUstream, void **, void **) = SYM(cuLaunchKernel);
    CUresult (*sync)(void) = SYM(cuCtxSynchronize);
    if (!init || !devget || !retain || !setcur || !load || !getfn || !lk || !sync ||
        init(0) || devget(&dev, 0) || retain(&ctx, dev) || setcur(ctx) ||
        load(&mod, "api_late=250000") || getfn(&f, mod, "api_late")) {
        check(0, "nodrv: driver set-up through dlopen", "failed");
        return 1;
    }
    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_OK,
             "nodrv: once a driver is loaded, create succeeds (the earlier refusals did not stick)");
    if (t == (ktime_gpu_timer *)&t)
        return 1;
    CHECK_RC(ktime_gpu_timer_start(t), KTIME_OK, "nodrv: start");
    for (int i = 0; i < 10; i++) {
        r = lk(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        if (r != CUDA_SUCCESS)
            check(0, "nodrv: launch", "cuLaunchKernel returned %d", (int)r);
    }
    CHECK_RC(ktime_gpu_timer_stop(t), KTIME_OK, "nodrv: stop");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms, 1), KTIME_OK, "nodrv: elapsed");
    check(ms == 2.5f, "nodrv: elapsed is the 10 kernels of 250 us: 2.5 ms", "got %.9g ms", ms);
    CHECK_RC(ktime_gpu_timer_destroy(t), KTIME_OK, "nodrv: destroy");
    sync();
    return g_fail;
}
