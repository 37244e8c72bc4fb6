/* Host program for the libkcount self-test: "launches" kernels through fake_cupti_launch.
 * usage: kcount_host MODE   (MODE: plain | fork | none | many | thread) */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void (*launch_fn)(const char *, uint64_t, int);
static launch_fn launch;

static void *side(void *arg)
{
    (void)arg;
    for (int i = 0; i < 500; i++)
        launch("_Z6threadv", 2000, 1);
    return NULL;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "plain";
    launch = (launch_fn)dlsym(RTLD_DEFAULT, "fake_cupti_launch");
    if (!launch) {
        fprintf(stderr, "kcount_host: fake_cupti_launch not found\n");
        return 1;
    }
    if (!strcmp(mode, "none"))
        return 0;
    int n = !strcmp(mode, "many") ? 20000 : 100;
    for (int i = 0; i < n; i++)
        launch("_Z4kernAPf", 5000 + (uint64_t)(i % 3) * 100, 1);
    for (int i = 0; i < 11; i++)
        launch("kernel_b", 1000000 + (uint64_t)i, 1);
    if (!strcmp(mode, "thread")) {
        pthread_t t;
        pthread_create(&t, NULL, side, NULL);
        for (int i = 0; i < 500; i++)
            launch("_Z4kernAPf", 5000, 1);
        pthread_join(t, NULL);
    }
    launch("weird\"name\\\x01", 7, 1);
    launch("_Z7pendingv", 0, 0); /* still running at exit: no end timestamp */
    if (!strcmp(mode, "fork")) {
        pid_t p = fork();
        if (p == 0)
            return 0; /* the child inherits the exit handlers: it must write nothing */
        int st;
        waitpid(p, &st, 0);
    }
    usleep(250 * 1000); /* lets the flusher thread run a couple of times */
    printf("kcount_host %s done\n", mode);
    return 0;
}
