/* reentry.c - the per-thread re-entry guard (reentry.h). */
#include "reentry.h"

__thread int inside_ktime __attribute__((tls_model("initial-exec")));
