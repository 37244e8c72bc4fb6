/* test_config.c - KTIME_* parsing: defaults, good values, and every kind of bad value
 * giving exactly one "ktime:" warning that names the variable and the default used. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <unistd.h>

#include "config.h"
#include "log.h"

static const char *const *env_table;

static const char *fake_getenv(const char *name)
{
    for (const char *const *p = env_table; p && p[0]; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

/* The copies config_load made (KTIME_OUTPUT, KTIME_CUPTI_LIB): the library keeps its one
 * config for the whole process; the tests free theirs at the end, for LeakSanitizer. */
static void *owned[64];
static size_t nowned;

static int free_owned(void **state)
{
    while (nowned > 0)
        free(owned[--nowned]);
    return 0;
}

/* Loads config from the table with stderr captured; returns what was written there. */
static char captured[8192];
static void load(struct config *c, const char *const *env)
{
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t n;

    env_table = env;
    fflush(stderr);
    dup2(fileno(tmp), 2);
    config_load(c, fake_getenv);
    for (size_t i = 0; i < 4; i++) {
        void *p = (void *)(i == 3 ? c->capture_name : i == 2 ? c->also_output : i ? c->cupti_lib : c->output);
        if (p && nowned < sizeof owned / sizeof owned[0])
            owned[nowned++] = p;
    }
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(captured, 1, sizeof captured - 1, tmp);
    captured[n] = '\0';
    fclose(tmp);
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

static void test_defaults(void **state)
{
    struct config c;
    const char *env[] = { NULL };
    load(&c, env);
    assert_false(c.disable);
    assert_int_equal(c.warmup, CONFIG_DEFAULT_WARMUP);
    assert_null(c.output);
    assert_int_equal(c.format, FORMAT_TEXT);
    assert_int_equal(c.log_level, LOG_WARN);
    assert_int_equal(c.pool_cap, CONFIG_DEFAULT_POOL_CAP);
    assert_int_equal(c.exit_wait_ms, CONFIG_DEFAULT_EXIT_WAIT_MS);
    assert_true(c.signals);
    assert_int_equal(c.gate, GATE_AUTO);
    assert_int_equal(c.timer, TIMER_EVENTS);
    assert_int_equal(c.sample, 1);
    assert_int_equal(c.cupti_buffer_mb, CONFIG_DEFAULT_CUPTI_BUFFER_MB);
    assert_null(c.cupti_lib);
    assert_null(c.also_output);
    assert_string_equal(captured, "");
}

/* KTIME_TIMER, KTIME_SAMPLE, KTIME_CUPTI_LIB, KTIME_CUPTI_BUFFER_MB. */
static void test_timer_settings(void **state)
{
    static const struct {
        const char *val;
        enum timer_kind want;
    } cases[] = { { "events", TIMER_EVENTS }, { "CUPTI", TIMER_CUPTI }, { "both", TIMER_BOTH } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        const char *env[] = { "KTIME_TIMER", cases[i].val, "KTIME_SAMPLE", "16",
                              "KTIME_CUPTI_LIB", "/opt/x/libcupti.so.13",
                              "KTIME_CUPTI_BUFFER_MB", "2", NULL };
        load(&c, env);
        assert_int_equal(c.timer, cases[i].want);
        assert_int_equal(c.sample, 16);
        assert_int_equal(c.cupti_buffer_mb, 2);
        assert_string_equal(c.cupti_lib, "/opt/x/libcupti.so.13");
        /* KTIME_SAMPLE thins out event pairs: under the CUPTI timer alone it is said not to
         * apply (one warning), and kept for a hand-over to events. */
        if (cases[i].want == TIMER_CUPTI)
            assert_string_equal(captured,
                                "ktime: warning: KTIME_SAMPLE=16 works with the events timer "
                                "only; with KTIME_TIMER=cupti every kernel is timed from CUPTI's "
                                "records (it applies only to launches timed with events after "
                                "another CUPTI client takes CUPTI over)\n");
        else
            assert_string_equal(captured, "");
    }
}

/* KTIME_GATE: auto, or any boolean word for always / never. */
static void test_gate_modes(void **state)
{
    static const struct {
        const char *val;
        enum gate_mode want;
    } cases[] = { { "auto", GATE_AUTO }, { "AUTO", GATE_AUTO }, { "1", GATE_ON },
                  { "on", GATE_ON },     { "yes", GATE_ON },   { "0", GATE_OFF },
                  { "off", GATE_OFF },   { "false", GATE_OFF } };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        const char *env[] = { "KTIME_GATE", cases[i].val, NULL };
        load(&c, env);
        if (c.gate != cases[i].want)
            fail_msg("KTIME_GATE=%s gave %d, want %d", cases[i].val, (int)c.gate,
                     (int)cases[i].want);
        assert_string_equal(captured, "");
    }
}

