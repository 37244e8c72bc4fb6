// app_exitrace.cu - threads that keep launching while main calls exit(): for ktime's count of
// the launches made while its report is being written (issue 14, bug 4).
//
// usage: app_exitrace [-t THREADS] [-n N] [-m MS]
//   THREADS (4) threads each call cudaLaunchKernel exactly N (20000) times on their own stream,
//   synchronizing every 64 launches, whatever the calls return (they start failing once CUDA
//   shuts down). main waits MS (20) ms and calls exit(0) while they launch, so that part of
//   their launches come while the exit handlers (ktime's report among them) run. An exit
//   handler registered before CUDA starts runs after all the others, CUDA's teardown included:
//   it waits for the threads, so every one of their calls is made before the process ends.
//   Prints "expect exitrace_k TOTAL" (THREADS x N launch calls) first; at the very end, on
//   stderr, how many of them failed.
#include <atomic>
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
static long per_thread = 20000;
static int nthreads = 4;
static pthread_t tids[64];
static std::atomic<long> failures(0);

static void *launcher(void *)
{
    cudaStream_t s = 0;
    void *args[] = { &counter };
    cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
    for (long i = 0; i < per_thread; i++) {
        if (cudaLaunchKernel((const void *)exitrace_k, dim3(1), dim3(32), args, 0, s) !=
            cudaSuccess)
            failures++;
        if (i % 64 == 63)
            cudaStreamSynchronize(s);
    }
    return NULL;
}

static void join_all(void)
{
    for (int i = 0; i < nthreads; i++)
        pthread_join(tids[i], NULL);
    fprintf(stderr, "app_exitrace: %ld launch calls failed\n", failures.load());
}

int main(int argc, char **argv)
{
    int ms = 20, opt;
    while ((opt = getopt(argc, argv, "t:n:m:")) != -1) {
        if (opt == 't')
            nthreads = atoi(optarg) < 64 ? atoi(optarg) : 64;
        else if (opt == 'n')
            per_thread = atol(optarg);
        else if (opt == 'm')
            ms = atoi(optarg);
        else
            return 2;
    }
    atexit(join_all); /* before CUDA's own: runs last */
    if (cudaMalloc(&counter, sizeof(int)) != cudaSuccess) {
        fprintf(stderr, "no GPU\n");
        return 77;
    }
    printf("expect exitrace_k %ld\n", (long)nthreads * per_thread);
    fflush(stdout);
    for (int i = 0; i < nthreads; i++)
        pthread_create(&tids[i], NULL, launcher, NULL);
    usleep((useconds_t)ms * 1000);
    exit(0);
}
