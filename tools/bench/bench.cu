// bench: ktime's overhead benchmark workloads (tools/bench/run.py runs them; build.sh builds them).
//
// Every result goes to stdout as lines "RESULT key=value key=value ..." (values never contain
// spaces); progress and errors go to stderr. The same binary runs bare, under libktime, under the
// CUPTI tracer: only the environment differs, except for --raw-events, where the program itself
// brackets each launch with an event pair (the raw floor of ktime's design).
//
// usage:
//   bench launch N [--distinct K] [--raw-events] [--ring R] [--warmup W] [--rss-at M]
//       N launches of a tiny kernel (1 block x 32 threads), <<<>>> on the legacy default stream,
//       back to back after W warm-up launches (default 20000); host wall time of the loop / N.
//       --distinct K  cycle over K different kernels (template instances, K <= 128)
//       --raw-events  record two events around each launch, from a ring of R pairs (default
//                     4096); before a pair is reused, cudaEventSynchronize waits for its end event
//       --rss-at M    also print VmRSS after the first M timed launches (after a synchronize)
//       At the end it reads the CPU time of the thread named "ktime-drain" (if any) over the loop.
//   bench threads T N [--raw-events] [--ring R] [--warmup W]
//       T host threads, each with its own non-blocking stream, launch the tiny kernel: W warm-up
//       launches (default 5000) and a stream synchronize each, a barrier, then N launches back
//       to back and a synchronize of its stream. --raw-events / --ring R as for launch, one
//       ring per thread. Reports the wall time from the barrier's release to the last thread's
//       synchronize (wall_s; agg_ns_per_launch = wall_s / (T x N)), each thread's loop time / N
//       (ns_per_launch: the median over the threads; _min, _max), and the CPU time of the
//       thread named "ktime-drain" (if any) from the barrier to the end.
//   bench mixed [--n5 A] [--n10 D] [--n50 B] [--n500 C] [--blocks G]
//       kernels that spin on %globaltimer for 5, 10, 50, 500 us (G blocks, default one per SM, x
//       128 threads; defaults A=5000, D=10000, B=2000, C=300, 0 skips a part), each part launched
//       back to back and synchronized; wall time per iteration. Each length is its own kernel,
//       kt_bench_spin<5>, <10>, <50>, <500> (100 launches of <500> warm up first, 20 of each
//       part's kernel before its loop).
//   bench pending N [--warmup W]
//       W warm-up launches of the tiny kernel (default 1000) and a synchronize, then N launches
//       back to back, and main returns without synchronizing: the tool's exit finds the last
//       launches queued or running and their records not yet delivered. Prints VmRSS, VmHWM,
//       and CLOCK_REALTIME and CLOCK_MONOTONIC (ns) just before main returns
//       (main_return_real_ns, main_return_ns).
//   bench kernels K [--launches L] [--per-module M] [--exit-timer]
//       generates PTX text for K tiny .entry functions (M per module, default 1000), loads it
//       with cuModuleLoadData, launches each kernel L times (default 7) with cuLaunchKernel, and
//       prints VmRSS before loading, after loading and after launching. --exit-timer prints
//       CLOCK_MONOTONIC (ns) just before main returns, after everything is synchronized.
//   bench genptx K [--per-module M] [--module I]
//       prints the PTX of module I (default 0) as the kernels workload generates it (no GPU).

#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <pthread.h>
#include <string>
#include <system_error>
#include <thread>
#include <time.h>
#include <unistd.h>
#include <utility>
#include <vector>

