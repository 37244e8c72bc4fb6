/* fakecupti.c - a fake CUPTI (libcupti.so.13): the fake driver's kernels as activity records.
 *
 * Built with soname libcupti.so.13 so that a CUPTI activity client (ktime's CUPTI mode,
 * tests/gpu/kcount.c) runs without a GPU against the fake driver, fakecuda.c, and gets exact
 * records. It implements the activity API (buffers requested from and completed to the client,
 * records of kind CONCURRENT_KERNEL / KERNEL laid out as the real CUpti_ActivityKernel10) and
 * the callback API's bookkeeping (one subscriber; callbacks are never delivered). See
 * tests/fake/README.md, "The fake CUPTI", for the contract and the knobs:
 *
 *   - when a kernel kind is enabled, it registers a sink with the fake driver
 *     (fakecuda_set_activity_sink, fakecuda_activity.h): every kernel that runs becomes one
 *     record whose start/end are the fake's simulated stream clock before and after it;
 *   - buffer callbacks are process-global, as measured on a GPU: a second client's
 *     cuptiActivityRegisterCallbacks makes buffers requested through the first client be
 *     completed to the second one;
 *   - a full buffer is completed at once, on the launching thread; cuptiActivityFlushAll
 *     completes the rest. A flush in a forked child hangs (measured), after a count line;
 *   - FAKECUPTI_FAIL, FAKECUPTI_MAX_RECORDS, FAKECUPTI_OTHER_SUBSCRIBER, FAKECUPTI_TRACE, and
 *     counts appended at exit to FAKECUPTI_COUNT_FILE (else FAKECUDA_COUNT_FILE).
 *
 * Thread safety: one mutex guards all state; no client callback and no driver call runs with it
 * held.
 */
#define _GNU_SOURCE
#include <cupti.h>

#include "fakecuda_activity.h"
#include "fakeutil.h"

#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define EXPORT __attribute__((visibility("default")))

#define REC_SIZE sizeof(CUpti_ActivityKernel10)
#define ALIGN8(n) (((n) + 7) & ~(size_t)7)
#define API_SIZE ALIGN8(sizeof(CUpti_ActivityAPI))
#define EXT_SIZE ALIGN8(sizeof(CUpti_ActivityExternalCorrelation))
#define MAX_CTX_OVERRIDES 64
#define EXT_DEPTH 16              /* external correlation ids a thread keeps pushed, per kind */
#define MAX_CBID 1024             /* driver API callback ids cuptiActivityEnableDriverApi takes */

_Static_assert(sizeof(CUpti_ActivityKernel10) % 8 == 0, "kernel records keep 8-byte alignment");

/* Every function this library exports, for FAKECUPTI_FAIL and the call counts. */
#define API_LIST(X) \
    X(cuptiGetVersion) \
    X(cuptiGetResultString) \
    X(cuptiGetErrorMessage) \
    X(cuptiGetLastError) \
    X(cuptiGetTimestamp) \
    X(cuptiGetContextId) \
    X(cuptiGetStreamId) \
    X(cuptiGetStreamIdEx) \
    X(cuptiGetDeviceId) \
    X(cuptiActivityRegisterCallbacks) \
    X(cuptiActivityEnable) \
    X(cuptiActivityDisable) \
    X(cuptiActivityEnableContext) \
    X(cuptiActivityDisableContext) \
    X(cuptiActivityGetNextRecord) \
    X(cuptiActivityFlush) \
    X(cuptiActivityFlushAll) \
    X(cuptiActivityFlushPeriod) \
    X(cuptiActivityGetNumDroppedRecords) \
    X(cuptiActivityEnableDriverApi) \
    X(cuptiActivityEnableRuntimeApi) \
    X(cuptiActivityPushExternalCorrelationId) \
    X(cuptiActivityPopExternalCorrelationId) \
    X(cuptiFinalize) \
    X(cuptiSubscribe) \
    X(cuptiSubscribe_v2) \
    X(cuptiUnsubscribe) \
    X(cuptiEnableCallback) \
    X(cuptiEnableDomain) \
    X(cuptiEnableAllDomains)

#define API_ENUM(n) API_##n,
enum { API_LIST(API_ENUM) API_COUNT };
#define API_NAME(n) #n,
static const char *const g_api_names[API_COUNT] = { API_LIST(API_NAME) };

#define RESULT_LIST(X) \
    X(CUPTI_SUCCESS) X(CUPTI_ERROR_INVALID_PARAMETER) X(CUPTI_ERROR_INVALID_DEVICE) \
    X(CUPTI_ERROR_INVALID_CONTEXT) X(CUPTI_ERROR_INVALID_EVENT_DOMAIN_ID) X(CUPTI_ERROR_INVALID_EVENT_ID) \
    X(CUPTI_ERROR_INVALID_EVENT_NAME) X(CUPTI_ERROR_INVALID_OPERATION) X(CUPTI_ERROR_OUT_OF_MEMORY) \
    X(CUPTI_ERROR_HARDWARE) X(CUPTI_ERROR_PARAMETER_SIZE_NOT_SUFFICIENT) X(CUPTI_ERROR_API_NOT_IMPLEMENTED) \
    X(CUPTI_ERROR_MAX_LIMIT_REACHED) X(CUPTI_ERROR_NOT_READY) X(CUPTI_ERROR_NOT_COMPATIBLE) \
    X(CUPTI_ERROR_NOT_INITIALIZED) X(CUPTI_ERROR_INVALID_METRIC_ID) X(CUPTI_ERROR_INVALID_METRIC_NAME) \
    X(CUPTI_ERROR_QUEUE_EMPTY) X(CUPTI_ERROR_INVALID_HANDLE) X(CUPTI_ERROR_INVALID_STREAM) \
    X(CUPTI_ERROR_INVALID_KIND) X(CUPTI_ERROR_INVALID_EVENT_VALUE) X(CUPTI_ERROR_DISABLED) \
    X(CUPTI_ERROR_INVALID_MODULE) X(CUPTI_ERROR_INVALID_METRIC_VALUE) X(CUPTI_ERROR_HARDWARE_BUSY) \
    X(CUPTI_ERROR_NOT_SUPPORTED) X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED) \
    X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_DEVICE) \
    X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_ON_NON_P2P_DEVICES) \
    X(CUPTI_ERROR_UM_PROFILING_NOT_SUPPORTED_WITH_MPS) X(CUPTI_ERROR_CDP_TRACING_NOT_SUPPORTED) \
    X(CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_CUDA_COMPILER_NOT_COMPATIBLE) \
    X(CUPTI_ERROR_INSUFFICIENT_PRIVILEGES) X(CUPTI_ERROR_OLD_PROFILER_API_INITIALIZED) \
    X(CUPTI_ERROR_OPENACC_UNDEFINED_ROUTINE) X(CUPTI_ERROR_LEGACY_PROFILER_NOT_SUPPORTED) \
    X(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) X(CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES) \
    X(CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED) X(CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED) \
    X(CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED) \
    X(CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED) X(CUPTI_ERROR_INVALID_CHIP_NAME) X(CUPTI_ERROR_UNKNOWN)

