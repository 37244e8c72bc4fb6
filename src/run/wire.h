/* wire.h - the modules that read every timed sample and CUPTI record (launch and queue times,
 * busy time, communication), wired to the drain and to the CUPTI timer's records. */
#ifndef KTIME_WIRE_H
#define KTIME_WIRE_H

/* Sets the modules up from kt.cfg and points kt.drain.record and kt.hw.record at them. After
 * drain_init and hw_init, before the first launch. */
void wire_modules(void);

/* Frees the modules' state (the unit tests; the library keeps it to the end). */
void wire_free(void);

#endif
