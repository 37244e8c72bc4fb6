/* read_sections.c - the JSON report reader's sections: memory operations, ranges and the
 * run's conditions (read.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "read.h"

#include <limits.h>
#include <math.h>
#include <string.h>

#define OOM(r, where) rd_fail(r, where, "could not be read: out of memory")

bool rd_memops(struct rd *r, const struct jv *root)
{
    const struct jv *ms = rd_get(r, root, "", "memops", JV_ARRAY, true, false);
    static const int counts[] = { RC_WARMUP, RC_CAPTURED, RC_DROPPED, RC_FAILED, RC_INCOMPLETE,
                                  RC_OUTSIDE, RC_PAUSED, RC_UNSAMPLED, RC_UNGATED };
    char at[64];

    if (!ms || ms->type != JV_ARRAY)
        return !r->failed;
    r->m->memops_on = true;
    if (ms->n && !(r->m->memops = model_alloc(r->m, ms->n * sizeof *r->m->memops)))
        return OOM(r, "memops");
    for (size_t i = 0; i < ms->n; i++, r->m->nmemops++) {
        const struct jv *e = &ms->items[i];
        struct rm_row *w = &r->m->memops[i];
        rd_index(at, sizeof at, "memops", i);
        w->kind = REPORT_MEMOP;
        w->mangled = "";
        if (!rd_object(r, e, at) || !rd_str(r, e, at, "kind", true, NULL, &w->name) ||
            !rd_count(r, e, at, rm_count_key[RC_CALLS], true, 0, &w->n[RC_CALLS]) ||
            !rd_count(r, e, at, rm_count_key[RC_BYTES], true, 0, &w->n[RC_BYTES]) ||
            !rd_count(r, e, at, rm_count_key[RC_TIMED_BYTES], true, 0, &w->n[RC_TIMED_BYTES]) ||
            !rd_stats(r, e, at, &w->st, 0) ||
            !rd_num(r, e, at, "gb_per_s", false, true, 0, &w->gbps, &w->has_gbps))
            return false;
        for (size_t j = 0; j < sizeof counts / sizeof counts[0]; j++)
            if (!rd_count(r, e, at, rm_count_key[counts[j]], false, 0, &w->n[counts[j]]))
                return false;
        w->few_samples = w->st.timed > 0 && w->st.timed < FEW_SAMPLES;
    }
    return true;
}

/* ---- ranges ---- */

static bool rd_range(struct rd *r, const struct jv *g, const char *where, struct rm_range *o)
{
    const struct jv *ks;
    char at[160], ei[192];

    if (!rd_object(r, g, where) || !rd_raw(r, g, where, "name", false, NULL, &o->name) ||
        !rd_count(r, g, where, "closed", false, 0, &o->closed) ||
        !rd_count(r, g, where, "open_at_exit", false, 0, &o->open) ||
        !rd_num(r, g, where, "wall_ms", false, false, 0, &o->wall_ms, NULL) ||
        !rd_count(r, g, where, "timed", false, 0, &o->timed) ||
        !rd_num(r, g, where, "total_ms", false, false, 0, &o->total_ms, NULL))
        return false;
    ks = rd_get(r, g, where, "kernels", JV_ARRAY, true, false);
    if (!ks || ks->type != JV_ARRAY || !ks->n)
        return !r->failed;
    if (!(o->rows = model_alloc(r->m, ks->n * sizeof *o->rows)))
        return OOM(r, where);
    rd_at(at, sizeof at, where, "kernels");
    for (size_t j = 0; j < ks->n; j++, o->nrows++) {
        const struct jv *k = &ks->items[j];
        struct rm_row *w = &o->rows[j];
        const struct jv *kind;
        rd_index(ei, sizeof ei, at, j);
        if (!rd_object(r, k, ei) || !rd_raw(r, k, ei, "name", true, NULL, &w->name) ||
            !rd_raw(r, k, ei, "mangled", true, NULL, &w->mangled) ||
            !rd_stats(r, k, ei, &w->st, 0))
            return false;
        kind = rd_get(r, k, ei, "kind", JV_STRING, false, false);
        w->kind = kind && strcmp(kind->s, "graph") == 0 ? REPORT_GRAPH : REPORT_KERNEL;
    }
    return !r->failed;
}

/* The section's key was "regions" and its list's "ranges" in earlier reports (their earlier
 * names). */
