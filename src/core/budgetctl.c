/* budgetctl.c - KTIME_BUDGET's controller (budgetctl.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "budgetctl.h"

#include <math.h>
#include <stdlib.h>

void bctl_init(struct bctl *c, double budget, uint64_t seed)
{
    *c = (struct bctl){ .budget = budget, .rng = seed ? seed : 0x9E3779B97F4A7C15ULL };
}

int bctl_level(double p)
{
    int level = 0;

    if (!(p > 0))
        return BCTL_MAX_LEVEL;
    while (level < BCTL_MAX_LEVEL && ldexp(1.0, -level) > p)
        level++;
    return level;
}

double bctl_timed_cost(const struct bctl_costs *cost, double gated_share)
{
    double gpu = cost->gpu_ns + cost->gate_ns * gated_share;

    return (gpu > cost->launch_ns ? gpu : cost->launch_ns) + cost->drain_ns;
}

double bctl_share(const struct bctl *c)
{
    return c->wall_ns > 0 ? c->spent_ns / c->wall_ns : 0.0;
}

/* What the next window of window_ns may spend: what keeps the run at the aim, within
 * BCTL_FLOOR and 1 times the aim's share of the window. */
static double allowance(const struct bctl *c, double window_ns)
{
    double target = c->budget * BCTL_AIM;
    double most = target * window_ns, left = target * (c->wall_ns + window_ns) - c->spent_ns;

    if (left > most)
        return most;
    if (left < BCTL_FLOOR * most)
        return BCTL_FLOOR * most;
    return left;
}

static void fold(struct bctl *c, double window_ns, double cost_ns)
{
    c->wall_ns += window_ns;
    c->spent_ns += cost_ns;
    c->windows++;
}

/* A kernel the allowance is shared among: its launches to decide, length, timed cost. */
struct item {
    struct bctl_kernel *k;
    double x, m, cost;
};

/* Cheapest per unit of length first: the first to be timed at every launch. */
static int cmp_items(const void *a, const void *b)
{
    const struct item *p = a, *q = b;
    double tp = p->cost / p->m, tq = q->cost / q->m;

    return tp < tq ? -1 : tp > tq;
}

/* Shares `allow` ns among items[0..n) (sorted by cmp_items): rate min(1, lambda m / cost)
 * each, lambda such that the rates' cost is allow, then each rate down to a power of two, and
 * what that left over given back, one level at a time, to the kernels timed most cheaply for
 * their length. */
static void share_out(struct item *it, size_t n, double allow)
{
    double fixed = 0, var = 0, lambda, spent = 0;
    size_t sat = 0;

    if (n == 0)
        return;
    for (size_t i = 0; i < n; i++)
        var += it[i].x * it[i].m;
    /* Saturate from the cheapest while the lambda of the rest would time them at every
     * launch anyway. */
    for (;;) {
        lambda = var > 0 ? (allow - fixed) / var : 0;
        if (sat == n || lambda * it[sat].m < it[sat].cost)
            break;
        fixed += it[sat].x * it[sat].cost;
        var -= it[sat].x * it[sat].m;
        sat++;
    }
    for (size_t i = 0; i < n; i++) {
        double p = i < sat ? 1.0 : lambda * it[i].m / it[i].cost;
        it[i].k->level = lambda > 0 || i < sat ? bctl_level(p) : BCTL_MAX_LEVEL;
        spent += it[i].x * it[i].cost * ldexp(1.0, -it[i].k->level);
    }
    for (size_t i = 0; i < n; i++) {
        struct bctl_kernel *k = it[i].k;
        double more = it[i].x * it[i].cost * ldexp(1.0, -k->level); /* a level up doubles it */
        if (k->level > 0 && spent + more <= allow) {
            k->level--;
            spent += more;
        }
    }
}

double bctl_events(struct bctl *c, const struct bctl_costs *cost, double window_ns,
                   struct bctl_kernel *k, size_t n)
{
    double spent = 0, timed = 0, seen = 0, allow, cost_timed = 0;
    struct item *it = n ? calloc(n, sizeof *it) : NULL;
    int *before = n ? calloc(n, sizeof *before) : NULL;
    size_t m = 0;