#define CK(call)                                                                              \
    do {                                                                                      \
        cudaError_t e_ = (call);                                                              \
        if (e_ != cudaSuccess) {                                                              \
            fprintf(stderr, "bench: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,  \
                    cudaGetErrorString(e_), (int)e_);                                         \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

#define CU(call)                                                                              \
    do {                                                                                      \
        CUresult r_ = (call);                                                                 \
        if (r_ != CUDA_SUCCESS) {                                                             \
            const char *s_ = NULL;                                                            \
            cuGetErrorString(r_, &s_);                                                        \
            fprintf(stderr, "bench: %s:%d: %s failed: %s (%d)\n", __FILE__, __LINE__, #call,  \
                    s_ ? s_ : "?", (int)r_);                                                  \
            exit(1);                                                                          \
        }                                                                                     \
    } while (0)

// ---------------------------------------------------------------------------------------------
// host helpers

static long long now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static double clock_s(clockid_t id)
{
    struct timespec ts;
    if (clock_gettime(id, &ts) != 0)
        return -1.0;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

// One value from /proc/self/status, in kB ("VmRSS", "RssAnon", "VmHWM"); -1 if absent.
static long status_kb(const char *key)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    size_t kl = strlen(key);
    long v = -1;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
            v = strtol(line + kl + 1, NULL, 10);
            break;
        }
    }
    fclose(f);
    return v;
}

// The task id of the first thread of this process whose name is `name`, or -1.
static long find_thread(const char *name)
{
    DIR *d = opendir("/proc/self/task");
    if (!d)
        return -1;
    long tid = -1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] < '0' || e->d_name[0] > '9')
            continue;
        char path[300], comm[64] = "";
        snprintf(path, sizeof path, "/proc/self/task/%s/comm", e->d_name);
        FILE *f = fopen(path, "r");
        if (!f)
            continue;
        if (fgets(comm, sizeof comm, f)) {
            comm[strcspn(comm, "\n")] = 0;
            if (strcmp(comm, name) == 0)
                tid = strtol(e->d_name, NULL, 10);
        }
        fclose(f);
        if (tid >= 0)
            break;
    }
    closedir(d);
    return tid;
}

// CPU time (s) of task `tid` of this process: schedstat (ns) when available, else stat's
// utime + stime (clock ticks). *src names the source. -1 when neither can be read.
static double thread_cpu_s(long tid, const char **src)
{
    char path[128];
    snprintf(path, sizeof path, "/proc/self/task/%ld/schedstat", tid);
    FILE *f = fopen(path, "r");
    if (f) {
        unsigned long long ns;
        int ok = fscanf(f, "%llu", &ns) == 1;
        fclose(f);
        if (ok) {
            *src = "schedstat";
            return (double)ns * 1e-9;
        }
    }
    snprintf(path, sizeof path, "/proc/self/task/%ld/stat", tid);
    f = fopen(path, "r");
    if (!f)
        return -1.0;
    char buf[2048];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    char *p = strrchr(buf, ')'); // the name may contain spaces; fields follow the last ')'
    if (!p)
        return -1.0;
    // after ')': field 3 (state) ... field 14 utime, 15 stime
    unsigned long long ut = 0, st = 0;
    int field = 2;
    for (char *tok = strtok(p + 1, " "); tok; tok = strtok(NULL, " ")) {
        field++;
        if (field == 14)
            ut = strtoull(tok, NULL, 10);
        else if (field == 15) {
            st = strtoull(tok, NULL, 10);
            break;
        }
    }
    if (field < 15)
        return -1.0;
    *src = "stat";
    return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

// Collects "key=value" pairs and prints them as one RESULT line.
struct Result {
    std::string s;
    void add(const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)))
    {
        char v[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(v, sizeof v, fmt, ap);
        va_end(ap);
        s += " ";
        s += key;
        s += "=";
        s += v;
    }
    void print()
    {
        printf("RESULT%s\n", s.c_str());
        fflush(stdout);
        s.clear();
    }
};

static long parse_count(const char *s, const char *what, long lo, long hi)
{
    char *end;
    errno = 0;
    double d = strtod(s, &end); // accepts 1e7 and 200000
    if (errno || end == s || *end || d < (double)lo || d > (double)hi || d != (double)(long)d) {
        fprintf(stderr, "bench: bad %s '%s' (want an integer in %ld..%ld)\n", what, s, lo, hi);
        exit(2);
    }
    return (long)d;
}

// Creates the primary context; exits 77 (the "skip" status) when there is no usable GPU.
static void init_cuda(void)
{
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) {
        fprintf(stderr, "bench: no CUDA device (%s)\n",
                e != cudaSuccess ? cudaGetErrorString(e) : "0 devices");
        exit(77);
    }
    CK(cudaFree(0));
}

// ---------------------------------------------------------------------------------------------
// kernels

static __device__ __forceinline__ unsigned long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}

// The tiny kernel: trivial body, distinct per instance (so each has its own mangled name).
template <int I>
__global__ void kt_bench_tiny(int *p)
{
    if (p != nullptr && threadIdx.x == 31)
        p[I] = I;
}

#define MAX_DISTINCT 128
typedef void (*tiny_fn)(int *);

