/* model.c - the report model's memory, field names and views (model.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "model.h"
#include "names.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RM_KEY(name, key) key,
const char *const rm_count_key[RM_NCOUNTS] = { RM_COUNTS(RM_KEY) };
const char *const rm_stat_key[RM_NSTATS] = { RM_STATS(RM_KEY) };
const char *const rm_total_key[RM_NTOTALS] = { RM_TOTALS(RM_KEY) };
const char *const rm_drop_key[RM_NDROPS] = { RM_DROPS(RM_KEY) };
const char *const rm_reason_key[RM_NREASONS] = { RM_REASONS(RM_KEY) };
const char *const rm_busy_key[RM_NBUSY] = { RM_BUSY(RM_KEY) };
const char *const rm_busy_count_key[RM_NBUSY_COUNTS] = { RM_BUSY_COUNTS(RM_KEY) };
#define RM_KEY3(name, key, edge) key,
const char *const rm_gap_bin_key[RM_NGAP_BINS] = { RM_GAP_BINS(RM_KEY3) };
const char *const rm_comm_key[RM_NCOMM] = { RM_COMM(RM_KEY) };
const double rm_q[RM_NQ] = { 0.5, 0.9, 0.99 };

/* ---- the arena ---- */

#define ARENA_BLOCK 65536

struct arena_block {
    struct arena_block *next;
    size_t used, size;
    max_align_t data[];
};

void *model_alloc(struct model *m, size_t n)
{
    struct arena_block *b = m->mem;
    size_t need = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);

    if (need < n) { /* overflow */
        m->oom = true;
        return NULL;
    }
    if (!b || b->size - b->used < need) {
        size_t size = need > ARENA_BLOCK ? need : ARENA_BLOCK;
        if (!(b = malloc(sizeof *b + size))) {
            m->oom = true;
            return NULL;
        }
        b->size = size;
        b->used = 0;
        /* A large request gets a block of its own behind the current one, which keeps its
         * room for the small ones that follow. */
        if (m->mem && need > ARENA_BLOCK) {
            b->next = m->mem->next;
            m->mem->next = b;
        } else {
            b->next = m->mem;
            m->mem = b;
        }
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    memset(p, 0, need);
    return p;
}

char *model_strndup(struct model *m, const char *s, size_t n)
{
    char *p = model_alloc(m, n + 1);

    if (p)
        memcpy(p, s, n);
    return p;
}

char *model_strdup(struct model *m, const char *s)
{
    return s ? model_strndup(m, s, strlen(s)) : NULL;
}

