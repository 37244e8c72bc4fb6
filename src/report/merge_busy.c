/* merge_busy.c - where the GPU time went, merged (merge_acc.h): every report's GPUs side by
 * side in gpu_busy and communication, each entry saying which input, rank and host it came
 * from (a GPU's busy time is its own process's: spans of different processes are not added),
 * the ranges' busy time summed by name, and the entry that spent least in communication; and
 * the pattern that tells the collectives' kernels apart for the ranks' balance. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge_acc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the collectives' pattern ---- */

int macc_use_pattern(struct macc *a, const char *text, char *err, size_t errsz)
{
    size_t cap = a->npats;
    struct macc_pattern *p;
    int rc;

    for (size_t i = 0; i < a->npats; i++)
        if (strcmp(a->pats[i].text, text) == 0) {
            a->pat = i;
            return 0;
        }
    if (!(p = macc_push(&a->pats, &a->npats, &cap, sizeof *a->pats)))
        return -1;
    if ((rc = regcomp(&p->re, text, REG_EXTENDED | REG_ICASE | REG_NOSUB)) != 0) {
        char why[200];
        regerror(rc, &p->re, why, sizeof why);
        snprintf(err, errsz, "the collectives' pattern '%s' is not a regular expression: %s",
                 text, why);
        a->npats--;
        return -2;
    }
    if (!(p->text = strdup(text))) {
        regfree(&p->re);
        a->npats--;
        return -1;
    }
    a->pat = a->npats - 1;
    return 0;
}

int merge_comm_pattern(struct macc *a, const struct model *m)
{
    char err[300];
    int rc;

    if (a->opts->comm)
        return macc_use_pattern(a, a->opts->comm, err, sizeof err) == 0 ? 0 : -1;
    /* The library compiled the report's pattern (else the report has none); one that does
     * not compile here is judged by the default. */
    if (m->comm && m->comm->pattern &&
        (rc = macc_use_pattern(a, m->comm->pattern, err, sizeof err)) != -2)
        return rc;
    return macc_use_pattern(a, RM_COMM_DEFAULT, err, sizeof err) == 0 ? 0 : -1;
}

bool merge_is_comm(const struct macc *a, const struct rm_row *w)
{
    return a->pat < a->npats && regexec(&a->pats[a->pat].re, w->mangled, 0, NULL, 0) == 0;
}

/* ---- gpu_busy and communication ---- */

/* A string of a report, in the merged report: a kernel's names from its merged row when they
 * are the same (a gap names kernels that ran), else a copy. */
static const char *kernel_name(struct macc *a, const char *s, const char *mangled, bool want_mangled)
{
    struct macc_row *r;
    size_t len;

    if (!s)
        return NULL;
    if (mangled && (len = strlen(mangled) + 1) < 4096) {
        char key[len + 1];
        key[0] = (char)('0' + REPORT_KERNEL);
        memcpy(key + 1, mangled, len);
        HASH_FIND(hh, a->rows, key, len, r);
        const char *have = r ? (want_mangled ? r->row.mangled : r->row.name) : NULL;
        if (have && strcmp(have, s) == 0)
            return have;
    }
    return model_strdup(a->out, s);
}

static const char *method_of(struct model *o, const char *s)
{
    if (!s)
        return NULL;
    if (strcmp(s, "cupti") == 0)
        return "cupti";
    if (strcmp(s, "events") == 0)
        return "events";
    return model_strdup(o, s);
}

static void copy_gaps(struct macc *a, struct rm_gaps *g)
{
    for (size_t i = 0; i < g->ntop; i++) {
        struct rm_gap *x = &g->top[i];
        const char *bm = x->before_mangled, *am = x->after_mangled;
        x->before = kernel_name(a, x->before, bm, false);
        x->before_mangled = kernel_name(a, bm, bm, true);
        x->after = kernel_name(a, x->after, am, false);
        x->after_mangled = kernel_name(a, am, am, true);
    }
}

/* The report's device ordinal d on the merged devices (as it is when the report lists none). */
static int merged_device(const struct model *m, const int *map, int d)
{
    for (size_t j = 0; j < m->ndevices; j++)
        if (m->devices[j].ordinal == d)
            return map[j];
    return d;
}

static int fold_busy_devs(struct macc *a, const struct model *m, size_t input, const int *map)
{
    const struct rm_input *in = &a->out->merged->inputs[input];

    for (size_t i = 0; i < m->busy->ndevs; i++) {
        struct rm_busy_dev *d = macc_push(&a->busy, &a->nbusy, &a->capbusy, sizeof *d);
        if (!d)
            return -1;
        *d = m->busy->devs[i];
        d->device = merged_device(m, map, d->device);
        d->method = method_of(a->out, d->method);
        d->input = (long)input;
        d->rank = in->rank;
        d->host = in->host;
        copy_gaps(a, &d->gaps);
        /* Past the reports whose parts are kept, a GPU's streams are not. */
        size_t ns = a->keep_rows ? d->nstreams : 0;
        struct rm_busy_stream *s = ns ? model_alloc(a->out, ns * sizeof *s) : NULL;
        if (ns && !s)
            return -1;
        if (ns)
            memcpy(s, d->streams, ns * sizeof *s);
        d->streams = s;
        d->nstreams = ns;
        for (size_t j = 0; j < ns; j++)
            copy_gaps(a, &s[j].gaps);
    }
    return a->out->oom ? -1 : 0;
}

