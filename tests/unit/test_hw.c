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

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_warmup_by_record),
        cmocka_unit_test(test_own_stream_named),
        cmocka_unit_test(test_own_bounded),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
