/* prom.c - the report model in the Prometheus text exposition format (version 0.0.4): what
 * node_exporter's textfile collector serves. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "model.h"

#include <math.h>
#include <string.h>

#include "jsonout.h"

/* A label value: UTF-8 (a stray byte is U+FFFD), with '\\', '"' and line feeds escaped as the
 * format asks. */
static void label_value(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");

    fputc('"', f);
    while (*p) {
        size_t k = utf8_seq(p);
        if (k == 0) {
            fputs("\xef\xbf\xbd", f);
            p++;
            continue;
        }
        if (*p == '\\')
            fputs("\\\\", f);
        else if (*p == '"')
            fputs("\\\"", f);
        else if (*p == '\n')
            fputs("\\n", f);
        else
            fwrite(p, 1, k, f);
        p += k;
    }
    fputc('"', f);
}

static void value(FILE *f, double v)
{
    if (isnan(v))
        fputs(" NaN\n", f);
    else if (isinf(v))
        fputs(v > 0 ? " +Inf\n" : " -Inf\n", f);
    else
        fprintf(f, " %.17g\n", v);
}

static void count(FILE *f, uint64_t v)
{
    fprintf(f, " %llu\n", (unsigned long long)v);
}

static void family(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* name{host="...",rank="..." and, when gpu >= 0, ,gpu="N", and ,kernel="..." when kernel is
 * set, then extra (already formatted, or NULL)}. */
static void series(FILE *f, const struct model *m, const char *name, int gpu, const char *kernel,
                   const char *extra)
{
    const char *sep = "";

    fprintf(f, "%s{", name);
    if (m->host) {
        fputs("host=", f);
        label_value(f, m->host);
        sep = ",";
    }
    if (m->rank_text) {
        fprintf(f, "%srank=", sep);
        label_value(f, m->rank_text);
        sep = ",";
    }
    if (gpu >= 0) {
        fprintf(f, "%sgpu=\"%d\"", sep, gpu);
        sep = ",";
    }
    if (kernel) {
        fprintf(f, "%skernel=", sep);
        label_value(f, kernel);
        sep = ",";
    }
    if (extra)
        fprintf(f, "%s%s", sep, extra);
    fputc('}', f);
}

/* The per-GPU families, each a block of its own as the format asks. */
enum part_family { PART_TIMED, PART_SECONDS, PART_SUMMARY };

static void part_lines(FILE *f, const struct model *m, enum part_family which)
{
    static const char *const q[RM_NQ] = { "quantile=\"0.5\"", "quantile=\"0.9\"",
                                          "quantile=\"0.99\"" };

    for (size_t i = 0; i < m->nrows; i++) {
        const struct rm_row *w = &m->rows[i];
        for (size_t d = 0; d < w->ndev; d++) {
            const struct rm_stats *s = &w->dev[d].st;
            int dev = w->dev[d].device;
            switch (which) {
            case PART_TIMED:
                series(f, m, "ktime_kernel_timed_launches_total", dev, w->name, NULL);
                count(f, s->timed);
                break;
            case PART_SECONDS:
                series(f, m, "ktime_kernel_gpu_seconds_total", dev, w->name, NULL);
                value(f, s->v[RS_SUM] / 1e6);
                break;
            case PART_SUMMARY:
                for (int j = 0; j < RM_NQ; j++) {
                    if (s->v[RS_P50 + j] < 0)
                        continue;
                    series(f, m, "ktime_kernel_duration_seconds", dev, w->name, q[j]);
                    value(f, s->v[RS_P50 + j] / 1e6);
                }
                series(f, m, "ktime_kernel_duration_seconds_sum", dev, w->name, NULL);
                value(f, s->v[RS_SUM] / 1e6);
                series(f, m, "ktime_kernel_duration_seconds_count", dev, w->name, NULL);
                count(f, s->timed);
                break;
            }
        }
    }
}

int model_write_prom(FILE *f, const struct model *m)
{
    family(f, "ktime_kernel_launches_total", "counter",
           "Kernel (and CUDA graph) launches ktime saw: warmup, untimed and failed ones included.");
    for (size_t i = 0; i < m->nrows; i++) {
        series(f, m, "ktime_kernel_launches_total", -1, m->rows[i].name, NULL);
        count(f, m->rows[i].n[RC_CALLS]);
    }
    family(f, "ktime_kernel_timed_launches_total", "counter", "Kernel launches timed, by GPU.");
    part_lines(f, m, PART_TIMED);
    family(f, "ktime_kernel_gpu_seconds_total", "counter",
           "GPU time of the timed launches, by GPU, in seconds.");
    part_lines(f, m, PART_SECONDS);
    family(f, "ktime_kernel_duration_seconds", "summary",
           "Durations of the timed launches, by GPU, in seconds (quantiles over the counts so far).");
    part_lines(f, m, PART_SUMMARY);
    family(f, "ktime_launches_dropped_total", "counter",
           "Launches ktime passed through untimed, by reason (memory operations included).");
    for (int i = 0; i < RM_NDROPS; i++) {
        char reason[64];
        snprintf(reason, sizeof reason, "reason=\"%s\"", rm_drop_key[i]);
        series(f, m, "ktime_launches_dropped_total", -1, NULL, reason);
        count(f, m->totals.drops[i]);
    }
    family(f, "ktime_launches_paused_total", "counter",
           "Kernel launches made while timing was off (ktime ctl off), counted, not timed.");
    series(f, m, "ktime_launches_paused_total", -1, NULL, NULL);
    count(f, m->totals.n[RT_PAUSED]);
    if (m->snapshot) {
        family(f, "ktime_snapshot_seq", "gauge",
               "The reports this process has written, this one included.");
        series(f, m, "ktime_snapshot_seq", -1, NULL, NULL);
        count(f, m->snapshot->seq);
        family(f, "ktime_snapshot_timestamp_seconds", "gauge",
               "When this snapshot's counts were read, in seconds since the epoch.");
        series(f, m, "ktime_snapshot_timestamp_seconds", -1, NULL, NULL);
        value(f, m->snapshot->at_unix);
        family(f, "ktime_snapshot_final", "gauge",
               "1 in the report written at the process's exit, 0 while it runs.");
        series(f, m, "ktime_snapshot_final", -1, NULL, NULL);
        count(f, m->snapshot->final);
        family(f, "ktime_timing_on", "gauge", "1 while ktime times launches, 0 while it is off.");
        series(f, m, "ktime_timing_on", -1, NULL, NULL);
        count(f, !m->snapshot->paused);
    }
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}
