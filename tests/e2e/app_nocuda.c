/* app_nocuda.c - a program that never touches CUDA, but does use dlopen/dlsym/getenv. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    void *h = dlopen("libm.so.6", RTLD_NOW | RTLD_LOCAL);
    double (*cosp)(double) = h ? (double (*)(double))dlsym(h, "cos") : NULL;
    void *pp = dlsym(RTLD_DEFAULT, "printf");
    printf("no cuda here\n");
    printf("cos(0) = %.1f\n", cosp ? cosp(0.0) : -1.0);
    printf("printf found %s\n", pp ? "yes" : "no");
    printf("HOME set %s\n", getenv("HOME") ? "yes" : "no");
    if (h)
        dlclose(h);
    return cosp && pp ? 0 : 1;
}
