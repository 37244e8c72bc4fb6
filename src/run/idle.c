/* idle.c - the end of a process that never launched a kernel: it says so, and may leave an
 * empty report where KTIME_OUTPUT names one file for every process. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "deliver.h"
#include "finish.h"
#include "fork.h"
#include "log.h"
#include "outpath.h"
#include "output.h"
#include "state.h"
#include "sysinfo.h"

/* What is at the path an empty report would go to. */
enum idle_target {
    IDLE_NONE,    /* nothing */
    IDLE_EMPTY,   /* an empty report (of another process that launched nothing) */
    IDLE_OTHER,   /* another report, or any other file */
    IDLE_SPECIAL  /* not a regular file (a FIFO, a device) */
};

static enum idle_target idle_target(const char *path)
{
    char buf[4096];
    struct stat st;
    ssize_t n = 0, got;
    int fd;

    if (lstat(path, &st) != 0)
        return errno == ENOENT ? IDLE_NONE : IDLE_OTHER;
    if (S_ISLNK(st.st_mode) && stat(path, &st) != 0)
        return IDLE_OTHER; /* a link to nothing: something all the same */
    if (!S_ISREG(st.st_mode))
        return IDLE_SPECIAL;
    /* An empty report is small: a larger file is something else. */
    if (st.st_size > (off_t)sizeof buf)
        return IDLE_OTHER;
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
        return IDLE_OTHER;
    while ((size_t)n < sizeof buf && (got = read(fd, buf + n, sizeof buf - (size_t)n)) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            close(fd);
            return IDLE_OTHER;
        }
        n += got;
    }
    close(fd);
    return report_is_empty(buf, (size_t)n) ? IDLE_EMPTY : IDLE_OTHER;
}

/* Whether the process loaded the CUDA driver (ktime never loads it). */
static bool cuda_loaded(void)
{
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);

    if (!h)
        h = dlopen("libcuda.so", RTLD_LAZY | RTLD_NOLOAD);
    if (h)
        dlclose(h);
    return h != NULL;
}

/* Writes r, an empty report, at path only if nothing is there (output_open_new): another
 * process's report that lands there first, even while this one is written, is never
 * replaced. Returns 0 written, 1 something was there, -1 failed (*why). */
static int write_empty(struct report *r, const char *path, const char **why)
{
    struct output o;
    int rc = output_open_new(&o, path, why);

    if (rc != 0)
        return rc;
    return output_close_new(&o, deliver_write(o.f, r) != 0, why);
}

/* At exit of a process that never launched a kernel. It says so: as a notice in the first
 * process of a tree ktime reaches (its parent has no libktime), in any that loaded CUDA, and
 * in the one that made the report file; at KTIME_LOG=info in the others (a shell script's
 * every child has the preload too, and some shells end with _exit, which runs no handler) and
 * in a forked child (a pool's workers). Where KTIME_OUTPUT names one file for every process,
 * it writes an empty report there if nothing is there yet, so that scripts find a valid one;
 * anything already there (a report of a CUDA child or sibling, an empty one, any other file)
 * is left as it is, and a report that lands there meanwhile wins. Where KTIME_OUTPUT names a
 * file per process (%p, %r, %l, %q{}), it writes none: a job's launcher and helpers would
 * otherwise leave empty reports beside the ranks'. */
static void finish_idle(void)
{
    static struct report idle_report;
    struct report *r = &idle_report;
    static char path[PATH_MAX];
    const char *prog, *slash;
    bool cuda = cuda_loaded();
    bool loud = (cuda || !ktime_parent_has_ktime()) && !fork_rearmed();
    int level = loud ? LOG_NOTICE : LOG_INFO;
    int said = cuda && !fork_rearmed() ? LOG_NOTICE : LOG_INFO;
    const char *why = NULL;
    int rc;

    if (log_level < LOG_INFO && !cuda && !kt.cfg.output)
        return;
    finish_header(r);
    r->note = REPORT_EMPTY_NOTE;
    prog = r->argc > 0 ? r->argv[0] : "?";
    if ((slash = strrchr(prog, '/')))
        prog = slash + 1;
#define IDLE_SAY(lvl, ...) do { if (log_level >= ((lvl) == LOG_NOTICE ? LOG_WARN : (lvl))) \
                                    log_msg((lvl), __VA_ARGS__); } while (0)
    if (!kt.cfg.output) {
        /* The report would have gone to stderr: a program that never used CUDA is left
         * alone there, one that did is told why it gets no report. */
        IDLE_SAY(said, "no CUDA launches seen in %s (pid %ld); no report written", prog, r->pid);
        return;
    }
    if (outpath_per_process(kt.cfg.output)) {
        IDLE_SAY(LOG_INFO, "no CUDA launches seen in %s (pid %ld); no report written (KTIME_OUTPUT "
                 "names a file per process)", prog, r->pid);
        return;
    }
    if (deliver_expand(kt.cfg.output, r->pid, path, sizeof path) != 0) {
        IDLE_SAY(level, "no CUDA launches seen in %s (pid %ld); no report written (KTIME_OUTPUT "
                 "expands to more than %d bytes)", prog, r->pid, PATH_MAX - 1);
        return;
    }
    rc = idle_target(path) == IDLE_NONE ? write_empty(r, path, &why) : 1;
    if (rc == 0) {
        IDLE_SAY(fork_rearmed() ? LOG_INFO : LOG_NOTICE, "no CUDA launches seen in %s (pid %ld); "
                 "empty report written to %s", prog, r->pid, path);
        return;
    }
    if (rc < 0) {
        IDLE_SAY(fork_rearmed() ? LOG_INFO : LOG_WARN, "no CUDA launches seen in %s (pid %ld); the "
                 "empty report could not be written to %s (%s)", prog, r->pid, path, why ? why : "?");
        return;
    }
    switch (idle_target(path)) {
    case IDLE_SPECIAL:
        IDLE_SAY(level, "no CUDA launches seen in %s (pid %ld); nothing written to %s (not a "
                 "regular file)", prog, r->pid, path);
        break;
    case IDLE_EMPTY:
        IDLE_SAY(LOG_INFO, "no CUDA launches seen in %s (pid %ld); %s holds an empty report "
                 "already, left as it is", prog, r->pid, path);
        break;
    default:
        IDLE_SAY(said, "no CUDA launches seen in %s (pid %ld); %s holds another report, left "
                 "as it is", prog, r->pid, path);
        break;
    }
#undef IDLE_SAY
}

static void on_exit_idle(void)
{
    /* Launches installed the real exit handler, which has run by now (it was registered
     * later); a forked child's exit is its parent's business. */
    if (getpid() != kt.owner || atomic_load(&kt.registered) ||
        atomic_load(&kt.phase) != PHASE_ON)
        return;
    finish_idle();
}

void finish_register_idle(void)
{
    if (atexit(on_exit_idle) != 0)
        log_debug("could not register the exit handler for a process without launches");
}
