/* fixture.h - cmocka fixtures for the unit tests of the CUDA-facing code: every test starts
 * from a fresh ktime process state (kt: its settings, kernel table, pools, drain, CUPTI
 * records, counters) over a fresh fake driver (fakedrv.h), built the way the library's
 * constructor builds it, and everything is freed after it (LeakSanitizer checks the tests).
 *
 *     static void test_x(void **state) { ... }
 *     const struct CMUnitTest tests[] = { FX_TEST(test_x, "KTIME_WARMUP=2", "KTIME_GATE=on") };
 *     return cmocka_run_group_tests(tests, fx_group_setup, fx_group_teardown);
 *
 * A test's settings are KTIME_* strings, read by config_load as the environment; the
 * fixture's own defaults (FX_DEFAULTS) fill in the rest. No drain thread runs unless a test
 * starts one (fx_start_drain): tests fold completed events with drain_pass(&kt.drain). No
 * gate watchdog thread runs at all: fixture.c stands in for gatewatch.c (fx_watch() is one
 * pass of the watchdog). */
#ifndef KTIME_FIXTURE_H
#define KTIME_FIXTURE_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "collect.h"
#include "drain.h"
#include "fakedrv.h"
#include "launch.h"
#include "state.h"

/* What a test gets unless it says otherwise: quiet, a small kernel table, small pools (so
 * that running a pool dry takes a few launches), no exit wait. */
#define FX_DEFAULTS "KTIME_LOG=quiet", "KTIME_MAX_KERNELS=64", "KTIME_POOL_CAP=8", \
                    "KTIME_EXIT_WAIT_MS=0", "KTIME_SIGNALS=0"

/* A test run with the fixture and its settings (none: FX_DEFAULTS alone). */
#define FX_TEST(fn, ...)                                                                  \
    {                                                                                     \
        .name = #fn, .test_func = fn, .setup_func = fx_setup, .teardown_func = fx_teardown, \
        .initial_state = (void *)(const char *const[]){ __VA_ARGS__ __VA_OPT__(,) NULL }   \
    }

int fx_group_setup(void **state);
int fx_group_teardown(void **state);

/* Before each test: a fresh fake driver, then kt from the settings in *state (a NULL-ended
 * array of "KTIME_NAME=value"), as ktime's constructor sets it up, with the driver ready, the
 * exit handlers counted as installed (none is), and ktime timing (PHASE_ON). */
int fx_setup(void **state);

/* After each test: stops a drain thread it started, frees the pools, the aggregates, the
 * kernel table, CUPTI's records and the settings, then the fake driver's objects. */
int fx_teardown(void **state);

/* Starts the drain thread (the fixture keeps it from starting by itself). */
void fx_start_drain(void);

/* One pass of the gate watchdog over every pool (what gatewatch.c's thread does every 5 ms).
 * Returns the gates it opened. */
uint32_t fx_watch(void);

/* Times the watchdog was asked to start (ktime_pool_create, once per pool with gates). */
int fx_watch_starts(void);

/* A launch of kernel fn on s that takes ns on the GPU, made as the launch wrappers of
 * hooks.c make it: launch_begin, the real call (fd_run; nothing runs when r is an error),
 * launch_end when launch_begin said so. Returns whether launch_begin bracketed it. */
bool fx_launch(void *fn, CUstream s, uint64_t ns);
bool fx_launch_r(void *fn, CUstream s, uint64_t ns, CUresult r);

/* n launches of fn on s of ns each, the program waiting for each and the drain folding each
 * (drain_pass). Returns how many were bracketed. */
int fx_run(void *fn, CUstream s, int n, uint64_t ns);

/* The same for a memory operation m (memop.h) on s that takes ns, as hooks.c's memory
 * wrappers make it (bytes counted after the real call). */
struct memop;
bool fx_memop(const struct memop *m, CUstream s, uint64_t ns);

/* The kernel table entry of handle, or NULL. */
struct ktab_entry *fx_entry(const void *handle);

/* The aggregate of kernel handle on device dev (made outside every range), or NULL. */
struct agg *fx_agg(const void *handle, int dev);

/* Fills r with the rows of the current state, as the exit path gathers them once the drain
 * stopped (the drain's aggregates in, the modules' rows and sections, CUPTI's records among
 * them, r->drops with kt.drops added): collect_kernels. hw_primary: CUPTI's records are the
 * rows' samples. Returns collect's result; collect_free(r) after. */
int fx_collect(struct report *r, bool hw_primary);

/* r's header fields of the modules (the L2 flush's counts, the capture range's), as the
 * report has them: modules_header on a zeroed r. */
void fx_header(struct report *r);

/* r's row of kernel (or memory operation label) name, or NULL. */
struct report_kernel *fx_row(struct report *r, const char *name);

/* A row's timed samples over every device. */
uint64_t fx_timed(const struct report *r, const struct report_kernel *k);

/* Asserts that every launch of row k is in exactly one of its buckets: warmup, captured,
 * timed, dropped, failed, incomplete, outside the range, unsampled, timed by graph nodes. */
void fx_assert_buckets(const struct report *r, const struct report_kernel *k);

#endif
