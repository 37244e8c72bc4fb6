/* job.c - the job module (job.h): the job's id in every report; rank 0's job report, from
 * the other ranks' reports found by KTIME_OUTPUT's pattern, each judged once by its header
 * (its rank, its job, how recent, whether final), waited for with growing pauses, merged
 * (merge.h) and written at the name with %r as "all". */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "job.h"

#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <uthash.h>

#include "config.h"
#include "every.h"
#include "jsonin.h"
#include "log.h"
#include "merge.h"
#include "module.h"
#include "outpath.h"
#include "output.h"
#include "state.h"

/* The merge's own time, after the wait: at least this, or KTIME_JOB_WAIT when longer. */
#define JOB_MERGE_MIN_MS 10000
/* Pauses between two looks for the reports: from the first, growing to the last. */
#define JOB_PAUSE_FIRST_MS 20
#define JOB_PAUSE_MAX_MS 500
/* A report that ended this long before this process started is of an earlier run. */
#define JOB_STALE_S 2.0
/* The lines said of reports left out; the rest are counted. */
#define JOB_NOTES 8
/* The header of a report is in its first bytes. */
#define JOB_HEAD_BYTES 65536
/* A job of more ranks than this gets no job report at exit (ktime merge makes it). */
#define JOB_MAX_RANKS (1 << 20)
/* ... and none every interval past this many: the merge would cost the drain thread more
 * than a snapshot should. */
#define JOB_SNAPSHOT_MAX_RANKS 64

static struct {
    bool on;                   /* this process makes a job report (rank 0) or is a rank of one */
    bool rank0;
    long ws;                   /* the job's ranks */
    char idbuf[256];
    const char *id;            /* the job's id, or NULL */
    struct every snap;         /* KTIME_INTERVAL's job report (rank 0, JSON) */
    bool snap_started, snap_said;
    uint64_t seq;              /* job reports written */
} J;

static const char *env(const char *name)
{
    return getenv(name);
}

bool job_on(const char *tmpl)
{
    return tmpl && kt.cfg.job_wait > 0 && outpath_names_rank(tmpl) && outpath_rank(env) &&
           outpath_world_size(env) >= 2;
}

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* "2026-11-26T23:01:59.316Z" as seconds since the epoch, or -1. */
static double iso_seconds(const char *s)
{
    struct tm tm = { 0 };
    double sec;

    if (!s || sscanf(s, "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday, &tm.tm_hour,
                     &tm.tm_min, &sec) != 6)
        return -1;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return (double)timegm(&tm) + sec;
}

/* The JSON of the report at path: itself, or PATH.json beside a text or CSV report. */
static int json_path(const char *path, char *out, size_t size)
{
    int n = snprintf(out, size, "%s%s", path, kt.cfg.format == FORMAT_JSON ? "" : ".json");

    return n < 0 || (size_t)n >= size ? -1 : 0;
}

/* This process's report file (KTIME_OUTPUT expanded for it) into path. Returns 0 or -1. */
static int own_path(char *path, size_t size)
{
    char host[256];

    return outpath_resolve("KTIME_OUTPUT", kt.cfg.output, kt.start_dir, (long)getpid(),
                           outpath_hostname(host, sizeof host), path, size, env);
}

/* ---- looking for the reports ---- */

/* A file the pattern matched, judged once (again when it changes). */
struct seen {
    UT_hash_handle hh;
    char *path;
    struct timespec mtime;
    off_t size;
};

struct look {
    long ws;                   /* ranks */
    const char *self, *all;    /* rank 0's report and the job report (never inputs) */
    char **path;               /* per rank, the report found (malloc'd), or NULL */
    double *end;               /* its end time */
    bool *final;               /* whether it is the rank's report at exit */
    long found, finals;
    struct seen *seen;
    char *buf;                 /* JOB_HEAD_BYTES, for a report's header */
};

