/* app_exit_launch.c - threads keep launching while the main thread calls exit(), so that
 * launches arrive while a tool's exit handler writes its report.
 *
 * usage: app_exit_launch [--threads T] [--kernels K] [--min M]
 *   Main launches sd_main once and each of K kernels sd_k<i> (default 0) once, then starts T
 *   threads (default 4); thread i launches sd_t<i> (125000 ns each) on a stream of its own
 *   back to back, counting the launches that succeed, and stops at the first that fails (the
 *   driver deinitialized at exit). Once every thread made M launches (default 1000), main
 *   registers an exit handler (it runs before every handler registered earlier, a tool's
 *   included) and calls exit(0). That handler notes each thread's count; a handler registered
 *   before CUDA started (it runs after every other, the driver's included) prints, per thread:
 *     before_exit sd_t<i> <launches that had returned when exit() began>
 *     launched sd_t<i> <launches that returned success, in all>
 *   and "threads T". Nothing is synchronised.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <pthread.h>
#include <unistd.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_THREADS 64

static struct cl cl;
static CUcontext g_ctx;
static long g_threads = 4;
static CUfunction g_fn[MAX_THREADS];
static _Atomic long g_ok[MAX_THREADS];
static long g_before[MAX_THREADS];
static _Atomic int g_failed;        /* a thread's launch failed before exit() */
static _Atomic int g_exiting;

static void *launcher(void *arg)
{
    long i = (long)arg;
    CUstream s;

    CK(cl.CtxSetCurrent(g_ctx));
    CK(cl.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (;;) {
        CUresult r = cl.Launch(g_fn[i], 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
        if (r != CUDA_SUCCESS) {
            if (!atomic_load(&g_exiting)) {
                fprintf(stderr, "%s: launch failed before exit: %s\n", app_prog, app_errname(r));
                atomic_store(&g_failed, 1);
            }
            break;
        }
        atomic_fetch_add(&g_ok[i], 1);
    }
    return NULL;
}

/* Registered last: runs first at exit, before any tool's handler. */
static void note_counts(void)
{
    for (long i = 0; i < g_threads; i++)
        g_before[i] = atomic_load(&g_ok[i]);
}

/* Registered first: runs last, after the driver's own handler (launches fail from then on). */
static void print_counts(void)
{
    for (long i = 0; i < g_threads; i++)
        printf("before_exit sd_t%ld %ld\n", i, g_before[i]);
    for (long i = 0; i < g_threads; i++)
        printf("launched sd_t%ld %ld\n", i, atomic_load(&g_ok[i]));
    printf("threads %ld\n", g_threads);
}

int main(int argc, char **argv)
{
    long k = 0, min = 1000, i;
    size_t len, cap;
    char *image;
    CUmodule mod;
    CUfunction f;
    pthread_t t[MAX_THREADS];

    app_prog = "app_exit_launch";
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--threads") && a + 1 < argc)
            g_threads = app_long(argv[++a], "T");
        else if (!strcmp(argv[a], "--kernels") && a + 1 < argc)
            k = app_long(argv[++a], "K");
        else if (!strcmp(argv[a], "--min") && a + 1 < argc)
            min = app_long(argv[++a], "M");
        else {
            fprintf(stderr, "usage: %s [--threads T] [--kernels K] [--min M]\n", app_prog);
            return 2;
        }
    }
    if (g_threads < 1 || g_threads > MAX_THREADS) {
        fprintf(stderr, "%s: 1 to %d threads\n", app_prog, MAX_THREADS);
        return 2;
    }
    atexit(print_counts);
    cl_load(&cl);
    cl_init_primary(&cl, &g_ctx);

    cap = 64 + (size_t)(k + g_threads) * 32;
    image = malloc(cap);
    if (!image)
        return 1;
    len = (size_t)snprintf(image, cap, "sd_main=125000");
    for (i = 0; i < g_threads; i++)
        len += (size_t)snprintf(image + len, cap - len, ";sd_t%ld=125000", i);
    for (i = 0; i < k; i++)
        len += (size_t)snprintf(image + len, cap - len, ";sd_k%ld=125000", i);
    CK(cl.ModuleLoadData(&mod, image));
    free(image);

    CK(cl.ModuleGetFunction(&f, mod, "sd_main"));
    CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    for (i = 0; i < k; i++) {
        char name[32];
        snprintf(name, sizeof name, "sd_k%ld", i);
        CK(cl.ModuleGetFunction(&f, mod, name));
        CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    }
    for (i = 0; i < g_threads; i++) {
        char name[32];
        snprintf(name, sizeof name, "sd_t%ld", i);
        CK(cl.ModuleGetFunction(&g_fn[i], mod, name));
    }
    for (i = 0; i < g_threads; i++)
        if (pthread_create(&t[i], NULL, launcher, (void *)i) != 0)
            return 1;
    for (i = 0; i < g_threads; i++)
        while (atomic_load(&g_ok[i]) < min)
            if (atomic_load(&g_failed))
                _exit(1);
            else
                sched_yield();
    atomic_store(&g_exiting, 1);
    atexit(note_counts);
    exit(0);
}
