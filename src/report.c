/* report.c - the per-kernel report as a text table or JSON. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "report.h"
#include "conditions.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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

/* ---- escaping: what a program's strings may not put raw into a report ---- */

static size_t utf8_seq(const unsigned char *p);

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

/* Writes s (NULL: "") as the text report shows a program's string: with report_escape_char's
 * escapes, every other byte as it is. */
static void text_put(FILE *f, const char *s)
{
    char esc[8];

    for (const char *p = s ? s : ""; *p;) {
        size_t n, e = report_escape_char(p, esc, &n);
        if (e)
            fwrite(esc, 1, e, f);
        else
            fwrite(p, 1, n, f);
        p += n;
    }
}

/* ---- shared helpers ---- */

struct row {
    struct report_kernel *k;
    struct stats all;       /* per_dev merged */
    double total_us;        /* all.sum, or with KTIME_SAMPLE its estimate: mean x launches */
    char shortname[80];     /* the table's Kernel column */
    int ref;                /* > 0: the full name is listed under this number */
};

/* A kernel with fewer timed samples than this is flagged: its statistics say little (the
 * method asks for many samples after warmup). */
#define FEW_SAMPLES 10

/* The quantiles the reports give: the JSON and CSV all three, the text the first and last. */
static const double quantile_q[] = { 0.5, 0.9, 0.99 };
static const char *const quantile_key[] = { "p50_us", "p90_us", "p99_us" };
#define NQUANTILES 3

/* The q-quantile of samples s whose distribution is sk (sketch.h: within 1 %), or -1 when
 * there are none (or no sketch). */
static double quantile(const struct sketch *sk, const struct stats *s, double q)
{
    if (!s->n || !sk)
        return -1;
    return sketch_quantile(sk, q, s->min, s->max);
}

/* Device index d's sketch of kernel k, or NULL. */
static const struct sketch *dev_sketch(const struct report_kernel *k, int d)
{
    return k->dev_sk ? &k->dev_sk[d] : NULL;
}

/* The text table's Med and p99 columns; `none` where there is no value. */
static void text_quantiles(FILE *f, const struct sketch *sk, const struct stats *s,
                           const char *none)
{
    for (int j = 0; j < NQUANTILES; j += NQUANTILES - 1) {
        double v = quantile(sk, s, quantile_q[j]);
        if (v >= 0)
            fprintf(f, "%11.3f ", v);
        else
            fprintf(f, "%11s ", none);
    }
}

/* One sub-row of a kernel's table row: samples of one launch shape, or of the others. */
static void text_shape_line(FILE *f, const struct stats *s, const struct sketch *sk,
                            double grand)
{
    fprintf(f, "%7.2f %12.3f %9s %7s %9llu %11.3f ", grand > 0 ? 100.0 * s->sum / grand : 0.0,
            s->sum / 1000.0, "", "", (unsigned long long)s->n, s->mean);
    text_quantiles(f, sk, s, "");
    fprintf(f, "%11.3f %11.3f %11.3f    ", s->min, s->max, stats_stddev(s));
}

/* KTIME_GROUP=shape: a line per launch shape under the kernel's row. */
static void text_shapes(FILE *f, const struct shape_set *set, double grand)
{
    for (uint32_t i = 0; set && i < set->n; i++) {
        const struct shape_row *w = set->rows[i];
        text_shape_line(f, &w->st, &w->sk, grand);
        fprintf(f, "grid %ux%ux%u block %ux%ux%u smem %u\n", w->sh.grid[0], w->sh.grid[1],
                w->sh.grid[2], w->sh.block[0], w->sh.block[1], w->sh.block[2], w->sh.smem);
    }
    if (set && set->other.n) {
        text_shape_line(f, &set->other, &set->other_sk, grand);
        if (set->untracked) /* more shapes than were told apart: their number is unknown */
            fprintf(f, "other shapes (over %llu)\n", (unsigned long long)set->other_shapes);
        else
            fprintf(f, "%llu other shapes\n", (unsigned long long)set->other_shapes);
    }
}

static const char *row_name(const struct row *r)
{
    return r->k->name ? r->k->name : (r->k->mangled ? r->k->mangled : "<unnamed>");
}

static int cmp_rows(const void *a, const void *b)
{
    const struct row *x = a, *y = b;

    if (x->total_us != y->total_us)
        return x->total_us < y->total_us ? 1 : -1;
    if (x->k->calls != y->k->calls)
        return x->k->calls < y->k->calls ? 1 : -1;
    return strcmp(row_name(x), row_name(y));
}

/* The statistics of per[0..ndevices) merged: a row's samples on every device (NULL: none). */
static struct stats all_devices(const struct report *r, const struct stats *per)
{
    struct stats s = { 0 };

    for (int d = 0; per && d < r->ndevices; d++)
        stats_merge(&s, &per[d]);
    return s;
}

static struct row *make_rows(struct report *r, double *grand_total_us)
{
    struct row *rows = calloc(r->nkernels ? r->nkernels : 1, sizeof *rows);

    *grand_total_us = 0;
    if (!rows)
        return NULL;
    for (size_t i = 0; i < r->nkernels; i++) {
        rows[i].k = &r->kernels[i];
        if (r->kernels[i].shapes)
            shape_set_sorted(r->kernels[i].shapes);
        rows[i].all = all_devices(r, r->kernels[i].per_dev);
        rows[i].total_us = rows[i].all.sum;
        if (r->kernels[i].unsampled && rows[i].all.n)
            rows[i].total_us = rows[i].all.mean * (double)(rows[i].all.n + r->kernels[i].unsampled);
        *grand_total_us += rows[i].total_us;
    }
    qsort(rows, r->nkernels, sizeof *rows, cmp_rows);
    return rows;
}

static bool gate_is(const struct report *r, const char *mode)
{
    return strcmp(r->gate ? r->gate : "off", mode) == 0;
}

static bool timer_is(const struct report *r, const char *t)
{
    return strcmp(r->timer ? r->timer : "events", t) == 0;
}

static const char *source_words(const struct report *r)
{
    return timer_is(r, "cupti") ? "CUPTI activity records"
           : timer_is(r, "both") ? "CUDA events and CUPTI activity records"
                                 : "CUDA events";
}

/* How many times the active timer's floor a kernel's mean must exceed to be trusted as is. */
#define NEAR_FLOOR_FACTOR 3.0

/* The floor of the active timer on device d: the hardware's under the CUPTI timer, the
 * events' otherwise; 0 when not measured. */
static double floor_of(const struct report *r, int d)
{
    return timer_is(r, "cupti") ? r->devices[d].floor_hw_us : r->devices[d].floor_events_us;
}

/* Whether the kernel's mean is within NEAR_FLOOR_FACTOR of the floor of a device it ran on. */
static bool near_floor(const struct report *r, const struct report_kernel *k, double mean)
{
    for (int d = 0; k->kind == REPORT_KERNEL && d < r->ndevices; d++)
        if (k->per_dev[d].n && floor_of(r, d) > 0 && mean < NEAR_FLOOR_FACTOR * floor_of(r, d))
            return true;
    return false;
}

struct totals {
    uint64_t calls, timed, warmup, captured, dropped, failed, incomplete, ungated, in_graph;
    uint64_t unsampled, by_nodes, hw_timed, outside;
};

static struct totals sum_totals(const struct report *r, const struct row *rows, size_t n)
{
    struct totals t = { 0 };

    /* Launches of kernels the full table could not hold belong to no row. */
    t.calls = t.dropped = r->drops[DROP_TABLE_FULL];

    for (size_t i = 0; i < n; i++) {
        t.calls += rows[i].k->calls;
        t.timed += rows[i].all.n;
        t.warmup += rows[i].k->warmup_skipped;
        t.captured += rows[i].k->captured;
        t.dropped += rows[i].k->dropped;
        t.failed += rows[i].k->failed;
        t.incomplete += rows[i].k->incomplete;
        t.ungated += rows[i].k->ungated;
        t.in_graph += rows[i].k->in_graph;
        t.unsampled += rows[i].k->unsampled;
        t.by_nodes += rows[i].k->by_nodes;
        t.hw_timed += rows[i].k->hw_timed;
        t.outside += rows[i].k->outside_range;
    }
    return t;
}

