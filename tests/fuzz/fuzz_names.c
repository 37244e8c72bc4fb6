/* fuzz_names.c - kernel names: sysinfo_demangle (src/core/sysinfo.c) with mangled_bound
 * (src/base/mangled.c), report_short_name (src/report/names.c), which shortens a name for the
 * text report's Kernel column, and report_escape_char (names.c), how the text, CSV and dump
 * write it.
 *
 * Input: a byte of buffer size, a byte of column width, then the name (up to a NUL).
 * Properties: demangling gives NULL for what is not a C++ symbol, else a string no longer
 * than mangled_bound said; the short name never goes past its buffer (exactly outsz bytes,
 * malloc'd) and is terminated in it; with room enough it is at most the column's width, equal
 * to the name when it says so, elided (with "...") only when it says so, and UTF-8 when the
 * name is; the escaped name holds no control character and unescapes to the name. */
#include "fuzzutil.h"

#include <stdlib.h>
#include <string.h>

#include "mangled.h"
#include "names.h"
#include "sysinfo.h"

/* The name escaped as the text report writes it: no control byte, and undoing the escapes
 * gives the name back. */
static void escaped(const char *name)
{
    size_t len = strlen(name), o = 0, i = 0;
    char *out = malloc(len * 6 + 1), *back = malloc(len + 1), esc[8];

    for (const char *p = name; *p;) {
        size_t n, e = report_escape_char(p, esc, &n);
        FUZZ_ASSERT(n >= 1 && n <= 4 && e <= 6, "escape of %zu bytes as %zu", n, e);
        memcpy(out + o, e ? esc : p, e ? e : n);
        o += e ? e : n;
        p += n;
    }
    out[o] = '\0';
    for (size_t k = 0; k < o; k++)
        FUZZ_ASSERT((unsigned char)out[k] >= 0x20 && out[k] != 0x7f, "control byte in '%s'", out);
    for (size_t k = 0; k < o;) {
        unsigned v;
        if (out[k] != '\\') {
            back[i++] = out[k++];
            continue;
        }
        switch (out[k + 1]) {
        case '\\': back[i++] = '\\'; k += 2; break;
        case 'n': back[i++] = '\n'; k += 2; break;
        case 'r': back[i++] = '\r'; k += 2; break;
        case 't': back[i++] = '\t'; k += 2; break;
        case 'x': sscanf(out + k + 2, "%2x", &v); back[i++] = (char)v; k += 4; break;
        case 'u': sscanf(out + k + 4, "%2x", &v); back[i++] = (char)0xC2; back[i++] = (char)v; k += 6; break;
        default: FUZZ_ASSERT(0, "stray backslash in '%s'", out);
        }
    }
    back[i] = '\0';
    FUZZ_ASSERT(strcmp(back, name) == 0, "'%s' unescapes to '%s'", out, back);
    free(out);
    free(back);
}

static void shorten(const char *full, size_t outsz, size_t width)
{
    char *out = malloc(outsz ? outsz : 1);
    size_t w = width < 8 ? 8 : width, n;
    int rc;

    out[0] = 'x';
    rc = report_short_name(full, outsz ? out : out + 1, outsz, width);
    FUZZ_ASSERT(rc >= 0 && rc <= 2, "rc %d", rc);
    if (outsz == 0) {
        FUZZ_ASSERT(out[0] == 'x', "a 0-byte buffer was written to");
        free(out);
        return;
    }
    FUZZ_ASSERT(memchr(out, 0, outsz), "not terminated within %zu bytes", outsz);
    n = strlen(out);
    FUZZ_ASSERT(rc != 0 || strcmp(out, full) == 0, "rc 0 but '%s' is not '%s'", out, full);
    if (outsz > w) { /* room for a whole column */
        FUZZ_ASSERT(n <= w, "%zu bytes in a column of %zu: '%s'", n, w, out);
        FUZZ_ASSERT(rc != 2 || strstr(out, "..."), "elided without '...': '%s'", out);
        FUZZ_ASSERT(rc == 2 || strstr(full, out), "'%s' is not part of '%s'", out, full);
        FUZZ_ASSERT(!fuzz_utf8_valid(full, strlen(full)) || fuzz_utf8_valid(out, n),
                    "'%s' is not UTF-8, '%s' was", out, full);
    }
    free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    size_t outsz = fuzz_byte(&in), width = fuzz_byte(&in);
    char *name = fuzz_field(&in), *d;

    if (width == 255)
        width = (size_t)-1; /* no limit */
    d = sysinfo_demangle(name);
    FUZZ_ASSERT(!d || strncmp(name, "_Z", 2) == 0, "demangled '%s', not a C++ symbol", name);
    if (d) {
        uint64_t b = mangled_bound(name, SYSINFO_DEMANGLE_MAX_OUT);
        FUZZ_ASSERT(b != UINT64_MAX && strlen(d) <= b, "'%s' demangled to %zu bytes, bound %llu",
                    name, strlen(d), (unsigned long long)b);
    }
    escaped(name);
    shorten(name, outsz, width);
    shorten(name, 80, 72); /* as the text report does */
    if (d) {
        shorten(d, outsz, width);
        shorten(d, 80, 72);
    }
    free(d);
    free(name);
    return 0;
}
