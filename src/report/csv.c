/* csv.c - the report model as CSV (RFC 4180, CRLF line ends; docs/report-format.md). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "model.h"

#include <string.h>

#include "jsonout.h"
#include "names.h"

void report_csv_field(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    bool quote = n && (p[0] == ' ' || p[n - 1] == ' ');
    char esc[8];

    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"';
    if (quote)
        fputc('"', f);
    /* A spreadsheet takes a cell beginning with = + - @ (or a tab or CR, escaped here) for a
     * formula; one beginning with ' gets the same mark, so that a reader drops the first ' of
     * every cell that has one. */
    if (n && strchr("=+-@'", p[0]))
        fputc('\'', f);
    while (*p) {
        size_t k, e = report_escape_char((const char *)p, esc, &k);
        if (e)
            fwrite(esc, 1, e, f);
        else if (!utf8_seq(p))
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
        else if (*p == '"')
            fputs("\"\"", f);
        else
            fwrite(p, 1, k, f);
        p += k;
    }
    if (quote)
        fputc('"', f);
}

static void csv_opt(FILE *f, bool has, double v);

/* The header row: every column's name from fields.h, but for the names and the shape's. */
static void csv_header(FILE *f)
{
    fputs("name,mangled,kind,device", f);
    for (int i = RC_CALLS; i <= RC_INCOMPLETE; i++)
        fprintf(f, ",%s", rm_count_key[i]);
    fputs(",timed", f);
    for (int i = RC_UNGATED; i <= RC_CUPTI_TIMED; i++)
        fprintf(f, ",%s", rm_count_key[i]);
    fprintf(f, ",%s,total_estimated", rm_stat_key[RS_TOTAL]);
    for (int i = RS_PERCENT; i <= RS_P99; i++)
        fprintf(f, ",%s", rm_stat_key[i]);
    fputs(",few_samples,near_floor,hw_timed,hw_mean_us,bias_us,launch_timed,launch_mean_us,"
          "launch_p99_us,queue_timed,queue_mean_us,queue_p99_us,launch_bound,queue_long", f);
    fprintf(f, ",%s,grid,block,shared_bytes,%s,sampled_1_in\r\n", rm_count_key[RC_OUTSIDE],
            rm_count_key[RC_PAUSED]);
}

/* The launch calls' and queue times' columns of a row (empty for a sub-row: w NULL). */
static void csv_launch(FILE *f, const struct rm_row *w)
{
    const struct rm_launch *l = w ? w->launch : NULL;
    const struct rm_stats *b[2] = { l ? &l->api : NULL, l ? &l->queue : NULL };

    if (!w) {
        fputs(",,,,,,,,", f);
        return;
    }
    for (int i = 0; i < 2; i++) {
        uint64_t n = b[i] ? b[i]->timed : 0;
        fprintf(f, ",%llu", (unsigned long long)n);
        csv_opt(f, n > 0, n ? b[i]->v[RS_MEAN] : 0);
        csv_opt(f, n > 0 && b[i]->v[RS_P99] >= 0, n ? b[i]->v[RS_P99] : 0);
    }
    fprintf(f, ",%s,%s", l && l->launch_bound ? "true" : "false",
            l && l->queue_long ? "true" : "false");
}

static void csv_num(FILE *f, double v)
{
    fprintf(f, ",%.17g", v);
}

/* ",v", or "," for none (v < 0). */
static void csv_opt(FILE *f, bool has, double v)
{
    if (has)
        csv_num(f, v);
    else
        fputc(',', f);
}

/* mean, min, max, stddev, sum, m2, then the quantiles (each empty when none). */
static void csv_stats(FILE *f, const struct rm_stats *s, bool with_stats)
{
    for (int i = RS_MEAN; i <= RS_M2; i++)
        if (with_stats)
            csv_num(f, s->v[i]);
        else
            fputc(',', f);
    for (int i = RS_P50; i <= RS_P99; i++)
        csv_opt(f, s->v[i] >= 0, s->v[i]);
}

