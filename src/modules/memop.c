/* memop.c - memory operations timed apart from kernels (KTIME_MEMOPS): what kind a call is,
 * its bytes, and the report's section of them. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "memop.h"

#include <stdlib.h>
#include <string.h>

#include "driver.h"
#include "module.h"

_Atomic uint64_t memop_bytes[MEMOP_NKINDS];

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
    inside_ktime = 1;
    if (drv.PointerGetAttributes(2, attrs, data, ptr) != CUDA_SUCCESS)
        type = 0;
    inside_ktime = 0;
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

/* ---- the module ---- */

static bool memop_start(void)
{
    for (int k = 0; k < MEMOP_NKINDS; k++)
        atomic_store(&memop_bytes[k], 0);
    return kt.cfg.memops;
}

static void memop_header(struct report *r)
{
    r->memops = kt.cfg.memops;
}

/* A kind's row is named by its kind, with the bytes of its calls. */
static void memop_entry(uint32_t id, struct report_kernel *part)
{
    int kind;

    if (atomic_load(&kt.ktab.slots[id].kind) != KTAB_MEMOP)
        return;
    /* A retired key is never a memory operation's: they are never retired. */
    if ((kind = memop_kind_of_key(atomic_load(&kt.ktab.slots[id].key))) < 0)
        return;
    part->name = strdup(memop_label(kind));
    part->bytes = atomic_load(&memop_bytes[kind]);
}

/* Moves the memory operations' rows out of r->kernels into r->memops_rows, by kind. */
static int memop_rows(struct report *r, const struct module_rows *m)
{
    size_t n = 0, count = 0;

    r->memops_rows = NULL;
    r->nmemops = 0;
    for (size_t i = 0; i < r->nkernels; i++)
        count += r->kernels[i].kind == REPORT_MEMOP;
    if (!count)
        return 0;
    if (!(r->memops_rows = calloc(count, sizeof *r->memops_rows)))
        return -1;
    for (int kind = 0; kind < MEMOP_NKINDS; kind++)
        for (size_t i = 0; i < r->nkernels; i++)
            if (r->kernels[i].kind == REPORT_MEMOP && r->kernels[i].name &&
                strcmp(r->kernels[i].name, memop_label(kind)) == 0)
                r->memops_rows[r->nmemops++] = r->kernels[i];
    for (size_t i = 0; i < r->nkernels; i++) {
        if (r->kernels[i].kind != REPORT_MEMOP)
            r->kernels[n++] = r->kernels[i];
        else if (!r->kernels[i].name) /* its label could not be copied: not shown */
            report_rows_free(&r->kernels[i], 1);
    }
    r->nkernels = n;
    return 0;
}

const struct ktime_module memop_module = {
    .name = "memop",
    .start = memop_start,
    .header = memop_header,
    .entry = memop_entry,
    .rows = memop_rows,
};
