/* test_outpath.c - KTIME_OUTPUT placeholders: %p, %h, %q{NAME}, %%, and what is kept as
 * written (with one warning) or does not fit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "outpath.h"

static const char *const env[] = { "RANK", "3", "JOB", "train", "EMPTY", "", NULL };

static const char *fake_getenv(const char *name)
{
    for (const char *const *p = env; p[0]; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

/* Expands tmpl for pid 4242 on host "node7" with stderr captured into `captured`;
 * returns outpath_expand's result (outpath_resolve's, for the setting named in
 * resolve_var, when it is set). */
static char captured[8192];
static const char *resolve_var;
static int expand(const char *tmpl, const char *host, char *out, size_t outsz)
{
    FILE *tmp = tmpfile();
    int saved = dup(2);
    size_t n;
    int rc;

    fflush(stderr);
    dup2(fileno(tmp), 2);
    rc = resolve_var ? outpath_resolve(resolve_var, tmpl, NULL, 4242, host, out, outsz, fake_getenv)
                     : outpath_expand(tmpl, 4242, host, out, outsz, fake_getenv);
    dup2(saved, 2);
    close(saved);
    rewind(tmp);
    n = fread(captured, 1, sizeof captured - 1, tmp);
    captured[n] = '\0';
    fclose(tmp);
    return rc;
}

static int count_lines(const char *s)
{
    int n = 0;
    for (; *s; s++)
        n += *s == '\n';
    return n;
}

