/* promcheck.c - checks a file against the Prometheus text exposition format (version 0.0.4)
 * line by line, as node_exporter's textfile collector reads it, and answers queries on it.
 *
 * usage:
 *   promcheck FILE                           exit 0 when every line is in the grammar below
 *   promcheck FILE METRIC [LABEL=VALUE...]   also print the value of the one sample named
 *                                            METRIC whose labels include those given (values
 *                                            compared unescaped); exit 3 when none or several
 *   promcheck --count FILE METRIC [LABEL=VALUE...]   print how many samples match
 *
 * The grammar: each line ends with a line feed and is one of
 *   # HELP NAME DOCSTRING        (DOCSTRING: any UTF-8, '\' only in \\ and \n)
 *   # TYPE NAME counter|gauge|summary|histogram|untyped
 *   # anything else              (a comment), or an empty line
 *   NAME[{LABEL="VALUE"(,LABEL="VALUE")*[,]}] VALUE
 * with NAME [a-zA-Z_:][a-zA-Z0-9_:]*, LABEL [a-zA-Z_][a-zA-Z0-9_]* (not starting "__"), VALUE
 * UTF-8 with '\', '"' and line feeds escaped as \\, \" and \n (no other escape), a sample's
 * value a Go float (digits, a point, an exponent; NaN, +Inf, -Inf), blanks between tokens. No
 * timestamp (the textfile collector refuses them). And the rules between lines: HELP and TYPE
 * at most once per name, TYPE before the family's first sample; a family's lines together;
 * a summary NAME's samples NAME{quantile="Q"} (Q in [0, 1]), NAME_sum and NAME_count, a
 * histogram's NAME_bucket{le="B"}, NAME_sum, NAME_count; no label twice in a sample, no
 * sample (name and label set) twice.
 * Exit status: 0 ok, 1 the file breaks a rule (the line and the rule on stderr), 2 usage or
 * unreadable, 3 the query matched no sample or several.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LABELS 16

struct label {
    char name[128];
    char *value; /* unescaped */
};

struct sample {
    char name[256];
    struct label l[MAX_LABELS];
    int nl;
    char value[64];
};

struct family {
    char name[256];
    char type[16];
    bool help, typed, sampled;
    bool closed;              /* another family's lines came after its own */
};

static struct family **fams; /* each allocated once: pointers to them stay valid */
static int nfams;
static char **seen; /* "name{sorted labels}" of every sample */
static int nseen;
static int lineno;

static int fail(const char *fmt, const char *a)
{
    fprintf(stderr, "promcheck: line %d: ", lineno);
    fprintf(stderr, fmt, a);
    fputc('\n', stderr);
    exit(1);
}

static bool name_start(int c) { return isalpha(c) || c == '_' || c == ':'; }
static bool name_char(int c) { return isalnum(c) || c == '_' || c == ':'; }

/* Length of the well-formed UTF-8 sequence at p (no overlongs, surrogates or past
 * U+10FFFF), 0 when there is none. */
static size_t utf8_len(const unsigned char *p)
{
    if (p[0] < 0x80)
        return p[0] ? 1 : 0;
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] > 0x9f))
            return 0;
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] > 0x8f))
            return 0;
        return 4;
    }
    return 0;
}

static void need_utf8(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        size_t k = utf8_len(p);
        if (!k)
            fail("not UTF-8: %s", s);
        p += k;
    }
}

/* A metric name at *p: copied into out, *p moved past it. */
static void metric_name(const char **p, char *out, size_t n)
{
    size_t k = 0;

    if (!name_start((unsigned char)**p))
        fail("a metric name must start with [a-zA-Z_:]: %s", *p);
    while (name_char((unsigned char)(*p)[k]))
        k++;
    if (k >= n)
        fail("a name too long: %s", *p);
    memcpy(out, *p, k);
    out[k] = '\0';
    *p += k;
}

