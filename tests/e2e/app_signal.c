/* app_signal.c - a program that a signal ends: raised by itself after its launches, or sent
 * from outside while it loops, sleeps or exits. Every line goes out with one write(2), so
 * that what a signal cuts off is never left in a buffer. SIGINT, SIGTERM and SIGHUP are set
 * to their default action first, as in a program started from an interactive shell (a
 * background job of a script has SIGINT ignored).
 *
 * usage: app_signal MODE ARGS... [--no-sync] [--hang] [--lock-stderr] [--own-handler|--ignore]
 *   raise SIG N      launches kernel k (125 us) N times, synchronizes, prints "launched N",
 *                    raises SIG (TERM, INT or HUP), then prints "after raise" and returns 0
 *   sleep N MS       the same launches, prints "launched N", sleeps MS ms (again after any
 *                    interruption), prints "woke" and returns 0
 *   loop US          for ever: step i launches k 4 times, synchronizes, prints "step i", then
 *                    sleeps US us (nanosleep, again after any interruption)
 *   pollloop MS      the same, but waits with poll(NULL, 0, MS); a poll that fails prints
 *                    "app_signal: poll: <error>" on stderr and exits 1 (as Python does)
 *   exitrace N MS    the launches, prints "launched N"; a thread raises SIGTERM MS ms later,
 *                    while main returns (the process exits)
 *   --no-sync        no synchronization after the launches (their events stay pending)
 *   --hang           one launch of hang_k (never finishes) after the others
 *   --lock-stderr    raise: hold stderr's stdio lock (flockfile) when raising, as a thread
 *                    interrupted in the middle of an fprintf(stderr) does
 *   --own-handler    the program's own handler for the three signals (it prints "handled SIG"
 *                    and returns), installed before any launch
 *   --ignore         the three signals ignored (SIG_IGN), before any launch
 */
#include "apputil.h"
#include "cudartlike.h"

#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void say(const char *fmt, long v)
{
    char buf[128];
    int n = snprintf(buf, sizeof buf, fmt, v);
    if (write(STDOUT_FILENO, buf, (size_t)n) != n)
        exit(1);
}

static void nap_us(long us)
{
    struct timespec ts = { us / 1000000, (us % 1000000) * 1000L };
    while (nanosleep(&ts, &ts) != 0)
        ;
}

static int signum(const char *s)
{
    if (!strcmp(s, "TERM")) return SIGTERM;
    if (!strcmp(s, "INT")) return SIGINT;
    if (!strcmp(s, "HUP")) return SIGHUP;
    fprintf(stderr, "app_signal: unknown signal %s (TERM, INT or HUP)\n", s);
    exit(2);
}

static void own_handler(int sig)
{
    char buf[32];
    int n = snprintf(buf, sizeof buf, "handled %d\n", sig);
    if (write(STDOUT_FILENO, buf, (size_t)n) < 0)
        _exit(1);
}

static long raise_after_ms;

static void *raiser(void *arg)
{
    (void)arg;
    nap_us(raise_after_ms * 1000);
    raise(SIGTERM); /* this thread's: it takes the signal while main exits */
    return NULL;
}

int main(int argc, char **argv)
{
    struct cl cl;
    CUcontext ctx;
    CUmodule mod;
    CUfunction k, hang;
    const char *mode;
    long a = 0, b = 0;
    int nosync = 0, hang_it = 0, lock_stderr = 0, own = 0, ignore = 0, nargs = 0;
    char *pos[2] = { NULL, NULL };

    app_prog = "app_signal";
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);
    if (argc < 3) {
        fprintf(stderr, "usage: app_signal raise|sleep|loop|pollloop|exitrace ARGS... [--no-sync] [--hang]\n");
        return 2;
    }
    mode = argv[1];
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--no-sync"))
            nosync = 1;
        else if (!strcmp(argv[i], "--hang"))
            hang_it = 1;
        else if (!strcmp(argv[i], "--lock-stderr"))
            lock_stderr = 1;
        else if (!strcmp(argv[i], "--own-handler"))
            own = 1;
        else if (!strcmp(argv[i], "--ignore"))
            ignore = 1;
        else if (nargs < 2)
            pos[nargs++] = argv[i];
        else {
            fprintf(stderr, "app_signal: unexpected %s\n", argv[i]);
            return 2;
        }
    }
    if (strcmp(mode, "raise") && strcmp(mode, "sleep") && strcmp(mode, "loop") &&
        strcmp(mode, "pollloop") && strcmp(mode, "exitrace")) {
        fprintf(stderr, "app_signal: unknown mode %s\n", mode);
        return 2;
    }
    if (!pos[0]) {
        fprintf(stderr, "app_signal: %s wants an argument\n", mode);
        return 2;
    }
    if (!strcmp(mode, "raise")) {
        b = signum(pos[0]);
        a = pos[1] ? app_long(pos[1], "N") : 0;
    } else {
        a = app_long(pos[0], "first argument");
        if (pos[1])
            b = app_long(pos[1], "second argument");
    }

    if (own || ignore) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = own ? own_handler : SIG_IGN;
        sigemptyset(&sa.sa_mask);
        sigaction(SIGINT, &sa, NULL);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGHUP, &sa, NULL);
    }
    cl_load(&cl);
    cl_init_primary(&cl, &ctx);
    CK(cl.ModuleLoadData(&mod, "k=125000;hang_k=1000"));
    CK(cl.ModuleGetFunction(&k, mod, "k"));
    CK(cl.ModuleGetFunction(&hang, mod, "hang_k"));

    if (!strcmp(mode, "loop") || !strcmp(mode, "pollloop")) {
        int use_poll = !strcmp(mode, "pollloop");
        for (long step = 0;; step++) {
            for (int j = 0; j < 4; j++)
                CK(cl.Launch(k, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
            CK(cl.CtxSynchronize());
            say("step %ld\n", step);
            if (!use_poll) {
                nap_us(a);
            } else if (poll(NULL, 0, (int)a) < 0) {
                fprintf(stderr, "app_signal: poll: %s\n", strerror(errno));
                return 1;
            }
        }
    }

    long n = a;
    for (long i = 0; i < n; i++)
        CK(cl.Launch(k, 4, 1, 1, 128, 1, 1, 0, NULL, NULL, NULL));
    if (hang_it)
        CK(cl.Launch(hang, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    if (!nosync && !hang_it)
        CK(cl.CtxSynchronize());
    say("launched %ld\n", n);

    if (!strcmp(mode, "raise")) {
        if (lock_stderr)
            flockfile(stderr);
        raise((int)b);
        say("after raise\n", 0);
        return 0;
    }
    if (!strcmp(mode, "sleep")) {
        nap_us(b * 1000);
        say("woke\n", 0);
        return 0;
    }
    /* exitrace */
    pthread_t t;
    raise_after_ms = b;
    return pthread_create(&t, NULL, raiser, NULL) != 0;
}
