/* launches.c - each kernel's launch calls and queue times (launches.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "launches.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "module.h"
#include "state.h"

struct lq {
    const char *name;           /* the hash key: a kernel table's or CUPTI's stable name */
    struct report_launch r;
    struct sketch api_sk, queue_sk;
    UT_hash_handle hh;
};

/* The drain thread's, then the exit's. */
static struct lq *byname;
static struct lq *last;

static struct lq *lq_of(const char *name)
{
    struct lq *q;

    if (last && (last->name == name || strcmp(last->name, name) == 0))
        return last;
    HASH_FIND_STR(byname, name, q);
    if (!q) {
        if (!(q = calloc(1, sizeof *q)))
            return NULL;
        q->name = name;
        q->r.api_sk = &q->api_sk;
        q->r.queue_sk = &q->queue_sk;
        HASH_ADD_KEYPTR(hh, byname, q->name, strlen(q->name), q);
    }
    return last = q;
}

static void add(struct stats *s, struct sketch *sk, double us)
{
    stats_add(s, us);
    sketch_add(sk, us);
}

void launches_sample(const struct drain_out *o)
{
    const struct ktab_entry *e;
    const char *name;
    struct lq *q;

    if (!o->api_ns || o->kernel > kt.ktab.mask)
        return;
    e = &kt.ktab.slots[o->kernel];
    name = atomic_load_explicit(&e->name, memory_order_acquire);
    if (!name || atomic_load_explicit(&e->kind, memory_order_relaxed) == KTAB_MEMOP)
        return;
    if ((q = lq_of(name)))
        add(&q->r.api, &q->api_sk, (double)o->api_ns / 1000.0);
}

void launches_record(const struct hw_out *o)
{
    struct lq *q;

    /* A graph's kernel nodes share their graph launch's call: theirs is no launch of theirs. */
    if (!kt.cfg.launch_times || !o->timed || !o->name || o->in_graph ||
        (o->api_ns < 0 && o->queue_ns < 0))
        return;
    if (!(q = lq_of(o->name)))
        return;
    /* KTIME_TIMER=both: the launch call is the events' (their clock reads), not timed twice. */
    if (o->api_ns >= 0 && kt.cfg.timer == TIMER_CUPTI)
        add(&q->r.api, &q->api_sk, (double)o->api_ns / 1000.0);
    if (o->queue_ns >= 0)
        add(&q->r.queue, &q->queue_sk, (double)o->queue_ns / 1000.0);
}

const struct report_launch *launches_of(const char *mangled)
{
    struct lq *q;

    if (!mangled)
        return NULL;
    HASH_FIND_STR(byname, mangled, q);
    return q && (q->r.api.n || q->r.queue.n) ? &q->r : NULL;
}

void launches_free(void)
{
    struct lq *q, *tmp;

    HASH_ITER(hh, byname, q, tmp) {
        HASH_DEL(byname, q);
        free(q);
    }
    last = NULL;
}

static bool launches_start(void)
{
    launches_free();
    return true; /* the header's KTIME_LAUNCH_COLUMNS; nothing is measured without
                  * KTIME_LAUNCH_TIMES (no launch call's time, no queue time) */
}

static void launches_header(struct report *r)
{
    r->launch_columns = kt.cfg.launch_columns;
}

/* Each row's launch calls and queue times (after the CUPTI timer's rows: those of kernels
 * seen only in graphs have none, as their launches are their graphs'). */
static int launches_rows(struct report *r, const struct module_rows *m)
{
    (void)m;
    for (size_t i = 0; i < r->nkernels; i++)
        r->kernels[i].launch = launches_of(r->kernels[i].mangled);
    return 0;
}

/* ktime ctl reset: the launch calls and queue times start afresh (the drain thread's). */
static void launches_reset(void)
{
    launches_free();
}

const struct ktime_module launches_module = {
    .name = "launches",
    .start = launches_start,
    .sample = launches_sample,
    .record = launches_record,
    .header = launches_header,
    .rows = launches_rows,
    .reset = launches_reset,
};
