/* app_forksig.c - launches (so a tool preloaded with it has set up its exit and signal
 * handling), then forks a child that waits for signals; the parent sends it SIGTERM and
 * reports how the child ended. Under ktime the child must die of SIGTERM at once, as it
 * would without ktime (the parent's handler must not outlive the fork).
 *
 * usage: app_forksig */
#include "apputil.h"
#include "cudartlike.h"

#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static void nap_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

int main(void)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    pid_t pid;
    int st;

    app_prog = "app_forksig";
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "k=125000"));
    CK(cl.ModuleGetFunction(&f, mod, "k"));
    for (int i = 0; i < 20; i++)
        CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cl.CtxSynchronize());
    fflush(stdout);
    pid = fork();
    if (pid < 0)
        return 1;
    if (pid == 0) {
        for (;;)
            pause();
    }
    nap_ms(100);
    kill(pid, SIGTERM);
    for (int i = 0; i < 40; i++) {
        if (waitpid(pid, &st, WNOHANG) == pid) {
            if (WIFSIGNALED(st))
                printf("child ended by signal %d\n", WTERMSIG(st));
            else
                printf("child exited with status %d\n", WEXITSTATUS(st));
            return 0;
        }
        nap_ms(50);
    }
    printf("child still alive 2 s after SIGTERM\n");
    kill(pid, SIGKILL);
    waitpid(pid, &st, 0);
    return 0;
}
