/* app_capture.c - captures launches into a graph, then replays it.
 *
 * usage: app_capture [--ptds] [--eager E] [--hold MS] [--after A] [--release-in-thread | --exit-capturing]
 *                    [--launch-in-thread N] C G
 *   E eager launches of cap_a (125000 ns) first (default 0); then on a created stream (or,
 *   with --ptds, the per-thread default stream) begins a global-mode capture, makes C
 *   launches alternating cap_a / cap_b (250000 ns), ends the capture, adds one empty node to
 *   the graph (so it has C kernel nodes of C + 1), instantiates it and launches it G times.
 *   --hold keeps the capture open MS milliseconds before ending it (time for a tool's
 *   background thread to touch anything it recorded into the capture). --release-in-thread:
 *   while the capture is held, another thread (in the default global capture mode) retains and
 *   releases the primary context (a tool that folds its pending work at a release must not
 *   break the capture doing it). --exit-capturing: after the eager launches, another thread
 *   begins the global-mode capture, makes the C launches into it and never ends it; the main
 *   thread exits meanwhile, and an atexit handler registered before CUDA starts (so it runs
 *   after every handler registered later: run with FAKECUDA_ATEXIT_DEINIT=0) prints
 *   "capture_at_exit active" or "invalidated". --launch-in-thread N: while the capture is held, another thread (in the
 *   default global capture mode) launches cap_a N times back to back on a stream of its own
 *   and synchronizes it (a tool checking those launches from that thread must not break the
 *   capture); prints "kernel cap_a eager E+N". --after A: after the graph launches, A more
 *   eager launches of cap_a on the same stream (prints "kernel cap_a after A"). Prints the capture
 *   status seen during capture, whether EndCapture succeeded, and the counts. Exits 1 if
 *   anything fails.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct cl cl;
static CUstream g_stream;
static long g_captured;
static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;
static int g_capturing;

/* Retains and releases the primary context of device 0 from a thread of its own. */
static void *retain_release(void *arg)
{
    CUcontext c;
    CUdevice dev;
    (void)arg;
    CK(cl.DeviceGet(&dev, 0));
    CK(cl.PrimaryRetain(&c, dev));
    CK(cl.PrimaryRelease(dev));
    return NULL;
}

static CUfunction g_fa;
static long g_thread_launches;

/* --launch-in-thread: ordinary launches from another thread while the capture is open. */
static void *launch_beside(void *arg)
{
    CUstream t;
    CK(cl.CtxSetCurrent(arg));
    CK(cl.StreamCreate(&t, CU_STREAM_NON_BLOCKING));
    for (long i = 0; i < g_thread_launches; i++)
        CK(cl.Launch(g_fa, 1, 1, 1, 32, 1, 1, 0, t, NULL, NULL));
    CK(cl.StreamSynchronize(t));
    CK(cl.StreamDestroy(t));
    return NULL;
}

