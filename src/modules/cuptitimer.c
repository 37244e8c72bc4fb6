/* cuptitimer.c - the CUPTI timer (cuptitimer.h): CUPTI activity records of kernels, in a
 * bounded pool of buffers. The module (its moments, its part of the report): cuptireport.c. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION, KTIME_CUDA_LIBDIR */
#include "cuptitimer.h"

#include <dlfcn.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cupti.h>

#include "dl.h"
#include "log.h"
#include "mpmc.h"
#include "state.h"

/* CUPTI's records, by kernel: the drain thread's (or the exit path's once it stopped). */
static struct hw records;

_Atomic int cuptitimer_off;
_Atomic uint64_t *cuptitimer_unrecorded;

/* Between the duty cycle's switches (drain thread) and a hand-over (the client's thread). */
static pthread_mutex_t switch_lock = PTHREAD_MUTEX_INITIALIZER;

/* 256 KB a buffer: about 1300 kernel records; KTIME_CUPTI_BUFFER_MB of them in all. CUPTI
 * also hands a buffer back every FLUSH_PERIOD_MS, full or not. */
#define BUFFER_BYTES (256u * 1024u)
#define FLUSH_PERIOD_MS 100
/* At exit, after the duty cycle switched records off: no record for this long ends the wait. */
#define STALL_MS 50

/* The external correlation kind of ktime's ids: Kineto uses UNKNOWN, CUSTOM0 and CUSTOM1. */
#define KTIME_EXT_KIND CUPTI_EXTERNAL_CORRELATION_KIND_CUSTOM2

/* The launch entry points whose calls CUPTI describes in launch (API) records: each kernel
 * record is joined with its launch by correlation id. A launch through the runtime has the
 * runtime call's record and id, and its driver call none; a launch straight through the
 * driver has the driver call's. */
static const CUpti_CallbackId driver_launch_cbids[] = {
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchKernelEx_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel,
    CUPTI_DRIVER_TRACE_CBID_cuLaunchCooperativeKernel_ptsz,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch,
    CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch_ptsz,
    0,
};
static const CUpti_CallbackId runtime_launch_cbids[] = {
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_v3020,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunch_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_ptsz_v7000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernel_ptsz_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchCooperativeKernelMultiDevice_v9000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_ptsz_v10000,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_v11060,
    CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernelExC_ptsz_v11060,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_v13000,
    CUPTI_RUNTIME_TRACE_CBID___cudaLaunchKernel_ptsz_v13000,
    0,
};

/* One API layer's records: its activity kind, its launch entry points (0-ended), and the
 * callback ids it has. */
struct api_layer {
    CUpti_ActivityKind kind;
    const CUpti_CallbackId *launches;
    uint32_t ncbids;
};
static const struct api_layer api_layers[] = {
    { CUPTI_ACTIVITY_KIND_DRIVER, driver_launch_cbids, CUPTI_DRIVER_TRACE_CBID_SIZE },
    { CUPTI_ACTIVITY_KIND_RUNTIME, runtime_launch_cbids, CUPTI_RUNTIME_TRACE_CBID_SIZE },
};
#define NLAYERS (sizeof api_layers / sizeof api_layers[0])

static bool is_launch_cbid(const CUpti_CallbackId *launches, uint32_t cbid)
{
    for (; *launches; launches++)
        if (*launches == cbid)
            return true;
    return false;
}

#define CUPTI_FUNCTIONS(X)                                                                 \
    X(ActivityRegisterCallbacks,                                                           \
      (CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc))               \
    X(ActivityEnable, (CUpti_ActivityKind))                                                \
    X(ActivityDisable, (CUpti_ActivityKind))                                               \
    X(ActivityFlushAll, (uint32_t))                                                        \
    X(ActivityGetNextRecord, (uint8_t *, size_t, CUpti_Activity **))                       \
    X(ActivityGetNumDroppedRecords, (CUcontext, uint32_t, size_t *))                       \
    X(GetResultString, (CUptiResult, const char **))

