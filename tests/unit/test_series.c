/* test_series.c - KTIME_SERIES's lines: what each kernel did between two snapshots of one
 * process (series_delta: counts and sums as differences, the interval's quantiles from the
 * histograms' difference, rows that did nothing left out, a first line counted from zero) and
 * the line itself (series_write: one line of JSON). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"
#include "series.h"

static char *line_of(const struct series_delta *d, const struct model *cur)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(series_write(f, d, cur), 0);
    fclose(f);
    return buf;
}

static void test_delta(void **state)
{
    struct fixture *fx = *state;
    struct report_snapshot s1 = { .seq = 1, .at_unix = 1800000010.0, .interval_s = 10,
                                  .since_unix = 1800000000.0 },
                           s2 = { .seq = 2, .at_unix = 1800000020.0, .interval_s = 10,
                                  .since_unix = 1800000000.0 };
    struct series_delta d;
    struct model prev, cur;
    char *line;

    fx->r.pid = 77;
    fx->r.host = "h";
    fx->r.snapshot = &s1;
    fixture_model(fx, &prev);
    /* The first line: every row that did anything, from zero. */
    assert_int_equal(series_delta(&d, NULL, &prev), 0);
    assert_true(d.from_zero);
    assert_string_equal(d.from, "2027-01-15T08:00:00.000Z");
    assert_int_equal(d.nrows, 4);
    series_free(&d);
    /* Then: small launched 6 more times, 5 timed at 300 us; near and the graph nothing. */
    fx->k[0].calls += 6;
    for (int i = 0; i < 5; i++) {
        stats_add(&fx->per_dev[0][0], 300.0);
        sketch_add(&fx->sk[0], 300.0);
    }
    fx->k[1].calls += 1; /* big: a launch still in flight, no sample yet */
    fx->r.snapshot = &s2;
    fixture_model(fx, &cur);
    assert_int_equal(series_delta(&d, &prev, &cur), 0);
    assert_false(d.from_zero);
    assert_string_equal(d.from, "2027-01-15T08:00:10.000Z");
    assert_int_equal(d.nrows, 2);
    assert_string_equal(d.rows[0].mangled, "_Z3bigIfEvPT_i");
    assert_int_equal(d.rows[0].calls, 1);
    assert_int_equal(d.rows[0].timed, 0);
    assert_float_equal(d.rows[0].sum_us, 0, 0);
    assert_true(d.rows[0].p50_us < 0);
    assert_string_equal(d.rows[1].mangled, "_Z5smallPf");
    assert_int_equal(d.rows[1].calls, 6);
    assert_int_equal(d.rows[1].timed, 5);
    assert_float_equal(d.rows[1].sum_us, 1500.0, 1e-9);
    /* The interval's quantiles are its own samples' (300 us), not the run's (100 us). */
    assert_true(fabs(d.rows[1].p50_us - 300.0) < 3.0);
    assert_true(fabs(d.rows[1].p99_us - 300.0) < 3.0);
    line = line_of(&d, &cur);
    assert_non_null(strstr(line, "{\"ktime_series\": 1, \"pid\": 77, \"host\": \"h\", \"rank\": null, "
                                 "\"seq\": 2, \"from\": \"2027-01-15T08:00:10.000Z\", "
                                 "\"at\": \"2027-01-15T08:00:20.000Z\", \"from_zero\": false, "
                                 "\"final\": false, \"paused\": false, \"kernels\": [{\"name\": "
                                 "\"void big<float>(float*, int)\", \"mangled\": \"_Z3bigIfEvPT_i\", "
                                 "\"kind\": \"kernel\", \"calls\": 1, \"timed\": 0, \"sum_us\": 0, "
                                 "\"p50_us\": null, \"p99_us\": null}, {\"name\": \"small(float*)\""));
    assert_non_null(strstr(line, "\"calls\": 6, \"timed\": 5, \"sum_us\": 1500, \"p50_us\": "));
    /* One line. */
    assert_ptr_equal(strchr(line, '\n'), line + strlen(line) - 1);
    free(line);
    series_free(&d);
    /* Counts that went down (a launch in flight counted incomplete, then captured): signed. */
    fx->k[1].calls -= 1;
    model_free(&prev);
    fixture_model(fx, &prev);
    assert_int_equal(series_delta(&d, &cur, &prev), 0);
    assert_int_equal(d.nrows, 1);
    assert_string_equal(d.rows[0].mangled, "_Z3bigIfEvPT_i");
    assert_int_equal(d.rows[0].calls, -1);
    series_free(&d);
    model_free(&prev);
    model_free(&cur);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_delta, fixture_setup, fixture_teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
