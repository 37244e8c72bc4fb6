/* read_values.c - the JSON report reader's typed fields and blocks of statistics (read.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "read.h"

#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

bool rd_fail(struct rd *r, const char *where, const char *fmt, ...)
{
    va_list ap;
    char what[200];

    if (r->failed)
        return false;
    r->failed = true;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(r->err, r->errsz, "not a ktime report: %s %s", *where ? where : "the top level",
             what);
    return false;
}

const char *rd_at(char *buf, size_t size, const char *where, const char *key)
{
    snprintf(buf, size, "%s%s%s", where, *where ? "." : "", key);
    return buf;
}

const char *rd_index(char *buf, size_t size, const char *where, size_t i)
{
    snprintf(buf, size, "%s[%zu]", where, i);
    return buf;
}

bool rd_bad(struct rd *r, const char *where, const char *key, const struct jv *v,
            const char *want)
{
    char at[160], val[64];

    if (v && v->type == JV_STRING)
        snprintf(val, sizeof val, "'%.40s'", v->s);
    else if (v && v->type == JV_NUMBER)
        snprintf(val, sizeof val, "%.17g", v->num);
    else if (v && v->type == JV_BOOL)
        snprintf(val, sizeof val, "%s", v->b ? "true" : "false");
    else
        snprintf(val, sizeof val, "%s", jv_type_name(v));
    return rd_fail(r, rd_at(at, sizeof at, where, key), "is %s, not %s", val, want);
}

bool rd_object(struct rd *r, const struct jv *v, const char *where)
{
    if (v && v->type == JV_OBJECT)
        return true;
    return rd_fail(r, where, "is %s, not an object", jv_type_name(v));
}

const struct jv *rd_get(struct rd *r, const struct jv *o, const char *where, const char *key,
                        enum jv_type type, bool null_ok, bool required)
{
    static const char *const want[] = { "null", "a boolean", "a number", "a string", "a list",
                                        "an object" };
    const struct jv *v = jv_get(o, key);

    if (r->failed)
        return NULL;
    if (!v) {
        if (required)
            rd_fail(r, where, "has no '%s'", key);
        return NULL;
    }
    if (v->type == type || (null_ok && v->type == JV_NULL))
        return v;
    rd_bad(r, where, key, v, want[type]);
    return NULL;
}

const char *rd_key(const struct jv *o, const char *key, const char *earlier)
{
    return !jv_get(o, key) && jv_get(o, earlier) ? earlier : key;
}

bool rd_count(struct rd *r, const struct jv *o, const char *where, const char *key,
              bool required, uint64_t dflt, uint64_t *out)
{
    const struct jv *v = jv_get(o, key);

    *out = dflt;
    if (r->failed)
        return false;
    if (!v)
        return required ? rd_fail(r, where, "has no '%s'", key) : true;
    if (v->type != JV_NUMBER || !v->is_count)
        return rd_bad(r, where, key, v, "a count");
    *out = v->count;
    return true;
}

bool rd_count_to(struct rd *r, const struct jv *o, const char *where, const char *key,
                 bool required, uint64_t max, uint64_t *out)
{
    char at[160];

    if (!rd_count(r, o, where, key, required, 0, out))
        return false;
    if (*out > max)
        return rd_fail(r, rd_at(at, sizeof at, where, key), "is %llu, more than %llu",
                       (unsigned long long)*out, (unsigned long long)max);
    return true;
}

bool rd_long(struct rd *r, const struct jv *o, const char *where, const char *key, long *out)
{
    const struct jv *v = jv_get(o, key);

    *out = -1;
    if (r->failed)
        return false;
    if (!v || v->type == JV_NULL)
        return true;
    if (v->type != JV_NUMBER || !v->is_count || v->count > (uint64_t)LONG_MAX)
        return rd_bad(r, where, key, v, "a count");
    *out = (long)v->count;
    return true;
}

bool rd_num(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            bool null_ok, double dflt, double *out, bool *has)
{
    const struct jv *v = rd_get(r, o, where, key, JV_NUMBER, null_ok, required);

    *out = v && v->type == JV_NUMBER ? v->num : dflt;
    if (has)
        *has = v && v->type == JV_NUMBER;
    return !r->failed;
}

bool rd_bool(struct rd *r, const struct jv *o, const char *where, const char *key, bool dflt,
             bool *out)
{
    const struct jv *v = rd_get(r, o, where, key, JV_BOOL, true, false);

    *out = v && v->type == JV_BOOL ? v->b : dflt;
    return !r->failed;
}

bool rd_str(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            const char *dflt, const char **out)
{
    const struct jv *v = rd_get(r, o, where, key, JV_STRING, !required, required);

    *out = NULL;
    if (r->failed)
        return false;
    if (v && v->type == JV_STRING)
        *out = model_strndup(r->m, v->s, v->len);
    else if (!v && dflt)
        *out = model_strdup(r->m, dflt);
    return !r->m->oom || rd_fail(r, where, "could not be read: out of memory");
}

/* The bytes of hex digits s, or NULL when s is not an even number of hex digits. */
static const char *unhex(struct model *m, const char *s, size_t len)
{
    char *out;

    if (len % 2 || !(out = model_alloc(m, len / 2 + 1)))
        return NULL;
    for (size_t i = 0; i < len; i += 2) {
        unsigned v;
        if (sscanf(s + i, "%2x", &v) != 1 || !strchr("0123456789abcdefABCDEF", s[i]) ||
            !strchr("0123456789abcdefABCDEF", s[i + 1]) || v == 0)
            return NULL;
        out[i / 2] = (char)v;
    }
    return out;
}

