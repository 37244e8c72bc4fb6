/* busy.h - the busy module (KTIME_BUSY): when each GPU was busy and idle. Every kernel and
 * copy a timer saw becomes an interval on its GPU's timeline (core/intervals.h): with CUPTI
 * the hardware's start and end, exactly; with events the event pair's interval, placed on the
 * timeline against its context's reference event (an approximation: it includes the launch's
 * latency, and only timed launches are seen). Per GPU and timer: the span, the time at least
 * one kernel or copy ran, the idle gaps (a histogram, the largest with the kernels around
 * them), the same per stream, and per range. Fed on the drain thread, read at exit. */
#ifndef KTIME_BUSY_H
#define KTIME_BUSY_H

#include <stdbool.h>
#include <stdint.h>

#include "drain.h"
#include "hw.h"
#include "intervals.h"
#include "report.h"

/* The intervals the reorder window of each timeline holds. */
#define BUSY_WINDOW 8192

enum busy_method { BUSY_BY_CUPTI, BUSY_BY_EVENTS };

/* classify(name) says which class of work (enum iv_class) a kernel of mangled name is (the
 * comm module's; none: compute). At start-up, after the busy module's start. */
void busy_classify_with(int (*classify)(const char *mangled));

/* Whether the module is on (from its start on). */
bool busy_on(void);

/* A timed sample of the events timer (the module's sample moment). The drain thread. */
void busy_sample(const struct drain_out *o);

/* A CUPTI record (the module's record moment). The drain thread, or the exit path once it stopped. */
void busy_record(const struct hw_out *o);

/* The GPUs' busy time for the report (sweeps what the windows hold first), valid until the
 * next call or busy_free(); NULL when off or nothing ran. At exit, once the drain stopped. */
struct report_busy *busy_report(void);

/* The timelines, for the comm module: the i-th (i < n), and its device and method. NULL past
 * the last. At exit, after busy_report(). */
const struct iv_dev *busy_timeline(int i, enum busy_method *method);

/* Frees the module's state. */
void busy_free(void);

#endif
