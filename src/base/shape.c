/* shape.c - per-kernel aggregates by launch shape, bounded (shape.h). */
#include "shape.h"

#include <stdlib.h>
#include <string.h>

bool shape_eq(const struct kshape *a, const struct kshape *b)
{
    return memcmp(a, b, sizeof *a) == 0;
}

bool shape_known(const struct kshape *sh)
{
    return sh->grid[0] || sh->block[0];
}

static struct shape_row *row_for(struct shape_set *s, const struct kshape *sh)
{
    for (uint32_t i = 0; i < s->n; i++)
        if (shape_eq(&s->rows[i]->sh, sh))
            return s->rows[i];
    if (s->n == SHAPE_TRACK)
        return NULL;
    struct shape_row *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->sh = *sh;
    s->rows[s->n++] = r;
    return r;
}

int shape_add(struct shape_set **set, const struct kshape *sh, double us)
{
    if (!*set && !(*set = calloc(1, sizeof **set)))
        return -1;
    struct shape_row *r = row_for(*set, sh);
    if (r) {
        stats_add(&r->st, us);
        sketch_add(&r->sk, us);
    } else {
        stats_add(&(*set)->other, us);
        sketch_add(&(*set)->other_sk, us);
        (*set)->untracked = true;
    }
    return 0;
}

int shape_merge(struct shape_set **a, const struct shape_set *b)
{
    int rc = 0;

    if (!b)
        return 0;
    if (!*a && !(*a = calloc(1, sizeof **a)))
        return -1;
    for (uint32_t i = 0; i < b->n; i++) {
        struct shape_row *r = row_for(*a, &b->rows[i]->sh);
        if (r) {
            stats_merge(&r->st, &b->rows[i]->st);
            sketch_merge(&r->sk, &b->rows[i]->sk);
        } else {
            stats_merge(&(*a)->other, &b->rows[i]->st);
            sketch_merge(&(*a)->other_sk, &b->rows[i]->sk);
            (*a)->other_shapes++;
            rc = (*a)->n < SHAPE_TRACK ? -1 : rc;
        }
    }
    stats_merge(&(*a)->other, &b->other);
    sketch_merge(&(*a)->other_sk, &b->other_sk);
    (*a)->other_shapes += b->other_shapes;
    (*a)->untracked |= b->untracked;
    return rc;
}

static int by_timed(const void *x, const void *y)
{
    const struct shape_row *a = *(const struct shape_row *const *)x;
    const struct shape_row *b = *(const struct shape_row *const *)y;

    if (a->st.n != b->st.n)
        return a->st.n > b->st.n ? -1 : 1;
    return memcmp(&a->sh, &b->sh, sizeof a->sh) < 0 ? -1 : 1;
}

void shape_set_sorted(struct shape_set *s)
{
    qsort(s->rows, s->n, sizeof s->rows[0], by_timed);
    while (s->n > SHAPE_SHOW) {
        struct shape_row *r = s->rows[--s->n];
        stats_merge(&s->other, &r->st);
        sketch_merge(&s->other_sk, &r->sk);
        s->other_shapes++;
        free(r);
        s->rows[s->n] = NULL;
    }
}

uint64_t shape_set_count(const struct shape_set *s)
{
    uint64_t n = s ? s->other.n : 0;

    for (uint32_t i = 0; s && i < s->n; i++)
        n += s->rows[i]->st.n;
    return n;
}

void shape_set_free(struct shape_set *s)
{
    if (!s)
        return;
    for (uint32_t i = 0; i < s->n; i++)
        free(s->rows[i]);
    free(s);
}
