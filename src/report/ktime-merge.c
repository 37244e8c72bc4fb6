/* ktime-merge.c - the reports of a job's ranks (or of several runs) merged into one report:
 * what `ktime merge` runs (tools/ktime_tool.py), the same code as the job report libktime
 * writes at the exit of rank 0 (merge.h).
 *
 *   ktime-merge [-o OUT] [--format json|text|csv] [--threads N] [--rank-rows N]
 *               [--world-size N] [--comm REGEX] FILE...
 *
 * Writes the merged report (JSON unless --format says otherwise) to OUT, or stdout. Reads the
 * reports with N threads ahead of the merge (default: the processors online, at most 8; 0:
 * none). --rank-rows: up to this many reports, each kernel keeps each report's part (default
 * 64). --world-size: the ranks the job has, for naming those without a report (default: the
 * reports' own world_size). --comm: the collectives' kernels, a POSIX extended regular
 * expression matched in any case against their names (default: nccl). Exit status 0, or 2 with one line on stderr, "ktime merge: ...";
 * each report skipped (an empty one) is said on a line of its own. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "merge.h"

#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *prog = "ktime merge";

static void note(void *ctx, const char *file, const char *msg)
{
    fprintf(stderr, "%s: %s: %s\n", prog, file, msg);
}

static int usage(const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", prog);
    fprintf(stderr, fmt, arg);
    fputc('\n', stderr);
    return 2;
}

/* A count of at most max from s into *out; false when s is not one. */
static bool count(const char *s, long max, long *out)
{
    char *end;
    long v;

    errno = 0;
    v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < 0 || v > max)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    const char *out = NULL, *format = "json";
    const char **files = calloc((size_t)argc, sizeof *files);
    struct merge_opts o = { .note = note };
    long cpus = sysconf(_SC_NPROCESSORS_ONLN), v;
    size_t n = 0;
    struct model m;
    char err[1600];
    int rc;

    o.threads = cpus < 1 ? 0 : cpus > 8 ? 8 : (int)cpus;
    /* Each report's tree and model are freed before the next is read: keep that memory for
     * the next one rather than give it back and fault it in again (a third of the time). */
    mallopt(M_TRIM_THRESHOLD, 256 << 20);
    mallopt(M_MMAP_THRESHOLD, 256 << 20);
    if (!files)
        return usage("%s", "out of memory");
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        bool opt = a[0] == '-' && a[1] && strcmp(a, "--") != 0 && strcmp(a, "-") != 0;
        if (strcmp(a, "--") == 0) {
            while (++i < argc)
                files[n++] = argv[i];
            break;
        }
        if (!opt) {
            files[n++] = a;
            continue;
        }
        if (i + 1 >= argc)
            return usage("%s needs a value", a);
        const char *val = argv[++i];
        if (strcmp(a, "-o") == 0 || strcmp(a, "--output") == 0)
            out = val;
        else if (strcmp(a, "--format") == 0)
            format = val;
        else if (strcmp(a, "--threads") == 0 && count(val, 64, &v))
            o.threads = (int)v;
        else if (strcmp(a, "--rank-rows") == 0 && count(val, 1L << 30, &v))
            o.rank_rows = (size_t)v ? (size_t)v : 1;
        else if (strcmp(a, "--world-size") == 0 && count(val, 1L << 24, &v))
            o.world_size = v;
        else if (strcmp(a, "--comm") == 0)
            o.comm = val;
        else if (strcmp(a, "--threads") == 0 || strcmp(a, "--rank-rows") == 0 ||
                 strcmp(a, "--world-size") == 0)
            return usage("%s: give a number", a);
        else
            return usage("unknown option %s", a);
    }
    if (strcmp(format, "json") && strcmp(format, "text") && strcmp(format, "csv"))
        return usage("--format %s: json, text or csv", format);
    if (!n)
        return usage("%s", "no report given");
    if (merge_files(files, n, &o, &m, err, sizeof err) != 0) {
        fprintf(stderr, "%s: %s\n", prog, err);
        free(files);
        return 2;
    }
    FILE *f = out && strcmp(out, "-") ? fopen(out, "wb") : stdout;
    if (!f) {
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, out, strerror(errno));
        model_free(&m);
        free(files);
        return 2;
    }
    rc = strcmp(format, "text") == 0 ? model_write_text(f, &m)
         : strcmp(format, "csv") == 0 ? model_write_csv(f, &m)
                                      : model_write_json(f, &m);
    if (f != stdout && fclose(f) != 0)
        rc = -1;
    if (rc != 0 && errno != EPIPE)
        fprintf(stderr, "%s: cannot write %s: %s\n", prog, out ? out : "the report",
                strerror(errno));
    model_free(&m);
    free(files);
    return rc == 0 || errno == EPIPE ? 0 : 2;
}
