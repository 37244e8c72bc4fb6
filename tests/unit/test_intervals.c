/* test_intervals.c - busy time, idle gaps, per-stream and per-range busy time and overlap of
 * crafted schedules, computed by hand; intervals out of order through the window. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <string.h>

#include "intervals.h"

#define US 1000ull

static void add(struct iv_dev *d, uint64_t s_us, uint64_t e_us, uint64_t who, uint64_t stream,
                uint32_t range, int cls)
{
    struct iv_item it = { s_us * US, e_us * US, who, stream, range, (uint8_t)cls };
    iv_dev_add(d, &it);
}

/* 100 us kernels, each followed by 200 us of nothing (a sync and a host sleep): busy 300 of
 * 700 us, two gaps of 200 us between kernels 1-2 and 2-3. */
static void test_serial_gaps(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 16), 0);
    add(&d, 0, 100, 1, 7, 0, IV_COMPUTE);
    add(&d, 300, 400, 2, 7, 0, IV_COMPUTE);
    add(&d, 600, 700, 3, 7, 0, IV_COMPUTE);
    iv_dev_flush(&d);
    assert_int_equal(iv_sweep_busy(&d.all), 300 * US);
    assert_int_equal(d.all.last_ns - d.all.first_ns, 700 * US);
    assert_int_equal(d.all.sum_ns, 300 * US);
    assert_int_equal(d.gaps.count, 2);
    assert_int_equal(d.gaps.total_ns, 400 * US);
    assert_int_equal(d.gaps.bin_count[2], 2); /* 100 us to 1 ms */
    assert_int_equal(d.gaps.bin_ns[2], 400 * US);
    assert_int_equal(d.gaps.ntop, 2);
    /* Equal gaps: the earlier first; each names the kernels around it. */
    assert_int_equal(d.gaps.top[0].at_ns, 100 * US);
    assert_int_equal(d.gaps.top[0].before, 1);
    assert_int_equal(d.gaps.top[0].after, 2);
    assert_int_equal(d.gaps.top[1].at_ns, 400 * US);
    assert_int_equal(d.gaps.top[1].before, 2);
    assert_int_equal(d.gaps.top[1].after, 3);
    assert_int_equal(d.nstreams, 1);
    assert_int_equal(iv_sweep_busy(&d.streams[0].sw), 300 * US);
    assert_int_equal(d.streams[0].gaps.count, 2);
    assert_int_equal(d.all.late, 0);
    iv_dev_free(&d);
}

/* Two streams of overlapping 100 us kernels: busy is their union, 250 of 400 us of kernels
 * (concurrency 1.6); no gap on the GPU, none on either stream. */
static void test_two_streams(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 16), 0);
    add(&d, 0, 100, 1, 1, 0, IV_COMPUTE);
    add(&d, 100, 200, 1, 1, 0, IV_COMPUTE);
    add(&d, 50, 150, 2, 2, 0, IV_COMPUTE);
    add(&d, 150, 250, 2, 2, 0, IV_COMPUTE);
    iv_dev_flush(&d);
    assert_int_equal(iv_sweep_busy(&d.all), 250 * US);
    assert_int_equal(d.all.sum_ns, 400 * US);
    assert_int_equal(d.gaps.count, 0);
    assert_int_equal(d.nstreams, 2);
    assert_int_equal(iv_sweep_busy(&d.streams[0].sw), 200 * US);
    assert_int_equal(iv_sweep_busy(&d.streams[1].sw), 200 * US);
    assert_int_equal(d.streams[0].gaps.count + d.streams[1].gaps.count, 0);
    iv_dev_free(&d);
}

/* The same intervals in reverse order: the window sorts them; with no window the sweep
 * counts them late, and the gaps they would have filled stay. */
static void test_out_of_order(void **state)
{
    struct iv_dev d, raw;
    static const uint64_t s[] = { 600, 300, 0 };

    assert_int_equal(iv_dev_init(&d, 0, 4), 0);
    assert_int_equal(iv_dev_init(&raw, 0, 0), 0);
    for (int i = 0; i < 3; i++) {
        add(&d, s[i], s[i] + 100, (uint64_t)i, 1, 0, IV_COMPUTE);
        add(&raw, s[i], s[i] + 100, (uint64_t)i, 1, 0, IV_COMPUTE);
    }
    iv_dev_flush(&d);
    assert_int_equal(iv_sweep_busy(&d.all), 300 * US);
    assert_int_equal(d.gaps.count, 2);
    assert_int_equal(d.all.late, 0);
    assert_int_equal(raw.all.late, 2);
    assert_int_equal(iv_sweep_busy(&raw.all), 100 * US); /* only the first block */
    assert_int_equal(raw.gaps.count, 0);
    iv_dev_free(&d);
    iv_dev_free(&raw);
}

/* A window smaller than the disorder: the earliest are swept when it is full. */
static void test_small_window(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 2), 0);
    add(&d, 1000, 1100, 1, 1, 0, IV_COMPUTE);
    add(&d, 2000, 2100, 2, 1, 0, IV_COMPUTE);
    add(&d, 3000, 3100, 3, 1, 0, IV_COMPUTE); /* sweeps 1000 */
    add(&d, 500, 600, 4, 1, 0, IV_COMPUTE);   /* sweeps 500: late */
    iv_dev_flush(&d);
    assert_int_equal(d.all.late, 1);
    assert_int_equal(d.all.n, 4);
    assert_int_equal(d.all.first_ns, 500 * US);
    assert_int_equal(iv_sweep_busy(&d.all), 300 * US);
    iv_dev_free(&d);
}

