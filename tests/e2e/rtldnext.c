/* rtldnext.c - librtldnext.so: uses dlsym(RTLD_NEXT, ...), whose meaning depends on the
 * caller. It wraps rtld_probe from the later librtldlater.so, finds libc's getenv, and
 * must not find its own rtld_only_here. A dlsym interposer that forwards RTLD_NEXT from its
 * own code changes all three answers. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>

int rtld_probe(int x);
int rtld_only_here(void);
int rtld_check_getenv(void);
int rtld_check_self_hidden(void);

int rtld_only_here(void)
{
    return 1;
}

/* rtld_probe(x) = later(x) + 1; -1 if the next one is missing, -2 if RTLD_NEXT found this
 * wrapper again (which would recurse forever). */
int rtld_probe(int x)
{
    int (*next)(int) = (int (*)(int))dlsym(RTLD_NEXT, "rtld_probe");
    if (!next)
        return -1;
    if (next == rtld_probe)
        return -2;
    return next(x) + 1;
}

/* 1 when RTLD_NEXT from here finds libc's getenv, 0 when something else, -1 when nothing. */
int rtld_check_getenv(void)
{
    void *next = dlsym(RTLD_NEXT, "getenv");
    void *h = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
    void *libc = h ? dlsym(h, "getenv") : NULL;
    if (h)
        dlclose(h);
    if (!next)
        return -1;
    return next == libc;
}

/* 1 when RTLD_NEXT from here does not see this library's own rtld_only_here. */
int rtld_check_self_hidden(void)
{
    return dlsym(RTLD_NEXT, "rtld_only_here") == NULL;
}