static const char *kind_word(const struct rm_row *w)
{
    return w->kind == REPORT_GRAPH ? "graph" : "kernel";
}

/* A row with only samples' columns (a GPU's, or a launch shape's): the kernel's name, kind
 * and `device`, then timed, total_ms, percent, the statistics and quantiles; the counts are
 * the kernel's row's. Up to queue_long (the launch columns empty); the caller ends the row. */
static void csv_sub_row(FILE *f, const struct rm_row *w, const char *device,
                        const struct rm_stats *s)
{
    report_csv_field(f, w->name);
    fputc(',', f);
    report_csv_field(f, w->mangled);
    fprintf(f, ",%s,%s,,,,,,,%llu,,,,,", kind_word(w), device, (unsigned long long)s->timed);
    csv_num(f, s->v[RS_TOTAL]);
    fputc(',', f);
    csv_num(f, s->v[RS_PERCENT]);
    csv_stats(f, s, true);
    fputs(",,,,,", f);
    csv_launch(f, NULL);
}

static void csv_row(FILE *f, const struct model *m, const struct rm_row *w)
{
    report_csv_field(f, w->name);
    fputc(',', f);
    report_csv_field(f, w->mangled);
    fprintf(f, ",%s,all", kind_word(w));
    for (int i = RC_CALLS; i <= RC_INCOMPLETE; i++)
        fprintf(f, ",%llu", (unsigned long long)w->n[i]);
    fprintf(f, ",%llu", (unsigned long long)w->st.timed);
    for (int i = RC_UNGATED; i <= RC_CUPTI_TIMED; i++)
        fprintf(f, ",%llu", (unsigned long long)w->n[i]);
    csv_num(f, w->st.v[RS_TOTAL]);
    fprintf(f, ",%s", w->total_estimated ? "true" : "false");
    csv_num(f, w->st.v[RS_PERCENT]);
    csv_stats(f, &w->st, w->st.timed > 0);
    fprintf(f, ",%s,%s", w->few_samples ? "true" : "false", w->near_floor ? "true" : "false");
    if (w->hw) {
        fprintf(f, ",%llu", (unsigned long long)w->hw->st.timed);
        csv_opt(f, w->hw->st.timed > 0, w->hw->st.v[RS_MEAN]);
        csv_opt(f, w->hw->has_bias, w->hw->bias);
    } else {
        fputs(",,,", f);
    }
    csv_launch(f, w);
    fprintf(f, ",%llu,,,,%llu,", (unsigned long long)w->n[RC_OUTSIDE],
            (unsigned long long)w->n[RC_PAUSED]);
    if (w->sampled_1_in)
        fprintf(f, "%ld", w->sampled_1_in);
    fputs("\r\n", f);
    /* One row per GPU when it ran on several, then its launch shapes. */
    for (size_t d = 0; w->ndev > 1 && d < w->ndev; d++) {
        char dev[16];
        snprintf(dev, sizeof dev, "%d", w->dev[d].device);
        csv_sub_row(f, w, dev, &w->dev[d].st);
        fputs(",,,,,,\r\n", f);
    }
    if (!m->group_shape)
        return;
    for (size_t j = 0; j < w->nshapes; j++) {
        const struct rm_shape *s = &w->shapes[j];
        csv_sub_row(f, w, "all", &s->st);
        fprintf(f, ",,%ux%ux%u,%ux%ux%u,%u,,\r\n", s->grid[0], s->grid[1], s->grid[2], s->block[0],
                s->block[1], s->block[2], s->smem);
    }
    if (w->other && w->other->st.timed) {
        csv_sub_row(f, w, "all", &w->other->st);
        fputs(",,other,other,,,\r\n", f);
    }
}

int model_write_csv(FILE *f, const struct model *m)
{
    csv_header(f);
    for (size_t i = 0; i < m->nrows; i++)
        csv_row(f, m, &m->rows[i]);
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}