static const char *const drop_names[DROP_NREASONS] = {
    "pool_exhausted", "event_error", "no_context", "table_full", "shutdown", "gate_timeout",
    "gate_late",
};

static int finish(FILE *f)
{
    if (fflush(f) != 0 || ferror(f))
        return -1;
    return 0;
}

/* The run's conditions (conditions.h) for the report's devices: the header's lines, or the
 * JSON's "conditions" member. */
static void report_conditions(FILE *f, const struct report *r, bool json)
{
    int ordinals[64], n = 0;

    for (int d = 0; d < r->ndevices && n < 64; d++)
        ordinals[n++] = r->devices[d].ordinal;
    if (json)
        cond_write_json(f, r->conditions, ordinals, n);
    else
        cond_write_text(f, r->conditions, ordinals, n);
}

/* ---- text ---- */

#define NAME_WIDTH 72

/* The length of s cut to at most max bytes, between UTF-8 characters: a cut that would fall
 * inside a well-formed sequence moves back to its start. */
static size_t utf8_cut(const char *s, size_t max)
{
    size_t n = strnlen(s, max + 1), k;

    if (n <= max)
        return n;
    /* Back over at most 3 continuation bytes to the byte that starts their sequence. */
    for (k = max; k > 0 && max - k < 3 && ((unsigned char)s[k] & 0xC0) == 0x80; k--)
        ;
    return k < max && ((unsigned char)s[k] & 0xC0) == 0xC0 ? k : max;
}

static int cmp_shortname(const void *a, const void *b)
{
    const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
    int c = strcmp(x->shortname, y->shortname);

    /* Equal texts in row order, so that the result never depends on qsort's order. */
    return c ? c : (x < y ? -1 : x > y);
}

/* Fills each row's short name. A row whose full name is needed to tell it apart (its
 * middle was elided, or another row shortens to the same text) gets a reference number,
 * listed under "Full names", in row order. Returns how many references were handed out, or
 * -1 when out of memory (no references then). Sorts the short names: O(n log n). */
static int name_column(struct row *rows, size_t n)
{
    int nref = 0;
    bool *mark = calloc(n ? n : 1, sizeof *mark);
    struct row **by = malloc((n ? n : 1) * sizeof *by);

    for (size_t i = 0; i < n; i++) {
        const char *full = row_name(&rows[i]);
        if (rows[i].k->kind == REPORT_KERNEL)
            rows[i].ref = report_short_name(full, rows[i].shortname, sizeof rows[i].shortname,
                                            NAME_WIDTH) == 2;
        else
            snprintf(rows[i].shortname, sizeof rows[i].shortname, "%.*s",
                     (int)utf8_cut(full, sizeof rows[i].shortname - 1), full);
    }
    if (!mark || !by) {
        free(mark);
        free(by);
        for (size_t i = 0; i < n; i++)
            rows[i].ref = 0;
        return -1;
    }
    /* Rows that shorten to the same text are neighbours once sorted. */
    for (size_t i = 0; i < n; i++)
        by[i] = &rows[i];
    qsort(by, n, sizeof *by, cmp_shortname);
    for (size_t i = 0; i + 1 < n; i++)
        if (strcmp(by[i]->shortname, by[i + 1]->shortname) == 0)
            mark[by[i] - rows] = mark[by[i + 1] - rows] = true;
    for (size_t i = 0; i < n; i++)
        rows[i].ref = rows[i].ref || mark[i] ? ++nref : 0;
    free(mark);
    free(by);
    return nref;
}

/* Merges a kernel's CUPTI samples over its devices. */
/* KTIME_TIMER=both: per kernel, the events' mean against the hardware's. */
static void bias_table(FILE *f, const struct report *r, const struct row *rows)
{
    fprintf(f, "\nevents against the hardware (CUPTI), per kernel: the events' bias is their mean "
               "minus the hardware's\n");
    fprintf(f, "%9s %11s %9s %11s %11s  %s\n", "Timed", "Events us", "HW timed", "HW us",
            "Bias us", "Kernel");
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct row *w = &rows[i];
        struct stats h = all_devices(r, w->k->hw);
        if (w->k->kind != REPORT_KERNEL || (w->all.n == 0 && h.n == 0))
            continue;
        if (w->all.n && h.n)
            fprintf(f, "%9llu %11.3f %9llu %11.3f %+11.3f  ", (unsigned long long)w->all.n,
                    w->all.mean, (unsigned long long)h.n, h.mean, w->all.mean - h.mean);
        else if (h.n)
            fprintf(f, "%9llu %11s %9llu %11.3f %11s  ", (unsigned long long)w->all.n, "-",
                    (unsigned long long)h.n, h.mean, "-");
        else
            fprintf(f, "%9llu %11.3f %9llu %11s %11s  ", (unsigned long long)w->all.n,
                    w->all.mean, 0ULL, "-", "-");
        text_put(f, w->shortname);
        fputc('\n', f);
    }
}

/* The notes after a row: what happened to the calls that were not timed. */
static void text_notes(FILE *f, const struct report_kernel *k, uint64_t timed, bool nf)
{
    bool few = timed > 0 && timed < FEW_SAMPLES;

    if (!(k->captured || k->dropped || k->failed || k->incomplete || k->in_graph ||
          k->by_nodes || k->outside_range || (k->unsampled && k->kind == REPORT_MEMOP) || nf ||
          few))
        return;
    const char *sep = " (";
    if (few)
        fprintf(f, "%sfew samples", sep), sep = ", ";
    if (nf)
        fprintf(f, "%snear floor", sep), sep = ", ";
    if (k->in_graph)
        fprintf(f, "%s%llu in graphs", sep, (unsigned long long)k->in_graph), sep = ", ";
    if (k->by_nodes)
        fprintf(f, "%s%llu timed by their kernel nodes", sep, (unsigned long long)k->by_nodes),
            sep = ", ";
    if (k->outside_range)
        fprintf(f, "%s%llu outside range", sep, (unsigned long long)k->outside_range), sep = ", ";
    if (k->unsampled && k->kind == REPORT_MEMOP)
        fprintf(f, "%s%llu not sampled", sep, (unsigned long long)k->unsampled), sep = ", ";
    if (k->captured)
        fprintf(f, "%s%llu captured", sep, (unsigned long long)k->captured), sep = ", ";
    if (k->dropped)
        fprintf(f, "%s%llu dropped", sep, (unsigned long long)k->dropped), sep = ", ";
    if (k->failed)
        fprintf(f, "%s%llu failed", sep, (unsigned long long)k->failed), sep = ", ";
    if (k->incomplete)
        fprintf(f, "%s%llu incomplete", sep, (unsigned long long)k->incomplete);
    fputc(')', f);
}

/* A memory operation's throughput over its timed calls, in GB/s (10^9 bytes), or -1. */
static double memop_gbps(const struct report_kernel *k, const struct stats *s)
{
    return s->n && s->sum > 0 ? (double)k->timed_bytes / s->sum / 1000.0 : -1;
}

/* A range's line: its name (quoted) or "outside every range", and its figures. */
static void region_head(FILE *f, const struct report_region *g)
{
    if (g->name) {
        fputs("range    \"", f);
        text_put(f, g->name);
        fprintf(f, "\": %llu closed, %.3f ms of wall time", (unsigned long long)g->ranges,
                g->wall_ms);
        if (g->open)
            fprintf(f, ", %llu open at exit", (unsigned long long)g->open);
    } else {
        fputs("range    outside every range", f);
    }
    fprintf(f, "; %llu timed launches, %.3f ms of GPU time\n", (unsigned long long)g->timed,
            g->total_us / 1000.0);
}

static int cmp_row_mangled(const void *a, const void *b)
{
    const struct row *x = *(const struct row *const *)a, *y = *(const struct row *const *)b;
    uintptr_t p = (uintptr_t)x->k->mangled, q = (uintptr_t)y->k->mangled;

    if (p != q)
        return p < q ? -1 : 1;
    return x < y ? -1 : x > y;
}

/* The first of the rows (sorted by cmp_row_mangled, n of them) whose kernel's mangled name is
 * the string at mangled (the same pointer), or NULL. */
