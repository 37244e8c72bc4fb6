/* ktime-settings.c - libktime's settings (src/core/settings.def) as text: the settings in
 * force for this environment (`ktime --config`), and the documentation blocks that
 * tools/settings.sh keeps in tools/ktime.in, docs/usage.md, docs/settings.md and the man pages.
 *
 * usage: ktime-settings --dump          the settings in force, one "NAME=VALUE (ORIGIN)" a line
 *        ktime-settings --block FILE    the generated block of FILE (ktime.in, usage.md,
 *                                       settings.md, libktime.7, ktime.1)
 *        ktime-settings --names         the variables, one a line
 *        ktime-settings --report-keys   "NAME KEY" for each setting the JSON report shows
 * Writes to stdout; exit status 0, or 2 on a usage error. Messages about the environment's
 * values (a bad KTIME_WARMUP) go to stderr, as the library writes them. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"

/* The help's layout: a setting's "NAME=META" in two columns of indent, its text from column
 * HELP_TEXT_COL, lines at most HELP_WIDTH wide. */
#define HELP_INDENT 2
#define HELP_TEXT_COL 27
#define HELP_WIDTH 80

/* "a, b or c": the words of enum setting id (a word taking a parameter with its META), into
 * buf, each between pre and post. */
static const char *words_of(enum setting_id id, const char *pre, const char *post, char *buf,
                            size_t n)
{
    const struct setting *st = &config_settings[id];
    size_t count = 0, k = 0, seen = 0;

    for (size_t i = 0; i < config_nwords; i++)
        count += config_words[i].id == id;
    buf[0] = '\0';
    for (size_t i = 0; i < config_nwords && k < n; i++) {
        const struct setting_word *w = &config_words[i];
        size_t len = strlen(w->word);
        if (w->id != id)
            continue;
        seen++;
        k += (size_t)snprintf(buf + k, n - k, "%s%s%s%s%s",
                              seen == 1 ? "" : seen == count ? " or " : ", ", pre, w->word,
                              len && w->word[len - 1] == ':' && st->param_meta ? st->param_meta
                                                                               : "",
                              post);
    }
    return buf;
}

/* The default of setting id as text: a number, a word, 0 or 1; a path's UNSET. */
static const char *default_of(enum setting_id id, char *buf, size_t n)
{
    const struct setting *st = &config_settings[id];
    const char *w;

    switch (st->type) {
    case SETTING_TYPE_BOOL:
    case SETTING_TYPE_LONG:
        snprintf(buf, n, "%ld", st->def);
        break;
    case SETTING_TYPE_ENUM:
        w = config_word(id, (int)st->def);
        snprintf(buf, n, "%s", w ? w : "?");
        break;
    case SETTING_TYPE_PATH:
        snprintf(buf, n, "%s", st->unset);
        break;
    }
    return buf;
}

/* The help's text of setting id: its words first for an enum, then DOC, then [default]. */
static void help_text(enum setting_id id, char *buf, size_t n)
{
    const struct setting *st = &config_settings[id];
    char words[256], def[256];
    int k = 0;

    if (st->type == SETTING_TYPE_ENUM)
        k = snprintf(buf, n, "%s: ", words_of(id, "", "", words, sizeof words));
    default_of(id, def, sizeof def);
    if (st->launcher_default)
        snprintf(buf + k, n - (size_t)k, "%s [this launcher: %s; the library alone: %s]",
                 st->doc, st->launcher_default, def);
    else
        snprintf(buf + k, n - (size_t)k, "%s [%s]", st->doc, def);
}

/* Prints text wrapped at HELP_WIDTH, every line but the first indented to HELP_TEXT_COL (the
 * first starts at column col). */
static void wrap(const char *text, int col)
{
    const char *p = text;

    while (*p) {
        int room = HELP_WIDTH - col;
        const char *end = p, *brk = NULL;
        while (*end && end - p <= room) {
            if (*end == ' ')
                brk = end;
            end++;
        }
        if (!*end && end - p <= room)
            brk = end;
        else if (!brk)
            brk = end; /* a word longer than a line: not broken */
        printf("%.*s\n", (int)(brk - p), p);
        p = *brk ? brk + 1 : brk;
        if (*p)
            printf("%*s", HELP_TEXT_COL, "");
        col = HELP_TEXT_COL;
    }
}

