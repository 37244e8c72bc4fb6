/* live.c - the report while the program runs (live.h): KTIME_INTERVAL's snapshots of every
 * file asked for, KTIME_PROM and KTIME_SERIES, written by the drain thread (the tick moment)
 * through the run layer's report so far; stamped (snapshot: seq, at, final) and written once
 * more from the report at exit. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "live.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "conditions.h"
#include "cuptitimer.h"
#include "every.h"
#include "log.h"
#include "module.h"
#include "outpath.h"
#include "output.h"
#include "series.h"
#include "state.h"

/* The module's state: the drain thread's while it runs (under mu), the exit path's once it
 * stopped. */
static struct {
    pthread_mutex_t mu;         /* held by a snapshot, a reset, and the exit's outputs */
    bool closed;                /* the exit began: no snapshot any more */
    bool started;               /* the first tick ran: the interval counts from it */
    struct every snap;          /* KTIME_INTERVAL */
    uint64_t seq;               /* reports written: snapshots and the one at exit */
    struct report_snapshot stamp;
    struct model prev;          /* KTIME_SERIES: the model of the last line written */
    bool has_prev;
    int series_fd;              /* -1 not open yet, -2 could not be opened */
    unsigned said;              /* SAID_* bits: a warning given once */
    _Atomic uint64_t resets;    /* ktime ctl reset: how many */
    double since;               /* the wall-clock time of the last one (0: none) */
} L = { .mu = PTHREAD_MUTEX_INITIALIZER, .series_fd = -1 };

enum {
    SAID_OUTPUT = 1, SAID_ALSO = 2, SAID_PROM = 4, SAID_SERIES = 8, SAID_GATHER = 16,
    SAID_NOWHERE = 32,
};

/* A snapshot's conditions: NVML's readings come with the report at exit. */
static struct conditions snap_conditions = {
    .checked = false,
    .reason = "read at exit only (this is a snapshot while the program runs)",
};

static const char *env_get(const char *name)
{
    return getenv(name);
}

/* tmpl, the value of setting, expanded for process pid, anchored in the directory the program
 * started in. */
static int expand(const char *setting, const char *tmpl, long pid, char *path, size_t size)
{
    char host[256];

    return outpath_resolve(setting, tmpl, kt.start_dir, pid,
                           outpath_hostname(host, sizeof host), path, size, env_get);
}

static void stamp(struct report *r, bool final)
{
    uint64_t resets = atomic_load(&L.resets);

    L.stamp = (struct report_snapshot){
        .seq = ++L.seq,
        .at_unix = r->end_unix,
        .final = final,
        .interval_s = kt.cfg.interval_s,
        .resets = resets,
        .since_unix = resets ? L.since : kt.start_unix,
        .paused = atomic_load(&kt.hold) & HOLD_PAUSED,
    };
    r->snapshot = &L.stamp;
}

/* Says once (bit) that a file cannot take snapshots. */
static void say_once(unsigned bit, const char *what, const char *path, const char *why)
{
    if (L.said & bit)
        return;
    L.said |= bit;
    log_warn("%s '%s' %s; no snapshots written there", what, path, why);
}

/* Writes r in format fmt to the file template tmpl names, replaced whole. Returns 0. */
static int write_report_file(struct report *r, const char *tmpl, enum report_format fmt,
                             const char *what, unsigned bit, char *done, size_t n)
{
    char path[PATH_MAX];
    struct output o;
    const char *why = NULL;
    int rc;

    if (expand(what, tmpl, r->pid, path, sizeof path) != 0) {
        say_once(bit, what, tmpl, "is too long once expanded");
        return -1;
    }
    if (output_open_snapshot(&o, path, &why) != 0) {
        say_once(bit, what, path, why);
        return -1;
    }
    rc = fmt == FORMAT_JSON  ? report_write_json(o.f, r)
         : fmt == FORMAT_CSV ? report_write_csv(o.f, r)
                             : report_write_text(o.f, r);
    if (output_close(&o, rc != 0, &why) != 0) {
        say_once(bit, what, path, why);
        return -1;
    }
    snprintf(done + strlen(done), n - strlen(done), "%s%s", *done ? ", " : "", path);
    return 0;
}