bool rd_raw(struct rd *r, const struct jv *o, const char *where, const char *key, bool required,
            const char *dflt, const char **out)
{
    char bkey[64], at[160];
    const struct jv *hex;

    snprintf(bkey, sizeof bkey, "%s_bytes", key);
    if (!rd_str(r, o, where, key, required, dflt, out))
        return false;
    hex = rd_get(r, o, where, bkey, JV_STRING, true, false);
    if (hex && hex->type == JV_STRING) {
        const char *raw = unhex(r->m, hex->s, hex->len);
        if (!raw)
            return rd_fail(r, rd_at(at, sizeof at, where, bkey), "is not the hex digits of a name");
        *out = raw;
    }
    return !r->failed;
}

bool rd_strings(struct rd *r, const struct jv *o, const char *where, const char *key,
                const char *bytes_key, const char ***out, size_t *n)
{
    const struct jv *v = rd_get(r, o, where, key, JV_ARRAY, true, false);
    const struct jv *b = bytes_key ? rd_get(r, o, where, bytes_key, JV_ARRAY, true, false) : NULL;
    char list[160], at[192];

    *out = NULL;
    *n = 0;
    if (b && b->type == JV_ARRAY) {
        v = b;
        key = bytes_key;
    }
    if (!v || v->type != JV_ARRAY)
        return !r->failed;
    if (v->n && !(*out = model_alloc(r->m, v->n * sizeof **out)))
        return rd_fail(r, where, "could not be read: out of memory");
    for (size_t i = 0; i < v->n; i++) {
        const struct jv *e = &v->items[i];
        rd_index(at, sizeof at, rd_at(list, sizeof list, where, key), i);
        if (e->type != JV_STRING)
            return rd_fail(r, at, "is %s, not a string", jv_type_name(e));
        (*out)[i] = v == b ? unhex(r->m, e->s, e->len) : model_strndup(r->m, e->s, e->len);
        if (!(*out)[i])
            return rd_fail(r, at, "is not the hex digits of a string");
    }
    *n = v->n;
    return true;
}