static int fold_busy_ranges(struct macc *a, const struct model *m)
{
    for (size_t i = 0; i < m->busy->nranges; i++) {
        const struct rm_busy_range *g = &m->busy->ranges[i];
        struct macc_brange *e = NULL;
        for (size_t j = 0; j < a->nbranges && !e; j++) {
            const char *n = a->branges[j].g.name;
            if ((!n && !g->name) || (n && g->name && strcmp(n, g->name) == 0))
                e = &a->branges[j];
        }
        if (!e) {
            if (!(e = macc_push(&a->branges, &a->nbranges, &a->capbranges, sizeof *e)))
                return -1;
            e->order = a->nbranges - 1;
            e->g.name = g->name ? model_strdup(a->out, g->name) : NULL;
        }
        e->g.wall_ms += g->wall_ms;
        e->g.busy_ms += g->busy_ms;
        e->g.intervals += g->intervals;
    }
    return a->out->oom ? -1 : 0;
}

int macc_fold_busy(struct macc *a, const struct model *m, size_t input, const int *map)
{
    const struct rm_input *in = &a->out->merged->inputs[input];

    if (m->busy) {
        a->any_busy = true;
        a->unplaced += m->busy->unplaced;
        if (fold_busy_devs(a, m, input, map) != 0 || fold_busy_ranges(a, m) != 0)
            return -1;
    }
    if (!m->comm)
        return 0;
    if (!a->any_comm)
        a->comm_pattern = model_strdup(a->out, m->comm->pattern);
    else if (a->comm_pattern && m->comm->pattern && strcmp(a->comm_pattern, "mixed") != 0 &&
             strcmp(a->comm_pattern, m->comm->pattern) != 0)
        a->comm_pattern = "mixed";
    a->any_comm = true;
    for (size_t i = 0; i < m->comm->ndevs; i++) {
        struct rm_comm_dev *d = macc_push(&a->comm, &a->ncomm, &a->capcomm, sizeof *d);
        if (!d)
            return -1;
        *d = m->comm->devs[i];
        d->device = merged_device(m, map, d->device);
        d->method = method_of(a->out, d->method);
        d->input = (long)input;
        d->rank = in->rank;
        d->host = in->host;
    }
    return a->out->oom ? -1 : 0;
}

static int cmp_branges(const void *x, const void *y)
{
    const struct macc_brange *a = x, *b = y;

    if (a->g.busy_ms != b->g.busy_ms)
        return a->g.busy_ms < b->g.busy_ms ? 1 : -1;
    return a->order < b->order ? -1 : a->order > b->order;
}

static int out_busy(struct macc *a)
{
    struct model *m = a->out;
    struct rm_busy *b = m->busy = model_alloc(m, sizeof *b);

    if (!b)
        return -1;
    b->unplaced = a->unplaced;
    if (a->nbusy && !(b->devs = model_alloc(m, a->nbusy * sizeof *b->devs)))
        return -1;
    if (a->nbusy)
        memcpy(b->devs, a->busy, a->nbusy * sizeof *b->devs);
    b->ndevs = a->nbusy;
    if (a->nbranges > 1)
        qsort(a->branges, a->nbranges, sizeof *a->branges, cmp_branges);
    if (a->nbranges && !(b->ranges = model_alloc(m, a->nbranges * sizeof *b->ranges)))
        return -1;
    for (size_t i = 0; i < a->nbranges; i++) {
        struct rm_busy_range *g = &b->ranges[b->nranges++];
        *g = a->branges[i].g;
        g->has_percent = g->wall_ms > 0;
        g->busy_percent = g->has_percent ? 100.0 * g->busy_ms / g->wall_ms : 0;
    }
    return 0;
}

static int out_comm(struct macc *a)
{
    struct model *m = a->out;
    struct rm_comm *c = m->comm = model_alloc(m, sizeof *c);

    if (!c)
        return -1;
    c->pattern = a->comm_pattern ? a->comm_pattern : "";
    if (a->ncomm && !(c->devs = model_alloc(m, a->ncomm * sizeof *c->devs)))
        return -1;
    if (a->ncomm)
        memcpy(c->devs, a->comm, a->ncomm * sizeof *c->devs);
    c->ndevs = a->ncomm;
    c->least = -1;
    if (c->ndevs >= 2) {
        c->least = 0;
        for (size_t i = 1; i < c->ndevs; i++)
            if (c->devs[i].c[RK_COMM_MS] < c->devs[c->least].c[RK_COMM_MS])
                c->least = (long)i;
    }
    return 0;
}

int macc_out_busy(struct macc *a)
{
    if (a->any_busy && out_busy(a) != 0)
        return -1;
    if (a->any_comm && out_comm(a) != 0)
        return -1;
    return 0;
}

void macc_free_busy(struct macc *a)
{
    for (size_t i = 0; i < a->npats; i++) {
        regfree(&a->pats[i].re);
        free(a->pats[i].text);
    }
    free(a->pats);
    free(a->busy);
    free(a->branges);
    free(a->comm);
}
