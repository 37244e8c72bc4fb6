/* test_prom.c - the Prometheus file (model_write_prom) and its bounded label set
 * (model_prom_view), from the model's fixture: each family's HELP, TYPE and samples, label
 * values escaped, the rows past the first n folded into one with their counts and samples,
 * names that repeat told apart. The grammar of the whole file is checked end to end
 * (tests/e2e/live.sh, tests/e2e/promcheck.c). */
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

#define LABELS "{host=\"node\\\"1\\\\\\n\",rank=\"3\","

static void test_families(void **state)
{
    struct fixture *fx = *state;
    struct report_snapshot snap = { .seq = 3, .at_unix = 1800000000.25, .interval_s = 10 };
    struct model m;
    char *p;

    fx->r.host = "node\"1\\\n";
    fx->r.rank = "3";
    fx->r.snapshot = &snap;
    fx->k[0].name = "sm\xff" "all";
    fixture_model(fx, &m);
    p = fixture_render(&m, model_write_prom);
    assert_non_null(strstr(p, "# HELP ktime_kernel_launches_total Kernel (and CUDA graph) launches"));
    assert_non_null(strstr(p, "\n# TYPE ktime_kernel_launches_total counter\n"
                              "ktime_kernel_launches_total" LABELS "kernel=\"void big<float>(float*, int)\"} 9\n"
                              "ktime_kernel_launches_total" LABELS "kernel=\"sm\xef\xbf\xbd" "all\"} 15\n"));
    assert_non_null(strstr(p, "\nktime_kernel_launches_total" LABELS "kernel=\"graph_1\"} 3\n"));
    assert_non_null(strstr(p, "\n# TYPE ktime_kernel_timed_launches_total counter\n"
                              "ktime_kernel_timed_launches_total" LABELS "gpu=\"0\",kernel=\"void big<float>(float*, int)\"} 2\n"
                              "ktime_kernel_timed_launches_total" LABELS "gpu=\"1\",kernel=\"void big<float>(float*, int)\"} 2\n"));
    assert_non_null(strstr(p, "\nktime_kernel_gpu_seconds_total" LABELS "gpu=\"1\",kernel=\"void big<float>(float*, int)\"} 0.0060000000000000001\n"));
    assert_non_null(strstr(p, "\n# TYPE ktime_kernel_duration_seconds summary\n"
                              "ktime_kernel_duration_seconds" LABELS "gpu=\"0\",kernel=\"void big<float>(float*, int)\",quantile=\"0.5\"} 0.001\n"));
    assert_non_null(strstr(p, "\nktime_kernel_duration_seconds_count" LABELS "gpu=\"1\",kernel=\"void big<float>(float*, int)\"} 2\n"));
    /* A GPU part without quantiles: _sum and _count only. */
    assert_non_null(strstr(p, "\nktime_kernel_duration_seconds_sum" LABELS "gpu=\"0\",kernel=\"near\"} 0.00040000000000000002\n"));
    assert_null(strstr(p, "kernel=\"near\",quantile"));
    /* The graph was never timed: a launch count, no GPU series. */
    assert_null(strstr(p, "gpu=\"0\",kernel=\"graph_1\""));
    assert_non_null(strstr(p, "\nktime_launches_dropped_total" LABELS "reason=\"table_full\"} 4\n"));
    assert_non_null(strstr(p, "\nktime_snapshot_seq" "{host=\"node\\\"1\\\\\\n\",rank=\"3\"} 3\n"));
    assert_non_null(strstr(p, "\nktime_snapshot_timestamp_seconds{host=\"node\\\"1\\\\\\n\",rank=\"3\"} 1800000000.25\n"));
    assert_non_null(strstr(p, "\nktime_timing_on{host=\"node\\\"1\\\\\\n\",rank=\"3\"} 1\n"));
    free(p);
    model_free(&m);
    /* No host, no rank: no such labels; no snapshot: no snapshot families. */
    fx->r.host = NULL;
    fx->r.rank = NULL;
    fx->r.snapshot = NULL;
    fixture_model(fx, &m);
    p = fixture_render(&m, model_write_prom);
    assert_non_null(strstr(p, "\nktime_kernel_launches_total{kernel=\"near\"} 25\n"));
    assert_non_null(strstr(p, "\nktime_launches_paused_total{} 0\n"));
    assert_null(strstr(p, "ktime_snapshot_seq"));
    free(p);
    model_free(&m);
}

