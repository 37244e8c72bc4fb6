/* conditions.c - the run's conditions, folded reading by reading, and their report lines. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "conditions.h"

#include <stdlib.h>
#include <string.h>

#include "jsonout.h"
#include "report.h"

const char *const cond_reason_names[COND_NREASONS] = {
    "gpu_idle", "app_clocks", "sw_power_cap", "hw_slowdown", "sync_boost",
    "sw_thermal", "hw_thermal", "hw_power_brake", "display_clocks",
};

/* The reasons that slow a kernel down (not idle, an applications-clocks setting the user made,
 * or a display clock). */
#define COND_SLOW_MASK                                                                   \
    (COND_POWER_MASK | COND_THERMAL_MASK | (1u << COND_R_HW_SLOWDOWN) |                 \
     (1u << COND_R_SYNC_BOOST))

void cond_init(struct conditions *c)
{
    memset(c, 0, sizeof *c);
    c->mps = -1;
}

struct cond_device *cond_device(struct conditions *c, int ordinal)
{
    struct cond_device *d;

    for (int i = 0; i < c->ndev; i++)
        if (c->dev[i].ordinal == ordinal)
            return &c->dev[i];
    if (c->ndev >= COND_MAX_DEVICES)
        return NULL;
    d = &c->dev[c->ndev++];
    memset(d, 0, sizeof *d);
    d->ordinal = ordinal;
    d->others_at_start = d->others_at_end = d->others_max = -1;
    d->app_sm_mhz = d->default_app_sm_mhz = -1;
    d->persistence = d->compute_mode = -1;
    return d;
}

const struct cond_device *cond_find(const struct conditions *c, int ordinal)
{
    for (int i = 0; c && i < c->ndev; i++)
        if (c->dev[i].ordinal == ordinal)
            return &c->dev[i];
    return NULL;
}

static void minmax_u(unsigned v, unsigned n, unsigned *lo, unsigned *hi)
{
    if (n == 0 || v < *lo)
        *lo = v;
    if (n == 0 || v > *hi)
        *hi = v;
}

static void add_others(struct cond_device *d, const struct cond_sample *s, bool first, bool end)
{
    int kept = s->nothers < COND_MAX_OTHERS ? s->nothers : COND_MAX_OTHERS;

    /* Our pid missing from a list whose pids do not resolve here: NVML gave the pids of
     * another pid namespace (a container's host), one of them ours. */
    if (s->nprocs > 0 && !s->self_listed)
        for (int i = 0; i < kept; i++)
            if (!s->others[i].name[0])
                d->pid_mismatch = true;
    if (first)
        d->others_at_start = s->nothers;
    if (end)
        d->others_at_end = s->nothers;
    if (d->others_max < s->nothers)
        d->others_max = s->nothers;
    if (s->nothers > kept)
        d->others_truncated = true;
    for (int i = 0; i < kept; i++) {
        struct cond_proc *p = NULL;
        for (int j = 0; j < d->nothers && !p; j++)
            if (d->others[j].pid == s->others[i].pid)
                p = &d->others[j];
        if (!p) {
            if (d->nothers >= COND_MAX_OTHERS) {
                d->others_truncated = true;
                continue;
            }
            p = &d->others[d->nothers++];
            memset(p, 0, sizeof *p);
            p->pid = s->others[i].pid;
            p->at_start = first;
        }
        if (!p->name[0])
            memcpy(p->name, s->others[i].name, sizeof p->name);
        p->name[sizeof p->name - 1] = '\0';
        p->samples++;
        p->at_end = p->at_end || end;
    }
}

void cond_add_sample(struct cond_device *d, const struct cond_sample *s, bool end)
{
    if (d->samples == 0)
        d->first_t = s->t;
    d->last_t = s->t;
    d->samples++;
    if (s->procs_ok) {
        add_others(d, s, d->proc_samples == 0, end);
        d->proc_samples++;
    }
    if (s->sm_ok)
        minmax_u(s->sm_mhz, d->sm_samples++, &d->sm_min, &d->sm_max);
    if (s->mem_ok)
        minmax_u(s->mem_mhz, d->mem_samples++, &d->mem_min, &d->mem_max);
    if (s->temp_ok) {
        if (d->temp_samples == 0 || s->temp_c < d->temp_min)
            d->temp_min = s->temp_c;
        if (d->temp_samples == 0 || s->temp_c > d->temp_max)
            d->temp_max = s->temp_c;
        d->temp_samples++;
    }
    if (s->reasons_ok) {
        double dt = d->have_prev_reasons && s->t > d->prev_reasons_t ? s->t - d->prev_reasons_t : 0;
        d->reasons_seen |= s->reasons;
        for (int i = 0; i < COND_NREASONS; i++)
            if (s->reasons & (1ull << i))
                d->reason_s[i] += dt;
        if (s->reasons & COND_POWER_MASK)
            d->power_s += dt;
        if (s->reasons & COND_THERMAL_MASK)
            d->thermal_s += dt;
        d->have_prev_reasons = true;
        d->prev_reasons_t = s->t;
        d->reason_samples++;
    }
}