static struct {
#define X(name, args) CUptiResult(*name) args;
    CUPTI_FUNCTIONS(X)
#undef X
    CUptiResult (*ActivityFlushPeriod)(uint32_t); /* CUDA 11.1 and newer; optional */
    CUptiResult (*GetContextId)(CUcontext, uint32_t *);                 /* optional */
    CUptiResult (*GetStreamIdEx)(CUcontext, CUstream, uint8_t, uint32_t *); /* optional */
    /* Optional (CUDA 12.x and newer): launch records of the launch entry points alone, and
     * the external correlation ids that carry a launch's range to its records. */
    CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
    CUptiResult (*PushExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t);
    CUptiResult (*PopExternalCorrelationId)(CUpti_ExternalCorrelationKind, uint64_t *);
    _Atomic int joined;      /* launch and external correlation records are on */
    bool copies;             /* copy and set records are on (KTIME_BUSY) */
    char library[PATH_MAX];
    uint8_t **bufs;          /* nbufs buffers, allocated on first request */
    size_t *valid;           /* bytes of records in each completed buffer */
    uint32_t nbufs;
    struct mpmc free_q;      /* ids of buffers CUPTI may have */
    struct mpmc done_q;      /* ids of buffers CUPTI completed, for the drain */
    _Atomic int active;      /* records are coming to ktime */
    _Atomic int foreign;     /* another client showed up */
    _Atomic int started;     /* activity tracing was enabled for ktime */
    _Atomic uint64_t dropped, refused, parsed, completed, foreign_buffers, switches;
    char note[192];
    _Atomic(const char *) note_ptr;
    pid_t pid;               /* the process that enabled CUPTI: a child never flushes */
} lib; /* libcupti's functions, and ktime's buffers and what it knows of CUPTI */

static void set_note(const char *fmt, const char *arg)
{
    snprintf(lib.note, sizeof lib.note, fmt, arg);
    atomic_store(&lib.note_ptr, lib.note);
}

static const char *result_string(CUptiResult r)
{
    const char *s = NULL;

    if (lib.GetResultString && lib.GetResultString(r, &s) == CUPTI_SUCCESS && s)
        return s;
    return "unknown CUPTI error";
}

/* ---- finding libcupti ---- */

static bool try_open(const char *path, int flags)
{
    void *h = dlopen(path, flags);

    if (!h)
        return false;
#define X(name, args) lib.name = (CUptiResult(*) args)dl_sym(h, "cupti" #name);
    CUPTI_FUNCTIONS(X)
#undef X
    lib.ActivityFlushPeriod = (CUptiResult(*)(uint32_t))dl_sym(h, "cuptiActivityFlushPeriod");
    lib.GetContextId = (CUptiResult(*)(CUcontext, uint32_t *))dl_sym(h, "cuptiGetContextId");
    lib.GetStreamIdEx =
        (CUptiResult(*)(CUcontext, CUstream, uint8_t, uint32_t *))dl_sym(h, "cuptiGetStreamIdEx");
    lib.ActivityEnableDriverApi =
        (CUptiResult(*)(CUpti_CallbackId, uint8_t))dl_sym(h, "cuptiActivityEnableDriverApi");
    lib.ActivityEnableRuntimeApi =
        (CUptiResult(*)(CUpti_CallbackId, uint8_t))dl_sym(h, "cuptiActivityEnableRuntimeApi");
    lib.PushExternalCorrelationId = (CUptiResult(*)(CUpti_ExternalCorrelationKind, uint64_t))
        dl_sym(h, "cuptiActivityPushExternalCorrelationId");
    lib.PopExternalCorrelationId = (CUptiResult(*)(CUpti_ExternalCorrelationKind, uint64_t *))
        dl_sym(h, "cuptiActivityPopExternalCorrelationId");
    bool ok = true;
#define X(name, args) ok = ok && lib.name;
    CUPTI_FUNCTIONS(X)
#undef X
    if (!ok) {
        log_debug("%s has not every CUPTI activity function ktime uses", path);
        dlclose(h);
        return false;
    }
    Dl_info info;
    if (dladdr((void *)lib.ActivityEnable, &info) && info.dli_fname)
        snprintf(lib.library, sizeof lib.library, "%s", info.dli_fname);
    else
        snprintf(lib.library, sizeof lib.library, "%s", path);
    return true;
}

