/* dump.c - the samples dump (KTIME_DUMP_SAMPLES): every timed sample of the run, one line
 * each, so that the report's statistics and quantiles can be checked against the raw samples
 * of the same run. The module's start hooks the drain's and the CUPTI timer's samples; the
 * file is made on the first sample and closed at the end of the run once every sample is in.
 * Only the drain thread writes (or the exit path once the drain thread has stopped): never an
 * application thread, never the launch path. Its own buffer and output_write(), never the
 * output's stdio buffer (left empty): a forked child's exit would flush a copy of a stdio
 * buffer into the parent's file a second time. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cuptitimer.h"
#include "log.h"
#include "module.h"
#include "names.h"
#include "outpath.h"
#include "output.h"
#include "state.h"

static struct output dump_out;
static int dump_state;  /* 0 not opened yet, 1 open, 2 open but a write failed, -1 failed or closed */
static pid_t dump_pid;  /* the process that opened it: only it writes */
static char dump_path[4096];
static char dump_buf[1 << 16];
static size_t dump_len;
static int dump_errno;  /* why a write failed */

static const char *env_get(const char *name)
{
    return getenv(name);
}

/* A FIFO's reader may be slow: the drain thread waits at most KTIME_EXIT_WAIT_MS for room,
 * once; after a failed write nothing more is written. */
static void dump_flush(void)
{
    if (dump_state == 1 && dump_len &&
        output_write(&dump_out, dump_buf, dump_len, kt.cfg.exit_wait_ms) != 0) {
        dump_errno = errno;
        dump_state = 2;
    }
    dump_len = 0;
}

static void dump_append(const char *s, size_t n)
{
    while (n) { /* in pieces: a kernel's name may be longer than the buffer */
        size_t k;
        if (dump_len == sizeof dump_buf)
            dump_flush();
        k = n < sizeof dump_buf - dump_len ? n : sizeof dump_buf - dump_len;
        memcpy(dump_buf + dump_len, s, k);
        dump_len += k;
        s += k;
        n -= k;
    }
}

/* Opened the way KTIME_OUTPUT is (output.h): never blocking on a FIFO, never through
 * another user's link in a sticky directory, a temporary renamed into place at the end. */
static bool dump_open(void)
{
    char host[256], head[128];
    const char *why = NULL;

    if (dump_state)
        return dump_state == 1 && dump_pid == getpid();
    dump_state = -1;
    if (outpath_resolve("KTIME_DUMP_SAMPLES", kt.cfg.dump, kt.start_dir, (long)getpid(),
                        outpath_hostname(host, sizeof host), dump_path, sizeof dump_path,
                        env_get) != 0) {
        log_warn("KTIME_DUMP_SAMPLES '%s' is too long once expanded; no samples are dumped",
                 kt.cfg.dump);
        return false;
    }
    if (output_open_stream(&dump_out, dump_path, &why) != 0) {
        log_warn("KTIME_DUMP_SAMPLES '%s' %s; no samples are dumped", dump_path, why);
        return false;
    }
    dump_pid = getpid();
    dump_state = 1;
    int n = snprintf(head, sizeof head,
                     "# ktime samples of pid %ld: kernel (mangled name)\tdevice\tmicroseconds\n",
                     (long)dump_pid);
    dump_append(head, (size_t)n);
    return true;
}

/* A sample's line: its kernel's name with the report's escapes (a tab or newline in a name
 * cannot break the line into fields or lines), its device, its microseconds. */
static void dump_line(const char *name, int device, double us)
{
    char line[64], esc[8];

    if (!dump_open())
        return;
    const char *p = name ? name : "<unnamed>", *run = p;
    while (*p) {
        size_t n, e = report_escape_char(p, esc, &n);
        if (e) {
            dump_append(run, (size_t)(p - run));
            dump_append(esc, e);
            run = p + n;
        }
        p += n;
    }
    dump_append(run, (size_t)(p - run));
    int n = snprintf(line, sizeof line, "\t%d\t%.4f\n", device, us);
    dump_append(line, (size_t)n);
}

static void dump_event_sample(uint32_t kernel, int device, double us)
{
    const struct ktab_entry *e = kernel <= kt.ktab.mask ? &kt.ktab.slots[kernel] : NULL;

    dump_line(e ? atomic_load(&e->name) : NULL, device, us);
}

static bool dump_start(void)
{
    if (!kt.cfg.dump)
        return false;
    kt.drain.sample = dump_event_sample;
    cuptitimer_records()->sample = dump_line;
    return true;
}

/* Writes out and closes the file, once every sample is in (the drain thread stopped, and the
 * CUPTI timer's last records parsed). */
static void dump_end(struct module_end *e, struct report *r)
{
    const char *why = NULL;

    if (!e->stopped)
        return;
    if (dump_state > 0 && dump_pid == getpid()) {
        dump_flush();
        bool failed = dump_state == 2;
        if (output_close(&dump_out, failed, &why) != 0 || failed)
            log_warn("writing KTIME_DUMP_SAMPLES '%s' failed (%s); %s", dump_path,
                     failed ? strerror(dump_errno) : why,
                     dump_out.replace ? "no samples are dumped" : "the samples are incomplete");
    }
    dump_state = -1;
}

const struct ktime_module dump_module = {
    .name = "dump",
    .start = dump_start,
    .end = dump_end,
};
