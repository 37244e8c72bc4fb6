// chain.cu - what chaining events costs and measures on a busy stream, against a pair per
// launch: N back-to-back spin kernels on one stream, timed three ways, without ktime.
//
//   chain [-n N] [-u US] [-r REPS]        (defaults: 10000 launches of a 10 us kernel, 5 reps)
//
//   bare   no event between the launches;
//   pair   cudaEventRecord(start[i]); kernel; cudaEventRecord(stop[i])  (2N events, as ktime);
//   chain  cudaEventRecord(e[0]); then kernel; cudaEventRecord(e[i+1])  (N+1 events: each
//          interval e[i]..e[i+1] is one kernel and whatever the stream did between two).
//
// Every batch is preceded by a 500 us spin (so that the stream is busy when the batch starts:
// the first interval does not include the CPU's submission) and bracketed by one event pair
// (the batch's GPU time). Per method, the median of REPS repetitions of: the wall time per launch
// (host clock from the first launch to the end of the synchronisation, the lead spin's time
// subtracted as measured on the GPU), the batch's GPU time per launch, and the mean kernel time
// the method measures (pair: mean of the N intervals; chain: mean of the N intervals, and their
// median). "bare kernel" is the bare batch's GPU time / N: what each launch takes in the stream
// with nothing between. Prints a table on stdout; exit 0, or 1 on a CUDA error.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CK(x)                                                                            \
    do {                                                                                 \
        cudaError_t e_ = (x);                                                            \
        if (e_ != cudaSuccess) {                                                         \
            fprintf(stderr, "chain: %s: %s (line %d)\n", #x, cudaGetErrorString(e_),     \
                    __LINE__);                                                           \
            exit(1);                                                                     \
        }                                                                                \
    } while (0)

// Spins on the global timer for ns nanoseconds.
__global__ void chain_spin(unsigned long long ns)
{
    unsigned long long t0, t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    } while (t - t0 < ns);
}

enum method { BARE, PAIR, CHAIN, NMETHODS };
static const char *const names[NMETHODS] = { "bare", "pair", "chain" };

struct rep {
    double wall_us;  // per launch, host
    double gpu_us;   // per launch, the batch's event pair
    double mean_us;  // the method's mean interval (0: none)
    double med_us;   // the method's median interval (0: none)
};

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static rep run(method m, cudaStream_t s, long n, unsigned long long ns, cudaEvent_t *ev,
               cudaEvent_t lead0, cudaEvent_t b0, cudaEvent_t b1)
{
    rep r = {};
    CK(cudaEventRecord(lead0, s));
    chain_spin<<<1, 32, 0, s>>>(500000ull);
    CK(cudaEventRecord(b0, s));
    auto t0 = std::chrono::steady_clock::now();
    if (m == BARE) {
        for (long i = 0; i < n; i++)
            chain_spin<<<1, 32, 0, s>>>(ns);
    } else if (m == PAIR) {
        for (long i = 0; i < n; i++) {
            cudaEventRecord(ev[2 * i], s);
            chain_spin<<<1, 32, 0, s>>>(ns);
            cudaEventRecord(ev[2 * i + 1], s);
        }
    } else {
        cudaEventRecord(ev[0], s);
        for (long i = 0; i < n; i++) {
            chain_spin<<<1, 32, 0, s>>>(ns);
            cudaEventRecord(ev[i + 1], s);
        }
    }
    CK(cudaEventRecord(b1, s));
    CK(cudaStreamSynchronize(s));
    double host_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    CK(cudaGetLastError());
    float lead_ms = 0, batch_ms = 0;
    CK(cudaEventElapsedTime(&lead_ms, lead0, b0));
    CK(cudaEventElapsedTime(&batch_ms, b0, b1));
    // The lead spin was still running when the loop began: at most its length is the host's
    // wait for it.
    r.wall_us = (host_ms - std::min<double>(lead_ms, host_ms)) * 1000.0 / (double)n;
    r.gpu_us = batch_ms * 1000.0 / (double)n;
    if (m != BARE) {
        std::vector<double> iv((size_t)n);
        double sum = 0;
        for (long i = 0; i < n; i++) {
            float ms = 0;
            if (m == PAIR)
                CK(cudaEventElapsedTime(&ms, ev[2 * i], ev[2 * i + 1]));
            else
                CK(cudaEventElapsedTime(&ms, ev[i], ev[i + 1]));
            iv[(size_t)i] = ms * 1000.0;
            sum += iv[(size_t)i];
        }
        r.mean_us = sum / (double)n;
        r.med_us = median(iv);
    }
    return r;
}

