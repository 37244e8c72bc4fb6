/* app_fork.c - process trees: a parent that launches and forks, a pool of forked workers,
 * a program that launches and then execs another.
 *
 * usage: app_fork [--pidfile FILE] N M K
 *   Parent launches fk_parent (125000 ns) N times, forks; the child launches fk_child
 *   (250000 ns) M times, synchronises and calls exit(0) (inherited atexit handlers run);
 *   the parent waits for it, then launches fk_parent K more times. A child whose CUDA calls
 *   fail (as with the real driver, or FAKECUDA_FORK_CHILD_FAILS=1) prints "child cuda
 *   unavailable" and still exits 0. --pidfile writes the parent's pid to FILE.
 *
 * usage: app_fork --workers W M [--load|--init] [--quick-exit]
 *   A pool: the parent launches nothing and forks W workers, one after the other. Worker i
 *   (0-based) initialises the driver, launches fk_w<i> (125000 ns) M + i times, synchronises,
 *   prints "worker i launched n" and calls exit(0), or with --quick-exit _exit(0) (as
 *   Python's multiprocessing workers end). The parent waits for each and prints "workers
 *   done". --load: the parent dlopens the driver before forking (and does nothing with it);
 *   --init: it also initialises it and makes the primary context current (a worker's CUDA
 *   calls then fail with FAKECUDA_FORK_CHILD_FAILS=1, as with the real driver: "worker i
 *   cuda unavailable", exit 0 all the same).
 *
 * usage: app_fork --exec N HOW PROG [ARG...]
 *   Launches fk_parent N times, synchronises, prints "launched N" and replaces itself with
 *   PROG ARG... through HOW: execve, execv, execvp, execvpe, execl, execlp, execle (up to 3
 *   ARGs for these three), fexecve or execveat (PROG a path; the p forms search PATH). If the
 *   exec fails, it prints "exec failed: errno E (MESSAGE)", launches fk_parent N more times
 *   and exits 0.
 */
#define _GNU_SOURCE
#include "apputil.h"
#include "cudartlike.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static int workers(int argc, char **argv)
{
    long w, m, i, n;
    int a, quick = 0, load = 0, init = 0, status;
    CUresult r;

    if (argc < 4) {
        fprintf(stderr, "usage: %s --workers W M [--load|--init] [--quick-exit]\n", app_prog);
        return 2;
    }
    w = app_long(argv[2], "workers");
    m = app_long(argv[3], "count");
    for (a = 4; a < argc; a++) {
        if (!strcmp(argv[a], "--quick-exit")) quick = 1;
        else if (!strcmp(argv[a], "--load")) load = 1;
        else if (!strcmp(argv[a], "--init")) init = 1;
        else {
            fprintf(stderr, "%s: unknown option %s\n", app_prog, argv[a]);
            return 2;
        }
    }
    if (load && !dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL))
        return 1;
    if (init) {
        struct cl cl;
        CUcontext ctx;
        cl_load(&cl);
        cl_init_primary(&cl, &ctx);
    }
    for (i = 0; i < w; i++) {
        pid_t pid;
        fflush(stdout);
        pid = fork();
        if (pid < 0)
            return 1;
        if (pid == 0) {
            struct cl cl;
            CUcontext ctx;
            CUdevice dev;
            CUmodule mod;
            CUfunction f;
            char plan[64], name[32];
            snprintf(name, sizeof name, "fk_w%ld", i);
            snprintf(plan, sizeof plan, "%s=125000", name);
            cl_load(&cl);
            r = cl.Init(0);
            if (r == CUDA_SUCCESS) r = cl.DeviceGet(&dev, 0);
            if (r == CUDA_SUCCESS) r = cl.PrimaryRetain(&ctx, dev);
            if (r == CUDA_SUCCESS) r = cl.CtxSetCurrent(ctx);
            if (r == CUDA_SUCCESS) r = cl.ModuleLoadData(&mod, plan);
            if (r == CUDA_SUCCESS) r = cl.ModuleGetFunction(&f, mod, name);
            for (n = 0; n < m + i && r == CUDA_SUCCESS; n++)
                r = cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
            if (r == CUDA_SUCCESS)
                r = cl.CtxSynchronize();
            if (r == CUDA_SUCCESS)
                printf("worker %ld launched %ld\n", i, n);
            else
                printf("worker %ld cuda unavailable\n", i);
            fflush(stdout);
            if (quick)
                _exit(0);
            exit(0);
        }
        if (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            fprintf(stderr, "%s: worker %ld failed (status %#x)\n", app_prog, i, status);
            return 1;
        }
    }
    printf("workers done\n");
    return 0;
}

/* Launches fk_parent n times on the primary context and waits for them. */
static void launch_parent(struct cl *cl, long n)
{
    CUmodule mod;
    CUfunction f;

    CK(cl->ModuleLoadData(&mod, "fk_parent=125000"));
    CK(cl->ModuleGetFunction(&f, mod, "fk_parent"));
    for (long i = 0; i < n; i++)
        CK(cl->Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cl->CtxSynchronize());
}

static int exec_after(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    long n;
    const char *how, *prog;
    char **args;
    int nargs, fd;

    if (argc < 5) {
        fprintf(stderr, "usage: %s --exec N HOW PROG [ARG...]\n", app_prog);
        return 2;
    }
    n = app_long(argv[2], "count");
    how = argv[3];
    prog = argv[4];
    args = argv + 4; /* PROG ARG... NULL */
    nargs = argc - 5;
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    launch_parent(&cl, n);
    printf("launched %ld\n", n);
    fflush(stdout);
#define A(i) (nargs > (i) ? args[(i) + 1] : NULL)
    if (!strcmp(how, "execve")) execve(prog, args, environ);
    else if (!strcmp(how, "execv")) execv(prog, args);
    else if (!strcmp(how, "execvp")) execvp(prog, args);
    else if (!strcmp(how, "execvpe")) execvpe(prog, args, environ);
    else if (!strcmp(how, "execl")) execl(prog, prog, A(0), A(1), A(2), (char *)NULL);
    else if (!strcmp(how, "execlp")) execlp(prog, prog, A(0), A(1), A(2), (char *)NULL);
    else if (!strcmp(how, "execle")) execle(prog, prog, A(0), A(1), A(2), (char *)NULL, environ);
    else if (!strcmp(how, "fexecve")) {
        if ((fd = open(prog, O_RDONLY)) >= 0)
            fexecve(fd, args, environ);
    } else if (!strcmp(how, "execveat")) {
#if defined(__GLIBC__) && __GLIBC_PREREQ(2, 34)
        execveat(AT_FDCWD, prog, args, environ, 0);
#else
        printf("no execveat in this libc\n");
        return 77;
#endif
    } else {
        fprintf(stderr, "%s: unknown exec form %s\n", app_prog, how);
        return 2;
    }
#undef A
    printf("exec failed: errno %d (%s)\n", errno, strerror(errno));
    launch_parent(&cl, n);
    printf("launched %ld more\n", n);
    return 0;
}

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
    if (argc > 1 && !strcmp(argv[1], "--workers"))
        return workers(argc, argv);
    if (argc > 1 && !strcmp(argv[1], "--exec"))
        return exec_after(argc, argv);
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
