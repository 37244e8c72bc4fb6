/* fuzzutil.c - the fuzz targets' shared checks (see fuzzutil.h). The UTF-8 and JSON checks
 * are written here from the RFCs, apart from ktime's writer, so that they can judge it. */
#include "fuzzutil.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"

void fuzz_fail(const char *file, int line, const char *cond, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "\n%s:%d: property failed: %s\n  ", file, line, cond);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    fflush(stderr);
    abort();
}

uint8_t fuzz_byte(struct fuzz_in *in)
{
    if (in->n == 0)
        return 0;
    in->n--;
    return *in->p++;
}

uint64_t fuzz_u64(struct fuzz_in *in)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | fuzz_byte(in);
    return v;
}

char *fuzz_field(struct fuzz_in *in)
{
    const uint8_t *nul = memchr(in->p, 0, in->n);
    size_t k = nul ? (size_t)(nul - in->p) : in->n;
    char *s = malloc(k + 1);

    if (!s)
        abort();
    memcpy(s, in->p, k);
    s[k] = '\0';
    in->p += k;
    in->n -= k;
    if (nul) {
        in->p++;
        in->n--;
    }
    return s;
}

/* Decodes the sequence its first byte announces and judges the code point (RFC 3629):
 * shortest form, not a surrogate, at most U+10FFFF. */
