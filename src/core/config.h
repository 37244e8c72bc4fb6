/* config.h - every ktime setting in one struct, read once from the environment; the struct,
 * the parsing and the settings' words all come from settings.def. */
#ifndef KTIME_CONFIG_H
#define KTIME_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

#include "fields.h" /* RM_COMM_DEFAULT: KTIME_COMM's default */
#include "log.h" /* enum log_level: KTIME_LOG's values */

/* KTIME_FORMAT (or KTIME_OUTPUT's .json/.csv suffix). */
enum report_format { FORMAT_TEXT, FORMAT_JSON, FORMAT_CSV };

/* KTIME_GATE: whether a timed launch's stream is held until the launch is queued. */
enum gate_mode {
    GATE_OFF,  /* never: a launch reaching an idle stream also times its submission */
    GATE_ON,   /* every timed launch (but a kernel's first in a context) */
    GATE_AUTO  /* only where the stream may be idle; elsewhere the launch is checked after
                * it is queued instead, and dropped if its start event had already fired */
};

/* KTIME_TIMER: what measures a kernel's time. */
enum timer_kind {
    TIMER_EVENTS, /* a CUDA event pair around each launch (the user's method) */
    TIMER_CUPTI,  /* CUPTI activity records: the hardware's start and end of each kernel */
    TIMER_BOTH    /* both for every timed launch: the report shows their difference */
};

/* KTIME_CAPTURE: which launches are timed. */
enum capture_mode {
    CAPTURE_ALL,          /* every launch (the default) */
    CAPTURE_PROFILER_API, /* only those between cuProfilerStart and cuProfilerStop */
    CAPTURE_NVTX          /* only those made while a range of capture_name is open (any thread) */
};

/* KTIME_GROUP: the text and CSV reports' rows. */
enum group_mode {
    GROUP_NAME, /* a row per kernel (and GPU) */
    GROUP_SHAPE /* and under it a row per launch shape */
};

/* KTIME_START: whether launches are timed from the start. */
enum start_mode {
    START_ON,     /* timed from the start */
    START_PAUSED  /* counted, not timed, until `ktime ctl PID on` */
};

/* KTIME_RANGES: which of the ranges open on a launch's thread the launch belongs to. */
enum range_attribution { RANGES_INNERMOST, RANGES_OUTERMOST };

/* KTIME_BUSY: whether the GPUs' busy time is measured. */
enum busy_mode {
    BUSY_AUTO, /* with CUPTI's records only (KTIME_TIMER=cupti or both): exact, and free */
    BUSY_ON,   /* with events too: each sample placed on the timeline (a second elapsed-time
                * call per sample, a reference event per context), approximately */
    BUSY_OFF
};

/* KTIME_COMM: which kernels are communication. */
enum comm_mode {
    COMM_AUTO,  /* NCCL's, NVSHMEM's, MSCCL's and RCCL's, by name (COMM_AUTO_PATTERN) */
    COMM_OFF,   /* none */
    COMM_MATCH  /* those whose mangled name matches comm_pattern (POSIX extended, any case) */
};
#define COMM_AUTO_PATTERN RM_COMM_DEFAULT


/* KTIME_<ID>'s index in config_settings[]: SETTING_WARMUP, SETTING_OUTPUT, ... */
enum setting_id {
#define SETTING_BOOL(ID, ...) SETTING_##ID,
#define SETTING_LONG(ID, ...) SETTING_##ID,
#define SETTING_ENUM(ID, ...) SETTING_##ID,
#define SETTING_PATH(ID, ...) SETTING_##ID,
#include "settings.def"
    CONFIG_NSETTINGS
};

/* The defaults of the settings that have one: CONFIG_DEFAULT_WARMUP, ... */
enum {
#define SETTING_BOOL(ID, field, def, ...) CONFIG_DEFAULT_##ID = (def),
#define SETTING_LONG(ID, field, meta, def, ...) CONFIG_DEFAULT_##ID = (def),
#define SETTING_ENUM(ID, field, type, meta, def, ...) CONFIG_DEFAULT_##ID = (def),
#include "settings.def"
};

/* Where a setting's value came from (struct config's origin[]). */
enum config_origin {
    ORIGIN_DEFAULT,  /* not set: the default */
    ORIGIN_ENV,      /* the environment */
    ORIGIN_OPTION,   /* the environment, set there by a ktime launcher option */
    ORIGIN_LAUNCHER, /* the environment, set there by the ktime launcher as its default */
    ORIGIN_DERIVED,  /* from another setting (KTIME_FORMAT from KTIME_OUTPUT's suffix) */
    ORIGIN_OLD_NAME, /* the environment, under the setting's earlier name (KTIME_RANGE) */
};
/* A setting's origin in struct config: where the value in force came from, and where a
 * value that was refused (a warning said so) came from, ORIGIN_DEFAULT when none was. */
#define CONFIG_ORIGIN(c, id) ((c)->origin[id] & 15)
#define CONFIG_REFUSED(c, id) ((c)->origin[id] >> 4)

struct config {
#define SETTING_BOOL(ID, field, ...) bool field;
#define SETTING_LONG(ID, field, ...) long field;
#define SETTING_ENUM(ID, field, type, ...) enum type field;
#define SETTING_PATH(ID, field, ...) const char *field; /* owned copy, or NULL */
#define SETTING_PARAM(ID, field, ...) const char *field; /* owned copy, or NULL */
#include "settings.def"
    /* KTIME_ALSO_OUTPUT's format, from its suffix: .json, .csv, else text. */
    enum report_format also_format;
    /* Each setting's origins, by enum setting_id (CONFIG_ORIGIN, CONFIG_REFUSED). */
    unsigned char origin[CONFIG_NSETTINGS];
};

