/* wire.c - the sample-reading modules, wired to the drain and CUPTI's records (wire.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "wire.h"

#include "busy.h"
#include "comm.h"
#include "launches.h"
#include "state.h"

static void on_sample(const struct drain_out *o)
{
    launches_sample(o);
    busy_sample(o);
}

static void on_record(const struct hw_out *o)
{
    launches_record(o);
    busy_record(o);
}

void wire_modules(void)
{
    busy_init(kt.cfg.busy != BUSY_OFF && comm_init() ? comm_classify : NULL);
    kt.drain.record = on_sample;
    kt.hw.record = on_record;
}

void wire_free(void)
{
    launches_free();
    busy_free();
    comm_free();
}
