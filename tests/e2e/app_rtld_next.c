/* app_rtld_next.c - prints what dlsym(RTLD_NEXT, ...) finds from a library and from the
 * program. Linked with -lrtldnext -lrtldlater (in that order; it calls a function of each so
 * both stay needed under --as-needed); run with the folder holding them in LD_LIBRARY_PATH.
 * Exits 1 if any answer is wrong. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>

int rtld_probe(int x);
int rtld_check_getenv(void);
int rtld_check_self_hidden(void);
int rtld_later_marker(void);

int main(void)
{
    int probe = rtld_probe(10);
    int getenv_ok = rtld_check_getenv();
    int hidden = rtld_check_self_hidden();
    void *h = dlopen("librtldnext.so", RTLD_NOLOAD | RTLD_LAZY);
    void *want = h ? dlsym(h, "rtld_probe") : NULL;
    void *next = dlsym(RTLD_NEXT, "rtld_probe");
    void *dflt = dlsym(RTLD_DEFAULT, "rtld_probe");
    printf("rtld_probe(10) = %d\n", probe);
    printf("library RTLD_NEXT getenv is libc's: %s\n", getenv_ok == 1 ? "yes" : getenv_ok == 0 ? "no" : "missing");
    printf("library RTLD_NEXT skips itself: %s\n", hidden ? "yes" : "no");
    printf("program RTLD_NEXT rtld_probe is librtldnext's: %s\n", next && next == want ? "yes" : "no");
    printf("program RTLD_DEFAULT rtld_probe is librtldnext's: %s\n", dflt && dflt == want ? "yes" : "no");
    return (probe == 21 && getenv_ok == 1 && hidden && next == want && dflt == want && want && rtld_later_marker()) ? 0 : 1;
}