int main(int argc, char **argv)
{
    long n = 10000;
    double us = 10.0;
    int reps = 5;

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc)
            n = atol(argv[++i]);
        else if (!strcmp(argv[i], "-u") && i + 1 < argc)
            us = atof(argv[++i]);
        else if (!strcmp(argv[i], "-r") && i + 1 < argc)
            reps = atoi(argv[++i]);
        else {
            fprintf(stderr, "usage: chain [-n LAUNCHES] [-u KERNEL_US] [-r REPS]\n");
            return 2;
        }
    }
    if (n < 1 || us <= 0 || reps < 1) {
        fprintf(stderr, "chain: -n, -u and -r must be positive\n");
        return 2;
    }
    unsigned long long ns = (unsigned long long)(us * 1000.0);

    cudaStream_t s;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    std::vector<cudaEvent_t> ev((size_t)(2 * n + 1));
    for (auto &e : ev)
        CK(cudaEventCreate(&e));
    cudaEvent_t lead0, b0, b1;
    CK(cudaEventCreate(&lead0));
    CK(cudaEventCreate(&b0));
    CK(cudaEventCreate(&b1));
    for (int i = 0; i < 200; i++) // warm up: module load, clocks
        chain_spin<<<1, 32, 0, s>>>(ns);
    CK(cudaStreamSynchronize(s));

    std::vector<rep> all[NMETHODS];
    for (int r = 0; r < reps; r++) // interleaved, so that drift hits every method alike
        for (int m = 0; m < NMETHODS; m++)
            all[m].push_back(run((method)m, s, n, ns, ev.data(), lead0, b0, b1));

    rep med[NMETHODS];
    for (int m = 0; m < NMETHODS; m++) {
        std::vector<double> w, g, mu, md;
        for (auto &x : all[m]) {
            w.push_back(x.wall_us);
            g.push_back(x.gpu_us);
            mu.push_back(x.mean_us);
            md.push_back(x.med_us);
        }
        med[m] = { median(w), median(g), median(mu), median(md) };
    }
    double bare_kernel = med[BARE].gpu_us;
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("chain: %ld back-to-back launches of a %.1f us spin kernel on one stream, %s; "
           "median of %d reps\n", n, us, prop.name, reps);
    printf("bare kernel (bare batch's GPU time / N): %.3f us\n\n", bare_kernel);
    printf("| method | events per launch | wall us/launch | wall vs bare | GPU us/launch | "
           "GPU vs bare | measured mean us | mean vs bare kernel | measured median us |\n");
    printf("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
    for (int m = 0; m < NMETHODS; m++) {
        const char *epl = m == BARE ? "0" : m == PAIR ? "2" : "1 (+1)";
        printf("| %s | %s | %.3f | %+.2f %% | %.3f | %+.2f %% | ", names[m], epl, med[m].wall_us,
               100.0 * (med[m].wall_us / med[BARE].wall_us - 1), med[m].gpu_us,
               100.0 * (med[m].gpu_us / med[BARE].gpu_us - 1));
        if (m == BARE)
            printf("%s | %s | %s |\n", "-", "-", "-");
        else
            printf("%.3f | %+.3f us (%+.2f %%) | %.3f |\n", med[m].mean_us,
                   med[m].mean_us - bare_kernel, 100.0 * (med[m].mean_us / bare_kernel - 1),
                   med[m].med_us);
    }
    double pair_cost = med[PAIR].wall_us - med[BARE].wall_us;
    double chain_cost = med[CHAIN].wall_us - med[BARE].wall_us;
    printf("\nchain's cost / pair's cost (wall): %.2f (the issue keeps chaining at 0.5 or less, "
           "with no worse bias)\n", pair_cost != 0 ? chain_cost / pair_cost : 0.0);
    for (auto &e : ev)
        cudaEventDestroy(e);
    return 0;
}
