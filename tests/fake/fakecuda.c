/* fakecuda.c - a fake CUDA driver (libcuda.so.1) whose kernels take known simulated time.
 *
 * Built as a shared object with soname libcuda.so.1 so that ktime's end-to-end tests run
 * without a GPU. It exports real C symbols with the names the real driver exports and
 * mirrors the driver behaviours that matter to an interposer (see docs in
 * tests/fake/README.md):
 *
 *   - module images are C strings "name=ns[,ns...];name2=ns": each kernel takes exactly that
 *     many simulated nanoseconds (a comma list cycles per launch of that kernel);
 *   - every stream has a simulated clock (ns): a launch advances it by the kernel's duration,
 *     cuEventRecord stamps the event with it, so an event pair around a launch measures the
 *     kernel's duration exactly. Each stream's clock starts at its own distant base, so an
 *     event pair split over two streams gives an absurd interval, not a plausible one;
 *   - events complete at once, or FAKECUDA_COMPLETE_DELAY_US of real time after recording;
 *     after a kernel whose name starts with "hang" nothing later on that stream completes,
 *     and synchronisation on it fails at once with CUDA_ERROR_LAUNCH_TIMEOUT;
 *   - stream capture, graphs, cuGetProcAddress(_v2) with version / per-thread resolution
 *     returning the fake's own exported addresses, CUfunction vs CUkernel name queries;
 *   - an atexit handler registered by cuInit marks the driver deinitialized, like cudart's
 *     teardown does (FAKECUDA_ATEXIT_DEINIT=0 turns that off);
 *   - an independent count of launches and event operations is appended to
 *     FAKECUDA_COUNT_FILE at exit;
 *   - FAKECUDA_HANG_QUERY_THREAD=NAME: cuEventQuery on a thread of that name never returns;
 *   - every kernel that runs is reported, with its simulated start and end, to the sink set
 *     with fakecuda_set_activity_sink (fakecuda_activity.h): the fake CUPTI, fakecupti.c,
 *     turns them into activity records.
 *
 * Thread safety: one mutex guards all state; nothing sleeps while holding it.
 */
#define _GNU_SOURCE
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>

#include "fakecuda_activity.h"
#include "fakeutil.h"

#include <dlfcn.h>
#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define FAKE_DRIVER_VERSION 13000
#define FAKE_MAX_DEVICES 8
#define FAKE_CTX_STACK 32
#define FAKE_TL_PTDS 32

#define EXPORT __attribute__((visibility("default")))

enum {
    MAGIC_CTX = 0x43747831u,
    MAGIC_STREAM = 0x53747231u,
    MAGIC_EVENT = 0x45767431u,
    MAGIC_MODULE = 0x4d6f6431u,
    MAGIC_FUNC = 0x46756e31u,
    MAGIC_LIB = 0x4c696231u,
    MAGIC_KERNEL = 0x4b726e31u,
    MAGIC_GRAPH = 0x47726631u,
    MAGIC_EXEC = 0x45786331u,
    MAGIC_NODE = 0x4e6f6431u,
    MAGIC_DEAD = 0xdeadbeefu
};

/* ------------------------------------------------------------------------------------ */
/* State                                                                                 */

struct kname {                 /* independent per-name counters (survive unloads) */
    char *name;
    uint64_t launch, ok, failed, captured, graph_runs;
    struct kname *next;
};

struct kdef {                  /* one kernel of one loaded image */
    char *name;                /* scribbled over on unload: names die with their module */
    uint64_t *durs;
    int ndurs;
    uint64_t next;             /* launches executed so far: index into the duration cycle */
    struct kname *cnt;
};

struct ctx;
struct image;

struct fobj {                  /* a CUfunction (MAGIC_FUNC) or CUkernel (MAGIC_KERNEL) */
    uint32_t magic;
    struct kdef *k;
    struct ctx *ctx;           /* owning context for module functions, NULL otherwise */
    uint32_t gen;
    struct image *img;
    int idx;
};

struct image {                 /* a module (MAGIC_MODULE) or library (MAGIC_LIB) */
    uint32_t magic;
    struct ctx *ctx;
    uint32_t gen;
    int nk;
    struct kdef *ks;
    struct fobj *funcs;        /* CUfunction handles */
    struct fobj *kerns;        /* CUkernel handles (libraries only) */
};

struct kdims {                 /* a kernel's launch configuration */
    unsigned gx, gy, gz, bx, by, bz;
    unsigned shmem;            /* dynamic shared memory, bytes */
};

struct gnode {                 /* a CUgraphNode */
    uint32_t magic;
    struct kdef *k;            /* NULL for an empty node */
    struct kdims d;            /* a kernel node's launch configuration */
    uint64_t id;               /* graphNodeId of its activity records */
};

struct graph {                 /* a CUgraph (MAGIC_GRAPH) or CUgraphExec (MAGIC_EXEC) */
    uint32_t magic;
    int n, cap;
    struct gnode **nodes;
    uint32_t id;
    uint32_t src_id;           /* an exec: the id of the graph it was instantiated from */
};

enum { CAP_NONE = 0, CAP_ACTIVE = 1, CAP_INVALIDATED = 2 };
enum { SK_CREATED = 0, SK_LEGACY = 1, SK_PTDS = 2 };

struct stream {
    uint32_t magic;
    int kind;
    struct ctx *ctx;
    uint32_t gen;
    unsigned flags;
    int priority;
    uint64_t id;
    uint64_t clock_ns;         /* simulated time */
    uint64_t busy_until;       /* real time (ns, CLOCK_MONOTONIC) the last work completes */
    int hung;
    volatile uint32_t *wait_addr; /* cuStreamWaitValue32: later work waits for *addr == val */
    uint32_t wait_val;
    int cap_status;
    int cap_mode;
    uint64_t cap_id;
    pthread_t cap_thread;
    struct graph *cap_graph;
    struct stream *all_next;   /* list of every stream ever made */
};

struct ctx {
    uint32_t magic;
    int dev;
    int primary;
    int refcount;              /* primary contexts only */
    int active;
    int destroyed;
    uint32_t gen;              /* bumped when the context's resources are destroyed */
    unsigned flags;
    uint64_t id;
    struct stream *legacy;
};

enum { EV_NEVER = 0, EV_RECORDED = 1, EV_CAPTURED = 2 };

struct event {
    uint32_t magic;
    struct ctx *ctx;
    uint32_t gen;
    unsigned flags;
    int state;
    uint64_t stamp_ns;
    uint64_t complete_at;      /* real time */
    int hung;
    volatile uint32_t *gate_addr; /* recorded behind a stream wait: done only once it passes */
    uint32_t gate_val;
    struct stream *cap_stream;
    uint64_t cap_id;
};

static pthread_mutex_t g_lock = PTHREAD_MUTEX_INITIALIZER;
static int g_initialized;
static int g_deinit;
static int g_fork_broken;
static int g_is_child;
static int g_ndev = 1;
static uint64_t g_delay_ns;
static uint64_t g_idle_ns;     /* FAKECUDA_IDLE_NS: each kernel starts this long after the last */
static uint64_t g_delay_records; /* 0: every event record is delayed; N: the first N only */
static uint64_t g_records;
static int g_atexit_deinit = 1;
static uint64_t g_hostalloc_fails;  /* FAKECUDA_HOSTALLOC_FAILS: cuMemHostAlloc calls left to fail */
static int g_fork_child_fails;
static int g_trace;
static int g_dlsym_strict;
static int g_dlsym_default = -1;  /* results of cuInit's own dlsym checks: 1 ok, 0 wrong */
static int g_dlsym_next = -1;
static char *g_count_file;
static char g_hang_query_thread[16]; /* FAKECUDA_HANG_QUERY_THREAD: cuEventQuery never returns there */
static struct ctx *g_primary[FAKE_MAX_DEVICES];
static struct stream *g_streams;
static uint64_t g_next_id = 1;
static uint64_t g_next_cap_id = 1;
static struct kname *g_knames;
/* Activity reporting (fakecuda_activity.h). Ids of their own, so that streams keep theirs. */
static fakecuda_activity_fn g_sink;
static void *g_sink_arg;
static int g_sink_calls;          /* sink calls running now (atomic) */
static uint32_t g_next_corr;      /* correlation ids: one per launch call */
static uint32_t g_next_graph_id;
static uint64_t g_next_node_id;
static __thread int tl_in_sink;

static struct {
    uint64_t graph_launch, event_record, event_record_failed, event_create, event_destroy;
    uint64_t launch_invalid, graph_kernel_runs;
    uint64_t stream_wait, lazy_blocked, lazy_timeout;
    uint64_t elapsed_v1, elapsed_v2;  /* cuEventElapsedTime calls by ABI */
    uint64_t event_query_app;         /* cuEventQuery from threads not named "ktime-..." */
    uint64_t profiler_start, profiler_stop; /* cuProfilerStart / cuProfilerStop that succeeded */
    uint64_t mem_alloc, mem_alloc_bytes;    /* cuMemAlloc calls that succeeded, bytes */
    uint64_t memset32, memset32_bytes;      /* cuMemsetD32Async(_ptsz) that ran, bytes */
    uint64_t memset32_captured;             /* ... that went into a capture */
    /* Memory operations through the copy and set entry points (not ktime's flush, which calls
     * cuMemsetD32Async, counted above): calls that ran and their bytes, by kind (enum
     * fake_copy_kind); into a capture; synchronous ones made while their stream was held by
     * a closed gate (a real GPU would never finish them). */
    uint64_t copy[6], copy_bytes[6], copy_captured, copy_sync_gated;
} g_cnt;

static __thread int tl_capture_mode = CU_STREAM_CAPTURE_MODE_GLOBAL; /* cuThreadExchangeStreamCaptureMode */
static __thread struct ctx *tl_stack[FAKE_CTX_STACK];
static __thread int tl_depth;
static __thread struct { struct ctx *c; uint32_t gen; struct stream *s; } tl_ptds[FAKE_TL_PTDS];
static __thread int tl_nptds;

#define LOCK() pthread_mutex_lock(&g_lock)
#define UNLOCK() pthread_mutex_unlock(&g_lock)

