/* deliver.c - where the report goes: KTIME_OUTPUT, a file per rank in a job of several
 * processes, or stderr; and KTIME_ALSO_OUTPUT. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "deliver.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "outpath.h"
#include "output.h"
#include "state.h"

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

    if (outpath_resolve(kt.cfg.also_output, kt.start_dir, r->pid,
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

int deliver_expand(const char *tmpl, long pid, char *path, size_t size)
{
    char host[256];

    return outpath_resolve(tmpl, kt.start_dir, pid, outpath_hostname(host, sizeof host), path,
                           size, env_get);
}

bool deliver_report(struct report *r, double t_built, const char *path_done, long wait_ms,
                    char *written, size_t size)
{
    static char path[PATH_MAX];
    struct output o;
    const char *why = NULL;

    if (path_done) {
        snprintf(path, sizeof path, "%s", path_done);
    } else if (kt.cfg.output || rank_default()) {
        const char *tmpl = kt.cfg.output ? kt.cfg.output : rank_default();
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
