/* jsonin.c - a strict JSON reader: recursive descent into a tree held in one arena. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonin.h"
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

/* Appends code point c as UTF-8 to out. */
static size_t put_utf8(char *out, unsigned c)
{
    if (c < 0x80) {
        out[0] = (char)c;
        return 1;
    }
    if (c < 0x800) {
        out[0] = (char)(0xC0 | c >> 6);
        out[1] = (char)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        out[0] = (char)(0xE0 | c >> 12);
        out[1] = (char)(0x80 | (c >> 6 & 0x3F));
        out[2] = (char)(0x80 | (c & 0x3F));
        return 3;
    }
    out[0] = (char)(0xF0 | c >> 18);
    out[1] = (char)(0x80 | (c >> 12 & 0x3F));
    out[2] = (char)(0x80 | (c >> 6 & 0x3F));
    out[3] = (char)(0x80 | (c & 0x3F));
    return 4;
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
        return c > 0 ? put_utf8(out, (unsigned)c) : 0;
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
        if (c == '"') {
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
    bool integer = true;

    if (*q == '-')
        q++;
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
    while (digit(ps, q))
        q++;
    if (q < ps->end && *q == '.') {
        integer = false;
        if (!digit(ps, ++q)) {
            ps->p = q;
            fail(ps, "a number has no digits after its point");
            return;
        }
        while (digit(ps, q))
            q++;
    }
    if (q < ps->end && (*q == 'e' || *q == 'E')) {
        integer = false;
        q++;
        if (q < ps->end && (*q == '+' || *q == '-'))
            q++;
        if (!digit(ps, q)) {
            ps->p = q;
            fail(ps, "a number has no digits in its exponent");
            return;
        }
        while (digit(ps, q))
            q++;
    }
    if ((size_t)(q - ps->p) >= sizeof buf) {
        fail(ps, "a number of more than %zu characters", sizeof buf - 1);
        return;
    }
    memcpy(buf, ps->p, (size_t)(q - ps->p));
    buf[q - ps->p] = '\0';
    v->type = JV_NUMBER;
    errno = 0;
    v->num = strtod(buf, NULL);
    if (!isfinite(v->num)) {
        fail(ps, "a number too large for a double");
        return;
    }
    if (integer && buf[0] != '-') {
        errno = 0;
        unsigned long long u = strtoull(buf, NULL, 10);
        v->is_count = errno == 0;
        v->count = u;
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

/* A growing list of members while a container is read. */
struct members {
    struct jv *items;
    const char **keys;
    size_t n, cap;
};

static bool grow(struct parser *ps, struct members *m, bool keys)
{
    if (m->n < m->cap)
        return true;
    size_t cap = m->cap ? 2 * m->cap : 8;
    struct jv *items = realloc(m->items, cap * sizeof *items);
    if (items)
        m->items = items;
    const char **k = keys ? realloc(m->keys, cap * sizeof *k) : NULL;
    if (k)
        m->keys = k;
    if (!items || (keys && !k)) {
        out_of_memory(ps);
        return false;
    }
    m->cap = cap;
    return true;
}

/* Moves the members into the arena, as v's. */
static void settle(struct parser *ps, struct jv *v, struct members *m)
{
    v->n = m->n;
    if (m->n && !ps->failed) {
        if (!(v->items = jalloc(ps, m->n * sizeof *v->items)) ||
            (m->keys && !(v->keys = jalloc(ps, m->n * sizeof *v->keys)))) {
            out_of_memory(ps);
        } else {
            memcpy(v->items, m->items, m->n * sizeof *v->items);
            if (m->keys)
                memcpy(v->keys, m->keys, m->n * sizeof *v->keys);
        }
    }
    free(m->items);
    free(m->keys);
}

/* An array or object, at ps->p on its opening bracket. */
static void parse_container(struct parser *ps, struct jv *v, bool object)
{
    struct members m = { 0 };
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
        skip_ws(ps);
        if (!grow(ps, &m, object))
            break;
        memset(&m.items[m.n], 0, sizeof m.items[m.n]);
        if (object) {
            size_t klen;
            if (ps->p >= ps->end || *ps->p != '"') {
                fail(ps, ps->p < ps->end ? "an object's key is not a string"
                                         : "an object does not end");
                break;
            }
            if (!(m.keys[m.n] = parse_string(ps, &klen)))
                break;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                fail(ps, "no ':' after an object's key");
                break;
            }
            ps->p++;
        }
        parse_value(ps, &m.items[m.n]);
        if (ps->failed)
            break;
        m.n++;
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
    settle(ps, v, &m);
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
    struct parser ps = { doc, text, text, text + len, 0, false };

    memset(doc, 0, sizeof *doc);
    if (len >= 3 && memcmp(text, "\xef\xbb\xbf", 3) == 0) {
        fail(&ps, "a byte order mark, which JSON does not have");
        return -1;
    }
    parse_value(&ps, &doc->root);
    skip_ws(&ps);
    if (!ps.failed && ps.p < ps.end)
        fail(&ps, "more after the end of the document");
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

const struct jv *jv_get(const struct jv *o, const char *key)
{
    if (!o || o->type != JV_OBJECT)
        return NULL;
    for (size_t i = o->n; i-- > 0;)
        if (strcmp(o->keys[i], key) == 0)
            return &o->items[i];
    return NULL;
}

const char *jv_type_name(const struct jv *v)
{
    static const char *const names[] = { "null", "a boolean", "a number", "a string", "a list",
                                         "an object" };

    return v ? names[v->type] : "missing";
}
