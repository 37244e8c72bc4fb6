/* control.c - control at run time (control.h): KTIME_START=paused, the count of launches
 * made while timing is off, and the commands of ktime ctl, read from the channel by the
 * drain thread on its tick. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "control.h"

#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ctl.h"
#include "live.h"
#include "log.h"
#include "module.h"

_Atomic uint64_t *control_paused;

/* The module's state: the drain thread's while it runs (under mu), the exit path's after. */
static struct {
    pthread_mutex_t mu;         /* held by the tick, and by the exit's closing */
    bool closed;                /* the exit closed the channel */
    bool opened;                /* the first tick tried to open the channel */
    struct ctl ctl;             /* the control channel (fd -1: none) */
    char xdg[PATH_MAX];         /* $XDG_RUNTIME_DIR at start-up, "" when unset */
    uint64_t *base;             /* control_paused at the last reset, or NULL */
} C = { .mu = PTHREAD_MUTEX_INITIALIZER, .ctl = { .fd = -1 } };

static bool events_timer(void)
{
    return kt.cfg.timer == TIMER_EVENTS;
}

static bool paused_now(void)
{
    return atomic_load(&kt.hold) & HOLD_PAUSED;
}

/* ---- the channel ---- */

static void channel_open(double now)
{
    char dir[PATH_MAX];
    const char *why = NULL;

    if (ctl_dir(dir, sizeof dir, C.xdg[0] ? C.xdg : NULL, true, &why) != 0 ||
        ctl_open(&C.ctl, dir, (long)getpid(), now, &why) != 0) {
        /* Said as a warning only to whoever asked for it. */
        if (CONFIG_ORIGIN(&kt.cfg, SETTING_CTL) != ORIGIN_DEFAULT)
            log_warn("ktime ctl is not available in this process: %s %s", dir, why);
        else
            log_info("ktime ctl is not available in this process: %s %s", dir, why);
        return;
    }
    log_debug("ktime ctl: listening on %s", C.ctl.fifo);
}

/* ---- the commands ---- */

static void handle(const struct ctl_request *q, const struct module_tick *t)
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
        } else if (!control_paused) {
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
        if (!live_can_snapshot(t->report_template)) {
            ok = false;
            snprintf(msg, sizeof msg, "nothing to write a snapshot to: the report goes to "
                     "stderr at exit (KTIME_OUTPUT names no file), and KTIME_PROM and "
                     "KTIME_SERIES are unset");
            break;
        }
        int n = live_snapshot(t, files, sizeof files);
        ok = n > 0;
        if (ok)
            snprintf(msg, sizeof msg, "snapshot %llu written: %.500s",
                     (unsigned long long)live_reports(), files);
        else
            snprintf(msg, sizeof msg, "the snapshot could not be written (the process's stderr "
                     "says why)");
        break;
    case CTL_RESET:
        if ((ok = t->reset() == 0))
            snprintf(msg, sizeof msg, "counts and samples reset (reset %llu); the warmup is not "
                     "repeated", (unsigned long long)live_resets());
        else
            snprintf(msg, sizeof msg, "out of memory; the counts were not reset");
        break;
    case CTL_STATUS:
        snprintf(msg, sizeof msg, "timing %s; %llu report%s written", paused_now() ? "off" : "on",
                 (unsigned long long)live_reports(), live_reports() == 1 ? "" : "s");
        if (kt.cfg.interval_s > 0)
            snprintf(msg + strlen(msg), sizeof msg - strlen(msg), ", every %ld s",
                     kt.cfg.interval_s);
        snprintf(msg + strlen(msg), sizeof msg - strlen(msg), "; %llu reset%s",
                 (unsigned long long)live_resets(), live_resets() == 1 ? "" : "s");
        break;
    default:
        ok = false;
        snprintf(msg, sizeof msg, "'%s' is not a command: on, off, snapshot, reset or status",
                 q->word);
        break;
    }
    log_info("ktime ctl %s: %s", q->word, msg);
    if (ctl_answer(&C.ctl, q, ok, msg) != 0)
        log_debug("ktime ctl: the answer to %s could not be written", q->id);
}