/* The folder of the libcudart the process loaded, for the pip wheels' layout. */
static bool cudart_dir(char *out, size_t size)
{
    static const char *const names[] = { "libcudart.so.13", "libcudart.so.12" };
    Dl_info info;

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        void *h = dlopen(names[i], RTLD_LAZY | RTLD_NOLOAD);
        void *f = h ? dl_sym(h, "cudaGetDeviceCount") : NULL;
        if (h)
            dlclose(h);
        if (f && dladdr(f, &info) && info.dli_fname) {
            snprintf(out, size, "%s", info.dli_fname);
            dirname(out);
            return true;
        }
    }
    return false;
}

/* In this order: KTIME_CUPTI_LIB; a libcupti the process already loaded (PyTorch links one);
 * the toolkit ktime was built with; the sonames of CUDA 13 and 12 on the loader's path; the
 * NVIDIA pip wheels beside the process's libcudart. */
static bool load_cupti(void)
{
    static const char *const sonames[] = { "libcupti.so.13", "libcupti.so.12", "libcupti.so" };
    char path[PATH_MAX + 64], dir[PATH_MAX];

    if (kt.cfg.cupti_lib) {
        if (try_open(kt.cfg.cupti_lib, RTLD_NOW | RTLD_LOCAL))
            return true;
        log_warn("KTIME_CUPTI_LIB='%s' could not be loaded (%s); looking elsewhere",
                 kt.cfg.cupti_lib, dlerror());
    }
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
        if (try_open(sonames[i], RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD))
            return true;
    snprintf(path, sizeof path, "%s/libcupti.so.13", KTIME_CUDA_LIBDIR);
    if (try_open(path, RTLD_NOW | RTLD_LOCAL))
        return true;
    for (size_t i = 0; i < sizeof sonames / sizeof sonames[0]; i++)
        if (try_open(sonames[i], RTLD_NOW | RTLD_LOCAL))
            return true;
    if (cudart_dir(dir, sizeof dir)) {
        /* nvidia/cu13/lib holds both; older wheels: nvidia/cuda_runtime/lib beside
         * nvidia/cuda_cupti/lib. */
        snprintf(path, sizeof path, "%s/libcupti.so.13", dir);
        if (try_open(path, RTLD_NOW | RTLD_LOCAL))
            return true;
        snprintf(path, sizeof path, "%s/../../cuda_cupti/lib/libcupti.so.12", dir);
        if (try_open(path, RTLD_NOW | RTLD_LOCAL))
            return true;
    }
    return false;
}

/* ---- buffers: CUPTI's threads ask and give back; the drain parses ---- */

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    uint32_t id;

    *buffer = NULL;
    *size = 0;
    *max_records = 0;
    if (!mpmc_pop(&lib.free_q, &id)) {
        atomic_fetch_add(&lib.refused, 1); /* CUPTI drops what had no room, and counts it */
        return;
    }
    if (!lib.bufs[id] && !(lib.bufs[id] = aligned_alloc(ACTIVITY_RECORD_ALIGNMENT, BUFFER_BYTES))) {
        mpmc_push(&lib.free_q, id);
        atomic_fetch_add(&lib.refused, 1);
        return;
    }
    *buffer = lib.bufs[id];
    *size = BUFFER_BYTES;
}

static int buffer_id(const uint8_t *buffer)
{
    for (uint32_t i = 0; i < lib.nbufs; i++)
        if (lib.bufs[i] == buffer)
            return (int)i;
    return -1;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer,
                                      size_t size, size_t valid)
{
    size_t dropped = 0;
    int id = buffer_id(buffer);

    (void)size;
    if (lib.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&lib.dropped, dropped);
    atomic_fetch_add(&lib.completed, 1);
    if (id < 0) {
        atomic_fetch_add(&lib.foreign_buffers, 1);
        return; /* not one of ktime's: never parsed, never freed */
    }
    lib.valid[id] = valid;
    mpmc_push(&lib.done_q, (uint32_t)id);
}

/* Records CUPTI dropped since the last buffer came back: at the end of ktime's time with
 * CUPTI, drops after the last completed buffer (no buffer free, and none given back since)
 * would otherwise go uncounted. */
static void count_dropped(void)
{
    size_t dropped = 0;

    if (lib.ActivityGetNumDroppedRecords(NULL, 0, &dropped) == CUPTI_SUCCESS && dropped)
        atomic_fetch_add(&lib.dropped, dropped);
}