static const struct row *row_of_mangled(const struct row *const *by, size_t n, const char *mangled)
{
    size_t lo = 0, hi = n;

    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((uintptr_t)by[mid]->k->mangled < (uintptr_t)mangled)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < n && by[lo]->k->mangled == mangled ? by[lo] : NULL;
}

/* The ranges' sections (NVTX, ktime_range_push), after the memory operations. A kernel is named
 * as in the kernels' table (rows, n), with its [n] when the name was cut there. */
static void regions_text(FILE *f, const struct report *r, const struct row *rows, size_t n)
{
    const struct row **by;

    if (!r->regions)
        return;
    /* The kernels' rows by mangled name, to find each range's kernels in O(log n). */
    by = malloc((n ? n : 1) * sizeof *by);
    for (size_t i = 0; by && i < n; i++)
        by[i] = &rows[i];
    if (by)
        qsort(by, n, sizeof *by, cmp_row_mangled);
    fprintf(f, "\nranges: each timed launch under the %s range open on its thread when it was made "
               "(KTIME_REGION);\nNVTX: %s\n",
            r->region_mode ? r->region_mode : "innermost", r->nvtx ? r->nvtx : "not injected");
    if (r->region_unmatched_pops || r->region_too_deep)
        fprintf(f, "(%llu pops without a range open; %llu pushes deeper than 64, not attributed)\n",
                (unsigned long long)r->region_unmatched_pops,
                (unsigned long long)r->region_too_deep);
    for (size_t i = 0; i < r->nregions; i++) {
        const struct report_region *g = &r->regions[i];
        region_head(f, g);
        if (!g->nrows)
            continue;
        fprintf(f, "%7s %12s %9s %11s %11s %11s %11s %11s %11s  %s\n", "Time%", "Total ms", "Timed",
                "Mean us", "Med us", "p99 us", "Min us", "Max us", "Stddev us", "Kernel");
        for (size_t j = 0; j < g->nrows; j++) {
            const struct report_region_row *w = &g->rows[j];
            const struct row *kr = by ? row_of_mangled(by, n, w->mangled) : NULL;
            char shortname[NAME_WIDTH + 8];
            if (kr)
                snprintf(shortname, sizeof shortname, "%s", kr->shortname);
            else
                report_short_name(w->name ? w->name : w->mangled, shortname, sizeof shortname,
                                  NAME_WIDTH);
            fprintf(f, "%7.2f %12.3f %9llu %11.3f ",
                    g->total_us > 0 ? 100.0 * w->st.sum / g->total_us : 0.0, w->st.sum / 1000.0,
                    (unsigned long long)w->st.n, w->st.mean);
            text_quantiles(f, w->sk, &w->st, "-");
            fprintf(f, "%11.3f %11.3f %11.3f  ", w->st.min, w->st.max, stats_stddev(&w->st));
            text_put(f, shortname);
            if (kr && kr->ref)
                fprintf(f, " [%d]", kr->ref);
            fputc('\n', f);
        }
    }
    free(by);
}

