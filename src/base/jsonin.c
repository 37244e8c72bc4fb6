/* jsonin.c - a strict JSON reader: recursive descent into a tree held in one arena. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonin.h"

#include "decimal.h"
#include "jsonout.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define JBLOCK 65536

struct jblock {
    struct jblock *next;
    size_t used, size;
    max_align_t data[];
};

struct parser {
    struct jdoc *doc;
    const char *p, *start, *end;
    int depth;
    bool failed;
    /* the members of the containers open, innermost last (parse_container) */
    struct jv *stack;
    const char **stack_keys;
    size_t nstack, capstack;
};

static void *jalloc(struct parser *ps, size_t n)
{
    struct jblock *b = ps->doc->mem;
    size_t need = (n + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);

    if (!b || b->size - b->used < need) {
        size_t size = need > JBLOCK ? need : JBLOCK;
        if (need < n || !(b = malloc(sizeof *b + size)))
            return NULL;
        b->size = size;
        b->used = 0;
        b->next = ps->doc->mem;
        ps->doc->mem = b;
    }
    void *p = (char *)b->data + b->used;
    b->used += need;
    return p;
}

/* Records the first error, at the parser's position. */
static void fail(struct parser *ps, const char *fmt, ...)
{
    va_list ap;
    int line = 1, col = 1;
    char what[120];

    if (ps->failed)
        return;
    ps->failed = true;
    for (const char *q = ps->start; q < ps->p && q < ps->end; q++) {
        if (*q == '\n')
            line++, col = 1;
        else if (((unsigned char)*q & 0xC0) != 0x80) /* a character, not a UTF-8 tail byte */
            col++;
    }
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    if (ps->p >= ps->end) {
        ps->doc->truncated = true;
        snprintf(ps->doc->err, sizeof ps->doc->err, "truncated (line %d, column %d: %s)", line,
                 col, what);
    } else {
        snprintf(ps->doc->err, sizeof ps->doc->err, "not valid JSON (line %d, column %d: %s)",
                 line, col, what);
    }
}

static void out_of_memory(struct parser *ps)
{
    if (!ps->failed)
        snprintf(ps->doc->err, sizeof ps->doc->err, "out of memory");
    ps->failed = true;
}

static void skip_ws(struct parser *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static void parse_value(struct parser *ps, struct jv *v);

/* ---- strings ---- */

static int hex4(const char *p, const char *end)
{
    int v = 0;

    if (end - p < 4)
        return -1;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= c - '0';
        else if (c >= 'a' && c <= 'f')
            v |= c - 'a' + 10;
        else if (c >= 'A' && c <= 'F')
            v |= c - 'A' + 10;
        else
            return -1;
    }
    return v;
}

/* A \uXXXX escape (with its low surrogate when it is a high one), at ps->p just past "\u".
 * Returns the code point, or -1 (an error recorded). */
static long unicode_escape(struct parser *ps)
{
    int hi = hex4(ps->p, ps->end);

    if (ps->end - ps->p < 4 && hi < 0 && hex4("0000", ps->end) == 0) {
        ps->p = ps->end; /* cut short */
        fail(ps, "a string does not end");
        return -1;
    }
    if (hi < 0) {
        fail(ps, "\\u is not followed by four hex digits");
        return -1;
    }
    ps->p += 4;
    if (hi >= 0xDC00 && hi <= 0xDFFF) {
        fail(ps, "a low surrogate \\u%04x without a high one", hi);
        return -1;
    }
    if (hi < 0xD800 || hi > 0xDBFF)
        return hi;
    int lo = ps->end - ps->p >= 6 && ps->p[0] == '\\' && ps->p[1] == 'u'
                 ? hex4(ps->p + 2, ps->end) : -1;
    if (lo < 0xDC00 || lo > 0xDFFF) {
        fail(ps, "a high surrogate \\u%04x without a low one", hi);
        return -1;
    }
    ps->p += 6;
    return 0x10000 + ((long)(hi - 0xD800) << 10) + (lo - 0xDC00);
}

