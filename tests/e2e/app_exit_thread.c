/* app_exit_thread.c - launches, then a second thread launches more and calls exit(3) while
 * the main thread waits in pthread_join.
 *
 * usage: app_exit_thread [N [M]]   main launches ex_main N times (default 50, 125000 ns) on
 *   the legacy stream, the thread launches ex_thread M times (default 10, 250000 ns) on its
 *   own stream and exits the process with status 3 without synchronising.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

static struct cl cl;
static CUcontext g_ctx;
static CUfunction g_ft;
static long g_m = 10;

static void *exiter(void *arg)
{
    CUstream s;
    long i;
    (void)arg;
    CK(cl.CtxSetCurrent(g_ctx));
    CK(cl.StreamCreate(&s, 0));
    for (i = 0; i < g_m; i++)
        CK(cl.Launch(g_ft, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    printf("kernel ex_thread launched %ld\nexit 3\n", g_m);
    fflush(stdout);
    exit(3);
}

int main(int argc, char **argv)
{
    long n = 50, i;
    pthread_t t;
    CUmodule mod;
    CUfunction fm;
    app_prog = "app_exit_thread";
    if (argc > 1)
        n = app_long(argv[1], "N");
    if (argc > 2)
        g_m = app_long(argv[2], "M");
    cl_load(&cl);
    cl_init_primary(&cl, &g_ctx);
    CK(cl.ModuleLoadData(&mod, "ex_main=125000;ex_thread=250000"));
    CK(cl.ModuleGetFunction(&fm, mod, "ex_main"));
    CK(cl.ModuleGetFunction(&g_ft, mod, "ex_thread"));
    for (i = 0; i < n; i++)
        CK(cl.Launch(fm, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    printf("kernel ex_main launched %ld\n", n);
    fflush(stdout);
    if (pthread_create(&t, NULL, exiter, NULL) != 0)
        return 1;
    pthread_join(t, NULL);  /* never returns: the thread exits the process */
    return 0;
}
