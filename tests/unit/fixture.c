/* fixture.c - a fresh ktime process state for each unit test of the CUDA-facing code
 * (fixture.h), and the gate watchdog's stand-in. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "fixture.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "busy.h"
#include "comm.h"
#include "cuptitimer.h"
#include "gatewatch.h"
#include "launches.h"
#include "memop.h"
#include "modules.h"
#include "rebase.h"

/* ---- the gate watchdog, without its thread ----
 * These definitions stand for gatewatch.c's: the unit tests link ktime's objects from a
 * static archive, which then leaves gatewatch.o out. A test opens gates by hand (fx_watch)
 * instead of a thread opening them behind its back after 5 to 10 ms. */
_Atomic uint32_t gatewatch_asleep;
static int watch_starts;

bool gatewatch_start(void)
{
    watch_starts++;
    return true;
}

void gatewatch_wake(void)
{
}

void gatewatch_counts(uint64_t *passes, uint64_t *sleeps)
{
    *passes = *sleeps = 0;
}

int fx_watch_starts(void)
{
    return watch_starts;
}

uint32_t fx_watch(void)
{
    uint32_t n = atomic_load(&kt.drain.npools), opened = 0, closed = 0;

    for (uint32_t i = 0; i < n; i++)
        opened += pool_gate_watch(kt.drain.pools[i], &closed);
    return opened;
}

/* ---- settings ---- */

static const char *const defaults[] = { FX_DEFAULTS, NULL };
static const char *const *settings;

static const char *lookup(const char *const *list, const char *name)
{
    size_t n = strlen(name);

    for (; list && *list; list++)
        if (strncmp(*list, name, n) == 0 && (*list)[n] == '=')
            return *list + n + 1;
    return NULL;
}

static const char *fx_getenv(const char *name)
{
    const char *v = lookup(settings, name);

    return v ? v : lookup(defaults, name);
}

/* ---- set-up and tear-down ---- */

int fx_group_setup(void **state)
{
    (void)state;
    log_set_level(LOG_QUIET);
    return 0;
}

int fx_group_teardown(void **state)
{
    (void)state;
    fd_free();
    return 0;
}

int fx_setup(void **state)
{
    fd_reset();
    watch_starts = 0;
    memset(&kt, 0, sizeof kt);
    kt.setup_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    settings = *state;
    config_load(&kt.cfg, fx_getenv);
    /* NVML's sampler thread reads kt until it ends, which teardown does not wait for: off
     * unless the test names KTIME_NVML. */
    if (!fx_getenv("KTIME_NVML"))
        kt.cfg.nvml = false;
    /* What ktime's constructor (init.c) sets up, for what these tests reach. */
    kt.owner = getpid();
    if (ktab_init(&kt.ktab, (uint32_t)kt.cfg.max_kernels) != 0)
        return -1;
    drain_init(&kt.drain, &driver_event_ops);
    /* No drain thread unless the test starts one: it folds with drain_pass(). */
    drain_stop(&kt.drain, 0);
    /* Each module's state afresh, from this test's settings (modules.def). */
    modules_start();
    atomic_store(&kt.timing, kt.cfg.timer);
    /* The driver table is the fake's (ktime_driver_ready() says yes without resolving it);
     * the exit handlers count as installed, so that a first launch installs none. */
    atomic_store(&kt.driver_state, 1);
    atomic_store(&kt.registered, 1);
    atomic_store(&kt.phase, PHASE_ON);
    inside_ktime = 0;
    return 0;
}

void fx_start_drain(void)
{
    atomic_store(&kt.drain.stop, 0);
    assert_int_equal(drain_start(&kt.drain), 0);
}

int fx_teardown(void **state)
{
    struct agg *a, *tmp;

    (void)state;
    if (atomic_load(&kt.drain.started))
        drain_stop(&kt.drain, 10000);
    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++) {
        pool_free_memory(kt.drain.pools[i]);
        free(kt.drain.pools[i]);
    }
    HASH_ITER(hh, kt.drain.aggs, a, tmp) {
        HASH_DEL(kt.drain.aggs, a);
        shape_set_free(a->shapes);
        free(a);
    }
    /* The modules that hold names of the kernel table and of CUPTI's records. */
    launches_free();
    comm_free();
    busy_free();
    for (uint32_t i = 0; i <= kt.ktab.mask; i++)
        free(atomic_load(&kt.ktab.slots[i].name));
    free(kt.ktab.slots);
    free((void *)kt.ktab.order);
    rebase_forget();
    hw_free(cuptitimer_records());
    config_free(&kt.cfg);
    pthread_mutex_destroy(&kt.drain.pass_lock);
    pthread_mutex_destroy(&kt.drain.wake_mu);
    pthread_cond_destroy(&kt.drain.wake_cv);
    memset(&kt, 0, sizeof kt);
    kt.setup_lock = (pthread_mutex_t)PTHREAD_MUTEX_INITIALIZER;
    return 0;
}

