/* busy.c - when each GPU was busy and idle (busy.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "busy.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "log.h"
#include "module.h"
#include "rangestack.h"
#include "state.h"
#include "sysinfo.h"

_Static_assert(IV_NBINS == RM_NGAP_BINS, "the report's gap bins are the timelines'");
_Static_assert(IV_TOP == RM_GAP_TOP, "the report names the gaps the timelines keep");

/* A timeline: one GPU as one timer saw it. */
struct timeline {
    int device;
    enum busy_method method;
    struct iv_dev d;
};

#define BUSY_TIMELINES (2 * KTIME_MAX_DEVICES)

static bool on;
static int (*classify)(const char *mangled);
/* The drain thread's, then the exit's. */
static struct timeline *lines[BUSY_TIMELINES];
static int nlines;
static bool full; /* said once: more timelines than BUSY_TIMELINES */
/* The report's, rebuilt by each busy_report(). */
static struct report_busy rep;
static char **names;       /* demangled names the report holds */
static size_t nnames;

static bool busy_start(void)
{
    busy_free();
    on = kt.cfg.busy == BUSY_ON || (kt.cfg.busy == BUSY_AUTO && kt.cfg.timer != TIMER_EVENTS);
    classify = NULL;
    /* Events' samples on the timeline only when asked for: it costs a reference event per
     * context and a second elapsed-time call per sample. */
    kt.drain.place = kt.cfg.busy == BUSY_ON;
    return on;
}

void busy_classify_with(int (*cls)(const char *mangled))
{
    classify = cls;
}

/* KTIME_BUSY=on: the pool's reference event, that places its samples on the timeline (the
 * trace's, when KTIME_TRACE made one already). Without one, its context's launches stay off. */
static void busy_pool_made(struct pool *p, CUdevice dev)
{
    void *unused = NULL;

    (void)dev;
    if (kt.drain.place && !p->anchor && driver_event_ops.create(p->ctx, &p->anchor, &unused) != 0)
        p->anchor = NULL;
}

bool busy_on(void)
{
    return on;
}

static struct timeline *line_of(int device, enum busy_method method)
{
    for (int i = 0; i < nlines; i++)
        if (lines[i]->device == device && lines[i]->method == method)
            return lines[i];
    if (nlines == BUSY_TIMELINES) {
        if (!full)
            log_warn("KTIME_BUSY: more than %d GPU timelines; the rest are left out",
                     BUSY_TIMELINES);
        full = true;
        return NULL;
    }
    struct timeline *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->device = device;
    t->method = method;
    if (iv_dev_init(&t->d, device, BUSY_WINDOW) != 0)
        log_debug("KTIME_BUSY: no reorder window for GPU %d; intervals are swept as they come",
                  device);
    lines[nlines++] = t;
    return t;
}

static int class_of(const char *name)
{
    return name && classify ? classify(name) : IV_COMPUTE;
}

void busy_sample(const struct drain_out *o)
{
    const struct ktab_entry *e;
    struct timeline *t;
    const char *name;
    int kind;

    if (!on || !o->placed || o->kernel > kt.ktab.mask || !(t = line_of(o->device, BUSY_BY_EVENTS)))
        return;
    e = &kt.ktab.slots[o->kernel];
    name = atomic_load_explicit(&e->name, memory_order_acquire);
    kind = atomic_load_explicit(&e->kind, memory_order_relaxed);
    struct iv_item it = { o->start_ns, o->start_ns + o->dur_ns, (uint64_t)(uintptr_t)name,
                          (uint64_t)o->stream, o->range,
                          (uint8_t)(kind == KTAB_MEMOP ? IV_COPY : class_of(name)) };
    iv_dev_add(&t->d, &it);
}

void busy_record(const struct hw_out *o)
{
    struct timeline *t;

    if (!on || !(t = line_of(o->device, BUSY_BY_CUPTI)))
        return;
    struct iv_item it = { o->start_ns, o->end_ns, (uint64_t)(uintptr_t)o->name, o->stream_id,
                          o->range, (uint8_t)(o->name ? class_of(o->name) : IV_COPY) };
    iv_dev_add(&t->d, &it);
}