size_t fuzz_utf8_seq(const unsigned char *p, size_t left)
{
    static const uint32_t min_cp[5] = { 0, 0, 0x80, 0x800, 0x10000 };
    size_t n;
    uint32_t cp;

    if (left == 0)
        return 0;
    if (p[0] < 0x80)
        return 1;
    if ((p[0] & 0xE0) == 0xC0)
        n = 2, cp = p[0] & 0x1F;
    else if ((p[0] & 0xF0) == 0xE0)
        n = 3, cp = p[0] & 0x0F;
    else if ((p[0] & 0xF8) == 0xF0)
        n = 4, cp = p[0] & 0x07;
    else
        return 0;
    if (left < n)
        return 0;
    for (size_t i = 1; i < n; i++) {
        if ((p[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (p[i] & 0x3F);
    }
    if (cp < min_cp[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

bool fuzz_utf8_valid(const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;

    for (size_t i = 0; i < n;) {
        size_t k = fuzz_utf8_seq(p + i, n - i);
        if (!k)
            return false;
        i += k;
    }
    return true;
}

/* ---- JSON (RFC 8259) ---- */

struct jp {
    const char *s;
    size_t n, i;
    const char *why;
    int depth;
};

static void ws(struct jp *j)
{
    while (j->i < j->n && strchr(" \t\n\r", j->s[j->i]) && j->s[j->i])
        j->i++;
}

static bool fail(struct jp *j, const char *why)
{
    if (!j->why)
        j->why = why;
    return false;
}

static int hexval(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
         : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* A string at j->i (its quote); appends what it decodes to out when out is not NULL. */
static bool jstring(struct jp *j, char *out, size_t *olen)
{
    if (j->i >= j->n || j->s[j->i] != '"')
        return fail(j, "string expected");
    j->i++;
    for (;;) {
        unsigned char c;
        if (j->i >= j->n)
            return fail(j, "unterminated string");
        c = (unsigned char)j->s[j->i];
        if (c == '"') {
            j->i++;
            return true;
        }
        if (c < 0x20)
            return fail(j, "control character in a string");
        if (c != '\\') {
            size_t k = fuzz_utf8_seq((const unsigned char *)j->s + j->i, j->n - j->i);
            if (!k)
                return fail(j, "a string that is not UTF-8");
            if (out)
                memcpy(out + *olen, j->s + j->i, k), *olen += k;
            j->i += k;
            continue;
        }
        if (++j->i >= j->n)
            return fail(j, "escape cut short");
        c = (unsigned char)j->s[j->i++];
        const char *simple = strchr("\"\\/bfnrt", c);
        if (simple && c) {
            static const char dec[] = "\"\\/\b\f\n\r\t";
            if (out)
                out[(*olen)++] = dec[simple - "\"\\/bfnrt"];
            continue;
        }
        if (c != 'u')
            return fail(j, "unknown escape");
        uint32_t cp = 0;
        for (int k = 0; k < 4; k++) {
            int h = j->i < j->n ? hexval(j->s[j->i]) : -1;
            if (h < 0)
                return fail(j, "bad \\u escape");
            cp = cp << 4 | (uint32_t)h;
            j->i++;
        }
        if (cp >= 0xD800 && cp <= 0xDFFF)
            return fail(j, "a surrogate escape (ktime never writes one)");
        if (out) {
            unsigned char *o = (unsigned char *)out + *olen;
            if (cp < 0x80)
                o[0] = (unsigned char)cp, *olen += 1;
            else if (cp < 0x800)
                o[0] = (unsigned char)(0xC0 | cp >> 6), o[1] = (unsigned char)(0x80 | (cp & 0x3F)),
                *olen += 2;
            else
                o[0] = (unsigned char)(0xE0 | cp >> 12),
                o[1] = (unsigned char)(0x80 | (cp >> 6 & 0x3F)),
                o[2] = (unsigned char)(0x80 | (cp & 0x3F)), *olen += 3;
        }
    }
}

static bool jdigits(struct jp *j)
{
    size_t start = j->i;

    while (j->i < j->n && j->s[j->i] >= '0' && j->s[j->i] <= '9')
        j->i++;
    return j->i > start;
}

static bool jnumber(struct jp *j)
{
    if (j->i < j->n && j->s[j->i] == '-')
        j->i++;
    if (j->i < j->n && j->s[j->i] == '0')
        j->i++;
    else if (!jdigits(j))
        return fail(j, "bad number");
    if (j->i < j->n && j->s[j->i] == '.') {
        j->i++;
        if (!jdigits(j))
            return fail(j, "bad fraction");
    }
    if (j->i < j->n && (j->s[j->i] == 'e' || j->s[j->i] == 'E')) {
        j->i++;
        if (j->i < j->n && (j->s[j->i] == '+' || j->s[j->i] == '-'))
            j->i++;
        if (!jdigits(j))
            return fail(j, "bad exponent");
    }
    return true;
}

static bool jword(struct jp *j, const char *w)
{
    size_t k = strlen(w);

    if (j->n - j->i < k || memcmp(j->s + j->i, w, k) != 0)
        return fail(j, "unknown literal (nan or inf?)");
    j->i += k;
    return true;
}

static bool jvalue(struct jp *j)
{
    char c;

    ws(j);
    if (j->i >= j->n)
        return fail(j, "value expected");
    if (++j->depth > 64)
        return fail(j, "nested too deep");
    c = j->s[j->i];
    bool ok;
    if (c == '{' || c == '[') {
        char close = c == '{' ? '}' : ']';
        j->i++;
        ws(j);
        if (j->i < j->n && j->s[j->i] == close) {
            j->i++;
            ok = true;
        } else {
            for (ok = false;;) {
                ws(j);
                if (c == '{') {
                    if (!jstring(j, NULL, NULL))
                        break;
                    ws(j);
                    if (j->i >= j->n || j->s[j->i] != ':') {
                        fail(j, "':' expected");
                        break;
                    }
                    j->i++;
                }
                if (!jvalue(j))
                    break;
                ws(j);
                if (j->i < j->n && j->s[j->i] == ',') {
                    j->i++;
                    continue;
                }
                if (j->i < j->n && j->s[j->i] == close) {
                    j->i++;
                    ok = true;
                } else {
                    fail(j, "',' or the closing bracket expected");
                }
                break;
            }
        }
    } else if (c == '"') {
        ok = jstring(j, NULL, NULL);
    } else if (c == '-' || (c >= '0' && c <= '9')) {
        ok = jnumber(j);
    } else if (c == 't') {
        ok = jword(j, "true");
    } else if (c == 'f') {
        ok = jword(j, "false");
    } else {
        ok = jword(j, "null");
    }
    j->depth--;
    return ok;
}

bool fuzz_json_valid(const char *s, size_t n, const char **why, size_t *at)
{
    struct jp j = { s, n, 0, NULL, 0 };
    bool ok = jvalue(&j);

    if (ok) {
        ws(&j);
        if (j.i != n)
            ok = fail(&j, "more after the value");
    }
    *why = j.why;
    *at = j.i;
    return ok;
}

char *fuzz_json_string(const char *s, size_t n, size_t *len, size_t *end)
{
    struct jp j = { s, n, 0, NULL, 0 };
    char *out = malloc(n + 1); /* a decoded string is never longer than its JSON */

    if (!out)
        abort();
    *len = 0;
    if (!jstring(&j, out, len)) {
        free(out);
        return NULL;
    }
    out[*len] = '\0';
    *end = j.i;
    return out;
}

/* ---- the log sink ---- */

int log_level = LOG_WARN;
int fuzz_log_count;
char fuzz_log_last[1024];

void log_set_level(int level)
{
    log_level = level;
}

void log_msg(int level, const char *fmt, ...)
{
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(fuzz_log_last, sizeof fuzz_log_last, fmt, ap);
    va_end(ap);
    fuzz_log_count++;
    if (getenv("FUZZ_VERBOSE"))
        fprintf(stderr, "ktime: %s\n", fuzz_log_last);
}

void fuzz_log_reset(void)
{
    fuzz_log_count = 0;
    fuzz_log_last[0] = '\0';
}