/* ---- launches ---- */

bool fx_launch_r(void *fn, CUstream s, uint64_t ns, CUresult r)
{
    struct launch L;
    bool bracketed = launch_begin(&L, fn, KTAB_KERNEL, s, 0, false);

    if (bracketed) {
        L.shape = (struct kshape){ { 1, 1, 1 }, { 32, 1, 1 }, 0 };
        L.bytes = 0;
    }
    if (r == CUDA_SUCCESS)
        fd_run(s, ns);
    if (bracketed)
        launch_end(&L, r);
    return bracketed;
}

bool fx_launch(void *fn, CUstream s, uint64_t ns)
{
    return fx_launch_r(fn, s, ns, CUDA_SUCCESS);
}

int fx_run(void *fn, CUstream s, int n, uint64_t ns)
{
    int bracketed = 0;

    for (int i = 0; i < n; i++) {
        bracketed += fx_launch(fn, s, ns);
        assert_true(fd_sync(s));
        drain_pass(&kt.drain);
    }
    return bracketed;
}

bool fx_memop(const struct memop *m, CUstream s, uint64_t ns)
{
    struct launch L;
    bool bracketed;

    if (!memop_wanted())
        return false;
    bracketed = launch_begin(&L, (void *)MEMOP_KEY(m->kind), KTAB_MEMOP, s, 0, m->blocking);
    L.shape = (struct kshape){ { 0, 0, 0 }, { 0, 0, 0 }, 0 }; /* none */
    L.bytes = m->bytes;
    fd_run(s, ns);
    memop_count(m, CUDA_SUCCESS);
    if (bracketed)
        launch_end(&L, CUDA_SUCCESS);
    return bracketed;
}

/* ---- looking at the results ---- */

struct ktab_entry *fx_entry(const void *handle)
{
    return ktab_find(&kt.ktab, (uintptr_t)handle);
}

struct agg *fx_agg(const void *handle, int dev)
{
    struct ktab_entry *e = fx_entry(handle);
    struct agg *a;
    uint64_t key;

    if (!e)
        return NULL;
    key = (uint64_t)ktab_id(&kt.ktab, e) << 16 | (uint16_t)dev;
    HASH_FIND(hh, kt.drain.aggs, &key, sizeof key, a);
    return a;
}

int fx_collect(struct report *r, bool hw_primary)
{
    memset(r, 0, sizeof *r);
    r->warmup = kt.cfg.warmup;
    r->devices = kt.devices;
    r->ndevices = atomic_load(&kt.ndevices);
    if (collect_kernels(r, true, hw_primary, false) != 0)
        return -1;
    for (int i = 0; i < DROP_NREASONS; i++)
        r->drops[i] += atomic_load(&kt.drops[i]);
    return 0;
}

void fx_header(struct report *r)
{
    memset(r, 0, sizeof *r);
    modules_header(r);
}

struct report_kernel *fx_row(struct report *r, const char *name)
{
    for (size_t i = 0; i < r->nkernels; i++)
        if (strcmp(r->kernels[i].mangled, name) == 0)
            return &r->kernels[i];
    for (size_t i = 0; i < r->nmemops; i++)
        if (r->memops_rows[i].name && strcmp(r->memops_rows[i].name, name) == 0)
            return &r->memops_rows[i];
    return NULL;
}

uint64_t fx_timed(const struct report *r, const struct report_kernel *k)
{
    uint64_t n = 0;

    for (int d = 0; d < r->ndevices; d++)
        n += k->per_dev[d].n;
    return n;
}

void fx_assert_buckets(const struct report *r, const struct report_kernel *k)
{
    uint64_t sum = k->warmup_skipped + k->captured + fx_timed(r, k) + k->dropped + k->failed +
                   k->incomplete + k->outside_range + k->paused + k->unsampled + k->by_nodes;

    assert_int_equal(sum, k->calls);
}
