/* test_hw.c - the CUPTI timer's aggregates (src/core/hw.c): warmup by record, bad records, and
 * the records of ktime's own streams counted under their own name. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "hw.h"

#define US 1000u /* ns */

static void test_warmup_by_record(void **state)
{
    struct hw h;
    hw_init(&h, 2);
    for (uint64_t i = 0; i < 5; i++)
        hw_add(&h, "k", 0, 1, 7, 100 * US * i, 100 * US * i + (i + 1) * US, false, NULL);
    hw_add(&h, "k", 0, 1, 7, 900 * US, 900 * US, false, NULL); /* no valid end */
    struct hw_kernel *k = hw_find(&h, "k");
    assert_non_null(k);
    assert_int_equal(k->records, 6);
    assert_int_equal(k->warmup, 2);
    assert_int_equal(k->bad, 1);
    assert_int_equal(k->devs->st.n, 3);
    assert_true(k->devs->st.min == 3.0 && k->devs->st.max == 5.0);
    hw_free(&h);
}

/* The floor's records on its own stream are the floor's, whatever name CUPTI gives them (it
 * gave one the name of a kernel from a module the program had unloaded); the user's kernel
 * of that name keeps exactly its own records, on any other stream or context. */
static void test_own_stream_named(void **state)
{
    static const char floor_name[] = "ktime_floor_empty";
    struct hw h;
    struct trace t;
    hw_init(&h, 1);
    trace_init(&t, 100);
    h.trace = &t; /* the program's records only: 3 of kp_rtc after its warmup, and stream 9's
                   * of context 2 */
    for (int i = 0; i < 4; i++)
        hw_add(&h, "kp_rtc", 0, 1, 7, 0, 800, false, NULL);
    assert_int_equal(hw_own(&h, 1, 9, floor_name), 0);
    for (int i = 0; i < 33; i++)
        hw_add(&h, "kp_rtc", 0, 1, 9, 0, 500, false, NULL); /* the floor, misnamed */
    hw_add(&h, "kp_rtc", 0, 2, 9, 0, 800, false, NULL);     /* stream 9 of another context */
    struct hw_kernel *k = hw_find(&h, "kp_rtc"), *f = hw_find(&h, floor_name);
    assert_non_null(k);
    assert_non_null(f);
    assert_int_equal(k->records, 5);
    assert_true(k->devs->st.min == 0.8 && k->devs->st.max == 0.8);
    assert_int_equal(f->records, 33);
    assert_int_equal(f->warmup, 1);
    assert_true(f->devs->st.min == 0.5 && f->devs->st.max == 0.5);
    assert_int_equal(h.records, 38);
    assert_int_equal(t.n, 4);
    trace_free(&t);
    hw_free(&h);
}

/* A stream id given again (ids are reused once a stream is gone) is not a second entry; the
 * table is bounded and says when it is full. */
static void test_own_bounded(void **state)
{
    struct hw h;
    hw_init(&h, 0);
    assert_int_equal(hw_own(&h, 1, 1, "a"), 0);
    assert_int_equal(hw_own(&h, 1, 1, "b"), 0);
    assert_int_equal(h.nown, 1);
    hw_add(&h, "x", 0, 1, 1, 0, 1000, false, NULL);
    assert_non_null(hw_find(&h, "b"));
    assert_null(hw_find(&h, "x"));
    for (uint32_t i = 2; i <= HW_OWN_MAX; i++)
        assert_int_equal(hw_own(&h, 1, i, "a"), 0);
    assert_int_equal(hw_own(&h, 1, HW_OWN_MAX + 1, "a"), -1);
    hw_free(&h);
}

/* What the modules were handed (h->record). */
static struct hw_out outs[16];
static int nouts;

static void keep(const struct hw_out *o)
{
    if (nouts < 16)
        outs[nouts++] = *o;
}

/* A record joined with its launch: the range of ktime's external id, the launch call's time,
 * and the queue time (the kernel's start less the call's end). */
static void test_join(void **state)
{
    struct hw h;
    hw_init(&h, 0);
    nouts = 0;
    h.record = keep;
    assert_int_equal(hw_join_start(&h, false), 0);
    hw_ext(&h, 7, HW_EXT_TAG | 3);
    hw_api(&h, 7, 1000 * US, 1004 * US);               /* a 4 us launch call */
    hw_add_corr(&h, "k", 0, 1, 1, 7, 1010 * US, 1110 * US, false, NULL);
    hw_api(&h, 8, 2000 * US, 2002 * US);               /* no range */
    hw_add_corr(&h, "k", 0, 1, 1, 8, 1999 * US, 2100 * US, false, NULL); /* before it returned */
    hw_ext(&h, 9, 0x1234);                             /* someone else's id: not ktime's */
    hw_api(&h, 9, 3000 * US, 3001 * US);
    hw_add_corr(&h, "k", 0, 1, 1, 9, 3050 * US, 3060 * US, true, NULL); /* a graph node */
    assert_int_equal(h.dn, 0);
    assert_int_equal(nouts, 3);
    assert_int_equal(outs[0].range, 3);
    assert_true(outs[0].timed);
    assert_int_equal(outs[0].api_ns, 4 * US);
    assert_int_equal(outs[0].queue_ns, 6 * US);
    assert_int_equal(outs[1].range, 0);
    assert_int_equal(outs[1].queue_ns, 0);
    assert_int_equal(outs[2].range, 0);
    assert_int_equal(outs[2].queue_ns, -1);
    assert_int_equal(outs[2].api_ns, 1 * US);
    struct hw_kernel *k = hw_find(&h, "k");
    int ranges = 0;
    for (struct hw_dev *d = k->devs; d; d = d->next) {
        ranges++;
        if (d->range == 3)
            assert_int_equal(d->st.n, 1);
        else
            assert_int_equal(d->st.n, 2);
    }
    assert_int_equal(ranges, 2);
    assert_int_equal(h.unjoined, 0);
    hw_free(&h);
}

