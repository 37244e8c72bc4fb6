/* signals.c - the report when SIGINT, SIGTERM or SIGHUP ends the program (signals.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "signals.h"

#include <errno.h>
#include <linux/futex.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

static const int report_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIGNALS (sizeof report_signals / sizeof report_signals[0])

/* Shared by the handler, the writer thread and finish_report(): lock-free atomics only, and
 * the futex words the waits sleep on (no file descriptor that the program could close). */
static struct {
    _Atomic int taken;            /* the first report signal handled, 0: none yet */
    _Atomic uint32_t request;     /* futex: the signal, once the handler wants the report */
    _Atomic uint32_t done;        /* futex: 1 once finish_report() is through */
    _Atomic int step;             /* enum signals_step finish_report() is at, 0: not begun */
    _Atomic pid_t writer;         /* the thread in finish_report(), 0: none */
    _Atomic int64_t deadline_ns;  /* CLOCK_MONOTONIC end of the handler's wait, 0: none */
    _Atomic int waiting;          /* the handler waits for the report */
    _Atomic int said;             /* the handler's one line is written */
    _Atomic int installed;
} sg;

_Static_assert(sizeof(_Atomic uint32_t) == sizeof(uint32_t), "futex words are 32-bit");

static int64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Sleeps while *word is val, until the absolute CLOCK_MONOTONIC time until_ns (0: no end).
 * Returns early on a wake-up, a changed word, or an interruption; callers loop. */
static void futex_wait_until(_Atomic uint32_t *word, uint32_t val, int64_t until_ns)
{
    struct timespec ts = { (time_t)(until_ns / 1000000000), (long)(until_ns % 1000000000) };

    if (syscall(SYS_futex, (uint32_t *)word, FUTEX_WAIT_BITSET_PRIVATE, val,
                until_ns ? &ts : NULL, NULL, FUTEX_BITSET_MATCH_ANY) != 0 &&
        errno == ENOSYS) {
        struct timespec nap = { 0, 1000000 };
        nanosleep(&nap, NULL); /* no futex: poll the word every millisecond */
    }
}

static void futex_wake_all(_Atomic uint32_t *word)
{
    syscall(SYS_futex, (uint32_t *)word, FUTEX_WAKE_PRIVATE, INT32_MAX, NULL, NULL, 0);
}

/* ---- the handler's line: async-signal-safe formatting and writing ---- */

struct line {
    char buf[512];
    size_t n;
};

static void put(struct line *l, const char *s)
{
    while (*s && l->n < sizeof l->buf - 1)
        l->buf[l->n++] = *s++;
}

static void put_long(struct line *l, long v)
{
    char digits[24];
    int n = 0;

    if (v < 0) {
        put(l, "-");
        v = -v;
    }
    do
        digits[n++] = (char)('0' + v % 10);
    while ((v /= 10) > 0 && n < (int)sizeof digits);
    while (n > 0 && l->n < sizeof l->buf - 1)
        l->buf[l->n++] = digits[--n];
}

static void put_signal(struct line *l, int sig)
{
    switch (sig) {
    case SIGINT: put(l, "SIGINT"); break;
    case SIGTERM: put(l, "SIGTERM"); break;
    case SIGHUP: put(l, "SIGHUP"); break;
    default: put(l, "signal "); put_long(l, sig); break;
    }
}

/* Writes l as one line on stderr, once per process, unless KTIME_LOG=quiet. It never blocks:
 * a pipe that is full (its reader stopped reading) gets nothing; nor does a descriptor 2 that
 * no longer names the program's stderr (log_stdio_unchanged). */
