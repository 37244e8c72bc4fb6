/* tick.c - the drain thread's tick: the modules' tick() moments and what the run layer lends
 * them (tick.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "tick.h"

#include <unistd.h>

#include "collect.h"
#include "deliver.h"
#include "finish.h"
#include "modules.h"
#include "rebase.h"
#include "state.h"

/* The rows so far, on the drain thread between passes: the aggregates hold still under
 * pass_lock (a thread releasing a context may fold into them too, under the same lock). */
static int gather(struct report *r, bool records_primary)
{
    r->ndevices = atomic_load(&kt.ndevices);
    pthread_mutex_lock(&kt.drain.pass_lock);
    int rc = collect_gather(r, true, records_primary, true);
    pthread_mutex_unlock(&kt.drain.pass_lock);
    return rc;
}

int tick_reset(void)
{
    int rc;

    pthread_mutex_lock(&kt.drain.pass_lock);
    drain_pass(&kt.drain); /* what has completed belongs before the reset */
    if ((rc = rebase_take()) == 0) {
        drain_reset_aggs(&kt.drain);
        modules_reset();
    }
    pthread_mutex_unlock(&kt.drain.pass_lock);
    return rc;
}

void tick_run(void)
{
    if (getpid() != kt.owner || atomic_load(&kt.phase) != PHASE_ON)
        return;
    struct module_tick t = {
        .now_ms = drain_now_ms(),
        .header = finish_header,
        .gather = gather,
        .release = collect_free,
        .reset = tick_reset,
        .report_template = deliver_template(),
        .expand = deliver_expand,
    };
    modules_tick(&t);
}

void tick_install(void)
{
    if (modules_ticking())
        atomic_store(&kt.drain.tick, tick_run);
}
