/* jsonout.c - the JSON text ktime writes: strings made valid UTF-8 whatever bytes they hold. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonout.h"

#include <math.h>
#include <string.h>

size_t utf8_seq(const unsigned char *p)
{
    unsigned char lo = 0x80, hi = 0xBF;
    size_t n;

    if (p[0] < 0x80)
        return 1;
    if (p[0] >= 0xC2 && p[0] <= 0xDF)
        n = 2;
    else if (p[0] >= 0xE0 && p[0] <= 0xEF)
        n = 3;
    else if (p[0] >= 0xF0 && p[0] <= 0xF4)
        n = 4;
    else
        return 0;
    if (p[0] == 0xE0)
        lo = 0xA0; /* overlong */
    else if (p[0] == 0xED)
        hi = 0x9F; /* surrogates */
    else if (p[0] == 0xF0)
        lo = 0x90; /* overlong */
    else if (p[0] == 0xF4)
        hi = 0x8F; /* past U+10FFFF */
    if (p[1] < lo || p[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (p[i] < 0x80 || p[i] > 0xBF)
            return 0;
    return n;
}

size_t utf8_seq_n(const unsigned char *p, size_t avail)
{
    unsigned char b[5] = { 0 };
    size_t n;

    memcpy(b, p, avail < 4 ? avail : 4);
    n = utf8_seq(b);
    return n <= avail ? n : 0;
}

void utf8_write_valid(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = utf8_seq(p);
        if (n == 0) {
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
            p++;
        } else {
            fwrite(p, 1, n, f);
            p += n;
        }
    }
}

void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = utf8_seq(p);
        switch (*p) {
        case '"': fputs("\\\"", f); break;
        case '\\': fputs("\\\\", f); break;
        case '\n': fputs("\\n", f); break;
        case '\r': fputs("\\r", f); break;
        case '\t': fputs("\\t", f); break;
        default:
            if (*p < 0x20)
                fprintf(f, "\\u%04x", *p);
            else if (n == 0)
                fputs("\\ufffd", f); /* JSON is UTF-8 (RFC 8259): a stray byte can't be kept */
            else
                fwrite(p, 1, n, f);
        }
        p += n ? n : 1;
    }
    fputc('"', f);
}

bool utf8_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = utf8_seq(p);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

void json_hex(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        fprintf(f, "%02x", *p);
    fputc('"', f);
}

/* ---- the emitter ---- */

void jw_init(struct jw *w, FILE *f)
{
    w->f = f;
    w->depth = 0;
    w->brk = -1;
}

static void spaces(FILE *f, int n)
{
    while (n-- > 0)
        fputc(' ', f);
}

/* What comes before the next member of the container open: its separator and key. */
static void member(struct jw *w, const char *key)
{
    if (w->depth > 0) {
        int i = w->depth - 1;
        bool first = w->lv[i].n++ == 0;

        if (w->lv[i].layout == JW_BLOCK) {
            fputs(first ? "\n" : ",\n", w->f);
            spaces(w->f, w->lv[i].indent);
        } else if (!first && w->brk >= 0) {
            fputs(",\n", w->f);
            spaces(w->f, w->brk);
        } else if (!first) {
            fputs(", ", w->f);
        } else if (w->lv[i].layout == JW_INLINE && w->lv[i].close == '}') {
            fputc(' ', w->f);
        }
        w->brk = -1;
    }
    if (key)
        fprintf(w->f, "\"%s\": ", key);
}

void jw_open(struct jw *w, const char *key, char bracket, enum jw_layout layout, int indent,
             int close_indent)
{
    member(w, key);
    fputc(bracket, w->f);
    if (w->depth >= JW_MAX_DEPTH)
        return;
    w->lv[w->depth].close = bracket == '{' ? '}' : ']';
    w->lv[w->depth].layout = (char)layout;
    w->lv[w->depth].indent = indent;
    w->lv[w->depth].close_indent = close_indent;
    w->lv[w->depth].n = 0;
    w->depth++;
}

void jw_close(struct jw *w)
{
    if (w->depth <= 0)
        return;
    int i = --w->depth;
    if (w->lv[i].n && w->lv[i].layout == JW_BLOCK) {
        fputc('\n', w->f);
        spaces(w->f, w->lv[i].close_indent);
    } else if (w->lv[i].n && w->lv[i].layout == JW_INLINE && w->lv[i].close == '}') {
        fputc(' ', w->f);
    }
    fputc(w->lv[i].close, w->f);
    w->brk = -1;
}

void jw_break(struct jw *w, int indent)
{
    w->brk = indent;
}

void jw_str(struct jw *w, const char *key, const char *s)
{
    member(w, key);
    json_string(w->f, s);
}

void jw_str_or_null(struct jw *w, const char *key, const char *s)
{
    member(w, key);
    if (s)
        json_string(w->f, s);
    else
        fputs("null", w->f);
}

void jw_num(struct jw *w, const char *key, double v)
{
    member(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.17g", v);
    else
        fputs("null", w->f); /* JSON has no NaN or infinity */
}

void jw_fixed(struct jw *w, const char *key, double v, int decimals)
{
    member(w, key);
    if (isfinite(v))
        fprintf(w->f, "%.*f", decimals, v);
    else
        fputs("null", w->f);
}

void jw_u64(struct jw *w, const char *key, uint64_t v)
{
    member(w, key);
    fprintf(w->f, "%llu", (unsigned long long)v);
}

void jw_i64(struct jw *w, const char *key, long long v)
{
    member(w, key);
    fprintf(w->f, "%lld", v);
}

void jw_bool(struct jw *w, const char *key, bool v)
{
    member(w, key);
    fputs(v ? "true" : "false", w->f);
}

void jw_null(struct jw *w, const char *key)
{
    member(w, key);
    fputs("null", w->f);
}

void jw_hex(struct jw *w, const char *key, const char *s)
{
    member(w, key);
    json_hex(w->f, s);
}

void jw_bytes_member(struct jw *w, const char *key, const char *s)
{
    char k[64];

    if (utf8_ok(s))
        return;
    snprintf(k, sizeof k, "%s_bytes", key);
    jw_hex(w, k, s);
}

size_t utf8_put(char *out, unsigned c)
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