static void parse(uint8_t *buffer, size_t valid)
{
    CUpti_Activity *rec = NULL;

    /* The records are joined with their launches from the first buffer on (the drain's). */
    if (atomic_load_explicit(&lib.joined, memory_order_relaxed) && !records.join &&
        hw_join_start(&records, kt.cfg.capture != CAPTURE_ALL) != 0)
        log_debug("CUPTI: out of memory for the launches' table; records go unjoined");

    while (lib.ActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        switch (rec->kind) {
        case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
        case CUPTI_ACTIVITY_KIND_KERNEL: {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            struct kshape sh = { { (uint32_t)k->gridX, (uint32_t)k->gridY, (uint32_t)k->gridZ },
                                 { (uint32_t)k->blockX, (uint32_t)k->blockY, (uint32_t)k->blockZ },
                                 (uint32_t)k->dynamicSharedMemory };
            hw_add_corr(&records, k->name, (int)k->deviceId, k->contextId, k->streamId,
                        k->correlationId, k->start, k->end, k->graphId != 0, &sh);
            break;
        }
        case CUPTI_ACTIVITY_KIND_DRIVER:
        case CUPTI_ACTIVITY_KIND_RUNTIME: {
            const CUpti_ActivityAPI *a = (const CUpti_ActivityAPI *)rec;
            /* Only launches: a libcupti's newer entry points stay on, unknown to ktime. */
            if (is_launch_cbid(rec->kind == CUPTI_ACTIVITY_KIND_DRIVER ? driver_launch_cbids
                                                                       : runtime_launch_cbids,
                               a->cbid))
                hw_api(&records, a->correlationId, a->start, a->end);
            break;
        }
        case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION: {
            const CUpti_ActivityExternalCorrelation *e =
                (const CUpti_ActivityExternalCorrelation *)rec;
            if (e->externalKind == KTIME_EXT_KIND)
                hw_ext(&records, e->correlationId, e->externalId);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMCPY: {
            const CUpti_ActivityMemcpy6 *c = (const CUpti_ActivityMemcpy6 *)rec;
            hw_copy(&records, (int)c->deviceId, c->streamId, c->start, c->end);
            break;
        }
        case CUPTI_ACTIVITY_KIND_MEMSET: {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            hw_copy(&records, (int)m->deviceId, m->streamId, m->start, m->end);
            break;
        }
        default:
            break;
        }
    }
    hw_settle(&records, false);
}

__thread bool cuptitimer_in_runtime __attribute__((tls_model("initial-exec")));

bool cuptitimer_runtime_before(void)
{
    if (atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON ||
        !cuptitimer_range_before())
        return false;
    cuptitimer_in_runtime = true;
    return true;
}

void cuptitimer_runtime_after(void)
{
    cuptitimer_in_runtime = false;
    cuptitimer_pop();
}

bool cuptitimer_push(uint32_t range)
{
    return atomic_load_explicit(&lib.joined, memory_order_relaxed) &&
           lib.PushExternalCorrelationId(KTIME_EXT_KIND, HW_EXT_TAG | range) == CUPTI_SUCCESS;
}

void cuptitimer_pop(void)
{
    uint64_t last;

    lib.PopExternalCorrelationId(KTIME_EXT_KIND, &last);
}

int cuptitimer_own_stream(CUcontext ctx, CUstream s, const char *name)
{
    uint32_t cid, sid;

    if (!atomic_load(&lib.started) || !lib.GetContextId || !lib.GetStreamIdEx ||
        lib.GetContextId(ctx, &cid) != CUPTI_SUCCESS ||
        lib.GetStreamIdEx(ctx, s, 0, &sid) != CUPTI_SUCCESS)
        return -1;
    return hw_own(&records, cid, sid, name);
}

void cuptitimer_drain(void)
{
    uint32_t id;

    if (!lib.nbufs)
        return; /* CUPTI never started: no queues */
    while (mpmc_pop(&lib.done_q, &id)) {
        parse(lib.bufs[id], lib.valid[id]);
        atomic_fetch_add_explicit(&lib.parsed, 1, memory_order_relaxed);
        mpmc_push(&lib.free_q, id);
    }
}

/* ---- start, hand-over, exit ---- */

static bool alloc_pool(void)
{
    uint32_t n = (uint32_t)((size_t)kt.cfg.cupti_buffer_mb * 1024u * 1024u / BUFFER_BYTES);

    if (n < 2)
        n = 2;
    lib.bufs = calloc(n, sizeof *lib.bufs);
    lib.valid = calloc(n, sizeof *lib.valid);
    if (!lib.bufs || !lib.valid || mpmc_init(&lib.free_q, n) != 0 ||
        mpmc_init(&lib.done_q, n) != 0)
        return false;
    lib.nbufs = n;
    for (uint32_t i = 0; i < n; i++)
        mpmc_push(&lib.free_q, i);
    return true;
}

static CUptiResult enable_api(const struct api_layer *l, CUpti_CallbackId cbid, uint8_t on)
{
    return (l->kind == CUPTI_ACTIVITY_KIND_DRIVER ? lib.ActivityEnableDriverApi
                                                  : lib.ActivityEnableRuntimeApi)(cbid, on);
}

/* Turns a layer's launch records on (true when CUPTI took it all) or off. Its kind alone
 * would record every call of the layer; the per-API switches alone record nothing: the kind
 * first, then every other entry point off. Callback ids a libcupti does not know are refused,
 * and nothing is lost. Off, every entry point is left on, as CUPTI starts. */
static bool layer_records(const struct api_layer *l, bool on)
{
    bool ok = !on || lib.ActivityEnable(l->kind) == CUPTI_SUCCESS;

    if (!on)
        lib.ActivityDisable(l->kind);
    for (uint32_t cbid = 1; ok && cbid < l->ncbids; cbid++) {
        bool launch = is_launch_cbid(l->launches, cbid);
        if (!on || !launch)
            enable_api(l, cbid, !on);
    }
    for (const CUpti_CallbackId *c = l->launches; ok && on && *c; c++)
        ok = enable_api(l, *c, 1) == CUPTI_SUCCESS;
    return ok;
}

/* Launch and external correlation records (each kernel's launch call, queue time and range).
 * What CUPTI refuses is left out, said at KTIME_LOG=info: kernels are timed all the same. */
static void enable_launch_records(void)
{
    bool ok = lib.ActivityEnableDriverApi && lib.ActivityEnableRuntimeApi &&
              lib.PushExternalCorrelationId && lib.PopExternalCorrelationId;

    for (size_t i = 0; ok && i < NLAYERS; i++)
        ok = layer_records(&api_layers[i], true);
    ok = ok && lib.ActivityEnable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION) == CUPTI_SUCCESS;
    if (ok) {
        atomic_store(&lib.joined, 1);
        return;
    }
    if (lib.ActivityEnableDriverApi && lib.ActivityEnableRuntimeApi)
        for (size_t i = 0; i < NLAYERS; i++)
            layer_records(&api_layers[i], false);
    log_info("CUPTI: no launch records (%s): no launch or queue times, and ranges are not told "
             "apart", lib.ActivityEnableRuntimeApi ? "refused" : "libcupti too old");
}

