/* launches.h - the launches module: each kernel's launch calls and queue times. The wall time
 * of the launch call (with events, ktime's two clock reads around the real call; with CUPTI,
 * CUPTI's launch record) and, with CUPTI, the queue time: the kernel's start on the GPU less
 * the end of its launch call, on CUPTI's one clock. Fed on the drain thread, read at exit. */
#ifndef KTIME_LAUNCHES_H
#define KTIME_LAUNCHES_H

#include "drain.h"
#include "hw.h"
#include "report.h"

/* A kernel's mean launch call at least its mean time on the GPU: the CPU cannot launch it as
 * fast as the GPU runs it. A kernel whose mean queue time is at least LAUNCHES_QUEUE_LONG_US
 * waited long for the GPU (which was busy with earlier work, or another stream's). */
#define LAUNCHES_QUEUE_LONG_US 1000.0

/* A timed sample of the events timer (the module's sample moment). The drain thread. */
void launches_sample(const struct drain_out *o);

/* A CUPTI record (the module's record moment). The drain thread, or the exit path once it stopped. */
void launches_record(const struct hw_out *o);

/* The launch calls and queue times of the kernel (or graph) of mangled name, or NULL: none
 * measured. Valid until launches_free(). At exit. */
const struct report_launch *launches_of(const char *mangled);

/* Frees the module's state (its start, and the unit tests; the library keeps it to the
 * end). */
void launches_free(void);

#endif