template <int... Is>
static constexpr std::array<tiny_fn, sizeof...(Is)> make_tiny_table(std::integer_sequence<int, Is...>)
{
    return {{&kt_bench_tiny<Is>...}};
}
static const std::array<tiny_fn, MAX_DISTINCT> TINY =
    make_tiny_table(std::make_integer_sequence<int, MAX_DISTINCT>{});

// Spins for US microseconds of %globaltimer (clock-independent length). One instance per
// length, so that a tool's per-kernel statistics keep the lengths apart (kt_bench_spin<10>).
template <int US>
__global__ void kt_bench_spin(int *sink)
{
    const unsigned long long ns = (unsigned long long)US * 1000ull;
    unsigned long long t0 = global_ns();
    unsigned long long spins = 0;
    while (global_ns() - t0 < ns)
        spins++;
    if (sink != nullptr && spins == 0xFFFFFFFFFFFFFFFFull)
        *sink = 1; // never true; keeps the loop
}

// ---------------------------------------------------------------------------------------------
// launch

// --raw-events: a ring of R event pairs, used in turn to bracket launches. Before a pair is
// reused, cudaEventSynchronize waits for its end event (the oldest pair: normally long
// complete). One ring per launching thread.
struct RawRing {
    std::vector<cudaEvent_t> start, stop;
    long n = 0, next = 0;
    bool wrapped = false;
    long waits = 0;
    void init(long r)
    {
        n = r;
        start.resize(r);
        stop.resize(r);
        for (long i = 0; i < r; i++) {
            CK(cudaEventCreate(&start[i]));
            CK(cudaEventCreate(&stop[i]));
        }
    }
    // Records the next pair on stream st around launch(). Errors are left to the caller's
    // cudaGetLastError after the loop, as for the launches.
    template <class F>
    void bracket(cudaStream_t st, F launch)
    {
        long s = next;
        if (wrapped) {
            cudaEventSynchronize(stop[s]);
            waits++;
        }
        cudaEventRecord(start[s], st);
        launch();
        cudaEventRecord(stop[s], st);
        if (++next == n) {
            next = 0;
            wrapped = true;
        }
    }
    // The sum of the recorded pairs' intervals in ms (the last R at most); *cnt gets how many.
    double sum_ms(long *cnt)
    {
        *cnt = wrapped ? n : next;
        double sum = 0;
        for (long i = 0; i < *cnt; i++) {
            float ms = 0;
            CK(cudaEventElapsedTime(&ms, start[i], stop[i]));
            sum += ms;
        }
        return sum;
    }
};

// Launches [from, to) of the plan on stream st: kernel index cycles over K. Errors are
// checked after the loop (cudaGetLastError), not per launch.
static void launch_range(long from, long to, int K, cudaStream_t st, RawRing *ring, long *kidx)
{
    long k = *kidx;
    if (!ring) {
        for (long i = from; i < to; i++) {
            TINY[k]<<<1, 32, 0, st>>>(nullptr);
            if (++k == K)
                k = 0;
        }
    } else {
        for (long i = from; i < to; i++) {
            ring->bracket(st, [&] { TINY[k]<<<1, 32, 0, st>>>(nullptr); });
            if (++k == K)
                k = 0;
        }
    }
    *kidx = k;
}

