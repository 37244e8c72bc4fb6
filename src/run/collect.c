/* collect.c - the report's rows, from the kernel table and the drain's aggregates. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "collect.h"
#include "floor.h"
#include "log.h"

#include <stdlib.h>
#include <string.h>

#include "busy.h"
#include "comm.h"
#include "launches.h"
#include "memop.h"
#include "region.h"
#include "state.h"
#include "sysinfo.h"

/* Out of memory merging launch shapes: a kernel's shapes no longer hold all its samples. */
static void shapes_short(void)
{
    static bool said;

    if (!said)
        log_warn("out of memory: the launch shapes of some kernels miss samples (their rows "
                 "and totals are whole)");
    said = true;
}

static int device_index(const struct report *r, int ordinal)
{
    for (int i = 0; i < r->ndevices; i++)
        if (r->devices[i].ordinal == ordinal)
            return i;
    return -1;
}

/* Rows by mangled name. */
struct name_row {
    const char *name;
    struct report_kernel *rk;
    UT_hash_handle hh;
};

/* Adds the samples of s, from device index d, to the row's distributions, all devices and
 * d's own (made on first use; without memory the row has no quantiles, nothing else is
 * lost). */
static void merge_sketch(const struct report *r, struct report_kernel *rk, int d,
                         const struct sketch *s)
{
    if (!rk->sk && !(rk->sk = calloc(1, sizeof *rk->sk)))
        return;
    sketch_merge(rk->sk, s);
    if (!rk->dev_sk &&
        !(rk->dev_sk = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->dev_sk)))
        return;
    sketch_merge(&rk->dev_sk[d], s);
}

static int cmp_region_rows(const void *a, const void *b)
{
    const struct report_region_row *x = a, *y = b;

    if (x->st.sum != y->st.sum)
        return x->st.sum < y->st.sum ? 1 : -1;
    return strcmp(x->mangled, y->mangled);
}

static int cmp_regions(const void *a, const void *b)
{
    const struct report_region *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us < y->total_us ? 1 : -1;
    if (!x->name || !y->name)
        return !x->name - !y->name; /* outside every range last among equals */
    return strcmp(x->name, y->name);
}

/* Adds a kernel's samples made in range `region` (st, sk) to its range's row of kernel k.
 * group maps a range id to 1 + its index in r->regions (0: none yet; the launches outside
 * every range get a group of their own, room kept). */
static void region_add(struct report *r, uint32_t *group, uint32_t region,
                       const struct report_kernel *k, const struct stats *st,
                       const struct sketch *sk)
{
    if (region >= REGION_SLOTS + 2 || (region && !group[region]))
        return;
    if (!group[region]) { /* outside every range: a group of its own, room kept */
        r->regions[r->nregions].name = NULL;
        group[region] = (uint32_t)++r->nregions;
    }
    struct report_region *g = &r->regions[group[region] - 1];
    struct report_region_row *rr = NULL;
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i].mangled == k->mangled)
            rr = &g->rows[i];
    if (!rr) {
        struct report_region_row *more = realloc(g->rows, (g->nrows + 1) * sizeof *more);
        if (!more)
            return; /* without memory the range misses this kernel; nothing else is lost */
        g->rows = more;
        rr = &g->rows[g->nrows++];
        memset(rr, 0, sizeof *rr);
        rr->mangled = k->mangled;
        rr->name = k->name;
        rr->kind = k->kind;
    }
    stats_merge(&rr->st, st);
    if (rr->sk || (rr->sk = calloc(1, sizeof *rr->sk)))
        sketch_merge(rr->sk, sk);
    g->total_us += st->sum;
    g->timed += st->n;
}

/* The launches' samples by the range they were made in (aggregates keyed by range), with every
 * range that was pushed, launches or not. Kernel rows are ks's (before memory operations are
 * split off), row_of maps a kernel-table id to 1 + its row. */
