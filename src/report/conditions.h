/* conditions.h - the conditions of the run that decide whether a kernel time can be trusted
 * (other processes on the GPU, MPS, clocks, throttling, temperature), as plain data: the
 * NVML sampler (nvml.c) fills it one reading at a time, and the report model takes its
 * section from it (build_cond.c). No NVML or CUDA types here. */
#ifndef KTIME_CONDITIONS_H
#define KTIME_CONDITIONS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define COND_MAX_DEVICES 16   /* devices whose conditions are kept; more: not checked */
#define COND_MAX_OTHERS 32    /* other processes named per device; more are only counted */
#define COND_NAME 32          /* a process name (/proc/PID/comm is at most 15 bytes) */

/* The clock event ("throttle") reasons, bit i of NVML's mask being 1 << i. */
enum cond_reason {
    COND_R_GPU_IDLE,
    COND_R_APP_CLOCKS,       /* applications (or locked) clocks setting */
    COND_R_SW_POWER_CAP,
    COND_R_HW_SLOWDOWN,
    COND_R_SYNC_BOOST,
    COND_R_SW_THERMAL,
    COND_R_HW_THERMAL,
    COND_R_HW_POWER_BRAKE,
    COND_R_DISPLAY_CLOCKS,
    COND_NREASONS
};
#define COND_POWER_MASK ((1u << COND_R_SW_POWER_CAP) | (1u << COND_R_HW_POWER_BRAKE))
#define COND_THERMAL_MASK ((1u << COND_R_SW_THERMAL) | (1u << COND_R_HW_THERMAL))

/* The reasons that slow a kernel down (not idle, an applications-clocks setting the user made,
 * or a display clock). */
#define COND_SLOW_MASK                                                                   \
    (COND_POWER_MASK | COND_THERMAL_MASK | (1u << COND_R_HW_SLOWDOWN) |                 \
     (1u << COND_R_SYNC_BOOST))

struct cond_proc_id {
    long pid;
    char name[COND_NAME];    /* "" when /proc/PID/comm could not be read */
};

/* One reading of one device. A figure whose `*_ok` is false was not read (NVML lacks the
 * function, or it failed). */
struct cond_sample {
    double t;                /* seconds, CLOCK_MONOTONIC */
    bool procs_ok;
    int nprocs;              /* distinct pids in the compute and graphics lists, ours too */
    bool self_listed;        /* our own pid is among them */
    int nothers;             /* entries other than our pid (at most COND_MAX_OTHERS kept) */
    struct cond_proc_id others[COND_MAX_OTHERS];
    bool sm_ok, mem_ok;
    unsigned sm_mhz, mem_mhz;
    bool reasons_ok;
    uint64_t reasons;        /* NVML's clock event reasons mask */
    bool temp_ok;
    int temp_c;
};

/* Another process seen on a device, over the run. */
struct cond_proc {
    long pid;
    char name[COND_NAME];
    bool at_start, at_end;
    unsigned samples;        /* readings it was in */
};

struct cond_device {
    int ordinal;             /* CUDA's ordinal, as the report's devices */
    char pci_bus_id[32];
    bool mapped;             /* an NVML device was found for it (by PCI bus id or UUID) */
    char why[160];           /* when not mapped: why */
    unsigned samples;
    double first_t, last_t;
    /* other processes */
    unsigned proc_samples;   /* readings of the process lists */
    int others_at_start, others_at_end, others_max; /* -1: not read */
    bool pid_mismatch;       /* our pid was not in a list that had entries: the pids are of
                              * another pid namespace, so the others are only counted */
    int nothers;
    struct cond_proc others[COND_MAX_OTHERS];
    bool others_truncated;
    /* clocks */
    unsigned sm_samples, mem_samples;
    unsigned sm_min, sm_max, mem_min, mem_max;
    int app_sm_mhz, default_app_sm_mhz; /* application clocks: -1 not read */
    /* throttling: the time between readings, counted toward the reasons the later one read */
    unsigned reason_samples;
    bool have_prev_reasons;
    double prev_reasons_t;
    uint64_t reasons_seen;
    double reason_s[COND_NREASONS];
    double power_s, thermal_s; /* any power reason / any thermal reason */
    /* temperature */
    unsigned temp_samples;
    int temp_min, temp_max;
    int persistence;         /* -1 not read, 0 off, 1 on */
    int compute_mode;        /* -1 not read, else NVML's: 0 default, 1 exclusive thread,
                              * 2 prohibited, 3 exclusive process */
};

struct conditions {
    bool checked;            /* NVML answered */
    char reason[160];        /* when not checked: why */
    char library[256];       /* the libnvidia-ml loaded */
    long interval_ms;        /* between readings during the run */
    int mps;                 /* -1 not checked, 0 no evidence, 1 runs under MPS */
    char mps_evidence[256];  /* what says so */
    int ndev;
    struct cond_device dev[COND_MAX_DEVICES];
};

/* Empties c: not checked, reason "". Any thread that owns c. */
void cond_init(struct conditions *c);

/* The entry of CUDA device `ordinal`, added (unmapped, nothing read) when new; NULL when
 * COND_MAX_DEVICES are in use. */
struct cond_device *cond_device(struct conditions *c, int ordinal);

/* The entry of `ordinal`, or NULL. */
const struct cond_device *cond_find(const struct conditions *c, int ordinal);

/* Folds one reading into d. `end`: the reading at the end of the run (the others seen in it
 * are marked at_end). Readings come in time order. */
void cond_add_sample(struct cond_device *d, const struct cond_sample *s, bool end);

#endif