/* The memory operations' own table, after the kernels'. */
static void memops_text(FILE *f, const struct report *r)
{
    if (!r->memops || !r->nmemops)
        return;
    fprintf(f, "\nmemory operations: copies and sets, each between an event pair on its stream as a "
               "launch is;\nnever inside a kernel's interval (KTIME_MEMOPS=0: not timed)\n");
    fprintf(f, "%12s %9s %7s %9s %11s %11s %11s %11s %12s %9s  %s\n", "Total ms", "Calls",
            "Warmup", "Timed", "Mean us", "Med us", "Min us", "Max us", "Total MB", "GB/s",
            "Kind");
    for (size_t i = 0; i < r->nmemops; i++) {
        const struct report_kernel *k = &r->memops_rows[i];
        struct stats s = all_devices(r, k->per_dev);
        double gbps = memop_gbps(k, &s);
        if (s.n > 0) {
            fprintf(f, "%12.3f %9llu %7llu %9llu %11.3f ", s.sum / 1000.0,
                    (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped,
                    (unsigned long long)s.n, s.mean);
            double med = quantile(k->sk, &s, 0.5);
            if (med >= 0)
                fprintf(f, "%11.3f ", med);
            else
                fprintf(f, "%11s ", "-");
            fprintf(f, "%11.3f %11.3f %12.3f ", s.min, s.max, (double)k->bytes / 1e6);
            if (gbps >= 0)
                fprintf(f, "%9.2f  %s", gbps, k->name ? k->name : k->mangled);
            else
                fprintf(f, "%9s  %s", "-", k->name ? k->name : k->mangled);
        } else {
            fprintf(f, "%12s %9llu %7llu %9llu %11s %11s %11s %11s %12.3f %9s  %s", "-",
                    (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped, 0ULL,
                    "-", "-", "-", "-", (double)k->bytes / 1e6, "-",
                    k->name ? k->name : k->mangled);
        }
        text_notes(f, k, s.n, false);
        fputc('\n', f);
    }
}

int report_write_text(FILE *f, struct report *r)
{
    double grand;
    struct row *rows = make_rows(r, &grand);
    struct totals t;
    int nref = 0;

    if (!rows)
        return -1;
    t = sum_totals(r, rows, r->nkernels);
    nref = name_column(rows, r->nkernels);

    if (r->build && *r->build)
        fprintf(f, "ktime %s (git %s): GPU time per kernel, from %s\n", r->version, r->build,
                source_words(r));
    else
        fprintf(f, "ktime %s: GPU time per kernel, from %s\n", r->version, source_words(r));
    fprintf(f, "command  ");
    for (int i = 0; i < r->argc; i++) {
        fputs(i ? " " : "", f);
        text_put(f, r->argv[i]);
    }
    fprintf(f, "\npid      %ld\n", r->pid);
    if (r->host || r->rank) {
        fputs("host     ", f);
        text_put(f, r->host ? r->host : "unknown");
        if (r->rank) {
            fprintf(f, ", rank %s", r->rank);
            if (r->world_size > 0)
                fprintf(f, " of %ld", r->world_size);
            if (r->local_rank)
                fprintf(f, " (local rank %s)", r->local_rank);
        }
        fputc('\n', f);
    }
    for (int d = 0; d < r->ndevices; d++) {
        fprintf(f, "gpu %-4d ", r->devices[d].ordinal);
        text_put(f, r->devices[d].name);
        fprintf(f, ", driver %s%sCUDA %d.%d\n", r->devices[d].driver,
                *r->devices[d].driver ? ", " : "", r->devices[d].driver_version / 1000,
                r->devices[d].driver_version % 1000 / 10);
    }
    if (r->ndevices == 0)
        fprintf(f, "gpu      none timed\n");
    for (int d = 0; d < r->ndevices; d++) {
        const struct report_device *v = &r->devices[d];
        if (v->floor_events_us <= 0 && v->floor_hw_us <= 0)
            continue;
        fprintf(f, "floor    gpu %d: an empty kernel reads", v->ordinal);
        if (v->floor_events_us > 0)
            fprintf(f, " %.3f us with events", v->floor_events_us);
        if (v->floor_hw_us > 0)
            fprintf(f, "%s%.3f us in hardware (CUPTI)", v->floor_events_us > 0 ? ", " : " ",
                    v->floor_hw_us);
        fprintf(f, "; a kernel under %.0fx the timer's floor is marked \"near floor\"%s\n",
                NEAR_FLOOR_FACTOR,
                timer_is(r, "cupti") ? "" : " (KTIME_TIMER=cupti reads it without the events' bias)");
    }
    fprintf(f, "warmup   the first %ld launches of each kernel are not timed (KTIME_WARMUP)\n",
            r->warmup);
    if (r->group_shape)
        fprintf(f, "shapes   under each kernel, its timed samples by launch shape: grid, block and\n"
                   "         dynamic shared memory in bytes, the %d most timed (KTIME_GROUP=shape)\n",
                SHAPE_SHOW);
    if (r->flush_l2) {
        fprintf(f, "cache    KTIME_FLUSH_L2: ");
        if (r->flush_contexts)
            fprintf(f, "%.1f MiB overwritten on the launch's stream before each timed launch,\n"
                       "         outside its interval: samples start with a cold L2 (%llu flushes",
                    (double)r->flush_bytes / 1048576.0, (unsigned long long)r->flushes);
        else
            fprintf(f, "on, but no context had a scratch buffer: samples are warm (0 flushes");
        if (r->flush_failed)
            fprintf(f, "; %llu refused by the driver, those samples warm",
                    (unsigned long long)r->flush_failed);
        if (r->flush_unavailable && r->flush_contexts)
            fprintf(f, "; no buffer in %u of %u contexts, their samples warm", r->flush_unavailable,
                    r->flush_unavailable + r->flush_contexts);
        fprintf(f, ")\n");
    }
    if (r->range && strncmp(r->range, "nvtx:", 5) == 0)
        fprintf(f, "range    KTIME_RANGE=%s: only launches while a range %s is open (on any "
                   "thread) are timed;\n         %llu ranges (%llu pushes, %llu pops)%s\n",
                r->range, r->range + 5, (unsigned long long)r->ranges,
                (unsigned long long)r->range_starts, (unsigned long long)r->range_stops,
                r->range_open ? ", the last open at exit" : "");
    else if (r->range)
        fprintf(f, "range    KTIME_RANGE=%s: only launches between cuProfilerStart and "
                   "cuProfilerStop are timed;\n         %llu ranges (%llu starts, %llu stops)%s\n",
                r->range, (unsigned long long)r->ranges, (unsigned long long)r->range_starts,
                (unsigned long long)r->range_stops, r->range_open ? ", the last open at exit" : "");
    if (timer_is(r, "cupti"))
        fprintf(f, "method   CUPTI activity records: the hardware's start and end of each kernel\n"
                   "         (KTIME_TIMER=cupti); no events, no launch gate\n");
    else if (timer_is(r, "both"))
        fprintf(f, "method   a CUDA event pair on the launch's own stream around every launch,\n"
                   "         and CUPTI's hardware start and end of the same kernels (KTIME_TIMER=both):\n"
                   "         the table shows the events; their bias over the hardware is below it\n");
    else
        fprintf(f, "method   a CUDA event pair on the launch's own stream around every launch;\n"
                   "         each interval includes the GPU's grid launch latency (a few us)\n");
    if (r->timer_note)
        fprintf(f, "timer    KTIME_TIMER=%s: %s\n",
                r->timer_requested ? r->timer_requested : "events", r->timer_note);
    if (!timer_is(r, "cupti") || r->timer_note)
        fprintf(f, "gate     %s\n",
                gate_is(r, "auto")
                    ? "auto: a stream that may be idle is held until the launch is queued; on a busy\n"
                      "         one each launch is checked to be queued before its start (KTIME_GATE)"
                : gate_is(r, "on") ? "on: the stream is held until the launch is queued (KTIME_GATE)"
                                   : "off: a launch reaching an idle stream also counts its submission time");
    if (r->gate_unavailable)
        fprintf(f, "         (KTIME_GATE=%s, but launch gates could not be set up in %u of %d "
                   "contexts: no pinned memory; their launches were not gated)\n",
                r->gate_requested ? r->gate_requested : r->gate, r->gate_unavailable,
                r->contexts);
    report_conditions(f, r, false);
    fputc('\n', f);

    fprintf(f, "%7s %12s %9s %7s %9s %11s %11s %11s %11s %11s %11s  %s\n", "Time%", "Total ms",
            "Calls", "Warmup", "Timed", "Mean us", "Med us", "p99 us", "Min us", "Max us",
            "Stddev us", "Kernel");
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct row *w = &rows[i];
        const struct report_kernel *k = w->k;
        if (w->all.n > 0) {
            fprintf(f, "%7.2f %12.3f %9llu %7llu %9llu %11.3f ",
                    grand > 0 ? 100.0 * w->total_us / grand : 0.0, w->total_us / 1000.0,
                    (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped,
                    (unsigned long long)w->all.n, w->all.mean);
            text_quantiles(f, k->sk, &w->all, "-");
            fprintf(f, "%11.3f %11.3f %11.3f  ", w->all.min, w->all.max, stats_stddev(&w->all));
        } else {
            fprintf(f, "%7s %12s %9llu %7llu %9llu %11s %11s %11s %11s %11s %11s  ", "-", "-",
                    (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped, 0ULL,
                    "-", "-", "-", "-", "-", "-");
        }
        text_put(f, w->shortname);
        if (w->ref)
            fprintf(f, " [%d]", w->ref);
        text_notes(f, k, w->all.n, w->all.n && near_floor(r, k, w->all.mean));
        fputc('\n', f);
        /* A kernel that ran on several GPUs gets one line per GPU under it. */
        int ndev = 0;
        for (int d = 0; d < r->ndevices; d++)
            ndev += k->per_dev[d].n > 0;
        for (int d = 0; ndev > 1 && d < r->ndevices; d++) {
            const struct stats *s = &k->per_dev[d];
            if (s->n == 0)
                continue;
            fprintf(f, "%7.2f %12.3f %9s %7s %9llu %11.3f ",
                    grand > 0 ? 100.0 * s->sum / grand : 0.0, s->sum / 1000.0, "", "",
                    (unsigned long long)s->n, s->mean);
            text_quantiles(f, dev_sketch(k, d), s, "");
            fprintf(f, "%11.3f %11.3f %11.3f    on gpu %d\n", s->min, s->max, stats_stddev(s),
                    r->devices[d].ordinal);
        }
        if (r->group_shape)
            text_shapes(f, k->shapes, grand);
    }
    if (r->nkernels == 0)
        fprintf(f, "(no kernel launches)\n");

    if (nref > 0) {
        fprintf(f, "\nFull names\n");
        for (size_t i = 0; i < r->nkernels; i++)
            if (rows[i].ref) {
                fprintf(f, "[%d] ", rows[i].ref);
                text_put(f, row_name(&rows[i]));
                fputc('\n', f);
            }
    }

    if (timer_is(r, "both"))
        bias_table(f, r, rows);
    memops_text(f, r);
    regions_text(f, r, rows, r->nkernels);
    fputc('\n', f);
    char unsampled_words[48] = "", node_words[96] = "", outside_words[48] = "";
    if (r->range)
        snprintf(outside_words, sizeof outside_words, "%llu outside range, ",
                 (unsigned long long)t.outside);
    if (t.unsampled)
        snprintf(unsampled_words, sizeof unsampled_words, "%llu not sampled, ",
                 (unsigned long long)t.unsampled);
    if (t.by_nodes)
        snprintf(node_words, sizeof node_words, "%llu graph launches timed by their kernel nodes, ",
                 (unsigned long long)t.by_nodes);
    /* Under the CUPTI timer a graph's kernel runs are rows' samples, counted with the
     * launches; with both timers the rows are the events', and those runs only CUPTI's. */
    bool hw_rows = timer_is(r, "cupti");
    if (t.in_graph)
        fprintf(f, "graphs   %llu kernel runs inside CUDA graphs, from CUPTI's records (%s)\n",
                (unsigned long long)t.in_graph,
                hw_rows ? "counted below with the launches"
                        : "in the hardware's columns only, not counted below");
    fprintf(f,
            "launches %llu seen: %llu timed, %s%s%s%llu warmup, %llu captured, %llu dropped, "
            "%llu failed, %llu incomplete at exit\n",
            (unsigned long long)(t.calls + (hw_rows ? t.in_graph : 0)),
            (unsigned long long)t.timed, unsampled_words, node_words, outside_words,
            (unsigned long long)t.warmup, (unsigned long long)t.captured,
            (unsigned long long)t.dropped, (unsigned long long)t.failed,
            (unsigned long long)t.incomplete);
    if (t.dropped) {
        fprintf(f, "dropped ");
        for (int i = 0; i < DROP_NREASONS; i++)
            fprintf(f, "%s %s %llu", i ? "," : "", drop_names[i],
                    (unsigned long long)r->drops[i]);
        fputc('\n', f);
    }
    if (t.ungated && !gate_is(r, "off"))
        fprintf(f, "ungated  %llu of the timed launches found the GPU behind (or were a kernel's first)\n",
                (unsigned long long)t.ungated);
    if (r->cupti_dropped || r->cupti_refused)
        fprintf(f, "cupti    %llu records dropped by CUPTI; %llu times no free buffer "
                   "(KTIME_CUPTI_BUFFER_MB)\n", (unsigned long long)r->cupti_dropped,
                (unsigned long long)r->cupti_refused);
    if (hw_rows && t.hw_timed < t.timed)
        fprintf(f, "timers   %llu of the timed launches from CUPTI's records, %llu with CUDA "
                   "events (after the hand-over)\n", (unsigned long long)t.hw_timed,
                (unsigned long long)(t.timed - t.hw_timed));
    if (t.unsampled)
        fprintf(f, "sampled  about 1 in %ld launches timed after warmup (KTIME_SAMPLE): %llu not "
                   "timed; Total ms and Time%% are estimates, mean x launches\n",
                r->sample, (unsigned long long)t.unsampled);
    fprintf(f, "%s %.3f ms in all\n", t.unsampled ? "total   ~" : "timed   ", grand / 1000.0);
    if (r->note)
        fprintf(f, "note     %s\n", r->note);
    free(rows);
    return finish(f);
}

/* ---- JSON ---- */

/* The length of the well-formed UTF-8 sequence at p (Unicode 15, table 3-7: no overlong
 * forms, no surrogates, nothing past U+10FFFF), or 0 when p starts none. A NUL ends any
 * sequence, so this never reads past the string's end. */
static size_t utf8_seq(const unsigned char *p)
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

void report_json_string(FILE *f, const char *s)
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

/* Whether s is well-formed UTF-8 throughout. */
static bool utf8_ok(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
        size_t n = utf8_seq(p);
        if (n == 0)
            return false;
        p += n;
    }
    return true;
}

/* s's bytes as a JSON string of hex digits: what the text report prints where the JSON's
 * string has U+FFFD. */
static void json_hex(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p; p++)
        fprintf(f, "%02x", *p);
    fputc('"', f);
}

/* pre "key_bytes": hex, only when s is not well-formed UTF-8 (report-format.md). */
static void json_bytes_member(FILE *f, const char *pre, const char *key, const char *s)
{
    if (utf8_ok(s))
        return;
    fprintf(f, "%s\"%s_bytes\": ", pre, key);
    json_hex(f, s);
}

/* Numbers that must round-trip exactly. */
static void json_num(FILE *f, double v)
{
    fprintf(f, "%.17g", v);
}

/* sep "p50_us": v (null when none), and likewise p90 and p99. */
static void json_quantiles(FILE *f, const char *sep, const struct sketch *sk,
                           const struct stats *s)
{
    for (int j = 0; j < NQUANTILES; j++) {
        double v = quantile(sk, s, quantile_q[j]);
        fprintf(f, "%s\"%s\": ", sep, quantile_key[j]);
        if (v >= 0)
            json_num(f, v);
        else
            fputs("null", f);
    }
}

/* The row's sketch, sparse: [bucket, lower edge us, samples] for each bucket that has any
 * (sketch.h gives the buckets; two reports' histograms merge by adding counts). */
static void json_histogram(FILE *f, const char *lead, const struct sketch *s)
{
    const char *sep = "";

    fprintf(f, "%s\"histogram\": { \"gamma\": ", lead);
    json_num(f, SKETCH_GAMMA);
    fprintf(f, ", \"first_edge_us\": ");
    json_num(f, SKETCH_MIN_US);
    fprintf(f, ", \"buckets\": [");
    for (int i = 0; s && i < SKETCH_BUCKETS; i++) {
        if (!s->c[i])
            continue;
        fprintf(f, "%s[%d, ", sep, i);
        json_num(f, sketch_lower(i));
        fprintf(f, ", %u]", (unsigned)s->c[i]);
        sep = ", ";
    }
    fprintf(f, "] }");
}

/* ", \"keys[i]\": v[i]" for each of n numbers. */
/* s as a JSON string, or null. */
static void json_string_or_null(FILE *f, const char *s)
{
    if (s)
        report_json_string(f, s);
    else
        fputs("null", f);
}

static void json_nums(FILE *f, const char *const *keys, const double *v, int n)
{
    for (int i = 0; i < n; i++) {
        fprintf(f, ", \"%s\": ", keys[i]);
        json_num(f, v[i]);
    }
}

/* The statistics of one launch shape (or of the shapes folded into "other"), as members of
 * an object already opened. */
static void json_shape_stats(FILE *f, const struct stats *st, const struct sketch *sk,
                             double grand)
{
    static const char *const keys[] = { "total_ms", "percent", "mean_us", "min_us", "max_us",
                                        "stddev_us", "sum_us", "m2_us2" };
    const double v[] = { st->sum / 1000.0, grand > 0 ? 100.0 * st->sum / grand : 0.0, st->mean,
                         st->min, st->max, stats_stddev(st), st->sum, st->m2 };

    fprintf(f, "\"timed\": %llu", (unsigned long long)st->n);
    json_nums(f, keys, v, 8);
    json_quantiles(f, ", ", sk, st);
    json_histogram(f, ",\n          ", sk);
}

/* ",\n      \"shapes\": [...], \"other_shapes\": {...} or null": the kernel's samples by
 * launch shape, most timed first (shape.h), and those of the shapes past them. */
static void json_shapes(FILE *f, const struct shape_set *set, double grand)
{
    const char *sep = "";

    fprintf(f, ",\n      \"shapes\": [");
    for (uint32_t i = 0; set && i < set->n; i++) {
        const struct shape_row *w = set->rows[i];
        fprintf(f, "%s\n        { \"grid\": [%u, %u, %u], \"block\": [%u, %u, %u], "
                   "\"shared_bytes\": %u, ", sep, w->sh.grid[0], w->sh.grid[1], w->sh.grid[2],
                w->sh.block[0], w->sh.block[1], w->sh.block[2], w->sh.smem);
        json_shape_stats(f, &w->st, &w->sk, grand);
        fprintf(f, " }");
        sep = ",";
    }
    fprintf(f, "%s],\n      \"other_shapes\": ", *sep ? "\n      " : "");
    if (!set || !set->other.n) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{ \"shapes\": %llu, \"untracked\": %s, ",
            (unsigned long long)set->other_shapes, set->untracked ? "true" : "false");
    json_shape_stats(f, &set->other, &set->other_sk, grand);
    fprintf(f, " }");
}

/* ",\n  \"key\": v", or null for v < 0. */
static void json_member_long(FILE *f, const char *key, long v)
{
    fprintf(f, ",\n  \"%s\": ", key);
    if (v >= 0)
        fprintf(f, "%ld", v);
    else
        fputs("null", f);
}

/* A wall-clock time as a JSON string, ISO 8601 in UTC to the millisecond; null when 0. */
static void json_time(FILE *f, double unix_s)
{
    char buf[40];
    struct tm tm;
    time_t t = (time_t)unix_s;

    if (unix_s <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm)) {
        fputs("null", f);
        return;
    }
    fprintf(f, "\"%s.%03dZ\"", buf, (int)((unix_s - (double)t) * 1000) % 1000);
}

