/* merge_balance.c - the ranks of a merged report side by side (model.h, struct rm_balance):
 * each report's GPU time in compute kernels and in NCCL's, the ranks of the job without a
 * report, and the verdict. A straggler is a rank whose compute time stands out (more than
 * MERGE_STRAGGLER_PCT over the median rank's) while the others wait for it: their NCCL
 * kernels, which spin until every rank has joined the collective, take longer than its own
 * by at least half of its excess. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge_acc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *macc_label(struct model *m, long rank, long input)
{
    char buf[32];

    if (rank >= 0)
        snprintf(buf, sizeof buf, "%ld", rank);
    else
        snprintf(buf, sizeof buf, "#%ld", input);
    return model_strdup(m, buf);
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;

    return a < b ? -1 : a > b;
}

/* The median of v[0..n-1] (n >= 1; the mean of the middle two for an even n); sorts scratch. */
static double median(const double *v, size_t n, double *scratch)
{
    memcpy(scratch, v, n * sizeof *v);
    qsort(scratch, n, sizeof *scratch, cmp_double);
    return n % 2 ? scratch[n / 2] : (scratch[n / 2 - 1] + scratch[n / 2]) / 2;
}

static int cmp_long(const void *x, const void *y)
{
    long a = *(const long *)x, b = *(const long *)y;

    return a < b ? -1 : a > b;
}

/* The ranks of 0 .. ws - 1 that no report merged has, into b->missing. */
static int missing_ranks(struct macc *a, struct rm_balance *b, long ws)
{
    size_t n = a->folded, k = 0;
    long *have = malloc((n ? n : 1) * sizeof *have);

    if (!have)
        return -1;
    for (size_t i = 0; i < n; i++)
        if (a->rank_of[i] >= 0)
            have[k++] = a->rank_of[i];
    if (k > 1)
        qsort(have, k, sizeof *have, cmp_long);
    size_t nmiss = 0, j = 0;
    for (long r = 0; r < ws; r++) {
        while (j < k && have[j] < r)
            j++;
        nmiss += !(j < k && have[j] == r);
    }
    if (nmiss && !(b->missing = model_alloc(a->out, nmiss * sizeof *b->missing))) {
        free(have);
        return -1;
    }
    j = 0;
    for (long r = 0; r < ws; r++) {
        while (j < k && have[j] < r)
            j++;
        if (!(j < k && have[j] == r))
            b->missing[b->nmissing++] = r;
    }
    free(have);
    return 0;
}

int macc_balance(struct macc *a)
{
    struct model *m = a->out;
    size_t n = a->folded;
    struct rm_balance *b;
    double *scratch;
    long ws = a->opts->world_size > 0 ? a->opts->world_size : m->world_size;
    bool ranked = n > 0;

    /* A merge of runs (no report has a rank) has no balance, unless some did not merge. */
    for (size_t i = 0; i < n; i++)
        ranked = ranked && a->rank_of[i] >= 0;
    if (!ranked && !a->nunread && a->opts->world_size <= 0)
        return 0;
    if (!(b = m->balance = model_alloc(m, sizeof *b)) ||
        !(scratch = malloc((n ? n : 1) * sizeof *scratch)))
        return -1;
    b->world_size = ws > 0 ? ws : -1;
    b->ranks = n;
    if (ws > 0 && ws <= (1L << 24) && missing_ranks(a, b, ws) != 0) {
        free(scratch);
        return -1;
    }
    if (a->nunread && !(b->unread = model_alloc(m, a->nunread * sizeof *b->unread))) {
        free(scratch);
        return -1;
    }
    for (size_t i = 0; i < a->nunread; i++)
        b->unread[b->nunread++] = model_strdup(m, a->unread[i]);
    b->verdict = "one rank";
    if (n >= 1) {
        size_t s = 0;
        for (size_t i = 1; i < n; i++)
            if (a->compute_ms[i] > a->compute_ms[s])
                s = i;
        b->compute_median_ms = median(a->compute_ms, n, scratch);
        b->nccl_median_ms = median(a->nccl_ms, n, scratch);
        b->has_slowest = true;
        b->slowest = (struct rm_balance_rank){ (long)s, a->rank_of[s],
                                               macc_label(m, a->rank_of[s], (long)s),
                                               a->compute_ms[s], a->nccl_ms[s] };
        b->excess_ms = a->compute_ms[s] - b->compute_median_ms;
        b->excess_pct = b->compute_median_ms > 0 ? 100 * b->excess_ms / b->compute_median_ms : 0;
        b->wait_ms = b->nccl_median_ms - a->nccl_ms[s];
    }
    if (n >= 2) {
        bool stands_out = b->excess_ms > 0 && b->excess_pct > MERGE_STRAGGLER_PCT;
        bool waited = b->nccl_median_ms > 0 && b->wait_ms > 0 && b->wait_ms >= b->excess_ms / 2;
        b->verdict = !stands_out ? "balanced" : waited ? "straggler" : "imbalanced";
    }
    free(scratch);
    if (a->keep_rows && n) {
        if (!(b->rows = model_alloc(m, n * sizeof *b->rows)))
            return -1;
        for (size_t i = 0; i < n; i++)
            b->rows[b->nrows++] = (struct rm_balance_rank){ (long)i, a->rank_of[i],
                                                            macc_label(m, a->rank_of[i], (long)i),
                                                            a->compute_ms[i], a->nccl_ms[i] };
    }
    return m->oom ? -1 : 0;
}
