/* floor.h - the timing floor of each device: what an empty kernel reads, measured at exit. */
#ifndef KTIME_FLOOR_H
#define KTIME_FLOOR_H

#include "report.h"

/* The name of ktime's empty kernel: its CUPTI records are the hardware floor, not a row. */
#define FLOOR_KERNEL "ktime_floor_empty"

/* For each device in devs, in its primary context (if active): loads a one-instruction PTX
 * kernel, launches it FLOOR_LAUNCHES times back to back on a private stream, each between an
 * event pair, held behind a gate until all are queued (as ktime's gated launches are), and
 * stores the median interval in floor_events_us. Never waits more than wait_ms for the GPU;
 * any failure leaves 0. At exit, on the thread that writes the report, before CUDA's teardown;
 * with the CUPTI timer active its records of the kernel come too (floor_hw: see collect).
 * Returns how many of its launches succeeded. */
int floor_measure(struct report_device *devs, int n, long wait_ms);

#endif
