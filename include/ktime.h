/* ktime.h - the public interface of libktime.
 *
 * ktime needs no code in the program it measures: LD_PRELOAD=libktime.so ./app.
 * This header is for programs that want to know whether ktime is loaded, and for programs
 * that time parts of themselves with its CPU and GPU timers. Build and link with
 *     cc app.c $(pkg-config --cflags --libs ktime)      (or -I<prefix>/include -lktime)
 * The header needs no CUDA headers; libktime needs no CUDA library at link time: it uses the
 * CUDA driver (libcuda) the process has loaded, whether libktime is preloaded or linked.
 *
 * Conventions of the timer API:
 *  - Every call returns KTIME_OK (0), KTIME_NOT_READY (1, not an error), or a negative
 *    KTIME_ERR_* code; ktime_strerror() names them. A result (an elapsed time, a new timer)
 *    is written through its pointer only when the call returns KTIME_OK: an error never
 *    reads as a time of 0.
 *  - Units: elapsed times are milliseconds (the _ms calls) or microseconds (the _us call),
 *    as floating point.
 *  - Threads: a timer is used by one thread at a time (the caller serializes calls on one
 *    timer; a timer may move between threads). Different timers may be used from different
 *    threads at once. No call takes a lock, nor leaves anything behind in the thread.
 *  - Nothing here writes to stdout or stderr, nor ends the process.
 */
#ifndef KTIME_H
#define KTIME_H

