/* test_read.c - a saved JSON report read back into the model (model_read): the model of a
 * run written as JSON and read again writes the same JSON, text and CSV, byte for byte; a
 * merged report's header and load balance; and malformed input, each refused with one line
 * naming what is wrong (never a crash: the sanitizer build runs this too). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "report_fixture.h"

/* The fixture's model written with writer, and the same read back from its JSON. */
static void same_after_reading(struct fixture *fx, int (*writer)(FILE *, const struct model *))
{
    struct model m, back;
    char err[300];
    char *json, *want, *got;

    fixture_model(fx, &m);
    json = fixture_render(&m, model_write_json);
    want = fixture_render(&m, writer);
    assert_int_equal(model_read(&back, json, strlen(json), err, sizeof err), 0);
    got = fixture_render(&back, writer);
    assert_string_equal(got, want);
    free(json);
    free(want);
    free(got);
    model_free(&m);
    model_free(&back);
}

static void test_round_trip(void **state)
{
    struct fixture *fx = *state;

    same_after_reading(fx, model_write_json);
    same_after_reading(fx, model_write_text);
    same_after_reading(fx, model_write_csv);
    /* Names that are not UTF-8 come back as the program's bytes, launch shapes too. */
    fx->k[0].name = "sm\xff" "all(float*)";
    fx->k[0].mangled = "_Z5sm\xff";
    fx->range_row.mangled = fx->k[1].mangled;
    fx->r.group_shape = true;
    shape_add(&fx->k[0].shapes, &(struct kshape){ { 8, 1, 1 }, { 256, 1, 1 }, 0 }, 100.0);
    fx->argv[1] = "--n" "\xc3";
    fx->r.host = "h\xfe";
    same_after_reading(fx, model_write_json);
    same_after_reading(fx, model_write_text);
    same_after_reading(fx, model_write_csv);
    shape_set_free(fx->k[0].shapes);
    fx->k[0].shapes = NULL;
    /* A snapshot's header and paused launches come back too. */
    struct report_snapshot snap = { .seq = 7, .at_unix = 1800000000.5, .interval_s = 5,
                                    .resets = 2, .since_unix = 1800000000.0 };
    fx->r.snapshot = &snap;
    fx->k[3].paused = 4;
    fx->memop.paused = 1;
    same_after_reading(fx, model_write_json);
    same_after_reading(fx, model_write_text);
    same_after_reading(fx, model_write_csv);
}

/* s with every from replaced by to (a copy to free). */
static char *replaced(const char *s, const char *from, const char *to)
{
    size_t n = strlen(from), m = strlen(to), k = 0;
    char *out = malloc(strlen(s) * (m > n ? m : n) / n + 1);

    assert_non_null(out);
    while (*s) {
        if (strncmp(s, from, n) == 0) {
            memcpy(out + k, to, m);
            k += m;
            s += n;
        } else {
            out[k++] = *s++;
        }
    }
    out[k] = '\0';
    return out;
}

/* A report written before the keys were renamed ("range" for "capture", "regions" for
 * "ranges" and its "ranges" for "by_name": their earlier names) reads as the same report: its
 * JSON, text and CSV are those of the report with today's keys. */
static void test_earlier_keys(void **state)
{
    struct fixture *fx = *state;
    int (*writers[])(FILE *, const struct model *) = { model_write_json, model_write_text,
                                                       model_write_csv };
    struct model m, back;
    char err[300];
    char *json, *a, *b, *old;

    fx->r.capture = "nvtx:fwd";
    fx->r.capture_starts = 2, fx->r.capture_stops = 2, fx->r.capture_ranges = 2;
    fixture_model(fx, &m);
    json = fixture_render(&m, model_write_json);
    assert_non_null(strstr(json, "\"capture\": { \"mode\": \"nvtx:fwd\", \"starts\": 2,"));
    assert_non_null(strstr(json, "\"ranges\": { \"attribution\": \"innermost\","));
    assert_non_null(strstr(json, "\"by_name\": [\n"));
    a = replaced(json, "\"capture\": {", "\"range\": {");          /* earlier name */
    b = replaced(a, "\"ranges\": { \"attribution\"", "\"regions\": { \"attribution\""); /* earlier name */
    old = replaced(b, "\"by_name\": [", "\"ranges\": [");          /* earlier name */
    free(a);
    free(b);
    assert_null(strstr(old, "\"capture\""));
    assert_null(strstr(old, "\"by_name\""));
    assert_int_equal(model_read(&back, old, strlen(old), err, sizeof err), 0);
    for (size_t i = 0; i < sizeof writers / sizeof writers[0]; i++) {
        char *want = fixture_render(&m, writers[i]), *got = fixture_render(&back, writers[i]);
        assert_string_equal(got, want);
        free(want);
        free(got);
    }
    model_free(&back);
    /* An error in such a report names the key it has. */
    a = replaced(old, "\"regions\": { \"attribution\": \"innermost\"",
                 "\"regions\": { \"attribution\": 7"); /* earlier name */
    assert_int_not_equal(model_read(&back, a, strlen(a), err, sizeof err), 0);
    assert_non_null(strstr(err, "regions.attribution")); /* earlier name */
    free(a);
    free(old);
    free(json);
    model_free(&m);
}

