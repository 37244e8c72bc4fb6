/* budget.c - KTIME_BUDGET (budget.h): the controller's windows on the drain thread's tick, the
 * costs it goes by, the kernels' rates in their table entries, the report's part. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "cuptitimer.h"
#include "log.h"
#include "module.h"
#include "state.h"

/* The costs the estimate goes by, in ns: what a timed launch's event pair adds to the GPU's
 * time where the GPU is behind, what a gate adds, ktime's part of a timed launch on the
 * launching thread, the drain's work on a sample, a launch ktime only counts, a launch CUPTI
 * records (beyond the untimed path), and switching CUPTI's kernel records off and on.
 * docs/always-on.md, "An overhead budget", says where the figures come from. */
static const struct bctl_costs costs = {
    .gpu_ns = 4300.0,
    .gate_ns = 2300.0,
    .launch_ns = 3000.0,
    .drain_ns = 500.0,
    .untimed_ns = 50.0,
    .cupti_ns = 180.0,
    .toggle_ns = 50000.0,
};

/* What the module knows of one kernel table entry at the last window (by ktab id). */
struct bk {
    uint64_t calls, drawn, dropped, timed; /* the counts then */
    uint64_t unrecorded;                   /* launches made while CUPTI's records were off */
    uint64_t timed_now, ungated_now;       /* gathered from the aggregates at each window */
    double sum_now;                        /* their samples' sum, us */
};

static struct {
    bool on;
    struct bctl ctl;
    struct bk *k;                 /* by ktab id, mask + 1 */
    struct bctl_kernel *w;        /* a window's kernels, for the controller */
    struct ktab_entry **e;        /* and their entries */
    double start_ms;              /* the window's start; < 0: none yet */
    double phase_end_ms;          /* CUPTI: when the on or off part of the cycle ends */
    double off_ms;                /* CUPTI: the off part of the cycle under way */
    uint64_t switches;            /* CUPTI: its on-off switches at the last window */
    struct report_budget rb;      /* the report's part */
} B;

const struct bctl_costs *budget_costs(void)
{
    return &costs;
}

static void budget_free(void)
{
    free(B.k);
    free(B.w);
    free(B.e);
    memset(&B, 0, sizeof B);
}

static bool budget_start(void)
{
    size_t n = (size_t)kt.ktab.mask + 1;

    budget_free();
    if (kt.cfg.budget <= 0)
        return false;
    if (kt.cfg.timer == TIMER_BOTH) {
        log_warn("KTIME_BUDGET=%ld works with KTIME_TIMER=events or cupti; with KTIME_TIMER=both "
                 "every launch is timed and the budget is off", kt.cfg.budget);
        return false;
    }
    B.k = calloc(n, sizeof *B.k);
    B.w = calloc(n, sizeof *B.w);
    B.e = calloc(n, sizeof *B.e);
    if (!B.k || !B.w || !B.e) {
        log_warn("out of memory at start-up; KTIME_BUDGET is off");
        budget_free();
        return false;
    }
    bctl_init(&B.ctl, (double)kt.cfg.budget / 100.0, (uint64_t)(uintptr_t)&B);
    B.start_ms = -1;
    B.on = true;
    return true;
}

static uint64_t grown(uint64_t now, uint64_t before)
{
    return now > before ? now - before : 0;
}

/* Each kernel's samples so far, from the drain's aggregates (all devices and ranges). */
static void gather_samples(void)
{
    struct agg *a, *tmp;

    for (uint32_t id = 0; id <= kt.ktab.mask; id++)
        B.k[id].timed_now = B.k[id].ungated_now = 0, B.k[id].sum_now = 0;
    HASH_ITER(hh, kt.drain.aggs, a, tmp) {
        if (a->kernel > kt.ktab.mask)
            continue;
        B.k[a->kernel].timed_now += a->st.n;
        B.k[a->kernel].ungated_now += a->ungated;
        B.k[a->kernel].sum_now += a->st.sum;
    }
}