/* "regions": the ranges' sections, null when no range was pushed. */
static void regions_json(FILE *f, const struct report *r)
{
    static const char *const keys[] = { "total_ms", "percent", "mean_us", "min_us", "max_us",
                                        "stddev_us", "sum_us", "m2_us2" };

    if (!r->regions) {
        fputs("  \"regions\": null,\n", f);
        return;
    }
    fputs("  \"regions\": { \"attribution\": ", f);
    report_json_string(f, r->region_mode ? r->region_mode : "innermost");
    fputs(", \"nvtx\": ", f);
    report_json_string(f, r->nvtx ? r->nvtx : "not injected");
    fprintf(f, ", \"unmatched_pops\": %llu, \"too_deep\": %llu, \"ranges\": [",
            (unsigned long long)r->region_unmatched_pops, (unsigned long long)r->region_too_deep);
    for (size_t i = 0; i < r->nregions; i++) {
        const struct report_region *g = &r->regions[i];
        fprintf(f, "%s\n    { \"name\": ", i ? "," : "");
        json_string_or_null(f, g->name);
        fprintf(f, ", \"closed\": %llu, \"open_at_exit\": %llu, \"wall_ms\": ",
                (unsigned long long)g->ranges, (unsigned long long)g->open);
        json_num(f, g->wall_ms);
        fprintf(f, ", \"timed\": %llu, \"total_ms\": ", (unsigned long long)g->timed);
        json_num(f, g->total_us / 1000.0);
        fputs(", \"kernels\": [", f);
        for (size_t j = 0; j < g->nrows; j++) {
            const struct report_region_row *w = &g->rows[j];
            fprintf(f, "%s\n      { \"name\": ", j ? "," : "");
            report_json_string(f, w->name ? w->name : w->mangled);
            fputs(", \"mangled\": ", f);
            report_json_string(f, w->mangled);
            fprintf(f, ", \"kind\": \"%s\", \"timed\": %llu",
                    w->kind == REPORT_GRAPH ? "graph" : "kernel", (unsigned long long)w->st.n);
            json_nums(f, keys,
                      (const double[]){ w->st.sum / 1000.0,
                                        g->total_us > 0 ? 100.0 * w->st.sum / g->total_us : 0.0,
                                        w->st.mean, w->st.min, w->st.max, stats_stddev(&w->st),
                                        w->st.sum, w->st.m2 },
                      8);
            json_quantiles(f, ", ", w->sk, &w->st);
            fputs(" }", f);
        }
        fprintf(f, "%s] }", g->nrows ? "\n    " : "");
    }
    fprintf(f, "%s] },\n", r->nregions ? "\n  " : "");
}