/* ---- text ---- */

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
            for (int i = 0; i < d->nothers && i < 3; i++, sep = ", ")
                fprintf(f, "%s%s pid %ld", sep, d->others[i].name[0] ? d->others[i].name : "?",
                        d->others[i].pid);
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
                fprintf(f, "%s%s ", sep, cond_reason_names[i]);
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

void cond_write_text(FILE *f, const struct conditions *c, const int *ordinals, int n)
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

/* ---- JSON ---- */

static void json_str_or_null(FILE *f, const char *s)
{
    if (s && *s)
        json_string(f, s);
    else
        fputs("null", f);
}

/* ", \"key\": v", or null when the figure could not be read (!ok). */
static void json_long_or_null(FILE *f, const char *key, bool ok, long v)
{
    fprintf(f, ", \"%s\": ", key);
    if (ok)
        fprintf(f, "%ld", v);
    else
        fputs("null", f);
}


static void json_secs(FILE *f, const char *sep, const char *key, double v)
{
    fprintf(f, "%s\"%s\": %.3f", sep, key, v);
}

static void json_device(FILE *f, const struct conditions *c, int ordinal)
{
    const struct cond_device *d = cond_find(c, ordinal);
    bool ok = d && d->mapped && d->samples;
    char why[160];
    int locked;

    fprintf(f, "\n      { \"ordinal\": %d, \"checked\": %s, \"reason\": ", ordinal,
            ok ? "true" : "false");
    json_str_or_null(f, ok ? NULL : d && d->why[0] ? d->why : "no NVML device found for it");
    fputs(", \"pci_bus_id\": ", f);
    json_str_or_null(f, d ? d->pci_bus_id : NULL);
    if (!ok) {
        fputs(" }", f);
        return;
    }
    fprintf(f, ", \"samples\": %u, \"duration_s\": %.3f", d->samples, d->last_t - d->first_t);

    fputs(",\n        \"other_processes\": ", f);
    if (!d->proc_samples || d->pid_mismatch) {
        fputs("null", f);
    } else {
        fputc('[', f);
        for (int i = 0; i < d->nothers; i++) {
            fprintf(f, "%s{ \"pid\": %ld, \"name\": ", i ? ", " : "", d->others[i].pid);
            json_str_or_null(f, d->others[i].name);
            fprintf(f, ", \"at_start\": %s, \"at_end\": %s, \"samples\": %u }",
                    d->others[i].at_start ? "true" : "false",
                    d->others[i].at_end ? "true" : "false", d->others[i].samples);
        }
        fputc(']', f);
    }
    json_long_or_null(f, "other_process_count", d->proc_samples > 0, others_count(d));
    json_long_or_null(f, "other_processes_at_start", d->proc_samples > 0,
                   d->others_at_start - (d->pid_mismatch && d->others_at_start > 0));
    json_long_or_null(f, "other_processes_at_end", d->others_at_end >= 0,
                   d->others_at_end - (d->pid_mismatch && d->others_at_end > 0));
    fprintf(f, ", \"other_processes_truncated\": %s, \"pids_of_another_namespace\": %s",
            d->others_truncated ? "true" : "false", d->pid_mismatch ? "true" : "false");

    locked = locked_state(d, why, sizeof why);
    fputs(",\n        \"clocks\": { \"locked\": ", f);
    fputs(locked > 0 ? "true" : locked == 0 ? "false" : "null", f);
    fputs(", \"locked_evidence\": ", f);
    json_str_or_null(f, why);
    json_long_or_null(f, "application_sm_mhz", d->app_sm_mhz > 0, d->app_sm_mhz);
    json_long_or_null(f, "default_application_sm_mhz", d->default_app_sm_mhz > 0,
                   d->default_app_sm_mhz);
    json_long_or_null(f, "sm_min_mhz", d->sm_samples, d->sm_min);
    json_long_or_null(f, "sm_max_mhz", d->sm_samples, d->sm_max);
    json_long_or_null(f, "mem_min_mhz", d->mem_samples, d->mem_min);
    json_long_or_null(f, "mem_max_mhz", d->mem_samples, d->mem_max);
    fputs(" },\n        \"throttle\": ", f);
    if (!d->reason_samples) {
        fputs("null", f);
    } else {
        fputs("{ ", f);
        json_secs(f, "", "power_s", d->power_s);
        json_secs(f, ", ", "thermal_s", d->thermal_s);
        for (int i = 0; i < COND_NREASONS; i++) {
            char key[48];
            snprintf(key, sizeof key, "%s_s", cond_reason_names[i]);
            json_secs(f, ", ", key, d->reason_s[i]);
        }
        fputs(", \"reasons_seen\": [", f);
        const char *sep = "";
        for (int i = 0; i < COND_NREASONS; i++)
            if (d->reasons_seen & (1ull << i))
                fprintf(f, "%s\"%s\"", sep, cond_reason_names[i]), sep = ", ";
        fprintf(f, "], \"readings\": %u }", d->reason_samples);
    }
    fputs(",\n        \"temperature\": ", f);
    if (d->temp_samples)
        fprintf(f, "{ \"min_c\": %d, \"max_c\": %d }", d->temp_min, d->temp_max);
    else
        fputs("null", f);
    fprintf(f, ", \"persistence_mode\": %s",
            d->persistence < 0 ? "null" : d->persistence ? "true" : "false");
    {
        static const char *const modes[] = { "default", "exclusive_thread", "prohibited",
                                             "exclusive_process" };
        fputs(", \"compute_mode\": ", f);
        if (d->compute_mode >= 0 && d->compute_mode < 4)
            fprintf(f, "\"%s\"", modes[d->compute_mode]);
        else
            fputs("null", f);
    }
    fputs(" }", f);
}