/* The snapshot object's "final" at at (its text, skimmed past). */
static bool final_of(struct jskim *k, const char *at)
{
    struct jdoc d;
    size_t len;
    bool final = false;

    if (json_skim_span(k, &len) != 0)
        return false;
    if (json_parse(&d, at, len) == 0) {
        const struct jv *f = jv_get(&d.root, "final");
        final = f && f->type == JV_BOOL && f->b;
    }
    json_free(&d);
    return final;
}

/* The rank of the report at path when it is one of this job's, else -1; its end time and
 * whether it is final (a report with no snapshot is the report at exit). */
static long judge(const struct look *lk, const char *path, double *end, bool *final)
{
    ssize_t n = 0, got;
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct jskim k;
    const char *key, *at, *job = NULL;
    struct jv v;
    long rank = -1, ws = -1;
    bool has_job = false;
    double ended = -1;

    *final = true;
    if (fd < 0)
        return -1;
    while (n < JOB_HEAD_BYTES && (got = read(fd, lk->buf + n, JOB_HEAD_BYTES - (size_t)n)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0)
            break;
        n += got;
    }
    close(fd);
    if (n <= 0 || json_skim_begin(&k, lk->buf, (size_t)n) != 0) {
        json_skim_end(&k);
        return -1;
    }
    while (json_skim_next(&k, &key, &v, &at) == 1 && strcmp(key, "kernels") != 0) {
        if (strcmp(key, "rank") == 0 && v.is_count && v.count < (uint64_t)LONG_MAX)
            rank = (long)v.count;
        else if (strcmp(key, "world_size") == 0 && v.is_count && v.count < (uint64_t)LONG_MAX)
            ws = (long)v.count;
        else if (strcmp(key, "job") == 0)
            has_job = true, job = v.type == JV_STRING ? v.s : NULL;
        else if (strcmp(key, "end_time") == 0 && v.type == JV_STRING)
            ended = iso_seconds(v.s);
        else if (strcmp(key, "snapshot") == 0 && v.type == JV_OBJECT)
            *final = final_of(&k, at);
    }
    bool same_job = J.id ? has_job && job && strcmp(job, J.id) == 0 : !job;
    bool ok = rank > 0 && rank < lk->ws && ws == lk->ws && same_job &&
              ended >= kt.start_unix - JOB_STALE_S;
    json_skim_end(&k);
    *end = ended;
    return ok ? rank : -1;
}

/* Whether the file at p, of status st, is new or changed since it was last judged. */
static bool changed(struct look *lk, const char *p, const struct stat *st)
{
    struct seen *s;

    HASH_FIND_STR(lk->seen, p, s);
    if (s && s->size == st->st_size && s->mtime.tv_sec == st->st_mtim.tv_sec &&
        s->mtime.tv_nsec == st->st_mtim.tv_nsec)
        return false;
    if (!s) {
        if (!(s = calloc(1, sizeof *s)) || !(s->path = strdup(p))) {
            free(s);
            return false;
        }
        HASH_ADD_KEYPTR(hh, lk->seen, s->path, strlen(s->path), s);
    }
    s->size = st->st_size;
    s->mtime = st->st_mtim;
    return true;
}

/* One look: the files the pattern matches now, each new or changed one judged; a rank's
 * latest report kept. */
static void look_once(struct look *lk, const char *pattern)
{
    glob_t g;

    if (glob(pattern, GLOB_NOSORT, NULL, &g) != 0) {
        globfree(&g);
        return;
    }
    for (size_t i = 0; i < g.gl_pathc && lk->finals < lk->ws; i++) {
        const char *p = g.gl_pathv[i];
        struct stat st;
        double end;
        bool final;
        if (strcmp(p, lk->self) == 0 || strcmp(p, lk->all) == 0 || stat(p, &st) != 0 ||
            !S_ISREG(st.st_mode) || !changed(lk, p, &st))
            continue;
        long r = judge(lk, p, &end, &final);
        if (r < 0 || (lk->path[r] && (lk->final[r] || end < lk->end[r])))
            continue;
        char *copy = strdup(p);
        if (!copy)
            continue;
        lk->found += !lk->path[r];
        lk->finals += final;
        free(lk->path[r]);
        lk->path[r] = copy;
        lk->end[r] = end;
        lk->final[r] = final;
    }
    globfree(&g);
}