static int collect_regions(struct report *r, struct report_kernel *ks, const uint32_t *row_of,
                           uint32_t mask, struct agg *aggs)
{
    uint32_t *group = NULL; /* region id -> 1 + its index in r->regions */
    struct agg *a, *atmp;
    size_t cap = REGION_SLOTS + 2;
    /* Every name interned, the overflow entry and the launches outside every range; a name
     * interned while this runs may find no room (its range is then left out). */
    size_t ngroups = atomic_load(&region_stats.names) + 2;

    r->regions = NULL;
    r->nregions = 0;
    if (!region_any())
        return 0;
    if (!(group = calloc(cap, sizeof *group)) ||
        !(r->regions = calloc(ngroups, sizeof *r->regions))) {
        free(group);
        return -1;
    }
    for (uint32_t id = 1; id < cap && r->nregions + 1 < ngroups; id++) {
        const struct region_entry *e = region_entry_of(id);
        const char *name = region_name(id);
        if (!e || !name)
            continue;
        struct report_region *g = &r->regions[r->nregions++];
        g->name = name;
        g->ranges = e->pushes;
        g->open = e->open;
        g->wall_ms = (double)e->wall_ns / 1e6;
        group[id] = (uint32_t)r->nregions;
    }
    HASH_ITER(hh, aggs, a, atmp) {
        uint32_t row = a->kernel <= mask ? row_of[a->kernel] : 0;
        if (!row || !a->st.n || ks[row - 1].kind == REPORT_MEMOP)
            continue;
        region_add(r, group, a->region, &ks[row - 1], &a->st, &a->sk);
    }
    r->region_group = group;
    return 0;
}

/* Drops the names interned but never pushed, and sorts the ranges and their rows. */
static void regions_finish(struct report *r)
{
    /* Names interned but never pushed (KTIME_RANGE=nvtx:NAME's, the overflow entry) are no
     * ranges of the run. */
    size_t kept = 0;
    for (size_t i = 0; i < r->nregions; i++)
        if (r->regions[i].ranges || r->regions[i].open || r->regions[i].nrows)
            r->regions[kept++] = r->regions[i];
    r->nregions = kept;
    for (size_t i = 0; i < r->nregions; i++)
        if (r->regions[i].nrows > 1)
            qsort(r->regions[i].rows, r->regions[i].nrows, sizeof *r->regions[i].rows,
                  cmp_region_rows);
    qsort(r->regions, r->nregions, sizeof *r->regions, cmp_regions);
    r->region_unmatched_pops = atomic_load(&region_stats.unmatched_pops);
    r->region_too_deep = atomic_load(&region_stats.too_deep);
    free(r->region_group);
    r->region_group = NULL;
}

static void free_rows(struct report_kernel *rows, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        free(rows[i].per_dev);
        free(rows[i].hw);
        free(rows[i].sk);
        free(rows[i].dev_sk);
        shape_set_free(rows[i].shapes);
        free((char *)rows[i].name);
    }
}

/* Moves the memory operations' rows out of r->kernels into r->memops_rows, by kind. */
static int split_memops(struct report *r)
{
    size_t m = 0, n = 0;

    r->memops_rows = NULL;
    r->nmemops = 0;
    for (size_t i = 0; i < r->nkernels; i++)
        m += r->kernels[i].kind == REPORT_MEMOP;
    if (!m)
        return 0;
    if (!(r->memops_rows = calloc(m, sizeof *r->memops_rows)))
        return -1;
    for (int kind = 0; kind < MEMOP_NKINDS; kind++)
        for (size_t i = 0; i < r->nkernels; i++)
            if (r->kernels[i].kind == REPORT_MEMOP && r->kernels[i].name &&
                strcmp(r->kernels[i].name, memop_label(kind)) == 0)
                r->memops_rows[r->nmemops++] = r->kernels[i];
    for (size_t i = 0; i < r->nkernels; i++) {
        if (r->kernels[i].kind != REPORT_MEMOP)
            r->kernels[n++] = r->kernels[i];
        else if (!r->kernels[i].name) /* its label could not be copied: not shown */
            free_rows(&r->kernels[i], 1);
    }
    r->nkernels = n;
    return 0;
}

