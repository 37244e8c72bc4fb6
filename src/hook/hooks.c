/* hooks.c - interposition: the exported CUDA launch entry points, dlsym, and
 * cuGetProcAddress, all generated from hooks.def. Thin: every wrapper has the same shape
 * (real pointer -> should it be timed? -> call real -> record -> real result). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cudaTypedefs.h>
#include <cupti.h>
#undef cuGetProcAddress /* cuda.h renames these to _v2; both are real exported symbols */
#undef cuCtxDestroy
#undef cuDevicePrimaryCtxReset
#undef cuDevicePrimaryCtxRelease
#undef cuStreamBeginCapture
#undef cuStreamBeginCaptureToGraph
#undef cuStreamEndCapture

#include "cuptitimer.h"
#include "dl.h"
#include "driver.h"
#include "exec.h"
#include "ktime.h"
#include "lifecycle.h"
#include "launch.h"
#include "log.h"
#include "memop.h"
#include "passthrough.h"


/* ---- the table ---- */

enum hook_id {
#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp) HOOK_##name,
#define HOOK_OTHER(name) HOOK_##name,
#define HOOK_MEMOP(name, ptds, params, args, stream, desc) HOOK_##name,
#define HOOK_RUNTIME(name, params, args)
#include "hooks.def"
#undef HOOK_RUNTIME
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
    HOOK_COUNT
};

#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp)                          \
    typedef CUresult (*name##_fn) params;                                                  \
    KTIME_EXPORT CUresult name params;
#define HOOK_OTHER(name)
#define HOOK_MEMOP(name, ptds, params, args, stream, desc)                                 \
    typedef CUresult (*name##_fn) params;                                                  \
    KTIME_EXPORT CUresult name params;
#define HOOK_RUNTIME(name, params, args)                                                   \
    typedef cudaError_t (*name##_fn) params;                                               \
    KTIME_EXPORT cudaError_t name params;
#include "hooks.def"
#undef HOOK_RUNTIME
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
typedef CUresult (*cuGetProcAddress_fn)(const char *, void **, int, cuuint64_t);
typedef CUresult (*cuGetProcAddress_v2_fn)(const char *, void **, int, cuuint64_t,
                                           CUdriverProcAddressQueryResult *);
KTIME_EXPORT CUresult cuGetProcAddress(const char *, void **, int, cuuint64_t);
KTIME_EXPORT CUresult cuGetProcAddress_v2(const char *, void **, int, cuuint64_t,
                                          CUdriverProcAddressQueryResult *);
KTIME_EXPORT CUresult cuModuleUnload(CUmodule);
KTIME_EXPORT CUresult cuLibraryUnload(CUlibrary);
KTIME_EXPORT CUresult cuCtxDestroy(CUcontext);
KTIME_EXPORT CUresult cuCtxDestroy_v2(CUcontext);
KTIME_EXPORT CUresult cuDevicePrimaryCtxReset(CUdevice);
KTIME_EXPORT CUresult cuDevicePrimaryCtxReset_v2(CUdevice);
KTIME_EXPORT CUresult cuDevicePrimaryCtxRelease(CUdevice);
KTIME_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice);
KTIME_EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *, CUgraph, unsigned long long);
KTIME_EXPORT CUresult cuGraphInstantiateWithParams(CUgraphExec *, CUgraph,
                                                   CUDA_GRAPH_INSTANTIATE_PARAMS *);
KTIME_EXPORT CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *, CUgraph,
                                                        CUDA_GRAPH_INSTANTIATE_PARAMS *);
KTIME_EXPORT CUresult cuGraphExecDestroy(CUgraphExec);
KTIME_EXPORT CUresult cuStreamBeginCapture(CUstream);
KTIME_EXPORT CUresult cuStreamBeginCapture_ptsz(CUstream);
KTIME_EXPORT CUresult cuStreamBeginCapture_v2(CUstream, CUstreamCaptureMode);
KTIME_EXPORT CUresult cuStreamBeginCapture_v2_ptsz(CUstream, CUstreamCaptureMode);
KTIME_EXPORT CUresult cuStreamBeginCaptureToGraph(CUstream, CUgraph, const CUgraphNode *,
                                                  const CUgraphEdgeData *, size_t,
                                                  CUstreamCaptureMode);
