/* ranges.c - the program's own ranges (NVTX ranges, ktime_range_push): which open range a
 * launch belongs to, NVTX's injection offered to the program, and the report's section of the
 * launches by range. The stacks and names are rangestack.c's; the NVTX tool's entry points are
 * src/hook/nvtx.c's. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "cuptitimer.h"
#include "log.h"
#include "module.h"
#include "rangestack.h"
#include "state.h"

/* KTIME_NVTX=1: NVTX's loader is to load libktime as its tool, unless another tool (Nsight
 * Systems) is named already. */
static void nvtx_offer(void)
{
    Dl_info info;
    const char *set = getenv("NVTX_INJECTION64_PATH");

    if (set && *set) {
        log_info("NVTX_INJECTION64_PATH is set (%s): NVTX ranges go to that tool, not ktime", set);
        return;
    }
    if (dladdr((void *)nvtx_offer, &info) && info.dli_fname && info.dli_fname[0] == '/')
        setenv("NVTX_INJECTION64_PATH", info.dli_fname, 0);
}

static bool ranges_start(void)
{
    range_set_outermost(kt.cfg.range_attribution == RANGES_OUTERMOST);
    if (kt.cfg.nvtx)
        nvtx_offer();
    return true;
}

/* How NVTX reached ktime, for the ranges' section. */
static const char *nvtx_state(void)
{
    const char *path = getenv("NVTX_INJECTION64_PATH");

    if (range_nvtx_tool())
        return "ktime is NVTX's tool (NVTX_INJECTION64_PATH)";
    if (path && *path && !strstr(path, "libktime"))
        return "another tool is NVTX's (NVTX_INJECTION64_PATH), so NVTX ranges are not seen; "
               "only ktime_range_push";
    return "not NVTX's tool (KTIME_NVTX=1 or the ktime launcher makes it one); only "
           "ktime_range_push";
}

static void ranges_header(struct report *r)
{
    r->range_attribution = range_attribution_name(kt.cfg.range_attribution);
    r->nvtx = nvtx_state();
}

static int cmp_range_rows(const void *a, const void *b)
{
    const struct report_range_row *x = a, *y = b;

    if (x->st.sum != y->st.sum)
        return x->st.sum < y->st.sum ? 1 : -1;
    return strcmp(x->mangled, y->mangled);
}

static int cmp_ranges(const void *a, const void *b)
{
    const struct report_range *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us < y->total_us ? 1 : -1;
    if (!x->name || !y->name)
        return !x->name - !y->name; /* outside every range last among equals */
    return strcmp(x->name, y->name);
}

/* Range id -> 1 + its index in r->ranges_by_name while the ranges are gathered (gather_ranges to
 * ranges_finish; 0: none yet). */
static uint32_t *group;

/* Adds a kernel's samples made in range `range` (st, sk) to its range's row of kernel
 * (mangled, name, kind); the launches outside every range get a group of their own, room
 * kept. */
