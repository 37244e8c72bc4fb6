/* signals.c - writing the report when a terminating signal ends the program. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "signals.h"

#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "state.h"

static void (*_Atomic report_writer)(void);

static const int report_signals[] = { SIGINT, SIGTERM, SIGHUP };
#define NSIGNALS (sizeof report_signals / sizeof report_signals[0])

static void on_signal(int sig)
{
    int none = 0;

    if (getpid() != kt.owner || atomic_load(&kt.phase) != PHASE_ON || !kt.drain.started ||
        !atomic_compare_exchange_strong(&kt.pending_signal, &none, sig)) {
        /* Not the timing process, nothing to wait for, or a second signal: die as the
         * program would have. */
        signal(sig, SIG_DFL);
        raise(sig);
    }
}

/* Runs on the drain thread at every pass: a terminating signal arrived, write the report,
 * then let the signal do what it would have done. */
static void drain_tick(void)
{
    int sig = atomic_load(&kt.pending_signal);

    void (*write_report)(void) = atomic_load(&report_writer);

    if (!sig)
        return;
    if (write_report)
        write_report();
    signal(sig, SIG_DFL);
    kill(getpid(), sig);
}

void signals_install(void (*write_report)(void))
{
    atomic_store(&report_writer, write_report);
    kt.drain.tick = drain_tick;
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction old, sa;
        /* Only where the program left the default (terminate): its own handlers win. */
        if (sigaction(report_signals[i], NULL, &old) != 0 || old.sa_handler != SIG_DFL ||
            (old.sa_flags & SA_SIGINFO))
            continue;
        memset(&sa, 0, sizeof sa);
        sa.sa_handler = on_signal;
        sa.sa_flags = SA_RESTART;
        sigemptyset(&sa.sa_mask);
        sigaction(report_signals[i], &sa, NULL);
    }
}

void signals_restore_default(void)
{
    for (size_t i = 0; i < NSIGNALS; i++) {
        struct sigaction cur;
        if (sigaction(report_signals[i], NULL, &cur) == 0 && cur.sa_handler == on_signal)
            signal(report_signals[i], SIG_DFL);
    }
}
