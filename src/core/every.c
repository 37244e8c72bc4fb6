/* every.c - a periodic deadline on the caller's clock. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "every.h"

#include <math.h>

void every_init(struct every *e, double period_ms, double now_ms)
{
    e->period_ms = period_ms;
    e->next_ms = now_ms + period_ms;
}

bool every_due(struct every *e, double now_ms)
{
    if (e->period_ms <= 0 || now_ms < e->next_ms)
        return false;
    /* The deadline after now on the same cadence. */
    e->next_ms += e->period_ms * (floor((now_ms - e->next_ms) / e->period_ms) + 1.0);
    return true;
}

double every_left_ms(const struct every *e, double now_ms)
{
    if (e->period_ms <= 0)
        return -1;
    return now_ms >= e->next_ms ? 0 : e->next_ms - now_ms;
}