#ifdef __cplusplus
extern "C" {
#endif

/* The version of the loaded libktime, e.g. "0.1.0". Call it through
 * dlsym(RTLD_DEFAULT, "ktime_version") to test whether ktime is preloaded. */
const char *ktime_version(void);

/* ---- results ----------------------------------------------------------------------- */

#define KTIME_OK 0
#define KTIME_NOT_READY 1          /* the GPU has not yet reached the timer's stop event */
#define KTIME_ERR_INVALID (-1)     /* a NULL timer or result pointer; a stream of another context */
#define KTIME_ERR_STATE (-2)       /* out of order: stop before start, elapsed before stop */
#define KTIME_ERR_NO_DRIVER (-3)   /* no CUDA driver loaded in the process, or it lacks an entry point */
#define KTIME_ERR_NO_CONTEXT (-4)  /* no CUDA context current in the calling thread at create */
#define KTIME_ERR_CUDA (-5)        /* the driver refused a call: ktime_gpu_timer_cuda_error() says how */
#define KTIME_ERR_NO_MEMORY (-6)   /* out of host memory */
#define KTIME_ERR_CAPTURE (-7)     /* the stream is being captured into a CUDA graph: nothing to time */

/* A short English description of a result code ("no CUDA context is current", ...); a
 * static string, also for unknown codes. Any thread. */
const char *ktime_strerror(int code);

/* ---- CPU timer: wall-clock time on the host ------------------------------------------
 *
 * A plain struct: declare one (zeroed: KTIME_CPU_TIMER_INIT, or memset, or static storage),
 * no create or destroy. It reads CLOCK_MONOTONIC (nanosecond resolution; not moved by
 * changes of the system's date and time, NTP steps included).
 *
 *     ktime_cpu_timer t = KTIME_CPU_TIMER_INIT;
 *     double ms;
 *     ktime_cpu_timer_start(&t);
 *     work();
 *     ktime_cpu_timer_stop(&t);
 *     if (ktime_cpu_timer_elapsed_ms(&t, &ms) == KTIME_OK) printf("%.3f ms\n", ms);
 *
 * start begins (or restarts) a measurement. stop ends it and freezes the value: elapsed then
 * returns the time from start to stop, however late it is asked and however often. While the
 * timer runs (started, not stopped), elapsed returns the time from start to now. */
typedef struct ktime_cpu_timer {
    long long start_ns; /* CLOCK_MONOTONIC at start */
    long long stop_ns;  /* CLOCK_MONOTONIC at stop */
    int state;          /* 0 never started, 1 running, 2 stopped */
} ktime_cpu_timer;

#define KTIME_CPU_TIMER_INIT { 0, 0, 0 }

/* Starts t (again, if it ran or was stopped). KTIME_ERR_INVALID for NULL. */
int ktime_cpu_timer_start(ktime_cpu_timer *t);

/* Stops t, freezing its elapsed time. KTIME_ERR_STATE when t is not running (never started,
 * or already stopped: the first stop's value is kept). KTIME_ERR_INVALID for NULL. */
int ktime_cpu_timer_stop(ktime_cpu_timer *t);

/* Writes t's elapsed time to *ms (milliseconds) or *us (microseconds): start to stop once
 * stopped, start to now while running. KTIME_ERR_STATE for a timer never started,
 * KTIME_ERR_INVALID for NULL. For a stopped timer, *us is 1000 times *ms (both come from
 * the same count of nanoseconds). */
int ktime_cpu_timer_elapsed_ms(const ktime_cpu_timer *t, double *ms);
int ktime_cpu_timer_elapsed_us(const ktime_cpu_timer *t, double *us);

/* ---- GPU timer: GPU time between two points of a CUDA stream ------------------------
 *
 * A pair of CUDA events: start records the first on the timer's stream, stop the second,
 * and elapsed is the GPU time between the two, as cuEventElapsedTime / cudaEventElapsedTime
 * gives it: milliseconds, with a resolution of about 0.5 microseconds. It covers whatever
 * the stream ran between the two points, and on a stream that was idle when start was
 * recorded, also the time the CPU took to submit that work. An event interval around one
 * kernel is a few microseconds longer than the kernel itself (the grid launch latency).
 *
 *     ktime_gpu_timer *t;
 *     float ms;
 *     cudaFree(0);                            // a context must be current: any CUDA call
 *     if (ktime_gpu_timer_create(&t, stream) != KTIME_OK) ...
 *     ktime_gpu_timer_start(t);
 *     kernel<<<grid, block, 0, stream>>>(...);
 *     ktime_gpu_timer_stop(t);
 *     int rc = ktime_gpu_timer_elapsed_ms(t, &ms, 1);   // 1: wait for the stop event
 *     if (rc == KTIME_OK) printf("%.3f ms\n", ms); else puts(ktime_strerror(rc));
 *     ktime_gpu_timer_destroy(t);
 *
 * Under ktime (LD_PRELOAD, or linked with -lktime, and KTIME_DISABLE set or not) the timer's
 * events are ktime's own calls: they are not launches, and nothing in ktime's report counts
 * them. NOTE: linking with -lktime puts ktime itself in the process, timing every launch and
 * writing its report at exit, unless KTIME_DISABLE=1; while it times launches, its own events
 * (and launch gates) around each launch are inside this timer's interval. */
typedef struct ktime_gpu_timer ktime_gpu_timer;

/* Creates a timer on `stream`, a CUstream / cudaStream_t: NULL is the legacy default
 * stream (also in programs built with --default-stream per-thread: pass
 * cudaStreamPerThread / CU_STREAM_PER_THREAD for the per-thread stream). The timer belongs
 * to the CUDA context current in the calling thread (its events are made there); the stream
 * must be of that context. Writes the new timer to *t.
 * Errors: KTIME_ERR_INVALID (t NULL, or a stream of another context), KTIME_ERR_NO_DRIVER,
 * KTIME_ERR_NO_CONTEXT (make any CUDA call first: with the runtime, cudaFree(0)),
 * KTIME_ERR_CUDA, KTIME_ERR_NO_MEMORY. */
int ktime_gpu_timer_create(ktime_gpu_timer **t, void *stream);

/* Records the start event on the timer's stream (again, if it ran or was stopped). Does not
 * wait. KTIME_ERR_CAPTURE when the stream is being captured into a graph (the timer stays
 * as it was before, not running); KTIME_ERR_CUDA when the driver refuses. */
int ktime_gpu_timer_start(ktime_gpu_timer *t);

/* Records the stop event on the timer's stream. Does not wait. KTIME_ERR_STATE when t is not
 * running (never started, a start that failed, or already stopped: the first stop's interval
 * is kept); KTIME_ERR_CAPTURE when the stream is being captured, KTIME_ERR_CUDA when the
 * driver refuses: after these two the timer is not running, and has no interval (start it
 * again). */
int ktime_gpu_timer_stop(ktime_gpu_timer *t);

/* Writes the GPU time between t's start and stop events to *ms, in milliseconds. With wait
 * nonzero it waits until the GPU has passed the stop event (cuEventSynchronize); with wait 0
 * it returns KTIME_NOT_READY, *ms untouched, while the GPU has not. Once read, the value is
 * kept: later calls return it again until the next start. KTIME_ERR_STATE before stop;
 * KTIME_ERR_CUDA when the driver fails (e.g. a kernel in between faulted, or the context was
 * destroyed). */
int ktime_gpu_timer_elapsed_ms(ktime_gpu_timer *t, float *ms, int wait);

/* The CUresult of the last driver call of t that failed (0, CUDA_SUCCESS, if none did): what
 * lies behind a KTIME_ERR_CUDA. 0 for NULL. */
int ktime_gpu_timer_cuda_error(const ktime_gpu_timer *t);

/* Destroys t's events and frees it. NULL is allowed (KTIME_OK). The events are destroyed even
 * if the GPU has not reached them yet (CUDA defers it). KTIME_ERR_CUDA when the driver fails
 * to destroy them (their context was destroyed before): t is freed all the same. */
int ktime_gpu_timer_destroy(ktime_gpu_timer *t);

/* ---- ranges: the program's own phases ----
 *
 * ktime_range_push(name) opens a range on the calling thread, ktime_range_pop() closes the
 * innermost one it has open, as nvtxRangePushA/nvtxRangePop do (and NVTX ranges reach the same
 * stack when ktime is NVTX's tool: the ktime launcher, or KTIME_NVTX=1). Each timed launch is
 * attributed to the innermost range open on its thread (KTIME_RANGES=outermost: the outermost),
 * and the report has a section per range: its kernels with their timed samples, how many times
 * it was closed and its wall-clock time. name is copied the first time it is seen (NULL:
 * "(unnamed)"). Thread-safe; each thread has its own stack, 64 deep (deeper ranges are counted,
 * not attributed). When ktime is not timing (not preloaded, or KTIME_DISABLE=1) both return
 * at once, after one load. */
void ktime_range_push(const char *name);
void ktime_range_pop(void);

#ifdef __cplusplus
}
#endif

#endif