/* The warnings, as the text gives them, one string each. */
static void json_warnings(FILE *f, const struct conditions *c, const int *ordinals, int n,
                          int count)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    const char *sep = "";

    fputs(", \"warnings\": [", f);
    if (m) {
        if (c->mps > 0)
            fprintf(m, "warning: this process ran under MPS (%s): its kernels share the GPU "
                       "with the other MPS clients'\n", c->mps_evidence);
        for (int i = 0; i < count; i++)
            device_warnings(m, cond_find(c, pick(c, ordinals, n, i)));
        fclose(m);
        for (char *line = buf, *nl; line && *line; line = nl + 1) {
            nl = strchr(line, '\n');
            if (!nl)
                break;
            *nl = '\0';
            fputs(sep, f);
            json_string(f, line + strlen("warning: "));
            sep = ", ";
        }
        free(buf);
    }
    fputc(']', f);
}

/* ", \"text\": [...]": the text report's conditions lines, as written there (for tools that
 * render the report again from its JSON). */
static void json_text_lines(FILE *f, const struct conditions *c, const int *ordinals, int n)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&buf, &len);
    const char *sep = "";

    fputs(", \"text\": [", f);
    if (m) {
        cond_write_text(m, c, ordinals, n);
        if (fclose(m) == 0 && buf) {
            for (char *line = buf, *nl; *line; line = nl + 1) {
                if (!(nl = strchr(line, '\n')))
                    break;
                *nl = '\0';
                fputs(sep, f);
                json_string(f, line);
                sep = ", ";
            }
        }
        free(buf);
    }
    fputs("]", f);
}

void cond_write_json(FILE *f, const struct conditions *c, const int *ordinals, int n)
{
    int count;

    fputs("\"conditions\": { \"checked\": ", f);
    if (!c || !c->checked) {
        fputs("false, \"reason\": ", f);
        json_string(f, c && c->reason[0] ? c->reason : "no NVML");
        json_text_lines(f, c, ordinals, n);
        fputs(", \"devices\": [] }", f);
        return;
    }
    count = n > 0 ? n : c->ndev;
    fputs("true, \"reason\": null", f);
    json_text_lines(f, c, ordinals, n);
    fputs(", \"library\": ", f);
    json_str_or_null(f, c->library);
    fprintf(f, ", \"interval_ms\": %ld,\n    \"mps\": { \"checked\": %s, \"active\": ",
            c->interval_ms, c->mps >= 0 ? "true" : "false");
    fputs(c->mps < 0 ? "null" : c->mps ? "true" : "false", f);
    fputs(", \"evidence\": ", f);
    json_str_or_null(f, c->mps > 0 ? c->mps_evidence : NULL);
    fputs(" }", f);
    json_warnings(f, c, ordinals, n, count);
    fputs(",\n    \"devices\": [", f);
    for (int i = 0; i < count; i++) {
        fputs(i ? "," : "", f);
        json_device(f, c, pick(c, ordinals, n, i));
    }
    fputs(count ? "\n    ] }" : "] }", f);
}
