/* reentry.c - the per-thread re-entry guard (reentry.h). */
#include "reentry.h"

__thread int launch_busy __attribute__((tls_model("initial-exec")));
