/* fuzz_config.c - config_load (src/core/config.c) against any environment.
 *
 * Input: lines NAME=VALUE (NAME with or without KTIME_); the first line of a name is its
 * value, as getenv would give one. Properties: every setting within its documented range,
 * a number that parses is taken and any other value leaves the default, the boolean and word
 * settings as documented, KTIME_OUTPUT copied whole, at most one warning per variable, the
 * environment's strings never written to. */
#include "fuzzutil.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "config.h"
#include "log.h"

#define NVARS 16
static const char *const names[NVARS] = {
    "KTIME_DISABLE", "KTIME_WARMUP", "KTIME_OUTPUT", "KTIME_FORMAT", "KTIME_LOG",
    "KTIME_POOL_CAP", "KTIME_EXIT_WAIT_MS", "KTIME_MAX_KERNELS", "KTIME_SIGNALS", "KTIME_GATE",
    "KTIME_TIMER", "KTIME_CUPTI_LIB", "KTIME_CUPTI_BUFFER_MB", "KTIME_SAMPLE",
    "KTIME_UNKNOWN", "PATH",
};

static char *value[NVARS], *copy[NVARS];

static const char *env(const char *name)
{
    for (int i = 0; i < NVARS; i++)
        if (strcmp(name, names[i]) == 0)
            return value[i];
    return NULL;
}

static int var(const char *name)
{
    for (int i = 0; i < NVARS; i++)
        if (strcmp(name, names[i]) == 0)
            return i;
    FUZZ_ASSERT(0, "no variable %s", name);
}

/* What a number setting must read: the value when strtoll takes all of it and it is in
 * [lo, hi], else the default. */
static long want_number(const char *name, long lo, long hi, long def)
{
    const char *s = value[var(name)];
    char *end;
    long long v;

    if (!s || !*s)
        return def;
    errno = 0;
    v = strtoll(s, &end, 10);
    return *end || errno || v < lo || v > hi ? def : (long)v;
}

