/* test_merge.c - reports merged (src/report/merge*.c): the pairwise mean and M2 and the
 * histograms equal those of the union of the samples, whatever the order given, with or
 * without reading threads; the ranks' balance and its verdict (a straggler told by the
 * others' NCCL time, a rank without a report named); each kernel's rows per report kept up to
 * the limit and the spread beyond it; reports that cannot be merged refused, or left out and
 * named. The reports are written here as the library writes them (sketch.h's buckets). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "merge.h"
#include "reader.h"
#include "sketch.h"

static char dir[64];

static uint64_t rng = 0x2545F4914F6CDD1DULL;
static double uniform01(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return ((rng >> 11) + 0.5) / 9007199254740992.0;
}

/* Appends to *buf (a growing string). */
static void put(char **buf, const char *fmt, ...)
{
    va_list ap;
    size_t have = *buf ? strlen(*buf) : 0;
    char tmp[4096];

    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    assert_true(n >= 0 && (size_t)n < sizeof tmp);
    *buf = realloc(*buf, have + (size_t)n + 1);
    memcpy(*buf + have, tmp, (size_t)n + 1);
}

/* A kernel's row of the samples v[0..n-1] (microseconds), with their histogram. */
static void kernel(char **buf, const char *name, const double *v, size_t n, bool first)
{
    double sum = 0, mean = 0, m2 = 0, lo = INFINITY, hi = -INFINITY;
    struct sketch *sk = calloc(1, sizeof *sk);

    for (size_t i = 0; i < n; i++) {
        double d = v[i] - mean;
        mean += d / (double)(i + 1);
        m2 += d * (v[i] - mean);
        sum += v[i];
        lo = fmin(lo, v[i]);
        hi = fmax(hi, v[i]);
        sketch_add(sk, v[i]);
    }
    put(buf, "%s{\"name\": \"%s\", \"mangled\": \"%s\", \"kind\": \"kernel\", \"calls\": %zu, "
        "\"timed\": %zu, \"total_ms\": %.17g, \"sum_us\": %.17g, \"m2_us2\": %.17g, "
        "\"mean_us\": %.17g, \"min_us\": %.17g, \"max_us\": %.17g, \"per_device\": [{\"device\": 0, "
        "\"timed\": %zu, \"sum_us\": %.17g, \"m2_us2\": %.17g, \"min_us\": %.17g, \"max_us\": %.17g}], "
        "\"histogram\": {\"gamma\": 1.02, \"first_edge_us\": 0.05, \"buckets\": [",
        first ? "" : ", ", name, name, n, n, sum / 1000, sum, m2, mean, lo, hi, n, sum, m2, lo, hi);
    bool any = false;
    for (int i = 0; i < SKETCH_BUCKETS; i++)
        if (sk->c[i]) {
            put(buf, "%s[%d, %.17g, %u]", any ? ", " : "", i, sketch_lower(i), sk->c[i]);
            any = true;
        }
    put(buf, "]}}");
    free(sk);
}

/* Writes a report of rank (< 0: none) in a job of ws ranks, its kernels' JSON given, to
 * dir/NAME; returns the path (to free). */
static char *report(const char *name, long rank, long ws, const char *kernels, long warmup,
                    uint64_t launches)
{
    char *path, *text = NULL;
    FILE *f;

    assert_true(asprintf(&path, "%s/%s", dir, name) > 0);
    put(&text, "{\"schema_version\": 2, \"ktime_version\": \"t\", \"command\": [\"app\"], "
        "\"host\": \"h%ld\", ", rank < 0 ? 0 : rank / 2);
    if (rank >= 0)
        put(&text, "\"rank\": %ld, \"world_size\": %ld, ", rank, ws);
    put(&text, "\"pid\": %ld, \"timing_method\": \"cuda-events\", \"warmup\": %ld, "
        "\"devices\": [{\"ordinal\": 0, \"name\": \"G\", \"uuid\": \"GPU-%ld\"}], \"kernels\": [%s], "
        "\"totals\": {\"launches_seen\": %llu, \"timed_total_ms\": 0}}\n", 100 + rank, warmup,
        rank, kernels, (unsigned long long)launches);
    assert_non_null(f = fopen(path, "w"));
    fputs(text, f);
    fclose(f);
    free(text);
    return path;
}