/* One escape sequence, at ps->p on the backslash, written to out. Returns the bytes written,
 * or 0 (an error recorded). */
static size_t escape(struct parser *ps, char *out)
{
    static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
    const char *e;

    if (++ps->p >= ps->end) {
        fail(ps, "a string ends in a backslash");
        return 0;
    }
    if (*ps->p == 'u') {
        ps->p++;
        long c = unicode_escape(ps);
        if (c == 0)
            fail(ps, "a string holds U+0000, which a report never does");
        return c > 0 ? utf8_put(out, (unsigned)c) : 0;
    }
    if (!(e = memchr(from, *ps->p, sizeof from - 1))) {
        fail(ps, "\\%c is not an escape JSON has", *ps->p);
        return 0;
    }
    ps->p++;
    out[0] = to[e - from];
    return 1;
}

/* Whether the avail bytes at p are the start of a UTF-8 character the text ends inside. */
static bool cut_short(const unsigned char *p, size_t avail)
{
    unsigned char b[5] = { 0 };

    if (avail >= 4)
        return false;
    memcpy(b, p, avail);
    /* The rest of the character, as its smallest allowed bytes. */
    for (size_t i = avail; i < 4; i++)
        b[i] = i == 1 && p[0] == 0xE0 ? 0xA0 : i == 1 && p[0] == 0xF0 ? 0x90 : 0x80;
    return utf8_seq(b) > avail;
}

/* A string, at ps->p on its opening quote. */
static const char *parse_string(struct parser *ps, size_t *len)
{
    const char *q = ps->p + 1;
    size_t n = 0;
    char *out;

    /* The decoded string is never longer than its text. */
    while (q < ps->end && *q != '"')
        q += *q == '\\' && q + 1 < ps->end ? 2 : 1;
    if (!(out = jalloc(ps, (size_t)(q - ps->p) + 1))) {
        out_of_memory(ps);
        return NULL;
    }
    ps->p++;
    while (!ps->failed) {
        if (ps->p >= ps->end) {
            fail(ps, "a string does not end");
            break;
        }
        unsigned char c = (unsigned char)*ps->p;
        size_t k;
        if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
            out[n++] = (char)c; /* the common case: plain ASCII */
            ps->p++;
        } else if (c == '"') {
            ps->p++;
            out[n] = '\0';
            *len = n;
            return out;
        } else if (c == '\\') {
            n += escape(ps, out + n);
        } else if (c < 0x20) {
            fail(ps, "a control character (0x%02x) in a string", c);
        } else if ((k = utf8_seq_n((const unsigned char *)ps->p, (size_t)(ps->end - ps->p))) == 0) {
            if (cut_short((const unsigned char *)ps->p, (size_t)(ps->end - ps->p)))
                ps->p = ps->end;
            fail(ps, "a string holds a byte that is not UTF-8 (0x%02x)", c);
        } else {
            memcpy(out + n, ps->p, k);
            n += k;
            ps->p += k;
        }
    }
    return NULL;
}

/* ---- numbers and words ---- */

static bool digit(const struct parser *ps, const char *q)
{
    return q < ps->end && *q >= '0' && *q <= '9';
}