static void test_good_values(void **state)
{
    struct config c;
    const char *env[] = { "KTIME_WARMUP", "0", "KTIME_OUTPUT", "out/run.JSON",
                          "KTIME_POOL_CAP", "64", "KTIME_EXIT_WAIT_MS", "250",
                          "KTIME_DISABLE", "yes", "KTIME_LOG", "debug", "KTIME_SIGNALS", "off",
                          "KTIME_GATE", "0", NULL };
    load(&c, env);
    assert_int_equal(c.warmup, 0);
    assert_string_equal(c.output, "out/run.JSON");
    assert_int_equal(c.format, FORMAT_JSON); /* from the suffix */
    assert_int_equal(c.pool_cap, 64);
    assert_int_equal(c.exit_wait_ms, 250);
    assert_true(c.disable);
    assert_false(c.signals);
    assert_int_equal(c.gate, GATE_OFF);
    assert_int_equal(c.log_level, LOG_DEBUG);
    assert_string_equal(captured, "");
    log_set_level(LOG_WARN);
}

static void test_format_overrides_suffix(void **state)
{
    struct config c;
    const char *env[] = { "KTIME_OUTPUT", "r.json", "KTIME_FORMAT", "text", NULL };
    load(&c, env);
    assert_int_equal(c.format, FORMAT_TEXT);
}

/* KTIME_ALSO_OUTPUT (a testing aid): its format from its suffix alone, whatever KTIME_FORMAT
 * says; unset by default. */
static void test_also_output(void **state)
{
    (void)state;
    const char *json[] = { "KTIME_ALSO_OUTPUT", "also-%p.JSON", "KTIME_FORMAT", "csv", NULL };
    const char *csv[] = { "KTIME_ALSO_OUTPUT", "also.csv", NULL };
    const char *text[] = { "KTIME_ALSO_OUTPUT", "also.log", "KTIME_FORMAT", "json", NULL };
    struct config c;

    load(&c, json);
    assert_string_equal(c.also_output, "also-%p.JSON");
    assert_int_equal(c.also_format, FORMAT_JSON);
    assert_int_equal(c.format, FORMAT_CSV);
    load(&c, csv);
    assert_int_equal(c.also_format, FORMAT_CSV);
    load(&c, text);
    assert_int_equal(c.also_format, FORMAT_TEXT);
    assert_int_equal(c.format, FORMAT_JSON);
    assert_string_equal(captured, "");
}

/* KTIME_OUTPUT is kept as a template (placeholders are expanded when the report is
 * written); its .json suffix still selects JSON. */
static void test_output_template(void **state)
{
    struct config c;
    const char *env[] = { "KTIME_OUTPUT", "out/r-%h-%p.json", NULL };
    const char *env2[] = { "KTIME_OUTPUT", "r-%q{RANK}.txt", NULL };
    load(&c, env);
    assert_string_equal(c.output, "out/r-%h-%p.json");
    assert_int_equal(c.format, FORMAT_JSON);
    assert_string_equal(captured, "");
    load(&c, env2);
    assert_string_equal(c.output, "r-%q{RANK}.txt");
    assert_int_equal(c.format, FORMAT_TEXT);
    assert_string_equal(captured, "");
}

/* Each bad KTIME_WARMUP value: one warning line, naming the variable and the default. */
static void test_bad_warmup_values(void **state)
{
    const char *bad[] = { "abc", "-3", "1e99", "", "5x", "5 ", "99999999999999999999", "0x10" };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct config c;
        const char *env[] = { "KTIME_WARMUP", bad[i], NULL };
        load(&c, env);
        assert_int_equal(c.warmup, CONFIG_DEFAULT_WARMUP);
        assert_int_equal(count_lines(captured), 1);
        assert_non_null(strstr(captured, "ktime: warning: KTIME_WARMUP="));
        assert_non_null(strstr(captured, "using 5"));
    }
}

