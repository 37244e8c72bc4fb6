/* json.c - the report model as JSON (docs/report-format.md): the header, the kernels and the
 * totals; the sections are json_sections.c's. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonw.h"

#include "report.h"

/* The statistics of one launch shape (or of those folded into other), as members of an
 * object already open. */
static void json_shape_stats(struct jw *w, const struct rm_stats *s)
{
    jw_u64(w, "timed", s->timed);
    json_stats_range(w, s, RS_TOTAL, RS_M2);
    json_quantiles(w, s);
    jw_break(w, 10);
    json_histogram(w, s->hist);
}

/* "shapes": [...], "other_shapes": {...} or null. */
static void json_shapes(struct jw *w, const struct rm_row *k)
{
    jw_open(w, "shapes", '[', JW_BLOCK, 8, 6);
    for (size_t i = 0; i < k->nshapes; i++) {
        const struct rm_shape *s = &k->shapes[i];
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_open(w, "grid", '[', JW_INLINE, 0, 0);
        for (int j = 0; j < 3; j++)
            jw_u64(w, NULL, s->grid[j]);
        jw_close(w);
        jw_open(w, "block", '[', JW_INLINE, 0, 0);
        for (int j = 0; j < 3; j++)
            jw_u64(w, NULL, s->block[j]);
        jw_close(w);
        jw_u64(w, "shared_bytes", s->smem);
        json_shape_stats(w, &s->st);
        jw_close(w);
    }
    jw_close(w);
    if (!k->other) {
        jw_null(w, "other_shapes");
        return;
    }
    jw_open(w, "other_shapes", '{', JW_INLINE, 0, 0);
    jw_u64(w, "shapes", k->other->shapes);
    jw_bool(w, "untracked", k->other->untracked);
    json_shape_stats(w, &k->other->st);
    jw_close(w);
}

static void json_hw(struct jw *w, const struct rm_hw *h)
{
    jw_open(w, "hw", '{', JW_INLINE, 0, 0);
    jw_u64(w, "timed", h->st.timed);
    json_stats_range(w, &h->st, RS_MEAN, RS_M2);
    if (h->has_bias)
        jw_num(w, "bias_us", h->bias);
    else
        jw_null(w, "bias_us");
    jw_close(w);
}

static void json_per_device(struct jw *w, const struct rm_row *k)
{
    jw_open(w, "per_device", '[', JW_BLOCK, 8, 6);
    for (size_t d = 0; d < k->ndev; d++) {
        const struct rm_stats *s = &k->dev[d].st;
        jw_open(w, NULL, '{', JW_INLINE, 0, 0);
        jw_i64(w, "device", k->dev[d].device);
        jw_u64(w, "timed", s->timed);
        jw_num(w, rm_stat_key[RS_SUM], s->v[RS_SUM]);
        jw_num(w, rm_stat_key[RS_M2], s->v[RS_M2]);
        jw_num(w, rm_stat_key[RS_MIN], s->v[RS_MIN]);
        jw_num(w, rm_stat_key[RS_MAX], s->v[RS_MAX]);
        json_quantiles(w, s);
        /* What the text's and the CSV's per-GPU lines show (ktime report renders them). */
        jw_num(w, rm_stat_key[RS_MEAN], s->v[RS_MEAN]);
        jw_num(w, rm_stat_key[RS_STDDEV], s->v[RS_STDDEV]);
        jw_num(w, rm_stat_key[RS_PERCENT], s->v[RS_PERCENT]);
        jw_close(w);
    }
    jw_close(w);
}