void model_free(struct model *m)
{
    free(m->by_mangled);
    for (struct arena_block *b = m->mem, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    memset(m, 0, sizeof *m);
}

/* ---- views ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Hosts the merged line names; the rest are counted. */
#define HOSTS_NAMED 16

int model_merged_words(struct model *m)
{
    struct rm_merged *g = m->merged;
    size_t n = g->ninputs, len = 32, at = 0, named = 0;
    const char **hosts = malloc((n ? n : 1) * sizeof *hosts);
    char *ranks = model_alloc(m, 24 * (n ? n : 1)), *words;

    if (!hosts || !ranks) {
        free(hosts);
        return -1;
    }
    for (size_t i = 0; i < n;) {
        const struct rm_input *e = &g->inputs[i];
        size_t j = i + 1;
        if (e->rank < 0) {
            at += (size_t)sprintf(ranks + at, "%s#%zu", i ? ", " : "", i);
            i = j;
            continue;
        }
        /* Four ranks or more in a row: "a-b". */
        while (j < n && g->inputs[j].rank == g->inputs[j - 1].rank + 1)
            j++;
        if (j - i >= 4) {
            at += (size_t)sprintf(ranks + at, "%s%ld-%ld", i ? ", " : "", e->rank,
                                  g->inputs[j - 1].rank);
            i = j;
        } else {
            at += (size_t)sprintf(ranks + at, "%s%ld", i ? ", " : "", e->rank);
            i++;
        }
    }
    for (size_t i = 0; i < n; i++)
        hosts[i] = g->inputs[i].host ? g->inputs[i].host : "None";
    qsort(hosts, n, sizeof *hosts, cmp_str);
    g->nhosts = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || strcmp(hosts[i], hosts[i - 1]) != 0) {
            if (g->nhosts++ < HOSTS_NAMED)
                len += strlen(hosts[i]) + 2;
        }
    if (!(words = model_alloc(m, len))) {
        free(hosts);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        if ((i == 0 || strcmp(hosts[i], hosts[i - 1]) != 0) && named++ < HOSTS_NAMED) {
            if (named > 1)
                strcat(words, ", ");
            strcat(words, hosts[i]);
        }
    if (g->nhosts > HOSTS_NAMED)
        sprintf(words + strlen(words), " and %zu more", g->nhosts - HOSTS_NAMED);
    g->ranks_words = ranks;
    g->hosts_words = words;
    free(hosts);
    return 0;
}

void model_words(struct model *m)
{
    static const char *const timers[] = { "events", "cupti", "both" };
    static const char *const gates[] = { "off", "auto", "on" };
    const char *used = m->timer.used ? m->timer.used : "events";
    const char *gate = m->gate ? m->gate : "off";

    m->timer.kind = RM_TIMER_OTHER;
    for (int i = 0; i < 3; i++)
        if (strcmp(used, timers[i]) == 0)
            m->timer.kind = (enum rm_timer_kind)i;
    m->gate_kind = RM_GATE_OTHER;
    for (int i = 0; i < 3; i++)
        if (strcmp(gate, gates[i]) == 0)
            m->gate_kind = (enum rm_gate_kind)i;
}

/* Rows by kind, then mangled name. */
static int cmp_key(const struct rm_row *x, const struct rm_row *y)
{
    if (x->kind != y->kind)
        return x->kind < y->kind ? -1 : 1;
    return strcmp(x->mangled, y->mangled);
}

/* ... then in row order, so that the first of equal rows is found. */
static int cmp_by_mangled(const void *a, const void *b)
{
    const struct rm_row *x = *(const struct rm_row *const *)a;
    const struct rm_row *y = *(const struct rm_row *const *)b;
    int c = cmp_key(x, y);

    return c ? c : (x < y ? -1 : x > y);
}

/* model_row_of's index of the shown rows (none when out of memory: it reads them all). */
static void index_rows(struct model *m)
{
    free(m->by_mangled);
    m->by_mangled = malloc((m->nrows ? m->nrows : 1) * sizeof *m->by_mangled);
    for (size_t i = 0; m->by_mangled && i < m->nrows; i++)
        m->by_mangled[i] = &m->rows[i];
    if (m->by_mangled)
        qsort(m->by_mangled, m->nrows, sizeof *m->by_mangled, cmp_by_mangled);
}

static int cmp_short(const void *a, const void *b)
{
    const struct rm_row *x = *(const struct rm_row *const *)a;
    const struct rm_row *y = *(const struct rm_row *const *)b;
    int c = strcmp(x->short_name, y->short_name);

    return c ? c : (x < y ? -1 : x > y);
}

void model_names(struct model *m)
{
    size_t n = m->nrows, width = m->name_width ? m->name_width : NAME_WIDTH;
    struct rm_row **by = calloc(n ? n : 1, sizeof *by);
    bool *mark = calloc(n ? n : 1, sizeof *mark);
    int nref = 0;

    for (size_t i = 0; i < n; i++) {
        struct rm_row *w = &m->rows[i];
        int how = 0;
        if (w->kind == REPORT_KERNEL)
            how = report_short_name(w->name, w->short_name, sizeof w->short_name, width);
        else
            snprintf(w->short_name, sizeof w->short_name, "%.*s",
                     (int)report_utf8_cut(w->name, sizeof w->short_name - 1), w->name);
        if (by && mark) {
            mark[i] = how == 2;
            by[i] = w;
        }
    }
    /* Rows that shorten to the same text, found side by side in sorted order. Without memory
     * no row gets a reference (the names are still shown, shortened). */
    if (by && mark) {
        qsort(by, n, sizeof *by, cmp_short);
        for (size_t i = 0; i + 1 < n; i++)
            if (strcmp(by[i]->short_name, by[i + 1]->short_name) == 0)
                mark[by[i] - m->rows] = mark[by[i + 1] - m->rows] = true;
    }
    m->has_refs = false;
    for (size_t i = 0; i < n; i++) {
        m->rows[i].ref = by && mark && mark[i] ? ++nref : 0;
        m->has_refs = m->has_refs || m->rows[i].ref;
    }
    free(by);
    free(mark);
    index_rows(m);
    /* A range's kernel reads as in the kernels' table. */
    for (size_t i = 0; m->ranges && i < m->ranges->nby_name; i++)
        for (size_t j = 0; j < m->ranges->by_name[i].nrows; j++) {
            struct rm_row *w = &m->ranges->by_name[i].rows[j];
            const struct rm_row *k = model_row_of(m, w);
            if (k) {
                memcpy(w->short_name, k->short_name, sizeof w->short_name);
                w->ref = k->ref;
            } else {
                report_short_name(w->name, w->short_name, sizeof w->short_name, width);
                w->ref = 0;
            }
        }
}

const struct rm_row *model_row_of(const struct model *m, const struct rm_row *w)
{
    size_t lo = 0, hi = m->nrows;

    if (!m->by_mangled) {
        for (size_t i = 0; i < m->nrows; i++)
            if (cmp_key(&m->rows[i], w) == 0)
                return &m->rows[i];
        return NULL;
    }
    /* The first row in the index not ordered before w. */
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (cmp_key(m->by_mangled[mid], w) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < m->nrows && cmp_key(m->by_mangled[lo], w) == 0 ? m->by_mangled[lo] : NULL;
}
