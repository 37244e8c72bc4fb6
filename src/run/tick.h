/* tick.h - the drain thread's tick: between its passes it calls the modules' tick() moment
 * (snapshots, the control channel) with what the run layer lends them (struct module_tick):
 * the report so far and ktime ctl reset. */
#ifndef KTIME_TICK_H
#define KTIME_TICK_H

/* At start-up, after the modules started: makes the drain thread call tick_run after every
 * pass when a module has a tick(). */
void tick_install(void);

/* One tick: the modules' tick() moments, while the run is on in the process that loaded
 * ktime. The drain thread, after a pass, outside its pass_lock. */
void tick_run(void);

/* ktime ctl reset: a drain pass, then every count starts afresh (rebase.h's base of the
 * kernel table and the drop reasons, the drain's aggregates, each module's reset()). Returns
 * 0, or -1 when out of memory (nothing changed). The drain thread (or a test with no drain
 * thread running). */
int tick_reset(void);

#endif
