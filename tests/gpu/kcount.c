/* libkcount: an independent kernel counter for ktime's GPU tests, built on the CUPTI activity API.
 *
 * Preloaded next to libktime (either order). It enables CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL
 * with buffer request/complete callbacks only: no cuptiSubscribe, so the one CUPTI callback slot
 * stays free for ktime or torch.profiler. At exit it writes, per kernel (mangled name as CUPTI
 * reports it), the launch count and the hardware durations (end - start, ns) to $KCOUNT_OUTPUT.
 *
 * Exit is the delicate part. CUDA tears down from an atexit handler that the runtime registers
 * when it initialises, and an atexit handler registered in a library constructor runs after that
 * (gpu-facts.md). CUPTI's documentation recommends a forced cuptiActivityFlushAll in an exit
 * handler and allows a default (flag 0) flush "at a regular interval in a separate thread". So:
 *   1. a flusher thread, started with the first buffer request (that is, once CUDA is in use),
 *      calls cuptiActivityFlushAll(0) every KCOUNT_FLUSH_MS (100) ms, so nearly every record
 *      has been delivered and copied before the process starts to exit;
 *   2. every buffer request registers the exit handler again (up to KC_MAX_ATEXIT times): atexit
 *      handlers run last-registered-first, so a registration made after CUDA initialised runs
 *      before CUDA's teardown; only the first call does anything;
 *   3. the same handler is also registered in the constructor and called from the destructor, as
 *      fallbacks.
 * The handler stops the flusher, does a forced flush and writes the report. In a forked child
 * (pid differs) it does nothing: a CUPTI flush from a child's inherited handler hangs.
 *
 * Environment:
 *   KCOUNT_OUTPUT    report file; ".tsv" suffix gives TSV, anything else JSON; "%p" becomes the
 *                    pid. Unset: a TSV summary on stderr.
 *   KCOUNT_FLUSH_MS  period of the flusher thread in ms (default 100; 0 = no flusher).
 *   KCOUNT_DISABLE   set to a non-empty value other than "0": do nothing at all.
 *   KCOUNT_MEMOPS    "1": also count memory copies and sets (CUPTI_ACTIVITY_KIND_MEMCPY,
 *                    MEMCPY2 and MEMSET records) by ktime's kinds (HtoD, DtoH, DtoD, HtoH,
 *                    peer, memset; array copies under the kind of their other side), in the
 *                    JSON's "memops": count, bytes and sum_ns per kind.
 *   KCOUNT_INTERVALS every kernel record also as a line "device stream start_ns end_ns name" of
 *                    this file ("%p" becomes the pid), for busy time, gaps and overlap computed
 *                    independently of ktime (tests/gpu/where.py).
 * A process that never used CUDA writes nothing, so helper processes that inherit LD_PRELOAD
 * (a shell, ldconfig, ...) do not overwrite the report of the process under test.
 */
#define _GNU_SOURCE
#include <cupti.h>

#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define KC_BUF_SIZE ((size_t)1 << 20)
#define KC_MAX_ATEXIT 512
#define KC_NBUCKET 1024
#define KC_INCOMPLETE UINT64_MAX
#define KC_MAX_DEVICES 8

typedef struct {
    uint32_t corr;
    uint64_t dur; /* ns, or KC_INCOMPLETE when CUPTI had no valid end timestamp */
} kc_sample;

typedef struct kc_kernel {
    struct kc_kernel *next;
    char *name;
    uint64_t hash;
    size_t n, cap;
    kc_sample *s;
    size_t per_device[KC_MAX_DEVICES]; /* records by CUPTI deviceId (ids >= KC_MAX_DEVICES: last) */
} kc_kernel;

static pthread_mutex_t kc_lock = PTHREAD_MUTEX_INITIALIZER; /* guards the table and counters */
static kc_kernel *kc_tab[KC_NBUCKET];
static size_t kc_nkernels;
static uint64_t kc_records, kc_incomplete, kc_dropped, kc_other, kc_lost, kc_bufdone;
/* KCOUNT_MEMOPS: per ktime memop kind, records, bytes and durations. */
#define KC_MEMOP_KINDS 6
static const char *const kc_memop_name[KC_MEMOP_KINDS] = { "HtoD", "DtoH", "DtoD", "HtoH", "peer",
                                                          "memset" };