static void json_kernel(struct jw *w, const struct rm_row *k)
{
    const struct rm_stats *s = &k->st;

    jw_open(w, NULL, '{', JW_BLOCK, 6, 4);
    jw_str(w, "name", k->name);
    jw_bytes_member(w, "name", k->name);
    jw_str(w, "mangled", k->mangled);
    jw_bytes_member(w, "mangled", k->mangled);
    jw_str(w, "kind", k->kind == REPORT_GRAPH ? "graph" : "kernel");
    jw_open(w, "devices", '[', JW_INLINE, 0, 0);
    for (size_t d = 0; d < k->ndev; d++)
        jw_i64(w, NULL, k->dev[d].device);
    jw_close(w);
    for (int i = RC_CALLS; i <= RC_INCOMPLETE; i++)
        jw_u64(w, rm_count_key[i], k->n[i]);
    jw_u64(w, "timed", s->timed);
    jw_u64(w, rm_count_key[RC_UNGATED], k->n[RC_UNGATED]);
    jw_num(w, rm_stat_key[RS_TOTAL], s->v[RS_TOTAL]);
    jw_bool(w, "total_estimated", k->total_estimated);
    if (k->sampled_1_in)
        jw_i64(w, "sampled_1_in", k->sampled_1_in);
    jw_u64(w, rm_count_key[RC_UNSAMPLED], k->n[RC_UNSAMPLED]);
    jw_u64(w, rm_count_key[RC_BY_NODES], k->n[RC_BY_NODES]);
    jw_u64(w, rm_count_key[RC_OUTSIDE], k->n[RC_OUTSIDE]);
    jw_u64(w, rm_count_key[RC_PAUSED], k->n[RC_PAUSED]);
    json_stats_range(w, s, RS_PERCENT, RS_STDDEV);
    json_quantiles(w, s);
    jw_bool(w, "few_samples", k->few_samples);
    json_histogram(w, s->hist);
    json_stats_range(w, s, RS_SUM, RS_M2);
    jw_u64(w, rm_count_key[RC_IN_GRAPH], k->n[RC_IN_GRAPH]);
    jw_u64(w, rm_count_key[RC_CUPTI_TIMED], k->n[RC_CUPTI_TIMED]);
    jw_bool(w, "near_floor", k->near_floor);
    json_launch(w, k);
    if (k->hw)
        json_hw(w, k->hw);
    json_per_device(w, k);
    json_shapes(w, k);
    if (k->ranks || k->spread)
        json_ranks(w, k);
    jw_close(w);
}

static void json_totals(struct jw *w, const struct model *m)
{
    const struct rm_totals *t = &m->totals;

    jw_open(w, "totals", '{', JW_BLOCK, 4, 2);
    for (int i = RT_LAUNCHES; i <= RT_DROPPED; i++)
        jw_u64(w, rm_total_key[i], t->n[i]);
    jw_open(w, "dropped_reasons", '{', JW_INLINE, 0, 0);
    for (int i = 0; i < RM_NDROPS; i++)
        jw_u64(w, rm_drop_key[i], t->drops[i]);
    jw_close(w);
    for (int i = RT_FAILED; i < RM_NTOTALS; i++)
        jw_u64(w, rm_total_key[i], t->n[i]);
    if (t->has_sample)
        jw_i64(w, "sample", t->sample);
    else
        jw_null(w, "sample");
    jw_num(w, "timed_total_ms", t->timed_total_ms);
    jw_close(w);
}

int model_write_json(FILE *f, const struct model *m)
{
    struct jw w;

    jw_init(&w, f);
    jw_open(&w, NULL, '{', JW_BLOCK, 2, 0);
    json_header(&w, m);
    json_devices(&w, m);
    json_conditions(&w, m->cond);
    jw_open(&w, "kernels", '[', JW_BLOCK, 4, 2);
    for (size_t i = 0; i < m->nrows; i++)
        json_kernel(&w, &m->rows[i]);
    jw_close(&w);
    json_memops(&w, m);
    json_ranges(&w, m);
    json_busy(&w, m);
    json_comm(&w, m);
    json_totals(&w, m);
    if (m->note)
        jw_str(&w, "note", m->note);
    if (m->merged)
        json_merged(&w, m);
    if (m->balance)
        json_balance(&w, m->balance);
    jw_close(&w);
    fputc('\n', f);
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}
