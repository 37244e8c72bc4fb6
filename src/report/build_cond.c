/* build_cond.c - the report model's conditions section (the run's conditions, NVML) from
 * what the sampler folded (conditions.h): the text's lines, the warnings and every figure of
 * the JSON, for the report's devices. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "build.h"
#include "conditions.h"
#include "jsonout.h"
#include "names.h"

#include <stdlib.h>
#include <string.h>

_Static_assert((int)RM_NREASONS == (int)COND_NREASONS,
               "fields.h's RM_REASONS follows enum cond_reason");


static bool slowed(const struct cond_device *d)
{
    return d->reasons_seen & COND_SLOW_MASK;
}

static bool shared(const struct cond_device *d)
{
    return d->proc_samples && (d->nothers > 0 || d->others_max > 0);
}

/* "N other process(es)" over the run: the distinct pids seen, or, when the pids are of another
 * pid namespace, the most seen at once less our own entry. */
static int others_count(const struct cond_device *d)
{
    if (d->pid_mismatch)
        return d->others_max > 0 ? d->others_max - 1 : 0;
    return d->nothers > d->others_max ? d->nothers : d->others_max;
}

/* "locked at X MHz (...)", "not locked", or "not checked", with what says so. */
static int locked_state(const struct cond_device *d, char *why, size_t size)
{
    why[0] = '\0';
    if (d->app_sm_mhz > 0 && d->default_app_sm_mhz > 0 && d->app_sm_mhz != d->default_app_sm_mhz) {
        snprintf(why, size, "application clocks set to %d MHz (default %d MHz)", d->app_sm_mhz,
                 d->default_app_sm_mhz);
        return 1;
    }
    if (d->reasons_seen & (1u << COND_R_APP_CLOCKS)) {
        snprintf(why, size, "the clocks were held by an applications-clocks or locked-clocks "
                            "setting (clock event reason)");
        return 1;
    }
    if (d->reason_samples || d->app_sm_mhz > 0)
        return 0;
    return -1;
}

/* A throttle time: "3.2 s", "40 ms", or "seen" when one reading alone saw it. */
static void secs(FILE *f, double s)
{
    if (s >= 0.1)
        fprintf(f, "%.1f s", s);
    else if (s > 0)
        fprintf(f, "%.0f ms", s * 1000 < 1 ? 1.0 : s * 1000);
    else
        fputs("seen", f);
}

static void range(FILE *f, const char *what, unsigned lo, unsigned hi, const char *unit)
{
    if (lo == hi)
        fprintf(f, "%s %u %s", what, lo, unit);
    else
        fprintf(f, "%s %u-%u %s", what, lo, hi, unit);
}

static void device_line(FILE *f, const struct conditions *c, int ordinal)
{
    const struct cond_device *d = cond_find(c, ordinal);
    char why[160];
    int locked;

    fprintf(f, "conditions: gpu %d ", ordinal);
    if (!d || !d->mapped || d->samples == 0) {
        fprintf(f, "not checked (%s)\n",
                d && d->why[0] ? d->why : "no NVML device found for it");
        return;
    }
    if (!d->proc_samples) {
        fputs("other processes not checked", f);
    } else if (shared(d) && others_count(d) > 0) {
        int n = others_count(d);
        fprintf(f, "shared with %d other process%s", n, n == 1 ? "" : "es");
        if (d->pid_mismatch) {
            fputs(" (pids of another pid namespace)", f);
        } else {
            const char *sep = " (";
            /* A process's name is any bytes it gave itself (PR_SET_NAME): escaped as the
             * program's strings are, so that it cannot make a line of its own. */
            for (int i = 0; i < d->nothers && i < 3; i++, sep = ", ") {
                fputs(sep, f);
                report_put_escaped(f, d->others[i].name[0] ? d->others[i].name : "?");
                fprintf(f, " pid %ld", d->others[i].pid);
            }
            fputs(d->nothers > 3 ? ", ...)" : ")", f);
        }
    } else {
        fputs("idle apart from this process", f);
    }
    locked = locked_state(d, why, sizeof why);
    if (locked > 0 && d->app_sm_mhz > 0 && d->app_sm_mhz != d->default_app_sm_mhz)
        fprintf(f, "; clocks locked at %d MHz", d->app_sm_mhz);
    else if (locked > 0)
        fputs("; clocks locked", f);
    else if (locked == 0)
        fputs("; clocks not locked", f);
    else
        fputs("; clock locks not checked", f);
    if (d->sm_samples)
        range(f, ", SM clock", d->sm_min, d->sm_max, "MHz");
    if (d->mem_samples)
        range(f, ", memory clock", d->mem_min, d->mem_max, "MHz");
    if (!d->reason_samples) {
        fputs("; throttling not checked", f);
    } else if (!slowed(d)) {
        fputs("; no throttling", f);
    } else {
        static const struct { int bit; const char *words; } extra[] = {
            { COND_R_HW_SLOWDOWN, "hardware slowdown" }, { COND_R_SYNC_BOOST, "sync boost" },
        };
        const char *sep = "; ";
        if (d->reasons_seen & COND_POWER_MASK) {
            fprintf(f, "%spower throttling ", sep);
            secs(f, d->power_s);
            sep = ", ";
        }
        if (d->reasons_seen & COND_THERMAL_MASK) {
            fprintf(f, "%sthermal throttling ", sep);
            secs(f, d->thermal_s);
            sep = ", ";
        }
        for (size_t i = 0; i < sizeof extra / sizeof extra[0]; i++)
            if (d->reasons_seen & (1u << extra[i].bit)) {
                fprintf(f, "%s%s ", sep, extra[i].words);
                secs(f, d->reason_s[extra[i].bit]);
                sep = ", ";
            }
    }
    if (d->temp_samples) {
        fputs("; ", f);
        if (d->temp_min == d->temp_max)
            fprintf(f, "%d C", d->temp_min);
        else
            fprintf(f, "%d-%d C", d->temp_min, d->temp_max);
    }
    if (d->persistence == 0)
        fputs("; persistence mode off", f);
    fprintf(f, "; %u reading%s\n", d->samples, d->samples == 1 ? "" : "s");
}

