/* ktime-render.c - a saved JSON report rendered by the library's own writers: what
 * `ktime report FILE` runs (tools/ktime_tool.py), so that the text and CSV of a report's JSON
 * are the library's text and CSV of the same run, byte for byte.
 *
 *   ktime-render [--format text|csv|json] [--top N] [--sort total|mean|p99|calls]
 *                [--filter REGEX] FILE      (FILE - : standard input)
 *   ktime-render --name-column [--width N] < ROWS.json
 *
 * --filter is a POSIX extended regular expression, searched in each kernel's name and
 * mangled name. --name-column reads a JSON list of rows ({"name", "name_bytes", "kind"}) and
 * writes each one's reference number and short name (as hex), as the text's Kernel column
 * (of N bytes, 72 unless given) shows it: for the tables and plots of ktime diff and ktime
 * plot. Exit status 0, or 2 with one line on stderr. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "reader.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonin.h"

static const char *prog = "ktime report";

static int usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 2;
}

/* All of f, in a buffer to free; NULL with errno set. */
static char *slurp(FILE *f, size_t *len)
{
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);

    while (buf) {
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap)
            break;
        char *more = cap < SIZE_MAX / 2 ? realloc(buf, cap *= 2) : NULL;
        if (!more) {
            free(buf);
            errno = ENOMEM;
            return NULL;
        }
        buf = more;
    }
    if (buf && ferror(f)) {
        free(buf);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return buf;
}

struct opts {
    const char *format, *sort, *filter, *file;
    size_t top, width;
    bool name_column;
};

static int parse_args(int argc, char **argv, struct opts *o)
{
    memset(o, 0, sizeof *o);
    o->format = "text";
    o->sort = "total";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        const char **val = strcmp(a, "--format") == 0 ? &o->format
                           : strcmp(a, "--sort") == 0 ? &o->sort
                           : strcmp(a, "--filter") == 0 ? &o->filter
                                                        : NULL;
        bool number = strcmp(a, "--top") == 0 || strcmp(a, "--width") == 0;
        if (val || number) {
            if (i + 1 >= argc)
                return usage_error("%s needs a value", a);
            if (val) {
                *val = argv[++i];
                continue;
            }
            char *end;
            errno = 0;
            long n = strtol(argv[++i], &end, 10);
            if (errno || end == argv[i] || *end || n < 1)
                return usage_error(strcmp(a, "--top") == 0 ? "--top %s: give at least 1"
                                                           : "--width %s: give at least 1",
                                   argv[i]);
            *(strcmp(a, "--top") == 0 ? &o->top : &o->width) = (size_t)n;
        } else if (strcmp(a, "--name-column") == 0) {
            o->name_column = true;
        } else if (a[0] == '-' && a[1] && strcmp(a, "--") != 0) {
            return usage_error("unknown option %s", a);
        } else {
            if (strcmp(a, "--") == 0 && ++i >= argc)
                break;
            if (o->file || i + 1 < argc)
                return usage_error("%s", "one report at a time");
            o->file = argv[i];
        }
    }
    if (!o->name_column && !o->file)
        return usage_error("%s", "no report given");
    return 0;
}