KTIME_EXPORT CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream, CUgraph, const CUgraphNode *,
                                                       const CUgraphEdgeData *, size_t,
                                                       CUstreamCaptureMode);
KTIME_EXPORT CUresult cuStreamEndCapture(CUstream, CUgraph *);
KTIME_EXPORT CUresult cuStreamEndCapture_ptsz(CUstream, CUgraph *);
KTIME_EXPORT CUresult cuProfilerStart(void);
KTIME_EXPORT CUresult cuProfilerStop(void);

static const char *const hook_name[HOOK_COUNT] = {
#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp) #name,
#define HOOK_OTHER(name) #name,
#define HOOK_MEMOP(name, ptds, params, args, stream, desc) #name,
#define HOOK_RUNTIME(name, params, args)
#include "hooks.def"
#undef HOOK_RUNTIME
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
};

static void *const hook_wrapper[HOOK_COUNT] = {
#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp) (void *)name,
#define HOOK_OTHER(name) (void *)name,
#define HOOK_MEMOP(name, ptds, params, args, stream, desc) (void *)name,
#define HOOK_RUNTIME(name, params, args)
#include "hooks.def"
#undef HOOK_RUNTIME
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
};

/* The driver's own function behind each hook, by pointer. */
static void *_Atomic hook_real[HOOK_COUNT];

/* ---- finding real symbols ---- */

static void *libcuda_handle(void)
{
    static void *_Atomic handle;
    void *h = atomic_load(&handle);

    if (!h) {
        /* Only a libcuda the process already loaded: ktime never loads the driver. */
        h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
        if (h)
            atomic_store(&handle, h);
    }
    return h;
}

static void *hooks_driver_symbol(const char *name)
{
    void *h = libcuda_handle();
    dlsym_fn f = dl_real_dlsym();

    return h && f ? f(h, name) : NULL;
}

/* Set once libktime's constructor has run, and with it those of its dependencies (see
 * next_symbol). */
static _Atomic int hooks_constructed;

/* The lifecycle code finds ktime's own driver entry points through this layer's lookup. */
__attribute__((constructor)) static void hooks_init(void)
{
    ktime_set_symbol_source(hooks_driver_symbol);
    atomic_store_explicit(&hooks_constructed, 1, memory_order_release);
}

static bool is_wrapper(void *p)
{
    for (int i = 0; i < HOOK_COUNT; i++)
        if (hook_wrapper[i] == p)
            return true;
    return false;
}

/* Resolves the whole table from the libcuda the process loaded, once it is loaded. */
static void bind_table(void)
{
    static _Atomic int bound;

    if (atomic_load_explicit(&bound, memory_order_acquire) || !libcuda_handle())
        return;
    for (int j = 0; j < HOOK_COUNT; j++) {
        void *q = hooks_driver_symbol(hook_name[j]);
        void *expected = NULL;
        if (q && !is_wrapper(q))
            atomic_compare_exchange_strong(&hook_real[j], &expected, q);
    }
    atomic_store_explicit(&bound, 1, memory_order_release);
}

/* The real function of hook i, or NULL when the driver has none. */
static inline void *real_of(int i)
{
    void *p = atomic_load_explicit(&hook_real[i], memory_order_acquire);

    if (p)
        return p;
    bind_table();
    return atomic_load_explicit(&hook_real[i], memory_order_acquire);
}

/* Maps a pointer the driver handed out to our wrapper for it, by identity. */
static void *swap_for_wrapper(void *p)
{
    for (int i = 0; i < HOOK_COUNT; i++)
        if (real_of(i) == p)
            return hook_wrapper[i];
    return p;
}

/* ---- launch wrappers ---- */

#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp)                          \
    CUresult name params                                                                   \
    {                                                                                      \
        name##_fn real = (name##_fn)real_of(HOOK_##name);                                  \
        struct launch L;                                                                   \
        CUresult r;                                                                        \
        if (!real)                                                                         \
            return CUDA_ERROR_NOT_INITIALIZED;                                             \
        if (!launch_begin(&L, (void *)(handle), kind, (stream), ptds, false))              \
            return real args;                                                              \
        L.shape = shp;                                                                     \
        L.bytes = 0;                                                                       \
        r = real args;                                                                     \
        launch_end(&L, r);                                                                 \
        return r;                                                                          \
    }
