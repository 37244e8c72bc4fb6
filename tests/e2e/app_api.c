/* app_api.c - the timer API of include/ktime.h against its contract, linked with -lktime and
 * the fake driver (-lcuda), run by api.sh with and without libktime preloaded and with
 * KTIME_DISABLE=1. Prints "ok - ..." / "not ok - ..." lines (selfcheck.h), which api.sh
 * numbers, and exits 1 if any failed.
 *
 * usage: app_api cpu     the CPU timer: errors, running value, stop freezes, us = 1000 ms
 *        app_api gpu     the GPU timer on the fake driver, whose kernels take known time:
 *                        exact intervals on created, legacy and per-thread streams, errors,
 *                        not ready, capture, a destroyed context. Its last line is
 *                        "api_event_records N": the cuEventRecord calls the timers made
 *                        (api.sh checks the fake's count against ktime's own).
 * Kernels launched by `gpu`: api_k (250 us), api_j (125 us), api_other (1000 us, on a stream
 * no timer is on), hang_api (never ends, on a stream of its own), api_ctx (in a context that
 * is destroyed); api.sh compares ktime's report with the fake's count file.
 */
#include <cuda.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "ktime.h"
#include "selfcheck.h"

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Spins until CLOCK_MONOTONIC has moved on by at least ns (no sleep, no timed assertion:
 * only so that a later reading differs from an earlier one). */
static void spin_ns(long long ns)
{
    long long t0 = now_ns();
    while (now_ns() - t0 < ns) {
    }
}

static int cpu(void)
{
    ktime_cpu_timer t = KTIME_CPU_TIMER_INIT, z;
    double ms = -7.0, us = -7.0, a, b, c;
    long long before, inner0, inner1, after;

    memset(&z, 0, sizeof z); /* the other way to make a timer that never started */
    check(t.start_ns == 0 && t.stop_ns == 0 && t.state == 0, "cpu: KTIME_CPU_TIMER_INIT is zero", "it is not");
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&z, &ms), KTIME_ERR_STATE, "cpu: a zeroed timer has not started");
    CHECK_RC(ktime_cpu_timer_start(NULL), KTIME_ERR_INVALID, "cpu: start(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_cpu_timer_stop(NULL), KTIME_ERR_INVALID, "cpu: stop(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_cpu_timer_elapsed_ms(NULL, &ms), KTIME_ERR_INVALID, "cpu: elapsed_ms(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&t, NULL), KTIME_ERR_INVALID, "cpu: elapsed_ms(t, NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_cpu_timer_elapsed_us(&t, NULL), KTIME_ERR_INVALID, "cpu: elapsed_us(t, NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&t, &ms), KTIME_ERR_STATE, "cpu: elapsed_ms of a timer never started is KTIME_ERR_STATE");
    CHECK_RC(ktime_cpu_timer_elapsed_us(&t, &us), KTIME_ERR_STATE, "cpu: elapsed_us of a timer never started is KTIME_ERR_STATE");
    check(ms == -7.0 && us == -7.0, "cpu: an error writes no elapsed value", "ms %g us %g", ms, us);
    CHECK_RC(ktime_cpu_timer_stop(&t), KTIME_ERR_STATE, "cpu: stop of a timer never started is KTIME_ERR_STATE");

    /* Running: the time so far, never decreasing. */
    before = now_ns();
    CHECK_RC(ktime_cpu_timer_start(&t), KTIME_OK, "cpu: start");
    inner0 = now_ns();
    spin_ns(2000000);
    inner1 = now_ns();
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&t, &a), KTIME_OK, "cpu: elapsed_ms while running is KTIME_OK");
    spin_ns(1000);
    ktime_cpu_timer_elapsed_ms(&t, &b);
    check(a >= (inner1 - inner0) / 1e6, "cpu: elapsed while running covers the work done since start",
          "elapsed %.6f ms, the work took %.6f ms", a, (inner1 - inner0) / 1e6);
    check(b > a, "cpu: elapsed while running goes on growing (monotonic clock)", "%.9f then %.9f", a, b);

    /* Stop freezes. */
    CHECK_RC(ktime_cpu_timer_stop(&t), KTIME_OK, "cpu: stop");
    after = now_ns();
    CHECK_RC(ktime_cpu_timer_elapsed_ms(&t, &ms), KTIME_OK, "cpu: elapsed_ms after stop");
    CHECK_RC(ktime_cpu_timer_elapsed_us(&t, &us), KTIME_OK, "cpu: elapsed_us after stop");
    check(ms >= b && ms <= (after - before) / 1e6,
          "cpu: the stopped value lies between the last running value and the whole span around start and stop",
          "running %.9f, stopped %.9f, span %.9f ms", b, ms, (after - before) / 1e6);
    check(fabs(us - 1000.0 * ms) <= 1e-9 * us, "cpu: elapsed_us is 1000 x elapsed_ms", "us %.9f ms %.9f", us, ms);
    spin_ns(2000000);
    ktime_cpu_timer_elapsed_ms(&t, &c);
    check(c == ms, "cpu: after stop the value is frozen, however late it is read", "%.9f then %.9f", ms, c);
    CHECK_RC(ktime_cpu_timer_stop(&t), KTIME_ERR_STATE, "cpu: a second stop is KTIME_ERR_STATE");
    ktime_cpu_timer_elapsed_ms(&t, &c);
    check(c == ms, "cpu: a second stop keeps the first stop's value", "%.9f then %.9f", ms, c);

    /* Restart. */
    CHECK_RC(ktime_cpu_timer_start(&t), KTIME_OK, "cpu: start again after stop");
    CHECK_RC(ktime_cpu_timer_stop(&t), KTIME_OK, "cpu: stop again");
    ktime_cpu_timer_elapsed_ms(&t, &c);
    check(c >= 0 && c < ms, "cpu: a restarted timer measures from the new start",
          "new %.9f ms, old %.9f ms", c, ms);
    return g_fail;
}

