/* app_capture.c - captures launches into a graph, then replays it.
 *
 * usage: app_capture [--ptds] [--eager E] [--hold MS] C G
 *   E eager launches of cap_a (125000 ns) first (default 0); then on a created stream (or,
 *   with --ptds, the per-thread default stream) begins a global-mode capture, makes C
 *   launches alternating cap_a / cap_b (250000 ns), ends the capture, adds one empty node to
 *   the graph (so it has C kernel nodes of C + 1), instantiates it and launches it G times.
 *   --hold keeps the capture open MS milliseconds before ending it (time for a tool's
 *   background thread to touch anything it recorded into the capture). Prints the capture
 *   status seen during capture, whether EndCapture succeeded, and the counts. Exits 1 if
 *   anything fails.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fa, fb;
    CUstream s = NULL;
    CUgraph g = NULL;
    CUgraphExec x;
    CUstreamCaptureStatus st = CU_STREAM_CAPTURE_STATUS_NONE;
    CUresult r;
    long e = 0, c = -1, gl = -1, hold = 0, i;
    int ptds = 0, a;
    app_prog = "app_capture";
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--ptds")) ptds = 1;
        else if (!strcmp(argv[a], "--eager") && a + 1 < argc) e = app_long(argv[++a], "E");
        else if (!strcmp(argv[a], "--hold") && a + 1 < argc) hold = app_long(argv[++a], "MS");
        else if (c < 0) c = app_long(argv[a], "C");
        else if (gl < 0) gl = app_long(argv[a], "G");
        else {
            fprintf(stderr, "usage: %s [--ptds] [--eager E] [--hold MS] C G\n", app_prog);
            return 2;
        }
    }
    if (c < 0 || gl < 0) {
        fprintf(stderr, "usage: %s [--ptds] [--eager E] [--hold MS] C G\n", app_prog);
        return 2;
    }
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "cap_a=125000;cap_b=250000"));
    CK(cl.ModuleGetFunction(&fa, mod, "cap_a"));
    CK(cl.ModuleGetFunction(&fb, mod, "cap_b"));
    if (!ptds)
        CK(cl.StreamCreate(&s, CU_STREAM_NON_BLOCKING));
    for (i = 0; i < e; i++)
        CK((ptds ? cl.LaunchPt : cl.Launch)(fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));

    CK((ptds ? cl.StreamBeginCapturePt : cl.StreamBeginCapture)(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
    for (i = 0; i < c; i++)
        CK((ptds ? cl.LaunchPt : cl.Launch)(i % 2 ? fb : fa, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
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
    CK((ptds ? cl.StreamSynchronizePt : cl.StreamSynchronize)(s));
    CK(cl.GraphExecDestroy(x));
    CK(cl.GraphDestroy(g));
    if (s)
        CK(cl.StreamDestroy(s));
    CK(cl.ModuleUnload(mod));
    printf("kernel cap_a eager %ld\n", e);
    printf("captured_launches %ld\n", c);
    printf("graph_launches %ld\n", gl);
    return 0;
}