/* --exit-capturing: the capture's state once every later atexit handler has run. */
static void report_capture_at_exit(void)
{
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r;
    if (!g_capturing)
        return;
    r = cl.StreamIsCapturing(g_stream, &st);
    printf("capture_at_exit %s\n", r != CUDA_SUCCESS ? app_errname(r)
                                  : st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "active"
                                  : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated" : "none");
    fflush(stdout);
}

/* --exit-capturing: begins the capture, launches into it, and never ends it. */
static void *capture_forever(void *arg)
{
    CUcontext ctx = arg;
    CUfunction f;
    CUmodule mod;
    CK(cl.CtxSetCurrent(ctx));
    CK(cl.ModuleLoadData(&mod, "cap_t=125000"));
    CK(cl.ModuleGetFunction(&f, mod, "cap_t"));
    CK(cl.StreamBeginCapture(g_stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (long i = 0; i < g_captured; i++)
        CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, g_stream, NULL, NULL));
    pthread_mutex_lock(&g_mu);
    g_capturing = 1;
    pthread_cond_signal(&g_cv);
    pthread_mutex_unlock(&g_mu);
    for (;;)
        pause();
    return NULL;
}

int main(int argc, char **argv)
{
    CUcontext ctx;
    CUmodule mod;
    CUfunction fa, fb;
    CUstream s = NULL;
    CUgraph g = NULL;
    CUgraphExec x;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r;
    long e = 0, c = -1, gl = -1, hold = 0, after = 0, i;
    int ptds = 0, in_thread = 0, exit_capturing = 0, a;
    app_prog = "app_capture";
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--ptds")) ptds = 1;
        else if (!strcmp(argv[a], "--eager") && a + 1 < argc) e = app_long(argv[++a], "E");
        else if (!strcmp(argv[a], "--hold") && a + 1 < argc) hold = app_long(argv[++a], "MS");
        else if (!strcmp(argv[a], "--after") && a + 1 < argc) after = app_long(argv[++a], "A");
        else if (!strcmp(argv[a], "--release-in-thread")) in_thread = 1;
        else if (!strcmp(argv[a], "--exit-capturing")) exit_capturing = 1;
        else if (!strcmp(argv[a], "--launch-in-thread") && a + 1 < argc)
            g_thread_launches = app_long(argv[++a], "N");
        else if (c < 0) c = app_long(argv[a], "C");
        else if (gl < 0) gl = app_long(argv[a], "G");
        else {
            fprintf(stderr, "usage: %s [--ptds] [--eager E] [--hold MS] [--release-in-thread] C G\n",
                    app_prog);
            return 2;
        }
    }
    if (c < 0 || gl < 0) {
        fprintf(stderr, "usage: %s [--ptds] [--eager E] [--hold MS] [--release-in-thread] C G\n",
                app_prog);
        return 2;
    }
    if (exit_capturing)
        atexit(report_capture_at_exit); /* before CUDA's and any tool's: runs after them */
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "cap_a=125000;cap_b=250000"));
    CK(cl.ModuleGetFunction(&fa, mod, "cap_a"));
    CK(cl.ModuleGetFunction(&fb, mod, "cap_b"));
    g_fa = fa;
    if (!ptds)
        CK(cl.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (i = 0; i < e; i++)
        CK((ptds ? cl.LaunchPt : cl.Launch)(fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));

    if (exit_capturing) {
        pthread_t th;
        CK(cl.StreamCreate(&g_stream, CU_STREAM_NON_BLOCKING));
        g_captured = c;
        pthread_create(&th, NULL, capture_forever, ctx);
        pthread_mutex_lock(&g_mu);
        while (!g_capturing)
            pthread_cond_wait(&g_cv, &g_mu);
        pthread_mutex_unlock(&g_mu);
        printf("kernel cap_a eager %ld\n", e);
        printf("exiting while another thread captures %ld launches\n", c);
        exit(0);
    }
    CK((ptds ? cl.StreamBeginCapturePt : cl.StreamBeginCapture)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (i = 0; i < c; i++)
        CK((ptds ? cl.LaunchPt : cl.Launch)(i % 2 ? fb : fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    if (in_thread) {
        pthread_t th;
        pthread_create(&th, NULL, retain_release, NULL);
        pthread_join(th, NULL);
    }
    if (g_thread_launches > 0) {
        pthread_t th;
        pthread_create(&th, NULL, launch_beside, ctx);
        pthread_join(th, NULL);
    }
    if (hold > 0) {
        struct timespec ts = { hold / 1000, (hold % 1000) * 1000000L };
        nanosleep(&ts, NULL);
    }
    CK((ptds ? cl.StreamIsCapturingPt : cl.StreamIsCapturing)(s, &st));
    printf("capture_status %s\n", st == CU_STREAM_CAPTURE_STATUS_ACTIVE ? "active"
                                  : st == CU_STREAM_CAPTURE_STATUS_INVALIDATED ? "invalidated" : "none");
    r = (ptds ? cl.StreamEndCapturePt : cl.StreamEndCapture)(s, &g);
    printf("end_capture %s\n", app_errname(r));
    if (r != CUDA_SUCCESS || !g)
        return 1;
    {
        CUgraphNode empty;
        CK(cl.GraphAddEmptyNode(&empty, g, NULL, 0));
    }
    CK(cl.GraphInstantiateWithFlags(&x, g, 0));
    for (i = 0; i < gl; i++)
        CK((ptds ? cl.GraphLaunchPt : cl.GraphLaunch)(x, s));
    for (i = 0; i < after; i++)
        CK((ptds ? cl.LaunchPt : cl.Launch)(fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CK((ptds ? cl.StreamSynchronizePt : cl.StreamSynchronize)(s));
    CK(cl.GraphExecDestroy(x));
    CK(cl.GraphDestroy(g));
    if (s)
        CK(cl.StreamDestroy(s));
    CK(cl.ModuleUnload(mod));
    printf("kernel cap_a eager %ld\n", e + g_thread_launches);
    printf("captured_launches %ld\n", c);
    printf("graph_launches %ld\n", gl);
    if (after)
        printf("kernel cap_a after %ld\n", after);
    return 0;
}
