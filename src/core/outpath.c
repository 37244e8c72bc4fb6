/* outpath.c - expands the placeholders of KTIME_OUTPUT (%p, %h, %r, %l, %q{NAME}, %%). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "outpath.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"

#define NAME_MAX_LEN 255

/* The result so far: what fits is copied, len counts everything, fitting or not. */
struct sink {
    char *out;
    size_t size;
    size_t len;
};

static void put(struct sink *s, const char *p, size_t n)
{
    if (s->len < s->size) {
        size_t room = s->size - 1 - s->len;
        memcpy(s->out + s->len, p, n < room ? n : room);
    }
    s->len += n;
}

/* Keeps n bytes of the template as written; the first such spot per call is warned of,
 * naming var, the setting the template came from. */
static void keep(struct sink *s, const char *p, size_t n, const char *var, const char *tmpl,
                 const char *why, bool *warned)
{
    if (!*warned) {
        /* The template last: a long one is cut short, not the reason. */
        log_warn("%s: '%.*s' %s (placeholders are %%p, %%h, %%r, %%l, %%q{NAME}, %%%%); kept "
                 "as written in '%s'", var, (int)n, p, why, tmpl);
        *warned = true;
    }
    put(s, p, n);
}

static const char *const rank_vars[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                         "SLURM_PROCID", "MV2_COMM_WORLD_RANK", NULL };
static const char *const local_vars[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                          "MPI_LOCALRANKID", "SLURM_LOCALID",
                                          "MV2_COMM_WORLD_LOCAL_RANK", NULL };
static const char *const size_vars[] = { "WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE",
                                         "SLURM_NTASKS", "MV2_COMM_WORLD_SIZE", NULL };

/* The first of vars that is 1 to 9 decimal digits, or NULL. */
static const char *first_number(const char *const *vars, const char *(*getenv_fn)(const char *))
{
    for (int i = 0; vars[i]; i++) {
        const char *v = getenv_fn(vars[i]);
        size_t n = v ? strspn(v, "0123456789") : 0;
        if (n >= 1 && n <= 9 && v[n] == '\0')
            return v;
    }
    return NULL;
}

const char *outpath_rank(const char *(*getenv_fn)(const char *name))
{
    return first_number(rank_vars, getenv_fn);
}

const char *outpath_local_rank(const char *(*getenv_fn)(const char *name))
{
    return first_number(local_vars, getenv_fn);
}

long outpath_world_size(const char *(*getenv_fn)(const char *name))
{
    const char *v = first_number(size_vars, getenv_fn);
    return v ? strtol(v, NULL, 10) : 0;
}

/* outpath_expand, its warnings naming var. */
static int expand(const char *var, const char *tmpl, long pid, const char *host, char *out,
                  size_t outsz, const char *(*getenv_fn)(const char *name))
{
    struct sink s = { .out = out, .size = outsz, .len = 0 };
    bool warned = false;
    const char *p = tmpl;

    if (!host)
        host = OUTPATH_UNKNOWN_HOST;
    while (*p) {
        const char *pct = strchr(p, '%');
        if (!pct) {
            put(&s, p, strlen(p));
            break;
        }
        put(&s, p, (size_t)(pct - p));
        p = pct + 1;
        switch (*p) {
        case '%':
            put(&s, "%", 1);
            p++;
            break;
        case 'p': {
            char num[24];
            int n = snprintf(num, sizeof num, "%ld", pid);
            put(&s, num, (size_t)n);
            p++;
            break;
        }
        case 'h':
            put(&s, host, strlen(host));
            p++;
            break;
        case 'r':
        case 'l': {
            const char *v = *p == 'r' ? outpath_rank(getenv_fn) : outpath_local_rank(getenv_fn);
            if (!v)
                v = OUTPATH_NO_RANK;
            put(&s, v, strlen(v));
            p++;
            break;
        }
        case 'q': {
            const char *name = p + 2;
            const char *end = p[1] == '{' ? strchr(name, '}') : NULL;
            char buf[NAME_MAX_LEN + 1];
            const char *val;
            size_t n;

            if (p[1] != '{') {
                keep(&s, pct, 2, var, tmpl, "is not a placeholder", &warned);
                p++;
                break;
            }
            if (!end) {
                keep(&s, pct, 3, var, tmpl, "has no closing '}'", &warned);
                p += 2;
                break;
            }
            n = (size_t)(end - name);
            if (n == 0 || n > NAME_MAX_LEN) {
                keep(&s, pct, (size_t)(end + 1 - pct), var, tmpl,
                     n == 0 ? "names no variable" : "names a variable longer than 255 bytes",
                     &warned);
                p = end + 1;
                break;
            }
            memcpy(buf, name, n);
            buf[n] = '\0';
            val = getenv_fn(buf);
            if (!val) {
                log_warn("%s: %%q{%s}: environment variable %s is not set; using an empty "
                         "string", var, buf, buf);
                val = "";
            }
            put(&s, val, strlen(val));
            p = end + 1;
            break;
        }
        case '\0':
            keep(&s, pct, 1, var, tmpl, "ends the name", &warned);
            break;
        default:
            keep(&s, pct, 2, var, tmpl, "is not a placeholder", &warned);
            p++;
            break;
        }
    }
    if (outsz > 0)
        out[s.len < outsz ? s.len : outsz - 1] = '\0';
    return s.len < outsz ? 0 : -1;
}

