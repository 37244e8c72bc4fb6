/* range_cost.c - what a range costs the program: ktime_range_push + ktime_range_pop, per pair,
 * against the raw cost of what a range must do at the least (two CLOCK_MONOTONIC reads, for its
 * wall time), in one run. No GPU: a range touches no CUDA.
 *
 *   LD_PRELOAD=build/src/.libs/libktime.so [KTIME_DISABLE=1] build/bench/range_cost [N] [REPS]
 *
 * Finds ktime_range_push/pop with dlsym (run without libktime, it times nothing and says so).
 * Each repetition times N pairs of each case, in turn: raw (two clock_gettime), a short name
 * ("forward", seen before), a 64-byte name, 200 distinct names in rotation, and a pair nested
 * 8 deep; prints the median ns per pair of REPS repetitions, and the CPU. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef void (*push_fn)(const char *);
typedef void (*pop_fn)(void);

static push_fn push;
static pop_fn pop;
static volatile long sink;
static char names[200][24];

static double now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void raw(long n)
{
    struct timespec a, b;
    for (long i = 0; i < n; i++) {
        clock_gettime(CLOCK_MONOTONIC, &a);
        clock_gettime(CLOCK_MONOTONIC, &b);
        sink += b.tv_nsec - a.tv_nsec;
    }
}

static void shortname(long n)
{
    for (long i = 0; i < n; i++) {
        push("forward");
        pop();
    }
}

static void longname(long n)
{
    static const char name[] = "model.layers.17.self_attention.query_key_value.forward.kernel";
    for (long i = 0; i < n; i++) {
        push(name);
        pop();
    }
}

static void rotating(long n)
{
    for (long i = 0; i < n; i++) {
        push(names[i % 200]);
        pop();
    }
}

static void nested(long n)
{
    for (long i = 0; i < n; i += 8) {
        for (int d = 0; d < 8; d++)
            push(names[d]);
        for (int d = 0; d < 8; d++)
            pop();
    }
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? atol(argv[1]) : 2000000;
    int reps = argc > 2 ? atoi(argv[2]) : 7;
    static const struct { const char *name; void (*fn)(long); } cases[] = {
        { "raw: two clock_gettime", raw },
        { "push+pop, short name", shortname },
        { "push+pop, 64-byte name", longname },
        { "push+pop, 200 names in turn", rotating },
        { "push+pop, 8 deep", nested },
    };
    enum { NCASES = sizeof cases / sizeof cases[0] };
    double t[NCASES][64];

    push = (push_fn)dlsym(RTLD_DEFAULT, "ktime_range_push");
    pop = (pop_fn)dlsym(RTLD_DEFAULT, "ktime_range_pop");
    if (!push || !pop) {
        fprintf(stderr, "range_cost: no ktime_range_push in the process (preload libktime.so)\n");
        return 1;
    }
    if (reps > 64)
        reps = 64;
    for (int i = 0; i < 200; i++)
        snprintf(names[i], sizeof names[i], "range-%d", i);
    for (int c = 0; c < NCASES; c++) /* first sight of every name: interned before timing */
        cases[c].fn(1000);
    for (int r = 0; r < reps; r++)
        for (int c = 0; c < NCASES; c++) {
            int k = (c + r) % NCASES;
            double t0 = now_ns();
            cases[k].fn(n);
            t[k][r] = (now_ns() - t0) / n;
        }
    printf("KTIME_DISABLE=%s, %ld pairs x %d repetitions, median ns per pair\n",
           getenv("KTIME_DISABLE") ? getenv("KTIME_DISABLE") : "(unset)", n, reps);
    for (int c = 0; c < NCASES; c++) {
        qsort(t[c], (size_t)reps, sizeof t[c][0], cmp);
        printf("%-32s %8.1f\n", cases[c].name, t[c][reps / 2]);
    }
    FILE *f = fopen("/proc/cpuinfo", "r");
    char line[256];
    while (f && fgets(line, sizeof line, f))
        if (strncmp(line, "model name", 10) == 0) {
            printf("cpu: %s", strchr(line, ':') + 2);
            break;
        }
    if (f)
        fclose(f);
    return 0;
}