static int cmd_launch(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "bench: launch N [options]\n");
        return 2;
    }
    long n = parse_count(argv[0], "N", 1, 1000000000000L);
    long K = 1, ringn = 4096, warm = 20000, rss_at = 0;
    bool raw = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--raw-events"))
            raw = true;
        else if (!strcmp(argv[i], "--distinct") && i + 1 < argc)
            K = parse_count(argv[++i], "--distinct", 1, MAX_DISTINCT);
        else if (!strcmp(argv[i], "--ring") && i + 1 < argc)
            ringn = parse_count(argv[++i], "--ring", 1, 1 << 22);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warm = parse_count(argv[++i], "--warmup", 0, 100000000);
        else if (!strcmp(argv[i], "--rss-at") && i + 1 < argc)
            rss_at = parse_count(argv[++i], "--rss-at", 0, n);
        else {
            fprintf(stderr, "bench: launch: unknown option %s\n", argv[i]);
            return 2;
        }
    }

    init_cuda();
    RawRing ring;
    if (raw)
        ring.init(ringn);
    long kidx = 0;

    // warm-up: the same code path, so the ring, ktime's pool and the kernel table are warm
    launch_range(0, warm, (int)K, 0, raw ? &ring : nullptr, &kidx);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    long rss_start = status_kb("VmRSS");
    long drain_tid = find_thread("ktime-drain");
    const char *src = "none";
    double drain0 = drain_tid >= 0 ? thread_cpu_s(drain_tid, &src) : -1.0;
    double main0 = clock_s(CLOCK_THREAD_CPUTIME_ID), proc0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);

    long long t0 = now_ns(), t_mid_loop = 0, t_mid_sync = 0;
    long rss_mid = -1;
    long long t1;
    if (rss_at > 0 && rss_at < n) {
        launch_range(0, rss_at, (int)K, 0, raw ? &ring : nullptr, &kidx);
        t_mid_loop = now_ns();
        CK(cudaDeviceSynchronize());
        usleep(20000); // let a drain thread fold what just completed
        rss_mid = status_kb("VmRSS");
        t_mid_sync = now_ns();
        launch_range(rss_at, n, (int)K, 0, raw ? &ring : nullptr, &kidx);
    } else {
        launch_range(0, n, (int)K, 0, raw ? &ring : nullptr, &kidx);
    }
    t1 = now_ns();
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long long t2 = now_ns();
    double main1 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    usleep(20000); // the drain thread folds the last completions
    double drain1 = drain_tid >= 0 ? thread_cpu_s(drain_tid, &src) : -1.0;
    double proc1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    long rss_end = status_kb("VmRSS");

    // the measured launch time excludes the mid-run synchronize and RSS read
    double loop_ns = (double)(t1 - t0) - (double)(t_mid_sync - t_mid_loop);
    double wall_s = ((double)(t2 - t0) - (double)(t_mid_sync - t_mid_loop)) * 1e-9;

    double raw_sum_ms = 0;
    if (raw) {
        long cnt = 0;
        raw_sum_ms = ring.sum_ms(&cnt);
        raw_sum_ms /= (double)(cnt ? cnt : 1);
    }

    Result r;
    r.add("workload", "launch");
    r.add("n", "%ld", n);
    r.add("distinct", "%ld", K);
    r.add("raw_events", "%d", raw ? 1 : 0);
    r.add("warmup_launches", "%ld", warm);
    r.add("launches_total", "%ld", warm + n);
    r.add("ns_per_launch", "%.2f", loop_ns / (double)n);
    r.add("loop_s", "%.6f", loop_ns * 1e-9);
    r.add("wall_s", "%.6f", wall_s);
    r.add("ns_per_launch_incl_sync", "%.2f", wall_s * 1e9 / (double)n);
    r.add("launch_rate", "%.0f", (double)n / (loop_ns * 1e-9));
    r.add("main_cpu_s", "%.6f", main1 - main0);
    r.add("proc_cpu_s", "%.6f", proc1 - proc0);
    r.add("rss_start_kb", "%ld", rss_start);
    if (rss_mid >= 0) {
        r.add("rss_mid_at", "%ld", rss_at);
        r.add("rss_mid_kb", "%ld", rss_mid);
    }
    r.add("rss_end_kb", "%ld", rss_end);
    r.add("drain_found", "%d", drain_tid >= 0 ? 1 : 0);
    if (drain_tid >= 0 && drain0 >= 0 && drain1 >= 0) {
        r.add("drain_cpu_s", "%.6f", drain1 - drain0);
        r.add("drain_src", "%s", src);
        r.add("drain_cpu_frac", "%.5f", (drain1 - drain0) / wall_s);
        r.add("drain_ns_per_launch", "%.2f", (drain1 - drain0) * 1e9 / (double)n);
    }
    if (raw) {
        r.add("raw_ring", "%ld", ring.n);
        r.add("raw_waits", "%ld", ring.waits);
        r.add("raw_mean_interval_us", "%.3f", raw_sum_ms * 1e3);
    }
    r.print();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// threads

static void barrier_wait(pthread_barrier_t *b)
{
    int e = pthread_barrier_wait(b);
    if (e != 0 && e != PTHREAD_BARRIER_SERIAL_THREAD) {
        fprintf(stderr, "bench: pthread_barrier_wait failed: %s\n", strerror(e));
        exit(1);
    }
}

