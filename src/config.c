/* config.c - parse KTIME_* environment variables into struct config. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

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
        .sample = 1,
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
