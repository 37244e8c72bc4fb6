/* eventcost: what the drain thread's driver calls cost, and what they return before an event
 * has completed. Driver API only; no ktime. Run on the GPU machine:
 *
 *   build/bench/eventcost [PAIRS]        (default 20000)
 *
 * Prints one line per measurement, "name value unit", then the NOT_READY checks:
 *   record_pair_ns      cuEventRecord x2 + cuLaunchKernel of an empty kernel, per launch
 *   query_ns            cuEventQuery on a completed event, per call
 *   elapsed_fresh_ns    cuEventElapsedTime on a completed pair never asked about before
 *   query_fresh_ns      cuEventQuery on such an event
 *   elapsed_ns          cuEventElapsedTime on a completed pair, per call (asked before)
 *   query_busy_ns / elapsed_busy_ns   the same while another thread launches back to back
 *                       into its own stream in the same context (driver lock contention)
 *   elapsed_fresh_busy_ns / query_fresh_busy_ns   first sight of a pair while the other
 *                       thread launches (pairs recorded, then the stream synchronized)
 *   nosync_*            pairs recorded and never synchronized: only the newest stop event is
 *                       polled until it completes, as ktime's drain does; then per pair
 *                       nosync_elapsed       cuEventElapsedTime alone
 *                       nosync_qstop_elapsed cuEventQuery(stop), then cuEventElapsedTime
 *                       nosync_qboth_elapsed cuEventQuery(start), cuEventQuery(stop), elapsed
 *                       idle and *_busy (another thread launching), per pair
 *   *_cpu_ns            thread CPU time per call, next to each wall time
 *   query_pending_ns    cuEventQuery on an event that has not completed, per call
 * Then, with each stream held by cuStreamWaitValue32 on a pinned word (legacy NULL stream and a
 * created stream): what cuEventQuery and cuEventElapsedTime return for a pair behind the wait,
 * and for a pair whose start completed but whose stop did not. Each measurement is the median
 * of 5 repetitions. Exit 0 when it ran, 77 without a GPU, 1 on a CUDA error. */
#define _GNU_SOURCE
#include <cuda.h>

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define REPS 5

static const char PTX[] =
    ".version 8.0\n.target sm_90\n.address_size 64\n"
    ".visible .entry ec_empty() { ret; }\n";