struct ThreadsPlan {
    long n, warm, ringn;
    bool raw;
    pthread_barrier_t bar; // T launching threads + the main thread
};

// One launching thread's state and its CLOCK_MONOTONIC marks (ns). A cache line each: a
// thread's ring counters change at every launch and must not share a line with its neighbour's.
struct alignas(64) ThreadRun {
    RawRing ring;
    long long t_start = 0, t_loop = 0, t_done = 0;
};

static void threads_worker(ThreadsPlan *p, ThreadRun *tr)
{
    cudaStream_t st;
    CK(cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking));
    if (p->raw)
        tr->ring.init(p->ringn);
    RawRing *ring = p->raw ? &tr->ring : nullptr;
    long kidx = 0;

    // warm-up on the same code path (this thread's ring, ktime's pool and per-thread state)
    launch_range(0, p->warm, 1, st, ring, &kidx);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(st));
    barrier_wait(&p->bar); // every thread warm
    barrier_wait(&p->bar); // go

    tr->t_start = now_ns();
    launch_range(0, p->n, 1, st, ring, &kidx);
    tr->t_loop = now_ns();
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(st));
    tr->t_done = now_ns();
    CK(cudaStreamDestroy(st));
}

static int cmd_threads(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "bench: threads T N [options]\n");
        return 2;
    }
    long T = parse_count(argv[0], "T", 1, 1024);
    ThreadsPlan p;
    p.n = parse_count(argv[1], "N", 1, 1000000000000L);
    p.warm = 5000;
    p.ringn = 4096;
    p.raw = false;
    for (int i = 2; i < argc; i++) {
        if (!strcmp(argv[i], "--raw-events"))
            p.raw = true;
        else if (!strcmp(argv[i], "--ring") && i + 1 < argc)
            p.ringn = parse_count(argv[++i], "--ring", 1, 1 << 22);
        else if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            p.warm = parse_count(argv[++i], "--warmup", 0, 100000000);
        else {
            fprintf(stderr, "bench: threads: unknown option %s\n", argv[i]);
            return 2;
        }
    }

    init_cuda();
    int e = pthread_barrier_init(&p.bar, NULL, (unsigned)T + 1);
    if (e != 0) {
        fprintf(stderr, "bench: pthread_barrier_init failed: %s\n", strerror(e));
        return 1;
    }
    std::vector<ThreadRun> runs((size_t)T);
    std::vector<std::thread> th;
    th.reserve((size_t)T);
    try {
        for (long i = 0; i < T; i++)
            th.emplace_back(threads_worker, &p, &runs[(size_t)i]);
    } catch (const std::system_error &x) {
        fprintf(stderr, "bench: threads: cannot start thread %zu of %ld: %s\n", th.size() + 1, T,
                x.what());
        exit(1);
    }

    barrier_wait(&p.bar); // every thread warmed up and synchronized
    long drain_tid = find_thread("ktime-drain");
    const char *src = "none";
    double drain0 = drain_tid >= 0 ? thread_cpu_s(drain_tid, &src) : -1.0;
    double proc0 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    barrier_wait(&p.bar); // go
    for (auto &t : th)
        t.join();
    usleep(20000); // the drain thread folds the last completions
    double drain1 = drain_tid >= 0 ? thread_cpu_s(drain_tid, &src) : -1.0;
    double proc1 = clock_s(CLOCK_PROCESS_CPUTIME_ID);
    pthread_barrier_destroy(&p.bar);

    long long release = runs[0].t_start, last_start = runs[0].t_start;
    long long loop_end = runs[0].t_loop, done = runs[0].t_done;
    std::vector<double> per((size_t)T); // each thread's loop time / N
    for (long i = 0; i < T; i++) {
        const ThreadRun &r = runs[(size_t)i];
        release = std::min(release, r.t_start);
        last_start = std::max(last_start, r.t_start);
        loop_end = std::max(loop_end, r.t_loop);
        done = std::max(done, r.t_done);
        per[(size_t)i] = (double)(r.t_loop - r.t_start) / (double)p.n;
    }
    std::sort(per.begin(), per.end());
    double per_med = T % 2 ? per[(size_t)T / 2] : (per[(size_t)T / 2 - 1] + per[(size_t)T / 2]) / 2;
    double wall_s = (double)(done - release) * 1e-9;
    double total = (double)T * (double)p.n;

    double raw_sum_ms = 0;
    long raw_cnt = 0, raw_waits = 0;
    if (p.raw) {
        for (auto &r : runs) {
            long c = 0;
            raw_sum_ms += r.ring.sum_ms(&c);
            raw_cnt += c;
            raw_waits += r.ring.waits;
        }
    }

    Result r;
    r.add("workload", "threads");
    r.add("threads", "%ld", T);
    r.add("n", "%ld", p.n);
    r.add("raw_events", "%d", p.raw ? 1 : 0);
    r.add("warmup_launches", "%ld", p.warm);
    r.add("launches_total", "%ld", T * (p.warm + p.n));
    r.add("ns_per_launch", "%.2f", per_med);
    r.add("ns_per_launch_min", "%.2f", per.front());
    r.add("ns_per_launch_max", "%.2f", per.back());
    r.add("agg_ns_per_launch", "%.2f", wall_s * 1e9 / total);
    r.add("wall_s", "%.6f", wall_s);
    r.add("loop_s", "%.6f", (double)(loop_end - release) * 1e-9);
    r.add("start_skew_us", "%.1f", (double)(last_start - release) * 1e-3);
    r.add("launch_rate", "%.0f", total / wall_s);
    r.add("proc_cpu_s", "%.6f", proc1 - proc0);
    r.add("drain_found", "%d", drain_tid >= 0 ? 1 : 0);
    if (drain_tid >= 0 && drain0 >= 0 && drain1 >= 0) {
        r.add("drain_cpu_s", "%.6f", drain1 - drain0);
        r.add("drain_src", "%s", src);
        r.add("drain_cpu_frac", "%.5f", (drain1 - drain0) / wall_s);
        r.add("drain_ns_per_launch", "%.2f", (drain1 - drain0) * 1e9 / total);
    }
    if (p.raw) {
        r.add("raw_ring", "%ld", p.ringn);
        r.add("raw_waits", "%ld", raw_waits);
        r.add("raw_mean_interval_us", "%.3f", raw_sum_ms * 1e3 / (double)(raw_cnt ? raw_cnt : 1));
    }
    r.print();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// mixed