#define TRACE(...) do { if (g_trace) { fprintf(stderr, "fakecuda: " __VA_ARGS__); fputc('\n', stderr); } } while (0)

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void sleep_until(uint64_t t)
{
    struct timespec ts;
    ts.tv_sec = (time_t)(t / 1000000000ull);
    ts.tv_nsec = (long)(t % 1000000000ull);
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

static uint64_t env_u64(const char *name, uint64_t dflt, uint64_t max)
{
    return fake_env_u64("fakecuda", name, dflt, max);
}

/* ------------------------------------------------------------------------------------ */
/* Lifecycle: constructor, fork, exit                                                     */

static void fork_prepare(void) { LOCK(); }
static void fork_parent(void) { UNLOCK(); }
static void fork_child(void)
{
    pthread_mutex_init(&g_lock, NULL);
    g_is_child = 1;
    g_sink_calls = 0;  /* the threads that were in the sink are not in the child */
    memset(&g_cnt, 0, sizeof g_cnt);
    for (struct kname *n = g_knames; n; n = n->next)
        n->launch = n->ok = n->failed = n->captured = n->graph_runs = 0;
    if (g_fork_child_fails && g_initialized)
        g_fork_broken = 1;
}

__attribute__((constructor)) static void fake_ctor(void)
{
    const char *cf;
    g_ndev = (int)env_u64("FAKECUDA_DEVICES", 1, FAKE_MAX_DEVICES);
    g_delay_ns = env_u64("FAKECUDA_COMPLETE_DELAY_US", 0, 3600ull * 1000000ull) * 1000ull;
    g_idle_ns = env_u64("FAKECUDA_IDLE_NS", 0, 1000000000ull);
    g_delay_records = env_u64("FAKECUDA_COMPLETE_DELAY_RECORDS", 0, UINT64_MAX);
    g_atexit_deinit = (int)env_u64("FAKECUDA_ATEXIT_DEINIT", 1, 1);
    g_fork_child_fails = (int)env_u64("FAKECUDA_FORK_CHILD_FAILS", 0, 1);
    g_trace = (int)env_u64("FAKECUDA_TRACE", 0, 1);
    g_dlsym_strict = (int)env_u64("FAKECUDA_DLSYM_STRICT", 0, 1);
    g_hostalloc_fails = env_u64("FAKECUDA_HOSTALLOC_FAILS", 0, UINT64_MAX);
    cf = getenv("FAKECUDA_COUNT_FILE");
    if (cf && *cf)
        g_count_file = strdup(cf);
    cf = getenv("FAKECUDA_HANG_QUERY_THREAD");
    if (cf && *cf)
        snprintf(g_hang_query_thread, sizeof g_hang_query_thread, "%s", cf);
    pthread_atfork(fork_prepare, fork_parent, fork_child);
}

static int cmp_kname(const void *a, const void *b)
{
    return strcmp((*(struct kname *const *)a)->name, (*(struct kname *const *)b)->name);
}

__attribute__((destructor)) static void fake_dtor(void)
{
    FILE *f;
    const char *pfx;
    int locked = 0, n = 0, i;
    struct kname **v;
    if (!g_count_file)
        return;
    locked = fake_lock_at_exit(&g_lock);
    f = fopen(g_count_file, "a");
    if (f) {
        pfx = g_is_child ? "child " : "";
        for (struct kname *k = g_knames; k; k = k->next)
            n++;
        v = calloc((size_t)n + 1, sizeof *v);
        n = 0;
        for (struct kname *k = g_knames; k && v; k = k->next)
            v[n++] = k;
        if (v)
            qsort(v, (size_t)n, sizeof *v, cmp_kname);
        for (i = 0; v && i < n; i++) {
            if (v[i]->launch == 0 && v[i]->graph_runs == 0)
                continue;  /* loaded but never launched */
            fprintf(f, "%slaunch %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->launch);
            fprintf(f, "%slaunch_ok %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->ok);
            fprintf(f, "%slaunch_failed %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->failed);
            fprintf(f, "%slaunch_captured %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->captured);
            fprintf(f, "%sgraph_kernel %s %" PRIu64 "\n", pfx, v[i]->name, v[i]->graph_runs);
        }
        free(v);
        fprintf(f, "%slaunch_invalid %" PRIu64 "\n", pfx, g_cnt.launch_invalid);
        fprintf(f, "%sgraph_launch %" PRIu64 "\n", pfx, g_cnt.graph_launch);
        fprintf(f, "%sevent_record %" PRIu64 "\n", pfx, g_cnt.event_record);
        fprintf(f, "%sevent_record_failed %" PRIu64 "\n", pfx, g_cnt.event_record_failed);
        fprintf(f, "%sevent_create %" PRIu64 "\n", pfx, g_cnt.event_create);
        fprintf(f, "%sevent_destroy %" PRIu64 "\n", pfx, g_cnt.event_destroy);
        fprintf(f, "%sstream_wait %" PRIu64 "\n", pfx, g_cnt.stream_wait);
        fprintf(f, "%sevent_query_app %" PRIu64 "\n", pfx, g_cnt.event_query_app);
        fprintf(f, "%slazy_blocked %" PRIu64 "\n", pfx, g_cnt.lazy_blocked);
        fprintf(f, "%slazy_timeout %" PRIu64 "\n", pfx, g_cnt.lazy_timeout);
        fprintf(f, "%sevent_elapsed_v1 %" PRIu64 "\n", pfx, g_cnt.elapsed_v1);
        fprintf(f, "%sevent_elapsed_v2 %" PRIu64 "\n", pfx, g_cnt.elapsed_v2);
        fprintf(f, "%sprofiler_start %" PRIu64 "\n", pfx, g_cnt.profiler_start);
        fprintf(f, "%smem_alloc %" PRIu64 "\n", pfx, g_cnt.mem_alloc);
        fprintf(f, "%smem_alloc_bytes %" PRIu64 "\n", pfx, g_cnt.mem_alloc_bytes);
        fprintf(f, "%smemset32 %" PRIu64 "\n", pfx, g_cnt.memset32);
        fprintf(f, "%smemset32_bytes %" PRIu64 "\n", pfx, g_cnt.memset32_bytes);
        fprintf(f, "%smemset32_captured %" PRIu64 "\n", pfx, g_cnt.memset32_captured);
        for (int k = 0; k < 6; k++) {
            static const char *const kn[6] = { "htod", "dtoh", "dtod", "htoh", "peer", "memset" };
            fprintf(f, "%scopy_%s %" PRIu64 "\n", pfx, kn[k], g_cnt.copy[k]);
            fprintf(f, "%scopy_%s_bytes %" PRIu64 "\n", pfx, kn[k], g_cnt.copy_bytes[k]);
        }
        fprintf(f, "%scopy_captured %" PRIu64 "\n", pfx, g_cnt.copy_captured);
        fprintf(f, "%scopy_sync_gated %" PRIu64 "\n", pfx, g_cnt.copy_sync_gated);
        fprintf(f, "%sprofiler_stop %" PRIu64 "\n", pfx, g_cnt.profiler_stop);
        if (g_dlsym_default >= 0)
            fprintf(f, "%sdlsym_default %s\n", pfx, g_dlsym_default ? "ok" : "wrong");
        if (g_dlsym_next >= 0)
            fprintf(f, "%sdlsym_next %s\n", pfx, g_dlsym_next ? "ok" : "wrong");
        fclose(f);
    }
    if (locked)
        UNLOCK();
}

static void fake_atexit_deinit(void)
{
    __atomic_store_n(&g_deinit, 1, __ATOMIC_SEQ_CST);
}

static CUresult init_state(void)
{
    if (__atomic_load_n(&g_fork_broken, __ATOMIC_RELAXED))
        return CUDA_ERROR_NOT_INITIALIZED;
    if (__atomic_load_n(&g_deinit, __ATOMIC_RELAXED))
        return CUDA_ERROR_DEINITIALIZED;
    if (!__atomic_load_n(&g_initialized, __ATOMIC_ACQUIRE))
        return CUDA_ERROR_NOT_INITIALIZED;
    return CUDA_SUCCESS;
}

#define CHECK_INIT() do { CUresult e_ = init_state(); if (e_ != CUDA_SUCCESS) return e_; } while (0)

/* Defines an entry point and its per-thread-default-stream twin NAME_ptsz from one body, an
 * expression of the parameters and `ptsz` (0 in NAME, 1 in NAME_ptsz), so the two cannot
 * drift apart. Both check initialisation first, like every entry point; the symbols stay two
 * distinct functions, as in the real driver (tools tell them apart by address). */
#define PTSZ_PAIR(name, params, ...) \
    EXPORT CUresult name params { const int ptsz = 0; (void)ptsz; CHECK_INIT(); return __VA_ARGS__; } \
    EXPORT CUresult name##_ptsz params { const int ptsz = 1; (void)ptsz; CHECK_INIT(); return __VA_ARGS__; }

/* Defines an entry point and its NAME_v2 with the same parameters and one body (the versions
 * differ in the real driver's ABI history, not in what this fake does): two functions. */
#define V2_PAIR(name, params, ...) \
    EXPORT CUresult name params { CHECK_INIT(); return __VA_ARGS__; } \
    EXPORT CUresult name##_v2 params { CHECK_INIT(); return __VA_ARGS__; }

/* Every object the fake ever handed out, so a garbage handle gives an error, not a crash.
 * Objects are never freed (destroy marks them dead), so a stale handle stays detectable. */
static uintptr_t *g_hs;
static size_t g_hcap, g_hn;

static size_t h_slot(uintptr_t p, size_t cap)
{
    return (size_t)(((uint64_t)(p >> 3) * 0x9E3779B97F4A7C15ull) >> 17) & (cap - 1);
}

static int h_add(const void *obj)
{
    uintptr_t p = (uintptr_t)obj;
    size_t i;
    if ((g_hn + 1) * 2 > g_hcap) {
        size_t nc = g_hcap ? g_hcap * 2 : 1024, j;
        uintptr_t *nh = calloc(nc, sizeof *nh);
        if (!nh)
            return -1;
        for (j = 0; j < g_hcap; j++)
            if (g_hs[j]) {
                size_t k = h_slot(g_hs[j], nc);
                while (nh[k])
                    k = (k + 1) & (nc - 1);
                nh[k] = g_hs[j];
            }
        free(g_hs);
        g_hs = nh;
        g_hcap = nc;
    }
    i = h_slot(p, g_hcap);
    while (g_hs[i] && g_hs[i] != p)
        i = (i + 1) & (g_hcap - 1);
    if (!g_hs[i]) {
        g_hs[i] = p;
        g_hn++;
    }
    return 0;
}

static int h_has(const void *obj)
{
    uintptr_t p = (uintptr_t)obj;
    size_t i;
    if (!p || !g_hcap)
        return 0;
    i = h_slot(p, g_hcap);
    while (g_hs[i]) {
        if (g_hs[i] == p)
            return 1;
        i = (i + 1) & (g_hcap - 1);
    }
    return 0;
}

/* Is p a live object of this kind? (Every object starts with its magic.) */
static int is_obj(const void *p, uint32_t magic)
{
    return h_has(p) && *(const uint32_t *)p == magic;
}

static int is_fn(const void *p)
{
    return h_has(p) && (*(const uint32_t *)p == MAGIC_FUNC || *(const uint32_t *)p == MAGIC_KERNEL);
}

/* ------------------------------------------------------------------------------------ */
/* Helpers (all called with g_lock held)                                                 */

static struct stream *new_stream(struct ctx *c, int kind, unsigned flags, int prio)
{
    struct stream *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->magic = MAGIC_STREAM;
    if (h_add(s)) {
        free(s);
        return NULL;
    }
    s->kind = kind;
    s->ctx = c;
    s->gen = c->gen;
    s->flags = flags;
    s->priority = prio;
    s->id = g_next_id++;
    /* Distinct distant bases: events of different streams never give plausible intervals. */
    s->clock_ns = s->id << 40;
    s->all_next = g_streams;
    g_streams = s;
    return s;
}

static struct ctx *new_ctx(int dev, int primary, unsigned flags)
{
    struct ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->magic = MAGIC_CTX;
    if (h_add(c)) {
        free(c);
        return NULL;
    }
    c->dev = dev;
    c->primary = primary;
    c->active = !primary;
    c->flags = flags;
    c->id = g_next_id++;
    c->gen = 1;
    c->legacy = new_stream(c, SK_LEGACY, 0, 0);
    if (!c->legacy) {
        free(c);
        return NULL;
    }
    return c;
}

static int ctx_usable(const struct ctx *c)
{
    return is_obj(c, MAGIC_CTX) && !c->destroyed && c->active;
}

static struct ctx *cur_ctx(void)
{
    return tl_depth > 0 ? tl_stack[tl_depth - 1] : NULL;
}

/* Current context, or an error: none (INVALID_CONTEXT) or unusable. */
static CUresult need_ctx(struct ctx **out)
{
    struct ctx *c = cur_ctx();
    if (!c || !ctx_usable(c))
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = c;
    return CUDA_SUCCESS;
}

/* Bump a context's generation: every stream, event, module of the old generation dies. */
static void ctx_reset_resources(struct ctx *c)
{
    struct stream *s;
    c->gen++;
    s = new_stream(c, SK_LEGACY, 0, 0);
    if (s)
        c->legacy = s;
}

static struct stream *ptds_stream(struct ctx *c)
{
    int i;
    struct stream *s;
    for (i = 0; i < tl_nptds; i++)
        if (tl_ptds[i].c == c && tl_ptds[i].gen == c->gen)
            return tl_ptds[i].s;
    s = new_stream(c, SK_PTDS, 0, 0);
    if (!s)
        return NULL;
    if (tl_nptds < FAKE_TL_PTDS) {
        i = tl_nptds++;
    } else {
        for (i = 0; i < FAKE_TL_PTDS; i++)  /* reuse a dead entry if any */
            if (tl_ptds[i].gen != tl_ptds[i].c->gen)
                break;
        if (i == FAKE_TL_PTDS)
            i = 0;
    }
    tl_ptds[i].c = c;
    tl_ptds[i].gen = c->gen;
    tl_ptds[i].s = s;
    return s;
}

/* Resolve a stream handle. NULL is the legacy stream for ordinary entry points and the
 * calling thread's per-thread stream for _ptsz ones; 0x1 / 0x2 are explicit. */
static CUresult resolve_stream(CUstream h, int ptsz, struct stream **out)
{
    struct stream *s;
    struct ctx *c;
    CUresult e;
    if (h == NULL || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD) {
        e = need_ctx(&c);
        if (e)
            return e;
        if (h == CU_STREAM_LEGACY || (h == NULL && !ptsz))
            s = c->legacy;
        else
            s = ptds_stream(c);
        if (!s)
            return CUDA_ERROR_OUT_OF_MEMORY;
        *out = s;
        return CUDA_SUCCESS;
    }
    s = (struct stream *)h;
    if (!is_obj(s, MAGIC_STREAM) || s->kind != SK_CREATED)
        return CUDA_ERROR_INVALID_HANDLE;
    if (s->ctx->destroyed || s->gen != s->ctx->gen)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (!s->ctx->active)
        return CUDA_ERROR_INVALID_CONTEXT;
    *out = s;
    return CUDA_SUCCESS;
}

static int stream_alive(const struct stream *s)
{
    return s->magic == MAGIC_STREAM && !s->ctx->destroyed && s->gen == s->ctx->gen;
}

/* Using the legacy stream while a blocking stream of its context captures is an implicit
 * dependency on the capture: the driver fails with 906 and invalidates those captures. */
static int legacy_conflict(struct stream *s, int invalidate)
{
    int hit = 0;
    if (s->kind != SK_LEGACY)
        return 0;
    for (struct stream *o = g_streams; o; o = o->all_next) {
        if (o == s || o->ctx != s->ctx || !stream_alive(o) || o->cap_status != CAP_ACTIVE)
            continue;
        if (o->kind == SK_CREATED && (o->flags & CU_STREAM_NON_BLOCKING))
            continue;
        hit = 1;
        if (invalidate)
            o->cap_status = CAP_INVALIDATED;
    }
    return hit;
}

/* "Potentially unsafe" calls (cuEventQuery, cuEventSynchronize) under the capture mode rules
 * of cuThreadExchangeStreamCaptureMode: a thread not in RELAXED mode is prohibited from them
 * while it has a non-relaxed capture of its own going on, and, in GLOBAL mode (the default),
 * while any other thread has a GLOBAL-mode capture going on. A prohibited call fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED ("operation not permitted when stream is capturing")
 * and invalidates the captures that prohibit it (PyTorch's NCCL watchdog hit this with
 * torch.cuda.graphs, pytorch#104487 / #148594). Under the lock. */
static CUresult unsafe_call_check(void)
{
    CUresult e = CUDA_SUCCESS;
    if (tl_capture_mode == CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_SUCCESS;
    for (struct stream *o = g_streams; o; o = o->all_next) {
        int mine;
        if (!stream_alive(o) || o->cap_status != CAP_ACTIVE)
            continue;
        mine = pthread_equal(o->cap_thread, pthread_self());
        if ((mine && o->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED) ||
            (!mine && tl_capture_mode == CU_STREAM_CAPTURE_MODE_GLOBAL &&
             o->cap_mode == CU_STREAM_CAPTURE_MODE_GLOBAL)) {
            o->cap_status = CAP_INVALIDATED;
            e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        }
    }
    return e;
}

EXPORT CUresult cuThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    int m;
    CHECK_INIT();
    if (!mode)
        return CUDA_ERROR_INVALID_VALUE;
    m = (int)*mode;
    if (m < CU_STREAM_CAPTURE_MODE_GLOBAL || m > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    *mode = (CUstreamCaptureMode)tl_capture_mode;
    tl_capture_mode = m;
    return CUDA_SUCCESS;
}

static CUresult graph_add_node(struct graph *g, struct gnode *n)
{
    if (g->n == g->cap) {
        int nc = g->cap ? g->cap * 2 : 8;
        struct gnode **nn = realloc(g->nodes, (size_t)nc * sizeof *nn);
        if (!nn)
            return CUDA_ERROR_OUT_OF_MEMORY;
        g->nodes = nn;
        g->cap = nc;
    }
    g->nodes[g->n++] = n;
    return CUDA_SUCCESS;
}

/* Appends a new node running k with configuration d (k NULL: an empty node, d NULL); *out
 * gets it when out is not NULL. */
static CUresult graph_add(struct graph *g, struct kdef *k, const struct kdims *d, struct gnode **out)
{
    struct gnode *n = calloc(1, sizeof *n);
    CUresult e;
    if (!n)
        return CUDA_ERROR_OUT_OF_MEMORY;
    n->magic = MAGIC_NODE;
    n->k = k;
    if (d)
        n->d = *d;
    n->id = ++g_next_node_id;
    if (h_add(n)) {
        free(n);
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    e = graph_add_node(g, n);
    if (!e && out)
        *out = n;
    return e;
}

static struct graph *graph_new(uint32_t magic)
{
    struct graph *g = calloc(1, sizeof *g);
    if (g) {
        g->magic = magic;
        g->id = ++g_next_graph_id;
        if (h_add(g)) {
            free(g);
            return NULL;
        }
    }
    return g;
}

/* Whether the stream's last cuStreamWaitValue32 still holds it (clears it once passed). */
static int stream_gated(struct stream *s)
{
    if (!s->wait_addr)
        return 0;
    if (*s->wait_addr == s->wait_val) {
        s->wait_addr = NULL;
        return 0;
    }
    return 1;
}

/* Execute one kernel on a stream: advance its simulated clock. With a sink set, *a (when
 * not NULL) gets the kernel's activity: the caller adds launch parameters and ids. */
static void stream_run(struct stream *s, struct kdef *k, struct fakecuda_kernel_activity *a)
{
    uint64_t d = k->durs[k->next % (uint64_t)k->ndurs];
    uint64_t t = now_ns() + g_delay_ns;
    k->next++;
    s->clock_ns += g_idle_ns; /* the stream waited for the host */
    if (a) {
        memset(a, 0, sizeof *a);
        a->size = sizeof *a;
        a->device_id = (uint32_t)s->ctx->dev;
        a->context_id = (uint32_t)s->ctx->id;
        a->stream_id = (uint32_t)s->id;
        a->start_ns = s->clock_ns;
        a->end_ns = s->clock_ns + d;
        a->name = k->cnt->name;  /* the counter's copy: never scribbled over, never freed */
    }
    s->clock_ns += d;
    if (t > s->busy_until)
        s->busy_until = t;
    if (strncmp(k->name, "hang", 4) == 0)
        s->hung = 1;
}

/* The sink to call after the lock is released, or NULL; counts the call as running.
 * Under the lock. */
static fakecuda_activity_fn sink_take(void **arg)
{
    if (!g_sink || tl_in_sink)
        return NULL;
    *arg = g_sink_arg;
    __atomic_add_fetch(&g_sink_calls, 1, __ATOMIC_ACQ_REL);
    return g_sink;
}

/* Reports n activities to a sink from sink_take; without the lock. */
static void sink_call(fakecuda_activity_fn fn, void *arg, const struct fakecuda_kernel_activity *a, int n)
{
    int i;
    tl_in_sink = 1;  /* a kernel launched from inside the sink is not reported again */
    for (i = 0; i < n; i++)
        fn(&a[i], arg);
    tl_in_sink = 0;
    __atomic_sub_fetch(&g_sink_calls, 1, __ATOMIC_ACQ_REL);
}

EXPORT int fakecuda_set_activity_sink(fakecuda_activity_fn fn, void *arg)
{
    LOCK();
    g_sink = fn;
    g_sink_arg = arg;
    UNLOCK();
    /* Calls of the old sink that already took it finish before we return (a caller may be
     * about to unload it), unless we are inside one of them; a call stuck for 2 s (a client
     * callback that never returns) is not waited for. */
    for (int i = 0; i < 20000 && !tl_in_sink && __atomic_load_n(&g_sink_calls, __ATOMIC_ACQUIRE) > 0; i++)
        usleep(100);
    TRACE("fakecuda_set_activity_sink(%p)", (void *)(uintptr_t)fn);
    return FAKECUDA_ACTIVITY_VERSION;
}

static struct kname *kname_get(const char *name)
{
    struct kname *n;
    for (n = g_knames; n; n = n->next)
        if (strcmp(n->name, name) == 0)
            return n;
    n = calloc(1, sizeof *n);
    if (!n)
        return NULL;
    n->name = strdup(name);
    if (!n->name) {
        free(n);
        return NULL;
    }
    n->next = g_knames;
    g_knames = n;
    return n;
}

/* Decodes each "%XX" (two hex digits) of a name in place into the byte it stands for. */
static void unescape_name(char *s)
{
    char *w = s;

    for (const char *r = s; *r; w++) {
        unsigned v;
        if (r[0] == '%' && isxdigit((unsigned char)r[1]) && isxdigit((unsigned char)r[2]) &&
            sscanf(r + 1, "%2x", &v) == 1 && v != 0) {
            *w = (char)v;
            r += 3;
        } else {
            *w = *r++;
        }
    }
    *w = '\0';
}

/* Parse "name=ns[,ns...];name2=ns". Names: any characters but '=' and ';' (surrounding
 * white space is trimmed), then "%XX" decoded, so that a name may hold any byte but NUL.
 * Returns the number of kernels, or -1 on a malformed image. */
static int parse_image(const char *img, struct kdef **out)
{
    struct kdef *ks = NULL;
    int nk = 0, cap = 0;
    const char *p = img;
    if (!img)
        return -1;
    while (*p) {
        const char *ns, *ne, *eq;
        char *name;
        uint64_t *durs = NULL;
        int nd = 0, dcap = 0;
        while (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r' || *p == ';')
            p++;
        if (!*p)
            break;
        ns = p;
        while (*p && *p != '=' && *p != ';')
            p++;
        if (*p != '=')
            goto bad;
        eq = p;
        ne = eq;
        while (ne > ns && (ne[-1] == ' ' || ne[-1] == '\t'))
            ne--;
        if (ne == ns)
            goto bad;
        p = eq + 1;
        for (;;) {
            char *end;
            unsigned long long v;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p < '0' || *p > '9')
                goto bad_d;
            errno = 0;
            v = strtoull(p, &end, 10);
            if (errno)
                goto bad_d;
            if (nd == dcap) {
                uint64_t *nv;
                dcap = dcap ? dcap * 2 : 4;
                nv = realloc(durs, (size_t)dcap * sizeof *nv);
                if (!nv)
                    goto bad_d;
                durs = nv;
            }
            durs[nd++] = v;
            p = end;
            while (*p == ' ' || *p == '\t')
                p++;
            if (*p == ',') {
                p++;
                continue;
            }
            if (*p == ';' || *p == '\0' || *p == '\n' || *p == '\r')
                break;
            goto bad_d;
        }
        name = strndup(ns, (size_t)(ne - ns));
        if (!name)
            goto bad_d;
        unescape_name(name);
        for (int i = 0; i < nk; i++)
            if (strcmp(ks[i].name, name) == 0) {
                free(name);
                goto bad_d;
            }
        if (nk == cap) {
            struct kdef *nkd;
            cap = cap ? cap * 2 : 8;
            nkd = realloc(ks, (size_t)cap * sizeof *nkd);
            if (!nkd) {
                free(name);
                goto bad_d;
            }
            ks = nkd;
        }
        memset(&ks[nk], 0, sizeof ks[nk]);
        ks[nk].name = name;
        ks[nk].durs = durs;
        ks[nk].ndurs = nd;
        ks[nk].cnt = kname_get(name);
        if (!ks[nk].cnt)
            goto bad;
        nk++;
        continue;
bad_d:
        free(durs);
        goto bad;
    }
    if (nk == 0)
        goto bad;
    *out = ks;
    return nk;
bad:
    for (int i = 0; i < nk; i++) {
        free(ks[i].name);
        free(ks[i].durs);
    }
    free(ks);
    return -1;
}

static struct image *image_new(uint32_t magic, const void *data, struct ctx *c)
{
    struct image *m;
    struct kdef *ks;
    int nk = parse_image((const char *)data, &ks), i;
    if (nk < 0)
        return NULL;
    m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->ctx = c;
    m->gen = c ? c->gen : 0;
    m->nk = nk;
    m->ks = ks;
    m->funcs = calloc((size_t)nk, sizeof *m->funcs);
    if (magic == MAGIC_LIB)
        m->kerns = calloc((size_t)nk, sizeof *m->kerns);
    if (!m->funcs || (magic == MAGIC_LIB && !m->kerns))
        return NULL;  /* out of memory: leaks a little, never happens in tests */
    for (i = 0; i < nk; i++) {
        if (m->funcs) {
            m->funcs[i].magic = MAGIC_FUNC;
            m->funcs[i].k = &ks[i];
            m->funcs[i].ctx = c;
            m->funcs[i].gen = m->gen;
            m->funcs[i].img = m;
            m->funcs[i].idx = i;
            if (h_add(&m->funcs[i]))
                return NULL;
        }
        if (m->kerns) {
            m->kerns[i].magic = MAGIC_KERNEL;
            m->kerns[i].k = &ks[i];
            m->kerns[i].img = m;
            m->kerns[i].idx = i;
            if (h_add(&m->kerns[i]))
                return NULL;
        }
    }
    m->magic = magic;
    if (h_add(m))
        return NULL;
    return m;
}

static void image_unload(struct image *m)
{
    int i;
    m->magic = MAGIC_DEAD;
    for (i = 0; i < m->nk; i++) {
        /* Names are valid only while their module is loaded: make stale readers visible. */
        memset(m->ks[i].name, 'X', strlen(m->ks[i].name));
        if (m->funcs)
            m->funcs[i].magic = MAGIC_DEAD;
        if (m->kerns)
            m->kerns[i].magic = MAGIC_DEAD;
    }
}

static CUresult image_find(struct image *m, const char *name, int *idx)
{
    int i;
    for (i = 0; i < m->nk; i++)
        if (strcmp(m->ks[i].name, name) == 0) {
            *idx = i;
            return CUDA_SUCCESS;
        }
    return CUDA_ERROR_NOT_FOUND;
}

/* ------------------------------------------------------------------------------------ */
/* Errors                                                                                 */

static const struct { CUresult code; const char *name; const char *str; } g_errors[] = {
    { CUDA_SUCCESS, "CUDA_SUCCESS", "no error" },
    { CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument" },
    { CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory" },
    { CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error" },
    { CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down" },
    { CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected" },
    { CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal" },
    { CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid" },
    { CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context" },
    { CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle" },
    { CUDA_ERROR_ILLEGAL_STATE, "CUDA_ERROR_ILLEGAL_STATE", "the operation cannot be performed in the present state" },
    { CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found" },
    { CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready" },
    { CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT", "the launch timed out and was terminated" },
    { CUDA_ERROR_CONTEXT_IS_DESTROYED, "CUDA_ERROR_CONTEXT_IS_DESTROYED", "context is destroyed" },
    { CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported" },
    { CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED", "operation not permitted when stream is capturing" },
    { CUDA_ERROR_STREAM_CAPTURE_INVALIDATED, "CUDA_ERROR_STREAM_CAPTURE_INVALIDATED", "operation failed due to a previous error during capture" },
    { CUDA_ERROR_STREAM_CAPTURE_MERGE, "CUDA_ERROR_STREAM_CAPTURE_MERGE", "operation would result in a merge of separate capture sequences" },
    { CUDA_ERROR_STREAM_CAPTURE_UNMATCHED, "CUDA_ERROR_STREAM_CAPTURE_UNMATCHED", "capture was not ended in the same stream as it began" },
    { CUDA_ERROR_STREAM_CAPTURE_UNJOINED, "CUDA_ERROR_STREAM_CAPTURE_UNJOINED", "capturing stream has unjoined work" },
    { CUDA_ERROR_STREAM_CAPTURE_ISOLATION, "CUDA_ERROR_STREAM_CAPTURE_ISOLATION", "dependency created on uncaptured work in another stream" },
    { CUDA_ERROR_STREAM_CAPTURE_IMPLICIT, "CUDA_ERROR_STREAM_CAPTURE_IMPLICIT", "operation would make the legacy stream depend on a capturing blocking stream" },
    { CUDA_ERROR_CAPTURED_EVENT, "CUDA_ERROR_CAPTURED_EVENT", "operation not permitted on an event last recorded in a capturing stream" },
    { CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD, "CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD", "attempt to terminate a thread-local capture sequence from another thread" },
    { CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error" },
};

EXPORT CUresult cuGetErrorString(CUresult error, const char **pStr)
{
    size_t i;
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == error) {
            *pStr = g_errors[i].str;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

EXPORT CUresult cuGetErrorName(CUresult error, const char **pStr)
{
    size_t i;
    if (!pStr)
        return CUDA_ERROR_INVALID_VALUE;
    for (i = 0; i < sizeof g_errors / sizeof g_errors[0]; i++)
        if (g_errors[i].code == error) {
            *pStr = g_errors[i].name;
            return CUDA_SUCCESS;
        }
    *pStr = NULL;
    return CUDA_ERROR_INVALID_VALUE;
}

/* ------------------------------------------------------------------------------------ */
/* Initialisation, version, devices                                                       */

EXPORT CUresult cuInit(unsigned int Flags)
{
    void *self, *next;
    if (Flags != 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (g_fork_broken)
        return CUDA_ERROR_NOT_INITIALIZED;
    if (g_deinit)
        return CUDA_ERROR_DEINITIALIZED;
    if (__atomic_load_n(&g_initialized, __ATOMIC_ACQUIRE))
        return CUDA_SUCCESS;
    /* The real driver calls dlsym itself during initialisation; so do we, with the handles
     * that trip naive dlsym interposers. Both are relative to the caller, this object:
     * RTLD_DEFAULT must find our own cuInit (even when we were dlopened RTLD_LOCAL), and
     * RTLD_NEXT must find nothing (no object after libcuda defines cuInit). The results go
     * to the count file; FAKECUDA_DLSYM_STRICT=1 makes a wrong answer fail cuInit, as a
     * driver that trusted it would. */
    self = dlsym(RTLD_DEFAULT, "cuInit");
    next = dlsym(RTLD_NEXT, "cuInit");
    g_dlsym_default = self == (void *)&cuInit;
    g_dlsym_next = next == NULL;
    if (g_dlsym_strict && !g_dlsym_default) {
        fprintf(stderr, "fakecuda: dlsym(RTLD_DEFAULT, \"cuInit\") called from libcuda returned %p, not libcuda's "
                        "cuInit %p: RTLD_DEFAULT lost its meaning\n", self, (void *)&cuInit);
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    if (g_dlsym_strict && !g_dlsym_next) {
        fprintf(stderr, "fakecuda: dlsym(RTLD_NEXT, \"cuInit\") called from libcuda returned %p, "
                        "expected NULL: RTLD_NEXT lost its meaning\n", next);
        return CUDA_ERROR_NOT_INITIALIZED;
    }
    {
        void *h = dlopen("libc.so.6", RTLD_NOLOAD | RTLD_LAZY);
        if (h) {
            (void)dlsym(h, "clock_gettime");
            dlclose(h);
        }
    }
    LOCK();
    if (!g_initialized) {
        int i;
        for (i = 0; i < g_ndev; i++) {
            g_primary[i] = new_ctx(i, 1, 0);
            if (!g_primary[i]) {
                UNLOCK();
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
        }
        if (g_atexit_deinit)
            atexit(fake_atexit_deinit);
        __atomic_store_n(&g_initialized, 1, __ATOMIC_RELEASE);
    }
    UNLOCK();
    TRACE("cuInit(0) = 0");
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *driverVersion)
{
    if (!driverVersion)
        return CUDA_ERROR_INVALID_VALUE;
    *driverVersion = FAKE_DRIVER_VERSION;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *device, int ordinal)
{
    CHECK_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    if (ordinal < 0 || ordinal >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *device = ordinal;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *count)
{
    CHECK_INIT();
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    *count = g_ndev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice dev)
{
    CHECK_INIT();
    if (!name || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(name, (size_t)len, "Fake GPU %d", dev);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
    CHECK_INIT();
    if (!pi)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    switch (attrib) {
    case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT: *pi = 132; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR: *pi = 9; break;
    case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR: *pi = 0; break;
    case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK: *pi = 1024; break;
    case CU_DEVICE_ATTRIBUTE_WARP_SIZE: *pi = 32; break;
    case CU_DEVICE_ATTRIBUTE_CLOCK_RATE: *pi = 1980000; break;
    case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID: *pi = dev + 1; break;
    case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS: *pi = 1; break;
    case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE: *pi = 50 << 20; break; /* an H100's */
    default: *pi = 0; break;
    }
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice dev)
{
    CHECK_INIT();
    if (!bytes)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    *bytes = (size_t)80 << 30;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetUuid_v2(CUuuid *uuid, CUdevice dev)
{
    CHECK_INIT();
    if (!uuid)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    memset(uuid->bytes, 0, sizeof uuid->bytes);
    memcpy(uuid->bytes, "fakecuda", 8);
    uuid->bytes[15] = (char)dev;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
    CHECK_INIT();
    if (!pciBusId || len <= 0)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    snprintf(pciBusId, (size_t)len, "0000:%02x:00.0", dev + 1);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------------------ */
/* Contexts                                                                               */

static CUresult primary_retain(CUcontext *pctx, CUdevice dev)
{
    struct ctx *c;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    c = g_primary[dev];
    c->refcount++;
    c->active = 1;
    UNLOCK();
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *pctx, CUdevice dev)
{
    CHECK_INIT();
    return primary_retain(pctx, dev);
}

static CUresult primary_release(CUdevice dev)
{
    struct ctx *c;
    CUresult r = CUDA_SUCCESS;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    c = g_primary[dev];
    if (c->refcount <= 0) {
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else if (--c->refcount == 0) {
        c->active = 0;
        ctx_reset_resources(c);
    }
    UNLOCK();
    return r;
}

V2_PAIR(cuDevicePrimaryCtxRelease, (CUdevice dev), primary_release(dev))

static CUresult primary_reset(CUdevice dev)
{
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    ctx_reset_resources(g_primary[dev]);
    UNLOCK();
    return CUDA_SUCCESS;
}

V2_PAIR(cuDevicePrimaryCtxReset, (CUdevice dev), primary_reset(dev))

EXPORT CUresult cuDevicePrimaryCtxGetState(CUdevice dev, unsigned int *flags, int *active)
{
    CHECK_INIT();
    if (!flags || !active)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    *flags = g_primary[dev]->flags;
    *active = g_primary[dev]->active;
    UNLOCK();
    return CUDA_SUCCESS;
}

static CUresult ctx_create(CUcontext *pctx, unsigned int flags, CUdevice dev)
{
    struct ctx *c;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    if (dev < 0 || dev >= g_ndev)
        return CUDA_ERROR_INVALID_DEVICE;
    LOCK();
    if (tl_depth >= FAKE_CTX_STACK) {
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    c = new_ctx(dev, 0, flags);
    if (!c) {
        UNLOCK();
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    tl_stack[tl_depth++] = c;
    UNLOCK();
    *pctx = (CUcontext)c;
    return CUDA_SUCCESS;
}

V2_PAIR(cuCtxCreate, (CUcontext *pctx, unsigned int flags, CUdevice dev), ctx_create(pctx, flags, dev))

EXPORT CUresult cuCtxCreate_v3(CUcontext *pctx, CUexecAffinityParam *paramsArray, int numParams,
                               unsigned int flags, CUdevice dev)
{
    (void)paramsArray;
    (void)numParams;
    CHECK_INIT();
    return ctx_create(pctx, flags, dev);
}

EXPORT CUresult cuCtxCreate_v4(CUcontext *pctx, CUctxCreateParams *ctxCreateParams, unsigned int flags,
                               CUdevice dev)
{
    (void)ctxCreateParams;
    CHECK_INIT();
    return ctx_create(pctx, flags, dev);
}

static CUresult ctx_destroy(CUcontext ctx)
{
    struct ctx *c = (struct ctx *)ctx;
    CUresult r = CUDA_SUCCESS;
    if (!c)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(c, MAGIC_CTX) || c->destroyed || c->primary) {
        r = CUDA_ERROR_INVALID_CONTEXT;
    } else {
        c->destroyed = 1;
        c->gen++;
        if (tl_depth > 0 && tl_stack[tl_depth - 1] == c)
            tl_depth--;
    }
    UNLOCK();
    return r;
}

V2_PAIR(cuCtxDestroy, (CUcontext ctx), ctx_destroy(ctx))

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
    struct ctx *c = (struct ctx *)ctx;
    CHECK_INIT();
    if (!c) {
        if (tl_depth > 0)
            tl_depth--;
        return CUDA_SUCCESS;
    }
    if (!is_obj(c, MAGIC_CTX) || c->destroyed)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tl_depth == 0)
        tl_stack[tl_depth++] = c;
    else
        tl_stack[tl_depth - 1] = c;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetCurrent(CUcontext *pctx)
{
    CHECK_INIT();
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    *pctx = (CUcontext)cur_ctx();
    return CUDA_SUCCESS;
}

static CUresult ctx_push(CUcontext ctx)
{
    struct ctx *c = (struct ctx *)ctx;
    if (!is_obj(c, MAGIC_CTX) || c->destroyed)
        return CUDA_ERROR_INVALID_CONTEXT;
    if (tl_depth >= FAKE_CTX_STACK)
        return CUDA_ERROR_OUT_OF_MEMORY;
    tl_stack[tl_depth++] = c;
    return CUDA_SUCCESS;
}

V2_PAIR(cuCtxPushCurrent, (CUcontext ctx), ctx_push(ctx))

static CUresult ctx_pop(CUcontext *pctx)
{
    if (tl_depth == 0)
        return CUDA_ERROR_INVALID_CONTEXT;
    tl_depth--;
    if (pctx)
        *pctx = (CUcontext)tl_stack[tl_depth];
    return CUDA_SUCCESS;
}

V2_PAIR(cuCtxPopCurrent, (CUcontext *pctx), ctx_pop(pctx))

EXPORT CUresult cuCtxGetDevice(CUdevice *device)
{
    struct ctx *c;
    CUresult e;
    CHECK_INIT();
    if (!device)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e)
        *device = c->dev;
    UNLOCK();
    return e;
}

EXPORT CUresult cuCtxGetId(CUcontext ctx, unsigned long long *ctxId)
{
    struct ctx *c = (struct ctx *)ctx;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    if (!ctxId)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!c)
        e = need_ctx(&c);
    else if (!is_obj(c, MAGIC_CTX) || c->destroyed)
        e = CUDA_ERROR_INVALID_CONTEXT;
    if (!e)
        *ctxId = c->id;
    UNLOCK();
    return e;
}

EXPORT CUresult cuCtxGetFlags(unsigned int *flags)
{
    struct ctx *c;
    CUresult e;
    CHECK_INIT();
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e)
        *flags = c->flags;
    UNLOCK();
    return e;
}

EXPORT CUresult cuCtxSynchronize(void)
{
    struct ctx *c;
    CUresult e;
    uint64_t until = 0;
    int capturing = 0, hung = 0;
    CHECK_INIT();
    LOCK();
    e = need_ctx(&c);
    if (e) {
        UNLOCK();
        return e;
    }
    for (struct stream *s = g_streams; s; s = s->all_next) {
        if (s->ctx != c || !stream_alive(s))
            continue;
        if (s->cap_status == CAP_ACTIVE) {
            s->cap_status = CAP_INVALIDATED;   /* sync during capture breaks the capture */
            capturing = 1;
        }
        if (s->hung)
            hung = 1;
        if (s->busy_until > until)
            until = s->busy_until;
    }
    UNLOCK();
    if (capturing)
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    if (hung)
        return CUDA_ERROR_LAUNCH_TIMEOUT;
    sleep_until(until);
    return CUDA_SUCCESS;
}

/* ------------------------------------------------------------------------------------ */
/* Streams                                                                                */

static CUresult stream_create(CUstream *ph, unsigned int flags, int prio)
{
    struct ctx *c;
    struct stream *s;
    CUresult e;
    if (!ph || (flags & ~(unsigned)CU_STREAM_NON_BLOCKING))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e) {
        s = new_stream(c, SK_CREATED, flags, prio);
        if (s)
            *ph = (CUstream)s;
        else
            e = CUDA_ERROR_OUT_OF_MEMORY;
    }
    UNLOCK();
    return e;
}

EXPORT CUresult cuStreamCreate(CUstream *phStream, unsigned int Flags)
{
    CHECK_INIT();
    return stream_create(phStream, Flags, 0);
}

EXPORT CUresult cuStreamCreateWithPriority(CUstream *phStream, unsigned int flags, int priority)
{
    CHECK_INIT();
    return stream_create(phStream, flags, priority);
}

static CUresult stream_destroy(CUstream h)
{
    struct stream *s = (struct stream *)h;
    CUresult r = CUDA_SUCCESS;
    if (!s || h == CU_STREAM_LEGACY || h == CU_STREAM_PER_THREAD)
        return CUDA_ERROR_INVALID_HANDLE;
    LOCK();
    if (!is_obj(s, MAGIC_STREAM) || s->kind != SK_CREATED)
        r = CUDA_ERROR_INVALID_HANDLE;
    else
        s->magic = MAGIC_DEAD;
    UNLOCK();
    return r;
}

V2_PAIR(cuStreamDestroy, (CUstream hStream), stream_destroy(hStream))

static CUresult stream_sync(CUstream h, int ptsz)
{
    struct stream *s;
    CUresult e;
    uint64_t until;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (e) {
        UNLOCK();
        return e;
    }
    if (s->cap_status == CAP_ACTIVE) {
        s->cap_status = CAP_INVALIDATED;
        UNLOCK();
        return CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
    }
    if (s->cap_status == CAP_INVALIDATED) {
        UNLOCK();
        return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    }
    if (legacy_conflict(s, 1)) {
        UNLOCK();
        return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    }
    if (s->hung) {
        UNLOCK();
        return CUDA_ERROR_LAUNCH_TIMEOUT;
    }
    until = s->busy_until;
    UNLOCK();
    sleep_until(until);
    return CUDA_SUCCESS;
}

PTSZ_PAIR(cuStreamSynchronize, (CUstream hStream), stream_sync(hStream, ptsz))

static CUresult stream_query(CUstream h, int ptsz)
{
    struct stream *s;
    CUresult e;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e) {
        if (s->cap_status == CAP_ACTIVE) {
            s->cap_status = CAP_INVALIDATED;
            e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        } else if (s->cap_status == CAP_INVALIDATED) {
            e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        } else if (s->hung || now_ns() < s->busy_until) {
            e = CUDA_ERROR_NOT_READY;
        }
    }
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamQuery, (CUstream hStream), stream_query(hStream, ptsz))

static CUresult stream_get_ctx(CUstream h, int ptsz, CUcontext *pctx)
{
    struct stream *s;
    CUresult e;
    if (!pctx)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e)
        *pctx = (CUcontext)s->ctx;
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamGetCtx, (CUstream hStream, CUcontext *pctx), stream_get_ctx(hStream, ptsz, pctx))

static CUresult stream_get_id(CUstream h, int ptsz, unsigned long long *id)
{
    struct stream *s;
    CUresult e;
    if (!id)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e)
        *id = s->id;
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamGetId, (CUstream hStream, unsigned long long *streamId), stream_get_id(hStream, ptsz, streamId))

static CUresult stream_get_flags(CUstream h, int ptsz, unsigned int *flags)
{
    struct stream *s;
    CUresult e;
    if (!flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e)
        *flags = s->flags;
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamGetFlags, (CUstream hStream, unsigned int *flags), stream_get_flags(hStream, ptsz, flags))

static CUresult stream_wait_event(CUstream h, int ptsz, CUevent hEvent)
{
    struct stream *s;
    struct event *ev = (struct event *)hEvent;
    CUresult e;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (e)
        goto out;
    if (!is_obj(ev, MAGIC_EVENT)) {
        e = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (ev->state == EV_CAPTURED || s->cap_status != CAP_NONE) {
        e = CUDA_ERROR_NOT_SUPPORTED;  /* cross-stream capture joins are not simulated */
        goto out;
    }
    if (ev->state == EV_RECORDED) {
        if (ev->hung)
            s->hung = 1;
        if (ev->complete_at > s->busy_until)
            s->busy_until = ev->complete_at;
        /* Clocks of different streams live in different epochs: waiting orders work but
         * does not move this stream's clock. */
    }
out:
    UNLOCK();
    return e;
}

/* Flags (CU_EVENT_WAIT_DEFAULT / _EXTERNAL) change nothing here. */
PTSZ_PAIR(cuStreamWaitEvent, (CUstream hStream, CUevent hEvent, unsigned int Flags),
          stream_wait_event(hStream, ptsz, hEvent))

/* ------------------------------------------------------------------------------------ */
/* Capture                                                                                */

static CUresult begin_capture(CUstream h, int ptsz, int mode)
{
    struct stream *s;
    CUresult e;
    if (mode < CU_STREAM_CAPTURE_MODE_GLOBAL || mode > CU_STREAM_CAPTURE_MODE_RELAXED)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (e)
        goto out;
    if (s->kind == SK_LEGACY) {
        e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        goto out;
    }
    if (s->cap_status != CAP_NONE) {
        e = CUDA_ERROR_ILLEGAL_STATE;
        goto out;
    }
    s->cap_graph = graph_new(MAGIC_GRAPH);
    if (!s->cap_graph) {
        e = CUDA_ERROR_OUT_OF_MEMORY;
        goto out;
    }
    s->cap_status = CAP_ACTIVE;
    s->cap_mode = mode;
    s->cap_id = g_next_cap_id++;
    s->cap_thread = pthread_self();
out:
    UNLOCK();
    TRACE("cuStreamBeginCapture(%p%s) = %d", (void *)h, ptsz ? ", ptsz" : "", (int)e);
    return e;
}

PTSZ_PAIR(cuStreamBeginCapture, (CUstream hStream), begin_capture(hStream, ptsz, CU_STREAM_CAPTURE_MODE_GLOBAL))
PTSZ_PAIR(cuStreamBeginCapture_v2, (CUstream hStream, CUstreamCaptureMode mode),
          begin_capture(hStream, ptsz, (int)mode))

static CUresult end_capture(CUstream h, int ptsz, CUgraph *phGraph)
{
    struct stream *s;
    CUresult e;
    if (!phGraph)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (e)
        goto out;
    if (s->cap_status == CAP_NONE) {
        e = CUDA_ERROR_ILLEGAL_STATE;
        goto out;
    }
    if (s->cap_mode != CU_STREAM_CAPTURE_MODE_RELAXED && !pthread_equal(s->cap_thread, pthread_self())) {
        e = CUDA_ERROR_STREAM_CAPTURE_WRONG_THREAD;
        goto out;
    }
    if (s->cap_status == CAP_INVALIDATED) {
        *phGraph = NULL;
        e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        s->cap_graph->magic = MAGIC_DEAD;
    } else {
        *phGraph = (CUgraph)s->cap_graph;
    }
    s->cap_graph = NULL;
    s->cap_status = CAP_NONE;
out:
    UNLOCK();
    TRACE("cuStreamEndCapture(%p%s) = %d", (void *)h, ptsz ? ", ptsz" : "", (int)e);
    return e;
}

PTSZ_PAIR(cuStreamEndCapture, (CUstream hStream, CUgraph *phGraph), end_capture(hStream, ptsz, phGraph))

static CUresult is_capturing(CUstream h, int ptsz, CUstreamCaptureStatus *st)
{
    struct stream *s;
    CUresult e;
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e) {
        if (legacy_conflict(s, 0))
            e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;  /* documented: does not invalidate */
        else
            *st = (CUstreamCaptureStatus)s->cap_status;
    }
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamIsCapturing, (CUstream hStream, CUstreamCaptureStatus *captureStatus),
          is_capturing(hStream, ptsz, captureStatus))

static CUresult capture_info(CUstream h, int ptsz, CUstreamCaptureStatus *st, cuuint64_t *id,
                             CUgraph *g, const CUgraphNode **deps, const CUgraphEdgeData **edges,
                             size_t *ndeps)
{
    struct stream *s;
    CUresult e;
    if (!st)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = resolve_stream(h, ptsz, &s);
    if (!e) {
        if (legacy_conflict(s, 0)) {
            e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        } else {
            *st = (CUstreamCaptureStatus)s->cap_status;
            if (s->cap_status != CAP_NONE) {
                if (id)
                    *id = s->cap_id;
                if (g)
                    *g = (CUgraph)s->cap_graph;
            }
            if (deps)
                *deps = NULL;
            if (edges)
                *edges = NULL;
            if (ndeps)
                *ndeps = 0;
        }
    }
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuStreamGetCaptureInfo_v3,
          (CUstream hStream, CUstreamCaptureStatus *captureStatus_out, cuuint64_t *id_out, CUgraph *graph_out,
           const CUgraphNode **dependencies_out, const CUgraphEdgeData **edgeData_out,
           size_t *numDependencies_out),
          capture_info(hStream, ptsz, captureStatus_out, id_out, graph_out, dependencies_out, edgeData_out,
                       numDependencies_out))

/* ------------------------------------------------------------------------------------ */
/* Events                                                                                 */

EXPORT CUresult cuEventCreate(CUevent *phEvent, unsigned int Flags)
{
    struct ctx *c;
    struct event *ev;
    CUresult e;
    CHECK_INIT();
    if (!phEvent || (Flags & ~(unsigned)(CU_EVENT_BLOCKING_SYNC | CU_EVENT_DISABLE_TIMING | CU_EVENT_INTERPROCESS)))
        return CUDA_ERROR_INVALID_VALUE;
    if ((Flags & CU_EVENT_INTERPROCESS) && !(Flags & CU_EVENT_DISABLE_TIMING))
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e) {
        ev = calloc(1, sizeof *ev);
        if (!ev) {
            e = CUDA_ERROR_OUT_OF_MEMORY;
        } else {
            ev->magic = MAGIC_EVENT;
            if (h_add(ev)) {
                free(ev);
                UNLOCK();
                return CUDA_ERROR_OUT_OF_MEMORY;
            }
            ev->ctx = c;
            ev->gen = c->gen;
            ev->flags = Flags;
            *phEvent = (CUevent)ev;
            g_cnt.event_create++;
        }
    }
    UNLOCK();
    return e;
}

static CUresult event_check(const struct event *ev)
{
    if (!is_obj(ev, MAGIC_EVENT))
        return CUDA_ERROR_INVALID_HANDLE;
    if (ev->ctx->destroyed || ev->gen != ev->ctx->gen)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    return CUDA_SUCCESS;
}

static CUresult event_destroy(CUevent h)
{
    struct event *ev = (struct event *)h;
    CUresult e;
    LOCK();
    e = is_obj(ev, MAGIC_EVENT) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
    if (!e) {
        ev->magic = MAGIC_DEAD;
        g_cnt.event_destroy++;
    }
    UNLOCK();
    return e;
}

V2_PAIR(cuEventDestroy, (CUevent hEvent), event_destroy(hEvent))

static CUresult event_record(CUevent h, CUstream hs, int ptsz)
{
    struct event *ev = (struct event *)h;
    struct stream *s = NULL;
    CUresult e;
    LOCK();
    g_cnt.event_record++;
    e = event_check(ev);
    if (e)
        goto out;
    e = resolve_stream(hs, ptsz, &s);
    if (e)
        goto out;
    if (s->ctx != ev->ctx) {
        e = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (s->cap_status == CAP_INVALIDATED) {
        e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        goto out;
    }
    if (s->cap_status == CAP_ACTIVE) {
        /* Succeeds, adds no node, times nothing. */
        ev->state = EV_CAPTURED;
        ev->cap_stream = s;
        ev->cap_id = s->cap_id;
        goto out;
    }
    if (legacy_conflict(s, 1)) {
        e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        goto out;
    }
    ev->state = EV_RECORDED;
    ev->gate_addr = stream_gated(s) ? s->wait_addr : NULL;
    ev->gate_val = s->wait_val;
    ev->stamp_ns = s->clock_ns;
    /* After FAKECUDA_COMPLETE_DELAY_RECORDS records the GPU has "caught up": later events
     * complete at once (even ahead of older delayed ones: ktime must not care). */
    ev->complete_at = now_ns() + (!g_delay_records || g_records < g_delay_records ? g_delay_ns : 0);
    g_records++;
    ev->hung = s->hung;
    if (ev->complete_at > s->busy_until)
        s->busy_until = ev->complete_at;
out:
    if (e)
        g_cnt.event_record_failed++;
    UNLOCK();
    TRACE("cuEventRecord%s(%p, %p) = %d stamp=%" PRIu64, ptsz ? "_ptsz" : "", (void *)h, (void *)hs,
          (int)e, (!e && s) ? s->clock_ns : 0);
    return e;
}

PTSZ_PAIR(cuEventRecord, (CUevent hEvent, CUstream hStream), event_record(hEvent, hStream, ptsz))
PTSZ_PAIR(cuEventRecordWithFlags, (CUevent hEvent, CUstream hStream, unsigned int flags),
          (flags & ~(unsigned)CU_EVENT_RECORD_EXTERNAL) ? CUDA_ERROR_INVALID_VALUE
                                                         : event_record(hEvent, hStream, ptsz))

/* Is the capture an event was recorded into still going on? */
static int event_capture_live(struct event *ev)
{
    struct stream *s = ev->cap_stream;
    return s && s->magic == MAGIC_STREAM && s->cap_status != CAP_NONE && s->cap_id == ev->cap_id;
}

/* Query an event: CUDA_SUCCESS, CUDA_ERROR_NOT_READY (with *until = completion time, or
 * UINT64_MAX if never), or an error. Querying an event recorded into a live capture
 * invalidates that capture (measured on the real driver: error 907, then EndCapture 901). */
static CUresult event_status(struct event *ev, uint64_t *until)
{
    CUresult e = event_check(ev);
    *until = 0;
    if (e)
        return e;
    if (ev->state == EV_CAPTURED) {
        if (event_capture_live(ev)) {
            if (ev->cap_stream->cap_status == CAP_ACTIVE)
                ev->cap_stream->cap_status = CAP_INVALIDATED;
            return CUDA_ERROR_CAPTURED_EVENT;
        }
        return CUDA_SUCCESS;
    }
    if (ev->state == EV_NEVER)
        return CUDA_SUCCESS;
    if (ev->hung) {
        *until = UINT64_MAX;
        return CUDA_ERROR_NOT_READY;
    }
    if (ev->gate_addr && *ev->gate_addr != ev->gate_val) {
        *until = now_ns() + 1000000; /* held behind a closed stream wait */
        return CUDA_ERROR_NOT_READY;
    }
    if (now_ns() < ev->complete_at) {
        *until = ev->complete_at;
        return CUDA_ERROR_NOT_READY;
    }
    return CUDA_SUCCESS;
}

/* cuEventQuery's and cuEventSynchronize's answer: an event recorded into a live capture
 * answers 907 first (measured), whoever asks; otherwise the capture-mode rules, then the
 * event's state. Under the lock. */
static CUresult event_wait_status(struct event *ev, uint64_t *until)
{
    CUresult e = event_check(ev);
    *until = 0;
    if (!e && !(ev->state == EV_CAPTURED && event_capture_live(ev)))
        e = unsafe_call_check();
    if (!e)
        e = event_status(ev, until);
    return e;
}

EXPORT CUresult cuEventQuery(CUevent hEvent)
{
    uint64_t until;
    CUresult e;
    char tname[16] = "";
    CHECK_INIT();
    /* Queries on the program's own threads, apart from ktime's drain and watchdog threads. */
    prctl(PR_GET_NAME, tname, 0, 0, 0); /* one system call; pthread_getname_np reads /proc */
    if (g_hang_query_thread[0] && strcmp(tname, g_hang_query_thread) == 0) {
        /* A driver call that never comes back on this thread (a hung driver, or a lock the
         * thread waits for and will never get), holding no lock of the fake's. Said once, so
         * that a test knows the thread is there. */
        char line[80];
        int n = snprintf(line, sizeof line, "fakecuda: cuEventQuery hangs on thread %s\n", tname);
        if (write(STDERR_FILENO, line, (size_t)n) < 0) {
            /* nothing to do */
        }
        for (;;)
            sleep_until(now_ns() + 1000000000ull);
    }
    LOCK();
    if (strncmp(tname, "ktime-", 6) != 0)
        g_cnt.event_query_app++;
    e = event_wait_status((struct event *)hEvent, &until);
    UNLOCK();
    return e;
}

EXPORT CUresult cuEventSynchronize(CUevent hEvent)
{
    uint64_t until;
    CUresult e;
    CHECK_INIT();
    LOCK();
    e = event_wait_status((struct event *)hEvent, &until);
    UNLOCK();
    if (e == CUDA_ERROR_NOT_READY) {
        if (until == UINT64_MAX)
            return CUDA_ERROR_LAUNCH_TIMEOUT;  /* a hung stream: never block forever */
        sleep_until(until);
        return CUDA_SUCCESS;
    }
    return e;
}

static CUresult elapsed(float *ms, CUevent hStart, CUevent hEnd)
{
    struct event *a = (struct event *)hStart, *b = (struct event *)hEnd;
    uint64_t until;
    CUresult e;
    if (!ms)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = event_check(a);
    if (!e)
        e = event_check(b);
    if (e)
        goto out;
    if ((a->flags | b->flags) & CU_EVENT_DISABLE_TIMING) {
        e = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    if (a->ctx != b->ctx || a->state != EV_RECORDED || b->state != EV_RECORDED) {
        e = CUDA_ERROR_INVALID_HANDLE;  /* never recorded, or recorded only into a capture */
        goto out;
    }
    e = event_status(a, &until);
    if (!e)
        e = event_status(b, &until);
    if (e)
        goto out;
    *ms = (float)((double)(int64_t)(b->stamp_ns - a->stamp_ns) / 1e6);
out:
    UNLOCK();
    return e;
}

EXPORT CUresult cuEventElapsedTime(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CHECK_INIT();
    __atomic_fetch_add(&g_cnt.elapsed_v1, 1, __ATOMIC_RELAXED);
    return elapsed(pMilliseconds, hStart, hEnd);
}

EXPORT CUresult cuEventElapsedTime_v2(float *pMilliseconds, CUevent hStart, CUevent hEnd)
{
    CHECK_INIT();
    __atomic_fetch_add(&g_cnt.elapsed_v2, 1, __ATOMIC_RELAXED);
    return elapsed(pMilliseconds, hStart, hEnd);
}

/* ------------------------------------------------------------------------------------ */
/* Modules, libraries, functions, kernels                                                  */

EXPORT CUresult cuModuleLoadData(CUmodule *module, const void *image)
{
    struct ctx *c;
    struct image *m;
    CUresult e;
    CHECK_INIT();
    if (!module || !image)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e) {
        m = image_new(MAGIC_MODULE, image, c);
        if (m)
            *module = (CUmodule)m;
        else
            e = CUDA_ERROR_INVALID_IMAGE;
    }
    UNLOCK();
    return e;
}

/* Module and library entry points share these: MAGIC_MODULE images hand out CUfunctions,
 * MAGIC_LIB images CUkernels (and CUfunctions through cuKernelGetFunction). */
static CUresult image_unload_checked(void *h, uint32_t magic)
{
    struct image *m = h;
    CUresult e = CUDA_SUCCESS;
    LOCK();
    if (!is_obj(m, magic))
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        image_unload(m);
    UNLOCK();
    return e;
}

/* *out = the image's CUfunction (module) or CUkernel (library) named name. */
static CUresult image_get(struct fobj **out, void *h, uint32_t magic, const char *name)
{
    struct image *m = h;
    CUresult e;
    int i;
    LOCK();
    if (!is_obj(m, magic)) {
        e = CUDA_ERROR_INVALID_HANDLE;
    } else {
        e = image_find(m, name, &i);
        if (!e)
            *out = magic == MAGIC_LIB ? &m->kerns[i] : &m->funcs[i];
    }
    UNLOCK();
    return e;
}

static CUresult image_count(unsigned int *count, void *h, uint32_t magic)
{
    struct image *m = h;
    CUresult e = CUDA_SUCCESS;
    if (!count)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(m, magic))
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        *count = (unsigned)m->nk;
    UNLOCK();
    return e;
}

/* out: a CUfunction array for a module, a CUkernel array for a library. */
static CUresult image_enumerate(void *out, unsigned int n, void *h, uint32_t magic)
{
    struct image *m = h;
    CUresult e = CUDA_SUCCESS;
    unsigned i;
    if (!out)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(m, magic))
        e = CUDA_ERROR_INVALID_HANDLE;
    else if (magic == MAGIC_LIB)
        for (i = 0; i < n && i < (unsigned)m->nk; i++)
            ((CUkernel *)out)[i] = (CUkernel)&m->kerns[i];
    else
        for (i = 0; i < n && i < (unsigned)m->nk; i++)
            ((CUfunction *)out)[i] = (CUfunction)&m->funcs[i];
    UNLOCK();
    return e;
}

EXPORT CUresult cuModuleUnload(CUmodule hmod)
{
    CHECK_INIT();
    return image_unload_checked(hmod, MAGIC_MODULE);
}

EXPORT CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)
{
    struct fobj *f;
    CUresult e;
    CHECK_INIT();
    if (!hfunc || !name)
        return CUDA_ERROR_INVALID_VALUE;
    e = image_get(&f, hmod, MAGIC_MODULE, name);
    if (!e)
        *hfunc = (CUfunction)f;
    return e;
}

EXPORT CUresult cuModuleGetFunctionCount(unsigned int *count, CUmodule mod)
{
    CHECK_INIT();
    return image_count(count, mod, MAGIC_MODULE);
}

EXPORT CUresult cuModuleEnumerateFunctions(CUfunction *functions, unsigned int numFunctions, CUmodule mod)
{
    CHECK_INIT();
    return image_enumerate(functions, numFunctions, mod, MAGIC_MODULE);
}

EXPORT CUresult cuLibraryGetKernelCount(unsigned int *count, CUlibrary lib)
{
    CHECK_INIT();
    return image_count(count, lib, MAGIC_LIB);
}

EXPORT CUresult cuLibraryEnumerateKernels(CUkernel *kernels, unsigned int numKernels, CUlibrary lib)
{
    CHECK_INIT();
    return image_enumerate(kernels, numKernels, lib, MAGIC_LIB);
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *library, const void *code, CUjit_option *jitOptions,
                                  void **jitOptionsValues, unsigned int numJitOptions,
                                  CUlibraryOption *libraryOptions, void **libraryOptionValues,
                                  unsigned int numLibraryOptions)
{
    struct image *m;
    (void)jitOptions;
    (void)jitOptionsValues;
    (void)numJitOptions;
    (void)libraryOptions;
    (void)libraryOptionValues;
    (void)numLibraryOptions;
    CHECK_INIT();
    if (!library || !code)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    m = image_new(MAGIC_LIB, code, NULL);  /* libraries are context-independent */
    if (m)
        *library = (CUlibrary)m;
    UNLOCK();
    return m ? CUDA_SUCCESS : CUDA_ERROR_INVALID_IMAGE;
}

EXPORT CUresult cuLibraryUnload(CUlibrary library)
{
    CHECK_INIT();
    return image_unload_checked(library, MAGIC_LIB);
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *pKernel, CUlibrary library, const char *name)
{
    struct fobj *k;
    CUresult e;
    CHECK_INIT();
    if (!pKernel || !name)
        return CUDA_ERROR_INVALID_VALUE;
    e = image_get(&k, library, MAGIC_LIB, name);
    if (!e)
        *pKernel = (CUkernel)k;
    return e;
}

EXPORT CUresult cuKernelGetFunction(CUfunction *pFunc, CUkernel kernel)
{
    struct fobj *k = (struct fobj *)kernel;
    struct ctx *c;
    CUresult e;
    CHECK_INIT();
    if (!pFunc)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = need_ctx(&c);
    if (!e) {
        if (!is_obj(k, MAGIC_KERNEL) || !k->img->funcs)
            e = CUDA_ERROR_INVALID_HANDLE;
        else  /* one CUfunction per kernel, shared by all contexts in this fake */
            *pFunc = (CUfunction)&k->img->funcs[k->idx];
    }
    UNLOCK();
    return e;
}

EXPORT CUresult cuFuncGetName(const char **name, CUfunction hfunc)
{
    struct fobj *f = (struct fobj *)hfunc;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(f, MAGIC_FUNC))
        e = CUDA_ERROR_INVALID_HANDLE;  /* a CUkernel is not a CUfunction: like the real one */
    else
        *name = f->k->name;
    UNLOCK();
    return e;
}

EXPORT CUresult cuKernelGetName(const char **name, CUkernel hfunc)
{
    struct fobj *k = (struct fobj *)hfunc;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    if (!name)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(k, MAGIC_KERNEL))
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        *name = k->k->name;
    UNLOCK();
    return e;
}

/* ------------------------------------------------------------------------------------ */
/* Launches                                                                               */

static CUresult launch(CUfunction hf, const struct kdims *d, int launch_type, CUstream hs, int ptsz,
                       void **params, void **extra, const char *api)
{
    unsigned gx = d->gx, gy = d->gy, gz = d->gz, bx = d->bx, by = d->by, bz = d->bz;
    struct fobj *f = (struct fobj *)hf;
    struct stream *s = NULL;
    struct kname *kn;
    struct fakecuda_kernel_activity act;
    fakecuda_activity_fn sink = NULL;
    void *sink_arg = NULL;
    uint32_t corr;
    CUresult e = CUDA_SUCCESS;
    LOCK();
    corr = ++g_next_corr;
    if (!f) {
        g_cnt.launch_invalid++;
        e = CUDA_ERROR_INVALID_VALUE;
        goto out;
    }
    if (!is_fn(f)) {
        g_cnt.launch_invalid++;
        e = CUDA_ERROR_INVALID_HANDLE;
        goto out;
    }
    kn = f->k->cnt;
    kn->launch++;
    if (gx == 0 || gy == 0 || gz == 0 || bx == 0 || by == 0 || bz == 0 || bx * by * bz > 1024 ||
        gy > 65535 || gz > 65535 || (params && extra)) {
        e = CUDA_ERROR_INVALID_VALUE;
        goto fail;
    }
    e = resolve_stream(hs, ptsz, &s);
    if (e)
        goto fail;
    if (f->magic == MAGIC_FUNC && f->ctx && (f->ctx != s->ctx || f->gen != s->ctx->gen)) {
        e = CUDA_ERROR_INVALID_HANDLE;  /* a module function used in another context */
        goto fail;
    }
    if (s->cap_status == CAP_INVALIDATED) {
        e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        goto fail;
    }
    if (s->cap_status == CAP_ACTIVE) {
        e = graph_add(s->cap_graph, f->k, d, NULL);
        if (e)
            goto fail;
        kn->captured++;
        goto out;
    }
    if (legacy_conflict(s, 1)) {
        e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        goto fail;
    }
    /* A "lazy..." kernel behaves like a first launch that loads its module: the launch call
     * itself waits for the stream's earlier work, a stream wait included (at most 3 s). */
    if (strncmp(f->k->name, "lazy", 4) == 0 && stream_gated(s)) {
        int polls = 0;
        g_cnt.lazy_blocked++;
        while (stream_gated(s) && polls++ < 30000) {
            UNLOCK();
            sleep_until(now_ns() + 100000);
            LOCK();
        }
        if (stream_gated(s)) {
            g_cnt.lazy_timeout++;
            e = CUDA_ERROR_LAUNCH_TIMEOUT;
            goto fail;
        }
    }
    sink = sink_take(&sink_arg);
    stream_run(s, f->k, sink ? &act : NULL);
    if (sink) {
        act.correlation_id = corr;
        act.grid_x = (int32_t)gx;
        act.grid_y = (int32_t)gy;
        act.grid_z = (int32_t)gz;
        act.block_x = (int32_t)bx;
        act.block_y = (int32_t)by;
        act.block_z = (int32_t)bz;
        act.dynamic_shared_memory = (int32_t)d->shmem;
        act.launch_type = (uint8_t)launch_type;
    }
    kn->ok++;
    goto out;
fail:
    kn->failed++;
out:
    UNLOCK();
    if (sink)
        sink_call(sink, sink_arg, &act, 1);
    TRACE("%s%s(%s, grid=%u, stream=%p) = %d clock=%" PRIu64, api, ptsz ? "_ptsz" : "",
          (e != CUDA_ERROR_INVALID_HANDLE && f) ? f->k->name : "?", gx,
          (void *)hs, (int)e, s ? s->clock_ns : 0);
    return e;
}

/* ---- pinned host memory and stream waits (launch gates) ---- */

/* Pinned host memory the fake handed out (cuMemHostAlloc), for cuPointerGetAttributes: a few
 * ranges are enough for the tests. */
#define FAKE_PINNED 64
static struct { uintptr_t p; size_t n; } g_pinned[FAKE_PINNED];

static int is_pinned(uintptr_t p)
{
    for (int i = 0; i < FAKE_PINNED; i++)
        if (g_pinned[i].p && p >= g_pinned[i].p && p < g_pinned[i].p + g_pinned[i].n)
            return 1;
    return 0;
}

EXPORT CUresult cuMemHostAlloc(void **pp, size_t bytes, unsigned int flags)
{
    (void)flags;
    CHECK_INIT();
    if (!pp)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (g_hostalloc_fails) {
        g_hostalloc_fails--;
        UNLOCK();
        *pp = NULL;
        return CUDA_ERROR_OUT_OF_MEMORY;
    }
    UNLOCK();
    *pp = calloc(1, bytes ? bytes : 1);
    if (*pp) {
        LOCK();
        for (int i = 0; i < FAKE_PINNED; i++)
            if (!g_pinned[i].p) {
                g_pinned[i].p = (uintptr_t)*pp;
                g_pinned[i].n = bytes ? bytes : 1;
                break;
            }
        UNLOCK();
    }
    return *pp ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemFreeHost(void *p)
{
    CHECK_INIT();
    LOCK();
    for (int i = 0; i < FAKE_PINNED; i++)
        if (p && g_pinned[i].p == (uintptr_t)p)
            g_pinned[i].p = 0;
    UNLOCK();
    free(p);
    return CUDA_SUCCESS;
}

EXPORT CUresult cuMemHostGetDevicePointer_v2(CUdeviceptr *d, void *p, unsigned int flags)
{
    (void)flags;
    CHECK_INIT();
    if (!d || !p)
        return CUDA_ERROR_INVALID_VALUE;
    *d = (CUdeviceptr)(uintptr_t)p; /* unified addressing */
    return CUDA_SUCCESS;
}

static CUresult stream_wait32(CUstream hs, CUdeviceptr addr, cuuint32_t value, unsigned int flags,
                              int ptsz)
{
    struct stream *s = NULL;
    CUresult e;
    if (!addr || flags != CU_STREAM_WAIT_VALUE_EQ)
        return CUDA_ERROR_INVALID_VALUE; /* only what ktime uses */
    LOCK();
    e = resolve_stream(hs, ptsz, &s);
    if (!e) {
        g_cnt.stream_wait++;
        s->wait_addr = (volatile uint32_t *)(uintptr_t)addr;
        s->wait_val = value;
    }
    UNLOCK();
    return e;
}

/* Device memory: addresses only (nothing behind them), from a range no host pointer uses.
 * FAKECUDA_MEMALLOC_FAILS=N: the first N calls fail with CUDA_ERROR_OUT_OF_MEMORY. */
static uint64_t g_next_dptr = 0x7d0000000000ull;
static uint64_t g_memalloc_fails = UINT64_MAX; /* read once: UINT64_MAX = not yet */
static uint64_t g_memset_ns = UINT64_MAX;

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *d, size_t bytes)
{
    struct ctx *c;
    CUresult e;
    CHECK_INIT();
    if (!d || !bytes)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (g_memalloc_fails == UINT64_MAX)
        g_memalloc_fails = env_u64("FAKECUDA_MEMALLOC_FAILS", 0, UINT64_MAX - 1);
    e = need_ctx(&c);
    if (!e && g_memalloc_fails > 0) {
        g_memalloc_fails--;
        e = CUDA_ERROR_OUT_OF_MEMORY;
    }
    if (!e) {
        *d = (CUdeviceptr)g_next_dptr;
        g_next_dptr += (bytes + 0xffff) & ~(uint64_t)0xffff;
        g_cnt.mem_alloc++;
        g_cnt.mem_alloc_bytes += bytes;
    }
    UNLOCK();
    return e;
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr d)
{
    CHECK_INIT();
    return d ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* A memset takes FAKECUDA_MEMSET_NS (default 375000) of its stream's simulated time: one
 * inside an event pair shows in the interval. Into a capture it is counted, not run. */
static CUresult memset32(CUdeviceptr d, size_t n, CUstream hs, int ptsz)
{
    struct stream *s = NULL;
    CUresult e;
    if (!d || d < 0x7d0000000000ull || d + 4 * (uint64_t)n > g_next_dptr)
        return CUDA_ERROR_INVALID_VALUE; /* not memory cuMemAlloc gave */
    LOCK();
    e = resolve_stream(hs, ptsz, &s);
    if (!e) {
        if (s->cap_status == CAP_ACTIVE) {
            g_cnt.memset32_captured++;
        } else {
            uint64_t t = now_ns() + g_delay_ns;
            if (g_memset_ns == UINT64_MAX)
                g_memset_ns = env_u64("FAKECUDA_MEMSET_NS", 375000, 1000000000);
            s->clock_ns += g_memset_ns;
            if (t > s->busy_until)
                s->busy_until = t;
            g_cnt.memset32++;
            g_cnt.memset32_bytes += 4 * (uint64_t)n;
        }
    }
    UNLOCK();
    return e;
}

PTSZ_PAIR(cuMemsetD32Async, (CUdeviceptr d, unsigned int ui, size_t n, CUstream hStream),
          ((void)ui, memset32(d, n, hStream, ptsz)))

/* ---- copies and sets (memory operations) ----
 * Device memory is what cuMemAlloc gave (an address range, nothing behind it: no byte is ever
 * moved); host memory is any other address, pinned when cuMemHostAlloc gave it. A copy takes
 * FAKECUDA_COPY_NS (default 2000) plus one ns per 10 bytes (10 GB/s) of its stream's simulated
 * time, a set FAKECUDA_MEMSET_NS as above; a synchronous one returns once its stream is done,
 * as the real ones do. Into a capture they are counted, not run. */
enum fake_copy_kind { FK_HTOD, FK_DTOH, FK_DTOD, FK_HTOH, FK_PEER, FK_MEMSET };
static uint64_t g_copy_ns = UINT64_MAX;

static int is_dev(uint64_t p)
{
    return p >= 0x7d0000000000ull && p < g_next_dptr;
}

static CUresult memop(int kind, uint64_t bytes, CUstream hs, int ptsz, int sync)
{
    struct stream *s = NULL;
    uint64_t until = 0;
    CUresult e;
    LOCK();
    e = resolve_stream(hs, ptsz, &s);
    if (!e && s->cap_status == CAP_ACTIVE) {
        if (sync)
            e = CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED;
        else
            g_cnt.copy_captured++;
    } else if (!e) {
        uint64_t t = now_ns() + g_delay_ns;
        if (g_copy_ns == UINT64_MAX)
            g_copy_ns = env_u64("FAKECUDA_COPY_NS", 2000, 1000000000);
        if (g_memset_ns == UINT64_MAX)
            g_memset_ns = env_u64("FAKECUDA_MEMSET_NS", 375000, 1000000000);
        if (sync && stream_gated(s))
            g_cnt.copy_sync_gated++;
        s->clock_ns += kind == FK_MEMSET ? g_memset_ns : g_copy_ns + bytes / 10;
        if (t > s->busy_until)
            s->busy_until = t;
        g_cnt.copy[kind]++;
        g_cnt.copy_bytes[kind] += bytes;
        until = s->busy_until;
    }
    UNLOCK();
    if (!e && sync)
        sleep_until(until);
    return e;
}

static int kind_of(uint64_t dst, uint64_t src)
{
    if (is_dev(dst))
        return is_dev(src) ? FK_DTOD : FK_HTOD;
    return is_dev(src) ? FK_DTOH : FK_HTOH;
}

#define FAKE_SYNC(name, params, ...) \
    EXPORT CUresult name params { const int ptsz = 0; (void)ptsz; CHECK_INIT(); return __VA_ARGS__; } \
    EXPORT CUresult name##_ptds params { const int ptsz = 1; (void)ptsz; CHECK_INIT(); return __VA_ARGS__; }

FAKE_SYNC(cuMemcpyHtoD_v2, (CUdeviceptr d, const void *h, size_t n),
          is_dev(d) && h ? memop(FK_HTOD, n, NULL, ptsz, 1) : CUDA_ERROR_INVALID_VALUE)
FAKE_SYNC(cuMemcpyDtoH_v2, (void *h, CUdeviceptr d, size_t n),
          is_dev(d) && h ? memop(FK_DTOH, n, NULL, ptsz, 1) : CUDA_ERROR_INVALID_VALUE)
FAKE_SYNC(cuMemcpyDtoD_v2, (CUdeviceptr d, CUdeviceptr s, size_t n),
          is_dev(d) && is_dev(s) ? memop(FK_DTOD, n, NULL, ptsz, 1) : CUDA_ERROR_INVALID_VALUE)
FAKE_SYNC(cuMemcpy, (CUdeviceptr d, CUdeviceptr s, size_t n),
          d && s ? memop(kind_of(d, s), n, NULL, ptsz, 1) : CUDA_ERROR_INVALID_VALUE)
FAKE_SYNC(cuMemsetD8_v2, (CUdeviceptr d, unsigned char v, size_t n),
          ((void)v, is_dev(d) ? memop(FK_MEMSET, n, NULL, ptsz, 1) : CUDA_ERROR_INVALID_VALUE))
PTSZ_PAIR(cuMemcpyHtoDAsync_v2, (CUdeviceptr d, const void *h, size_t n, CUstream hs),
          is_dev(d) && h ? memop(FK_HTOD, n, hs, ptsz, !is_pinned((uintptr_t)h))
                         : CUDA_ERROR_INVALID_VALUE)
PTSZ_PAIR(cuMemcpyDtoHAsync_v2, (void *h, CUdeviceptr d, size_t n, CUstream hs),
          is_dev(d) && h ? memop(FK_DTOH, n, hs, ptsz, !is_pinned((uintptr_t)h))
                         : CUDA_ERROR_INVALID_VALUE)
PTSZ_PAIR(cuMemcpyDtoDAsync_v2, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream hs),
          is_dev(d) && is_dev(s) ? memop(FK_DTOD, n, hs, ptsz, 0) : CUDA_ERROR_INVALID_VALUE)
PTSZ_PAIR(cuMemcpyAsync, (CUdeviceptr d, CUdeviceptr s, size_t n, CUstream hs),
          d && s ? memop(kind_of(d, s), n, hs, ptsz,
                         (!is_dev(d) && !is_pinned(d)) || (!is_dev(s) && !is_pinned(s)))
                 : CUDA_ERROR_INVALID_VALUE)
PTSZ_PAIR(cuMemcpyPeerAsync, (CUdeviceptr d, CUcontext dc, CUdeviceptr s, CUcontext sc, size_t n,
                              CUstream hs),
          is_dev(d) && is_dev(s) ? memop(dc != sc ? FK_PEER : FK_DTOD, n, hs, ptsz, 0)
                                 : CUDA_ERROR_INVALID_VALUE)
PTSZ_PAIR(cuMemsetD8Async, (CUdeviceptr d, unsigned char v, size_t n, CUstream hs),
          ((void)v, is_dev(d) ? memop(FK_MEMSET, n, hs, ptsz, 0) : CUDA_ERROR_INVALID_VALUE))
PTSZ_PAIR(cuMemsetD2D32Async, (CUdeviceptr d, size_t pitch, unsigned int v, size_t w, size_t h,
                               CUstream hs),
          ((void)v, is_dev(d) && pitch >= 4 * w ? memop(FK_MEMSET, 4 * (uint64_t)w * h, hs, ptsz, 0)
                                                : CUDA_ERROR_INVALID_VALUE))
PTSZ_PAIR(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *c, CUstream hs),
          !c ? CUDA_ERROR_INVALID_VALUE
             : memop(c->srcMemoryType == CU_MEMORYTYPE_HOST
                         ? (c->dstMemoryType == CU_MEMORYTYPE_HOST ? FK_HTOH : FK_HTOD)
                         : (c->dstMemoryType == CU_MEMORYTYPE_HOST ? FK_DTOH : FK_DTOD),
                     (uint64_t)c->WidthInBytes * c->Height, hs, ptsz,
                     (c->srcMemoryType == CU_MEMORYTYPE_HOST && !is_pinned((uintptr_t)c->srcHost)) ||
                         (c->dstMemoryType == CU_MEMORYTYPE_HOST && !is_pinned((uintptr_t)c->dstHost))))

/* What ktime asks of a pointer: its memory type (0 for pageable host memory, as the real
 * driver answers an address it does not know) and device ordinal. */
EXPORT CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                       CUdeviceptr p)
{
    CHECK_INIT();
    if (!attrs || !data)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    for (unsigned int i = 0; i < n; i++) {
        if (!data[i])
            continue;
        if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            *(unsigned int *)data[i] = is_dev(p) ? CU_MEMORYTYPE_DEVICE
                                       : is_pinned(p) ? CU_MEMORYTYPE_HOST : 0;
        else if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
            *(int *)data[i] = is_dev(p) ? 0 : -2;
    }
    UNLOCK();
    return CUDA_SUCCESS;
}

PTSZ_PAIR(cuStreamWaitValue32_v2, (CUstream s, CUdeviceptr addr, cuuint32_t value, unsigned int flags),
          stream_wait32(s, addr, value, flags, ptsz))

PTSZ_PAIR(cuLaunchKernel,
          (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
           unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
           CUstream hStream, void **kernelParams, void **extra),
          launch(f, &(struct kdims){ gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes },
                 0, hStream, ptsz, kernelParams, extra, "cuLaunchKernel"))

static CUresult launch_ex(const CUlaunchConfig *config, CUfunction f, void **params, void **extra, int ptsz)
{
    int coop = 0;
    unsigned i;
    if (!config || (config->numAttrs && !config->attrs)) {
        LOCK();
        if (is_fn(f)) {
            ((struct fobj *)f)->k->cnt->launch++;
            ((struct fobj *)f)->k->cnt->failed++;
        } else {
            g_cnt.launch_invalid++;
        }
        UNLOCK();
        return CUDA_ERROR_INVALID_VALUE;
    }
    for (i = 0; i < config->numAttrs; i++)
        if (config->attrs[i].id == CU_LAUNCH_ATTRIBUTE_COOPERATIVE && config->attrs[i].value.cooperative)
            coop = 1;
    return launch(f,
                  &(struct kdims){ config->gridDimX, config->gridDimY, config->gridDimZ, config->blockDimX,
                                   config->blockDimY, config->blockDimZ, config->sharedMemBytes },
                  coop, config->hStream, ptsz, params, extra, "cuLaunchKernelEx");
}

PTSZ_PAIR(cuLaunchKernelEx, (const CUlaunchConfig *config, CUfunction f, void **kernelParams, void **extra),
          launch_ex(config, f, kernelParams, extra, ptsz))

PTSZ_PAIR(cuLaunchCooperativeKernel,
          (CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
           unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ, unsigned int sharedMemBytes,
           CUstream hStream, void **kernelParams),
          launch(f, &(struct kdims){ gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY, blockDimZ, sharedMemBytes },
                 1, hStream, ptsz, kernelParams, NULL, "cuLaunchCooperativeKernel"))

/* ------------------------------------------------------------------------------------ */
/* Graphs                                                                                 */

EXPORT CUresult cuGraphCreate(CUgraph *phGraph, unsigned int flags)
{
    struct graph *g;
    CHECK_INIT();
    if (!phGraph || flags)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    g = graph_new(MAGIC_GRAPH);
    UNLOCK();
    if (!g)
        return CUDA_ERROR_OUT_OF_MEMORY;
    *phGraph = (CUgraph)g;
    return CUDA_SUCCESS;
}

static CUresult add_kernel_node(CUgraphNode *ph, CUgraph hg, CUfunction func, CUkernel kern, const struct kdims *d)
{
    struct graph *g = (struct graph *)hg;
    struct fobj *f = func ? (struct fobj *)func : (struct fobj *)kern;
    struct gnode *n = NULL;
    CUresult e;
    if (!ph || !f || d->gx == 0)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(g, MAGIC_GRAPH) || !is_fn(f))
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        e = graph_add(g, f->k, d, &n);
    UNLOCK();
    if (!e)
        *ph = (CUgraphNode)n;
    return e;
}

EXPORT CUresult cuGraphAddEmptyNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                    size_t numDependencies)
{
    struct graph *g = (struct graph *)hGraph;
    struct gnode *n = NULL;
    CUresult e;
    (void)dependencies;
    (void)numDependencies;
    CHECK_INIT();
    if (!phGraphNode)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    e = is_obj(g, MAGIC_GRAPH) ? graph_add(g, NULL, NULL, &n) : CUDA_ERROR_INVALID_HANDLE;
    UNLOCK();
    if (!e)
        *phGraphNode = (CUgraphNode)n;
    return e;
}

EXPORT CUresult cuGraphGetNodes(CUgraph hGraph, CUgraphNode *nodes, size_t *numNodes)
{
    struct graph *g = (struct graph *)hGraph;
    CUresult e = CUDA_SUCCESS;
    size_t i;
    CHECK_INIT();
    if (!numNodes)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(g, MAGIC_GRAPH)) {
        e = CUDA_ERROR_INVALID_HANDLE;
    } else if (!nodes) {
        *numNodes = (size_t)g->n;
    } else {
        for (i = 0; i < *numNodes && i < (size_t)g->n; i++)
            nodes[i] = (CUgraphNode)g->nodes[i];
        *numNodes = i;
    }
    UNLOCK();
    return e;
}

EXPORT CUresult cuGraphNodeGetType(CUgraphNode hNode, CUgraphNodeType *type)
{
    struct gnode *n = (struct gnode *)hNode;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    if (!type)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(n, MAGIC_NODE))
        e = CUDA_ERROR_INVALID_HANDLE;
    else
        *type = n->k ? CU_GRAPH_NODE_TYPE_KERNEL : CU_GRAPH_NODE_TYPE_EMPTY;
    UNLOCK();
    return e;
}

EXPORT CUresult cuGraphAddKernelNode_v2(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                        size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS *nodeParams)
{
    (void)dependencies;
    (void)numDependencies;
    CHECK_INIT();
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    return add_kernel_node(phGraphNode, hGraph, nodeParams->func, nodeParams->func ? NULL : nodeParams->kern,
                           &(struct kdims){ nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ,
                                            nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ,
                                            nodeParams->sharedMemBytes });
}

EXPORT CUresult cuGraphAddKernelNode(CUgraphNode *phGraphNode, CUgraph hGraph, const CUgraphNode *dependencies,
                                     size_t numDependencies, const CUDA_KERNEL_NODE_PARAMS_v1 *nodeParams)
{
    (void)dependencies;
    (void)numDependencies;
    CHECK_INIT();
    if (!nodeParams)
        return CUDA_ERROR_INVALID_VALUE;
    return add_kernel_node(phGraphNode, hGraph, nodeParams->func, NULL,
                           &(struct kdims){ nodeParams->gridDimX, nodeParams->gridDimY, nodeParams->gridDimZ,
                                            nodeParams->blockDimX, nodeParams->blockDimY, nodeParams->blockDimZ,
                                            nodeParams->sharedMemBytes });
}

static CUresult instantiate(CUgraphExec *pe, CUgraph hg)
{
    struct graph *g = (struct graph *)hg, *x;
    CUresult e = CUDA_SUCCESS;
    int i;
    if (!pe)
        return CUDA_ERROR_INVALID_VALUE;
    LOCK();
    if (!is_obj(g, MAGIC_GRAPH)) {
        UNLOCK();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    x = graph_new(MAGIC_EXEC);
    if (!x)
        e = CUDA_ERROR_OUT_OF_MEMORY;
    else
        x->src_id = g->id;
    for (i = 0; !e && i < g->n; i++)
        e = graph_add_node(x, g->nodes[i]);
    UNLOCK();
    if (e)
        return e;
    *pe = (CUgraphExec)x;
    return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *phGraphExec, CUgraph hGraph, unsigned long long flags)
{
    (void)flags;
    CHECK_INIT();
    return instantiate(phGraphExec, hGraph);
}

static CUresult instantiate_params(CUgraphExec *pe, CUgraph hg, CUDA_GRAPH_INSTANTIATE_PARAMS *p)
{
    CUresult e = instantiate(pe, hg);
    if (p) {
        p->hErrNode_out = NULL;
        p->result_out = e ? CUDA_GRAPH_INSTANTIATE_ERROR : CUDA_GRAPH_INSTANTIATE_SUCCESS;
    }
    return e;
}

/* The per-thread twin exists in the real driver; instantiation involves no stream. */
PTSZ_PAIR(cuGraphInstantiateWithParams,
          (CUgraphExec *phGraphExec, CUgraph hGraph, CUDA_GRAPH_INSTANTIATE_PARAMS *instantiateParams),
          instantiate_params(phGraphExec, hGraph, instantiateParams))

EXPORT CUresult cuGraphInstantiate_v2(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                      char *logBuffer, size_t bufferSize)
{
    (void)phErrorNode;
    if (logBuffer && bufferSize)
        logBuffer[0] = '\0';
    CHECK_INIT();
    return instantiate(phGraphExec, hGraph);
}

EXPORT CUresult cuGraphInstantiate(CUgraphExec *phGraphExec, CUgraph hGraph, CUgraphNode *phErrorNode,
                                   char *logBuffer, size_t bufferSize)
{
    (void)phErrorNode;
    if (logBuffer && bufferSize)
        logBuffer[0] = '\0';
    CHECK_INIT();
    return instantiate(phGraphExec, hGraph);
}

static CUresult graph_launch(CUgraphExec hx, CUstream hs, int ptsz)
{
    struct graph *x = (struct graph *)hx;
    struct stream *s;
    struct fakecuda_kernel_activity *acts = NULL;
    fakecuda_activity_fn sink = NULL;
    void *sink_arg = NULL;
    uint32_t corr;
    CUresult e;
    int i, nact = 0;
    LOCK();
    corr = ++g_next_corr;
    if (!is_obj(x, MAGIC_EXEC)) {
        UNLOCK();
        return CUDA_ERROR_INVALID_HANDLE;
    }
    e = resolve_stream(hs, ptsz, &s);
    if (e)
        goto out;
    if (s->cap_status == CAP_INVALIDATED) {
        e = CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
        goto out;
    }
    if (s->cap_status == CAP_ACTIVE) {  /* captured as a child graph */
        for (i = 0; !e && i < x->n; i++)
            e = graph_add(s->cap_graph, x->nodes[i]->k, &x->nodes[i]->d, NULL);
        goto out;
    }
    if (legacy_conflict(s, 1)) {
        e = CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
        goto out;
    }
    sink = sink_take(&sink_arg);
    if (sink && x->n > 0)
        acts = calloc((size_t)x->n, sizeof *acts);  /* out of memory: no activity reported */
    for (i = 0; i < x->n; i++) {
        struct kdef *k = x->nodes[i]->k;
        struct fakecuda_kernel_activity *a = acts ? &acts[nact] : NULL;
        if (!k)
            continue;
        stream_run(s, k, a);
        if (a) {
            a->correlation_id = corr;
            a->graph_id = x->src_id;
            a->graph_node_id = x->nodes[i]->id;
            a->grid_x = (int32_t)x->nodes[i]->d.gx;
            a->grid_y = (int32_t)x->nodes[i]->d.gy;
            a->grid_z = (int32_t)x->nodes[i]->d.gz;
            a->block_x = (int32_t)x->nodes[i]->d.bx;
            a->block_y = (int32_t)x->nodes[i]->d.by;
            a->block_z = (int32_t)x->nodes[i]->d.bz;
            a->dynamic_shared_memory = (int32_t)x->nodes[i]->d.shmem;
            nact++;
        }
        k->cnt->graph_runs++;
        g_cnt.graph_kernel_runs++;
    }
    g_cnt.graph_launch++;
out:
    UNLOCK();
    if (sink)
        sink_call(sink, sink_arg, acts, nact);
    free(acts);
    TRACE("cuGraphLaunch%s(%p, %p) = %d", ptsz ? "_ptsz" : "", (void *)hx, (void *)hs, (int)e);
    return e;
}

PTSZ_PAIR(cuGraphLaunch, (CUgraphExec hGraphExec, CUstream hStream), graph_launch(hGraphExec, hStream, ptsz))

EXPORT CUresult cuGraphDestroy(CUgraph hGraph)
{
    struct graph *g = (struct graph *)hGraph;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    LOCK();
    if (!is_obj(g, MAGIC_GRAPH))
        e = CUDA_ERROR_INVALID_VALUE;
    else
        g->magic = MAGIC_DEAD;
    UNLOCK();
    return e;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec hGraphExec)
{
    struct graph *g = (struct graph *)hGraphExec;
    CUresult e = CUDA_SUCCESS;
    CHECK_INIT();
    LOCK();
    if (!is_obj(g, MAGIC_EXEC))
        e = CUDA_ERROR_INVALID_VALUE;
    else
        g->magic = MAGIC_DEAD;
    UNLOCK();
    return e;
}

/* ------------------------------------------------------------------------------------ */
/* The profiler API: no profiler here, so they only count (CUDA_SUCCESS once initialised). */

static CUresult profiler_call(uint64_t *count)
{
    CUresult r = CUDA_SUCCESS;
    LOCK();
    if (!g_initialized || g_deinit)
        r = g_deinit ? CUDA_ERROR_DEINITIALIZED : CUDA_ERROR_NOT_INITIALIZED;
    else
        (*count)++;
    UNLOCK();
    return r;
}

EXPORT CUresult cuProfilerStart(void)
{
    return profiler_call(&g_cnt.profiler_start);
}

EXPORT CUresult cuProfilerStop(void)
{
    return profiler_call(&g_cnt.profiler_stop);
}

/* ------------------------------------------------------------------------------------ */
/* cuGetProcAddress                                                                       */

/* Exported symbols the driver hands out: base name, first CUDA version that maps the base
 * name to this symbol, whether it is the per-thread-default-stream variant, symbol. */
#define PROC_TABLE(X) \
    X("cuGetErrorString", 6000, 0, cuGetErrorString) \
    X("cuGetErrorName", 6000, 0, cuGetErrorName) \
    X("cuInit", 2000, 0, cuInit) \
    X("cuDriverGetVersion", 2020, 0, cuDriverGetVersion) \
    X("cuDeviceGet", 2000, 0, cuDeviceGet) \
    X("cuDeviceGetCount", 2000, 0, cuDeviceGetCount) \
    X("cuDeviceGetName", 2000, 0, cuDeviceGetName) \
    X("cuDeviceGetAttribute", 2000, 0, cuDeviceGetAttribute) \
    X("cuDeviceTotalMem", 3020, 0, cuDeviceTotalMem_v2) \
    X("cuDeviceGetUuid", 11040, 0, cuDeviceGetUuid_v2) \
    X("cuDeviceGetPCIBusId", 4010, 0, cuDeviceGetPCIBusId) \
    X("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain) \
    X("cuDevicePrimaryCtxRelease", 7000, 0, cuDevicePrimaryCtxRelease) \
    X("cuDevicePrimaryCtxRelease", 11000, 0, cuDevicePrimaryCtxRelease_v2) \
    X("cuDevicePrimaryCtxReset", 7000, 0, cuDevicePrimaryCtxReset) \
    X("cuDevicePrimaryCtxReset", 11000, 0, cuDevicePrimaryCtxReset_v2) \
    X("cuDevicePrimaryCtxGetState", 7000, 0, cuDevicePrimaryCtxGetState) \
    X("cuCtxCreate", 2000, 0, cuCtxCreate) \
    X("cuCtxCreate", 3020, 0, cuCtxCreate_v2) \
    X("cuCtxCreate", 11040, 0, cuCtxCreate_v3) \
    X("cuCtxCreate", 12050, 0, cuCtxCreate_v4) \
    X("cuCtxDestroy", 2000, 0, cuCtxDestroy) \
    X("cuCtxDestroy", 4000, 0, cuCtxDestroy_v2) \
    X("cuCtxPushCurrent", 2000, 0, cuCtxPushCurrent) \
    X("cuCtxPushCurrent", 4000, 0, cuCtxPushCurrent_v2) \
    X("cuCtxPopCurrent", 2000, 0, cuCtxPopCurrent) \
    X("cuCtxPopCurrent", 4000, 0, cuCtxPopCurrent_v2) \
    X("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent) \
    X("cuCtxGetCurrent", 4000, 0, cuCtxGetCurrent) \
    X("cuCtxGetDevice", 2000, 0, cuCtxGetDevice) \
    X("cuCtxGetId", 12000, 0, cuCtxGetId) \
    X("cuCtxGetFlags", 7000, 0, cuCtxGetFlags) \
    X("cuCtxSynchronize", 2000, 0, cuCtxSynchronize) \
    X("cuStreamCreate", 2000, 0, cuStreamCreate) \
    X("cuStreamCreateWithPriority", 5050, 0, cuStreamCreateWithPriority) \
    X("cuStreamDestroy", 2000, 0, cuStreamDestroy) \
    X("cuStreamDestroy", 4000, 0, cuStreamDestroy_v2) \
    X("cuStreamSynchronize", 2000, 0, cuStreamSynchronize) \
    X("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz) \
    X("cuStreamQuery", 2000, 0, cuStreamQuery) \
    X("cuStreamQuery", 7000, 1, cuStreamQuery_ptsz) \
    X("cuStreamGetCtx", 9020, 0, cuStreamGetCtx) \
    X("cuStreamGetCtx", 9020, 1, cuStreamGetCtx_ptsz) \
    X("cuStreamGetId", 12000, 0, cuStreamGetId) \
    X("cuStreamGetId", 12000, 1, cuStreamGetId_ptsz) \
    X("cuStreamGetFlags", 5050, 0, cuStreamGetFlags) \
    X("cuStreamGetFlags", 7000, 1, cuStreamGetFlags_ptsz) \
    X("cuStreamWaitEvent", 3020, 0, cuStreamWaitEvent) \
    X("cuStreamWaitEvent", 7000, 1, cuStreamWaitEvent_ptsz) \
    X("cuStreamBeginCapture", 10000, 0, cuStreamBeginCapture) \
    X("cuStreamBeginCapture", 10000, 1, cuStreamBeginCapture_ptsz) \
    X("cuStreamBeginCapture", 10010, 0, cuStreamBeginCapture_v2) \
    X("cuStreamBeginCapture", 10010, 1, cuStreamBeginCapture_v2_ptsz) \
    X("cuStreamEndCapture", 10000, 0, cuStreamEndCapture) \
    X("cuStreamEndCapture", 10000, 1, cuStreamEndCapture_ptsz) \
    X("cuStreamIsCapturing", 10000, 0, cuStreamIsCapturing) \
    X("cuStreamIsCapturing", 10000, 1, cuStreamIsCapturing_ptsz) \
    X("cuStreamGetCaptureInfo", 12030, 0, cuStreamGetCaptureInfo_v3) \
    X("cuStreamGetCaptureInfo", 12030, 1, cuStreamGetCaptureInfo_v3_ptsz) \
    X("cuEventCreate", 2000, 0, cuEventCreate) \
    X("cuEventDestroy", 2000, 0, cuEventDestroy) \
    X("cuEventDestroy", 4000, 0, cuEventDestroy_v2) \
    X("cuMemHostAlloc", 2020, 0, cuMemHostAlloc) \
    X("cuMemFreeHost", 2000, 0, cuMemFreeHost) \
    X("cuMemHostGetDevicePointer", 3020, 0, cuMemHostGetDevicePointer_v2) \
    X("cuStreamWaitValue32", 11070, 0, cuStreamWaitValue32_v2) \
    X("cuMemAlloc", 3020, 0, cuMemAlloc_v2) \
    X("cuMemFree", 3020, 0, cuMemFree_v2) \
    X("cuMemsetD32Async", 3020, 0, cuMemsetD32Async) \
    X("cuMemsetD32Async", 7000, 1, cuMemsetD32Async_ptsz) \
    X("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2) \
    X("cuMemcpyHtoD", 7000, 1, cuMemcpyHtoD_v2_ptds) \
    X("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2) \
    X("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds) \
    X("cuMemcpyDtoD", 3020, 0, cuMemcpyDtoD_v2) \
    X("cuMemcpyDtoD", 7000, 1, cuMemcpyDtoD_v2_ptds) \
    X("cuMemcpy", 4000, 0, cuMemcpy) \
    X("cuMemcpy", 7000, 1, cuMemcpy_ptds) \
    X("cuMemsetD8", 3020, 0, cuMemsetD8_v2) \
    X("cuMemsetD8", 7000, 1, cuMemsetD8_v2_ptds) \
    X("cuMemcpyHtoDAsync", 3020, 0, cuMemcpyHtoDAsync_v2) \
    X("cuMemcpyHtoDAsync", 7000, 1, cuMemcpyHtoDAsync_v2_ptsz) \
    X("cuMemcpyDtoHAsync", 3020, 0, cuMemcpyDtoHAsync_v2) \
    X("cuMemcpyDtoHAsync", 7000, 1, cuMemcpyDtoHAsync_v2_ptsz) \
    X("cuMemcpyDtoDAsync", 3020, 0, cuMemcpyDtoDAsync_v2) \
    X("cuMemcpyDtoDAsync", 7000, 1, cuMemcpyDtoDAsync_v2_ptsz) \
    X("cuMemcpyAsync", 4000, 0, cuMemcpyAsync) \
    X("cuMemcpyAsync", 7000, 1, cuMemcpyAsync_ptsz) \
    X("cuMemcpyPeerAsync", 4000, 0, cuMemcpyPeerAsync) \
    X("cuMemcpyPeerAsync", 7000, 1, cuMemcpyPeerAsync_ptsz) \
    X("cuMemsetD8Async", 3020, 0, cuMemsetD8Async) \
    X("cuMemsetD8Async", 7000, 1, cuMemsetD8Async_ptsz) \
    X("cuMemsetD2D32Async", 3020, 0, cuMemsetD2D32Async) \
    X("cuMemsetD2D32Async", 7000, 1, cuMemsetD2D32Async_ptsz) \
    X("cuMemcpy2DAsync", 3020, 0, cuMemcpy2DAsync_v2) \
    X("cuMemcpy2DAsync", 7000, 1, cuMemcpy2DAsync_v2_ptsz) \
    X("cuPointerGetAttributes", 7000, 0, cuPointerGetAttributes) \
    X("cuStreamWaitValue32", 11070, 1, cuStreamWaitValue32_v2_ptsz) \
    X("cuEventRecord", 2000, 0, cuEventRecord) \
    X("cuEventRecord", 7000, 1, cuEventRecord_ptsz) \
    X("cuEventRecordWithFlags", 11010, 0, cuEventRecordWithFlags) \
    X("cuEventRecordWithFlags", 11010, 1, cuEventRecordWithFlags_ptsz) \
    X("cuEventQuery", 2000, 0, cuEventQuery) \
    X("cuThreadExchangeStreamCaptureMode", 10010, 0, cuThreadExchangeStreamCaptureMode) \
    X("cuEventSynchronize", 2000, 0, cuEventSynchronize) \
    X("cuEventElapsedTime", 2000, 0, cuEventElapsedTime) \
    X("cuEventElapsedTime", 12080, 0, cuEventElapsedTime_v2) \
    X("cuModuleLoadData", 2000, 0, cuModuleLoadData) \
    X("cuModuleUnload", 2000, 0, cuModuleUnload) \
    X("cuModuleGetFunction", 2000, 0, cuModuleGetFunction) \
    X("cuModuleGetFunctionCount", 12040, 0, cuModuleGetFunctionCount) \
    X("cuModuleEnumerateFunctions", 12040, 0, cuModuleEnumerateFunctions) \
    X("cuLibraryGetKernelCount", 12040, 0, cuLibraryGetKernelCount) \
    X("cuLibraryEnumerateKernels", 12040, 0, cuLibraryEnumerateKernels) \
    X("cuLibraryLoadData", 12000, 0, cuLibraryLoadData) \
    X("cuLibraryUnload", 12000, 0, cuLibraryUnload) \
    X("cuLibraryGetKernel", 12000, 0, cuLibraryGetKernel) \
    X("cuKernelGetFunction", 12000, 0, cuKernelGetFunction) \
    X("cuKernelGetName", 12030, 0, cuKernelGetName) \
    X("cuFuncGetName", 12030, 0, cuFuncGetName) \
    X("cuLaunchKernel", 4000, 0, cuLaunchKernel) \
    X("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz) \
    X("cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx) \
    X("cuLaunchKernelEx", 11060, 1, cuLaunchKernelEx_ptsz) \
    X("cuLaunchCooperativeKernel", 9000, 0, cuLaunchCooperativeKernel) \
    X("cuLaunchCooperativeKernel", 9000, 1, cuLaunchCooperativeKernel_ptsz) \
    X("cuGraphCreate", 10000, 0, cuGraphCreate) \
    X("cuGraphAddKernelNode", 10000, 0, cuGraphAddKernelNode) \
    X("cuGraphAddKernelNode", 12000, 0, cuGraphAddKernelNode_v2) \
    X("cuGraphInstantiate", 10000, 0, cuGraphInstantiate) \
    X("cuGraphInstantiate", 11000, 0, cuGraphInstantiate_v2) \
    X("cuGraphInstantiateWithFlags", 11040, 0, cuGraphInstantiateWithFlags) \
    X("cuGraphInstantiateWithParams", 12000, 0, cuGraphInstantiateWithParams) \
    X("cuGraphInstantiateWithParams", 12000, 1, cuGraphInstantiateWithParams_ptsz) \
    X("cuGraphAddEmptyNode", 10000, 0, cuGraphAddEmptyNode) \
    X("cuGraphGetNodes", 10000, 0, cuGraphGetNodes) \
    X("cuGraphNodeGetType", 10000, 0, cuGraphNodeGetType) \
    X("cuGraphLaunch", 10000, 0, cuGraphLaunch) \
    X("cuGraphLaunch", 10000, 1, cuGraphLaunch_ptsz) \
    X("cuGraphDestroy", 10000, 0, cuGraphDestroy) \
    X("cuGraphExecDestroy", 10000, 0, cuGraphExecDestroy) \
    X("cuProfilerStart", 4000, 0, cuProfilerStart) \
    X("cuProfilerStop", 4000, 0, cuProfilerStop) \
    X("cuGetProcAddress", 11030, 0, cuGetProcAddress) \
    X("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2)

/* Hidden aliases: our own code addresses, which a preloaded library cannot interpose, so the
 * pointers we hand out equal what dlsym(handle_of_libcuda, "<versioned name>") returns. */
#define MAKE_ALIAS(base, ver, ptds, sym) \
    extern __typeof__(sym) local_##sym __attribute__((alias(#sym), visibility("hidden")));
#define MAKE_ENTRY(base, ver, ptds, sym) { base, ver, ptds, #sym, (void *)&local_##sym },

struct proc_entry {
    const char *base;
    int version;
    int ptds;
    const char *sym;
    void *fn;
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus);

static CUresult get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status);

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                                    CUdriverProcAddressQueryResult *symbolStatus)
{
    return get_proc(symbol, pfn, cudaVersion, flags, symbolStatus);
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags)
{
    return get_proc(symbol, pfn, cudaVersion, flags, NULL);
}

PROC_TABLE(MAKE_ALIAS)

static const struct proc_entry g_procs[] = { PROC_TABLE(MAKE_ENTRY) };

static CUresult get_proc(const char *symbol, void **pfn, int cudaVersion, cuuint64_t flags,
                         CUdriverProcAddressQueryResult *status)
{
    const struct proc_entry *best = NULL;
    int found_base = 0, pass;
    size_t i;
    int want_ptds = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
    if (!symbol || !pfn ||
        (flags & ~(cuuint64_t)(CU_GET_PROC_ADDRESS_LEGACY_STREAM | CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM)))
        return CUDA_ERROR_INVALID_VALUE;
    *pfn = NULL;
    /* Per-thread variant where one exists for this version, else the legacy one. */
    for (pass = want_ptds ? 1 : 0; pass >= 0 && !best; pass--) {
        for (i = 0; i < sizeof g_procs / sizeof g_procs[0]; i++) {
            const struct proc_entry *p = &g_procs[i];
            if (strcmp(p->base, symbol) != 0)
                continue;
            found_base = 1;
            if (p->ptds != pass || p->version > cudaVersion)
                continue;
            if (!best || p->version > best->version)
                best = p;
        }
    }
    if (!best) {
        if (status)
            *status = found_base ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT : CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
        TRACE("cuGetProcAddress(%s, %d, %llu) = NOT_FOUND", symbol, cudaVersion, (unsigned long long)flags);
        return CUDA_ERROR_NOT_FOUND;
    }
    *pfn = best->fn;
    if (status)
        *status = CU_GET_PROC_ADDRESS_SUCCESS;
    TRACE("cuGetProcAddress(%s, %d, %llu) = %s", symbol, cudaVersion, (unsigned long long)flags, best->sym);
    return CUDA_SUCCESS;
}
