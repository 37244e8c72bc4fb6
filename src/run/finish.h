/* finish.h - the report at the end of the run: at exit, or on a terminating signal. */
#ifndef KTIME_FINISH_H
#define KTIME_FINISH_H

#include <stdbool.h>

/* Stops the drain (unless called on it), resolves what is pending within
 * KTIME_EXIT_WAIT_MS, and writes the report to KTIME_OUTPUT or stderr. Runs once per
 * process (the first caller wins; a forked child never). From the exit handler, or from
 * the drain thread (from_drain_thread) when a signal ends the program. */
void finish_report(bool from_drain_thread);

/* Registers, at start-up, what a process that never launches a kernel does at exit: it says
 * so, and where KTIME_OUTPUT names a file that is absent or holds an empty report, writes an
 * empty report there (a non-empty report of another process is never replaced). Nothing
 * happens at exit once a launch has installed the real exit handler. Called once, from the
 * constructor. */
void finish_register_idle(void);

#endif