int collect_kernels(struct report *r, bool with_aggs, bool hw_primary)
{
    struct ktab *t = &kt.ktab;
    uint32_t used = atomic_load(&t->count);
    /* Room for the kernels CUPTI saw run only in graphs, too (collect_hw). */
    size_t cap = (size_t)used + HASH_COUNT(kt.hw.byname) + 1;
    struct report_kernel *ks = calloc(cap, sizeof *ks);
    struct name_row *byname = NULL, *nr, *tmp;
    struct agg *a, *atmp;
    size_t n = 0;
    uint32_t *row_of = calloc((size_t)t->mask + 1, sizeof *row_of);

    r->kernels = NULL;
    r->nkernels = 0;
    if (!ks || !row_of) {
        free(ks);
        free(row_of);
        return -1;
    }
    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(t, j);
        const char *name;
        struct report_kernel *rk;
        uint64_t calls, captured, shutdown, warmup, dropped, failed, outside;

        if (!e)
            continue;
        /* Other threads may still be launching (at exit): read what a launch adds to last
         * (failed, dropped) before what it adds to first (calls), so that every launch counted
         * in a bucket is counted in calls too. */
        failed = atomic_load(&e->failed);
        dropped = atomic_load(&e->dropped);
        outside = kt.outside ? atomic_load(&kt.outside[ktab_id(t, e)]) : 0;
        shutdown = atomic_load(&e->shutdown);
        captured = atomic_load(&e->captured);
        warmup = atomic_load(&e->warmup);
        calls = atomic_load(&e->calls);
        /* Graphs instantiated but never launched make no row. */
        if (!calls && !captured && !shutdown)
            continue;
        name = atomic_load(&e->name);
        if (!name)
            name = "<unnamed>";
        HASH_FIND_STR(byname, name, nr);
        if (nr) {
            rk = nr->rk;
        } else {
            rk = &ks[n++];
            rk->mangled = name;
            uint16_t kind = atomic_load(&e->kind);
            rk->kind = kind == KTAB_GRAPH   ? REPORT_GRAPH
                       : kind == KTAB_MEMOP ? REPORT_MEMOP
                                            : REPORT_KERNEL;
            rk->per_dev = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->per_dev);
            nr = calloc(1, sizeof *nr);
            if (!rk->per_dev || !nr) {
                free(rk->per_dev);
                free(nr);
                memset(rk, 0, sizeof *rk);
                n--;
                continue;
            }
            if (rk->kind == REPORT_KERNEL)
                rk->name = sysinfo_demangle(name);
            if (rk->kind == REPORT_MEMOP) {
                int mk = memop_kind_of_key(atomic_load(&e->key));
                /* A retired key is never a memory operation's: they are never retired. */
                rk->name = mk >= 0 ? strdup(memop_label(mk)) : NULL;
                rk->bytes = mk >= 0 ? atomic_load(&kt.memop_bytes[mk]) : 0;
            }
            nr->name = name;
            nr->rk = rk;
            HASH_ADD_KEYPTR(hh, byname, nr->name, strlen(nr->name), nr);
        }
        /* calls leaves out captured launches: those never ran, and are no warmup. */
        rk->calls += calls + captured + shutdown;
        rk->warmup_skipped += warmup;
        rk->captured += captured;
        rk->dropped += dropped + shutdown;
        r->drops[DROP_SHUTDOWN] += shutdown;
        rk->failed += failed;
        rk->outside_range += outside;
        row_of[ktab_id(t, e)] = (uint32_t)(rk - ks) + 1;
    }
    /* A drain thread that did not stop may still be changing the aggregates. */
    struct agg *aggs = with_aggs ? kt.drain.aggs : NULL;
    HASH_ITER(hh, aggs, a, atmp) {
        uint32_t row = a->kernel <= t->mask ? row_of[a->kernel] : 0;
        int d = device_index(r, a->device);
        if (!row || d < 0)
            continue;
        stats_merge(&ks[row - 1].per_dev[d], &a->st);
        if (a->st.n)
            merge_sketch(r, &ks[row - 1], d, &a->sk);
        if (shape_merge(&ks[row - 1].shapes, a->shapes) != 0)
            shapes_short();
        /* Pairs the driver could not resolve are drops of reason event_error. */
        ks[row - 1].dropped += a->errors + a->forced;
        r->drops[DROP_GATE_TIMEOUT] += a->forced;
        ks[row - 1].incomplete += a->incomplete;
        ks[row - 1].ungated += a->ungated;
        ks[row - 1].timed_bytes += a->bytes;
        r->drops[DROP_EVENT_ERROR] += a->errors;
    }
    HASH_ITER(hh, byname, nr, tmp) {
        HASH_DEL(byname, nr);
        free(nr);
    }
    if (collect_regions(r, ks, row_of, t->mask, aggs) != 0) {
        free(r->regions);
        r->regions = NULL;
        r->nregions = 0;
    } else if (r->regions && !(hw_primary && with_aggs)) {
        regions_finish(r); /* else collect_hw adds CUPTI's records first */
    }
    free(row_of);
    /* Every launch is in calls; what no bucket holds is either a launch other threads were
     * still making when the report began (counted at its start, its pair submitted after the
     * last drain, or not yet timed, dropped or failed): incomplete at exit; or, with
     * KTIME_SAMPLE, a launch the draw left untimed (those still being made are among them).
     * Under the CUPTI timer, collect_hw() does the accounting, but for memory operations
     * (always timed with events). */
    for (size_t i = 0; with_aggs && i < n; i++) {
        struct report_kernel *k = &ks[i];
        if (hw_primary && k->kind != REPORT_MEMOP)
            continue;
        uint64_t known = k->warmup_skipped + k->captured + k->dropped + k->failed + k->incomplete +
                         k->outside_range;

        for (int d = 0; d < r->ndevices; d++)
            known += k->per_dev[d].n;
        if (k->calls <= known)
            continue;
        if (kt.cfg.sample > 1)
            k->unsampled = k->calls - known;
        else
            k->incomplete += k->calls - known;
    }
    r->kernels = ks;
    r->nkernels = n;
    r->kernels_cap = cap;
    return split_memops(r);
}

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

