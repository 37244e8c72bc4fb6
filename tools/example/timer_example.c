/* timer_example.c - ktime's timer API (include/ktime.h) in a CUDA driver-API program.
 *
 * It loads a module, launches one of its kernels (a kernel without parameters) N times on a
 * stream of its own, and prints the GPU time of those launches from a ktime_gpu_timer, and
 * the CPU time of the whole loop (launches and waiting) from a ktime_cpu_timer.
 *
 *   cc -o timer_example timer_example.c $(pkg-config --cflags --libs ktime) -I/usr/local/cuda/include -lcuda
 *   nvcc -cubin -arch=sm_90 -o spin.cubin spin.cu       # extern "C" __global__ void spin() {...}
 *   ./timer_example spin.cubin spin 100
 *
 * usage: timer_example MODULE_FILE KERNEL [LAUNCHES]
 *   MODULE_FILE  what cuModuleLoadData takes: a cubin, fatbin or PTX file. (ktime's test suite
 *                runs this example on its fake driver, whose modules are text: "kernel=ns".)
 *   LAUNCHES     how many launches to time (default 10).
 * Exit status 0, or 1 with a message on stderr.
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>

#include "ktime.h"

static int cuda_ok(CUresult r, const char *what)
{
    if (r == CUDA_SUCCESS)
        return 1;
    fprintf(stderr, "timer_example: %s failed: CUresult %d\n", what, (int)r);
    return 0;
}

static int ktime_ok(int rc, const char *what)
{
    if (rc == KTIME_OK)
        return 1;
    fprintf(stderr, "timer_example: %s: %s\n", what, ktime_strerror(rc));
    return 0;
}

/* The whole file, NUL-terminated (PTX must be), or NULL. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    long n;

    if (f && fseek(f, 0, SEEK_END) == 0 && (n = ftell(f)) >= 0 && fseek(f, 0, SEEK_SET) == 0 &&
        (buf = malloc((size_t)n + 1)) && fread(buf, 1, (size_t)n, f) == (size_t)n) {
        buf[n] = '\0';
    } else {
        free(buf);
        buf = NULL;
    }
    if (f)
        fclose(f);
    return buf;
}

int main(int argc, char **argv)
{
    CUdevice dev;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fn;
    CUstream stream;
    ktime_gpu_timer *gpu = NULL;
    ktime_cpu_timer cpu = KTIME_CPU_TIMER_INIT;
    char *image;
    long launches = argc > 3 ? strtol(argv[3], NULL, 10) : 10;
    float gpu_ms;
    double cpu_ms;
    int rc;

    if (argc < 3 || launches < 1) {
        fprintf(stderr, "usage: timer_example MODULE_FILE KERNEL [LAUNCHES]\n");
        return 1;
    }
    if (!(image = read_file(argv[1]))) {
        fprintf(stderr, "timer_example: cannot read %s\n", argv[1]);
        return 1;
    }
    rc = cuda_ok(cuInit(0), "cuInit") && cuda_ok(cuDeviceGet(&dev, 0), "cuDeviceGet") &&
         cuda_ok(cuDevicePrimaryCtxRetain(&ctx, dev), "cuDevicePrimaryCtxRetain") &&
         cuda_ok(cuCtxSetCurrent(ctx), "cuCtxSetCurrent") &&
         cuda_ok(cuModuleLoadData(&mod, image), "cuModuleLoadData");
    free(image);
    if (!rc || !cuda_ok(cuModuleGetFunction(&fn, mod, argv[2]), "cuModuleGetFunction") ||
        !cuda_ok(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate"))
        return 1;

    /* The GPU timer belongs to the current context and times work on `stream`. */
    if (!ktime_ok(ktime_gpu_timer_create(&gpu, stream), "ktime_gpu_timer_create"))
        return 1;

    ktime_cpu_timer_start(&cpu);
    ktime_gpu_timer_start(gpu);
    for (long i = 0; i < launches; i++)
        if (!cuda_ok(cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, NULL, NULL), "cuLaunchKernel"))
            return 1;
    ktime_gpu_timer_stop(gpu);

    /* wait = 1: returns once the GPU has passed the stop event, with the time in ms. An error
     * is a code, never a time of 0. */
    rc = ktime_gpu_timer_elapsed_ms(gpu, &gpu_ms, 1);
    ktime_cpu_timer_stop(&cpu);
    if (!ktime_ok(rc, "ktime_gpu_timer_elapsed_ms"))
        return 1;
    ktime_cpu_timer_elapsed_ms(&cpu, &cpu_ms);

    printf("%s: %ld launches\n", argv[2], launches);
    printf("gpu %.3f ms in all, %.3f us per launch (CUDA events on the stream)\n", gpu_ms,
           1000.0 * gpu_ms / (double)launches);
    printf("cpu %.3f ms (launching and waiting, CLOCK_MONOTONIC)\n", cpu_ms);

    ktime_gpu_timer_destroy(gpu);
    cuStreamDestroy(stream);
    cuModuleUnload(mod);
    cuDevicePrimaryCtxRelease(dev);
    return 0;
}
