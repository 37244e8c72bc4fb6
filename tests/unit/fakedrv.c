/* fakedrv.c - the in-process fake CUDA driver of the unit tests (fakedrv.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "fakedrv.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_CTX 64
#define MAX_STREAMS 256
#define MAX_DEV 8
#define EVENT_MAGIC 0x45564e54u  /* "EVNT" */
#define KERNEL_MAGIC 0x4b524e4cu /* "KRNL" */
#define GRAPH_MAGIC 0x47525048u  /* "GRPH" */

/* Handles: a base no pointer of the process has, the fake's generation, the index. A stream's
 * index is in bits 4..11, so that ktime's per-thread gate hints (a small table indexed by
 * (handle >> 4 ^ handle >> 12) & 7) put streams 0..7 in slots of their own. */
#define CTX_BASE 0x5c0000000000ull
#define STREAM_BASE 0x5d0000000000ull
#define DEVPTR_BASE 0x5e0000000000ull

enum op_type { OP_WAIT, OP_RECORD, OP_RUN };

struct fd_event;

struct op {
    enum op_type type;
    uint64_t at;               /* host time it was queued */
    uint64_t ns;               /* OP_RUN: its length */
    struct fd_event *ev;       /* OP_RECORD */
    uint32_t seq;              /* OP_RECORD: the event's record it is */
    volatile uint32_t *word;   /* OP_WAIT */
    uint32_t value;
    bool counted;              /* OP_WAIT: found closed once (gates_held) */
};

struct stream {
    bool used;
    int ctx;                   /* index in ctxs */
    bool held, capturing;
    uint64_t clock;            /* the GPU's time on this stream */
    struct op *ops;
    size_t head, n, cap;
};

struct context {
    bool used, alive, primary;
    int dev, refs;
    int legacy, ptds;          /* its special streams (indexes) */
};

struct fd_event {
    uint32_t magic;
    int ctx;
    bool destroyed;
    uint32_t rec_seq, done_seq; /* the last record, the last record that ran */
    uint64_t t;                 /* when done_seq ran */
    struct fd_event *next;
};

struct fd_kernel {
    uint32_t magic;
    char *name;
    struct fd_kernel *next;
};

struct node {
    CUgraphNodeType type;
};

struct fd_graph {
    uint32_t magic;
    int n;
    struct node *nodes;
    struct fd_graph *next;
};

struct host_mem {
    void *p;
    size_t bytes;
    struct host_mem *next;
};

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;

static struct {
    uint64_t gen;
    uint64_t calls[FD_NFN];
    struct { CUresult r; int left; } fail[FD_NFN];
    struct context ctxs[MAX_CTX];
    struct stream streams[MAX_STREAMS];
    int primary[MAX_DEV];      /* 1 + index of each device's primary context, 0: none */
    uint64_t host_ns;
    uint64_t poll_ns;          /* host time each cuEventQuery takes */
    uint64_t next_dev_ptr;
    struct fd_event *events;
    struct fd_kernel *kernels;
    struct fd_graph *graphs;
    struct host_mem *host;
    struct fd_stats st;
} fd;

/* The calling thread's context stack and capture mode; the stack's generation, so that a
 * thread's contexts of an earlier fake are forgotten. */
static __thread CUcontext cur_stack[16];
static __thread int cur_depth;
static __thread uint64_t cur_gen;
static __thread CUstreamCaptureMode cur_mode; /* GLOBAL (0) until exchanged */

/* ---- handles ---- */

static CUcontext ctx_handle(int i)
{
    return (CUcontext)(uintptr_t)(CTX_BASE + (fd.gen << 16) + ((uint64_t)i << 4));
}

static int ctx_index(CUcontext c)
{
    uint64_t h = (uint64_t)(uintptr_t)c;
    uint64_t i = (h - CTX_BASE - (fd.gen << 16)) >> 4;

    if (h < CTX_BASE || i >= MAX_CTX || ctx_handle((int)i) != c || !fd.ctxs[i].used)
        return -1;
    return (int)i;
}

static CUstream stream_handle(int i)
{
    return (CUstream)(uintptr_t)(STREAM_BASE + (fd.gen << 20) + ((uint64_t)i << 4));
}

