/* text_sections.c - the text report's sections between the kernels' rows and the footer:
 * a merged report's load balance, KTIME_TIMER=both's bias, memory operations, ranges. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "text.h"

#include <string.h>

#include "names.h"

/* The Med and p99 columns; `none` where there is no value. */
void text_quantiles(FILE *f, const struct rm_stats *s, const char *none)
{
    for (int j = RS_P50; j <= RS_P99; j += RS_P99 - RS_P50) {
        if (s->v[j] >= 0)
            fprintf(f, "%11.3f ", s->v[j]);
        else
            fprintf(f, "%11s ", none);
    }
}

void text_notes(FILE *f, const struct rm_row *w)
{
    static const struct { int count; const char *words; } notes[] = {
        { RC_IN_GRAPH, "in graphs" }, { RC_BY_NODES, "timed by their kernel nodes" },
        { RC_OUTSIDE, "outside range" }, { RC_PAUSED, "paused" },
        { RC_UNSAMPLED, "not sampled" },
        { RC_CAPTURED, "captured" }, { RC_DROPPED, "dropped" }, { RC_FAILED, "failed" },
        { RC_INCOMPLETE, "incomplete" },
    };
    const char *sep = " (";

    /* A row with launches, every one of them warmup: no sample, and why. */
    if (w->n[RC_CALLS] && w->n[RC_WARMUP] == w->n[RC_CALLS])
        fprintf(f, "%sall warmup", sep), sep = ", ";
    if (w->few_samples)
        fprintf(f, "%sfew samples", sep), sep = ", ";
    /* KTIME_SAMPLE: its Total ms and Time% are its mean times its launches. */
    if (w->total_estimated)
        fprintf(f, "%stotal estimated", sep), sep = ", ";
    if (w->near_floor)
        fprintf(f, "%snear floor", sep), sep = ", ";
    if (w->sampled_1_in > 1)
        fprintf(f, "%ssampled 1 in %ld", sep, w->sampled_1_in), sep = ", ";
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++) {
        /* A kernel's unsampled launches are in the totals' line, not its row's. */
        if (!w->n[notes[i].count] || (notes[i].count == RC_UNSAMPLED && w->kind != REPORT_MEMOP))
            continue;
        fprintf(f, "%s%llu %s", sep, (unsigned long long)w->n[notes[i].count], notes[i].words);
        sep = ", ";
    }
    if (*sep == ',')
        fputc(')', f);
}

void text_spread(FILE *f, const struct model *m)
{
    fprintf(f, "\nload balance: each kernel's total time on its slowest and its fastest rank, "
               "and the slowest over the mean of the ranks\n");
    fprintf(f, "%6s %12s %6s %12s %6s %8s %8s  %s\n", "Ranks", "Slowest ms", "Rank", "Fastest ms",
            "Rank", "Ratio", "Imbal", "Kernel");
    for (size_t i = 0; i < m->nrows; i++) {
        const struct rm_row *w = &m->rows[i];
        const struct rm_spread *sp = w->spread;
        char ratio[32] = "-", imbal[32] = "-";
        if (!sp)
            continue;
        if (sp->has_ratio)
            snprintf(ratio, sizeof ratio, "%.3f", sp->ratio);
        if (sp->has_mean)
            snprintf(imbal, sizeof imbal, "%+.1f%%", 100 * sp->imbalance);
        fprintf(f, "%6llu %12.3f %6s %12.3f %6s %8s %8s  ", (unsigned long long)sp->ranks,
                sp->slowest.total_ms, sp->slowest.label, sp->fastest.total_ms, sp->fastest.label,
                ratio, imbal);
        report_put_escaped(f, w->short_name);
        fputc('\n', f);
    }
}

