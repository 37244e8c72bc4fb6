/* driver.h - ktime's own calls into the real CUDA driver, through pointers resolved
 * at run time (libktime never links libcuda), and the event operations of the core. */
#ifndef KTIME_DRIVER_H
#define KTIME_DRIVER_H

#include <stdbool.h>
#include <cuda.h>

#include "pool.h"

struct driver_api {
    CUresult (*GetProcAddress)(const char *, void **, int, cuuint64_t,
                               CUdriverProcAddressQueryResult *);
    CUresult (*EventCreate)(CUevent *, unsigned int);
    CUresult (*EventRecord)(CUevent, CUstream);
    CUresult (*EventQuery)(CUevent);
    CUresult (*EventElapsedTime)(float *, CUevent, CUevent);
    CUresult (*StreamGetCtx)(CUstream, CUcontext *);
    CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*CtxGetCurrent)(CUcontext *);
    CUresult (*CtxPushCurrent)(CUcontext);
    CUresult (*CtxPopCurrent)(CUcontext *);
    CUresult (*CtxGetDevice)(CUdevice *);
    CUresult (*DeviceGetName)(char *, int, CUdevice);
    CUresult (*DriverGetVersion)(int *);
    CUresult (*KernelGetName)(const char **, CUkernel);
    CUresult (*FuncGetName)(const char **, CUfunction);
};

/* The resolved pointers; valid (non-NULL) once driver_load() returned true. */
extern struct driver_api drv;

/* Resolves every pointer in drv through the driver's real cuGetProcAddress_v2.
 * Returns true when all are present. Called once, under ktime's set-up lock, from the
 * first launch that needs timing (the driver is initialized by then). */
bool driver_load(void *real_get_proc_address_v2);

/* The core's event operations, implemented with drv. */
extern const struct event_ops driver_event_ops;

/* Copies the name of a kernel handle (a CUkernel or a CUfunction: cudart 13, cuBLAS
 * and cuDNN pass CUkernels) into buf. Returns false when neither lookup works. */
bool driver_kernel_name(void *handle, char *buf, size_t size);

#endif