/* 1 / 0 for a boolean word, -1 for anything else. */
static int boolean(const char *s)
{
    static const char *const t[] = { "1", "yes", "true", "on" }, *const f[] = { "0", "no", "false", "off" };

    for (int i = 0; i < 4; i++) {
        if (strcasecmp(s, t[i]) == 0)
            return 1;
        if (strcasecmp(s, f[i]) == 0)
            return 0;
    }
    return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1), *line, *save = NULL;
    struct config c;
    int set = 0;

    if (!text)
        abort();
    memcpy(text, data, size);
    text[size] = '\0';
    for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
        char *eq = strchr(line, '='), full[64];
        if (!eq)
            continue;
        *eq = '\0';
        snprintf(full, sizeof full, "%s%s", strncmp(line, "KTIME_", 6) && strcmp(line, "PATH") ? "KTIME_" : "", line);
        for (int i = 0; i < NVARS; i++)
            if (strcmp(full, names[i]) == 0 && !value[i]) {
                value[i] = strdup(eq + 1);
                copy[i] = strdup(eq + 1);
                set++;
            }
    }

    fuzz_log_reset();
    config_load(&c, env);

    for (int i = 0; i < NVARS; i++)
        FUZZ_ASSERT(!value[i] || strcmp(value[i], copy[i]) == 0, "%s was written to", names[i]);
    FUZZ_ASSERT(c.warmup == want_number("KTIME_WARMUP", 0, 1000000000L, CONFIG_DEFAULT_WARMUP),
                "warmup %ld", c.warmup);
    FUZZ_ASSERT(c.pool_cap == want_number("KTIME_POOL_CAP", 2, 1L << 22, CONFIG_DEFAULT_POOL_CAP),
                "pool_cap %ld", c.pool_cap);
    FUZZ_ASSERT(c.exit_wait_ms ==
                    want_number("KTIME_EXIT_WAIT_MS", 0, 600000, CONFIG_DEFAULT_EXIT_WAIT_MS),
                "exit_wait_ms %ld", c.exit_wait_ms);
    FUZZ_ASSERT(c.max_kernels ==
                    want_number("KTIME_MAX_KERNELS", 16, 1L << 24, CONFIG_DEFAULT_MAX_KERNELS),
                "max_kernels %ld", c.max_kernels);
    FUZZ_ASSERT(c.sample == want_number("KTIME_SAMPLE", 1, 1L << 30, 1), "sample %ld", c.sample);
    FUZZ_ASSERT(c.cupti_buffer_mb == want_number("KTIME_CUPTI_BUFFER_MB", 1, 4096,
                                                 CONFIG_DEFAULT_CUPTI_BUFFER_MB),
                "cupti_buffer_mb %ld", c.cupti_buffer_mb);

    const char *s = env("KTIME_DISABLE");
    FUZZ_ASSERT(c.disable == (s && boolean(s) == 1), "disable %d", c.disable);
    s = env("KTIME_SIGNALS");
    FUZZ_ASSERT(c.signals == !(s && boolean(s) == 0), "signals %d", c.signals);
    s = env("KTIME_GATE");
    FUZZ_ASSERT(c.gate == (!s || boolean(s) < 0 ? GATE_AUTO : boolean(s) ? GATE_ON : GATE_OFF),
                "gate %d for '%s'", (int)c.gate, s ? s : "(unset)");
    s = env("KTIME_TIMER");
    FUZZ_ASSERT(c.timer == (s && !strcasecmp(s, "cupti") ? TIMER_CUPTI
                            : s && !strcasecmp(s, "both") ? TIMER_BOTH : TIMER_EVENTS),
                "timer %d", (int)c.timer);
    s = env("KTIME_LOG");
    int level = LOG_WARN;
    if (s)
        for (int i = 0; i < 4; i++)
            if (!strcasecmp(s, (const char *[]){ "quiet", "warn", "info", "debug" }[i]))
                level = i;
    FUZZ_ASSERT((int)c.log_level == level && log_level == level, "log level %d", (int)c.log_level);

    s = env("KTIME_OUTPUT");
    FUZZ_ASSERT(s && *s ? c.output && strcmp(c.output, s) == 0 : !c.output, "output");
    s = env("KTIME_CUPTI_LIB");
    FUZZ_ASSERT(s && *s ? c.cupti_lib && strcmp(c.cupti_lib, s) == 0 : !c.cupti_lib, "cupti_lib");
    s = env("KTIME_FORMAT");
    size_t on = c.output ? strlen(c.output) : 0;
    enum report_format fmt = on >= 5 && !strcasecmp(c.output + on - 5, ".json") ? FORMAT_JSON
                             : on >= 4 && !strcasecmp(c.output + on - 4, ".csv") ? FORMAT_CSV
                                                                                 : FORMAT_TEXT;
    if (s && !strcasecmp(s, "json"))
        fmt = FORMAT_JSON;
    else if (s && !strcasecmp(s, "text"))
        fmt = FORMAT_TEXT;
    else if (s && !strcasecmp(s, "csv"))
        fmt = FORMAT_CSV;
    FUZZ_ASSERT(c.format == fmt, "format %d", (int)c.format);
    /* At most one warning per variable set (KTIME_LOG's own may come before quiet). */
    FUZZ_ASSERT(fuzz_log_count <= set, "%d warnings for %d variables; last: %s", fuzz_log_count,
                set, fuzz_log_last);
    FUZZ_ASSERT(fuzz_log_count == 0 || strstr(fuzz_log_last, "KTIME_"),
                "a warning that names no variable: %s", fuzz_log_last);

    free((void *)c.output);
    free((void *)c.cupti_lib);
    for (int i = 0; i < NVARS; i++) {
        free(value[i]);
        free(copy[i]);
        value[i] = copy[i] = NULL;
    }
    free(text);
    log_set_level(LOG_WARN);
    return 0;
}