#define RESULT_ENTRY(r) { r, #r },
static const struct { CUptiResult code; const char *name; } g_results[] = { RESULT_LIST(RESULT_ENTRY) };

/* ------------------------------------------------------------------------------------ */
/* State                                                                                 */

struct buf {                   /* a client buffer CUPTI holds */
    uint8_t *p;
    size_t size;               /* as the client gave it */
    size_t used;               /* bytes from p: alignment padding, then nrec records */
    size_t nrec, maxrec;       /* maxrec 0: as many as fit */
    size_t nkern;              /* of the records, kernel records (the counts are theirs) */
};

struct kcount {                /* delivered records per kernel (names are the driver's, unique) */
    const char *name;
    uint64_t n;
    struct kcount *next;
};

static pthread_mutex_t g_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_cv = PTHREAD_COND_INITIALIZER;  /* g_requesting / g_delivering changed */
static pthread_mutex_t g_attach_mu = PTHREAD_MUTEX_INITIALIZER;  /* finding the driver */

static CUpti_BuffersCallbackRequestFunc g_req;  /* process-global, like the real ones */
static CUpti_BuffersCallbackCompleteFunc g_comp;
static uint8_t g_enabled[CUPTI_ACTIVITY_KIND_COUNT];
static struct { uint32_t ctx; int8_t conc, kern; } g_ovr[MAX_CTX_OVERRIDES];  /* -1: no override */
static int g_novr;
static struct buf *g_cur;                 /* the buffer being filled */
static int g_requesting;                  /* a thread is in the client's bufferRequested */
static int g_delivering;                  /* bufferCompleted calls running */
static uint64_t g_pending;                /* records in buffers not yet completed */
static uint64_t g_epoch;                  /* bumped by cuptiFinalize */
static size_t g_dropped_unread;           /* for cuptiActivityGetNumDroppedRecords */
static int64_t g_grid_id;
static uint32_t g_flush_period_ms;
static pid_t g_enable_pid;                /* the process that enabled activity */
static int g_is_child;
static struct kcount *g_kcounts;

static struct { int active; CUpti_CallbackFunc cb; void *userdata; char name[64]; uint8_t domains[CUPTI_CB_DOMAIN_SIZE]; } g_sub;

static void *g_cuda;                      /* dlopen handle of libcuda.so.1 */
static fakecuda_set_activity_sink_t g_set_sink;
static int g_attached;

/* Knobs */
static CUptiResult g_fail[API_COUNT];     /* FAKECUPTI_FAIL */
static uint64_t g_max_records;            /* FAKECUPTI_MAX_RECORDS, 0: no limit */
static char *g_other_sub;                 /* FAKECUPTI_OTHER_SUBSCRIBER */
static int g_trace;
static char *g_count_file;

static struct {
    uint64_t records, inherited, delivered, dropped, lost, buffers_requested, buffers_refused, buffers_completed;
    uint64_t flushes, flushes_forced, registrations, subscribers, subscribe_refused, finalizes;
    uint64_t calls[API_COUNT], failed[API_COUNT];
} g_cnt;

static uint8_t g_api_off[MAX_CBID];       /* driver API entry points switched off, by callback id */
static uint64_t g_launch_ns = 2000, g_queue_ns = 3000; /* FAKECUPTI_LAUNCH_NS, _QUEUE_NS */

