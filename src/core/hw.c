/* hw.c - hardware kernel durations, aggregated by kernel name. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "hw.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

void hw_init(struct hw *h, long warmup)
{
    memset(h, 0, sizeof *h);
    h->warmup = warmup;
}

struct hw_kernel *hw_find(struct hw *h, const char *name)
{
    struct hw_kernel *k;

    HASH_FIND_STR(h->byname, name, k);
    return k;
}

static struct hw_kernel *kernel_of(struct hw *h, const char *name)
{
    struct hw_kernel *k;

    if (h->last && h->last_ptr == name && strcmp(h->last->name, name) == 0)
        return h->last;
    k = hw_find(h, name);
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k || !(k->name = strdup(name))) {
            free(k);
            return NULL;
        }
        HASH_ADD_KEYPTR(hh, h->byname, k->name, strlen(k->name), k);
    }
    h->last = k;
    h->last_ptr = name;
    return k;
}

static struct hw_dev *dev_of(struct hw_kernel *k, int device, uint32_t range)
{
    struct hw_dev *d;

    for (d = k->devs; d; d = d->next)
        if (d->device == device && d->range == range)
            return d;
    if (!(d = calloc(1, sizeof *d)))
        return NULL;
    d->device = device;
    d->range = range;
    d->next = k->devs;
    k->devs = d;
    return d;
}

int hw_own(struct hw *h, uint32_t context_id, uint32_t stream_id, const char *name)
{
    int n = atomic_load_explicit(&h->nown, memory_order_relaxed);

    for (int i = 0; i < n; i++)
        if (h->own[i].context_id == context_id && h->own[i].stream_id == stream_id) {
            /* Ids are reused once a stream is gone: the newest owner names it. Only the
             * exit path writes here, and the drain reads the name pointer whole. */
            __atomic_store_n(&h->own[i].name, name, __ATOMIC_RELEASE);
            return 0;
        }
    if (n >= HW_OWN_MAX)
        return -1;
    h->own[n] = (struct hw_own){ context_id, stream_id, name };
    atomic_store_explicit(&h->nown, n + 1, memory_order_release);
    return 0;
}

static const char *own_name(struct hw *h, uint32_t context_id, uint32_t stream_id)
{
    int n = atomic_load_explicit(&h->nown, memory_order_acquire);

    for (int i = 0; i < n; i++)
        if (h->own[i].context_id == context_id && h->own[i].stream_id == stream_id)
            return __atomic_load_n(&h->own[i].name, __ATOMIC_ACQUIRE);
    return NULL;
}

int hw_join_start(struct hw *h, bool need_ext)
{
    if (!h->join && !(h->join = calloc(HW_JOIN_SLOTS, sizeof *h->join)))
        return -1;
    if (!h->defer && !(h->defer = calloc(HW_DEFER, sizeof *h->defer))) {
        free(h->join);
        h->join = NULL;
        return -1;
    }
    h->need_ext = need_ext;
    return 0;
}

/* The slot of correlation id corr, taken over from an older one (direct-mapped). */
static struct hw_launch *slot_for(struct hw *h, uint32_t corr)
{
    struct hw_launch *l = &h->join[corr & (HW_JOIN_SLOTS - 1)];

    if (l->corr != corr)
        *l = (struct hw_launch){ .corr = corr };
    return l;
}

void hw_api(struct hw *h, uint32_t corr, uint64_t start_ns, uint64_t end_ns)
{
    struct hw_launch *l;

    if (!h->join || !corr)
        return;
    h->launch_records++;
    l = slot_for(h, corr);
    l->api = true;
    l->api_start = start_ns;
    l->api_end = end_ns;
}

void hw_ext(struct hw *h, uint32_t corr, uint64_t ext)
{
    struct hw_launch *l;

    if (!h->join || !corr || (ext & HW_EXT_MASK) != HW_EXT_TAG)
        return;
    l = slot_for(h, corr);
    l->ext = true;
    l->ext_id = ext;
}

/* The launch of corr, once its launch record has come; NULL until then. */
static const struct hw_launch *launch_of(const struct hw *h, uint32_t corr)
{
    const struct hw_launch *l;

    if (!h->join || !corr)
        return NULL;
    l = &h->join[corr & (HW_JOIN_SLOTS - 1)];
    return l->corr == corr && l->api ? l : NULL;
}

static void emit(struct hw *h, const struct hw_pending *p, const char *name, uint32_t range,
                 bool timed, int64_t api_ns, int64_t queue_ns)
{
    struct hw_out o = { name, p->device, p->stream_id, p->start_ns, p->end_ns, range, timed,
                        p->in_graph, api_ns, queue_ns };

    if (h->record && !p->own)
        h->record(&o);
}

