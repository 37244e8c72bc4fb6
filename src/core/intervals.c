/* intervals.c - busy time, idle gaps and overlap from intervals (intervals.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "intervals.h"

#include <stdlib.h>
#include <string.h>

const uint64_t iv_bin_upper[IV_NBINS - 1] = { 10000, 100000, 1000000, 10000000, 100000000 };

int iv_bin(uint64_t len)
{
    int b = 0;

    while (b < IV_NBINS - 1 && len >= iv_bin_upper[b])
        b++;
    return b;
}

void iv_gaps_add(struct iv_gaps *g, uint64_t len, uint64_t at, uint64_t before, uint64_t after)
{
    int b = iv_bin(len);
    uint32_t i;

    g->count++;
    g->total_ns += len;
    g->bin_count[b]++;
    g->bin_ns[b] += len;
    /* Sorted, largest first: a gap goes after those at least as long (the earlier first). */
    for (i = 0; i < g->ntop && g->top[i].len_ns >= len; i++)
        ;
    if (i == IV_TOP)
        return;
    if (g->ntop < IV_TOP)
        g->ntop++;
    memmove(&g->top[i + 1], &g->top[i], (g->ntop - 1 - i) * sizeof g->top[0]);
    g->top[i] = (struct iv_gap){ len, at, before, after };
}

void iv_sweep_add(struct iv_sweep *s, uint64_t start, uint64_t end, uint64_t who)
{
    if (end < start)
        end = start;
    if (s->n == 0 || start < s->first_ns)
        s->first_ns = start;
    if (s->n == 0 || end > s->last_ns)
        s->last_ns = end;
    s->n++;
    s->sum_ns += end - start;
    if (!s->open) {
        s->open = true;
        s->cur_s = start;
        s->cur_e = end;
        s->cur_who = who;
        return;
    }
    if (start < s->cur_s) {
        s->late++;
        start = s->cur_s;
        if (end < start)
            return;
    }
    if (start <= s->cur_e) {
        if (end > s->cur_e) {
            s->cur_e = end;
            s->cur_who = who;
        }
        return;
    }
    s->busy_ns += s->cur_e - s->cur_s;
    if (s->gaps)
        iv_gaps_add(s->gaps, start - s->cur_e, s->cur_e, s->cur_who, who);
    s->cur_s = start;
    s->cur_e = end;
    s->cur_who = who;
}

uint64_t iv_sweep_busy(const struct iv_sweep *s)
{
    return s->busy_ns + (s->open ? s->cur_e - s->cur_s : 0);
}

/* ---- the window: a binary min-heap by start (then end) ---- */

static bool earlier(const struct iv_item *a, const struct iv_item *b)
{
    return a->start < b->start || (a->start == b->start && a->end < b->end);
}

static void heap_push(struct iv_dev *d, const struct iv_item *it)
{
    uint32_t i = d->nwin++;

    while (i > 0) {
        uint32_t up = (i - 1) / 2;
        if (!earlier(it, &d->win[up]))
            break;
        d->win[i] = d->win[up];
        i = up;
    }
    d->win[i] = *it;
}

static struct iv_item heap_pop(struct iv_dev *d)
{
    struct iv_item top = d->win[0], last = d->win[--d->nwin];
    uint32_t i = 0;

    for (;;) {
        uint32_t c = 2 * i + 1;
        if (c >= d->nwin)
            break;
        if (c + 1 < d->nwin && earlier(&d->win[c + 1], &d->win[c]))
            c++;
        if (!earlier(&d->win[c], &last))
            break;
        d->win[i] = d->win[c];
        i = c;
    }
    if (d->nwin)
        d->win[i] = last;
    return top;
}

/* ---- a GPU ---- */

int iv_dev_init(struct iv_dev *d, int device, uint32_t window)
{
    memset(d, 0, sizeof *d);
    d->device = device;
    d->all.gaps = &d->gaps;
    if (!window)
        return 0;
    if (!(d->win = malloc((size_t)window * sizeof *d->win)))
        return -1;
    d->cap = window;
    return 0;
}

static struct iv_stream *stream_of(struct iv_dev *d, uint64_t id)
{
    for (uint32_t i = 0; i < d->nstreams; i++)
        if (d->streams[i].id == id)
            return &d->streams[i];
    if (d->nstreams == IV_STREAMS)
        return NULL;
    if (!d->streams && !(d->streams = calloc(IV_STREAMS, sizeof *d->streams))) {
        d->oom = true;
        return NULL;
    }
    struct iv_stream *s = &d->streams[d->nstreams++];
    s->id = id;
    s->sw.gaps = &s->gaps;
    return s;
}

static void sweep(struct iv_dev *d, const struct iv_item *it)
{
    struct iv_stream *st;

    iv_sweep_add(&d->all, it->start, it->end, it->who);
    if (it->cls == IV_COPY) {
        iv_sweep_add(&d->copy, it->start, it->end, it->who);
    } else {
        iv_sweep_add(&d->kernels, it->start, it->end, it->who);
        iv_sweep_add(it->cls == IV_COMM ? &d->comm : &d->compute, it->start, it->end, it->who);
    }
    if ((st = stream_of(d, it->stream)))
        iv_sweep_add(&st->sw, it->start, it->end, it->who);
    else
        d->other_streams++;
    if (it->range < IV_RANGES) {
        if (!d->ranges && !d->oom && !(d->ranges = calloc(IV_RANGES, sizeof *d->ranges)))
            d->oom = true;
        if (d->ranges)
            iv_sweep_add(&d->ranges[it->range], it->start, it->end, it->who);
    }
}

void iv_dev_add(struct iv_dev *d, const struct iv_item *it)
{
    if (!d->cap) {
        sweep(d, it);
        return;
    }
    if (d->nwin == d->cap) {
        struct iv_item first = heap_pop(d);
        sweep(d, &first);
    }
    heap_push(d, it);
}

void iv_dev_flush(struct iv_dev *d)
{
    while (d->nwin) {
        struct iv_item first = heap_pop(d);
        sweep(d, &first);
    }
}

uint64_t iv_dev_overlap(const struct iv_dev *d)
{
    uint64_t both = iv_sweep_busy(&d->kernels);
    uint64_t parts = iv_sweep_busy(&d->comm) + iv_sweep_busy(&d->compute);

    return parts > both ? parts - both : 0;
}

void iv_dev_free(struct iv_dev *d)
{
    free(d->win);
    free(d->streams);
    free(d->ranges);
    d->win = NULL;
    d->streams = NULL;
    d->ranges = NULL;
    d->nwin = d->cap = d->nstreams = 0;
}