#define HOOK_OTHER(name)
#define HOOK_MEMOP(name, ptds, params, args, stream, desc)                                 \
    CUresult name params                                                                   \
    {                                                                                      \
        name##_fn real = (name##_fn)real_of(HOOK_##name);                                  \
        struct launch L;                                                                   \
        CUresult r;                                                                        \
        if (!real)                                                                         \
            return CUDA_ERROR_NOT_INITIALIZED;                                             \
        if (!memop_wanted())                                                               \
            return real args;                                                              \
        struct memop m = desc;                                                             \
        bool bracketed = launch_begin(&L, (void *)MEMOP_KEY(m.kind), KTAB_MEMOP, (stream), \
                                      ptds, m.blocking);                                   \
        L.shape = KTIME_SHAPE_NONE;                                                        \
        L.bytes = m.bytes;                                                                 \
        r = real args;                                                                     \
        memop_count(&m, r);                                                                \
        if (bracketed)                                                                     \
            launch_end(&L, r);                                                             \
        return r;                                                                          \
    }
#define HOOK_RUNTIME(name, params, args)
#include "hooks.def"
#undef HOOK_RUNTIME
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP

/* ---- symbol lookup ---- */

CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version, cuuint64_t flags,
                             CUdriverProcAddressQueryResult *status)
{
    cuGetProcAddress_v2_fn real = (cuGetProcAddress_v2_fn)real_of(HOOK_cuGetProcAddress_v2);
    CUresult r;

    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    r = real(symbol, pfn, version, flags, status);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = swap_for_wrapper(*pfn);
    return r;
}

CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
    cuGetProcAddress_fn real = (cuGetProcAddress_fn)real_of(HOOK_cuGetProcAddress);
    CUresult r;

    if (!real)
        return CUDA_ERROR_NOT_INITIALIZED;
    r = real(symbol, pfn, version, flags);
    if (r == CUDA_SUCCESS && pfn && *pfn)
        *pfn = swap_for_wrapper(*pfn);
    return r;
}

/* ---- handles that end or begin: unload, destroy, reset, instantiate ---- */

#define REAL_OR_FAIL(type, id)                                                             \
    type real = (type)real_of(id);                                                         \
    if (!real)                                                                             \
        return CUDA_ERROR_NOT_INITIALIZED

CUresult cuModuleUnload(CUmodule mod)
{
    REAL_OR_FAIL(PFN_cuModuleUnload_v2000, HOOK_cuModuleUnload);
    launch_module_unloading(mod, NULL);
    return real(mod);
}

CUresult cuLibraryUnload(CUlibrary lib)
{
    REAL_OR_FAIL(PFN_cuLibraryUnload_v12000, HOOK_cuLibraryUnload);
    launch_module_unloading(NULL, lib);
    return real(lib);
}

/* Contexts that end: each ABI version is its own symbol, and the runtime may ask the driver
 * for either (cudaDeviceReset did not come through cuDevicePrimaryCtxReset_v2 on CUDA 13). */
CUresult cuCtxDestroy(CUcontext ctx)
{
    REAL_OR_FAIL(PFN_cuCtxDestroy_v4000, HOOK_cuCtxDestroy); /* same prototype */
    ktime_context_ending(ctx, -1);
    return real(ctx);
}

CUresult cuCtxDestroy_v2(CUcontext ctx)
{
    REAL_OR_FAIL(PFN_cuCtxDestroy_v4000, HOOK_cuCtxDestroy_v2);
    ktime_context_ending(ctx, -1);
    return real(ctx);
}

CUresult cuDevicePrimaryCtxReset(CUdevice dev)
{
    REAL_OR_FAIL(PFN_cuDevicePrimaryCtxReset_v11000, HOOK_cuDevicePrimaryCtxReset);
    ktime_context_ending(NULL, (int)dev);
    return real(dev);
}

CUresult cuDevicePrimaryCtxReset_v2(CUdevice dev)
{
    REAL_OR_FAIL(PFN_cuDevicePrimaryCtxReset_v11000, HOOK_cuDevicePrimaryCtxReset_v2);
    ktime_context_ending(NULL, (int)dev);
    return real(dev);
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev)
{
    REAL_OR_FAIL(PFN_cuDevicePrimaryCtxRelease_v11000, HOOK_cuDevicePrimaryCtxRelease);
    return ktime_primary_release(dev, real);
}

