/* state.c - the process-wide state of ktime (state.h). */
#include "ac_config.h" /* autoconf: _GNU_SOURCE */
#include "state.h"

struct ktime_state kt = {
    .setup_lock = PTHREAD_MUTEX_INITIALIZER,
};
