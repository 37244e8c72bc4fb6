/* module.h - the interface of a feature module: the moments of a run at which the lifecycle
 * (src/run: init.c, launch.c, context.c, finish.c, collect.c, tick.c) calls each feature, through the
 * registry (modules.def, modules.c). A module keeps its own state (static in its file), reads
 * its own settings (kt.cfg) and fills its own part of the report. It never calls up into the
 * run layer, nor into the registry.
 *
 * Per-launch work is not a moment: the launch path never calls through this table. Where a
 * feature acts on every launch, its header has a static inline check of its own state (as
 * capture_count_outside() or flush_l2_before()), which launch.h or launch.c calls directly. */
#ifndef KTIME_MODULE_H
#define KTIME_MODULE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cuda.h>

#include "drain.h"
#include "hw.h"
#include "pool.h"
#include "report.h"

/* The end of the run, as finish.c hands it to each module, in the registry's order. */
struct module_end {
    double deadline_ms;   /* a signal's deadline for the report (CLOCK_MONOTONIC ms); 0 at exit */
    bool stopped;         /* the drain thread stopped: no thread adds samples any more */
    long (*budget_ms)(long want); /* of a wait of want ms, what the deadline leaves for it */
    const char *report_template; /* as struct module_tick's: the report file's, or NULL */
    uint64_t own_launches; /* kernels ktime launched itself at the end (the timing floor's):
                            * set by the module that launched them, in stop() */
    bool records_primary; /* set by a module whose records, not the events', are the rows'
                           * samples (the CUPTI timer), in end() */
};

/* What collect.c has gathered when the modules add their rows and sections. */
struct module_rows {
    const uint32_t *row_of; /* kernel-table id -> 1 + its row in r->kernels, 0: none */
    uint32_t mask;          /* the kernel table's mask: ids are 0..mask */
    struct agg *aggs;       /* the drain's aggregates; NULL when the drain did not stop */
    bool stopped;           /* the aggregates hold still: the drain thread stopped, or this
                             * is the drain thread between passes (live) */
    bool live;              /* a snapshot while the program runs, on the drain thread */
    bool records_primary;   /* as struct module_end's */
};

/* What the run layer lends a module on the drain thread's tick (tick()): the report so far
 * and the reset of every count, which only the run layer can make (collect.c, rebase.c). */
struct module_tick {
    double now_ms;          /* drain_now_ms() at the tick */
    /* Fills r (zeroed first) with the report's header, as the report at exit has it. */
    void (*header)(struct report *r);
    /* Adds the rows so far to r (header filled): the kernel table's, the drain's aggregates
     * and the modules' rows, every launch in one bucket, gathered under the drain's pass_lock.
     * records_primary as struct module_rows's. Returns 0, or -1 when out of memory (r then
     * holds no rows). Free them with release(). */
    int (*gather)(struct report *r, bool records_primary);
    void (*release)(struct report *r);
    /* ktime ctl reset: a drain pass, then every count starts afresh (the kernel table's,
     * the drop reasons, the drain's aggregates, each module's through reset()). Returns 0,
     * or -1 when out of memory (nothing changed). */
    int (*reset)(void);
    /* The template of the report's file (KTIME_OUTPUT, or a rank's file in a job of several
     * processes), NULL: stderr; and a template expanded for process pid, anchored where the
     * program started (0, or -1 when it does not fit in size bytes). */
    const char *report_template;
    int (*expand)(const char *tmpl, long pid, char *path, size_t size);
};

/* A feature. Every moment is optional (NULL: nothing to do then). */
struct ktime_module {
    const char *name;

    /* Start-up, once, from the constructor, after the settings are read and the drain is
     * set up, before any launch. Sets the module's whole state afresh (the unit tests call it
     * once per test). Returns false when the module stays off for the run: none of its other
     * moments is then called. */
    bool (*start)(void);

    /* A kernel, graph or memory operation is seen for the first time, before its real call
     * and before the exit handlers are installed (the first launch of the process installs
     * them). Called at each first sight: a module starts what must be running before its
     * first kernel runs, once, and returns at once afterwards. */
    void (*first_launch)(void);

    /* A context's event pool is made (under the set-up lock, with its context current, before
     * the pool serves launches): per-context resources go into the pool. */
    void (*pool_made)(struct pool *p, CUdevice dev);

    /* A timed launch's sample is folded (the drain thread; the exit path once it stopped):
     * its kernel, GPU, stream, range, where it lies on the timeline (when placed) and its
     * launch call's time. Never the launch path. */
    void (*sample)(const struct drain_out *o);

    /* A CUPTI record of a kernel (or, with KTIME_BUSY, a copy or set) is taken in, joined
     * with its launch's record when CUPTI gave one (its range, launch call and queue time).
     * The thread that parses CUPTI's buffers (the drain's), or the exit path. */
    void (*record)(const struct hw_out *o);

    /* A pool stops taking launches: its context is being destroyed or reset (before the
     * drain resolves its pending events). Under the set-up lock. */
    void (*pool_ending)(struct pool *p);

    /* The run ends, after the drain thread was stopped: stop adding, take in what has come.
     * Before the modules' end(). May set e->own_launches. */
    void (*stop)(struct module_end *e);

    /* The run ends: the last records, the files the module writes as it goes, what it read,
     * within what e->budget_ms leaves; and its part of the report that needs them (r's header
     * is filled already). May set e->records_primary. */
    void (*end)(struct module_end *e, struct report *r);

    /* The report's header: the module's fields of r (the settings it worked with, its
     * counts). Also for the empty report of a process that launched nothing. */
    void (*header)(struct report *r);

    /* The rows are being gathered: adds the module's counts of kernel-table entry id to
     * part, that entry's share of its row (zeroed; collect.c adds its counts, outside_range,
     * paused, unsampled and bytes, to the row, and gives the row part's name when it has
     * none, else frees it).
     * Called for each entry before the table's own counts of it are read, so that a launch
     * the module counts is in calls too. */
    void (*entry)(uint32_t id, struct report_kernel *part);

    /* The rows are gathered and every launch is in one bucket: the module adds its rows and
     * sections to r. In the registry's order: a module that moves rows out of r->kernels
     * comes after those that read them through m->row_of. Returns 0, or -1 when out of
     * memory (the report is then not written). Called again when the rows are gathered
     * again. */
    int (*rows)(struct report *r, const struct module_rows *m);

    /* ktime ctl reset: the module's counts of launches start afresh (what entry() and rows()
     * give from then on), all but how far each kernel got through its warmup. On the drain
     * thread, right after a pass, with the drain's pass_lock held. Counters the launch path
     * adds to are not written: the module keeps a base to subtract. */
    void (*reset)(void);

    /* The drain thread, after every pass, outside the pass_lock, while the run is on (not
     * once the report at exit began, not in a forked child): the module's periodic work
     * (snapshots, the control channel), through what t lends. A module that has one makes
     * the drain thread call it (modules_ticking). */
    void (*tick)(const struct module_tick *t);

    /* The report at exit was written from r (header and rows, which a module may stamp): the
     * module's own outputs of the same rows, waiting at most wait_ms for its own lock. Called
     * again when the report is written again with launches that came late. */
    void (*report_written)(struct report *r, long wait_ms);

    /* After the report is written: the module's own files (the trace). */
    void (*after_report)(const struct module_end *e);
};

#endif
