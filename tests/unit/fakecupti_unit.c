/* fakecupti_unit.c - a fake libcupti for the unit tests of ktime's CUPTI timer
 * (test_cupti.c): the activity API calls ktime makes, over records the test adds one by one
 * (kernels, launches with their external correlation ids, copies).
 * ktime loads it by KTIME_CUPTI_LIB; the test dlopens the same file (one object) and reaches
 * its state and helpers with dlsym (fakecupti_unit.h). Single-threaded: the test's thread
 * adds records, and ktime parses them on the same thread (cuptitimer_drain). */
#include "fakecupti_unit.h"

#include <string.h>

#define EXPORT __attribute__((visibility("default")))

static struct fcu fcu = { .context_id = 1, .stream_id = 1 };

EXPORT struct fcu *fcu_state(void)
{
    return &fcu;
}

EXPORT void fcu_complete(void)
{
    uint8_t *b = fcu.buf;

    if (!b)
        return;
    fcu.buf = NULL;
    fcu.complete(NULL, 0, b, fcu.size, fcu.used);
}

/* Room for a record of n bytes in the buffer being filled (asked of ktime as CUPTI does), or
 * NULL (counted refused). */
static uint8_t *room(size_t n)
{
    size_t max_records = 0;

    n = (n + 7) & ~(size_t)7;
    if (!fcu.buf) {
        fcu.request(&fcu.buf, &fcu.size, &max_records);
        fcu.used = 0;
    }
    if (fcu.buf && fcu.used + n > fcu.size)
        fcu_complete();
    if (!fcu.buf) {
        fcu.request(&fcu.buf, &fcu.size, &max_records);
        fcu.used = 0;
    }
    if (!fcu.buf || fcu.size < n) {
        fcu.buf = NULL;
        fcu.refused++;
        return NULL;
    }
    uint8_t *p = fcu.buf + fcu.used;
    memset(p, 0, n);
    fcu.used += n;
    return p;
}

/* A record's size by its kind, 8-byte aligned, as CUPTI lays them out. */
static size_t size_of(CUpti_ActivityKind kind)
{
    size_t n;

    switch (kind) {
    case CUPTI_ACTIVITY_KIND_DRIVER:
        n = sizeof(CUpti_ActivityAPI);
        break;
    case CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION:
        n = sizeof(CUpti_ActivityExternalCorrelation);
        break;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
        n = sizeof(CUpti_ActivityMemcpy6);
        break;
    default:
        n = sizeof(CUpti_ActivityKernel10);
        break;
    }
    return (n + 7) & ~(size_t)7;
}

EXPORT void fcu_record_corr(const char *name, uint32_t device, uint32_t context_id,
                            uint32_t stream_id, uint32_t corr, uint64_t start, uint64_t end,
                            uint32_t graph_id)
{
    CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)room(sizeof *k);

    if (!k)
        return;
    k->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k->name = name;
    k->deviceId = device;
    k->contextId = context_id;
    k->streamId = stream_id;
    k->correlationId = corr;
    k->start = start;
    k->end = end;
    k->completed = end;
    k->graphId = graph_id;
    k->gridX = k->gridY = k->gridZ = 1;
    k->blockX = 32;
    k->blockY = k->blockZ = 1;
}

EXPORT void fcu_record(const char *name, uint32_t device, uint32_t context_id,
                       uint32_t stream_id, uint64_t start, uint64_t end, uint32_t graph_id)
{
    fcu_record_corr(name, device, context_id, stream_id, 0, start, end, graph_id);
}