static int cmd_mixed(int argc, char **argv)
{
    long n5 = 5000, n10 = 10000, n50 = 2000, n500 = 300, blocks = 0;
    bool raw = false;
    for (int i = 0; i < argc; i++) {
        if (!strcmp(argv[i], "--raw-events"))
            raw = true;
        else if (!strcmp(argv[i], "--n5") && i + 1 < argc)
            n5 = parse_count(argv[++i], "--n5", 0, 100000000);
        else if (!strcmp(argv[i], "--n10") && i + 1 < argc)
            n10 = parse_count(argv[++i], "--n10", 0, 100000000);
        else if (!strcmp(argv[i], "--n50") && i + 1 < argc)
            n50 = parse_count(argv[++i], "--n50", 0, 100000000);
        else if (!strcmp(argv[i], "--n500") && i + 1 < argc)
            n500 = parse_count(argv[++i], "--n500", 0, 100000000);
        else if (!strcmp(argv[i], "--blocks") && i + 1 < argc)
            blocks = parse_count(argv[++i], "--blocks", 1, 1 << 20);
        else {
            fprintf(stderr, "bench: mixed: unknown option %s\n", argv[i]);
            return 2;
        }
    }
    init_cuda();
    int dev = 0, sms = 0;
    CK(cudaGetDevice(&dev));
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    if (blocks == 0)
        blocks = sms;
    long total = 0;

    // warm-up: clocks up, kernel loaded, tool set up
    for (int i = 0; i < 100; i++)
        kt_bench_spin<500><<<(unsigned)blocks, 128>>>(nullptr);
    total += 100;
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());

    Result r;
    r.add("workload", "mixed");
    r.add("blocks", "%ld", blocks);
    r.add("sms", "%d", sms);
    const struct {
        const char *key; // the length in us, as in the kernel's name: kt_bench_spin<key>
        void (*fn)(int *);
        long n;
    } parts[] = {{"5", &kt_bench_spin<5>, n5},
                 {"10", &kt_bench_spin<10>, n10},
                 {"50", &kt_bench_spin<50>, n50},
                 {"500", &kt_bench_spin<500>, n500}};
    for (const auto &p : parts) {
        if (p.n == 0)
            continue;
        for (int i = 0; i < 20; i++)
            p.fn<<<(unsigned)blocks, 128>>>(nullptr);
        total += 20;
        // --raw-events: the program brackets each launch with its own event pair, created
        // before the timed loop (the GPU-side floor of any event-based timer).
        std::vector<cudaEvent_t> ev(raw ? 2 * (size_t)p.n : 0);
        for (auto &e : ev)
            CK(cudaEventCreate(&e));
        CK(cudaDeviceSynchronize());
        long long t0 = now_ns();
        for (long i = 0; i < p.n; i++) {
            if (raw)
                CK(cudaEventRecord(ev[2 * i], 0));
            p.fn<<<(unsigned)blocks, 128>>>(nullptr);
            if (raw)
                CK(cudaEventRecord(ev[2 * i + 1], 0));
        }
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        long long t1 = now_ns();
        for (auto &e : ev)
            CK(cudaEventDestroy(e));
        total += p.n;
        char key[32];
        snprintf(key, sizeof key, "us_per_iter_%s", p.key);
        r.add(key, "%.4f", (double)(t1 - t0) * 1e-3 / (double)p.n);
        snprintf(key, sizeof key, "n_%s", p.key);
        r.add(key, "%ld", p.n);
    }
    r.add("launches_total", "%ld", total);
    r.print();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// pending

