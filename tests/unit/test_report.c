/* test_report.c - the text and JSON reports: order, exact numbers, name shortening that
 * never hides which kernel is which, JSON escaping, and failed writes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "jsonout.h"
#include "report.h"

static struct report_device devs[2] = {
    { 0, "Fake GPU 0", 13000 },
    { 1, "Fake GPU 1", 13000 },
};
static struct stats pd[3][2];
static struct sketch sks[2], big_dev[2];
static struct report_kernel ks[3];
static const char *argv_[] = { "./app", "--n", "3" };

static struct report make(void)
{
    struct report r;
    memset(pd, 0, sizeof pd);
    memset(sks, 0, sizeof sks);
    memset(big_dev, 0, sizeof big_dev);
    for (int i = 0; i < 10; i++) {
        stats_add(&pd[0][0], 100.0);                 /* small: 1 ms total */
        sketch_add(&sks[0], 100.0);
    }
    for (int i = 0; i < 4; i++) {
        stats_add(&pd[1][i % 2], i % 2 ? 3000.0 : 1000.0); /* big: 8 ms, on two GPUs */
        sketch_add(&sks[1], i % 2 ? 3000.0 : 1000.0);
        sketch_add(&big_dev[i % 2], i % 2 ? 3000.0 : 1000.0);
    }
    ks[0] = (struct report_kernel){ "_Z5smallPf", REPORT_KERNEL, 15, 0, 0, 0, 0, 5, 0, pd[0],
                                    "small(float*)" };
    ks[1] = (struct report_kernel){ "_Z3bigIfEvPT_i", REPORT_KERNEL, 9, 0, 2, 1, 0, 2, 3, pd[1],
                                    "void big<float>(float*, int)" };
    ks[2] = (struct report_kernel){ "rare_kernel", REPORT_KERNEL, 3, 0, 0, 0, 0, 3, 0, pd[2] };
    ks[0].sk = &sks[0];
    ks[1].sk = &sks[1];
    ks[1].dev_sk = big_dev;
    memset(&r, 0, sizeof r);
    r.version = "9.9.9";
    r.argv = argv_;
    r.argc = 3;
    r.pid = 42;
    r.warmup = 5;
    r.devices = devs;
    r.ndevices = 2;
    r.kernels = ks;
    r.nkernels = 3;
    r.drops[DROP_POOL_EXHAUSTED] = 2;
    return r;
}

/* r written as text (0), JSON (1) or CSV (2), in a string to free. */
static char *render_report(struct report *r, int json)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_int_equal(json == 2   ? report_write_csv(f, r)
                     : json ? report_write_json(f, r)
                            : report_write_text(f, r),
                     0);
    fclose(f);
    return buf;
}

static char *render(int json)
{
    struct report r = make();
    return render_report(&r, json);
}

/* An empty report (no kernels, REPORT_EMPTY_NOTE) is recognised in every format; a report
 * with kernels, or one of no launches with another note, is not. The range fields. */
static void test_empty_and_capture(void **state)
{
    struct report e = { .version = "9.9.9", .gate = "auto", .note = REPORT_EMPTY_NOTE };
    struct report r = make();
    char *t;

    for (int fmt = 0; fmt < 3; fmt++) {
        t = render_report(&e, fmt);
        assert_true(report_is_empty(t, strlen(t)));
        free(t);
        t = render_report(&r, fmt);
        assert_false(report_is_empty(t, strlen(t)));
        free(t);
    }
    assert_true(report_is_empty("", 0));
    assert_false(report_is_empty("my notes\n", 9));
    e.note = "something else";
    t = render_report(&e, 1);
    assert_false(report_is_empty(t, strlen(t)));
    free(t);

    r.capture = "profiler-api";
    r.capture_starts = 3, r.capture_stops = 2, r.capture_ranges = 2, r.capture_still_open = 1;
    r.kernels[0].outside_range = 7;
    t = render_report(&r, 1);
    assert_non_null(strstr(t, "\"capture\": { \"mode\": \"profiler-api\", \"starts\": 3, "
                              "\"stops\": 2, \"ranges\": 2, \"open_at_exit\": true },"));
    assert_non_null(strstr(t, "\"outside_range\": 7,"));
    free(t);
    t = render_report(&r, 0);
    assert_non_null(strstr(t, "\n         2 ranges (3 starts, 2 stops), the last open at exit\n"));
    assert_non_null(strstr(t, "7 outside range"));
    free(t);
}