/* "memops": one entry per kind seen, null when KTIME_MEMOPS=0. */
static void memops_json(FILE *f, const struct report *r)
{
    if (!r->memops) {
        fputs("  \"memops\": null,\n", f);
        return;
    }
    fputs("  \"memops\": [", f);
    for (size_t i = 0; i < r->nmemops; i++) {
        const struct report_kernel *k = &r->memops_rows[i];
        struct stats s = all_devices(r, k->per_dev);
        double gbps = memop_gbps(k, &s);
        static const char *const keys[] = { "total_ms", "mean_us", "min_us", "max_us",
                                            "stddev_us", "sum_us", "m2_us2" };

        fprintf(f, "%s\n    { \"kind\": ", i ? "," : "");
        report_json_string(f, k->name ? k->name : k->mangled);
        fprintf(f, ", \"calls\": %llu, \"warmup_skipped\": %llu, \"captured\": %llu, "
                   "\"dropped\": %llu, \"failed\": %llu, \"incomplete\": %llu, "
                   "\"outside_range\": %llu, \"unsampled\": %llu, \"timed\": %llu, "
                   "\"ungated\": %llu, \"bytes\": %llu, \"timed_bytes\": %llu",
                (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped,
                (unsigned long long)k->captured, (unsigned long long)k->dropped,
                (unsigned long long)k->failed, (unsigned long long)k->incomplete,
                (unsigned long long)k->outside_range, (unsigned long long)k->unsampled,
                (unsigned long long)s.n, (unsigned long long)k->ungated,
                (unsigned long long)k->bytes, (unsigned long long)k->timed_bytes);
        json_nums(f, keys,
                  (const double[]){ s.sum / 1000.0, s.mean, s.min, s.max, stats_stddev(&s), s.sum,
                                    s.m2 },
                  7);
        json_quantiles(f, ", ", k->sk, &s);
        fputs(", \"gb_per_s\": ", f);
        if (gbps >= 0)
            json_num(f, gbps);
        else
            fputs("null", f);
        fputs(" }", f);
    }
    fprintf(f, "%s],\n", r->nmemops ? "\n  " : "");
}

int report_write_json(FILE *f, struct report *r)
{
    double grand;
    struct row *rows = make_rows(r, &grand);
    struct totals t;

    if (!rows)
        return -1;
    t = sum_totals(r, rows, r->nkernels);

    fprintf(f, "{\n  \"schema_version\": %d,\n  \"ktime_version\": ", REPORT_SCHEMA_VERSION);
    report_json_string(f, r->version);
    fprintf(f, ",\n  \"ktime_build\": ");
    report_json_string(f, r->build ? r->build : "");
    fprintf(f, ",\n  \"command\": [");
    for (int i = 0; i < r->argc; i++) {
        fputs(i ? ", " : "", f);
        report_json_string(f, r->argv[i]);
    }
    fprintf(f, "]");
    bool argv_ok = true;
    for (int i = 0; i < r->argc; i++)
        argv_ok = argv_ok && utf8_ok(r->argv[i]);
    if (!argv_ok) {
        fprintf(f, ",\n  \"command_bytes\": [");
        for (int i = 0; i < r->argc; i++) {
            fputs(i ? ", " : "", f);
            json_hex(f, r->argv[i]);
        }
        fputc(']', f);
    }
    fprintf(f, ",\n  \"host\": ");
    json_string_or_null(f, r->host);
    if (r->host)
        json_bytes_member(f, ",\n  ", "host", r->host);
    /* Digits as the launcher wrote them ("007" is 7: JSON has no leading zeros). */
    json_member_long(f, "rank", r->rank ? strtol(r->rank, NULL, 10) : -1);
    json_member_long(f, "local_rank", r->local_rank ? strtol(r->local_rank, NULL, 10) : -1);
    json_member_long(f, "world_size", r->world_size > 0 ? r->world_size : -1);
    fprintf(f, ",\n  \"start_time\": ");
    json_time(f, r->start_unix);
    fprintf(f, ",\n  \"end_time\": ");
    json_time(f, r->end_unix);
    fprintf(f, ",\n  \"pid\": %ld,\n  \"timing_method\": \"%s\",\n  \"launch_gate\": %s,\n"
               "  \"launch_gate_mode\": \"%s\",\n  \"launch_gate_requested\": \"%s\",\n"
               "  \"launch_gate_unavailable_contexts\": %u,\n  \"contexts\": %d,\n"
               "  \"warmup\": %ld,\n  \"group\": \"%s\",\n",
            r->pid,
            timer_is(r, "cupti") ? "cupti-activity"
            : timer_is(r, "both") ? "cuda-events+cupti-activity" : "cuda-events",
            gate_is(r, "off") ? "false" : "true", r->gate ? r->gate : "off",
            r->gate_requested ? r->gate_requested : (r->gate ? r->gate : "off"),
            r->gate_unavailable, r->contexts, r->warmup, r->group_shape ? "shape" : "name");
    fprintf(f, "  \"timer\": { \"requested\": \"%s\", \"used\": \"%s\", \"note\": ",
            r->timer_requested ? r->timer_requested : "events", r->timer ? r->timer : "events");
    json_string_or_null(f, r->timer_note);
    fprintf(f, ", \"cupti_library\": ");
    json_string_or_null(f, r->cupti_library);
    fprintf(f, ", \"cupti_records_dropped\": %llu, \"cupti_buffers_refused\": %llu },\n",
            (unsigned long long)r->cupti_dropped, (unsigned long long)r->cupti_refused);
    if (r->range) {
        fputs("  \"range\": { \"mode\": ", f);
        report_json_string(f, r->range);
        fprintf(f, ", \"starts\": %llu, \"stops\": %llu, "
                   "\"ranges\": %llu, \"open_at_exit\": %s },\n",
                (unsigned long long)r->range_starts, (unsigned long long)r->range_stops,
                (unsigned long long)r->ranges, r->range_open ? "true" : "false");
    } else {
        fputs("  \"range\": null,\n", f);
    }
    if (r->flush_l2)
        fprintf(f, "  \"flush_l2\": { \"bytes\": %llu, \"flushes\": %llu, \"refused\": %llu, "
                   "\"contexts\": %u, \"contexts_without_buffer\": %u },\n",
                (unsigned long long)r->flush_bytes, (unsigned long long)r->flushes,
                (unsigned long long)r->flush_failed, r->flush_contexts, r->flush_unavailable);
    else
        fputs("  \"flush_l2\": null,\n", f);
    fprintf(f, "  \"devices\": [");
    for (int d = 0; d < r->ndevices; d++) {
        fprintf(f, "%s\n    { \"ordinal\": %d, \"name\": ", d ? "," : "", r->devices[d].ordinal);
        report_json_string(f, r->devices[d].name);
        json_bytes_member(f, ", ", "name", r->devices[d].name);
        fprintf(f, ", \"uuid\": ");
        json_string_or_null(f, r->devices[d].uuid[0] ? r->devices[d].uuid : NULL);
        fprintf(f, ", \"driver_version\": %d, \"driver\": ", r->devices[d].driver_version);
        report_json_string(f, r->devices[d].driver);
        fprintf(f, ", \"floor_events_us\": ");
        if (r->devices[d].floor_events_us > 0)
            json_num(f, r->devices[d].floor_events_us);
        else
            fputs("null", f);
        fprintf(f, ", \"floor_hw_us\": ");
        if (r->devices[d].floor_hw_us > 0)
            json_num(f, r->devices[d].floor_hw_us);
        else
            fputs("null", f);
        fprintf(f, " }");
    }
    fprintf(f, "%s],\n  ", r->ndevices ? "\n  " : "");
    report_conditions(f, r, true);
    fprintf(f, ",\n  \"kernels\": [");
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct row *w = &rows[i];
        const struct report_kernel *k = w->k;
        const char *sep = "";

        fprintf(f, "%s\n    {\n      \"name\": ", i ? "," : "");
        report_json_string(f, row_name(w));
        json_bytes_member(f, ",\n      ", "name", row_name(w));
        fprintf(f, ",\n      \"mangled\": ");
        report_json_string(f, k->mangled);
        fprintf(f, ",\n      \"kind\": \"%s\",\n      \"devices\": [",
                k->kind == REPORT_GRAPH ? "graph" : "kernel");
        for (int d = 0; d < r->ndevices; d++)
            if (k->per_dev[d].n > 0) {
                fprintf(f, "%s%d", sep, r->devices[d].ordinal);
                sep = ", ";
            }
        fprintf(f,
                "],\n      \"calls\": %llu,\n      \"warmup_skipped\": %llu,\n"
                "      \"captured\": %llu,\n      \"dropped\": %llu,\n      \"failed\": %llu,\n"
                "      \"incomplete\": %llu,\n      \"timed\": %llu,\n      \"ungated\": %llu,\n",
                (unsigned long long)k->calls, (unsigned long long)k->warmup_skipped,
                (unsigned long long)k->captured, (unsigned long long)k->dropped,
                (unsigned long long)k->failed, (unsigned long long)k->incomplete,
                (unsigned long long)w->all.n, (unsigned long long)k->ungated);
        fprintf(f, "      \"total_ms\": ");
        json_num(f, w->total_us / 1000.0);
        fprintf(f, ",\n      \"total_estimated\": %s,\n      \"unsampled\": %llu",
                k->unsampled ? "true" : "false", (unsigned long long)k->unsampled);
        fprintf(f, ",\n      \"timed_by_nodes\": %llu", (unsigned long long)k->by_nodes);
        fprintf(f, ",\n      \"outside_range\": %llu", (unsigned long long)k->outside_range);
        fprintf(f, ",\n      \"percent\": ");
        json_num(f, grand > 0 ? 100.0 * w->total_us / grand : 0.0);
        fprintf(f, ",\n      \"mean_us\": ");
        json_num(f, w->all.mean);
        fprintf(f, ",\n      \"min_us\": ");
        json_num(f, w->all.min);
        fprintf(f, ",\n      \"max_us\": ");
        json_num(f, w->all.max);
        fprintf(f, ",\n      \"stddev_us\": ");
        json_num(f, stats_stddev(&w->all));
        json_quantiles(f, ",\n      ", k->sk, &w->all);
        fprintf(f, ",\n      \"few_samples\": %s",
                w->all.n > 0 && w->all.n < FEW_SAMPLES ? "true" : "false");
        json_histogram(f, ",\n      ", k->sk);
        fprintf(f, ",\n      \"sum_us\": ");
        json_num(f, w->all.sum);
        fprintf(f, ",\n      \"m2_us2\": ");
        json_num(f, w->all.m2);
        fprintf(f, ",\n      \"in_graph\": %llu,\n      \"cupti_timed\": %llu,\n      \"near_floor\": %s",
                (unsigned long long)k->in_graph, (unsigned long long)k->hw_timed,
                w->all.n && near_floor(r, k, w->all.mean) ? "true" : "false");
        if (k->hw) {
            struct stats h = all_devices(r, k->hw);
            fprintf(f, ",\n      \"hw\": { \"timed\": %llu, \"mean_us\": ", (unsigned long long)h.n);
            json_num(f, h.mean);
            fprintf(f, ", \"min_us\": ");
            json_num(f, h.min);
            fprintf(f, ", \"max_us\": ");
            json_num(f, h.max);
            fprintf(f, ", \"stddev_us\": ");
            json_num(f, stats_stddev(&h));
            fprintf(f, ", \"sum_us\": ");
            json_num(f, h.sum);
            fprintf(f, ", \"m2_us2\": ");
            json_num(f, h.m2);
            fprintf(f, ", \"bias_us\": ");
            if (h.n && w->all.n)
                json_num(f, w->all.mean - h.mean);
            else
                fputs("null", f);
            fprintf(f, " }");
        }
        fprintf(f, ",\n      \"per_device\": [");
        sep = "";
        for (int d = 0; d < r->ndevices; d++) {
            const struct stats *s = &k->per_dev[d];
            if (s->n == 0)
                continue;
            static const char *const sums[] = { "sum_us", "m2_us2", "min_us", "max_us" };
            /* What the text's and the CSV's per-GPU lines show (ktime report renders them). */
            static const char *const shown[] = { "mean_us", "stddev_us", "percent" };
            fprintf(f, "%s\n        { \"device\": %d, \"timed\": %llu", sep,
                    r->devices[d].ordinal, (unsigned long long)s->n);
            json_nums(f, sums, (const double[]){ s->sum, s->m2, s->min, s->max }, 4);
            json_quantiles(f, ", ", dev_sketch(k, d), s);
            json_nums(f, shown,
                      (const double[]){ s->mean, stats_stddev(s),
                                        grand > 0 ? 100.0 * s->sum / grand : 0.0 }, 3);
            fprintf(f, " }");
            sep = ",";
        }
        fprintf(f, "%s]", *sep ? "\n      " : "");
        json_shapes(f, k->shapes, grand);
        fprintf(f, "\n    }");
    }
    fprintf(f, "%s],\n", r->nkernels ? "\n  " : "");
    memops_json(f, r);
    regions_json(f, r);
    fprintf(f,
            "  \"totals\": {\n    \"launches_seen\": %llu,\n    \"timed\": %llu,\n"
            "    \"ungated\": %llu,\n    \"warmup_skipped\": %llu,\n    \"captured\": %llu,\n    \"dropped\": %llu,\n"
            "    \"dropped_reasons\": {",
            (unsigned long long)t.calls, (unsigned long long)t.timed,
            (unsigned long long)t.ungated, (unsigned long long)t.warmup,
            (unsigned long long)t.captured, (unsigned long long)t.dropped);
    for (int i = 0; i < DROP_NREASONS; i++)
        fprintf(f, "%s \"%s\": %llu", i ? "," : "", drop_names[i],
                (unsigned long long)r->drops[i]);
    fprintf(f,
            " },\n    \"failed_launches\": %llu,\n    \"incomplete_at_exit\": %llu,\n"
            "    \"in_graph\": %llu,\n    \"timed_by_nodes\": %llu,\n    \"cupti_timed\": %llu,\n"
            "    \"unsampled\": %llu,\n    \"outside_range\": %llu,\n    \"sample\": %ld,\n"
            "    \"timed_total_ms\": ",
            (unsigned long long)t.failed, (unsigned long long)t.incomplete,
            (unsigned long long)t.in_graph, (unsigned long long)t.by_nodes,
            (unsigned long long)t.hw_timed, (unsigned long long)t.unsampled,
            (unsigned long long)t.outside,
            r->sample > 1 ? r->sample : 1L);
    json_num(f, grand / 1000.0);
    fprintf(f, "\n  }");
    if (r->note) {
        fprintf(f, ",\n  \"note\": ");
        report_json_string(f, r->note);
    }
    fprintf(f, "\n}\n");
    free(rows);
    return finish(f);
}