static void range_add(struct report *r, uint32_t range, const char *mangled, const char *name,
                      int kind, const struct stats *st, const struct sketch *sk)
{
    if (range >= RANGE_SLOTS + 2 || (range && !group[range]))
        return;
    if (!group[range]) { /* outside every range: a group of its own, room kept */
        r->ranges_by_name[r->nranges_by_name].name = NULL;
        group[range] = (uint32_t)++r->nranges_by_name;
    }
    struct report_range *g = &r->ranges_by_name[group[range] - 1];
    struct report_range_row *rr = NULL;
    for (size_t i = 0; i < g->nrows; i++)
        if (g->rows[i].mangled == mangled)
            rr = &g->rows[i];
    if (!rr) {
        struct report_range_row *more = realloc(g->rows, (g->nrows + 1) * sizeof *more);
        if (!more)
            return; /* without memory the range misses this kernel; nothing else is lost */
        g->rows = more;
        rr = &g->rows[g->nrows++];
        memset(rr, 0, sizeof *rr);
        rr->mangled = mangled;
        rr->name = name;
        rr->kind = kind;
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
static int gather_ranges(struct report *r, struct report_kernel *ks, const uint32_t *row_of,
                         uint32_t mask, struct agg *aggs)
{
    struct agg *a, *atmp;
    size_t cap = RANGE_SLOTS + 2;
    /* Every name interned, the overflow entry and the launches outside every range; a name
     * interned while this runs may find no room (its range is then left out). */
    size_t ngroups = atomic_load(&range_stats.names) + 2;

    r->ranges_by_name = NULL;
    r->nranges_by_name = 0;
    free(group);
    group = NULL;
    if (!range_any())
        return 0;
    if (!(group = calloc(cap, sizeof *group)) ||
        !(r->ranges_by_name = calloc(ngroups, sizeof *r->ranges_by_name)))
        return -1;
    for (uint32_t id = 1; id < cap && r->nranges_by_name + 1 < ngroups; id++) {
        const struct range_entry *e = range_entry_of(id);
        const char *name = range_name_of(id);
        if (!e || !name)
            continue;
        struct report_range *g = &r->ranges_by_name[r->nranges_by_name++];
        g->name = name;
        g->closed = e->pushes;
        g->open = e->open;
        g->wall_ms = (double)e->wall_ns / 1e6;
        group[id] = (uint32_t)r->nranges_by_name;
    }
    HASH_ITER(hh, aggs, a, atmp) {
        uint32_t row = a->kernel <= mask ? row_of[a->kernel] : 0;
        if (!row || !a->st.n || ks[row - 1].kind == REPORT_MEMOP)
            continue;
        const struct report_kernel *k = &ks[row - 1];
        range_add(r, a->range, k->mangled, k->name, k->kind, &a->st, &a->sk);
    }
    return 0;
}

/* Drops the names interned but never pushed, and sorts the ranges and their rows. */
static void ranges_finish(struct report *r)
{
    free(group);
    group = NULL;
    /* Names interned but never pushed (KTIME_CAPTURE=nvtx:NAME's, the overflow entry) are no
     * ranges of the run. */
    size_t kept = 0;
    for (size_t i = 0; i < r->nranges_by_name; i++)
        if (r->ranges_by_name[i].closed || r->ranges_by_name[i].open || r->ranges_by_name[i].nrows)
            r->ranges_by_name[kept++] = r->ranges_by_name[i];
    r->nranges_by_name = kept;
    for (size_t i = 0; i < r->nranges_by_name; i++)
        if (r->ranges_by_name[i].nrows > 1)
            qsort(r->ranges_by_name[i].rows, r->ranges_by_name[i].nrows, sizeof *r->ranges_by_name[i].rows,
                  cmp_range_rows);
    qsort(r->ranges_by_name, r->nranges_by_name, sizeof *r->ranges_by_name, cmp_ranges);
    r->ranges_unmatched_pops = atomic_load(&range_stats.unmatched_pops);
    r->ranges_too_deep = atomic_load(&range_stats.too_deep);
}

/* Without memory the report has no ranges' section; nothing else is lost. With CUPTI's
 * records as the samples, the section is finished by ranges_records (after the CUPTI timer
 * made the rows of kernels seen only in graphs). */
static int ranges_rows(struct report *r, const struct module_rows *m)
{
    if (gather_ranges(r, r->kernels, m->row_of, m->mask, m->aggs) != 0) {
        free(group);
        group = NULL;
        free(r->ranges_by_name);
        r->ranges_by_name = NULL;
        r->nranges_by_name = 0;
    } else if (r->ranges_by_name && !m->records_primary) {
        ranges_finish(r);
    }
    return 0;
}

/* KTIME_TIMER=cupti: CUPTI's records by the range their launch was made in (the external id
 * their launch pushed), into the same section: it reads as the events timer's does. */
static int ranges_records(struct report *r, const struct module_rows *m)
{
    struct hw_kernel *hk, *tmp;

    if (!r->ranges_by_name || !group)
        return 0;
    HASH_ITER(hh, cuptitimer_records()->byname, hk, tmp) {
        const struct report_kernel *rk = NULL;
        for (size_t i = 0; i < r->nkernels && !rk; i++)
            if (r->kernels[i].kind == REPORT_KERNEL && strcmp(r->kernels[i].mangled, hk->name) == 0)
                rk = &r->kernels[i];
        for (struct hw_dev *hd = hk->devs; rk && hd; hd = hd->next)
            if (hd->st.n)
                range_add(r, hd->range, rk->mangled, rk->name, rk->kind, &hd->st, &hd->sk);
    }
    (void)m;
    ranges_finish(r);
    return 0;
}

const struct ktime_module ranges_module = {
    .name = "ranges",
    .start = ranges_start,
    .header = ranges_header,
    .rows = ranges_rows,
};

/* The ranges' second part (modules.def: after the CUPTI timer), on only with CUPTI's records
 * as the samples. */
static bool ranges_records_start(void)
{
    return kt.cfg.timer != TIMER_EVENTS;
}

const struct ktime_module ranges_records_module = {
    .name = "ranges_records",
    .start = ranges_records_start,
    .rows = ranges_records,
};
