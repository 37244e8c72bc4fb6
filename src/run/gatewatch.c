/* gatewatch.c - the launch-gate watchdog thread. It makes no CUDA calls, so that nothing a
 * blocked driver holds can hold it up. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "gatewatch.h"

#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "state.h"

#define GATE_WATCH_INTERVAL_NS 5000000L /* a gate closed at two passes is opened: 5-10 ms */
#define GATE_WATCH_IDLE_PASSES 2        /* passes with no gate closed before it sleeps */

_Atomic uint32_t gatewatch_asleep;
static _Atomic uint64_t passes, sleeps;

void gatewatch_wake(void)
{
    if (atomic_exchange(&gatewatch_asleep, 0))
        syscall(SYS_futex, &gatewatch_asleep, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
}

void gatewatch_counts(uint64_t *p, uint64_t *s)
{
    *p = atomic_load(&passes);
    *s = atomic_load(&sleeps);
}

/* One look at every pool's gates: opens those closed at the last look too. Returns how
 * many gates are closed now; *opened how many it opened. */
static uint32_t watch_pass(uint32_t *opened)
{
    uint32_t n = atomic_load_explicit(&kt.drain.npools, memory_order_acquire), closed = 0;

    *opened = 0;
    for (uint32_t i = 0; i < n; i++)
        *opened += pool_gate_watch(kt.drain.pools[i], &closed);
    atomic_fetch_add_explicit(&passes, 1, memory_order_relaxed);
    return closed;
}

static void *gate_watchdog(void *arg)
{
    int idle = 0;

    (void)arg;
    for (;;) {
        struct timespec ts = { 0, GATE_WATCH_INTERVAL_NS };
        uint32_t opened;

        nanosleep(&ts, NULL);
        idle = watch_pass(&opened) ? 0 : idle + 1;
        if (opened)
            log_debug("opened %u launch gate(s) held by a launch blocked in the driver", opened);
        if (idle < GATE_WATCH_IDLE_PASSES)
            continue;
        /* No gate in use for two passes: sleep until a launch closes one. The flag is set
         * before the last look, and a launch sets its gate before it reads the flag, so
         * one of the two sees the other (both with full fences). */
        atomic_store(&gatewatch_asleep, 1);
        if (watch_pass(&opened)) {
            atomic_store(&gatewatch_asleep, 0);
            idle = 0;
            continue;
        }
        atomic_fetch_add_explicit(&sleeps, 1, memory_order_relaxed);
        while (atomic_load(&gatewatch_asleep))
            syscall(SYS_futex, &gatewatch_asleep, FUTEX_WAIT_PRIVATE, 1, NULL, NULL, 0);
        idle = 0;
    }
    return NULL;
}

bool gatewatch_start(void)
{
    static bool started;
    pthread_attr_t attr;
    pthread_t t;
    sigset_t all, old;

    if (started)
        return true;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, 64 * 1024);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    if (pthread_create(&t, &attr, gate_watchdog, NULL) == 0) {
        started = true;
        pthread_setname_np(t, "ktime-gatewatch");
    } else {
        log_warn("could not start the gate watchdog; launch gates are off");
    }
    pthread_attr_destroy(&attr);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    return started;
}