/* ---- GPU ---- */

static CUfunction fk, fj, fother, fhang;
static long records; /* cuEventRecord calls made by the timers: one per start or stop past its
                      * argument and state checks, whatever the driver then answers */

static CUresult launch(CUfunction f, CUstream s)
{
    return cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, s, NULL, NULL);
}

static int counted(int rc)
{
    if (rc != KTIME_ERR_INVALID && rc != KTIME_ERR_STATE)
        records++;
    return rc;
}

static int start(ktime_gpu_timer *t)
{
    return counted(ktime_gpu_timer_start(t));
}

static int stop(ktime_gpu_timer *t)
{
    return counted(ktime_gpu_timer_stop(t));
}

/* start, n launches of f on s, stop; the elapsed value (wait), or -1 with a failed check. */
static float timed(ktime_gpu_timer *t, CUfunction f, int n, CUstream s, const char *what)
{
    float ms = -1.0f;
    int rc;

    if (start(t) != KTIME_OK) {
        check(0, what, "start failed");
        return -1.0f;
    }
    for (int i = 0; i < n; i++)
        launch(f, s);
    if (stop(t) != KTIME_OK) {
        check(0, what, "stop failed");
        return -1.0f;
    }
    rc = ktime_gpu_timer_elapsed_ms(t, &ms, 1);
    if (rc != KTIME_OK) {
        check(0, what, "elapsed returned %d (%s), CUresult %d", rc, ktime_strerror(rc),
              ktime_gpu_timer_cuda_error(t));
        return -1.0f;
    }
    return ms;
}

