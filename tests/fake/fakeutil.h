/* fakeutil.h - helpers both fakes (fakecuda.c, fakecupti.c) compile in: numeric knobs from the
 * environment, and the lock their destructors take to write the count file. Static: each
 * library keeps its own copy.
 */
#ifndef FAKEUTIL_H
#define FAKEUTIL_H

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* The value of environment variable name, a number 0..max; dflt when unset or empty. A bad
 * value is reported on stderr, prefixed "prog: ", and dflt used. */
static uint64_t fake_env_u64(const char *prog, const char *name, uint64_t dflt, uint64_t max)
{
    const char *s = getenv(name);
    char *end;
    unsigned long long v;
    if (!s || !*s)
        return dflt;
    errno = 0;
    v = strtoull(s, &end, 10);
    if (errno || *end || v > max) {
        fprintf(stderr, "%s: bad %s='%s', using %" PRIu64 "\n", prog, name, s, dflt);
        return dflt;
    }
    return v;
}

/* For a destructor: another thread may still be inside the fake at exit, or stuck in a
 * client's callback. Tries mu for about 200 ms, never forever; returns whether it is held. */
static int fake_lock_at_exit(pthread_mutex_t *mu)
{
    int i;
    for (i = 0; i < 200; i++) {
        if (pthread_mutex_trylock(mu) == 0)
            return 1;
        usleep(1000);
    }
    return 0;
}

#endif
