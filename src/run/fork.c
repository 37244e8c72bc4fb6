/* fork.c - after fork(): CUDA belongs to the parent. The child has no drain thread and must
 * not write the parent's report, so ktime turns itself off there and gives the signals it
 * took back their default action. The child's exit handler, inherited, then finds ktime off
 * (and another pid) and does nothing. */
#include "ac_config.h" /* autoconf: _GNU_SOURCE, PACKAGE_VERSION */
#include "fork.h"

#include <pthread.h>

#include "signals.h"
#include "state.h"

static void on_fork_child(void)
{
    atomic_store(&kt.phase, PHASE_OFF);
    signals_restore_default();
}

void fork_register(void)
{
    pthread_atfork(NULL, NULL, on_fork_child);
}