#define CK(call)                                                                          \
    do {                                                                                  \
        CUresult r_ = (call);                                                             \
        if (r_ != CUDA_SUCCESS) {                                                         \
            const char *s_ = "?";                                                         \
            cuGetErrorName(r_, &s_);                                                      \
            fprintf(stderr, "eventcost: %s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_); \
            exit(1);                                                                      \
        }                                                                                 \
    } while (0)

static CUcontext ctx;
static CUfunction fn;
static atomic_int stop_busy;

static double now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, n, sizeof *v, cmp_d);
    return v[n / 2];
}

static void *busy_main(void *arg)
{
    CUstream s;
    long *n = arg;
    CK(cuCtxSetCurrent(ctx));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    while (!atomic_load(&stop_busy)) {
        CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        if ((++*n & 1023) == 0)
            CK(cuStreamSynchronize(s));
    }
    CK(cuStreamSynchronize(s));
    CK(cuStreamDestroy(s));
    return NULL;
}

/* One pass over every pair, what 0 query(stop), 1 elapsed: per-call wall and CPU ns. */
static void pass_ns(int pairs, CUevent *ev, int what, double *wall, double *cpu)
{
    float ms;
    double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < pairs; i++) {
        if (what == 0)
            CK(cuEventQuery(ev[2 * i + 1]));
        else
            CK(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    }
    *wall = (now_ns(CLOCK_MONOTONIC) - w0) / pairs;
    *cpu = (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / pairs;
}

/* Times the call over every pair: per-call wall and CPU ns (medians of REPS passes). */
static void measure(const char *name, int pairs, CUevent *ev, int what)
{
    double wall[REPS], cpu[REPS];
    for (int r = 0; r < REPS; r++)
        pass_ns(pairs, ev, what, &wall[r], &cpu[r]);
    printf("%s_ns %.1f ns\n%s_cpu_ns %.1f ns\n", name, median(wall, REPS), name, median(cpu, REPS));
}

/* Records every pair again on s (one empty kernel in each); with sync, waits for them. */
static void record_pairs(CUstream s, CUevent *ev, int pairs, int sync)
{
    for (int i = 0; i < pairs; i++) {
        CK(cuEventRecord(ev[2 * i], s));
        CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
        CK(cuEventRecord(ev[2 * i + 1], s));
    }
    if (sync)
        CK(cuStreamSynchronize(s));
}

/* One pass over pairs never asked about: per-call wall and CPU ns. what: 0 query, 1 elapsed */
static void measure_fresh(const char *name, int pairs, CUevent *ev, int what)
{
    double wall, cpu;
    pass_ns(pairs, ev, what, &wall, &cpu);
    printf("%s_ns %.1f ns (cpu %.1f ns)\n", name, wall, cpu);
}

/* Records every pair again on s and polls only the newest stop event until it completes (the
 * drain's view: no synchronize), then times one pass per pair: what 0 elapsed alone, 1 query of
 * the stop event first, 2 queries of both events first. */
static void measure_nosync(const char *name, CUstream s, int pairs, CUevent *ev, int what)
{
    float ms;
    record_pairs(s, ev, pairs, 0);
    while (cuEventQuery(ev[2 * pairs - 1]) == CUDA_ERROR_NOT_READY) {
        struct timespec ts = { 0, 100 * 1000 };
        nanosleep(&ts, NULL);
    }
    double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < pairs; i++) {
        if (what == 2)
            CK(cuEventQuery(ev[2 * i]));
        if (what >= 1)
            CK(cuEventQuery(ev[2 * i + 1]));
        CK(cuEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
    }
    printf("%s_ns %.1f ns (cpu %.1f ns) per pair\n", name, (now_ns(CLOCK_MONOTONIC) - w0) / pairs,
           (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / pairs);
}

/* The three nosync variants, each twice (the first may warm something), with a suffix. */
static void nosync_set(const char *suffix, CUstream s, int pairs, CUevent *ev)
{
    static const char *names[] = { "nosync_elapsed", "nosync_qstop_elapsed", "nosync_qboth_elapsed" };
    char name[64];
    for (int round = 0; round < 2; round++)
        for (int w = 0; w < 3; w++) {
            snprintf(name, sizeof name, "%s%s", names[w], suffix);
            measure_nosync(name, s, pairs, ev, w);
        }
}

static const char *errname(CUresult r)
{
    const char *s = "?";
    cuGetErrorName(r, &s);
    return s;
}

static void not_ready_check(const char *label, CUstream s, volatile unsigned *word, CUdeviceptr dword,
                            CUevent *ev)
{
    float ms = -1;
    *word = 0;
    CK(cuEventRecord(ev[0], s));                   /* start completes at once */
    CK(cuStreamSynchronize(s));
    CK(cuStreamWaitValue32(s, dword, 1, CU_STREAM_WAIT_VALUE_GEQ));
    CK(cuEventRecord(ev[1], s));                   /* stop held behind the wait */
    CK(cuEventRecord(ev[2], s));
    CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CK(cuEventRecord(ev[3], s));                   /* a whole pair held behind the wait */
    struct timespec ts = { 0, 20 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    /* What a query of a pending event costs: the drain asks about those on every pass. */
    double w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
    for (int i = 0; i < 10000; i++)
        (void)cuEventQuery(ev[3]);
    printf("query_pending_ns[%s] %.1f ns (cpu %.1f ns)\n", label,
           (now_ns(CLOCK_MONOTONIC) - w0) / 10000, (now_ns(CLOCK_THREAD_CPUTIME_ID) - c0) / 10000);
    CUresult q = cuEventQuery(ev[3]);
    CUresult e1 = cuEventElapsedTime(&ms, ev[0], ev[1]);
    CUresult e2 = cuEventElapsedTime(&ms, ev[2], ev[3]);
    printf("not_ready[%s] query(stop)=%s elapsed(done start, pending stop)=%s "
           "elapsed(pending pair)=%s\n", label, errname(q), errname(e1), errname(e2));
    *word = 1;
    CK(cuStreamSynchronize(s));
    CUresult e3 = cuEventElapsedTime(&ms, ev[2], ev[3]);
    printf("after_release[%s] elapsed=%s %.4f ms\n", label, errname(e3), ms);
}

int main(int argc, char **argv)
{
    int pairs = argc > 1 ? atoi(argv[1]) : 20000;
    CUdevice dev;
    CUmodule mod;
    CUstream s;
    int n;
    if (pairs < 100)
        pairs = 100;
    if (cuInit(0) != CUDA_SUCCESS || cuDeviceGetCount(&n) != CUDA_SUCCESS || n < 1) {
        fprintf(stderr, "eventcost: no GPU\n");
        return 77;
    }
    CK(cuDeviceGet(&dev, 0));
    CK(cuDevicePrimaryCtxRetain(&ctx, dev));
    CK(cuCtxSetCurrent(ctx));
    CK(cuModuleLoadData(&mod, PTX));
    CK(cuModuleGetFunction(&fn, mod, "ec_empty"));
    CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));

    CUevent *ev = malloc(sizeof *ev * 2 * (size_t)pairs);
    if (!ev)
        return 1;
    for (int i = 0; i < 2 * pairs; i++)
        CK(cuEventCreate(&ev[i], CU_EVENT_DEFAULT));
    /* Warm the path, then time the launches themselves. */
    for (int i = 0; i < 1000; i++)
        CK(cuLaunchKernel(fn, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL));
    CK(cuStreamSynchronize(s));
    double w0 = now_ns(CLOCK_MONOTONIC);
    record_pairs(s, ev, pairs, 0);
    printf("record_pair_ns %.1f ns\n", (now_ns(CLOCK_MONOTONIC) - w0) / pairs);
    CK(cuStreamSynchronize(s));

    /* First sight of each completed pair, as the drain has it: one rep over fresh pairs. */
    measure_fresh("elapsed_fresh", pairs, ev, 1);
    measure("query", pairs, ev, 0);
    measure("elapsed", pairs, ev, 1);
    /* The same pairs recorded again, then queried first. */
    record_pairs(s, ev, pairs, 1);
    measure_fresh("query_fresh", pairs, ev, 0);
    nosync_set("", s, pairs, ev);

    pthread_t t;
    long launched = 0;
    atomic_store(&stop_busy, 0);
    pthread_create(&t, NULL, busy_main, &launched);
    struct timespec ts = { 0, 50 * 1000 * 1000 };
    nanosleep(&ts, NULL);
    record_pairs(s, ev, pairs, 1);
    measure_fresh("elapsed_fresh_busy", pairs, ev, 1);
    record_pairs(s, ev, pairs, 1);
    measure_fresh("query_fresh_busy", pairs, ev, 0);
    nosync_set("_busy", s, pairs, ev);
    measure("query_busy", pairs, ev, 0);
    measure("elapsed_busy", pairs, ev, 1);
    atomic_store(&stop_busy, 1);
    pthread_join(t, NULL);
    printf("busy_thread_launches %ld\n", launched);

    unsigned *word;
    CUdeviceptr dword;
    CK(cuMemHostAlloc((void **)&word, 4096, CU_MEMHOSTALLOC_DEVICEMAP | CU_MEMHOSTALLOC_PORTABLE));
    CK(cuMemHostGetDevicePointer(&dword, word, 0));
    not_ready_check("created stream", s, word, dword, ev);
    not_ready_check("legacy NULL stream", NULL, word, dword, ev + 4);
    return 0;
}
