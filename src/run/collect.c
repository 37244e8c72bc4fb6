/* collect.c - the report's rows, from the kernel table and the drain's aggregates. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "collect.h"

#include <stdlib.h>
#include <string.h>

#include "modules.h"
#include "rebase.h"
#include "state.h"
#include "sysinfo.h"

/* Rows by mangled name. */
struct name_row {
    const char *name;
    struct report_kernel *rk;
    UT_hash_handle hh;
};

/* What collect_kernels() works with while it gathers the rows. */
struct gather {
    struct report *r;
    struct report_kernel *ks; /* the rows, n of them */
    size_t n;
    struct name_row *byname;  /* the rows by mangled name */
    uint32_t *row_of;         /* kernel-table id -> 1 + its row */
};

/* The row named name, made when there is none (with kind, and its demangled name for a
 * kernel); NULL when out of memory. */
static struct report_kernel *row_for(struct gather *g, const char *name, uint16_t kind)
{
    struct report_kernel *rk;
    struct name_row *nr;

    HASH_FIND_STR(g->byname, name, nr);
    if (nr)
        return nr->rk;
    rk = &g->ks[g->n];
    rk->mangled = name;
    rk->kind = kind == KTAB_GRAPH ? REPORT_GRAPH : kind == KTAB_MEMOP ? REPORT_MEMOP : REPORT_KERNEL;
    rk->per_dev = calloc((size_t)(g->r->ndevices ? g->r->ndevices : 1), sizeof *rk->per_dev);
    nr = calloc(1, sizeof *nr);
    if (!rk->per_dev || !nr) {
        free(rk->per_dev);
        free(nr);
        memset(rk, 0, sizeof *rk);
        return NULL;
    }
    if (rk->kind == REPORT_KERNEL)
        rk->name = sysinfo_demangle(name);
    g->n++;
    nr->name = name;
    nr->rk = rk;
    HASH_ADD_KEYPTR(hh, g->byname, nr->name, strlen(nr->name), nr);
    return rk;
}

/* Adds entry e's launch counts (since the last reset: rebase.h) to its row (by name). live:
 * while the program runs, an entry not yet named is left for the next time (it is named just
 * after it is made). */
static void gather_entry(struct gather *g, struct ktab_entry *e, bool live)
{
    uint32_t id = ktab_id(&kt.ktab, e);
    struct report_kernel part = { 0 }, *rk;
    uint64_t calls, captured, shutdown, warmup, dropped, failed;
    struct rebase_entry b;
    const char *name;

    /* Other threads may still be launching: read what a launch adds to last (failed,
     * dropped, the modules' counts) before what it adds to first (calls), so that every
     * launch counted in a bucket is counted in calls too. After a reset, each less its base
     * (the modules subtract their own). */
    rebase_entry(id, &b);
    failed = rebase_sub(atomic_load(&e->failed), b.failed);
    dropped = rebase_sub(atomic_load(&e->dropped), b.dropped);
    modules_entry(id, &part);
    shutdown = rebase_sub(atomic_load(&e->shutdown), b.shutdown);
    captured = rebase_sub(atomic_load(&e->captured), b.captured);
    warmup = rebase_sub(atomic_load(&e->warmup), b.warmup);
    calls = rebase_sub(atomic_load(&e->calls), b.calls);
    name = atomic_load(&e->name);
    /* Graphs instantiated but never launched make no row. */
    if ((!calls && !captured && !shutdown) || (!name && live) ||
        !(rk = row_for(g, name ? name : "<unnamed>", atomic_load(&e->kind)))) {
        free((char *)part.name);
        return;
    }
    /* calls leaves out captured launches: those never ran, and are no warmup. */
    rk->calls += calls + captured + shutdown;
    rk->warmup_skipped += warmup;
    rk->captured += captured;
    rk->dropped += dropped + shutdown;
    g->r->drops[DROP_SHUTDOWN] += shutdown;
    rk->failed += failed;
    rk->outside_range += part.outside_range;
    rk->paused += part.paused;
    rk->unsampled += part.unsampled;
    rk->bytes += part.bytes;
    if (!rk->name)
        rk->name = part.name;
    else
        free((char *)part.name);
    g->row_of[id] = (uint32_t)(rk - g->ks) + 1;
}

/* Adds the drain's aggregates (the samples, and the drops and incomplete pairs it found) to
 * the rows. */
static void gather_aggs(struct gather *g, struct agg *aggs)
{
    struct report *r = g->r;
    struct report_kernel *ks = g->ks;
    struct agg *a, *atmp;

    HASH_ITER(hh, aggs, a, atmp) {
        uint32_t row = a->kernel <= kt.ktab.mask ? g->row_of[a->kernel] : 0;
        int d = report_device_index(r, a->device);
        if (!row || d < 0)
            continue;
        stats_merge(&ks[row - 1].per_dev[d], &a->st);
        if (a->st.n)
            report_row_add_sketch(r, &ks[row - 1], d, &a->sk);
        if (shape_merge(&ks[row - 1].shapes, a->shapes) != 0)
            report_shapes_short();
        /* Pairs the driver could not resolve are drops of reason event_error. */
        ks[row - 1].dropped += a->errors + a->forced;
        r->drops[DROP_GATE_TIMEOUT] += a->forced;
        ks[row - 1].incomplete += a->incomplete;
        ks[row - 1].ungated += a->ungated;
        ks[row - 1].wsum += a->wsum;
        ks[row - 1].wn += a->wn;
        ks[row - 1].timed_bytes += a->bytes;
        r->drops[DROP_EVENT_ERROR] += a->errors;
    }
}

