/* budget.c - KTIME_BUDGET (budget.h): the controller's windows on the drain thread's tick, the
 * costs it goes by, the kernels' rates in their table entries, the report's part. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "budget.h"

#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "log.h"
#include "module.h"
#include "state.h"

/* The costs the estimate goes by, in ns: what a timed launch's event pair adds to the GPU's
 * time where the GPU is behind, what a gate adds, ktime's part of a timed launch on the
 * launching thread, the drain's work on a sample, and a launch ktime only counts.
 * docs/always-on.md, "An overhead budget", says where the figures come from. */
static const struct bctl_costs costs = {
    .gpu_ns = 4300.0,
    .gate_ns = 2300.0,
    .launch_ns = 3000.0,
    .drain_ns = 500.0,
    .untimed_ns = 50.0,
    .cupti_ns = 300.0,
    .toggle_ns = 50000.0,
};

/* What the module knows of one kernel table entry at the last window (by ktab id). */
struct bk {
    uint64_t calls, drawn, dropped, timed; /* the counts then */
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
    if (kt.cfg.timer != TIMER_EVENTS) {
        log_warn("KTIME_BUDGET=%ld works with KTIME_TIMER=events only; with KTIME_TIMER=%s "
                 "every launch is timed and the budget is off", kt.cfg.budget,
                 timer_kind_name(kt.cfg.timer));
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

double budget_window(double window_ms)
{
    uint32_t used = atomic_load(&kt.ktab.count);
    size_t n = 0;

    if (!B.on)
        return 0;
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
        return;
    }
    double window = t->now_ms - B.start_ms;
    if (window < (B.ctl.windows ? BUDGET_WINDOW_MS : BUDGET_FIRST_WINDOW_MS))
        return;
    pthread_mutex_lock(&kt.drain.pass_lock);
    budget_window(window);
    pthread_mutex_unlock(&kt.drain.pass_lock);
    B.start_ms = t->now_ms;
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
