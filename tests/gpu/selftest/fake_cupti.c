/* A stand-in for libcupti.so.13, for checking libkcount on a machine without a GPU.
 *
 * Implements the few activity-API entry points libkcount calls. fake_cupti_launch() (found by
 * the host program with dlsym) appends a CUpti_ActivityKernel10 record to the current buffer,
 * asking for one through the client's request callback like CUPTI does; a full buffer goes back
 * through the completion callback, and so does the current one on cuptiActivityFlushAll (with
 * flag 0 only when every record in it is complete). FAKE_CUPTI_ENABLE_FAIL=1 makes
 * cuptiActivityEnable fail; FAKE_CUPTI_DROPPED=N reports N dropped records once.
 */
#define _GNU_SOURCE
#include <cupti.h>

#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static CUpti_BuffersCallbackRequestFunc req;
static CUpti_BuffersCallbackCompleteFunc done;
static uint8_t *cur;
static size_t cur_size, cur_used;
static int cur_incomplete;
static uint32_t corr;
static uint64_t clock_ns = 1000000;
static int dropped_reported;

CUptiResult CUPTIAPI cuptiGetResultString(CUptiResult result, const char **str)
{
    *str = result == CUPTI_SUCCESS ? "CUPTI_SUCCESS" : "FAKE_CUPTI_ERROR";
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc r,
                                                    CUpti_BuffersCallbackCompleteFunc c)
{
    if (!r || !c)
        return CUPTI_ERROR_INVALID_PARAMETER;
    req = r;
    done = c;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
    const char *f = getenv("FAKE_CUPTI_ENABLE_FAIL");
    if (f && *f == '1')
        return CUPTI_ERROR_UNKNOWN;
    return kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ? CUPTI_SUCCESS
                                                         : CUPTI_ERROR_NOT_COMPATIBLE;
}

/* Called with lock held. */
static void deliver(void)
{
    uint8_t *b = cur;
    size_t s = cur_size, u = cur_used;
    cur = NULL;
    cur_size = cur_used = 0;
    cur_incomplete = 0;
    if (b)
        done(NULL, 0, b, s, u);
}

void fake_cupti_launch(const char *name, uint64_t dur_ns, int complete)
{
    pthread_mutex_lock(&lock);
    if (!cur) {
        size_t maxrec = 0;
        req(&cur, &cur_size, &maxrec);
        cur_used = 0;
        if (!cur) {
            pthread_mutex_unlock(&lock);
            return;
        }
    }
    CUpti_ActivityKernel10 k;
    memset(&k, 0, sizeof k);
    k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
    k.name = name;
    k.correlationId = ++corr;
    k.start = clock_ns;
    k.end = complete ? clock_ns + dur_ns : 0;
    clock_ns += dur_ns + 1000;
    memcpy(cur + cur_used, &k, sizeof k);
    cur_used += sizeof k;
    if (!complete)
        cur_incomplete = 1;
    if (cur_size - cur_used < sizeof k)
        deliver();
    pthread_mutex_unlock(&lock);
}

CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
    pthread_mutex_lock(&lock);
    if (cur && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED || !cur_incomplete))
        deliver();
    pthread_mutex_unlock(&lock);
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid, CUpti_Activity **record)
{
    uint8_t *next = *record ? (uint8_t *)*record + sizeof(CUpti_ActivityKernel10) : buffer;
    if (next + sizeof(CUpti_ActivityKernel10) > buffer + valid)
        return CUPTI_ERROR_MAX_LIMIT_REACHED;
    *record = (CUpti_Activity *)next;
    return CUPTI_SUCCESS;
}

CUptiResult CUPTIAPI cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream, size_t *dropped)
{
    (void)ctx;
    (void)stream;
    const char *d = getenv("FAKE_CUPTI_DROPPED");
    *dropped = 0;
    if (d && !dropped_reported) {
        *dropped = (size_t)strtoul(d, NULL, 10);
        dropped_reported = 1;
    }
    return CUPTI_SUCCESS;
}