static uint64_t kc_mem_count[KC_MEMOP_KINDS], kc_mem_bytes[KC_MEMOP_KINDS], kc_mem_ns[KC_MEMOP_KINDS];
static int kc_memops;

static int kc_memop_kind(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
        return 0;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
        return 1;
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
        return 3;
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
        return 4;
    default:
        return 2;
    }
}

static void kc_memop(int kind, uint64_t bytes, uint64_t start, uint64_t end)
{
    kc_mem_count[kind]++;
    kc_mem_bytes[kind] += bytes;
    kc_mem_ns[kind] += end > start ? end - start : 0;
}

static pid_t kc_pid;
static int kc_active;   /* CUPTI tracing was set up in this process */
static int kc_finished; /* the exit handler has run (atomic) */
static uint64_t kc_bufreq; /* atomic */
static int kc_atexit_regs; /* atomic */
static long kc_flush_ms = 100;

static pthread_once_t kc_flusher_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t kc_flusher_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t kc_flusher_cond = PTHREAD_COND_INITIALIZER;
static pthread_t kc_flusher;
static int kc_flusher_started, kc_flusher_stop, kc_periodic_flushes;

static void kc_atexit(void);

static void kc_warn(const char *what, CUptiResult r)
{
    const char *s = NULL;
    if (cuptiGetResultString(r, &s) != CUPTI_SUCCESS || !s)
        s = "?";
    fprintf(stderr, "kcount: warning: %s failed: %s (%d)\n", what, s, (int)r);
}

static uint64_t kc_hash(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 1099511628211ull;
    }
    return h;
}

/* Called with kc_lock held. */
static void kc_add(const char *name, uint32_t device, uint32_t corr, uint64_t start, uint64_t end)
{
    if (!name)
        name = "<no name>";
    uint64_t h = kc_hash(name);
    kc_kernel **slot = &kc_tab[h % KC_NBUCKET];
    kc_kernel *k = *slot;
    while (k && (k->hash != h || strcmp(k->name, name) != 0))
        k = k->next;
    if (!k) {
        k = calloc(1, sizeof *k);
        if (!k || !(k->name = strdup(name))) {
            free(k);
            kc_lost++;
            return;
        }
        k->hash = h;
        k->next = *slot;
        *slot = k;
        kc_nkernels++;
    }
    if (k->n == k->cap) {
        size_t cap = k->cap ? 2 * k->cap : 64;
        kc_sample *s = realloc(k->s, cap * sizeof *s);
        if (!s) {
            kc_lost++;
            return;
        }
        k->s = s;
        k->cap = cap;
    }
    int ok = start != 0 && end != 0 && end >= start;
    k->per_device[device < KC_MAX_DEVICES ? device : KC_MAX_DEVICES - 1]++;
    k->s[k->n].corr = corr;
    k->s[k->n].dur = ok ? end - start : KC_INCOMPLETE;
    k->n++;
    kc_records++;
    if (!ok)
        kc_incomplete++;
}

static void *kc_flusher_main(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&kc_flusher_lock);
    while (!kc_flusher_stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += kc_flush_ms / 1000;
        ts.tv_nsec += (kc_flush_ms % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        /* 0 is a wake-up (spurious, or the stop broadcast); anything else ends the wait */
        while (!kc_flusher_stop &&
               pthread_cond_timedwait(&kc_flusher_cond, &kc_flusher_lock, &ts) == 0) {
        }
        if (kc_flusher_stop)
            break;
        pthread_mutex_unlock(&kc_flusher_lock);
        cuptiActivityFlushAll(0);
        pthread_mutex_lock(&kc_flusher_lock);
        kc_periodic_flushes++;
    }
    pthread_mutex_unlock(&kc_flusher_lock);
    return NULL;
}

