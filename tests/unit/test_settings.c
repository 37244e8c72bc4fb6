/* test_settings.c - the settings table (src/core/settings.def) and the parsing made from it,
 * setting by setting: every type's values and bad values, every long's range ends, every
 * enum's words, a word with a parameter, paths, where each value came from, and the lines
 * of KTIME_DUMP_CONFIG. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

/* The environment the loads see: NAME, VALUE pairs. */
static const char *env_table[16];

static const char *fake_getenv(const char *name)
{
    for (const char *const *p = env_table; p[0]; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

static void set_env(const char *name, const char *value, const char *name2, const char *value2)
{
    memset(env_table, 0, sizeof env_table);
    env_table[0] = name;
    env_table[1] = value;
    if (name && name2) {
        env_table[2] = name2;
        env_table[3] = value2;
    }
}

/* Runs f(arg) with stderr captured into captured[]. */
static char captured[16384];
static void capture(void (*f)(void *), void *arg)
{
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t n;

    fflush(stderr);
    dup2(fileno(tmp), 2);
    f(arg);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(captured, 1, sizeof captured - 1, tmp);
    captured[n] = '\0';
    fclose(tmp);
}

static void do_load(void *arg)
{
    config_load(arg, fake_getenv);
}

/* Loads c from env_table, stderr captured; the level back at warn afterwards. */
static void load(struct config *c)
{
    capture(do_load, c);
    log_set_level(LOG_WARN);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static const char *value_of(const struct config *c, enum setting_id id)
{
    static char buf[512];
    return config_value(c, id, buf, sizeof buf);
}

static const char *origin_of(const struct config *c, enum setting_id id)
{
    static char buf[256];
    return config_origin_text(c, id, buf, sizeof buf);
}

/* Asserts one warning, naming the setting, and that s is in it. */
static void one_warning_with(const char *name, const char *s)
{
    if (count_lines(captured) != 1 || !strstr(captured, "ktime: warning: ") ||
        !strstr(captured, name) || !strstr(captured, s))
        fail_msg("want one warning naming %s with '%s', got: %s", name, s, captured);
}

/* The table: names KTIME_*, unique, found by name; a doc line each; every enum value from 0
 * to its largest has a word, and no two words of a setting are the same. */
static void test_table_is_whole(void **state)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        int max = -1;
        assert_int_equal(strncmp(st->name, "KTIME_", 6), 0);
        assert_ptr_equal(config_find(st->name, strlen(st->name)), st);
        assert_non_null(st->doc);
        assert_true(strlen(st->doc) > 10 && strlen(st->doc) < 160);
        assert_non_null(st->meta);
        if (st->type == SETTING_TYPE_PATH)
            assert_non_null(st->unset);
        if (st->type == SETTING_TYPE_LONG)
            assert_true(st->lo <= st->def && st->def <= st->hi);
        if (st->type != SETTING_TYPE_ENUM)
            continue;
        for (size_t i = 0; i < config_nwords; i++) {
            if (config_words[i].id != id)
                continue;
            if (config_words[i].value > max)
                max = config_words[i].value;
            for (size_t j = i + 1; j < config_nwords; j++)
                if (config_words[j].id == id)
                    assert_int_not_equal(strcasecmp(config_words[i].word, config_words[j].word), 0);
        }
        assert_true(max >= 1);
        for (int v = 0; v <= max; v++)
            if (!config_word(id, v))
                fail_msg("%s: value %d has no word", st->name, v);
        assert_non_null(config_word(id, (int)st->def));
    }
    assert_null(config_find("KTIME_WARMU", 11));
    assert_null(config_word(SETTING_TIMER, 99));
    assert_string_equal(timer_kind_name((enum timer_kind)99), "?");
}

/* The name functions are the table's words. */
static void test_enum_names(void **state)
{
    assert_string_equal(timer_kind_name(TIMER_EVENTS), "events");
    assert_string_equal(timer_kind_name(TIMER_CUPTI), "cupti");
    assert_string_equal(timer_kind_name(TIMER_BOTH), "both");
    assert_string_equal(gate_mode_name(GATE_AUTO), "auto");
    assert_string_equal(gate_mode_name(GATE_ON), "on");
    assert_string_equal(gate_mode_name(GATE_OFF), "off");
    assert_string_equal(report_format_name(FORMAT_CSV), "csv");
    assert_string_equal(capture_mode_name(CAPTURE_PROFILER_API), "profiler-api");
    assert_string_equal(group_mode_name(GROUP_SHAPE), "shape");
    assert_string_equal(range_attribution_name(RANGES_OUTERMOST), "outermost");
    assert_string_equal(log_level_name(LOG_DEBUG), "debug");
}

/* From a word back to its value: every word of every enum; none for another word. */
static void test_word_values(void **state)
{
    int v = -7;

    for (size_t i = 0; i < config_nwords; i++) {
        assert_true(config_word_value(config_words[i].id, config_words[i].word, &v));
        assert_int_equal(v, config_words[i].value);
    }
    assert_true(config_word_value(SETTING_TIMER, "CUPTI", &v));
    assert_int_equal(v, TIMER_CUPTI);
    v = -7;
    assert_false(config_word_value(SETTING_TIMER, "hardware", &v));
    assert_false(config_word_value(SETTING_GATE, "cupti", &v));
    assert_int_equal(v, -7);
}

/* Unset: every setting at its default, from "default", no warning; paths NULL. */
static void test_defaults(void **state)
{
    struct config c;

    set_env(NULL, NULL, NULL, NULL);
    load(&c);
    assert_string_equal(captured, "");
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char want[64];
        assert_int_equal(CONFIG_ORIGIN(&c, id), ORIGIN_DEFAULT);
        assert_int_equal(CONFIG_REFUSED(&c, id), ORIGIN_DEFAULT);
        if (st->type == SETTING_TYPE_PATH) {
            assert_string_equal(value_of(&c, id), "");
            continue;
        }
        if (st->type == SETTING_TYPE_ENUM)
            snprintf(want, sizeof want, "%s", config_word(id, (int)st->def));
        else
            snprintf(want, sizeof want, "%ld", st->def);
        if (strcmp(value_of(&c, id), want) != 0)
            fail_msg("%s: default %s, want %s", st->name, value_of(&c, id), want);
    }
    assert_int_equal(c.warmup, CONFIG_DEFAULT_WARMUP);
    assert_int_equal(c.timer, CONFIG_DEFAULT_TIMER);
    assert_int_equal(c.nvml, CONFIG_DEFAULT_NVML);
    config_free(&c);
}