/* ---- the report ---- */

static void free_names(void)
{
    for (size_t i = 0; i < nnames; i++)
        free(names[i]);
    free(names);
    names = NULL;
    nnames = 0;
}

/* The shown name of a kernel of mangled name (NULL: a copy), kept for the report. */
static const char *shown(const char *mangled)
{
    char *s, **more;

    if (!mangled)
        return NULL;
    if (!(s = sysinfo_demangle(mangled)))
        return mangled;
    if (!(more = realloc(names, (nnames + 1) * sizeof *names))) {
        free(s);
        return mangled;
    }
    names = more;
    names[nnames++] = s;
    return s;
}

static void gaps_of(struct report_gaps *o, const struct iv_gaps *g, uint64_t t0)
{
    o->count = g->count;
    o->total_ms = (double)g->total_ns / 1e6;
    for (int b = 0; b < IV_NBINS; b++) {
        o->bin_count[b] = g->bin_count[b];
        o->bin_ms[b] = (double)g->bin_ns[b] / 1e6;
    }
    o->ntop = g->ntop;
    for (uint32_t i = 0; i < g->ntop; i++) {
        const struct iv_gap *x = &g->top[i];
        const char *before = (const char *)(uintptr_t)x->before;
        const char *after = (const char *)(uintptr_t)x->after;
        o->top[i] = (struct report_gap){ (double)x->len_ns / 1000.0,
                                         (double)(x->at_ns - t0) / 1e6, shown(before), before,
                                         shown(after), after };
    }
}

static int cmp_devs(const void *a, const void *b)
{
    const struct report_busy_dev *x = a, *y = b;

    if (x->device != y->device)
        return x->device < y->device ? -1 : 1;
    return strcmp(x->method, y->method);
}

static int cmp_ranges(const void *a, const void *b)
{
    const struct report_busy_range *x = a, *y = b;

    if (x->busy_ms != y->busy_ms)
        return x->busy_ms < y->busy_ms ? 1 : -1;
    if (!x->name || !y->name)
        return !x->name - !y->name;
    return strcmp(x->name, y->name);
}

/* Whether timeline t is shown: an events timeline of a GPU CUPTI saw too is shown only when
 * it holds kernels (CUPTI handed over, or KTIME_TIMER=both), not memory operations alone. */
static bool shown_line(const struct timeline *t)
{
    if (!t->d.all.n)
        return false;
    if (t->method == BUSY_BY_CUPTI || t->d.kernels.n)
        return true;
    for (int i = 0; i < nlines; i++)
        if (lines[i]->device == t->device && lines[i]->method == BUSY_BY_CUPTI && lines[i]->d.all.n)
            return false;
    return true;
}

static void fill_dev(struct report_busy_dev *o, const struct timeline *t)
{
    const struct iv_dev *d = &t->d;
    uint64_t t0 = d->all.first_ns;

    o->device = t->device;
    o->method = t->method == BUSY_BY_CUPTI ? "cupti" : "events";
    o->span_ms = (double)(d->all.last_ns - d->all.first_ns) / 1e6;
    o->busy_ms = (double)iv_sweep_busy(&d->all) / 1e6;
    o->kernels = d->kernels.n;
    o->copies = d->copy.n;
    o->kernel_ms = (double)d->kernels.sum_ns / 1e6;
    o->copy_ms = (double)d->copy.sum_ns / 1e6;
    o->late = d->all.late;
    o->other_streams = d->other_streams;
    gaps_of(&o->gaps, &d->gaps, t0);
    if (d->nstreams && (o->streams = calloc(d->nstreams, sizeof *o->streams)))
        for (uint32_t i = 0; i < d->nstreams; i++, o->nstreams++) {
            struct report_busy_stream *s = &o->streams[i];
            s->stream = d->streams[i].id;
            s->intervals = d->streams[i].sw.n;
            s->busy_ms = (double)iv_sweep_busy(&d->streams[i].sw) / 1e6;
            gaps_of(&s->gaps, &d->streams[i].gaps, t0);
        }
}

