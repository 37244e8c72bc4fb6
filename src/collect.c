/* collect.c - the report's rows, from the kernel table and the drain's aggregates. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "collect.h"

#include <stdlib.h>
#include <string.h>

#include "state.h"
#include "sysinfo.h"

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

int collect_kernels(struct report *r, bool with_aggs)
{
    struct ktab *t = &kt.ktab;
    uint32_t used = atomic_load(&t->count);
    struct report_kernel *ks = calloc(used ? used : 1, sizeof *ks);
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
        uint64_t calls, captured, shutdown, rewarm, dropped, failed;

        if (!e)
            continue;
        /* A launch counts in calls before anything else: read the rest first, so that a
         * launch another thread is still making is never in a bucket without being seen. */
        captured = atomic_load(&e->captured);
        shutdown = atomic_load(&e->shutdown);
        rewarm = atomic_load(&e->rewarm);
        dropped = atomic_load(&e->dropped);
        failed = atomic_load(&e->failed);
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
            rk->kind = atomic_load(&e->kind) == KTAB_GRAPH ? REPORT_GRAPH : REPORT_KERNEL;
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
            nr->name = name;
            nr->rk = rk;
            HASH_ADD_KEYPTR(hh, byname, nr->name, strlen(nr->name), nr);
        }
        /* calls leaves out captured launches: those never ran, and are no warmup. */
        rk->calls += calls + captured + shutdown;
        rk->warmup_skipped += calls < (uint64_t)r->warmup ? calls : (uint64_t)r->warmup;
        rk->warmup_skipped += rewarm;
        rk->captured += captured;
        rk->dropped += dropped + shutdown;
        r->drops[DROP_SHUTDOWN] += shutdown;
        rk->failed += failed;
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
        /* Pairs the driver could not resolve are drops of reason event_error. */
        ks[row - 1].dropped += a->errors + a->forced;
        r->drops[DROP_GATE_TIMEOUT] += a->forced;
        ks[row - 1].incomplete += a->incomplete;
        ks[row - 1].ungated += a->ungated;
        r->drops[DROP_EVENT_ERROR] += a->errors;
    }
    /* Launches other threads were still making when the report began (counted at their
     * start, their pair submitted after the last drain, or not yet timed, dropped or failed)
     * are in no other bucket: they are incomplete at exit. */
    for (size_t i = 0; with_aggs && i < n; i++) {
        struct report_kernel *k = &ks[i];
        uint64_t known = k->warmup_skipped + k->captured + k->dropped + k->failed + k->incomplete;

        for (int d = 0; d < r->ndevices; d++)
            known += k->per_dev[d].n;
        if (k->calls > known)
            k->incomplete += k->calls - known;
    }
    HASH_ITER(hh, byname, nr, tmp) {
        HASH_DEL(byname, nr);
        free(nr);
    }
    free(row_of);
    r->kernels = ks;
    r->nkernels = n;
    return 0;
}

void collect_free(struct report *r)
{
    for (size_t i = 0; i < r->nkernels; i++) {
        free(r->kernels[i].per_dev);
        free((char *)r->kernels[i].name);
    }
    free(r->kernels);
    r->kernels = NULL;
    r->nkernels = 0;
}