static int gpu(void)
{
    ktime_gpu_timer *t = NULL, *sentinel = (ktime_gpu_timer *)&records;
    CUdevice dev;
    CUcontext ctx, ctx2;
    CUmodule mod;
    CUstream s, s2, cs, sx;
    CUgraph g;
    float ms = -7.0f, ms2;
    int rc;

    /* Before cuInit: the driver is loaded, no context exists. */
    t = sentinel;
    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_ERR_NO_CONTEXT, "gpu: create before cuInit is KTIME_ERR_NO_CONTEXT");
    check(t == sentinel, "gpu: a failed create writes no timer", "*t was written");
    if (cuInit(0) || cuDeviceGet(&dev, 0) || cuDevicePrimaryCtxRetain(&ctx, dev)) {
        check(0, "gpu: driver set-up", "cuInit/cuDeviceGet/cuDevicePrimaryCtxRetain failed");
        return 1;
    }
    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_ERR_NO_CONTEXT, "gpu: create with no current context is KTIME_ERR_NO_CONTEXT");
    if (cuCtxSetCurrent(ctx) ||
        cuModuleLoadData(&mod, "api_k=250000;api_j=125000;api_other=1000000;hang_api=125000") ||
        cuModuleGetFunction(&fk, mod, "api_k") || cuModuleGetFunction(&fj, mod, "api_j") ||
        cuModuleGetFunction(&fother, mod, "api_other") || cuModuleGetFunction(&fhang, mod, "hang_api") ||
        cuStreamCreate(&s, 0) || cuStreamCreate(&s2, 0) || cuStreamCreate(&cs, 0) || cuStreamCreate(&sx, 0)) {
        check(0, "gpu: driver set-up", "context, module or streams failed");
        return 1;
    }
    CHECK_RC(ktime_gpu_timer_create(NULL, s), KTIME_ERR_INVALID, "gpu: create(NULL, s) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_gpu_timer_create(&t, s), KTIME_OK, "gpu: create on a created stream");

    /* Out of order, NULL. */
    CHECK_RC(ktime_gpu_timer_start(NULL), KTIME_ERR_INVALID, "gpu: start(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_gpu_timer_stop(NULL), KTIME_ERR_INVALID, "gpu: stop(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(NULL, &ms, 1), KTIME_ERR_INVALID, "gpu: elapsed(NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, NULL, 1), KTIME_ERR_INVALID, "gpu: elapsed(t, NULL) is KTIME_ERR_INVALID");
    CHECK_RC(ktime_gpu_timer_stop(t), KTIME_ERR_STATE, "gpu: stop before start is KTIME_ERR_STATE");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms, 1), KTIME_ERR_STATE, "gpu: elapsed before start is KTIME_ERR_STATE");
    CHECK_RC(start(t), KTIME_OK, "gpu: start");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms, 1), KTIME_ERR_STATE, "gpu: elapsed before stop is KTIME_ERR_STATE");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms, 0), KTIME_ERR_STATE, "gpu: elapsed (no wait) before stop is KTIME_ERR_STATE");
    check(ms == -7.0f, "gpu: errors write no elapsed value", "ms became %g", ms);

    /* Exact intervals: what ran on the timer's stream between start and stop, in ms. */
    launch(fk, s);
    launch(fk, s);
    launch(fk, s);
    launch(fother, s2); /* another stream: not in the interval */
    CHECK_RC(stop(t), KTIME_OK, "gpu: stop");
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms, 1), KTIME_OK, "gpu: elapsed after stop");
    check(ms == 0.75f, "gpu: elapsed is the 3 kernels of 250 us on the timer's stream: 0.75 ms (not 750, not 0)",
          "got %.9g ms", ms);
    ms2 = -1.0f;
    CHECK_RC(ktime_gpu_timer_elapsed_ms(t, &ms2, 0), KTIME_OK, "gpu: elapsed again, without waiting");
    check(ms2 == ms, "gpu: elapsed again gives the same value", "%.9g then %.9g", ms, ms2);
    CHECK_RC(stop(t), KTIME_ERR_STATE, "gpu: a second stop is KTIME_ERR_STATE");
    ms2 = -1.0f;
    ktime_gpu_timer_elapsed_ms(t, &ms2, 1);
    check(ms2 == ms, "gpu: a refused second stop keeps the first stop's value", "%.9g then %.9g", ms, ms2);
    ms = timed(t, fj, 4, s, "gpu: restarted");
    check(ms == 0.5f, "gpu: a restarted timer measures from the new start (4 x 125 us = 0.5 ms)", "got %.9g ms", ms);
    ms = timed(t, fj, 0, s, "gpu: nothing between start and stop");
    check(ms == 0.0f, "gpu: nothing between start and stop is 0 ms, and KTIME_OK", "got %.9g ms", ms);

    /* Without waiting: a kernel that never ends (the fake's hang*) leaves the stop event
     * pending for good, on a stream of its own. */
    {
        ktime_gpu_timer *h;
        CHECK_RC(ktime_gpu_timer_create(&h, sx), KTIME_OK, "gpu: create on a second stream");
        start(h);
        launch(fhang, sx);
        stop(h);
        ms = -7.0f;
        CHECK_RC(ktime_gpu_timer_elapsed_ms(h, &ms, 0), KTIME_NOT_READY,
                 "gpu: elapsed without waiting while the stop event is pending is KTIME_NOT_READY");
        CHECK_RC(ktime_gpu_timer_elapsed_ms(h, &ms, 0), KTIME_NOT_READY, "gpu: ... and again");
        check(ms == -7.0f, "gpu: KTIME_NOT_READY writes no value", "ms became %g", ms);
        rc = ktime_gpu_timer_elapsed_ms(h, &ms, 1);
        check(rc == KTIME_ERR_CUDA && ktime_gpu_timer_cuda_error(h) == CUDA_ERROR_LAUNCH_TIMEOUT && ms == -7.0f,
              "gpu: waiting on a kernel that the driver reports as timed out is KTIME_ERR_CUDA, with its CUresult",
              "rc %d cuda_error %d ms %g", rc, ktime_gpu_timer_cuda_error(h), ms);
        CHECK_RC(ktime_gpu_timer_destroy(h), KTIME_OK, "gpu: destroy a timer whose events are pending");
    }

    /* Polling until ready gives the exact value (with FAKECUDA_COMPLETE_DELAY_US the first
     * polls are not ready). */
    start(t);
    launch(fk, s);
    launch(fj, s);
    stop(t);
    while ((rc = ktime_gpu_timer_elapsed_ms(t, &ms, 0)) == KTIME_NOT_READY) {
    }
    check(rc == KTIME_OK && ms == 0.375f, "gpu: polling without waiting ends in KTIME_OK and the exact 0.375 ms",
          "rc %d ms %.9g", rc, ms);
    ktime_gpu_timer_destroy(t);

    /* The legacy stream (NULL) and the per-thread stream. */
    CHECK_RC(ktime_gpu_timer_create(&t, NULL), KTIME_OK, "gpu: create on the legacy stream (NULL)");
    ms = timed(t, fk, 2, NULL, "gpu: legacy stream");
    check(ms == 0.5f, "gpu: the legacy stream's timer: 2 x 250 us = 0.5 ms", "got %.9g ms", ms);
    ktime_gpu_timer_destroy(t);
    CHECK_RC(ktime_gpu_timer_create(&t, CU_STREAM_PER_THREAD), KTIME_OK, "gpu: create on CU_STREAM_PER_THREAD");
    ms = timed(t, fk, 4, CU_STREAM_PER_THREAD, "gpu: per-thread stream");
    check(ms == 1.0f, "gpu: the per-thread stream's timer: 4 x 250 us = 1 ms", "got %.9g ms", ms);
    ktime_gpu_timer_destroy(t);

    /* Many intervals, each exact: the timer's events and ktime's own do not mix. */
    CHECK_RC(ktime_gpu_timer_create(&t, s), KTIME_OK, "gpu: create for a loop");
    rc = 0;
    for (int i = 0; i < 10; i++) {
        ms = timed(t, fk, 1, s, "gpu: loop");
        if (ms != 0.25f)
            rc++;
        ms = timed(t, fj, 1, s, "gpu: loop");
        if (ms != 0.125f)
            rc++;
    }
    check(rc == 0, "gpu: 20 intervals in a loop, each exactly its kernel", "%d were not", rc);

    /* Graph capture: a timer refuses to record into a capture, and leaves it intact. */
    {
        ktime_gpu_timer *c;
        CUresult er;
        CHECK_RC(ktime_gpu_timer_create(&c, cs), KTIME_OK, "gpu: create on a stream to capture");
        cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        CHECK_RC(start(c), KTIME_ERR_CAPTURE, "gpu: start on a capturing stream is KTIME_ERR_CAPTURE");
        CHECK_RC(stop(c), KTIME_ERR_STATE, "gpu: ... and the timer does not run");
        er = cuStreamEndCapture(cs, &g);
        check(er == CUDA_SUCCESS, "gpu: the capture ends well", "cuStreamEndCapture returned %d", (int)er);
        start(c);
        cuStreamBeginCapture(cs, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL);
        CHECK_RC(stop(c), KTIME_ERR_CAPTURE, "gpu: stop on a stream that began capturing after start is KTIME_ERR_CAPTURE");
        CHECK_RC(ktime_gpu_timer_elapsed_ms(c, &ms, 1), KTIME_ERR_STATE, "gpu: ... and elapsed then is KTIME_ERR_STATE (no wait on the capture)");
        er = cuStreamEndCapture(cs, &g);
        check(er == CUDA_SUCCESS, "gpu: that capture ends well too", "cuStreamEndCapture returned %d", (int)er);
        ms = timed(c, fj, 2, cs, "gpu: after capture");
        check(ms == 0.25f, "gpu: after the capture the timer works: 2 x 125 us = 0.25 ms", "got %.9g ms", ms);
        ktime_gpu_timer_destroy(c);
    }

    /* A stream of another context; a timer whose context is destroyed. */
    {
        ktime_gpu_timer *c = sentinel;
        CUstream s3;
        CUmodule m3;
        CUfunction f3;
        CUresult er;
        if (cuCtxCreate(&ctx2, NULL, 0, dev) || cuStreamCreate(&s3, 0) ||
            cuModuleLoadData(&m3, "api_ctx=125000") || cuModuleGetFunction(&f3, m3, "api_ctx")) {
            check(0, "gpu: second context", "set-up failed");
            return 1;
        }
        cuCtxSetCurrent(ctx);
        CHECK_RC(ktime_gpu_timer_create(&c, s3), KTIME_ERR_INVALID,
                 "gpu: create on a stream of another context than the current one is KTIME_ERR_INVALID");
        check(c == sentinel, "gpu: ... and writes no timer", "*t was written");
        cuCtxSetCurrent(ctx2);
        CHECK_RC(ktime_gpu_timer_create(&c, s3), KTIME_OK, "gpu: create in a created context");
        start(c);
        launch(f3, s3);
        stop(c);
        cuCtxSetCurrent(ctx);
        er = cuCtxDestroy(ctx2);
        ms = -7.0f;
        rc = ktime_gpu_timer_elapsed_ms(c, &ms, 1);
        check(er == CUDA_SUCCESS && rc == KTIME_ERR_CUDA &&
                  ktime_gpu_timer_cuda_error(c) == CUDA_ERROR_CONTEXT_IS_DESTROYED && ms == -7.0f,
              "gpu: elapsed after the timer's context was destroyed is KTIME_ERR_CUDA (709), no value",
              "destroy %d, rc %d, cuda_error %d, ms %g", (int)er, rc, ktime_gpu_timer_cuda_error(c), ms);
        rc = ktime_gpu_timer_destroy(c);
        check(rc == KTIME_OK || rc == KTIME_ERR_CUDA, "gpu: destroy after the context is gone returns",
              "rc %d", rc);
    }

    /* Results and messages. */
    CHECK_RC(ktime_gpu_timer_destroy(NULL), KTIME_OK, "gpu: destroy(NULL) is KTIME_OK");
    CHECK_RC(ktime_gpu_timer_cuda_error(NULL), 0, "gpu: cuda_error(NULL) is 0");
    {
        static const int codes[] = { KTIME_OK, KTIME_NOT_READY, KTIME_ERR_INVALID, KTIME_ERR_STATE,
                                     KTIME_ERR_NO_DRIVER, KTIME_ERR_NO_CONTEXT, KTIME_ERR_CUDA,
                                     KTIME_ERR_NO_MEMORY, KTIME_ERR_CAPTURE };
        const int n = (int)(sizeof codes / sizeof codes[0]);
        int distinct = 1;
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++)
                if (!ktime_strerror(codes[i]) || !*ktime_strerror(codes[i]) ||
                    (i != j && strcmp(ktime_strerror(codes[i]), ktime_strerror(codes[j])) == 0))
                    distinct = 0;
        check(distinct, "gpu: ktime_strerror has a distinct message for every code", "it has not");
        check(ktime_strerror(12345) && *ktime_strerror(12345), "gpu: ktime_strerror of an unknown code is a message",
              "it is not");
    }
    ktime_gpu_timer_destroy(t);
    cuCtxSynchronize();
    printf("api_event_records %ld\n", records);
    return g_fail;
}

int main(int argc, char **argv)
{
    if (argc == 2 && !strcmp(argv[1], "cpu"))
        return cpu();
    if (argc == 2 && !strcmp(argv[1], "gpu"))
        return gpu();
    fprintf(stderr, "usage: app_api cpu|gpu\n");
    return 2;
}