static void kc_start_flusher(void)
{
    if (kc_flush_ms <= 0)
        return;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old); /* the flusher takes no signals meant for the app */
    if (pthread_create(&kc_flusher, NULL, kc_flusher_main, NULL) == 0)
        kc_flusher_started = 1;
    else
        fprintf(stderr, "kcount: warning: could not start the flusher thread\n");
    pthread_sigmask(SIG_SETMASK, &old, NULL);
}

static void CUPTIAPI kc_buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, 8, KC_BUF_SIZE) != 0)
        p = NULL;
    *buffer = p;
    *size = p ? KC_BUF_SIZE : 0;
    *max_records = 0;
    __atomic_add_fetch(&kc_bufreq, 1, __ATOMIC_RELAXED);

    if (__atomic_load_n(&kc_finished, __ATOMIC_ACQUIRE) || getpid() != kc_pid)
        return;
    pthread_once(&kc_flusher_once, kc_start_flusher);
    if (__atomic_add_fetch(&kc_atexit_regs, 1, __ATOMIC_RELAXED) <= KC_MAX_ATEXIT)
        atexit(kc_atexit);
}

static FILE *kc_intervals; /* KCOUNT_INTERVALS, opened at the first record; under kc_lock */
static int kc_intervals_tried;

static void kc_interval(const CUpti_ActivityKernel10 *k)
{
    if (!kc_intervals_tried) {
        const char *t = getenv("KCOUNT_INTERVALS");
        char path[4096];
        kc_intervals_tried = 1;
        if (t && *t) {
            const char *pp = strstr(t, "%p");
            if (pp)
                snprintf(path, sizeof path, "%.*s%d%s", (int)(pp - t), t, (int)getpid(), pp + 2);
            else
                snprintf(path, sizeof path, "%s", t);
            kc_intervals = fopen(path, "w");
        }
    }
    if (kc_intervals)
        fprintf(kc_intervals, "%u %u %llu %llu %s\n", k->deviceId, k->streamId,
                (unsigned long long)k->start, (unsigned long long)k->end, k->name ? k->name : "?");
}

static void CUPTIAPI kc_buffer_completed(CUcontext ctx, uint32_t stream_id, uint8_t *buffer,
                                         size_t size, size_t valid)
{
    (void)size;
    if (!buffer)
        return;
    pthread_mutex_lock(&kc_lock);
    CUpti_Activity *rec = NULL;
    while (valid > 0 && cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
        if (rec->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
            rec->kind == CUPTI_ACTIVITY_KIND_KERNEL) {
            const CUpti_ActivityKernel10 *k = (const CUpti_ActivityKernel10 *)rec;
            kc_add(k->name, k->deviceId, k->correlationId, k->start, k->end);
            kc_interval(k);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
            const CUpti_ActivityMemcpy6 *m = (const CUpti_ActivityMemcpy6 *)rec;
            kc_memop(kc_memop_kind(m->copyKind), m->bytes, m->start, m->end);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMCPY2) {
            const CUpti_ActivityMemcpyPtoP4 *m = (const CUpti_ActivityMemcpyPtoP4 *)rec;
            kc_memop(4, m->bytes, m->start, m->end);
        } else if (rec->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
            const CUpti_ActivityMemset4 *m = (const CUpti_ActivityMemset4 *)rec;
            kc_memop(5, m->bytes, m->start, m->end);
        } else {
            kc_other++;
        }
    }
    size_t dropped = 0;
    if (cuptiActivityGetNumDroppedRecords(ctx, stream_id, &dropped) == CUPTI_SUCCESS)
        kc_dropped += dropped;
    kc_bufdone++;
    pthread_mutex_unlock(&kc_lock);
    free(buffer);
}

static int kc_cmp_sample(const void *a, const void *b)
{
    const kc_sample *x = a, *y = b;
    return x->corr < y->corr ? -1 : x->corr > y->corr;
}

static int kc_cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static int kc_cmp_kernel(const void *a, const void *b)
{
    return strcmp((*(kc_kernel *const *)a)->name, (*(kc_kernel *const *)b)->name);
}