static void blanks(const char **p, bool required, const char *what)
{
    if (required && **p != ' ' && **p != '\t')
        fail("a blank expected before %s", what);
    while (**p == ' ' || **p == '\t')
        (*p)++;
}

/* A Go float (strconv.ParseFloat's decimal forms, NaN, Inf). */
static bool go_float(const char *s)
{
    const char *p = s;
    bool digits = false;

    if (!strcmp(s, "NaN") || !strcmp(s, "+Inf") || !strcmp(s, "-Inf") || !strcmp(s, "Inf"))
        return true;
    if (*p == '+' || *p == '-')
        p++;
    while (isdigit((unsigned char)*p))
        p++, digits = true;
    if (*p == '.') {
        p++;
        while (isdigit((unsigned char)*p))
            p++, digits = true;
    }
    if (!digits)
        return false;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!isdigit((unsigned char)*p))
            return false;
        while (isdigit((unsigned char)*p))
            p++;
    }
    return *p == '\0';
}

static struct family *family_of(const char *name, bool make)
{
    for (int i = 0; i < nfams; i++)
        if (!strcmp(fams[i]->name, name))
            return fams[i];
    if (!make)
        return NULL;
    fams = realloc(fams, (size_t)(nfams + 1) * sizeof *fams);
    if (!fams || !(fams[nfams] = calloc(1, sizeof **fams)))
        exit(2);
    snprintf(fams[nfams]->name, sizeof fams[nfams]->name, "%s", name);
    return fams[nfams++];
}

/* The family a sample named name belongs to, and which kind of its samples it is. */
static struct family *sample_family(const char *name, const char **part)
{
    static const char *const suffixes[] = { "_sum", "_count", "_bucket" };
    size_t n = strlen(name);

    *part = "";
    for (int i = 0; i < 3; i++) {
        size_t k = strlen(suffixes[i]);
        if (n > k && !strcmp(name + n - k, suffixes[i])) {
            char base[256];
            snprintf(base, sizeof base, "%.*s", (int)(n - k), name);
            struct family *f = family_of(base, false);
            if (f && f->typed && (!strcmp(f->type, "summary") || !strcmp(f->type, "histogram"))) {
                *part = suffixes[i];
                return f;
            }
        }
    }
    return family_of(name, true);
}

static struct family *current; /* the family of the last HELP, TYPE or sample line */

static void enter(struct family *f)
{
    if (current && current != f)
        current->closed = true;
    if (f->closed)
        fail("the lines of family %s are not together", f->name);
    current = f;
}

static const char *label_get(const struct sample *s, const char *name)
{
    for (int i = 0; i < s->nl; i++)
        if (!strcmp(s->l[i].name, name))
            return s->l[i].value;
    return NULL;
}

