/* merge_in.c - the merge's inputs (merge_acc.h, struct input): a report's bytes, from its file
 * or from standard input (read once, for every "-" given); its header skimmed from its first
 * bytes, or taken from it read whole; the same report given twice. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge_acc.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jsonin.h"
#include "reader.h"

/* Reads path (at most max bytes when max > 0) into *buf (room *cap, grown), *len its bytes
 * and *whole whether that is the whole file. Returns 0, or -1 with errno. */
static int read_path(const char *path, size_t max, char **buf, size_t *cap, size_t *len,
                     bool *whole)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
    struct stat st;
    size_t want, n = 0;

    if (fd < 0)
        return -1;
    if (fstat(fd, &st) != 0 || S_ISDIR(st.st_mode)) {
        int e = S_ISDIR(st.st_mode) ? EISDIR : errno;
        close(fd);
        errno = e;
        return -1;
    }
    want = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 1 << 16;
    if (max && want > max)
        want = max;
    for (;;) {
        if (n + 1 >= *cap || want > *cap) {
            size_t c = *cap ? *cap : 1 << 16;
            while (c < want || c <= n + 1)
                c *= 2;
            char *more = realloc(*buf, c);
            if (!more) {
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            *buf = more;
            *cap = c;
        }
        size_t room = (max ? (max < *cap ? max : *cap) : *cap) - n;
        if (room == 0)
            break;
        ssize_t got = read(fd, *buf + n, room);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            close(fd);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *whole = !max || n < max;
    if (max && n == max) { /* exactly max: is there more? */
        char c;
        *whole = read(fd, &c, 1) == 0;
    }
    close(fd);
    *len = n;
    return 0;
}

int merge_in_read(const struct input *in, size_t max, char **buf, size_t *cap, size_t *len,
                  bool *whole)
{
    if (!in->data)
        return read_path(in->path, max, buf, cap, len, whole);
    size_t n = max && max < in->len ? max : in->len;
    if (n + 1 > *cap) {
        char *more = realloc(*buf, n + 1);
        if (!more) {
            errno = ENOMEM;
            return -1;
        }
        *buf = more;
        *cap = n + 1;
    }
    if (n)
        memcpy(*buf, in->data, n);
    *len = n;
    *whole = n == in->len;
    return 0;
}

bool merge_in_blank(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
            return false;
    return true;
}

int merge_in_skim(struct input *in, const char *text, size_t len, bool whole)
{
    struct jskim k;
    const char *key, *at, *totals = NULL;
    size_t totals_len = 0, nk = 0, nm = 0;
    struct jv v;
    int rc, seen = 0;
    bool kernels = false;
    uint64_t launches = 0;

    if (json_skim_begin(&k, text, len) != 0) {
        json_skim_end(&k);
        return -1;
    }
    while ((rc = json_skim_next(&k, &key, &v, &at)) == 1) {
        if (strcmp(key, "schema_version") == 0 && v.is_count) {
            in->schema = v.count, seen |= 1;
        } else if (strcmp(key, "warmup") == 0 && v.is_count) {
            in->warmup = v.count, seen |= 2;
        } else if (strcmp(key, "timing_method") == 0 && v.type == JV_STRING) {
            free(in->timing);
            in->timing = strdup(v.s), seen |= 4;
        } else if (strcmp(key, "rank") == 0) {
            in->rank = v.is_count && v.count <= 1000000000 ? (long)v.count : -1, seen |= 8;
        } else if (strcmp(key, "pid") == 0) {
            in->pid = v.is_count && v.count <= 1000000000 ? (long)v.count : -1, seen |= 16;
        } else if (strcmp(key, "host") == 0) {
            free(in->host);
            in->host = v.type == JV_STRING ? strdup(v.s) : NULL, seen |= 32;
        } else if (strcmp(key, "start_time") == 0) {
            free(in->start);
            in->start = v.type == JV_STRING ? strdup(v.s) : NULL, seen |= 64;
        } else if (strcmp(key, "kernels") == 0 && v.type == JV_ARRAY) {
            kernels = true, nk = v.n;
        } else if (strcmp(key, "memops") == 0 && v.type == JV_ARRAY) {
            nm = v.n;
        } else if (strcmp(key, "totals") == 0 && v.type == JV_OBJECT) {
            totals = at;
            if ((rc = json_skim_span(&k, &totals_len)) != 0)
                break;
        } else if (strcmp(key, "merged_from") == 0) {
            in->merged = true;
        }
        /* A report with kernels is no empty one: the rest is not needed. */
        if (kernels && nk && seen == 127)
            break;
    }
    bool cut = rc < 0 && k.doc.truncated && !whole;
    rc = rc < 0 ? -1 : rc;
    json_skim_end(&k);
    if (cut)
        return 1;
    if (rc < 0 || !kernels || !(seen & 7))
        return -1;
    if (totals && !nk) {
        struct jdoc d;
        if (json_parse(&d, totals, totals_len) == 0) {
            const struct jv *l = jv_get(&d.root, "launches_seen");
            launches = l && l->is_count ? l->count : 0;
        }
        json_free(&d);
    }
    in->empty = !in->merged && !nk && !nm && !launches;
    return 0;
}

int merge_in_report(const struct input *in, char **buf, size_t *cap, struct model *m,
                    char *err, size_t errsz)
{
    size_t len;
    bool whole;

    memset(m, 0, sizeof *m);
    if (merge_in_read(in, 0, buf, cap, &len, &whole) != 0) {
        snprintf(err, errsz, "cannot read it: %s", strerror(errno));
        return -1;
    }
    if (merge_in_blank(*buf, len)) {
        snprintf(err, errsz, "empty file, not a ktime report");
        return -1;
    }
    return model_read_data(m, *buf, len, err, errsz);
}

void merge_in_header(struct input *in, const struct model *m)
{
    in->schema = (uint64_t)m->schema;
    in->warmup = (uint64_t)m->warmup;
    in->timing = strdup(m->timing_method);
    in->rank = m->rank;
    in->pid = m->has_pid ? m->pid : -1;
    in->host = m->host ? strdup(m->host) : NULL;
    in->start = m->start_time ? strdup(m->start_time) : NULL;
    in->merged = m->merged != NULL;
    in->empty = !in->merged && !m->nrows && !m->nmemops && !m->totals.n[RT_LAUNCHES];
}

int merge_in_stdin(char **data, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *b = malloc(cap);

    if (!b)
        return -1;
    for (;;) {
        if (n == cap) {
            char *more = realloc(b, cap *= 2);
            if (!more) {
                free(b);
                errno = ENOMEM;
                return -1;
            }
            b = more;
        }
        ssize_t got = read(STDIN_FILENO, b + n, cap - n);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            int e = errno;
            free(b);
            errno = e;
            return -1;
        }
        if (got == 0)
            break;
        n += (size_t)got;
    }
    *data = b;
    *len = n;
    return 0;
}

