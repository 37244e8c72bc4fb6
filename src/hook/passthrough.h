/* passthrough.h - what the interposition layer's lookup (hooks.c's dlsym) asks of the
 * runtime's and CUPTI's entry points that libktime exports (passthrough.c). */
#ifndef KTIME_PASSTHROUGH_H
#define KTIME_PASSTHROUGH_H

#include <stdbool.h>

#include <cuda.h>
#include <cuda_runtime_api.h>
#include <cupti.h>

#include "dl.h"
#include "lifecycle.h"

/* strcmp(a, b) == 0, without calling libc: a sanitizer runtime that asks dlsym for the
 * functions it intercepts has not set up its own strcmp yet. */
KTIME_NO_SAN static inline bool streq(const char *a, const char *b)
{
    while (*a && *a == *b)
        a++, b++;
    return *a == *b;
}

/* CUPTI's entry points that libktime exports (cuptihooks.def). */
#define HOOK_CUPTI(name, params, args) KTIME_EXPORT CUptiResult name params;
#include "cuptihooks.def"
#undef HOOK_CUPTI

/* Whether name is a runtime (cuda*) or CUPTI entry point that libktime exports but no CUDA
 * runtime or libcupti in the process defines: dlsym must then answer as if libktime were not
 * there. */
bool runtime_absent(const char *name);
bool cupti_absent(const char *name);

/* A client that opened libcupti itself (dlopen, then dlsym with its handle) would reach
 * CUPTI past ktime's wrappers, and ktime would never see it arrive: its records would go to
 * that client's buffers. Such a lookup of an entry point ktime watches (name, p the function
 * found) returns the wrapper, with p as the wrapper's real one; unless the wrapper already
 * has another (a tool preloaded after ktime that wraps CUPTI too, and may be the caller: it
 * gets p, or it would call itself through ktime). */
void *cupti_watched(const char *name, void *p);

#endif