/* The ranges' busy time, over the GPUs shown (with CUPTI where a GPU has both). */
static void fill_ranges(const bool *use)
{
    bool any = range_any();
    size_t cap = 0;

    for (uint32_t id = 0; id < IV_RANGES; id++) {
        double busy = 0;
        uint64_t n = 0;
        for (int i = 0; i < nlines; i++) {
            const struct iv_dev *d = &lines[i]->d;
            if (!use[i] || !d->ranges || !d->ranges[id].n)
                continue;
            busy += (double)iv_sweep_busy(&d->ranges[id]) / 1e6;
            n += d->ranges[id].n;
        }
        const struct range_entry *e = id ? range_entry_of(id) : NULL;
        const char *name = id ? range_name_of(id) : NULL;
        if (id ? !name || (!n && !e->pushes && !e->open) : !any || !n)
            continue;
        if (rep.nranges == cap) {
            size_t c = cap ? 2 * cap : 16;
            struct report_busy_range *more = realloc(rep.ranges, c * sizeof *more);
            if (!more)
                break;
            rep.ranges = more;
            cap = c;
        }
        rep.ranges[rep.nranges++] = (struct report_busy_range){
            name, e ? (double)atomic_load(&e->wall_ns) / 1e6 : 0, busy, n };
    }
    if (rep.nranges > 1)
        qsort(rep.ranges, rep.nranges, sizeof *rep.ranges, cmp_ranges);
}

static void free_rep(void)
{
    for (size_t i = 0; i < rep.ndevs; i++)
        free(rep.devs[i].streams);
    free(rep.devs);
    free(rep.ranges);
    memset(&rep, 0, sizeof rep);
    free_names();
}

struct report_busy *busy_report(void)
{
    bool use[BUSY_TIMELINES] = { false };
    size_t n = 0;

    free_rep();
    if (!on)
        return NULL;
    for (int i = 0; i < nlines; i++)
        iv_dev_flush(&lines[i]->d);
    for (int i = 0; i < nlines; i++)
        n += use[i] = shown_line(lines[i]);
    rep.unplaced = kt.drain.unplaced;
    if (!n && !rep.unplaced)
        return NULL;
    if (n && !(rep.devs = calloc(n, sizeof *rep.devs)))
        return NULL;
    for (int i = 0; i < nlines; i++)
        if (use[i])
            fill_dev(&rep.devs[rep.ndevs++], lines[i]);
    qsort(rep.devs, rep.ndevs, sizeof *rep.devs, cmp_devs);
    /* A GPU both timers saw counts its ranges by CUPTI's records. */
    for (int i = 0; i < nlines; i++)
        for (int j = 0; use[i] && j < nlines; j++)
            if (lines[i]->method == BUSY_BY_EVENTS && use[j] && lines[j]->method == BUSY_BY_CUPTI &&
                lines[j]->device == lines[i]->device)
                use[i] = false;
    fill_ranges(use);
    return &rep;
}

const struct iv_dev *busy_timeline(int i, enum busy_method *method)
{
    if (i < 0 || i >= nlines)
        return NULL;
    *method = lines[i]->method;
    return &lines[i]->d;
}

static void free_lines(void)
{
    free_rep();
    for (int i = 0; i < nlines; i++) {
        iv_dev_free(&lines[i]->d);
        free(lines[i]);
    }
    nlines = 0;
    full = false;
}

void busy_free(void)
{
    free_lines();
    on = false;
}

/* ktime ctl reset: the timelines start afresh (the drain thread, as their samples). */
static void busy_reset(void)
{
    free_lines();
}

/* The GPUs' busy time, once the drain has stopped (its timelines are then final). */
static int busy_rows(struct report *r, const struct module_rows *m)
{
    r->busy = m->stopped ? busy_report() : NULL;
    return 0;
}

const struct ktime_module busy_module = {
    .name = "busy",
    .start = busy_start,
    .pool_made = busy_pool_made,
    .sample = busy_sample,
    .record = busy_record,
    .rows = busy_rows,
    .reset = busy_reset,
};