/* Waits until every rank's final report is there, or deadline (CLOCK_MONOTONIC ms). */
static void look_for(struct look *lk, const char *pattern, double deadline)
{
    double pause = JOB_PAUSE_FIRST_MS;

    for (;;) {
        look_once(lk, pattern);
        double left = deadline - now_ms();
        if (lk->finals >= lk->ws || left <= 0)
            return;
        double ms = pause < left ? pause : left;
        struct timespec ts = { (time_t)(ms / 1000), (long)(((long)ms % 1000) * 1000000L) };
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
            ;
        pause = pause * 1.5 < JOB_PAUSE_MAX_MS ? pause * 1.5 : JOB_PAUSE_MAX_MS;
    }
}

static void look_free(struct look *lk)
{
    struct seen *s, *tmp;

    HASH_ITER(hh, lk->seen, s, tmp) {
        HASH_DEL(lk->seen, s);
        free(s->path);
        free(s);
    }
    for (long r = 0; lk->path && r < lk->ws; r++)
        free(lk->path[r]);
    free(lk->path);
    free(lk->end);
    free(lk->final);
    free(lk->buf);
}

/* ---- the job report ---- */

struct notes {
    int said, more;
};

static void note(void *ctx, const char *file, const char *msg)
{
    struct notes *n = ctx;

    if (n->said++ < JOB_NOTES)
        log_warn("job report: %s: %s", file, msg);
    else
        n->more++;
}

/* Writes m at path in the report's format, and as JSON beside it when that is another; a
 * snapshot's only ever through a temporary renamed into place. */
static int write_job(const struct model *m, const char *path, bool snapshot)
{
    char json[PATH_MAX];
    struct output o;
    const char *why = NULL;

    for (int pass = 0; pass < 2; pass++) {
        const char *to = path;
        enum report_format f = kt.cfg.format;
        if (pass == 1) {
            if (kt.cfg.format == FORMAT_JSON)
                break;
            if (json_path(path, json, sizeof json) != 0)
                return -1;
            to = json;
            f = FORMAT_JSON;
        }
        if ((snapshot ? output_open_snapshot(&o, to, &why)
                      : output_open(&o, to, kt.cfg.exit_wait_ms, &why)) != 0) {
            log_warn("job report: %s %s; not written", to, why);
            return -1;
        }
        int rc = f == FORMAT_JSON ? model_write_json(o.f, m)
                 : f == FORMAT_CSV ? model_write_csv(o.f, m)
                                   : model_write_text(o.f, m);
        if (output_close(&o, rc != 0, &why) != 0) {
            log_warn("job report: writing %s failed (%s)", to, why);
            return -1;
        }
    }
    return 0;
}

/* Names the ranks without a report (the first few), and those whose report is a snapshot. */
static void say_missing(const struct rm_balance *b, const struct look *lk, long wait_s,
                        const char *pattern)
{
    char list[256] = "";
    size_t at = 0;

    if (lk->found > lk->finals)
        log_warn("job report: %ld rank%s left only a snapshot (their last, merged)",
                 lk->found - lk->finals, lk->found - lk->finals == 1 ? "" : "s");
    if (!b || !b->nmissing)
        return;
    for (size_t i = 0; i < b->nmissing && i < 16; i++)
        at += (size_t)snprintf(list + at, sizeof list - at, "%s%ld", i ? ", " : "", b->missing[i]);
    if (b->nmissing > 16)
        snprintf(list + at, sizeof list - at, " and %zu more", b->nmissing - 16);
    log_warn("job report: no report of rank%s %s within KTIME_JOB_WAIT=%ld s (looked for %s)",
             b->nmissing == 1 ? "" : "s", list, wait_s, pattern);
}

