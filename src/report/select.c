/* select.c - the rows `ktime report` shows: filtered, sorted, the first N (reader.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct pick {
    size_t i;                  /* the row's place in the model */
    bool none;                 /* no value to sort by: last */
    double v;
};

static int cmp_pick(const void *a, const void *b)
{
    const struct pick *x = a, *y = b;

    if (x->none != y->none)
        return x->none - y->none;
    if (!x->none && x->v != y->v)
        return x->v < y->v ? 1 : -1;
    return x->i < y->i ? -1 : x->i > y->i;
}

static bool value_of(const struct rm_row *w, enum model_sort sort, double *v)
{
    switch (sort) {
    case SORT_MEAN:
        *v = w->st.v[RS_MEAN];
        return w->st.timed > 0;
    case SORT_P99:
        *v = w->st.v[RS_P99];
        return *v >= 0;
    case SORT_CALLS:
        *v = (double)w->n[RC_CALLS];
        return true;
    default:
        *v = 0;
        return true;
    }
}

int model_select(struct model *m, const regex_t *filter, const char *filter_text,
                 enum model_sort sort, size_t top)
{
    static const char *const sorts[] = { "total", "mean", "p99", "calls" };
    struct pick *p = calloc(m->nrows ? m->nrows : 1, sizeof *p);
    size_t n = 0;
    char words[512] = "", line[700];

    if (!p)
        return -1;
    for (size_t i = 0; i < m->nrows; i++) {
        const struct rm_row *w = &m->rows[i];
        if (filter && regexec(filter, w->name, 0, NULL, 0) != 0 &&
            regexec(filter, w->mangled, 0, NULL, 0) != 0)
            continue;
        p[n].i = i;
        p[n].none = !value_of(w, sort, &p[n].v);
        n++;
    }
    if (filter)
        snprintf(words, sizeof words, "--filter '%s'", filter_text ? filter_text : "");
    if (sort != SORT_TOTAL) {
        qsort(p, n, sizeof *p, cmp_pick);
        snprintf(words + strlen(words), sizeof words - strlen(words), "%ssorted by %s",
                 *words ? ", " : "", sorts[sort]);
    }
    if (top && n > top) {
        n = top;
        snprintf(words + strlen(words), sizeof words - strlen(words), "%s--top %zu",
                 *words ? ", " : "", top);
    }
    struct rm_row *rows = model_alloc(m, (n ? n : 1) * sizeof *rows);
    if (*words) {
        snprintf(line, sizeof line, "shown    %zu of %zu kernels (%s); the totals below are the "
                 "whole run's\n", n, m->nrows_all, words);
        m->shown = model_strdup(m, line);
    }
    if (!rows || m->oom) {
        free(p);
        return -1;
    }
    for (size_t i = 0; i < n; i++)
        rows[i] = m->rows[p[i].i];
    m->rows = rows;
    m->nrows = n;
    free(p);
    model_names(m);
    return 0;
}