CUresult cuDevicePrimaryCtxRelease_v2(CUdevice dev)
{
    REAL_OR_FAIL(PFN_cuDevicePrimaryCtxRelease_v11000, HOOK_cuDevicePrimaryCtxRelease_v2);
    return ktime_primary_release(dev, real);
}

/* After any instantiation: a new graph exec gets its row's name now. */
static CUresult instantiated(CUresult r, CUgraphExec *exec, CUgraph g)
{
    if (r == CUDA_SUCCESS && exec)
        launch_graph_instantiated(*exec, g);
    return r;
}

CUresult cuGraphInstantiateWithFlags(CUgraphExec *exec, CUgraph g, unsigned long long flags)
{
    REAL_OR_FAIL(PFN_cuGraphInstantiateWithFlags_v11040, HOOK_cuGraphInstantiateWithFlags);
    return instantiated(real(exec, g, flags), exec, g);
}

CUresult cuGraphInstantiateWithParams(CUgraphExec *exec, CUgraph g,
                                      CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    REAL_OR_FAIL(PFN_cuGraphInstantiateWithParams_v12000, HOOK_cuGraphInstantiateWithParams);
    return instantiated(real(exec, g, params), exec, g);
}

CUresult cuGraphInstantiateWithParams_ptsz(CUgraphExec *exec, CUgraph g,
                                           CUDA_GRAPH_INSTANTIATE_PARAMS *params)
{
    REAL_OR_FAIL(PFN_cuGraphInstantiateWithParams_v12000_ptsz,
                 HOOK_cuGraphInstantiateWithParams_ptsz);
    return instantiated(real(exec, g, params), exec, g);
}

CUresult cuGraphExecDestroy(CUgraphExec exec)
{
    REAL_OR_FAIL(PFN_cuGraphExecDestroy_v10000, HOOK_cuGraphExecDestroy);
    launch_handle_gone(exec);
    return real(exec);
}

/* Stream captures: while any is open, warmup launches ask whether they go into one.
 * The 1-argument ABI of CUDA 10.0 is still exported; cudaTypedefs.h hides its type. */
