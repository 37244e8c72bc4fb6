/* test_model.c - the report model built from a run's data (model_build, report_fixture.c):
 * rows ordered by total time, totals (the full table's launches too), percentages of the
 * whole, per-GPU parts, the hardware's bias, near floor and few samples, quantiles, memory
 * operations' throughput, a range's rows named as the kernels' table names them, the
 * conditions' lines; and the views `ktime report` offers (model_select). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "reader.h"
#include "report_fixture.h"

static void test_rows_in_order(void **state)
{
    struct model m;

    fixture_model(*state, &m);
    assert_int_equal(m.nrows, 4);
    assert_int_equal(m.nrows_all, 4);
    /* big 8 ms, small 1 ms, near 0.4 ms, the graph never timed. */
    assert_string_equal(m.rows[0].mangled, "_Z3bigIfEvPT_i");
    assert_string_equal(m.rows[1].mangled, "_Z5smallPf");
    assert_string_equal(m.rows[2].mangled, "near");
    assert_string_equal(m.rows[3].mangled, "graph_1");
    assert_int_equal(m.rows[3].kind, REPORT_GRAPH);
    assert_string_equal(m.rows[0].short_name, "big<float>");
    assert_string_equal(m.rows[1].short_name, "small");
    assert_int_equal(m.rows[0].ref, 0);
    assert_false(m.has_refs);
    model_free(&m);
}

static void test_totals_and_percentages(void **state)
{
    struct model m;
    const struct rm_row *big;

    fixture_model(*state, &m);
    big = &m.rows[0];
    /* 15 + 9 + 3 + 25 calls, and 4 of kernels the full table could not hold. */
    assert_int_equal(m.totals.n[RT_LAUNCHES], 56);
    assert_int_equal(m.totals.n[RT_DROPPED], 2 + 4);
    assert_int_equal(m.totals.n[RT_TIMED], 10 + 4 + 20);
    assert_int_equal(m.totals.n[RT_WARMUP], 5 + 3 + 5);
    assert_int_equal(m.totals.drops[RD_POOL], 2);
    assert_float_equal(m.totals.timed_total_ms, 9.4, 1e-12);
    assert_float_equal(big->st.v[RS_TOTAL], 8.0, 1e-12);
    assert_float_equal(big->st.v[RS_PERCENT], 100.0 * 8000.0 / 9400.0, 1e-12);
    assert_float_equal(big->st.v[RS_MEAN], 2000.0, 1e-12);
    assert_float_equal(big->st.v[RS_STDDEV], sqrt(4e6 / 3.0), 1e-9);
    /* A GPU's part: its own sum over the whole. */
    assert_int_equal(big->ndev, 2);
    assert_int_equal(big->dev[1].device, 1);
    assert_int_equal(big->dev[1].st.timed, 2);
    assert_float_equal(big->dev[1].st.v[RS_TOTAL], 6.0, 1e-12);
    assert_float_equal(big->dev[1].st.v[RS_PERCENT], 100.0 * 6000.0 / 9400.0, 1e-12);
    assert_float_equal(big->dev[1].st.v[RS_P50], 3000.0, 1e-9); /* clamped to min = max */
    /* small ran on one GPU: no per-GPU lines to show, one part. */
    assert_int_equal(m.rows[1].ndev, 1);
    model_free(&m);
}

static void test_flags_quantiles_hw(void **state)
{
    struct model m;

    fixture_model(*state, &m);
    const struct rm_row *big = &m.rows[0], *small = &m.rows[1], *near = &m.rows[2], *g = &m.rows[3];
    assert_true(big->few_samples);   /* 4 < FEW_SAMPLES */
    assert_false(small->few_samples);
    assert_true(near->near_floor);   /* 20 us < 3 x gpu 0's 10 us */
    assert_false(small->near_floor);
    assert_float_equal(small->st.v[RS_P50], 100.0, 1e-9);
    assert_true(g->st.v[RS_P50] < 0 && g->st.v[RS_P99] < 0); /* none */
    assert_non_null(big->st.hist);
    assert_int_equal(big->st.hist->n, 2);
    assert_int_equal(big->st.hist->b[0].count + big->st.hist->b[1].count, 4);
    /* KTIME_TIMER=both: the events' mean (2000) less the hardware's (1900). */
    assert_non_null(big->hw);
    assert_int_equal(big->hw->st.timed, 4);
    assert_true(big->hw->has_bias);
    assert_float_equal(big->hw->bias, 100.0, 1e-9);
    assert_null(small->hw);
    model_free(&m);
}