/* Kernel table entry e's window, for the controller; its counts become the next base. */
static struct bctl_kernel window_of(struct ktab_entry *e, struct bk *k)
{
    uint64_t calls = atomic_load_explicit(&e->calls, memory_order_relaxed);
    uint64_t warm = atomic_load_explicit(&e->warmup, memory_order_relaxed);
    uint64_t drawn = grown(grown(calls, warm), BUDGET_FIRST);
    uint64_t dropped = atomic_load_explicit(&e->dropped, memory_order_relaxed);
    struct bctl_kernel w = {
        .seen = grown(calls, k->calls),
        .drawn = grown(drawn, k->drawn),
        .timed = grown(k->timed_now, k->timed),
        .gated_share = k->timed_now
                           ? (double)(k->timed_now - k->ungated_now) / (double)k->timed_now
                           : 0,
        .mean_ns = k->timed_now ? k->sum_now / (double)k->timed_now * 1000.0 : 0,
        .dropped = grown(dropped, k->dropped),
        .level = atomic_load_explicit(&e->level, memory_order_relaxed),
    };
    k->calls = calls;
    k->drawn = drawn;
    k->dropped = dropped;
    k->timed = k->timed_now;
    return w;
}

/* Whether the window goes to CUPTI's lever: CUPTI times the launches, and the launches made
 * while its records are off can be counted. Otherwise the events' rates (also after CUPTI was
 * handed over to another client). */
static bool cupti_lever(void)
{
    return atomic_load_explicit(&kt.timing, memory_order_relaxed) == TIMER_CUPTI &&
           cuptitimer_unrecorded;
}

/* The CUPTI timer's window: the launches since the last one, those made while the records were
 * off, the switches; the controller's duty for the cycles that follow. */
static double cupti_window(double window_ms)
{
    uint32_t used = atomic_load(&kt.ktab.count);
    uint64_t seen = 0, off = 0, switches = cuptitimer_switches();

    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(&kt.ktab, j);
        if (!e || atomic_load_explicit(&e->kind, memory_order_relaxed) != KTAB_KERNEL)
            continue;
        struct bk *k = &B.k[ktab_id(&kt.ktab, e)];
        uint64_t calls = atomic_load_explicit(&e->calls, memory_order_relaxed);
        uint64_t u = atomic_load_explicit(&cuptitimer_unrecorded[ktab_id(&kt.ktab, e)],
                                          memory_order_relaxed);
        seen += grown(calls, k->calls);
        off += grown(u, k->unrecorded);
        k->calls = calls;
        k->unrecorded = u;
    }
    double spent = bctl_cupti(&B.ctl, &costs, window_ms * 1e6, seen, seen > off ? seen - off : 0,
                              switches - B.switches, BUDGET_CYCLE_MS * 1e6);
    B.switches = switches;
    log_debug("budget: window %llu of %.3f ms: CUPTI on 1/%ld of the time; estimated cost "
              "%.3f %% of the run so far", (unsigned long long)B.ctl.windows, window_ms,
              1L << B.ctl.duty_level, 100.0 * bctl_share(&B.ctl));
    return spent;
}

/* The CUPTI timer's cycle at now_ms: its on part ends with the records switched off for its
 * off part (none at duty 0); its off part ends with them on again and a new cycle drawn. */
static void cupti_cycle(double now_ms)
{
    double on_ns, off_ns;

    /* Off while the controller now wants the records all the time (the launches grew longer,
     * or the run caught up): on at once, not at the end of the off part. */
    if (atomic_load(&cuptitimer_off) && B.ctl.duty_level == 0)
        B.phase_end_ms = now_ms;
    if (now_ms < B.phase_end_ms)
        return;
    if (!atomic_load(&cuptitimer_off) && B.off_ms > 0 && B.ctl.duty_level > 0 &&
        cuptitimer_switch(false)) {
        B.phase_end_ms = now_ms + B.off_ms;
        return;
    }
    if (atomic_load(&cuptitimer_off) && !cuptitimer_switch(true))
        return; /* CUPTI is no longer ktime's */
    bctl_cycle(&B.ctl, BUDGET_CYCLE_MS * 1e6, &on_ns, &off_ns);
    B.off_ms = off_ns / 1e6;
    B.phase_end_ms = now_ms + on_ns / 1e6;
}