/* tools/ktime.in: the help's settings (a quoted here-document, so nothing in it is expanded)
 * and the launcher's defaults. */
static void block_launcher(void)
{
    puts("settings_help() {\n    cat <<'SETTINGS'");
    puts("Settings, read by the library from the environment [default]:");
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char head[128], text[1024];
        int k = snprintf(head, sizeof head, "%*s%s=%s", HELP_INDENT, "", st->name, st->meta);
        help_text(id, text, sizeof text);
        if (k < HELP_TEXT_COL) {
            printf("%-*s", HELP_TEXT_COL, head);
            wrap(text, HELP_TEXT_COL);
        } else {
            printf("%s\n%*s", head, HELP_TEXT_COL, "");
            wrap(text, HELP_TEXT_COL);
        }
        if (st->old_name) /* a line of its own, so that the name is never split from it */
            printf("%*s(earlier name: %s)\n", HELP_TEXT_COL, "", st->old_name);
    }
    puts("SETTINGS\n}");
    puts("# The settings this launcher gives a value when they are unset or empty; each is "
         "named in\n# $launcher_set as default:NAME (KTIME_LAUNCHER_SET, for `ktime --config`).");
    puts("launcher_defaults() {");
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        if (!st->launcher_default)
            continue;
        printf("    if [ -z \"${%s:-}\" ]; then\n        %s=%s\n        export %s\n"
               "        launcher_set=\"$launcher_set default:%s\"\n    fi\n",
               st->name, st->name, st->launcher_default, st->name, st->name);
    }
    puts("    :\n}");
}

/* Prints s with the characters Markdown would take for table syntax escaped. */
static void md(const char *s)
{
    for (; *s; s++) {
        if (*s == '|' || *s == '\\')
            putchar('\\');
        putchar(*s);
    }
}

/* docs/usage.md: variable | default | meaning, one short line each. */
static void block_usage(void)
{
    puts("| variable | default | meaning |\n| --- | --- | --- |");
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char def[256], words[256];
        printf("| `%s` | ", st->name);
        default_of(id, def, sizeof def);
        if (st->type == SETTING_TYPE_PATH) {
            md(def);
        } else {
            printf("`%s`", def);
            if (st->launcher_default)
                printf(" (`%s` under the launcher)", st->launcher_default);
        }
        fputs(" | ", stdout);
        if (st->type == SETTING_TYPE_ENUM) {
            md(words_of(id, "`", "`", words, sizeof words));
            fputs(": ", stdout);
        }
        md(st->doc);
        if (st->old_name)
            printf(" (earlier name: `%s`, still read)", st->old_name);
        puts(" |");
    }
}

/* docs/settings.md: every setting's values, default and JSON report member. */
static void block_reference(void)
{
    puts("| variable | values | default | in the JSON report |\n| --- | --- | --- | --- |");
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char def[256], words[256];
        printf("| [`%s`](#", st->name);
        for (const char *p = st->name; *p; p++)
            putchar(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
        if (st->old_name)
            printf(") (earlier name: `%s`) | ", st->old_name);
        else
            fputs(") | ", stdout);
        switch (st->type) {
        case SETTING_TYPE_BOOL:
            fputs("`1` or `0` (`yes`/`no`, `true`/`false`, `on`/`off`)", stdout);
            break;
        case SETTING_TYPE_LONG:
            printf("%s: an integer from %ld to %ld", st->meta, st->lo, st->hi);
            break;
        case SETTING_TYPE_ENUM:
            md(words_of(id, "`", "`", words, sizeof words));
            if (st->bool_words)
                fputs(" (and `1`/`0`, `yes`/`no`, `true`/`false`)", stdout);
            break;
        case SETTING_TYPE_PATH:
            printf("%s: a file name", st->meta);
            break;
        }
        fputs(" | ", stdout);
        default_of(id, def, sizeof def);
        if (st->type == SETTING_TYPE_PATH)
            md(def);
        else
            printf("`%s`", def);
        if (st->launcher_default)
            printf(" (`%s` under the launcher)", st->launcher_default);
        if (st->report_key)
            printf(" | `%s` |\n", st->report_key);
        else
            puts(" | - |");
    }
}

