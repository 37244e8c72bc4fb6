/* fakecupti_unit.c - a fake libcupti for the unit tests of ktime's CUPTI timer
 * (test_cupti.c): the activity API calls ktime makes, over records the test adds one by one.
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

EXPORT void fcu_record(const char *name, uint32_t device, uint32_t context_id,
                       uint32_t stream_id, uint64_t start, uint64_t end, uint32_t graph_id)
{
    CUpti_ActivityKernel10 k;
    size_t max_records = 0;

    if (!fcu.buf) {
        fcu.request(&fcu.buf, &fcu.size, &max_records);
        fcu.used = 0;
    }
    if (fcu.buf && fcu.used + sizeof k > fcu.size)
        fcu_complete();
    if (!fcu.buf) {
        fcu.request(&fcu.buf, &fcu.size, &max_records);
        fcu.used = 0;
    }
    if (!fcu.buf || fcu.size < sizeof k) {
        fcu.buf = NULL;
        fcu.refused++;
        return;
    }
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.deviceId = device;
    k.contextId = context_id;
    k.streamId = stream_id;
    k.start = start;
    k.end = end;
    k.completed = end;
    k.graphId = graph_id;
    k.gridX = k.gridY = k.gridZ = 1;
    k.blockX = 32;
    k.blockY = k.blockZ = 1;
    memcpy(fcu.buf + fcu.used, &k, sizeof k);
    fcu.used += sizeof k;
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
    return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
    fcu.disables++;
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
    uint8_t *next = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityKernel10) : buffer;

    if (next + sizeof(CUpti_ActivityKernel10) > buffer + valid)
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