EXPORT void fcu_launch(uint32_t corr, uint64_t start, uint64_t end)
{
    if (fcu.have_popped) {
        CUpti_ActivityExternalCorrelation *e =
            (CUpti_ActivityExternalCorrelation *)room(sizeof *e);
        if (e) {
            e->kind = CUPTI_ACTIVITY_KIND_EXTERNAL_CORRELATION;
            e->externalKind = (CUpti_ExternalCorrelationKind)fcu.ext_kind;
            e->externalId = fcu.popped;
            e->correlationId = corr;
        }
        fcu.have_popped = 0;
    }
    CUpti_ActivityAPI *a = (CUpti_ActivityAPI *)room(sizeof *a);
    if (!a)
        return;
    a->kind = CUPTI_ACTIVITY_KIND_DRIVER;
    a->cbid = 307; /* cuLaunchKernel */
    a->start = start;
    a->end = end;
    a->correlationId = corr;
}

EXPORT void fcu_copy(uint32_t device, uint32_t stream_id, uint64_t start, uint64_t end)
{
    CUpti_ActivityMemcpy6 *c = (CUpti_ActivityMemcpy6 *)room(sizeof *c);

    if (!c)
        return;
    c->kind = CUPTI_ACTIVITY_KIND_MEMCPY;
    c->deviceId = device;
    c->streamId = stream_id;
    c->start = start;
    c->end = end;
}

/* Per-API switches filter what an API kind records, as in libcupti 13: alone they record
 * nothing, and enabling the kind switches every entry point back on. */
static uint8_t api_off[2][1024];
static int api_kind_on[2];

static void count_api(void)
{
    int n[2] = { 0, 0 };
    for (int l = 0; l < 2; l++)
        for (uint32_t c = 1; api_kind_on[l] && c < (l ? CUPTI_RUNTIME_TRACE_CBID_SIZE
                                                        : CUPTI_DRIVER_TRACE_CBID_SIZE); c++)
            n[l] += !api_off[l][c];
    fcu.driver_api_on = n[0];
    fcu.runtime_api_on = n[1];
}

static void api_kind(CUpti_ActivityKind kind, int on)
{
    int l = kind == CUPTI_ACTIVITY_KIND_RUNTIME ? 1 : kind == CUPTI_ACTIVITY_KIND_DRIVER ? 0 : -1;
    if (l < 0)
        return;
    api_kind_on[l] = on;
    if (on)
        memset(api_off[l], 0, sizeof api_off[l]);
    count_api();
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    api_off[0][cbid] = !enable;
    count_api();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
    if (cbid >= 1024)
        return CUPTI_ERROR_INVALID_PARAMETER;
    api_off[1][cbid] = !enable;
    count_api();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPushExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                          uint64_t id)
{
    fcu.pushes++;
    fcu.depth++;
    fcu.ext_kind = (int)kind;
    fcu.popped = id; /* the id of the launch being made */
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityPopExternalCorrelationId(CUpti_ExternalCorrelationKind kind,
                                                         uint64_t *last)
{
    if (!fcu.depth)
        return CUPTI_ERROR_QUEUE_EMPTY;
    fcu.pops++;
    fcu.depth--;
    fcu.have_popped = 1;
    if (last)
        *last = fcu.popped;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc request,
                                                  CUpti_BuffersCallbackCompleteFunc complete)
{
    fcu.request = request;
    fcu.complete = complete;
    fcu.registrations++;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
    fcu.enables++;
    api_kind(kind, 1);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    fcu.disables++;
    api_kind(kind, 0);
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
    fcu.flushes++;
    if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
        fcu.forced_flushes++;
    fcu_complete();
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityFlushPeriod(uint32_t ms)
{
    fcu.flush_periods++;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
                                              CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + size_of((*record)->kind) : buffer;

    if (next + sizeof(CUpti_Activity) > buffer + valid ||
        next + size_of(((CUpti_Activity *)next)->kind) > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
                                                     size_t *dropped)
{
    *dropped = fcu.dropped_next;
    fcu.dropped_next = 0;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult r, const char **s)
{
    *s = r == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "CUPTI_ERROR (fake)";
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetContextId(CUcontext ctx, uint32_t *id)
{
    *id = fcu.context_id;
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetStreamIdEx(CUcontext ctx, CUstream s, uint8_t per_thread,
                                      uint32_t *id)
{
    *id = fcu.stream_id;
    return CUPTI_SUCCESS;
}