/* Every long: both ends of its range taken; one past either end, junk, and a sign, each
 * refused with one warning naming the range and the default. */
static void test_every_long(void **state)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char lo[32], hi[32], below[32], above[32], range[80], using[40];
        const char *bad[] = { below, above, "12abc", "", "7 ", "0x10", "1e3" };
        struct config c;
        if (st->type != SETTING_TYPE_LONG)
            continue;
        snprintf(lo, sizeof lo, "%ld", st->lo);
        snprintf(hi, sizeof hi, "%ld", st->hi);
        snprintf(below, sizeof below, "%ld", st->lo - 1);
        snprintf(above, sizeof above, "%ld", st->hi + 1);
        snprintf(range, sizeof range, "is not an integer from %ld to %ld", st->lo, st->hi);
        snprintf(using, sizeof using, "; using %ld\n", st->def);
        set_env(st->name, lo, NULL, NULL);
        load(&c);
        assert_string_equal(captured, "");
        assert_string_equal(value_of(&c, id), lo);
        assert_int_equal(CONFIG_ORIGIN(&c, id), ORIGIN_ENV);
        set_env(st->name, hi, NULL, NULL);
        load(&c);
        assert_string_equal(value_of(&c, id), hi);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            set_env(st->name, bad[i], NULL, NULL);
            load(&c);
            one_warning_with(st->name, range);
            one_warning_with(st->name, using);
            assert_int_equal(*(const long *)((const char *)&c + st->offset), st->def);
            assert_int_equal(CONFIG_ORIGIN(&c, id), ORIGIN_DEFAULT);
            assert_int_equal(CONFIG_REFUSED(&c, id), ORIGIN_ENV);
            assert_string_equal(origin_of(&c, id), "default; the environment's value was refused");
        }
    }
}