static void test_text_order_and_numbers(void **state)
{
    char *t = render(0);
    char *big = strstr(t, "big<float>"), *small = strstr(t, " small\n"), *rare = strstr(t, "rare_kernel");
    assert_non_null(strstr(t, "ktime 9.9.9"));
    assert_non_null(strstr(t, "command  ./app --n 3"));
    assert_non_null(strstr(t, "gpu 1    Fake GPU 1, driver CUDA 13.0"));
    assert_non_null(big);
    assert_non_null(small);
    assert_non_null(rare);
    assert_true(big < small && small < rare); /* by total time; untimed last */
    /* big: 4 samples 1000,3000,1000,3000 us: total 8 ms, 88.89 %, stddev 1154.701 */
    /* Median and p99 from the sketch (within 1 %, clamped to min and max), printed as read. */
    char big_row[200];
    snprintf(big_row, sizeof big_row,
             "  88.89        8.000         9       2         4    2000.000 %11.3f %11.3f    1000.000    3000.000    1154.701  big<float>",
             sketch_quantile(&sks[1], 0.5, 1000, 3000), sketch_quantile(&sks[1], 0.99, 1000, 3000));
    assert_non_null(strstr(t, big_row));
    assert_true(sketch_quantile(&sks[1], 0.5, 1000, 3000) <= 1010);
    assert_true(sketch_quantile(&sks[1], 0.99, 1000, 3000) >= 2970);
    assert_non_null(strstr(t, "  11.11        1.000        15       5        10     100.000     100.000     100.000     100.000"));
    assert_non_null(strstr(t, "big<float> (few samples, 2 dropped, 1 failed)"));
    assert_non_null(strstr(t, "on gpu 0"));
    assert_non_null(strstr(t, "   3000.000    3000.000    3000.000    3000.000    3000.000       0.000    on gpu 1"));
    assert_non_null(strstr(t, "launches 27 seen: 14 timed, 10 warmup, 0 captured, 2 dropped, 1 failed, 0 incomplete at exit"));
    assert_non_null(strstr(t, "pool_exhausted 2"));
    assert_non_null(strstr(t, "gate_late 0"));
    /* Gates off (the default of a zeroed report): no line about ungated launches. */
    assert_null(strstr(t, "ungated "));
    assert_non_null(strstr(t, "gate     off:"));
    free(t);
}

/* fn(f, in) writes exactly want. */
static void writes(void (*fn)(FILE *, const char *), const char *in, const char *want)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    fn(f, in);
    fclose(f);
    assert_string_equal(buf, want);
    free(buf);
}

/* The CSV report: a header of 38 columns, a row per kernel (device "all") under its full
 * name, a row per GPU for big, which ran on two, every line CRLF-ended with 38 fields. */
static void test_csv(void **state)
{
    char *c = render(2);
    assert_non_null(strstr(c, "name,mangled,kind,device,calls,warmup_skipped,captured,dropped,"
                              "failed,incomplete,timed,"));
    assert_non_null(strstr(c, "\r\n\"void big<float>(float*, int)\",_Z3bigIfEvPT_i,kernel,all,9,2,0,2,1,0,4,3,"));
    assert_non_null(strstr(c, "\r\n\"void big<float>(float*, int)\",_Z3bigIfEvPT_i,kernel,0,,,,,,,2,"));
    assert_non_null(strstr(c, "\r\n\"void big<float>(float*, int)\",_Z3bigIfEvPT_i,kernel,1,,,,,,,2,"));
    assert_non_null(strstr(c, "\r\nsmall(float*),_Z5smallPf,kernel,all,15,5,0,0,0,0,10,"));
    assert_non_null(strstr(c, "\r\nrare_kernel,rare_kernel,kernel,all,3,3,0,0,0,0,0,"));
    assert_non_null(strstr(c, ",kernel,1,,,,,,,2,,,,,,6,,66.6666666666666"));
    assert_non_null(strstr(c, ",3000,3000,3000,0,6000,0,3000,3000,3000" ",,,,," ",,,,,,,," ",,,,,,\r\n")); /* gpu 1's p50-p99 */
    assert_non_null(strstr(c, ",bias_us,launch_timed,launch_mean_us,launch_p99_us,queue_timed,"
                              "queue_mean_us,queue_p99_us,launch_bound,queue_long,outside_range,"
                              "grid,block,shared_bytes,paused,sampled_1_in\r\n"));
    int lines = 0;
    for (char *l = c; *l; lines++) {
        char *e = strstr(l, "\r\n");
        assert_non_null(e); /* every line ends CRLF */
        int fields = 1, quoted = 0;
        for (char *p = l; p < e; p++) {
            quoted ^= *p == '"';
            fields += *p == ',' && !quoted;
        }
        assert_int_equal(fields, 47);
        l = e + 2;
    }
    assert_int_equal(lines, 1 + 3 + 2);
    free(c);
}

