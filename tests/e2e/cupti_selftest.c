/* cupti_selftest.c - checks the fake CUPTI's contract (tests/fake/fakecupti.c), without ktime.
 *
 * Linked with -lcupti -lcuda against tests/fake. Usage: cupti_selftest MODE, where MODE is
 *   basic     records of every kind of launch, field by field; buffers, drops, kinds, contexts,
 *             subscribers, a second client's registration, threads, cuptiFinalize
 *   maxrec    under FAKECUPTI_MAX_RECORDS=3
 *   fail      under FAKECUPTI_FAIL=cuptiActivityEnable:CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,cuptiSubscribe
 *   other     under FAKECUPTI_OTHER_SUBSCRIBER='Nsight Systems'
 *   fork      a flush in a forked child hangs (needs FAKECUPTI_COUNT_FILE)
 * Prints one line per check, "ok - <what>" or "not ok - <what>: <detail>", for
 * tests/e2e/cupti.sh to number.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>  /* not with __CUDA_API_VERSION_INTERNAL: it redefines cuda.h's legacy structs */

#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* cuda.h declares the _ptsz exports only with __CUDA_API_VERSION_INTERNAL. */
CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gridDimX, unsigned int gridDimY, unsigned int gridDimZ,
                             unsigned int blockDimX, unsigned int blockDimY, unsigned int blockDimZ,
                             unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra);

#define REC sizeof(CUpti_ActivityKernel10)
#define MAXREC 4096
#define MAXBUF 512

#include "selfcheck.h"

/* ------------------------------------------------------------------------------------ */
/* Two CUPTI clients, each with its own buffer callbacks                                 */

struct client {
    const char *name;
    size_t buf_records;     /* room per requested buffer */
    size_t maxrec;          /* maxNumRecords it answers */
    int refuse;             /* bufferRequested gives no buffer */
    int misalign;           /* hand out buffers starting 4 bytes past an 8-byte boundary */
    int nreq, ncomp, nunknown, nempty;
    uint8_t *mine[MAXBUF];  /* buffers it handed out */
    int nmine;
    CUpti_ActivityKernel10 recs[MAXREC];
    int nrec;
};

static struct client A = { "A", 64, 0, 0, 0, 0, 0, 0, 0, { 0 }, 0, { { 0 } }, 0 };
static struct client B = { "B", 64, 0, 0, 0, 0, 0, 0, 0, { 0 }, 0, { { 0 } }, 0 };
static pthread_mutex_t g_cl_mu = PTHREAD_MUTEX_INITIALIZER;
static int g_next_err;  /* a cuptiActivityGetNextRecord error other than the end */

static void request(struct client *c, uint8_t **buffer, size_t *size, size_t *maxrec)
{
    pthread_mutex_lock(&g_cl_mu);
    c->nreq++;
    *buffer = NULL;
    *size = 0;
    *maxrec = c->maxrec;
    if (!c->refuse && c->nmine < MAXBUF) {
        uint8_t *p = malloc(c->buf_records * REC + 16);
        if (p) {
            if (c->misalign)
                p += ((uintptr_t)p % 8 == 4) ? 0 : ((uintptr_t)p % 8 == 0 ? 4 : 0);
            c->mine[c->nmine++] = p;
            *buffer = p;
            /* exactly buf_records records fit, after the padding to 8 bytes */
            *size = c->buf_records * REC + ((8 - ((uintptr_t)p & 7)) & 7);
        }
    }
    pthread_mutex_unlock(&g_cl_mu);
}

static void complete(struct client *c, uint8_t *buffer, size_t size, size_t valid)
{
    CUpti_Activity *r = NULL;
    CUptiResult rc;
    int i, known = 0;
    (void)size;
    pthread_mutex_lock(&g_cl_mu);
    c->ncomp++;
    for (i = 0; i < c->nmine; i++)
        known |= c->mine[i] == buffer;
    if (!known)
        c->nunknown++;  /* Kineto: "bufferCompleted called with unknown buffer" */
    if (valid == 0)
        c->nempty++;
    while ((rc = cuptiActivityGetNextRecord(buffer, valid, &r)) == CUPTI_SUCCESS)
        if (c->nrec < MAXREC)
            memcpy(&c->recs[c->nrec++], r, REC);
    if (rc != CUPTI_ERROR_MAX_LIMIT_REACHED)
        g_next_err = (int)rc;
    pthread_mutex_unlock(&g_cl_mu);
}

static void CUPTIAPI req_a(uint8_t **b, size_t *s, size_t *m) { request(&A, b, s, m); }
static void CUPTIAPI req_b(uint8_t **b, size_t *s, size_t *m) { request(&B, b, s, m); }
static void CUPTIAPI comp_a(CUcontext c, uint32_t id, uint8_t *b, size_t s, size_t v) { (void)c; (void)id; complete(&A, b, s, v); }
static void CUPTIAPI comp_b(CUcontext c, uint32_t id, uint8_t *b, size_t s, size_t v) { (void)c; (void)id; complete(&B, b, s, v); }

static void reset(struct client *c)
{
    pthread_mutex_lock(&g_cl_mu);
    c->nreq = c->ncomp = c->nunknown = c->nempty = c->nrec = 0;
    pthread_mutex_unlock(&g_cl_mu);
}

/* ------------------------------------------------------------------------------------ */
/* Expected records                                                                       */

