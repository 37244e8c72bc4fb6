/* nvml.c - the run's conditions through NVML: other processes on the GPU, MPS, clocks,
 * throttle reasons, temperature, persistence mode. libnvidia-ml is dlopen'ed by the sampler
 * thread; a missing library, entry point or answer only leaves that figure "not checked". */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "nvml.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "driver.h"
#include "dl.h"
#include "log.h"
#include "module.h"
#include "rangestack.h"
#include "state.h"

/* ---- NVML's ABI: the few types and functions ktime uses (nvml.h is not part of every
 * toolkit, and ktime builds without it) ---- */
typedef int nvmlReturn_t;
typedef struct nvml_device_st *nvmlDevice_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_CLOCK_SM 1
#define NVML_CLOCK_MEM 2
#define NVML_TEMPERATURE_GPU 0

/* nvmlProcessInfo_t as the _v3 process queries fill it. */
struct nvml_proc {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
};

typedef nvmlReturn_t (*procs_fn)(nvmlDevice_t, unsigned int *, struct nvml_proc *);
typedef nvmlReturn_t (*clock_fn)(nvmlDevice_t, int, unsigned int *);

static struct {
    void *lib;
    nvmlReturn_t (*Init)(void);
    nvmlReturn_t (*Shutdown)(void);
    const char *(*ErrorString)(nvmlReturn_t);
    nvmlReturn_t (*ByPciBusId)(const char *, nvmlDevice_t *);
    nvmlReturn_t (*ByUUID)(const char *, nvmlDevice_t *);
    procs_fn Compute, Graphics, Mps;
    clock_fn ClockInfo, AppClock, DefaultAppClock;
    nvmlReturn_t (*Reasons)(nvmlDevice_t, unsigned long long *);
    nvmlReturn_t (*Temperature)(nvmlDevice_t, int, unsigned int *);
    nvmlReturn_t (*Persistence)(nvmlDevice_t, int *);
    nvmlReturn_t (*ComputeMode)(nvmlDevice_t, int *);
    bool ready;             /* nvmlInit_v2 succeeded */
} nv;

/* ---- the sampler ---- */

/* The conditions: the sampler thread's while it runs, the finisher's once it has joined it. */
static struct conditions cond;
static struct {
    nvmlDevice_t h;
    bool tried;
} handle[COND_MAX_DEVICES];

static struct {
    pthread_t thread;
    _Atomic int started;     /* nvml_start ran (0/1) */
    _Atomic bool deferred;   /* to start once the program's ranges close (nvml_ranges_closed) */
    _Atomic bool running;    /* the thread exists: set by nvml_start, cleared once joined */
    _Atomic int stop;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    long self;               /* our pid */
    bool at_exit_only;       /* no sampler thread: one reading at exit (the CUPTI timer) */
    char mps_dir[512];       /* CUDA_MPS_PIPE_DIRECTORY, or MPS's default */
    unsigned fn_failed;      /* entry points whose failure was logged, a bit each */
} smp = { .mu = PTHREAD_MUTEX_INITIALIZER };

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static const char *nv_error(nvmlReturn_t r)
{
    const char *s = nv.ErrorString ? nv.ErrorString(r) : NULL;
    static char buf[32];

    if (s)
        return s;
    snprintf(buf, sizeof buf, "error %d", r);
    return buf;
}

/* Logs (debug) the first failure of each entry point, by its bit. */
static void failed(unsigned bit, const char *fn, nvmlReturn_t r)
{
    if (smp.fn_failed & (1u << bit))
        return;
    smp.fn_failed |= 1u << bit;
    log_debug("NVML: %s failed (%s); that figure is not checked", fn, nv_error(r));
}

static void *sym(const char *name)
{
    return dl_sym(nv.lib, name);
}