/* KTIME_PROM from r: the rows bounded to KTIME_PROM_TOP, replaced whole. */
static int write_prom(struct report *r, char *done, size_t n)
{
    char path[PATH_MAX];
    struct output o;
    struct model m;
    const char *why = NULL;
    int rc;

    if (expand("KTIME_PROM", kt.cfg.prom, r->pid, path, sizeof path) != 0) {
        say_once(SAID_PROM, "KTIME_PROM", kt.cfg.prom, "is too long once expanded");
        return -1;
    }
    if (model_build(&m, r) != 0 || model_prom_view(&m, (size_t)kt.cfg.prom_top) != 0) {
        model_free(&m);
        say_once(SAID_PROM, "KTIME_PROM", path, "could not be made (out of memory)");
        return -1;
    }
    if (output_open_snapshot(&o, path, &why) != 0) {
        model_free(&m);
        say_once(SAID_PROM, "KTIME_PROM", path, why);
        return -1;
    }
    rc = model_write_prom(o.f, &m);
    model_free(&m);
    if (output_close(&o, rc != 0, &why) != 0) {
        say_once(SAID_PROM, "KTIME_PROM", path, why);
        return -1;
    }
    snprintf(done + strlen(done), n - strlen(done), "%s%s", *done ? ", " : "", path);
    return 0;
}

/* KTIME_SERIES: the line of what changed since the last one, appended in one write. */
static int write_series(struct report *r, char *done, size_t n)
{
    char path[PATH_MAX], *line = NULL;
    size_t len = 0;
    struct series_delta d;
    struct model m;
    const char *why = NULL;
    FILE *f;
    int rc = -1;

    if (L.series_fd == -2)
        return -1;
    if (expand("KTIME_SERIES", kt.cfg.series, r->pid, path, sizeof path) != 0) {
        say_once(SAID_SERIES, "KTIME_SERIES", kt.cfg.series, "is too long once expanded");
        L.series_fd = -2;
        return -1;
    }
    if (L.series_fd < 0 && (L.series_fd = output_open_lines(path, &why)) < 0) {
        say_once(SAID_SERIES, "KTIME_SERIES", path, why);
        L.series_fd = -2;
        return -1;
    }
    if (model_build(&m, r) != 0)
        return -1;
    if (series_delta(&d, L.has_prev ? &L.prev : NULL, &m) == 0) {
        if ((f = open_memstream(&line, &len))) {
            rc = series_write(f, &d, &m);
            if (fclose(f) != 0)
                rc = -1;
        }
        series_free(&d);
    }
    if (rc == 0 && output_append_line(L.series_fd, line, len) != 0) {
        say_once(SAID_SERIES, "KTIME_SERIES", path, strerror(errno));
        rc = -1;
    }
    free(line);
    if (rc != 0) {
        model_free(&m);
        return -1;
    }
    /* This line's counts are the next one's start. */
    if (L.has_prev)
        model_free(&L.prev);
    L.prev = m;
    L.has_prev = true;
    snprintf(done + strlen(done), n - strlen(done), "%s%s", *done ? ", " : "", path);
    return 0;
}

bool live_can_snapshot(const char *report_template)
{
    return report_template || kt.cfg.also_output || kt.cfg.prom || kt.cfg.series;
}

/* Gathers the counts so far and writes every file asked for; the paths written go to done
 * (n bytes). Returns how many were written, or -1 when the counts could not be gathered.
 * Holding L.mu. */
static int snapshot(const struct module_tick *t, char *done, size_t n)
{
    struct report r;
    int written = 0;

    *done = '\0';
    t->header(&r);
    r.conditions = &snap_conditions;
    if (t->gather(&r, cuptitimer_describe(&r)) != 0) {
        if (!(L.said & SAID_GATHER))
            log_warn("out of memory while taking a snapshot; none written");
        L.said |= SAID_GATHER;
        return -1;
    }
    stamp(&r, false);
    if (t->report_template)
        written += write_report_file(&r, t->report_template, kt.cfg.format, "KTIME_OUTPUT",
                                     SAID_OUTPUT, done, n) == 0;
    if (kt.cfg.also_output)
        written += write_report_file(&r, kt.cfg.also_output, kt.cfg.also_format,
                                     "KTIME_ALSO_OUTPUT", SAID_ALSO, done, n) == 0;
    if (kt.cfg.prom)
        written += write_prom(&r, done, n) == 0;
    if (kt.cfg.series)
        written += write_series(&r, done, n) == 0;
    t->release(&r);
    log_debug("snapshot %llu: %s", (unsigned long long)L.seq, *done ? done : "nothing written");
    return written;
}

int live_snapshot(const struct module_tick *t, char *done, size_t n)
{
    int rc = -1;

    *done = '\0';
    if (pthread_mutex_trylock(&L.mu) != 0)
        return -1; /* the exit path has it */
    if (!L.closed)
        rc = snapshot(t, done, n);
    pthread_mutex_unlock(&L.mu);
    return rc;
}

uint64_t live_reports(void)
{
    return L.seq;
}

uint64_t live_resets(void)
{
    return atomic_load(&L.resets);
}

/* ---- the moments ---- */

static void on_fork_child(void)
{
    /* A child's file of lines is its own, opened when it writes one. */
    if (L.series_fd >= 0)
        close(L.series_fd);
    L.series_fd = -1;
    L.started = false;
}

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