int collect_hw(struct report *r, bool hw_primary)
{
    struct hw_kernel *hk, *tmp;

    HASH_ITER(hh, kt.hw.byname, hk, tmp) {
        if (strcmp(hk->name, FLOOR_KERNEL) == 0) {
            /* ktime's own empty kernel: the hardware floor of each device, not a row. */
            for (struct hw_dev *hd = hk->devs; hd; hd = hd->next) {
                int d = device_index(r, hd->device);
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
            int d = device_index(r, hd->device);
            if (d < 0)
                continue;
            stats_merge(hw_primary ? &rk->per_dev[d] : &rk->hw[d], &hd->st);
            if (hw_primary && hd->st.n) {
                rk->hw_timed += hd->st.n;
                merge_sketch(r, rk, d, &hd->sk);
                if (shape_merge(&rk->shapes, hd->shapes) != 0)
                    shapes_short();
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
        /* KTIME_RANGE: a record whose launch CUPTI never described is no sample; a record of
         * a launch outside the range is that launch, counted outside at the launch. */
        rk->incomplete += hk->bad + hk->unknown + (direct > covered ? direct - covered : 0);
    }
    /* Kernels of which no record came at all: what ran after warmup is incomplete. A graph
     * launch after warmup that got no event (none before a hand-over) was timed by its
     * kernel nodes' records, in their rows: the graph has no sample of its own. */
    for (size_t i = 0; hw_primary && i < r->nkernels; i++) {
        struct report_kernel *rk = &r->kernels[i];
        uint64_t ev_timed = 0, direct, covered, rest;
        if (rk->kind == REPORT_KERNEL && hw_find(&kt.hw, rk->mangled))
            continue;
        for (int d = 0; d < r->ndevices; d++)
            ev_timed += rk->per_dev[d].n;
        direct = rk->calls - rk->captured - rk->failed;
        covered = rk->warmup_skipped + ev_timed + rk->dropped + rk->incomplete;
        rest = direct > covered ? direct - covered : 0;
        if (rk->kind == REPORT_GRAPH)
            rk->by_nodes = rest;
        else
            rk->incomplete += rest;
    }
    if (hw_primary && r->regions) {
        /* CUPTI's records by the range their launch was made in (its external id). */
        HASH_ITER(hh, kt.hw.byname, hk, tmp) {
            struct report_kernel *rk = NULL;
            for (size_t i = 0; i < r->nkernels && !rk; i++)
                if (r->kernels[i].kind == REPORT_KERNEL && strcmp(r->kernels[i].mangled, hk->name) == 0)
                    rk = &r->kernels[i];
            for (struct hw_dev *hd = hk->devs; rk && hd; hd = hd->next)
                if (hd->st.n)
                    region_add(r, r->region_group, hd->range, rk, &hd->st, &hd->sk);
        }
        regions_finish(r);
    }
    return 0;
}

void collect_modules(struct report *r, bool stopped)
{
    struct report_busy *b = stopped ? busy_report() : NULL;

    for (size_t i = 0; i < r->nkernels; i++)
        r->kernels[i].launch = launches_of(r->kernels[i].mangled);
    comm_report(b);
    r->busy = b;
    r->comm_pattern = busy_on() ? comm_pattern() : NULL;
    r->launch_columns = kt.cfg.launch_columns;
}

void collect_free(struct report *r)
{
    free(r->region_group);
    r->region_group = NULL;
    for (size_t i = 0; i < r->nregions; i++) {
        for (size_t j = 0; j < r->regions[i].nrows; j++)
            free(r->regions[i].rows[j].sk);
        free(r->regions[i].rows);
    }
    free(r->regions);
    r->regions = NULL;
    r->nregions = 0;
    free_rows(r->memops_rows, r->nmemops);
    free(r->memops_rows);
    r->memops_rows = NULL;
    r->nmemops = 0;
    free_rows(r->kernels, r->nkernels);
    free(r->kernels);
    r->kernels = NULL;
    r->nkernels = 0;
}