void text_balance(FILE *f, const struct rm_balance *b)
{
    const struct rm_balance_rank *s = &b->slowest;

    fprintf(f, "\nbalance: each rank's GPU time in compute kernels and in NCCL's (where a rank "
               "that is ahead waits for the others)\n");
    fprintf(f, "ranks    %llu", (unsigned long long)b->ranks);
    if (b->world_size > 0)
        fprintf(f, " of %ld", b->world_size);
    fprintf(f, " merged");
    for (size_t i = 0; i < b->nmissing; i++)
        fprintf(f, "%s%ld", i ? ", " : "; missing: rank ", b->missing[i]);
    fputc('\n', f);
    for (size_t i = 0; i < b->nunread; i++)
        fprintf(f, "unread   %s\n", b->unread[i]);
    bool nccl = b->nccl_median_ms > 0 || (b->has_slowest && s->nccl_ms > 0);
    if (b->has_slowest) {
        fprintf(f, "compute  median %.3f ms; the most: rank %s, %.3f ms (%+.3f ms, %+.1f%%)\n",
                b->compute_median_ms, s->label, s->compute_ms, b->excess_ms, b->excess_pct);
        if (nccl)
            fprintf(f, "nccl     median %.3f ms; rank %s %.3f ms (the median rank's %+.3f ms "
                       "over it)\n", b->nccl_median_ms, s->label, s->nccl_ms, b->wait_ms);
        else
            fprintf(f, "nccl     none (no NCCL kernel ran)\n");
    }
    if (strcmp(b->verdict, "straggler") == 0)
        fprintf(f, "verdict  straggler: rank %s (its compute %+.1f%% over the median rank's, "
                   "while the others wait for it in NCCL kernels)\n", s->label, b->excess_pct);
    else if (strcmp(b->verdict, "imbalanced") == 0 && nccl)
        fprintf(f, "verdict  imbalanced: rank %s computes %+.1f%% over the median rank, but the "
                   "others do not wait for it in NCCL kernels\n", s->label, b->excess_pct);
    else if (strcmp(b->verdict, "imbalanced") == 0)
        fprintf(f, "verdict  imbalanced: rank %s computes %+.1f%% over the median rank (no NCCL "
                   "kernels tell whether the others wait for it)\n", s->label, b->excess_pct);
    else if (strcmp(b->verdict, "balanced") == 0)
        fprintf(f, "verdict  balanced: no rank's compute stands out\n");
    else
        fprintf(f, "verdict  %s\n", b->verdict);
    if (!b->rows || !b->nrows)
        return;
    fprintf(f, "%6s %12s %12s\n", "Rank", "Compute ms", "NCCL ms");
    for (size_t i = 0; i < b->nrows; i++)
        fprintf(f, "%6s %12.3f %12.3f\n", b->rows[i].label, b->rows[i].compute_ms,
                b->rows[i].nccl_ms);
}

void text_bias(FILE *f, const struct model *m)
{
    fprintf(f, "\nevents against the hardware (CUPTI), per kernel: the events' bias is their mean "
               "minus the hardware's\n");
    fprintf(f, "%9s %11s %9s %11s %11s  %s\n", "Timed", "Events us", "HW timed", "HW us",
            "Bias us", "Kernel");
    for (size_t i = 0; i < m->nrows; i++) {
        const struct rm_row *w = &m->rows[i];
        uint64_t n = w->st.timed, hn = w->hw ? w->hw->st.timed : 0;
        if (w->kind != REPORT_KERNEL || (n == 0 && hn == 0))
            continue;
        if (n && hn)
            fprintf(f, "%9llu %11.3f %9llu %11.3f %+11.3f  ", (unsigned long long)n,
                    w->st.v[RS_MEAN], (unsigned long long)hn, w->hw->st.v[RS_MEAN], w->hw->bias);
        else if (hn)
            fprintf(f, "%9llu %11s %9llu %11.3f %11s  ", (unsigned long long)n, "-",
                    (unsigned long long)hn, w->hw->st.v[RS_MEAN], "-");
        else
            fprintf(f, "%9llu %11.3f %9llu %11s %11s  ", (unsigned long long)n,
                    w->st.v[RS_MEAN], 0ULL, "-", "-");
        report_put_escaped(f, w->short_name);
        fputc('\n', f);
    }
}