/* The names: this rank's report (its JSON) self, the job report all (and its JSON all_json),
 * and the glob pattern of the ranks' JSON reports. Returns 0, or -1 when one does not fit. */
static int names(const char *tmpl, char *self, char *all, char *all_json, char *pattern,
                 size_t size)
{
    char path[PATH_MAX], anchored[PATH_MAX], all_tmpl[PATH_MAX], host[256];

    if (own_path(path, sizeof path) != 0 || json_path(path, self, size) != 0 ||
        outpath_in_dir(tmpl, kt.start_dir, anchored, sizeof anchored) != 0 ||
        outpath_with_rank(anchored, "all", all_tmpl, sizeof all_tmpl) != 0 ||
        outpath_expand(all_tmpl, (long)getpid(), outpath_hostname(host, sizeof host), all, size,
                       env) != 0 ||
        json_path(all, all_json, size) != 0 || outpath_glob(anchored, pattern, size - 8) != 0)
        return -1;
    if (kt.cfg.format != FORMAT_JSON)
        strcat(pattern, ".json");
    return 0;
}

/* The job report from the reports of tmpl's ranks, waiting at most wait_s for them (a
 * snapshot's: none). */
static int job_report(const char *tmpl, long wait_s, bool snapshot)
{
    char self[PATH_MAX], all[PATH_MAX], all_json[PATH_MAX], pattern[PATH_MAX + 8], err[1200];
    struct look lk = { .ws = J.ws };
    struct notes notes = { 0, 0 };
    double t0 = now_ms();
    struct model m;
    int rc = -1;

    if (names(tmpl, self, all, all_json, pattern, PATH_MAX) != 0) {
        log_warn("job report: KTIME_OUTPUT '%s' gives names too long; no job report", tmpl);
        return -1;
    }
    lk.self = self;
    lk.all = all_json;
    if (!(lk.buf = malloc(JOB_HEAD_BYTES)) ||
        !(lk.path = calloc((size_t)lk.ws, sizeof *lk.path)) ||
        !(lk.end = calloc((size_t)lk.ws, sizeof *lk.end)) ||
        !(lk.final = calloc((size_t)lk.ws, sizeof *lk.final)) || !(lk.path[0] = strdup(self))) {
        log_warn("job report: out of memory; no job report");
        goto out;
    }
    lk.found = lk.finals = 1;
    look_for(&lk, pattern, t0 + 1000.0 * (double)wait_s);
    const char **paths = malloc((size_t)lk.found * sizeof *paths);
    size_t n = 0;
    if (!paths) {
        log_warn("job report: out of memory; no job report");
        goto out;
    }
    for (long r = 0; r < lk.ws; r++)
        if (lk.path[r])
            paths[n++] = lk.path[r];
    double t1 = now_ms(), merge_ms = 1000.0 * (double)wait_s;
    struct merge_opts o = { .lenient = true, .world_size = lk.ws, .note = note, .ctx = &notes,
                            .deadline_ms = t1 + (merge_ms > JOB_MERGE_MIN_MS ? merge_ms
                                                                             : JOB_MERGE_MIN_MS) };
    rc = merge_files(paths, n, &o, &m, err, sizeof err);
    free(paths);
    if (notes.more)
        log_warn("job report: %d more reports left out", notes.more);
    if (rc != 0) {
        log_warn("job report: %s; no job report", err);
        goto out;
    }
    if (!snapshot)
        say_missing(m.balance, &lk, wait_s, pattern);
    rc = write_job(&m, all, snapshot);
    if (rc == 0 && !snapshot) {
        const struct rm_balance *b = m.balance;
        char verdict[64] = "";
        if (b && strcmp(b->verdict, "straggler") == 0)
            snprintf(verdict, sizeof verdict, ": rank %s", b->slowest.label);
        log_notice("job report written to %s (%llu of %ld ranks; %s%s)", all,
                   (unsigned long long)(b ? b->ranks : 0), lk.ws, b ? b->verdict : "?", verdict);
    }
    log_debug("job report: %.0f ms waiting, %.0f ms merging", t1 - t0, now_ms() - t1);
    J.seq += rc == 0;
    model_free(&m);
out:
    look_free(&lk);
    return rc;
}