/* Loads NVML and initializes it. Returns false, with cond.reason set, when it cannot. */
static bool nv_open(void)
{
    const char *path = kt.cfg.nvml_lib ? kt.cfg.nvml_lib : "libnvidia-ml.so.1";
    Dl_info info;
    nvmlReturn_t r;

    nv.lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!nv.lib) {
        snprintf(cond.reason, sizeof cond.reason, "no %s", path);
        log_debug("NVML: %s", dlerror());
        return false;
    }
    nv.Init = (nvmlReturn_t(*)(void))sym("nvmlInit_v2");
    nv.Shutdown = (nvmlReturn_t(*)(void))sym("nvmlShutdown");
    nv.ErrorString = (const char *(*)(nvmlReturn_t))sym("nvmlErrorString");
    nv.ByPciBusId = (nvmlReturn_t(*)(const char *, nvmlDevice_t *))sym("nvmlDeviceGetHandleByPciBusId_v2");
    nv.ByUUID = (nvmlReturn_t(*)(const char *, nvmlDevice_t *))sym("nvmlDeviceGetHandleByUUID");
    nv.Compute = (procs_fn)sym("nvmlDeviceGetComputeRunningProcesses_v3");
    nv.Graphics = (procs_fn)sym("nvmlDeviceGetGraphicsRunningProcesses_v3");
    nv.Mps = (procs_fn)sym("nvmlDeviceGetMPSComputeRunningProcesses_v3");
    nv.ClockInfo = (clock_fn)sym("nvmlDeviceGetClockInfo");
    nv.AppClock = (clock_fn)sym("nvmlDeviceGetApplicationsClock");
    nv.DefaultAppClock = (clock_fn)sym("nvmlDeviceGetDefaultApplicationsClock");
    nv.Reasons = (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long *))sym(
        "nvmlDeviceGetCurrentClocksEventReasons");
    if (!nv.Reasons) /* its name before driver 535 */
        nv.Reasons = (nvmlReturn_t(*)(nvmlDevice_t, unsigned long long *))sym(
            "nvmlDeviceGetCurrentClocksThrottleReasons");
    nv.Temperature = (nvmlReturn_t(*)(nvmlDevice_t, int, unsigned int *))sym("nvmlDeviceGetTemperature");
    nv.Persistence = (nvmlReturn_t(*)(nvmlDevice_t, int *))sym("nvmlDeviceGetPersistenceMode");
    nv.ComputeMode = (nvmlReturn_t(*)(nvmlDevice_t, int *))sym("nvmlDeviceGetComputeMode");
    if (!nv.Init || (!nv.ByPciBusId && !nv.ByUUID)) {
        snprintf(cond.reason, sizeof cond.reason, "%s lacks nvmlInit_v2 or a device lookup", path);
        return false;
    }
    if (dladdr((void *)nv.Init, &info) && info.dli_fname)
        snprintf(cond.library, sizeof cond.library, "%s", info.dli_fname);
    else
        snprintf(cond.library, sizeof cond.library, "%s", path);
    r = nv.Init();
    if (r != NVML_SUCCESS) {
        snprintf(cond.reason, sizeof cond.reason, "nvmlInit_v2 failed: %s", nv_error(r));
        return false;
    }
    nv.ready = true;
    cond.checked = true;
    return true;
}

/* /proc/PID/comm into name, whole ("" when it cannot be read: gone, or another pid
 * namespace). */
static void proc_name(long pid, char *name, size_t size)
{
    char path[64];
    ssize_t n;
    int fd;

    name[0] = '\0';
    snprintf(path, sizeof path, "/proc/%ld/comm", pid);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return;
    n = read(fd, name, size - 1);
    close(fd);
    if (n <= 0) {
        name[0] = '\0';
        return;
    }
    name[n] = '\0';
    /* The kernel ends it with a newline; the name itself is any bytes the process set
     * (PR_SET_NAME), a newline among them, kept whole (the report escapes them). */
    if (name[n - 1] == '\n')
        name[n - 1] = '\0';
}

