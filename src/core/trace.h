/* trace.h - KTIME_TRACE: the timed launches as a Chrome/Perfetto trace (JSON `traceEvents`):
 * a track per GPU and stream, a slice per kernel run with its name and launch shape. Bounded:
 * the first `max` samples are kept (64 bytes each, in chunks made as needed), later ones are
 * counted as dropped from the trace. No CUDA types; the drain thread adds, the exit writes. */
#ifndef KTIME_TRACE_H
#define KTIME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "shape.h"

struct trace_ev {
    uint64_t ts_ns;         /* start, in the GPU's (or its reference's) nanoseconds */
    uint64_t dur_ns;
    const char *name;       /* mangled name, or NULL: then `kernel` names it */
    uint64_t stream;        /* an id of the stream, unique per device */
    uint32_t kernel;        /* ktab id, when name is NULL */
    int32_t device;
    struct kshape shape;
};

struct trace {
    struct trace_ev **chunks;
    uint32_t nchunks, chunks_cap;
    uint64_t n;             /* events kept */
    uint64_t max;           /* most events kept (KTIME_TRACE_MAX) */
    uint64_t dropped;       /* samples past max, or for which no memory could be had */
    uint64_t unplaced;      /* samples that could not be placed on the timeline (their
                             * reference event had not completed) */
};

/* Prepares t to keep at most max events. */
void trace_init(struct trace *t, uint64_t max);

/* Adds one kernel run. One thread at a time (the drain thread, or the exit path once it
 * stopped). Never fails: what cannot be kept is counted in dropped. */
void trace_add(struct trace *t, uint64_t ts_ns, uint64_t dur_ns, const char *name,
               uint32_t kernel, int device, uint64_t stream, const struct kshape *shape);

/* Writes t as a Chrome trace (JSON object with traceEvents, chrome://tracing and
 * ui.perfetto.dev read it): times in microseconds from the earliest event, a process per
 * GPU, a thread per stream. kernel_name(id) names events added without a name. Returns 0,
 * or -1 when writing to f failed. */
int trace_write(FILE *f, const struct trace *t, const char *(*kernel_name)(uint32_t id),
                const char *version);

/* Frees t's events. */
void trace_free(struct trace *t);

#endif
