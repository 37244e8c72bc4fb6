/* reentry.h - the per-thread guard that keeps ktime from timing itself: set while ktime runs
 * on a thread, so that whatever it calls (the driver, CUPTI) passes straight through the
 * wrappers. */
#ifndef KTIME_REENTRY_H
#define KTIME_REENTRY_H

/* Non-zero while ktime itself runs on this thread. Initial-exec TLS: one load, no call. */
extern __thread int inside_ktime __attribute__((tls_model("initial-exec")));

#endif
