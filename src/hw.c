/* hw.c - hardware kernel durations, aggregated by kernel name. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "hw.h"

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

void hw_add(struct hw *h, const char *name, int device, uint64_t start_ns, uint64_t end_ns,
            bool in_graph)
{
    struct hw_kernel *k = kernel_of(h, name ? name : "<unnamed>");
    struct hw_dev *d;

    h->records++;
    h->in_graph += in_graph;
    if (!k) {
        h->lost++;
        return;
    }
    k->records++;
    k->in_graph += in_graph;
    if (k->records <= (uint64_t)h->warmup) {
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
}

void hw_free(struct hw *h)
{
    struct hw_kernel *k, *tmp;

    HASH_ITER(hh, h->byname, k, tmp) {
        HASH_DEL(h->byname, k);
        while (k->devs) {
            struct hw_dev *d = k->devs;
            k->devs = d->next;
            free(d);
        }
        free(k->name);
        free(k);
    }
    h->last = NULL;
    h->last_ptr = NULL;
}