struct want {
    const char *name;
    uint32_t stream_id;
    uint64_t start, end;
    int group;              /* launch call: equal groups share a correlation id */
    int gx, gy, gz, bx, by, bz, shmem;
    int launch_type;
    int graph;              /* 0: not a graph node; else which graph */
    int node;               /* graph nodes: which node */
    CUpti_ActivityKind kind;
    uint32_t ctx_id;
};

static struct want W[MAXREC];
static int NW;
static int g_group;

struct sclock { uint32_t id; uint64_t t; };
static struct sclock g_clocks[64];
static int g_nclocks;

/* The fake's simulated clock of a stream (README "Simulated time": starts at id << 40). */
static uint64_t *clock_of(uint32_t id)
{
    int i;
    for (i = 0; i < g_nclocks; i++)
        if (g_clocks[i].id == id)
            return &g_clocks[i].t;
    g_clocks[g_nclocks].id = id;
    g_clocks[g_nclocks].t = (uint64_t)id << 40;
    return &g_clocks[g_nclocks++].t;
}

static uint32_t sid(CUstream s)
{
    unsigned long long id = 0;
    cuStreamGetId(s, &id);
    return (uint32_t)id;
}

static uint32_t g_ctx_id;

/* A kernel ran on stream id: advance our copy of its clock; add a record to expect if want. */
static void ran(int want, uint32_t stream, const char *name, uint64_t dur, int gx, int gy, int gz, int bx, int by,
                int bz, int shmem, int type, int graph, int node)
{
    uint64_t *t = clock_of(stream);
    if (want) {
        struct want *w = &W[NW++];
        w->name = name;
        w->stream_id = stream;
        w->start = *t;
        w->end = *t + dur;
        w->group = g_group;
        w->gx = gx, w->gy = gy, w->gz = gz, w->bx = bx, w->by = by, w->bz = bz;
        w->shmem = shmem;
        w->launch_type = type;
        w->graph = graph;
        w->node = node;
        w->kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
        w->ctx_id = g_ctx_id;
    }
    *t += dur;
}

static CUresult launch(CUfunction f, CUstream s, int gx, int gy, int gz, int bx, int by, int bz, int shmem)
{
    return cuLaunchKernel(f, (unsigned)gx, (unsigned)gy, (unsigned)gz, (unsigned)bx, (unsigned)by, (unsigned)bz,
                          (unsigned)shmem, s, NULL, NULL);
}

/* Launch and expect: a plain launch that runs. */
static void run1(int want, CUfunction f, CUstream s, const char *name, uint64_t dur)
{
    g_group++;
    if (launch(f, s, 2, 3, 4, 32, 2, 1, 256) != CUDA_SUCCESS)
        check(0, "a launch for the records", "%s failed", name);
    ran(want, sid(s), name, dur, 2, 3, 4, 32, 2, 1, 256, 0, 0, 0);
}