double budget_window(double window_ms)
{
    uint32_t used = atomic_load(&kt.ktab.count);
    size_t n = 0;

    if (!B.on)
        return 0;
    if (cupti_lever())
        return cupti_window(window_ms);
    gather_samples();
    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(&kt.ktab, j);
        if (!e || atomic_load_explicit(&e->kind, memory_order_relaxed) == KTAB_MEMOP)
            continue;
        B.w[n] = window_of(e, &B.k[ktab_id(&kt.ktab, e)]);
        B.e[n++] = e;
    }
    double spent = bctl_events(&B.ctl, &costs, window_ms * 1e6, B.w, n);
    for (size_t i = 0; i < n; i++)
        if (atomic_load_explicit(&B.e[i]->level, memory_order_relaxed) != B.w[i].level)
            atomic_store_explicit(&B.e[i]->level, (uint8_t)B.w[i].level, memory_order_relaxed);
    log_debug("budget: window %llu of %.3f ms: estimated cost %.3f %% of the run so far",
              (unsigned long long)B.ctl.windows, window_ms, 100.0 * bctl_share(&B.ctl));
    return spent;
}

static void budget_tick(const struct module_tick *t)
{
    if (B.start_ms < 0) {
        B.start_ms = t->now_ms;
        B.phase_end_ms = t->now_ms + BUDGET_CYCLE_MS; /* the first cycle: on */
        return;
    }
    double window = t->now_ms - B.start_ms;
    if (window >= (B.ctl.windows ? BUDGET_WINDOW_MS : BUDGET_FIRST_WINDOW_MS)) {
        pthread_mutex_lock(&kt.drain.pass_lock);
        budget_window(window);
        pthread_mutex_unlock(&kt.drain.pass_lock);
        B.start_ms = t->now_ms;
    }
    if (cupti_lever())
        cupti_cycle(t->now_ms);
}

void budget_cycle(double now_ms)
{
    if (B.on && cupti_lever())
        cupti_cycle(now_ms);
}

/* ktime ctl reset empties the aggregates: the samples' bases start afresh. */
static void budget_reset(void)
{
    for (uint32_t id = 0; id <= kt.ktab.mask; id++)
        B.k[id].timed = 0;
}

static void budget_header(struct report *r)
{
    B.rb = (struct report_budget){
        .percent = kt.cfg.budget,
        .windows = B.ctl.windows,
        .wall_ms = B.ctl.wall_ns / 1e6,
        .spent_ms = B.ctl.spent_ns / 1e6,
        .estimated_percent = 100.0 * bctl_share(&B.ctl),
        .timed_ns = B.ctl.timed_ns,
        .cupti = cupti_lever() || cuptitimer_unrecorded_total(),
        .cupti_on_1_in = 1L << B.ctl.duty_level,
        .unrecorded = cuptitimer_unrecorded_total(),
    };
    r->budget = &B.rb;
}

/* Each row's rate at the end: the sparsest of its entries'. */
static int budget_rows(struct report *r, const struct module_rows *m)
{
    for (uint32_t id = 0; id <= m->mask; id++) {
        if (!m->row_of[id])
            continue;
        int level = atomic_load_explicit(&kt.ktab.slots[id].level, memory_order_relaxed);
        if (cupti_lever() && B.ctl.duty_level > level)
            level = B.ctl.duty_level; /* CUPTI: every kernel recorded 1/2^level of the time */
        struct report_kernel *k = &r->kernels[m->row_of[id] - 1];
        if (level > k->sample_level)
            k->sample_level = level;
    }
    return 0;
}

const struct ktime_module budget_module = {
    .name = "budget",
    .start = budget_start,
    .header = budget_header,
    .rows = budget_rows,
    .reset = budget_reset,
    .tick = budget_tick,
};
