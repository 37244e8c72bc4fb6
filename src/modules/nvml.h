/* nvml.h - the conditions of the run read through NVML (libnvidia-ml.so.1, loaded at run time:
 * no link dependency), on a sampler thread of its own, never on the launch path. */
#ifndef KTIME_NVML_H
#define KTIME_NVML_H

#include "conditions.h"

/* Starts the sampler thread once (unless KTIME_NVML=0): it loads NVML, then reads the
 * conditions of every device this process has a context on, every KTIME_NVML_INTERVAL_MS.
 * Called at each first sight of a kernel (the module's first_launch); a failure only means
 * "not checked". When the calling thread has a range of the program's open (rangestack.h), the
 * thread starts later, at nvml_ranges_closed(), so that NVML's start-up is in no range's
 * time. */
void nvml_start(void);

/* A range was popped: starts the sampler that nvml_start() deferred, once the calling
 * thread has no range open. One load when there is nothing to do. Any thread. */
void nvml_ranges_closed(void);

/* Stops the sampler (waiting for it at most wait_ms), takes the last reading of devices
 * `ordinals[0..n)` and of every device read before, and shuts NVML down. Returns the
 * conditions (static storage, valid until exit): not checked, with the reason, when NVML was
 * off, absent, failed, or did not answer in time. Once, from finish_report (any thread but
 * the sampler). */
const struct conditions *nvml_finish(const int *ordinals, int n, long wait_ms);

#endif