/* Folds one kernel record, with what is known of its launch (l, or NULL). */
static void fold(struct hw *h, const struct hw_pending *p, const struct hw_launch *l)
{
    struct hw_kernel *k = p->k;
    struct hw_dev *d;
    uint32_t range = 0;
    int64_t api_ns = -1, queue_ns = -1;
    bool in_range = true;

    if (h->join && p->corr && !l)
        h->unjoined++;
    if (l) {
        if (l->ext)
            range = (uint32_t)(l->ext_id & 0xffffu);
        else if (h->need_ext)
            in_range = false;
        api_ns = l->api_end >= l->api_start ? (int64_t)(l->api_end - l->api_start) : -1;
        if (!p->in_graph)
            queue_ns = p->start_ns > l->api_end ? (int64_t)(p->start_ns - l->api_end) : 0;
    } else if (h->need_ext && !p->own) {
        in_range = false; /* no launch record: in the capture range or not, nobody can say */
    }
    if (p->own)
        range = 0;
    if (p->nth <= (uint64_t)h->warmup) {
        k->warmup++;
        emit(h, p, k->name, range, false, api_ns, queue_ns);
        return;
    }
    if (!in_range) {
        if (l)
            k->outside++;
        else
            k->unknown++;
        emit(h, p, k->name, range, false, api_ns, queue_ns);
        return;
    }
    if (p->end_ns <= p->start_ns) {
        k->bad++;
        return;
    }
    if (!(d = dev_of(k, p->device, range))) {
        h->lost++;
        return;
    }
    double us = (double)(p->end_ns - p->start_ns) / 1000.0;
    stats_add(&d->st, us);
    sketch_add(&d->sk, us);
    if (shape_known(&p->shape))
        shape_add(&d->shapes, &p->shape, us);
    emit(h, p, k->name, range, true, api_ns, queue_ns);
    /* ktime's own kernels (the floor's) are not the program's: out of the dump and trace. */
    if (h->sample && !p->own)
        h->sample(k->name, p->device, us);
    if (h->trace && !p->own)
        trace_add(h->trace, p->start_ns, p->end_ns - p->start_ns, k->name, 0, p->device,
                  p->stream_id, &p->shape);
}

void hw_settle(struct hw *h, bool all)
{
    while (h->dn) {
        struct hw_pending *p = &h->defer[h->dhead];
        const struct hw_launch *l = launch_of(h, p->corr);
        if (!l && !all)
            return;
        fold(h, p, l);
        h->dhead = (h->dhead + 1) % HW_DEFER;
        h->dn--;
    }
}

void hw_add_corr(struct hw *h, const char *name, int device, uint32_t context_id,
                 uint32_t stream_id, uint32_t corr, uint64_t start_ns, uint64_t end_ns,
                 bool in_graph, const struct kshape *shape)
{
    const char *own = own_name(h, context_id, stream_id);
    struct hw_kernel *k = kernel_of(h, own ? own : name ? name : "<unnamed>");
    struct hw_pending p = { .k = k, .own = own, .device = device, .stream_id = stream_id,
                            .corr = own ? 0 : corr, .start_ns = start_ns, .end_ns = end_ns,
                            .in_graph = in_graph };
    const struct hw_launch *l;

    h->records++;
    h->in_graph += in_graph;
    if (!k) {
        h->lost++;
        return;
    }
    p.nth = k->before + ++k->records;
    k->in_graph += in_graph;
    if (shape)
        p.shape = *shape;
    /* Records fold in the order they came (warmup is the first records of a name): one whose
     * launch is not known yet waits, and those after it wait behind it. */
    l = launch_of(h, p.corr);
    if (h->join && p.corr && (h->dn || !l)) {
        if (h->dn == HW_DEFER) { /* full: the oldest goes without its launch */
            struct hw_pending *old = &h->defer[h->dhead];
            fold(h, old, launch_of(h, old->corr));
            h->dhead = (h->dhead + 1) % HW_DEFER;
            h->dn--;
        }
        h->defer[(h->dhead + h->dn) % HW_DEFER] = p;
        h->dn++;
        hw_settle(h, false);
        return;
    }
    fold(h, &p, l);
}

void hw_add(struct hw *h, const char *name, int device, uint32_t context_id, uint32_t stream_id,
            uint64_t start_ns, uint64_t end_ns, bool in_graph, const struct kshape *shape)
{
    hw_add_corr(h, name, device, context_id, stream_id, 0, start_ns, end_ns, in_graph, shape);
}

void hw_copy(struct hw *h, int device, uint32_t stream_id, uint64_t start_ns, uint64_t end_ns)
{
    struct hw_out o = { NULL, device, stream_id, start_ns, end_ns, 0, false, false, -1, -1 };

    if (h->record)
        h->record(&o);
}

void hw_reset(struct hw *h)
{
    struct hw_kernel *k, *tmp;

    HASH_ITER(hh, h->byname, k, tmp) {
        k->before += k->records;
        k->records = k->warmup = k->in_graph = k->bad = k->outside = k->unknown = 0;
        for (struct hw_dev *d = k->devs; d; d = d->next) {
            memset(&d->st, 0, sizeof d->st);
            memset(&d->sk, 0, sizeof d->sk);
            shape_set_free(d->shapes);
            d->shapes = NULL;
        }
    }
    h->records = h->in_graph = 0;
}

void hw_free(struct hw *h)
{
    struct hw_kernel *k, *tmp;

    HASH_ITER(hh, h->byname, k, tmp) {
        HASH_DEL(h->byname, k);
        while (k->devs) {
            struct hw_dev *d = k->devs;
            k->devs = d->next;
            shape_set_free(d->shapes);
            free(d);
        }
        free(k->name);
        free(k);
    }
    h->last = NULL;
    h->last_ptr = NULL;
    free(h->join);
    free(h->defer);
    h->join = NULL;
    h->defer = NULL;
    h->dn = h->dhead = 0;
}