/* Every boolean: each word of both kinds in any case; anything else refused. */
static void test_every_bool(void **state)
{
    static const char *const yes[] = { "1", "yes", "TRUE", "On" };
    static const char *const no[] = { "0", "No", "false", "OFF" };
    static const char *const bad[] = { "2", "", "y", "enable", "01" };

    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        struct config c;
        char using[32];
        if (st->type != SETTING_TYPE_BOOL)
            continue;
        for (int i = 0; i < 4; i++) {
            set_env(st->name, yes[i], NULL, NULL);
            load(&c);
            assert_string_equal(value_of(&c, id), "1");
            set_env(st->name, no[i], NULL, NULL);
            load(&c);
            assert_string_equal(value_of(&c, id), "0");
            assert_string_equal(captured, "");
        }
        snprintf(using, sizeof using, "; using %ld\n", st->def);
        for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
            set_env(st->name, bad[i], NULL, NULL);
            load(&c);
            one_warning_with(st->name, "is not one of 1/0, yes/no, true/false, on/off");
            one_warning_with(st->name, using);
            assert_int_equal(*(const bool *)((const char *)&c + st->offset), st->def != 0);
        }
    }
}

/* Every enum: each word, upper-cased too, gives its value, whose name is the word again;
 * a word that is none is refused with one warning listing the words. */
static void test_every_enum_word(void **state)
{
    for (size_t i = 0; i < config_nwords; i++) {
        const struct setting_word *w = &config_words[i];
        const struct setting *st = &config_settings[w->id];
        char upper[64], given[80];
        struct config c;
        size_t len = strlen(w->word);
        for (size_t k = 0; k <= len; k++)
            upper[k] = w->word[k] >= 'a' && w->word[k] <= 'z' ? w->word[k] - 'a' + 'A' : w->word[k];
        /* A word taking a parameter needs one. */
        snprintf(given, sizeof given, "%s%s", upper, w->word[len - 1] == ':' ? "x y" : "");
        set_env(st->name, given, NULL, NULL);
        load(&c);
        if (strcmp(captured, "") != 0)
            fail_msg("%s=%s: %s", st->name, given, captured);
        assert_int_equal(*(const int *)((const char *)&c + st->offset), w->value);
        snprintf(given, sizeof given, "%s%s", w->word, w->word[len - 1] == ':' ? "x y" : "");
        assert_string_equal(value_of(&c, w->id), given);
        assert_int_equal(CONFIG_ORIGIN(&c, w->id), ORIGIN_ENV);
        config_free(&c);
    }
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        struct config c;
        if (st->type != SETTING_TYPE_ENUM)
            continue;
        set_env(st->name, "no-such-word", NULL, NULL);
        load(&c);
        one_warning_with(st->name, "is not one of ");
        for (size_t i = 0; i < config_nwords; i++)
            if (config_words[i].id == id && !(st->bool_words && (strcmp(config_words[i].word, "on") == 0 ||
                                                                 strcmp(config_words[i].word, "off") == 0)))
                one_warning_with(st->name, config_words[i].word);
        assert_int_equal(*(const int *)((const char *)&c + st->offset), (int)st->def);
    }
}

