/* fork.c - after fork(): a child whose parent used CUDA through ktime (a launch, ktime's own
 * driver calls, the drain thread) cannot use CUDA, has no drain thread and must not write the
 * parent's report, so ktime turns itself off there and gives the signals it took back their
 * default action; its inherited exit handlers then find ktime off (and another pid) and do
 * nothing. A child of a parent that never did (a worker pool's, a pre-fork server's) is a
 * process of its own: ktime starts afresh in it and it writes its own report, also when it
 * ends with _exit() as such workers do (exec.c). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "fork.h"

#include <pthread.h>
#include <time.h>
#include <unistd.h>

#include "signals.h"
#include "state.h"

static bool rearmed;

/* Whether this process, which ktime times, has started nothing CUDA-related yet: no launch
 * (which installs the exit handler), no kernel in the table, no resolved driver, no pool, no
 * drain thread. Its state is then still the constructor's, and a child can start from it. */
static bool untouched(void)
{
    return atomic_load(&kt.phase) == PHASE_ON && !atomic_load(&kt.registered) &&
           atomic_load(&kt.driver_state) == 0 && atomic_load(&kt.ktab.count) == 0 &&
           atomic_load(&kt.drain.npools) == 0 && !kt.drain.started;
}

static void on_fork_child(void)
{
    struct timespec now;

    if (!untouched()) {
        atomic_store(&kt.phase, PHASE_OFF);
        signals_restore_default();
        return;
    }
    /* The child is a process of its own from here: its pid on its report, its own start. The
     * set-up lock may have been held by another thread of the parent (which the child does
     * not have) in the middle of resolving the driver: the child's is made anew. */
    kt.owner = getpid();
    if (clock_gettime(CLOCK_REALTIME, &now) == 0)
        kt.start_unix = (double)now.tv_sec + now.tv_nsec / 1e9;
    pthread_mutex_init(&kt.setup_lock, NULL);
    rearmed = true;
}

void fork_register(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}

bool fork_rearmed(void)
{
    return rearmed;
}