static void parse_number(struct parser *ps, struct jv *v)
{
    const char *q = ps->p;
    char buf[400];
    bool integer = true, neg = false, exact = true;
    uint64_t m = 0;
    int sig = 0, e10 = 0;
    long ex = 0;

    if (*q == '-')
        q++, neg = true;
    /* An error is placed where the number went wrong (at the end: truncated). */
    if (!digit(ps, q)) {
        ps->p = q;
        fail(ps, "a number has no digits");
        return;
    }
    if (*q == '0' && digit(ps, q + 1)) {
        ps->p = q;
        fail(ps, "a number starts with 0 and another digit");
        return;
    }
    /* The significant digits into m (19 at most: then exact is false and strtod decides). */
    for (; digit(ps, q); q++) {
        if (sig < 19) {
            m = m * 10 + (uint64_t)(*q - '0');
            sig += m != 0;
        } else {
            exact = false;
        }
    }
    if (q < ps->end && *q == '.') {
        integer = false;
        if (!digit(ps, ++q)) {
            ps->p = q;
            fail(ps, "a number has no digits after its point");
            return;
        }
        for (; digit(ps, q); q++) {
            if (sig < 19) {
                m = m * 10 + (uint64_t)(*q - '0');
                sig += m != 0;
                e10--;
            } else if (*q != '0') {
                exact = false;
            }
        }
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        bool eneg = false;
        integer = false;
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            eneg = *q++ == '-';
        if (!digit(ps, q)) {
            ps->p = q;
            fail(ps, "a number has no digits in its exponent");
            return;
        }
        for (; digit(ps, q); q++)
            if (ex < 100000)
                ex = ex * 10 + (*q - '0');
        e10 += (int)(eneg ? -ex : ex);
    }
    if ((size_t)(q - ps->p) >= sizeof buf) {
        fail(ps, "a number of more than %zu characters", sizeof buf - 1);
        return;
    }
    v->type = JV_NUMBER;
    if (!exact || !decimal_to_double(m, e10, &v->num)) {
        memcpy(buf, ps->p, (size_t)(q - ps->p));
        buf[q - ps->p] = '\0';
        v->num = strtod(buf, NULL);
        if (!isfinite(v->num)) {
            fail(ps, "a number too large for a double");
            return;
        }
        if (integer && !neg) {
            errno = 0;
            unsigned long long u = strtoull(buf, NULL, 10);
            v->is_count = errno == 0;
            v->count = u;
        }
    } else {
        if (neg)
            v->num = -v->num;
        if (integer && !neg) {
            v->is_count = true;
            v->count = m;
        }
    }
    ps->p = q;
}

static void parse_word(struct parser *ps, struct jv *v)
{
    static const struct { const char *w; enum jv_type t; bool b; } words[] = {
        { "true", JV_BOOL, true }, { "false", JV_BOOL, false }, { "null", JV_NULL, false },
    };

    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].w);
        if ((size_t)(ps->end - ps->p) >= n && memcmp(ps->p, words[i].w, n) == 0) {
            v->type = words[i].t;
            v->b = words[i].b;
            ps->p += n;
            return;
        }
        size_t left = (size_t)(ps->end - ps->p);
        if (left < n && memcmp(ps->p, words[i].w, left) == 0) {
            ps->p = ps->end; /* the start of a word, cut short */
            fail(ps, "'%s' cut short", words[i].w);
            return;
        }
    }
    if (*ps->p >= 0x20 && *ps->p < 0x7f)
        fail(ps, "'%c' begins no JSON value", *ps->p);
    else
        fail(ps, "byte 0x%02x begins no JSON value", (unsigned char)*ps->p);
}

/* ---- containers ---- */

/* Room for one more member on the parser's stack of the members of the containers being
 * read (one stack for the whole document, so that a container costs no allocation of its
 * own until it is complete). */
static bool stack_grow(struct parser *ps)
{
    if (ps->nstack < ps->capstack)
        return true;
    size_t cap = ps->capstack ? 2 * ps->capstack : 256;
    struct jv *items = realloc(ps->stack, cap * sizeof *items);
    if (items)
        ps->stack = items;
    const char **keys = realloc(ps->stack_keys, cap * sizeof *keys);
    if (keys)
        ps->stack_keys = keys;
    if (!items || !keys) {
        out_of_memory(ps);
        return false;
    }
    ps->capstack = cap;
    return true;
}

/* Moves the members from base up off the stack into the arena, as v's. */
static void settle(struct parser *ps, struct jv *v, size_t base, bool object)
{
    size_t n = ps->nstack - base;

    v->n = n;
    if (n && !ps->failed) {
        if (!(v->items = jalloc(ps, n * sizeof *v->items)) ||
            (object && !(v->keys = jalloc(ps, n * sizeof *v->keys)))) {
            out_of_memory(ps);
        } else {
            memcpy(v->items, ps->stack + base, n * sizeof *v->items);
            if (object)
                memcpy(v->keys, ps->stack_keys + base, n * sizeof *v->keys);
        }
    }
    ps->nstack = base;
}