bool rd_ranges(struct rd *r, const struct jv *root)
{
    const char *gk = rd_key(root, "ranges", "regions"), *lk; /* earlier name */
    const struct jv *g = rd_get(r, root, "", gk, JV_OBJECT, true, false), *rs;
    struct rm_ranges *o;
    char at[64], list[32];

    if (!g || g->type != JV_OBJECT)
        return !r->failed;
    lk = rd_key(g, "by_name", "ranges"); /* earlier name */
    if (!(o = r->m->ranges = model_alloc(r->m, sizeof *o)))
        return OOM(r, gk);
    if (!rd_str(r, g, gk, "attribution", false, "innermost", &o->attribution) ||
        !rd_str(r, g, gk, "nvtx", false, "not injected", &o->nvtx) ||
        !rd_count(r, g, gk, "unmatched_pops", false, 0, &o->unmatched_pops) ||
        !rd_count(r, g, gk, "too_deep", false, 0, &o->too_deep) ||
        !(rs = rd_get(r, g, gk, lk, JV_ARRAY, false, true)))
        return false;
    snprintf(list, sizeof list, "%s.%s", gk, lk);
    if (!o->attribution)
        o->attribution = "innermost";
    if (!o->nvtx)
        o->nvtx = "not injected";
    if (rs->n && !(o->by_name = model_alloc(r->m, rs->n * sizeof *o->by_name)))
        return OOM(r, gk);
    for (size_t i = 0; i < rs->n; i++, o->nby_name++)
        if (!rd_range(r, &rs->items[i], rd_index(at, sizeof at, list, i),
                      &o->by_name[i]))
            return false;
    return true;
}

/* ---- conditions ---- */

/* An integer figure, or null (absent too): RM_NULL. */
static bool rd_figure(struct rd *r, const struct jv *o, const char *where, const char *key,
                      int64_t *out)
{
    const struct jv *v = rd_get(r, o, where, key, JV_NUMBER, true, false);

    *out = RM_NULL;
    if (!v || v->type != JV_NUMBER)
        return !r->failed;
    if (v->num != floor(v->num) || fabs(v->num) > 9e15)
        return rd_bad(r, where, key, v, "an integer");
    *out = (int64_t)v->num;
    return true;
}

/* A boolean or null (absent too): -1. */
static bool rd_tristate(struct rd *r, const struct jv *o, const char *where, const char *key,
                        int *out)
{
    const struct jv *v = rd_get(r, o, where, key, JV_BOOL, true, false);

    *out = v && v->type == JV_BOOL ? v->b : -1;
    return !r->failed;
}

static bool rd_others(struct rd *r, const struct jv *d, const char *where, struct rm_cond_dev *o)
{
    const struct jv *ps = rd_get(r, d, where, "other_processes", JV_ARRAY, true, false);
    char at[160], ei[192];

    o->others_listed = ps && ps->type == JV_ARRAY;
    if (o->others_listed && ps->n && !(o->others = model_alloc(r->m, ps->n * sizeof *o->others)))
        return OOM(r, where);
    rd_at(at, sizeof at, where, "other_processes");
    for (size_t i = 0; o->others_listed && i < ps->n; i++, o->nothers++) {
        const struct jv *e = &ps->items[i];
        struct rm_cond_proc *p = &o->others[i];
        uint64_t pid;
        rd_index(ei, sizeof ei, at, i);
        if (!rd_object(r, e, ei) || !rd_count_to(r, e, ei, "pid", true, LONG_MAX, &pid) ||
            !rd_str(r, e, ei, "name", false, NULL, &p->name) ||
            !rd_bool(r, e, ei, "at_start", false, &p->at_start) ||
            !rd_bool(r, e, ei, "at_end", false, &p->at_end) ||
            !rd_count(r, e, ei, "samples", false, 0, &p->samples))
            return false;
        p->pid = (long)pid;
    }
    return rd_figure(r, d, where, "other_process_count", &o->other_count) &&
           rd_figure(r, d, where, "other_processes_at_start", &o->others_at_start) &&
           rd_figure(r, d, where, "other_processes_at_end", &o->others_at_end) &&
           rd_bool(r, d, where, "other_processes_truncated", false, &o->others_truncated) &&
           rd_bool(r, d, where, "pids_of_another_namespace", false, &o->pid_mismatch);
}

static bool rd_clocks(struct rd *r, const struct jv *d, const char *where, struct rm_cond_dev *o)
{
    const struct jv *c = rd_get(r, d, where, "clocks", JV_OBJECT, true, false);
    char at[160];

    rd_at(at, sizeof at, where, "clocks");
    o->locked = -1;
    o->app_sm = o->default_app_sm = o->sm_min = o->sm_max = o->mem_min = o->mem_max = RM_NULL;
    if (!c || c->type != JV_OBJECT)
        return !r->failed;
    return rd_tristate(r, c, at, "locked", &o->locked) &&
           rd_str(r, c, at, "locked_evidence", false, NULL, &o->locked_evidence) &&
           rd_figure(r, c, at, "application_sm_mhz", &o->app_sm) &&
           rd_figure(r, c, at, "default_application_sm_mhz", &o->default_app_sm) &&
           rd_figure(r, c, at, "sm_min_mhz", &o->sm_min) &&
           rd_figure(r, c, at, "sm_max_mhz", &o->sm_max) &&
           rd_figure(r, c, at, "mem_min_mhz", &o->mem_min) &&
           rd_figure(r, c, at, "mem_max_mhz", &o->mem_max);
}

