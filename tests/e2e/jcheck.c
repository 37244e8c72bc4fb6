/* jcheck.c - a small JSON validator and query/assert tool for the end-to-end tests.
 *
 * usage:
 *   jcheck FILE                      exit 0 if FILE holds exactly one valid JSON value (its
 *                                    strings UTF-8, as RFC 8259 asks)
 *   jcheck FILE QUERY                print each value QUERY matches, one per line
 *   jcheck FILE QUERY OP VALUE [TOL] assert: exit 0 if true, 1 (with a message) if false
 *
 * QUERY: a path of keys and selectors, optionally followed by "|func":
 *   totals.timed                     object members
 *   kernels[0].name                  array index
 *   kernels[].calls                  every element
 *   kernels[mangled=k_small].timed   elements whose member equals the text (string, number
 *                                    or true/false/null compared as written); the text may
 *                                    be quoted, kernels[name="a]b"], to hold ] or .
 *   .                                the whole document
 *   |len  array length, object member count or string length, of each match
 *   |sum  sum of all matched numbers      |count  number of matches
 *   |min  |max  of all matched numbers    |keys   member names of each matched object
 *   |type the JSON type of each match
 * Printing: strings unquoted and unescaped, numbers as written, objects/arrays as compact JSON.
 * OP: == != (numeric when both sides are numbers, else text), < <= > >= (numeric),
 *     ~ (numeric, |got - VALUE| <= TOL; TOL defaults to 1e-9 + 1e-6 * |VALUE|),
 *     has (the text contains VALUE). An assertion needs exactly one match.
 * Exit status: 0 ok, 1 assertion false, 2 usage / unreadable / invalid JSON, 3 no match.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum jt { J_NULL, J_FALSE, J_TRUE, J_NUM, J_STR, J_ARR, J_OBJ };

struct jv {
    enum jt t;
    char *s;          /* J_STR: unescaped text (NUL-terminated, may hold NULs: see len) */
    size_t len;       /* J_STR length; J_NUM: length of the token */
    char *raw;        /* J_NUM: the token as written */
    double num;
    size_t n;         /* J_ARR / J_OBJ: element count */
    struct jv **v;
    char **k;         /* J_OBJ member names */
};

static const char *g_p, *g_end, *g_start;
static const char *g_err;

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (!p) {
        fprintf(stderr, "jcheck: out of memory\n");
        exit(2);
    }
    return p;
}

static void *xrealloc(void *p, size_t n)
{
    p = realloc(p, n ? n : 1);
    if (!p) {
        fprintf(stderr, "jcheck: out of memory\n");
        exit(2);
    }
    return p;
}

static void ws(void)
{
    while (g_p < g_end && (*g_p == ' ' || *g_p == '\t' || *g_p == '\n' || *g_p == '\r'))
        g_p++;
}

static struct jv *newv(enum jt t)
{
    struct jv *v = xmalloc(sizeof *v);
    memset(v, 0, sizeof *v);
    v->t = t;
    return v;
}

