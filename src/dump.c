/* dump.c - KTIME_DUMP_SAMPLES (dump.h). Only the drain thread writes (or the exit path once the
 * drain thread has stopped): never an application thread, never the launch path. Its own
 * buffer and write(2), not stdio: a forked child's exit would flush a copy of a stdio buffer
 * into the parent's file a second time. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "dump.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "outpath.h"
#include "report.h"
#include "state.h"

static int dump_fd = -1;
static int dump_state;  /* 0 not opened yet, 1 open, -1 failed or closed */
static pid_t dump_pid;  /* the process that opened it: only it writes */
static char dump_buf[1 << 16];
static size_t dump_len;
static bool dump_lost;

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void dump_flush(void)
{
    size_t off = 0;

    while (off < dump_len) {
        ssize_t w = write(dump_fd, dump_buf + off, dump_len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            dump_lost = true;
            break;
        }
        off += (size_t)w;
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

static bool dump_open(void)
{
    char path[4096], host[256], head[128];

    if (dump_state)
        return dump_state > 0 && dump_pid == getpid();
    dump_state = -1;
    if (outpath_resolve(kt.cfg.dump, kt.start_dir, (long)getpid(),
                        outpath_hostname(host, sizeof host), path, sizeof path, env_get) != 0 ||
        (dump_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666)) < 0) {
        log_warn("KTIME_DUMP_SAMPLES '%s' cannot be written; no samples are dumped", kt.cfg.dump);
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

void dump_setup(void)
{
    if (!kt.cfg.dump)
        return;
    kt.drain.sample = dump_event_sample;
    kt.hw.sample = dump_line;
}

void dump_close(void)
{
    if (dump_state > 0 && dump_pid == getpid()) {
        dump_flush();
        if (close(dump_fd) != 0 || dump_lost)
            log_warn("KTIME_DUMP_SAMPLES: writing the samples failed; the file is incomplete");
    }
    dump_state = -1;
}