static void test_other_bad_values(void **state)
{
    static const struct {
        const char *var, *val, *expect;
    } cases[] = {
        { "KTIME_POOL_CAP", "0", "using 16384" },
        { "KTIME_POOL_CAP", "many", "using 16384" },
        { "KTIME_EXIT_WAIT_MS", "-1", "using 2000" },
        { "KTIME_LOG", "bogus", "using warn" },
        { "KTIME_FORMAT", "xml", "using text" },
        { "KTIME_DISABLE", "maybe", "using 0" },
        { "KTIME_GATE", "sometimes", "using auto" },
        { "KTIME_OUTPUT", "", "stderr" },
        { "KTIME_TIMER", "hardware", "using events" },
        { "KTIME_SAMPLE", "0", "using 1" },
        { "KTIME_SAMPLE", "1.5", "using 1" },
        { "KTIME_CUPTI_BUFFER_MB", "0", "using 8" },
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        struct config c;
        const char *env[] = { cases[i].var, cases[i].val, NULL };
        load(&c, env);
        assert_int_equal(count_lines(captured), 1);
        assert_non_null(strstr(captured, "ktime: warning:"));
        assert_non_null(strstr(captured, cases[i].var));
        if (!strstr(captured, cases[i].expect))
            fail_msg("%s=%s: expected '%s' in: %s", cases[i].var, cases[i].val, cases[i].expect,
                     captured);
    }
}

/* KTIME_CAPTURE: profiler-api, nvtx:NAME, all, and bad values with one warning each. */
static void test_capture(void **state)
{
    struct config c;
    const char *on[] = { "KTIME_CAPTURE", "Profiler-API", NULL };
    const char *nvtx[] = { "KTIME_CAPTURE", "nvtx:train step", NULL };
    const char *bad[] = { "KTIME_CAPTURE", "nvtx:", NULL };
    const char *cupti[] = { "KTIME_CAPTURE", "profiler-api", "KTIME_TIMER", "cupti", NULL };

    load(&c, on);
    assert_int_equal(c.capture, CAPTURE_PROFILER_API);
    assert_string_equal(captured, "");
    load(&c, nvtx);
    assert_int_equal(c.capture, CAPTURE_NVTX);
    assert_string_equal(c.capture_name, "train step");
    assert_string_equal(captured, "");
    load(&c, bad);
    assert_int_equal(c.capture, CAPTURE_ALL);
    assert_int_equal(count_lines(captured), 1);
    assert_non_null(strstr(captured, "names no range"));
    load(&c, cupti); /* CUPTI's records carry their launch's range */
    assert_int_equal(c.capture, CAPTURE_PROFILER_API);
    assert_string_equal(captured, "");
}

static const char *closest(const char *s)
{
    return config_closest(s, strlen(s));
}

/* The closest known name: a swap, a missing or extra letter, a wrong one; none for a name
 * close to nothing; a known name is not "closest" to itself. */
static void test_closest_name(void **state)
{
    assert_string_equal(closest("KTIME_WARMPU"), "KTIME_WARMUP");
    assert_string_equal(closest("KTIME_WARMU"), "KTIME_WARMUP");
    assert_string_equal(closest("KTIME_OUTPTU"), "KTIME_OUTPUT");
    assert_string_equal(closest("KTIME_OUTPUTS"), "KTIME_OUTPUT");
    assert_string_equal(closest("KTIME_TIMMER"), "KTIME_TIMER");
    assert_string_equal(closest("KTIME_EXIT_WAIT"), "KTIME_EXIT_WAIT_MS");
    assert_string_equal(closest("KTIME_RANG"), "KTIME_CAPTURE"); /* near an earlier name */
    assert_string_equal(closest("KTIME_REGON"), "KTIME_RANGES");  /* likewise */
    assert_null(closest("KTIME_REGION"));                         /* an earlier name is known */
    assert_null(closest("KTIME_ZZZZZZZZZZ"));
    assert_null(closest("KTIME_WARMUP"));
    assert_true(config_is_known("KTIME_WARMUP", 12));
    assert_false(config_is_known("KTIME_WARMU", 11));
}

