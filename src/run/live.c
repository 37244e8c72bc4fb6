/* live.c - ktime always on: snapshots while the program runs, and control at run time, both
 * done by the drain thread between its passes (live.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "live.h"

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "collect.h"
#include "conditions.h"
#include "ctl.h"
#include "every.h"
#include "log.h"
#include "output.h"
#include "rebase.h"
#include "cuptitimer.h"
#include "deliver.h"
#include "modules.h"
#include "series.h"
#include "state.h"

/* The state of this file: the drain thread's while it runs (under mu), the exit path's once
 * it stopped. */
static struct {
    pthread_mutex_t mu;         /* held by the drain thread's tick, and by the exit's outputs */
    bool closed;                /* the exit began: no snapshot any more */
    bool started;               /* the first tick ran: the interval counts from it */
    struct every snap;          /* KTIME_INTERVAL */
    struct ctl ctl;             /* the control channel (fd -1: none) */
    char xdg[PATH_MAX];         /* $XDG_RUNTIME_DIR at start-up, "" when unset */
    uint64_t seq;               /* reports written: snapshots and the one at exit */
    struct report_snapshot stamp;
    struct model prev;          /* KTIME_SERIES: the model of the last line written */
    bool has_prev;
    int series_fd;              /* -1 not open yet, -2 could not be opened */
    unsigned said;              /* SAID_* bits: a warning given once */
} L = { .mu = PTHREAD_MUTEX_INITIALIZER, .series_fd = -1, .ctl = { .fd = -1 } };

enum {
    SAID_OUTPUT = 1, SAID_ALSO = 2, SAID_PROM = 4, SAID_SERIES = 8, SAID_GATHER = 16,
    SAID_CTL = 32,
};

/* A snapshot's conditions: NVML's readings come with the report at exit. */
static struct conditions snap_conditions = {
    .checked = false,
    .reason = "read at exit only (this is a snapshot while the program runs)",
};

static bool events_timer(void)
{
    return kt.cfg.timer == TIMER_EVENTS;
}

static bool paused_now(void)
{
    return atomic_load(&kt.hold) & HOLD_PAUSED;
}

/* ---- start-up ---- */

static void on_fork_child(void)
{
    /* A child of a process that has its channel open: the parent's, not the child's (a
     * child ktime starts afresh in never had one open: see fork.c). */
    if (L.ctl.fd >= 0)
        close(L.ctl.fd);
    L.ctl.fd = -1;
    if (L.series_fd >= 0)
        close(L.series_fd);
    L.series_fd = -1;
    L.started = false;
}

static void live_tick(void);

/* The report's header, as the report at exit has it (finish_header). */
static void (*header)(struct report *r);

void live_init(void (*fill_header)(struct report *r))
{
    const char *xdg = getenv("XDG_RUNTIME_DIR");
    bool wanted = kt.cfg.ctl || kt.cfg.interval_s > 0 || kt.cfg.prom || kt.cfg.series ||
                  kt.cfg.start == START_PAUSED;

    header = fill_header;
    snprintf(L.xdg, sizeof L.xdg, "%s", xdg ? xdg : "");
    if (kt.cfg.start == START_PAUSED && !events_timer()) {
        log_warn("KTIME_START=paused needs KTIME_TIMER=events (CUPTI records every kernel, "
                 "paused or not); timing from the start");
        kt.cfg.start = START_ON;
    }
    if ((kt.cfg.ctl || kt.cfg.start == START_PAUSED) &&
        !(kt.paused = calloc((size_t)kt.ktab.mask + 1, sizeof *kt.paused))) {
        log_warn("out of memory at start-up; KTIME_START=paused and ktime ctl off are not "
                 "available");
        kt.cfg.start = START_ON;
    }
    if (kt.cfg.start == START_PAUSED) {
        kt_hold(HOLD_PAUSED, true);
        if (!kt.cfg.ctl)
            log_warn("KTIME_START=paused with KTIME_CTL=0: nothing can switch timing on; "
                     "launches are only counted");
    }
    if (kt.cfg.interval_s > 0 && !deliver_template() && !kt.cfg.prom && !kt.cfg.series &&
        !kt.cfg.also_output)
        log_warn("KTIME_INTERVAL=%ld: the report goes to stderr at exit, so there is nothing to "
                 "write snapshots to (set KTIME_OUTPUT to a file, or KTIME_PROM or KTIME_SERIES)",
                 kt.cfg.interval_s);
    if (!wanted)
        return;
    pthread_atfork(NULL, NULL, on_fork_child);
    atomic_store(&kt.drain.tick, live_tick);
}