/* Every launch is in calls; what no bucket holds is either a launch other threads were still
 * making when the report began (counted at its start, its pair submitted after the last
 * drain, or not yet timed, dropped or failed): incomplete at exit; or, with KTIME_SAMPLE or
 * KTIME_BUDGET, a
 * launch the draw left untimed (those still being made are among them). When records are the
 * samples (the CUPTI timer), its module does the accounting, but for memory operations
 * (always timed with events). */
static void account_rest(struct gather *g, bool records_primary)
{
    for (size_t i = 0; i < g->n; i++) {
        struct report_kernel *k = &g->ks[i];
        if (records_primary && k->kind != REPORT_MEMOP)
            continue;
        uint64_t known = k->warmup_skipped + k->captured + k->dropped + k->failed + k->incomplete +
                         k->outside_range + k->paused;

        for (int d = 0; d < g->r->ndevices; d++)
            known += k->per_dev[d].n;
        if (k->calls <= known)
            continue;
        if (kt.cfg.sample > 1 || kt.cfg.budget > 0)
            k->unsampled = k->calls - known;
        else
            k->incomplete += k->calls - known;
    }
}

int collect_kernels(struct report *r, bool with_aggs, bool records_primary, bool live)
{
    uint32_t used = atomic_load(&kt.ktab.count);
    struct gather g = { .r = r };
    struct name_row *nr, *tmp;
    /* A drain thread that did not stop may still be changing the aggregates. */
    struct agg *aggs = with_aggs ? kt.drain.aggs : NULL;
    int rc;

    r->kernels = NULL;
    r->nkernels = 0;
    g.ks = calloc((size_t)used + 1, sizeof *g.ks);
    g.row_of = calloc((size_t)kt.ktab.mask + 1, sizeof *g.row_of);
    if (!g.ks || !g.row_of) {
        free(g.ks);
        free(g.row_of);
        return -1;
    }
    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(&kt.ktab, j);
        if (e)
            gather_entry(&g, e, live);
    }
    gather_aggs(&g, aggs);
    HASH_ITER(hh, g.byname, nr, tmp) {
        HASH_DEL(g.byname, nr);
        free(nr);
    }
    if (with_aggs)
        account_rest(&g, records_primary);
    r->kernels = g.ks;
    r->nkernels = g.n;
    r->kernels_cap = (size_t)used + 1;
    struct module_rows m = { .row_of = g.row_of, .mask = kt.ktab.mask, .aggs = aggs,
                             .stopped = with_aggs, .records_primary = records_primary,
                             .live = live };
    rc = modules_rows(r, &m);
    free(g.row_of);
    return rc;
}

int collect_gather(struct report *r, bool with_aggs, bool records_primary, bool live)
{
    uint64_t drops[DROP_NREASONS], before;

    /* A launch another thread is still making may drop while the rows are gathered: its
     * reason (kt.drops) and its row (k->dropped) would then be read at different moments, and
     * the reasons not add up to the rows' drops. Gather again (a few times at most) until no
     * drop came in between. */
    for (int tries = 0;; tries++) {
        before = 0;
        for (int i = 0; i < DROP_NREASONS; i++)
            before += atomic_load(&kt.drops[i]);
        memset(r->drops, 0, sizeof r->drops);
        if (collect_kernels(r, with_aggs, records_primary, live) != 0) {
            collect_free(r);
            return -1;
        }
        uint64_t after = 0;
        for (int i = 0; i < DROP_NREASONS; i++)
            after += drops[i] = atomic_load(&kt.drops[i]);
        if (after == before || tries == 3)
            break;
        collect_free(r);
    }
    for (int i = 0; i < DROP_NREASONS; i++)
        r->drops[i] += rebase_sub(drops[i], rebase_drop(i));
    return 0;
}

void collect_free(struct report *r)
{
    for (size_t i = 0; i < r->nranges_by_name; i++) {
        for (size_t j = 0; j < r->ranges_by_name[i].nrows; j++)
            free(r->ranges_by_name[i].rows[j].sk);
        free(r->ranges_by_name[i].rows);
    }
    free(r->ranges_by_name);
    r->ranges_by_name = NULL;
    r->nranges_by_name = 0;
    report_rows_free(r->memops_rows, r->nmemops);
    free(r->memops_rows);
    r->memops_rows = NULL;
    r->nmemops = 0;
    report_rows_free(r->kernels, r->nkernels);
    free(r->kernels);
    r->kernels = NULL;
    r->nkernels = 0;
}
