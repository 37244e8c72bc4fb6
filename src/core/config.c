/* config.c - parse KTIME_* environment variables into struct config, as settings.def
 * declares them; the settings' words, their origins, and the table of known names. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "config.h"

#include <errno.h>
#include <stdint.h>
#include <limits.h>
#include <stdio.h>
#include <regex.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"

/* An enum setting's field is read and written as an int. */
#define SETTING_ENUM(ID, field, type, ...)                                                   \
    _Static_assert(sizeof(enum type) == sizeof(int), "KTIME_" #ID "'s enum is not int-sized");
#include "settings.def"

const struct setting config_settings[CONFIG_NSETTINGS] = {
#define SETTING_BOOL(ID, field, def_, doc_, key)                                             \
    [SETTING_##ID] = { .name = "KTIME_" #ID, .type = SETTING_TYPE_BOOL,                        \
                       .offset = offsetof(struct config, field), .meta = "0|1", .def = (def_), \
                       .doc = (doc_), .report_key = (key) },
#define SETTING_LONG(ID, field, meta_, def_, lo_, hi_, doc_, key)                            \
    [SETTING_##ID] = { .name = "KTIME_" #ID, .type = SETTING_TYPE_LONG,                        \
                       .offset = offsetof(struct config, field), .meta = (meta_),             \
                       .def = (def_), .lo = (lo_), .hi = (hi_), .doc = (doc_),                \
                       .report_key = (key) },
#define SETTING_ENUM(ID, field, etype, meta_, def_, doc_, key)                                \
    [SETTING_##ID] = { .name = "KTIME_" #ID, .type = SETTING_TYPE_ENUM,                        \
                       .offset = offsetof(struct config, field), .meta = (meta_),             \
                       .def = (def_), .doc = (doc_), .report_key = (key) },
#define SETTING_PATH(ID, field, meta_, unset_, doc_, key)                                    \
    [SETTING_##ID] = { .name = "KTIME_" #ID, .type = SETTING_TYPE_PATH,                        \
                       .offset = offsetof(struct config, field), .meta = (meta_),             \
                       .unset = (unset_), .doc = (doc_), .report_key = (key) },
#define SETTING_BOOL_WORDS(ID, yes_, no_)                                                    \
    [SETTING_##ID].bool_words = true, [SETTING_##ID].yes = (yes_), [SETTING_##ID].no = (no_),
#define SETTING_PARAM(ID, field, meta_, noun)                                                \
    [SETTING_##ID].param_offset = offsetof(struct config, field),                            \
    [SETTING_##ID].param_meta = (meta_), [SETTING_##ID].param_noun = (noun),
#define SETTING_LAUNCHER_DEFAULT(ID, value) [SETTING_##ID].launcher_default = (value),
#define SETTING_OLD_NAME(ID, old) [SETTING_##ID].old_name = (old),
#include "settings.def"
};

const struct setting_word config_words[] = {
#define SETTING_WORD(ID, value, word) { SETTING_##ID, (value), (word) },
#include "settings.def"
};
const size_t config_nwords = sizeof config_words / sizeof config_words[0];

const char *const config_known_names[] = {
    /* read by libktime: settings.def */
#define SETTING_BOOL(ID, ...) "KTIME_" #ID,
#define SETTING_LONG(ID, ...) "KTIME_" #ID,
#define SETTING_ENUM(ID, ...) "KTIME_" #ID,
#define SETTING_PATH(ID, ...) "KTIME_" #ID,
#define SETTING_OLD_NAME(ID, old) old,
#include "settings.def"
    /* read by the launcher (tools/ktime), and by libktime from it: which variables the
     * launcher set (config_load) */
    "KTIME_LIBRARY", "KTIME_TOOL", "KTIME_RENDER", "KTIME_PYTHON", "KTIME_LAUNCHER_SET",
    /* read by the tests and benchmarks */
    "KTIME_LIB", "KTIME_SO", "KTIME_TEST_WARMUP",
    NULL
};

const char *config_word(enum setting_id id, int value)
{
    for (size_t i = 0; i < config_nwords; i++)
        if (config_words[i].id == id && config_words[i].value == value)
            return config_words[i].word;
    return NULL;
}

bool config_word_value(enum setting_id id, const char *word, int *value)
{
    for (size_t i = 0; i < config_nwords; i++)
        if (config_words[i].id == id && strcasecmp(config_words[i].word, word) == 0) {
            *value = config_words[i].value;
            return true;
        }
    return false;
}

#define SETTING_ENUM(ID, field, type, ...)                                                   \
    const char *type##_name(enum type value)                                                 \
    {                                                                                        \
        const char *w = config_word(SETTING_##ID, (int)value);                               \
        return w ? w : "?";                                                                  \
    }
#include "settings.def"

const struct setting *config_find(const char *name, size_t n)
{
    for (int i = 0; i < CONFIG_NSETTINGS; i++)
        if (strlen(config_settings[i].name) == n && memcmp(config_settings[i].name, name, n) == 0)
            return &config_settings[i];
    return NULL;
}

static int get_int(const struct config *c, size_t offset)
{
    int v;
    memcpy(&v, (const char *)c + offset, sizeof v);
    return v;
}

static void set_int(struct config *c, size_t offset, int v)
{
    memcpy((char *)c + offset, &v, sizeof v);
}

/* Whether word, one of setting st's, takes a parameter after it (KTIME_CAPTURE's "nvtx:"). */
static bool takes_param(const struct setting *st, const char *word)
{
    size_t n = strlen(word);
    return st->param_meta && n && word[n - 1] == ':';
}

#define FIELD(c, type, offset) ((type *)(void *)((char *)(c) + (offset)))
#define CFIELD(c, type, offset) ((const type *)(const void *)((const char *)(c) + (offset)))

static bool has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcasecmp(s + n - m, suffix) == 0;
}

static enum report_format format_of_name(const char *s)
{
    return has_suffix(s, ".json") ? FORMAT_JSON : has_suffix(s, ".csv") ? FORMAT_CSV : FORMAT_TEXT;
}

const char *config_value(const struct config *c, enum setting_id id, char *buf, size_t n)
{
    const struct setting *st = &config_settings[id];
    const char *word, *param;

    switch (st->type) {
    case SETTING_TYPE_BOOL:
        snprintf(buf, n, "%d", *CFIELD(c, bool, st->offset) ? 1 : 0);
        break;
    case SETTING_TYPE_LONG:
        snprintf(buf, n, "%ld", *CFIELD(c, long, st->offset));
        break;
    case SETTING_TYPE_ENUM:
        word = config_word(id, get_int(c, st->offset));
        param = word && takes_param(st, word) ? *CFIELD(c, const char *, st->param_offset) : NULL;
        snprintf(buf, n, "%s%s", word ? word : "?", param ? param : "");
        break;
    case SETTING_TYPE_PATH:
        param = *CFIELD(c, const char *, st->offset);
        snprintf(buf, n, "%s", param ? param : "");
        break;
    }
    return buf;
}

/* What a value of origin o is called. */
static const char *origin_name(int o, enum setting_id id)
{
    switch (o) {
    case ORIGIN_ENV:
        return "environment";
    case ORIGIN_OPTION:
        return "launcher option";
    case ORIGIN_LAUNCHER:
        return "launcher default";
    case ORIGIN_DERIVED:
        return id == SETTING_FORMAT ? "KTIME_OUTPUT's suffix" : "another setting";
    default:
        return "default";
    }
}

const char *config_origin_text(const struct config *c, enum setting_id id, char *buf, size_t n)
{
    const struct setting *st = &config_settings[id];
    int kept = CONFIG_ORIGIN(c, id), refused = CONFIG_REFUSED(c, id);
    int k;

    if (kept == ORIGIN_DEFAULT && st->type == SETTING_TYPE_PATH)
        k = snprintf(buf, n, "default: %s", st->unset);
    else if (kept == ORIGIN_OLD_NAME)
        k = snprintf(buf, n, "%s, the earlier name of %s", st->old_name, st->name);
    else
        k = snprintf(buf, n, "%s", origin_name(kept, id));
    if (refused == ORIGIN_OLD_NAME && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, "; %s's value was refused", st->old_name);
    else if (refused != ORIGIN_DEFAULT && k >= 0 && (size_t)k < n)
        snprintf(buf + k, n - (size_t)k, "; the %s's value was refused", origin_name(refused, id));
    return buf;
}

void config_describe(const struct config *c, void (*put)(void *arg, const char *line), void *arg)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        char value[512], origin[160], line[800];
        int k = snprintf(line, sizeof line, "%s=%s", config_settings[id].name,
                         config_value(c, id, value, sizeof value));
        snprintf(line + k, sizeof line - (size_t)k, "%*s(%s)", k < 31 ? 32 - k : 1, "",
                 config_origin_text(c, id, origin, sizeof origin));
        put(arg, line);
    }
}

static void dump_line(void *arg, const char *line)
{
    bool loud = *(const bool *)arg;

    if (loud)
        log_msg(LOG_NOTICE, "%s", line);
    else
        log_info("%s", line);
}

void config_dump(const struct config *c, bool loud)
{
    config_describe(c, dump_line, &loud);
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

/* An enum setting's words for a message, into buf: "events, cupti, both"; a word taking a
 * parameter as "nvtx:NAME"; with the boolean words, "auto, 1/0, yes/no, true/false, on/off". */
static const char *word_list(const struct setting *st, enum setting_id id, char *buf, size_t n)
{
    size_t k = 0;
    bool dummy;

    buf[0] = '\0';
    for (size_t i = 0; i < config_nwords && k < n; i++) {
        const struct setting_word *w = &config_words[i];
        if (w->id != id || (st->bool_words && parse_bool_value(w->word, &dummy)))
            continue;
        k += (size_t)snprintf(buf + k, n - k, "%s%s%s", k ? ", " : "", w->word,
                              takes_param(st, w->word) ? st->param_meta : "");
    }
    if (st->bool_words && k < n)
        snprintf(buf + k, n - k, "%s1/0, yes/no, true/false, on/off", k ? ", " : "");
    return buf;
}

/* The origin of a value the environment gives for name: the launcher's option or default
 * where KTIME_LAUNCHER_SET (words option:NAME, default:NAME) says so. */
static int origin_in_env(const char *marker, const char *name)
{
    size_t n = strlen(name);

    for (const char *p = marker; p && *p;) {
        size_t w;
        p += strspn(p, " ");
        w = strcspn(p, " ");
        if (w == 7 + n && strncmp(p, "option:", 7) == 0 && strncmp(p + 7, name, n) == 0)
            return ORIGIN_OPTION;
        if (w == 8 + n && strncmp(p, "default:", 8) == 0 && strncmp(p + 8, name, n) == 0)
            return ORIGIN_LAUNCHER;
        p += w;
    }
    return ORIGIN_ENV;
}

static void set_origin(struct config *c, enum setting_id id, int kept, int refused)
{
    c->origin[id] = (unsigned char)(kept | refused << 4);
}

/* Parses s, the environment's value of setting id under name (its own or its earlier one)
 * whose origin would be from, into c; on a bad value warns once, naming name, and keeps what
 * c holds. */
static void parse_value(struct config *c, enum setting_id id, const char *name, const char *s,
                        int from)
{
    const struct setting *st = &config_settings[id];
    char now[512], words[256];
    char *end;
    long v;
    bool b;

    switch (st->type) {
    case SETTING_TYPE_BOOL:
        if (parse_bool_value(s, &b)) {
            *FIELD(c, bool, st->offset) = b;
            set_origin(c, id, from, 0);
            return;
        }
        log_warn("%s='%s' is not one of 1/0, yes/no, true/false, on/off; using %s", name, s,
                 config_value(c, id, now, sizeof now));
        break;
    case SETTING_TYPE_LONG:
        errno = 0;
        v = strtol(s, &end, 10);
        if (*s != '\0' && end != s && *end == '\0' && errno != ERANGE && v >= st->lo &&
            v <= st->hi) {
            *FIELD(c, long, st->offset) = v;
            set_origin(c, id, from, 0);
            return;
        }
        log_warn("%s='%s' is not an integer from %ld to %ld; using %s", name, s, st->lo,
                 st->hi, config_value(c, id, now, sizeof now));
        break;
    case SETTING_TYPE_ENUM:
        for (size_t i = 0; i < config_nwords; i++) {
            const struct setting_word *w = &config_words[i];
            size_t len = strlen(w->word);
            if (w->id != id)
                continue;
            if (takes_param(st, w->word)) {
                char *param;
                if (strncasecmp(s, w->word, len) != 0)
                    continue;
                if (!s[len]) {
                    log_warn("%s='%s' names no %s (%s%s); using %s", name, s, st->param_noun,
                             w->word, st->param_meta, config_value(c, id, now, sizeof now));
                    set_origin(c, id, CONFIG_ORIGIN(c, id), from);
                    return;
                }
                if (!(param = strdup(s + len))) {
                    log_warn("%s='%s': out of memory; using %s", name, s,
                             config_value(c, id, now, sizeof now));
                    set_origin(c, id, CONFIG_ORIGIN(c, id), from);
                    return;
                }
                free((void *)*FIELD(c, const char *, st->param_offset));
                *FIELD(c, const char *, st->param_offset) = param;
            } else if (strcasecmp(s, w->word) != 0) {
                continue;
            }
            set_int(c, st->offset, w->value);
            set_origin(c, id, from, 0);
            return;
        }
        if (st->bool_words && parse_bool_value(s, &b)) {
            set_int(c, st->offset, b ? st->yes : st->no);
            set_origin(c, id, from, 0);
            return;
        }
        log_warn("%s='%s' is not one of %s; using %s", name, s,
                 word_list(st, id, words, sizeof words), config_value(c, id, now, sizeof now));
        break;
    case SETTING_TYPE_PATH:
        /* An empty name is no name: the setting stays unset (settle() may say so). */
        if (*s && (end = strdup(s))) {
            free((void *)*FIELD(c, const char *, st->offset));
            *FIELD(c, const char *, st->offset) = end;
            set_origin(c, id, from, 0);
        }
        return;
    }
    set_origin(c, id, CONFIG_ORIGIN(c, id), from);
}

/* What a setting's value means beyond itself, once it is read (s: the environment's value,
 * or NULL). Settings are read in settings.def's order: KTIME_OUTPUT before KTIME_FORMAT,
 * KTIME_TIMER before KTIME_CAPTURE. */
static void settle(struct config *c, enum setting_id id, const char *s)
{
    switch (id) {
    case SETTING_OUTPUT:
        /* "-" is standard output, as for the tools (ktime -o -): the file the program's
         * stdout names, written at its end, never replaced (output.c). */
        if (c->output && strcmp(c->output, "-") == 0) {
            char *out = strdup("/dev/stdout");
            if (out) {
                free((void *)c->output);
                c->output = out;
            }
        }
        /* Its suffix chooses the format, unless KTIME_FORMAT says otherwise. */
        if (c->output && has_suffix(c->output, ".json")) {
            c->format = FORMAT_JSON;
            set_origin(c, SETTING_FORMAT, ORIGIN_DERIVED, 0);
        } else if (c->output && has_suffix(c->output, ".csv")) {
            c->format = FORMAT_CSV;
            set_origin(c, SETTING_FORMAT, ORIGIN_DERIVED, 0);
        } else if (s && !*s) {
            log_warn("KTIME_OUTPUT is set but empty; the report goes to stderr");
        }
        break;
    case SETTING_ALSO_OUTPUT:
        /* A testing aid: the report of the same process in a second format
         * (tests/e2e/ktool.sh compares `ktime report` of the JSON with the library's own
         * text and CSV), the format its suffix names whatever KTIME_FORMAT says. */
        if (c->also_output)
            c->also_format = format_of_name(c->also_output);
        break;
    case SETTING_SAMPLE:
        /* CUPTI records every kernel anyway: the draw thins out event pairs only. */
        if (s && c->sample > 1 && c->timer == TIMER_CUPTI)
            log_warn("KTIME_SAMPLE=%s works with the events timer only; with KTIME_TIMER=cupti "
                     "every kernel is timed from CUPTI's records (it applies only to launches "
                     "timed with events after another CUPTI client takes CUPTI over)", s);
        break;
    case SETTING_BUDGET:
        /* The budget chooses each kernel's rate: a fixed one would fight it. */
        if (c->budget > 0 && c->sample > 1) {
            log_warn("KTIME_BUDGET=%ld chooses each kernel's sampling; KTIME_SAMPLE=%ld is "
                     "ignored", c->budget, c->sample);
            c->sample = 1;
            set_origin(c, SETTING_SAMPLE, ORIGIN_DEFAULT, CONFIG_ORIGIN(c, SETTING_SAMPLE));
        }
        break;
    case SETTING_BUSY:
        /* Under a budget CUPTI's records are on only part of the time: the GPUs' busy time
         * would have holes; off unless asked for (and its copy records cost too). */
        if (!s && c->budget > 0 && c->busy == BUSY_AUTO) {
            c->busy = BUSY_OFF;
            set_origin(c, id, ORIGIN_DERIVED, 0);
        }
        break;
    case SETTING_LAUNCH_TIMES:
        /* Under a budget CUPTI's launch records, which every launch call pays for, are left
         * off unless asked for (the events timer reads its clocks at timed launches only). */
        if (!s && c->budget > 0 && c->timer != TIMER_EVENTS) {
            c->launch_times = false;
            set_origin(c, id, ORIGIN_DERIVED, 0);
        }
        break;
    case SETTING_COMM:
        /* A pattern that does not compile is refused, as a bad word would be. */
        if (c->comm == COMM_MATCH && c->comm_pattern) {
            regex_t re;
            int rc = regcomp(&re, c->comm_pattern, REG_EXTENDED | REG_ICASE | REG_NOSUB);
            if (rc != 0) {
                char why[128];
                regerror(rc, &re, why, sizeof why);
                log_warn("KTIME_COMM='%s': not a regular expression (%s); using auto", s, why);
                c->comm = COMM_AUTO;
                free((char *)c->comm_pattern);
                c->comm_pattern = NULL;
                set_origin(c, id, ORIGIN_DEFAULT, CONFIG_ORIGIN(c, id));
            } else {
                regfree(&re);
            }
        }
        break;
    default:
        break;
    }
}

/* Reads setting id from the environment into c: under its name, else under its earlier
 * name (ignored, with a note, when both are set). */
static void load_one(struct config *c, enum setting_id id, const char *(*get)(const char *),
                     const char *marker)
{
    const struct setting *st = &config_settings[id];
    const char *s = get(st->name), *old = st->old_name ? get(st->old_name) : NULL;

    if (s && old)
        log_notice("%s and %s (its earlier name) are both set; %s=%s is used", st->name,
                   st->old_name, st->name, s);
    if (s)
        parse_value(c, id, st->name, s, origin_in_env(marker, st->name));
    else if (old)
        parse_value(c, id, st->old_name, old, ORIGIN_OLD_NAME);
    settle(c, id, s ? s : old);
}

void config_load(struct config *c, const char *(*get)(const char *))
{
    const char *marker = get("KTIME_LAUNCHER_SET");

    memset(c, 0, sizeof *c);
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        if (st->type == SETTING_TYPE_BOOL)
            *FIELD(c, bool, st->offset) = st->def != 0;
        else if (st->type == SETTING_TYPE_LONG)
            *FIELD(c, long, st->offset) = st->def;
        else if (st->type == SETTING_TYPE_ENUM)
            set_int(c, st->offset, (int)st->def);
    }

    /* KTIME_LOG first: it decides whether the other warnings are shown. */
    log_set_level(LOG_WARN);
    load_one(c, SETTING_LOG, get, marker);
    log_set_level(c->log_level);
    for (int id = 0; id < CONFIG_NSETTINGS; id++)
        if (id != SETTING_LOG)
            load_one(c, id, get, marker);
}

const char *config_comm_pattern(const struct config *c)
{
    switch (c->comm) {
    case COMM_OFF:
        return NULL;
    case COMM_MATCH:
        return c->comm_pattern ? c->comm_pattern : COMM_AUTO_PATTERN;
    default:
        return COMM_AUTO_PATTERN;
    }
}

void config_free(struct config *c)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        const char **p = NULL;
        if (st->type == SETTING_TYPE_PATH)
            p = FIELD(c, const char *, st->offset);
        else if (st->type == SETTING_TYPE_ENUM && st->param_meta)
            p = FIELD(c, const char *, st->param_offset);
        if (p) {
            free((void *)*p);
            *p = NULL;
        }
    }
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
    if (best_d == 0 || best_d > limit)
        return NULL;
    /* Near an earlier name: the name to use now. */
    for (int id = 0; id < CONFIG_NSETTINGS; id++)
        if (config_settings[id].old_name && strcmp(config_settings[id].old_name, best) == 0)
            return config_settings[id].name;
    return best;
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
            log_msg(level, "%.*s is not a ktime variable and is ignored (ktime --help "
                    "lists them)", (int)n, *e);
    }
}

