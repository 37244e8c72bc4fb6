/* ktime.c - start-up, per-context set-up, and the report at exit. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "ktime.h"
#include "ktime_internal.h"
#include "launch.h"
#include "log.h"
#include "outpath.h"
#include "state.h"

struct ktime_state kt = {
    .setup_lock = PTHREAD_MUTEX_INITIALIZER,
};

/* Pairs made at a context's first timed launch (~1 ms). The drain grows the pool 4x at a
 * time as soon as it runs short, publishing each new pair at once; with 256 to start, two
 * threads bursting launches on an H200 still ran it dry. */
#define POOL_INITIAL_PAIRS 1024

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void on_signal(int sig);

static const int report_signals[] = { SIGINT, SIGTERM, SIGHUP };

static void on_fork_child(void)
{
    /* The child has no drain thread and must not write the parent's report; its signals
     * get back their default action wherever ktime had taken them. */
    atomic_store(&kt.phase, PHASE_OFF);
    for (size_t i = 0; i < sizeof report_signals / sizeof report_signals[0]; i++) {
        struct sigaction cur;
        if (sigaction(report_signals[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
            signal(report_signals[i], SIG_DFL);
    }
}

__attribute__((constructor)) static void ktime_init(void)
{
    config_load(&kt.cfg, env_get);
    kt.owner = getpid();
    if (kt.cfg.disable) {
        log_info("disabled by KTIME_DISABLE; every call passes through");
        return;
    }
    if (ktab_init(&kt.ktab, (uint32_t)kt.cfg.max_kernels) != 0) {
        log_warn("out of memory at start-up; timing is off");
        return;
    }
    drain_init(&kt.drain, &driver_event_ops);
    kt.drain.timed = log_level >= LOG_DEBUG; /* the drain's cost breakdown, printed at exit */
    pthread_atfork(NULL, NULL, on_fork_child);
    atomic_store(&kt.phase, PHASE_ON);
}

bool ktime_driver_ready(void)
{
    int st = atomic_load_explicit(&kt.driver_state, memory_order_acquire);

    if (st != 0)
        return st > 0;
    pthread_mutex_lock(&kt.setup_lock);
    st = atomic_load_explicit(&kt.driver_state, memory_order_relaxed);
    if (st == 0) {
        void *gpa = hooks_driver_symbol("cuGetProcAddress_v2");
        st = gpa && driver_load(gpa) ? 1 : -1;
        if (st < 0)
            log_warn("could not resolve the CUDA driver's entry points; timing is off");
        atomic_store_explicit(&kt.driver_state, st, memory_order_release);
    }
    pthread_mutex_unlock(&kt.setup_lock);
    return st > 0;
}

/* The NVIDIA kernel module's version ("580.159.04"), from /proc; "" when unknown. */
static void read_module_version(char *out, size_t size)
{
    char buf[512];
    const char *p;
    size_t n = 0;
    FILE *f = fopen("/proc/driver/nvidia/version", "re");

    out[0] = '\0';
    if (!f)
        return;
    if (fgets(buf, sizeof buf, f) && (p = strstr(buf, "Kernel Module"))) {
        p += strlen("Kernel Module");
        while (*p == ' ' || *p == '\t')
            p++;
        while (n + 1 < size && p[n] && p[n] != ' ' && p[n] != '\t' && p[n] != '\n')
            n++;
        memcpy(out, p, n);
        out[n] = '\0';
    }
    fclose(f);
}

static void record_device(CUdevice dev)
{
    int n = atomic_load(&kt.ndevices);
    struct report_device *d;

    for (int i = 0; i < n; i++)
        if (kt.devices[i].ordinal == (int)dev)
            return;
    if (n >= KTIME_MAX_DEVICES)
        return;
    d = &kt.devices[n];
    d->ordinal = (int)dev;
    if (drv.DeviceGetName(d->name, (int)sizeof d->name, dev) != CUDA_SUCCESS)
        snprintf(d->name, sizeof d->name, "unknown");
    if (drv.DriverGetVersion(&d->driver_version) != CUDA_SUCCESS)
        d->driver_version = 0;
    read_module_version(d->driver, sizeof d->driver);
    atomic_store(&kt.ndevices, n + 1);
}

/* Pinned, device-mapped words for the launch gates of one pool, in the current context.
 * Leaves *host NULL (no gating) when the driver cannot provide them. */
static void gate_alloc(volatile uint32_t **host, uint64_t *dev)
{
    size_t bytes = (size_t)kt.cfg.pool_cap * sizeof(uint32_t);
    CUdeviceptr d = 0;
    void *h = NULL;

    *host = NULL;
    if (!kt.cfg.gate || !drv.MemHostAlloc || !drv.MemHostGetDevicePointer ||
        !drv.StreamWaitValue32)
        return;
    if (drv.MemHostAlloc(&h, bytes, CU_MEMHOSTALLOC_PORTABLE | CU_MEMHOSTALLOC_DEVICEMAP) !=
        CUDA_SUCCESS || !h) {
        log_info("no pinned memory for launch gates; intervals may include launch latency");
        return;
    }
    memset(h, 0, bytes);
    if (drv.MemHostGetDevicePointer(&d, h, 0) != CUDA_SUCCESS) {
        log_info("launch gates unavailable; intervals may include launch latency");
        return; /* a few pinned KB, once */
    }
    *host = h;
    *dev = (uint64_t)d;
}

#define GATE_WATCH_INTERVAL_NS 5000000L /* a gate closed at two passes is opened: 5-10 ms */

static void *gate_watchdog(void *arg)
{
    (void)arg;
    for (;;) {
        struct timespec ts = { 0, GATE_WATCH_INTERVAL_NS };
        uint32_t n = atomic_load_explicit(&kt.drain.npools, memory_order_acquire), opened = 0;

        nanosleep(&ts, NULL);
        for (uint32_t i = 0; i < n; i++)
            opened += pool_gate_watch(kt.drain.pools[i]);
        if (opened)
            log_debug("opened %u launch gate(s) held by a launch blocked in the driver", opened);
    }
    return NULL;
}

/* The watchdog is its own thread, making no CUDA calls, so that nothing a blocked driver
 * holds can hold it up. Returns whether it runs: without it there are no gates. Called
 * under the set-up lock. */
static bool start_gate_watchdog(void)
{
    static bool started;
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all, old;

    if (started)
        return true;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, gate_watchdog, NULL) == 0) {
        started = true;
        pthread_setname_np(t, "ktime-gatewatch");
    } else {
        log_warn("could not start the gate watchdog; launch gates are off");
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}

/* Remembers a context whose pool could not be set up, so that its launches are dropped
 * (no_context) without trying again. Under the set-up lock. */
static void remember_failed(CUcontext ctx)
{
    uint32_t n = atomic_load_explicit(&kt.nfailed, memory_order_relaxed);

    if (n < KTIME_MAX_FAILED_CTX) {
        kt.failed_ctx[n] = ctx;
        atomic_store_explicit(&kt.nfailed, n + 1, memory_order_release);
    }
}

bool ktime_context_failed(CUcontext ctx)
{
    uint32_t n = atomic_load_explicit(&kt.nfailed, memory_order_acquire);

    for (uint32_t i = 0; i < n; i++)
        if (kt.failed_ctx[i] == ctx)
            return true;
    return false;
}

/* Whether ctx is dev's primary context. Asked only while that context is active, where a
 * retain and a release change nothing. */
static bool is_primary(CUcontext ctx, CUdevice dev)
{
    unsigned int flags;
    int active = 0;
    CUcontext pc = NULL;

    if (!drv.DevicePrimaryCtxGetState || !drv.DevicePrimaryCtxRetain ||
        !drv.DevicePrimaryCtxRelease ||
        drv.DevicePrimaryCtxGetState(dev, &flags, &active) != CUDA_SUCCESS || !active ||
        drv.DevicePrimaryCtxRetain(&pc, dev) != CUDA_SUCCESS)
        return false;
    drv.DevicePrimaryCtxRelease(dev);
    return pc == ctx;
}

struct pool *ktime_pool_create(CUcontext ctx)
{
    struct pool *p = NULL;
    CUcontext cur = NULL, popped;
    CUdevice dev = -1;
    bool pushed = false, ok = false;
    uint32_t n;

    pthread_mutex_lock(&kt.setup_lock);
    n = atomic_load(&kt.drain.npools);
    for (uint32_t i = 0; i < n; i++)
        if (kt.drain.pools[i]->ctx == (void *)ctx && !atomic_load(&kt.drain.pools[i]->retiring)) {
            p = kt.drain.pools[i];
            goto out;
        }
    if (ktime_context_failed(ctx) || n >= DRAIN_MAX_POOLS)
        goto fail;
    if (drv.CtxGetCurrent(&cur) != CUDA_SUCCESS || cur != ctx) {
        if (drv.CtxPushCurrent(ctx) != CUDA_SUCCESS)
            goto fail;
        pushed = true;
    }
    if (drv.CtxGetDevice(&dev) == CUDA_SUCCESS && dev >= 0 && (p = calloc(1, sizeof *p))) {
        if (pool_init(p, &driver_event_ops, ctx, (int)dev, (uint32_t)kt.cfg.pool_cap,
                      POOL_INITIAL_PAIRS) == 0) {
            ok = true;
            p->primary = is_primary(ctx, dev);
            p->seen = calloc(((size_t)kt.ktab.mask + 64) / 64, sizeof *p->seen);
            /* Everything a launching thread reads is set before the pool is published. */
            gate_alloc(&p->gate_host, &p->gate_dev);
            if (p->gate_host && !start_gate_watchdog())
                p->gate_host = NULL; /* a few pinned KB, once */
        }
    }
    if (pushed)
        drv.CtxPopCurrent(&popped);
    if (!ok || drain_add_pool(&kt.drain, p) != 0) {
        if (p)
            pool_free_memory(p); /* the events it made stay: a few, once per context */
        free(p);
        p = NULL;
        goto fail;
    }
    record_device(dev);
    if (!kt.drain.started) {
        int err = drain_start(&kt.drain);
        if (err)
            log_warn("could not start the drain thread (%s); timing is off", strerror(err));
    }
    log_debug("pool for device %d: %u event pairs, cap %ld", (int)dev,
              atomic_load(&p->created), kt.cfg.pool_cap);
    goto out;
fail:
    if (atomic_load(&kt.nfailed) == 0)
        log_warn("could not set up CUDA events for a context (device %d%s); its launches "
                 "are not timed, nor those of any other context that fails the same way",
                 (int)dev, n >= DRAIN_MAX_POOLS ? ", more than 256 contexts" : "");
    else
        log_debug("no CUDA events for another context (device %d)", (int)dev);
    remember_failed(ctx);
out:
    pthread_mutex_unlock(&kt.setup_lock);
    return p;
}

void ktime_context_ending(CUcontext ctx, int dev)
{
    struct pool *ending[DRAIN_MAX_POOLS];
    int n = 0;
    double deadline;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON)
        return;
    pthread_mutex_lock(&kt.setup_lock);
    deadline = drain_now_ms() + (double)kt.cfg.exit_wait_ms;
    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++) {
        struct pool *p = kt.drain.pools[i];
        if ((ctx ? p->ctx == (void *)ctx : p->device == dev) && !atomic_load(&p->retiring)) {
            p->retire_deadline_ms = deadline;
            atomic_store(&p->retiring, 1);
            if (!kt.drain.started)
                atomic_store(&p->dead, 1);
            ending[n++] = p;
        }
    }
    pthread_mutex_unlock(&kt.setup_lock);
    /* Wait for the drain to finish with them: their events die with the context. */
    for (int i = 0; i < n; i++)
        while (!atomic_load(&ending[i]->dead) && drain_now_ms() < deadline + 1000.0) {
            struct timespec ts = { 0, 200000 };
            nanosleep(&ts, NULL);
        }
    if (n)
        log_debug("%d event pool(s) retired before a context was destroyed", n);
}

