/* config.h - every ktime setting in one struct, read once from the environment. */
#ifndef KTIME_CONFIG_H
#define KTIME_CONFIG_H

#include <stdbool.h>
#include <stddef.h>

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

/* KTIME_RANGE: which launches are timed. */
enum range_mode {
    RANGE_ALL,          /* every launch (the default) */
    RANGE_PROFILER_API, /* only those between cuProfilerStart and cuProfilerStop */
    RANGE_NVTX          /* only those made while a range of range_name is open (any thread) */
};

struct config {
    bool disable;            /* KTIME_DISABLE: pure pass-through */
    long warmup;             /* KTIME_WARMUP: launches of each kernel left untimed */
    const char *output;      /* KTIME_OUTPUT: report path, NULL = stderr (owned copy) */
    enum report_format format; /* KTIME_FORMAT, or the .json/.csv suffix of KTIME_OUTPUT */
    int log_level;           /* KTIME_LOG */
    long pool_cap;           /* KTIME_POOL_CAP: event pairs per context, at most */
    long exit_wait_ms;       /* KTIME_EXIT_WAIT_MS: bound on waiting for pending events */
    long max_kernels;        /* KTIME_MAX_KERNELS: distinct kernels tracked */
    bool signals;            /* KTIME_SIGNALS: write the report on SIGINT/SIGTERM/SIGHUP */
    enum gate_mode gate;     /* KTIME_GATE: hold the stream until the launch is queued */
    enum timer_kind timer;   /* KTIME_TIMER */
    const char *cupti_lib;   /* KTIME_CUPTI_LIB: libcupti to load first (owned copy), or NULL */
    long cupti_buffer_mb;    /* KTIME_CUPTI_BUFFER_MB: activity buffers, in all */
    long sample;             /* KTIME_SAMPLE: time about one launch in this many (events) */
    bool group_shape;        /* KTIME_GROUP=shape: text and CSV rows per launch shape too */
    const char *trace;       /* KTIME_TRACE: Chrome/Perfetto trace file (owned), or NULL */
    long trace_max;          /* KTIME_TRACE_MAX: timed launches kept in the trace, at most */
    const char *dump;        /* KTIME_DUMP_SAMPLES: every timed sample, one per line (owned) */
    bool nvml;               /* KTIME_NVML: read the run's conditions through NVML */
    const char *nvml_lib;    /* KTIME_NVML_LIB: the libnvidia-ml to load (owned copy), or NULL */
    long nvml_interval_ms;   /* KTIME_NVML_INTERVAL_MS: between NVML readings */
    enum range_mode range;   /* KTIME_RANGE: time only launches inside a capture range */
    bool flush_l2;           /* KTIME_FLUSH_L2: overwrite an L2-sized buffer before each
                              * timed launch, outside its interval (cold-cache samples) */
    bool memops;             /* KTIME_MEMOPS: time copies and sets, apart from kernels */
    const char *range_name;  /* KTIME_RANGE=nvtx:NAME: NAME (owned copy), else NULL */
    bool nvtx;               /* KTIME_NVTX: be NVTX's tool (set NVTX_INJECTION64_PATH) */
    bool region_outermost;   /* KTIME_REGION=outermost: a launch belongs to its outermost range */
    const char *also_output; /* KTIME_ALSO_OUTPUT (testing aid): the same report once more,
                              * to this path (owned copy), or NULL */
    enum report_format also_format; /* its format, from its suffix: .json, .csv, else text */
};

#define CONFIG_DEFAULT_WARMUP 5
#define CONFIG_DEFAULT_POOL_CAP 16384
#define CONFIG_DEFAULT_EXIT_WAIT_MS 2000
#define CONFIG_DEFAULT_MAX_KERNELS 65536
#define CONFIG_DEFAULT_CUPTI_BUFFER_MB 8
#define CONFIG_DEFAULT_TRACE_MAX 1000000
#define CONFIG_DEFAULT_NVML_INTERVAL_MS 100

/* Fills *c with the defaults, then with what getenv_fn() returns for each KTIME_*
 * variable. A bad value gets one "ktime: warning:" line naming the variable and the
 * default used. Never fails. getenv_fn is getenv in the library, a table in tests.
 * Call once, at start-up, before other ktime threads exist. */
void config_load(struct config *c, const char *(*getenv_fn)(const char *name));

/* Every KTIME_* name anything of ktime reads (the library, the launcher, the tests), NULL
 * ended: the one table the unknown-name warning checks against. */
extern const char *const config_known_names[];

/* Whether the n bytes at name are a known name. */
bool config_is_known(const char *name, size_t n);

/* The known name closest to the n bytes at name (optimal string alignment distance: an
 * insertion, deletion, substitution or swap of two neighbours costs 1), when it is close
 * enough to be a likely misspelling (distance at most 2, or a third of the name's length
 * after "KTIME_"), else NULL. Any thread. */
const char *config_closest(const char *name, size_t n);

/* The number of KTIME_* names in envp (NAME=VALUE strings, NULL ended) that are not known. */
int config_count_unknown(char *const *envp);

/* One message per unknown KTIME_* name in envp, naming the closest known one where there is
 * one ("did you mean KTIME_WARMUP?"): a warning when loud, else at KTIME_LOG=info. Call
 * once, at start-up, after config_load(). */
void config_warn_unknown(char *const *envp, bool loud);

#endif