static long long realtime_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int cmd_pending(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "bench: pending N [options]\n");
        return 2;
    }
    long n = parse_count(argv[0], "N", 1, 1000000000000L);
    long warm = 1000;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--warmup") && i + 1 < argc)
            warm = parse_count(argv[++i], "--warmup", 0, 100000000);
        else {
            fprintf(stderr, "bench: pending: unknown option %s\n", argv[i]);
            return 2;
        }
    }

    init_cuda();
    long kidx = 0;
    // warm-up, synchronized: the kernel loaded, a tool set up
    launch_range(0, warm, 1, 0, nullptr, &kidx);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long rss_start = status_kb("VmRSS");

    long long t0 = now_ns();
    launch_range(0, n, 1, 0, nullptr, &kidx);
    long long t1 = now_ns();
    CK(cudaGetLastError()); // does not wait for the GPU

    Result r;
    r.add("workload", "pending");
    r.add("n", "%ld", n);
    r.add("warmup_launches", "%ld", warm);
    r.add("launches_total", "%ld", warm + n);
    r.add("ns_per_launch", "%.2f", (double)(t1 - t0) / (double)n);
    r.add("loop_s", "%.6f", (double)(t1 - t0) * 1e-9);
    r.add("rss_start_kb", "%ld", rss_start);
    r.add("rss_kb", "%ld", status_kb("VmRSS"));
    r.add("hwm_kb", "%ld", status_kb("VmHWM"));
    // no synchronize: main returns with the launches still queued or running
    long long real = realtime_ns(), mono = now_ns();
    r.add("main_return_real_ns", "%lld", real);
    r.add("main_return_ns", "%lld", mono);
    r.print();
    return 0;
}

// ---------------------------------------------------------------------------------------------
// kernels (driver API, PTX generated at run time)

static std::string gen_ptx(long first, long count)
{
    std::string s;
    s.reserve((size_t)count * 64 + 128);
    s += "//\n// generated by ktime's bench (kernels workload)\n//\n"
         ".version 8.0\n.target sm_90\n.address_size 64\n\n";
    char buf[160];
    for (long i = first; i < first + count; i++) {
        snprintf(buf, sizeof buf, ".visible .entry kt_bench_k%06ld()\n{\n\tret;\n}\n\n", i);
        s += buf;
    }
    return s;
}

static int cmd_genptx(int argc, char **argv)
{
    if (argc < 1)
        return 2;
    long k = parse_count(argv[0], "K", 1, 10000000);
    long per = 1000, mod = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--per-module") && i + 1 < argc)
            per = parse_count(argv[++i], "--per-module", 1, 10000000);
        else if (!strcmp(argv[i], "--module") && i + 1 < argc)
            mod = parse_count(argv[++i], "--module", 0, 10000000);
        else
            return 2;
    }
    long first = mod * per;
    if (first >= k) {
        fprintf(stderr, "bench: genptx: module %ld is past K\n", mod);
        return 2;
    }
    long cnt = k - first < per ? k - first : per;
    fputs(gen_ptx(first, cnt).c_str(), stdout);
    return 0;
}

