/* deliver.c - where the report goes: KTIME_OUTPUT, a file per rank in a job of several
 * processes, or stderr; and KTIME_ALSO_OUTPUT. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "deliver.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "outpath.h"
#include "output.h"
#include "state.h"
#include "sysinfo.h"

static const char *env_get(const char *name)
{
    return getenv(name);
}

static int write_report_as(FILE *f, struct report *r, enum report_format format)
{
    switch (format) {
    case FORMAT_JSON:
        return report_write_json(f, r);
    case FORMAT_CSV:
        return report_write_csv(f, r);
    default:
        return report_write_text(f, r);
    }
}

int deliver_write(FILE *f, struct report *r)
{
    return write_report_as(f, r, kt.cfg.format);
}

void deliver_also(struct report *r)
{
    static char path[PATH_MAX];
    struct output o;
    const char *why = NULL;
    char host[256];

    if (outpath_resolve("KTIME_ALSO_OUTPUT", kt.cfg.also_output, kt.start_dir, r->pid,
                        outpath_hostname(host, sizeof host), path, sizeof path, env_get) != 0) {
        log_warn("KTIME_ALSO_OUTPUT expands to more than %d bytes; not written", PATH_MAX - 1);
        return;
    }
    if (output_open(&o, path, kt.cfg.exit_wait_ms, &why) != 0) {
        log_warn("KTIME_ALSO_OUTPUT '%s' %s; not written", path, why);
        return;
    }
    int rc = write_report_as(o.f, r, kt.cfg.also_format);
    if (output_close(&o, rc != 0, &why) != 0)
        log_warn("writing KTIME_ALSO_OUTPUT '%s' failed (%s)", path, why);
}

/* Without KTIME_OUTPUT, the name of a rank's report in a job of several processes (a rank
 * and a world size over 1 in the launcher's variables): N reports would otherwise be
 * interleaved on the job's one stderr. NULL for a single process: stderr. */
static const char *rank_default(void)
{
    if (outpath_world_size(env_get) < 2 || !outpath_rank(env_get))
        return NULL;
    switch (kt.cfg.format) {
    case FORMAT_JSON:
        return "ktime-%h-%r.json";
    case FORMAT_CSV:
        return "ktime-%h-%r.csv";
    default:
        return "ktime-%h-%r.txt";
    }
}

const char *deliver_template(void)
{
    return kt.cfg.output ? kt.cfg.output : rank_default();
}

int deliver_expand(const char *tmpl, long pid, char *path, size_t size)
{
    char host[256];

    return outpath_resolve("KTIME_OUTPUT", tmpl, kt.start_dir, pid,
                           outpath_hostname(host, sizeof host), path, size, env_get);
}

/* Whether path holds a report another process of this run wrote: a second process given
 * the same KTIME_OUTPUT, with no %p in it (a script's two CUDA programs, a worker and its
 * parent). A report written since the tree of processes ktime is in started, by another pid
 * (its pid in *pid, from the text's or the JSON's header; a CSV report names none, and counts
 * only when written since this process started). An empty report, an older file, the
 * program's own stdout or stderr (the report is appended there, nothing replaced), or anything
 * but a regular file: false. */
static bool shared_report(const char *path, long *pid)
{
    char buf[4097];
    struct stat st;
    const char *p;
    double mtime, tree;
    dev_t dev;
    ino_t ino;
    ssize_t n;
    int fd;

    *pid = 0;
    if (stat(path, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size == 0)
        return false;
    for (fd = 1; fd <= 2; fd++)
        if (log_stdio_at_start(fd, &dev, &ino) && dev == st.st_dev && ino == st.st_ino)
            return false;
    mtime = (double)st.st_mtim.tv_sec + (double)st.st_mtim.tv_nsec / 1e9;
    tree = sysinfo_tree_start();
    if (mtime < (tree > 0 ? tree : kt.start_unix))
        return false;
    if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)) < 0)
        return false;
    n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0 || report_is_empty(buf, (size_t)n))
        return false;
    buf[n] = '\0';
    if ((p = strstr(buf, "\npid      ")) || (p = strstr(buf, "\n  \"pid\": ")))
        *pid = strtol(p + 10, NULL, 10);
    return *pid ? *pid != (long)getpid() : mtime >= kt.start_unix;
}

/* Warns when path, about to be replaced, holds the report of another process of this run. */
static void warn_shared(const char *path)
{
    char whose[48] = "";
    long other;

    if (!shared_report(path, &other))
        return;
    if (other > 0)
        snprintf(whose, sizeof whose, " (pid %ld)", other);
    log_warn("KTIME_OUTPUT '%s' holds the report of another process%s written during this "
             "run, now replaced by this one's: put %%p in KTIME_OUTPUT for a file per process "
             "(-o 'run-%%p.json'), then ktime merge them", path, whose);
}

bool deliver_report(struct report *r, double t_built, const char *path_done, long wait_ms,
                    char *written, size_t size)
{
    static char path[PATH_MAX];
    struct output o;
    const char *why = NULL;

    if (path_done) {
        snprintf(path, sizeof path, "%s", path_done);
    } else if (deliver_template()) {
        const char *tmpl = deliver_template();
        if (deliver_expand(tmpl, r->pid, path, sizeof path) != 0) {
            log_warn("KTIME_OUTPUT expands to more than %d bytes; the report follows on "
                     "stderr (KTIME_OUTPUT='%s')", PATH_MAX - 1, tmpl);
            path[0] = '\0';
        } else if (!kt.cfg.output && strcmp(outpath_rank(env_get), "0") == 0) {
            /* Said once for the job, by rank 0. */
            log_warn("%ld processes and no KTIME_OUTPUT: each rank writes its report to "
                     "%s in the directory it started in (here %s)", outpath_world_size(env_get),
                     tmpl, path);
        }
    } else {
        path[0] = '\0';
    }
    if (path[0]) {
        /* Each process replaces the whole file: the other one's report is lost. */
        if (!path_done && kt.cfg.output && !outpath_per_process(kt.cfg.output))
            warn_shared(path);
        if (output_open(&o, path, wait_ms, &why) != 0) {
            log_warn("KTIME_OUTPUT '%s' %s; the report follows on stderr", path, why);
        } else {
            int rc = deliver_write(o.f, r);
            if (output_close(&o, rc != 0, &why) == 0) {
                /* Said once, by the first writing; per rank files: rank 0 said where. */
                if (!path_done && kt.cfg.output)
                    log_notice("report written to %s", path);
                else if (!path_done)
                    log_info("report written to %s", path);
                log_debug("exit: %.2f ms to write the report", drain_now_ms() - t_built);
                snprintf(written, size, "%s", path);
                /* Appended to the program's stdout or stderr: like stderr, never again. */
                return !o.append;
            }
            log_warn("writing KTIME_OUTPUT '%s' failed (%s); %sthe report follows on stderr",
                     path, why, o.replace ? "the file is left as it was; " : "");
        }
    }
    if (path_done)
        return false; /* the complete report is there already; only stderr is left */
    /* Not into a descriptor 2 that the program closed and reused for a file of its own. */
    if (!log_stdio_unchanged(STDERR_FILENO))
        return false;
    struct log_hold hold;
    log_hold_signals(&hold);
    fflush(stderr);
    int rc = deliver_write(stderr, r);
    if (fflush(stderr) != 0)
        rc = -1;
    log_release_signals(&hold);
    if (rc != 0)
        log_warn("the report could not be written to stderr either");
    return false;
}