/* Compares client c's records with the expected ones, field by field. */
static void compare(struct client *c, const char *what)
{
    char m[256] = "";
    int i, j, bad = 0;
    uint32_t graph_ids[8] = { 0 };
    uint64_t node_ids[16] = { 0 };
    if (c->nrec != NW) {
        check(0, what, "%d records, want %d", c->nrec, NW);
        return;
    }
    for (i = 0; i < NW && !bad; i++) {
        const CUpti_ActivityKernel10 *r = &c->recs[i];
        const struct want *w = &W[i];
#define FIELD(cond, ...) if (!bad && !(cond)) { bad = 1; snprintf(m, sizeof m, __VA_ARGS__); }
        FIELD(r->kind == w->kind, "record %d: kind %d, want %d", i, (int)r->kind, (int)w->kind);
        FIELD(r->name && strcmp(r->name, w->name) == 0, "record %d: name '%s', want '%s'", i,
              r->name ? r->name : "(null)", w->name);
        FIELD(r->start == w->start && r->end == w->end, "record %d (%s): start %llu end %llu, want %llu %llu", i,
              w->name, (unsigned long long)r->start, (unsigned long long)r->end, (unsigned long long)w->start,
              (unsigned long long)w->end);
        FIELD(r->completed == r->end && r->queued == 0 && r->submitted == 0,
              "record %d: completed %llu queued %llu submitted %llu", i, (unsigned long long)r->completed,
              (unsigned long long)r->queued, (unsigned long long)r->submitted);
        FIELD(r->deviceId == 0 && r->contextId == w->ctx_id && r->streamId == w->stream_id,
              "record %d: device %u context %u stream %u, want 0 %u %u", i, r->deviceId, r->contextId, r->streamId,
              w->ctx_id, w->stream_id);
        FIELD(r->gridX == w->gx && r->gridY == w->gy && r->gridZ == w->gz && r->blockX == w->bx &&
                  r->blockY == w->by && r->blockZ == w->bz && r->dynamicSharedMemory == w->shmem,
              "record %d: grid %d,%d,%d block %d,%d,%d shmem %d, want %d,%d,%d %d,%d,%d %d", i, r->gridX, r->gridY,
              r->gridZ, r->blockX, r->blockY, r->blockZ, r->dynamicSharedMemory, w->gx, w->gy, w->gz, w->bx, w->by,
              w->bz, w->shmem);
        FIELD(r->launchType == w->launch_type, "record %d: launchType %d, want %d", i, r->launchType,
              w->launch_type);
        FIELD(r->correlationId != 0 && r->gridId > 0, "record %d: correlationId %u gridId %lld", i,
              r->correlationId, (long long)r->gridId);
        FIELD(r->staticSharedMemory == 0 && r->registersPerThread == 0 && r->localMemoryTotal == 0 &&
                  r->pAccessPolicyWindow == NULL && r->clusterX == 0 && r->isDeviceLaunched == 0,
              "record %d: fields the fake does not know are not zero", i);
        if (!w->graph) {
            FIELD(r->graphId == 0 && r->graphNodeId == 0, "record %d: graphId %u graphNodeId %llu, want 0 0", i,
                  r->graphId, (unsigned long long)r->graphNodeId);
        } else {
            FIELD(r->graphId != 0 && r->graphNodeId != 0, "record %d: graph node with graphId %u graphNodeId %llu",
                  i, r->graphId, (unsigned long long)r->graphNodeId);
            if (!graph_ids[w->graph])
                graph_ids[w->graph] = r->graphId;
            if (!node_ids[w->node])
                node_ids[w->node] = r->graphNodeId;
            FIELD(graph_ids[w->graph] == r->graphId, "record %d: graphId %u, earlier %u for the same graph", i,
                  r->graphId, graph_ids[w->graph]);
            FIELD(node_ids[w->node] == r->graphNodeId, "record %d: graphNodeId %llu, earlier %llu for the same node",
                  i, (unsigned long long)r->graphNodeId, (unsigned long long)node_ids[w->node]);
        }
        for (j = 0; j < i && !bad; j++) {
            const CUpti_ActivityKernel10 *q = &c->recs[j];
            FIELD((W[j].group == w->group) == (q->correlationId == r->correlationId),
                  "records %d and %d: correlation ids %u and %u, launch calls %d and %d", j, i, q->correlationId,
                  r->correlationId, W[j].group, w->group);
            FIELD(W[j].group == w->group || q->correlationId < r->correlationId,
                  "records %d and %d: correlation ids %u then %u, not increasing", j, i, q->correlationId,
                  r->correlationId);
            FIELD(q->gridId != r->gridId, "records %d and %d: same gridId %lld", j, i, (long long)r->gridId);
            FIELD(!W[j].graph || !w->graph || (W[j].graph == w->graph) == (q->graphId == r->graphId),
                  "records %d and %d: graphId %u and %u for graphs %d and %d", j, i, q->graphId, r->graphId,
                  W[j].graph, w->graph);
            FIELD(!W[j].graph || !w->graph || (W[j].node == w->node) == (q->graphNodeId == r->graphNodeId),
                  "records %d and %d: graphNodeId %llu and %llu for nodes %d and %d", j, i,
                  (unsigned long long)q->graphNodeId, (unsigned long long)r->graphNodeId, W[j].node, w->node);
        }
#undef FIELD
    }
    check(!bad, what, "%s", m);
}

/* ------------------------------------------------------------------------------------ */
/* Threads                                                                                */

#define NTHREADS 4
#define PER_THREAD 200

struct targ {
    CUcontext ctx;
    CUfunction f;
    CUstream s;
};

static void *launcher(void *arg)
{
    struct targ *t = arg;
    int i;
    cuCtxSetCurrent(t->ctx);
    for (i = 0; i < PER_THREAD; i++)
        launch(t->f, t->s, 1, 1, 1, 32, 1, 1, 0);
    return NULL;
}

static int cmp_start(const void *a, const void *b)
{
    const CUpti_ActivityKernel10 *x = a, *y = b;
    if (x->streamId != y->streamId)
        return x->streamId < y->streamId ? -1 : 1;
    return x->start < y->start ? -1 : x->start > y->start;
}

/* ------------------------------------------------------------------------------------ */

static CUcontext g_ctx;
static CUfunction f_small, f_big, f_ga, f_gb, f_cap;

static void setup(void)
{
    CUmodule mod;
    unsigned long long id;
    CHECK_RC(cuInit(0), CUDA_SUCCESS, "cuInit");
    CHECK_RC(cuDevicePrimaryCtxRetain(&g_ctx, 0), CUDA_SUCCESS, "cuDevicePrimaryCtxRetain");
    cuCtxSetCurrent(g_ctx);
    CHECK_RC(cuModuleLoadData(&mod, "k_small=125000;_Z5k_bigPfi=1000000;k_ga=250000;k_gb=375000;k_cap=500000"),
             CUDA_SUCCESS, "cuModuleLoadData");
    cuModuleGetFunction(&f_small, mod, "k_small");
    cuModuleGetFunction(&f_big, mod, "_Z5k_bigPfi");
    cuModuleGetFunction(&f_ga, mod, "k_ga");
    cuModuleGetFunction(&f_gb, mod, "k_gb");
    cuModuleGetFunction(&f_cap, mod, "k_cap");
    cuCtxGetId(g_ctx, &id);
    g_ctx_id = (uint32_t)id;
}

static void enable(CUpti_ActivityKind k, const char *what)
{
    CHECK_RC(cuptiActivityEnable(k), CUPTI_SUCCESS, what);
}

static CUgraphNode add_node(CUgraph g, CUfunction f, int gx, int bx, int shmem)
{
    CUDA_KERNEL_NODE_PARAMS p;
    CUgraphNode n = NULL;
    memset(&p, 0, sizeof p);
    p.func = f;
    p.gridDimX = (unsigned)gx;
    p.gridDimY = 1;
    p.gridDimZ = 1;
    p.blockDimX = (unsigned)bx;
    p.blockDimY = 2;
    p.blockDimZ = 1;
    p.sharedMemBytes = (unsigned)shmem;
    CHECK_RC(cuGraphAddKernelNode(&n, g, NULL, 0, &p), CUDA_SUCCESS, "cuGraphAddKernelNode");
    return n;
}