static void test_view(void **state)
{
    struct fixture *fx = *state;
    struct model m;

    fixture_model(fx, &m);
    /* Rows: big (9 calls, 2 + 2 samples), small (15, 10), near (25, 20), graph_1 (3, 0). */
    assert_int_equal(model_prom_view(&m, 1), 0);
    assert_int_equal(m.nrows, 2);
    assert_string_equal(m.rows[0].name, "void big<float>(float*, int)");
    const struct rm_row *o = &m.rows[1];
    assert_string_equal(o->name, MODEL_OTHER_ROWS);
    assert_int_equal(o->n[RC_CALLS], 15 + 25 + 3);
    assert_int_equal(o->n[RC_WARMUP], 5 + 5 + 3);
    assert_int_equal(o->st.timed, 30);
    assert_float_equal(o->st.v[RS_SUM], 1000.0 + 400.0, 1e-9);
    assert_float_equal(o->st.v[RS_MEAN], 1400.0 / 30, 1e-9);
    assert_float_equal(o->st.v[RS_MIN], 20.0, 1e-12);
    assert_float_equal(o->st.v[RS_MAX], 100.0, 1e-12);
    /* M2 of 10 x 100 and 20 x 20: the merged samples' own. */
    double mean = 1400.0 / 30, m2 = 10 * (100 - mean) * (100 - mean) + 20 * (20 - mean) * (20 - mean);
    assert_float_equal(o->st.v[RS_M2], m2, 1e-6);
    /* Quantiles from the merged histograms: 20 of 30 samples are 20 us. */
    assert_true(fabs(o->st.v[RS_P50] - 20.0) < 0.2);
    assert_true(fabs(o->st.v[RS_P99] - 100.0) < 1.0);
    assert_int_equal(o->ndev, 1);
    assert_int_equal(o->dev[0].device, 0);
    assert_int_equal(o->dev[0].st.timed, 30);
    assert_float_equal(o->dev[0].st.v[RS_SUM], 1400.0, 1e-9);
    assert_true(o->dev[0].st.v[RS_P50] < 0); /* a GPU's part: none */
    model_free(&m);
    /* n at or past the rows: nothing folded. */
    fixture_model(fx, &m);
    assert_int_equal(model_prom_view(&m, 4), 0);
    assert_int_equal(m.nrows, 4);
    model_free(&m);
    /* Names that repeat, or that are the folded row's, are told apart. */
    fx->k[3].name = "small(float*)";
    fx->k[2].name = MODEL_OTHER_ROWS;
    fixture_model(fx, &m);
    assert_int_equal(model_prom_view(&m, 3), 0);
    assert_string_equal(m.rows[1].name, "small(float*)");
    assert_string_equal(m.rows[2].name, "small(float*) [2]");
    assert_string_equal(m.rows[3].name, MODEL_OTHER_ROWS); /* the graph, folded */
    assert_int_equal(m.rows[3].n[RC_CALLS], 3);
    model_free(&m);
    fixture_model(fx, &m);
    assert_int_equal(model_prom_view(&m, 4), 0);
    assert_string_equal(m.rows[3].name, MODEL_OTHER_ROWS " [2]");
    model_free(&m);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test_setup_teardown(test_families, fixture_setup, fixture_teardown),
        cmocka_unit_test_setup_teardown(test_view, fixture_setup, fixture_teardown),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