/* A field is quoted where RFC 4180 needs it, quotes doubled; stray bytes become U+FFFD;
 * control characters and the backslash are escaped (a record is one line); a cell that a
 * spreadsheet would take for a formula, or that begins with "'", gets a "'" before it. */
static void test_csv_field(void **state)
{
    static const struct { const char *in, *out; } cases[] = {
        { "plain", "plain" },
        { "a,b", "\"a,b\"" },
        { "say \"hi\"", "\"say \"\"hi\"\"\"" },
        { "two\nlines", "two\\nlines" },
        { "cr\r tab\t esc\x1b del\x7f c1\xc2\x9b nbsp\xc2\xa0", "cr\\r tab\\t esc\\x1b del\\x7f c1\\u009b nbsp\xc2\xa0" },
        { "back\\slash", "back\\\\slash" },
        { " padded", "\" padded\"" },
        { "caf\xc3\xa9", "caf\xc3\xa9" },
        { "k\xff", "k\xef\xbf\xbd" },
        { "", "" },
        { "=HYPERLINK(\"http://x\")", "\"'=HYPERLINK(\"\"http://x\"\")\"" },
        { "+1", "'+1" },
        { "-2+3", "'-2+3" },
        { "@SUM(A1)", "'@SUM(A1)" },
        { "'quoted", "''quoted" },
        { "\tlead", "\\tlead" },
        { "\rlead", "\\rlead" },
        { "k=1", "k=1" },
        { " =x", "\" =x\"" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        writes(report_csv_field, cases[i].in, cases[i].out);
}

/* The job's identity: host, rank (leading zeros dropped: a JSON number), world size, the
 * start and end times in UTC; null where unknown. */
static void test_json_job(void **state)
{
    struct report r = make();
    r.host = "node\"7";
    r.rank = "007";
    r.world_size = 8;
    r.job = "slurm-77.0";
    r.start_unix = 86400.25;
    char *buf = render_report(&r, 1);
    assert_non_null(strstr(buf, "\"host\": \"node\\\"7\",\n  \"rank\": 7,\n  \"local_rank\": null,\n"
                                "  \"world_size\": 8,\n  \"job\": \"slurm-77.0\",\n"
                                "  \"start_time\": \"1970-01-02T00:00:00.250Z\",\n"
                                "  \"end_time\": null,\n"));
    free(buf);
    buf = render_report(&r, 0);
    assert_non_null(strstr(buf, "\nhost     node\"7, rank 007 of 8, job slurm-77.0\n"));
    free(buf);
    char *j = render(1); /* none known */
    assert_non_null(strstr(j, "\"host\": null,\n  \"rank\": null,\n  \"local_rank\": null,\n"
                              "  \"world_size\": null,\n  \"job\": null,\n  \"start_time\": null,\n"
                              "  \"end_time\": null,\n"));
    free(j);
}

static void test_json_numbers(void **state)
{
    char *j = render(1);
    assert_non_null(strstr(j, "\"schema_version\": 2"));
    assert_non_null(strstr(j, "\"launch_gate\": false"));
    assert_non_null(strstr(j, "\"launch_gate_mode\": \"off\""));
    assert_non_null(strstr(j, "\"ungated\": 3,\n    \"warmup_skipped\""));  /* totals */
    assert_non_null(strstr(j, "\"timed\": 4,\n      \"ungated\": 3,"));     /* big's row */
    assert_non_null(strstr(j, "\"gate_late\": 0"));
    assert_non_null(strstr(j, "\"command\": [\"./app\", \"--n\", \"3\"]"));
    assert_non_null(strstr(j, "\"name\": \"void big<float>(float*, int)\""));
    assert_non_null(strstr(j, "\"mangled\": \"_Z3bigIfEvPT_i\""));
    assert_non_null(strstr(j, "\"devices\": [0, 1]"));
    assert_non_null(strstr(j, "\"total_ms\": 8,"));
    assert_non_null(strstr(j, "\"sum_us\": 8000,"));
    /* Quantiles and the histogram: small's 10 samples of 100 us; rare has none. */
    assert_non_null(strstr(j, "\"p50_us\": 100,\n      \"p90_us\": 100,\n      \"p99_us\": 100,\n"
                              "      \"few_samples\": false"));
    assert_non_null(strstr(j, "\"p50_us\": null,\n      \"p90_us\": null,\n      \"p99_us\": null,\n"
                              "      \"few_samples\": false,\n      \"histogram\": { \"gamma\": 1.02, "
                              "\"first_edge_us\": 0.050000000000000003, \"buckets\": [] }"));
    char bucket[64];
    snprintf(bucket, sizeof bucket, "[%d, ", sketch_bucket(100.0));
    assert_non_null(strstr(j, bucket));
    assert_non_null(strstr(j, "\"few_samples\": true")); /* big: 4 samples */
    assert_non_null(strstr(j, "\"m2_us2\": 4000000,"));
    assert_non_null(strstr(j, "{ \"device\": 1, \"timed\": 2, \"sum_us\": 6000, \"m2_us2\": 0, \"min_us\": 3000, \"max_us\": 3000, "
                              "\"p50_us\": 3000, \"p90_us\": 3000, \"p99_us\": 3000, \"mean_us\": 3000, \"stddev_us\": 0, \"percent\": "));
    assert_non_null(strstr(j, "\"launches_seen\": 27"));
    assert_non_null(strstr(j, "\"pool_exhausted\": 2"));
    /* the big kernel comes first */
    assert_true(strstr(j, "_Z3bigIfEvPT_i") < strstr(j, "_Z5smallPf"));
    free(j);
}

static void test_json_escaping(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report r = make();
    const char *weird[] = { "a\"b\\c\n\x01" };
    r.argv = weird;
    r.argc = 1;
    report_write_json(f, &r);
    fclose(f);
    assert_non_null(strstr(buf, "\"command\": [\"a\\\"b\\\\c\\n\\u0001\"]"));
    free(buf);
}

/* JSON text is UTF-8: a kernel name is whatever bytes the program gave it. Well-formed
 * sequences are kept; every other byte becomes \ufffd. */
static void test_json_utf8(void **state)
{
    static const struct {
        const char *in, *want;
    } cases[] = {
        { "k\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\"k\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"" },
        { "k\xff", "\"k\\ufffd\"" },                          /* never in UTF-8 */
        { "\x80x", "\"\\ufffdx\"" },                           /* stray continuation */
        { "\xc0\xaf", "\"\\ufffd\\ufffd\"" },                 /* overlong '/' */
        { "\xe0\x80\xaf", "\"\\ufffd\\ufffd\\ufffd\"" },     /* overlong '/' */
        { "\xed\xa0\x80", "\"\\ufffd\\ufffd\\ufffd\"" },     /* surrogate U+D800 */
        { "\xf4\x90\x80\x80", "\"\\ufffd\\ufffd\\ufffd\\ufffd\"" }, /* past U+10FFFF */
        { "\xe2\x82", "\"\\ufffd\\ufffd\"" },                 /* cut short at the end */
        { "\xe2\x82z", "\"\\ufffd\\ufffdz\"" },               /* cut short */
        { "\x7f\xef\xbf\xbf", "\"\x7f\xef\xbf\xbf\"" },         /* DEL, U+FFFF: valid */
    };

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        writes(json_string, cases[i].in, cases[i].want);
    /* The same through the whole report: the row's name and mangled name. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report r = make();
    ks[2].mangled = "rare\xff_kernel";
    report_write_json(f, &r);
    fclose(f);
    assert_non_null(strstr(buf, "\"mangled\": \"rare\\ufffd_kernel\""));
    assert_null(strchr(buf, '\xff'));
    free(buf);
}

static void test_short_names(void **state)
{
    char out[128];
    assert_int_equal(report_short_name("void k<float>(float*, int)", out, sizeof out, 72), 1);
    assert_string_equal(out, "k<float>");
    assert_int_equal(report_short_name("void kernel_name<float>(float*)", out, sizeof out, 8), 2);
    assert_string_equal(out, "ker...t>");
    assert_int_equal(report_short_name("plain_c_kernel", out, sizeof out, 72), 0);
    assert_string_equal(out, "plain_c_kernel");
    /* parameters that hold parentheses themselves */
    report_short_name("void f<(int)3>(void (*)(int), int)", out, sizeof out, 72);
    assert_string_equal(out, "f<(int)3>");
    /* long: the middle is elided, both ends stay */
    const char *lng = "void cutlass::Kernel<cutlass::gemm::kernel::GemmUniversal<cutlass::half_t, "
                      "cutlass::layout::RowMajor, float, 128, 256, 64>>(Params)";
    report_short_name(lng, out, sizeof out, 40);
    assert_int_equal(strlen(out), 40);
    assert_memory_equal(out, "cutlass::Kernel<", 16);
    assert_non_null(strstr(out, "..."));
    assert_string_equal(out + strlen(out) - 4, "64>>");
    /* The cuts fall between UTF-8 characters, not inside one (found by fuzz_names). */
    assert_int_equal(report_short_name("k_caf\xc3\xa9_\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac_end",
                                       out, sizeof out, 15), 2);
    assert_string_equal(out, "k_caf\xc3\xa9..._end"); /* the tail was "\xac_end" */
    assert_int_equal(report_short_name("\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac"
                                       "\xe2\x82\xac\xe2\x82\xac\xe2\x82\xac", out, sizeof out, 8), 2);
    assert_string_equal(out, "\xe2\x82\xac...");
}

/* Two overloads shorten to the same text: the table must still tell them apart. */
static void test_ambiguous_short_names_get_refs(void **state)
{
    struct stats s1 = { 0 }, s2 = { 0 }, z[2] = { { 0 } };
    struct stats a[2] = { { 0 } }, b[2] = { { 0 } };
    struct report_kernel k[2];
    struct report r = make();
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    (void)s1, (void)s2, (void)z;
    stats_add(&a[0], 10);
    stats_add(&b[0], 20);
    k[0] = (struct report_kernel){ "_Z3fooPi", REPORT_KERNEL, .calls = 1, .per_dev = a,
                                   .name = "foo(int*)" };
    k[1] = (struct report_kernel){ "_Z3fooPf", REPORT_KERNEL, .calls = 1, .per_dev = b,
                                   .name = "foo(float*)" };
    r.kernels = k;
    r.nkernels = 2;
    f = open_memstream(&buf, &len);
    report_write_text(f, &r);
    fclose(f);
    assert_non_null(strstr(buf, "foo [1]"));
    assert_non_null(strstr(buf, "foo [2]"));
    assert_non_null(strstr(buf, "[1] foo(float*)"));
    assert_non_null(strstr(buf, "[2] foo(int*)"));
    free(buf);
}

/* The floor line, the near-floor mark (small's 100 us mean is under 3 x 40 us), and the
 * timer's own words: cupti, both with its bias table, sampled totals as estimates. */
static void test_floor_and_timers(void **state)
{
    struct report_device d2[2] = { { 0, "Fake GPU 0", 13000 }, { 1, "Fake GPU 1", 13000 } };
    struct stats hw[2] = { { 0 } };
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    struct report r = make();

    d2[0].floor_events_us = 40.0;
    d2[0].floor_hw_us = 1.5;
    r.devices = d2;
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_text(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "floor    gpu 0: an empty kernel reads 40.000 us with events, "
                                "1.500 us in hardware (CUPTI)"));
    assert_non_null(strstr(buf, "small (near floor)"));
    assert_null(strstr(buf, "big<float> (near floor"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_json(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"floor_events_us\": 40"));
    assert_non_null(strstr(buf, "\"near_floor\": true"));
    free(buf);

    /* under the CUPTI timer the hardware floor counts: 100 us is far above 3 x 1.5 us */
    r.timer = r.timer_requested = "cupti";
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_text(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "from CUPTI activity records"));
    assert_null(strstr(buf, "near floor)"));
    assert_null(strstr(buf, "\ngate "));
    free(buf);

    /* both: the bias table, events mean minus hardware mean */
    stats_add(&hw[0], 97.0);
    stats_add(&hw[0], 97.0);
    ks[0].hw = hw;
    r.timer = r.timer_requested = "both";
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_text(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "events against the hardware"));
    assert_non_null(strstr(buf, "100.000         2      97.000      +3.000  small"));
    free(buf);
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_json(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"bias_us\": 3"));
    assert_non_null(strstr(buf, "\"timing_method\": \"cuda-events+cupti-activity\""));
    free(buf);
    ks[0].hw = NULL;

    /* sampled: Total ms is mean x (timed + unsampled), and said to be an estimate */
    r.timer = r.timer_requested = "events";
    r.sample = 4;
    ks[0].unsampled = 30;
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_text(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "        4.000        15"));
    assert_non_null(strstr(buf, "30 not sampled"));
    assert_non_null(strstr(buf, "Total ms and Time% are estimates"));
    free(buf);
    ks[0].unsampled = 0;
}