static void cur_check(void)
{
    if (cur_gen != fd.gen) {
        cur_gen = fd.gen;
        cur_depth = 0;
    }
}

static int current_ctx(void)
{
    cur_check();
    return cur_depth ? ctx_index(cur_stack[cur_depth - 1]) : -1;
}

/* The stream of handle s: special streams are the current context's. -1: none. */
static int stream_index(CUstream s)
{
    uint64_t h = (uint64_t)(uintptr_t)s;

    if (s == NULL || s == CU_STREAM_LEGACY || s == CU_STREAM_PER_THREAD) {
        int c = current_ctx();
        if (c < 0)
            return -1;
        return s == CU_STREAM_PER_THREAD ? fd.ctxs[c].ptds : fd.ctxs[c].legacy;
    }
    uint64_t i = (h - STREAM_BASE - (fd.gen << 20)) >> 4;
    if (h < STREAM_BASE || i >= MAX_STREAMS || stream_handle((int)i) != s ||
        !fd.streams[i].used)
        return -1;
    return (int)i;
}

static int new_stream(int ctx)
{
    for (int i = 0; i < MAX_STREAMS; i++)
        if (!fd.streams[i].used) {
            fd.streams[i] = (struct stream){ .used = true, .ctx = ctx };
            return i;
        }
    fprintf(stderr, "fakedrv: more than %d streams\n", MAX_STREAMS);
    abort();
}

static int new_ctx(int dev, bool primary)
{
    for (int i = 0; i < MAX_CTX; i++)
        if (!fd.ctxs[i].used) {
            fd.ctxs[i] = (struct context){ .used = true, .alive = true, .primary = primary,
                                           .dev = dev };
            fd.ctxs[i].legacy = new_stream(i);
            fd.ctxs[i].ptds = new_stream(i);
            return i;
        }
    fprintf(stderr, "fakedrv: more than %d contexts\n", MAX_CTX);
    abort();
}

static struct fd_event *event_of(CUevent e)
{
    for (struct fd_event *v = fd.events; v; v = v->next)
        if ((CUevent)v == e)
            return v->magic == EVENT_MAGIC && !v->destroyed ? v : NULL;
    return NULL;
}

static struct fd_kernel *kernel_of(const void *f)
{
    for (struct fd_kernel *k = fd.kernels; k; k = k->next)
        if ((const void *)k == f)
            return k;
    return NULL;
}

/* ---- the simulated GPU ---- */

static void push(int s, struct op o)
{
    struct stream *st = &fd.streams[s];

    if (st->n == st->cap) {
        size_t cap = st->cap ? 2 * st->cap : 16;
        struct op *more = realloc(st->ops, cap * sizeof *more);
        if (!more)
            abort();
        st->ops = more;
        st->cap = cap;
    }
    o.at = fd.host_ns;
    st->ops[st->n++] = o;
}

/* Runs what stream s can run now. */
static void progress(int s)
{
    struct stream *st = &fd.streams[s];

    while (!st->held && st->head < st->n) {
        struct op *o = &st->ops[st->head];
        uint64_t start = st->clock > o->at ? st->clock : o->at;
        if (o->type == OP_WAIT) {
            if (__atomic_load_n(o->word, __ATOMIC_ACQUIRE) != o->value) {
                if (!o->counted)
                    fd.st.gates_held++;
                o->counted = true;
                return;
            }
            /* It opened no earlier than now: the GPU goes on from the host's time. */
            if (o->counted && start < fd.host_ns)
                start = fd.host_ns;
            st->clock = start;
        } else if (o->type == OP_RECORD) {
            st->clock = start;
            if (o->ev->rec_seq == o->seq) {
                o->ev->done_seq = o->seq;
                o->ev->t = start;
            }
        } else {
            st->clock = start + o->ns;
        }
        st->head++;
    }
    if (st->head == st->n)
        st->head = st->n = 0;
}

static void progress_all(void)
{
    for (int i = 0; i < MAX_STREAMS; i++)
        if (fd.streams[i].used)
            progress(i);
}

/* ---- entry and exit of every fake function ---- */

/* Counts the call, takes the lock; true (and *r set, lock released) when a failure is
 * injected. */