static void test_sections(void **state)
{
    struct model m;

    fixture_model(*state, &m);
    assert_true(m.memops_on);
    assert_int_equal(m.nmemops, 1);
    assert_string_equal(m.memops[0].name, "HtoD");
    assert_true(m.memops[0].has_gbps);
    assert_float_equal(m.memops[0].gbps, 4e6 / 50.0 / 1000.0, 1e-9); /* 80 GB/s */
    assert_float_equal(m.memops[0].st.v[RS_TOTAL], 0.05, 1e-12);
    assert_true(m.memops[0].few_samples);
    assert_non_null(m.ranges);
    assert_int_equal(m.ranges->nby_name, 1);
    const struct rm_row *w = &m.ranges->by_name[0].rows[0];
    assert_float_equal(w->st.v[RS_PERCENT], 100.0, 1e-12);
    assert_string_equal(w->short_name, "big<float>"); /* as the kernels' table names it */
    assert_non_null(m.cond);
    assert_true(m.cond->checked);
    assert_int_equal(m.cond->ntext, 3);
    assert_non_null(strstr(m.cond->text[0], "conditions: gpu 0 shared with 1 other process (other pid 77)"));
    assert_string_equal(m.cond->text[1], "conditions: gpu 1 not checked (no NVML device found for it)");
    assert_int_equal(m.cond->nwarnings, 1);
    assert_non_null(strstr(m.cond->warnings[0], "gpu 0 was shared with 1 other process"));
    assert_int_equal(m.cond->devs[0].temp_min, 40);
    assert_int_equal(m.cond->devs[0].temp_max, 41);
    model_free(&m);
}

static void test_select(void **state)
{
    struct model m;
    regex_t re;

    fixture_model(*state, &m);
    assert_int_equal(model_select(&m, NULL, NULL, SORT_CALLS, 2), 0);
    assert_int_equal(m.nrows, 2);
    assert_string_equal(m.rows[0].mangled, "near");  /* 25 calls */
    assert_string_equal(m.rows[1].mangled, "_Z5smallPf");
    assert_string_equal(m.shown, "shown    2 of 4 kernels (sorted by calls, --top 2); the totals "
                                 "below are the whole run's\n");
    model_free(&m);

    fixture_model(*state, &m);
    assert_int_equal(regcomp(&re, "^_Z", REG_EXTENDED | REG_NOSUB), 0);
    assert_int_equal(model_select(&m, &re, "^_Z", SORT_MEAN, 0), 0);
    regfree(&re);
    assert_int_equal(m.nrows, 2);
    assert_string_equal(m.rows[0].mangled, "_Z3bigIfEvPT_i"); /* mean 2000 */
    assert_string_equal(m.shown, "shown    2 of 4 kernels (--filter '^_Z', sorted by mean); the "
                                 "totals below are the whole run's\n");
    model_free(&m);

    /* Nothing left out or reordered: no line. A row with no value sorts last. */
    fixture_model(*state, &m);
    assert_int_equal(model_select(&m, NULL, NULL, SORT_TOTAL, 4), 0);
    assert_null(m.shown);
    assert_int_equal(model_select(&m, NULL, NULL, SORT_P99, 0), 0);
    assert_string_equal(m.rows[3].mangled, "graph_1");
    model_free(&m);
}

/* The writers print what the model holds: the text's row of big, its per-GPU line, the
 * range's row with big's short name, the conditions' line, the footer's totals. */