/* The launch records, unless KTIME_LAUNCH_TIMES=0 (the default under KTIME_BUDGET) leaves them
 * off and no capture range needs them: CUPTI traces every launch call once they are on, which
 * costs each launch of the program. With KTIME_BUSY, copy and set records (the GPU's busy
 * time). */
static void enable_extras(void)
{
    if (kt.cfg.launch_times || kt.cfg.capture != CAPTURE_ALL)
        enable_launch_records();
    else
        log_info("CUPTI: no launch records (KTIME_LAUNCH_TIMES=0): no launch or queue times, "
                 "and ranges are not told apart");
    if (kt.cfg.busy != BUSY_OFF)
        lib.copies = lib.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMCPY) == CUPTI_SUCCESS &&
                    lib.ActivityEnable(CUPTI_ACTIVITY_KIND_MEMSET) == CUPTI_SUCCESS;
}

/* Undoes enable_extras(): another client takes CUPTI over. */
static void disable_extras(void)
{
    if (atomic_exchange(&lib.joined, 0)) {
        lib.ActivityDisable(CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION);
        for (size_t i = 0; i < NLAYERS; i++)
            layer_records(&api_layers[i], false);
    }
    if (lib.copies) {
        lib.ActivityDisable(CUPTI_ACTIVITY_KIND_MEMCPY);
        lib.ActivityDisable(CUPTI_ACTIVITY_KIND_MEMSET);
        lib.copies = false;
    }
}

