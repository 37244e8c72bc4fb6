/* fakedrv.h - an in-process fake CUDA driver for the unit tests of the CUDA-facing code: it
 * fills ktime's driver table (drv, driver.h) with functions that simulate contexts, streams,
 * events, launch gates, memsets and kernel names on a clock the test drives, and counts every
 * call. No libcuda is loaded: the code under test calls drv.* and gets the fake.
 *
 * The simulated GPU. Each stream is a queue of work (a gate wait, an event record, a kernel
 * or memset of a known length) that the GPU runs in order, at once, as far as it can:
 *  - a gate wait (cuStreamWaitValue32, EQ) holds the stream until the word holds the value;
 *  - fd_hold() holds a stream as a busy GPU would (nothing on it runs) until fd_release();
 *  - the host has a clock too (fd_host_ns): fd_run() advances it by FD_SUBMIT_NS, the CPU's
 *    time to submit a launch, before the kernel is queued. Work starts no earlier than the
 *    host time it was queued (or the gate opened) at, and a kernel of ns takes ns. So an
 *    event pair around a kernel on a stream the GPU reaches at once (idle, ungated) measures
 *    FD_SUBMIT_NS + ns; held behind a gate or a busy GPU, exactly ns.
 * So the GPU falls behind the host where kernels take longer than their submission, and
 * catches up when the host waits (fd_sync) or does other work (fd_advance). An event is
 * complete once its record has run no later than the host's time; one never recorded is
 * complete too (as in CUDA). Events of a destroyed context answer
 * CUDA_ERROR_CONTEXT_IS_DESTROYED. Gates ktime opens are seen at the host time they were
 * opened: the host clock moves only in the fake's calls, each of which runs what it can
 * first.
 *
 * Handles: contexts and streams are numbers that are never reused across fd_reset() (ktime
 * keeps per-thread caches keyed by them); events, kernels, graphs and host memory are the
 * fake's own objects, freed by fd_reset() and fd_free(). Special streams (NULL,
 * CU_STREAM_LEGACY, CU_STREAM_PER_THREAD) are the current context's.
 *
 * Threads: one mutex guards the fake (ktime's drain thread may call it); the current context
 * and the capture mode are per thread, as in CUDA. */
#ifndef KTIME_FAKEDRV_H
#define KTIME_FAKEDRV_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda.h>

#include "driver.h"

/* The host's time to submit a launch, in simulated ns (fd_run). Times in the tests are
 * multiples of 125000 ns: exact in float milliseconds and in microseconds. */
#define FD_SUBMIT_NS 125000u
/* What a memset (the L2 flush: cuMemsetD32Async) takes on its stream. */
#define FD_MEMSET_NS 375000u
/* What a kernel launched with cuLaunchKernel (the timing floor's) takes: 2^-6 ms. */
#define FD_FLOOR_NS 15625u
/* The L2 size the fake's devices report. */
#define FD_L2_BYTES (50u << 20)

/* One index per driver function of driver.h: FD_EventRecord, FD_StreamWaitValue32, ... */
enum fd_fn {
#define X(field, sym, ver, required) FD_##field,
    DRIVER_FUNCTIONS(X)
#undef X
    FD_NFN
};

/* Starts a fresh fake (every object of the last one freed, every count 0, no context, no
 * stream held) and points drv at it. Functions the fake does not simulate stay NULL. */
void fd_reset(void);

/* Frees everything the fake holds (and empties drv). */
void fd_free(void);

/* Calls of fn since fd_reset(). */
uint64_t fd_calls(enum fd_fn fn);

/* The next `times` calls of fn (-1: every call) return r and do nothing else. */
void fd_fail(enum fd_fn fn, CUresult r, int times);

/* A context on device dev (0..7), made current on this thread when none is. */
CUcontext fd_context(int dev);

/* Device dev's primary context, retained once (made when there is none). */
CUcontext fd_primary(int dev);

/* The context is destroyed: its events answer CONTEXT_IS_DESTROYED from now on. */
void fd_destroy(CUcontext ctx);

/* Makes ctx the calling thread's current context (cuCtxSetCurrent). */
void fd_set_current(CUcontext ctx);

/* A new stream of ctx. */
CUstream fd_stream(CUcontext ctx);

/* A kernel handle (a CUfunction) that cuFuncGetName names `name` (copied). */
void *fd_kernel(const char *name);

/* A graph of `kernels` kernel nodes and `others` other nodes (cuGraphGetNodes). */
CUgraph fd_graph(int kernels, int others);

/* The program's launch on s (as the real call does after ktime's launch_begin): the host
 * clock advances by FD_SUBMIT_NS, then a kernel of ns is queued on s. */
void fd_run(CUstream s, uint64_t ns);

/* Advances the host clock by ns (the program's own work between launches). */
void fd_advance(uint64_t ns);

/* The host clock, in simulated ns. */
uint64_t fd_host_ns(void);

/* The host waits for s (cuStreamSynchronize): the host clock goes to the end of its work.
 * Returns false (and waits for nothing) while s is held or waits on a closed gate. */
bool fd_sync(CUstream s);

/* Each cuEventQuery then takes ns of host time (a thread that polls an event, such as the
 * timing floor's, sees the GPU finish). 0 at fd_reset(). */
void fd_set_poll_ns(uint64_t ns);

/* The GPU is busy elsewhere: nothing queued on s runs until fd_release(s), which runs what
 * it can (from the host time of the release). */
void fd_hold(CUstream s);
void fd_release(CUstream s);

/* s is capturing (cuStreamIsCapturing says ACTIVE) or not. */
void fd_capture(CUstream s, bool on);

/* Work queued on s and not yet run (gate waits, records, kernels). */
int fd_queued(CUstream s);

/* What the fake saw, beyond the call counts. */
struct fd_stats {
    uint64_t gate_waits;         /* cuStreamWaitValue32 calls that queued a wait */
    uint64_t gates_held;         /* of those, waits the GPU reached while closed */
    uint64_t memsets, memset_bytes;
    uint64_t queries_by_mode[3]; /* cuEventQuery calls by the calling thread's capture mode
                                  * (CUstreamCaptureMode: GLOBAL, THREAD_LOCAL, RELAXED) */
    uint64_t records_in_capture; /* cuEventRecord on a capturing stream (ktime never should) */
    uint64_t events_alive;       /* created and not destroyed */
};
void fd_stats(struct fd_stats *out);

/* The real call of ktime_primary_release(): cuDevicePrimaryCtxRelease of the fake. */
CUresult fd_primary_release(CUdevice dev);

#endif