/* Prints s as roff text: a backslash as \e, a hyphen as \-, a line never starting with a
 * control character. */
static void roff(const char *s)
{
    if (*s == '.' || *s == '\'')
        fputs("\\&", stdout);
    for (; *s; s++) {
        if (*s == '\\')
            fputs("\\e", stdout);
        else if (*s == '-')
            fputs("\\-", stdout);
        else
            putchar(*s);
    }
}

/* man/libktime.7: an entry per setting. */
static void block_man7(void)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++) {
        const struct setting *st = &config_settings[id];
        char def[256], words[256];
        printf(".TP\n.BI %s= ", st->name);
        roff(st->meta);
        putchar('\n');
        if (st->type == SETTING_TYPE_ENUM) {
            roff(words_of(id, "", "", words, sizeof words));
            fputs(": ", stdout);
        }
        roff(st->doc);
        if (st->type == SETTING_TYPE_LONG)
            printf("; from %ld to %ld", st->lo, st->hi);
        puts(".");
        fputs("Default: ", stdout);
        roff(default_of(id, def, sizeof def));
        if (st->launcher_default) {
            fputs("; the\n.B ktime\nlauncher sets ", stdout);
            roff(st->launcher_default);
        }
        puts(".");
        if (st->old_name)
            printf("Its earlier name, %s, is still read when %s is unset.\n",
                   st->old_name, st->name);
    }
}

/* man/ktime.1: the names, as a list in parentheses. */
static void block_man1(void)
{
    for (int id = 0; id < CONFIG_NSETTINGS; id++)
        printf("%s %s%s\n", id == 0 ? ".RB (" : ".BR", config_settings[id].name,
               id == CONFIG_NSETTINGS - 1 ? " )" : " ,");
}

static const char *env_get(const char *name)
{
    return getenv(name);
}

static void put_line(void *arg, const char *line)
{
    (void)arg;
    puts(line);
}

static int usage(void)
{
    fputs("usage: ktime-settings --dump | --names | --report-keys | --block FILE\n"
          "  FILE: ktime.in, usage.md, settings.md, libktime.7 or ktime.1\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *file;
        void (*print)(void);
    } blocks[] = {
        { "ktime.in", block_launcher },     { "usage.md", block_usage },
        { "settings.md", block_reference }, { "libktime.7", block_man7 },
        { "ktime.1", block_man1 },
    };

    if (argc == 2 && strcmp(argv[1], "--dump") == 0) {
        struct config c;
        config_load(&c, env_get);
        config_describe(&c, put_line, NULL);
        config_free(&c);
    } else if (argc == 2 && strcmp(argv[1], "--names") == 0) {
        for (int id = 0; id < CONFIG_NSETTINGS; id++)
            puts(config_settings[id].name);
    } else if (argc == 2 && strcmp(argv[1], "--report-keys") == 0) {
        for (int id = 0; id < CONFIG_NSETTINGS; id++)
            if (config_settings[id].report_key)
                printf("%s %s\n", config_settings[id].name, config_settings[id].report_key);
    } else if (argc == 3 && strcmp(argv[1], "--block") == 0) {
        const char *base = strrchr(argv[2], '/') ? strrchr(argv[2], '/') + 1 : argv[2];
        size_t i;
        for (i = 0; i < sizeof blocks / sizeof blocks[0]; i++)
            if (strcmp(base, blocks[i].file) == 0)
                break;
        if (i == sizeof blocks / sizeof blocks[0])
            return usage();
        blocks[i].print();
    } else {
        return usage();
    }
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
}