static void kc_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void kc_json_command(FILE *f)
{
    fputc('[', f);
    FILE *c = fopen("/proc/self/cmdline", "rb");
    if (c) {
        char arg[4096];
        size_t len = 0;
        int first = 1, ch;
        while ((ch = fgetc(c)) != EOF) {
            if (ch != 0 && len + 1 < sizeof arg) {
                arg[len++] = (char)ch;
                continue;
            }
            if (ch != 0)
                continue; /* overlong argument: truncated */
            arg[len] = 0;
            if (!first)
                fputs(", ", f);
            kc_json_string(f, arg);
            first = 0;
            len = 0;
        }
        fclose(c);
    }
    fputc(']', f);
}

struct kc_stats {
    size_t complete;
    uint64_t sum, min, max;
    double median;
};

static struct kc_stats kc_stats_of(kc_kernel *k)
{
    struct kc_stats st = {0, 0, 0, 0, 0.0};
    uint64_t *d = malloc((k->n ? k->n : 1) * sizeof *d);
    for (size_t i = 0; i < k->n; i++) {
        uint64_t v = k->s[i].dur;
        if (v == KC_INCOMPLETE)
            continue;
        if (d)
            d[st.complete] = v;
        st.complete++;
        st.sum += v;
        if (st.complete == 1 || v < st.min)
            st.min = v;
        if (v > st.max)
            st.max = v;
    }
    if (d && st.complete) {
        qsort(d, st.complete, sizeof *d, kc_cmp_u64);
        size_t m = st.complete / 2;
        st.median = st.complete % 2 ? (double)d[m] : ((double)d[m - 1] + (double)d[m]) / 2.0;
    }
    free(d);
    return st;
}

static void kc_write(FILE *f, int tsv, kc_kernel **ks, size_t nk, const char *via,
                     CUptiResult flush_result)
{
    if (tsv) {
        fprintf(f, "# kcount pid %d via %s records %llu incomplete %llu dropped %llu\n",
                (int)kc_pid, via, (unsigned long long)kc_records,
                (unsigned long long)kc_incomplete, (unsigned long long)kc_dropped);
        fprintf(f, "mangled\tcount\tcomplete\tsum_ns\tmin_ns\tmax_ns\tmedian_ns\n");
        for (size_t i = 0; i < nk; i++) {
            struct kc_stats st = kc_stats_of(ks[i]);
            fprintf(f, "%s\t%zu\t%zu\t%llu\t%llu\t%llu\t%.1f\n", ks[i]->name, ks[i]->n,
                    st.complete, (unsigned long long)st.sum, (unsigned long long)st.min,
                    (unsigned long long)st.max, st.median);
        }
        return;
    }
    fprintf(f, "{\n  \"tool\": \"kcount\",\n  \"format_version\": 1,\n  \"pid\": %d,\n  \"command\": ",
            (int)kc_pid);
    kc_json_command(f);
    fprintf(f, ",\n  \"report_via\": \"%s\",\n  \"final_flush_result\": %d,\n", via,
            (int)flush_result);
    fprintf(f, "  \"flush_period_ms\": %ld,\n  \"periodic_flushes\": %d,\n", kc_flush_ms,
            kc_periodic_flushes);
    fprintf(f, "  \"atexit_registrations\": %d,\n",
            __atomic_load_n(&kc_atexit_regs, __ATOMIC_RELAXED));
    fprintf(f, "  \"buffers_requested\": %llu,\n  \"buffers_completed\": %llu,\n",
            (unsigned long long)__atomic_load_n(&kc_bufreq, __ATOMIC_RELAXED),
            (unsigned long long)kc_bufdone);
    fprintf(f, "  \"records\": %llu,\n  \"incomplete\": %llu,\n  \"dropped\": %llu,\n",
            (unsigned long long)kc_records, (unsigned long long)kc_incomplete,
            (unsigned long long)kc_dropped);
    fprintf(f, "  \"lost_no_memory\": %llu,\n  \"other_records\": %llu,\n",
            (unsigned long long)kc_lost, (unsigned long long)kc_other);
    fprintf(f, "  \"memops\": ");
    if (kc_memops) {
        fprintf(f, "{");
        for (int m = 0; m < KC_MEMOP_KINDS; m++)
            fprintf(f, "%s\n    \"%s\": {\"count\": %llu, \"bytes\": %llu, \"sum_ns\": %llu}",
                    m ? "," : "", kc_memop_name[m], (unsigned long long)kc_mem_count[m],
                    (unsigned long long)kc_mem_bytes[m], (unsigned long long)kc_mem_ns[m]);
        fprintf(f, "\n  },\n");
    } else {
        fprintf(f, "null,\n");
    }
    fprintf(f, "  \"kernels\": [");
    for (size_t i = 0; i < nk; i++) {
        kc_kernel *k = ks[i];
        struct kc_stats st = kc_stats_of(k);
        fprintf(f, "%s\n    {\"mangled\": ", i ? "," : "");
        kc_json_string(f, k->name);
        fprintf(f, ", \"count\": %zu, \"complete\": %zu, \"sum_ns\": %llu, \"min_ns\": %llu, "
                   "\"max_ns\": %llu, \"median_ns\": %.1f,\n     \"per_device\": {",
                k->n, st.complete, (unsigned long long)st.sum, (unsigned long long)st.min,
                (unsigned long long)st.max, st.median);
        int first = 1;
        for (int d = 0; d < KC_MAX_DEVICES; d++) {
            if (k->per_device[d]) {
                fprintf(f, "%s\"%d\": %zu", first ? "" : ", ", d, k->per_device[d]);
                first = 0;
            }
        }
        fputs("},\n     \"durations_ns\": [", f);
        for (size_t j = 0; j < k->n; j++) {
            if (j)
                fputs(j % 16 ? ", " : ",\n      ", f);
            if (k->s[j].dur == KC_INCOMPLETE)
                fputs("null", f);
            else
                fprintf(f, "%llu", (unsigned long long)k->s[j].dur);
        }
        fputs("]}", f);
    }
    fputs(nk ? "\n  ]\n}\n" : "]\n}\n", f);
}

