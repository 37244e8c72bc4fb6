/* lifecycle.h - what the interposition layer and the launch path ask of ktime's lifecycle:
 * per-context set-up and context ends (context.c), and the exit handlers (finish.c). */
#ifndef KTIME_LIFECYCLE_H
#define KTIME_LIFECYCLE_H

#include <stdbool.h>
#include <cuda.h>

#include "pool.h"

/* Marks what libktime exports; everything else is hidden (-fvisibility=hidden). */
#define KTIME_EXPORT __attribute__((visibility("default")))

/* Installs the exit handler (and the signal handlers) once. Called at the first launch:
 * an atexit() handler registered then runs before the CUDA runtime's own teardown. */
void ktime_register_exit(void);

/* Creates, registers and returns the event pool of ctx, or NULL (timing off for ctx).
 * Takes the set-up lock: first timed launch in each context only. */
struct pool *ktime_pool_create(CUcontext ctx);

/* Whether setting up ctx's pool failed before: its launches are then not timed, and
 * nothing is tried again. Any thread; lock-free. */
bool ktime_context_failed(CUcontext ctx);

/* A context is about to be destroyed (ctx), or every context of device dev reset
 * (dev >= 0): its pools stop taking launches, the drain resolves their pending events
 * (at most KTIME_EXIT_WAIT_MS, the rest counted incomplete), and only then does the caller
 * go on to destroy it. Called from the destroy/reset wrappers; waits, but never on the
 * launch path. */
void ktime_context_ending(CUcontext ctx, int dev);

/* Calls release(dev), a cuDevicePrimaryCtxRelease. Nothing says whether a release is the last
 * one, which destroys the context, so ktime does not wait for the GPU: it folds in what has
 * completed, releases, and if the primary context is then inactive, its pools end there (their
 * pending pairs counted incomplete) without another call on their events. */
CUresult ktime_primary_release(CUdevice dev, CUresult (*release)(CUdevice));

#endif