static bool live_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;

    pthread_mutex_lock(&L.mu);
    L.closed = L.started = L.has_prev = false;
    L.seq = 0;
    L.said = 0;
    atomic_store(&L.resets, 0);
    L.since = 0;
    pthread_mutex_unlock(&L.mu);
    /* KTIME_CTL: ktime ctl snapshot writes a snapshot whenever it is asked. */
    if (kt.cfg.interval_s <= 0 && !kt.cfg.prom && !kt.cfg.series && !kt.cfg.ctl)
        return false;
    pthread_once(&once, register_fork);
    return true;
}

/* Snapshots are due whether or not a launch is timed: the drain thread runs from the first
 * launch. */
static void live_first_launch(void)
{
    if (kt.cfg.interval_s <= 0 || kt.drain.started)
        return;
    int err = drain_start(&kt.drain);
    if (err)
        log_warn("could not start the drain thread (%s); no snapshots", strerror(err));
}

/* KTIME_INTERVAL with nowhere to write a snapshot: said once, at the first tick or, when the
 * run ended before one, at exit. Holding L.mu (or at exit without it: no tick runs then). */
static void warn_nowhere(const char *report_template)
{
    if (kt.cfg.interval_s > 0 && !live_can_snapshot(report_template) &&
        !(L.said & SAID_NOWHERE)) {
        L.said |= SAID_NOWHERE;
        log_warn("KTIME_INTERVAL=%ld: the report goes to stderr at exit, so there is "
                 "nothing to write snapshots to (set KTIME_OUTPUT to a file, or KTIME_PROM "
                 "or KTIME_SERIES)", kt.cfg.interval_s);
    }
}

/* KTIME_INTERVAL: a snapshot when one is due. */
static void live_tick(const struct module_tick *t)
{
    char files[PATH_MAX * 2];

    if (pthread_mutex_trylock(&L.mu) != 0)
        return; /* the exit path has it */
    if (!L.closed && !L.started) {
        L.started = true;
        every_init(&L.snap, (double)kt.cfg.interval_s * 1000.0, t->now_ms);
        warn_nowhere(t->report_template);
    }
    if (!L.closed && every_due(&L.snap, t->now_ms) && live_can_snapshot(t->report_template))
        snapshot(t, files, sizeof files);
    pthread_mutex_unlock(&L.mu);
}

/* The counts start afresh: the next series line counts from here. */
static void live_reset(void)
{
    struct timespec now;

    if (clock_gettime(CLOCK_REALTIME, &now) == 0)
        L.since = (double)now.tv_sec + now.tv_nsec / 1e9;
    atomic_fetch_add(&L.resets, 1);
    if (pthread_mutex_trylock(&L.mu) != 0)
        return;
    if (L.has_prev)
        model_free(&L.prev);
    L.has_prev = false;
    pthread_mutex_unlock(&L.mu);
}

/* L.mu within wait_ms; false when a drain thread that did not stop keeps it. */
static bool lock_within(long wait_ms)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += wait_ms / 1000;
    ts.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return pthread_mutex_timedlock(&L.mu, &ts) == 0;
}

/* No snapshot is written once the exit began, so that none replaces the report at exit. */
static void live_stop(struct module_end *e)
{
    bool locked = lock_within(e->stopped ? 0 : e->budget_ms(kt.cfg.exit_wait_ms));

    L.closed = true; /* read by a tick under the lock: it sees it next time */
    if (locked && !L.started)
        warn_nowhere(e->report_template); /* the run ended before the first tick */
    if (locked)
        pthread_mutex_unlock(&L.mu);
}

/* The report at exit is the final one when snapshots were written or are asked for. */
static void live_end(struct module_end *e, struct report *r)
{
    if (kt.cfg.interval_s > 0 || L.seq > 0)
        stamp(r, true);
}

/* KTIME_PROM and the last KTIME_SERIES line, from the report at exit's rows. */
static void live_report_written(struct report *r, long wait_ms)
{
    char files[PATH_MAX * 2] = "";

    if (!kt.cfg.prom && !kt.cfg.series)
        return;
    if (!lock_within(wait_ms)) {
        log_warn("a snapshot is still being written; KTIME_PROM and KTIME_SERIES keep the last "
                 "one");
        return;
    }
    /* Written at exit even without snapshots before: the report's figures. */
    if (!r->snapshot)
        stamp(r, true);
    if (kt.cfg.prom)
        write_prom(r, files, sizeof files);
    if (kt.cfg.series)
        write_series(r, files, sizeof files);
    pthread_mutex_unlock(&L.mu);
}

const struct ktime_module live_module = {
    .name = "live",
    .start = live_start,
    .first_launch = live_first_launch,
    .tick = live_tick,
    .reset = live_reset,
    .stop = live_stop,
    .end = live_end,
    .report_written = live_report_written,
};
