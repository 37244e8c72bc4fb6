/* app_live.c - a program that runs as long as it is told to, for ktime always on: it loads
 * the kernels its arguments name, then reads commands, one a line, from stdin, and answers
 * each on stdout with one write(2) once it is done (its launches synchronized):
 *   launch NAME N     launches kernel NAME N times      -> "launched NAME N"
 *   sleep MS          sleeps MS ms                      -> "slept MS"
 *   pid               its pid                           -> "pid PID"
 *   exit CODE         exit(CODE)
 * End of input: returns 0.
 *
 * usage: app_live NAME=NS[,NS...]...   (the fake driver's module image, kernels' durations in ns)
 */
#include "apputil.h"
#include "cudartlike.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_KERNELS 16

static void say(const char *fmt, const char *s, long v)
{
    char buf[512];
    int n = snprintf(buf, sizeof buf, fmt, s, v);
    if (n < 0 || (size_t)n >= sizeof buf || write(STDOUT_FILENO, buf, (size_t)n) != n)
        exit(1);
}

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    char image[4096] = "", line[512];
    const char *names[MAX_KERNELS];
    CUfunction fn[MAX_KERNELS];
    int nk = 0;

    app_prog = "app_live";
    if (argc < 2 || argc - 1 > MAX_KERNELS) {
        fprintf(stderr, "usage: app_live NAME=NS[,NS...]... (at most %d)\n", MAX_KERNELS);
        return 2;
    }
    for (int i = 1; i < argc; i++) {
        if (!strchr(argv[i], '=')) {
            fprintf(stderr, "app_live: %s is not NAME=NS\n", argv[i]);
            return 2;
        }
        snprintf(image + strlen(image), sizeof image - strlen(image), "%s%s", i > 1 ? ";" : "",
                 argv[i]);
    }
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, image));
    for (int i = 1; i < argc; i++) {
        static char namebuf[MAX_KERNELS][256];
        snprintf(namebuf[nk], sizeof namebuf[nk], "%.*s", (int)(strchr(argv[i], '=') - argv[i]),
                 argv[i]);
        names[nk] = namebuf[nk];
        CK(cl.ModuleGetFunction(&fn[nk], mod, names[nk]));
        nk++;
    }
    /* Commands are read with read(2), a byte at a time: nothing of stdin is buffered past
     * the line being obeyed. */
    for (;;) {
        size_t len = 0;
        char c;
        ssize_t got;
        while ((got = read(STDIN_FILENO, &c, 1)) == 1 && c != '\n')
            if (len + 1 < sizeof line)
                line[len++] = c;
        line[len] = '\0';
        if (got <= 0 && len == 0)
            return 0;
        char word[32], name[256];
        long n = 0;
        if (sscanf(line, "launch %255s %ld", name, &n) == 2) {
            int k = 0;
            while (k < nk && strcmp(names[k], name))
                k++;
            if (k == nk) {
                fprintf(stderr, "app_live: no kernel %s\n", name);
                return 2;
            }
            for (long i = 0; i < n; i++)
                CK(cl.Launch(fn[k], 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
            CK(cl.CtxSynchronize());
            say("launched %s %ld\n", name, n);
        } else if (sscanf(line, "sleep %ld", &n) == 1) {
            struct timespec ts = { n / 1000, (n % 1000) * 1000000L };
            while (nanosleep(&ts, &ts) != 0)
                ;
            say("slept%s %ld\n", "", n);
        } else if (sscanf(line, "exit %ld", &n) == 1) {
            exit((int)n);
        } else if (sscanf(line, "%31s", word) == 1 && !strcmp(word, "pid")) {
            say("pid%s %ld\n", "", (long)getpid());
        } else if (len) {
            fprintf(stderr, "app_live: unknown command '%s'\n", line);
            return 2;
        }
        if (got <= 0)
            return 0;
    }
}