/* A kernel record before its launch's record waits; those after it wait behind it, so that
 * warmup stays the first records; at the end the rest go without their launch. */
static void test_join_waits(void **state)
{
    struct hw h;
    hw_init(&h, 1);
    nouts = 0;
    h.record = keep;
    assert_int_equal(hw_join_start(&h, false), 0);
    hw_add_corr(&h, "k", 0, 1, 1, 1, 100 * US, 200 * US, false, NULL);
    hw_api(&h, 2, 150 * US, 151 * US);
    hw_add_corr(&h, "k", 0, 1, 1, 2, 200 * US, 300 * US, false, NULL); /* known, but behind */
    assert_int_equal(h.dn, 2);
    assert_int_equal(nouts, 0);
    hw_api(&h, 1, 50 * US, 60 * US);
    hw_settle(&h, false);
    assert_int_equal(h.dn, 0);
    assert_int_equal(nouts, 2);
    assert_false(outs[0].timed); /* the first record: warmup */
    assert_int_equal(outs[0].queue_ns, 40 * US);
    assert_true(outs[1].timed);
    assert_int_equal(outs[1].queue_ns, 49 * US);
    hw_add_corr(&h, "k", 0, 1, 1, 3, 400 * US, 500 * US, false, NULL); /* never described */
    assert_int_equal(h.dn, 1);
    hw_settle(&h, true);
    assert_int_equal(nouts, 3);
    assert_true(outs[2].timed);
    assert_int_equal(outs[2].api_ns, -1);
    assert_int_equal(h.unjoined, 1);
    assert_int_equal(hw_find(&h, "k")->devs->st.n, 2);
    hw_free(&h);
}

/* KTIME_CAPTURE: a launch ktime did not mark was made outside the capture range; one CUPTI never
 * described cannot be placed. Neither is timed; warmup comes first all the same. */
static void test_join_capture_range(void **state)
{
    struct hw h;
    hw_init(&h, 1);
    assert_int_equal(hw_join_start(&h, true), 0);
    hw_api(&h, 1, 0, 1);
    hw_add_corr(&h, "k", 0, 1, 1, 1, 10, 20, false, NULL); /* warmup */
    hw_ext(&h, 2, HW_EXT_TAG);
    hw_api(&h, 2, 30, 31);
    hw_add_corr(&h, "k", 0, 1, 1, 2, 40, 50, false, NULL); /* in the range, in no named one */
    hw_api(&h, 3, 60, 61);
    hw_add_corr(&h, "k", 0, 1, 1, 3, 70, 80, false, NULL); /* outside */
    hw_add_corr(&h, "k", 0, 1, 1, 4, 90, 100, false, NULL); /* unknown */
    hw_settle(&h, true);
    struct hw_kernel *k = hw_find(&h, "k");
    assert_int_equal(k->records, 4);
    assert_int_equal(k->warmup, 1);
    assert_int_equal(k->outside, 1);
    assert_int_equal(k->unknown, 1);
    assert_int_equal(k->devs->st.n, 1);
    hw_free(&h);
}

/* At most HW_DEFER records wait: the oldest then goes without its launch. Copies go to the
 * modules at once. */
static void test_join_bounded(void **state)
{
    struct hw h;
    hw_init(&h, 0);
    nouts = 0;
    h.record = keep;
    assert_int_equal(hw_join_start(&h, false), 0);
    for (uint32_t i = 1; i <= HW_DEFER + 1; i++)
        hw_add_corr(&h, "k", 0, 1, 1, i, i * US, i * US + 500, false, NULL);
    assert_int_equal(h.dn, HW_DEFER);
    assert_int_equal(h.unjoined, 1);
    hw_copy(&h, 2, 5, 10, 20);
    assert_int_equal(nouts, 2);
    assert_null(outs[1].name);
    assert_int_equal(outs[1].device, 2);
    assert_false(outs[1].timed);
    hw_settle(&h, true);
    assert_int_equal(h.unjoined, HW_DEFER + 1);
    assert_int_equal(hw_find(&h, "k")->devs->st.n, HW_DEFER + 1);
    hw_free(&h);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warmup_by_record),
        cmocka_unit_test(test_own_stream_named),
        cmocka_unit_test(test_own_bounded),
        cmocka_unit_test(test_join),
        cmocka_unit_test(test_join_waits),
        cmocka_unit_test(test_join_capture_range),
        cmocka_unit_test(test_join_bounded),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