static bool rd_throttle(struct rd *r, const struct jv *d, const char *where,
                        struct rm_cond_dev *o)
{
    const struct jv *t = rd_get(r, d, where, "throttle", JV_OBJECT, true, false), *seen;
    char at[160], key[48];

    o->throttle = t && t->type == JV_OBJECT;
    if (!o->throttle)
        return !r->failed;
    rd_at(at, sizeof at, where, "throttle");
    if (!rd_num(r, t, at, "power_s", false, false, 0, &o->power_s, NULL) ||
        !rd_num(r, t, at, "thermal_s", false, false, 0, &o->thermal_s, NULL) ||
        !rd_count(r, t, at, "readings", false, 0, &o->readings))
        return false;
    for (int i = 0; i < RM_NREASONS; i++) {
        snprintf(key, sizeof key, "%s_s", rm_reason_key[i]);
        if (!rd_num(r, t, at, key, false, false, 0, &o->reason_s[i], NULL))
            return false;
    }
    seen = rd_get(r, t, at, "reasons_seen", JV_ARRAY, false, false);
    for (size_t j = 0; seen && j < seen->n; j++)
        for (int i = 0; i < RM_NREASONS; i++)
            if (seen->items[j].type == JV_STRING && strcmp(seen->items[j].s, rm_reason_key[i]) == 0)
                o->reasons_seen |= 1u << i;
    return !r->failed;
}

static bool rd_cond_dev(struct rd *r, const struct jv *d, const char *where, struct rm_cond_dev *o)
{
    const struct jv *t;
    uint64_t ordinal;
    int pers;

    if (!rd_object(r, d, where) || !rd_count_to(r, d, where, "ordinal", true, INT_MAX, &ordinal) ||
        !rd_bool(r, d, where, "checked", false, &o->checked) ||
        !rd_str(r, d, where, "reason", false, NULL, &o->reason) ||
        !rd_str(r, d, where, "pci_bus_id", false, NULL, &o->pci_bus_id))
        return false;
    o->ordinal = (int)ordinal;
    if (!o->checked)
        return true;
    if (!rd_count(r, d, where, "samples", false, 0, &o->samples) ||
        !rd_num(r, d, where, "duration_s", false, false, 0, &o->duration_s, NULL) ||
        !rd_others(r, d, where, o) || !rd_clocks(r, d, where, o) || !rd_throttle(r, d, where, o) ||
        !rd_tristate(r, d, where, "persistence_mode", &pers) ||
        !rd_str(r, d, where, "compute_mode", false, NULL, &o->compute_mode))
        return false;
    o->persistence = pers;
    t = rd_get(r, d, where, "temperature", JV_OBJECT, true, false);
    o->temp = t && t->type == JV_OBJECT;
    if (o->temp) {
        char at[160];
        rd_at(at, sizeof at, where, "temperature");
        if (!rd_figure(r, t, at, "min_c", &o->temp_min) ||
            !rd_figure(r, t, at, "max_c", &o->temp_max))
            return false;
    }
    return true;
}

bool rd_conditions(struct rd *r, const struct jv *root)
{
    const struct jv *c = rd_get(r, root, "", "conditions", JV_OBJECT, true, false), *mps, *ds;
    const char *at = "conditions";
    struct rm_cond *o;
    char ei[64];

    if (!c || c->type != JV_OBJECT)
        return !r->failed;
    if (!(o = r->m->cond = model_alloc(r->m, sizeof *o)))
        return OOM(r, at);
    o->mps_active = -1;
    if (!rd_bool(r, c, at, "checked", false, &o->checked) ||
        !rd_str(r, c, at, "reason", false, NULL, &o->reason) ||
        !rd_strings(r, c, at, "text", NULL, &o->text, &o->ntext) ||
        !rd_str(r, c, at, "library", false, NULL, &o->library) ||
        !rd_figure(r, c, at, "interval_ms", &o->interval_ms) ||
        !rd_strings(r, c, at, "warnings", NULL, &o->warnings, &o->nwarnings))
        return false;
    if (o->interval_ms == RM_NULL)
        o->interval_ms = 0;
    if ((mps = rd_get(r, c, at, "mps", JV_OBJECT, true, false)) && mps->type == JV_OBJECT &&
        (!rd_bool(r, mps, "conditions.mps", "checked", false, &o->mps_checked) ||
         !rd_tristate(r, mps, "conditions.mps", "active", &o->mps_active) ||
         !rd_str(r, mps, "conditions.mps", "evidence", false, NULL, &o->mps_evidence)))
        return false;
    if (!(ds = rd_get(r, c, at, "devices", JV_ARRAY, true, false)) || ds->type != JV_ARRAY)
        return !r->failed;
    if (ds->n && !(o->devs = model_alloc(r->m, ds->n * sizeof *o->devs)))
        return OOM(r, at);
    for (size_t i = 0; i < ds->n; i++, o->ndevs++)
        if (!rd_cond_dev(r, &ds->items[i], rd_index(ei, sizeof ei, "conditions.devices", i),
                         &o->devs[i]))
            return false;
    return true;
}
