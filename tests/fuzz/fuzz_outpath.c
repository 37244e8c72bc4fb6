/* fuzz_outpath.c - outpath_expand (src/core/outpath.c): KTIME_OUTPUT's placeholders.
 *
 * Input: 2 bytes of buffer size, 8 of pid, then NUL-separated fields: the template, the
 * host name (an empty field: NULL) and NAME=VALUE pairs that %q{NAME} reads. Properties:
 * the result is what a separate expansion written from outpath.h's contract gives; in a
 * buffer of exactly outsz bytes (malloc'd, so AddressSanitizer sees one byte past it)
 * nothing is written past it, the return is 0 when the whole result fits and -1 when not,
 * and then the buffer holds the result's first outsz - 1 bytes, terminated. */
#include "fuzzutil.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "outpath.h"

#define MAX_VARS 8
static char *var_name[MAX_VARS], *var_value[MAX_VARS];
static int nvars;

static const char *env(const char *name)
{
    for (int i = 0; i < nvars; i++)
        if (strcmp(var_name[i], name) == 0)
            return var_value[i];
    return NULL;
}

struct buf {
    char *p;
    size_t n, cap;
};

static void put(struct buf *b, const char *s, size_t n)
{
    if (b->n + n + 1 > b->cap) {
        b->cap = (b->n + n + 1) * 2;
        b->p = realloc(b->p, b->cap);
        if (!b->p)
            abort();
    }
    memcpy(b->p + b->n, s, n);
    b->n += n;
    b->p[b->n] = '\0';
}

/* %r and %l as outpath.h describes them: the first variable of the list holding 1 to 9
 * decimal digits and nothing else, or OUTPATH_NO_RANK. */
static const char *rank_of(const char *const *vars)
{
    for (; *vars; vars++) {
        const char *v = env(*vars);
        size_t n = 0;
        if (!v)
            continue;
        while (v[n] >= '0' && v[n] <= '9')
            n++;
        if (n >= 1 && n <= 9 && !v[n])
            return v;
    }
    return OUTPATH_NO_RANK;
}

static const char *const ranks[] = { "RANK", "OMPI_COMM_WORLD_RANK", "PMI_RANK", "PMIX_RANK",
                                     "SLURM_PROCID", "MV2_COMM_WORLD_RANK", NULL };
static const char *const locals[] = { "LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK",
                                      "MPI_LOCALRANKID", "SLURM_LOCALID",
                                      "MV2_COMM_WORLD_LOCAL_RANK", NULL };

/* The expansion as outpath.h describes it. */
static char *expand(const char *t, long pid, const char *host, size_t *len)
{
    struct buf b = { NULL, 0, 0 };
    char num[32];

    put(&b, "", 0);
    while (*t) {
        if (t[0] != '%') {
            put(&b, t++, 1);
        } else if (t[1] == '%') {
            put(&b, "%", 1), t += 2;
        } else if (t[1] == 'p') {
            snprintf(num, sizeof num, "%ld", pid);
            put(&b, num, strlen(num)), t += 2;
        } else if (t[1] == 'h') {
            const char *h = host ? host : OUTPATH_UNKNOWN_HOST;
            put(&b, h, strlen(h)), t += 2;
        } else if (t[1] == 'r' || t[1] == 'l') {
            const char *v = rank_of(t[1] == 'r' ? ranks : locals);
            put(&b, v, strlen(v)), t += 2;
        } else if (t[1] == 'q' && t[2] == '{') {
            const char *close = strchr(t + 3, '}');
            size_t n = close ? (size_t)(close - (t + 3)) : 0;
            if (!close) {
                put(&b, t, 3), t += 3; /* kept as written; what follows is read on */
            } else if (n == 0 || n > 255) {
                put(&b, t, (size_t)(close + 1 - t)), t = close + 1;
            } else {
                char name[256];
                memcpy(name, t + 3, n);
                name[n] = '\0';
                const char *v = env(name);
                put(&b, v ? v : "", v ? strlen(v) : 0), t = close + 1;
            }
        } else if (t[1] == '\0') {
            put(&b, t, 1), t += 1;
        } else {
            put(&b, t, 2), t += 2; /* %q without {, or no placeholder: kept */
        }
    }
    *len = b.n;
    return b.p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct fuzz_in in = { data, size };
    size_t outsz = ((size_t)fuzz_byte(&in) << 8 | fuzz_byte(&in)) % 1024, len;
    long pid = (long)fuzz_u64(&in);
    char *tmpl = fuzz_field(&in), *host = fuzz_field(&in), *want, *out;
    int rc;

    for (nvars = 0; nvars < MAX_VARS && in.n > 0; nvars++) {
        char *f = fuzz_field(&in), *eq = strchr(f, '=');
        var_name[nvars] = f;
        var_value[nvars] = eq ? eq + 1 : NULL;
        if (eq)
            *eq = '\0';
    }
    want = expand(tmpl, pid, *host ? host : NULL, &len);

    /* Room for all of it: the whole result. */
    out = malloc(len + 1);
    fuzz_log_reset();
    rc = outpath_expand(tmpl, pid, *host ? host : NULL, out, len + 1, env);
    FUZZ_ASSERT(rc == 0 && strcmp(out, want) == 0, "rc %d, '%s', want '%s' (template '%s')", rc,
                out, want, tmpl);
    free(out);

    /* Any other room: as much as fits, never a byte past it. */
    out = malloc(outsz ? outsz : 1);
    if (outsz == 0)
        out[0] = 'x';
    rc = outpath_expand(tmpl, pid, *host ? host : NULL, outsz ? out : out + 1, outsz, env);
    FUZZ_ASSERT(rc == (len < outsz ? 0 : -1), "rc %d for %zu bytes of %zu", rc, len, outsz);
    if (outsz > 0) {
        size_t kept = len < outsz ? len : outsz - 1;
        FUZZ_ASSERT(memchr(out, 0, outsz) == out + kept && memcmp(out, want, kept) == 0,
                    "%zu bytes: not the result's first %zu", outsz, kept);
    } else {
        FUZZ_ASSERT(out[0] == 'x', "a 0-byte buffer was written to");
    }
    free(out);

    free(want);
    free(tmpl);
    free(host);
    for (int i = 0; i < nvars; i++)
        free(var_name[i]);
    return 0;
}