static const char merged[] =
    "{\"schema_version\": 2, \"warmup\": 5, \"timing_method\": \"cuda-events\", \"command\": [\"./a\"],"
    " \"launch_gate_mode\": \"mixed\", \"devices\": [{\"ordinal\": 0, \"name\": \"G\","
    " \"host\": \"b\", \"host_ordinal\": 3}],"
    " \"kernels\": [{\"name\": \"k\", \"mangled\": \"k\", \"calls\": 4, \"timed\": 2,"
    " \"total_ms\": 0.3, \"percent\": 100.0, \"sum_us\": 300.0, \"m2_us2\": 5000.0,"
    " \"mean_us\": 150.0, \"min_us\": 100.0, \"max_us\": 200.0,"
    " \"rank_spread\": {\"ranks\": 2, \"slowest\": {\"input\": 1, \"rank\": null, \"label\": \"#1\","
    " \"total_ms\": 0.2}, \"fastest\": {\"input\": 0, \"rank\": 0, \"label\": \"0\","
    " \"total_ms\": 0.1}, \"ratio\": 2.0}}],"
    " \"totals\": {\"launches_seen\": 4, \"timed\": 2, \"sample\": null, \"timed_total_ms\": 0.3},"
    " \"merged_from\": [{\"host\": \"b\", \"rank\": 0}, {\"host\": null, \"rank\": null}]}";

/* A merged report: who was merged, the devices' hosts, the gates that differ, the spread. */
static void test_merged(void **state)
{
    struct model m;
    char err[300], *t;

    assert_int_equal(model_read(&m, merged, strlen(merged), err, sizeof err), 0);
    t = fixture_render(&m, model_write_text);
    assert_non_null(strstr(t, "\nmerged   2 reports (ranks 0, #1) from 2 hosts: None, b\n"));
    assert_null(strstr(t, "\npid "));
    assert_non_null(strstr(t, "gpu 0    G, driver CUDA 0.0 (gpu 3 of b)\n"));
    assert_non_null(strstr(t, "gate     mixed: the merged reports' KTIME_GATE differ\n"));
    assert_non_null(strstr(t, "\nload balance: each kernel's total time on its slowest and its "
                              "fastest rank, and the slowest over the mean of the ranks\n"));
    /* A merged report of before the mean of the ranks: no imbalance. */
    assert_non_null(strstr(t, "     2        0.200     #1        0.100      0    2.000        -  k\n"));
    free(t);
    model_free(&m);
}

