/* cudartlike.h - driver entry points obtained the way cudart 13 obtains them. */
#ifndef KTIME_E2E_CUDARTLIKE_H
#define KTIME_E2E_CUDARTLIKE_H

#include <cuda.h>

typedef CUresult (*cl_launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                                CUstream, void **, void **);
typedef CUresult (*cl_launch_ex_t)(const CUlaunchConfig *, CUfunction, void **, void **);

/* Function pointers from cuGetProcAddress; the *Pt ones are the per-thread-stream variants. */
struct cl {
    CUresult (*Init)(unsigned);
    CUresult (*DeviceGet)(CUdevice *, int);
    CUresult (*PrimaryRetain)(CUcontext *, CUdevice);
    CUresult (*PrimaryRelease)(CUdevice);
    CUresult (*CtxSetCurrent)(CUcontext);
    CUresult (*CtxSynchronize)(void);
    CUresult (*ModuleLoadData)(CUmodule *, const void *);
    CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
    CUresult (*ModuleUnload)(CUmodule);
    CUresult (*StreamCreate)(CUstream *, unsigned);
    CUresult (*StreamDestroy)(CUstream);
    CUresult (*StreamSynchronize)(CUstream);
    CUresult (*StreamSynchronizePt)(CUstream);
    CUresult (*StreamBeginCapture)(CUstream, CUstreamCaptureMode);
    CUresult (*StreamBeginCapturePt)(CUstream, CUstreamCaptureMode);
    CUresult (*StreamEndCapture)(CUstream, CUgraph *);
    CUresult (*StreamEndCapturePt)(CUstream, CUgraph *);
    CUresult (*StreamIsCapturing)(CUstream, CUstreamCaptureStatus *);
    CUresult (*StreamIsCapturingPt)(CUstream, CUstreamCaptureStatus *);
    CUresult (*GraphInstantiateWithFlags)(CUgraphExec *, CUgraph, unsigned long long);
    CUresult (*GraphAddEmptyNode)(CUgraphNode *, CUgraph, const CUgraphNode *, size_t);
    CUresult (*GraphLaunch)(CUgraphExec, CUstream);
    CUresult (*GraphLaunchPt)(CUgraphExec, CUstream);
    CUresult (*GraphDestroy)(CUgraph);
    CUresult (*GraphExecDestroy)(CUgraphExec);
    cl_launch_t Launch, LaunchPt;
    cl_launch_ex_t LaunchEx, LaunchExPt;
};

/* dlopen("libcuda.so.1"), dlsym cuGetProcAddress_v2, get cuGetProcAddress (12000) through it
 * and fill *c through that. Exits 1 with a message on failure. */
void cl_load(struct cl *c);

/* cuInit, primary context of device 0 made current on the calling thread. */
void cl_init_primary(const struct cl *c, CUcontext *ctx);

#endif
