/* config.c - parse KTIME_* environment variables into struct config. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

const char *const config_known_names[] = {
    /* read by libktime */
    "KTIME_DISABLE", "KTIME_WARMUP", "KTIME_OUTPUT", "KTIME_FORMAT", "KTIME_LOG",
    "KTIME_POOL_CAP", "KTIME_EXIT_WAIT_MS", "KTIME_MAX_KERNELS", "KTIME_SIGNALS", "KTIME_GATE",
    "KTIME_TIMER", "KTIME_SAMPLE", "KTIME_CUPTI_LIB", "KTIME_CUPTI_BUFFER_MB", "KTIME_RANGE",
    "KTIME_GROUP", "KTIME_TRACE", "KTIME_TRACE_MAX", "KTIME_DUMP_SAMPLES", "KTIME_NVML",
    "KTIME_NVML_LIB", "KTIME_NVML_INTERVAL_MS", "KTIME_ALSO_OUTPUT", "KTIME_FLUSH_L2",
    "KTIME_MEMOPS", "KTIME_NVTX", "KTIME_REGION",
    /* read by the launcher (tools/ktime) */
    "KTIME_LIBRARY", "KTIME_TOOL", "KTIME_RENDER",
    /* read by the tests and benchmarks */
    "KTIME_LIB", "KTIME_SO", "KTIME_TEST_WARMUP",
    NULL
};

/* Parses a decimal integer in [lo, hi]. On anything else (empty, junk, sign, overflow,
 * exponent) warns once and leaves *out at its default. */
static void parse_long(const char *(*get)(const char *), const char *name, long lo, long hi,
                       long *out)
{
    const char *s = get(name);
    char *end;
    long v;

    if (!s)
        return;
    errno = 0;
    v = strtol(s, &end, 10);
    if (*s == '\0' || end == s || *end != '\0' || errno == ERANGE || v < lo || v > hi) {
        log_warn("%s='%s' is not an integer from %ld to %ld; using %ld", name, s, lo, hi, *out);
        return;
    }
    *out = v;
}

/* Sets *out from a boolean word; false (and *out untouched) when s is none. */
static bool parse_bool_value(const char *s, bool *out)
{
    static const char *const yes[] = { "1", "yes", "true", "on" };
    static const char *const no[] = { "0", "no", "false", "off" };

    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++) {
        if (strcasecmp(s, yes[i]) == 0) {
            *out = true;
            return true;
        }
        if (strcasecmp(s, no[i]) == 0) {
            *out = false;
            return true;
        }
    }
    return false;
}

static void parse_bool(const char *(*get)(const char *), const char *name, bool *out)
{
    const char *s = get(name);

    if (!s || parse_bool_value(s, out))
        return;
    log_warn("%s='%s' is not one of 1/0, yes/no, true/false, on/off; using %d", name, s,
             *out ? 1 : 0);
}

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

bool config_is_known(const char *name, size_t n)
{
    for (const char *const *k = config_known_names; *k; k++)
        if (strlen(*k) == n && memcmp(*k, name, n) == 0)
            return true;
    return false;
}

/* Optimal string alignment distance between a[0..n) and b[0..m), both at most 63 bytes
 * (longer: 64, "far"). */
static size_t osa_distance(const char *a, size_t n, const char *b, size_t m)
{
    uint8_t d[64][64];

    if (n >= 64 || m >= 64)
        return 64;
    for (size_t i = 0; i <= n; i++)
        d[i][0] = (uint8_t)i;
    for (size_t j = 0; j <= m; j++)
        d[0][j] = (uint8_t)j;
    for (size_t i = 1; i <= n; i++)
        for (size_t j = 1; j <= m; j++) {
            size_t cost = a[i - 1] != b[j - 1];
            size_t v = d[i - 1][j] + 1;
            if ((size_t)d[i][j - 1] + 1 < v)
                v = d[i][j - 1] + 1;
            if (d[i - 1][j - 1] + cost < v)
                v = d[i - 1][j - 1] + cost;
            if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] &&
                (size_t)d[i - 2][j - 2] + 1 < v)
                v = d[i - 2][j - 2] + 1;
            d[i][j] = (uint8_t)v;
        }
    return d[n][m];
}

const char *config_closest(const char *name, size_t n)
{
    const char *best = NULL;
    size_t best_d = SIZE_MAX, tail = n > 6 ? n - 6 : 0;
    size_t limit = tail / 3 > 2 ? tail / 3 : 2;

    for (const char *const *k = config_known_names; *k; k++) {
        size_t d = osa_distance(name, n, *k, strlen(*k));
        if (d < best_d) {
            best_d = d;
            best = *k;
        }
    }
    return best_d > 0 && best_d <= limit ? best : NULL;
}

