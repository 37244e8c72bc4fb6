/* finish.h - the report at the end of the run: at exit, or on a terminating signal. */
#ifndef KTIME_FINISH_H
#define KTIME_FINISH_H

#include <stdbool.h>

/* Stops the drain thread, resolves what is pending within KTIME_EXIT_WAIT_MS, and writes the
 * report to KTIME_OUTPUT or stderr. Runs once per process (the first caller wins; a forked
 * child never); tells signals.c each step (signals_report_step), the last one also when it
 * could not write. From the exit handler (deadline 0), or from ktime's signal thread when a
 * signal ends the program: deadline is then the CLOCK_MONOTONIC time (ms) by which the report
 * must be out, and every wait is cut to fit (the floor is not measured). Never from the drain
 * thread. */
void finish_report(double deadline);

/* Registers, at start-up, what a process that never launches a kernel does at exit: it says
 * so, and where KTIME_OUTPUT names a file that is absent or holds an empty report, writes an
 * empty report there (a non-empty report of another process is never replaced). Nothing
 * happens at exit once a launch has installed the real exit handler. Called once, from the
 * constructor. */
void finish_register_idle(void);

#endif