/* The messages of the enums, word for word. */
static void test_enum_messages(void **state)
{
    static const struct {
        const char *name, *value, *line;
    } cases[] = {
        { "KTIME_TIMER", "hw", "ktime: warning: KTIME_TIMER='hw' is not one of events, cupti, "
                               "both; using events\n" },
        { "KTIME_GATE", "x", "ktime: warning: KTIME_GATE='x' is not one of auto, 1/0, yes/no, "
                             "true/false, on/off; using auto\n" },
        { "KTIME_LOG", "loud", "ktime: warning: KTIME_LOG='loud' is not one of quiet, warn, "
                               "info, debug; using warn\n" },
        { "KTIME_CAPTURE", "some", "ktime: warning: KTIME_CAPTURE='some' is not one of all, "
                                 "profiler-api, nvtx:NAME; using all\n" },
        { "KTIME_CAPTURE", "NVTX:", "ktime: warning: KTIME_CAPTURE='NVTX:' names no range "
                                  "(nvtx:NAME); using all\n" },
        { "KTIME_WARMUP", "-1", "ktime: warning: KTIME_WARMUP='-1' is not an integer from 0 to "
                                "1000000000; using 5\n" },
        { "KTIME_SIGNALS", "maybe", "ktime: warning: KTIME_SIGNALS='maybe' is not one of 1/0, "
                                    "yes/no, true/false, on/off; using 1\n" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        set_env(cases[i].name, cases[i].value, NULL, NULL);
        load(&c);
        assert_string_equal(captured, cases[i].line);
    }
}

/* KTIME_GATE takes the boolean words as well as its own. */
static void test_bool_words_in_an_enum(void **state)
{
    static const struct {
        const char *value;
        enum gate_mode want;
    } cases[] = { { "yes", GATE_ON }, { "TRUE", GATE_ON }, { "1", GATE_ON }, { "on", GATE_ON },
                  { "no", GATE_OFF }, { "0", GATE_OFF }, { "Off", GATE_OFF }, { "auto", GATE_AUTO } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        set_env("KTIME_GATE", cases[i].value, NULL, NULL);
        load(&c);
        assert_string_equal(captured, "");
        assert_int_equal(c.gate, cases[i].want);
    }
    assert_true(config_settings[SETTING_GATE].bool_words);
    assert_false(config_settings[SETTING_TIMER].bool_words);
}

/* KTIME_CAPTURE=nvtx:NAME: the name kept whole (spaces, colons, case), an owned copy. */
static void test_word_with_parameter(void **state)
{
    struct config c;

    set_env("KTIME_CAPTURE", "nvtx:Train: step 2", NULL, NULL);
    load(&c);
    assert_int_equal(c.capture, CAPTURE_NVTX);
    assert_string_equal(c.capture_name, "Train: step 2");
    assert_ptr_not_equal(c.capture_name, env_table[1] + 5);
    assert_string_equal(value_of(&c, SETTING_CAPTURE), "nvtx:Train: step 2");
    config_free(&c);
    assert_null(c.capture_name);
    set_env("KTIME_CAPTURE", "nvtx", NULL, NULL);
    load(&c);
    one_warning_with("KTIME_CAPTURE", "is not one of");
    assert_int_equal(c.capture, CAPTURE_ALL);
    assert_null(c.capture_name);
    /* Any timer: CUPTI's records carry their launch's range. */
    set_env("KTIME_CAPTURE", "nvtx:a", "KTIME_TIMER", "both");
    load(&c);
    assert_string_equal(captured, "");
    assert_int_equal(c.capture, CAPTURE_NVTX);
    config_free(&c);
    /* A parameter that must be a regular expression: refused when it is not one. */
    set_env("KTIME_COMM", "match:nccl|(", NULL, NULL);
    load(&c);
    one_warning_with("KTIME_COMM", "not a regular expression");
    assert_int_equal(c.comm, COMM_AUTO);
    assert_null(c.comm_pattern);
    assert_string_equal(origin_of(&c, SETTING_COMM), "default; the environment's value was refused");
    config_free(&c);
    set_env("KTIME_COMM", "match:^_Z.*allreduce", NULL, NULL);
    load(&c);
    assert_string_equal(captured, "");
    assert_string_equal(config_comm_pattern(&c), "^_Z.*allreduce");
    config_free(&c);
}

/* Paths: copied whole; empty is unset, silently but for KTIME_OUTPUT. */
static void test_paths(void **state)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        struct config c;
        if (st->type != SETTING_TYPE_PATH)
            continue;
        set_env(st->name, "dir/a b-%p.txt", NULL, NULL);
        load(&c);
        assert_string_equal(captured, "");
        assert_string_equal(value_of(&c, id), "dir/a b-%p.txt");
        assert_int_equal(CONFIG_ORIGIN(&c, id), ORIGIN_ENV);
        config_free(&c);
        assert_string_equal(value_of(&c, id), "");
        set_env(st->name, "", NULL, NULL);
        load(&c);
        assert_string_equal(value_of(&c, id), "");
        assert_int_equal(CONFIG_ORIGIN(&c, id), ORIGIN_DEFAULT);
        if (id == SETTING_OUTPUT)
            one_warning_with("KTIME_OUTPUT", "set but empty");
        else
            assert_string_equal(captured, "");
    }
}

/* Where a value came from: the environment, or the launcher's option or default as
 * KTIME_LAUNCHER_SET says; the format from KTIME_OUTPUT's suffix, then from KTIME_FORMAT. */
