/* text_busy.c - the text report's launch calls and queue times (KTIME_LAUNCH_COLUMNS), the
 * GPUs' busy time and communication (text.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "text.h"

#include <string.h>

#include "names.h"

/* The gap histogram's bins, as the text names them. */
static const char *const bin_words[RM_NGAP_BINS] = {
    "<10us", "10-100us", "0.1-1ms", "1-10ms", "10-100ms", ">=100ms",
};
_Static_assert(RM_NGAP_BINS == 6, "a word for each gap bin");

/* A value (us) of a launch block, or "-". */
static void us_or_dash(FILE *f, const struct rm_stats *s, int i)
{
    if (s->timed && s->v[i] >= 0)
        fprintf(f, " %10.3f", s->v[i]);
    else
        fprintf(f, " %10s", "-");
}

void text_launch_table(FILE *f, const struct model *m)
{
    size_t n = 0;

    for (size_t i = 0; i < m->nrows; i++)
        n += m->rows[i].launch != NULL;
    if (!m->launch_columns || !n)
        return;
    fprintf(f, "\nlaunches: the CPU's time in each launch call, and (CUPTI) the time from its "
               "return to the kernel's start (KTIME_LAUNCH_COLUMNS)\n");
    fprintf(f, "%10s %10s %10s %10s %10s  %s\n", "Launch us", "p99 us", "Queue us", "p99 us",
            "Kernel us", "Kernel");
    for (size_t i = 0; i < m->nrows; i++) {
        const struct rm_row *w = &m->rows[i];
        const struct rm_launch *l = w->launch;
        const char *sep = " (";
        if (!l)
            continue;
        fputs(" ", f);
        us_or_dash(f, &l->api, RS_MEAN);
        us_or_dash(f, &l->api, RS_P99);
        us_or_dash(f, &l->queue, RS_MEAN);
        us_or_dash(f, &l->queue, RS_P99);
        us_or_dash(f, &w->st, RS_MEAN);
        fprintf(f, "  %s", w->short_name);
        if (w->ref)
            fprintf(f, " [%d]", w->ref);
        if (l->launch_bound)
            fprintf(f, "%slaunch >= kernel", sep), sep = ", ";
        if (l->queue_long)
            fprintf(f, "%squeued long", sep), sep = ", ";
        fputs(*sep == ',' ? ")\n" : "\n", f);
    }
}

/* A gap's neighbour, shortened ("a copy" for none). */
static void neighbour(FILE *f, const char *name)
{
    char s[48];

    if (!name) {
        fputs("a copy", f);
        return;
    }
    report_short_name(name, s, sizeof s, 40);
    fputs(s, f);
}

static void text_gaps(FILE *f, const struct rm_gaps *g, const char *indent)
{
    const char *sep = "";

    if (!g->count)
        return;
    fprintf(f, "%sgaps by length:", indent);
    for (int b = 0; b < RM_NGAP_BINS; b++)
        if (g->bin_count[b]) {
            fprintf(f, "%s %s %llu (%.3f ms)", sep, bin_words[b],
                    (unsigned long long)g->bin_count[b], g->bin_ms[b]);
            sep = ",";
        }
    fputc('\n', f);
    for (size_t i = 0; i < g->ntop; i++) {
        const struct rm_gap *x = &g->top[i];
        fprintf(f, "%s%s %.3f ms at %.3f ms, after ", indent, i ? "        " : "largest ",
                x->len_us / 1000.0, x->at_ms);
        neighbour(f, x->before);
        fputs(", before ", f);
        neighbour(f, x->after);
        fputc('\n', f);
    }
}

/* "gpu 0    " and where a merged report's entry came from: "rank 3, " or "#2, " (nothing in
 * a run's report), then the timer. */
static void gpu_head(FILE *f, int device, long input, long rank, const char *method)
{
    fprintf(f, "gpu %-4d ", device);
    if (rank >= 0)
        fprintf(f, "rank %ld, ", rank);
    else if (input >= 0)
        fprintf(f, "#%ld, ", input);
    fprintf(f, "%s: ", method);
}

