/* passthrough.c - the CUDA runtime's and CUPTI's entry points that libktime exports: the
 * runtime's pass through (their launches are timed at the driver layer; under the CUPTI timer
 * a launch made in a range pushes it first, for CUPTI's records of the runtime call); CUPTI's
 * tell the CUPTI timer that another client arrived, then pass through. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "passthrough.h"

#include <dlfcn.h>
#include <stdatomic.h>

#include "cuptitimer.h"
#include "dl.h"
#include "log.h"

#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp)
#define HOOK_OTHER(name)
#define HOOK_MEMOP(name, ptds, params, args, stream, desc)
#define HOOK_RUNTIME(name, params, args)                                                   \
    typedef cudaError_t (*name##_fn) params;                                               \
    KTIME_EXPORT cudaError_t name params;
#include "hooks.def"
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
#undef HOOK_RUNTIME

/* ---- the runtime's entry points ---- */

/* The runtime's own function: the next definition after libktime, else the loaded
 * libcudart's. */
KTIME_NO_SAN static void *runtime_real(const char *name)
{
    dlsym_fn f = dl_real_dlsym();
    void *p = f ? f(RTLD_NEXT, name) : NULL;

    if (!p && f) {
        void *h = dlopen("libcudart.so.13", RTLD_LAZY | RTLD_NOLOAD);
        if (!h)
            h = dlopen("libcudart.so.12", RTLD_LAZY | RTLD_NOLOAD);
        p = h ? f(h, name) : NULL;
    }
    return p;
}

#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp)
#define HOOK_OTHER(name)
#define HOOK_MEMOP(name, ptds, params, args, stream, desc)
#define HOOK_RUNTIME(name, params, args)                                                   \
    static name##_fn name##_real;                                                          \
    cudaError_t name params                                                                \
    {                                                                                      \
        name##_fn real = __atomic_load_n(&name##_real, __ATOMIC_ACQUIRE);                  \
        if (!real) {                                                                       \
            real = (name##_fn)runtime_real(#name);                                         \
            __atomic_store_n(&name##_real, real, __ATOMIC_RELEASE);                        \
            log_debug("%s passes through to the CUDA runtime (%s)", #name,                 \
                      real ? "found" : "none loaded");                                     \
        }                                                                                  \
        if (!real)                                                                         \
            return cudaErrorSymbolNotFound;                                                \
        if (!cuptitimer_runtime_before())                                                  \
            return real args;                                                              \
        cudaError_t r_ = real args;                                                        \
        cuptitimer_runtime_after();                                                        \
        return r_;                                                                         \
    }
#include "hooks.def"
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
#undef HOOK_RUNTIME

/* ---- CUPTI entry points: another client arrives, ktime lets go ---- */

/* libcupti's own function: the next definition after libktime, else a loaded libcupti's. */
KTIME_NO_SAN static void *cupti_real(const char *name)
{
    static const char *const sonames[] = { "libcupti.so.13", "libcupti.so.12" };
    dlsym_fn f = dl_real_dlsym();
    void *p = f ? f(RTLD_NEXT, name) : NULL;

    for (size_t i = 0; !p && f && i < sizeof sonames / sizeof sonames[0]; i++) {
        void *h = dlopen(sonames[i], RTLD_LAZY | RTLD_NOLOAD);
        p = h ? f(h, name) : NULL;
    }
    return p;
}

#define HOOK_CUPTI(name, params, args)                                                     \
    typedef CUptiResult (*name##_fn) params;                                               \
    static name##_fn name##_real;                                                          \
    CUptiResult name params                                                                \
    {                                                                                      \
        name##_fn real = __atomic_load_n(&name##_real, __ATOMIC_ACQUIRE);                  \
        if (!real) {                                                                       \
            real = (name##_fn)cupti_real(#name);                                           \
            __atomic_store_n(&name##_real, real, __ATOMIC_RELEASE);                        \
        }                                                                                  \
        if (!real)                                                                         \
            return CUPTI_ERROR_NOT_INITIALIZED;                                            \
        cuptitimer_foreign(#name);                                                         \
        return real args;                                                                  \
    }
#include "cuptihooks.def"
#undef HOOK_CUPTI

/* Whether name is a CUPTI entry point that libktime exports but no libcupti in the process
 * defines: dlsym must then answer as if libktime were not there. */
KTIME_NO_SAN bool cupti_absent(const char *name)
{
#define HOOK_CUPTI(cname, params, args)                                                    \
    if (streq(name, #cname))                                                               \
        return cupti_real(#cname) == NULL;
#include "cuptihooks.def"
#undef HOOK_CUPTI
    return false;
}

/* A client that opened libcupti itself (dlopen, then dlsym with its handle) would reach
 * CUPTI past ktime's wrappers, and ktime would never see it arrive: its records would go
 * to that client's buffers. Such a lookup of an entry point ktime watches gets the wrapper,
 * with p, the function found, as the wrapper's real one; unless the wrapper already has
 * another (a tool preloaded after ktime that wraps CUPTI too, and may be the caller: it
 * gets p, or it would call itself through ktime). */
KTIME_NO_SAN void *cupti_watched(const char *name, void *p)
{
#define HOOK_CUPTI(cname, params, args)                                                    \
    if (streq(name, #cname)) {                                                             \
        cname##_fn had = NULL;                                                             \
        if (__atomic_compare_exchange_n(&cname##_real, &had, (cname##_fn)p, false,         \
                                        __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE) ||             \
            had == (cname##_fn)p)                                                          \
            return (void *)cname;                                                          \
        return p;                                                                          \
    }
#include "cuptihooks.def"
#undef HOOK_CUPTI
    return p;
}

/* Whether name is a runtime entry point that libktime exports but no CUDA runtime in the
 * process defines: dlsym must then answer as if libktime were not there. */
KTIME_NO_SAN bool runtime_absent(const char *name)
{
#define HOOK_LAUNCH(name, kind, ptds, params, args, handle, stream, shp)
#define HOOK_OTHER(name)
#define HOOK_MEMOP(name, ptds, params, args, stream, desc)
#define HOOK_RUNTIME(rname, params, args)                                                  \
    if (streq(name, #rname))                                                               \
        return runtime_real(#rname) == NULL;
#include "hooks.def"
#undef HOOK_LAUNCH
#undef HOOK_OTHER
#undef HOOK_MEMOP
#undef HOOK_RUNTIME
    return false;
}

