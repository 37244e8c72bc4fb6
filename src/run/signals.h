/* signals.h - the report on SIGINT, SIGTERM and SIGHUP (KTIME_SIGNALS).
 *
 * The thread that takes such a signal never returns into the program. Its handler wakes a
 * thread of ktime's (the writer, "ktime-signal", started with the handlers) that writes the
 * report (the lifecycle's writer, finish_report), waits for it at most KTIME_EXIT_WAIT_MS + SIGNALS_WRITE_MS, then
 * gives the signal its default action back and raises it: the program ends by that signal,
 * with status 128 + signal, as it would have without ktime. A second report signal (the same
 * or another, on any thread) ends the program at once. When the report is not out in time,
 * one line on stderr says why (written with write(2): the handler calls only
 * async-signal-safe functions). The writer may need a lock that the interrupted thread holds
 * (stderr's stdio lock, malloc's, one in the CUDA driver): that is the case the bound is for.
 * ktime's own threads block every signal, so process-directed signals land on the program's. */
#ifndef KTIME_SIGNALS_H
#define KTIME_SIGNALS_H

/* What the wait for a signal's report adds to KTIME_EXIT_WAIT_MS: time to gather and write
 * the report once the events' wait is over. */
#define SIGNALS_WRITE_MS 1000

/* Takes each report signal the program leaves at its default action (its own handlers, and
 * SIG_IGN, are left alone), and starts the writer thread first where there is one to take.
 * On a signal, the writer calls write_report(deadline): deadline is the CLOCK_MONOTONIC time,
 * in ms, by which the report must be out. Where the writer cannot be started, says so once
 * and takes no signal. Once, at the first launch, from ktime_register_exit(). */
void signals_install(void (*write_report)(double deadline));

/* Gives every signal ktime took back its default action (in a forked child). */
void signals_restore_default(void);

/* How far finish_report() has got, for the line a signal leaves when it cannot wait longer. */
enum signals_step {
    SIGNALS_STEP_DRAIN = 1, /* stopping the drain, waiting for pending events, CUPTI, NVML */
    SIGNALS_STEP_WRITE,     /* gathering the rows and writing them out */
    SIGNALS_STEP_DONE       /* the report is written (or could not be): a signal waits no more */
};

/* Called by finish_report() on the thread writing the report, at each step (the first one
 * also notes which thread writes; the last one wakes a signal handler waiting for it).
 * Async-signal-safe to read from the handler; any thread. */
void signals_report_step(enum signals_step step);

/* After the exit handler's report: if a report signal is being handled in this process, waits
 * for it to end the process (at most until the signal's wait is over, and 1 s more), so that an
 * exit() racing with the signal neither ends the process with the program's own status first
 * nor tears CUDA down under ktime's writer. Returns at once otherwise. From the exit handler. */
void signals_hold_exit(void);

#endif
