/* finish.h - the report at the end of the run: at exit, or on a terminating signal. */
#ifndef KTIME_FINISH_H
#define KTIME_FINISH_H

#include <stdbool.h>

#include "report.h"

/* Stops the drain thread, resolves what is pending within KTIME_EXIT_WAIT_MS, and writes the
 * report to KTIME_OUTPUT or stderr. Runs once per process (the first caller wins; a forked
 * child never); tells signals.c each step (signals_report_step), the last one also when it
 * could not write. From the exit handler (deadline 0), or from ktime's signal thread when a
 * signal ends the program: deadline is then the CLOCK_MONOTONIC time (ms) by which the report
 * must be out, and every wait is cut to fit (the floor is not measured). Never from the drain
 * thread. */
void finish_report(double deadline);

/* The process image ends without running its exit handlers: an exec (the new program may
 * have ktime too, under the same pid) or _exit in a forked worker. Writes the report now,
 * as finish_report(0) would at exit, when this process launched (one that launched
 * nothing writes nothing here: the idle exit handler would not have run either). Later
 * launches of the same image, if the exec fails, count as shutdown (untimed), and a report
 * file is written again with them at exit (finish_late). errno is kept. From a program
 * thread, not from a signal handler. */
void finish_image_end(void);

/* Registers, at start-up, what a process that never launches a kernel does at exit: it says
 * so, and where KTIME_OUTPUT names one file for every process and nothing is there yet,
 * creates an empty report there (never over anything, not even an empty report; a file per
 * process, %p %r %l %q{}, gets none). Nothing happens at exit once a launch has installed the
 * real exit handler. Called once, from the constructor. */
void finish_register_idle(void);

/* Fills r (zeroed first) with the report's header: the process, the job, the settings in
 * force, the gate as it worked out, and each module's fields (modules_header). At the end of
 * the run (finish_report, and idle.c's empty report). */
void finish_header(struct report *r);

#endif