static void device_warnings(FILE *f, const struct cond_device *d)
{
    if (!d || !d->mapped || !d->samples)
        return;
    if (shared(d) && others_count(d) > 0)
        fprintf(f, "warning: gpu %d was shared with %d other process%s during the run: its "
                   "kernels' times include waiting for their work\n", d->ordinal,
                others_count(d), others_count(d) == 1 ? "" : "es");
    if (slowed(d)) {
        fprintf(f, "warning: gpu %d's clocks were slowed (", d->ordinal);
        const char *sep = "";
        for (int i = 0; i < COND_NREASONS; i++)
            if (d->reasons_seen & COND_SLOW_MASK & (1u << i)) {
                fprintf(f, "%s%s ", sep, rm_reason_key[i]);
                secs(f, d->reason_s[i]);
                sep = ", ";
            }
        fputs("): kernels that ran then took longer than at full clock\n", f);
    }
    if (d->persistence == 0)
        fprintf(f, "warning: gpu %d has persistence mode off: the driver may tear down and "
                   "re-initialize it between runs (slow first launches; keep warmup on)\n",
                d->ordinal);
}

/* The ordinals to report: those given, or every device c has. */
static int pick(const struct conditions *c, const int *ordinals, int n, int i)
{
    return n > 0 ? ordinals[i] : c->dev[i].ordinal;
}

/* The text's lines: "conditions: ..." per device, then the warnings. */
static void cond_lines(FILE *f, const struct conditions *c, const int *ordinals, int n)
{
    int count;

    if (!c || !c->checked) {
        fprintf(f, "conditions: not checked (%s)\n",
                c && c->reason[0] ? c->reason : "no NVML");
        return;
    }
    count = n > 0 ? n : c->ndev;
    if (count == 0)
        fputs("conditions: no GPU to check\n", f);
    for (int i = 0; i < count; i++)
        device_line(f, c, pick(c, ordinals, n, i));
    if (c->mps > 0)
        fprintf(f, "warning: this process ran under MPS (%s): its kernels share the GPU with "
                   "the other MPS clients'\n", c->mps_evidence);
    for (int i = 0; i < count; i++)
        device_warnings(f, cond_find(c, pick(c, ordinals, n, i)));
}

/* s (NULL or "": NULL) in m's arena. */
static const char *str_or_null(struct model *m, const char *s)
{
    return s && *s ? model_strdup(m, s) : NULL;
}

/* buf's lines into *lines, made valid UTF-8 (a stray byte is U+FFFD, as in the JSON). */
static int split_lines(struct model *m, char *buf, const char ***lines, size_t *n)
{
    size_t cap = 0;

    for (char *p = buf; p && *p; p++)
        cap += *p == '\n';
    if (cap && !(*lines = model_alloc(m, cap * sizeof **lines)))
        return -1;
    for (char *line = buf, *nl; line && *line; line = nl + 1) {
        char *clean = NULL;
        size_t len = 0;
        FILE *f;
        if (!(nl = strchr(line, '\n')))
            break;
        *nl = '\0';
        if (!(f = open_memstream(&clean, &len)))
            return -1;
        utf8_write_valid(f, line);
        if (fclose(f) != 0) {
            free(clean);
            return -1;
        }
        (*lines)[(*n)++] = model_strdup(m, clean);
        free(clean);
    }
    return m->oom ? -1 : 0;
}

/* The warnings: the text's "warning: " lines, without those words. */
static int warnings(struct model *m, struct rm_cond *o)
{
    static const char prefix[] = "warning: ";

    if (o->ntext && !(o->warnings = model_alloc(m, o->ntext * sizeof *o->warnings)))
        return -1;
    for (size_t i = 0; i < o->ntext; i++)
        if (o->text[i] && strncmp(o->text[i], prefix, strlen(prefix)) == 0)
            o->warnings[o->nwarnings++] = o->text[i] + strlen(prefix);
    return 0;
}