void cuptitimer_start(void)
{
    static _Atomic int tried;
    CUptiResult r;
    const char *inj = getenv("CUDA_INJECTION64_PATH");

    if (kt.cfg.timer == TIMER_EVENTS ||
        atomic_load_explicit(&kt.phase, memory_order_acquire) != PHASE_ON ||
        atomic_exchange(&tried, 1))
        return;
    pthread_mutex_lock(&kt.setup_lock);
    if (inj && *inj) {
        set_note("a CUDA tool is injected (CUDA_INJECTION64_PATH=%s) and owns CUPTI; timed "
                 "with events", inj);
    } else if (atomic_load(&lib.foreign)) {
        set_note("another CUPTI client (%s) was there first; timed with events",
                 "a profiler or the program itself");
    } else if (!load_cupti()) {
        set_note("no libcupti could be loaded (set KTIME_CUPTI_LIB%s); timed with events", "");
    } else if (!alloc_pool()) {
        set_note("out of memory for CUPTI's buffers%s; timed with events", "");
    } else if ((r = lib.ActivityRegisterCallbacks(buffer_requested, buffer_completed)) !=
                   CUPTI_SUCCESS ||
               (r = lib.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS) {
        set_note("CUPTI refused activity tracing (%s); timed with events", result_string(r));
    } else {
        if (lib.ActivityFlushPeriod)
            lib.ActivityFlushPeriod(FLUSH_PERIOD_MS);
        enable_extras();
        lib.pid = getpid();
        atomic_store(&lib.started, 1);
        atomic_store(&lib.active, 1);
        kt.drain.records = cuptitimer_drain;
        if (!kt.drain.started && drain_start(&kt.drain) != 0)
            log_warn("could not start the drain thread; CUPTI's records are read at exit");
        atomic_store(&kt.timing, kt.cfg.timer);
        log_info("timing kernels with CUPTI activity records (%s)", lib.library);
    }
    if (!atomic_load(&lib.active)) {
        atomic_store(&kt.timing, TIMER_EVENTS);
        log_warn("KTIME_TIMER=%s: %s", timer_kind_name(kt.cfg.timer), lib.note);
    }
    pthread_mutex_unlock(&kt.setup_lock);
}

void cuptitimer_foreign(const char *what)
{
    if (atomic_exchange(&lib.foreign, 1))
        return;
    if (!atomic_load(&lib.active) || getpid() != lib.pid) {
        log_debug("another CUPTI client calls %s", what);
        return;
    }
    /* New launches go to events from here; what CUPTI holds of ktime's records comes back
     * to ktime's callbacks before the client's replace them. The duty cycle switches no more. */
    pthread_mutex_lock(&switch_lock);
    atomic_store(&kt.timing, TIMER_EVENTS);
    atomic_store(&cuptitimer_off, 0);
    uint64_t before = atomic_load(&lib.completed);
    /* A plain flush first: it hands back the records of completed kernels with their
     * timestamps; a forced flush alone may hand them back without (docs/design.md, "Facts
     * the code rests on"). */
    lib.ActivityFlushAll(0);
    CUptiResult fr = lib.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    count_dropped();
    CUptiResult dr = lib.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    disable_extras();
    log_debug("CUPTI hand-over on %s: flush %s, %llu buffers back; disable %s", what,
              result_string(fr), (unsigned long long)(atomic_load(&lib.completed) - before),
              result_string(dr));
    atomic_store(&lib.active, 0);
    pthread_mutex_unlock(&switch_lock);
    set_note("another CUPTI client (%s) took CUPTI over; later launches were timed with "
             "events", what);
    log_info("%s", lib.note);
}

bool cuptitimer_switch(bool on)
{
    CUptiResult r = CUPTI_SUCCESS;
    bool ok = false;

    pthread_mutex_lock(&switch_lock);
    if (atomic_load(&lib.active) && !atomic_load(&lib.foreign) && getpid() == lib.pid &&
        atomic_load(&kt.timing) == TIMER_CUPTI) {
        if (on && atomic_load(&cuptitimer_off)) {
            atomic_store(&cuptitimer_off, 0);
            if ((r = lib.ActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) != CUPTI_SUCCESS)
                atomic_store(&cuptitimer_off, 1);
        } else if (!on && !atomic_load(&cuptitimer_off)) {
            if ((r = lib.ActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)) == CUPTI_SUCCESS) {
                atomic_store(&cuptitimer_off, 1);
                atomic_fetch_add(&lib.switches, 1);
            }
        }
        ok = r == CUPTI_SUCCESS;
    }
    pthread_mutex_unlock(&switch_lock);
    if (r != CUPTI_SUCCESS)
        log_debug("CUPTI: switching kernel records %s: %s", on ? "on" : "off", result_string(r));
    return ok;
}