void text_memops(FILE *f, const struct model *m)
{
    if (!m->memops_on || !m->nmemops)
        return;
    fprintf(f, "\nmemory operations: copies and sets, each between an event pair on its stream "
               "as a launch is;\nnever inside a kernel's interval (KTIME_MEMOPS=0: not "
               "timed)\n");
    fprintf(f, "%12s %9s %7s %9s %11s %11s %11s %11s %12s %9s  %s\n", "Total ms", "Calls",
            "Warmup", "Timed", "Mean us", "Med us", "Min us", "Max us", "Total MB", "GB/s",
            "Kind");
    for (size_t i = 0; i < m->nmemops; i++) {
        const struct rm_row *w = &m->memops[i];
        const struct rm_stats *s = &w->st;
        double mb = (double)w->n[RC_BYTES] / 1e6;
        if (s->timed > 0) {
            fprintf(f, "%12.3f %9llu %7llu %9llu %11.3f ", s->v[RS_TOTAL],
                    (unsigned long long)w->n[RC_CALLS], (unsigned long long)w->n[RC_WARMUP],
                    (unsigned long long)s->timed, s->v[RS_MEAN]);
            if (s->v[RS_P50] >= 0)
                fprintf(f, "%11.3f ", s->v[RS_P50]);
            else
                fprintf(f, "%11s ", "-");
            fprintf(f, "%11.3f %11.3f %12.3f ", s->v[RS_MIN], s->v[RS_MAX], mb);
            if (w->has_gbps)
                fprintf(f, "%9.2f  %s", w->gbps, w->name);
            else
                fprintf(f, "%9s  %s", "-", w->name);
        } else {
            fprintf(f, "%12s %9llu %7llu %9llu %11s %11s %11s %11s %12.3f %9s  %s", "-",
                    (unsigned long long)w->n[RC_CALLS], (unsigned long long)w->n[RC_WARMUP], 0ULL,
                    "-", "-", "-", "-", mb, "-", w->name);
        }
        text_notes(f, w);
        fputc('\n', f);
    }
}

/* A range's line: its name (quoted) or "outside every range", and its figures. */
static void range_head(FILE *f, const struct rm_range *g)
{
    if (g->name) {
        fputs("range    \"", f);
        report_put_escaped(f, g->name);
        fprintf(f, "\": %llu closed, %.3f ms of wall time", (unsigned long long)g->closed,
                g->wall_ms);
        if (g->open)
            fprintf(f, ", %llu open at exit", (unsigned long long)g->open);
    } else {
        fputs("range    outside every range", f);
    }
    fprintf(f, "; %llu timed launches, %.3f ms of GPU time\n", (unsigned long long)g->timed,
            g->total_ms);
}

/* A kernel is named as in the kernels' table, with its [n] when the name was cut there. */
static void range_rows(FILE *f, const struct rm_range *g)
{
    fprintf(f, "%7s %12s %9s %11s %11s %11s %11s %11s %11s  %s\n", "Time%", "Total ms", "Timed",
            "Mean us", "Med us", "p99 us", "Min us", "Max us", "Stddev us", "Kernel");
    for (size_t j = 0; j < g->nrows; j++) {
        const struct rm_row *w = &g->rows[j];
        const struct rm_stats *s = &w->st;
        fprintf(f, "%7.2f %12.3f %9llu %11.3f ", s->v[RS_PERCENT], s->v[RS_TOTAL],
                (unsigned long long)s->timed, s->v[RS_MEAN]);
        text_quantiles(f, s, "-");
        fprintf(f, "%11.3f %11.3f %11.3f  ", s->v[RS_MIN], s->v[RS_MAX], s->v[RS_STDDEV]);
        report_put_escaped(f, w->short_name);
        if (w->ref)
            fprintf(f, " [%d]", w->ref);
        fputc('\n', f);
    }
}

void text_ranges(FILE *f, const struct model *m)
{
    const struct rm_ranges *r = m->ranges;

    if (!r)
        return;
    fprintf(f, "\nranges: each timed launch under the %s range open on its thread when it was made "
               "(KTIME_RANGES);\nNVTX: %s\n", r->attribution, r->nvtx);
    if (r->unmatched_pops || r->too_deep)
        fprintf(f, "(%llu pops without a range open; %llu pushes deeper than 64, not attributed)\n",
                (unsigned long long)r->unmatched_pops, (unsigned long long)r->too_deep);
    for (size_t i = 0; i < r->nby_name; i++) {
        range_head(f, &r->by_name[i]);
        if (r->by_name[i].nrows)
            range_rows(f, &r->by_name[i]);
    }
}