static void test_origins(void **state)
{
    struct config c;

    set_env("KTIME_WARMUP", "3", "KTIME_LAUNCHER_SET", "option:KTIME_WARMUP default:KTIME_NVTX");
    load(&c);
    assert_int_equal(CONFIG_ORIGIN(&c, SETTING_WARMUP), ORIGIN_OPTION);
    assert_string_equal(origin_of(&c, SETTING_WARMUP), "launcher option");
    assert_int_equal(CONFIG_ORIGIN(&c, SETTING_NVTX), ORIGIN_DEFAULT); /* not in the environment */
    set_env("KTIME_NVTX", "1", "KTIME_LAUNCHER_SET", "option:KTIME_WARMUP default:KTIME_NVTX");
    load(&c);
    assert_string_equal(origin_of(&c, SETTING_NVTX), "launcher default");
    assert_string_equal(origin_of(&c, SETTING_WARMUP), "default");
    /* A name inside another word is not it. */
    set_env("KTIME_WARMUP", "3", "KTIME_LAUNCHER_SET", "option:KTIME_WARMUPX xoption:KTIME_WARMUP");
    load(&c);
    assert_string_equal(origin_of(&c, SETTING_WARMUP), "environment");
    set_env("KTIME_WARMUP", "x", "KTIME_LAUNCHER_SET", "option:KTIME_WARMUP");
    load(&c);
    assert_string_equal(origin_of(&c, SETTING_WARMUP), "default; the launcher option's value was refused");
    set_env("KTIME_OUTPUT", "r.CSV", NULL, NULL);
    load(&c);
    assert_int_equal(c.format, FORMAT_CSV);
    assert_string_equal(origin_of(&c, SETTING_FORMAT), "KTIME_OUTPUT's suffix");
    config_free(&c);
    set_env("KTIME_OUTPUT", "r.csv", "KTIME_FORMAT", "xml");
    load(&c);
    one_warning_with("KTIME_FORMAT", "using csv");
    assert_string_equal(origin_of(&c, SETTING_FORMAT),
                        "KTIME_OUTPUT's suffix; the environment's value was refused");
    config_free(&c);
    set_env("KTIME_OUTPUT", "r.csv", "KTIME_FORMAT", "json");
    load(&c);
    assert_int_equal(c.format, FORMAT_JSON);
    assert_string_equal(origin_of(&c, SETTING_FORMAT), "environment");
    assert_string_equal(origin_of(&c, SETTING_TRACE), "default: none");
    config_free(&c);
}

static char lines[64][256];
static int nlines;

static void collect(void *arg, const char *line)
{
    (void)arg;
    if (nlines < 64)
        snprintf(lines[nlines++], sizeof lines[0], "%s", line);
}

/* config_describe: a line per setting, in the table's order, NAME=VALUE (ORIGIN). */
static void test_describe(void **state)
{
    struct config c;

    set_env("KTIME_CAPTURE", "profiler-api", "KTIME_LAUNCHER_SET", "option:KTIME_CAPTURE");
    load(&c);
    nlines = 0;
    config_describe(&c, collect, NULL);
    assert_int_equal(nlines, CONFIG_NSETTINGS);
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        size_t n = strlen(config_settings[id].name);
        assert_int_equal(strncmp(lines[id], config_settings[id].name, n), 0);
        assert_int_equal(lines[id][n], '=');
    }
    assert_string_equal(lines[SETTING_WARMUP], "KTIME_WARMUP=5                  (default)");
    assert_string_equal(lines[SETTING_CAPTURE], "KTIME_CAPTURE=profiler-api      (launcher option)");
    assert_string_equal(lines[SETTING_OUTPUT],
                        "KTIME_OUTPUT=                   (default: stderr; ktime-HOST-RANK.txt "
                        "per rank in a job of several)");
    config_free(&c);
}

/* A setting's earlier name (SETTING_OLD_NAME: KTIME_RANGE of KTIME_CAPTURE, KTIME_REGION of
 * KTIME_RANGES) is read when the setting is unset, shown as its origin, named in its value's
 * warning, known, and ignored with a note when the setting is set too. */
