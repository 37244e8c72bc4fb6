/* memop.c - memory operations timed apart from kernels: classification and bracketing. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "memop.h"

#include "driver.h"
#include "lifecycle.h"

_Static_assert(MEMOP_NKINDS <= sizeof kt.memop_bytes / sizeof kt.memop_bytes[0],
               "a byte count per kind");

static const char *const labels[MEMOP_NKINDS] = { "HtoD", "DtoH", "DtoD", "HtoH", "peer",
                                                  "memset" };

const char *memop_label(int kind)
{
    return kind >= 0 && kind < MEMOP_NKINDS ? labels[kind] : NULL;
}

int memop_kind_of_key(uintptr_t key)
{
    return MEMOP_IS_KEY(key) ? (int)(key - MEMOP_KEY_BASE) : -1;
}

/* Where ptr lives: CU_MEMORYTYPE_HOST (pinned or registered), CU_MEMORYTYPE_DEVICE (device or
 * managed memory, *ordinal its device), or 0: pageable host memory, or not known. Never an
 * error: cuPointerGetAttributes answers a pointer it does not know with zeros. */
static unsigned int where(CUdeviceptr ptr, int *ordinal)
{
    CUpointer_attribute attrs[2] = { CU_POINTER_ATTRIBUTE_MEMORY_TYPE,
                                     CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL };
    unsigned int type = 0;
    int dev = -1;
    void *data[2] = { &type, &dev };

    if (!drv.PointerGetAttributes || !ktime_driver_ready())
        return 0;
    launch_busy = 1;
    if (drv.PointerGetAttributes(2, attrs, data, ptr) != CUDA_SUCCESS)
        type = 0;
    launch_busy = 0;
    if (ordinal)
        *ordinal = dev;
    return type;
}

/* An asynchronous copy waits for its stream when its host side is pageable (the driver stages
 * it, or copies it after the stream drains). */
static bool pageable(const void *host)
{
    return where((CUdeviceptr)(uintptr_t)host, NULL) != CU_MEMORYTYPE_HOST;
}

struct memop memop_1d(int kind, uint64_t bytes, int async, const void *host)
{
    bool blocking = !async || ((kind == MEMOP_HTOD || kind == MEMOP_DTOH) && pageable(host));

    return (struct memop){ kind, bytes, blocking };
}

/* The kind of a copy between two memories of the given types (and device ordinals). */
static int kind_of(unsigned int src, int src_dev, unsigned int dst, int dst_dev)
{
    bool from_dev = src == CU_MEMORYTYPE_DEVICE || src == CU_MEMORYTYPE_ARRAY;
    bool to_dev = dst == CU_MEMORYTYPE_DEVICE || dst == CU_MEMORYTYPE_ARRAY;

    if (from_dev && to_dev)
        return src_dev >= 0 && dst_dev >= 0 && src_dev != dst_dev ? MEMOP_PEER : MEMOP_DTOD;
    if (from_dev)
        return MEMOP_DTOH;
    return to_dev ? MEMOP_HTOD : MEMOP_HTOH;
}

struct memop memop_any(CUdeviceptr dst, CUdeviceptr src, uint64_t bytes, int async)
{
    int sd = -1, dd = -1;
    unsigned int st = where(src, &sd), dt = where(dst, &dd);
    /* Pageable memory on either side makes the call wait for the stream. */
    bool blocking = !async || st == 0 || dt == 0;

    return (struct memop){ kind_of(st, sd, dt, dd), bytes, blocking };
}

struct memop memop_peer(CUcontext dst, CUcontext src, uint64_t bytes, int async)
{
    return (struct memop){ dst != src ? MEMOP_PEER : MEMOP_DTOD, bytes, !async };
}

/* A side of a 2D or 3D copy: its memory type, made concrete for CU_MEMORYTYPE_UNIFIED. */
static unsigned int side(CUmemorytype type, CUdeviceptr dptr, const void *host, int *dev)
{
    *dev = -1;
    switch (type) {
    case CU_MEMORYTYPE_HOST:
        /* Pinned or not, for the blocking rule: 0 when pageable. */
        return where((CUdeviceptr)(uintptr_t)host, NULL) == CU_MEMORYTYPE_HOST
                   ? CU_MEMORYTYPE_HOST
                   : 0;
    case CU_MEMORYTYPE_UNIFIED:
        return where(dptr, dev);
    case CU_MEMORYTYPE_DEVICE:
    case CU_MEMORYTYPE_ARRAY:
        return (unsigned int)type;
    default:
        return 0;
    }
}

static struct memop copy_nd(CUmemorytype st_, CUdeviceptr sdp, const void *sh, CUmemorytype dt_,
                            CUdeviceptr ddp, const void *dh, uint64_t bytes, int async)
{
    int sd, dd;
    unsigned int st = side(st_, sdp, sh, &sd), dt = side(dt_, ddp, dh, &dd);

    return (struct memop){ kind_of(st, sd, dt, dd), bytes, !async || st == 0 || dt == 0 };
}

struct memop memop_2d(const CUDA_MEMCPY2D *p, int async)
{
    if (!p)
        return (struct memop){ MEMOP_DTOD, 0, !async };
    return copy_nd(p->srcMemoryType, p->srcDevice, p->srcHost, p->dstMemoryType, p->dstDevice,
                   p->dstHost, (uint64_t)p->WidthInBytes * p->Height, async);
}

struct memop memop_3d(const CUDA_MEMCPY3D *p, int async)
{
    if (!p)
        return (struct memop){ MEMOP_DTOD, 0, !async };
    return copy_nd(p->srcMemoryType, p->srcDevice, p->srcHost, p->dstMemoryType, p->dstDevice,
                   p->dstHost, (uint64_t)p->WidthInBytes * p->Height * p->Depth, async);
}

struct memop memop_set(uint64_t width, uint64_t elem, uint64_t height, int async)
{
    return (struct memop){ MEMOP_MEMSET, width * elem * height, !async };
}