static void mode_basic(void)
{
    const char *str = NULL;
    uint32_t v = 0, u32;
    uint64_t t0 = 0, t1 = 0;
    size_t dropped = 99;
    CUstream s1, s2, s3;
    CUgraph g2, g1;
    CUgraphExec x2, x1;
    CUcontext ctx2;
    CUlibrary lib;
    CUkernel kk;
    CUpti_SubscriberHandle sub = NULL, sub2 = NULL;
    CUpti_SubscriberParams sp;
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN];
    struct targ ta[NTHREADS];
    pthread_t th[NTHREADS];
    int i, ok, nbuf;
    uint8_t *a_first;

    /* --- no activity yet ------------------------------------------------------------ */
    CHECK_RC(cuptiGetVersion(&v), CUPTI_SUCCESS, "cuptiGetVersion");
    check(v == CUPTI_API_VERSION, "cuptiGetVersion gives the headers' CUPTI_API_VERSION", "%u", v);
    CHECK_RC(cuptiGetResultString(CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, &str), CUPTI_SUCCESS,
             "cuptiGetResultString");
    check(str && strcmp(str, "CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED") == 0,
          "cuptiGetResultString(39) names the code", "'%s'", str ? str : "(null)");
    CHECK_RC(cuptiGetResultString((CUptiResult)12345, &str), CUPTI_ERROR_INVALID_PARAMETER,
             "cuptiGetResultString of no code: INVALID_PARAMETER");
    CHECK_RC(cuptiGetLastError(), CUPTI_ERROR_INVALID_PARAMETER, "cuptiGetLastError gives the last error");
    CHECK_RC(cuptiGetLastError(), CUPTI_SUCCESS, "... and resets it");
    cuptiGetTimestamp(&t0);
    usleep(1000);
    cuptiGetTimestamp(&t1);
    check(t0 > 0 && t1 >= t0 + 1000000, "cuptiGetTimestamp counts ns", "%llu then %llu", (unsigned long long)t0,
          (unsigned long long)t1);
    CHECK_RC(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION,
             "cuptiActivityFlushAll before cuptiActivityRegisterCallbacks: INVALID_OPERATION");
    CHECK_RC(cuptiActivityRegisterCallbacks(NULL, comp_a), CUPTI_ERROR_INVALID_PARAMETER,
             "cuptiActivityRegisterCallbacks(NULL, ...): INVALID_PARAMETER");
    CHECK_RC(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_INVALID), CUPTI_ERROR_INVALID_KIND,
             "cuptiActivityEnable(INVALID): INVALID_KIND");

    setup();
    CHECK_RC(cuStreamCreate(&s1, 0), CUDA_SUCCESS, "cuStreamCreate s1");
    CHECK_RC(cuStreamCreate(&s2, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate s2");
    CHECK_RC(cuStreamCreate(&s3, CU_STREAM_NON_BLOCKING), CUDA_SUCCESS, "cuStreamCreate s3");
    CHECK_RC(cuptiGetContextId(g_ctx, &u32), CUPTI_SUCCESS, "cuptiGetContextId");
    check(u32 == g_ctx_id, "cuptiGetContextId is cuCtxGetId", "%u, want %u", u32, g_ctx_id);
    CHECK_RC(cuptiGetStreamIdEx(g_ctx, s2, 0, &u32), CUPTI_SUCCESS, "cuptiGetStreamIdEx");
    check(u32 == sid(s2), "cuptiGetStreamIdEx is cuStreamGetId", "%u, want %u", u32, sid(s2));
    CHECK_RC(cuptiGetDeviceId(NULL, &u32), CUPTI_SUCCESS, "cuptiGetDeviceId");
    check(u32 == 0, "cuptiGetDeviceId of the current context", "%u", u32);

    /* Registered, nothing enabled: no records. */
    CHECK_RC(cuptiActivityRegisterCallbacks(req_a, comp_a), CUPTI_SUCCESS, "cuptiActivityRegisterCallbacks (A)");
    run1(0, f_small, NULL, "k_small", 125000);
    CHECK_RC(cuptiActivityFlushAll(0), CUPTI_SUCCESS, "cuptiActivityFlushAll with nothing enabled");
    check(A.nreq == 0 && A.ncomp == 0, "no kind enabled: no buffer requested or completed", "%d requested %d completed",
          A.nreq, A.ncomp);

    /* --- every kind of launch -------------------------------------------------------- */
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)");
    enable(CUPTI_ACTIVITY_KIND_MEMCPY, "cuptiActivityEnable(MEMCPY) is accepted (makes nothing)");
    run1(1, f_small, NULL, "k_small", 125000);            /* legacy stream, after a kernel untraced */
    run1(1, f_big, s1, "_Z5k_bigPfi", 1000000);
    run1(1, f_small, s2, "k_small", 125000);
    run1(1, f_big, s1, "_Z5k_bigPfi", 1000000);
    run1(1, f_small, s2, "k_small", 125000);
    g_group++;                                            /* failed: no record */
    CHECK_RC(launch(f_small, s1, 0, 1, 1, 32, 1, 1, 0), CUDA_ERROR_INVALID_VALUE, "a launch with a zero grid fails");
    g_group++;
    CHECK_RC(launch(f_small, (CUstream)(uintptr_t)0xdead0, 1, 1, 1, 1, 1, 1, 0), CUDA_ERROR_INVALID_HANDLE,
             "a launch on a garbage stream fails");
    /* per-thread default stream, cooperative, cuLaunchKernelEx */
    g_group++;
    CHECK_RC(cuLaunchKernel_ptsz(f_small, 5, 1, 1, 64, 1, 1, 0, NULL, NULL, NULL), CUDA_SUCCESS,
             "cuLaunchKernel_ptsz");
    {
        CUstream pts = CU_STREAM_PER_THREAD;
        ran(1, sid(pts), "k_small", 125000, 5, 1, 1, 64, 1, 1, 0, 0, 0, 0);
    }
    g_group++;
    CHECK_RC(cuLaunchCooperativeKernel(f_big, 7, 1, 1, 128, 1, 1, 512, s2, NULL), CUDA_SUCCESS,
             "cuLaunchCooperativeKernel");
    ran(1, sid(s2), "_Z5k_bigPfi", 1000000, 7, 1, 1, 128, 1, 1, 512, CUPTI_ACTIVITY_LAUNCH_TYPE_COOPERATIVE_SINGLE_DEVICE,
        0, 0);
    {
        CUlaunchConfig cfg;
        memset(&cfg, 0, sizeof cfg);
        cfg.gridDimX = 3, cfg.gridDimY = 2, cfg.gridDimZ = 1;
        cfg.blockDimX = 16, cfg.blockDimY = 16, cfg.blockDimZ = 1;
        cfg.sharedMemBytes = 1024;
        cfg.hStream = s1;
        g_group++;
        CHECK_RC(cuLaunchKernelEx(&cfg, f_small, NULL, NULL), CUDA_SUCCESS, "cuLaunchKernelEx");
        ran(1, sid(s1), "k_small", 125000, 3, 2, 1, 16, 16, 1, 1024, 0, 0, 0);
    }
    /* captured: no record now; the graph's launch makes one */
    CHECK_RC(cuStreamBeginCapture_v2(s3, CU_STREAM_CAPTURE_MODE_RELAXED), CUDA_SUCCESS, "cuStreamBeginCapture_v2");
    g_group++;
    CHECK_RC(launch(f_cap, s3, 9, 1, 1, 96, 1, 1, 64), CUDA_SUCCESS, "a captured launch");
    CHECK_RC(cuStreamEndCapture(s3, &g1), CUDA_SUCCESS, "cuStreamEndCapture");
    check(A.nreq == 1 && A.ncomp == 0, "records wait in one buffer until a flush",
          "%d buffers requested, %d completed", A.nreq, A.ncomp);
    /* a graph of two kernel nodes, launched twice; then the captured one */
    CHECK_RC(cuGraphCreate(&g2, 0), CUDA_SUCCESS, "cuGraphCreate");
    add_node(g2, f_ga, 4, 64, 128);
    add_node(g2, f_gb, 8, 32, 0);
    CHECK_RC(cuGraphInstantiateWithFlags(&x2, g2, 0), CUDA_SUCCESS, "cuGraphInstantiateWithFlags");
    CHECK_RC(cuGraphInstantiateWithFlags(&x1, g1, 0), CUDA_SUCCESS, "instantiate the captured graph");
    for (i = 0; i < 2; i++) {
        g_group++;
        CHECK_RC(cuGraphLaunch(x2, s1), CUDA_SUCCESS, "cuGraphLaunch of two kernel nodes");
        ran(1, sid(s1), "k_ga", 250000, 4, 1, 1, 64, 2, 1, 128, 0, 1, 1);
        ran(1, sid(s1), "k_gb", 375000, 8, 1, 1, 32, 2, 1, 0, 0, 1, 2);
    }
    g_group++;
    CHECK_RC(cuGraphLaunch(x1, s2), CUDA_SUCCESS, "cuGraphLaunch of the captured graph");
    ran(1, sid(s2), "k_cap", 500000, 9, 1, 1, 96, 1, 1, 64, 0, 2, 3);
    CHECK_RC(cuptiActivityFlushAll(0), CUPTI_SUCCESS, "cuptiActivityFlushAll(0)");
    check(A.ncomp == 1 && A.nunknown == 0, "the flush completes the one buffer to A", "%d completed, %d unknown",
          A.ncomp, A.nunknown);
    compare(&A, "every record, field by field: names, exact simulated start/end, ids, launch parameters, graph ids");
    check(g_next_err == 0, "cuptiActivityGetNextRecord ends with MAX_LIMIT_REACHED", "it ended with %d", g_next_err);
    CHECK_RC(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), CUPTI_SUCCESS, "a forced flush");
    check(A.ncomp == 1, "... of nothing completes no buffer", "%d completed", A.ncomp);

    /* --- buffers: a full one is completed at once ------------------------------------ */
    reset(&A);
    NW = 0;
    A.buf_records = 3;
    A.misalign = 1;
    for (i = 0; i < 3; i++)
        run1(1, f_small, s2, "k_small", 125000);
    check(A.nreq == 1 && A.ncomp == 1 && A.nrec == 3, "a buffer with room for 3 records is completed at the 3rd launch",
          "%d requested, %d completed, %d records", A.nreq, A.ncomp, A.nrec);
    for (i = 0; i < 4; i++)
        run1(1, f_big, s2, "_Z5k_bigPfi", 1000000);
    check(A.nreq == 3 && A.ncomp == 2 && A.nrec == 6, "... and the next one at the 6th", "%d requested, %d completed",
          A.nreq, A.ncomp);
    cuptiActivityFlushAll(0);
    compare(&A, "records in buffers that do not start 8-byte aligned");
    A.misalign = 0;
    A.buf_records = 64;
    A.maxrec = 2;
    reset(&A);
    NW = 0;
    for (i = 0; i < 5; i++)
        run1(1, f_small, s1, "k_small", 125000);
    check(A.nreq == 3 && A.ncomp == 2, "maxNumRecords 2: a buffer is full after 2 records",
          "%d requested, %d completed", A.nreq, A.ncomp);
    cuptiActivityFlushAll(0);
    compare(&A, "records in buffers of maxNumRecords 2");
    A.maxrec = 0;

    /* --- no buffer: dropped ----------------------------------------------------------- */
    reset(&A);
    A.refuse = 1;
    run1(0, f_small, s1, "k_small", 125000);
    run1(0, f_small, s1, "k_small", 125000);
    CHECK_RC(cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped), CUPTI_SUCCESS, "cuptiActivityGetNumDroppedRecords");
    check(dropped == 2 && A.nreq == 2, "bufferRequested gives NULL: each record is dropped and counted",
          "dropped %zu, %d requests", dropped, A.nreq);
    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    check(dropped == 0, "the dropped count is reset when read", "dropped %zu", dropped);
    A.refuse = 0;

    /* --- kinds ------------------------------------------------------------------------ */
    reset(&A);
    NW = 0;
    CHECK_RC(cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS, "cuptiActivityDisable");
    run1(0, f_small, s1, "k_small", 125000);
    enable(CUPTI_ACTIVITY_KIND_KERNEL, "cuptiActivityEnable(KERNEL)");
    run1(1, f_small, s1, "k_small", 125000);
    W[NW - 1].kind = CUPTI_ACTIVITY_KIND_KERNEL;
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "both kernel kinds");
    run1(1, f_small, s1, "k_small", 125000);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_KERNEL);
    cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    cuptiActivityFlushAll(0);
    compare(&A, "disabled: no record; KERNEL alone: KERNEL records; both: one CONCURRENT_KERNEL record");

    /* --- per-context settings --------------------------------------------------------- */
    reset(&A);
    NW = 0;
    CHECK_RC(cuLibraryLoadData(&lib, "k_lib=250000", NULL, NULL, 0, NULL, NULL, 0), CUDA_SUCCESS, "cuLibraryLoadData");
    cuLibraryGetKernel(&kk, lib, "k_lib");
    CHECK_RC(cuCtxCreate(&ctx2, NULL, 0, 0), CUDA_SUCCESS, "cuCtxCreate");  /* now current */
    CHECK_RC(cuptiActivityEnableContext(ctx2, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS,
             "cuptiActivityEnableContext");
    {
        unsigned long long id2;
        uint32_t save = g_ctx_id;
        cuCtxGetId(ctx2, &id2);
        g_ctx_id = (uint32_t)id2;
        run1(1, (CUfunction)kk, NULL, "k_lib", 250000);  /* ctx2's legacy stream */
        g_ctx_id = save;
        cuCtxPopCurrent(NULL);
        run1(0, (CUfunction)kk, NULL, "k_lib", 250000);  /* the primary context: not enabled */
        enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "enabled globally");
        cuCtxPushCurrent(ctx2);
        CHECK_RC(cuptiActivityDisableContext(ctx2, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_SUCCESS,
                 "cuptiActivityDisableContext");
        run1(0, (CUfunction)kk, NULL, "k_lib", 250000);  /* ctx2: disabled, over the global setting */
        cuCtxPopCurrent(NULL);
        run1(1, (CUfunction)kk, NULL, "k_lib", 250000);
    }
    cuptiActivityFlushAll(0);
    compare(&A, "per-context settings supersede the global ones");
    CHECK_RC(cuptiActivityEnableContext(NULL, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_INVALID_CONTEXT,
             "cuptiActivityEnableContext(NULL): INVALID_CONTEXT");

    /* --- subscribers ------------------------------------------------------------------ */
    CHECK_RC(cuptiSubscribe(&sub, NULL, NULL), CUPTI_SUCCESS, "cuptiSubscribe");
    CHECK_RC(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_SUCCESS, "cuptiEnableDomain");
    CHECK_RC(cuptiEnableCallback(1, sub, CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel),
             CUPTI_SUCCESS, "cuptiEnableCallback");
    CHECK_RC(cuptiSubscribe(&sub2, NULL, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
             "a second cuptiSubscribe: MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED (39)");
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    sp.subscriberName = "second";
    sp.oldSubscriberName = old;
    sp.oldSubscriberSize = sizeof old;
    old[0] = '\0';
    CHECK_RC(cuptiSubscribe_v2(&sub2, NULL, NULL, &sp), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
             "a second cuptiSubscribe_v2: 39");
    check(strncmp(old, "CUPTI for ", 10) == 0, "... which names the subscriber in the way", "'%s'", old);
    CHECK_RC(cuptiUnsubscribe(sub), CUPTI_SUCCESS, "cuptiUnsubscribe");
    CHECK_RC(cuptiEnableDomain(1, sub, CUPTI_CB_DOMAIN_DRIVER_API), CUPTI_ERROR_INVALID_PARAMETER,
             "cuptiEnableDomain after cuptiUnsubscribe: INVALID_PARAMETER");
    sp.subscriberName = "selftest";
    CHECK_RC(cuptiSubscribe_v2(&sub2, NULL, NULL, &sp), CUPTI_SUCCESS, "cuptiSubscribe_v2 once the slot is free");
    CHECK_RC(cuptiSubscribe(&sub, NULL, NULL), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED, "... and it holds it");
    old[0] = '\0';
    cuptiSubscribe_v2(&sub, NULL, NULL, &sp);
    check(strcmp(old, "CUPTI for selftest") == 0, "the holder is named 'CUPTI for <subscriberName>'", "'%s'", old);
    cuptiUnsubscribe(sub2);

    /* --- a second client registers: buffers go to the latest callbacks ---------------- */
    reset(&A);
    reset(&B);
    NW = 0;
    run1(1, f_small, s1, "k_small", 125000);
    run1(1, f_small, s1, "k_small", 125000);
    CHECK_RC(cuptiActivityRegisterCallbacks(req_b, comp_b), CUPTI_SUCCESS, "a second client registers (B)");
    run1(1, f_small, s1, "k_small", 125000);
    cuptiActivityFlushAll(1);
    check(A.ncomp == 0 && B.ncomp == 1 && B.nunknown == 1 && B.nreq == 0,
          "the buffer A requested is completed to B, as an unknown buffer (measured on the GPU)",
          "A: %d completed; B: %d completed, %d unknown, %d requested", A.ncomp, B.ncomp, B.nunknown, B.nreq);
    compare(&B, "... with A's records and the one made after B registered");
    reset(&A);
    reset(&B);
    NW = 0;
    cuptiActivityRegisterCallbacks(req_a, comp_a);
    run1(1, f_small, s2, "k_small", 125000);
    run1(1, f_big, s2, "_Z5k_bigPfi", 1000000);
    CHECK_RC(cuptiActivityFlushAll(1), CUPTI_SUCCESS, "A flushes before passing B's registration on");
    cuptiActivityRegisterCallbacks(req_b, comp_b);
    compare(&A, "... and keeps its records");
    NW = 0;
    run1(1, f_small, s2, "k_small", 125000);
    cuptiActivityFlushAll(1);
    check(B.nreq == 1 && B.ncomp == 1 && B.nunknown == 0, "B's records come in B's own buffer",
          "B: %d requested, %d completed, %d unknown", B.nreq, B.ncomp, B.nunknown);
    compare(&B, "... one record");

    /* --- threads ---------------------------------------------------------------------- */
    cuptiActivityRegisterCallbacks(req_a, comp_a);
    reset(&A);
    A.buf_records = 5;
    for (i = 0; i < NTHREADS; i++) {
        ta[i].ctx = g_ctx;
        ta[i].f = f_small;
        cuStreamCreate(&ta[i].s, CU_STREAM_NON_BLOCKING);
        pthread_create(&th[i], NULL, launcher, &ta[i]);
    }
    for (i = 0; i < NTHREADS; i++)
        pthread_join(th[i], NULL);
    cuptiActivityFlushAll(0);
    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    qsort(A.recs, (size_t)A.nrec, REC, cmp_start);
    ok = A.nrec == NTHREADS * PER_THREAD && dropped == 0;
    for (i = 1; ok && i < A.nrec; i++)
        if (A.recs[i].streamId == A.recs[i - 1].streamId)
            ok = A.recs[i].start == A.recs[i - 1].end && A.recs[i].correlationId != A.recs[i - 1].correlationId;
    nbuf = A.ncomp;
    check(ok && nbuf == NTHREADS * PER_THREAD / 5,
          "4 threads x 200 launches, buffers of 5: every record once, each stream's records back to back",
          "%d records, %zu dropped, %d buffers, first break at %d", A.nrec, dropped, nbuf, i);
    A.buf_records = 64;

    /* --- cuptiFinalize ------------------------------------------------------------------ */
    reset(&A);
    run1(0, f_small, s1, "k_small", 125000);
    a_first = A.nmine ? A.mine[A.nmine - 1] : NULL;
    CHECK_RC(cuptiFinalize(), CUPTI_SUCCESS, "cuptiFinalize");
    check(A.ncomp == 1 && A.nempty == 1 && A.nrec == 0 && a_first,
          "cuptiFinalize gives an unflushed buffer back empty (its record is lost)",
          "%d completed, %d empty, %d records", A.ncomp, A.nempty, A.nrec);
    run1(0, f_small, s1, "k_small", 125000);
    CHECK_RC(cuptiActivityFlushAll(0), CUPTI_ERROR_INVALID_OPERATION, "after cuptiFinalize: no callbacks, no flush");
    check(A.nreq == 1, "after cuptiFinalize: no records", "%d requests", A.nreq);
    /* and a new session */
    reset(&A);
    NW = 0;
    cuptiActivityRegisterCallbacks(req_a, comp_a);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "enable again after cuptiFinalize");
    run1(1, f_big, s2, "_Z5k_bigPfi", 1000000);
    cuptiActivityFlushAll(0);
    compare(&A, "a session after cuptiFinalize records again");
    cuptiActivityFlushPeriod(10);
    CHECK_RC(cuptiActivityFlushPeriod(0), CUPTI_SUCCESS, "cuptiActivityFlushPeriod");
    (void)t1;
}

static void mode_maxrec(void)
{
    size_t dropped = 0;
    setup();
    cuptiActivityRegisterCallbacks(req_a, comp_a);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)");
    for (int i = 0; i < 5; i++)
        run1(i < 3, f_small, NULL, "k_small", 125000);
    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    check(dropped == 2, "FAKECUPTI_MAX_RECORDS=3: 5 launches, 2 records dropped", "dropped %zu", dropped);
    cuptiActivityFlushAll(0);
    compare(&A, "... and the first 3 delivered");
    reset(&A);
    NW = 0;
    for (int i = 0; i < 3; i++)
        run1(1, f_big, NULL, "_Z5k_bigPfi", 1000000);
    cuptiActivityFlushAll(0);
    cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
    compare(&A, "the limit counts records not yet delivered: after a flush, 3 more fit");
    check(dropped == 0, "... none dropped", "dropped %zu", dropped);
}