/* Sets the MPS verdict (the first evidence found wins). */
static void mps_evidence(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void mps_evidence(const char *fmt, ...)
{
    va_list ap;

    if (cond.mps > 0)
        return;
    cond.mps = 1;
    va_start(ap, fmt);
    vsnprintf(cond.mps_evidence, sizeof cond.mps_evidence, fmt, ap);
    va_end(ap);
}

/* An MPS control daemon's pipe: CUDA clients connect to it at start-up when it exists. */
static void mps_pipe(void)
{
    char path[600];
    struct stat st;

    if (cond.mps < 0)
        cond.mps = 0;
    snprintf(path, sizeof path, "%s/control", smp.mps_dir);
    if (stat(path, &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
        mps_evidence("an MPS control daemon's pipe, %s", path);
}

/* Reads one process list into s (deduplicated by pid). Returns whether it was read. */
static bool read_procs(procs_fn fn, unsigned bit, const char *name, nvmlDevice_t h,
                       struct cond_sample *s, long *pids, int *npids, int ordinal)
{
    static struct nvml_proc buf[256];
    unsigned int count = sizeof buf / sizeof buf[0];
    nvmlReturn_t r;

    if (!fn)
        return false;
    r = fn(h, &count, buf);
    if (r != NVML_SUCCESS) {
        failed(bit, name, r);
        return false;
    }
    for (unsigned i = 0; i < count && i < sizeof buf / sizeof buf[0]; i++) {
        long pid = (long)buf[i].pid;
        bool dup = false;
        for (int j = 0; j < *npids && !dup; j++)
            dup = pids[j] == pid;
        if (dup || *npids >= 256)
            continue;
        pids[(*npids)++] = pid;
        s->nprocs++;
        if (pid == smp.self) {
            s->self_listed = true;
            continue;
        }
        if (s->nothers < COND_MAX_OTHERS) {
            struct cond_proc_id *o = &s->others[s->nothers];
            o->pid = pid;
            proc_name(pid, o->name, sizeof o->name);
            /* comm is cut at 15 bytes: nvidia-cuda-mps-server reads nvidia-cuda-mps. */
            if (strncmp(o->name, "nvidia-cuda-mps", 15) == 0)
                mps_evidence("an MPS server (%s, pid %ld) runs on gpu %d", o->name, pid, ordinal);
        }
        s->nothers++;
    }
    return true;
}

/* Finds the NVML device of CUDA device `ordinal` by its PCI bus id, or else its UUID (never by
 * index: CUDA_VISIBLE_DEVICES renumbers CUDA's devices), and reads what does not change. */
static void map_device(struct cond_device *d, int i)
{
    char uuid[64];
    CUuuid u;
    nvmlReturn_t r = -1;

    handle[i].tried = true;
    if (drv.DeviceGetPCIBusId &&
        drv.DeviceGetPCIBusId(d->pci_bus_id, (int)sizeof d->pci_bus_id, (CUdevice)d->ordinal) ==
            CUDA_SUCCESS &&
        nv.ByPciBusId && (r = nv.ByPciBusId(d->pci_bus_id, &handle[i].h)) == NVML_SUCCESS) {
        d->mapped = true;
    } else if (drv.DeviceGetUuid && nv.ByUUID &&
               drv.DeviceGetUuid(&u, (CUdevice)d->ordinal) == CUDA_SUCCESS) {
        const unsigned char *b = (const unsigned char *)u.bytes;
        snprintf(uuid, sizeof uuid,
                 "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", b[0],
                 b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
                 b[14], b[15]);
        r = nv.ByUUID(uuid, &handle[i].h);
        d->mapped = r == NVML_SUCCESS;
    }
    if (!d->mapped) {
        d->pci_bus_id[sizeof d->pci_bus_id - 1] = '\0';
        snprintf(d->why, sizeof d->why, "no NVML device for its PCI bus id %s or UUID (%s)",
                 d->pci_bus_id[0] ? d->pci_bus_id : "unknown", r == -1 ? "not asked" : nv_error(r));
        return;
    }
    {
        int v;
        unsigned int mhz;
        if (nv.Persistence && (r = nv.Persistence(handle[i].h, &v)) == NVML_SUCCESS)
            d->persistence = v != 0;
        else if (nv.Persistence)
            failed(0, "nvmlDeviceGetPersistenceMode", r);
        if (nv.ComputeMode && (r = nv.ComputeMode(handle[i].h, &v)) == NVML_SUCCESS)
            d->compute_mode = v;
        else if (nv.ComputeMode)
            failed(1, "nvmlDeviceGetComputeMode", r);
        if (nv.AppClock && (r = nv.AppClock(handle[i].h, NVML_CLOCK_SM, &mhz)) == NVML_SUCCESS)
            d->app_sm_mhz = (int)mhz;
        else if (nv.AppClock)
            failed(2, "nvmlDeviceGetApplicationsClock", r);
        if (nv.DefaultAppClock &&
            (r = nv.DefaultAppClock(handle[i].h, NVML_CLOCK_SM, &mhz)) == NVML_SUCCESS)
            d->default_app_sm_mhz = (int)mhz;
        else if (nv.DefaultAppClock)
            failed(3, "nvmlDeviceGetDefaultApplicationsClock", r);
    }
}

static void sample_device(int ordinal, bool end)
{
    struct cond_device *d = cond_device(&cond, ordinal);
    struct cond_sample s;
    long pids[256];
    int npids = 0, i;
    unsigned int v;
    unsigned long long reasons;
    nvmlReturn_t r;

    if (!d)
        return;
    i = (int)(d - cond.dev);
    if (!handle[i].tried)
        map_device(d, i);
    if (!d->mapped)
        return;
    memset(&s, 0, sizeof s);
    s.t = now_s();
    nvmlDevice_t h = handle[i].h;
    bool c = read_procs(nv.Compute, 4, "nvmlDeviceGetComputeRunningProcesses_v3", h, &s, pids,
                        &npids, ordinal);
    bool g = read_procs(nv.Graphics, 5, "nvmlDeviceGetGraphicsRunningProcesses_v3", h, &s, pids,
                        &npids, ordinal);
    s.procs_ok = c || g;
    if (nv.Mps && cond.mps <= 0) {
        static struct nvml_proc buf[256];
        unsigned int count = sizeof buf / sizeof buf[0];
        if (nv.Mps(h, &count, buf) == NVML_SUCCESS)
            for (unsigned k = 0; k < count && k < sizeof buf / sizeof buf[0]; k++)
                if ((long)buf[k].pid == smp.self)
                    mps_evidence("NVML lists this process as an MPS client of gpu %d", ordinal);
    }
    if (nv.ClockInfo) {
        if ((r = nv.ClockInfo(h, NVML_CLOCK_SM, &v)) == NVML_SUCCESS)
            s.sm_ok = true, s.sm_mhz = v;
        else
            failed(6, "nvmlDeviceGetClockInfo", r);
        if ((r = nv.ClockInfo(h, NVML_CLOCK_MEM, &v)) == NVML_SUCCESS)
            s.mem_ok = true, s.mem_mhz = v;
        else
            failed(7, "nvmlDeviceGetClockInfo (memory)", r);
    }
    if (nv.Reasons) {
        if ((r = nv.Reasons(h, &reasons)) == NVML_SUCCESS)
            s.reasons_ok = true, s.reasons = reasons;
        else
            failed(8, "nvmlDeviceGetCurrentClocksEventReasons", r);
    }
    if (nv.Temperature) {
        if ((r = nv.Temperature(h, NVML_TEMPERATURE_GPU, &v)) == NVML_SUCCESS)
            s.temp_ok = true, s.temp_c = (int)v;
        else
            failed(9, "nvmlDeviceGetTemperature", r);
    }
    cond_add_sample(d, &s, end);
}

/* Whether this process uses CUDA device `dev`: a context of ours timed a launch there, or
 * its primary context is active. */
static bool in_use(int dev)
{
    unsigned int flags;
    int active = 0, n = atomic_load(&kt.ndevices);

    for (int i = 0; i < n; i++)
        if (kt.devices[i].ordinal == dev)
            return true;
    return drv.DevicePrimaryCtxGetState &&
           drv.DevicePrimaryCtxGetState((CUdevice)dev, &flags, &active) == CUDA_SUCCESS && active;
}

static void sample_all(void)
{
    int n = 0;

    if (!drv.DeviceGetCount || drv.DeviceGetCount(&n) != CUDA_SUCCESS)
        n = 0;
    for (int dev = 0; dev < n; dev++)
        if (in_use(dev))
            sample_device(dev, false);
}

static void *sampler_main(void *arg)
{
    struct timespec ts;

    (void)arg;
    if (!ktime_driver_ready()) {
        snprintf(cond.reason, sizeof cond.reason, "the CUDA driver's device queries are missing");
        return NULL;
    }
    if (!nv_open())
        return NULL;
    mps_pipe();
    log_debug("NVML: %s loaded; reading the conditions every %ld ms", cond.library,
              cond.interval_ms);
    /* The first reading is taken even when the run is already ending: with the last one it
     * makes the start and the end of a short run. */
    for (bool first = true; first || !atomic_load(&smp.stop); first = false) {
        sample_all();
        clock_gettime(CLOCK_MONOTONIC, &ts);
        ts.tv_sec += cond.interval_ms / 1000;
        ts.tv_nsec += (cond.interval_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_mutex_lock(&smp.mu);
        while (!atomic_load(&smp.stop) && pthread_cond_timedwait(&smp.cv, &smp.mu, &ts) == 0)
            ;
        pthread_mutex_unlock(&smp.mu);
    }
    return NULL;
}

/* Starts the sampler thread. */
static void start_thread(void)
{
    pthread_condattr_t ca;
    pthread_attr_t attr;
    sigset_t all, old;
    int err;

    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_cond_init(&smp.cv, &ca);
    pthread_condattr_destroy(&ca);
    /* The sampler must never receive the host program's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 256 * 1024);
    err = pthread_create(&smp.thread, &attr, sampler_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err) {
        snprintf(cond.reason, sizeof cond.reason, "could not start the NVML thread (%s)",
                 strerror(err));
        return;
    }
    smp.running = true;
#ifdef __GLIBC__
    pthread_setname_np(smp.thread, "ktime-nvml");
#endif
}

void nvml_start(void)
{
    const char *dir;

    if (!kt.cfg.nvml || atomic_exchange(&smp.started, 1))
        return;
    cond_init(&cond);
    cond.interval_ms = kt.cfg.nvml_interval_ms;
    smp.self = (long)getpid();
    dir = getenv("CUDA_MPS_PIPE_DIRECTORY");
    snprintf(smp.mps_dir, sizeof smp.mps_dir, "%s", dir && *dir ? dir : "/tmp/nvidia-mps");
    /* Beside the CUPTI timer, no sampler thread: a thread reading NVML and the driver while
     * CUPTI traces the program's kernels can leave the program stuck on a lock (docs/design.md,
     * "Facts the code rests on"). The conditions are then read once, at exit (nvml_finish). */
    if (kt.cfg.timer != TIMER_EVENTS) {
        smp.at_exit_only = true;
        return;
    }
    /* Loading NVML and its first reading take milliseconds of the process's time (the
     * loader's lock, the driver's): not inside a range of the program's, whose time they
     * would add to. The thread starts when the calling thread's ranges have closed. */
    if (range_current() != 0) {
        atomic_store(&smp.deferred, true);
        return;
    }
    start_thread();
}

void nvml_ranges_closed(void)
{
    if (atomic_load_explicit(&smp.deferred, memory_order_relaxed) && range_current() == 0 &&
        atomic_exchange(&smp.deferred, false))
        start_thread();
}

const struct conditions *nvml_finish(const int *ordinals, int n, long wait_ms)
{
    static struct conditions late; /* when the sampler did not stop in time */
    struct timespec ts;

    if (!kt.cfg.nvml) {
        cond_init(&late);
        snprintf(late.reason, sizeof late.reason, "KTIME_NVML=0");
        return &late;
    }
    if (!atomic_load(&smp.started)) {
        cond_init(&late);
        snprintf(late.reason, sizeof late.reason, "no launch was made");
        return &late;
    }
    /* The program's ranges never closed: one reading, at exit. */
    if (atomic_exchange(&smp.deferred, false))
        smp.at_exit_only = true;
    if (smp.running) {
        pthread_mutex_lock(&smp.mu);
        atomic_store(&smp.stop, 1);
        pthread_cond_signal(&smp.cv);
        pthread_mutex_unlock(&smp.mu);
        clock_gettime(CLOCK_REALTIME, &ts); /* pthread_timedjoin_np's clock */
        ts.tv_sec += wait_ms / 1000;
        ts.tv_nsec += (wait_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        if (pthread_timedjoin_np(smp.thread, NULL, &ts) != 0) {
            cond_init(&late);
            snprintf(late.reason, sizeof late.reason, "NVML did not answer within %ld ms",
                     wait_ms);
            log_warn("NVML did not answer within %ld ms; the run's conditions are not "
                     "reported", wait_ms);
            return &late;
        }
        smp.running = false;
    }
    if (smp.at_exit_only && ktime_driver_ready() && nv_open()) {
        mps_pipe();
        log_debug("NVML: %s loaded at exit (the CUPTI timer: one reading)", cond.library);
    }
    if (nv.ready) {
        /* The last reading: the devices of the report, and every one read before. */
        for (int i = 0; i < n; i++)
            if (!cond_find(&cond, ordinals[i]))
                cond_device(&cond, ordinals[i]);
        for (int i = 0; i < cond.ndev; i++)
            sample_device(cond.dev[i].ordinal, true);
        if (nv.Shutdown)
            nv.Shutdown();
        nv.ready = false; /* libnvidia-ml stays loaded: nothing else may still point into it */
    }
    return &cond;
}

/* The run's conditions: the sampler's last reading of the report's devices. */
static void nvml_end(struct module_end *e, struct report *r)
{
    int ordinals[KTIME_MAX_DEVICES];
    int n = atomic_load(&kt.ndevices);

    for (int d = 0; d < n; d++)
        ordinals[d] = kt.devices[d].ordinal;
    r->conditions = nvml_finish(ordinals, n,
                                e->budget_ms(kt.cfg.exit_wait_ms > 500 ? kt.cfg.exit_wait_ms : 500));
}

const struct ktime_module nvml_module = {
    .name = "nvml",
    .first_launch = nvml_start,
    .end = nvml_end,
};