/* config_count_unknown / config_warn_unknown over an environment array. */
static void test_unknown_names(void **state)
{
    char *env[] = { "PATH=/bin", "KTIME_WARMUP=3", "KTIME_WARMPU=0", "KTIME_=x", "KTIME_ZZZZZZZZZZ=1",
                    "NOT_KTIME_X=1", NULL };
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t n;

    assert_int_equal(config_count_unknown(env), 2);
    log_set_level(LOG_WARN);
    fflush(stderr);
    dup2(fileno(tmp), 2);
    config_warn_unknown(env, true);
    config_warn_unknown(env, false); /* info: not shown at warn */
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(captured, 1, sizeof captured - 1, tmp);
    captured[n] = '\0';
    fclose(tmp);
    assert_int_equal(count_lines(captured), 2);
    assert_non_null(strstr(captured, "ktime: warning: KTIME_WARMPU is not a ktime variable and is "
                                     "ignored; did you mean KTIME_WARMUP?\n"));
    assert_non_null(strstr(captured, "KTIME_ZZZZZZZZZZ is not a ktime variable"));
}

/* Scans the .c, .h and .def files under dir (its layer folders too) for "KTIME_..." string
 * literals, each of which must be a known name; counts files and names. */
static void scan_for_names(const char *dir, int depth, int *files, int *names)
{
    DIR *d = opendir(dir);
    struct dirent *e;

    assert_non_null(d);
    while ((e = readdir(d))) {
        char path[4096], *buf;
        size_t len = strlen(e->d_name), n;
        FILE *f;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (e->d_name[0] != '.' && e->d_type == DT_DIR && depth < 4) {
            scan_for_names(path, depth + 1, files, names);
            continue;
        }
        if (len < 3 || (strcmp(e->d_name + len - 2, ".c") && strcmp(e->d_name + len - 2, ".h") &&
                        (len < 5 || strcmp(e->d_name + len - 4, ".def"))))
            continue;
        f = fopen(path, "r");
        assert_non_null(f);
        buf = calloc(1, 1 << 20);
        n = fread(buf, 1, (1 << 20) - 1, f);
        fclose(f);
        (*files)++;
        for (char *p = buf; (p = strstr(p, "\"KTIME_")); p++) {
            size_t k = 1;
            while (p[k] == '_' || (p[k] >= 'A' && p[k] <= 'Z') || (p[k] >= '0' && p[k] <= '9'))
                k++;
            if (p[k] != '"' || k <= 7)
                continue; /* a message that starts with a name, or the bare prefix */
            (*names)++;
            if (!config_is_known(p + 1, k - 1))
                fail_msg("%s: \"%.*s\" is read but not in config_known_names", path,
                         (int)(k - 1), p + 1);
        }
        (void)n;
        free(buf);
    }
    closedir(d);
}

/* Every "KTIME_..." string literal in src/ (a name something reads) is in the one table; the
 * library's settings are settings.def's, which config_known_names lists first. */
static void test_table_has_every_name_in_src(void **state)
{
    int files = 0, names = 0;

    scan_for_names(KTIME_SRCDIR, 0, &files, &names);
    assert_true(files > 10);
    assert_true(names >= 3); /* the launcher's and the tests' own names, at least */
    for (int id = 0; id < CONFIG_NSETTINGS; id++)
        assert_true(config_is_known(config_settings[id].name, strlen(config_settings[id].name)));
    assert_true(CONFIG_NSETTINGS > 10);
}

static void test_quiet_silences_warnings(void **state)
{
    struct config c;
    const char *env[] = { "KTIME_LOG", "quiet", "KTIME_WARMUP", "abc", NULL };
    load(&c, env);
    assert_int_equal(c.warmup, CONFIG_DEFAULT_WARMUP);
    assert_string_equal(captured, "");
    log_set_level(LOG_WARN);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_defaults),
        cmocka_unit_test(test_good_values),
        cmocka_unit_test(test_format_overrides_suffix),
        cmocka_unit_test(test_output_template),
        cmocka_unit_test(test_also_output),
        cmocka_unit_test(test_gate_modes),
        cmocka_unit_test(test_timer_settings),
        cmocka_unit_test(test_bad_warmup_values),
        cmocka_unit_test(test_other_bad_values),
        cmocka_unit_test(test_quiet_silences_warnings),
        cmocka_unit_test(test_capture),
        cmocka_unit_test(test_closest_name),
        cmocka_unit_test(test_unknown_names),
        cmocka_unit_test(test_table_has_every_name_in_src),
    };
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, free_owned);
}