static int hexval(int c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int hex4(unsigned *out)
{
    unsigned v = 0;
    int i;
    if (g_end - g_p < 4)
        return -1;
    for (i = 0; i < 4; i++) {
        int h = hexval((unsigned char)g_p[i]);
        if (h < 0)
            return -1;
        v = v * 16 + (unsigned)h;
    }
    g_p += 4;
    *out = v;
    return 0;
}

/* The length of the well-formed UTF-8 sequence at p (before end), or 0: JSON text is UTF-8
 * (RFC 8259, section 8.1), so a string holding anything else is invalid. */
static size_t utf8_len(const unsigned char *p, const unsigned char *end)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n = p[0] < 0x80 ? 1 : p[0] >= 0xC2 && p[0] <= 0xDF ? 2
             : p[0] >= 0xE0 && p[0] <= 0xEF ? 3 : p[0] >= 0xF0 && p[0] <= 0xF4 ? 4 : 0;

    if (n < 2)
        return n;
    if ((size_t)(end - p) < n)
        return 0;
    if (p[0] == 0xE0 || p[0] == 0xF0)
        lo = p[0] == 0xE0 ? 0xA0 : 0x90; /* overlong */
    if (p[0] == 0xED || p[0] == 0xF4)
        hi = p[0] == 0xED ? 0x9F : 0x8F; /* surrogates; past U+10FFFF */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

static char *parse_string(size_t *len)
{
    size_t cap = 16, n = 0;
    char *b = xmalloc(cap);
    g_p++; /* opening quote */
    for (;;) {
        unsigned c;
        if (g_p >= g_end) {
            g_err = "unterminated string";
            free(b);
            return NULL;
        }
        c = (unsigned char)*g_p++;
        if (n + 8 > cap) {
            cap *= 2;
            b = xrealloc(b, cap);
        }
        if (c == '"')
            break;
        if (c < 0x20) {
            g_err = "control character in string";
            free(b);
            return NULL;
        }
        if (c >= 0x80) {
            size_t k = utf8_len((const unsigned char *)g_p - 1, (const unsigned char *)g_end);
            if (!k) {
                g_err = "string is not UTF-8";
                free(b);
                return NULL;
            }
            memcpy(b + n, g_p - 1, k);
            n += k;
            g_p += k - 1;
            continue;
        }
        if (c != '\\') {
            b[n++] = (char)c;
            continue;
        }
        if (g_p >= g_end) {
            g_err = "bad escape";
            free(b);
            return NULL;
        }
        c = (unsigned char)*g_p++;
        switch (c) {
        case '"': b[n++] = '"'; break;
        case '\\': b[n++] = '\\'; break;
        case '/': b[n++] = '/'; break;
        case 'b': b[n++] = '\b'; break;
        case 'f': b[n++] = '\f'; break;
        case 'n': b[n++] = '\n'; break;
        case 'r': b[n++] = '\r'; break;
        case 't': b[n++] = '\t'; break;
        case 'u': {
            unsigned u, lo;
            if (hex4(&u)) {
                g_err = "bad \\u escape";
                free(b);
                return NULL;
            }
            if (u >= 0xD800 && u <= 0xDBFF) {
                if (g_end - g_p < 6 || g_p[0] != '\\' || g_p[1] != 'u') {
                    g_err = "lone high surrogate";
                    free(b);
                    return NULL;
                }
                g_p += 2;
                if (hex4(&lo) || lo < 0xDC00 || lo > 0xDFFF) {
                    g_err = "bad low surrogate";
                    free(b);
                    return NULL;
                }
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
            } else if (u >= 0xDC00 && u <= 0xDFFF) {
                g_err = "lone low surrogate";
                free(b);
                return NULL;
            }
            if (u < 0x80) {
                b[n++] = (char)u;
            } else if (u < 0x800) {
                b[n++] = (char)(0xC0 | (u >> 6));
                b[n++] = (char)(0x80 | (u & 0x3F));
            } else if (u < 0x10000) {
                b[n++] = (char)(0xE0 | (u >> 12));
                b[n++] = (char)(0x80 | ((u >> 6) & 0x3F));
                b[n++] = (char)(0x80 | (u & 0x3F));
            } else {
                b[n++] = (char)(0xF0 | (u >> 18));
                b[n++] = (char)(0x80 | ((u >> 12) & 0x3F));
                b[n++] = (char)(0x80 | ((u >> 6) & 0x3F));
                b[n++] = (char)(0x80 | (u & 0x3F));
            }
            break;
        }
        default:
            g_err = "bad escape";
            free(b);
            return NULL;
        }
    }
    b[n] = '\0';
    *len = n;
    return b;
}

static struct jv *parse_value(int depth);

static struct jv *parse_number(void)
{
    const char *s = g_p;
    struct jv *v;
    if (g_p < g_end && *g_p == '-')
        g_p++;
    if (g_p >= g_end || !isdigit((unsigned char)*g_p)) {
        g_err = "bad number";
        return NULL;
    }
    if (*g_p == '0') {
        g_p++;
    } else {
        while (g_p < g_end && isdigit((unsigned char)*g_p))
            g_p++;
    }
    if (g_p < g_end && *g_p == '.') {
        g_p++;
        if (g_p >= g_end || !isdigit((unsigned char)*g_p)) {
            g_err = "bad fraction";
            return NULL;
        }
        while (g_p < g_end && isdigit((unsigned char)*g_p))
            g_p++;
    }
    if (g_p < g_end && (*g_p == 'e' || *g_p == 'E')) {
        g_p++;
        if (g_p < g_end && (*g_p == '+' || *g_p == '-'))
            g_p++;
        if (g_p >= g_end || !isdigit((unsigned char)*g_p)) {
            g_err = "bad exponent";
            return NULL;
        }
        while (g_p < g_end && isdigit((unsigned char)*g_p))
            g_p++;
    }
    v = newv(J_NUM);
    v->len = (size_t)(g_p - s);
    v->raw = xmalloc(v->len + 1);
    memcpy(v->raw, s, v->len);
    v->raw[v->len] = '\0';
    v->num = strtod(v->raw, NULL);
    return v;
}

static struct jv *parse_value(int depth)
{
    struct jv *v;
    if (depth > 256) {
        g_err = "nesting too deep";
        return NULL;
    }
    ws();
    if (g_p >= g_end) {
        g_err = "unexpected end of input";
        return NULL;
    }
    switch (*g_p) {
    case '{':
        g_p++;
        v = newv(J_OBJ);
        ws();
        if (g_p < g_end && *g_p == '}') {
            g_p++;
            return v;
        }
        for (;;) {
            size_t kl;
            char *key;
            struct jv *m;
            ws();
            if (g_p >= g_end || *g_p != '"') {
                g_err = "expected member name";
                return NULL;
            }
            key = parse_string(&kl);
            if (!key)
                return NULL;
            ws();
            if (g_p >= g_end || *g_p != ':') {
                g_err = "expected ':'";
                return NULL;
            }
            g_p++;
            m = parse_value(depth + 1);
            if (!m)
                return NULL;
            v->v = xrealloc(v->v, (v->n + 1) * sizeof *v->v);
            v->k = xrealloc(v->k, (v->n + 1) * sizeof *v->k);
            v->v[v->n] = m;
            v->k[v->n] = key;
            v->n++;
            ws();
            if (g_p < g_end && *g_p == ',') {
                g_p++;
                continue;
            }
            if (g_p < g_end && *g_p == '}') {
                g_p++;
                return v;
            }
            g_err = "expected ',' or '}'";
            return NULL;
        }
    case '[':
        g_p++;
        v = newv(J_ARR);
        ws();
        if (g_p < g_end && *g_p == ']') {
            g_p++;
            return v;
        }
        for (;;) {
            struct jv *m = parse_value(depth + 1);
            if (!m)
                return NULL;
            v->v = xrealloc(v->v, (v->n + 1) * sizeof *v->v);
            v->v[v->n++] = m;
            ws();
            if (g_p < g_end && *g_p == ',') {
                g_p++;
                continue;
            }
            if (g_p < g_end && *g_p == ']') {
                g_p++;
                return v;
            }
            g_err = "expected ',' or ']'";
            return NULL;
        }
    case '"':
        v = newv(J_STR);
        v->s = parse_string(&v->len);
        return v->s ? v : NULL;
    case 't':
        if (g_end - g_p >= 4 && !memcmp(g_p, "true", 4)) {
            g_p += 4;
            return newv(J_TRUE);
        }
        break;
    case 'f':
        if (g_end - g_p >= 5 && !memcmp(g_p, "false", 5)) {
            g_p += 5;
            return newv(J_FALSE);
        }
        break;
    case 'n':
        if (g_end - g_p >= 4 && !memcmp(g_p, "null", 4)) {
            g_p += 4;
            return newv(J_NULL);
        }
        break;
    default:
        if (*g_p == '-' || isdigit((unsigned char)*g_p))
            return parse_number();
        break;
    }
    g_err = "unexpected character";
    return NULL;
}

/* ---- output ---------------------------------------------------------------------- */

static void put_jstr(const char *s, size_t n)
{
    size_t i;
    putchar('"');
    for (i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            printf("\\%c", c);
        else if (c < 0x20)
            printf("\\u%04x", c);
        else
            putchar(c);
    }
    putchar('"');
}

static void put_json(const struct jv *v)
{
    size_t i;
    switch (v->t) {
    case J_NULL: fputs("null", stdout); break;
    case J_TRUE: fputs("true", stdout); break;
    case J_FALSE: fputs("false", stdout); break;
    case J_NUM: fputs(v->raw, stdout); break;
    case J_STR: put_jstr(v->s, v->len); break;
    case J_ARR:
        putchar('[');
        for (i = 0; i < v->n; i++) {
            if (i)
                putchar(',');
            put_json(v->v[i]);
        }
        putchar(']');
        break;
    case J_OBJ:
        putchar('{');
        for (i = 0; i < v->n; i++) {
            if (i)
                putchar(',');
            put_jstr(v->k[i], strlen(v->k[i]));
            putchar(':');
            put_json(v->v[i]);
        }
        putchar('}');
        break;
    }
}

/* Text form of a scalar for printing and comparing; NULL for containers. */
static const char *scalar_text(const struct jv *v)
{
    switch (v->t) {
    case J_NULL: return "null";
    case J_TRUE: return "true";
    case J_FALSE: return "false";
    case J_NUM: return v->raw;
    case J_STR: return v->s;
    default: return NULL;
    }
}

static const char *type_name(const struct jv *v)
{
    static const char *names[] = { "null", "boolean", "boolean", "number", "string", "array", "object" };
    return names[v->t];
}

/* ---- queries ----------------------------------------------------------------------- */

struct set {
    size_t n, cap;
    struct jv **v;
};

static void set_add(struct set *s, struct jv *v)
{
    if (s->n == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->v = xrealloc(s->v, s->cap * sizeof *s->v);
    }
    s->v[s->n++] = v;
}

static void qfail(const char *q, const char *why)
{
    fprintf(stderr, "jcheck: bad query '%s': %s\n", q, why);
    exit(2);
}

/* Apply the path in q (up to qend) to root; results in *out. */
static void run_path(const char *q, const char *qend, struct jv *root, struct set *out)
{
    struct set cur = { 0, 0, NULL }, nxt;
    const char *p = q;
    size_t i, j;
    set_add(&cur, root);
    if (p < qend && *p == '.' && p + 1 == qend) {
        *out = cur;
        return;
    }
    while (p < qend) {
        if (*p == '.')
            p++;
        if (p < qend && *p != '[') {  /* member name */
            const char *ks = p;
            size_t kl;
            while (p < qend && *p != '.' && *p != '[')
                p++;
            kl = (size_t)(p - ks);
            memset(&nxt, 0, sizeof nxt);
            for (i = 0; i < cur.n; i++) {
                struct jv *o = cur.v[i];
                if (o->t != J_OBJ)
                    continue;
                for (j = 0; j < o->n; j++)
                    if (strlen(o->k[j]) == kl && !memcmp(o->k[j], ks, kl))
                        set_add(&nxt, o->v[j]);
            }
            free(cur.v);
            cur = nxt;
        }
        while (p < qend && *p == '[') {  /* selectors */
            const char *ss = ++p, *se, *eq = NULL;
            char *val = NULL;
            size_t vl = 0;
            int quoted = 0;
            while (p < qend && *p != ']' && *p != '=')
                p++;
            if (p < qend && *p == '=') {
                eq = p++;
                if (p < qend && *p == '"') {
                    const char *vs = ++p;
                    while (p < qend && *p != '"')
                        p++;
                    if (p >= qend)
                        qfail(q, "unterminated quote");
                    vl = (size_t)(p - vs);
                    val = xmalloc(vl + 1);
                    memcpy(val, vs, vl);
                    val[vl] = '\0';
                    p++;
                    quoted = 1;
                } else {
                    const char *vs = p;
                    while (p < qend && *p != ']')
                        p++;
                    vl = (size_t)(p - vs);
                    val = xmalloc(vl + 1);
                    memcpy(val, vs, vl);
                    val[vl] = '\0';
                }
            }
            if (p >= qend || *p != ']')
                qfail(q, "missing ]");
            se = eq ? eq : p;
            p++;
            memset(&nxt, 0, sizeof nxt);
            for (i = 0; i < cur.n; i++) {
                struct jv *a = cur.v[i];
                if (a->t != J_ARR)
                    continue;
                if (eq) {
                    size_t kl = (size_t)(se - ss);
                    for (j = 0; j < a->n; j++) {
                        struct jv *e = a->v[j];
                        size_t m;
                        if (e->t != J_OBJ)
                            continue;
                        for (m = 0; m < e->n; m++) {
                            const char *t;
                            if (strlen(e->k[m]) != kl || memcmp(e->k[m], ss, kl))
                                continue;
                            t = scalar_text(e->v[m]);
                            if (t && strlen(t) == vl && !memcmp(t, val, vl))
                                set_add(&nxt, e);
                        }
                    }
                } else if (se == ss) {  /* [] */
                    for (j = 0; j < a->n; j++)
                        set_add(&nxt, a->v[j]);
                } else {
                    char *end;
                    long idx;
                    errno = 0;
                    idx = strtol(ss, &end, 10);
                    if (end != se || errno)
                        qfail(q, "bad index");
                    if (idx < 0)
                        idx += (long)a->n;
                    if (idx >= 0 && (size_t)idx < a->n)
                        set_add(&nxt, a->v[idx]);
                }
            }
            (void)quoted;
            free(val);
            free(cur.v);
            cur = nxt;
        }
        if (p < qend && *p != '.')
            qfail(q, "expected '.' or '['");
    }
    *out = cur;
}

/* One result of a query: either a JSON value or a computed number. */
struct res {
    struct jv *v;
    int is_num;
    double num;
    char buf[64];
};

static void res_num(struct res *r, double x)
{
    memset(r, 0, sizeof *r);
    r->is_num = 1;
    r->num = x;
    if (x == floor(x) && fabs(x) < 1e15)
        snprintf(r->buf, sizeof r->buf, "%.0f", x);
    else
        snprintf(r->buf, sizeof r->buf, "%.17g", x);
}

static size_t run_query(const char *q, struct jv *root, struct res **out)
{
    const char *bar = strchr(q, '|');
    const char *qend = bar ? bar : q + strlen(q);
    const char *fn = bar ? bar + 1 : NULL;
    struct set s;
    struct res *r;
    size_t i, n = 0;
    if (qend == q)
        qfail(q, "empty path");
    run_path(q, qend, root, &s);
    r = xmalloc((s.n + 1) * sizeof *r);
    if (!fn) {
        for (i = 0; i < s.n; i++) {
            memset(&r[n], 0, sizeof r[n]);
            r[n++].v = s.v[i];
        }
    } else if (!strcmp(fn, "count")) {
        res_num(&r[n++], (double)s.n);
    } else if (!strcmp(fn, "sum") || !strcmp(fn, "min") || !strcmp(fn, "max")) {
        double acc = 0;
        int any = 0;
        for (i = 0; i < s.n; i++) {
            double x;
            if (s.v[i]->t != J_NUM) {
                fprintf(stderr, "jcheck: %s: |%s over a non-number\n", q, fn);
                exit(1);
            }
            x = s.v[i]->num;
            if (!strcmp(fn, "sum"))
                acc += x;
            else if (!any || (fn[1] == 'i' ? x < acc : x > acc))
                acc = x;
            any = 1;
        }
        if (any || !strcmp(fn, "sum"))
            res_num(&r[n++], acc);
    } else if (!strcmp(fn, "len")) {
        for (i = 0; i < s.n; i++) {
            struct jv *v = s.v[i];
            if (v->t == J_ARR || v->t == J_OBJ)
                res_num(&r[n++], (double)v->n);
            else if (v->t == J_STR)
                res_num(&r[n++], (double)v->len);
        }
    } else if (!strcmp(fn, "type")) {
        for (i = 0; i < s.n; i++) {
            memset(&r[n], 0, sizeof r[n]);
            snprintf(r[n].buf, sizeof r[n].buf, "%s", type_name(s.v[i]));
            n++;
        }
    } else if (!strcmp(fn, "keys")) {
        size_t total = 0, j;
        for (i = 0; i < s.n; i++)
            if (s.v[i]->t == J_OBJ)
                total += s.v[i]->n;
        r = xrealloc(r, (total + 1) * sizeof *r);
        for (i = 0; i < s.n; i++)
            if (s.v[i]->t == J_OBJ)
                for (j = 0; j < s.v[i]->n; j++) {
                    struct jv *k = newv(J_STR);
                    k->s = s.v[i]->k[j];
                    k->len = strlen(k->s);
                    memset(&r[n], 0, sizeof r[n]);
                    r[n++].v = k;
                }
    } else {
        qfail(q, "unknown function");
    }
    free(s.v);
    *out = r;
    return n;
}

static const char *res_text(const struct res *r)
{
    if (r->is_num || !r->v)
        return r->buf;
    return scalar_text(r->v);
}

static int res_number(const struct res *r, double *x)
{
    if (r->is_num) {
        *x = r->num;
        return 1;
    }
    if (r->v && r->v->t == J_NUM) {
        *x = r->v->num;
        return 1;
    }
    return 0;
}

static void res_print(const struct res *r)
{
    const char *t = res_text(r);
    if (t) {
        if (r->v && r->v->t == J_STR)
            fwrite(r->v->s, 1, r->v->len, stdout);
        else
            fputs(t, stdout);
    } else {
        put_json(r->v);
    }
    putchar('\n');
}

static int parse_double(const char *s, double *x)
{
    char *end;
    if (!*s)
        return 0;
    errno = 0;
    *x = strtod(s, &end);
    return !*end && !errno;
}

int main(int argc, char **argv)
{
    FILE *f;
    char *buf = NULL;
    size_t len = 0, cap = 0, n, i;
    struct jv *root;
    struct res *r;
    if (argc < 2 || argc == 4 || argc > 6) {
        fprintf(stderr, "usage: jcheck FILE [QUERY [OP VALUE [TOL]]]\n");
        return 2;
    }
    f = strcmp(argv[1], "-") ? fopen(argv[1], "rb") : stdin;
    if (!f) {
        fprintf(stderr, "jcheck: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    for (;;) {
        size_t got;
        if (len + 4096 > cap) {
            cap = cap ? cap * 2 : 65536;
            buf = xrealloc(buf, cap);
        }
        got = fread(buf + len, 1, cap - len, f);
        if (got == 0)
            break;
        len += got;
    }
    if (f != stdin)
        fclose(f);
    g_start = g_p = buf;
    g_end = buf + len;
    root = parse_value(0);
    if (root) {
        ws();
        if (g_p != g_end) {
            g_err = "trailing characters after the JSON value";
            root = NULL;
        }
    }
    if (!root) {
        size_t line = 1, col = 1;
        const char *c;
        for (c = g_start; c < g_p && c < g_end; c++) {
            if (*c == '\n') {
                line++;
                col = 1;
            } else {
                col++;
            }
        }
        fprintf(stderr, "jcheck: %s: invalid JSON at line %zu column %zu: %s\n", argv[1], line, col,
                g_err ? g_err : "error");
        return 2;
    }
    if (argc == 2)
        return 0;
    n = run_query(argv[2], root, &r);
    if (argc == 3) {
        for (i = 0; i < n; i++)
            res_print(&r[i]);
        return n ? 0 : 3;
    }
    {
        const char *op = argv[3], *want = argv[4], *got;
        double g = 0, w = 0, tol;
        int ok, gn, wn;
        if (n != 1) {
            fprintf(stderr, "jcheck: %s matched %zu values, want exactly one\n", argv[2], n);
            return n ? 1 : 3;
        }
        got = res_text(&r[0]);
        if (!got) {
            fprintf(stderr, "jcheck: %s is a %s, not a scalar\n", argv[2], type_name(r[0].v));
            return 1;
        }
        gn = res_number(&r[0], &g);
        wn = parse_double(want, &w);
        if (!strcmp(op, "==") || !strcmp(op, "!=")) {
            ok = (gn && wn) ? g == w : !strcmp(got, want);
            if (op[0] == '!')
                ok = !ok;
        } else if (!strcmp(op, "has")) {
            ok = strstr(got, want) != NULL;
        } else if (!strcmp(op, "<") || !strcmp(op, "<=") || !strcmp(op, ">") || !strcmp(op, ">=") ||
                   !strcmp(op, "~")) {
            if (!gn || !wn) {
                fprintf(stderr, "jcheck: %s: '%s' %s '%s' needs numbers\n", argv[2], got, op, want);
                return 1;
            }
            if (op[0] == '~') {
                if (argc == 6) {
                    if (!parse_double(argv[5], &tol)) {
                        fprintf(stderr, "jcheck: bad tolerance '%s'\n", argv[5]);
                        return 2;
                    }
                } else {
                    tol = 1e-9 + 1e-6 * fabs(w);
                }
                ok = fabs(g - w) <= tol;
            } else if (op[0] == '<') {
                ok = op[1] ? g <= w : g < w;
            } else {
                ok = op[1] ? g >= w : g > w;
            }
        } else {
            fprintf(stderr, "jcheck: unknown operator '%s'\n", op);
            return 2;
        }
        if (!ok) {
            fprintf(stderr, "jcheck: %s is %s, want %s %s%s%s\n", argv[2], got, op, want,
                    argc == 6 ? " within " : "", argc == 6 ? argv[5] : "");
            return 1;
        }
    }
    return 0;
}