static void parse_sample(const char *line, struct sample *s)
{
    const char *p = line;

    memset(s, 0, sizeof *s);
    metric_name(&p, s->name, sizeof s->name);
    const char *after_name = p;
    blanks(&p, false, "");
    if (*p != '{')
        p = after_name;
    if (*p == '{') {
        p++;
        blanks(&p, false, "");
        while (*p != '}') {
            struct label *l;
            size_t k = 0;
            if (s->nl == MAX_LABELS)
                fail("too many labels: %s", line);
            l = &s->l[s->nl++];
            if (!(isalpha((unsigned char)*p) || *p == '_'))
                fail("a label name must start with [a-zA-Z_]: %s", p);
            while (isalnum((unsigned char)p[k]) || p[k] == '_')
                k++;
            if (k >= sizeof l->name)
                fail("a label name too long: %s", p);
            memcpy(l->name, p, k);
            l->name[k] = '\0';
            if (!strncmp(l->name, "__", 2))
                fail("label names starting with __ are reserved: %s", l->name);
            for (int i = 0; i < s->nl - 1; i++)
                if (!strcmp(s->l[i].name, l->name))
                    fail("label %s twice", l->name);
            p += k;
            blanks(&p, false, "");
            if (*p++ != '=')
                fail("'=' expected after a label name: %s", line);
            blanks(&p, false, "");
            if (*p++ != '"')
                fail("a label value must be quoted: %s", line);
            l->value = malloc(strlen(p) + 1);
            if (!l->value)
                exit(2);
            size_t n = 0;
            for (;; p++) {
                if (*p == '\0')
                    fail("a label value not closed: %s", line);
                if (*p == '"')
                    break;
                if (*p == '\\') {
                    p++;
                    if (*p == '\\' || *p == '"')
                        l->value[n++] = *p;
                    else if (*p == 'n')
                        l->value[n++] = '\n';
                    else
                        fail("an escape other than \\\\, \\\" or \\n in a label value: %s", line);
                    continue;
                }
                l->value[n++] = *p;
            }
            l->value[n] = '\0';
            need_utf8(l->value);
            p++;
            blanks(&p, false, "");
            if (*p == ',') {
                p++;
                blanks(&p, false, "");
            } else if (*p != '}') {
                fail("',' or '}' expected after a label: %s", line);
            }
        }
        p++;
    }
    blanks(&p, true, "the value");
    size_t k = 0;
    while (p[k] && p[k] != ' ' && p[k] != '\t')
        k++;
    if (k == 0 || k >= sizeof s->value)
        fail("no value: %s", line);
    memcpy(s->value, p, k);
    s->value[k] = '\0';
    if (!go_float(s->value))
        fail("not a float: %s", s->value);
    p += k;
    blanks(&p, false, "");
    if (*p)
        fail("something after the value (a timestamp, which the textfile collector refuses?): %s",
             p);
}

static int cmp_labels(const void *a, const void *b)
{
    return strcmp(((const struct label *)a)->name, ((const struct label *)b)->name);
}

static void check_sample(const struct sample *s0)
{
    struct sample s = *s0;
    const char *part;
    struct family *f = sample_family(s.name, &part);
    char key[8192];
    size_t n;

    enter(f);
    f->sampled = true;
    if (f->typed && !strcmp(f->type, "summary")) {
        const char *q = label_get(&s, "quantile");
        if (!*part) {
            char *end;
            double v = q ? strtod(q, &end) : -1;
            if (!q || *end || !go_float(q) || !(v >= 0 && v <= 1))
                fail("a summary's sample needs a quantile label in [0, 1]: %s", s.name);
        } else if (q) {
            fail("a summary's _sum or _count has no quantile label: %s", s.name);
        }
    }
    if (f->typed && !strcmp(f->type, "histogram")) {
        const char *le = label_get(&s, "le");
        if (!*part)
            fail("a histogram's samples are NAME_bucket, NAME_sum and NAME_count: %s", s.name);
        if (!strcmp(part, "_bucket") && (!le || !go_float(le)))
            fail("a histogram's bucket needs an le label: %s", s.name);
    }
    qsort(s.l, (size_t)s.nl, sizeof s.l[0], cmp_labels);
    n = (size_t)snprintf(key, sizeof key, "%s", s.name);
    for (int i = 0; i < s.nl && n < sizeof key; i++)
        n += (size_t)snprintf(key + n, sizeof key - n, "\x1f%s=%s", s.l[i].name, s.l[i].value);
    for (int i = 0; i < nseen; i++)
        if (!strcmp(seen[i], key))
            fail("the same sample twice: %s", s.name);
    seen = realloc(seen, (size_t)(nseen + 1) * sizeof *seen);
    if (!seen || !(seen[nseen++] = strdup(key)))
        exit(2);
}