static void test_write_error_reported(void **state)
{
    FILE *f = fopen("/dev/full", "w");
    struct report r = make();
    if (!f)
        skip();
    assert_int_equal(report_write_text(f, &r), -1);
    fclose(f);
}

static void test_empty_report(void **state)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    struct report r = make();
    r.nkernels = 0;
    r.ndevices = 0;
    assert_int_equal(report_write_json(f, &r), 0);
    fclose(f);
    assert_non_null(strstr(buf, "\"kernels\": [],"));
    assert_non_null(strstr(buf, "\"devices\": [],"));
    free(buf);
}

/* Launch shapes: in JSON always (most timed first, the rest in other_shapes); in the text and
 * CSV only with KTIME_GROUP=shape, as sub-rows of their kernel. */
static void test_shapes(void **state)
{
    struct report r = make();
    struct shape_set *set = NULL;
    for (int i = 0; i < 10; i++) /* small's 10 samples: 7 of grid 8, 3 of grid 16 with smem */
        shape_add(&set, i < 7 ? &(struct kshape){ { 8, 1, 1 }, { 256, 1, 1 }, 0 }
                              : &(struct kshape){ { 16, 2, 1 }, { 128, 1, 1 }, 512 }, 100.0);
    ks[0].shapes = set;
    char *j = render_report(&r, 1);
    assert_non_null(strstr(j, "\"shapes\": [\n        { \"grid\": [8, 1, 1], \"block\": [256, 1, 1], "
                              "\"shared_bytes\": 0, \"timed\": 7, \"total_ms\": 0.69999999999999996"));
    assert_non_null(strstr(j, "{ \"grid\": [16, 2, 1], \"block\": [128, 1, 1], \"shared_bytes\": 512, "
                              "\"timed\": 3, "));
    assert_non_null(strstr(j, "\"other_shapes\": null"));
    assert_non_null(strstr(j, "\"shapes\": [],\n      \"other_shapes\": null")); /* big: none */
    free(j);
    char *t = render_report(&r, 0);
    assert_null(strstr(t, "grid 8x1x1"));
    free(t);
    r.group_shape = true;
    t = render_report(&r, 0);
    assert_non_null(strstr(t, "shapes   under each kernel"));
    assert_non_null(strstr(t, "   7.78        0.700                           7     100.000     100.000     100.000     100.000     100.000       0.000    grid 8x1x1 block 256x1x1 smem 0\n"));
    assert_non_null(strstr(t, "grid 16x2x1 block 128x1x1 smem 512\n"));
    assert_true(strstr(t, "grid 8x1x1") < strstr(t, "grid 16x2x1"));
    free(t);
    char *c = render_report(&r, 2);
    assert_non_null(strstr(c, "\r\nsmall(float*),_Z5smallPf,kernel,all,,,,,,,7,,,,,,0.69999999999999996,,"));
    assert_non_null(strstr(c, ",8x1x1,256x1x1,0,,\r\n"));
    assert_non_null(strstr(c, ",16x2x1,128x1x1,512,,\r\n"));
    free(c);
    /* Past SHAPE_SHOW, the least timed shapes are folded into other, and counted. */
    for (int g = 0; g < SHAPE_SHOW + 1; g++)
        shape_add(&ks[0].shapes, &(struct kshape){ { 100u + (uint32_t)g, 1, 1 }, { 32, 1, 1 }, 0 }, 50.0);
    j = render_report(&r, 1);
    assert_non_null(strstr(j, "\"other_shapes\": { \"shapes\": 3, \"untracked\": false, \"timed\": 3, "));
    free(j);
    t = render_report(&r, 0);
    assert_non_null(strstr(t, "3 other shapes\n"));
    free(t);
    shape_set_free(ks[0].shapes);
    ks[0].shapes = NULL;
}