static int cmd_kernels(int argc, char **argv)
{
    if (argc < 1) {
        fprintf(stderr, "bench: kernels K [options]\n");
        return 2;
    }
    long K = parse_count(argv[0], "K", 1, 10000000);
    long L = 7, per = 1000;
    bool exit_timer = false;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--launches") && i + 1 < argc)
            L = parse_count(argv[++i], "--launches", 1, 1000000);
        else if (!strcmp(argv[i], "--per-module") && i + 1 < argc)
            per = parse_count(argv[++i], "--per-module", 1, 10000000);
        else if (!strcmp(argv[i], "--exit-timer"))
            exit_timer = true;
        else {
            fprintf(stderr, "bench: kernels: unknown option %s\n", argv[i]);
            return 2;
        }
    }

    // context, a first launch (a tool sets up its per-context state here), synchronize
    init_cuda();
    TINY[0]<<<1, 32>>>(nullptr);
    CK(cudaGetLastError());
    CK(cudaDeviceSynchronize());
    long total = 1;
    usleep(20000);
    long rss_pre = status_kb("VmRSS");

    long nmod = (K + per - 1) / per;
    std::vector<CUmodule> mods((size_t)nmod);
    std::vector<CUfunction> fns((size_t)K);
    long long tl0 = now_ns();
    for (long m = 0; m < nmod; m++) {
        long first = m * per, cnt = K - first < per ? K - first : per;
        std::string ptx = gen_ptx(first, cnt);
        CU(cuModuleLoadData(&mods[(size_t)m], ptx.c_str()));
        for (long i = first; i < first + cnt; i++) {
            char name[64];
            snprintf(name, sizeof name, "kt_bench_k%06ld", i);
            CU(cuModuleGetFunction(&fns[(size_t)i], mods[(size_t)m], name));
        }
    }
    long long tl1 = now_ns();
    long rss_loaded = status_kb("VmRSS");

    for (long rep = 0; rep < L; rep++)
        for (long i = 0; i < K; i++)
            CU(cuLaunchKernel(fns[(size_t)i], 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL));
    total += K * L;
    CU(cuCtxSynchronize());
    long long tl2 = now_ns();
    usleep(50000); // a drain thread folds the last completions
    long rss_launched = status_kb("VmRSS");

    Result r;
    r.add("workload", "kernels");
    r.add("k", "%ld", K);
    r.add("launches_each", "%ld", L);
    r.add("modules", "%ld", nmod);
    r.add("launches_total", "%ld", total);
    r.add("load_s", "%.4f", (double)(tl1 - tl0) * 1e-9);
    r.add("launch_s", "%.4f", (double)(tl2 - tl1) * 1e-9);
    r.add("rss_pre_kb", "%ld", rss_pre);
    r.add("rss_loaded_kb", "%ld", rss_loaded);
    r.add("rss_launched_kb", "%ld", rss_launched);
    r.add("rss_kb", "%ld", rss_launched);
    r.add("rss_anon_kb", "%ld", status_kb("RssAnon"));
    r.add("hwm_kb", "%ld", status_kb("VmHWM"));
    r.print();

    if (exit_timer) {
        CK(cudaDeviceSynchronize()); // nothing in flight
        long long t = now_ns();
        printf("RESULT main_return_ns=%lld\n", t);
        fflush(stdout);
    }
    return 0; // modules stay loaded: the teardown at exit is part of what is measured
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: bench launch|threads|mixed|pending|kernels|genptx ... (see bench.cu)\n");
        return 2;
    }
    const char *w = argv[1];
    if (!strcmp(w, "launch"))
        return cmd_launch(argc - 2, argv + 2);
    if (!strcmp(w, "threads"))
        return cmd_threads(argc - 2, argv + 2);
    if (!strcmp(w, "mixed"))
        return cmd_mixed(argc - 2, argv + 2);
    if (!strcmp(w, "kernels"))
        return cmd_kernels(argc - 2, argv + 2);
    if (!strcmp(w, "pending"))
        return cmd_pending(argc - 2, argv + 2);
    if (!strcmp(w, "genptx"))
        return cmd_genptx(argc - 2, argv + 2);
    fprintf(stderr, "bench: unknown workload %s\n", w);
    return 2;
}