static void check_meta(const char *line)
{
    const char *p = line + 1;
    char name[256];
    bool help;

    blanks(&p, false, "");
    if (strncmp(p, "HELP", 4) && strncmp(p, "TYPE", 4))
        return; /* a comment */
    help = !strncmp(p, "HELP", 4);
    p += 4;
    if (*p != ' ' && *p != '\t')
        return; /* "# HELPER...": a comment */
    blanks(&p, true, "the name");
    metric_name(&p, name, sizeof name);
    struct family *f = family_of(name, true);
    enter(f);
    if (help) {
        if (f->help)
            fail("a second HELP for %s", name);
        f->help = true;
        if (*p && *p != ' ' && *p != '\t')
            fail("a blank expected after the name: %s", line);
        for (; *p; p++)
            if (*p == '\\' && p[1] != '\\' && p[1] != 'n')
                fail("an escape other than \\\\ or \\n in a HELP: %s", line);
            else if (*p == '\\')
                p++;
        need_utf8(line);
        return;
    }
    if (f->typed)
        fail("a second TYPE for %s", name);
    if (f->sampled)
        fail("TYPE after the samples of %s", name);
    blanks(&p, true, "the type");
    if (strcmp(p, "counter") && strcmp(p, "gauge") && strcmp(p, "summary") &&
        strcmp(p, "histogram") && strcmp(p, "untyped"))
        fail("not a metric type: %s", p);
    snprintf(f->type, sizeof f->type, "%s", p);
    f->typed = true;
}

int main(int argc, char **argv)
{
    bool count = argc > 1 && !strcmp(argv[1], "--count");
    char *buf = NULL;
    size_t len = 0, cap = 0;
    struct sample *samples = NULL;
    int nsamples = 0;
    FILE *in;

    if (count)
        argc--, argv++;
    if (argc < 2 || (count && argc < 3)) {
        fprintf(stderr, "usage: promcheck [--count] FILE [METRIC [LABEL=VALUE...]]\n");
        return 2;
    }
    if (!(in = fopen(argv[1], "rb"))) {
        perror(argv[1]);
        return 2;
    }
    for (int c; (c = fgetc(in)) != EOF;) {
        if (len + 1 >= cap && !(buf = realloc(buf, cap = cap ? 2 * cap : 4096)))
            return 2;
        buf[len++] = (char)c;
    }
    fclose(in);
    if (len && buf[len - 1] != '\n') {
        lineno = 0;
        fail("%s", "the last line has no line feed");
    }
    for (size_t at = 0; at < len;) {
        char *nl = memchr(buf + at, '\n', len - at), *line = buf + at;
        *nl = '\0';
        lineno++;
        if (memchr(line, '\0', (size_t)(nl - line)))
            fail("%s", "a NUL byte");
        if (*line == '#') {
            check_meta(line);
        } else if (*line) {
            samples = realloc(samples, (size_t)(nsamples + 1) * sizeof *samples);
            if (!samples)
                return 2;
            parse_sample(line, &samples[nsamples]);
            check_sample(&samples[nsamples++]);
        }
        at = (size_t)(nl - buf) + 1;
    }
    if (argc < 3)
        return 0;
    int found = 0;
    const char *value = NULL;
    for (int i = 0; i < nsamples; i++) {
        bool match = !strcmp(samples[i].name, argv[2]);
        for (int a = 3; match && a < argc; a++) {
            const char *eq = strchr(argv[a], '=');
            char lname[128];
            if (!eq || (size_t)(eq - argv[a]) >= sizeof lname) {
                fprintf(stderr, "promcheck: %s is not LABEL=VALUE\n", argv[a]);
                return 2;
            }
            snprintf(lname, sizeof lname, "%.*s", (int)(eq - argv[a]), argv[a]);
            const char *v = label_get(&samples[i], lname);
            match = v && !strcmp(v, eq + 1);
        }
        if (match) {
            found++;
            value = samples[i].value;
        }
    }
    if (count) {
        printf("%d\n", found);
        return 0;
    }
    if (found != 1) {
        fprintf(stderr, "promcheck: %d samples match\n", found);
        return 3;
    }
    printf("%s\n", value);
    return 0;
}
