/* every.h - a periodic deadline on the caller's clock: when the next snapshot is due, when
 * the control channel is read next. It keeps no clock of its own, so that tests drive it
 * with a fake one. No CUDA; one thread at a time. */
#ifndef KTIME_EVERY_H
#define KTIME_EVERY_H

#include <stdbool.h>

struct every {
    double period_ms;  /* <= 0: never due */
    double next_ms;    /* the next deadline, on the caller's clock */
};

/* Starts e at now_ms: first due one period later. A period <= 0 is never due. */
void every_init(struct every *e, double period_ms, double now_ms);

/* Whether a deadline has passed at now_ms. When it has, the next deadline is the first one
 * of the cadence (start + k periods) after now_ms: deadlines missed while the caller was
 * busy are skipped, never made up in a burst. */
bool every_due(struct every *e, double now_ms);

/* Milliseconds from now_ms to the next deadline (0 when it has passed; a negative value when
 * never due). */
double every_left_ms(const struct every *e, double now_ms);

#endif