static void mode_fail(void)
{
    CUpti_SubscriberHandle sub;
    setup();
    CHECK_RC(cuptiActivityRegisterCallbacks(req_a, comp_a), CUPTI_SUCCESS, "cuptiActivityRegisterCallbacks still works");
    CHECK_RC(cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL), CUPTI_ERROR_INSUFFICIENT_PRIVILEGES,
             "FAKECUPTI_FAIL: cuptiActivityEnable gives CUPTI_ERROR_INSUFFICIENT_PRIVILEGES");
    CHECK_RC(cuptiGetLastError(), CUPTI_ERROR_INSUFFICIENT_PRIVILEGES, "... and cuptiGetLastError says so");
    CHECK_RC(cuptiSubscribe(&sub, NULL, NULL), CUPTI_ERROR_NOT_INITIALIZED,
             "FAKECUPTI_FAIL without a code: CUPTI_ERROR_NOT_INITIALIZED");
    run1(0, f_small, NULL, "k_small", 125000);
    cuptiActivityFlushAll(0);
    check(A.nreq == 0 && A.nrec == 0, "nothing enabled: no records", "%d requests, %d records", A.nreq, A.nrec);
}

static void mode_other(void)
{
    CUpti_SubscriberHandle sub;
    CUpti_SubscriberParams sp;
    char old[CUPTI_OLD_SUBSCRIBER_NAME_MIN_LEN] = "";
    memset(&sp, 0, sizeof sp);
    sp.structSize = CUpti_SubscriberParams_STRUCT_SIZE;
    sp.oldSubscriberName = old;
    sp.oldSubscriberSize = sizeof old;
    CHECK_RC(cuptiSubscribe_v2(&sub, NULL, NULL, &sp), CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED,
             "FAKECUPTI_OTHER_SUBSCRIBER: cuptiSubscribe_v2 gives 39");
    check(strcmp(old, "Nsight Systems") == 0, "... naming the other tool", "'%s'", old);
    CHECK_RC(cuptiActivityRegisterCallbacks(req_a, comp_a), CUPTI_SUCCESS, "the activity API still works");
}