CUresult ktime_primary_release(CUdevice dev, CUresult (*release)(CUdevice))
{
    struct pool *mine[DRAIN_MAX_POOLS];
    unsigned int flags;
    int n = 0, active = 1;
    CUresult r;

    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON ||
        !drv.DevicePrimaryCtxGetState)
        return release(dev);
    pthread_mutex_lock(&kt.setup_lock);
    for (uint32_t i = 0; i < atomic_load(&kt.drain.npools); i++) {
        struct pool *p = kt.drain.pools[i];
        if (p->primary && p->device == (int)dev && !atomic_load(&p->retiring))
            mine[n++] = p;
    }
    pthread_mutex_unlock(&kt.setup_lock);
    if (n == 0)
        return release(dev);
    /* The drain thread stays out of these pools while their context may be going. */
    pthread_mutex_lock(&kt.drain.pass_lock);
    CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
    bool swapped = driver_swap_capture_mode(&mode);
    for (int i = 0; i < n; i++)
        drain_pass_pool(&kt.drain, mine[i]); /* fold in what has completed */
    if (swapped)
        driver_swap_capture_mode(&mode);
    r = release(dev);
    if (r == CUDA_SUCCESS &&
        drv.DevicePrimaryCtxGetState(dev, &flags, &active) == CUDA_SUCCESS && !active) {
        for (int i = 0; i < n; i++)
            drain_pool_gone(&kt.drain, mine[i]);
    }
    pthread_mutex_unlock(&kt.drain.pass_lock);
    if (!active)
        log_debug("%d event pool(s) ended with the primary context of device %d", n, (int)dev);
    return r;
}

