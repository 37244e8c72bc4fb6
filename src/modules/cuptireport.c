/* cuptireport.c - the CUPTI timer as a module: its moments (cuptitimer.c does the work), and
 * its part of the report: the timer as it worked out, its records added to the rows (as their
 * samples with KTIME_TIMER=cupti, beside the events' with both), rows of the kernels that ran
 * only as graph nodes, and the devices' hardware floor. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <stdlib.h>
#include <string.h>

#include "cuptitimer.h"
#include "floor.h"
#include "log.h"
#include "module.h"
#include "state.h"
#include "sysinfo.h"

/* The kernel row of mangled, made when there is none (room for it is made beforehand, by
 * make_room); NULL when out of memory. */
static struct report_kernel *row_named(struct report *r, const char *mangled)
{
    for (size_t i = 0; i < r->nkernels; i++)
        if (r->kernels[i].kind == REPORT_KERNEL && strcmp(r->kernels[i].mangled, mangled) == 0)
            return &r->kernels[i];
    if (r->nkernels >= r->kernels_cap)
        return NULL;
    struct report_kernel *rk = &r->kernels[r->nkernels];
    memset(rk, 0, sizeof *rk);
    rk->mangled = mangled;
    rk->kind = REPORT_KERNEL;
    rk->per_dev = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->per_dev);
    if (!rk->per_dev)
        return NULL;
    rk->name = sysinfo_demangle(mangled);
    r->nkernels++;
    return rk;
}

/* Room in r->kernels for a row of every kernel CUPTI saw (those seen only in graphs have
 * none yet). Returns 0 or -1. */
static int make_room(struct report *r, const struct hw *records)
{
    size_t cap = r->nkernels + HASH_COUNT(records->byname) + 1;
    struct report_kernel *more;

    if (cap <= r->kernels_cap)
        return 0;
    if (!(more = realloc(r->kernels, cap * sizeof *more)))
        return -1;
    r->kernels = more;
    r->kernels_cap = cap;
    return 0;
}

/* The launches made while the duty cycle had switched CUPTI's records off (KTIME_BUDGET) are
 * the row's unsampled ones, as many as the launches no other bucket covers: a launch made as
 * the records were being switched, or a warmup launch, is counted once. Returns them. */
static uint64_t unsampled_within(struct report_kernel *rk, uint64_t direct, uint64_t covered)
{
    uint64_t room = direct > covered ? direct - covered : 0;

    if (rk->unsampled > room)
        rk->unsampled = room;
    return rk->unsampled;
}

/* Adds CUPTI's records to the rows (hw_primary: they are the rows' samples); ktime's own
 * empty kernel's records are the devices' hardware floor. */
static int add_records(struct report *r, struct hw *records, bool hw_primary)
{
    struct hw_kernel *hk, *tmp;

    HASH_ITER(hh, records->byname, hk, tmp) {
        if (strcmp(hk->name, FLOOR_KERNEL) == 0) {
            /* ktime's own empty kernel: the hardware floor of each device, not a row. */
            for (struct hw_dev *hd = hk->devs; hd; hd = hd->next) {
                int d = report_device_index(r, hd->device);
                if (d >= 0 && hd->st.n)
                    ((struct report_device *)r->devices)[d].floor_hw_us = hd->st.mean;
            }
            continue;
        }
        struct report_kernel *rk = row_named(r, hk->name);
        uint64_t ev_timed = 0, direct, covered;

        if (!rk)
            return -1;
        rk->in_graph += hk->in_graph;
        if (!hw_primary && !rk->hw &&
            !(rk->hw = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->hw)))
            return -1;
        for (int d = 0; d < r->ndevices; d++)
            ev_timed += rk->per_dev[d].n;
        for (struct hw_dev *hd = hk->devs; hd; hd = hd->next) {
            int d = report_device_index(r, hd->device);
            if (d < 0)
                continue;
            stats_merge(hw_primary ? &rk->per_dev[d] : &rk->hw[d], &hd->st);
            if (hw_primary && hd->st.n) {
                rk->hw_timed += hd->st.n;
                report_row_add_sketch(r, rk, d, &hd->sk);
                if (shape_merge(&rk->shapes, hd->shapes) != 0)
                    report_shapes_short();
            }
        }
        if (!hw_primary)
            continue;
        /* Warmup is the first records (the same launches as the first calls, but for
         * graph nodes); launches that ran and got neither a record nor an event (CUPTI
         * dropped it, or it had not completed at exit) are incomplete. */
        rk->warmup_skipped = hk->warmup;
        direct = rk->calls - rk->captured - rk->failed;
        covered = (hk->records - hk->in_graph) + ev_timed + rk->dropped + rk->incomplete;
        covered += unsampled_within(rk, direct, covered);
        /* KTIME_CAPTURE: a record whose launch CUPTI never described is no sample; a record of
         * a launch outside the range is that launch, counted outside at the launch. */
        rk->incomplete += hk->bad + hk->unknown + (direct > covered ? direct - covered : 0);
    }
    return 0;
}