/* The largest gaps, largest first, at most IV_TOP; the histogram's edges. */
static void test_top_and_bins(void **state)
{
    struct iv_dev d;
    static const uint64_t gap[] = { 5, 10, 100, 1000, 10000, 100000, 7 };
    uint64_t t = 0;

    assert_int_equal(iv_dev_init(&d, 3, 64), 0);
    add(&d, t, t + 1, 100, 1, 0, IV_COMPUTE);
    t += 1;
    for (int i = 0; i < 7; i++) {
        t += gap[i];
        add(&d, t, t + 1, 101 + (uint64_t)i, 1, 0, IV_COMPUTE);
        t += 1;
    }
    iv_dev_flush(&d);
    assert_int_equal(d.gaps.count, 7);
    assert_int_equal(d.gaps.total_ns, (5 + 10 + 100 + 1000 + 10000 + 100000 + 7) * US);
    assert_int_equal(d.gaps.bin_count[0], 2); /* 5, 7 us */
    assert_int_equal(d.gaps.bin_count[1], 1); /* 10 us: the edge is the next bin's */
    assert_int_equal(d.gaps.bin_count[2], 1);
    assert_int_equal(d.gaps.bin_count[3], 1);
    assert_int_equal(d.gaps.bin_count[4], 1);
    assert_int_equal(d.gaps.bin_count[5], 1);
    assert_int_equal(d.gaps.bin_ns[0], 12 * US);
    assert_int_equal(d.gaps.ntop, IV_TOP);
    static const uint64_t want[] = { 100000, 10000, 1000, 100, 10 };
    for (int i = 0; i < IV_TOP; i++)
        assert_int_equal(d.gaps.top[i].len_ns, want[i] * US);
    /* The 100 ms gap lies between the kernels 105 and 106. */
    assert_int_equal(d.gaps.top[0].before, 105);
    assert_int_equal(d.gaps.top[0].after, 106);
    assert_int_equal(iv_bin(9999), 0);
    assert_int_equal(iv_bin(10000), 1);
    assert_int_equal(iv_bin(100000000), 5);
    iv_dev_free(&d);
}

/* Communication [0,100) and [250,400), compute [50,150) and [200,300): communication busy
 * 250 us, compute 200, both 350, so 100 us of the communication overlaps compute. Copies are
 * busy time but neither class. */
static void test_overlap(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 8), 0);
    add(&d, 0, 100, 1, 1, 0, IV_COMM);
    add(&d, 50, 150, 2, 2, 0, IV_COMPUTE);
    add(&d, 200, 300, 2, 2, 0, IV_COMPUTE);
    add(&d, 250, 400, 1, 1, 0, IV_COMM);
    add(&d, 450, 500, 3, 3, 0, IV_COPY);
    iv_dev_flush(&d);
    assert_int_equal(iv_sweep_busy(&d.comm), 250 * US);
    assert_int_equal(d.comm.sum_ns, 250 * US);
    assert_int_equal(iv_sweep_busy(&d.compute), 200 * US);
    assert_int_equal(iv_sweep_busy(&d.kernels), 350 * US);
    assert_int_equal(iv_dev_overlap(&d), 100 * US);
    assert_int_equal(iv_sweep_busy(&d.copy), 50 * US);
    assert_int_equal(iv_sweep_busy(&d.all), 400 * US);
    assert_int_equal(d.gaps.count, 2); /* 150-200, 400-450 */
    iv_dev_free(&d);
}

/* Per range: the union of its own intervals. */
static void test_ranges(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 8), 0);
    add(&d, 0, 100, 1, 1, 5, IV_COMPUTE);
    add(&d, 50, 150, 1, 2, 5, IV_COMPUTE);
    add(&d, 200, 300, 2, 1, 9, IV_COMPUTE);
    add(&d, 400, 425, 3, 1, 0, IV_COMPUTE);
    iv_dev_flush(&d);
    assert_non_null(d.ranges);
    assert_int_equal(iv_sweep_busy(&d.ranges[5]), 150 * US);
    assert_int_equal(d.ranges[5].n, 2);
    assert_int_equal(iv_sweep_busy(&d.ranges[9]), 100 * US);
    assert_int_equal(iv_sweep_busy(&d.ranges[0]), 25 * US);
    iv_dev_free(&d);
}

/* Streams past IV_STREAMS are counted, not told apart; the GPU's figures keep them. */
static void test_many_streams(void **state)
{
    struct iv_dev d;

    assert_int_equal(iv_dev_init(&d, 0, 0), 0);
    for (uint64_t s = 0; s < IV_STREAMS + 3; s++)
        add(&d, s * 10, s * 10 + 10, 1, 1000 + s, 0, IV_COMPUTE);
    assert_int_equal(d.nstreams, IV_STREAMS);
    assert_int_equal(d.other_streams, 3);
    assert_int_equal(iv_sweep_busy(&d.all), (IV_STREAMS + 3) * 10 * US);
    assert_int_equal(d.gaps.count, 0);
    iv_dev_free(&d);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_serial_gaps),
        cmocka_unit_test(test_two_streams),
        cmocka_unit_test(test_out_of_order),
        cmocka_unit_test(test_small_window),
        cmocka_unit_test(test_top_and_bins),
        cmocka_unit_test(test_overlap),
        cmocka_unit_test(test_ranges),
        cmocka_unit_test(test_many_streams),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
