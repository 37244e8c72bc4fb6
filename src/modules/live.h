/* live.h - the report while the program runs: KTIME_INTERVAL rewrites every report file asked
 * for (KTIME_OUTPUT, KTIME_ALSO_OUTPUT) atomically with the counts so far, KTIME_PROM the
 * Prometheus file, KTIME_SERIES appends a line of what changed; the report at exit is stamped
 * final and writes them once more. The drain thread does it (the tick moment); the launch
 * path does not change. docs/always-on.md. The control module asks for a snapshot here. */
#ifndef KTIME_LIVE_H
#define KTIME_LIVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "module.h"

/* Whether a snapshot has anywhere to go: the report's file (report_template, NULL: stderr),
 * KTIME_ALSO_OUTPUT, KTIME_PROM or KTIME_SERIES. */
bool live_can_snapshot(const char *report_template);

/* A snapshot now, through what the tick t lends: every file asked for; the paths written go
 * to done (n bytes). Returns how many were written, or -1 when the counts could not be
 * gathered or the exit began. The drain thread, on its tick. */
int live_snapshot(const struct module_tick *t, char *done, size_t n);

/* The reports written so far (snapshots and the one at exit), and the resets. */
uint64_t live_reports(void);
uint64_t live_resets(void);

#endif