/* Kernels of which no record came at all: what ran after warmup is incomplete. A graph launch
 * after warmup that got no event (none before a hand-over) was timed by its kernel nodes'
 * records, in their rows: the graph has no sample of its own. */
static void account_unrecorded(struct report *r, struct hw *records)
{
    for (size_t i = 0; i < r->nkernels; i++) {
        struct report_kernel *rk = &r->kernels[i];
        uint64_t ev_timed = 0, direct, covered, rest;
        if (rk->kind == REPORT_KERNEL && hw_find(records, rk->mangled))
            continue;
        for (int d = 0; d < r->ndevices; d++)
            ev_timed += rk->per_dev[d].n;
        direct = rk->calls - rk->captured - rk->failed;
        covered = rk->warmup_skipped + ev_timed + rk->dropped + rk->incomplete;
        covered += unsampled_within(rk, direct, covered);
        rest = direct > covered ? direct - covered : 0;
        if (rk->kind == REPORT_GRAPH)
            rk->by_nodes = rest;
        else
            rk->incomplete += rest;
    }
}

/* With the drain stopped, adds the records to r's rows: with m->records_primary
 * (KTIME_TIMER=cupti) they are the rows' samples, and launches that got neither a record nor
 * an event count as incomplete; otherwise (both) they go beside the events' samples, in
 * report_kernel.hw. Kernels that only ran as graph nodes get rows of their own. */
static int cuptitimer_rows(struct report *r, const struct module_rows *m)
{
    struct hw *records = cuptitimer_records();

    if (!m->stopped)
        return 0;
    if (make_room(r, records) != 0 || add_records(r, records, m->records_primary) != 0)
        return -1;
    if (m->records_primary)
        account_unrecorded(r, records);
    return 0;
}

/* The unrecorded counts at the last ktime ctl reset, by kernel-table id (NULL: none). */
static uint64_t *unrecorded_base;

static bool cuptitimer_module_start(void)
{
    hw_free(cuptitimer_records());
    hw_init(cuptitimer_records(), kt.cfg.warmup);
    free((void *)cuptitimer_unrecorded);
    free(unrecorded_base);
    cuptitimer_unrecorded = NULL;
    unrecorded_base = NULL;
    atomic_store(&cuptitimer_off, 0);
    /* KTIME_BUDGET's lever under the CUPTI timer switches the records off at times: the
     * launches made meanwhile are counted by kernel. */
    if (kt.cfg.budget > 0 && kt.cfg.timer == TIMER_CUPTI &&
        !(cuptitimer_unrecorded = calloc((size_t)kt.ktab.mask + 1, sizeof *cuptitimer_unrecorded)))
        log_warn("out of memory at start-up; KTIME_BUDGET cannot switch CUPTI's records off");
    return true;
}

uint64_t cuptitimer_unrecorded_total(void)
{
    uint64_t n = 0;

    for (uint32_t id = 0; cuptitimer_unrecorded && id <= kt.ktab.mask; id++) {
        uint64_t u = atomic_load(&cuptitimer_unrecorded[id]);
        uint64_t b = unrecorded_base ? unrecorded_base[id] : 0;
        n += u > b ? u - b : 0;
    }
    return n;
}

