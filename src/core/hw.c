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

static struct hw_dev *dev_of(struct hw_kernel *k, int device)
{
    struct hw_dev *d;

    for (d = k->devs; d; d = d->next)
        if (d->device == device)
            return d;
    if (!(d = calloc(1, sizeof *d)))
        return NULL;
    d->device = device;
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

void hw_add(struct hw *h, const char *name, int device, uint32_t context_id, uint32_t stream_id,
            uint64_t start_ns, uint64_t end_ns, bool in_graph, const struct kshape *shape)
{
    const char *own = own_name(h, context_id, stream_id);
    struct hw_kernel *k = kernel_of(h, own ? own : name ? name : "<unnamed>");
    struct hw_dev *d;

    h->records++;
    h->in_graph += in_graph;
    if (!k) {
        h->lost++;
        return;
    }
    k->records++;
    k->in_graph += in_graph;
    if (k->before + k->records <= (uint64_t)h->warmup) {
        k->warmup++;
        return;
    }
    if (end_ns <= start_ns) {
        k->bad++;
        return;
    }
    if (!(d = dev_of(k, device))) {
        h->lost++;
        return;
    }
    stats_add(&d->st, (double)(end_ns - start_ns) / 1000.0);
    sketch_add(&d->sk, (double)(end_ns - start_ns) / 1000.0);
    if (shape && shape_known(shape))
        shape_add(&d->shapes, shape, (double)(end_ns - start_ns) / 1000.0);
    /* ktime's own kernels (the floor's) are not the program's: out of the dump and trace. */
    if (h->sample && !own)
        h->sample(k->name, device, (double)(end_ns - start_ns) / 1000.0);
    if (h->trace && !own)
        trace_add(h->trace, start_ns, end_ns - start_ns, k->name, 0, device, stream_id, shape);
}

void hw_reset(struct hw *h)
{
    struct hw_kernel *k, *tmp;

    HASH_ITER(hh, h->byname, k, tmp) {
        k->before += k->records;
        k->records = k->warmup = k->in_graph = k->bad = 0;
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
}