/* --name-column: the short names of the rows on stdin. */
static int name_column(size_t width)
{
    char *text;
    size_t len;
    struct jdoc doc;
    struct model m = { 0 };
    int rc = 2;

    if (!(text = slurp(stdin, &len)))
        return usage_error("cannot read the rows: %s", strerror(errno));
    if (json_parse(&doc, text, len) != 0 || doc.root.type != JV_ARRAY) {
        rc = usage_error("the rows are not a JSON list: %s", doc.err);
        goto out;
    }
    if (doc.root.n && !(m.rows = model_alloc(&m, doc.root.n * sizeof *m.rows)))
        goto out;
    for (size_t i = 0; i < doc.root.n; i++, m.nrows++) {
        const struct jv *e = &doc.root.items[i], *name = jv_get(e, "name"), *hex;
        const struct jv *kind = jv_get(e, "kind");
        struct rm_row *w = &m.rows[i];
        w->name = name && name->type == JV_STRING ? model_strdup(&m, name->s) : "";
        w->mangled = "";
        w->kind = kind && kind->type == JV_STRING && strcmp(kind->s, "graph") == 0 ? REPORT_GRAPH
                                                                                   : REPORT_KERNEL;
        if ((hex = jv_get(e, "name_bytes")) && hex->type == JV_STRING && hex->len % 2 == 0) {
            char *raw = model_alloc(&m, hex->len / 2 + 1);
            for (size_t j = 0; raw && j < hex->len / 2; j++)
                raw[j] = (char)strtol((char[3]){ hex->s[2 * j], hex->s[2 * j + 1], 0 }, NULL, 16);
            w->name = raw ? raw : w->name;
        }
    }
    m.name_width = width;
    model_names(&m);
    for (size_t i = 0; i < m.nrows && !m.oom; i++) {
        printf("%d ", m.rows[i].ref);
        for (const unsigned char *p = (const unsigned char *)m.rows[i].short_name; *p; p++)
            printf("%02x", *p);
        putchar('\n');
    }
    rc = fflush(stdout) == 0 && !m.oom ? 0 : 2;
out:
    json_free(&doc);
    model_free(&m);
    free(text);
    return rc;
}

static int render(const struct opts *o)
{
    static const char *const sorts[] = { "total", "mean", "p99", "calls" };
    bool in = strcmp(o->file, "-") == 0; /* FILE - is standard input */
    FILE *f = in ? stdin : fopen(o->file, "rb");
    char *text, err[400];
    size_t len;
    struct model m;
    regex_t re;
    int sort = -1, rc;

    for (int i = 0; i < 4; i++)
        if (strcmp(o->sort, sorts[i]) == 0)
            sort = i;
    if (sort < 0)
        return usage_error("--sort %s: total, mean, p99 or calls", o->sort);
    if (strcmp(o->format, "text") && strcmp(o->format, "csv") && strcmp(o->format, "json"))
        return usage_error("--format %s: text, csv or json", o->format);
    if (o->filter && (rc = regcomp(&re, o->filter, REG_EXTENDED | REG_NOSUB)) != 0) {
        regerror(rc, &re, err, sizeof err);
        fprintf(stderr, "%s: --filter '%s' is not a regular expression: %s\n", prog, o->filter,
                err);
        return 2;
    }
    if (!f || !(text = slurp(f, &len))) {
        fprintf(stderr, "%s: cannot read %s: %s\n", prog, in ? "standard input" : o->file,
                strerror(errno));
        if (f && !in)
            fclose(f);
        if (o->filter)
            regfree(&re);
        return 2;
    }
    if (!in)
        fclose(f);
    rc = model_read(&m, text, len, err, sizeof err);
    free(text);
    if (rc != 0) {
        fprintf(stderr, "%s: %s: %s\n", prog, o->file, err);
    } else if (model_select(&m, o->filter ? &re : NULL, o->filter, (enum model_sort)sort,
                            o->top) != 0) {
        fprintf(stderr, "%s: %s: out of memory\n", prog, o->file);
        rc = -1;
    } else {
        rc = strcmp(o->format, "csv") == 0    ? model_write_csv(stdout, &m)
             : strcmp(o->format, "json") == 0 ? model_write_json(stdout, &m)
                                              : model_write_text(stdout, &m);
        if (rc != 0 && errno != EPIPE)
            fprintf(stderr, "%s: writing the report failed: %s\n", prog, strerror(errno));
        if (rc != 0 && errno == EPIPE)
            rc = 0; /* the reader went away (| head): not an error */
    }
    if (o->filter)
        regfree(&re);
    model_free(&m);
    return rc == 0 ? 0 : 2;
}

int main(int argc, char **argv)
{
    struct opts o;
    int rc = parse_args(argc, argv, &o);

    if (rc != 0)
        return rc;
    return o.name_column ? name_column(o.width) : render(&o);
}