/* A kernel-table entry's launches made while the records were off: its unsampled ones. */
static void cuptitimer_entry(uint32_t id, struct report_kernel *part)
{
    if (!cuptitimer_unrecorded)
        return;
    uint64_t n = atomic_load(&cuptitimer_unrecorded[id]);
    uint64_t b = unrecorded_base ? unrecorded_base[id] : 0;
    part->unsampled += n > b ? n - b : 0;
}

/* Kernel launches through the wrappers that ran while CUPTI's records were on, each of which
 * should bring a CUPTI record. */
static uint64_t launches_ran(void)
{
    uint32_t used = atomic_load(&kt.ktab.count);
    uint64_t n = 0;

    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(&kt.ktab, j);
        if (!e || atomic_load(&e->kind) != KTAB_KERNEL)
            continue;
        uint64_t ran = atomic_load(&e->calls) - atomic_load(&e->failed);
        uint64_t off = cuptitimer_unrecorded ?
                           atomic_load(&cuptitimer_unrecorded[ktab_id(&kt.ktab, e)]) : 0;
        n += ran > off ? ran - off : 0;
    }
    return n;
}

/* The devices CUPTI's records ran on (the CUPTI timer makes no event pools, which note
 * theirs). */
static void note_devices(void)
{
    struct hw_kernel *hk, *tmp;

    HASH_ITER(hh, cuptitimer_records()->byname, hk, tmp)
        for (struct hw_dev *d = hk->devs; d; d = d->next)
            ktime_note_device((CUdevice)d->device);
}

/* The records that completed, before the floor's launches. */
static void cuptitimer_stop(struct module_end *e)
{
    if (e->stopped && kt.cfg.timer != TIMER_EVENTS) {
        cuptitimer_drain();
        note_devices();
    }
}

bool cuptitimer_describe(struct report *r)
{
    struct cuptitimer_info info;

    r->timer_requested = timer_kind_name(kt.cfg.timer);
    r->timer = timer_kind_name(kt.cfg.timer);
    if (kt.cfg.timer == TIMER_EVENTS)
        return false;
    cuptitimer_info(&info);
    r->timer_note = info.note;
    r->cupti_library = info.library;
    r->cupti_dropped = info.dropped;
    r->cupti_refused = info.refused;
    if (!info.started)
        r->timer = timer_kind_name(TIMER_EVENTS); /* CUPTI never started */
    return info.started && kt.cfg.timer == TIMER_CUPTI;
}

/* The last records, the devices, what the timer did. Its records are the rows' samples with
 * KTIME_TIMER=cupti once CUPTI started. */
static void cuptitimer_end(struct module_end *e, struct report *r)
{
    if (kt.cfg.timer != TIMER_EVENTS && e->stopped) {
        /* Records switched off by the duty cycle stay off at exit: the floor's own launches
         * bring none then. */
        cuptitimer_finish(e->budget_ms(kt.cfg.exit_wait_ms),
                          launches_ran() + (atomic_load(&cuptitimer_off) ? 0 : e->own_launches));
        note_devices();
    }
    e->records_primary = cuptitimer_describe(r) && e->stopped;
}

/* ktime ctl reset: the records start afresh (on the drain thread, which parses them). */
static void cuptitimer_reset(void)
{
    hw_reset(cuptitimer_records());
    if (cuptitimer_unrecorded &&
        (unrecorded_base ||
         (unrecorded_base = calloc((size_t)kt.ktab.mask + 1, sizeof *unrecorded_base))))
        for (uint32_t id = 0; id <= kt.ktab.mask; id++)
            unrecorded_base[id] = atomic_load(&cuptitimer_unrecorded[id]);
}

const struct ktime_module cuptitimer_module = {
    .name = "cuptitimer",
    .start = cuptitimer_module_start,
    .first_launch = cuptitimer_start,
    .entry = cuptitimer_entry,
    .stop = cuptitimer_stop,
    .end = cuptitimer_end,
    .rows = cuptitimer_rows,
    .reset = cuptitimer_reset,
};
