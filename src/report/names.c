/* names.c - a kernel's name shortened for the text table (names.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "names.h"

#include <stdio.h>
#include <string.h>

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