void live_first_launch(void)
{
    /* Snapshots are due whether or not a launch is timed; a paused start times none. */
    if (kt.cfg.interval_s <= 0 && kt.cfg.start != START_PAUSED)
        return;
    if (!kt.drain.started) {
        int err = drain_start(&kt.drain);
        if (err)
            log_warn("could not start the drain thread (%s); no snapshots, no ktime ctl",
                     strerror(err));
    }
}

/* ---- the control channel ---- */

static void ctl_start(double now)
{
    char dir[PATH_MAX];
    const char *why = NULL;

    if (!kt.cfg.ctl)
        return;
    if (ctl_dir(dir, sizeof dir, L.xdg[0] ? L.xdg : NULL, true, &why) != 0 ||
        ctl_open(&L.ctl, dir, (long)getpid(), now, &why) != 0) {
        /* Said as a warning only to whoever asked for it. */
        if (CONFIG_ORIGIN(&kt.cfg, SETTING_CTL) != ORIGIN_DEFAULT)
            log_warn("ktime ctl is not available in this process: %s %s", dir, why);
        else
            log_info("ktime ctl is not available in this process: %s %s", dir, why);
        return;
    }
    log_debug("ktime ctl: listening on %s", L.ctl.fifo);
}

/* ---- snapshots ---- */