static bool enter(enum fd_fn fn, CUresult *r)
{
    pthread_mutex_lock(&mu);
    fd.calls[fn]++;
    if (fd.fail[fn].left != 0) {
        if (fd.fail[fn].left > 0)
            fd.fail[fn].left--;
        *r = fd.fail[fn].r;
        pthread_mutex_unlock(&mu);
        return true;
    }
    return false;
}

static CUresult leave(CUresult r)
{
    pthread_mutex_unlock(&mu);
    return r;
}

#define ENTER(fn)                                                                         \
    CUresult injected_;                                                                   \
    if (enter(FD_##fn, &injected_))                                                       \
        return injected_

/* ---- events ---- */

static CUresult f_EventCreate(CUevent *e, unsigned int flags)
{
    ENTER(EventCreate);
    int c = current_ctx();
    if (c < 0)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    struct fd_event *v = calloc(1, sizeof *v);
    if (!v)
        return leave(CUDA_ERROR_OUT_OF_MEMORY);
    v->magic = EVENT_MAGIC;
    v->ctx = c;
    v->next = fd.events;
    fd.events = v;
    fd.st.events_alive++;
    *e = (CUevent)v;
    return leave(CUDA_SUCCESS);
}

static CUresult f_EventDestroy(CUevent e)
{
    ENTER(EventDestroy);
    struct fd_event *v = event_of(e);
    if (!v)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    v->destroyed = true;
    fd.st.events_alive--;
    return leave(CUDA_SUCCESS);
}

static CUresult f_EventRecord(CUevent e, CUstream s)
{
    ENTER(EventRecord);
    struct fd_event *v = event_of(e);
    int si = stream_index(s);
    if (!v || si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    if (!fd.ctxs[v->ctx].alive || !fd.ctxs[fd.streams[si].ctx].alive)
        return leave(CUDA_ERROR_CONTEXT_IS_DESTROYED);
    if (fd.streams[si].ctx != v->ctx)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    if (fd.streams[si].capturing) {
        fd.st.records_in_capture++;
        return leave(CUDA_SUCCESS);
    }
    push(si, (struct op){ .type = OP_RECORD, .ev = v, .seq = ++v->rec_seq });
    progress(si);
    return leave(CUDA_SUCCESS);
}

/* Whether v has completed: 0 done (its last record ran, no later than now), 1 pending, -2
 * its context is gone. */
static int event_state(struct fd_event *v)
{
    if (!fd.ctxs[v->ctx].alive)
        return -2;
    return v->done_seq == v->rec_seq && v->t <= fd.host_ns ? 0 : 1;
}

static CUresult f_EventQuery(CUevent e)
{
    ENTER(EventQuery);
    struct fd_event *v = event_of(e);
    fd.st.queries_by_mode[cur_mode <= 2 ? cur_mode : 0]++;
    if (!v)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    fd.host_ns += fd.poll_ns;
    progress_all();
    int st = event_state(v);
    return leave(st == 0 ? CUDA_SUCCESS : st == 1 ? CUDA_ERROR_NOT_READY
                                                  : CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

static CUresult elapsed(float *ms, CUevent a, CUevent b)
{
    struct fd_event *x = event_of(a), *y = event_of(b);

    if (!x || !y || !x->rec_seq || !y->rec_seq)
        return CUDA_ERROR_INVALID_HANDLE;
    progress_all();
    int sx = event_state(x), sy = event_state(y);
    if (sx == -2 || sy == -2)
        return CUDA_ERROR_CONTEXT_IS_DESTROYED;
    if (sx || sy)
        return CUDA_ERROR_NOT_READY;
    *ms = (float)((double)((int64_t)(y->t - x->t)) / 1e6);
    return CUDA_SUCCESS;
}

static CUresult f_EventElapsedTime(float *ms, CUevent a, CUevent b)
{
    ENTER(EventElapsedTime);
    return leave(elapsed(ms, a, b));
}

static CUresult f_EventElapsedTime2(float *ms, CUevent a, CUevent b)
{
    ENTER(EventElapsedTime2);
    return leave(elapsed(ms, a, b));
}

static CUresult f_EventSynchronize(CUevent e)
{
    ENTER(EventSynchronize);
    struct fd_event *v = event_of(e);
    if (!v)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    progress_all();
    /* The host waits for it, unless it waits behind a closed gate or a held stream. */
    if (v->done_seq == v->rec_seq && v->t > fd.host_ns)
        fd.host_ns = v->t;
    int st = event_state(v);
    return leave(st == 0 ? CUDA_SUCCESS : st == 1 ? CUDA_ERROR_NOT_READY
                                                  : CUDA_ERROR_CONTEXT_IS_DESTROYED);
}

/* ---- streams ---- */

static CUresult f_StreamGetCtx(CUstream s, CUcontext *c)
{
    ENTER(StreamGetCtx);
    int si = stream_index(s);
    if (si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    *c = ctx_handle(fd.streams[si].ctx);
    return leave(CUDA_SUCCESS);
}

static CUresult f_StreamIsCapturing(CUstream s, CUstreamCaptureStatus *st)
{
    ENTER(StreamIsCapturing);
    int si = stream_index(s);
    if (si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    *st = fd.streams[si].capturing ? CU_STREAM_CAPTURE_STATUS_ACTIVE
                                   : CU_STREAM_CAPTURE_STATUS_NONE;
    return leave(CUDA_SUCCESS);
}

static CUresult f_StreamCreate(CUstream *s, unsigned int flags)
{
    ENTER(StreamCreate);
    int c = current_ctx();
    if (c < 0)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    *s = stream_handle(new_stream(c));
    return leave(CUDA_SUCCESS);
}

static CUresult f_StreamDestroy(CUstream s)
{
    ENTER(StreamDestroy);
    int si = stream_index(s);
    if (si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    free(fd.streams[si].ops);
    fd.streams[si] = (struct stream){ 0 };
    return leave(CUDA_SUCCESS);
}

static CUresult f_StreamWaitValue32(CUstream s, CUdeviceptr addr, cuuint32_t value,
                                    unsigned int flags)
{
    ENTER(StreamWaitValue32);
    int si = stream_index(s);
    if (si < 0 || !addr)
        return leave(CUDA_ERROR_INVALID_VALUE);
    if (flags != CU_STREAM_WAIT_VALUE_EQ)
        return leave(CUDA_ERROR_NOT_SUPPORTED);
    fd.st.gate_waits++;
    push(si, (struct op){ .type = OP_WAIT, .word = (volatile uint32_t *)(uintptr_t)addr,
                          .value = value });
    progress(si);
    return leave(CUDA_SUCCESS);
}

static CUresult f_ThreadExchangeStreamCaptureMode(CUstreamCaptureMode *mode)
{
    ENTER(ThreadExchangeStreamCaptureMode);
    CUstreamCaptureMode was = cur_mode;
    cur_mode = *mode;
    *mode = was;
    return leave(CUDA_SUCCESS);
}

/* ---- contexts and devices ---- */

static CUresult f_CtxGetCurrent(CUcontext *c)
{
    ENTER(CtxGetCurrent);
    cur_check();
    *c = cur_depth ? cur_stack[cur_depth - 1] : NULL;
    return leave(CUDA_SUCCESS);
}

static CUresult f_CtxPushCurrent(CUcontext c)
{
    ENTER(CtxPushCurrent);
    cur_check();
    if (ctx_index(c) < 0 || cur_depth == 16)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    cur_stack[cur_depth++] = c;
    return leave(CUDA_SUCCESS);
}

static CUresult f_CtxPopCurrent(CUcontext *c)
{
    ENTER(CtxPopCurrent);
    cur_check();
    if (!cur_depth)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    cur_depth--;
    if (c)
        *c = cur_stack[cur_depth];
    return leave(CUDA_SUCCESS);
}

static CUresult f_CtxGetDevice(CUdevice *d)
{
    ENTER(CtxGetDevice);
    int c = current_ctx();
    if (c < 0)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    *d = fd.ctxs[c].dev;
    return leave(CUDA_SUCCESS);
}

static CUresult f_DeviceGetName(char *name, int len, CUdevice d)
{
    ENTER(DeviceGetName);
    if (d < 0 || d >= MAX_DEV)
        return leave(CUDA_ERROR_INVALID_DEVICE);
    snprintf(name, (size_t)len, "Fake GPU %d", (int)d);
    return leave(CUDA_SUCCESS);
}

static CUresult f_DeviceGetUuid(CUuuid *u, CUdevice d)
{
    ENTER(DeviceGetUuid);
    if (d < 0 || d >= MAX_DEV)
        return leave(CUDA_ERROR_INVALID_DEVICE);
    for (int i = 0; i < 16; i++)
        u->bytes[i] = (char)(d * 16 + i);
    return leave(CUDA_SUCCESS);
}

static CUresult f_DriverGetVersion(int *v)
{
    ENTER(DriverGetVersion);
    *v = 13000;
    return leave(CUDA_SUCCESS);
}

static CUresult f_DeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
    ENTER(DeviceGetAttribute);
    *v = a == CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE ? (int)FD_L2_BYTES : 0;
    return leave(CUDA_SUCCESS);
}

static CUresult f_DevicePrimaryCtxGetState(CUdevice d, unsigned int *flags, int *active)
{
    ENTER(DevicePrimaryCtxGetState);
    if (d < 0 || d >= MAX_DEV)
        return leave(CUDA_ERROR_INVALID_DEVICE);
    int p = fd.primary[d] - 1;
    *flags = 0;
    *active = p >= 0 && fd.ctxs[p].alive && fd.ctxs[p].refs > 0;
    return leave(CUDA_SUCCESS);
}

static int retain_primary(int d)
{
    int p = fd.primary[d] - 1;

    if (p < 0 || !fd.ctxs[p].alive) {
        p = new_ctx(d, true);
        fd.primary[d] = p + 1;
    }
    fd.ctxs[p].refs++;
    return p;
}

static CUresult f_DevicePrimaryCtxRetain(CUcontext *c, CUdevice d)
{
    ENTER(DevicePrimaryCtxRetain);
    if (d < 0 || d >= MAX_DEV)
        return leave(CUDA_ERROR_INVALID_DEVICE);
    *c = ctx_handle(retain_primary(d));
    return leave(CUDA_SUCCESS);
}

static CUresult f_DevicePrimaryCtxRelease(CUdevice d)
{
    ENTER(DevicePrimaryCtxRelease);
    int p = d >= 0 && d < MAX_DEV ? fd.primary[d] - 1 : -1;
    if (p < 0 || !fd.ctxs[p].alive || fd.ctxs[p].refs <= 0)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    if (--fd.ctxs[p].refs == 0)
        fd.ctxs[p].alive = false; /* the last release destroys it */
    return leave(CUDA_SUCCESS);
}

/* ---- memory ---- */

static CUresult f_MemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
    ENTER(MemHostAlloc);
    struct host_mem *m = calloc(1, sizeof *m);
    if (!m || !(m->p = calloc(1, bytes ? bytes : 1))) {
        free(m);
        return leave(CUDA_ERROR_OUT_OF_MEMORY);
    }
    m->bytes = bytes;
    m->next = fd.host;
    fd.host = m;
    *p = m->p;
    return leave(CUDA_SUCCESS);
}

static struct host_mem *host_of(const void *p)
{
    for (struct host_mem *m = fd.host; m; m = m->next)
        if ((const char *)p >= (const char *)m->p && (const char *)p < (char *)m->p + m->bytes)
            return m;
    return NULL;
}

static CUresult f_MemHostGetDevicePointer(CUdeviceptr *d, void *p, unsigned int flags)
{
    ENTER(MemHostGetDevicePointer);
    if (!host_of(p))
        return leave(CUDA_ERROR_INVALID_VALUE);
    *d = (CUdeviceptr)(uintptr_t)p; /* unified addressing */
    return leave(CUDA_SUCCESS);
}

static CUresult f_MemFreeHost(void *p)
{
    ENTER(MemFreeHost);
    for (struct host_mem **m = &fd.host; *m; m = &(*m)->next)
        if ((*m)->p == p) {
            struct host_mem *gone = *m;
            *m = gone->next;
            free(gone->p);
            free(gone);
            return leave(CUDA_SUCCESS);
        }
    return leave(CUDA_ERROR_INVALID_VALUE);
}

static CUresult f_MemAlloc(CUdeviceptr *d, size_t bytes)
{
    ENTER(MemAlloc);
    if (current_ctx() < 0)
        return leave(CUDA_ERROR_INVALID_CONTEXT);
    *d = (CUdeviceptr)(DEVPTR_BASE + fd.next_dev_ptr);
    fd.next_dev_ptr += (bytes + 255) & ~(size_t)255;
    return leave(CUDA_SUCCESS);
}

static CUresult f_MemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
    ENTER(MemsetD32Async);
    int si = stream_index(s);
    if (si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    fd.st.memsets++;
    fd.st.memset_bytes += 4 * (uint64_t)n;
    push(si, (struct op){ .type = OP_RUN, .ns = FD_MEMSET_NS });
    progress(si);
    return leave(CUDA_SUCCESS);
}

static CUresult f_PointerGetAttributes(unsigned int n, CUpointer_attribute *attrs, void **data,
                                       CUdeviceptr ptr)
{
    ENTER(PointerGetAttributes);
    bool dev = ptr >= DEVPTR_BASE && ptr < DEVPTR_BASE + fd.next_dev_ptr;
    bool host = !dev && host_of((const void *)(uintptr_t)ptr);
    for (unsigned int i = 0; i < n; i++) {
        if (attrs[i] == CU_POINTER_ATTRIBUTE_MEMORY_TYPE)
            *(unsigned int *)data[i] = dev ? CU_MEMORYTYPE_DEVICE : host ? CU_MEMORYTYPE_HOST : 0;
        else if (attrs[i] == CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL)
            *(int *)data[i] = dev ? 0 : -1;
    }
    return leave(CUDA_SUCCESS);
}

/* ---- kernels, modules, graphs ---- */

static CUresult f_FuncGetName(const char **name, CUfunction f)
{
    ENTER(FuncGetName);
    struct fd_kernel *k = kernel_of(f);
    if (!k)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    *name = k->name;
    return leave(CUDA_SUCCESS);
}

static CUresult f_KernelGetName(const char **name, CUkernel f)
{
    ENTER(KernelGetName);
    return leave(CUDA_ERROR_INVALID_HANDLE); /* the fake's handles are CUfunctions */
}

static struct fd_kernel *add_kernel(const char *name)
{
    struct fd_kernel *k = calloc(1, sizeof *k);

    if (!k || !(k->name = strdup(name)))
        abort();
    k->magic = KERNEL_MAGIC;
    k->next = fd.kernels;
    fd.kernels = k;
    return k;
}

static CUresult f_ModuleLoadData(CUmodule *m, const void *image)
{
    ENTER(ModuleLoadData);
    *m = (CUmodule)(uintptr_t)0x40; /* one module will do: the floor's */
    return leave(CUDA_SUCCESS);
}

static CUresult f_ModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
    ENTER(ModuleGetFunction);
    *f = (CUfunction)add_kernel(name);
    return leave(CUDA_SUCCESS);
}

static CUresult f_ModuleUnload(CUmodule m)
{
    ENTER(ModuleUnload);
    return leave(CUDA_SUCCESS);
}

static CUresult f_LaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
                               unsigned int bx, unsigned int by, unsigned int bz,
                               unsigned int shmem, CUstream s, void **params, void **extra)
{
    ENTER(LaunchKernel);
    int si = stream_index(s);
    if (!kernel_of(f) || si < 0)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    push(si, (struct op){ .type = OP_RUN, .ns = FD_FLOOR_NS });
    progress(si);
    return leave(CUDA_SUCCESS);
}

static struct fd_graph *graph_of(CUgraph g)
{
    for (struct fd_graph *x = fd.graphs; x; x = x->next)
        if ((CUgraph)x == g)
            return x;
    return NULL;
}

static CUresult f_GraphGetNodes(CUgraph g, CUgraphNode *nodes, size_t *n)
{
    ENTER(GraphGetNodes);
    struct fd_graph *x = graph_of(g);
    if (!x)
        return leave(CUDA_ERROR_INVALID_HANDLE);
    if (nodes)
        for (size_t i = 0; i < *n && i < (size_t)x->n; i++)
            nodes[i] = (CUgraphNode)&x->nodes[i];
    *n = (size_t)x->n;
    return leave(CUDA_SUCCESS);
}

static CUresult f_GraphNodeGetType(CUgraphNode node, CUgraphNodeType *type)
{
    ENTER(GraphNodeGetType);
    for (struct fd_graph *x = fd.graphs; x; x = x->next)
        if ((struct node *)node >= x->nodes && (struct node *)node < x->nodes + x->n) {
            *type = ((struct node *)node)->type;
            return leave(CUDA_SUCCESS);
        }
    return leave(CUDA_ERROR_INVALID_HANDLE);
}

/* ---- the table ---- */

static void install(void)
{
    memset(&drv, 0, sizeof drv);
#define F(name) drv.name = f_##name
    F(EventCreate);
    F(EventRecord);
    F(EventQuery);
    F(EventElapsedTime);
    F(EventElapsedTime2);
    F(StreamGetCtx);
    F(StreamIsCapturing);
    F(CtxGetCurrent);
    F(CtxPushCurrent);
    F(CtxPopCurrent);
    F(CtxGetDevice);
    F(DeviceGetName);
    F(DeviceGetUuid);
    F(DriverGetVersion);
    F(KernelGetName);
    F(FuncGetName);
    F(GraphGetNodes);
    F(GraphNodeGetType);
    F(MemHostAlloc);
    F(MemHostGetDevicePointer);
    F(StreamWaitValue32);
    F(DevicePrimaryCtxGetState);
    F(DevicePrimaryCtxRetain);
    F(DevicePrimaryCtxRelease);
    F(ThreadExchangeStreamCaptureMode);
    F(ModuleLoadData);
    F(ModuleGetFunction);
    F(ModuleUnload);
    F(StreamCreate);
    F(StreamDestroy);
    F(EventDestroy);
    F(EventSynchronize);
    F(LaunchKernel);
    F(MemFreeHost);
    F(DeviceGetAttribute);
    F(MemAlloc);
    F(MemsetD32Async);
    F(PointerGetAttributes);
#undef F
}

static void free_all(void)
{
    for (int i = 0; i < MAX_STREAMS; i++)
        free(fd.streams[i].ops);
    while (fd.events) {
        struct fd_event *v = fd.events;
        fd.events = v->next;
        free(v);
    }
    while (fd.kernels) {
        struct fd_kernel *k = fd.kernels;
        fd.kernels = k->next;
        free(k->name);
        free(k);
    }
    while (fd.graphs) {
        struct fd_graph *g = fd.graphs;
        fd.graphs = g->next;
        free(g->nodes);
        free(g);
    }
    while (fd.host) {
        struct host_mem *m = fd.host;
        fd.host = m->next;
        free(m->p);
        free(m);
    }
}

void fd_reset(void)
{
    pthread_mutex_lock(&mu);
    free_all();
    uint64_t gen = fd.gen + 1;
    memset(&fd, 0, sizeof fd);
    fd.gen = gen;
    cur_check();
    cur_mode = CU_STREAM_CAPTURE_MODE_GLOBAL;
    install();
    pthread_mutex_unlock(&mu);
}

void fd_free(void)
{
    pthread_mutex_lock(&mu);
    free_all();
    memset(fd.streams, 0, sizeof fd.streams);
    memset(&drv, 0, sizeof drv);
    fd.gen++;
    pthread_mutex_unlock(&mu);
}

uint64_t fd_calls(enum fd_fn fn)
{
    pthread_mutex_lock(&mu);
    uint64_t n = fd.calls[fn];
    pthread_mutex_unlock(&mu);
    return n;
}

void fd_fail(enum fd_fn fn, CUresult r, int times)
{
    pthread_mutex_lock(&mu);
    fd.fail[fn].r = r;
    fd.fail[fn].left = times;
    pthread_mutex_unlock(&mu);
}

CUcontext fd_context(int dev)
{
    pthread_mutex_lock(&mu);
    CUcontext c = ctx_handle(new_ctx(dev, false));
    cur_check();
    if (!cur_depth)
        cur_stack[cur_depth++] = c;
    pthread_mutex_unlock(&mu);
    return c;
}

CUcontext fd_primary(int dev)
{
    pthread_mutex_lock(&mu);
    CUcontext c = ctx_handle(retain_primary(dev));
    pthread_mutex_unlock(&mu);
    return c;
}

void fd_destroy(CUcontext ctx)
{
    pthread_mutex_lock(&mu);
    int c = ctx_index(ctx);
    if (c >= 0)
        fd.ctxs[c].alive = false;
    pthread_mutex_unlock(&mu);
}

void fd_set_current(CUcontext ctx)
{
    pthread_mutex_lock(&mu);
    cur_check();
    if (!cur_depth)
        cur_depth = 1;
    cur_stack[cur_depth - 1] = ctx;
    pthread_mutex_unlock(&mu);
}

CUstream fd_stream(CUcontext ctx)
{
    pthread_mutex_lock(&mu);
    int c = ctx_index(ctx);
    CUstream s = c >= 0 ? stream_handle(new_stream(c)) : NULL;
    pthread_mutex_unlock(&mu);
    return s;
}

void *fd_kernel(const char *name)
{
    pthread_mutex_lock(&mu);
    void *k = add_kernel(name);
    pthread_mutex_unlock(&mu);
    return k;
}

CUgraph fd_graph(int kernels, int others)
{
    pthread_mutex_lock(&mu);
    struct fd_graph *g = calloc(1, sizeof *g);
    if (!g || !(g->nodes = calloc((size_t)(kernels + others + 1), sizeof *g->nodes)))
        abort();
    g->magic = GRAPH_MAGIC;
    g->n = kernels + others;
    for (int i = 0; i < g->n; i++)
        g->nodes[i].type = i < kernels ? CU_GRAPH_NODE_TYPE_KERNEL : CU_GRAPH_NODE_TYPE_EMPTY;
    g->next = fd.graphs;
    fd.graphs = g;
    pthread_mutex_unlock(&mu);
    return (CUgraph)g;
}

void fd_run(CUstream s, uint64_t ns)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    if (si < 0) {
        fprintf(stderr, "fakedrv: fd_run on an unknown stream\n");
        abort();
    }
    progress_all(); /* gates ktime opened open at the time they were opened */
    fd.host_ns += FD_SUBMIT_NS;
    push(si, (struct op){ .type = OP_RUN, .ns = ns });
    progress(si);
    pthread_mutex_unlock(&mu);
}

void fd_advance(uint64_t ns)
{
    pthread_mutex_lock(&mu);
    progress_all();
    fd.host_ns += ns;
    pthread_mutex_unlock(&mu);
}

bool fd_sync(CUstream s)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    bool done = false;
    progress_all();
    if (si >= 0 && fd.streams[si].head == fd.streams[si].n) {
        if (fd.streams[si].clock > fd.host_ns)
            fd.host_ns = fd.streams[si].clock;
        done = true;
    }
    pthread_mutex_unlock(&mu);
    return done;
}

void fd_set_poll_ns(uint64_t ns)
{
    pthread_mutex_lock(&mu);
    fd.poll_ns = ns;
    pthread_mutex_unlock(&mu);
}

uint64_t fd_host_ns(void)
{
    pthread_mutex_lock(&mu);
    uint64_t t = fd.host_ns;
    pthread_mutex_unlock(&mu);
    return t;
}

void fd_hold(CUstream s)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    if (si >= 0)
        fd.streams[si].held = true;
    pthread_mutex_unlock(&mu);
}

void fd_release(CUstream s)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    if (si >= 0) {
        struct stream *st = &fd.streams[si];
        st->held = false;
        /* The GPU comes back to it now. */
        if (st->clock < fd.host_ns)
            st->clock = fd.host_ns;
        progress_all();
    }
    pthread_mutex_unlock(&mu);
}

void fd_capture(CUstream s, bool on)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    if (si >= 0)
        fd.streams[si].capturing = on;
    pthread_mutex_unlock(&mu);
}

int fd_queued(CUstream s)
{
    pthread_mutex_lock(&mu);
    int si = stream_index(s);
    progress_all();
    int n = si >= 0 ? (int)(fd.streams[si].n - fd.streams[si].head) : -1;
    pthread_mutex_unlock(&mu);
    return n;
}

void fd_stats(struct fd_stats *out)
{
    pthread_mutex_lock(&mu);
    *out = fd.st;
    pthread_mutex_unlock(&mu);
}

CUresult fd_primary_release(CUdevice dev)
{
    return f_DevicePrimaryCtxRelease(dev);
}
