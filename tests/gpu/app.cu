// GPU test workload for ktime: four kernels of known length launched a known number of times.
//
// Built three ways by build.sh (static cudart, shared cudart, per-thread default stream).
// Each kernel spins on %globaltimer until its target time has passed, so its length is set by
// design (not by clock speed), and does one step of integer work on its own buffer so that the
// checksum printed at the end comes from real device work and is identical with or without a
// preloaded tool. stdout carries only deterministic lines; anything timing-related goes to stderr.
//
// usage: app [-n C0,C1,C2,C3] [-t THREADS] [-l LINGER_MS]
//   -n  launches of each kernel per thread (default 2000,1000,400,150)
//   -t  host threads, each running the whole plan on its own buffers (default 1)
//   -l  sleep this long after the final synchronize, before exit (default 250), so that a
//       periodic CUPTI flush in the independent counter has delivered every record

#include <cuda_runtime.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <pthread.h>
#include <time.h>
#include <vector>

#define NKERN 4
#define BLOCK 128
#define MAX_THREADS 16

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "app: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__,     \
                    #call, cudaGetErrorString(e_), (int)e_);                            \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// K selects a distinct kernel (and mangled name) per duration class.
template <int K>
__global__ void ktg_spin(unsigned *buf, unsigned long long ns)
{
    unsigned long long t0 = global_ns();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    unsigned v = buf[i];
    v = v * 1664525u + 1013904223u + (unsigned)K * 7919u;
    buf[i] = v ^ (v >> 13);
    while (global_ns() - t0 < ns) {
    }
}

struct kspec {
    const char *key;        // a substring of the mangled name, for the comparison script
    unsigned long long ns;  // target length
    bool all_sms;           // grid of one block per SM, or a single block
    const char *how;        // launch path
};

static const kspec SPECS[NKERN] = {
    {"ktg_spinILi0E", 5000ull, true, "<<<>>> default stream"},
    {"ktg_spinILi1E", 50000ull, false, "<<<>>> created stream"},
    {"ktg_spinILi2E", 200000ull, true, "cudaLaunchKernelEx default stream"},
    {"ktg_spinILi3E", 1000000ull, false, "<<<>>> default stream"},
};

static long g_count[NKERN] = {2000, 1000, 400, 150};
static int g_sms = 0;

struct worker {
    int id;
    unsigned *dbuf[NKERN];
    size_t nelem[NKERN];
    unsigned long long checksum;
};

static unsigned init_value(int thread, int k, size_t i)
{
    return (unsigned)(i * 2654435761u) ^ (unsigned)(k * 40503u) ^ (unsigned)(thread * 977u);
}

static void *run_worker(void *arg)
{
    worker *w = (worker *)arg;
    cudaStream_t side;
    CK(cudaStreamCreate(&side));
    for (int k = 0; k < NKERN; k++) {
        int grid = SPECS[k].all_sms ? g_sms : 1;
        w->nelem[k] = (size_t)grid * BLOCK;
        std::vector<unsigned> h(w->nelem[k]);
        for (size_t i = 0; i < h.size(); i++)
            h[i] = init_value(w->id, k, i);
        CK(cudaMalloc(&w->dbuf[k], w->nelem[k] * sizeof(unsigned)));
        CK(cudaMemcpy(w->dbuf[k], h.data(), w->nelem[k] * sizeof(unsigned),
                      cudaMemcpyHostToDevice));
    }
    CK(cudaDeviceSynchronize());

    long most = 0;
    for (int k = 0; k < NKERN; k++)
        if (g_count[k] > most)
            most = g_count[k];

    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(g_sms);
    cfg.blockDim = dim3(BLOCK);
    cfg.dynamicSmemBytes = 0;
    cfg.stream = 0;
    cfg.attrs = NULL;
    cfg.numAttrs = 0;

    for (long i = 0; i < most; i++) {
        if (i < g_count[0])
            ktg_spin<0><<<g_sms, BLOCK>>>(w->dbuf[0], SPECS[0].ns);
        if (i < g_count[1])
            ktg_spin<1><<<1, BLOCK, 0, side>>>(w->dbuf[1], SPECS[1].ns);
        if (i < g_count[2])
            CK(cudaLaunchKernelEx(&cfg, ktg_spin<2>, w->dbuf[2], SPECS[2].ns));
        if (i < g_count[3])
            ktg_spin<3><<<1, BLOCK>>>(w->dbuf[3], SPECS[3].ns);
        if ((i & 63) == 0)
            CK(cudaGetLastError());
    }
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(side));
    CK(cudaDeviceSynchronize());

    unsigned long long h64 = 1469598103934665603ull;  // FNV-1a over every buffer, in order
    for (int k = 0; k < NKERN; k++) {
        std::vector<unsigned> h(w->nelem[k]);
        CK(cudaMemcpy(h.data(), w->dbuf[k], w->nelem[k] * sizeof(unsigned),
                      cudaMemcpyDeviceToHost));
        for (size_t j = 0; j < h.size(); j++) {
            for (int b = 0; b < 4; b++) {
                h64 ^= (h[j] >> (8 * b)) & 0xffu;
                h64 *= 1099511628211ull;
            }
        }
        CK(cudaFree(w->dbuf[k]));
    }
    CK(cudaStreamDestroy(side));
    w->checksum = h64;
    return NULL;
}

