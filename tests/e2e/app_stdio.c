/* app_stdio.c - a program that closes its stderr after its kernels ran and reuses
 * descriptor 2 for a data file of its own: whatever writes to descriptor 2 from then on
 * lands in that file.
 *
 * usage: app_stdio DATAFILE N
 *   Launches k (125 us) N times, synchronises, prints "launched N" on stdout, closes
 *   descriptor 2, opens DATAFILE (created, truncated), which gets descriptor 2, writes
 *   "data 0" to "data 9" into it, one line each, and returns 0 with it still open. Exits 3
 *   if the file did not get descriptor 2. */
#include "apputil.h"
#include "cudartlike.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction f;
    long n;
    int fd;

    app_prog = "app_stdio";
    if (argc != 3) {
        fprintf(stderr, "usage: %s DATAFILE N\n", app_prog);
        return 2;
    }
    n = app_long(argv[2], "N");
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "k=125000"));
    CK(cl.ModuleGetFunction(&f, mod, "k"));
    for (long i = 0; i < n; i++)
        CK(cl.Launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    CK(cl.CtxSynchronize());
    printf("launched %ld\n", n);
    fflush(stdout);
    close(2);
    fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd != 2)
        return 3;
    for (int i = 0; i < 10; i++)
        dprintf(fd, "data %d\n", i);
    return 0;
}
