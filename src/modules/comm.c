/* comm.c - communication kernels and their overlap with compute (comm.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "comm.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "busy.h"
#include "intervals.h"
#include "log.h"
#include "module.h"
#include "state.h"

static regex_t re;
static bool on;
static const char *pattern;

/* Names seen, by pointer (the kernel table's and CUPTI's names stay where they are). */
struct seen {
    const char *name;
    int cls;
    UT_hash_handle hh;
};
static struct seen *cache;  /* the drain thread's */
static struct seen *last;

bool comm_init(void)
{
    pattern = config_comm_pattern(&kt.cfg);
    on = pattern && regcomp(&re, pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB) == 0;
    if (pattern && !on)
        log_warn("KTIME_COMM: '%s' does not compile; communication is not told apart", pattern);
    if (!on)
        pattern = NULL;
    return on;
}

int comm_classify(const char *mangled)
{
    struct seen *s;

    if (!on || !mangled)
        return IV_COMPUTE;
    if (last && last->name == mangled)
        return last->cls;
    HASH_FIND_PTR(cache, &mangled, s);
    if (!s) {
        int cls = regexec(&re, mangled, 0, NULL, 0) == 0 ? IV_COMM : IV_COMPUTE;
        if (!(s = calloc(1, sizeof *s)))
            return cls;
        s->name = mangled;
        s->cls = cls;
        HASH_ADD_PTR(cache, name, s);
    }
    last = s;
    return s->cls;
}

const char *comm_pattern(void)
{
    return pattern;
}

void comm_report(struct report_busy *busy)
{
    enum busy_method method;
    const struct iv_dev *d;

    if (!on || !busy)
        return;
    for (int i = 0; (d = busy_timeline(i, &method)); i++) {
        const char *word = method == BUSY_BY_CUPTI ? "cupti" : "events";
        for (size_t j = 0; j < busy->ndevs; j++) {
            struct report_busy_dev *o = &busy->devs[j];
            if (o->device != d->device || strcmp(o->method, word) != 0)
                continue;
            o->comm_kernels = d->comm.n;
            o->comm_ms = (double)d->comm.sum_ns / 1e6;
            o->comm_busy_ms = (double)iv_sweep_busy(&d->comm) / 1e6;
            o->compute_busy_ms = (double)iv_sweep_busy(&d->compute) / 1e6;
            o->overlap_ms = (double)iv_dev_overlap(d) / 1e6;
        }
    }
}

void comm_free(void)
{
    struct seen *s, *tmp;

    HASH_ITER(hh, cache, s, tmp) {
        HASH_DEL(cache, s);
        free(s);
    }
    last = NULL;
    if (on)
        regfree(&re);
    on = false;
    pattern = NULL;
}

/* On with the busy module (after it, in the registry), unless KTIME_COMM=off. */
static bool comm_start(void)
{
    comm_free();
    if (!busy_on() || !comm_init())
        return false;
    busy_classify_with(comm_classify);
    return true;
}

/* After the busy module's rows: its GPUs' communication figures, and the pattern. */
static int comm_rows(struct report *r, const struct module_rows *m)
{
    (void)m;
    comm_report(r->busy);
    r->comm_pattern = comm_pattern();
    return 0;
}

const struct ktime_module comm_module = {
    .name = "comm",
    .start = comm_start,
    .rows = comm_rows,
};
