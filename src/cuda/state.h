/* state.h - the process-wide state of ktime, shared by the launch path, the lifecycle code
 * and the modules: only what every part needs (each feature module keeps its own state).
 * Defined in state.c. */
#ifndef KTIME_STATE_H
#define KTIME_STATE_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/types.h>

#include <cuda.h>

#include "config.h"
#include "drain.h"
#include "ktab.h"
#include "report.h"

enum phase {
    PHASE_OFF = 0,   /* disabled, failed to start, or a forked child: pure pass-through */
    PHASE_ON,        /* timing */
    PHASE_EXITING,   /* the report is being written */
};

#define KTIME_MAX_DEVICES 64
#define KTIME_MAX_FAILED_CTX 64

struct ktime_state {
    _Atomic int phase;
    struct config cfg;
    struct ktab ktab;
    struct drain drain;
    pthread_mutex_t setup_lock;        /* one-time set-up only: never on the steady path */
    _Atomic int driver_state;          /* 0 not tried, 1 loaded, -1 unusable */
    _Atomic int registered;            /* exit handlers installed */
    _Atomic uint64_t drops[DROP_NREASONS];
    struct report_device devices[KTIME_MAX_DEVICES];
    _Atomic int ndevices;
    pid_t owner;                        /* the process that loaded ktime */
    CUcontext failed_ctx[KTIME_MAX_FAILED_CTX]; /* contexts whose pool could not be set up */
    _Atomic uint32_t nfailed;
    _Atomic uint32_t ungated_contexts;  /* pools made without launch gates though asked for */
    /* Stream captures begun and not yet ended (the capture wrappers keep it): while it is
     * zero, a warmup launch cannot be going into a capture and is not asked. */
    _Atomic int captures;
    /* enum timer_kind in effect for new launches: KTIME_TIMER, until CUPTI fails to start or
     * is handed over to another client (then events). */
    _Atomic int timing;
    double start_unix;                  /* wall clock at start-up, seconds since the epoch */
    char *start_dir;                    /* the working directory at start-up, or NULL */
};

extern struct ktime_state kt;

/* Adds device dev (its name, the driver's version) to the report's devices, once. Under
 * the set-up lock, or at exit. */
void ktime_note_device(CUdevice dev);

#endif
