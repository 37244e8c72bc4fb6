/* jsonout.c - the JSON text ktime writes: strings made valid UTF-8 whatever bytes they hold. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "jsonout.h"

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
