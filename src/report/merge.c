/* merge.c - reports merged (merge.h): the first look at each report (its header alone, for
 * the order and the checks), the merged order, then each report read whole and folded in
 * that order (merge_fold.c), by the caller or by reading threads that keep a few reports
 * ahead of it. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge.h"
#include "merge_acc.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "jsonin.h"
#include "reader.h"

/* The first look reads this much of a report: its header is in it. */
#define HEAD_BYTES 65536

static double now_ms(void)
{
    struct timespec t;

    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* ---- the merged order ---- */

static int cmp_inputs(const void *x, const void *y)
{
    const struct input *a = *(const struct input *const *)x;
    const struct input *b = *(const struct input *const *)y;
    int c;

    if ((a->rank < 0) != (b->rank < 0))
        return a->rank < 0 ? 1 : -1;
    if (a->rank != b->rank)
        return a->rank < b->rank ? -1 : 1;
    if ((c = strcmp(a->host ? a->host : "None", b->host ? b->host : "None")))
        return c;
    long pa = a->pid < 0 ? 0 : a->pid, pb = b->pid < 0 ? 0 : b->pid;
    if (pa != pb)
        return pa < pb ? -1 : 1;
    if ((c = strcmp(a->start ? a->start : "None", b->start ? b->start : "None")))
        return c;
    if ((c = strcmp(a->path, b->path)))
        return c;
    return a->given < b->given ? -1 : a->given > b->given;
}

/* ---- reading in order ---- */

struct slot {
    size_t idx;
    bool ready;
    int rc;
    char err[512];
    struct model m;
};

struct reader {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct input **order;
    size_t n, consumed, nslots;
    struct slot *slots;
    int nthreads;
    bool stop;
};

struct worker {
    struct reader *rd;
    int w;
};

static void *read_ahead(void *arg)
{
    struct worker *wk = arg;
    struct reader *rd = wk->rd;
    char *buf = NULL;
    size_t cap = 0;

    for (size_t i = (size_t)wk->w; i < rd->n; i += (size_t)rd->nthreads) {
        struct model m;
        char err[512];
        pthread_mutex_lock(&rd->mu);
        while (!rd->stop && i >= rd->consumed + rd->nslots)
            pthread_cond_wait(&rd->cv, &rd->mu);
        bool stop = rd->stop;
        pthread_mutex_unlock(&rd->mu);
        if (stop)
            break;
        int rc = merge_in_report(rd->order[i], &buf, &cap, &m, err, sizeof err);
        pthread_mutex_lock(&rd->mu);
        struct slot *s = &rd->slots[i % rd->nslots];
        s->idx = i;
        s->rc = rc;
        s->m = m;
        memcpy(s->err, err, sizeof err);
        s->ready = true;
        pthread_cond_broadcast(&rd->cv);
        pthread_mutex_unlock(&rd->mu);
    }
    free(buf);
    return NULL;
}

/* ---- the merge ---- */

struct run {
    const struct merge_opts *o;
    struct input *in, *first;  /* the reports; the first to merge, which the others match */
    size_t n;
    char *err;
    size_t errsz;
    char *buf;
    size_t cap;
};

static void say(const struct run *r, const char *file, const char *fmt, const char *what)
{
    char msg[600];

    if (!r->o->note)
        return;
    snprintf(msg, sizeof msg, fmt, what);
    r->o->note(r->o->ctx, file, msg);
}

/* An input that cannot be merged: the error (strict), or left out with why (lenient).
 * Returns -1 for the error. */
static int refuse(struct run *r, struct input *in, const char *why)
{
    if (!r->o->lenient) {
        snprintf(r->err, r->errsz, "%s: %s", in->path, why);
        return -1;
    }
    free(in->why);
    in->why = strdup(why ? why : "?");
    say(r, in->path, "%s", why);
    return 0;
}

/* The first look at each report, in the order given. */
static int first_look(struct run *r)
{
    for (size_t i = 0; i < r->n; i++) {
        struct input *in = &r->in[i];
        size_t len;
        bool whole;
        int rc = -1;
        char err[512];
        if (r->o->deadline_ms && now_ms() > r->o->deadline_ms) {
            if (refuse(r, in, "not merged: the time for the merge ran out") != 0)
                return -1;
            continue;
        }
        struct stat st;
        if (!in->data && stat(in->path, &st) == 0) {
            in->has_id = true;
            in->dev = (unsigned long long)st.st_dev;
            in->ino = (unsigned long long)st.st_ino;
        }
        if (merge_in_read(in, HEAD_BYTES, &r->buf, &r->cap, &len, &whole) == 0) {
            rc = merge_in_blank(r->buf, len) ? -1 : merge_in_skim(in, r->buf, len, whole);
            if (rc == 1 && merge_in_read(in, 0, &r->buf, &r->cap, &len, &whole) == 0)
                rc = merge_in_skim(in, r->buf, len, true);
        }
        if (rc == 0)
            continue;
        /* Read whole, for the reason (or the header, where the first look could not tell). */
        struct model m;
        if (merge_in_report(in, &r->buf, &r->cap, &m, err, sizeof err) != 0) {
            if (refuse(r, in, err) != 0)
                return -1;
            continue;
        }
        merge_in_header(in, &m);
        model_free(&m);
    }
    return 0;
}

/* No report given twice (its launches would count twice): the same file, or a copy of the
 * same process's report. */
static int same_reports(struct run *r)
{
    const struct input *a, *b;
    int found;

    while ((found = merge_in_same(r->in, r->n, &a, &b)) == 1) {
        char pid[32] = "None", why[1400];
        if (b->pid >= 0)
            snprintf(pid, sizeof pid, "%ld", b->pid);
        snprintf(why, sizeof why, "%s and %s are the same report (pid %s on %s, started %s): "
                 "give each report once, or its launches count twice", a->path, b->path, pid,
                 b->host ? b->host : "None", b->start ? b->start : "None");
        if (!r->o->lenient) {
            snprintf(r->err, r->errsz, "%s", why);
            return -1;
        }
        if (refuse(r, (struct input *)b, why) != 0)
            return -1;
    }
    if (found < 0)
        snprintf(r->err, r->errsz, "out of memory");
    return found < 0 ? -1 : 0;
}

/* What the reports to merge must share: the schema, the warmup and the timer of the first. */
static int same_kind(struct run *r)
{
    struct input *first = NULL;
    char why[1200];

    for (size_t i = 0; i < r->n; i++) {
        struct input *in = &r->in[i];
        if (in->why || in->empty)
            continue;
        if (in->merged) {
            snprintf(why, sizeof why, "is a merged report; merge the per-rank reports it was "
                     "made from instead");
            if (!r->o->lenient) {
                snprintf(r->err, r->errsz, "%s %s", in->path, why);
                return -1;
            }
            if (refuse(r, in, why) != 0)
                return -1;
            continue;
        }
        if (!first) {
            first = r->first = in;
            continue;
        }
        const char *key = NULL, *what = NULL;
        char a[300], b[300];
        if (in->schema != first->schema) {
            key = "schema_version", what = "schema versions";
            snprintf(a, sizeof a, "%llu", (unsigned long long)first->schema);
            snprintf(b, sizeof b, "%llu", (unsigned long long)in->schema);
        } else if (in->warmup != first->warmup) {
            key = "warmup", what = "warmup settings";
            snprintf(a, sizeof a, "%llu", (unsigned long long)first->warmup);
            snprintf(b, sizeof b, "%llu", (unsigned long long)in->warmup);
        } else if (strcmp(in->timing, first->timing) != 0) {
            key = "timing_method", what = "timers";
            snprintf(a, sizeof a, "\"%s\"", first->timing);
            snprintf(b, sizeof b, "\"%s\"", in->timing);
        }
        if (!key)
            continue;
        if (!r->o->lenient) {
            snprintf(r->err, r->errsz, "%s has %s %s, %s has %s: cannot merge reports of "
                     "different %s", first->path, key, a, in->path, b, what);
            return -1;
        }
        snprintf(why, sizeof why, "has %s %s, %s has %s: not merged with it", key, b,
                 first->path, a);
        if (refuse(r, in, why) != 0)
            return -1;
    }
    return 0;
}

/* Folds the reports in order: read by the caller, or by threads ahead of it. */
static int fold_all(struct run *r, struct macc *a, struct input **order, size_t n)
{
    struct reader rd = { PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, order, n, 0, 0,
                         NULL, r->o->threads, false };
    pthread_t th[64];
    struct worker wk[64];
    int started = 0, rc = 0;
    char ferr[600];

    if (rd.nthreads > 64)
        rd.nthreads = 64;
    if (rd.nthreads > 0 && n > 1) {
        rd.nslots = 2 * (size_t)rd.nthreads;
        if ((rd.slots = calloc(rd.nslots, sizeof *rd.slots)))
            for (; started < rd.nthreads; started++) {
                wk[started] = (struct worker){ &rd, started };
                if (pthread_create(&th[started], NULL, read_ahead, &wk[started]) != 0)
                    break;
            }
        if (started < rd.nthreads) { /* all or none: each reads its own share */
            pthread_mutex_lock(&rd.mu);
            rd.stop = true;
            pthread_cond_broadcast(&rd.cv);
            pthread_mutex_unlock(&rd.mu);
            for (int t = 0; t < started; t++)
                pthread_join(th[t], NULL);
            for (size_t s = 0; rd.slots && s < rd.nslots; s++)
                if (rd.slots[s].ready && rd.slots[s].rc == 0)
                    model_free(&rd.slots[s].m);
            started = 0;
            rd.stop = false;
        }
    }
    for (size_t i = 0; i < n && rc == 0; i++) {
        struct model m;
        char err[512];
        int got;
        if (r->o->deadline_ms && now_ms() > r->o->deadline_ms) {
            for (size_t j = i; j < n && rc == 0; j++)
                rc = refuse(r, order[j], "not merged: the time for the merge ran out");
            break;
        }
        if (started) {
            struct slot *s = &rd.slots[i % rd.nslots];
            pthread_mutex_lock(&rd.mu);
            while (!(s->ready && s->idx == i))
                pthread_cond_wait(&rd.cv, &rd.mu);
            m = s->m;
            got = s->rc;
            memcpy(err, s->err, sizeof err);
            s->ready = false;
            rd.consumed = i + 1;
            pthread_cond_broadcast(&rd.cv);
            pthread_mutex_unlock(&rd.mu);
        } else {
            got = merge_in_report(order[i], &r->buf, &r->cap, &m, err, sizeof err);
        }
        if (got != 0) {
            rc = refuse(r, order[i], err);
            continue;
        }
        if (m.merged) {
            rc = refuse(r, order[i], "is a merged report; merge the per-rank reports it was "
                                     "made from instead");
        } else if (m.warmup != (long)r->first->warmup ||
                   strcmp(m.timing_method, r->first->timing) != 0) {
            rc = refuse(r, order[i], "changed since it was first read: not merged");
        } else if (macc_fold(a, &m, a->folded, order[i]->path, ferr, sizeof ferr) != 0) {
            if (a->out->oom || strcmp(ferr, "out of memory") == 0) {
                snprintf(r->err, r->errsz, "out of memory");
                rc = -1;
            } else {
                snprintf(r->err, r->errsz, "%s", ferr);
                rc = -1;
            }
        }
        model_free(&m);
    }
    if (started) {
        pthread_mutex_lock(&rd.mu);
        rd.stop = true;
        pthread_cond_broadcast(&rd.cv);
        pthread_mutex_unlock(&rd.mu);
        for (int t = 0; t < started; t++)
            pthread_join(th[t], NULL);
        for (size_t s = 0; s < rd.nslots; s++)
            if (rd.slots[s].ready && rd.slots[s].rc == 0)
                model_free(&rd.slots[s].m);
    }
    free(rd.slots);
    return rc;
}

int merge_files(const char *const *paths, size_t n, const struct merge_opts *opts,
                struct model *m, char *err, size_t errsz)
{
    struct run r = { opts, calloc(n ? n : 1, sizeof *r.in), NULL, n, err, errsz, NULL, 0 };
    struct input **order = calloc(n ? n : 1, sizeof *order);
    struct macc a;
    char *stdin_data = NULL;
    size_t k = 0, stdin_len = 0;
    int rc = -1;

    memset(m, 0, sizeof *m);
    memset(&a, 0, sizeof a);
    err[0] = '\0';
    if (!r.in || !order) {
        snprintf(err, errsz, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < n; i++) {
        r.in[i] = (struct input){ .path = paths[i], .given = i, .rank = -1, .pid = -1 };
        if (strcmp(paths[i], "-") != 0)
            continue;
        if (!stdin_data && merge_in_stdin(&stdin_data, &stdin_len) != 0) {
            snprintf(err, errsz, "-: cannot read standard input: %s", strerror(errno));
            goto out;
        }
        r.in[i].data = stdin_data;
        r.in[i].len = stdin_len;
    }
    if (first_look(&r) != 0 || same_reports(&r) != 0 || same_kind(&r) != 0)
        goto out;
    for (size_t i = 0; i < n; i++)
        if (!r.in[i].why && !r.in[i].empty)
            order[k++] = &r.in[i];
    if (!k) {
        bool any_empty = false;
        for (size_t i = 0; i < n; i++)
            any_empty = any_empty || r.in[i].empty;
        snprintf(err, errsz, any_empty ? "every input is an empty report (no CUDA launches): "
                                         "nothing to merge"
                                       : "no report could be read: nothing to merge");
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (r.in[i].empty) {
            char pid[32] = "None";
            if (r.in[i].pid >= 0)
                snprintf(pid, sizeof pid, "%ld", r.in[i].pid);
            say(&r, r.in[i].path, "skipped, an empty report (no CUDA launches in pid %s)", pid);
        }
    qsort(order, k, sizeof *order, cmp_inputs);
    int init = macc_init(&a, m, k, opts, err, errsz);
    if (init != 0) {
        if (init == -1)
            snprintf(err, errsz, "out of memory");
        goto out;
    }
    /* Those left out on the first look, in the order given. */
    for (size_t i = 0; i < n; i++)
        if (r.in[i].why && macc_unread(&a, r.in[i].path, r.in[i].why) != 0) {
            snprintf(err, errsz, "out of memory");
            goto out;
        }
    if (fold_all(&r, &a, order, k) != 0)
        goto out;
    for (size_t i = 0; i < k; i++) /* and those left out on the way */
        if (order[i]->why && macc_unread(&a, order[i]->path, order[i]->why) != 0) {
            snprintf(err, errsz, "out of memory");
            goto out;
        }
    if (!a.folded) {
        snprintf(err, errsz, "no report could be read: nothing to merge");
        goto out;
    }
    if (macc_finish(&a) != 0) {
        snprintf(err, errsz, "out of memory");
        goto out;
    }
    rc = 0;
out:
    macc_free(&a);
    if (rc != 0)
        model_free(m);
    for (size_t i = 0; r.in && i < n; i++) {
        free(r.in[i].host);
        free(r.in[i].start);
        free(r.in[i].timing);
        free(r.in[i].why);
    }
    free(r.in);
    free(order);
    free(r.buf);
    free(stdin_data);
    return rc;
}