static int parse_counts(const char *s)
{
    const char *p = s;
    for (int k = 0; k < NKERN; k++) {
        char *end;
        errno = 0;
        long v = strtol(p, &end, 10);
        if (errno || end == p || v < 0 || v > 100000000)
            return -1;
        g_count[k] = v;
        if (k < NKERN - 1) {
            if (*end != ',')
                return -1;
            p = end + 1;
        } else if (*end != '\0') {
            return -1;
        }
    }
    return 0;
}

static long parse_long(const char *s, long lo, long hi)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    return v;
}

int main(int argc, char **argv)
{
    int threads = 1;
    long linger_ms = 250;
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "-n") && a + 1 < argc) {
            if (parse_counts(argv[++a])) {
                fprintf(stderr, "app: bad -n '%s' (want C0,C1,C2,C3)\n", argv[a]);
                return 2;
            }
        } else if (!strcmp(argv[a], "-t") && a + 1 < argc) {
            threads = (int)parse_long(argv[++a], 1, MAX_THREADS);
            if (threads < 1) {
                fprintf(stderr, "app: bad -t '%s'\n", argv[a]);
                return 2;
            }
        } else if (!strcmp(argv[a], "-l") && a + 1 < argc) {
            linger_ms = parse_long(argv[++a], 0, 60000);
            if (linger_ms < 0) {
                fprintf(stderr, "app: bad -l '%s'\n", argv[a]);
                return 2;
            }
        } else {
            fprintf(stderr, "usage: %s [-n C0,C1,C2,C3] [-t THREADS] [-l LINGER_MS]\n", argv[0]);
            return 2;
        }
    }

    int dev = 0;
    CK(cudaSetDevice(dev));
    CK(cudaDeviceGetAttribute(&g_sms, cudaDevAttrMultiProcessorCount, dev));
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    fprintf(stderr, "app: device %s, %d SMs, %d thread(s)\n", prop.name, g_sms, threads);

    worker ws[MAX_THREADS];
    pthread_t tids[MAX_THREADS];
    memset(ws, 0, sizeof ws);
    for (int t = 0; t < threads; t++) {
        ws[t].id = t;
        if (threads == 1) {
            run_worker(&ws[0]);
        } else if (pthread_create(&tids[t], NULL, run_worker, &ws[t]) != 0) {
            fprintf(stderr, "app: pthread_create failed\n");
            return 1;
        }
    }
    if (threads > 1)
        for (int t = 0; t < threads; t++)
            pthread_join(tids[t], NULL);

    unsigned long long all = 0;
    for (int t = 0; t < threads; t++)
        all = all * 31ull + ws[t].checksum;

#if defined(CUDA_API_PER_THREAD_DEFAULT_STREAM)
    const char *mode = "per-thread default stream";
#else
    const char *mode = "legacy default stream";
#endif
    printf("ktime gpu test app (%s), %d thread(s)\n", mode, threads);
    for (int k = 0; k < NKERN; k++)
        printf("kernel %s target_ns %llu grid %d block %d via %s\n", SPECS[k].key, SPECS[k].ns,
               SPECS[k].all_sms ? g_sms : 1, BLOCK, SPECS[k].how);
    for (int k = 0; k < NKERN; k++)
        printf("expect %s %ld\n", SPECS[k].key, g_count[k] * threads);
    printf("checksum %016llx\n", all);
    fflush(stdout);

    if (linger_ms > 0) {
        struct timespec ts = {linger_ms / 1000, (linger_ms % 1000) * 1000000L};
        while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
        }
    }
    return 0;
}
