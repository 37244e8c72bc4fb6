/* signals.h - the report on SIGINT, SIGTERM and SIGHUP (KTIME_SIGNALS): the handler only
 * notes the signal; the drain thread writes the report, then lets the signal end the
 * program as it would have. */
#ifndef KTIME_SIGNALS_H
#define KTIME_SIGNALS_H

/* Takes each report signal the program leaves at its default action, and has the drain
 * thread watch for them: it calls write_report(), then lets the signal act. Once, at the
 * first launch, from ktime_register_exit(). */
void signals_install(void (*write_report)(void));

/* Gives every signal ktime took back its default action (in a forked child). */
void signals_restore_default(void);

#endif
