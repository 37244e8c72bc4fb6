/* driver.h - ktime's own calls into the real CUDA driver, through pointers resolved
 * at run time (libktime never links libcuda), and the event operations of the core. */
#ifndef KTIME_DRIVER_H
#define KTIME_DRIVER_H

#include <stdbool.h>
#include <cuda.h>
#include <cudaTypedefs.h>

#include "pool.h"

/* Every driver function ktime calls, with the ABI version it is asked for. The version
 * matters: cuGetProcAddress hands out the newest ABI not above the version asked, and e.g.
 * cuStreamGetCtx at 12050 or cuCtxGetDevice at 13000 take other arguments. The prototypes
 * come from cudaTypedefs.h's PFN_<name>_v<version>, so version and prototype cannot drift. */
#define DRIVER_FUNCTIONS(X)                                   \
    X(EventCreate, cuEventCreate, 2000, 1)                    \
    X(EventRecord, cuEventRecord, 2000, 1)                    \
    X(EventQuery, cuEventQuery, 2000, 1)                      \
    X(EventElapsedTime, cuEventElapsedTime, 2000, 1)          \
    X(EventElapsedTime2, cuEventElapsedTime, 12080, 0)        \
    X(StreamGetCtx, cuStreamGetCtx, 9020, 1)                  \
    X(StreamIsCapturing, cuStreamIsCapturing, 10000, 1)       \
    X(CtxGetCurrent, cuCtxGetCurrent, 4000, 1)                \
    X(CtxPushCurrent, cuCtxPushCurrent, 4000, 1)              \
    X(CtxPopCurrent, cuCtxPopCurrent, 4000, 1)                \
    X(CtxGetDevice, cuCtxGetDevice, 2000, 1)                  \
    X(DeviceGetName, cuDeviceGetName, 2000, 1)                \
    X(DeviceGetUuid, cuDeviceGetUuid, 11040, 0)               \
    X(DriverGetVersion, cuDriverGetVersion, 2020, 1)          \
    X(KernelGetName, cuKernelGetName, 12030, 0)               \
    X(FuncGetName, cuFuncGetName, 12030, 0)                   \
    X(ModuleGetFunctionCount, cuModuleGetFunctionCount, 12040, 0) \
    X(ModuleEnumerateFunctions, cuModuleEnumerateFunctions, 12040, 0) \
    X(LibraryGetKernelCount, cuLibraryGetKernelCount, 12040, 0) \
    X(LibraryEnumerateKernels, cuLibraryEnumerateKernels, 12040, 0) \
    X(GraphGetNodes, cuGraphGetNodes, 10000, 0)               \
    X(GraphNodeGetType, cuGraphNodeGetType, 10000, 0)         \
    X(MemHostAlloc, cuMemHostAlloc, 2020, 0)                  \
    X(MemHostGetDevicePointer, cuMemHostGetDevicePointer, 3020, 0) \
    X(StreamWaitValue32, cuStreamWaitValue32, 11070, 0)       \
    X(DevicePrimaryCtxGetState, cuDevicePrimaryCtxGetState, 7000, 0) \
    X(DevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain, 7000, 0) \
    X(DevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease, 11000, 0) \
    X(ThreadExchangeStreamCaptureMode, cuThreadExchangeStreamCaptureMode, 10010, 0) \
    X(ModuleLoadData, cuModuleLoadData, 2000, 0)              \
    X(ModuleGetFunction, cuModuleGetFunction, 2000, 0)        \
    X(ModuleUnload, cuModuleUnload, 2000, 0)                  \
    X(StreamCreate, cuStreamCreate, 2000, 0)                  \
    X(StreamDestroy, cuStreamDestroy, 4000, 0)                \
    X(EventDestroy, cuEventDestroy, 4000, 0)                  \
    X(EventSynchronize, cuEventSynchronize, 2000, 0)          \
    X(LaunchKernel, cuLaunchKernel, 4000, 0)                  \
    X(MemFreeHost, cuMemFreeHost, 2000, 0)                    \
    X(DeviceGetCount, cuDeviceGetCount, 2000, 0)              \
    X(DeviceGetPCIBusId, cuDeviceGetPCIBusId, 4010, 0)         \
    X(DeviceGetAttribute, cuDeviceGetAttribute, 2000, 0)      \
    X(MemAlloc, cuMemAlloc, 3020, 0)                          \
    X(MemsetD32Async, cuMemsetD32Async, 3020, 0)             \
    X(PointerGetAttributes, cuPointerGetAttributes, 7000, 0)

struct driver_api {
    PFN_cuGetProcAddress_v12000 GetProcAddress;
#define X(field, sym, ver, required) PFN_##sym##_v##ver field;
    DRIVER_FUNCTIONS(X)
#undef X
};

/* The resolved pointers; valid (non-NULL) once driver_load() returned true. */
extern struct driver_api drv;

/* Resolves every pointer in drv through the driver's real cuGetProcAddress_v2.
 * Returns true when all the required ones are present (the others may stay NULL). Called once, under ktime's set-up lock, from the
 * first launch that needs timing (the driver is initialized by then). */
bool driver_load(void *real_get_proc_address_v2);

/* The core's event operations, implemented with drv. */
extern const struct event_ops driver_event_ops;

/* Exchanges the calling thread's stream-capture mode with *mode (cuThreadExchangeStreamCaptureMode).
 * Returns false, *mode untouched, when the driver cannot. ktime queries events from its drain
 * thread, and from program threads at a context release or at exit, in THREAD_LOCAL mode: in
 * the default GLOBAL mode a cuEventQuery while another thread captures in GLOBAL mode
 * (torch.cuda.graph's default) fails with CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED and
 * invalidates that capture. */
bool driver_swap_capture_mode(CUstreamCaptureMode *mode);

/* The name of a kernel handle (a CUkernel or a CUfunction: cudart 13, cuBLAS and cuDNN pass
 * CUkernels), whole, as the driver holds it: valid while its module is loaded, so the caller
 * copies it at once. NULL when neither lookup works. */
const char *driver_kernel_name(void *handle);

/* Tells ktime how to find a real driver symbol by its exported name (the
 * interposition layer's lookup in the libcuda the process loaded; NULL when none). Called
 * once, from the interposition layer's constructor. */
void ktime_set_symbol_source(void *(*lookup)(const char *name));

/* Whether the process has a CUDA driver loaded that ktime's lookup finds (without resolving
 * anything, nor deciding for good as ktime_driver_ready() does). For the timer API (api.c),
 * which may be called before any libcuda is loaded. Any thread; no lock. */
bool ktime_driver_present(void);

/* True once ktime's own driver pointers are resolved; resolves them on first call.
 * Any thread; takes the set-up lock only the first time. */
bool ktime_driver_ready(void);

#endif