static __thread struct { uint64_t id[EXT_DEPTH]; int n; } tl_ext[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
static __thread uint32_t tl_last_corr;    /* the launch whose launch record this thread made */
/* Inside a runtime launch (fakecupti_runtime_api): as the real libcupti, its kernels carry the
 * runtime call's correlation id, and the external ids are those pushed when it was entered
 * (one pushed later, by a driver-level wrapper inside it, belongs to the driver call). */
static __thread struct {
    int on;
    int has[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
    uint64_t id[CUPTI_EXTERNAL_CORRELATION_KIND_SIZE];
} tl_rt;
static __thread CUptiResult tl_last_error;
static __thread int tl_in_callback;       /* inside a client buffer callback */

#define LOCK() pthread_mutex_lock(&g_mu)
#define UNLOCK() pthread_mutex_unlock(&g_mu)
#define TRACE(...) do { if (g_trace) { fprintf(stderr, "fakecupti: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

/* Entry of every API function: counts the call; a FAKECUPTI_FAIL'ed function fails here. */
#define ENTER(n) do { \
        __atomic_add_fetch(&g_cnt.calls[API_##n], 1, __ATOMIC_RELAXED); \
        if (g_fail[API_##n] != CUPTI_SUCCESS) { \
            __atomic_add_fetch(&g_cnt.failed[API_##n], 1, __ATOMIC_RELAXED); \
            TRACE("%s fails with %d (FAKECUPTI_FAIL)", #n, (int)g_fail[API_##n]); \
            return ret(g_fail[API_##n]); \
        } \
    } while (0)

/* The result of an API call; an error is also cuptiGetLastError's answer on this thread. */
static CUptiResult ret(CUptiResult r)
{
    if (r != CUPTI_SUCCESS)
        tl_last_error = r;
    return r;
}

static int result_code(const char *s, CUptiResult *out)
{
    char *end;
    long v;
    size_t i;
    for (i = 0; i < sizeof g_results / sizeof g_results[0]; i++)
        if (strcmp(g_results[i].name, s) == 0) {
            *out = g_results[i].code;
            return 0;
        }
    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v <= 0)
        return -1;
    *out = (CUptiResult)v;
    return 0;
}

/* FAKECUPTI_FAIL=name[:CODE][,name[:CODE]...]; CODE a CUPTI_ERROR_* name or a number,
 * CUPTI_ERROR_NOT_INITIALIZED when left out. */
static void parse_fail(const char *spec)
{
    char *copy = strdup(spec), *save = NULL, *tok;
    if (!copy)
        return;
    for (tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char *colon = strchr(tok, ':');
        CUptiResult code = CUPTI_ERROR_NOT_INITIALIZED;
        int i, found = 0;
        if (colon) {
            *colon = '\0';
            if (result_code(colon + 1, &code) != 0) {
                fprintf(stderr, "fakecupti: bad FAKECUPTI_FAIL code '%s', using CUPTI_ERROR_NOT_INITIALIZED\n",
                        colon + 1);
                code = CUPTI_ERROR_NOT_INITIALIZED;
            }
        }
        for (i = 0; i < API_COUNT; i++)
            if (strcmp(g_api_names[i], tok) == 0) {
                g_fail[i] = code;
                found = 1;
            }
        if (!found)
            fprintf(stderr, "fakecupti: FAKECUPTI_FAIL names '%s', not a function of the fake CUPTI\n", tok);
    }
    free(copy);
}

static uint64_t env_u64(const char *name, uint64_t dflt, uint64_t max)
{
    return fake_env_u64("fakecupti", name, dflt, max);
}

/* ------------------------------------------------------------------------------------ */
/* Lifecycle                                                                              */

static void fork_prepare(void)
{
    pthread_mutex_lock(&g_attach_mu);
    LOCK();
}

static void fork_parent(void)
{
    UNLOCK();
    pthread_mutex_unlock(&g_attach_mu);
}

static void fork_child(void)
{
    pthread_mutex_init(&g_mu, NULL);
    pthread_mutex_init(&g_attach_mu, NULL);
    pthread_cond_init(&g_cv, NULL);
    g_requesting = 0;   /* the threads that were in callbacks are not in the child */
    g_delivering = 0;
    g_is_child = 1;
    memset(&g_cnt, 0, sizeof g_cnt);
    g_cnt.inherited = g_pending;  /* the parent's records in the buffers we hold */
    for (struct kcount *k = g_kcounts; k; k = k->next)
        k->n = 0;
}

__attribute__((constructor)) static void fakecupti_ctor(void)
{
    const char *s;
    g_trace = (int)env_u64("FAKECUPTI_TRACE", 0, 1);
    g_max_records = env_u64("FAKECUPTI_MAX_RECORDS", 0, UINT64_MAX);
    g_launch_ns = env_u64("FAKECUPTI_LAUNCH_NS", 2000, 1000000000);
    g_queue_ns = env_u64("FAKECUPTI_QUEUE_NS", 3000, 1000000000);
    s = getenv("FAKECUPTI_FAIL");
    if (s && *s)
        parse_fail(s);
    s = getenv("FAKECUPTI_OTHER_SUBSCRIBER");
    if (s && *s)
        g_other_sub = strdup(s);
    s = getenv("FAKECUPTI_COUNT_FILE");
    if (!s || !*s)
        s = getenv("FAKECUDA_COUNT_FILE");
    if (s && *s)
        g_count_file = strdup(s);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static void write_counts(FILE *f, const char *pfx)
{
    int i;
    fprintf(f, "%scupti_records %" PRIu64 "\n", pfx, g_cnt.records);
    fprintf(f, "%scupti_records_inherited %" PRIu64 "\n", pfx, g_cnt.inherited);
    fprintf(f, "%scupti_records_delivered %" PRIu64 "\n", pfx, g_cnt.delivered);
    fprintf(f, "%scupti_records_dropped %" PRIu64 "\n", pfx, g_cnt.dropped);
    fprintf(f, "%scupti_records_pending %" PRIu64 "\n", pfx, g_pending);
    fprintf(f, "%scupti_records_lost %" PRIu64 "\n", pfx, g_cnt.lost);
    fprintf(f, "%scupti_buffers_requested %" PRIu64 "\n", pfx, g_cnt.buffers_requested);
    fprintf(f, "%scupti_buffers_refused %" PRIu64 "\n", pfx, g_cnt.buffers_refused);
    fprintf(f, "%scupti_buffers_completed %" PRIu64 "\n", pfx, g_cnt.buffers_completed);
    fprintf(f, "%scupti_flush %" PRIu64 "\n", pfx, g_cnt.flushes);
    fprintf(f, "%scupti_flush_forced %" PRIu64 "\n", pfx, g_cnt.flushes_forced);
    fprintf(f, "%scupti_registrations %" PRIu64 "\n", pfx, g_cnt.registrations);
    fprintf(f, "%scupti_subscribers %" PRIu64 "\n", pfx, g_cnt.subscribers);
    fprintf(f, "%scupti_subscribe_refused %" PRIu64 "\n", pfx, g_cnt.subscribe_refused);
    fprintf(f, "%scupti_finalize %" PRIu64 "\n", pfx, g_cnt.finalizes);
    for (i = 0; i < API_COUNT; i++) {
        if (g_cnt.calls[i])
            fprintf(f, "%scupti_call %s %" PRIu64 "\n", pfx, g_api_names[i], g_cnt.calls[i]);
        if (g_cnt.failed[i])
            fprintf(f, "%scupti_failed %s %" PRIu64 "\n", pfx, g_api_names[i], g_cnt.failed[i]);
    }
}

static int cmp_kcount(const void *a, const void *b)
{
    return strcmp((*(struct kcount *const *)a)->name, (*(struct kcount *const *)b)->name);
}

__attribute__((destructor)) static void fakecupti_dtor(void)
{
    FILE *f;
    struct kcount **v;
    int locked = 0, i, n = 0;
    /* Leave no sink pointing into this library, in case it is unloaded. */
    if (g_attached && g_set_sink)
        g_set_sink(NULL, NULL);
    if (!g_count_file)
        return;
    locked = fake_lock_at_exit(&g_mu);
    f = fopen(g_count_file, "a");
    if (f) {
        const char *pfx = g_is_child ? "child " : "";
        write_counts(f, pfx);
        for (struct kcount *k = g_kcounts; k; k = k->next)
            n++;
        v = calloc((size_t)n + 1, sizeof *v);
        if (v) {
            n = 0;
            for (struct kcount *k = g_kcounts; k; k = k->next)
                v[n++] = k;
            qsort(v, (size_t)n, sizeof *v, cmp_kcount);
            for (i = 0; i < n; i++)
                if (v[i]->n)
                    fprintf(f, "%scupti_delivered %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->n);
            free(v);
        }
        fclose(f);
    }
    if (locked)
        UNLOCK();
}

/* A flush in a forked child of a process that enabled activity: the real libcupti hung there
 * (gpu-facts.md). Say so in the count file at once, then hang until killed. */
static void child_flush_hang(const char *api)
{
    FILE *f;
    fprintf(stderr, "fakecupti: %s in a forked child (pid %d; activity enabled by %d): hanging, as the "
                    "real CUPTI does\n", api, (int)getpid(), (int)g_enable_pid);
    if (g_count_file && (f = fopen(g_count_file, "a")) != NULL) {
        fprintf(f, "cupti_child_flush %d\n", (int)getpid());
        fclose(f);
    }
    for (;;)
        pause();
}

/* ------------------------------------------------------------------------------------ */
/* The driver side                                                                        */

static void on_kernel(const struct fakecuda_kernel_activity *k, void *arg);

/* Finds the fake driver and sets our sink there (once). The driver is used where it is
 * already loaded; else loaded, as the real CUPTI attaches to the driver itself. */
static CUptiResult attach(void)
{
    CUptiResult r = CUPTI_SUCCESS;
    pthread_mutex_lock(&g_attach_mu);
    if (!g_cuda) {
        g_cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
        if (!g_cuda)
            g_cuda = dlopen("libcuda.so.1", RTLD_LAZY);
        if (!g_cuda)
            fprintf(stderr, "fakecupti: cannot load libcuda.so.1: %s\n", dlerror());
    }
    if (g_cuda && !g_set_sink) {
        g_set_sink = (fakecuda_set_activity_sink_t)dlsym(g_cuda, "fakecuda_set_activity_sink");
        if (!g_set_sink)
            fprintf(stderr, "fakecupti: libcuda.so.1 has no fakecuda_set_activity_sink: not the fake driver\n");
    }
    if (!g_set_sink) {
        r = CUPTI_ERROR_NOT_INITIALIZED;
    } else if (!g_attached) {
        g_set_sink(on_kernel, NULL);
        g_attached = 1;
        TRACE("attached to the fake driver");
    }
    pthread_mutex_unlock(&g_attach_mu);
    return r;
}

static void detach(void)
{
    pthread_mutex_lock(&g_attach_mu);
    if (g_attached) {
        g_set_sink(NULL, NULL);
        g_attached = 0;
    }
    pthread_mutex_unlock(&g_attach_mu);
}

/* A driver entry point, or NULL when the driver is not loaded. */
static void *driver_fn(const char *name)
{
    void *h;
    pthread_mutex_lock(&g_attach_mu);
    if (!g_cuda)
        g_cuda = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
    h = g_cuda;
    pthread_mutex_unlock(&g_attach_mu);
    return h ? dlsym(h, name) : NULL;
}

/* ------------------------------------------------------------------------------------ */
/* Records and buffers                                                                    */

static size_t align_pad(const uint8_t *p)
{
    return (size_t)((8 - ((uintptr_t)p & 7)) & 7);
}

/* Whether b has room for n more records of bytes in all. */
static int buf_fits(const struct buf *b, size_t bytes, size_t n)
{
    return b->used + bytes <= b->size && (b->maxrec == 0 || b->nrec + n <= b->maxrec);
}

/* The size of a record of kind, as laid out in a buffer (0: not a kind the fake makes). */
static size_t rec_size(int kind)
{
    switch (kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        return REC_SIZE;
    case CUPTI_ACTIVITY_KIND_DRIVER:
    case CUPTI_ACTIVITY_KIND_RUNTIME:
        return API_SIZE;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        return EXT_SIZE;
    default:
        return 0;
    }
}

static int is_kernel_kind(int kind)
{
    return kind == CUPTI_ACTIVITY_KIND_KERNEL || kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
}

/* The kind of record a kernel of this context makes, or 0 for none. Under the lock. */
static CUpti_ActivityKind record_kind(uint32_t ctx)
{
    int conc = g_enabled[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL], kern = g_enabled[CUPTI_ACTIVITY_KIND_KERNEL];
    int i;
    for (i = 0; i < g_novr; i++)
        if (g_ovr[i].ctx == ctx) {
            if (g_ovr[i].conc >= 0)
                conc = g_ovr[i].conc;
            if (g_ovr[i].kern >= 0)
                kern = g_ovr[i].kern;
        }
    return conc ? CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL : kern ? CUPTI_ACTIVITY_KIND_KERNEL : CUPTI_ACTIVITY_KIND_INVALID;
}

static void drop_record(const char *why)
{
    g_cnt.dropped++;
    g_dropped_unread++;
    TRACE("record dropped: %s", why);
}

static void count_kernel(const char *name)
{
    struct kcount *k;
    for (k = g_kcounts; k; k = k->next)
        if (k->name == name || strcmp(k->name, name) == 0)
            break;
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k)
            return;
        k->name = name;
        k->next = g_kcounts;
        g_kcounts = k;
    }
    k->n++;
}

/* Takes b out of CUPTI's hands for completion to comp: counts it, marks a delivery running.
 * Under the lock; deliver() must follow without it. lost: its records are not delivered. */
static void detach_buf(struct buf *b, int lost)
{
    size_t i, at = align_pad(b->p);
    g_pending -= b->nkern;
    if (lost) {
        g_cnt.lost += b->nkern;
        b->used = 0;
    } else {
        g_cnt.delivered += b->nkern;
        for (i = 0; i < b->nrec; i++) {
            const CUpti_Activity *a = (const CUpti_Activity *)(void *)(b->p + at);
            if (is_kernel_kind(a->kind))
                count_kernel(((const CUpti_ActivityKernel10 *)(const void *)a)->name);
            at += rec_size(a->kind);
        }
    }
    g_delivering++;
}

static void deliver(struct buf *b, CUpti_BuffersCallbackCompleteFunc comp)
{
    TRACE("bufferCompleted(%p, size %zu, valid %zu: %zu records)", (void *)b->p, b->size, b->used, b->nrec);
    if (comp) {
        tl_in_callback++;
        comp(NULL, 0, b->p, b->size, b->used);
        tl_in_callback--;
    }
    free(b);
    LOCK();
    g_cnt.buffers_completed += comp != NULL;
    g_delivering--;
    pthread_cond_broadcast(&g_cv);
    UNLOCK();
}

static void write_record(struct buf *b, CUpti_ActivityKind kind, const struct fakecuda_kernel_activity *k)
{
    CUpti_ActivityKernel10 r;
    memset(&r, 0, sizeof r);
    r.kind = kind;
    r.start = k->start_ns;
    r.end = k->end_ns;
    r.completed = k->end_ns;  /* no child kernels */
    r.deviceId = k->device_id;
    r.contextId = k->context_id;
    r.streamId = k->stream_id;
    r.gridX = k->grid_x;
    r.gridY = k->grid_y;
    r.gridZ = k->grid_z;
    r.blockX = k->block_x;
    r.blockY = k->block_y;
    r.blockZ = k->block_z;
    r.dynamicSharedMemory = k->dynamic_shared_memory;
    r.correlationId = k->correlation_id;
    r.gridId = ++g_grid_id;
    r.name = k->name;
    r.queued = CUPTI_TIMESTAMP_UNKNOWN;
    r.submitted = CUPTI_TIMESTAMP_UNKNOWN;
    r.launchType = k->launch_type;
    r.graphNodeId = k->graph_node_id;
    r.graphId = k->graph_id;
    r.channelType = CUPTI_CHANNEL_TYPE_COMPUTE;
    memcpy(b->p + b->used, &r, REC_SIZE);
    b->used += REC_SIZE;
    b->nrec++;
    b->nkern++;
    g_pending++;
}

/* Whether a launch makes a launch (driver API) record. As the real libcupti 13 does: only with
 * the driver kind enabled (the per-API switches alone record nothing), and its entry point's
 * callback id not switched off since. The fake does not know which entry point launched it:
 * any launch one will do. */
static int api_enabled(void)
{
    static const int cbids[] = { 307, 442, 652, 653, 477, 478, 514, 515 };
    if (tl_rt.on)
        return g_enabled[CUPTI_ACTIVITY_KIND_RUNTIME];
    if (!g_enabled[CUPTI_ACTIVITY_KIND_DRIVER])
        return 0;
    for (size_t i = 0; i < sizeof cbids / sizeof cbids[0]; i++)
        if (!g_api_off[cbids[i]])
            return 1;
    return 0;
}

/* The external id of kind the launch's records carry, if any. */
static int ext_of(int kind, uint64_t *id)
{
    if (tl_rt.on) {
        *id = tl_rt.id[kind];
        return tl_rt.has[kind];
    }
    if (!tl_ext[kind].n)
        return 0;
    *id = tl_ext[kind].id[tl_ext[kind].n - 1];
    return 1;
}

/* The records that precede a launch's first kernel record: an external correlation record
 * per kind with an id pushed on the launching thread, then the launch record. Their bytes and
 * number (0 when the launch makes none, or made them already: a graph's later nodes). */
static size_t launch_extra(const struct fakecuda_kernel_activity *k, size_t *n)
{
    size_t bytes = 0;
    uint64_t id;
    *n = 0;
    if (!api_enabled() || k->correlation_id == tl_last_corr)
        return 0;
    if (g_enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
        for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; kind++)
            if (ext_of(kind, &id)) {
                bytes += EXT_SIZE;
                ++*n;
            }
    ++*n;
    return bytes + API_SIZE;
}

static void write_launch(struct buf *b, const struct fakecuda_kernel_activity *k)
{
    CUpti_ActivityAPI a;
    uint64_t id;
    if (g_enabled[CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION])
        for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; kind++)
            if (ext_of(kind, &id)) {
                CUpti_ActivityExternalCorrelation e;
                memset(&e, 0, sizeof e);
                e.kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
                e.externalKind = (CUpti_ExternalCorrelationKind)kind;
                e.externalId = id;
                e.correlationId = k->correlation_id;
                memcpy(b->p + b->used, &e, sizeof e);
                b->used += EXT_SIZE;
                b->nrec++;
            }
    memset(&a, 0, sizeof a);
    if (tl_rt.on) {
        a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
        a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
    } else {
        a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
        a.cbid = k->graph_id ? 514 : k->launch_type ? 477 : 307;
    }
    a.end = k->start_ns > g_queue_ns ? k->start_ns - g_queue_ns : 0;
    a.start = a.end > g_launch_ns ? a.end - g_launch_ns : 0;
    a.processId = (uint32_t)getpid();
    a.correlationId = k->correlation_id;
    memcpy(b->p + b->used, &a, sizeof a);
    b->used += API_SIZE;
    b->nrec++;
    tl_last_corr = k->correlation_id;
}

/* The fake runtime's launches call this on entry (1) and return (0): see tl_rt. */
static void runtime_api(int enter)
{
    if (!enter) {
        tl_rt.on = 0;
        return;
    }
    for (int kind = 0; kind < CUPTI_EXTERNAL_CORRELATION_KIND_SIZE; kind++) {
        tl_rt.has[kind] = tl_ext[kind].n > 0;
        tl_rt.id[kind] = tl_rt.has[kind] ? tl_ext[kind].id[tl_ext[kind].n - 1] : 0;
    }
    tl_rt.on = 1;
}

/* Tells the fake runtime, if the program has it, to report its launches here. */
__attribute__((constructor)) static void find_runtime(void)
{
    void (**hook)(int) = (void (**)(int))dlsym(RTLD_DEFAULT, "fakecudart_rt_hook");
    if (hook)
        __atomic_store_n(hook, runtime_api, __ATOMIC_RELEASE);
}

/* The driver's sink: one kernel ran. Any thread; the driver holds no lock. */
static void on_kernel(const struct fakecuda_kernel_activity *k, void *arg)
{
    struct buf *done = NULL;
    CUpti_BuffersCallbackCompleteFunc comp = NULL;
    CUpti_ActivityKind kind;
    (void)arg;
    if (k->size < sizeof *k)
        return;
    LOCK();
    kind = record_kind(k->context_id);
    if (kind == CUPTI_ACTIVITY_KIND_INVALID)
        goto out;
    g_cnt.records++;
    if (tl_in_callback) {  /* a kernel launched from a buffer callback: no buffer for it */
        drop_record("kernel launched inside a buffer callback");
        goto out;
    }
    if (!g_req) {
        drop_record("no buffer callbacks registered");
        goto out;
    }
    size_t nextra, extra = launch_extra(k, &nextra);
    for (;;) {
        CUpti_BuffersCallbackRequestFunc req;
        uint8_t *p = NULL;
        size_t size = 0, maxrec = 0;
        uint64_t epoch;
        if (g_max_records && g_pending >= g_max_records) {
            drop_record("FAKECUPTI_MAX_RECORDS records wait for a flush");
            break;
        }
        if (g_cur && !g_cur->nrec && extra && !buf_fits(g_cur, extra + REC_SIZE, nextra + 1)) {
            extra = nextra = 0;  /* a buffer too small for the launch's records: the kernel's */
            continue;
        }
        if (g_cur && !buf_fits(g_cur, extra + REC_SIZE, nextra + 1) && g_cur->nrec) {
            done = g_cur;  /* no room for the launch's records: completed, and a new one */
            g_cur = NULL;
            comp = g_comp;
            detach_buf(done, 0);
            UNLOCK();
            deliver(done, comp);
            LOCK();
            done = NULL;
            continue;
        }
        if (g_cur && buf_fits(g_cur, extra + REC_SIZE, nextra + 1)) {
            if (extra)
                write_launch(g_cur, k);
            write_record(g_cur, kind, k);
            if (!buf_fits(g_cur, REC_SIZE, 1)) {  /* full: completed at once */
                done = g_cur;
                g_cur = NULL;
                comp = g_comp;
                detach_buf(done, 0);
            }
            break;
        }
        if (g_requesting) {  /* another thread is getting the next buffer */
            pthread_cond_wait(&g_cv, &g_mu);
            continue;
        }
        if (!g_req) {
            drop_record("no buffer callbacks registered");
            break;
        }
        g_requesting = 1;
        req = g_req;
        epoch = g_epoch;
        UNLOCK();
        tl_in_callback++;
        req(&p, &size, &maxrec);
        tl_in_callback--;
        TRACE("bufferRequested() = %p, size %zu, maxNumRecords %zu", (void *)p, size, maxrec);
        LOCK();
        g_requesting = 0;
        pthread_cond_broadcast(&g_cv);
        g_cnt.buffers_requested++;
        if (!p || size < align_pad(p) + REC_SIZE || epoch != g_epoch) {
            g_cnt.buffers_refused += !p || size < align_pad(p) + REC_SIZE;
            drop_record(p ? "the buffer is too small" : "bufferRequested gave no buffer");
            if (p) {  /* hand it back, empty */
                done = calloc(1, sizeof *done);
                if (done) {
                    done->p = p;
                    done->size = size;
                    comp = g_comp;
                    detach_buf(done, 0);
                }
            }
            break;
        }
        g_cur = calloc(1, sizeof *g_cur);
        if (!g_cur) {
            drop_record("out of memory");
            break;
        }
        g_cur->p = p;
        g_cur->size = size;
        g_cur->used = align_pad(p);
        g_cur->maxrec = maxrec;
    }
out:
    UNLOCK();
    if (done)
        deliver(done, comp);
}

/* Completes the buffer being filled if it holds records, then waits for completions other
 * threads have started (not from inside a buffer callback). */
static void flush_all(void)
{
    struct buf *done = NULL;
    CUpti_BuffersCallbackCompleteFunc comp = NULL;
    LOCK();
    if (g_cur && g_cur->nrec > 0) {
        done = g_cur;
        g_cur = NULL;
        comp = g_comp;
        detach_buf(done, 0);
    }
    UNLOCK();
    if (done)
        deliver(done, comp);
    LOCK();
    while (g_delivering > 0 && !tl_in_callback)
        pthread_cond_wait(&g_cv, &g_mu);
    UNLOCK();
}

/* ------------------------------------------------------------------------------------ */
/* Version, results, ids                                                                  */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
    ENTER(cuptiGetVersion);
    if (!version)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    *version = CUPTI_API_VERSION;
    return CUPTI_SUCCESS;
}

static CUptiResult result_string(CUptiResult result, const char **str)
{
    size_t i;
    if (!str)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    for (i = 0; i < sizeof g_results / sizeof g_results[0]; i++)
        if (g_results[i].code == result) {
            *str = g_results[i].name;
            return CUPTI_SUCCESS;
        }
    *str = NULL;
    return ret(CUPTI_ERROR_INVALID_PARAMETER);
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
    ENTER(cuptiGetResultString);
    return result_string(result, str);
}

/* The fake has no separate descriptions: the message is the name. */
EXPORT CUptiResult cuptiGetErrorMessage(CUptiResult result, const char **str)
{
    ENTER(cuptiGetErrorMessage);
    return result_string(result, str);
}

EXPORT CUptiResult cuptiGetLastError(void)
{
    CUptiResult r = tl_last_error;
    ENTER(cuptiGetLastError);
    tl_last_error = CUPTI_SUCCESS;
    return r;
}

/* Real time (CLOCK_MONOTONIC, ns): records carry the fake's simulated stream clocks, which
 * no host clock matches. */
EXPORT CUptiResult cuptiGetTimestamp(uint64_t *timestamp)
{
    struct timespec ts;
    ENTER(cuptiGetTimestamp);
    if (!timestamp)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
    return CUPTI_SUCCESS;
}

typedef CUresult (*ctx_id_fn)(CUcontext, unsigned long long *);
typedef CUresult (*ctx_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);
typedef CUresult (*ctx_dev_fn)(CUdevice *);
typedef CUresult (*stream_id_fn)(CUstream, unsigned long long *);
typedef CUresult (*stream_ctx_fn)(CUstream, CUcontext *);

static CUptiResult context_id(CUcontext ctx, uint32_t *id)
{
    ctx_id_fn get = (ctx_id_fn)driver_fn("cuCtxGetId");
    unsigned long long v;
    if (!get)
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (!ctx || get(ctx, &v) != CUDA_SUCCESS)
        return CUPTI_ERROR_INVALID_CONTEXT;
    *id = (uint32_t)v;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetContextId(CUcontext context, uint32_t *contextId)
{
    ENTER(cuptiGetContextId);
    if (!contextId)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    return ret(context_id(context, contextId));
}

/* The id the records carry for this stream (cuStreamGetId, _ptsz for the per-thread stream),
 * asked with context current when it is not NULL, which the stream must belong to. */
static CUptiResult stream_id(CUcontext ctx, CUstream stream, int per_thread, uint32_t *id)
{
    stream_id_fn get = (stream_id_fn)driver_fn(per_thread ? "cuStreamGetId_ptsz" : "cuStreamGetId");
    stream_ctx_fn owner = (stream_ctx_fn)driver_fn("cuStreamGetCtx");
    ctx_fn push = (ctx_fn)driver_fn("cuCtxPushCurrent_v2");
    ctx_pop_fn pop = (ctx_pop_fn)driver_fn("cuCtxPopCurrent_v2");
    unsigned long long v;
    CUcontext c;
    CUresult e;
    if (!id)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (!get || !owner || !push || !pop)
        return CUPTI_ERROR_NOT_INITIALIZED;
    if (ctx && stream && (owner(stream, &c) != CUDA_SUCCESS || c != ctx))
        return CUPTI_ERROR_INVALID_STREAM;
    if (ctx && push(ctx) != CUDA_SUCCESS)
        return CUPTI_ERROR_INVALID_CONTEXT;
    e = get(stream, &v);
    if (ctx)
        pop(&c);
    if (e != CUDA_SUCCESS)
        return CUPTI_ERROR_INVALID_STREAM;
    *id = (uint32_t)v;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetStreamId(CUcontext context, CUstream stream, uint32_t *streamId)
{
    ENTER(cuptiGetStreamId);
    return ret(stream_id(context, stream, 0, streamId));
}

EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext context, CUstream stream, uint8_t perThreadStream,
                                      uint32_t *streamId)
{
    ENTER(cuptiGetStreamIdEx);
    return ret(stream_id(context, stream, perThreadStream != 0, streamId));
}

EXPORT CUptiResult cuptiGetDeviceId(CUcontext context, uint32_t *deviceId)
{
    ctx_dev_fn get = (ctx_dev_fn)driver_fn("cuCtxGetDevice");
    ctx_fn push = (ctx_fn)driver_fn("cuCtxPushCurrent_v2");
    ctx_pop_fn pop = (ctx_pop_fn)driver_fn("cuCtxPopCurrent_v2");
    CUdevice d;
    CUcontext c;
    CUresult e;
    ENTER(cuptiGetDeviceId);
    if (!deviceId)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!get || !push || !pop)
        return ret(CUPTI_ERROR_NOT_INITIALIZED);
    if (context && push(context) != CUDA_SUCCESS)
        return ret(CUPTI_ERROR_INVALID_DEVICE);
    e = get(&d);
    if (context)
        pop(&c);
    if (e != CUDA_SUCCESS)
        return ret(CUPTI_ERROR_INVALID_DEVICE);
    *deviceId = (uint32_t)d;
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------------------------ */
/* Activity API                                                                           */

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc funcBufferRequested,
                                                  CUpti_BuffersCallbackCompleteFunc funcBufferCompleted)
{
    ENTER(cuptiActivityRegisterCallbacks);
    if (!funcBufferRequested || !funcBufferCompleted)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    LOCK();
    /* One pair for the process: buffers already handed out are completed to this one. */
    g_req = funcBufferRequested;
    g_comp = funcBufferCompleted;
    g_cnt.registrations++;
    UNLOCK();
    TRACE("cuptiActivityRegisterCallbacks(%p, %p)", (void *)(uintptr_t)funcBufferRequested,
          (void *)(uintptr_t)funcBufferCompleted);
    return CUPTI_SUCCESS;
}

static CUptiResult kind_check(CUpti_ActivityKind kind)
{
    return kind > CUPTI_ACTIVITY_KIND_INVALID && kind < CUPTI_ACTIVITY_KIND_COUNT ? CUPTI_SUCCESS
                                                                                : CUPTI_ERROR_INVALID_KIND;
}

static void enabled_by_me(void)
{
    if (!g_enable_pid)
        g_enable_pid = getpid();
}

/* Kernel kinds make records; every other kind is accepted and makes none. */
EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    CUptiResult r;
    ENTER(cuptiActivityEnable);
    r = kind_check(kind);
    if (!r && is_kernel_kind(kind))
        r = attach();
    if (r)
        return ret(r);
    LOCK();
    g_enabled[kind] = 1;
    if (kind == CUPTI_ACTIVITY_KIND_DRIVER) /* every entry point on: earlier switches undone */
        memset(g_api_off, 0, sizeof g_api_off);
    enabled_by_me();
    UNLOCK();
    TRACE("cuptiActivityEnable(%d)", (int)kind);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    CUptiResult r;
    ENTER(cuptiActivityDisable);
    r = kind_check(kind);
    if (r)
        return ret(r);
    LOCK();
    g_enabled[kind] = 0;
    UNLOCK();
    TRACE("cuptiActivityDisable(%d)", (int)kind);
    return CUPTI_SUCCESS;
}

/* Per-context settings that supersede the global ones (kernel kinds; others are accepted). */
static CUptiResult context_kind(CUcontext context, CUpti_ActivityKind kind, int on)
{
    CUptiResult r = kind_check(kind);
    uint32_t id;
    int i;
    if (r || !is_kernel_kind(kind))
        return r;
    if (on && (r = attach()) != CUPTI_SUCCESS)
        return r;
    r = context_id(context, &id);
    if (r)
        return r;
    LOCK();
    for (i = 0; i < g_novr && g_ovr[i].ctx != id; i++)
        ;
    if (i == g_novr) {
        if (g_novr == MAX_CTX_OVERRIDES) {
            UNLOCK();
            return CUPTI_ERROR_MAX_LIMIT_REACHED;
        }
        g_ovr[i].ctx = id;
        g_ovr[i].conc = g_ovr[i].kern = -1;
        g_novr++;
    }
    if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
        g_ovr[i].conc = (int8_t)on;
    else
        g_ovr[i].kern = (int8_t)on;
    if (on)
        enabled_by_me();
    UNLOCK();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableContext(CUcontext context, CUpti_ActivityKind kind)
{
    ENTER(cuptiActivityEnableContext);
    return ret(context_kind(context, kind, 1));
}

EXPORT CUptiResult cuptiActivityDisableContext(CUcontext context, CUpti_ActivityKind kind)
{
    ENTER(cuptiActivityDisableContext);
    return ret(context_kind(context, kind, 0));
}

/* Switches one driver entry point's records on or off: it filters what the driver kind
 * records, and records nothing by itself (see api_enabled). */
EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    ENTER(cuptiActivityEnableDriverApi);
    if (cbid >= MAX_CBID)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    LOCK();
    g_api_off[cbid] = enable == 0;
    UNLOCK();
    return CUPTI_SUCCESS;
}

/* Accepted; a runtime launch's record is made whenever the runtime kind is enabled. */
EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    ENTER(cuptiActivityEnableRuntimeApi);
    (void)enable;
    return cbid >= MAX_CBID ? ret(CUPTI_ERROR_INVALID_PARAMETER) : CUPTI_SUCCESS;
}

/* The calling thread's stack of external correlation ids, per kind. */
EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t id)
{
    ENTER(cuptiActivityPushExternalCorrelationId);
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (tl_ext[kind].n == EXT_DEPTH)
        return ret(CUPTI_ERROR_MAX_LIMIT_REACHED);
    tl_ext[kind].id[tl_ext[kind].n++] = id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind, uint64_t *lastId)
{
    ENTER(cuptiActivityPopExternalCorrelationId);
    if (kind <= CUPTI_EXTERNAL_CORRELATION_KIND_INVALID || kind >= CUPTI_EXTERNAL_CORRELATION_KIND_SIZE)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    if (!tl_ext[kind].n)
        return ret(CUPTI_ERROR_QUEUE_EMPTY);
    tl_ext[kind].n--;
    if (lastId)
        *lastId = tl_ext[kind].id[tl_ext[kind].n];
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t validBufferSizeBytes, CUpti_Activity **record)
{
    uint8_t *pos, *end;
    ENTER(cuptiActivityGetNextRecord);
    if (!buffer || !record)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    end = buffer + validBufferSizeBytes;
    if (!*record) {
        pos = buffer + align_pad(buffer);
    } else {
        if (!rec_size((*record)->kind))
            return ret(CUPTI_ERROR_INVALID_KIND);
        pos = (uint8_t *)*record + rec_size((*record)->kind);
    }
    if (pos >= end)
        return ret(CUPTI_ERROR_MAX_LIMIT_REACHED);
    if (pos + sizeof(CUpti_Activity) > end || !rec_size(((CUpti_Activity *)(void *)pos)->kind) ||
        pos + rec_size(((CUpti_Activity *)(void *)pos)->kind) > end)
        return ret(CUPTI_ERROR_INVALID_KIND);  /* incomplete or not ours */
    *record = (CUpti_Activity *)(void *)pos;
    return CUPTI_SUCCESS;
}

/* Every record is complete when it is made (the simulated times are known at launch), so the
 * default flush delivers as much as a forced one. */
static CUptiResult flush(const char *api, uint32_t flag)
{
    int registered;
    LOCK();
    registered = g_req != NULL;
    UNLOCK();
    if (!registered)
        return CUPTI_ERROR_INVALID_OPERATION;
    if (g_enable_pid && getpid() != g_enable_pid)
        child_flush_hang(api);
    LOCK();
    g_cnt.flushes++;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
        g_cnt.flushes_forced++;
    UNLOCK();
    TRACE("%s(%u)", api, flag);
    flush_all();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    ENTER(cuptiActivityFlushAll);
    return ret(flush("cuptiActivityFlushAll", flag));
}

EXPORT CUptiResult cuptiActivityFlush(CUcontext context, uint32_t streamId, uint32_t flag)
{
    (void)context;
    (void)streamId;
    ENTER(cuptiActivityFlush);
    return ret(flush("cuptiActivityFlush", flag));
}

/* Kept, no thread: a periodic flush delivers only full buffers, which the fake completes at
 * once anyway. */
EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t time)
{
    ENTER(cuptiActivityFlushPeriod);
    LOCK();
    g_flush_period_ms = time;
    UNLOCK();
    TRACE("cuptiActivityFlushPeriod(%u): kept, no flusher thread", g_flush_period_ms);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext context, uint32_t streamId, size_t *dropped)
{
    (void)context;
    (void)streamId;
    ENTER(cuptiActivityGetNumDroppedRecords);
    if (!dropped)
        return ret(CUPTI_ERROR_INVALID_PARAMETER);
    LOCK();
    *dropped = g_dropped_unread;  /* since the last call: reset, as documented */
    g_dropped_unread = 0;
    UNLOCK();
    return CUPTI_SUCCESS;
}

/* Detaches: no kind enabled, no callbacks, no subscriber, no sink in the driver. Records not
 * flushed before are lost: their buffer is completed empty (validSize 0) so the client gets
 * its memory back. */
EXPORT CUptiResult cuptiFinalize(void)
{
    struct buf *done = NULL;
    CUpti_BuffersCallbackCompleteFunc comp = NULL;
    ENTER(cuptiFinalize);
    LOCK();
    g_epoch++;
    g_cnt.finalizes++;
    if (g_cur) {
        done = g_cur;
        g_cur = NULL;
        comp = g_comp;
        detach_buf(done, 1);
    }
    memset(g_enabled, 0, sizeof g_enabled);
    g_novr = 0;
    g_req = NULL;
    g_comp = NULL;
    g_sub.active = 0;
    g_enable_pid = 0;
    UNLOCK();
    if (done)
        deliver(done, comp);
    detach();
    TRACE("cuptiFinalize()");
    return CUPTI_SUCCESS;
}

/* ------------------------------------------------------------------------------------ */
/* Callback API: one subscriber; its callbacks are never called                           */

static CUptiResult subscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata,
                             CUpti_SubscriberParams *params)
{
    const char *holder = NULL;
    if (!subscriber)
        return CUPTI_ERROR_INVALID_PARAMETER;
    if (params && params->structSize == 0)
        return CUPTI_ERROR_INVALID_PARAMETER;
    LOCK();
    if (g_other_sub)
        holder = g_other_sub;
    else if (g_sub.active)
        holder = g_sub.name;
    if (holder) {
        g_cnt.subscribe_refused++;
        if (params && params->oldSubscriberName && params->oldSubscriberSize > 0)
            snprintf(params->oldSubscriberName, params->oldSubscriberSize, "%s", holder);
        UNLOCK();
        TRACE("cuptiSubscribe refused: %s holds the subscriber slot", holder);
        return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
    }
    g_sub.active = 1;
    g_sub.cb = callback;
    g_sub.userdata = userdata;
    memset(g_sub.domains, 0, sizeof g_sub.domains);
    snprintf(g_sub.name, sizeof g_sub.name, "CUPTI for %.53s",
             params && params->subscriberName ? params->subscriberName : "an unnamed subscriber");
    g_cnt.subscribers++;
    UNLOCK();
    *subscriber = (CUpti_SubscriberHandle)(void *)&g_sub;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback, void *userdata)
{
    ENTER(cuptiSubscribe);
    return ret(subscribe(subscriber, callback, userdata, NULL));
}

EXPORT CUptiResult cuptiSubscribe_v2(CUpti_SubscriberHandle *subscriber, CUpti_CallbackFunc callback,
                                     void *userdata, CUpti_SubscriberParams *pParams)
{
    ENTER(cuptiSubscribe_v2);
    return ret(subscribe(subscriber, callback, userdata, pParams));
}

/* Is s the live subscriber? Under the lock. */
static int sub_ok(CUpti_SubscriberHandle s)
{
    return s == (CUpti_SubscriberHandle)(void *)&g_sub && g_sub.active;
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle subscriber)
{
    CUptiResult r = CUPTI_SUCCESS;
    ENTER(cuptiUnsubscribe);
    LOCK();
    if (!sub_ok(subscriber))
        r = CUPTI_ERROR_INVALID_PARAMETER;
    else
        g_sub.active = 0;
    UNLOCK();
    return ret(r);
}

static CUptiResult enable_domain(CUpti_SubscriberHandle s, CUpti_CallbackDomain domain, uint32_t enable)
{
    CUptiResult r = CUPTI_SUCCESS;
    LOCK();
    if (!sub_ok(s) || domain <= CUPTI_CB_DOMAIN_INVALID || domain >= CUPTI_CB_DOMAIN_SIZE)
        r = CUPTI_ERROR_INVALID_PARAMETER;
    else
        g_sub.domains[domain] = enable != 0;
    UNLOCK();
    return r;
}

EXPORT CUptiResult cuptiEnableCallback(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                       CUpti_CallbackDomain domain, CUpti_CallbackId cbid)
{
    (void)cbid;
    ENTER(cuptiEnableCallback);
    return ret(enable_domain(subscriber, domain, enable));
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle subscriber,
                                     CUpti_CallbackDomain domain)
{
    ENTER(cuptiEnableDomain);
    return ret(enable_domain(subscriber, domain, enable));
}

EXPORT CUptiResult cuptiEnableAllDomains(uint32_t enable, CUpti_SubscriberHandle subscriber)
{
    CUptiResult r = CUPTI_SUCCESS;
    int d;
    ENTER(cuptiEnableAllDomains);
    for (d = CUPTI_CB_DOMAIN_INVALID + 1; !r && d < CUPTI_CB_DOMAIN_SIZE; d++)
        r = enable_domain(subscriber, (CUpti_CallbackDomain)d, enable);
    return ret(r);
}
