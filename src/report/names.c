/* names.c - a program's strings as the text, the CSV and the samples dump write them
 * (names.h): shortened, cut between characters, escaped. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "names.h"

#include <stdio.h>
#include <string.h>

#include "jsonout.h"

int report_short_name(const char *full, char *out, size_t outsz, size_t width)
{
    const char *s = full;
    size_t n;

    if (strncmp(s, "void ", 5) == 0)
        s += 5;
    n = strlen(s);
    /* Drop a trailing parameter list: the balanced (...) that ends the name. */
    if (n > 0 && s[n - 1] == ')') {
        int depth = 0;
        for (size_t i = n; i-- > 0;) {
            if (s[i] == ')')
                depth++;
            else if (s[i] == '(' && --depth == 0) {
                if (i > 0)
                    n = i;
                break;
            }
        }
    }
    if (width < 8)
        width = 8;
    if (outsz == 0)
        return 1;
    if (n > width) {
        size_t tail = width / 3, head = width - tail - 3;
        /* Cut between characters: a UTF-8 continuation byte (10xxxxxx) must neither follow
         * the head nor start the tail, or the column shows a broken character. */
        for (int i = 0; i < 3 && head > 0 && ((unsigned char)s[head] & 0xC0) == 0x80; i++)
            head--;
        for (int i = 0; i < 3 && tail > 0 && ((unsigned char)s[n - tail] & 0xC0) == 0x80; i++)
            tail--;
        snprintf(out, outsz, "%.*s...%.*s", (int)head, s, (int)tail, s + n - tail);
        return 2;
    }
    snprintf(out, outsz, "%.*s", (int)n, s);
    return strcmp(out, full) != 0;
}

size_t report_utf8_cut(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1), k;

    if (n <= max)
        return n;
    /* Back over at most 3 continuation bytes to the byte that starts their sequence. */
    for (k = max; k > 0 && max - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80; k--)
        ;
    return k < max && ((unsigned char)s[k] & 0xC0) == 0xC0 ? k : max;
}

size_t report_escape_char(const char *s, char esc[8], size_t *n)
{
    const unsigned char *p = (const unsigned char *)s;
    size_t k = utf8_seq(p);

    *n = k ? k : 1;
    switch (*p) {
    case '\\': memcpy(esc, "\\\\", 3); return 2;
    case '\n': memcpy(esc, "\\n", 3); return 2;
    case '\r': memcpy(esc, "\\r", 3); return 2;
    case '\t': memcpy(esc, "\\t", 3); return 2;
    default: break;
    }
    if (*p < 0x20 || *p == 0x7f)
        return (size_t)snprintf(esc, 8, "\\x%02x", *p);
    if (k == 2 && p[0] == 0xC2 && p[1] < 0xA0) /* C1 controls: U+0080 to U+009F */
        return (size_t)snprintf(esc, 8, "\\u%04x", p[1]);
    return 0;
}

void report_put_escaped(FILE *f, const char *s)
{
    const char *p = s ? s : "", *run = p;
    char esc[8];

    /* The bytes between escapes in one write each. */
    while (*p) {
        size_t n, e = report_escape_char(p, esc, &n);
        if (e) {
            fwrite(run, 1, (size_t)(p - run), f);
            fwrite(esc, 1, e, f);
            run = p + n;
        }
        p += n;
    }
    fwrite(run, 1, (size_t)(p - run), f);
}