/* ---- CSV ---- */

/* A CSV text cell: the program's string with report_escape_char's escapes (so a record is one
 * line, and the value can be had back), a byte that begins no well-formed UTF-8 sequence as
 * U+FFFD (as the JSON), then a "'" before a cell that a spreadsheet would take for a formula
 * (OWASP: one that begins with =, +, -, @, tab or CR; a tab or CR is escaped here) or that
 * begins with "'" itself, so that a reader drops the first "'" of any cell that has one; then
 * quoted where RFC 4180 needs it (a comma or a quote, or a space at either end), quotes
 * doubled. docs/report-format.md. */
void report_csv_field(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    size_t n = strlen((const char *)p);
    bool quote = n && (p[0] == ' ' || p[n - 1] == ' ');
    char esc[8];

    for (size_t i = 0; i < n && !quote; i++)
        quote = p[i] == ',' || p[i] == '"';
    if (quote)
        fputc('"', f);
    if (n && strchr("=+-@'", p[0]))
        fputc('\'', f);
    while (*p) {
        size_t k, e = report_escape_char((const char *)p, esc, &k);
        if (e)
            fwrite(esc, 1, e, f);
        else if (!utf8_seq(p))
            fputs("\xef\xbf\xbd", f); /* U+FFFD */
        else if (*p == '"')
            fputs("\"\"", f);
        else
            fwrite(p, 1, k, f);
        p += k;
    }
    if (quote)
        fputc('"', f);
}

