// app_sigterm.cu - a CUDA program that ends itself with a signal after its kernels, for
// ktime's report on SIGINT/SIGTERM/SIGHUP (tests/gpu/sigterm.sh).
//
// usage: app_sigterm [-n N] [-a] [-s TERM|INT|HUP]
//   Launches ktsig_spin<0> (20 us, one block) and ktsig_spin<1> (100 us, one block per SM) N
//   (200) times each, interleaved, on the default stream; synchronizes (unless -a: the last
//   launches are still running when the signal comes); prints "expect KEY N" for each kernel;
//   raises the signal (default TERM); then prints "after raise" and returns 0, which it must
//   never get to: the signal's default action ends it (status 128 + signal), with or without
//   a tool preloaded. stdout carries only deterministic lines.

#include <cuda_runtime.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <unistd.h>

#define CK(call)                                                                        \
    do {                                                                                \
        cudaError_t e_ = (call);                                                        \
        if (e_ != cudaSuccess) {                                                        \
            fprintf(stderr, "app_sigterm: %s:%d: %s failed: %s (%d)\n", __FILE__,       \
                    __LINE__, #call, cudaGetErrorString(e_), (int)e_);                  \
            exit(1);                                                                    \
        }                                                                               \
    } while (0)

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

template <int K>
__global__ void ktsig_spin(unsigned *buf, unsigned long long ns)
{
    unsigned long long t0 = global_ns();
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[i] = buf[i] * 1664525u + 1013904223u + (unsigned)K;
    while (global_ns() - t0 < ns) {
    }
}

static void line(const char *s)
{
    // One write(2): nothing waits in a stdio buffer when the signal ends the program.
    if (write(STDOUT_FILENO, s, strlen(s)) < 0)
        exit(1);
}

int main(int argc, char **argv)
{
    long n = 200;
    bool async = false;
    int sig = SIGTERM;
    int sms = 0;
    unsigned *buf = nullptr;
    char msg[128];

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) {
            n = strtol(argv[++i], nullptr, 10);
        } else if (!strcmp(argv[i], "-a")) {
            async = true;
        } else if (!strcmp(argv[i], "-s") && i + 1 < argc) {
            const char *s = argv[++i];
            sig = !strcmp(s, "INT") ? SIGINT : !strcmp(s, "HUP") ? SIGHUP : SIGTERM;
        } else {
            fprintf(stderr, "usage: app_sigterm [-n N] [-a] [-s TERM|INT|HUP]\n");
            return 2;
        }
    }
    // As if started from an interactive shell: a script's background job has SIGINT ignored.
    signal(SIGINT, SIG_DFL);
    signal(SIGTERM, SIG_DFL);
    signal(SIGHUP, SIG_DFL);

    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
    CK(cudaMalloc(&buf, (size_t)sms * 128 * sizeof *buf));
    CK(cudaMemset(buf, 0, (size_t)sms * 128 * sizeof *buf));
    for (long i = 0; i < n; i++) {
        ktsig_spin<0><<<1, 128>>>(buf, 20000ull);
        ktsig_spin<1><<<sms, 128>>>(buf, 100000ull);
    }
    CK(cudaGetLastError());
    if (!async)
        CK(cudaDeviceSynchronize());
    snprintf(msg, sizeof msg, "expect ktsig_spinILi0E %ld\nexpect ktsig_spinILi1E %ld\n", n, n);
    line(msg);
    raise(sig);
    line("after raise\n");
    return 0;
}