/* tmpl expands to want with nothing on stderr. */
static void expands_quietly(const char *tmpl, const char *want)
{
    char out[PATH_MAX];
    assert_int_equal(expand(tmpl, "node7", out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_string_equal(captured, "");
}

/* tmpl expands to want with exactly one warning that contains each of the NULL-ended
 * strings after want. */
static void expands_with_warning(const char *tmpl, const char *want, ...)
{
    char out[PATH_MAX];
    va_list ap;
    assert_int_equal(expand(tmpl, "node7", out, sizeof out), 0);
    assert_string_equal(out, want);
    assert_int_equal(count_lines(captured), 1);
    if (!strstr(captured, resolve_var ? resolve_var : "ktime: warning: KTIME_OUTPUT: "))
        fail_msg("the warning does not name %s: %s", resolve_var ? resolve_var : "KTIME_OUTPUT",
                 captured);
    va_start(ap, want);
    for (const char *s = va_arg(ap, const char *); s; s = va_arg(ap, const char *))
        if (!strstr(captured, s))
            fail_msg("warning lacks '%s': %s", s, captured);
    va_end(ap);
}

static void test_no_placeholder(void **state)
{
    expands_quietly("report.json", "report.json");
    expands_quietly("/tmp/a b/c.txt", "/tmp/a b/c.txt");
    expands_quietly("", "");
}

static void test_pid(void **state)
{
    expands_quietly("r-%p.json", "r-4242.json");
    expands_quietly("%p", "4242");
    expands_quietly("%p%p/%p", "42424242/4242");
    char out[64];
    assert_int_equal(outpath_expand("%p", -1, "h", out, sizeof out, fake_getenv), 0);
    assert_string_equal(out, "-1");
}

static void test_host(void **state)
{
    char out[64];
    expands_quietly("%h-%p.json", "node7-4242.json");
    assert_int_equal(expand("r-%h.txt", NULL, out, sizeof out), 0);
    assert_string_equal(out, "r-" OUTPATH_UNKNOWN_HOST ".txt");
    assert_string_equal(captured, "");
}

static void test_env(void **state)
{
    expands_quietly("r-rank%q{RANK}.json", "r-rank3.json");
    expands_quietly("%q{JOB}/%q{RANK}-%p", "train/3-4242");
    expands_quietly("x%q{EMPTY}y", "xy"); /* set but empty: no warning */
}

/* %r and %l: the launchers' variables in order, only decimal numbers; OUTPATH_NO_RANK (a word,
 * never a number) when none. */
static const char *const *table;
static const char *table_getenv(const char *name)
{
    for (const char *const *p = table; p[0]; p += 2)
        if (strcmp(p[0], name) == 0)
            return p[1];
    return NULL;
}

static void test_rank(void **state)
{
    static const char *const torchrun[] = { "RANK", "5", "LOCAL_RANK", "1", "WORLD_SIZE", "8",
                                            NULL };
    static const char *const ompi[] = { "RANK", "x", "OMPI_COMM_WORLD_RANK", "12",
                                        "PMI_RANK", "9", "OMPI_COMM_WORLD_LOCAL_RANK", "4",
                                        "OMPI_COMM_WORLD_SIZE", "16", NULL };
    static const char *const odd[] = { "RANK", "", "PMI_RANK", "-1", "PMIX_RANK", "1234567890",
                                       "SLURM_PROCID", "7 ", "MV2_COMM_WORLD_RANK", "../1",
                                       "WORLD_SIZE", "1", NULL };
    static const char *const none[] = { NULL };
    char out[64];

    table = torchrun;
    assert_string_equal(outpath_rank(table_getenv), "5");
    assert_string_equal(outpath_local_rank(table_getenv), "1");
    assert_int_equal(outpath_world_size(table_getenv), 8);
    assert_int_equal(outpath_expand("r%r-l%l-%p", 7, "h", out, sizeof out, table_getenv), 0);
    assert_string_equal(out, "r5-l1-7");
    table = ompi; /* RANK is not a number: Open MPI's variables answer */
    assert_string_equal(outpath_rank(table_getenv), "12");
    assert_string_equal(outpath_local_rank(table_getenv), "4");
    assert_int_equal(outpath_world_size(table_getenv), 16);
    table = odd; /* empty, signed, too long, trailing space, a path: none is a rank */
    assert_null(outpath_rank(table_getenv));
    assert_null(outpath_local_rank(table_getenv));
    assert_int_equal(outpath_world_size(table_getenv), 1);
    assert_int_equal(outpath_expand("r%r-l%l", 7, "h", out, sizeof out, table_getenv), 0);
    assert_string_equal(out, "r" OUTPATH_NO_RANK "-l" OUTPATH_NO_RANK);
    table = none;
    assert_null(outpath_rank(table_getenv));
    assert_int_equal(outpath_world_size(table_getenv), 0);
    assert_int_equal(outpath_expand("r%r-l%l", 7, "h", out, sizeof out, table_getenv), 0);
    assert_string_equal(out, "rnorank-lnorank");
    expands_quietly("r%r-l%l.json", "r3-lnorank.json"); /* the file's table: RANK=3 only */
}

/* A file per process: any placeholder whose value may differ between processes. */
static void test_per_process(void **state)
{
    static const char *const yes[] = { "k.%p.json", "k-%r.json", "%l", "a/%q{JOB}/k.json",
                                       "%%%p", "x%%y%r", "%h-%p" };
    static const char *const no[] = { "k.json", "", "%h.json", "100%%p.json", "%%r-%%l",
                                      "%q{}x", "%q{OPEN", "%qx", "%", "k%", "%z%y" };

    for (size_t i = 0; i < sizeof yes / sizeof yes[0]; i++)
        assert_true(outpath_per_process(yes[i]));
    for (size_t i = 0; i < sizeof no / sizeof no[0]; i++)
        assert_false(outpath_per_process(no[i]));
}

static void test_env_unset_warns_naming_it(void **state)
{
    char out[64];
    expands_with_warning("r-%q{NOPE}.json", "r-.json", "NOPE", "not set", NULL);
    /* One warning per unset variable, and the rest of the name still expands. */
    assert_int_equal(expand("%q{A1}-%q{RANK}-%q{B2}", "h", out, sizeof out), 0);
    assert_string_equal(out, "-3-");
    assert_int_equal(count_lines(captured), 2);
    assert_non_null(strstr(captured, "A1"));
    assert_non_null(strstr(captured, "B2"));
}

static void test_percent_escape(void **state)
{
    expands_quietly("100%%.txt", "100%.txt");
    expands_quietly("%%p", "%p");
    expands_quietly("%%%p", "%4242");
    expands_quietly("%%%%", "%%");
    expands_quietly("%%q{RANK}", "%q{RANK}");
}

static void test_unknown_placeholder_kept(void **state)
{
    char out[64];
    expands_with_warning("r-%x.json", "r-%x.json", "'%x'", "r-%x.json", "kept", NULL);
    expands_with_warning("r-%P.json", "r-%P.json", "'%P'", NULL);
    expands_with_warning("r-%q.json", "r-%q.json", "'%q'", NULL);
    expands_with_warning("r-%", "r-%", "'%'", NULL);
    /* Several: all kept, one warning (naming the first), the valid ones still expand. */
    assert_int_equal(expand("%a-%p-%b-%q-%", "h", out, sizeof out), 0);
    assert_string_equal(out, "%a-4242-%b-%q-%");
    assert_int_equal(count_lines(captured), 1);
    assert_non_null(strstr(captured, "'%a'"));
}

static void test_bad_env_placeholder_kept(void **state)
{
    /* Unterminated: the "%q{" is kept, what follows is read as usual. */
    expands_with_warning("r-%q{RANK.json", "r-%q{RANK.json", "'%q{'", "closing", NULL);
    expands_with_warning("%q{", "%q{", "'%q{'", NULL);
    expands_with_warning("%q{X-%p", "%q{X-4242", "'%q{'", NULL);
    /* Empty name. */
    expands_with_warning("r-%q{}.json", "r-%q{}.json", "'%q{}'", NULL);
    /* A name too long for any environment lookup is kept whole. */
    char tmpl[400], want[400], name[301];
    memset(name, 'A', 300);
    name[300] = '\0';
    snprintf(tmpl, sizeof tmpl, "%%q{%s}-%%p", name);
    snprintf(want, sizeof want, "%%q{%s}-4242", name);
    expands_with_warning(tmpl, want, "longer", NULL);
    /* 255 bytes is still a name (unset here). */
    memset(name, 'B', 255);
    name[255] = '\0';
    snprintf(tmpl, sizeof tmpl, "x%%q{%s}y", name);
    expands_with_warning(tmpl, "xy", "not set", NULL);
}

static void test_too_long(void **state)
{
    char out[8];

    /* Exactly fits: 7 characters and the NUL. */
    assert_int_equal(expand("ab-%p", "h", out, sizeof out), 0);
    assert_string_equal(out, "ab-4242");
    /* One byte over, in a literal, a pid, a host, a variable. */
    assert_int_equal(expand("abcdefgh", "h", out, sizeof out), -1);
    assert_string_equal(out, "abcdefg");
    assert_int_equal(expand("abc-%p", "h", out, sizeof out), -1);
    assert_string_equal(out, "abc-424");
    assert_int_equal(expand("%h", "node-eight", out, sizeof out), -1);
    assert_string_equal(out, "node-ei");
    assert_int_equal(expand("r%q{JOB}.j", "h", out, sizeof out), -1);
    assert_string_equal(out, "rtrain.");
    assert_int_equal(expand("%%%%%%%%%%%%%%%%", "h", out, sizeof out), -1);
    assert_string_equal(out, "%%%%%%%");
    /* Tiny buffers. */
    assert_int_equal(expand("", "h", out, 1), 0);
    assert_string_equal(out, "");
    assert_int_equal(expand("a", "h", out, 1), -1);
    assert_string_equal(out, "");
    out[0] = 'z';
    assert_int_equal(expand("a", "h", out, 0), -1);
    assert_int_equal(out[0], 'z'); /* nothing written */
    assert_int_equal(expand("", "h", out, 0), -1);

    /* PATH_MAX, as the library uses it. */
    static char tmpl[PATH_MAX + 8], big[PATH_MAX];
    memset(tmpl, 'x', PATH_MAX - 1);
    tmpl[PATH_MAX - 1] = '\0';
    assert_int_equal(expand(tmpl, "h", big, sizeof big), 0);
    assert_int_equal(strlen(big), PATH_MAX - 1);
    memcpy(tmpl + PATH_MAX - 3, "%p", 3);
    assert_int_equal(expand(tmpl, "h", big, sizeof big), -1);
    assert_int_equal(strlen(big), PATH_MAX - 1);
    assert_string_equal(captured, "");
}

static void test_hostname(void **state)
{
    char want[256], buf[256], small[4];
    if (gethostname(want, sizeof want) != 0 || want[0] == '\0')
        strcpy(want, OUTPATH_UNKNOWN_HOST);
    want[sizeof want - 1] = '\0';
    assert_ptr_equal(outpath_hostname(buf, sizeof buf), buf);
    assert_string_equal(buf, want);
    outpath_hostname(small, sizeof small);
    assert_true(strlen(small) < sizeof small);
    assert_string_equal(outpath_hostname(NULL, 0), OUTPATH_UNKNOWN_HOST);
}

/* outpath_resolve: a relative template in the start directory (its % kept as such), then
 * expanded; an absolute one as it is; NULL or empty dir: the template alone. */
static void test_resolve(void **state)
{
    char out[64];

    assert_int_equal(outpath_resolve("KTIME_OUTPUT", "t-%p.json", "/start/50%", 42, "h", out,
                                     sizeof out, fake_getenv), 0);
    assert_string_equal(out, "/start/50%/t-42.json");
    assert_int_equal(outpath_resolve("KTIME_OUTPUT", "/abs/%h.txt", "/start", 42, "h", out,
                                     sizeof out, fake_getenv), 0);
    assert_string_equal(out, "/abs/h.txt");
    assert_int_equal(outpath_resolve("KTIME_OUTPUT", "rel", NULL, 1, "h", out, sizeof out,
                                     fake_getenv), 0);
    assert_string_equal(out, "rel");
    assert_int_equal(outpath_resolve("KTIME_OUTPUT", "a-rather-long-name-%p.json",
                                     "/a/very/long/start/dir", 1, "h", out, 16, fake_getenv), -1);
}

/* The warnings of KTIME_TRACE's or KTIME_DUMP_SAMPLES's template name that setting, not
 * KTIME_OUTPUT, and list every placeholder. */
static void test_resolve_names_its_setting(void **state)
{
    (void)state;
    resolve_var = "KTIME_TRACE";
    expands_with_warning("t-%x.json", "t-%x.json", "ktime: warning: KTIME_TRACE: '%x'",
                         "%p, %h, %r, %l, %q{NAME}, %%", NULL);
    resolve_var = "KTIME_DUMP_SAMPLES";
    expands_with_warning("s-%q{NOPE}.txt", "s-.txt",
                         "ktime: warning: KTIME_DUMP_SAMPLES: %q{NOPE}", "not set", NULL);
    resolve_var = NULL;
    expands_with_warning("r-%x.json", "r-%x.json", "%p, %h, %r, %l, %q{NAME}, %%", NULL);
}

/* The job's id: the first launcher's variable set, SLURM's with its step. */
static void test_job(void **state)
{
    static const char *const torchrun[] = { "TORCHELASTIC_RUN_ID", "abc", "SLURM_JOB_ID", "77",
                                            NULL };
    static const char *const slurm[] = { "TORCHELASTIC_RUN_ID", "", "SLURM_JOB_ID", "77",
                                         "SLURM_STEP_ID", "2", NULL };
    static const char *const slurm_batch[] = { "SLURM_JOB_ID", "77", NULL };
    static const char *const pmix[] = { "PMIX_NAMESPACE", "prterun-n1-123@1", NULL };
    static const char *const ompi4[] = { "OMPI_MCA_ess_base_jobid", "1234", NULL };
    static const char *const none[] = { "RANK", "1", NULL };
    char buf[64], tiny[4];

    table = torchrun;
    assert_string_equal(outpath_job(buf, sizeof buf, table_getenv), "abc");
    table = slurm;
    assert_string_equal(outpath_job(buf, sizeof buf, table_getenv), "77.2");
    table = slurm_batch;
    assert_string_equal(outpath_job(buf, sizeof buf, table_getenv), "77");
    table = pmix;
    assert_string_equal(outpath_job(buf, sizeof buf, table_getenv), "prterun-n1-123@1");
    assert_string_equal(outpath_job(tiny, sizeof tiny, table_getenv), "prt");
    table = ompi4;
    assert_string_equal(outpath_job(buf, sizeof buf, table_getenv), "1234");
    table = none;
    assert_null(outpath_job(buf, sizeof buf, table_getenv));
}

/* %r found, replaced, and every placeholder as a glob's '*'. */
static void test_rank_pattern(void **state)
{
    char out[128];

    assert_true(outpath_names_rank("run-%r.json"));
    assert_true(outpath_names_rank("%h/%q{X}-%r"));
    assert_false(outpath_names_rank("run-%%r.json"));
    assert_false(outpath_names_rank("run-%p.json"));
    assert_false(outpath_names_rank("run-%q{r}.json"));
    assert_int_equal(outpath_with_rank("d%%r/%h-%r.%q{r}.json", "all", out, sizeof out), 0);
    assert_string_equal(out, "d%%r/%h-all.%q{r}.json");
    assert_int_equal(outpath_with_rank("%r", "5%", out, sizeof out), 0);
    assert_string_equal(out, "5%%");
    assert_int_equal(outpath_with_rank("long-%r", "all", out, 6), -1);
    assert_int_equal(outpath_glob("/a[1]/k*-%h-%r-%p%l.%q{J}%%x?", out, sizeof out), 0);
    assert_string_equal(out, "/a\\[1]/k\\*-*-*-**.*%x\\?");
    assert_int_equal(outpath_glob("%q{}-%z-%", out, sizeof out), 0);
    assert_string_equal(out, "%q{}-%z-%"); /* kept as written: no placeholders */
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_no_placeholder),
        cmocka_unit_test(test_pid),
        cmocka_unit_test(test_host),
        cmocka_unit_test(test_env),
        cmocka_unit_test(test_rank),
        cmocka_unit_test(test_job),
        cmocka_unit_test(test_rank_pattern),
        cmocka_unit_test(test_per_process),
        cmocka_unit_test(test_env_unset_warns_naming_it),
        cmocka_unit_test(test_percent_escape),
        cmocka_unit_test(test_unknown_placeholder_kept),
        cmocka_unit_test(test_bad_env_placeholder_kept),
        cmocka_unit_test(test_too_long),
        cmocka_unit_test(test_resolve),
        cmocka_unit_test(test_resolve_names_its_setting),
        cmocka_unit_test(test_hostname),
    };
    log_set_level(LOG_WARN);
    cmocka_set_message_output(CM_OUTPUT_TAP);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