/* The name column of many kernels (as a program with templated kernels may have): a row gets a
 * reference exactly when its name was elided or another row shortens to the same text,
 * numbered in row order; the ranges' table names each kernel as the kernels' table does. The
 * rows are told apart by sorting, not by comparing every pair: a generous bound of CPU time,
 * far above what sorting needs and far below what comparing every pair of 131072 needs, is
 * part of what is tested. */
#define MANY 131072
static void test_name_column_many(void **state)
{
    static struct stats zero[2], one[MANY];
    struct report_kernel *k = calloc(MANY, sizeof *k);
    struct report_range_row *rr = calloc(MANY, sizeof *rr);
    char *names = malloc((size_t)MANY * 128), *buf = NULL, *p, *e;
    struct report r = make();
    struct report_range g = { .name = "all", .closed = 1 };
    size_t len = 0, nref = 0, row = 0, full = 0;
    struct timespec t0, t1;
    struct rlimit old, lim;
    FILE *f;

    assert_non_null(k);
    assert_non_null(rr);
    assert_non_null(names);
    /* Four kinds of row, in this order (the rows sort by calls): "void k_N<int>(int)" and
     * the plain "k_N<int>" read the same, a long name is elided, "u_N" is alone. */
    for (size_t i = 0; i < MANY; i++) {
        char *n = names + i * 128;
        size_t q = i / 4;
        switch (i % 4) {
        case 0: snprintf(n, 128, "void k_%zu<int>(int)", q); break;
        case 1: snprintf(n, 128, "k_%zu<int>", q); break;
        case 2: snprintf(n, 128, "ns::a_very_long_kernel_name_%zu_that_will_not_fit_in_the_"
                                 "kernel_column<float>", q); break;
        default: snprintf(n, 128, "u_%zu", q); break;
        }
        k[i] = (struct report_kernel){ n, REPORT_KERNEL, .calls = MANY - i, .per_dev = zero };
        stats_add(&one[i], 1.0);
        rr[i] = (struct report_range_row){ .mangled = n, .kind = REPORT_KERNEL, .st = one[i] };
    }
    g.rows = rr;
    g.nrows = MANY;
    r.kernels = k;
    r.nkernels = MANY;
    r.ranges_by_name = &g;
    r.nranges_by_name = 1;
    /* 30 s of CPU at most: past it SIGXCPU ends this program (a failure), so that a quadratic
     * writer fails here instead of running on for many minutes. */
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t0);
    assert_int_equal(getrlimit(RLIMIT_CPU, &old), 0);
    lim = old;
    lim.rlim_cur = (rlim_t)t0.tv_sec + 31;
    if (old.rlim_cur == RLIM_INFINITY || lim.rlim_cur < old.rlim_cur)
        assert_int_equal(setrlimit(RLIMIT_CPU, &lim), 0);
    f = open_memstream(&buf, &len);
    assert_int_equal(report_write_text(f, &r), 0);
    fclose(f);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t1);
    setrlimit(RLIMIT_CPU, &old);
    assert_true(t1.tv_sec - t0.tv_sec < 30);

    /* The kernels' table: each row's name, then " [n]" where it must have one. */
    p = strstr(buf, "  Kernel\n");
    assert_non_null(p);
    p += strlen("  Kernel\n");
    for (; row < MANY; row++, p = e + 1) {
        char want[160], shortname[96];
        e = strchr(p, '\n');
        assert_non_null(e);
        *e = '\0';
        report_short_name(names + row * 128, shortname, sizeof shortname, 72);
        if (row % 4 == 3)
            snprintf(want, sizeof want, "  %s", shortname);
        else
            snprintf(want, sizeof want, "  %s [%zu]", shortname, ++nref);
        if (strlen(p) < strlen(want) || strcmp(p + strlen(p) - strlen(want), want) != 0)
            fail_msg("row %zu reads '%s', want it to end '%s'", row, p, want);
    }
    assert_int_equal(nref, MANY / 4 * 3);
    /* Full names: every reference, in order, with the whole name. */
    p = strstr(e + 1, "\nFull names\n");
    assert_non_null(p);
    p += strlen("\nFull names\n");
    for (row = 0; row < MANY; row++) {
        char want[160];
        if (row % 4 == 3)
            continue;
        snprintf(want, sizeof want, "[%zu] %s\n", ++full, names + row * 128);
        if (strncmp(p, want, strlen(want)) != 0)
            fail_msg("full name %zu: want '%s'", full, want);
        p += strlen(want);
    }
    /* The range's table: the same short names and references, rows in the range's order. */
    p = strstr(p, "range    \"all\"");
    assert_non_null(p);
    assert_non_null(strstr(p, "  k_0<int> [1]\n"));
    assert_non_null(strstr(p, "  k_0<int> [2]\n"));
    assert_non_null(strstr(p, "  u_0\n"));
    assert_non_null(strstr(p, "  k_32767<int> [98302]\n"));
    assert_non_null(strstr(p, "  u_32767\n"));
    free(buf);
    free(names);
    free(rr);
    free(k);
}