/* An array or object, at ps->p on its opening bracket. */
static void parse_container(struct parser *ps, struct jv *v, bool object)
{
    size_t base = ps->nstack;
    char close = object ? '}' : ']';

    v->type = object ? JV_OBJECT : JV_ARRAY;
    if (++ps->depth > JSON_MAX_DEPTH) {
        fail(ps, "nested deeper than %d", JSON_MAX_DEPTH);
        return;
    }
    ps->p++;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close) {
        ps->p++;
        ps->depth--;
        return;
    }
    while (!ps->failed) {
        const char *key = NULL;
        struct jv item;
        skip_ws(ps);
        if (object) {
            size_t klen;
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, ps->p < ps->end ? "an object's key is not a string"
                                         : "an object does not end");
                break;
            }
            if (!(key = parse_string(ps, &klen)))
                break;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                fail(ps, "no ':' after an object's key");
                break;
            }
            ps->p++;
        }
        /* The member is read into item first: reading it may move the stack. */
        parse_value(ps, &item);
        if (ps->failed || !stack_grow(ps))
            break;
        ps->stack[ps->nstack] = item;
        ps->stack_keys[ps->nstack++] = key;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close) {
            ps->p++;
            break;
        }
        if (ps->p < ps->end)
            fail(ps, "no ',' or '%c' after a member", close);
        else
            fail(ps, "an %s does not end", object ? "object" : "array");
    }
    ps->depth--;
    settle(ps, v, base, object);
}

static void parse_value(struct parser *ps, struct jv *v)
{
    skip_ws(ps);
    memset(v, 0, sizeof *v);
    if (ps->p >= ps->end) {
        fail(ps, "a value is missing");
        return;
    }
    switch (*ps->p) {
    case '{': parse_container(ps, v, true); break;
    case '[': parse_container(ps, v, false); break;
    case '"':
        v->type = JV_STRING;
        v->s = parse_string(ps, &v->len);
        break;
    case '-': case '0': case '1': case '2': case '3': case '4':
    case '5': case '6': case '7': case '8': case '9':
        parse_number(ps, v);
        break;
    default: parse_word(ps, v);
    }
}

int json_parse(struct jdoc *doc, const char *text, size_t len)
{
    struct parser ps = { doc, text, text, text + len, 0, false, NULL, NULL, 0, 0 };

    memset(doc, 0, sizeof *doc);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        fail(&ps, "a byte order mark, which JSON does not have");
        return -1;
    }
    parse_value(&ps, &doc->root);
    skip_ws(&ps);
    if (!ps.failed && ps.p < ps.end)
        fail(&ps, "more after the end of the document");
    free(ps.stack);
    free(ps.stack_keys);
    return ps.failed ? -1 : 0;
}

void json_free(struct jdoc *doc)
{
    for (struct jblock *b = doc->mem, *next; b; b = next) {
        next = b->next;
        free(b);
    }
    doc->mem = NULL;
}

/* ---- the top level alone ---- */

/* Passes over the container at ps->p (on its opening bracket): brackets matched, strings
 * skipped whole. */
static void skip_container(struct parser *ps)
{
    int depth = 0;

    while (ps->p < ps->end) {
        char c = *ps->p++;
        if (c == '"') {
            while (ps->p < ps->end && *ps->p != '"')
                ps->p += *ps->p == '\\' ? 2 : 1;
            if (ps->p >= ps->end)
                break;
            ps->p++;
        } else if (c == '[' || c == '{') {
            if (++depth > JSON_MAX_DEPTH) {
                fail(ps, "nested deeper than %d", JSON_MAX_DEPTH);
                return;
            }
        } else if ((c == ']' || c == '}') && --depth == 0) {
            return;
        }
    }
    ps->p = ps->end;
    fail(ps, "an %s does not end", "array or object");
}

