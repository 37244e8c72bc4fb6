/* app_probe.c - a program with no CUDA runtime asks dlsym(RTLD_DEFAULT) for runtime launch
 * functions, as programs probing for CUDA do. libktime exports those names; with no runtime
 * behind them the answer must stay "absent", as without ktime. */
#include <dlfcn.h>
#include <stdio.h>

int main(void)
{
    const char *names[] = { "cudaLaunchKernel", "cudaLaunchKernelExC", "cudaGraphLaunch" };
    for (int i = 0; i < 3; i++)
        printf("%s %s\n", names[i], dlsym(RTLD_DEFAULT, names[i]) ? "found" : "absent");
    return 0;
}
