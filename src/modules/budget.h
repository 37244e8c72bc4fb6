/* budget.h - KTIME_BUDGET: ktime's own estimated cost kept under a share of the run's time.
 * The drain thread's tick asks the controller (budgetctl.h) every window for each kernel's
 * rate, 1 launch in 2^level, and writes it to the kernel's table entry, where the launch
 * path's draw reads it with one relaxed load (launch.h); a sample kept stands for 2^level
 * launches in the totals. Under the CUPTI timer, which records every kernel, the lever is the
 * share of the time its kernel records are on (cuptitimer_switch), in cycles of random length;
 * the launches made while they are off are the rows' unsampled ones. The module's part of the
 * report: the budget, the estimated cost, each kernel's rate, CUPTI's duty and the launches it
 * left unrecorded. docs/always-on.md, "An overhead budget". */
#ifndef KTIME_BUDGET_H
#define KTIME_BUDGET_H

#include <stdbool.h>
#include <stdint.h>

#include "budgetctl.h"

/* Past its warmup, a kernel's first launches are timed whatever its rate: its length is known
 * after one window (and a kernel launched this few times costs little to time). */
#define BUDGET_FIRST 8

/* The controller's window once running, and its first one (the rates of a run's first kernels
 * are a guess until then), in ms of the drain thread's clock. */
#define BUDGET_WINDOW_MS 10.0
#define BUDGET_FIRST_WINDOW_MS 2.0

/* Under the CUPTI timer: the mean length of an on-off cycle of its kernel records, in ms
 * (each drawn from half to one and a half times it). */
#define BUDGET_CYCLE_MS 100.0

/* One window of window_ms, ending now: each kernel's launches, samples and length since the
 * last one, its new rate written to its kernel table entry. With the drain's pass_lock held
 * (the module's tick takes it; a unit test drives windows itself). Returns the window's
 * estimated cost in ns. */
double budget_window(double window_ms);

/* The CUPTI timer's on-off cycle at now_ms (the tick does it after each window; a unit test
 * drives it itself): switches CUPTI's kernel records off or on when a part of the cycle ends. */
void budget_cycle(double now_ms);

/* What the estimate took a timed launch and a launch ktime only counted to cost (ns), for the
 * tests: the controller's costs. */
const struct bctl_costs *budget_costs(void);

#endif