/* Expands %p in the KCOUNT_OUTPUT template. Returns 0 on success. */
static int kc_output_path(const char *tmpl, char *out, size_t cap)
{
    size_t o = 0;
    for (const char *p = tmpl; *p; p++) {
        char tmp[32];
        const char *add = tmp;
        if (p[0] == '%' && p[1] == 'p') {
            snprintf(tmp, sizeof tmp, "%d", (int)kc_pid);
            p++;
        } else {
            tmp[0] = *p;
            tmp[1] = 0;
        }
        size_t l = strlen(add);
        if (o + l + 1 > cap)
            return -1;
        memcpy(out + o, add, l);
        o += l;
    }
    out[o] = 0;
    return 0;
}

static void kc_report(const char *via, CUptiResult flush_result)
{
    pthread_mutex_lock(&kc_lock);
    if (kc_records == 0 && __atomic_load_n(&kc_bufreq, __ATOMIC_RELAXED) == 0) {
        pthread_mutex_unlock(&kc_lock);
        return; /* this process never used CUDA */
    }
    kc_kernel **ks = malloc((kc_nkernels ? kc_nkernels : 1) * sizeof *ks);
    if (!ks) {
        pthread_mutex_unlock(&kc_lock);
        fprintf(stderr, "kcount: error: out of memory at exit; no report\n");
        return;
    }
    size_t nk = 0;
    for (size_t b = 0; b < KC_NBUCKET; b++)
        for (kc_kernel *k = kc_tab[b]; k; k = k->next) {
            qsort(k->s, k->n, sizeof *k->s, kc_cmp_sample);
            ks[nk++] = k;
        }
    qsort(ks, nk, sizeof *ks, kc_cmp_kernel);

    const char *tmpl = getenv("KCOUNT_OUTPUT");
    if (!tmpl || !*tmpl) {
        kc_write(stderr, 1, ks, nk, via, flush_result);
    } else {
        char path[4096], tmp[4200];
        if (kc_output_path(tmpl, path, sizeof path) != 0) {
            fprintf(stderr, "kcount: error: KCOUNT_OUTPUT is too long; no report\n");
        } else {
            size_t l = strlen(path);
            int tsv = l >= 4 && strcmp(path + l - 4, ".tsv") == 0;
            snprintf(tmp, sizeof tmp, "%s.tmp.%d", path, (int)kc_pid);
            FILE *f = fopen(tmp, "w");
            if (!f) {
                fprintf(stderr, "kcount: error: cannot write %s: %s\n", tmp, strerror(errno));
            } else {
                kc_write(f, tsv, ks, nk, via, flush_result);
                int bad = ferror(f);
                if (fclose(f) != 0 || bad || rename(tmp, path) != 0) {
                    fprintf(stderr, "kcount: error: writing %s failed\n", path);
                    remove(tmp);
                } else {
                    fprintf(stderr,
                            "kcount: %llu kernel records (%llu incomplete, %llu dropped), "
                            "%zu kernels -> %s (via %s)\n",
                            (unsigned long long)kc_records, (unsigned long long)kc_incomplete,
                            (unsigned long long)kc_dropped, nk, path, via);
                }
            }
        }
    }
    free(ks);
    pthread_mutex_unlock(&kc_lock);
}

