/* budgetctl.h - KTIME_BUDGET's controller: how often each kernel's launches are timed (the
 * events timer), or for what share of the time CUPTI records kernels (the CUPTI timer), so that
 * ktime's estimated cost stays under a share of the run's time. Pure arithmetic on what the
 * caller measured over a window of time: no CUDA, no clock, no thread, no allocation. The
 * drain thread runs it (src/modules/budget.c); tests/unit/test_budgetctl.c drives it with
 * exact numbers.
 *
 * The estimate. Over a window of W ns, ktime costs what its work adds to the run: every launch
 * it sees pays the untimed path; a launch timed with events pays its event pair on the GPU (and
 * its gate, when gated) or ktime's part of it on the launching thread, whichever is larger, and
 * the drain's work on its sample; a launch CUPTI records pays CUPTI's part; each on-off cycle of
 * CUPTI's records pays the switching. The budget holds when the estimated cost of the windows so
 * far is at most the budget's share of their time.
 *
 * The choice. The next window may spend what keeps the run at BCTL_AIM of the budget, never
 * more than that share of the window and never less than BCTL_FLOOR of it (a run that overspent
 * at its start, when every kernel is new, catches up over the following windows without going
 * blind). Under the events timer the allowance is shared out among the kernels in proportion
 * to their length (a kernel of length m whose timed launch costs c is timed at a rate
 * min(1, lambda * m / c), one lambda for all): each kernel then spends the same share of its own
 * GPU time on being timed, kernels long enough are timed at every launch, and for the error of
 * each kernel's total time it is the best split of a fixed cost (Neyman's allocation, when the
 * kernels' spreads are a like share of their means). Rates are powers of two, 1 in 2^level, so
 * that each sample's weight (the launches it stands for) is a whole number. Under the CUPTI
 * timer, which records every kernel while it is on, the allowance sets the share of the time it
 * is on. */
#ifndef KTIME_BUDGETCTL_H
#define KTIME_BUDGETCTL_H

#include <stddef.h>
#include <stdint.h>

/* A kernel is timed at 1 launch in 2^level; CUPTI records 1/2^level of the time. */
#define BCTL_MAX_LEVEL 20
/* The share of the budget aimed at: the rest is room for the estimate's errors. */
#define BCTL_AIM 0.9
/* The least a window may spend, as a share of its aim, however much the run spent before. */
#define BCTL_FLOOR 0.1

/* What ktime's work costs, in nanoseconds. */
struct bctl_costs {
    double gpu_ns;      /* GPU time a timed launch's event pair adds where the GPU is behind */
    double gate_ns;     /* GPU time a gate adds to a gated launch */
    double launch_ns;   /* the launching thread's CPU in ktime's part of a timed launch */
    double drain_ns;    /* the drain thread's CPU per sample */
    double untimed_ns;  /* every launch ktime sees, timed or not: the untimed path */
    double cupti_ns;    /* a launch CUPTI records (the CUPTI timer, while it is on) */
    double toggle_ns;   /* turning CUPTI's kernel records on and then off again */
};

/* One kernel over a window, and the rate chosen for it. */
struct bctl_kernel {
    uint64_t seen;      /* its launches in the window, every one */
    uint64_t drawn;     /* of them, those the draw decided (past its warmup and its first ones) */
    uint64_t timed;     /* its samples taken in the window */
    double gated_share; /* the share of its samples that were gated, 0 to 1 */
    double mean_ns;     /* its mean length so far; 0: not known yet */
    uint64_t dropped;   /* its timed launches that found no event pair free in the window */
    int level;          /* in: the rate in force; out: the rate for the next window */
};

struct bctl {
    double budget;      /* the share of the run's time ktime may cost (KTIME_BUDGET / 100) */
    double wall_ns;     /* the windows so far */
    double spent_ns;    /* ktime's estimated cost over them */
    uint64_t windows;
    double timed_ns;    /* the mean cost of a timed launch in the last window that had one */
    int duty_level;     /* CUPTI: on 1/2^duty_level of the time */
    uint64_t seen;      /* CUPTI: the launches of the windows so far but the first */
    double seen_ns;     /* and those windows' time */
    uint64_t rng;       /* the slices' random lengths */
};

/* Sets c up for a budget (a share: 0.01 for 1 %), with no window yet; seed: the slices'
 * random lengths (any value). */
void bctl_init(struct bctl *c, double budget, uint64_t seed);

/* What a timed launch costs, in ns, for a kernel whose samples were gated_share gated: the
 * larger of its GPU part and the launching thread's part, and the drain's. */
double bctl_timed_cost(const struct bctl_costs *cost, double gated_share);

/* The events timer: folds a window of window_ns in which kernels k[0..n) ran into c's cost so
 * far, then chooses each kernel's level for the next window. A kernel with no launch in the
 * window keeps its level. Timed at every launch, whatever the others spend: one whose timed
 * launch costs at most budget x BCTL_AIM of its length, and one whose length is not known yet
 * (no sample of it has come back: its samples may wait behind a long backlog, and a long
 * kernel must not go unsampled meanwhile). One that dropped launches for want of event pairs
 * gets half its rate at most, so that the draw, not the pool, leaves launches out, evenly.
 * Returns the window's estimated cost in ns. */
double bctl_events(struct bctl *c, const struct bctl_costs *cost, double window_ns,
                   struct bctl_kernel *k, size_t n);

/* The CUPTI timer: folds a window of window_ns in which ktime saw `seen` launches, `recorded`
 * of them while CUPTI was on, and `toggles` on-off cycles; then chooses c->duty_level for the
 * next cycles, whose mean length is period_ns. The first window, where a program's launches
 * queue up faster than they run, changes nothing. Then CUPTI is on all the time (level 0) while
 * recording every launch of the windows so far (but the first) costs at most the budget: a
 * launch costs CUPTI the same whichever are recorded, so there is nothing to trade; else it is
 * on for the share of the time that the next window's allowance pays for. Returns the window's
 * estimated cost in ns. */
double bctl_cupti(struct bctl *c, const struct bctl_costs *cost, double window_ns,
                  uint64_t seen, uint64_t recorded, uint64_t toggles, double period_ns);

/* The next on-off cycle under the CUPTI timer: on for *on_ns, then off for *off_ns. Its length
 * is drawn at random from 0.5 to 1.5 times period_ns, so that no periodic program keeps meeting
 * CUPTI at the same phase of its period; the on share is 1/2^duty_level (off is 0 at level 0). */
void bctl_cycle(struct bctl *c, double period_ns, double *on_ns, double *off_ns);

/* The estimated cost of the windows so far as a share of their time (0 before any). */
double bctl_share(const struct bctl *c);

/* The level of a rate p (0 < p): the largest rate 1/2^level not above p, within 0 to
 * BCTL_MAX_LEVEL. */
int bctl_level(double p);

#endif