    for (size_t i = 0; before && i < n; i++)
        before[i] = k[i].level;
    for (size_t i = 0; i < n; i++) {
        double ci = bctl_timed_cost(cost, k[i].gated_share);
        spent += (double)k[i].timed * ci;
        cost_timed += (double)k[i].timed * ci;
        timed += (double)k[i].timed;
        seen += (double)k[i].seen;
    }
    spent += seen * cost->untimed_ns;
    if (timed > 0)
        c->timed_ns = cost_timed / timed;
    fold(c, window_ns, spent);

    /* The next window, if the kernels launch as they did in this one: the untimed path first,
     * then the kernels not known yet, timed at every launch until a sample of theirs has come
     * back (a long kernel must not go unsampled for want of its length), then the others. */
    allow = allowance(c, window_ns) - seen * cost->untimed_ns;
    for (size_t i = 0; i < n; i++) {
        if (k[i].drawn == 0 || !it)
            continue; /* (out of memory: the rates in force stay) */
        double ci = bctl_timed_cost(cost, k[i].gated_share);
        /* Not known yet, or timing every launch costs at most the budget's aim of the
         * kernel's own length: timed at every launch whatever the others spend. */
        if (!(k[i].mean_ns > 0) || ci <= c->budget * BCTL_AIM * k[i].mean_ns) {
            k[i].level = 0;
            allow -= (double)k[i].drawn * ci;
            continue;
        }
        it[m++] = (struct item){ &k[i], (double)k[i].drawn, k[i].mean_ns, ci };
    }
    if (m)
        qsort(it, m, sizeof *it, cmp_items);
    share_out(it, m, allow > 0 ? allow : 0);
    for (size_t i = 0; before && i < n; i++)
        if (k[i].dropped && k[i].level <= before[i])
            k[i].level = before[i] < BCTL_MAX_LEVEL ? before[i] + 1 : BCTL_MAX_LEVEL;
    free(it);
    free(before);
    return spent;
}

double bctl_cupti(struct bctl *c, const struct bctl_costs *cost, double window_ns,
                  uint64_t seen, uint64_t recorded, uint64_t toggles, double period_ns)
{
    double spent = (double)recorded * cost->cupti_ns + (double)seen * cost->untimed_ns +
                   (double)toggles * cost->toggle_ns;

    fold(c, window_ns, spent);
    if (c->windows == 1 || seen == 0)
        return spent; /* the start, launches queueing up; or nothing to go by: the duty stays */
    c->seen += seen;
    c->seen_ns += window_ns;
    if ((double)c->seen * (cost->cupti_ns + cost->untimed_ns) <= c->budget * c->seen_ns) {
        c->duty_level = 0; /* on all the time: no cycles, no switching */
        return spent;
    }
    double allow = allowance(c, window_ns) - (double)seen * cost->untimed_ns;
    double all_on = (double)seen * cost->cupti_ns;
    if (all_on <= allow) {
        c->duty_level = 0; /* on all the time: no cycles, no switching */
        return spent;
    }
    /* Cycling costs its switching too, once per cycle. */
    double cycles = period_ns > 0 ? window_ns / period_ns : 0;
    double d = (allow - cycles * cost->toggle_ns) / all_on;
    c->duty_level = bctl_level(d);
    return spent;
}

static double uniform(struct bctl *c)
{
    uint64_t x = c->rng;

    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    c->rng = x;
    return (double)((x * 0x2545F4914F6CDD1DULL) >> 11) * 0x1.0p-53;
}

void bctl_cycle(struct bctl *c, double period_ns, double *on_ns, double *off_ns)
{
    double len = period_ns * (0.5 + uniform(c));

    *on_ns = ldexp(len, -c->duty_level);
    *off_ns = c->duty_level ? len - *on_ns : 0;
}