static void mode_fork(void)
{
    pid_t pid;
    int st = 0, i, done = 0;
    setup();
    cuptiActivityRegisterCallbacks(req_a, comp_a);
    enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "cuptiActivityEnable(CONCURRENT_KERNEL)");
    run1(1, f_small, NULL, "k_small", 125000);
    fflush(stdout);
    pid = fork();
    if (pid == 0) {
        cuptiActivityFlushAll(1);  /* hangs */
        _exit(0);
    }
    for (i = 0; i < 200 && !done; i++) {  /* 2 s */
        usleep(10000);
        done = waitpid(pid, &st, WNOHANG) == pid;
    }
    check(!done, "cuptiActivityFlushAll in a forked child hangs", "the child exited with status %d", st);
    if (!done) {
        kill(pid, SIGKILL);
        waitpid(pid, &st, 0);
    }
    {
        const char *cf = getenv("FAKECUPTI_COUNT_FILE");
        char line[128], want[64];
        FILE *f = cf ? fopen(cf, "r") : NULL;
        int found = 0;
        snprintf(want, sizeof want, "cupti_child_flush %d\n", (int)pid);
        while (f && fgets(line, sizeof line, f))
            found |= strcmp(line, want) == 0;
        if (f)
            fclose(f);
        check(found, "... after writing a child_flush count line", "no '%.*s' in %s", (int)strlen(want) - 1, want,
              cf ? cf : "(FAKECUPTI_COUNT_FILE unset)");
    }
    CHECK_RC(cuptiActivityFlushAll(1), CUPTI_SUCCESS, "the parent's flush works");
    compare(&A, "... and delivers its record");
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "basic";
    setvbuf(stdout, NULL, _IOLBF, 0);
    if (strcmp(mode, "basic") == 0)
        mode_basic();
    else if (strcmp(mode, "maxrec") == 0)
        mode_maxrec();
    else if (strcmp(mode, "fail") == 0)
        mode_fail();
    else if (strcmp(mode, "other") == 0)
        mode_other();
    else if (strcmp(mode, "fork") == 0)
        mode_fork();
    else {
        fprintf(stderr, "usage: cupti_selftest basic|maxrec|fail|other|fork\n");
        return 2;
    }
    return g_fail;
}