static void test_writers_print_the_model(void **state)
{
    struct model m;
    char *t;

    fixture_model(*state, &m);
    m.rows[0].st.v[RS_MEAN] = 1234.5; /* the writer prints it, computes nothing */
    t = fixture_render(&m, model_write_text);
    assert_non_null(strstr(t, "    1234.500 "));
    assert_non_null(strstr(t, "\n  63.83        6.000                           2    3000.000 "));
    assert_non_null(strstr(t, "range    \"fwd\": 2 closed, 5.000 ms of wall time; 2 timed launches, "
                              "2.000 ms of GPU time\n"));
    assert_non_null(strstr(t, "conditions: gpu 1 not checked (no NVML device found for it)\n"));
    assert_non_null(strstr(t, "launches 56 seen: 34 timed, 13 warmup, 0 captured, 6 dropped, "
                              "1 failed, 0 incomplete at exit\n"));
    assert_non_null(strstr(t, "timed    9.400 ms in all\n"));
    /* KTIME_TIMER=both: the events' method, their gate, and the bias table. */
    assert_non_null(strstr(t, "\nmethod   a CUDA event pair on the launch's own stream around "
                              "every launch,\n         and CUPTI's"));
    assert_non_null(strstr(t, "\ngate     auto: a stream that may be idle"));
    assert_non_null(strstr(t, "\nevents against the hardware (CUPTI), per kernel"));
    free(t);
    model_free(&m);
}

/* A snapshot (KTIME_INTERVAL, ktime ctl): its seq, time, what the counts cover, in the JSON's
 * header and the text's; launches made while timing was off, a bucket of their own. */
static void test_snapshot_and_paused(void **state)
{
    struct fixture *fx = *state;
    struct report_snapshot snap = { .seq = 3, .at_unix = 1800000000.25, .final = false,
                                    .interval_s = 10, .resets = 1, .since_unix = 1800000000.0 };
    struct model m;
    char *t, *j, *c;

    fx->k[3].paused = 4;
    fx->k[3].calls += 4;
    fx->memop.paused = 2;
    fx->r.snapshot = &snap;
    fixture_model(fx, &m);
    assert_non_null(m.snapshot);
    assert_int_equal(m.snapshot->seq, 3);
    assert_string_equal(m.snapshot->at, "2027-01-15T08:00:00.250Z");
    assert_string_equal(m.snapshot->since, "2027-01-15T08:00:00.000Z");
    assert_false(m.snapshot->final);
    assert_int_equal(m.totals.n[RT_PAUSED], 4);
    assert_int_equal(m.totals.n[RT_LAUNCHES], 60);
    j = fixture_render(&m, model_write_json);
    assert_non_null(strstr(j, "\n  \"snapshot\": { \"seq\": 3, \"at\": \"2027-01-15T08:00:00.250Z\", "
                              "\"final\": false, \"interval_s\": 10, \"resets\": 1, "
                              "\"since\": \"2027-01-15T08:00:00.000Z\", \"paused\": false },\n"));
    assert_non_null(strstr(j, "\"outside_range\": 0,\n      \"paused\": 4,"));
    assert_non_null(strstr(j, "\"kind\": \"HtoD\", \"calls\": 8, \"warmup_skipped\": 3, "
                              "\"captured\": 0, \"dropped\": 0, \"failed\": 0, \"incomplete\": 0, "
                              "\"outside_range\": 0, \"paused\": 2,"));
    t = fixture_render(&m, model_write_text);
    assert_non_null(strstr(t, "\nsnapshot 3 at 2027-01-15T08:00:00.250Z, while the program runs\n"
                              "counts   since 2027-01-15T08:00:00.000Z (reset 1 time by ktime ctl)\n"));
    assert_non_null(strstr(t, "(near floor, 4 paused)"));
    assert_non_null(strstr(t, "launches 60 seen: 34 timed, 4 paused, 13 warmup,"));
    c = fixture_render(&m, model_write_csv);
    assert_non_null(strstr(c, ",near,kernel,all,29,5,"));
    assert_non_null(strstr(c, ",0,,,,4,\r\n"));
    free(t);
    free(j);
    free(c);
    model_free(&m);
    /* The report at exit says it is the final one. */
    snap.final = true;
    snap.resets = 0;
    fixture_model(fx, &m);
    t = fixture_render(&m, model_write_text);
    assert_non_null(strstr(t, "\nsnapshot 3, the final report (at exit)\n"));
    assert_null(strstr(t, "counts   since"));
    free(t);
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_rows_in_order, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_totals_and_percentages, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_flags_quantiles_hw, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_sections, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_select, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_writers_print_the_model, fixture_setup,
                                        fixture_teardown),
        cmocka_unit_test_setup_teardown(test_snapshot_and_paused, fixture_setup,
                                        fixture_teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
