/* test_cupti.c - the CUPTI timer's record handling (cuptitimer.c's buffers and parse path,
 * hw.c's aggregates, cuptireport.c's rows) with a fake libcupti (fakecupti_unit.c) whose
 * records the test writes: records by kernel, warmup by record on any device, graph nodes,
 * records without a valid end, dropped records, the timing floor's stream (floor.c) named
 * whatever CUPTI calls it, KTIME_TIMER=both, and the hand-over to another CUPTI client.
 * CUPTI starts once per process: the hand-over, which ends ktime's use of it, comes last. */
#include "fixture.h"

#include <dlfcn.h>
#include <string.h>

#include "budget.h"
#include "capture.h"
#include "cuptitimer.h"
#include "fakecupti_unit.h"
#include "floor.h"
#include "lifecycle.h"
#include "rangestack.h"

#define NS 250000u
#define CUPTI_LIB "KTIME_CUPTI_LIB=" FAKECUPTI_UNIT

static void *lib;
static struct fcu *fc;
static fcu_record_fn record;
static fcu_record_corr_fn record_corr;
static fcu_launch_fn launch_rec;
static fcu_copy_fn copy_rec;
static fcu_complete_fn complete;

static CUcontext ctx;
static CUstream s;

static int group_setup(void **state)
{
    fx_group_setup(state);
    lib = dlopen(FAKECUPTI_UNIT, RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return -1;
    fc = ((fcu_state_fn)dlsym(lib, "fcu_state"))();
    record = (fcu_record_fn)dlsym(lib, "fcu_record");
    complete = (fcu_complete_fn)dlsym(lib, "fcu_complete");
    record_corr = (fcu_record_corr_fn)dlsym(lib, "fcu_record_corr");
    launch_rec = (fcu_launch_fn)dlsym(lib, "fcu_launch");
    copy_rec = (fcu_copy_fn)dlsym(lib, "fcu_copy");
    return fc && record && complete && record_corr && launch_rec && copy_rec ? 0 : -1;
}

static int group_teardown(void **state)
{
    dlclose(lib);
    return fx_group_teardown(state);
}

/* A context, a stream, and CUPTI timing (started by the first test, kept by the others). */
static void start(void)
{
    struct cuptitimer_info info;

    ctx = fd_context(0);
    s = fd_stream(ctx);
    cuptitimer_start();
    cuptitimer_info(&info);
    assert_true(info.started);
    assert_non_null(info.library);
    assert_int_equal(fc->registrations, 1);
    /* Kernels, driver and runtime calls, external correlation, copies and sets; the calls'
     * records of the 8 driver and 13 runtime launch entry points alone. */
    assert_int_equal(fc->enables, 6);
    assert_int_equal(fc->driver_api_on, 8);
    assert_int_equal(fc->runtime_api_on, 13);
}

/* The records CUPTI completed, parsed (the drain thread's part), then the rows as the exit
 * gathers them, with the devices the records ran on. */
static void rows(struct report *r, bool hw_primary)
{
    struct hw_kernel *hk, *tmp;

    complete();
    cuptitimer_drain();
    drain_pass(&kt.drain);
    HASH_ITER(hh, cuptitimer_records()->byname, hk, tmp)
        for (struct hw_dev *d = hk->devs; d; d = d->next)
            ktime_note_device((CUdevice)d->device);
    assert_int_equal(fx_collect(r, hw_primary), 0);
}

/* n launches of k: counted (past warmup through launch_end, for its failures), never
 * bracketed with events. */
static void launches(void *k, int n)
{
    for (int i = 0; i < n; i++)
        assert_int_equal(fx_launch(k, s, NS), i >= kt.cfg.warmup);
    assert_int_equal(fd_calls(FD_EventRecord), 0);
}

static void test_records_by_kernel(void **state)
{
    struct report r;
    void *k = fd_kernel("k_a");

    start();
    launches(k, 5);
    for (uint64_t i = 0; i < 5; i++)
        record("k_a", 0, 1, 1, i * 1000000, i * 1000000 + (i + 1) * 125000, 0);
    rows(&r, true);
    struct hw_kernel *hk = hw_find(cuptitimer_records(), "k_a");
    assert_non_null(hk);
    assert_int_equal(hk->records, 5);
    assert_int_equal(hk->warmup, 2);
    struct report_kernel *row = fx_row(&r, "k_a");
    assert_int_equal(row->calls, 5);
    assert_int_equal(row->warmup_skipped, 2);
    assert_int_equal(row->per_dev[0].n, 3);
    assert_true(row->per_dev[0].sum == 375.0 + 500.0 + 625.0);
    assert_int_equal(row->hw_timed, 3);
    assert_int_equal(row->incomplete, 0);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* Warmup is a kernel's first records, whatever device they ran on. */
static void test_warmup_by_record_any_device(void **state)
{
    struct report r;
    void *k = fd_kernel("k_b");

    start();
    launches(k, 4);
    record("k_b", 1, 2, 1, 0, 125000, 0);
    record("k_b", 0, 1, 1, 0, 125000, 0);
    record("k_b", 1, 2, 1, 1000000, 1250000, 0);
    record("k_b", 0, 1, 1, 1000000, 1500000, 0);
    rows(&r, true);
    struct report_kernel *row = fx_row(&r, "k_b");
    assert_int_equal(r.ndevices, 2);
    assert_int_equal(row->warmup_skipped, 2);
    int d0 = r.devices[0].ordinal == 0 ? 0 : 1;
    assert_int_equal(row->per_dev[d0].n, 1);
    assert_true(row->per_dev[d0].sum == 500.0);
    assert_int_equal(row->per_dev[1 - d0].n, 1);
    assert_true(row->per_dev[1 - d0].sum == 250.0);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* A graph's launches are timed by its kernel nodes' records, in the kernels' rows; the
 * graph's row says how many launches that was. */
static void test_graph_nodes(void **state)
{
    static char exec_a[1];
    struct report r;
    struct launch L;
    CUgraphExec exec = (CUgraphExec)exec_a;

    start();
    launch_graph_instantiated(exec, fd_graph(2, 0));
    for (int i = 0; i < 3; i++) {
        bool b = launch_begin(&L, exec, KTAB_GRAPH, s, 0, false);
        assert_int_equal(b, i > 0);
        if (b)
            launch_end(&L, CUDA_SUCCESS);
        record("k_node", 0, 1, 1, 0, 250000, 5);
        record("k_node", 0, 1, 1, 250000, 500000, 5);
    }
    rows(&r, true);
    struct report_kernel *g = &r.kernels[0], *node = fx_row(&r, "k_node");
    assert_int_equal(g->kind, REPORT_GRAPH);
    assert_int_equal(g->calls, 3);
    assert_int_equal(g->warmup_skipped, 1);
    assert_int_equal(g->by_nodes, 2);
    assert_int_equal(fx_timed(&r, g), 0);
    fx_assert_buckets(&r, g);
    assert_non_null(node);
    assert_int_equal(node->calls, 0);
    assert_int_equal(node->in_graph, 6);
    assert_int_equal(node->warmup_skipped, 1);
    assert_int_equal(node->per_dev[0].n, 5);
    assert_true(node->per_dev[0].sum == 5 * 250.0);
    assert_int_equal(node->incomplete, 0);
    collect_free(&r);
}

/* Records CUPTI dropped never come; a record without a valid end is not timed: the launches
 * they stand for are incomplete. */
static void test_dropped_and_bad_records(void **state)
{
    struct report r;
    struct cuptitimer_info before, after;
    void *k = fd_kernel("k_c");

    start();
    cuptitimer_info(&before);
    launches(k, 6);
    record("k_c", 0, 1, 1, 0, 250000, 0);
    record("k_c", 0, 1, 1, 500000, 500000, 0); /* no valid end */
    record("k_c", 0, 1, 1, 1000000, 1250000, 0);
    fc->dropped_next = 3;
    rows(&r, true);
    cuptitimer_info(&after);
    assert_int_equal(after.dropped - before.dropped, 3);
    assert_int_equal(hw_find(cuptitimer_records(), "k_c")->bad, 1);
    struct report_kernel *row = fx_row(&r, "k_c");
    assert_int_equal(row->calls, 6);
    assert_int_equal(fx_timed(&r, row), 2);
    assert_int_equal(row->incomplete, 4);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* The timing floor at exit: an empty kernel's event interval on each device, and, with the
 * CUPTI timer, its records on ktime's own stream, which CUPTI may name after another kernel
 * (one of a module the program unloaded): never a row. */
static void test_floor(void **state)
{
    struct report r;
    struct fd_stats st;
    CUcontext pc;

    start();
    pc = fd_primary(0);
    ktime_note_device(0);
    fc->context_id = 9;
    fc->stream_id = 42;
    fd_set_poll_ns(1000000); /* the exit's polling sees the GPU finish */
    assert_int_equal(floor_measure(kt.devices, 1, 1000), 33);
    assert_true(kt.devices[0].floor_events_us == 15.625);
    fd_stats(&st);
    assert_int_equal(st.events_alive, 0);
    assert_int_equal(atomic_load(&cuptitimer_records()->nown), 1);
    for (int i = 0; i < 33; i++)
        record("k_unloaded", 0, 9, 42, 0, 1000, 0);
    rows(&r, true);
    assert_true(kt.devices[0].floor_hw_us == 1.0);
    assert_null(fx_row(&r, "k_unloaded"));
    assert_null(fx_row(&r, FLOOR_KERNEL));
    assert_int_equal(r.nkernels, 0);
    collect_free(&r);
    fc->context_id = fc->stream_id = 1;
    (void)pc;
}

/* KTIME_TIMER=both: events time the launches, CUPTI's records go beside them. */
static void test_timer_both(void **state)
{
    struct report r;
    void *k = fd_kernel("k_both");

    start();
    for (int i = 0; i < 3; i++) {
        assert_true(fx_launch(k, s, NS));
        assert_true(fd_sync(s));
        record("k_both", 0, 1, 1, 0, 125000, 0);
    }
    assert_int_equal(fd_calls(FD_EventRecord), 6);
    rows(&r, false);
    struct report_kernel *row = fx_row(&r, "k_both");
    assert_int_equal(row->per_dev[0].n, 3);
    assert_non_null(row->hw);
    assert_int_equal(row->hw[0].n, 3);
    assert_true(row->hw[0].sum == 3 * 125.0);
    assert_int_equal(row->hw_timed, 0);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* KTIME_BUDGET under CUPTI with the module's figures: back-to-back 100 us kernels (100 launches
 * a 10 ms window, after a first one of 1000) cost under the budget to record (230 ns of 100 us):
 * the records are never switched off, nothing is unsampled. */
static void test_budget_cheap_stays_on(void **state)
{
    struct report h;
    void *k = fd_kernel("k_b10");
    int disables = fc->disables;

    start();
    launches(k, 1000);
    budget_window(2.0);
    for (int w = 0; w < 30; w++) {
        launches(k, 100);
        budget_window(10.0);
        budget_cycle(1000.0 + 10.0 * w);
    }
    assert_int_equal(fc->disables, disables);
    assert_int_equal(atomic_load(&cuptitimer_off), 0);
    fx_header(&h);
    assert_non_null(h.budget);
    assert_true(h.budget->cupti);
    assert_int_equal(h.budget->cupti_on_1_in, 1);
    assert_int_equal(h.budget->unrecorded, 0);
}

/* Records switched off for short kernels; then the launches grow long (10 in 100 ms): the
 * controller wants the records all the time and they are on at the next tick, not at the end of
 * the off part (a run's long kernels were left unrecorded so). */
static void test_budget_on_when_longer(void **state)
{
    void *k = fd_kernel("k_b2");
    int enables = fc->enables, disables = fc->disables;

    start();
    launches(k, 200);
    budget_window(0.5);
    launches(k, 200);
    budget_window(0.5);
    budget_cycle(2000.0);
    budget_cycle(2000.0 + 1.0); /* its on part over: off */
    assert_int_equal(atomic_load(&cuptitimer_off), 1);
    launches(k, 10);
    budget_window(100.0); /* 10 launches in 100 ms: cheap to record */
    budget_cycle(2000.0 + 2.0); /* well before the off part's end */
    assert_int_equal(atomic_load(&cuptitimer_off), 0);
    assert_int_equal(fc->enables, enables + 1);
    fc->enables = enables;
    fc->disables = disables;
}

/* Short kernels launched faster than CUPTI's cost allows: at the end of the cycle's on part the
 * records are switched off (cuptiActivityDisable), the launches made meanwhile are the row's
 * unsampled ones, and at the end of the off part they are on again (cuptiActivityEnable); the
 * row's every launch is in one bucket. */
static void test_budget_duty_switches(void **state)
{
    struct report r, h;
    void *k = fd_kernel("k_b1");
    int enables = fc->enables, disables = fc->disables;

    start();
    launches(k, 200);
    budget_window(0.5);
    launches(k, 200); /* 200 in 0.5 ms: 4.4 % recorded, over the budget */
    budget_window(0.5);
    budget_cycle(1000.0);            /* a cycle drawn: on for a sliver */
    assert_int_equal(fc->disables, disables);
    budget_cycle(1000.0 + 1.0);      /* its on part over: off */
    assert_int_equal(fc->disables, disables + 1);
    assert_int_equal(atomic_load(&cuptitimer_off), 1);
    launches(k, 10);
    budget_cycle(1000.0 + 200.0);    /* its off part (at most 150 ms) over: on */
    assert_int_equal(fc->enables, enables + 1);
    assert_int_equal(atomic_load(&cuptitimer_off), 0);
    launches(k, 5);
    for (int i = 0; i < 405; i++)
        record("k_b1", 0, 1, 1, (uint64_t)i * 1000, (uint64_t)i * 1000 + 500, 0);
    budget_window(0.5);
    rows(&r, true);
    struct report_kernel *row = fx_row(&r, "k_b1");
    assert_int_equal(row->calls, 415);
    assert_int_equal(row->unsampled, 10);
    assert_int_equal(row->per_dev[0].n, 405);
    assert_int_equal(row->incomplete, 0);
    fx_assert_buckets(&r, row);
    collect_free(&r);
    fx_header(&h);
    assert_true(h.budget->cupti_on_1_in > 1);
    assert_int_equal(h.budget->unrecorded, 10);
    /* start() of the tests that follow counts CUPTI's one enabling at start-up. */
    fc->enables = enables;
    fc->disables = disables;
}

/* Another CUPTI client arrives: ktime takes back the records CUPTI holds (a plain flush,
 * then a forced one), lets go of CUPTI, and times later launches with events. */
static void test_hand_over(void **state)
{
    struct cuptitimer_info info;
    void *k = fd_kernel("k_d");

    start();
    launches(k, 2);
    record("k_d", 0, 1, 1, 0, 250000, 0);
    record("k_d", 0, 1, 1, 250000, 500000, 0);
    int flushes = fc->flushes, forced = fc->forced_flushes;
    cuptitimer_foreign("cuptiActivityRegisterCallbacks");
    assert_int_equal(fc->flushes - flushes, 2);
    assert_int_equal(fc->forced_flushes - forced, 1);
    assert_int_equal(fc->disables, 6); /* every kind it enabled, */
    assert_int_equal(fc->driver_api_on, 0); /* and every launch record */
    assert_int_equal(fc->runtime_api_on, 0);
    assert_int_equal(atomic_load(&kt.timing), TIMER_EVENTS);
    cuptitimer_drain();
    assert_int_equal(hw_find(cuptitimer_records(), "k_d")->records, 2);
    cuptitimer_info(&info);
    assert_non_null(strstr(info.note, "took CUPTI over"));
    assert_true(fx_launch(k, s, NS));
    assert_int_equal(fd_calls(FD_EventRecord), 2);
}

/* ---- ranges, launch and queue times, busy time under CUPTI ---- */

/* The range of name name, in the report. */
static const struct report_range *range_named(const struct report *r, const char *name)
{
    for (size_t i = 0; i < r->nranges_by_name; i++)
        if (name ? r->ranges_by_name[i].name && strcmp(r->ranges_by_name[i].name, name) == 0
                 : !r->ranges_by_name[i].name)
            return &r->ranges_by_name[i];
    return NULL;
}

/* The program's phases: a warmup launch, 3 launches of k in "cu fwd", 2 in "cu bwd" (one
 * inside a nested "cu inner"), and 1 outside every range. Under CUPTI each launch past warmup
 * gets its launch record (a 2 us call), the kernel record its 250 us run 10 us after the call
 * returned; under events the program waits for each kernel. */
static void phases(void *k, bool cupti)
{
    uint32_t fwd = range_intern("cu fwd"), bwd = range_intern("cu bwd"),
             inner = range_intern("cu inner");
    uint32_t corr = 100;
    uint64_t t = 0;
    static const int where[] = { 0, 1, 1, 1, 2, 3, 0 }; /* 0 none, 1 fwd, 2 bwd, 3 inner */

    for (int i = 0; i < 7; i++) {
        if (where[i] == 1 && where[i - 1] != 1)
            range_push_id(fwd);
        if (where[i] == 2)
            range_push_id(bwd);
        if (where[i] == 3)
            range_push_id(inner);
        fx_launch(k, s, NS);
        if (cupti) {
            launch_rec(corr, t, t + 2000);
            record_corr("k_r", 0, 1, 1, corr, t + 12000, t + 12000 + NS, 0);
            corr++;
            t += 1000000;
        } else {
            assert_true(fd_sync(s));
        }
        if (where[i] == 3) {
            assert_true(range_pop()); /* inner */
            assert_true(range_pop()); /* bwd */
        }
        if (where[i] == 1 && where[i + 1] != 1)
            assert_true(range_pop());
    }
}

/* The ranges read the same under both timers: the same launches in the same ranges. */
static void check_phases(const struct report *r)
{
    const struct report_range *fwd = range_named(r, "cu fwd"), *bwd = range_named(r, "cu bwd"),
                               *inner = range_named(r, "cu inner"), *out = range_named(r, NULL);

    assert_non_null(fwd);
    assert_non_null(bwd);
    assert_non_null(inner);
    assert_non_null(out);
    assert_int_equal(fwd->timed, 3);
    assert_int_equal(bwd->timed, 1);
    assert_int_equal(inner->timed, 1);
    assert_int_equal(out->timed, 1); /* the warmup launch is no sample */
    assert_int_equal(fwd->nrows, 1);
    assert_string_equal(fwd->rows[0].mangled, "k_r");
}

static void test_ranges_events(void **state)
{
    struct report r;

    ctx = fd_context(0);
    s = fd_stream(ctx);
    phases(fd_kernel("k_r"), false);
    drain_pass(&kt.drain);
    assert_int_equal(fx_collect(&r, false), 0);
    check_phases(&r);
    collect_free(&r);
}

static void test_ranges_cupti(void **state)
{
    struct report r;
    int pushes;

    start();
    pushes = fc->pushes;
    phases(fd_kernel("k_r"), true);
    /* Only the launches made in a range carry an id; the warmup launch none. */
    assert_int_equal(fc->pushes - pushes, 5);
    assert_int_equal(fc->pops, fc->pushes);
    assert_int_equal(fc->ext_kind, CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2);
    rows(&r, true);
    check_phases(&r);
    const struct report_range *fwd = range_named(&r, "cu fwd");
    assert_true(fwd->total_us == 3 * 250.0);
    struct report_kernel *row = fx_row(&r, "k_r");
    assert_int_equal(row->per_dev[0].n, 6);
    fx_assert_buckets(&r, row);
    /* Each launch call took 2 us; each kernel began 10 us after its call returned. */
    assert_non_null(row->launch);
    assert_int_equal(row->launch->api.n, 6);
    assert_true(row->launch->api.mean == 2.0);
    assert_int_equal(row->launch->queue.n, 6);
    assert_true(row->launch->queue.mean == 10.0);
    assert_int_equal(cuptitimer_records()->unjoined, 0);
    collect_free(&r);
}

/* KTIME_CAPTURE with CUPTI: a launch past warmup made outside the capture range carries no id;
 * its record is that launch, counted outside the range, not timed. */
static void test_capture_range_cupti(void **state)
{
    struct report r;
    void *k = fd_kernel("k_c");
    uint32_t corr = 500;

    start();
    for (int i = 0; i < 5; i++) {
        if (i == 2)
            capture_mark(true, CUDA_SUCCESS);
        fx_launch(k, s, NS);
        launch_rec(corr, (uint64_t)i * 1000000, (uint64_t)i * 1000000 + 1000);
        record_corr("k_c", 0, 1, 1, corr++, (uint64_t)i * 1000000 + 5000,
                    (uint64_t)i * 1000000 + 5000 + NS, 0);
        if (i == 3)
            capture_mark(false, CUDA_SUCCESS);
    }
    rows(&r, true);
    struct report_kernel *row = fx_row(&r, "k_c");
    assert_int_equal(row->calls, 5);
    assert_int_equal(row->warmup_skipped, 1);
    assert_int_equal(row->outside_range, 2);
    assert_int_equal(row->per_dev[0].n, 2);
    assert_int_equal(hw_find(cuptitimer_records(), "k_c")->outside, 2);
    assert_true(row->per_dev[0].sum == 2 * 250.0);
    fx_assert_buckets(&r, row);
    collect_free(&r);
}

/* The GPU's busy time from CUPTI's records: two streams of 100 us kernels, overlapping half,
 * an NCCL kernel beside them, a copy, and the gaps between. */
static void test_busy_cupti(void **state)
{
    struct report r;

    start();
    /* stream 1: [0,100) [200,300) us; stream 2: [50,150) [250,350) us; the communication
     * kernel on stream 3: [300,500) us; a copy on stream 4: [900,1000) us. */
    record_corr("k_s1", 0, 1, 1, 0, 0, 100000, 0);
    record_corr("k_s2", 0, 1, 2, 0, 50000, 150000, 0);
    record_corr("k_s1", 0, 1, 1, 0, 200000, 300000, 0);
    record_corr("k_s2", 0, 1, 2, 0, 250000, 350000, 0);
    record_corr("ncclDevKernel_AllReduce", 0, 1, 3, 0, 300000, 500000, 0);
    copy_rec(0, 4, 900000, 1000000);
    rows(&r, true);
    assert_non_null(r.busy);
    assert_int_equal(r.busy->ndevs, 1);
    const struct report_busy_dev *d = &r.busy->devs[0];
    assert_string_equal(d->method, "cupti");
    assert_true(d->span_ms == 1.0);
    assert_true(d->busy_ms == 0.55);       /* [0,150) [200,500) [900,1000) */
    assert_int_equal(d->kernels, 5);
    assert_int_equal(d->copies, 1);
    assert_true(d->kernel_ms == 0.6);
    assert_int_equal(d->gaps.count, 2);    /* [150,200) and [500,900) */
    assert_true(d->gaps.total_ms == 0.45);
    assert_int_equal(d->gaps.bin_count[RG_TO_100US], 1);
    assert_int_equal(d->gaps.bin_count[RG_TO_1MS], 1);
    assert_true(d->gaps.top[0].len_us == 400.0);
    assert_true(d->gaps.top[0].at_ms == 0.5);
    assert_string_equal(d->gaps.top[0].before_mangled, "ncclDevKernel_AllReduce");
    assert_null(d->gaps.top[0].after_mangled); /* the copy */
    assert_int_equal(d->nstreams, 4);
    /* Communication [300,500): compute busy [0,150) [200,350), so 50 us overlap. */
    assert_int_equal(d->comm_kernels, 1);
    assert_true(d->comm_busy_ms == 0.2);
    assert_true(d->compute_busy_ms == 0.3);
    assert_true(d->overlap_ms == 0.05);
    assert_string_equal(r.comm_pattern, COMM_AUTO_PATTERN);
    collect_free(&r);
}

#define CUPTI_TEST(fn, ...) FX_TEST(fn, "KTIME_TIMER=cupti", CUPTI_LIB, __VA_ARGS__)

int main(void)
{
    const struct CMUnitTest tests[] = {
        CUPTI_TEST(test_records_by_kernel, "KTIME_WARMUP=2"),
        CUPTI_TEST(test_warmup_by_record_any_device, "KTIME_WARMUP=2"),
        CUPTI_TEST(test_graph_nodes, "KTIME_WARMUP=1"),
        CUPTI_TEST(test_dropped_and_bad_records, "KTIME_WARMUP=0"),
        CUPTI_TEST(test_floor, "KTIME_WARMUP=0"),
        FX_TEST(test_timer_both, "KTIME_TIMER=both", CUPTI_LIB, "KTIME_WARMUP=0"),
        CUPTI_TEST(test_budget_cheap_stays_on, "KTIME_WARMUP=0", "KTIME_BUDGET=1"),
        CUPTI_TEST(test_budget_duty_switches, "KTIME_WARMUP=0", "KTIME_BUDGET=1"),
        CUPTI_TEST(test_budget_on_when_longer, "KTIME_WARMUP=0", "KTIME_BUDGET=1"),
        FX_TEST(test_ranges_events, "KTIME_WARMUP=1"),
        CUPTI_TEST(test_ranges_cupti, "KTIME_WARMUP=1"),
        CUPTI_TEST(test_capture_range_cupti, "KTIME_WARMUP=1", "KTIME_CAPTURE=profiler-api"),
        CUPTI_TEST(test_busy_cupti, "KTIME_WARMUP=0"),
        CUPTI_TEST(test_hand_over, "KTIME_WARMUP=0"),
    };

    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
