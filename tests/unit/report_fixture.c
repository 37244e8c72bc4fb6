/* report_fixture.c - a run's gathered data for the model's tests (report_fixture.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report_fixture.h"

static void samples(struct stats *st, struct sketch *sk, struct sketch *sk2, double us, int n)
{
    for (int i = 0; i < n; i++) {
        stats_add(st, us);
        if (sk)
            sketch_add(sk, us);
        if (sk2)
            sketch_add(sk2, us);
    }
}

/* The conditions NVML would have read: gpu 0 checked (another process on it), gpu 1 not. */
static void conditions(struct fixture *fx)
{
    struct cond_sample s;

    cond_init(&fx->cond);
    fx->cond.checked = true;
    fx->cond.mps = 0;
    fx->cond.interval_ms = 100;
    snprintf(fx->cond.library, sizeof fx->cond.library, "libnvidia-ml.so.1");
    struct cond_device *d = cond_device(&fx->cond, 0);
    d->mapped = true;
    for (int i = 0; i < 2; i++) {
        memset(&s, 0, sizeof s);
        s.t = i * 0.5;
        s.procs_ok = s.sm_ok = s.temp_ok = s.reasons_ok = true;
        s.nprocs = 2;
        s.self_listed = true;
        s.nothers = 1;
        s.others[0].pid = 77;
        snprintf(s.others[0].name, sizeof s.others[0].name, "other");
        s.sm_mhz = 1980;
        s.temp_c = 40 + i;
        cond_add_sample(d, &s, i == 1);
    }
    snprintf(cond_device(&fx->cond, 1)->why, sizeof d->why, "no NVML device found for it");
}

static void kernels(struct fixture *fx)
{
    struct report_kernel *k = fx->k;

    k[0] = (struct report_kernel){ .mangled = "_Z5smallPf", .name = "small(float*)", .calls = 15,
                                   .warmup_skipped = 5 };
    samples(&fx->per_dev[0][0], &fx->sk[0], NULL, 100.0, 10);
    k[1] = (struct report_kernel){ .mangled = "_Z3bigIfEvPT_i", .name = "void big<float>(float*, int)",
                                   .calls = 9, .dropped = 2, .failed = 1, .ungated = 3 };
    samples(&fx->per_dev[1][0], &fx->sk[1], &fx->dev_sk[0], 1000.0, 2);
    samples(&fx->per_dev[1][1], &fx->sk[1], &fx->dev_sk[1], 3000.0, 2);
    samples(&fx->hw[0], NULL, NULL, 900.0, 2);
    samples(&fx->hw[1], NULL, NULL, 2900.0, 2);
    k[1].hw = fx->hw;
    k[1].dev_sk = fx->dev_sk;
    k[2] = (struct report_kernel){ .mangled = "graph_1", .kind = REPORT_GRAPH, .calls = 3,
                                   .warmup_skipped = 3 };
    k[3] = (struct report_kernel){ .mangled = "near", .calls = 25, .warmup_skipped = 5 };
    samples(&fx->per_dev[3][0], &fx->sk[3], NULL, 20.0, 20);
    for (int i = 0; i < 4; i++) {
        k[i].per_dev = fx->per_dev[i];
        k[i].sk = fx->per_dev[i][0].n || fx->per_dev[i][1].n ? &fx->sk[i] : NULL;
    }
    fx->memop = (struct report_kernel){ .mangled = "HtoD", .name = "HtoD", .kind = REPORT_MEMOP,
                                        .calls = 8, .warmup_skipped = 3, .bytes = 5000000,
                                        .timed_bytes = 4000000, .per_dev = fx->memop_dev,
                                        .sk = &fx->memop_sk };
    samples(&fx->memop_dev[0], &fx->memop_sk, NULL, 10.0, 5);
}

int fixture_setup(void **state)
{
    struct fixture *fx = calloc(1, sizeof *fx);
    struct report *r = &fx->r;

    assert_non_null(fx);
    fx->dev[0] = (struct report_device){ .ordinal = 0, .name = "Fake GPU 0", .driver_version = 13000,
                                         .floor_events_us = 10.0 };
    fx->dev[1] = (struct report_device){ .ordinal = 1, .name = "Fake GPU 1", .driver_version = 13000 };
    kernels(fx);
    samples(&fx->range_row.st, &fx->range_sk, NULL, 1000.0, 2);
    fx->range_row = (struct report_range_row){ "_Z3bigIfEvPT_i", fx->k[1].name, REPORT_KERNEL,
                                                 fx->range_row.st, &fx->range_sk };
    fx->range = (struct report_range){ .name = "fwd", .closed = 2, .wall_ms = 5.0,
                                         .total_us = 2000.0, .timed = 2, .rows = &fx->range_row,
                                         .nrows = 1 };
    conditions(fx);
    fx->argv[0] = "./app";
    fx->argv[1] = "--n";
    fx->argv[2] = "3";
    *r = (struct report){ .version = "9.9.9", .build = "abc1234", .argv = fx->argv, .argc = 3,
                          .pid = 42, .warmup = 5, .sample = 1, .gate = "auto", .timer = "both",
                          .timer_requested = "both", .devices = fx->dev, .ndevices = 2,
                          .kernels = fx->k, .nkernels = 4, .conditions = &fx->cond,
                          .memops = true, .memops_rows = &fx->memop, .nmemops = 1,
                          .ranges_by_name = &fx->range, .nranges_by_name = 1, .range_attribution = "innermost",
                          .nvtx = "not injected" };
    r->drops[DROP_TABLE_FULL] = 4;
    r->drops[DROP_POOL_EXHAUSTED] = 2;
    *state = fx;
    return 0;
}

int fixture_teardown(void **state)
{
    free(*state);
    return 0;
}

void fixture_model(struct fixture *fx, struct model *m)
{
    assert_int_equal(model_build(m, &fx->r), 0);
}

char *fixture_render(const struct model *m, int (*writer)(FILE *, const struct model *))
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    assert_non_null(f);
    assert_int_equal(writer(f, m), 0);
    fclose(f);
    return buf;
}
