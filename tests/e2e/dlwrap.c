/* dlwrap.c - a preloaded library that interposes dlopen and dlclose the way tools do
 * (compute-sanitizer's collection library exports both): it finds the real ones lazily with
 * dlsym(RTLD_NEXT), under a guard. If that lookup comes back into the wrapper (dlsym calling
 * dlopen), the guard sees it and the process stops with exit status 86 and a message, where
 * the real tool hung. Preloaded before libktime: LD_PRELOAD=libdlwrap.so:libktime.so. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static void *(*real_open)(const char *, int);
static int (*real_close)(void *);
static int resolving;

static void resolve(void)
{
    if (real_open && real_close)
        return;
    if (resolving) {
        static const char msg[] = "dlwrap: dlopen/dlclose called while looking them up\n";
        (void)!write(2, msg, sizeof msg - 1);
        _exit(86);
    }
    resolving = 1;
    real_open = (void *(*)(const char *, int))dlsym(RTLD_NEXT, "dlopen");
    real_close = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
    resolving = 0;
}

void *dlopen(const char *file, int mode)
{
    resolve();
    return real_open ? real_open(file, mode) : NULL;
}

int dlclose(void *h)
{
    resolve();
    return real_close ? real_close(h) : -1;
}