bool rd_hist(struct rd *r, const struct jv *o, const char *where, struct rm_hist **out)
{
    const struct jv *h = rd_get(r, o, where, "histogram", JV_OBJECT, true, false), *bs;
    char at[160], bat[192];
    struct rm_hist *hist;

    *out = NULL;
    if (!h || h->type != JV_OBJECT)
        return !r->failed;
    rd_at(at, sizeof at, where, "histogram");
    if (!(hist = model_alloc(r->m, sizeof *hist)))
        return rd_fail(r, at, "could not be read: out of memory");
    if (!rd_num(r, h, at, "gamma", false, false, 1.02, &hist->gamma, NULL) ||
        !rd_num(r, h, at, "first_edge_us", false, false, 0.05, &hist->first_edge, NULL) ||
        !(bs = rd_get(r, h, at, "buckets", JV_ARRAY, false, true)))
        return false;
    rd_at(bat, sizeof bat, at, "buckets");
    if (bs->n && !(hist->b = model_alloc(r->m, bs->n * sizeof *hist->b)))
        return rd_fail(r, at, "could not be read: out of memory");
    for (size_t i = 0; i < bs->n; i++) {
        const struct jv *e = &bs->items[i];
        if (e->type != JV_ARRAY || e->n != 3 || e->items[0].type != JV_NUMBER ||
            !e->items[0].is_count || e->items[1].type != JV_NUMBER ||
            e->items[2].type != JV_NUMBER || !e->items[2].is_count ||
            e->items[0].count > INT64_MAX)
            return rd_fail(r, bat, "holds %s, not [bucket, edge, count]", jv_type_name(e));
        hist->b[i].i = (int64_t)e->items[0].count;
        hist->b[i].edge = e->items[1].num;
        hist->b[i].count = e->items[2].count;
    }
    hist->n = bs->n;
    *out = hist;
    return true;
}

bool rd_stats(struct rd *r, const struct jv *o, const char *where, struct rm_stats *s,
              double whole_ms)
{
    bool has, n;

    if (!rd_count(r, o, where, "timed", true, 0, &s->timed))
        return false;
    n = s->timed > 0;
    /* The sums a row with samples must have; the rest is derived when absent. */
    for (int i = RS_MIN; i <= RS_M2; i++)
        if (i != RS_STDDEV && !rd_num(r, o, where, rm_stat_key[i], n, false, 0, &s->v[i], NULL))
            return false;
    if (!rd_num(r, o, where, rm_stat_key[RS_MEAN], false, false, 0, &s->v[RS_MEAN], &has))
        return false;
    if (!has && n)
        s->v[RS_MEAN] = s->v[RS_SUM] / (double)s->timed;
    if (!rd_num(r, o, where, rm_stat_key[RS_STDDEV], false, true, 0, &s->v[RS_STDDEV], &has))
        return false;
    if (!has)
        s->v[RS_STDDEV] = s->timed >= 2 && s->v[RS_M2] > 0
                              ? sqrt(s->v[RS_M2] / (double)(s->timed - 1)) : 0.0;
    if (!rd_num(r, o, where, rm_stat_key[RS_TOTAL], false, false, s->v[RS_SUM] / 1000.0,
                &s->v[RS_TOTAL], NULL) ||
        !rd_num(r, o, where, rm_stat_key[RS_PERCENT], false, false, 0, &s->v[RS_PERCENT], &has))
        return false;
    if (!has && whole_ms > 0)
        s->v[RS_PERCENT] = 100.0 * s->v[RS_SUM] / (whole_ms * 1000.0);
    /* What is derived from the sums stays a number a report can hold. */
    for (int i = 0; i < RM_NSTATS; i++)
        if (!isfinite(s->v[i]))
            s->v[i] = 0.0;
    for (int i = RS_P50; i <= RS_P99; i++)
        if (!rd_num(r, o, where, rm_stat_key[i], false, true, -1, &s->v[i], NULL))
            return false;
    return rd_hist(r, o, where, &s->hist);
}
