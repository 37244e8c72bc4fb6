/* deliver.h - where the report goes at the end of the run (finish.c, idle.c). */
#ifndef KTIME_DELIVER_H
#define KTIME_DELIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report.h"

/* Writes r to f in KTIME_FORMAT. Returns 0, or -1 when it failed. */
int deliver_write(FILE *f, struct report *r);

/* KTIME_OUTPUT's template tmpl, anchored in the directory the program started in when it is
 * relative (the program may have changed directory since), expanded for process pid into
 * path. Returns 0, or -1 when it does not fit. */
int deliver_expand(const char *tmpl, long pid, char *path, size_t size);

/* Writes r to KTIME_OUTPUT (placeholders expanded here, in the process that writes, so that
 * each process of a multi-process run names its own file), to a file per rank in a job of
 * several processes, or to stderr; path_done: again, to the file written before (then never
 * to stderr). Waits at most wait_ms for a slow reader. The path of a file written goes to
 * written (size bytes). Returns whether the report went to a file it may be written to again. */
bool deliver_report(struct report *r, double t_built, const char *path_done, long wait_ms,
                    char *written, size_t size);

/* KTIME_ALSO_OUTPUT, a testing aid: the same rows once more, in the format its suffix names,
 * so that a test can compare two formats of one process's report. */
void deliver_also(struct report *r);

#endif
