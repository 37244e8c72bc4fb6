/* dump.h - KTIME_DUMP_SAMPLES: every timed sample of the run, one line each, so that the
 * report's statistics and quantiles can be checked against the raw samples of the same run. */
#ifndef KTIME_DUMP_H
#define KTIME_DUMP_H

/* With KTIME_DUMP_SAMPLES set, hooks the drain's and the CUPTI timer's samples. The file is
 * made on the first sample, by the drain thread. Call at start-up, before the drain starts. */
void dump_setup(void);

/* Writes out and closes the file (the exit, once the drain has stopped). */
void dump_close(void);

#endif
