/* reportfile.h - what every report of the run shares, the one at exit and the snapshots
 * while the program runs: its header (the process, the job, the settings in force, the timer
 * as it worked out) and the names of its files. */
#ifndef KTIME_REPORTFILE_H
#define KTIME_REPORTFILE_H

#include <stdbool.h>
#include <stddef.h>

#include "report.h"

/* The room a header's strings live in, as long as the report is written. */
struct reportfile_buf {
    char cmdline[16384];
    const char *argv[256];
    char host[256];
    char range[300];
};

/* Zeroes r and fills its header: version, command, pid, host, ranks, times (end: now),
 * settings, gate, devices (those known now), L2 flush, ranges' words, capture range. Its
 * strings live in b. Any thread. */
void reportfile_header(struct report *r, struct reportfile_buf *b);

/* The timer as it worked out (r's timer, timer_requested, timer_note and CUPTI's figures).
 * Returns whether CUPTI started timing for ktime. Any thread. */
bool reportfile_timer(struct report *r);

/* The template of the report's file: KTIME_OUTPUT, or in a job of several processes without
 * it a file per rank ("ktime-%h-%r.json"...); NULL: stderr. */
const char *reportfile_template(void);

/* Whether reportfile_template() is the per-rank default (KTIME_OUTPUT unset). */
bool reportfile_rank_default(void);

/* The template tmpl expanded for process pid into path (size bytes), anchored in the
 * directory the program started in when it is relative. Returns 0, or -1 when it does not
 * fit. */
int reportfile_expand(const char *tmpl, long pid, char *path, size_t size);

/* The environment as the library reads it (getenv). */
const char *reportfile_env(const char *name);

#endif