/* The JSON's figures of the device of `ordinal`. */
static void cond_dev(struct model *m, struct rm_cond_dev *o, const struct conditions *c,
                     int ordinal)
{
    const struct cond_device *d = cond_find(c, ordinal);
    char why[160];

    o->ordinal = ordinal;
    o->checked = d && d->mapped && d->samples;
    o->reason = o->checked ? NULL
                           : model_strdup(m, d && d->why[0] ? d->why
                                                            : "no NVML device found for it");
    o->pci_bus_id = d ? str_or_null(m, d->pci_bus_id) : NULL;
    if (!o->checked)
        return;
    o->samples = d->samples;
    o->duration_s = d->last_t - d->first_t;
    o->others_listed = d->proc_samples && !d->pid_mismatch;
    if (o->others_listed && d->nothers &&
        (o->others = model_alloc(m, (size_t)d->nothers * sizeof *o->others)))
        for (int i = 0; i < d->nothers; i++, o->nothers++) {
            o->others[i].pid = d->others[i].pid;
            o->others[i].name = str_or_null(m, d->others[i].name);
            o->others[i].at_start = d->others[i].at_start;
            o->others[i].at_end = d->others[i].at_end;
            o->others[i].samples = d->others[i].samples;
        }
    o->other_count = d->proc_samples > 0 ? others_count(d) : RM_NULL;
    o->others_at_start = d->proc_samples > 0
                             ? d->others_at_start - (d->pid_mismatch && d->others_at_start > 0)
                             : RM_NULL;
    o->others_at_end = d->others_at_end >= 0
                           ? d->others_at_end - (d->pid_mismatch && d->others_at_end > 0)
                           : RM_NULL;
    o->others_truncated = d->others_truncated;
    o->pid_mismatch = d->pid_mismatch;
    o->locked = locked_state(d, why, sizeof why);
    o->locked_evidence = str_or_null(m, why);
    o->app_sm = d->app_sm_mhz > 0 ? d->app_sm_mhz : RM_NULL;
    o->default_app_sm = d->default_app_sm_mhz > 0 ? d->default_app_sm_mhz : RM_NULL;
    o->sm_min = d->sm_samples ? (int64_t)d->sm_min : RM_NULL;
    o->sm_max = d->sm_samples ? (int64_t)d->sm_max : RM_NULL;
    o->mem_min = d->mem_samples ? (int64_t)d->mem_min : RM_NULL;
    o->mem_max = d->mem_samples ? (int64_t)d->mem_max : RM_NULL;
    o->throttle = d->reason_samples > 0;
    o->power_s = d->power_s;
    o->thermal_s = d->thermal_s;
    for (int i = 0; i < RM_NREASONS; i++) {
        o->reason_s[i] = d->reason_s[i];
        if (d->reasons_seen & (1ull << i))
            o->reasons_seen |= 1u << i;
    }
    o->readings = d->reason_samples;
    o->temp = d->temp_samples > 0;
    o->temp_min = d->temp_min;
    o->temp_max = d->temp_max;
    o->persistence = d->persistence < 0 ? -1 : d->persistence != 0;
    static const char *const modes[] = { "default", "exclusive_thread", "prohibited",
                                         "exclusive_process" };
    o->compute_mode = d->compute_mode >= 0 && d->compute_mode < 4 ? modes[d->compute_mode] : NULL;
}

/* The section of c for the devices `ordinals` (n of them; 0: every device c has). */
static int cond_section(struct model *m, const struct conditions *c, const int *ordinals, int n)
{
    struct rm_cond *o = m->cond = model_alloc(m, sizeof *m->cond);
    char *buf = NULL;
    size_t len = 0;
    FILE *f;
    int rc = 0;

    if (!o || !(f = open_memstream(&buf, &len)))
        return -1;
    cond_lines(f, c, ordinals, n);
    if (fclose(f) != 0 || split_lines(m, buf, &o->text, &o->ntext) != 0 || warnings(m, o) != 0)
        rc = -1;
    free(buf);
    o->checked = c && c->checked;
    if (!o->checked) {
        o->reason = model_strdup(m, c && c->reason[0] ? c->reason : "no NVML");
        o->nwarnings = 0;
        return rc;
    }
    o->library = str_or_null(m, c->library);
    o->interval_ms = c->interval_ms;
    o->mps_checked = c->mps >= 0;
    o->mps_active = c->mps < 0 ? -1 : c->mps != 0;
    o->mps_evidence = c->mps > 0 ? str_or_null(m, c->mps_evidence) : NULL;
    int count = n > 0 ? n : c->ndev;
    if (count > 0 && !(o->devs = model_alloc(m, (size_t)count * sizeof *o->devs)))
        return -1;
    for (int i = 0; i < count; i++)
        cond_dev(m, &o->devs[o->ndevs++], c, pick(c, ordinals, n, i));
    return rc || m->oom ? -1 : 0;
}

int build_conditions(struct model *m, const struct report *r)
{
    int ordinals[64], n = 0;

    for (int d = 0; d < r->ndevices && n < 64; d++)
        ordinals[n++] = r->devices[d].ordinal;
    return cond_section(m, r->conditions, ordinals, n);
}

int model_cond_section(struct model *m, const struct conditions *c, const int *ordinals, int n)
{
    return cond_section(m, c, ordinals, n);
}