int json_skim_begin(struct jskim *s, const char *text, size_t len)
{
    struct parser ps = { &s->doc, text, text, text + len, 0, false, NULL, NULL, 0, 0 };

    memset(s, 0, sizeof *s);
    s->start = text;
    s->end = text + len;
    skip_ws(&ps);
    if (ps.p >= ps.end || *ps.p != '{') {
        if (ps.p < ps.end)
            fail(&ps, "the document is not an object");
        else
            fail(&ps, "a value is missing");
        s->state = -1;
        return -1;
    }
    s->p = ps.p + 1;
    s->state = 1;
    return 0;
}

/* After a member: a ',' or the '}' must follow. */
static void after_member(struct parser *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        fail(ps, "an object does not end");
    else if (*ps->p != ',' && *ps->p != '}')
        fail(ps, "no ',' or '}' after a member");
}

int json_skim_span(struct jskim *s, size_t *len)
{
    struct parser ps = { &s->doc, s->p, s->start, s->end, 1, false, NULL, NULL, 0, 0 };
    const char *from = s->p;

    *len = 0;
    if (s->state != 1 || !s->pending)
        return s->state == -1 ? -1 : 0;
    s->pending = false;
    skip_container(&ps);
    *len = (size_t)(ps.p - from);
    if (!ps.failed)
        after_member(&ps);
    s->p = ps.p;
    if (ps.failed) {
        s->state = -1;
        return -1;
    }
    return 0;
}

int json_skim_next(struct jskim *s, const char **key, struct jv *v, const char **at)
{
    struct parser ps = { &s->doc, s->p, s->start, s->end, 1, false, NULL, NULL, 0, 0 };
    size_t klen;

    memset(v, 0, sizeof *v);
    *at = NULL;
    if (s->pending && json_skim_span(s, &klen) != 0)
        return -1;
    ps.p = s->p;
    if (s->state != 1)
        return s->state == 2 ? 0 : -1;
    skip_ws(&ps);
    if (ps.p < ps.end && *ps.p == '}') {
        s->state = 2;
        s->p = ps.p + 1;
        return 0;
    }
    if (s->members && ps.p < ps.end && *ps.p == ',') {
        ps.p++;
        skip_ws(&ps);
    }
    if (ps.p >= ps.end || *ps.p != '"') {
        fail(&ps, ps.p < ps.end ? "an object's key is not a string" : "an object does not end");
        s->state = -1;
        return -1;
    }
    if ((*key = parse_string(&ps, &klen))) {
        skip_ws(&ps);
        if (ps.p >= ps.end || *ps.p != ':')
            fail(&ps, "no ':' after an object's key");
        else
            ps.p++;
    }
    if (!ps.failed) {
        skip_ws(&ps);
        if (ps.p < ps.end && (*ps.p == '[' || *ps.p == '{')) {
            const char *q = ps.p + 1;
            v->type = *ps.p == '[' ? JV_ARRAY : JV_OBJECT;
            while (q < ps.end && (*q == ' ' || *q == '\t' || *q == '\n' || *q == '\r'))
                q++;
            v->n = q < ps.end && *q != (*ps.p == '[' ? ']' : '}');
            *at = ps.p;
            s->pending = true;
        } else {
            parse_value(&ps, v);
            if (!ps.failed)
                after_member(&ps);
        }
    }
    s->p = ps.p;
    if (ps.failed) {
        s->state = -1;
        return -1;
    }
    s->members++;
    return 1;
}

void json_skim_end(struct jskim *s)
{
    json_free(&s->doc);
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
    if (!o || o->type != JV_OBJECT)
        return NULL;
    for (size_t i = o->n; i-- > 0;)
        if (o->keys[i][0] == key[0] && strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

const char *jv_type_name(const struct jv *v)
{
    static const char *const names[] = { "null", "a boolean", "a number", "a string", "a list",
                                         "an object" };

    return v ? names[v->type] : "missing";
}