static void csv_num(FILE *f, double v)
{
    fprintf(f, ",%.17g", v);
}

static void csv_u(FILE *f, uint64_t v)
{
    fprintf(f, ",%llu", (unsigned long long)v);
}

/* ",p50,p90,p99", each empty when none. */
static void csv_quantiles(FILE *f, const struct sketch *sk, const struct stats *s)
{
    for (int j = 0; j < NQUANTILES; j++) {
        double v = quantile(sk, s, quantile_q[j]);
        if (v >= 0)
            csv_num(f, v);
        else
            fputc(',', f);
    }
}

static void csv_stats(FILE *f, const struct stats *s)
{
    csv_num(f, s->mean);
    csv_num(f, s->min);
    csv_num(f, s->max);
    csv_num(f, stats_stddev(s));
    csv_num(f, s->sum);
    csv_num(f, s->m2);
}

/* A row with only samples' columns (a GPU's, or a launch shape's): the kernel's name, kind
 * and `device`, then timed, total_ms, percent, the statistics and quantiles; the counts are
 * the kernel's row's. Up to bias_us; the caller ends the row. */
static void csv_sub_row(FILE *f, const struct row *w, const char *device, const struct stats *s,
                        const struct sketch *sk, double grand)
{
    report_csv_field(f, row_name(w));
    fputc(',', f);
    report_csv_field(f, w->k->mangled);
    fprintf(f, ",%s,%s,,,,,,,%llu,,,,,", w->k->kind == REPORT_GRAPH ? "graph" : "kernel", device,
            (unsigned long long)s->n);
    csv_num(f, s->sum / 1000.0);
    fputc(',', f);
    csv_num(f, grand > 0 ? 100.0 * s->sum / grand : 0.0);
    csv_stats(f, s);
    csv_quantiles(f, sk, s);
    fputs(",,,,,", f);
}

int report_write_csv(FILE *f, struct report *r)
{
    double grand;
    struct row *rows = make_rows(r, &grand);

    if (!rows)
        return -1;
    fputs("name,mangled,kind,device,calls,warmup_skipped,captured,dropped,failed,incomplete,"
          "timed,ungated,unsampled,timed_by_nodes,in_graph,cupti_timed,total_ms,total_estimated,"
          "percent,mean_us,min_us,max_us,stddev_us,sum_us,m2_us2,p50_us,p90_us,p99_us,"
          "few_samples,near_floor,hw_timed,hw_mean_us,bias_us,outside_range,grid,block,shared_bytes\r\n", f);
    for (size_t i = 0; i < r->nkernels; i++) {
        const struct row *w = &rows[i];
        const struct report_kernel *k = w->k;
        const char *kind = k->kind == REPORT_GRAPH ? "graph" : "kernel";
        int ndev = 0;

        /* The kernel's row (device "all"), then one per GPU when it ran on several. */
        for (int d = 0; d < r->ndevices; d++)
            ndev += k->per_dev[d].n > 0;
        report_csv_field(f, row_name(w));
        fputc(',', f);
        report_csv_field(f, k->mangled);
        fprintf(f, ",%s,all", kind);
        csv_u(f, k->calls);
        csv_u(f, k->warmup_skipped);
        csv_u(f, k->captured);
        csv_u(f, k->dropped);
        csv_u(f, k->failed);
        csv_u(f, k->incomplete);
        csv_u(f, w->all.n);
        csv_u(f, k->ungated);
        csv_u(f, k->unsampled);
        csv_u(f, k->by_nodes);
        csv_u(f, k->in_graph);
        csv_u(f, k->hw_timed);
        csv_num(f, w->total_us / 1000.0);
        fprintf(f, ",%s", k->unsampled ? "true" : "false");
        csv_num(f, grand > 0 ? 100.0 * w->total_us / grand : 0.0);
        if (w->all.n)
            csv_stats(f, &w->all);
        else
            fputs(",,,,,,", f);
        csv_quantiles(f, k->sk, &w->all);
        fprintf(f, ",%s,%s", w->all.n > 0 && w->all.n < FEW_SAMPLES ? "true" : "false",
                w->all.n && near_floor(r, k, w->all.mean) ? "true" : "false");
        if (k->hw) {
            struct stats h = all_devices(r, k->hw);
            csv_u(f, h.n);
            if (h.n)
                csv_num(f, h.mean);
            else
                fputc(',', f);
            if (h.n && w->all.n)
                csv_num(f, w->all.mean - h.mean);
            else
                fputc(',', f);
        } else {
            fputs(",,,", f);
        }
        csv_u(f, k->outside_range);
        fputs(",,,\r\n", f);
        for (int d = 0; ndev > 1 && d < r->ndevices; d++) {
            char dev[16];
            if (k->per_dev[d].n == 0)
                continue;
            snprintf(dev, sizeof dev, "%d", r->devices[d].ordinal);
            csv_sub_row(f, w, dev, &k->per_dev[d], dev_sketch(k, d), grand);
            fputs(",,,,\r\n", f);
        }
        for (uint32_t j = 0; r->group_shape && k->shapes && j < k->shapes->n; j++) {
            const struct shape_row *sr = k->shapes->rows[j];
            csv_sub_row(f, w, "all", &sr->st, &sr->sk, grand);
            fprintf(f, ",,%ux%ux%u,%ux%ux%u,%u\r\n", sr->sh.grid[0], sr->sh.grid[1],
                    sr->sh.grid[2], sr->sh.block[0], sr->sh.block[1], sr->sh.block[2], sr->sh.smem);
        }
        if (r->group_shape && k->shapes && k->shapes->other.n) {
            csv_sub_row(f, w, "all", &k->shapes->other, &k->shapes->other_sk, grand);
            fputs(",,other,other,\r\n", f);
        }
    }
    free(rows);
    return finish(f);
}

bool report_is_empty(const char *buf, size_t n)
{
    static const char csv_head[] = "name,mangled,kind,device,";
    static const char *const notes[] = { "\nnote     " REPORT_EMPTY_NOTE "\n",
                                         "\n  \"note\": \"" REPORT_EMPTY_NOTE "\"" };

    if (n == 0)
        return true;
    if (n > strlen(csv_head) && memcmp(buf, csv_head, strlen(csv_head)) == 0)
        return memchr(buf, '\n', n) == buf + n - 1; /* the header row, and nothing after it */
    if (n < 6 || (memcmp(buf, "ktime ", 6) != 0 && memcmp(buf, "{\n", 2) != 0))
        return false;
    for (size_t i = 0; i < sizeof notes / sizeof notes[0]; i++)
        if (memmem(buf, n, notes[i], strlen(notes[i])))
            return true;
    return false;
}