/* ---- the moments ---- */

static void on_fork_child(void)
{
    /* A child of a process that has its channel open: the parent's, not the child's (a
     * child ktime starts afresh in never had one open: see fork.c). */
    if (C.ctl.fd >= 0)
        close(C.ctl.fd);
    C.ctl.fd = -1;
    C.opened = false;
}

static void register_fork(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

static bool control_start(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    const char *xdg = getenv("XDG_RUNTIME_DIR");

    kt_hold(HOLD_PAUSED, false);
    free(control_paused);
    control_paused = NULL;
    free(C.base);
    C.base = NULL;
    C.closed = C.opened = false;
    snprintf(C.xdg, sizeof C.xdg, "%s", xdg ? xdg : "");
    if (kt.cfg.start == START_PAUSED && !events_timer()) {
        log_warn("KTIME_START=paused needs KTIME_TIMER=events (CUPTI records every kernel, "
                 "paused or not); timing from the start");
        kt.cfg.start = START_ON;
    }
    if (!kt.cfg.ctl && kt.cfg.start != START_PAUSED)
        return false;
    if (!(control_paused = calloc((size_t)kt.ktab.mask + 1, sizeof *control_paused))) {
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
    pthread_once(&once, register_fork);
    return true;
}

/* A paused start times no launch, so no launch starts the drain thread: the first does. */
static void control_first_launch(void)
{
    if (kt.cfg.start != START_PAUSED || kt.drain.started)
        return;
    int err = drain_start(&kt.drain);
    if (err)
        log_warn("could not start the drain thread (%s); no ktime ctl", strerror(err));
}

/* The commands that came, each answered. */
static void control_tick(const struct module_tick *t)
{
    struct ctl_request q;

    if (!kt.cfg.ctl || pthread_mutex_trylock(&C.mu) != 0)
        return;
    if (!C.closed && !C.opened) {
        C.opened = true;
        channel_open(t->now_ms);
    }
    while (!C.closed && C.ctl.fd >= 0 && ctl_poll(&C.ctl, t->now_ms, &q))
        handle(&q, t);
    pthread_mutex_unlock(&C.mu);
}

static void control_entry(uint32_t id, struct report_kernel *part)
{
    uint64_t n, b;

    if (!control_paused)
        return;
    n = atomic_load(&control_paused[id]);
    b = C.base ? C.base[id] : 0;
    part->paused += n > b ? n - b : 0;
}

/* The paused counts start afresh. Without memory for the base, they keep counting. */
static void control_reset(void)
{
    if (!control_paused ||
        (!C.base && !(C.base = calloc((size_t)kt.ktab.mask + 1, sizeof *C.base))))
        return;
    for (uint32_t id = 0; id <= kt.ktab.mask; id++)
        C.base[id] = atomic_load(&control_paused[id]);
}

/* At the end of the report at exit: the channel closed and its files removed (left when a
 * drain thread that did not stop is still reading it). */
static void control_after_report(const struct module_end *e)
{
    struct timespec ts;
    long wait_ms = e->stopped ? 0 : e->budget_ms(kt.cfg.exit_wait_ms);

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += wait_ms / 1000;
    ts.tv_nsec += (wait_ms % 1000) * 1000000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    if (pthread_mutex_timedlock(&C.mu, &ts) != 0)
        return;
    ctl_close(&C.ctl);
    C.closed = true;
    pthread_mutex_unlock(&C.mu);
}

const struct ktime_module control_module = {
    .name = "control",
    .start = control_start,
    .first_launch = control_first_launch,
    .tick = control_tick,
    .entry = control_entry,
    .reset = control_reset,
    .after_report = control_after_report,
};