/* A setting's type (settings.def's SETTING_BOOL, _LONG, _ENUM, _PATH). */
enum setting_type { SETTING_TYPE_BOOL, SETTING_TYPE_LONG, SETTING_TYPE_ENUM, SETTING_TYPE_PATH };

/* One setting, as settings.def declares it. */
struct setting {
    const char *name;             /* "KTIME_WARMUP" */
    enum setting_type type;
    size_t offset;                /* of its field in struct config */
    const char *meta;             /* its value in the docs: N, FILE, MODE; "0|1" for a boolean */
    long def, lo, hi;             /* the default (not a path's); a long's range */
    const char *unset;            /* a path: what happens when it is unset */
    const char *doc;              /* what it does, in one line */
    const char *report_key;       /* the JSON report's member that shows it, or NULL */
    bool bool_words;              /* an enum: the boolean words are accepted too, */
    int yes, no;                  /* giving these values */
    size_t param_offset;          /* an enum: the field of its word's parameter, */
    const char *param_meta;       /* NULL when no word takes one */
    const char *param_noun;
    const char *launcher_default; /* what the ktime launcher sets it to when unset, or NULL */
    const char *old_name;         /* its earlier name, read when it is unset, or NULL */
};

/* Every setting, in settings.def's order (index: enum setting_id). */
extern const struct setting config_settings[CONFIG_NSETTINGS];

/* An enum setting's word for one of its values; the first of a value is the one printed. */
struct setting_word {
    enum setting_id id;
    int value;
    const char *word; /* ending in ':' when a parameter follows it (struct setting's param_*) */
};
extern const struct setting_word config_words[];
extern const size_t config_nwords;

/* The word of each value of each enum setting ("events" for TIMER_CUPTI's "cupti", ...): the
 * one conversion from value to text, for every message and report that prints a setting.
 * A value that has no word gives "?". Any thread. */
#define SETTING_ENUM(ID, field, type, ...) const char *type##_name(enum type value);
#include "settings.def"

/* The word of value for the enum setting id, or NULL when it has none. Any thread. */
const char *config_word(enum setting_id id, int value);

/* The value whose word, for the enum setting id, is word (any case): the way back from a
 * printed word (a saved report's "cupti") to its value. Returns false, *value untouched, when
 * word is none of them. Any thread. */
bool config_word_value(enum setting_id id, const char *word, int *value);

/* The setting named by the n bytes at name, or NULL. */
const struct setting *config_find(const char *name, size_t n);

/* Setting id's value in c as text, into buf (n bytes, always terminated): a number, a word
 * (with its parameter: "nvtx:step"), 0 or 1, a path, or "" for a path left unset. Returns
 * buf. */
const char *config_value(const struct config *c, enum setting_id id, char *buf, size_t n);

/* Where setting id's value in c came from, as words: "default", "environment", "launcher
 * option", "launcher default", "from KTIME_OUTPUT's suffix"; with "; refused: ..." when a
 * value given was refused. Into buf (n bytes); returns buf. */
const char *config_origin_text(const struct config *c, enum setting_id id, char *buf, size_t n);

/* What KTIME_COMM selects: the pattern kernel names are matched against, or NULL (none). */
const char *config_comm_pattern(const struct config *c);

/* Fills *c with the defaults, then with what getenv_fn() returns for each KTIME_*
 * variable. A bad value gets one "ktime: warning:" line naming the variable and the
 * default used. Never fails. getenv_fn is getenv in the library, a table in tests.
 * KTIME_LAUNCHER_SET (the launcher's, when it is asked for the settings) says which
 * variables the launcher set: words option:NAME or default:NAME. Call once, at start-up,
 * before other ktime threads exist. */
void config_load(struct config *c, const char *(*getenv_fn)(const char *name));

/* Frees the copies c owns (paths, parameters) and sets them to NULL. The library never
 * calls it (its config lasts as long as the process); the tests and tools do. */
void config_free(struct config *c);

/* Calls put(arg, line) for each setting, in settings.def's order: one line "NAME=VALUE
 * (ORIGIN)" each (config_value, config_origin_text). */
void config_describe(const struct config *c, void (*put)(void *arg, const char *line),
                     void *arg);

/* KTIME_DUMP_CONFIG=1: config_describe's lines on stderr, each prefixed "ktime: ", whatever
 * KTIME_LOG says when loud, else only at KTIME_LOG=info. Call at start-up. */
void config_dump(const struct config *c, bool loud);

/* Every KTIME_* name anything of ktime reads (the library's settings, then the launcher's and
 * the tests' own), NULL ended: the one table the unknown-name warning checks against. */
extern const char *const config_known_names[];

/* Whether the n bytes at name are a known name. */
bool config_is_known(const char *name, size_t n);

/* The known name closest to the n bytes at name (optimal string alignment distance: an
 * insertion, deletion, substitution or swap of two neighbours costs 1), when it is close
 * enough to be a likely misspelling (distance at most 2, or a third of the name's length
 * after "KTIME_"), else NULL; near a setting's earlier name, the setting's name. Any thread. */
const char *config_closest(const char *name, size_t n);

/* The number of KTIME_* names in envp (NAME=VALUE strings, NULL ended) that are not known. */
int config_count_unknown(char *const *envp);

/* One message per unknown KTIME_* name in envp, naming the closest known one where there is
 * one ("did you mean KTIME_WARMUP?"): a warning when loud, else at KTIME_LOG=info. Call
 * once, at start-up, after config_load(). */
void config_warn_unknown(char *const *envp, bool loud);

#endif
