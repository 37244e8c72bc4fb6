/* report_fixture.h - a run's gathered data (struct report) for the model's tests: four rows
 * on two GPUs (one near the timer's floor, one a graph never timed, one with CUPTI's samples
 * beside the events'), a memory operation, a range, the conditions of one GPU, and launches
 * of kernels the full table could not hold. cmocka setup/teardown. */
#ifndef KTIME_REPORT_FIXTURE_H
#define KTIME_REPORT_FIXTURE_H

#include "conditions.h"
#include "report.h"

struct fixture {
    struct report r;
    struct report_device dev[2];
    struct report_kernel k[4];
    struct report_kernel memop;
    struct report_range range;
    struct report_range_row range_row;
    struct stats per_dev[4][2], hw[2], memop_dev[2];
    struct sketch sk[4], dev_sk[2], range_sk, memop_sk;
    struct conditions cond;
    const char *argv[3];
};

/* *state: a new struct fixture (freed by fixture_teardown). */
int fixture_setup(void **state);
int fixture_teardown(void **state);

/* The model of the fixture's report (model_build); fails the test when it cannot be built. */
void fixture_model(struct fixture *fx, struct model *m);

/* What writer prints for m, as a string to free. */
char *fixture_render(const struct model *m, int (*writer)(FILE *, const struct model *));

#endif