/* Each input is refused with one line (no line end) that says what is wrong. */
static void test_malformed(void **state)
{
    static const struct { const char *in, *want; } cases[] = {
        { "", "truncated" },
        { "{", "truncated" },
        { "{\"a\": [1, 2", "truncated" },
        { "{\"a\": \"x", "truncated" },
        { "{\"a\": tru", "truncated" },
        { "{\"a\": 1.", "truncated" },
        { "{\"a\": \"\xc3", "truncated" },
        { "[1, 2]", "the top level is a list, not an object" },
        { "{\"a\": 1} x", "more after the end of the document" },
        { "{\"a\": 01}", "starts with 0 and another digit" },
        { "{\"a\": 1e999}", "too large" },
        { "{\"a\": \"\xff\"}", "not UTF-8" },
        { "{\"a\": \"\xed\xa0\x80\"}", "not UTF-8" },            /* a surrogate in UTF-8 */
        { "{\"a\": \"\\ud800\"}", "high surrogate" },
        { "{\"a\": \"\\udc00\"}", "low surrogate" },
        { "{\"a\": \"\\u0000\"}", "U+0000" },
        { "{\"a\": \"\\x\"}", "not an escape" },
        { "{\"a\": \"\t\"}", "control character" },
        { "{\"a\" 1}", "no ':'" },
        { "{1: 2}", "key is not a string" },
        { "{\"a\": 1,}", "key is not a string" },
        { "[1 2]", "no ','" },
        { "\xef\xbb\xbf{}", "byte order mark" },
        { "nul", "truncated" },
        { "{\"ktime_diff\": 1}", "is a ktime diff, not a report" },
        { "{}", "the top level has no 'schema_version'" },
        { "{\"schema_version\": 99}", "schema_version 99" },
        { "{\"schema_version\": 2.5}", "schema_version is 2.5, not a count" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": 5, \"devices\": [],"
          " \"totals\": {\"timed_total_ms\": 0}, \"kernels\": {}}", "kernels is an object, not a list" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": 5, \"devices\": [],"
          " \"totals\": {\"timed_total_ms\": 0}, \"kernels\": [{\"name\": \"k\", \"mangled\": \"k\","
          " \"calls\": 1, \"timed\": \"many\", \"total_ms\": 0}]}",
          "kernels[0].timed is 'many', not a count" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": 5, \"devices\": [],"
          " \"totals\": {\"timed_total_ms\": 0}, \"kernels\": [{\"name\": \"k\", \"name_bytes\": \"6\","
          " \"mangled\": \"k\", \"calls\": 1, \"timed\": 0, \"total_ms\": 0}]}",
          "kernels[0].name_bytes is not the hex digits" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": 5, \"devices\": [],"
          " \"totals\": {\"timed_total_ms\": 0}, \"kernels\": [{\"name\": \"k\", \"mangled\": \"k\","
          " \"calls\": 1, \"timed\": 1, \"total_ms\": 0}]}", "kernels[0] has no 'min_us'" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": 5, \"devices\": [],"
          " \"totals\": {\"timed_total_ms\": 0}, \"kernels\": [{\"name\": \"k\", \"mangled\": \"k\","
          " \"calls\": 1, \"timed\": 0, \"total_ms\": 0, \"histogram\": {\"buckets\": [[1, 2]]}}]}",
          "kernels[0].histogram.buckets holds a list, not [bucket, edge, count]" },
        { "{\"schema_version\": 2, \"timing_method\": \"e\", \"warmup\": -5}",
          "warmup is -5, not a count" },
    };
    struct model m;
    char err[300];

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        memset(err, 0, sizeof err);
        assert_int_equal(model_read(&m, cases[i].in, strlen(cases[i].in), err, sizeof err), -1);
        if (!strstr(err, cases[i].want))
            fail_msg("case %zu: '%s' does not say '%s'", i, err, cases[i].want);
        assert_null(strchr(err, '\n'));
        assert_null(m.mem); /* nothing left allocated */
    }
}

/* Deeply nested input is refused, not followed down the stack. */
static void test_deep(void **state)
{
    size_t n = 100000;
    char *s = malloc(2 * n + 1), err[300];
    struct model m;

    memset(s, '[', n);
    memset(s + n, ']', n);
    s[2 * n] = '\0';
    assert_int_equal(model_read(&m, s, 2 * n, err, sizeof err), -1);
    assert_non_null(strstr(err, "nested deeper than"));
    free(s);
}

/* A report cut anywhere before its end says truncated. */
static void test_truncated_anywhere(void **state)
{
    struct model m, back;
    char err[300], *json;
    size_t len;

    fixture_model(*state, &m);
    json = fixture_render(&m, model_write_json);
    len = strlen(json);
    assert_true(len > 1000);
    for (size_t cut = 0; cut < len - 2; cut += 1 + cut % 7) {
        assert_int_equal(model_read(&back, json, cut, err, sizeof err), -1);
        if (!strstr(err, "truncated"))
            fail_msg("cut at %zu of %zu: %s", cut, len, err);
    }
    assert_int_equal(model_read(&back, json, len - 1, err, sizeof err), 0); /* less its \n */
    model_free(&back);
    free(json);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_round_trip, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_earlier_keys, fixture_setup, fixture_teardown),
        cmocka_unit_test(test_merged),
        cmocka_unit_test(test_malformed),
        cmocka_unit_test(test_deep),
        cmocka_unit_test_setup_teardown(test_truncated_anywhere, fixture_setup, fixture_teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