typedef CUresult (*capture_v10000_fn)(CUstream);
CUresult cuStreamBeginCapture(CUstream s)
{
    REAL_OR_FAIL(capture_v10000_fn, HOOK_cuStreamBeginCapture);
    CUresult r = real(s);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamBeginCapture_ptsz(CUstream s)
{
    REAL_OR_FAIL(capture_v10000_fn, HOOK_cuStreamBeginCapture_ptsz);
    CUresult r = real(s);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
    REAL_OR_FAIL(PFN_cuStreamBeginCapture_v10010, HOOK_cuStreamBeginCapture_v2);
    CUresult r = real(s, mode);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamBeginCapture_v2_ptsz(CUstream s, CUstreamCaptureMode mode)
{
    REAL_OR_FAIL(PFN_cuStreamBeginCapture_v10010_ptsz, HOOK_cuStreamBeginCapture_v2_ptsz);
    CUresult r = real(s, mode);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamBeginCaptureToGraph(CUstream s, CUgraph g, const CUgraphNode *deps,
                                     const CUgraphEdgeData *data, size_t n,
                                     CUstreamCaptureMode mode)
{
    REAL_OR_FAIL(PFN_cuStreamBeginCaptureToGraph_v12030, HOOK_cuStreamBeginCaptureToGraph);
    CUresult r = real(s, g, deps, data, n, mode);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamBeginCaptureToGraph_ptsz(CUstream s, CUgraph g, const CUgraphNode *deps,
                                          const CUgraphEdgeData *data, size_t n,
                                          CUstreamCaptureMode mode)
{
    REAL_OR_FAIL(PFN_cuStreamBeginCaptureToGraph_v12030_ptsz,
                 HOOK_cuStreamBeginCaptureToGraph_ptsz);
    CUresult r = real(s, g, deps, data, n, mode);
    launch_capture_began(r);
    return r;
}

CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
    REAL_OR_FAIL(PFN_cuStreamEndCapture_v10000, HOOK_cuStreamEndCapture);
    CUresult r = real(s, g);
    launch_capture_ended(r);
    return r;
}

CUresult cuStreamEndCapture_ptsz(CUstream s, CUgraph *g)
{
    REAL_OR_FAIL(PFN_cuStreamEndCapture_v10000_ptsz, HOOK_cuStreamEndCapture_ptsz);
    CUresult r = real(s, g);
    launch_capture_ended(r);
    return r;
}

/* The profiler API marks the capture range of KTIME_RANGE=profiler-api (cudart's
 * cudaProfilerStart/Stop call these). */
typedef CUresult (*profiler_fn)(void);
CUresult cuProfilerStart(void)
{
    REAL_OR_FAIL(profiler_fn, HOOK_cuProfilerStart);
    CUresult r = real();
    capture_mark(true, r);
    return r;
}

CUresult cuProfilerStop(void)
{
    REAL_OR_FAIL(profiler_fn, HOOK_cuProfilerStop);
    CUresult r = real();
    capture_mark(false, r);
    return r;
}

/* dlsym(RTLD_NEXT, name) as the caller would have had it: the first object after the
 * caller's, in load order, that defines name. Forwarding RTLD_NEXT from here would search
 * after libktime instead, and change the answer. */
KTIME_NO_SAN static int hook_by_name(const char *name);


/* libktime's own link map, found once. */
KTIME_NO_SAN static struct link_map *own_map(void)
{
    static struct link_map *_Atomic map;
    struct link_map *m = atomic_load_explicit(&map, memory_order_acquire);
    Dl_info info;

    if (!m && dladdr1((void *)own_map, &info, (void **)&m, RTLD_DL_LINKMAP) && m)
        atomic_store_explicit(&map, m, memory_order_release);
    return m;
}

/* What libktime itself exports under name, or NULL. */
KTIME_NO_SAN static void *own_export(const char *name)
{
    static const struct {
        const char *name;
        void *fn;
    } runtime[] = {
#define HOOK_LAUNCH(n, kind, ptds, params, args, handle, stream, shp)
#define HOOK_OTHER(n)
#define HOOK_MEMOP(n, ptds, params, args, stream, desc)
#define HOOK_RUNTIME(n, params, args) { #n, (void *)n },
#include "hooks.def"
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
#undef HOOK_RUNTIME
    };
    int i = hook_by_name(name);

    if (i >= 0)
        return hook_wrapper[i];
    for (size_t j = 0; j < sizeof runtime / sizeof runtime[0]; j++)
        if (streq(name, runtime[j].name))
            return runtime[j].fn;
#define HOOK_CUPTI(n, params, args)                                                        \
    if (streq(name, #n))                                                                   \
        return (void *)n;
#include "cuptihooks.def"
#undef HOOK_CUPTI
    if (streq(name, "dlsym"))
        return (void *)dlsym;
    if (streq(name, "ktime_version"))
        return (void *)ktime_version;
    return exec_own_export(name);
}

typedef void *(*dlopen_fn)(const char *, int);
typedef int (*dlclose_fn)(void *);

/* libc's own dlopen and dlclose, for dlsym's internals. Tools interpose those (compute-
 * sanitizer does) and their wrappers find the real ones with dlsym, which would come back
 * here: the target process hung. They are asked of the object that defines the real dlsym,
 * opened with dlmopen, which those tools leave alone (libc stays loaded; it is not closed). */
KTIME_NO_SAN static bool libc_dl(dlsym_fn real, dlopen_fn *op, dlclose_fn *cl)
{
    static _Atomic(dlopen_fn) o;
    static _Atomic(dlclose_fn) c;
    dlopen_fn of = atomic_load_explicit(&o, memory_order_acquire);
    dlclose_fn cf = atomic_load_explicit(&c, memory_order_acquire);

    if (!of || !cf) {
        Dl_info info;
        void *h;
        if (!dladdr((void *)real, &info) || !info.dli_fname ||
            !(h = dlmopen(LM_ID_BASE, info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)))
            return false;
        of = (dlopen_fn)real(h, "dlopen");
        cf = (dlclose_fn)real(h, "dlclose");
        if (!of || !cf)
            return false;
        atomic_store_explicit(&o, of, memory_order_release);
        atomic_store_explicit(&c, cf, memory_order_release);
    }
    *op = of;
    *cl = cf;
    return true;
}

KTIME_NO_SAN static void *next_symbol(dlsym_fn real, const char *name, const void *caller)
{
    struct link_map *self = NULL, *owner, *own = own_map();
    Dl_info info;

    if (!dladdr1(caller, &info, (void **)&self, RTLD_DL_LINKMAP) || !self)
        return NULL;
    /* The caller's next object is libktime (the program itself, or a library preloaded just
     * before it, such as a sanitizer runtime): libktime's definition if it has one, else the
     * search after libktime, which is where this very call stands. No dlopen is needed. */
    if (own && self->l_next == own) {
        void *p = own_export(name);
        return p ? p : real(RTLD_NEXT, name);
    }
    /* Before libktime's constructor has run, the loader is still running constructors, out of
     * the usual order: a runtime that starts itself at the first call it intercepts (libasan)
     * asks from inside another library's constructor. dlopen, even RTLD_NOLOAD, would run
     * the constructors still due of the object it opens and of its dependencies, inside this
     * call: libasan's own (it then started itself a second time and aborted), or a preloaded
     * library's that calls libktime before libasan is ready. So a caller that comes before
     * libktime gets libktime's definition, else the search after libktime: what the objects
     * between the two define is not seen then. Lookups that early are a runtime's own, of
     * libc's functions. */
    if (own && !atomic_load_explicit(&hooks_constructed, memory_order_acquire)) {
        for (struct link_map *l = self->l_next; l; l = l->l_next)
            if (l == own) {
                void *p = own_export(name);
                return p ? p : real(RTLD_NEXT, name);
            }
    }
    dlopen_fn op;
    dlclose_fn cl;
    if (!libc_dl(real, &op, &cl))
        return NULL;
    for (struct link_map *l = self->l_next; l; l = l->l_next) {
        void *h, *p;

        if (!l->l_name || !*l->l_name)
            continue;
        h = op(l->l_name, RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            continue;
        p = real(h, name);
        cl(h);
        /* dlsym(h) also searches h's dependencies: keep only a definition in l itself. */
        if (p && dladdr1(p, &info, (void **)&owner, RTLD_DL_LINKMAP) && owner == l)
            return p;
    }
    return NULL;
}

/* dlsym(RTLD_DEFAULT, name) as the caller would have had it: glibc searches the global
 * scope and then the caller's own local scope (a library loaded RTLD_LOCAL, as cudart
 * loads libcuda, finds its own symbols). Forwarded from here, only the first part runs. */
KTIME_NO_SAN static void *default_symbol(dlsym_fn real, const char *name, const void *caller)
{
    struct link_map *self = NULL;
    Dl_info info;
    void *p = real(RTLD_DEFAULT, name), *h;
    dlopen_fn op;
    dlclose_fn cl;

    if (p || !dladdr1(caller, &info, (void **)&self, RTLD_DL_LINKMAP) || !self ||
        !self->l_name || !*self->l_name || !libc_dl(real, &op, &cl))
        return p;
    h = op(self->l_name, RTLD_LAZY | RTLD_NOLOAD);
    if (h) {
        p = real(h, name);
        cl(h);
    }
    return p;
}

KTIME_NO_SAN static int hook_by_name(const char *name)
{
    if (name[0] != 'c' || name[1] != 'u')
        return -1;
    for (int i = 0; i < HOOK_COUNT; i++)
        if (streq(name, hook_name[i]))
            return i;
    return -1;
}

KTIME_NO_SAN KTIME_EXPORT void *dlsym(void *handle, const char *name)
{
    dlsym_fn real = dl_real_dlsym();
    void *p;
    int i;

    if (!real)
        return NULL;
    if (handle == RTLD_NEXT)
        p = next_symbol(real, name, __builtin_return_address(0));
    else if (handle == RTLD_DEFAULT)
        p = default_symbol(real, name, __builtin_return_address(0));
    else
        p = real(handle, name);
    i = hook_by_name(name);
    if (i < 0 || !p) {
        if (p && name[0] == 'c' && name[1] == 'u' && name[2] == 'd' && name[3] == 'a' &&
            runtime_absent(name))
            return NULL;
        if (p && name[0] == 'c' && name[1] == 'u' && name[2] == 'p' && name[3] == 't' &&
            name[4] == 'i') {
            if (cupti_absent(name))
                return NULL;
            if (handle != RTLD_NEXT && handle != RTLD_DEFAULT)
                return cupti_watched(name, p);
        }
        return p;
    }
    if (p != hook_wrapper[i]) {
        void *expected = NULL;
        atomic_compare_exchange_strong(&hook_real[i], &expected, p);
    }
    return hook_wrapper[i];
}