uint64_t cuptitimer_switches(void)
{
    return atomic_load(&lib.switches);
}

void cuptitimer_finish(long wait_ms, uint64_t expected)
{
    struct timespec ms = { 0, 1000000 };
    double waited = 0, t0 = drain_now_ms();

    if (!lib.nbufs)
        return;
    if (atomic_load(&lib.active) && getpid() == lib.pid) {
        /* Records come once their kernels have completed; the program may exit while its
         * last kernels still run. */
        log_debug("exit: waiting for CUPTI's records of %llu launches (%llu so far)",
                  (unsigned long long)expected,
                  (unsigned long long)(records.records - records.in_graph));
        /* After the duty cycle switched records off, the records of launches made just before
         * a switch may never come: once none has come for STALL_MS, the rest count as
         * incomplete rather than hold the exit for the whole wait. */
        uint64_t got = UINT64_MAX;
        double still = 0;
        for (;;) {
            lib.ActivityFlushAll(0);
            count_dropped(); /* a dropped record will not come */
            cuptitimer_drain();
            uint64_t now = records.records - records.in_graph + atomic_load(&lib.dropped);
            if (now != got) {
                got = now;
                still = waited;
            }
            if (now >= expected || waited >= wait_ms ||
                (atomic_load(&lib.switches) && waited - still >= STALL_MS))
                break;
            nanosleep(&ms, NULL);
            waited = drain_now_ms() - t0;
        }
        log_debug("exit: %.0f ms for CUPTI's records; forced flush", waited);
        lib.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
        count_dropped();
        /* Left enabled: the process is ending, and cuptiActivityDisable from an exit handler
         * can crash inside libcupti under a statically linked cudart. */
        atomic_store(&lib.active, 0);
    }
    cuptitimer_drain();
    hw_settle(&records, true); /* nothing more comes: records still waiting for their launch */
    log_debug("CUPTI: %llu launch records, %llu kernel records without theirs",
              (unsigned long long)records.launch_records, (unsigned long long)records.unjoined);
    log_debug("CUPTI: %llu buffers completed (%llu not ktime's), %llu parsed, %llu kernel "
              "records", (unsigned long long)atomic_load(&lib.completed),
              (unsigned long long)atomic_load(&lib.foreign_buffers),
              (unsigned long long)atomic_load(&lib.parsed), (unsigned long long)records.records);
    if (log_level >= LOG_DEBUG) {
        struct hw_kernel *k, *tmp;
        int n = 0;
        HASH_ITER(hh, records.byname, k, tmp) {
            if (n++ == 8)
                break;
            log_debug("CUPTI: %.60s: %llu records, %llu warmup, %llu in graphs, %llu without "
                      "a valid end", k->name, (unsigned long long)k->records,
                      (unsigned long long)k->warmup, (unsigned long long)k->in_graph,
                      (unsigned long long)k->bad);
        }
    }
}

void cuptitimer_info(struct cuptitimer_info *out)
{
    out->library = lib.library[0] ? lib.library : NULL;
    out->started = atomic_load(&lib.started);
    out->note = atomic_load(&lib.note_ptr);
    out->dropped = atomic_load(&lib.dropped);
    out->refused = atomic_load(&lib.refused);
    out->buffers = atomic_load(&lib.parsed);
}

struct hw *cuptitimer_records(void)
{
    return &records;
}