static char *json_of(const struct model *m)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_int_equal(model_write_json(f, m), 0);
    fclose(f);
    return buf;
}

static const struct rm_row *row(const struct model *m, const char *mangled)
{
    for (size_t i = 0; i < m->nrows; i++)
        if (strcmp(m->rows[i].mangled, mangled) == 0)
            return &m->rows[i];
    fail_msg("no row %s", mangled);
    return NULL;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Six reports of random sizes: the merge's n, mean and M2 are the union's, its histogram is
 * the union's sketch, its quantiles within 1 % of the exact ones; the same bytes in another
 * order and with reading threads. */
static void test_exact_and_order_free(void **state)
{
    double all[400];
    size_t nall = 0;
    char *paths[6], *rev[6];

    for (int r = 0; r < 6; r++) {
        double v[60];
        size_t n = 5 + (size_t)(uniform01() * 55);
        char *k = NULL, name[32];
        for (size_t i = 0; i < n; i++)
            all[nall++] = v[i] = exp(3 + 0.5 * sqrt(-2 * log(uniform01())) *
                                         cos(2 * M_PI * uniform01()));
        kernel(&k, "k", v, n, true);
        snprintf(name, sizeof name, "r%d.json", r);
        paths[r] = report(name, r, 6, k, 5, n);
        rev[5 - r] = paths[r];
        free(k);
    }
    struct merge_opts o = { 0 };
    struct model m, m2, m3;
    char err[600];
    assert_int_equal(merge_files((const char *const *)paths, 6, &o, &m, err, sizeof err), 0);
    const struct rm_row *w = row(&m, "k");
    double mean = 0, m2v = 0;
    for (size_t i = 0; i < nall; i++) {
        double d = all[i] - mean;
        mean += d / (double)(i + 1);
        m2v += d * (all[i] - mean);
    }
    assert_int_equal(w->st.timed, nall);
    assert_true(fabs(w->st.v[RS_MEAN] - mean) <= 1e-9 * mean);
    assert_true(fabs(w->st.v[RS_M2] - m2v) <= 1e-9 * m2v);
    assert_int_equal(w->n[RC_CALLS], nall);
    struct sketch *sk = calloc(1, sizeof *sk);
    for (size_t i = 0; i < nall; i++)
        sketch_add(sk, all[i]);
    size_t nb = 0;
    for (int i = 0; i < SKETCH_BUCKETS; i++)
        if (sk->c[i]) {
            assert_true(nb < w->st.hist->n);
            assert_int_equal(w->st.hist->b[nb].i, i);
            assert_int_equal(w->st.hist->b[nb].count, sk->c[i]);
            nb++;
        }
    assert_int_equal(nb, w->st.hist->n);
    free(sk);
    qsort(all, nall, sizeof *all, cmp);
    for (int j = 0; j < RM_NQ; j++) {
        double exact = all[(size_t)floor(rm_q[j] * (double)(nall - 1))];
        assert_true(fabs(w->st.v[RS_P50 + j] - exact) <= 0.01 * exact);
    }
    assert_int_equal(w->spread->ranks, 6);
    /* Another order, and threads reading ahead: the same bytes. */
    assert_int_equal(merge_files((const char *const *)rev, 6, &o, &m2, err, sizeof err), 0);
    o.threads = 3;
    assert_int_equal(merge_files((const char *const *)rev, 6, &o, &m3, err, sizeof err), 0);
    char *a = json_of(&m), *b = json_of(&m2), *c = json_of(&m3);
    assert_string_equal(a, b);
    assert_string_equal(a, c);
    free(a), free(b), free(c);
    model_free(&m), model_free(&m2), model_free(&m3);
    for (int r = 0; r < 6; r++)
        unlink(paths[r]), free(paths[r]);
}

/* Ranks of a job, each with a compute kernel and an NCCL kernel of fixed times (n samples of
 * one value): compute[r] and nccl[r] microseconds a sample, 10 samples each. */
static void job(char **paths, int n, long ws, const double *compute, const double *nccl,
                const char *tag)
{
    for (int r = 0; r < n; r++) {
        double c[10], q[10];
        char *k = NULL, name[64];
        for (int i = 0; i < 10; i++)
            c[i] = compute[r], q[i] = nccl[r];
        kernel(&k, "gemm", c, 10, true);
        if (nccl[r] > 0)
            kernel(&k, "ncclDevKernel_AllReduce_Sum_f32_RING_LL", q, 10, false);
        snprintf(name, sizeof name, "%s%d.json", tag, r);
        paths[r] = report(name, r, ws, k, 5, 20);
        free(k);
    }
}

static void test_straggler(void **state)
{
    /* Rank 2 computes twice as long; the others wait for it in their NCCL kernels. */
    const double compute[4] = { 100, 100, 200, 100 }, nccl[4] = { 110, 110, 10, 110 };
    char *p[4], err[600];
    struct merge_opts o = { 0 };
    struct model m;

    job(p, 4, 4, compute, nccl, "s");
    assert_int_equal(merge_files((const char *const *)p, 4, &o, &m, err, sizeof err), 0);
    const struct rm_balance *b = m.balance;
    assert_non_null(b);
    assert_string_equal(b->verdict, "straggler");
    assert_int_equal(b->slowest.rank, 2);
    assert_string_equal(b->slowest.label, "2");
    assert_true(b->slowest.compute_ms == 2.0 && b->slowest.nccl_ms == 0.1);
    assert_true(b->compute_median_ms == 1.0 && b->nccl_median_ms == 1.1);
    assert_true(fabs(b->excess_pct - 100) < 1e-9 && fabs(b->wait_ms - 1.0) < 1e-12);
    assert_int_equal(b->world_size, 4);
    assert_int_equal(b->nmissing, 0);
    assert_int_equal(b->nrows, 4);
    assert_true(b->rows[1].compute_ms == 1.0 && b->rows[1].nccl_ms == 1.1);
    /* The merged report reads back with its balance, and writes the same bytes again. */
    char *a = json_of(&m), rerr[300];
    struct model back;
    assert_int_equal(model_read(&back, a, strlen(a), rerr, sizeof rerr), 0);
    char *again = json_of(&back);
    assert_string_equal(a, again);
    assert_string_equal(back.balance->verdict, "straggler");
    free(a), free(again);
    model_free(&back);
    model_free(&m);
    /* Rank 3's report missing: named, the verdict from the three. */
    assert_int_equal(merge_files((const char *const *)p, 3, &o, &m, err, sizeof err), 0);
    assert_int_equal(m.balance->ranks, 3);
    assert_int_equal(m.balance->nmissing, 1);
    assert_int_equal(m.balance->missing[0], 3);
    assert_string_equal(m.balance->verdict, "straggler");
    model_free(&m);
    for (int r = 0; r < 4; r++)
        unlink(p[r]), free(p[r]);
    /* Balanced: within 5 % of the median. */
    const double even[4] = { 100, 104, 100, 100 };
    job(p, 4, 4, even, nccl, "b");
    assert_int_equal(merge_files((const char *const *)p, 4, &o, &m, err, sizeof err), 0);
    assert_string_equal(m.balance->verdict, "balanced");
    model_free(&m);
    for (int r = 0; r < 4; r++)
        unlink(p[r]), free(p[r]);
    /* Slower, but nobody waits for it (no NCCL kernel): imbalanced, not a straggler. */
    const double none[4] = { 0, 0, 0, 0 };
    job(p, 4, 4, compute, none, "i");
    assert_int_equal(merge_files((const char *const *)p, 4, &o, &m, err, sizeof err), 0);
    assert_string_equal(m.balance->verdict, "imbalanced");
    assert_int_equal(m.balance->slowest.rank, 2);
    model_free(&m);
    for (int r = 0; r < 4; r++)
        unlink(p[r]), free(p[r]);
}

/* Past the limit, no kernel keeps a row per report nor a part per GPU; the spread is whole. */
static void test_rank_rows(void **state)
{
    const double compute[5] = { 100, 300, 200, 100, 150 }, nccl[5] = { 0 };
    char *p[5], err[600];
    struct merge_opts o = { .rank_rows = 4 };
    struct model m;

    job(p, 5, 5, compute, nccl, "l");
    assert_int_equal(merge_files((const char *const *)p, 5, &o, &m, err, sizeof err), 0);
    const struct rm_row *w = row(&m, "gemm");
    assert_null(w->ranks);
    assert_int_equal(w->ndev, 0);
    assert_int_equal(w->spread->ranks, 5);
    assert_int_equal(w->spread->slowest.rank, 1);
    assert_true(w->spread->slowest.total_ms == 3.0 && w->spread->fastest.total_ms == 1.0);
    assert_true(fabs(w->spread->mean_ms - 1.7) < 1e-12);
    assert_null(m.balance->rows);
    assert_int_equal(m.ndevices, 5);
    model_free(&m);
    o.rank_rows = 5;
    assert_int_equal(merge_files((const char *const *)p, 5, &o, &m, err, sizeof err), 0);
    assert_int_equal(row(&m, "gemm")->nranks, 5);
    assert_int_equal(row(&m, "gemm")->ndev, 5);
    assert_int_equal(m.balance->nrows, 5);
    model_free(&m);
    for (int r = 0; r < 5; r++)
        unlink(p[r]), free(p[r]);
}

/* Which kernels are the collectives' is one pattern (merge_opts.comm; without it, reports
 * with no KTIME_COMM of their own are judged by RM_COMM_DEFAULT, in any case, against the
 * mangled name): another pattern moves a kernel between compute and NCCL time; one that does
 * not compile is an error. */
static void test_comm_pattern(void **state)
{
    char *p[2], err[600];
    struct merge_opts o = { 0 };
    struct model m;

    for (int r = 0; r < 2; r++) {
        double c[10], q[10];
        char *k = NULL, name[32];
        for (int i = 0; i < 10; i++)
            c[i] = 100 * (r + 1), q[i] = 50;
        kernel(&k, "gemm", c, 10, true);
        kernel(&k, "allGatherKernel", q, 10, false);
        kernel(&k, "NCCLreduce", q, 10, false);
        snprintf(name, sizeof name, "c%d.json", r);
        p[r] = report(name, r, 2, k, 5, 30);
        free(k);
    }
    assert_int_equal(merge_files((const char *const *)p, 2, &o, &m, err, sizeof err), 0);
    assert_true(m.balance->rows[0].compute_ms == 1.5 && m.balance->rows[0].nccl_ms == 0.5);
    assert_true(m.balance->rows[1].compute_ms == 2.5 && m.balance->rows[1].nccl_ms == 0.5);
    model_free(&m);
    o.comm = "nccl|allgather";
    assert_int_equal(merge_files((const char *const *)p, 2, &o, &m, err, sizeof err), 0);
    assert_true(m.balance->rows[0].compute_ms == 1.0 && m.balance->rows[0].nccl_ms == 1.0);
    assert_true(m.balance->rows[1].compute_ms == 2.0 && m.balance->rows[1].nccl_ms == 1.0);
    model_free(&m);
    o.comm = "nccl(";
    assert_int_equal(merge_files((const char *const *)p, 2, &o, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "the collectives' pattern 'nccl(' is not a regular expression"));
    for (int r = 0; r < 2; r++)
        unlink(p[r]), free(p[r]);
}

/* The same report twice (the same file, or a copy of the same process's) is refused, named as
 * ktime merge names it; "-" reads standard input. */
static void test_same_report(void **state)
{
    const double compute[2] = { 100, 100 }, nccl[2] = { 0 };
    char *p[2], *copy, err[600];
    struct merge_opts o = { 0 };
    struct model m;

    job(p, 2, 2, compute, nccl, "d");
    const char *twice[3] = { p[0], p[1], p[1] };
    assert_int_equal(merge_files(twice, 3, &o, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "d1.json and "));
    assert_non_null(strstr(err, "d1.json are the same report (pid 101 on h0, started None): "
                                "give each report once, or its launches count twice"));
    assert_true(asprintf(&copy, "%s/copy.json", dir) > 0);
    assert_true(link(p[0], copy) == 0 || symlink(p[0], copy) == 0);
    const char *linked[2] = { p[0], copy };
    assert_int_equal(merge_files(linked, 2, &o, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "are the same report"));
    unlink(copy);
    free(copy);
    for (int r = 0; r < 2; r++)
        unlink(p[r]), free(p[r]);
}

static void said(void *ctx, const char *file, const char *msg)
{
    (*(int *)ctx)++;
}

/* A report that is not JSON and one of another warmup: refused (strict), left out and named
 * (lenient); an empty report skipped. */
static void test_refused_and_left_out(void **state)
{
    const double compute[2] = { 100, 100 }, nccl[2] = { 0 };
    char *p[5], err[600], *k = NULL;
    double v[3] = { 1, 2, 3 };
    int notes = 0;
    struct merge_opts o = { .note = said, .ctx = &notes };
    struct model m;
    FILE *f;

    job(p, 2, 4, compute, nccl, "f");
    assert_true(asprintf(&p[2], "%s/broken.json", dir) > 0);
    assert_non_null(f = fopen(p[2], "w"));
    fputs("{\"schema_version\": 2, \"kernels\": [", f);
    fclose(f);
    kernel(&k, "gemm", v, 3, true);
    p[3] = report("w.json", 3, 4, k, 2, 3);
    p[4] = report("e.json", -1, 0, "", 5, 0);
    free(k);
    assert_int_equal(merge_files((const char *const *)p, 3, &o, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "broken.json: truncated"));
    const char *two[2] = { p[0], p[3] };
    assert_int_equal(merge_files(two, 2, &o, &m, err, sizeof err), -1);
    assert_non_null(strstr(err, "has warmup 5,"));
    assert_non_null(strstr(err, "cannot merge reports of different warmup settings"));
    o.lenient = true;
    notes = 0;
    assert_int_equal(merge_files((const char *const *)p, 5, &o, &m, err, sizeof err), 0);
    assert_int_equal(m.balance->ranks, 2);
    assert_int_equal(m.balance->nunread, 2);
    assert_non_null(strstr(m.balance->unread[0], "broken.json: truncated"));
    assert_non_null(strstr(m.balance->unread[1], "w.json: has warmup 2"));
    assert_int_equal(m.balance->nmissing, 2); /* ranks 2 and 3 */
    assert_int_equal(notes, 3);                /* two left out, one empty report skipped */
    assert_int_equal(m.merged->ninputs, 2);
    model_free(&m);
    for (int r = 0; r < 5; r++)
        unlink(p[r]), free(p[r]);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_exact_and_order_free),
        cmocka_unit_test(test_straggler),
        cmocka_unit_test(test_rank_rows),
        cmocka_unit_test(test_refused_and_left_out),
        cmocka_unit_test(test_comm_pattern),
        cmocka_unit_test(test_same_report),
    };
    snprintf(dir, sizeof dir, "/tmp/ktime-test-merge.XXXXXX");
    if (!mkdtemp(dir))
        return 1;
    int rc = cmocka_run_group_tests(tests, NULL, NULL);
    rmdir(dir);
    return rc;
}