/* ---- the moments ---- */

static bool job_start(void)
{
    const char *rank = outpath_rank(env);

    memset(&J, 0, sizeof J);
    J.id = kt.cfg.job ? kt.cfg.job : outpath_job(J.idbuf, sizeof J.idbuf, env);
    J.on = job_on(kt.cfg.output);
    J.ws = J.on ? outpath_world_size(env) : 0;
    J.rank0 = J.on && rank && strtol(rank, NULL, 10) == 0;
    if (J.on && J.ws > JOB_MAX_RANKS) {
        if (J.rank0)
            log_warn("job report: %ld ranks, more than %d; no job report (ktime merge makes it)",
                     J.ws, JOB_MAX_RANKS);
        J.on = J.rank0 = false;
    }
    return J.id || J.on;
}

static void job_header(struct report *r)
{
    r->job = J.id;
}

/* A rank's part: the job report reads JSON, so a report in another format is written again
 * as JSON beside it, at PATH.json. */
static void job_report_written(struct report *r, long wait_ms)
{
    char path[PATH_MAX], json[PATH_MAX];
    struct output o;
    const char *why = NULL;

    if (!J.on || kt.cfg.format == FORMAT_JSON)
        return;
    if (own_path(path, sizeof path) != 0 || json_path(path, json, sizeof json) != 0) {
        log_warn("job report: KTIME_OUTPUT '%s' gives names too long; this rank's report is "
                 "not in the job report", kt.cfg.output);
        return;
    }
    if (output_open(&o, json, wait_ms, &why) != 0) {
        log_warn("job report: %s %s; this rank's report is not in it", json, why);
        return;
    }
    int rc = report_write_json(o.f, r);
    if (output_close(&o, rc != 0, &why) != 0)
        log_warn("job report: writing %s failed (%s); this rank's report is not in it", json, why);
}

/* Rank 0, at a normal exit (not on a signal: time is short then), its own report written. */
static void job_after_report(const struct module_end *e)
{
    if (J.rank0 && e->deadline_ms == 0)
        job_report(kt.cfg.output, kt.cfg.job_wait, false);
}

/* Rank 0, every KTIME_INTERVAL: the job report of the ranks' reports there now (their
 * snapshots), waiting for none. JSON reports only: a snapshot in another format has no JSON
 * beside it. */
static void job_tick(const struct module_tick *t)
{
    if (!J.rank0 || kt.cfg.interval_s <= 0 || kt.cfg.format != FORMAT_JSON)
        return;
    if (J.ws > JOB_SNAPSHOT_MAX_RANKS) {
        if (!J.snap_said)
            log_info("job report: %ld ranks: the job report at exit only (every interval past "
                     "%d ranks would cost the drain thread too much)", J.ws,
                     JOB_SNAPSHOT_MAX_RANKS);
        J.snap_said = true;
        return;
    }
    if (!J.snap_started) {
        every_init(&J.snap, (double)kt.cfg.interval_s * 1000.0, t->now_ms);
        J.snap_started = true;
        return;
    }
    if (every_due(&J.snap, t->now_ms))
        job_report(kt.cfg.output, 0, true);
}

const struct ktime_module job_module = {
    .name = "job",
    .start = job_start,
    .header = job_header,
    .report_written = job_report_written,
    .after_report = job_after_report,
    .tick = job_tick,
};
