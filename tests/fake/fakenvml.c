/* fakenvml.c - a fake libnvidia-ml.so.1 for ktime's tests of the run's conditions
 * (tests/e2e/conditions.sh). Its devices match the fake CUDA driver's by PCI bus id and UUID,
 * in the opposite order (NVML index i is CUDA device N-1-i), so that a tool mapping devices by
 * index gets the wrong one. What it answers is set by environment variables (README.md, "The
 * fake NVML"): other processes, clocks, throttle reasons, temperature, failures, delays. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

typedef int nvmlReturn_t;
#define NVML_SUCCESS 0
#define NVML_ERROR_UNINITIALIZED 1
#define NVML_ERROR_INVALID_ARGUMENT 2
#define NVML_ERROR_NOT_FOUND 6
#define NVML_ERROR_INSUFFICIENT_SIZE 7
#define NVML_ERROR_UNKNOWN 999

struct nvml_proc {
    unsigned int pid;
    unsigned long long used_gpu_memory;
    unsigned int gpu_instance_id, compute_instance_id;
};

#define MAX_DEV 8
#define MAX_LIST 32

struct dev {
    int cuda;              /* the fake CUDA ordinal it stands for */
    char bus[32];
    unsigned calls_sm, calls_mem, calls_reasons, calls_temp, calls_procs;
};

static struct dev devs[MAX_DEV];
static int ndev;
static int inits;          /* nvmlInit_v2 minus nvmlShutdown */
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static long env_long(const char *name, long dflt)
{
    const char *s = getenv(name);
    char *end;
    long v;

    if (!s || !*s)
        return dflt;
    v = strtol(s, &end, 0);
    return *end ? dflt : v;
}

/* The n-th entry (cycling) of a comma list of numbers in variable `name`, or dflt. */
static unsigned long long nth(const char *name, unsigned n, unsigned long long dflt)
{
    const char *s = getenv(name);
    unsigned long long v[64];
    int k = 0;

    if (!s || !*s)
        return dflt;
    while (*s && k < 64) {
        char *end;
        v[k++] = strtoull(s, &end, 0);
        if (end == s)
            return dflt;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return dflt;
    }
    return k ? v[n % (unsigned)k] : dflt;
}

/* Appends one line to FAKE_NVML_LOG, if set. */
static void trace(const char *fmt, ...)
{
    const char *path = getenv("FAKE_NVML_LOG");
    FILE *f;
    va_list ap;

    if (!path || !(f = fopen(path, "a")))
        return;
    va_start(ap, fmt);
    vfprintf(f, fmt, ap);
    va_end(ap);
    fputc('\n', f);
    fclose(f);
}

static void sleep_ms(long ms)
{
    struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

    if (ms > 0)
        while (nanosleep(&ts, &ts) != 0)
            ;
}

/* Whether FAKE_NVML_FAIL names fn (a comma list of function names, or "all"); also sleeps
 * FAKE_NVML_DELAY_MS in every call. */
static int fails(const char *fn)
{
    const char *s = getenv("FAKE_NVML_FAIL");
    size_t n = strlen(fn);

    sleep_ms(env_long("FAKE_NVML_DELAY_MS", 0));
    if (!s)
        return 0;
    if (strcmp(s, "all") == 0)
        return 1;
    for (const char *p = s; (p = strstr(p, fn)); p += n)
        if ((p == s || p[-1] == ',') && (p[n] == '\0' || p[n] == ','))
            return 1;
    return 0;
}

static struct dev *dev_of(void *h)
{
    for (int i = 0; i < ndev; i++)
        if (h == (void *)&devs[i])
            return &devs[i];
    return NULL;
}

#define ENTER(fn)                                                                        \
    do {                                                                                 \
        trace("%s", fn);                                                                 \
        if (inits <= 0)                                                                  \
            return NVML_ERROR_UNINITIALIZED;                                             \
        if (fails(fn))                                                                   \
            return NVML_ERROR_UNKNOWN;                                                   \
    } while (0)

#define DEVICE(h, d)                                                                     \
    struct dev *d = dev_of(h);                                                           \
    if (!d)                                                                              \
        return NVML_ERROR_INVALID_ARGUMENT

