/* finish.h - the report at the end of the run: at exit, or on a terminating signal. */
#ifndef KTIME_FINISH_H
#define KTIME_FINISH_H

#include <stdbool.h>

/* Stops the drain (unless called on it), resolves what is pending within
 * KTIME_EXIT_WAIT_MS, and writes the report to KTIME_OUTPUT or stderr. Runs once per
 * process (the first caller wins; a forked child never). From the exit handler, or from
 * the drain thread (from_drain_thread) when a signal ends the program. */
void finish_report(bool from_drain_thread);

#endif
