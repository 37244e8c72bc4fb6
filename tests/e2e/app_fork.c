/* app_fork.c - launches, forks; the child launches a little and exits; the parent waits and
 * launches more.
 *
 * usage: app_fork [--pidfile FILE] N M K
 *   Parent launches fk_parent (125000 ns) N times, forks; the child launches fk_child
 *   (250000 ns) M times, synchronises and calls exit(0) (inherited atexit handlers run);
 *   the parent waits for it, then launches fk_parent K more times. A child whose CUDA calls
 *   fail (as with the real driver, or FAKECUDA_FORK_CHILD_FAILS=1) prints "child cuda
 *   unavailable" and still exits 0. --pidfile writes the parent's pid to FILE.
 */
#include "apputil.h"
#include "cudartlike.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction fp, fc;
    long v[3], i;
    int nv = 0, a, status;
    const char *pidfile = NULL;
    pid_t pid;
    app_prog = "app_fork";
    for (a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--pidfile") && a + 1 < argc) pidfile = argv[++a];
        else if (nv < 3) v[nv++] = app_long(argv[a], "count");
        else nv = 4;
    }
    if (nv != 3) {
        fprintf(stderr, "usage: %s [--pidfile FILE] N M K\n", app_prog);
        return 2;
    }
    if (pidfile) {
        FILE *f = fopen(pidfile, "w");
        if (!f)
            return 1;
        fprintf(f, "%ld\n", (long)getpid());
        fclose(f);
    }
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "fk_parent=125000;fk_child=250000"));
    CK(cl.ModuleGetFunction(&fp, mod, "fk_parent"));
    CK(cl.ModuleGetFunction(&fc, mod, "fk_child"));
    for (i = 0; i < v[0]; i++)
        CK(cl.Launch(fp, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    printf("parent launched %ld\n", v[0]);
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        CUresult r = CUDA_SUCCESS;
        for (i = 0; i < v[1] && r == CUDA_SUCCESS; i++)
            r = cl.Launch(fc, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
        if (r == CUDA_SUCCESS)
            r = cl.CtxSynchronize();
        if (r == CUDA_SUCCESS)
            printf("child launched %ld\n", v[1]);
        else
            printf("child cuda unavailable\n");
        fflush(stdout);
        exit(0);
    }
    if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "%s: child failed (status %#x)\n", app_prog, status);
        return 1;
    }
    for (i = 0; i < v[2]; i++)
        CK(cl.Launch(fp, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cl.CtxSynchronize());
    CK(cl.ModuleUnload(mod));
    printf("parent launched %ld more\n", v[2]);
    return 0;
}