/* A label that is not a kernel's name (a graph's, a memory operation's) is cut to the column
 * between UTF-8 characters. */
static void test_label_cut_utf8(void **state)
{
    static struct stats zero[2];
    char label[128], *buf;
    struct report_kernel k[1];
    struct report r = make();

    memset(label, 'g', 78);
    memcpy(label + 78, "\xe2\x82\xac tail", 9); /* a 3-byte character over the 79-byte cut */
    k[0] = (struct report_kernel){ label, REPORT_GRAPH, .calls = 1, .per_dev = zero };
    r.kernels = k;
    r.nkernels = 1;
    buf = render_report(&r, 0);
    char want[96];
    memset(want, 'g', 78);
    strcpy(want + 78, "\n");
    assert_non_null(strstr(buf, want));
    free(buf);
}

/* A program's strings cannot make lines of their own in the text report: control characters
 * in kernel names (the table and Full names), arguments, the host, device and range names are
 * escaped, and so is the backslash. In the CSV each kernel is one line, its cells escaped the
 * same way, a formula-like cell neutralised. */
static void test_control_characters(void **state)
{
    static struct stats zero[2];
    static const char *const names[] = { "nl\nnote     forged line", "tab\there", "esc\x1b[31mred",
                                         "=cmd|' /C calc'!A0", "c1\xc2\x9b" "2J" };
    struct report_kernel k[5];
    struct report_device d[1] = { { 0, "GPU\nforged", 13000 } };
    struct report_range g = { .name = "phase\r\nx", .closed = 1 };
    const char *argv[] = { "./app", "a\nb" };
    struct report r = make();
    char *t, *c, *line;
    int rows = 0;

    for (int i = 0; i < 5; i++)
        k[i] = (struct report_kernel){ names[i], REPORT_KERNEL, .calls = 5u - (unsigned)i,
                                       .per_dev = zero, .name = names[i] };
    r.kernels = k;
    r.nkernels = 5;
    r.devices = d;
    r.ndevices = 1;
    r.argv = argv;
    r.argc = 2;
    r.host = "h\tost";
    r.ranges_by_name = &g;
    r.nranges_by_name = 1;
    t = render_report(&r, 0);
    assert_non_null(strstr(t, "\ncommand  ./app a\\nb\n"));
    assert_non_null(strstr(t, "\nhost     h\\tost\n"));
    assert_non_null(strstr(t, "\ngpu 0    GPU\\nforged, driver CUDA 13.0\n"));
    assert_non_null(strstr(t, "  nl\\nnote     forged line\n"));
    assert_non_null(strstr(t, "  tab\\there\n"));
    assert_non_null(strstr(t, "  esc\\x1b[31mred\n"));
    assert_non_null(strstr(t, "  =cmd|' /C calc'!A0\n"));
    assert_non_null(strstr(t, "  c1\\u009b2J\n"));
    assert_non_null(strstr(t, "\nrange    \"phase\\r\\nx\": "));
    assert_null(strstr(t, "\nnote     forged"));
    assert_null(strchr(t, '\x1b'));
    assert_null(strchr(t, '\t'));
    assert_null(strchr(t, '\r'));
    assert_null(strstr(t, "\xc2\x9b"));
    assert_false(report_is_empty(t, strlen(t)));
    free(t);
    /* A long name with a newline: its short name and its line under Full names. */
    k[0].mangled = k[0].name = "long\nline_that_is_much_longer_than_the_kernel_column_of_the_text_report_"
                               "xxxxxxxxxxxxxxxxxxx";
    t = render_report(&r, 0);
    assert_non_null(strstr(t, "  long\\nline_that_is_much_longer_than_the_kernel...port_xxxxxxxxxxxxxxxxxxx [1]\n"));
    assert_non_null(strstr(t, "\n[1] long\\nline_that_is_much_longer_than_the_kernel_column_of_the_"
                              "text_report_xxxxxxxxxxxxxxxxxxx\n"));
    free(t);
    k[0].mangled = k[0].name = names[0];
    c = render_report(&r, 2);
    assert_null(strchr(c, '\x1b'));
    for (line = c; (line = strchr(line, '\n')); line++, rows++)
        assert_true(line > c && line[-1] == '\r');
    assert_int_equal(rows, 1 + 5); /* the header and one line per kernel */
    assert_non_null(strstr(c, "\r\nnl\\nnote     forged line,nl\\nnote     forged line,kernel,all,"));
    assert_non_null(strstr(c, "\r\ntab\\there,tab\\there,kernel,all,"));
    assert_non_null(strstr(c, "\r\nesc\\x1b[31mred,esc\\x1b[31mred,kernel,all,"));
    assert_non_null(strstr(c, "\r\n'=cmd|' /C calc'!A0,'=cmd|' /C calc'!A0,kernel,all,"));
    assert_non_null(strstr(c, "\r\nc1\\u009b2J,c1\\u009b2J,kernel,all,"));
    free(c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_text_order_and_numbers),
        cmocka_unit_test(test_json_numbers),
        cmocka_unit_test(test_json_job),
        cmocka_unit_test(test_csv),
        cmocka_unit_test(test_shapes),
        cmocka_unit_test(test_empty_and_capture),
        cmocka_unit_test(test_csv_field),
        cmocka_unit_test(test_json_escaping),
        cmocka_unit_test(test_json_utf8),
        cmocka_unit_test(test_short_names),
        cmocka_unit_test(test_ambiguous_short_names_get_refs),
        cmocka_unit_test(test_name_column_many),
        cmocka_unit_test(test_label_cut_utf8),
        cmocka_unit_test(test_control_characters),
        cmocka_unit_test(test_write_error_reported),
        cmocka_unit_test(test_floor_and_timers),
        cmocka_unit_test(test_empty_report),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