int outpath_expand(const char *tmpl, long pid, const char *host, char *out, size_t outsz,
                   const char *(*getenv_fn)(const char *name))
{
    return expand("KTIME_OUTPUT", tmpl, pid, host, out, outsz, getenv_fn);
}

bool outpath_per_process(const char *tmpl)
{
    for (const char *p = tmpl; (p = strchr(p, '%')); p++) {
        p++;
        if (*p == '\0')
            break;
        if (*p == 'p' || *p == 'r' || *p == 'l')
            return true;
        /* Only a well-formed %q{NAME}, as outpath_expand expands it. */
        if (*p == 'q' && p[1] == '{' && p[2] != '}') {
            const char *end = strchr(p + 2, '}');
            if (end && (size_t)(end - (p + 2)) <= NAME_MAX_LEN)
                return true;
        }
        /* "%%" and anything else are one literal: go on after it. */
    }
    return false;
}

int outpath_in_dir(const char *tmpl, const char *dir, char *out, size_t outsz)
{
    struct sink s = { .out = out, .size = outsz, .len = 0 };

    if (tmpl[0] != '/' && dir && *dir) {
        for (const char *p = dir; *p; p++) {
            put(&s, p, 1);
            if (*p == '%')
                put(&s, "%", 1);
        }
        if (s.len == 0 || dir[strlen(dir) - 1] != '/')
            put(&s, "/", 1);
    }
    put(&s, tmpl, strlen(tmpl));
    if (outsz > 0)
        out[s.len < outsz ? s.len : outsz - 1] = '\0';
    return s.len < outsz ? 0 : -1;
}

const char *outpath_job(char *buf, size_t size, const char *(*getenv_fn)(const char *name))
{
    static const char *const vars[] = { "TORCHELASTIC_RUN_ID", "SLURM_JOB_ID", "PMIX_NAMESPACE",
                                        "OMPI_MCA_ess_base_jobid", NULL };

    for (int i = 0; vars[i] && size; i++) {
        const char *v = getenv_fn(vars[i]), *step;
        if (!v || !*v)
            continue;
        if (strcmp(vars[i], "SLURM_JOB_ID") == 0 && (step = getenv_fn("SLURM_STEP_ID")) && *step)
            snprintf(buf, size, "%s.%s", v, step);
        else
            snprintf(buf, size, "%s", v);
        return buf;
    }
    return NULL;
}

/* The length of the placeholder at p (on its '%'), 0 when it is none (kept as written). */
static size_t placeholder(const char *p)
{
    if (p[1] == 'p' || p[1] == 'h' || p[1] == 'r' || p[1] == 'l' || p[1] == '%')
        return 2;
    if (p[1] == 'q' && p[2] == '{' && p[3] != '}') {
        const char *end = strchr(p + 3, '}');
        if (end && (size_t)(end - (p + 3)) <= NAME_MAX_LEN)
            return (size_t)(end + 1 - p);
    }
    return 0;
}

bool outpath_names_rank(const char *tmpl)
{
    for (const char *p = tmpl; (p = strchr(p, '%'));) {
        size_t n = placeholder(p);
        if (n == 2 && p[1] == 'r')
            return true;
        p += n ? n : 1;
    }
    return false;
}

int outpath_with_rank(const char *tmpl, const char *rank, char *out, size_t outsz)
{
    struct sink s = { .out = out, .size = outsz, .len = 0 };

    for (const char *p = tmpl; *p;) {
        size_t n = *p == '%' ? placeholder(p) : 0;
        if (n == 2 && p[1] == 'r') {
            for (const char *q = rank; *q; q++) {
                put(&s, q, 1);
                if (*q == '%')
                    put(&s, "%", 1);
            }
        } else {
            put(&s, p, n ? n : 1);
        }
        p += n ? n : 1;
    }
    if (outsz > 0)
        out[s.len < outsz ? s.len : outsz - 1] = '\0';
    return s.len < outsz ? 0 : -1;
}

int outpath_glob(const char *tmpl, char *out, size_t outsz)
{
    struct sink s = { .out = out, .size = outsz, .len = 0 };

    for (const char *p = tmpl; *p;) {
        size_t n = *p == '%' ? placeholder(p) : 0;
        if (n == 2 && p[1] == '%') {
            put(&s, "%", 1);
        } else if (n) {
            put(&s, "*", 1);
        } else {
            if (strchr("*?[\\", *p))
                put(&s, "\\", 1);
            put(&s, p, 1);
            n = 1;
        }
        p += n;
    }
    if (outsz > 0)
        out[s.len < outsz ? s.len : outsz - 1] = '\0';
    return s.len < outsz ? 0 : -1;
}

const char *outpath_hostname(char *buf, size_t n)
{
    if (n == 0)
        return OUTPATH_UNKNOWN_HOST;
    if (gethostname(buf, n) != 0 || buf[0] == '\0') {
        snprintf(buf, n, "%s", OUTPATH_UNKNOWN_HOST);
        return buf;
    }
    buf[n - 1] = '\0'; /* POSIX leaves a truncated name unterminated */
    return buf;
}

int outpath_resolve(const char *var, const char *tmpl, const char *dir, long pid,
                    const char *host, char *out, size_t outsz,
                    const char *(*getenv_fn)(const char *name))
{
    char anchored[4096];

    if (outpath_in_dir(tmpl, dir, anchored, sizeof anchored) != 0) {
        if (outsz)
            out[0] = '\0';
        return -1;
    }
    return expand(var, anchored, pid, host, out, outsz, getenv_fn);
}