static void say(struct line *l)
{
    struct pollfd p = { STDERR_FILENO, POLLOUT, 0 };
    struct log_hold hold;
    size_t off = 0;

    if (log_level < LOG_WARN || atomic_exchange(&sg.said, 1))
        return;
    l->buf[l->n++] = '\n';
    if (!log_stdio_unchanged(STDERR_FILENO) || poll(&p, 1, 0) != 1 || !(p.revents & POLLOUT))
        return;
    log_hold_signals(&hold);
    while (off < l->n) {
        ssize_t w = write(STDERR_FILENO, l->buf + off, l->n - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            break;
        off += (size_t)w;
    }
    log_release_signals(&hold);
}

static void begin(struct line *l, int sig)
{
    l->n = 0;
    put(l, "ktime: warning: ");
    put_signal(l, sig);
    put(l, ": ");
}

/* ---- the handler ---- */

/* Ends the process by sig, as the program's default action would have. Returns only if sig
 * does not end it (the program gave it a handler of its own meanwhile, which has then run). */
static void die(int sig)
{
    struct sigaction dfl;
    sigset_t set;

    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    sigemptyset(&set);
    sigaddset(&set, sig);
    pthread_sigmask(SIG_UNBLOCK, &set, NULL);
    raise(sig);
}

/* The first report signal: has the report written (or waits for the one under way) until
 * the deadline, and says why when it is not out by then. */
static void wait_for_report(int sig)
{
    int64_t deadline = now_ns() + ((int64_t)kt.cfg.exit_wait_ms + SIGNALS_WRITE_MS) * 1000000;
    int phase = atomic_load(&kt.phase);
    struct line l;

    atomic_store(&sg.deadline_ns, deadline);
    if (atomic_load(&sg.done) || phase == PHASE_OFF)
        return; /* written already (at exit), or ktime is off: nothing to wait for */
    if (atomic_load(&sg.writer) == (pid_t)syscall(SYS_gettid)) {
        /* The exit's report, on this very thread: it cannot be waited for. */
        begin(&l, sig);
        put(&l, "it came while this thread was writing the report at exit; the program ends "
                "now, with no report or a partial one on stderr");
        say(&l);
        return;
    }
    atomic_store(&sg.waiting, 1);
    if (phase == PHASE_ON) {
        atomic_store(&sg.request, (uint32_t)sig);
        futex_wake_all(&sg.request);
    }
    while (!atomic_load(&sg.done) && now_ns() < deadline)
        futex_wait_until(&sg.done, 0, deadline);
    if (atomic_load(&sg.done))
        return;
    begin(&l, sig);
    put(&l, "no report: it was not written within ");
    put_long(&l, kt.cfg.exit_wait_ms + SIGNALS_WRITE_MS);
    put(&l, " ms (KTIME_EXIT_WAIT_MS + 1000); ");
    switch (atomic_load(&sg.step)) {
    case 0:
        put(&l, "ktime's writer thread did not get to run");
        break;
    case SIGNALS_STEP_DRAIN:
        put(&l, "ktime was still waiting on the CUDA driver (stuck, or held by a lock the "
                "interrupted thread holds)");
        break;
    default:
        put(&l, "writing it was held up (by a lock the interrupted thread holds, such as "
                "stderr's or malloc's, or by the output file)");
        break;
    }
    say(&l);
}

static void on_signal(int sig)
{
    int saved_errno = errno, first = 0;

    if (getpid() != kt.owner) {
        /* A child that shares ktime's memory (vfork) or kept the handler: not the timing
         * process, nothing to write. */
    } else if (atomic_compare_exchange_strong(&sg.taken, &first, sig)) {
        wait_for_report(sig);
    } else if (atomic_load(&sg.waiting) && !atomic_load(&sg.done)) {
        struct line l;
        begin(&l, sig);
        put(&l, "it came while the report for ");
        put_signal(&l, first);
        put(&l, " was being written; the program ends now, with no report");
        say(&l);
    }
    die(sig);
    errno = saved_errno;
}

/* ---- the writer ---- */

/* What writes the report (finish_report): set once, before the writer thread starts. */
static void (*report_writer)(double deadline);

static void *writer_main(void *arg)
{
    (void)arg;
    while (atomic_load(&sg.request) == 0)
        futex_wait_until(&sg.request, 0, 0);
    report_writer((double)atomic_load(&sg.deadline_ns) / 1e6);
    return NULL;
}

static int start_writer(void)
{
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all, old;
    int err;

    /* The writer must never receive the program's signals. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 512 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    err = pthread_create(&t, &attr, writer_main, NULL);
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
#ifdef __GLIBC__
    if (err == 0)
        pthread_setname_np(t, "ktime-signal");
#endif
    return err;
}

void signals_install(void (*write_report)(double deadline))
{
    struct sigaction sa;
    bool take[NSIGNALS];
    size_t n = 0;
    int err;

    if (atomic_exchange(&sg.installed, 1))
        return;
    report_writer = write_report;
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old;
        /* Only where the program left the default (terminate): its own handlers win. */
        take[i] = sigaction(report_signals[i], NULL, &old) == 0 && old.sa_handler == SIG_DFL &&
                  !(old.sa_flags & SA_SIGINFO);
        n += take[i];
    }
    if (n == 0)
        return;
    if ((err = start_writer()) != 0) {
        log_warn("could not start a thread (%s); no report if SIGINT, SIGTERM or SIGHUP "
                 "ends the program", strerror(err));
        return;
    }
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    /* SA_NODEFER: the same signal again, during the wait, ends the program at once. While the
     * handler waits, the program's other signals stay blocked on its thread (none of the
     * program's own handlers runs there), except the report signals and those of a fault. */
    sa.sa_flags = SA_RESTART | SA_NODEFER;
    sigfillset(&sa.sa_mask);
    for (size_t i = 0; i < NSIGNALS; i++)
        sigdelset(&sa.sa_mask, report_signals[i]);
    sigdelset(&sa.sa_mask, SIGSEGV);
    sigdelset(&sa.sa_mask, SIGBUS);
    sigdelset(&sa.sa_mask, SIGFPE);
    sigdelset(&sa.sa_mask, SIGILL);
    sigdelset(&sa.sa_mask, SIGTRAP);
    sigdelset(&sa.sa_mask, SIGABRT);
    sigdelset(&sa.sa_mask, SIGSYS);
    for (size_t i = 0; i < NSIGNALS; i++)
        if (take[i])
            sigaction(report_signals[i], &sa, NULL);
}

void signals_restore_default(void)
{
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction cur;
        if (sigaction(report_signals[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
            signal(report_signals[i], SIG_DFL);
    }
}

void signals_report_step(enum signals_step step)
{
    if (step == SIGNALS_STEP_DRAIN)
        atomic_store(&sg.writer, (pid_t)syscall(SYS_gettid));
    atomic_store(&sg.step, (int)step);
    if (step == SIGNALS_STEP_DONE) {
        atomic_store(&sg.writer, 0);
        atomic_store(&sg.done, 1);
        futex_wake_all(&sg.done);
    }
}

void signals_hold_exit(void)
{
    int64_t until;

    if (getpid() != kt.owner || !atomic_load(&sg.taken))
        return;
    until = atomic_load(&sg.deadline_ns);
    if (!until) /* the handler has only just begun */
        until = now_ns() + ((int64_t)kt.cfg.exit_wait_ms + SIGNALS_WRITE_MS) * 1000000;
    until += 1000000000;
    while (now_ns() < until) {
        struct timespec nap = { 0, 10000000 };
        nanosleep(&nap, NULL);
    }
}
