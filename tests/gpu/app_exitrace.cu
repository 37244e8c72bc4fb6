// app_exitrace.cu - threads that keep launching while main calls exit(): for ktime's count of
// the launches made while its report is being written (issue 14, bug 4).
//
// usage: app_exitrace [-t THREADS] [-m MS]
//   THREADS (4) threads each launch exitrace_k on their own stream back to back, synchronizing
//   every 64 launches, until the process ends; main waits MS (300) ms and calls exit(0) while
//   they launch. Prints "threads N" and nothing timing-dependent.
#include <cstdio>
#include <cstdlib>
#include <pthread.h>
#include <unistd.h>

__global__ void exitrace_k(int *p)
{
    if (threadIdx.x == 0 && p)
        atomicAdd(p, 1);
}

static int *counter;

static void *launcher(void *)
{
    cudaStream_t s;
    if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess)
        return NULL;
    void *args[] = { &counter };
    for (unsigned long i = 0;; i++) {
        if (cudaLaunchKernel((const void *)exitrace_k, dim3(1), dim3(32), args, 0, s) !=
            cudaSuccess)
            break; /* the driver is shutting down */
        if (i % 64 == 63)
            cudaStreamSynchronize(s);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int threads = 4, ms = 300, opt;
    while ((opt = getopt(argc, argv, "t:m:")) != -1) {
        if (opt == 't')
            threads = atoi(optarg);
        else if (opt == 'm')
            ms = atoi(optarg);
        else
            return 2;
    }
    if (cudaMalloc(&counter, sizeof(int)) != cudaSuccess) {
        fprintf(stderr, "no GPU\n");
        return 77;
    }
    printf("threads %d\n", threads);
    fflush(stdout);
    for (int i = 0; i < threads; i++) {
        pthread_t t;
        pthread_create(&t, NULL, launcher, NULL);
    }
    usleep((useconds_t)ms * 1000);
    exit(0);
}