static void kc_finish(const char *via)
{
    if (__atomic_exchange_n(&kc_finished, 1, __ATOMIC_ACQ_REL))
        return;
    if (!kc_active || getpid() != kc_pid)
        return;
    if (kc_flusher_started && !pthread_equal(pthread_self(), kc_flusher)) {
        pthread_mutex_lock(&kc_flusher_lock);
        kc_flusher_stop = 1;
        pthread_cond_broadcast(&kc_flusher_cond);
        pthread_mutex_unlock(&kc_flusher_lock);
        pthread_join(kc_flusher, NULL);
    }
    CUptiResult r = cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (r != CUPTI_SUCCESS)
        kc_warn("final cuptiActivityFlushAll(FORCED)", r);
    pthread_mutex_lock(&kc_lock);
    if (kc_intervals)
        fflush(kc_intervals);
    pthread_mutex_unlock(&kc_lock);
    kc_report(via, r);
}

static void kc_atexit(void)
{
    kc_finish("atexit");
}

__attribute__((constructor)) static void kc_init(void)
{
    kc_pid = getpid();
    const char *d = getenv("KCOUNT_DISABLE");
    if (d && *d && strcmp(d, "0") != 0)
        return;
    const char *fm = getenv("KCOUNT_FLUSH_MS");
    if (fm && *fm) {
        char *end;
        errno = 0;
        long v = strtol(fm, &end, 10);
        if (errno || end == fm || *end || v < 0 || v > 60000)
            fprintf(stderr, "kcount: warning: KCOUNT_FLUSH_MS='%s' is not 0..60000; using %ld\n",
                    fm, kc_flush_ms);
        else
            kc_flush_ms = v;
    }
    CUptiResult r = cuptiActivityRegisterCallbacks(kc_buffer_requested, kc_buffer_completed);
    if (r != CUPTI_SUCCESS) {
        kc_warn("cuptiActivityRegisterCallbacks", r);
        return;
    }
    r = cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
    if (r != CUPTI_SUCCESS) {
        kc_warn("cuptiActivityEnable(CONCURRENT_KERNEL)", r);
        return;
    }
    const char *mo = getenv("KCOUNT_MEMOPS");
    if (mo && strcmp(mo, "1") == 0) {
        static const CUpti_ActivityKind kinds[] = { CUPTI_ACTIVITY_KIND_MEMCPY,
                                                    CUPTI_ACTIVITY_KIND_MEMCPY2,
                                                    CUPTI_ACTIVITY_KIND_MEMSET };
        kc_memops = 1;
        for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
            if ((r = cuptiActivityEnable(kinds[i])) != CUPTI_SUCCESS) {
                kc_warn("cuptiActivityEnable(memory operations)", r);
                kc_memops = 0;
            }
    }
    kc_active = 1;
    __atomic_add_fetch(&kc_atexit_regs, 1, __ATOMIC_RELAXED);
    atexit(kc_atexit);
}

__attribute__((destructor)) static void kc_fini(void)
{
    kc_finish("destructor");
}