/* The length of the name of env entry e when it is a KTIME_* name ktime does not know, else 0. */
static size_t unknown_name(const char *e)
{
    const char *eq = strchr(e, '=');
    size_t n = eq ? (size_t)(eq - e) : strlen(e);

    if (n <= 6 || strncmp(e, "KTIME_", 6) != 0 || config_is_known(e, n))
        return 0;
    return n;
}

int config_count_unknown(char *const *envp)
{
    int count = 0;

    for (char *const *e = envp; e && *e; e++)
        count += unknown_name(*e) > 0;
    return count;
}

void config_warn_unknown(char *const *envp, bool loud)
{
    int level = loud ? LOG_WARN : LOG_INFO;

    if (log_level < level)
        return;
    for (char *const *e = envp; e && *e; e++) {
        size_t n = unknown_name(*e);
        const char *near;
        if (n == 0 || n > 200)
            continue;
        near = config_closest(*e, n);
        if (near)
            log_msg(level, "%.*s is not a ktime variable and is ignored; did you mean %s?",
                    (int)n, *e, near);
        else
            log_msg(level, "%.*s is not a ktime variable and is ignored (README.md lists "
                    "them)", (int)n, *e);
    }
}

void config_load(struct config *c, const char *(*get)(const char *))
{
    static const char *const levels[] = { "quiet", "warn", "info", "debug" };
    const char *s;

    *c = (struct config){
        .disable = false,
        .warmup = CONFIG_DEFAULT_WARMUP,
        .output = NULL,
        .format = FORMAT_TEXT,
        .log_level = LOG_WARN,
        .pool_cap = CONFIG_DEFAULT_POOL_CAP,
        .exit_wait_ms = CONFIG_DEFAULT_EXIT_WAIT_MS,
        .max_kernels = CONFIG_DEFAULT_MAX_KERNELS,
        .signals = true,
        .gate = GATE_AUTO,
        .timer = TIMER_EVENTS,
        .cupti_buffer_mb = CONFIG_DEFAULT_CUPTI_BUFFER_MB,
        .trace_max = CONFIG_DEFAULT_TRACE_MAX,
        .sample = 1,
        .nvml = true,
        .memops = true,
        .nvml_interval_ms = CONFIG_DEFAULT_NVML_INTERVAL_MS,
        .range = RANGE_ALL,
    };

    /* KTIME_LOG first: it decides whether the other warnings are shown. */
    s = get("KTIME_LOG");
    if (s) {
        size_t i;
        for (i = 0; i < sizeof levels / sizeof levels[0]; i++)
            if (strcasecmp(s, levels[i]) == 0)
                break;
        if (i < sizeof levels / sizeof levels[0]) {
            c->log_level = (int)i;
        } else {
            log_set_level(LOG_WARN);
            log_warn("KTIME_LOG='%s' is not one of quiet, warn, info, debug; using warn", s);
        }
    }
    log_set_level(c->log_level);

    parse_bool(get, "KTIME_DISABLE", &c->disable);
    parse_long(get, "KTIME_WARMUP", 0, 1000000000L, &c->warmup);
    parse_long(get, "KTIME_POOL_CAP", 2, 1L << 22, &c->pool_cap);
    parse_long(get, "KTIME_EXIT_WAIT_MS", 0, 600000, &c->exit_wait_ms);
    parse_long(get, "KTIME_MAX_KERNELS", 16, 1L << 24, &c->max_kernels);
    parse_bool(get, "KTIME_SIGNALS", &c->signals);
    s = get("KTIME_GATE");
    if (s) {
        bool on = c->gate != GATE_OFF;
        if (strcasecmp(s, "auto") == 0) {
            c->gate = GATE_AUTO;
        } else if (parse_bool_value(s, &on)) {
            c->gate = on ? GATE_ON : GATE_OFF;
        } else {
            log_warn("KTIME_GATE='%s' is not one of auto, 1/0, yes/no, true/false, on/off; "
                     "using auto", s);
            c->gate = GATE_AUTO;
        }
    }

    parse_long(get, "KTIME_SAMPLE", 1, 1L << 30, &c->sample);
    parse_long(get, "KTIME_CUPTI_BUFFER_MB", 1, 4096, &c->cupti_buffer_mb);
    s = get("KTIME_TIMER");
    if (s) {
        if (strcasecmp(s, "events") == 0)
            c->timer = TIMER_EVENTS;
        else if (strcasecmp(s, "cupti") == 0)
            c->timer = TIMER_CUPTI;
        else if (strcasecmp(s, "both") == 0)
            c->timer = TIMER_BOTH;
        else
            log_warn("KTIME_TIMER='%s' is not one of events, cupti, both; using events", s);
    }
    parse_bool(get, "KTIME_NVML", &c->nvml);
    parse_bool(get, "KTIME_FLUSH_L2", &c->flush_l2);
    parse_bool(get, "KTIME_MEMOPS", &c->memops);
    parse_bool(get, "KTIME_NVTX", &c->nvtx);
    s = get("KTIME_REGION");
    if (s) {
        if (strcasecmp(s, "outermost") == 0)
            c->region_outermost = true;
        else if (strcasecmp(s, "innermost") != 0)
            log_warn("KTIME_REGION='%s' is not innermost or outermost; using innermost", s);
    }
    parse_long(get, "KTIME_NVML_INTERVAL_MS", 10, 60000, &c->nvml_interval_ms);
    s = get("KTIME_NVML_LIB");
    if (s && *s)
        c->nvml_lib = strdup(s);
    s = get("KTIME_RANGE");
    if (s) {
        if (strcasecmp(s, "profiler-api") == 0)
            c->range = RANGE_PROFILER_API;
        else if (strncasecmp(s, "nvtx:", 5) == 0 && s[5] && (c->range_name = strdup(s + 5)))
            c->range = RANGE_NVTX;
        else if (strncasecmp(s, "nvtx:", 5) == 0)
            log_warn("KTIME_RANGE='%s' names no range (nvtx:NAME); using all (every launch "
                     "timed)", s);
        else if (strcasecmp(s, "all") != 0)
            log_warn("KTIME_RANGE='%s' is not profiler-api, nvtx:NAME or all; using all (every "
                     "launch timed)", s);
        if (c->range != RANGE_ALL && c->timer != TIMER_EVENTS) {
            log_warn("KTIME_RANGE=%s works with KTIME_TIMER=events only (CUPTI records every "
                     "kernel); with KTIME_TIMER=%s every launch is timed", s,
                     c->timer == TIMER_CUPTI ? "cupti" : "both");
            c->range = RANGE_ALL;
        }
    }
    s = get("KTIME_CUPTI_LIB");
    if (s && *s)
        c->cupti_lib = strdup(s);

    s = get("KTIME_OUTPUT");
    if (s && *s) {
        c->output = strdup(s);
        if (c->output && has_suffix(s, ".json"))
            c->format = FORMAT_JSON;
        else if (c->output && has_suffix(s, ".csv"))
            c->format = FORMAT_CSV;
    } else if (s) {
        log_warn("KTIME_OUTPUT is set but empty; the report goes to stderr");
    }

    s = get("KTIME_GROUP");
    if (s) {
        if (strcasecmp(s, "shape") == 0)
            c->group_shape = true;
        else if (strcasecmp(s, "name") != 0)
            log_warn("KTIME_GROUP='%s' is not name or shape; using name", s);
    }
    s = get("KTIME_TRACE");
    if (s && *s)
        c->trace = strdup(s);
    parse_long(get, "KTIME_TRACE_MAX", 0, 1L << 30, &c->trace_max);
    s = get("KTIME_DUMP_SAMPLES");
    if (s && *s)
        c->dump = strdup(s);
    /* A testing aid: the report of the same process in a second format (tests/e2e/ktool.sh
     * compares `ktime report` of the JSON with the library's own text and CSV). */
    s = get("KTIME_ALSO_OUTPUT");
    if (s && *s) {
        c->also_output = strdup(s);
        c->also_format = has_suffix(s, ".json")  ? FORMAT_JSON
                         : has_suffix(s, ".csv") ? FORMAT_CSV
                                                 : FORMAT_TEXT;
    }

    s = get("KTIME_FORMAT");
    if (s) {
        if (strcasecmp(s, "json") == 0)
            c->format = FORMAT_JSON;
        else if (strcasecmp(s, "text") == 0)
            c->format = FORMAT_TEXT;
        else if (strcasecmp(s, "csv") == 0)
            c->format = FORMAT_CSV;
        else
            log_warn("KTIME_FORMAT='%s' is not text, json or csv; using %s", s,
                     c->format == FORMAT_JSON  ? "json"
                     : c->format == FORMAT_CSV ? "csv"
                                               : "text");
    }
}