/* ---------------------------------------------------------------- exit and report */

static void report_finish(bool from_drain_thread);

static void on_exit_handler(void)
{
    report_finish(false);
}

static void on_signal(int sig)
{
    int none = 0;

    if (getpid() != kt.owner || atomic_load(&kt.phase) != PHASE_ON || !kt.drain.started ||
        !atomic_compare_exchange_strong(&kt.pending_signal, &none, sig)) {
        /* Not the timing process, nothing to wait for, or a second signal: die as the
         * program would have. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* Runs on the drain thread: a terminating signal arrived, write the report, then let the
 * signal do what it would have done. */
static void drain_tick(void)
{
    int sig = atomic_load(&kt.pending_signal);

    if (!sig)
        return;
    report_finish(true);
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
}

void ktime_register_exit(void)
{
    const int *sigs = report_signals;

    if (atomic_exchange(&kt.registered, 1))
        return;
    if (atexit(on_exit_handler) != 0)
        log_warn("could not register the exit handler; no report will be written");
    if (!kt.cfg.signals)
        return;
    kt.drain.tick = drain_tick;
    for (size_t i = 0; i < sizeof report_signals / sizeof report_signals[0]; i++) {
        struct sigaction old, sa;
        /* Only where the program left the default (terminate): its own handlers win. */
        if (sigaction(sigs[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(sigs[i], &sa, NULL);
    }
}

/* The command line, from /proc/self/cmdline. */
static int read_argv(char *buf, size_t size, const char **argv, int max)
{
    int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC), argc = 0;
    ssize_t n = 0, r;

    if (fd < 0)
        return 0;
    while ((size_t)n < size - 1 && (r = read(fd, buf + n, size - 1 - (size_t)n)) > 0)
        n += r;
    close(fd);
    buf[n] = '\0';
    for (ssize_t i = 0; i < n && argc < max; i += (ssize_t)strlen(buf + i) + 1)
        argv[argc++] = buf + i;
    return argc;
}

static int device_index(const struct report *r, int ordinal)
{
    for (int i = 0; i < r->ndevices; i++)
        if (r->devices[i].ordinal == ordinal)
            return i;
    return -1;
}

/* Rows by mangled name: one kernel loaded in several modules or contexts has several
 * handles, and is one row. */
struct name_row {
    const char *name;
    struct report_kernel *rk;
    UT_hash_handle hh;
};

static struct report_kernel *build_kernels(struct report *r, size_t *count, bool with_aggs)
{
    struct ktab *t = &kt.ktab;
    uint32_t used = atomic_load(&t->count);
    struct report_kernel *ks = calloc(used ? used : 1, sizeof *ks);
    struct name_row *byname = NULL, *nr, *tmp;
    struct agg *a, *atmp;
    size_t n = 0;
    uint32_t *row_of = calloc((size_t)t->mask + 1, sizeof *row_of);

    if (!ks || !row_of) {
        free(ks);
        free(row_of);
        return NULL;
    }
    for (uint32_t j = 0; j < used; j++) {
        struct ktab_entry *e = ktab_nth(t, j);
        const char *name;
        struct report_kernel *rk;
        uint32_t i;

        /* Graphs instantiated but never launched make no row. */
        if (!e || !atomic_load(&e->calls))
            continue;
        i = ktab_id(t, e);
        name = atomic_load(&e->name);
        if (!name)
            name = "<unnamed>";
        HASH_FIND_STR(byname, name, nr);
        if (nr) {
            rk = nr->rk;
        } else {
            rk = &ks[n++];
            rk->mangled = name;
            rk->kind = atomic_load(&e->kind) == KTAB_GRAPH ? REPORT_GRAPH : REPORT_KERNEL;
            rk->per_dev = calloc((size_t)(r->ndevices ? r->ndevices : 1), sizeof *rk->per_dev);
            nr = calloc(1, sizeof *nr);
            if (!rk->per_dev || !nr) {
                free(nr);
                n--;
                continue;
            }
            nr->name = name;
            nr->rk = rk;
            HASH_ADD_KEYPTR(hh, byname, nr->name, strlen(nr->name), nr);
        }
        uint64_t calls = atomic_load(&e->calls);
        rk->calls += calls;
        rk->warmup_skipped += calls < (uint64_t)r->warmup ? calls : (uint64_t)r->warmup;
        rk->warmup_skipped += atomic_load(&e->rewarm);
        rk->captured += atomic_load(&e->captured);
        rk->dropped += atomic_load(&e->dropped);
        rk->failed += atomic_load(&e->failed);
        row_of[i] = (uint32_t)(rk - ks) + 1;
    }
    /* A drain thread that did not stop may still be changing the aggregates. */
    struct agg *aggs = with_aggs ? kt.drain.aggs : NULL;
    HASH_ITER(hh, aggs, a, atmp) {
        uint32_t row = a->kernel <= t->mask ? row_of[a->kernel] : 0;
        int d = device_index(r, a->device);
        if (!row || d < 0)
            continue;
        stats_merge(&ks[row - 1].per_dev[d], &a->st);
        /* Pairs the driver could not resolve are drops of reason event_error. */
        ks[row - 1].dropped += a->errors + a->forced;
        r->drops[DROP_GATE_TIMEOUT] += a->forced;
        ks[row - 1].incomplete += a->incomplete;
        r->drops[DROP_EVENT_ERROR] += a->errors;
    }
    HASH_ITER(hh, byname, nr, tmp) {
        HASH_DEL(byname, nr);
        free(nr);
    }
    free(row_of);
    *count = n;
    return ks;
}

static int write_report(FILE *f, struct report *r)
{
    return kt.cfg.format == FORMAT_JSON ? report_write_json(f, r) : report_write_text(f, r);
}

static void report_finish(bool from_drain_thread)
{
    static char cmdline[16384];
    static char path[PATH_MAX];
    const char *argv[256];
    struct report r;
    const char *note = NULL;
    FILE *f = NULL;
    int expected = PHASE_ON;

    if (getpid() != kt.owner ||
        !atomic_compare_exchange_strong(&kt.phase, &expected, PHASE_EXITING))
        return;
    launch_busy = 1;
    double t0 = drain_now_ms();
    bool stopped = from_drain_thread || drain_stop(&kt.drain, kt.cfg.exit_wait_ms + 1000);
    double t_stop = drain_now_ms();
    if (!stopped)
        note = "the drain thread did not stop in time (stuck in the driver); no timings reported";
    else {
        /* On a program thread, its queries must not disturb another thread's capture. */
        CUstreamCaptureMode mode = CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        bool swapped = !from_drain_thread && driver_swap_capture_mode(&mode);
        drain_finish(&kt.drain, kt.cfg.exit_wait_ms);
        if (swapped)
            driver_swap_capture_mode(&mode);
    }
    double t_finish = drain_now_ms();
    if (stopped) {
        const struct drain *d = &kt.drain;
        log_debug("drain: %llu passes, %llu event queries (%llu found it pending), %llu "
                  "elapsed-time calls", (unsigned long long)d->passes,
                  (unsigned long long)d->queries, (unsigned long long)d->queries_pending,
                  (unsigned long long)d->elapsed_calls);
        log_debug("drain time: passes %.3f ms wall, %.3f ms CPU; in cuEventQuery %.3f ms "
                  "(%.0f ns per call); in cuEventElapsedTime %.3f ms (%.0f ns per call)",
                  d->pass_ns / 1e6, d->cpu_ns / 1e6, d->query_ns / 1e6,
                  d->queries ? (double)d->query_ns / d->queries : 0.0, d->elapsed_ns / 1e6,
                  d->elapsed_calls ? (double)d->elapsed_ns / d->elapsed_calls : 0.0);
    }

    memset(&r, 0, sizeof r);
    r.version = PACKAGE_VERSION;
    r.argc = read_argv(cmdline, sizeof cmdline, argv, 256);
    r.argv = argv;
    r.pid = (long)getpid();
    r.warmup = kt.cfg.warmup;
    r.gated = kt.cfg.gate;
    r.devices = kt.devices;
    r.ndevices = atomic_load(&kt.ndevices);
    for (int i = 0; i < DROP_NREASONS; i++)
        r.drops[i] = atomic_load(&kt.drops[i]);
    r.note = note;
    r.kernels = build_kernels(&r, &r.nkernels, stopped);
    if (!r.kernels) {
        log_warn("out of memory while writing the report");
        return;
    }
    double t_built = drain_now_ms();

    /* Placeholders are expanded here, in the process that writes, so that each process of
     * a multi-process run (an exec'd child included) names its own file. */
    if (kt.cfg.output) {
        char host[256];
        if (outpath_expand(kt.cfg.output, r.pid, outpath_hostname(host, sizeof host), path,
                           sizeof path, env_get) != 0)
            log_warn("KTIME_OUTPUT expands to more than %d bytes; the report follows on "
                     "stderr (KTIME_OUTPUT='%s')", PATH_MAX - 1, kt.cfg.output);
        else if (!(f = fopen(path, "w")))
            log_warn("cannot open KTIME_OUTPUT '%s' (%s); the report follows on stderr", path,
                     strerror(errno));
    }
    if (f) {
        int rc = write_report(f, &r);
        int err = errno;
        if (fclose(f) != 0 && rc == 0) {
            rc = -1;
            err = errno;
        }
        if (rc == 0) {
            log_info("report written to %s", path);
            log_debug("exit: %.2f ms to stop the drain thread, %.2f ms to drain, %.2f ms to "
                      "build %zu rows, %.2f ms to write", t_stop - t0, t_finish - t_stop,
                      t_built - t_finish, r.nkernels, drain_now_ms() - t_built);
            return;
        }
        log_warn("writing KTIME_OUTPUT '%s' failed (%s); the report follows on stderr", path,
                 strerror(err));
    }
    fflush(stderr);
    if (write_report(stderr, &r) != 0)
        log_warn("the report could not be written to stderr either");
}

KTIME_EXPORT const char *ktime_version(void)
{
    return PACKAGE_VERSION;
}
