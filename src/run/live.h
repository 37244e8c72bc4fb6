/* live.h - ktime always on: the report rewritten while the program runs (KTIME_INTERVAL, every
 * format asked for, and KTIME_PROM, KTIME_SERIES), and control at run time (KTIME_START,
 * `ktime ctl PID on|off|snapshot|reset|status` through ctl.h's channel). The drain thread does
 * both between its passes; the launch path only reads kt.hold, as it did for the capture
 * range. docs/always-on.md. */
#ifndef KTIME_LIVE_H
#define KTIME_LIVE_H

#include <stdbool.h>

#include "report.h"

/* At start-up (the constructor, after the settings): KTIME_START=paused, the count of paused
 * launches, the drain thread's hook. Warns once for settings that cannot work together.
 * fill_header fills a snapshot's header as the report at exit has it. */
void live_init(void (*fill_header)(struct report *r));

/* At the first launch: starts the drain thread now when snapshots or KTIME_START=paused need
 * it to run before any launch is timed (otherwise it starts with the first timed launch, and
 * the control channel opens then). */
void live_first_launch(void);

/* At exit, once the drain thread has stopped (or could not be stopped within wait_ms): no
 * snapshot is written after this returns, so that none replaces the report at exit. */
void live_stop(long wait_ms);

/* At exit: stamps r as the final report (snapshot.final) when the process wrote snapshots or
 * KTIME_INTERVAL is set; r's header is filled. */
void live_stamp_final(struct report *r);

/* At exit, after the report file is written from r (rows gathered): KTIME_PROM and the last
 * KTIME_SERIES line, from the same rows (again after launches came late). wait_ms bounds the
 * wait for a snapshot still being written by a drain thread that did not stop. */
void live_final_outputs(struct report *r, long wait_ms);

/* At the end of the report at exit: closes the control channel and removes its files. */
void live_close(void);

#endif
