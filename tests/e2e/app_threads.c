/* app_threads.c - T threads launching K kernels each, through cudart-like pointers.
 *
 * usage: app_threads T K [--stream | --ptds | --legacy] [--ex] [--kernels N]
 *   Kernels thr_a (125000 ns) and thr_b (250000 ns) alternate, starting with thr_a, so each
 *   thread launches ceil(K/2) thr_a and floor(K/2) thr_b. Modes: --stream (default) each
 *   thread launches on its own created stream; --ptds on its per-thread default stream
 *   (per-thread pointers, NULL stream); --legacy all threads share the legacy NULL stream.
 *   --kernels N: N kernels thr_0 ... thr_<N-1> instead (125000 ns each), which every thread
 *   launches in turn, from thr_0: so the threads meet at each one's first launches.
 *   All threads start launching together (barrier).
 */
#include "apputil.h"
#include "cudartlike.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { M_STREAM, M_PTDS, M_LEGACY };

static struct cl cl;
static CUcontext g_ctx;
static CUfunction g_fa, g_fb, *g_many;
static long g_k, g_nk;
static int g_mode, g_ex;
static pthread_barrier_t g_bar;

static void *worker(void *arg)
{
    CUstream s = NULL;
    long i;
    (void)arg;
    CK(cl.CtxSetCurrent(g_ctx));
    if (g_mode == M_STREAM)
        CK(cl.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    pthread_barrier_wait(&g_bar);
    for (i = 0; i < g_k; i++) {
        CUfunction f = g_nk ? g_many[i % g_nk] : (i % 2) ? g_fb : g_fa;
        CUresult r;
        if (g_ex) {
            CUlaunchConfig cfg;
            memset(&cfg, 0, sizeof cfg);
            cfg.gridDimX = cfg.gridDimY = cfg.gridDimZ = 1;
            cfg.blockDimX = 64;
            cfg.blockDimY = cfg.blockDimZ = 1;
            cfg.hStream = s;
            r = (g_mode == M_PTDS ? cl.LaunchExPt : cl.LaunchEx)(&cfg, f, NULL, NULL);
        } else {
            r = (g_mode == M_PTDS ? cl.LaunchPt : cl.Launch)(f, 1, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
        }
        app_check(r, "launch");
    }
    CK((g_mode == M_PTDS ? cl.StreamSynchronizePt : cl.StreamSynchronize)(s));
    if (s)
        CK(cl.StreamDestroy(s));
    return NULL;
}

int main(int argc, char **argv)
{
    long t, i;
    pthread_t *tid;
    CUmodule mod;
    app_prog = "app_threads";
    if (argc < 3) {
        fprintf(stderr, "usage: %s T K [--stream|--ptds|--legacy] [--ex] [--kernels N]\n", app_prog);
        return 2;
    }
    t = app_long(argv[1], "thread count");
    g_k = app_long(argv[2], "launches per thread");
    for (i = 3; i < argc; i++) {
        if (!strcmp(argv[i], "--stream")) g_mode = M_STREAM;
        else if (!strcmp(argv[i], "--ptds")) g_mode = M_PTDS;
        else if (!strcmp(argv[i], "--legacy")) g_mode = M_LEGACY;
        else if (!strcmp(argv[i], "--ex")) g_ex = 1;
        else if (!strcmp(argv[i], "--kernels") && i + 1 < argc) g_nk = app_long(argv[++i], "kernels");
        else {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, argv[i]);
            return 2;
        }
    }
    if (t < 1 || t > 1024 || g_nk < 0 || g_nk > 100000)
        return 2;
    cl_load(&cl);
    cl_init_primary(&cl, &g_ctx);
    if (g_nk) {
        char *img = calloc((size_t)g_nk, 24), name[16];
        g_many = calloc((size_t)g_nk, sizeof *g_many);
        if (!img || !g_many)
            return 1;
        for (i = 0; i < g_nk; i++)
            sprintf(img + strlen(img), "%sthr_%ld=125000", i ? ";" : "", i);
        CK(cl.ModuleLoadData(&mod, img));
        for (i = 0; i < g_nk; i++) {
            snprintf(name, sizeof name, "thr_%ld", i);
            CK(cl.ModuleGetFunction(&g_many[i], mod, name));
        }
        free(img);
    } else {
        CK(cl.ModuleLoadData(&mod, "thr_a=125000;thr_b=250000"));
        CK(cl.ModuleGetFunction(&g_fa, mod, "thr_a"));
        CK(cl.ModuleGetFunction(&g_fb, mod, "thr_b"));
    }
    tid = calloc((size_t)t, sizeof *tid);
    pthread_barrier_init(&g_bar, NULL, (unsigned)t);
    for (i = 0; i < t; i++)
        if (pthread_create(&tid[i], NULL, worker, NULL) != 0) {
            fprintf(stderr, "%s: pthread_create failed\n", app_prog);
            return 1;
        }
    for (i = 0; i < t; i++)
        pthread_join(tid[i], NULL);
    CK(cl.CtxSynchronize());
    CK(cl.ModuleUnload(mod));
    printf("threads %ld per_thread %ld\n", t, g_k);
    if (g_nk)
        for (i = 0; i < g_nk; i++)
            printf("kernel thr_%ld launched %ld\n", i, t * (g_k / g_nk + (i < g_k % g_nk)));
    else {
        printf("kernel thr_a launched %ld\n", t * ((g_k + 1) / 2));
        printf("kernel thr_b launched %ld\n", t * (g_k / 2));
    }
    printf("launches %ld\n", t * g_k);
    free(tid);
    free(g_many);
    return 0;
}