static void stamp(struct report *r, bool final)
{
    uint64_t resets = rebase_count();

    L.stamp = (struct report_snapshot){
        .seq = ++L.seq,
        .at_unix = r->end_unix,
        .final = final,
        .interval_s = kt.cfg.interval_s,
        .resets = resets,
        .since_unix = resets ? rebase_since_unix() : kt.start_unix,
        .paused = paused_now(),
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

    if (deliver_expand(tmpl, r->pid, path, sizeof path) != 0) {
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

    if (deliver_expand(kt.cfg.prom, r->pid, path, sizeof path) != 0) {
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
    if (deliver_expand(kt.cfg.series, r->pid, path, sizeof path) != 0) {
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

/* Whether a snapshot has anywhere to go. */
static bool snapshot_targets(void)
{
    return deliver_template() || kt.cfg.also_output || kt.cfg.prom || kt.cfg.series;
}

/* Gathers the counts so far and writes every file asked for; the paths written go to done
 * (n bytes). Returns how many were written, or -1 when the counts could not be gathered.
 * The drain thread, between passes, holding L.mu. */
static int snapshot(char *done, size_t n)
{
    struct report r;
    int written = 0;

    *done = '\0';
    header(&r);
    bool hw_primary = cuptitimer_describe(&r);
    r.ndevices = atomic_load(&kt.ndevices);
    r.conditions = &snap_conditions;
    /* The aggregates are the drain thread's; a thread releasing a context may fold into them
     * too, under pass_lock. */
    pthread_mutex_lock(&kt.drain.pass_lock);
    int rc = collect_gather(&r, true, hw_primary, true);
    pthread_mutex_unlock(&kt.drain.pass_lock);
    if (rc != 0) {
        if (!(L.said & SAID_GATHER))
            log_warn("out of memory while taking a snapshot; none written");
        L.said |= SAID_GATHER;
        return -1;
    }
    stamp(&r, false);
    if (deliver_template())
        written += write_report_file(&r, deliver_template(), kt.cfg.format, "KTIME_OUTPUT",
                                     SAID_OUTPUT, done, n) == 0;
    if (kt.cfg.also_output)
        written += write_report_file(&r, kt.cfg.also_output, kt.cfg.also_format,
                                     "KTIME_ALSO_OUTPUT", SAID_ALSO, done, n) == 0;
    if (kt.cfg.prom)
        written += write_prom(&r, done, n) == 0;
    if (kt.cfg.series)
        written += write_series(&r, done, n) == 0;
    collect_free(&r);
    log_debug("snapshot %llu: %s", (unsigned long long)L.seq, *done ? done : "nothing written");
    return written;
}

/* ---- the commands ---- */

/* ktime ctl reset: the counts and samples start afresh; the warmup is not repeated. */
static void reset(void)
{
    pthread_mutex_lock(&kt.drain.pass_lock);
    drain_pass(&kt.drain); /* what has completed belongs before the reset */
    if (rebase_take() == 0) {
        drain_reset_aggs(&kt.drain);
        modules_reset();
    }
    pthread_mutex_unlock(&kt.drain.pass_lock);
    /* The next series line counts from the reset. */
    if (L.has_prev)
        model_free(&L.prev);
    L.has_prev = false;
}

static void handle(const struct ctl_request *q)
{
    char msg[600], files[PATH_MAX * 2];
    bool ok = true;

    switch (q->cmd) {
    case CTL_ON:
        snprintf(msg, sizeof msg, "%s", paused_now() ? "timing on" : "timing was on already");
        kt_hold(HOLD_PAUSED, false);
        break;
    case CTL_OFF:
        if (!events_timer()) {
            ok = false;
            snprintf(msg, sizeof msg, "timing cannot be switched off under KTIME_TIMER=%s (CUPTI "
                     "records every kernel); snapshot, reset and status work",
                     timer_kind_name(kt.cfg.timer));
        } else if (!kt.paused) {
            ok = false;
            snprintf(msg, sizeof msg, "timing cannot be switched off in this process (no memory "
                     "for the count of paused launches)");
        } else {
            snprintf(msg, sizeof msg, "%s: launches are counted (paused), not timed",
                     paused_now() ? "timing was off already" : "timing off");
            kt_hold(HOLD_PAUSED, true);
        }
        break;
    case CTL_SNAPSHOT:
        if (!snapshot_targets()) {
            ok = false;
            snprintf(msg, sizeof msg, "nothing to write a snapshot to: the report goes to "
                     "stderr at exit (KTIME_OUTPUT names no file), and KTIME_PROM and "
                     "KTIME_SERIES are unset");
            break;
        }
        int n = snapshot(files, sizeof files);
        ok = n > 0;
        if (ok)
            snprintf(msg, sizeof msg, "snapshot %llu written: %.500s", (unsigned long long)L.seq,
                     files);
        else
            snprintf(msg, sizeof msg, "the snapshot could not be written (the process's stderr "
                     "says why)");
        break;
    case CTL_RESET:
        reset();
        snprintf(msg, sizeof msg, "counts and samples reset (reset %llu); the warmup is not "
                 "repeated", (unsigned long long)rebase_count());
        break;
    case CTL_STATUS:
        snprintf(msg, sizeof msg, "timing %s; %llu report%s written", paused_now() ? "off" : "on",
                 (unsigned long long)L.seq, L.seq == 1 ? "" : "s");
        if (kt.cfg.interval_s > 0)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", every %ld s",
                     kt.cfg.interval_s);
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "; %llu reset%s",
                 (unsigned long long)rebase_count(), rebase_count() == 1 ? "" : "s");
        break;
    default:
        ok = false;
        snprintf(msg, sizeof msg, "'%s' is not a command: on, off, snapshot, reset or status",
                 q->word);
        break;
    }
    log_info("ktime ctl %s: %s", q->word, msg);
    if (ctl_answer(&L.ctl, q, ok, msg) != 0)
        log_debug("ktime ctl: the answer to %s could not be written", q->id);
}

/* ---- the drain thread's tick ---- */

static void live_tick(void)
{
    struct ctl_request q;
    char files[PATH_MAX * 2];
    double now;

    if (pthread_mutex_trylock(&L.mu) != 0)
        return; /* the exit path has it */
    if (L.closed || getpid() != kt.owner) {
        pthread_mutex_unlock(&L.mu);
        return;
    }
    now = drain_now_ms();
    if (!L.started) {
        L.started = true;
        every_init(&L.snap, (double)kt.cfg.interval_s * 1000.0, now);
        ctl_start(now);
    }
    while (L.ctl.fd >= 0 && ctl_poll(&L.ctl, now, &q))
        handle(&q);
    if (every_due(&L.snap, now) && snapshot_targets())
        snapshot(files, sizeof files);
    pthread_mutex_unlock(&L.mu);
}

/* ---- exit ---- */

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

void live_stop(long wait_ms)
{
    if (!lock_within(wait_ms)) {
        L.closed = true; /* read by the tick under the lock: it will see it next time */
        return;
    }
    L.closed = true;
    pthread_mutex_unlock(&L.mu);
}

void live_stamp_final(struct report *r)
{
    if (kt.cfg.interval_s > 0 || L.seq > 0)
        stamp(r, true);
}

void live_final_outputs(struct report *r, long wait_ms)
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

void live_close(void)
{
    ctl_close(&L.ctl);
}