EXPORT nvmlReturn_t nvmlInit_v2(void)
{
    trace("nvmlInit_v2");
    sleep_ms(env_long("FAKE_NVML_INIT_DELAY_MS", 0));
    if (fails("nvmlInit_v2"))
        return NVML_ERROR_UNKNOWN;
    pthread_mutex_lock(&mu);
    if (inits++ == 0) {
        ndev = (int)env_long("FAKE_NVML_DEVICES", env_long("FAKECUDA_DEVICES", 1));
        if (ndev < 0 || ndev > MAX_DEV)
            ndev = 1;
        for (int i = 0; i < ndev; i++) {
            memset(&devs[i], 0, sizeof devs[i]);
            devs[i].cuda = ndev - 1 - i;
            snprintf(devs[i].bus, sizeof devs[i].bus, "00000000:%02X:00.0", devs[i].cuda + 1);
        }
    }
    pthread_mutex_unlock(&mu);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlShutdown(void)
{
    trace("nvmlShutdown");
    if (inits <= 0)
        return NVML_ERROR_UNINITIALIZED;
    inits--;
    return NVML_SUCCESS;
}

EXPORT const char *nvmlErrorString(nvmlReturn_t r)
{
    switch (r) {
    case NVML_SUCCESS: return "Success";
    case NVML_ERROR_UNINITIALIZED: return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT: return "Invalid Argument";
    case NVML_ERROR_NOT_FOUND: return "Not Found";
    case NVML_ERROR_INSUFFICIENT_SIZE: return "Insufficient Size";
    default: return "Unknown Error";
    }
}

EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *count)
{
    ENTER("nvmlDeviceGetCount_v2");
    *count = (unsigned)ndev;
    return NVML_SUCCESS;
}

/* "0000:01:00.0" and "00000000:01:00.0" name the same device, in any case. */
static int same_bus(const char *a, const char *b)
{
    unsigned d1, b1, s1, f1, d2, b2, s2, f2;

    return sscanf(a, "%x:%x:%x.%x", &d1, &b1, &s1, &f1) == 4 &&
           sscanf(b, "%x:%x:%x.%x", &d2, &b2, &s2, &f2) == 4 && d1 == d2 && b1 == b2 &&
           s1 == s2 && f1 == f2;
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByPciBusId_v2(const char *bus, void **h)
{
    ENTER("nvmlDeviceGetHandleByPciBusId_v2");
    trace("bus %s", bus);
    for (int i = 0; i < ndev; i++)
        if (same_bus(bus, devs[i].bus)) {
            *h = &devs[i];
            return NVML_SUCCESS;
        }
    return NVML_ERROR_NOT_FOUND;
}

/* The fake CUDA driver's UUID of device d: "fakecuda", zeros, d in the last byte. */
static void uuid_of(int d, char *out, size_t size)
{
    unsigned char b[16] = { 'f', 'a', 'k', 'e', 'c', 'u', 'd', 'a' };

    b[15] = (unsigned char)d;
    snprintf(out, size, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12],
             b[13], b[14], b[15]);
}

EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char *uuid, void **h)
{
    char u[64];

    ENTER("nvmlDeviceGetHandleByUUID");
    trace("uuid %s", uuid);
    for (int i = 0; i < ndev; i++) {
        uuid_of(devs[i].cuda, u, sizeof u);
        if (strcasecmp(u, uuid) == 0) {
            *h = &devs[i];
            return NVML_SUCCESS;
        }
    }
    return NVML_ERROR_NOT_FOUND;
}

/* Appends the pids of comma list `var` (each + FAKE_NVML_PID_OFFSET) to list. */
static void add_pids(const char *var, unsigned *n, unsigned pids[])
{
    const char *s = getenv(var);
    long off = env_long("FAKE_NVML_PID_OFFSET", 0);

    while (s && *s && *n < MAX_LIST) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s)
            break;
        pids[(*n)++] = (unsigned)(v + off);
        s = *end == ',' ? end + 1 : end;
    }
}

static nvmlReturn_t procs(struct dev *d, const char *var, unsigned *count, struct nvml_proc *out,
                          int self)
{
    unsigned pids[MAX_LIST], n = 0, call = d->calls_procs++;
    const char *bus = getenv("FAKE_NVML_OTHER_BUS");
    long upto = env_long("FAKE_NVML_OTHER_CALLS", -1);

    if (!count)
        return NVML_ERROR_INVALID_ARGUMENT;
    if (self)
        pids[n++] = (unsigned)(getpid() + env_long("FAKE_NVML_PID_OFFSET", 0));
    if ((!bus || same_bus(bus, d->bus)) && (upto < 0 || call < (unsigned long)upto))
        add_pids(var, &n, pids);
    if (*count < n) {
        *count = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned i = 0; i < n; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].pid = pids[i];
        out[i].used_gpu_memory = 1u << 20;
        out[i].gpu_instance_id = out[i].compute_instance_id = 0xFFFFFFFFu;
    }
    *count = n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(void *h, unsigned *count,
                                                            struct nvml_proc *out)
{
    ENTER("nvmlDeviceGetComputeRunningProcesses_v3");
    DEVICE(h, d);
    return procs(d, "FAKE_NVML_OTHER_PIDS", count, out, 1);
}

