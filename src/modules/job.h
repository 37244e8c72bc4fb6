/* job.h - the job's verdict across ranks (the job module): every report names its job
 * (KTIME_JOB, else the launcher's id); where KTIME_OUTPUT names the rank (%r) in a job of
 * several processes, rank 0 waits at exit, at most KTIME_JOB_WAIT seconds, for the other
 * ranks' final reports of the same job, merges them with the code of `ktime merge` (merge.h)
 * and writes the job report at KTIME_OUTPUT with %r as "all": per kernel the slowest and
 * fastest rank and the imbalance, and which rank, if any, holds the others back. Ranks whose
 * report did not come are named. With KTIME_INTERVAL (and JSON reports), rank 0 writes the
 * job report of the ranks' snapshots every interval too. Fails open: anything that goes wrong
 * is one "ktime:" warning, and the program's exit is delayed by the wait at most. */
#ifndef KTIME_JOB_H
#define KTIME_JOB_H

#include <stdbool.h>

/* Whether the file name template tmpl (KTIME_OUTPUT) makes a job report in a process whose
 * launcher's variables give a rank and a world size of 2 or more: tmpl names %r and
 * KTIME_JOB_WAIT is over 0. Any thread. */
bool job_on(const char *tmpl);

#endif
