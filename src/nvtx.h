/* nvtx.h - libktime as an NVTX tool (nvtx.c). */
#ifndef KTIME_NVTX_H
#define KTIME_NVTX_H

#include <stdbool.h>

/* Whether NVTX's loader initialized libktime as its tool (InitializeInjectionNvtx2). */
bool nvtx_injected(void);

#endif