void text_busy(FILE *f, const struct model *m)
{
    const struct rm_busy *b = m->busy;
    bool events = false;

    if (!b || (!b->ndevs && !b->unplaced))
        return;
    fprintf(f, "\ngpu busy: the time at least one kernel or copy ran, from its first start to its "
               "last end, and the idle gaps\n");
    for (size_t i = 0; i < b->ndevs; i++) {
        const struct rm_busy_dev *d = &b->devs[i];
        events = events || strcmp(d->method, "events") == 0;
        gpu_head(f, d->device, d->input, d->rank, d->method);
        fprintf(f, "busy %.3f of %.3f ms (%.1f %%), idle %.3f ms in %llu gaps;\n         %llu "
                   "kernels (%.3f ms, %.2f at once)",
                d->v[RB_BUSY], d->v[RB_SPAN], d->v[RB_PERCENT],
                d->v[RB_IDLE], (unsigned long long)d->gaps.count,
                (unsigned long long)d->n[RBC_KERNELS], d->v[RB_KERNEL_MS],
                d->v[RB_CONCURRENCY]);
        if (d->n[RBC_COPIES])
            fprintf(f, ", %llu copies (%.3f ms)", (unsigned long long)d->n[RBC_COPIES],
                    d->v[RB_COPY_MS]);
        fputc('\n', f);
        text_gaps(f, &d->gaps, "         ");
        for (size_t j = 0; d->nstreams > 1 && j < d->nstreams; j++) {
            const struct rm_busy_stream *s = &d->streams[j];
            fprintf(f, "  stream %llu: busy %.3f ms (%.1f %%), %llu intervals, idle %.3f ms in "
                       "%llu gaps\n",
                    (unsigned long long)s->stream, s->busy_ms, s->busy_percent,
                    (unsigned long long)s->intervals, s->gaps.total_ms,
                    (unsigned long long)s->gaps.count);
        }
        if (d->n[RBC_OTHER_STREAMS])
            fprintf(f, "  (%llu intervals on streams past the first 64, not told apart)\n",
                    (unsigned long long)d->n[RBC_OTHER_STREAMS]);
        if (d->n[RBC_LATE])
            fprintf(f, "  (%llu intervals came too late to be placed in order: busy may be "
                       "understated)\n", (unsigned long long)d->n[RBC_LATE]);
    }
    for (size_t i = 0; i < b->nranges; i++) {
        const struct rm_busy_range *g = &b->ranges[i];
        if (g->name)
            fprintf(f, "range    \"%s\": %.3f ms of GPU time", g->name, g->busy_ms);
        else
            fprintf(f, "range    outside every range: %.3f ms of GPU time", g->busy_ms);
        if (g->has_percent)
            fprintf(f, " in %.3f ms of wall time (%.1f %%)", g->wall_ms, g->busy_percent);
        fputc('\n', f);
    }
    if (events)
        fprintf(f, "note     events: an approximation: each interval is an event pair's, which "
                   "holds its launch's latency\n         (a few us per kernel: busy overstated, "
                   "gaps understated), and only timed launches are seen\n");
    if (b->unplaced)
        fprintf(f, "note     %llu samples could not be placed on the timeline\n",
                (unsigned long long)b->unplaced);
}

void text_comm(FILE *f, const struct model *m)
{
    const struct rm_comm *c = m->comm;

    if (!c || !c->ndevs)
        return;
    fprintf(f, "\ncommunication: kernels whose name matches '%s' (KTIME_COMM), against the "
               "others on their GPU\n", c->pattern);
    for (size_t i = 0; i < c->ndevs; i++) {
        const struct rm_comm_dev *d = &c->devs[i];
        gpu_head(f, d->device, d->input, d->rank, d->method);
        fprintf(f, "%llu kernels, %.3f ms (busy %.3f ms); %.3f ms overlap compute (%.1f %%), "
                   "%.3f ms exposed\n",
                (unsigned long long)d->kernels, d->c[RK_COMM_MS],
                d->c[RK_COMM_BUSY], d->c[RK_OVERLAP], d->c[RK_OVERLAP_PERCENT],
                d->c[RK_EXPOSED]);
    }
    if (c->least >= 0) {
        const struct rm_comm_dev *d = &c->devs[c->least];
        fputs("least    ", f);
        if (d->rank >= 0)
            fprintf(f, "rank %ld", d->rank);
        else
            fprintf(f, "#%ld", d->input);
        fprintf(f, " (gpu %d) spent least in communication (%.3f ms): it waits least for the "
                   "others, a straggler's sign\n", d->device, d->c[RK_COMM_BUSY]);
    }
}
