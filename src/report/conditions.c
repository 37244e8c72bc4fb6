/* conditions.c - the run's conditions, folded reading by reading (conditions.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "conditions.h"

#include <stdlib.h>
#include <string.h>

void cond_init(struct conditions *c)
{
    memset(c, 0, sizeof *c);
    c->mps = -1;
}

struct cond_device *cond_device(struct conditions *c, int ordinal)
{
    struct cond_device *d;

    for (int i = 0; i < c->ndev; i++)
        if (c->dev[i].ordinal == ordinal)
            return &c->dev[i];
    if (c->ndev >= COND_MAX_DEVICES)
        return NULL;
    d = &c->dev[c->ndev++];
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    d->others_at_start = d->others_at_end = d->others_max = -1;
    d->app_sm_mhz = d->default_app_sm_mhz = -1;
    d->persistence = d->compute_mode = -1;
    return d;
}

const struct cond_device *cond_find(const struct conditions *c, int ordinal)
{
    for (int i = 0; c && i < c->ndev; i++)
        if (c->dev[i].ordinal == ordinal)
            return &c->dev[i];
    return NULL;
}

static void minmax_u(unsigned v, unsigned n, unsigned *lo, unsigned *hi)
{
    if (n == 0 || v < *lo)
        *lo = v;
    if (n == 0 || v > *hi)
        *hi = v;
}

static void add_others(struct cond_device *d, const struct cond_sample *s, bool first, bool end)
{
    int kept = s->nothers < COND_MAX_OTHERS ? s->nothers : COND_MAX_OTHERS;

    /* Our pid missing from a list whose pids do not resolve here: NVML gave the pids of
     * another pid namespace (a container's host), one of them ours. */
    if (s->nprocs > 0 && !s->self_listed)
        for (int i = 0; i < kept; i++)
            if (!s->others[i].name[0])
                d->pid_mismatch = true;
    if (first)
        d->others_at_start = s->nothers;
    if (end)
        d->others_at_end = s->nothers;
    if (d->others_max < s->nothers)
        d->others_max = s->nothers;
    if (s->nothers > kept)
        d->others_truncated = true;
    for (int i = 0; i < kept; i++) {
        struct cond_proc *p = NULL;
        for (int j = 0; j < d->nothers && !p; j++)
            if (d->others[j].pid == s->others[i].pid)
                p = &d->others[j];
        if (!p) {
            if (d->nothers >= COND_MAX_OTHERS) {
                d->others_truncated = true;
                continue;
            }
            p = &d->others[d->nothers++];
            memset(p, 0, sizeof *p);
            p->pid = s->others[i].pid;
            p->at_start = first;
        }
        if (!p->name[0])
            memcpy(p->name, s->others[i].name, sizeof p->name);
        p->name[sizeof p->name - 1] = '\0';
        p->samples++;
        p->at_end = p->at_end || end;
    }
}

void cond_add_sample(struct cond_device *d, const struct cond_sample *s, bool end)
{
    if (d->samples == 0)
        d->first_t = s->t;
    d->last_t = s->t;
    d->samples++;
    if (s->procs_ok) {
        add_others(d, s, d->proc_samples == 0, end);
        d->proc_samples++;
    }
    if (s->sm_ok)
        minmax_u(s->sm_mhz, d->sm_samples++, &d->sm_min, &d->sm_max);
    if (s->mem_ok)
        minmax_u(s->mem_mhz, d->mem_samples++, &d->mem_min, &d->mem_max);
    if (s->temp_ok) {
        if (d->temp_samples == 0 || s->temp_c < d->temp_min)
            d->temp_min = s->temp_c;
        if (d->temp_samples == 0 || s->temp_c > d->temp_max)
            d->temp_max = s->temp_c;
        d->temp_samples++;
    }
    if (s->reasons_ok) {
        double dt = d->have_prev_reasons && s->t > d->prev_reasons_t ? s->t - d->prev_reasons_t : 0;
        d->reasons_seen |= s->reasons;
        for (int i = 0; i < COND_NREASONS; i++)
            if (s->reasons & (1ull << i))
                d->reason_s[i] += dt;
        if (s->reasons & COND_POWER_MASK)
            d->power_s += dt;
        if (s->reasons & COND_THERMAL_MASK)
            d->thermal_s += dt;
        d->have_prev_reasons = true;
        d->prev_reasons_t = s->t;
        d->reason_samples++;
    }
}