static void test_old_names(void **state)
{
    struct config c;
    char buf[200];
    int n = 0;

    for (int id = 0; id < CONFIG_NSETTINGS; id++)
        if (config_settings[id].old_name) {
            n++;
            assert_true(config_is_known(config_settings[id].old_name,
                                        strlen(config_settings[id].old_name)));
            assert_null(config_find(config_settings[id].old_name,
                                    strlen(config_settings[id].old_name)));
        }
    assert_int_equal(n, 2);
    assert_string_equal(config_settings[SETTING_CAPTURE].old_name, "KTIME_RANGE"); /* earlier name */
    assert_string_equal(config_settings[SETTING_RANGES].old_name, "KTIME_REGION"); /* earlier name */

    set_env("KTIME_RANGE", "nvtx:step", "KTIME_REGION", "outermost"); /* earlier names */
    load(&c);
    assert_string_equal(captured, "");
    assert_int_equal(c.capture, CAPTURE_NVTX);
    assert_string_equal(c.capture_name, "step");
    assert_int_equal(c.range_attribution, RANGES_OUTERMOST);
    assert_int_equal(CONFIG_ORIGIN(&c, SETTING_CAPTURE), ORIGIN_OLD_NAME);
    assert_string_equal(config_origin_text(&c, SETTING_CAPTURE, buf, sizeof buf),
                        "KTIME_RANGE, the earlier name of KTIME_CAPTURE");
    assert_string_equal(config_origin_text(&c, SETTING_RANGES, buf, sizeof buf),
                        "KTIME_REGION, the earlier name of KTIME_RANGES");
    config_free(&c);

    set_env("KTIME_CAPTURE", "profiler-api", "KTIME_RANGE", "nvtx:step"); /* earlier name */
    load(&c);
    assert_string_equal(captured, "ktime: KTIME_CAPTURE and KTIME_RANGE (its earlier name) are "
                                  "both set; KTIME_CAPTURE=profiler-api is used\n");
    assert_int_equal(c.capture, CAPTURE_PROFILER_API);
    assert_int_equal(CONFIG_ORIGIN(&c, SETTING_CAPTURE), ORIGIN_ENV);
    assert_null(c.capture_name);
    config_free(&c);

    set_env("KTIME_REGION", "middle", NULL, NULL); /* earlier name */
    load(&c);
    assert_string_equal(captured, /* KTIME_REGION, an earlier name, named in its warning */
                        "ktime: warning: KTIME_REGION='middle' is not one of " /* earlier name */
                        "innermost, outermost; using innermost\n");
    assert_int_equal(c.range_attribution, RANGES_INNERMOST);
    assert_string_equal(config_origin_text(&c, SETTING_RANGES, buf, sizeof buf),
                        "default; KTIME_REGION's value was refused"); /* earlier name */
    config_free(&c);
}

static void dump_loud(void *arg)
{
    config_dump(arg, true);
}

static void dump_quiet(void *arg)
{
    config_dump(arg, false);
}

/* KTIME_DUMP_CONFIG's lines: prefixed "ktime: ", whatever the level when loud; otherwise only
 * from KTIME_LOG=info. */
static void test_dump(void **state)
{
    struct config c;

    set_env("KTIME_DUMP_CONFIG", "1", "KTIME_LOG", "quiet");
    load(&c);
    assert_true(c.dump_config);
    log_set_level(LOG_QUIET);
    capture(dump_loud, &c);
    assert_int_equal(count_lines(captured), CONFIG_NSETTINGS);
    assert_non_null(strstr(captured, "ktime: KTIME_LOG=quiet                 (environment)\n"));
    assert_non_null(strstr(captured, "ktime: KTIME_DUMP_CONFIG=1             (environment)\n"));
    log_set_level(LOG_WARN);
    capture(dump_quiet, &c);
    assert_string_equal(captured, "");
    log_set_level(LOG_INFO);
    capture(dump_quiet, &c);
    assert_int_equal(count_lines(captured), CONFIG_NSETTINGS);
    log_set_level(LOG_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_table_is_whole),
        cmocka_unit_test(test_enum_names),
        cmocka_unit_test(test_word_values),
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_every_long),
        cmocka_unit_test(test_every_bool),
        cmocka_unit_test(test_every_enum_word),
        cmocka_unit_test(test_enum_messages),
        cmocka_unit_test(test_bool_words_in_an_enum),
        cmocka_unit_test(test_word_with_parameter),
        cmocka_unit_test(test_paths),
        cmocka_unit_test(test_origins),
        cmocka_unit_test(test_describe),
        cmocka_unit_test(test_old_names),
        cmocka_unit_test(test_dump),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