EXPORT nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(void *h, unsigned *count,
                                                             struct nvml_proc *out)
{
    ENTER("nvmlDeviceGetGraphicsRunningProcesses_v3");
    DEVICE(h, d);
    d->calls_procs--; /* one count per reading: the compute query's */
    return procs(d, "FAKE_NVML_GRAPHICS_PIDS", count, out, 0);
}

EXPORT nvmlReturn_t nvmlDeviceGetMPSComputeRunningProcesses_v3(void *h, unsigned *count,
                                                               struct nvml_proc *out)
{
    unsigned n = 0;

    ENTER("nvmlDeviceGetMPSComputeRunningProcesses_v3");
    DEVICE(h, d);
    (void)d;
    if (env_long("FAKE_NVML_MPS_SELF", 0)) {
        if (*count < 1) {
            *count = 1;
            return NVML_ERROR_INSUFFICIENT_SIZE;
        }
        memset(out, 0, sizeof *out);
        out->pid = (unsigned)(getpid() + env_long("FAKE_NVML_PID_OFFSET", 0));
        n = 1;
    }
    *count = n;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetClockInfo(void *h, int type, unsigned *mhz)
{
    ENTER("nvmlDeviceGetClockInfo");
    DEVICE(h, d);
    if (type == 1)
        *mhz = (unsigned)nth("FAKE_NVML_SM_CLOCKS", d->calls_sm++, 1980);
    else if (type == 2)
        *mhz = (unsigned)nth("FAKE_NVML_MEM_CLOCKS", d->calls_mem++, 2619);
    else
        return NVML_ERROR_INVALID_ARGUMENT;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetApplicationsClock(void *h, int type, unsigned *mhz)
{
    ENTER("nvmlDeviceGetApplicationsClock");
    DEVICE(h, d);
    (void)d;
    if (type != 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mhz = (unsigned)env_long("FAKE_NVML_APP_CLOCK", env_long("FAKE_NVML_DEFAULT_APP_CLOCK", 1980));
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetDefaultApplicationsClock(void *h, int type, unsigned *mhz)
{
    ENTER("nvmlDeviceGetDefaultApplicationsClock");
    DEVICE(h, d);
    (void)d;
    if (type != 1)
        return NVML_ERROR_INVALID_ARGUMENT;
    *mhz = (unsigned)env_long("FAKE_NVML_DEFAULT_APP_CLOCK", 1980);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksEventReasons(void *h, unsigned long long *reasons)
{
    ENTER("nvmlDeviceGetCurrentClocksEventReasons");
    DEVICE(h, d);
    *reasons = nth("FAKE_NVML_REASONS", d->calls_reasons++, 0);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetCurrentClocksThrottleReasons(void *h, unsigned long long *reasons)
{
    return nvmlDeviceGetCurrentClocksEventReasons(h, reasons);
}

EXPORT nvmlReturn_t nvmlDeviceGetTemperature(void *h, int sensor, unsigned *t)
{
    ENTER("nvmlDeviceGetTemperature");
    DEVICE(h, d);
    if (sensor != 0)
        return NVML_ERROR_INVALID_ARGUMENT;
    *t = (unsigned)nth("FAKE_NVML_TEMP", d->calls_temp++, 40);
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetPersistenceMode(void *h, int *mode)
{
    ENTER("nvmlDeviceGetPersistenceMode");
    DEVICE(h, d);
    (void)d;
    *mode = (int)env_long("FAKE_NVML_PERSISTENCE", 1) != 0;
    return NVML_SUCCESS;
}

EXPORT nvmlReturn_t nvmlDeviceGetComputeMode(void *h, int *mode)
{
    ENTER("nvmlDeviceGetComputeMode");
    DEVICE(h, d);
    (void)d;
    *mode = (int)env_long("FAKE_NVML_COMPUTE_MODE", 0);
    return NVML_SUCCESS;
}