/* ---- the same report twice ---- */

struct seen {
    UT_hash_handle hh;
    char *key;
    const struct input *in;
};

/* in's key in k (room ksz): by file (device and inode, or "-") when file, else by process
 * (host, pid and start time). Returns its length, or 0 when it has none. */
static size_t same_key(const struct input *in, bool file, char *k, size_t ksz)
{
    int n;

    if (file) {
        if (in->data)
            n = snprintf(k, ksz, "f-");
        else if (in->has_id)
            n = snprintf(k, ksz, "f%llu:%llu", (unsigned long long)in->dev,
                         (unsigned long long)in->ino);
        else
            return 0;
    } else {
        if (!in->host || in->pid < 0 || !in->start)
            return 0;
        n = snprintf(k, ksz, "p%ld%c%s%c%s", in->pid, 0, in->host, 0, in->start);
    }
    return n > 0 && (size_t)n < ksz ? (size_t)n : 0;
}

int merge_in_same(const struct input *in, size_t n, const struct input **a,
                  const struct input **b)
{
    struct seen *hash = NULL, *e, *tmp;
    char k[1024];
    int rc = 0;

    for (size_t i = 0; i < n && rc == 0; i++) {
        const struct input *prior = NULL;
        if (in[i].why)
            continue;
        for (int file = 1; file >= 0 && !prior; file--) {
            size_t len = same_key(&in[i], file, k, sizeof k);
            if (!len)
                continue;
            HASH_FIND(hh, hash, k, len, e);
            if (e)
                prior = e->in;
        }
        if (prior) {
            *a = prior;
            *b = &in[i];
            rc = 1;
            break;
        }
        for (int file = 1; file >= 0; file--) {
            size_t len = same_key(&in[i], file, k, sizeof k);
            if (!len)
                continue;
            HASH_FIND(hh, hash, k, len, e);
            if (e)
                continue;
            if (!(e = calloc(1, sizeof *e)) || !(e->key = malloc(len))) {
                free(e);
                rc = -1;
                break;
            }
            memcpy(e->key, k, len);
            e->in = &in[i];
            HASH_ADD_KEYPTR(hh, hash, e->key, len, e);
        }
    }
    HASH_ITER(hh, hash, e, tmp) {
        HASH_DEL(hash, e);
        free(e->key);
        free(e);
    }
    return rc;
}
